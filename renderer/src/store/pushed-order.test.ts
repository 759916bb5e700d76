// A pushed status or sync state and a read's reply come by two ways (the events socket, and the
// read's own request): a push the site made before a read it answered can land after the read's
// reply, and put back what the read had just replaced — the dead-letter alarm a dismissal cleared,
// the Sync screen's "offline" after the line came back — until the next push. What the site made
// last is shown, by the time it made it (the status's `nowMs`; a tick pushes its sync state right
// after its status); a state made long before is a site clock stepped back, not a push overtaken.
import { describe, expect, it } from 'vitest';
import type { Alarm, SiteApi, SiteStatus, SyncStatus } from '../../../core/site/api.ts';
import { createAppStore, OVERTAKEN_MS_MAX } from './store.ts';

const AT = Date.UTC(2026, 11, 6, 8, 0);
const LETTERS_ALARM: Alarm = { kind: 'dead_letters', message: 'dead letters waiting for a look: 1', sinceMs: AT - 60_000, params: { n: 1 } };
const sync = (online: boolean): SyncStatus => ({
  configured: true, target: '/hq', online, pendingItems: 0, pendingBytes: 0, oldestUnsyncedMs: null, lastSuccessMs: null, current: null,
  recentItems: 0, recentBytes: 0, windowMs: 900_000, healthy: true, problems: [], lastError: null,
});
/** The site's status as made at `nowMs`: with the dead-letter alarm, or without it. */
const status = (nowMs: number, letters: boolean, online = true): SiteStatus => ({ nowMs, alarms: letters ? [LETTERS_ALARM] : [], deadLetters: letters ? 1 : 0, tables: [], sync: sync(online) }) as unknown as SiteStatus;

/** A signed-in store whose site answers a status read with `site.now`'s status. */
function signedIn() {
  const site = { now: status(AT, false) };
  // syncStatus too: the same sync state, but without the time the site made it.
  const api = { status: async () => site.now, syncStatus: async () => site.now.sync, signOut: async () => ({}) } as unknown as SiteApi;
  const store = createAppStore(api);
  store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en' });
  return { store, site };
}

describe('a pushed status older than the one shown', () => {
  it('does not put back the alarm a read made later had cleared; a newer push is shown', async () => {
    const { store, site } = signedIn();
    // A dismissal's read of the status, made at AT: no letters.
    site.now = status(AT, false);
    await store.getState().loadStatus();
    // The tick before it, pushed at AT - 400 ms and landing after the read's reply.
    store.getState().applyEvent({ type: 'status', status: status(AT - 400, true) });
    expect(store.getState().status?.alarms).toEqual([]);
    store.getState().applyEvent({ type: 'status', status: status(AT + 5_000, true) });
    expect(store.getState().status?.alarms).toEqual([LETTERS_ALARM]);
  });

  it("a read's reply made before a status already pushed is not shown over it", async () => {
    const { store, site } = signedIn();
    store.getState().applyEvent({ type: 'status', status: status(AT, false) });
    site.now = status(AT - 300, true);
    await store.getState().loadStatus();
    expect(store.getState().status?.nowMs).toBe(AT);
    expect(store.getState().status?.alarms).toEqual([]);
  });

  it('is shown when made more than OVERTAKEN_MS_MAX before: the site clock stepped back, pushes go on', () => {
    const { store } = signedIn();
    store.getState().applyEvent({ type: 'status', status: status(AT, false) });
    store.getState().applyEvent({ type: 'status', status: status(AT - OVERTAKEN_MS_MAX - 1, true) });
    expect(store.getState().status?.alarms).toEqual([LETTERS_ALARM]);
    store.getState().applyEvent({ type: 'status', status: status(AT - OVERTAKEN_MS_MAX + 4_000, false) });
    expect(store.getState().status?.alarms).toEqual([]);
  });
});

describe('a pushed sync state older than the one shown', () => {
  it("does not put back the Sync screen's offline after a read found the line back; a newer one is shown", async () => {
    const { store, site } = signedIn();
    site.now = status(AT, false, true);
    await store.getState().loadSync();
    expect(store.getState().sync?.online).toBe(true);
    // The tick before the read: its status, then its sync state, landing after the read's reply.
    store.getState().applyEvent({ type: 'status', status: status(AT - 400, false, false) });
    store.getState().applyEvent({ type: 'sync', sync: sync(false) });
    expect(store.getState().sync?.online).toBe(true);
    store.getState().applyEvent({ type: 'status', status: status(AT + 5_000, false, false) });
    store.getState().applyEvent({ type: 'sync', sync: sync(false) });
    expect(store.getState().sync?.online).toBe(false);
  });

  it("a read's reply made before a sync state already pushed is not shown over it", async () => {
    const { store, site } = signedIn();
    store.getState().applyEvent({ type: 'status', status: status(AT, false, false) });
    store.getState().applyEvent({ type: 'sync', sync: sync(false) });
    site.now = status(AT - 300, false, true);
    await store.getState().loadSync();
    expect(store.getState().sync?.online).toBe(false);
  });

  it('in a new session, the first one pushed is shown: nothing was', async () => {
    const { store, site } = signedIn();
    site.now = status(AT, false, true);
    await store.getState().loadSync();
    await store.getState().signOut();
    store.setState({ user: { name: 'Per', roles: ['operator'] } });
    store.getState().applyEvent({ type: 'status', status: status(AT - 1_000, false, false) });
    store.getState().applyEvent({ type: 'sync', sync: sync(false) });
    expect(store.getState().sync?.online).toBe(false);
  });
});
