// `delta` reads (Table.changes, followers) of a primary-key table with deletion vectors. Its
// commits move level 0 into level 1 before the snapshot (dv-writer.ts), rewriting the bucket's
// level-1 run: the files an APPEND snapshot adds hold the rows it carried over as well as the
// ones it wrote, and a delete writes no row at all (it marks the older row in a vector). The
// delta is therefore the change from the previous snapshot's state (incremental.ts).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import type { Change } from './incremental.ts';
import { RowKind } from './key-value.ts';
import type { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function setup(options: Record<string, string> = {}): Table {
  const dir = mkdtempSync(join(tmpdir(), 'dv-delta-'));
  dirs.push(dir);
  const catalog = new Catalog(dir);
  catalog.createDatabase('db');
  return catalog.createTable(
    { database: 'db', table: 't' },
    {
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'v', type: 'INT' },
      ],
      primaryKeys: ['k'],
      options: { bucket: '1', 'deletion-vectors.enabled': 'true', ...options },
    },
  );
}

// Kind and key only: a delete's row is the stored row here (no written record survives).
const keys = (cs: Iterable<Change>) => [...cs].map((c) => `${c.kind}${String(c.row[0])}`).sort();

describe('delta reads of a table with deletion vectors', () => {
  it('give each commit its own changes: no row again for carried-over keys, a delete for a removed one', () => {
    const t = setup();
    const w = t.newWriter();
    w.writeRecord({ k: 1, v: 1 });
    w.writeRecord({ k: 2, v: 1 });
    const s1 = w.commit().snapshotId!;
    w.writeRecord({ k: 3, v: 1 });
    const s2 = w.commit().snapshotId!;
    w.writeRecord({ k: 2 }, RowKind.DELETE);
    const s3 = w.commit().snapshotId!;
    w.writeRecord({ k: 1, v: 5 });
    const s4 = w.commit().snapshotId!;
    expect(keys(t.changes({ from: 0, to: s1, mode: 'delta' }))).toEqual(['+I1', '+I2']);
    expect(keys(t.changes({ from: s1, to: s2, mode: 'delta' }))).toEqual(['+I3']);
    expect(keys(t.changes({ from: s2, to: s3, mode: 'delta' }))).toEqual(['-D2']);
    expect(keys(t.changes({ from: s3, to: s4 }))).toEqual(['+U1', '-U1']); // auto: delta without a producer
    // A delete of a key in the top level only marks its row in a vector: no file changes.
    const full = w.compact(true)!;
    w.writeRecord({ k: 3 }, RowKind.DELETE);
    const s6 = w.commit().snapshotId!;
    expect(keys(t.changes({ from: full, to: s6, mode: 'delta' }))).toEqual(['-D3']);
    // A follower reads the same, snapshot by snapshot.
    const f = t.follow({ consumer: 'c', from: 'earliest' });
    const batches: string[][] = [];
    for (let b = f.next(); b !== undefined; b = f.next()) batches.push(keys(b));
    expect(batches).toEqual([['+I1', '+I2'], ['+I3'], ['-D2'], ['+U1', '-U1'], ['-D3']]);
    w.close();
  });

  it("a consumer keeps the snapshot before its next one: expiration does not break its follower", () => {
    const t = setup({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '1' });
    const w = t.newWriter();
    const f = t.follow({ consumer: 'c', from: 'earliest' });
    const got: string[] = [];
    for (let i = 0; i < 4; i++) {
      w.writeRecord({ k: i, v: i });
      w.commit(); // expires all but what the consumer protects
      for (let b = f.next(); b !== undefined; b = f.next()) got.push(...keys(b));
    }
    expect(got).toEqual(['+I0', '+I1', '+I2', '+I3']);
    w.close();
  });

  it('is NotFound when the snapshot before the range has expired (its state is what the first commit changed)', () => {
    const t = setup({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2' });
    const w = t.newWriter();
    for (let i = 0; i < 4; i++) {
      w.writeRecord({ k: i, v: i });
      w.commit();
      if (i === 1) t.tags.create('t2', 2);
    }
    const earliest = t.snapshots.earliestId()!;
    expect(earliest).toBeGreaterThan(1);
    expect(() => [...t.changes({ from: earliest - 1, mode: 'delta' })]).toThrow(/expired/);
    // A tag keeps the state it starts from, expired snapshot or not.
    expect(keys(t.changes({ from: 't2', mode: 'delta' }))).toEqual(['+I2', '+I3']);
    expect(keys(t.changes({ from: earliest, mode: 'delta' }))).toEqual([`+I${t.snapshots.latestId()! - 1}`]);
    // A follower started at the earliest snapshot gets that snapshot's state first, then deltas.
    const f = t.follow({ consumer: 'late', from: 'earliest' });
    expect(keys(f.next()!)).toEqual(['+I0', '+I1', '+I2']);
    expect(keys(f.next()!)).toEqual(['+I3']);
    expect(f.next()).toBeUndefined();
    w.close();
  });
});
