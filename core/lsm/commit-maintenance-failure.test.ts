// A commit is its APPEND snapshot: once that is made, its rows and properties are committed. The
// maintenance after it (compaction, partition expiration, snapshot expiration) failing — a full
// disk during the compaction's file write, an unlink that fails — used to make `commit()` throw,
// so a caller retried rows already committed or reported a decision lost that was not. Now the
// commit returns its snapshot with the failure in `CommitResult.maintenanceError`, tells it to the
// writer's `onWarning`, and the next commit tries the maintenance again. A damaged file it reads
// is still thrown (Corruption): reads fail on it too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { APPEND_COMPACT_MIN_FILES } from './append-writer.ts';
import { LsmError } from './errors.ts';
import { ForwardingFileIO, localFileIO } from './file-io.ts';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Once armed, fails every write of a data file and every unlink of a snapshot file, as a broken disk does. */
class BrokenAfterArmIO extends ForwardingFileIO {
  armed = false;
  /** Counts a snapshot file created while armed: the failures start after the commit's own snapshot. */
  snapshotsMade = 0;
  fail: 'data file' | 'snapshot unlink' | 'data read' = 'data file';
  /** The error an unlink fails with ('snapshot unlink'). */
  unlinkError = 'EIO: i/o error';
  private failing(): boolean {
    return this.armed && this.snapshotsMade > 0;
  }
  override writeNew(path: string, data: Uint8Array): void {
    if (this.fail === 'data file' && this.failing() && /\/data-[^/]*$/.test(path)) throw new LsmError('IOError', `write ${path} failed: ENOSPC: no space left on device`, { path });
    super.writeNew(path, data);
  }
  override createAtomic(path: string, data: Uint8Array): boolean {
    const made = super.createAtomic(path, data);
    if (made && this.armed && /\/snapshot\/snapshot-\d+$/.test(path)) this.snapshotsMade++;
    return made;
  }
  override readFile(path: string): Buffer {
    const bytes = super.readFile(path);
    // A damaged data file: its bytes cut short, as a torn disk gives them back.
    return this.fail === 'data read' && this.failing() && /\/data-[^/]*$/.test(path) ? bytes.subarray(0, 20) : bytes;
  }
  override remove(path: string): void {
    if (this.fail === 'snapshot unlink' && this.failing() && /\/snapshot\/snapshot-\d+$/.test(path)) throw new LsmError('IOError', `remove ${path} failed: ${this.unlinkError}`, { path });
    super.remove(path);
  }
}

function table(options: Record<string, string>, primaryKey = true, cacheBytes?: number): { t: Table; io: BrokenAfterArmIO } {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-commit-maintenance-'));
  dirs.push(dir);
  const io = new BrokenAfterArmIO(localFileIO);
  const spec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'INT' }], primaryKeys: primaryKey ? ['k'] : [], options };
  return { t: Table.create(dir, TableSchema.fromSpec(spec, 0), { fileIO: io, ...(cacheBytes !== undefined ? { cacheBytes } : {}) }), io };
}

it('a compaction that fails after the APPEND snapshot leaves the commit standing, told to the caller', () => {
  const { t, io } = table({ bucket: '1', 'num-sorted-run.compaction-trigger': '2' });
  const warnings: string[] = [];
  const w = t.newWriter({ onWarning: (m) => warnings.push(m) });
  try {
    w.writeRecord({ k: 1, v: 1 });
    expect(w.commit().compactSnapshotId).toBeUndefined();
    io.armed = true;
    w.writeRecord({ k: 2, v: 2 });
    const r = w.commit({ progress: '2' });
    expect(r.snapshotId).toBe(2);
    expect(r.compactSnapshotId).toBeUndefined();
    expect(r.maintenanceError?.kind).toBe('IOError');
    expect(r.maintenanceError?.message).toMatch(/ENOSPC/);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/snapshot 2 is committed.*compaction.*failed.*ENOSPC/s);
    expect(t.committedProperties()).toEqual({ progress: '2' });
    expect(t.scanRows()).toEqual([[1, 1], [2, 2]]);
    // The disk is back: the next commit compacts.
    io.armed = false;
    w.writeRecord({ k: 3, v: 3 });
    const next = w.commit();
    expect(next.maintenanceError).toBeUndefined();
    expect(next.compactSnapshotId).toBeDefined();
  } finally {
    w.close();
  }
  expect(Table.open(t.paths.root).scanRows()).toEqual([[1, 1], [2, 2], [3, 3]]);
});

it('a snapshot expiration that fails after the APPEND snapshot leaves the commit standing', () => {
  const { t, io } = table({ bucket: '1', 'write-only': 'false', 'num-sorted-run.compaction-trigger': '50', 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '1' });
  const warnings: string[] = [];
  const w = t.newWriter({ onWarning: (m) => warnings.push(m) });
  try {
    w.writeRecord({ k: 1, v: 1 });
    w.commit();
    io.armed = true;
    io.fail = 'snapshot unlink';
    w.writeRecord({ k: 2, v: 2 });
    const r = w.commit();
    expect(r.snapshotId).toBe(2);
    expect(r.maintenanceError?.message).toMatch(/EIO/);
    expect(warnings[0]).toMatch(/snapshot 2 is committed.*expiration.*failed/s);
    io.armed = false;
    w.writeRecord({ k: 3, v: 3 });
    expect(w.commit().expire?.expiredSnapshots).toEqual([1, 2]);
  } finally {
    w.close();
  }
  expect(t.scanRows()).toEqual([[1, 1], [2, 2], [3, 3]]);
});

it('an append table: a failed compaction after the APPEND snapshot leaves the commit standing', () => {
  const { t, io } = table({}, false);
  const warnings: string[] = [];
  const w = t.newWriter({ onWarning: (m) => warnings.push(m) });
  try {
    // Small files are concatenated from APPEND_COMPACT_MIN_FILES (5) on: the fifth commit compacts.
    for (let k = 1; k < APPEND_COMPACT_MIN_FILES; k++) {
      w.writeRecord({ k, v: k });
      w.commit();
    }
    io.armed = true;
    w.writeRecord({ k: 5, v: 5 });
    const r = w.commit();
    expect(r.snapshotId).toBe(5);
    expect(r.maintenanceError?.kind).toBe('IOError');
    expect(warnings[0]).toMatch(/snapshot 5 is committed.*compaction.*failed/s);
  } finally {
    w.close();
  }
  expect(t.scanRows().map((r) => r[0])).toEqual([1, 2, 3, 4, 5]);
});

it('a failure of the commit itself (its APPEND snapshot) still throws', () => {
  const { t, io } = table({ bucket: '1' });
  const w = t.newWriter();
  try {
    io.armed = true;
    io.snapshotsMade = 1; // fail from the start: the flush's own file
    w.writeRecord({ k: 1, v: 1 });
    expect(() => w.commit()).toThrow(/ENOSPC/);
    expect(t.latestSnapshot()).toBeUndefined();
  } finally {
    w.close();
  }
});

it('a damaged data file the compaction after the APPEND snapshot reads is still thrown, as Corruption (the commit stands)', () => {
  // No decoded files kept: the compaction reads the file from disk.
  const { t, io } = table({ bucket: '1', 'num-sorted-run.compaction-trigger': '2' }, true, 0);
  const warnings: string[] = [];
  const w = t.newWriter({ onWarning: (m) => warnings.push(m) });
  try {
    w.writeRecord({ k: 1, v: 1 });
    w.commit();
    // Reads fail on such a file too: passed with a warning at every commit, it would be hidden.
    io.fail = 'data read';
    io.armed = true;
    w.writeRecord({ k: 2, v: 2 });
    expect(() => w.commit()).toThrow(expect.objectContaining({ kind: 'Corruption' }));
    expect(t.latestSnapshot()!.id, 'the APPEND snapshot was made before the compaction read').toBe(2);
    expect(warnings).toEqual([]);
  } finally {
    w.close();
  }
});

it('a maintenance failing the same way at every commit is warned once; again when it fails otherwise or after one went through', () => {
  // A site commits every few seconds: a disk that refuses the unlinks filled its log with one
  // warning per commit. Every CommitResult still carries the failure.
  const { t, io } = table({ bucket: '1', 'write-only': 'false', 'num-sorted-run.compaction-trigger': '50', 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '1' });
  const warnings: string[] = [];
  const w = t.newWriter({ onWarning: (m) => warnings.push(m) });
  let k = 0;
  const commit = () => {
    w.writeRecord({ k: ++k, v: k });
    return w.commit();
  };
  try {
    commit();
    io.armed = true;
    io.fail = 'snapshot unlink';
    for (let i = 0; i < 3; i++) expect(commit().maintenanceError?.message).toMatch(/EIO/);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/snapshot expiration after it failed .*not warned again while it fails so.*EIO/s);
    // Failing otherwise (another error code): warned.
    io.unlinkError = 'EACCES: permission denied';
    expect(commit().maintenanceError?.message).toMatch(/EACCES/);
    expect(commit().maintenanceError?.message).toMatch(/EACCES/);
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatch(/EACCES/);
    // A maintenance that goes through, then the same failure again: warned again.
    io.armed = false;
    expect(commit().maintenanceError).toBeUndefined();
    io.armed = true;
    expect(commit().maintenanceError?.message).toMatch(/EACCES/);
    expect(warnings).toHaveLength(3);
  } finally {
    w.close();
  }
  expect(t.scanRows()).toHaveLength(k);
});
