// The Tables screen's ages against a pushed status that overtook its read. The rows the screen
// reads (`loadTables`, site API `tables`) said no time, so a status the site pushed before that
// read and landing after its reply put its older freshness on them — a table whose events the
// read found applied (age 0, within budget) shown 9 s old and over budget again until the next
// push. The rows now take their freshness from a status read beside them, and a pushed status
// made before it leaves them as they are (as the status and the Sync screen are ordered by the time
// the site made them: pushed-order.test.ts).
import { describe, expect, it } from 'vitest';
import type { SiteApi, SiteStatus, TableFreshness, TableInfo } from '../../../core/site/api.ts';
import { createAppStore, OVERTAKEN_MS_MAX } from './store.ts';

const AT = Date.UTC(2026, 11, 6, 8, 0);
const fresh = (ageMs: number): TableFreshness => ({
  table: 'stock', budgetMs: 5_000, decision: 'replenish', confirmedBy: 'ops', ageMs, pendingEvents: ageMs > 0 ? 3 : 0, lastCommitMs: AT - 9_000, snapshotId: 3, breaches: 1, withinBudget: ageMs <= 5_000,
});
const info = (ageMs: number): TableInfo => ({ ...fresh(ageMs), snapshots: 3, tags: 0, bytes: 10, compactionDebt: 0 });
const status = (nowMs: number, ageMs: number) => ({ nowMs, alarms: [], tables: [fresh(ageMs)] }) as unknown as SiteStatus;

/** A signed-in store on the Tables screen whose site answers with `site.age` at `site.now`. */
function tablesShown() {
  const site = { now: AT, age: 0 };
  const api = {
    tables: async () => [info(site.age)],
    status: async () => status(site.now, site.age),
  } as unknown as SiteApi;
  const store = createAppStore(api);
  store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en', screen: 'tables' });
  return { store, site };
}

describe("the Tables screen's ages", () => {
  it('are not put back by a status pushed before the read and landing after it', async () => {
    const { store, site } = tablesShown();
    // The tick before: 9 s old, over budget (shown).
    store.getState().applyEvent({ type: 'status', status: status(AT - 1_000, 9_000) });
    // The commit's read: applied, age 0.
    site.now = AT;
    site.age = 0;
    await store.getState().loadTables();
    expect(store.getState().tables.map((t) => t.ageMs)).toEqual([0]);
    // A tick made 400 ms before the read, pushed, landing after its reply.
    store.getState().applyEvent({ type: 'status', status: status(AT - 400, 9_400) });
    expect(store.getState().tables.map((t) => [t.ageMs, t.withinBudget])).toEqual([[0, true]]);
    // The next tick, made after the read: followed.
    store.getState().applyEvent({ type: 'status', status: status(AT + 1_000, 6_000) });
    expect(store.getState().tables.map((t) => [t.ageMs, t.withinBudget])).toEqual([[6_000, false]]);
  });

  it('keep a status pushed after the read and landing before its reply', async () => {
    let answer: (() => void) | undefined;
    const api = {
      tables: () => new Promise((resolve) => (answer = () => resolve([info(3_000)]))),
      status: async () => status(AT, 3_000),
    } as unknown as SiteApi;
    const store = createAppStore(api);
    store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en', screen: 'tables', tables: [info(3_000)] });
    const read = store.getState().loadTables();
    store.getState().applyEvent({ type: 'status', status: status(AT + 1_000, 0) });
    answer!();
    await read;
    expect(store.getState().tables.map((t) => t.ageMs)).toEqual([0]);
    // And a push made between the two is still older than the one shown.
    store.getState().applyEvent({ type: 'status', status: status(AT + 500, 3_500) });
    expect(store.getState().tables.map((t) => t.ageMs)).toEqual([0]);
  });

  it('follow a status pushed long before (the site clock stepped back), as the status does', async () => {
    const { store } = tablesShown();
    await store.getState().loadTables();
    store.getState().applyEvent({ type: 'status', status: status(AT - OVERTAKEN_MS_MAX - 1, 7_000) });
    expect(store.getState().tables.map((t) => t.ageMs)).toEqual([7_000]);
  });

  it("keep the read's own when the status beside it is not answered", async () => {
    const failing = createAppStore({ tables: async () => [info(2_000)], status: async () => { throw new Error('line dropped'); } } as unknown as SiteApi);
    failing.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en', screen: 'tables' });
    await failing.getState().loadTables();
    expect(failing.getState().tables.map((t) => t.ageMs)).toEqual([2_000]);
    expect(failing.getState().error).toBeNull();
  });
});
