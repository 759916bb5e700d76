// The `full-compaction` changelog after an ALTER raises the top level (`num-levels`, or
// `num-sorted-run.compaction-trigger` when `num-levels` is left at its default of trigger + 1):
// the previous full compaction's state stays at the old top level until the next full compaction,
// and is the "before" of that compaction's changelog (changelog.ts, table-writer.ts).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import type { Change } from './incremental.ts';
import { RowKind } from './key-value.ts';
import type { Table } from './table.ts';
import { earlierSchema } from './testing/earlier-schema.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function setup(options: Record<string, string>): Table {
  const dir = mkdtempSync(join(tmpdir(), 'changelog-full-raised-'));
  dirs.push(dir);
  const catalog = new Catalog(dir);
  catalog.createDatabase('db');
  // With deletion vectors as an earlier version made it: creation refuses them beside full-compaction (Paimon's pair).
  return catalog.createTable(
    { database: 'db', table: 't' },
    earlierSchema({
      fields: [
        { name: 'k', type: 'STRING' },
        { name: 'v', type: 'INT' },
      ],
      primaryKeys: ['k'],
      options: { bucket: '1', 'changelog-producer': 'full-compaction', ...options },
    }),
  );
}

const show = (cs: Iterable<Change>) => [...cs].map((c) => `${c.kind}${c.row.map((x) => String(x)).join(',')}`).sort();

describe('full-compaction changelog after the top level is raised', () => {
  for (const [what, change, options] of [
    ['num-levels', { key: 'num-levels', value: '8' }, {}],
    ['num-sorted-run.compaction-trigger', { key: 'num-sorted-run.compaction-trigger', value: '7' }, {}],
    ['num-levels, deletion vectors', { key: 'num-levels', value: '8' }, { 'deletion-vectors.enabled': 'true' }],
  ] as const) {
    it(`${what}: the old top level is the previous state (no +I again for kept keys, a -D for removed ones)`, () => {
      const table = setup(options);
      let w = table.newWriter();
      for (const k of ['a', 'b', 'c']) w.writeRecord({ k, v: 1 });
      const first = w.compact(true)!; // top level 5 (num-levels 6 = trigger + 1)
      expect(show(table.changes({ from: 0, to: first, mode: 'changelog' }))).toEqual(['+Ia,1', '+Ib,1', '+Ic,1']);
      w.close();
      table.alter([{ kind: 'setOption', ...change }]);
      w = table.newWriter();
      w.writeRecord({ k: 'b', v: 2 });
      w.writeRecord({ k: 'c' }, RowKind.DELETE);
      const second = w.compact(true)!;
      expect(show(table.changes({ from: first, to: second, mode: 'changelog' }))).toEqual(['-Ub,1', '+Ub,2', '-Dc,1'].sort());
      // Nothing between the two full compactions: the changelog is the diff of their states.
      expect(show(table.changes({ from: first, to: second, mode: 'changelog' }))).toEqual(show(table.changes({ from: first, to: second, mode: 'diff' })));
      // Rollback as latest to the first state (at the old top level) from the second (at the new one).
      const r = w.rollbackTo(first, { keepHistory: true });
      expect(show(table.changes({ from: second, to: r.snapshotId!, mode: 'changelog' }))).toEqual(['-Ub,2', '+Ub,1', '+Ic,1'].sort());
      w.close();
    });
  }
});
