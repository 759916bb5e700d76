// A partial-update write whose fold the table refuses (a group's `sum` overflowing its column) is
// refused before anything changes: `write` promises a refusal leaves the writer as it was
// (LsmError.rowTaken false), and core/ingest dead-letters such an event, to be replayed once the
// cause is fixed. The fold into the write buffer applied the group's functions column by column in
// place, so the columns before the refusing one kept the refused record's values: the buffered
// row held half of an event its caller was told was not taken, and a replay added them again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { LsmError } from '../errors.ts';
import { TableSchema } from '../schema.ts';
import { Table } from '../table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function table(extra: Record<string, string> = {}): Table {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-pu-fold-refused-'));
  dirs.push(dir);
  return Table.create(
    dir,
    TableSchema.fromSpec(
      {
        fields: [
          { name: 'k', type: 'INT NOT NULL' },
          { name: 'seq', type: 'BIGINT' },
          { name: 'a', type: 'INT' },
          { name: 'b', type: 'INT' },
          { name: 'seq2', type: 'BIGINT' },
          { name: 'c', type: 'INT' },
        ],
        primaryKeys: ['k'],
        options: {
          bucket: '1',
          'merge-engine': 'partial-update',
          'fields.seq.sequence-group': 'a,b',
          'fields.seq2.sequence-group': 'c',
          'fields.a.aggregate-function': 'sum',
          'fields.b.aggregate-function': 'sum',
          'fields.c.aggregate-function': 'sum',
          ...extra,
        },
      },
      0,
    ),
  );
}

it.each([
  ['within one group (a summed, then b overflows)', { k: 1, seq: 3n, a: 10, b: 2147483647, seq2: null, c: null }],
  ['across groups (c summed, then b overflows)', { k: 1, seq: 3n, a: 10, b: 2147483647, seq2: 3n, c: 10 }],
  ['across groups (a and b summed, then c overflows)', { k: 1, seq: 3n, a: 10, b: 10, seq2: 3n, c: 2147483647 }],
])('a fold refused %s leaves the buffered row as it was', (_what, refused) => {
  const t = table();
  const w = t.newWriter();
  try {
    // Two records: the buffer holds their fold, a row it owns and folds the next record into in place.
    w.writeRecord({ k: 1, seq: 1n, a: 1, b: 1, seq2: 1n, c: 1 });
    w.writeRecord({ k: 1, seq: 2n, a: 1, b: 1, seq2: 2n, c: 1 });
    let e: unknown;
    try {
      w.writeRecord(refused);
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(LsmError);
    expect(e).toMatchObject({ kind: 'InvalidArgument', rowTaken: false, message: expect.stringMatching(/sum overflows the column type/) });
    w.writeRecord({ k: 1, seq: 4n, a: 1, b: 1, seq2: 4n, c: 1 });
    w.commit();
  } finally {
    w.close();
  }
  expect(t.scanRows()).toEqual([[1, 4n, 3, 3, 4n, 3]]);
});
