// Tables Java made whose files are not where this store writes them: every read path (scan, get,
// time travel, tags, changes, `table inspect`) finds each file where Java put it (DESIGN.md,
// "Where Java puts a table's files"). There is no Java here, so each table is written by this
// store and then laid out as Java lays it out, after the mirrored Paimon source:
//   - `_EXTERNAL_PATH` of a data or changelog file (a table with `data-file.external-paths`):
//     the file is read there, not from its bucket directory (io/DataFilePathFactory.java:137-139
//     `toPath`: `file.externalPath()` else `parent/fileName`); an external provider puts it at
//     `<external root>/<partition>/bucket-<b>/<file>` (utils/FileStorePathFactory.java:215-225,
//     `relativeBucketPath`), and Java records the path as `Path.toString()`, a `file:` URI or a
//     plain path;
//   - `data-file.path-directory`: bucket directories under `<root>/<dir>/`
//     (FileStorePathFactory.java:245-247);
//   - `index-file-in-data-file-dir`: deletion-vector index files in their bucket directory, not
//     `index/` (FileStorePathFactory.java:323-330, index/IndexInDataFileDirPathFactory.java
//     `toPath(IndexFileMeta)`: its external path, else the bucket directory); an index file with
//     an external path is read there in either case (FileStorePathFactory.java:345-351);
//   - `partition.legacy-name` = false: a partition value is cast to STRING
//     (utils/InternalRowPartitionComputer.java:77-83; casting/DateToStringCastRule,
//     TimeToStringCastRule, TimestampToStringCastRule → utils/DateTimeUtils formatDate,
//     formatTimestampMillis, formatTimestamp), so DATE, TIME and TIMESTAMP directories differ.

import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inspectTable } from './cli/inspect.ts';
import { LsmError } from './errors.ts';
import { RowKind } from './key-value.ts';
import { decodeIndexManifest } from './manifest.ts';
import { castDateToString, castTimestampToString, castTimeToString } from './partition-path.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';
import { mulberry32 } from './testing/prng.ts';
import { rewriteAsJava } from './testing/java-layout.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'lsm-java-locations-'));
  dirs.push(d);
  return d;
}

const SPEC: SchemaSpec = {
  fields: [{ name: 'p', type: 'STRING NOT NULL' }, { name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }],
  partitionKeys: ['p'],
  primaryKeys: ['p', 'k'],
  options: { bucket: '2', 'snapshot.num-retained.min': '100' },
};

const sorted = (rows: unknown[][]): unknown[][] => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** Every data and changelog file in the bucket directories under `dir`: its directory relative to `dir`, and its name. */
function bucketFiles(dir: string): Array<{ rel: string; name: string }> {
  const out: Array<{ rel: string; name: string }> = [];
  const walk = (d: string, depth: number) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (!statSync(p).isDirectory()) continue;
      if (/^bucket-/.test(n)) {
        for (const f of readdirSync(p)) if (/^(data|changelog)-/.test(f)) out.push({ rel: relative(dir, p), name: f });
      } else if (n.includes('=') && depth < 4) walk(p, depth + 1);
    }
  };
  walk(dir, 0);
  return out;
}

function move(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  renameSync(from, to);
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

/** What every read path gives: latest, snapshot 2, tag t2, changes of each mode, and a get of every key. */
interface Reads {
  latest: unknown[][];
  at2: unknown[][];
  tag: unknown[][];
  changes: unknown[];
  gets: unknown[];
}

function readAll(t: Table, keys: Array<Record<string, unknown>>, modes: ReadonlyArray<'auto' | 'delta' | 'diff'>): Reads {
  const r = t.reader();
  try {
    return {
      latest: sorted(t.scanRows()),
      at2: sorted(t.scanRows({ snapshotId: 2 })),
      tag: sorted(t.scanRows({ tag: 't2' })),
      changes: modes.map((mode) => [...t.changes({ from: 1, mode })]),
      gets: keys.map((k) => r.get(k)),
    };
  } finally {
    r.close();
  }
}

/** Random upserts and deletes over partitions a and b in `commits` commits; tag t2 on snapshot 2. Returns the keys touched. */
function writeRandom(t: Table, seed: number, commits: number): Array<Record<string, unknown>> {
  console.log(`java-file-locations: seed ${seed} (JAVA_FILE_LOCATIONS_SEED=${seed} to replay)`);
  const rnd = mulberry32(seed);
  const w = t.newWriter();
  const keys = new Map<string, Record<string, unknown>>();
  for (let c = 0; c < commits; c++) {
    for (let i = 0; i < 30; i++) {
      const p = rnd() < 0.5 ? 'a' : 'b';
      const k = Math.floor(rnd() * 40);
      keys.set(`${p}/${k}`, { p, k });
      if (c > 0 && rnd() < 0.15) w.writeRecord({ p, k, v: null }, RowKind.DELETE);
      else w.writeRecord({ p, k, v: `v${c}-${i}` });
    }
    w.commit();
    if (c === 1) t.createTag('t2', 2);
  }
  w.close();
  return [...keys.values(), { p: 'a', k: 999 }];
}

describe('data files at _EXTERNAL_PATH (data-file.external-paths)', () => {
  it('are read where the manifest says, by scan, get, time travel, a tag, changes (changelog files too) and inspect; a missing one is named at its real path', () => {
    const dir = freshDir();
    const ext = freshDir();
    const t0 = Table.create(dir, TableSchema.fromSpec({ ...SPEC, options: { ...SPEC.options, 'changelog-producer': 'input' } }, 0));
    const keys = writeRandom(t0, Number(process.env.JAVA_FILE_LOCATIONS_SEED ?? (Date.now() ^ 0xe7) >>> 0), 4);
    const modes = ['auto', 'delta', 'diff'] as const;
    const before = readAll(Table.open(dir), keys, modes);
    expect(before.latest.length).toBeGreaterThan(0);
    const filesBefore = inspectTable('ext', Table.open(dir), {}).totalFiles;

    // Java's external provider: <external root>/<partition>/bucket-<b>/<file>, recorded as a
    // file: URI or a plain absolute path (both forms of Path.toString()); alternate between them.
    const target = (rel: string, name: string) => join(ext, rel, name);
    const recorded = (rel: string, name: string) => (name.charCodeAt(name.length - 9) % 2 === 0 ? `file:${target(rel, name)}` : target(rel, name));
    const parts = new Map<string, string>(); // partition hex → path
    const tp = Table.open(dir);
    rewriteAsJava(dir, { 'data-file.external-paths': `file:${ext}`, 'data-file.external-paths.strategy': 'round-robin' }, (e) => {
      const hex = Buffer.from(e.partition).toString('hex');
      if (!parts.has(hex)) parts.set(hex, tp.partitionPathOf(e.partition));
      const rel = join(parts.get(hex)!, `bucket-${e.bucket}`);
      return { ...e, file: { ...e.file, externalPath: recorded(rel, e.file.fileName) } };
    });
    const moved = bucketFiles(dir);
    expect(moved.some((f) => f.name.startsWith('changelog-'))).toBe(true);
    for (const f of moved) move(join(dir, f.rel, f.name), target(f.rel, f.name));
    expect(bucketFiles(dir)).toEqual([]);

    const t = Table.open(dir);
    expect(readAll(t, keys, modes)).toEqual(before);
    const report = inspectTable('ext', t, {});
    expect(report.totalFiles).toBe(filesBefore);
    // inspect stats each file where it is: a missing external file is named at its external path.
    const gone = t.buckets(t.resolve()!)[0]!.files[0]!;
    const where = gone.externalPath!.replace(/^file:/, '');
    rmSync(where);
    const e = refusal(() => inspectTable('ext', Table.open(dir), {}));
    expect(e.kind).toBe('Corruption');
    expect(e.message).toContain(`${where} is missing`);
    // Writing stays refused (Java's writer would put new files at the external paths).
    expect(refusal(() => t.newWriter()).message).toMatch(/option 'data-file.external-paths'/);
  });

  it('a path on another file system is NotSupported naming its scheme; a relative one names what is expected', () => {
    for (const [path, want] of [['s3://bucket/t/bucket-0/X', /scheme 's3'/], ['oss://b/X', /scheme 'oss'/], ['file://otherhost/x/X', /host 'otherhost'/], ['relative/X', /expected an absolute path or a file: URI/]] as const) {
      const dir = freshDir();
      const t0 = Table.create(dir, TableSchema.fromSpec({ ...SPEC, partitionKeys: [], primaryKeys: ['k'], fields: SPEC.fields.slice(1), options: { bucket: '1' } }, 0));
      const w = t0.newWriter();
      w.writeRecord({ k: 1, v: 'one' });
      w.commit();
      w.close();
      rewriteAsJava(dir, { 'data-file.external-paths': 's3://bucket/t', 'data-file.external-paths.strategy': 'round-robin' }, (e) => ({ ...e, file: { ...e.file, externalPath: path.replace('X', e.file.fileName) } }));
      const t = Table.open(dir);
      for (const read of [() => t.scanRows(), () => inspectTable('x', t, {})]) {
        const e = refusal(read);
        expect(e.kind, path).toBe('NotSupported');
        expect(e.message, path).toMatch(want);
        expect(e.message, path).toMatch(/data file data-/);
      }
    }
  });

  // The sweep after a commit deletes what it released by path; a writer's first sweep lists the
  // table's directories instead, where an external file is not: both must reach it.
  it.each([['the sweep of released files', false], ["a writer's first, listing sweep", true]] as const)(
    'a table still written here (strategy none) reads its external files, keeps them while referenced (orphan removal never sees them), and removes them where they are once released, by %s',
    (_how, listing) => {
      const dir = freshDir();
      const ext = freshDir();
      const options: Record<string, string> = { bucket: '1', 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '1', ...(listing ? { 'write-only': 'true' } : {}) };
      const t0 = Table.create(dir, TableSchema.fromSpec({ ...SPEC, options }, 0));
      const w0 = t0.newWriter();
      for (let k = 0; k < 20; k++) w0.writeRecord({ p: k % 2 ? 'a' : 'b', k, v: `v${k}` });
      w0.commit();
      w0.close();
      const tp = Table.open(dir);
      // Java wrote these files with a strategy, then the table was altered to 'none': the files stay external.
      rewriteAsJava(dir, { 'data-file.external-paths': `file:${ext}`, 'data-file.external-paths.strategy': 'none' }, (e) => ({
        ...e,
        file: { ...e.file, externalPath: `file:${join(ext, tp.partitionPathOf(e.partition), `bucket-${e.bucket}`, e.file.fileName)}` },
      }));
      for (const f of bucketFiles(dir)) move(join(dir, f.rel, f.name), join(ext, f.rel, f.name));
      const external = bucketFiles(ext).map((f) => join(ext, f.rel, f.name));
      expect(external.length).toBe(2);

      const t = Table.open(dir);
      const w = t.newWriter();
      try {
        // Keys inside both files' ranges, so the full compaction below merges every file.
        w.writeRecord({ p: 'a', k: 1, v: 'new' });
        w.writeRecord({ p: 'b', k: 0, v: 'new' });
        w.commit();
        w.removeOrphanFiles(0);
        expect(t.scanRows().length).toBe(20);
        for (const p of external) expect(existsSync(p), p).toBe(true);
        w.compact(true);
        expect(t.manifests.liveFiles(t.resolve()!).every((e) => e.file.externalPath === null)).toBe(true);
        if (!listing) w.expire();
      } finally {
        w.close();
      }
      if (listing) {
        const w2 = Table.open(dir).newWriter();
        try {
          w2.expire();
        } finally {
          w2.close();
        }
      }
      expect(sorted(Table.open(dir).scanRows()).filter((r) => r[2] === 'new').length).toBe(2);
      for (const p of external) expect(existsSync(p), p).toBe(false);
    },
  );
});

describe('data-file.path-directory', () => {
  it('bucket directories under <root>/<dir>: scan, get, time travel, a tag, changes and inspect find them; writes stay refused', () => {
    const dir = freshDir();
    const t0 = Table.create(dir, TableSchema.fromSpec(SPEC, 0));
    const keys = writeRandom(t0, Number(process.env.JAVA_FILE_LOCATIONS_SEED ?? (Date.now() ^ 0xd1) >>> 0), 4);
    const modes = ['auto', 'diff'] as const;
    const before = readAll(Table.open(dir), keys, modes);
    rewriteAsJava(dir, { 'data-file.path-directory': 'data' }, (e) => e);
    const files = bucketFiles(dir);
    expect(files.length).toBeGreaterThan(2);
    for (const f of files) move(join(dir, f.rel, f.name), join(dir, 'data', f.rel, f.name));

    const t = Table.open(dir);
    expect(readAll(t, keys, modes)).toEqual(before);
    expect(inspectTable('pd', t, {}).totalFiles).toBe(t.buckets(t.resolve()!).reduce((n, b) => n + b.files.length, 0));
    rmSync(join(dir, 'data', files[files.length - 1]!.rel), { recursive: true });
    expect(refusal(() => inspectTable('pd', Table.open(dir), {})).message).toContain(`${join(dir, 'data')}/`);
    expect(refusal(() => t.newWriter()).message).toMatch(/option 'data-file.path-directory' = 'data'/);
  });
});

describe('deletion-vector index files outside index/', () => {
  /** A deletion-vector table with index files: keys updated after a compaction, so older files get vectors. */
  function dvTable(dir: string, seed: number): Array<Record<string, unknown>> {
    console.log(`java-file-locations dv: seed ${seed} (JAVA_FILE_LOCATIONS_SEED=${seed} to replay)`);
    const rnd = mulberry32(seed);
    const t0 = Table.create(dir, TableSchema.fromSpec({ ...SPEC, options: { ...SPEC.options, 'deletion-vectors.enabled': 'true' } }, 0));
    const w = t0.newWriter();
    const keys: Array<Record<string, unknown>> = [];
    for (let c = 0; c < 4; c++) {
      for (let i = 0; i < 30; i++) {
        const p = rnd() < 0.5 ? 'a' : 'b';
        const k = Math.floor(rnd() * 25);
        keys.push({ p, k });
        if (c > 0 && rnd() < 0.2) w.writeRecord({ p, k, v: null }, RowKind.DELETE);
        else w.writeRecord({ p, k, v: `v${c}-${i}` });
      }
      w.commit();
      // Not after the last commit: a full compaction of a settled bucket drops its vectors, and the latest snapshot should keep some.
      if (c < 3) w.compact(true);
      if (c === 1) t0.createTag('t2', 2);
    }
    w.close();
    return keys;
  }

  it.each([['index-file-in-data-file-dir: in the bucket directory'], ['_EXTERNAL_PATH of the index file']])('are read from %s', (how) => {
    const dir = freshDir();
    const ext = freshDir();
    const keys = dvTable(dir, Number(process.env.JAVA_FILE_LOCATIONS_SEED ?? (Date.now() ^ 0xdf) >>> 0));
    const modes = ['auto', 'diff'] as const;
    const before = readAll(Table.open(dir), keys, modes);
    const indexFiles = readdirSync(join(dir, 'index')).filter((n) => n.startsWith('index-'));
    expect(indexFiles.length).toBeGreaterThan(0);
    const tp = Table.open(dir);
    const homes = new Map<string, string>(); // index file → its new path
    const inDataDir = how.startsWith('index-file-in-data-file-dir');
    rewriteAsJava(dir, inDataDir ? { 'index-file-in-data-file-dir': 'true' } : {}, (e) => e, { indexEntry: (e) => {
      const home = inDataDir ? join(dir, tp.partitionPathOf(e.partition), `bucket-${e.bucket}`, e.fileName) : join(ext, tp.partitionPathOf(e.partition), `bucket-${e.bucket}`, e.fileName);
      // One index file per (partition, bucket) here, so it has one home.
      expect(homes.get(e.fileName) ?? home).toBe(home);
      homes.set(e.fileName, home);
      return inDataDir ? e : { ...e, externalPath: `file://${home}` };
    } });
    for (const [name, home] of homes) if (existsSync(join(dir, 'index', name))) move(join(dir, 'index', name), home);
    expect(readdirSync(join(dir, 'index')).filter((n) => homes.has(n))).toEqual([]);

    const t = Table.open(dir);
    expect(readAll(t, keys, modes)).toEqual(before);
    expect(inspectTable('dv', t, {}).totalRows).toBeGreaterThan(0);
    // inspect checks the live index files where they are.
    const live = decodeIndexManifest(readFileSync(join(dir, 'manifest', t.resolve()!.indexManifest!)), 'im').filter((e) => e.kind === 0);
    expect(live.length).toBeGreaterThan(0);
    const victim = homes.get(live[0]!.fileName)!;
    rmSync(victim);
    expect(refusal(() => inspectTable('dv', Table.open(dir), {})).message).toContain(`${victim} is missing`);
    if (inDataDir) expect(refusal(() => t.newWriter()).message).toMatch(/option 'index-file-in-data-file-dir'/);
  });
});

describe('partition.legacy-name = false', () => {
  it('casts DATE, TIME and TIMESTAMP to STRING as Java names them', () => {
    // Literal outputs of DateTimeUtils.formatDate / formatTimestampMillis / formatTimestamp.
    expect(castDateToString(0)).toBe('1970-01-01');
    expect(castDateToString(-1)).toBe('1969-12-31');
    expect(castDateToString(19844)).toBe('2024-05-01');
    expect(castDateToString(11016)).toBe('2000-02-29');
    expect(castDateToString(-719528)).toBe('0000-01-01');
    expect(castTimeToString(36_900_000, 0)).toBe('10:15:00');
    expect(castTimeToString(36_900_500, 3)).toBe('10:15:00.5'); // stops at the last non-zero digit
    expect(castTimeToString(36_900_057, 3)).toBe('10:15:00.057');
    expect(castTimeToString(36_900_000, 3)).toBe('10:15:00.0');
    const micros = Date.UTC(2024, 4, 1, 10, 15, 0) * 1000;
    expect(castTimestampToString(micros, 6)).toBe('2024-05-01 10:15:00.000000');
    expect(castTimestampToString(micros, 3)).toBe('2024-05-01 10:15:00.000');
    expect(castTimestampToString(micros, 0)).toBe('2024-05-01 10:15:00');
    expect(castTimestampToString(micros + 123_400, 6)).toBe('2024-05-01 10:15:00.123400');
    expect(castTimestampToString(micros + 500_000, 3)).toBe('2024-05-01 10:15:00.500');
    expect(castTimestampToString(-1, 6)).toBe('1969-12-31 23:59:59.999999');
  });

  it('finds partitions of DATE, TIME and TIMESTAMP columns in their cast-named directories by scan, get, time travel, a tag, changes and inspect', () => {
    const dir = freshDir();
    const spec: SchemaSpec = {
      fields: [{ name: 'd', type: 'DATE NOT NULL' }, { name: 'tm', type: 'TIME(3) NOT NULL' }, { name: 'ts', type: 'TIMESTAMP(6) NOT NULL' }, { name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }],
      partitionKeys: ['d', 'tm', 'ts'],
      primaryKeys: ['d', 'tm', 'ts', 'k'],
      options: { bucket: '1', 'snapshot.num-retained.min': '100' },
    };
    const t0 = Table.create(dir, TableSchema.fromSpec(spec, 0));
    const ts = Date.UTC(2024, 4, 1, 10, 15, 0) * 1000;
    // Two partitions: their legacy and their cast names (':' escaped as %3A by escapePathName).
    const P = [
      { d: 19844, tm: 36_900_500, ts, legacy: 'd=19844/tm=36900500/ts=2024-05-01T10%3A15', cast: 'd=2024-05-01/tm=10%3A15%3A00.5/ts=2024-05-01 10%3A15%3A00.000000' },
      { d: -1, tm: 0, ts: ts + 123_400, legacy: 'd=-1/tm=0/ts=2024-05-01T10%3A15%3A00.123400', cast: 'd=1969-12-31/tm=00%3A00%3A00.0/ts=2024-05-01 10%3A15%3A00.123400' },
    ];
    const w = t0.newWriter();
    const keys: Array<Record<string, unknown>> = [];
    for (let c = 0; c < 3; c++) {
      for (const [i, p] of P.entries()) {
        for (let k = 0; k < 5; k++) {
          keys.push({ d: p.d, tm: p.tm, ts: p.ts, k });
          if (c === 2 && k === i) w.writeRecord({ d: p.d, tm: p.tm, ts: p.ts, k, v: null }, RowKind.DELETE);
          else w.writeRecord({ d: p.d, tm: p.tm, ts: p.ts, k, v: `v${c}-${k}` });
        }
      }
      w.commit();
      if (c === 1) t0.createTag('t2', 2);
    }
    w.close();
    const modes = ['auto', 'diff'] as const;
    const before = readAll(Table.open(dir), keys, modes);
    expect(before.latest.length).toBe(8);
    for (const p of P) expect(existsSync(join(dir, p.legacy)), p.legacy).toBe(true);
    rewriteAsJava(dir, { 'partition.legacy-name': 'false' }, (e) => e);
    for (const p of P) move(join(dir, p.legacy), join(dir, p.cast));

    const t = Table.open(dir);
    expect(readAll(t, keys, modes)).toEqual(before);
    const report = inspectTable('legacy', t, {});
    expect(report.buckets.map((b) => b.partition).sort()).toEqual(P.map((p) => p.cast).sort());
    expect(refusal(() => t.newWriter()).message).toMatch(/option 'partition.legacy-name' = 'false'/);
  });
});
