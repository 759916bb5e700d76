// Unit tests of the aggregate functions: semantics, nulls, overflow, DECIMAL, retraction,
// ignore-retract, listagg delimiter and distinct, and the type checks of createAggregator.

import { describe, expect, it } from 'vitest';
import { LsmError } from '../../errors.ts';
import { parseType } from '../../types.ts';
import { createAggregator, type FieldAggregator } from './field-aggregator.ts';

const agg = (fn: string, type: string, extra: { ignoreRetract?: boolean; delimiter?: string; distinct?: boolean } = {}): FieldAggregator =>
  createAggregator(fn, parseType(type), { column: 'c', option: 'fields.c.aggregate-function', ...extra });
const fold = (a: FieldAggregator, inputs: unknown[]): unknown => {
  a.reset?.();
  let acc: unknown = null;
  for (const x of inputs) acc = a.agg(acc, x);
  return acc;
};
const kindOf = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return e instanceof LsmError ? `${e.kind}: ${e.message}` : String(e);
  }
  return undefined;
};

describe('sum', () => {
  it('adds, ignores nulls, stays null without input', () => {
    expect(fold(agg('sum', 'INT'), [1, null, 2, 3])).toBe(6);
    expect(fold(agg('sum', 'INT'), [null, null])).toBe(null);
    expect(fold(agg('sum', 'BIGINT'), [1n, 2n])).toBe(3n);
    expect(fold(agg('sum', 'DOUBLE'), [0.5, 0.25])).toBe(0.75);
    expect(fold(agg('sum', 'FLOAT'), [0.1, 0.2])).toBe(Math.fround(Math.fround(0.1) + 0.2));
  });
  it('raises on integer overflow, naming the column', () => {
    expect(kindOf(() => fold(agg('sum', 'TINYINT'), [100, 27]))).toBeUndefined();
    expect(kindOf(() => fold(agg('sum', 'TINYINT'), [100, 28]))).toMatch(/^InvalidArgument: column 'c' \(TINYINT\): sum overflows/);
    expect(kindOf(() => fold(agg('sum', 'SMALLINT'), [32767, 1]))).toMatch(/InvalidArgument/);
    expect(kindOf(() => fold(agg('sum', 'INT'), [2147483647, 1]))).toMatch(/InvalidArgument: column 'c' \(INT\)/);
    expect(kindOf(() => fold(agg('sum', 'INT'), [-2147483648, -1]))).toMatch(/InvalidArgument/);
    expect(kindOf(() => fold(agg('sum', 'BIGINT'), [2n ** 63n - 1n, 1n]))).toMatch(/InvalidArgument: column 'c' \(BIGINT\)/);
    expect(fold(agg('sum', 'BIGINT'), [2n ** 63n - 1n, -1n])).toBe(2n ** 63n - 2n);
  });
  it('DECIMAL sums unscaled values and raises past the precision', () => {
    expect(fold(agg('sum', 'DECIMAL(5, 2)'), [12345n, 54321n])).toBe(66666n); // 123.45 + 543.21
    expect(kindOf(() => fold(agg('sum', 'DECIMAL(5, 2)'), [99999n, 1n]))).toMatch(/InvalidArgument: column 'c' \(DECIMAL\(5, 2\)\): sum overflows/);
  });
  it('retracts by subtracting; into null it stores the negated input', () => {
    const a = agg('sum', 'INT');
    expect(a.retract!(10, 3)).toBe(7);
    expect(a.retract!(null, 3)).toBe(-3);
    expect(a.retract!(10, null)).toBe(10);
    expect(agg('sum', 'DECIMAL(10, 2)').retract!(null, 150n)).toBe(-150n);
    expect(kindOf(() => agg('sum', 'TINYINT').retract!(-128, 1))).toMatch(/InvalidArgument/);
    expect(kindOf(() => agg('sum', 'TINYINT').retract!(null, -128))).toMatch(/InvalidArgument/);
    expect(a.retractFold).toBe('exact');
  });
});

describe('product', () => {
  it('multiplies exactly and raises on overflow', () => {
    expect(fold(agg('product', 'INT'), [2, null, 3, 4])).toBe(24);
    expect(kindOf(() => fold(agg('product', 'INT'), [65536, 65536]))).toMatch(/InvalidArgument: column 'c' \(INT\): product overflows/);
    expect(kindOf(() => fold(agg('product', 'BIGINT'), [2n ** 32n, 2n ** 31n]))).toMatch(/InvalidArgument/);
    expect(fold(agg('product', 'DECIMAL(10, 2)'), [150n, 250n])).toBe(375n); // 1.50 * 2.50 = 3.75
    expect(fold(agg('product', 'DECIMAL(10, 2)'), [333n, 50n])).toBe(167n); // 3.33 * 0.50 = 1.665 → 1.67
    expect(kindOf(() => fold(agg('product', 'DECIMAL(3, 0)'), [100n, 10n]))).toMatch(/InvalidArgument/);
  });
  it('retracts by dividing; a null accumulator stays null; 0 is an error', () => {
    const a = agg('product', 'INT');
    expect(a.retract!(24, 4)).toBe(6);
    expect(a.retract!(7, 2)).toBe(3);
    expect(a.retract!(null, 2)).toBe(null);
    expect(kindOf(() => a.retract!(5, 0))).toMatch(/InvalidArgument: column 'c': product cannot retract 0/);
    expect(agg('product', 'DECIMAL(10, 2)').retract!(375n, 250n)).toBe(150n);
    expect(a.retractFold).toBe('inexact');
  });
});

describe('max, min', () => {
  it('keep the extreme non-null value of any comparable type', () => {
    expect(fold(agg('max', 'INT'), [3, null, 7, 5])).toBe(7);
    expect(fold(agg('min', 'INT'), [3, null, 7, 1])).toBe(1);
    expect(fold(agg('max', 'STRING'), ['b', 'a', 'é'])).toBe('é');
    expect(fold(agg('min', 'BIGINT'), [5n, -2n])).toBe(-2n);
    expect(fold(agg('max', 'BOOLEAN'), [false, true, false])).toBe(true);
    expect(fold(agg('max', 'DECIMAL(10, 2)'), [100n, 99n])).toBe(100n);
    expect(fold(agg('min', 'DATE'), [null, null])).toBe(null);
  });
  it('cannot retract', () => {
    expect(agg('max', 'INT').retract).toBeUndefined();
    expect(agg('min', 'INT').retract).toBeUndefined();
  });
});

describe('last_value, last_non_null_value, first_value, first_non_null_value', () => {
  it('last_value takes nulls; last_non_null_value skips them', () => {
    expect(fold(agg('last_value', 'INT'), [1, 2, null])).toBe(null);
    expect(fold(agg('last_non_null_value', 'INT'), [1, 2, null])).toBe(2);
  });
  it('first_value keeps an initial null; first_non_null_value (and its alias) skips it', () => {
    expect(fold(agg('first_value', 'INT'), [null, 2, 3])).toBe(null);
    expect(fold(agg('first_value', 'INT'), [1, null, 3])).toBe(1);
    expect(fold(agg('first_non_null_value', 'INT'), [null, 2, 3])).toBe(2);
    expect(fold(agg('first_not_null_value', 'INT'), [null, null, 3])).toBe(3);
  });
  it('first_value restarts after reset()', () => {
    const a = agg('first_value', 'INT');
    expect(fold(a, [5])).toBe(5);
    expect(fold(a, [6])).toBe(6);
  });
  it('retraction: last_value sets null; last_non_null_value only for a non-null value; first_* cannot', () => {
    expect(agg('last_value', 'INT').retract!(5, 3)).toBe(null);
    expect(agg('last_non_null_value', 'INT').retract!(5, 3)).toBe(null);
    expect(agg('last_non_null_value', 'INT').retract!(5, null)).toBe(5);
    expect(agg('first_value', 'INT').retract).toBeUndefined();
    expect(agg('first_non_null_value', 'INT').retract).toBeUndefined();
  });
});

describe('listagg', () => {
  it('joins non-blank strings with the delimiter (default comma)', () => {
    expect(fold(agg('listagg', 'STRING'), ['a', null, 'b', ' ', 'a'])).toBe('a,b,a');
    expect(fold(agg('listagg', 'STRING', { delimiter: ' | ' }), ['a', 'b'])).toBe('a | b');
    expect(fold(agg('listagg', 'STRING'), [null])).toBe(null);
  });
  it('distinct appends only new tokens', () => {
    const a = agg('listagg', 'STRING', { delimiter: ';', distinct: true });
    expect(fold(a, ['x', 'y;x', 'z;y', 'x'])).toBe('x;y;z');
  });
  it('a VARCHAR(n) result longer than n raises', () => {
    expect(kindOf(() => fold(agg('listagg', 'VARCHAR(3)'), ['ab', 'cd']))).toMatch(/InvalidArgument: column 'c' \(VARCHAR\(3\)\)/);
  });
  it('counts a VARCHAR(n) result in characters as Paimon does (an emoji is one)', () => {
    expect(fold(agg('listagg', 'VARCHAR(3)'), ['😀', '😀'])).toBe('😀,😀');
    expect(fold(agg('listagg', 'VARCHAR(5)', { distinct: true }), ['😀', '🚚,😀', '📦'])).toBe('😀,🚚,📦');
    expect(kindOf(() => fold(agg('listagg', 'VARCHAR(3)'), ['😀', '😀😀']))).toMatch(/InvalidArgument: column 'c' \(VARCHAR\(3\)\)/);
  });
  it('cannot retract', () => expect(agg('listagg', 'STRING').retract).toBeUndefined());
});

describe('bool_and, bool_or', () => {
  it('fold non-null booleans', () => {
    expect(fold(agg('bool_and', 'BOOLEAN'), [true, null, true])).toBe(true);
    expect(fold(agg('bool_and', 'BOOLEAN'), [true, false])).toBe(false);
    expect(fold(agg('bool_or', 'BOOLEAN'), [false, null, true])).toBe(true);
    expect(fold(agg('bool_or', 'BOOLEAN'), [null])).toBe(null);
  });
});

describe('ignore-retract', () => {
  it('makes any function take retractions as no-ops', () => {
    const a = agg('max', 'INT', { ignoreRetract: true });
    expect(a.retract!(7, 9)).toBe(7);
    expect(a.retractFold).toBe('ignored');
    expect(agg('sum', 'INT', { ignoreRetract: true }).retract!(7, 3)).toBe(7);
    const f = agg('first_value', 'INT', { ignoreRetract: true });
    expect(fold(f, [null, 3])).toBe(null);
  });
});

describe('createAggregator', () => {
  it('checks the column type, naming the option', () => {
    expect(kindOf(() => agg('sum', 'STRING'))).toBe(
      "InvalidArgument: option 'fields.c.aggregate-function': 'sum' needs a numeric column, but column 'c' is STRING",
    );
    expect(kindOf(() => agg('product', 'BOOLEAN'))).toMatch(/InvalidArgument: .*'product' needs a numeric column/);
    expect(kindOf(() => agg('listagg', 'INT'))).toMatch(/InvalidArgument: .*'listagg' needs a STRING or VARCHAR column/);
    expect(kindOf(() => agg('bool_or', 'INT'))).toMatch(/InvalidArgument: .*'bool_or' needs a BOOLEAN column/);
    expect(kindOf(() => agg('listagg', 'STRING', { delimiter: '', distinct: true }))).toMatch(/InvalidArgument/);
  });
  it('refuses unknown functions and count; collect and merge_map check their types; ROW functions are NotSupported', () => {
    expect(kindOf(() => agg('median', 'INT'))).toMatch(/InvalidArgument: .*unknown aggregate function 'median'/);
    expect(kindOf(() => agg('count', 'INT'))).toMatch(/InvalidArgument: .*use 'sum' over a 0\/1 column/);
    expect(kindOf(() => agg('collect', 'STRING'))).toMatch(/InvalidArgument: .*'collect' needs an ARRAY column, but column 'c' is STRING/);
    expect(kindOf(() => agg('merge_map', 'ARRAY<INT>'))).toMatch(/InvalidArgument: .*'merge_map' needs a MAP column/);
    expect(kindOf(() => agg('max', 'ARRAY<INT>'))).toMatch(/InvalidArgument: .*'max' needs a column with an order/);
    expect(kindOf(() => agg('nested_update', 'ARRAY<INT>'))).toMatch(/NotSupported: .*no ROW type/);
    expect(kindOf(() => agg('hll_sketch', 'BYTES'))).toMatch(/NotSupported/);
  });
  it('takes the name case-insensitively', () => expect(fold(agg('SUM', 'INT'), [1, 2])).toBe(3));
});

describe('collect', () => {
  it('appends elements; null input leaves the accumulator', () => {
    expect(fold(agg('collect', 'ARRAY<INT>'), [[1, 2], null, [2, 3], []])).toEqual([1, 2, 2, 3]);
    expect(fold(agg('collect', 'ARRAY<INT>'), [null, null])).toBe(null);
    expect(fold(agg('collect', 'ARRAY<INT>'), [null, [null, 1]])).toEqual([null, 1]);
  });
  it('distinct keeps each element once, by value (bytes by content, nulls too)', () => {
    expect(fold(agg('collect', 'ARRAY<INT>', { distinct: true }), [[1, 1, 2], [2, 3, null], [null]])).toEqual([1, 2, 3, null]);
    expect(fold(agg('collect', 'ARRAY<BYTES>', { distinct: true }), [[Uint8Array.of(1)], [Uint8Array.of(1), Uint8Array.of(2)]])).toEqual([Uint8Array.of(1), Uint8Array.of(2)]);
    expect(fold(agg('collect', 'ARRAY<ARRAY<INT>>', { distinct: true }), [[[1], [1]], [[1], [2]]])).toEqual([[1], [2]]);
  });
  it('retracts one occurrence per retracted element (best effort); null accumulator stays null', () => {
    const a = agg('collect', 'ARRAY<STRING>');
    expect(a.retractFold).toBe('inexact');
    expect(a.retract!(['a', 'b', 'a'], ['a'])).toEqual(['b', 'a']);
    expect(a.retract!(['a', 'b'], ['c', 'b'])).toEqual(['a']);
    expect(a.retract!(null, ['a'])).toBe(null);
    expect(a.retract!(['a'], null)).toEqual(['a']);
  });
  it('never mutates its inputs', () => {
    const acc = [1];
    const input = [2];
    agg('collect', 'ARRAY<INT>').agg(acc, input);
    agg('collect', 'ARRAY<INT>').retract!(acc, [1]);
    expect([acc, input]).toEqual([[1], [2]]);
  });
});

describe('merge_map', () => {
  const m = (...e: Array<[unknown, unknown]>) => new Map(e);
  it('unions maps; the later value wins; null input leaves the accumulator', () => {
    expect(fold(agg('merge_map', 'MAP<STRING, INT>'), [m(['a', 1], ['b', 2]), null, m(['b', 3], ['c', null])])).toEqual(m(['a', 1], ['b', 3], ['c', null]));
    expect(fold(agg('merge_map', 'MAP<STRING, INT>'), [null])).toBe(null);
  });
  it('matches BYTES keys by content', () => {
    const r = fold(agg('merge_map', 'MAP<BYTES, INT>'), [m([Uint8Array.of(1), 1]), m([Uint8Array.of(1), 2])]) as Map<unknown, unknown>;
    expect([...r.values()]).toEqual([2]);
  });
  it('retracts the retracted keys (best effort); null accumulator stays null', () => {
    const a = agg('merge_map', 'MAP<INT, STRING>');
    expect(a.retractFold).toBe('inexact');
    expect(a.retract!(m([1, 'x'], [2, 'y']), m([1, 'other']))).toEqual(m([2, 'y']));
    expect(a.retract!(null, m([1, 'x']))).toBe(null);
  });
});
