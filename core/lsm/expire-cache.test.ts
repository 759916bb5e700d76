// Expiration with caches (expire.ts's incremental mark, tags.ts's tag cache, the snapshot cache):
// the caches must never make expiration delete a file that a retained snapshot, a tag or a
// consumer still needs — also when another process (here: another Table object, with caches of
// its own) creates, deletes and re-creates tags, registers consumers, or takes the writer lock
// and rolls back. After every step every file referenced by every snapshot and tag on disk must
// exist (read through a fresh Table, no cache); after every expiration that swept, the files on
// disk must be exactly the referenced ones (the incremental sweep leaks nothing).
// Randomized: the seed is printed; replay with MODEL_SEED=<seed>.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { changelogEntries, changelogManifestNames } from './changelog.ts';
import { deleteConsumer, listConsumers, writeConsumer } from './consumer.ts';
import { LsmError } from './errors.ts';
import { MANIFEST_CACHE_IDLE_READS } from './manifest-store.ts';
import { LocalFileIO, type FileStat } from './file-io.ts';
import { expirationMarkPending, FULL_SWEEP_EVERY, type ExpireResult } from './expire.ts';
import { RowKind } from './key-value.ts';
import { decodeIndexManifest } from './manifest.ts';
import type { SchemaSpec } from './schema.ts';
import type { Snapshot } from './snapshot.ts';
import { Table } from './table.ts';
import type { TableWriter } from './table-writer.ts';
import { modelDir, modelSettings, Rand, removeModelDirs, withSeed } from './testing/model.ts';

const FILE = 'core/lsm/expire-cache.test.ts';
afterAll(() => removeModelDirs());

const SPEC = (options: Record<string, string>): SchemaSpec => ({
  fields: [
    { name: 'p', type: 'INT NOT NULL' },
    { name: 'k', type: 'INT NOT NULL' },
    { name: 'v', type: 'INT' },
  ],
  partitionKeys: ['p'],
  primaryKeys: ['p', 'k'],
  options: { bucket: '2', ...options },
});

/** Every file the snapshots and tags on disk reference, read without any cache (a fresh Table). */
function referenced(root: string): Set<string> {
  const t = Table.open(root);
  const roots: Snapshot[] = t.snapshots.listIds().map((id) => t.snapshots.get(id));
  for (const tag of t.tags.list()) roots.push(tag.snapshot);
  const out = new Set<string>();
  for (const s of roots) {
    for (const n of t.manifests.referencedNames(s)) out.add(t.paths.manifestFile(n));
    for (const n of changelogManifestNames(t, s)) out.add(t.paths.manifestFile(n));
    if (s.indexManifest) {
      const path = t.paths.manifestFile(s.indexManifest);
      out.add(path);
      for (const e of decodeIndexManifest(t.fileIO.readFile(path), path)) out.add(join(root, 'index', e.fileName));
    }
    for (const e of t.manifests.liveFiles(s)) out.add(t.dataFilePath(e.partition, e.bucket, e.file.fileName));
    for (const e of changelogEntries(t, s)) out.add(t.dataFilePath(e.partition, e.bucket, e.file.fileName));
  }
  return out;
}

/** The files expiration manages: manifest/*, index/index-*, data and changelog files of the buckets. */
function managedOnDisk(root: string): Set<string> {
  const out = new Set<string>();
  const ls = (d: string) => (existsSync(d) ? readdirSync(d).filter((n) => !n.startsWith('.')) : []);
  for (const n of ls(join(root, 'manifest'))) out.add(join(root, 'manifest', n));
  for (const n of ls(join(root, 'index'))) if (n.startsWith('index-')) out.add(join(root, 'index', n));
  const walk = (dir: string) => {
    for (const n of ls(dir)) {
      if (/^bucket-\d+$/.test(n)) for (const f of ls(join(dir, n))) if (/^(data|changelog)-/.test(f)) out.add(join(dir, n, f));
      if (n.includes('=')) walk(join(dir, n));
    }
  };
  walk(root);
  return out;
}

function checkSafe(root: string, what: string): void {
  const missing = [...referenced(root)].filter((p) => !existsSync(p));
  expect(missing, `referenced files missing after ${what}`).toEqual([]);
  // Consumers: every snapshot from a consumer's position to the latest is retained.
  const t = Table.open(root);
  const latest = t.snapshots.latestId() ?? 0;
  for (const c of listConsumers(t)) {
    for (let id = c.nextSnapshot; id <= latest; id++) expect(t.snapshots.exists(id), `snapshot ${id} (consumer ${c.id}) after ${what}`).toBe(true);
  }
}

function checkExact(root: string, what: string): void {
  const ref = referenced(root);
  const disk = managedOnDisk(root);
  expect([...ref].filter((p) => !disk.has(p)), `missing after ${what}`).toEqual([]);
  expect([...disk].filter((p) => !ref.has(p)), `garbage left after ${what}`).toEqual([]);
}

const swept = (r: ExpireResult | undefined) => r !== undefined && (r.expiredSnapshots.length > 0 || r.expiredTags.length > 0);

function newTable(options: Record<string, string>, clock: () => number): Table {
  const catalog = new Catalog(modelDir('expire-cache'), { clock });
  catalog.createDatabase('db');
  return catalog.createTable({ database: 'db', table: 't' }, SPEC(options));
}

describe('expiration forgets what it deleted', () => {
  it('the manifest caches hold the retained snapshots’ files, not every file ever written', () => {
    let now = 1_800_000_000_000;
    const a = newTable({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'num-sorted-run.compaction-trigger': '2' }, () => now);
    const w = a.newWriter();
    const counts: number[] = [];
    // More commits than a full sweep's period, so both sweeps (released files, listing) forget.
    for (let i = 0; i < 3 * FULL_SWEEP_EVERY + 40; i++) {
      now += 1000;
      w.writeRecord({ p: i % 2, k: i % 7, v: i });
      w.commit();
      const c = a.manifests.cachedCounts();
      counts.push(c.lists + c.manifests);
    }
    checkExact(a.paths.root, 'after the commits');
    const onDisk = readdirSync(join(a.paths.root, 'manifest')).length;
    // Each name cached is a file on disk (a retained snapshot's), give or take the reads of the last commit.
    expect(Math.max(...counts.slice(-20))).toBeLessThanOrEqual(onDisk + 8);
    expect(Math.max(...counts.slice(-20))).toBeLessThan(40);
    w.close();
  });
});

describe('a reader’s caches keep what it reads, not every file it ever read', () => {
  it('another Table reading each new snapshot holds a bounded set of manifests and snapshots', () => {
    // A reader in another Table object (the sync engine's, the agent's) never hears that
    // expiration deleted a snapshot and its manifests: its caches must let them go on their own.
    let now = 1_800_000_000_000;
    const a = newTable({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'num-sorted-run.compaction-trigger': '2' }, () => now);
    const reader = Table.open(a.paths.root, { clock: () => now });
    const w = a.newWriter();
    const commits = 2 * MANIFEST_CACHE_IDLE_READS + 300;
    let manifests = 0;
    let snapshots = 0;
    for (let i = 0; i < commits; i++) {
      now += 1000;
      w.writeRecord({ p: i % 2, k: i % 7, v: i });
      w.commit();
      expect(reader.scanRows().length).toBeGreaterThan(0); // reads the latest snapshot, as a reader does
      const c = reader.manifests.cachedCounts();
      manifests = Math.max(manifests, c.lists + c.manifests);
      snapshots = Math.max(snapshots, reader.snapshots.cachedCount());
    }
    // Each read resolves one snapshot (two list reads): what the reader used in its last
    // MANIFEST_CACHE_IDLE_READS / 2 reads stays, about a list pair and a manifest or two each.
    expect(manifests).toBeLessThanOrEqual(3 * MANIFEST_CACHE_IDLE_READS);
    expect(manifests).toBeGreaterThan(10); // it does cache
    // The retained snapshots (2) plus what was read since the cache was last pruned.
    expect(snapshots).toBeLessThanOrEqual(130);
    // And what it read is still right.
    expect(reader.scanRows()).toEqual(Table.open(a.paths.root).scanRows());
    w.close();
  });
});

describe('expiration caches never delete a referenced file', () => {
  it('a tag created by another Table between two commits keeps its snapshot’s files', () => {
    let now = 1_800_000_000_000;
    const a = newTable({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '1', 'num-sorted-run.compaction-trigger': '2' }, () => now);
    const b = Table.open(a.paths.root, { clock: () => now });
    const w = a.newWriter();
    for (let i = 0; i < 3; i++) {
      w.writeRecord({ p: i % 2, k: i, v: i });
      w.commit();
    }
    expect(a.tags.list()).toEqual([]); // the writer's Table has listed (and cached) no tags
    const tagged = b.createTag('other').snapshot;
    for (let i = 0; i < 6; i++) {
      now += 1000;
      w.writeRecord({ p: i % 2, k: i, v: 10 + i });
      w.commit();
      checkSafe(a.paths.root, `commit ${i}`);
    }
    expect(a.snapshots.exists(tagged.id)).toBe(false);
    expect(Table.open(a.paths.root).scanRows({ tag: 'other' })).toHaveLength(3);
    b.deleteTag('other');
    w.writeRecord({ p: 0, k: 0, v: 99 });
    expect(swept(w.commit().expire)).toBe(true);
    checkExact(a.paths.root, 'the tag was deleted');
    w.close();
  });

  it('a tag deleted and created again under the same name, pointing elsewhere, is re-read', () => {
    let now = 1_800_000_000_000;
    const a = newTable({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'num-sorted-run.compaction-trigger': '2' }, () => now);
    const b = Table.open(a.paths.root, { clock: () => now });
    const w = a.newWriter();
    for (let i = 0; i < 3; i++) {
      w.writeRecord({ p: 0, k: i, v: i });
      w.commit();
    }
    const first = a.createTag('x').snapshot; // cached by the writer's Table
    expect(a.tags.list().map((t) => t.snapshot.id)).toEqual([first.id]);
    w.writeRecord({ p: 1, k: 9, v: 9 });
    w.commit();
    // Another process replaces the tag at once (same tick, likely the same size): the cache must
    // not keep the old content.
    b.deleteTag('x');
    const second = b.createTag('x').snapshot;
    expect(second.id).not.toBe(first.id);
    expect(a.tags.get('x').snapshot.id).toBe(second.id);
    for (let i = 0; i < 5; i++) {
      now += 1000;
      w.writeRecord({ p: i % 2, k: i, v: 20 + i });
      w.commit();
      checkSafe(a.paths.root, `commit ${i}`);
    }
    expect(a.tags.list().map((t) => t.snapshot.id)).toEqual([second.id]);
    expect(Table.open(a.paths.root).scanRows({ tag: 'x' })).toHaveLength(4);
    checkExact(a.paths.root, 'the replaced tag');
    w.close();
  });

  it('on a filesystem with coarse timestamps and re-used inodes, a same-size replacement is still seen', () => {
    // A stat that tells little: mtime in 2 s steps (as FAT), no inode number, no size (as if the
    // replacement had the same size). A tag replaced within the same step has the same identity:
    // the racy rule must compare the bytes.
    class CoarseIO extends LocalFileIO {
      override stat(path: string): FileStat | undefined {
        const s = super.stat(path);
        return s && { size: 0, mtimeMs: Math.floor(s.mtimeMs / 2000) * 2000, ino: 0 };
      }
    }
    let now = 1_800_000_000_000;
    const a = newTable({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '1' }, () => now);
    const io = new CoarseIO();
    const mine = Table.open(a.paths.root, { clock: () => now, fileIO: io });
    const b = Table.open(a.paths.root, { clock: () => now });
    const w = mine.newWriter();
    for (let i = 0; i < 12; i++) {
      w.writeRecord({ p: 0, k: i, v: i });
      w.commit();
      if (i === 2) b.createTag('x', mine.snapshots.latestId()); // snapshot 3
    }
    expect(mine.tags.list().map((t) => t.snapshot.id)).toEqual([3]);
    b.deleteTag('x');
    b.createTag('x', mine.snapshots.latestId());
    const replaced = mine.tags.get('x').snapshot.id;
    expect(replaced).toBe(mine.snapshots.latestId());
    expect(mine.tags.list().map((t) => t.snapshot.id)).toEqual([replaced]);
    for (let i = 0; i < 3; i++) {
      now += 1000;
      w.writeRecord({ p: 1, k: i, v: i });
      w.commit();
      checkSafe(a.paths.root, `commit ${i}`);
    }
    checkExact(a.paths.root, 'the replaced tag');
    w.close();
  });

  it('a consumer registered by another Table protects its snapshots from the next expiration on', () => {
    let now = 1_800_000_000_000;
    const a = newTable({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '1' }, () => now);
    const b = Table.open(a.paths.root, { clock: () => now });
    const w = a.newWriter();
    w.writeRecord({ p: 0, k: 0, v: 0 });
    w.commit();
    const from = a.snapshots.latestId()!;
    writeConsumer(b, 'reader', from);
    for (let i = 1; i < 6; i++) {
      now += 1000;
      w.writeRecord({ p: 0, k: i, v: i });
      w.commit();
      checkSafe(a.paths.root, `commit ${i}`);
    }
    expect(a.snapshots.listIds()[0]).toBe(from);
    deleteConsumer(b, 'reader');
    w.writeRecord({ p: 0, k: 9, v: 9 });
    expect(swept(w.commit().expire)).toBe(true);
    checkExact(a.paths.root, 'the consumer left');
    w.close();
  });

  it('randomized: tags, consumers and writers of other Tables between commits', () => {
    withSeed(
      'randomized: tags, consumers and writers of other Tables between commits',
      modelSettings(),
      (seed) => {
        console.log(`expire-cache randomized seed ${seed} (replay: MODEL_SEED=${seed} npx vitest run ${FILE})`);
        randomRun(seed, Number(process.env.MODEL_STEPS ?? 160));
      },
      FILE,
    );
  });
});

function randomRun(seed: number, steps: number): void {
  const rnd = Rand.of(seed);
  let now = 1_800_000_000_000;
  const clock = () => now;
  const min = rnd.range(1, 3);
  const options: Record<string, string> = {
    'snapshot.num-retained.min': String(min),
    'snapshot.num-retained.max': String(min + rnd.range(0, 4)),
    'snapshot.time-retained': rnd.pick(['1 ms', '5 s', '1 d']),
    'num-sorted-run.compaction-trigger': String(rnd.range(2, 4)),
  };
  if (rnd.int(2) === 0) options['changelog-producer'] = 'input';
  const a = newTable(options, clock);
  const root = a.paths.root;
  const other = () => Table.open(root, { clock }); // another process: caches of its own
  let b = other();
  let w: TableWriter = a.newWriter();
  const names = ['t0', 't1', 't2', 't3', 't4', 't5'];
  const retainedIds = () => Table.open(root).snapshots.listIds();
  const log: string[] = [];
  const fail = (e: unknown) => {
    console.error(`seed ${seed}, options ${JSON.stringify(options)}, steps:\n  ${log.slice(-25).join('\n  ')}`);
    throw e;
  };
  const tolerate = (f: () => void) => {
    try {
      f();
    } catch (e) {
      if (!(e instanceof LsmError) || (e.kind !== 'AlreadyExists' && e.kind !== 'NotFound')) throw e;
    }
  };
  const commit = () => {
    const n = rnd.range(1, 4);
    for (let i = 0; i < n; i++) {
      const rec = { p: rnd.int(2), k: rnd.int(12), v: rnd.int(1000) };
      w.writeRecord(rec, rnd.int(8) === 0 ? RowKind.DELETE : RowKind.INSERT);
    }
    return w.commit().expire;
  };
  for (let step = 0; step < steps; step++) {
    try {
      const r = rnd.int(100);
      let result: ExpireResult | undefined;
      if (r < 35) {
        now += rnd.int(3000);
        result = commit();
        log.push(`commit → expired ${JSON.stringify(result?.expiredSnapshots)} tags ${JSON.stringify(result?.expiredTags)}`);
      } else if (r < 47) {
        const ids = retainedIds();
        const id = ids.length ? rnd.pick(ids) : undefined;
        const name = rnd.pick(names);
        const ttl = rnd.int(3) === 0 ? rnd.range(1, 20) * 1000 : undefined;
        const by = rnd.int(3) === 0 ? a : b;
        tolerate(() => by.createTag(name, id, ttl));
        log.push(`${by === a ? 'a' : 'b'}.createTag ${name} @${id} ttl ${ttl}`);
      } else if (r < 57) {
        // Delete and create again at once under the same name, pointing elsewhere.
        const name = rnd.pick(names);
        const ids = retainedIds();
        const by = rnd.int(3) === 0 ? a : b;
        tolerate(() => by.deleteTag(name));
        if (ids.length && rnd.int(4) > 0) tolerate(() => by.createTag(name, rnd.pick(ids)));
        log.push(`${by === a ? 'a' : 'b'}.replaceTag ${name}`);
      } else if (r < 63) {
        const ids = retainedIds();
        if (ids.length) {
          const at = rnd.pick([...ids, ids[ids.length - 1]! + 1]);
          writeConsumer(b, rnd.pick(['c0', 'c1']), at);
          log.push(`consumer @${at}`);
        }
      } else if (r < 67) {
        tolerate(() => deleteConsumer(b, rnd.pick(['c0', 'c1'])));
        log.push('deleteConsumer');
      } else if (r < 75) {
        now += rnd.int(10_000);
        result = w.expire();
        log.push(`expire → ${JSON.stringify(result.expiredSnapshots)} tags ${JSON.stringify(result.expiredTags)}`);
      } else if (r < 82) {
        // The writer's Table reads tags and snapshots at odd times (fills its caches).
        a.tags.list();
        for (const n of names) tolerate(() => a.tags.get(n));
        a.snapshots.latest();
        log.push('a reads');
      } else if (r < 88) {
        // The lock changes hands: another process writes (its commits expire too), maybe rolls back.
        w.close();
        b = other();
        const wb = b.newWriter();
        const ids = Table.open(root).snapshots.listIds();
        if (ids.length > 1 && rnd.int(2) === 0) {
          const to = rnd.pick(ids.slice(0, -1));
          wb.rollbackTo(to);
          log.push(`b rolled back to ${to}`);
        }
        for (let i = rnd.int(3); i > 0; i--) {
          wb.writeRecord({ p: rnd.int(2), k: rnd.int(12), v: rnd.int(1000) });
          wb.commit();
        }
        wb.close();
        w = a.newWriter();
        log.push('lock round trip');
      } else if (r < 92) {
        tolerate(() => w.removeOrphanFiles(0));
        log.push('removeOrphanFiles');
      } else {
        now += rnd.int(30_000);
        log.push('time passes');
      }
      checkSafe(root, log[log.length - 1] ?? 'start');
      expect(a.tags.list().map((t) => `${t.name}@${t.snapshot.id}`)).toEqual(Table.open(root).tags.list().map((t) => `${t.name}@${t.snapshot.id}`));
      // A commit's mark is spread (expire.ts, MARK_BUDGET_MS): while it is incomplete the files it
      // released wait, so only a sweep after a complete mark leaves exactly what is referenced.
      if (swept(result) && !expirationMarkPending(a)) checkExact(root, log[log.length - 1]!);
    } catch (e) {
      fail(e);
    }
  }
  w.close();
  expect(FULL_SWEEP_EVERY).toBeGreaterThan(1);
}
