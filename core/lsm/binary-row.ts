// Paimon's BinaryRow (paimon-format.md §6.1–6.2) for flat rows of the types in types.ts: the key,
// partition and statistics rows inside manifests, and the bytes the bucket hash runs over.
//
// Layout: [header+null bits: W bytes][8-byte slot per field][variable part, 8-byte aligned items]
//   W = ((arity + 63 + 8) >> 6) * 8; byte 0 = RowKind (always 0 here); null bit of field i is bit i+8.
// Invariants (they make our bytes identical to Java's BinaryRowWriter, which the bucket hash needs):
//   - all multi-byte values little-endian; unused bytes, null slots and padding are zero;
//   - strings/bytes of ≤7 bytes are inline (slot byte 7 = 0x80|len), longer ones go to the var part;
//   - a null DECIMAL(p>18) still reserves its 16 var-part bytes and a null TIMESTAMP(p>3) its 8,
//     with slot = offset<<32 (RowHelper writes nulls of these types through the value setter).
// The serialized (manifest) form prefixes the row with its arity as a big-endian int32.

import { corruption, invalidArgument, notSupported } from './errors.ts';
import type { DataType } from './types.ts';

/** The serialized form of the arity-0 row: `00000000` + 8 zero bytes. */
export const EMPTY_SERIALIZED_ROW: Uint8Array = new Uint8Array(12);

export const headerSizeBytes = (arity: number): number => (((arity + 63 + 8) >> 6) << 3);

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });
const TWO32 = 4294967296;

type Prepared = unknown;
interface FieldCodec {
  /** Turns the value into what `write` needs and returns the var-part bytes it will take. */
  prepare(v: unknown, i: number, scratch: Prepared[]): number;
  /** Writes at absolute `slot`; `cursor` is the var-part offset relative to the row start at `base`. */
  write(u8: Uint8Array, dv: DataView, slot: number, p: Prepared, cursor: number, base: number): void;
  /** Var-part bytes a null of this type reserves (0, or 16/8 for non-compact DECIMAL/TIMESTAMP). */
  nullReserve: number;
}

function setLongNumber(dv: DataView, at: number, n: number): void {
  dv.setUint32(at, n >>> 0, true);
  dv.setInt32(at + 4, Math.floor(n / TWO32), true);
}
function getLongNumber(dv: DataView, at: number): number {
  return dv.getInt32(at + 4, true) * TWO32 + dv.getUint32(at, true);
}

/** Java `BigInteger.toByteArray`: minimal big-endian two's complement. */
export function bigintToMinimalBytes(v: bigint): Uint8Array {
  const mag = v < 0n ? -v - 1n : v;
  const bits = mag === 0n ? 0 : mag.toString(2).length;
  const n = (bits >> 3) + 1;
  let x = v < 0n ? (1n << BigInt(n * 8)) + v : v;
  const out = new Uint8Array(n);
  for (let i = n - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}
export function bigintFromBytes(b: Uint8Array): bigint {
  if (b.length === 0) return 0n;
  let x = 0n;
  for (const byte of b) x = (x << 8n) | BigInt(byte);
  return b[0]! & 0x80 ? x - (1n << BigInt(b.length * 8)) : x;
}

const fixed = (write: (dv: DataView, slot: number, v: never) => void): FieldCodec => ({
  prepare(v, i, scratch) {
    scratch[i] = v;
    return 0;
  },
  write: (_u8, dv, slot, p) => write(dv, slot, p as never),
  nullReserve: 0,
});

/** True when every UTF-16 unit is ASCII (then the UTF-8 bytes are the char codes). */
function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Strings and bytes; ASCII strings are written char by char (TextEncoder per key is the hot cost). */
const varBytes: FieldCodec = {
  prepare(v, i, scratch) {
    let n: number;
    if (typeof v === 'string') {
      if (isAscii(v)) {
        scratch[i] = v;
        n = v.length;
      } else {
        const b = utf8.encode(v);
        scratch[i] = b;
        n = b.length;
      }
    } else if (v instanceof Uint8Array) {
      scratch[i] = v;
      n = v.length;
    } else throw invalidArgument(`expected a string or bytes, got ${typeof v}`);
    return n <= 7 ? 0 : (n + 7) & ~7;
  },
  write(u8, dv, slot, p, cursor, base) {
    const n = (p as string | Uint8Array).length;
    const at = n <= 7 ? slot : base + cursor;
    if (typeof p === 'string') for (let j = 0; j < n; j++) u8[at + j] = p.charCodeAt(j);
    else if (n <= 7) for (let j = 0; j < n; j++) u8[at + j] = (p as Uint8Array)[j]!;
    else u8.set(p as Uint8Array, at);
    if (n <= 7) u8[slot + 7] = 0x80 | n;
    else {
      dv.setUint32(slot, n, true);
      dv.setUint32(slot + 4, cursor, true);
    }
  },
  nullReserve: 0,
};

function codecFor(t: DataType): FieldCodec {
  switch (t.root) {
    case 'BOOLEAN':
      return fixed((dv, s, v: boolean) => dv.setUint8(s, v ? 1 : 0));
    case 'TINYINT':
      return fixed((dv, s, v: number) => dv.setInt8(s, v));
    case 'SMALLINT':
      return fixed((dv, s, v: number) => dv.setInt16(s, v, true));
    case 'INT':
    case 'DATE':
    case 'TIME':
      return fixed((dv, s, v: number) => dv.setInt32(s, v, true));
    case 'BIGINT':
      return fixed((dv, s, v: bigint) => dv.setBigInt64(s, v, true));
    case 'FLOAT':
      return fixed((dv, s, v: number) => dv.setFloat32(s, v, true));
    case 'DOUBLE':
      return fixed((dv, s, v: number) => dv.setFloat64(s, v, true));
    case 'CHAR':
    case 'VARCHAR':
    case 'STRING':
    case 'BINARY':
    case 'VARBINARY':
    case 'BYTES':
      return varBytes;
    case 'DECIMAL':
      if (t.precision! <= 18) return fixed((dv, s, v: bigint) => dv.setBigInt64(s, v, true));
      return {
        prepare(v, i, scratch) {
          const b = bigintToMinimalBytes(v as bigint);
          if (b.length > 16) throw invalidArgument(`decimal ${v} does not fit 16 bytes`);
          scratch[i] = b;
          return 16;
        },
        write(u8, dv, slot, p, cursor, base) {
          const b = p as Uint8Array;
          u8.set(b, base + cursor);
          dv.setUint32(slot, b.length, true);
          dv.setUint32(slot + 4, cursor, true);
        },
        nullReserve: 16,
      };
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      if (t.precision! <= 3) return fixed((dv, s, v: number) => setLongNumber(dv, s, Math.floor(v / 1000)));
      return {
        prepare(v, i, scratch) {
          scratch[i] = v;
          return 8;
        },
        write(_u8, dv, slot, p, cursor, base) {
          const micros = p as number;
          const millis = Math.floor(micros / 1000);
          setLongNumber(dv, base + cursor, millis);
          dv.setUint32(slot, (micros - millis * 1000) * 1000, true); // nano-of-millisecond
          dv.setUint32(slot + 4, cursor, true);
        },
        nullReserve: 8,
      };
    case 'ARRAY':
    case 'MAP':
      // Only ever null here: ARRAY/MAP are never keys or partitions and their statistics are null.
      return {
        prepare() {
          throw notSupported(`BinaryRow: ${t.root} values are not stored in keys, partitions or statistics`);
        },
        write() {},
        nullReserve: 0,
      };
    default:
      throw notSupported(`BinaryRow of type ${(t as DataType).root}`);
  }
}

export type RowEncoder = (values: readonly unknown[]) => Uint8Array;

/**
 * A per-schema encoder producing the BinaryRow bytes (no arity prefix, RowKind 0), or the serialized
 * form with `withArityPrefix`. Precompute it once per type list: it runs once per written key for the
 * bucket hash, so it encodes into one reused scratch buffer (one DataView; creating DataViews and
 * buffers per row dominates otherwise) and returns a fresh copy of exactly the row's bytes.
 */
export function binaryRowEncoder(types: readonly DataType[], withArityPrefix = false): RowEncoder {
  const arity = types.length;
  const codecs = types.map(codecFor);
  const header = headerSizeBytes(arity);
  const fixedSize = header + 8 * arity;
  const base = withArityPrefix ? 4 : 0;
  const prepared: Prepared[] = new Array(arity);
  const sizes = new Int32Array(arity);
  let scratch = new Uint8Array(Math.max(64, base + fixedSize));
  let dv = new DataView(scratch.buffer);
  return (values) => {
    if (values.length !== arity) throw invalidArgument(`row has ${values.length} values, expected ${arity}`);
    let total = base + fixedSize;
    for (let i = 0; i < arity; i++) {
      const v = values[i];
      const n = v === null || v === undefined ? codecs[i]!.nullReserve : codecs[i]!.prepare(v, i, prepared);
      sizes[i] = n;
      total += n;
    }
    if (total > scratch.length) {
      scratch = new Uint8Array(Math.max(total, scratch.length * 2));
      dv = new DataView(scratch.buffer);
    } else scratch.fill(0, 0, total);
    if (withArityPrefix) dv.setInt32(0, arity, false);
    let cursor = fixedSize; // relative to the row start, which is `base`
    for (let i = 0; i < arity; i++) {
      const slot = base + header + 8 * i;
      const v = values[i];
      if (v === null || v === undefined) {
        scratch[base + ((i + 8) >> 3)]! |= 1 << ((i + 8) & 7);
        if (sizes[i]! > 0) dv.setUint32(slot + 4, cursor, true);
      } else {
        codecs[i]!.write(scratch, dv, slot, prepared[i], cursor, base);
        prepared[i] = undefined;
      }
      cursor += sizes[i]!;
    }
    return scratch.slice(0, total);
  };
}

/** BinaryRow bytes of `values` (no arity prefix; RowKind 0). */
export function encodeBinaryRow(types: readonly DataType[], values: readonly unknown[]): Uint8Array {
  return binaryRowEncoder(types)(values);
}

/** The manifest form: int32 big-endian arity followed by the BinaryRow bytes. */
export function serializeBinaryRow(types: readonly DataType[], values: readonly unknown[]): Uint8Array {
  return binaryRowEncoder(types, true)(values);
}

/** Prefixes already-encoded row bytes with their arity (big-endian int32). */
export function serializeRowBytes(arity: number, row: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + row.length);
  new DataView(out.buffer).setInt32(0, arity, false);
  out.set(row, 4);
  return out;
}

/** The arity stored in a serialized row; corruption when it is shorter than its header. */
export function serializedRowArity(bytes: Uint8Array, path: string): number {
  if (bytes.length < 4) throw corruption(path, `serialized BinaryRow of ${bytes.length} bytes`);
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getInt32(0, false);
}

/** Decodes a serialized row (arity prefix + BinaryRow); checks arity and every bound. */
export function deserializeBinaryRow(types: readonly DataType[], bytes: Uint8Array, path: string): unknown[] {
  const arity = serializedRowArity(bytes, path);
  if (arity !== types.length) throw corruption(path, `BinaryRow has arity ${arity}, expected ${types.length}`);
  return decodeBinaryRow(types, bytes.subarray(4), path);
}

/** Decodes BinaryRow bytes without an arity prefix. */
export function decodeBinaryRow(types: readonly DataType[], row: Uint8Array, path: string): unknown[] {
  const arity = types.length;
  const header = headerSizeBytes(arity);
  if (row.length < header + 8 * arity) {
    throw corruption(path, `BinaryRow of ${row.length} bytes is shorter than its ${header + 8 * arity}-byte fixed part`);
  }
  const dv = new DataView(row.buffer, row.byteOffset, row.byteLength);
  const out = new Array<unknown>(arity);
  const varPart = (slot: number, what: string): [number, number] => {
    const len = dv.getUint32(slot, true);
    const off = dv.getUint32(slot + 4, true);
    if (off < header + 8 * arity || off + len > row.length) {
      throw corruption(path, `${what} at offset ${off} length ${len} outside the ${row.length}-byte row`);
    }
    return [off, len];
  };
  for (let i = 0; i < arity; i++) {
    const t = types[i]!;
    const slot = header + 8 * i;
    if (row[(i + 8) >> 3]! & (1 << ((i + 8) & 7))) {
      out[i] = null;
      continue;
    }
    switch (t.root) {
      case 'BOOLEAN':
        out[i] = row[slot] !== 0;
        break;
      case 'TINYINT':
        out[i] = dv.getInt8(slot);
        break;
      case 'SMALLINT':
        out[i] = dv.getInt16(slot, true);
        break;
      case 'INT':
      case 'DATE':
      case 'TIME':
        out[i] = dv.getInt32(slot, true);
        break;
      case 'BIGINT':
        out[i] = dv.getBigInt64(slot, true);
        break;
      case 'FLOAT':
        out[i] = dv.getFloat32(slot, true);
        break;
      case 'DOUBLE':
        out[i] = dv.getFloat64(slot, true);
        break;
      case 'DECIMAL':
        if (t.precision! <= 18) out[i] = dv.getBigInt64(slot, true);
        else {
          const [off, len] = varPart(slot, `decimal field ${i}`);
          if (len > 16) throw corruption(path, `decimal field ${i} has ${len} bytes`);
          out[i] = bigintFromBytes(row.subarray(off, off + len));
        }
        break;
      case 'TIMESTAMP':
      case 'TIMESTAMP_LTZ':
        if (t.precision! <= 3) out[i] = getLongNumber(dv, slot) * 1000;
        else {
          const nanos = dv.getUint32(slot, true);
          const off = dv.getUint32(slot + 4, true);
          if (off + 8 > row.length || nanos > 999_999) throw corruption(path, `timestamp field ${i} is malformed`);
          out[i] = getLongNumber(dv, off) * 1000 + Math.floor(nanos / 1000);
        }
        break;
      case 'ARRAY':
      case 'MAP':
        throw notSupported(`BinaryRow: reading a non-null ${t.root} field ${i} is not supported`);
      default: {
        let b: Uint8Array;
        if (row[slot + 7]! & 0x80) {
          const len = row[slot + 7]! & 0x7f;
          if (len > 7) throw corruption(path, `inline field ${i} claims ${len} bytes`);
          b = row.subarray(slot, slot + len);
        } else {
          const [off, len] = varPart(slot, `field ${i}`);
          b = row.subarray(off, off + len);
        }
        if (t.root === 'BINARY' || t.root === 'VARBINARY' || t.root === 'BYTES') out[i] = b.slice();
        else {
          try {
            out[i] = utf8Decoder.decode(b);
          } catch (e) {
            throw corruption(path, `string field ${i} is not UTF-8`, e);
          }
        }
      }
    }
  }
  return out;
}
