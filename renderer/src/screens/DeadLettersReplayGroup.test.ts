// "Replay these open" with a group chosen replays that group: also while the group's own list is
// still on its way, when the rows on the screen are still every module's. It replayed the first
// open letter of those rows and every one like it: another module's letters, written into the
// state tables, under a button that said the chosen group's.
//
// No DOM here: React's hooks are replaced by minimal ones (as in DeadLettersFilter.test.ts), the
// screen's function is called and its buttons clicked through their onClick.
import { describe, expect, it, vi } from 'vitest';
import type { DeadLetterGroupView, DeadLetterView } from '../../../core/site/api.ts';
import type { AppStore } from '../store/store.ts';
import { settle, textOf } from '../testing/fake-react.ts';
import { deadLettersScreen, letterOf as letter, topic } from './testing/dead-letters.ts';

const holder: { store: AppStore | null } = { store: null };

vi.mock('react', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeReact(await importOriginal(), () => holder.store));
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

const GROUPS: DeadLetterGroupView[] = [
  { topic: topic('inventory', 'stock'), reason: 'no_binding', count: 2 },
  { topic: topic('yard', 'doors'), reason: 'contract_violation', count: 1 },
];

describe('Dead letters: Replay with a group chosen, before its list came', () => {
  it("replays none of another group's letters: the button waits for a letter of the chosen group", async () => {
    const all = [letter('1', GROUPS[0]!), letter('2', GROUPS[0]!), letter('9', GROUPS[1]!)];
    const slow: Array<() => void> = [];
    const sent: string[] = [];
    const api = {
      // The group's list is slow (read behind a flood); every letter answers at once.
      deadLetters: (req: { topic?: string; reason?: string }) =>
        req.topic === undefined ? Promise.resolve(all) : new Promise<DeadLetterView[]>((resolve) => slow.push(() => resolve(all.filter((d) => d.topic === req.topic && d.reason === req.reason)))),
      deadLetterGroups: async () => GROUPS,
      replayDeadLetters: async (req: { ids?: string[]; alike?: boolean }) => (sent.push(`replay ${req.ids?.join(',')}${req.alike ? ' alike' : ''}`), { replayed: 0, failed: 1, notOpen: [], alike: 0 }),
    };
    const { store, button } = await deadLettersScreen(api, holder);
    const primary = () => button('primary')!;

    // The yard's group chosen; its list not come yet: the rows are still every module's.
    void store.getState().filterDeadLetters({ topic: GROUPS[1]!.topic, reason: GROUPS[1]!.reason });
    await settle();
    expect(store.getState().deadLetters.map((d) => d.id)).toEqual(['1', '2', '9']);
    expect(textOf(primary().props.children)).toBe('Replay these open');
    // Pressed whether or not it is marked aria-disabled (it stays focusable, and a press reaches it).
    primary().props.onClick!();
    await settle();
    // Not "replay 1 alike": the inventory letters are not the group the button names.
    expect(sent.filter((s) => s !== 'replay 9 alike')).toEqual([]);

    // The group's list comes (and the one a replay above read again, if it ran).
    while (slow.length > 0) slow.shift()!();
    await settle();
    expect(store.getState().deadLetters.map((d) => d.id)).toEqual(['9']);
    expect(primary().props['aria-disabled']).toBeUndefined();
    primary().props.onClick!();
    await settle();
    expect(sent.at(-1)).toBe('replay 9 alike');
  });
});
