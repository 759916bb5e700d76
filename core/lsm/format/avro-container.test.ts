import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type * as Avsc from 'avsc';
import { describe, expect, it } from 'vitest';
import { isCorruption } from '../errors.ts';
import { readAvroContainer, writeAvroContainer, type AvroWriteCodec } from './avro-container.ts';
import { PAIMON_FIXTURES, paimonFixturesAvailable } from '../testing/shared.ts';

const FIX = PAIMON_FIXTURES;
const haveFixtures = paimonFixturesAvailable('the avro-container fixture tests');

const schema = {
  type: 'record',
  name: 'record',
  namespace: 'org.apache.paimon.avro.generated',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'name', type: 'string' },
    { name: 'blob', type: ['null', 'bytes'], default: null },
    { name: 'ts', type: ['null', { type: 'long', logicalType: 'timestamp-millis' }], default: null },
  ],
};
const rows = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: i * 1_000_003, name: `row-${i}-${'x'.repeat(i % 50)}`, blob: i % 3 ? null : Buffer.from([i & 255, 1, 2]), ts: i % 2 ? 1_700_000_000_000 + i : null }));

function walk(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

describe('Avro container files', () => {
  it.each(['null', 'deflate', 'snappy'] as AvroWriteCodec[])('round-trips with codec %s, across several blocks', (codec) => {
    const recs = rows(5000);
    const bytes = writeAvroContainer(schema, recs, codec);
    const back = readAvroContainer(bytes, 'mem');
    expect(back.codec).toBe(codec);
    expect(back.schema).toEqual(schema);
    expect(back.records.map((r) => ({ ...(r as object) }))).toEqual(recs);
  });

  it('writes an empty file (header only) that reads back as zero records', () => {
    const bytes = writeAvroContainer(schema, [], 'deflate');
    expect(readAvroContainer(bytes, 'mem').records).toEqual([]);
  });

  it('is readable by avsc\'s own block decoder', async () => {
    const avsc = createRequire(import.meta.url)('avsc') as typeof Avsc;
    for (const codec of ['null', 'deflate'] as AvroWriteCodec[]) {
      const recs = rows(300);
      const bytes = writeAvroContainer(schema, recs, codec);
      const decoder = new avsc.streams.BlockDecoder();
      const got: unknown[] = [];
      await new Promise<void>((resolve, reject) => {
        decoder.on('data', (r: unknown) => got.push(r)).on('end', resolve).on('error', reject);
        decoder.end(Buffer.from(bytes));
      });
      expect(got.map((r) => ({ ...(r as object) }))).toEqual(recs);
    }
  });

  it('reports damaged files as corruption', () => {
    const bytes = writeAvroContainer(schema, rows(20), 'snappy');
    const expectCorrupt = (b: Uint8Array) => {
      try {
        readAvroContainer(b, 'damaged');
      } catch (e) {
        expect(isCorruption(e)).toBe(true);
        return;
      }
      throw new Error('expected a corruption');
    };
    const badSync = bytes.slice();
    badSync[badSync.length - 1]! ^= 0xff;
    expectCorrupt(badSync);
    expectCorrupt(bytes.slice(0, bytes.length - 20)); // truncated
    const badData = bytes.slice();
    badData[badData.length - 30]! ^= 0x55; // inside the compressed block: CRC or snappy failure
    expectCorrupt(badData);
    expectCorrupt(new TextEncoder().encode('ORC\x11not avro'));
    expectCorrupt(new Uint8Array(0));
  });

  it('reports an array block claiming more items than its bytes as corruption, without building them', () => {
    // A flipped bit in a manifest's array count once made avsc grow an array to 175 M items and V8
    // abort the process. Here: a block whose one record's array claims 200 M longs in 3 bytes.
    const arraySchema = { type: 'record', name: 'r', fields: [{ name: 'a', type: { type: 'array', items: 'long' } }, { name: 'm', type: { type: 'map', values: 'string' } }] };
    const good = writeAvroContainer(arraySchema, [{ a: [1, 2, 3], m: { k: 'v' } }], 'null');
    expect(readAvroContainer(good, 'good').records).toEqual([{ a: [1, 2, 3], m: { k: 'v' } }]);
    const header = writeAvroContainer(arraySchema, [], 'null'); // magic, metadata, sync marker
    const sync = header.subarray(header.length - 16);
    const zigzag = (v: number): number[] => {
      const out: number[] = [];
      let n = v * 2;
      while (n >= 0x80) {
        out.push((n % 0x80) | 0x80);
        n = Math.floor(n / 0x80);
      }
      out.push(n);
      return out;
    };
    for (const data of [
      [...zigzag(200_000_000), 2, 4, 6, 0, 0], // the array's count
      [0, ...zigzag(100_000_000), 2, 0x6b, 2, 0x76, 0], // the map's count
    ]) {
      const file = Buffer.concat([header, Buffer.from([...zigzag(1), ...zigzag(data.length), ...data]), sync]);
      let err: unknown;
      try {
        readAvroContainer(file, 'damaged-manifest');
      } catch (e) {
        err = e;
      }
      expect(isCorruption(err), String(err)).toBe(true);
      expect(String((err as Error).message)).toMatch(/damaged-manifest.*claims \d+ items/);
    }
  });

  it('refuses records that do not match the schema', () => {
    expect(() => writeAvroContainer(schema, [{ id: 'x', name: 1 }], 'null')).toThrow(/does not match/);
  });
});

describe.skipIf(!haveFixtures)('Avro container files written by Java Paimon', () => {
  it('reads every fixture manifest (zstandard and snappy codecs, wrapped and bare records)', () => {
    const files = walk(FIX).filter((p) => /manifest/.test(p.split('/').pop()!) && !p.includes('orc-manifests'));
    expect(files.length).toBeGreaterThan(25);
    const codecs = new Set<string>();
    for (const p of files) {
      const c = readAvroContainer(new Uint8Array(readFileSync(p)), p);
      codecs.add(c.codec);
      for (const r of c.records) expect(r).toBeTypeOf('object');
    }
    expect([...codecs].sort()).toEqual(['snappy', 'zstandard']);
  });
});
