// Decoders for the delta and split encodings parquet-mr's v2 writer (and other writers) use:
// DELTA_BINARY_PACKED (INT32/INT64), DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and
// BYTE_STREAM_SPLIT. The writer never produces them; they exist so foreign files read.
//
// Invariants: INT32 arithmetic wraps modulo 2^32 and INT64 modulo 2^64, as the encoders do;
// every header and miniblock is bounds-checked (DecodeError); results use the same `Phys`
// shapes PLAIN produces.

import { DecodeError, type Phys } from './plain-decode.ts';
import { unpack } from './rle.ts';
import { Physical } from './schema.ts';

class Cursor {
  constructor(
    readonly buf: Uint8Array,
    public pos: number,
    readonly end: number,
  ) {}
  byte(): number {
    if (this.pos >= this.end) throw new DecodeError('delta encoding: unexpected end of data');
    return this.buf[this.pos++]!;
  }
  uvarint(): bigint {
    let v = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const b = this.byte();
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
    throw new DecodeError('delta encoding: varint too long');
  }
  small(what: string, max = 1 << 30): number {
    const v = this.uvarint();
    if (v > BigInt(max)) throw new DecodeError(`delta encoding: ${what} ${v} out of range`);
    return Number(v);
  }
  zigzag(): bigint {
    const u = this.uvarint();
    return (u >> 1n) ^ -(u & 1n);
  }
}

/** Decodes DELTA_BINARY_PACKED; `wide` selects 64-bit values. Returns the values and end offset. */
export function decodeDeltaBinaryPacked(buf: Uint8Array, pos: number, end: number, n: number, wide: boolean): { values: BigInt64Array | Int32Array; end: number } {
  const c = new Cursor(buf, pos, end);
  const blockSize = c.small('block size');
  const miniblocks = c.small('miniblock count');
  const total = c.small('value count');
  let value = c.zigzag();
  if (blockSize === 0 || blockSize % 128 !== 0 || miniblocks === 0 || blockSize % miniblocks !== 0 || (blockSize / miniblocks) % 32 !== 0) {
    throw new DecodeError(`DELTA_BINARY_PACKED: bad block ${blockSize}/${miniblocks}`);
  }
  if (total !== n) throw new DecodeError(`DELTA_BINARY_PACKED holds ${total} values, page needs ${n}`);
  const perMini = blockSize / miniblocks;
  const out = wide ? new BigInt64Array(total) : new Int32Array(total);
  // A miniblock never yields more than the values asked for: the scratch is sized by those, not by
  // the header's block size (up to 2^30, which a damaged header would make a 4 GiB array).
  const scratch = new Int32Array(Math.min(perMini, total));
  if (total > 0) out[0] = (wide ? BigInt.asIntN(64, value) : Number(BigInt.asIntN(32, value))) as never;
  let got = 1;
  let cur32 = Number(BigInt.asIntN(32, value));
  while (got < total) {
    const minDelta = c.zigzag();
    const widthsAt = c.pos;
    c.pos += miniblocks;
    if (c.pos > end) throw new DecodeError('DELTA_BINARY_PACKED: miniblock widths beyond the data');
    for (let m = 0; m < miniblocks && got < total; m++) {
      const w = buf[widthsAt + m]!;
      if (w > (wide ? 64 : 32)) throw new DecodeError(`DELTA_BINARY_PACKED: bit width ${w}`);
      const bytes = (perMini * w) / 8;
      if (c.pos + bytes > end) throw new DecodeError('DELTA_BINARY_PACKED: miniblock beyond the data');
      const take = Math.min(perMini, total - got);
      if (!wide) {
        unpack(buf, c.pos, w, take, scratch, 0);
        const md = Number(BigInt.asIntN(32, minDelta));
        for (let i = 0; i < take; i++) {
          cur32 = (cur32 + md + scratch[i]!) | 0;
          out[got++] = cur32;
        }
      } else {
        const o = out as BigInt64Array;
        for (let i = 0; i < take; i++) {
          let d = 0n;
          const bit0 = i * w;
          for (let b = 0; b < w; b++) {
            const q = bit0 + b;
            if ((buf[c.pos + (q >> 3)]! >> (q & 7)) & 1) d |= 1n << BigInt(b);
          }
          value = BigInt.asIntN(64, value + minDelta + d);
          o[got++] = value;
        }
      }
      c.pos += bytes;
    }
  }
  return { values: out, end: c.pos };
}

function lengthsToBytes(buf: Uint8Array, lengths: ArrayLike<number>, pos: number, end: number, n: number): Phys {
  const start = new Int32Array(n);
  const stop = new Int32Array(n);
  let p = pos;
  for (let i = 0; i < n; i++) {
    const len = lengths[i]!;
    if (len < 0 || len > end - p) throw new DecodeError(`DELTA_LENGTH_BYTE_ARRAY: value ${i} length ${len} beyond the page`);
    start[i] = p;
    p += len;
    stop[i] = p;
  }
  return { t: 'bytes', n, buf, start, end: stop };
}

export function decodeDeltaLengthByteArray(buf: Uint8Array, pos: number, end: number, n: number): Phys {
  const { values, end: dataAt } = decodeDeltaBinaryPacked(buf, pos, end, n, false);
  return lengthsToBytes(buf, values as Int32Array, dataAt, end, n);
}

export function decodeDeltaByteArray(buf: Uint8Array, pos: number, end: number, n: number): Phys {
  const pre = decodeDeltaBinaryPacked(buf, pos, end, n, false);
  const suffixes = decodeDeltaLengthByteArray(buf, pre.end, end, n);
  if (suffixes.t !== 'bytes') throw new DecodeError('DELTA_BYTE_ARRAY: bad suffixes');
  const prefix = pre.values as Int32Array;
  // Each prefix is checked against the previous value's length here, before the sum sizes the
  // output: unchecked, damaged prefixes would allocate up to 1 GiB.
  let total = 0;
  let prevLen = 0;
  for (let i = 0; i < n; i++) {
    const pl = prefix[i]!;
    if (pl < 0 || pl > prevLen) throw new DecodeError(`DELTA_BYTE_ARRAY: prefix ${pl} longer than the previous value`);
    prevLen = pl + (suffixes.end[i]! - suffixes.start[i]!);
    total += prevLen;
  }
  if (total > 1 << 30) throw new DecodeError('DELTA_BYTE_ARRAY: values too large');
  const data = new Uint8Array(total);
  const start = new Int32Array(n);
  const stop = new Int32Array(n);
  let p = 0;
  for (let i = 0; i < n; i++) {
    const pl = prefix[i]!;
    start[i] = p;
    if (pl > 0) data.copyWithin(p, start[i - 1]!, start[i - 1]! + pl);
    p += pl;
    data.set(buf.subarray(suffixes.start[i]!, suffixes.end[i]!), p);
    p += suffixes.end[i]! - suffixes.start[i]!;
    stop[i] = p;
  }
  return { t: 'bytes', n, buf: data, start, end: stop };
}

/** BYTE_STREAM_SPLIT: byte k of value i sits at k * n + i. Returns the values re-interleaved. */
export function decodeByteStreamSplit(physical: Physical, width: number, buf: Uint8Array, pos: number, end: number, n: number): Uint8Array {
  if (!(width > 0)) throw new DecodeError(`BYTE_STREAM_SPLIT not valid for physical type ${physical}`);
  if (n * width > end - pos) throw new DecodeError('BYTE_STREAM_SPLIT: values beyond the page');
  const out = new Uint8Array(n * width);
  for (let k = 0; k < width; k++) {
    const base = pos + k * n;
    for (let i = 0; i < n; i++) out[i * width + k] = buf[base + i]!;
  }
  return out;
}
