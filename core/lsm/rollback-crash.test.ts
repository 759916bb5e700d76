// A rollback to a tag whose snapshot has expired, killed at each of its writes to `snapshot/`
// (rollback.ts): every later snapshot is removed and the tag's snapshot is written back. Whatever
// the point of the kill, the next open reads a snapshot of the old history (or the tag's), the
// retained ids run without a gap from EARLIEST to the latest, and the rollback run again restores
// the tag. A kill between removing the last later snapshot and writing the tag's back left a table
// with no snapshot at all: it read as empty, and the rollback run again was refused.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { ForwardingFileIO, localFileIO } from './file-io.ts';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * Stops (as a kill would) at the `killAt`-th change under `snapshot/`, counting from 1 (0: never):
 * that change and every later write anywhere fail, as none is made after a kill.
 */
class KillingIO extends ForwardingFileIO {
  changes = 0;
  killAt = 0;
  private dead = false;
  private step(path: string): void {
    if (!this.dead && path.includes('/snapshot/')) {
      this.changes++;
      if (this.changes === this.killAt) this.dead = true;
    }
    if (this.dead) throw new LsmError('IOError', `killed before ${path}`, { path });
  }
  revive(): void {
    this.dead = false;
    this.killAt = 0;
  }
  override createAtomic(path: string, data: Uint8Array): boolean {
    this.step(path);
    return super.createAtomic(path, data);
  }
  override replaceAtomic(path: string, data: Uint8Array): void {
    this.step(path);
    super.replaceAtomic(path, data);
  }
  override writeNew(path: string, data: Uint8Array): void {
    this.step(path);
    super.writeNew(path, data);
  }
  override remove(path: string): void {
    this.step(path);
    super.remove(path);
  }
  override removeDir(dir: string): void {
    this.step(dir);
    super.removeDir(dir);
  }
}

const OPTIONS = { bucket: '1', 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '4', 'num-sorted-run.compaction-trigger': '2' };

type Rows = ReturnType<Table['scanRows']>;

/** A table whose tag 'first' holds snapshot 1, long expired; its rows at each retained snapshot. */
function setUp(): { dir: string; io: KillingIO; tagRows: Rows; rowsAt: Map<number, Rows> } {
  const root = mkdtempSync(join(tmpdir(), 'lsm-rollback-crash-'));
  dirs.push(root);
  const dir = join(root, 't');
  const io = new KillingIO(localFileIO);
  const schema = TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: OPTIONS }, Date.now());
  const table = Table.create(dir, schema, { fileIO: io });
  const w = table.newWriter();
  w.writeRecord({ k: 1, v: 1 });
  w.commit();
  table.createTag('first', 1);
  const tagRows = table.scanRows();
  for (let i = 2; i < 10; i++) {
    w.writeRecord({ k: i, v: i });
    w.writeRecord({ k: 1, v: 100 + i });
    w.commit();
  }
  w.close();
  expect(table.snapshots.earliestId()).toBeGreaterThan(1);
  const rowsAt = new Map<number, Rows>();
  for (const id of table.snapshots.listIds()) rowsAt.set(id, table.scanRows({ snapshotId: id }));
  return { dir, io, tagRows, rowsAt };
}

/**
 * The latest snapshot as Paimon's HintFileUtils.findLatest finds it: LATEST when the snapshot after
 * it does not exist (whether or not LATEST's own does), else the largest id listed.
 */
function javaLatestId(dir: string): number | undefined {
  const snap = join(dir, 'snapshot');
  const hint = existsSync(join(snap, 'LATEST')) ? Number(readFileSync(join(snap, 'LATEST'), 'utf8')) : undefined;
  if (hint !== undefined && hint > 0 && !existsSync(join(snap, `snapshot-${hint + 1}`))) return hint;
  const ids = readdirSync(snap).filter((n) => /^snapshot-\d+$/.test(n)).map((n) => Number(n.slice(9)));
  return ids.length === 0 ? undefined : Math.max(...ids);
}

describe('a destructive rollback, killed part-way', () => {
  it.each([
    ['a tag of an expired snapshot', 'first'],
    ['the earliest retained snapshot', 'earliest'],
  ])('to %s: leaves a snapshot of the old history (or the target\'s) at every point, one Java finds too, and runs again to the end', (_, to) => {
    const targetOf = (dir: string): string | number => (to === 'first' ? 'first' : Table.open(dir).snapshots.earliestId()!);
    // How many changes under snapshot/ the whole rollback makes.
    const probe = setUp();
    const w0 = Table.open(probe.dir, { fileIO: probe.io }).newWriter();
    const probeTarget = targetOf(probe.dir);
    probe.io.changes = 0;
    w0.rollbackTo(probeTarget);
    w0.close();
    const total = probe.io.changes;
    expect(total).toBeGreaterThan(2);

    for (let killAt = 1; killAt <= total; killAt++) {
      const { dir, io, tagRows, rowsAt } = setUp();
      const target = targetOf(dir);
      const targetId = target === 'first' ? 1 : (target as number);
      const targetRows = target === 'first' ? tagRows : rowsAt.get(targetId)!;
      const w = Table.open(dir, { fileIO: io }).newWriter();
      io.changes = 0;
      io.killAt = killAt;
      try {
        w.rollbackTo(target);
      } catch (e) {
        // A kill at the LATEST hint a commit writes is not seen (a hint): the next write fails.
        expect(String(e), `kill ${killAt}`).toMatch(/killed before/);
      }
      io.revive();
      w.close();

      const after = Table.open(dir);
      const latest = after.snapshots.latestId();
      expect(latest, `kill ${killAt}: a snapshot is left`).toBeDefined();
      const earliest = after.snapshots.earliestId()!;
      const ids = after.snapshots.listIds().filter((id) => id >= earliest);
      expect(ids, `kill ${killAt}: no gap from EARLIEST to the latest`).toEqual(Array.from({ length: latest! - earliest + 1 }, (_, i) => earliest + i));
      expect(after.scanRows(), `kill ${killAt}: the latest reads as it was committed`).toEqual(latest === targetId ? targetRows : rowsAt.get(latest!));
      // Before any writer of ours repairs LATEST (TableWriter's open does). One step is known to
      // leave LATEST naming a removed snapshot (rollback.ts): the write-back's last removal, when
      // only the written-back snapshot is left; at every other point Java finds ours.
      const onlyTarget = after.snapshots.listIds().join() === String(targetId);
      if (!(target === 'first' && onlyTarget && javaLatestId(dir) !== targetId)) {
        expect(javaLatestId(dir), `kill ${killAt}: Java's latest`).toBe(latest);
      }

      const again = after.newWriter();
      again.rollbackTo(target);
      again.close();
      const done = Table.open(dir);
      expect(done.snapshots.latestId(), `kill ${killAt}: rolled back`).toBe(targetId);
      expect(javaLatestId(dir)).toBe(targetId);
      expect(done.scanRows()).toEqual(targetRows);
    }
  });
});
