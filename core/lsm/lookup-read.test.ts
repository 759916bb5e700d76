// Reading and compacting `changelog-producer=lookup` tables by Java Paimon's rule: a key is the
// fold of its level-0 records and of its record of the lowest level above 0 only
// (LookupMergeFunction, merge/lookup-rule.ts); the key's records in higher levels are stale. The
// layouts are the ones Java's lookup compaction leaves — a complete value at a low level above a
// stale record of the key — placed file by file (testing/levels.ts), and every read is checked
// against testing/java-read.ts as well as against the value worked out by hand. The last test is
// randomized (prints its seed; replay with LOOKUP_READ_SEED=<seed>).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { RowKind, type KeyValue } from './key-value.ts';
import { createMergeFunction, mergeOrder } from './merge/merge-function.ts';
import { RunsMerge } from './compaction/compact-merge.ts';
import { mergeRuns } from './merge-reader.ts';
import type { SchemaSpec } from './schema.ts';
import type { ReadPoint, Table } from './table.ts';
import { javaRead } from './testing/java-read.ts';
import { commitPlacedFiles, type PlacedFile } from './testing/levels.ts';
import { mulberry32 } from './testing/model.ts';
import { comparatorFor } from './types.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newTable(options: Record<string, string>): Table {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-lookup-read-'));
  dirs.push(dir);
  const c = new Catalog(dir);
  c.createDatabase('db');
  return c.createTable({ database: 'db', table: 't' }, { fields: FIELDS, primaryKeys: ['k'], options: { bucket: '1', 'num-levels': '5', ...options } });
}

const FIELDS: SchemaSpec['fields'] = [
  { name: 'k', type: 'STRING' },
  { name: 'a', type: 'STRING' },
  { name: 'b', type: 'STRING' },
  { name: 'n', type: 'BIGINT' },
];
const AGG = { 'merge-engine': 'aggregation', 'fields.n.aggregate-function': 'sum' };
const PU = { 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true' };
const LOOKUP = { 'changelog-producer': 'lookup' };

const sortRows = (rows: unknown[][]): unknown[][] => [...rows].sort((x, y) => (String(x[0]) < String(y[0]) ? -1 : String(x[0]) > String(y[0]) ? 1 : 0));

/** Java's rows at `at` (testing/java-read.ts), sorted. */
function javaRows(t: Table, at: ReadPoint = {}): unknown[][] {
  const r = javaRead(t, at);
  expect(r.notRaw).toBeUndefined();
  return sortRows(r.rows);
}

/** The key's row by `get` at `at`. */
function getAt(t: Table, k: string, at: ReadPoint = {}): unknown[] | undefined {
  const r = t.reader(at);
  try {
    return r.get({ k });
  } finally {
    r.close();
  }
}

/** Levels of the latest snapshot's files that hold key `k`, ascending. */
function levelsOf(t: Table, k: string): number[] {
  const levels: number[] = [];
  for (const b of t.buckets(t.latestSnapshot()!)) {
    for (const f of b.files) {
      const run = t.loadRun(b.partition, b.bucket, f);
      for (let i = 0; i < run.rowCount; i++) if (run.keyCols[0]![i] === k) levels.push(f.level);
    }
  }
  return levels.sort((x, y) => x - y);
}

/** Checks scan, projected and filtered scans and get at `at` against `expected` (sorted full rows) and Java's read. */
function expectReads(t: Table, expected: unknown[][], at: ReadPoint = {}): void {
  expect(sortRows(t.scanRows(at))).toEqual(expected);
  expect(javaRows(t, at)).toEqual(expected);
  for (const row of expected) {
    const k = row[0] as string;
    expect(getAt(t, k, at)).toEqual(row);
    expect(t.scanRows(at, { projection: ['n', 'k'], where: [{ column: 'k', op: '=', value: k }] })).toEqual([[row[3], k]]);
  }
}

/**
 * Aggregation (sum of n), as Java's lookup compactions leave it: each record above level 0 is its
 * key's complete value, and the compaction that wrote it left the older record higher up.
 *   key:   level 4 n=100 (stale), level 2 n=150 (complete: 100 + 50); later level 0 n=5
 *   three: level 4 n=10, level 3 n=20, level 1 n=30 (each the complete value of its time)
 *   solo:  level 4 n=7
 */
function aggLayout(t: Table): { s1: number; s2: number } {
  const r = (k: string, n: bigint, seq: number, a: string | null = null) => ({ row: [k, a, null, n], seq });
  const s1 = commitPlacedFiles(t, [
    { level: 4, records: [r('key', 100n, 1, 'A'), r('three', 10n, 2), r('solo', 7n, 3)] },
    { level: 3, records: [r('three', 20n, 4)] },
    { level: 2, records: [r('key', 150n, 5, 'A')] },
    { level: 1, records: [r('three', 30n, 6)] },
  ]);
  const s2 = commitPlacedFiles(t, [{ level: 0, records: [r('key', 5n, 7), r('new', 1n, 8)] }]);
  return { s1, s2 };
}

/**
 * Partial-update with removal on delete: Java compacted key's -D and a later +I{b} over {a: 'A'}
 * into {a: null, b: 'B'} at level 2, above the stale {a: 'A'} at level 4. Later a level-0 {n: 3}.
 */
function puLayout(t: Table): { s1: number; s2: number } {
  const s1 = commitPlacedFiles(t, [
    { level: 4, records: [{ row: ['key', 'A', null, null], seq: 1 }, { row: ['other', 'O', null, null], seq: 2 }] },
    { level: 2, records: [{ row: ['key', null, 'B', null], seq: 4 }] },
  ]);
  const s2 = commitPlacedFiles(t, [{ level: 0, records: [{ row: ['key', null, null, 3n], seq: 5 }] }]);
  return { s1, s2 };
}

describe('changelog-producer=lookup tables read as Java reads them', () => {
  it('aggregation: a stale sum above the complete one is not counted again (scan, get, time travel, tag)', () => {
    const t = newTable({ ...AGG, ...LOOKUP });
    const { s1 } = aggLayout(t);
    t.createTag('before', s1);
    expectReads(t, [['key', 'A', null, 155n], ['new', null, null, 1n], ['solo', null, null, 7n], ['three', null, null, 30n]]);
    const then = [['key', 'A', null, 150n], ['solo', null, null, 7n], ['three', null, null, 30n]];
    expectReads(t, then, { snapshotId: s1 });
    expectReads(t, then, { tag: 'before' });
    // A filter on a value column sees the folded value: only key's 155 passes, not a fold of every level.
    expect(t.scanRows({}, { where: [{ column: 'n', op: '>=', value: 155n }, { column: 'n', op: '<', value: 200n }] })).toEqual([['key', 'A', null, 155n]]);
    expect(t.scanRows({}, { where: [{ column: 'n', op: '>', value: 200n }] })).toEqual([]);
  });

  it('partial-update: a column a removal cleared does not come back from a stale level', () => {
    const t = newTable({ ...PU, ...LOOKUP });
    const { s1 } = puLayout(t);
    expectReads(t, [['key', null, 'B', 3n], ['other', 'O', null, null]]);
    expectReads(t, [['key', null, 'B', null], ['other', 'O', null, null]], { snapshotId: s1 });
  });

  it('a diff between two states compares the rows the reads give', () => {
    const t = newTable({ ...AGG, ...LOOKUP });
    const { s1, s2 } = aggLayout(t);
    const changes = [...t.changes({ from: s1, to: s2, mode: 'diff' })].map((c) => [c.kind, ...c.row]);
    expect(changes).toEqual([
      ['-U', 'key', 'A', null, 150n],
      ['+U', 'key', 'A', null, 155n],
      ['+I', 'new', null, null, 1n],
    ]);
  });

  it('the lookup changelog of a commit takes its before value as reads give it', () => {
    const t = newTable({ ...AGG, ...LOOKUP });
    const { s2 } = aggLayout(t);
    const w = t.newWriter();
    w.writeRecord({ k: 'key', n: 2n });
    w.writeRecord({ k: 'three', n: 1n });
    const { snapshotId } = w.commit();
    w.close();
    const changes = [...t.changes({ from: s2, to: snapshotId!, mode: 'changelog' })].map((c) => [c.kind, ...c.row]);
    expect(changes).toEqual([
      ['-U', 'key', 'A', null, 155n],
      ['+U', 'key', 'A', null, 157n],
      ['-U', 'three', null, null, 30n],
      ['+U', 'three', null, null, 31n],
    ]);
    expect(getAt(t, 'key', { snapshotId: snapshotId! })).toEqual(['key', 'A', null, 157n]);
  });

  it('without the lookup producer every level is folded, as Java merges them there', () => {
    const t = newTable(AGG);
    aggLayout(t);
    expect(getAt(t, 'key')).toEqual(['key', 'A', null, 255n]);
    expect(getAt(t, 'three')).toEqual(['three', null, null, 60n]);
    expect(javaRows(t)).toEqual(sortRows(t.scanRows()));
  });
});

describe('compacting a Java-shaped lookup table keeps Java\'s answer', () => {
  it('aggregation, full compaction: one record per key, the sums as Java read them', () => {
    const t = newTable({ ...AGG, ...LOOKUP });
    aggLayout(t);
    const w = t.newWriter();
    expect(w.compact(true)).toBeDefined();
    w.close();
    const expected = [['key', 'A', null, 155n], ['new', null, null, 1n], ['solo', null, null, 7n], ['three', null, null, 30n]];
    expectReads(t, expected);
    for (const k of ['key', 'new', 'solo', 'three']) expect(levelsOf(t, k)).toEqual([4]);
  });

  it('partial-update, full compaction: the cleared column stays cleared', () => {
    const t = newTable({ ...PU, ...LOOKUP });
    puLayout(t);
    const w = t.newWriter();
    expect(w.compact(true)).toBeDefined();
    w.close();
    expectReads(t, [['key', null, 'B', 3n], ['other', 'O', null, null]]);
    expect(levelsOf(t, 'key')).toEqual([4]);
  });

  // The picker merges the newest runs (two level-0 files and level 2) into level 3 and leaves the
  // large level 4 out: the unit holds the key's complete value (level 2), so its stale record in
  // level 4 is neither folded in nor a reason to widen (Java looks nothing up then).
  for (const [name, engine, write, expected] of [
    ['aggregation', AGG, { k: 'key', n: 2n }, ['key', 'A', null, 157n]],
    ['partial-update', PU, { k: 'key', n: 4n }, ['key', null, 'B', 4n]],
  ] as const) {
    it(`${name}, a compaction of the newest runs: the stale record below is left out`, () => {
      const t = newTable({ ...engine, ...LOOKUP, 'num-sorted-run.compaction-trigger': '3' });
      const filler = Array.from({ length: 300 }, (_, i) => ({ row: [`filler${String(i).padStart(4, '0')}`, 'f'.repeat(200), 'f'.repeat(200), 1n], seq: 100 + i }));
      commitPlacedFiles(t, [
        { level: 4, records: [{ row: ['key', 'A', null, name === 'aggregation' ? 100n : null], seq: 1 }, ...filler] },
        { level: 2, records: [{ row: ['key', name === 'aggregation' ? 'A' : null, name === 'aggregation' ? null : 'B', name === 'aggregation' ? 150n : null], seq: 400 }] },
      ]);
      commitPlacedFiles(t, [{ level: 0, records: [{ row: ['key', null, null, name === 'aggregation' ? 5n : 3n], seq: 401 }] }]);
      const w = t.newWriter();
      w.writeRecord(write);
      expect(w.commit().compactSnapshotId).toBeDefined();
      w.close();
      expect(levelsOf(t, 'key')).toEqual([3, 4]); // the new complete value above the stale one
      const rows = sortRows(t.scanRows());
      expect(rows.find((r) => r[0] === 'key')).toEqual(expected);
      expect(javaRows(t)).toEqual(rows);
      expect(getAt(t, 'key')).toEqual(expected);
    });
  }
});

describe('RunsMerge with levels (compaction of a lookup table)', () => {
  const t = newTable({ ...AGG, ...LOOKUP });
  const schema = t.schema;
  const keyCmps = schema.keyTypes.map(comparatorFor);
  const run = (k: string, n: bigint, seq: number) => [{ rowCount: 1, keyCols: [[k]], seq: [seq], kind: [RowKind.INSERT], valueCols: [[k], [null], [null], [n]] }];

  function merged(runs: ReturnType<typeof run>[], levels: number[] | undefined, older?: (key: readonly unknown[]) => readonly KeyValue[]): { out: unknown[][]; asked: number } {
    const out: unknown[][] = [];
    let asked = 0;
    const ask = older && ((key: readonly unknown[]) => (asked++, older(key)));
    new RunsMerge(runs, keyCmps, 4, createMergeFunction(schema), mergeOrder(schema), undefined, (kv) => out.push([...kv.value]), ask, levels).step(Infinity);
    return { out, asked };
  }

  it('folds level 0 and the lowest level above it, whatever the runs\' order', () => {
    expect(merged([run('k', 5n, 9), run('k', 150n, 5), run('k', 100n, 1)], [0, 2, 4]).out).toEqual([['k', null, null, 155n]]);
    expect(merged([run('k', 100n, 1), run('k', 5n, 9), run('k', 150n, 5)], [4, 0, 2]).out).toEqual([['k', null, null, 155n]]);
    expect(merged([run('k', 5n, 9), run('k', 150n, 5), run('k', 100n, 1)], undefined).out).toEqual([['k', null, null, 255n]]); // every record without levels
  });

  it('asks the older runs only without a record above level 0 in the unit, and takes the first found', () => {
    const older = () => [{ key: ['k'], seq: 5, kind: RowKind.INSERT, value: ['k', null, null, 150n] }, { key: ['k'], seq: 1, kind: RowKind.INSERT, value: ['k', null, null, 100n] }];
    expect(merged([run('k', 5n, 9), run('k', 1n, 8)], [0, 0], older)).toEqual({ out: [['k', null, null, 156n]], asked: 1 });
    expect(merged([run('k', 5n, 9), run('k', 60n, 6)], [0, 1], older)).toEqual({ out: [['k', null, null, 65n]], asked: 0 });
  });

  it('refuses levels that do not match the runs', () => {
    expect(() => merged([run('k', 5n, 9)], [0, 1])).toThrow(/2 levels for 1 runs/);
  });
});

describe('mergeRuns with levels (diff reads of a lookup table)', () => {
  const t = newTable({ ...AGG, ...LOOKUP });
  const schema = t.schema;
  const run = (k: string, n: bigint, seq: number) => [{ rowCount: 1, keyCols: [[k]], seq: [seq], kind: [RowKind.INSERT], valueCols: [[k], [null], [null], [n]] }];
  const merged = (runs: ReturnType<typeof run>[], levels?: number[]) => [...mergeRuns(runs, t.compareKeys, createMergeFunction(schema), mergeOrder(schema), undefined, levels)].map((kv) => kv.value);

  it('folds level 0 and the lowest level above it only', () => {
    expect(merged([run('k', 5n, 9), run('k', 1n, 8), run('k', 150n, 5), run('k', 100n, 1)], [0, 0, 2, 4])).toEqual([['k', null, null, 156n]]);
    expect(merged([run('k', 100n, 1), run('k', 150n, 5), run('k', 5n, 9)], [4, 2, 0])).toEqual([['k', null, null, 155n]]);
    expect(merged([run('k', 5n, 9), run('k', 150n, 5), run('k', 100n, 1)])).toEqual([['k', null, null, 255n]]);
    expect(() => merged([run('k', 5n, 9)], [0, 2])).toThrow(/2 levels for 1 runs/);
  });
});

describe('random Java-shaped layouts', () => {
  it('scan and get agree with Java\'s read, before and after a full compaction', () => {
    const seed = Number(process.env.LOOKUP_READ_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`lookup-read random layouts: LOOKUP_READ_SEED=${seed}`);
    const rnd = mulberry32(seed);
    for (let trial = 0; trial < 20; trial++) {
      const t = newTable(trial % 2 === 0 ? { ...AGG, ...LOOKUP } : { ...PU, ...LOOKUP });
      // Per level (4 down to 0), a file of random keys; sequence numbers rise toward level 0, as
      // compactions leave them. Each record is whatever value: Java takes the lowest one above 0.
      const files: PlacedFile[] = [];
      let seq = 0;
      for (let level = 4; level >= 1; level--) {
        const records = [];
        for (let k = 0; k < 8; k++) if (rnd() < 0.5) records.push({ row: [`k${k}`, rnd() < 0.5 ? null : `a${seq}`, rnd() < 0.5 ? null : `b${seq}`, rnd() < 0.3 ? null : BigInt(Math.floor(rnd() * 100))], seq: seq++ });
        if (records.length > 0) files.push({ level, records });
      }
      if (files.length > 0) commitPlacedFiles(t, files);
      for (let f = 0; f < 2; f++) {
        const records = [];
        for (let k = 0; k < 8; k++) if (rnd() < 0.4) records.push({ row: [`k${k}`, rnd() < 0.5 ? null : `a${seq}`, null, BigInt(Math.floor(rnd() * 10))], seq: seq++ });
        if (records.length > 0) commitPlacedFiles(t, [{ level: 0, records }]);
      }
      if (t.latestSnapshot() === undefined) continue;
      const java = javaRows(t);
      expect(sortRows(t.scanRows()), `seed ${seed} trial ${trial}`).toEqual(java);
      for (const row of java) expect(getAt(t, row[0] as string), `seed ${seed} trial ${trial}`).toEqual(row);
      const w = t.newWriter();
      w.compact(true);
      w.close();
      expect(sortRows(t.scanRows()), `seed ${seed} trial ${trial}, compacted`).toEqual(java);
      expect(javaRows(t), `seed ${seed} trial ${trial}, compacted`).toEqual(java);
    }
  });
});
