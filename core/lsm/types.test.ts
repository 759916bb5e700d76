import { describe, expect, it } from 'vitest';
import {
  compareStrings,
  comparatorFor,
  parseType,
  typeToString,
  valueFromJson,
  valueToJson,
} from './types.ts';
import { castFunction } from './cast.ts';

describe('Paimon type strings', () => {
  it.each([
    ['INT', 'INT'],
    ['INT NOT NULL', 'INT NOT NULL'],
    ['STRING NOT NULL', 'STRING NOT NULL'],
    ['VARCHAR(2147483647)', 'STRING'],
    ['DECIMAL(10, 2)', 'DECIMAL(10, 2)'],
    ['decimal(38,4) not null', 'DECIMAL(38, 4) NOT NULL'],
    ['TIMESTAMP(3)', 'TIMESTAMP(3)'],
    ['TIMESTAMP', 'TIMESTAMP(6)'],
    ['TIMESTAMP(6) WITH LOCAL TIME ZONE', 'TIMESTAMP(6) WITH LOCAL TIME ZONE'],
    ['BYTES', 'BYTES'],
    ['DATE NOT NULL', 'DATE NOT NULL'],
  ])('%s prints as %s', (input, printed) => {
    expect(typeToString(parseType(input))).toBe(printed);
  });

  it('refuses unknown types and bad parameters, naming them', () => {
    expect(() => parseType('NUMBER')).toThrow(/unknown/);
    expect(() => parseType('DECIMAL(40, 2)')).toThrow(/precision must be 1..38/);
    expect(() => parseType('TIMESTAMP(9)')).toThrow(/above 6/);
  });
});

describe('values', () => {
  it('round-trips every JSON form', () => {
    const cases: Array<[string, unknown]> = [
      ['BIGINT', 9007199254740993n.toString()],
      ['BIGINT', 42],
      ['DECIMAL(10, 2)', '-12345.67'],
      ['DECIMAL(5, 0)', '99999'],
      ['BYTES', 'AAEC/w=='],
      ['DATE', '2026-11-30'],
      ['DATE', '1969-12-31'],
      ['TIMESTAMP(3)', '2026-01-02T03:04:05.123'],
      ['TIMESTAMP(6)', '2026-01-02T03:04:05.123456'],
      ['TIMESTAMP(6)', '1969-12-31T23:59:59.999999'],
      ['TIMESTAMP(3) WITH LOCAL TIME ZONE', '2026-01-02T03:04:05.123Z'],
      ['TIME(0)', '23:59:59'],
    ];
    for (const [type, json] of cases) {
      const t = parseType(type);
      expect(valueToJson(t, valueFromJson(t, json)), type).toEqual(json);
    }
  });

  it('refuses values that do not fit, naming the column', () => {
    expect(() => valueFromJson(parseType('INT NOT NULL'), null, 'qty')).toThrow(/'qty' must not be null/);
    expect(() => valueFromJson(parseType('INT'), 2 ** 31, 'qty')).toThrow(/qty.*integer/);
    expect(() => valueFromJson(parseType('DECIMAL(4, 2)'), '123.45', 'p')).toThrow(/does not fit/);
    expect(() => valueFromJson(parseType('DECIMAL(6, 2)'), '1.234', 'p')).toThrow(/decimal places/);
    expect(() => valueFromJson(parseType('DATE'), '2026-02-30', 'd')).toThrow(/no such date/);
    expect(() => valueFromJson(parseType('STRING'), 5, 's')).toThrow(/expected a string/);
  });

  it('orders strings by UTF-8 bytes, not UTF-16 units', () => {
    const a = '\uFFFD';
    const b = '\u{1F600}';
    expect(Buffer.compare(Buffer.from(a), Buffer.from(b))).toBe(-1);
    expect(compareStrings(a, b)).toBe(-1);
  });

  it('orders nulls first and doubles as Java does', () => {
    const c = comparatorFor(parseType('DOUBLE'));
    const sorted = [NaN, 1, null, -0, 0, -1].sort(c);
    expect(sorted.map((x) => (x === null ? 'null' : Object.is(x, -0) ? '-0' : String(x)))).toEqual([
      'null', '-1', '-0', '0', '1', 'NaN',
    ]);
  });
});

describe('dates before the year 100, zone offsets, base64 (values from modules)', () => {
  // Date.UTC reads years 0–99 as 1900–1999: .NET's DateTime.MinValue (0001-01-01), a common "no
  // date", was stored as 1901-01-01 and 0099-12-31 as 1999-12-31 (days as Java's LocalDate.toEpochDay).
  it('reads and writes every four-digit year as it is, and years beyond as -0001 or 10000', () => {
    const date = parseType('DATE');
    for (const [text, days] of [['0001-01-01', -719162], ['0099-12-31', -683004], ['0100-01-01', -683003], ['1970-01-01', 0], ['-0001-06-01', -719742], ['10000-01-01', 2932897]] as const) {
      expect([text, valueFromJson(date, text)]).toEqual([text, days]);
      expect(valueToJson(date, days)).toBe(text);
    }
    expect(castFunction(parseType('STRING'), date, 'd')('0001-01-01')).toBe(-719162);
    expect(() => valueFromJson(date, '0099-02-29', 'd')).toThrow(/no such date/);
  });

  it('refuses a timestamp it cannot hold exactly instead of moving it, and an offset beyond ±18:00', () => {
    const ts = parseType('TIMESTAMP(6)');
    expect(() => valueFromJson(ts, '0001-01-01T00:00:00', 'at')).toThrow(/column 'at'.*outside the timestamps this store holds/);
    expect(valueToJson(ts, valueFromJson(ts, '1700-03-01T12:00:00.000001'))).toBe('1700-03-01T12:00:00.000001');
    // +99:99 was read as 100 h 39 min, moving the value by four days.
    expect(() => valueFromJson(ts, '2026-01-01T00:00:00+99:99', 'at')).toThrow(/no such zone offset/);
    expect(() => valueFromJson(ts, '2026-01-01T00:00:00+18:30', 'at')).toThrow(/no such zone offset/);
    expect(() => valueFromJson(ts, '2026-01-01T00:00:00+05:60', 'at')).toThrow(/no such zone offset/);
    expect(valueToJson(ts, valueFromJson(ts, '2026-01-01T00:00:00-18:00'))).toBe('2026-01-01T18:00:00.000000');
    expect(valueToJson(ts, valueFromJson(ts, '2026-01-01T05:30:00+05:30'))).toBe('2026-01-01T00:00:00.000000');
  });

  // A JSON number prints in exponent notation below 1e-6 and from 1e21 on: 0.00000001 into a
  // DECIMAL(10, 8) was refused as "expected a decimal, got \"1e-8\"".
  it('reads a decimal written in exponent notation, as a number or as text', () => {
    const small = parseType('DECIMAL(10, 8)');
    expect(valueFromJson(small, 0.00000001)).toBe(1n);
    expect(valueFromJson(small, '-2.5E-7')).toBe(-25n);
    expect(valueToJson(small, valueFromJson(small, 1.5e-7))).toBe('0.00000015');
    expect(valueFromJson(parseType('DECIMAL(38, 0)'), 1e21)).toBe(10n ** 21n);
    expect(valueFromJson(parseType('DECIMAL(38, 2)'), '1.25e2')).toBe(12500n);
    expect(() => valueFromJson(small, 1e-9, 'p')).toThrow(/column 'p'.*"1e-9" has more than 8 decimal places/);
    expect(() => valueFromJson(small, '1e', 'p')).toThrow(/expected a decimal/);
  });

  it('refuses base64 that holds no whole byte or is padded short, instead of reading nothing', () => {
    const bytes = parseType('BYTES');
    for (const bad of ['A', 'A=', 'AA=', 'AAAAA', 'AAAAA===']) expect(() => valueFromJson(bytes, bad, 'b')).toThrow(/column 'b'.*expected base64 text/);
    for (const [good, n] of [['', 0], ['AA', 1], ['AA==', 1], ['AAA', 2], ['AAA=', 2], ['AAAA', 3]] as const) expect((valueFromJson(bytes, good) as Uint8Array).length).toBe(n);
  });
});

describe('dates and times that do not exist', () => {
  it('refuses impossible months, days and times, naming the column', () => {
    expect(() => valueFromJson(parseType('DATE'), '2024-13-01', 'day')).toThrow(/column 'day'.*no such date/);
    expect(() => valueFromJson(parseType('DATE'), '2024-00-10', 'day')).toThrow(/no such date/);
    expect(() => valueFromJson(parseType('TIMESTAMP(3)'), '2024-13-01T00:00:00Z', 'at')).toThrow(/column 'at'.*no such date/);
    expect(() => valueFromJson(parseType('TIME(0)'), '10:75', 't')).toThrow(/column 't'.*no such time/);
  });
});
