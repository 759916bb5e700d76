// `changelog-producer=input`: a commit whose records all fold to nothing in the write buffer (no
// data file) still makes an APPEND snapshot listing their changelog, as Paimon's
// FileStoreCommitImpl commits a changelog-only increment; a commit of nothing makes none
// (CHANGELOG-DESIGN.md, "Producers").

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { changelogEntries } from './changelog.ts';
import type { Change } from './incremental.ts';
import { RowKind } from './key-value.ts';
import type { SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';
import { paimonCheck, paimonCheckAvailable } from './testing/shared.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

// partial-update with remove-record-on-delete ignores a -U in its fold, so two -U records of one
// key fold to nothing: the buffer writes no data file, the input changelog holds both.
const SPEC = (options: Record<string, string> = {}): SchemaSpec => ({
  fields: [
    { name: 'k', type: 'STRING' },
    { name: 'v', type: 'INT' },
  ],
  primaryKeys: ['k'],
  options: {
    bucket: '1',
    'changelog-producer': 'input',
    'merge-engine': 'partial-update',
    'partial-update.remove-record-on-delete': 'true',
    ...options,
  },
});

function setup(spec: SchemaSpec): { catalog: Catalog; table: Table; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'changelog-empty-commit-'));
  dirs.push(dir);
  const catalog = new Catalog(dir);
  catalog.createDatabase('db');
  return { catalog, dir, table: catalog.createTable({ database: 'db', table: 't' }, spec) };
}

const show = (cs: Iterable<Change>) => [...cs].map((c) => `${c.kind}${c.row.map((x) => String(x)).join(',')}`);
const reopen = (catalog: Catalog) => catalog.getTable({ database: 'db', table: 't' });

describe('input changelog of a commit that folds to nothing', () => {
  for (const extra of [{}, { 'sequence.field': 'v' }, { 'deletion-vectors.enabled': 'true' }] as Record<string, string>[]) {
    it(`is listed by its own APPEND snapshot, also after the writer is closed ${JSON.stringify(extra)}`, () => {
      const { catalog, table } = setup(SPEC(extra));
      const w = table.newWriter();
      w.writeRecord({ k: 'a', v: 1 });
      const first = w.commit().snapshotId!;
      w.writeRecord({ k: 'a', v: 1 }, RowKind.UPDATE_BEFORE);
      w.writeRecord({ k: 'a', v: 1 }, RowKind.UPDATE_BEFORE);
      const r = w.commit();
      w.close();
      expect(r.snapshotId).toBe(first + 1);
      const t = reopen(catalog);
      const s = t.snapshots.get(r.snapshotId!);
      expect(s.commitKind).toBe('APPEND');
      expect(s.deltaRecordCount).toBe(0);
      expect(s.changelogRecordCount).toBe(2);
      expect(changelogEntries(t, s).map((e) => e.file.fileName.startsWith('changelog-'))).toEqual([true]);
      // The records as written, in the snapshot they were written in.
      expect(show(t.changes({ from: first, to: s.id, mode: 'changelog' }))).toEqual(['-Ua,1', '-Ua,1']);
      // The table's state is unchanged (the -U records meet the row and are ignored).
      expect(t.scanRows()).toEqual([['a', 1]]);
      // A later commit of another writer lists only its own rows.
      const w2 = t.newWriter();
      w2.writeRecord({ k: 'z', v: 2 });
      const next = w2.commit().snapshotId!;
      w2.close();
      expect(show(reopen(catalog).changes({ from: s.id, to: next, mode: 'changelog' }))).toEqual(['+Iz,2']);
      expect(show(reopen(catalog).changes({ from: 0, mode: 'changelog' }))).toEqual(['+Ia,1', '-Ua,1', '-Ua,1', '+Iz,2']);
      if (paimonCheckAvailable('the paimon-check part of the changelog-only snapshot test')) {
        expect(paimonCheck(t.paths.root).output).toMatch(/paimon-check: 0 problems/);
      }
    });
  }

  it('is committed by the same writer in the commit it was written in, not the next', () => {
    const { table } = setup(SPEC());
    const w = table.newWriter();
    w.writeRecord({ k: 'b', v: 3 }, RowKind.UPDATE_BEFORE);
    w.writeRecord({ k: 'b', v: 4 }, RowKind.UPDATE_BEFORE);
    const a = w.commit().snapshotId;
    expect(a).toBe(1);
    w.writeRecord({ k: 'c', v: 5 });
    const b = w.commit().snapshotId!;
    w.close();
    expect(show(table.changes({ from: 0, to: 1, mode: 'changelog' }))).toEqual(['-Ub,3', '-Ub,4']);
    expect(show(table.changes({ from: 1, to: b, mode: 'changelog' }))).toEqual(['+Ic,5']);
    expect(table.scanRows()).toEqual([['c', 5]]);
  });

  it('is committed by compact() before it compacts (pending rows first)', () => {
    const { table } = setup(SPEC());
    const w = table.newWriter();
    w.writeRecord({ k: 'a', v: 1 });
    w.commit();
    w.writeRecord({ k: 'a', v: 1 }, RowKind.UPDATE_BEFORE);
    w.writeRecord({ k: 'a', v: 2 }, RowKind.UPDATE_BEFORE);
    w.compact(true);
    w.close();
    const appends = table.snapshots.listIds().filter((id) => table.snapshots.get(id).commitKind === 'APPEND');
    expect(appends).toEqual([1, 2]);
    expect(show(table.changes({ from: 1, to: 2, mode: 'changelog' }))).toEqual(['-Ua,1', '-Ua,2']);
  });

  it('keeps a rollback from dropping it unseen', () => {
    const { table } = setup(SPEC());
    const w = table.newWriter();
    w.writeRecord({ k: 'a', v: 1 });
    w.commit();
    w.writeRecord({ k: 'a', v: 1 }, RowKind.UPDATE_BEFORE);
    w.writeRecord({ k: 'a', v: 1 }, RowKind.UPDATE_BEFORE);
    expect(() => w.rollbackTo(1)).toThrow(/has uncommitted rows; commit them/);
    w.commit();
    expect(w.rollbackTo(1).removedSnapshots).toEqual([2]);
    w.close();
  });

  it('a commit of nothing still makes no snapshot, with or without earlier writes', () => {
    const { table, dir } = setup(SPEC());
    const w = table.newWriter();
    expect(w.commit()).toMatchObject({ snapshotId: undefined, compactSnapshotId: undefined });
    expect(table.latestSnapshot()).toBeUndefined();
    w.writeRecord({ k: 'a', v: 1 }, RowKind.UPDATE_BEFORE);
    w.writeRecord({ k: 'a', v: 1 }, RowKind.UPDATE_BEFORE);
    expect(w.commit().snapshotId).toBe(1);
    expect(w.commit().snapshotId).toBeUndefined();
    w.flush();
    expect(w.commit().snapshotId).toBeUndefined();
    w.close();
    expect(table.snapshots.listIds()).toEqual([1]);
    // No changelog file is left unlisted.
    const listed = changelogEntries(table, table.snapshots.get(1)).map((e) => e.file.fileName);
    const onDisk = readdirSync(join(dir, 'db.db/t/bucket-0')).filter((f) => f.startsWith('changelog-'));
    expect(onDisk).toEqual(listed);
  });
});
