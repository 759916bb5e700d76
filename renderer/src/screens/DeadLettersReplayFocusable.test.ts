// "Replay all open" was `disabled` while a replay was on its way and with nothing open: the button
// the keyboard had just pressed dropped the focus to the page (Tab began again at the top), where
// every other button of the UI that waits (a letter's Replay, Approve, Disable) stays focusable,
// marked aria-disabled, and does nothing when pressed. No DOM: React's hooks are replaced (as in
// DeadLettersReplayGroup.test.ts, with the same set-up: testing/dead-letters.ts), the screen's
// function is called and its button pressed.
import { describe, expect, it, vi } from 'vitest';
import type { DeadLetterView } from '../../../core/site/api.ts';
import type { AppStore } from '../store/store.ts';
import { settle } from '../testing/fake-react.ts';
import { deadLettersScreen, letterOf, topic } from './testing/dead-letters.ts';

const holder: { store: AppStore | null } = { store: null };

vi.mock('react', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeReact(await importOriginal(), () => holder.store));
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

const letter = (id: string, status: DeadLetterView['status']): DeadLetterView => letterOf(id, { topic: topic('yard', 'doors'), reason: 'bad_json' }, status);

/** The screen for a shift lead over a site holding `letters`, whose replays wait until released. */
async function screen(letters: DeadLetterView[]) {
  const sent: string[] = [];
  const held: Array<() => void> = [];
  const api = {
    deadLetters: async () => letters,
    deadLetterGroups: async () => [],
    status: async () => ({ alarms: [], tables: [] }),
    replayDeadLetters: (req: { ids?: string[] }) => (sent.push(`replay ${req.ids?.join(',') ?? 'all'}`), new Promise((resolve) => held.push(() => resolve({ replayed: 1, failed: 0, notOpen: [], alike: 0 })))),
  };
  const { button } = await deadLettersScreen(api, holder);
  const replayAll = () => button('primary')!;
  return { sent, held, replayAll };
}

describe('Dead letters: "Replay all open" keeps the focus', () => {
  it('is marked aria-disabled, not disabled, while a replay is on its way, and a second press sends nothing', async () => {
    const { sent, held, replayAll } = await screen([letter('1', 'open'), letter('2', 'open')]);
    expect(replayAll().props['aria-disabled']).toBeUndefined();
    replayAll().props.onClick!();
    await settle();
    expect(sent).toEqual(['replay all']);
    expect(replayAll().props.disabled).toBeUndefined();
    expect(replayAll().props['aria-disabled']).toBe(true);
    replayAll().props.onClick!();
    await settle();
    expect(sent).toEqual(['replay all']);
    held.shift()!();
    await settle();
    expect(replayAll().props['aria-disabled']).toBeUndefined();
  });

  it('is marked aria-disabled, not disabled, with nothing open, and pressed sends nothing', async () => {
    const { sent, replayAll } = await screen([letter('1', 'replayed')]);
    expect(replayAll().props.disabled).toBeUndefined();
    expect(replayAll().props['aria-disabled']).toBe(true);
    replayAll().props.onClick!();
    await settle();
    expect(sent).toEqual([]);
  });
});
