// The stop trigger's merge of a bucket's pending runs (DESIGN.md, write path, step 4) runs inside
// a `write`, after the write took its row. A fold the merge engine refuses there (a partial-update
// group's `sum` that overflows its column, a `listagg` longer than its VARCHAR) threw out of that
// write as InvalidArgument with `rowTaken` true: to core/ingest a failure after the take, so ingest
// stopped, and the reopen replayed the same events into the same merge, stopping at every start.
// The merge is back-pressure, not the write's: refused, it leaves the runs as they are (each row
// held once), warns once, and the compaction after the next commit meets the fold as it would
// have (CommitResult.maintenanceError; a read of the key fails on it, as it did before).
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

it("a fold the stop trigger's merge refuses leaves the pending runs: the write goes through, warned once, and the commit holds every row", () => {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-stop-trigger-fold-'));
  dirs.push(dir);
  const t = Table.create(
    dir,
    TableSchema.fromSpec(
      {
        fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'seq', type: 'BIGINT' }, { name: 'total', type: 'INT' }],
        primaryKeys: ['k'],
        options: {
          bucket: '1',
          'merge-engine': 'partial-update',
          'fields.seq.sequence-group': 'total',
          'fields.total.aggregate-function': 'sum',
          // Every write flushes its own level-0 run; the third run reaches the stop trigger.
          'write-buffer-size': '1 b',
          'num-sorted-run.compaction-trigger': '2',
          'num-sorted-run.stop-trigger': '3',
        },
      },
      0,
    ),
  );
  const warnings: string[] = [];
  const w = t.newWriter({ onWarning: (m) => warnings.push(m) });
  const totals = [2147483000, 1000, 5, 7];
  try {
    // 2147483000 + 1000 overflows INT: the merge at the third and fourth write refuses the fold.
    for (const [i, total] of totals.entries()) w.writeRecord({ k: 1, seq: BigInt(i + 1), total });
    expect(warnings).toEqual([expect.stringMatching(/stop trigger.*sum overflows the column type/)]);
    const r = w.commit();
    expect(r.snapshotId).toBe(1);
    expect(r.maintenanceError?.message).toMatch(/sum overflows the column type/);
  } finally {
    w.close();
  }
  // Each row once, in its own run: none lost to the refused merge, none written twice.
  const files = t.buckets(t.latestSnapshot()!).flatMap((b) => b.files);
  expect(files.reduce((n, f) => n + Number(f.rowCount), 0)).toBe(totals.length);
  expect(() => t.scanRows()).toThrow(/sum overflows the column type/);
});
