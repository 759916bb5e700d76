// Opening a proposal brings its panel into view (a row far down the list, or below 1100 px the
// list above the panel, would open it out of sight). Newer chromium's `scrollIntoView` returns a
// promise; an effect written as `() => el.scrollIntoView()` hands that promise to React as its
// cleanup, React calls it on the next proposal opened and the whole page went blank. Every effect
// of the panel must return nothing or a function.
//
// No DOM here: React's hooks are replaced by minimal ones that record what each effect returns,
// and the panel's ref is an element whose scrollIntoView answers as chromium's does.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ProposalDetail, SiteApi } from '../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../store/store.ts';

const holder: { store: AppStore | null; returned: unknown[]; scrolled: unknown[]; top: number } = { store: null, returned: [], scrolled: [], top: 2000 };

vi.mock('react', async (importOriginal) => {
  const real = await importOriginal<typeof import('react')>();
  const hooks = {
    useEffect: (f: () => unknown) => void holder.returned.push(f()),
    useLayoutEffect: (f: () => unknown) => void holder.returned.push(f()),
    useState: (i: unknown) => [typeof i === 'function' ? (i as () => unknown)() : i, () => undefined],
    // The one ref the panel has is its section: an element as chromium 156 has it.
    useRef: () => ({ current: { scrollIntoView: (o: unknown) => (holder.scrolled.push(o), Promise.resolve()), getBoundingClientRect: () => ({ top: holder.top }) } }),
    useContext: () => holder.store,
    useSyncExternalStore: (_s: unknown, get: () => unknown) => get(),
    useDebugValue: () => undefined,
    useCallback: (f: unknown) => f,
    useMemo: (f: () => unknown) => f(),
  };
  return { ...real, ...hooks, default: { ...real, ...hooks } };
});
vi.mock('zustand', async (importOriginal) => ({
  ...(await importOriginal<typeof import('zustand')>()),
  useStore: (store: AppStore, selector: (s: unknown) => unknown) => selector(store.getState()),
}));
vi.mock('zustand/react/shallow', () => ({ useShallow: (selector: unknown) => selector }));

const detail: ProposalDetail = {
  id: 'P-1', status: 'open', action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '1', risk: 'low',
  riskReason: 'reversible', explanation: 'Start J-1 on M-1.', createdMs: 1, evidence: [], trail: [], failedBefore: [],
};

describe('the open proposal panel', () => {
  afterEach(() => vi.unstubAllGlobals());

  /** Renders the panel of `detail` with its top `top` px from the top of an 800 px high window; what was scrolled. */
  async function open(top: number): Promise<unknown[]> {
    vi.stubGlobal('window', Object.assign(new EventTarget(), { innerHeight: 800 }));
    const store = createAppStore({} as SiteApi);
    store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, selected: detail, proposals: [detail] });
    holder.store = store;
    holder.top = top;
    holder.scrolled = [];
    const { Inbox } = await import('./Inbox.tsx');
    const tree = Inbox() as unknown as { props: { children: unknown[] } };
    const panel = tree.props.children.find((c) => typeof c === 'object' && c !== null && typeof (c as { type: unknown }).type === 'function') as { type: (p: object) => unknown };
    holder.returned = [];
    panel.type({});
    return holder.scrolled;
  }

  it('is scrolled into view when opened out of sight, and no effect hands React anything but a cleanup function', async () => {
    expect(await open(2000)).toEqual([{ block: 'nearest' }]);
    expect(holder.returned.length).toBeGreaterThan(0);
    for (const r of holder.returned) expect(r === undefined || typeof r === 'function', `an effect returned ${String(r)}`).toBe(true);
    expect(await open(-300)).toEqual([{ block: 'nearest' }]); // its top scrolled off above
    expect(await open(600)).toEqual([{ block: 'nearest' }]); // low on the screen: its buttons under the fold
  });

  it('is left where it is when its top is in the upper third of the window (beside the list): the header and navigation stay in view', async () => {
    // 'nearest' scrolled a panel taller than the window to its top: 120 px of header and navigation gone at 1280.
    expect(await open(120)).toEqual([]);
  });
});
