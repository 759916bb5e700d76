import { describe, expect, it } from 'vitest';
import { LsmError } from '../../errors.ts';
import { parseType, valuesEqual } from '../../types.ts';
import { readParquet, readParquetFooter, writeParquet, type ParquetCompression } from './index.ts';
import { ALL_TYPES, generate, hyparquetMeta, hyparquetRows, sameAsHyparquet, typedColumns } from './test-support.ts';

const request = (cols: ReturnType<typeof typedColumns>) => cols.map((c) => ({ name: c.name, type: c.type }));

function expectSame(got: unknown[][], want: unknown[][], rows: number): void {
  for (let c = 0; c < want.length; c++) {
    for (let r = 0; r < rows; r++) {
      if (!valuesEqual(got[c]![r], want[c]![r]) && !Object.is(got[c]![r], want[c]![r])) {
        throw new Error(`column ${c} row ${r}: got ${String(got[c]![r])}, want ${String(want[c]![r])}`);
      }
      if (typeof want[c]![r] === 'number' && !Object.is(got[c]![r], want[c]![r])) {
        throw new Error(`column ${c} row ${r}: got ${String(got[c]![r])}, want ${String(want[c]![r])} (sign of zero)`);
      }
    }
  }
}

describe('Parquet round trip', () => {
  for (const nullable of [true, false]) {
    for (const compression of ['uncompressed', 'snappy', 'gzip'] as ParquetCompression[]) {
      it(`every type, ${nullable ? 'nullable' : 'NOT NULL'}, ${compression}, several row groups and pages`, async () => {
        const cols = typedColumns(ALL_TYPES, nullable);
        const rows = 2500;
        const values = generate(cols, rows, nullable ? 11 : 12);
        const bytes = writeParquet(cols, values, rows, { compression, rowGroupRows: 1000, pageRows: 300 });
        const back = readParquet(bytes, request(cols), 'mem');
        expect(back.rowCount).toBe(rows);
        expectSame(back.columns, values, rows);

        const meta = hyparquetMeta(bytes);
        expect(meta.row_groups.length).toBe(3);
        const objs = await hyparquetRows(bytes, false);
        expect(objs.length).toBe(rows);
        cols.forEach((c, ci) => {
          for (let r = 0; r < rows; r++) {
            let h = objs[r]![c.name];
            if (typeof h === 'string' && ['BYTES', 'BINARY'].includes(c.type.root)) h = Buffer.from(h, 'latin1');
            if (!sameAsHyparquet(c.type, values[ci]![r], h)) {
              throw new Error(`hyparquet disagrees at ${c.name} row ${r}: ${String(h)} vs ${String(values[ci]![r])}`);
            }
          }
        });
      });
    }
  }

  it('writes the footer Java Paimon writes: field ids, repetition, physical and logical types', () => {
    const cols = typedColumns(ALL_TYPES, true);
    cols[0] = { ...cols[0]!, fieldId: 2147483646 };
    const bytes = writeParquet(cols, generate(cols, 10, 3), 10, { compression: 'snappy' });
    const meta = hyparquetMeta(bytes);
    expect(meta.schema[0]!.name).toBe('paimon_schema');
    const byName = new Map(meta.schema.slice(1).map((s) => [s.name, s]));
    const el = (i: number) => byName.get(cols[i]!.name)!;
    expect(el(0).field_id).toBe(2147483646);
    cols.forEach((c, i) => {
      expect(el(i).field_id).toBe(c.fieldId === 2147483646 ? 2147483646 : i * 3 + 1);
      expect(el(i).repetition_type).toBe('OPTIONAL');
    });
    const expectations: Array<[string, string, string | undefined, unknown]> = [
      ['BOOLEAN', 'BOOLEAN', undefined, undefined],
      ['TINYINT', 'INT32', 'INT_8', { type: 'INTEGER', bitWidth: 8, isSigned: true }],
      ['SMALLINT', 'INT32', 'INT_16', { type: 'INTEGER', bitWidth: 16, isSigned: true }],
      ['INT', 'INT32', undefined, undefined],
      ['BIGINT', 'INT64', undefined, undefined],
      ['FLOAT', 'FLOAT', undefined, undefined],
      ['DOUBLE', 'DOUBLE', undefined, undefined],
      ['STRING', 'BYTE_ARRAY', 'UTF8', { type: 'STRING' }],
      ['VARCHAR(20)', 'BYTE_ARRAY', 'UTF8', { type: 'STRING' }],
      ['CHAR(3)', 'BYTE_ARRAY', 'UTF8', { type: 'STRING' }],
      ['BYTES', 'BYTE_ARRAY', undefined, undefined],
      ['BINARY(4)', 'BYTE_ARRAY', undefined, undefined],
      ['DATE', 'INT32', 'DATE', { type: 'DATE' }],
      ['TIME(3)', 'INT32', 'TIME_MILLIS', { type: 'TIME', isAdjustedToUTC: true, unit: 'MILLIS' }],
      ['TIMESTAMP(3)', 'INT64', 'TIMESTAMP_MILLIS', { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MILLIS' }],
      ['TIMESTAMP(6)', 'INT64', 'TIMESTAMP_MICROS', { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MICROS' }],
      ['TIMESTAMP(0) WITH LOCAL TIME ZONE', 'INT64', 'TIMESTAMP_MILLIS', { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' }],
      ['TIMESTAMP(6) WITH LOCAL TIME ZONE', 'INT64', 'TIMESTAMP_MICROS', { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' }],
      ['DECIMAL(9, 2)', 'INT32', 'DECIMAL', { type: 'DECIMAL', precision: 9, scale: 2 }],
      ['DECIMAL(18, 4)', 'INT64', 'DECIMAL', { type: 'DECIMAL', precision: 18, scale: 4 }],
      ['DECIMAL(19, 0)', 'FIXED_LEN_BYTE_ARRAY', 'DECIMAL', { type: 'DECIMAL', precision: 19, scale: 0 }],
      ['DECIMAL(38, 10)', 'FIXED_LEN_BYTE_ARRAY', 'DECIMAL', { type: 'DECIMAL', precision: 38, scale: 10 }],
    ];
    expectations.forEach(([type, physical, converted, logical], i) => {
      expect(ALL_TYPES[i]).toBe(type);
      const e = el(i);
      expect(e.type, type).toBe(physical);
      expect(e.converted_type, type).toBe(converted);
      expect(e.logical_type, type).toEqual(logical);
    });
    expect(el(20).type_length).toBe(9);
    expect(el(21).type_length).toBe(16);
    expect(el(18).precision).toBe(9);
    expect(el(18).scale).toBe(2);

    const required = writeParquet([{ name: 'k', fieldId: 5, type: parseType('INT NOT NULL') }], [[1, 2]], 2, { compression: 'uncompressed' });
    expect(hyparquetMeta(required).schema[1]!.repetition_type).toBe('REQUIRED');
    expect(readParquetFooter(required, 'mem')).toEqual({
      rowCount: 2,
      columns: [{ name: 'k', fieldId: 5, physicalType: 'INT32', required: true }],
    });
  });

  it('writes statistics, offsets and sizes that hyparquet accepts', () => {
    const cols = [
      { name: 'i', fieldId: 0, type: parseType('INT') },
      { name: 's', fieldId: 1, type: parseType('STRING') },
      { name: 'd', fieldId: 2, type: parseType('DOUBLE') },
      { name: 'b', fieldId: 3, type: parseType('BIGINT NOT NULL') },
    ];
    const values = [
      [5, null, -7, 12, null],
      ['m', 'é', null, 'a', 'zz'],
      [0, -0, 2.5, NaN, null],
      [3n, -(2n ** 63n), 9n, 0n, 2n ** 63n - 1n],
    ];
    const bytes = writeParquet(cols, values, 5, { compression: 'snappy', pageRows: 2 });
    const meta = hyparquetMeta(bytes);
    const st = meta.row_groups[0]!.columns.map((c) => c.meta_data!.statistics!);
    expect(st[0]).toMatchObject({ min_value: -7, max_value: 12, null_count: 2n });
    expect(st[1]).toMatchObject({ min_value: 'a', max_value: 'é', null_count: 1n });
    expect(Object.is(st[2]!.min_value, -0)).toBe(true);
    expect(st[2]).toMatchObject({ max_value: 2.5, null_count: 1n });
    expect(st[3]).toMatchObject({ min_value: -(2n ** 63n), max_value: 2n ** 63n - 1n, null_count: 0n });
    const cc = meta.row_groups[0]!.columns;
    expect(cc[1]!.meta_data!.encodings).toEqual(['PLAIN', 'RLE']); // a dictionary would not pay here
    expect(Number(cc[1]!.meta_data!.data_page_offset)).toBe(Number(cc[0]!.meta_data!.data_page_offset) + Number(cc[0]!.meta_data!.total_compressed_size));
  });

  it('dictionary-encodes repetitive strings the way parquet-mr v1 does, falling back to PLAIN', async () => {
    const rows = 3000;
    const cols = [{ name: 's', fieldId: 0, type: parseType('STRING') }];
    const values = [Array.from({ length: rows }, (_, i) => (i % 9 === 0 ? null : `loc-${i % 5}`))];
    const bytes = writeParquet(cols, values, rows, { compression: 'snappy', pageRows: 500 });
    const md = hyparquetMeta(bytes).row_groups[0]!.columns[0]!.meta_data!;
    expect(md.encodings).toEqual(['PLAIN_DICTIONARY', 'RLE']);
    expect(Number(md.dictionary_page_offset)).toBe(4);
    expect(md.encoding_stats).toEqual([
      { page_type: 'DATA_PAGE', encoding: 'PLAIN_DICTIONARY', count: 6 },
      { page_type: 'DICTIONARY_PAGE', encoding: 'PLAIN_DICTIONARY', count: 1 },
    ]);
    expect(md.statistics).toMatchObject({ min_value: 'loc-0', max_value: 'loc-4', null_count: 334n });
    expect(readParquet(bytes, cols, 'mem').columns).toEqual(values);
    expect((await hyparquetRows(bytes)).map((r) => r.s)).toEqual(values[0]);
  });

  it('writes and reads an empty file', async () => {
    const cols = typedColumns(['INT', 'STRING'], true);
    const bytes = writeParquet(cols, [[], []], 0, { compression: 'snappy' });
    expect(readParquet(bytes, request(cols), 'mem')).toEqual({ rowCount: 0, columns: [[], []] });
    expect(readParquetFooter(bytes, 'mem').rowCount).toBe(0);
    expect(await hyparquetRows(bytes)).toEqual([]);
  });

  it('matches columns by name, reads absent ones as null, and INT64 as numbers on request', () => {
    const cols = [
      { name: '_SEQUENCE_NUMBER', fieldId: 2147483646, type: parseType('BIGINT NOT NULL') },
      { name: 'a', fieldId: 0, type: parseType('INT') },
    ];
    const bytes = writeParquet(cols, [[1n, 2n ** 40n], [7, null]], 2, { compression: 'snappy' });
    const back = readParquet(
      bytes,
      [
        { name: 'missing', type: parseType('STRING') },
        { name: 'a', type: parseType('INT') },
        { name: '_SEQUENCE_NUMBER', type: parseType('BIGINT NOT NULL'), asNumber: true },
      ],
      'mem',
    );
    expect(back.columns).toEqual([[null, null], [7, null], [1, 2 ** 40]]);
  });

  it('accepts numbers for BIGINT (sequence numbers) and keeps long runs of equal values', () => {
    const rows = 50_000;
    const cols = [
      { name: 'n', fieldId: 0, type: parseType('BIGINT NOT NULL') },
      { name: 'k', fieldId: 1, type: parseType('STRING') },
      { name: 'v', fieldId: 2, type: parseType('INT') },
    ];
    const values = [
      Array.from({ length: rows }, (_, i) => i * 2 ** 20 - 2 ** 40),
      Array.from({ length: rows }, (_, i) => (i % 1000 < 500 ? 'same' : `k${i}`)),
      Array.from({ length: rows }, (_, i) => (i % 7 === 0 ? null : i % 3)),
    ];
    const bytes = writeParquet(cols, values, rows, { compression: 'snappy', pageRows: 4096 });
    const back = readParquet(bytes, [{ name: 'n', type: cols[0]!.type, asNumber: true }, cols[1]!, cols[2]!], 'mem');
    expect(back.columns).toEqual(values);
  });

  it('refuses bad values and unsupported options with clear errors', () => {
    const col = (t: string) => [{ name: 'x', fieldId: 0, type: parseType(t) }];
    const err = (f: () => unknown): LsmError => {
      try {
        f();
      } catch (e) {
        return e as LsmError;
      }
      throw new Error('no error');
    };
    expect(err(() => writeParquet(col('INT NOT NULL'), [[null]], 1, { compression: 'snappy' })).kind).toBe('InvalidArgument');
    expect(err(() => writeParquet(col('INT'), [['1']], 1, { compression: 'snappy' })).message).toMatch(/'x' row 0/);
    expect(err(() => writeParquet(col('BIGINT'), [[1.5]], 1, { compression: 'snappy' })).kind).toBe('InvalidArgument');
    expect(err(() => writeParquet(col('STRING'), [[5]], 1, { compression: 'snappy' })).kind).toBe('InvalidArgument');
    expect(err(() => writeParquet(col('DECIMAL(20, 0)'), [[10n ** 40n]], 1, { compression: 'snappy' })).kind).toBe('InvalidArgument');
    const z = err(() => writeParquet(col('INT'), [[1]], 1, { compression: 'zstd' }));
    expect(z.kind).toBe('NotSupported');
    expect(z.message).toMatch(/ZSTD/);
    const bytes = writeParquet(col('STRING'), [['a']], 1, { compression: 'snappy' });
    expect(err(() => readParquet(bytes, [{ name: 'x', type: parseType('INT') }], 'f.parquet')).kind).toBe('Corruption');
  });
});
