// A key's lone record — its only record in the files a read or a compaction merges — against Java
// Paimon, which wraps the merge engine in ReducerMergeFunctionWrapper on those paths and passes
// such a record on as it is, unfolded (merge/README.md, "A key's lone record").
//
//   - testing/java-read.ts models it (`lone: 'as-is'`);
//   - compaction writes a lone record unfolded, as Java's MergeTreeCompactRewriter does, except in a
//     lookup table's compaction of level 0 (Java's LookupChangelogMergeFunctionWrapper folds it);
//   - this store's reader (table-read.ts: scan, LowestLevelBucketScan, `get`) follows the same
//     rule: a lone add is its row as written, a lone retraction no row;
//   - compaction and the writer's merge of pending runs pass a lone retraction on (compaction
//     drops it at the bottom level), so neither changes what a read gives.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { kvAt } from './data-file.ts';
import { isAdd, RowKind } from './key-value.ts';
import { createMergeFunction, mergeOrder } from './merge/merge-function.ts';
import { foldsLowestLevelOnly } from './merge/lookup-rule.ts';
import { mergeRuns } from './merge-reader.ts';
import { aggregationFold } from './testing/agg-model.ts';
import { readOutcomes, type Rec } from './testing/model.ts';
import { mulberry32 } from './testing/prng.ts';
import type { SchemaSpec } from './schema.ts';
import { Table } from './table.ts';
import { commitPlacedFiles } from './testing/levels.ts';
import { javaRead } from './testing/java-read.ts';
import { PAIMON_FIXTURES, paimonFixturesAvailable } from './testing/shared.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newTable(spec: SchemaSpec): Table {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-lone-'));
  dirs.push(dir);
  const c = new Catalog(dir);
  c.createDatabase('db');
  return c.createTable({ database: 'db', table: 't' }, spec);
}

const byKey = (rows: unknown[][]): unknown[][] => [...rows].sort((a, b) => Number(a[0]) - Number(b[0]));
const scan = (t: Table): unknown[][] => {
  const r = t.reader();
  try {
    return byKey([...r.scan()]);
  } finally {
    r.close();
  }
};
const java = (t: Table): unknown[][] => byKey(javaRead(t, {}, { lone: 'as-is' }).rows);
/** `get` of each id in `ids`, the rows found, by key. */
const gets = (t: Table, ids: number[]): unknown[][] => {
  const r = t.reader();
  try {
    return byKey(ids.map((id) => r.get({ id })).filter((row): row is unknown[] => row !== undefined));
  } finally {
    r.close();
  }
};

/** Every record of the latest snapshot's files: [level, kind, value], by key then level. */
function records(t: Table): Array<[number, RowKind, unknown[]]> {
  const out: Array<[number, RowKind, unknown[]]> = [];
  const s = t.latestSnapshot();
  if (!s) return out;
  for (const b of t.buckets(s)) {
    for (const f of b.files) {
      const run = t.loadRun(b.partition, b.bucket, f);
      for (let i = 0; i < run.rowCount; i++) {
        const kv = kvAt(run, i);
        out.push([f.level, kv.kind, kv.value]);
      }
    }
  }
  return out.sort((a, b) => Number(a[2][0]) - Number(b[2][0]) || a[0] - b[0]);
}

/** Writes each batch as one commit (one level-0 file each), then compacts fully. */
function writeThenCompact(t: Table, batches: Array<Array<[unknown[], RowKind]>>): { before: ReturnType<typeof records> } {
  const w = t.newWriter();
  try {
    for (const batch of batches) {
      for (const [row, kind] of batch) w.write(row, kind);
      w.commit();
    }
    const before = records(t);
    w.compact(true);
    w.commit();
    return { before };
  } finally {
    w.close();
  }
}

const ID = { name: 'id', type: 'INT NOT NULL' };
const spec = (fields: SchemaSpec['fields'], options: Record<string, string>): SchemaSpec => ({ fields: [ID, ...fields], primaryKeys: ['id'], options: { bucket: '1', ...options } });
const COLLECT_DISTINCT = spec([{ name: 'q', type: 'ARRAY<STRING>' }], { 'merge-engine': 'aggregation', 'fields.q.aggregate-function': 'collect', 'fields.q.distinct': 'true' });
const LISTAGG = spec([{ name: 'q', type: 'STRING' }], { 'merge-engine': 'aggregation', 'fields.q.aggregate-function': 'listagg' });
const GROUPS = spec([{ name: 'g', type: 'INT' }, { name: 'a', type: 'STRING' }], { 'merge-engine': 'partial-update', 'fields.g.sequence-group': 'a' });
const SUM = spec([{ name: 'q', type: 'INT' }], { 'merge-engine': 'aggregation', 'fields.q.aggregate-function': 'sum' });

describe("javaRead's lone record (ReducerMergeFunctionWrapper, DropDeleteReader)", () => {
  it("a lone retraction of an aggregation table is no row (the default); with lone: 'folded' it is one", () => {
    const t = newTable(SUM);
    const w = t.newWriter();
    w.write([1, 5], RowKind.DELETE);
    w.write([2, 7], RowKind.INSERT);
    w.commit();
    w.close();
    expect(java(t)).toEqual([[2, 7]]);
    expect(byKey(javaRead(t).rows)).toEqual([[2, 7]]);
    expect(byKey(javaRead(t, {}, { lone: 'folded' }).rows)).toEqual([[1, -5], [2, 7]]);
  });

  it('a lone add is read as written; with a second record of the key both are folded', () => {
    const t = newTable(GROUPS);
    const w = t.newWriter();
    w.write([1, null, 'x']); // group sequence null: the engine's fold leaves the group null
    w.write([2, null, 'y']);
    w.commit();
    w.write([2, null, 'z']);
    w.commit();
    w.close();
    expect(java(t)).toEqual([
      [1, null, 'x'],
      [2, null, null],
    ]);
  });

  it.skipIf(!paimonFixturesAvailable("javaRead's lone rule against a table Java wrote"))('reads the rows Java listed for its own deduplicate table, at every snapshot', () => {
    // No fixture has an aggregation or partial-update table; this checks the rule on a table Java
    // wrote and listed the rows of: deduplicate, most keys lone (one record), a few in several files.
    const t = Table.open(join(PAIMON_FIXTURES, 'java13-pk-parquet-mor-partitioned-2buckets'));
    for (let id = 1; id <= t.latestSnapshot()!.id; id++) {
      const rows = (r: unknown[][]) => r.map((v) => JSON.stringify(v)).sort();
      expect(rows(javaRead(t, { snapshotId: id }, { lone: 'as-is' }).rows), `snapshot ${id}`).toEqual(rows(t.scanRows({ snapshotId: id })));
    }
    expect(javaRead(t, {}, { lone: 'as-is' }).rows).toHaveLength(11); // fixtures.test.ts lists them
  });

  it('refuses an unknown `lone` mode by name', () => {
    const t = newTable(SUM);
    expect(() => javaRead(t, {}, { lone: 'raw' as 'as-is' })).toThrow(/lone must be 'as-is' or 'folded', got raw/);
  });
});

describe('compaction writes a lone add unfolded, as Java does', () => {
  // Keys interleave across the two files, so the compaction merges (rewrites) them, not moves them.
  it('aggregation: collect with distinct keeps a lone [a, a]; listagg keeps a lone blank', () => {
    const t = newTable(COLLECT_DISTINCT);
    const { before } = writeThenCompact(t, [
      [[[1, ['a', 'a']], RowKind.INSERT], [[3, ['c']], RowKind.INSERT]],
      [[[2, ['b', 'b']], RowKind.INSERT], [[3, ['c', 'd']], RowKind.INSERT]],
    ]);
    expect(before.every(([level]) => level === 0)).toBe(true);
    const after = records(t);
    expect(after.every(([level]) => level > 0)).toBe(true);
    expect(after.map(([, kind, value]) => [kind, value])).toEqual([
      [RowKind.INSERT, [1, ['a', 'a']]],
      [RowKind.INSERT, [2, ['b', 'b']]],
      [RowKind.INSERT, [3, ['c', 'd']]], // two records: folded
    ]);
    expect(java(t)).toEqual([
      [1, ['a', 'a']],
      [2, ['b', 'b']],
      [3, ['c', 'd']],
    ]);

    const l = newTable(LISTAGG);
    writeThenCompact(l, [[[[1, ' '], RowKind.INSERT], [[3, 'p'], RowKind.INSERT]], [[[2, 'q'], RowKind.INSERT], [[3, 'r'], RowKind.INSERT]]]);
    expect(records(l).map(([, , value]) => value)).toEqual([[1, ' '], [2, 'q'], [3, 'p,r']]);
    expect(java(l)).toEqual([[1, ' '], [2, 'q'], [3, 'p,r']]);
  });

  it('partial-update: a lone row whose group sequence is null keeps its group; +U stays +U', () => {
    const t = newTable(GROUPS);
    writeThenCompact(t, [
      [[[1, null, 'x'], RowKind.UPDATE_AFTER], [[3, 1, 'c'], RowKind.INSERT]],
      [[[2, 2, 'y'], RowKind.INSERT], [[3, null, 'd'], RowKind.INSERT]],
    ]);
    expect(records(t).map(([, kind, value]) => [kind, value])).toEqual([
      [RowKind.UPDATE_AFTER, [1, null, 'x']],
      [RowKind.INSERT, [2, 2, 'y']],
      [RowKind.INSERT, [3, 1, 'c']], // folded: the null-sequence record does not set the group
    ]);
    // What Java reads of it is what it read before the compaction, and so does this store.
    const want = [
      [1, null, 'x'],
      [2, 2, 'y'],
      [3, 1, 'c'],
    ];
    expect(java(t)).toEqual(want);
    expect(scan(t)).toEqual(want);
    expect(gets(t, [1, 2, 3])).toEqual(want);
  });

  it('a lookup table folds a lone add when the compaction takes level 0 (LookupChangelogMergeFunctionWrapper)', () => {
    const t = newTable({ ...GROUPS, options: { ...GROUPS.options, 'changelog-producer': 'lookup' } });
    writeThenCompact(t, [[[[1, null, 'x'], RowKind.INSERT], [[3, 1, 'c'], RowKind.INSERT]], [[[2, 2, 'y'], RowKind.INSERT], [[3, null, 'd'], RowKind.INSERT]]]);
    const after = records(t);
    expect(after.every(([level]) => level > 0)).toBe(true);
    expect(after.map(([, , value]) => value)).toEqual([
      [1, null, null],
      [2, 2, 'y'],
      [3, 1, 'c'],
    ]);
  });
});

describe("the reader passes a key's lone record on as Java does", () => {
  // Each case: one record written alone; scan and `get` read what Java reads of the same file.
  // Before the change the reader folded it: [1, -5], [1, null], [1, ['a']], [1, null], [1, null, null].
  it('a lone retraction is no row, a lone add its row as written', () => {
    const cases: Array<[SchemaSpec, unknown[], RowKind, unknown[][]]> = [
      [SUM, [1, 5], RowKind.DELETE, []],
      [SUM, [1, 5], RowKind.UPDATE_BEFORE, []],
      [spec([{ name: 'q', type: 'INT' }], { 'merge-engine': 'aggregation', 'fields.q.aggregate-function': 'max', 'fields.q.ignore-retract': 'true' }), [1, 5], RowKind.DELETE, []],
      [COLLECT_DISTINCT, [1, ['a', 'a']], RowKind.INSERT, [[1, ['a', 'a']]]],
      [LISTAGG, [1, ' '], RowKind.INSERT, [[1, ' ']]],
      [GROUPS, [1, null, 'x'], RowKind.INSERT, [[1, null, 'x']]],
      [GROUPS, [1, null, 'x'], RowKind.UPDATE_AFTER, [[1, null, 'x']]],
      [GROUPS, [1, 4, 'x'], RowKind.DELETE, []],
      [spec([{ name: 'q', type: 'INT' }], {}), [1, 5], RowKind.DELETE, []],
    ];
    for (const [s, row, kind, want] of cases) {
      const ctx = `${JSON.stringify(s.options)} kind ${kind}`;
      const t = newTable(s);
      const w = t.newWriter();
      w.write(row, kind);
      w.write([2, ...row.slice(1)], RowKind.INSERT); // a second key, so the bucket is not one record
      w.commit();
      w.close();
      expect(records(t).map(([, k, v]) => [k, v]), ctx).toEqual([[kind, row], [RowKind.INSERT, [2, ...row.slice(1)]]]); // written as it came, as Java writes it
      const both = byKey([...want, [2, ...row.slice(1)]]);
      expect(java(t), ctx).toEqual(both);
      expect(scan(t), ctx).toEqual(both);
      expect(gets(t, [1, 2]), ctx).toEqual(both);
      // Projected and filtered scans take the same path.
      const r = t.reader();
      try {
        expect([...r.scan({ projection: ['id'], where: [{ column: 'id', op: '=', value: 1 }] })], ctx).toEqual(want.map((v) => [v[0]]));
      } finally {
        r.close();
      }
    }
  });

  it('a lone record among several runs; a key in two runs is folded', () => {
    const t = newTable(SUM);
    const w = t.newWriter();
    w.write([1, 5], RowKind.DELETE); // lone in its run, other runs hold other keys
    w.write([2, 5], RowKind.DELETE);
    w.commit();
    w.write([2, 7], RowKind.INSERT); // key 2: two records, folded: 7 - 5
    w.write([3, 1], RowKind.INSERT);
    w.commit();
    w.write([4, 6], RowKind.UPDATE_BEFORE);
    w.commit();
    w.close();
    expect(java(t)).toEqual([[2, 2], [3, 1]]);
    expect(scan(t)).toEqual([[2, 2], [3, 1]]);
    expect(gets(t, [1, 2, 3, 4])).toEqual([[2, 2], [3, 1]]);
  });

  it('a lookup table folds a lone record too, as Java meets it after its level-0 compaction', () => {
    // Java compacts a lookup table's level 0 at every commit with LookupChangelogMergeFunctionWrapper,
    // which folds every key, lone ones too: its readers meet a lookup table's records folded. This
    // store reads them so, and its commit-time lookup changelog agrees (changelog.ts); javaRead's
    // default for lookup tables is 'folded' for that reason.
    const t = newTable({ ...LISTAGG, options: { ...LISTAGG.options, 'changelog-producer': 'lookup' } });
    commitPlacedFiles(t, [
      { level: 3, records: [{ row: [1, 'a'], seq: 1 }, { row: [2, ' '], seq: 2 }, { row: [4, 'd'], seq: 3 }] },
      { level: 1, records: [{ row: [1, ' '], seq: 5 }, { row: [3, ' '], seq: 6 }] },
    ]);
    // 1: ' ' picked of two, folded (blank → null); 2 and 3: lone, folded too; 4: lone.
    const want = [[1, null], [2, null], [3, null], [4, 'd']];
    expect(byKey(javaRead(t).rows)).toEqual(want);
    expect(scan(t)).toEqual(want);
    expect(gets(t, [1, 2, 3, 4])).toEqual(want);

    const u = newTable({ ...SUM, options: { ...SUM.options, 'changelog-producer': 'lookup' } });
    commitPlacedFiles(u, [
      { level: 4, records: [{ row: [2, 9], seq: 1 }] },
      { level: 2, records: [{ row: [1, 5], seq: 3, kind: RowKind.DELETE }, { row: [2, 5], seq: 4, kind: RowKind.DELETE }] },
    ]);
    // 1: a lone -D folded into a row (-5); 2: the -D picked of two, folded into a row (-5).
    expect(byKey(javaRead(u).rows)).toEqual([[1, -5], [2, -5]]);
    expect(scan(u)).toEqual([[1, -5], [2, -5]]);
    expect(gets(u, [1, 2])).toEqual([[1, -5], [2, -5]]);
    // What a Java reader of these very files makes of them without compacting first.
    expect(java(u)).toEqual([[2, -5]]);
  });
});

describe('compaction passes a lone retraction on, and drops it at the bottom, as Java does', () => {
  it('a full compaction leaves what a read gives as it was', () => {
    const t = newTable(SUM);
    const w = t.newWriter();
    w.write([1, 5], RowKind.DELETE);
    w.commit();
    w.write([2, 7], RowKind.INSERT);
    w.commit();
    expect(scan(t)).toEqual([[2, 7]]); // as Java reads it
    w.compact(true);
    w.commit();
    w.close();
    // Folded (the code before), key 1 became `+I -5`, and a read showed a row that was not there.
    expect(records(t).map(([, kind, value]) => [kind, value])).toEqual([[RowKind.INSERT, [2, 7]]]);
    expect(scan(t)).toEqual([[2, 7]]);
    expect(java(t)).toEqual([[2, 7]]);
  });

  it('the merge of pending level-0 runs (stop trigger) keeps a lone retraction as it came', () => {
    // A write buffer of 1 byte flushes at every record; at three pending runs (the stop trigger)
    // the writer merges them into one before the commit (TableWriter.mergePending).
    const options = { ...SUM.options, 'write-buffer-size': '1 b', 'num-sorted-run.compaction-trigger': '3', 'num-sorted-run.stop-trigger': '3' };
    const t = newTable({ ...SUM, options });
    const w = t.newWriter();
    w.write([1, 5], RowKind.DELETE);
    for (let i = 0; i < 3; i++) w.write([2, 7 + i], RowKind.INSERT);
    w.commit();
    w.close();
    expect(t.latestSnapshot()!.id).toBe(1);
    expect(records(t).length).toBeLessThan(4); // the merge ran
    // Folded there, key 1 was written as `+I -5`, a row both readers then showed.
    expect(scan(t)).toEqual([[2, 24]]);
    expect(java(t)).toEqual([[2, 24]]);
  });
});

describe("mergeRuns' `lone` (what the incremental diff of two states needs to agree with the scan)", () => {
  /** A bucket's live rows by mergeRuns, as incremental.ts's bucketRows merges them (`lone` but for lookup tables). */
  const merged = (t: Table, lone: boolean): unknown[][] => {
    const out: unknown[][] = [];
    const s = t.latestSnapshot();
    if (!s) return out;
    for (const b of t.buckets(s)) {
      const sorted = t.runsOf(b.files);
      const runs = sorted.map((r) => r.files.map((f) => t.loadRun(b.partition, b.bucket, f)));
      const levels = foldsLowestLevelOnly(t.schema) ? sorted.map((r) => r.level) : undefined;
      for (const kv of mergeRuns(runs, t.compareKeys, createMergeFunction(t.schema), mergeOrder(t.schema), undefined, levels, lone && levels === undefined)) if (isAdd(kv.kind)) out.push(kv.value);
    }
    return byKey(out);
  };

  it('passes a lone record on as it is; without it the record is folded', () => {
    const t = newTable(SUM);
    const w = t.newWriter();
    w.write([1, 5], RowKind.DELETE);
    w.write([2, 5], RowKind.DELETE);
    w.commit();
    w.write([2, 7], RowKind.INSERT);
    w.commit();
    w.close();
    expect(merged(t, true)).toEqual([[2, 2]]);
    expect(merged(t, false)).toEqual([[1, -5], [2, 2]]);
    expect(scan(t)).toEqual([[2, 2]]);

    const u = newTable({ ...LISTAGG, options: { ...LISTAGG.options, 'changelog-producer': 'lookup' } });
    commitPlacedFiles(u, [
      { level: 3, records: [{ row: [1, 'a'], seq: 1 }, { row: [2, ' '], seq: 2 }] },
      { level: 1, records: [{ row: [1, ' '], seq: 5 }] },
    ]);
    expect(merged(u, true)).toEqual([[1, null], [2, null]]); // a lookup table folds a lone record too
    expect(merged(u, true)).toEqual(scan(u));
  });

  it('agrees with the scan on random tables (seeded)', () => {
    const seed = Number(process.env.LONE_SEED ?? (Date.now() % 1_000_000) + 1);
    console.log(`mergeRuns lone against the scan: seed ${seed} (replay with LONE_SEED=${seed})`);
    const rnd = mulberry32(seed);
    const int = (n: number) => Math.floor(rnd() * n);
    const specs: Array<[SchemaSpec, (k: number) => unknown[], boolean]> = [
      [SUM, (k) => [k, int(9) - 4], true],
      [{ ...SUM, options: { ...SUM.options, 'changelog-producer': 'lookup' } }, (k) => [k, int(9) - 4], true],
      [COLLECT_DISTINCT, (k) => [k, [['a', 'a'], ['b'], ['a', 'b', 'b']][int(3)]], false],
      [LISTAGG, (k) => [k, ['x', ' ', 'y'][int(3)]], false],
      [GROUPS, (k) => [k, int(3) === 0 ? null : int(5), ['p', null, 'q'][int(3)]], false],
      [{ ...GROUPS, options: { ...GROUPS.options, 'changelog-producer': 'lookup' } }, (k) => [k, int(3) === 0 ? null : int(5), ['p', 'q'][int(2)]], false],
    ];
    const started = Date.now();
    for (const [sp, row, retracts] of specs) {
      const t = newTable(sp);
      const w = t.newWriter();
      try {
        for (let step = 0; step < 40 && Date.now() - started < 20_000; step++) {
          const n = 1 + int(4);
          for (let i = 0; i < n; i++) w.write(row(int(8)), retracts && int(4) === 0 ? RowKind.DELETE : RowKind.INSERT);
          w.commit();
          if (int(6) === 0) {
            w.compact(int(2) === 0);
            w.commit();
          }
          const ctx = `seed ${seed}, ${JSON.stringify(sp.options)}, step ${step}`;
          expect(merged(t, true), ctx).toEqual(scan(t));
          expect(byKey(javaRead(t).rows), ctx).toEqual(scan(t));
        }
      } finally {
        w.close();
      }
    }
  });
});

describe("the model's outcomes of a key (testing/model.ts readOutcomes)", () => {
  const cols = ['item', 'loc', 'p', 'q'];
  const sum = aggregationFold({ q: { fn: 'sum', kind: { t: 'int', bits: 32 } } });
  const at = (kind: RowKind, q: number, order: number): Rec => ({ kind, row: { item: 'k', loc: 0, p: 0, q }, order });
  const texts = (h: Rec[]) => readOutcomes(sum, h, cols).map((o) => o.text ?? `error ${o.error!.pattern.source}`);
  it('one record reads as itself or its fold; a prefix a bottom compaction may drop is a possible start', () => {
    expect(texts([at(RowKind.DELETE, 5, 0)])).toEqual(['undefined', '["k",0,0,-5]']);
    expect(texts([at(RowKind.INSERT, 5, 0)])).toEqual(['["k",0,0,5]']);
    expect(texts([at(RowKind.INSERT, 5, 0), at(RowKind.DELETE, 2, 1)])).toEqual(['["k",0,0,3]']);
    // A lone -D dropped at the bottom before the +I met it (Java's compaction) leaves the +I alone.
    expect(texts([at(RowKind.DELETE, 5, 0), at(RowKind.INSERT, 3, 1)])).toEqual(['["k",0,0,-2]', '["k",0,0,3]']);
    const listagg = aggregationFold({ q: { fn: 'listagg', kind: { t: 'string' } } });
    expect(readOutcomes(listagg, [{ kind: RowKind.INSERT, row: { item: 'k', loc: 0, p: 0, q: ' ' }, order: 0 }], cols).map((o) => o.text)).toEqual(['["k",0,0," "]', '["k",0,0,null]']);
  });
});
