// Replay rate: a generated busy site's day replayed through `runReplay` (core/replay), the same
// ingest and commit path as the site, on a simulated clock, with the default agent every minute.
//
//   node bin/run-ts.mjs bench/replay.ts [--events 2000000] [--hours 24] [--items 2000] [--no-agent] [--keep]
//   node --cpu-prof --cpu-prof-dir=bench/results/profiles bin/run-ts.mjs bench/replay.ts --events 200000
//
// Steps (each timed, printed to stderr; the result as one JSON line on stdout):
//   1. a data directory with the default budgets: the initial rows ingested and committed, then a
//      replay cut (tag) — the day starts here;
//   2. N events (demo-like: operations, inventory, commerce, procurement streams; items × 4 locations
//      stock rows) appended to the journal with receive times spread evenly over the day — not
//      processed, the way a journal holds a day that a fixture exports;
//   3. `exportFixture` → a fixture folder;
//   4. `runReplay` with the default agent (1,440 runs for 24 h) — the figure: events/s of step 4.
// Everything lives in one temporary directory (on /dev/shm when present, as the replay's scratch),
// removed at the end unless --keep.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { ContractRegistry } from '../core/ingest/contracts.ts';
import { DEFAULT_TABLE_BUDGETS } from '../core/ingest/freshness.ts';
import { Ingestor } from '../core/ingest/ingestor.ts';
import { Journal } from '../core/ingest/journal.ts';
import { SEED_BINDINGS } from '../core/ingest/seed-bindings.ts';
import { SEED_CONTRACTS } from '../core/ingest/seed-contracts.ts';
import { SEED_TABLES } from '../core/ingest/seed-tables.ts';
import { Catalog } from '../core/lsm/index.ts';
import { openInboxTables } from '../core/inbox/index.ts';
import { DemoEvents } from '../core/replay/demo-events.ts';
import { exportFixture, makeCut } from '../core/replay/export.ts';
import { agentSpecFrom } from '../core/replay/agent-spec.ts';
import { progressBar } from '../core/replay/progress.ts';
import { defaultScratchParent, runReplay } from '../core/replay/replay.ts';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const EVENTS = arg('events', 2_000_000);
const HOURS = arg('hours', 24);
const ITEMS = arg('items', 2000);
const keep = process.argv.includes('--keep');
/** --no-agent: replay with an empty rule set (the agent still runs, tags and submits): the ingest path alone. */
const noAgent = process.argv.includes('--no-agent');
const T0 = Date.UTC(2026, 10, 30, 0, 0, 0);
const log = (s: string) => process.stderr.write(`${s}\n`);
/** CPU time (user + system, ms) of the last `timed` step: less sensitive to a loaded machine than wall time. */
let lastCpuMs = 0;
const timed = async <T>(what: string, f: () => Promise<T> | T): Promise<[T, number]> => {
  const t = performance.now();
  const c = process.cpuUsage();
  const r = await f();
  const ms = performance.now() - t;
  const cpu = process.cpuUsage(c);
  lastCpuMs = (cpu.user + cpu.system) / 1000;
  log(`${what}: ${(ms / 1000).toFixed(1)} s wall, ${(lastCpuMs / 1000).toFixed(1)} s CPU (user ${(cpu.user / 1e6).toFixed(1)}, system ${(cpu.system / 1e6).toFixed(1)})`);
  return [r, ms];
};

const dir = mkdtempSync(join(defaultScratchParent(), 'tilstand-bench-replay-'));
const cleanup = () => {
  if (!keep) rmSync(dir, { recursive: true, force: true });
};
process.on('SIGINT', () => (cleanup(), process.exit(130)));
log(`bench/replay: ${EVENTS} events over ${HOURS} h, ${ITEMS} items × 4 locations; load ${loadavg().map((x) => x.toFixed(1)).join(' ')}; dir ${dir}`);

try {
  const data = join(dir, 'site');
  mkdirSync(join(data, 'contracts'), { recursive: true });
  writeFileSync(join(data, 'config.json'), JSON.stringify({ format: 1, site: 'bench', bindings: 'seed', tables: DEFAULT_TABLE_BUDGETS.filter((b) => b.table !== 'approval_inbox') }));
  const contracts = new ContractRegistry(join(data, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
  let now = T0;
  const clock = () => now;
  const gen = new DemoEvents({ site: 'bench', seed: 20261130, items: ITEMS, jobs: 60 });

  // 1. The state at the start of the day, and the cut.
  await timed('initial state + cut', async () => {
    const catalog = new Catalog(join(data, 'warehouse'), { clock });
    const journal = Journal.open(data, { nowMs: clock });
    const ing = Ingestor.open({ site: 'bench', catalog, database: 'site_bench', journal, contracts, bindings: [...SEED_BINDINGS], tables: [...SEED_TABLES], budgets: [], clock, onWarning: () => undefined });
    const init = gen.initial(T0 - 60_000);
    await Promise.all(init.map((e) => ing.accept(e.topic, e.payload, e.atMs)));
    ing.commitAll();
    ing.close();
    openInboxTables(catalog, 'site_bench');
    makeCut(catalog, 'site_bench', 'replay-day', { clock });
    journal.close();
  });

  // 2. The day's events in the journal (received, not yet processed).
  const span = HOURS * 3600_000;
  await timed(`journal ${EVENTS} events`, async () => {
    const journal = Journal.open(data, { groupEventsMax: 5000 });
    let n = 0;
    let step = 0;
    const steps = Math.ceil(EVENTS / 1.1);
    while (n < EVENTS) {
      const at = T0 + 1 + Math.floor((step++ * span) / steps);
      const batch: Promise<bigint>[] = [];
      for (const e of gen.step(Math.min(at, T0 + span))) {
        if (n++ >= EVENTS) break;
        const m = /events\/([^/]+)\/([^/]+)$/.exec(e.topic)!;
        batch.push(journal.append({ topic: e.topic, payload: e.payload, receivedAtMs: e.atMs, module: m[1]!, stream: m[2]! }));
      }
      if (n % 50_000 < 3) {
        journal.flush();
        await Promise.all(batch);
      }
    }
    journal.flush();
    await new Promise((r) => setImmediate(r));
    journal.close();
  });

  // 3. Export.
  const fixture = join(dir, 'fixture');
  const [m] = await timed('export', () => exportFixture({ data, tag: 'day', untilMs: T0 + span, out: fixture }));
  log(`fixture: ${m.events.count} events, ${m.files.length} files`);

  // 4. Replay.
  const bar = progressBar(process.stderr);
  const [r, ms] = await timed('replay', () => runReplay({ fixture, out: join(dir, 'run'), ...(noAgent ? { agent: agentSpecFrom({ label: 'no-rules', rules: [] }, 'no-rules') } : {}), onProgress: (p) => bar.update(p) }));
  bar.done();
  const result = {
    figure: noAgent ? 'replay (no rules)' : 'replay',
    items: ITEMS,
    events: r.manifest.counts.events,
    simulatedHours: HOURS,
    agentRuns: r.manifest.counts.agentRuns,
    proposals: r.manifest.counts.proposals,
    replaySeconds: Math.round(ms / 100) / 10,
    eventsPerSecond: Math.round(r.manifest.counts.events / (ms / 1000)),
    replayCpuSeconds: Math.round(lastCpuMs / 100) / 10,
    eventsPerCpuSecond: Math.round(r.manifest.counts.events / (lastCpuMs / 1000)),
    loadavgEnd: loadavg().map((x) => Math.round(x * 10) / 10),
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  cleanup();
}
