import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as Avsc from 'avsc';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { deserializeBinaryRow, EMPTY_SERIALIZED_ROW, encodeBinaryRow, serializeBinaryRow } from './binary-row.ts';
import { bucketOf } from './bucket.ts';
import { isCorruption, LsmError } from './errors.ts';
import { readAvroContainer } from './format/avro-container.ts';
import {
  decodeIndexManifest,
  decodeManifest,
  decodeManifestList,
  emptyStats,
  encodeIndexManifest,
  encodeManifest,
  encodeManifestList,
  liveEntries,
  mergeEntries,
  type DataFileMeta,
  type IndexManifestEntry,
  type ManifestEntry,
  type ManifestFileMeta,
} from './manifest.ts';
import { partitionPath } from './partition-path.ts';
import { snapshotFromJson, snapshotToJson } from './snapshot.ts';
import { parseType } from './types.ts';
import { PAIMON_FIXTURES, paimonCheck, paimonCheckAvailable, paimonFixturesAvailable } from './testing/shared.ts';

const FIX = PAIMON_FIXTURES;
const MOR = `${FIX}/java13-pk-parquet-mor-partitioned-2buckets`;
const haveFixtures = paimonFixturesAvailable('the manifest fixture tests');
const havePaimonCheck = paimonCheckAvailable('the paimon-check test of a hand-built table');

const avsc = createRequire(import.meta.url)('avsc') as typeof Avsc;
const read = (p: string) => new Uint8Array(readFileSync(p));
const T = (...s: string[]) => s.map(parseType);
function walk(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}
const isList = (p: string) => p.split('/').pop()!.includes('manifest-list') || p.split('/').pop()!.includes('_list_');
const fixtureManifests = () =>
  haveFixtures
    ? [...walk(`${FIX}/legacy-manifests`), ...readdirSync(FIX).filter((d) => d.startsWith('java13-')).flatMap((d) => walk(`${FIX}/${d}/manifest`))]
    : [];

function fileMeta(over: Partial<DataFileMeta> = {}): DataFileMeta {
  return {
    fileName: 'data-x-0.parquet', fileSize: 100, rowCount: 2,
    minKey: serializeBinaryRow(T('INT'), [1]), maxKey: serializeBinaryRow(T('INT'), [2]),
    keyStats: emptyStats(), valueStats: emptyStats(),
    minSequenceNumber: 0, maxSequenceNumber: 1, schemaId: 0, level: 0, extraFiles: [],
    creationTime: 1_700_000_000_000, deleteRowCount: 0, embeddedIndex: null, fileSource: 0,
    valueStatsCols: [], externalPath: null, firstRowId: null, writeCols: null, ...over,
  };
}
const entry = (kind: 0 | 1, over: Partial<DataFileMeta> = {}, bucket = 0): ManifestEntry => ({
  kind, partition: EMPTY_SERIALIZED_ROW, bucket, totalBuckets: 2, file: fileMeta(over),
});

/** Decodes container bytes with avsc's block decoder and a reader schema (schema resolution by field name). */
async function avscDecode(bytes: Uint8Array, readerSchema: object): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  const dec = new avsc.streams.BlockDecoder({ readerSchema: readerSchema as Avsc.Schema });
  await new Promise<void>((resolve, reject) => {
    dec.on('data', (r: Record<string, unknown>) => out.push(r)).on('end', resolve).on('error', reject);
    dec.end(Buffer.from(bytes));
  });
  return out;
}

describe.skipIf(!haveFixtures)('decoding Java-written manifests', () => {
  it('decodes every legacy and java13 manifest and manifest list, and re-encodes them losslessly', () => {
    const files = fixtureManifests();
    expect(files.length).toBeGreaterThanOrEqual(30);
    for (const p of files) {
      for (const codec of ['null', 'deflate', 'snappy'] as const) {
        if (isList(p)) {
          const metas = decodeManifestList(read(p), p);
          expect(decodeManifestList(encodeManifestList(metas, codec), p)).toEqual(metas);
        } else {
          const entries = decodeManifest(read(p), p);
          expect(entries.length).toBeGreaterThan(0);
          expect(decodeManifest(encodeManifest(entries, codec), p)).toEqual(entries);
        }
      }
    }
  });

  it('reads the 0.9 null-wrapped manifest and the 1.1 manifest', () => {
    const p9 = `${FIX}/legacy-manifests/paimon-cpp-avro-manifest/avro_manifest_09`;
    const [e9] = decodeManifest(read(p9), p9);
    expect(e9).toMatchObject({ kind: 0, bucket: 0, totalBuckets: -1 });
    expect(e9!.file).toMatchObject({ fileName: 'data-dd28db13-0f8f-43a5-a0df-684e7dc93c55-0.avro', fileSize: 1625, rowCount: 3, valueStatsCols: null, externalPath: null, firstRowId: null, writeCols: null });
    const l9 = `${FIX}/legacy-manifests/paimon-cpp-avro-manifest/avro_manifest_list_09`;
    expect(decodeManifestList(read(l9), l9)).toEqual([
      expect.objectContaining({ fileName: 'manifest-b09d5588-5614-46e2-b441-f196d29e60dc-0', fileSize: 2010, numAddedFiles: 1, minBucket: null, maxRowId: null }),
    ]);
    const l11 = `${FIX}/legacy-manifests/paimon-cpp-avro-manifest/avro_manifest_list_11`;
    expect(decodeManifestList(read(l11), l11)[0]).toMatchObject({ fileSize: 2081, minBucket: 0, maxBucket: 0, minLevel: 0, maxLevel: 0 });
  });

  it('reads the 0.8-era snappy manifest without _FILE_SOURCE', () => {
    const dir = `${FIX}/legacy-manifests/paimon-rust-0.8era`;
    const m = walk(dir).find((p) => !isList(p))!;
    const entries = decodeManifest(read(m), m);
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({ kind: 1, bucket: 1, totalBuckets: 10 });
    expect(entries[0]!.file).toMatchObject({ fileName: 'f1.parquet', fileSize: 10, rowCount: 100, fileSource: null });
    expect(entries[0]!.file.keyStats.nullCounts).toEqual([1, 2]);
    const l = walk(dir).find(isList)!;
    expect(decodeManifestList(read(l), l)[0]).toMatchObject({ numAddedFiles: 10, numDeletedFiles: 10, schemaId: 1 });
  });

  it('merges the mor fixture snapshot 5 into files that exist on disk with their exact sizes', () => {
    const snap = snapshotFromJson(readFileSync(`${MOR}/snapshot/snapshot-5`, 'utf8'), 'snapshot-5');
    const entries: ManifestEntry[] = [];
    for (const list of [snap.baseManifestList, snap.deltaManifestList]) {
      const lp = `${MOR}/manifest/${list}`;
      for (const meta of decodeManifestList(read(lp), lp)) {
        const mp = `${MOR}/manifest/${meta.fileName}`;
        expect(statSync(mp).size).toBe(meta.fileSize);
        entries.push(...decodeManifest(read(mp), mp));
      }
    }
    const live = liveEntries(entries, 'mor snapshot 5');
    expect(live).toHaveLength(6); // 8 files on disk: two level-0 files were compacted away in snapshot 3
    const partFields = [{ id: 1, name: 'f1', type: parseType('INT NOT NULL') }];
    const keyTypes = T('STRING NOT NULL', 'INT NOT NULL');
    const parts = new Set<number>();
    let rows = 0;
    for (const e of live) {
      const [f1] = deserializeBinaryRow([partFields[0]!.type], e.partition, 'p') as [number];
      parts.add(f1);
      const file = `${MOR}/${partitionPath(partFields, [f1])}/bucket-${e.bucket}/${e.file.fileName}`;
      expect(statSync(file).size).toBe(e.file.fileSize);
      expect(e.totalBuckets).toBe(2);
      const [minF0, minF2] = deserializeBinaryRow(keyTypes, e.file.minKey, 'k') as [string, number];
      const [, maxF2] = deserializeBinaryRow(keyTypes, e.file.maxKey, 'k') as [string, number];
      expect(typeof minF0).toBe('string');
      // The bucket key is f2: every file's keys hash to its bucket (f2=1 → 0, f2=0 → 1).
      expect(bucketOf(encodeBinaryRow(T('INT NOT NULL'), [minF2]), 2)).toBe(e.bucket);
      expect(bucketOf(encodeBinaryRow(T('INT NOT NULL'), [maxF2]), 2)).toBe(e.bucket);
      rows += e.file.rowCount;
    }
    expect([...parts].sort()).toEqual([10, 20]);
    expect(rows).toBe(snap.totalRecordCount);
  });

  it('refuses ORC manifests with notSupported', () => {
    const dir = `${FIX}/java-legacy-pk-orc-data-orc-manifests/manifest`;
    for (const n of readdirSync(dir)) {
      const p = `${dir}/${n}`;
      const decode = n.startsWith('manifest-list') ? () => decodeManifestList(read(p), p) : () => decodeManifest(read(p), p);
      expect(decode).toThrow(LsmError);
      expect(decode).toThrow(/manifests in ORC are not supported/);
      try {
        decode();
      } catch (e) {
        expect((e as LsmError).kind).toBe('NotSupported');
      }
    }
  });

  it('writes manifests that decode with Paimon 0.9 and 1.1 reader schemas (avsc schema resolution)', async () => {
    const entries = decodeManifest(read(`${MOR}/manifest/manifest-daefb1fa-3081-4c75-aabf-66cd37e05e33-2`), 'm');
    const ours = encodeManifest(entries, 'deflate');
    for (const name of ['avro_manifest_09', 'avro_manifest_11']) {
      const reader = readAvroContainer(read(`${FIX}/legacy-manifests/paimon-cpp-avro-manifest/${name}`), name).schema;
      const got = await avscDecode(ours, reader);
      expect(got.map((r) => (r['_FILE'] as Record<string, unknown>)['_FILE_NAME'])).toEqual(entries.map((e) => e.file.fileName));
      expect(got.map((r) => r['_KIND'])).toEqual(entries.map((e) => e.kind));
    }
    const metas = decodeManifestList(read(`${MOR}/manifest/manifest-list-4fb9862a-a140-4fe1-aa62-aeeedca8f890-4`), 'l');
    for (const name of ['avro_manifest_list_09', 'avro_manifest_list_11']) {
      const reader = readAvroContainer(read(`${FIX}/legacy-manifests/paimon-cpp-avro-manifest/${name}`), name).schema;
      const got = await avscDecode(encodeManifestList(metas, 'null'), reader);
      expect(got.map((r) => r['_FILE_SIZE'])).toEqual(metas.map((m) => m.fileSize));
    }
  });
});

describe('manifest encoding and merging', () => {
  it('writes Java 1.x field names and record names', () => {
    const { schema } = readAvroContainer(encodeManifest([entry(0)], 'null'), 'm') as { schema: { name: string; namespace: string; fields: Array<{ name: string; type: { name: string; fields: Array<{ name: string }> } }> } };
    expect(schema.name).toBe('record');
    expect(schema.namespace).toBe('org.apache.paimon.avro.generated');
    expect(schema.fields.map((f) => f.name)).toEqual(['_VERSION', '_KIND', '_PARTITION', '_BUCKET', '_TOTAL_BUCKETS', '_FILE']);
    const file = schema.fields[5]!.type;
    expect(file.name).toBe('record__FILE');
    expect(file.fields.map((f) => f.name)).toEqual([
      '_FILE_NAME', '_FILE_SIZE', '_ROW_COUNT', '_MIN_KEY', '_MAX_KEY', '_KEY_STATS', '_VALUE_STATS', '_MIN_SEQUENCE_NUMBER',
      '_MAX_SEQUENCE_NUMBER', '_SCHEMA_ID', '_LEVEL', '_EXTRA_FILES', '_CREATION_TIME', '_DELETE_ROW_COUNT', '_EMBEDDED_FILE_INDEX',
      '_FILE_SOURCE', '_VALUE_STATS_COLS', '_EXTERNAL_PATH', '_FIRST_ROW_ID', '_WRITE_COLS',
    ]);
    const list = readAvroContainer(encodeManifestList([], 'null'), 'l').schema as { fields: Array<{ name: string }> };
    expect(list.fields.map((f) => f.name).slice(-6)).toEqual(['_MIN_BUCKET', '_MAX_BUCKET', '_MIN_LEVEL', '_MAX_LEVEL', '_MIN_ROW_ID', '_MAX_ROW_ID']);
  });

  it('round-trips entries with every optional field set', () => {
    const e = entry(1, { embeddedIndex: new Uint8Array([1, 2, 3]), externalPath: 's3://b/x', firstRowId: 5, writeCols: ['a'], extraFiles: ['idx'], valueStatsCols: null, keyStats: { minValues: EMPTY_SERIALIZED_ROW, maxValues: EMPTY_SERIALIZED_ROW, nullCounts: [null, 3] } });
    expect(decodeManifest(encodeManifest([e], 'snappy'), 'm')).toEqual([e]);
    const meta: ManifestFileMeta = { fileName: 'manifest-a-0', fileSize: 10, numAddedFiles: 1, numDeletedFiles: 0, partitionStats: emptyStats(), schemaId: 0, minBucket: 0, maxBucket: 1, minLevel: 0, maxLevel: 5, minRowId: 3, maxRowId: 9 };
    expect(decodeManifestList(encodeManifestList([meta], 'deflate'), 'l')).toEqual([meta]);
  });

  it('round-trips index manifests', () => {
    const idx: IndexManifestEntry[] = [
      { kind: 0, partition: EMPTY_SERIALIZED_ROW, bucket: 0, indexType: 'DELETION_VECTORS', fileName: 'index-a-0', fileSize: 99, rowCount: 2, dvRanges: [{ dataFileName: 'data-a-0.parquet', offset: 1, length: 30, cardinality: 4 }], externalPath: null },
      { kind: 0, partition: EMPTY_SERIALIZED_ROW, bucket: 1, indexType: 'HASH', fileName: 'index-a-1', fileSize: 8, rowCount: 2, dvRanges: null, externalPath: null },
    ];
    expect(decodeIndexManifest(encodeIndexManifest(idx, 'deflate'), 'i')).toEqual(idx);
  });

  it('merges ADD/DELETE by identity (§5.4)', () => {
    const a = entry(0, { fileName: 'a' });
    const b = entry(0, { fileName: 'b' });
    expect(mergeEntries([a, b, entry(1, { fileName: 'a' })])).toEqual([b]);
    // A DELETE whose ADD is in an earlier batch is kept, and cancels that ADD when merged later.
    const delta = mergeEntries([entry(1, { fileName: 'a' }), entry(0, { fileName: 'c', level: 5 })]);
    expect(delta.map((e) => [e.kind, e.file.fileName])).toEqual([[1, 'a'], [0, 'c']]);
    expect(liveEntries([a, b, ...delta]).map((e) => e.file.fileName)).toEqual(['b', 'c']);
    // Identity includes the level and the bucket.
    expect(() => liveEntries([a, entry(1, { fileName: 'a', level: 1 })])).toThrow(/matches no ADD/);
    expect(mergeEntries([a, entry(0, { fileName: 'a' }, 1)])).toHaveLength(2);
    try {
      mergeEntries([a, entry(0, { fileName: 'a' })], 'snapshot-3');
      throw new Error('expected a corruption');
    } catch (e) {
      expect(isCorruption(e)).toBe(true);
      expect((e as Error).message).toMatch(/added twice/);
    }
  });

  it('refuses truncated manifests as corruption', () => {
    const bytes = encodeManifest([entry(0), entry(0, { fileName: 'y' })], 'deflate');
    expect(() => decodeManifest(bytes.subarray(0, bytes.length - 10), 'm')).toThrow(/corruption in m/);
  });
});

describe.skipIf(!havePaimonCheck)('a hand-built table passes paimon-check', () => {
  it('writes schema, one Parquet data file, manifest, base and delta lists, snapshot-1 and LATEST', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-paimon-'));
    try {
      const table = join(dir, 'db.db', 't');
      const fields = [
        { id: 0, name: 'k', type: parseType('INT NOT NULL') },
        { id: 1, name: 'p', type: parseType('INT NOT NULL') },
        { id: 2, name: 'v', type: parseType('STRING') },
      ];
      mkdirSync(join(table, 'schema'), { recursive: true });
      writeFileSync(join(table, 'schema', 'schema-0'), JSON.stringify({
        version: 3, id: 0,
        fields: [{ id: 0, name: 'k', type: 'INT NOT NULL' }, { id: 1, name: 'p', type: 'INT NOT NULL' }, { id: 2, name: 'v', type: 'STRING' }],
        highestFieldId: 2, partitionKeys: ['p'], primaryKeys: ['k', 'p'],
        options: { bucket: '2', 'file.format': 'parquet', 'manifest.compression': 'deflate' }, timeMillis: 1_700_000_000_000,
      }, null, 2));
      // Keys that all land in one bucket (bucket key = trimmed PK = k).
      const keyType = T('INT NOT NULL');
      const bucketOfKey = (k: number) => bucketOf(encodeBinaryRow(keyType, [k]), 2);
      const bucket = bucketOfKey(1);
      const keys = [1, 2, 3, 4, 5, 6, 7, 8].filter((k) => bucketOfKey(k) === bucket);
      const data = new Uint8Array(parquetWriteBuffer({
        columnData: [
          { name: '_KEY_k', data: keys, type: 'INT32' },
          { name: '_SEQUENCE_NUMBER', data: keys.map((_, i) => BigInt(i)), type: 'INT64' },
          { name: '_VALUE_KIND', data: keys.map(() => 0), type: 'INT32' },
          { name: 'k', data: keys, type: 'INT32' },
          { name: 'p', data: keys.map(() => 1), type: 'INT32' },
          { name: 'v', data: keys.map((k) => `value-${k}`), type: 'STRING' },
        ],
      }));
      const partition = serializeBinaryRow([fields[1]!.type], [1]);
      const bucketDir = join(table, partitionPath([fields[1]!], [1]), `bucket-${bucket}`);
      mkdirSync(bucketDir, { recursive: true });
      const dataName = 'data-0b8e5c7a-0000-4000-8000-000000000001-0.parquet';
      writeFileSync(join(bucketDir, dataName), data);
      const minKey = serializeBinaryRow(keyType, [keys[0]]);
      const maxKey = serializeBinaryRow(keyType, [keys.at(-1)]);
      const file = fileMeta({
        fileName: dataName, fileSize: data.length, rowCount: keys.length, minKey, maxKey,
        keyStats: { minValues: minKey, maxValues: maxKey, nullCounts: [0] },
        minSequenceNumber: 0, maxSequenceNumber: keys.length - 1,
      });
      const manifest = encodeManifest([{ kind: 0, partition, bucket, totalBuckets: 2, file }], 'deflate');
      mkdirSync(join(table, 'manifest'));
      const mName = 'manifest-0b8e5c7a-0000-4000-8000-000000000002-0';
      writeFileSync(join(table, 'manifest', mName), manifest);
      const base = encodeManifestList([], 'deflate');
      const delta = encodeManifestList([{
        fileName: mName, fileSize: manifest.length, numAddedFiles: 1, numDeletedFiles: 0,
        partitionStats: { minValues: partition, maxValues: partition, nullCounts: [0] }, schemaId: 0,
        minBucket: bucket, maxBucket: bucket, minLevel: 0, maxLevel: 0, minRowId: null, maxRowId: null,
      }], 'deflate');
      const listPrefix = 'manifest-list-0b8e5c7a-0000-4000-8000-000000000003';
      writeFileSync(join(table, 'manifest', `${listPrefix}-0`), base);
      writeFileSync(join(table, 'manifest', `${listPrefix}-1`), delta);
      mkdirSync(join(table, 'snapshot'));
      writeFileSync(join(table, 'snapshot', 'snapshot-1'), snapshotToJson({
        version: 3, id: 1, schemaId: 0,
        baseManifestList: `${listPrefix}-0`, baseManifestListSize: base.length,
        deltaManifestList: `${listPrefix}-1`, deltaManifestListSize: delta.length,
        changelogManifestList: null, changelogManifestListSize: null, indexManifest: null,
        commitUser: 'tilstand-test', commitIdentifier: 9223372036854775807n, commitKind: 'APPEND',
        timeMillis: 1_700_000_000_000, totalRecordCount: keys.length, deltaRecordCount: keys.length,
        changelogRecordCount: null, watermark: null, statistics: null, properties: null, nextRowId: null,
      }));
      writeFileSync(join(table, 'snapshot', 'LATEST'), '1');
      const r = paimonCheck(table);
      expect(r.output.trim().split('\n').at(-1)).toBe('paimon-check: 0 problems, 1 live files');
      expect(r.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
