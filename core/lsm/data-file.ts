// Data files of a primary-key table: one sorted run of records written as a Parquet file with
// Paimon's columns (`_KEY_<k>…`, `_SEQUENCE_NUMBER`, `_VALUE_KIND`, then every table column), its
// DataFileMeta (sizes, key range, statistics, sequence range) for the manifest, and the way back
// from a file to records.
//
// In memory a file is a `RunData`: columns of values, rows sorted by key, one row per key.
// Invariants: a file is written once under a unique name and never changed; `_FILE_SIZE` is the
// exact byte size; min/max key are the first and last keys.

import { serializeBinaryRow } from './binary-row.ts';
import { corruption, LsmError } from './errors.ts';
import { writeNewInParts, type FileIO } from './file-io.ts';
import { readParquetTyped, type ColumnValues, type ParquetColumn, type ParquetReadColumn, type TypedColumn } from './format/parquet/index.ts';
import { appendRun, decodeDataFile, encodeDataFile, formatOfPath, parquetDataFileEncoder } from './data-file-format.ts';
import { RowKind, type KeyValue } from './key-value.ts';
import type { DataFileMeta, SimpleStats } from './manifest.ts';
import {
  KEY_FIELD_ID_START,
  KEY_PREFIX,
  SEQUENCE_NUMBER_FIELD_ID,
  VALUE_KIND_FIELD_ID,
  type TableSchema,
} from './schema.ts';
import { comparatorFor, isBinaryType, isNestedType, isStringType, parseType, withNullable, type DataType } from './types.ts';

const SEQ_TYPE: DataType = parseType('BIGINT NOT NULL');
const KIND_TYPE: DataType = parseType('TINYINT NOT NULL');
const STATS_TRUNCATE_CHARS = 16;

export interface RunData {
  readonly rowCount: number;
  /** One array per trimmed primary-key column. */
  readonly keyCols: unknown[][];
  /**
   * Sequence numbers and value kinds: JS arrays as the write buffer builds them; in runs decoded,
   * built by compaction (compaction/run-builder.ts) or put into the run cache, typed arrays (kinds
   * in a Uint8Array, sequence numbers in an Int32Array while they fit) — 5 bytes a row instead of
   * 16. Index them; use `Array.from` for an array.
   */
  readonly seq: ArrayLike<number>;
  readonly kind: ArrayLike<number>;
  /**
   * One column per table column, in schema order: a JS array, or (decoded files, compaction's
   * output and runs put into the run cache) a `PackedColumn` of numbers with a null bitmap. Read
   * cells with `cell()`.
   */
  readonly valueCols: Column[];
}

/**
 * A sorted run's files as a merge reads them: `load(i)` decodes file i (through the run cache) when
 * the merge's cursor reaches it, so a scan or a compaction holds one file per run beyond what the
 * cache keeps, not every input decoded before the first row.
 */
export interface RunParts {
  readonly length: number;
  load(i: number): RunData;
}

/**
 * The first non-empty part of `parts` at index `from` or after, decoded now, and the index after
 * it; undefined when none is left. How the merges' cursors move from part to part.
 */
export function nextPart(parts: RunParts, from: number): { part: RunData; next: number } | undefined {
  for (let i = from; i < parts.length; i++) {
    const part = parts.load(i);
    if (part.rowCount > 0) return { part, next: i + 1 };
  }
  return undefined;
}

/** A merge's position in one run (RunParts): the part it is in and the row; see `toNextPart`. */
export class PartCursor {
  /** The current part: undefined before the first `toNextPart` and after the last part. */
  part: RunData | undefined;
  /** Position in the current part. */
  ri = 0;
  done = false;
  /** Index of the next part to load. */
  private next = 0;

  constructor(private readonly parts: RunParts) {}

  /**
   * Moves to the next non-empty part, decoding it only now (the part left behind is no longer held
   * here); false, and `done`, after the last.
   */
  protected toNextPart(): boolean {
    const n = nextPart(this.parts, this.next);
    if (n === undefined) {
      this.part = undefined;
      this.done = true;
      return false;
    }
    this.next = n.next;
    this.part = n.part;
    this.ri = 0;
    return true;
  }
}

/** Parts already decoded (in key order), as RunParts. */
export function decodedParts(parts: readonly RunData[]): RunParts {
  return { length: parts.length, load: (i) => parts[i]! };
}

// ---------------------------------------------------------------------------------------------
// Columns of decoded runs. A JS array costs 8 bytes per cell plus a heap object per bigint (and
// per double that is not a small integer); a packed column costs the element width plus one bit.

/** A column of a run: a JS array (as writers build it) or a packed numeric column. */
export type Column = unknown[] | PackedColumn;

/** Numbers of one column in a typed array; `nulls` has bit i set when row i is null (absent: none). */
export abstract class PackedColumn {
  constructor(
    readonly length: number,
    readonly nulls: Uint8Array | undefined,
  ) {}
  abstract readonly values: Int32Array | Float64Array | BigInt64Array | Uint8Array;
  abstract get(i: number): unknown;
  /** Bytes held (for the run cache's estimate). */
  get byteSize(): number {
    return this.values.byteLength + (this.nulls?.byteLength ?? 0) + 64;
  }
  isNull(i: number): boolean {
    const n = this.nulls;
    return n !== undefined && (n[i >>> 3]! & (1 << (i & 7))) !== 0;
  }
}

/** INT, SMALLINT, TINYINT, DATE, TIME: JS numbers in int32 range. */
export class Int32Column extends PackedColumn {
  constructor(
    readonly values: Int32Array,
    nulls: Uint8Array | undefined,
  ) {
    super(values.length, nulls);
  }
  get(i: number): number | null {
    const n = this.nulls;
    if (n !== undefined && (n[i >>> 3]! & (1 << (i & 7))) !== 0) return null;
    return this.values[i]!;
  }
}

/** FLOAT, DOUBLE, TIMESTAMP (epoch µs, safe integers): JS numbers, exact in a Float64Array. */
export class Float64Column extends PackedColumn {
  constructor(
    readonly values: Float64Array,
    nulls: Uint8Array | undefined,
  ) {
    super(values.length, nulls);
  }
  get(i: number): number | null {
    const n = this.nulls;
    if (n !== undefined && (n[i >>> 3]! & (1 << (i & 7))) !== 0) return null;
    return this.values[i]!;
  }
}

/** BIGINT: 64-bit bigints (a read allocates the bigint, as any BigInt64Array read does). */
export class BigInt64Column extends PackedColumn {
  constructor(
    readonly values: BigInt64Array,
    nulls: Uint8Array | undefined,
  ) {
    super(values.length, nulls);
  }
  get(i: number): bigint | null {
    const n = this.nulls;
    if (n !== undefined && (n[i >>> 3]! & (1 << (i & 7))) !== 0) return null;
    return this.values[i]!;
  }
}

/**
 * BIGINT whose values all fit in 32 bits (sequence fields, counters): an Int32Array, half the
 * bytes of a BigInt64Array; a read makes the bigint, as a BigInt64Array read does.
 */
export class Int32BigIntColumn extends PackedColumn {
  constructor(
    readonly values: Int32Array,
    nulls: Uint8Array | undefined,
  ) {
    super(values.length, nulls);
  }
  get(i: number): bigint | null {
    const n = this.nulls;
    if (n !== undefined && (n[i >>> 3]! & (1 << (i & 7))) !== 0) return null;
    return BigInt(this.values[i]!);
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * A 64-bit column as an Int32BigIntColumn when every value fits in 32 bits (read as two 32-bit
 * halves, no bigint made), else as it is.
 */
function narrowBigInts(values: BigInt64Array, nulls: Uint8Array | undefined): BigInt64Column | Int32BigIntColumn {
  if (!LITTLE_ENDIAN) return new BigInt64Column(values, nulls);
  const halves = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
  const out = new Int32Array(values.length);
  for (let i = 0; i < out.length; i++) {
    const lo = halves[2 * i]!;
    if (halves[2 * i + 1] !== lo >> 31) return new BigInt64Column(values, nulls);
    out[i] = lo;
  }
  return new Int32BigIntColumn(out, nulls);
}

/** Sequence numbers as an Int32Array when they all fit (they do until a table passes 2^31 records), else as they are. */
export function packSeq(seq: ArrayLike<number>): ArrayLike<number> {
  if (seq instanceof Int32Array) return seq;
  const out = new Int32Array(seq.length);
  for (let i = 0; i < out.length; i++) {
    const v = seq[i]!;
    if ((v | 0) !== v) return seq;
    out[i] = v;
  }
  return out;
}

/** Value kinds (0–3) in a Uint8Array. */
export function packKind(kind: ArrayLike<number>): Uint8Array {
  return kind instanceof Uint8Array ? kind : Uint8Array.from(kind);
}

/** BOOLEAN: one byte per row. */
export class BoolColumn extends PackedColumn {
  constructor(
    readonly values: Uint8Array,
    nulls: Uint8Array | undefined,
  ) {
    super(values.length, nulls);
  }
  get(i: number): boolean | null {
    const n = this.nulls;
    if (n !== undefined && (n[i >>> 3]! & (1 << (i & 7))) !== 0) return null;
    return this.values[i] === 1;
  }
}

/** The value of row i of a column (null for null). */
export function cell(c: Column, i: number): unknown {
  return c instanceof PackedColumn ? c.get(i) : c[i];
}

/** A column as a JS array (the array itself when it is one). */
export function columnArray(c: Column): unknown[] {
  if (!(c instanceof PackedColumn)) return c;
  const out = new Array(c.length);
  for (let i = 0; i < out.length; i++) out[i] = c.get(i);
  return out;
}

/**
 * A JS array of values as a packed column, or the array itself when its values have no packed
 * form (strings, bytes, decimals beyond 64 bits, nested values, mixed kinds). Chosen by the values,
 * not the type, and never converting: a packed column reads back exactly the values it was made
 * of (int32 numbers other than -0 in an Int32Array; any other number, NaN and -0 included, in a
 * Float64Array; 64-bit bigints in a BigInt64Array; booleans in bytes).
 */
export function packColumn(values: unknown[], n: number = values.length): Column {
  let first = 0;
  while (first < n && (values[first] === null || values[first] === undefined)) first++;
  if (first === n) return values; // all null (or empty): nothing to gain
  const sample = values[first];
  let nulls: Uint8Array | undefined;
  if (first > 0) {
    nulls = new Uint8Array((n + 7) >>> 3);
    for (let i = 0; i < first; i++) nulls[i >>> 3]! |= 1 << (i & 7);
  }
  const setNull = (i: number) => {
    nulls ??= new Uint8Array((n + 7) >>> 3);
    nulls[i >>> 3]! |= 1 << (i & 7);
  };
  if (typeof sample === 'number') {
    let ints: Int32Array | undefined = new Int32Array(n);
    let dbl: Float64Array | undefined;
    for (let i = first; i < n; i++) {
      const v = values[i];
      if (typeof v === 'number') {
        if (ints !== undefined) {
          if ((v | 0) === v && (v !== 0 || 1 / v > 0)) {
            ints[i] = v;
            continue;
          }
          dbl = Float64Array.from(ints);
          ints = undefined;
        }
        dbl![i] = v;
      } else if (v === null || v === undefined) setNull(i);
      else return values;
    }
    return ints !== undefined ? new Int32Column(ints, nulls) : new Float64Column(dbl!, nulls);
  }
  if (typeof sample === 'bigint') {
    const out = new BigInt64Array(n);
    for (let i = first; i < n; i++) {
      const v = values[i];
      if (typeof v === 'bigint') {
        out[i] = v;
        if (out[i] !== v) return values; // outside 64 bits (a wide DECIMAL)
      } else if (v === null || v === undefined) setNull(i);
      else return values;
    }
    return narrowBigInts(out, nulls);
  }
  if (typeof sample === 'boolean') {
    const out = new Uint8Array(n);
    for (let i = first; i < n; i++) {
      const v = values[i];
      if (typeof v === 'boolean') out[i] = v ? 1 : 0;
      else if (v === null || v === undefined) setNull(i);
      else return values;
    }
    return new BoolColumn(out, nulls);
  }
  return values;
}

/**
 * Runs whose key columns are already as packRun makes them (equal neighbouring key strings one
 * string, key fields' table columns sharing the key arrays): compaction's RunBuilder marks its
 * output so that packRun only packs what is left (JS-array columns, untyped sequence numbers).
 */
const keysPacked = new WeakSet<RunData>();

export function markKeysPacked(run: RunData): void {
  keysPacked.add(run);
}

/**
 * A run with its numeric value columns, sequence numbers and kinds packed, and each value column
 * that holds a key column's values sharing that key column's array (one copy of each key string).
 * The input is not changed (a run marked by markKeysPacked with nothing left to pack is returned
 * as it is).
 * `keyIndexes`: the table column of each key column (omit to find them by comparing values).
 */
export function packRun(run: RunData, keyIndexes?: readonly number[]): RunData {
  const n = run.rowCount;
  const valueCols = run.valueCols.map((c) => (c instanceof PackedColumn ? c : packColumn(c, n)));
  if (keysPacked.has(run)) {
    const seq = packSeq(run.seq);
    const kind = packKind(run.kind);
    if (seq === run.seq && kind === run.kind && valueCols.every((c, i) => c === run.valueCols[i])) return run;
    return { rowCount: n, keyCols: run.keyCols, seq, kind, valueCols };
  }
  // Equal key strings of neighbouring rows (the leading key columns) become one string, as a
  // decode's dictionary makes them; the caller's arrays are left as they are.
  const keyCols = run.keyCols.map((kc) => {
    if (typeof kc[0] !== 'string') return kc;
    const out = new Array(n);
    let prev: unknown = undefined;
    for (let i = 0; i < n; i++) {
      const v = kc[i];
      out[i] = v === prev ? prev : (prev = v);
    }
    return out;
  });
  keyCols.forEach((kc, k) => {
    const candidates = keyIndexes ? [keyIndexes[k]!] : valueCols.map((_, i) => i);
    for (const vi of candidates) {
      const vc = valueCols[vi];
      if (vc === undefined || vc === kc || vc instanceof PackedColumn || vc.length !== kc.length) continue;
      let same = true;
      for (let i = 0; i < n && same; i++) same = kc[i] === vc[i];
      if (same) {
        valueCols[vi] = kc;
        break;
      }
    }
  });
  return { rowCount: n, keyCols, seq: packSeq(run.seq), kind: packKind(run.kind), valueCols };
}

export function kvAt(run: RunData, i: number): KeyValue {
  const key = new Array(run.keyCols.length);
  for (let k = 0; k < key.length; k++) key[k] = run.keyCols[k]![i];
  return { key, seq: run.seq[i]!, kind: run.kind[i] as KeyValue['kind'], value: rowReader(run)(i) };
}

/** The table row at position i (every column, schema order). */
export function rowAt(run: RunData, i: number): unknown[] {
  return rowReader(run)(i);
}

const rowReaders = new WeakMap<RunData, (i: number) => unknown[]>();

/**
 * A function building the row at position i, compiled once per run from its column forms (an
 * array literal of direct element loads: no per-cell form test or polymorphic call).
 */
export function rowReader(run: RunData): (i: number) => unknown[] {
  let f = rowReaders.get(run);
  if (f) return f;
  const cols = run.valueCols;
  const args: unknown[] = [];
  const exprs = cols.map((c, j) => {
    if (!(c instanceof PackedColumn)) {
      args.push(c);
      return `c${j}[i]`;
    }
    const values = (c as Int32Column | Float64Column | BigInt64Column | Int32BigIntColumn | BoolColumn).values;
    args.push(values, c.nulls);
    const v = c instanceof BoolColumn ? `c${j}[i] === 1` : c instanceof Int32BigIntColumn ? `BigInt(c${j}[i])` : `c${j}[i]`;
    return c.nulls === undefined ? `(${v})` : `((n${j}[i >>> 3] & (1 << (i & 7))) !== 0 ? null : ${v})`;
  });
  const params = cols.flatMap((c, j) => (c instanceof PackedColumn ? [`c${j}`, `n${j}`] : [`c${j}`]));
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  f = new Function(...params, `'use strict'; return function rowAt(i) { return [${exprs.join(', ')}]; };`)(...args) as (i: number) => unknown[];
  rowReaders.set(run, f);
  return f;
}

export function runFromRecords(records: readonly KeyValue[], keyArity: number, valueArity: number): RunData {
  const n = records.length;
  const keyCols = Array.from({ length: keyArity }, () => new Array(n));
  const valueCols = Array.from({ length: valueArity }, () => new Array(n));
  const seq = new Array<number>(n);
  const kind = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    for (let k = 0; k < keyArity; k++) keyCols[k]![i] = r.key[k];
    for (let c = 0; c < valueArity; c++) valueCols[c]![i] = r.value[c] ?? null;
    seq[i] = r.seq;
    kind[i] = r.kind;
  }
  return { rowCount: n, keyCols, seq, kind, valueCols };
}

/** The Parquet columns of a data file of this schema. */
export function fileColumns(schema: TableSchema): ParquetColumn[] {
  // Append tables (no primary key): only the table's columns (data-file-format.ts).
  if (!schema.isPrimaryKeyTable) return schema.fields.map((f) => ({ name: f.name, fieldId: f.id, type: f.type }));
  const cols: ParquetColumn[] = schema.keyIndexes.map((i) => ({
    name: `${KEY_PREFIX}${schema.fields[i]!.name}`,
    fieldId: KEY_FIELD_ID_START + schema.fields[i]!.id,
    type: withNullable(schema.fields[i]!.type, false),
  }));
  cols.push({ name: '_SEQUENCE_NUMBER', fieldId: SEQUENCE_NUMBER_FIELD_ID, type: SEQ_TYPE });
  cols.push({ name: '_VALUE_KIND', fieldId: VALUE_KIND_FIELD_ID, type: KIND_TYPE });
  for (const f of schema.fields) cols.push({ name: f.name, fieldId: f.id, type: f.type });
  return cols;
}

function readColumns(schema: TableSchema): ParquetReadColumn[] {
  return fileColumns(schema).map((c) => (c.name === '_SEQUENCE_NUMBER' ? { name: c.name, type: c.type, asNumber: true } : { name: c.name, type: c.type }));
}

/**
 * The columns a read decodes for a primary-key table: the `_KEY_` columns, sequence, kind, and the
 * table columns that are not key columns — a key column's value is its `_KEY_` column (Paimon
 * derives the key from the row), so it is read once and shared (one copy of each key string).
 * The table columns are requested `typed`: Parquet decodes integer and boolean columns straight
 * into the packed columns' typed arrays (readParquetTyped), with no JS value per row.
 */
const readPlans = new WeakMap<TableSchema, { request: ParquetReadColumn[]; valueFrom: number[] }>();
/** `readPlan`'s valueFrom for a column not decoded (`keep` left it out): all nulls. */
const PRUNED = Number.NEGATIVE_INFINITY;

function readPlan(schema: TableSchema, keep?: ReadonlySet<number>): { request: ParquetReadColumn[]; valueFrom: number[] } {
  let p = keep ? undefined : readPlans.get(schema);
  if (p) return p;
  const all = readColumns(schema);
  const k = schema.keyIndexes.length;
  const request = all.slice(0, k + 2);
  // valueFrom[c] >= 0: index into the decoded columns; < 0: -(key position) - 1; PRUNED: not read.
  const valueFrom = schema.fields.map((_, c) => {
    const kp = schema.keyIndexes.indexOf(c);
    if (kp >= 0) return -kp - 1;
    if (keep && !keep.has(c)) return PRUNED;
    request.push({ ...all[k + 2 + c]!, typed: true });
    return request.length - 1;
  });
  p = { request, valueFrom };
  if (!keep) readPlans.set(schema, p);
  return p;
}

/**
 * Types whose comparator (types.ts) is JS `<` on their in-memory values: integers as numbers,
 * BIGINT and DECIMAL as bigints, DATE/TIME/TIMESTAMP as numbers. Not FLOAT/DOUBLE (-0 and NaN
 * order as Java's Double.compare), strings (code-point order) or booleans.
 */
const PLAIN_ORDER_ROOTS: ReadonlySet<string> = new Set(['TINYINT', 'SMALLINT', 'INT', 'BIGINT', 'DECIMAL', 'DATE', 'TIME', 'TIMESTAMP', 'TIMESTAMP_LTZ']);

type RawStats = [min: unknown, max: unknown, nulls: number];

/** Min, max and null count of one column (untruncated). */
function columnStats(type: DataType, values: unknown[]): RawStats {
  if (isBinaryType(type) || isNestedType(type)) {
    let nulls = 0;
    for (const v of values) if (v === null || v === undefined) nulls++;
    return [null, null, nulls];
  }
  let min: unknown = null;
  let max: unknown = null;
  let nulls = 0;
  const n = values.length;
  if (PLAIN_ORDER_ROOTS.has(type.root)) {
    // Numbers and bigints whose comparator is plain `<` (types.ts cmpNum / cmpBig): compared
    // inline, with no call per value.
    for (let i = 0; i < n; i++) {
      const v = values[i] as number | bigint | null | undefined;
      if (v === null || v === undefined) {
        nulls++;
        continue;
      }
      if (min === null || v < (min as number)) min = v;
      if (max === null || v > (max as number)) max = v;
    }
  } else {
    const cmp = comparatorFor(withNullable(type, false));
    let prev: unknown = undefined;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v === null || v === undefined) {
        nulls++;
        continue;
      }
      // Sorted runs repeat values (key prefixes) and columns of few distinct values cycle through
      // them: a value `===` the previous one, the minimum or the maximum cannot move either —
      // except a zero, where 0 === -0 but DOUBLE orders -0 first.
      if ((v === prev || v === min || v === max) && v !== 0) continue;
      prev = v;
      if (min === null || cmp(v, min) < 0) min = v;
      if (max === null || cmp(v, max) > 0) max = v;
    }
  }
  return [min, max, nulls];
}

/** Strings cut to 16 characters as Paimon's truncate(16); the maximum rounded up. */
function truncateStats(type: DataType, [min, max, nulls]: RawStats): RawStats {
  if (isStringType(type)) {
    if (typeof min === 'string' && min.length > STATS_TRUNCATE_CHARS) min = min.slice(0, STATS_TRUNCATE_CHARS);
    if (typeof max === 'string' && max.length > STATS_TRUNCATE_CHARS) {
      const cut = max.slice(0, STATS_TRUNCATE_CHARS);
      const last = cut.charCodeAt(cut.length - 1);
      // An upper bound: bump the last character; give up (unknown) where that would break a surrogate pair.
      max = last < 0xd7ff || (last >= 0xe000 && last < 0xffff) ? cut.slice(0, -1) + String.fromCharCode(last + 1) : null;
    }
  }
  return [min, max, nulls];
}

/**
 * Min, max and null count of a packed column, as columnStats gives them for its values; undefined
 * for the forms it does not cover (doubles: NaN and -0 order by Java's Double.compare there).
 * REQUIRES: the column's type orders its values as `<` does (the INT-like, BIGINT and BOOLEAN
 * columns writeDataFile keeps packed; `encodesPacked`).
 */
function packedStats(c: PackedColumn): RawStats | undefined {
  const nb = c.nulls;
  const n = c.length;
  let nulls = 0;
  if (nb !== undefined) for (let i = 0; i < n; i++) if ((nb[i >>> 3]! & (1 << (i & 7))) !== 0) nulls++;
  if (nulls === n) return [null, null, nulls];
  if (c instanceof BigInt64Column) {
    const v = c.values;
    let min: bigint | undefined;
    let max: bigint | undefined;
    for (let i = 0; i < n; i++) {
      if (nb !== undefined && (nb[i >>> 3]! & (1 << (i & 7))) !== 0) continue;
      const x = v[i]!;
      if (min === undefined || x < min) min = x;
      if (max === undefined || x > max) max = x;
    }
    return [min, max, nulls];
  }
  if (c instanceof Int32Column || c instanceof Int32BigIntColumn || c instanceof BoolColumn) {
    const v = c.values;
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < n; i++) {
      if (nb !== undefined && (nb[i >>> 3]! & (1 << (i & 7))) !== 0) continue;
      const x = v[i]!;
      if (x < min) min = x;
      if (x > max) max = x;
    }
    if (c instanceof Int32BigIntColumn) return [BigInt(min), BigInt(max), nulls];
    if (c instanceof BoolColumn) return [min === 1, max === 1, nulls];
    return [min, max, nulls];
  }
  return undefined;
}

/** Same values in every row: `===`, except 0 and -0 (they differ as FLOAT/DOUBLE statistics). */
function sameValues(a: Column, b: Column): boolean {
  if (a === b) return true;
  // A packed column is only matched by identity (equal contents just compute twice).
  if (a instanceof PackedColumn || b instanceof PackedColumn) return false;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x !== y || (x === 0 && 1 / (x as number) !== 1 / (y as number))) {
      if (!((x === null || x === undefined) && (y === null || y === undefined))) return false;
    }
  }
  return true;
}

/**
 * Statistics of the columns of one file, each computed once: a value column that repeats a key
 * column (Paimon stores both) reuses the key column's figures. Key columns are NOT NULL and the
 * rows are sorted by key, so the first key column's minimum and maximum are its first and last
 * values.
 */
class FileStats {
  private readonly done: Array<{ root: string; values: Column; stats: RawStats }> = [];

  of(type: DataType, values: Column, sortedFirstKey = false): RawStats {
    const root = isStringType(type) ? 'STRING' : type.root; // CHAR, VARCHAR, STRING order alike
    for (const d of this.done) if (d.root === root && sameValues(d.values, values)) return d.stats;
    const stats = values instanceof PackedColumn ? (packedStats(values) ?? columnStats(type, columnArray(values))) : this.ofArray(type, values, sortedFirstKey);
    this.done.push({ root, values, stats });
    return stats;
  }

  private ofArray(type: DataType, values: unknown[], sortedFirstKey: boolean): RawStats {
    const n = values.length;
    const sorted = sortedFirstKey && n > 0 && values[0] !== null && values[0] !== undefined && values[n - 1] !== null && values[n - 1] !== undefined;
    return sorted && !isBinaryType(type) && !isNestedType(type) ? [values[0], values[n - 1], 0] : columnStats(type, values);
  }
}

function statsOf(types: readonly DataType[], cols: readonly Column[], truncate: boolean, memo: FileStats, sortedFirstKey = false): SimpleStats {
  const mins: unknown[] = [];
  const maxs: unknown[] = [];
  const nulls: number[] = [];
  const statTypes = types.map((t) => withNullable(t, true));
  types.forEach((t, i) => {
    const raw = memo.of(t, cols[i]!, sortedFirstKey && i === 0);
    const [mn, mx, nc] = truncate ? truncateStats(t, raw) : raw;
    mins.push(mn);
    maxs.push(mx);
    nulls.push(nc);
  });
  return { minValues: serializeBinaryRow(statTypes, mins), maxValues: serializeBinaryRow(statTypes, maxs), nullCounts: nulls };
}

export interface WriteDataFileArgs {
  fileIO: FileIO;
  schema: TableSchema;
  /** Absolute path of the bucket directory. */
  bucketDir: string;
  fileName: string;
  run: RunData;
  level: number;
  /** 0 = written by a flush, 1 = written by compaction. */
  fileSource: 0 | 1;
  creationTimeMs: number;
}

/** Writes one sorted run (REQUIRES: rows sorted by key, keys unique) and returns its meta. */
export function writeDataFile(a: WriteDataFileArgs): DataFileMeta {
  const { schema, run } = a;
  if (run.rowCount === 0) throw new Error('assertion failed: an empty run is never written');
  const columns = fileColumns(schema);
  // Packed columns (compaction's output, cached runs) go to the Parquet encoder as they are where
  // it takes their typed form; anything else (and every column of an Avro file) as a JS array.
  const parquet = formatOfPath(a.fileName) === 'parquet';
  const valueCols = run.valueCols;
  const encoded = valueCols.map((c, i) => (c instanceof PackedColumn && !(parquet && encodesPacked(c, schema.fields[i]!.type)) ? columnArray(c) : c));
  const seq = numbers(run.seq, parquet && (run.seq instanceof Int32Array || run.seq instanceof Float64Array));
  const kind = numbers(run.kind, parquet && (run.kind instanceof Uint8Array || run.kind instanceof Int32Array));
  const values: ColumnValues[] = schema.isPrimaryKeyTable ? [...run.keyCols, seq, kind, ...encoded] : encoded;
  // Parquet or Avro by the file name's extension (data-file-format.ts). A Parquet file goes to
  // the disk as it is encoded, a column chunk at a time (FileIO.writeNewStream): the file was
  // built whole in memory first, beside the pieces it was joined from (at 1 M rows of the bench's
  // stock table ~20 MB each).
  const path = `${a.bucketDir}/${a.fileName}`;
  let fileSize: number;
  if (parquet) {
    const encode = parquetDataFileEncoder(schema, columns, values, run.rowCount);
    a.fileIO.mkdirs(a.bucketDir);
    let size = 0;
    writeNewInParts(a.fileIO, path, (write) => {
      size = encode(write);
    });
    fileSize = size;
  } else {
    const bytes = encodeDataFile(schema, a.fileName, columns, values, run.rowCount);
    a.fileIO.mkdirs(a.bucketDir);
    a.fileIO.writeNew(path, bytes);
    fileSize = bytes.length;
  }

  const keyTypes = schema.keyTypes;
  const memo = new FileStats();
  const last = run.rowCount - 1;
  let minSeq = Number.MAX_SAFE_INTEGER;
  let maxSeq = -1;
  let deletes = 0;
  for (let i = 0; i < run.rowCount; i++) {
    const s = run.seq[i]!;
    if (s < minSeq) minSeq = s;
    if (s > maxSeq) maxSeq = s;
    const k = run.kind[i]!;
    if (k === RowKind.UPDATE_BEFORE || k === RowKind.DELETE) deletes++;
  }
  return {
    fileName: a.fileName,
    fileSize,
    rowCount: run.rowCount,
    minKey: serializeBinaryRow(keyTypes, run.keyCols.map((c) => c[0])),
    maxKey: serializeBinaryRow(keyTypes, run.keyCols.map((c) => c[last])),
    keyStats: statsOf(keyTypes, run.keyCols, false, memo, true),
    valueStats: statsOf(schema.fields.map((f) => f.type), encoded, true, memo),
    minSequenceNumber: minSeq,
    maxSequenceNumber: maxSeq,
    schemaId: schema.id,
    level: a.level,
    extraFiles: [],
    creationTime: localWallClockMillis(a.creationTimeMs),
    deleteRowCount: deletes,
    embeddedIndex: null,
    fileSource: a.fileSource,
    valueStatsCols: null,
    externalPath: null,
    firstRowId: null,
    writeCols: null,
  };
}

/**
 * Sequence numbers or kinds for the encoder: a typed array as it is when `typed` (Parquet takes
 * Int32Array and Float64Array sequence numbers, Uint8Array and Int32Array kinds), else a JS array.
 */
function numbers(a: ArrayLike<number>, typed: boolean): ColumnValues {
  if (Array.isArray(a)) return a;
  return typed ? { values: a as Int32Array | Float64Array | Uint8Array, nulls: undefined } : Array.from(a);
}

/** True when Parquet writes this packed column of this type from its typed array (plain-encode.ts takesTyped). */
function encodesPacked(c: PackedColumn, type: DataType): boolean {
  switch (type.root) {
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME':
      return c instanceof Int32Column;
    case 'BIGINT':
      return c instanceof Int32BigIntColumn || c instanceof BigInt64Column;
    case 'DOUBLE':
      return c instanceof Float64Column;
    case 'BOOLEAN':
      return c instanceof BoolColumn;
    default:
      return false;
  }
}

/** Java records `_CREATION_TIME` as the local wall clock expressed as if it were UTC. */
export function localWallClockMillis(utcMs: number): number {
  return utcMs - new Date(utcMs).getTimezoneOffset() * 60_000;
}

/** A decoded table column as a run's column: a typed decode as its packed column, else packed by its values. */
function decodedColumn(c: unknown[] | TypedColumn, rowCount: number): Column {
  if (Array.isArray(c)) return packColumn(c, rowCount);
  const { values, nulls } = c;
  if (values instanceof Int32Array) return new Int32Column(values, nulls);
  if (values instanceof BigInt64Array) return narrowBigInts(values, nulls);
  return new BoolColumn(values, nulls);
}

/**
 * Reads a data file back as a run, checking it against its meta. `keep` (value column indexes of
 * a primary-key table's Parquet file): only those columns and the keys are decoded, every other
 * value column reads as null — for a scan that projects them away (TableReader.scan).
 */
export function readDataFile(fileIO: FileIO, schema: TableSchema, path: string, meta: DataFileMeta, keep?: ReadonlySet<number>): RunData {
  let bytes: Uint8Array;
  try {
    bytes = fileIO.readFile(path);
  } catch (e) {
    if (e instanceof LsmError && e.kind === 'NotFound') {
      throw corruption(path, `data file listed in the manifest is missing`, e);
    }
    throw e;
  }
  if (bytes.length !== meta.fileSize) {
    throw corruption(path, `size ${bytes.length} differs from the manifest's ${meta.fileSize}`);
  }
  const parquet = formatOfPath(path) === 'parquet';
  const plan = schema.isPrimaryKeyTable ? readPlan(schema, parquet ? keep : undefined) : undefined;
  let decoded: { rowCount: number; columns: Array<unknown[] | TypedColumn> };
  try {
    decoded = plan && parquet ? readParquetTyped(bytes, plan.request, path, meta.rowCount) : decodeDataFile(bytes, plan ? plan.request : readColumns(schema), path, meta.rowCount);
  } catch (e) {
    // Every decode failure names the file; anything but a deliberate LsmError is damage.
    if (e instanceof LsmError && e.kind === 'Corruption') throw e;
    if (e instanceof LsmError && e.kind === 'NotSupported') {
      throw new LsmError('NotSupported', `${path}: ${e.message} (the file is damaged, or uses a feature this store does not read)`, { path, cause: e });
    }
    throw corruption(path, `cannot decode: ${(e as Error).message}`, e);
  }
  const { rowCount, columns } = decoded;
  if (rowCount !== meta.rowCount) throw corruption(path, `${rowCount} rows, the manifest says ${meta.rowCount}`);
  if (!plan) {
    const run = appendRun(columns as unknown[][], rowCount, meta);
    return { ...run, valueCols: run.valueCols.map((c) => packColumn(c as unknown[], rowCount)) };
  }
  const k = schema.keyIndexes.length;
  const seq = columns[k] as number[];
  const kinds = columns[k + 1] as number[];
  // Checked and packed (packKind's form) in one pass.
  const kind = new Uint8Array(rowCount);
  for (let i = 0; i < rowCount; i++) {
    const kd = kinds[i]!;
    if (!(kd >= 0 && kd <= 3)) throw corruption(path, `row ${i} has value kind ${kd}`);
    kind[i] = kd;
  }
  const keyCols = columns.slice(0, k) as unknown[][];
  const valueCols = plan.valueFrom.map((from) => (from === PRUNED ? new Array<null>(rowCount).fill(null) : from < 0 ? keyCols[-from - 1]! : decodedColumn(columns[from]!, rowCount)));
  return { rowCount, keyCols, seq: packSeq(seq), kind, valueCols };
}
