import { compress as sjCompress, uncompress as sjUncompress } from 'snappyjs';
import { describe, expect, it } from 'vitest';
import { ByteWriter } from './byte-writer.ts';
import { decodeDeltaBinaryPacked } from './delta.ts';
import { bitWidthOf, decodeHybrid, encodeHybrid } from './rle.ts';
import { snappyCompress, snappyUncompress, SnappyError } from './snappy.ts';
import { readStruct, T_BINARY, T_I32, T_STRUCT, ThriftError, ThriftWriter } from './thrift-compact.ts';
import { rng } from './test-support.ts';

describe('thrift compact protocol', () => {
  it('round-trips every field kind, big ids deltas and 64-bit values', () => {
    const t = new ThriftWriter();
    t.i32(1, -5);
    t.i64(2, 2n ** 62n);
    t.i64(3, -(2n ** 63n));
    t.bool(4, true);
    t.bool(5, false);
    t.string(6, 'héllo');
    t.i32(40, 2147483646); // long jump: id written as a varint
    t.listBegin(41, T_I32, 20);
    for (let i = 0; i < 20; i++) t.elemI32(i - 10);
    t.listBegin(42, T_STRUCT, 1);
    t.elemStructBegin();
    t.byte(1, -3 & 0xff);
    t.i16(2, -300);
    t.structEnd();
    t.listBegin(43, T_BINARY, 1);
    t.elemString('x');
    t.structEnd();
    const bytes = t.out.toBytes();
    const { value, end } = readStruct(bytes, 0);
    expect(end).toBe(bytes.length);
    expect(value[1]).toBe(-5);
    expect(value[2]).toBe(2n ** 62n);
    expect(value[3]).toBe(-(2n ** 63n));
    expect(value[4]).toBe(true);
    expect(value[5]).toBe(false);
    expect(new TextDecoder().decode(value[6] as Uint8Array)).toBe('héllo');
    expect(value[40]).toBe(2147483646);
    expect(value[41]).toEqual(Array.from({ length: 20 }, (_, i) => i - 10));
    expect(value[42]).toEqual([{ 1: -3, 2: -300 }]);
  });

  it('rejects truncated and malformed input with ThriftError', () => {
    const t = new ThriftWriter();
    t.string(1, 'abcdef');
    t.structEnd();
    const bytes = t.out.toBytes();
    for (let n = 0; n < bytes.length; n++) expect(() => readStruct(bytes.subarray(0, n), 0)).toThrow(ThriftError);
    expect(() => readStruct(Uint8Array.of(0x1d), 0)).toThrow(ThriftError); // unknown type 13
    expect(() => readStruct(Uint8Array.of(0x19, 0xf5, 0xff, 0xff, 0xff, 0x0f), 0)).toThrow(/beyond/); // huge list
    const deep = new Uint8Array(200).fill(0x1c); // struct in struct in …
    expect(() => readStruct(deep, 0)).toThrow(/deep|end/);
  });
});

describe('RLE / bit-packed hybrid', () => {
  it('round-trips random runs at every bit width', () => {
    const r = rng(3);
    for (let w = 0; w <= 32; w++) {
      const n = 1 + Math.floor(r() * 3000);
      const max = w === 0 ? 0 : w === 32 ? 0xffffffff : 2 ** w - 1;
      const values = new Int32Array(n);
      for (let i = 0; i < n; ) {
        const v = Math.floor(r() * (max + 1)) | 0;
        const run = r() < 0.3 ? 1 + Math.floor(r() * 40) : 1;
        for (let k = 0; k < run && i < n; k++) values[i++] = v;
      }
      const out = new ByteWriter();
      encodeHybrid(out, values, n, w);
      const back = new Int32Array(n);
      const end = decodeHybrid(out.view0(), 0, out.length, w, n, back);
      expect(end, `width ${w}`).toBe(out.length);
      expect(Array.from(back), `width ${w}`).toEqual(Array.from(values));
    }
    expect(bitWidthOf(0)).toBe(0);
    expect(bitWidthOf(1)).toBe(1);
    expect(bitWidthOf(255)).toBe(8);
  });

  it('decodes the spec example and refuses runs beyond the data', () => {
    // Encodings.md: values 0..7 with bit width 3, one bit-packed group.
    const packed = Uint8Array.of(0x03, 0x88, 0xc6, 0xfa);
    const out = new Int32Array(8);
    decodeHybrid(packed, 0, packed.length, 3, 8, out);
    expect(Array.from(out)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(() => decodeHybrid(packed, 0, 2, 3, 8, out)).toThrow(/beyond/);
    expect(() => decodeHybrid(Uint8Array.of(0x10, 0x05), 0, 2, 2, 8, out)).toThrow(/wider/); // RLE value 5 in 2 bits
  });
});

describe('snappy', () => {
  it('agrees with snappyjs both ways', () => {
    const r = rng(9);
    for (let t = 0; t < 60; t++) {
      const n = Math.floor(r() * 150_000);
      const a = new Uint8Array(n);
      const alphabet = 1 + Math.floor(r() * 255);
      for (let i = 0; i < n; i++) a[i] = i > 20 && r() < 0.6 ? a[i - 1 - Math.floor(r() * 20)]! : Math.floor(r() * alphabet);
      const ours = snappyCompress(a);
      expect(Buffer.compare(Buffer.from(sjUncompress(ours)), Buffer.from(a))).toBe(0);
      expect(Buffer.compare(Buffer.from(snappyUncompress(ours, n)), Buffer.from(a))).toBe(0);
      expect(Buffer.compare(Buffer.from(snappyUncompress(sjCompress(a), n)), Buffer.from(a))).toBe(0);
    }
  });

  it('refuses damaged streams', () => {
    const a = new TextEncoder().encode('abcabcabcabcabcabcabcabc hello hello hello');
    const c = snappyCompress(a);
    expect(() => snappyUncompress(c, a.length + 1)).toThrow(SnappyError);
    for (let n = 1; n < c.length; n++) expect(() => snappyUncompress(c.subarray(0, n), a.length)).toThrow(SnappyError);
    expect(() => snappyUncompress(Uint8Array.of(4, 0x01, 0x09), 4)).toThrow(/outside/); // copy before the start
  });
});

describe('DELTA_BINARY_PACKED', () => {
  it('decodes the Encodings.md example', () => {
    // 1 2 3 4 5: block 128, 4 miniblocks, 5 values, first 1; min delta 1, widths 0.
    const bytes = Uint8Array.of(0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0);
    const { values, end } = decodeDeltaBinaryPacked(bytes, 0, bytes.length, 5, false);
    expect(Array.from(values as Int32Array)).toEqual([1, 2, 3, 4, 5]);
    expect(end).toBe(bytes.length);
    const wide = decodeDeltaBinaryPacked(bytes, 0, bytes.length, 5, true);
    expect(Array.from(wide.values as BigInt64Array)).toEqual([1n, 2n, 3n, 4n, 5n]);
    expect(() => decodeDeltaBinaryPacked(bytes, 0, 6, 5, false)).toThrow(/beyond/);
  });
});
