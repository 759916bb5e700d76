// writeParquet from typed columns (plain-encode.ts TypedValues) writes the same bytes as from the
// JS values they stand for — every form the writer takes, with and without nulls, across pages and
// row groups — refuses a null in a REQUIRED column as the JS path does, and refuses forms it does
// not take.

import { describe, expect, it } from 'vitest';
import { parseType } from '../../types.ts';
import { writeParquet, type ColumnValues, type ParquetColumn, type TypedValues } from './index.ts';
import { mulberry32 } from '../../testing/prng.ts';

const col = (name: string, type: string): ParquetColumn => ({ name, fieldId: 1, type: parseType(type) });

/** A typed column and the JS values it stands for; `nullRate` of the rows null. */
function make(n: number, rnd: () => number, nullRate: number, kind: 'i32' | 'u8' | 'big32' | 'big64' | 'seq' | 'f64' | 'bool'): { typed: TypedValues; js: unknown[] } {
  const nulls = nullRate > 0 ? new Uint8Array((n + 7) >>> 3) : undefined;
  const js: unknown[] = [];
  const values =
    kind === 'i32' || kind === 'big32' ? new Int32Array(n)
    : kind === 'u8' || kind === 'bool' ? new Uint8Array(n)
    : kind === 'big64' ? new BigInt64Array(n)
    : new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (nulls && rnd() < nullRate) {
      nulls[i >>> 3]! |= 1 << (i & 7);
      js.push(null);
      continue;
    }
    switch (kind) {
      case 'i32':
        values[i] = Math.floor(rnd() * 2 ** 32) - 2 ** 31;
        js.push(values[i]);
        break;
      case 'u8':
        values[i] = Math.floor(rnd() * 4);
        js.push(values[i]);
        break;
      case 'big32':
        values[i] = rnd() < 0.5 ? Math.floor(rnd() * 100) : Math.floor(rnd() * 2 ** 32) - 2 ** 31;
        js.push(BigInt(values[i] as number));
        break;
      case 'big64': {
        const v = BigInt.asIntN(64, BigInt(Math.floor(rnd() * 2 ** 53)) * BigInt(Math.floor(rnd() * 4096)) - 2n ** 60n);
        (values as BigInt64Array)[i] = v;
        js.push(v);
        break;
      }
      case 'seq':
        values[i] = rnd() < 0.5 ? i : Math.floor(rnd() * 2 ** 53) * (rnd() < 0.2 ? -1 : 1);
        js.push(values[i]);
        break;
      case 'f64':
        values[i] = rnd() < 0.05 ? NaN : rnd() < 0.05 ? -0 : rnd() < 0.05 ? 0 : (rnd() - 0.5) * 1e6;
        js.push(values[i]);
        break;
      case 'bool':
        values[i] = rnd() < 0.5 ? 1 : 0;
        js.push(values[i] === 1);
        break;
    }
  }
  return { typed: { values, nulls }, js };
}

describe('parquet writer: typed columns', () => {
  const cases: Array<[string, 'i32' | 'u8' | 'big32' | 'big64' | 'seq' | 'f64' | 'bool']> = [
    ['INT', 'i32'],
    ['TINYINT', 'u8'],
    ['DATE', 'i32'],
    ['BIGINT', 'big32'],
    ['BIGINT', 'big64'],
    ['BIGINT', 'seq'],
    ['DOUBLE', 'f64'],
    ['BOOLEAN', 'bool'],
  ];
  for (const [type, kind] of cases) {
    it(`writes ${type} from ${kind} as from its JS values`, () => {
      const rnd = mulberry32(type.length * 31 + kind.length);
      for (const [n, nullRate] of [[1, 0], [37, 0], [1000, 0.3], [999, 1]] as const) {
        const opt = make(n, rnd, nullRate, kind);
        const req = make(n, rnd, 0, kind);
        const columns = [col('o', type), col('r', `${type} NOT NULL`), col('o2', type)];
        for (const compression of ['snappy', 'uncompressed'] as const) {
          const opts = { compression, pageRows: 64, rowGroupRows: 700 };
          // The last column repeats the first: a typed column is not matched to an equal one.
          const a = writeParquet(columns, [opt.typed, req.typed, opt.js], n, opts);
          const b = writeParquet(columns, [opt.js, req.js, opt.js], n, opts);
          expect(Buffer.compare(a, b)).toBe(0);
        }
      }
    });
  }

  it('refuses a null in a REQUIRED column and forms it does not take', () => {
    const nulls = Uint8Array.of(2);
    const values: ColumnValues = { values: Int32Array.of(1, 2, 3), nulls };
    expect(() => writeParquet([col('r', 'INT NOT NULL')], [values], 3, { compression: 'snappy' })).toThrow(/row 1: null in a NOT NULL column/);
    expect(() => writeParquet([col('r', 'INT NOT NULL')], [[1, null, 3]], 3, { compression: 'snappy' })).toThrow(/row 1: null in a NOT NULL column/);
    expect(() => writeParquet([col('s', 'STRING')], [{ values: Int32Array.of(1), nulls: undefined }], 1, { compression: 'snappy' })).toThrow(/no typed form/);
    expect(() => writeParquet([col('d', 'DOUBLE')], [{ values: Int32Array.of(1), nulls: undefined }], 1, { compression: 'snappy' })).toThrow(/no typed form/);
    expect(() => writeParquet([col('t', 'TIMESTAMP(3)')], [{ values: Float64Array.of(1), nulls: undefined }], 1, { compression: 'snappy' })).toThrow(/no typed form/);
  });
});
