// Micro benchmark of the ingest journal (core/ingest/journal.ts) alone: the benchmark workload's
// ~230-byte envelopes appended through `Journal.append` in windows of 1,000 per tick (= one group
// commit of groupEventsMax 1,000, as bench/tasks.ts's ingest does), then read back once.
//
//   node bin/run-ts.mjs bench/journal-micro.ts [events=200000] [runs=5] [journal module…]
//   node bin/run-ts.mjs bench/journal-micro.ts --child <journal module> <events> <window>
//
// Every run is a fresh child process. Given several journal modules (default: the current
// core/ingest/journal.ts; a baseline is e.g. `git show <commit>:core/ingest/journal.ts` saved in a
// directory with a package.json of {"type":"module"} and a node_modules symlink), the runs
// alternate between them in a rotating order so load drift on a shared machine hits all; medians
// per module are reported.
// Per run: wall events/s, CPU µs per event (process.cpuUsage, all threads: robust on a loaded
// machine), bytes written (/proc/self/io wchar) per event for the appends alone and including
// close (close checkpoints the WAL into journal.db), the file size, and CPU µs per event read.
// Then, in the same child, the disk's floor for the same commits: as many groups of the same mean
// size (journal.db's bytes per commit) written with one write + fdatasync each to a plain file —
// once appended to a growing file, once overwriting a file allocated and synced beforehand — so
// the journal's ms per commit stands beside what the write and flush alone cost on this disk.

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, procIo } from './util.ts';
import { packWorkload, payloadAt, T0_MS, TOPICS, MODULES } from './workload.ts';

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface RunResult {
  events: number;
  eventsPerSecWall: number;
  cpuUsPerEvent: number;
  /** Of which in the kernel (writes, fsync, checkpoint copies). */
  sysUsPerEvent: number;
  wcharPerEvent: number;
  wcharPerEventWithClose: number;
  fileBytesPerEvent: number;
  readCpuUsPerEvent: number;
  commits: number;
  commitMsTotal: number;
  commitMsMax: number;
  /** The journal's own mean per group commit (encode + INSERT + COMMIT). */
  commitMsMean: number;
  /** The floor: one write + fdatasync of a group-sized buffer, appended / overwriting in place. */
  floorAppendMsPerCommit: number;
  floorAppendCpuUsPerEvent: number;
  floorOverwriteMsPerCommit: number;
  floorOverwriteCpuUsPerEvent: number;
}

/** Per commit ms and CPU µs per event of `commits` writes of `bytes` each, one fdatasync after each. */
function floor(dir: string, commits: number, bytes: number, events: number, preallocated: boolean): { msPerCommit: number; cpuUsPerEvent: number } {
  const file = join(dir, preallocated ? 'floor-overwrite' : 'floor-append');
  const buf = Buffer.alloc(bytes, 0x5a);
  const fd = fs.openSync(file, preallocated ? 'w+' : 'a');
  try {
    if (preallocated) {
      for (let k = 0; k < commits; k++) fs.writeSync(fd, Buffer.alloc(bytes), 0, bytes, k * bytes);
      fs.fdatasyncSync(fd);
    }
    const c0 = cpuMs();
    const t0 = performance.now();
    for (let k = 0; k < commits; k++) {
      fs.writeSync(fd, buf, 0, bytes, preallocated ? k * bytes : null);
      fs.fdatasyncSync(fd);
    }
    const ms = performance.now() - t0;
    return { msPerCommit: ms / commits, cpuUsPerEvent: ((cpuMs() - c0) * 1000) / events };
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
}

async function child(modulePath: string, events: number, window: number): Promise<RunResult> {
  const { Journal } = (await import(pathToFileURL(resolve(modulePath)).href)) as typeof import('../core/ingest/journal.ts');
  const w = packWorkload({ seed: 20261201, keys: 100_000, events });
  const dir = fs.mkdtempSync(join(tmpdir(), 'tilstand-journal-micro-'));
  try {
    const journal = Journal.open(dir, { groupEventsMax: window });
    const ps: Promise<bigint>[] = new Array(window);
    const io0 = procIo();
    const c0 = cpuMs();
    const s0 = process.cpuUsage().system;
    const t0 = performance.now();
    for (let base = 0; base < events; base += window) {
      const n = Math.min(window, events - base);
      for (let j = 0; j < n; j++) {
        const i = base + j;
        const m = MODULES[w.modules[i]!]!;
        ps[j] = journal.append({ topic: TOPICS[w.modules[i]!]!, payload: payloadAt(w, i), receivedAtMs: T0_MS + i, module: m.module, stream: m.stream, seq: Math.floor(i / 3) + 1 });
      }
      await Promise.all(n === window ? ps : ps.slice(0, n));
    }
    const wallMs = performance.now() - t0;
    const cpu = cpuMs() - c0;
    const sys = (process.cpuUsage().system - s0) / 1000;
    const io1 = procIo();
    const st = journal.stats();
    journal.close();
    const io2 = procIo();
    const fileBytes = fs.statSync(join(dir, 'journal.db')).size;
    const again = Journal.open(dir);
    const r0 = cpuMs();
    let read = 0;
    for (const e of again.readAfter(0n)) read += e.payload.length > 0 ? 1 : 0;
    const readCpu = cpuMs() - r0;
    again.close();
    if (read !== events) throw new Error(`read back ${read} of ${events} events`);
    const groupBytes = Math.max(1, Math.round(fileBytes / st.commits));
    const fa = floor(dir, st.commits, groupBytes, events, false);
    const fo = floor(dir, st.commits, groupBytes, events, true);
    return {
      events,
      eventsPerSecWall: events / (wallMs / 1000),
      cpuUsPerEvent: (cpu * 1000) / events,
      sysUsPerEvent: (sys * 1000) / events,
      wcharPerEvent: (io1.wchar - io0.wchar) / events,
      wcharPerEventWithClose: (io2.wchar - io0.wchar) / events,
      fileBytesPerEvent: fileBytes / events,
      readCpuUsPerEvent: (readCpu * 1000) / events,
      commits: st.commits,
      commitMsTotal: st.commitMsTotal,
      commitMsMax: st.commitMsMax,
      commitMsMean: st.commitMsTotal / st.commits,
      floorAppendMsPerCommit: fa.msPerCommit,
      floorAppendCpuUsPerEvent: fa.cpuUsPerEvent,
      floorOverwriteMsPerCommit: fo.msPerCommit,
      floorOverwriteCpuUsPerEvent: fo.cpuUsPerEvent,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function runChild(modulePath: string, events: number): RunResult {
  const r = spawnSync(process.execPath, ['bin/run-ts.mjs', 'bench/journal-micro.ts', '--child', modulePath, String(events), '1000'], { encoding: 'utf8' });
  const line = r.stdout.split('\n').find((l) => l.startsWith('@@RESULT '));
  if (r.status !== 0 || !line) throw new Error(`child ${modulePath} failed: ${r.stderr}`);
  return JSON.parse(line.slice('@@RESULT '.length)) as RunResult;
}

const args = process.argv.slice(2);
if (args[0] === '--child') {
  const res = await child(args[1]!, Number(args[2]), Number(args[3]));
  console.log(`@@RESULT ${JSON.stringify(res)}`);
} else {
  const events = Number(args[0] ?? 200_000);
  const runs = Number(args[1] ?? 5);
  const modules = args.length > 2 ? args.slice(2) : ['core/ingest/journal.ts'];
  const results = new Map<string, RunResult[]>(modules.map((m) => [m, []]));
  for (let r = 0; r < runs; r++) {
    // Rotate the order every run (A B C, B C A, …) so load drift on a shared machine hits all.
    for (let k = 0; k < modules.length; k++) {
      const m = modules[(k + r) % modules.length]!;
      const res = runChild(m, events);
      results.get(m)!.push(res);
      console.log(JSON.stringify({ run: r, module: m, ...res }));
    }
  }
  const summary: Record<string, Record<string, number>> = {};
  for (const [name, rs] of results) {
    const keys = Object.keys(rs[0]!) as Array<keyof RunResult>;
    summary[name] = Object.fromEntries(keys.map((k) => [k, Math.round(median(rs.map((x) => x[k])) * 100) / 100]));
  }
  console.log(JSON.stringify({ medians: summary }, null, 1));
}
