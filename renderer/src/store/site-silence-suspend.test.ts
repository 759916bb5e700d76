// A floor PC suspended and resumed (Linux): the page's monotonic clock (performance.now, Linux's
// CLOCK_MONOTONIC) stands still while the PC sleeps, the wall clock does not. `checkSite` measured
// the silence since the last status on the monotonic clock alone, so an hour asleep counted as no
// time: no check gap was seen, the status was not read at once, and the ages shown (counted from
// the last status's `nowMs`) read an hour too young until the next push or the read 10 s later —
// with the site gone meanwhile, "No word from the site" came after 15 s more and its ages grew from
// those 15 s, the hour never counted. The wall clock's lead over the monotonic clock between two
// readings, past SITE_CHECK_GAP_MS, is now counted as time the page did not run.
import { describe, expect, it } from 'vitest';
import type { SiteApi, SiteStatus, TableFreshness, TableInfo } from '../../../core/site/api.ts';
import { createAppStore, selectShownNow, selectShownTables, SITE_RESUME_GRACE_MS } from './store.ts';

const AT = Date.UTC(2026, 11, 6, 8, 0);
const HOUR = 3_600_000;
const fresh = (ageMs: number): TableFreshness => ({
  table: 'stock', budgetMs: 60_000, decision: 'replenish', confirmedBy: 'ops', ageMs, pendingEvents: 0, lastCommitMs: AT - ageMs, snapshotId: 3, breaches: 0, withinBudget: true, fed: true,
});
const status = (nowMs: number, ageMs: number) =>
  ({ siteId: 'osl1', nowMs, statusEveryMs: 5_000, alarms: [], tables: [fresh(ageMs)], streams: [], sync: { configured: false } }) as unknown as SiteStatus;

function signedIn() {
  const clock = { mono: 1_000, wall: AT };
  const site = { reads: 0, answer: 'ok' as 'ok' | 'hang' };
  const api = {
    status: async () => {
      site.reads++;
      if (site.answer === 'hang') await new Promise<never>(() => {});
      return status(clock.wall, 1_000);
    },
    tables: async () => [] as TableInfo[],
    listProposals: async () => [],
  } as unknown as SiteApi;
  const store = createAppStore(api, undefined, { mono: () => clock.mono, wall: () => clock.wall });
  store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en' });
  const settle = () => new Promise((r) => setTimeout(r, 0));
  /** `ms` awake, checked every second as App does. */
  const pass = async (ms: number) => {
    for (let i = 0; i < ms / 1_000; i++) {
      clock.mono += 1_000;
      clock.wall += 1_000;
      store.getState().checkSite();
      await settle();
    }
  };
  /** Suspended for `ms`: the wall clock goes on, the monotonic one stands still; the first check after it. */
  const sleep = async (ms: number) => {
    clock.wall += ms;
    await pass(1_000);
  };
  return { store, site, clock, pass, sleep, settle };
}

describe('the page after the PC slept (monotonic clock stood still)', () => {
  it('reads the status at the first check after the resume: the ages are the site’s of now', async () => {
    const { store, site, clock, pass, sleep } = signedIn();
    store.getState().applyEvent({ type: 'status', status: status(AT, 1_000) });
    await pass(2_000);
    expect(site.reads).toBe(0);
    await sleep(HOUR);
    expect(site.reads).toBe(1);
    expect(selectShownNow(store.getState())).toBe(clock.wall);
    expect(store.getState().siteQuiet).toBeNull();
  });

  it('with the site gone meanwhile, the marker comes after the grace and every age counts the hour asleep', async () => {
    const { store, site, pass, sleep } = signedIn();
    store.getState().applyEvent({ type: 'status', status: status(AT, 1_000) });
    store.setState({ tables: [{ ...fresh(1_000), snapshots: 3, tags: 0, bytes: 10, compactionDebt: 0 }] });
    await pass(2_000);
    site.answer = 'hang';
    await sleep(HOUR);
    // The read is out: no marker flashes on before it has had its chance.
    expect(store.getState().siteQuiet).toBeNull();
    await pass(SITE_RESUME_GRACE_MS);
    const quiet = store.getState().siteQuiet;
    expect(quiet).not.toBeNull();
    expect(quiet!.sinceMs).toBe(AT);
    expect(quiet!.forMs).toBeGreaterThanOrEqual(HOUR);
    expect(selectShownNow(store.getState())!).toBeGreaterThanOrEqual(AT + HOUR);
    expect(selectShownTables(store.getState())[0]!.ageMs).toBeGreaterThanOrEqual(HOUR);
  });

  it('a wall clock set back (NTP, by hand) is no sleep: nothing read before its time', async () => {
    const { store, site, clock, pass } = signedIn();
    store.getState().applyEvent({ type: 'status', status: status(AT, 1_000) });
    await pass(2_000);
    clock.wall -= HOUR;
    await pass(5_000);
    expect(site.reads).toBe(0);
    expect(store.getState().siteQuiet).toBeNull();
  });
});
