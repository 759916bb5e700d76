import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  bigintToMinimalBytes,
  binaryRowEncoder,
  deserializeBinaryRow,
  encodeBinaryRow,
  serializeBinaryRow,
} from './binary-row.ts';
import { isCorruption } from './errors.ts';
import { decodeManifest } from './manifest.ts';
import { parseType, timestampFromString } from './types.ts';
import { PAIMON_FIXTURES, paimonFixturesAvailable } from './testing/shared.ts';

const FIX = PAIMON_FIXTURES;
const haveFixtures = paimonFixturesAvailable('the binary-row fixture tests');

const T = (...s: string[]) => s.map(parseType);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('BinaryRow encoding', () => {
  it('lays out a one-INT row as Java does (FixedBucketRowKeyExtractorTest)', () => {
    expect(hex(encodeBinaryRow(T('INT'), [5]))).toBe('0000000000000000' + '0500000000000000');
    expect(hex(serializeBinaryRow(T('INT'), [5]))).toBe('00000001' + '0000000000000000' + '0500000000000000');
    expect(hex(serializeBinaryRow([], []))).toBe('000000000000000000000000');
  });

  it('puts strings of ≤7 bytes inline and longer ones in the 8-aligned var part', () => {
    expect(hex(encodeBinaryRow(T('STRING'), ['Alex']))).toBe('0000000000000000' + '416c657800000084');
    const long = encodeBinaryRow(T('STRING', 'INT'), ['abcdefgh9', 1]);
    expect(long.length).toBe(8 + 16 + 16);
    expect(hex(long.subarray(8, 16))).toBe('0900000018000000'); // len 9, offset 24
    expect(hex(long.subarray(24))).toBe(hex(Buffer.from('abcdefgh9')) + '00000000000000');
  });

  it('sets the null bit at i+8 and leaves the slot zero', () => {
    const b = encodeBinaryRow(T('INT', 'STRING'), [null, null]);
    expect(hex(b)).toBe('0003000000000000' + '0'.repeat(32));
  });

  it('reserves 16 bytes for a null DECIMAL(p>18) and 8 for a null TIMESTAMP(p>3), as RowHelper does', () => {
    const b = encodeBinaryRow(T('DECIMAL(20, 2)', 'TIMESTAMP(6)'), [null, null]);
    expect(b.length).toBe(8 + 16 + 16 + 8);
    expect(hex(b.subarray(8, 24))).toBe('0000000018000000' + '0000000028000000');
  });

  it('writes non-compact decimals as minimal big-endian two\'s complement', () => {
    expect(hex(bigintToMinimalBytes(0n))).toBe('00');
    expect(hex(bigintToMinimalBytes(127n))).toBe('7f');
    expect(hex(bigintToMinimalBytes(128n))).toBe('0080');
    expect(hex(bigintToMinimalBytes(-1n))).toBe('ff');
    expect(hex(bigintToMinimalBytes(-129n))).toBe('ff7f');
    const b = encodeBinaryRow(T('DECIMAL(25, 2)'), [-12345n]);
    expect(hex(b.subarray(8, 16))).toBe('0200000010000000');
    expect(hex(b.subarray(16))).toBe('cfc7' + '00'.repeat(14));
  });

  it('stores TIMESTAMP(p>3) as millis in the var part and nano-of-milli in the slot', () => {
    const micros = timestampFromString('2026-01-02T03:04:05.123456');
    const b = encodeBinaryRow(T('TIMESTAMP(6)'), [micros]);
    const dv = new DataView(b.buffer);
    expect(dv.getUint32(8, true)).toBe(456_000);
    expect(dv.getBigInt64(16, true)).toBe(BigInt(Math.floor(micros / 1000)));
  });

  it('round-trips every supported type, including negatives and nulls', () => {
    const types = T(
      'BOOLEAN', 'TINYINT', 'SMALLINT', 'INT', 'BIGINT', 'FLOAT', 'DOUBLE', 'DECIMAL(10, 2)', 'DECIMAL(38, 4)',
      'STRING', 'STRING', 'BYTES', 'BYTES', 'DATE', 'TIME(3)', 'TIMESTAMP(3)', 'TIMESTAMP(6)',
      'TIMESTAMP(6) WITH LOCAL TIME ZONE', 'CHAR(3)', 'INT',
    );
    const values = [
      true, -5, -300, -70000, -(2n ** 62n), 1.5, -2.25, -123456789n, -(10n ** 37n) + 7n,
      'héllo', 'a longer string ✓ with UTF-8', new Uint8Array([1, 2, 3]), new Uint8Array(20).fill(9), -1, 86_399_999,
      -1_000, -1, 1_756_266_933_641_123, 'abc', null,
    ];
    const bytes = serializeBinaryRow(types, values);
    expect(bytes.length % 8).toBe(4);
    expect(deserializeBinaryRow(types, bytes, 'mem')).toEqual(values);
  });

  it('produces identical bytes from the reusable encoder across calls', () => {
    const enc = binaryRowEncoder(T('STRING', 'INT'));
    const a = enc(['a long string value', 1]);
    enc(['x', null]);
    expect(hex(enc(['a long string value', 1]))).toBe(hex(a));
  });

  it('refuses malformed input as corruption', () => {
    const ok = serializeBinaryRow(T('STRING'), ['a long string value']);
    const check = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(isCorruption(e)).toBe(true);
        return;
      }
      throw new Error('expected a corruption');
    };
    check(() => deserializeBinaryRow(T('STRING', 'INT'), ok, 'x')); // arity
    check(() => deserializeBinaryRow(T('STRING'), ok.subarray(0, 12), 'x')); // truncated fixed part
    check(() => deserializeBinaryRow(T('STRING'), ok.subarray(0, 30), 'x')); // var part out of bounds
    check(() => deserializeBinaryRow(T('STRING'), new Uint8Array(2), 'x'));
    expect(() => encodeBinaryRow(T('INT'), [1, 2])).toThrow(/expected 1/);
  });
});

describe.skipIf(!haveFixtures)('BinaryRow against Java-written fixtures', () => {
  it('decodes the mor fixture keys (f0 STRING, f2 INT), including the 104-byte string, and re-encodes them byte for byte', () => {
    const p = `${FIX}/java13-pk-parquet-mor-partitioned-2buckets/manifest/manifest-daefb1fa-3081-4c75-aabf-66cd37e05e33-0`;
    const entries = decodeManifest(new Uint8Array(readFileSync(p)), p);
    const keyTypes = T('STRING NOT NULL', 'INT NOT NULL');
    const long = 'Two roads diverged in a wood, and I took the one less traveled by, And that has made all the difference.';
    const keys = entries.flatMap((e) => [e.file.minKey, e.file.maxKey]);
    const decoded = keys.map((k) => deserializeBinaryRow(keyTypes, k, p));
    expect(decoded).toContainEqual([long, 1]);
    expect(decoded).toContainEqual(['Alice', 1]);
    for (let i = 0; i < keys.length; i++) expect(hex(serializeBinaryRow(keyTypes, decoded[i]!))).toBe(hex(keys[i]!));
    const withLong = keys.find((k) => k.length > 100)!;
    expect(hex(withLong.subarray(0, 28))).toBe('00000002' + '0000000000000000' + '6800000018000000' + '0100000000000000');
  });

  it('decodes TIMESTAMP(0/3/6) and LTZ value stats of the append fixture', () => {
    const p = `${FIX}/java13-append-avro-datafiles-timestamps/manifest/manifest-2dd2463f-8dac-47f1-826a-6ba134e7a78b-0`;
    const [e] = decodeManifest(new Uint8Array(readFileSync(p)), p);
    const types = T('TIMESTAMP(0)', 'TIMESTAMP(3)', 'TIMESTAMP(6)', 'TIMESTAMP(0) WITH LOCAL TIME ZONE', 'TIMESTAMP(3) WITH LOCAL TIME ZONE', 'TIMESTAMP(6) WITH LOCAL TIME ZONE');
    const min = deserializeBinaryRow(types, e!.file.valueStats.minValues, p);
    expect(min).toEqual([1_000_000, 1_000, 1, 2_000_000, 2_000, 2]);
    expect(hex(serializeBinaryRow(types, min))).toBe(hex(e!.file.valueStats.minValues));
  });
});
