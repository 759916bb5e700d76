// writeParquet: a complete Parquet file from column-major in-memory values.
//
// File layout:  "PAR1" | row group 0: chunk col 0, chunk col 1, … | row group 1 … |
//               FileMetaData (thrift compact) | u32 LE footer length | "PAR1"
// Invariants: row groups hold `rowGroupRows` rows (the last one fewer); a file of 0 rows has no
// row groups; every column of every row group has exactly the group's rows; values are checked
// against their column's type while they are encoded (InvalidArgument on a mismatch).

import { invalidArgument } from '../../errors.ts';
import { codecOf, type CompressionName } from './compression.ts';
import { type ChunkResult, writeColumnChunk } from './column-writer.ts';
import { type WrittenRowGroup, writeFooter } from './footer-write.ts';
import { type ColumnValues, takesTyped, type ValueCodec, valueCodecFor } from './plain-encode.ts';
import { type LeafSchema, leafFor } from './schema.ts';
import { isNestedType, typeToString, type DataType } from '../../types.ts';
import { nestedLayout, writeNestedChunks, type SchemaElement } from './nested.ts';

export interface WriteColumn {
  name: string;
  fieldId: number;
  type: DataType;
}

export interface WriteOptions {
  compression: CompressionName;
  rowGroupRows?: number;
  pageRows?: number;
}

const MAGIC = Uint8Array.of(0x50, 0x41, 0x52, 0x31); // PAR1

/**
 * `values[c]`: column c's values, a JS array of in-memory values (types.ts) or, for the numeric
 * and boolean leaves whose codec takes one (plain-encode.ts `takesTyped`), a typed column.
 */
export function writeParquetFile(columns: WriteColumn[], values: ColumnValues[], rowCount: number, opts: WriteOptions): Uint8Array {
  const pieces: Uint8Array[] = [];
  const total = writeParquetTo(columns, values, rowCount, opts, (piece) => pieces.push(piece));
  const out = new Uint8Array(total);
  let p = 0;
  for (const piece of pieces) {
    out.set(piece, p);
    p += piece.length;
  }
  return out;
}

/**
 * writeParquetFile's bytes, handed to `sink` in order as they are encoded (a page header or body,
 * the footer…) instead of joined into one array; returns their total length. A piece is not kept
 * once handed over unless a later column of its row group repeats its chunk (`_KEY_x` and `x`),
 * so memory holds about one column chunk, not the file. A piece is never changed once handed
 * over (a sink may keep it); a repeated chunk hands the same pieces again.
 */
export function writeParquetTo(columns: WriteColumn[], values: ColumnValues[], rowCount: number, opts: WriteOptions, sink: (piece: Uint8Array) => void): number {
  const codec = codecOf(opts.compression);
  const groupRows = opts.rowGroupRows ?? 1 << 20;
  const pageRows = opts.pageRows ?? 20_000;
  if (!Number.isInteger(groupRows) || groupRows < 1) throw invalidArgument(`Parquet: rowGroupRows must be ≥ 1, got ${groupRows}`);
  if (!Number.isInteger(pageRows) || pageRows < 1) throw invalidArgument(`Parquet: pageRows must be ≥ 1, got ${pageRows}`);
  if (!Number.isInteger(rowCount) || rowCount < 0) throw invalidArgument(`Parquet: bad row count ${rowCount}`);
  if (values.length !== columns.length) {
    throw invalidArgument(`Parquet: ${columns.length} columns but ${values.length} value arrays`);
  }
  const names = new Set<string>();
  columns.forEach((c, i) => {
    if (names.has(c.name)) throw invalidArgument(`Parquet: duplicate column name '${c.name}'`);
    names.add(c.name);
    const v = values[i];
    const length = v === undefined ? 0 : Array.isArray(v) ? v.length : v.values.length;
    if (length < rowCount) {
      throw invalidArgument(`Parquet column '${c.name}': ${length} values for ${rowCount} rows`);
    }
  });
  // ARRAY/MAP columns become a group and several leaves (nested.ts); flat columns one leaf.
  const layouts = columns.map((c) => (isNestedType(c.type) ? nestedLayout(c.name, c.fieldId, c.type) : undefined));
  const hasNested = layouts.some((l) => l !== undefined);
  const leaves = columns.flatMap((c, i) => layouts[i]?.leaves ?? [leafFor(c.name, c.fieldId, c.type)]);
  const codecs = columns.map((c, i) => (layouts[i] ? undefined : valueCodecFor(c.name, c.type)));
  columns.forEach((c, i) => {
    const v = values[i]!;
    if (Array.isArray(v)) return;
    if (!codecs[i] || !takesTyped(codecs[i]!, v.values)) throw invalidArgument(`Parquet column '${c.name}': no typed form for ${typeToString(c.type)} from a ${v.values.constructor.name}`);
  });
  // The first leaf of each column (a nested column has several).
  const firstLeaf: number[] = [];
  for (let c = 0, leaf = 0; c < columns.length; c++) {
    firstLeaf.push(leaf);
    leaf += layouts[c]?.leaves.length ?? 1;
  }

  let offset = 0;
  const emit = (piece: Uint8Array): void => {
    sink(piece);
    offset += piece.length;
  };
  emit(MAGIC);
  const groups: WrittenRowGroup[] = [];
  for (let from = 0; from < rowCount; from += groupRows) {
    const to = Math.min(rowCount, from + groupRows);
    const group: WrittenRowGroup = { numRows: to - from, chunks: [] };
    // A column that repeats an earlier one (Paimon's `_KEY_x` and `x`) has the same chunk bytes:
    // `repeats[c]` is that earlier column, whose chunk is written again instead of encoding and
    // compressing the values twice. `lastUse[e]`: the last column written from column e's chunk;
    // its pieces are dropped once that column is written.
    const repeats: (number | undefined)[] = [];
    const lastUse: number[] = [];
    const encoded: number[] = [];
    for (let c = 0; c < columns.length; c++) {
      lastUse[c] = c;
      if (layouts[c]) continue;
      const e = encoded.find((f) => sameChunkInput(leaves[firstLeaf[f]!]!, codecs[f]!, values[f]!, leaves[firstLeaf[c]!]!, codecs[c]!, values[c]!, from, to));
      if (e === undefined) encoded.push(c);
      else {
        repeats[c] = e;
        lastUse[e] = c;
      }
    }
    const chunkOf: (ChunkResult | undefined)[] = [];
    for (let c = 0; c < columns.length; c++) {
      const layout = layouts[c];
      const owner = repeats[c] ?? c;
      let chunks: ChunkResult[];
      if (layout) chunks = writeNestedChunks(layout, values[c] as unknown[], from, to, codec, Math.min(pageRows, to - from));
      else {
        const chunk = owner !== c ? chunkOf[owner]! : writeColumnChunk(leaves[firstLeaf[c]!]!, codecs[c]!, values[c]!, from, to, codec, Math.min(pageRows, to - from));
        chunkOf[c] = chunk;
        chunks = [chunk];
      }
      for (const chunk of chunks) {
        group.chunks.push({ chunk, offset });
        for (const p of chunk.pieces) emit(p);
        // Written: the footer needs only the chunk's sizes and statistics.
        if (lastUse[owner] === c) chunk.pieces = [];
      }
    }
    groups.push(group);
  }
  const tree = hasNested
    ? {
        rootChildren: columns.length,
        elements: columns.flatMap((c, i): SchemaElement[] => layouts[i]?.elements ?? [{ kind: 'leaf', leaf: leaves.find((l) => !l.path && l.name === c.name)! }]),
      }
    : undefined;
  const footer = writeFooter(leaves, groups, rowCount, codec, tree);
  const tail = new Uint8Array(8);
  new DataView(tail.buffer).setUint32(0, footer.length, true);
  tail.set(MAGIC, 4);
  emit(footer);
  emit(tail);
  return offset;
}

/**
 * True when two flat columns would be written as identical chunks: the same physical layout and
 * nullability, the same value encoding, and the same values in rows [from, to) — identical by
 * `===`, except that 0 and -0 differ (a DOUBLE writes them differently). Chunk bytes depend on
 * nothing else (a column's name and field id live in the footer).
 */
export function sameChunkInput(la: LeafSchema, ca: ValueCodec, va: ColumnValues, lb: LeafSchema, cb: ValueCodec, vb: ColumnValues, from: number, to: number): boolean {
  if (la.physical !== lb.physical || la.required !== lb.required || (la.typeLength ?? 0) !== (lb.typeLength ?? 0)) return false;
  if (ca.kind !== cb.kind || ca.divisor !== cb.divisor || ca.width !== cb.width) return false;
  if (va === vb) return true;
  // A typed column is only compared by identity (equal contents just encode twice).
  if (!Array.isArray(va) || !Array.isArray(vb)) return false;
  for (let i = from; i < to; i++) {
    const x = va[i];
    const y = vb[i];
    if (x !== y || (x === 0 && 1 / (x as number) !== 1 / (y as number))) {
      // null and undefined are both "null" to the encoder.
      if (!((x === null || x === undefined) && (y === null || y === undefined))) return false;
    }
  }
  return true;
}
