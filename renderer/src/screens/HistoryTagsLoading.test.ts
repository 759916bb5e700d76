// The History screen's line beside Show and Compare said "stock has no tags yet" while the table's
// tags were still on their way from the site (a slow site, a table just picked), and after their
// read failed, beside the error line saying why: a table with tags looked as if it had none. Now
// nothing is said until the tags read for the table (and the search) shown has answered; a read
// that failed leaves the error line alone to say so.
//
// No DOM here (as HistoryTagGone.test.ts): hooks that keep their state between renders, the
// screen's effects run after each render as React would run them, its fields changed through onChange.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SiteApi } from '../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../store/store.ts';
import { History } from './History.tsx';
import { elementsOf, settle, textOf } from '../testing/fake-react.ts';

const holder: { store: AppStore | null; slots: unknown[]; at: number; effects: Array<() => unknown>; deps: Array<readonly unknown[] | undefined>; effectAt: number } = {
  store: null, slots: [], at: 0, effects: [], deps: [], effectAt: 0,
};
/** The deps of the effects a render queued, recorded once they are run (`settle`), not on a render only read. */
let queuedDeps: Array<[number, readonly unknown[] | undefined]> = [];

vi.mock('react', async (importOriginal) => {
  const fake = await import('../testing/fake-react.ts');
  // Effects kept, to be run once the render is done (`settle`), and only when their deps changed,
  // as React runs them: a search's tags are read once, not again at each render.
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

afterEach(() => vi.useRealTimers());

/** The screen over a site whose tag reads wait until `answer` (or `fail`) releases them, in order. */
function screen() {
  const waiting: Array<{ resolve(t: Tag[]): void; reject(e: Error): void; search: string | undefined }> = [];
  const site = {
    tables: async () => [{ table: 'stock' }, { table: 'jobs' }],
    status: () => new Promise(() => {}), // not answered: not what this is about
    tags: (req: { search?: string }) => new Promise<Tag[]>((resolve, reject) => waiting.push({ resolve, reject, search: req.search })),
    history: async () => ({ table: 'stock', snapshotId: 1, snapshotMs: 0, columns: [], types: [], rows: [], more: false }),
  };
  const store: AppStore = createAppStore(site as unknown as SiteApi);
  store.setState({ lang: 'en', tables: [], tags: [], history: null, diff: null });
  holder.store = store;
  holder.slots = [];
  holder.deps = [];
  const render = () => ((holder.at = 0), (holder.effectAt = 0), (holder.effects = []), (queuedDeps = []), elementsOf(History()));
  const settleScreen = async () => {
    for (let i = 0; i < 5; i++) {
      render();
      for (const [k, deps] of queuedDeps) holder.deps[k] = deps;
      for (const effect of holder.effects) effect();
      await settle();
      vi.advanceTimersByTime(300);
      await settle();
    }
  };
  const change = async (name: string, value: string) => {
    render().find((e) => e.props.name === name)!.props.onChange!({ target: { value } });
    await settleScreen();
  };
  const hint = () => {
    const p = render().find((e) => e.props.id === 'history-point-missing');
    return p ? textOf(p.props.children) : '';
  };
  const answer = async (tags: Tag[]) => {
    for (const w of waiting.splice(0)) w.resolve(tags);
    await settleScreen();
  };
  const fail = async () => {
    for (const w of waiting.splice(0)) w.reject(Object.assign(new Error('the site is busy'), { kind: 'internal' }));
    await settleScreen();
  };
  const buttonsDisabled = () => render().filter((e) => e.type === 'button').map((e) => e.props.disabled);
  return { store, change, hint, answer, fail, settle: settleScreen, waiting, buttonsDisabled };
}

describe('History: the tag hint while the tags are read', () => {
  it('says nothing while the table’s tags are on their way; once they came, none, it says so', async () => {
    vi.useFakeTimers();
    const s = screen();
    await s.settle();
    await s.change('kind', 'tag');
    expect(s.waiting.length).toBeGreaterThan(0); // asked, not answered
    expect(s.buttonsDisabled()).toEqual([true, true]);
    expect(s.hint()).toBe('');
    await s.answer([]);
    expect(s.hint()).toBe('stock has no tags yet: Show and Compare need a tag.');
    // A search typed: nothing said of it until its tags came.
    await s.change('tagSearch', 'hourly-');
    expect(s.hint()).toBe('');
    await s.answer([]);
    expect(s.hint()).toBe('No tag of stock has “hourly-” in its name: Show and Compare need a tag.');
  });

  it('says nothing beyond the error line when the read failed', async () => {
    vi.useFakeTimers();
    const s = screen();
    await s.settle();
    await s.change('kind', 'tag');
    await s.fail();
    expect(s.store.getState().error).toBe('the site is busy');
    expect(s.hint()).toBe('');
    // A search whose read fails after the table's tags came (none): not "no tag matches".
    await s.change('tagSearch', '');
    await s.change('tagSearch', 'agent-');
    await s.fail();
    expect(s.hint()).toBe('');
  });

  it('says nothing of a table just picked until its own tags came', async () => {
    vi.useFakeTimers();
    const s = screen();
    await s.settle();
    await s.change('kind', 'tag');
    await s.answer([]);
    expect(s.hint()).toBe('stock has no tags yet: Show and Compare need a tag.');
    await s.change('table', 'jobs');
    expect(s.hint()).toBe('');
    await s.answer([]);
    expect(s.hint()).toBe('jobs has no tags yet: Show and Compare need a tag.');
  });
});
