// The RLE / bit-packed hybrid encoding (Parquet Encodings.md "RLE"), used for definition levels,
// dictionary indices and RLE booleans, plus the LSB-first bit packing it is built on.
//
//   hybrid  := run*          run := varint header, then
//     header & 1 == 0 → RLE run: (header >> 1) copies of one value stored in ceil(w/8) LE bytes
//     header & 1 == 1 → bit-packed run: (header >> 1) groups of 8 values, w bits each, LSB first
//
// Encoder invariants: runs of ≥ 8 equal values become RLE runs once the pending literals are
// padded to a multiple of 8 (borrowing from the run); everything else is bit-packed; the final
// group is zero-padded (readers know the count). Decoder: never reads past `end`; a run that ends
// before `count` values were produced throws `RleError`; a final bit-packed run cut short is
// accepted as long as it still covers the values asked for.

import { ByteWriter } from './byte-writer.ts';

export class RleError extends Error {}

/** Smallest bit width that holds `maxValue` (0 for 0). */
export function bitWidthOf(maxValue: number): number {
  return maxValue <= 0 ? 0 : 32 - Math.clz32(maxValue);
}

/** Appends `values[from, to)` (a multiple of 8 long, or padded with zeros) bit-packed LSB first. */
function packInto(out: ByteWriter, values: ArrayLike<number>, from: number, to: number, w: number): void {
  const count = to - from;
  const groups = Math.ceil(count / 8);
  out.uvarint((groups << 1) | 1);
  const nbytes = groups * w;
  out.ensure(nbytes + 8);
  const b = out.buf;
  let p = out.length;
  const padded = groups * 8;
  if (w <= 24) {
    let acc = 0;
    let bits = 0;
    for (let i = 0; i < padded; i++) {
      const v = from + i < to ? values[from + i]! : 0;
      acc |= v << bits;
      bits += w;
      while (bits >= 8) {
        b[p++] = acc & 0xff;
        acc >>>= 8;
        bits -= 8;
      }
    }
    if (bits > 0) b[p++] = acc & 0xff;
  } else {
    let acc = 0; // exact in a double: < 2^(w+7) ≤ 2^39
    let bits = 0;
    for (let i = 0; i < padded; i++) {
      const v = from + i < to ? values[from + i]! >>> 0 : 0;
      acc += v * 2 ** bits;
      bits += w;
      while (bits >= 8) {
        b[p++] = acc % 256;
        acc = Math.floor(acc / 256);
        bits -= 8;
      }
    }
  }
  out.length = p;
}

function rleRun(out: ByteWriter, value: number, count: number, w: number): void {
  out.uvarint(count * 2);
  const nb = (w + 7) >> 3;
  for (let k = 0; k < nb; k++) out.u8((value >>> (8 * k)) & 0xff);
}

/** Appends the hybrid encoding of `values[0, n)` with bit width `w` (no length prefix). */
export function encodeHybrid(out: ByteWriter, values: ArrayLike<number>, n: number, w: number): void {
  if (n === 0) return;
  let litStart = 0;
  let i = 0;
  while (i < n) {
    const v = values[i]!;
    let j = i + 1;
    while (j < n && values[j] === v) j++;
    const run = j - i;
    if (run >= 8) {
      const lit = i - litStart;
      const pad = (8 - (lit & 7)) & 7;
      if (run - pad >= 8) {
        if (lit + pad > 0) packInto(out, values, litStart, i + pad, w);
        rleRun(out, v, run - pad, w);
        litStart = j;
      }
    }
    i = j;
  }
  if (litStart < n) packInto(out, values, litStart, n, w);
}

/** Appends one RLE run of `count` copies of `value` (e.g. "all defined" levels). */
export function encodeConstant(out: ByteWriter, value: number, count: number, w: number): void {
  if (count > 0) rleRun(out, value, count, w);
}

/**
 * Decodes `count` values of width `w` from `buf[pos, end)` into `out[0, count)`. Returns the
 * offset after the last run consumed.
 */
export function decodeHybrid(
  buf: Uint8Array,
  pos: number,
  end: number,
  w: number,
  count: number,
  out: Int32Array | Uint8Array,
): number {
  if (w < 0 || w > 32) throw new RleError(`bit width ${w} out of range`);
  let n = 0;
  const nb = (w + 7) >> 3;
  while (n < count) {
    // varint header
    let h = 0;
    let mul = 1;
    for (let k = 0; ; k++) {
      if (pos >= end) throw new RleError(`run header beyond the data (${n} of ${count} values)`);
      if (k >= 5) throw new RleError('run header too long');
      const b = buf[pos++]!;
      h += (b & 0x7f) * mul;
      mul *= 128;
      if (b < 0x80) break;
    }
    if (h % 2 === 0) {
      const len = h / 2;
      if (len === 0) throw new RleError('empty RLE run');
      if (pos + nb > end) throw new RleError('RLE value beyond the data');
      let v = 0;
      for (let k = 0; k < nb; k++) v += buf[pos + k]! * 2 ** (8 * k);
      pos += nb;
      if (w < 32 && v >= 2 ** w) throw new RleError(`RLE value ${v} wider than ${w} bits`);
      const m = Math.min(len, count - n);
      out.fill(v | 0, n, n + m);
      n += m;
    } else {
      const groups = (h - 1) / 2;
      if (groups === 0) throw new RleError('empty bit-packed run');
      const values = groups * 8;
      const bytes = groups * w;
      const avail = Math.min(bytes, end - pos);
      const m = Math.min(values, count - n);
      if (Math.ceil((m * w) / 8) > avail) throw new RleError('bit-packed run beyond the data');
      unpack(buf, pos, w, m, out, n);
      n += m;
      pos += avail;
    }
  }
  return pos;
}

/** Unpacks `m` values of width `w` starting at byte `pos` (LSB first) into `out[at…]`. */
export function unpack(buf: Uint8Array, pos: number, w: number, m: number, out: Int32Array | Uint8Array, at: number): void {
  if (w === 0) {
    out.fill(0, at, at + m);
    return;
  }
  if (w === 1) {
    for (let i = 0; i < m; i++) out[at + i] = (buf[pos + (i >> 3)]! >> (i & 7)) & 1;
    return;
  }
  // Bytes past the run (or past the buffer, which read as undefined → 0) only feed bits above
  // the mask, so whole 32-bit windows can be read without bounds checks.
  if (w <= 25) {
    const mask = (1 << w) - 1;
    let bit = 0;
    for (let i = 0; i < m; i++) {
      const k = pos + (bit >> 3);
      const word = buf[k]! | (buf[k + 1]! << 8) | (buf[k + 2]! << 16) | (buf[k + 3]! << 24);
      out[at + i] = (word >>> (bit & 7)) & mask;
      bit += w;
    }
    return;
  }
  const last = Math.ceil((m * w) / 8) + pos; // first byte not needed
  const byteAt = (k: number): number => (k < last ? buf[k]! : 0);
  let bit = 0;
  for (let i = 0; i < m; i++) {
    let v = 0;
    for (let b = 0; b < w; b++) {
      const q = bit + b;
      if ((byteAt(pos + (q >> 3)) >> (q & 7)) & 1) v += 2 ** b;
    }
    out[at + i] = v | 0;
    bit += w;
  }
}
