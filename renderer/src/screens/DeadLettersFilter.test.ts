// The Dead letters summary filters the list: each of its groups is a button (aria-pressed) that
// asks the site for that topic's letters with that reason only — chosen by the site before its
// limit, so a group behind another module's flood shows —; pressed again, or "Show all", the list
// is of every letter again. A dismissal or a replay while filtered reads the filtered list again.
//
// No DOM here: React's hooks are replaced by minimal ones (as in Inbox.test.ts), the screen's
// function is called and the summary's buttons are clicked through their onClick.
import { describe, expect, it, vi } from 'vitest';
import type { DeadLetterGroupView, DeadLetterView, SiteApi } from '../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../store/store.ts';
import { settle, textOf } from '../testing/fake-react.ts';
import { deadLettersScreen, letterOf as letter, topic } from './testing/dead-letters.ts';

const holder: { store: AppStore | null } = { store: null };

vi.mock('react', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeReact(await importOriginal(), () => holder.store)); // effects not run: the test loads itself
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

const GROUPS: DeadLetterGroupView[] = [
  { topic: topic('inventory', 'stock'), reason: 'no_contract', count: 5000 },
  { topic: topic('commerce', 'orders'), reason: 'bad_json', count: 2 },
];

/** The screen for a shift lead, over a fake site that answers a filtered list as the site does. */
async function screen() {
  const asked: Array<Record<string, unknown>> = [];
  const sent: string[] = [];
  const all = [letter('1', GROUPS[0]!), letter('2', GROUPS[0]!), letter('9', GROUPS[1]!)];
  const api = {
    deadLetters: async (req: { topic?: string; reason?: string }) => (asked.push(req), all.filter((d) => (req.topic === undefined || d.topic === req.topic) && (req.reason === undefined || d.reason === req.reason))),
    deadLetterGroups: async () => GROUPS,
    dismissDeadLetters: async (req: { ids: string[] }) => (sent.push(`dismiss ${req.ids.join(',')}`), { dismissed: 1, notOpen: [] }),
    replayDeadLetters: async (req: { ids?: string[]; alike?: boolean }) => (sent.push(`replay ${req.ids?.join(',')}${req.alike ? ' alike' : ''}`), { replayed: 0, failed: 1, notOpen: [], alike: 0 }),
  };
  const { store, tree } = await deadLettersScreen(api, holder);
  const sources = () => tree().filter((e) => e.type === 'button' && e.props.className === 'source');
  const showAll = () => tree().find((e) => e.type === 'button' && e.props.className === 'show-all');
  return { store, asked, sent, tree, sources, showAll };
}

describe('Dead letters: the summary filters the list', () => {
  it('each group is a button; pressed, the site is asked for its letters only; pressed again, for all', async () => {
    const s = await screen();
    expect(s.sources().map((b) => [textOf(b.props.children), b.props['aria-pressed'], b.props.type])).toEqual([
      ['5,000 unknown contract from inventory/stock', false, 'button'],
      ['2 not JSON from commerce/orders', false, 'button'],
    ]);
    expect(s.showAll()).toBeUndefined();
    expect(s.store.getState().deadLetters.map((d) => d.id)).toEqual(['1', '2', '9']);

    s.sources()[1]!.props.onClick!();
    await settle();
    expect(s.asked.at(-1)).toEqual({ topic: topic('commerce', 'orders'), reason: 'bad_json' });
    expect(s.store.getState().deadLetters.map((d) => d.id)).toEqual(['9']);
    expect(s.sources().map((b) => b.props['aria-pressed'])).toEqual([false, true]);
    expect(s.tree().some((e) => e.props.className === 'filtered' && textOf(e.props.children).includes('Only the letters from commerce/orders listed (not JSON).'))).toBe(true);

    s.sources()[1]!.props.onClick!(); // the same group again: every letter
    await settle();
    expect(s.asked.at(-1)).toEqual({});
    expect(s.store.getState().deadLetterFilter).toBeNull();
    expect(s.store.getState().deadLetters.map((d) => d.id)).toEqual(['1', '2', '9']);
    expect(s.sources().map((b) => b.props['aria-pressed'])).toEqual([false, false]);
  });

  it('"Show all" clears the filter, and stays while the chosen group has emptied', async () => {
    const s = await screen();
    s.sources()[0]!.props.onClick!();
    await settle();
    expect(s.store.getState().deadLetters.map((d) => d.id)).toEqual(['1', '2']);
    // Every letter of the group closed: no group left in the summary, the way back stays.
    s.store.setState({ deadLetterGroups: [], deadLetters: [] });
    expect(s.sources()).toEqual([]);
    expect(s.tree().some((e) => e.type === 'p' && textOf(e.props.children) === 'No dead letters in this group.')).toBe(true);
    s.showAll()!.props.onClick!();
    await settle();
    expect(s.asked.at(-1)).toEqual({});
    expect(s.store.getState().deadLetterFilter).toBeNull();
    expect(s.showAll()).toBeUndefined();
  });

  it('a dismissal or a replay while filtered reads the filtered list again', async () => {
    const s = await screen();
    s.sources()[0]!.props.onClick!();
    await settle();
    const before = s.asked.length;
    expect(await s.store.getState().dismissDeadLetters(['1'], 'a vendor test')).toBe(true);
    await s.store.getState().replayDeadLetters(['2'], true);
    expect(s.sent).toEqual(['dismiss 1', 'replay 2 alike']);
    expect(s.asked.slice(before)).toEqual([
      { topic: topic('inventory', 'stock'), reason: 'no_contract' },
      { topic: topic('inventory', 'stock'), reason: 'no_contract' },
    ]);
  });
});

describe('Dead letters: Replay with a group chosen', () => {
  it('replays that group (its first open letter and every one like it), not every open letter', async () => {
    const s = await screen();
    const primary = () => s.tree().find((e) => e.type === 'button' && e.props.className === 'primary')!;
    expect(textOf(primary().props.children)).toBe('Replay all open');
    primary().props.onClick!();
    await settle();
    expect(s.sent.at(-1)).toBe('replay undefined'); // no ids: every open letter
    s.sources()[0]!.props.onClick!();
    await settle();
    expect(textOf(primary().props.children)).toBe('Replay these open');
    primary().props.onClick!();
    await settle();
    expect(s.sent.at(-1)).toBe('replay 1 alike');
  });
});

describe('Dead letters: one filter chosen after another', () => {
  it('shows the list asked for last, not a slower earlier reply', async () => {
    const replies: Array<(v: DeadLetterView[]) => void> = [];
    const api = {
      deadLetters: () => new Promise<DeadLetterView[]>((resolve) => replies.push(resolve)),
      deadLetterGroups: async () => GROUPS,
    } as unknown as SiteApi;
    const store = createAppStore(api);
    store.setState({ user: { name: 'Kari', roles: ['viewer'] } });
    const chosen = store.getState().filterDeadLetters({ topic: GROUPS[1]!.topic, reason: GROUPS[1]!.reason });
    const all = store.getState().filterDeadLetters(null);
    replies[1]!([letter('1', GROUPS[0]!), letter('9', GROUPS[1]!)]); // every letter, answered first
    await all;
    replies[0]!([letter('9', GROUPS[1]!)]); // the group's, late
    await chosen;
    expect(store.getState().deadLetterFilter).toBeNull();
    expect(store.getState().deadLetters.map((d) => d.id)).toEqual(['1', '9']);
  });
});
