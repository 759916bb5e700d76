// The trail says "the agent" for the agent's own entries (a withdrawal the log's recovery wrote as
// `agent`), not for a person whose user name is `agent`: user names may be any word, and such a
// person's approval, rejection or refused attempt read as the agent's ("approved (the agent)"),
// in an audit trail of who decided.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ProposalDetail, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { Inbox } from './Inbox.tsx';

const T = Date.UTC(2026, 11, 1, 12, 0);

function trailLines(lang: 'en' | 'nb' | 'de', trail: ProposalDetail['trail']): string[] {
  const p: ProposalDetail = {
    id: 'P-1', status: 'approved', action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '1',
    risk: 'low', riskReason: 'reversible', explanation: 'Start J-1 on M-1.', createdMs: T, evidence: [], trail, failedBefore: [],
  };
  const store = createAppStore({} as SiteApi);
  store.setState({ lang, proposals: [], selected: p });
  store.getInitialState = store.getState;
  const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
  const ol = html.slice(html.indexOf('<ol class="trail">'), html.indexOf('</ol>'));
  return [...ol.matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1]!.replace(/^.*?<\/time> — /, ''));
}

describe('the trail: a person named agent', () => {
  it("is shown by name on a decision and a refused attempt; the agent's withdrawal in words", () => {
    const trail: ProposalDetail['trail'] = [
      { atMs: T, event: 'refused', user: 'agent', detail: 'reason: wrong_pin; decision: approve', fields: [{ name: 'reason', value: 'wrong_pin' }, { name: 'decision', value: 'approve' }] },
      { atMs: T + 1, event: 'approved', user: 'agent', detail: 'comment: ok', fields: [{ name: 'comment', value: 'ok' }] },
      { atMs: T + 2, event: 'withdrawn', user: 'agent', detail: 'reason: gone', fields: [{ name: 'reason', value: 'gone' }] },
    ];
    const en = trailLines('en', trail);
    expect(en[0]).toMatch(/^refused \(agent\): /);
    expect(en[1]).toBe('approved (agent): comment: ok');
    expect(en[2]).toBe('withdrawn (the agent): reason: gone');
    expect(trailLines('de', trail)[1]).toBe('genehmigt (agent): Kommentar: ok');
  });
});
