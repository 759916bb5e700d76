// Deletion vectors of append tables (raw-scan.ts, incremental.ts, append-writer.ts): Paimon
// writes them for DELETE/UPDATE on an append table with `deletion-vectors.enabled`. Here a
// "Paimon commit" is simulated with the store's own encoders: a DV index file
// (encodeDeletionVectorFile), an index manifest (encodeIndexManifest) and a snapshot listing it.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { runFromRecords, writeDataFile } from './data-file.ts';
import { encodeDeletionVectorFile } from './deletion-vector.ts';
import { RowKind } from './key-value.ts';
import { isCorruption, LsmError } from './errors.ts';
import { ADD, encodeIndexManifest, decodeIndexManifest, type DataFileMeta, type IndexManifestEntry, type ManifestEntry } from './manifest.ts';
import type { SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';
import { FileNamer } from './table-paths.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SPEC: SchemaSpec = {
  fields: [
    { name: 'n', type: 'INT' },
    { name: 's', type: 'STRING' },
  ],
  options: { 'deletion-vectors.enabled': 'true' },
};

function setup(): { catalog: Catalog; table: Table } {
  const dir = mkdtempSync(join(tmpdir(), 'append-dv-'));
  dirs.push(dir);
  const catalog = new Catalog(dir);
  catalog.createDatabase('db');
  return { catalog, table: catalog.createTable({ database: 'db', table: 't' }, SPEC) };
}

/** The live files of the latest snapshot, by name. */
function liveFiles(table: Table): Map<string, { entry: ManifestEntry }> {
  const out = new Map<string, { entry: ManifestEntry }>();
  const latest = table.latestSnapshot();
  if (latest) for (const e of table.manifests.liveFiles(latest)) out.set(e.file.fileName, { entry: e });
  return out;
}

/**
 * A Paimon-style commit: a new snapshot whose index manifest gives `vectors` (data file name →
 * deleted positions) for bucket 0 of the empty partition, and whose delta adds `adds`.
 */
function paimonCommit(table: Table, vectors: Map<string, number[]>, adds: ManifestEntry[] = []): { id: number; indexFile: string } {
  const latest = table.latestSnapshot()!;
  const namer = new FileNamer();
  const anyEntry = table.manifests.liveFiles(latest)[0]!;
  const { bytes, ranges } = encodeDeletionVectorFile(vectors);
  const indexName = `index-paimon-${latest.id + 1}`;
  table.fileIO.mkdirs(`${table.paths.root}/index`);
  table.fileIO.writeNew(`${table.paths.root}/index/${indexName}`, bytes);
  const entry: IndexManifestEntry = {
    kind: ADD, partition: anyEntry.partition, bucket: anyEntry.bucket, indexType: 'DELETION_VECTORS', fileName: indexName,
    fileSize: bytes.length, rowCount: ranges.length, dvRanges: ranges, externalPath: null,
  };
  const manifestName = `index-manifest-paimon-${latest.id + 1}`;
  table.fileIO.writeNew(table.paths.manifestFile(manifestName), encodeIndexManifest([entry], table.schema.options.manifestCompression));
  const base = table.manifests.writeList(table.schema, namer, table.manifests.dataManifests(latest));
  const delta = table.manifests.writeList(table.schema, namer, adds.length > 0 ? [table.manifests.writeManifest(table.schema, namer, adds)] : []);
  let added = 0;
  for (const e of adds) added += e.file.rowCount;
  const ok = table.snapshots.commit({
    ...latest,
    id: latest.id + 1,
    baseManifestList: base.name,
    baseManifestListSize: base.size,
    deltaManifestList: delta.name,
    deltaManifestListSize: delta.size,
    changelogManifestList: null,
    changelogManifestListSize: null,
    indexManifest: manifestName,
    commitKind: 'APPEND',
    totalRecordCount: (latest.totalRecordCount ?? 0) + added,
    deltaRecordCount: added,
  });
  expect(ok).toBe(true);
  return { id: latest.id + 1, indexFile: `${table.paths.root}/index/${indexName}` };
}

/** Writes rows as one file and commits; returns the file. */
function appendFile(table: Table, rows: Array<[number, string]>): DataFileMeta {
  const before = new Set(liveFiles(table).keys());
  const w = table.newWriter();
  for (const r of rows) w.write([...r]);
  w.commit();
  w.close();
  const added = [...liveFiles(table).values()].filter((f) => !before.has(f.entry.file.fileName));
  expect(added.length).toBe(1);
  return added[0]!.entry.file;
}

const rows = (from: number, to: number, tag: string): Array<[number, string]> => Array.from({ length: to - from }, (_, i) => [from + i, `${tag}${from + i}`]);
const ns = (rs: Iterable<unknown[]>) => [...rs].map((r) => r[0]);
const changesOf = (t: Table, o: Parameters<Table['changes']>[0]) => [...t.changes(o)].map((c) => `${c.kind}${String(c.row[0])}`);

describe('append tables with deletion vectors', () => {
  it('scans, time travel, tags and incremental reads skip the positions deleted in the snapshot', () => {
    const { catalog, table } = setup();
    const f1 = appendFile(table, rows(0, 6, 'a')); // snapshot 1
    const f2 = appendFile(table, rows(6, 10, 'b')); // snapshot 2
    table.createTag('before-delete', 2);
    // Paimon: DELETE WHERE n IN (1, 3, 6) — positions 1, 3 of f1 and 0 of f2.
    const del = paimonCommit(table, new Map([[f1.fileName, [1, 3]], [f2.fileName, [0]]])); // snapshot 3
    table.createTag('after-delete', del.id);
    const t = catalog.getTable({ database: 'db', table: 't' });
    expect(ns(t.scanRows())).toEqual([0, 2, 4, 5, 7, 8, 9]);
    expect(ns(t.scanRows({}, { where: [{ column: 'n', op: '<', value: 4 }] }))).toEqual([0, 2]);
    expect(t.scanRows({}, { projection: ['s'] }).map((r) => r[0])).toEqual(['a0', 'a2', 'a4', 'a5', 'b7', 'b8', 'b9']);
    expect(ns(t.scanRows({ snapshotId: 2 }))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(ns(t.scanRows({ tag: 'before-delete' }))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(ns(t.scanRows({ tag: 'after-delete' }))).toEqual([0, 2, 4, 5, 7, 8, 9]);
    // diff: the deleted rows as -D; from the empty table only live rows.
    expect(changesOf(t, { from: 2, to: 3, mode: 'diff' })).toEqual(['-D1', '-D3', '-D6']);
    expect(changesOf(t, { from: 'before-delete', to: 'after-delete', mode: 'diff' })).toEqual(['-D1', '-D3', '-D6']);
    expect(changesOf(t, { from: 0, to: 3, mode: 'diff' })).toEqual(['+I0', '+I2', '+I4', '+I5', '+I7', '+I8', '+I9']);

    // A Paimon UPDATE-like commit that adds a file whose rows it also marks: delta reads use the
    // vectors of the snapshot that added the file.
    const w = t.newWriter();
    w.write([10, 'c10']);
    w.write([11, 'c11']);
    w.write([12, 'c12']);
    w.commit(); // snapshot 4, by this store: keeps snapshot 3's vectors
    w.close();
    const f3 = [...liveFiles(t).values()].find((f) => f.entry.file.minSequenceNumber === 10)!.entry.file;
    expect(ns(t.scanRows())).toEqual([0, 2, 4, 5, 7, 8, 9, 10, 11, 12]); // snapshot 4 kept snapshot 3's vectors
    expect(t.latestSnapshot()!.indexManifest).toBe(t.snapshots.get(3).indexManifest);
    const upd = paimonCommit(t, new Map([[f1.fileName, [1, 3]], [f2.fileName, [0]], [f3.fileName, [1]]])); // snapshot 5: deletes 11
    const t2 = catalog.getTable({ database: 'db', table: 't' });
    expect(ns(t2.scanRows())).toEqual([0, 2, 4, 5, 7, 8, 9, 10, 12]);
    expect(changesOf(t2, { from: 3, to: upd.id, mode: 'delta' })).toEqual(['+I10', '+I11', '+I12']); // snapshot 4 added f3 before the delete
    expect(changesOf(t2, { from: 3, to: upd.id, mode: 'diff' })).toEqual(['+I10', '+I12']);

    // The follower (delta mode): every APPEND's added rows minus that snapshot's vectors.
    const f = t2.follow({ consumer: 'c', from: 1 });
    const seen: string[] = [];
    for (let b = f.next(); b; b = f.next()) seen.push(...b.map((c) => `${c.kind}${String(c.row[0])}`));
    expect(seen).toEqual(['+I0', '+I1', '+I2', '+I3', '+I4', '+I5', '+I6', '+I7', '+I8', '+I9', '+I10', '+I11', '+I12']);
  });

  it('delta reads skip rows the adding snapshot already marks', () => {
    const { catalog, table } = setup();
    const f1 = appendFile(table, rows(0, 3, 'a')); // snapshot 1
    // A Paimon commit that adds a file and marks a row of it and one of f1.
    const run = runFromRecords([3, 4, 5].map((n, i) => ({ key: [], seq: 3 + i, kind: RowKind.INSERT, value: [n, `b${n}`] })), 0, 2);
    const f2 = writeDataFile({ fileIO: table.fileIO, schema: table.schema, bucketDir: table.paths.bucketDir('', 0), fileName: 'data-paimon-0.parquet', run, level: 0, fileSource: 0, creationTimeMs: Date.now() });
    const any = table.manifests.liveFiles(table.latestSnapshot()!)[0]!;
    const s2 = paimonCommit(table, new Map([[f1.fileName, [0]], [f2.fileName, [2]]]), [{ kind: ADD, partition: any.partition, bucket: any.bucket, totalBuckets: any.totalBuckets, file: f2 }]);
    const t = catalog.getTable({ database: 'db', table: 't' });
    expect(ns(t.scanRows())).toEqual([1, 2, 3, 4]);
    expect(changesOf(t, { from: 1, to: s2.id, mode: 'delta' })).toEqual(['+I3', '+I4']);
    expect(changesOf(t, { from: 1, to: s2.id, mode: 'diff' })).toEqual(['-D0', '+I3', '+I4']);
    const f = t.follow({ consumer: 'c', from: 1 });
    expect(f.next()!.map((c) => `${c.kind}${String(c.row[0])}`)).toEqual(['+I0', '+I1', '+I2']);
    expect(f.next()!.map((c) => `${c.kind}${String(c.row[0])}`)).toEqual(['+I3', '+I4']);
    expect(f.next()).toBeUndefined();
  });

  it('compaction drops deleted rows and their vectors; a damaged vector is a Corruption naming the file', () => {
    const { catalog, table } = setup();
    const f1 = appendFile(table, rows(0, 4, 'a'));
    const f2 = appendFile(table, rows(4, 8, 'b'));
    const del = paimonCommit(table, new Map([[f1.fileName, [0, 2]], [f2.fileName, [3]]]));

    // Damage the vector file (a payload byte): reads fail with Corruption naming the index file.
    const good = readFileSync(del.indexFile);
    const bad = Buffer.from(good);
    bad[12] = bad[12]! ^ 0xff;
    writeFileSync(del.indexFile, bad);
    const broken = catalog.getTable({ database: 'db', table: 't' });
    let err: unknown;
    try {
      broken.scanRows();
    } catch (e) {
      err = e;
    }
    expect(isCorruption(err)).toBe(true);
    expect((err as LsmError).message).toContain(del.indexFile);
    expect(() => [...broken.changes({ from: 0, mode: 'diff' })]).toThrow(del.indexFile);
    writeFileSync(del.indexFile, good);

    const t = catalog.getTable({ database: 'db', table: 't' });
    expect(ns(t.scanRows())).toEqual([1, 3, 4, 5, 6]);
    const w = t.newWriter();
    const id = w.compact(true)!;
    w.close();
    expect(t.snapshots.get(id).commitKind).toBe('COMPACT');
    expect(ns(t.scanRows())).toEqual([1, 3, 4, 5, 6]);
    // The compacted files carry no vectors; the index manifest lost the removed files' ranges.
    const im = t.snapshots.get(id).indexManifest;
    if (im !== null) {
      const entries = decodeIndexManifest(t.fileIO.readFileIfExists(t.paths.manifestFile(im))!, im);
      for (const e of entries) for (const r of e.dvRanges ?? []) expect([f1.fileName, f2.fileName]).not.toContain(r.dataFileName);
    }
    expect(changesOf(t, { from: del.id, to: id, mode: 'diff' })).toEqual([]);
    // Still right after expiry and a reopen.
    const t2 = catalog.getTable({ database: 'db', table: 't' });
    expect(ns(t2.scanRows())).toEqual([1, 3, 4, 5, 6]);
  });

  it('rollback as latest takes the target snapshot’s vectors', () => {
    const { table } = setup();
    const f1 = appendFile(table, rows(0, 4, 'a')); // 1
    const del = paimonCommit(table, new Map([[f1.fileName, [1]]])); // 2
    appendFile(table, rows(4, 6, 'b')); // 3
    expect(ns(table.scanRows())).toEqual([0, 2, 3, 4, 5]);
    const w = table.newWriter();
    const back = w.rollbackTo(1, { keepHistory: true });
    expect(ns(table.scanRows())).toEqual([0, 1, 2, 3]);
    expect(table.snapshots.get(back.snapshotId!).indexManifest).toBeNull();
    w.rollbackTo(del.id, { keepHistory: true });
    expect(ns(table.scanRows())).toEqual([0, 2, 3]);
    w.close();
  });
});
