// Reads one column chunk: walks its pages (dictionary, data v1, data v2; index pages skipped),
// verifies page CRCs when present, decompresses, decodes levels and values, and writes the
// in-memory values into `out[base, base + rows)`.
//
// Invariants: pages never extend past the chunk; the data pages' value counts add up to exactly
// `rows`; a page's definition levels agree with its null count (v2) and its values section holds
// exactly the non-null values; dictionary indices stay inside the dictionary. Any violation throws
// `DecodeError` (→ Corruption in reader.ts).

import { crc32 } from 'node:zlib';
import { notSupported } from '../../errors.ts';
import { decompress } from './compression.ts';
import { decodeByteStreamSplit, decodeDeltaBinaryPacked, decodeDeltaByteArray, decodeDeltaLengthByteArray } from './delta.ts';
import type { ChunkMeta } from './footer-read.ts';
import { DecodeError, decodePlain, i32Phys, i64Phys, physicalSize, plainCapacity, type Phys } from './plain-decode.ts';
import { decodeHybrid } from './rle.ts';
import { Enc, PageType, Physical, type LeafSchema } from './schema.ts';
import { readStruct, type TStruct, type TValue } from './thrift-compact.ts';
import type { Materialize } from './values.ts';

export function num(s: TStruct, id: number, what: string): number {
  const v = s[id];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new DecodeError(`page header: bad ${what}`);
  return v;
}

export function sub(v: TValue | undefined, what: string): TStruct {
  if (typeof v !== 'object' || v === null || v instanceof Uint8Array || Array.isArray(v) || v instanceof Map) {
    throw new DecodeError(`page header: missing ${what}`);
  }
  return v as TStruct;
}

export function i32le(b: Uint8Array, p: number): number {
  return b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24);
}

/** The page whose header starts at `pos` (before `end`): its header, sizes and body, CRC checked. */
export function readPage(bytes: Uint8Array, pos: number, end: number): { h: TStruct; type: number; usize: number; body: Uint8Array; next: number } {
  const { value: h, end: bodyAt } = readStruct(bytes, pos, end);
  const type = num(h, 1, 'type');
  const usize = num(h, 2, 'uncompressed_page_size');
  const csize = num(h, 3, 'compressed_page_size');
  if (csize < 0 || usize < 0 || bodyAt + csize > end) throw new DecodeError(`page at ${pos}: ${csize} bytes run past the column chunk`);
  const body = bytes.subarray(bodyAt, bodyAt + csize);
  if (h[4] !== undefined && (crc32(body) | 0) !== h[4]) throw new DecodeError(`page at ${pos}: CRC mismatch`);
  return { h, type, usize, body, next: bodyAt + csize };
}

/**
 * The values the data pages of `chunk` declare, from their headers alone (no body is read), for a
 * reader that must check a footer count against them before the count sizes anything. Stops
 * with DecodeError once the sum passes `limit`.
 */
export function declaredPageValues(bytes: Uint8Array, chunk: ChunkMeta, limit: number): number {
  const end = chunk.start + chunk.totalCompressed;
  let pos = chunk.start;
  let sum = 0;
  while (pos < end) {
    const { value: h, end: bodyAt } = readStruct(bytes, pos, end);
    const type = num(h, 1, 'type');
    const csize = num(h, 3, 'compressed_page_size');
    if (csize < 0 || bodyAt + csize > end) throw new DecodeError(`page at ${pos}: ${csize} bytes run past the column chunk`);
    if (type === PageType.DATA_PAGE || type === PageType.DATA_PAGE_V2) {
      const n = num(sub(h[type === PageType.DATA_PAGE_V2 ? 8 : 5], 'data page header'), 1, 'num_values');
      if (n <= 0 || n > limit - sum) throw new DecodeError(`data page at ${pos} declares ${n} values where ${limit - sum} remain`);
      sum += n;
    }
    pos = bodyAt + csize;
  }
  return sum;
}

/**
 * A column decoded straight into a typed array (reader.ts `typed`): values of non-null rows, 0 in
 * null rows, and `nulls` (bit i set when row i is null) once some row is null.
 */
export interface TypedColumn {
  values: Int32Array | BigInt64Array | Uint8Array;
  nulls: Uint8Array | undefined;
}

/** Copies the first `n` values of a page's (or dictionary's) physical values into `to[at…]`. */
function copyPhys(phys: Phys, to: TypedColumn['values'], at: number, n: number): void {
  if (phys.t === 'i32' && to instanceof Int32Array) to.set(phys.v.subarray(0, n), at);
  else if (phys.t === 'i64' && to instanceof BigInt64Array) to.set(phys.v.subarray(0, n), at);
  else if (phys.t === 'bool' && to instanceof Uint8Array) to.set(phys.v.subarray(0, n), at);
  else throw new DecodeError(`${phys.t} values in a column decoded as ${to.constructor.name}`);
}

/**
 * Decodes the chunk's values into `out[base, base + rows)` as in-memory values (`materialize`), or,
 * with `typed`, into `typed.values[base…]` as they are (INT32 → Int32Array, INT64 → BigInt64Array,
 * BOOLEAN → bytes), skipping one JS value per row.
 */
export function readColumnChunk(
  bytes: Uint8Array,
  chunk: ChunkMeta,
  leaf: LeafSchema,
  materialize: Materialize,
  out: unknown[],
  base: number,
  rows: number,
  typed?: TypedColumn,
): void {
  const end = chunk.start + chunk.totalCompressed;
  let pos = chunk.start;
  let done = 0;
  let dict: unknown[] | undefined;
  let typedDict: TypedColumn['values'] | undefined;
  const typeLength = leaf.typeLength ?? 0;

  const values = (enc: number, data: Uint8Array, p: number, stop: number, n: number): Phys => {
    switch (enc) {
      case Enc.PLAIN:
        return decodePlain(leaf.physical, typeLength, data, p, stop, n);
      case Enc.PLAIN_DICTIONARY:
      case Enc.RLE_DICTIONARY: {
        if (!dict && !typedDict) throw new DecodeError('dictionary-encoded page without a dictionary page');
        const idx = new Int32Array(n);
        if (n > 0) {
          if (p >= stop) throw new DecodeError('dictionary page data is empty');
          decodeHybrid(data, p + 1, stop, data[p]!, n, idx);
        }
        return { t: 'dict', n, idx };
      }
      case Enc.RLE: {
        if (leaf.physical !== Physical.BOOLEAN) throw new DecodeError('RLE values on a non-boolean column');
        if (p + 4 > stop) throw new DecodeError('RLE booleans: length beyond the page');
        const len = i32le(data, p);
        if (len < 0 || p + 4 + len > stop) throw new DecodeError('RLE booleans: length beyond the page');
        const v = new Uint8Array(n);
        decodeHybrid(data, p + 4, p + 4 + len, 1, n, v);
        return { t: 'bool', n, v };
      }
      case Enc.DELTA_BINARY_PACKED: {
        if (leaf.physical !== Physical.INT32 && leaf.physical !== Physical.INT64) throw new DecodeError('DELTA_BINARY_PACKED on a non-integer column');
        const wide = leaf.physical === Physical.INT64;
        const r = decodeDeltaBinaryPacked(data, p, stop, n, wide);
        const b = new Uint8Array(r.values.buffer, r.values.byteOffset, r.values.byteLength);
        return wide ? i64Phys(b, 0, n) : i32Phys(b, 0, n);
      }
      case Enc.DELTA_LENGTH_BYTE_ARRAY:
        return decodeDeltaLengthByteArray(data, p, stop, n);
      case Enc.DELTA_BYTE_ARRAY:
        return decodeDeltaByteArray(data, p, stop, n);
      case Enc.BYTE_STREAM_SPLIT: {
        const w = physicalSize(leaf.physical, typeLength);
        const joined = decodeByteStreamSplit(leaf.physical, w, data, p, stop, n);
        return decodePlain(leaf.physical, typeLength, joined, 0, joined.length, n);
      }
      default:
        throw notSupported(`Parquet: value encoding ${enc} of column '${leaf.name}' is not supported`);
    }
  };

  /** `emit` for a typed column: the values as they are, nulls as bits. */
  const emitTyped = (t: TypedColumn, phys: Phys, defs: Uint8Array | undefined, n: number, nonNull: number): void => {
    const at = base + done;
    const to = t.values;
    if (phys.t === 'dict') {
      const d = typedDict!;
      const idx = phys.idx;
      const size = d.length;
      for (let k = 0; k < nonNull; k++) {
        const j = idx[k]!;
        if (!(j >= 0 && j < size)) throw new DecodeError(`dictionary index ${j} outside a dictionary of ${size}`);
        to[at + k] = d[j]!;
      }
    } else copyPhys(phys, to, at, nonNull);
    if (defs && nonNull < n) {
      const zero = to instanceof BigInt64Array ? 0n : 0;
      const nulls = (t.nulls ??= new Uint8Array((to.length + 7) >>> 3));
      // Spread the non-null values over their rows, last first (in place: j ≤ at + i throughout).
      let j = at + nonNull - 1;
      for (let i = n - 1; i >= 0; i--) {
        if (defs[i]) to[at + i] = to[j--]!;
        else {
          to[at + i] = zero;
          nulls[(at + i) >>> 3]! |= 1 << ((at + i) & 7);
        }
      }
    }
    done += n;
  };

  /** Decodes `n` values whose levels are `defs` (undefined: all defined) into out[base + done…]. */
  const emit = (phys: Phys, defs: Uint8Array | undefined, n: number, nonNull: number): void => {
    if (typed) return emitTyped(typed, phys, defs, n, nonNull);
    const at = base + done;
    if (phys.t === 'dict') {
      const d = dict!;
      const idx = phys.idx;
      for (let k = 0; k < nonNull; k++) {
        const v = d[idx[k]!];
        if (v === undefined) throw new DecodeError(`dictionary index ${idx[k]} outside a dictionary of ${d.length}`);
        out[at + k] = v;
      }
    } else materialize(phys, out, at);
    if (defs && nonNull < n) {
      let j = at + nonNull - 1;
      for (let i = n - 1; i >= 0; i--) out[at + i] = defs[i] ? out[j--] : null;
    }
    done += n;
  };

  const levels = (data: Uint8Array, p: number, stop: number, n: number): { defs: Uint8Array; nonNull: number } => {
    const defs = new Uint8Array(n);
    decodeHybrid(data, p, stop, 1, n, defs);
    let nonNull = 0;
    for (let i = 0; i < n; i++) nonNull += defs[i]!;
    return { defs, nonNull };
  };

  while (pos < end) {
    const { h, type, usize, body, next } = readPage(bytes, pos, end);
    pos = next;
    if (type === PageType.DICTIONARY_PAGE) {
      if (dict || typedDict) throw new DecodeError('second dictionary page in a column chunk');
      const dh = sub(h[7], 'dictionary_page_header');
      const n = num(dh, 1, 'dictionary size');
      // PLAIN values fill the page (decompress checks usize): a larger count is damage, caught
      // before it sizes the dictionary.
      if (n < 0 || n > plainCapacity(leaf.physical, typeLength, usize)) throw new DecodeError(`dictionary of ${n} values in ${usize} bytes`);
      const data = decompress(chunk.codec, body, usize);
      if (typed) {
        typedDict = new (typed.values.constructor as new (n: number) => TypedColumn['values'])(n);
        if (n > 0) copyPhys(decodePlain(leaf.physical, typeLength, data, 0, data.length, n), typedDict, 0, n);
      } else {
        dict = new Array(n);
        if (n > 0) materialize(decodePlain(leaf.physical, typeLength, data, 0, data.length, n), dict, 0);
      }
    } else if (type === PageType.DATA_PAGE || type === PageType.DATA_PAGE_V2) {
      const v2 = type === PageType.DATA_PAGE_V2;
      const dh = sub(h[v2 ? 8 : 5], 'data page header');
      const n = num(dh, 1, 'num_values');
      if (n <= 0 || n > rows - done) throw new DecodeError(`data page of ${n} values where ${rows - done} remain`);
      let defs: Uint8Array | undefined;
      let nonNull = n;
      let data: Uint8Array;
      let p = 0;
      if (!v2) {
        data = decompress(chunk.codec, body, usize);
        if (!leaf.required) {
          if (num(dh, 3, 'definition_level_encoding') !== Enc.RLE) throw notSupported(`Parquet: definition levels of '${leaf.name}' are not RLE`);
          if (data.length < 4) throw new DecodeError('definition levels beyond the page');
          const len = i32le(data, 0);
          if (len < 0 || 4 + len > data.length) throw new DecodeError('definition levels beyond the page');
          ({ defs, nonNull } = levels(data, 4, 4 + len, n));
          p = 4 + len;
        }
      } else {
        const nulls = num(dh, 2, 'num_nulls');
        const dl = num(dh, 5, 'definition_levels_byte_length');
        const rl = num(dh, 6, 'repetition_levels_byte_length');
        if (rl !== 0) throw new DecodeError('repetition levels in a flat column');
        if (dl < 0 || dl > body.length || dl > usize) throw new DecodeError('definition levels beyond the page');
        if (!leaf.required) ({ defs, nonNull } = levels(body, 0, dl, n));
        if (n - nonNull !== nulls) throw new DecodeError(`page says ${nulls} nulls, levels say ${n - nonNull}`);
        const rest = body.subarray(dl);
        data = dh[7] === false ? rest : decompress(chunk.codec, rest, usize - dl);
        if (dh[7] === false && rest.length !== usize - dl) throw new DecodeError('uncompressed v2 page size disagrees with its header');
      }
      emit(values(num(dh, v2 ? 4 : 2, 'encoding'), data, p, data.length, nonNull), defs, n, nonNull);
    }
    // INDEX_PAGE and unknown page types are skipped.
  }
  if (done !== rows) throw new DecodeError(`column chunk holds ${done} values, row group has ${rows}`);
}
