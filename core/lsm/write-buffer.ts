// The write buffer of one (partition, bucket): records merged per key as they arrive, so a flush
// writes one record per key (Paimon's SortBufferWriteBuffer with its merge function). Records of
// a key arrive in sequence order, so they fold on arrival; a table with `sequence.field` keeps
// every record of a key instead and folds them in user-sequence order at flush.
//
// Sizes are estimates of JS heap bytes; the table writer flushes all buffers when their sum
// passes `write-buffer-size`.

import type { KeyValue } from './key-value.ts';
import type { MergeFunction } from './merge/merge-function.ts';
import type { DataType } from './types.ts';

const RECORD_OVERHEAD_BYTES = 96;

export function estimateValueBytes(v: unknown): number {
  if (v === null || v === undefined) return 8;
  switch (typeof v) {
    case 'string':
      return 16 + v.length * 2;
    case 'bigint':
      return 24;
    case 'object':
      return v instanceof Uint8Array ? 64 + v.length : 32;
    default:
      return 8;
  }
}

export function estimateRecordBytes(kv: KeyValue): number {
  let n = RECORD_OVERHEAD_BYTES;
  for (const x of kv.value) n += estimateValueBytes(x);
  for (const x of kv.key) n += estimateValueBytes(x);
  return n;
}

/** A string that is equal for equal keys of one table (types are fixed per position). */
export function keyStringFn(keyTypes: readonly DataType[]): (key: unknown[]) => string {
  const part = (v: unknown): string => {
    if (typeof v === 'string') return v;
    if (v instanceof Uint8Array) return Buffer.from(v).toString('latin1');
    if (typeof v === 'number' && Object.is(v, -0)) return '-0';
    return String(v);
  };
  if (keyTypes.length === 1) return (key) => part(key[0]);
  return (key) => {
    let s = '';
    for (const v of key) {
      const p = part(v);
      s += `${p.length}:${p}`;
    }
    return s;
  };
}

export class WriteBuffer {
  /** Folded record per key, or (with sequence fields) every record of the key. */
  private readonly records = new Map<string, KeyValue | KeyValue[]>();
  /** Fold results whose row arrays the buffer owns (nobody else holds them), foldable in place. */
  private owned = new WeakSet<KeyValue>();
  private bytes = 0;
  private minSeq = Number.MAX_SAFE_INTEGER;
  private maxSeq = -1;

  constructor(
    private readonly keyString: (key: unknown[]) => string,
    private readonly merge: MergeFunction,
    private readonly keepAll: boolean,
    /** Called when a fold needs the records below to stay separate (see PartialUpdateMergeFunction). */
    private readonly mustSplit: (() => boolean) | undefined,
  ) {}

  get size(): number {
    return this.records.size;
  }
  get estimatedBytes(): number {
    return this.bytes;
  }
  get isEmpty(): boolean {
    return this.records.size === 0;
  }
  get sequenceRange(): [number, number] {
    return [this.minSeq, this.maxSeq];
  }

  /**
   * Adds one record. Returns false (and adds nothing) when the record cannot be folded into what
   * the buffer holds for its key; the caller then flushes and adds it again.
   */
  add(kv: KeyValue): boolean {
    const k = this.keyString(kv.key);
    const held = this.records.get(k);
    if (held === undefined) {
      this.records.set(k, this.keepAll ? [kv] : kv);
      this.bytes += estimateRecordBytes(kv);
    } else if (Array.isArray(held)) {
      held.push(kv);
      this.bytes += estimateRecordBytes(kv);
    } else if (this.owned.has(held) && this.merge.foldInto?.(held, kv)) {
      // In place: `held` is an earlier fold result the buffer owns.
    } else {
      this.merge.reset();
      this.merge.add(held);
      this.merge.add(kv);
      if (this.mustSplit?.()) return false;
      const merged = this.merge.result();
      if (merged === undefined) this.records.delete(k);
      else {
        this.records.set(k, merged);
        if (merged !== kv && merged !== held && merged.value !== kv.value && merged.value !== held.value) this.owned.add(merged);
      }
    }
    if (kv.seq < this.minSeq) this.minSeq = kv.seq;
    if (kv.seq > this.maxSeq) this.maxSeq = kv.seq;
    return true;
  }

  /** Point lookup of the buffered (unflushed) state of a key — the raw records, oldest first. */
  get(key: unknown[]): KeyValue[] | undefined {
    const held = this.records.get(this.keyString(key));
    if (held === undefined) return undefined;
    return Array.isArray(held) ? held : [held];
  }

  /**
   * The buffer's content as one sorted run: one record per key, sorted by key. Folds kept lists
   * in `order`. Leaves the buffer empty.
   */
  drain(compareKeys: (a: unknown[], b: unknown[]) => number, order: (a: KeyValue, b: KeyValue) => number): KeyValue[] {
    const out: KeyValue[] = [];
    for (const held of this.records.values()) {
      if (!Array.isArray(held)) {
        out.push(held);
        continue;
      }
      held.sort(order);
      this.merge.reset();
      for (const kv of held) this.merge.add(kv);
      const r = this.merge.result();
      if (r !== undefined) out.push(r);
    }
    out.sort((a, b) => compareKeys(a.key, b.key));
    this.records.clear();
    this.owned = new WeakSet();
    this.bytes = 0;
    this.minSeq = Number.MAX_SAFE_INTEGER;
    this.maxSeq = -1;
    return out;
  }

  /** Every buffered record in no particular order (for reads that include unflushed data). */
  *entries(): Iterable<KeyValue[]> {
    for (const held of this.records.values()) yield Array.isArray(held) ? held : [held];
  }
}
