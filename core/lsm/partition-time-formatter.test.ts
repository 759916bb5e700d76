// `partition.timestamp-formatter` read as Java's DateTimeFormatter.ofPattern (strict, SMART) and
// Paimon's PartitionTimeExtractor read it (LocalDateTime.parse, else LocalDate.parse at midnight).
// Every expectation here was checked against a JVM (java.time, JDK 17):
// - a field of variable width ('yyyy', 'M', 'd', 'H'…) is read greedily, with no backtracking: two
//   of them with only digits between them, or one before a digit literal, never parse, where the
//   regex this store used found a split ('yyyyMd' read '2024111' as 2024-11-1);
// - a time without an hour is no time: minutes and seconds are range-checked and then ignored
//   (midnight), where this store added them; an hour with seconds but no minutes (or a fraction
//   without seconds) gives no time either, unchecked;
// - a field named twice with two values is a conflict, where this store took the last.

import { describe, expect, it } from 'vitest';
import { PartitionTimeExtractor, compileFormatter } from './partition-expire.ts';

const wall = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0): number => Date.UTC(y, mo - 1, d, h, mi, s);
const at = (formatter: string, text: string): number => new PartitionTimeExtractor(undefined, formatter).extract(['dt'], [text]);

describe('partition.timestamp-formatter as Java parses it', () => {
  it('refuses patterns Java never parses: two fields of variable width adjacent, or one before a digit', () => {
    const refused: [string, RegExp][] = [
      ['yyyyMd', /'yyyy' and 'M' .*greedily.*never parses/],
      ['yyyy-Md', /'M' and 'd' .*greedily.*never parses/],
      ['yyyyMMd', /'yyyy' and 'd' .*never parses/],
      ['dMMyyyy', /'d' and 'yyyy' .*never parses/],
      ['yyyyMMddHmm', /'yyyy' and 'H' .*never parses/],
      ["yyyyMM'1'", /'yyyy' before the digit '1'.*never parses/],
      ['yyyy1MM', /'yyyy' before the digit '1'.*never parses/],
    ];
    for (const [pattern, reason] of refused) expect(compileFormatter(pattern), pattern).toMatch(reason);
  });

  it('parses the adjacent patterns Java parses, as Java splits them', () => {
    expect(at('yyyyMMdd', '20241101')).toBe(wall(2024, 11, 1));
    expect(at('MMddyyyy', '11012024')).toBe(wall(2024, 11, 1));
    expect(at('ddMMyyyy', '01112024')).toBe(wall(2024, 11, 1));
    expect(at('yyyyMMddHH', '2024110109')).toBe(wall(2024, 11, 1, 9));
    expect(at("yyyyMMdd'T'Hmm", '20261201T930')).toBe(wall(2026, 12, 1, 9, 30));
    expect(at('yyyy-M-d', '2026-1-5')).toBe(wall(2026, 1, 5));
    expect(at('MMdd yyyy', '1201 2026')).toBe(wall(2026, 12, 1));
  });

  it('a field named twice must have one value (Java refuses the conflict)', () => {
    expect(at('yyyy-MM-dd/MM', '2026-12-01/12')).toBe(wall(2026, 12, 1));
    expect(at('yyyy-MM-dd/yy', '2026-12-01/26')).toBe(wall(2026, 12, 1));
    expect(() => at('yyyy-MM-dd/MM', '2026-12-01/11')).toThrow(/gives the month twice, differently/);
    expect(() => at('yyyyMMddyy', '2024110125')).toThrow(/gives the year twice, differently/);
  });

  it('without an hour the time is midnight, its minutes and seconds checked but not added', () => {
    expect(at('yyyy-MM-dd mm', '2026-12-01 30')).toBe(wall(2026, 12, 1));
    expect(at('yyyy-MM-dd mm:ss', '2026-12-01 30:15')).toBe(wall(2026, 12, 1));
    expect(at('yyyy-MM-dd ss', '2026-12-01 59')).toBe(wall(2026, 12, 1));
    expect(at('yyyy-MM-dd SSS', '2026-12-01 123')).toBe(wall(2026, 12, 1));
    expect(() => at('yyyy-MM-dd mm', '2026-12-01 60')).toThrow(/a minute out of range/);
    expect(() => at('yyyy-MM-dd m', '2026-12-01 123')).toThrow(/a minute out of range/);
    expect(() => at('yyyy-MM-dd ss', '2026-12-01 99')).toThrow(/a second out of range/);
  });

  it('an hour with seconds but no minutes, or a fraction but no seconds, is no time (midnight, unchecked)', () => {
    expect(at('yyyy-MM-dd HH ss', '2026-12-01 10 30')).toBe(wall(2026, 12, 1));
    expect(at('yyyy-MM-dd HH ss', '2026-12-01 25 60')).toBe(wall(2026, 12, 1));
    expect(at('yyyy-MM-dd HH:mm SSS', '2026-12-01 10:30 123')).toBe(wall(2026, 12, 1));
    expect(at('yyyy-MM-dd HH:mm SSS', '2026-12-01 25:60 123')).toBe(wall(2026, 12, 1));
  });

  it('an hour builds the time, SMART: 24:00 is the next midnight, other values checked', () => {
    expect(at('yyyy-MM-dd HH', '2026-12-01 10')).toBe(wall(2026, 12, 1, 10));
    expect(at('yyyy-MM-dd H', '2026-12-01 7')).toBe(wall(2026, 12, 1, 7));
    expect(at('yyyy-MM-dd HH', '2026-12-01 24')).toBe(wall(2026, 12, 2));
    expect(at('yyyy-MM-dd HH:mm:ss', '2026-12-01 24:00:00')).toBe(wall(2026, 12, 2));
    expect(() => at('yyyy-MM-dd HH', '2026-12-01 25')).toThrow(/an hour out of range/);
    expect(() => at('yyyy-MM-dd HH:mm', '2026-12-01 24:01')).toThrow(/an hour out of range/);
    expect(() => at('yyyy-MM-dd HH:mm', '2026-12-01 10:61')).toThrow(/a minute out of range/);
  });
});
