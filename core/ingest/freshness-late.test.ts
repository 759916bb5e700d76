// A table's age is how far it is behind what the site has received (DESIGN.md, "Freshness
// budgets"): events held behind a gap and, once ingest has stopped, events journaled and never
// applied count in it; a stream's newest event is dated on the monotonic clock.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TableWriter } from '../lsm/index.ts';
import { Freshness, type TableBudget } from './freshness.ts';
import type { Ingestor } from './ingestor.ts';
import { moduleEvent, seededIngestor, topic } from './test-support/seeded-ingestor.ts';

const T0 = Date.UTC(2026, 11, 5, 8, 0, 0);

const env = seededIngestor({ tmpPrefix: 'tilstand-freshness-late-', t0: T0, defaults: { publishResync: undefined } });
// Registered after the set-up's own afterEach, so it runs before it (vitest runs them as a stack).
afterEach(() => {
  vi.restoreAllMocks();
});
const start = env.start;
const event = (module: string, stream: string, seq: number, after: Record<string, unknown>, contract: string) => moduleEvent(module, stream, seq, after, contract, T0);
const job = (seq: number, id: string) => event('operations', 'jobs', seq, { job_id: id, status: 'released', capability: 'forklift', priority: 5 }, 'operations.jobs');
const inv = (seq: number, item: string, qty: number) => event('inventory', 'stock', seq, { item, location: 'L1', qty }, 'inventory.stock');
const res = (seq: number, item: string, qty: number) => event('commerce', 'reservations', seq, { item, location: 'L1', reserved_qty: qty }, 'commerce.reservations');

const statusOf = (i: Ingestor, table: string) => i.status().find((s) => s.table === table)!;
const budget = (table: string, budgetMs: number): TableBudget => ({ table, budgetMs, decision: 'test', confirmedBy: 'test' });

describe('events held behind a gap count in their tables’ age', () => {
  it('work_queue is over its budget while a job update waits for a missing seq, not only once it is released', async () => {
    const i = start();
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1'));
    i.commitAll();
    const snapshot = statusOf(i, 'work_queue').snapshotId;
    env.now += 1_000;
    await i.accept(topic('operations', 'jobs'), job(3, 'J-1')); // seq 2 lost: held
    expect(statusOf(i, 'work_queue')).toMatchObject({ ageMs: 0, pendingEvents: 0, heldEvents: 1, withinBudget: true });
    env.now += 30_000;
    i.tick();
    expect(statusOf(i, 'work_queue')).toMatchObject({ ageMs: 30_000, heldEvents: 1, withinBudget: true, breaches: 0 });
    // A commit cannot show a held event: the table is not committed for it (at every tick).
    expect(statusOf(i, 'work_queue').snapshotId).toBe(snapshot);
    env.now += 30_001;
    i.tick();
    expect(statusOf(i, 'work_queue')).toMatchObject({ ageMs: 60_001, pendingEvents: 0, heldEvents: 1, withinBudget: false, breaches: 1 });
    expect(i.metrics()).toMatch(/tilstand_ingest_table_age_ms\{site="s1",table="work_queue"\} 60001/);
    expect(i.metrics()).toMatch(/tilstand_ingest_table_held_events\{site="s1",table="work_queue"\} 1/);
    // The other tables are not behind on it.
    expect(statusOf(i, 'resources')).toMatchObject({ ageMs: 0, heldEvents: 0, withinBudget: true });
    expect(statusOf(i, 'stock')).toMatchObject({ ageMs: 0, heldEvents: 0 });
    // The resend releases it: pending from its own receive time, committed at the next tick, one breach in all.
    env.now += 10_000;
    await i.accept(topic('operations', 'jobs'), job(2, 'J-1'));
    expect(statusOf(i, 'work_queue')).toMatchObject({ ageMs: 70_001, pendingEvents: 2, heldEvents: 0 });
    i.tick();
    expect(statusOf(i, 'work_queue')).toMatchObject({ ageMs: 0, pendingEvents: 0, heldEvents: 0, withinBudget: true, breaches: 1 });
  });

  it('counts one breach per wait, however often the table commits other streams’ events meanwhile; a skip releases into the table', async () => {
    const i = start({ budgets: [budget('stock', 60_000)], sequencer: { gap_give_up_ms: 300_000 } });
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 1));
    await i.accept(topic('inventory', 'stock'), inv(3, 'A-1', 3)); // held from T0
    i.commitAll();
    env.now += 1;
    for (let k = 1; k <= 4; k++) {
      env.now += 30_000;
      await i.accept(topic('commerce', 'reservations'), res(k, 'A-1', k));
      env.now += 30_000;
      i.tick(); // commits the reservation (30 s old, half the budget)
      expect(statusOf(i, 'stock'), `round ${k}`).toMatchObject({ pendingEvents: 0, heldEvents: 1, ageMs: k * 60_000 + 1, withinBudget: false, breaches: 1 });
    }
    // Past gap_give_up_ms (5 min): the tick skips seq 2, releases seq 3 into the table and commits it
    // (pending from its receive time, over half the budget).
    env.now += 60_000;
    i.tick();
    expect(statusOf(i, 'stock')).toMatchObject({ heldEvents: 0, pendingEvents: 0, ageMs: 0, withinBudget: true, breaches: 1 });
    // A new wait is a new episode.
    await i.accept(topic('inventory', 'stock'), inv(5, 'A-1', 5));
    env.now += 61_000;
    i.tick();
    expect(statusOf(i, 'stock')).toMatchObject({ heldEvents: 1, withinBudget: false, breaches: 2 });
  });

  it('an event dropped from a full reorder buffer no longer counts (its module resends it); a refused one counts for dead_letters', async () => {
    const i = start({ sequencer: { reorder_buffer_max: 1 } });
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1'));
    i.commitAll();
    await i.accept(topic('operations', 'jobs'), job(5, 'J-5')); // held from T0
    env.now += 10_000;
    await i.accept(topic('operations', 'jobs'), job(3, 'J-3')); // the buffer keeps 3, drops 5
    env.now += 5_000;
    expect(i.health().heldEvents).toBe(1);
    expect(statusOf(i, 'work_queue')).toMatchObject({ heldEvents: 1, ageMs: 5_000 });
    // A contract violation held behind a gap is on its way to dead_letters, not to work_queue.
    const bad = Buffer.from(JSON.stringify({ op: 'u', before: null, after: { job_id: 'J-9', priority: 'high' }, source: { module: 'operations', stream: 'jobs', seq: 9 }, ts_ms: T0, contract: { name: 'operations.jobs', version: 1 } }));
    await i.accept(topic('operations', 'jobs'), job(2, 'J-2')); // releases 3
    await i.accept(topic('operations', 'jobs'), bad); // seq 9, held behind 4
    env.now += 1_000;
    expect(statusOf(i, 'work_queue').heldEvents).toBe(0);
    expect(statusOf(i, 'dead_letters')).toMatchObject({ heldEvents: 1, ageMs: 1_000 });
  });
});

describe("a stream's newest event is dated on the monotonic clock", () => {
  it('a wall clock step forward does not age it, one back does not freeze it; its wall time reads as the clock reads now', async () => {
    let mono = 5_000;
    const i = start({ monotonicClock: () => mono });
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1'));
    expect(i.streamActivity()[0]).toMatchObject({ lastEventMs: T0, lastSeq: 1, clockAheadMs: 0 });
    mono += 2_000;
    env.now += 2_000 + 3_600_000; // 2 s later, and the PC's clock set an hour ahead
    // Received 2 s ago, as the wall clock now reads: a silence of 2 s, not an hour.
    expect(env.now - i.streamActivity()[0]!.lastEventMs!).toBe(2_000);
    expect(i.metrics()).toContain(`tilstand_ingest_stream_last_event_timestamp_seconds{site="s1",module="operations",stream="jobs"} ${(env.now - 2_000) / 1000}`);
    env.now -= 2 * 3_600_000; // and then an hour behind
    mono += 1_000;
    env.now += 1_000;
    await i.accept(topic('operations', 'jobs'), job(2, 'J-2'));
    // The newer event counts though its wall receive time is before the first one's.
    expect(i.streamActivity()[0]).toMatchObject({ lastSeq: 2, lastEventMs: env.now, clockAheadMs: T0 - env.now });
  });
});

describe('once ingest has stopped on an error', () => {
  it('the tables that events journaled since are for grow late from the oldest of them; the others do not', async () => {
    const i = start();
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1'));
    i.commitAll();
    // The next commit fails (an I/O error): ingest stops applying, keeps journaling.
    vi.spyOn(TableWriter.prototype, 'commit').mockImplementationOnce(() => {
      throw new Error('EIO: injected');
    });
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 1));
    expect(() => i.commitAll()).toThrow(/EIO: injected/);
    expect(i.failure()?.message).toMatch(/committing table stock: EIO: injected/);
    env.now += 1_000;
    await i.accept(topic('operations', 'jobs'), job(2, 'J-2')); // journaled, never applied in this run
    await i.accept(topic('operations', 'jobs'), Buffer.from('{not json')); // would be a dead letter
    expect(statusOf(i, 'work_queue')).toMatchObject({ ageMs: 0, pendingEvents: 0, withinBudget: true });
    env.now += 60_001;
    expect(statusOf(i, 'work_queue')).toMatchObject({ ageMs: 60_001, pendingEvents: 0, withinBudget: false, breaches: 1 });
    expect(statusOf(i, 'dead_letters')).toMatchObject({ ageMs: 60_001, withinBudget: false });
    // stock's pending event aged already; resources got nothing and is not behind.
    expect(statusOf(i, 'stock').ageMs).toBe(61_001);
    expect(statusOf(i, 'resources')).toMatchObject({ ageMs: 0, withinBudget: true });
    // A later event does not make it younger.
    await i.accept(topic('operations', 'jobs'), job(3, 'J-3'));
    expect(statusOf(i, 'work_queue').ageMs).toBe(60_001);
  });
});

describe('Freshness', () => {
  it('a held event makes no table due; the oldest held one is found again when it is let go', () => {
    const f = new Freshness(budget('t', 100), null);
    f.hold(7n, 10);
    f.hold(8n, 20);
    f.hold(9n, 30);
    expect(f.ageMs(110)).toBe(100);
    expect(f.due(1_000)).toBe(false);
    f.unhold(7n);
    expect(f.ageMs(110)).toBe(90);
    f.unhold(99n); // not held: nothing changes
    expect(f.heldEvents).toBe(2);
    f.noteWrite(50);
    expect(f.due(99)).toBe(false); // the pending event is 49 ms old, under half the budget
    expect(f.due(100)).toBe(true);
    f.unhold(8n);
    f.unhold(9n);
    expect(f.ageMs(110)).toBe(60);
  });
});
