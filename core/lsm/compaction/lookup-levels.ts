// Records above level 0 of a table Java reads "by lookup" are the complete value of their key
// (Paimon's LookupMergeFunction, LookupMergeTreeCompactRewriter, LookupLevels).
//
// Java wraps the merge engine in LookupMergeFunction when a primary-key table needs lookup
// (CoreOptions.lookupStrategy: changelog-producer=lookup, deletion vectors, force-lookup — an
// option of Java's tables, merge/lookup-rule.ts; first-row is left unwrapped) and then folds, per key, its level-0 records and only the newest
// record above level 0 (the lowest level holding the key) — in its compactions and in its batch
// reads (PrimaryKeyFileStoreTable hands the wrapped function to MergeFileSplitRead). With deletion
// vectors, and for first-row, a batch read skips level 0 and reads the other files without
// merging them (batchScanSkipLevel0, MergeTreeSplitGenerator). All of it relies on one invariant:
// a record above level 0 is the complete value of its key — with vectors or first-row the only
// one. Paimon keeps it by looking every key of a compaction that takes level 0 up in the levels
// below the output (LookupChangelogMergeFunctionWrapper).
//
// This store's reader folded every record of a key in merge order instead (it still does for
// first-row; `lookup` tables now read by Java's rule, merge/lookup-rule.ts), and a compaction
// merges only the newest runs of a bucket (the universal pick). Its fold, written above older
// records, was right for that reader and wrong for Java: a partial-update column lost, a sum short, a late
// record with a lower `sequence.field` value hiding the winner, a first-row key read twice. So
// a compaction of such a table looks each key it writes up in the runs it leaves out (all older
// than the unit: a unit is the newest runs of its bucket), per the table's policy:
//   - 'fold' (engines whose fold `absorbsOlder`: deduplicate with `sequence.field`, first-row,
//     partial-update without aggregate functions): the key's records there are folded with the
//     unit's, and that complete value is written. This store's reader folds it once more with the
//     older records and reads the same. When the fold is the newest older record itself
//     (first-row's first row, a `sequence.field` winner below) nothing is written: that record
//     stands where it is, and the key stays in one level above 0.
//   - 'widen' (aggregation, partial-update with aggregate functions): folding the complete value
//     again with the older records would count them twice, so a key found there turns the
//     compaction into a full one (every run: nothing older left) — as a partial-update reset
//     does. A key then has at most one record above level 0 at any time.
//
// Since reads and compactions of `lookup` tables (without vectors, not first-row) fold by Java's
// rule too (merge/lookup-rule.ts: level 0 and the lowest record above it), RunsMerge asks these
// runs only for a key the unit holds no record of above level 0, and folds in the first record
// found (the lowest older level), not all. With that reader a 'widen' would no longer be needed
// for correctness (the older records are never folded again); it is kept as it was — a full
// compaction is correct under either rule — and could become a 'fold' of that first record.
//   - 'none': deduplicate without `sequence.field` (the newest record is in the unit), tables with
//     deletion vectors (dv-writer.ts looks each key up when it moves level 0 up and marks the older
//     row: one visible record per key above level 0), and tables Java reads by merging every
//     level (changelog producer none, input or full-compaction, without vectors or `force-lookup`) — there a
//     compaction looks nothing up and costs what it did.
// Cost with 'fold'/'widen': per written key one probe per older run (the file found by walking
// the run as keys ascend, a binary search in its decoded rows); one decoded file per older run
// held by the compaction, read through the run cache.

import { kvAt, type RunData } from '../data-file.ts';
import type { KeyValue } from '../key-value.ts';
import type { LevelSortedRun } from '../levels.ts';
import type { DataFileMeta } from '../manifest.ts';
import { findKeyCols } from '../merge-reader.ts';
import type { MergeFunction } from '../merge/merge-function.ts';
import type { TableSchema } from '../schema.ts';
import type { Comparator } from '../types.ts';
import { forceLookup } from '../merge/lookup-rule.ts';

export type LookupPolicy = 'none' | 'fold' | 'widen';

/** How a compaction that leaves older runs out treats their records of the keys it writes (see the header). */
export function lookupPolicy(schema: TableSchema, merge: MergeFunction, deletionVectors: boolean): LookupPolicy {
  const o = schema.options;
  if (deletionVectors) return 'none';
  if (o.changelogProducer !== 'lookup' && !forceLookup(o.raw) && o.mergeEngine !== 'first-row') return 'none';
  if (o.mergeEngine === 'deduplicate' && schema.sequenceFieldIndexes.length === 0) return 'none';
  return merge.absorbsOlder === true ? 'fold' : 'widen';
}

/**
 * Point lookups of keys in sorted runs (each a list of files with disjoint key ranges, in key
 * order). REQUIRES: keys looked up in ascending order (a merge's output order); each run's cursor
 * only moves forward.
 */
export class OlderLevels {
  private readonly cursors: Array<{ files: readonly DataFileMeta[]; next: number; file?: DataFileMeta; data?: RunData }>;

  constructor(
    runs: readonly LevelSortedRun[],
    private readonly range: (f: DataFileMeta) => { min: unknown[]; max: unknown[] },
    private readonly load: (f: DataFileMeta) => RunData,
    private readonly keyCmps: readonly Comparator[],
  ) {
    this.cursors = runs.map((r) => ({ files: r.files, next: 0 }));
  }

  /** The key's records in the runs, newest run first (at most one per run). */
  records(key: readonly unknown[]): KeyValue[] {
    const out: KeyValue[] = [];
    for (const c of this.cursors) {
      // The first file whose max key is not below the key (files before it end below every later key).
      while (c.next < c.files.length && this.compare(this.range(c.files[c.next]!).max, key) < 0) c.next++;
      const f = c.files[c.next];
      if (f === undefined || this.compare(this.range(f).min, key) > 0) continue;
      if (c.file !== f) {
        c.file = f;
        c.data = this.load(f);
      }
      const pos = findKeyCols(c.data!, key, this.keyCmps);
      if (pos >= 0) out.push(kvAt(c.data!, pos));
    }
    return out;
  }

  private compare(a: readonly unknown[], b: readonly unknown[]): number {
    for (let k = 0; k < this.keyCmps.length; k++) {
      const r = this.keyCmps[k]!(a[k], b[k]);
      if (r !== 0) return r;
    }
    return 0;
  }
}

/**
 * What a compaction must take from the runs it leaves out (`older`) for each key it writes —
 * RunsMerge's `older` — or undefined when nothing (policy 'none', or no older run). With 'widen'
 * a key found there calls `widen`, which must throw (the caller starts a full compaction).
 */
export function olderRecords(
  policy: LookupPolicy,
  older: readonly LevelSortedRun[],
  range: (f: DataFileMeta) => { min: unknown[]; max: unknown[] },
  load: (f: DataFileMeta) => RunData,
  keyCmps: readonly Comparator[],
  widen: () => never,
): ((key: readonly unknown[]) => readonly KeyValue[]) | undefined {
  if (policy === 'none' || older.length === 0) return undefined;
  const levels = new OlderLevels(older, range, load, keyCmps);
  if (policy === 'fold') return (key) => levels.records(key);
  return (key) => (levels.records(key).length > 0 ? widen() : NONE);
}

const NONE: readonly KeyValue[] = [];
