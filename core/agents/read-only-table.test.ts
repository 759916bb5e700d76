// ReadOnlyTable's shortcuts give the answers of the plain reads: the per-snapshot scan cache shared
// between runs, point lookups through the scan's index, and the empty diff of a state with itself.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { valueFromJson } from '../lsm/index.ts';
import { readOnlyTable, type ScanCache } from './read-only-table.ts';
import { stockOf } from './rows.ts';
import { DB, TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

describe('read-only table shortcuts', () => {
  it('lookups through the index equal lookups through a reader (hits, misses, other key forms)', () => {
    site = new TestSite();
    for (let i = 0; i < 40; i++) site.stock(`I${i % 10}`, `L${Math.floor(i / 10)}`, { on_hand: i, reserved: i % 3 });
    site.commit();
    site.stock('I1', 'L0', { on_hand: 99 }); // a second run in the bucket: the reader merges
    site.commit();
    const table = site.catalog.getTable({ database: DB, table: 'stock' });
    const keys = [
      ...Array.from({ length: 40 }, (_, i) => ({ item: `I${i % 10}`, location: `L${Math.floor(i / 10)}` })),
      { item: 'NOPE', location: 'L0' },
      { item: 'I1', location: 'L9' },
    ];
    const plain = readOnlyTable(table, 'stock'); // no cache: < 8 lookups each go through a reader
    const expected = keys.map((k) => readOnlyTable(table, 'stock').get(k));
    expect(expected[1]).toMatchObject({ on_hand: 99 });
    expect(expected.at(-1)).toBeUndefined();
    const cache: ScanCache = {};
    const h = readOnlyTable(table, 'stock', undefined, cache);
    expect(keys.map((k) => h.get(k))).toEqual(expected);
    expect(cache.byKey?.size).toBe(40);
    expect(keys.map((k) => plain.get(k))).toEqual(expected);
    // A key the index cannot take (a column missing) goes to the reader, which refuses it as before.
    expect(() => h.get({ item: 'I1' })).toThrow(/primary-key column 'location'/);
  });

  it('looks up a table keyed by a DATE, a TIMESTAMP and a DECIMAL by the JSON form rules see (they were passed as text: refused)', () => {
    site = new TestSite();
    const spec = {
      fields: [
        { name: 'day', type: 'DATE NOT NULL' },
        { name: 'at', type: 'TIMESTAMP(3) NOT NULL' },
        { name: 'lot', type: 'DECIMAL(10, 2) NOT NULL' },
        { name: 'n', type: 'INT' },
      ],
      primaryKeys: ['day', 'at', 'lot'],
      options: { bucket: '1' },
    };
    const created = site.catalog.createTable({ database: DB, table: 'shifts' }, spec);
    const w = created.newWriter();
    const json: Record<string, unknown> = { day: '2026-12-01', at: '2026-12-01T06:00:00', lot: '12.50', n: 7 };
    w.writeRecord(Object.fromEntries(created.schema.fields.map((f) => [f.name, valueFromJson(f.type, json[f.name], f.name)])));
    w.commit();
    w.close();
    const table = site.catalog.getTable({ database: DB, table: 'shifts' });
    const row = readOnlyTable(table, 'shifts').scan()[0]!;
    const key = { day: row.day!, at: row.at!, lot: row.lot! };
    expect(readOnlyTable(table, 'shifts').get(key)).toMatchObject({ n: 7 });
    const id = table.latestSnapshot()!.id;
    expect(readOnlyTable(table, 'shifts').getAt(id, key)).toMatchObject({ n: 7 });
  });

  it('the scan cache follows the snapshot: a new commit is read anew, an old handle keeps its snapshot', () => {
    site = new TestSite();
    site.stock('A', 'L', { on_hand: 1 });
    site.commit();
    const table = site.catalog.getTable({ database: DB, table: 'stock' });
    const cache: ScanCache = {};
    const h1 = readOnlyTable(table, 'stock', undefined, cache);
    const rows1 = h1.scan();
    expect(readOnlyTable(table, 'stock', undefined, cache).scan()).toBe(rows1); // same snapshot: reused
    site.stock('A', 'L', { on_hand: 2 });
    site.commit();
    const h2 = readOnlyTable(table, 'stock', undefined, cache);
    expect(h2.scan()[0]).toMatchObject({ on_hand: 2 });
    expect(h1.scan()).toBe(rows1);
    for (let i = 0; i < 10; i++) expect(h1.get({ item: 'A', location: 'L' })).toMatchObject({ on_hand: 1 });
    for (let i = 0; i < 10; i++) expect(h2.get({ item: 'A', location: 'L' })).toMatchObject({ on_hand: 2 });
  });

  it('changesSince of the handle’s own snapshot (tag or id) is empty; of another it is the diff', () => {
    site = new TestSite();
    site.stock('A', 'L', { on_hand: 1 });
    site.commit();
    const table = site.catalog.getTable({ database: DB, table: 'stock' });
    const h1 = readOnlyTable(table, 'stock');
    table.createTag('t1', h1.snapshotId!);
    expect(h1.changesSince('t1')).toEqual([]);
    expect(h1.changesSince(h1.snapshotId)).toEqual([]);
    expect(h1.changesSince(null)).toEqual([...table.changes({ from: 0, to: h1.snapshotId!, mode: 'diff' })].map((c) => ({ kind: c.kind, row: expect.objectContaining({ item: 'A' }) })));
    expect(() => h1.changesSince('no-such-tag')).toThrow(/does not exist/);
    site.stock('A', 'L', { on_hand: 2 });
    site.commit();
    const h2 = readOnlyTable(table, 'stock');
    expect(h2.changesSince('t1').map((c) => [c.kind, c.row.on_hand])).toEqual([['-U', 1], ['+U', 2]]);
  });

  it('stockOf groups by item in scan order', () => {
    site = new TestSite();
    for (const [i, l] of [['B', 'L2'], ['A', 'L1'], ['B', 'L1'], ['A', 'L3']] as const) site.stock(i, l, { on_hand: 1 });
    site.commit();
    const h = readOnlyTable(site.catalog.getTable({ database: DB, table: 'stock' }), 'stock');
    for (const item of ['A', 'B', 'C']) expect(stockOf(h, item)).toEqual(h.scan().filter((r) => r.item === item));
  });

  it('once the snapshot is scanned, lookups use its index from the first one (no reader)', () => {
    site = new TestSite();
    for (let i = 0; i < 5; i++) site.stock(`I${i}`, 'L', { on_hand: i });
    site.commit();
    const table = site.catalog.getTable({ database: DB, table: 'stock' });
    const h = readOnlyTable(table, 'stock', undefined, {});
    const rows = h.scan();
    const readers = vi.spyOn(table, 'reader');
    expect(h.get({ item: 'I3', location: 'L' })).toBe(rows[3]);
    expect(h.get({ item: 'I9', location: 'L' })).toBeUndefined();
    expect(readers).not.toHaveBeenCalled();
  });

  it('changesSince the previous tag, from two cached scans, equals Table.changes (random inserts, updates, rewrites, deletes)', () => {
    const seed = Number(process.env.SEED ?? Date.now() % 1_000_000_007);
    console.log(`changesSince from cached scans: seed ${seed}`);
    let x = seed >>> 0;
    const rnd = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 4294967296);
    site = new TestSite();
    const table = site.catalog.createTable(
      { database: DB, table: 'diffable' },
      {
        fields: [
          { name: 'k', type: 'STRING NOT NULL' },
          { name: 'n', type: 'BIGINT NOT NULL' },
          { name: 'i', type: 'INT' },
          { name: 'd', type: 'DOUBLE' },
          { name: 'm', type: 'DECIMAL(10, 2)' },
          { name: 'b', type: 'BOOLEAN' },
          { name: 'day', type: 'DATE' },
        ],
        primaryKeys: ['k', 'n'],
        options: { bucket: '1', 'merge-engine': 'deduplicate' },
      },
    );
    const w = table.newWriter();
    const live = new Map<string, Record<string, unknown>>();
    const value = (k: string, n: bigint) => ({ k, n, i: rnd() < 0.2 ? null : Math.floor(rnd() * 5), d: rnd() < 0.2 ? null : Math.floor(rnd() * 4) / 2, m: rnd() < 0.2 ? null : BigInt(Math.floor(rnd() * 3)), b: rnd() < 0.5, day: Math.floor(rnd() * 3) });
    const cache: ScanCache = {};
    const changes = vi.spyOn(table, 'changes');
    let inMemory = 0;
    for (let round = 0; round < 14; round++) {
      const deletes = round % 4 === 3;
      for (let j = 0; j < 30; j++) {
        const k = `K${Math.floor(rnd() * 40)}`;
        const n = BigInt(Math.floor(rnd() * 3));
        const id = `${k}/${n}`;
        if (deletes && live.has(id) && rnd() < 0.3) {
          w.writeRecord(live.get(id)!, 3); // RowKind.DELETE
          live.delete(id);
        } else if (live.has(id) && rnd() < 0.3) {
          w.writeRecord(live.get(id)!); // the same values again: not a change
        } else {
          const v = value(k, n);
          w.writeRecord(v);
          live.set(id, v);
        }
      }
      w.commit();
      const h = readOnlyTable(table, 'diffable', undefined, cache);
      h.scan(); // what a rule does; it leaves the scan for the next round
      table.createTag(`r${round}`, h.snapshotId!);
      if (round === 0) continue;
      const calls = changes.mock.calls.length;
      const got = h.changesSince(`r${round - 1}`);
      if (changes.mock.calls.length === calls) inMemory++;
      else expect(deletes).toBe(true); // only a diff with deletions goes to Table.changes
      expect(got).toEqual(readOnlyTable(table, 'diffable').changesSince(`r${round - 1}`)); // no cache: Table.changes
      // A tag other than the cached scan's snapshot is not taken for it.
      expect(h.changesSince('r0')).toEqual(readOnlyTable(table, 'diffable').changesSince('r0'));
    }
    expect(inMemory).toBeGreaterThanOrEqual(9);
    w.close();
  });
});

describe('versionsSince', () => {
  it("lists one key's versions commit by commit after a snapshot, oldest first; undefined once a commit in between expired", () => {
    site = new TestSite();
    site.job({ job_id: 'J-1', priority: 5 });
    site.job({ job_id: 'J-2', priority: 1 });
    site.commit();
    const table = site.catalog.getTable({ database: DB, table: 'work_queue' });
    const from = table.snapshots.latestId()!;
    site.job({ job_id: 'J-1', priority: 3 });
    site.job({ job_id: 'J-2', priority: 7 });
    site.commit();
    site.job({ job_id: 'J-2', priority: 8 });
    site.commit();
    site.job({ job_id: 'J-1', priority: 4 });
    site.commit();
    const h = readOnlyTable(table, 'work_queue');
    expect(h.versionsSince(from, { job_id: 'J-1' })!.map((c) => [c.kind, c.row.priority])).toEqual([['+I', 3], ['+I', 4]]);
    expect(h.versionsSince(from, { job_id: 'J-2' })!.map((c) => c.row.priority)).toEqual([7, 8]);
    expect(h.versionsSince(from, { job_id: 'J-9' })).toEqual([]);
    expect(h.versionsSince(h.snapshotId!, { job_id: 'J-1' })).toEqual([]);
    expect(() => h.versionsSince(-1, { job_id: 'J-1' })).toThrow(/versionsSince: expected a snapshot id ≥ 0, got -1/);
  });

  it('is undefined when a commit of the range has expired, unless a handle with the same cache read it before', () => {
    // Two snapshots kept: the one the cache read up to and the next.
    site = new TestSite({ 'snapshot.num-retained.min': '2', 'snapshot.num-retained.max': '2', 'snapshot.time-retained': '1 ms' });
    site.job({ job_id: 'J-1', priority: 5 });
    site.commit();
    const table = site.catalog.getTable({ database: DB, table: 'work_queue' });
    const from = table.snapshots.latestId()!;
    // A handle with the agent's cache reads the range once; a later one only the commits after it.
    const cache: ScanCache = {};
    for (const p of [4, 3]) {
      site.nowMs += 1000;
      site.job({ job_id: 'J-1', priority: p });
      site.commit();
    }
    const read = readOnlyTable(table, 'work_queue', undefined, cache);
    expect(read.versionsSince(from, { job_id: 'J-1' })!.map((c) => c.row.priority)).toEqual([4, 3]);
    site.nowMs += 1000;
    site.job({ job_id: 'J-1', priority: 2 });
    site.commit();
    site.nowMs += 1000; // a snapshot expires once the next one is older than time-retained
    site.writers.work_queue.expire();
    expect(table.snapshots.earliestId()).toBeGreaterThan(from + 1);
    expect(readOnlyTable(table, 'work_queue').versionsSince(from, { job_id: 'J-1' })).toBeUndefined();
    const changes = vi.spyOn(table, 'changes');
    expect(readOnlyTable(table, 'work_queue', undefined, cache).versionsSince(from, { job_id: 'J-1' })!.map((c) => c.row.priority)).toEqual([4, 3, 2]);
    expect(changes.mock.calls.map((c) => c[0].from)).toEqual([read.snapshotId]);
  });
});

describe('getAt', () => {
  it("reads one key at an earlier snapshot in the handle's columns; null once that snapshot expired", () => {
    site = new TestSite({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '3', 'snapshot.time-retained': '1 ms' });
    const table = site.catalog.getTable({ database: DB, table: 'stock' });
    site.stock('NUT', 'A', { on_hand: 5, inbound: 3 });
    site.commit();
    const first = table.snapshots.latestId()!;
    site.nowMs += 1000;
    site.stock('NUT', 'A', { on_hand: 1 });
    site.stock('BOLT', 'A', { on_hand: 9 });
    site.commit();
    const h = readOnlyTable(table, 'stock');
    expect(h.getAt(first, { item: 'NUT', location: 'A' })).toMatchObject({ on_hand: 5, inbound: 3 });
    expect(h.getAt(first, { item: 'BOLT', location: 'A' })).toBeUndefined();
    expect(h.getAt(h.snapshotId!, { item: 'NUT', location: 'A' })).toMatchObject({ on_hand: 1, inbound: 3 });
    expect(() => h.getAt(h.snapshotId! + 1, { item: 'NUT', location: 'A' })).toThrow(/getAt: expected a snapshot id from 1 to this handle's \d+, got \d+/);
    for (let i = 0; i < 3; i++) {
      site.nowMs += 1000;
      site.stock('NUT', 'A', { on_hand: i });
      site.commit();
    }
    site.nowMs += 1000;
    site.writers.stock.expire();
    expect(table.snapshots.earliestId()).toBeGreaterThan(first);
    expect(readOnlyTable(table, 'stock').getAt(first, { item: 'NUT', location: 'A' })).toBeNull();
  });
});
