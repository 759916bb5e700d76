// A data file goes to the disk in parts as it is encoded, never whole in memory: a flush or a
// compaction of a large run held the whole Parquet file beside the pieces it was joined from
// (≈ 2 × 20 MB at 1 M rows of the bench's stock table; bench/README.md, "Memory"). The bytes are
// the ones the whole-file encoder gives (Java reads them: fixtures.test.ts and the Parquet
// java-fixtures tests are unchanged), the file is complete and fsynced before writeDataFile
// returns, a failure leaves no part of it, and a FileIO that changes `writeNew` (fault
// injection, the replay's scratch FileIO) still gets the whole file through it. Also: a finished
// compaction output (RunBuilder.finish) holds no storage for a next run until a row comes.

import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { RunBuilder } from './compaction/run-builder.ts';
import { encodeDataFile } from './data-file-format.ts';
import { fileColumns, Int32BigIntColumn, Int32Column, packRun, readDataFile, rowAt, writeDataFile, type RunData } from './data-file.ts';
import { ForwardingFileIO, LocalFileIO, writeNewInParts } from './file-io.ts';
import { RowKind } from './key-value.ts';
import { readParquet, writeParquet, writeParquetTo, type ParquetColumn } from './format/parquet/index.ts';
import { fsyncedDuring } from './testing/fsync-spy.ts';
import { createMergeFunction } from './merge/merge-function.ts';
import { parseType } from './types.ts';
import { WriteBuffer } from './write-buffer.ts';

const root = fs.mkdtempSync(join(tmpdir(), 'tilstand-data-file-parts-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

let dirs = 0;
const newDir = (): string => {
  const d = join(root, `d${dirs++}`);
  fs.mkdirSync(d, { recursive: true });
  return d;
};

/** A LocalFileIO that records the parts handed to the file and what went through writeNew. */
class Recording extends LocalFileIO {
  parts: number[] = [];
  whole: number[] = [];
  override writeNewStream(path: string, produce: (write: (part: Uint8Array) => void) => void): void {
    super.writeNewStream(path, (write) => produce((part) => {
      this.parts.push(part.length);
      write(part);
    }));
  }
}

function stockSchema(options: Record<string, string> = {}) {
  const catalog = new Catalog(join(newDir(), 'wh'));
  catalog.createDatabase('db', true);
  return catalog.createTable(
    { database: 'db', table: 'stock' },
    {
      fields: [
        { name: 'item', type: 'STRING NOT NULL' },
        { name: 'location', type: 'STRING NOT NULL' },
        { name: 'on_hand', type: 'INT' },
        { name: 'inventory_seq', type: 'BIGINT' },
        { name: 'note', type: 'STRING' },
      ],
      primaryKeys: ['item', 'location'],
      partitionKeys: [],
      options: { bucket: '1', ...options },
    },
  ).schema;
}

/** A sorted run of `n` rows (two key strings, numbers, a text column that compresses poorly). */
function stockRun(n: number): RunData {
  const item: string[] = [];
  const location: string[] = [];
  const onHand: (number | null)[] = [];
  const seqs: (bigint | null)[] = [];
  const note: (string | null)[] = [];
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    item.push(`item-${String(Math.floor(i / 5)).padStart(7, '0')}`);
    location.push(`loc-${i % 5}`);
    onHand.push(i % 17 === 0 ? null : x % 1000);
    seqs.push(BigInt(i));
    note.push(i % 11 === 0 ? null : x.toString(36));
  }
  return {
    rowCount: n,
    keyCols: [item, location],
    seq: Array.from({ length: n }, (_, i) => i + 1),
    kind: new Array<number>(n).fill(RowKind.INSERT),
    valueCols: [item, location, onHand, seqs, note],
  };
}

describe('writeDataFile: a Parquet data file is written in parts as it is encoded', () => {
  it('never hands the file to the disk whole: every part is a small fraction of a large file, and the bytes are the whole-file encoder’s', () => {
    const schema = stockSchema();
    const run = stockRun(200_000);
    const io = new Recording();
    const dir = newDir();
    const meta = writeDataFile({ fileIO: io, schema, bucketDir: dir, fileName: 'data-a-0.parquet', run, level: 0, fileSource: 0, creationTimeMs: 0 });
    const bytes = fs.readFileSync(join(dir, 'data-a-0.parquet'));
    expect(meta.fileSize).toBe(bytes.length);
    expect(bytes.length).toBeGreaterThan(2 << 20);
    // Was one writeNew of the whole file (built in memory beside the pieces it was joined from).
    expect(io.parts.length).toBeGreaterThan(10);
    expect(Math.max(...io.parts)).toBeLessThan(bytes.length / 8);
    expect(io.parts.reduce((a, b) => a + b, 0)).toBe(bytes.length);
    const columns = fileColumns(schema);
    const values = [...run.keyCols, run.seq, run.kind, ...run.valueCols] as unknown[][];
    expect(Buffer.from(encodeDataFile(schema, 'x.parquet', columns, values, run.rowCount)).equals(bytes)).toBe(true);
    const back = readDataFile(io, schema, join(dir, 'data-a-0.parquet'), meta);
    expect(back.rowCount).toBe(run.rowCount);
    for (const i of [0, 1, 77, 199_999]) expect(rowAt(back, i)).toEqual(run.valueCols.map((c) => (c as unknown[])[i]));
  });

  it('fsyncs the file before it returns, and notes its directory for the next snapshot', () => {
    const schema = stockSchema();
    const io = new LocalFileIO();
    const dir = newDir();
    const synced = fsyncedDuring(() =>
      writeDataFile({ fileIO: io, schema, bucketDir: dir, fileName: 'data-b-0.parquet', run: stockRun(1000), level: 0, fileSource: 0, creationTimeMs: 0 }),
    );
    expect(synced).toContain(resolve(dir, 'data-b-0.parquet'));
    const later = fsyncedDuring(() => io.createAtomic(join(newDir(), 'snap'), Buffer.from('x')));
    expect(later).toContain(resolve(dir));
  });

  it('gives a FileIO that changes writeNew the whole file through writeNew, as before', () => {
    const schema = stockSchema();
    const run = stockRun(5000);
    class Watching extends ForwardingFileIO {
      whole: number[] = [];
      override writeNew(path: string, data: Uint8Array): void {
        this.whole.push(data.length);
        super.writeNew(path, data);
      }
    }
    class ScratchLike extends LocalFileIO {
      whole: number[] = [];
      override writeNew(path: string, data: Uint8Array): void {
        this.whole.push(data.length);
        fs.writeFileSync(path, data, { flag: 'wx' });
      }
    }
    for (const io of [new Watching(new LocalFileIO()), new ScratchLike()]) {
      const dir = newDir();
      const meta = writeDataFile({ fileIO: io, schema, bucketDir: dir, fileName: 'data-c-0.parquet', run, level: 0, fileSource: 0, creationTimeMs: 0 });
      expect(io.whole).toEqual([meta.fileSize]);
      expect(fs.statSync(join(dir, 'data-c-0.parquet')).size).toBe(meta.fileSize);
    }
  });
});

describe('LocalFileIO.writeNewStream', () => {
  it('removes the part written when the producer fails, and rethrows its error as it is', () => {
    const io = new LocalFileIO();
    const path = join(newDir(), 'f');
    const boom = new Error('encoder failed');
    expect(() =>
      io.writeNewStream(path, (write) => {
        write(new Uint8Array(1 << 20)); // written through, not staged
        write(Uint8Array.of(1, 2, 3));
        throw boom;
      }),
    ).toThrow(boom);
    expect(fs.existsSync(path)).toBe(false);
  });

  it('refuses an existing name (AlreadyExists) and leaves that file as it was', () => {
    const io = new LocalFileIO();
    const path = join(newDir(), 'f');
    fs.writeFileSync(path, 'old');
    let called = false;
    expect(() => io.writeNewStream(path, () => (called = true))).toThrow(expect.objectContaining({ kind: 'AlreadyExists' }));
    expect(called).toBe(false);
    expect(fs.readFileSync(path, 'utf8')).toBe('old');
  });

  it('writes small and large parts in order', () => {
    const io = new LocalFileIO();
    const path = join(newDir(), 'f');
    const parts: Uint8Array[] = [];
    for (let i = 0; i < 3000; i++) parts.push(new Uint8Array(i % 7 === 0 ? 70_000 + i : (i % 50) + 1).fill(i & 255));
    io.writeNewStream(path, (write) => parts.forEach((p) => write(p)));
    expect(fs.readFileSync(path).equals(Buffer.concat(parts))).toBe(true);
    // And joined for a FileIO without it.
    const other = join(newDir(), 'g');
    writeNewInParts(new ForwardingFileIO(io), other, (write) => parts.forEach((p) => write(p)));
    expect(fs.readFileSync(other).equals(Buffer.concat(parts))).toBe(true);
  });
});

describe('Parquet writeParquetTo', () => {
  it('hands over writeParquet’s bytes in pieces, repeated and nested columns included, over several row groups', () => {
    const col = (name: string, type: string, fieldId: number): ParquetColumn => ({ name, fieldId, type: parseType(type) });
    const n = 5000;
    const keys = Array.from({ length: n }, (_, i) => `k${String(i).padStart(5, '0')}`);
    const ints = Array.from({ length: n }, (_, i) => (i % 9 === 0 ? null : i * 7));
    const lists = Array.from({ length: n }, (_, i) => (i % 4 === 0 ? null : [i, i + 1]));
    const columns = [col('_KEY_k', 'STRING NOT NULL', 1), col('k', 'STRING NOT NULL', 2), col('k2', 'STRING NOT NULL', 3), col('a', 'INT', 4), col('b', 'INT', 5), col('l', 'ARRAY<INT>', 6)];
    const values = [keys, keys, [...keys], ints, [...ints], lists];
    const opts = { compression: 'snappy' as const, pageRows: 700, rowGroupRows: 2000 };
    const pieces: Uint8Array[] = [];
    const total = writeParquetTo(columns, values, n, opts, (p) => pieces.push(p));
    const whole = writeParquet(columns, values, n, opts);
    expect(total).toBe(whole.length);
    expect(Buffer.concat(pieces).equals(Buffer.from(whole))).toBe(true);
    const back = readParquet(whole, columns.map((c) => ({ name: c.name, type: c.type })), 'mem.parquet').columns;
    expect(back).toEqual([keys, keys, keys, ints, ints, lists]);
  });
});

describe('RunBuilder.finish', () => {
  it('keeps no storage for a next run until its first row (it held a full set while the last file was written)', () => {
    const schema = stockSchema();
    const b = new RunBuilder(schema.fields.map((f) => f.type), schema.keyIndexes, 1000);
    const kv = (i: number) => ({ key: [`i${i}`, 'l'], seq: i, kind: RowKind.INSERT, value: [`i${i}`, 'l', i, BigInt(i), null] });
    for (let i = 0; i < 1000; i++) b.add(kv(i));
    expect(b.reservedRows).toBe(1000);
    const first = b.finish();
    expect(first.rowCount).toBe(1000);
    expect(b.reservedRows).toBe(0); // was 1000: storage made at once for a run that may never come
    expect(b.rowCount).toBe(0);
    b.add(kv(5000));
    expect(b.reservedRows).toBe(1000);
    const second = b.finish();
    expect(second.rowCount).toBe(1);
    expect(rowAt(second, 0)).toEqual(['i5000', 'l', 5000, 5000n, null]);
    expect(rowAt(first, 999)).toEqual(['i999', 'l', 999, 999n, null]);
  });
});

describe('WriteBuffer.drainRuns given the column types', () => {
  it('drains a flush straight into packed columns, the run the cache keeps as it is (it drained a JS array per column, packed again into a second copy)', () => {
    const schema = stockSchema();
    const types = schema.fields.map((f) => f.type);
    const wb = new WriteBuffer(schema.keyIndexes, schema.keyTypes, createMergeFunction(schema), false, undefined, types);
    const rows: unknown[][] = [];
    for (let i = 999; i >= 0; i--) rows.push([`item-${String(Math.floor(i / 5)).padStart(4, '0')}`, `loc-${i % 5}`, i % 7 === 0 ? null : i, BigInt(i), i % 3 === 0 ? null : `n${i}`]);
    rows.forEach((r, j) => expect(wb.add(r, j + 1, RowKind.INSERT)).toBe(true));
    const [run] = wb.drainRuns(types.length, (a, b) => a.seq - b.seq);
    expect(run!.rowCount).toBe(1000);
    expect(run!.seq).toBeInstanceOf(Int32Array); // was a JS array
    expect(run!.kind).toBeInstanceOf(Uint8Array);
    expect(run!.valueCols[2]).toBeInstanceOf(Int32Column);
    expect(run!.valueCols[3]).toBeInstanceOf(Int32BigIntColumn);
    expect(run!.valueCols[0]).toBe(run!.keyCols[0]); // the key field's column shares the key array
    expect(packRun(run!)).toBe(run); // nothing left for the run cache to copy
    // The same rows, in key order, as the JS-array drain gives them.
    const plain = new WriteBuffer(schema.keyIndexes, schema.keyTypes, createMergeFunction(schema), false, undefined);
    rows.forEach((r, j) => plain.add(r, j + 1, RowKind.INSERT));
    const [arrays] = plain.drainRuns(types.length, (a, b) => a.seq - b.seq);
    for (let i = 0; i < 1000; i++) {
      expect(rowAt(run!, i)).toEqual(rowAt(arrays!, i));
      expect(run!.seq[i]).toBe(arrays!.seq[i]);
    }
    const dir = newDir();
    const a = writeDataFile({ fileIO: new LocalFileIO(), schema, bucketDir: dir, fileName: 'data-p-0.parquet', run: run!, level: 0, fileSource: 0, creationTimeMs: 0 });
    const b = writeDataFile({ fileIO: new LocalFileIO(), schema, bucketDir: dir, fileName: 'data-p-1.parquet', run: arrays!, level: 0, fileSource: 0, creationTimeMs: 0 });
    expect(fs.readFileSync(join(dir, 'data-p-0.parquet')).equals(fs.readFileSync(join(dir, 'data-p-1.parquet')))).toBe(true);
    expect({ ...a, fileName: '' }).toEqual({ ...b, fileName: '' });
  });
});
