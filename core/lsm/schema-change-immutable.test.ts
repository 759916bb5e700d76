// ALTER of an option Paimon marks @Immutable (CoreOptions.IMMUTABLE_OPTIONS, refused by its
// SchemaManager.checkAlterTableOption): `aggregation.remove-record-on-delete` decides what a -D
// already written does when it is read. Changed afterwards, the snapshots already committed
// read otherwise than they were committed (a -D that retracted a value now removes the row), and
// a Java engine refuses the same ALTER.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { RowKind } from './key-value.ts';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('ALTER of aggregation.remove-record-on-delete', () => {
  it('is refused as Paimon refuses it, and a committed snapshot reads as it was committed', () => {
    const root = mkdtempSync(join(tmpdir(), 'lsm-alter-immutable-'));
    dirs.push(root);
    const dir = join(root, 't');
    const schema = TableSchema.fromSpec(
      {
        fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'INT' }],
        primaryKeys: ['k'],
        options: { bucket: '1', 'merge-engine': 'aggregation', 'fields.v.aggregate-function': 'sum', 'write-only': 'true' },
      },
      Date.now(),
    );
    const table = Table.create(dir, schema);
    const w = table.newWriter();
    w.writeRecord({ k: 1, v: 5 });
    w.commit();
    w.writeRecord({ k: 1, v: 2 }, RowKind.DELETE); // a retraction of 2: the sum is 3
    w.commit();
    w.close();
    const id = table.latestSnapshot()!.id;
    const before = table.scanRows({ snapshotId: id });
    expect(before).toEqual([[1, 3]]);

    let error: unknown;
    try {
      table.alter([{ kind: 'setOption', key: 'aggregation.remove-record-on-delete', value: 'true' }]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LsmError);
    expect(String(error)).toMatch(/option 'aggregation.remove-record-on-delete' cannot be changed after the table is created/);
    expect(Table.open(dir).scanRows({ snapshotId: id })).toEqual(before);
  });
});
