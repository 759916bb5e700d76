// Counts and sizes read from Avro files (data files and manifests) must be checked against the
// bytes before they size an allocation or drive a loop: a damaged one is a Corruption naming the
// file, raised before anything is allocated. Each case is a count that once sized an allocation
// unchecked; the assertions pin the error the check raises (a later, different error — or a crash
// — means the allocation happened first).

import { spawnSync } from 'node:child_process';
import { crc32 } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expectCorruption, thrownLsmError } from '../testing/corruption.ts';
import { parseType } from '../types.ts';
import { readAvroContainer } from './avro-container.ts';
import { avroDataSchema, readAvroData, writeAvroData, type AvroDataColumn } from './avro-data.ts';

const SYNC = new Uint8Array(16).fill(0xab);

function long(v: number): number[] {
  const out: number[] = [];
  let n = v >= 0 ? v * 2 : -v * 2 - 1;
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
}

function bytesOf(b: Uint8Array | number[]): number[] {
  return [...long(b.length), ...b];
}

/** A container file: header (schema, codec) and the given blocks, each framed and followed by the sync. */
function container(schema: object, codec: string, blocks: Array<{ n: number; data: number[] | Uint8Array }>): Uint8Array {
  const out: number[] = [0x4f, 0x62, 0x6a, 0x01, ...long(2)];
  out.push(...bytesOf(Buffer.from('avro.schema')), ...bytesOf(Buffer.from(JSON.stringify(schema))));
  out.push(...bytesOf(Buffer.from('avro.codec')), ...bytesOf(Buffer.from(codec)));
  out.push(...long(0), ...SYNC);
  for (const b of blocks) out.push(...long(b.n), ...long(b.data.length), ...b.data, ...SYNC);
  return Uint8Array.from(out);
}

/** A snappy block as Avro frames it: raw snappy, then the big-endian CRC32 of the uncompressed bytes. */
function snappyBlock(raw: number[]): number[] {
  const crc = crc32(Uint8Array.from([])) >>> 0;
  return [...raw, crc >>> 24, (crc >>> 16) & 0xff, (crc >>> 8) & 0xff, crc & 0xff];
}
/** A snappy stream claiming 2^30 bytes (a flipped bit in the preamble), holding the literal 'A'. */
const HUGE_SNAPPY = [0x80, 0x80, 0x80, 0x80, 0x04, 0x00, 0x41];

/** A zstd frame (single segment, 4-byte content size) with one raw block holding `data`. */
function zstdFrame(content: number, data: number[]): number[] {
  const bh = (data.length << 3) | 1;
  return [0x28, 0xb5, 0x2f, 0xfd, 0xa0, content & 0xff, (content >>> 8) & 0xff, (content >>> 16) & 0xff, (content >>> 24) & 0xff, bh & 0xff, (bh >>> 8) & 0xff, (bh >>> 16) & 0xff, ...data];
}

const INT: AvroDataColumn[] = [{ name: 'i', type: parseType('INT NOT NULL') }];
const INT_SCHEMA = avroDataSchema(INT);

describe('Avro data files: counts are checked before they size anything', () => {
  it('a block claiming more records than its bytes is refused before the loop', () => {
    // Ten one-byte INT records; the block header claims 1000.
    const file = container(INT_SCHEMA, 'null', [{ n: 1000, data: new Array(10).fill(2) }]);
    expect(readAvroData(container(INT_SCHEMA, 'null', [{ n: 10, data: new Array(10).fill(2) }]), INT, 'ok').columns).toEqual([new Array(10).fill(1)]);
    expectCorruption(thrownLsmError(() => readAvroData(file, INT, '/data/count.avro')), '/data/count.avro', /a block claims 1000 records in 10 bytes/);
  });

  it('a varint beyond 2^53 (which a number would round) is a Corruption, in data files and manifests alike', () => {
    // zigzag(2^60) = 2^61: eight continuation bytes and 0x20.
    const huge = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20];
    expectCorruption(thrownLsmError(() => readAvroData(container(INT_SCHEMA, 'null', [{ n: 1, data: huge }]), INT, '/data/big.avro')), '/data/big.avro', /varint beyond 2\^53/);
    const schema = { type: 'record', name: 'r', fields: [{ name: 'id', type: 'long' }] };
    expectCorruption(thrownLsmError(() => readAvroContainer(Uint8Array.from(container(schema, 'null', [{ n: 1, data: huge }])), '/m/manifest-1')), '/m/manifest-1', /varint beyond 2\^53/);
  });

  it("a caller's record count (the manifest's) is checked against the block headers before any column is sized", () => {
    const file = container(INT_SCHEMA, 'null', [{ n: 10, data: new Array(10).fill(2) }]);
    expect(readAvroData(file, INT, 'ok', 10).rowCount).toBe(10);
    expectCorruption(thrownLsmError(() => readAvroData(file, INT, '/data/count.avro', 11)), '/data/count.avro', /the block headers count 10 records where 11 were expected/);
  });

  it('a file whose rows compress below a byte each still reads whole (its columns grow past the presize)', () => {
    const rows = 200_000;
    const cols: AvroDataColumn[] = [...INT, { name: 's', type: parseType('STRING') }];
    const file = writeAvroData(cols, [new Array(rows).fill(0), new Array(rows).fill(null)], rows, 'deflate');
    expect(file.length).toBeLessThan(rows / 10);
    const back = readAvroData(file, [...cols, { name: 'absent', type: parseType('INT') }], 'ok');
    expect(back.rowCount).toBe(rows);
    expect(back.columns.map((c) => c.length)).toEqual([rows, rows, rows]);
    expect(back.columns[0]!.every((v) => v === 0) && back.columns[1]!.every((v) => v === null) && back.columns[2]!.every((v) => v === null)).toBe(true);
  });

  it('a block count of 33 M does not size the columns (run in a child with a 96 MB heap)', () => {
    // The block headers' counts sized `new Array(total)` per column before any block was decoded:
    // 33 M slots are 264 MB a column, past this child's heap, so an unchecked count ends the process.
    const two: AvroDataColumn[] = [...INT, { name: 'j', type: parseType('INT NOT NULL') }];
    const file = container(avroDataSchema(two), 'null', [{ n: 33_000_000, data: new Array(20).fill(2) }]);
    const here = fileURLToPath(new URL('.', import.meta.url));
    const code = `
      import { readFileSync } from 'node:fs';
      const { readAvroData } = await import(${JSON.stringify(`${here}avro-data.ts`)});
      const { parseType } = await import(${JSON.stringify(`${here}../types.ts`)});
      try {
        const t = parseType('INT NOT NULL');
        readAvroData(new Uint8Array(readFileSync(0)), [{ name: 'i', type: t }, { name: 'j', type: t }], '/data/huge-count.avro');
        console.log(JSON.stringify({ read: true }));
      } catch (e) {
        console.log(JSON.stringify({ kind: e.kind, path: e.path, message: e.message }));
      }`;
    const r = spawnSync(process.execPath, ['--max-old-space-size=96', '--import', 'tsx', '--input-type=module', '-e', code], { input: file, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, `child exited ${r.status} ${r.signal ?? ''}: ${r.stderr.slice(0, 500)}`).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { kind: string; path: string; message: string };
    expect(out.kind).toBe('Corruption');
    expect(out.path).toBe('/data/huge-count.avro');
    expect(out.message).toMatch(/a block claims 33000000 records in 20 bytes/);
  });

  it('an array or map block claiming more items than bytes remain is refused before the loop (read and skipped)', () => {
    const cols: AvroDataColumn[] = [
      { name: 'a', type: parseType('ARRAY<INT NOT NULL> NOT NULL') },
      { name: 'm', type: parseType('MAP<STRING NOT NULL, INT NOT NULL> NOT NULL') },
    ];
    const schema = avroDataSchema(cols);
    const good = [...long(3), 2, 4, 6, 0, ...long(1), 2, 0x6b, 2, 0];
    expect(readAvroData(container(schema, 'null', [{ n: 1, data: good }]), cols, 'ok').columns).toEqual([[[1, 2, 3]], [new Map([['k', 1]])]]);
    const damaged = [
      [...long(2 ** 40), 2, 4, 6, 0, ...long(1), 2, 0x6b, 2, 0], // the array's count
      [...long(3), 2, 4, 6, 0, ...long(2 ** 40), 2, 0x6b, 2, 0], // the map's count
    ];
    for (const data of damaged) {
      const file = container(schema, 'null', [{ n: 1, data }]);
      expectCorruption(thrownLsmError(() => readAvroData(file, cols, '/data/nested.avro')), '/data/nested.avro', /block claims 1099511627776 items in the \d+ bytes left/);
      // Neither column requested: both are skipped, through the same check.
      expectCorruption(thrownLsmError(() => readAvroData(file, INT, '/data/nested.avro')), '/data/nested.avro', /block claims 1099511627776 items in the \d+ bytes left/);
    }
  });

  it('a snappy preamble longer than its block can decode to is refused before the output is allocated', () => {
    const file = container(INT_SCHEMA, 'snappy', [{ n: 1, data: snappyBlock(HUGE_SNAPPY) }]);
    expectCorruption(thrownLsmError(() => readAvroData(file, INT, '/data/snappy.avro')), '/data/snappy.avro', /preamble says 1073741824 bytes, 2 compressed bytes cannot hold them/);
  });

  it('a zstd frame declaring more content than its blocks hold is refused before fzstd allocates it', () => {
    const records = [2, 4, 6, 8, 10];
    expect(readAvroData(container(INT_SCHEMA, 'zstandard', [{ n: 5, data: zstdFrame(5, records) }]), INT, 'ok').columns).toEqual([[1, 2, 3, 4, 5]]);
    const file = container(INT_SCHEMA, 'zstandard', [{ n: 5, data: zstdFrame(2 ** 31 + 5, records) }]);
    expectCorruption(thrownLsmError(() => readAvroData(file, INT, '/data/zstd.avro')), '/data/zstd.avro', /declares 2147483653 bytes, its blocks hold at most 5/);
  });
});

describe('Avro container files (manifests): decompressed sizes are checked before they are allocated', () => {
  const schema = { type: 'record', name: 'r', fields: [{ name: 'id', type: 'long' }] };

  it('a snappy preamble longer than its block can decode to', () => {
    const file = container(schema, 'snappy', [{ n: 1, data: snappyBlock(HUGE_SNAPPY) }]);
    expectCorruption(thrownLsmError(() => readAvroContainer(file, '/meta/manifest-snappy')), '/meta/manifest-snappy', /preamble says 1073741824 bytes, 2 compressed bytes cannot hold them/);
  });

  it('a zstd frame declaring more content than its blocks hold', () => {
    expect(readAvroContainer(Uint8Array.from(container(schema, 'zstandard', [{ n: 1, data: zstdFrame(1, [14]) }])), 'ok').records).toEqual([{ id: 7 }]);
    const file = container(schema, 'zstandard', [{ n: 1, data: zstdFrame(2 ** 31 + 1, [14]) }]);
    expectCorruption(thrownLsmError(() => readAvroContainer(file, '/meta/manifest-zstd')), '/meta/manifest-zstd', /declares 2147483649 bytes, its blocks hold at most 1/);
  });

  it("a codec name the Avro specification does not define is a damaged header (Corruption); one it defines that this reader lacks is NotSupported", () => {
    const ten = { n: 10, data: new Array(10).fill(2) };
    // 'deflate' with one bit flipped ('d' 0x64 → 'e' 0x65).
    expectCorruption(thrownLsmError(() => readAvroData(container(INT_SCHEMA, 'eeflate', [ten]), INT, '/data/codec.avro')), '/data/codec.avro', /names codec "eeflate", which the Avro specification does not define/);
    const schema = { type: 'record', name: 'r', fields: [{ name: 'id', type: 'long' }] };
    expectCorruption(thrownLsmError(() => readAvroContainer(Uint8Array.from(container(schema, 'snapp\u0079\u0000', [])), '/m/manifest-2')), '/m/manifest-2', /does not define/);
    const lacking = thrownLsmError(() => readAvroData(container(INT_SCHEMA, 'bzip2', [ten]), INT, '/data/bz.avro'));
    expect([lacking.kind, lacking.message]).toEqual(['NotSupported', "Avro codec 'bzip2' in /data/bz.avro is not supported"]);
  });
});
