// A deferred proposal is put aside: the list shows it below the open ones (greyed, its status
// "deferred"), N steps through it in that order, and after Defer the panel goes on to the next open
// proposal, as after a decision. Server-side markup and the store against a fake API, no browser.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ProposalDetail, ProposalView, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore, sortByUrgency } from '../store/store.ts';
import { Inbox } from './Inbox.tsx';

const proposal = (id: string, risk: ProposalView['risk'], createdMs: number, status: ProposalView['status'] = 'open'): ProposalView => ({
  id, status, action: 'assign_job', params: {}, ruleId: 'assign', ruleVersion: '1', risk, riskReason: 'r', explanation: `p ${id}`, createdMs,
});
const detail = (p: ProposalView): ProposalDetail => ({ ...p, evidence: [], trail: [], failedBefore: [] });

describe('deferred proposals in the inbox', () => {
  it('are sorted below the open ones, whatever their risk and age; among themselves by urgency', () => {
    const list = [proposal('d-high', 'high', 1, 'deferred'), proposal('o-low', 'low', 5), proposal('d-low', 'low', 2, 'deferred'), proposal('o-high', 'high', 9)];
    expect(sortByUrgency(list).map((p) => p.id)).toEqual(['o-high', 'o-low', 'd-high', 'd-low']);
  });

  it('are listed last, marked deferred and greyed', () => {
    const store = createAppStore({} as SiteApi);
    store.setState({ lang: 'en', proposals: [proposal('P-d', 'high', 1, 'deferred'), proposal('P-o', 'low', 5)], selected: null });
    store.getInitialState = store.getState;
    const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
    const rows = [...html.matchAll(/<tr class="([^"]*)">.*?data-proposal="([^"]+)".*?<td>([^<]*)<\/td><\/tr>/g)].map((m) => [m[2], m[1], m[3]]);
    expect(rows).toEqual([
      ['P-o', '', 'open'],
      ['P-d', 'deferred', 'deferred'],
    ]);
  });

  it('after Defer the panel goes on to the next open proposal as the list stood; with none open it stays', async () => {
    // Shown a, b, c (all high, oldest first); b is deferred and moves below the others.
    let listed = [proposal('a', 'high', 1), proposal('b', 'high', 2), proposal('c', 'high', 3)];
    const api = {
      signIn: async () => ({ name: 'Kari', roles: ['shift_lead'] }),
      listProposals: async () => listed,
      getProposal: async (req: { id: string }) => detail(listed.find((p) => p.id === req.id)!),
      decide: async (req: { id: string; decision: string }) => {
        listed = listed.map((p) => (p.id === req.id ? { ...p, status: 'deferred' as const } : p));
        return { outcome: 'deferred', proposal: listed.find((p) => p.id === req.id)! };
      },
    } as unknown as SiteApi;
    const store = createAppStore(api);
    await store.getState().signIn('Kari', '1234');
    await store.getState().select('b');
    await store.getState().decide('defer');
    expect(store.getState().selected!.id).toBe('c');
    expect(sortByUrgency(store.getState().proposals).map((p) => p.id)).toEqual(['a', 'c', 'b']);
    // c deferred too: on (wrapping) to a; a deferred: none open, a stays shown.
    await store.getState().decide('defer');
    expect(store.getState().selected!.id).toBe('a');
    await store.getState().decide('defer');
    expect(store.getState().selected).toMatchObject({ id: 'a', status: 'deferred' });
  });
});
