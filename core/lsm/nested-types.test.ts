// ARRAY and MAP columns end to end: type strings and Paimon's schema-file JSON objects, in-memory
// checks, JSON conversion, the refusals (keys, partitions, sequence fields, ROW), writing and
// reading through Parquet and Avro data files, and null statistics for nested columns.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { checkValue, parseType, typeToJson, typeToString, valueFromJson, valueToJson, valuesEqual } from './types.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('ARRAY and MAP types', () => {
  it('parse and print as Paimon does (strings and schema JSON objects)', () => {
    for (const s of ['ARRAY<INT>', 'ARRAY<STRING NOT NULL> NOT NULL', 'MAP<STRING, DECIMAL(10, 2)>', 'MAP<INT NOT NULL, ARRAY<MAP<STRING, BIGINT>>> NOT NULL']) {
      expect(typeToString(parseType(s))).toBe(s);
      expect(parseType(typeToJson(parseType(s)))).toEqual(parseType(s));
    }
    expect(typeToJson(parseType('MAP<STRING, ARRAY<INT>> NOT NULL'))).toEqual({ type: 'MAP NOT NULL', key: 'STRING', value: { type: 'ARRAY', element: 'INT' } });
    expect(parseType({ type: 'ARRAY', element: 'INT NOT NULL' })).toEqual(parseType('array<int not null>'));
    expect(() => parseType('ROW<a INT>')).toThrow(/ROW columns are not supported/);
    expect(() => parseType({ type: 'ROW', fields: [] })).toThrow(/ROW columns are not supported/);
    expect(() => parseType('MAP<INT>')).toThrow(/key type and a value type/);
    expect(() => parseType('ARRAY<INT')).toThrow(/closing/);
  });

  it('check values and convert to and from JSON', () => {
    const a = parseType('ARRAY<BIGINT>');
    expect(checkValue(a, [1n, null])).toBeUndefined();
    expect(checkValue(a, [1])).toMatch(/element 0/);
    const m = parseType('MAP<STRING, INT>');
    expect(checkValue(m, new Map([['a', 1]]))).toBeUndefined();
    expect(checkValue(m, { a: 1 })).toMatch(/expected a Map/);
    expect(checkValue(parseType('MAP<BYTES, INT>'), new Map([[Uint8Array.of(1), 1], [Uint8Array.of(1), 2]]))).toMatch(/duplicate map key/);
    expect(valueToJson(m, new Map([['a', 1]]))).toEqual({ a: 1 });
    expect(valueFromJson(m, { a: 1 })).toEqual(new Map([['a', 1]]));
    const mi = parseType('MAP<BIGINT, DATE>');
    expect(valueToJson(mi, new Map([[5n, 0]]))).toEqual([[5, '1970-01-01']]);
    expect(valueFromJson(mi, [[5, '1970-01-02']])).toEqual(new Map([[5n, 1]]));
    expect(() => valueFromJson(mi, { 5: '1970-01-02' })).toThrow(/array of \[key, value\] pairs/);
    expect(valueFromJson(a, ['9007199254740993'])).toEqual([9007199254740993n]);
    expect(valuesEqual(new Map([[1, [1]], [2, null]]), new Map([[2, null], [1, [1]]]))).toBe(true);
    expect(valuesEqual([1, [2]], [1, [3]])).toBe(false);
  });

  it('are refused as key, partition and sequence columns, and by min/max', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nested-'));
    dirs.push(dir);
    const c = new Catalog(dir);
    c.createDatabase('db');
    const make = (extra: object) => () =>
      c.createTable({ database: 'db', table: `t${Math.random().toString(36).slice(2)}` }, {
        fields: [
          { name: 'id', type: 'INT NOT NULL' },
          { name: 'a', type: 'ARRAY<INT>' },
        ],
        primaryKeys: ['id'],
        ...extra,
      });
    expect(make({ primaryKeys: ['id', 'a'] })).toThrow(/ARRAY and MAP columns cannot be primary-key columns/);
    expect(make({ partitionKeys: ['a'] })).toThrow(/cannot be partition columns/);
    expect(make({ options: { 'sequence.field': 'a' } })).toThrow(/cannot be sequence.field columns/);
    expect(make({ options: { 'merge-engine': 'aggregation', 'fields.a.aggregate-function': 'max' } })).toThrow(/needs a column with an order/);
  });

  for (const format of ['parquet', 'avro']) {
    it(`are written and read through ${format} data files, schema JSON as Paimon writes it, null stats`, () => {
      const dir = mkdtempSync(join(tmpdir(), 'nested-'));
      dirs.push(dir);
      const c = new Catalog(dir);
      c.createDatabase('db');
      const t = c.createTable({ database: 'db', table: 't' }, {
        fields: [
          { name: 'id', type: 'INT NOT NULL' },
          { name: 'tags', type: 'ARRAY<STRING>' },
          { name: 'attrs', type: { type: 'MAP', key: 'INT NOT NULL', value: { type: 'ARRAY', element: 'DOUBLE' } } },
        ],
        primaryKeys: ['id'],
        options: { 'file.format': format },
      });
      const schemaJson = JSON.parse(readFileSync(join(t.paths.root, 'schema', 'schema-0'), 'utf8'));
      expect(schemaJson.fields[1].type).toEqual({ type: 'ARRAY', element: 'STRING' });
      expect(schemaJson.fields[2].type).toEqual({ type: 'MAP', key: 'INT NOT NULL', value: { type: 'ARRAY', element: 'DOUBLE' } });
      const w = t.newWriter();
      const rows = [
        { id: 1, tags: ['a', null, 'b'], attrs: new Map([[1, [1.5, null]], [2, null]]) },
        { id: 2, tags: [], attrs: new Map() },
        { id: 3, tags: null, attrs: null },
      ];
      for (const r of rows) w.writeRecord(r);
      w.commit();
      w.close();
      const back = c.getTable({ database: 'db', table: 't' }).scanRows();
      expect(back).toEqual(rows.map((r) => [r.id, r.tags, r.attrs]));
    });
  }
});
