// A letter's "Replay this and every open one like it" pressed from the keyboard: once the replay
// mends it, the letter is closed and its buttons are gone, and the focus fell to the page (Tab
// began again at the top; a dismissal already moved it on, `focusAfterDismissal`). It goes to the
// next open letter's Replay as listed (past those the replay closed), else the list; a letter
// still failing keeps its button, and the focus stays on it; a focus put elsewhere meanwhile
// stays. No DOM: React's hooks are replaced (testing/dead-letters.ts), `document` is a fake page.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DeadLetterView } from '../../../core/site/api.ts';
import type { AppStore } from '../store/store.ts';
import { settle } from '../testing/fake-react.ts';
import { deadLettersScreen, letterOf, topic } from './testing/dead-letters.ts';

const holder: { store: AppStore | null } = { store: null };

vi.mock('react', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeReact(await importOriginal(), () => holder.store));
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

const A = { topic: topic('inventory', 'stock'), reason: 'unknown_contract' };
const B = { topic: topic('yard', 'doors'), reason: 'bad_json' };
const replayOf = (id: string) => `tr[data-letter="${id}"] button.replay-alike`;
const LIST = 'section.dead-letters .table-wrap';

/**
 * The screen over a site whose replay of a letter closes `mended` (the rest stay open), and a fake
 * page: what has the focus, and which buttons are on it (those of the open letters as the list
 * last read shows them).
 */
async function screen(before: DeadLetterView[], mended: string[]) {
  let letters = before;
  const api = {
    deadLetters: async () => letters,
    deadLetterGroups: async () => [],
    status: async () => ({ alarms: [], tables: [] }),
    replayDeadLetters: async () => {
      letters = letters.map((l) => (mended.includes(l.id) ? { ...l, status: 'replayed' as const } : l));
      return { replayed: mended.length, failed: 0, notOpen: [], alike: 0 };
    },
  };
  const page = { focused: 'page' as string };
  const onPage = (s: string) => s === LIST || letters.some((l) => l.status === 'open' && (s === replayOf(l.id) || s === `tr[data-letter="${l.id}"] button.dismiss`));
  const el = (s: string) => ({ isConnected: true, focus: () => void (page.focused = s) });
  const body = { isConnected: true };
  vi.stubGlobal('document', {
    body,
    get activeElement() {
      return page.focused === 'page' || !onPage(page.focused) ? body : el(page.focused);
    },
    querySelector: (s: string) => (onPage(s) ? el(s) : null),
  });
  const { tree } = await deadLettersScreen(api, holder);
  const press = async (id: string) => {
    page.focused = replayOf(id);
    const all = tree();
    const row = all.findIndex((r) => r.type === 'tr' && r.props['data-letter'] === id);
    const b = all.slice(row).find((e) => e.type === 'button' && e.props.className === 'replay-alike');
    b!.props.onClick!();
    await settle();
    vi.runAllTimers();
    await settle();
  };
  return { page, press };
}

describe("Dead letters: a letter's replay keeps the focus on the page", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  it('mended, the focus goes to the next open letter\'s Replay, past those the replay closed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const { page, press } = await screen([letterOf('1', A), letterOf('2', A), letterOf('3', B)], ['1', '2']);
    await press('1');
    expect(page.focused).toBe(replayOf('3'));
  });

  it('the last open one mended: the list', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const { page, press } = await screen([letterOf('1', A), letterOf('9', B, 'dismissed')], ['1']);
    await press('1');
    expect(page.focused).toBe(LIST);
  });

  it('still failing: the focus stays on its button', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const { page, press } = await screen([letterOf('1', A), letterOf('3', B)], []);
    await press('1');
    expect(page.focused).toBe(replayOf('1'));
  });
});
