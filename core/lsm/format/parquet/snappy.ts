// Snappy, raw block format (what Parquet's SNAPPY codec stores), written for speed in plain JS:
// snappyjs compresses at ~20–100 MB/s here because its hash multiplies in doubles; this one uses
// Math.imul and typed arrays throughout and reaches several hundred MB/s.
//
// Format: varint uncompressed length, then elements whose tag's low 2 bits say
//   00 literal (length-1 in the upper 6 bits, or in 1–4 following bytes when ≥ 60)
//   01 copy, length 4–11, 11-bit offset     10 copy, length 1–64, 16-bit offset
//   11 copy, length 1–64, 32-bit offset (never written: blocks are 64 KiB)
// Compressor invariants: input is cut into 64 KiB blocks, matches never cross a block, so every
// offset fits 16 bits. Decompressor invariants: never writes outside the declared length, never
// copies from before the output start, and the output must come out exactly the declared length;
// otherwise `SnappyError`.

export class SnappyError extends Error {}

const BLOCK = 1 << 16;
const HASH_BITS = 14;
const table = new Int32Array(1 << HASH_BITS);

const load32 = (b: Uint8Array, i: number): number => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
const hash = (x: number): number => Math.imul(x, 0x1e35a7bd) >>> (32 - HASH_BITS);

function literal(src: Uint8Array, from: number, len: number, out: Uint8Array, op: number): number {
  const n = len - 1;
  if (n < 60) out[op++] = n << 2;
  else if (n < 0x100) {
    out[op++] = 60 << 2;
    out[op++] = n;
  } else if (n < 0x10000) {
    out[op++] = 61 << 2;
    out[op++] = n & 0xff;
    out[op++] = n >>> 8;
  } else {
    out[op++] = 62 << 2;
    out[op++] = n & 0xff;
    out[op++] = (n >>> 8) & 0xff;
    out[op++] = n >>> 16;
  }
  if (len < 16) for (let i = 0; i < len; i++) out[op + i] = src[from + i]!;
  else out.set(src.subarray(from, from + len), op);
  return op + len;
}

function copy(offset: number, len: number, out: Uint8Array, op: number): number {
  while (len >= 68) {
    out[op++] = (63 << 2) | 2;
    out[op++] = offset & 0xff;
    out[op++] = offset >>> 8;
    len -= 64;
  }
  if (len > 64) {
    out[op++] = (59 << 2) | 2;
    out[op++] = offset & 0xff;
    out[op++] = offset >>> 8;
    len -= 60;
  }
  if (len < 12 && offset < 2048) {
    out[op++] = 1 | ((len - 4) << 2) | ((offset >>> 8) << 5);
    out[op++] = offset & 0xff;
  } else {
    out[op++] = 2 | ((len - 1) << 2);
    out[op++] = offset & 0xff;
    out[op++] = offset >>> 8;
  }
  return op;
}

function block(src: Uint8Array, start: number, end: number, out: Uint8Array, op: number): number {
  if (end - start < 16) return literal(src, start, end - start, out, op);
  table.fill(-1);
  const limit = end - 15; // keeps every 4-byte load and match probe inside the block
  let emitted = start;
  let ip = start + 1;
  outer: for (;;) {
    let skip = 32;
    let candidate: number;
    let next = ip;
    do {
      ip = next;
      next = ip + (skip++ >> 5);
      if (next > limit) break outer;
      const h = hash(load32(src, ip));
      candidate = table[h]!;
      table[h] = ip;
    } while (candidate < 0 || load32(src, candidate) !== load32(src, ip));
    op = literal(src, emitted, ip - emitted, out, op);
    for (;;) {
      const base = ip;
      let a = candidate + 4;
      ip += 4;
      while (ip < end && src[a] === src[ip]) {
        a++;
        ip++;
      }
      op = copy(base - candidate, ip - base, out, op);
      emitted = ip;
      if (ip >= limit) break outer;
      table[hash(load32(src, ip - 1))] = ip - 1;
      const h = hash(load32(src, ip));
      candidate = table[h]!;
      table[h] = ip;
      if (candidate < 0 || load32(src, candidate) !== load32(src, ip)) break;
    }
    ip++;
  }
  if (emitted < end) op = literal(src, emitted, end - emitted, out, op);
  return op;
}

export function snappyCompress(src: Uint8Array): Uint8Array {
  const n = src.length;
  const out = new Uint8Array(32 + n + Math.ceil(n / 6));
  let op = 0;
  let v = n;
  while (v >= 0x80) {
    out[op++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  out[op++] = v;
  for (let s = 0; s < n; s += BLOCK) op = block(src, s, Math.min(n, s + BLOCK), out, op);
  return out.slice(0, op);
}

/**
 * The most bytes `compressed` bytes of snappy elements can decode to: every element yields at most
 * 64 bytes per 3 it takes (a copy with a 2-byte offset; literals yield fewer bytes than they take).
 */
export function snappyMaxUncompressed(compressed: number): number {
  return Math.floor((Math.max(0, compressed) * 64) / 3);
}

/**
 * Decodes a raw snappy block whose only size is its own preamble (an Avro block): the preamble is
 * still checked against what the bytes can decode to before it sizes the output.
 */
export function snappyUncompressRaw(src: Uint8Array): Uint8Array {
  let len = 0;
  for (let ip = 0, shift = 0; ; shift += 7) {
    if (ip >= src.length || shift > 28) throw new SnappyError('bad length preamble');
    const b = src[ip++]!;
    len += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  return snappyUncompress(src, len);
}

export function snappyUncompress(src: Uint8Array, expected: number): Uint8Array {
  let ip = 0;
  let len = 0;
  for (let shift = 0; ; shift += 7) {
    if (ip >= src.length || shift > 28) throw new SnappyError('bad length preamble');
    const b = src[ip++]!;
    len += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  if (len !== expected) throw new SnappyError(`stream holds ${len} bytes, page header says ${expected}`);
  // No element yields more than 64 bytes per 3 it takes (a 2-byte-offset copy of 64): a longer
  // preamble is damage, refused before it sizes the output (Avro blocks pass the preamble itself
  // as `expected`, so nothing else bounds it there).
  if (len > snappyMaxUncompressed(src.length - ip)) throw new SnappyError(`preamble says ${len} bytes, ${src.length - ip} compressed bytes cannot hold them`);
  const out = new Uint8Array(len);
  let op = 0;
  const end = src.length;
  while (ip < end) {
    const tag = src[ip++]!;
    let n: number;
    let offset: number;
    switch (tag & 3) {
      case 0: {
        n = (tag >>> 2) + 1;
        if (n > 60) {
          const nb = n - 60;
          if (ip + nb > end) throw new SnappyError('literal length beyond the input');
          n = 1;
          for (let k = 0; k < nb; k++) n += src[ip + k]! * 2 ** (8 * k);
          ip += nb;
        }
        if (ip + n > end || op + n > len) throw new SnappyError('literal beyond the input or output');
        if (n < 16) for (let k = 0; k < n; k++) out[op + k] = src[ip + k]!;
        else out.set(src.subarray(ip, ip + n), op);
        ip += n;
        op += n;
        continue;
      }
      case 1:
        if (ip >= end) throw new SnappyError('copy beyond the input');
        n = ((tag >>> 2) & 7) + 4;
        offset = ((tag >>> 5) << 8) | src[ip++]!;
        break;
      case 2:
        if (ip + 2 > end) throw new SnappyError('copy beyond the input');
        n = (tag >>> 2) + 1;
        offset = src[ip]! | (src[ip + 1]! << 8);
        ip += 2;
        break;
      default:
        if (ip + 4 > end) throw new SnappyError('copy beyond the input');
        n = (tag >>> 2) + 1;
        offset = load32(src, ip) >>> 0;
        ip += 4;
    }
    if (offset === 0 || offset > op || op + n > len) throw new SnappyError('copy outside the output');
    // Short copies (the common case) by hand: a builtin call costs more than the bytes.
    if (n > 32 && offset >= n) out.copyWithin(op, op - offset, op - offset + n);
    else for (let k = 0, from = op - offset; k < n; k++) out[op + k] = out[from + k]!;
    op += n;
  }
  if (op !== len) throw new SnappyError(`stream decoded to ${op} of ${len} bytes`);
  return out;
}
