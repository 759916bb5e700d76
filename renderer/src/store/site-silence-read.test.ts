// The events socket dead while the site's reads work (a socket half-open after a network blip, a
// proxy that dropped it): no status is pushed, and the header said "No word from the site" until
// the socket's resync, with the Tables and Sync screens' figures standing still. Now, after
// SITE_READ_AFTER_PUSHES of the site's intervals without a status (at least SITE_READ_AFTER_MIN_MS,
// before the marker's 3), `checkSite` reads the status itself, at most one read out at a time and
// one every SITE_READ_EVERY_MS: a site that answers keeps the marker away and its figures current
// (as a push would: the status, the Tables rows' freshness, the sync state); one that does not is
// said quiet as before, its failed reads on no error line (the marker says it). And after the
// page itself did not run (a PC resumed from sleep, a page chromium froze: a check long after the
// last), the marker waits for that read (at most SITE_RESUME_GRACE_MS) instead of flashing on.
import { describe, expect, it } from 'vitest';
import type { SiteApi, SiteStatus, TableFreshness, TableInfo } from '../../../core/site/api.ts';
import { createAppStore, selectErrorLine, selectShownTables, SITE_READ_EVERY_MS } from './store.ts';

const AT = Date.UTC(2026, 11, 6, 8, 0);
const fresh = (ageMs: number): TableFreshness => ({
  table: 'stock', budgetMs: 60_000, decision: 'replenish', confirmedBy: 'ops', ageMs, pendingEvents: 0, lastCommitMs: AT - ageMs, snapshotId: 3, breaches: 0, withinBudget: true, fed: true,
});
const sync = (online: boolean) => ({ configured: true, target: '/hq', online, healthy: online, problems: online ? [] : ['offline'], pendingItems: 0, pendingBytes: 0, recentItems: 0, recentBytes: 0, windowMs: 900_000, lastSuccessMs: AT, oldestUnsyncedMs: null, lastError: null });
const status = (nowMs: number, ageMs: number, online = true) =>
  ({ siteId: 'osl1', nowMs, statusEveryMs: 5_000, alarms: [], tables: [fresh(ageMs)], streams: [], sync: sync(online) }) as unknown as SiteStatus;

/** A signed-in store whose site answers reads as `site.answer` says; `reads` counts the status reads. */
function signedIn() {
  const clock = { mono: 1_000, wall: AT };
  const site = {
    reads: 0,
    out: 0,
    maxOut: 0,
    /** 'ok': the status of now; 'fail': refused at once (no answer); 'hang': never answered until `release`. */
    answer: 'ok' as 'ok' | 'fail' | 'hang',
    held: [] as Array<() => void>,
  };
  const api = {
    status: async () => {
      site.reads++;
      site.out++;
      site.maxOut = Math.max(site.maxOut, site.out);
      try {
        if (site.answer === 'fail') throw Object.assign(new Error('the site did not answer'), { kind: 'internal' });
        if (site.answer === 'hang') await new Promise<void>((r) => site.held.push(r));
        return status(AT + (clock.wall - AT), 1_000, false);
      } finally {
        site.out--;
      }
    },
    tables: async () => [] as TableInfo[],
    // Read again with each status the page reads (the socket's other events are gone too).
    listProposals: async () => [],
  } as unknown as SiteApi;
  const store = createAppStore(api, undefined, { mono: () => clock.mono, wall: () => clock.wall });
  store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en' });
  const settle = () => new Promise((r) => setTimeout(r, 0));
  /** `ms` of the page's time, checked every second as App does. */
  const pass = async (ms: number) => {
    for (let i = 0; i < ms / 1_000; i++) {
      clock.mono += 1_000;
      clock.wall += 1_000;
      store.getState().checkSite();
      await settle();
    }
  };
  return { store, site, clock, pass, settle };
}

describe('the site quiet on the events socket only', () => {
  it('is read, and a site that answers keeps the marker away; its figures come as a push’s would', async () => {
    const { store, site, pass } = signedIn();
    store.getState().applyEvent({ type: 'status', status: status(AT, 1_000) });
    store.setState({ tables: [{ ...fresh(1_000), snapshots: 3, tags: 0, bytes: 10, compactionDebt: 0 }] });
    // The socket dies: no push from here on.
    await pass(9_000);
    expect(site.reads).toBe(0); // pushes may be late: not read yet
    const quietSeen: boolean[] = [];
    for (let i = 0; i < 60; i++) {
      await pass(1_000);
      quietSeen.push(store.getState().siteQuiet !== null);
    }
    expect(quietSeen.every((q) => !q)).toBe(true);
    // One read per 10 s of silence, never more than one out.
    expect(site.reads).toBeGreaterThanOrEqual(6);
    expect(site.reads).toBeLessThanOrEqual(7);
    expect(site.maxOut).toBe(1);
    // The figures as the site read them last: the header's, the Tables rows', the sync state.
    expect(store.getState().status!.nowMs).toBeGreaterThan(AT + 55_000);
    expect(selectShownTables(store.getState())[0]!.ageMs).toBe(1_000);
    expect(store.getState().sync?.online).toBe(false);
    expect(selectErrorLine(store.getState())).toBeNull();
  });

  it('a site that does not answer is said quiet; reads every few seconds, one at a time, their failures on no error line', async () => {
    const { store, site, pass } = signedIn();
    store.getState().applyEvent({ type: 'status', status: status(AT, 1_000) });
    site.answer = 'fail';
    await pass(15_000);
    expect(store.getState().siteQuiet).not.toBeNull();
    const before = site.reads;
    await pass(30_000);
    expect(site.reads - before).toBe(30_000 / SITE_READ_EVERY_MS);
    expect(selectErrorLine(store.getState())).toBeNull();
    // A read that hangs (the site stopped): no second one beside it.
    site.answer = 'hang';
    await pass(30_000);
    expect(site.maxOut).toBe(1);
    expect(site.held).toHaveLength(1);
    expect(store.getState().siteQuiet).not.toBeNull();
    // The site goes on: the read is answered, and the marker is gone.
    site.answer = 'ok';
    site.held.shift()!();
    await pass(1_000);
    expect(store.getState().siteQuiet).toBeNull();
  });

  it('does not flash the marker on after the page did not run (resumed from sleep): the read answers first', async () => {
    const { store, site, clock, settle } = signedIn();
    store.getState().applyEvent({ type: 'status', status: status(AT, 1_000) });
    store.getState().checkSite();
    // Asleep for an hour: no check ran, no push came.
    site.answer = 'hang';
    clock.mono += 3_600_000;
    clock.wall += 3_600_000;
    store.getState().checkSite();
    await settle();
    expect(site.reads).toBe(1);
    expect(store.getState().siteQuiet).toBeNull();
    // The read answers a moment later: the marker never showed.
    clock.mono += 300;
    site.held.shift()!();
    await settle();
    await settle();
    clock.mono += 700;
    store.getState().checkSite();
    expect(store.getState().siteQuiet).toBeNull();
  });

  it('after a resume with the read unanswered for the grace, the marker comes', async () => {
    const { store, site, clock, pass, settle } = signedIn();
    store.getState().applyEvent({ type: 'status', status: status(AT, 1_000) });
    store.getState().checkSite();
    site.answer = 'hang';
    clock.mono += 3_600_000;
    store.getState().checkSite();
    await settle();
    expect(store.getState().siteQuiet).toBeNull();
    await pass(5_000);
    expect(store.getState().siteQuiet).not.toBeNull();
  });

  it('reads before the first status of the session too', async () => {
    const { store, site, pass } = signedIn();
    await pass(10_000);
    expect(site.reads).toBe(1);
    expect(store.getState().status).not.toBeNull();
  });
});
