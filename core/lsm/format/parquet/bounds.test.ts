// Counts and sizes read from a Parquet file must be checked against the bytes (or a bound derived
// from them) before they size an allocation or drive a loop: a damaged one is a Corruption naming
// the file, reported before anything is allocated. Each case below is a count that once sized an
// allocation unchecked (see the report of the audit that added this file); the assertions pin the
// error the check raises, or, where no error is due, how much memory the decoder allocated.

import { crc32, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { LsmError } from '../../errors.ts';
import { expectCorruption, thrownLsmError } from '../../testing/corruption.ts';
import { parseType } from '../../types.ts';
import { CodecError, decompress, zstdDecompressBounded } from './compression.ts';
import { decodeDeltaBinaryPacked, decodeDeltaByteArray } from './delta.ts';
import { readParquet, writeParquet, type ParquetColumn } from './index.ts';
import { DecodeError, decodePlain } from './plain-decode.ts';
import { Codec, PageType, Physical } from './schema.ts';
import { SnappyError, snappyUncompress } from './snappy.ts';
import { readStruct, T_BINARY, T_FALSE, T_I32, T_I64, T_LIST, T_STRUCT, T_TRUE, type TStruct, type TValue } from './thrift-compact.ts';

// ---------------------------------------------------------------------------------------------
// A generic thrift-compact re-encoder and a file rebuilder: decode a good file's footer and page
// headers, edit them, write the file again with fresh offsets.

function typeOf(v: TValue): number {
  if (typeof v === 'boolean') return v ? T_TRUE : T_FALSE;
  if (typeof v === 'number' || typeof v === 'bigint') return T_I64; // the reader treats i16/i32/i64 alike
  if (v instanceof Uint8Array) return T_BINARY;
  if (Array.isArray(v)) return T_LIST;
  if (v instanceof Map) throw new Error('maps are not re-encoded');
  return T_STRUCT;
}

function encode(s: TStruct): Uint8Array {
  const out: number[] = [];
  const varint = (v: bigint) => {
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    out.push(Number(v));
  };
  const zigzag = (v: number | bigint) => {
    const x = BigInt(v);
    varint(x >= 0n ? x << 1n : (-x << 1n) - 1n);
  };
  const value = (v: TValue, t: number): void => {
    if (t === T_I64) zigzag(v as number | bigint);
    else if (t === T_BINARY) {
      varint(BigInt((v as Uint8Array).length));
      for (const b of v as Uint8Array) out.push(b);
    } else if (t === T_LIST) {
      const l = v as TValue[];
      const et = l.length === 0 ? T_I32 : typeOf(l[0]!);
      if (l.length < 15) out.push((l.length << 4) | et);
      else {
        out.push(0xf0 | et);
        varint(BigInt(l.length));
      }
      for (const e of l) {
        if (et === T_TRUE || et === T_FALSE) out.push(e ? 1 : 2);
        else value(e, et);
      }
    } else if (t === T_STRUCT) struct(v as TStruct);
  };
  const struct = (st: TStruct): void => {
    let last = 0;
    for (const id of Object.keys(st).map(Number).sort((a, b) => a - b)) {
      const v = st[id];
      if (v === undefined) continue;
      const t = typeOf(v);
      const d = id - last;
      if (d > 0 && d <= 15) out.push((d << 4) | t);
      else {
        out.push(t);
        zigzag(id);
      }
      if (t !== T_TRUE && t !== T_FALSE) value(v, t);
      last = id;
    }
    out.push(0);
  };
  struct(s);
  return Uint8Array.from(out);
}

interface Page {
  h: TStruct;
  body: Uint8Array;
}

const PAR1 = Uint8Array.of(0x50, 0x41, 0x52, 0x31);

/** `file` written again after `edit` changed its page headers, pages or footer (offsets and sizes recomputed). */
function rebuild(file: Uint8Array, edit: { pages?: (group: number, chunk: number, pages: Page[]) => Page[]; footer?: (fm: TStruct) => void }): Uint8Array {
  const n = file.length;
  const footerLen = new DataView(file.buffer, file.byteOffset, n).getUint32(n - 8, true);
  const fm = readStruct(file, n - 8 - footerLen, n - 8).value;
  const parts: Uint8Array[] = [PAR1];
  let offset = 4;
  (fm[4] as TStruct[]).forEach((rg, g) => {
    (rg[1] as TStruct[]).forEach((cc, c) => {
      const md = cc[3] as TStruct;
      const dataOff = md[9] as number;
      const dictOff = md[11] as number | undefined;
      let pos = dictOff !== undefined && dictOff >= 4 && dictOff < dataOff ? dictOff : dataOff;
      const end = pos + (md[7] as number);
      let pages: Page[] = [];
      while (pos < end) {
        const { value: h, end: at } = readStruct(file, pos, end);
        const size = h[3] as number;
        pages.push({ h, body: file.subarray(at, at + size) });
        pos = at + size;
      }
      if (edit.pages) pages = edit.pages(g, c, pages);
      const start = offset;
      let firstData: number | undefined;
      delete md[11];
      for (const p of pages) {
        p.h[3] = p.body.length;
        const hb = encode(p.h);
        if (p.h[1] === PageType.DICTIONARY_PAGE) md[11] = offset;
        else firstData ??= offset;
        parts.push(hb, p.body);
        offset += hb.length + p.body.length;
      }
      md[9] = firstData ?? start;
      md[7] = offset - start;
    });
  });
  edit.footer?.(fm);
  const footer = encode(fm);
  const tail = new Uint8Array(8);
  new DataView(tail.buffer).setUint32(0, footer.length, true);
  tail.set(PAR1, 4);
  return new Uint8Array(Buffer.concat([...parts, footer, tail]));
}

function readError(bytes: Uint8Array, request: Array<{ name: string; type: ReturnType<typeof parseType> }>, path: string): LsmError {
  return thrownLsmError(() => readParquet(bytes, request, path));
}

/** Bytes of ArrayBuffers allocated (and still held, garbage or not) while `f` ran. */
function arrayBufferGrowth(f: () => void): number {
  const before = process.memoryUsage().arrayBuffers;
  try {
    f();
  } catch {
    // the caller checks the error separately
  }
  return process.memoryUsage().arrayBuffers - before;
}

const MiB = 1 << 20;

/**
 * A one-row-group, one-column file whose footer num_rows, row group num_rows and chunk num_values
 * all claim `rows`: consistent, so only a check against something outside the footer refuses it.
 */
function claimingRows(file: Uint8Array, rows: number): Uint8Array {
  return rebuild(file, {
    footer: (fm) => {
      fm[3] = rows;
      const rg = (fm[4] as TStruct[])[0]!;
      rg[3] = rows;
      ((rg[1] as TStruct[])[0]![3] as TStruct)[5] = rows;
    },
  });
}

// ---------------------------------------------------------------------------------------------

describe('Parquet counts are checked before they size anything', () => {
  it('the rebuilder writes a file that reads as the original', () => {
    const cols: ParquetColumn[] = [
      { name: 's', fieldId: 1, type: parseType('STRING') },
      { name: 'a', fieldId: 2, type: parseType('ARRAY<INT>') },
    ];
    const values = [Array.from({ length: 50 }, (_, i) => `v${i % 7}`), Array.from({ length: 50 }, (_, i) => (i % 5 === 0 ? null : [i, i + 1]))];
    const good = writeParquet(cols, values, 50, { compression: 'snappy', pageRows: 16 });
    const request = cols.map((c) => ({ name: c.name, type: c.type }));
    expect(readParquet(rebuild(good, {}), request, 'x').columns).toEqual(readParquet(good, request, 'x').columns);
  });

  it("a nested leaf's num_values its pages do not hold is refused before it sizes the level arrays", () => {
    // nested.ts allocated two Uint8Arrays of the footer's num_values (checked against nothing else)
    // before reading a page: a flipped high bit allocated gigabytes.
    const cols: ParquetColumn[] = [{ name: 'a', fieldId: 1, type: parseType('ARRAY<INT>') }];
    const good = writeParquet(cols, [Array.from({ length: 40 }, (_, i) => [i, i])], 40, { compression: 'uncompressed' });
    const bad = rebuild(good, {
      footer: (fm) => {
        const md = ((fm[4] as TStruct[])[0]![1] as TStruct[])[0]![3] as TStruct;
        md[5] = 2 ** 30; // num_values
      },
    });
    const e = readError(bad, [{ name: 'a', type: cols[0]!.type }], '/data/nested.parquet');
    expectCorruption(e, '/data/nested.parquet', /data pages hold 80 values, its metadata says 1073741824/);
  });

  it('a nested dictionary page claiming more values than its bytes hold is refused before the dictionary is allocated', () => {
    const cols: ParquetColumn[] = [{ name: 'a', fieldId: 1, type: parseType('ARRAY<INT>') }];
    const good = writeParquet(cols, [Array.from({ length: 10 }, (_, i) => [i])], 10, { compression: 'uncompressed' });
    const dict: Page = { h: { 1: PageType.DICTIONARY_PAGE, 2: 8, 3: 8, 7: { 1: 2 ** 31 - 1, 2: 0 } }, body: new Uint8Array(8) };
    const bad = rebuild(good, { pages: (_g, _c, pages) => [dict, ...pages] });
    const e = readError(bad, [{ name: 'a', type: cols[0]!.type }], '/data/nested-dict.parquet');
    expectCorruption(e, '/data/nested-dict.parquet', /dictionary of 2147483647 values in 8 bytes/);
  });

  it('a flat dictionary page claiming more values than PLAIN can fit in it is refused before the dictionary is allocated', () => {
    // The bound was 8 values per byte for every type (a BOOLEAN's); a BYTE_ARRAY value takes 4.
    const cols: ParquetColumn[] = [{ name: 's', fieldId: 1, type: parseType('STRING') }];
    const good = writeParquet(cols, [Array.from({ length: 30 }, (_, i) => `value-${i % 3}`)], 30, { compression: 'uncompressed' });
    let usize = 0;
    const bad = rebuild(good, {
      pages: (_g, _c, pages) => {
        const d = pages.find((p) => p.h[1] === PageType.DICTIONARY_PAGE)!;
        usize = d.h[2] as number;
        (d.h[7] as TStruct)[1] = usize * 2;
        return pages;
      },
    });
    const e = readError(bad, [{ name: 's', type: cols[0]!.type }], '/data/dict.parquet');
    expectCorruption(e, '/data/dict.parquet', new RegExp(`dictionary of ${usize * 2} values in ${usize} bytes`));
  });

  it('a gzip page inflating past its header size stops at that size', () => {
    // gunzip ran to the end of the stream (up to 1032 × its bytes) before the size was compared.
    const cols: ParquetColumn[] = [{ name: 'i', fieldId: 1, type: parseType('INT NOT NULL') }];
    const good = writeParquet(cols, [Array.from({ length: 20 }, (_, i) => i)], 20, { compression: 'gzip' });
    const bomb = gzipSync(new Uint8Array(4 * MiB));
    const bad = rebuild(good, {
      pages: (_g, _c, pages) => {
        const p = pages.find((q) => q.h[1] === PageType.DATA_PAGE)!;
        p.body = bomb;
        p.h[4] = crc32(bomb) | 0;
        return pages;
      },
    });
    const e = readError(bad, [{ name: 'i', type: cols[0]!.type }], '/data/gzip.parquet');
    expectCorruption(e, '/data/gzip.parquet', /GZIP decompression failed: Cannot create a Buffer larger than 80 bytes/);
    expect(() => decompress(Codec.GZIP, bomb, 100)).toThrow(CodecError);
    expect(() => decompress(Codec.GZIP, bomb, 100)).toThrow(/larger than 100 bytes/);
  });

  it('a row count no array can hold is a Corruption naming the file, not a bare RangeError', () => {
    // num_rows sizes the result columns; readFooter checks it against the row groups' counts and
    // those against every flat chunk's num_values, so only several consistent fields get here.
    const cols: ParquetColumn[] = [{ name: 'i', fieldId: 1, type: parseType('INT') }];
    const good = writeParquet(cols, [[1, 2, 3]], 3, { compression: 'uncompressed' });
    const bad = claimingRows(good, 2 ** 33);
    for (const request of [[{ name: 'i', type: cols[0]!.type }], [{ name: 'absent', type: cols[0]!.type }]]) {
      expectCorruption(readError(bad, request, '/data/rows.parquet'), '/data/rows.parquet', /Invalid array length/);
    }
  });

  it("a caller's row count (the manifest's) is checked against the footer's before any column is sized", () => {
    // A consistent 2^28-row footer over three real rows: the fill of an absent column alone would
    // be 2 GiB of slots. With the expected count it is refused from the footer.
    const cols: ParquetColumn[] = [{ name: 'i', fieldId: 1, type: parseType('INT') }];
    const good = writeParquet(cols, [[1, 2, 3]], 3, { compression: 'uncompressed' });
    const bad = claimingRows(good, 2 ** 28);
    const absent = [{ name: 'absent', type: cols[0]!.type }];
    expect(readParquet(good, absent, 'ok', 3).columns).toEqual([[null, null, null]]);
    expectCorruption(thrownLsmError(() => readParquet(bad, absent, '/data/rows.parquet', 3)), '/data/rows.parquet', /the footer counts 268435456 rows where 3 were expected/);
    expectCorruption(thrownLsmError(() => readParquet(good, absent, '/data/rows.parquet', 4)), '/data/rows.parquet', /the footer counts 3 rows where 4 were expected/);
  });

  it('PLAIN byte arrays: a count the page cannot hold is refused before the offset arrays', () => {
    const page = new Uint8Array(8); // two empty values
    expect(() => decodePlain(Physical.BYTE_ARRAY, 0, page, 0, 8, 100_000_000)).toThrow(DecodeError);
    expect(() => decodePlain(Physical.BYTE_ARRAY, 0, page, 0, 8, 100_000_000)).toThrow(/PLAIN 100000000 values need 400000000 bytes, page has 8/);
    expect(decodePlain(Physical.BYTE_ARRAY, 0, page, 0, 8, 2).n).toBe(2);
  });

  it("DELTA_BINARY_PACKED: a huge block size does not size the miniblock scratch", () => {
    // header: block size 2^30 (a multiple of 128), 1 miniblock (2^30 values, a multiple of 32),
    // 2 values, first value 7; one block: min delta 1, bit width 0.
    const data = Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x04, 1, 2, 14, 2, 0);
    let got: Int32Array | BigInt64Array | undefined;
    const grew = arrayBufferGrowth(() => (got = decodeDeltaBinaryPacked(data, 0, data.length, 2, false).values));
    expect([...got!]).toEqual([7, 8]);
    expect(grew).toBeLessThan(64 * MiB); // was a 4 GiB scratch array
  });

  it('DELTA_BYTE_ARRAY: prefixes longer than the previous value are refused before they size the output', () => {
    // prefix lengths [0, 2^29] (DELTA_BINARY_PACKED: block 128, 4 miniblocks, 2 values, first 0,
    // min delta 2^29, widths 0), suffix lengths [1, 0] (first 1, min delta -1), suffix bytes 'a'.
    const prefixes = [0x80, 0x01, 4, 2, 0, 0x80, 0x80, 0x80, 0x80, 0x04, 0, 0, 0, 0];
    const suffixes = [0x80, 0x01, 4, 2, 2, 1, 0, 0, 0, 0];
    const page = Uint8Array.from([...prefixes, ...suffixes, 0x61]);
    let err: unknown;
    const grew = arrayBufferGrowth(() => {
      try {
        decodeDeltaByteArray(page, 0, page.length, 2);
      } catch (e) {
        err = e;
      }
    });
    expect(err).toBeInstanceOf(DecodeError);
    expect(String(err)).toMatch(/prefix 536870912 longer than the previous value/);
    expect(grew).toBeLessThan(64 * MiB); // was a 512 MiB output buffer
  });

  it('snappy: a preamble longer than the compressed bytes can decode to is refused before the output is allocated', () => {
    const src = Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x08, 0x00, 0x41); // 2^31 bytes claimed, then the literal 'A'
    expect(() => snappyUncompress(src, 2 ** 31)).toThrow(SnappyError);
    expect(() => snappyUncompress(src, 2 ** 31)).toThrow(/preamble says 2147483648 bytes, 2 compressed bytes cannot hold them/);
    expect([...snappyUncompress(Uint8Array.of(1, 0x00, 0x41), 1)]).toEqual([0x41]);
  });
});

describe('zstd frames are walked before fzstd allocates', () => {
  // One frame: magic, FHD (single segment, 4-byte content size), content size, one last raw block.
  const frame = (content: number, block: number[], rleSize?: number): Uint8Array => {
    const fcs = [content & 0xff, (content >>> 8) & 0xff, (content >>> 16) & 0xff, (content >>> 24) & 0xff];
    const size = rleSize ?? block.length;
    const type = rleSize === undefined ? 0 : 1;
    const bh = (size << 3) | (type << 1) | 1;
    return Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0xa0, ...fcs, bh & 0xff, (bh >>> 8) & 0xff, (bh >>> 16) & 0xff, ...block]);
  };

  it('reads a well-formed frame', () => {
    expect([...decompress(Codec.ZSTD, frame(5, [1, 2, 3, 4, 5]), 5)]).toEqual([1, 2, 3, 4, 5]);
    expect([...zstdDecompressBounded(frame(300, [7], 300), Infinity)]).toEqual(new Array(300).fill(7));
  });

  it('a content size beyond what the blocks can produce, or than the page expects, is refused', () => {
    const damaged = frame(2 ** 31 + 5, [1, 2, 3, 4, 5]); // a flipped top bit in the content size
    expect(() => decompress(Codec.ZSTD, damaged, 5)).toThrow(CodecError);
    expect(() => decompress(Codec.ZSTD, damaged, 5)).toThrow(/declares 2147483653 bytes, its blocks hold at most 5/);
    expect(() => decompress(Codec.ZSTD, frame(300, [7], 300), 200)).toThrow(/declare 300 bytes, more than the 200 expected/);
  });

  it('a window beyond 128 MiB without a content size, or a block beyond 128 KiB, is refused', () => {
    // FHD 0x00: no content size, window descriptor 20 << 3 = a 1 GiB window, one raw block of 1 byte.
    const wide = Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x00, 20 << 3, (1 << 3) | 1, 0, 0, 9);
    expect(() => zstdDecompressBounded(wide, Infinity)).toThrow(/window of 1073741824 bytes/);
    const rle = frame(0, [7], 1 << 20); // an RLE block of 1 MiB; fzstd would fill it
    expect(() => zstdDecompressBounded(rle, Infinity)).toThrow(/block of 1048576 bytes/);
  });
});
