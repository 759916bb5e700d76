// Typed fast paths for valueFromJson (core/lsm/types.ts) on the common JSON forms: a string for a
// string column, an integer number for an integer column, a number for FLOAT/DOUBLE, a boolean.
// A fast converter returns the value valueFromJson would return, or NO_FAST when the input is not
// one of its simple cases — the caller then takes the generic path (valueFromJson, which also
// produces the error message). Never throws. Agreement with the generic path is tested
// (fast-values.test.ts, randomized).
//
// Concurrency: pure functions, converters cached per DataType object.

import { fitsChars, type DataType } from '../lsm/types.ts';

/** Returned by a fast converter that does not handle its input (take the generic path). */
export const NO_FAST: unique symbol = Symbol('no fast path');
export type FastConvert = (json: unknown) => unknown;

const noFast: FastConvert = () => NO_FAST;

const INT_RANGE: Partial<Record<DataType['root'], readonly [number, number]>> = {
  TINYINT: [-128, 127],
  SMALLINT: [-32768, 32767],
  INT: [-2147483648, 2147483647],
};

const cache = new WeakMap<DataType, FastConvert>();

/** The fast converter of a column type (NO_FAST for every input of a type it does not cover). */
export function fastConverter(t: DataType): FastConvert {
  let f = cache.get(t);
  if (f === undefined) {
    f = makeFast(t);
    cache.set(t, f);
  }
  return f;
}

function makeFast(t: DataType): FastConvert {
  switch (t.root) {
    case 'STRING':
      return (j) => (typeof j === 'string' ? j : NO_FAST);
    case 'VARCHAR':
    case 'CHAR': {
      const max = t.length;
      if (typeof max !== 'number') return noFast;
      // Characters as Paimon counts them (types.ts fitsChars: a surrogate pair is one), as checkValue does.
      return (j) => (typeof j === 'string' && (j.length <= max || fitsChars(j, max)) ? j : NO_FAST);
    }
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT': {
      const [lo, hi] = INT_RANGE[t.root]!;
      return (j) => (typeof j === 'number' && Number.isInteger(j) && j >= lo && j <= hi ? j : NO_FAST);
    }
    case 'BIGINT':
      // Every safe integer fits a 64-bit bigint.
      return (j) => (typeof j === 'number' && Number.isSafeInteger(j) ? BigInt(j) : NO_FAST);
    case 'FLOAT':
      // Beyond FLOAT's range (an infinity in the file) or DOUBLE's (1e400, read as Infinity): the
      // generic path refuses it (contracts.ts beyondFloatRange).
      return (j) => (typeof j === 'number' && Number.isFinite(Math.fround(j)) ? j : NO_FAST);
    case 'DOUBLE':
      return (j) => (typeof j === 'number' && Number.isFinite(j) ? j : NO_FAST);
    case 'BOOLEAN':
      return (j) => (typeof j === 'boolean' ? j : NO_FAST);
    default:
      return noFast;
  }
}
