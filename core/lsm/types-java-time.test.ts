// Time values and string lengths as Paimon reads them, in the table store itself (DESIGN.md,
// "Values and types"), so every path gets them — a binding, `tilstand table put`, the site API:
// - a TIMESTAMP(p) keeps p fraction digits, cut and never rounded (Paimon's cast,
//   DateTimeUtils.fromTemporalAccessor / truncate). Before, TIMESTAMP(0), (1), (2) were cut to
//   milliseconds and (4), (5) kept microseconds, from text and from a number of µs alike (a
//   binding's ts_ms × 1000 into a TIMESTAMP(0) kept its milliseconds);
// - a TIME keeps milliseconds, a fourth fraction digit rounding half up (DateTimeUtils.parseFraction);
//   4 to 9 digits were refused;
// - a leap second 23:59:60 is :59 with its fraction (java.time's Instant.parse); it was refused;
// - TIMESTAMP's T24:00 is the next day's 00:00; it was refused;
// - CHAR/VARCHAR(n) count characters as Paimon does (BinaryString.numChars: one per code point):
//   "😀😀" (four UTF-16 units) was refused by a VARCHAR(3).
import { describe, expect, it } from 'vitest';
import { checkValue, fitsChars, parseType, timestampFromString, valueFromJson, valueToJson } from './types.ts';

const US = (iso: string) => Date.parse(iso) * 1000;
const read = (type: string, j: unknown) => valueFromJson(parseType(type), j, 'c');
const problem = (type: string, j: unknown): string => {
  try {
    read(type, j);
  } catch (e) {
    return (e as Error).message;
  }
  return 'accepted';
};

describe('a TIMESTAMP(p) keeps p fraction digits, cut, never rounded', () => {
  const at = US('2026-12-01T08:00:00Z');
  it('from text, every precision', () => {
    const text = '2026-12-01T08:00:00.987654321Z';
    const want = [0, 900_000, 980_000, 987_000, 987_600, 987_650, 987_654];
    for (let p = 0; p <= 6; p++) {
      expect(read(`TIMESTAMP(${p})`, text), `TIMESTAMP(${p})`).toBe(at + want[p]!);
      expect(read(`TIMESTAMP(${p}) WITH LOCAL TIME ZONE`, text), `TIMESTAMP(${p}) LTZ`).toBe(at + want[p]!);
    }
    expect(read('TIMESTAMP(0)', '2026-12-01 08:00:00.5')).toBe(at);
    // In the text's own clock, before 1970 too: the second stays.
    expect(read('TIMESTAMP(0)', '1969-12-31T23:59:59.9Z')).toBe(-1_000_000);
    expect(read('TIMESTAMP(2)', '1969-12-31T23:59:59.999+01:00')).toBe(US('1969-12-31T22:59:59.99Z'));
    // The common forms read as before.
    expect(read('TIMESTAMP(3)', '2026-12-07T10:00:00.123Z')).toBe(US('2026-12-07T10:00:00.123Z'));
    expect(read('TIMESTAMP(6)', '2026-12-07T10:00:00.123456')).toBe(US('2026-12-07T10:00:00.123Z') + 456);
    expect(timestampFromString('2026-12-07T10:00:00.1234567')).toBe(US('2026-12-07T10:00:00.123Z') + 456);
  });

  it('from a number of microseconds or a Date (a binding\'s ts_ms, the site API)', () => {
    expect(read('TIMESTAMP(0)', at + 123_456)).toBe(at);
    expect(read('TIMESTAMP(1) WITH LOCAL TIME ZONE', at + 123_456)).toBe(at + 100_000);
    expect(read('TIMESTAMP(3)', at + 123_456)).toBe(at + 123_000);
    expect(read('TIMESTAMP(5)', at + 123_456)).toBe(at + 123_450);
    expect(read('TIMESTAMP(6)', at + 123_456)).toBe(at + 123_456);
    expect(read('TIMESTAMP(0)', -500_000)).toBe(-1_000_000);
    expect(read('TIMESTAMP(0)', new Date(Date.parse('2026-12-01T08:00:00.750Z')))).toBe(at);
    // Not a whole number of microseconds: refused, as at every precision (it was cut to ms at p ≤ 3).
    expect(problem('TIMESTAMP(3)', 1500.5)).toContain('expected epoch microseconds');
    expect(valueToJson(parseType('TIMESTAMP(0)'), read('TIMESTAMP(0)', at + 999_999))).toBe('2026-12-01T08:00:00');
  });
});

describe('a TIME keeps milliseconds, a fourth digit rounding half up', () => {
  it('reads up to 9 digits', () => {
    expect(read('TIME(0)', '12:00:00.5')).toBe(43_200_500);
    expect(read('TIME(3)', '12:00:00.123456')).toBe(43_200_123);
    expect(read('TIME(3)', '12:00:00.1235')).toBe(43_200_124);
    expect(read('TIME(1)', '12:00:00.123999999')).toBe(43_200_124);
    expect(read('TIME(3)', '12:00:00.9995')).toBe(43_201_000);
    expect(read('TIME(3)', '12:00:00.12')).toBe(43_200_120);
  });
  it('refuses one that rounds past the day\'s last millisecond, and hour 24', () => {
    expect(problem('TIME(3)', '23:59:59.9996')).toContain('past 23:59:59.999');
    expect(read('TIME(3)', '23:59:59.9994')).toBe(86_399_999);
    expect(problem('TIME(3)', '24:00:00')).toContain('no such time');
    expect(problem('TIME(3)', '12:00:00.1234567890')).toContain('expected a time');
  });
});

describe('a leap second is second 59 with its fraction', () => {
  it('in a TIMESTAMP, in the text\'s own clock', () => {
    expect(read('TIMESTAMP(3)', '2016-12-31T23:59:60Z')).toBe(US('2016-12-31T23:59:59Z'));
    expect(read('TIMESTAMP(6)', '2016-12-31T23:59:60.5Z')).toBe(US('2016-12-31T23:59:59.5Z'));
    expect(read('TIMESTAMP(3) WITH LOCAL TIME ZONE', '2016-12-31T23:59:60+02:00')).toBe(US('2016-12-31T21:59:59Z'));
    expect(read('TIMESTAMP(0)', '2016-12-31 23:59:60.999')).toBe(US('2016-12-31T23:59:59Z'));
    expect(problem('TIMESTAMP(3)', '2016-12-31T12:00:60Z')).toContain('no such time');
    expect(problem('TIMESTAMP(3)', '2016-12-31T23:59:61Z')).toContain('no such time');
    expect(problem('TIMESTAMP(3)', '2026-02-30T23:59:60Z')).toContain('no such date');
  });
  it('in a TIME', () => {
    expect(read('TIME(0)', '23:59:60')).toBe(86_399_000);
    expect(read('TIME(3)', '23:59:60.25')).toBe(86_399_250);
    expect(problem('TIME(0)', '12:34:60')).toContain('no such time');
  });
});

describe('TIMESTAMP T24:00 is the next day\'s 00:00', () => {
  it('with zero seconds and fraction only', () => {
    expect(read('TIMESTAMP(3)', '2026-12-31T24:00:00Z')).toBe(US('2027-01-01T00:00:00Z'));
    expect(read('TIMESTAMP(6)', '2026-06-30T24:00')).toBe(US('2026-07-01T00:00:00Z'));
    expect(read('TIMESTAMP(0)', '2026-06-30T24:00:00.000000000+01:00')).toBe(US('2026-06-30T23:00:00Z'));
    expect(problem('TIMESTAMP(3)', '2026-06-30T24:00:01Z')).toContain('no such time');
    expect(problem('TIMESTAMP(3)', '2026-06-30T24:00:00.001Z')).toContain('no such time');
    expect(problem('TIMESTAMP(3)', '2026-06-30T24:01:00Z')).toContain('no such time');
  });
});

describe('CHAR/VARCHAR(n) count characters as Paimon does (code points)', () => {
  it('a surrogate pair is one character', () => {
    expect(read('VARCHAR(3)', '😀😀')).toBe('😀😀');
    expect(read('VARCHAR(3)', '😀😀😀')).toBe('😀😀😀');
    expect(problem('VARCHAR(3)', '😀😀😀😀')).toContain('string longer than 3');
    expect(problem('VARCHAR(3)', 'abcd')).toContain('string longer than 3');
    expect(read('CHAR(2)', 'å😀')).toBe('å😀');
    expect(problem('CHAR(2)', 'a😀b')).toContain('string longer than 2');
    expect(checkValue(parseType('VARCHAR(1)'), '😀')).toBeUndefined();
    // A lone surrogate is one character too (U+FFFD in UTF-8); the writers refuse it elsewhere.
    expect(fitsChars('\uD800\uD800', 2)).toBe(true);
    expect(fitsChars('\uDE00\uD83D', 1)).toBe(false);
    expect(fitsChars('a\uD83D\uDE00', 2)).toBe(true);
    expect(fitsChars('a\uD83D\uDE00', 1)).toBe(false);
  });
});
