// Compaction's output run, built row by row straight into the columns a decode of the file would
// give (data-file.ts readDataFile) and the run cache keeps (packRun):
//   - sequence numbers in an Int32Array (a Float64Array once one passes 32 bits), kinds in a
//     Uint8Array;
//   - INT-like columns (TINYINT, SMALLINT, INT, DATE, TIME) in an Int32Column, BIGINT in an
//     Int32BigIntColumn while every value fits 32 bits (then a BigInt64Column), BOOLEAN in a
//     BoolColumn, each with a null bitmap made at the first null;
//   - key columns as JS arrays, a string equal to the previous row's stored as that same string
//     (one string per run of equal keys, as packRun and a decode's dictionary make them), and the
//     table column of a key field sharing its key column's array;
//   - every other column a JS array of the values as given (packRun packs it by its values).
// The run is encoded from these forms (Parquet takes the typed ones as they are) and handed to the
// run cache, whose packRun then only packs the JS-array columns that remain.
//
// A value that does not fit its column's form (a number that is not an int32 or is -0 in an INT
// column, a non-bigint in a BIGINT column, …: values come from validated files, so never in
// practice) turns that column back into a JS array of exactly the values given: nothing converts.
//
// Memory: ~4–8 bytes a numeric cell and 8 a key cell instead of 8 per cell plus a heap bigint per
// BIGINT value. Capacity starts at a caller's estimate and doubles; `finish` trims to the rows.

import { BigInt64Column, BoolColumn, columnArray, Int32BigIntColumn, Int32Column, markKeysPacked, type Column, type RunData } from '../data-file.ts';
import type { KeyValue } from '../key-value.ts';
import type { DataType } from '../types.ts';

/** Forms of a table column while it is being built. */
const enum Form {
  /** JS array of the values as given. */
  Array,
  /** The key column's array (a key field), while every value equals the key. */
  Key,
  Int32,
  /** BIGINT values that all fit 32 bits, as int32. */
  BigInt32,
  BigInt64,
  Bool,
}

const INT32_MIN = -2147483648n;
const INT32_MAX = 2147483647n;

function initialForm(t: DataType): Form {
  switch (t.root) {
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME':
      return Form.Int32;
    case 'BIGINT':
      return Form.BigInt32;
    case 'BOOLEAN':
      return Form.Bool;
    default:
      return Form.Array;
  }
}

export class RunBuilder {
  private rows = 0;
  private capacity: number;
  /** Whether the storage for the current run is made (a finished run's successor is made at its first row). */
  private started = false;
  private readonly keyArity: number;
  private keyCols: unknown[][];
  private seq32: Int32Array | undefined;
  private seq64: Float64Array | undefined;
  private kind: Uint8Array;
  /** Per table column: its form, and the storage of that form (one of the three is in use). */
  private readonly forms: Form[];
  private readonly arrays: Array<unknown[] | undefined>;
  private readonly ints: Array<Int32Array | undefined>;
  private readonly bigs: Array<BigInt64Array | undefined>;
  private readonly bytes: Array<Uint8Array | undefined>;
  private readonly nulls: Array<Uint8Array | undefined>;
  /** Per table column: the key position of a key field (Form.Key), else -1. */
  private readonly keyPos: number[];

  /**
   * `types`: the table's column types (schema order); `keyIndexes`: the table columns of the key
   * columns; `capacity`: rows to make room for at first (grows as needed).
   */
  constructor(
    private readonly types: readonly DataType[],
    private readonly keyIndexes: readonly number[],
    capacity: number,
  ) {
    this.capacity = Math.max(16, capacity);
    this.keyArity = keyIndexes.length;
    this.keyCols = [];
    this.kind = new Uint8Array(0);
    this.forms = [];
    this.arrays = [];
    this.ints = [];
    this.bigs = [];
    this.bytes = [];
    this.nulls = [];
    this.keyPos = types.map((_, c) => keyIndexes.indexOf(c));
  }

  get rowCount(): number {
    return this.rows;
  }

  /** Rows the storage held now has room for: 0 between a finished run and the next one's first row. */
  get reservedRows(): number {
    return this.started ? this.capacity : 0;
  }

  /** Fresh storage for the run, made at its first row. */
  private start(): void {
    const cap = this.capacity;
    this.started = true;
    this.rows = 0;
    // JS arrays are made at the capacity (holey, as a decode's are) and cut to the rows at the
    // end: at an exact estimate they hold no slack a grown array would keep in the cache.
    this.keyCols = Array.from({ length: this.keyArity }, (): unknown[] => new Array(cap));
    this.seq32 = new Int32Array(cap);
    this.seq64 = undefined;
    this.kind = new Uint8Array(cap);
    for (let c = 0; c < this.types.length; c++) {
      const form = this.keyPos[c]! >= 0 ? Form.Key : initialForm(this.types[c]!);
      this.forms[c] = form;
      this.arrays[c] = form === Form.Array ? new Array(cap) : undefined;
      this.ints[c] = form === Form.Int32 || form === Form.BigInt32 ? new Int32Array(cap) : undefined;
      this.bigs[c] = undefined;
      this.bytes[c] = form === Form.Bool ? new Uint8Array(cap) : undefined;
      this.nulls[c] = undefined;
    }
  }

  /** Appends a record (copied: the builder keeps none of its arrays). */
  add(kv: KeyValue): void {
    if (!this.started) this.start();
    const r = this.rows;
    if (r === this.capacity) this.grow();
    const key = kv.key;
    const keyCols = this.keyCols;
    for (let k = 0; k < keyCols.length; k++) {
      const col = keyCols[k]!;
      const v = key[k];
      // Equal neighbouring strings become one string (=== compares strings by value).
      const prev = r > 0 ? col[r - 1] : undefined;
      col[r] = prev === v && typeof v === 'string' ? prev : v;
    }
    const s = kv.seq;
    if (this.seq32 !== undefined && (s | 0) === s) this.seq32[r] = s;
    else this.setWideSeq(r, s);
    this.kind[r] = kv.kind;
    const value = kv.value;
    const forms = this.forms;
    for (let c = 0; c < forms.length; c++) {
      const v = value[c] ?? null;
      switch (forms[c]) {
        case Form.Array:
          this.arrays[c]![r] = v;
          break;
        case Form.Key: {
          const k = keyCols[this.keyPos[c]!]![r];
          if (v !== k || (v === 0 && 1 / (v as number) !== 1 / (k as number))) this.toArray(c, r)[r] = v;
          break;
        }
        case Form.Int32:
          if (typeof v === 'number' && (v | 0) === v && (v !== 0 || 1 / v > 0)) this.ints[c]![r] = v;
          else if (v === null) this.setNull(c, r);
          else this.toArray(c, r)[r] = v;
          break;
        case Form.BigInt32:
          if (typeof v === 'bigint' && v >= INT32_MIN && v <= INT32_MAX) this.ints[c]![r] = Number(v);
          else if (v === null) this.setNull(c, r);
          else if (typeof v === 'bigint' && BigInt.asIntN(64, v) === v) this.widen(c, r, v);
          else this.toArray(c, r)[r] = v;
          break;
        case Form.BigInt64:
          if (typeof v === 'bigint' && BigInt.asIntN(64, v) === v) this.bigs[c]![r] = v;
          else if (v === null) this.setNull(c, r);
          else this.toArray(c, r)[r] = v;
          break;
        case Form.Bool:
          if (typeof v === 'boolean') this.bytes[c]![r] = v ? 1 : 0;
          else if (v === null) this.setNull(c, r);
          else this.toArray(c, r)[r] = v;
          break;
      }
    }
    this.rows = r + 1;
  }

  private setWideSeq(r: number, s: number): void {
    if (this.seq32 !== undefined) {
      this.seq64 = new Float64Array(this.capacity);
      for (let i = 0; i < r; i++) this.seq64[i] = this.seq32[i]!;
      this.seq32 = undefined;
    }
    this.seq64![r] = s;
  }

  private setNull(c: number, r: number): void {
    let n = this.nulls[c];
    if (n === undefined) n = this.nulls[c] = new Uint8Array((this.capacity + 7) >>> 3);
    n[r >>> 3]! |= 1 << (r & 7);
  }

  /** The column's first `r` values as a JS array it continues in (Form.Array from now on). */
  private toArray(c: number, r: number): unknown[] {
    const out = this.valuesOf(c, r);
    this.forms[c] = Form.Array;
    this.arrays[c] = out;
    this.ints[c] = this.bigs[c] = this.bytes[c] = this.nulls[c] = undefined;
    return out;
  }

  private valuesOf(c: number, r: number): unknown[] {
    const form = this.forms[c]!;
    if (form === Form.Array) return this.arrays[c]!.slice(0, r);
    if (form === Form.Key) return this.keyCols[this.keyPos[c]!]!.slice(0, r);
    // The packed column over the first r rows (views, no copy) read back as values.
    return columnArray(this.column(c, r, (a, size) => a.subarray(0, size) as typeof a));
  }

  /**
   * Column c as the run holds it: its JS array (Form.Array, Form.Key) or the packed column of its
   * typed arrays, each cut to `n` rows (its null bitmap to n bits) by `cut`.
   */
  private column(c: number, n: number, cut: <T extends Int32Array | BigInt64Array | Uint8Array>(a: T, size: number) => T): Column {
    const nulls = this.nulls[c] === undefined ? undefined : cut(this.nulls[c]!, (n + 7) >>> 3);
    switch (this.forms[c]!) {
      case Form.Array:
        return this.arrays[c]!;
      case Form.Key:
        return this.keyCols[this.keyPos[c]!]!;
      case Form.Int32:
        return new Int32Column(cut(this.ints[c]!, n), nulls);
      case Form.BigInt32:
        return new Int32BigIntColumn(cut(this.ints[c]!, n), nulls);
      case Form.BigInt64:
        return new BigInt64Column(cut(this.bigs[c]!, n), nulls);
      case Form.Bool:
        return new BoolColumn(cut(this.bytes[c]!, n), nulls);
    }
  }

  /** A BIGINT column meets a value beyond 32 bits: its int32s move to a BigInt64Array. */
  private widen(c: number, r: number, v: bigint): void {
    const ints = this.ints[c]!;
    const bigs = new BigInt64Array(this.capacity);
    for (let i = 0; i < r; i++) bigs[i] = BigInt(ints[i]!);
    bigs[r] = v;
    this.forms[c] = Form.BigInt64;
    this.bigs[c] = bigs;
    this.ints[c] = undefined;
  }

  private grow(): void {
    const cap = this.capacity * 2;
    const more = <T extends Int32Array | Float64Array | BigInt64Array | Uint8Array>(a: T | undefined, size = cap): T | undefined => {
      if (a === undefined) return undefined;
      const b = new (a.constructor as new (n: number) => T)(size);
      b.set(a as never);
      return b;
    };
    this.seq32 = more(this.seq32);
    this.seq64 = more(this.seq64);
    this.kind = more(this.kind)!;
    for (let c = 0; c < this.forms.length; c++) {
      this.ints[c] = more(this.ints[c]);
      this.bigs[c] = more(this.bigs[c]);
      this.bytes[c] = more(this.bytes[c]);
      this.nulls[c] = more(this.nulls[c], (cap + 7) >>> 3);
    }
    this.capacity = cap;
  }

  /** The rows added since the last finish as a run (REQUIRES rowCount > 0), and a fresh start. */
  finish(): RunData {
    const n = this.rows;
    if (n === 0) throw new Error('assertion failed: an empty run is never finished');
    const fit = <T extends Int32Array | Float64Array | BigInt64Array | Uint8Array>(a: T, size = n): T => (a.length === size ? a : (a.slice(0, size) as T));
    const keyCols = this.keyCols;
    for (const a of keyCols) if (a.length !== n) a.length = n;
    for (const a of this.arrays) if (a !== undefined && a.length !== n) a.length = n;
    const valueCols: Column[] = this.forms.map((_, c) => this.column(c, n, fit));
    const seq = this.seq32 !== undefined ? fit(this.seq32) : fit(this.seq64!);
    const run: RunData = { rowCount: n, keyCols, seq, kind: fit(this.kind), valueCols };
    markKeysPacked(run);
    // The next run starts at the size this one reached: files of one compaction are alike. Its
    // storage is made at its first row, not now: after a compaction's last file there is none,
    // and storage made here was held, unused, while that file was encoded and cached (at 500 k
    // rows ~20 MB beside the run itself).
    this.capacity = Math.max(16, n);
    this.started = false;
    this.rows = 0;
    this.keyCols = [];
    this.seq32 = this.seq64 = undefined;
    this.kind = new Uint8Array(0);
    this.arrays.fill(undefined);
    this.ints.fill(undefined);
    this.bigs.fill(undefined);
    this.bytes.fill(undefined);
    this.nulls.fill(undefined);
    return run;
  }
}
