// readParquetTyped: columns requested `typed` decode straight into typed arrays with a null bitmap
// and must hold exactly what readParquet's JS values hold — across pages, row groups, nulls,
// data page v1 (our writer) and v2 with dictionary, delta and byte-stream-split pages
// (hyparquet-writer); columns without a typed form stay JS arrays.

import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { parseType } from '../../types.ts';
import { readParquet, readParquetTyped, writeParquet, type ParquetReadColumn, type TypedColumn } from './index.ts';
import { generate, rng, typedColumns } from './test-support.ts';

/** A typed column as the JS values readParquet gives (null where the bit is set). */
function expand(c: TypedColumn, root: string): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < c.values.length; i++) {
    const isNull = c.nulls !== undefined && (c.nulls[i >>> 3]! & (1 << (i & 7))) !== 0;
    out.push(isNull ? null : root === 'BOOLEAN' ? c.values[i] === 1 : c.values[i]);
  }
  return out;
}

function isTyped(c: unknown): c is TypedColumn {
  return !Array.isArray(c);
}

/** Reads `bytes` both ways and checks every column agrees; returns which columns came back typed. */
function compare(bytes: Uint8Array, request: ParquetReadColumn[]): boolean[] {
  const plain = readParquet(bytes, request, 'x.parquet');
  const typed = readParquetTyped(bytes, request.map((r) => ({ ...r, typed: true })), 'x.parquet');
  expect(typed.rowCount).toBe(plain.rowCount);
  return typed.columns.map((c, k) => {
    const root = request[k]!.type.root;
    if (isTyped(c)) {
      expect(c.values.length, request[k]!.name).toBe(plain.rowCount);
      expect(expand(c, root), request[k]!.name).toEqual(plain.columns[k]);
      return true;
    }
    expect(c, request[k]!.name).toEqual(plain.columns[k]);
    return false;
  });
}

describe('readParquetTyped', () => {
  const TYPES = ['INT', 'SMALLINT', 'TINYINT', 'DATE', 'BIGINT', 'BOOLEAN', 'STRING', 'DOUBLE', 'TIMESTAMP(6)', 'DECIMAL(12, 2)'];
  const TYPED = [true, true, true, true, true, true, false, false, false, false];

  for (const nullable of [true, false]) {
    it(`our files (v1 pages, several pages and row groups), ${nullable ? 'nullable' : 'NOT NULL'} columns`, () => {
      const seed = 20261130 + (nullable ? 1 : 0);
      console.log(`typed-read seed ${seed}`);
      const columns = typedColumns(TYPES, nullable);
      const rows = 1234;
      const values = generate(columns, rows, seed);
      for (const compression of ['snappy', 'uncompressed'] as const) {
        const bytes = writeParquet(columns, values, rows, { compression, rowGroupRows: 500, pageRows: 97 });
        const request = columns.map((c) => ({ name: c.name, type: c.type }));
        expect(compare(bytes, request)).toEqual(TYPED);
        const typed = readParquetTyped(bytes, request.map((r) => ({ ...r, typed: true })), 'x.parquet');
        // NOT NULL columns never get a bitmap.
        if (!nullable) for (const c of typed.columns) if (isTyped(c)) expect(c.nulls).toBeUndefined();
      }
    });
  }

  it('keeps BIGINT read as numbers (asNumber) and absent columns as JS arrays', () => {
    const columns = typedColumns(['BIGINT'], true);
    const values = generate(columns, 50, 3);
    const bytes = writeParquet(columns, values, 50, { compression: 'snappy' });
    const got = readParquetTyped(
      bytes,
      [
        { name: columns[0]!.name, type: columns[0]!.type, asNumber: true, typed: true },
        { name: 'absent', type: parseType('INT'), typed: true },
      ],
      'x.parquet',
    );
    expect(Array.isArray(got.columns[0])).toBe(true);
    expect(got.columns[1]).toEqual(new Array(50).fill(null));
  });

  // hyparquet-writer: data page v2, dictionary, delta and byte-stream-split encodings.
  const ROWS = 3000;
  const r = rng(91);
  const ints = Array.from({ length: ROWS }, (_, i) => (i % 11 === 0 ? null : Math.floor((r() - 0.5) * 2 ** 32)));
  const small = Array.from({ length: ROWS }, (_, i) => (i % 7 === 0 ? null : i % 5)); // dictionary pays
  const longs = Array.from({ length: ROWS }, (_, i) => (i % 13 === 0 ? null : BigInt.asIntN(64, BigInt(Math.floor(r() * 2 ** 53)) * 4099n)));
  const bools = Array.from({ length: ROWS }, (_, i) => (i % 17 === 0 ? null : r() < 0.3));
  type Enc = 'PLAIN' | 'RLE' | 'RLE_DICTIONARY' | 'DELTA_BINARY_PACKED' | 'BYTE_STREAM_SPLIT';
  const cases: Array<[string, { i?: Enc; k?: Enc; l?: Enc; b?: Enc }]> = [
    ['default', {}],
    ['dictionary', { i: 'RLE_DICTIONARY', k: 'RLE_DICTIONARY', l: 'RLE_DICTIONARY' }],
    ['delta', { i: 'DELTA_BINARY_PACKED', k: 'DELTA_BINARY_PACKED', l: 'DELTA_BINARY_PACKED', b: 'RLE' }],
    ['byte stream split', { i: 'BYTE_STREAM_SPLIT', l: 'BYTE_STREAM_SPLIT' }],
  ];
  for (const [name, enc] of cases) {
    it(`files of another writer: ${name}`, () => {
      const bytes = new Uint8Array(
        parquetWriteBuffer({
          codec: 'SNAPPY',
          pageSize: 4000,
          rowGroupSize: 1000,
          columnData: [
            { name: 'i', data: ints, type: 'INT32', encoding: enc.i },
            { name: 'k', data: small, type: 'INT32', encoding: enc.k },
            { name: 'l', data: longs, type: 'INT64', encoding: enc.l },
            { name: 'b', data: bools, type: 'BOOLEAN', encoding: enc.b },
          ],
        }),
      );
      const request = [
        { name: 'i', type: parseType('INT') },
        { name: 'k', type: parseType('INT') },
        { name: 'l', type: parseType('BIGINT') },
        { name: 'b', type: parseType('BOOLEAN') },
      ];
      expect(compare(bytes, request)).toEqual([true, true, true, true]);
      expect(readParquet(bytes, request, 'x.parquet').columns).toEqual([ints, small, longs, bools]);
    });
  }
});
