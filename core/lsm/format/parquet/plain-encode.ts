// PLAIN encoding of in-memory values (types.ts) into page bytes, with statistics on the way.
//
// Invariants: nulls (null/undefined) are skipped — the definition levels carry them; every other
// value is type-checked cheaply and a wrong one throws InvalidArgument naming the column and row;
// numbers are written little-endian through the ByteWriter's DataView, strings as a 4-byte length
// plus UTF-8, decimals above 18 digits as fixed-width big-endian two's complement.

import type { DataType } from '../../types.ts';
import { invalidArgument } from '../../errors.ts';
import { ByteWriter } from './byte-writer.ts';
import { ColumnStats, writeFixed } from './stats.ts';
import { decimalBytes } from './schema.ts';

export type WriteKind = 'bool' | 'i32' | 'dec32' | 'i64' | 'ts' | 'f32' | 'f64' | 'str' | 'bin' | 'fixed';

export interface ValueCodec {
  kind: WriteKind;
  /** 1000 for MILLIS timestamps (in-memory values are microseconds), else 1. */
  divisor: number;
  /** FIXED_LEN_BYTE_ARRAY width. */
  width: number;
  column: string;
}

export function valueCodecFor(column: string, t: DataType): ValueCodec {
  const c = (kind: WriteKind, divisor = 1, width = 0): ValueCodec => ({ kind, divisor, width, column });
  switch (t.root) {
    case 'BOOLEAN':
      return c('bool');
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME':
      return c('i32');
    case 'BIGINT':
      return c('i64');
    case 'FLOAT':
      return c('f32');
    case 'DOUBLE':
      return c('f64');
    case 'CHAR':
    case 'VARCHAR':
    case 'STRING':
      return c('str');
    case 'BINARY':
    case 'VARBINARY':
    case 'BYTES':
      return c('bin');
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return c('ts', (t.precision ?? 6) <= 3 ? 1000 : 1);
    case 'DECIMAL': {
      const p = t.precision ?? 10;
      return p <= 9 ? c('dec32') : p <= 18 ? c('i64') : c('fixed', 1, decimalBytes(p));
    }
    case 'ARRAY':
    case 'MAP':
      throw invalidArgument(`Parquet column '${column}': ${t.root} is not a leaf (nested.ts writes it)`);
  }
}

function bad(codec: ValueCodec, row: number, v: unknown, want: string): never {
  const shown = typeof v === 'string' ? JSON.stringify(v.slice(0, 40)) : typeof v === 'bigint' ? `${v}n` : String(v);
  throw invalidArgument(`Parquet column '${codec.column}' row ${row}: expected ${want}, got ${typeof v} ${shown}`);
}

/** Appends the PLAIN encoding of the non-null values of `values[from, to)`; returns their count. */
export function encodePlain(
  codec: ValueCodec,
  values: unknown[],
  from: number,
  to: number,
  out: ByteWriter,
  stats: ColumnStats,
): number {
  let n = 0;
  switch (codec.kind) {
    case 'i32':
    case 'dec32': {
      out.ensure((to - from) * 4);
      const dv = out.view;
      let p = out.length;
      let min = Infinity;
      let max = -Infinity;
      for (let i = from; i < to; i++) {
        let v = values[i];
        if (v === null || v === undefined) continue;
        if (codec.kind === 'dec32') {
          if (typeof v !== 'bigint') bad(codec, i, v, 'a bigint (unscaled decimal)');
          v = Number(v);
        }
        if (typeof v !== 'number' || (v | 0) !== v) bad(codec, i, v, 'a 32-bit integer');
        dv.setInt32(p, v, true);
        p += 4;
        if (v < min) min = v;
        if (v > max) max = v;
      }
      n = (p - out.length) / 4;
      out.length = p;
      if (n > 0) {
        stats.addOrdered(min);
        stats.addOrdered(max);
      }
      return n;
    }
    case 'i64':
    case 'ts': {
      out.ensure((to - from) * 8);
      const dv = out.view;
      let p = out.length;
      const div = codec.divisor;
      let min: number | bigint | undefined;
      let max: number | bigint | undefined;
      for (let i = from; i < to; i++) {
        let v = values[i];
        if (v === null || v === undefined) continue;
        if (typeof v === 'number') {
          if (!Number.isSafeInteger(v)) bad(codec, i, v, 'an integer');
          if (div !== 1) v = Math.floor(v / div);
          const x = v as number;
          dv.setInt32(p, x | 0, true); // low word: ToInt32 is the value mod 2^32
          dv.setInt32(p + 4, Math.floor(x / 4294967296), true);
        } else if (typeof v === 'bigint' && codec.kind === 'i64') {
          if (v > 0x7fffffffffffffffn || v < -0x8000000000000000n) bad(codec, i, v, 'a 64-bit integer');
          dv.setBigInt64(p, v, true);
        } else bad(codec, i, v, codec.kind === 'ts' ? 'epoch microseconds' : 'a bigint');
        p += 8;
        const x = v as number | bigint;
        if (min === undefined || x < min) min = x;
        if (max === undefined || x > max) max = x;
      }
      n = (p - out.length) / 8;
      out.length = p;
      if (min !== undefined && max !== undefined) {
        stats.addOrdered(min);
        stats.addOrdered(max);
      }
      return n;
    }
    case 'f32':
    case 'f64': {
      const size = codec.kind === 'f32' ? 4 : 8;
      out.ensure((to - from) * size);
      const dv = out.view;
      let p = out.length;
      for (let i = from; i < to; i++) {
        const v = values[i];
        if (v === null || v === undefined) continue;
        if (typeof v !== 'number') bad(codec, i, v, 'a number');
        if (size === 4) dv.setFloat32(p, v, true);
        else dv.setFloat64(p, v, true);
        p += size;
        stats.addOrdered(size === 4 ? Math.fround(v) : v);
      }
      n = (p - out.length) / size;
      out.length = p;
      return n;
    }
    case 'bool': {
      out.ensure(((to - from) >> 3) + 1);
      const b = out.buf;
      const start = out.length;
      for (let i = from; i < to; i++) {
        const v = values[i];
        if (v === null || v === undefined) continue;
        if (typeof v !== 'boolean') bad(codec, i, v, 'a boolean');
        const byte = start + (n >> 3);
        if ((n & 7) === 0) b[byte] = 0;
        if (v) b[byte]! |= 1 << (n & 7);
        n++;
        stats.addOrdered(v);
      }
      out.length = start + ((n + 7) >> 3);
      return n;
    }
    case 'str': {
      for (let i = from; i < to; i++) {
        const v = values[i];
        if (v === null || v === undefined) continue;
        if (typeof v !== 'string') bad(codec, i, v, 'a string');
        out.ensure(4);
        const lp = out.length;
        out.length += 4;
        const len = out.utf8(v);
        out.view.setInt32(lp, len, true);
        stats.addString(v);
        n++;
      }
      return n;
    }
    case 'bin': {
      for (let i = from; i < to; i++) {
        const v = values[i];
        if (v === null || v === undefined) continue;
        if (!(v instanceof Uint8Array)) bad(codec, i, v, 'a Uint8Array');
        out.i32(v.length);
        out.bytes(v);
        stats.addBytes(v);
        n++;
      }
      return n;
    }
    case 'fixed': {
      const w = codec.width;
      const limit = 1n << BigInt(8 * w - 1);
      out.ensure((to - from) * w);
      for (let i = from; i < to; i++) {
        const v = values[i];
        if (v === null || v === undefined) continue;
        if (typeof v !== 'bigint' || v >= limit || v < -limit) bad(codec, i, v, `a bigint that fits ${w} bytes`);
        writeFixed(out.buf, out.length, v, w);
        out.length += w;
        stats.addOrdered(v);
        n++;
      }
      return n;
    }
  }
}

/**
 * A column of numbers in a typed array, written without a JS value per row. `nulls` has bit i set
 * when row i is null (absent: none). What the numbers mean follows from the column's codec; the
 * forms taken (anything else is a caller's bug):
 *   i32   Int32Array or Uint8Array of the integers
 *   i64   BigInt64Array; Int32Array of 32-bit integers; Float64Array of safe integers (numbers)
 *   f64   Float64Array
 *   bool  Uint8Array of 0/1
 */
export interface TypedValues {
  readonly values: Int32Array | Uint8Array | BigInt64Array | Float64Array;
  readonly nulls: Uint8Array | undefined;
}

/** The values a chunk is written from: a JS array of in-memory values, or a typed column. */
export type ColumnValues = unknown[] | TypedValues;

/** True when the writer takes `v` in its typed form for a column of this codec. */
export function takesTyped(codec: ValueCodec, v: TypedValues['values']): boolean {
  switch (codec.kind) {
    case 'i32':
      return v instanceof Int32Array || v instanceof Uint8Array;
    case 'i64':
      return v instanceof BigInt64Array || v instanceof Int32Array || v instanceof Float64Array;
    case 'f64':
      return v instanceof Float64Array;
    case 'bool':
      return v instanceof Uint8Array;
    default:
      return false;
  }
}

const isNullAt = (nulls: Uint8Array | undefined, i: number): boolean => nulls !== undefined && (nulls[i >>> 3]! & (1 << (i & 7))) !== 0;

/**
 * encodePlain for a typed column (REQUIRES: takesTyped): the same bytes and statistics as
 * encodePlain of the JS values the typed column stands for.
 */
export function encodePlainTyped(
  codec: ValueCodec,
  col: TypedValues,
  from: number,
  to: number,
  out: ByteWriter,
  stats: ColumnStats,
): number {
  const { values, nulls } = col;
  if (!takesTyped(codec, values)) throw new Error(`assertion failed: Parquet column '${codec.column}' (${codec.kind}) given a ${values.constructor.name}`);
  let n = 0;
  switch (codec.kind) {
    case 'i32':
    case 'i64': {
      const wide = codec.kind === 'i64';
      const size = wide ? 8 : 4;
      out.ensure((to - from) * size);
      const b = out.buf;
      const dv = out.view;
      let p = out.length;
      if (values instanceof BigInt64Array) {
        let min: bigint | undefined;
        let max: bigint | undefined;
        for (let i = from; i < to; i++) {
          if (isNullAt(nulls, i)) continue;
          const v = values[i]!;
          dv.setBigInt64(p, v, true);
          p += 8;
          if (min === undefined || v < min) min = v;
          if (max === undefined || v > max) max = v;
        }
        n = (p - out.length) / 8;
        out.length = p;
        if (min !== undefined && max !== undefined) {
          stats.addOrdered(min);
          stats.addOrdered(max);
        }
        return n;
      }
      let min = Infinity;
      let max = -Infinity;
      const isF64 = values instanceof Float64Array;
      for (let i = from; i < to; i++) {
        if (nulls !== undefined && (nulls[i >>> 3]! & (1 << (i & 7))) !== 0) continue;
        const v = values[i]!;
        if (wide) {
          if (isF64) {
            if (!Number.isSafeInteger(v)) bad(codec, i, v, 'an integer');
            dv.setInt32(p, v | 0, true);
            dv.setInt32(p + 4, Math.floor(v / 4294967296), true);
          } else {
            // A 32-bit integer: the high word is its sign.
            const lo = v | 0;
            b[p] = lo;
            b[p + 1] = lo >> 8;
            b[p + 2] = lo >> 16;
            b[p + 3] = lo >> 24;
            const hi = lo >> 31;
            b[p + 4] = hi;
            b[p + 5] = hi;
            b[p + 6] = hi;
            b[p + 7] = hi;
          }
        } else {
          b[p] = v;
          b[p + 1] = v >> 8;
          b[p + 2] = v >> 16;
          b[p + 3] = v >> 24;
        }
        p += size;
        if (v < min) min = v;
        if (v > max) max = v;
      }
      n = (p - out.length) / size;
      out.length = p;
      if (n > 0) {
        stats.addOrdered(min);
        stats.addOrdered(max);
      }
      return n;
    }
    case 'f64': {
      out.ensure((to - from) * 8);
      const dv = out.view;
      let p = out.length;
      for (let i = from; i < to; i++) {
        if (isNullAt(nulls, i)) continue;
        const v = values[i] as number;
        dv.setFloat64(p, v, true);
        p += 8;
        stats.addOrdered(v);
      }
      n = (p - out.length) / 8;
      out.length = p;
      return n;
    }
    case 'bool': {
      out.ensure(((to - from) >> 3) + 1);
      const b = out.buf;
      const start = out.length;
      for (let i = from; i < to; i++) {
        if (isNullAt(nulls, i)) continue;
        const v = values[i] === 1;
        const byte = start + (n >> 3);
        if ((n & 7) === 0) b[byte] = 0;
        if (v) b[byte]! |= 1 << (n & 7);
        n++;
        stats.addOrdered(v);
      }
      out.length = start + ((n + 7) >> 3);
      return n;
    }
    default:
      throw new Error(`assertion failed: no typed form for Parquet column '${codec.column}' (${codec.kind})`);
  }
}
