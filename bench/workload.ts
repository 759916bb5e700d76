// The benchmark workload: a deterministic, seeded stream of stock events (partial updates).
//
// Keys: (item, location); `keys` distinct keys = keys/5 items × 5 locations. A fraction `hotKeys`
// (20 %) of the keys takes `hotShare` (80 %) of the events; hot keys are spread over the key space
// by a fixed permutation so they do not cluster in sort order. Each event sets one column group of
// the stock table — on_hand (inventory/stock), reserved (commerce/reservations) or inbound
// (procurement/inbound) — with that stream's own sequence number (1, 2, 3, … per stream). Payloads
// are the JSON envelopes modules publish (core/ingest/envelope.ts; contract version 1).
//
// Everything is a pure function of (seed, keys, events): two runs produce identical bytes.

import { mulberry32 as prng } from '../core/lsm/testing/prng.ts';

/** mulberry32 (core/lsm/testing/prng.ts), under the name the benchmark's tasks import. */
export { prng };

export const SITE = 's1';
export const T0_MS = Date.UTC(2026, 11, 1, 8, 0, 0);

export interface WorkloadSpec {
  seed: number;
  keys: number;
  events: number;
  /** Fraction of keys that are hot (default 0.2). */
  hotKeys?: number;
  /** Fraction of events that go to hot keys (default 0.8). */
  hotShare?: number;
  /** The first `keys` events visit every key once (permuted order): a state of exactly `keys` rows. */
  initialLoad?: boolean;
}

export const MODULES = [
  { module: 'inventory', stream: 'stock', contract: 'inventory.stock', qtyField: 'qty', column: 'on_hand', seqColumn: 'inventory_seq' },
  { module: 'commerce', stream: 'reservations', contract: 'commerce.reservations', qtyField: 'reserved_qty', column: 'reserved', seqColumn: 'commerce_seq' },
  { module: 'procurement', stream: 'inbound', contract: 'procurement.inbound', qtyField: 'inbound_qty', column: 'inbound', seqColumn: 'procurement_seq' },
] as const;

export const TOPICS = MODULES.map((m) => `tilstand/${SITE}/events/${m.module}/${m.stream}`);

export const LOCATIONS_PER_ITEM = 5;

/** The (item, location) of key index k. */
export function keyOf(k: number): { item: string; location: string } {
  const item = Math.floor(k / LOCATIONS_PER_ITEM);
  return { item: `ITEM-${String(item).padStart(7, '0')}`, location: `LOC-${String(k % LOCATIONS_PER_ITEM).padStart(2, '0')}` };
}

/** A permutation of 0..n-1 (multiplication by a prime that does not divide n). */
function permuter(n: number): (i: number) => number {
  const primes = [7919, 104729, 1299709, 15485863];
  const p = primes.find((q) => n % q !== 0 && gcd(q, n) === 1) ?? 1;
  return (i) => Number((BigInt(i) * BigInt(p)) % BigInt(n));
}
function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

export interface WorkloadEvent {
  /** Index into MODULES / TOPICS. */
  m: number;
  key: number;
  seq: number;
  qty: number;
  payload: string;
}

/** The events, in order. Streaming: memory does not grow with `events`. */
export function* generateEvents(spec: WorkloadSpec): Generator<WorkloadEvent> {
  const rnd = prng(spec.seed);
  const hotN = Math.max(1, Math.floor(spec.keys * (spec.hotKeys ?? 0.2)));
  const hotShare = spec.hotShare ?? 0.8;
  const perm = permuter(spec.keys);
  const seqs = [0, 0, 0];
  for (let i = 0; i < spec.events; i++) {
    const m = Math.floor(rnd() * 3);
    const hot = rnd() < hotShare;
    const idx = spec.initialLoad && i < spec.keys ? i : hot ? Math.floor(rnd() * hotN) : hotN + Math.floor(rnd() * (spec.keys - hotN));
    const key = perm(Math.min(idx, spec.keys - 1));
    const qty = Math.floor(rnd() * 1000);
    const seq = ++seqs[m]!;
    const d = MODULES[m]!;
    const { item, location } = keyOf(key);
    const payload = JSON.stringify({
      op: 'u',
      before: null,
      after: { item, location, [d.qtyField]: qty },
      source: { module: d.module, stream: d.stream, seq },
      ts_ms: T0_MS + i,
      contract: { name: d.contract, version: 1 },
    });
    yield { m, key, seq, qty, payload };
  }
}

/** Events packed for replay without generation cost: payload bytes, offsets, module index per event. */
export interface PackedWorkload {
  spec: WorkloadSpec;
  count: number;
  bytes: Buffer;
  /** offsets[i]..offsets[i+1] is event i's payload. */
  offsets: Float64Array;
  modules: Uint8Array;
}

export function packWorkload(spec: WorkloadSpec): PackedWorkload {
  const offsets = new Float64Array(spec.events + 1);
  const modules = new Uint8Array(spec.events);
  let cap = Math.max(1024, spec.events * 220);
  let bytes = Buffer.allocUnsafe(cap);
  let off = 0;
  let i = 0;
  for (const e of generateEvents(spec)) {
    const need = Buffer.byteLength(e.payload);
    if (off + need > cap) {
      cap = Math.max(cap * 2, off + need);
      const nb = Buffer.allocUnsafe(cap);
      bytes.copy(nb, 0, 0, off);
      bytes = nb;
    }
    off += bytes.write(e.payload, off, 'utf8');
    modules[i] = e.m;
    offsets[++i] = off;
  }
  return { spec, count: spec.events, bytes: bytes.subarray(0, off), offsets, modules };
}

/** File form: 16-byte header (magic, count), modules, offsets (f64), payload bytes; spec in a JSON sidecar. */
export function serializeWorkload(w: PackedWorkload): Buffer[] {
  const header = Buffer.alloc(16);
  header.write('TSWL', 0, 'latin1');
  header.writeUInt32LE(1, 4);
  header.writeDoubleLE(w.count, 8);
  return [header, Buffer.from(w.modules.buffer, w.modules.byteOffset, w.modules.byteLength), Buffer.from(w.offsets.buffer, w.offsets.byteOffset, w.offsets.byteLength), w.bytes];
}

export function deserializeWorkload(spec: WorkloadSpec, file: Buffer): PackedWorkload {
  if (file.toString('latin1', 0, 4) !== 'TSWL') throw new Error('not a workload file');
  const count = file.readDoubleLE(8);
  let p = 16;
  const modules = new Uint8Array(file.buffer, file.byteOffset + p, count);
  p += count;
  const offsets = new Float64Array(count + 1); // copied: the file's bytes need not be 8-aligned
  new Uint8Array(offsets.buffer).set(file.subarray(p, p + (count + 1) * 8));
  p += (count + 1) * 8;
  return { spec, count, bytes: file.subarray(p), offsets, modules };
}

export function payloadAt(w: PackedWorkload, i: number): Buffer {
  return w.bytes.subarray(w.offsets[i]!, w.offsets[i + 1]!);
}
