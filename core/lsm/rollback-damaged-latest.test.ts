// A damaged latest snapshot (its file, or a manifest list it names) stops every writer: a writer
// reads the latest state when it opens. A rollback to an earlier intact snapshot or tag is the way
// past it, and it needed a writer too, so none was possible. `Table.rollbackTo` (the CLI's
// `table rollback`) takes the writer lock itself when the writer cannot open on the damage and
// rolls back destructively; the damage is still Corruption everywhere else (a writer's open, a
// read of the latest, a rollback that keeps history or that targets the damaged snapshot).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';
import { thrownLsmError } from './testing/corruption.ts';
import { WriterLock } from './writer-lock.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Damage = 'snapshot file' | 'manifest list';

/** A table with snapshots 1..3 (key k written at snapshot k), tag 'one' at 1, snapshot 3 damaged as `damage` says. */
function damagedAtThree(damage: Damage, primaryKey = true): { t: Table; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-rollback-damaged-'));
  dirs.push(dir);
  const options: Record<string, string> = primaryKey ? { bucket: '1', 'write-only': 'true' } : { 'write-only': 'true' };
  const spec = { fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: primaryKey ? ['k'] : [], options };
  const t = Table.create(dir, TableSchema.fromSpec(spec, 0));
  const w = t.newWriter();
  for (let k = 1; k <= 3; k++) {
    w.writeRecord({ k });
    w.commit();
  }
  w.close();
  t.createTag('one', 1, null);
  const snapshotFile = join(dir, 'snapshot', 'snapshot-3');
  if (damage === 'snapshot file') writeFileSync(snapshotFile, '{"version": 3, "id": 3, "schemaId"');
  else {
    const list = (JSON.parse(readFileSync(snapshotFile, 'utf8')) as { deltaManifestList: string }).deltaManifestList;
    writeFileSync(join(dir, 'manifest', list), 'not avro');
  }
  return { t: Table.open(dir), dir };
}

const keys = (t: Table): unknown[] => t.scanRows().map((r) => r[0]);

it.each<Damage>(['snapshot file', 'manifest list'])('rolls back past a damaged latest %s to an earlier snapshot, which then takes writes', (damage) => {
  const { t } = damagedAtThree(damage);
  expect(thrownLsmError(() => t.newWriter()).kind).toBe('Corruption');
  const r = t.rollbackTo(2);
  expect(r).toMatchObject({ snapshotId: 2, removedSnapshots: [3], removedTags: [] });
  expect(keys(t)).toEqual([1, 2]);
  const w = t.newWriter();
  try {
    w.writeRecord({ k: 9 });
    expect(w.commit().snapshotId).toBe(3);
  } finally {
    w.close();
  }
  expect(keys(Table.open(t.paths.root))).toEqual([1, 2, 9]);
});

it('rolls back past a damaged latest snapshot to a tag, also of an append table', () => {
  for (const primaryKey of [true, false]) {
    const { t } = damagedAtThree('snapshot file', primaryKey);
    expect(t.rollbackTo('one').removedSnapshots).toEqual([3, 2]);
    expect(keys(t)).toEqual([1]);
  }
});

it('the damage stays Corruption where a rollback cannot get past it', () => {
  const { t } = damagedAtThree('snapshot file');
  // Keeping history needs the damaged state (its files are DELETEd by the new snapshot).
  expect(thrownLsmError(() => t.rollbackTo(2, { keepHistory: true })).kind).toBe('Corruption');
  // The damaged snapshot is no target.
  expect(thrownLsmError(() => t.rollbackTo(3)).kind).toBe('Corruption');
  expect(thrownLsmError(() => t.scanRows()).kind).toBe('Corruption');
  // Nothing was removed by the refusals, and the lock was released.
  expect(t.snapshots.listIds()).toEqual([1, 2, 3]);
  expect(t.rollbackTo(2).removedSnapshots).toEqual([3]);
});

it('takes the writer lock: Conflict while another holds the table', () => {
  const { t } = damagedAtThree('manifest list');
  const lock = WriterLock.acquire(t.paths.lockFile, 'the test');
  try {
    expect(thrownLsmError(() => t.rollbackTo(2)).kind).toBe('Conflict');
  } finally {
    lock.release();
  }
  expect(t.snapshots.listIds()).toEqual([1, 2, 3]);
});
