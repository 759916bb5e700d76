// ReadOnlyTable's shortcuts give the answers of the plain reads: the per-snapshot scan cache shared
// between runs, point lookups through the scan's index, and the empty diff of a state with itself.
import { afterEach, describe, expect, it } from 'vitest';
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
});
