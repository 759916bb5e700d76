// A rollback as latest (`rollbackTo(x, { keepHistory: true })`, Paimon's rollback_to_as_latest)
// makes an OVERWRITE snapshot of the target's state with the target's schema id, as Paimon's
// FileStoreCommitImpl.rollbackToAsLatest writes it (`targetSnapshot.schemaId()`): a read at that
// snapshot id comes in the target's columns, as Java's time travel to it does. Before, it took
// the table's current schema id. The table's schema is not rolled back: a read of the latest state
// and the next commit use the current one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

it('the rollback-as-latest snapshot carries the target snapshot schema id', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-rollback-latest-schema-'));
  dirs.push(dir);
  const t = Table.create(dir, TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '1', 'write-only': 'true' } }, 0));
  let w = t.newWriter();
  w.writeRecord({ k: 1, v: 1 });
  w.commit();
  w.close();
  t.alter([{ kind: 'addColumn', name: 'e', type: 'STRING' }]);
  expect(t.schema.id).toBe(1);
  w = t.newWriter();
  w.writeRecord({ k: 2, v: 2, e: 'x' });
  w.commit();
  try {
    expect(w.rollbackTo(1, { keepHistory: true }).snapshotId).toBe(3);
  } finally {
    w.close();
  }
  const s = t.snapshots.latest()!;
  expect(s.commitKind).toBe('OVERWRITE');
  expect(s.schemaId).toBe(0);
  const at = t.reader({ snapshotId: 3 });
  try {
    expect(at.schema.fields.map((f) => f.name)).toEqual(['k', 'v']);
    expect([...at.scan()]).toEqual([[1, 1]]);
  } finally {
    at.close();
  }
  // The latest state reads in the current schema, and the next commit is of it.
  const r = t.reader();
  try {
    expect([...r.scan()]).toEqual([[1, 1, null]]);
  } finally {
    r.close();
  }
  w = t.newWriter();
  try {
    w.writeRecord({ k: 3, v: 3, e: 'y' });
    w.commit();
  } finally {
    w.close();
  }
  expect(t.snapshots.latest()!.schemaId).toBe(1);
  const r2 = t.reader();
  try {
    expect([...r2.scan()]).toEqual([[1, 1, null], [3, 3, 'y']]);
  } finally {
    r2.close();
  }
});
