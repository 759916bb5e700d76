// Micro benchmarks of core/lsm's hot paths on the bench's stock table, one phase per process:
//
//   node bin/run-ts.mjs bench/lsm-micro.ts write   [events=1000000] [keys=100000]
//   node bin/run-ts.mjs bench/lsm-micro.ts flush   [keys=100000]
//   node bin/run-ts.mjs bench/lsm-micro.ts read    [keys=1000000] [lookups=1000000]
//   node bin/run-ts.mjs bench/lsm-micro.ts compact [keys=500000] [runs=5] [reps=1]
//   node bin/run-ts.mjs bench/lsm-micro.ts expire  [tags=1500] [retained=300] [commits=100] [tagsPerCommit=1]
//
// Rates are by CPU time (process.cpuUsage), robust on a loaded machine. Add `node --cpu-prof --cpu-prof-dir=/tmp/prof` in front for a profile. Each phase prints one JSON
// line: medians of 3 where repeated, memory from process.memoryUsage() after a forced GC when
// node runs with --expose-gc.

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as inspector from 'node:inspector';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalog } from '../core/lsm/index.ts';
import { STOCK_TABLE } from '../core/ingest/seed-tables.ts';
import { keyOf, MODULES, prng } from './workload.ts';

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
// CPU time of this process (all threads), in ms: on a loaded shared machine wall time mostly
// measures the neighbours; CPU time measures the code. Both are reported.
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const now = cpu;
const wall = () => performance.now();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function newTable(dir: string, options: Record<string, string> = {}, clock?: () => number) {
  const catalog = new Catalog(join(dir, 'warehouse'), clock ? { clock } : {});
  catalog.createDatabase('db', true);
  return catalog.createTable(
    { database: 'db', table: 'stock' },
    {
      fields: STOCK_TABLE.fields.map((f) => ({ name: f.name, type: f.type })),
      primaryKeys: [...STOCK_TABLE.primaryKeys],
      partitionKeys: [],
      options: { ...STOCK_TABLE.options, ...options },
    },
  );
}

/** The bench's event stream without JSON: (module, key, seq, qty), 20 % of keys take 80 %. */
function* events(n: number, keys: number, seed = 20261201) {
  const rnd = prng(seed);
  const hotN = Math.floor(keys * 0.2);
  const seqs = [0, 0, 0];
  const names = Array.from({ length: keys }, (_, k) => keyOf(k));
  const json = names.map((k) => `{"item":"${k.item}","location":"${k.location}"}`);
  for (let i = 0; i < n; i++) {
    const m = Math.floor(rnd() * 3);
    const hot = rnd() < 0.8;
    const k = hot ? Math.floor(rnd() * hotN) : hotN + Math.floor(rnd() * (keys - hotN));
    // Fresh flat strings per event, as the ingest path's JSON.parse produces them.
    const parsed = JSON.parse(json[(k * 7919) % keys]!) as { item: string; location: string };
    yield { m, item: parsed.item, location: parsed.location, seq: ++seqs[m]!, qty: Math.floor(rnd() * 1000) };
  }
}

function rowOf(e: { m: number; item: string; location: string; seq: number; qty: number }): Record<string, unknown> {
  const d = MODULES[e.m]!;
  return { item: e.item, location: e.location, [d.column]: e.qty, [d.seqColumn]: BigInt(e.seq) };
}

const phases: Record<string, (args: number[], dir: string) => unknown> = {
  write([n = 1_000_000, keys = 100_000], dir) {
    // Events are made in windows of 1,000 outside the timed part (as ingest parses a window, then
    // applies it), so the harness keeps no million-object heap for the GC to walk.
    const table = newTable(dir, { 'write-buffer-size': '4 gb', 'write-only': 'true' });
    const times: number[] = [];
    let perRecord = 0;
    let estimate = 0;
    let flushMs = 0;
    for (let r = 0; r < 3; r++) {
      const w = table.newWriter({ commitUser: 'm' });
      const h0 = heap();
      let spent = 0;
      const window: Record<string, unknown>[] = [];
      const flushWindow = () => {
        const t = now();
        for (const e of window) w.writeRecord(e);
        spent += now() - t;
        window.length = 0;
      };
      for (const e of events(n, keys)) {
        window.push(rowOf(e));
        if (window.length === 1000) flushWindow();
      }
      flushWindow();
      times.push(spent);
      const h1 = heap();
      estimate = w.bufferedEstimateBytes;
      perRecord = (h1 - h0) / Math.min(keys, n);
      const f = now();
      w.flush();
      flushMs = now() - f;
      w.close();
    }
    return {
      events: n,
      eventsPerSec: n / (median(times) / 1000),
      ms: times.map(Math.round),
      bufferHeapBytesPerKey: Math.round(perRecord),
      bufferEstimateBytesPerKey: Math.round(estimate / keys),
      flushMs: Math.round(flushMs),
      rssMB: Math.round(process.memoryUsage().rss / 1e6),
    };
  },

  flush([keys = 100_000], dir) {
    const table = newTable(dir, { 'write-only': 'true' });
    const w = table.newWriter({ commitUser: 'm' });
    const names = Array.from({ length: keys }, (_, k) => keyOf(k));
    const times: number[] = [];
    const rnd = prng(1);
    for (let r = 0; r < 3; r++) {
      const d = MODULES[r % 3]!;
      for (const k of names) w.writeRecord({ item: k.item, location: k.location, [d.column]: Math.floor(rnd() * 1000), [d.seqColumn]: BigInt(r + 1) });
      const t = now();
      w.flush();
      times.push(now() - t);
    }
    w.close();
    return { keys, rowsPerSec: keys / (median(times) / 1000), ms: times.map(Math.round) };
  },

  compact([keys = 500_000, runs = 5, reps = 1], dir) {
    // The inputs are written once; each repetition compacts a fresh copy of the warehouse with a
    // cold run cache (as the bench's flush-compaction child). `sha256` hashes the output files'
    // bytes (names are random): equal across versions of the code means byte-identical files.
    // MICRO_PROF=<dir> writes a CPU profile of the compactions alone.
    const table = newTable(dir, { 'write-only': 'true' });
    const w = table.newWriter({ commitUser: 'm' });
    const names = Array.from({ length: keys }, (_, k) => keyOf(k));
    const rnd = prng(1);
    for (let r = 0; r < runs; r++) {
      const d = MODULES[r % 3]!;
      for (const k of names) w.writeRecord({ item: k.item, location: k.location, [d.column]: Math.floor(rnd() * 1000), [d.seqColumn]: BigInt(r + 1) });
      w.commit();
    }
    w.close();
    const prof = process.env.MICRO_PROF;
    const session = prof ? new inspector.Session() : undefined;
    if (session) {
      session.connect();
      session.post('Profiler.enable');
      session.post('Profiler.start');
    }
    const cpuSec: number[] = [];
    const wallSec: number[] = [];
    let sha256 = '';
    for (let i = 0; i < reps; i++) {
      const copy = join(dir, `rep-${i}`);
      fs.cpSync(join(dir, 'warehouse'), copy, { recursive: true });
      const t2 = new Catalog(copy).getTable({ database: 'db', table: 'stock' });
      const w2 = t2.newWriter({ commitUser: 'm' });
      gc();
      const c = now();
      const t = wall();
      w2.compact(true);
      wallSec.push((wall() - t) / 1000);
      cpuSec.push((now() - c) / 1000);
      w2.close();
      const h = createHash('sha256');
      const latest = t2.latestSnapshot()!;
      for (const b of t2.buckets(latest)) for (const f of b.files) h.update(fs.readFileSync(t2.dataFilePath(b.partition, b.bucket, f.fileName)));
      sha256 = h.digest('hex').slice(0, 16);
      fs.rmSync(copy, { recursive: true, force: true });
    }
    if (session && prof) {
      session.post('Profiler.stop', (err, r) => {
        if (!err) {
          fs.mkdirSync(prof, { recursive: true });
          fs.writeFileSync(join(prof, `compact-${process.pid}.cpuprofile`), JSON.stringify(r.profile));
        }
      });
      session.disconnect();
    }
    const sec = median(cpuSec);
    return {
      inRows: keys * runs,
      inRowsPerSec: (keys * runs) / sec,
      outRowsPerSec: keys / sec,
      sec,
      wallInRowsPerSec: (keys * runs) / median(wallSec),
      cpuSec: cpuSec.map((x) => +x.toFixed(3)),
      wallSec: wallSec.map((x) => +x.toFixed(3)),
      sha256,
      rssMB: Math.round(process.memoryUsage().rss / 1e6),
    };
  },

  // Expiration and tag bookkeeping per commit at a site's steady state: a commit of a few rows
  // every simulated minute, `tags` tags (one per setup commit, kept `tags` minutes, so about one
  // expires per measured commit), `snapshot.num-retained.max` = `retained`. Setup runs write-only
  // (compacting by hand), then one warm-up commit expires down to `retained` snapshots; each of
  // the `commits` measured commits writes 3 rows, commits (compaction + expiration) and creates
  // `tagsPerCommit` tags. CPU time per commit (process.cpuUsage), median and p90.
  expire([tags = 1500, retained = 300, commits = 100, tagsPerCommit = 1], dir) {
    let simNow = Date.UTC(2026, 11, 1, 8, 0, 0);
    const minute = 60_000;
    const table = newTable(dir, { 'write-only': 'true', 'snapshot.num-retained.max': String(retained), 'snapshot.time-retained': '7 d', 'snapshot.expire.limit': '100000' }, () => simNow);
    const rnd = prng(3);
    const write = (w: ReturnType<typeof table.newWriter>, n: number) => {
      for (let i = 0; i < n; i++) {
        const k = keyOf(Math.floor(rnd() * 1000));
        const d = MODULES[i % 3]!;
        w.writeRecord({ item: k.item, location: k.location, [d.column]: Math.floor(rnd() * 1000), [d.seqColumn]: BigInt(simNow + i) });
      }
    };
    let w = table.newWriter({ commitUser: 'm' });
    const t0 = wall();
    for (let i = 0; i < tags; i++) {
      simNow += minute;
      write(w, 3);
      w.commit();
      if (i % 5 === 4) w.compact();
      table.createTag(`t-${i}`, undefined, tags * minute);
    }
    w.close();
    const setupWallMs = wall() - t0;
    table.alter([{ kind: 'setOption', key: 'write-only', value: 'false' }]);
    w = table.newWriter({ commitUser: 'm' });
    simNow += minute;
    write(w, 3);
    let t = now();
    const warm = w.commit();
    const warmMs = now() - t;
    const per: number[] = [];
    let expired = 0;
    let expiredTags = 0;
    let deleted = 0;
    let tagN = 0;
    for (let c = 0; c < commits; c++) {
      simNow += minute;
      write(w, 3);
      t = now();
      const r = w.commit();
      per.push(now() - t);
      for (let j = 0; j < tagsPerCommit; j++) table.createTag(`m-${tagN++}`, undefined, tags * minute);
      expired += r.expire?.expiredSnapshots.length ?? 0;
      expiredTags += r.expire?.expiredTags.length ?? 0;
      deleted += r.expire?.deletedFiles.length ?? 0;
    }
    w.close();
    const sorted = [...per].sort((a, b) => a - b);
    return {
      tags: table.listTags().length,
      snapshots: table.snapshots.listIds().length,
      warmUpExpired: warm.expire?.expiredSnapshots.length,
      warmUpCpuMs: Math.round(warmMs),
      commits,
      cpuMsPerCommitMedian: +median(per).toFixed(2),
      cpuMsPerCommitP90: +sorted[Math.floor(sorted.length * 0.9)]!.toFixed(2),
      cpuMsPerCommitMean: +(per.reduce((a, b) => a + b, 0) / per.length).toFixed(2),
      expiredSnapshots: expired,
      expiredTags,
      deletedFiles: deleted,
      setupWallMs: Math.round(setupWallMs),
    };
  },

  read([keys = 1_000_000, lookups = 1_000_000], dir) {
    const table = newTable(dir);
    const w = table.newWriter({ commitUser: 'm' });
    const names = Array.from({ length: keys }, (_, k) => keyOf(k));
    for (const k of names) w.writeRecord({ item: k.item, location: k.location, on_hand: 1, inventory_seq: 1n, reserved: 2, commerce_seq: 1n, inbound: 3, procurement_seq: 1n });
    w.commit();
    w.compact(true);
    w.close();
    const t2 = new Catalog(join(dir, 'warehouse')).getTable({ database: 'db', table: 'stock' });
    const r = t2.reader();
    const h0 = heap();
    let t = now();
    let n = 0;
    for (const _ of r.scan()) n++;
    const coldMs = now() - t;
    const h1 = heap();
    const scans: number[] = [];
    for (let i = 0; i < 3; i++) {
      t = now();
      n = 0;
      for (const _ of r.scan()) n++;
      scans.push(now() - t);
    }
    const rnd = prng(7);
    const probe = Array.from({ length: lookups }, () => {
      const k = names[Math.floor(rnd() * keys)]!;
      return JSON.parse(`{"item":"${k.item}","location":"${k.location}"}`) as { item: string; location: string };
    });
    const looks: number[] = [];
    let miss = 0;
    for (let i = 0; i < 3; i++) {
      t = now();
      for (const p of probe) if (r.get(p) === undefined) miss++;
      looks.push(now() - t);
    }
    const lat = new Float64Array(Math.min(lookups, 200_000));
    for (let i = 0; i < lat.length; i++) {
      const a = process.hrtime.bigint();
      r.get(probe[i]!);
      lat[i] = Number(process.hrtime.bigint() - a) / 1000;
    }
    lat.sort();
    r.close();
    return {
      rows: n,
      coldScanRowsPerSec: n / (coldMs / 1000),
      scanRowsPerSec: n / (median(scans) / 1000),
      lookupsPerSec: lookups / (median(looks) / 1000),
      p50us: lat[Math.floor(lat.length * 0.5)],
      p99us: lat[Math.floor(lat.length * 0.99)],
      miss,
      cacheHeapBytesPerRow: Math.round((h1 - h0) / keys),
      cacheEstimateBytesPerRow: Math.round(t2.cache.usedBytes / keys),
      rssMB: Math.round(process.memoryUsage().rss / 1e6),
    };
  },
};

const [phase = 'write', ...rest] = process.argv.slice(2);
const f = phases[phase];
if (!f) throw new Error(`unknown phase ${phase}; one of ${Object.keys(phases).join(', ')}`);
const dir = fs.mkdtempSync(join(tmpdir(), 'lsm-micro-'));
try {
  const w0 = wall();
  const out = f(rest.map(Number), dir);
  console.log(JSON.stringify({ phase, ...(out as object), note: 'rates by CPU time of the process', phaseWallMs: Math.round(wall() - w0) }));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
