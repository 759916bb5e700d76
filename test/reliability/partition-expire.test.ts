// Partition expiration (core/lsm/partition-expire.ts, TableWriter.expirePartitions/dropPartitions;
// core/lsm/DESIGN.md, "Partition expiration") under crashes, damaged files and time travel.
//
// Crash: a day-partitioned primary-key table (30 days × 2 buckets, a tag before the drop, rows
// updated and deleted after it) whose 20 oldest days are due to be dropped in batches of 3 — seven
// OVERWRITE snapshots, then snapshot expiration — is handed to a child process
// (lib/partition-drop-child.ts) that commits once and SIGKILLs itself at a named point inside that
// commit: between the batches' snapshots, after a batch's manifests (and its whole temporary
// snapshot file) are written but before the snapshot's link, in the middle of a batch's file
// writes, before EARLIEST is rewritten, and at unlinks of snapshot expiration. After each kill a
// fresh open reads every retained snapshot and the tag (the tag: exactly its rows), finds every
// file a retained snapshot or the tag references, finds the latest snapshot consistent (each day
// either all its files and rows, or none; the dropped days exactly the batches whose snapshot was
// written), paimon-check passes, and a new writer's next due check drops the rest — then all of
// it again. Once plain, once with deletion vectors (the drop rewrites the index manifest).
//
// Corruption: the index manifest the drop rewrites, damaged or missing after the writer opened,
// fails the commit with Corruption naming it and leaves the table without a new snapshot; a
// damaged or missing manifest of the latest snapshot is met when the writer opens (it reads them
// all; the drop reads them from that cache) — Corruption naming it, no new snapshot.
//
// Time travel: 30 days × 2 buckets, a tag, the 20 oldest days dropped in 5 batches and the
// snapshots that held them expired: the tag reads exactly the rows written before it.
// Reproduce: TILSTAND_SEED_PARTITION_EXPIRE=<seed> (printed).

import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isCorruption, LsmError, RowKind, Table, TableSchema, type Snapshot } from '../../core/lsm/index.ts';
import { decodeIndexManifest } from '../../core/lsm/manifest.ts';
import { CHILD_ROW, type KillPoint } from './lib/partition-drop-child.ts';
import { int, LONG, mulberry32, paimonCheck, paimonCheckAvailable, pick, removeTempDirs, suiteSeed, tempDir, writeSummary } from './lib/common.ts';

const SEED = suiteSeed('partition-expire');
const started = Date.now();
const totals = { kills: 0, trials: 0, dropsFinished: 0, paimonChecked: 0, corruptions: 0, tagRowsCompared: 0 };
let failures = 0;
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') failures++;
});

afterAll(() => {
  writeSummary({
    suite: 'partition-expire',
    proves: 'kill -9 inside a commit that drops partitions leaves every partition whole or gone, every retained snapshot and tag readable, and the next check finishes the drop; damaged index manifests and manifests fail the drop naming the file with no new snapshot; a tag reads its rows after the drop',
    seed: SEED,
    trials: totals.trials,
    faultsInjected: totals.kills + totals.corruptions,
    inputsTried: totals.trials,
    lost: failures,
    durationMs: Date.now() - started,
    details: { ...totals, long: LONG },
    passed: failures === 0,
  });
  removeTempDirs();
});

// ---------------------------------------------------------------------------------------------
// The table.

const DAYS = Array.from({ length: 30 }, (_, i) => `2026-11-${String(i + 1).padStart(2, '0')}`);
/** With `partition.expiration-time` 30 d, at DROP_MS (local wall clock) the days up to 2026-11-20 are expired. */
const EXPIRED = DAYS.slice(0, 20);
const KEPT = DAYS.slice(20);
const BATCH = 3;
const BATCHES = Math.ceil(EXPIRED.length / BATCH);
const SETUP_MS = new Date(2026, 10, 30, 12, 0, 0).getTime();
const DROP_MS = new Date(2026, 11, 20, 12, 0, 0).getTime();
const HOUR = 3_600_000;
const KEYS = 8;
/** Kills at random points beside the named ones, per variant: none in the short mode. */
const EXTRA_KILLS = Number(process.env.TILSTAND_PARTITION_EXPIRE_KILLS ?? pick(0, 40));

type Variant = 'plain' | 'dv';
type Row = [string, number, string];

const spec = (variant: Variant, extra: Record<string, string> = {}) => ({
  fields: [{ name: 'dt', type: 'STRING NOT NULL' }, { name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }],
  partitionKeys: ['dt'],
  primaryKeys: ['dt', 'k'],
  options: {
    bucket: '2',
    'file.compression': 'snappy',
    'partition.expiration-time': '30 d',
    'partition.expiration-check-interval': '1 h',
    'partition.expiration-batch-size': String(BATCH),
    // Expiration in the drop's commit keeps 3 snapshots: it unlinks the older ones and sweeps the
    // files only they referenced (updates after the tag, in days the drop takes).
    'snapshot.num-retained.min': '2',
    'snapshot.num-retained.max': '3',
    ...(variant === 'dv' ? { 'deletion-vectors.enabled': 'true' } : {}),
    ...extra,
  },
});

const key = (dt: string, k: number) => `${dt}|${k}`;
const sortRows = (rows: readonly unknown[][]): Row[] => (rows as Row[]).map((r) => [r[0], r[1], r[2]] as Row).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
const rowsOfDay = (rows: readonly Row[], dt: string) => rows.filter((r) => r[0] === dt);

interface Template {
  dir: string;
  variant: Variant;
  /** Rows at the tag `before` (written before the drop). */
  tagRows: Row[];
  /** Rows of the latest snapshot before the drop, with the child's row. */
  latestRows: Row[];
  /** Per day: `bucket:file,…` of each bucket in the latest snapshot before the drop. */
  filesByDay: Map<string, string[]>;
}

/** Writes the table the children drop from: 3 commits over 30 days × 2 buckets, the tag `before` after the second. */
function makeTemplate(variant: Variant, rand: () => number): Template {
  const dir = join(tempDir(`pexp-${variant}`), 't');
  let now = SETUP_MS;
  const t = Table.create(dir, TableSchema.fromSpec(spec(variant), now), { clock: () => now });
  const model = new Map<string, Row>();
  const w = t.newWriter({ commitUser: 'setup', onWarning: () => undefined });
  for (const dt of DAYS) for (let k = 0; k < KEYS; k++) {
    const r: Row = [dt, k, `${dt}-${k}-1`];
    w.write(r, RowKind.INSERT);
    model.set(key(dt, k), r);
  }
  w.commit();
  if (variant === 'dv') w.compact(true); // into the top level, so the updates below mark rows there
  now += 60_000;
  for (const dt of DAYS) for (let k = 0; k < KEYS; k++) {
    if (rand() < 0.4) continue;
    const r: Row = [dt, k, `${dt}-${k}-2`];
    w.write(r, RowKind.INSERT);
    model.set(key(dt, k), r);
  }
  w.commit();
  t.createTag('before', undefined, null);
  const tagRows = sortRows([...model.values()]);
  now += 60_000;
  // After the tag: updates and deletes whose files only snapshots reference (expiration sweeps them).
  for (const dt of DAYS) for (let k = 0; k < KEYS; k++) {
    const x = rand();
    if (x < 0.15) {
      const r: Row = [dt, k, `${dt}-${k}-3`];
      w.write(r, RowKind.INSERT);
      model.set(key(dt, k), r);
    } else if (x < 0.2) {
      w.write(model.get(key(dt, k))!, RowKind.DELETE);
      model.delete(key(dt, k));
    }
  }
  w.commit();
  w.close();
  expect(t.snapshots.listIds().length, 'setup snapshots').toBeGreaterThanOrEqual(3);
  const filesByDay = filesPerDay(t, t.latestSnapshot()!);
  for (const dt of DAYS) expect(filesByDay.get(dt)?.length, `${dt} has files in both buckets`).toBe(2);
  expect(sortRows(t.scanRows({ tag: 'before' }))).toEqual(tagRows);
  const latestRows = sortRows([...model.values(), [CHILD_ROW.dt, CHILD_ROW.k, CHILD_ROW.v]]);
  return { dir, variant, tagRows, latestRows, filesByDay };
}

/** Per day, one `bucket:file,file…` string per bucket with files (sorted). */
function filesPerDay(t: Table, s: Snapshot): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const b of t.buckets(s)) {
    if (b.files.length === 0) continue;
    const dt = t.partitionPathOf(b.partition).replace(/^dt=/, '');
    const list = out.get(dt) ?? [];
    list.push(`${b.bucket}:${b.files.map((f) => f.fileName).sort().join(',')}`);
    out.set(dt, list.sort());
  }
  return out;
}

/** Files a snapshot or tag references that are not on disk (lists, manifests, data and extra files, index manifest and index files). */
function missingFiles(t: Table, s: Snapshot, what: string): string[] {
  const missing: string[] = [];
  const need = (path: string) => {
    if (!existsSync(path)) missing.push(`${what}: ${path.slice(t.paths.root.length)}`);
  };
  try {
    for (const list of [s.baseManifestList, s.deltaManifestList, s.changelogManifestList]) if (list) need(t.paths.manifestFile(list));
    for (const m of t.manifests.dataManifests(s)) need(t.paths.manifestFile(m.fileName));
    for (const e of t.manifests.liveFiles(s)) {
      need(t.dataFilePath(e.partition, e.bucket, e.file.fileName, e.file.externalPath));
      for (const x of e.file.extraFiles) need(t.dataFilePath(e.partition, e.bucket, x));
    }
    if (s.changelogManifestList) {
      for (const m of t.manifests.readList(s.changelogManifestList, s.changelogManifestListSize)) {
        need(t.paths.manifestFile(m.fileName));
        for (const e of t.manifests.readManifest(m)) need(t.dataFilePath(e.partition, e.bucket, e.file.fileName, e.file.externalPath));
      }
    }
    if (s.indexManifest) {
      const path = t.paths.manifestFile(s.indexManifest);
      need(path);
      if (existsSync(path)) for (const e of decodeIndexManifest(readFileSync(path), path)) need(t.indexFilePath(e));
    }
  } catch (e) {
    missing.push(`${what}: ${(e as Error).message}`);
  }
  return missing;
}

interface Expectation {
  /** How many of EXPIRED (in order) the latest snapshot must have dropped. */
  dropped: number;
}

/** What a fresh open must find after a kill (or a clean run). */
function checkTable(tpl: Template, dir: string, exp: Expectation, label: string): void {
  const t = Table.open(dir);
  // Every retained snapshot and the tag read; the tag reads exactly its rows.
  const earliest = t.snapshots.earliestId() ?? 0;
  const retained = t.snapshots.listIds().filter((id) => id >= earliest);
  for (const id of retained) {
    expect(() => t.scanRows({ snapshotId: id }), `${label}: snapshot ${id} reads`).not.toThrow();
    expect(missingFiles(t, t.snapshots.get(id), `snapshot ${id}`), `${label}: files snapshot ${id} references`).toEqual([]);
  }
  const tags = t.listTags();
  expect(tags.map((x) => x.name), `${label}: tags`).toEqual(['before']);
  expect(missingFiles(t, tags[0]!.snapshot, 'tag before'), `${label}: files the tag references`).toEqual([]);
  expect(sortRows(t.scanRows({ tag: 'before' })), `${label}: the tag's rows`).toEqual(tpl.tagRows);
  totals.tagRowsCompared += tpl.tagRows.length;
  // The latest snapshot: each day whole or gone, the dropped days exactly the first `exp.dropped`.
  const latest = t.latestSnapshot()!;
  const rows = sortRows(t.scanRows());
  const files = filesPerDay(t, latest);
  const gone: string[] = [];
  for (const dt of DAYS) {
    const dayRows = rowsOfDay(rows, dt);
    const dayFiles = files.get(dt) ?? [];
    if (dayRows.length === 0 && dayFiles.length === 0) {
      gone.push(dt);
      continue;
    }
    // (The child's row adds a file to its day, which the drop keeps.)
    if (dt !== CHILD_ROW.dt) expect(dayFiles, `${label}: ${dt} has every file of both buckets or none`).toEqual(tpl.filesByDay.get(dt));
    expect(dayRows, `${label}: ${dt} has all its rows or none`).toEqual(rowsOfDay(tpl.latestRows, dt));
  }
  expect(gone, `${label}: days dropped`).toEqual(EXPIRED.slice(0, exp.dropped));
  // A kill between a snapshot's link and the LATEST rewrite leaves the hint one behind: readers
  // find the newest snapshot anyway (above), and a writer repairs the hint when it takes the lock
  // (SnapshotManager.repairLatestHint), as the restarted site's writer does. paimon-check takes
  // the hint as the truth, so it runs after a writer has opened (and taken the dead child's lock).
  t.newWriter({ onWarning: () => undefined }).close();
  if (paimonCheckAvailable()) {
    const r = paimonCheck(dir);
    expect(r.problems, `${label}: paimon-check: ${r.output}`).toBe(0);
    totals.paimonChecked++;
  }
}

/** A new writer's next due check drops what is left; then the table holds the kept days only. */
function finishDrop(tpl: Template, dir: string, exp: Expectation, label: string): void {
  let now = DROP_MS + HOUR;
  const t = Table.open(dir, { clock: () => now });
  const w = t.newWriter({ onWarning: () => undefined });
  now += 2 * HOUR; // past the check interval, whatever part of it the first check waits
  const r = w.commit();
  w.close();
  expect(r.partitions?.dropped, `${label}: the next check drops the rest`).toEqual(EXPIRED.slice(exp.dropped).map((dt) => `dt=${dt}`));
  expect(r.partitions?.skipped).toEqual([]);
  totals.dropsFinished++;
  checkTable(tpl, dir, { dropped: EXPIRED.length }, `${label}, after the next check`);
  expect(sortRows(Table.open(dir).scanRows()), `${label}: the kept days' rows`).toEqual(tpl.latestRows.filter((row) => KEPT.includes(row[0])));
}

// ---------------------------------------------------------------------------------------------
// The child.

/** The child as one ESM bundle (node_modules external), built once: tsx would transform its module graph at every start. */
let bundled: string | undefined;
function childEntry(): string {
  if (bundled) return bundled;
  const dir = join(import.meta.dirname, '.build');
  mkdirSync(dir, { recursive: true });
  const out = join(dir, 'partition-drop-child.mjs');
  const tmp = join(dir, `partition-drop-child.${process.pid}.${Date.now()}.mjs`);
  buildSync({ entryPoints: [join(import.meta.dirname, 'lib', 'partition-drop-child.ts')], bundle: true, platform: 'node', format: 'esm', packages: 'external', outfile: tmp, target: 'node20', logLevel: 'error' });
  renameSync(tmp, out);
  bundled = out;
  return out;
}

interface ChildRun {
  signal: NodeJS.Signals | null;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the child on `dir` (killed after 30 s at the latest). */
function runChild(dir: string, point: KillPoint, n: string): Promise<ChildRun> {
  const child = spawn(process.execPath, [childEntry(), dir, point, n, String(DROP_MS - 2 * HOUR), String(DROP_MS)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ signal, code, stdout, stderr });
    }),
  );
}

interface Counts {
  overwrites: number;
  removes: number;
  batchWrites: number[];
  dropped: string[];
}

interface Kill {
  point: KillPoint;
  n: string;
  dropped: number;
}

function killPlan(c: Counts, rand: () => number): Kill[] {
  const b = c.overwrites;
  const plan: Kill[] = [
    { point: 'after-overwrite', n: '1', dropped: BATCH },
    { point: 'after-overwrite', n: String(int(rand, 2, b - 1)), dropped: -1 },
    { point: 'after-overwrite', n: String(b), dropped: EXPIRED.length },
    { point: 'before-overwrite', n: '1', dropped: 0 },
    { point: 'before-overwrite', n: String(int(rand, 2, b)), dropped: -1 },
    { point: 'expire-earliest', n: '0', dropped: EXPIRED.length },
    { point: 'expire-remove', n: '1', dropped: EXPIRED.length },
    { point: 'expire-remove', n: String(int(rand, 2, c.removes)), dropped: EXPIRED.length },
  ];
  const inBatch = (): Kill => {
    const batch = int(rand, 1, b);
    return { point: 'in-batch', n: `${batch}:${int(rand, 1, c.batchWrites[batch - 1]!)}`, dropped: (batch - 1) * BATCH };
  };
  plan.push(inBatch());
  // Long mode: more kills, anywhere in the commit.
  for (let i = 0; i < EXTRA_KILLS; i++) {
    const x = int(rand, 0, 3);
    if (x === 0) plan.push(inBatch());
    else if (x === 3) plan.push({ point: 'expire-remove', n: String(int(rand, 1, c.removes)), dropped: EXPIRED.length });
    else plan.push({ point: x === 1 ? 'after-overwrite' : 'before-overwrite', n: String(int(rand, 1, b)), dropped: -1 });
  }
  for (const k of plan) {
    if (k.dropped >= 0) continue;
    const n = Number(k.n);
    k.dropped = Math.min(EXPIRED.length, (k.point === 'after-overwrite' ? n : n - 1) * BATCH);
  }
  return plan;
}

// ---------------------------------------------------------------------------------------------

describe('partition expiration: kill -9 inside the commit that drops partitions', () => {
  for (const variant of ['plain', 'dv'] as const) {
    it(`${variant}: every kill leaves each day whole or gone, snapshots and the tag readable, and the next check finishes the drop`, async () => {
      const rand = mulberry32((SEED ^ (variant === 'dv' ? 0x5bd1e995 : 0)) >>> 0);
      const tpl = makeTemplate(variant, rand);
      // The clean run: the drop as it should be, and how many snapshots, writes and unlinks it makes.
      const clean = join(tempDir(`pexp-${variant}-clean`), 't');
      cpSync(tpl.dir, clean, { recursive: true });
      const first = await runChild(clean, 'none', '0');
      expect(first.code, `clean child: ${first.stderr}`).toBe(0);
      const counts = JSON.parse(/counts (.*)/.exec(first.stdout)![1]!) as Counts;
      expect(counts.overwrites, 'one OVERWRITE snapshot per batch').toBe(BATCHES);
      expect(counts.dropped).toEqual(EXPIRED.map((dt) => `dt=${dt}`));
      expect(counts.removes, 'snapshot expiration unlinked files').toBeGreaterThan(2);
      totals.trials++;
      checkTable(tpl, clean, { dropped: EXPIRED.length }, `${variant} clean`);
      const plan = killPlan(counts, rand);
      console.log(`[reliability partition-expire] ${variant}: the clean drop made ${counts.overwrites} OVERWRITE snapshots (file writes per batch ${counts.batchWrites.join(' ')}) and ${counts.removes} unlinks; kills: ${plan.map((k) => `${k.point} ${k.n}`).join(', ')}`);
      for (const k of plan) {
        const label = `${variant} ${k.point} ${k.n}`;
        const dir = join(tempDir(`pexp-${variant}-kill`), 't');
        cpSync(tpl.dir, dir, { recursive: true });
        const t0 = Date.now();
        const run = await runChild(dir, k.point, k.n);
        expect(run.signal, `${label}: the child died at its point (exit ${run.code}): ${run.stderr.slice(-2000)}`).toBe('SIGKILL');
        totals.kills++;
        totals.trials++;
        const t1 = Date.now();
        checkTable(tpl, dir, { dropped: k.dropped }, label);
        const t2 = Date.now();
        finishDrop(tpl, dir, { dropped: k.dropped }, label);
        console.log(`[reliability partition-expire] ${label}: child ${t1 - t0} ms, checks ${t2 - t1} ms, finish ${Date.now() - t2} ms`);
        rmSync(dir, { recursive: true, force: true });
      }
    }, pick(60_000, 1_800_000));
  }
});

// ---------------------------------------------------------------------------------------------
// Damaged files the drop reads.

type Damage = 'missing' | 'empty' | 'truncated' | 'magic' | 'sync';

/**
 * Damages `path` so that no reader can take it for a whole file: gone, empty, cut short (never at
 * the end of the Avro header, where the cut file is a well-formed file with no records), the magic
 * or the last block's sync marker flipped.
 */
function damage(path: string, how: Damage, rand: () => number): string {
  const bytes = readFileSync(path);
  if (how === 'missing') unlinkSync(path);
  else if (how === 'empty') truncateSync(path, 0);
  else if (how === 'truncated') {
    const sync = bytes.subarray(bytes.length - 16);
    const headerEnd = bytes.indexOf(sync) + 16;
    let n = int(rand, 1, bytes.length - 1);
    if (n === headerEnd) n++;
    truncateSync(path, n);
    return `${how} to ${n} of ${bytes.length} bytes`;
  } else {
    const b = Buffer.from(bytes);
    const off = how === 'magic' ? int(rand, 0, 3) : b.length - 1 - int(rand, 0, 15);
    b[off] = b[off]! ^ (1 << int(rand, 0, 7));
    writeFileSync(path, b);
    return `${how} flipped at ${off}`;
  }
  return how;
}

const DAMAGES: Damage[] = ['missing', 'empty', 'truncated', 'truncated', 'magic', 'sync'];

function expectCorruptionNaming(f: () => unknown, path: string, label: string): void {
  let error: unknown;
  try {
    f();
  } catch (e) {
    error = e;
  }
  expect(error, `${label}: an error`).toBeInstanceOf(LsmError);
  const e = error as LsmError;
  expect(isCorruption(e), `${label}: Corruption, got ${e.kind}: ${e.message}`).toBe(true);
  expect(`${e.message} ${e.path ?? ''}`, `${label}: the error names the file`).toContain(path.split('/').pop()!);
}

describe('partition expiration: a damaged or missing file the drop reads', () => {
  it('the index manifest, damaged after the writer opened: the due commit fails with Corruption naming it, and no snapshot is added', () => {
    const rand = mulberry32((SEED ^ 0x2545f491) >>> 0);
    const tpl = makeTemplate('dv', rand);
    for (const how of DAMAGES) {
      const dir = join(tempDir('pexp-idx'), 't');
      cpSync(tpl.dir, dir, { recursive: true });
      let now = DROP_MS - 2 * HOUR;
      const t = Table.open(dir, { clock: () => now });
      const w = t.newWriter({ onWarning: () => undefined });
      const before = t.snapshots.listIds();
      const path = t.paths.manifestFile(t.latestSnapshot()!.indexManifest!);
      const what = damage(path, how, rand);
      now = DROP_MS; // the check is due: the drop reads the index manifest to rewrite it
      expectCorruptionNaming(() => w.commit(), path, `index manifest ${what}`);
      w.close();
      expect(Table.open(dir).snapshots.listIds(), `index manifest ${what}: snapshots`).toEqual(before);
      totals.corruptions++;
      totals.trials++;
    }
  });

  it('a manifest of the latest snapshot, damaged: the writer that would drop refuses with Corruption naming it, and no snapshot is added', () => {
    const rand = mulberry32((SEED ^ 0x68e31da4) >>> 0);
    const tpl = makeTemplate('plain', rand);
    const t0 = Table.open(tpl.dir);
    const latest = t0.latestSnapshot()!;
    const manifests = t0.manifests.dataManifests(latest).map((m) => m.fileName);
    expect(manifests.length).toBeGreaterThan(1);
    for (const how of DAMAGES) {
      const dir = join(tempDir('pexp-manifest'), 't');
      cpSync(tpl.dir, dir, { recursive: true });
      const name = manifests[int(rand, 0, manifests.length - 1)]!;
      let now = DROP_MS - 2 * HOUR;
      const t = Table.open(dir, { clock: () => now });
      const path = t.paths.manifestFile(name);
      const what = damage(path, how, rand);
      // A writer reads the latest snapshot's manifests when it opens (its drop reads them from
      // there), so a restart with a damaged one is refused before any drop.
      expectCorruptionNaming(() => {
        const w = t.newWriter({ onWarning: () => undefined });
        try {
          now = DROP_MS;
          w.commit();
        } finally {
          w.close();
        }
      }, path, `manifest ${what}`);
      expect(Table.open(dir).snapshots.listIds(), `manifest ${what}: snapshots`).toEqual(t0.snapshots.listIds());
      totals.corruptions++;
      totals.trials++;
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Time travel after the drop.

describe('partition expiration: time travel', () => {
  it.each(['plain', 'dv'] as const)('%s: a tag made before 20 of 30 days × 2 buckets were dropped (and the snapshots that held them expired) reads exactly the rows written before it', (variant) => {
    const rand = mulberry32((SEED ^ (variant === 'dv' ? 0x1b873593 : 0x85ebca6b)) >>> 0);
    const dir = join(tempDir('pexp-travel'), 't');
    let now = SETUP_MS;
    const t = Table.create(dir, TableSchema.fromSpec(spec(variant, { 'partition.expiration-batch-size': '4', 'snapshot.num-retained.max': '2', 'snapshot.num-retained.min': '1' }), now), { clock: () => now });
    const model = new Map<string, Row>();
    const w = t.newWriter({ onWarning: () => undefined });
    for (let c = 1; c <= 3; c++) {
      for (const dt of DAYS) for (let k = 0; k < 40; k++) {
        if (c > 1 && rand() < 0.7) continue;
        const r: Row = [dt, k, `${dt}-${k}-${c}-${int(rand, 0, 1e6)}`];
        w.write(r, RowKind.INSERT);
        model.set(key(dt, k), r);
      }
      w.commit();
      now += 60_000;
    }
    t.createTag('before', undefined, null);
    const tagged = sortRows([...model.values()]);
    // After the tag: more updates (files only snapshots hold, swept once those expire).
    for (const dt of DAYS) for (let k = 0; k < 40; k += 7) w.write([dt, k, `late-${dt}-${k}`], RowKind.INSERT);
    w.commit();
    w.close();
    const buckets = new Set(t.buckets(t.latestSnapshot()!).map((b) => `${t.partitionPathOf(b.partition)}/${b.bucket}`));
    expect(buckets.size, '30 days × 2 buckets').toBe(60);

    now = DROP_MS + HOUR;
    const t2 = Table.open(dir, { clock: () => now });
    const w2 = t2.newWriter({ onWarning: () => undefined });
    now += 2 * HOUR;
    const r = w2.commit();
    w2.close();
    const fresh = Table.open(dir);
    expect(sortRows(fresh.scanRows({ tag: 'before' })), "the tag's rows").toEqual(tagged);
    totals.tagRowsCompared += tagged.length;
    expect(r.partitions?.dropped).toEqual(EXPIRED.map((dt) => `dt=${dt}`));
    expect(r.partitions?.snapshotIds).toHaveLength(5);
    // The sweep ran over the dropped days: what only the expired snapshots held is gone, the tag's stays.
    expect(r.expire?.expiredSnapshots.length, 'the snapshots that held the dropped days expired').toBeGreaterThanOrEqual(4);
    expect(r.expire?.deletedFiles.some((f) => /\/dt=2026-11-0\d\/bucket-\d\/data-/.test(f)), 'files of dropped days only expired snapshots held were deleted').toBe(true);
    expect(days(fresh.scanRows()), 'the latest snapshot').toEqual(KEPT);
    expect(missingFiles(fresh, fresh.listTags()[0]!.snapshot, 'tag before')).toEqual([]);
    totals.trials++;
  });
});

const days = (rows: readonly unknown[][]): string[] => [...new Set(rows.map((r) => r[0] as string))].sort();
