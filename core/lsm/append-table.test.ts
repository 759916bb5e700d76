// Append tables (append-writer.ts, raw-scan.ts) and Avro data files (format/avro-data.ts,
// data-file-format.ts): write, commit, compaction by concatenation, tags, time travel,
// expiration, per-level formats, and what an independent reader makes of our Avro files.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AppendWriter } from './append-writer.ts';
import { Catalog } from './catalog.ts';
import { isCorruption } from './errors.ts';
import { readAvroContainer } from './format/avro-container.ts';
import { avroDataSchema, readAvroData, writeAvroData } from './format/avro-data.ts';
import { RowKind } from './key-value.ts';
import type { SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';
import { parseType } from './types.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function newTable(spec: SchemaSpec, clock?: () => number): Table {
  const d = mkdtempSync(join(tmpdir(), 'lsm-append-'));
  dirs.push(d);
  const c = new Catalog(d, clock ? { clock } : {});
  c.createDatabase('db');
  return c.createTable({ database: 'db', table: 't' }, spec);
}
function files(dir: string, ext: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith(ext)) out.push(join(d, e.name));
    }
  };
  walk(dir);
  return out;
}

const LOG: SchemaSpec = {
  fields: [
    { name: 'ts', type: 'TIMESTAMP(3)' },
    { name: 'site', type: 'STRING' },
    { name: 'decision', type: 'STRING' },
    { name: 'score', type: 'DOUBLE' },
  ],
};

describe('append tables', () => {
  it('reads a column named like an Object property from the record itself (null when left out)', () => {
    const t = newTable({ fields: [{ name: 'site', type: 'STRING' }, { name: 'valueOf', type: 'STRING' }] });
    const w = t.newWriter();
    w.writeRecord({ site: 's1' });
    w.writeRecord({ site: 's2', valueOf: 'v' });
    w.commit();
    w.close();
    expect(t.scanRows()).toEqual([['s1', null], ['s2', 'v']]);
  });

  it('appends rows and reads them back in write order, across commits', () => {
    const t = newTable(LOG);
    expect(t.schema.options.bucket).toBe(-1);
    const w = t.newWriter();
    expect(w).toBeInstanceOf(AppendWriter);
    for (let i = 0; i < 10; i++) w.write([i * 1000, 's1', `d${i}`, i / 2]);
    expect(w.commit().snapshotId).toBe(1);
    w.writeRecord({ ts: 99_000, site: 's2', decision: 'late' });
    w.write([50_000, 's1', 'dup', 1]);
    w.write([50_000, 's1', 'dup', 1]); // duplicates are kept: no key
    w.commit();
    const rows = t.scanRows();
    expect(rows).toHaveLength(13);
    expect(rows.slice(10)).toEqual([[99_000, 's2', 'late', null], [50_000, 's1', 'dup', 1], [50_000, 's1', 'dup', 1]]);
    expect(t.scanRows({ snapshotId: 1 })).toHaveLength(10);
    expect(t.scanRows({}, { projection: ['decision'], where: [{ column: 'site', op: '=', value: 's2' }] })).toEqual([['late']]);
    expect(() => w.write([1, 'x', 'y', 1], RowKind.DELETE)).toThrow(/only \+I/);
    expect(() => t.reader().get({ ts: 1 })).toThrow(/no primary key/);
    w.close();
  });

  it('writes manifests with _TOTAL_BUCKETS -1 and files without system columns', () => {
    const t = newTable(LOG);
    const w = t.newWriter();
    w.write([1000, 'a', 'b', 1]);
    w.commit();
    w.close();
    const entries = t.manifests.liveFiles(t.latestSnapshot()!);
    expect(entries.map((e) => [e.bucket, e.totalBuckets, e.file.level])).toEqual([[0, -1, 0]]);
    const parquet = files(t.paths.root, '.parquet');
    expect(parquet).toHaveLength(1);
    expect(parquet[0]).toMatch(/bucket-0\/data-.*\.parquet$/);
  });

  it('partitions and hashes fixed buckets by bucket-key', () => {
    const t = newTable({ ...LOG, partitionKeys: ['site'], options: { bucket: '3', 'bucket-key': 'decision' } });
    const w = t.newWriter();
    for (let i = 0; i < 60; i++) w.write([i * 1000, `s${i % 2}`, `d${i}`, i]);
    w.commit();
    w.close();
    const live = t.manifests.liveFiles(t.latestSnapshot()!);
    expect(new Set(live.map((e) => e.bucket)).size).toBeGreaterThan(1);
    expect(live.every((e) => e.totalBuckets === 3)).toBe(true);
    expect(t.scanRows().map((r) => r[0]).sort((a, b) => (a as number) - (b as number))).toEqual(Array.from({ length: 60 }, (_, i) => i * 1000));
    expect(t.scanRows({}, { where: [{ column: 'site', op: '=', value: 's1' }] })).toHaveLength(30);
  });

  it('concatenates small files by compaction, keeping write order; tags, time travel and expiry work', () => {
    let now = 1_700_000_000_000;
    const t = newTable({ ...LOG, options: { 'snapshot.num-retained.min': '2', 'snapshot.time-retained': '1 ms' } }, () => now);
    const w = t.newWriter();
    const expected: unknown[][] = [];
    let compacted = 0;
    for (let c = 0; c < 7; c++) {
      for (let i = 0; i < 5; i++) {
        const r = [(c * 100 + i) * 1000, 'x', `c${c}`, i];
        expected.push(r);
        w.write(r);
      }
      now += 1000;
      const res = w.commit();
      if (res.compactSnapshotId !== undefined) compacted++;
      if (c === 1) t.createTag('after-two');
    }
    expect(compacted).toBeGreaterThan(0);
    expect(t.scanRows()).toEqual(expected);
    expect(t.scanRows({ tag: 'after-two' })).toEqual(expected.slice(0, 10));
    // Expiry removed early snapshots, the tag keeps its files.
    expect(t.snapshots.earliestId()).toBeGreaterThan(1);
    expect(t.scanRows({ tag: 'after-two' })).toEqual(expected.slice(0, 10));
    w.compact(true);
    expect(t.manifests.liveFiles(t.latestSnapshot()!)).toHaveLength(1);
    expect(t.scanRows()).toEqual(expected);
    w.close();
    // A new writer continues the sequence numbers.
    const w2 = t.newWriter();
    w2.write([1000, 'y', 'z', 0]);
    w2.commit();
    w2.close();
    expect(t.scanRows().at(-1)).toEqual([1000, 'y', 'z', 0]);
    const seqs = t.manifests.liveFiles(t.latestSnapshot()!).map((e) => [e.file.minSequenceNumber, e.file.maxSequenceNumber]);
    expect(seqs).toContainEqual([35, 35]);
  });

  it('orphan removal keeps the files the writer flushed but has not committed yet', () => {
    const t = newTable(LOG);
    const w = t.newWriter();
    w.write([1000, 'a', 'ok', 1]);
    w.commit();
    w.write([2000, 'b', 'no', 2]);
    w.flush(); // a data file, pending until the next commit
    expect(w.removeOrphanFiles(0)).toEqual([]);
    w.commit();
    w.close();
    expect(t.scanRows()).toEqual([
      [1000, 'a', 'ok', 1],
      [2000, 'b', 'no', 2],
    ]);
  });

  it('ALTERs an append table and reads its old files through field ids', () => {
    const t = newTable(LOG);
    let w = t.newWriter();
    w.write([1000, 'a', 'ok', 1.5]);
    w.commit();
    w.close();
    t.alter([{ kind: 'renameColumn', from: 'decision', to: 'verdict' }, { kind: 'addColumn', name: 'n', type: 'INT' }, { kind: 'updateColumnType', name: 'score', type: 'STRING' }]);
    w = t.newWriter();
    w.write([2000, 'b', 'no', '2', 7]);
    w.commit();
    w.close();
    expect(t.scanRows()).toEqual([[1000, 'a', 'ok', '1.5', null], [2000, 'b', 'no', '2', 7]]);
  });
});

describe('Avro data files', () => {
  const TYPES: SchemaSpec = {
    fields: [
      { name: 'k', type: 'INT' },
      { name: 'b', type: 'BOOLEAN' },
      { name: 't', type: 'TINYINT' },
      { name: 'big', type: 'BIGINT' },
      { name: 'f', type: 'FLOAT' },
      { name: 'd', type: 'DOUBLE' },
      { name: 'dec', type: 'DECIMAL(20, 3)' },
      { name: 's', type: 'STRING' },
      { name: 'bin', type: 'BYTES' },
      { name: 'day', type: 'DATE' },
      { name: 'tm', type: 'TIME(3)' },
      { name: 'ts3', type: 'TIMESTAMP(3)' },
      { name: 'ts6', type: 'TIMESTAMP(6) WITH LOCAL TIME ZONE' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '1', 'file.format': 'avro' },
  };
  const row = (k: number) => [
    k, k % 2 === 0, k % 100 - 50, BigInt(k) * 10_000_000_000_000n, 1.5, k / 3, -123456789012345n * BigInt(k), `héllo ${'x'.repeat(k % 40)}`,
    new Uint8Array([k % 256, 0, 255]), 19000 + k, 3_600_000 + k, 1_700_000_000_000_000 + k * 1000, 1_700_000_000_000_001 + k,
  ];

  it('round-trips every type through a primary-key table with file.format=avro (all codecs)', () => {
    for (const codec of ['snappy', 'deflate', 'null']) { // Avro's codec names, as Java's Avro writer takes them
      const t = newTable({ ...TYPES, options: { ...TYPES.options, 'file.compression': codec } });
      const w = t.newWriter();
      const rows = Array.from({ length: 50 }, (_, i) => row(i));
      for (const r of rows) w.write([...r]);
      w.write([99, ...row(99).slice(1).map(() => null)]);
      w.commit();
      w.close();
      const avro = files(t.paths.root, '.avro');
      expect(avro.length).toBeGreaterThan(0);
      t.cache.clear();
      expect(t.scanRows()).toEqual([...rows, [99, ...row(99).slice(1).map(() => null)]]);
      // An independent decoder (avsc via our manifest container reader) sees Paimon's layout.
      const c = readAvroContainer(readFileSync(avro[0]!), avro[0]!);
      expect(c.codec).toBe(codec);
      const schema = c.schema as { name: string; fields: Array<{ name: string; type: unknown }> };
      expect(schema.name).toBe('record');
      expect(schema.fields.slice(0, 3).map((f) => f.name)).toEqual(['_KEY_k', '_SEQUENCE_NUMBER', '_VALUE_KIND']);
      expect(schema.fields.find((f) => f.name === 'ts3')!.type).toEqual(['null', { type: 'long', logicalType: 'timestamp-millis' }]);
      expect(schema.fields.find((f) => f.name === 'dec')!.type).toEqual(['null', { type: 'bytes', logicalType: 'decimal', precision: 20, scale: 3 }]);
      const first = c.records[0] as Record<string, unknown>;
      expect(first.ts3).toBe(1_700_000_000_000);
      expect(first.s).toBe('héllo ');
    }
  });

  it('writes level 0 in Avro and compacted levels in Parquet with file.format.per.level', () => {
    const t = newTable({ fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1', 'file.format.per.level': '0:avro', 'write-only': 'true' } });
    const w = t.newWriter();
    for (let i = 0; i < 20; i++) {
      w.write([i % 7, `v${i}`]);
      if (i % 5 === 4) w.commit();
    }
    const names = () => t.manifests.liveFiles(t.latestSnapshot()!).map((e) => `${e.file.level}:${e.file.fileName.split('.').pop()}`);
    expect(new Set(names())).toEqual(new Set(['0:avro']));
    w.compact(true);
    expect(names().every((n) => n.endsWith(':parquet') && !n.startsWith('0:'))).toBe(true);
    w.close();
    const want = new Map<number, string>();
    for (let i = 0; i < 20; i++) want.set(i % 7, `v${i}`);
    expect(t.scanRows()).toEqual([...want.entries()].sort((a, b) => a[0] - b[0]));
  });

  it('refuses zstd Avro writes and per-level formats that do not parse', () => {
    expect(() => newTable({ ...LOG, options: { 'file.format': 'avro', 'file.compression': 'zstd' } })).toThrow(/zstd Avro/);
    expect(() => newTable({ ...LOG, options: { 'file.format.per.level': '0:orc' } })).toThrow(/ORC/);
    expect(() => newTable({ ...LOG, options: { 'file.format.per.level': 'zero' } })).toThrow(/level:format/);
  });

  it('reads by name: missing columns are null, extra ones skipped; damage is a corruption', () => {
    const cols = [{ name: 'a', type: parseType('INT NOT NULL') }, { name: 'b', type: parseType('STRING') }];
    const bytes = writeAvroData(cols, [[1, 2, 3], ['x', null, 'z']], 3, 'snappy');
    const r = readAvroData(bytes, [{ name: 'b', type: parseType('STRING') }, { name: 'c', type: parseType('INT') }], 'f.avro');
    expect(r).toEqual({ rowCount: 3, columns: [['x', null, 'z'], [null, null, null]] });
    expect(avroDataSchema(cols)).toMatchObject({ fields: [{ name: 'a', type: 'int' }, { name: 'b', type: ['null', 'string'], default: null }] });
    const bad = new Uint8Array(bytes);
    bad[bad.length - 20] ^= 0xff; // inside the last block or its sync marker
    let err: unknown;
    try {
      readAvroData(bad, cols, 'f.avro');
    } catch (e) {
      err = e;
    }
    expect(isCorruption(err)).toBe(true);
  });
});
