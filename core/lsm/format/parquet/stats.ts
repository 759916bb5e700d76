// Column-chunk statistics as parquet-mr writes them: null_count always; min_value/max_value in
// the column's type order (signed numbers, unsigned UTF-8 bytes for strings and binary); the
// deprecated min/max as well for the physical types whose order is signed (parquet-mr does so).
//
// Invariants: `min`/`max` hold physical-domain values (epoch millis for a MILLIS timestamp, the
// unscaled decimal, the JS string for UTF8); NaN never enters them; a zero minimum is written as
// -0.0 and a zero maximum as +0.0 (parquet.thrift's float rules); binary bounds whose combined
// size reaches 4096 bytes are omitted, as parquet-mr omits them.

import { compareBytes, compareStrings } from '../../types.ts';
import { ThriftWriter } from './thrift-compact.ts';
import { Physical } from './schema.ts';

const MAX_STATS_BYTES = 4096;
const ENC = new TextEncoder();

export class ColumnStats {
  nulls = 0;
  min: unknown = undefined;
  max: unknown = undefined;

  /** Numbers, bigints and booleans (false < true). NaN is skipped. */
  addOrdered(v: number | bigint | boolean): void {
    if (v !== v) return; // NaN
    if (this.min === undefined) {
      this.min = v;
      this.max = v;
    } else if ((v as number) < (this.min as number)) this.min = v;
    else if ((v as number) > (this.max as number)) this.max = v;
  }

  addString(v: string): void {
    if (this.min === undefined) {
      this.min = v;
      this.max = v;
    } else if (compareStrings(v, this.max as string) > 0) this.max = v;
    else if (compareStrings(v, this.min as string) < 0) this.min = v;
  }

  addBytes(v: Uint8Array): void {
    if (this.min === undefined) {
      this.min = v;
      this.max = v;
    } else if (compareBytes(v, this.max as Uint8Array) > 0) this.max = v;
    else if (compareBytes(v, this.min as Uint8Array) < 0) this.min = v;
  }

  /** Writes the Statistics struct as field `id` of the struct being written. */
  write(t: ThriftWriter, id: number, physical: Physical, typeLength: number): void {
    t.structBegin(id);
    let min: Uint8Array | undefined;
    let max: Uint8Array | undefined;
    if (this.min !== undefined) {
      min = encodeStat(this.min, physical, typeLength, true);
      max = encodeStat(this.max, physical, typeLength, false);
      if ((physical === Physical.BYTE_ARRAY || physical === Physical.FIXED_LEN_BYTE_ARRAY) && min.length + max.length >= MAX_STATS_BYTES) {
        min = max = undefined;
      }
    }
    const signed = physical !== Physical.BYTE_ARRAY && physical !== Physical.FIXED_LEN_BYTE_ARRAY;
    if (min && max && signed) {
      t.binary(1, max);
      t.binary(2, min);
    }
    t.i64(3, this.nulls);
    if (min && max) {
      t.binary(5, max);
      t.binary(6, min);
    }
    t.structEnd();
  }
}

/** PLAIN encoding of one statistic value, without the length prefix of BYTE_ARRAY. */
export function encodeStat(v: unknown, physical: Physical, typeLength: number, isMin: boolean): Uint8Array {
  switch (physical) {
    case Physical.BOOLEAN:
      return Uint8Array.of(v ? 1 : 0);
    case Physical.INT32: {
      const b = new Uint8Array(4);
      new DataView(b.buffer).setInt32(0, Number(v), true);
      return b;
    }
    case Physical.INT64: {
      const b = new Uint8Array(8);
      new DataView(b.buffer).setBigInt64(0, BigInt(v as number | bigint), true);
      return b;
    }
    case Physical.FLOAT:
    case Physical.DOUBLE: {
      let x = v as number;
      if (x === 0) x = isMin ? -0 : 0;
      const b = new Uint8Array(physical === Physical.FLOAT ? 4 : 8);
      const dv = new DataView(b.buffer);
      if (physical === Physical.FLOAT) dv.setFloat32(0, x, true);
      else dv.setFloat64(0, x, true);
      return b;
    }
    case Physical.BYTE_ARRAY:
      return typeof v === 'string' ? ENC.encode(v) : (v as Uint8Array);
    case Physical.FIXED_LEN_BYTE_ARRAY:
      return typeof v === 'bigint' ? bigintToFixed(v, typeLength) : (v as Uint8Array);
    default:
      throw new Error(`assertion failed: no statistics for physical type ${physical}`);
  }
}

/** Big-endian two's complement of `v` in exactly `width` bytes. */
export function bigintToFixed(v: bigint, width: number): Uint8Array {
  const out = new Uint8Array(width);
  writeFixed(out, 0, v, width);
  return out;
}

export function writeFixed(out: Uint8Array, at: number, v: bigint, width: number): void {
  let u = BigInt.asUintN(width * 8, v);
  for (let i = width - 1; i >= 0; i--) {
    out[at + i] = Number(u & 0xffn);
    u >>= 8n;
  }
}
