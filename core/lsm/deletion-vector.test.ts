// Deletion vectors (deletion-vector.ts): the byte layout against hand-computed bytes, the
// RoaringBitmap container kinds, CRC and magic checks, and a table read through DVs (level ≥ 1
// files minus deleted positions, level 0 skipped) built with our own encoder.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { expectCorruption, thrownLsmError } from './testing/corruption.ts';
import { decodeDeletionVector, decodeRoaring, DV64_MAGIC, encodeDeletionVectorFile, encodeRoaring } from './deletion-vector.ts';
import { isCorruption, LsmError } from './errors.ts';
import { encodeIndexManifest } from './manifest.ts';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';
import { earlierSchema } from './testing/earlier-schema.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('deletion vector bytes', () => {
  // {1, 3, 65537}: two array containers. Roaring portable, no runs (all LE):
  //   cookie 12346 | count 2 | (key 0, card-1 1) (key 1, card-1 0) | offsets 24, 28 | 1, 3 | 1
  // DV file: version 1 | size 34 (BE) | magic 1581511376 (BE 5e43f2d0) | bitmap | CRC32 (BE).
  const BITMAP = '3a300000' + '02000000' + '00000100' + '01000000' + '18000000' + '1c000000' + '01000300' + '0100';
  const FILE = '01' + '00000022' + '5e43f2d0' + BITMAP + '9521ba2c';

  it('encodes a small bitmap and a DV file byte for byte', () => {
    expect(hex(encodeRoaring([1, 3, 65537]))).toBe(BITMAP);
    const { bytes, ranges } = encodeDeletionVectorFile(new Map([['data-a-0.parquet', [1, 3, 65537]]]));
    expect(hex(bytes)).toBe(FILE);
    expect(ranges).toEqual([{ dataFileName: 'data-a-0.parquet', offset: 1, length: 34, cardinality: 3 }]);
    expect(decodeDeletionVector(Buffer.from(FILE, 'hex'), 1, 34, 'f')).toEqual([1, 3, 65537]);
  });

  it('decodes run containers (cookie 12347) and bitmap containers', () => {
    // {5..9} as one run: cookie 12347 | run flags 0x01 | (key 0, card-1 4) | 1 run: start 5, length-1 4.
    expect(decodeRoaring(Buffer.from('3b300000' + '01' + '00000400' + '0100' + '0500' + '0400', 'hex'), 'f')).toEqual([5, 6, 7, 8, 9]);
    const many = Array.from({ length: 5000 }, (_, i) => i * 3).concat([200_000, 4_000_000_000]);
    // 5000 values under key 0 make a bitmap container; the last two are array containers.
    const enc = encodeRoaring(many);
    expect(decodeRoaring(enc, 'f')).toEqual(many);
    expect(enc.length).toBeGreaterThan(8192); // at least one bitmap container
  });

  it('refuses run containers and headers that claim more positions than they hold, before decoding them', () => {
    // cookie 12347 | run flags | (key 0, card-1) | runs | (start, length-1)…
    const run = (cardMinus1: string, runs: string[]) => Buffer.from('3b300000' + '01' + '0000' + cardMinus1 + runs.length.toString(16).padStart(2, '0') + '00' + runs.join(''), 'hex');
    const fails = (b: Uint8Array, why: RegExp) => expectCorruption(thrownLsmError(() => decodeRoaring(b, 'f')), 'f', why);
    expect(decodeRoaring(run('0400', ['00000100', '03000200']), 'f')).toEqual([0, 1, 3, 4, 5]);
    expect(decodeRoaring(run('0400', ['00000100', '02000200']), 'f')).toEqual([0, 1, 2, 3, 4]); // adjacent runs are not overlap
    // One run of 65,536 positions under a header that says 5: without the check, 65,536 pushes.
    fails(run('0400', ['0000ffff']), /covers 65536 positions, its header says 5/);
    fails(run('0400', ['fcff0400']), /leaves the container/);
    fails(run('0400', ['00000200', '01000000']), /overlaps the previous run/);
    fails(run('0400', ['0000']), /truncated/);
    // 1,600 containers of 65,536 positions each (no run containers: cookie 12346, then n).
    const n = 1600;
    const big = Buffer.alloc(8 + 8 * n);
    big.writeUInt32LE(12346, 0);
    big.writeUInt32LE(n, 4);
    for (let i = 0; i < n; i++) {
      big.writeUInt16LE(i, 8 + 4 * i);
      big.writeUInt16LE(0xffff, 8 + 4 * i + 2);
    }
    fails(big, /claim 104857600 positions/);
  });

  it('rejects CRC, size and magic damage as corruption', () => {
    const good = Buffer.from(FILE, 'hex');
    const flip = (at: number) => {
      const b = Buffer.from(good);
      b[at]! ^= 1;
      return b;
    };
    for (const at of [9, good.length - 1]) {
      let err: unknown;
      try {
        decodeDeletionVector(flip(at), 1, 34, 'idx');
      } catch (e) {
        err = e;
      }
      expect(isCorruption(err)).toBe(true);
      expect((err as Error).message).toMatch(/CRC32 mismatch/);
    }
    expect(() => decodeDeletionVector(good, 1, 33, 'idx')).toThrow(/size 34/);
    expect(() => decodeDeletionVector(flip(0), 1, 34, 'idx')).toThrow(/version/);
  });

  it("refuses Java's 64-bit vector as not supported, not as a damaged file", () => {
    // Bitmap64DeletionVector.serializeTo: int32 BE length | LE magic + roaring64 (empty: a LE int64
    // count of 0) | int32 BE CRC32; it returns length + 8, which the index manifest records.
    const bitmap = new Uint8Array(12);
    new DataView(bitmap.buffer).setInt32(0, DV64_MAGIC, true);
    const file = Buffer.alloc(1 + 4 + bitmap.length + 4);
    file[0] = 1;
    file.writeInt32BE(bitmap.length, 1);
    file.set(bitmap, 5);
    file.writeUInt32BE(crc32(bitmap) >>> 0, 5 + bitmap.length);
    for (const length of [bitmap.length + 8, bitmap.length]) {
      const err = thrownLsmError(() => decodeDeletionVector(file, 1, length, 'idx'));
      expect(err.kind, err.message).toBe('NotSupported'); // was Corruption ("runs past the file") for the length Java records
      expect(err.message).toMatch(/bitmap64/);
    }
  });
});

describe('reading a deletion-vector table', () => {
  it('reads level ≥ 1 files minus deleted positions and skips level 0', () => {
    const d = mkdtempSync(join(tmpdir(), 'lsm-dv-'));
    dirs.push(d);
    const c = new Catalog(d);
    c.createDatabase('db');
    const t = c.createTable({ database: 'db', table: 't' }, { fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1', 'write-only': 'true' } });
    const w = t.newWriter();
    for (let k = 0; k < 10; k++) w.write([k, `v${k}`]);
    w.commit();
    w.compact(true);
    w.write([100, 'level0']);
    w.write([3, 'newer, but at level 0']);
    w.commit();
    w.close();
    const snapshot = t.latestSnapshot()!;
    const top = t.manifests.liveFiles(snapshot).find((e) => e.file.level > 0)!;
    // Positions 2 and 5 of the level-5 file are deleted.
    const { bytes, ranges } = encodeDeletionVectorFile(new Map([[top.file.fileName, [2, 5]]]));
    mkdirSync(join(t.paths.root, 'index'), { recursive: true });
    writeFileSync(join(t.paths.root, 'index', 'index-dv-0'), bytes);
    const im = encodeIndexManifest(
      [{ kind: 0, partition: top.partition, bucket: top.bucket, indexType: 'DELETION_VECTORS', fileName: 'index-dv-0', fileSize: bytes.length, rowCount: 2, dvRanges: ranges, externalPath: null }],
      'deflate',
    );
    writeFileSync(t.paths.manifestFile('index-manifest-test-0'), im);
    const snapFile = t.paths.snapshotFile(snapshot.id);
    const json = JSON.parse(readFileSync(snapFile, 'utf8'));
    json.indexManifest = 'index-manifest-test-0';
    writeFileSync(snapFile, JSON.stringify(json));
    const schema = JSON.parse(readFileSync(t.paths.schemaFile(0), 'utf8'));
    schema.id = 1;
    schema.options['deletion-vectors.enabled'] = 'true';
    writeFileSync(t.paths.schemaFile(1), JSON.stringify(schema));

    const dv = Table.open(t.paths.root);
    expect(dv.scanRows()).toEqual([0, 1, 3, 4, 6, 7, 8, 9].map((k) => [k, `v${k}`]));
    const r = dv.reader();
    expect(r.get({ k: 2 })).toBeUndefined();
    expect(r.get({ k: 3 })).toEqual([3, 'v3']);
    expect(r.get({ k: 100 })).toBeUndefined();
    r.close();

    // A damaged DV file is a corruption, not silently ignored.
    const damaged = Buffer.from(bytes);
    damaged[damaged.length - 1]! ^= 1;
    writeFileSync(join(t.paths.root, 'index', 'index-dv-0'), damaged);
    let err: unknown;
    try {
      Table.open(t.paths.root).scanRows();
    } catch (e) {
      err = e;
    }
    expect(isCorruption(err)).toBe(true);
  });

  it('creates tables of every merge engine but first-row with deletion-vectors.enabled, and refuses at creation what dv-writer.ts cannot keep', () => {
    const spec = (options: Record<string, string>) => ({ fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { 'deletion-vectors.enabled': 'true', bucket: '1', ...options } });
    expect(TableSchema.fromSpec(spec({}), 0).options.raw['deletion-vectors.enabled']).toBe('true');
    const d = mkdtempSync(join(tmpdir(), 'lsm-dv-'));
    dirs.push(d);
    const c = new Catalog(d);
    c.createDatabase('db');
    c.createTable({ database: 'db', table: 'dedup' }, spec({})).newWriter().close();
    for (const engine of ['partial-update', 'aggregation']) c.createTable({ database: 'db', table: engine.replace('-', '_') }, spec({ 'merge-engine': engine })).newWriter().close();
    // first-row: Paimon refuses the pair (dv-refused-pairs.test.ts); one an earlier version made is written.
    expect(() => TableSchema.fromSpec(spec({ 'merge-engine': 'first-row' }), 0)).toThrow(/Paimon refuses the pair/);
    c.createTable({ database: 'db', table: 'first_row' }, earlierSchema(spec({ 'merge-engine': 'first-row' }))).newWriter().close();
    c.createTable({ database: 'db', table: 'seq' }, spec({ 'sequence.field': 'v', 'changelog-producer': 'lookup' })).newWriter().close();
    let err: unknown;
    try {
      c.createTable({ database: 'db', table: 'b64' }, spec({ 'deletion-vectors.bitmap64': 'true' }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LsmError);
    expect(['NotSupported', 'InvalidArgument']).toContain((err as LsmError).kind); // an option not declared, or refused by dvWriteRefusal
    expect((err as Error).message).toMatch(/bitmap64/);
    expect(c.tableExists({ database: 'db', table: 'b64' })).toBe(false);
  });
});
