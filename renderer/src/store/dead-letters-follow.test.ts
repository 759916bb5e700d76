// The Dead letters screen follows the site as the work queue, stock and tables screens do: a commit
// of dead_letters (a refused event arriving, a replay or dismissal made elsewhere) reads its list
// and its groups again while it shows. It was read only when opened: a letter that came meanwhile
// was not listed, nor its group, though the alarm band counted it.
import { describe, expect, it } from 'vitest';
import type { DeadLetterGroupView, DeadLetterView, SiteApi } from '../../../core/site/api.ts';
import { settle } from '../testing/fake-react.ts';
import { createAppStore } from './store.ts';

const TOPIC = 'tilstand/demo/events/yard/doors';
const letter = (id: string): DeadLetterView => ({ id, reason: 'bad_json', detail: '', topic: TOPIC, payload: '{', receivedMs: 0, status: 'open', dismissed: null });

/** A store on the Dead letters screen over a site holding `held` letters; `asked` what each list read asked for. */
async function onDeadLetters() {
  const held: DeadLetterView[] = [letter('1')];
  const asked: Array<Record<string, unknown>> = [];
  let groupReads = 0;
  const api = {
    deadLetters: async (req: Record<string, unknown>) => (asked.push(req), [...held]),
    deadLetterGroups: async (): Promise<DeadLetterGroupView[]> => (groupReads++, [{ topic: TOPIC, reason: 'bad_json', count: held.length }]),
  } as unknown as SiteApi;
  const store = createAppStore(api);
  store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en' });
  store.getState().go('deadLetters');
  await settle();
  return { store, held, asked, groupReads: () => groupReads };
}

describe('the Dead letters screen follows the site', () => {
  it('reads its list and its groups again when dead_letters commits while it shows', async () => {
    const s = await onDeadLetters();
    expect(s.asked).toHaveLength(1);
    s.held.push(letter('2'));
    s.store.getState().applyEvent({ type: 'tables', tables: ['dead_letters'] });
    await settle();
    expect(s.asked).toHaveLength(2);
    expect(s.groupReads()).toBe(2);
    expect(s.store.getState().deadLetters.map((d) => d.id)).toEqual(['1', '2']);
    expect(s.store.getState().deadLetterGroups).toEqual([{ topic: TOPIC, reason: 'bad_json', count: 2 }]);
  });

  it('reads the chosen group again, not every letter', async () => {
    const s = await onDeadLetters();
    await s.store.getState().filterDeadLetters({ topic: TOPIC, reason: 'bad_json' });
    expect(s.asked).toHaveLength(2);
    s.store.getState().applyEvent({ type: 'tables', tables: ['stock', 'dead_letters'] });
    await settle();
    expect(s.asked).toHaveLength(3);
    expect(s.asked.at(-1)).toEqual({ topic: TOPIC, reason: 'bad_json' });
  });

  it('reads nothing for a commit of another table, nor on another screen', async () => {
    const s = await onDeadLetters();
    s.store.getState().applyEvent({ type: 'tables', tables: ['stock', 'work_queue'] });
    await settle();
    expect(s.asked).toHaveLength(1);
    s.store.setState({ screen: 'stock' });
    s.store.getState().applyEvent({ type: 'tables', tables: ['dead_letters'] });
    await settle();
    expect(s.asked).toHaveLength(1);
  });
});
