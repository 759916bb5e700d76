// writeParquetFile reuses the encoded chunk of an earlier column for a later column with the same
// values (Paimon's `_KEY_x` and `x`). Reuse is only right when the chunk bytes would be equal:
// these tests pin the cases where they are not (0 vs -0 in DOUBLE, REQUIRED vs OPTIONAL, MILLIS vs
// MICROS timestamps) and check that reused columns read back as written.

import { describe, expect, it } from 'vitest';
import { parseType } from '../../types.ts';
import { readParquet, writeParquet, type ParquetColumn } from './index.ts';

const col = (name: string, type: string, fieldId: number): ParquetColumn => ({ name, fieldId, type: parseType(type) });

function roundTrip(columns: ParquetColumn[], values: unknown[][]): unknown[][] {
  const bytes = writeParquet(columns, values, values[0]!.length, { compression: 'snappy', pageRows: 3 });
  return readParquet(bytes, columns.map((c) => ({ name: c.name, type: c.type })), 'mem.parquet').columns;
}

describe('parquet writer: a column repeating an earlier one', () => {
  it('reads back the repeated column, the same array or an equal one', () => {
    const keys = ['a', 'a', 'b', 'c', 'c', 'd', 'é', '\u{1F600}'];
    const out = roundTrip([col('_KEY_k', 'STRING NOT NULL', 1), col('k', 'STRING NOT NULL', 2), col('k2', 'STRING NOT NULL', 3)], [keys, keys, [...keys]]);
    expect(out).toEqual([keys, keys, keys]);
  });

  it('keeps -0 and 0 apart in DOUBLE columns that are otherwise equal', () => {
    const a = [1.5, 0, 2, null, 3, 0];
    const b = [1.5, -0, 2, null, 3, 0];
    const out = roundTrip([col('a', 'DOUBLE', 1), col('b', 'DOUBLE', 2)], [a, b]);
    expect(Object.is(out[0]![1], 0)).toBe(true);
    expect(Object.is(out[1]![1], -0)).toBe(true);
  });

  it('treats null and undefined alike, and keeps REQUIRED and OPTIONAL chunks apart', () => {
    const out = roundTrip(
      [col('a', 'INT', 1), col('b', 'INT', 2), col('c', 'INT NOT NULL', 3), col('d', 'INT', 4)],
      [[1, null, 3, 4], [1, undefined, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]],
    );
    expect(out).toEqual([[1, null, 3, 4], [1, null, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]]);
  });

  it('does not share a chunk between MILLIS and MICROS timestamps of equal values', () => {
    const us = [1_700_000_000_123_000, 1_700_000_000_456_000, 1_700_000_001_000_000];
    const out = roundTrip([col('ms', 'TIMESTAMP(3)', 1), col('us', 'TIMESTAMP(6)', 2)], [us, [...us]]);
    expect(out).toEqual([us, us]);
  });
});
