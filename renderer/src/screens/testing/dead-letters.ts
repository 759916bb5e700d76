// Test support for the Dead letters screen tests that call the screen's function without a DOM
// (DeadLettersFilter, DeadLettersFilterFailed, DeadLettersReplayGroup, DeadLettersReplayFocusable):
// a shift lead's store over a fake site, its list read, and the screen's tree. Each test file still
// declares its own vi.mock of react and zustand (hoisted per file; src/testing/fake-react.ts),
// handing them the `holder` it passes here. Only tests import this file (a `testing/` folder:
// scripts/check-imports.mjs `TEST_ONLY`).
import type { DeadLetterView, SiteApi } from '../../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../../store/store.ts';
import { elementsOf } from '../../testing/fake-react.ts';

/** A module's event topic as the demo names it. */
export const topic = (module: string, stream: string): string => `tilstand/demo/events/${module}/${stream}`;

/** An open (or `status`) letter of the group `g`. */
export const letterOf = (id: string, g: { topic: string; reason: string }, status: DeadLetterView['status'] = 'open'): DeadLetterView => ({
  id, reason: g.reason, detail: '', topic: g.topic, payload: '{}', receivedMs: 0, status, dismissed: null,
});

/**
 * The screen as Kari, a shift lead, sees it in English over `api` (the methods a test needs), the
 * store put in `holder` for the faked React and its letters and groups read. `tree` renders it.
 */
export async function deadLettersScreen(api: Partial<Record<keyof SiteApi, unknown>>, holder: { store: AppStore | null }) {
  const store = createAppStore(api as unknown as SiteApi);
  store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en' });
  holder.store = store;
  await store.getState().loadDeadLetters();
  // Imported here, once the test file's mocks are in place (as the tests did themselves).
  const { DeadLetters } = await import('../DeadLetters.tsx');
  const tree = () => elementsOf(DeadLetters());
  /** The button of `className` ("primary": Replay all open, or these open). */
  const button = (className: string) => tree().find((e) => e.type === 'button' && e.props.className === className);
  return { store, tree, button };
}
