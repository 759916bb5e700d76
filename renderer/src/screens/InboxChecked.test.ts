// The detail panel of an approved or stale proposal shows the state its approval was checked
// against, as `tilstand evidence` does (the site sends core/inbox evidenceReport's `checked`): per
// table the snapshot and its tag `checked-<id>`, and whether the rows the evidence cites were, read
// there, the ones the agent read — the changed rows shown. Server-side markup, no browser.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { CheckedTable, ProposalDetail, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { Inbox } from './Inbox.tsx';

const T = Date.UTC(2026, 11, 1, 12, 0);
const checked = (c: Partial<CheckedTable> & Pick<CheckedTable, 'table'>): CheckedTable => ({ snapshotId: 12, tag: 'checked-P-1', tagExists: true, tagRetainedUntilMs: T + 1, rows: [], matchesEvidence: true, types: {}, ...c });
const CHECKED: CheckedTable[] = [
  checked({ table: 'work_queue', rows: [{ job_id: 'J-1', status: 'released' }] }),
  checked({ table: 'resources', snapshotId: 7, matchesEvidence: false, rows: [{ resource_id: 'M-1', state: 'down' }, { resource_id: 'M-2' }] }),
  checked({ table: 'stock', snapshotId: null, tagExists: false, matchesEvidence: null, problem: 'the table had no snapshot when the approval was checked' }),
];

function panel(lang: 'en' | 'nb' | 'de', status: ProposalDetail['status'], checkedTables: CheckedTable[] | undefined): string {
  const p: ProposalDetail = {
    id: 'P-1', status, action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '1', risk: 'low', riskReason: 'reversible',
    explanation: 'Start J-1 on M-1.', createdMs: T, decidedBy: 'lena', decidedMs: T + 1000, evidence: [], trail: [], failedBefore: [],
    ...(checkedTables ? { checked: checkedTables } : {}),
  };
  const store = createAppStore({} as SiteApi);
  store.setState({ lang, proposals: [], selected: p });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
}

/** The checked part's text, one entry per block. */
const checkedText = (html: string): string[] => [
  ...(/<h3>(What the approval[^<]*|Det godkjenningen[^<]*|Wogegen[^<]*)<\/h3>/.exec(html)?.slice(1, 2) ?? []),
  ...[...html.matchAll(/<div class="checked" data-table="[^"]*">(.*?)<\/div>(?=<div class="checked"|<p class="muted">Rule|<p class="muted">Regel)/gs)].map((m) => m[1]!.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim()),
];

/** A table's column headings, each as `stored name: heading` when the heading has the stored name as its title, else the heading alone. */
const headings = (html: string): string[] =>
  [...html.matchAll(/<th scope="col"(?: title="([^"]*)")?>([^<]*)<\/th>/g)].map((m) => (m[1] === undefined ? m[2]! : `${m[1]}: ${m[2]}`));

/** The evidence panel of an open proposal whose evidence is `evidence`, in `lang`. */
function evidencePanel(lang: 'en' | 'nb' | 'de', evidence: ProposalDetail['evidence']): string {
  const p: ProposalDetail = {
    id: 'P-1', status: 'open', action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '1', risk: 'low', riskReason: 'reversible',
    explanation: 'Start J-1 on PACK-T.', createdMs: T, trail: [], failedBefore: [], evidence,
  };
  const store = createAppStore({} as SiteApi);
  store.setState({ lang, proposals: [], selected: p });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
}

describe('the detail panel: what the approval was checked against', () => {
  it('shows each table at its checked tag and whether the cited rows are as the agent read them; changed rows shown', () => {
    const html = panel('en', 'approved', CHECKED);
    expect(checkedText(html)).toEqual([
      'What the approval was checked against',
      'work_queue: Snapshot 12, tag checked-P-1 The rows cited are as the agent read them.',
      // The changed rows in full: a row gone at the tag is its key alone.
      'resources: Snapshot 7, tag checked-P-1 The rows cited had changed since the agent read them: Resource State M-1 down M-2 –',
      'stock: no snapshot',
    ]);
    // The site's English reason as the line's title.
    expect(html).toContain('<p class="muted" title="the table had no snapshot when the approval was checked">stock: ');
  });

  it('says a tag no longer kept, and heads a stale approval as such, in nb and de', () => {
    const gone = [checked({ table: 'work_queue', tagExists: false, matchesEvidence: null, problem: 'gone' })];
    expect(checkedText(panel('en', 'stale', gone))).toEqual(['What the approval was checked against (found stale)', 'work_queue: Snapshot 12, tag checked-P-1 — the tag is no longer kept']);
    expect(checkedText(panel('nb', 'approved', CHECKED.slice(0, 2)))).toEqual([
      'Det godkjenningen ble kontrollert mot',
      'work_queue: Øyeblikksbilde 12, merke checked-P-1 Radene det vises til er slik agenten leste dem.',
      // The resource's state in words ("down" stored), as the Work queue says it.
      'resources: Øyeblikksbilde 7, merke checked-P-1 Radene det vises til var endret siden agenten leste dem: Ressurs Tilstand M-1 ute av drift M-2 –',
    ]);
    expect(checkedText(panel('de', 'stale', CHECKED.slice(0, 1)))).toEqual(['Wogegen die Genehmigung geprüft wurde (veraltet)', 'work_queue: Snapshot 12, Tag checked-P-1 Die angeführten Zeilen sind so, wie der Agent sie las.']);
  });

  it('shows nothing of it for a proposal without a checked state (rejected, or from an older site)', () => {
    expect(checkedText(panel('en', 'rejected', []))).toEqual([]);
    expect(checkedText(panel('en', 'approved', undefined))).toEqual([]);
  });
});

describe('the detail panel: cited rows compared without the sequence columns', () => {
  // As the site sends them (core/inbox evidence.ts): only ops_seq moved on resources; on work_queue the status changed.
  const seqOnly = checked({ table: 'resources', rows: [{ resource_id: 'PACK-T', state: 'free', ops_seq: 87 }], matchesEvidence: true, changedColumns: [], changedCells: [[]], sequenceMoved: true, keyColumns: ['resource_id'], sequenceColumns: ['ops_seq'] });
  const changed = checked({
    table: 'work_queue', matchesEvidence: false, changedColumns: ['status'], changedCells: [['status'], []], sequenceMoved: true, keyColumns: ['job_id'], sequenceColumns: ['ops_seq'],
    rows: [{ ops_seq: 90, job_id: 'J-2', material_item: 'ITEM-017', status: 'in_progress' }, { ops_seq: 12, job_id: 'J-3', material_item: 'ITEM-018', status: 'released' }],
  });

  it('says a moved sequence number alone is no change; names the changed columns, marks their cells, key and changed columns first, sequence last', () => {
    const html = panel('en', 'approved', [seqOnly, changed]);
    expect(checkedText(html)).toEqual([
      'What the approval was checked against',
      'resources: Snapshot 12, tag checked-P-1 The rows cited are as the agent read them; only the modules’ sequence numbers moved.',
      'work_queue: Snapshot 12, tag checked-P-1 The rows cited had changed since the agent read them (changed: Status): Job Status Material Operations seq. no. J-2 in progress ITEM-017 90 J-3 released ITEM-018 12',
    ]);
    // Only the changed cell is marked, its status in words with the stored one on hover; codes do not break at their hyphen.
    expect(html).toContain('<td><span class="code">J-2</span></td><td title="in_progress" class="changed">in progress</td><td><span class="code">ITEM-017</span></td>');
    expect(html).toContain('<td><span class="code">J-3</span></td><td>released</td>');
    expect(checkedText(panel('nb', 'approved', [seqOnly]))[1]).toBe('resources: Øyeblikksbilde 12, merke checked-P-1 Radene det vises til er slik agenten leste dem; bare modulenes sekvensnumre har endret seg.');
    expect(checkedText(panel('de', 'approved', [changed]))[1]).toMatch(/^work_queue: Snapshot 12, Tag checked-P-1 Die angeführten Zeilen hatten sich geändert, seit der Agent sie las \(geändert: Status\): Auftrag Status Material Lfd\. Nr\. Betrieb J-2/);
  });

  it('the evidence tables: key first, sequence columns last, the rest in their order; a date with a space may wrap', () => {
    const p: ProposalDetail = {
      id: 'P-1', status: 'open', action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '1', risk: 'low', riskReason: 'reversible',
      explanation: 'Start J-1 on PACK-T.', createdMs: T, trail: [], failedBefore: [],
      evidence: [{ table: 'stock', snapshotId: 3, tag: 'agent-r1', keyColumns: ['item', 'location'], sequenceColumns: ['inventory_seq', 'commerce_seq'], types: { since: 'TIMESTAMP(3)' },
        rows: [{ inventory_seq: 5, item: 'ITEM-017', on_hand: 40, commerce_seq: 7, location: 'A-01', reserved: 10, since: '2026-12-06T04:57:11.000Z' }] }],
    };
    const store = createAppStore({} as SiteApi);
    store.setState({ lang: 'en', proposals: [], selected: p });
    store.getInitialState = store.getState;
    const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
    const table = /<div class="evidence">.*?<\/div><\/div>/s.exec(html)![0];
    // Headed in words, the stored name on hover; `since` is no column of stock, so it keeps its name.
    expect(headings(table)).toEqual(['item: Item', 'location: Location', 'on_hand: On hand', 'reserved: Reserved', 'since', 'inventory_seq: Inventory seq. no.', 'commerce_seq: Commerce seq. no.']);
    expect(table).toContain('<td><span class="code">ITEM-017</span></td><td><span class="code">A-01</span></td><td>40</td>');
    expect(table).toMatch(/<td title="2026-12-06T04:57:11.000Z">[^<]* [^<]*<\/td>/);
  });
});

describe('the detail panel: a rule of the site\'s own', () => {
  // status.agentRules names the file of a rule the site runs from config agent.ruleFiles.
  const withRules = (lang: 'en' | 'nb' | 'de', agentRules: unknown[]): string => {
    const p: ProposalDetail = {
      id: 'P-2', status: 'open', action: 'watch_door', module: null, params: {}, ruleId: 'door-down', ruleVersion: '2', risk: 'low', riskReason: 'a notice',
      explanation: 'Door D-01 is down.', createdMs: T, decidedBy: null, decidedMs: null, evidence: [], trail: [], failedBefore: [],
    } as unknown as ProposalDetail;
    const store = createAppStore({} as SiteApi);
    store.setState({ lang, proposals: [], selected: p, status: { agentRules } as never });
    store.getInitialState = store.getState;
    return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
  };
  const ruleLine = (html: string) => /<p class="muted">((?:Rule|Regel) door-down[^<]*)<\/p>/.exec(html)?.[1];
  const file = { path: 'rules/door-down.mts', sha256: 'ab'.repeat(32) };

  it('says the proposal comes from the site\'s rule file, in each language', () => {
    expect(ruleLine(withRules('en', [{ id: 'door-down', version: '2', file }]))).toBe('Rule door-down v2 — this site&#x27;s own rule, from rules/door-down.mts');
    expect(ruleLine(withRules('nb', [{ id: 'door-down', version: '2', file }]))).toBe('Regel door-down v2 — en egen regel for dette anlegget, fra rules/door-down.mts');
    expect(ruleLine(withRules('de', [{ id: 'door-down', version: '2', file }]))).toBe('Regel door-down v2 — eine eigene Regel dieses Standorts, aus rules/door-down.mts');
  });

  it('says nothing more for an installed rule, or a file that now runs another version of it', () => {
    expect(ruleLine(withRules('en', [{ id: 'door-down', version: '2' }]))).toBe('Rule door-down v2');
    expect(ruleLine(withRules('en', [{ id: 'door-down', version: '3', file }]))).toBe('Rule door-down v2');
    expect(ruleLine(withRules('en', []))).toBe('Rule door-down v2');
  });
});


describe('the evidence tables: column headings a shift lead reads', () => {
  // The seed tables' stored names (core/ingest seed-tables.ts), as the evidence carries them.
  const work = { table: 'work_queue', snapshotId: 3, tag: 'agent-r1', keyColumns: ['job_id'], sequenceColumns: ['ops_seq'], types: {},
    rows: [{ job_id: 'J-0010', status: 'blocked', blocked_reason: 'material short: ITEM-003', material_item: 'ITEM-003', material_qty: 4, ops_seq: 9 }] };
  const stock = { table: 'stock', snapshotId: 3, tag: 'agent-r1', keyColumns: ['item', 'location'], sequenceColumns: ['inventory_seq'], types: {},
    rows: [{ item: 'ITEM-003', location: 'A-01', on_hand: 2, inbound: 10, inventory_seq: 5 }] };
  const tables = (html: string) => [...html.matchAll(/<div class="evidence">.*?<\/table>/gs)].map((m) => headings(m[0]));

  it('heads the seed tables\' columns in words in en, nb and de, the stored name as the heading\'s title', () => {
    expect(tables(evidencePanel('en', [work, stock]))).toEqual([
      ['job_id: Job', 'status: Status', 'blocked_reason: Blocked because', 'material_item: Material', 'material_qty: Material qty', 'ops_seq: Operations seq. no.'],
      ['item: Item', 'location: Location', 'on_hand: On hand', 'inbound: Inbound', 'inventory_seq: Inventory seq. no.'],
    ]);
    expect(tables(evidencePanel('nb', [work, stock]))).toEqual([
      ['job_id: Jobb', 'status: Status', 'blocked_reason: Blokkert fordi', 'material_item: Materiale', 'material_qty: Material\u00admengde', 'ops_seq: Løpenr. drift'],
      ['item: Vare', 'location: Lokasjon', 'on_hand: På lager', 'inbound: Inn\u00adkommende', 'inventory_seq: Løpenr. lager'],
    ]);
    expect(tables(evidencePanel('de', [work, stock]))).toEqual([
      ['job_id: Auftrag', 'status: Status', 'blocked_reason: Blockiert wegen', 'material_item: Material', 'material_qty: Material\u00admenge', 'ops_seq: Lfd. Nr. Betrieb'],
      ['item: Artikel', 'location: Lagerort', 'on_hand: Vorrätig', 'inbound: Im Zulauf', 'inventory_seq: Lfd. Nr. Bestand'],
    ]);
  });

  it('keeps the stored name of a column it has no words for: a site\'s own table, a column a newer site added', () => {
    const yard = { table: 'yard_doors', snapshotId: 2, tag: 'agent-r1', keyColumns: ['door_id'], sequenceColumns: ['yard_seq'], types: {}, rows: [{ door_id: 'D-01', state: 'down', yard_seq: 4 }] };
    const newer = { ...stock, rows: [{ ...stock.rows[0]!, bin_temperature: 4 }] };
    expect(tables(evidencePanel('de', [yard, newer]))).toEqual([
      // `state` is a column of resources too: the words are per table, yard_doors' is its own.
      ['door_id', 'state', 'yard_seq'],
      ['item: Artikel', 'location: Lagerort', 'on_hand: Vorrätig', 'inbound: Im Zulauf', 'bin_temperature', 'inventory_seq: Lfd. Nr. Bestand'],
    ]);
  });
});

describe('the evidence tables: stored words in the reader\'s language', () => {
  /** The evidence tables' body cells, each as `stored → shown` when the cell has the stored value as its title, else what it shows. */
  const cells = (html: string): string[][] =>
    [...html.matchAll(/<div class="evidence">.*?<\/table>/gs)].map((t) =>
      [...t[0].matchAll(/<td(?: title="([^"]*)")?(?: class="[^"]*")?>(.*?)<\/td>/g)].map((m) => {
        const shown = m[2]!.replace(/<[^>]+>/g, '');
        return m[1] === undefined ? shown : `${m[1]} → ${shown}`;
      }),
    );
  const work = { table: 'work_queue', snapshotId: 3, tag: 'agent-r1', keyColumns: ['job_id'], sequenceColumns: ['ops_seq'], types: {},
    rows: [{ job_id: 'J-0010', status: 'blocked', blocked_reason: 'material short: ITEM-003', ops_seq: 9 }, { job_id: 'J-0011', status: 'in_progress', blocked_reason: null, ops_seq: 10 }] };
  const resources = { table: 'resources', snapshotId: 3, tag: 'agent-r1', keyColumns: ['resource_id'], sequenceColumns: ['ops_seq'], types: {},
    rows: [{ resource_id: 'PACK-T', kind: 'team', state: 'down', ops_seq: 4 }] };

  it('shows a job\'s status and a resource\'s kind and state in words in en, nb and de, the stored value on hover; free text as stored', () => {
    expect(cells(evidencePanel('en', [work, resources]))).toEqual([
      // English words too where they differ from the stored one.
      ['J-0010', 'blocked', 'material short: ITEM-003', '9', 'J-0011', 'in_progress → in progress', '–', '10'],
      ['PACK-T', 'team', 'down', '4'],
    ]);
    expect(cells(evidencePanel('nb', [work, resources]))).toEqual([
      ['J-0010', 'blocked → blokkert', 'material short: ITEM-003', '9', 'J-0011', 'in_progress → pågår', '–', '10'],
      ['PACK-T', 'team', 'down → ute av drift', '4'],
    ]);
    expect(cells(evidencePanel('de', [work, resources]))).toEqual([
      ['J-0010', 'blocked → blockiert', 'material short: ITEM-003', '9', 'J-0011', 'in_progress → in Arbeit', '–', '10'],
      ['PACK-T', 'team → Team', 'down → ausgefallen', '4'],
    ]);
  });

  it('keeps a code in a sentence whole, as History does (`KeepCodes`): td.code kept only a value without a space', () => {
    expect(evidencePanel('en', [work])).toContain('<td>material short: <span class="code">ITEM-003</span></td>');
  });

  it('keeps a site\'s own table and a value the contract does not list as stored, without a title', () => {
    const yard = { table: 'yard_doors', snapshotId: 2, tag: 'agent-r1', keyColumns: ['door_id'], sequenceColumns: ['yard_seq'], types: {}, rows: [{ door_id: 'D-01', state: 'down', yard_seq: 4 }] };
    const newer = { ...work, rows: [{ job_id: 'J-0012', status: 'paused', blocked_reason: null, ops_seq: 11 }] };
    expect(cells(evidencePanel('nb', [yard, newer]))).toEqual([['D-01', 'down', '4'], ['J-0012', 'paused', '–', '11']]);
  });
});
