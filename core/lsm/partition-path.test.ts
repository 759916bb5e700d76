import { describe, expect, it } from 'vitest';
import type { DataField } from './types.ts';
import { parseType, timestampFromString } from './types.ts';
import { checkName, escapePathName, javaFloatingToString, parsePartitionPath, partitionPath } from './partition-path.ts';

const F = (...specs: Array<[string, string]>): DataField[] => specs.map(([name, t], id) => ({ id, name, type: parseType(t) }));

describe('partitionPath (legacy names)', () => {
  it('renders the fixtures\' paths', () => {
    expect(partitionPath(F(['f1', 'INT']), [10])).toBe('f1=10');
    expect(partitionPath(F(['p0', 'INT'], ['p1', 'INT']), [0, 1])).toBe('p0=0/p1=1');
    expect(partitionPath([], [])).toBe('');
  });

  it('renders DATE as its day number and other types as Java toString of the internal value', () => {
    const fields = F(['dt', 'DATE'], ['b', 'BOOLEAN'], ['n', 'BIGINT'], ['d', 'DECIMAL(10, 2)'], ['x', 'DOUBLE'], ['t', 'TIMESTAMP(6)']);
    const values = [19723, true, -5n, 12345n, 1e7, timestampFromString('2024-01-01T12:00:00')];
    expect(partitionPath(fields, values)).toBe('dt=19723/b=true/n=-5/d=123.45/x=1.0E7/t=2024-01-01T12%3A00');
  });

  it('uses the default name for null, empty and blank values', () => {
    expect(partitionPath(F(['s', 'STRING'], ['i', 'INT']), ['  ', null])).toBe('s=__DEFAULT_PARTITION__/i=__DEFAULT_PARTITION__');
    expect(partitionPath(F(['s', 'STRING']), [''], 'NULLPART')).toBe('s=NULLPART');
  });

  it("takes blank as Java's Character.isWhitespace does, not as JS trim()", () => {
    // Java: U+001C–U+001F are whitespace; the no-break spaces and U+FEFF are not (trim() says the opposite).
    expect(partitionPath(F(['s', 'STRING']), ['\u001f \u001c\t'])).toBe('s=__DEFAULT_PARTITION__');
    expect(partitionPath(F(['s', 'STRING']), ['\u2028\u3000'])).toBe('s=__DEFAULT_PARTITION__');
    for (const v of ['\u00a0', '\u2007', '\u202f', '\ufeff']) expect(partitionPath(F(['s', 'STRING']), [v])).toBe(`s=${v}`);
  });

  it('escapes reserved characters as %XX and leaves others alone', () => {
    expect(escapePathName('a/b=c:d%e?f#g"h\'i*j\\k{l}m[n]o^p\x01q\x7fr é')).toBe(
      'a%2Fb%3Dc%3Ad%25e%3Ff%23g%22h%27i%2Aj%5Ck%7Bl%7Dm%5Bn%5Do%5Ep%01q%7Fr é',
    );
    expect(partitionPath(F(['s', 'STRING']), ['x/y'])).toBe('s=x%2Fy');
    expect(escapePathName('a\u0000b')).toBe('a%00b'); // Java escapes every char below ' ', NUL too
  });

  it('formats floating point like Java', () => {
    expect(javaFloatingToString(1, false)).toBe('1.0');
    expect(javaFloatingToString(0.001, false)).toBe('0.001');
    expect(javaFloatingToString(0.0001, false)).toBe('1.0E-4');
    expect(javaFloatingToString(123.456, false)).toBe('123.456');
    expect(javaFloatingToString(1.5e300, false)).toBe('1.5E300');
    expect(javaFloatingToString(-0, false)).toBe('-0.0');
    expect(javaFloatingToString(Math.fround(0.1), true)).toBe('0.1');
    expect(javaFloatingToString(NaN, false)).toBe('NaN');
  });

  it('parses paths back to values', () => {
    const fields = F(['dt', 'DATE'], ['s', 'STRING'], ['n', 'BIGINT'], ['t', 'TIMESTAMP(6)']);
    const values = [19723, 'x/y=z', 7n, timestampFromString('2024-01-01T12:00:00.000123')];
    const p = partitionPath(fields, values);
    expect(parsePartitionPath(fields, p)).toEqual(values);
    expect(parsePartitionPath(fields, `${p}/`)).toEqual(values);
    expect(parsePartitionPath(F(['i', 'INT']), 'i=__DEFAULT_PARTITION__')).toEqual([null]);
    expect(() => parsePartitionPath(F(['i', 'INT']), 'j=1')).toThrow(/not a partition of column 'i'/);
    expect(() => parsePartitionPath(F(['i', 'INT']), 'i=x')).toThrow(/not a INT/);
    expect(() => parsePartitionPath(F(['i', 'INT']), 'i=1/j=2')).toThrow(/2 levels/);
  });

  it('refuses binary partition columns', () => {
    expect(() => partitionPath(F(['b', 'BYTES']), [new Uint8Array(1)])).toThrow(/binary partition/);
  });
});

describe('checkName', () => {
  it('accepts ordinary names', () => {
    for (const n of ['orders', 'stock_2024', 'tag-v1.2', 'Ünïcode', 'a'.repeat(255)]) expect(() => checkName('table', n)).not.toThrow();
  });
  it.each([
    ['', /is empty/],
    ['..', /'\.\.'/],
    ['a..b', /'\.\.'/],
    ['a/b', /path separator/],
    ['a\\b', /path separator/],
    ['a\nb', /control character/],
    ['.hidden', /starts with a dot/],
    ['x'.repeat(256), /longer than 255/],
  ])('refuses %j, naming the kind and the name', (name, why) => {
    expect(() => checkName('tag', name)).toThrow(why);
    expect(() => checkName('tag', name)).toThrow(/^tag name /);
    expect(() => checkName('column', name)).toThrow(`column name ${JSON.stringify(name).slice(0, 20)}`);
  });
});
