// The navigation's count of what waits in the inbox, in the chosen language's number format, as
// the inbox's own "Waiting (1.300)" beside it: the navigation said "1300" in German and Norwegian.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ProposalView, SiteApi } from '../../core/site/api.ts';
import { App } from './App.tsx';
import { StoreContext } from './context.tsx';
import type { Lang } from './i18n/messages.ts';
import { createAppStore, INBOX_ROWS, type AppState } from './store/store.ts';

const proposal = (i: number): ProposalView => ({
  id: `P-1-${i}`, status: 'open', action: 'assign_job', params: { module: 'operations' }, ruleId: 'assign', ruleVersion: '1', risk: 'low',
  riskReason: 'r', explanation: `p ${i}`, createdMs: i,
});

function renderApp(lang: Lang): string {
  const store = createAppStore({} as SiteApi);
  // A full list (the site cut it): the count is the site's, 1,300 open and 4 deferred.
  store.setState({
    lang,
    firstRun: { initialized: true, siteId: 'demo' } as AppState['firstRun'],
    user: { name: 'Lena', roles: ['shift_lead'] },
    proposals: Array.from({ length: INBOX_ROWS }, (_, i) => proposal(i)),
    status: { siteId: 'demo', tables: [], alarms: [], proposals: { open: 1300, deferred: 4 } } as never,
  });
  // Server rendering reads the store's server snapshot, which is its initial state.
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(App)));
}

describe("the navigation's inbox count", () => {
  it.each([
    ['en', '1,304'],
    ['nb', '1\u00a0304'],
    ['de', '1.304'],
  ] as Array<[Lang, string]>)('is written as numbers are in %s', (lang, n) => {
    expect(renderApp(lang)).toContain(`<span class="count"> ${n}</span>`);
  });
});
