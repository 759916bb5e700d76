// A deferred proposal says who deferred it and when, as an approved or rejected one says who
// decided it (server-side markup, no browser). The site leaves `decidedBy`/`decidedMs` out for a
// deferral (the proposal still waits for its decision); the trail's `deferred` entry carries both.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ProposalDetail, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { formatWhen } from '../i18n/messages.ts';
import { createAppStore } from '../store/store.ts';
import { decidedBy, Inbox } from './Inbox.tsx';

const T = Date.UTC(2026, 11, 1, 12, 0);

const proposal = (o: Partial<ProposalDetail>): ProposalDetail => ({
  id: 'P-1', status: 'deferred', action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '1', risk: 'low',
  riskReason: 'reversible', explanation: 'Start J-1 on M-1.', createdMs: T, evidence: [], trail: [], failedBefore: [], ...o,
});

/** The panel's "Status: …" line as text (its time's markup left out). */
function statusLine(lang: 'en' | 'nb' | 'de', p: ProposalDetail): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ lang, proposals: [p], selected: p });
  store.getInitialState = store.getState;
  const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
  const at = html.indexOf('<p><strong>');
  return html.slice(at, html.indexOf('</p>', at)).replace(/<[^>]*>/g, '');
}

const deferredTrail: ProposalDetail['trail'] = [
  { atMs: T, event: 'proposed', user: 'agent-r1' },
  { atMs: T + 60_000, event: 'deferred', user: 'lena', detail: 'comment: after lunch', fields: [{ name: 'comment', value: 'after lunch' }] },
  { atMs: T + 120_000, event: 'refused', user: 'olaf', fields: [{ name: 'reason', value: 'role' }] },
  { atMs: T + 3_600_000, event: 'deferred', user: 'kari' },
];

describe('a deferred proposal', () => {
  it('says who deferred it last and when, in each language', () => {
    const p = proposal({ trail: deferredTrail });
    // In the list's form (formatWhen; the year by this PC's clock, the site's status not given here).
    expect(statusLine('en', p)).toContain(`deferred — kari, ${formatWhen('en', T + 3_600_000)}`);
    expect(statusLine('nb', p)).toContain(`utsatt — kari, ${formatWhen('nb', T + 3_600_000)}`);
    expect(statusLine('de', p)).toContain(`zurückgestellt — kari, ${formatWhen('de', T + 3_600_000)}`);
  });

  it('says who decided one approved after it was deferred (the site’s decidedBy), not who deferred it', () => {
    const p = proposal({ status: 'approved', decidedBy: 'lena', decidedMs: T + 7_200_000, trail: [...deferredTrail, { atMs: T + 7_200_000, event: 'approved', user: 'lena' }] });
    expect(statusLine('en', p)).toContain(`approved — lena, ${formatWhen('en', T + 7_200_000)}`);
    expect(decidedBy(p)).toEqual({ by: 'lena', atMs: T + 7_200_000 });
  });

  it('says nothing of who for an open proposal or a deferral the trail does not name', () => {
    expect(decidedBy(proposal({ status: 'open', trail: deferredTrail }))).toBeNull();
    expect(decidedBy(proposal({ trail: [{ atMs: T, event: 'proposed', user: 'agent-r1' }] }))).toBeNull();
    expect(statusLine('en', proposal({ trail: [] }))).not.toContain('—');
  });
});
