// A Table object's first expiration mark is spread over its first commits (expire.ts header,
// DESIGN.md "Commit cost and tags"): a commit marks a bounded number of retained roots, and while
// any is unmarked nothing but snapshot and tag files is deleted. Once the mark is complete a
// listing sweep deletes what nothing retained references.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { MARK_ROOTS_MAX, MARK_ROOTS_MIN } from './expire.ts';
import { LsmError } from './errors.ts';
import { LocalFileIO } from './file-io.ts';
import type { Snapshot } from './snapshot.ts';
import type { TableReader } from './table-read.ts';
import { tagTimeLeftMs } from './tags.ts';
import { Table } from './table.ts';
import type { TableWriter } from './table-writer.ts';
import { modelDir, modelSettings, removeModelDirs, rng } from './testing/model.ts';
import { ageTags } from './testing/tags.ts';

afterAll(() => removeModelDirs());

/** Counts reads by directory (tag/, manifest/), as tag-commit-cost.test.ts does. */
class CountingIO extends LocalFileIO {
  reads = { tag: 0, manifest: 0 };
  override readFileIfExists(path: string): Buffer | undefined {
    this.count(path);
    return super.readFileIfExists(path);
  }
  override readFile(path: string): Buffer {
    this.count(path);
    return super.readFile(path);
  }
  private count(path: string): void {
    if (path.includes('/tag/')) this.reads.tag++;
    if (path.includes('/manifest/')) this.reads.manifest++;
  }
  reset(): void {
    this.reads = { tag: 0, manifest: 0 };
  }
}

const DAY = 86_400_000;
const MIN = 60_000;
const FIELDS = [
  { name: 'k', type: 'INT NOT NULL' },
  { name: 'v', type: 'INT' },
];

function dataFiles(root: string): string[] {
  return readdirSync(join(root, 'bucket-0'))
    .filter((n) => n.startsWith('data-'))
    .sort();
}

/** Data file names of the retained snapshots and tags, read by a Table object of its own. */
function referencedDataFiles(root: string, extra: readonly Snapshot[] = []): Set<string> {
  const t = Table.open(root);
  const out = new Set<string>();
  const add = (s: Snapshot) => {
    for (const e of t.manifests.liveFiles(s)) out.add(e.file.fileName);
  };
  for (const id of t.snapshots.listIds()) {
    const s = t.snapshots.tryGet(id);
    if (s) add(s);
  }
  for (const tag of t.listTags()) add(tag.snapshot);
  for (const s of extra) add(s);
  return out;
}

describe('the first expiration mark of a Table object', () => {
  it('is spread over the first commits; nothing is deleted until it is complete, then the released files are', () => {
    const TAGS = 300;
    let now = 1_800_000_000_000;
    const clock = () => now;
    const catalog = new Catalog(modelDir('first-mark-spread'), { clock });
    catalog.createDatabase('db');
    const options = { bucket: '1', 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'full-compaction.delta-commits': '1' };
    const t = catalog.createTable({ database: 'db', table: 't' }, { fields: FIELDS, primaryKeys: ['k'], options });
    const root = t.paths.root;
    // Each commit rewrites the one key (full compaction), so each tag holds a data file of its own
    // and each commit's level-0 file is held by its APPEND snapshot alone.
    const commit = (w: TableWriter, v: number) => {
      now += MIN;
      w.writeRecord({ k: 1, v });
      return w.commit();
    };
    const w = t.newWriter();
    for (let i = 0; i < TAGS; i++) {
      commit(w, i);
      t.createTag(`agent-${i}`, undefined, 7 * DAY);
    }
    w.close();
    ageTags(root);

    // A freshly opened writer (a site's start): its first commit marks a bounded share of the
    // 300 tags' roots and deletes nothing, although snapshots expire.
    const io = new CountingIO();
    const fresh = Table.open(root, { clock, fileIO: io });
    const w2 = fresh.newWriter();
    io.reset();
    const first = commit(w2, -1);
    expect(first.expire?.expiredSnapshots.length, 'snapshots expired in the first commit').toBeGreaterThan(0);
    expect(io.reads.tag, 'tag files read by the first commit (the listing reads each tag once)').toBeLessThanOrEqual(TAGS);
    // A whole mark reads about 4 manifest files per tag here (≈ 1,200); the spread one at most
    // MARK_ROOTS_MAX roots' worth, and the commit's own (a few).
    expect(io.reads.manifest, 'manifest files read by the first commit').toBeLessThanOrEqual(MARK_ROOTS_MAX * 6);
    expect(first.expire?.deletedFiles, 'files deleted by the first commit').toEqual([]);

    // The garbage the first commits make (released level-0 files, expired snapshots' lists) stays
    // until the mark is complete; then one listing sweep takes it all.
    const maxCommits = Math.ceil(TAGS / MARK_ROOTS_MIN) + 2;
    let commits = 1;
    let swept: string[] = [];
    while (commits < maxCommits) {
      commits++;
      const r = commit(w2, -commits);
      expect(r.expire?.expiredSnapshots.length).toBeGreaterThan(0);
      if ((r.expire?.deletedFiles.length ?? 0) > 0) {
        swept = r.expire!.deletedFiles;
        break;
      }
    }
    expect(swept.length, `files deleted within ${maxCommits} commits`).toBeGreaterThan(0);
    expect(commits, 'commits until the mark was complete').toBeGreaterThanOrEqual(Math.ceil(TAGS / MARK_ROOTS_MAX));
    // Released data files went (those of every expired APPEND snapshot since the fresh writer
    // opened), and each one left is held by a retained snapshot or tag.
    expect(swept.filter((p) => p.includes('/bucket-0/data-')).length, 'data files swept').toBeGreaterThanOrEqual(commits);
    expect(dataFiles(root)).toEqual([...referencedDataFiles(root)].sort());
    // After that, a commit deletes its released files at once (the incremental mark, as before).
    const r = commit(w2, -1000);
    expect(r.expire?.deletedFiles.some((p) => p.includes('/bucket-0/data-')), 'a later commit deletes its released data file').toBe(true);
    for (const tag of Table.open(root).listTags()) expect(Table.open(root).scanRows({ tag: tag.name }).length).toBe(1);
    w2.close();
  });

  it('keeps every retained file while tags come and go, snapshots expire and fresh Tables open (randomized)', () => {
    const settings = modelSettings();
    for (let trial = 0; trial < settings.trials; trial++) {
      const seed = settings.base + trial * 7919;
      console.log(`first-mark-spread randomized: seed ${seed} (replay: MODEL_SEED=${seed} npx vitest run core/lsm/first-mark-spread.test.ts -t randomized)`);
      try {
        randomized(seed, settings.steps ?? 100);
      } catch (e) {
        console.error(`first-mark-spread randomized failed with seed ${seed}`);
        throw e;
      }
    }
  }, 240_000);
});

/**
 * One randomized run: a table with more roots than one spread run marks (MARK_ROOTS_MAX), so
 * every fresh writer's mark takes several commits; meanwhile another Table object (the agent, the
 * CLI) creates, renews and deletes tags, readers pin tags, time passes (tags and snapshots
 * expire), and the writer is replaced by a fresh Table's now and then. After every commit each
 * retained tag and the latest snapshot read whole, and every file of every retained snapshot,
 * tag and pinned reader exists. At the end, with the mark complete, orphan-free: a listing sweep
 * leaves no data file that nothing retained references.
 */
function randomized(seed: number, steps: number): void {
  const rand = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const deadline = Date.now() + 180_000;
  let now = 1_800_000_000_000;
  const clock = () => now;
  const catalog = new Catalog(modelDir('first-mark-random'), { clock });
  catalog.createDatabase('db');
  const options = {
    bucket: '1',
    'snapshot.num-retained.min': '2',
    'snapshot.num-retained.max': '12',
    'snapshot.time-retained': '30 min',
    'num-sorted-run.compaction-trigger': '3',
  };
  const t0 = catalog.createTable({ database: 'db', table: 't' }, { fields: FIELDS, primaryKeys: ['k'], options });
  const root = t0.paths.root;
  const other = Table.open(root, { clock }); // tags from elsewhere: the agent, the CLI
  let writerTable = Table.open(root, { clock });
  let w = writerTable.newWriter();
  let tagN = 0;
  let v = 0;
  const readers: { r: TableReader; s: Snapshot }[] = [];
  const commit = () => {
    now += MIN;
    const n = 1 + Math.floor(rand() * 4);
    for (let i = 0; i < n; i++) w.writeRecord({ k: Math.floor(rand() * 40), v: v++ });
    w.commit();
  };
  const createTag = () => {
    // Retentions from two hours to four days (a step is a simulated minute, some steps hours), a
    // few kept for good.
    const retain = rand() < 0.1 ? null : (2 + Math.floor(rand() * 94)) * 3_600_000;
    const ids = other.snapshots.listIds();
    const id = rand() < 0.7 || ids.length === 0 ? undefined : pick(ids);
    try {
      other.createTag(`t-${tagN++}`, id, retain);
    } catch (e) {
      // That snapshot expired meanwhile, or the tag holding it has less than an hour left.
      if (!(e instanceof LsmError) || (e.kind !== 'NotFound' && e.kind !== 'Conflict')) throw e;
    }
  };
  // Manifests are never rewritten, so one Table object's manifest cache serves every check: every
  // file of every retained snapshot, tag and reader must exist. The rows are read by a fresh Table
  // object (nothing decoded is reused): the latest snapshot's at every check; every tag's at every
  // fifth step, every fourth commit of the end and last, ten tags at random otherwise (reading all
  // each time doubles the run).
  const checker = Table.open(root);
  const check = (when: string, allTags: boolean) => {
    const fresh = Table.open(root);
    const tags = fresh.listTags();
    const read = allTags ? tags : Array.from({ length: Math.min(10, tags.length) }, () => pick(tags));
    for (const tag of read) fresh.scanRows({ tag: tag.name });
    fresh.scanRows();
    const files = new Set(dataFiles(root));
    const manifests = new Set(readdirSync(join(root, 'manifest')));
    const roots: [string, Snapshot][] = readers.map((x) => [`reader at snapshot ${x.s.id}`, x.s]);
    for (const tag of checker.listTags()) roots.push([`tag ${tag.name}`, tag.snapshot]);
    for (const id of checker.snapshots.listIds()) {
      const s = checker.snapshots.tryGet(id);
      if (s) roots.push([`snapshot ${id}`, s]);
    }
    for (const [what, s] of roots) {
      for (const n of checker.manifests.referencedNames(s)) if (!manifests.has(n)) throw new Error(`${when}: manifest file ${n} of ${what} is gone`);
      for (const e of checker.manifests.liveFiles(s)) if (!files.has(e.file.fileName)) throw new Error(`${when}: data file ${e.file.fileName} of ${what} is gone`);
    }
  };

  // Three spread runs' worth of roots and more: each fresh writer's mark takes at least 4 commits.
  for (let i = 0; i < 3 * MARK_ROOTS_MAX + 20; i++) {
    commit();
    createTag();
  }
  check('setup', true);
  for (let step = 0; step < steps && Date.now() < deadline; step++) {
    const x = rand();
    if (x < 0.1) {
      // A fresh writer (a site's start, an ingest resume): its mark starts over.
      w.close();
      writerTable = Table.open(root, { clock });
      w = writerTable.newWriter();
    } else if (x < 0.25) {
      createTag();
    } else if (x < 0.35) {
      const tags = other.listTags();
      if (tags.length > 0) other.deleteTag(pick(tags).name);
    } else if (x < 0.42) {
      const tags = other.listTags().filter((tg) => (tagTimeLeftMs(tg, now) ?? Infinity) > 2 * 3_600_000);
      if (tags.length > 0) other.renewTag(pick(tags).name);
    } else if (x < 0.47) {
      const tags = other.listTags();
      if (tags.length > 0) {
        const r = other.reader({ tag: pick(tags).name });
        readers.push({ r, s: r.snapshot! });
      }
    } else if (x < 0.52) {
      if (readers.length > 0) readers.splice(Math.floor(rand() * readers.length), 1)[0]!.r.close();
    } else if (x < 0.6) {
      now += Math.floor(rand() * 3 * 3_600_000); // hours pass: tags and snapshots expire
    }
    commit();
    check(`step ${step}`, step % 5 === 4);
  }
  for (const { r } of readers.splice(0)) r.close();
  // A fresh writer's mark completes within these commits while tags are deleted and time passes
  // (roots it marked are released before it is complete), and the run that completes it sweeps by
  // listing: then no data file is left that nothing retained references — none released while
  // the mark was incomplete is kept for good. Orphan removal (a listing with the same marks) then
  // finds none either.
  w.close();
  w = Table.open(root, { clock }).newWriter();
  const roots = other.listTags().length + other.snapshots.listIds().length;
  expect(roots, 'roots at the end (more than one spread run marks)').toBeGreaterThan(MARK_ROOTS_MAX);
  for (let i = 0; i < Math.ceil(roots / MARK_ROOTS_MIN) + 2; i++) {
    const tags = other.listTags();
    for (let j = 0; j < 4 && tags.length > 0; j++) other.deleteTag(tags.splice(Math.floor(rand() * tags.length), 1)[0]!.name);
    now += 3_600_000; // each commit expires snapshots (beyond the time retained), so each runs the mark
    commit();
    check(`end ${i}`, i % 4 === 3);
  }
  check('end', true);
  const wanted = referencedDataFiles(root);
  expect(dataFiles(root).filter((f) => !wanted.has(f)), 'data files nothing retained references').toEqual([]);
  expect(w.removeOrphanFiles(0).filter((p) => p.includes('/bucket-0/')), 'data files orphan removal found').toEqual([]);
  w.close();
}
