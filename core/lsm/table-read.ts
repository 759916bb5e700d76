// Reading one snapshot of a table: merged scans with projection and key filters, and point
// lookups. The merge is the k-way merge of merge-reader.ts with the table's merge engine, then
// retractions are dropped (Paimon's DropDeleteReader). A key's lone record — its only record in
// all the runs read — is not folded: it is its row when an add and no row when a retraction, as
// Java's ReducerMergeFunctionWrapper passes it on unfolded; lookup tables fold it, as Java's
// readers meet it after the level-0 compaction of each commit there (merge/README.md, "A key's
// lone record"). Files whose key statistics rule out a filter are never opened.
//
// A reader holds a pin on its snapshot; `close()` releases it. It reads in the columns of its
// `schema`: the snapshot's own at a snapshot id, tag or time, the table's latest otherwise
// (Table.reader, EVOLUTION-DESIGN.md §1); column names in projections, filters and keys are
// resolved against it, and files are reshaped to it by field id (Table.loadRun).

import { binaryRowEncoder } from './binary-row.ts';
import { bucketOf } from './bucket.ts';
import { cell, kvAt, nextPart, PackedColumn, rowAt, rowReader, type Column, type RunData, type RunParts } from './data-file.ts';
import { deserializeBinaryRow } from './binary-row.ts';
import { invalidArgument } from './errors.ts';
import { checkFilters, checkKeyValue } from './filter-check.ts';
import { isAdd, RowKind, type KeyValue } from './key-value.ts';
import type { DataFileMeta } from './manifest.ts';
import { createMergeFunction, mergeOrder, type MergeFunction } from './merge/merge-function.ts';
import { keyHash, lookupKey } from './merge-reader.ts';
import { runView, sortBySeq } from './merge/cell-view.ts';
import { foldsLowestLevelOnly } from './merge/lookup-rule.ts';
import { partialUpdateAggregators } from './merge/partial-update.ts';
import { needsRawScan, rawScan } from './raw-scan.ts';
import type { TableSchema } from './schema.ts';
import type { Snapshot } from './snapshot.ts';
import type { Table } from './table.ts';
import { comparatorFor, isStringType, withNullable, type Comparator, type DataField, type DataType } from './types.ts';

export type PredicateOp = '=' | '<' | '<=' | '>' | '>=' | 'prefix';

/** A condition on one column (values in memory form); files are skipped by key and partition columns. */
export interface Predicate {
  column: string;
  op: PredicateOp;
  value: unknown;
}

export interface ScanOptions {
  /** Column names to return, in this order (default: all columns in schema order). */
  projection?: string[];
  where?: Predicate[];
  /**
   * Whether files this scan decodes are kept in the run cache (default true). False for a one-off
   * read of a large table (an inbox's open at a site's start): it uses what the cache holds and
   * leaves the cache to the tables read again and again (LevelDB's `fill_cache`).
   */
  fillCache?: boolean;
}

interface CompiledPredicate {
  index: number;
  op: PredicateOp;
  value: unknown;
  cmp: Comparator;
  /** Position among the trimmed key columns, or -1. */
  keyPos: number;
  /** Position among the partition columns, or -1. */
  partPos: number;
}

function test(p: CompiledPredicate, v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (p.op === 'prefix') return typeof v === 'string' && v.startsWith(p.value as string);
  const c = p.cmp(v, p.value);
  switch (p.op) {
    case '=':
      return c === 0;
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    default:
      return c >= 0;
  }
}

/** Could any value in [min, max] satisfy p? (null min/max = unknown → yes) */
function mayMatch(p: CompiledPredicate, min: unknown, max: unknown): boolean {
  if (min === null || max === null || min === undefined || max === undefined) return true;
  switch (p.op) {
    case '=':
      return p.cmp(p.value, min) >= 0 && p.cmp(p.value, max) <= 0;
    case '<':
      return p.cmp(min, p.value) < 0;
    case '<=':
      return p.cmp(min, p.value) <= 0;
    case '>':
      return p.cmp(max, p.value) > 0;
    case '>=':
      return p.cmp(max, p.value) >= 0;
    case 'prefix': {
      const s = p.value as string;
      const lo = String(min).slice(0, s.length);
      const hi = String(max).slice(0, s.length);
      return p.cmp(s, lo) >= 0 && p.cmp(s, hi) <= 0;
    }
  }
}

export class TableReader {
  private closed = false;
  private merge!: MergeFunction;
  private order!: (a: KeyValue, b: KeyValue) => number;
  /** Deduplicate without sequence fields: the newest run holding a key decides. */
  private newestWins!: boolean;
  /** Whether merge order is the system sequence number's (no sequence fields): folds by position sort by it. */
  private seqOrder!: boolean;
  /** needsRawScan of the table (lookups scan a deletion-vector table's visible rows). */
  private rawTable!: boolean;
  /**
   * Whether a key is its level-0 records and its lowest record above level 0 only (Java's
   * LookupMergeFunction, merge/lookup-rule.ts): scans fold through LowestLevelBucketScan, `get`
   * through getLowestLevel — so other tables read by the plain paths, untouched.
   */
  private lowestLevel!: boolean;
  /**
   * A dynamic- or postpone-bucket table (schema.keyBucketUnknown): the key's bucket cannot be
   * computed from the key, so `get` searches the partition's buckets (getAnyBucket).
   */
  private anyBucket!: boolean;
  /** rawTable, lowestLevel or anyBucket: `get` leaves its plain path (one test, as rawTable alone was). */
  private ownGet!: boolean;
  /** The trimmed key columns' names (a lookup's key, from its primary-key record). */
  private keyNames!: string[];
  /** The key and partition columns whose values `get` checks (`checkKeyValue`). */
  private keyChecks!: DataField[];
  /** Per key column, its comparator (lookups binary-search the key columns directly). */
  private keyCmps!: Comparator[];
  /** Whether a run's +I/+U rows are their own single-record fold (see `runIsFolded`; lookup tables). */
  private folded!: (d: RunData) => boolean;
  /** Per key column, its comparator with an identity shortcut for strings (scans' merge). */
  private scanKeyCmps!: Comparator[];
  /** Per key column, whether it is a string column (compared natively where that is exact: see plainStrings). */
  private scanKeyFast!: boolean[];

  constructor(
    private readonly table: Table,
    /** undefined: the table has no snapshot yet (reads are empty). */
    readonly snapshot: Snapshot | undefined,
    private readonly release: () => void,
    /** The schema to read in (Table.readSchema); undefined: the table's schema at each call. */
    private readonly fixedSchema?: TableSchema,
  ) {
    this.prepare(this.schema);
  }

  /** The schema the fields above were made for (`prepare`). */
  private preparedFor!: TableSchema;

  /**
   * Makes the per-schema state (merge function, key names and comparators, …) for `s`. A reader
   * without a fixed schema reads in `table.schema` at each call, so after an ALTER in this process
   * `get` and `scan` make it again (`current`): rows in the new columns, keys by their new names.
   */
  private prepare(s: TableSchema): void {
    this.preparedFor = s;
    this.merge = createMergeFunction(s);
    this.order = mergeOrder(s);
    // Not with `ignore-delete`, whose merge skips a newest retraction; `ignore-update-before` acts at
    // write time only (merge/deduplicate.ts).
    this.newestWins = s.options.mergeEngine === 'deduplicate' && s.sequenceFieldIndexes.length === 0 && !s.options.ignoreDelete;
    this.seqOrder = s.sequenceFieldIndexes.length === 0;
    this.rawTable = needsRawScan(this.table);
    this.lowestLevel = foldsLowestLevelOnly(s);
    this.anyBucket = s.keyBucketUnknown;
    this.ownGet = this.rawTable || this.lowestLevel || this.anyBucket;
    this.keyNames = s.keyIndexes.map((i) => s.fields[i]!.name);
    this.keyChecks = [...s.keyIndexes, ...s.partitionIndexes.filter((i) => !s.keyIndexes.includes(i))].map((i) => s.fields[i]!);
    this.keyCmps = s.keyTypes.map(comparatorFor);
    this.folded = runIsFolded(s);
    this.scanKeyFast = s.keyTypes.map(isStringType);
    this.scanKeyCmps = s.keyTypes.map((t) => {
      const c = comparatorFor(t);
      return isStringType(t) ? (a: unknown, b: unknown) => (a === b ? 0 : c(a, b)) : c;
    });
  }

  /**
   * The schema rows come in: their columns, in this order, and the names projections, filters
   * and `get` keys use. At a snapshot id, tag or time the snapshot's own (a column added later is
   * absent, a dropped one present, a renamed one under its old name, a retyped one in its old
   * type); for the latest snapshot `table.schema` as it is now.
   */
  get schema(): TableSchema {
    return this.fixedSchema ?? this.table.schema;
  }

  /** `schema`, with the per-schema state made for it (an ALTER since the last call: `prepare`). */
  private current(): TableSchema {
    const s = this.schema;
    if (s !== this.preparedFor) this.prepare(s);
    return s;
  }

  close(): void {
    if (!this.closed) {
      this.closed = true;
      this.release();
    }
  }

  private compile(where: Predicate[] | undefined): CompiledPredicate[] {
    const s = this.schema;
    return (where ?? []).map((p) => {
      const index = s.fieldIndex.get(p.column);
      if (index === undefined) throw invalidArgument(`filter names unknown column '${p.column}'`);
      const t = s.fields[index]!.type;
      return {
        index,
        op: p.op,
        value: p.value,
        cmp: comparatorFor(withNullable(t, false)),
        keyPos: s.keyIndexes.indexOf(index),
        partPos: s.partitionIndexes.indexOf(index),
      };
    });
  }

  private fileMayMatch(meta: DataFileMeta, preds: CompiledPredicate[]): boolean {
    const keyPreds = preds.filter((p) => p.keyPos >= 0);
    if (keyPreds.length === 0) return true;
    const types = this.schema.keyTypes.map((t) => withNullable(t, true));
    const mins = deserializeBinaryRow(types, meta.keyStats.minValues, meta.fileName);
    const maxs = deserializeBinaryRow(types, meta.keyStats.maxValues, meta.fileName);
    return keyPreds.every((p) => mayMatch(p, mins[p.keyPos], maxs[p.keyPos]));
  }

  /** Merged rows (every column in schema order, or the projection), sorted by key within each bucket. */
  scan(opts: ScanOptions = {}): Generator<unknown[]> {
    // Arguments are checked now, not at the first next(), and also on an empty table.
    const schema = this.current();
    checkFilters(schema, opts.where);
    const preds = this.compile(opts.where);
    const projection = opts.projection?.map((c) => {
      const i = schema.fieldIndex.get(c);
      if (i === undefined) throw invalidArgument(`projection names unknown column '${c}'`);
      return i;
    });
    // Append and deletion-vector tables read without a key merge (raw-scan.ts).
    if (needsRawScan(this.table)) return this.snapshot ? rawScan(this.table, this.snapshot, opts, schema) : this.scanChecked(preds, projection, true);
    return this.scanChecked(preds, projection, opts.fillCache !== false);
  }

  private *scanChecked(preds: CompiledPredicate[], projection: number[] | undefined, fill: boolean): Generator<unknown[]> {
    if (!this.snapshot) return;
    const table = this.table;
    const schema = this.schema;
    const partPreds = preds.filter((p) => p.partPos >= 0);
    const merge = createMergeFunction(schema);
    const order = mergeOrder(schema);
    const keep = projection ? scanColumns(schema, projection, preds) : undefined;
    // One batch per scan (two scans of one reader may be interleaved by their consumers).
    const batch: unknown[][] = new Array(SCAN_BATCH);
    // A file missing under a snapshot this object still had cached (and planned) may have been
    // deleted by an expiration in another process: asked of the table on the error path only.
    try {
      for (const b of table.readBuckets(this.snapshot)) {
        if (partPreds.length > 0) {
          const values = deserializeBinaryRow(schema.partitionTypes, b.partition, table.paths.root);
          if (!partPreds.every((p) => test(p, values[p.partPos]))) continue;
        }
        // Each run's files are decoded as its cursor reaches them, not up front: a scan holds one
        // file per run (and what the run cache keeps), not the whole bucket decoded at once.
        const runs: RunParts[] = [];
        const levels: number[] | undefined = this.lowestLevel ? [] : undefined;
        for (const run of table.runsOf(b.files)) {
          const files = run.files.filter((f) => this.fileMayMatch(f, preds));
          if (files.length > 0) {
            runs.push({ length: files.length, load: (i) => (keep ? table.loadRunProjected(b.partition, b.bucket, files[i]!, keep, fill, schema) : table.loadRun(b.partition, b.bucket, files[i]!, fill, schema)) });
            levels?.push(run.level);
          }
        }
        // The bucket's merged rows, made in batches by a plain loop (BucketScan.fill) and handed out
        // one by one: the generator frame stays out of the per-row work.
        const scan = levels !== undefined
          ? new LowestLevelBucketScan(runs, levels, (d) => this.lookupLoneIsRow(d), this.scanKeyCmps, this.scanKeyFast, merge, order, this.seqOrder, preds, projection)
          : new BucketScan(runs, undefined, this.scanKeyCmps, this.scanKeyFast, merge, order, this.seqOrder, preds, projection);
        for (let n = scan.fill(batch); n > 0; n = scan.fill(batch)) {
          for (let i = 0; i < n; i++) yield batch[i]!;
        }
      }
    } catch (e) {
      throw table.expiredUnder(e, this.snapshot);
    }
  }


  /**
   * A lookup table's record alone with its key (one run holds it) that is read as it is when an
   * add: its fold is the record itself — never for aggregation (a lone retraction folds into a
   * row: sum stores -x); for partial-update with sequence groups only in runs whose rows are their
   * own fold (runIsFolded). Lookup tables fold a lone record, unlike the others (merge/README.md,
   * "A key's lone record": Java compacts their level 0 at every commit with
   * LookupChangelogMergeFunctionWrapper, which folds every key, so its readers meet them folded).
   */
  private lookupLoneIsRow(d: RunData): boolean {
    const o = this.schema.options;
    if (o.mergeEngine === 'aggregation') return false;
    return o.mergeEngine === 'deduplicate' || o.sequenceGroups.length === 0 || this.folded(d);
  }

  /**
   * The row of one primary key, or undefined. `pk` holds every primary-key column (partition
   * keys included), by name, in memory form.
   */
  get(pk: Record<string, unknown>): unknown[] | undefined {
    if (!this.snapshot) return undefined;
    // As in scan: a data file gone under a snapshot this object had cached and planned may have
    // been deleted by an expiration in another process. A try around the whole body costs nothing.
    try {
      const schema = this.current();
      if (!schema.isPrimaryKeyTable) throw invalidArgument(`table ${this.table.name} has no primary key; use scan`);
      const checks = this.keyChecks;
      for (let i = 0; i < checks.length; i++) checkKeyValue(checks[i]!.name, checks[i]!.type, pk[checks[i]!.name]);
      if (this.ownGet) {
        if (!this.rawTable) return this.anyBucket ? this.getAnyBucket(pk) : this.getLowestLevel(pk);
        // Deletion-vector table: the key's row among the visible (level ≥ 1, not deleted) rows.
        const where = schema.primaryKeys.map((k) => ({ column: k, op: '=' as const, value: pk[k] }));
        // A cross-partition-update key (dynamic buckets) is looked up in the partition given, if any.
        if (schema.crossPartitionUpdate) this.narrowToGivenPartition(where, pk);
        for (const row of rawScan(this.table, this.snapshot, { where }, schema)) return row;
        return undefined;
      }
      const table = this.table;
      const fields = schema.fields;
      const keyNames = this.keyNames;
      const key = new Array(keyNames.length);
      for (let i = 0; i < key.length; i++) {
        const v = pk[keyNames[i]!];
        if (v === undefined || v === null) throw invalidArgument(`lookup needs primary-key column '${keyNames[i]!}'`);
        key[i] = v;
      }
      let partitionBytes = EMPTY_PARTITION;
      if (schema.partitionIndexes.length > 0) {
        const partition = schema.partitionIndexes.map((i) => pk[fields[i]!.name]);
        if (partition.some((v) => v === undefined || v === null)) throw invalidArgument('lookup needs every partition-key column');
        partitionBytes = partitionEncoder(schema.partitionTypes)(partition);
      }
      const runs = this.lookupRuns(partitionBytes, this.keyBucket(schema, pk, partitionBytes));
      if (runs === undefined) return undefined;
      const cmps = this.keyCmps;
      // The key's records as (run, row) positions, newest run first; KeyValues only for the generic fold.
      const parts = this.lookParts;
      const rows = this.lookRows;
      let n = 0;
      let hash: number | undefined;
      for (const files of runs) {
        for (const f of files) {
          if (!inRange(f, key, cmps)) continue;
          const d = table.loadRunAt(f.path, f.meta, true, schema);
          const i = lookupKey(d, key, cmps, (hash ??= keyHash(key)));
          if (i >= 0) {
            parts[n] = d;
            rows[n++] = i;
          }
          break; // files of one run do not overlap
        }
        // Deduplicate without sequence fields: the newest run holding the key decides.
        if (n > 0 && this.newestWins) break;
      }
      try {
        // n counts every record of the key (newestWins stops at one, but there one add is its own
        // fold and one retraction no row either way).
        return this.foldLookup(n, n === 1);
      } finally {
        for (let k = 0; k < n; k++) parts[k] = NO_RUN; // hold no run past the call
      }
    } catch (e) {
      throw this.table.expiredUnder(e, this.snapshot);
    }
  }

  /**
   * `get` of a table that folds a key's lowest record above level 0 only (lowestLevel): the runs
   * come newest first — level-0 files, then levels 1, 2, … — so the search stops at the first run
   * above level 0 that holds the key; the key's records in higher levels are stale.
   */
  private getLowestLevel(pk: Record<string, unknown>): unknown[] | undefined {
    const at = this.locate(pk);
    if (at === undefined) return undefined;
    const { key, runs } = at;
    const parts = this.lookParts;
    const n = this.gatherRuns(runs, key, this.keyCmps, keyHash(key), true);
    try {
      // A lookup table folds a lone record too (lookupLoneIsRow).
      return this.foldLookup(n, false);
    } finally {
      for (let k = 0; k < n; k++) parts[k] = NO_RUN;
    }
  }

  /**
   * Adds to a cross-partition-update lookup's filter the partition columns the caller gave (those
   * outside the primary key): a key's row in another partition is not the one asked for.
   */
  private narrowToGivenPartition(where: Predicate[], pk: Record<string, unknown>): void {
    const schema = this.schema;
    for (const k of schema.partitionKeys) if (!schema.primaryKeys.includes(k) && pk[k] !== undefined && pk[k] !== null) where.push({ column: k, op: '=', value: pk[k] });
  }

  /**
   * `get` of a dynamic- or postpone-bucket table. Paimon keeps a key in one bucket of its
   * partition (the HASH index of a dynamic table; hash modulo the partition's own bucket count
   * after a postpone compaction), but which one is not computable here, so each real bucket of the
   * partition is searched as `get` searches one, and the first that folds to a row gives it. A
   * cross-partition-update table looked up without its partition columns is scanned with the key
   * as a filter: the key's row may be in any partition (the old ones hold its retraction).
   */
  private getAnyBucket(pk: Record<string, unknown>): unknown[] | undefined {
    const schema = this.schema;
    const fields = schema.fields;
    const partValues = schema.partitionIndexes.map((i) => pk[fields[i]!.name]);
    if (partValues.some((v) => v === undefined || v === null)) {
      if (!schema.crossPartitionUpdate) throw invalidArgument('lookup needs every partition-key column');
      const where: Predicate[] = [];
      for (const k of schema.primaryKeys) {
        if (pk[k] === undefined || pk[k] === null) throw invalidArgument(`lookup needs primary-key column '${k}'`);
        where.push({ column: k, op: '=', value: pk[k] });
      }
      this.narrowToGivenPartition(where, pk);
      for (const row of this.scanChecked(this.compile(where), undefined, true)) return row;
      return undefined;
    }
    const keyNames = this.keyNames;
    const key = new Array(keyNames.length);
    for (let i = 0; i < key.length; i++) {
      const v = pk[keyNames[i]!];
      if (v === undefined || v === null) throw invalidArgument(`lookup needs primary-key column '${keyNames[i]!}'`);
      key[i] = v;
    }
    const partition = partitionEncoder(schema.partitionTypes)(partValues);
    const cmps = this.keyCmps;
    const parts = this.lookParts;
    const hash = keyHash(key);
    const lowest = this.lowestLevel;
    for (const b of this.table.readBuckets(this.snapshot!)) {
      if (Buffer.compare(b.partition, partition) !== 0) continue;
      const runs = this.lookupRuns(b.partition, b.bucket);
      if (runs === undefined) continue;
      const n = this.gatherRuns(runs, key, cmps, hash, lowest);
      let row: unknown[] | undefined;
      try {
        row = this.foldLookup(n, !lowest && n === 1);
      } finally {
        for (let k = 0; k < n; k++) parts[k] = NO_RUN;
      }
      if (row !== undefined) return row;
    }
    return undefined;
  }

  /**
   * The records of `key` in one bucket's `runs` (newest first) into lookParts/lookRows; returns
   * their count. At most one file per run can hold the key. The search stops at the first run
   * holding the key when newestWins (deduplicate without sequence fields), or, when
   * `stopAboveLevelZero` (lowestLevel tables), at the first such run above level 0: the key's
   * records in higher levels are stale. A plain method, no closures: getLowestLevel and
   * getAnyBucket are lookup paths (`get`'s plain path keeps its own inline copy).
   */
  private gatherRuns(runs: LookupFile[][], key: readonly unknown[], cmps: readonly Comparator[], hash: number, stopAboveLevelZero: boolean): number {
    const table = this.table;
    const schema = this.schema;
    const parts = this.lookParts;
    const rows = this.lookRows;
    let n = 0;
    for (const files of runs) {
      let found = false;
      for (const f of files) {
        if (!inRange(f, key, cmps)) continue;
        const d = table.loadRunAt(f.path, f.meta, true, schema);
        const i = lookupKey(d, key, cmps, hash);
        if (i >= 0) {
          parts[n] = d;
          rows[n++] = i;
          found = true;
        }
        break; // files of one run do not overlap
      }
      if (found && (this.newestWins || (stopAboveLevelZero && files[0]!.meta.level > 0))) break;
    }
    return n;
  }

  /**
   * The key of `pk` and the runs of its bucket (undefined: no such bucket), checked as `get` checks
   * them. `get`'s plain path keeps its own inline copy of this: it is the point-lookup hot path.
   */
  private locate(pk: Record<string, unknown>): { key: unknown[]; runs: LookupFile[][] } | undefined {
    const schema = this.schema;
    const keyNames = this.keyNames;
    const key = new Array(keyNames.length);
    for (let i = 0; i < key.length; i++) {
      const v = pk[keyNames[i]!];
      if (v === undefined || v === null) throw invalidArgument(`lookup needs primary-key column '${keyNames[i]!}'`);
      key[i] = v;
    }
    let partitionBytes = EMPTY_PARTITION;
    if (schema.partitionIndexes.length > 0) {
      const partition = schema.partitionIndexes.map((i) => pk[schema.fields[i]!.name]);
      if (partition.some((v) => v === undefined || v === null)) throw invalidArgument('lookup needs every partition-key column');
      partitionBytes = partitionEncoder(schema.partitionTypes)(partition);
    }
    const runs = this.lookupRuns(partitionBytes, this.keyBucket(schema, pk, partitionBytes));
    return runs === undefined ? undefined : { key, runs };
  }

  /**
   * The row of the key whose n records `get` found (lookParts/lookRows, newest run first), or
   * undefined. `lone`: the one record found is the key's only one, read as it is (not folded).
   */
  private foldLookup(n: number, lone: boolean): unknown[] | undefined {
    if (n === 0) return undefined;
    const parts = this.lookParts;
    const rows = this.lookRows;
    if (n === 1) {
      const first = parts[0]!;
      const add = isAdd(first.kind[rows[0]!]!);
      if (lone || this.newestWins) return add ? rowAt(first, rows[0]!) : undefined;
      // A lookup table's record found alone: folded, unless the fold is the record itself.
      if (add && this.schema.options.mergeEngine !== 'aggregation' && this.folded(first)) return rowAt(first, rows[0]!);
    }
    if (n > 1 && this.seqOrder && this.merge.foldAt !== undefined) {
      sortBySeq(parts, rows, n); // into merge order by position
      const row = this.merge.foldAt(parts, rows, n);
      if (row !== undefined) return row;
    }
    const records: KeyValue[] = [];
    for (let k = 0; k < n; k++) records.push(kvAt(parts[k]!, rows[k]!));
    records.sort(this.order);
    this.merge.reset();
    for (const kv of records) this.merge.add(kv);
    const r = this.merge.result();
    return r && isAdd(r.kind) ? r.value : undefined;
  }

  /**
   * Per partition (hex of its bytes) the bucket count its files were written for
   * (`_TOTAL_BUCKETS`), where that is not the table's `bucket`; empty (the usual case) when every
   * partition has the table's count. Made at the first lookup.
   */
  private rescaled: Map<string, number> | undefined;

  /**
   * The bucket of `pk` in `partition` (EMPTY_PARTITION: unpartitioned). A partition Java has not
   * rewritten since an ALTER of `bucket` (Paimon's "rescale bucket": only an INSERT OVERWRITE
   * moves a partition to the new count) keeps its keys where the old count put them; Java's
   * key-filtered scans pick buckets by each file's own count, so `get` hashes by it too.
   */
  private keyBucket(schema: TableSchema, pk: Record<string, unknown>, partition: Uint8Array): number {
    let rescaled = this.rescaled;
    if (rescaled === undefined) {
      rescaled = new Map();
      for (const b of this.table.readBuckets(this.snapshot!)) {
        if (b.totalBuckets > 0 && b.totalBuckets !== schema.options.bucket) rescaled.set(Buffer.from(b.partition).toString('hex'), b.totalBuckets);
      }
      this.rescaled = rescaled;
    }
    if (rescaled.size === 0) return bucketFor(schema, pk);
    const n = rescaled.get(Buffer.from(partition.length === 0 ? partitionEncoder([])([]) : partition).toString('hex'));
    return bucketFor(schema, pk, n);
  }

  /** get's scratch: the records of one key by position. */
  private readonly lookParts: RunData[] = [];
  private readonly lookRows: number[] = [];

  private readonly runsByBucket = new Map<string, LookupFile[][] | undefined>();
  /** runsByBucket of an unpartitioned table, by bucket (null: no such bucket). */
  private readonly runsOfBucket: Array<LookupFile[][] | null | undefined> = [];

  /** The bucket's sorted runs, newest first, with decoded key ranges (cached per reader). */
  private lookupRuns(partition: Uint8Array, bucket: number): LookupFile[][] | undefined {
    if (partition.length === 0) {
      let runs = this.runsOfBucket[bucket];
      if (runs === undefined) this.runsOfBucket[bucket] = runs = this.bucketRuns(partition, bucket) ?? null;
      return runs ?? undefined;
    }
    const id = `${Buffer.from(partition).toString('hex')}/${bucket}`;
    if (this.runsByBucket.has(id)) return this.runsByBucket.get(id);
    const runs = this.bucketRuns(partition, bucket);
    this.runsByBucket.set(id, runs);
    return runs;
  }

  /** The bucket's sorted runs as lookups take them (undefined: the snapshot has no such bucket). */
  private bucketRuns(partition: Uint8Array, bucket: number): LookupFile[][] | undefined {
    const b = this.table.bucketFiles(this.snapshot!, partition.length === 0 ? partitionEncoder([])([]) : partition, bucket);
    return b
      ? this.table.runsOf(b.files).map((r) =>
          r.files.map((meta) => {
            const { min, max } = this.table.keyRange(meta);
            const strings = this.scanKeyFast;
            const plain = strings.every((str, k) => !str || (isPlainString(min[k]) && isPlainString(max[k])));
            return { meta, path: this.table.dataFilePath(b.partition, b.bucket, meta.fileName, meta.externalPath), min, max, plain };
          }),
        )
      : undefined;
  }
}

interface LookupFile {
  meta: DataFileMeta;
  path: string;
  min: unknown[];
  max: unknown[];
  /** Whether the string columns of min and max are plain (see plainStrings). */
  plain: boolean;
}

/** Whether `key` lies in the file's key range. */
function inRange(f: LookupFile, key: readonly unknown[], cmps: readonly Comparator[]): boolean {
  if (!f.plain) return compareCols(cmps, key, f.min) >= 0 && compareCols(cmps, key, f.max) <= 0;
  return comparePlain(cmps, key, f.min) >= 0 && comparePlain(cmps, key, f.max) <= 0;
}

/**
 * compareCols where the strings of `b` are plain: strings by `<`. Exact: at the first code unit
 * where two strings differ, compareStrings departs from `<` only when one unit is a surrogate and
 * the other is ≥ 0xE000; a plain string's unit is below 0xD800, so the order of the other's unit
 * (surrogate or not, it is above) is the same both ways.
 */
function comparePlain(cmps: readonly Comparator[], a: readonly unknown[], b: readonly unknown[]): number {
  for (let i = 0; i < cmps.length; i++) {
    const x = a[i];
    const y = b[i];
    const r = typeof x === 'string' && typeof y === 'string' ? (x === y ? 0 : x < y ? -1 : 1) : cmps[i]!(x, y);
    if (r !== 0) return r;
  }
  return 0;
}

/** A string without UTF-16 code units ≥ 0xD800 (between such strings `<` is the key order: plainStrings). */
function isPlainString(v: unknown): boolean {
  if (typeof v !== 'string') return false;
  for (let i = 0; i < v.length; i++) if (v.charCodeAt(i) >= 0xd800) return false;
  return true;
}

/** An empty run: what get's scratch holds between calls. */
const NO_RUN: RunData = { rowCount: 0, keyCols: [], seq: [], kind: [], valueCols: [] };

function compareCols(cmps: readonly Comparator[], a: readonly unknown[], b: readonly unknown[]): number {
  for (let i = 0; i < cmps.length; i++) {
    const r = cmps[i]!(a[i], b[i]);
    if (r !== 0) return r;
  }
  return 0;
}

/** What a projected scan decodes (`scanColumns`). */
export interface ScanColumns {
  /** The value columns decoded (field indexes). */
  keep: ReadonlySet<number>;
  /** The same, as the run cache's key names them: decided once per scan, not per file. */
  key: string;
}

/**
 * The value columns a projected scan decodes (Table.loadRunProjected): the projection, the
 * predicates' columns, and what the merge orders and groups by — `sequence.field` and every
 * sequence group's sequence fields. A column outside them reads as null in the runs, which
 * changes only that column of a merged row (partial-update merges each column or group on its
 * own; deduplicate and first-row pick whole records by key, kind and sequence), and the
 * projection drops it. Undefined (decode everything) for aggregation, whose functions this does
 * not vouch for, and when nothing would be left out.
 */
export function scanColumns(schema: Table['schema'], projection: readonly number[], preds: readonly { index: number }[]): ScanColumns | undefined {
  const engine = schema.options.mergeEngine;
  if (engine !== 'deduplicate' && engine !== 'partial-update' && engine !== 'first-row') return undefined;
  const keep = new Set<number>([...projection, ...preds.map((p) => p.index), ...schema.sequenceFieldIndexes]);
  for (const g of schema.options.sequenceGroups) {
    for (const f of g.sequenceFields) {
      const i = schema.fieldIndex.get(f);
      if (i === undefined) return undefined; // the merge function refuses this schema; leave it to it
      keep.add(i);
    }
  }
  const values = schema.fields.length - schema.keyIndexes.length;
  let kept = 0;
  for (const i of keep) if (!schema.keyIndexes.includes(i)) kept++;
  return kept < values ? { keep, key: [...keep].sort((a, b) => a - b).join(',') } : undefined;
}

/**
 * A test of whether every row of a run is +I/+U and equals its own single-record fold, so a lookup
 * table (which folds a lone record) may read such a record as it is. True for deduplicate and
 * first-row (a lone add stands as it is) and for partial-update without sequence groups; with
 * sequence groups (and no aggregate functions) a row passes when every group whose sequence
 * fields are all null has only nulls — what the fold would make of it. Lone adds are written
 * unfolded (write buffer, compaction), so such a row may fail it. Aggregation never passes.
 * Cached per decoded run.
 */
export function runIsFolded(schema: Table['schema']): (d: RunData) => boolean {
  const o = schema.options;
  const none = () => false;
  if (o.mergeEngine === 'aggregation') return none;
  // Whether every record is an add: one pass per run, kept with the run's view (merge/cell-view.ts).
  const addsOnly = (d: RunData) => runView(d).addsOnly;
  if (o.mergeEngine !== 'partial-update' || o.sequenceGroups.length === 0) return addsOnly;
  let aggregated: boolean;
  try {
    aggregated = partialUpdateAggregators(schema).some((a) => a !== undefined);
  } catch {
    return none; // the merge function refuses this schema; leave the error to it
  }
  if (aggregated) return none;
  const groups = o.sequenceGroups.map((g) => ({
    seqs: g.sequenceFields.map((f) => schema.fieldIndex.get(f)!),
    columns: [...g.sequenceFields, ...g.columns].map((c) => schema.fieldIndex.get(c)!),
  }));
  if (groups.some((g) => g.seqs.some((i) => i === undefined) || g.columns.some((i) => i === undefined))) return none;
  return cached((d) => {
    if (!addsOnly(d)) return false;
    for (const g of groups) if (!groupFolded(d, g.seqs, g.columns)) return false;
    return true;
  });
}

/** Whether every row of `d` whose sequence fields `seqs` are all null has only nulls in `columns`. */
function groupFolded(d: RunData, seqs: readonly number[], columns: readonly number[]): boolean {
  const seqCols = seqs.map((i) => d.valueCols[i]!);
  const cols = columns.map((i) => d.valueCols[i]!);
  if (seqCols.every((c) => c instanceof PackedColumn) && cols.every((c) => c instanceof PackedColumn)) {
    // Decoded runs: eight rows at a time through the null bitmaps (bits past rowCount are 0).
    const seqNulls: Uint8Array[] = [];
    for (const c of seqCols as PackedColumn[]) {
      if (c.nulls === undefined) return true; // a sequence field without nulls: no row to check
      seqNulls.push(c.nulls);
    }
    const colNulls = (cols as PackedColumn[]).map((c) => c.nulls);
    const bytes = (d.rowCount + 7) >>> 3;
    for (let b = 0; b < bytes; b++) {
      let allNull = 0xff;
      for (const nb of seqNulls) allNull &= nb[b]!;
      if (allNull === 0) continue;
      for (const nb of colNulls) if (nb === undefined || (allNull & ~nb[b]!) !== 0) return false;
    }
    return true;
  }
  for (let r = 0; r < d.rowCount; r++) {
    let allNull = true;
    for (const c of seqCols) if (!isNullAt(c, r)) allNull = false;
    if (!allNull) continue;
    for (const c of cols) if (!isNullAt(c, r)) return false;
  }
  return true;
}

function cached(test: (d: RunData) => boolean): (d: RunData) => boolean {
  const seen = new WeakMap<RunData, boolean>();
  return (d) => {
    let r = seen.get(d);
    if (r === undefined) seen.set(d, (r = test(d)));
    return r;
  };
}

const EMPTY_PARTITION: Uint8Array = new Uint8Array(0);

function isNullAt(c: Column, i: number): boolean {
  if (c instanceof PackedColumn) return c.isNull(i);
  const v = c[i];
  return v === null || v === undefined;
}

function matchesAt(d: RunData, i: number, preds: CompiledPredicate[]): boolean {
  for (const p of preds) if (!test(p, cell(d.valueCols[p.index]!, i))) return false;
  return true;
}

function projectAt(d: RunData, i: number, projection: number[] | undefined): unknown[] {
  if (!projection) return rowAt(d, i);
  const cols = d.valueCols;
  const row = new Array(projection.length);
  for (let j = 0; j < row.length; j++) row[j] = cell(cols[projection[j]!]!, i);
  return row;
}

/** Rows a scan makes per BucketScan.fill before handing them out. */
const SCAN_BATCH = 256;

/** A position in one sorted run (parts in key order) for the scan's merge. */
class ScanCursor {
  /** Index of the next part to load. */
  private fi = 0;
  part!: RunData;
  keyCols!: unknown[][];
  row = 0;
  /** The current part's row count. */
  end = 0;
  /** Whether the current part's records stand as they are when alone with their key (always but for lookup tables). */
  lone = true;
  /** Whether the current part's string key columns compare natively (plainStrings; false when never compared). */
  plain = false;
  /** The current part's row reader. */
  read!: (i: number) => unknown[];
  done = false;
  /** The run's level (set by LowestLevelBucketScan only; plain scans never look at it). */
  level = 0;

  constructor(
    readonly parts: RunParts,
    /** Undefined: every record alone with its key is read as it is (all tables but lookup ones). */
    private readonly loneIsRow: ((d: RunData) => boolean) | undefined,
    /** Undefined when this cursor is the bucket's only one: it is never compared. */
    private readonly stringKeys: readonly boolean[] | undefined,
  ) {
    this.nextPart();
  }

  nextPart(): void {
    const n = nextPart(this.parts, this.fi);
    if (n === undefined) {
      this.done = true;
      return;
    }
    const d = n.part;
    this.fi = n.next;
    this.part = d;
    this.keyCols = d.keyCols;
    this.row = 0;
    this.end = d.rowCount;
    if (this.loneIsRow !== undefined) this.lone = this.loneIsRow(d);
    this.plain = this.stringKeys !== undefined && plainStrings(d, this.stringKeys);
    this.read = rowReader(d);
  }
}

const plainRuns = new WeakMap<RunData, boolean>();
const NOT_PLAIN = /[\ud800-\uffff]/;

/**
 * Whether every value of the run's string key columns is a string without UTF-16 code units
 * ≥ 0xD800. Between such strings JavaScript's `<` (UTF-16 code-unit order) agrees with the key
 * order (UTF-8 byte order, compareStrings): the two differ only where a surrogate meets a code
 * unit in 0xE000–0xFFFF. Cached per decoded run; neighbouring equal strings are tested once.
 */
function plainStrings(d: RunData, stringKeys: readonly boolean[]): boolean {
  let r = plainRuns.get(d);
  if (r !== undefined) return r;
  r = true;
  for (let k = 0; k < stringKeys.length && r; k++) {
    if (!stringKeys[k]) continue;
    const col = d.keyCols[k]!;
    let prev: unknown = undefined;
    for (let i = 0; i < d.rowCount; i++) {
      const v = col[i];
      if (v === prev) continue;
      if (typeof v !== 'string' || NOT_PLAIN.test(v)) {
        r = false;
        break;
      }
      prev = v;
    }
  }
  plainRuns.set(d, r);
  return r;
}

/**
 * The merged rows of one bucket's sorted runs: merge-reader.ts's k-way merge (order and fold),
 * specialized for scans. Cursors compare key columns in place; a key held by one run is lone and
 * read as it is, without a KeyValue or the merge function (its row when an add, none when a
 * retraction: Java's ReducerMergeFunctionWrapper, whatever the engine); the last run left is read
 * in a tight loop; a key held by several runs is folded by position (MergeFunction.foldAt)
 * where the engine offers it. Rows come out in batches (`fill`), so the caller's generator does no
 * per-row work beyond handing them out.
 */
class BucketScan {
  protected readonly cursors: ScanCursor[] = [];
  /** The cursors positioned on the current minimum key (first `ns` entries). */
  protected readonly same: ScanCursor[];
  private readonly nk: number;
  /** Scratch for `fold`: the records of one key by position, in merge order. */
  private readonly foldParts: RunData[] = [];
  private readonly foldRows: number[] = [];

  constructor(
    runs: RunParts[],
    /** Lookup tables' lookupLoneIsRow; undefined: a lone record is read as it is. */
    loneIsRow: ((d: RunData) => boolean) | undefined,
    private readonly cmps: readonly Comparator[],
    private readonly stringKeys: readonly boolean[],
    private readonly merge: MergeFunction,
    private readonly order: (a: KeyValue, b: KeyValue) => number,
    /** Whether `order` is the system sequence number's (the table has no sequence fields). */
    private readonly seqOrder: boolean,
    private readonly preds: CompiledPredicate[],
    private readonly projection: number[] | undefined,
  ) {
    for (const parts of runs) {
      const c = new ScanCursor(parts, loneIsRow, runs.length > 1 ? stringKeys : undefined);
      if (!c.done) this.cursors.push(c);
    }
    this.same = new Array(this.cursors.length);
    this.nk = cmps.length;
  }

  /** Writes the next rows into out[0…], at most out.length; returns how many (0: the bucket is done). */
  fill(out: unknown[][]): number {
    const cursors = this.cursors;
    const same = this.same;
    const preds = this.preds;
    const projection = this.projection;
    const max = out.length;
    let n = 0;
    while (n < max && cursors.length > 0) {
      if (cursors.length === 1 && cursors[0]!.lone) {
        n = this.fillLone(cursors[0]!, out, n);
        if (cursors[0]!.done) cursors.pop();
        continue;
      }
      let min = cursors[0]!;
      let ns = 1;
      same[0] = min;
      for (let j = 1; j < cursors.length; j++) {
        const c = cursors[j]!;
        const r = this.compare(c, min);
        if (r < 0) {
          min = c;
          ns = 1;
          same[0] = c;
        } else if (r === 0) same[ns++] = c;
      }
      let row: unknown[] | undefined;
      if (ns === 1 && min.lone) {
        // The key's lone record: its row when an add, none when a retraction — Java's
        // ReducerMergeFunctionWrapper, not the engine (lookup tables: only where that is the fold).
        const d = min.part;
        const i = min.row;
        const kd = d.kind[i]!;
        if ((kd === RowKind.INSERT || kd === RowKind.UPDATE_AFTER) && (preds.length === 0 || matchesAt(d, i, preds))) {
          row = projection ? projectAt(d, i, projection) : min.read(i);
        }
      } else row = this.fold(ns);
      for (let k = 0; k < ns; k++) {
        const c = same[k]!;
        if (++c.row >= c.end) {
          c.nextPart();
          if (c.done) cursors.splice(cursors.indexOf(c), 1);
        }
      }
      if (row !== undefined) out[n++] = row;
    }
    return n;
  }

  /** The rows of the last run left, from its position on: each of its records is lone (while its parts' are read as they are). */
  private fillLone(c: ScanCursor, out: unknown[][], n: number): number {
    const preds = this.preds;
    const projection = this.projection;
    const max = out.length;
    while (n < max && !c.done && c.lone) {
      const d = c.part;
      const kind = d.kind;
      const read = c.read;
      const end = c.end;
      let i = c.row;
      for (; i < end && n < max; i++) {
        const kd = kind[i]!;
        if (kd !== RowKind.INSERT && kd !== RowKind.UPDATE_AFTER) continue;
        if (preds.length > 0 && !matchesAt(d, i, preds)) continue;
        out[n++] = projection ? projectAt(d, i, projection) : read(i);
      }
      c.row = i;
      if (i >= end) c.nextPart();
    }
    return n;
  }

  /** Key order of two cursors' current rows. */
  private compare(a: ScanCursor, b: ScanCursor): number {
    const ak = a.keyCols;
    const bk = b.keyCols;
    const ar = a.row;
    const br = b.row;
    const plain = a.plain && b.plain;
    for (let k = 0; k < this.nk; k++) {
      const x = ak[k]![ar];
      const y = bk[k]![br];
      if (this.stringKeys[k]) {
        if (x === y) continue;
        if (plain) return (x as string) < (y as string) ? -1 : 1;
      }
      const r = this.cmps[k]!(x, y);
      if (r !== 0) return r;
    }
    return 0;
  }

  /** The merge function's fold of the first `ns` cursors' records (one key), as a row, or undefined. */
  protected fold(ns: number): unknown[] | undefined {
    const merge = this.merge;
    const same = this.same;
    if (this.seqOrder && merge.foldAt !== undefined) {
      // By position: the records in merge order (as the generic path below orders them), folded
      // cell by cell.
      const parts = this.foldParts;
      const rows = this.foldRows;
      for (let k = 0; k < ns; k++) {
        parts[k] = same[k]!.part;
        rows[k] = same[k]!.row;
      }
      sortBySeq(parts, rows, ns);
      const row = merge.foldAt(parts, rows, ns);
      if (row !== undefined) {
        const preds = this.preds;
        if (preds.length > 0 && !preds.every((p) => test(p, row[p.index]))) return undefined;
        const projection = this.projection;
        return projection ? projection.map((i) => row[i]) : row;
      }
    }
    merge.reset();
    if (ns === 1) merge.add(this.record(same[0]!));
    else if (ns === 2) {
      // A stable sort of two: swapped only when strictly out of order.
      const a = this.record(same[0]!);
      const b = this.record(same[1]!);
      if (this.order(a, b) > 0) {
        merge.add(b);
        merge.add(a);
      } else {
        merge.add(a);
        merge.add(b);
      }
    } else {
      const group: KeyValue[] = [];
      for (let k = 0; k < ns; k++) group.push(this.record(same[k]!));
      group.sort(this.order);
      for (const kv of group) merge.add(kv);
    }
    const kv = merge.result();
    if (kv === undefined || !isAdd(kv.kind)) return undefined;
    const preds = this.preds;
    if (preds.length > 0 && !preds.every((p) => test(p, kv.value[p.index]))) return undefined;
    const projection = this.projection;
    return projection ? projection.map((i) => kv.value[i]) : kv.value;
  }

  /** The cursor's current record as a KeyValue (what kvAt makes, with the cursor's row reader). */
  private record(c: ScanCursor): KeyValue {
    const d = c.part;
    const i = c.row;
    const key = new Array(this.nk);
    for (let k = 0; k < key.length; k++) key[k] = c.keyCols[k]![i];
    return { key, seq: d.seq[i]!, kind: d.kind[i] as KeyValue['kind'], value: c.read(i) };
  }
}

/**
 * BucketScan for tables whose key is its level-0 records and its lowest record above level 0 only
 * (merge/lookup-rule.ts, Java's LookupMergeFunction). Only a key held by several runs can hold a
 * stale record, and those go through `fold`: it folds the level-0 records and the record of the
 * lowest level above 0, and leaves the others out (they still advance: `fill` moves every cursor
 * on the key), also when only one record is left to fold: that one is folded, as Java's reducer
 * sees the key's records before the pick. A key in one run is lone, read as in BucketScan.
 */
class LowestLevelBucketScan extends BucketScan {
  constructor(runs: RunParts[], levels: readonly number[], ...rest: BucketScanRest) {
    super(runs, ...rest);
    // The base keeps the cursors of non-empty runs, in run order: match them to their runs' levels.
    const cursors = this.cursors;
    for (let r = 0, c = 0; r < runs.length && c < cursors.length; r++) {
      if (cursors[c]!.parts === runs[r]) cursors[c++]!.level = levels[r]!;
    }
  }

  protected override fold(ns: number): unknown[] | undefined {
    const same = this.same;
    // The lowest level above 0 among the key's cursors (a level holds a key once).
    let low = -1;
    for (let k = 0; k < ns; k++) {
      const l = same[k]!.level;
      if (l > 0 && (low === -1 || l < same[low]!.level)) low = k;
    }
    // The folded cursors first (level 0, the lowest above it), the stale ones after them: `fill`
    // advances all ns whatever their order.
    let kept = 0;
    for (let k = 0; k < ns; k++) {
      const c = same[k]!;
      if (c.level > 0 && k !== low) continue;
      same[k] = same[kept]!;
      same[kept++] = c;
    }
    return super.fold(kept);
  }
}

/** BucketScan's constructor parameters after `runs`. */
type BucketScanRest = ConstructorParameters<typeof BucketScan> extends [RunParts[], ...infer R] ? R : never;

const encoders = new WeakMap<readonly DataType[], (v: readonly unknown[]) => Uint8Array>();
export function partitionEncoder(types: readonly DataType[]): (v: readonly unknown[]) => Uint8Array {
  let e = encoders.get(types);
  if (!e) {
    e = binaryRowEncoder(types, true);
    encoders.set(types, e);
  }
  return e;
}

const bucketEncoders = new WeakMap<object, (v: readonly unknown[]) => Uint8Array>();
/**
 * The bucket of a row given by column name (Paimon's fixed-bucket hash of the bucket key), among
 * `n` buckets (default: the table's `bucket`).
 */
export function bucketFor(schema: Table['schema'], row: Record<string, unknown>, n: number = schema.options.bucket): number {
  if (n === 1) return 0;
  let enc = bucketEncoders.get(schema);
  if (!enc) {
    enc = binaryRowEncoder(schema.bucketKeyIndexes.map((i) => schema.fields[i]!.type));
    bucketEncoders.set(schema, enc);
  }
  return bucketOf(enc(schema.bucketKeyIndexes.map((i) => row[schema.fields[i]!.name])), n);
}
