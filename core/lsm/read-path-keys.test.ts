// Read-path edge cases found by a bug hunt: a point lookup of a DOUBLE key -0.0 (a key of its own,
// as in Java: Double.compare and BinaryRow bytes both tell it from 0.0) once the run's hash index
// is built; point lookups in a table whose bucket count Java changed (its partitions keep the
// count they were written with, `_TOTAL_BUCKETS`, until rewritten); `get` of a reader of the
// latest snapshot after an ALTER in this process.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import type { SchemaSpec } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newTable(spec: SchemaSpec, clock?: () => number): Table {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-read-path-'));
  dirs.push(dir);
  const c = new Catalog(dir, clock ? { clock } : {});
  c.createDatabase('db');
  return c.createTable({ database: 'db', table: 't' }, spec);
}

describe('point lookups of a DOUBLE key', () => {
  it('do not find the key 0.0 when asked for -0.0, before and after the run index is built', () => {
    const t = newTable({ fields: [{ name: 'x', type: 'DOUBLE' }, { name: 'v', type: 'INT' }], primaryKeys: ['x'], options: { bucket: '1' } });
    const w = t.newWriter();
    // Whole-numbered doubles: the run's key column looks like int32 numbers to the hash index.
    for (let i = -50; i < 50; i++) w.writeRecord({ x: i, v: i });
    w.commit();
    w.close();
    const r = t.reader();
    try {
      expect(r.get({ x: -0 })).toBeUndefined(); // binary search: Double.compare(-0.0, 0.0) < 0
      for (let i = -50; i < 50; i++) expect(r.get({ x: i })).toEqual([i, i]); // builds the run's index
      expect(r.get({ x: -0 })).toBeUndefined();
      expect(r.get({ x: 0 })).toEqual([0, 0]);
      // A scan agrees: -0.0 is no key of the table.
      expect(t.scanRows({}, { where: [{ column: 'x', op: '=', value: -0 }] })).toEqual([]);
    } finally {
      r.close();
    }
  });
});

describe('point lookups after Java changed the bucket count', () => {
  it("find a key of a partition still written for the old count, in the bucket its files' count gives", () => {
    const spec: SchemaSpec = {
      fields: [{ name: 'p', type: 'INT' }, { name: 'k', type: 'INT' }, { name: 'v', type: 'STRING' }],
      primaryKeys: ['p', 'k'],
      partitionKeys: ['p'],
      options: { bucket: '2' },
    };
    const t = newTable(spec);
    const w = t.newWriter();
    for (let k = 0; k < 20; k++) w.writeRecord({ p: 1, k, v: `old ${k}` });
    w.commit();
    w.close();
    // Java's ALTER TABLE SET ('bucket' = '3'), then INSERT OVERWRITE of no partition yet
    // ("Rescale Bucket"): partition p=1 keeps its files written for two buckets.
    const json = JSON.parse(readFileSync(t.paths.schemaFile(0), 'utf8'));
    writeFileSync(t.paths.schemaFile(1), JSON.stringify({ ...json, id: 1, options: { ...json.options, bucket: '3' } }));
    const t2 = Table.open(t.paths.root);
    expect(t2.schema.options.bucket).toBe(3);
    expect(t2.scanRows()).toHaveLength(20);
    const r = t2.reader();
    try {
      for (let k = 0; k < 20; k++) expect(r.get({ p: 1, k })).toEqual([1, k, `old ${k}`]);
      expect(r.get({ p: 1, k: 20 })).toBeUndefined();
      expect(r.get({ p: 2, k: 1 })).toBeUndefined();
    } finally {
      r.close();
    }
  });

  it('find a key of an unpartitioned table whose files are all still written for the old count', () => {
    const t = newTable({ fields: [{ name: 'k', type: 'STRING' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '4' } });
    const w = t.newWriter();
    for (let i = 0; i < 30; i++) w.writeRecord({ k: `k${i}`, v: i });
    w.commit();
    w.close();
    const json = JSON.parse(readFileSync(t.paths.schemaFile(0), 'utf8'));
    writeFileSync(t.paths.schemaFile(1), JSON.stringify({ ...json, id: 1, options: { ...json.options, bucket: '5' } }));
    const r = Table.open(t.paths.root).reader();
    try {
      for (let i = 0; i < 30; i++) expect(r.get({ k: `k${i}` })).toEqual([`k${i}`, i]);
    } finally {
      r.close();
    }
  });
});

describe('a reader of the latest snapshot after an ALTER in this process', () => {
  it('gets rows in the new columns and keys by their new names, as its scan and schema give them', () => {
    const t = newTable({
      fields: [{ name: 'k', type: 'INT' }, { name: 'a', type: 'INT' }, { name: 'b', type: 'INT' }],
      primaryKeys: ['k'],
      options: { bucket: '1', 'merge-engine': 'partial-update' },
    });
    const w = t.newWriter();
    w.writeRecord({ k: 1, a: 1, b: null });
    w.commit();
    w.writeRecord({ k: 1, a: null, b: 2 }); // a second run: the key is folded
    w.commit();
    w.close();
    const r = t.reader();
    try {
      expect(r.get({ k: 1 })).toEqual([1, 1, 2]);
      t.alter([{ kind: 'addColumn', name: 'c', type: 'INT' }]);
      expect(r.schema.fields.map((f) => f.name)).toEqual(['k', 'a', 'b', 'c']);
      expect([...r.scan()]).toEqual([[1, 1, 2, null]]);
      expect(r.get({ k: 1 })).toEqual([1, 1, 2, null]);
      t.alter([{ kind: 'renameColumn', from: 'k', to: 'id' }]);
      expect(r.get({ id: 1 })).toEqual([1, 1, 2, null]);
    } finally {
      r.close();
    }
  });
});
