// Casts from STRING as Paimon's CastExecutors give them (cast.ts): CHAR/VARCHAR cut and padded by
// characters as BinaryString counts them, TIME as DateTimeUtils.parseTime reads it, TIMESTAMP as
// BinaryStringUtils.toTimestamp reads it (DEFAULT_TIMESTAMP_FORMATTER, SMART resolver).
import { describe, expect, it } from 'vitest';
import { castFunction } from './cast.ts';
import { parseType, timestampFromString } from './types.ts';

const cast = (from: string, to: string, v: unknown) => castFunction(parseType(from), parseType(to), 'c')(v);
const micros = (iso: string) => timestampFromString(iso);

describe('STRING → CHAR/VARCHAR counts characters as Paimon does', () => {
  it('never splits a surrogate pair, and an emoji is one character', () => {
    expect(cast('STRING', 'VARCHAR(1)', 'a😀')).toBe('a');
    expect(cast('STRING', 'VARCHAR(2)', 'a😀b')).toBe('a😀');
    expect(cast('STRING', 'VARCHAR(2)', '😀😀x')).toBe('😀😀');
    expect(cast('STRING', 'VARCHAR(2)', '😀😀')).toBe('😀😀');
    expect(cast('VARCHAR(5)', 'CHAR(1)', '😀😀')).toBe('😀');
    expect(cast('STRING', 'VARCHAR(3)', 'abcd')).toBe('abc');
  });
  it('pads a CHAR to n characters, not UTF-16 units', () => {
    expect(cast('STRING', 'CHAR(3)', '😀')).toBe('😀  ');
    expect(cast('STRING', 'CHAR(3)', 'ab')).toBe('ab ');
    expect(cast('STRING', 'CHAR(2)', '😀😀')).toBe('😀😀');
  });
});

describe('STRING → DATE as Paimon reads it (DateTimeUtils.parseDate)', () => {
  const day = (iso: string) => Math.round(micros(`${iso}T00:00:00`) / 86_400_000_000);
  it('reads y[-m[-d]], ignores what follows a blank, and a number is days', () => {
    expect(cast('STRING', 'DATE', '2024-03-05')).toBe(day('2024-03-05'));
    expect(cast('STRING', 'DATE', '2024-3-5 10:30:00')).toBe(day('2024-03-05'));
    expect(cast('STRING', 'DATE', '2024')).toBe(2024); // a number first: days, as in Java
    expect(cast('STRING', 'DATE', '2024 ')).toBe(day('2024-01-01'));
    expect(cast('STRING', 'DATE', '2024-07')).toBe(day('2024-07-01'));
    expect(cast('STRING', 'DATE', '19000')).toBe(19000);
    expect(cast('STRING', 'DATE', '-1')).toBe(-1);
  });
  it('refuses a date that does not exist instead of rolling it over', () => {
    for (const t of ['2023-02-29', '2024-04-31', '2024-13-01', '2024-01-01T10:00', '10000-01-01', 'x']) {
      expect(() => cast('STRING', 'DATE', t), t).toThrow(/column 'c'/);
    }
    expect(cast('STRING', 'DATE', '2024-02-29')).toBe(day('2024-02-29'));
  });
});

describe('STRING → TIME as Paimon reads it', () => {
  it('rounds half up on the fourth fraction digit (DateTimeUtils.parseFraction)', () => {
    expect(cast('STRING', 'TIME(3)', '10:00:00.1235')).toBe(36_000_124);
    expect(cast('STRING', 'TIME(3)', '10:00:00.1234')).toBe(36_000_123);
    expect(cast('STRING', 'TIME(3)', '10:00:00.123999999')).toBe(36_000_124);
    expect(cast('STRING', 'TIME(0)', '10:00:00.5')).toBe(36_000_500);
  });
  it('reads short forms and a number of milliseconds as Java does', () => {
    expect(cast('STRING', 'TIME', '10:00')).toBe(36_000_000);
    expect(cast('STRING', 'TIME', '1:2:3')).toBe(3_723_000);
    expect(cast('STRING', 'TIME', '7')).toBe(7);
    expect(cast('STRING', 'TIME', '10:00:00+01:30')).toBe(41_400_000);
  });
  it('refuses what is no time of a day (Java would make an int past 23:59:59.999)', () => {
    for (const t of ['24:00:00', '23:59:60', '23:59:59.9996', '25:00', 'x', '10:xx', '-5']) {
      expect(() => cast('STRING', 'TIME', t), t).toThrow(/column 'c'/);
    }
  });
});

describe('STRING → TIMESTAMP as Paimon reads it', () => {
  it('refuses a leap second, as Paimon\'s cast does (java.time SMART resolver)', () => {
    expect(() => cast('STRING', 'TIMESTAMP(3)', '2016-12-31T23:59:60')).toThrow(/column 'c'/);
    expect(() => cast('STRING', 'TIMESTAMP(3)', '2016-12-31 23:59:60.5')).toThrow(/column 'c'/);
  });
  it('reads T24:00 (zero seconds and fraction) as the next day, anything past it refused', () => {
    expect(cast('STRING', 'TIMESTAMP(3)', '2024-06-30T24:00')).toBe(micros('2024-07-01T00:00:00'));
    expect(cast('STRING', 'TIMESTAMP(3)', '2024-06-30 24:00:00.000')).toBe(micros('2024-07-01T00:00:00'));
    expect(() => cast('STRING', 'TIMESTAMP(3)', '2024-06-30T24:00:00.001')).toThrow(/column 'c'/);
  });
  it('reads the formatter\'s shapes, a day past the month\'s end as its last day, and no zone', () => {
    expect(cast('STRING', 'TIMESTAMP(3)', '2024-1-5 1:2:3.4567')).toBe(micros('2024-01-05T01:02:03.456'));
    expect(cast('STRING', 'TIMESTAMP(6)', '2024-03-01')).toBe(micros('2024-03-01T00:00:00'));
    expect(cast('STRING', 'TIMESTAMP(0)', '2023-02-30T10:00:00.9')).toBe(micros('2023-02-28T10:00:00'));
    expect(cast('STRING', 'TIMESTAMP(6)', '2024-02-31 00:00:00')).toBe(micros('2024-02-29T00:00:00'));
    for (const t of ['2024-01-01T10:00:00Z', '2024-01-01T10:00+02:00', '2024-01-01 10:00', ' 2024-01-01', '2024-02-32', '2024-13-01', '0000-01-01']) {
      expect(() => cast('STRING', 'TIMESTAMP(3)', t), t).toThrow(/column 'c'/);
    }
  });
  it('reads a number as epoch seconds, ms or µs by the precision (TIMESTAMP only)', () => {
    expect(cast('STRING', 'TIMESTAMP(0)', '1700000000')).toBe(1_700_000_000_000_000);
    expect(cast('STRING', 'TIMESTAMP(3)', '1700000000123')).toBe(1_700_000_000_123_000);
    expect(cast('STRING', 'TIMESTAMP(6)', '-1')).toBe(-1);
    expect(() => cast('STRING', 'TIMESTAMP(2)', '1700000000')).toThrow(/column 'c'/);
    expect(() => cast('STRING', 'TIMESTAMP_LTZ(3)', '1700000000123')).toThrow(/column 'c'/);
  });
});
