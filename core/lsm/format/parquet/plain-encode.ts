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
