// The k-way merge of a bucket's sorted runs (Paimon's SortMergeReaderWithMinHeap): all records of
// a key, from every run, folded by the table's merge engine, keys in ascending order. Used by the
// incremental and changelog reads, deletion-vector promotion and the writer's merge of pending
// runs; scans and lookups (table-read.ts) and compaction (compaction/compact-merge.ts) run their
// own copies of the loop. Every key is folded here, a lone one (one record in all the runs) too,
// unless the caller asks for `lone` (below): some callers pass merge functions that must see every
// record (dv-writer.ts's collector). Scans and lookups pass a lone record on as it is, as Java
// does (merge/README.md, "A key's lone record"; lookup tables fold it), so a merge that must agree
// with them (the incremental diff of two states, the stop trigger's merge of pending runs) asks
// for the same with `lone`. Compaction writes a lone record as it is too.
//
// A run is one or more RunData whose key ranges do not overlap, in key order (a level ≥ 1), or a
// single file (each level-0 file). Within a run keys are unique.

import { decodedParts, kvAt, PartCursor, type RunData, type RunParts } from './data-file.ts';
import type { KeyValue } from './key-value.ts';
import type { MergeFunction } from './merge/merge-function.ts';
import type { Comparator } from './types.ts';

export type KeyCompare = (a: unknown[], b: unknown[]) => number;

class Cursor extends PartCursor {
  /** The current key, rewritten in place on advance (no array per row). */
  readonly key: unknown[] = [];
  /** The run's level (mergeRuns' `levels`; 0 without them: every record folds). */
  level = 0;

  constructor(parts: RunParts) {
    super(parts);
    this.settle();
  }

  /** Moves past an exhausted part (PartCursor.toNextPart) and reads the key at the position. */
  private settle(): void {
    if ((this.part === undefined || this.ri >= this.part.rowCount) && !this.toNextPart()) return;
    const cols = this.part!.keyCols;
    const k = this.key;
    k.length = cols.length;
    for (let i = 0; i < cols.length; i++) k[i] = cols[i]![this.ri];
  }

  current(): KeyValue {
    return kvAt(this.part!, this.ri);
  }

  advance(): void {
    this.ri++;
    this.settle();
  }
}

/**
 * Yields one merged record per key (retractions included; the caller decides whether to drop
 * them). `order` sorts the records of one key into merge order. `levels` (each run's level), for
 * tables that fold a key's lowest record above level 0 only (merge/lookup-rule.ts, Java's
 * LookupMergeFunction): a key's level-0 records and its record of the lowest level above 0 are
 * folded, its records in higher levels left out. Without them every run counts as level 0.
 * `lone`: a key with one record in all the runs (counted before the `levels` pick, as Java's
 * ReducerMergeFunctionWrapper counts around LookupMergeFunction) yields that record as it is,
 * without the merge function or `onKeyMerged` — what table-read.ts reads. `onKeyMerged` gets the
 * key's fold (undefined: every record ignored) and the key's last record in merge order.
 */
export function* mergeRuns(
  runs: readonly (readonly RunData[] | RunParts)[],
  compareKeys: KeyCompare,
  merge: MergeFunction,
  order: (a: KeyValue, b: KeyValue) => number,
  onKeyMerged?: (result: KeyValue | undefined, last: KeyValue) => void,
  levels?: readonly number[],
  lone = false,
): Generator<KeyValue> {
  if (levels !== undefined && levels.length !== runs.length) throw new Error(`assertion failed: ${levels.length} levels for ${runs.length} runs`);
  const cursors: Cursor[] = [];
  for (let r = 0; r < runs.length; r++) {
    const run = runs[r]!;
    const c = new Cursor(Array.isArray(run) ? decodedParts(run) : (run as RunParts));
    if (levels !== undefined) c.level = levels[r]!;
    if (!c.done) cursors.push(c);
  }
  const group: KeyValue[] = [];
  const minKey: unknown[] = [];
  while (cursors.length > 0) {
    // Few runs (≤ the stop trigger plus the levels): a linear scan beats a heap here.
    let min = cursors[0]!.key;
    for (let i = 1; i < cursors.length; i++) {
      const k = cursors[i]!.key;
      if (compareKeys(k, min) < 0) min = k;
    }
    // A copy: the cursor holding the minimum rewrites its key when it advances.
    minKey.length = min.length;
    for (let i = 0; i < min.length; i++) minKey[i] = min[i];
    group.length = 0;
    // The key's record of the lowest level above 0 (only with `levels`: else every level is 0).
    let high: KeyValue | undefined;
    let highLevel = 0;
    /** The key's records in all the runs, before the pick. */
    let held = 0;
    for (let i = 0; i < cursors.length; i++) {
      const c = cursors[i]!;
      if (compareKeys(c.key, minKey) === 0) {
        held++;
        if (c.level <= 0) group.push(c.current());
        else if (high === undefined || c.level < highLevel) {
          high = c.current();
          highLevel = c.level;
        }
        c.advance();
        if (c.done) {
          cursors.splice(i, 1);
          i--;
        }
      }
    }
    if (high !== undefined) group.push(high);
    if (lone && held === 1) {
      yield group[0]!;
      continue;
    }
    let result: KeyValue | undefined;
    if (group.length === 1) {
      merge.reset();
      merge.add(group[0]!);
      result = merge.result();
    } else {
      group.sort(order);
      merge.reset();
      for (const kv of group) merge.add(kv);
      result = merge.result();
    }
    onKeyMerged?.(result, group[group.length - 1]!);
    if (result !== undefined) yield result;
  }
}

/** Index of `key` in a run part, or -1 (binary search on the sorted key columns). */
export function findKey(d: RunData, key: unknown[], compareKeys: KeyCompare): number {
  let lo = 0;
  let hi = d.rowCount - 1;
  const probe = new Array(d.keyCols.length);
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    for (let i = 0; i < probe.length; i++) probe[i] = d.keyCols[i]![mid];
    const c = compareKeys(probe, key);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** Index of `key` in a run part, or -1: a binary search comparing column by column (no arrays). */
export function findKeyCols(d: RunData, key: readonly unknown[], cmps: readonly Comparator[]): number {
  let lo = 0;
  let hi = d.rowCount - 1;
  const cols = d.keyCols;
  const n = cmps.length;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    let c = 0;
    for (let i = 0; i < n && c === 0; i++) c = cmps[i]!(cols[i]![mid], key[i]);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Per-run hash index for point lookups: key → row, open addressing over an Int32Array (row + 1
// and a hash tag, below; 0 = empty), at most half full. Built on demand for a run that serves
// lookups (after INDEX_AFTER_LOOKUPS of them, so a one-off lookup never pays for it), kept with
// the decoded run (a WeakMap: it goes when the run cache drops the run). Only key columns whose
// values are all strings, int32 numbers, bigints or booleans are hashed; a probe of another kind
// (a number for a BIGINT column, say) takes the binary search, so every lookup finds exactly what
// the binary search finds: within one type, comparator equality is `===` for these kinds.

const INDEX_AFTER_LOOKUPS = 32;
type HashKind = 'string' | 'int' | 'bigint' | 'boolean';

interface RunIndex {
  lookups: number;
  /** undefined while not built; null when the run's keys cannot be hashed. */
  index: { slots: Int32Array; mask: number; rowBits: number; kinds: HashKind[] } | null | undefined;
}

const runIndexes = new WeakMap<RunData, RunIndex>();

function kindOfColumn(c: unknown[]): HashKind | undefined {
  if (c.length === 0) return undefined;
  const t = typeof c[0];
  if (t === 'string') {
    for (let i = 0; i < c.length; i++) if (typeof c[i] !== 'string') return undefined;
    return 'string';
  }
  if (t === 'number') {
    for (let i = 0; i < c.length; i++) {
      const v = c[i];
      if (typeof v !== 'number' || (v | 0) !== v || (v === 0 && 1 / v < 0)) return undefined;
    }
    return 'int';
  }
  if (t === 'bigint') {
    for (let i = 0; i < c.length; i++) if (typeof c[i] !== 'bigint') return undefined;
    return 'bigint';
  }
  if (t === 'boolean') {
    for (let i = 0; i < c.length; i++) if (typeof c[i] !== 'boolean') return undefined;
    return 'boolean';
  }
  return undefined;
}

function hashValue(h: number, v: unknown): number {
  switch (typeof v) {
    case 'string':
      for (let i = 0; i < v.length; i++) h = Math.imul(h ^ v.charCodeAt(i), 0x01000193);
      return Math.imul(h ^ v.length, 0x01000193);
    case 'number':
      return Math.imul(h ^ v, 0x01000193);
    case 'bigint':
      h = Math.imul(h ^ Number(BigInt.asIntN(32, v)), 0x01000193);
      return Math.imul(h ^ Number(BigInt.asIntN(32, v >> 32n)), 0x01000193);
    default:
      return Math.imul(h ^ (v ? 1 : 2), 0x01000193);
  }
}

function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h;
}

function hashRow(cols: unknown[][], i: number): number {
  let h = 0x811c9dc5 | 0;
  for (let k = 0; k < cols.length; k++) h = hashValue(h, cols[k]![i]);
  return finish(h);
}

function buildIndex(d: RunData): RunIndex['index'] {
  const kinds: HashKind[] = [];
  for (const c of d.keyCols) {
    const k = kindOfColumn(c);
    if (k === undefined) return null;
    kinds.push(k);
  }
  if (kinds.length === 0) return null;
  let size = 16;
  while (size < d.rowCount * 2) size *= 2;
  const slots = new Int32Array(size);
  const mask = size - 1;
  const cols = d.keyCols;
  const rowBits = slotRowBits(d.rowCount);
  for (let i = 0; i < d.rowCount; i++) {
    const h = hashRow(cols, i);
    let s = h & mask;
    while (slots[s] !== 0) s = (s + 1) & mask;
    slots[s] = slotEntry(h, rowBits, i);
  }
  return { slots, mask, rowBits, kinds };
}

// A slot holds row + 1 in its low `rowBits` bits and, above them up to bit 30, the top bits of
// the row's key hash (its tag; the slot number comes from the low bits). A probe compares the tag
// before it reads any key cell, so a slot of another key costs no reads of the run's key strings,
// which are scattered over the heap: most probes of a run that does not hold the key end at the
// first slot. Bit 31 stays clear, so a used slot is never 0 and never negative.
function slotRowBits(rowCount: number): number {
  return 32 - Math.clz32(rowCount); // rowCount itself (the largest row + 1) fits
}

function slotTag(hash: number, rowBits: number): number {
  const tagBits = 31 - rowBits;
  return tagBits <= 0 ? 0 : hash >>> (32 - tagBits);
}

function slotEntry(hash: number, rowBits: number, row: number): number {
  return (slotTag(hash, rowBits) << rowBits) | (row + 1);
}

function probeMatches(kinds: HashKind[], key: readonly unknown[]): boolean {
  for (let k = 0; k < kinds.length; k++) {
    const v = key[k];
    switch (kinds[k]) {
      case 'string':
        if (typeof v !== 'string') return false;
        break;
      case 'int':
        // -0 passes `(v | 0) === v` and `0 === -0` would match the row of 0; in a DOUBLE key it
        // is a key of its own (Double.compare), so it takes the binary search.
        if (typeof v !== 'number' || (v | 0) !== v || (v === 0 && 1 / v < 0)) return false;
        break;
      case 'bigint':
        if (typeof v !== 'bigint') return false;
        break;
      default:
        if (typeof v !== 'boolean') return false;
    }
  }
  return true;
}

/** The hash of a lookup key as the run indexes hash their rows (any key; `lookupKey` takes it to hash once per lookup). */
export function keyHash(key: readonly unknown[]): number {
  let h = 0x811c9dc5 | 0;
  for (let k = 0; k < key.length; k++) h = hashValue(h, key[k]);
  return finish(h);
}

/**
 * Index of `key` in a run part, or -1: through the run's hash index once the run has served a
 * few lookups, else (and for keys the index does not cover) the binary search of `findKeyCols`.
 * `hash`: keyHash(key), when the caller has it.
 */
export function lookupKey(d: RunData, key: readonly unknown[], cmps: readonly Comparator[], hash?: number): number {
  let r = runIndexes.get(d);
  if (r === undefined) {
    r = { lookups: 0, index: undefined };
    runIndexes.set(d, r);
  }
  if (r.index === undefined) {
    if (++r.lookups < INDEX_AFTER_LOOKUPS) return findKeyCols(d, key, cmps);
    r.index = buildIndex(d);
  }
  const ix = r.index!;
  if (ix === null || !probeMatches(ix.kinds, key)) return findKeyCols(d, key, cmps);
  const { slots, mask, rowBits } = ix;
  const cols = d.keyCols;
  const n = cols.length;
  const h = hash ?? keyHash(key);
  const tag = slotTag(h, rowBits);
  const rowMask = rowBits === 31 ? 0x7fffffff : (1 << rowBits) - 1;
  let s = h & mask;
  for (;;) {
    const e = slots[s]!;
    if (e === 0) return -1;
    if (e >>> rowBits === tag) {
      const row = (e & rowMask) - 1;
      let eq = true;
      for (let k = 0; k < n && eq; k++) eq = cols[k]![row] === key[k];
      if (eq) return row;
    }
    s = (s + 1) & mask;
  }
}

/** Bytes of a run's lookup index, if built (for tests and accounting). */
export function lookupIndexBytes(d: RunData): number {
  const ix = runIndexes.get(d)?.index;
  return ix ? ix.slots.byteLength : 0;
}
