// Physical page values (`Phys`) → in-memory values of types.ts, chosen once per column from the
// requested Paimon type and the file's leaf (physical type plus unit annotations).
//
// Invariants: a requested type the file's physical type cannot hold is reported by `fail` before
// any page is read; strings decode as one latin1 slice per page when the page bytes are ASCII
// (each value then a substring of it), else per value through TextDecoder; BYTES values are
// copies, never views of the file; timestamps come out as epoch microseconds whatever unit the
// file stores; INT64 becomes a bigint unless `asNumber`.

import { isAscii } from 'node:buffer';
import type { DataType } from '../../types.ts';
import type { Phys } from './plain-decode.ts';
import { type LeafSchema, Converted, Physical, PHYSICAL_NAMES } from './schema.ts';

export type Materialize = (p: Phys, out: unknown[], base: number) => void;

const UTF8 = new TextDecoder();
const TWO32 = 4294967296;

function latin1(buf: Uint8Array, lo: number, hi: number): string {
  return Buffer.from(buf.buffer, buf.byteOffset, buf.length).toString('latin1', lo, hi);
}

function strings(p: Phys, out: unknown[], base: number): void {
  if (p.t !== 'bytes') throw new TypeError(`expected byte arrays, got ${p.t}`);
  const { n, buf, start, end } = p;
  if (n === 0) return;
  let lo = start[0]!;
  let hi = end[n - 1]!;
  if (hi < lo) [lo, hi] = [0, buf.length];
  const region = buf.subarray(lo, hi);
  if (isAscii(region)) {
    const s = latin1(buf, lo, hi);
    for (let k = 0; k < n; k++) out[base + k] = s.substring(start[k]! - lo, end[k]! - lo);
    return;
  }
  let s: string | undefined;
  for (let k = 0; k < n; k++) {
    const a = start[k]!;
    const b = end[k]!;
    let ascii = true;
    for (let i = a; i < b; i++) {
      if (buf[i]! >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii && a >= lo && b <= hi) {
      s ??= latin1(buf, lo, hi);
      out[base + k] = s.substring(a - lo, b - lo);
    } else out[base + k] = UTF8.decode(buf.subarray(a, b));
  }
}

function bytesOut(p: Phys, out: unknown[], base: number): void {
  if (p.t === 'bytes') {
    for (let k = 0; k < p.n; k++) out[base + k] = new Uint8Array(p.buf.subarray(p.start[k]!, p.end[k]!));
  } else if (p.t === 'fixed') {
    for (let k = 0; k < p.n; k++) out[base + k] = new Uint8Array(p.buf.subarray(p.pos + k * p.width, p.pos + (k + 1) * p.width));
  } else throw new TypeError(`expected byte arrays, got ${p.t}`);
}

function beToBigint(buf: Uint8Array, a: number, b: number): bigint {
  if (b === a) return 0n;
  let v = 0n;
  for (let i = a; i < b; i++) v = (v << 8n) | BigInt(buf[i]!);
  return BigInt.asIntN((b - a) * 8, v);
}

/** Epoch microseconds from an INT96 (nanos of day LE i64, Julian day LE i32). */
function int96Micros(buf: Uint8Array, at: number): number {
  const dv = new DataView(buf.buffer, buf.byteOffset + at, 12);
  const nanos = dv.getUint32(0, true) + dv.getUint32(4, true) * TWO32;
  const day = dv.getInt32(8, true);
  return (day - 2440588) * 86_400_000_000 + Math.floor(nanos / 1000);
}

/** The unit factor of an INT64 timestamp/time column: value × mul / div = microseconds. */
function unitOf(leaf: LeafSchema, fallbackMillis: boolean): { mul: number; div: number } {
  const l = leaf.logical;
  const unit =
    l && (l.kind === 'TIMESTAMP' || l.kind === 'TIME')
      ? l.unit
      : leaf.converted === Converted.TIMESTAMP_MILLIS || leaf.converted === Converted.TIME_MILLIS
        ? 'MILLIS'
        : leaf.converted === Converted.TIMESTAMP_MICROS || leaf.converted === Converted.TIME_MICROS
          ? 'MICROS'
          : fallbackMillis
            ? 'MILLIS'
            : 'MICROS';
  return unit === 'MILLIS' ? { mul: 1000, div: 1 } : unit === 'MICROS' ? { mul: 1, div: 1 } : { mul: 1, div: 1000 };
}

/** Chooses the converter for one column, or calls `fail` when the file cannot hold `t`. */
export function materializerFor(t: DataType, asNumber: boolean, leaf: LeafSchema, fail: (msg: string) => never): Materialize {
  const ph = leaf.physical;
  const mismatch = (): never => fail(`column '${leaf.name}' is ${PHYSICAL_NAMES[ph]} in the file, which cannot hold ${t.root}`);
  switch (t.root) {
    case 'BOOLEAN':
      if (ph !== Physical.BOOLEAN) mismatch();
      return (p, out, base) => {
        const v = (p as { v: Uint8Array }).v;
        for (let k = 0; k < p.n; k++) out[base + k] = v[k] === 1;
      };
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
      if (ph !== Physical.INT32) mismatch();
      return (p, out, base) => {
        const v = (p as { v: Int32Array }).v;
        for (let k = 0; k < p.n; k++) out[base + k] = v[k];
      };
    case 'TIME':
      if (ph === Physical.INT32) return materializerFor({ ...t, root: 'INT' }, false, leaf, fail);
      if (ph !== Physical.INT64) mismatch();
      return (p, out, base) => {
        const w = (p as { w: Int32Array }).w;
        for (let k = 0; k < p.n; k++) out[base + k] = Math.floor(((w[2 * k]! >>> 0) + w[2 * k + 1]! * TWO32) / 1000);
      };
    case 'BIGINT':
      if (ph === Physical.INT32) {
        return asNumber
          ? materializerFor({ ...t, root: 'INT' }, false, leaf, fail)
          : (p, out, base) => {
              const v = (p as { v: Int32Array }).v;
              for (let k = 0; k < p.n; k++) out[base + k] = BigInt(v[k]!);
            };
      }
      if (ph !== Physical.INT64) mismatch();
      if (asNumber) {
        return (p, out, base) => {
          const w = (p as { w: Int32Array }).w;
          for (let k = 0; k < p.n; k++) out[base + k] = (w[2 * k]! >>> 0) + w[2 * k + 1]! * TWO32;
        };
      }
      return (p, out, base) => {
        const v = (p as { v: BigInt64Array }).v;
        for (let k = 0; k < p.n; k++) out[base + k] = v[k];
      };
    case 'FLOAT':
    case 'DOUBLE':
      if (ph !== Physical.FLOAT && ph !== Physical.DOUBLE) mismatch();
      if (t.root === 'FLOAT' && ph === Physical.DOUBLE) mismatch();
      return (p, out, base) => {
        const v = (p as { v: Float32Array | Float64Array }).v;
        for (let k = 0; k < p.n; k++) out[base + k] = v[k];
      };
    case 'CHAR':
    case 'VARCHAR':
    case 'STRING':
      if (ph !== Physical.BYTE_ARRAY) mismatch();
      return strings;
    case 'BINARY':
    case 'VARBINARY':
    case 'BYTES':
      if (ph !== Physical.BYTE_ARRAY && ph !== Physical.FIXED_LEN_BYTE_ARRAY) mismatch();
      return bytesOut;
    case 'DECIMAL': {
      const fileScale = leaf.logical?.kind === 'DECIMAL' ? leaf.logical.scale : leaf.scale;
      if (fileScale !== undefined && fileScale !== (t.scale ?? 0)) {
        fail(`column '${leaf.name}' has decimal scale ${fileScale} in the file, ${t.scale} requested`);
      }
      if (ph === Physical.INT32) {
        return (p, out, base) => {
          const v = (p as { v: Int32Array }).v;
          for (let k = 0; k < p.n; k++) out[base + k] = BigInt(v[k]!);
        };
      }
      if (ph === Physical.INT64) return materializerFor({ ...t, root: 'BIGINT' }, false, leaf, fail);
      if (ph !== Physical.FIXED_LEN_BYTE_ARRAY && ph !== Physical.BYTE_ARRAY) mismatch();
      return (p, out, base) => {
        if (p.t === 'fixed') {
          for (let k = 0; k < p.n; k++) out[base + k] = beToBigint(p.buf, p.pos + k * p.width, p.pos + (k + 1) * p.width);
        } else if (p.t === 'bytes') {
          for (let k = 0; k < p.n; k++) out[base + k] = beToBigint(p.buf, p.start[k]!, p.end[k]!);
        } else throw new TypeError(`expected byte arrays, got ${p.t}`);
      };
    }
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      if (ph === Physical.INT96) {
        return (p, out, base) => {
          const q = p as { buf: Uint8Array; pos: number };
          for (let k = 0; k < p.n; k++) out[base + k] = int96Micros(q.buf, q.pos + 12 * k);
        };
      }
      if (ph !== Physical.INT64) mismatch();
      const { mul, div } = unitOf(leaf, (t.precision ?? 6) <= 3);
      return (p, out, base) => {
        const w = (p as { w: Int32Array }).w;
        for (let k = 0; k < p.n; k++) {
          const v = (w[2 * k]! >>> 0) + w[2 * k + 1]! * TWO32;
          out[base + k] = div === 1 ? v * mul : Math.floor(v / div);
        }
      };
    }
    case 'ARRAY':
    case 'MAP':
      return fail(`column '${leaf.name}' is a leaf in the file, which cannot hold ${t.root}`);
  }
}
