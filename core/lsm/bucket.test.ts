import { describe, expect, it } from 'vitest';
import { encodeBinaryRow } from './binary-row.ts';
import { bucketOf, hashBinaryRow } from './bucket.ts';
import { parseType, timestampFromString } from './types.ts';

const T = (...s: string[]) => s.map(parseType);
const hash = (types: string[], values: unknown[]) => hashBinaryRow(encodeBinaryRow(T(...types), values));

describe('bucket hash (§6.3 worked examples)', () => {
  it('matches FixedBucketRowKeyExtractorTest: INT keys a=5, b=6, c=7 into 100 buckets', () => {
    const row = encodeBinaryRow(T('INT'), [5]);
    expect(Buffer.from(row).toString('hex')).toBe('00000000000000000500000000000000');
    expect(hashBinaryRow(row)).toBe(260196596);
    expect(bucketOf(row, 100)).toBe(96);
    const ab = encodeBinaryRow(T('INT', 'INT'), [5, 6]);
    expect(hashBinaryRow(ab)).toBe(131015827);
    expect(bucketOf(ab, 100)).toBe(27);
    const abc = encodeBinaryRow(T('INT', 'INT', 'INT'), [5, 6, 7]);
    expect(hashBinaryRow(abc)).toBe(1805332940);
    expect(bucketOf(abc, 100)).toBe(40);
  });

  it('matches the pypaimon (Java-generated) hashes', () => {
    expect(hash(['STRING'], ['hello'])).toBe(243722546);
    expect(hash(['STRING'], ['hello-java'])).toBe(-201703277);
    expect(bucketOf(encodeBinaryRow(T('STRING'), ['hello-java']), 4)).toBe(1);
    expect(hash(['STRING', 'BIGINT'], ['hello-java', 42n])).toBe(-2066620165);
    expect(hash(['DECIMAL(10, 2)'], [1234567n])).toBe(754928256);
    expect(hash(['DECIMAL(25, 2)'], [1234567890123456789012345n])).toBe(1388205002);
    expect(hash(['TIMESTAMP(3)'], [timestampFromString('2026-01-02 03:04:05.123')])).toBe(-1766746798);
    expect(hash(['TIMESTAMP(6)'], [timestampFromString('2026-01-02 03:04:05.123456')])).toBe(1245041971);
  });

  it('reproduces the mor fixture assignment: bucket-key f2 INT, 2 buckets', () => {
    expect(bucketOf(encodeBinaryRow(T('INT NOT NULL'), [1]), 2)).toBe(0);
    expect(bucketOf(encodeBinaryRow(T('INT NOT NULL'), [0]), 2)).toBe(1);
  });

  it('uses Java remainder semantics for negative hashes and refuses bad bucket counts', () => {
    const row = encodeBinaryRow(T('STRING'), ['hello-java']); // hash -201703277
    expect(bucketOf(row, 1000)).toBe(277);
    expect(bucketOf(row, 1)).toBe(0);
    expect(() => bucketOf(row, 0)).toThrow(/positive/);
    expect(() => hashBinaryRow(new Uint8Array(6))).toThrow(/multiple of 4/);
  });
});
