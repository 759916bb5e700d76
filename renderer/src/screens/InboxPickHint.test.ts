// Before a proposal is picked, the inbox's right half (at 1280 px) says what to do instead of
// standing empty, and N opens the most urgent proposal from there as Next does from an open one;
// A, R and D decide nothing (no proposal is open). The Decided list's hint has no N.
//
// No DOM here: React's hooks are replaced by minimal ones so the hint's effect runs once, and
// `window` is a plain EventTarget (as Inbox.test.ts does for the panel's keys).
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ProposalView, SiteApi } from '../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../store/store.ts';
import { settle, textOf } from '../testing/fake-react.ts';

const holder: { store: AppStore | null } = { store: null };

// Effects run at each render: the hint's keydown handler.
vi.mock('react', async (importOriginal) =>
  (await import('../testing/fake-react.ts')).fakeReact(await importOriginal(), () => holder.store, {
    useEffect: (f: () => unknown) => void f(),
    useLayoutEffect: (f: () => unknown) => void f(),
  }),
);
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));
vi.mock('zustand/react/shallow', () => ({ useShallow: (selector: unknown) => selector }));

const view = (id: string, risk: ProposalView['risk'], createdMs: number): ProposalView => ({
  id, status: 'open', action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '1', risk, riskReason: 'reversible', explanation: `Start ${id}.`, createdMs,
});

/** The inbox with nothing selected; its hint rendered (its effect run: a keydown handler on a fake `window`). */
async function hint(o: { view?: 'waiting' | 'decided'; proposals?: ProposalView[]; decided?: ProposalView[] } = {}) {
  const win = new EventTarget();
  vi.stubGlobal('window', win);
  const asked: string[] = [];
  const decided: string[] = [];
  const api = new Proxy({} as SiteApi, {
    get(_t, m: string) {
      if (m === 'getProposal') return async (req: { id: string }) => (asked.push(req.id), { ...view(req.id, 'low', 1), evidence: [], trail: [], failedBefore: [] });
      if (m === 'decide') return async (req: { decision: string }) => (decided.push(req.decision), { outcome: 'approved' });
      return async () => [];
    },
  });
  const store = createAppStore(api);
  const proposals = o.proposals ?? [view('P-low', 'low', 1), view('P-high', 'high', 2)];
  store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, selected: null, proposals, inboxView: o.view ?? 'waiting', decided: o.decided ?? [] });
  holder.store = store;
  const { Inbox } = await import('./Inbox.tsx');
  const tree = Inbox() as unknown as { props: { children: unknown[] } };
  const part = tree.props.children.find((c) => typeof c === 'object' && c !== null && typeof (c as { type: unknown }).type === 'function') as { type: (p: object) => unknown; props: object } | undefined;
  const rendered = part ? part.type(part.props) : null;
  return {
    asked,
    decided,
    text: textOf(rendered),
    async press(key: string) {
      win.dispatchEvent(Object.assign(new Event('keydown'), { key, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, repeat: false }));
      await settle();
    },
  };
}

describe('the inbox before a proposal is picked', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('says what to do in the empty half, and N opens the most urgent; A decides nothing', async () => {
    const h = await hint();
    expect(h.text).toContain('Pick a proposal in the list, or press N to open the most urgent.');
    expect(h.text).toContain('Open the most urgent');
    await h.press('a');
    expect(h.decided).toEqual([]);
    expect(h.asked).toEqual([]);
    await h.press('n');
    expect(h.asked).toEqual(['P-high']); // high risk first, as the list shows them
  });

  it('in the Decided list says to pick a decision, and N does nothing there; with nothing in the list shown, no hint', async () => {
    const d = await hint({ view: 'decided', decided: [{ ...view('P-0', 'low', 1), status: 'approved', decidedBy: 'kari', decidedMs: 2 }] });
    expect(d.text).toContain('Pick a decision in the list');
    expect(d.text).not.toContain('press N');
    await d.press('n');
    expect(d.asked).toEqual([]);
    const none = await hint({ proposals: [] });
    expect(none.text).toBe('');
    await none.press('n');
    expect(none.asked).toEqual([]);
    expect((await hint({ view: 'decided', decided: [] })).text).toBe('');
  });
});
