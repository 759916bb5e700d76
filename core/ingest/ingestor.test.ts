// The Ingestor on real files (journal.db, Paimon tables, contracts folder) with an injected clock.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Catalog, Table, TableReader, TableWriter, valueToJson } from '../lsm/index.ts';
import type { Binding } from './binding.ts';
import { ContractRegistry, type Contract } from './contracts.ts';
import { DEAD_LETTERS_TABLE, DEAD_LETTERS_TARGET_FILE_SIZE } from './dead-letters.ts';
import { DEAD_LETTER_REASONS } from './envelope.ts';
import { COMPACTION_SLICE_MS, Ingestor, type IngestorOptions } from './ingestor.ts';
import { Journal } from './journal.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { INVENTORY_STOCK, SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES, type TableDefinition } from './seed-tables.ts';
import { parseTableDefinition } from './site-tables.ts';
import { withStockCounts } from './test-support/stock-counts.ts';
import { YARD_BINDING, YARD_CONTRACT, YARD_DOORS } from './test-support/yard-doors.ts';

const SITE = 's1';
const DB = 'site_s1';
const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);

let dir: string;
let journal: Journal;
let contracts: ContractRegistry;
let now: number;
let resyncs: { module: string; stream: string; from: number }[];
const open: Ingestor[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-ingestor-'));
  journal = Journal.open(dir);
  contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
  now = T0;
  resyncs = [];
});

afterEach(() => {
  for (const i of open.splice(0)) i.abandon();
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(extra: Partial<IngestorOptions> = {}): Ingestor {
  const i = Ingestor.open({
    site: SITE,
    catalog: new Catalog(join(dir, 'warehouse')),
    database: DB,
    journal,
    contracts,
    bindings: [...SEED_BINDINGS],
    tables: [...SEED_TABLES],
    budgets: [],
    clock: () => now,
    publishResync: (module, stream, from) => resyncs.push({ module, stream, from }),
    ...extra,
  });
  open.push(i);
  return i;
}

function stop(i: Ingestor): void {
  i.close();
  open.splice(open.indexOf(i), 1);
}

const topic = (module: string, stream: string, site = SITE) => `tilstand/${site}/events/${module}/${stream}`;

function event(
  module: string,
  stream: string,
  seq: number,
  after: Record<string, unknown> | null,
  contract: { name: string; version: number },
  op: 'c' | 'u' | 'd' | 'r' = 'u',
  before: Record<string, unknown> | null = null,
): Buffer {
  return Buffer.from(JSON.stringify({ op, before, after, source: { module, stream, seq }, ts_ms: T0, contract }));
}

const inv = (seq: number, item: string, location: string, qty: number) =>
  event('inventory', 'stock', seq, { item, location, qty }, { name: 'inventory.stock', version: 1 });
const res = (seq: number, item: string, location: string, reserved_qty: number) =>
  event('commerce', 'reservations', seq, { item, location, reserved_qty }, { name: 'commerce.reservations', version: 1 });
const inb = (seq: number, item: string, location: string, inbound_qty: number) =>
  event('procurement', 'inbound', seq, { item, location, inbound_qty }, { name: 'procurement.inbound', version: 1 });
const job = (seq: number, job_id: string, extra: Record<string, unknown> = {}) =>
  event('operations', 'jobs', seq, { job_id, status: 'released', capability: 'forklift', priority: 5, ...extra }, { name: 'operations.jobs', version: 1 });
const resource = (seq: number, resource_id: string, state: string) =>
  event('operations', 'resources', seq, { resource_id, kind: 'machine', capability: 'forklift', state, since: '2026-11-30T08:00:00.000Z' }, { name: 'operations.resources', version: 1 });

/** `n` letters of garbage from inventory's stock stream, committed; their positions. */
async function garbageLetters(i: Ingestor, n: number): Promise<bigint[]> {
  const positions: bigint[] = [];
  for (let k = 0; k < n; k++) positions.push(await i.accept(topic('inventory', 'stock'), Buffer.from(`{not json ${k}`)));
  i.commitAll();
  return positions;
}

/** The committed row of a table, in JSON form, or undefined. */
function row(table: string, pk: Record<string, unknown>): Record<string, unknown> | undefined {
  const t = new Catalog(join(dir, 'warehouse')).getTable({ database: DB, table });
  const r = t.reader();
  try {
    const fields = t.schema.fields;
    const keyed: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(pk)) keyed[k] = typeof v === 'number' && fields.find((f) => f.name === k)!.type.root === 'BIGINT' ? BigInt(v) : v;
    const values = r.get(keyed);
    if (!values) return undefined;
    return Object.fromEntries(fields.map((f, i) => [f.name, valueToJson(f.type, values[i])]));
  } finally {
    r.close();
  }
}

const statusOf = (i: Ingestor, table: string) => i.status().find((s) => s.table === table)!;

describe('Ingestor pipeline', () => {
  it('applies each seed stream to its table; state is visible after the budget-driven commit', async () => {
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 7));
    await i.accept(topic('commerce', 'reservations'), res(1, 'A-1', 'L1', 2));
    await i.accept(topic('procurement', 'inbound'), inb(1, 'A-1', 'L1', 40));
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1', { due_at: '2026-11-30T12:00:00.000Z' }));
    await i.accept(topic('operations', 'resources'), resource(1, 'R-1', 'free'));
    expect(row('stock', { item: 'A-1', location: 'L1' })).toBeUndefined(); // not committed yet
    now += 10 * 60_000;
    i.tick();
    expect(row('stock', { item: 'A-1', location: 'L1' })).toEqual({
      item: 'A-1', location: 'L1', on_hand: 7, inventory_seq: 1, reserved: 2, commerce_seq: 1, inbound: 40, procurement_seq: 1,
    });
    expect(row('work_queue', { job_id: 'J-1' })).toMatchObject({ status: 'released', capability: 'forklift', priority: 5, due_at: '2026-11-30T12:00:00.000', ops_seq: 1 });
    expect(row('resources', { resource_id: 'R-1' })).toMatchObject({ kind: 'machine', state: 'free', ops_seq: 1 });
    expect(i.deadLetterCount()).toBe(0);
    expect(i.metrics()).toMatch(/tilstand_ingest_events_applied_total\{site="s1"\} 5/);
  });

  it('expires a table that has not committed for idleExpireMs without a commit: a quiet table does not keep overdue tags', async () => {
    const i = start({ idleExpireMs: 60_000 });
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 7));
    now += 10 * 60_000;
    i.tick();
    const stock = new Catalog(join(dir, 'warehouse')).getTable({ database: DB, table: 'stock' });
    const snapshot = stock.latestSnapshot()!.id;
    stock.createTag('agent-1', undefined, 1); // overdue a millisecond later
    await new Promise((r) => setTimeout(r, 5));
    now += 30_000;
    i.tick();
    expect(stock.tags.exists('agent-1')).toBe(true); // idle for 30 s only
    now += 31_000;
    i.tick();
    expect(stock.tags.exists('agent-1')).toBe(false);
    expect(stock.latestSnapshot()!.id).toBe(snapshot); // expired, not committed
    // The same after the next commit.
    await i.accept(topic('inventory', 'stock'), inv(2, 'A-1', 'L1', 8));
    now += 10 * 60_000;
    i.tick();
    stock.createTag('agent-2', undefined, 1);
    await new Promise((r) => setTimeout(r, 5));
    now += 59_000;
    i.tick();
    expect(stock.tags.exists('agent-2')).toBe(true);
    now += 2_000;
    i.tick();
    expect(stock.tags.exists('agent-2')).toBe(false);
  });

  it('expires an idle table on the monotonic clock: a wall clock stepped back does not hold it, one stepped forward does not bring it early', async () => {
    let mono = 0;
    const i = start({ monotonicClock: () => mono, idleExpireMs: 60_000 });
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 7));
    now += 10 * 60_000;
    mono += 10 * 60_000;
    i.tick();
    const stock = new Catalog(join(dir, 'warehouse')).getTable({ database: DB, table: 'stock' });
    const snapshot = stock.latestSnapshot()!.id;
    stock.createTag('agent-1', undefined, 1); // overdue a millisecond later
    await new Promise((r) => setTimeout(r, 5));
    now -= 3_600_000; // NTP steps the PC's clock back an hour
    now += 60_000;
    mono += 60_000;
    i.tick();
    expect(stock.tags.exists('agent-1')).toBe(false); // on the wall clock: kept until the hour came round
    stock.createTag('agent-2', undefined, 1);
    await new Promise((r) => setTimeout(r, 5));
    now += 10 * 60_000; // and forward 10 min, a second later
    mono += 1_000;
    i.tick();
    expect(stock.tags.exists('agent-2')).toBe(true); // idle for a second since the last expiry
    now += 59_000;
    mono += 59_000;
    i.tick();
    expect(stock.tags.exists('agent-2')).toBe(false);
    expect(stock.latestSnapshot()!.id).toBe(snapshot); // expired, not committed
  });

  it('stock: three modules write their own column groups without knowing each other', async () => {
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 10));
    await i.accept(topic('commerce', 'reservations'), res(1, 'A-1', 'L1', 3));
    await i.accept(topic('inventory', 'stock'), inv(2, 'A-1', 'L1', 9)); // inventory moves on
    i.commitAll();
    await i.accept(topic('procurement', 'inbound'), inb(1, 'A-1', 'L1', 25));
    await i.accept(topic('commerce', 'reservations'), res(2, 'A-1', 'L1', 4));
    i.commitAll();
    // Each module's latest value survives the others' writes, across commits.
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 9, inventory_seq: 2, reserved: 4, commerce_seq: 2, inbound: 25, procurement_seq: 1 });
    // A delete from commerce retracts only commerce's group.
    await i.accept(topic('commerce', 'reservations'), event('commerce', 'reservations', 3, null, { name: 'commerce.reservations', version: 1 }, 'd', { item: 'A-1', location: 'L1', reserved_qty: 4 }));
    i.commitAll();
    const r = row('stock', { item: 'A-1', location: 'L1' })!;
    expect(r).toMatchObject({ on_hand: 9, inbound: 25 });
    expect(r.reserved).toBeNull();
  });

  it('drops duplicates by (module, stream, seq): a resent or conflicting copy changes nothing', async () => {
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 10));
    await i.accept(topic('inventory', 'stock'), inv(2, 'A-1', 'L1', 11));
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 10)); // resent
    await i.accept(topic('inventory', 'stock'), inv(2, 'A-1', 'L1', 99)); // same seq, other content
    i.commitAll();
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 11, inventory_seq: 2 });
    expect(i.metrics()).toMatch(/tilstand_ingest_events_duplicate_total\{site="s1"\} 2/);
    expect(i.deadLetterCount()).toBe(0);
  });

  it('reports a stream whose events keep coming as duplicates (a module whose sequence went back), not a resend burst', async () => {
    const i = start();
    for (let seq = 1; seq <= 100; seq++) await i.accept(topic('inventory', 'stock'), inv(seq, 'A-1', 'L1', seq));
    // A reconnecting module resends 100 old events at once: a burst, not a stuck stream.
    for (let seq = 1; seq <= 100; seq++) await i.accept(topic('inventory', 'stock'), inv(seq, 'A-1', 'L1', seq));
    now += 3 * 60_000;
    expect(i.stuckStreams()).toEqual([]);
    // The module was restored from a backup: it numbers its new events from 1 again, one every 3 s.
    for (let seq = 1; seq <= 60; seq++) {
      now += 3_000;
      await i.accept(topic('inventory', 'stock'), inv(seq, 'A-1', 'L1', 1000 + seq));
    }
    // One run since the burst (nothing new came between): 160 duplicates over 6 minutes.
    expect(i.stuckStreams()).toEqual([{ module: 'inventory', stream: 'stock', count: 160, firstMs: T0, lastMs: now, spanMs: now - T0, lowSeq: 1, highSeq: 100, issued: 100 }]);
    expect(i.metrics()).toMatch(/tilstand_ingest_streams_only_duplicates\{site="s1"\} 1/);
    // A new event clears it.
    await i.accept(topic('inventory', 'stock'), inv(101, 'A-1', 'L1', 5));
    expect(i.stuckStreams()).toEqual([]);
  });

  it('measures the duplicate windows on the monotonic clock: a wall clock step neither brings a report early nor clears one', async () => {
    let mono = 0;
    const i = start({ monotonicClock: () => mono });
    for (let seq = 1; seq <= 10; seq++) await i.accept(topic('inventory', 'stock'), inv(seq, 'A-1', 'L1', seq));
    // The module was restored: it numbers its events from 1 again, one every 3 s on both clocks.
    const dup = async (seq: number) => {
      now += 3_000;
      mono += 3_000;
      await i.accept(topic('inventory', 'stock'), inv(seq, 'A-1', 'L1', 100 + seq));
    };
    for (let seq = 1; seq <= 10; seq++) await dup(seq);
    now += 2 * 60_000; // NTP steps the wall clock forward 2 minutes
    for (let seq = 1; seq <= 10; seq++) await dup(seq);
    // 20 moments over 57 s: on the wall clock they spanned 2 min 57 s and were reported already.
    expect(i.stuckStreams()).toEqual([]);
    for (let k = 0; k < 21; k++) await dup(1 + (k % 10));
    // 41 duplicates over 2 min 0 s on the monotonic clock; the report's times are wall times.
    expect(i.stuckStreams()).toEqual([{ module: 'inventory', stream: 'stock', count: 41, firstMs: T0 + 3_000, lastMs: now, spanMs: 120_000, lowSeq: 1, highSeq: 10, issued: 10 }]);
    // A step forward of 31 minutes: on the wall clock the duplicates looked quiet for quietMs (30
    // min) and the report was cleared while they kept coming.
    now += 31 * 60_000;
    expect(i.stuckStreams()).toHaveLength(1);
    expect(i.stuckStreams(now)).toHaveLength(1);
    expect(i.metrics()).toMatch(/tilstand_ingest_streams_only_duplicates\{site="s1"\} 1/);
    // Quiet for 30 minutes on the monotonic clock: cleared.
    mono += 30 * 60_000;
    expect(i.stuckStreams()).toEqual([]);
  });

  it('holds a gap in the reorder window, asks for a resync after it, and applies in seq order once filled', async () => {
    const i = start({ sequencer: { reorder_window_ms: 2_000, resync_retry_ms: 10_000 } });
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 1));
    await i.accept(topic('inventory', 'stock'), inv(3, 'A-1', 'L1', 3));
    await i.accept(topic('inventory', 'stock'), inv(4, 'A-1', 'L1', 4));
    expect(i.health().heldEvents).toBe(2);
    now += 1_999;
    i.tick();
    expect(resyncs).toEqual([]);
    now += 1;
    i.tick();
    expect(resyncs).toEqual([{ module: 'inventory', stream: 'stock', from: 2 }]);
    // What status shows of it: seq 2 missing since the held events came, skipped at give-up (default 5 min).
    expect(i.streamActivity()[0]).toMatchObject({ lastSeq: 4, appliedSeq: 1, gap: { from: 2, to: 2, sinceMs: now - 2_000, skipAtMs: now - 2_000 + 300_000 } });
    i.commitAll();
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 1, inventory_seq: 1 }); // 3 and 4 wait
    await i.accept(topic('inventory', 'stock'), inv(2, 'A-1', 'L1', 2)); // the resent event
    expect(i.health().heldEvents).toBe(0);
    expect(i.streamActivity()[0]).toMatchObject({ appliedSeq: 4, gap: null });
    i.commitAll();
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 4, inventory_seq: 4 });
  });

  it('an event of a bound stream refused for its envelope consumes its seq when the seq reads: no gap, no resync, one letter, across a crash', async () => {
    // ts_ms as text: a bad_envelope whose source.seq is fine. Unsequenced, it left a gap at seq 2
    // that no resend could close (the resend is refused the same way, one more letter each
    // resync): the stream stood still until gap_give_up_ms.
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 1));
    const bad = Buffer.from(JSON.stringify({ op: 'u', before: null, after: { item: 'A-1', location: 'L1', qty: 2 }, source: { module: 'inventory', stream: 'stock', seq: 2 }, ts_ms: 'now', contract: { name: 'inventory.stock', version: 1 } }));
    const p = await i.accept(topic('inventory', 'stock'), bad);
    await i.accept(topic('inventory', 'stock'), inv(3, 'A-1', 'L1', 3));
    expect(i.health().heldEvents).toBe(0);
    now += 60_000;
    i.tick();
    expect(resyncs).toEqual([]);
    await i.accept(topic('inventory', 'stock'), bad); // a resend: a duplicate, not a second letter
    i.commitAll();
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 3, inventory_seq: 3 });
    expect(i.listDeadLetters().map((d) => [d.position, d.reason, d.path, d.seq])).toEqual([[p, 'bad_envelope', 'ts_ms', 2]]);
    i.abandon();
    open.length = 0;
    const j = start();
    expect(j.listDeadLetters().map((d) => [d.position, d.seq])).toEqual([[p, 2]]);
    expect(j.deadLetterCount()).toBe(1);
    // A seq that does not read, or a source naming another stream, leaves the event unsequenced.
    const noSeq = await j.accept(topic('inventory', 'stock'), Buffer.from(JSON.stringify({ op: 'u', before: null, after: null, source: { module: 'inventory', stream: 'stock', seq: 'x' }, ts_ms: 1, contract: { name: 'inventory.stock', version: 1 } })));
    const other = await j.accept(topic('inventory', 'stock'), Buffer.from(JSON.stringify({ op: 'x', before: null, after: null, source: { module: 'inventory', stream: 'other', seq: 4 }, ts_ms: 1, contract: { name: 'inventory.stock', version: 1 } })));
    await j.accept(topic('inventory', 'stock'), inv(4, 'A-1', 'L1', 4));
    j.commitAll();
    expect(j.listDeadLetters().map((d) => [d.position, d.reason, d.seq])).toEqual([[p, 'bad_envelope', 2], [noSeq, 'bad_envelope', null], [other, 'bad_envelope', null]]);
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 4, inventory_seq: 4 });
  });

  it('an event of a bound stream refused as unsafe JSON consumes its seq when the seq reads', async () => {
    // A lone surrogate in a value (a connector that cut a string inside a character): as above.
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 1));
    const bad = Buffer.from(`{"op":"u","before":null,"after":{"item":"A-\\ud83d","location":"L1","qty":2},"source":{"module":"inventory","stream":"stock","seq":2},"ts_ms":1,"contract":{"name":"inventory.stock","version":1}}`);
    const p = await i.accept(topic('inventory', 'stock'), bad);
    await i.accept(topic('inventory', 'stock'), inv(3, 'A-1', 'L1', 3));
    expect(i.health().heldEvents).toBe(0);
    i.commitAll();
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 3, inventory_seq: 3 });
    expect(i.listDeadLetters().map((d) => [d.position, d.reason, d.path, d.seq])).toEqual([[p, 'unsafe_json', 'after.item', 2]]);
  });

  it('bounds the reorder buffer by bytes too (reorder_buffer_bytes_max): large held events overflow as the count bound does, a resync at once', async () => {
    const big = (seq: number) => inv(seq, `A-${seq}-${'x'.repeat(1_000)}`, 'L1', seq);
    expect(big(3).length).toBeGreaterThan(1_000);
    const i = start({ sequencer: { reorder_buffer_bytes_max: 2 * big(3).length + 10 } });
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 1));
    await i.accept(topic('inventory', 'stock'), big(3));
    await i.accept(topic('inventory', 'stock'), big(4));
    expect(i.health().heldEvents).toBe(2);
    expect(resyncs).toEqual([]);
    expect(i.metrics()).toMatch(/\ntilstand_ingest_reorder_overflow_drops_total\{site="s1"\} 0\n/);
    // Far below reorder_buffer_max (1,024 events): the bytes decide.
    await i.accept(topic('inventory', 'stock'), big(5));
    expect(resyncs).toEqual([{ module: 'inventory', stream: 'stock', from: 2 }]);
    expect(i.health().heldEvents).toBe(2);
    expect(i.metrics()).toMatch(/tilstand_ingest_resync_requests_total\{site="s1"\} 1/);
    // The dropped event (5) counts, so an operator sees the buffer bound cut in (and can raise it).
    expect(i.metrics()).toMatch(/\n# TYPE tilstand_ingest_reorder_overflow_drops_total counter\ntilstand_ingest_reorder_overflow_drops_total\{site="s1"\} 1\n/);
    // The resend from 2 fills the gap; the dropped 5 comes again with it.
    for (const seq of [2, 3, 4, 5]) await i.accept(topic('inventory', 'stock'), seq === 2 ? inv(2, 'A-1', 'L1', 2) : big(seq));
    expect(i.health().heldEvents).toBe(0);
    expect(i.streamActivity()[0]).toMatchObject({ appliedSeq: 5, gap: null });
    expect(() => start({ sequencer: { reorder_buffer_bytes_max: 0 } })).toThrow('reorder_buffer_bytes_max: expected an integer ≥ 1, got 0');
  });

  it('a wall clock stepped forward 10 minutes skips no gap: it ages on the monotonic clock, and the resend fills it', async () => {
    let mono = 0;
    const i = start({ monotonicClock: () => mono });
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 1));
    await i.accept(topic('inventory', 'stock'), inv(3, 'A-1', 'L1', 3));
    now += 10 * 60_000; // NTP steps the PC's clock forward 10 min, a second after seq 3 came
    mono += 1_000;
    i.tick();
    // Aged on the wall clock, the gap was 10 min old: skipped past gap_give_up_ms (5 min), seq 3
    // released, and the resend of seq 2 below dropped as a duplicate for good.
    expect(i.health().heldEvents).toBe(1);
    expect(i.metrics()).toMatch(/tilstand_ingest_seq_skipped_total\{site="s1"\} 0/);
    // Status shows the gap in epoch ms (the stepped wall clock): open for a second, skipped 5 min on.
    expect(i.streamActivity()[0]).toMatchObject({ appliedSeq: 1, gap: { from: 2, to: 2, sinceMs: now - 1_000, skipAtMs: now - 1_000 + 300_000 } });
    now += 1_000;
    mono += 1_000;
    i.tick();
    expect(resyncs).toEqual([{ module: 'inventory', stream: 'stock', from: 2 }]); // at reorder_window_ms (2 s)
    await i.accept(topic('inventory', 'stock'), inv(2, 'A-1', 'L1', 2)); // the module's resend
    expect(i.health().heldEvents).toBe(0);
    i.commitAll();
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 3, inventory_seq: 3 });
    // A gap that stays open is still skipped at gap_give_up_ms, on the monotonic clock.
    await i.accept(topic('inventory', 'stock'), inv(5, 'A-1', 'L1', 5));
    mono += 300_000 - 1;
    i.tick();
    expect(i.health().heldEvents).toBe(1);
    mono += 1;
    i.tick();
    expect(i.health().heldEvents).toBe(0);
    expect(i.metrics()).toMatch(/tilstand_ingest_seq_skipped_total\{site="s1"\} 1/);
  });

  it('enriches from the current COMMITTED row of another table', async () => {
    const JOB_VIEW: TableDefinition = {
      name: 'job_view',
      fields: [
        { id: 0, name: 'job_id', type: 'STRING NOT NULL' },
        { id: 1, name: 'resource_id', type: 'STRING' },
        { id: 2, name: 'resource_state', type: 'STRING' },
      ],
      partitionKeys: [],
      primaryKeys: ['job_id'],
      options: { bucket: '1', 'merge-engine': 'deduplicate' },
    };
    const JOBS_TO_VIEW: Binding = {
      name: 'jobs→job_view',
      topic: 'tilstand/+/events/operations/jobs',
      contract: 'operations.jobs',
      table: 'job_view',
      columns: { job_id: 'after.job_id', resource_id: 'after.assigned_resource' },
      enrich: { table: 'resources', key: { resource_id: 'after.assigned_resource' }, columns: { resource_state: 'state' } },
    };
    const i = start({
      tables: [...SEED_TABLES, JOB_VIEW],
      bindings: [...SEED_BINDINGS, JOBS_TO_VIEW],
      budgets: [{ table: 'job_view', budgetMs: 60_000, decision: 'test view', confirmedBy: 'test' }],
    });
    await i.accept(topic('operations', 'resources'), resource(1, 'R-1', 'free'));
    await i.accept(topic('operations', 'jobs'), job(1, 'J-0', { assigned_resource: 'R-1' })); // R-1 not committed yet
    i.commitAll();
    await i.accept(topic('operations', 'jobs'), job(2, 'J-1', { assigned_resource: 'R-1' }));
    await i.accept(topic('operations', 'resources'), resource(2, 'R-1', 'busy')); // written, not committed
    await i.accept(topic('operations', 'jobs'), job(3, 'J-2', { assigned_resource: 'R-1' }));
    i.commitAll();
    await i.accept(topic('operations', 'jobs'), job(4, 'J-3', { assigned_resource: 'R-1' }));
    i.commitAll();
    expect(row('job_view', { job_id: 'J-0' })).toEqual({ job_id: 'J-0', resource_id: 'R-1', resource_state: null });
    expect(row('job_view', { job_id: 'J-1' })).toMatchObject({ resource_state: 'free' });
    expect(row('job_view', { job_id: 'J-2' })).toMatchObject({ resource_state: 'free' }); // 'busy' was not committed
    expect(row('job_view', { job_id: 'J-3' })).toMatchObject({ resource_state: 'busy' }); // reader refreshed after commit
    expect(row('work_queue', { job_id: 'J-3' })).toMatchObject({ assigned_resource: 'R-1' }); // both bindings ran
  });
});

describe('Ingestor dead letters', () => {
  const TINY: TableDefinition = {
    name: 'tiny',
    fields: [
      { id: 0, name: 'item', type: 'STRING NOT NULL' },
      { id: 1, name: 'qty', type: 'TINYINT' },
    ],
    partitionKeys: [],
    primaryKeys: ['item'],
    options: { bucket: '1', 'merge-engine': 'deduplicate' },
  };
  const TO_TINY: Binding = { name: 'inventory.tiny→tiny', topic: 'tilstand/+/events/inventory/tiny', contract: 'inventory.stock', table: 'tiny', columns: { item: 'after.item', qty: 'after.qty' } };
  const WRONG: Binding = { name: 'wrong-contract', topic: 'tilstand/+/events/inventory/odd', contract: 'inventory.stock', table: 'tiny', columns: { item: 'after.item', qty: 'after.qty' } };

  it('records every reason of the closed set, keeps ingesting, lists them, and replays after the contract is registered', async () => {
    const i = start({
      limits: { payload_bytes_max: 400 },
      tables: [...SEED_TABLES, TINY],
      bindings: [...SEED_BINDINGS, TO_TINY, WRONG],
      budgets: [{ table: 'tiny', budgetMs: 60_000, decision: 'test', confirmedBy: 'test' }],
    });
    const t = topic('inventory', 'stock');
    const cases: [string, string, Buffer][] = [
      ['too_large', t, Buffer.from(JSON.stringify({ pad: 'x'.repeat(500) }))],
      ['bad_json', t, Buffer.from('{"op": "u",')],
      ['unsafe_json', t, Buffer.from('{"op":"u","__proto__":{"x":1}}')],
      ['bad_envelope', t, Buffer.from(JSON.stringify({ op: 'u', before: null, after: {}, source: { module: 'inventory', stream: 'stock' }, ts_ms: 1, contract: { name: 'inventory.stock', version: 1 } }))],
      ['topic_mismatch', topic('inventory', 'stock', 'other-site'), inv(1, 'A-1', 'L1', 1)],
      ['no_contract', t, event('inventory', 'stock', 1, { item: 'A-1', location: 'L1', qty: 5, note: 'hi' }, { name: 'inventory.stock', version: 2 })],
      ['contract_violation', t, event('inventory', 'stock', 2, { item: 'A-1', location: 'L1', qty: 'five' }, { name: 'inventory.stock', version: 1 })],
      ['no_binding', topic('inventory', 'moves'), event('inventory', 'moves', 1, { item: 'A-1', location: 'L1', qty: 1 }, { name: 'inventory.stock', version: 1 })],
      ['binding_error', topic('inventory', 'odd'), event('inventory', 'odd', 1, { item: 'A-1', location: 'L1', reserved_qty: 1 }, { name: 'commerce.reservations', version: 1 })],
      ['unfit_for_table', topic('inventory', 'tiny'), event('inventory', 'tiny', 1, { item: 'A-1', location: 'L1', qty: 1000 }, { name: 'inventory.stock', version: 1 })],
    ];
    // `late_after_gap` needs a gap skipped first: late-after-gap.test.ts; `seq_far_ahead` a stream
    // that went on below a held event for 15 min: seq-far-ahead.test.ts.
    expect(cases.map((c) => c[0]).sort()).toEqual(DEAD_LETTER_REASONS.filter((r) => r !== 'late_after_gap' && r !== 'seq_far_ahead').sort());
    const positions: bigint[] = [];
    for (const [, tp, payload] of cases) positions.push(await i.accept(tp, payload));
    await i.accept(t, inv(3, 'A-1', 'L1', 8)); // a good event right after: ingest goes on (seq 1 and 2 were consumed)
    i.commitAll();
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 8, inventory_seq: 3 });

    expect(i.deadLetterCount()).toBe(cases.length);
    const letters = i.listDeadLetters();
    expect(letters.map((d) => d.reason)).toEqual(cases.map((c) => c[0]));
    expect(letters.map((d) => d.position)).toEqual(positions);
    letters.forEach((d, k) => {
      expect(d.status).toBe('open');
      expect(d.topic).toBe(cases[k]![1]);
      expect(d.payload.equals(cases[k]![2])).toBe(true);
      expect(d.receivedAtMs).toBe(T0);
      expect(d.detail.length).toBeGreaterThan(0);
    });
    expect(letters.find((d) => d.reason === 'contract_violation')).toMatchObject({ path: 'after.qty', seq: 2, module: 'inventory', stream: 'stock' });
    expect(letters.find((d) => d.reason === 'unfit_for_table')!.bindings).toEqual(['inventory.tiny→tiny']);
    expect(i.listDeadLetters({ limit: 3 })).toHaveLength(3);
    expect(i.metrics()).toMatch(/tilstand_ingest_events_rejected_total\{site="s1",reason="no_contract"\} 1/);
    expect(i.metrics()).toMatch(/tilstand_ingest_dead_letters_open\{site="s1"\} 10/);

    // Register v2 (adds a field with a default: FULL_TRANSITIVE holds) and replay.
    const v2: Contract = { ...INVENTORY_STOCK, version: 2, fields: [...INVENTORY_STOCK.fields, { name: 'note', type: 'STRING', default: null }] };
    contracts.register(v2);
    const noContract = letters.find((d) => d.reason === 'no_contract')!.position;
    const violation = letters.find((d) => d.reason === 'contract_violation')!.position;
    expect(await i.replayDeadLetters([noContract, violation])).toEqual({ replayed: 1, failed: 1, notOpen: [], alike: 0 });
    // The replayed event (seq 1) is older than seq 3 in inventory's sequence group: it cannot go back in time.
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 8, inventory_seq: 3 });
    expect(i.deadLetterCount()).toBe(cases.length - 1);
    expect(i.listDeadLetters({ status: 'replayed' }).map((d) => d.position)).toEqual([noContract]);
    expect(i.listDeadLetters({ status: 'replayed' })[0]!.replayedAtMs).toBe(T0);

    // A new key shows the replay writes rows: route a no_contract event for another item, then replay it.
    const p = await i.accept(t, event('inventory', 'stock', 4, { item: 'B-2', location: 'L1', qty: 6, note: null }, { name: 'inventory.stock', version: 3 }));
    expect(i.listDeadLetters({ status: 'open' }).find((d) => d.position === p)!.reason).toBe('no_contract');
    contracts.register({ ...v2, version: 3 });
    expect(await i.replayDeadLetters([p])).toEqual({ replayed: 1, failed: 0, notOpen: [], alike: 0 });
    // Asked again (now replayed) and for a position that never was a dead letter: named back.
    expect(await i.replayDeadLetters([p, 999_999n])).toEqual({ replayed: 0, failed: 0, notOpen: [String(p), '999999'], alike: 0 });
    expect(row('stock', { item: 'B-2', location: 'L1' })).toMatchObject({ on_hand: 6, inventory_seq: 4 });

    // Dead letters survive a restart with their status.
    stop(i);
    const j = start({ limits: { payload_bytes_max: 400 }, tables: [...SEED_TABLES, TINY], bindings: [...SEED_BINDINGS, TO_TINY, WRONG], budgets: [{ table: 'tiny', budgetMs: 60_000, decision: 'test', confirmedBy: 'test' }] });
    expect(j.deadLetterCount()).toBe(cases.length - 1);
    expect(j.listDeadLetters({ status: 'replayed' }).map((d) => d.position)).toEqual([noContract, p]);
  });
});

describe("Ingestor: a table made at a start and the dead letters of the events it reads from the journal", () => {
  // A new module went live before the site had a table for it: its events wait as no_binding
  // letters. The start that makes the table and its binding reads the journal into it; the
  // letters of the events it applied are closed as replayed, not left open for a replay to find
  // nothing to do.
  const YARD = parseTableDefinition(YARD_DOORS, 'tables[5]')!;
  const withYard = (): Partial<IngestorOptions> => ({
    tables: [...SEED_TABLES, YARD],
    bindings: [...SEED_BINDINGS, YARD_BINDING],
    budgets: [{ table: 'yard_doors', budgetMs: 30_000, decision: 'test', confirmedBy: 'test' }],
  });
  const door = (seq: number, door_id: string, state: string) => event('yard', 'doors', seq, { door_id, state }, { name: 'yard.doors', version: 1 });

  beforeEach(() => contracts.register(YARD_CONTRACT));

  it('closes the letters of the events the journal read applied, as replayed at that start; for good', async () => {
    const i = start();
    const p1 = await i.accept(topic('yard', 'doors'), door(1, 'D-01', 'free'));
    const p2 = await i.accept(topic('yard', 'doors'), door(2, 'D-02', 'down'));
    const bad = await i.accept(topic('yard', 'doors'), Buffer.from('{"op":'));
    stop(i);
    now = T0 + 60_000;
    const j = start(withYard());
    expect(row('yard_doors', { door_id: 'D-02' })).toMatchObject({ state: 'down', yard_seq: 2 });
    expect(j.listDeadLetters({ status: 'replayed' }).map((d) => [d.position, d.reason, d.replayedAtMs])).toEqual([
      [p1, 'no_binding', T0 + 60_000],
      [p2, 'no_binding', T0 + 60_000],
    ]);
    // Malformed then, malformed now: still open.
    expect(j.listDeadLetters({ status: 'open' }).map((d) => [d.position, d.reason])).toEqual([[bad, 'bad_json']]);
    expect(j.deadLetterCount()).toBe(1);
    expect(j.health().lettersClosedAtOpen).toBe(2);
    expect(j.metrics()).toMatch(/tilstand_ingest_dead_letters_open\{site="s1"\} 1\n/);
    expect(await j.replayDeadLetters()).toMatchObject({ replayed: 0, failed: 1 });
    stop(j);
    const k = start(withYard());
    expect(k.health().lettersClosedAtOpen).toBe(0);
    expect(k.listDeadLetters({ status: 'replayed' }).map((d) => d.position)).toEqual([p1, p2]);
    expect(k.deadLetterCount()).toBe(1);
  });

  it('leaves open a letter whose event a table holding it already skips: only a replay brings it there', async () => {
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 5));
    // A contract version the site lacks: refused whole; stock commits past its position.
    const p = await i.accept(topic('inventory', 'stock'), event('inventory', 'stock', 2, { item: 'B-2', location: 'L1', qty: 6, note: null }, { name: 'inventory.stock', version: 2 }));
    await i.accept(topic('inventory', 'stock'), inv(3, 'A-1', 'L1', 7));
    stop(i);
    contracts.register({ ...INVENTORY_STOCK, version: 2, fields: [...INVENTORY_STOCK.fields, { name: 'note', type: 'STRING', default: null }] });
    // A second table bound to the same stream is made at this start: the journal is read into it
    // from the first event, and stock, which holds those positions, skips them. The letter's
    // event reaches the new table and not stock, so it stays open.
    const j = start(withStockCounts());
    expect(row('stock_counts', { item: 'B-2', location: 'L1' })).toMatchObject({ qty: 6, count_seq: 2 });
    expect(row('stock', { item: 'B-2', location: 'L1' })).toBeUndefined();
    expect(j.health().lettersClosedAtOpen).toBe(0);
    expect(j.listDeadLetters({ status: 'open' }).map((d) => [d.position, d.reason])).toEqual([[p, 'no_contract']]);
    expect(await j.replayDeadLetters([p])).toMatchObject({ replayed: 1, failed: 0 });
    expect(row('stock', { item: 'B-2', location: 'L1' })).toMatchObject({ on_hand: 6 });
  });

  it('a table made after the journal was pruned starts where the journal starts: its stream holds for no seq the journal lost', async () => {
    const i = start();
    for (let s = 1; s <= 3; s++) await i.accept(topic('inventory', 'stock'), inv(s, 'A-1', 'L1', s));
    stop(i);
    expect(await journal.prune({ maxBytes: 0, keepAfter: journal.getCheckpoint('ingest')! })).toEqual({ deletedRows: 3 });
    const k = start();
    await k.accept(topic('inventory', 'stock'), inv(4, 'B-2', 'L1', 40));
    await k.accept(topic('inventory', 'stock'), inv(5, 'C-3', 'L1', 50));
    stop(k);
    // The journal holds seq 4 and 5 of the stream; 1–3 are gone, and no resend brings them
    // (the module's outbox keeps 10,000 acknowledged events a stream). The new table gets what
    // the journal has, and stock goes on.
    const j = start(withStockCounts());
    expect(row('stock_counts', { item: 'B-2', location: 'L1' })).toMatchObject({ qty: 40, count_seq: 4 });
    expect(row('stock_counts', { item: 'C-3', location: 'L1' })).toMatchObject({ qty: 50, count_seq: 5 });
    expect(row('stock_counts', { item: 'A-1', location: 'L1' })).toBeUndefined();
    await j.accept(topic('inventory', 'stock'), inv(6, 'A-1', 'L1', 60));
    j.commitAll();
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 60 });
    expect(row('stock_counts', { item: 'A-1', location: 'L1' })).toMatchObject({ qty: 60, count_seq: 6 });
    expect(['stock', 'stock_counts'].map((t) => statusOf(j, t).heldEvents)).toEqual([0, 0]);
  });

  it('a table made when the journal holds none of its stream starts at the stream\'s position', async () => {
    const i = start();
    for (let s = 1; s <= 3; s++) await i.accept(topic('inventory', 'stock'), inv(s, 'A-1', 'L1', s));
    stop(i);
    await journal.prune({ maxBytes: 0, keepAfter: journal.getCheckpoint('ingest')! });
    const j = start(withStockCounts());
    await j.accept(topic('inventory', 'stock'), inv(4, 'A-1', 'L1', 40));
    j.commitAll();
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 40 });
    expect(row('stock_counts', { item: 'A-1', location: 'L1' })).toMatchObject({ qty: 40, count_seq: 4 });
    expect(['stock', 'stock_counts'].map((t) => statusOf(j, t).heldEvents)).toEqual([0, 0]);
    // And from there on across a restart, as any table.
    stop(j);
    const k = start(withStockCounts());
    await k.accept(topic('inventory', 'stock'), inv(5, 'A-1', 'L1', 50));
    k.commitAll();
    expect(row('stock_counts', { item: 'A-1', location: 'L1' })).toMatchObject({ qty: 50, count_seq: 5 });
  });

  it('says a long journal read at open before and after it, naming the tables it is for', async () => {
    const i = start();
    for (let s = 1; s <= 5; s++) await i.accept(topic('yard', 'doors'), door(s, `D-0${s}`, 'free'));
    stop(i);
    const notes: string[] = [];
    start({ ...withYard(), onInfo: (m) => notes.push(m), journalReadNoteEvents: 5 });
    expect(notes).toHaveLength(2);
    expect(notes[0]).toBe('ingest: reading 5 journal events after position 0 into yard_doors (new); the site answers once they are read');
    expect(notes[1]).toMatch(/^ingest: read 5 journal events in \d+\.\d s$/);
  });

  it('says nothing of a read shorter than journalReadNoteEvents', async () => {
    const i = start();
    for (let s = 1; s <= 5; s++) await i.accept(topic('yard', 'doors'), door(s, `D-0${s}`, 'free'));
    stop(i);
    const notes: string[] = [];
    start({ ...withYard(), onInfo: (m) => notes.push(m), journalReadNoteEvents: 6 });
    expect(notes).toEqual([]);
  });

  it('closes the letter of an event held for a gap at open when the gap fills after it', async () => {
    const i = start();
    const p1 = await i.accept(topic('yard', 'doors'), door(1, 'D-01', 'free'));
    const p3 = await i.accept(topic('yard', 'doors'), door(3, 'D-01', 'occupied'));
    stop(i);
    const j = start(withYard());
    // seq 1 applied at open; seq 3 waits for seq 2.
    expect(j.health().lettersClosedAtOpen).toBe(1);
    expect(j.listDeadLetters({ status: 'open' }).map((d) => d.position)).toEqual([p3]);
    await j.accept(topic('yard', 'doors'), door(2, 'D-01', 'down'));
    j.commitAll();
    expect(row('yard_doors', { door_id: 'D-01' })).toMatchObject({ state: 'occupied', yard_seq: 3 });
    expect(j.listDeadLetters({ status: 'replayed' }).map((d) => d.position)).toEqual([p1, p3]);
    expect(j.deadLetterCount()).toBe(0);
  });

  it('closes the letter of an event the reorder buffer dropped at open when its resend is applied at a new position', async () => {
    const i = start();
    const p1 = await i.accept(topic('yard', 'doors'), door(1, 'D-01', 'free'));
    const p3 = await i.accept(topic('yard', 'doors'), door(3, 'D-03', 'occupied'));
    const p4 = await i.accept(topic('yard', 'doors'), door(4, 'D-04', 'occupied'));
    const p5 = await i.accept(topic('yard', 'doors'), door(5, 'D-05', 'down'));
    stop(i);
    // Two held at most: at open seq 3 and 4 wait for 2, and 5 overflows (dropped, asked again).
    const j = start({ ...withYard(), sequencer: { reorder_buffer_max: 2 } });
    expect(j.health().lettersClosedAtOpen).toBe(1);
    expect(j.metrics()).toMatch(/\ntilstand_ingest_reorder_overflow_drops_total\{site="s1"\} 1\n/);
    expect(resyncs).toContainEqual({ module: 'yard', stream: 'doors', from: 2 });
    // The module resends from 2: 3 and 4 are held already, 5 comes at a new position.
    for (const seq of [2, 3, 4, 5]) await j.accept(topic('yard', 'doors'), door(seq, `D-0${seq}`, seq === 5 ? 'down' : seq === 2 ? 'free' : 'occupied'));
    j.commitAll();
    expect(row('yard_doors', { door_id: 'D-05' })).toMatchObject({ state: 'down', yard_seq: 5 });
    expect(j.listDeadLetters({ status: 'replayed' }).map((d) => d.position)).toEqual([p1, p3, p4, p5]);
    expect(j.deadLetterCount()).toBe(0);
  });

  it('a copy of a dropped event released at its own position closes the dropped one\'s letter too', async () => {
    const i = start();
    const p: bigint[] = [];
    // seq 5 twice (a module's resend before the binding): at open 3 and 4 wait for 2, the first 5
    // overflows (dropped, remembered by seq), 2 releases 3 and 4, and the second 5 is next.
    for (const seq of [1, 3, 4, 5, 2, 5]) p.push(await i.accept(topic('yard', 'doors'), door(seq, `D-0${seq}`, 'free')));
    stop(i);
    const j = start({ ...withYard(), sequencer: { reorder_buffer_max: 2 } });
    expect(j.metrics()).toMatch(/\ntilstand_ingest_reorder_overflow_drops_total\{site="s1"\} 1\n/);
    expect(row('yard_doors', { door_id: 'D-05' })).toMatchObject({ state: 'free', yard_seq: 5 });
    expect(j.health().lettersClosedAtOpen).toBe(6);
    expect(j.listDeadLetters({ status: 'replayed' }).map((d) => d.position)).toEqual(p);
    expect(j.deadLetterCount()).toBe(0);
  });
});

describe('Ingestor: the streams a wildcard binding takes from a module', () => {
  // A binding by wildcard takes every stream name its module publishes under; each sequenced
  // stream is kept in memory (and in every table's progress) for good, so a module publishing
  // under ever new names (a bug, bogus names) grew the site without bound.
  const ANY_INVENTORY: Binding = { ...SEED_BINDINGS.find((b) => b.table === 'stock' && b.topic.endsWith('/inventory/stock'))!, name: 'inventory/+→stock', topic: 'tilstand/+/events/inventory/+' };
  const capped = (): Partial<IngestorOptions> => ({ bindings: [...SEED_BINDINGS, ANY_INVENTORY], streamsPerModuleMax: 2 });
  const named = (stream: string, seq: number, item: string, qty: number) => event('inventory', stream, seq, { item, location: 'L1', qty }, { name: 'inventory.stock', version: 1 });
  const inventoryStreams = (i: Ingestor) => i.streamActivity().filter((a) => a.module === 'inventory').map((a) => a.stream);

  it('refuses the events of a new stream name past streamsPerModuleMax as dead letters; a stream a binding names is always taken; a replay writes them', async () => {
    const i = start(capped());
    await i.accept(topic('inventory', 'north'), named('north', 1, 'N-1', 1));
    await i.accept(topic('inventory', 'south'), named('south', 1, 'S-1', 2));
    const p = await i.accept(topic('inventory', 'bogus-1'), named('bogus-1', 1, 'B-1', 3));
    // The stream the seed binding names is taken past the limit.
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 4));
    await i.accept(topic('inventory', 'north'), named('north', 2, 'N-1', 5));
    i.commitAll();
    expect(inventoryStreams(i)).toEqual(['north', 'south', 'stock']);
    expect(row('stock', { item: 'N-1', location: 'L1' })).toMatchObject({ on_hand: 5 });
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 4 });
    expect(row('stock', { item: 'B-1', location: 'L1' })).toBeUndefined();
    const [letter] = i.listDeadLetters({ status: 'open' });
    expect(letter).toMatchObject({ position: p, reason: 'binding_error', bindings: ['inventory/+→stock'], stream: 'bogus-1', seq: null });
    expect(letter!.detail).toMatch(/^stream inventory\/bogus-1: module inventory has 2 streams already, and a binding by wildcard \('inventory\/\+→stock'\) takes at most 2 \(streamsPerModuleMax\)/);
    stop(i);
    // The streams the tables know count after a restart too; the letter is not written twice.
    const j = start(capped());
    await j.accept(topic('inventory', 'bogus-2'), named('bogus-2', 1, 'B-2', 6));
    j.commitAll();
    expect(inventoryStreams(j)).toEqual(['north', 'south', 'stock']);
    expect(j.listDeadLetters({ status: 'open' }).map((d) => d.stream)).toEqual(['bogus-1', 'bogus-2']);
    // Not lost: a replay writes them (unsequenced, as a replay always is).
    expect(await j.replayDeadLetters()).toMatchObject({ replayed: 2, failed: 0 });
    expect(row('stock', { item: 'B-1', location: 'L1' })).toMatchObject({ on_hand: 3 });
    expect(inventoryStreams(j)).toEqual(['north', 'south', 'stock']);
  });

  it('checks streamsPerModuleMax at open', () => {
    expect(() => start({ streamsPerModuleMax: 1.5 })).toThrow(/^streamsPerModuleMax: expected an integer ≥ 0 \(streams\), got 1.5$/);
  });
});

describe('Ingestor bindings checked at open', () => {
  it("refuses a binding that leaves its table's sequence.field unbound, naming the table, the column and what was expected", () => {
    // Unbound, ops_seq is null: null sorts as the oldest, rows fall back to arrival order, and a
    // replayed dead letter of seq 1 overwrote the job's row from seq 2.
    const { ops_seq: _, ...columns } = SEED_BINDINGS.find((b) => b.table === 'work_queue')!.columns;
    const bindings = SEED_BINDINGS.map((b) => (b.table === 'work_queue' ? { ...b, columns } : b));
    expect(() => start({ bindings })).toThrow(
      "binding 'operations.jobs→work_queue': table 'work_queue' orders its rows by option 'sequence.field' = 'ops_seq', and column 'ops_seq' is not bound in columns; " +
        "expected a path giving the stream's order, usually 'ops_seq': 'source.seq' (a null sequence sorts as the oldest, so a late or replayed event would overwrite a newer row)",
    );
    expect(start().status().map((s) => s.table)).toContain('work_queue');
  });

  it("refuses two streams writing one sequence field of a table of the site's own, before any table is made", () => {
    const yard = parseTableDefinition(YARD_DOORS, 'tables[5]')!;
    const gates: Binding = { ...YARD_BINDING, name: 'yard.gates→yard_doors', topic: 'tilstand/+/events/yard/gates' };
    const budgets = [{ table: 'yard_doors', budgetMs: 30_000, decision: 'test', confirmedBy: 'test' }];
    expect(() => start({ tables: [...SEED_TABLES, yard], bindings: [...SEED_BINDINGS, YARD_BINDING, gates], budgets })).toThrow(
      /^binding 'yard\.gates→yard_doors': writes column yard_seq of table yard_doors from the seq of stream yard\/gates, and binding 'yard\.doors→yard_doors' from that of yard\/doors/,
    );
    expect(new Catalog(join(dir, 'warehouse')).tableExists({ database: DB, table: 'yard_doors' })).toBe(false);
  });
});

describe('Ingestor closed dead letters purged', () => {
  const HOUR = 3_600_000;
  /** Rows the live files of dead_letters hold, deletions included. */
  const held = (catalog: Catalog) => {
    const t = catalog.getTable({ database: DB, table: 'dead_letters' });
    return t.buckets(t.latestSnapshot()!)[0]!.files.reduce((n, f) => n + f.rowCount, 0);
  };
  /** Turns the event loop until dead_letters' files hold `rows` rows (its deferred compactions' slices ran), at most 1,000 times. */
  const compactedTo = async (catalog: Catalog, rows: number) => {
    for (let turn = 0; turn < 1000 && held(catalog) !== rows; turn++) await new Promise((res) => setImmediate(res));
    expect(held(catalog)).toBe(rows);
  };

  it('deletes the letters replayed or dismissed before the cutoff, in slices, never an open one; a full compaction then takes them out of the files', async () => {
    const catalog = new Catalog(join(dir, 'warehouse'));
    const i = start({ catalog });
    const t = topic('inventory', 'stock');
    const oldOpen = await i.accept(t, Buffer.from('{not json, and nobody looked'));
    const early = await i.accept(t, Buffer.from('{not json 1'));
    const late = await i.accept(t, Buffer.from('{not json 2'));
    const missing = await i.accept(t, event('inventory', 'stock', 1, { item: 'A-1', location: 'L1', qty: 5 }, { name: 'inventory.stock', version: 2 }));
    i.commitAll();
    now = T0 + HOUR;
    expect(i.dismissDeadLetters([early], 'Lena', 'test messages')).toEqual({ dismissed: 1, notOpen: [] });
    now = T0 + 2 * HOUR;
    contracts.register({ ...INVENTORY_STOCK, version: 2 });
    expect(await i.replayDeadLetters([missing])).toMatchObject({ replayed: 1, failed: 0 });
    now = T0 + 3 * HOUR;
    expect(i.dismissDeadLetters([late], 'Lena', 'test messages')).toEqual({ dismissed: 1, notOpen: [] });
    const letters = catalog.getTable({ database: DB, table: 'dead_letters' });
    const before = letters.latestSnapshot()!.id;

    // Closed before 2.5 h: the early dismissal and the replay; the later dismissal and the open
    // letter (older than all of them) stay.
    await expect(i.purgeClosedDeadLetters(T0 + 2.5 * HOUR, { slice: 0 })).rejects.toThrow(/slice: expected an integer ≥ 1, got 0/);
    const r = await i.purgeClosedDeadLetters(T0 + 2.5 * HOUR, { slice: 1 });
    expect(r).toEqual({ purged: 2, fullCompaction: true });
    expect(i.listDeadLetters().map((d) => d.position)).toEqual([oldOpen, late]);
    expect(i.deadLetterCount()).toBe(1);
    // One commit per slice, then the full compaction in slices after them.
    expect(letters.snapshots.listIds().filter((id) => id > before && letters.snapshots.tryGet(id)!.commitKind === 'APPEND')).toHaveLength(2);
    await compactedTo(catalog, 2);
    expect(i.metrics()).toMatch(/tilstand_ingest_dead_letters_purged_total\{site="s1"\} 2/);
    // Nothing more to purge at that cutoff; the replayed event's row stays in its table.
    expect(await i.purgeClosedDeadLetters(T0 + 2.5 * HOUR)).toEqual({ purged: 0, fullCompaction: false });
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 5 });
    stop(i);
    const j = start();
    expect(j.listDeadLetters().map((d) => [d.position, d.status])).toEqual([[oldOpen, 'open'], [late, 'dismissed']]);
    expect(j.deadLetterCount()).toBe(1);
  });

  it("lets dead_letters' compaction finish before each slice: no purge commit finds one under way", async () => {
    const catalog = new Catalog(join(dir, 'warehouse'));
    const i = start({ catalog });
    i.dismissDeadLetters(await garbageLetters(i, 30), 'Lena', 'junk');
    now = T0 + HOUR;
    const letters = catalog.getTable({ database: DB, table: 'dead_letters' });
    const before = letters.latestSnapshot()!.id;
    // Whether dead_letters' writer had a compaction under way at each commit of the purge; each
    // compaction takes three slices (two do nothing), as a table of large letters' does.
    const underWay: boolean[] = [];
    const commit = TableWriter.prototype.commit;
    const step = TableWriter.prototype.compactStep;
    let steps = 0;
    TableWriter.prototype.commit = function (this: TableWriter, properties?: Record<string, string>) {
      underWay.push(this.compacting);
      return commit.call(this, properties);
    };
    TableWriter.prototype.compactStep = function (this: TableWriter, budgetMs: number) {
      return ++steps % 3 === 0 ? step.call(this, budgetMs) : { done: false };
    };
    try {
      expect(await i.purgeClosedDeadLetters(T0 + HOUR, { slice: 1 })).toMatchObject({ purged: 30 });
    } finally {
      TableWriter.prototype.commit = commit;
      TableWriter.prototype.compactStep = step;
    }
    expect(underWay).toHaveLength(30);
    expect(underWay.filter(Boolean)).toEqual([]);
    // Compactions did run between the slices (five runs plan one here).
    const kinds = letters.snapshots.listIds().filter((id) => id > before).map((id) => letters.snapshots.tryGet(id)!.commitKind);
    expect(kinds.filter((k) => k === 'COMPACT').length).toBeGreaterThan(3);
  });

  it('asks for a full compaction only once the deleted letters are a quarter of the table', async () => {
    const catalog = new Catalog(join(dir, 'warehouse'));
    const i = start({ catalog });
    const positions = await garbageLetters(i, 12);
    for (const [k, p] of positions.entries()) {
      now = T0 + k * HOUR;
      i.dismissDeadLetters([p], 'Lena', 'junk');
    }
    // 2 of 12: below a quarter, the deletions stay in the files for now. The letters' heads are
    // read with turns of the event loop between (every 2 here): other work goes on meanwhile.
    await expect(i.purgeClosedDeadLetters(T0, { scanTurnEvery: 0 })).rejects.toThrow(/scanTurnEvery: expected an integer ≥ 1, got 0/);
    let turns = 0;
    let purging = true;
    const spin = () => {
      if (!purging) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    expect(await i.purgeClosedDeadLetters(T0 + 1.5 * HOUR, { scanTurnEvery: 2 })).toEqual({ purged: 2, fullCompaction: false });
    purging = false;
    expect(turns).toBeGreaterThanOrEqual(12 / 2);
    // 1 more (3 since the last full compaction, of 12): a quarter.
    const letters = catalog.getTable({ database: DB, table: 'dead_letters' });
    // The dismissals' own compactions have run; what the files hold now keeps the two deletions.
    await new Promise((res) => setTimeout(res, 50));
    const rowsBefore = held(catalog);
    expect(await i.purgeClosedDeadLetters(T0 + 2.5 * HOUR)).toEqual({ purged: 1, fullCompaction: true });
    expect(rowsBefore).toBeGreaterThan(12);
    await compactedTo(catalog, 9);
    // And counting starts again: one more of nine is not a quarter.
    expect(await i.purgeClosedDeadLetters(T0 + 3.5 * HOUR)).toEqual({ purged: 1, fullCompaction: false });
    expect(i.listDeadLetters()).toHaveLength(8);
  });
});

describe('Ingestor dead letters dismissed', () => {
  it('closes open letters under a name and a note: no longer open, never replayed, kept with their payload, across a restart', async () => {
    const i = start();
    const t = topic('inventory', 'stock');
    const garbage = await i.accept(t, Buffer.from('{not json'));
    const wrong = await i.accept(t, event('inventory', 'stock', 1, { item: 'A-1', location: 'L1', qty: 'ten' }, { name: 'inventory.stock', version: 1 }));
    const other = await i.accept(t, event('inventory', 'stock', 2, { item: 'A-1', location: 'L1', qty: 'eleven' }, { name: 'inventory.stock', version: 1 }));
    i.commitAll();
    expect(i.deadLetterCount()).toBe(3);
    // Who and why are required; so are the letters.
    expect(() => i.dismissDeadLetters([garbage], 'Lena', '  ')).toThrow(/why \(a note\) is required/);
    expect(() => i.dismissDeadLetters([garbage], '', 'test message')).toThrow(/who dismisses them/);
    expect(() => i.dismissDeadLetters([], 'Lena', 'x')).toThrow(/name the dead letters/);
    // Text the table cannot hold as written (its files would write U+FFFD) is refused before any letter is touched.
    expect(() => i.dismissDeadLetters([garbage, wrong], 'Lena', 'half \ud83d')).toThrow(/the note is not valid Unicode text/);
    expect(i.deadLetterCount()).toBe(3);
    now = T0 + 60_000;
    expect(i.dismissDeadLetters([garbage, wrong, 424_242n], 'Lena', ' test messages from the module vendor ')).toEqual({ dismissed: 2, notOpen: ['424242'] });
    expect(i.deadLetterCount()).toBe(1);
    const dismissed = i.listDeadLetters({ status: 'dismissed' });
    expect(dismissed.map((d) => d.position)).toEqual([garbage, wrong]);
    for (const d of dismissed) expect(d.dismissed).toEqual({ atMs: T0 + 60_000, by: 'Lena', note: 'test messages from the module vendor' });
    expect(dismissed[0]!.payload.toString()).toBe('{not json');
    expect(dismissed[1]!.reason).toBe('contract_violation');
    expect(i.listDeadLetters({ status: 'open' }).map((d) => d.position)).toEqual([other]);
    // Dismissed again, or replayed: neither touches them.
    expect(i.dismissDeadLetters([garbage], 'Per', 'again')).toEqual({ dismissed: 0, notOpen: [String(garbage)] });
    expect(await i.replayDeadLetters()).toEqual({ replayed: 0, failed: 1, notOpen: [], alike: 0 });
    expect(i.listDeadLetters({ status: 'dismissed' }).map((d) => d.dismissed!.by)).toEqual(['Lena', 'Lena']);
    expect(i.metrics()).toMatch(/tilstand_ingest_dead_letters_dismissed_total\{site="s1"\} 2/);
    expect(i.metrics()).toMatch(/tilstand_ingest_dead_letters_open\{site="s1"\} 1/);
    stop(i);
    const j = start();
    expect(j.deadLetterCount()).toBe(1);
    expect(j.listDeadLetters({ status: 'dismissed' }).map((d) => [d.position, d.dismissed])).toEqual([
      [garbage, { atMs: T0 + 60_000, by: 'Lena', note: 'test messages from the module vendor' }],
      [wrong, { atMs: T0 + 60_000, by: 'Lena', note: 'test messages from the module vendor' }],
    ]);
  });

  it('adds the dismissal columns and the file size to a dead_letters table an earlier version made; its letters read as before', async () => {
    // dead_letters as the first release made it: the columns up to replayed_at.
    const catalog = new Catalog(join(dir, 'warehouse'));
    catalog.createDatabase(DB, true);
    const oldFields = DEAD_LETTERS_TABLE.fields.filter((f) => !f.name.startsWith('dismissed_'));
    const old = catalog.createTable({ database: DB, table: 'dead_letters' }, { fields: oldFields.map((f) => ({ name: f.name, type: f.type })), primaryKeys: ['position'], partitionKeys: [], options: { bucket: '1', 'merge-engine': 'deduplicate' } });
    const w = old.newWriter({ commitUser: 'old-version' });
    w.writeRecord({ position: 7n, status: 'open', reason: 'bad_json', detail: 'payload is not JSON', path: null, bindings: null, topic: topic('inventory', 'stock'), module: 'inventory', stream: 'stock', seq: null, payload: Buffer.from('{'), received_at: T0 * 1000, replayed_at: null });
    w.commit();
    w.close();
    const i = start({ catalog });
    const table = catalog.getTable({ database: DB, table: 'dead_letters' });
    expect(table.schema.fields.map((f) => f.name).slice(-3)).toEqual(['dismissed_at', 'dismissed_by', 'dismissed_note']);
    expect(table.schema.options.raw['target-file-size']).toBe(DEAD_LETTERS_TARGET_FILE_SIZE); // in the same schema change
    expect(table.schema.id).toBe(1);
    expect(i.listDeadLetters().map((d) => [d.position, d.status, d.dismissed])).toEqual([[7n, 'open', null]]);
    expect(i.dismissDeadLetters([7n], 'Lena', 'a test')).toEqual({ dismissed: 1, notOpen: [] });
    expect(i.listDeadLetters()[0]!.dismissed).toEqual({ atMs: T0, by: 'Lena', note: 'a test' });
  });
});

describe('Ingestor dead letters by the thousand', () => {
  // A module sending a contract version the site lacks makes a letter of each event: lists read
  // position and status of every letter and whole letters only of those they return, and "replay
  // all" goes in slices with a turn of the event loop between them.
  it('lists whole letters only of those it returns; open ones first when asked, uncommitted ones too', async () => {
    const i = start();
    const t = topic('inventory', 'stock');
    const ps = await garbageLetters(i, 30);
    expect(i.dismissDeadLetters(ps.slice(0, 20), 'Lena', 'a vendor test')).toEqual({ dismissed: 20, notOpen: [] });
    const late = await i.accept(t, Buffer.from('{still not json')); // not committed yet
    const scans = vi.spyOn(Table.prototype, 'scanRows');
    const gets = vi.spyOn(TableReader.prototype, 'get');
    try {
      const five = i.listDeadLetters({ limit: 5, openFirst: true });
      expect(five.map((d) => d.position)).toEqual(ps.slice(20, 25));
      expect(five[0]!.payload.toString()).toBe('{not json 20');
      expect(scans.mock.calls.map((c) => c[1]?.projection)).toEqual([['position', 'status']]);
      expect(gets).toHaveBeenCalledTimes(5);
      gets.mockClear();
      // Open ones (the uncommitted one among them) first, then the closed ones newest first.
      const more = i.listDeadLetters({ limit: 15, openFirst: true });
      expect(more.map((d) => [d.position, d.status])).toEqual([...ps.slice(20), late, ...ps.slice(16, 20).reverse()].map((p, k) => [p, k < 11 ? 'open' : 'dismissed']));
      expect(more[10]!.payload.toString()).toBe('{still not json');
      expect(gets).toHaveBeenCalledTimes(14); // the uncommitted one from memory
      expect(i.listDeadLetters({ limit: 3 }).map((d) => d.position)).toEqual(ps.slice(0, 3)); // position order without openFirst
    } finally {
      scans.mockRestore();
      gets.mockRestore();
    }
    expect(i.openAlike([ps[20]!])).toEqual([ps[20], ...ps.slice(21), late]);
  });

  it('replays every open letter in slices, yielding between them; one that fails again is passed, not retried', async () => {
    const i = start();
    const t = topic('inventory', 'stock');
    const ps: bigint[] = [];
    const bad = new Set([3, 13, 23]);
    let seq = 0; // the stream's own, without gaps (a gap would hold the events after it)
    for (let k = 0; k < 28; k++) {
      ps.push(await i.accept(t, bad.has(k) ? Buffer.from(`{bad ${k}`) : event('inventory', 'stock', ++seq, { item: `I-${k}`, location: 'L1', qty: k, note: null }, { name: 'inventory.stock', version: 2 })));
    }
    i.commitAll();
    expect(i.deadLetterCount()).toBe(28);
    contracts.register({ ...INVENTORY_STOCK, version: 2, fields: [...INVENTORY_STOCK.fields, { name: 'note', type: 'STRING', default: null }] });
    const slices = vi.spyOn(i, 'replayDeadLetterSlice');
    let turned = false;
    setImmediate(() => (turned = true));
    const replaying = i.replayDeadLetters(undefined, { slice: 10 });
    expect(turned).toBe(false); // the first slice ran at once
    expect(await replaying).toEqual({ replayed: 25, failed: 3, notOpen: [], alike: 0 });
    expect(turned).toBe(true); // the event loop turned between slices
    expect(slices.mock.calls.map((c) => c[0])).toEqual([null, ps[9], ps[19]]);
    expect(slices.mock.results.map((r) => (r.value as { last: bigint | null }).last)).toEqual([ps[9], ps[19], null]);
    expect(i.deadLetterCount()).toBe(3);
    expect(i.listDeadLetters({ status: 'open' }).map((d) => d.position)).toEqual([ps[3], ps[13], ps[23]]);
    expect(row('stock', { item: 'I-27', location: 'L1' })).toMatchObject({ on_hand: 27 });
    expect(() => i.replayDeadLetterSlice(null, 0)).toThrow(/max: expected an integer ≥ 1, got 0/);
  });

  it("keeps dead letters' files out of the run cache (a flood would fill it), and the state tables' in it", async () => {
    const catalog = new Catalog(join(dir, 'warehouse'));
    const i = start({ catalog });
    const t = topic('inventory', 'stock');
    for (let k = 0; k < 3; k++) await i.accept(t, Buffer.from(`{junk ${k}`));
    await i.accept(t, inv(1, 'A-1', 'L1', 5));
    i.commitAll();
    expect(i.deadLetterCount()).toBe(3);
    const cached = [...catalog.cacheBudget.entries.keys()];
    expect(cached.filter((k) => k.includes('/stock/bucket-')).length).toBeGreaterThan(0);
    expect(cached.filter((k) => k.includes('/dead_letters/'))).toEqual([]);
    expect(i.listDeadLetters().map((d) => d.payload.toString())).toEqual(['{junk 0', '{junk 1', '{junk 2']);
  });

  it("compacts dead letters in slices after the commit (turns of the event loop between), not inside it", async () => {
    const catalog = new Catalog(join(dir, 'warehouse'));
    const warnings: string[] = [];
    const i = start({ catalog, onWarning: (w) => warnings.push(w) });
    const t = topic('inventory', 'stock');
    const letters = catalog.getTable({ database: DB, table: 'dead_letters' });
    const trigger = letters.schema.options.compactionTrigger;
    let n = 0;
    // One run per commit, as many as the compaction trigger asks for.
    for (let c = 0; c < trigger; c++) {
      for (let k = 0; k < 50; k++) await i.accept(t, Buffer.from(`{junk ${n++}`));
      i.commitAll();
    }
    expect(letters.latestSnapshot()!.commitKind).toBe('APPEND'); // the commit did not compact
    expect(letters.runsOf(letters.buckets(letters.latestSnapshot()!)[0]!.files)).toHaveLength(trigger);
    const steps = vi.spyOn(TableWriter.prototype, 'compactStep');
    try {
      for (let turn = 0; turn < 1000 && letters.latestSnapshot()!.commitKind !== 'COMPACT'; turn++) await new Promise((r) => setImmediate(r));
      expect(letters.latestSnapshot()!.commitKind).toBe('COMPACT');
      expect(steps.mock.calls.every((c) => c[0] === COMPACTION_SLICE_MS)).toBe(true);
    } finally {
      steps.mockRestore();
    }
    expect(letters.runsOf(letters.buckets(letters.latestSnapshot()!)[0]!.files).length).toBeLessThan(trigger);
    expect(i.deadLetterCount()).toBe(n);
    expect(i.listDeadLetters({ limit: 3 }).map((d) => d.payload.toString())).toEqual(['{junk 0', '{junk 1', '{junk 2']);
    // Closed right after a commit planned a compaction: its slice does not run on the closed writer.
    const runs = () => letters.runsOf(letters.buckets(letters.latestSnapshot()!)[0]!.files).length;
    do {
      for (let k = 0; k < 50; k++) await i.accept(t, Buffer.from(`{junk ${n++}`));
      i.commitAll();
    } while (runs() < trigger);
    stop(i);
    await new Promise((r) => setImmediate(r));
    expect(warnings).toEqual([]);
    const again = start({ catalog });
    expect(again.deadLetterCount()).toBe(n);
  });

  it('replays the letters like one named (its topic and reason) in slices, and not the others', async () => {
    const i = start();
    const t = topic('inventory', 'stock');
    const v2 = { name: 'inventory.stock', version: 2 };
    // inventory upgraded before its contract v2 was added: six no_contract letters of its stream,
    // then one of its events that v1 refuses, and commerce sending a version the site lacks too.
    const missing: bigint[] = [];
    for (let k = 1; k <= 6; k++) missing.push(await i.accept(t, event('inventory', 'stock', k, { item: `I-${k}`, location: 'L1', qty: k, note: null }, v2)));
    const wrong = await i.accept(t, event('inventory', 'stock', 7, { item: 'I-7', location: 'L1', qty: 'seven' }, { name: 'inventory.stock', version: 1 }));
    const commerce = await i.accept(topic('commerce', 'reservations'), event('commerce', 'reservations', 1, { item: 'I-1', location: 'L1', reserved_qty: 1, note: 'x' }, { name: 'commerce.reservations', version: 9 }));
    i.commitAll();
    expect(i.deadLetterCount()).toBe(8);
    contracts.register({ ...INVENTORY_STOCK, version: 2, fields: [...INVENTORY_STOCK.fields, { name: 'note', type: 'STRING', default: null }] });
    await expect(i.replayDeadLetters(undefined, { alike: true })).rejects.toThrow(/alike needs the letters/);
    const replays = vi.spyOn(i as unknown as { replayLetters: (l: unknown[]) => unknown }, 'replayLetters');
    let turned = false;
    setImmediate(() => (turned = true));
    // Named: the fourth, and a position that is no letter. Slices of 4: named first, then the alike.
    const r = await i.replayDeadLetters([missing[3]!, 999_999n], { alike: true, slice: 4 });
    expect(r).toEqual({ replayed: 6, failed: 0, notOpen: ['999999'], alike: 5 });
    expect(turned).toBe(true);
    expect(replays.mock.calls.map((c) => (c[0] as { position: bigint }[]).map((d) => d.position))).toEqual([[missing[0], missing[1], missing[3]], [missing[2], missing[4], missing[5]]]);
    for (let k = 1; k <= 6; k++) expect(row('stock', { item: `I-${k}`, location: 'L1' })).toMatchObject({ on_hand: k });
    // The inventory event of another reason and commerce's letter stay open.
    expect(i.listDeadLetters({ status: 'open' }).map((d) => d.position)).toEqual([wrong, commerce]);
    expect(i.listDeadLetters({ status: 'replayed' }).map((d) => d.position)).toEqual(missing);
    // Named again (now replayed): named back, and nothing is like it any more.
    expect(await i.replayDeadLetters([missing[0]!], { alike: true })).toEqual({ replayed: 0, failed: 0, notOpen: [String(missing[0])], alike: 0 });
    await expect(i.replayDeadLetters([wrong], { slice: 0 })).rejects.toThrow(/slice: expected an integer ≥ 1, got 0/);
  });
});

describe('Ingestor freshness budgets', () => {
  it('commits a table when its oldest pending event reaches half its budget, and never an idle table', async () => {
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 1)); // stock: 10 min budget
    now += 1_000;
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1')); // work_queue: 60 s budget
    expect(statusOf(i, 'stock')).toMatchObject({ pendingEvents: 1, ageMs: 1_000, snapshotId: null, lastCommitMs: null, withinBudget: true });

    now = T0 + 1_000 + 29_999;
    i.tick();
    expect(statusOf(i, 'work_queue').snapshotId).toBeNull();
    now = T0 + 1_000 + 30_000;
    i.tick();
    expect(statusOf(i, 'work_queue')).toMatchObject({ pendingEvents: 0, ageMs: 0, lastCommitMs: now, breaches: 0 });
    expect(statusOf(i, 'work_queue').snapshotId).not.toBeNull();
    expect(statusOf(i, 'stock')).toMatchObject({ pendingEvents: 1, snapshotId: null });

    now = T0 + 5 * 60_000 - 1;
    i.tick();
    expect(statusOf(i, 'stock').snapshotId).toBeNull();
    now = T0 + 5 * 60_000;
    i.tick();
    expect(statusOf(i, 'stock')).toMatchObject({ pendingEvents: 0, ageMs: 0 });
    const stockSnapshot = statusOf(i, 'stock').snapshotId;
    const wqSnapshot = statusOf(i, 'work_queue').snapshotId;

    // Nothing pending: hours of ticks commit nothing, but for one progress commit of each table
    // the journal moved past (resources, dead_letters: no rows, the journal position), so they
    // stop holding the journal checkpoint.
    for (let k = 0; k < 50; k++) {
      now += 10 * 60_000;
      i.tick();
    }
    expect(statusOf(i, 'stock').snapshotId).toBe(stockSnapshot);
    expect(statusOf(i, 'work_queue').snapshotId).toBe(wqSnapshot);
    for (const name of ['resources', 'dead_letters']) expect(statusOf(i, name).snapshotId, name).toBe(1);
    // The journal checkpoint (lowest committed position over all tables) reached the last event.
    expect(journal.getCheckpoint('ingest')).toBe(2n);
  });

  it('a wall clock stepped back an hour delays no commit by the hour: the pending event ages from the step', async () => {
    const i = start();
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1')); // work_queue: 60 s budget, commit at 30 s
    now -= 3_600_000; // NTP steps the PC's clock back an hour
    i.tick();
    expect(statusOf(i, 'work_queue')).toMatchObject({ pendingEvents: 1, ageMs: 0 });
    now += 30_000;
    i.tick();
    expect(statusOf(i, 'work_queue')).toMatchObject({ pendingEvents: 0 });
    expect(statusOf(i, 'work_queue').snapshotId).not.toBeNull();
  });

  it('a wall clock stepped forward counts no breach and commits nothing early, one stepped back delays nothing: pending events age on the monotonic clock', async () => {
    let mono = 0;
    const i = start({ monotonicClock: () => mono });
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1')); // work_queue: 60 s budget, commit at 30 s
    now += 10 * 60_000; // NTP steps the PC's clock forward 10 min, a second after the event came
    mono += 1_000;
    // Aged on the wall clock: 10 min old, a breach of the 60 s budget counted and shown.
    expect(statusOf(i, 'work_queue')).toMatchObject({ pendingEvents: 1, ageMs: 1_000, withinBudget: true, breaches: 0 });
    i.tick();
    expect(statusOf(i, 'work_queue')).toMatchObject({ pendingEvents: 1, snapshotId: null, breaches: 0 });
    now += 29_000;
    mono += 29_000;
    i.tick();
    // Committed at half its budget; the commit time shown is the wall clock's (epoch ms).
    expect(statusOf(i, 'work_queue')).toMatchObject({ pendingEvents: 0, breaches: 0, lastCommitMs: now });
    expect(i.metrics()).toMatch(/tilstand_ingest_table_budget_breaches_total\{site="s1",table="work_queue"\} 0/);

    // Stepped back an hour 20 s after an event came: it commits 10 s later, at 30 s of age, not
    // 30 s after the step.
    await i.accept(topic('operations', 'jobs'), job(2, 'J-2'));
    const committed = statusOf(i, 'work_queue').snapshotId;
    now += 20_000;
    mono += 20_000;
    now -= 3_600_000;
    now += 10_000;
    mono += 10_000;
    i.tick();
    expect(statusOf(i, 'work_queue')).toMatchObject({ pendingEvents: 0, breaches: 0, lastCommitMs: now });
    expect(statusOf(i, 'work_queue').snapshotId).toBe(committed! + 1);
  });

  it('gives a table that never committed a progress commit at once, and an idle one once its last commit is progressIntervalMs old and the journal moved on', async () => {
    const i = start({ progressIntervalMs: 60_000 });
    expect(journal.getCheckpoint('ingest')).toBe(0n);
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1'));
    now += 30_000;
    // work_queue: due at half its 60 s budget; dead_letters has no event and had no commit: it
    // records its progress now, so the journal's checkpoint is not held at 0 for 60 s.
    i.tick();
    expect(statusOf(i, 'work_queue').snapshotId).toBe(1);
    expect(statusOf(i, 'dead_letters').snapshotId).toBe(1);
    expect(journal.getCheckpoint('ingest')).toBe(1n);
    await i.accept(topic('operations', 'jobs'), job(2, 'J-2'));
    now = T0 + 90_000 - 1;
    i.tick();
    expect(statusOf(i, 'dead_letters').snapshotId).toBe(1);
    now = T0 + 90_000;
    i.tick();
    expect(statusOf(i, 'dead_letters').snapshotId).toBe(2);
    now += 10 * 60_000;
    i.tick();
    expect(statusOf(i, 'dead_letters').snapshotId).toBe(2); // nothing new in the journal: no commit
  });

  it("an idle table's progress commit counts on the monotonic clock: a wall clock stepped back does not hold it, one stepped forward does not bring it early", async () => {
    let mono = 0;
    const i = start({ monotonicClock: () => mono, progressIntervalMs: 60_000 });
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1'));
    now += 30_000;
    mono += 30_000;
    i.tick(); // work_queue due; dead_letters' first progress commit
    expect(statusOf(i, 'dead_letters').snapshotId).toBe(1);
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 1)); // the frontier moves past dead_letters
    now -= 3_600_000; // NTP steps the PC's clock back an hour
    now += 60_000;
    mono += 60_000;
    i.tick();
    // Measured on the wall clock, it waited for the hour to come round again (the journal's
    // checkpoint, and prune, with it).
    expect(statusOf(i, 'dead_letters').snapshotId).toBe(2);
    await i.accept(topic('inventory', 'stock'), inv(2, 'A-1', 'L1', 2));
    now += 10 * 60_000; // and forward 10 min, a second later
    mono += 1_000;
    i.tick();
    expect(statusOf(i, 'dead_letters').snapshotId).toBe(2);
    now += 59_000;
    mono += 59_000;
    i.tick();
    expect(statusOf(i, 'dead_letters').snapshotId).toBe(3);
    expect(statusOf(i, 'dead_letters').lastCommitMs).toBe(now); // epoch ms, as shown
  });

  it('counts a breach when a table is seen older than its budget, once per episode', async () => {
    const i = start();
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1'));
    now += 60_001; // no tick ran (e.g. the loop was blocked)
    expect(statusOf(i, 'work_queue')).toMatchObject({ ageMs: 60_001, withinBudget: false, breaches: 1 });
    expect(statusOf(i, 'work_queue').breaches).toBe(1); // same episode
    i.tick();
    expect(statusOf(i, 'work_queue')).toMatchObject({ ageMs: 0, withinBudget: true, breaches: 1 });
    expect(i.metrics()).toMatch(/tilstand_ingest_table_budget_breaches_total\{site="s1",table="work_queue"\} 1/);
    expect(i.metrics()).toMatch(/tilstand_ingest_table_budget_ms\{site="s1",table="stock"\} 600000/);
    expect(statusOf(i, 'work_queue')).toMatchObject({ budgetMs: 60_000, decision: expect.stringContaining('work-queue agent') });
  });

  it('a replay of an old dead letter counts no breach: the letter was never pending, and the replay commits at once', async () => {
    const i = start();
    // Operations sends v2 before the site has it: a dead letter, replayed an hour later.
    const p = await i.accept(topic('operations', 'jobs'), event('operations', 'jobs', 1, { job_id: 'J-1', status: 'released', capability: 'forklift' }, { name: 'operations.jobs', version: 2 }));
    i.commitAll();
    now += 60 * 60_000;
    i.tick();
    contracts.register({ ...SEED_CONTRACTS.find((c) => c.name === 'operations.jobs')!, version: 2 });
    expect(await i.replayDeadLetters([p])).toMatchObject({ replayed: 1, failed: 0 });
    expect(row('work_queue', { job_id: 'J-1' })).toMatchObject({ ops_seq: 1 });
    // The hour the event spent as a dead letter was counted as a breach of work_queue's 60 s budget.
    expect(statusOf(i, 'work_queue')).toMatchObject({ breaches: 0, withinBudget: true });
    expect(i.metrics()).toMatch(/tilstand_ingest_table_budget_breaches_total\{site="s1",table="work_queue"\} 0/);
  });

  it('takes declared budgets over the defaults and refuses a table without one', () => {
    const i = start({ budgets: [{ table: 'stock', budgetMs: 30_000, decision: 'pick list', confirmedBy: 'site lead, 2026-11-30' }] });
    expect(statusOf(i, 'stock')).toMatchObject({ budgetMs: 30_000, decision: 'pick list', confirmedBy: 'site lead, 2026-11-30' });
    stop(i);
    const odd: TableDefinition = { name: 'odd', fields: [{ id: 0, name: 'k', type: 'STRING NOT NULL' }], partitionKeys: [], primaryKeys: ['k'], options: { bucket: '1' } };
    expect(() => start({ tables: [...SEED_TABLES, odd] })).toThrow(/table 'odd' has no freshness budget/);
  });

  it('refuses progress and expiry options that are no whole count or ms, naming the option (a fraction made every tick throw an unnamed BigInt RangeError)', () => {
    for (const [name, value] of [
      ['progressLagMax', 0.5],
      ['progressLagMax', -1],
      ['progressIntervalMs', Number.NaN],
      ['idleExpireMs', -5],
      ['idleExpireMs', '60000'],
      ['journalReadNoteEvents', 1.5],
    ] as const) {
      expect(() => start({ [name]: value } as Partial<IngestorOptions>), `${name} ${String(value)}`).toThrow(new RegExp(`^${name}: expected an integer ≥ \\d+ \\(\\w+\\), got ${String(value)}$`));
    }
    const i = start({ progressLagMax: 1, progressIntervalMs: 0, idleExpireMs: 1 });
    i.tick();
    expect(i.health().failure).toBeNull();
  });

  it('shows the disk alarm in status and metrics when given the DiskBudget', async () => {
    let full = false;
    const i = start({ diskBudget: { full: () => full } });
    expect(statusOf(i, 'stock').diskFull).toBe(false);
    full = true;
    expect(statusOf(i, 'stock').diskFull).toBe(true);
    expect(i.metrics()).toMatch(/tilstand_ingest_disk_full\{site="s1"\} 1/);
    expect(i.health().diskFull).toBe(true);
  });
});

describe('Ingestor recovery', () => {
  it('reopens after close with the same state and nothing to replay', async () => {
    const i = start();
    for (let s = 1; s <= 20; s++) await i.accept(topic('inventory', 'stock'), inv(s, `A-${s % 3}`, 'L1', s));
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1'));
    stop(i); // commits
    const j = start();
    expect(j.health().recoveredEvents).toBe(0);
    expect(row('stock', { item: 'A-2', location: 'L1' })).toMatchObject({ on_hand: 20, inventory_seq: 20 });
    await j.accept(topic('inventory', 'stock'), inv(20, 'A-2', 'L1', 999)); // duplicate after restart
    await j.accept(topic('inventory', 'stock'), inv(21, 'A-0', 'L1', 21));
    j.commitAll();
    expect(row('stock', { item: 'A-2', location: 'L1' })).toMatchObject({ on_hand: 20 });
    expect(row('stock', { item: 'A-0', location: 'L1' })).toMatchObject({ on_hand: 21, inventory_seq: 21 });
  });

  it('reports when each stream last delivered: streams the tables know count as silent until their next event', async () => {
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 1));
    now += 5_000;
    await i.accept(topic('inventory', 'stock'), inv(2, 'A-1', 'L1', 2));
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1'));
    now += 5_000;
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 1)); // a resend still shows the module is there
    // The events say ts_ms T0: received 10 s and 5 s later, the module's clock is not ahead.
    expect(i.streamActivity()).toEqual([
      { module: 'inventory', stream: 'stock', lastEventMs: T0 + 10_000, lastSeq: 1, clockAheadMs: -10_000, appliedSeq: 2, gap: null },
      { module: 'operations', stream: 'jobs', lastEventMs: T0 + 5_000, lastSeq: 1, clockAheadMs: -5_000, appliedSeq: 1, gap: null },
    ]);
    expect(i.metrics()).toContain(`tilstand_ingest_stream_last_event_timestamp_seconds{site="s1",module="inventory",stream="stock"} ${(T0 + 10_000) / 1000}`);
    expect(i.metrics()).toContain('tilstand_ingest_stream_clock_ahead_seconds{site="s1",module="inventory",stream="stock"} -10');
    stop(i);
    now += 60_000;
    const j = start();
    // Known from the tables' high-water marks, nothing received since this open.
    expect(j.streamActivity()).toEqual([
      { module: 'inventory', stream: 'stock', lastEventMs: null, lastSeq: null, clockAheadMs: null, appliedSeq: 2, gap: null },
      { module: 'operations', stream: 'jobs', lastEventMs: null, lastSeq: null, clockAheadMs: null, appliedSeq: 1, gap: null },
    ]);
    await j.accept(topic('operations', 'jobs'), job(2, 'J-2'));
    expect(j.streamActivity()[1]).toEqual({ module: 'operations', stream: 'jobs', lastEventMs: now, lastSeq: 2, clockAheadMs: T0 - now, appliedSeq: 2, gap: null });
    // A module whose clock runs 7 minutes ahead stamps its events in this PC's future.
    now += 1_000;
    const ahead = JSON.parse(job(3, 'J-3').toString()) as Record<string, unknown>;
    await j.accept(topic('operations', 'jobs'), Buffer.from(JSON.stringify({ ...ahead, ts_ms: now + 7 * 60_000 })));
    expect(j.streamActivity()[1]).toMatchObject({ lastSeq: 3, clockAheadMs: 7 * 60_000 });
  });

  it('after a crash (writers dropped uncommitted) replays the journal once: committed events are not applied twice', async () => {
    const i = start();
    for (let s = 1; s <= 5; s++) await i.accept(topic('inventory', 'stock'), inv(s, 'A-1', 'L1', s));
    i.commitAll();
    for (let s = 6; s <= 8; s++) await i.accept(topic('inventory', 'stock'), inv(s, 'A-1', 'L1', s));
    await i.accept(topic('inventory', 'stock'), inv(10, 'A-1', 'L1', 10)); // held: 9 is missing
    await i.accept(topic('commerce', 'reservations'), res(1, 'A-1', 'L1', 2));
    await i.accept(topic('inventory', 'stock'), Buffer.from('not json'));
    i.abandon(); // kill -9: nothing after the commit is in the tables
    open.length = 0;
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 5, reserved: null });

    const j = start();
    // work_queue, resources and dead_letters never committed (position 0): the whole journal replays,
    // and stock skips the five events its snapshot holds (hwm inventory/stock = 5).
    expect(j.health().recoveredEvents).toBe(11);
    expect(j.health().heldEvents).toBe(1); // seq 10 waits again
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 8, inventory_seq: 8, reserved: 2, commerce_seq: 1 });
    expect(j.deadLetterCount()).toBe(1);
    await j.accept(topic('inventory', 'stock'), inv(9, 'A-1', 'L1', 9));
    j.commitAll();
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 10, inventory_seq: 10 });
    // Crash again right after a commit: nothing is replayed twice (the dead letter stays one).
    j.abandon();
    open.length = 0;
    const k = start();
    // j's open moved every table to the frontier (8: seq 10 at position 9 was held), so only 9..12 replay;
    // the dead letter at position 11 is found in the snapshot by its key and not written again.
    expect(k.health().recoveredEvents).toBe(4);
    expect(k.deadLetterCount()).toBe(1);
    expect(k.listDeadLetters()).toHaveLength(1);
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 10, inventory_seq: 10 });
    expect(journal.getCheckpoint('ingest')).toBeDefined();
  });
});

describe('Ingestor recovery: the progress a table commits after a restart', () => {
  /** kill -9: nothing more is committed. */
  const crash = (i: Ingestor): void => {
    i.abandon();
    open.splice(open.indexOf(i), 1);
  };
  const gapSkipAfter10s = { sequencer: { reorder_window_ms: 1_000, resync_retry_ms: 1_000, gap_give_up_ms: 10_000 } };
  const committed = (table: string): Record<string, string> => new Catalog(join(dir, 'warehouse')).getTable({ database: DB, table }).committedProperties();
  const badQty = (seq: number) => event('inventory', 'stock', seq, { item: 'A-1', location: 'L1', qty: 'x' }, { name: 'inventory.stock', version: 1 });

  it('a run a gap skip released is not applied to stock again after a second crash (H and F never lowered)', async () => {
    // Run 1: seq 1 applied, dead_letters' progress commit at hwm 1; seq 2 never comes, 3 and 4
    // are held, the skip releases them, stock commits hwm 4 and dead_letters stays at 1. (A skip
    // now commits dead_letters first; a directory an older version left, stood in for by rolling
    // dead_letters back to its snapshot of hwm 1, is in this state.)
    const i = start(gapSkipAfter10s);
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 1));
    i.tick();
    const lettersAtHwm1 = new Catalog(join(dir, 'warehouse')).getTable({ database: DB, table: 'dead_letters' }).latestSnapshot()!.id;
    await i.accept(topic('inventory', 'stock'), inv(3, 'A-1', 'L1', 3));
    await i.accept(topic('inventory', 'stock'), inv(4, 'A-1', 'L1', 4));
    now += 10_000;
    i.tick();
    i.commitAll();
    expect(committed('stock')['tilstand.hwm.inventory/stock']).toBe('4');
    const stockPosition = BigInt(committed('stock')['tilstand.journal.position']!);
    crash(i);
    new Catalog(join(dir, 'warehouse')).getTable({ database: DB, table: 'dead_letters' }).rollbackTo(lettersAtHwm1);
    expect(committed('dead_letters')['tilstand.hwm.inventory/stock']).toBe('1');

    // Run 2: the sequencer starts at min(stock 4, dead_letters 1) = 1, so 3 and 4 are held again;
    // another module's event makes stock commit meanwhile.
    const j = start(gapSkipAfter10s);
    expect(j.health().heldEvents).toBe(2);
    await j.accept(topic('commerce', 'reservations'), res(1, 'A-1', 'L1', 2));
    j.commitAll();
    expect(committed('stock')['tilstand.hwm.inventory/stock']).toBe('4'); // was 1
    expect(BigInt(committed('stock')['tilstand.journal.position']!)).toBeGreaterThanOrEqual(stockPosition);
    crash(j);

    // Run 3: the skip releases 3 and 4 again; stock holds them and writes nothing.
    const k = start(gapSkipAfter10s);
    now += 10_000;
    k.tick();
    expect(statusOf(k, 'stock').pendingEvents).toBe(0);
  });

  it('a dismissed dead letter of such a run is not reopened after a second crash', async () => {
    const i = start(gapSkipAfter10s);
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 1));
    i.commitAll(); // stock: hwm 1
    i.tick();
    const bad = await i.accept(topic('inventory', 'stock'), badQty(3));
    await i.accept(topic('inventory', 'stock'), inv(4, 'A-1', 'L1', 4));
    now += 10_000;
    i.tick(); // the skip: seq 3 → a dead letter (committed at once), seq 4 → stock (pending)
    expect(i.deadLetterCount()).toBe(1);
    crash(i);

    const j = start(gapSkipAfter10s); // sequencer at min(stock 1, dead_letters 4) = 1: 3 and 4 held again
    expect(j.dismissDeadLetters([bad], 'reviewer', 'test message')).toEqual({ dismissed: 1, notOpen: [] });
    expect(committed('dead_letters')['tilstand.hwm.inventory/stock']).toBe('4');
    crash(j);

    const k = start(gapSkipAfter10s);
    now += 10_000;
    k.tick(); // the skip releases seq 3 again
    expect({ open: k.deadLetterCount(), status: k.listDeadLetters().map((d) => d.status) }).toEqual({ open: 0, status: ['dismissed'] });
  });

  it('purges a closed letter after a held event only once the gap closed, and a crash does not bring it back', async () => {
    const waitForever = { sequencer: { gap_give_up_ms: Infinity } };
    const i = start(waitForever);
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 1));
    await i.accept(topic('inventory', 'stock'), inv(3, 'A-1', 'L1', 3)); // held: 2 is missing
    const p = await i.accept(topic('inventory', 'stock'), Buffer.from('{not json')); // unsequenced
    i.commitAll();
    expect(i.dismissDeadLetters([p], 'reviewer', 'garbage')).toMatchObject({ dismissed: 1 });
    now += 1_000;
    // dead_letters' position stops before the held event: the letter is not purged yet.
    expect(await i.purgeClosedDeadLetters(now)).toMatchObject({ purged: 0 });
    crash(i);

    const j = start(waitForever);
    expect(j.listDeadLetters().map((d) => `${d.position} ${d.status}`)).toEqual([`${p} dismissed`]);
    await j.accept(topic('inventory', 'stock'), inv(2, 'A-1', 'L1', 2)); // the gap closes: 2 and 3 applied
    j.commitAll();
    expect(await j.purgeClosedDeadLetters(now)).toMatchObject({ purged: 1 });
    expect(j.listDeadLetters()).toEqual([]);
    crash(j);

    const k = start(waitForever);
    expect(k.listDeadLetters()).toEqual([]);
  });
});

describe('Ingestor: an event of an older contract version under a binding of the latest', () => {
  // Modules and Tilstand upgrade independently (CONTRACTS.md): a binding is checked against a
  // contract's latest version, and an event of an older version is read as the latest.
  it('maps a field the latest version added with a default to that default', async () => {
    contracts.register({ ...INVENTORY_STOCK, version: 2, fields: [...INVENTORY_STOCK.fields, { name: 'note', type: 'STRING', default: null }] });
    const notes: TableDefinition = {
      name: 'notes',
      fields: [
        { id: 0, name: 'item', type: 'STRING NOT NULL' },
        { id: 1, name: 'qty', type: 'INT' },
        { id: 2, name: 'note', type: 'STRING' },
      ],
      partitionKeys: [],
      primaryKeys: ['item'],
      options: { bucket: '1', 'merge-engine': 'deduplicate' },
    };
    const toNotes: Binding = { name: 'inventory→notes', topic: 'tilstand/+/events/inventory/notes', contract: 'inventory.stock', table: 'notes', columns: { item: 'after.item', qty: 'after.qty', note: 'after.note' } };
    const i = start({ bindings: [...SEED_BINDINGS, toNotes], tables: [...SEED_TABLES, notes], budgets: [{ table: 'notes', budgetMs: 60_000, decision: 'test', confirmedBy: 'test' }] });
    // The inventory module still publishes v1.
    await i.accept(topic('inventory', 'notes'), event('inventory', 'notes', 1, { item: 'A-1', location: 'L1', qty: 3 }, { name: 'inventory.stock', version: 1 }));
    i.commitAll();
    expect(i.listDeadLetters().map((d) => `${d.reason}: ${d.detail}`)).toEqual([]); // was a binding_error: 'after.note' is absent
    expect(row('notes', { item: 'A-1' })).toEqual({ item: 'A-1', qty: 3, note: null });
  });
});

describe('Ingestor: a later contract version drops a mapped field that had a default', () => {
  // FULL_TRANSITIVE lets operations.jobs v2 drop `blocked_reason` (v1 gave it `"default": null`):
  // "a field a binding maps can never vanish without a default" (CONTRACTS.md) — the default is
  // what the binding reads. Every v2 event became a binding_error dead letter (absent path), and
  // the next start refused the seed binding (the latest version has no such field): ingest down.
  const OPERATIONS_JOBS_V1: Contract = SEED_CONTRACTS.find((c) => c.name === 'operations.jobs')!;
  const v2: Contract = { ...OPERATIONS_JOBS_V1, version: 2, fields: OPERATIONS_JOBS_V1.fields.filter((f) => f.name !== 'blocked_reason') };
  const jobV2 = (seq: number, job_id: string) =>
    event('operations', 'jobs', seq, { job_id, status: 'released', capability: 'forklift', priority: 5 }, { name: 'operations.jobs', version: 2 });

  it('reads the default for it, registered while running and after a restart; v1 events keep their value', async () => {
    const i = start();
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1', { status: 'blocked', blocked_reason: 'no material' }));
    contracts.register(v2); // the module vendor's new version, added while the site runs
    await i.accept(topic('operations', 'jobs'), jobV2(2, 'J-2'));
    i.commitAll();
    expect(i.listDeadLetters().map((d) => `${d.reason}: ${d.detail}`)).toEqual([]);
    expect(row('work_queue', { job_id: 'J-1' })).toMatchObject({ status: 'blocked', blocked_reason: 'no material', ops_seq: 1 });
    expect(row('work_queue', { job_id: 'J-2' })).toMatchObject({ status: 'released', blocked_reason: null, priority: 5, ops_seq: 2 });
    stop(i);

    const j = start(); // the seed binding still maps after.blocked_reason
    await j.accept(topic('operations', 'jobs'), jobV2(3, 'J-3'));
    await j.accept(topic('operations', 'jobs'), job(4, 'J-4', { status: 'blocked', blocked_reason: 'waiting' })); // a module rolled back to v1
    j.commitAll();
    expect(j.listDeadLetters()).toEqual([]);
    expect(row('work_queue', { job_id: 'J-3' })).toMatchObject({ blocked_reason: null, ops_seq: 3 });
    expect(row('work_queue', { job_id: 'J-4' })).toMatchObject({ blocked_reason: 'waiting', ops_seq: 4 });
  });
});

describe('Ingestor: tables that hold journal positions the journal does not (a restore from HQ, a journal.db lost or restored from an older copy)', () => {
  /** Replaces journal.db by `replacement` (a fresh journal when absent), as a restore onto a new PC leaves it. */
  function swapJournal(replacement?: string): void {
    journal.close();
    for (const f of ['journal.db', 'journal.db-wal', 'journal.db-shm']) rmSync(join(dir, f), { force: true });
    if (replacement !== undefined) cpSync(replacement, join(dir, 'journal.db'));
    journal = Journal.open(dir);
  }

  it('numbers new events after every table’s position: a module’s resend after a restore is applied (numbered from 1 again, the first stopped ingest for good)', async () => {
    const i = start();
    for (let s = 1; s <= 5; s++) await i.accept(topic('inventory', 'stock'), inv(s, 'A-1', 'L1', s));
    await i.accept(topic('operations', 'jobs'), job(1, 'J-1'));
    stop(i); // every table committed through position 6
    swapJournal(); // the new PC's journal.db starts empty; the tables came from HQ

    const warnings: string[] = [];
    const j = start({ onWarning: (w) => warnings.push(w) });
    // The modules resend what came after the restored high-water marks.
    const p = await j.accept(topic('inventory', 'stock'), inv(6, 'A-1', 'L1', 6));
    await j.accept(topic('operations', 'jobs'), job(2, 'J-2'));
    expect(p).toBe(7n);
    j.commitAll();
    expect(j.health().failure).toBeNull();
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 6, inventory_seq: 6 });
    expect(row('work_queue', { job_id: 'J-2' })).toMatchObject({ ops_seq: 2 });
    expect(warnings.join('\n')).toMatch(/journal\.db ends at position 0, before every table's .*numbered after 6/);
    stop(j);
    // The journal reads on across the positions it never had, and a restart replays nothing twice.
    expect([...journal.readAfter(0n)].map((e) => e.position)).toEqual([7n, 8n]);
    const k = start();
    expect(k.health()).toMatchObject({ failure: null, recoveredEvents: 0 });
  });

  it('a journal.db older than every table (restored from a copy): new events are applied after the tables’ position', async () => {
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1, 'A-1', 'L1', 1));
    stop(i);
    journal.close();
    const older = join(dir, 'older-journal.db');
    cpSync(join(dir, 'journal.db'), older); // closed: the WAL is checkpointed into the file
    journal = Journal.open(dir);
    const i2 = start();
    for (let s = 2; s <= 4; s++) await i2.accept(topic('inventory', 'stock'), inv(s, 'A-1', 'L1', s));
    stop(i2); // tables through position 4
    swapJournal(older); // journal.db ends at position 1

    const j = start();
    await j.accept(topic('inventory', 'stock'), inv(5, 'A-1', 'L1', 5));
    j.commitAll();
    expect(j.health().failure).toBeNull();
    expect(row('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 5, inventory_seq: 5 });
  });
});
