// Decoded page values in physical form (`Phys`), and the PLAIN decoder that produces them.
//
// `Phys` holds the non-null values of one page (or a dictionary) without converting them to
// in-memory values yet: numbers as aligned typed arrays over (a copy of) the page bytes, byte
// arrays as start/end offsets into the page buffer. values.ts turns them into types.ts values.
// Invariants: every offset and count is checked against the page bytes; malformed input throws
// `DecodeError` (the reader maps it to Corruption), never reads out of bounds.

import { Physical } from './schema.ts';

export class DecodeError extends Error {}

export type Phys =
  | { t: 'i32'; n: number; v: Int32Array }
  | { t: 'i64'; n: number; v: BigInt64Array; w: Int32Array }
  | { t: 'f32'; n: number; v: Float32Array }
  | { t: 'f64'; n: number; v: Float64Array }
  | { t: 'bool'; n: number; v: Uint8Array }
  | { t: 'bytes'; n: number; buf: Uint8Array; start: Int32Array; end: Int32Array }
  | { t: 'fixed'; n: number; buf: Uint8Array; pos: number; width: number }
  | { t: 'int96'; n: number; buf: Uint8Array; pos: number }
  | { t: 'dict'; n: number; idx: Int32Array };

/** `count` bytes at `pos` as an aligned copy or view, for a typed array of `align`-byte elements. */
export function alignedBytes(buf: Uint8Array, pos: number, bytes: number, align: number): ArrayBuffer {
  if ((buf.byteOffset + pos) % align === 0 && buf.buffer instanceof ArrayBuffer) {
    // A view is fine: the caller builds a typed array over exactly [pos, pos + bytes).
    return buf.buffer;
  }
  // A copy (never Buffer#slice, which would be a view into a pooled buffer at the wrong offset).
  const copy = new Uint8Array(bytes);
  copy.set(buf.subarray(pos, pos + bytes));
  return copy.buffer;
}

function typed<T>(buf: Uint8Array, pos: number, count: number, size: number, make: (b: ArrayBuffer, off: number, n: number) => T): T {
  const bytes = count * size;
  const ab = alignedBytes(buf, pos, bytes, size);
  const off = ab === buf.buffer ? buf.byteOffset + pos : 0;
  return make(ab, off, count);
}

export function i32Phys(buf: Uint8Array, pos: number, n: number): Phys {
  return { t: 'i32', n, v: typed(buf, pos, n, 4, (b, o, c) => new Int32Array(b, o, c)) };
}

export function i64Phys(buf: Uint8Array, pos: number, n: number): Phys {
  const v = typed(buf, pos, n, 8, (b, o, c) => new BigInt64Array(b, o, c));
  return { t: 'i64', n, v, w: new Int32Array(v.buffer, v.byteOffset, n * 2) };
}

const SIZE: Record<number, number> = {
  [Physical.INT32]: 4,
  [Physical.INT64]: 8,
  [Physical.INT96]: 12,
  [Physical.FLOAT]: 4,
  [Physical.DOUBLE]: 8,
};

/** Decodes exactly `n` PLAIN values of `physical` filling `buf[pos, end)` (no trailing bytes). */
export function decodePlain(physical: Physical, typeLength: number, buf: Uint8Array, pos: number, end: number, n: number): Phys {
  const phys = decodePlainPrefix(physical, typeLength, buf, pos, end, n);
  const used =
    phys.t === 'bytes'
      ? (n === 0 ? pos : phys.end[n - 1]!)
      : pos + (physical === Physical.BOOLEAN ? (n + 7) >> 3 : n * physicalSize(physical, typeLength));
  if (used !== end) throw new DecodeError(`PLAIN ${n} values use ${used - pos} of the page's ${end - pos} value bytes`);
  return phys;
}

function decodePlainPrefix(physical: Physical, typeLength: number, buf: Uint8Array, pos: number, end: number, n: number): Phys {
  const need = (bytes: number): void => {
    if (bytes > end - pos) throw new DecodeError(`PLAIN ${n} values need ${bytes} bytes, page has ${end - pos}`);
  };
  switch (physical) {
    case Physical.INT32:
      need(n * 4);
      return i32Phys(buf, pos, n);
    case Physical.INT64:
      need(n * 8);
      return i64Phys(buf, pos, n);
    case Physical.FLOAT:
      need(n * 4);
      return { t: 'f32', n, v: typed(buf, pos, n, 4, (b, o, c) => new Float32Array(b, o, c)) };
    case Physical.DOUBLE:
      need(n * 8);
      return { t: 'f64', n, v: typed(buf, pos, n, 8, (b, o, c) => new Float64Array(b, o, c)) };
    case Physical.INT96:
      need(n * 12);
      return { t: 'int96', n, buf, pos };
    case Physical.FIXED_LEN_BYTE_ARRAY:
      if (!(typeLength > 0)) throw new DecodeError(`FIXED_LEN_BYTE_ARRAY without a positive type_length`);
      need(n * typeLength);
      return { t: 'fixed', n, buf, pos, width: typeLength };
    case Physical.BOOLEAN: {
      need((n + 7) >> 3);
      const v = new Uint8Array(n);
      for (let i = 0; i < n; i++) v[i] = (buf[pos + (i >> 3)]! >> (i & 7)) & 1;
      return { t: 'bool', n, v };
    }
    case Physical.BYTE_ARRAY: {
      // Every value has a 4-byte length: a count the bytes cannot hold is damage, reported before
      // the offset arrays are allocated (a damaged count would size them).
      need(n * 4);
      const start = new Int32Array(n);
      const stop = new Int32Array(n);
      let p = pos;
      for (let i = 0; i < n; i++) {
        if (p + 4 > end) throw new DecodeError(`PLAIN byte array ${i} of ${n}: length beyond the page`);
        const len = buf[p]! | (buf[p + 1]! << 8) | (buf[p + 2]! << 16) | (buf[p + 3]! << 24);
        p += 4;
        if (len < 0 || len > end - p) throw new DecodeError(`PLAIN byte array ${i} of ${n}: length ${len} beyond the page`);
        start[i] = p;
        p += len;
        stop[i] = p;
      }
      return { t: 'bytes', n, buf, start, end: stop };
    }
    default:
      throw new DecodeError(`unknown physical type ${physical}`);
  }
}

/**
 * The most PLAIN values of `physical` that `bytes` bytes can hold (a BYTE_ARRAY value takes at
 * least its 4-byte length, a BOOLEAN one bit): the bound a dictionary page's declared size must
 * meet before anything is allocated for it.
 */
export function plainCapacity(physical: Physical, typeLength: number, bytes: number): number {
  if (physical === Physical.BOOLEAN) return bytes * 8;
  if (physical === Physical.BYTE_ARRAY) return Math.floor(bytes / 4);
  const w = physicalSize(physical, typeLength);
  return w > 0 ? Math.floor(bytes / w) : 0;
}

/** SIZE of a fixed-width physical type in bytes (0 for variable or bit-packed). */
export function physicalSize(physical: Physical, typeLength: number): number {
  return physical === Physical.FIXED_LEN_BYTE_ARRAY ? typeLength : (SIZE[physical] ?? 0);
}
