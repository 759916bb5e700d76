// Cells of a run's value columns read one at a time by the read paths' folds (MergeFunction.foldAt)
// without going through `cell()` for every cell: a column's form (a JS array, a packed column whose
// typed array holds the values themselves, or another packed column) is looked at once per run and
// kept in a CellView, so each read is a switch on a small integer and a typed-array load at a call
// site that sees one array type. Reads give exactly what `cell()` gives.
//
// Views are cached per decoded run (a WeakMap: they go when the run does), with what one pass over
// the run's kinds and sequence numbers tells (whether it holds only adds, its sequence range).

import { BigInt64Column, Float64Column, Int32Column, PackedColumn, type Column, type RunData } from '../data-file.ts';
import { RowKind } from '../key-value.ts';

const ARRAY = 0;
/** A packed column whose typed array holds the cell values as they are (int32, float64, bigint64). */
const INT32 = 1;
const FLOAT64 = 2;
const BIGINT64 = 3;
/** Any other packed column (booleans, narrowed forms): its own `get`. */
const OTHER = 4;

export interface CellView {
  readonly form: number;
  readonly array: unknown[] | undefined;
  readonly packed: PackedColumn | undefined;
  readonly nulls: Uint8Array | undefined;
  /** The typed array when it holds int32 numbers (of any integer type: compared in place). */
  readonly int32: Int32Array | undefined;
  readonly float64: Float64Array | undefined;
  readonly bigint64: BigInt64Array | undefined;
}

function viewOf(c: Column): CellView {
  if (!(c instanceof PackedColumn)) {
    return { form: ARRAY, array: c, packed: undefined, nulls: undefined, int32: undefined, float64: undefined, bigint64: undefined };
  }
  const v = c.values;
  const int32 = v instanceof Int32Array ? v : undefined;
  const bigint64 = v instanceof BigInt64Array ? v : undefined;
  const form = c instanceof Int32Column ? INT32 : c instanceof Float64Column ? FLOAT64 : c instanceof BigInt64Column ? BIGINT64 : OTHER;
  return { form, array: undefined, packed: c, nulls: c.nulls, int32, float64: form === FLOAT64 ? (v as Float64Array) : undefined, bigint64 };
}

/** A run as the folds read it, with what one pass over its kinds and sequence numbers tells. */
export interface RunView {
  /** Per value column (schema order), its view. */
  readonly cols: CellView[];
  /** Whether every record is an add (+I/+U). */
  readonly addsOnly: boolean;
  /** The smallest and largest sequence number (0 and -1 for an empty run). */
  readonly minSeq: number;
  readonly maxSeq: number;
}

const views = new WeakMap<RunData, RunView>();

/** The view of a run, made once per run. */
export function runView(run: RunData): RunView {
  let v = views.get(run);
  if (v === undefined) {
    let addsOnly = true;
    let minSeq = Infinity;
    let maxSeq = -Infinity;
    const { kind, seq } = run;
    for (let i = 0; i < run.rowCount; i++) {
      const k = kind[i];
      if (k !== RowKind.INSERT && k !== RowKind.UPDATE_AFTER) addsOnly = false;
      const s = seq[i]!;
      if (s < minSeq) minSeq = s;
      if (s > maxSeq) maxSeq = s;
    }
    if (run.rowCount === 0) {
      minSeq = 0;
      maxSeq = -1;
    }
    v = { cols: run.valueCols.map(viewOf), addsOnly, minSeq, maxSeq };
    views.set(run, v);
  }
  return v;
}

/** Whether row i of the column is null (`cell()` would give null or undefined). */
export function isNullAt(v: CellView, i: number): boolean {
  const n = v.nulls;
  if (n !== undefined) return (n[i >>> 3]! & (1 << (i & 7))) !== 0;
  if (v.form !== ARRAY) return false;
  const x = v.array![i];
  return x === null || x === undefined;
}

/** `cell(column, i)`. */
export function readAt(v: CellView, i: number): unknown {
  switch (v.form) {
    case ARRAY:
      return v.array![i];
    case OTHER:
      return v.packed!.get(i);
  }
  const n = v.nulls;
  if (n !== undefined && (n[i >>> 3]! & (1 << (i & 7))) !== 0) return null;
  switch (v.form) {
    case INT32:
      return v.int32![i]!;
    case FLOAT64:
      return v.float64![i]!;
    default:
      return v.bigint64![i]!;
  }
}

/**
 * The order of two non-null cells read in place (no bigint made), or NaN when they are not both
 * int32s or both 64-bit integers of packed columns. Such cells are integers of a type whose
 * comparator is numeric order (INT family, DATE, TIME, BIGINT, DECIMAL; a FLOAT/DOUBLE column of
 * int32 values other than -0), so this is what `comparatorFor` gives for them.
 * REQUIRES: neither cell is null.
 */
export function compareInPlace(a: CellView, i: number, b: CellView, j: number): number {
  const ai = a.int32;
  const bi = b.int32;
  if (ai !== undefined && bi !== undefined) {
    const p = ai[i]!;
    const q = bi[j]!;
    return p < q ? -1 : p > q ? 1 : 0;
  }
  const ab = a.bigint64;
  const bb = b.bigint64;
  if (ab !== undefined && bb !== undefined) {
    const p = ab[i]!;
    const q = bb[j]!;
    return p < q ? -1 : p > q ? 1 : 0;
  }
  return NaN;
}

/**
 * Puts the records at (parts[k], rows[k]), k < n, in order of sequence number, stably (the merge
 * order of a table without sequence fields, as a stable sort of their KeyValues gives it). Given
 * newest run first — each run's sequence numbers all above the next one's, as the runs of a bucket
 * usually are — the order is that reversed, read from the runs' ranges alone; otherwise an
 * insertion sort reads each record's number.
 */
export function sortBySeq(parts: RunData[], rows: number[], n: number): void {
  let newestFirst = true;
  for (let k = 0; k + 1 < n && newestFirst; k++) newestFirst = runView(parts[k]!).minSeq > runView(parts[k + 1]!).maxSeq;
  if (newestFirst) {
    for (let a = 0, b = n - 1; a < b; a++, b--) {
      const d = parts[a]!;
      parts[a] = parts[b]!;
      parts[b] = d;
      const i = rows[a]!;
      rows[a] = rows[b]!;
      rows[b] = i;
    }
    return;
  }
  for (let k = 1; k < n; k++) {
    const d = parts[k]!;
    const i = rows[k]!;
    const s = d.seq[i]!;
    let j = k;
    for (; j > 0 && parts[j - 1]!.seq[rows[j - 1]!]! > s; j--) {
      parts[j] = parts[j - 1]!;
      rows[j] = rows[j - 1]!;
    }
    parts[j] = d;
    rows[j] = i;
  }
}
