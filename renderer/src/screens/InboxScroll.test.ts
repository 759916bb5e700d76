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

const holder: { store: AppStore | null; returned: unknown[]; scrolled: unknown[] } = { store: null, returned: [], scrolled: [] };

vi.mock('react', async (importOriginal) => {
  const real = await importOriginal<typeof import('react')>();
  const hooks = {
    useEffect: (f: () => unknown) => void holder.returned.push(f()),
    useLayoutEffect: (f: () => unknown) => void holder.returned.push(f()),
    useState: (i: unknown) => [typeof i === 'function' ? (i as () => unknown)() : i, () => undefined],
    // The one ref the panel has is its section: an element as chromium 156 has it.
    useRef: () => ({ current: { scrollIntoView: (o: unknown) => (holder.scrolled.push(o), Promise.resolve()) } }),
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

  it('is scrolled into view when opened, and no effect hands React anything but a cleanup function', async () => {
    vi.stubGlobal('window', new EventTarget());
    const store = createAppStore({} as SiteApi);
    store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, selected: detail, proposals: [detail] });
    holder.store = store;
    const { Inbox } = await import('./Inbox.tsx');
    const tree = Inbox() as unknown as { props: { children: unknown[] } };
    const panel = tree.props.children.find((c) => typeof c === 'object' && c !== null && typeof (c as { type: unknown }).type === 'function') as { type: (p: object) => unknown };
    holder.returned = [];
    panel.type({});
    expect(holder.scrolled).toEqual([{ block: 'nearest' }]);
    expect(holder.returned.length).toBeGreaterThan(0);
    for (const r of holder.returned) expect(r === undefined || typeof r === 'function', `an effect returned ${String(r)}`).toBe(true);
  });
});
