// Which files a compaction merges and which it only moves to the output level (compact-plan.ts),
// and what that does to a table whose keys only grow: its oldest files are no longer rewritten.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../catalog.ts';
import type { LevelSortedRun } from '../levels.ts';
import type { DataFileMeta } from '../manifest.ts';
import type { Table } from '../table.ts';
import { planCompaction, type CompactStep } from './compact-plan.ts';

/** A file with key range [min, max] (one INT key column), `size` bytes, at `level`. */
const file = (name: string, level: number, min: number, max: number, size: number, deletes: number | null = 0): DataFileMeta =>
  ({ fileName: `${name}.parquet`, level, fileSize: size, deleteRowCount: deletes, minKey: [min], maxKey: [max] }) as unknown as DataFileMeta;
const run = (level: number, ...files: DataFileMeta[]): LevelSortedRun => ({ level, files, totalSize: files.reduce((s, f) => s + f.fileSize, 0) });
const range = (f: DataFileMeta) => {
  const x = f as unknown as { minKey: number[]; maxKey: number[] };
  return { min: x.minKey, max: x.maxKey };
};
const cmp = (a: unknown[], b: unknown[]) => (a[0] as number) - (b[0] as number);
const show = (steps: CompactStep[]) =>
  steps.map((s) => (s.kind === 'rewrite' ? `rewrite ${s.files.map((f) => f.fileName.replace('.parquet', '')).sort().join('+')}` : `${s.kind} ${s.file.fileName.replace('.parquet', '')}`));
const plan = (runs: LevelSortedRun[], outputLevel: number, o: { maxLevel?: number; mayUpgrade?: (f: DataFileMeta) => boolean } = {}) =>
  show(planCompaction(runs, { outputLevel, maxLevel: o.maxLevel ?? 5, minFileSize: 70, ...(o.mayUpgrade ? { mayUpgrade: o.mayUpgrade } : {}) }, range, cmp));

describe('compaction plan (Paimon: IntervalPartition, upgrade or rewrite)', () => {
  it('upgrades a large file that overlaps nothing and merges the overlapping ones', () => {
    // a (L3, large) overlaps nothing; b (L0) and c (L3) overlap.
    expect(plan([run(0, file('b', 0, 50, 60, 10)), run(3, file('a', 3, 0, 10, 100), file('c', 3, 55, 90, 100))], 4)).toEqual(['upgrade a', 'rewrite b+c']);
  });

  it('merges small files that overlap nothing together with their neighbours, in key order', () => {
    // s1, s2 small and disjoint; L large between s2 and s3; s3 alone after L.
    const steps = plan([run(0, file('s1', 0, 0, 5, 10)), run(0, file('s2', 0, 6, 9, 10)), run(2, file('L', 2, 10, 20, 100)), run(0, file('s3', 0, 30, 40, 10))], 3);
    expect(steps).toEqual(['rewrite s1+s2', 'upgrade L', 'upgrade s3']); // a lone small file is upgraded too
  });

  it('leaves a file already at the output level alone, and rewrites one that must not reach the top with retractions', () => {
    expect(plan([run(0, file('n', 0, 50, 60, 100)), run(5, file('old', 5, 0, 10, 100))], 5)).toEqual(['keep old', 'upgrade n']);
    expect(plan([run(0, file('d', 0, 50, 60, 100, 3)), run(5, file('old', 5, 0, 10, 100))], 5)).toEqual(['keep old', 'rewrite d']);
    expect(plan([run(0, file('u', 0, 50, 60, 100, null)), run(5, file('old', 5, 0, 10, 100))], 5)).toEqual(['keep old', 'rewrite u']); // unknown count
    // Below the top a file with retractions may move up as it is.
    expect(plan([run(0, file('d', 0, 50, 60, 100, 3)), run(4, file('x', 4, 0, 10, 100))], 3, { maxLevel: 5 })).toEqual(['upgrade x', 'upgrade d']);
  });

  it('rewrites a file the caller will not move (another level format)', () => {
    expect(plan([run(0, file('a', 0, 0, 10, 100)), run(0, file('b', 0, 20, 30, 100))], 2, { mayUpgrade: (f) => f.fileName !== 'a.parquet' })).toEqual(['rewrite a', 'upgrade b']);
  });

  it('treats equal boundary keys as overlapping', () => {
    expect(plan([run(0, file('a', 0, 0, 10, 100)), run(1, file('b', 1, 10, 20, 100))], 2)).toEqual(['rewrite a+b']);
  });

  it('puts every file of the unit in exactly one step', () => {
    const runs = [run(0, file('a', 0, 0, 100, 10)), run(1, file('b', 1, 0, 40, 100), file('c', 1, 41, 60, 5), file('d', 1, 70, 80, 100)), run(2, file('e', 2, 200, 300, 100))];
    const steps = planCompaction(runs, { outputLevel: 3, maxLevel: 5, minFileSize: 70 }, range, cmp);
    const seen = steps.flatMap((s) => (s.kind === 'rewrite' ? s.files : [s.file])).map((f) => f.fileName).sort();
    expect(seen).toEqual(['a', 'b', 'c', 'd', 'e'].map((n) => `${n}.parquet`));
    expect(show(steps)).toEqual(['rewrite a+b+c+d', 'upgrade e']);
  });
});

describe('a table whose keys only grow', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const make = (options: Record<string, string>): Table => {
    const dir = mkdtempSync(join(tmpdir(), 'lsm-upgrade-'));
    dirs.push(dir);
    const catalog = new Catalog(dir);
    catalog.createDatabase('db');
    return catalog.createTable(
      { database: 'db', table: 'log' },
      {
        fields: [
          { name: 'id', type: 'BIGINT NOT NULL' },
          { name: 'body', type: 'STRING' },
        ],
        primaryKeys: ['id'],
        options: { bucket: '1', 'target-file-size': '16 kb', 'num-sorted-run.compaction-trigger': '3', ...options },
      },
    );
  };
  const live = (t: Table) => {
    const s = t.latestSnapshot();
    return s ? t.buckets(s).flatMap((b) => b.files) : [];
  };
  /** Appends `commits` commits of `per` rows with ids after the last; returns the rows rewritten by compactions. */
  const fill = (t: Table, commits: number, per: number, from = 0): { rewritten: number; maxLevelNames: Set<string> } => {
    const w = t.newWriter();
    let rewritten = 0;
    let id = from;
    for (let c = 0; c < commits; c++) {
      for (let i = 0; i < per; i++, id++) w.write([BigInt(id), `entry ${id} ${'x'.repeat(40)}`]);
      const before = new Set(live(t).map((f) => f.fileName));
      const r = w.commit();
      if (r.compactSnapshotId !== undefined) {
        // Rows in files the compaction wrote (new names that are not the APPEND's level-0 file).
        for (const f of live(t)) if (!before.has(f.fileName) && f.level > 0) rewritten += f.rowCount;
      }
    }
    w.close();
    return { rewritten, maxLevelNames: new Set(live(t).filter((f) => f.level === 3).map((f) => f.fileName)) };
  };

  it('keeps its oldest files through later compactions (moved up, not rewritten), and reads every row', () => {
    const t = make({});
    const first = fill(t, 40, 300);
    expect(first.maxLevelNames.size).toBeGreaterThan(1);
    const second = fill(t, 40, 300, 40 * 300);
    // Every top-level file of the first half is still there, byte for byte the same file.
    for (const name of first.maxLevelNames) expect(second.maxLevelNames.has(name), name).toBe(true);
    // Each row was written by compaction a few times at most, not once per doubling of the table.
    expect(second.rewritten).toBeLessThan(40 * 300 * 3);
    const ids = t.scanRows({}, { projection: ['id'] }).map((r) => Number(r[0]));
    expect(ids).toEqual(Array.from({ length: 80 * 300 }, (_, i) => i));
  });

  it('merges everything again where the changelog needs it (changelog-producer lookup)', () => {
    const t = make({ 'changelog-producer': 'lookup' });
    const first = fill(t, 20, 300);
    const second = fill(t, 20, 300, 20 * 300);
    const kept = [...first.maxLevelNames].filter((n) => second.maxLevelNames.has(n));
    expect(kept).toEqual([]);
    expect(t.scanRows({}, { projection: ['id'] })).toHaveLength(40 * 300);
  });
});
