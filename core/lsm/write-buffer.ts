// The write buffer of one (partition, bucket): records merged per key as they arrive, so a flush
// writes one record per key (Paimon's SortBufferWriteBuffer with its merge function). Records of
// a key arrive in sequence order, so they fold on arrival; a table with `sequence.field` keeps
// every record of a key instead and folds them in user-sequence order at flush, cut into several
// runs where a fold could not stand in for its records (`drainRuns`).
//
// Layout (for speed and memory, see DESIGN.md "Performance"): every distinct key gets a slot
// number; a slot's key values, row, sequence number, kind and "owned" flag live in parallel
// arrays, so a buffered key costs its row array plus a few array cells — no KeyValue object, no
// key array, no key string. Keys find their slot through a per-arity index: one Map for one key
// column, a Map of first column → slot (or → Map of second column → slot) for two, a Map of a
// length-prefixed key string for more. The hot fold (`MergeFunction.foldInto`) runs on scratch
// KeyValues, so folding a record into a held row allocates nothing.
//
// Sizes are estimates of JS heap bytes, calibrated against measured heap growth (DESIGN.md); the
// table writer flushes all buffers when their sum passes `write-buffer-size`.

import { RunBuilder } from './compaction/run-builder.ts';
import { runFromRecords, type RunData } from './data-file.ts';
import type { KeyValue, RowKind } from './key-value.ts';
import type { MergeFunction } from './merge/merge-function.ts';
import { comparatorFor, type Comparator, type DataType } from './types.ts';

/** Per buffered key: index entry, slot cells (key refs, seq, kind, flags) and the row array header. */
const SLOT_OVERHEAD_BYTES = 120;
/** Per record kept in a list (tables with `sequence.field`): KeyValue, key array, row header. */
const LIST_RECORD_OVERHEAD_BYTES = 160;

/** Heap bytes of one value beyond its 8-byte array cell (strings: one-byte form assumed). */
export function estimateValueBytes(v: unknown): number {
  if (v === null || v === undefined) return 8;
  switch (typeof v) {
    case 'string':
      return 8 + ((16 + v.length + 7) & ~7);
    case 'bigint':
      return 32;
    case 'number':
      return (v | 0) === v ? 8 : 24; // a Smi lives in the cell; anything else is a HeapNumber
    case 'object':
      return v instanceof Uint8Array ? 8 + 96 + v.length : 40;
    default:
      return 8;
  }
}

export function estimateRowBytes(row: readonly unknown[]): number {
  let n = 32 + 16; // JSArray + FixedArray headers
  for (let i = 0; i < row.length; i++) n += estimateValueBytes(row[i]);
  return n;
}

export function estimateRecordBytes(kv: KeyValue): number {
  return LIST_RECORD_OVERHEAD_BYTES + estimateRowBytes(kv.value);
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

/**
 * A Map key that is equal (SameValueZero) exactly for equal key values of one column type:
 * -0 is kept apart from 0 (the key orders differ), bytes compare by content.
 */
function mapKey(v: unknown): unknown {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return v === 0 && 1 / v < 0 ? '-0' : v;
  if (typeof v === 'bigint' || typeof v === 'boolean') return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('latin1');
  return String(v);
}

const sameMapKey = (a: unknown, b: unknown): boolean => a === b || (a !== a && b !== b);

/** Code units from here up sort differently in UTF-16 and in UTF-8 (surrogates vs U+E000…). */
const HIGH_UNITS = /[\uD800-\uFFFF]/;
/** Native string order, equal to UTF-8 byte order when neither string holds a unit ≥ U+D800. */
const compareLowStrings: Comparator = (a, b) => (a === b ? 0 : (a as string) < (b as string) ? -1 : 1);

const EMPTY_KEY: unknown[] = [];

/** Up to this many keys under one first value are ordered by insertion sort in `drain`. */
const SMALL_SORT = 16;

export class WriteBuffer {
  private readonly arity: number;
  private readonly k0: number;
  private readonly k1: number;
  private readonly keyString: ((key: unknown[]) => string) | undefined;
  /** arity 1: value → slot; arity 2: first value → slot | Map(second value → slot); more: key string → slot. */
  private readonly index = new Map<unknown, number | Map<unknown, number>>();
  /** arity 2: the second map key of the slot a first value maps to directly. */
  private second: unknown[] = [];
  /** Per key column, the key value per slot. */
  private keyCols: unknown[][];
  /** Per slot: the held row (undefined: the key was removed by a fold). */
  private rows: Array<unknown[] | undefined> = [];
  private seqs: number[] = [];
  /** Per slot: row kind | 4 when the buffer owns the row (an earlier fold result, foldable in place). */
  private flags: number[] = [];
  /** Per slot, with sequence fields: every record of the key. */
  private lists: KeyValue[][] = [];
  private live = 0;
  private bytes = 0;
  private minSeq = Number.MAX_SAFE_INTEGER;
  private maxSeq = -1;
  /** Per key column: every string seen is free of units ≥ U+D800, so native order is byte order. */
  private lowStrings: boolean[];
  private readonly stringKey: boolean[];
  private readonly keyCmps: Comparator[];
  /** drainRuns' scratch: the fold of the key `foldList` folded as one. */
  private folded: KeyValue | undefined;
  // Scratch records for the in-place fold (never retained by foldInto); accKv also for foldSortsAtLast.
  private readonly accKv: KeyValue = { key: EMPTY_KEY, seq: 0, kind: 0, value: EMPTY_KEY };
  private readonly inKv: KeyValue = { key: EMPTY_KEY, seq: 0, kind: 0, value: EMPTY_KEY };

  constructor(
    private readonly keyIndexes: readonly number[],
    keyTypes: readonly DataType[],
    private readonly merge: MergeFunction,
    private readonly keepAll: boolean,
    /**
     * The merge function's `resetThenAdded`: true when the fold so far needs the records below it
     * to stay separate (see PartialUpdateMergeFunction). `add` then refuses (the caller flushes);
     * with `keepAll`, `drainRuns` cuts the key's records there.
     */
    private readonly mustSplit: (() => boolean) | undefined,
    /**
     * The table's column types: `drainRuns` then builds its first run straight into packed
     * columns (compaction/run-builder.ts), the form the run cache keeps, instead of a JS array
     * per column that the cache then packs — about half the bytes at a flush, and no second copy.
     */
    private readonly valueTypes?: readonly DataType[],
  ) {
    this.arity = keyIndexes.length;
    this.k0 = keyIndexes[0] ?? -1;
    this.k1 = keyIndexes[1] ?? -1;
    this.keyString = this.arity > 2 ? keyStringFn(keyTypes) : undefined;
    this.keyCols = keyIndexes.map(() => []);
    this.keyCmps = keyTypes.map(comparatorFor);
    this.stringKey = keyTypes.map((t) => t.root === 'STRING' || t.root === 'VARCHAR' || t.root === 'CHAR');
    this.lowStrings = keyTypes.map(() => true);
  }

  get size(): number {
    return this.live;
  }
  get estimatedBytes(): number {
    return this.bytes;
  }
  get isEmpty(): boolean {
    return this.live === 0;
  }
  get sequenceRange(): [number, number] {
    return [this.minSeq, this.maxSeq];
  }

  /** The slot of the row's key, or -1 when the key has none yet (then `newSlot` makes one). */
  private find(row: readonly unknown[]): number {
    if (this.arity === 1) {
      const s = this.index.get(mapKey(row[this.k0]));
      return s === undefined ? -1 : (s as number);
    }
    if (this.arity === 2) {
      const h = this.index.get(mapKey(row[this.k0]));
      if (h === undefined) return -1;
      const b = mapKey(row[this.k1]);
      if (typeof h === 'number') return sameMapKey(this.second[h], b) ? h : -1;
      const s = h.get(b);
      return s === undefined ? -1 : s;
    }
    const key = this.keyIndexes.map((i) => row[i]);
    const s = this.index.get(this.keyString!(key));
    return s === undefined ? -1 : (s as number);
  }

  private newSlot(row: readonly unknown[]): number {
    const slot = this.rows.length;
    this.rows.push(undefined);
    this.seqs.push(0);
    this.flags.push(0);
    if (this.keepAll) this.lists.push([]);
    for (let k = 0; k < this.arity; k++) {
      const v = row[this.keyIndexes[k]!];
      this.keyCols[k]!.push(v);
      if (this.stringKey[k] && this.lowStrings[k] && typeof v === 'string' && HIGH_UNITS.test(v)) this.lowStrings[k] = false;
    }
    if (this.arity === 1) this.index.set(mapKey(row[this.k0]), slot);
    else if (this.arity === 2) {
      const a = mapKey(row[this.k0]);
      const b = mapKey(row[this.k1]);
      const h = this.index.get(a);
      this.second.push(b);
      if (h === undefined) this.index.set(a, slot);
      else if (typeof h === 'number') this.index.set(a, new Map<unknown, number>([[this.second[h], h], [b, slot]]));
      else h.set(b, slot);
    } else this.index.set(this.keyString!(this.keyIndexes.map((i) => row[i])), slot);
    this.bytes += SLOT_OVERHEAD_BYTES + (this.keepAll ? 8 : 0);
    return slot;
  }

  private keyOf(slot: number): unknown[] {
    const key = new Array(this.arity);
    for (let k = 0; k < this.arity; k++) key[k] = this.keyCols[k]![slot];
    return key;
  }

  /**
   * Adds one record (`row`: every column in schema order; the buffer keeps the array, the caller
   * must not change it). Returns false (and adds nothing) when the record cannot be folded into
   * what the buffer holds for its key; the caller then flushes and adds it again.
   */
  add(row: unknown[], seq: number, kind: RowKind): boolean {
    let slot = this.find(row);
    if (slot < 0) slot = this.newSlot(row);
    if (this.keepAll) {
      const list = this.lists[slot]!;
      if (list.length === 0) this.live++;
      list.push({ key: this.keyOf(slot), seq, kind, value: row });
      this.bytes += estimateRecordBytes(list[list.length - 1]!);
    } else {
      const held = this.rows[slot];
      const flags = this.flags[slot]!;
      if (held === undefined) {
        this.rows[slot] = row;
        this.seqs[slot] = seq;
        this.flags[slot] = kind;
        this.live++;
        this.bytes += estimateRowBytes(row);
      } else if (flags & 4 && this.merge.foldInto !== undefined && this.foldInPlace(slot, held, flags & 3, row, seq, kind)) {
        // In place: the held row is an earlier fold result the buffer owns.
      } else {
        const heldKv: KeyValue = { key: this.keyOf(slot), seq: this.seqs[slot]!, kind: (flags & 3) as RowKind, value: held };
        const kv: KeyValue = { key: heldKv.key, seq, kind, value: row };
        this.merge.reset();
        this.merge.add(heldKv);
        this.merge.add(kv);
        if (this.mustSplit?.()) return false;
        const merged = this.merge.result();
        if (merged === undefined) {
          this.rows[slot] = undefined;
          this.live--;
        } else {
          const owned = merged !== kv && merged !== heldKv && merged.value !== row && merged.value !== held;
          if (merged.value !== held) this.bytes += estimateRowBytes(merged.value) - estimateRowBytes(held);
          this.rows[slot] = merged.value;
          this.seqs[slot] = merged.seq;
          this.flags[slot] = merged.kind | (owned ? 4 : 0);
        }
      }
    }
    if (seq < this.minSeq) this.minSeq = seq;
    if (seq > this.maxSeq) this.maxSeq = seq;
    if (this.live === 0) this.clear(); // the only key was removed: nothing to flush
    return true;
  }

  private foldInPlace(slot: number, held: unknown[], heldKind: number, row: unknown[], seq: number, kind: RowKind): boolean {
    const acc = this.accKv;
    const kv = this.inKv;
    acc.seq = this.seqs[slot]!;
    acc.kind = heldKind as RowKind;
    acc.value = held;
    kv.seq = seq;
    kv.kind = kind;
    kv.value = row;
    const ok = this.merge.foldInto!(acc, kv);
    if (ok) {
      this.seqs[slot] = acc.seq;
      this.flags[slot] = acc.kind | 4;
    }
    acc.value = EMPTY_KEY;
    kv.value = EMPTY_KEY;
    return ok;
  }

  /**
   * The buffer's content as one sorted run (one record per key, sorted by key), or undefined when
   * no key stands. Leaves the buffer empty. Only for buffers that never split a key's records
   * (no `sequence.field`, where `add` already flushes before an unsafe fold); else `drainRuns`.
   */
  drain(valueArity: number, order: (a: KeyValue, b: KeyValue) => number): RunData | undefined {
    const runs = this.drainRuns(valueArity, order);
    if (runs.length > 1) throw new Error(`assertion failed: the write buffer drained ${runs.length} runs; use drainRuns`);
    return runs[0];
  }

  /**
   * The buffer's content as sorted runs, to be written as consecutive level-0 files: usually one
   * (one record per key, sorted by key), none when no key stands. Leaves the buffer empty.
   *
   * With `sequence.field` the buffer folds each key's kept records here, in `order`. Where the
   * merge function says a fold could not stand in for its inputs (`resetThenAdded`, the check `add`
   * makes at arrival without sequence fields), the key's sorted records are cut into parts
   * folded apart, part p of every key going to run p; a part of one record is that record. Each
   * part keeps its last record's place in merge order (`foldList`), so readers and compactions
   * fold the parts (and older files) exactly as they would fold the records.
   */
  drainRuns(valueArity: number, order: (a: KeyValue, b: KeyValue) => number): RunData[] {
    const n = this.rows.length;
    // Per slot with more than one part: its parts (oldest first), when some key was cut.
    let parts: Map<number, KeyValue[]> | undefined;
    if (this.keepAll) {
      for (let s = 0; s < n; s++) {
        const list = this.lists[s]!;
        if (list.length === 0) continue;
        list.sort(order);
        const cut = this.foldList(list, order);
        const r = cut === undefined ? this.folded : cut[0];
        this.folded = undefined;
        if (r !== undefined) {
          this.rows[s] = r.value;
          this.seqs[s] = r.seq;
          this.flags[s] = r.kind;
        }
        if (cut !== undefined && cut.length > 1) (parts ??= new Map()).set(s, cut);
      }
    }
    const cols = this.keyCols;
    const cmps = this.keyCmps.map((c, k) => (this.stringKey[k] && this.lowStrings[k] ? compareLowStrings : c));
    const twoLevel = this.arity === 2 && this.stringKey[0]! && this.lowStrings[0]!;
    // The live slots in key order.
    const perm = twoLevel ? this.sortedByFirstString(cmps[1]!, cols[1]!) : this.sortedSlots(cmps, cols);
    const m = perm.length;
    const runs: RunData[] = m === 0 ? [] : [this.valueTypes && this.valueTypes.length === valueArity ? this.packedRun(perm, this.valueTypes) : this.arrayRun(perm, valueArity)];
    if (parts !== undefined) {
      // Later parts, each run in key order (perm holds every cut key: its first part stands).
      const later: KeyValue[][] = [];
      for (let j = 0; j < m; j++) {
        const ps = parts.get(perm[j]!);
        if (ps === undefined) continue;
        for (let p = 1; p < ps.length; p++) (later[p - 1] ??= []).push(ps[p]!);
      }
      for (const records of later) runs.push(runFromRecords(records, this.arity, valueArity));
    }
    this.clear();
    return runs;
  }

  /** The slots `perm` (in key order) as a run of JS arrays. */
  private arrayRun(perm: ArrayLike<number>, valueArity: number): RunData {
    const m = perm.length;
    const keyCols = this.keyCols.map((c) => {
      const out = new Array(m);
      for (let j = 0; j < m; j++) out[j] = c[perm[j]!];
      return out;
    });
    const seq = new Array<number>(m);
    const kind = new Array<number>(m);
    const valueCols: unknown[][] = [];
    for (let c = 0; c < valueArity; c++) valueCols.push(new Array(m));
    for (let j = 0; j < m; j++) {
      const s = perm[j]!;
      const row = this.rows[s]!;
      seq[j] = this.seqs[s]!;
      kind[j] = this.flags[s]! & 3;
      for (let c = 0; c < valueArity; c++) valueCols[c]![j] = row[c] ?? null;
    }
    return { rowCount: m, keyCols, seq, kind, valueCols };
  }

  /** The slots `perm` (in key order) as a run in packed columns: the same cells (RunBuilder). */
  private packedRun(perm: ArrayLike<number>, types: readonly DataType[]): RunData {
    const m = perm.length;
    const builder = new RunBuilder(types, this.keyIndexes, m);
    const cols = this.keyCols;
    const kv: KeyValue = { key: new Array(this.arity), seq: 0, kind: 0 as RowKind, value: EMPTY_KEY };
    for (let j = 0; j < m; j++) {
      const s = perm[j]!;
      for (let k = 0; k < cols.length; k++) kv.key[k] = cols[k]![s];
      kv.seq = this.seqs[s]!;
      kv.kind = (this.flags[s]! & 3) as RowKind;
      kv.value = this.rows[s]!;
      builder.add(kv);
    }
    return builder.finish();
  }

  /**
   * Folds a key's records (sorted in merge order) with the merge function. Returns undefined when
   * they fold as one (or there is one), the fold (or that record) then in `folded` (the common case: no cut, no allocation).
   * Otherwise the parts, oldest first: each a record as it came or the fold of a stretch of
   * records that stands in for them (`resetThenAdded` false) and sorts where the stretch's last
   * record sorts. Parts therefore sort in their records' order, among themselves and among the
   * key's records in other files.
   */
  private foldList(list: KeyValue[], order: (a: KeyValue, b: KeyValue) => number): KeyValue[] | undefined {
    const merge = this.merge;
    const check = this.mustSplit;
    // One record is written as it came (as Paimon's buffer does): its own fold may differ from it
    // (an aggregation -U folds into a +I row, its sequence field retracted to null). Handed back
    // as `folded`, like a fold of several: no one-element parts array per lone key.
    if (list.length === 1) {
      this.folded = list[0];
      return undefined;
    }
    merge.reset();
    let cut: KeyValue[] | undefined;
    let start = 0;
    for (let i = 0; i < list.length; i++) {
      merge.add(list[i]!);
      if (check === undefined || i === start || !check()) continue;
      // list[start..i) folds safely, list[start..i] does not: close the part, start one at i.
      this.cutParts((cut ??= []), list, start, i, order);
      start = i;
      merge.reset();
      merge.add(list[i]!);
    }
    if (cut === undefined) {
      // The whole fold must sort where the last record does (else older files would meet it out
      // of order): true unless a fold changed the sequence fields.
      const r = merge.result();
      if (foldSortsAtLast(r, list[list.length - 1]!, order, this.accKv)) {
        this.folded = r;
        return undefined;
      }
      cut = [];
    }
    this.cutParts(cut, list, start, list.length, order);
    return cut;
  }

  /**
   * Appends the parts of list[from..to) to `out`: its fold, or when that would not sort where
   * list[to - 1] does (an aggregation fold ending in a retraction: the sequence field's
   * last_value retracted to null sorts first), the fold of the longest stretch from `from` that
   * does, then the remaining records as they came. Leaves the merge function dirty.
   */
  private cutParts(out: KeyValue[], list: readonly KeyValue[], from: number, to: number, order: (a: KeyValue, b: KeyValue) => number): void {
    const merge = this.merge;
    let raw = from; // list[raw..to) is written as it came
    for (let end = to; end - from > 1; end--) {
      merge.reset();
      for (let i = from; i < end; i++) merge.add(list[i]!);
      const r = merge.result();
      if (!foldSortsAtLast(r, list[end - 1]!, order, this.accKv)) continue;
      // The system sequence number of the stretch's last record, not the engines' largest of the
      // stretch: that could sort the part after the next one when sequence fields tie. The key's
      // last part keeps the engine's (the largest the key had, ≥ its last record's). A fold of
      // nothing (every record ignored) is left out, as a flush leaves out such a key.
      if (r !== undefined) out.push(end === list.length ? r : { key: r.key, seq: list[end - 1]!.seq, kind: r.kind, value: r.value });
      raw = end;
      break;
    }
    for (let i = raw; i < to; i++) out.push(list[i]!);
  }


  /** The live slots sorted by the key columns with `cmps` (every arity; drain's general case). */
  private sortedSlots(cmps: readonly Comparator[], cols: readonly unknown[][]): number[] {
    const perm: number[] = [];
    for (let s = 0; s < this.rows.length; s++) if (this.rows[s] !== undefined) perm.push(s);
    if (this.arity === 1) {
      const c0 = cmps[0]!;
      const a0 = cols[0]!;
      perm.sort((x, y) => c0(a0[x], a0[y]));
    } else if (this.arity === 2) {
      const [c0, c1] = cmps as [Comparator, Comparator];
      const [a0, a1] = cols as [unknown[], unknown[]];
      perm.sort((x, y) => c0(a0[x], a0[y]) || c1(a1[x], a1[y]));
    } else {
      perm.sort((x, y) => {
        for (let k = 0; k < cmps.length; k++) {
          const r = cmps[k]!(cols[k]![x], cols[k]![y]);
          if (r !== 0) return r;
        }
        return 0;
      });
    }
    return perm;
  }

  /**
   * Arity 2 with a first key column of strings free of units ≥ U+D800: the live slots in key order,
   * sorted in two levels — the distinct first values (the index's keys, each a head) with the
   * native sort (code-unit order, equal to byte order for such strings, and a head per distinct
   * string), then the slots under one head by the second column. Same order as sorting every slot
   * by (first, second), with far fewer comparisons and no comparator call for the first level.
   */
  private sortedByFirstString(c1: Comparator, a1: unknown[]): number[] {
    const firsts = Array.from(this.index.keys()) as string[];
    firsts.sort();
    const rows = this.rows;
    const perm: number[] = [];
    for (let f = 0; f < firsts.length; f++) {
      const h = this.index.get(firsts[f])!;
      if (typeof h === 'number') {
        if (rows[h] !== undefined) perm.push(h);
        continue;
      }
      const start = perm.length;
      for (const s of h.values()) if (rows[s] !== undefined) perm.push(s);
      const k = perm.length - start;
      if (k <= SMALL_SORT) {
        // Insertion sort by the second column (the slots come in slot order; the sort is stable).
        for (let i = start + 1; i < perm.length; i++) {
          const s = perm[i]!;
          const v = a1[s];
          let j = i;
          while (j > start && c1(a1[perm[j - 1]!], v) > 0) {
            perm[j] = perm[j - 1]!;
            j--;
          }
          perm[j] = s;
        }
      } else {
        // A head with many keys (few distinct first values): a general stable sort of its slots.
        const part = perm.slice(start).sort((x, y) => c1(a1[x], a1[y]));
        for (let i = 0; i < k; i++) perm[start + i] = part[i]!;
      }
    }
    return perm;
  }

  private clear(): void {
    this.index.clear();
    this.second = [];
    this.keyCols = this.keyIndexes.map(() => []);
    this.rows = [];
    this.seqs = [];
    this.flags = [];
    this.lists = [];
    this.live = 0;
    this.bytes = 0;
    this.minSeq = Number.MAX_SAFE_INTEGER;
    this.maxSeq = -1;
    this.lowStrings = this.lowStrings.map(() => true);
  }
}

/**
 * Whether `r`, a key's fold ending with `last`, has `last`'s sequence-field values, i.e. sorts where
 * `last` does (undefined: nothing to place). Not so when a fold changed the sequence fields (an
 * aggregation fold ending in a retraction: the sequence field's last_value retracted to null sorts
 * first), and then older files would meet it out of order. `probe` is a scratch record (`order`
 * reads value and seq only); left with EMPTY_KEY as its value.
 */
export function foldSortsAtLast(r: KeyValue | undefined, last: KeyValue, order: (a: KeyValue, b: KeyValue) => number, probe: KeyValue = { key: EMPTY_KEY, seq: 0, kind: 0, value: EMPTY_KEY }): boolean {
  if (r === undefined) return true;
  probe.value = r.value;
  probe.seq = last.seq;
  const same = order(probe, last) === 0;
  probe.value = EMPTY_KEY;
  return same;
}
