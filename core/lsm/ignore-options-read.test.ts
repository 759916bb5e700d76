// What `ignore-delete` and `ignore-update-before` do to retractions already in the files, checked
// against Java Paimon. Both options may be switched on by ALTER (never off: SchemaManager
// .checkAlterTableOption), after -D/-U records were committed. Java applies them when records are
// written (RowKindFilter, in TableWriteImpl); its merge functions read the files as they are, except
// that deduplicate, partial-update and first-row drop retractions when `ignore-delete` is set
// ("In 0.7- versions, the delete records might be written into data file even when ignore-delete
// configured"):
//   - AggregateMergeFunction.add (paimon-core/.../mergetree/compact/aggregate/
//     AggregateMergeFunction.java at 5dacde51, lines 80-99) reads neither option: a -D/-U in a file
//     retracts;
//   - DeduplicateMergeFunction.add (lines 47-55) and PartialUpdateMergeFunction.add (lines 152-170)
//     read `ignore-delete` only: a -U in a file is read as written under `ignore-update-before`.
// So a committed snapshot reads the same before and after such an ALTER, as in Java.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { RowKind } from './key-value.ts';
import type { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function newTable(fields: Array<{ name: string; type: string }>, options: Record<string, string>): Table {
  const dir = mkdtempSync(join(tmpdir(), 'ignore-read-'));
  dirs.push(dir);
  const catalog = new Catalog(dir);
  catalog.createDatabase('db');
  return catalog.createTable({ database: 'db', table: 't' }, { fields, primaryKeys: ['id'], options: { bucket: '1', ...options } });
}
const setOption = (t: Table, key: string) => t.alter([{ kind: 'setOption', key, value: 'true' }]);

describe('retractions committed before ignore-delete / ignore-update-before was set, read as Java reads them', () => {
  it('aggregation: a committed -D and -U still retract after ignore-delete is set, also after a full compaction', () => {
    const t = newTable([{ name: 'id', type: 'INT NOT NULL' }, { name: 'qty', type: 'BIGINT' }], { 'merge-engine': 'aggregation', 'fields.qty.aggregate-function': 'sum' });
    let w = t.newWriter();
    w.writeRecord({ id: 1, qty: 10n });
    w.commit();
    // One retraction per commit: two in one write buffer fold into one +I (-5), as in Java.
    w.writeRecord({ id: 1, qty: 3n }, RowKind.DELETE);
    w.commit();
    w.writeRecord({ id: 1, qty: 2n }, RowKind.UPDATE_BEFORE);
    w.commit();
    w.close();
    expect(t.scanRows()).toEqual([[1, 5n]]);
    setOption(t, 'ignore-delete');
    expect(t.scanRows()).toEqual([[1, 5n]]);
    expect(t.reader().get({ id: 1 })).toEqual([1, 5n]);
    w = t.newWriter();
    w.writeRecord({ id: 1, qty: 4n }, RowKind.DELETE); // dropped at the door now
    w.writeRecord({ id: 1, qty: 1n });
    w.commit();
    w.compact(true);
    w.close();
    expect(t.scanRows()).toEqual([[1, 6n]]);
  });

  it('aggregation: a committed -U still retracts after ignore-update-before is set', () => {
    const t = newTable([{ name: 'id', type: 'INT NOT NULL' }, { name: 'qty', type: 'BIGINT' }], { 'merge-engine': 'aggregation', 'fields.qty.aggregate-function': 'sum' });
    const w = t.newWriter();
    w.writeRecord({ id: 1, qty: 10n });
    w.commit();
    w.writeRecord({ id: 1, qty: 4n }, RowKind.UPDATE_BEFORE);
    w.commit();
    w.close();
    setOption(t, 'ignore-update-before');
    expect(t.scanRows()).toEqual([[1, 6n]]);
  });

  it('deduplicate: a newest committed -U still removes the key after ignore-update-before is set', () => {
    const t = newTable([{ name: 'id', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], {});
    const w = t.newWriter();
    w.writeRecord({ id: 1, v: 'a' });
    w.writeRecord({ id: 2, v: 'b' });
    w.commit();
    w.writeRecord({ id: 1, v: 'a' }, RowKind.UPDATE_BEFORE);
    w.commit();
    w.close();
    expect(t.scanRows()).toEqual([[2, 'b']]);
    setOption(t, 'ignore-update-before');
    expect(t.scanRows()).toEqual([[2, 'b']]);
    expect(t.reader().get({ id: 1 })).toBeUndefined();
  });

  it('partial-update with a sequence group: a committed -U still retracts its group after ignore-update-before is set', () => {
    const t = newTable(
      [{ name: 'id', type: 'INT NOT NULL' }, { name: 'a', type: 'STRING' }, { name: 'g', type: 'INT' }, { name: 'b', type: 'STRING' }],
      { 'merge-engine': 'partial-update', 'fields.g.sequence-group': 'a' },
    );
    const w = t.newWriter();
    w.writeRecord({ id: 1, a: 'x', g: 1, b: 'keep' });
    w.commit();
    w.writeRecord({ id: 1, a: 'x', g: 2, b: null }, RowKind.UPDATE_BEFORE);
    w.commit();
    w.close();
    expect(t.scanRows()).toEqual([[1, null, 2, 'keep']]);
    setOption(t, 'ignore-update-before');
    expect(t.scanRows()).toEqual([[1, null, 2, 'keep']]);
  });
});
