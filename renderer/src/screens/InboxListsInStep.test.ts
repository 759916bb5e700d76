// The inbox's two lists (Waiting, Decided) and its panel stay in step: a proposal asked for from
// one list whose reply comes after the person switched to the other does not open beside it (a
// waiting one with Approve, and A deciding it, beside the Decided list); a proposal opened from a
// work queue or stock row ("Release proposed →") opens beside the Waiting list, wherever the inbox
// was left; and of two reads of the Decided list, the one asked for last is shown.
//
// No DOM here: React's hooks are replaced by minimal ones (as in DeadLettersFilter.test.ts), the
// Waiting buttons' function is called and its button clicked through its onClick.
import { describe, expect, it, vi } from 'vitest';
import type { ProposalDetail, ProposalView, SiteApi, SiteApiMethods } from '../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../store/store.ts';

const holder: { store: AppStore | null } = { store: null };

vi.mock('react', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeReact(await importOriginal(), () => holder.store));
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

const view = (id: string, o: Partial<ProposalView> = {}): ProposalView => ({
  id, status: 'open', action: 'release_job', module: 'operations', params: {}, ruleId: 'release', ruleVersion: '1', risk: 'low', riskReason: 'r', explanation: `Release ${id}.`, createdMs: 1, ...o,
});
const detail = (id: string, o: Partial<ProposalView> = {}): ProposalDetail => ({ ...view(id, o), evidence: [], trail: [], failedBefore: [] });

/** A reply the test releases when it likes. */
function later<T>(): { promise: Promise<T>; resolve(v: T): void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** A site whose getProposal replies wait for the test; every other call answers at once (`lists` for listProposals). */
function site(lists: (req: SiteApiMethods['listProposals']['req']) => Promise<ProposalView[]> = async () => []) {
  const replies = new Map<string, ReturnType<typeof later<ProposalDetail>>>();
  const decided: string[] = [];
  const api = new Proxy({} as SiteApi, {
    get(_t, m: string) {
      if (m === 'getProposal')
        return (req: { id: string }) => {
          const r = later<ProposalDetail>();
          replies.set(req.id, r);
          return r.promise;
        };
      if (m === 'listProposals') return lists;
      if (m === 'decide') return async (req: { id: string }) => (decided.push(req.id), { outcome: 'approved', proposal: view(req.id, { status: 'approved' }) });
      return async () => [];
    },
  });
  const store = createAppStore(api);
  store.setState({ user: { name: 'kari', roles: ['shift_lead'] } });
  return { store, replies, decided };
}

describe('the inbox panel and the list shown', () => {
  it('a waiting proposal tapped, then the Decided toggle before it came: it does not open beside the Decided list, and A decides nothing', async () => {
    const { store, replies, decided } = site();
    void store.getState().select('P-2');
    store.getState().showInboxView('decided');
    replies.get('P-2')!.resolve(detail('P-2'));
    await flush();
    expect(store.getState().inboxView).toBe('decided');
    expect(store.getState().selected).toBeNull();
    await store.getState().decide('approve');
    expect(decided).toEqual([]);
  });

  it('a decided row tapped, then the Waiting toggle before it came: it does not open beside the Waiting list', async () => {
    const { store, replies } = site();
    store.getState().showInboxView('decided');
    void store.getState().select('P-1');
    store.getState().showInboxView('waiting');
    replies.get('P-1')!.resolve(detail('P-1', { status: 'approved', decidedBy: 'ola', decidedMs: 5 }));
    await flush();
    expect(store.getState().selected).toBeNull();
  });

  it('keeps a proposal the other list shows too (decided here, then the Decided toggle), and the newer read of it that was on its way', async () => {
    const { store, replies } = site();
    store.setState({ selected: detail('P-3', { status: 'approved', decidedBy: 'kari', decidedMs: 5 }) });
    void store.getState().select('P-3'); // the live event's read of it, say
    store.getState().showInboxView('decided');
    replies.get('P-3')!.resolve(detail('P-3', { status: 'approved', decidedBy: 'kari', decidedMs: 5, command: { module: 'operations', progress: 'applied', updatedMs: 6 } }));
    await flush();
    expect(store.getState().selected?.id).toBe('P-3');
    expect(store.getState().selected?.command?.progress).toBe('applied');
  });

  it('a proposal opened from a work queue or stock row opens beside the Waiting list, though the inbox was left on the Decided one', async () => {
    const { store, replies } = site();
    holder.store = store;
    store.getState().showInboxView('decided');
    store.getState().go('work');
    const { Waiting } = await import('../components/Waiting.tsx');
    const button = Waiting({ items: [{ id: 'P-7', action: 'release_job', risk: 'high', status: 'open', job_id: 'J-7', resource_id: null, item: null, location: null }] }) as unknown as {
      props: { children: { props: { onClick: () => void } }[] };
    };
    button.props.children[0]!.props.onClick();
    replies.get('P-7')!.resolve(detail('P-7'));
    await flush();
    expect(store.getState().screen).toBe('inbox');
    expect(store.getState().selected?.id).toBe('P-7');
    expect(store.getState().inboxView).toBe('waiting');
  });
});

describe('the Decided list shows the read asked for last', () => {
  it('an older read answered after a newer one is not shown over it', async () => {
    const pending: { req: SiteApiMethods['listProposals']['req']; reply: ReturnType<typeof later<ProposalView[]>> }[] = [];
    const { store } = site((req) => {
      if (req.status?.includes('open')) return Promise.resolve([]);
      const reply = later<ProposalView[]>();
      pending.push({ req, reply });
      return reply.promise;
    });
    store.getState().showInboxView('decided'); // the first read: nothing decided yet
    void store.getState().loadDecided(); // the next (a decision made meanwhile, the site's event)
    expect(pending).toHaveLength(4);
    // The newer read answers first, with the decision; the older one after it, without.
    pending[2]!.reply.resolve([view('P-1', { status: 'approved', decidedBy: 'kari', decidedMs: 10 })]);
    pending[3]!.reply.resolve([]);
    await flush();
    pending[0]!.reply.resolve([]);
    pending[1]!.reply.resolve([]);
    await flush();
    expect(store.getState().decided?.map((p) => p.id)).toEqual(['P-1']);
  });
});
