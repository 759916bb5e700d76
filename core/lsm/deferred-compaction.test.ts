// The writer's deferred compaction (WriterOptions.compaction 'deferred'): a commit plans the
// compaction, `compactStep` runs it in slices and commits it; writes and commits go on meanwhile,
// the stop trigger bounds the runs, and nothing it wrote is lost to expiration or left behind.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Catalog } from './catalog.ts';
import { CompactionSlicer } from './compaction/slicer.ts';
import { RowKind } from './key-value.ts';
import type { SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';
import type { CompactStepResult } from './table-writer.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SPEC: SchemaSpec = {
  fields: [
    { name: 'k', type: 'STRING' },
    { name: 'v', type: 'INT' },
    { name: 'note', type: 'STRING' },
  ],
  primaryKeys: ['k'],
  options: { bucket: '1', 'num-sorted-run.compaction-trigger': '3', 'num-sorted-run.stop-trigger': '6', 'target-file-size': '16 kb' },
};

function table(spec: SchemaSpec = SPEC): Table {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-deferred-'));
  dirs.push(dir);
  const catalog = new Catalog(dir);
  catalog.createDatabase('db');
  return catalog.createTable({ database: 'db', table: 't' }, spec);
}

const key = (i: number): string => `k${String(i).padStart(5, '0')}`;
const NOTE = 'x'.repeat(40);

/** Rows i from..to-1 with v = i + add, committed as one run. */
function writeRange(w: ReturnType<Table['newWriter']>, from: number, to: number, add: number): ReturnType<ReturnType<Table['newWriter']>['commit']> {
  for (let i = from; i < to; i++) w.writeRecord({ k: key(i), v: i + add, note: NOTE });
  return w.commit();
}

function state(t: Table): Map<string, number> {
  return new Map(t.scanRows().map((r) => [r[0] as string, r[1] as number]));
}

function bucketFiles(t: Table): string[] {
  return readdirSync(join(t.paths.root, 'bucket-0')).filter((f) => f.startsWith('data-')).sort();
}

function liveFiles(t: Table): string[] {
  return t.buckets(t.latestSnapshot()!)[0]!.files.map((f) => f.fileName).sort();
}

/** Runs `w`'s deferred compaction in steps of no time at all until it is done (at most 10,000): how many it took and the last. */
function stepToEnd(w: ReturnType<Table['newWriter']>): { steps: number; last: CompactStepResult } {
  let steps = 0;
  let last: CompactStepResult;
  do {
    last = w.compactStep(0);
    steps++;
  } while (!last.done && steps < 10_000);
  return { steps, last };
}

describe('deferred compaction', () => {
  it('a commit only plans it; compactStep runs it in slices and commits one COMPACT snapshot', () => {
    const t = table();
    const w = t.newWriter({ compaction: 'deferred' });
    for (let c = 0; c < 3; c++) {
      const r = writeRange(w, 0, 2000, c);
      expect(r.compactSnapshotId).toBeUndefined();
    }
    expect(w.compacting).toBe(true);
    expect(t.latestSnapshot()!.commitKind).toBe('APPEND');
    expect(t.runsOf(t.buckets(t.latestSnapshot()!)[0]!.files)).toHaveLength(3);
    const { steps, last } = stepToEnd(w);
    // 3 runs of 2,000 keys: opening the runs, 256 keys per look at the clock, a file per ~16 kB.
    expect(steps).toBeGreaterThan(10);
    expect(last.snapshotId).toBe(t.latestSnapshot()!.id);
    expect(t.latestSnapshot()!.commitKind).toBe('COMPACT');
    expect(w.compacting).toBe(false);
    expect(t.runsOf(t.buckets(t.latestSnapshot()!)[0]!.files)).toHaveLength(1);
    const s = state(t);
    expect(s.size).toBe(2000);
    expect([...s].every(([k, v]) => v === Number(k.slice(1)) + 2)).toBe(true);
    w.close();
  });

  it('with no time limit a step does it all, and a writer without work is done at once', () => {
    const t = table();
    const w = t.newWriter({ compaction: 'deferred' });
    expect(w.compactStep(0)).toEqual({ done: true });
    for (let c = 0; c < 3; c++) writeRange(w, 0, 500, c);
    const r = w.compactStep(Infinity);
    expect(r.done).toBe(true);
    expect(r.snapshotId).toBe(t.latestSnapshot()!.id);
    expect(r.expire).toBeDefined();
    w.close();
  });

  it('writes, deletes and commits between the slices end in the state an inline writer makes (seeded)', () => {
    const seed = Number(process.env.SEED ?? Date.now() % 1_000_000);
    console.log(`deferred compaction model: seed ${seed}`);
    let x = seed || 1;
    const rand = (n: number): number => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return x % n;
    };
    const deferred = table();
    const inline = table();
    const wd = deferred.newWriter({ compaction: 'deferred' });
    const wi = inline.newWriter();
    const model = new Map<string, number>();
    let compactions = 0;
    for (let op = 0; op < 400; op++) {
      const r = rand(10);
      if (r < 6) {
        const n = 1 + rand(300);
        for (let j = 0; j < n; j++) {
          const k = key(rand(3000));
          if (rand(20) === 0) {
            model.delete(k);
            for (const w of [wd, wi]) w.writeRecord({ k, v: 0, note: NOTE }, RowKind.DELETE);
          } else {
            const v = rand(1_000_000);
            model.set(k, v);
            for (const w of [wd, wi]) w.writeRecord({ k, v, note: NOTE });
          }
        }
      } else if (r < 8) {
        wd.commit();
        wi.commit();
      } else {
        const s = wd.compactStep(rand(3) === 0 ? 1 : 0);
        if (s.snapshotId !== undefined) compactions++;
      }
      if (op % 50 === 49) {
        wd.commit();
        expect(state(deferred)).toEqual(model);
        expect(deferred.runsOf(deferred.buckets(deferred.latestSnapshot()!)[0]!.files).length).toBeLessThanOrEqual(6);
      }
    }
    wd.commit();
    wi.commit();
    while (!wd.compactStep(5).done);
    expect(compactions).toBeGreaterThan(0);
    expect(state(deferred)).toEqual(model);
    expect(state(inline)).toEqual(model);
    wd.close();
    wi.close();
  });

  it('never holds more runs than the stop trigger when nobody runs the steps', () => {
    const t = table();
    const w = t.newWriter({ compaction: 'deferred' });
    let compacted = 0;
    for (let c = 0; c < 20; c++) {
      const r = writeRange(w, c * 100, c * 100 + 100, 0);
      if (r.compactSnapshotId !== undefined) compacted++;
      expect(t.runsOf(t.buckets(t.latestSnapshot()!)[0]!.files).length).toBeLessThanOrEqual(6);
    }
    expect(compacted).toBeGreaterThan(0);
    expect(state(t).size).toBe(2000);
    w.close();
  });

  it('keeps the files it wrote from expiration until it commits them', () => {
    const t = table({ ...SPEC, options: { ...SPEC.options, 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2' } });
    const w = t.newWriter({ compaction: 'deferred' });
    for (let c = 0; c < 3; c++) writeRange(w, 0, 2000, c);
    // Run it until it has written some of its files but not all.
    let written = 0;
    for (let i = 0; i < 10_000 && written === 0; i++) {
      expect(w.compactStep(0).done).toBe(false);
      written = bucketFiles(t).length - liveFiles(t).length;
    }
    expect(written).toBeGreaterThan(0);
    // Commits that expire a snapshot each; their sweeps list the bucket directory now and then.
    for (let i = 0; i < 70; i++) w.commit({ n: String(i) });
    while (!w.compactStep(5).done);
    expect(t.latestSnapshot()!.commitKind).toBe('COMPACT');
    expect(state(t).size).toBe(2000);
    w.close();
  });

  it("keeps the writer's flushed, uncommitted rows from the expiration that follows it", () => {
    let now = 1_800_000_000_000;
    const dir = mkdtempSync(join(tmpdir(), 'lsm-deferred-'));
    dirs.push(dir);
    const catalog = new Catalog(dir, { clock: () => now });
    catalog.createDatabase('db');
    const t = catalog.createTable({ database: 'db', table: 't' }, { ...SPEC, options: { ...SPEC.options, 'snapshot.num-retained.min': '1', 'snapshot.time-retained': '1 s', 'write-buffer-size': '64 kb' } });
    const w = t.newWriter({ compaction: 'deferred' });
    for (let c = 0; c < 3; c++) writeRange(w, 0, 200, c);
    expect(w.compacting).toBe(true);
    // Rows past the write buffer are flushed to a file no snapshot references yet.
    const before = bucketFiles(t).length;
    for (let i = 0; i < 3000; i++) w.writeRecord({ k: key(10_000 + i), v: i, note: NOTE });
    expect(bucketFiles(t).length).toBeGreaterThan(before);
    now += 60_000; // every snapshot but the latest is past its retention: the step's expiration sweeps
    const r = w.compactStep(Infinity);
    expect(r.expire!.expiredSnapshots.length).toBeGreaterThan(0);
    w.commit();
    expect(state(t).size).toBe(3200);
    w.close();
  });

  it('close gives it up and removes what it wrote; the next writer plans it again', () => {
    const t = table();
    const w = t.newWriter({ compaction: 'deferred' });
    for (let c = 0; c < 3; c++) writeRange(w, 0, 2000, c);
    const live = liveFiles(t);
    for (let i = 0; i < 10_000 && bucketFiles(t).length === live.length; i++) w.compactStep(0);
    expect(bucketFiles(t).length).toBeGreaterThan(live.length);
    const wrote = bucketFiles(t).filter((f) => !live.includes(f)).map((f) => join(t.paths.root, 'bucket-0', f));
    expect(wrote.some((p) => t.cache.peek(p) !== undefined)).toBe(true); // its outputs go into the run cache
    w.close();
    expect(bucketFiles(t)).toEqual(live);
    expect(wrote.filter((p) => t.cache.peek(p) !== undefined)).toEqual([]); // and leave it with their files
    const w2 = t.newWriter({ compaction: 'deferred' });
    writeRange(w2, 0, 10, 9);
    expect(w2.compacting).toBe(true);
    while (!w2.compactStep(5).done);
    expect(t.latestSnapshot()!.commitKind).toBe('COMPACT');
    expect(state(t).get(key(5))).toBe(14);
    expect(state(t).get(key(1500))).toBe(1502);
    w2.close();
  });

  it('a kill -9 in the middle leaves the table whole at its last commit; what it wrote is an orphan the next writer sweeps', () => {
    const t = table();
    const w = t.newWriter();
    for (let c = 0; c < 2; c++) writeRange(w, 0, 2000, c);
    w.close();
    // Another process: a third run (planning the compaction), then slices until it has written files, then SIGKILL.
    const script = `
      import { readdirSync } from 'node:fs';
      import { Catalog } from ${JSON.stringify(resolve(__dirname, 'index.ts'))};
      const t = new Catalog(${JSON.stringify(t.paths.root.slice(0, -'/db.db/t'.length))}).getTable({ database: 'db', table: 't' });
      const w = t.newWriter({ compaction: 'deferred' });
      for (let i = 0; i < 2000; i++) w.writeRecord({ k: 'k' + String(i).padStart(5, '0'), v: i + 2, note: 'x'.repeat(40) });
      w.commit();
      const live = t.buckets(t.latestSnapshot()).flatMap((b) => b.files).length;
      for (let i = 0; i < 10000 && readdirSync(${JSON.stringify(join(t.paths.root, 'bucket-0'))}).length === live; i++) w.compactStep(0);
      console.log('written ' + (readdirSync(${JSON.stringify(join(t.paths.root, 'bucket-0'))}).length - live));
      process.kill(process.pid, 'SIGKILL');
    `;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.signal).toBe('SIGKILL');
    expect(r.stdout).toMatch(/^written [1-9]/);
    expect(t.latestSnapshot()!.commitKind).toBe('APPEND');
    expect(bucketFiles(t).length).toBeGreaterThan(liveFiles(t).length);
    const s = state(t);
    expect(s.size).toBe(2000);
    expect([...s].every(([k, v]) => v === Number(k.slice(1)) + 2)).toBe(true);
    // The dead process's lock is taken over; its files are orphans; the compaction is planned again.
    const w2 = t.newWriter({ compaction: 'deferred' });
    expect(w2.removeOrphanFiles(0).length).toBeGreaterThan(0);
    expect(bucketFiles(t)).toEqual(liveFiles(t));
    writeRange(w2, 0, 10, 7);
    while (!w2.compactStep(5).done);
    expect(t.latestSnapshot()!.commitKind).toBe('COMPACT');
    expect(state(t).get(key(3))).toBe(10);
    expect(state(t).get(key(1999))).toBe(2001);
    w2.close();
  }, 30_000);

  it('compact() finishes the one under way before its own', () => {
    const t = table();
    const w = t.newWriter({ compaction: 'deferred' });
    for (let c = 0; c < 3; c++) writeRange(w, 0, 2000, c);
    w.compactStep(0);
    expect(w.compacting).toBe(true);
    const before = t.latestSnapshot()!.id;
    const id = w.compact(true);
    expect(w.compacting).toBe(false);
    expect(id).toBe(t.latestSnapshot()!.id);
    expect(id).toBeGreaterThan(before);
    expect(t.latestSnapshot()!.commitKind).toBe('COMPACT');
    expect(state(t).size).toBe(2000);
    w.close();
  });

  /** Rows the live files hold, tombstones included, and the levels of their runs. */
  const held = (t: Table) => {
    const files = t.buckets(t.latestSnapshot()!)[0]!.files;
    return { rows: files.reduce((n, f) => n + f.rowCount, 0), levels: [...new Set(files.map((f) => f.level))].sort() };
  };

  /** A table of 2,000 keys at its top level, then the first `deleted` of them deleted in one more commit. */
  function purged(w: ReturnType<Table['newWriter']>, deleted: number): void {
    writeRange(w, 0, 2000, 0);
    w.compact(true);
    for (let i = 0; i < deleted; i++) w.writeRecord({ k: key(i), v: null, note: null }, RowKind.DELETE);
    w.commit();
  }

  it('a full compaction asked for takes the deleted keys out of the files, in slices', () => {
    const t = table();
    const w = t.newWriter({ compaction: 'deferred' });
    purged(w, 1500);
    // Two runs are below the trigger: no compaction planned, and the tombstones stay beside the rows they delete.
    expect(w.compacting).toBe(false);
    expect(held(t).rows).toBe(3500);
    expect(state(t).size).toBe(500);
    expect(w.requestFullCompaction()).toBe(true);
    expect(w.compacting).toBe(true);
    const { steps, last } = stepToEnd(w);
    expect(steps).toBeGreaterThan(1);
    expect(last.snapshotId).toBe(t.latestSnapshot()!.id);
    expect(t.latestSnapshot()!.commitKind).toBe('COMPACT');
    expect(held(t)).toEqual({ rows: 500, levels: [t.schema.options.numLevels - 1] });
    expect(state(t).size).toBe(500);
    // Asked for once: the next commit plans only what the picker finds.
    writeRange(w, 5000, 5001, 0);
    expect(w.compacting).toBe(false);
    w.close();
  });

  it('asked for during a compaction, it is planned when that one is done', () => {
    const t = table();
    const w = t.newWriter({ compaction: 'deferred' });
    purged(w, 100);
    // Two small runs more (four in all, above the trigger of 3) of the same keys: the picker merges
    // them and the tombstones into the level below the top, where tombstones stay.
    writeRange(w, 3000, 3100, 0);
    writeRange(w, 3000, 3100, 1);
    expect(w.compacting).toBe(true);
    expect(w.requestFullCompaction()).toBe(false);
    const committed: { done: boolean; snapshotId?: number }[] = [];
    for (let steps = 0; steps < 10_000; steps++) {
      const r = w.compactStep(0);
      if (r.snapshotId !== undefined) committed.push({ done: r.done, snapshotId: r.snapshotId });
      if (r.done) break;
    }
    // The picker's round committed with more to come, then the full one.
    expect(committed.map((c) => c.done)).toEqual([false, true]);
    expect(held(t)).toEqual({ rows: 2000, levels: [t.schema.options.numLevels - 1] });
    expect(state(t).size).toBe(2000);
    w.close();
  });

  it('an inline writer is told to compact(true)', () => {
    const t = table();
    const w = t.newWriter();
    expect(() => w.requestFullCompaction()).toThrow(/requestFullCompaction: the writer of .* compacts inline; call compact\(true\)/);
    w.close();
  });

  it('refuses a bad value and the tables it cannot defer for, naming the option', () => {
    const t = table();
    expect(() => t.newWriter({ compaction: 'later' as never })).toThrow(/writer option 'compaction': expected 'inline' or 'deferred', got "later"/);
    const lookup = table({ ...SPEC, options: { ...SPEC.options, 'changelog-producer': 'lookup' } });
    expect(() => lookup.newWriter({ compaction: 'deferred' })).toThrow(/writer option 'compaction'.*changelog-producer' is lookup/);
    const dv = table({ ...SPEC, options: { ...SPEC.options, 'deletion-vectors.enabled': 'true' } });
    expect(() => dv.newWriter({ compaction: 'deferred' })).toThrow(/deletion-vectors.enabled/);
    const append = table({ ...SPEC, primaryKeys: [], options: { bucket: '-1' } });
    expect(() => append.newWriter({ compaction: 'deferred' })).toThrow(/no primary key/);
    // The lock is released after a refusal: a writer can be opened.
    t.newWriter().close();
    lookup.newWriter().close();
  });
});

describe('CompactionSlicer', () => {
  const turn = () => new Promise((r) => setImmediate(r));

  it('runs one slice per turn of the event loop until the compaction is committed', async () => {
    const t = table();
    const w = t.newWriter({ compaction: 'deferred' });
    for (let c = 0; c < 3; c++) writeRange(w, 0, 2000, c);
    const slicer = new CompactionSlicer(0.001); // a step per slice: a run opened, or 256 keys
    const steps = vi.spyOn(w, 'compactStep');
    const committed: number[] = [];
    const hooks = { committed: (id: number) => committed.push(id), failed: (e: unknown) => { throw e; } };
    slicer.after(w, hooks);
    slicer.after(w, hooks); // one chain per writer
    expect(steps).not.toHaveBeenCalled(); // not inside the commit's turn
    await turn();
    expect(steps).toHaveBeenCalledTimes(1);
    for (let i = 0; i < 10_000 && committed.length === 0; i++) await turn();
    expect(committed).toEqual([t.latestSnapshot()!.id]);
    expect(steps.mock.calls.length).toBeGreaterThan(10);
    expect(w.compacting).toBe(false);
    w.close();
    expect(() => new CompactionSlicer(0)).toThrow(/sliceMs: expected a positive number/);
  });

  it('reports a failed slice and runs no more; after stop() nothing runs', async () => {
    const t = table();
    const w = t.newWriter({ compaction: 'deferred' });
    for (let c = 0; c < 3; c++) writeRange(w, 0, 2000, c);
    const slicer = new CompactionSlicer(1);
    const steps = vi.spyOn(w, 'compactStep').mockImplementationOnce(() => {
      throw new Error('disk gone');
    });
    const failures: string[] = [];
    slicer.after(w, { failed: (e) => failures.push((e as Error).message) });
    for (let i = 0; i < 5; i++) await turn();
    expect(failures).toEqual(['disk gone']);
    expect(steps).toHaveBeenCalledTimes(1);
    steps.mockClear();
    slicer.after(w, { failed: (e) => failures.push((e as Error).message) });
    slicer.stop();
    for (let i = 0; i < 5; i++) await turn();
    expect(steps).not.toHaveBeenCalled();
    w.close();
  });
});
