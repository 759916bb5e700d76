// A Parquet file written row group by row group: for files too large to hold whole in memory
// (`tilstand hq export --format parquet`). The caller hands over one group's values at a time and
// gets the group's bytes through `sink` at once; `finish` appends the footer. The bytes are what
// writeParquet writes for the same rows cut into the same groups (one `writeRowGroup` of all the
// rows is byte for byte writeParquet's file, as long as rowGroupRows does not split it).
//
// File layout: see writer.ts. Invariants: the sink sees `PAR1` first, then each group whole, then
// the footer, length and `PAR1`; only the footer's per-group metadata (offsets, sizes, stats) is
// kept between calls; a group of 0 rows is no group; after `finish` the writer takes nothing.

import { invalidArgument } from '../../errors.ts';
import { isNestedType, typeToString } from '../../types.ts';
import { type ChunkResult, writeColumnChunk } from './column-writer.ts';
import { codecOf } from './compression.ts';
import { type WrittenRowGroup, writeFooter } from './footer-write.ts';
import type { ParquetColumn, ParquetWriteOptions } from './index.ts';
import { nestedLayout, writeNestedChunks, type NestedLayout, type SchemaElement } from './nested.ts';
import { type ColumnValues, takesTyped, type ValueCodec, valueCodecFor } from './plain-encode.ts';
import { type LeafSchema, leafFor, type Codec } from './schema.ts';
import { sameChunkInput } from './writer.ts';

const MAGIC = Uint8Array.of(0x50, 0x41, 0x52, 0x31); // PAR1

export class ParquetStreamWriter {
  private readonly codec: Codec;
  private readonly pageRows: number;
  private readonly layouts: (NestedLayout | undefined)[];
  private readonly leaves: LeafSchema[];
  private readonly codecs: (ValueCodec | undefined)[];
  private readonly groups: WrittenRowGroup[] = [];
  private offset = 0;
  private rows = 0;
  private finished = false;

  /** Checks the columns and hands `PAR1` to `sink`. `opts.rowGroupRows` is not used: the caller cuts the groups. */
  constructor(
    private readonly columns: readonly ParquetColumn[],
    opts: ParquetWriteOptions,
    private readonly sink: (bytes: Uint8Array) => void,
  ) {
    this.codec = codecOf(opts.compression);
    this.pageRows = opts.pageRows ?? 20_000;
    if (!Number.isInteger(this.pageRows) || this.pageRows < 1) throw invalidArgument(`Parquet: pageRows must be ≥ 1, got ${this.pageRows}`);
    const names = new Set<string>();
    for (const c of columns) {
      if (names.has(c.name)) throw invalidArgument(`Parquet: duplicate column name '${c.name}'`);
      names.add(c.name);
    }
    // ARRAY/MAP columns become a group and several leaves (nested.ts); flat columns one leaf.
    this.layouts = columns.map((c) => (isNestedType(c.type) ? nestedLayout(c.name, c.fieldId, c.type) : undefined));
    this.leaves = columns.flatMap((c, i) => this.layouts[i]?.leaves ?? [leafFor(c.name, c.fieldId, c.type)]);
    this.codecs = columns.map((c, i) => (this.layouts[i] ? undefined : valueCodecFor(c.name, c.type)));
    this.emit(MAGIC);
  }

  /** Rows written so far. */
  get rowCount(): number {
    return this.rows;
  }

  /** One row group of `rowCount` rows from `values[c][r]` (column-major, as writeParquet takes them), handed to the sink. */
  writeRowGroup(values: readonly ColumnValues[], rowCount: number): void {
    if (this.finished) throw new Error('assertion failed: ParquetStreamWriter written after finish');
    const columns = this.columns;
    if (!Number.isInteger(rowCount) || rowCount < 0) throw invalidArgument(`Parquet: bad row count ${rowCount}`);
    if (values.length !== columns.length) throw invalidArgument(`Parquet: ${columns.length} columns but ${values.length} value arrays`);
    for (let c = 0; c < columns.length; c++) {
      const v = values[c]!;
      const length = Array.isArray(v) ? v.length : v.values.length;
      if (length < rowCount) throw invalidArgument(`Parquet column '${columns[c]!.name}': ${length} values for ${rowCount} rows`);
      if (!Array.isArray(v) && (!this.codecs[c] || !takesTyped(this.codecs[c]!, v.values))) {
        throw invalidArgument(`Parquet column '${columns[c]!.name}': no typed form for ${typeToString(columns[c]!.type)} from a ${v.values.constructor.name}`);
      }
    }
    if (rowCount === 0) return;
    const pageRows = Math.min(this.pageRows, rowCount);
    const group: WrittenRowGroup = { numRows: rowCount, chunks: [] };
    const flat: Array<{ c: number; leaf: LeafSchema; chunk: ChunkResult }> = [];
    let leaf = 0;
    for (let c = 0; c < columns.length; c++) {
      const layout = this.layouts[c];
      let chunks: ChunkResult[];
      if (layout) chunks = writeNestedChunks(layout, values[c] as unknown[], 0, rowCount, this.codec, pageRows);
      else {
        // As writeParquet: a column repeating an earlier one reuses its chunk bytes.
        let same: ChunkResult | undefined;
        for (const f of flat) {
          if (sameChunkInput(f.leaf, this.codecs[f.c]!, values[f.c]!, this.leaves[leaf]!, this.codecs[c]!, values[c]!, 0, rowCount)) {
            same = f.chunk;
            break;
          }
        }
        const chunk = same ?? writeColumnChunk(this.leaves[leaf]!, this.codecs[c]!, values[c]!, 0, rowCount, this.codec, pageRows);
        if (!same) flat.push({ c, leaf: this.leaves[leaf]!, chunk });
        chunks = [chunk];
      }
      leaf += chunks.length;
      for (const chunk of chunks) {
        group.chunks.push({ chunk, offset: this.offset });
        for (const p of chunk.pieces) this.emit(p);
      }
    }
    // The pieces are written: keep only what the footer needs of them.
    for (const w of group.chunks) w.chunk.pieces = [];
    this.groups.push(group);
    this.rows += rowCount;
  }

  /** Hands the footer, its length and `PAR1` to the sink; the file is then complete. */
  finish(): void {
    if (this.finished) throw new Error('assertion failed: ParquetStreamWriter finished twice');
    this.finished = true;
    const hasNested = this.layouts.some((l) => l !== undefined);
    const tree = hasNested
      ? {
          rootChildren: this.columns.length,
          elements: this.columns.flatMap((c, i): SchemaElement[] => this.layouts[i]?.elements ?? [{ kind: 'leaf', leaf: this.leaves.find((l) => !l.path && l.name === c.name)! }]),
        }
      : undefined;
    const footer = writeFooter(this.leaves, this.groups, this.rows, this.codec, tree);
    const tail = new Uint8Array(8);
    new DataView(tail.buffer).setUint32(0, footer.length, true);
    tail.set(MAGIC, 4);
    this.emit(footer);
    this.emit(tail);
  }

  private emit(bytes: Uint8Array): void {
    this.sink(bytes);
    this.offset += bytes.length;
  }
}
