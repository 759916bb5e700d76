// The History screen's tag picker, a table just picked: until that table's tags came (the search's
// quarter second, then the site's answer), the picker still listed the table picked before's tags,
// one of them picked, and Show sent it as a point of the new table — a read of another table's
// tag (the site's "no such tag", or a tag of the same name meaning something else). Now the picker
// offers only tags of the table shown: nothing is picked, and Show and Compare wait, until its own
// tags came.
//
// No DOM here (as HistoryTagsLoading.test.ts): hooks that keep their state between renders, the
// screen's effects run after each render as React would run them, its fields changed through onChange.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SiteApi } from '../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../store/store.ts';
import { History } from './History.tsx';
import { elementsOf, settle } from '../testing/fake-react.ts';

const holder: { store: AppStore | null; slots: unknown[]; at: number; effects: Array<() => unknown>; deps: Array<readonly unknown[] | undefined>; effectAt: number } = {
  store: null, slots: [], at: 0, effects: [], deps: [], effectAt: 0,
};
let queuedDeps: Array<[number, readonly unknown[] | undefined]> = [];

vi.mock('react', async (importOriginal) => {
  const fake = await import('../testing/fake-react.ts');
  // Effects run once the render is done (`settle`), and only when their deps changed, as React runs them.
  const useEffect = (f: () => unknown, deps?: readonly unknown[]) => {
    const k = holder.effectAt++;
    const before = holder.deps[k];
    if (deps && before && deps.length === before.length && deps.every((d, i) => Object.is(d, before[i]))) return;
    queuedDeps.push([k, deps]);
    holder.effects.push(f);
  };
  return fake.fakeReact(await importOriginal(), () => holder.store, { ...fake.slotHooks(() => holder), useEffect });
});
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

type Tag = { name: string; snapshotId: number; createdMs: number };
const tag = (name: string, snapshotId: number): Tag => ({ name, snapshotId, createdMs: snapshotId * 1000 });

afterEach(() => vi.useRealTimers());

/** The screen over a site whose tag reads wait until `answer` releases them; what Show and Compare asked is kept. */
function screen() {
  const waiting: Array<{ table: string; resolve(t: Tag[]): void }> = [];
  const asked: Array<{ method: string; table: string; at: unknown }> = [];
  const site = {
    tables: async () => [{ table: 'stock' }, { table: 'work_queue' }],
    status: () => new Promise(() => {}),
    tags: (req: { table: string }) => new Promise<Tag[]>((resolve) => waiting.push({ table: req.table, resolve })),
    history: async (req: { table: string; at: unknown }) => {
      asked.push({ method: 'history', table: req.table, at: req.at });
      return { table: req.table, snapshotId: 1, snapshotMs: 0, columns: [], types: [], rows: [], more: false };
    },
    diff: async (req: { table: string; from: unknown }) => {
      asked.push({ method: 'diff', table: req.table, at: req.from });
      return { table: req.table, from: { snapshotId: 1, snapshotMs: 0 }, to: { snapshotId: 1, snapshotMs: 0 }, columns: [], types: [], changes: [], more: false };
    },
  };
  const store: AppStore = createAppStore(site as unknown as SiteApi);
  store.setState({ lang: 'en', tables: [], tags: [], history: null, diff: null });
  holder.store = store;
  holder.slots = [];
  holder.deps = [];
  const render = () => ((holder.at = 0), (holder.effectAt = 0), (holder.effects = []), (queuedDeps = []), elementsOf(History()));
  const settleScreen = async (ms = 300) => {
    for (let i = 0; i < 5; i++) {
      render();
      for (const [k, deps] of queuedDeps) holder.deps[k] = deps;
      for (const effect of holder.effects) effect();
      await settle();
      vi.advanceTimersByTime(ms);
      await settle();
    }
  };
  const change = async (name: string, value: string, ms?: number) => {
    render().find((e) => e.props.name === name)!.props.onChange!({ target: { value } });
    await settleScreen(ms);
  };
  const answer = async (table: string, tags: Tag[]) => {
    for (const w of waiting.splice(0)) if (w.table === table) w.resolve(tags);
    await settleScreen();
  };
  const picker = () => render().find((e) => e.type === 'select' && e.props.name === 'tag')!;
  /** The tag names the picker offers, and the one picked. */
  const offered = () => {
    const names: string[] = [];
    const walk = (n: unknown): void => {
      if (Array.isArray(n)) return n.forEach(walk);
      if (n === null || typeof n !== 'object') return;
      const el = n as { type?: unknown; props?: { value?: unknown; children?: unknown } };
      if (el.type === 'option' && typeof el.props?.value === 'string') names.push(el.props.value);
      if (typeof el.type === 'function') return walk((el.type as (p: unknown) => unknown)(el.props));
      walk(el.props?.children);
    };
    walk(picker().props.children);
    return names;
  };
  const press = async (which: 'show' | 'compare') => {
    const els = render();
    if (which === 'show') {
      const form = els.find((e) => e.type === 'form')!;
      (form.props.onSubmit as (e: { preventDefault(): void }) => void)({ preventDefault() {} });
    } else {
      const b = els.filter((e) => e.type === 'button')[1]!;
      (b.props.onClick as () => void)();
    }
    await settleScreen();
  };
  const buttonsDisabled = () => render().filter((e) => e.type === 'button').map((e) => e.props.disabled);
  return { store, change, answer, offered, picker, press, asked, buttonsDisabled, settle: settleScreen };
}

describe("History: the tag picker offers only the shown table's tags", () => {
  it('lists none of the table picked before while the new table’s tags are on their way, and Show sends nothing', async () => {
    vi.useFakeTimers();
    const s = screen();
    await s.settle();
    await s.change('kind', 'tag');
    await s.answer('stock', [tag('agent-r7', 7)]);
    expect(s.offered()).toEqual(['agent-r7']);
    expect(s.picker().props.value).toBe('agent-r7');
    // Another table: its tags asked for, not yet answered (checked before the search's quarter second, and after it).
    await s.change('table', 'work_queue', 0);
    expect(s.offered()).toEqual([]);
    expect(s.picker().props.value).toBe('');
    expect(s.buttonsDisabled()).toEqual([true, true]);
    await s.settle();
    expect(s.offered()).toEqual([]);
    expect(s.buttonsDisabled()).toEqual([true, true]);
    await s.press('show');
    await s.press('compare');
    expect(s.asked.filter((a) => a.table === 'work_queue' && a.at !== undefined && (a.at as { latest?: boolean }).latest !== true)).toEqual([]);
    // Its own tags came: the newest is picked, and Show reads it of this table.
    await s.answer('work_queue', [tag('agent-r9', 9)]);
    expect(s.offered()).toEqual(['agent-r9']);
    expect(s.picker().props.value).toBe('agent-r9');
    await s.press('show');
    expect(s.asked.at(-1)).toEqual({ method: 'history', table: 'work_queue', at: { tag: 'agent-r9' } });
  });
});
