// `partial-update`: each record updates only the columns it carries (Paimon's
// PartialUpdateMergeFunction).
//
//   1. Outside sequence groups a non-null input field overwrites the stored field; null means
//      "no change".
//   2. A sequence group (`fields.<s1,s2>.sequence-group = 'a,b'`) is owned by one stream: an input
//      whose group sequence is ≥ the stored one replaces every column of the group, nulls
//      included; an older one is ignored; an all-null group sequence leaves the group alone.
//   3. -D / -U input: dropped with `ignore-delete` (`ignore-update-before` acts at write time); with `partial-update.remove-record-on-delete`
//      a -D removes the whole row (a lone -U is ignored: the +U after it carries the new values);
//      with sequence groups a retraction nulls the columns of each group it is newer for, and a
//      -D of a group listed in `partial-update.remove-record-on-sequence-group` removes the row.
//      Otherwise a retraction is refused with an error that lists the three options.
//      A retraction never makes a row, and one that meets no row (no +I/+U since the start or
//      the last row removal) changes nothing: a key that only ever received retractions has no
//      row (Paimon's `meetInsert`: the fold is a DELETE, dropped where nothing older lies below).
//      A fold of one record is that record, unchanged, so it retracts later what lies below it.
//
//   4. Aggregate functions (`fields.<f>.aggregate-function`, and `fields.default-aggregate-function`
//      for group columns): in a group with a function the group sequence is an ordering key —
//      every record with a non-null group sequence is aggregated (with the stored value first when
//      the record is older), the stored sequence advances only when the incoming one is larger,
//      and a retraction retracts the function (sum subtracts, …) whatever its sequence. A column
//      outside groups takes no function but last_non_null_value (rule 1 itself), own or the
//      table default, as in Paimon. Columns without a function behave exactly as in 1–3.
//
// Group sequences compare with null as the oldest value whatever the column's declared
// nullability: the stored sequence of a group no record has set yet is null, and any non-null
// incoming sequence (negative numbers, dates before 1970 included) is newer.
//
// Known hazard, handled by the callers: a row removal followed by updates, folded without the
// older records below, would later merge with those older records as if no removal happened
// (Paimon #5387). The same holds for a group retraction of a function other than sum (Paimon
// #4670, see merge/README.md), and for a retraction that met no row in the fold but would retract
// a row below it, unless a later record of the fold overwrites what it did (a -U/+U pair in a
// group without functions does). And for a row removal by a -D of a
// `remove-record-on-sequence-group` group in a fold of several records: it removes the row below
// only when that row's group sequence is not newer; otherwise the row stays and takes the fold's
// other records, which the fold (a DELETE, or a row started afresh) no longer carries.
// `resetThenAdded()` reports such a fold; the write buffer flushes before it (or, with
// `sequence.field`, cuts the key's records there) and compaction widens to the bottom level
// instead. A fold of one record is always exact (it is that record, or its own fold).

import type { RunData } from '../data-file.ts';
import { invalidArgument } from '../errors.ts';
import { RowKind, type KeyValue } from '../key-value.ts';
import type { TableSchema } from '../schema.ts';
import { comparatorFor, withNullable, type Comparator } from '../types.ts';
import { cannotRetract, type FieldAggregator } from './aggregate/field-aggregator.ts';
import { compareInPlace, runView, isNullAt, readAt, type CellView } from './cell-view.ts';
import { aggregatorFor, DEFAULT_AGGREGATE_FUNCTION_OPTION } from './field-options.ts';
import type { MergeFunction } from './merge-function.ts';

interface Group {
  readonly name: string;
  readonly seqIndexes: number[];
  /** Per sequence field: null first (oldest), whatever the type's declared nullability. */
  readonly cmps: Comparator[];
  /** Columns of the group, sequence fields included. */
  readonly columns: number[];
  readonly removeOnDelete: boolean;
  /** Some column of the group has an aggregate function (rule 4). */
  readonly aggregated: boolean;
}

/**
 * Aggregate function per column of a partial-update table (rule 4), undefined where none (a group's
 * sequence field never has one). `strict` (creation, ALTER): InvalidArgument for one other than
 * last_non_null_value (own or the table default) on a column outside groups, as Paimon 1.1+
 * refuses it. Not strict (a table opened): such a column reads as an earlier version wrote it — its
 * own function aggregating every record when the table has sequence groups (InvalidArgument when it
 * has none), the table default not applied to it; last_non_null_value is rule 1 itself.
 */
export function partialUpdateAggregators(schema: TableSchema, strict = false): Array<FieldAggregator | undefined> {
  const keyLike = new Set([...schema.primaryKeys, ...schema.partitionKeys]);
  const groups = schema.options.sequenceGroups;
  const seqFields = new Set(groups.flatMap((g) => g.sequenceFields));
  const grouped = new Set(groups.flatMap((g) => g.columns));
  return schema.fields.map((f, i) => {
    if (keyLike.has(f.name)) return undefined;
    const own = schema.options.raw[`fields.${f.name}.aggregate-function`];
    // None on a group's sequence field, as Java's getAggFuncName: a table Java made with one opens
    // (creating one here is refused: schema.ts checkSequenceFieldOptions).
    if (seqFields.has(f.name)) return undefined;
    if (grouped.has(f.name)) return aggregatorFor(schema, i, undefined);
    // Outside groups Java takes the column's own function, else the table default, and refuses
    // any but last_non_null_value (PartialUpdateMergeFunction.getAggFuncName, Paimon 1.1+): it
    // could not open the table. last_non_null_value is rule 1 itself, so the column stays plain.
    const option = own === undefined ? DEFAULT_AGGREGATE_FUNCTION_OPTION : `fields.${f.name}.aggregate-function`;
    const fn = strict ? (own ?? schema.options.raw[DEFAULT_AGGREGATE_FUNCTION_OPTION]) : own;
    if (fn === undefined || fn === 'last_non_null_value') return undefined;
    if (!strict && groups.length > 0) return aggregatorFor(schema, i, undefined); // its own function wins over the default
    throw invalidArgument(
      `option '${option}': column '${f.name}' is in no sequence group; partial-update needs sequence groups ('fields.<seq>.sequence-group') ` +
        `for aggregate functions other than 'last_non_null_value' (got '${fn}')${strict ? ', as Paimon does' : ''}`,
    );
  });
}

const NO_VIEWS: CellView[] = [];

export class PartialUpdateMergeFunction implements MergeFunction {
  private readonly arity: number;
  private readonly keyLike: number[];
  private readonly plain: number[];
  private readonly groups: Group[];
  private readonly ignoreDelete: boolean;
  private readonly ignoreUpdateBefore: boolean;
  private readonly removeRecordOnDelete: boolean;
  private readonly tableName: string;
  private readonly columnNames: string[];
  /** Aggregate function per column (rule 4), undefined where none. */
  private readonly aggs: Array<FieldAggregator | undefined>;
  private readonly anyAggregator: boolean;
  /** Some aggregator keeps per-key state (first_value), which foldInto's in-place fold cannot restore. */
  private readonly statefulAggregator: boolean;
  /**
   * MergeFunction.absorbsOlder: without aggregate functions a complete fold holds every column's
   * and group's last word (non-null fields, the highest group sequences), so folding it again on
   * top of older records changes nothing. A function (sum) would take the older records twice.
   */
  readonly absorbsOlder: boolean;

  private row: unknown[] | null = null;
  private deleted = false;
  private latest: KeyValue | undefined;
  private maxSeq = -1;
  private sawReset = false;
  private addedAfterReset = false;
  /** The row removed by the fold (its latest removal), for result(). */
  private removal: KeyValue | undefined;
  /** Records folded since reset() (ignored retractions not counted). */
  private records = 0;
  /**
   * Retractions that met no row (see the header): per group, the largest sequence such a
   * retraction carried (an arity-long row, only the group's sequence fields set), until a later
   * record with a sequence ≥ it overwrites the group; `unmatched` counts the groups set.
   */
  private readonly unmatchedSeq: Array<unknown[] | undefined>;
  private unmatched = 0;
  /** A retraction that met no row did something a later record did not overwrite. */
  private unmatchedDiverged = false;
  /** A group retraction of a function other than sum was folded (see the header). */
  private aggRetracted = false;
  /**
   * A -D of a `remove-record-on-sequence-group` group removed the row in this fold. Whether it
   * removes the row below too depends on that row's group sequence, which the fold does not know
   * (see the header).
   */
  private groupRemoved = false;
  /** foldAt's scratch: the cell views of its records. */
  private readonly views: CellView[][] = [];

  constructor(schema: TableSchema) {
    this.arity = schema.fields.length;
    this.tableName = schema.fields.map((f) => f.name).join(',');
    this.columnNames = schema.fields.map((f) => f.name);
    const keyLike = new Set<number>([...schema.primaryKeys, ...schema.partitionKeys].map((k) => schema.fieldIndex.get(k)!));
    const owner = new Map<number, number>();
    this.groups = schema.options.sequenceGroups.map((g, gi) => {
      const seqIndexes = g.sequenceFields.map((f) => schema.fieldIndex.get(f)!);
      const columns = [...new Set([...seqIndexes, ...g.columns.map((c) => schema.fieldIndex.get(c)!)])];
      for (const c of columns) {
        if (owner.has(c)) throw invalidArgument(`column '${schema.fields[c]!.name}' belongs to two sequence groups`);
        owner.set(c, gi);
      }
      const name = g.sequenceFields.join(',');
      return {
        name,
        seqIndexes,
        // The stored sequence starts null also for a NOT NULL type: the comparator must order it.
        cmps: seqIndexes.map((i) => comparatorFor(withNullable(schema.fields[i]!.type, true))),
        columns,
        removeOnDelete: schema.options.removeRecordOnSequenceGroup.some((r) => r === name || g.sequenceFields.includes(r)),
        aggregated: false,
      };
    });
    this.aggs = partialUpdateAggregators(schema);
    this.anyAggregator = this.aggs.some((a) => a !== undefined);
    this.statefulAggregator = this.aggs.some((a) => a?.reset !== undefined);
    this.absorbsOlder = !this.anyAggregator;
    this.unmatchedSeq = new Array(this.groups.length).fill(undefined);
    this.groups = this.groups.map((g) => ({ ...g, aggregated: g.columns.some((c) => this.aggs[c] !== undefined) }));
    this.keyLike = [...keyLike];
    this.plain = [];
    for (let i = 0; i < this.arity; i++) if (!keyLike.has(i) && !owner.has(i)) this.plain.push(i);
    this.ignoreDelete = schema.options.ignoreDelete;
    this.ignoreUpdateBefore = schema.options.ignoreUpdateBefore;
    this.removeRecordOnDelete = schema.options.removeRecordOnDelete;
  }

  reset(): void {
    this.row = null;
    this.deleted = false;
    this.latest = undefined;
    this.maxSeq = -1;
    this.sawReset = false;
    this.addedAfterReset = false;
    this.removal = undefined;
    this.records = 0;
    this.clearUnmatched();
    this.aggRetracted = false;
    this.groupRemoved = false;
    if (this.anyAggregator) for (const a of this.aggs) a?.reset?.();
  }

  /**
   * True when this fold removed the row and then took updates, removed it by a group -D, folded an
   * unsafe retraction, or holds a retraction that met no row but would change a row below (see
   * the file header).
   */
  resetThenAdded(): boolean {
    if (this.records <= 1) return false; // the result is the record itself or its own fold
    return this.addedAfterReset || this.aggRetracted || this.groupRemoved || this.unmatched > 0 || this.unmatchedDiverged;
  }

  /** Why a -D/-U record is refused at write time: a group function that cannot retract. */
  retractionRefusal(kind: RowKind): string | undefined {
    if (!this.anyAggregator || this.ignoreDelete || this.removeRecordOnDelete) return undefined;
    if (kind === RowKind.UPDATE_BEFORE && this.ignoreUpdateBefore) return undefined;
    const i = this.aggs.findIndex((a, c) => a !== undefined && a.retract === undefined && this.groups.some((g) => g.columns.includes(c)));
    return i < 0 ? undefined : cannotRetract(this.columnNames[i]!, this.aggs[i]!.name).message;
  }

  add(kv: KeyValue): void {
    const retract = kv.kind === RowKind.DELETE || kv.kind === RowKind.UPDATE_BEFORE;
    if (retract) {
      if (this.ignoreDelete) return;
      // Not `ignore-update-before`: applied where records are written (TableWriter.write); a -U
      // committed before an ALTER set it retracts as written, as in Java's merge function.
      if (this.removeRecordOnDelete) {
        if (kv.kind === RowKind.DELETE) {
          this.records++;
          this.removeRow(kv);
        }
        return;
      }
      if (this.groups.length === 0) {
        throw invalidArgument(
          `partial-update table (${this.tableName}) received a ${kv.kind === RowKind.DELETE ? '-D' : '-U'} record; ` +
            "set 'ignore-delete', 'partial-update.remove-record-on-delete', or sequence groups ('fields.<seq>.sequence-group')",
        );
      }
      this.records++;
      this.retractGroups(kv);
      return;
    }
    this.records++;
    this.note(kv);
    if (this.unmatched > 0) this.settleUnmatched(kv.value);
    if (this.sawReset) this.addedAfterReset = true;
    const v = kv.value;
    let row = this.row;
    if (row === null) {
      row = new Array(this.arity).fill(null);
      this.row = row;
      this.deleted = false;
    }
    this.applyAdd(row, v);
  }

  /** Applies one +I/+U record to a row (rule 1 and 2 of the file header). */
  private applyAdd(row: unknown[], v: unknown[]): void {
    for (const i of this.keyLike) row[i] = v[i];
    for (const i of this.plain) {
      const x = v[i];
      const a = this.aggs[i];
      if (a !== undefined) row[i] = a.agg(row[i], x);
      else if (x !== null && x !== undefined) row[i] = x;
    }
    for (const g of this.groups) {
      if (g.aggregated) this.aggregateGroup(g, v, row);
      else if (this.groupIsNewer(g, v, row)) for (const c of g.columns) row[c] = v[c] ?? null;
    }
  }

  /**
   * The write buffer's fast path: folds an add into `acc` in place. REQUIRES: `acc` is a result of
   * this function (its row is owned and normalized), so folding in place equals folding afresh.
   * Returns false (nothing changed) when the generic fold is needed: for a retraction, and with
   * an aggregator that keeps per-key state (first_value's "seen an input"), which holds the state
   * of the key folded last, not of `acc`'s; reset/add/result rebuild it from `acc`.
   */
  foldInto(acc: KeyValue, kv: KeyValue): boolean {
    if (this.statefulAggregator) return false;
    if (kv.kind !== RowKind.INSERT && kv.kind !== RowKind.UPDATE_AFTER) return false;
    if (acc.kind !== RowKind.INSERT && acc.kind !== RowKind.UPDATE_AFTER) return false;
    if (this.anyAggregator) {
      // A function may refuse the record (a sum overflowing its column) after others have folded
      // it in: the held row goes back as it was. The write is refused with its row not taken, and
      // the buffer kept the columns folded before the refusal (a refused event half applied).
      const held = acc.value.slice();
      try {
        this.applyAdd(acc.value, kv.value);
      } catch (e) {
        for (let i = 0; i < held.length; i++) acc.value[i] = held[i];
        throw e;
      }
    } else this.applyAdd(acc.value, kv.value);
    if (kv.seq > acc.seq) acc.seq = kv.seq;
    return true;
  }

  /**
   * The read paths' fold of records given by position (MergeFunction.foldAt): rules 1 and 2, cell
   * by cell — key columns from the last record, each plain column from the last record carrying a
   * value, each group from the last record newer than the group's stored sequence (the winner so
   * far). Only for adds and without aggregate functions; undefined otherwise.
   */
  foldAt(parts: readonly RunData[], rows: readonly number[], n: number): unknown[] | undefined {
    if (this.anyAggregator || n === 0) return undefined;
    const views = this.views;
    for (let k = 0; k < n; k++) {
      const v = runView(parts[k]!);
      if (!v.addsOnly) {
        const kd = parts[k]!.kind[rows[k]!];
        if (kd !== RowKind.INSERT && kd !== RowKind.UPDATE_AFTER) {
          for (let j = 0; j < k; j++) views[j] = NO_VIEWS;
          return undefined;
        }
      }
      views[k] = v.cols;
    }
    // Every column is set below (key-like, plain or grouped), so no null fill first.
    const row: unknown[] = new Array(this.arity);
    const last = views[n - 1]!;
    const lastRow = rows[n - 1]!;
    const keyLike = this.keyLike;
    for (let j = 0; j < keyLike.length; j++) row[keyLike[j]!] = readAt(last[keyLike[j]!]!, lastRow);
    const plain = this.plain;
    for (let j = 0; j < plain.length; j++) {
      const c = plain[j]!;
      let x: unknown = null;
      for (let k = n - 1; k >= 0; k--) {
        const v = views[k]![c]!;
        if (isNullAt(v, rows[k]!)) continue;
        x = readAt(v, rows[k]!);
        break;
      }
      row[c] = x;
    }
    const groups = this.groups;
    for (let gi = 0; gi < groups.length; gi++) {
      const g = groups[gi]!;
      // The winner: the last record newer than the group as stored after the records before it.
      let w = -1;
      if (g.seqIndexes.length === 1) {
        // One sequence field (the usual group): groupIsNewerAt unrolled; a winner's is never null,
        // and the first non-null one beats the stored null.
        const s = g.seqIndexes[0]!;
        for (let k = 0; k < n; k++) {
          const c = views[k]![s]!;
          const i = rows[k]!;
          if (isNullAt(c, i)) continue;
          if (w < 0) {
            w = k;
            continue;
          }
          const sc = views[w]![s]!;
          const j = rows[w]!;
          let r = compareInPlace(c, i, sc, j);
          if (r !== r) r = g.cmps[0]!(readAt(c, i), readAt(sc, j));
          if (r >= 0) w = k;
        }
      } else {
        for (let k = 0; k < n; k++) if (this.groupIsNewerAt(g, views[k]!, rows[k]!, w < 0 ? undefined : views[w]!, w < 0 ? 0 : rows[w]!)) w = k;
      }
      const columns = g.columns;
      if (w < 0) for (let j = 0; j < columns.length; j++) row[columns[j]!] = null; // no record set the group
      else {
        const v = views[w]!;
        const r = rows[w]!;
        for (let j = 0; j < columns.length; j++) row[columns[j]!] = readAt(v[columns[j]!]!, r) ?? null;
      }
    }
    for (let k = 0; k < n; k++) views[k] = NO_VIEWS; // hold no run's columns past the call
    return row;
  }

  /** `groupIsNewer` of the record at row i of `cols` against the group as stored from row j of `stored` (undefined: all null). */
  private groupIsNewerAt(g: Group, cols: readonly CellView[], i: number, stored: readonly CellView[] | undefined, j: number): boolean {
    const seqs = g.seqIndexes;
    let allNull = true;
    for (let q = 0; q < seqs.length; q++) {
      if (!isNullAt(cols[seqs[q]!]!, i)) {
        allNull = false;
        break;
      }
    }
    if (allNull) return false;
    for (let q = 0; q < seqs.length; q++) {
      const s = seqs[q]!;
      let r: number;
      if (stored === undefined) r = isNullAt(cols[s]!, i) ? 0 : 1; // against the stored null
      else {
        r = isNullAt(cols[s]!, i) || isNullAt(stored[s]!, j) ? NaN : compareInPlace(cols[s]!, i, stored[s]!, j);
        if (r !== r) r = g.cmps[q]!(readAt(cols[s]!, i), readAt(stored[s]!, j));
      }
      if (r !== 0) return r > 0;
    }
    return true;
  }

  /** Rule 4: an input with a non-null group sequence is aggregated, older ones with the stored value first. */
  private aggregateGroup(g: Group, v: unknown[], row: unknown[]): void {
    if (g.seqIndexes.every((i) => v[i] === null || v[i] === undefined)) return;
    const newer = this.groupIsNewer(g, v, row);
    for (const c of g.columns) {
      if (g.seqIndexes.includes(c)) continue;
      const a = this.aggs[c];
      if (a !== undefined) row[c] = newer ? a.agg(row[c], v[c]) : a.agg(v[c], row[c]);
      else if (newer) row[c] = v[c] ?? null;
    }
    if (newer) for (const i of g.seqIndexes) row[i] = v[i];
  }

  result(): KeyValue | undefined {
    const latest = this.latest;
    if (latest === undefined) return undefined;
    if (this.row === null) {
      // No row: removed, or retractions only (rule 3). A lone retraction stays itself, so it
      // retracts the same when merged later with older records (it may be a -U).
      if (this.records === 1 && !this.deleted) return { key: latest.key, seq: latest.seq, kind: latest.kind, value: latest.value };
      return { key: latest.key, seq: this.maxSeq, kind: RowKind.DELETE, value: (this.removal ?? latest).value };
    }
    return { key: latest.key, seq: this.maxSeq, kind: RowKind.INSERT, value: this.row };
  }

  private note(kv: KeyValue): void {
    this.latest = kv;
    if (kv.seq > this.maxSeq) this.maxSeq = kv.seq;
  }

  private removeRow(kv: KeyValue): void {
    this.note(kv);
    this.row = null;
    this.deleted = true;
    this.sawReset = true;
    this.removal = kv;
    this.clearUnmatched(); // what lies below is gone with the row
    if (this.anyAggregator) for (const a of this.aggs) a?.reset?.();
  }

  /** Incoming group sequence ≥ stored (stored null counts as oldest); all-null incoming → false. */
  private groupIsNewer(g: Group, incoming: unknown[], row: unknown[]): boolean {
    let allNull = true;
    for (const i of g.seqIndexes) if (incoming[i] !== null && incoming[i] !== undefined) allNull = false;
    if (allNull) return false;
    for (let j = 0; j < g.seqIndexes.length; j++) {
      const i = g.seqIndexes[j]!;
      const r = g.cmps[j]!(incoming[i], row[i]);
      if (r !== 0) return r > 0;
    }
    return true;
  }

  private retractGroups(kv: KeyValue): void {
    this.note(kv);
    const v = kv.value;
    const row = this.row;
    if (row === null) {
      this.retractNoRow(kv);
      return;
    }
    if (this.unmatched > 0) this.settleUnmatched(v);
    for (const g of this.groups) {
      if (g.aggregated && !g.seqIndexes.every((i) => v[i] === null || v[i] === undefined)) {
        // Rule 4: the functions retract whatever the sequence; other columns as below.
        const newer = this.groupIsNewer(g, v, row);
        if (newer && kv.kind === RowKind.DELETE && g.removeOnDelete) {
          this.removeRow(kv);
          this.groupRemoved = true;
          return;
        }
        for (const c of g.columns) {
          if (g.seqIndexes.includes(c)) continue;
          const a = this.aggs[c];
          if (a === undefined) {
            if (newer) row[c] = null;
            continue;
          }
          if (a.retract === undefined) throw cannotRetract(this.columnNames[c]!, a.name);
          row[c] = a.retract(row[c], v[c]);
          if (a.retractFold === 'ignored' ? !a.ignoresNull : a.name !== 'sum') this.aggRetracted = true;
        }
        if (newer) for (const i of g.seqIndexes) row[i] = v[i];
        continue;
      }
      if (!this.groupIsNewer(g, v, row)) continue;
      if (kv.kind === RowKind.DELETE && g.removeOnDelete) {
        this.removeRow(kv);
        this.groupRemoved = true;
        return;
      }
      const seq = new Set(g.seqIndexes);
      for (const c of g.columns) row[c] = seq.has(c) ? v[c] : null;
    }
  }

  /**
   * A retraction that meets no row (rule 3) changes nothing here, but it would retract a row
   * below the fold: note per group what it would do there (unmatchedSeq), or that it cannot be
   * told apart later (a group with functions). A -D of a removing group removes (a fresh start).
   */
  private retractNoRow(kv: KeyValue): void {
    const v = kv.value;
    for (let gi = 0; gi < this.groups.length; gi++) {
      const g = this.groups[gi]!;
      if (g.seqIndexes.every((i) => v[i] === null || v[i] === undefined)) continue;
      const stored = this.unmatchedSeq[gi];
      if (kv.kind === RowKind.DELETE && g.removeOnDelete && (stored === undefined || this.groupIsNewer(g, v, stored))) {
        this.removeRow(kv);
        this.groupRemoved = true;
        return;
      }
      if (g.aggregated) {
        this.unmatchedDiverged = true;
        continue;
      }
      if (stored === undefined) this.unmatched++;
      else if (!this.groupIsNewer(g, v, stored)) continue;
      const seq = new Array(this.arity).fill(null);
      for (const i of g.seqIndexes) seq[i] = v[i];
      this.unmatchedSeq[gi] = seq;
    }
  }

  /**
   * A record after retractions that met no row: for each group it carries a sequence for, it
   * overwrites the group below exactly as here when that sequence is ≥ the retractions' (then
   * the fold stands for its inputs again); an older one is taken here but not below.
   */
  private settleUnmatched(v: unknown[]): void {
    for (let gi = 0; gi < this.groups.length; gi++) {
      const stored = this.unmatchedSeq[gi];
      if (stored === undefined) continue;
      const g = this.groups[gi]!;
      if (g.seqIndexes.every((i) => v[i] === null || v[i] === undefined)) continue;
      if (!this.groupIsNewer(g, v, stored)) this.unmatchedDiverged = true;
      this.unmatchedSeq[gi] = undefined;
      this.unmatched--;
    }
  }

  private clearUnmatched(): void {
    if (this.unmatched > 0) this.unmatchedSeq.fill(undefined);
    this.unmatched = 0;
    this.unmatchedDiverged = false;
  }
}
