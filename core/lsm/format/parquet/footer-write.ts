// Serialises FileMetaData (the footer) with the thrift compact protocol, the way parquet-mr lays
// it out for Java Paimon: root `paimon_schema`, one SchemaElement per column with field_id,
// repetition, physical type, ConvertedType and LogicalType; per column chunk a ColumnMetaData with
// encodings, sizes, offsets, statistics and encoding_stats; TYPE_ORDER column orders (without
// them parquet-mr ignores min_value/max_value).
//
// Invariants: field ids are written in ascending order inside every struct; absolute offsets
// are given by the caller (the writer knows where each chunk landed).

import { ByteWriter } from './byte-writer.ts';
import type { ChunkResult } from './column-writer.ts';
import { type LeafSchema, type Logical, type TimeUnit, Codec } from './schema.ts';
import type { SchemaElement } from './nested.ts';
import { T_BINARY, T_I32, T_STRUCT, ThriftWriter } from './thrift-compact.ts';

export const CREATED_BY = 'tilstand version 0.1.0 (build tilstand)';

export interface WrittenChunk {
  chunk: ChunkResult;
  /** Absolute file offset of the chunk's first byte. */
  offset: number;
}

export interface WrittenRowGroup {
  numRows: number;
  chunks: WrittenChunk[];
}

function writeUnit(t: ThriftWriter, id: number, unit: TimeUnit): void {
  t.structBegin(id);
  t.structBegin(unit === 'MILLIS' ? 1 : unit === 'MICROS' ? 2 : 3);
  t.structEnd();
  t.structEnd();
}

function writeLogical(t: ThriftWriter, l: Logical): void {
  t.structBegin(10);
  switch (l.kind) {
    case 'STRING':
      t.structBegin(1);
      break;
    case 'DECIMAL':
      t.structBegin(5);
      t.i32(1, l.scale);
      t.i32(2, l.precision);
      break;
    case 'DATE':
      t.structBegin(6);
      break;
    case 'TIME':
    case 'TIMESTAMP':
      t.structBegin(l.kind === 'TIME' ? 7 : 8);
      t.bool(1, l.utc);
      writeUnit(t, 2, l.unit);
      break;
    case 'INTEGER':
      t.structBegin(10);
      t.byte(1, l.bitWidth);
      t.bool(2, l.signed);
      break;
    case 'OTHER':
      throw new Error('assertion failed: cannot write an unknown logical type');
  }
  t.structEnd();
  t.structEnd();
}

function writeSchema(t: ThriftWriter, leaves: LeafSchema[], tree?: { rootChildren: number; elements: SchemaElement[] }): void {
  const elements: SchemaElement[] = tree ? tree.elements : leaves.map((leaf) => ({ kind: 'leaf', leaf }));
  t.listBegin(2, T_STRUCT, elements.length + 1);
  t.elemStructBegin();
  t.string(4, 'paimon_schema');
  t.i32(5, tree ? tree.rootChildren : leaves.length);
  t.structEnd();
  for (const e of elements) {
    if (e.kind === 'group') {
      // ARRAY/MAP groups (nested.ts): repetition, name, num_children, ConvertedType, field id, LogicalType.
      t.elemStructBegin();
      t.i32(3, e.repetition);
      t.string(4, e.name);
      t.i32(5, e.numChildren);
      if (e.converted !== undefined) t.i32(6, e.converted);
      if (e.fieldId !== undefined) t.i32(9, e.fieldId);
      if (e.logical) {
        t.structBegin(10);
        t.structBegin(e.logical === 'MAP' ? 2 : 3);
        t.structEnd();
        t.structEnd();
      }
      t.structEnd();
      continue;
    }
    const leaf = e.leaf;
    t.elemStructBegin();
    t.i32(1, leaf.physical);
    if (leaf.typeLength !== undefined) t.i32(2, leaf.typeLength);
    t.i32(3, leaf.required ? 0 : 1);
    t.string(4, leaf.name);
    if (leaf.converted !== undefined) t.i32(6, leaf.converted);
    if (leaf.scale !== undefined) t.i32(7, leaf.scale);
    if (leaf.precision !== undefined) t.i32(8, leaf.precision);
    if (leaf.fieldId !== undefined) t.i32(9, leaf.fieldId);
    if (leaf.logical) writeLogical(t, leaf.logical);
    t.structEnd();
  }
}

function writeChunk(t: ThriftWriter, leaf: LeafSchema, w: WrittenChunk, codec: Codec): void {
  const c = w.chunk;
  t.elemStructBegin();
  t.i64(2, 0);
  t.structBegin(3);
  t.i32(1, leaf.physical);
  t.listBegin(2, T_I32, c.encodings.length);
  for (const e of c.encodings) t.elemI32(e);
  const path = leaf.path ?? [leaf.name];
  t.listBegin(3, T_BINARY, path.length);
  for (const p of path) t.elemString(p);
  t.i32(4, codec);
  t.i64(5, c.numValues);
  t.i64(6, c.uncompressedSize);
  t.i64(7, c.compressedSize);
  t.i64(9, w.offset + c.dataPageOffset);
  if (c.hasDictionary) t.i64(11, w.offset);
  c.stats.write(t, 12, leaf.physical, leaf.typeLength ?? 0);
  t.listBegin(13, T_STRUCT, c.encodingStats.length);
  for (const s of c.encodingStats) {
    t.elemStructBegin();
    t.i32(1, s.pageType);
    t.i32(2, s.encoding);
    t.i32(3, s.count);
    t.structEnd();
  }
  t.structEnd(); // ColumnMetaData
  t.structEnd(); // ColumnChunk
}

/** The footer bytes (FileMetaData only; the caller appends the length and `PAR1`). */
export function writeFooter(
  leaves: LeafSchema[],
  groups: WrittenRowGroup[],
  numRows: number,
  codec: Codec,
  tree?: { rootChildren: number; elements: SchemaElement[] },
): Uint8Array {
  const t = new ThriftWriter(new ByteWriter(4096));
  t.i32(1, 1);
  writeSchema(t, leaves, tree);
  t.i64(3, numRows);
  t.listBegin(4, T_STRUCT, groups.length);
  groups.forEach((g, ordinal) => {
    t.elemStructBegin();
    t.listBegin(1, T_STRUCT, g.chunks.length);
    g.chunks.forEach((w, i) => writeChunk(t, leaves[i]!, w, codec));
    let uncompressed = 0;
    let compressed = 0;
    for (const w of g.chunks) {
      uncompressed += w.chunk.uncompressedSize;
      compressed += w.chunk.compressedSize;
    }
    t.i64(2, uncompressed);
    t.i64(3, g.numRows);
    t.i64(5, g.chunks[0]?.offset ?? 4);
    t.i64(6, compressed);
    t.i16(7, ordinal);
    t.structEnd();
  });
  t.string(6, CREATED_BY);
  t.listBegin(7, T_STRUCT, leaves.length);
  for (let i = 0; i < leaves.length; i++) {
    t.elemStructBegin();
    t.structBegin(1); // TYPE_ORDER
    t.structEnd();
    t.structEnd();
  }
  t.structEnd();
  return t.out.toBytes();
}
