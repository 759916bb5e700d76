// The History screen in a shift lead's words (server-side markup, no browser): Tilstand's own
// tables' columns headed in en, nb and de with the stored name on hover, a column it has no words
// for headed as stored; and the tag picker grouped by what made each tag, newest first in each,
// the name kept and when it was made in this PC's time.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { inTimeZone } from '../testing/time-zone.ts';
import type { DiffResult, HistoryResult, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore, type AppState } from '../store/store.ts';
import { History, TagOptions, tagGroups } from './History.tsx';

type Lang = 'en' | 'nb' | 'de';
const T = Date.UTC(2026, 11, 3, 6, 0, 5);

function withStore(state: Partial<AppState>, lang: Lang, element: Parameters<typeof renderToStaticMarkup>[0]): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ tables: [], tags: [], lang, history: null, diff: null, ...state });
  store.getInitialState = store.getState; // what server-side rendering reads
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, element));
}
const render = (state: Partial<AppState>, lang: Lang = 'en') => withStore(state, lang, createElement(History));

/** The column headings, each as `stored name: heading` when the heading has the stored name as its title, else the heading alone. */
const headings = (html: string): string[] =>
  [...html.matchAll(/<th scope="col"(?: title="([^"]*)")?>([^<]*)<\/th>/g)].map((m) => (m[1] === undefined ? m[2]! : `${m[1]}: ${m[2]}`));

const work: HistoryResult = {
  table: 'work_queue', snapshotId: 41, snapshotMs: T, more: false,
  columns: ['job_id', 'status', 'blocked_reason', 'due_at', 'assigned_resource', 'ops_seq'],
  types: ['STRING NOT NULL', 'STRING', 'STRING', 'TIMESTAMP(3)', 'STRING', 'BIGINT'],
  rows: [['J-0010', 'blocked', 'material short: ITEM-003', null, null, 9]],
};

describe('History: column headings', () => {
  it('heads a seed table\'s columns in words in en, nb and de (as Work queue does), the stored name on hover', () => {
    expect(headings(render({ history: work }))).toEqual([
      'job_id: Job', 'status: Status', 'blocked_reason: Blocked because', 'due_at: Due', 'assigned_resource: Assigned to', 'ops_seq: Operations seq. no.',
    ]);
    expect(headings(render({ history: work }, 'nb'))).toEqual([
      'job_id: Jobb', 'status: Status', 'blocked_reason: Blokkert fordi', 'due_at: Frist', 'assigned_resource: Tildelt', 'ops_seq: Løpenr. drift',
    ]);
    expect(headings(render({ history: work }, 'de'))).toEqual([
      'job_id: Auftrag', 'status: Status', 'blocked_reason: Blockiert wegen', 'due_at: Fällig', 'assigned_resource: Zugewiesen an', 'ops_seq: Lfd. Nr. Betrieb',
    ]);
  });

  it('heads a comparison\'s columns the same way, after the change column', () => {
    const diff: DiffResult = {
      table: 'stock', from: { snapshotId: 41, snapshotMs: T }, to: { snapshotId: 57, snapshotMs: T }, more: false,
      columns: ['item', 'location', 'on_hand', 'inventory_seq', 'commerce_seq', 'procurement_seq'], types: ['STRING', 'STRING', 'INT', 'BIGINT', 'BIGINT', 'BIGINT'],
      changes: [{ kind: '+I', row: ['ITEM-001', 'A-01', 4, 1, 2, 3] }],
    };
    expect(headings(render({ diff }, 'nb'))).toEqual([
      'Endring', 'item: Vare', 'location: Lokasjon', 'on_hand: På lager', 'inventory_seq: Løpenr. lager', 'commerce_seq: Løpenr. salg', 'procurement_seq: Løpenr. innkjøp',
    ]);
    expect(headings(render({ diff }))).toEqual([
      'Change', 'item: Item', 'location: Location', 'on_hand: On hand', 'inventory_seq: Inventory seq. no.', 'commerce_seq: Commerce seq. no.', 'procurement_seq: Procurement seq. no.',
    ]);
  });

  it('heads dead_letters and approval_inbox in words too, with the words their screens use', () => {
    const letters: HistoryResult = { ...work, table: 'dead_letters', columns: ['position', 'reason', 'topic', 'received_at', 'dismissed_by'], types: ['BIGINT', 'STRING', 'STRING', 'TIMESTAMP(3)', 'STRING'], rows: [] };
    expect(headings(render({ history: { ...letters, rows: [[1, 'bad_json', 't', null, null]] } }, 'de'))).toEqual([
      'position: Journal\u00adposition', 'reason: Grund', 'topic: Topic', 'received_at: Empfangen', 'dismissed_by: Verworfen von',
    ]);
    const inbox: HistoryResult = { ...work, table: 'approval_inbox', columns: ['proposal_id', 'action', 'risk', 'decided_by', 'command_seq'], types: ['STRING', 'STRING', 'STRING', 'STRING', 'BIGINT'], rows: [['P-1', 'assign_job', 'low', 'lena', 2]] };
    expect(headings(render({ history: inbox }))).toEqual(['proposal_id: Proposal id', 'action: Proposal', 'risk: Risk', 'decided_by: Decided by', 'command_seq: Command seq. no.']);
  });

  it('heads a column it has no words for by its stored name, without a title: a site\'s own table, a column a newer site added', () => {
    const yard: HistoryResult = { ...work, table: 'yard_doors', columns: ['door_id', 'state', 'yard_seq'], types: ['STRING', 'STRING', 'BIGINT'], rows: [['D-01', 'down', 4]] };
    expect(headings(render({ history: yard }, 'de'))).toEqual(['door_id', 'state', 'yard_seq']);
    const newer: HistoryResult = { ...work, columns: ['job_id', 'shift'], types: ['STRING', 'STRING'], rows: [['J-0010', 'night']] };
    expect(headings(render({ history: newer }, 'nb'))).toEqual(['job_id: Jobb', 'shift']);
  });
});

/** A table's body cells, each as `stored → shown` when the cell has the stored value as its title, else what it shows. */
const cells = (html: string): string[] =>
  [...html.matchAll(/<td(?: title="([^"]*)")?(?: class="[^"]*")?>(.*?)<\/td>/g)].map((m) => {
    const shown = m[2]!.replace(/<[^>]+>/g, '');
    return m[1] === undefined ? shown : `${m[1]} → ${shown}`;
  });

describe('History: stored words in the reader\'s language', () => {
  it('shows a job\'s status in words in en, nb and de, the stored value on hover; free text as stored', () => {
    const jobs: HistoryResult = { ...work, rows: [['J-0010', 'blocked', 'material short: ITEM-003', null, null, 9], ['J-0011', 'in_progress', null, null, 'PACK-T', 10]] };
    // English words too where they differ from the stored one ("in progress"); "blocked" is the same and needs no title.
    expect(cells(render({ history: jobs }))).toEqual(['J-0010', 'blocked', 'material short: ITEM-003', '–', '–', '9', 'J-0011', 'in_progress → in progress', '–', '–', 'PACK-T', '10']);
    expect(cells(render({ history: jobs }, 'nb'))).toEqual(['J-0010', 'blocked → blokkert', 'material short: ITEM-003', '–', '–', '9', 'J-0011', 'in_progress → pågår', '–', '–', 'PACK-T', '10']);
    expect(cells(render({ history: jobs }, 'de')).filter((c) => c.includes('→'))).toEqual(['blocked → blockiert', 'in_progress → in Arbeit']);
    // A code in the free text is still kept whole.
    expect(render({ history: jobs }, 'nb')).toContain('<td>material short: <span class="code">ITEM-003</span></td>');
  });

  it('words a resource\'s kind and state, a dead letter\'s status and reason, a proposal\'s action, risk, statuses, role and command', () => {
    const resources: HistoryResult = { ...work, table: 'resources', columns: ['resource_id', 'kind', 'state'], types: ['STRING', 'STRING', 'STRING'], rows: [['M-1', 'machine', 'down']] };
    expect(cells(render({ history: resources }, 'de'))).toEqual(['M-1', 'machine → Maschine', 'down → ausgefallen']);
    const letters: HistoryResult = {
      ...work, table: 'dead_letters', columns: ['position', 'status', 'reason', 'detail', 'dismissed_note'], types: ['BIGINT', 'STRING', 'STRING', 'STRING', 'STRING'],
      rows: [[7, 'dismissed', 'contract_violation', 'after.state: expected one of open|closed|down, got "service"', 'door was in service']],
    };
    expect(cells(render({ history: letters }, 'nb'))).toEqual(['7', 'dismissed → avskrevet', 'contract_violation → stemmer ikke med kontrakten', 'after.state: expected one of open|closed|down, got &quot;service&quot;', 'door was in service']);
    expect(cells(render({ history: letters }))).toEqual(['7', 'dismissed', 'contract_violation → does not match its contract', 'after.state: expected one of open|closed|down, got &quot;service&quot;', 'door was in service']);
    const inbox: HistoryResult = {
      ...work, table: 'approval_inbox', columns: ['proposal_id', 'action', 'risk', 'explanation', 'agent_status', 'decision', 'decided_role', 'command_state'],
      types: ['STRING', 'STRING', 'STRING', 'STRING', 'STRING', 'STRING', 'STRING', 'STRING'],
      rows: [['P-1', 'assign_job', 'high', 'Start J-1 on M-1.', 'withdrawn', 'stale', 'shift_lead', 'timed_out']],
    };
    expect(cells(render({ history: inbox }))).toEqual([
      'P-1', 'assign_job → Assignment', 'high', 'Start J-1 on M-1.', 'withdrawn', 'stale', 'shift_lead → Shift lead', 'timed_out → timed out',
    ]);
    expect(cells(render({ history: inbox }, 'nb'))).toEqual([
      'P-1', 'assign_job → Tildeling', 'high → høy', 'Start J-1 on M-1.', 'withdrawn → trukket', 'stale → utdatert', 'shift_lead → Skiftleder', 'timed_out → tidsavbrudd',
    ]);
  });

  it('keeps a site\'s own table, a value the contract does not list and a column it does not know as stored, without a title', () => {
    const yard: HistoryResult = { ...work, table: 'yard_doors', columns: ['door_id', 'state'], types: ['STRING', 'STRING'], rows: [['D-01', 'down']] };
    expect(cells(render({ history: yard }, 'nb'))).toEqual(['D-01', 'down']);
    const newer: HistoryResult = { ...work, columns: ['job_id', 'status', 'shift'], types: ['STRING', 'STRING', 'STRING'], rows: [['J-0010', 'paused', 'done'], ['J-0011', 'constructor', null]] };
    expect(cells(render({ history: newer }, 'de'))).toEqual(['J-0010', 'paused', 'done', 'J-0011', 'constructor', '–']);
  });

  it('words a comparison\'s cells the same way, the changed cell still marked', () => {
    const diff: DiffResult = {
      table: 'work_queue', from: { snapshotId: 41, snapshotMs: T }, to: { snapshotId: 57, snapshotMs: T }, more: false, keyColumns: ['job_id'],
      columns: ['job_id', 'status'], types: ['STRING', 'STRING'],
      changes: [{ kind: '-U', row: ['J-0010', 'blocked'] }, { kind: '+U', row: ['J-0010', 'released'] }],
    };
    const html = render({ diff }, 'nb');
    expect(html).toContain('<td title="blocked" class="changed">blokkert</td>');
    expect(html).toContain('<td title="released" class="changed">frigitt</td>');
  });

  it('says in the hover of "Rows containing" that a status is searched as shown or as stored', () => {
    // It said "as stored" only: a status in words found nothing (HistorySearchWords.test.ts).
    expect(render({}, 'nb')).toMatch(/title="[^"]*slik den er lagret; en status også slik den vises \(pågår eller in_progress\)"/);
    expect(render({}, 'de')).toMatch(/title="[^"]*wie gespeichert; ein Status auch so, wie er angezeigt wird \(in Arbeit oder in_progress\)"/);
    expect(render({})).toMatch(/title="[^"]*as stored; a status also as shown \(in progress or in_progress\)"/);
  });
});

describe('History: the tag picker', () => {
  inTimeZone('Europe/Oslo'); // UTC+1 in December: the times below are local

  const min = 60_000;
  // As the site sends them: newest snapshot first, every kind in one list. A decision's tag points
  // at the older snapshot the agent read, though it was made later.
  const tags = [
    { name: 'agent-20261203T0702', snapshotId: 60, createdMs: T + 62 * min },
    { name: 'hourly-2026120307', snapshotId: 59, createdMs: T + 60 * min },
    { name: 'checked-P-20261203T0601-2', snapshotId: 58, createdMs: T + 3 * min },
    { name: 'agent-20261203T0701', snapshotId: 57, createdMs: T + 61 * min },
    { name: 'before-upgrade', snapshotId: 50, createdMs: null },
    { name: 'decision-P-20261203T0601-2', snapshotId: 42, createdMs: T + 5 * min },
    { name: 'decision-P-20261203T0600-1', snapshotId: 41, createdMs: T + 2 * min },
  ];

  /** Each optgroup's label and its options' texts. */
  const groups = (html: string) =>
    [...html.matchAll(/<optgroup label="([^"]*)">(.*?)<\/optgroup>/gs)].map((m) => [m[1], ...[...m[2]!.matchAll(/<option value="([^"]*)">([^<]*)<\/option>/g)].map((o) => o[2])]);

  it('groups the tags by kind in words, newest first in each, the name kept and when it was made in local time', () => {
    expect(groups(withStore({}, 'en', createElement(TagOptions, { lang: 'en', tags })))).toEqual([
      ['Agent runs', 'agent-20261203T0702 (#60, 03/12/2026, 08:02:05)', 'agent-20261203T0701 (#57, 03/12/2026, 08:01:05)'],
      ['Decisions', 'decision-P-20261203T0601-2 (#42, 03/12/2026, 07:05:05)', 'decision-P-20261203T0600-1 (#41, 03/12/2026, 07:02:05)'],
      ['Approvals checked', 'checked-P-20261203T0601-2 (#58, 03/12/2026, 07:03:05)'],
      ['Hourly', 'hourly-2026120307 (#59, 03/12/2026, 08:00:05)'],
      // No time known: the snapshot alone.
      ['Other', 'before-upgrade (#50)'],
    ]);
  });

  it('says the groups in nb and de, and leaves out a kind without tags', () => {
    const some = tags.filter((x) => !x.name.startsWith('checked-') && x.createdMs !== null);
    expect(groups(withStore({}, 'nb', createElement(TagOptions, { lang: 'nb', tags: some }))).map((g) => g[0])).toEqual(['Agentkjøringer', 'Beslutninger', 'Hver time']);
    expect(groups(withStore({}, 'de', createElement(TagOptions, { lang: 'de', tags }))).map((g) => g[0])).toEqual(['Agentenläufe', 'Entscheidungen', 'Geprüfte Genehmigungen', 'Stündlich', 'Andere']);
    expect(groups(withStore({}, 'de', createElement(TagOptions, { lang: 'de', tags })))[1]![1]).toBe('decision-P-20261203T0601-2 (#42, 03.12.2026, 07:05:05)');
  });

  it('orders by when a tag was made, then by snapshot (a tag without a time after those with one)', () => {
    const same = [
      { name: 'a', snapshotId: 3, createdMs: null },
      { name: 'b', snapshotId: 5, createdMs: T },
      { name: 'c', snapshotId: 7, createdMs: T },
      { name: 'd', snapshotId: 9, createdMs: null },
    ];
    expect(tagGroups(same).map((g) => [g.kind, ...g.tags.map((x) => x.name)])).toEqual([['other', 'c', 'b', 'd', 'a']]);
  });
});
