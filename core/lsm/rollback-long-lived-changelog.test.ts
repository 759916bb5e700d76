// A destructive rollback removes Java's long-lived changelogs (`changelog/changelog-N`, written by
// Java's expiration when `changelog.num-retained.*` outlive the snapshots) after the target, and
// points `changelog/LATEST` at the last one kept, as Paimon's RollbackHelper.cleanLongLivedChangelogs
// does. Before, they stayed: the next commits here made snapshots of the same ids beside a
// changelog of the old history, which Java's changelog readers (and its streaming read from an id
// whose snapshot has expired) took for the new history, and whose files expiration kept for them.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** As Java's expiration with the changelog decoupled: snapshot `id` becomes `changelog/changelog-<id>`. */
function javaLongLived(t: Table, id: number): void {
  const dir = join(t.paths.root, 'changelog');
  mkdirSync(dir, { recursive: true });
  copyFileSync(t.paths.snapshotFile(id), join(dir, `changelog-${id}`));
  if (!existsSync(join(dir, 'EARLIEST'))) writeFileSync(join(dir, 'EARLIEST'), String(id));
  writeFileSync(join(dir, 'LATEST'), String(id));
  rmSync(t.paths.snapshotFile(id));
  writeFileSync(t.paths.earliestHint, String(id + 1));
}

function keys(t: Table): unknown[] {
  const r = t.reader();
  try {
    return [...r.scan()].map((row) => row[0]);
  } finally {
    r.close();
  }
}

it("a destructive rollback to a tag deletes Java's long-lived changelogs after it and rewrites changelog/LATEST", () => {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-rollback-changelog-'));
  dirs.push(dir);
  const t = Table.create(dir, TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1', 'write-only': 'true' } }, 0));
  let w = t.newWriter();
  for (let k = 1; k <= 5; k++) {
    w.writeRecord({ k });
    w.commit();
  }
  w.close();
  t.createTag('t2', 2);
  for (const id of [1, 2, 3]) javaLongLived(t, id);
  const changelogDir = join(dir, 'changelog');

  w = t.newWriter();
  try {
    const r = w.rollbackTo('t2');
    expect(r.snapshotId).toBe(2);
    expect(r.deletedFiles).toContain(join(changelogDir, 'changelog-3'));
  } finally {
    w.close();
  }
  expect(readdirSync(changelogDir).sort()).toEqual(['EARLIEST', 'LATEST', 'changelog-1', 'changelog-2']);
  expect(readFileSync(join(changelogDir, 'LATEST'), 'utf8')).toBe('2');
  expect(keys(t)).toEqual([1, 2]);

  // The new history's snapshot 3 has no changelog of the old one beside it.
  w = t.newWriter();
  try {
    w.writeRecord({ k: 9 });
    expect(w.commit().snapshotId).toBe(3);
  } finally {
    w.close();
  }
  expect(existsSync(join(changelogDir, 'changelog-3'))).toBe(false);
  expect(keys(t)).toEqual([1, 2, 9]);
});

it('a rollback past every long-lived changelog deletes them all and sets changelog/LATEST to -1, as Java', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-rollback-changelog-'));
  dirs.push(dir);
  const t = Table.create(dir, TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1', 'write-only': 'true' } }, 0));
  let w = t.newWriter();
  for (let k = 1; k <= 4; k++) {
    w.writeRecord({ k });
    w.commit();
  }
  w.close();
  t.createTag('t1', 1);
  for (const id of [1, 2]) javaLongLived(t, id);
  rmSync(join(dir, 'changelog', 'changelog-1'));
  writeFileSync(join(dir, 'changelog', 'EARLIEST'), '2');
  w = t.newWriter();
  try {
    expect(w.rollbackTo('t1').snapshotId).toBe(1);
  } finally {
    w.close();
  }
  expect(readdirSync(join(dir, 'changelog')).sort()).toEqual(['EARLIEST', 'LATEST']);
  expect(readFileSync(join(dir, 'changelog', 'LATEST'), 'utf8')).toBe('-1');
  expect(keys(t)).toEqual([1]);
});
