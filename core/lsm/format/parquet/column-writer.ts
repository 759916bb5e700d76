// Writes one column chunk: data pages v1 (definition levels, then values), preceded by a
// dictionary page when the column is dictionary-encoded.
//
// Layout of a data page body (before compression):
//   [i32 length][RLE/bit-packed definition levels]   only for OPTIONAL columns (max level 1)
//   PLAIN values of the non-null rows, or [u8 bit width][RLE/bit-packed dictionary indices]
// Every page header carries the CRC32 of the compressed body. Strings are dictionary-encoded
// (PLAIN_DICTIONARY, as parquet-mr's v1 writer does) until the dictionary passes 4 MiB, after which
// later pages are PLAIN; a first page that the dictionary does not make smaller drops the
// dictionary for the whole chunk. Other types are PLAIN.
//
// Invariants: pages split at `pageRows` rows; the returned pieces concatenate to exactly
// `compressedSize` bytes; offsets in the result are relative to the chunk's first byte.

import { crc32 } from 'node:zlib';
import { invalidArgument } from '../../errors.ts';
import { ByteWriter } from './byte-writer.ts';
import { compress } from './compression.ts';
import { encodePlain, encodePlainTyped, type ColumnValues, type ValueCodec } from './plain-encode.ts';
import { bitWidthOf, encodeConstant, encodeHybrid } from './rle.ts';
import { Codec, Enc, PageType, type LeafSchema } from './schema.ts';
import { ColumnStats } from './stats.ts';
import { ThriftWriter } from './thrift-compact.ts';

const DICT_LIMIT = 4 << 20;

export interface EncodingStat {
  pageType: PageType;
  encoding: Enc;
  count: number;
}

export interface ChunkResult {
  pieces: Uint8Array[];
  compressedSize: number;
  uncompressedSize: number;
  /** Relative to the chunk start: the dictionary page (when present) is always at 0. */
  dataPageOffset: number;
  hasDictionary: boolean;
  numValues: number;
  encodings: Enc[];
  encodingStats: EncodingStat[];
  stats: ColumnStats;
}

class StringDictionary {
  readonly ids = new Map<string, number>();
  readonly plain = new ByteWriter(1 << 16);
  readonly sizes: number[] = [];
}

export function writeColumnChunk(
  leaf: LeafSchema,
  codec: ValueCodec,
  column: ColumnValues,
  from: number,
  to: number,
  compression: Codec,
  pageRows: number,
): ChunkResult {
  // A typed column (plain-encode.ts TypedValues): nulls from its bitmap, values by encodePlainTyped.
  const typed = Array.isArray(column) ? undefined : column;
  const values = typed ? [] : (column as unknown[]);
  const nullBits = typed?.nulls;
  if (typed && codec.kind === 'str') throw new Error(`assertion failed: Parquet column '${leaf.name}': strings come as a JS array`);
  const stats = new ColumnStats();
  const pieces: Uint8Array[] = [];
  const pageStats = new Map<string, EncodingStat>();
  let compressedSize = 0;
  let uncompressedSize = 0;
  const body = new ByteWriter(1 << 16);
  const levels = new Uint8Array(pageRows);
  let dict: StringDictionary | undefined = codec.kind === 'str' ? new StringDictionary() : undefined;
  let dictAllowed = dict !== undefined;
  const indices = dict ? new Int32Array(pageRows) : undefined;

  const dictPieces: Uint8Array[] = [];
  const emit = (into: Uint8Array[], type: PageType, encoding: Enc, page: Uint8Array, header: (t: ThriftWriter) => void): void => {
    const packed = compress(compression, page);
    const t = new ThriftWriter();
    t.i32(1, type);
    t.i32(2, page.length);
    t.i32(3, packed.length);
    t.i32(4, crc32(packed) | 0);
    header(t);
    t.structEnd();
    const head = t.out.toBytes();
    into.push(head, packed);
    compressedSize += head.length + packed.length;
    uncompressedSize += head.length + page.length;
    const key = `${type}/${encoding}`;
    const s = pageStats.get(key);
    if (s) s.count++;
    else pageStats.set(key, { pageType: type, encoding, count: 1 });
  };

  for (let a = from; a < to; a += pageRows) {
    const b = Math.min(to, a + pageRows);
    const rows = b - a;
    body.reset();
    if (typed) {
      let nulls = 0;
      if (nullBits !== undefined) {
        for (let i = a; i < b; i++) {
          const isNull = (nullBits[i >>> 3]! & (1 << (i & 7))) !== 0;
          if (isNull && leaf.required) throw invalidArgument(`Parquet column '${leaf.name}' row ${i}: null in a NOT NULL column`);
          levels[i - a] = isNull ? 0 : 1;
          if (isNull) nulls++;
        }
      }
      if (!leaf.required) {
        stats.nulls += nulls;
        writeDefinitionLevels(body, levels, rows, nulls);
      }
    } else if (!leaf.required) {
      let nulls = 0;
      for (let i = a; i < b; i++) {
        const v = values[i];
        const defined = v !== null && v !== undefined;
        levels[i - a] = defined ? 1 : 0;
        if (!defined) nulls++;
      }
      stats.nulls += nulls;
      writeDefinitionLevels(body, levels, rows, nulls);
    } else {
      for (let i = a; i < b; i++) {
        if (values[i] === null || values[i] === undefined) {
          throw invalidArgument(`Parquet column '${leaf.name}' row ${i}: null in a NOT NULL column`);
        }
      }
    }
    let encoding = Enc.PLAIN;
    if (dict && dictAllowed) {
      const levelBytes = body.length;
      const m = dictionaryIndices(dict, codec, values, a, b, indices!, stats);
      const w = bitWidthOf(dict.ids.size - 1);
      body.u8(w);
      encodeHybrid(body, indices!, m, w);
      encoding = Enc.PLAIN_DICTIONARY;
      if (a === from) {
        let plainSize = 0;
        for (let k = 0; k < m; k++) plainSize += 4 + dict.sizes[indices![k]!]!;
        if (dict.plain.length + body.length - levelBytes >= plainSize) {
          // The dictionary does not pay for itself: PLAIN for the whole chunk.
          dict = undefined;
          dictAllowed = false;
          body.length = levelBytes;
          encoding = Enc.PLAIN;
          encodePlain(codec, values, a, b, body, stats);
        }
      }
      if (dict && dict.plain.length > DICT_LIMIT) dictAllowed = false;
    } else if (typed) {
      encodePlainTyped(codec, typed, a, b, body, stats);
    } else {
      encodePlain(codec, values, a, b, body, stats);
    }
    emit(pieces, PageType.DATA_PAGE, encoding, body.view0(), (t) => {
      t.structBegin(5);
      t.i32(1, rows);
      t.i32(2, encoding);
      t.i32(3, Enc.RLE);
      t.i32(4, Enc.RLE);
      t.structEnd();
    });
  }

  let dataPageOffset = 0;
  if (dict) {
    const d = dict;
    emit(dictPieces, PageType.DICTIONARY_PAGE, Enc.PLAIN_DICTIONARY, d.plain.view0(), (t) => {
      t.structBegin(7);
      t.i32(1, d.ids.size);
      t.i32(2, Enc.PLAIN_DICTIONARY);
      t.structEnd();
    });
    dataPageOffset = dictPieces[0]!.length + dictPieces[1]!.length;
  }

  const encodings = new Set<Enc>([Enc.RLE]);
  for (const s of pageStats.values()) encodings.add(s.encoding);
  return {
    pieces: dictPieces.length > 0 ? [...dictPieces, ...pieces] : pieces,
    compressedSize,
    uncompressedSize,
    dataPageOffset,
    hasDictionary: dict !== undefined,
    numValues: to - from,
    encodings: [...encodings].sort((x, y) => x - y),
    encodingStats: [...pageStats.values()],
    stats,
  };
}

/** Maps the non-null strings of `values[a, b)` to dictionary ids, growing the dictionary. */
function dictionaryIndices(
  dict: StringDictionary,
  codec: ValueCodec,
  values: unknown[],
  a: number,
  b: number,
  out: Int32Array,
  stats: ColumnStats,
): number {
  const ids = dict.ids;
  let m = 0;
  let prev: unknown = undefined;
  let prevK = 0;
  for (let i = a; i < b; i++) {
    const v = values[i];
    if (v === null || v === undefined) continue;
    // Sorted runs repeat key prefixes: a value equal to the previous one skips the hash lookup.
    if (v === prev) {
      out[m++] = prevK;
      continue;
    }
    let k = ids.get(v as string);
    if (k === undefined) {
      if (typeof v !== 'string') {
        throw invalidArgument(`Parquet column '${codec.column}' row ${i}: expected a string, got ${typeof v}`);
      }
      k = ids.size;
      ids.set(v, k);
      const w = dict.plain;
      w.ensure(4);
      const lp = w.length;
      w.length += 4;
      const len = w.utf8(v);
      w.view.setInt32(lp, len, true);
      dict.sizes.push(len);
      stats.addString(v);
    }
    prev = v;
    prevK = k;
    out[m++] = k;
  }
  return m;
}

/** A page's definition levels of a flat optional column: length-prefixed RLE/bit-packed hybrid, bit width 1. */
function writeDefinitionLevels(body: ByteWriter, levels: ArrayLike<number>, rows: number, nulls: number): void {
  body.i32(0);
  const start = body.length;
  if (nulls === 0) encodeConstant(body, 1, rows, 1);
  else encodeHybrid(body, levels, rows, 1);
  body.view.setInt32(start - 4, body.length - start, true);
}
