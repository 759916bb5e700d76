// Time travel reads with the snapshot's own schema (EVOLUTION-DESIGN.md §1, as Paimon's
// AbstractFileStoreTable.tryTimeTravel): a tag taken before an ALTER comes back in its columns —
// scans, projections, filters and point lookups named in them — while the latest snapshot reads
// in today's; the run cache never hands one shape to a reader of the other.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import type { SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';
import { typeToString } from './types.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function newTable(spec: SchemaSpec, catalog?: Catalog): Table {
  let c = catalog;
  if (!c) {
    const d = mkdtempSync(join(tmpdir(), 'lsm-travel-'));
    dirs.push(d);
    c = new Catalog(d);
  }
  c.createDatabase('db', true);
  return c.createTable({ database: 'db', table: `t${c.listTables('db').length}` }, spec);
}

const columns = (t: { schema: Table['schema'] }) => t.schema.fields.map((f) => `${f.name}:${typeToString(f.type)}`);
const byKey = (rows: unknown[][]) => rows.sort((x, y) => Number(x[0]) - Number(y[0]));

const SPEC: SchemaSpec = {
  fields: [
    { name: 'k', type: 'INT' },
    { name: 'a', type: 'INT' },
    { name: 'b', type: 'STRING' },
    { name: 'gone', type: 'STRING' },
  ],
  primaryKeys: ['k'],
  options: { bucket: '2' },
};

/** SPEC with rows 1..4 tagged `before`, then altered (rename key and b, drop gone, widen a, add e) and written again. */
function altered(catalog?: Catalog): Table {
  const t = newTable(SPEC, catalog);
  let w = t.newWriter();
  for (let k = 1; k <= 4; k++) w.write([k, k * 10, `b${k}`, `g${k}`]);
  w.commit();
  w.close();
  t.createTag('before');
  t.alter([
    { kind: 'renameColumn', from: 'k', to: 'id' },
    { kind: 'renameColumn', from: 'b', to: 'bee' },
    { kind: 'dropColumn', name: 'gone' },
    { kind: 'updateColumnType', name: 'a', type: 'BIGINT' },
    { kind: 'addColumn', name: 'e', type: 'STRING' },
  ]);
  w = t.newWriter();
  w.write([1, 11n, 'b1x', 'e1']);
  w.write([5, 50n, 'b5', 'e5']);
  w.commit();
  w.close();
  return t;
}

const OLD_ROWS = [[1, 10, 'b1', 'g1'], [2, 20, 'b2', 'g2'], [3, 30, 'b3', 'g3'], [4, 40, 'b4', 'g4']];
const NEW_ROWS = [[1, 11n, 'b1x', 'e1'], [2, 20n, 'b2', null], [3, 30n, 'b3', null], [4, 40n, 'b4', null], [5, 50n, 'b5', 'e5']];

describe('time travel reads in the snapshot\'s schema', () => {
  it('reads a tag taken before an ALTER in its own columns and the latest in today\'s', () => {
    const t = altered();
    const r = t.reader({ tag: 'before' });
    try {
      expect(r.schema.id).toBe(0);
      expect(columns(r)).toEqual(['k:INT NOT NULL', 'a:INT', 'b:STRING', 'gone:STRING']);
      expect(r.schema.primaryKeys).toEqual(['k']);
      expect(byKey([...r.scan()])).toEqual(OLD_ROWS);
      // Point lookups and projections/filters name the tag's columns.
      expect(r.get({ k: 3 })).toEqual([3, 30, 'b3', 'g3']);
      expect(r.get({ k: 5 })).toBeUndefined();
      expect(() => r.get({ id: 3 })).toThrow(/primary-key column 'k'/);
      expect([...r.scan({ projection: ['gone', 'a'], where: [{ column: 'b', op: '=', value: 'b2' }] })]).toEqual([['g2', 20]]);
      expect([...r.scan({ projection: ['k'], where: [{ column: 'gone', op: '>=', value: 'g3' }] })].sort()).toEqual([[3], [4]]);
      expect(byKey([...r.scan({ where: [{ column: 'k', op: '<=', value: 2 }] })])).toEqual(OLD_ROWS.slice(0, 2));
      expect(() => r.scan({ projection: ['e'] })).toThrow(/unknown column 'e'/);
      expect(() => r.scan({ where: [{ column: 'bee', op: '=', value: 'b1' }] })).toThrow(/unknown column 'bee'/);
    } finally {
      r.close();
    }
    // The same snapshot by id and by time.
    const first = t.tags.get('before').snapshot;
    expect(byKey(t.scanRows({ snapshotId: first.id }))).toEqual(OLD_ROWS);
    expect(byKey(t.scanRows({ timestampMs: first.timeMillis }))).toEqual(OLD_ROWS);

    // The latest, with and without naming its snapshot, in today's columns.
    expect(columns(t)).toEqual(['id:INT NOT NULL', 'a:BIGINT', 'bee:STRING', 'e:STRING']);
    expect(byKey(t.scanRows())).toEqual(NEW_ROWS);
    expect(byKey(t.scanRows({ snapshotId: t.latestSnapshot()!.id }))).toEqual(NEW_ROWS);
    const latest = t.reader();
    try {
      expect(latest.schema).toBe(t.schema);
      expect(latest.get({ id: 1 })).toEqual([1, 11n, 'b1x', 'e1']);
      expect([...latest.scan({ projection: ['bee', 'e'], where: [{ column: 'a', op: '>', value: 30n }] })].sort()).toEqual([['b4', null], ['b5', 'e5']]);
    } finally {
      latest.close();
    }
  });

  it('reads a snapshot in the columns of the schema a caller names (`schemaId`), older files and newer alike', () => {
    const t = altered();
    // The tag's snapshot in today's columns (what a caller that pins "now" by id wants).
    expect(byKey(t.scanRows({ tag: 'before', schemaId: t.schema.id }))).toEqual([[1, 10n, 'b1', null], [2, 20n, 'b2', null], [3, 30n, 'b3', null], [4, 40n, 'b4', null]]);
    // The latest snapshot in schema 0's: newer files mapped back by field id (a null for a dropped id).
    expect(byKey(t.scanRows({ schemaId: 0 }))).toEqual([[1, 11, 'b1x', null], [2, 20, 'b2', 'g2'], [3, 30, 'b3', 'g3'], [4, 40, 'b4', 'g4'], [5, 50, 'b5', null]]);
    expect(() => t.reader({ schemaId: 9 })).toThrow(/schema 9 .* does not exist/);
  });

  it('keeps reading the tag in its columns after compaction and a further ALTER', () => {
    const t = altered();
    t.createTag('middle');
    const w = t.newWriter();
    w.compact(true);
    w.close();
    t.alter([{ kind: 'addColumn', name: 'f', type: 'INT', position: { first: true } }]);
    expect(byKey(t.scanRows({ tag: 'before' }))).toEqual(OLD_ROWS);
    const middle = t.reader({ tag: 'middle' });
    try {
      expect(columns(middle)).toEqual(['id:INT NOT NULL', 'a:BIGINT', 'bee:STRING', 'e:STRING']);
      expect(byKey([...middle.scan()])).toEqual(NEW_ROWS);
    } finally {
      middle.close();
    }
    expect(byKey(t.scanRows().map((r) => r.slice(1)))).toEqual(NEW_ROWS);
    expect(t.scanRows().every((r) => r[0] === null)).toBe(true);
  });

  it('never serves a run cached in one shape to a reader of the other, and shares runs when only options changed', () => {
    const t = altered();
    for (let i = 0; i < 2; i++) {
      // Warm both shapes of the schema-0 files, in turn, twice: each read still gets its own columns.
      expect(byKey(t.scanRows())).toEqual(NEW_ROWS);
      expect(byKey(t.scanRows({ tag: 'before' }))).toEqual(OLD_ROWS);
      const r = t.reader({ tag: 'before' });
      expect(r.get({ k: 2 })).toEqual([2, 20, 'b2', 'g2']);
      r.close();
      const l = t.reader();
      expect(l.get({ id: 2 })).toEqual([2, 20n, 'b2', null]);
      l.close();
    }
    // An ALTER of options only: the tag's schema has today's columns, so its reads hit the latest's runs.
    const u = newTable(SPEC);
    const w = u.newWriter();
    w.write([1, 10, 'b1', 'g1']);
    w.commit();
    w.close();
    u.createTag('before');
    u.alter([{ kind: 'setOption', key: 'snapshot.num-retained.min', value: '5' }]);
    expect(u.scanRows()).toEqual([[1, 10, 'b1', 'g1']]);
    const misses = u.cache.misses;
    const r = u.reader({ tag: 'before' });
    expect(r.schema.id).toBe(0);
    expect(r.schema.options.snapshotsRetainedMin).toBe(5); // today's options, as Paimon's time travel
    expect([...r.scan()]).toEqual([[1, 10, 'b1', 'g1']]);
    r.close();
    expect(u.cache.misses).toBe(misses);
  });

  it('takes today\'s options onto the tag\'s columns, with the column names they hold as the tag had them', () => {
    // sequence.field renamed after the tag: the tag's merge still orders by it.
    const t = newTable({ fields: [{ name: 'k', type: 'INT' }, { name: 's', type: 'INT' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1', 'sequence.field': 's' } });
    let w = t.newWriter();
    w.write([1, 10, 'new']);
    w.write([1, 5, 'stale']);
    w.commit();
    w.close();
    t.createTag('before');
    t.alter([{ kind: 'renameColumn', from: 's', to: 'seq' }]);
    const r = t.reader({ tag: 'before' });
    expect(r.schema.options.raw['sequence.field']).toBe('s');
    expect(r.get({ k: 1 })).toEqual([1, 10, 'new']);
    expect([...r.scan()]).toEqual([[1, 10, 'new']]);
    r.close();

    // An aggregate function set on a column added after the tag: left out of the tag's options.
    const a = newTable({ fields: [{ name: 'k', type: 'INT' }, { name: 'n', type: 'BIGINT' }], primaryKeys: ['k'], options: { bucket: '1', 'merge-engine': 'aggregation', 'fields.n.aggregate-function': 'sum' } });
    w = a.newWriter();
    w.write([1, 2n]);
    w.write([1, 3n]);
    w.commit();
    w.close();
    a.createTag('before');
    a.alter([{ kind: 'addColumn', name: 'm', type: 'BIGINT' }, { kind: 'setOption', key: 'fields.m.aggregate-function', value: 'max' }]);
    w = a.newWriter();
    w.write([1, 1n, 7n]);
    w.commit();
    w.close();
    expect(a.scanRows({ tag: 'before' })).toEqual([[1, 5n]]);
    expect(a.scanRows()).toEqual([[1, 6n, 7n]]);
  });

  it('reads an append table at a tag in its columns', () => {
    const t = newTable({ fields: [{ name: 'site', type: 'STRING' }, { name: 'score', type: 'INT' }] });
    let w = t.newWriter();
    w.write(['s1', 1]);
    w.commit();
    w.close();
    t.createTag('before');
    t.alter([{ kind: 'renameColumn', from: 'site', to: 'where' }, { kind: 'updateColumnType', name: 'score', type: 'DOUBLE' }]);
    w = t.newWriter();
    w.write(['s2', 2.5]);
    w.commit();
    w.close();
    expect(t.scanRows({ tag: 'before' }, { projection: ['score', 'site'] })).toEqual([[1, 's1']]);
    expect(t.scanRows({}, { projection: ['score', 'where'] })).toEqual([[1, 's1'], [2.5, 's2']]);
  });
});
