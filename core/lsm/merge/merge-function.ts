// A merge engine folds all records of one key, oldest first, into the record that stands for
// the key (Paimon's MergeFunction). One file per engine; `createMergeFunction` picks one from
// the table's options. The fold is used on every path — write buffer, compaction, read and
// lookup — so a key reads the same whichever files its records happen to sit in.
//
// REQUIRES: records are added in merge order (see `mergeOrder`): by user sequence fields when
// the table has `sequence.field`, then by system sequence number.

import type { RunData } from '../data-file.ts';
import type { KeyValue, RowKind } from '../key-value.ts';
import type { TableSchema } from '../schema.ts';
import { comparatorFor, withNullable, type Comparator } from '../types.ts';
import { AggregateMergeFunction } from './aggregation.ts';
import { DeduplicateMergeFunction } from './deduplicate.ts';
import { FirstRowMergeFunction } from './first-row.ts';
import { PartialUpdateMergeFunction } from './partial-update.ts';

export interface MergeFunction {
  reset(): void;
  add(kv: KeyValue): void;
  /** The merged record (may be a retraction), or undefined when every input was ignored. */
  result(): KeyValue | undefined;
  /**
   * True when the fold since `reset()` cannot stand in for its inputs unless it includes every
   * older record of the key (a row removal followed by updates, or a retraction a plain row cannot
   * carry). The write buffer flushes instead of folding; compaction widens to the bottom level.
   */
  resetThenAdded?(): boolean;
  /**
   * True when the complete fold of a key (every record of it) stays the key's value when folded
   * again on top of the key's older records: fold(older…, fold(older…, newer…)) equals
   * fold(older…, newer…) — folds for which `resetThenAdded()` is true excepted (compaction widens
   * those anyway). Then a compaction can write a key's complete value above older records it
   * leaves in place, as Java's lookup tables need (compaction/lookup-levels.ts): a reader that
   * folds every level reads the same. Not so where the older records would count twice (sum).
   */
  readonly absorbsOlder?: boolean;
  /** Why a -D/-U record is refused at write time (before it reaches a file), or undefined. */
  retractionRefusal?(kind: RowKind): string | undefined;
  /**
   * Optional fast path for the write buffer: fold `kv` into `acc` in place, where `acc` is an
   * earlier `result()` of this function. False means "use reset/add/result instead".
   */
  foldInto?(acc: KeyValue, kv: KeyValue): boolean;
  /**
   * Optional fast path for reads: the merged row of `n` records given by position (row `rows[k]`
   * of run `parts[k]`, k < n, in merge order), read cell by cell without KeyValues or whole input
   * rows. Equal (value for value) to `result().value` after `reset()` and `add()` of each record,
   * when that result is an add. Undefined when these records need the generic fold (a retraction
   * among them, aggregate functions); then nothing was changed.
   */
  foldAt?(parts: readonly RunData[], rows: readonly number[], n: number): unknown[] | undefined;
}

export function createMergeFunction(schema: TableSchema): MergeFunction {
  switch (schema.options.mergeEngine) {
    case 'deduplicate':
      return new DeduplicateMergeFunction(schema.options);
    case 'partial-update':
      return new PartialUpdateMergeFunction(schema);
    case 'aggregation':
      return new AggregateMergeFunction(schema);
    case 'first-row':
      return new FirstRowMergeFunction(schema.options);
    default:
      throw new Error(`merge engine ${schema.options.mergeEngine} has no implementation`);
  }
}

/** Compares two keys of the table, field by field (nulls first, strings by UTF-8 bytes). */
export function keyComparator(schema: TableSchema): (a: unknown[], b: unknown[]) => number {
  const cmps = schema.keyTypes.map(comparatorFor);
  if (cmps.length === 1) {
    const c = cmps[0]!;
    return (a, b) => c(a[0], b[0]);
  }
  return (a, b) => {
    for (let i = 0; i < cmps.length; i++) {
      const r = cmps[i]!(a[i], b[i]);
      if (r !== 0) return r;
    }
    return 0;
  };
}

/**
 * Order of two records of the same key: the one that sorts later is merged later and wins.
 * User sequence fields first (`sequence.field`, lexicographic, optionally descending), then the
 * system sequence number. A null sequence value is the oldest in either sort order: `descending`
 * reverses only the comparison of two non-null values (Paimon's UserDefinedSeqComparator, a
 * generated row compare with nullIsLast=false). Returns undefined when the table has no sequence
 * fields and plain `seq` order applies.
 */
export function sequenceComparator(schema: TableSchema): ((a: KeyValue, b: KeyValue) => number) | undefined {
  const idx = schema.sequenceFieldIndexes;
  if (idx.length === 0) return undefined;
  // Nulls are handled here, before the sign, so the comparators need none of their own.
  const cmps: Comparator[] = idx.map((i) => comparatorFor(withNullable(schema.fields[i]!.type, false)));
  const sign = schema.options.sequenceSortOrder === 'descending' ? -1 : 1;
  return (a, b) => {
    for (let j = 0; j < idx.length; j++) {
      const x = a.value[idx[j]!];
      const y = b.value[idx[j]!];
      const xNull = x === null || x === undefined;
      const yNull = y === null || y === undefined;
      if (xNull || yNull) {
        if (xNull !== yNull) return xNull ? -1 : 1;
        continue;
      }
      const r = cmps[j]!(x, y);
      if (r !== 0) return sign * r;
    }
    return a.seq - b.seq;
  };
}

/** Full merge order for records of one key. */
export function mergeOrder(schema: TableSchema): (a: KeyValue, b: KeyValue) => number {
  return sequenceComparator(schema) ?? ((a, b) => a.seq - b.seq);
}
