// `aggregation`: each column folds the key's records with its own aggregate function (Paimon's
// AggregateMergeFunction). Steps per record, in merge order:
//
//   1. Function per column: `fields.<f>.aggregate-function`, else
//      `fields.default-aggregate-function`, else `last_non_null_value`. Primary-key and partition
//      columns pass through; `sequence.field` columns are forced to `last_value`.
//   2. -D / -U input: a -D removes the row with `aggregation.remove-record-on-delete`;
//      otherwise each column
//      retracts (aggregate/field-aggregator.ts), and a function that cannot retract is an error
//      naming the column, unless `fields.<f>.ignore-retract`. The table writer refuses such
//      records at the door (`retractionRefusal`), before they reach a file. `ignore-delete` and
//      `ignore-update-before` drop retractions where records are written (TableWriter.write), not
//      here: one committed before an ALTER set them retracts as written, as Java's
//      AggregateMergeFunction (which reads neither option) reads it (ignore-options-read.test.ts).
//   3. The result is +I with the aggregated row (a DELETE tombstone after a removal).
//
// Known hazards, handled by the callers through `resetThenAdded()` exactly as partial-update's:
// a fold that (a) removed the row and then took records, or (b) contains a retraction whose
// effect a plain row cannot carry (Paimon #4670: e.g. last_non_null_value retracted to null,
// a product divided), cannot stand in for its inputs when older records of the key lie below.
// The write buffer flushes before such a fold and compaction widens to the bottom level, where
// the fold sees every record of the key. See merge/README.md.

import { RowKind, type KeyValue } from '../key-value.ts';
import type { TableSchema } from '../schema.ts';
import { cannotRetract, type FieldAggregator } from './aggregate/field-aggregator.ts';
import { LastValueAggregator } from './aggregate/last-value.ts';
import { aggregatorFor } from './field-options.ts';
import type { MergeFunction } from './merge-function.ts';

export const DEFAULT_AGGREGATE_FUNCTION = 'last_non_null_value';

/** Aggregator per column; undefined for primary-key and partition columns (pass-through). */
export function aggregationColumns(schema: TableSchema): Array<FieldAggregator | undefined> {
  const keyLike = new Set([...schema.primaryKeys, ...schema.partitionKeys].map((k) => schema.fieldIndex.get(k)!));
  const seq = new Set(schema.sequenceFieldIndexes);
  return schema.fields.map((_f, i) => {
    if (keyLike.has(i)) return undefined;
    if (seq.has(i)) return new LastValueAggregator();
    return aggregatorFor(schema, i, DEFAULT_AGGREGATE_FUNCTION);
  });
}

// No `absorbsOlder`: a complete fold folded again on top of older records counts them twice (sum),
// so a lookup table's compaction widens instead of folding them in (compaction/lookup-levels.ts).
export class AggregateMergeFunction implements MergeFunction {
  private readonly arity: number;
  private readonly names: string[];
  private readonly keyLike: number[];
  private readonly aggs: Array<{ i: number; a: FieldAggregator }>;
  private readonly ignoreDelete: boolean;
  private readonly ignoreUpdateBefore: boolean;
  private readonly removeRecordOnDelete: boolean;
  /** Some column ignores retractions but gives meaning to a null input (first_value, last_value). */
  private readonly nullSensitiveIgnored: boolean;

  private row: unknown[] | null = null;
  private deleted = false;
  private latest: KeyValue | undefined;
  private maxSeq = -1;
  private sawReset = false;
  private addedAfterReset = false;
  // Fold safety (see the header): columns whose folded null would mean "set null"; a division seen.
  private readonly pending: boolean[];
  private pendingCount = 0;
  private inexact = false;
  private sawAdd = false;
  private sawRetract = false;

  constructor(schema: TableSchema) {
    this.arity = schema.fields.length;
    this.names = schema.fields.map((f) => f.name);
    const cols = aggregationColumns(schema);
    this.keyLike = [];
    this.aggs = [];
    cols.forEach((a, i) => (a === undefined ? this.keyLike.push(i) : this.aggs.push({ i, a })));
    this.ignoreDelete = schema.options.ignoreDelete;
    this.ignoreUpdateBefore = schema.options.ignoreUpdateBefore;
    this.removeRecordOnDelete = aggregationRemoveRecordOnDelete(schema);
    this.nullSensitiveIgnored = this.aggs.some(({ a }) => a.retractFold === 'ignored' && !a.ignoresNull);
    this.pending = new Array(this.arity).fill(false);
  }

  reset(): void {
    this.row = null;
    this.deleted = false;
    this.latest = undefined;
    this.maxSeq = -1;
    this.sawReset = false;
    this.addedAfterReset = false;
    if (this.pendingCount > 0) this.pending.fill(false);
    this.pendingCount = 0;
    this.inexact = false;
    this.sawAdd = false;
    this.sawRetract = false;
    for (const { a } of this.aggs) a.reset?.();
  }

  /** True when this fold cannot stand in for its inputs above older records (see the header). */
  resetThenAdded(): boolean {
    return this.addedAfterReset || this.inexact || this.pendingCount > 0 || (this.sawRetract && !this.sawAdd && this.nullSensitiveIgnored);
  }

  /** Why a -D/-U record must be refused at write time, or undefined when the table takes it. */
  retractionRefusal(kind: RowKind): string | undefined {
    if (this.ignoreDelete) return undefined;
    if (kind === RowKind.UPDATE_BEFORE && this.ignoreUpdateBefore) return undefined;
    if (kind === RowKind.DELETE && this.removeRecordOnDelete) return undefined;
    const bad = this.aggs.find(({ a }) => a.retract === undefined);
    return bad ? cannotRetract(this.names[bad.i]!, bad.a.name).message : undefined;
  }

  add(kv: KeyValue): void {
    const retract = kv.kind === RowKind.DELETE || kv.kind === RowKind.UPDATE_BEFORE;
    if (retract) {
      if (kv.kind === RowKind.DELETE && this.removeRecordOnDelete) {
        this.note(kv);
        this.row = null;
        this.deleted = true;
        this.sawReset = true;
        for (const { a } of this.aggs) a.reset?.();
        return;
      }
    }
    this.note(kv);
    if (this.sawReset) this.addedAfterReset = true;
    const v = kv.value;
    let row = this.row;
    if (row === null) {
      row = new Array(this.arity).fill(null);
      this.row = row;
      this.deleted = false;
    }
    for (const i of this.keyLike) row[i] = v[i];
    if (retract) {
      this.sawRetract = true;
      for (const { i, a } of this.aggs) {
        if (a.retract === undefined) throw cannotRetract(this.names[i]!, a.name);
        const x = v[i];
        row[i] = a.retract(row[i], x);
        if (x === null || x === undefined) continue;
        if (a.retractFold === 'until-add' && !this.pending[i]) {
          this.pending[i] = true;
          this.pendingCount++;
        } else if (a.retractFold === 'inexact') this.inexact = true;
      }
    } else {
      this.sawAdd = true;
      for (const { i, a } of this.aggs) {
        const x = v[i];
        row[i] = a.agg(row[i], x);
        if (this.pending[i] && x !== null && x !== undefined) {
          this.pending[i] = false;
          this.pendingCount--;
        }
      }
    }
  }

  result(): KeyValue | undefined {
    const latest = this.latest;
    if (latest === undefined) return undefined;
    if (this.deleted || this.row === null) {
      return { key: latest.key, seq: this.maxSeq, kind: RowKind.DELETE, value: latest.value };
    }
    return { key: latest.key, seq: this.maxSeq, kind: RowKind.INSERT, value: this.row };
  }

  private note(kv: KeyValue): void {
    this.latest = kv;
    if (kv.seq > this.maxSeq) this.maxSeq = kv.seq;
  }
}

/** `aggregation.remove-record-on-delete` (default false). */
export function aggregationRemoveRecordOnDelete(schema: TableSchema): boolean {
  const v = schema.options.raw['aggregation.remove-record-on-delete'];
  return v !== undefined && v.trim().toLowerCase() === 'true';
}
