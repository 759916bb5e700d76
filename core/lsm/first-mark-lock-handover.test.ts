// A spread first mark across a change of the writer lock (expire.ts, "Spread mark"): a snapshot
// this Table object expired before its turn to be marked waits in its mark state as a dying root;
// when another writer (another Table object, the CLI's orphan removal, another process) completes
// its own mark meanwhile, it deletes that snapshot's manifest lists, rightly. The first Table
// object's next commit then reached the root and threw Corruption after its snapshot was committed
// (the ingest takes that for a damaged table). A dying root that no longer reads leaves its files
// to the listing sweep, which ends every incomplete mark.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { Table } from './table.ts';
import type { Snapshot } from './snapshot.ts';
import { ageTags } from './testing/tags.ts';

const DAY = 86_400_000;
const MIN = 60_000;
const FIELDS = [
  { name: 'k', type: 'INT NOT NULL' },
  { name: 'v', type: 'INT' },
];
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Throws naming the first missing file of any retained snapshot or tag. */
function checkRetained(root: string, when: string): void {
  const c = Table.open(root);
  const roots: [string, Snapshot][] = [];
  for (const tag of c.listTags()) roots.push([`tag ${tag.name}`, tag.snapshot]);
  for (const id of c.snapshots.listIds()) {
    const s = c.snapshots.tryGet(id);
    if (s) roots.push([`snapshot ${id}`, s]);
  }
  for (const [what, s] of roots) {
    for (const n of c.manifests.referencedNames(s)) if (!existsSync(join(root, 'manifest', n))) throw new Error(`${when}: manifest ${n} of ${what} is gone`);
    for (const e of c.manifests.liveFiles(s)) {
      const p = c.dataFilePath(e.partition, e.bucket, e.file.fileName, e.file.externalPath);
      if (!existsSync(p)) throw new Error(`${when}: data file ${p} of ${what} is gone`);
    }
  }
}

it('a Table object whose spread mark was cut by another writer commits on without a false Corruption, and deletes nothing retained', () => {
  let now = 1_800_000_000_000;
  const clock = () => now;
  const dir = mkdtempSync(join(tmpdir(), 'tilstand-mark-handover-'));
  dirs.push(dir);
  const catalog = new Catalog(dir, { clock });
  catalog.createDatabase('db');
  const options = { bucket: '1', 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'full-compaction.delta-commits': '1' };
  const t = catalog.createTable({ database: 'db', table: 't' }, { fields: FIELDS, primaryKeys: ['k'], options });
  const root = t.paths.root;
  const commit = (w: ReturnType<Table['newWriter']>, v: number) => {
    now += MIN;
    w.writeRecord({ k: 1, v });
    return w.commit();
  };
  // 150 tags: more roots than one run marks, so a fresh Table object's first mark is spread.
  const w0 = t.newWriter();
  for (let i = 0; i < 150; i++) {
    commit(w0, i);
    t.createTag(`agent-${i}`, undefined, 7 * DAY);
  }
  w0.close();
  ageTags(root);

  const t1 = Table.open(root, { clock });
  let w1 = t1.newWriter();
  const first = commit(w1, -1);
  expect(first.expire!.expiredSnapshots.length).toBeGreaterThan(0);
  expect(first.expire!.deletedFiles).toEqual([]); // the mark is incomplete: nothing deleted yet
  w1.close();

  // Another writer completes its own mark and deletes the expired snapshots' manifest lists.
  const t2 = Table.open(root, { clock });
  const w2 = t2.newWriter();
  expect(w2.removeOrphanFiles(0).length).toBeGreaterThan(0);
  w2.close();
  checkRetained(root, 'after orphan removal');

  // The first Table object writes again, its mark state kept across the lock's change.
  w1 = t1.newWriter();
  const errors: string[] = [];
  for (let i = 0; i < 20; i++) {
    try {
      const r = commit(w1, 1000 + i);
      if (r.maintenanceError) errors.push(`commit ${i}: ${r.maintenanceError.message}`);
    } catch (e) {
      errors.push(`commit ${i} threw: ${(e as Error).message}`);
    }
    checkRetained(root, `commit ${i}`);
  }
  w1.close();
  expect(errors).toEqual([]);
  expect(Table.open(root).scanRows().length).toBe(1);
});
