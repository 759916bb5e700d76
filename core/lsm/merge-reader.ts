// The k-way merge of a bucket's sorted runs (Paimon's SortMergeReaderWithMinHeap): all records of
// a key, from every run, folded by the table's merge engine, keys in ascending order. Used by
// reads, lookups and compaction alike, so every path agrees on what a key holds.
//
// A run is one or more RunData whose key ranges do not overlap, in key order (a level ≥ 1), or a
// single file (each level-0 file). Within a run keys are unique.

import { kvAt, type RunData } from './data-file.ts';
import type { KeyValue } from './key-value.ts';
import type { MergeFunction } from './merge/merge-function.ts';
import type { Comparator } from './types.ts';

export type KeyCompare = (a: unknown[], b: unknown[]) => number;

class Cursor {
  private fi = 0;
  private ri = 0;
  /** The current key, rewritten in place on advance (no array per row). */
  readonly key: unknown[];
  done = false;

  constructor(private readonly parts: RunData[]) {
    this.key = new Array(parts[0]?.keyCols.length ?? 0);
    this.skipEmpty();
    this.loadKey();
  }

  private skipEmpty(): void {
    while (this.fi < this.parts.length && this.ri >= this.parts[this.fi]!.rowCount) {
      this.fi++;
      this.ri = 0;
    }
  }

  private loadKey(): void {
    if (this.fi >= this.parts.length) {
      this.done = true;
      return;
    }
    const cols = this.parts[this.fi]!.keyCols;
    const k = this.key;
    for (let i = 0; i < k.length; i++) k[i] = cols[i]![this.ri];
  }

  current(): KeyValue {
    return kvAt(this.parts[this.fi]!, this.ri);
  }

  advance(): void {
    this.ri++;
    this.skipEmpty();
    this.loadKey();
  }
}

/**
 * Yields one merged record per key (retractions included; the caller decides whether to drop
 * them). `order` sorts the records of one key into merge order.
 */
export function* mergeRuns(
  runs: RunData[][],
  compareKeys: KeyCompare,
  merge: MergeFunction,
  order: (a: KeyValue, b: KeyValue) => number,
  onKeyMerged?: () => void,
): Generator<KeyValue> {
  const cursors = runs.map((r) => new Cursor(r)).filter((c) => !c.done);
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
    for (let i = 0; i < cursors.length; i++) {
      const c = cursors[i]!;
      if (compareKeys(c.key, minKey) === 0) {
        group.push(c.current());
        c.advance();
        if (c.done) {
          cursors.splice(i, 1);
          i--;
        }
      }
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
    onKeyMerged?.();
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
