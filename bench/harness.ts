// The benchmark orchestrator: generates the workload once, runs every measurement in its own
// child process (bench/child.ts), takes medians over repetitions, computes ratios within each
// repetition, and writes bench/results/latest.{json,md} plus a timestamped copy.
import { execFileSync, execSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, medianRun, packageVersion } from './util.ts';
import { packWorkload, serializeWorkload, type WorkloadSpec } from './workload.ts';
import { SQLITE_SETTINGS } from './tasks.ts';
import { SITE_LAUNCH } from '../core/site/v8-flags.ts';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH_DIR, '..');

export const FIGURES = ['ingest', 'reads', 'flush', 'tags', 'mqtt', 'memory', 'mqtt-external', 'visible', 'flood', 'sync', 'replay', 'agent'] as const;
export type Figure = (typeof FIGURES)[number];

export interface Scale {
  name: 'full' | 'quick' | 'micro';
  events: number;
  keys: number;
  ingestReps: number;
  commitEvery: number;
  ingestorPipeline: boolean;
  /** Events the full-Ingestor run uses (it is slower; informational). */
  ingestorEvents: number;
  lookups: number;
  readReps: number;
  flushKeys: number;
  flushRuns: number;
  tagSizes: number[];
  tagReps: number;
  mqttPerPublisher: number;
  mqttReps: number;
  mqttMaxMs: number;
  pacedMs: number;
  memoryKeys: number;
  memoryEvents: number;
  /** memory: runs of the launched child; the figure is the median run's peak (every run's beside it). */
  memoryReps: number;
  /** mqtt-external: messages per publisher connection (3), repetitions. */
  extPerPublisher: number;
  extReps: number;
  /** visible: paced publish time (at 2,000 ev/s); every `visibleSampleEvery`-th event is a sample. */
  visibleMs: number;
  visibleSampleEvery: number;
  /** flood: events of a contract version the site lacks, one module, while another probes. */
  floodEvents: number;
  /** sync: stock rows of the first tag (1 % of them change before the second). */
  syncRows: number;
  /** replay: bench/replay.ts --events/--hours/--items (hours keep the full run's event density). */
  replayEvents: number;
  replayHours: number;
  replayItems: number;
  /** agent: jobs in the work queue, repetitions. */
  agentJobs: number;
  agentReps: number;
}

export const SCALES: Record<Scale['name'], Scale> = {
  full: {
    name: 'full', events: 2_000_000, keys: 100_000, ingestReps: 3, commitEvery: 100_000, ingestorPipeline: true, ingestorEvents: 500_000,
    lookups: 200_000, readReps: 3, flushKeys: 500_000, flushRuns: 5, tagSizes: [10_000, 100_000, 1_000_000], tagReps: 5,
    mqttPerPublisher: 20_000, mqttReps: 3, mqttMaxMs: 15_000, pacedMs: 5_000, memoryKeys: 1_000_000, memoryEvents: 1_200_000, memoryReps: 3,
    extPerPublisher: 10_000, extReps: 3, visibleMs: 20_000, visibleSampleEvery: 20, floodEvents: 200_000, syncRows: 1_000_000, replayEvents: 2_000_000, replayHours: 24, replayItems: 2000, agentJobs: 10_000, agentReps: 5,
  },
  quick: {
    name: 'quick', events: 200_000, keys: 100_000, ingestReps: 3, commitEvery: 100_000, ingestorPipeline: true, ingestorEvents: 100_000,
    lookups: 50_000, readReps: 2, flushKeys: 100_000, flushRuns: 5, tagSizes: [10_000, 100_000], tagReps: 3,
    mqttPerPublisher: 5_000, mqttReps: 1, mqttMaxMs: 10_000, pacedMs: 2_000, memoryKeys: 100_000, memoryEvents: 200_000, memoryReps: 1,
    extPerPublisher: 3_000, extReps: 1, visibleMs: 6_000, visibleSampleEvery: 20, floodEvents: 50_000, syncRows: 100_000, replayEvents: 50_000, replayHours: 0.6, replayItems: 2000, agentJobs: 10_000, agentReps: 3,
  },
  micro: {
    name: 'micro', events: 3_000, keys: 1_000, ingestReps: 1, commitEvery: 1_000, ingestorPipeline: true, ingestorEvents: 3_000,
    lookups: 1_000, readReps: 1, flushKeys: 2_000, flushRuns: 3, tagSizes: [1_000], tagReps: 2,
    mqttPerPublisher: 300, mqttReps: 1, mqttMaxMs: 5_000, pacedMs: 300, memoryKeys: 1_000, memoryEvents: 3_000, memoryReps: 1,
    extPerPublisher: 300, extReps: 1, visibleMs: 2_000, visibleSampleEvery: 20, floodEvents: 3_000, syncRows: 2_000, replayEvents: 3_000, replayHours: 0.036, replayItems: 200, agentJobs: 1_000, agentReps: 1,
  },
};

/** visible: paced rate, the stock budget set in the site's config, the reader's poll period. */
const VISIBLE_RATE = 2_000;
const VISIBLE_BUDGET_MS = 2_000;
const VISIBLE_POLL_MS = 5;
/** flood: unacknowledged events at most, the probe's period, how long it probes after the flood. */
const FLOOD_WINDOW = 1_000;
const FLOOD_PROBE_MS = 100;
const FLOOD_AFTER_MS = 3_000;
/** sync: the fraction of rows changed between the two tags. */
const SYNC_CHANGE = 0.01;
/** replay: 2 M events in 10 minutes; the child is stopped after an hour. */
const REPLAY_TARGET = Math.ceil(2_000_000 / 600);
const REPLAY_TIMEOUT_MS = 3_600_000;
/** agent: resources and stock items beside the jobs. */
const AGENT_RESOURCES = 200;
const AGENT_ITEMS = 500;

export interface BenchOptions {
  scale: Scale;
  only?: Figure[];
  /** Run the Tilstand ingest child under `node --cpu-prof` (profiles in <outDir>/profiles). */
  profile?: boolean;
  outDir: string;
  /** Do not write latest.*; write only the timestamped copy (used by the smoke test). */
  noLatest?: boolean;
  seed?: number;
  log?: (line: string) => void;
}

export interface Row {
  figure: string;
  tilstand: string;
  sqlite: string;
  ratio: string;
  target: string;
  status: 'PASS' | 'FAIL' | 'info';
  notes: string;
}

/**
 * The child entry: bench/child.ts through tsx, or (`bundled`) its bundle dist/bench/child.mjs with
 * plain node, the way a site process runs (scripts/build-site.mjs; built by buildChildBundle) and
 * launched as a site is launched (core/site/v8-flags.ts SITE_LAUNCH: its node flags and
 * environment) unless `unlaunched`.
 */
function runChild(task: string, params: unknown, o: { profileDir?: string; bundled?: boolean; unlaunched?: boolean; log: (l: string) => void }): Promise<any> {
  const entry = o.bundled ? [join(ROOT, 'dist', 'bench', 'child.mjs')] : [join(ROOT, 'bin', 'run-ts.mjs'), join(BENCH_DIR, 'child.ts')];
  const launched = o.bundled === true && o.unlaunched !== true;
  const args = [...(launched ? SITE_LAUNCH.nodeFlags : []), ...(o.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${o.profileDir}`] : []), ...entry, task, JSON.stringify(params)];
  const env = launched ? { ...process.env, ...SITE_LAUNCH.env } : o.unlaunched ? withoutLaunch(process.env) : process.env;
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', rej);
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('@@RESULT '));
      if (code !== 0 || !line) rej(new Error(`child ${task} exited ${code}\n${err.slice(-3000)}\n${out.slice(-1000)}`));
      else {
        if (err.trim()) o.log(`  [${task} stderr] ${err.trim().split('\n').slice(-3).join(' | ')}`);
        res(JSON.parse(line.slice(9)));
      }
    });
  });
}

/** Builds dist/bench/child.mjs from the current sources (the memory figure's child runs it). */
function buildChildBundle(): void {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-site.mjs'), 'bench'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** `env` without SITE_LAUNCH's variables and node flags (an unlaunched child inherits none of them). */
function withoutLaunch(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const k of Object.keys(SITE_LAUNCH.env)) delete out[k];
  if (out.NODE_OPTIONS) out.NODE_OPTIONS = out.NODE_OPTIONS.split(/\s+/).filter((f) => !SITE_LAUNCH.nodeFlags.includes(f)).join(' ');
  return out;
}

/** What a memory child reports of its launch (bench/tasks.ts `memory`): the flags and environment in effect, or what lacked. */
function launchLine(l: { nodeFlags: string[]; env: Record<string, string>; missing: string[] }): string {
  const given = [...Object.entries(l.env).map(([k, v]) => `${k}=${v}`), 'node', ...l.nodeFlags].join(' ');
  return l.missing.length === 0 ? given : `without ${l.missing.join(' ')}`;
}

const fmt = (x: number, digits = 0): string => (Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a');
const k = (x: number): string => (x >= 1e6 ? `${fmt(x / 1e6, 2)} M` : x >= 1e3 ? `${fmt(x / 1e3, 1)} k` : fmt(x, 1));
const pct = (x: number | undefined): string => (x === undefined || !Number.isFinite(x) ? 'n/a' : `${fmt(x * 100, 0)} %`);
const pass = (ok: boolean): 'PASS' | 'FAIL' => (ok ? 'PASS' : 'FAIL');

function machine() {
  let commit = 'unknown';
  let dirty = false;
  try {
    commit = execSync('git rev-parse --short HEAD', { cwd: ROOT }).toString().trim();
    dirty = execSync('git status --porcelain -- core', { cwd: ROOT }).toString().trim().length > 0;
  } catch {
    // not a git checkout
  }
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memoryGB: Math.round(os.totalmem() / 2 ** 30),
    kernel: os.release(),
    node: process.version,
    packages: Object.fromEntries(['better-sqlite3', 'mqtt', 'aedes', 'tsx'].map((n) => [n, packageVersion(ROOT, n)])),
    git: { commit, coreDirty: dirty },
    tmpdir: os.tmpdir(),
  };
}

export async function runBench(o: BenchOptions): Promise<{ rows: Row[]; json: any; markdown: string }> {
  const log = o.log ?? ((l: string) => console.log(l));
  const s = o.scale;
  const only = new Set<Figure>(o.only && o.only.length > 0 ? o.only : FIGURES);
  const seed = o.seed ?? 20261201;
  const started = Date.now();
  const load0 = os.loadavg();
  const tmp = fs.mkdtempSync(join(os.tmpdir(), 'tilstand-bench-'));
  const cleanup = () => fs.rmSync(tmp, { recursive: true, force: true });
  const onSignal = () => {
    cleanup();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const profileDir = o.profile ? join(o.outDir, 'profiles') : undefined;
  if (profileDir) fs.mkdirSync(profileDir, { recursive: true });
  const raw: Record<string, unknown> = {};
  const rows: Row[] = [];
  const timings: Record<string, number> = {};
  const timed = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const t = Date.now();
    log(`▶ ${name}`);
    try {
      return await f();
    } finally {
      timings[name] = (timings[name] ?? 0) + (Date.now() - t) / 1000; // a phase timed in parts (memory) sums them
      log(`  ${name}: ${timings[name]!.toFixed(1)} s`);
    }
  };
  try {
    const spec: WorkloadSpec = { seed, keys: s.keys, events: s.events };
    const workloadFile = join(tmp, 'workload.bin');
    if (only.has('ingest') || only.has('reads')) {
      await timed('workload', async () => {
        const w = packWorkload(spec);
        fs.writeFileSync(workloadFile, Buffer.concat(serializeWorkload(w)));
        raw.workload = { ...spec, payloadBytesMean: w.bytes.length / w.count };
      });
    }
    const win = 1000;
    const ingestDirs: { tilstand?: string; sqlite?: string } = {};

    // ------------------------------------------------------------------ ingest
    if (only.has('ingest') || only.has('reads')) {
      const reps = only.has('ingest') ? s.ingestReps : 1;
      const perRep: any[] = [];
      await timed('ingest', async () => {
        for (let r = 0; r < reps; r++) {
          const dirT = join(tmp, `ingest-t-${r}`);
          const pathS1 = join(tmp, `sqlite-1k-${r}.db`);
          const pathS10 = join(tmp, `sqlite-10k-${r}.db`);
          fs.mkdirSync(dirT, { recursive: true });
          const jobs: Array<[string, () => Promise<any>]> = [
            ['tilstand', () => runChild('ingest-tilstand', { workloadFile, spec, dir: dirT, commitEvery: s.commitEvery, window: win }, { log, ...(profileDir && r === 0 ? { profileDir } : {}) })],
            ['sqlite1k', () => runChild('ingest-sqlite', { workloadFile, spec, path: pathS1, txEvents: 1000, synchronous: 'FULL' }, { log })],
            ['sqlite10k', () => runChild('ingest-sqlite', { workloadFile, spec, path: pathS10, txEvents: 10000, synchronous: 'NORMAL' }, { log })],
            ['json', () => runChild('json-parse', { workloadFile, spec }, { log })],
          ];
          if (!only.has('ingest')) jobs.splice(1, 1), jobs.pop();
          // Rotate the order per repetition so drift on a shared machine does not favour one engine.
          const rot = jobs.slice(r % jobs.length).concat(jobs.slice(0, r % jobs.length));
          const rec: Record<string, any> = {};
          for (const [name, f] of rot) {
            rec[name] = await f();
            log(`  rep ${r + 1}/${reps} ${name}: ${k(rec[name].eventsPerSec)} ev/s`);
          }
          if (s.ingestorPipeline && r === 0 && only.has('ingest')) {
            const dirI = join(tmp, `ingest-i-${r}`);
            fs.mkdirSync(dirI, { recursive: true });
            rec.ingestor = await runChild('ingest-ingestor', { workloadFile, spec, dir: dirI, commitEvery: s.commitEvery, window: win, limit: s.ingestorEvents }, { log });
            log(`  rep ${r + 1}/${reps} ingestor pipeline: ${k(rec.ingestor.eventsPerSec)} ev/s`);
            fs.rmSync(dirI, { recursive: true, force: true });
          }
          perRep.push(rec);
          // Keep the last repetition's final states for the read figures; drop the rest now.
          if (r < reps - 1) {
            fs.rmSync(dirT, { recursive: true, force: true });
            for (const p of [pathS1, pathS10]) for (const suf of ['', '-wal', '-shm']) fs.rmSync(p + suf, { force: true });
          } else {
            ingestDirs.tilstand = dirT;
            ingestDirs.sqlite = pathS10;
          }
        }
      });
      raw.ingest = perRep;
      if (only.has('ingest')) {
        const T = (f: (r: any) => number) => median(perRep.map(f));
        const ev = s.events;
        const tEv = T((r) => r.tilstand.eventsPerSec);
        const s1 = T((r) => r.sqlite1k.eventsPerSec);
        const s10 = T((r) => r.sqlite10k.eventsPerSec);
        const r1 = T((r) => r.tilstand.eventsPerSec / r.sqlite1k.eventsPerSec);
        const r10 = T((r) => r.tilstand.eventsPerSec / r.sqlite10k.eventsPerSec);
        const js = T((r) => r.json.eventsPerSec);
        const rj = T((r) => r.tilstand.eventsPerSec / r.json.eventsPerSec);
        const tb = T((r) => r.tilstand.bytes.tableWritten / ev);
        const jb = T((r) => r.tilstand.bytes.journalWritten / ev);
        const s1b = T((r) => r.sqlite1k.bytes.wcharTotal / ev);
        const s1bb = T((r) => r.sqlite1k.bytes.writeBytesTotal / ev);
        const s10b = T((r) => r.sqlite10k.bytes.wcharTotal / ev);
        const t0 = perRep[perRep.length - 1].tilstand;
        const brk = t0.breakdownSec;
        const cadence = `commit every ${fmt(s.commitEvery)} events (${Math.ceil(ev / s.commitEvery)} commits; compaction inline)`;
        rows.push({
          figure: `Ingest, in process (${k(ev)} events, ${k(s.keys)} keys)`,
          tilstand: `${k(tEv)} ev/s`,
          sqlite: `${k(s1)} ev/s @1k FULL`,
          ratio: `${fmt(r1, 2)}×`,
          target: '≥ 300 k ev/s',
          status: pass(tEv >= 300_000),
          notes: `JSON.parse + journal (WAL, synchronous=FULL, ${fmt(t0.journal.eventsPerCommitMean, 0)} ev/fsync) + TableWriter partial-update; ${cadence}. Pipelined (window k+1 parsed and queued before window k is applied; the journal commits inline on the same thread, so its fsync wait is not hidden; rows applied once durable). Last rep, main thread: parse + queue ${fmt(brk.parseAndQueue, 2)} s, waiting for durability ${fmt(brk.waitDurable, 2)} s, apply ${fmt(brk.apply, 2)} s, table commit ${fmt(brk.tableCommit, 2)} s (max ${fmt(t0.commitMsMax)} ms); process CPU ${fmt(t0.cpuSec, 2)} s for ${fmt(t0.seconds, 2)} s wall`,
        });
        rows.push({ figure: 'Ingest vs SQLite @1,000/tx, synchronous=FULL', tilstand: `${k(tEv)} ev/s`, sqlite: `${k(s1)} ev/s`, ratio: `${fmt(r1, 2)}×`, target: '≥ 4×', status: pass(r1 >= 4), notes: 'ratio = median of per-repetition ratios; SQLite also JSON.parses every event' });
        rows.push({ figure: 'Ingest vs SQLite @10,000/tx, synchronous=NORMAL', tilstand: `${k(tEv)} ev/s`, sqlite: `${k(s10)} ev/s`, ratio: `${fmt(r10, 2)}×`, target: '≥ 1.1×', status: pass(r10 >= 1.1), notes: 'NORMAL in WAL mode: a power cut can lose the last transactions (Tilstand\'s journal fsyncs every group)' });
        rows.push({ figure: 'Ceiling: JSON.parse of the same events', tilstand: `${k(tEv)} ev/s`, sqlite: `${k(js)} ev/s (parse only)`, ratio: `${fmt(rj, 2)} of ceiling`, target: '—', status: 'info', notes: 'Buffer → utf8 string → JSON.parse, nothing else' });
        if (perRep[0].ingestor) {
          const ip = perRep[0].ingestor;
          rows.push({ figure: 'Ingest through the full Ingestor (envelope, contract, sequencer, binding)', tilstand: `${k(ip.eventsPerSec)} ev/s`, sqlite: '—', ratio: `${fmt(ip.eventsPerSec / perRep[0].sqlite1k.eventsPerSec, 2)}× SQLite@1k`, target: '—', status: 'info', notes: `one run (rep 1) on the first ${k(ip.events)} events; Ingestor.accept per event, two windows in flight, commitAll every ${fmt(s.commitEvery)} events; process CPU ${fmt(ip.cpuSec, 2)} s for ${fmt(ip.seconds, 2)} s wall; dead letters ${ip.deadLetters}${ip.failure ? `; FAILURE: ${ip.failure}` : ''}` });
        }
        rows.push({
          figure: 'Table store bytes written per event',
          tilstand: `${fmt(tb, 1)} B/ev`,
          sqlite: `${fmt(s1b, 0)} B/ev @1k (block layer ${fmt(s1bb, 0)}); ${fmt(s10b, 0)} B/ev @10k`,
          ratio: `${fmt(tb / s1b, 3)}×`,
          target: '≤ 100 B/ev',
          status: pass(tb <= 100),
          notes: `sum of sizes of every table file written (data ${fmt(t0.bytes.tableByKind.data / ev, 1)}, manifests ${fmt(t0.bytes.tableByKind.manifest / ev, 1)}, snapshots/hints ${fmt((t0.bytes.tableByKind.snapshot + t0.bytes.tableByKind.other) / ev, 1)} B/ev; ${t0.bytes.tableFilesWritten.data} data files written, deleted ones included); du at end ${k(t0.bytes.tableDirBytes)}B. SQLite: write(2) bytes (/proc/self/io wchar: WAL + checkpoints)`,
        });
        rows.push({ figure: 'Journal bytes written per event', tilstand: `${fmt(jb, 0)} B/ev`, sqlite: '— (SQLite row above is its only write)', ratio: '—', target: '—', status: 'info', notes: `wchar of the ingest process minus table bytes (WAL frames + checkpoints of ~${fmt((raw.workload as any).payloadBytesMean, 0)} B payloads); journal.db+wal at end ${k(t0.bytes.journalFileBytes)}B` });
      }
    }

    // ------------------------------------------------------------------ reads
    if (only.has('reads') && ingestDirs.tilstand && ingestDirs.sqlite) {
      const rd = await timed('reads', () => runChild('reads', { warehouse: join(ingestDirs.tilstand!, 'warehouse'), sqlitePath: ingestDirs.sqlite!, keys: s.keys, lookups: s.lookups, reps: s.readReps, seed: seed + 1 }, { log }));
      raw.reads = rd;
      const m = rd.median;
      const fs0 = rd.finalState;
      const state = `final state: ${fs0.rows} rows in ${fs0.files} files / ${fs0.runs} sorted runs (levels ${JSON.stringify(fs0.levels)})`;
      rows.push({ figure: `Point lookups, warm (${k(s.lookups)} uniform keys)`, tilstand: `${k(m.tLookupOps)} ops/s`, sqlite: `${k(m.sLookupOps)} ops/s`, ratio: `${fmt(m.lookupRatio, 2)}×`, target: '≥ 200 k ops/s', status: pass(m.tLookupOps >= 200_000), notes: `TableReader.get vs prepared SELECT (raw), calls back to back (no per-call timer); ${state}; states agree on ${rd.checkedKeys - rd.mismatches}/${rd.checkedKeys} sampled keys` });
      rows.push({ figure: 'Point lookup latency p50 / p99', tilstand: `${fmt(m.tLookupP50, 1)} / ${fmt(m.tLookupP99, 1)} µs`, sqlite: `${fmt(m.sLookupP50, 1)} / ${fmt(m.sLookupP99, 1)} µs`, ratio: `${fmt(m.tLookupP99 / m.sLookupP99, 2)}× (p99)`, target: 'p99 ≤ 25 µs', status: pass(m.tLookupP99 <= 25), notes: 'a separate pass over the same keys timing every call (performance.now(), resolution under 0.1 µs here; the two reads are inside each figure)' });
      rows.push({ figure: 'Full scan of the merged final state, warm', tilstand: `${k(m.tScanRowsPerSec)} rows/s`, sqlite: `${k(m.sScanRowsPerSec)} rows/s`, ratio: `${fmt(m.scanRatio, 2)}×`, target: '≥ 1 M rows/s', status: pass(m.tScanRowsPerSec >= 1_000_000), notes: `${fmt(m.tScanRows)} rows; TableReader.scan (decoded runs cached) vs SELECT * iterate (raw). Cold (fresh Table, files decoded): ${k(rd.coldScan.rowsPerSec)} rows/s` });
    }

    // ------------------------------------------------------------------ flush / compaction
    if (only.has('flush')) {
      const dir = join(tmp, 'flush');
      fs.mkdirSync(dir, { recursive: true });
      const fc = await timed('flush', () => runChild('flush-compaction', { dir, keys: s.flushKeys, runs: s.flushRuns, seed: seed + 2 }, { log }));
      raw.flush = fc;
      fs.rmSync(dir, { recursive: true, force: true });
      rows.push({ figure: `Flush: rows written to a level-0 file (${k(s.flushKeys)} rows/flush)`, tilstand: `${k(fc.flushRowsPerSec)} rows/s`, sqlite: '—', ratio: '—', target: '≥ 500 k rows/s', status: pass(fc.flushRowsPerSec >= 500_000), notes: `median of ${fc.flushes.length} flushes (sort + Parquet/snappy encode + write + fsync); ${fmt(fc.flushBytesPerRow, 1)} B/row` });
      rows.push({ figure: `Full compaction: rows read from ${fc.compaction.inputFiles} files, merged, written`, tilstand: `${k(fc.compaction.inRowsPerSec)} rows/s in (${k(fc.compaction.outRowsPerSec)} rows/s out)`, sqlite: '—', ratio: '—', target: '≥ 500 k rows/s', status: pass(fc.compaction.inRowsPerSec >= 500_000), notes: `${fmt(fc.compaction.inputRows)} rows in → ${fmt(fc.compaction.outputRows)} out in ${fmt(fc.compaction.sec, 2)} s, cold run cache (decode + merge + encode + fsync); partial-update with 3 sequence groups` });
      rows.push({ figure: 'Read of a compacted data file (cold cache)', tilstand: `${k(fc.coldRead.rowsPerSec)} rows/s`, sqlite: '—', ratio: '—', target: '—', status: 'info', notes: 'fresh Table, one run, decode + scan' });
    }

    // ------------------------------------------------------------------ tags
    if (only.has('tags')) {
      const dir = join(tmp, 'tags');
      fs.mkdirSync(dir, { recursive: true });
      const tg = await timed('tags', () => runChild('tags', { dir, sizes: s.tagSizes, seed: seed + 3, reps: s.tagReps }, { log }));
      raw.tags = tg;
      const sz = tg.sizes as Array<Record<string, number>>;
      const tagMs = sz.map((x) => x.tagCreateMs!);
      const flat = Math.max(...tagMs) <= 3 * Math.min(...tagMs) + 1 && Math.max(...tagMs) <= 20;
      for (const x of sz) {
        rows.push({ figure: `Tag creation at ${k(x.rows!)} rows`, tilstand: `${fmt(x.tagCreateMs!, 2)} ms`, sqlite: `${fmt(x.sqliteCopyMs!, 2)} ms (copy + fsync of ${k(x.sqliteFileBytes!)}B)`, ratio: `${fmt(x.sqliteCopyMs! / x.tagCreateMs!, 1)}× faster`, target: 'same few ms at every size', status: pass(flat), notes: `median of ${s.tagReps}; a tag is one small file (write, fsync, link, dir fsync)` });
      }
      for (const x of sz) {
        rows.push({ figure: `Time travel at ${k(x.rows!)} rows: scan of the tag vs latest`, tilstand: `${k(x.tagReadRowsPerSec!)} vs ${k(x.latestReadRowsPerSec!)} rows/s`, sqlite: '— (needs the copy)', ratio: `${fmt(x.tagReadRowsPerSec! / x.latestReadRowsPerSec!, 2)}× latest`, target: '—', status: 'info', notes: `tag then 10 % of rows updated and committed; fresh Table for each read (${fmt(x.tagReadSec! * 1000, 0)} vs ${fmt(x.latestReadSec! * 1000, 0)} ms)` });
      }
    }

    // ------------------------------------------------------------------ mqtt
    if (only.has('mqtt')) {
      const dir = join(tmp, 'mqtt');
      fs.mkdirSync(dir, { recursive: true });
      const mq = await timed('mqtt', () =>
        runChild('mqtt', { dir, publisherScript: join(BENCH_DIR, 'mqtt-publisher.mjs'), perPublisher: s.mqttPerPublisher, window: 1000, maxMs: s.mqttMaxMs, reps: s.mqttReps, pacedRate: 2000, pacedMs: s.pacedMs }, { log }),
      );
      raw.mqtt = mq;
      const m = mq.median;
      rows.push({ figure: 'MQTT end to end: journal before PUBACK vs bare broker', tilstand: `${k(m.journalMsgPerSec)} msg/s`, sqlite: `${k(m.bareMsgPerSec)} msg/s (same broker, no journal)`, ratio: `${fmt(m.ratio, 2)}×`, target: '≥ 0.8×', status: pass(m.ratio >= 0.8), notes: `EmbeddedBroker (aedes) + journalSink; 3 QoS 1 mqtt.js publishers in a child process on 127.0.0.1, ≤1000 unacked each, ${fmt(s.mqttPerPublisher)} msgs each (≤${s.mqttMaxMs / 1000} s); ${fmt(m.eventsPerCommit, 0)} events/fsync; median of ${s.mqttReps}. The "SQLite" column holds the bare broker. ` +
        `Broker thread from first to last event (medians): bare ${pct(m.bareCpuShare)} CPU; journaled ${pct(m.journalCpuShare)} CPU, ${pct(m.commitShare)} of the time in group commits (insert + fsync on the event loop; the loop's idle time in them is the fsync's wait)` });
      const pj = mq.paced.journal;
      const pb = mq.paced.bare;
      rows.push({
        figure: 'MQTT publish → PUBACK (journaled) at 2,000 ev/s paced',
        tilstand: `p50 ${fmt(pj.p50us / 1000, 2)} / p99 ${fmt(pj.p99us / 1000, 2)} ms`,
        sqlite: `bare: p50 ${fmt(pb.p50us / 1000, 2)} / p99 ${fmt(pb.p99us / 1000, 2)} ms`,
        ratio: `${fmt(pj.p99us / pb.p99us, 1)}× bare (p99)`,
        target: 'p99 ≤ 10 ms',
        status: pass(pj.p99us <= 10_000),
        notes: `${fmt(pj.acked)} events over ${s.pacedMs / 1000} s (achieved ${k(pj.achievedRate)} ev/s); max ${fmt(pj.maxUs / 1000, 1)} ms; EmbeddedBroker + journalSink: PUBACK is sent only after the group fsync (WAL, synchronous=FULL); per-publish hrtime in the publisher process; one run`,
      });
    }

    // ------------------------------------------------------------------ memory
    if (only.has('memory')) {
      const dir = join(tmp, 'memory');
      fs.mkdirSync(dir, { recursive: true });
      // From the bundle with plain node, as a site starts (core/site/DESIGN.md): no tsx loader thread.
      buildChildBundle();
      const base = await runChild('memory', { dir, spec: { seed, keys: 10, events: 0 }, commitEvery: 1, baseline: true }, { bundled: true, log });
      // The peak falls between samples and moves from run to run (226–249 MB in four runs of one
      // commit): the figure is the median run's, with every run's peak beside it.
      const mems: any[] = [];
      for (let r = 0; r < s.memoryReps; r++) {
        const runDir = join(tmp, `memory-${r}`);
        fs.mkdirSync(runDir, { recursive: true });
        mems.push(await timed('memory', () => runChild('memory', { dir: runDir, spec: { seed: seed + 4, keys: s.memoryKeys, events: s.memoryEvents, initialLoad: true }, commitEvery: s.commitEvery }, { bundled: true, log })));
        fs.rmSync(runDir, { recursive: true, force: true });
        log(`  memory run ${r + 1}/${s.memoryReps}: peak RSS ${fmt(mems[r].maxRssMB, 0)} MB`);
      }
      const mem = medianRun(mems, (m) => m.maxRssMB);
      // The same child started without the launch settings: what they buy, and what they cost in CPU.
      const bareDir = join(tmp, 'memory-unlaunched');
      fs.mkdirSync(bareDir, { recursive: true });
      const unl = await timed('memory', () => runChild('memory', { dir: bareDir, spec: { seed: seed + 4, keys: s.memoryKeys, events: s.memoryEvents, initialLoad: true }, commitEvery: s.commitEvery }, { bundled: true, unlaunched: true, log }));
      raw.memory = { baseline: base, held: mem, runs: mems, unlaunched: unl };
      fs.rmSync(dir, { recursive: true, force: true });
      const pk = mem.peakSample;
      const full = s.memoryKeys >= 1_000_000;
      rows.push({
        figure: `Memory: peak RSS of a site process holding ${k(mem.rows)} rows`,
        tilstand: `${fmt(mem.maxRssMB, 0)} MB`,
        sqlite: '—',
        ratio: '—',
        target: full ? '≤ 250 MB' : '≤ 250 MB (judged at 1 M rows, full scale only)',
        status: full ? pass(mem.maxRssMB <= 250) : 'info',
        notes:
          `child runs from its bundle with plain node, as the site does (dist/bench/child.mjs, scripts/build-site.mjs); ingests ${k(s.memoryEvents)} events over ${k(s.memoryKeys)} keys (journal + table, commit every ${fmt(s.commitEvery)}), then scans and does 20 k lookups; ` +
          `site defaults (core/site config.ts): run-cache budget ${fmt(mem.settings.tableCacheBytes / 2 ** 20, 0)} MiB for the catalog, write buffer ${fmt(mem.settings.writeBufferBytes / 2 ** 20, 0)} MiB; ` +
          `launched as a site (core/site/v8-flags.ts SITE_LAUNCH): ${launchLine(mem.settings.launch)}; the site's V8 flags set at its start: ${mem.settings.v8Flags.join(' ') || 'none'}; process CPU ${fmt(mem.cpuSec, 1)} s; ` +
          `largest sampled RSS ${fmt(pk.rssMB, 0)} MB ${pk.stage} (heap used ${fmt(pk.heapUsedMB, 0)} of ${fmt(pk.heapTotalMB, 0)} MB reserved, array buffers ${fmt(pk.arrayBuffersMB, 0)} MB, run cache ~${fmt(pk.runCacheMB, 0)} MB, write buffer ~${fmt(pk.writeBufferMB, 0)} MB; estimates); ` +
          `holding: RSS ${fmt(mem.holding.rssMB, 0)} MB, heap ${fmt(mem.holding.heapUsedMB, 0)} MB, array buffers ${fmt(mem.holding.arrayBuffersMB, 0)} MB, run cache ~${fmt(mem.runCacheMB, 0)} MB (${fmt(mem.runCache.hits)} hits, ${fmt(mem.runCache.misses)} misses, ${fmt(mem.runCache.oversize)} files over budget); write buffer at most ~${fmt(mem.writeBufferPeakMB, 0)} MB before a commit; ` +
          `Node + modules alone: ${fmt(base.maxRssMB, 0)} MB; ` +
          (mems.length > 1 ? `median of ${mems.length} runs (peaks ${mems.map((m) => fmt(m.maxRssMB, 0)).join(', ')} MB; the notes are the median run's)` : 'one run'),
      });
      rows.push({
        figure: `Memory: the same child started without the site's launch settings`,
        tilstand: `${fmt(unl.maxRssMB, 0)} MB`,
        sqlite: '—',
        ratio: `${fmt(unl.maxRssMB / mem.maxRssMB, 2)}× launched`,
        target: '—',
        status: 'info',
        notes:
          `${launchLine(unl.settings.launch)}; process CPU ${fmt(unl.cpuSec, 1)} s (launched: ${fmt(mem.cpuSec, 1)} s, ${fmt((mem.cpuSec / unl.cpuSec - 1) * 100, 0)} % more); ` +
          `largest sampled RSS ${fmt(unl.peakSample.rssMB, 0)} MB ${unl.peakSample.stage} (heap ${fmt(unl.peakSample.heapUsedMB, 0)} of ${fmt(unl.peakSample.heapTotalMB, 0)} MB reserved); holding: RSS ${fmt(unl.holding.rssMB, 0)} MB; one run, right after the launched ones`,
      });
    }

    // ------------------------------------------------------------------ mqtt through mosquitto
    if (only.has('mqtt-external')) {
      const dir = join(tmp, 'mqtt-external');
      fs.mkdirSync(dir, { recursive: true });
      const ex = await timed('mqtt-external', () =>
        runChild('mqtt-external', { dir, publisherScript: join(BENCH_DIR, 'mqtt-publisher.mjs'), perPublisher: s.extPerPublisher, window: 1000, maxMs: s.mqttMaxMs, reps: s.extReps, drainMaxMs: 120_000 }, { log }),
      );
      raw.mqttExternal = ex;
      fs.rmSync(dir, { recursive: true, force: true });
      if (!ex.available) {
        rows.push({ figure: 'MQTT external broker (mosquitto → MqttSource → journal)', tilstand: ex.why.startsWith('mosquitto not installed') ? 'mosquitto not installed' : ex.why, sqlite: '—', ratio: '—', target: '—', status: 'info', notes: `not measured: ${ex.why}. Install Debian's mosquitto (apt-get install mosquitto) to get this figure` });
      } else {
        const m = ex.median;
        const partial = ex.allDrained ? '' : '; NOT ALL DRAINED within 120 s (rate over what was journaled)';
        rows.push({
          figure: 'MQTT external broker: events journaled/s (mosquitto → MqttSource → journal)',
          tilstand: `${k(m.eventsPerSec)} ev/s`,
          sqlite: `${k(m.publishMsgPerSec)} msg/s publish → mosquitto PUBACK`,
          ratio: `${fmt(m.eventsPerSec / m.publishMsgPerSec, 2)}× of publish`,
          target: '—',
          status: 'info',
          notes: `mosquitto ${ex.mosquitto.version} (${ex.mosquitto.bin}) on 127.0.0.1, shipped mosquitto.conf (persistence, autosave every 100 changes, password + ACL; publishers on the modules' listener, client id = username; MqttSource on Tilstand's own listener); MqttSource as the site runs it: ${ex.groups} QoS 1 connections (one per module, MQTT 5, clean start false), PUBACK after journalSink resolved (WAL, synchronous=FULL); 3 mqtt.js publishers in a child process, ${fmt(s.extPerPublisher)} msgs each, ≤1000 unacked; rate from first to last event journaled (${fmt(m.journaled)} events in ${fmt(m.seconds, 2)} s); median of ${s.extReps}${partial}. The "SQLite" column holds the publishers' rate into mosquitto`,
        });
        rows.push({
          figure: 'MQTT external broker: events per fsync (journal group commit)',
          tilstand: `${fmt(m.eventsPerCommit, 2)} ev/fsync`,
          sqlite: '—',
          ratio: '—',
          target: '—',
          status: 'info',
          notes: `journal.stats().eventsPerCommitMean (max ${ex.runs.map((r: any) => r.eventsPerCommitMax).join('/')}); mqtt.js hands a connection one PUBLISH at a time, so at most ${ex.groups} events (one per connection) can share a commit; median of ${s.extReps}`,
        });
      }
    }

    // ------------------------------------------------------------------ publish → visible
    if (only.has('visible')) {
      const dir = join(tmp, 'visible');
      fs.mkdirSync(dir, { recursive: true });
      const vi = await timed('visible', () =>
        runChild('visible', { dir, publisherScript: join(BENCH_DIR, 'mqtt-publisher.mjs'), rate: VISIBLE_RATE, durationMs: s.visibleMs, sampleEvery: s.visibleSampleEvery, budgetMs: VISIBLE_BUDGET_MS, pollMs: VISIBLE_POLL_MS }, { log }),
      );
      raw.visible = vi;
      fs.rmSync(dir, { recursive: true, force: true });
      const bound = vi.budgetMs + 100;
      const ok = vi.unseen === 0 && vi.visibleMs.p99 <= bound;
      rows.push({
        figure: `Publish → visible in the latest snapshot, stock at ${fmt(VISIBLE_RATE)} ev/s paced (running site)`,
        tilstand: `p50 ${fmt(vi.visibleMs.p50, 0)} / p99 ${fmt(vi.visibleMs.p99, 0)} ms`,
        sqlite: '—',
        ratio: `${fmt(vi.visibleMs.p99 / vi.budgetMs, 2)} of budget (p99)`,
        target: `p99 ≤ budget + 100 ms = ${fmt(bound)} ms`,
        status: pass(ok),
        notes: `Site.start in the bench child (embedded broker, Ingestor, tick 250 ms, agent timer off, no UI); stock budget set to ${fmt(vi.budgetMs)} ms in config (default 10 min = a sample every 5 min; 2 s = the shortest default budget, approval_inbox/dead_letters); commit when the oldest pending event is budget/2 old. ${fmt(vi.samples)} samples (every ${s.visibleSampleEvery}th of ${fmt(vi.published)} events over ${s.visibleMs / 1000} s, achieved ${k(vi.achievedRate)} ev/s), ${vi.unseen} never seen; max ${fmt(vi.visibleMs.max, 0)} ms; a reader with its own Catalog polls the latest snapshot id every ${VISIBLE_POLL_MS} ms (${vi.snapshotsSeen} snapshots seen), publish and seen times as wall clock (performance.timeOrigin + now) across the two processes; PUBACK (= journaled) p50 ${fmt(vi.pubackP50Ms, 1)} / p99 ${fmt(vi.pubackP99Ms, 1)} ms, PUBACK → visible p50 ${fmt(vi.ackToVisibleMs.p50, 0)} / p99 ${fmt(vi.ackToVisibleMs.p99, 0)} ms (the commit cadence); freshness breaches counted by the site ${vi.stock?.breaches ?? 'n/a'}`,
      });
    }

    // ------------------------------------------------------------------ dead-letter flood
    if (only.has('flood')) {
      const dir = join(tmp, 'flood');
      fs.mkdirSync(dir, { recursive: true });
      const fl = await timed('flood', () =>
        runChild('flood', { dir, publisherScript: join(BENCH_DIR, 'mqtt-publisher.mjs'), events: s.floodEvents, window: FLOOD_WINDOW, probeEveryMs: FLOOD_PROBE_MS, afterMs: FLOOD_AFTER_MS }, { log }),
      );
      raw.flood = fl;
      fs.rmSync(dir, { recursive: true, force: true });
      rows.push({
        figure: `Dead-letter flood: another module's PUBACK wait while ${fmt(fl.events)} events are refused (running site)`,
        tilstand: `longest ${fmt(fl.probeWaitMs.max, 0)} ms (p50 ${fmt(fl.probeWaitMs.p50, 1)} / p99 ${fmt(fl.probeWaitMs.p99, 0)} ms)`,
        sqlite: '—',
        ratio: '—',
        target: '—',
        status: 'info',
        notes: `Site.start in the bench child as for publish → visible; inventory publishes ${fmt(fl.events)} envelopes of a contract version the site lacks (≤ ${fmt(fl.window)} unacked), ${fmt(fl.floodRate, 0)} ev/s, ${fmt(fl.deadLettersOpen)} dead letters open after; procurement publishes a valid event every ${fl.probeEveryMs} ms until ${FLOOD_AFTER_MS / 1000} s after the flood and times its PUBACK (${fmt(fl.probes)} probes); peak RSS of the bench child ${fmt(fl.peakRssMB, 0)} MB (site and tsx, without the site's launch settings). No target in #9: the figure shows what a healthy module waits (dead_letters' flushes; its compaction runs in slices, core/ingest DESIGN.md)`,
      });
    }

    // ------------------------------------------------------------------ sync of tags
    if (only.has('sync')) {
      const dir = join(tmp, 'sync');
      fs.mkdirSync(dir, { recursive: true });
      const sy = await timed('sync', () => runChild('sync', { dir, rows: s.syncRows, changeFraction: SYNC_CHANGE, seed: seed + 5 }, { log }));
      raw.sync = sy;
      fs.rmSync(dir, { recursive: true, force: true });
      const b = sy.bound;
      const sent = sy.second.stockBytes;
      const ok = sy.first.pending === 0 && sy.second.pending === 0 && sent <= b.expectedMaxBytes && b.newDataRows <= sy.second.changedRows;
      rows.push({
        figure: `Sync: bytes sent for a new tag after 1 % of ${k(s.syncRows)} rows changed vs a full copy`,
        tilstand: `${k(sent)}B (tag 2)`,
        sqlite: `${k(sy.first.stockBytes)}B full copy (tag 1)`,
        ratio: `${fmt((100 * sent) / sy.first.stockBytes, 2)} %`,
        target: `only what changed: ≤ ${k(b.expectedMaxBytes)}B`,
        status: pass(ok),
        notes: `SyncEngine → DirectoryTarget (fsync + rename), stock table of an initDataDir site (seed STOCK_TABLE, bucket 1), scheduled tags off; bytes = outbox sent_bytes of stock steps (files + tag/snapshot JSON + hints) for tag + latest snapshot. Bound derived from the table's metadata: files tag 2 references that tag 1 does not (${b.newFiles} files, ${k(b.newFileBytes)}B: ${b.newDataFiles} data file(s) holding ${fmt(b.newDataRows)} rows for ${fmt(sy.second.changedRows)} changed, ${k(b.newDataBytes)}B, plus manifests and lists) + pointers (${fmt(b.pointerBytes)} B); PASS iff sent ≤ that and the new data files hold no more rows than changed (no old data rewritten or re-sent). Data alone: ${fmt((100 * b.newDataBytes) / b.fullDataBytes, 2)} % of the full data (${k(b.fullDataBytes)}B); sync ${fmt(sy.first.sec, 2)} s vs ${fmt(sy.second.sec, 2)} s; all tables + contracts first/second ${k(sy.first.allBytes)}B / ${k(sy.second.allBytes)}B`,
      });
    }

    // ------------------------------------------------------------------ replay
    if (only.has('replay')) {
      const rp = await timed('replay', () => runChild('replay', { events: s.replayEvents, hours: s.replayHours, items: s.replayItems, timeoutMs: REPLAY_TIMEOUT_MS }, { log }));
      raw.replay = rp;
      const r = rp.result;
      const judged = s.replayEvents >= 2_000_000;
      rows.push({
        figure: `Replay: ${k(r.events)} events over ${r.simulatedHours} h simulated (bench/replay.ts)`,
        tilstand: `${k(r.eventsPerSecond)} ev/s`,
        sqlite: '—',
        ratio: '—',
        target: `≥ ${fmt(REPLAY_TARGET)} ev/s (2 M events in < 10 min)${judged ? '' : ' (judged at 2 M events, full run)'}`,
        status: judged ? pass(r.eventsPerSecond >= REPLAY_TARGET) : 'info',
        notes: `\`${rp.command}\` as a child (default agent every simulated minute: ${fmt(r.agentRuns)} runs, ${fmt(r.proposals)} proposals; ${r.items} items × 4 locations); events/s of the replay step (${fmt(r.replaySeconds, 1)} s wall, ${fmt(r.replayCpuSeconds, 1)} s CPU = ${k(r.eventsPerCpuSecond)} ev/CPU-s); the issue asks "well under 10 minutes" for 2 M events: ≥ 3,334 ev/s is only the 10-minute line, not "well under". Hours scale with events to keep the full run's density (83 k events per simulated hour); one run; steps: ${rp.steps.join('; ')}`,
      });
    }

    // ------------------------------------------------------------------ agent
    if (only.has('agent')) {
      const dir = join(tmp, 'agent');
      fs.mkdirSync(dir, { recursive: true });
      const ag = await timed('agent', () => runChild('agent', { dir, jobs: s.agentJobs, resources: AGENT_RESOURCES, items: AGENT_ITEMS, reps: s.agentReps, seed: seed + 6 }, { log }));
      raw.agent = ag;
      fs.rmSync(dir, { recursive: true, force: true });
      const first = ag.reps[0];
      const errors = ag.reps.flatMap((r: any) => r.ruleErrors);
      rows.push({
        figure: `Agent run over a ${fmt(ag.jobs)}-job work queue (default rules)`,
        tilstand: `${fmt(ag.median.firstMs, 0)} ms first / ${fmt(ag.median.secondMs, 0)} ms next`,
        sqlite: '—',
        ratio: '—',
        target: '—',
        status: 'info',
        notes: `median of ${s.agentReps}; Agent.run() with Inbox (fresh copy of the filled warehouse each repetition, fixed clock). First run: ${fmt(ag.median.created)} proposals created (${Object.entries(first.byRule).map(([r, n]) => `${r} ${n}`).join(', ')}); next run a minute later on the same state: ${first.secondCreated} new, ${first.secondDuplicates} duplicates, ${first.secondWithdrawn} withdrawn. Tables filled through the Ingestor (${fmt(ag.events)} events: ${Object.entries(ag.jobStatus).map(([st, n]) => `${n} ${st}`).join(', ')} jobs, ${ag.resources} resources, ${fmt(ag.stockRows)} stock rows; ${ag.deadLetters} dead letters; seeded). Run time includes tagging 3 tables and the inbox commit; a run is synchronous, so it holds the site's event loop (and PUBACKs) that long${errors.length ? `; RULE ERRORS: ${errors.join(' | ')}` : ''}`,
      });
      const jc = first.jobsCheck;
      const sc = first.stockCheck;
      rows.push({
        figure: `Agent check between runs over the same queue, after one commit`,
        tilstand: `${fmt(ag.median.jobsCheckMs, 1)} ms (${fmt(first.jobChanges)} jobs) / ${fmt(ag.median.stockCheckMs, 1)} ms (${fmt(first.stockChanges)} stock rows)`,
        sqlite: '—',
        ratio: '—',
        target: '—',
        status: 'info',
        notes: `median of ${s.agentReps}; Agent.recheckChanged() (a site calls it every second between runs, on its event loop: the approval inbox's age is how long a commit waits for it, budget 2 s) after the two runs above, each after one commit through the same Ingestor: operations releasing ${fmt(Math.min(100, ag.jobStatus.blocked ?? 0))} blocked jobs and starting ${fmt(Math.min(100, ag.jobStatus.released ?? 0))} released ones (${jc.checked} of ${fmt(ag.median.created)} open proposals cite a changed row and are re-checked, ${jc.withdrawn} withdrawn), then inventory counting all ${fmt(first.stockChanges)} stock rows anew (${sc.checked} re-checked of ${sc.open + sc.withdrawn} open, ${sc.withdrawn} withdrawn); the time includes reading the commits' changed keys (Table.changes, delta) and the inbox commit of the withdrawals`,
      });
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    cleanup();
  }
  const totalSec = (Date.now() - started) / 1000;
  const meta = {
    date: new Date().toISOString(),
    scale: s,
    seed,
    machine: machine(),
    loadavgStart: load0,
    loadavgEnd: os.loadavg(),
    totalSeconds: totalSec,
    phaseSeconds: timings,
    durability: {
      tilstandJournal: 'better-sqlite3 WAL, synchronous=FULL, group commit ≤ 1,000 events (one fsync per group)',
      tilstandTable: 'data files, manifests and snapshots fsynced (writeNew / createAtomic), atomic snapshot link',
      sqlite1k: 'WAL, synchronous=FULL, 1,000 events per transaction',
      sqlite10k: 'WAL, synchronous=NORMAL, 10,000 events per transaction (not durable at commit)',
      sqliteSettings: SQLITE_SETTINGS,
    },
  };
  const json = { meta, rows, raw };
  const markdown = renderMarkdown(meta, rows);
  fs.mkdirSync(o.outDir, { recursive: true });
  const stamp = meta.date.replace(/[:.]/g, '-');
  fs.writeFileSync(join(o.outDir, `${stamp}-${s.name}.json`), JSON.stringify(json, null, 2));
  fs.writeFileSync(join(o.outDir, `${stamp}-${s.name}.md`), markdown);
  if (!o.noLatest) {
    fs.writeFileSync(join(o.outDir, 'latest.json'), JSON.stringify(json, null, 2));
    fs.writeFileSync(join(o.outDir, 'latest.md'), markdown);
  }
  log(`total ${totalSec.toFixed(0)} s`);
  return { rows, json, markdown };
}

function renderMarkdown(meta: any, rows: Row[]): string {
  const m = meta.machine;
  const esc = (x: string) => x.replace(/\|/g, '\\|');
  const lines = [
    `# Tilstand benchmarks — ${meta.scale.name} run, ${meta.date}`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGB} GB, Linux ${m.kernel}; load average at start ${meta.loadavgStart.map((x: number) => x.toFixed(1)).join(' / ')}, at end ${meta.loadavgEnd.map((x: number) => x.toFixed(1)).join(' / ')} (shared machine: figures are noisy, ratios within a repetition are what matters).`,
    `Node ${m.node}; ${Object.entries(m.packages).map(([n, v]) => `${n} ${v}`).join(', ')}; commit ${m.git.commit}${m.git.coreDirty ? ' (core/ has uncommitted changes of other engineers)' : ''}.`,
    `Workload: ${meta.scale.events.toLocaleString('en-US')} events over ${meta.scale.keys.toLocaleString('en-US')} keys, 20 % of keys take 80 % of events, seed ${meta.seed}; medians of ${meta.scale.ingestReps} ingest repetitions (each engine in its own child process).`,
    `Durability: Tilstand journal ${meta.durability.tilstandJournal}; table ${meta.durability.tilstandTable}. SQLite: ${meta.durability.sqliteSettings}.`,
    `Total time ${Math.round(meta.totalSeconds)} s (${Object.entries(meta.phaseSeconds).map(([k, v]) => `${k} ${Math.round(v as number)} s`).join(', ')}).`,
    '',
    '| figure | Tilstand | SQLite | ratio | target | result | notes |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${esc(r.figure)} | ${esc(r.tilstand)} | ${esc(r.sqlite)} | ${esc(r.ratio)} | ${esc(r.target)} | ${r.status === 'info' ? '—' : `**${r.status}**`} | ${esc(r.notes)} |`),
    '',
  ];
  return lines.join('\n');
}
