// The inbox's keyboard shortcuts (A approve, R reject, D defer, N next), on the keydown handler
// the open proposal's panel puts on `window`: a key with Ctrl, Cmd or Alt (select all, reload,
// bookmark), a key held down, and a letter typed into a field, the language picker's <select>
// (type-ahead: "d" for Deutsch) or editable text decide nothing; a focused button does not stop
// them (the proposal just clicked has the focus). While a decision is on its way, approve, reject
// and defer are marked disabled (aria-disabled: a `disabled` button drops the keyboard focus to the
// page) and neither a click on them nor their keys send anything.
//
// No DOM here: React's hooks are replaced by minimal ones so the panel's effects run once, and
// `window` is a plain EventTarget.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ProposalDetail, SiteApi } from '../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../store/store.ts';
import type { FocusDocument } from './Inbox.tsx';

const holder: { store: AppStore | null } = { store: null };

// Effects run at each render: the panel's keydown handler, the focus after a decision.
vi.mock('react', async (importOriginal) =>
  (await import('../testing/fake-react.ts')).fakeReact(await importOriginal(), () => holder.store, {
    useEffect: (f: () => unknown) => void f(),
    useLayoutEffect: (f: () => unknown) => void f(),
  }),
);

// zustand (loaded outside vitest's transform) would call the real React: its hooks go too.
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));
vi.mock('zustand/react/shallow', () => ({ useShallow: (selector: unknown) => selector }));

/** What a key event's target shows of a DOM element. */
const element = (tagName: string, isContentEditable = false) => ({ tagName, isContentEditable });

const detail: ProposalDetail = {
  id: 'P-1', status: 'open', action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '1', risk: 'low',
  riskReason: 'reversible', explanation: 'Start J-1 on M-1.', createdMs: 1, evidence: [], trail: [], failedBefore: [],
};

/** Lets a decision sent by a key come back (the store takes one at a time). */
const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

interface Press {
  ctrlKey?: boolean;
  metaKey?: boolean;
  altKey?: boolean;
  repeat?: boolean;
  target?: unknown;
}

interface Element {
  type: unknown;
  props: { children?: unknown; className?: string; disabled?: boolean; 'aria-disabled'?: boolean; onClick?: () => void };
}
/** The buttons in a rendered tree (the panel's function called, its children's not), but its "Back to the list" (no decision, no Next). */
const buttons = (node: unknown): Element[] => {
  if (Array.isArray(node)) return node.flatMap(buttons);
  if (typeof node !== 'object' || node === null || !('props' in node)) return [];
  const el = node as Element;
  return [...(el.type === 'button' && !String(el.props.className).includes('back-to-list') ? [el] : []), ...buttons(el.props.children)];
};

/**
 * The open proposal's panel for a shift lead, its keydown handler on a fake `window`; `press`
 * waits for what a key sent; `tree` is what the panel rendered.
 */
async function panelWithKeys(state: { deciding?: boolean; opening?: string | null } = {}): Promise<{ press(key: string, o?: Press): Promise<void>; decided: string[]; tree: unknown }> {
  const win = new EventTarget();
  vi.stubGlobal('window', win);
  const decided: string[] = [];
  const api = new Proxy({} as SiteApi, {
    get(_t, m: string) {
      if (m === 'decide') return async (req: { decision: string }) => (decided.push(req.decision), { outcome: 'approved' });
      if (m === 'getProposal') return async () => detail;
      return async () => [];
    },
  });
  const store = createAppStore(api);
  store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, selected: detail, proposals: [detail], ...state });
  holder.store = store;
  const { Inbox } = await import('./Inbox.tsx');
  const tree = Inbox() as unknown as { props: { children: unknown[] } };
  const panel = tree.props.children.find((c) => typeof c === 'object' && c !== null && typeof (c as { type: unknown }).type === 'function') as { type: (p: object) => unknown };
  const rendered = panel.type({}); // runs the panel's effects: its keydown handler is now on `window`
  return {
    decided,
    tree: rendered,
    async press(key, o = {}) {
      const { target, ...mods } = o;
      const e = Object.assign(new Event('keydown'), { key, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, repeat: false, ...mods });
      if (target !== undefined) Object.defineProperty(e, 'target', { value: target });
      win.dispatchEvent(e);
      await flush();
    },
  };
}

describe('inbox keyboard shortcuts', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('do not approve, reject or defer on Ctrl+A, Ctrl+R, Ctrl+D, Cmd+A, Alt+D or a key held down', async () => {
    const k = await panelWithKeys();
    await k.press('a', { ctrlKey: true }); // select all
    await k.press('r', { ctrlKey: true }); // reload
    await k.press('d', { ctrlKey: true }); // bookmark
    await k.press('a', { metaKey: true }); // select all on a Mac keyboard
    await k.press('d', { altKey: true });
    await k.press('r', { repeat: true }); // the R key held down
    await k.press('a'); // the shortcut itself works in this harness
    expect(k.decided).toEqual(['approve']);
  });

  it('do not defer the proposal when "d" is typed on the language picker (a <select>), in a field or in editable text', async () => {
    const k = await panelWithKeys();
    await k.press('d', { target: element('SELECT') });
    await k.press('d', { target: element('INPUT') });
    await k.press('d', { target: element('TEXTAREA') });
    await k.press('d', { target: element('DIV', true) });
    await k.press('d', { target: element('BUTTON') }); // the proposal just clicked
    expect(k.decided).toEqual(['defer']);
  });
});

describe('a decision on its way', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('marks approve, reject and defer disabled but keeps them focusable; neither a click nor their keys send; next stays', async () => {
    const k = await panelWithKeys({ deciding: true });
    const shown = buttons(k.tree).map((b) => [b.props.className ?? '', b.props['aria-disabled'] === true]);
    expect(shown).toEqual([
      ['primary approve', true],
      ['reject', true],
      ['', true],
      ['', false],
    ]);
    // Not `disabled`: the browser moves the focus off a button that becomes disabled.
    expect(buttons(k.tree).map((b) => b.props.disabled)).toEqual([undefined, undefined, undefined, undefined]);
    for (const b of buttons(k.tree).slice(0, 3)) b.props.onClick!(); // a click, or Enter on the focused button
    await flush();
    await k.press('a');
    await k.press('d');
    expect(k.decided).toEqual([]);
    const idle = await panelWithKeys();
    expect(buttons(idle.tree).map((b) => b.props['aria-disabled'] === true)).toEqual([false, false, false, false]);
    buttons(idle.tree)[1]!.props.onClick!(); // the same click once nothing is on its way
    await flush();
    expect(idle.decided).toEqual(['reject']);
  });
});

describe('another proposal on its way to the panel', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('marks the shown one\'s approve, reject and defer disabled and the panel busy, as a decision on its way does; next stays', async () => {
    // A row tapped, its read on its way: the buttons on screen are the last proposal's, and the
    // store sends nothing from them (they looked live, and A or a tap did nothing).
    const k = await panelWithKeys({ opening: 'P-other' });
    expect(buttons(k.tree).map((b) => b.props['aria-disabled'] === true)).toEqual([true, true, true, false]);
    expect((k.tree as { props: { 'aria-busy'?: boolean } }).props['aria-busy']).toBe(true);
    await k.press('a');
    expect(k.decided).toEqual([]);
    // A read of the one shown (a live event's) holds nothing.
    const again = await panelWithKeys({ opening: detail.id });
    expect(buttons(again.tree).map((b) => b.props['aria-disabled'] === true)).toEqual([false, false, false, false]);
    expect((again.tree as { props: { 'aria-busy'?: boolean } }).props['aria-busy']).toBe(undefined);
  });
});

describe('the keyboard focus after a decision', () => {
  afterEach(() => vi.unstubAllGlobals());

  /**
   * A page whose list shows `ids`; the focus on `active` (the body: it fell to the page; a row's
   * proposal id: on that row; 'defer': on the panel's Defer button); `focused` what was focused since.
   */
  const page = (ids: string[], active: 'body' | 'picker' | 'defer' | { row: string } = 'body'): FocusDocument & { focused: string | null } => {
    const body = { tagName: 'BODY' };
    const doc: { focused: string | null; body: unknown; activeElement: unknown; querySelector?: unknown; querySelectorAll?: unknown } = {
      focused: null,
      body,
      activeElement: null,
    };
    const rows = ids.map((id) => ({ tagName: 'BUTTON', getAttribute: (n: string) => (n === 'data-proposal' ? id : null), focus: () => void (doc.focused = id) }));
    doc.activeElement =
      active === 'body' ? body : active === 'picker' ? { tagName: 'SELECT', getAttribute: () => null } : active === 'defer' ? { tagName: 'BUTTON', getAttribute: () => null } : rows.find((r) => r.getAttribute('data-proposal') === active.row);
    doc.querySelector = (sel: string) => (sel === '.inbox-list' ? { focus: () => void (doc.focused = 'list') } : null);
    doc.querySelectorAll = (sel: string) => (sel === '.inbox-list [data-proposal]' ? rows : []);
    return doc as unknown as FocusDocument & { focused: string | null };
  };

  it('goes to the row after the decided one once its buttons are gone, else to the list; stays where the person put it', async () => {
    const { keepPlaceAfterDecision } = await import('./Inbox.tsx');
    const approved = { id: 'P-2', status: 'approved' };
    let doc = page(['P-1', 'P-3']);
    keepPlaceAfterDecision(doc, { decided: 'P-2', next: 'P-3' }, approved);
    expect(doc.focused).toBe('P-3');
    doc = page(['P-1', 'P-3']);
    keepPlaceAfterDecision(doc, { decided: 'P-2', next: 'P-3' }, { id: 'P-2', status: 'stale' });
    expect(doc.focused).toBe('P-3');
    doc = page([]); // the last one decided: the emptied list
    keepPlaceAfterDecision(doc, { decided: 'P-2', next: null }, approved);
    expect(doc.focused).toBe('list');
    doc = page(['P-1', 'P-3'], 'picker'); // the person moved on to the language picker meanwhile
    keepPlaceAfterDecision(doc, { decided: 'P-2', next: 'P-3' }, approved);
    expect(doc.focused).toBe(null);
    doc = page(['P-1', 'P-2', 'P-3']); // deferred: still decidable, its buttons (and the focus on them) stay
    keepPlaceAfterDecision(doc, { decided: 'P-2', next: 'P-3' }, { id: 'P-2', status: 'deferred' });
    expect(doc.focused).toBe(null);
    doc = page(['P-1', 'P-3']); // another proposal opened meanwhile: not this decision's place
    keepPlaceAfterDecision(doc, { decided: 'P-2', next: 'P-3' }, { id: 'P-1', status: 'approved' });
    expect(doc.focused).toBe(null);
  });

  it('after D from the deferred proposal\'s row (or with the focus on the page) goes to the row the panel went on to; on Defer it stays', async () => {
    // Shown a, c, b: b deferred moved to the list's end, the panel on to c. The focus was on b's
    // row (Enter had opened b there), ~2,400 px down and off the window, and Enter reopened b.
    const { keepPlaceAfterDecision } = await import('./Inbox.tsx');
    const deferral = { decided: 'b', next: 'c', deferred: true } as const;
    const onC = { id: 'c', status: 'open' };
    let doc = page(['a', 'c', 'b'], { row: 'b' });
    keepPlaceAfterDecision(doc, deferral, onC);
    expect(doc.focused).toBe('c');
    doc = page(['a', 'c', 'b']);
    keepPlaceAfterDecision(doc, deferral, onC);
    expect(doc.focused).toBe('c');
    doc = page(['a', 'c', 'b'], 'defer'); // the Defer button pressed: its focus stays (the buttons stay)
    keepPlaceAfterDecision(doc, deferral, onC);
    expect(doc.focused).toBe(null);
    doc = page(['a', 'c', 'b'], { row: 'a' }); // on another row: put there by the person, it stays
    keepPlaceAfterDecision(doc, deferral, onC);
    expect(doc.focused).toBe(null);
    doc = page(['a', 'c', 'b'], 'picker');
    keepPlaceAfterDecision(doc, deferral, onC);
    expect(doc.focused).toBe(null);
    doc = page(['a', 'c', 'b'], { row: 'b' }); // another proposal opened since (a tap, N): not the deferral's to move
    keepPlaceAfterDecision(doc, deferral, { id: 'a', status: 'open' });
    expect(doc.focused).toBe(null);
    doc = page(['a', 'c', 'b'], { row: 'b' }); // an approval's place is not a deferral's
    keepPlaceAfterDecision(doc, { decided: 'b', next: 'c' }, onC);
    expect(doc.focused).toBe(null);
  });

  it('is moved by the inbox after D from a row, once the panel shows the next open proposal', async () => {
    const proposal = (id: string, createdMs: number) => ({ ...detail, id, createdMs, risk: 'high' as const });
    let listed = [proposal('a', 1), proposal('b', 2), proposal('c', 3)];
    const api = new Proxy({} as SiteApi, {
      get(_t, m: string) {
        if (m === 'listProposals') return async () => listed;
        if (m === 'getProposal') return async (req: { id: string }) => listed.find((p) => p.id === req.id)!;
        if (m === 'decide')
          return async (req: { id: string }) => {
            listed = listed.map((p) => (p.id === req.id ? { ...p, status: 'deferred' as const } : p));
            return { outcome: 'deferred' };
          };
        return async () => [];
      },
    });
    const store = createAppStore(api);
    store.setState({ user: { name: 'Kari', roles: ['shift_lead'] } });
    await store.getState().loadProposals();
    await store.getState().select('b');
    await store.getState().decide('defer');
    expect(store.getState().selected!.id).toBe('c');
    const doc = page(['a', 'c', 'b'], { row: 'b' });
    vi.stubGlobal('document', doc);
    vi.stubGlobal('window', new EventTarget());
    holder.store = store;
    const { Inbox } = await import('./Inbox.tsx');
    Inbox(); // its effects run here (the hooks above)
    expect(doc.focused).toBe('c');
  });

  it('is moved by the inbox once the decided proposal and the reloaded list are on the page', async () => {
    const doc = page(['P-3']);
    vi.stubGlobal('document', doc);
    vi.stubGlobal('window', new EventTarget());
    const api = new Proxy({} as SiteApi, { get: () => async () => [] });
    const store = createAppStore(api);
    store.setState({
      user: { name: 'Kari', roles: ['shift_lead'] },
      selected: { ...detail, id: 'P-2', status: 'approved' },
      proposals: [{ ...detail, id: 'P-3' }],
      afterDecision: { decided: 'P-2', next: 'P-3' },
    });
    holder.store = store;
    const { Inbox } = await import('./Inbox.tsx');
    Inbox(); // its effects run here (the hooks above)
    expect(doc.focused).toBe('P-3');
  });
});
