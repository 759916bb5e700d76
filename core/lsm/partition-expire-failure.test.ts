// Partition expiration when a drop fails part-way (DESIGN.md, "Partition expiration", "Crashes and
// damage"): with `partition.expiration-batch-size` the drop is several OVERWRITE snapshots, and an
// error in a later batch (a full disk, a damaged index manifest) leaves the earlier batches
// dropped. The commit stands (its APPEND snapshot is made; the failure is its
// `maintenanceError`) and the writer goes on; what it holds of the partitions already
// dropped must not be written back.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ForwardingFileIO, LocalFileIO } from './file-io.ts';
import { LsmError } from './errors.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'lsm-partition-expire-failure-'));
  dirs.push(d);
  return d;
}

/** Local noon of a day of December 2026 (values-time compares local wall clocks). */
const noonDec = (day: number): number => new Date(2026, 11, day, 12, 0, 0).getTime();

/** Fails the atomic create of one snapshot file, once: what a full disk does to one batch's commit. */
class FailingSnapshotIO extends ForwardingFileIO {
  failPath: string | undefined;
  override createAtomic(path: string, data: Uint8Array): boolean {
    if (path === this.failPath) {
      this.failPath = undefined;
      throw new LsmError('IOError', `create ${path} failed: ENOSPC: no space left on device`, { path });
    }
    return super.createAtomic(path, data);
  }
}

const OPTIONS = {
  'file.compression': 'snappy',
  'partition.expiration-time': '2 d',
  'partition.expiration-check-interval': '0 s',
  'partition.expiration-batch-size': '1',
};

const PK: SchemaSpec = {
  fields: [{ name: 'dt', type: 'STRING NOT NULL' }, { name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }],
  partitionKeys: ['dt'],
  primaryKeys: ['dt', 'k'],
  // Three sorted runs start a compaction: the third file of a bucket is merged with the other two.
  options: { bucket: '1', 'num-sorted-run.compaction-trigger': '3', ...OPTIONS },
};

const APPEND: SchemaSpec = {
  fields: [{ name: 'dt', type: 'STRING NOT NULL' }, { name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }],
  partitionKeys: ['dt'],
  options: { bucket: '-1', ...OPTIONS },
};

describe('a drop whose second batch fails', () => {
  for (const [kind, spec, filesBefore] of [
    ['primary-key table', PK, 2],
    ['append table', APPEND, 4],
  ] as const) {
    it(`${kind}: the writer forgets the partition the first batch dropped, so a late row's compaction there does not name its dropped files`, () => {
      let now = noonDec(2);
      const io = new FailingSnapshotIO(new LocalFileIO());
      const t = Table.create(freshDir(), TableSchema.fromSpec(spec, now), { clock: () => now, fileIO: io });
      const warnings: string[] = [];
      const w = t.newWriter({ onWarning: (m) => warnings.push(m) });
      // Small files in 2026-12-01 (one short of a compaction), and rows in 2026-12-02.
      for (let i = 0; i < filesBefore; i++) {
        w.writeRecord({ dt: '2026-12-01', k: i, v: `old${i}` });
        w.writeRecord({ dt: '2026-12-02', k: i, v: `old${i}` });
        w.commit();
      }
      expect(t.scanRows()).toHaveLength(2 * filesBefore);

      // Four days on: 12-01 and 12-02 are expired, one batch each. The first batch's snapshot is
      // made, the second's create fails.
      now = noonDec(6);
      w.writeRecord({ dt: '2026-12-06', k: 1, v: 'today' });
      const latest = t.latestSnapshot()!.id;
      io.failPath = t.paths.snapshotFile(latest + 3); // APPEND, drop of 12-01, drop of 12-02
      // The commit's own APPEND snapshot stands; the failed drop is reported, not thrown.
      const failed = w.commit();
      expect(failed.snapshotId).toBe(latest + 1);
      expect(failed.maintenanceError?.message).toMatch(/ENOSPC/);
      expect(warnings).toEqual([expect.stringMatching(/partition expiration after it failed.*ENOSPC/s)]);
      expect([...new Set(t.scanRows().map((r) => r[0]))].sort()).toEqual(['2026-12-02', '2026-12-06']);

      // A late row for 12-01 (Java writes it too). Had the writer kept 12-01's dropped files, this
      // would be the bucket's third run (fifth small file), compacted with them before the check,
      // which drops 12-01 again and 12-02.
      w.writeRecord({ dt: '2026-12-01', k: 99, v: 'late' });
      expect(w.commit().partitions?.dropped).toEqual(['dt=2026-12-01', 'dt=2026-12-02']);
      w.close();
      expect(t.scanRows()).toEqual([['2026-12-06', 1, 'today']]);
      // Every snapshot since the failure reads: none DELETEs a file the table no longer has.
      for (let id = latest + 1; id <= t.latestSnapshot()!.id; id++) expect(() => t.scanRows({ snapshotId: id }), `snapshot ${id}`).not.toThrow();
    });
  }
});
