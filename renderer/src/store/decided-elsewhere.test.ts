// Two shift leads on the same proposal: the second one's Approve is refused (the site: "Proposal
// P-1 is already approved", `proposal.notOpen`), or the proposal is gone (`proposal.notFound`). The
// error line said so, but the panel went on showing it open with Approve and Reject, and the list
// went on listing it, until a push or the next read — none came while the events socket was down.
// The refusal reads the proposal and the inbox again, and the error line still says why.
import { describe, expect, it } from 'vitest';
import type { ProposalDetail, ProposalView, SiteApi } from '../../../core/site/api.ts';
import { ApiError } from '../api/client.ts';
import { createAppStore } from './store.ts';

const P = (id: string, status: ProposalView['status'] = 'open') =>
  ({ id, status, action: 'assign_job', module: 'operations', params: {}, ruleId: 'r', ruleVersion: '1', risk: 'low', riskReason: 'r', explanation: `about ${id}`, createdMs: 1, evidence: [], trail: [], failedBefore: [] }) as unknown as ProposalDetail;

function site(refusal: ApiError, after: { proposals: ProposalDetail[]; detail: ProposalDetail | null }) {
  let decided = false;
  const api = {
    listProposals: async () => (decided ? after.proposals : [P('P-1'), P('P-2')]),
    getProposal: async ({ id }: { id: string }) => {
      if (!decided) return P(id);
      if (after.detail === null || after.detail.id !== id) throw new ApiError('not_found', `no proposal ${id}`, undefined, 'proposal.notFound', { id });
      return after.detail;
    },
    decide: async () => {
      decided = true; // another lead's decision landed just before this one
      throw refusal;
    },
  } as unknown as SiteApi;
  const store = createAppStore(api);
  store.setState({ user: { name: 'Lena', roles: ['shift_lead'] }, lang: 'en' });
  return store;
}

describe('a decision refused because another lead decided first', () => {
  it('shows the proposal as decided and the inbox without it, the error line saying why', async () => {
    const store = site(new ApiError('conflict', 'already approved', undefined, 'proposal.notOpen', { id: 'P-1', status: 'approved' }), { proposals: [P('P-2')], detail: { ...P('P-1', 'approved'), decidedBy: 'ola' } as ProposalDetail });
    await store.getState().loadProposals();
    await store.getState().select('P-1');
    expect(await store.getState().decide('approve')).toBe(false);
    expect(store.getState().selected?.status).toBe('approved');
    expect(store.getState().proposals.map((p) => p.id)).toEqual(['P-2']);
    expect(store.getState().error).toBe('already approved');
    expect(store.getState().errorRefusal?.code).toBe('proposal.notOpen');
    expect(store.getState().deciding).toBe(false);
    // The focus goes on from it as after a decision made here (its buttons are gone): to P-2.
    expect(store.getState().afterDecision).toEqual({ decided: 'P-1', next: 'P-2' });
  });
  it('a proposal gone: the panel closes and the inbox is read again', async () => {
    const store = site(new ApiError('not_found', 'no proposal P-1', undefined, 'proposal.notFound', { id: 'P-1' }), { proposals: [P('P-2')], detail: null });
    await store.getState().loadProposals();
    await store.getState().select('P-1');
    await store.getState().decide('reject');
    expect(store.getState().selected).toBeNull();
    expect(store.getState().proposals.map((p) => p.id)).toEqual(['P-2']);
    expect(store.getState().errorRefusal?.code).toBe('proposal.notFound');
  });
  it('deferred by another lead while this approval was checked: the panel shows the deferral, still decidable, and the focus stays on it', async () => {
    const store = site(new ApiError('conflict', 'deferred by per meanwhile', undefined, 'proposal.decidedMeanwhile', { id: 'P-1', status: 'deferred', by: 'per' }), { proposals: [P('P-1', 'deferred'), P('P-2')], detail: { ...P('P-1', 'deferred'), decidedBy: 'per' } as ProposalDetail });
    await store.getState().loadProposals();
    await store.getState().select('P-1');
    expect(await store.getState().decide('approve')).toBe(false);
    expect(store.getState().selected?.status).toBe('deferred');
    expect(store.getState().proposals.map((p) => [p.id, p.status])).toEqual([['P-1', 'deferred'], ['P-2', 'open']]);
    expect(store.getState().errorRefusal?.code).toBe('proposal.decidedMeanwhile');
    expect(store.getState().afterDecision).toBeNull();
  });
  it('any other refusal leaves the panel and list as they were (a network failure says nothing of the proposal)', async () => {
    const store = site(new ApiError('internal', 'the site did not answer'), { proposals: [P('P-2')], detail: { ...P('P-1', 'approved') } as ProposalDetail });
    await store.getState().loadProposals();
    await store.getState().select('P-1');
    await store.getState().decide('approve');
    expect(store.getState().selected?.status).toBe('open');
    expect(store.getState().error).toBe('the site did not answer');
  });
});
