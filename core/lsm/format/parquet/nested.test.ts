// ARRAY and MAP columns in Parquet (nested.ts): round trips through our writer and reader over
// random values (nulls, empty lists/maps, nesting, several pages and row groups), the footer layout
// parquet-mr writes for Java Paimon, and hyparquet (an independent reader) reading our files.

import { describe, expect, it } from 'vitest';
import { parseType, type DataType } from '../../types.ts';
import { readParquet, readParquetFooter, writeParquet, type ParquetColumn } from './index.ts';
import { hyparquetMeta, hyparquetRows, randomValue, rng } from './test-support.ts';

function randomNested(t: DataType, r: () => number, row: number): unknown {
  if (t.nullable && r() < 0.15) return null;
  if (t.root === 'ARRAY') {
    const n = r() < 0.15 ? 0 : Math.floor(r() * 5);
    return Array.from({ length: n }, (_, i) => randomNested(t.element!, r, row * 7 + i));
  }
  if (t.root === 'MAP') {
    const m = new Map<unknown, unknown>();
    const n = r() < 0.15 ? 0 : Math.floor(r() * 4);
    for (let i = 0; i < n; i++) {
      const k = randomValue({ ...t.key!, nullable: false }, r, row * 11 + i);
      m.set(k, randomNested(t.value!, r, row * 13 + i));
    }
    return m;
  }
  return randomValue(t, r, row);
}

const TYPES = [
  'ARRAY<INT>',
  'ARRAY<STRING NOT NULL> NOT NULL',
  'MAP<STRING, BIGINT>',
  'MAP<INT, ARRAY<DOUBLE>>',
  'ARRAY<ARRAY<DECIMAL(20, 3)>>',
  'ARRAY<MAP<STRING, BOOLEAN>>',
  'MAP<BIGINT, TIMESTAMP(3)>',
  'ARRAY<BYTES>',
];

describe('Parquet ARRAY/MAP columns', () => {
  for (const [rows, rowGroupRows, pageRows] of [
    [0, 100, 10],
    [1, 100, 10],
    [300, 1000, 37],
    [500, 120, 50],
  ] as const) {
    it(`round-trips ${rows} rows (row groups of ${rowGroupRows}, pages of ${pageRows})`, () => {
      const r = rng(rows + 5);
      const columns: ParquetColumn[] = [
        { name: 'id', fieldId: 0, type: parseType('INT NOT NULL') },
        ...TYPES.map((t, i) => ({ name: `c${i}`, fieldId: i + 1, type: parseType(t) })),
        { name: 'tail', fieldId: 99, type: parseType('STRING') },
      ];
      const values = columns.map((c) => Array.from({ length: rows }, (_, row) => (c.name === 'id' ? row : randomNested(c.type, r, row))));
      const bytes = writeParquet(columns, values, rows, { compression: 'snappy', rowGroupRows, pageRows });
      const back = readParquet(bytes, columns.map((c) => ({ name: c.name, type: c.type })), 'x.parquet');
      expect(back.rowCount).toBe(rows);
      for (let c = 0; c < columns.length; c++) expect(back.columns[c]).toEqual(values[c]);
      // A subset, in another order, and a column missing from the file.
      const some = readParquet(bytes, [{ name: 'c3', type: columns[4]!.type }, { name: 'nope', type: parseType('ARRAY<INT>') }, { name: 'id', type: columns[0]!.type }], 'x');
      expect(some.columns[0]).toEqual(values[4]);
      expect(some.columns[1]).toEqual(new Array(rows).fill(null));
      expect(some.columns[2]).toEqual(values[0]);
    });
  }

  it('writes the layout parquet-mr writes for Paimon (3-level LIST, key_value MAP)', () => {
    const columns: ParquetColumn[] = [
      { name: 'tags', fieldId: 3, type: parseType('ARRAY<STRING>') },
      { name: 'm', fieldId: 4, type: parseType('MAP<STRING, INT> NOT NULL') },
    ];
    const bytes = writeParquet(columns, [[['a', null], null], [new Map([['k', 1]]), new Map()]], 2, { compression: 'uncompressed' });
    const schema = hyparquetMeta(bytes).schema.map((e) => [e.name, e.repetition_type ?? null, e.num_children ?? null, e.converted_type ?? null]);
    expect(schema).toEqual([
      ['paimon_schema', null, 2, null],
      ['tags', 'OPTIONAL', 1, 'LIST'],
      ['list', 'REPEATED', 1, null],
      ['element', 'OPTIONAL', null, 'UTF8'],
      ['m', 'REQUIRED', 1, 'MAP'],
      ['key_value', 'REPEATED', 2, null],
      ['key', 'REQUIRED', null, 'UTF8'],
      ['value', 'OPTIONAL', null, null],
    ]);
    expect(readParquetFooter(bytes, 'x').columns.map((c) => c.name)).toEqual(['tags.list.element', 'm.key_value.key', 'm.key_value.value']);
  });

  it('hyparquet reads our lists and maps', async () => {
    const columns: ParquetColumn[] = [
      { name: 'a', fieldId: 0, type: parseType('ARRAY<INT>') },
      { name: 'm', fieldId: 1, type: parseType('MAP<STRING, INT>') },
      { name: 'aa', fieldId: 2, type: parseType('ARRAY<ARRAY<STRING>>') },
    ];
    const a = [[1, null, 3], [], null, [4]];
    const m = [new Map([['x', 1], ['y', null]]), null, new Map(), new Map([['z', 2]])];
    const aa = [[['p'], [], null], null, [[null, 'q']], []];
    const bytes = writeParquet(columns, [a, m, aa], 4, { compression: 'snappy', pageRows: 3 });
    const rows = await hyparquetRows(bytes);
    expect(rows.map((r) => r.a)).toEqual([[1, null, 3], [], undefined, [4]].map((x) => x ?? null));
    expect(rows.map((r) => r.m)).toEqual([{ x: 1, y: null }, null, {}, { z: 2 }]);
    expect(rows.map((r) => r.aa)).toEqual([[['p'], [], null], null, [[null, 'q']], []]);
  });

  it('refuses nulls in NOT NULL positions and a leaf read as ARRAY', () => {
    const t = parseType('ARRAY<INT NOT NULL>');
    expect(() => writeParquet([{ name: 'a', fieldId: 0, type: t }], [[[1, null]]], 1, { compression: 'uncompressed' })).toThrow(/NOT NULL/);
    const bytes = writeParquet([{ name: 'a', fieldId: 0, type: parseType('INT') }], [[1]], 1, { compression: 'uncompressed' });
    expect(() => readParquet(bytes, [{ name: 'a', type: t }], 'x')).toThrow(/leaf in the file/);
  });
});
