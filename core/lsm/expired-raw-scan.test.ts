// Snapshots expired by another process under a Table object that only reads, for the tables whose
// scans read files without a key merge (raw-scan.ts: append tables, deletion-vector primary-key
// tables), and tags created through such a Table. The reader still has the snapshot and its plan
// cached (the snapshot cache learns of another process's expiration only when it next reads
// EARLIEST), so its scan meets the files expiration deleted: that must be NotFound (expired), as
// a scan of a primary-key table is (snapshot-expired-read.test.ts), never Corruption; a file missing
// under a snapshot that is still there stays Corruption. A tag of an expired snapshot must be
// refused (NotFound), never written naming files that are gone.
//
// Expiration in this process is seen at once (the snapshot cache's floor is shared by every Table
// object of a table), so "another process" is a child process here.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';
import type { TableWriter } from './table-writer.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Kind = 'append' | 'dv';

// Few snapshots retained, so expiration deletes what it expires (data files of files compaction
// replaced included): append tables concatenate 5 small files, DV tables compact at every commit.
const OPTIONS = { 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '4' };

function newTable(kind: Kind, extra: Record<string, string> = {}): { dir: string; table: Table } {
  const root = mkdtempSync(join(tmpdir(), 'lsm-expired-raw-'));
  dirs.push(root);
  const dir = join(root, 't');
  const fields = [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'INT' }];
  const spec = kind === 'append' ? { fields, options: { ...OPTIONS, bucket: '-1', ...extra } } : { fields, primaryKeys: ['k'], options: { ...OPTIONS, bucket: '1', 'deletion-vectors.enabled': 'true', ...extra } };
  return { dir, table: Table.create(dir, TableSchema.fromSpec(spec, Date.now())) };
}

/** Commits `n` times, each a new key and (a DV table: an update of key 0, so vectors are written) a row of key 0. */
function commits(w: TableWriter, from: number, n: number): void {
  for (let i = from; i < from + n; i++) {
    w.writeRecord({ k: i, v: i });
    w.writeRecord({ k: 0, v: i });
    w.commit();
  }
}

/** The kind and message of the error `f` throws (iterating what it returns), or 'none'. */
function errorOf(f: () => unknown): string {
  try {
    const r = f();
    if (r !== null && typeof r === 'object' && Symbol.iterator in r) [...(r as Iterable<unknown>)];
    return 'none';
  } catch (e) {
    if (e instanceof LsmError) return `${e.kind}: ${e.message}`;
    throw e;
  }
}

/**
 * A writer in another process (first rolling back to `rollbackTo` when given) commits `n` times (as
 * `commits`), fully compacting half-way (so the files and vectors of before are all replaced), and
 * expires; returns EARLIEST after (1 when nothing has expired).
 */
function commitInChild(dir: string, from: number, n: number, rollbackTo?: number): number {
  const script = `
    import { Table } from ${JSON.stringify(resolve(__dirname, 'table.ts'))};
    const w = Table.open(${JSON.stringify(dir)}).newWriter();
    ${rollbackTo === undefined ? '' : `w.rollbackTo(${rollbackTo});`}
    for (let i = ${from}; i < ${from + n}; i++) {
      w.writeRecord({ k: i, v: i }); w.writeRecord({ k: 0, v: i }); w.commit();
      if (i === ${from + Math.floor(n / 2)}) w.compact(true);
    }
    w.close();
    console.log('done');
  `;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  expect(child.stdout.trim(), child.stderr).toBe('done');
  // Read without a Table object: every one of this table in this process shares what it learns of EARLIEST.
  const hint = join(dir, 'snapshot', 'EARLIEST');
  return existsSync(hint) ? Number(readFileSync(hint, 'utf8')) : 1;
}

/**
 * A table of `kind` with 4 commits (a DV table: and a full compaction, so it has vectors), every
 * retained snapshot scanned through `r` (its snapshot, plan, index manifest and vectors cached; no
 * run cache, so data files are opened at every scan), the last one planned only through
 * `planOnly`; then another process commits and expires all of them.
 */
function expiredByAnotherProcess(kind: Kind): { dir: string; r: Table; planOnly: Table; last: number } {
  const { dir, table } = newTable(kind);
  const w = table.newWriter();
  const r = Table.open(dir, { cacheBytes: 0 });
  const planOnly = Table.open(dir, { cacheBytes: 0 });
  commits(w, 1, 2);
  // A DV table: the full compaction's top-level file gets a vector at the next commits.
  if (kind === 'dv') w.compact(true);
  commits(w, 3, 2);
  w.close();
  const last = r.snapshots.latestId()!;
  if (kind === 'dv') expect(r.snapshots.get(last).indexManifest).toBeTruthy();
  for (let id = r.snapshots.earliestId()!; id <= last; id++) {
    const reader = r.reader({ snapshotId: id });
    expect([...reader.scan()].length).toBeGreaterThan(0);
    reader.close();
  }
  expect(planOnly.buckets(planOnly.snapshots.get(last)).length).toBeGreaterThan(0);
  const planned = r.buckets(r.snapshots.get(last));
  expect(commitInChild(dir, 20, 12)).toBeGreaterThan(last);
  // Expiration deleted data files the cached plan of `last` names: a scan meets one.
  const gone = planned.flatMap((b) => b.files.filter((f) => !existsSync(r.dataFilePath(b.partition, b.bucket, f.fileName))));
  expect(gone.length).toBeGreaterThan(0);
  return { dir, r, planOnly, last };
}

describe('raw scans at a snapshot another process expired, through a Table object that had planned it', () => {
  for (const kind of ['append', 'dv'] as const) {
    it(`${kind}: a scan meeting its missing data files is NotFound, not Corruption`, () => {
      const { dir, r, last } = expiredByAnotherProcess(kind);
      // Made before anything taught r of the expiration: r hands out its cached snapshot and plan.
      const scanner = r.reader({ snapshotId: last });
      expect(scanner.snapshot!.id).toBe(last);
      expect(errorOf(() => scanner.scan())).toMatch(new RegExp(`^NotFound: snapshot ${last} of .* has expired.*found its files gone \\(.*bucket-0/data-`));
      scanner.close();
      // It has learnt of the expiration; what is retained reads as a fresh Table reads it.
      expect(r.snapshots.tryGet(last)).toBeUndefined();
      expect(r.scanRows()).toEqual(Table.open(dir).scanRows());
    }, 60_000);
  }

  it('dv: a get meeting its missing data files is NotFound too', () => {
    const { r, last } = expiredByAnotherProcess('dv');
    const getter = r.reader({ snapshotId: last });
    expect(errorOf(() => getter.get({ k: 0 }))).toMatch(new RegExp(`^NotFound: snapshot ${last} of .* has expired`));
    getter.close();
  }, 60_000);

  it('dv: a scan of a snapshot planned but never read, meeting its missing index manifest, is NotFound', () => {
    const { r, planOnly, last } = expiredByAnotherProcess('dv');
    const s = r.snapshots.get(last); // r read it: its index manifest is cached by r, not by planOnly
    expect(existsSync(planOnly.paths.manifestFile(s.indexManifest!))).toBe(false);
    const scanner = planOnly.reader({ snapshotId: last });
    expect(errorOf(() => scanner.scan())).toMatch(new RegExp(`^NotFound: snapshot ${last} of .* has expired.*found its files gone \\(.*index-manifest-`));
    scanner.close();
  }, 60_000);
});

describe('raw scans at a snapshot still there', () => {
  for (const kind of ['append', 'dv'] as const) {
    it(`${kind}: a missing data file is Corruption, also through a reader that had planned it`, () => {
      const { dir, table } = newTable(kind, { 'write-only': 'true' }); // nothing compacts or expires
      const w = table.newWriter();
      commits(w, 1, 3);
      if (kind === 'dv') w.compact(true); // a write-only DV table's rows are read from level 1 on only
      w.close();
      const r = Table.open(dir, { cacheBytes: 0 });
      const reader = r.reader();
      expect([...reader.scan()].length).toBeGreaterThan(0);
      const live = r.manifests.liveFiles(reader.snapshot!).filter((e) => kind === 'append' || e.file.level > 0);
      expect(live.length).toBeGreaterThan(0);
      for (const e of live) unlinkSync(r.dataFilePath(e.partition, e.bucket, e.file.fileName));
      expect(errorOf(() => reader.scan())).toMatch(/^Corruption: .*data file listed in the manifest is missing/);
      expect(errorOf(() => r.scanRows({ snapshotId: reader.snapshot!.id }))).toMatch(/^Corruption: .*data file listed in the manifest is missing/);
      reader.close();
    });
  }

  it('append: a missing data file under a tag whose snapshot expired is Corruption: the tag keeps its files', () => {
    const { dir, table } = newTable('append');
    const w = table.newWriter();
    commits(w, 1, 1);
    const tagged = table.createTag('kept', 1).snapshot;
    commits(w, 2, 12); // expires snapshot 1; the tag keeps its files
    w.close();
    expect(table.snapshots.exists(1)).toBe(false);
    const r = Table.open(dir, { cacheBytes: 0 });
    const reader = r.reader({ tag: 'kept' });
    expect([...reader.scan()]).toEqual([[1, 1], [0, 1]]);
    for (const e of r.manifests.liveFiles(tagged)) unlinkSync(r.dataFilePath(e.partition, e.bucket, e.file.fileName));
    expect(errorOf(() => reader.scan())).toMatch(/^Corruption: .*data file listed in the manifest is missing/);
    reader.close();
  });
});

describe('createTag through a Table object whose snapshot cache is stale', () => {
  it('refuses (NotFound) a snapshot another process expired, writing no tag; tags a retained one', () => {
    const { dir, table } = newTable('dv');
    const w = table.newWriter();
    commits(w, 1, 3);
    w.close();
    const r = Table.open(dir, { cacheBytes: 0 });
    for (let id = 1; id <= 3; id++) r.snapshots.get(id); // cached, as a reader that read them has them
    const earliest = commitInChild(dir, 20, 12);
    expect(earliest).toBeGreaterThan(3);
    expect(errorOf(() => r.createTag('late', 2))).toMatch(/^NotFound: cannot tag 'late': snapshot 2 does not exist/);
    expect(existsSync(r.paths.tagFile('late'))).toBe(false);
    expect(r.snapshots.tryGet(2)).toBeUndefined();
    // A retained snapshot is tagged as before, and the tag reads as a fresh Table reads it.
    expect(r.createTag('kept', earliest).snapshot.id).toBe(earliest);
    expect(Table.open(dir).scanRows({ tag: 'kept' })).toEqual(Table.open(dir).scanRows({ snapshotId: earliest }));
  }, 60_000);

  it('tags an expired snapshot a tag still holds, from that tag', () => {
    const { dir, table } = newTable('append');
    const w = table.newWriter();
    commits(w, 1, 1);
    table.createTag('first', 1);
    w.close();
    const r = Table.open(dir, { cacheBytes: 0 });
    r.snapshots.get(1);
    expect(commitInChild(dir, 20, 12)).toBeGreaterThan(1);
    expect(r.createTag('again', 1).snapshot).toEqual(r.tags.get('first').snapshot);
    expect(Table.open(dir).scanRows({ tag: 'again' })).toEqual([[1, 1], [0, 1]]);
  }, 60_000);

  it('tags what a snapshot id holds on disk after another process rolled it back and committed it again', () => {
    const { dir, table } = newTable('dv', { 'write-only': 'true' }); // nothing expires
    const w = table.newWriter();
    commits(w, 1, 4);
    w.close();
    const r = Table.open(dir, { cacheBytes: 0 });
    const old = r.snapshots.get(3);
    commitInChild(dir, 100, 2, 2); // snapshots 3 and 4 again, other rows
    const fresh = Table.open(dir);
    expect(fresh.snapshots.get(3).deltaManifestList).not.toBe(old.deltaManifestList);
    expect(r.createTag('redone', 3).snapshot).toEqual(fresh.snapshots.get(3));
    expect(Table.open(dir).scanRows({ tag: 'redone' })).toEqual(fresh.scanRows({ snapshotId: 3 }));
  }, 60_000);
});
