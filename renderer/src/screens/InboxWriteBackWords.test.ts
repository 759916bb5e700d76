// Write-back's own details in the reader's language: a command not applied in time ("not applied
// 60 s after it was sent (last state: sent)") and one not sent within the window after its approval
// showed in the site's English in nb and de too. The site sends their code and numbers beside the
// English (core/site api.ts WRITE_BACK_CODES): worded in en, nb and de; a code this UI does not
// know, or a state it has no word for, shows the English as it came. And the earlier failures of
// the situation show what the module said as data, code-styled, as the trail does.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ProposalDetail, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { Inbox } from './Inbox.tsx';

const T = Date.UTC(2026, 11, 1, 12, 0);
type Lang = 'en' | 'nb' | 'de';

function detailHtml(lang: Lang, trail: ProposalDetail['trail'], failedBefore: ProposalDetail['failedBefore'] = []): string {
  const p: ProposalDetail = {
    id: 'P-1', status: 'approved', action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '1',
    risk: 'low', riskReason: 'reversible', explanation: 'Start J-1 on M-1.', createdMs: T, evidence: [], trail, failedBefore,
  };
  const store = createAppStore({} as SiteApi);
  store.setState({ lang, proposals: [], selected: p });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
}

const lines = (html: string, list: string): string[] => {
  const start = html.indexOf(list);
  const part = html.slice(start, html.indexOf(list.startsWith('<ol') ? '</ol>' : '</ul>', start));
  return [...part.matchAll(/<li[^>]*>(.*?)<\/li>/g)].map((m) => m[1]!.replace(/^.*?<\/time> — /, ''));
};

const TIMED_OUT = 'not applied 1200 s after it was sent (last state: acknowledged)';
const NOT_SENT = 'not sent within 600 s of the approval (4000 s ago): nothing was done; decide again if it still holds';
const TRAIL: ProposalDetail['trail'] = [
  { atMs: T, event: 'command_timed_out', user: 'write-back', detail: `detail: ${TIMED_OUT}`, fields: [{ name: 'detail', value: TIMED_OUT, code: 'command.notApplied', params: { seconds: 1200, lastState: 'acknowledged' } }] },
  { atMs: T + 1, event: 'command_failed', user: 'write-back', detail: `detail: ${NOT_SENT}`, fields: [{ name: 'detail', value: NOT_SENT, code: 'command.notSent', params: { windowSeconds: 600, agoSeconds: 4000 } }] },
];
const trailLines = (lang: Lang, trail = TRAIL) => lines(detailHtml(lang, trail), '<ol class="trail">');

describe("write-back's own details in the trail", () => {
  it('are in Norwegian', () => {
    expect(trailLines('nb')).toEqual([
      'kommando: tidsavbrudd (<code>write-back</code>): detalj: ikke utført 1\u00a0200 s etter at den ble sendt (siste tilstand: bekreftet av modulen)',
      'kommando: feilet (<code>write-back</code>): detalj: ikke sendt innen 600 s etter godkjenningen (for 4\u00a0000 s siden): ingenting ble gjort; beslutt på nytt om det fortsatt gjelder',
    ]);
  });

  it('are in German and English', () => {
    expect(trailLines('de')).toEqual([
      'Befehl: Zeitüberschreitung (<code>write-back</code>): Detail: nicht ausgeführt 1.200 s nach dem Senden (letzter Stand: vom Modul bestätigt)',
      'Befehl: fehlgeschlagen (<code>write-back</code>): Detail: nicht innerhalb von 600 s nach der Genehmigung gesendet (vor 4.000 s): nichts wurde getan; erneut entscheiden, falls es noch zutrifft',
    ]);
    expect(trailLines('en')).toEqual([
      'command: timed out (<code>write-back</code>): detail: not applied 1,200 s after it was sent (last state: acknowledged by the module)',
      'command: failed (<code>write-back</code>): detail: not sent within 600 s of the approval (4,000 s ago): nothing was done; decide again if it still holds',
    ]);
  });

  it('are the stored English for a code or a state this UI does not know, and for an older site (no code)', () => {
    const odd: ProposalDetail['trail'] = [
      { atMs: T, event: 'command_failed', user: 'write-back', detail: 'detail: gave up', fields: [{ name: 'detail', value: 'gave up', code: 'command.gaveUp' as never, params: { n: 1 } }] },
      { atMs: T + 1, event: 'command_timed_out', user: 'write-back', detail: 'detail: x', fields: [{ name: 'detail', value: 'not applied 60 s after it was sent (last state: rerouted)', code: 'command.notApplied', params: { seconds: 60, lastState: 'rerouted' } }] },
      { atMs: T + 2, event: 'command_timed_out', user: 'write-back', detail: 'detail: x', fields: [{ name: 'detail', value: 'not applied 60 s after it was sent (last state: sent)' }] },
    ];
    expect(trailLines('nb', odd)).toEqual([
      'kommando: feilet (<code>write-back</code>): detalj: gave up',
      'kommando: tidsavbrudd (<code>write-back</code>): detalj: not applied 60 s after it was sent (last state: rerouted)',
      'kommando: tidsavbrudd (<code>write-back</code>): detalj: not applied 60 s after it was sent (last state: sent)',
    ]);
  });
});

describe('the earlier failures of the situation', () => {
  const FAILED: ProposalDetail['failedBefore'] = [
    { id: 'P-0', atMs: T - 180_000, detail: 'resource M-1 is reserved for maintenance' },
    { id: 'P-00', atMs: T - 120_000, detail: NOT_SENT, code: 'command.notSent', params: { windowSeconds: 600, agoSeconds: 4000 } },
    { id: 'P-000', atMs: T - 60_000, detail: null },
  ];
  const failedLines = (lang: Lang) => lines(detailHtml(lang, [], FAILED), '<div class="failed-before');

  it("show what the module said as data, as the trail does, and write-back's own detail in words", () => {
    expect(failedLines('nb')).toEqual([
      'P-0: <code>resource M-1 is reserved for maintenance</code>',
      'P-00: ikke sendt innen 600 s etter godkjenningen (for 4\u00a0000 s siden): ingenting ble gjort; beslutt på nytt om det fortsatt gjelder',
      'P-000: ingen grunn oppgitt',
    ]);
    expect(failedLines('de')[1]).toBe('P-00: nicht innerhalb von 600 s nach der Genehmigung gesendet (vor 4.000 s): nichts wurde getan; erneut entscheiden, falls es noch zutrifft');
    expect(failedLines('en')[0]).toBe('P-0: <code>resource M-1 is reserved for maintenance</code>');
  });
});
