// valueFromJson of a MAP given as [key, value] pairs (or as a Map) with a key twice: the Map it
// built kept the last value and said nothing ([["k",1],["k",2]] was {k: 2}), as JSON.parse does
// with an object. Now refused, InvalidArgument naming the column and the key — also two keys that
// are one after conversion (1 and "1" for a BIGINT key). A Map input with a bigint key was a bare
// TypeError (JSON.stringify of the key for the value's column name).
import { describe, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { parseType, valueFromJson } from './types.ts';

function refusal(type: string, j: unknown): LsmError {
  try {
    valueFromJson(parseType(type), j, 'attrs');
  } catch (e) {
    expect(e).toBeInstanceOf(LsmError);
    return e as LsmError;
  }
  throw new Error(`valueFromJson(${type}) took ${String(j)}`);
}

describe('valueFromJson: a MAP key given twice', () => {
  it('is refused in pair form, naming the column and the key', () => {
    const cases: [string, unknown, string][] = [
      ['MAP<STRING, INT>', [['k', 1], ['k', 2]], `column 'attrs' (MAP<STRING, INT>): key "k" is given twice; expected each key once`],
      ['MAP<INT, STRING>', [[7, 'a'], [8, 'b'], [7, 'c']], `column 'attrs' (MAP<INT, STRING>): key 7 is given twice; expected each key once`],
      // Equal once converted: 1 and "1" are the same BIGINT.
      ['MAP<BIGINT, INT>', [[1, 1], ['1', 2]], `column 'attrs' (MAP<BIGINT, INT>): key "1" is given twice; expected each key once`],
      ['MAP<DATE, INT>', [['2026-12-01', 1], ['2026-12-01', 2]], `column 'attrs' (MAP<DATE, INT>): key "2026-12-01" is given twice; expected each key once`],
      // A Map input whose keys are one once converted, one of them a bigint: this message, not a TypeError.
      ['MAP<BIGINT, INT>', new Map<unknown, unknown>([[5n, 1], [5, 2]]), `column 'attrs' (MAP<BIGINT, INT>): key 5 is given twice; expected each key once`],
    ];
    for (const [type, j, message] of cases) {
      const e = refusal(type, j);
      expect([e.kind, e.message], type).toEqual(['InvalidArgument', message]);
    }
    // BYTES keys are objects: two with the same bytes are refused by checkValue (as before).
    expect(refusal('MAP<BYTES, INT>', [['AAE=', 1], ['AAE=', 2]]).message).toBe(`column 'attrs' (MAP<BYTES, INT>): duplicate map key 2 bytes`);
  });

  it('takes each key once, in every form, and a Map input with bigint keys', () => {
    expect(valueFromJson(parseType('MAP<STRING, INT>'), [['k', 1], ['K', 2]], 'attrs')).toEqual(new Map([['k', 1], ['K', 2]]));
    expect(valueFromJson(parseType('MAP<STRING, INT>'), { k: 1, K: 2 }, 'attrs')).toEqual(new Map([['k', 1], ['K', 2]]));
    expect(valueFromJson(parseType('MAP<BIGINT, INT>'), new Map([[1n, 2], [2n, 3]]), 'attrs')).toEqual(new Map([[1n, 2], [2n, 3]]));
    expect(valueFromJson(parseType('MAP<BIGINT, INT>'), [], 'attrs')).toEqual(new Map());
    // The value's own error still names the key it belongs to (a bigint one too).
    expect(refusal('MAP<BIGINT, INT>', new Map([[3n, 'x']])).message).toMatch(/^column 'attrs\[3\]' \(INT\): /);
  });
});
