// Events held behind a missing seq when ingest stops (a resume in place, a restart): every counter
// a user sees means the same after it as without one.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LsmError, TableWriter } from '../lsm/index.ts';
import { Ingestor, type IngestorOptions } from './ingestor.ts';
import { moduleEvent, seededIngestor, topic } from './test-support/seeded-ingestor.ts';

const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);
// Registered before the set-up's own afterEach, so it runs after it (vitest runs them as a stack).
afterEach(() => {
  vi.restoreAllMocks();
});
const env = seededIngestor({
  tmpPrefix: 'tilstand-held-resume-',
  t0: T0,
  defaults: { sequencer: { reorder_window_ms: 1_000, resync_retry_ms: 1_000, gap_give_up_ms: 10_000 } },
});
const options = env.options;
const start = env.start;
const ev = (module: string, stream: string, seq: number, after: Record<string, unknown>, contract: string) => moduleEvent(module, stream, seq, after, contract, T0);
const inv = (seq: number) => ev('inventory', 'stock', seq, { item: `A-${seq}`, location: 'L1', qty: seq }, 'inventory.stock');
const res = (seq: number) => ev('commerce', 'reservations', seq, { item: `A-${seq}`, location: 'L1', reserved_qty: seq }, 'commerce.reservations');

/** Every counter of /metrics (name{labels} → value), the per-stream times left out. */
function counters(i: Ingestor): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of i.metrics().split('\n')) {
    if (line.startsWith('#') || line === '' || line.includes('_timestamp_seconds') || line.includes('clock_ahead') || line.includes('budget_ms') || line.endsWith(' 0')) continue;
    const at = line.lastIndexOf(' ');
    out[line.slice(0, at).replace('tilstand_ingest_', '').replace('site="s1",', '').replace('{site="s1"}', '')] = Number(line.slice(at + 1));
  }
  return out;
}

/** Stock's commit throws (a failing disk) while `on` says so. */
function faultyStock(): { on: boolean } {
  const f = { on: false };
  const real = TableWriter.prototype.commit;
  vi.spyOn(TableWriter.prototype, 'commit').mockImplementation(function (this: TableWriter, ...args: Parameters<TableWriter['commit']>) {
    if (f.on && (this as unknown as { table: { name: string } }).table.name.endsWith('.stock')) throw new LsmError('IOError', 'EIO: injected');
    return real.apply(this, args);
  });
  return f;
}

async function resumeInPlace(old: Ingestor, extra: Partial<IngestorOptions> = {}): Promise<Ingestor> {
  old.releaseStopped();
  const i = await Ingestor.openInSlices(options({ ...extra, carried: old.carryOver() }), { onOpen: () => old.abandon() });
  env.open.push(i);
  return i;
}

const STOCK_1S = [{ table: 'stock', budgetMs: 1_000, decision: 'test', confirmedBy: 'test' }];
const counter = (i: Ingestor, name: string) => counters(i)[name] ?? 0;

describe('events held behind a gap when ingest stops', () => {
  it('held at the stop and released by the resumed Ingestor: each event counted once, and the breach episode goes on', async () => {
    const fault = faultyStock();
    const i = start({ budgets: STOCK_1S });
    await i.accept(topic('inventory', 'stock'), inv(1));
    await i.accept(topic('inventory', 'stock'), inv(3)); // held behind seq 2
    await i.accept(topic('inventory', 'stock'), inv(4)); // held
    await i.accept(topic('commerce', 'reservations'), res(1));
    i.commitAll();
    env.now += 2_000;
    expect(i.status().find((s) => s.table === 'stock')).toMatchObject({ heldEvents: 2, breaches: 1, withinBudget: false });
    fault.on = true;
    await i.accept(topic('commerce', 'reservations'), res(2));
    env.now += 600;
    expect(() => i.tick()).toThrow(/EIO: injected/);
    expect(i.failure()).not.toBeNull();
    await i.accept(topic('commerce', 'reservations'), res(3)); // journaled while stopped
    fault.on = false;
    const j = await resumeInPlace(i, { budgets: STOCK_1S });
    expect(j.health()).toMatchObject({ failure: null, heldEvents: 2 });
    expect(counters(j)).toMatchObject({
      events_accepted_total: 6,
      events_applied_total: 4, // inv 1, res 1..3
      'table_held_events{table="stock"}': 2,
      // Still the episode that began while the events were held before the stop.
      'table_budget_breaches_total{table="stock"}': 1,
    });
    expect(counter(j, 'events_duplicate_total')).toBe(0);
    await j.accept(topic('inventory', 'stock'), inv(2));
    j.commitAll();
    expect(counter(j, 'events_accepted_total')).toBe(7);
    expect(counter(j, 'events_applied_total')).toBe(7);
    expect(counter(j, 'table_budget_breaches_total{table="stock"}')).toBe(1);
    expect(counter(j, 'reorder_held_events')).toBe(0);
    expect(counter(j, 'seq_skipped_total')).toBe(0);
  });

  it('a run a gap skip released before the commit failed is counted once, applied and skipped, when the resumed Ingestor holds and releases it again', async () => {
    const fault = faultyStock();
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1));
    await i.accept(topic('inventory', 'stock'), inv(3));
    await i.accept(topic('inventory', 'stock'), inv(4));
    await i.accept(topic('commerce', 'reservations'), res(1));
    i.commitAll();
    fault.on = true;
    await i.accept(topic('commerce', 'reservations'), res(2));
    env.now += 10_000; // gap_give_up_ms: the skip releases seq 3 and 4, then stock's commit fails
    expect(() => i.tick()).toThrow(/EIO: injected/);
    expect(counters(i)).toMatchObject({ events_applied_total: 5, seq_skipped_total: 1 });
    await i.accept(topic('commerce', 'reservations'), res(3));
    fault.on = false;

    // Stock's snapshot lacks 3 and 4: the resumed Ingestor holds them behind seq 2 again.
    const j = await resumeInPlace(i);
    expect(j.health().heldEvents).toBe(2);
    expect(counters(j)).toMatchObject({ events_accepted_total: 6, events_applied_total: 6, seq_skipped_total: 1 });
    // The gap is given up on again: the same seq, the same events.
    env.now += 10_000;
    j.tick();
    expect(j.health().heldEvents).toBe(0);
    expect(counters(j)).toMatchObject({ events_accepted_total: 6, events_applied_total: 6, seq_skipped_total: 1 });
  });

  it('a run a gap skip released before the commit failed: the missing event that comes after the resume is counted, the run once', async () => {
    const fault = faultyStock();
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1));
    await i.accept(topic('inventory', 'stock'), inv(3));
    await i.accept(topic('inventory', 'stock'), inv(4));
    i.commitAll();
    fault.on = true;
    await i.accept(topic('commerce', 'reservations'), res(1));
    env.now += 10_000;
    expect(() => i.tick()).toThrow(/EIO: injected/);
    fault.on = false;
    const j = await resumeInPlace(i);
    await j.accept(topic('inventory', 'stock'), inv(2)); // releases 2, 3, 4: 2 is new, 3 and 4 were counted
    j.commitAll();
    expect(counters(j)).toMatchObject({ events_accepted_total: 5, events_applied_total: 5, seq_skipped_total: 1 });
  });

  it('a write that fails on the disk while a held run is released: the run counted once after the resume', async () => {
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1));
    await i.accept(topic('inventory', 'stock'), inv(3)); // held
    await i.accept(topic('inventory', 'stock'), inv(4)); // held
    i.commitAll();
    // Stock's write of seq 3's row fails on the disk: seq 2 was applied (and counted), 3 and 4 not.
    let failing = true;
    const real = TableWriter.prototype.writeRecord;
    vi.spyOn(TableWriter.prototype, 'writeRecord').mockImplementation(function (this: TableWriter, ...args: Parameters<TableWriter['writeRecord']>) {
      const row = args[0] as Record<string, unknown>;
      if (failing && row.item === 'A-3') throw new LsmError('IOError', 'ENOSPC: injected');
      return real.apply(this, args);
    });
    await i.accept(topic('inventory', 'stock'), inv(2));
    expect(i.failure()?.message).toMatch(/ENOSPC: injected/);
    expect(counters(i)).toMatchObject({ events_accepted_total: 4, events_applied_total: 2 });
    failing = false;
    const j = await resumeInPlace(i);
    expect(j.health().heldEvents).toBe(0);
    expect(counters(j)).toMatchObject({ events_accepted_total: 4, events_applied_total: 4 });
  });

  it('a binding refusal whose dead letter fails on the disk while a held run is released: the letter counted once after the resume, the event that released the run not counted again', async () => {
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1));
    await i.accept(topic('inventory', 'stock'), inv(3)); // held
    await i.accept(topic('inventory', 'stock'), inv(4)); // held
    i.commitAll();
    // Stock refuses seq 3's row (a binding failure: a dead letter), and dead_letters' write of
    // that letter fails on the disk: seq 2 was applied (and counted), 3 and 4 not.
    let failing = true;
    const real = TableWriter.prototype.writeRecord;
    vi.spyOn(TableWriter.prototype, 'writeRecord').mockImplementation(function (this: TableWriter, ...args: Parameters<TableWriter['writeRecord']>) {
      const row = args[0] as Record<string, unknown>;
      const table = (this as unknown as { table: { name: string } }).table.name;
      if (row.item === 'A-3' && table.endsWith('.stock')) throw new Error('refused: injected');
      if (failing && table.endsWith('.dead_letters')) throw new LsmError('IOError', 'ENOSPC: injected');
      return real.apply(this, args);
    });
    await i.accept(topic('inventory', 'stock'), inv(2));
    expect(i.failure()?.message).toMatch(/ENOSPC: injected/);
    expect(counters(i)).toMatchObject({ events_accepted_total: 4, events_applied_total: 2 });
    expect(counter(i, 'events_rejected_total{reason="unfit_for_table"}')).toBe(0);
    failing = false;
    const j = await resumeInPlace(i);
    expect(j.health()).toMatchObject({ failure: null, heldEvents: 0 });
    expect(counter(j, 'dead_letters_open')).toBe(1);
    expect(counters(j)).toMatchObject({ events_accepted_total: 4, events_applied_total: 3, 'events_rejected_total{reason="unfit_for_table"}': 1 });
  });

  it('a restart with events held: the journal read again counts no duplicates or refusals it counted before, and the held ones once released', async () => {
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1));
    await i.accept(topic('inventory', 'stock'), inv(3)); // held
    await i.accept(topic('inventory', 'stock'), inv(4)); // held
    for (let k = 1; k <= 5; k++) await i.accept(topic('commerce', 'reservations'), res(k));
    await i.accept(topic('commerce', 'reservations'), Buffer.from('{not json'));
    i.commitAll();
    expect(counters(i)).toMatchObject({ events_accepted_total: 9, events_applied_total: 6, 'events_rejected_total{reason="bad_json"}': 1, reorder_held_events: 2 });
    i.close();
    env.open.splice(env.open.indexOf(i), 1);

    // The tables' position stays before the held events: the restart reads the journal from there.
    const j = start();
    expect(j.health()).toMatchObject({ heldEvents: 2, recoveredEvents: 8 });
    expect(counter(j, 'events_duplicate_total')).toBe(0);
    expect(counter(j, 'events_rejected_total{reason="bad_json"}')).toBe(0);
    expect(counter(j, 'events_applied_total')).toBe(0);
    expect(counter(j, 'dead_letters_open')).toBe(1);
    await j.accept(topic('inventory', 'stock'), inv(2));
    await j.accept(topic('commerce', 'reservations'), res(5)); // a real duplicate still counts
    j.commitAll();
    expect(counters(j)).toMatchObject({ events_accepted_total: 2, events_applied_total: 3, events_duplicate_total: 1 });
  });
});

describe('a gap skip across a restart', () => {
  it('the seqs dead_letters records as given up on are not counted again when the restarted Ingestor gives up on them again', async () => {
    const fault = faultyStock();
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1));
    await i.accept(topic('inventory', 'stock'), inv(3));
    await i.accept(topic('inventory', 'stock'), inv(4));
    i.commitAll();
    fault.on = true;
    env.now += 10_000;
    expect(() => i.tick()).toThrow(/EIO: injected/); // dead_letters committed the skip, stock did not
    expect(counters(i)).toMatchObject({ events_applied_total: 3, seq_skipped_total: 1 });
    i.abandon();
    env.open.splice(env.open.indexOf(i), 1);
    fault.on = false;

    const j = start();
    expect(j.health().heldEvents).toBe(2);
    env.now += 10_000;
    j.tick();
    expect(j.health().heldEvents).toBe(0);
    // 3 and 4 are written to stock by this run (it lacks them): applied here; the skip was counted before.
    expect(counter(j, 'seq_skipped_total')).toBe(0);
    expect(counter(j, 'events_applied_total')).toBe(2);
  });

  it('resumes in place one after another: each skipped range is remembered once, not once more at every resume', async () => {
    const fault = faultyStock();
    let i = start();
    await i.accept(topic('inventory', 'stock'), inv(1));
    await i.accept(topic('inventory', 'stock'), inv(3));
    env.now += 10_000;
    i.tick(); // seq 2 given up on, committed everywhere
    i.commitAll();
    const remembered = (x: Ingestor) => (x as unknown as { skippedBefore?: Map<string, unknown[]> }).skippedBefore?.get('inventory/stock')?.length ?? 0;
    for (let n = 0; n < 5; n++) {
      fault.on = true;
      await i.accept(topic('inventory', 'stock'), inv(4 + n));
      env.now += 1_000;
      expect(() => i.commitAll()).toThrow(/EIO: injected/);
      fault.on = false;
      i = await resumeInPlace(i);
      // dead_letters' range, the stopped one's sequencer's (restored from it) and its own list:
      // the same range, kept once (it grew by two at every resume, and was sorted at every skip).
      expect(remembered(i)).toBe(1);
    }
    expect(counters(i)).toMatchObject({ events_accepted_total: 7, events_applied_total: 7, seq_skipped_total: 1 });
  });
});

describe('counters at a start without a carry', () => {
  const jobs = (seq: number) =>
    Buffer.from(JSON.stringify({ op: 'u', before: null, after: { job_id: `J-${seq}`, status: 'released', capability: 'forklift', priority: 5 }, source: { module: 'operations', stream: 'jobs', seq }, ts_ms: T0, contract: { name: 'operations.jobs', version: 1 } }));
  const badInv = (seq: number) => ev('inventory', 'stock', seq, { item: `A-${seq}`, location: 'L1', qty: 'many' }, 'inventory.stock');

  it('a first start counts every event: applied, duplicate, each refusal', async () => {
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1));
    await i.accept(topic('inventory', 'stock'), inv(2));
    await i.accept(topic('inventory', 'stock'), inv(2));
    await i.accept(topic('inventory', 'stock'), badInv(3));
    await i.accept(topic('inventory', 'stock'), Buffer.from('{not json'));
    await i.accept(topic('operations', 'jobs'), jobs(1));
    i.commitAll();
    expect(counters(i)).toMatchObject({
      events_accepted_total: 6,
      events_applied_total: 3,
      events_duplicate_total: 1,
      'events_rejected_total{reason="contract_violation"}': 1,
      'events_rejected_total{reason="bad_json"}': 1,
      dead_letters_open: 2,
    });
    expect(i.streamActivity().map((s) => [s.stream, s.lastEventMs])).toEqual([
      ['stock', T0],
      ['jobs', T0],
    ]);
  });

  it('a restart after a crash with nothing held: the events journaled and never committed count once, applied, duplicate or refused', async () => {
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1));
    await i.accept(topic('commerce', 'reservations'), res(1));
    i.commitAll();
    await i.accept(topic('inventory', 'stock'), inv(2));
    await i.accept(topic('inventory', 'stock'), inv(2)); // a resend: a duplicate of one no table holds
    await i.accept(topic('inventory', 'stock'), badInv(3));
    await i.accept(topic('commerce', 'reservations'), res(2));
    await i.accept(topic('operations', 'jobs'), jobs(1));
    i.abandon(); // the crash: nothing after the commit above is in a table
    env.open.splice(env.open.indexOf(i), 1);
    const j = start();
    expect(j.health()).toMatchObject({ heldEvents: 0, recoveredEvents: 7 });
    expect(counters(j)).toMatchObject({ events_applied_total: 3, events_duplicate_total: 1, 'events_rejected_total{reason="contract_violation"}': 1, dead_letters_open: 1 });
    await j.accept(topic('inventory', 'stock'), inv(4));
    j.commitAll();
    expect(counter(j, 'events_applied_total')).toBe(4);
    // Read again, not received since this open: silence counts from the start (core/site).
    expect(j.streamActivity().find((s) => s.stream === 'reservations')?.lastEventMs).toBeNull();
  });

  it('a restart after a crash that followed a failed commit: the events no table holds count once, applied or refused', async () => {
    const fault = faultyStock();
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1));
    i.commitAll();
    await i.accept(topic('inventory', 'stock'), inv(2));
    await i.accept(topic('inventory', 'stock'), badInv(3));
    await i.accept(topic('inventory', 'stock'), inv(4));
    fault.on = true;
    expect(() => i.commitAll()).toThrow(/EIO: injected/);
    fault.on = false;
    i.abandon();
    env.open.splice(env.open.indexOf(i), 1);
    const j = start();
    expect(counters(j)).toMatchObject({ events_applied_total: 2, 'events_rejected_total{reason="contract_violation"}': 1, dead_letters_open: 1 });
  });
});

describe('each stream’s newest event (the stream_silent alarm) across a stop', () => {
  it('a restart that reads the journal again behind a held event shows no stream’s event as received since the open, as any restart', async () => {
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1));
    await i.accept(topic('inventory', 'stock'), inv(3)); // held: the tables' position stays before it
    await i.accept(topic('commerce', 'reservations'), res(1));
    i.close();
    env.open.splice(env.open.indexOf(i), 1);
    env.now += 3_600_000; // the site was down for an hour
    const j = start();
    expect(j.health().recoveredEvents).toBe(2);
    // Read again, not received since this open: the site counts silence from its start for both.
    expect(j.streamActivity().map((s) => [s.stream, s.lastEventMs])).toEqual([
      ['reservations', null],
      ['stock', null],
    ]);
  });

  it('a resume in place keeps what the stopped Ingestor saw, and what it journaled while stopped counts as received', async () => {
    const fault = faultyStock();
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1));
    await i.accept(topic('commerce', 'reservations'), res(1));
    i.commitAll(); // both committed: the resumed Ingestor does not read them again
    env.now += 60_000;
    fault.on = true;
    await i.accept(topic('operations', 'jobs'), Buffer.from(JSON.stringify({ op: 'u', before: null, after: { job_id: 'J-1', status: 'released', capability: 'forklift', priority: 5 }, source: { module: 'operations', stream: 'jobs', seq: 1 }, ts_ms: env.now, contract: { name: 'operations.jobs', version: 1 } })));
    await i.accept(topic('inventory', 'stock'), inv(2));
    env.now += 1_000;
    expect(() => i.commitAll()).toThrow(/EIO: injected/);
    env.now += 5_000;
    await i.accept(topic('commerce', 'reservations'), res(2)); // while stopped: journaled, and the module is there
    const seen = (x: Ingestor) => Object.fromEntries(x.streamActivity().map((s) => [s.stream, s.lastEventMs]));
    expect(seen(i)).toEqual({ stock: T0 + 60_000, reservations: env.now, jobs: T0 + 60_000 });
    fault.on = false;
    const j = await resumeInPlace(i);
    expect(seen(j)).toEqual({ stock: T0 + 60_000, reservations: env.now, jobs: T0 + 60_000 });
  });
});
