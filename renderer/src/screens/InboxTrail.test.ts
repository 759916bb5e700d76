// A proposal's trail in the chosen language (server-side markup, no browser): the log's events
// (proposed, decisions, refusals, command progress), the labels of their details and a refusal's
// reason and verb are translated; an event or state this screen does not know is shown as it came.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { inTimeZone } from '../testing/time-zone.ts';
import type { ProposalDetail, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { Inbox } from './Inbox.tsx';

const T = Date.UTC(2026, 11, 1, 12, 0);

function detailHtml(lang: 'en' | 'nb' | 'de', trail: ProposalDetail['trail'], failedBefore: ProposalDetail['failedBefore'] = []): string {
  const p: ProposalDetail = {
    id: 'P-1',
    status: 'approved',
    action: 'assign_job',
    module: 'operations',
    params: {},
    ruleId: 'assign-job',
    ruleVersion: '1',
    risk: 'low',
    riskReason: 'reversible',
    explanation: 'Start J-1 on M-1.',
    createdMs: T,
    evidence: [],
    trail,
    failedBefore,
  };
  const store = createAppStore({} as SiteApi);
  store.setState({ lang, proposals: [], selected: p });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
}

function trailHtml(lang: 'en' | 'nb' | 'de', trail: ProposalDetail['trail']): string {
  const html = detailHtml(lang, trail);
  return html.slice(html.indexOf('<ol class="trail">'), html.indexOf('</ol>'));
}

const TRAIL: ProposalDetail['trail'] = [
  { atMs: T, event: 'proposed', user: 'agent-r1', detail: 'action: assign_job', fields: [{ name: 'action', value: 'assign_job' }] },
  { atMs: T + 1, event: 'refused', user: 'olaf', detail: 'reason: role; decision: approve', fields: [{ name: 'reason', value: 'role' }, { name: 'decision', value: 'approve' }] },
  { atMs: T + 2, event: 'approved', user: 'lena', detail: 'comment: go', fields: [{ name: 'comment', value: 'go' }] },
  { atMs: T + 3, event: 'command_sent', user: 'write-back' },
  { atMs: T + 4, event: 'command_rerouted', user: 'write-back' },
  { atMs: T + 5, event: 'escalated', user: 'hq', detail: 'reason: unknown' },
];

describe('the proposal trail', () => {
  it('is in German: events and the labels of their details', () => {
    const html = trailHtml('de', TRAIL);
    expect(html).toContain('vorgeschlagen (<code>agent-r1</code>): Aktion: Zuweisung');
    expect(html).toContain('verweigert (olaf): Grund: Rolle darf nicht entscheiden; Entscheidung: Genehmigen');
    expect(html).toContain('genehmigt (lena): Kommentar: go');
    expect(html).toContain('Befehl: gesendet (<code>write-back</code>)');
    expect(html).toContain('Befehl: rerouted (<code>write-back</code>)'); // a state it does not know
    expect(html).toContain('escalated (hq): reason: unknown'); // an event it does not know, its detail line as sent
    expect(html).not.toMatch(/proposed|refused|approved|command_/);
  });

  it('is in Norwegian and English', () => {
    expect(trailHtml('nb', TRAIL)).toContain('foreslått (<code>agent-r1</code>): handling: Tildeling');
    const en = trailHtml('en', TRAIL);
    expect(en).toContain('proposed (<code>agent-r1</code>): action: Assignment');
    expect(en).toContain('refused (olaf): reason: role may not decide; decision: Approve');
    expect(en).toContain('command: sent (<code>write-back</code>)');
  });

  it("shows the same situation's earlier approvals the module did not carry out, with what it said, in the chosen language", () => {
    const failed = [
      { id: 'P-0', atMs: T - 120_000, detail: 'resource M-1 is reserved for maintenance' },
      { id: 'P-00', atMs: T - 60_000, detail: null },
    ];
    const nb = detailHtml('nb', [], failed);
    expect(nb).toContain('Godkjent før, men modulen utførte den ikke (2×):');
    expect(nb).toContain('P-0: <code>resource M-1 is reserved for maintenance</code>'); // what the module said: data, as in the trail
    expect(nb).toContain('P-00: ingen grunn oppgitt');
    expect(detailHtml('en', [], failed.slice(0, 1))).toContain('Approved before, and the module did not carry it out (1×):');
    expect(detailHtml('de', [], [])).not.toContain('failed-before');
  });

  it('marks in the list a proposal whose situation the module did not carry out before, by count', () => {
    const listed = (lang: 'en' | 'de', failedBeforeCount?: number) => {
      const store = createAppStore({} as SiteApi);
      const p = { id: 'P-2', status: 'open' as const, action: 'assign_job', params: {}, ruleId: 'assign-job', ruleVersion: '2', risk: 'low' as const, riskReason: 'r', explanation: 'Start J-1 on M-1.', createdMs: T, ...(failedBeforeCount ? { failedBeforeCount } : {}) };
      store.setState({ lang, proposals: [p], selected: null });
      store.getInitialState = store.getState;
      return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
    };
    expect(listed('en', 2)).toContain('<span class="failed-tag chip-alert"> ⚠ not carried out 2× before</span>');
    expect(listed('de', 1)).toContain('⚠ vorher 1× nicht ausgeführt');
    expect(listed('en')).not.toContain('failed-tag');
  });
});

// A trail as the site sends it: who made an entry is a person (a name), the agent — `agent` in words,
// its run `agent-<run id>` as data —, or a part of the site (`write-back` sent the command,
// `state` saw it applied in the tables: codes with no words in this UI, shown as data); a
// proposal's action in words; a command's detail, what the module said (JSON here), as data. They
// stood in the nb and de lines as plain text, "kommando: utført (state): detalj: {"job_id":…}",
// and the action as its code.
const SENT: ProposalDetail['trail'] = [
  { atMs: T, event: 'proposed', user: 'agent-r1', detail: 'action: assign_job', fields: [{ name: 'action', value: 'assign_job' }] },
  { atMs: T + 1, event: 'approved', user: 'lena', detail: 'comment: go', fields: [{ name: 'comment', value: 'go' }] },
  { atMs: T + 2, event: 'command_sent', user: 'write-back' },
  { atMs: T + 3, event: 'command_applied', user: 'state', detail: 'detail: {"job_id":"J-1"}', fields: [{ name: 'detail', value: '{"job_id":"J-1"}' }] },
  { atMs: T + 4, event: 'withdrawn', user: 'agent', detail: 'reason: gone', fields: [{ name: 'reason', value: 'gone' }] },
  { atMs: T + 5, event: 'proposed', user: 'agent-r2', detail: 'action: open_gate', fields: [{ name: 'action', value: 'open_gate' }] },
];

describe('the proposal trail: words for what has words, data as data', () => {
  const lines = (lang: 'en' | 'nb' | 'de') => [...trailHtml(lang, SENT).matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1]!.replace(/^.*?<\/time> — /, ''));

  it('in nb, de and en alike', () => {
    expect(lines('nb')).toEqual([
      'foreslått (<code>agent-r1</code>): handling: Tildeling',
      'godkjent (lena): kommentar: go',
      'kommando: sendt (<code>write-back</code>)',
      'kommando: utført (<code>state</code>): detalj: <code>{&quot;job_id&quot;:&quot;J-1&quot;}</code>',
      'trukket (agenten): grunn: gone',
      'foreslått (<code>agent-r2</code>): handling: <code>open_gate</code>',
    ]);
    expect(lines('de')).toEqual([
      'vorgeschlagen (<code>agent-r1</code>): Aktion: Zuweisung',
      'genehmigt (lena): Kommentar: go',
      'Befehl: gesendet (<code>write-back</code>)',
      'Befehl: ausgeführt (<code>state</code>): Detail: <code>{&quot;job_id&quot;:&quot;J-1&quot;}</code>',
      'zurückgezogen (der Agent): Grund: gone',
      'vorgeschlagen (<code>agent-r2</code>): Aktion: <code>open_gate</code>',
    ]);
    expect(lines('en')).toEqual([
      'proposed (<code>agent-r1</code>): action: Assignment',
      'approved (lena): comment: go',
      'command: sent (<code>write-back</code>)',
      'command: applied (<code>state</code>): detail: <code>{&quot;job_id&quot;:&quot;J-1&quot;}</code>',
      'withdrawn (the agent): reason: gone',
      'proposed (<code>agent-r2</code>): action: <code>open_gate</code>',
    ]);
  });

  // Write-back's own detail with its code is worded (InboxWriteBackWords.test.ts); without one (an older site), the English as it came.
  it("shows what a module answered as data, and write-back's own detail as text", () => {
    const html = trailHtml('nb', [
      { atMs: T, event: 'command_failed', user: 'operations', detail: 'detail: resource M-1 is down', fields: [{ name: 'detail', value: 'resource M-1 is down' }] },
      { atMs: T + 1, event: 'command_timed_out', user: 'write-back', detail: 'detail: not applied 60 s after it was sent (last state: sent)', fields: [{ name: 'detail', value: 'not applied 60 s after it was sent (last state: sent)' }] },
    ]);
    expect(html).toContain('kommando: feilet (<code>operations</code>): detalj: <code>resource M-1 is down</code>');
    expect(html).toContain('(<code>write-back</code>): detalj: not applied 60 s after it was sent (last state: sent)');
  });
});

describe("the panel's times", () => {
  // As InboxDecided.test.ts: this PC's time zone is Oslo's for these.
  inTimeZone('Europe/Oslo'); // UTC+1 in December

  /** The panel of an approved proposal whose trail has two events in one minute (sent, then applied), the site's clock at T. */
  function panel(lang: 'en' | 'nb' | 'de'): string {
    const p: ProposalDetail = {
      id: 'P-1', status: 'approved', decidedBy: 'lena', decidedMs: T + 5_000, action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '1', risk: 'low',
      riskReason: 'reversible', explanation: 'Start J-1 on M-1.', createdMs: T, evidence: [], failedBefore: [],
      trail: [
        { atMs: T + 5_000, event: 'approved', user: 'lena' },
        { atMs: T + 47_000, event: 'command_applied', user: 'write-back' },
      ],
    };
    const store = createAppStore({} as SiteApi);
    store.setState({ lang, proposals: [], selected: p, status: { nowMs: T } as never });
    store.getInitialState = store.getState;
    return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
  }

  it("are the list's short form in the status line and the trail, to the second on hover, in en, nb and de", () => {
    // The list says "Tue 1 Dec, 13:00" (formatWhen); the panel said "01/12/2026, 13:00:05", German "01.12.26, 13:00:05".
    const shown = (html: string) => [...html.matchAll(/<time [^>]*title="([^"]*)"[^>]*>([^<]*)<\/time>/g)].map((m) => [m[2], m[1]]);
    expect(shown(panel('en'))).toEqual([
      ['Tue 1 Dec, 13:00', 'Tue, 1 Dec 2026, 13:00:05'], // the status line: approved — lena, …
      ['Tue 1 Dec, 13:00', 'Tue, 1 Dec 2026, 13:00:05'], // the trail: the approval
      ['Tue 1 Dec, 13:00', 'Tue, 1 Dec 2026, 13:00:47'], // its command applied, the same minute
    ]);
    expect(shown(panel('nb'))[2]).toEqual(['tir. 1. des., 13:00', 'tir. 1. des. 2026, 13:00:47']);
    expect(shown(panel('de'))[2]).toEqual(['Di., 1. Dez., 13:00', 'Di., 1. Dez. 2026, 13:00:47']);
    for (const lang of ['en', 'nb', 'de'] as const) expect(panel(lang)).not.toMatch(/01\/12\/2026|01\.12\.26|1\.12\.2026/);
    expect(panel('en')).toContain('approved — lena, <time dateTime="2026-12-01T12:00:05.000Z"');
  });
});
