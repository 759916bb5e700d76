// Primary-key tables Java made in dynamic (bucket = -1, Paimon's default) and postpone (-2)
// bucket mode: they open and read as Paimon's batch read reads them, their writer is refused
// naming `bucket`, and creating one here stays refused (DESIGN.md, "Dynamic and postpone buckets").
//
// There is no Java here, so each table is first written by this store in fixed-bucket mode and
// then rewritten as Java lays out the other mode (paths in the mirrored Paimon source):
//   - schema option `bucket` = -1 / -2 (CoreOptions.BUCKET);
//   - `_TOTAL_BUCKETS` of every manifest entry: -1 in a dynamic table, since its writers are made
//     with `numBuckets = options.bucket()` (operation/AbstractFileStoreWrite.java:138, :523); -2
//     for postpone-bucket entries, and the real buckets' own count after the postpone compaction
//     (table/PostponeUtils.java:401-417 reads it per partition);
//   - a dynamic table's index manifest lists one HASH index file per bucket (index/HashIndexFile,
//     a file of int hashes); readers here ignore it;
//   - a postpone writer's files sit in `bucket-postpone` (utils/FileStorePathFactory.java:237)
//     with manifest bucket -2, and Paimon's batch scan reads real buckets only
//     (table/source/AbstractBatchTableScan.java:85, `onlyReadRealBuckets`; `postpone.merge-on-read`
//     is an engine-side reader, PostponeMergeReadBuilder, not the plain batch read).
//   - cross-partition update (primary key without the partition column, bucket -1: KeyValueFileStore
//     .bucketMode KEY_DYNAMIC): the key's old partition holds its retraction, the new one the row
//     (GlobalIndexAssigner for deduplicate); the data files' `_KEY_` columns are the trimmed key
//     either way, so a table written with key (p, k) and re-declared with key (k) is that layout.

import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hashBinaryRow } from './bucket.ts';
import { binaryRowEncoder } from './binary-row.ts';
import { inspectTable } from './cli/inspect.ts';
import { LsmError } from './errors.ts';
import { kvAt } from './data-file.ts';
import { RowKind } from './key-value.ts';
import { decodeIndexManifest, encodeIndexManifest, type IndexManifestEntry } from './manifest.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';
import { mulberry32 } from './testing/prng.ts';
import { javaRead } from './testing/java-read.ts';
import { rewriteAsJava } from './testing/java-layout.ts';
import { commitPlacedFiles, type PlacedFile } from './testing/levels.ts';
import { bucketFor } from './table-read.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SPEC: SchemaSpec = {
  fields: [{ name: 'p', type: 'STRING NOT NULL' }, { name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }],
  partitionKeys: ['p'],
  primaryKeys: ['p', 'k'],
  options: { bucket: '4' },
};

type Model = Map<string, unknown[]>;
const keyOf = (p: string, k: number): string => `${p}/${k}`;
const sorted = (rows: unknown[][]): unknown[][] => [...rows].sort((a, b) => String(a[0]).localeCompare(String(b[0])) || (a[1] as number) - (b[1] as number));

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'lsm-dynamic-bucket-'));
  dirs.push(d);
  return d;
}

/**
 * A dynamic table's HASH index: per (partition, bucket) of the latest snapshot one file of the
 * trimmed keys' hashes (HashIndexFile: 4-byte big-endian ints), listed in an index manifest.
 */
function writeHashIndex(dir: string, latest: number): string {
  const t = Table.open(dir);
  const snap = t.resolve({ snapshotId: latest })!;
  const enc = binaryRowEncoder([t.schema.fields[1]!.type]);
  const entries: IndexManifestEntry[] = [];
  mkdirSync(join(dir, 'index'), { recursive: true });
  for (const b of t.buckets(snap)) {
    const hashes = new Set<number>();
    for (const f of b.files) {
      const d = t.loadRun(b.partition, b.bucket, f);
      for (let i = 0; i < d.rowCount; i++) hashes.add(hashBinaryRow(enc(kvAt(d, i).key)));
    }
    const bytes = Buffer.alloc(4 * hashes.size);
    [...hashes].forEach((h, i) => bytes.writeInt32BE(h | 0, 4 * i));
    const name = `index-hash-${latest}-${entries.length}`;
    writeFileSync(join(dir, 'index', name), bytes);
    entries.push({ kind: 0, partition: b.partition, bucket: b.bucket, indexType: 'HASH', fileName: name, fileSize: bytes.length, rowCount: hashes.size, dvRanges: null, externalPath: null });
  }
  const name = `index-manifest-hash-${latest}`;
  writeFileSync(join(dir, 'manifest', name), encodeIndexManifest(entries, t.schema.options.manifestCompression));
  expect(decodeIndexManifest(readFileSync(join(dir, 'manifest', name)), name).every((e) => e.indexType === 'HASH')).toBe(true);
  return name;
}

function refusal(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LsmError);
    return e as LsmError;
  }
  throw new Error('expected a refusal');
}

/** Random upserts and deletes over two partitions, commit by commit; the model after each commit. */
function writeRandom(dir: string, seed: number, commits: number): Model[] {
  console.log(`dynamic-bucket: seed ${seed} (DYNAMIC_BUCKET_SEED=${seed} to replay)`);
  const rnd = mulberry32(seed);
  const t = Table.create(dir, TableSchema.fromSpec(SPEC, 0));
  const w = t.newWriter();
  const model: Model = new Map();
  const after: Model[] = [new Map()];
  for (let c = 0; c < commits; c++) {
    for (let i = 0; i < 40; i++) {
      const p = rnd() < 0.5 ? 'a' : 'b';
      const k = Math.floor(rnd() * 60);
      if (rnd() < 0.15) {
        w.writeRecord({ p, k, v: null }, RowKind.DELETE);
        model.delete(keyOf(p, k));
      } else {
        const v = `v${c}-${i}`;
        w.writeRecord({ p, k, v });
        model.set(keyOf(p, k), [p, k, v]);
      }
    }
    w.commit();
    after.push(new Map(model));
  }
  w.close();
  return after;
}

describe('dynamic bucket (-1) tables made by Java', () => {
  it('read as the model at the latest snapshot, at an older one and at a tag; get finds keys in any bucket; inspect works; writes are refused naming bucket', () => {
    const dir = freshDir();
    const seed = Number(process.env.DYNAMIC_BUCKET_SEED ?? (Date.now() ^ 0x5eed) >>> 0);
    const models = writeRandom(dir, seed, 4);
    Table.open(dir).createTag('t2', 2);
    rewriteAsJava(dir, { bucket: '-1' }, (e) => ({ ...e, totalBuckets: -1 }), { bucketRange: true, snapshotIndex: (s) => (s.id === 4 ? writeHashIndex(dir, 4) : (s.indexManifest as string | null)) });

    const t = Table.open(dir);
    expect(t.schema.options.bucket).toBe(-1);
    const latest = t.resolve()!;
    // Every entry carries Java's _TOTAL_BUCKETS of a dynamic table.
    expect(t.manifests.liveFiles(latest).every((e) => e.totalBuckets === -1)).toBe(true);
    const buckets = new Set(t.buckets(latest).map((b) => b.bucket));
    expect(buckets.has(0) && buckets.has(3)).toBe(true);

    const want = sorted([...models[4]!.values()]);
    expect(sorted(t.scanRows())).toEqual(want);
    expect(sorted(javaRead(t).rows)).toEqual(want);
    expect(sorted(t.scanRows({ snapshotId: 2 }))).toEqual(sorted([...models[2]!.values()]));
    expect(sorted(t.scanRows({ tag: 't2' }))).toEqual(sorted([...models[2]!.values()]));
    expect(sorted(javaRead(t, { snapshotId: 2 }).rows)).toEqual(sorted([...models[2]!.values()]));

    // get: a key of bucket 0 and one of bucket 3 (by where their files are), every key of the model, absent ones.
    const r = t.reader();
    try {
      for (const bucket of [0, 3]) {
        // The live keys whose records sit in this bucket's files come back by get, as in the model.
        let found = 0;
        for (const b of t.buckets(latest).filter((x) => x.bucket === bucket)) {
          for (const f of b.files) {
            const d = t.loadRun(b.partition, b.bucket, f);
            for (let i = 0; i < d.rowCount; i++) {
              const v = kvAt(d, i).value;
              const want = models[4]!.get(keyOf(v[0] as string, v[1] as number));
              expect(r.get({ p: v[0], k: v[1] })).toEqual(want);
              if (want) found++;
            }
          }
        }
        expect(found, `live keys in bucket ${bucket}`).toBeGreaterThan(0);
      }
      for (const [k, row] of models[4]!) expect(r.get({ p: row[0], k: row[1] }), k).toEqual(row);
      for (let k = 0; k < 60; k++) for (const p of ['a', 'b']) if (!models[4]!.has(keyOf(p, k))) expect(r.get({ p, k }), keyOf(p, k)).toBeUndefined();
      expect(() => r.get({ k: 1 })).toThrow(/partition-key column/);
    } finally {
      r.close();
    }
    const old = t.reader({ snapshotId: 2 });
    try {
      for (const [k, row] of models[2]!) expect(old.get({ p: row[0], k: row[1] }), k).toEqual(row);
    } finally {
      old.close();
    }

    const report = inspectTable('dyn', t, {});
    expect(report.snapshot).toBe(4);
    expect(report.totalRows).toBeGreaterThan(0);
    expect(new Set(report.buckets.map((b) => b.bucket))).toEqual(buckets);

    const e = refusal(() => t.newWriter());
    expect(e.kind).toBe('NotSupported');
    expect(e.message).toMatch(/option 'bucket' = '-1'/);
    expect(e.message).toMatch(/dynamic bucket mode/);
    // Writing stays refused, so nothing changed on disk: still 4 snapshots, same rows.
    expect(Table.open(dir).resolve()!.id).toBe(4);
  });

  for (const extra of [{ 'changelog-producer': 'lookup' }, { 'deletion-vectors.enabled': 'true' }, { 'merge-engine': 'first-row' }, { 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true' },
    // An engine that folds every run holding the key (get reads them all), compacted at every
    // second run. A key in two runs above level 0, where getAnyBucket's stop rule decides, is
    // the next describe's.
    { 'merge-engine': 'aggregation', 'fields.v.aggregate-function': 'listagg', 'num-sorted-run.compaction-trigger': '2' }] as Array<Record<string, string>>) {
    it(`reads as the same table in fixed-bucket mode did, by scan and get (${JSON.stringify(extra)})`, () => {
      const dir = freshDir();
      const seed = Number(process.env.DYNAMIC_BUCKET_SEED ?? (Date.now() ^ 0x77) >>> 0);
      console.log(`dynamic-bucket ${JSON.stringify(extra)}: seed ${seed} (DYNAMIC_BUCKET_SEED=${seed} to replay)`);
      const rnd = mulberry32(seed);
      const t0 = Table.create(dir, TableSchema.fromSpec({ ...SPEC, options: { ...SPEC.options, ...extra } }, 0));
      const w = t0.newWriter();
      const firstRow = extra['merge-engine'] === 'first-row' || extra['merge-engine'] === 'aggregation';
      for (let c = 0; c < 4; c++) {
        for (let i = 0; i < 50; i++) {
          const p = rnd() < 0.5 ? 'a' : 'b';
          const k = Math.floor(rnd() * 50);
          if (!firstRow && rnd() < 0.1) w.writeRecord({ p, k, v: null }, RowKind.DELETE);
          else w.writeRecord({ p, k, v: `v${c}-${i}` });
        }
        w.commit();
      }
      w.close();
      const changes = (tb: Table) => ['auto', 'diff'].map((mode) => [...tb.changes({ from: 1, mode: mode as 'auto' | 'diff' })]);
      const before = sorted(Table.open(dir).scanRows());
      const changesBefore = changes(Table.open(dir));
      expect(before.length).toBeGreaterThan(0);
      expect(changesBefore[0]!.length).toBeGreaterThan(0);
      rewriteAsJava(dir, { bucket: '-1' }, (e) => ({ ...e, totalBuckets: -1 }), { bucketRange: true });
      const t = Table.open(dir);
      expect(sorted(t.scanRows())).toEqual(before);
      // Changelog (lookup producer) or delta reads, and diffs, as before the rewrite.
      expect(changes(t)).toEqual(changesBefore);
      const r = t.reader();
      try {
        const live = new Map(before.map((row) => [keyOf(row[0] as string, row[1] as number), row]));
        for (let k = 0; k < 50; k++) for (const p of ['a', 'b']) expect(r.get({ p, k }), keyOf(p, k)).toEqual(live.get(keyOf(p, k)));
      } finally {
        r.close();
      }
      expect(refusal(() => t.newWriter()).message).toMatch(/option 'bucket' = '-1'/);
    });
  }

  it('a key in bucket 3 and a key in bucket 0 both come back, by get and by scan', () => {
    const dir = freshDir();
    const t0 = Table.create(dir, TableSchema.fromSpec({ ...SPEC, partitionKeys: [], primaryKeys: ['k'], fields: SPEC.fields.slice(1) }, 0));
    const w = t0.newWriter();
    for (let k = 0; k < 40; k++) w.writeRecord({ k, v: `v${k}` });
    w.commit();
    w.close();
    rewriteAsJava(dir, { bucket: '-1' }, (e) => ({ ...e, totalBuckets: -1 }), { bucketRange: true });
    const t = Table.open(dir);
    const s = t.resolve()!;
    const keysIn = (bucket: number): number[] => {
      const b = t.buckets(s).find((x) => x.bucket === bucket)!;
      const d = t.loadRun(b.partition, b.bucket, b.files[0]!);
      return Array.from({ length: d.rowCount }, (_, i) => kvAt(d, i).key[0] as number);
    };
    const in0 = keysIn(0);
    const in3 = keysIn(3);
    expect(in0.length).toBeGreaterThan(0);
    expect(in3.length).toBeGreaterThan(0);
    const r0 = t.reader();
    try {
      expect(r0.get({ k: in3[0] })).toEqual([in3[0], `v${in3[0]}`]);
      expect(r0.get({ k: in0[0] })).toEqual([in0[0], `v${in0[0]}`]);
    } finally {
      r0.close();
    }
    const r = t.reader();
    try {
      for (let k = 0; k < 40; k++) expect(r.get({ k })).toEqual([k, `v${k}`]);
      expect(r.get({ k: 40 })).toBeUndefined();
    } finally {
      r.close();
    }
    expect(t.scanRows().length).toBe(40);
  });

  it.each([[{}], [{ 'deletion-vectors.enabled': 'true' }]] as Array<[Record<string, string>]>)('cross-partition update: the key moved to another partition reads once, from its new partition (%j)', (extra) => {
    const dir = freshDir();
    const t0 = Table.create(dir, TableSchema.fromSpec({ ...SPEC, options: { ...SPEC.options, ...extra } }, 0));
    const w = t0.newWriter();
    for (let k = 0; k < 10; k++) w.writeRecord({ p: 'a', k, v: `a${k}` });
    w.commit();
    // Key 3 moves to partition b: Java's GlobalIndexAssigner retracts it in a and inserts it in b.
    w.writeRecord({ p: 'a', k: 3, v: null }, RowKind.DELETE);
    w.writeRecord({ p: 'b', k: 3, v: 'b3' });
    w.commit();
    w.close();
    rewriteAsJava(dir, { bucket: '-1' }, (e) => ({ ...e, totalBuckets: -1 }), { bucketRange: true });
    const schemaFile = join(dir, 'schema', 'schema-0');
    const json = JSON.parse(readFileSync(schemaFile, 'utf8')) as { primaryKeys: string[] };
    json.primaryKeys = ['k'];
    writeFileSync(schemaFile, JSON.stringify(json, null, 2));

    const t = Table.open(dir);
    expect(t.schema.crossPartitionUpdate).toBe(true);
    const rows = sorted(t.scanRows());
    expect(rows.length).toBe(10);
    expect(rows.filter((r) => r[1] === 3)).toEqual([['b', 3, 'b3']]);
    expect(sorted(javaRead(t).rows)).toEqual(rows);
    const r = t.reader();
    try {
      expect(r.get({ k: 3 })).toEqual(['b', 3, 'b3']);
      expect(r.get({ k: 3, p: 'b' })).toEqual(['b', 3, 'b3']);
      expect(r.get({ k: 3, p: 'a' })).toBeUndefined();
      expect(r.get({ k: 4 })).toEqual(['a', 4, 'a4']);
      expect(r.get({ k: 11 })).toBeUndefined();
    } finally {
      r.close();
    }
    expect(refusal(() => t.newWriter()).message).toMatch(/option 'bucket' = '-1'/);
  });

  it('creating a table with bucket -1 or -2 is refused, naming the option and what is read instead', () => {
    for (const b of ['-1', '-2']) {
      const e = refusal(() => TableSchema.fromSpec({ ...SPEC, options: { bucket: b } }, 0));
      expect(e.kind).toBe('NotSupported');
      expect(e.message).toMatch(new RegExp(`option 'bucket': ${b} .*not supported for creating a table here`));
    }
    // A key without the partition column still needs bucket -1, which is not created here.
    expect(refusal(() => TableSchema.fromSpec({ ...SPEC, primaryKeys: ['k'] }, 0)).message).toMatch(/dynamic buckets/);
    // A schema read from disk with a cross-partition key and a fixed bucket count is refused as before.
    const fixed = TableSchema.fromSpec(SPEC, 0).toJson();
    expect(refusal(() => TableSchema.parse(JSON.stringify({ ...fixed, primaryKeys: ['k'] }), 'schema-0')).message).toMatch(/does not include the partition key 'p'/);
  });
});

// getAnyBucket's stop rule (gatherRuns with stopAboveLevelZero): in a table read by Java's lookup
// rule (changelog-producer=lookup: merge/lookup-rule.ts), a key is its level-0 records and its
// record of the lowest level above 0; records of it higher up are stale, so `get` stops at the
// first run above level 0 that holds the key. This store's own compaction never leaves a stale
// record that folds differently (it writes complete values that absorb the older ones, or widens:
// DESIGN.md, "Lookup tables"), so the layout is Java's — a complete value at a low level above a
// stale one — placed file by file (testing/levels.ts) in fixed buckets and then rewritten as a
// dynamic-bucket table. Engines where the stale record changes the fold: aggregation (listagg
// would count it again) and partial-update with remove-record-on-delete (a column the removal
// cleared would come back). Deduplicate stops at the newest run anyway; first-row and deletion
// vectors are read without merging above level 0.
describe('dynamic bucket (-1) lookup tables: a key in two or more runs above level 0', () => {
  // Per role, the key's value of `v` at each level (higher level = older), and what Java reads.
  type Layout = Array<{ levels: Record<number, string | null>; want: string | null }>;
  const engines: Array<[string, Record<string, string>, Layout]> = [
    [
      'aggregation (listagg)',
      { 'merge-engine': 'aggregation', 'fields.v.aggregate-function': 'listagg' },
      [
        { levels: { 3: 'x', 1: 'x,y' }, want: 'x,y' },
        { levels: { 4: 'x', 2: 'x,y', 0: 'z' }, want: 'x,y,z' },
        { levels: { 4: 'x', 3: 'x,y', 1: 'x,y,w' }, want: 'x,y,w' },
        { levels: { 2: 'x,y', 0: 'z' }, want: 'x,y,z' },
      ],
    ],
    [
      'partial-update with remove-record-on-delete',
      { 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true' },
      [
        // A removal and a later +I{v: null} compacted into the complete {v: null} above the stale 'OLD'.
        { levels: { 3: 'OLD', 1: null }, want: null },
        { levels: { 4: 'OLD', 2: null, 0: 'NEW' }, want: 'NEW' },
        { levels: { 4: 'OLD', 3: 'MID', 1: null }, want: null },
        { levels: { 2: 'B', 0: null }, want: 'B' },
      ],
    ],
  ];
  for (const [name, options, layout] of engines) {
    it(`get returns what the scan (and Java's read) of the merged state returns: ${name}`, () => {
      const dir = freshDir();
      const t0 = Table.create(dir, TableSchema.fromSpec({ ...SPEC, options: { bucket: '2', 'num-levels': '5', 'changelog-producer': 'lookup', ...options } }, 0));
      // Keys of each (partition, bucket), one per role; the rest of 0..39 stay absent.
      const placed = new Map<string, { p: string; bucket: number; level: number; records: PlacedFile['records'] }>();
      const want = new Map<string, unknown[]>();
      let seq = 0;
      for (const p of ['a', 'b']) {
        for (const bucket of [0, 1]) {
          const keys = Array.from({ length: 40 }, (_, k) => k).filter((k) => bucketFor(t0.schema, { p, k }) === bucket).slice(0, layout.length);
          expect(keys.length).toBe(layout.length);
          keys.forEach((k, role) => {
            const { levels, want: v } = layout[role]!;
            // Oldest (highest level) first, so sequence numbers grow with recency.
            for (const level of Object.keys(levels).map(Number).sort((x, y) => y - x)) {
              const id = `${p}/${bucket}/${level}`;
              if (!placed.has(id)) placed.set(id, { p, bucket, level, records: [] });
              placed.get(id)!.records.push({ row: [p, k, levels[level]!], seq: seq++ });
            }
            want.set(keyOf(p, k), [p, k, v]);
          });
        }
      }
      const files = [...placed.values()].map((f) => ({ level: f.level, records: f.records, partition: [f.p], bucket: f.bucket }));
      commitPlacedFiles(t0, files.filter((f) => f.level > 0));
      commitPlacedFiles(t0, files.filter((f) => f.level === 0));
      rewriteAsJava(dir, { bucket: '-1' }, (e) => ({ ...e, totalBuckets: -1 }), { bucketRange: true });

      const t = Table.open(dir);
      expect(t.schema.options.bucket).toBe(-1);
      // The state reaches the rule: keys with records in two and three runs above level 0, in both buckets.
      const levelsOf = new Map<string, number[]>();
      for (const b of t.buckets(t.resolve()!)) {
        for (const f of b.files) {
          const d = t.loadRun(b.partition, b.bucket, f);
          for (let i = 0; i < d.rowCount; i++) {
            const row = kvAt(d, i).value;
            const id = keyOf(row[0] as string, row[1] as number);
            levelsOf.set(id, [...(levelsOf.get(id) ?? []), f.level].sort());
          }
        }
      }
      expect([...levelsOf.values()].filter((l) => l.filter((x) => x > 0).length >= 2).length).toBe(12);

      const scanned = sorted(t.scanRows());
      expect(scanned).toEqual(sorted([...want.values()]));
      expect(sorted(javaRead(t).rows)).toEqual(scanned);
      const byKey = new Map(scanned.map((row) => [keyOf(row[0] as string, row[1] as number), row]));
      const r = t.reader();
      try {
        for (let k = 0; k < 40; k++) for (const p of ['a', 'b']) expect(r.get({ p, k }), keyOf(p, k)).toEqual(byKey.get(keyOf(p, k)));
      } finally {
        r.close();
      }
    });
  }
});

describe('postpone bucket (-2) tables made by Java', () => {
  it("skips the files in 'bucket-postpone' as Paimon's batch scan does; real buckets read; inspect lists both; writes refused", () => {
    const dir = freshDir();
    const seed = Number(process.env.DYNAMIC_BUCKET_SEED ?? (Date.now() ^ 0x2b2b) >>> 0);
    const models = writeRandom(dir, seed, 2);
    // Snapshot 3: what a postpone writer committed since the last postpone compaction — an update
    // of a key that is in a real bucket and a new key; its files go to 'bucket-postpone'.
    const [someKey, someRow] = [...models[2]!.entries()][0]!;
    const t0 = Table.open(dir);
    const w = t0.newWriter();
    w.writeRecord({ p: someRow[0], k: someRow[1], v: 'postponed' });
    w.writeRecord({ p: 'a', k: 1000, v: 'new' });
    w.commit();
    w.close();
    const s3 = t0.resolve({ snapshotId: 3 })!;
    const delta3 = new Set<string>();
    for (const meta of t0.manifests.readList(s3.deltaManifestList, s3.deltaManifestListSize)) for (const e of t0.manifests.readManifest(meta)) delta3.add(e.file.fileName);
    expect(delta3.size).toBeGreaterThan(0);
    const moved = new Set<string>();
    rewriteAsJava(dir, { bucket: '-2' }, (e) => {
      // Snapshot 3's delta: the postpone writer's files (bucket -2, _TOTAL_BUCKETS -2, numBuckets = options.bucket()).
      if (delta3.has(e.file.fileName)) {
        moved.add(`${t0.partitionPathOf(e.partition)}/bucket-${e.bucket}/${e.file.fileName}`);
        return { ...e, bucket: -2, totalBuckets: -2 };
      }
      // Real buckets after a postpone compaction carry their partition's bucket count.
      return { ...e, totalBuckets: 4 };
    }, { bucketRange: true });
    expect(moved.size).toBeGreaterThan(0);
    for (const m of moved) {
      const [part, bucketDir, file] = m.split('/');
      mkdirSync(join(dir, part!, 'bucket-postpone'), { recursive: true });
      renameSync(join(dir, part!, bucketDir!, file!), join(dir, part!, 'bucket-postpone', file!));
    }

    const t = Table.open(dir);
    expect(t.schema.options.bucket).toBe(-2);
    const latest = t.resolve()!;
    expect(t.buckets(latest).some((b) => b.bucket === -2)).toBe(true);
    const want = sorted([...models[2]!.values()]);
    expect(sorted(t.scanRows())).toEqual(want);
    expect(sorted(javaRead(t).rows)).toEqual(want);
    const r = t.reader();
    try {
      expect(r.get({ p: someRow[0], k: someRow[1] }), someKey).toEqual(someRow);
      expect(r.get({ p: 'a', k: 1000 })).toBeUndefined();
      for (const [k, row] of models[2]!) expect(r.get({ p: row[0], k: row[1] }), k).toEqual(row);
    } finally {
      r.close();
    }
    // Incremental reads skip them too (batch `incremental-between`: AbstractBatchTableScan).
    expect([...t.changes({ from: 2, to: 3, mode: 'delta' })]).toEqual([]);
    expect(sorted(t.scanRows({ snapshotId: 1 }))).toEqual(sorted([...models[1]!.values()]));

    const report = inspectTable('pp', t, {});
    const pp = report.buckets.filter((b) => b.bucket === -2);
    expect(pp.length).toBeGreaterThan(0);
    expect(pp.flatMap((b) => b.files).length).toBe(moved.size);

    const e = refusal(() => t.newWriter());
    expect(e.kind).toBe('NotSupported');
    expect(e.message).toMatch(/option 'bucket' = '-2'/);
    expect(e.message).toMatch(/postpone bucket mode/);
  });
});
