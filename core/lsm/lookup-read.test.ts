// Reading and compacting `changelog-producer=lookup` tables by Java Paimon's rule: a key is the
// fold of its level-0 records and of its record of the lowest level above 0 only
// (LookupMergeFunction, merge/lookup-rule.ts); the key's records in higher levels are stale. The
// layouts are the ones Java's lookup compaction leaves — a complete value at a low level above a
// stale record of the key — placed file by file (testing/levels.ts), and every read is checked
// against testing/java-read.ts as well as against the value worked out by hand. The last test is
// randomized (prints its seed; replay with LOOKUP_READ_SEED=<seed>).

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { RowKind, type KeyValue } from './key-value.ts';
import { createMergeFunction, mergeOrder } from './merge/merge-function.ts';
import { RunsMerge } from './compaction/compact-merge.ts';
import { mergeRuns } from './merge-reader.ts';
import type { SchemaSpec } from './schema.ts';
import { Table, type ReadPoint } from './table.ts';
import { javaRead } from './testing/java-read.ts';
import { commitPlacedFiles, type PlacedFile } from './testing/levels.ts';
import { mulberry32 } from './testing/model.ts';
import { bucketFor } from './table-read.ts';
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
describe('random Java-shaped layouts, partitioned, two buckets, with retractions and sequence.field', () => {
  const FIELDS2: SchemaSpec['fields'] = [
    { name: 'p', type: 'INT' },
    { name: 'k', type: 'STRING' },
    { name: 'a', type: 'STRING' },
    { name: 'b', type: 'STRING' },
    { name: 'n', type: 'BIGINT' },
    { name: 'sf', type: 'BIGINT' },
  ];
  const ENGINES: Array<{ name: string; options: Record<string, string>; retraction: RowKind }> = [
    { name: 'aggregation', options: { ...AGG }, retraction: RowKind.UPDATE_BEFORE },
    { name: 'partial-update', options: { ...PU }, retraction: RowKind.DELETE },
    { name: 'deduplicate with sequence.field', options: { 'sequence.field': 'sf' }, retraction: RowKind.DELETE },
  ];
  const id = (row: unknown[]) => `${String(row[0])}|${String(row[1])}`;
  const byKey = (rows: unknown[][]) => new Map(rows.map((r) => [id(r), r]));
  const sorted = (rows: unknown[][]) => [...rows].sort((x, y) => (id(x) < id(y) ? -1 : id(x) > id(y) ? 1 : 0));

  it('scan, get, diff, the lookup changelog and compactions agree with Java\'s read', () => {
    const seed = Number(process.env.LOOKUP_READ_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`lookup-read partitioned layouts: LOOKUP_READ_SEED=${seed}`);
    const rnd = mulberry32(seed);
    for (let trial = 0; trial < 18; trial++) {
      const engine = ENGINES[trial % ENGINES.length]!;
      const ctx = `seed ${seed} trial ${trial} (${engine.name})`;
      const dir = mkdtempSync(join(tmpdir(), 'lsm-lookup-read-'));
      dirs.push(dir);
      const c = new Catalog(dir);
      c.createDatabase('db');
      const t = c.createTable(
        { database: 'db', table: 't' },
        { fields: FIELDS2, primaryKeys: ['p', 'k'], partitionKeys: ['p'], options: { bucket: '2', 'num-levels': '5', 'num-sorted-run.compaction-trigger': '2', ...engine.options, ...LOOKUP } },
      );
      const schema = t.schema;
      let seq = 0;
      const value = (p: number, k: string, kind: RowKind) => ({
        row: [p, k, rnd() < 0.4 ? null : `a${seq}`, rnd() < 0.4 ? null : `b${seq}`, rnd() < 0.3 ? null : BigInt(Math.floor(rnd() * 100)), BigInt(Math.floor(rnd() * 6))],
        seq: seq++,
        kind,
      });
      const place = (level: number, pick: number, kinds: boolean): PlacedFile[] => {
        const files = new Map<string, PlacedFile>();
        for (const p of [0, 1]) {
          for (let i = 0; i < 10; i++) {
            if (rnd() >= pick) continue;
            const k = `k${i}`;
            const bucket = bucketFor(schema, { p, k });
            const f = files.get(`${p}/${bucket}`) ?? { level, records: [], partition: [p], bucket };
            f.records.push(value(p, k, kinds && rnd() < 0.2 ? engine.retraction : RowKind.INSERT));
            files.set(`${p}/${bucket}`, f);
          }
        }
        return [...files.values()];
      };
      // Levels 4 down to 1 (each record whatever value: Java takes the lowest one above 0), then two level-0 commits.
      const above: PlacedFile[] = [];
      for (let level = 4; level >= 1; level--) above.push(...place(level, 0.5, engine.name === 'partial-update'));
      if (above.length === 0) continue;
      const s1 = commitPlacedFiles(t, above);
      let s2 = s1;
      for (let f = 0; f < 2; f++) {
        const l0 = place(0, 0.35, true);
        if (l0.length > 0) s2 = commitPlacedFiles(t, l0);
      }
      const check = (label: string, at: ReadPoint = {}): unknown[][] => {
        const java = javaRows(t, at);
        expect(sorted(t.scanRows(at)), `${ctx}: ${label} scan`).toEqual(sorted(java));
        const want = byKey(java);
        const r = t.reader(at);
        try {
          for (const p of [0, 1]) {
            for (let i = 0; i < 10; i++) {
              const k = `k${i}`;
              expect(r.get({ p, k }), `${ctx}: ${label} get ${p}|${k}`).toEqual(want.get(`${p}|${k}`));
              const row = want.get(`${p}|${k}`);
              expect([...r.scan({ projection: ['n', 'k'], where: [{ column: 'p', op: '=', value: p }, { column: 'k', op: '=', value: k }] })], `${ctx}: ${label} filtered scan ${p}|${k}`).toEqual(row ? [[row[4], k]] : []);
            }
          }
        } finally {
          r.close();
        }
        return java;
      };
      const at1 = check('layout', { snapshotId: s1 });
      const at2 = check('with level 0');
      const picked2 = new Map(javaRead(t).picked.map((records) => [`${String(records[0]!.value[0])}|${String(records[0]!.value[1])}`, records]));
      // The diff between the two states turns the first into the second.
      const state = byKey(at1);
      for (const ch of t.changes({ from: s1, to: s2, mode: 'diff' })) {
        if (ch.kind === '-U' || ch.kind === '-D') {
          expect(state.get(id(ch.row)), `${ctx}: diff ${ch.kind} of the row before`).toEqual(ch.row);
          state.delete(id(ch.row));
        } else state.set(id(ch.row), ch.row);
      }
      expect(sorted([...state.values()]), `${ctx}: diff`).toEqual(sorted(at2));
      // Writes through the writer: the lookup changelog turns the state into the next, and the
      // commit's compactions (trigger 2) keep Java's answer.
      const w = t.newWriter();
      const written: Array<{ p: number; k: string; kv: KeyValue }> = [];
      for (let i = 0; i < 6; i++) {
        const p = Math.floor(rnd() * 2);
        const k = `k${Math.floor(rnd() * 10)}`;
        const v = value(p, k, RowKind.INSERT);
        w.writeRecord(Object.fromEntries(FIELDS2.map((f, j) => [f.name, v.row[j]])));
        written.push({ p, k, kv: { key: [p, k], seq: 0, kind: RowKind.INSERT, value: v.row } });
      }
      const { snapshotId } = w.commit();
      const after = check('after the writer\'s commit');
      const next = byKey(at2);
      for (const ch of t.changes({ from: s2, to: snapshotId!, mode: 'changelog' })) {
        if (ch.kind === '-U' || ch.kind === '-D') {
          expect(next.get(id(ch.row)), `${ctx}: changelog ${ch.kind} of the row before`).toEqual(ch.row);
          next.delete(id(ch.row));
        } else next.set(id(ch.row), ch.row);
      }
      // The expected rows: each written key's records Java folded before (a tombstone with a
      // sequence.field value included), folded with what was written.
      const expected = byKey(at2);
      const merge = createMergeFunction(schema);
      const order = mergeOrder(schema);
      for (const key of new Set(written.map((x) => `${x.p}|${x.k}`))) {
        const recs: KeyValue[] = [...(picked2.get(key) ?? [])];
        written.filter((x) => `${x.p}|${x.k}` === key).forEach((x, i) => recs.push({ ...x.kv, seq: seq + 1 + i }));
        recs.sort(order);
        merge.reset();
        for (const kv of recs) merge.add(kv);
        const res = merge.result();
        if (res && res.kind !== RowKind.DELETE && res.kind !== RowKind.UPDATE_BEFORE) expected.set(key, res.value);
        else expected.delete(key);
      }
      expect(sorted(after), `${ctx}: after the writer's commit, as folded by hand`).toEqual(sorted([...expected.values()]));
      expect(sorted([...next.values()]), `${ctx}: changelog`).toEqual(sorted(after));
      w.close();
      const w2 = t.newWriter();
      w2.compact(true);
      w2.close();
      expect(sorted(check('after a full compaction')), `${ctx}: full compaction`).toEqual(sorted(after));
    }
  });
});

/**
 * A table Java created with `force-lookup` (an option this store does not take at creation): the
 * schema Java would have written, as a new schema file over the table this test created.
 */
function withForceLookup(t: Table): Table {
  const schema = JSON.parse(readFileSync(t.paths.schemaFile(0), 'utf8')) as { id: number; options: Record<string, string> };
  schema.id = 1;
  schema.options['force-lookup'] = 'true';
  writeFileSync(t.paths.schemaFile(1), JSON.stringify(schema));
  return Table.open(t.paths.root);
}

describe("a Java table with 'force-lookup' reads and compacts by the same rule", () => {
  it('aggregation: the stale sum above the complete one is not counted again (scan, get)', () => {
    const t = withForceLookup(newTable(AGG));
    aggLayout(t);
    expectReads(t, [['key', 'A', null, 155n], ['new', null, null, 1n], ['solo', null, null, 7n], ['three', null, null, 30n]]);
  });

  it('aggregation: a compaction of level 0 alone folds in the older complete value (no partial sum above it)', () => {
    const t = withForceLookup(newTable({ ...AGG, 'num-sorted-run.compaction-trigger': '3' }));
    const filler = Array.from({ length: 300 }, (_, i) => ({ row: [`filler${String(i).padStart(4, '0')}`, 'f'.repeat(200), 'f'.repeat(200), 1n], seq: 100 + i }));
    // The picker merges the newest runs (two level-0 files and level 2) into level 3, and key's
    // only record above level 0 is in the large level 4 it leaves out.
    commitPlacedFiles(t, [
      { level: 4, records: [{ row: ['key', 'A', null, 100n], seq: 1 }, ...filler] },
      { level: 2, records: [{ row: ['other', null, null, 1n], seq: 400 }] },
    ]);
    commitPlacedFiles(t, [{ level: 0, records: [{ row: ['other', null, null, 2n], seq: 401 }] }]);
    const w = t.newWriter();
    w.writeRecord({ k: 'key', n: 5n });
    expect(w.commit().compactSnapshotId).toBeDefined();
    w.close();
    expect(getAt(t, 'key')).toEqual(['key', 'A', null, 105n]);
    expect(sortRows(t.scanRows())).toEqual(javaRows(t));
    expect(() => t.newWriter({ compaction: 'deferred' })).toThrow(/'deferred'.*it has 'force-lookup'/);
  });

  it('aggregation: a large level-0 file is merged, not moved up as it is above the older complete value', () => {
    const t = withForceLookup(newTable({ ...AGG, 'num-sorted-run.compaction-trigger': '3', 'target-file-size': '1 kb' }));
    const noise = (i: number) => randomBytes(150).toString('hex') + i;
    commitPlacedFiles(t, [
      { level: 4, records: [{ row: ['key', 'A', null, 100n], seq: 1 }, ...Array.from({ length: 60 }, (_, i) => ({ row: [`a${String(i).padStart(3, '0')}`, noise(i), noise(i), 1n], seq: 100 + i }))] },
      { level: 2, records: [{ row: ['other', null, null, 1n], seq: 2 }] },
    ]);
    // Large (≥ 70 % of the target) and alone with its keys in the unit: a plain table's compaction
    // would move it to the output level unread.
    commitPlacedFiles(t, [{ level: 0, records: [{ row: ['key', null, null, 5n], seq: 199 }, ...Array.from({ length: 8 }, (_, i) => ({ row: [`key${i}`, noise(i), noise(i + 10), 1n], seq: 200 + i }))] }]);
    const w = t.newWriter();
    w.writeRecord({ k: 'zzz', n: 1n });
    expect(w.commit().compactSnapshotId).toBeDefined();
    w.close();
    expect(getAt(t, 'key')).toEqual(['key', 'A', null, 105n]);
    expect(sortRows(t.scanRows())).toEqual(javaRows(t));
  });
});
