// The site stopped, or the line to it dropped: no status comes. The header said "● within budget"
// and "Online" and the Tables screen's ages stood still at what the last status said, so a table
// 10 minutes old read as 2 s old. After SITE_QUIET_PUSHES of the site's push intervals
// (`statusEveryMs`, at least SITE_QUIET_MIN_MS) without a status, the store says the site is quiet
// (`siteQuiet`, since when by the page's wall clock) and every age shown grows by the page's
// monotonic clock (`selectShownStatus`, `selectShownTables`); the next status puts all of it back.
import { describe, expect, it } from 'vitest';
import type { SiteApi, SiteStatus, TableFreshness, TableInfo } from '../../../core/site/api.ts';
import { createAppStore, selectShownStatus, selectShownTables, SITE_QUIET_MIN_MS, siteQuietAfterMs } from './store.ts';

const AT = Date.UTC(2026, 11, 6, 8, 0);
const fresh = (table: string, ageMs: number, budgetMs = 5_000, fed = true): TableFreshness => ({
  table, budgetMs, decision: 'replenish', confirmedBy: 'ops', ageMs, pendingEvents: 0, lastCommitMs: AT - ageMs, snapshotId: 3, breaches: 0, withinBudget: ageMs <= budgetMs, fed,
});
const status = (nowMs: number, tables: TableFreshness[], statusEveryMs = 5_000) =>
  ({ siteId: 'osl1', nowMs, statusEveryMs, alarms: [], tables, streams: [], sync: { configured: false } }) as unknown as SiteStatus;

/** A signed-in store on page clocks the test moves (`clock.mono`, `clock.wall`), its site answering `site.status`. */
function signedIn() {
  const clock = { mono: 1_000, wall: AT };
  // `stopped`: the site answers no read either (checkSite reads the status itself after 10 s without
  // one: site-silence-read.test.ts), as the page's fetch, never answered, would.
  const site = { status: status(AT, [fresh('stock', 1_000), fresh('yard', 0, 60_000), fresh('unfed', 0, 5_000, false)]), stopped: false };
  const api = { status: () => (site.stopped ? new Promise<never>(() => {}) : Promise.resolve(site.status)), tables: async () => [] as TableInfo[] } as unknown as SiteApi;
  const store = createAppStore(api, undefined, { mono: () => clock.mono, wall: () => clock.wall });
  store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en' });
  /** `ms` of the page's time, the site stopped, checked every second as App does. */
  const pass = (ms: number) => {
    site.stopped = true;
    for (let i = 0; i < ms / 1_000; i++) {
      clock.mono += 1_000;
      clock.wall += 1_000;
      store.getState().checkSite();
    }
  };
  return { store, site, clock, pass };
}

describe('the site not answering', () => {
  it('waits SITE_QUIET_PUSHES intervals, at least SITE_QUIET_MIN_MS', () => {
    expect(siteQuietAfterMs({ statusEveryMs: 5_000 })).toBe(15_000);
    expect(siteQuietAfterMs({ statusEveryMs: 1_000 })).toBe(SITE_QUIET_MIN_MS);
    expect(siteQuietAfterMs({ statusEveryMs: 20_000 })).toBe(60_000);
    // A status that does not say: the site's default, 5 s.
    expect(siteQuietAfterMs({} as SiteStatus)).toBe(15_000);
  });

  it('is said after 3 intervals without a status, and the ages shown grow from the last status by the page’s clock', async () => {
    const { store, pass } = signedIn();
    await store.getState().loadStatus();
    const sent = store.getState().status!;
    pass(14_000);
    // Not yet: the figures are the site's own, as sent.
    expect(store.getState().siteQuiet).toBeNull();
    expect(selectShownStatus(store.getState())).toBe(sent);
    pass(1_000);
    expect(store.getState().siteQuiet).toEqual({ sinceMs: AT, forMs: 15_000 });
    const shown = selectShownStatus(store.getState())!;
    expect(shown.nowMs).toBe(AT + 15_000);
    expect(shown.tables.map((t) => [t.table, t.ageMs, t.withinBudget])).toEqual([
      ['stock', 16_000, false], // past its 5 s budget: no longer "within budget"
      ['yard', 15_000, true],
      ['unfed', 0, true], // no source: no age to grow
    ]);
    // The same answer for the same state (a selector), a grown one a second later.
    expect(selectShownStatus(store.getState())).toBe(shown);
    pass(1_000);
    expect(selectShownStatus(store.getState())!.tables[0]!.ageMs).toBe(17_000);
    expect(store.getState().siteQuiet).toEqual({ sinceMs: AT, forMs: 16_000 });
    // The status itself stays as the site sent it (the order of what it sends next is judged by it).
    expect(store.getState().status).toBe(sent);
  });

  it('is over with the next status, pushed or read: its figures shown as they are', async () => {
    const { store, site, pass } = signedIn();
    await store.getState().loadStatus();
    pass(20_000);
    expect(store.getState().siteQuiet).not.toBeNull();
    const back = status(AT + 20_000, [fresh('stock', 500)]);
    store.getState().applyEvent({ type: 'status', status: back });
    expect(store.getState().siteQuiet).toBeNull();
    expect(selectShownStatus(store.getState())).toBe(back);
    // Quiet again, then a read answers (the events socket's resync reads the status).
    pass(30_000);
    expect(store.getState().siteQuiet).toEqual({ sinceMs: AT + 20_000, forMs: 30_000 });
    site.status = status(AT + 50_000, [fresh('stock', 200)]);
    site.stopped = false;
    await store.getState().loadStatus();
    expect(store.getState().siteQuiet).toBeNull();
    expect(selectShownStatus(store.getState())!.tables[0]!.ageMs).toBe(200);
  });

  it('follows the interval the status says', async () => {
    const { store, site, pass } = signedIn();
    site.status = status(AT, [fresh('stock', 0)], 10_000);
    await store.getState().loadStatus();
    pass(29_000);
    expect(store.getState().siteQuiet).toBeNull();
    pass(1_000);
    expect(store.getState().siteQuiet?.forMs).toBe(30_000);
  });

  it('grows the Tables screen’s rows too', async () => {
    const { store, pass } = signedIn();
    await store.getState().loadStatus();
    const rows: TableInfo[] = [{ ...fresh('stock', 2_000), snapshots: 3, tags: 0, bytes: 10, compactionDebt: 0 }];
    store.setState({ tables: rows });
    expect(selectShownTables(store.getState())).toBe(rows);
    pass(18_000);
    expect(selectShownTables(store.getState()).map((t) => [t.ageMs, t.withinBudget])).toEqual([[20_000, false]]);
    expect(store.getState().tables).toBe(rows);
  });

  it('is not said before any status, nor after the session ended', async () => {
    const { store, site, pass } = signedIn();
    pass(60_000);
    expect(store.getState().siteQuiet).toBeNull();
    site.stopped = false;
    await store.getState().loadStatus();
    pass(20_000);
    expect(store.getState().siteQuiet).not.toBeNull();
    store.getState().applyEvent({ type: 'status', status: status(AT + 20_000, []) });
    store.setState({ user: null, status: null, siteQuiet: null });
    pass(60_000);
    expect(store.getState().siteQuiet).toBeNull();
  });
});
