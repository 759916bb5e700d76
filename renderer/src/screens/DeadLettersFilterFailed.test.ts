// The scope the Dead letters screen says (a group pressed, "Only the letters from … listed", its
// Replay) is the scope of the list it shows. A group's list the site did not send (refused, the
// line dropped) left every letter listed under "Only the letters from commerce/orders listed",
// the group pressed and "Replay these open" — for good, until another choice.
//
// No DOM here: React's hooks are replaced by minimal ones (as in DeadLettersFilter.test.ts), the
// screen's function is called and its buttons clicked through their onClick.
import { describe, expect, it, vi } from 'vitest';
import type { DeadLetterGroupView } from '../../../core/site/api.ts';
import type { AppStore } from '../store/store.ts';
import { settle, textOf } from '../testing/fake-react.ts';
import { deadLettersScreen, letterOf as letter, topic } from './testing/dead-letters.ts';

const holder: { store: AppStore | null } = { store: null };

vi.mock('react', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeReact(await importOriginal(), () => holder.store));
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

const GROUPS: DeadLetterGroupView[] = [
  { topic: topic('inventory', 'stock'), reason: 'no_contract', count: 2 },
  { topic: topic('commerce', 'orders'), reason: 'bad_json', count: 1 },
];

/** The screen for a shift lead over a site whose list reads fail while `down` is set. */
async function screen() {
  const site = { down: false };
  const all = [letter('1', GROUPS[0]!), letter('2', GROUPS[0]!), letter('9', GROUPS[1]!)];
  const api = {
    deadLetters: async (req: { topic?: string; reason?: string }) => {
      if (site.down) throw Object.assign(new Error('the site did not answer'), { kind: 'unavailable' });
      return all.filter((d) => (req.topic === undefined || d.topic === req.topic) && (req.reason === undefined || d.reason === req.reason));
    },
    deadLetterGroups: async () => GROUPS,
  };
  const { store, tree } = await deadLettersScreen(api, holder);
  /** What the screen says of the list's scope, and the letters it lists. */
  const said = () => {
    const els = tree();
    return {
      pressed: els.filter((e) => e.type === 'button' && e.props.className === 'source').map((b) => b.props['aria-pressed']),
      filtered: els.filter((e) => e.props.className === 'filtered').map((e) => textOf(e.props.children)),
      replay: textOf(els.find((e) => e.type === 'button' && e.props.className === 'primary')!.props.children),
      letters: els.filter((e) => e.type === 'tr' && e.props['data-letter'] !== undefined).map((e) => e.props['data-letter']),
    };
  };
  const press = async (i: number) => {
    tree().filter((e) => e.type === 'button' && e.props.className === 'source')[i]!.props.onClick!();
    await settle();
  };
  return { store, site, said, press };
}

describe('Dead letters: the scope said is the list shown', () => {
  it('a group whose list did not come: every letter listed, and said so; pressed again, it is asked again', async () => {
    const s = await screen();
    s.site.down = true;
    await s.press(1);
    expect(s.store.getState().error).toMatch(/did not answer/);
    expect(s.said()).toEqual({ pressed: [false, false], filtered: [], replay: 'Replay all open', letters: ['1', '2', '9'] });
    s.site.down = false;
    await s.press(1);
    expect(s.said()).toEqual({ pressed: [false, true], filtered: ['Only the letters from commerce/orders listed (not JSON). Show all'], replay: 'Replay these open', letters: ['9'] });
  });

  it('"Show all" whose list did not come: the group’s letters still listed, and said so', async () => {
    const s = await screen();
    await s.press(1);
    s.site.down = true;
    await s.press(1);
    expect(s.said()).toEqual({ pressed: [false, true], filtered: ['Only the letters from commerce/orders listed (not JSON). Show all'], replay: 'Replay these open', letters: ['9'] });
  });
});
