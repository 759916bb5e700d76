// A decision refused because the proposal is gone (`proposal.notFound`) closes its panel
// (decided-elsewhere.test.ts). The Approve button pressed went with the panel, and the keyboard
// focus fell to the page: nothing put it anywhere (`afterDecision` was set only for a proposal
// decided elsewhere, which stays shown), so Tab began again at the top and N opened the most
// urgent, not the one after it. It goes on as after a decision made here: to the row that
// followed the gone one, N too (README, "The panel").
import { describe, expect, it } from 'vitest';
import type { ProposalDetail, ProposalView, SiteApi } from '../../../core/site/api.ts';
import { ApiError } from '../api/client.ts';
import { keepPlaceAfterDecision, type FocusDocument } from '../screens/Inbox.tsx';
import { createAppStore } from './store.ts';

const P = (id: string) =>
  ({ id, status: 'open', action: 'assign_job', module: 'operations', params: {}, ruleId: 'r', ruleVersion: '1', risk: 'low', riskReason: 'r', explanation: `about ${id}`, createdMs: 1, evidence: [], trail: [], failedBefore: [] }) as unknown as ProposalDetail;

function site(refusal: ApiError) {
  let gone = false;
  const api = {
    listProposals: async (): Promise<ProposalView[]> => (gone ? [P('P-1'), P('P-3')] : [P('P-1'), P('P-2'), P('P-3')]),
    getProposal: async ({ id }: { id: string }) => {
      if (gone && id === 'P-2') throw new ApiError('not_found', `no proposal ${id}`, undefined, 'proposal.notFound', { id });
      return P(id);
    },
    decide: async () => {
      gone = true;
      throw refusal;
    },
  } as unknown as SiteApi;
  const store = createAppStore(api);
  store.setState({ user: { name: 'Lena', roles: ['shift_lead'] }, lang: 'en' });
  return store;
}

/** A page whose list shows `ids`, the focus on the page (its button gone with the panel). */
function page(ids: string[]): FocusDocument & { focused: string | null } {
  const body = { tagName: 'BODY' };
  const doc: { focused: string | null; body: unknown; activeElement: unknown; querySelector?: unknown; querySelectorAll?: unknown } = { focused: null, body, activeElement: body };
  doc.querySelector = (sel: string) => (sel === '.inbox-list' ? { focus: () => void (doc.focused = 'list') } : null);
  doc.querySelectorAll = (sel: string) =>
    sel === '.inbox-list [data-proposal]' ? ids.map((id) => ({ getAttribute: (n: string) => (n === 'data-proposal' ? id : null), focus: () => void (doc.focused = id) })) : [];
  return doc as unknown as FocusDocument & { focused: string | null };
}

describe('a decision refused because the proposal is gone', () => {
  it('closes the panel and the focus and N go on from its place', async () => {
    const store = site(new ApiError('not_found', 'no proposal P-2', undefined, 'proposal.notFound', { id: 'P-2' }));
    await store.getState().loadProposals();
    await store.getState().select('P-2');
    await store.getState().decide('approve');
    expect(store.getState().selected).toBeNull();
    expect(store.getState().afterDecision).toEqual({ decided: 'P-2', next: 'P-3' });
    const doc = page(['P-1', 'P-3']);
    keepPlaceAfterDecision(doc, store.getState().afterDecision, store.getState().selected);
    expect(doc.focused).toBe('P-3');
    await store.getState().selectNext();
    expect(store.getState().selected?.id).toBe('P-3');
  });
  it('leaves the focus where the person put it, and nothing to go on from with no panel closed by it', () => {
    const doc = page(['P-1', 'P-3']);
    (doc as { activeElement: unknown }).activeElement = { tagName: 'SELECT' };
    keepPlaceAfterDecision(doc, { decided: 'P-2', next: 'P-3' }, null);
    expect(doc.focused).toBeNull();
    const none = page(['P-1', 'P-3']);
    keepPlaceAfterDecision(none, null, null);
    expect(none.focused).toBeNull();
  });
});
