// The `full-compaction` changelog producer (changelog.ts, table-writer.ts): changelog only at full
// compactions, as the diff of the top level before and after; `full-compaction.delta-commits`;
// Paimon's layout (COMPACT snapshot's changelog manifest list, `changelog-*` files); incremental
// reads in changelog mode and the follower; deletion vectors. Randomized: changelog-full.model.test.ts.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { changelogEntries } from './changelog.ts';
import type { Change } from './incremental.ts';
import { RowKind } from './key-value.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';
import { earlierSchema } from './testing/earlier-schema.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SPEC = (options: Record<string, string> = {}): SchemaSpec => ({
  fields: [
    { name: 'k', type: 'STRING' },
    { name: 'v', type: 'INT' },
    { name: 'note', type: 'STRING' },
  ],
  primaryKeys: ['k'],
  options: { bucket: '2', 'changelog-producer': 'full-compaction', ...options },
});

function setup(spec: SchemaSpec): { catalog: Catalog; table: Table } {
  const dir = mkdtempSync(join(tmpdir(), 'changelog-full-'));
  dirs.push(dir);
  const catalog = new Catalog(dir);
  catalog.createDatabase('db');
  // With deletion vectors as an earlier version made it: creation refuses them beside full-compaction (Paimon's pair).
  return { catalog, table: catalog.createTable({ database: 'db', table: 't' }, spec.options?.['deletion-vectors.enabled'] === undefined ? spec : earlierSchema(spec)) };
}

const show = (cs: Iterable<Change>) => [...cs].map((c) => `${c.kind}${c.row.map((x) => String(x)).join(',')}`).sort();

describe('full-compaction changelog producer', () => {
  it('writes changelog only at full compactions: +I, -U/+U, -D between the top levels, in the COMPACT snapshot', () => {
    const { table } = setup(SPEC());
    const w = table.newWriter();
    w.writeRecord({ k: 'a', v: 1 });
    w.writeRecord({ k: 'b', v: 1 });
    w.writeRecord({ k: 'c', v: 1 });
    const c1 = w.commit();
    expect(c1.snapshotId).toBe(1);
    expect(table.snapshots.get(1).changelogManifestList).toBeNull();
    expect(show(table.changes({ from: 0, mode: 'changelog' }))).toEqual([]);

    const full1 = w.compact(true)!;
    const s = table.snapshots.get(full1);
    expect(s.commitKind).toBe('COMPACT');
    expect(s.changelogManifestList).not.toBeNull();
    expect(s.changelogRecordCount).toBe(3);
    const files = changelogEntries(table, s);
    expect(files.length).toBeGreaterThan(0);
    for (const e of files) expect(e.file.fileName).toMatch(/^changelog-.*\.parquet$/);
    expect(show(table.changes({ from: 0, mode: 'changelog' }))).toEqual(['+Ia,1,null', '+Ib,1,null', '+Ic,1,null']);

    // Changes in between are collapsed: a→2→3 gives one -U/+U; b deleted; c rewritten unchanged;
    // d inserted then deleted gives nothing; e new.
    w.writeRecord({ k: 'a', v: 2 });
    w.commit();
    w.writeRecord({ k: 'a', v: 3 });
    w.writeRecord({ k: 'b' }, RowKind.DELETE);
    w.writeRecord({ k: 'c', v: 1 });
    w.writeRecord({ k: 'd', v: 9 });
    w.commit();
    w.writeRecord({ k: 'd' }, RowKind.DELETE);
    w.writeRecord({ k: 'e', v: 5, note: 'x' });
    w.commit();
    const beforeFull = table.snapshots.latestId()!;
    expect(show(table.changes({ from: full1, mode: 'changelog' }))).toEqual([]);
    const full2 = w.compact(true)!;
    expect(show(table.changes({ from: beforeFull, to: full2, mode: 'changelog' }))).toEqual(['+Ie,5,x', '+Ua,3,null', '-Ua,1,null', '-Db,1,null', '-Uc,1,null', '+Uc,1,null'].sort());
    // The same, as the diff of the two states.
    expect(show(table.changes({ from: full1, to: full2, mode: 'changelog' }))).toEqual(
      [...show(table.changes({ from: full1, to: full2, mode: 'diff' })), '-Uc,1,null', '+Uc,1,null'].sort(),
    );
    // Nothing to compact: no snapshot, no changelog.
    expect(w.compact(true)).toBeUndefined();
    w.close();
  });

  it('row-deduplicate drops -U/+U of unchanged rows (minus the ignored fields)', () => {
    const { table } = setup(SPEC({ 'changelog-producer.row-deduplicate': 'true', 'changelog-producer.row-deduplicate-ignore-fields': 'note' }));
    const w = table.newWriter();
    w.writeRecord({ k: 'a', v: 1, note: 'x' });
    w.writeRecord({ k: 'b', v: 1 });
    w.compact(true);
    const from = table.snapshots.latestId()!;
    w.writeRecord({ k: 'a', v: 1, note: 'y' });
    w.writeRecord({ k: 'b', v: 2 });
    const id = w.compact(true)!;
    expect(show(table.changes({ from, to: id, mode: 'changelog' }))).toEqual(['+Ub,2,null', '-Ub,1,null']);
    w.close();
  });

  it('as Paimon FullChangelogMergeFunctionWrapper: a key untouched since the last full compaction gives nothing', () => {
    // One bucket, so the untouched keys share the compacted bucket with the changed ones.
    const { table } = setup(SPEC({ bucket: '1' }));
    const w = table.newWriter();
    for (const k of ['a', 'b', 'c', 'd']) w.writeRecord({ k, v: 1 });
    const first = w.compact(true)!;
    w.writeRecord({ k: 'b', v: 2 }); // top level + newer record: -U/+U
    w.writeRecord({ k: 'c', v: 1 }); // rewritten unchanged: still -U/+U without row-deduplicate
    w.writeRecord({ k: 'd' }, RowKind.DELETE); // -D
    w.writeRecord({ k: 'e', v: 5 }); // only below the top level: +I
    const second = w.compact(true)!;
    // a has only its top-level record: nothing.
    expect(show(table.changes({ from: first, to: second, mode: 'changelog' }))).toEqual(['-Ub,1,null', '+Ub,2,null', '-Uc,1,null', '+Uc,1,null', '-Dd,1,null', '+Ie,5,null'].sort());
    expect(table.snapshots.get(second).changelogRecordCount).toBe(6);
    // Only b changes; a, c and e sit untouched in the top level.
    w.writeRecord({ k: 'b', v: 3 });
    const third = w.compact(true)!;
    expect(show(table.changes({ from: second, to: third, mode: 'changelog' }))).toEqual(['+Ub,3,null', '-Ub,2,null']);
    w.close();
  });

  it('untouched keys give nothing with deletion vectors either; a key whose top-level row is marked and rewritten is -U/+U', () => {
    const { table } = setup(SPEC({ bucket: '1', 'deletion-vectors.enabled': 'true' }));
    const w = table.newWriter();
    for (const k of ['a', 'b', 'c']) w.writeRecord({ k, v: 1 });
    const first = w.compact(true)!;
    w.writeRecord({ k: 'b', v: 2 });
    w.commit(); // the DV writer marks b's top-level row; b's new row is below the top level
    w.writeRecord({ k: 'c', v: 1 });
    w.writeRecord({ k: 'd', v: 4 });
    w.commit();
    const second = w.compact(true)!;
    expect(show(table.changes({ from: first, to: second, mode: 'changelog' }))).toEqual(['-Ub,1,null', '+Ub,2,null', '-Uc,1,null', '+Uc,1,null', '+Id,4,null'].sort());
    w.close();
  });

  it('full-compaction.delta-commits=N fully compacts every bucket after N commits, producing the changelog', () => {
    const { table } = setup(SPEC({ 'full-compaction.delta-commits': '2' }));
    expect(table.schema.options.fullCompactionDeltaCommits).toBe(2);
    const w = table.newWriter();
    w.writeRecord({ k: 'a', v: 1 });
    expect(w.commit().compactSnapshotId).toBeUndefined();
    w.writeRecord({ k: 'b', v: 1 });
    const c2 = w.commit();
    expect(c2.compactSnapshotId).toBeDefined();
    expect(table.snapshots.get(c2.compactSnapshotId!).commitKind).toBe('COMPACT');
    expect(show(table.changes({ from: 0, mode: 'changelog' }))).toEqual(['+Ia,1,null', '+Ib,1,null']);
    // Every bucket's files are now one top-level run.
    const top = table.schema.options.numLevels - 1;
    for (const b of table.buckets(table.latestSnapshot()!)) for (const f of b.files) expect(f.level).toBe(top);
    w.writeRecord({ k: 'a', v: 2 });
    expect(w.commit().compactSnapshotId).toBeUndefined();
    w.writeRecord({ k: 'c', v: 3 });
    const c4 = w.commit();
    expect(c4.compactSnapshotId).toBeDefined();
    expect(show(table.changes({ from: c2.compactSnapshotId!, mode: 'changelog' }))).toEqual(['+Ic,3,null', '+Ua,2,null', '-Ua,1,null']);
    // An explicit full compaction restarts the count.
    w.writeRecord({ k: 'd', v: 4 });
    w.commit();
    w.compact(true);
    w.writeRecord({ k: 'e', v: 5 });
    expect(w.commit().compactSnapshotId).toBeUndefined();
    w.close();
    expect(() => setup(SPEC({ 'full-compaction.delta-commits': '0' }))).toThrow(/full-compaction\.delta-commits/);
  });

  it('delta-commits=1 on a table without a producer is copy-on-write: every commit leaves one top-level run', () => {
    const { table } = setup(SPEC({ 'changelog-producer': 'none', 'full-compaction.delta-commits': '1' }));
    const w = table.newWriter();
    for (let i = 0; i < 3; i++) {
      w.writeRecord({ k: `k${i}`, v: i });
      const c = w.commit();
      expect(c.compactSnapshotId).toBeDefined();
      expect(table.snapshots.get(c.compactSnapshotId!).changelogManifestList).toBeNull();
    }
    const top = table.schema.options.numLevels - 1;
    for (const b of table.buckets(table.latestSnapshot()!)) for (const f of b.files) expect(f.level).toBe(top);
    w.close();
  });

  it('the follower and auto mode deliver the full-compaction changelog (COMPACT snapshots included)', () => {
    const { table } = setup(SPEC({ 'full-compaction.delta-commits': '1' }));
    const f = table.follow({ consumer: 'sink' });
    const w = table.newWriter();
    w.writeRecord({ k: 'a', v: 1 });
    w.writeRecord({ k: 'b', v: 1 });
    w.commit();
    expect(show(f.next()!)).toEqual(['+Ia,1,null', '+Ib,1,null']);
    expect(f.next()).toBeUndefined();
    w.writeRecord({ k: 'a', v: 2 });
    w.writeRecord({ k: 'b' }, RowKind.DELETE);
    w.commit();
    expect(show(f.next()!)).toEqual(['+Ua,2,null', '-Ua,1,null', '-Db,1,null'].sort());
    expect(f.next()).toBeUndefined();
    expect(show(table.changes({ from: 0 }))).toEqual(['+Ia,1,null', '+Ib,1,null', '+Ua,2,null', '-Db,1,null', '-Ua,1,null'].sort());
    w.close();
  });

  it('keeps history consistent across a rollback as latest: the OVERWRITE lists the diff of the top levels', () => {
    const { table } = setup(SPEC());
    const w = table.newWriter();
    w.writeRecord({ k: 'a', v: 1 });
    const first = w.compact(true)!;
    w.writeRecord({ k: 'a', v: 2 });
    w.writeRecord({ k: 'b', v: 2 });
    const second = w.compact(true)!;
    w.writeRecord({ k: 'c', v: 3 }); // not fully compacted: not yet in any changelog
    w.commit();
    const r = w.rollbackTo(first, { keepHistory: true });
    expect(show(table.changes({ from: second, to: r.snapshotId!, mode: 'changelog' }))).toEqual(['+Ua,1,null', '-Ua,2,null', '-Db,2,null'].sort());
    w.writeRecord({ k: 'd', v: 4 });
    const third = w.compact(true)!;
    expect(show(table.changes({ from: r.snapshotId!, to: third, mode: 'changelog' }))).toEqual(['+Id,4,null']);
    w.close();
  });

  it('after an ALTER lowers num-levels below the files, the top level stays where they are (changelog and rollback diffs)', () => {
    const { table } = setup(SPEC({ 'changelog-producer.row-deduplicate': 'true' }));
    let w = table.newWriter();
    for (const k of ['a', 'b', 'c']) w.writeRecord({ k, v: 1 });
    const first = w.compact(true)!; // top level 5 (num-levels 6 = trigger + 1)
    w.close();
    table.alter([{ kind: 'setOption', key: 'num-levels', value: '3' }]);
    w = table.newWriter();
    w.writeRecord({ k: 'b', v: 2 });
    w.writeRecord({ k: 'c', v: null }, RowKind.DELETE);
    const second = w.compact(true)!;
    // Paimon's Levels count max(num-levels, highest file level + 1): the old state is still the top.
    expect(show(table.changes({ from: first, to: second, mode: 'changelog' }))).toEqual(['-Ub,1,null', '+Ub,2,null', '-Dc,1,null'].sort());
    expect(new Set(table.buckets(table.latestSnapshot()!).flatMap((b) => b.files.map((f) => f.level)))).toEqual(new Set([5]));
    const r = w.rollbackTo(first, { keepHistory: true });
    expect(show(table.changes({ from: second, to: r.snapshotId!, mode: 'changelog' }))).toEqual(['-Ub,2,null', '+Ub,1,null', '+Ic,1,null'].sort());
    w.close();
  });

  it('with deletion vectors: a delete marked in the top level is a -D at the next full compaction', () => {
    const { table } = setup(SPEC({ 'deletion-vectors.enabled': 'true' }));
    const w = table.newWriter();
    w.writeRecord({ k: 'a', v: 1 });
    w.writeRecord({ k: 'b', v: 1 });
    const first = w.compact(true)!;
    expect(show(table.changes({ from: 0, mode: 'changelog' }))).toEqual(['+Ia,1,null', '+Ib,1,null']);
    // Only a delete: the top-level row is marked in a vector, no level-1 file is written.
    w.writeRecord({ k: 'b' }, RowKind.DELETE);
    w.commit();
    expect(table.scanRows().map((x) => x[0])).toEqual(['a']);
    expect(show(table.changes({ from: first, mode: 'changelog' }))).toEqual([]);
    const second = w.compact(true);
    expect(second).toBeDefined();
    expect(show(table.changes({ from: first, to: second, mode: 'changelog' }))).toEqual(['-Db,1,null']);
    w.writeRecord({ k: 'a', v: 7 });
    w.commit();
    const third = w.compact(true)!;
    expect(show(table.changes({ from: second!, to: third, mode: 'changelog' }))).toEqual(['+Ua,7,null', '-Ua,1,null']);
    w.close();
    expect(() => setup(SPEC({ 'deletion-vectors.enabled': 'true', 'num-levels': '2' }))).toThrow(/full-compaction.*deletion vectors.*num-levels/);
    // Created here, the pair itself is refused, as Paimon refuses it.
    expect(() => TableSchema.fromSpec(SPEC({ 'deletion-vectors.enabled': 'true' }), 0)).toThrow(/conflicts with 'changelog-producer' = 'full-compaction': Paimon refuses the pair/);
  });
});
