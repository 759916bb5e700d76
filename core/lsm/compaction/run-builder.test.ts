// RunBuilder (compaction's output built straight into packed columns) holds exactly the records
// runFromRecords would hold — every cell, sequence number and kind — in the forms a decode gives
// (typed columns, key strings shared); the data file written from it is byte-identical to the one
// written from the JS-array run, with the same meta; packRun has nothing left to do; and a value
// that does not fit its column's form turns the column back into the exact values. Random: prints
// its seed; replay with RUN_BUILDER_SEED=<seed>.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../catalog.ts';
import {
  BigInt64Column,
  BoolColumn,
  cell,
  Int32BigIntColumn,
  Int32Column,
  packRun,
  PackedColumn,
  readDataFile,
  runFromRecords,
  writeDataFile,
  type RunData,
} from '../data-file.ts';
import { localFileIO } from '../file-io.ts';
import { RowKind, type KeyValue } from '../key-value.ts';
import { mulberry32 } from '../testing/model.ts';
import { RunBuilder } from './run-builder.ts';
import { sortGroup } from './compact-merge.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'run-builder-'));
  dirs.push(d);
  return d;
}

function seedFor(name: string): number {
  const env = process.env.RUN_BUILDER_SEED;
  const seed = env ? Number(env) : Math.floor(Math.random() * 2 ** 31);
  console.log(`${name}: RUN_BUILDER_SEED=${seed}`);
  return seed;
}

function schemaOf(extra: Record<string, string> = {}) {
  const catalog = new Catalog(join(tempDir(), 'wh'));
  catalog.createDatabase('db', true);
  return catalog.createTable(
    { database: 'db', table: 't' },
    {
      fields: [
        { name: 'k1', type: 'STRING NOT NULL' },
        { name: 'k2', type: 'INT NOT NULL' },
        { name: 'a', type: 'INT' },
        { name: 'a_seq', type: 'BIGINT' },
        { name: 'b', type: 'DOUBLE' },
        { name: 'c', type: 'BOOLEAN' },
        { name: 's', type: 'STRING' },
        { name: 'd', type: 'DATE' },
      ],
      primaryKeys: ['k1', 'k2'],
      partitionKeys: [],
      options: { bucket: '1', ...extra },
    },
  ).schema;
}

type Schema = ReturnType<typeof schemaOf>;

/** Sorted unique keys, fresh key strings per record (as records from different runs carry them). */
function randomRecords(rnd: () => number, n: number): KeyValue[] {
  const out: KeyValue[] = [];
  const maybe = <T,>(v: T): T | null => (rnd() < 0.2 ? null : v);
  for (let i = 0; out.length < n; i++) {
    const k1 = `item-${String(Math.floor(i / 3)).padStart(5, '0')}`.slice(0); // equal neighbours
    const k2 = i % 3;
    const big = rnd() < 0.05 ? BigInt(Math.floor(rnd() * 2 ** 40)) * (rnd() < 0.5 ? -1n : 1n) : BigInt(Math.floor(rnd() * 100));
    out.push({
      key: [`${k1}`, k2],
      seq: Math.floor(rnd() * 1e6),
      kind: rnd() < 0.1 ? RowKind.DELETE : rnd() < 0.1 ? RowKind.UPDATE_AFTER : RowKind.INSERT,
      value: [`${k1}`, k2, maybe(Math.floor(rnd() * 2000) - 1000), maybe(big), maybe(rnd() < 0.1 ? -0 : rnd() < 0.05 ? NaN : rnd() * 10), maybe(rnd() < 0.5), maybe(`s${Math.floor(rnd() * 7)}`), maybe(Math.floor(rnd() * 20000))],
    });
  }
  return out;
}

function build(schema: Schema, records: readonly KeyValue[], capacity = 16): RunData {
  const b = new RunBuilder(schema.fields.map((f) => f.type), schema.keyIndexes, capacity);
  for (const r of records) b.add(r);
  return b.finish();
}

function expectSameRows(got: RunData, want: RunData): void {
  expect(got.rowCount).toBe(want.rowCount);
  expect(got.keyCols.length).toBe(want.keyCols.length);
  for (let i = 0; i < want.rowCount; i++) {
    for (let k = 0; k < want.keyCols.length; k++) expect(Object.is(got.keyCols[k]![i], want.keyCols[k]![i])).toBe(true);
    expect(got.seq[i]).toBe(want.seq[i]);
    expect(got.kind[i]).toBe(want.kind[i]);
    for (let c = 0; c < want.valueCols.length; c++) {
      const g = cell(got.valueCols[c]!, i);
      const w = cell(want.valueCols[c]!, i);
      if (!Object.is(g, w)) throw new Error(`row ${i} column ${c}: ${String(g)} vs ${String(w)}`);
    }
  }
}

function writeBoth(schema: Schema, packed: RunData, plain: RunData) {
  const dir = tempDir();
  const args = { fileIO: localFileIO, schema, bucketDir: dir, level: 5, fileSource: 1 as const, creationTimeMs: 1_700_000_000_000 };
  const a = writeDataFile({ ...args, fileName: 'packed.parquet', run: packed });
  const b = writeDataFile({ ...args, fileName: 'plain.parquet', run: plain });
  return { a, b, bytesA: readFileSync(join(dir, 'packed.parquet')), bytesB: readFileSync(join(dir, 'plain.parquet')), dir };
}

describe('RunBuilder', () => {
  it('holds what runFromRecords holds, in packed forms, across growth and several runs', () => {
    const seed = seedFor('forms');
    const rnd = mulberry32(seed);
    const schema = schemaOf();
    const b = new RunBuilder(schema.fields.map((f) => f.type), schema.keyIndexes, 16);
    for (const n of [1, 100, 1000]) {
      const records = randomRecords(rnd, n);
      for (const r of records) b.add(r);
      const run = b.finish();
      expect(b.rowCount).toBe(0);
      expectSameRows(run, runFromRecords(records, 2, 8));
      expect(run.seq).toBeInstanceOf(Int32Array);
      expect(run.kind).toBeInstanceOf(Uint8Array);
      expect(run.valueCols[0]).toBe(run.keyCols[0]); // key fields share the key arrays
      expect(run.valueCols[1]).toBe(run.keyCols[1]);
      expect(run.valueCols[2]).toBeInstanceOf(Int32Column);
      const big = run.valueCols[3]!;
      const wide = records.some((r) => typeof r.value[3] === 'bigint' && (r.value[3] > 2147483647n || r.value[3] < -2147483648n));
      expect(big).toBeInstanceOf(wide ? BigInt64Column : Int32BigIntColumn);
      expect(Array.isArray(run.valueCols[4])).toBe(true); // DOUBLE: packRun packs it by its values
      expect(run.valueCols[5]).toBeInstanceOf(BoolColumn);
      expect(run.valueCols[7]).toBeInstanceOf(Int32Column);
      // Neighbouring equal key strings are one string.
      for (let i = 1; i < n; i++) if (run.keyCols[0]![i] === run.keyCols[0]![i - 1]) expect(Object.is(run.keyCols[0]![i], run.keyCols[0]![i - 1])).toBe(true);
      for (const c of run.valueCols) if (c instanceof PackedColumn) expect(c.values.length).toBe(n);
    }
  });

  it('writes a byte-identical file with the same meta as the JS-array run, and packRun keeps it', () => {
    const seed = seedFor('file');
    const rnd = mulberry32(seed);
    for (const compression of ['snappy', 'none']) {
      const schema = schemaOf({ 'file.compression': compression });
      const records = randomRecords(rnd, 2500);
      const packed = build(schema, records);
      const plain = runFromRecords(records, 2, 8);
      const { a, b, bytesA, bytesB, dir } = writeBoth(schema, packed, plain);
      expect(Buffer.compare(bytesA, bytesB)).toBe(0);
      expect({ ...a, fileName: '' }).toEqual({ ...b, fileName: '' });
      // A run as the cache holds it (every packed form, DOUBLE in a Float64Column) writes the same.
      const cachedPlain = writeBoth(schema, packRun(plain), plain);
      expect(packRun(plain).valueCols.some((c) => c.constructor.name === 'Float64Column')).toBe(true);
      expect(Buffer.compare(cachedPlain.bytesA, bytesB)).toBe(0);
      expect({ ...cachedPlain.a, fileName: '' }).toEqual({ ...b, fileName: '' });
      // The run cache's packRun has nothing left to do but the DOUBLE column and, as for any run
      // it packs, the INT key field's table column (packed by its values, not shared).
      const cached = packRun(packed);
      expect(cached.keyCols).toBe(packed.keyCols);
      expect(cached.seq).toBe(packed.seq);
      expect(cached.valueCols.map((c, i) => c !== packed.valueCols[i])).toEqual([false, true, false, false, true, false, false, false]);
      const old = packRun(plain);
      expect(cached.valueCols.map((c) => (c instanceof PackedColumn ? c.constructor : Array))).toEqual(old.valueCols.map((c) => (c instanceof PackedColumn ? c.constructor : Array)));
      expectSameRows(cached, plain);
      expectSameRows(readDataFile(localFileIO, schema, join(dir, 'packed.parquet'), a), plain);
    }
  });

  it('writes an Avro data file from its run (JS arrays for Avro) that reads back the same rows', () => {
    const seed = seedFor('avro');
    const schema = schemaOf({ 'file.format': 'avro', 'file.compression': 'null' }); // Avro's name (options.ts checkJavaCodecs)
    const records = randomRecords(mulberry32(seed), 300);
    const plain = runFromRecords(records, 2, 8);
    const dir = tempDir();
    const meta = writeDataFile({ fileIO: localFileIO, schema, bucketDir: dir, fileName: 'x.avro', run: build(schema, records), level: 5, fileSource: 1, creationTimeMs: 0 });
    const want = writeDataFile({ fileIO: localFileIO, schema, bucketDir: dir, fileName: 'y.avro', run: plain, level: 5, fileSource: 1, creationTimeMs: 0 });
    expect({ ...meta, fileName: '', fileSize: 0 }).toEqual({ ...want, fileName: '', fileSize: 0 });
    expectSameRows(readDataFile(localFileIO, schema, join(dir, 'x.avro'), meta), plain);
  });

  it("refuses a data file whose own row count is not its manifest entry's, Parquet and Avro alike", () => {
    for (const format of ['parquet', 'avro']) {
      const schema = schemaOf({ 'file.format': format, 'file.compression': format === 'avro' ? 'null' : 'none' }); // each format's own name
      const records = randomRecords(mulberry32(seedFor(`count-${format}`)), 40);
      const dir = tempDir();
      const path = join(dir, `c.${format}`);
      const meta = writeDataFile({ fileIO: localFileIO, schema, bucketDir: dir, fileName: `c.${format}`, run: runFromRecords(records, 2, 8), level: 5, fileSource: 1, creationTimeMs: 0 });
      // Found by the decoder from the footer or the block headers, before the columns are sized.
      expect(() => readDataFile(localFileIO, schema, path, { ...meta, rowCount: meta.rowCount + 1 })).toThrow(new RegExp(`${path}.*counts? ${meta.rowCount} (rows|records) where ${meta.rowCount + 1} were expected`));
    }
  });

  it('returns a fully packed run from packRun as it is', () => {
    const catalog = new Catalog(join(tempDir(), 'wh'));
    catalog.createDatabase('db', true);
    const schema = catalog.createTable(
      { database: 'db', table: 't' },
      { fields: [{ name: 'k', type: 'STRING NOT NULL' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], partitionKeys: [], options: { bucket: '1' } },
    ).schema;
    const b = new RunBuilder(schema.fields.map((f) => f.type), schema.keyIndexes, 4);
    b.add({ key: ['a'], seq: 1, kind: RowKind.INSERT, value: ['a', 1] });
    b.add({ key: ['b'], seq: 2, kind: RowKind.INSERT, value: ['b', null] });
    const run = b.finish();
    expect(packRun(run)).toBe(run);
  });

  it('turns a column whose value does not fit its form back into the exact values', () => {
    const schema = schemaOf();
    const row = (i: number, a: unknown, big: unknown, c: unknown, d: unknown, k1: unknown = `k${i}`): KeyValue => ({
      key: [`k${i}`, i],
      seq: i,
      kind: RowKind.INSERT,
      value: [k1, i, a, big, 1.5, c, 's', d],
    });
    const records = [
      row(0, 1, 1n, true, 3),
      row(1, null, null, null, null),
      row(2, -0, 2n ** 40n, 'yes', 2.5, 'other'), // -0 in INT, a 40-bit BIGINT, a string in BOOLEAN, a fraction in DATE, a value ≠ its key
      row(3, 7, 2n ** 70n, false, 4),
      row(4, 2 ** 31, -(2n ** 63n), true, null),
    ];
    const run = build(schema, records, 2);
    expectSameRows(run, runFromRecords(records, 2, 8));
    expect(Object.is(cell(run.valueCols[2]!, 2), -0)).toBe(true);
    for (const c of [0, 2, 3, 5, 7]) expect(Array.isArray(run.valueCols[c])).toBe(true);
    expect(run.valueCols[1]).toBe(run.keyCols[1]);
    // A 64-bit value moves the column to a BigInt64Column; one beyond 64 bits to a JS array.
    const wide = build(schema, [row(0, 1, 1n, true, 1), row(1, 1, null, true, 1), row(2, 1, -(2n ** 40n), true, 1)]);
    expect(wide.valueCols[3]).toBeInstanceOf(BigInt64Column);
    expectSameRows(wide, runFromRecords([row(0, 1, 1n, true, 1), row(1, 1, null, true, 1), row(2, 1, -(2n ** 40n), true, 1)], 2, 8));
  });

  it('keeps sequence numbers beyond 32 bits exactly', () => {
    const schema = schemaOf();
    const records: KeyValue[] = [0, 1, 2].map((i) => ({ key: [`k${i}`, i], seq: i === 1 ? 2 ** 40 + 3 : i, kind: RowKind.INSERT, value: [`k${i}`, i, 1, 1n, 1, true, 's', 1] }));
    const run = build(schema, records, 2);
    expect(Array.from(run.seq)).toEqual([0, 2 ** 40 + 3, 2]);
    const { bytesA, bytesB } = writeBoth(schema, run, runFromRecords(records, 2, 8));
    expect(Buffer.compare(bytesA, bytesB)).toBe(0);
  });
});

describe('sortGroup', () => {
  it('orders as the stable Array.prototype.sort does', () => {
    const seed = seedFor('sortGroup');
    const rnd = mulberry32(seed);
    const order = (a: KeyValue, b: KeyValue) => a.seq - b.seq;
    for (let t = 0; t < 2000; t++) {
      const n = 1 + Math.floor(rnd() * 7);
      const group: KeyValue[] = Array.from({ length: n }, (_, i) => ({ key: [], seq: Math.floor(rnd() * 4), kind: RowKind.INSERT, value: [i] }));
      const want = [...group].sort(order);
      sortGroup(group, order);
      expect(group).toEqual(want);
      for (let i = 0; i < n; i++) expect(group[i]).toBe(want[i]);
    }
  });
});
