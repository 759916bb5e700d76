// Opening a proposal (a click, N, Next, the one after a deferral) keeps the person's place: beside
// the list (from 1101 px wide, the panel sticky) its row is brought into view when it is not, as N
// walked the highlight off the window (row top 868 → 3113 in an 800 px window); in one column (the
// list, then the panel below it) the panel is, unless its top is already in the upper third of
// the window (it scrolled the header away at 1280). `placeOnOpen` decides; the panel's effect does
// it. Newer chromium's `scrollIntoView` returns a promise; an effect written as
// `() => el.scrollIntoView()` hands that promise to React as its cleanup, React calls it on the
// next proposal opened and the whole page went blank. Every effect of the panel must return
// nothing or a function.
//
// No DOM here: React's hooks are replaced by minimal ones that record what each effect returns,
// and the panel's ref, the list and the selected row are elements whose scrollIntoView answers as
// chromium's does. The scrolling in a real chromium: test/e2e/floor-ui-shift.e2e.test.ts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ProposalDetail, SiteApi } from '../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../store/store.ts';
import { placeOnOpen, type Box } from './Inbox.tsx';

interface Fake {
  box: Box;
  scrolled: unknown[];
  /** How far it is scrolled within itself (the panel beside the list is a scroll box of its own). */
  scrollTop: number;
}
const fake = (top: number, left: number, right: number, height = 100): Fake => ({ box: { top, bottom: top + height, left, right }, scrolled: [], scrollTop: 0 });
const element = (f: Fake) => ({
  scrollIntoView: (o: unknown) => (f.scrolled.push(o), Promise.resolve()),
  getBoundingClientRect: () => f.box,
  get scrollTop() {
    return f.scrollTop;
  },
  set scrollTop(v: number) {
    f.scrollTop = v;
  },
});

const holder: { store: AppStore | null; returned: unknown[]; panel: Fake } = { store: null, returned: [], panel: fake(2000, 648, 1264) };

vi.mock('react', async (importOriginal) =>
  (await import('../testing/fake-react.ts')).fakeReact(await importOriginal(), () => holder.store, {
    useEffect: (f: () => unknown) => void holder.returned.push(f()),
    useLayoutEffect: (f: () => unknown) => void holder.returned.push(f()),
    // The one ref the panel has is its section: an element as chromium 156 has it.
    useRef: () => ({ current: element(holder.panel) }),
  }),
);
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));
vi.mock('zustand/react/shallow', () => ({ useShallow: (selector: unknown) => selector }));

const detail: ProposalDetail = {
  id: 'P-1', status: 'open', action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '1', risk: 'low',
  riskReason: 'reversible', explanation: 'Start J-1 on M-1.', createdMs: 1, evidence: [], trail: [], failedBefore: [],
};

// An 800 px high window. At 1280 the list is 16–632 px, the panel 648–1264; at 1024 both 16–1008, the panel under the list.
const H = 800;
const beside = { panel: (top = 8) => fake(top, 648, 1264, 784), list: fake(144, 16, 632, 6000) };
const column = { panel: (top: number) => fake(top, 16, 1008, 2000), list: fake(144, 16, 1008, 3600) };

describe('where the page goes when a proposal is opened (placeOnOpen)', () => {
  it('beside the list: to the row, only when it is not wholly in the window; the sticky panel stays', () => {
    const { panel, list } = beside;
    expect(placeOnOpen(panel().box, list.box, fake(3113, 16, 632).box, H)).toBe('row'); // N walked it below the window
    expect(placeOnOpen(panel().box, list.box, fake(-250, 16, 632).box, H, 2000)).toBe('row'); // above the window
    expect(placeOnOpen(panel().box, list.box, fake(-250, 16, 632).box, H, 645)).toBe('top'); // N wrapped to the first: the page's top shows it, the header too
    expect(placeOnOpen(panel().box, list.box, fake(-250, 16, 632).box, H, 950)).toBe('top'); // at the page's top its bottom is the window's
    expect(placeOnOpen(panel().box, list.box, fake(-250, 16, 632).box, H, 951)).toBe('row'); // one pixel under it: to the row
    expect(placeOnOpen(panel().box, list.box, fake(760, 16, 632).box, H)).toBe('row'); // half under the window's edge
    expect(placeOnOpen(panel().box, list.box, fake(420, 16, 632).box, H)).toBeNull(); // a click on a row in view: nothing moves
    expect(placeOnOpen(panel(136).box, list.box, fake(700, 16, 632).box, H)).toBeNull(); // the page at its top: the header stays
  });

  it('in one column: to the panel, unless its top is already in the upper third of the window', () => {
    const { panel, list } = column;
    const row = fake(420, 16, 1008).box; // in view or not, it cannot be beside the panel
    expect(placeOnOpen(panel(3800).box, list.box, row, H)).toBe('panel'); // N from the list: the panel 3,800 px down
    expect(placeOnOpen(panel(600).box, list.box, row, H)).toBe('panel'); // low on the screen: its buttons under the fold
    expect(placeOnOpen(panel(-300).box, list.box, row, H)).toBe('panel'); // its top scrolled off above
    expect(placeOnOpen(panel(120).box, list.box, row, H)).toBeNull(); // 'nearest' scrolled a taller panel to its top, the header away
  });

  it('without the row on the page (the list no longer holds it): the panel, as in one column', () => {
    expect(placeOnOpen(beside.panel(8).box, beside.list.box, null, H)).toBeNull();
    expect(placeOnOpen(column.panel(2000).box, column.list.box, null, H)).toBe('panel');
  });
});

describe('the open proposal panel', () => {
  afterEach(() => vi.unstubAllGlobals());

  /** Renders the panel of `detail` with `panel`, `list` and the selected `row` as given, in an 800 px high window. */
  async function open(panel: Fake, list: Fake, row: Fake | null): Promise<void> {
    vi.stubGlobal('window', Object.assign(new EventTarget(), { innerHeight: H }));
    vi.stubGlobal('document', {
      querySelector: (s: string) => (s === '.inbox-list' ? element(list) : s === '.inbox-list tr.selected' && row ? element(row) : null),
    });
    const store = createAppStore({} as SiteApi);
    store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, selected: detail, proposals: [detail] });
    holder.store = store;
    holder.panel = panel;
    const { Inbox } = await import('./Inbox.tsx');
    const tree = Inbox() as unknown as { props: { children: unknown[] } };
    const shown = tree.props.children.find((c) => typeof c === 'object' && c !== null && typeof (c as { type: unknown }).type === 'function') as { type: (p: object) => unknown };
    holder.returned = [];
    shown.type({});
  }

  it('brings the row into view beside the list, the panel out of sight below it in one column, and no effect hands React anything but a cleanup function', async () => {
    const row = fake(3113, 16, 632);
    const panel = beside.panel();
    await open(panel, beside.list, row);
    expect([row.scrolled, panel.scrolled]).toEqual([[{ block: 'nearest' }], []]);
    expect(holder.returned.length).toBeGreaterThan(0);
    for (const r of holder.returned) expect(r === undefined || typeof r === 'function', `an effect returned ${String(r)}`).toBe(true);

    const low = column.panel(3800);
    const above = fake(420, 16, 1008);
    await open(low, column.list, above);
    expect([above.scrolled, low.scrolled]).toEqual([[], [{ block: 'nearest' }]]);
  });

  it('scrolls nothing when the row beside the list is in view, nor when the panel below it starts in the upper third of the window', async () => {
    const row = fake(420, 16, 632);
    const panel = beside.panel();
    panel.scrollTop = 400; // the last proposal's trail read, down in the panel
    await open(panel, beside.list, row);
    expect([row.scrolled, panel.scrolled]).toEqual([[], []]);
    expect(panel.scrollTop).toBe(0); // the one opened at its top: heading, status, buttons
    const top = column.panel(120);
    await open(top, column.list, null);
    expect(top.scrolled).toEqual([]);
  });
});
