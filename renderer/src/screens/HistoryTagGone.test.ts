// The History screen's tag picker emptied (a tag search that finds none, or a table picked that has
// no tags): Show and Compare sent the tag picked before, one the picker no longer showed — a read
// of a tag nobody could see chosen, or the site's "no such tag" for another table's. With no tag
// listed, none is picked and nothing is sent.
//
// No DOM here (as HistoryFailedRead.test.ts): hooks that keep their state between renders, the
// screen's effects run after each render as React would run them, its fields changed through onChange.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SiteApi } from '../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../store/store.ts';
import { History } from './History.tsx';
import { elementsOf, settle, textOf } from '../testing/fake-react.ts';

const holder: { store: AppStore | null; slots: unknown[]; at: number; effects: Array<() => unknown> } = { store: null, slots: [], at: 0, effects: [] };

vi.mock('react', async (importOriginal) => {
  const fake = await import('../testing/fake-react.ts');
  // Effects kept, to be run once the render is done (`settle`).
  return fake.fakeReact(await importOriginal(), () => holder.store, { ...fake.slotHooks(() => holder), useEffect: (f: () => unknown) => void holder.effects.push(f) });
});
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

const tag = (name: string, snapshotId: number) => ({ name, snapshotId, createdMs: snapshotId * 1000 });

afterEach(() => vi.useRealTimers());

/** The screen over a site whose tags whose name contains the search are `tagsOf(search)`. */
function screen(tagsOf: (search: string | undefined) => ReturnType<typeof tag>[]) {
  const asked: unknown[] = [];
  const site = {
    tables: async () => [],
    tags: async (req: { search?: string }) => tagsOf(req.search),
    history: async (req: { at: unknown }) => {
      asked.push(req.at);
      return { table: 'stock', snapshotId: 1, snapshotMs: 0, columns: [], types: [], rows: [], more: false };
    },
  };
  const store = createAppStore(site as unknown as SiteApi);
  store.setState({ lang: 'en', tables: [], tags: [], history: null, diff: null });
  holder.store = store;
  holder.slots = [];
  const render = () => ((holder.at = 0), (holder.effects = []), elementsOf(History()));
  /** Renders, runs the effects, lets the replies and the search's pause pass; until nothing changes. */
  const settleScreen = async () => {
    for (let i = 0; i < 5; i++) {
      render();
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
  const buttonsDisabled = () => render().filter((e) => e.type === 'button').map((e) => e.props.disabled);
  /** What the line beside the buttons says of why they wait (its id the buttons' aria-describedby). */
  const hintText = () => {
    const hint = render().find((e) => e.props.id === 'history-point-missing');
    return hint ? textOf(hint.props.children) : '';
  };
  return { change, settle: settleScreen, buttonsDisabled, asked, hintText, store };
}

describe('History: a tag picker with no tag listed', () => {
  it('sends no tag after a search that finds none', async () => {
    vi.useFakeTimers();
    const s = screen((search) => [tag('agent-7', 7), tag('decision-P-7-1', 6)].filter((x) => !search || x.name.includes(search)));
    await s.settle();
    await s.change('kind', 'tag');
    // The newest tag is picked: Show and Compare send it.
    expect(s.buttonsDisabled()).toEqual([false, false]);
    await s.change('tagSearch', 'hourly-');
    // The picker lists nothing: nothing to show or compare.
    expect(s.buttonsDisabled()).toEqual([true, true]);
    // A search that finds one picks it again.
    await s.change('tagSearch', 'decision-');
    expect(s.buttonsDisabled()).toEqual([false, false]);
  });
});

// Show and Compare disabled with nothing beside them said why: a lead who searched "hourly-" saw two
// dead buttons and no tag. The screen says what is missing, in the chosen language.
describe('History: why Show and Compare wait', () => {
  const hint = (s: ReturnType<typeof screen>) => s.hintText();
  it('says no tag matches the search, and that the table has none, and goes once a point is there', async () => {
    vi.useFakeTimers();
    let tags = [tag('agent-7', 7)];
    const s = screen((search) => tags.filter((x) => !search || x.name.includes(search)));
    await s.settle();
    await s.change('kind', 'tag');
    expect(hint(s)).toBe('');
    await s.change('tagSearch', 'hourly-');
    expect(s.buttonsDisabled()).toEqual([true, true]);
    expect(hint(s)).toBe('No tag of stock has “hourly-” in its name: Show and Compare need a tag.');
    tags = [];
    await s.change('tagSearch', '');
    expect(hint(s)).toBe('stock has no tags yet: Show and Compare need a tag.');
    await s.change('kind', 'snapshot');
    expect(hint(s)).toBe('Type a snapshot’s number (such as 42) for Show and Compare.');
    await s.change('value', 'abc');
    expect(hint(s)).toBe('Type a snapshot’s number (such as 42) for Show and Compare.');
    await s.change('value', '42');
    expect(hint(s)).toBe('');
    expect(s.buttonsDisabled()).toEqual([false, false]);
    await s.change('kind', 'time');
    expect(hint(s)).toBe('Pick a date and time for Show and Compare.');
  });
  it('says it in nb and de', async () => {
    vi.useFakeTimers();
    for (const [lang, text] of [
      ['nb', 'Ingen merker for stock har «hourly-» i navnet: Vis og Sammenlign trenger et merke.'],
      ['de', 'Kein Tag von stock enthält „hourly-“ im Namen: Anzeigen und Vergleichen brauchen einen Tag.'],
    ] as const) {
      const s = screen((search) => [tag('agent-7', 7)].filter((x) => !search || x.name.includes(search)));
      s.store.setState({ lang });
      await s.settle();
      await s.change('kind', 'tag');
      await s.change('tagSearch', 'hourly-');
      expect(hint(s)).toBe(text);
    }
  });
});
