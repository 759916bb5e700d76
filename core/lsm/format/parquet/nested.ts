// ARRAY and MAP columns in Parquet: the layout parquet-mr writes for Java Paimon
// (ParquetSchemaConverter → ConversionPatterns), Dremel shredding into repetition/definition
// levels for writing, and record assembly for reading.
//
//   ARRAY<T>:  <opt|req> group x (LIST) { repeated group list { <opt|req> T element } }
//   MAP<K,V>:  <opt|req> group m (MAP)  { repeated group key_value { required K key; <opt|req> V value } }
//
// Levels: every OPTIONAL node on the path adds 1 to the definition level, every REPEATED node adds
// 1 to the definition and the repetition level. Per leaf entry: rep = 0 starts a new row; def <
// maxDef means "null or empty at the node whose level is def". Values are stored only for entries
// with def = maxDef.
//
// Writing: data pages v1, levels RLE/bit-packed with a 4-byte length prefix (repetition levels
// first), values PLAIN; pages split at row boundaries. Reading: data pages v1 and v2, PLAIN and
// dictionary values (the encodings parquet-mr writes), 3-level lists and key_value maps; the
// legacy 2-level list layout is NotSupported.
//
// Invariants: a leaf's entries hold exactly `rows` entries with rep = 0 per row group; the leaves
// of one column are consumed in lockstep by `assemble` and must all end together (else Corruption).

import { crc32 } from 'node:zlib';
import { notSupported } from '../../errors.ts';
import { isNestedType, withNullable, type DataType } from '../../types.ts';
import { ByteWriter } from './byte-writer.ts';
import type { ChunkResult, EncodingStat } from './column-writer.ts';
import { declaredPageValues, i32le, num, readPage, sub } from './chunk-reader.ts';
import { compress, decompress } from './compression.ts';
import type { ChunkMeta } from './footer-read.ts';
import { DecodeError, decodePlain, plainCapacity } from './plain-decode.ts';
import { encodePlain, valueCodecFor } from './plain-encode.ts';
import { bitWidthOf, decodeHybrid, encodeHybrid } from './rle.ts';
import { Codec, Enc, PageType, Physical, leafFor, type LeafSchema } from './schema.ts';
import { ColumnStats } from './stats.ts';
import { ThriftWriter, type TStruct } from './thrift-compact.ts';
import { materializerFor } from './values.ts';

/** ConvertedType values of group annotations (parquet.thrift). */
export const CONVERTED_MAP = 1;
export const CONVERTED_LIST = 3;

export interface GroupElement {
  kind: 'group';
  name: string;
  /** 0 REQUIRED, 1 OPTIONAL, 2 REPEATED. */
  repetition: 0 | 1 | 2;
  numChildren: number;
  converted?: number;
  logical?: 'LIST' | 'MAP';
  fieldId?: number;
}
export interface LeafElement {
  kind: 'leaf';
  leaf: LeafSchema;
}
export type SchemaElement = GroupElement | LeafElement;

/** A nested column's schema elements (pre-order) and its leaves with paths and max levels. */
export interface NestedLayout {
  type: DataType;
  elements: SchemaElement[];
  leaves: LeafSchema[];
  leafTypes: DataType[];
}

export function nestedLayout(name: string, fieldId: number, type: DataType): NestedLayout {
  const out: NestedLayout = { type, elements: [], leaves: [], leafTypes: [] };
  const walk = (n: string, t: DataType, path: string[], def: number, rep: number, id: number | undefined, forceRequired: boolean): void => {
    const required = forceRequired || !t.nullable;
    const d = def + (required ? 0 : 1);
    const p = [...path, n];
    if (!isNestedType(t)) {
      const leaf = leafFor(n, id ?? 0, required ? withNullable(t, false) : t);
      if (id === undefined) delete leaf.fieldId;
      leaf.path = p;
      leaf.maxDef = d;
      leaf.maxRep = rep;
      out.elements.push({ kind: 'leaf', leaf });
      out.leaves.push(leaf);
      out.leafTypes.push(t);
      return;
    }
    const isList = t.root === 'ARRAY';
    out.elements.push({
      kind: 'group',
      name: n,
      repetition: required ? 0 : 1,
      numChildren: 1,
      converted: isList ? CONVERTED_LIST : CONVERTED_MAP,
      logical: isList ? 'LIST' : 'MAP',
      ...(id === undefined ? {} : { fieldId: id }),
    });
    const inner = isList ? 'list' : 'key_value';
    out.elements.push({ kind: 'group', name: inner, repetition: 2, numChildren: isList ? 1 : 2 });
    if (isList) walk('element', t.element!, [...p, inner], d + 1, rep + 1, undefined, false);
    else {
      if (isNestedType(t.key!)) throw notSupported(`Parquet: MAP key of type ${t.key!.root} in column '${name}' is not supported`);
      walk('key', t.key!, [...p, inner], d + 1, rep + 1, undefined, true);
      walk('value', t.value!, [...p, inner], d + 1, rep + 1, undefined, false);
    }
  };
  walk(name, type, [], 0, 0, fieldId, false);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Shredding.

interface LeafStream {
  reps: number[];
  defs: number[];
  /** Non-null values, in entry order. */
  values: unknown[];
  /** Entry index where each row starts. */
  rowStarts: number[];
}

function leafCount(t: DataType): number {
  if (t.root === 'ARRAY') return leafCount(t.element!);
  if (t.root === 'MAP') return 1 + leafCount(t.value!);
  return 1;
}

/** Shreds `values[from, to)` of a nested column into one stream per leaf. */
export function shred(t: DataType, values: unknown[], from: number, to: number): LeafStream[] {
  const n = leafCount(t);
  const streams: LeafStream[] = Array.from({ length: n }, () => ({ reps: [], defs: [], values: [], rowStarts: [] }));
  const nulls = (first: number, count: number, r: number, d: number): void => {
    for (let k = first; k < first + count; k++) {
      streams[k]!.reps.push(r);
      streams[k]!.defs.push(d);
    }
  };
  // `first`: index of the subtree's first leaf; `d`: def level of the parent; `R`: rep depth of the parent.
  const emit = (ty: DataType, v: unknown, first: number, r: number, d: number, R: number, required: boolean): void => {
    const count = leafCount(ty);
    if (!required && ty.nullable) {
      if (v === null || v === undefined) return nulls(first, count, r, d);
      d++;
    } else if (v === null || v === undefined) {
      throw notSupported(`Parquet: null in a NOT NULL nested position`);
    }
    if (ty.root === 'ARRAY') {
      const a = v as unknown[];
      if (a.length === 0) return nulls(first, count, r, d);
      for (let i = 0; i < a.length; i++) emit(ty.element!, a[i], first, i === 0 ? r : R + 1, d + 1, R + 1, false);
      return;
    }
    if (ty.root === 'MAP') {
      const m = v as Map<unknown, unknown>;
      if (m.size === 0) return nulls(first, count, r, d);
      let i = 0;
      for (const [k, x] of m) {
        const rr = i++ === 0 ? r : R + 1;
        emit(ty.key!, k, first, rr, d + 1, R + 1, true);
        emit(ty.value!, x, first + 1, rr, d + 1, R + 1, false);
      }
      return;
    }
    const s = streams[first]!;
    s.reps.push(r);
    s.defs.push(d);
    s.values.push(v);
  };
  for (let row = from; row < to; row++) {
    for (const s of streams) s.rowStarts.push(s.reps.length);
    emit(t, values[row], 0, 0, 0, 0, false);
  }
  return streams;
}

/** Writes the chunks of all leaves of a nested column for rows [from, to). */
export function writeNestedChunks(layout: NestedLayout, values: unknown[], from: number, to: number, compression: Codec, pageRows: number): ChunkResult[] {
  const streams = shred(layout.type, values, from, to);
  return layout.leaves.map((leaf, i) => writeLeafChunk(leaf, layout.leafTypes[i]!, streams[i]!, to - from, compression, pageRows));
}

function writeLeafChunk(leaf: LeafSchema, type: DataType, s: LeafStream, rows: number, compression: Codec, pageRows: number): ChunkResult {
  const codec = valueCodecFor(leaf.path!.join('.'), withNullable(type, false));
  const stats = new ColumnStats();
  const pieces: Uint8Array[] = [];
  let compressedSize = 0;
  let uncompressedSize = 0;
  let pages = 0;
  const body = new ByteWriter(1 << 14);
  const maxDef = leaf.maxDef!;
  const maxRep = leaf.maxRep!;
  let valueAt = 0;
  const total = s.reps.length;
  for (let r = 0; r < rows; r += pageRows) {
    const a = s.rowStarts[r]!;
    const b = r + pageRows < rows ? s.rowStarts[r + pageRows]! : total;
    const n = b - a;
    body.reset();
    const levels = (src: number[], max: number): void => {
      body.i32(0);
      const start = body.length;
      encodeHybrid(body, src.slice(a, b), n, bitWidthOf(max));
      body.view.setInt32(start - 4, body.length - start, true);
    };
    if (maxRep > 0) levels(s.reps, maxRep);
    if (maxDef > 0) levels(s.defs, maxDef);
    let nonNull = 0;
    for (let k = a; k < b; k++) if (s.defs[k] === maxDef) nonNull++;
    stats.nulls += n - nonNull;
    encodePlain(codec, s.values, valueAt, valueAt + nonNull, body, stats);
    valueAt += nonNull;
    const page = body.view0();
    const packed = compress(compression, page);
    const t = new ThriftWriter();
    t.i32(1, PageType.DATA_PAGE);
    t.i32(2, page.length);
    t.i32(3, packed.length);
    t.i32(4, crc32(packed) | 0);
    t.structBegin(5);
    t.i32(1, n);
    t.i32(2, Enc.PLAIN);
    t.i32(3, Enc.RLE);
    t.i32(4, Enc.RLE);
    t.structEnd();
    t.structEnd();
    const head = t.out.toBytes();
    pieces.push(head, packed);
    compressedSize += head.length + packed.length;
    uncompressedSize += head.length + page.length;
    pages++;
  }
  const encodingStats: EncodingStat[] = pages > 0 ? [{ pageType: PageType.DATA_PAGE, encoding: Enc.PLAIN, count: pages }] : [];
  return {
    pieces,
    compressedSize,
    uncompressedSize,
    dataPageOffset: 0,
    hasDictionary: false,
    numValues: total,
    encodings: [Enc.PLAIN, Enc.RLE],
    encodingStats,
    stats,
  };
}

// ---------------------------------------------------------------------------------------------
// Reading.

/** A node of the file's schema tree (footer-read.ts builds it). */
export interface SchemaNode {
  name: string;
  repetition: number;
  converted?: number;
  /** LogicalType union field id (2 MAP, 3 LIST), when present. */
  logicalId?: number;
  children?: SchemaNode[];
  /** Index into FileMeta.leaves for a leaf. */
  leafIndex?: number;
}

interface ReadStream {
  reps: Uint8Array;
  defs: Uint8Array;
  values: unknown[];
  n: number;
  /** Next entry to consume. */
  at: number;
  /** Next value to consume. */
  vat: number;
  maxDef: number;
}

/** Reads every entry (levels and non-null values) of one leaf's column chunk. */
function readLeafChunk(bytes: Uint8Array, chunk: ChunkMeta, leaf: LeafSchema, type: DataType, fail: (m: string) => never): ReadStream {
  const materialize = materializerFor(withNullable(type, false), false, leaf, fail);
  const total = chunk.numValues;
  // A nested leaf's entry count is checked against nothing else in the footer, and RLE levels
  // let a few bytes claim any count: it must agree with the page headers before it sizes the
  // level arrays (a flipped bit in it would otherwise allocate gigabytes).
  if (!(total >= 0)) throw new DecodeError(`nested column chunk: ${total} values`);
  const declared = declaredPageValues(bytes, chunk, total);
  if (declared !== total) throw new DecodeError(`nested column chunk: its data pages hold ${declared} values, its metadata says ${total}`);
  const reps = new Uint8Array(total);
  const defs = new Uint8Array(total);
  const values: unknown[] = [];
  const maxDef = leaf.maxDef ?? 0;
  const maxRep = leaf.maxRep ?? 0;
  const typeLength = leaf.typeLength ?? 0;
  let dict: unknown[] | undefined;
  let done = 0;
  const end = chunk.start + chunk.totalCompressed;
  let pos = chunk.start;
  const decodeValues = (enc: number, data: Uint8Array, p: number, stop: number, m: number): void => {
    if (enc === Enc.PLAIN) {
      if (m > 0) materialize(decodePlain(leaf.physical, typeLength, data, p, stop, m), values, values.length);
      return;
    }
    if (enc === Enc.PLAIN_DICTIONARY || enc === Enc.RLE_DICTIONARY) {
      if (!dict) throw new DecodeError('dictionary-encoded page without a dictionary page');
      if (m === 0) return;
      const idx = new Int32Array(m);
      if (p >= stop) throw new DecodeError('dictionary page data is empty');
      decodeHybrid(data, p + 1, stop, data[p]!, m, idx);
      for (let k = 0; k < m; k++) {
        const v = dict[idx[k]!];
        if (v === undefined) throw new DecodeError(`dictionary index ${idx[k]} outside a dictionary of ${dict.length}`);
        values.push(v);
      }
      return;
    }
    if (enc === Enc.RLE && leaf.physical === Physical.BOOLEAN) {
      if (p + 4 > stop) throw new DecodeError('RLE booleans: length beyond the page');
      const len = i32le(data, p);
      if (len < 0 || p + 4 + len > stop) throw new DecodeError('RLE booleans: length beyond the page');
      const v = new Uint8Array(m);
      decodeHybrid(data, p + 4, p + 4 + len, 1, m, v);
      for (let k = 0; k < m; k++) values.push(v[k] === 1);
      return;
    }
    throw notSupported(`Parquet: value encoding ${enc} of nested column '${leaf.path?.join('.')}' is not supported`);
  };
  while (pos < end) {
    const { h, type, usize, body, next } = readPage(bytes, pos, end);
    pos = next;
    if (type === PageType.DICTIONARY_PAGE) {
      const n = num(sub(h[7], 'dictionary_page_header'), 1, 'dictionary size');
      if (n < 0 || n > plainCapacity(leaf.physical, typeLength, usize)) throw new DecodeError(`dictionary of ${n} values in ${usize} bytes`);
      const data = decompress(chunk.codec, body, usize);
      dict = new Array(n);
      if (n > 0) materialize(decodePlain(leaf.physical, typeLength, data, 0, data.length, n), dict, 0);
      continue;
    }
    if (type !== PageType.DATA_PAGE && type !== PageType.DATA_PAGE_V2) continue;
    const v2 = type === PageType.DATA_PAGE_V2;
    const dh = h[v2 ? 8 : 5] as TStruct;
    if (!dh) throw new DecodeError('missing data page header');
    const n = num(dh, 1, 'num_values');
    if (n <= 0 || n > total - done) throw new DecodeError(`data page of ${n} values where ${total - done} remain`);
    let data: Uint8Array;
    let p = 0;
    if (!v2) {
      data = decompress(chunk.codec, body, usize);
      const section = (max: number, out: Uint8Array): void => {
        if (max === 0) return;
        if (p + 4 > data.length) throw new DecodeError('levels beyond the page');
        const len = i32le(data, p);
        if (len < 0 || p + 4 + len > data.length) throw new DecodeError('levels beyond the page');
        decodeHybrid(data, p + 4, p + 4 + len, bitWidthOf(max), n, out.subarray(done, done + n));
        p += 4 + len;
      };
      section(maxRep, reps);
      section(maxDef, defs);
    } else {
      const dl = num(dh, 5, 'definition_levels_byte_length');
      const rl = num(dh, 6, 'repetition_levels_byte_length');
      if (rl < 0 || dl < 0 || rl + dl > body.length) throw new DecodeError('levels beyond the page');
      if (maxRep > 0) decodeHybrid(body, 0, rl, bitWidthOf(maxRep), n, reps.subarray(done, done + n));
      if (maxDef > 0) decodeHybrid(body, rl, rl + dl, bitWidthOf(maxDef), n, defs.subarray(done, done + n));
      const rest = body.subarray(rl + dl);
      data = dh[7] === false ? rest : decompress(chunk.codec, rest, usize - rl - dl);
    }
    let m = 0;
    for (let k = done; k < done + n; k++) {
      if (defs[k]! > maxDef || reps[k]! > maxRep) throw new DecodeError(`level out of range in '${leaf.path?.join('.')}'`);
      if (defs[k] === maxDef) m++;
    }
    decodeValues(num(dh, v2 ? 4 : 2, 'encoding'), data, p, data.length, m);
    done += n;
  }
  if (done !== total) throw new DecodeError(`nested column chunk holds ${done} values, its metadata says ${total}`);
  if (values.length !== countDefined(defs, maxDef)) throw new DecodeError('value count disagrees with the definition levels');
  return { reps, defs, values, n: total, at: 0, vat: 0, maxDef };
}

function countDefined(defs: Uint8Array, maxDef: number): number {
  let c = 0;
  for (let i = 0; i < defs.length; i++) if (defs[i] === maxDef) c++;
  return c;
}

/** Checks that `node` has the shape of `t` and lists its leaves' (index, type) in order. */
function matchShape(node: SchemaNode, t: DataType, column: string, out: Array<{ leafIndex: number; type: DataType }>): void {
  const refuse = (why: string): never => {
    throw notSupported(`Parquet: column '${column}' ${why}`);
  };
  if (!isNestedType(t)) {
    if (node.children) refuse(`is a group in the file, ${t.root} requested`);
    out.push({ leafIndex: node.leafIndex!, type: t });
    return;
  }
  if (!node.children || node.children.length !== 1) refuse(`is not a ${t.root} group in the file`);
  const inner = node.children![0]!;
  if (inner.repetition !== 2 || !inner.children) refuse(`uses a list/map layout other than the 3-level one`);
  if (t.root === 'ARRAY') {
    if (inner.children!.length !== 1) refuse(`uses the legacy 2-level list layout, which is not supported`);
    matchShape(inner.children![0]!, t.element!, column, out);
    return;
  }
  if (inner.children!.length !== 2) refuse(`is not a key_value map group`);
  matchShape(inner.children![0]!, t.key!, column, out);
  matchShape(inner.children![1]!, t.value!, column, out);
}

/**
 * Reads a nested column `t` stored under `node` from every row group into `out[0, rows)`.
 * `leaves`/`groups` come from the footer.
 */
export function readNestedColumn(
  bytes: Uint8Array,
  node: SchemaNode,
  t: DataType,
  leaves: LeafSchema[],
  groups: Array<{ numRows: number; chunks: ChunkMeta[] }>,
  out: unknown[],
  fail: (m: string) => never,
): void {
  const shape: Array<{ leafIndex: number; type: DataType }> = [];
  matchShape(node, t, node.name, shape);
  let base = 0;
  for (const g of groups) {
    const streams = shape.map((s) => readLeafChunk(bytes, g.chunks[s.leafIndex]!, leaves[s.leafIndex]!, s.type, fail));
    for (let r = 0; r < g.numRows; r++) {
      if (streams.some((s) => s.at >= s.n || s.reps[s.at] !== 0)) throw new DecodeError(`nested column '${node.name}': row ${base + r} does not start at repetition level 0`);
      out[base + r] = assemble(t, streams, 0, 0, 0, false);
    }
    if (streams.some((s) => s.at !== s.n)) throw new DecodeError(`nested column '${node.name}': leaves hold entries beyond the row group's rows`);
    base += g.numRows;
  }
}

function skipAll(streams: ReadStream[], first: number, count: number): void {
  for (let k = first; k < first + count; k++) {
    const s = streams[k]!;
    if (s.at >= s.n) throw new DecodeError('nested column: leaves end early');
    if (s.defs[s.at] === s.maxDef) s.vat++;
    s.at++;
  }
}

/** Assembles one value of `t` whose leaves start at `streams[first]`; `d`/`R` = parent's def level / rep depth. */
function assemble(t: DataType, streams: ReadStream[], first: number, d: number, R: number, required: boolean): unknown {
  const count = leafCount(t);
  const head = streams[first]!;
  if (head.at >= head.n) throw new DecodeError('nested column: leaves end early');
  if (!required && t.nullable) {
    if (head.defs[head.at]! <= d) {
      skipAll(streams, first, count);
      return null;
    }
    d++;
  }
  if (t.root === 'ARRAY' || t.root === 'MAP') {
    if (head.defs[head.at]! <= d) {
      skipAll(streams, first, count);
      return t.root === 'ARRAY' ? [] : new Map();
    }
    const list: unknown[] = [];
    const map = new Map<unknown, unknown>();
    for (;;) {
      if (t.root === 'ARRAY') list.push(assemble(t.element!, streams, first, d + 1, R + 1, false));
      else {
        const k = assemble(t.key!, streams, first, d + 1, R + 1, true);
        map.set(k, assemble(t.value!, streams, first + 1, d + 1, R + 1, false));
      }
      if (head.at >= head.n || head.reps[head.at] !== R + 1) break;
    }
    return t.root === 'ARRAY' ? list : map;
  }
  // A leaf.
  if (head.defs[head.at] !== head.maxDef) throw new DecodeError('nested column: missing value for a NOT NULL position');
  head.at++;
  return head.values[head.vat++];
}
