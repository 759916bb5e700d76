// A decision's comment goes with that decision only. Deferring the only open proposal leaves it on
// the panel (there is no next one to go on to), and the comment stayed in its field: the approval
// made there later went out with the deferral's comment ("truck late") as its own, into the
// decision log. Refused, a comment stays to be sent again.
//
// No DOM here (as UsersAddedEdit.test.ts): hooks that keep their state between renders, effects not
// run, the panel's function called, its comment typed into through onChange and its buttons pressed.
import { describe, expect, it, vi } from 'vitest';
import type { ProposalDetail, SiteApi } from '../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../store/store.ts';
import { Inbox } from './Inbox.tsx';
import { elementsOf, textOf } from '../testing/fake-react.ts';

const holder: { store: AppStore | null; slots: unknown[]; at: number } = { store: null, slots: [], at: 0 };

vi.mock('react', async (importOriginal) => {
  const fake = await import('../testing/fake-react.ts');
  return fake.fakeReact(await importOriginal(), () => holder.store, fake.slotHooks(() => holder));
});
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));
vi.mock('zustand/react/shallow', () => ({ useShallow: (selector: unknown) => selector }));

const flush = async () => {
  for (let i = 0; i < 40; i++) await Promise.resolve();
};

const open: ProposalDetail = {
  id: 'P-1', status: 'open', action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '1', risk: 'low',
  riskReason: 'reversible', explanation: 'Start J-1 on M-1.', createdMs: 1, evidence: [], trail: [], failedBefore: [],
};

/**
 * The inbox of a shift lead with one open proposal, open in the panel, over a site that takes
 * each decision (`refuse`: refuses the next one); `sent` is what each decision carried.
 */
function screen() {
  const sent: { decision: string; comment?: string }[] = [];
  let shown: ProposalDetail = open;
  let refuse = false;
  const api = {
    decide: async (req: { decision: string; comment?: string }) => {
      sent.push(req);
      if (refuse) throw Object.assign(new Error('the site is busy'), { kind: 'internal' });
      shown = { ...shown, status: req.decision === 'defer' ? 'deferred' : 'approved' };
      return { outcome: shown.status };
    },
    getProposal: async () => shown,
    listProposals: async () => (shown.status === 'open' || shown.status === 'deferred' ? [shown] : []),
  } as unknown as SiteApi;
  const store = createAppStore(api);
  store.setState({ lang: 'en', user: { name: 'Kari', roles: ['shift_lead'] }, proposals: [open], selected: open });
  holder.store = store;
  holder.slots = [];
  const render = () => ((holder.at = 0), elementsOf(Inbox()));
  const comment = () => render().find((e) => e.type === 'textarea' && e.props.name === 'comment');
  const press = async (label: string) => {
    render().find((e) => e.type === 'button' && textOf(e.props.children).includes(label))!.props.onClick!();
    await flush();
  };
  return { store, sent, comment, press, refuseNext: () => void (refuse = true) };
}

describe('inbox: a decision’s comment', () => {
  it('leaves the field once the site took the decision, and does not go out with the next one', async () => {
    const s = screen();
    s.comment()!.props.onChange!({ target: { value: 'truck late' } });
    await s.press('Defer');
    // The only open proposal: deferred, it stays on the panel, still to be decided.
    expect(s.store.getState().selected?.status).toBe('deferred');
    expect(s.comment()!.props.value).toBe('');
    await s.press('Approve');
    expect(s.sent).toEqual([{ id: 'P-1', decision: 'defer', comment: 'truck late' }, { id: 'P-1', decision: 'approve' }]);
  });

  it('stays when the decision was refused', async () => {
    const s = screen();
    s.comment()!.props.onChange!({ target: { value: 'truck late' } });
    s.refuseNext();
    await s.press('Defer');
    expect(s.store.getState().error).toBe('the site is busy');
    expect(s.comment()!.props.value).toBe('truck late');
  });
});
