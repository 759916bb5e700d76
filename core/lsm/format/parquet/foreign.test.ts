// Files from another writer (hyparquet-writer: data page v2, RLE_DICTIONARY with PLAIN dictionary
// pages, DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT, RLE
// booleans) must read with the values that were written.

import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { parseType } from '../../types.ts';
import { readParquet } from './index.ts';
import { hyparquetMeta, rng } from './test-support.ts';

const ROWS = 3000;
const r = rng(77);
const ints = Array.from({ length: ROWS }, (_, i) => (i % 11 === 0 ? null : Math.floor((r() - 0.5) * 2 ** 32)));
const longs = Array.from({ length: ROWS }, (_, i) => (i % 13 === 0 ? null : BigInt.asIntN(64, BigInt(Math.floor(r() * 2 ** 53)) * 4099n)));
const strs = Array.from({ length: ROWS }, (_, i) => (i % 7 === 0 ? null : `prefix-${Math.floor(i / 3)}-${i % 5 === 0 ? 'é' : 'x'}`));
const doubles = Array.from({ length: ROWS }, (_, i) => (i % 5 === 0 ? null : (r() - 0.5) * 1e9));
const bools = Array.from({ length: ROWS }, (_, i) => (i % 17 === 0 ? null : r() < 0.3));

type Enc = 'PLAIN' | 'RLE' | 'RLE_DICTIONARY' | 'DELTA_BINARY_PACKED' | 'DELTA_LENGTH_BYTE_ARRAY' | 'DELTA_BYTE_ARRAY' | 'BYTE_STREAM_SPLIT';

function write(encodings: { i?: Enc; l?: Enc; s?: Enc; d?: Enc; b?: Enc }, codec: 'SNAPPY' | 'UNCOMPRESSED'): Uint8Array {
  const ab = parquetWriteBuffer({
    codec,
    pageSize: 4000,
    rowGroupSize: 1000,
    columnData: [
      { name: 'i', data: ints, type: 'INT32', encoding: encodings.i },
      { name: 'l', data: longs, type: 'INT64', encoding: encodings.l },
      { name: 's', data: strs, type: 'STRING', encoding: encodings.s },
      { name: 'd', data: doubles, type: 'DOUBLE', encoding: encodings.d },
      { name: 'b', data: bools, type: 'BOOLEAN', encoding: encodings.b },
    ],
  });
  return new Uint8Array(ab);
}

const request = [
  { name: 'i', type: parseType('INT') },
  { name: 'l', type: parseType('BIGINT') },
  { name: 's', type: parseType('STRING') },
  { name: 'd', type: parseType('DOUBLE') },
  { name: 'b', type: parseType('BOOLEAN') },
];

describe('Parquet written by another writer (data page v2)', () => {
  const cases: Array<[string, Parameters<typeof write>[0]]> = [
    ['default (dictionary where it pays)', {}],
    ['PLAIN', { i: 'PLAIN', l: 'PLAIN', s: 'PLAIN', d: 'PLAIN', b: 'PLAIN' }],
    ['delta', { i: 'DELTA_BINARY_PACKED', l: 'DELTA_BINARY_PACKED', s: 'DELTA_BYTE_ARRAY', d: 'BYTE_STREAM_SPLIT', b: 'RLE' }],
    ['delta lengths', { s: 'DELTA_LENGTH_BYTE_ARRAY', i: 'BYTE_STREAM_SPLIT', l: 'BYTE_STREAM_SPLIT' }],
    ['dictionary', { i: 'RLE_DICTIONARY', l: 'RLE_DICTIONARY', s: 'RLE_DICTIONARY', d: 'RLE_DICTIONARY' }],
  ];
  for (const [name, encodings] of cases) {
    for (const codec of ['SNAPPY', 'UNCOMPRESSED'] as const) {
      it(`${name}, ${codec}`, () => {
        const bytes = write(encodings, codec);
        const meta = hyparquetMeta(bytes);
        const chunks = meta.row_groups[0]!.columns;
        ['i', 'l', 's', 'd', 'b'].forEach((col, k) => {
          const want = (encodings as Record<string, string | undefined>)[col];
          if (want) expect(chunks[k]!.meta_data!.encodings, col).toContain(want);
          expect(chunks[k]!.meta_data!.encoding_stats?.some((e) => e.page_type === 'DATA_PAGE_V2')).toBe(true);
        });
        const back = readParquet(bytes, request, 'foreign.parquet');
        expect(back.rowCount).toBe(ROWS);
        expect(back.columns).toEqual([ints, longs, strs, doubles, bools]);
      });
    }
  }
});
