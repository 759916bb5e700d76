// Reads at snapshots that expired after a Table object that only reads had parsed them (the agent's,
// the sync engine's; or a process reading a table another process writes). The snapshot cache
// must not hand such a snapshot out as if it were retained: a read at it is NotFound (expired), as
// a read through a fresh Table is, never Corruption for the files expiration deleted, nor rows of
// a state no longer retained. A missing file under a snapshot that is still there stays Corruption.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
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

const OPTIONS = {
  bucket: '1',
  // Six snapshots retained (3 commits and their compactions), and compaction at every second run,
  // so expiration deletes the files (data files included) of what it expires.
  'snapshot.num-retained.min': '1',
  'snapshot.num-retained.max': '6',
  'num-sorted-run.compaction-trigger': '2',
};

function newTable(extra: Record<string, string> = {}): { dir: string; table: Table } {
  const root = mkdtempSync(join(tmpdir(), 'lsm-expired-read-'));
  dirs.push(root);
  const dir = join(root, 't');
  const schema = TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { ...OPTIONS, ...extra } }, Date.now());
  return { dir, table: Table.create(dir, schema) };
}

/** Commits `n` times, each a new key and a change of key 0. */
function commits(w: TableWriter, from: number, n: number): void {
  for (let i = from; i < from + n; i++) {
    w.writeRecord({ k: i, v: i });
    w.writeRecord({ k: 0, v: i });
    w.commit();
  }
}

/** The kind of the error `f` throws (iterating what it returns), or 'none'. */
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
 * Commits 3 times (`commits`), reading after each commit every new snapshot through `r` in every
 * way a reader caches it: the snapshot, its plan, its manifests and data, its changes. Returns the
 * ids `r` read (commits and the writer's compactions).
 */
function commitAndRead(w: TableWriter, r: Table): number[] {
  const read: number[] = [];
  let prev = r.snapshots.latestId() ?? 0;
  for (let i = 1; i <= 3; i++) {
    commits(w, 10 + i, 1);
    const latest = r.snapshots.latestId()!;
    expect([...r.changes({ from: prev, to: latest, mode: 'delta' })].length).toBeGreaterThan(0);
    expect([...r.changes({ from: prev, to: latest, mode: 'diff' })].length).toBeGreaterThan(0);
    for (let id = prev + 1; id <= latest; id++) {
      expect(r.scanRows({ snapshotId: id }).length).toBeGreaterThan(0);
      read.push(id);
    }
    prev = latest;
  }
  return read;
}

describe('snapshots expired under a Table object that read them', () => {
  for (const cacheBytes of [0, undefined]) {
    it(`expired by another Table object in this process: NotFound at every read, none of the files' Corruption (reader's run cache ${cacheBytes === 0 ? 'off' : 'on'})`, () => {
      const { dir, table } = newTable();
      const w = table.newWriter();
      const r = Table.open(dir, cacheBytes === undefined ? {} : { cacheBytes });
      const read = commitAndRead(w, r);
      commits(w, 20, 12); // the writer expires what r read (and more), and deletes their files
      const earliest = table.snapshots.earliestId()!;
      expect(earliest).toBeGreaterThan(Math.max(...read));
      const latest = table.snapshots.latestId()!;
      for (const f of [
        () => r.scanRows({ snapshotId: read[1]! }),
        () => r.reader({ snapshotId: read[2]! }).get({ k: 0 }),
        () => r.changes({ from: read[0]!, to: latest, mode: 'delta' }),
        () => r.changes({ from: read[1]!, to: latest, mode: 'diff' }),
        () => r.changes({ from: 0, to: Math.max(...read), mode: 'delta' }),
      ]) {
        expect(errorOf(f)).toMatch(/^NotFound: snapshot \d+ (of \S+ )?(has expired|does not exist)/);
      }
      expect(r.snapshots.tryGet(read[1]!)).toBeUndefined();
      expect(r.snapshots.exists(read[2]!)).toBe(false);
      // What is retained reads as before, and as a fresh Table reads it.
      expect(r.scanRows()).toEqual(Table.open(dir).scanRows());
      expect(r.scanRows({ snapshotId: earliest })).toEqual(Table.open(dir).scanRows({ snapshotId: earliest }));
      w.close();
    });
  }

  it('a missing data file of a snapshot that is still there is Corruption, through a reader that cached it', () => {
    const { dir, table } = newTable({ 'write-only': 'true' }); // APPEND snapshots only, nothing expires
    const w = table.newWriter();
    commits(w, 1, 3);
    w.close();
    const r = Table.open(dir, { cacheBytes: 0 });
    const latest = r.latestSnapshot()!;
    const prev = r.snapshots.get(latest.id - 1);
    expect(r.scanRows().length).toBeGreaterThan(0);
    expect([...r.changes({ from: prev.id - 1, to: latest.id, mode: 'delta' })].length).toBeGreaterThan(0);
    for (const e of r.manifests.liveFiles(latest)) unlinkSync(r.dataFilePath(e.partition, e.bucket, e.file.fileName));
    expect(errorOf(() => r.scanRows())).toMatch(/^Corruption: .*data file listed in the manifest is missing/);
    expect(errorOf(() => r.scanRows({ snapshotId: latest.id }))).toMatch(/^Corruption: /);
    expect(errorOf(() => r.changes({ from: prev.id - 1, to: latest.id, mode: 'delta' }))).toMatch(/^Corruption: .*missing/);
    expect(errorOf(() => r.changes({ from: 0, to: latest.id, mode: 'diff' }))).toMatch(/^Corruption: .*missing/);
    // And a missing manifest list of a retained snapshot the reader has not planned yet.
    const r2 = Table.open(dir, { cacheBytes: 0 });
    r2.snapshots.get(prev.id);
    unlinkSync(r2.paths.manifestFile(prev.deltaManifestList));
    expect(errorOf(() => r2.scanRows({ snapshotId: prev.id }))).toMatch(/^Corruption: .*manifest list referenced by a snapshot is missing/);
    expect(errorOf(() => r2.changes({ from: prev.id - 1, to: prev.id, mode: 'delta' }))).toMatch(/^Corruption: .*manifest list referenced by a snapshot is missing/);
  });

  /**
   * A table whose snapshots `read` were read through `r` (everything cached), and `planless` has
   * snapshot 1 cached without its plan (a reader that resolved it, e.g. to see its time); then a
   * writer in another process commits and expires them all.
   */
  function expiredByAnotherProcess(): { dir: string; r: Table; planless: Table; read: number[]; latest: number } {
    const { dir, table } = newTable();
    const w = table.newWriter();
    const r = Table.open(dir, { cacheBytes: 0 });
    const planless = Table.open(dir, { cacheBytes: 0 });
    commits(w, 1, 1);
    expect(planless.snapshots.get(1).id).toBe(1);
    const read = commitAndRead(w, r);
    w.close();
    const script = `
      import { Table } from ${JSON.stringify(resolve(__dirname, 'table.ts'))};
      const w = Table.open(${JSON.stringify(dir)}).newWriter();
      for (let i = 20; i < 32; i++) { w.writeRecord({ k: i, v: i }); w.writeRecord({ k: 0, v: i }); w.commit(); }
      w.close();
      console.log('done');
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(child.stdout.trim(), child.stderr).toBe('done');
    // Read without a Table object: every one of this table in this process shares what it learns of EARLIEST.
    const earliest = Number(readFileSync(join(dir, 'snapshot', 'EARLIEST'), 'utf8'));
    expect(earliest).toBeGreaterThan(Math.max(...read));
    return { dir, r, planless, read, latest: Number(readFileSync(join(dir, 'snapshot', 'LATEST'), 'utf8')) };
  }

  it('expired by a writer in another process: a read of a cached snapshot whose plan is not cached is NotFound', () => {
    const { dir, planless } = expiredByAnotherProcess();
    expect(errorOf(() => planless.scanRows({ snapshotId: 1 }))).toMatch(/^NotFound: snapshot 1 of .* has expired/);
    // It has learnt of the expiration: the snapshot reads as gone from now on.
    expect(planless.snapshots.tryGet(1)).toBeUndefined();
    expect(planless.scanRows()).toEqual(Table.open(dir).scanRows());
  }, 60_000);

  it('expired by a writer in another process: changes across cached snapshots are NotFound', () => {
    const { dir, r, read, latest } = expiredByAnotherProcess();
    const last = Math.max(...read);
    // The first read meets the missing files; the later ones find the snapshots gone at once.
    expect(errorOf(() => r.changes({ from: read[0]! - 1, to: last, mode: 'delta' }))).toMatch(new RegExp(`^NotFound: snapshot ${read[0]} of .* has expired`));
    expect(errorOf(() => r.changes({ from: read[1]!, to: latest, mode: 'diff' }))).toMatch(new RegExp(`^NotFound: snapshot ${read[1]} (of \\S+ )?(has expired|does not exist)`));
    expect(errorOf(() => r.changes({ from: read[0]!, to: last, mode: 'delta' }))).toMatch(new RegExp(`^NotFound: snapshot ${read[1]} (of \\S+ )?(has expired|does not exist)`));
    expect(r.snapshots.tryGet(read[1]!)).toBeUndefined();
    expect(r.scanRows()).toEqual(Table.open(dir).scanRows());
  }, 60_000);

  it('expired by a writer in another process: a diff from a cached snapshot is NotFound', () => {
    const { r, read, latest } = expiredByAnotherProcess();
    expect(errorOf(() => r.changes({ from: read[1]!, to: latest, mode: 'diff' }))).toMatch(new RegExp(`^NotFound: snapshot ${read[1]} of .* has expired`));
  }, 60_000);

  it('expired by a writer in another process: a scan and a get at a snapshot whose plan is cached, meeting its missing data files, are NotFound', () => {
    const { dir, r, read } = expiredByAnotherProcess();
    const last = Math.max(...read); // r planned it last: its plan is among the eight cached
    // Readers made before anything taught r of the expiration: r hands out its cached snapshot.
    const scanner = r.reader({ snapshotId: last });
    const getter = r.reader({ snapshotId: last });
    expect(scanner.snapshot!.id).toBe(last);
    const expired = new RegExp(`^NotFound: snapshot ${last} of .* has expired.*found its files gone \\(.*bucket-0/data-`);
    // Both read before either is checked, so each shows what it gives on its own.
    const got = { scan: errorOf(() => scanner.scan()), get: errorOf(() => getter.get({ k: 0 })) };
    expect(got).toEqual({ scan: expect.stringMatching(expired), get: expect.stringMatching(expired) });
    scanner.close();
    getter.close();
    expect(r.snapshots.tryGet(last)).toBeUndefined();
    expect(r.scanRows()).toEqual(Table.open(dir).scanRows());
  }, 60_000);

  it('a missing data file of a snapshot that is still there is Corruption at a scan and a get whose plan is cached', () => {
    const { dir, table } = newTable({ 'write-only': 'true' }); // APPEND snapshots only, nothing expires
    const w = table.newWriter();
    commits(w, 1, 3);
    w.close();
    const r = Table.open(dir, { cacheBytes: 0 });
    const reader = r.reader();
    expect([...reader.scan()].length).toBeGreaterThan(0);
    expect(reader.get({ k: 0 })).toEqual([0, 3]); // plans the snapshot (cached) and reads its files
    for (const e of r.manifests.liveFiles(reader.snapshot!)) unlinkSync(r.dataFilePath(e.partition, e.bucket, e.file.fileName));
    expect(errorOf(() => reader.scan())).toMatch(/^Corruption: .*data file listed in the manifest is missing/);
    expect(errorOf(() => reader.get({ k: 0 }))).toMatch(/^Corruption: .*data file listed in the manifest is missing/);
    reader.close();
  });

  it('a missing manifest of a tag whose snapshot expired is Corruption: the tag keeps its files', () => {
    const { dir, table } = newTable();
    const w = table.newWriter();
    commits(w, 1, 1);
    const tagged = table.createTag('kept', 1).snapshot;
    commits(w, 2, 12); // expires snapshot 1; the tag keeps its files
    w.close();
    expect(table.snapshots.exists(1)).toBe(false);
    const r = Table.open(dir, { cacheBytes: 0 });
    expect(r.scanRows({ tag: 'kept' }).length).toBeGreaterThan(0);
    unlinkSync(r.paths.manifestFile(tagged.deltaManifestList));
    expect(errorOf(() => Table.open(dir).scanRows({ tag: 'kept' }))).toMatch(/^Corruption: .*manifest list referenced by a snapshot is missing/);
    expect(errorOf(() => Table.open(dir).changes({ from: 'kept', to: table.snapshots.latestId()!, mode: 'diff' }))).toMatch(/^Corruption: .*manifest list referenced by a snapshot is missing/);
  });
});

describe('snapshots a rollback in this process removed, under a Table object that read them', () => {
  it('ids committed again after a rollback read as committed, not as the reader had cached them', () => {
    const { dir, table } = newTable({ 'write-only': 'true' }); // APPEND snapshots only, nothing expires
    const w = table.newWriter();
    commits(w, 1, 4);
    const r = Table.open(dir);
    const before = r.scanRows({ snapshotId: 4 });
    expect(r.snapshots.get(3).id).toBe(3);
    w.rollbackTo(2);
    commits(w, 100, 2); // snapshots 3 and 4 again, other rows
    const fresh = Table.open(dir);
    expect(fresh.scanRows({ snapshotId: 4 })).not.toEqual(before);
    expect(r.scanRows({ snapshotId: 4 })).toEqual(fresh.scanRows({ snapshotId: 4 }));
    expect(r.snapshots.get(3)).toEqual(fresh.snapshots.get(3));
    expect([...r.changes({ from: 2, to: 4, mode: 'delta' })]).toEqual([...fresh.changes({ from: 2, to: 4, mode: 'delta' })]);
    w.close();
  });

  it('after a rollback to a tag of an expired snapshot, the ids from it on read as committed again', () => {
    const { dir, table } = newTable();
    const w = table.newWriter();
    commits(w, 1, 1);
    table.createTag('first', 1);
    const r = Table.open(dir);
    for (let i = 2; i < 14; i++) {
      commits(w, i, 1); // expires snapshot 1 (the tag keeps its files) and many after it
      expect(r.scanRows().length).toBeGreaterThan(0); // r caches each latest snapshot
    }
    const expired = r.snapshots.earliestId()! - 1;
    expect(expired).toBeGreaterThan(2);
    w.rollbackTo('first'); // every snapshot removed, snapshot 1 written back from the tag
    commits(w, 200, 3); // snapshots 2.. again
    const fresh = Table.open(dir);
    expect(r.snapshots.earliestId()).toBe(1);
    for (let id = 1; id <= 4; id++) expect(r.scanRows({ snapshotId: id })).toEqual(fresh.scanRows({ snapshotId: id }));
    expect(r.scanRows()).toEqual(fresh.scanRows());
    // And they are cached again: the ids below the old EARLIEST are not read from disk at every use.
    const cached = r.snapshots.cachedCount();
    r.snapshots.get(2);
    expect(r.snapshots.cachedCount()).toBe(cached);
    expect(r.snapshots.get(2)).toBe(r.snapshots.get(2));
    w.close();
  });
});

describe('snapshots a rollback in another process removed, under a Table object that read them', () => {
  it('once a writer here takes the lock, every Table object of the table reads them again', () => {
    const { dir, table } = newTable({ 'write-only': 'true' }); // nothing compacts or expires
    const w = table.newWriter();
    commits(w, 1, 2);
    w.close();
    const r = Table.open(dir);
    const before = r.snapshots.get(2);
    expect(r.scanRows()).toEqual(Table.open(dir).scanRows());
    // Another process rolls back to snapshot 1 and commits snapshot 2 again, with other content.
    const script = `
      import { Table } from ${JSON.stringify(resolve(__dirname, 'table.ts'))};
      const w = Table.open(${JSON.stringify(dir)}).newWriter();
      w.rollbackTo(1);
      w.writeRecord({ k: 99, v: 99 });
      w.commit();
      w.close();
      console.log('done');
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(child.stdout.trim(), child.stderr).toBe('done');
    // A writer here takes the lock: the snapshots read before may have been rolled back and
    // re-used (SnapshotManager.invalidate), for r's cache as much as for the writer's own.
    const w2 = table.newWriter();
    const fresh = Table.open(dir);
    expect(fresh.snapshots.get(2).deltaManifestList).not.toBe(before.deltaManifestList);
    expect(r.snapshots.get(2).deltaManifestList).toBe(fresh.snapshots.get(2).deltaManifestList);
    expect(r.scanRows()).toEqual(fresh.scanRows());
    expect(r.scanRows()).toContainEqual([99, 99]);
    w2.close();
  }, 60_000);
});

describe('a table dropped and created again at the same place in this process', () => {
  it('caches its snapshots again: what was learnt of the dropped one does not hold', () => {
    const { dir, table } = newTable();
    const w = table.newWriter();
    commits(w, 1, 12); // EARLIEST well above 1
    w.close();
    expect(table.snapshots.earliestId()).toBeGreaterThan(5);
    rmSync(dir, { recursive: true });
    // Write-only: no expiration writes EARLIEST (which would tell this process the new truth).
    const again = Table.create(dir, TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { ...OPTIONS, 'write-only': 'true' } }, Date.now()));
    const w2 = again.newWriter();
    commits(w2, 1, 2);
    w2.close();
    const r = Table.open(dir);
    expect(r.scanRows()).toEqual(Table.open(dir).scanRows());
    expect(r.snapshots.get(1)).toBe(r.snapshots.get(1)); // cached, not read from disk at every use
    expect(r.latestSnapshot()).toBe(r.latestSnapshot());
  });
});
