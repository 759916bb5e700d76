// The measurements of issue #9 that need more of the site than the table store and the journal:
// MQTT through an external mosquitto, publish-to-visible through the running site, sync of tags
// to a directory "HQ", the replay rate, and the agent over a 10,000-job work queue. Each runs in
// its own child process (child.ts), like tasks.ts.
//
// The heavy modules (core/site, core/sync, core/agents, core/inbox) are imported inside each task,
// so a child running another figure (and the memory figure's baseline child) loads none of them.
// Nothing here edits core code: everything goes through the public APIs.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, nowMs, percentileSorted } from './util.ts';
import { keyOf, MODULES, prng, SITE } from './workload.ts';
import { runPublisher } from './publisher.ts';
import type { SiteConfig } from '../core/site/config.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const DATABASE = `site_${SITE}`;
/** Cheap scrypt for the generated site's broker passwords (sign-in cost is not what is measured). */
const CHEAP_SCRYPT = { N: 1 << 10, r: 8, p: 1 };
/** Wall-clock milliseconds with sub-ms resolution, comparable across processes of one machine. */
const epochMs = (): number => performance.timeOrigin + performance.now();

async function until(cond: () => boolean, ms: number, stepMs = 10): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  return true;
}

function pct(xs: number[]): { n: number; p50: number; p99: number; max: number } {
  const s = Float64Array.from(xs).sort();
  return { n: s.length, p50: percentileSorted(s, 50), p99: percentileSorted(s, 99), max: s.length ? s[s.length - 1]! : NaN };
}

// ----------------------------------------------------------------------------------------------
// MQTT end to end through an external broker (mosquitto) and MqttSource into the journal.

export interface MqttExternalParams {
  dir: string;
  publisherScript: string;
  perPublisher: number;
  window: number;
  maxMs: number;
  reps: number;
  /** How long to wait after the last PUBACK from mosquitto for Tilstand to journal everything. */
  drainMaxMs: number;
}

/** The groups the site's MqttSource uses: one connection per module (core/site/site.ts). */
const SITE_MODULE_GROUPS = ['operations', 'inventory', 'commerce', 'procurement'];

export async function mqttExternal(p: MqttExternalParams) {
  const { lookupMosquitto, startBenchMosquitto } = await import('./mosquitto.ts');
  const found = lookupMosquitto();
  if (!found.ok) return { available: false as const, why: found.why };
  const { Journal, journalSink } = await import('../core/ingest/journal.ts');
  const { MqttSource } = await import('../core/ingest/mqtt-source.ts');
  const users: Record<string, string> = { tilstand: 'bench-tilstand' };
  for (const m of SITE_MODULE_GROUPS) users[m] = 'bench';
  const mosq = await startBenchMosquitto(found, users, SITE);
  try {
    const runs: Array<Record<string, number | boolean>> = [];
    for (let r = 0; r < p.reps; r++) {
      const jdir = join(p.dir, `ext-${r}`);
      fs.mkdirSync(jdir, { recursive: true });
      const journal = Journal.open(jdir);
      const jsink = journalSink(journal);
      let first = 0;
      let last = 0;
      let journaled = 0;
      const sink = (topic: string, payload: Buffer) => {
        if (first === 0) first = nowMs();
        return jsink(topic, payload).then((pos) => {
          journaled++;
          last = nowMs();
          return pos;
        });
      };
      // A fresh client id per repetition: no session (or queue) carried over from the last one.
      const source = new MqttSource({
        url: mosq.siteUrl,
        clientId: `tilstand-bench-${r}`,
        username: 'tilstand',
        password: users.tilstand!,
        groups: SITE_MODULE_GROUPS.map((m) => ({ name: m, topics: [`tilstand/${SITE}/events/${m}/#`] })),
        sink,
        backoff: { initialDelayMs: 50, maxDelayMs: 500 },
      });
      source.start();
      try {
        const subscribed = await until(() => source.stats().every((g) => g.subscribes > 0), 20_000);
        if (!subscribed) throw new Error(`MqttSource did not subscribe: ${JSON.stringify(source.stats())} ${mosq.log().slice(-1000)}`);
        const pub = await runPublisher(p.publisherScript, { port: mosq.port, site: SITE, perPublisher: p.perPublisher, window: p.window, maxMs: p.maxMs });
        const drained = await until(() => journaled >= pub.acked!, p.drainMaxMs);
        const js = journal.stats();
        const st = source.stats();
        const seconds = (last - first) / 1000;
        runs.push({
          published: pub.acked!,
          publishMsgPerSec: pub.msgPerSec!,
          journaled,
          drained,
          seconds,
          eventsPerSec: journaled / seconds,
          eventsPerCommit: js.eventsPerCommitMean,
          eventsPerCommitMax: js.eventsPerCommitMax,
          commits: js.commits,
          commitMsMax: js.commitMsMax,
          sinkFailures: st.reduce((s, g) => s + g.sinkFailures, 0),
          reconnects: st.reduce((s, g) => s + g.connects - 1, 0),
        });
      } finally {
        await source.stop();
        journal.close();
        fs.rmSync(jdir, { recursive: true, force: true });
      }
    }
    const med = (k: string) => median(runs.map((x) => x[k] as number));
    return {
      available: true as const,
      mosquitto: { bin: mosq.bin, version: mosq.version },
      groups: SITE_MODULE_GROUPS.length,
      runs,
      median: { eventsPerSec: med('eventsPerSec'), eventsPerCommit: med('eventsPerCommit'), publishMsgPerSec: med('publishMsgPerSec'), journaled: med('journaled'), seconds: med('seconds') },
      allDrained: runs.every((x) => x.drained === true),
    };
  } finally {
    await mosq.stop();
  }
}

// ----------------------------------------------------------------------------------------------
// Publish → visible through the running site.

export interface VisibleParams {
  dir: string;
  publisherScript: string;
  /** Paced publish rate (events/s over the three stock streams) and how long. */
  rate: number;
  durationMs: number;
  /** Every k-th event is a sample. */
  sampleEvery: number;
  /** The stock table's freshness budget in this site's config. */
  budgetMs: number;
  /** How often the reader looks for a new snapshot. */
  pollMs: number;
}

/**
 * A site made by `initDataDir` (stock's budget set to `budgetMs`; everything else default) is
 * started in this process with `Site.start` (what `tilstand start` runs: embedded broker with
 * durable PUBACK, Ingestor, ingest tick every 250 ms, journal prune, HTTP server, control socket;
 * no UI, agent timer off). The publisher child publishes stock events paced over the three
 * stock streams with the modules' real passwords. A reader with its own Catalog (it reads the
 * files like any other reader) polls the stock table's latest snapshot id every `pollMs`; on a new
 * snapshot it looks up the pending samples: a sample (module m, seq s) is visible when its key's
 * `<m>_seq` column is ≥ s. Visibility is monotone per stream (events of a stream are journaled and
 * applied in order), so each stream's pending samples are checked oldest first until one is not
 * visible yet.
 */
/**
 * A site data directory made by `initDataDir` in `dir`/site (its config as `config` makes it,
 * listeners on ephemeral ports), started in this process with `Site.start` (no UI, agent timer
 * off); the modules' broker passwords from the secrets file init wrote.
 */
async function startBenchSite(dir: string, config: (c: SiteConfig) => SiteConfig, log: (line: string) => void) {
  const { initDataDir } = await import('../core/site/init.ts');
  const { Site } = await import('../core/site/site.ts');
  const data = join(dir, 'site');
  await initDataDir({ data, site: SITE, scrypt: CHEAP_SCRYPT, config: (c) => ({ ...config(c), broker: { ...c.broker, port: 0 } as typeof c.broker, http: { ...c.http, port: 0 } }) });
  const secrets = (JSON.parse(fs.readFileSync(join(data, 'secrets', 'modules.json'), 'utf8')) as { modules: Record<string, { password: string }> }).modules;
  const passwords = Object.fromEntries(MODULES.map((m) => [m.module, secrets[m.module]!.password]));
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log });
  return { data, site, port: Number(new URL(site.mqttUrl).port), passwords };
}

export async function visible(p: VisibleParams) {
  const { Catalog } = await import('../core/lsm/index.ts');
  const logLines: string[] = [];
  const { data, site, port, passwords } = await startBenchSite(
    p.dir,
    (c) => ({ ...c, tables: c.tables.map((b) => (b.table === 'stock' ? { ...b, budgetMs: p.budgetMs, confirmedBy: 'bench: publish-to-visible figure' } : b)) }),
    (l) => logLines.push(l),
  );
  const stockBudget = site.status().tables.find((t) => t.table === 'stock')?.budgetMs;

  const table = new Catalog(join(data, 'warehouse')).getTable({ database: DATABASE, table: 'stock' });
  const seqIdx = MODULES.map((m) => table.schema.fields.findIndex((f) => f.name === m.seqColumn));
  const total = Math.round((p.rate * p.durationMs) / 1000);
  interface Sample {
    i: number;
    m: number;
    seq: bigint;
    key: { item: string; location: string };
    seenAt: number;
    snapshotId: number;
  }
  const samples: Sample[] = [];
  const pending: Sample[][] = [[], [], []];
  for (let i = 0; i < total; i += p.sampleEvery) {
    const m = i % 3;
    const seq = Math.floor(i / 3) + 1;
    // The publisher's key of (m, seq): k = seq·7919 mod 100000 (bench/mqtt-publisher.mjs).
    const s: Sample = { i, m, seq: BigInt(seq), key: keyOf((seq * 7919) % 100_000), seenAt: NaN, snapshotId: -1 };
    samples.push(s);
    pending[m]!.push(s);
  }
  let lastId = table.snapshots.latestId();
  let snapshotsSeen = 0;
  let pollMsMax = 0;
  let left = samples.length;
  const poll = () => {
    const id = table.snapshots.latestId();
    if (id === undefined || id === lastId) return;
    const t = epochMs();
    lastId = id;
    snapshotsSeen++;
    const reader = table.reader({ snapshotId: id });
    try {
      for (let m = 0; m < 3; m++) {
        const q = pending[m]!;
        while (q.length > 0) {
          const s = q[0]!;
          const row = reader.get(s.key);
          const v = row?.[seqIdx[m]!];
          if (v === null || v === undefined || BigInt(v as bigint) < s.seq) break;
          s.seenAt = t;
          s.snapshotId = id;
          q.shift();
          left--;
        }
      }
    } finally {
      reader.close();
    }
    pollMsMax = Math.max(pollMsMax, epochMs() - t);
  };
  const timer = setInterval(poll, p.pollMs);
  let pub: Record<string, unknown>;
  let waitedMs = 0;
  try {
    pub = (await runPublisher(p.publisherScript, { port, site: SITE, paced: true, rate: p.rate, durationMs: p.durationMs, sampleEvery: p.sampleEvery, passwords })) as Record<string, unknown>;
    const w0 = Date.now();
    // Everything must be visible within the budget (+ margin); wait twice that, then give up.
    await until(() => left === 0, 2 * p.budgetMs + 2000, p.pollMs);
    waitedMs = Date.now() - w0;
  } finally {
    clearInterval(timer);
  }
  const st = site.status().tables.find((t) => t.table === 'stock');
  const journal = site.status().journal;
  await site.stop();
  const published = new Map((pub.samples as Array<[number, number, number]>).map(([i, at, acked]) => [i, { at, acked }]));
  const lat: number[] = [];
  const afterAck: number[] = [];
  let unseen = 0;
  for (const s of samples) {
    const x = published.get(s.i);
    if (x === undefined) continue;
    if (Number.isNaN(s.seenAt)) unseen++;
    else {
      lat.push(s.seenAt - x.at);
      // PUBACK = journaled: what remains is the commit cadence (and the PUBACK's way back).
      afterAck.push(s.seenAt - x.acked);
    }
  }
  const l = pct(lat);
  const a = pct(afterAck);
  return {
    rate: p.rate,
    durationMs: p.durationMs,
    published: pub.acked,
    achievedRate: pub.achievedRate,
    pubackP50Ms: (pub.p50us as number) / 1000,
    pubackP99Ms: (pub.p99us as number) / 1000,
    samples: samples.length,
    unseen,
    visibleMs: { p50: l.p50, p99: l.p99, max: l.max, min: lat.length ? Math.min(...lat) : NaN },
    ackToVisibleMs: { p50: a.p50, p99: a.p99, max: a.max },
    budgetMs: stockBudget,
    snapshotsSeen,
    pollMsMax,
    waitedAfterLastPublishMs: waitedMs,
    stock: st ? { breaches: st.breaches, snapshotId: st.snapshotId } : null,
    journal,
    siteLogTail: logLines.slice(-5),
  };
}

// ----------------------------------------------------------------------------------------------
// Dead-letter flood: what another module's PUBACKs wait while one module's events are refused.

export interface FloodParams {
  dir: string;
  publisherScript: string;
  /** Events of a contract version the site lacks (every one a dead letter). */
  events: number;
  /** At most this many of them unacknowledged at a time. */
  window: number;
  /** The probe module publishes one valid event this often, until `afterMs` after the flood. */
  probeEveryMs: number;
  afterMs: number;
}

/**
 * A site made by `initDataDir` (defaults) is started in this process with `Site.start` as for
 * `visible` (embedded broker with durable PUBACK, Ingestor, tick 250 ms; agent timer off, no UI).
 * The publisher child floods it as inventory with envelopes of contract version 99 (the site has
 * v1: each is journaled, refused and written to dead_letters) while procurement publishes a valid
 * event every `probeEveryMs` and times its PUBACK — the wait a healthy module sees while another
 * sends garbage (dead_letters' flushes and its compaction, in slices since f13e257, share the
 * event loop with every PUBACK). Peak RSS is this process's `maxRSS` (the site, run through tsx without its launch settings).
 */
export async function flood(p: FloodParams) {
  const { site, port, passwords } = await startBenchSite(p.dir, (c) => c, () => undefined);
  let pub: Record<string, number>;
  let deadLettersOpen: number;
  try {
    pub = (await runPublisher(p.publisherScript, { port, site: SITE, flood: p.events, window: p.window, probeEveryMs: p.probeEveryMs, afterMs: p.afterMs, passwords })) as Record<string, number>;
    site.ingestor.commitAll();
    deadLettersOpen = site.ingestor.deadLetterCount();
  } finally {
    await site.stop();
  }
  return {
    events: p.events,
    window: p.window,
    acked: pub.acked,
    floodSeconds: pub.seconds,
    floodRate: pub.rate,
    deadLettersOpen,
    probes: pub.probes,
    probeEveryMs: p.probeEveryMs,
    probeWaitMs: { p50: pub.probeP50Ms, p99: pub.probeP99Ms, max: pub.probeMaxMs },
    peakRssMB: (process.resourceUsage().maxRSS * 1024) / 2 ** 20,
  };
}

// ----------------------------------------------------------------------------------------------
// Sync: bytes sent for a new tag vs a full copy.

export interface SyncParams {
  dir: string;
  rows: number;
  changeFraction: number;
  seed: number;
}

/**
 * A site data directory (`initDataDir`: the seed tables, site.db, contracts); `rows` stock rows
 * written with the table writer and committed; tag `bench-1`; everything synced to a directory
 * target (SyncEngine with the site's own outbox in site.db, scheduled tags off) — the full copy.
 * Then `changeFraction` of the rows (distinct keys, seeded) get a new `reserved` value, one
 * commit, tag `bench-2`, synced again. Sent bytes come from the outbox (`sent_bytes` per step).
 * The bound is derived from the table's own metadata: the files tag 2's snapshot references that
 * tag 1's does not, plus the pointers (tag and snapshot JSON, hints).
 */
export async function syncTags(p: SyncParams) {
  const { initDataDir } = await import('../core/site/init.ts');
  const { Catalog } = await import('../core/lsm/index.ts');
  const { SyncEngine, DirectoryTarget, sitePrefix, referencedFiles } = await import('../core/sync/index.ts');
  const data = join(p.dir, 'site');
  const hq = join(p.dir, 'hq');
  await initDataDir({ data, site: SITE, scrypt: CHEAP_SCRYPT });
  const catalog = new Catalog(join(data, 'warehouse'));
  const table = catalog.getTable({ database: DATABASE, table: 'stock' });
  const writer = table.newWriter({ commitUser: 'bench' });
  const rnd = prng(p.seed);
  let t = nowMs();
  for (let k = 0; k < p.rows; k++) {
    const { item, location } = keyOf(k);
    writer.writeRecord({ item, location, on_hand: Math.floor(rnd() * 1000), inventory_seq: 1n, reserved: Math.floor(rnd() * 50), commerce_seq: 1n, inbound: Math.floor(rnd() * 20), procurement_seq: 1n });
  }
  writer.commit();
  const loadSec = (nowMs() - t) / 1000;
  table.createTag('bench-1');
  const s1 = table.tags.get('bench-1').snapshot;

  const engine = new SyncEngine({ dataDir: data, site: SITE, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(SITE) }), scheduledTags: null, retry: { baseMs: 10, maxMs: 100, jitter: 0 } });
  const syncAll = async () => {
    const before = engine.outbox.rows().length;
    const t0 = nowMs();
    const plan = await engine.enqueueSnapshotSync();
    let failed = 0;
    for (let i = 0; i < 100 && engine.status().pendingItems > 0; i++) failed += (await engine.runOnce()).failed;
    const sec = (nowMs() - t0) / 1000;
    const rows = engine.outbox.rows().slice(before);
    const sum = (f: (r: (typeof rows)[number]) => boolean) => rows.filter(f).reduce((s, r) => s + r.sent_bytes, 0);
    return {
      sec,
      failed,
      pending: engine.status().pendingItems,
      units: plan.units,
      stockBytes: sum((r) => r.table_name === 'stock'),
      stockDataBytes: sum((r) => r.table_name === 'stock' && r.op === 'put' && /\/bucket-\d+\//.test(`/${r.key}`)),
      stockFilesSent: rows.filter((r) => r.table_name === 'stock' && r.op === 'put' && r.sent_bytes > 0).length,
      allBytes: sum(() => true),
    };
  };
  let first;
  let second;
  try {
    first = await syncAll();

    // Change 1 % of the rows (distinct keys), commit, tag, sync again.
    const n = Math.max(1, Math.round(p.rows * p.changeFraction));
    const keys = new Set<number>();
    while (keys.size < n) keys.add(Math.floor(rnd() * p.rows));
    for (const k of keys) {
      const { item, location } = keyOf(k);
      writer.writeRecord({ item, location, reserved: 50 + Math.floor(rnd() * 50), commerce_seq: 2n });
    }
    t = nowMs();
    writer.commit();
    const changeCommitSec = (nowMs() - t) / 1000;
    table.createTag('bench-2');
    const s2 = table.tags.get('bench-2').snapshot;
    second = { ...(await syncAll()), changedRows: n, changeCommitSec };

    // The bound, from the table's metadata alone.
    const size = (path: string) => fs.statSync(path).size;
    const files1 = new Set(referencedFiles(table, s1).map((f) => f.rel));
    const files2 = referencedFiles(table, s2);
    const newFiles = files2.filter((f) => !files1.has(f.rel));
    const newFileBytes = newFiles.reduce((s, f) => s + size(f.path), 0);
    const tag2Files = files2.reduce((s, f) => s + size(f.path), 0);
    const pointerBytes = size(table.paths.tagFile('bench-2')) + size(table.paths.snapshotFile(s2.id)) + 2 * String(s2.id).length;
    const old = new Set<string>();
    for (const b of table.buckets(s1)) for (const f of b.files) old.add(f.fileName);
    let newDataFiles = 0;
    let newDataRows = 0;
    let newDataBytes = 0;
    for (const b of table.buckets(s2)) {
      for (const f of b.files) {
        if (old.has(f.fileName)) continue;
        newDataFiles++;
        newDataRows += f.rowCount;
        newDataBytes += f.fileSize;
      }
    }
    let fullDataBytes = 0;
    let fullRows = 0;
    for (const b of table.buckets(s1)) for (const f of b.files) (fullDataBytes += f.fileSize), (fullRows += f.rowCount);
    return {
      rows: p.rows,
      loadSec,
      first,
      second,
      bound: {
        newFiles: newFiles.length,
        newFileBytes,
        pointerBytes,
        expectedMaxBytes: newFileBytes + pointerBytes,
        newDataFiles,
        newDataRows,
        newDataBytes,
        fullDataBytes,
        fullRows,
        tag2FileBytes: tag2Files,
      },
    };
  } finally {
    writer.close();
    await engine.close();
  }
}

// ----------------------------------------------------------------------------------------------
// Replay rate: bench/replay.ts (owned by core/replay's engineer) as a child; its JSON line.

export interface ReplayParams {
  events: number;
  hours: number;
  items: number;
  timeoutMs: number;
}

export async function replay(p: ReplayParams) {
  const args = [join(ROOT, 'bin', 'run-ts.mjs'), join(ROOT, 'bench', 'replay.ts'), '--events', String(p.events), '--hours', String(p.hours), '--items', String(p.items)];
  const t0 = nowMs();
  const { code, out, err } = await new Promise<{ code: number | null; out: string; err: string }>((res, rej) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err = (err + d).slice(-20_000)));
    const timer = setTimeout(() => child.kill('SIGTERM'), p.timeoutMs);
    child.on('error', rej);
    child.on('exit', (c) => (clearTimeout(timer), res({ code: c, out, err })));
  });
  const wallSec = (nowMs() - t0) / 1000;
  const line = out.trim().split('\n').reverse().find((l) => l.startsWith('{'));
  // The progress bar redraws with \r; keep the step lines.
  const steps = err.split('\n').map((l) => l.split('\r').pop()!.trim()).filter((l) => /^[a-z].*: [\d.]+ s wall/.test(l));
  if (code !== 0 || !line) throw new Error(`bench/replay.ts exited ${code}${code === null ? ' (killed after timeout)' : ''}: ${err.slice(-2000)}`);
  return { command: `node bin/run-ts.mjs bench/replay.ts ${args.slice(2).join(' ')}`, wallSec, result: JSON.parse(line) as Record<string, unknown>, steps };
}

// ----------------------------------------------------------------------------------------------
// The default agent over a large work queue.

export interface AgentParams {
  dir: string;
  jobs: number;
  resources: number;
  items: number;
  reps: number;
  seed: number;
}

const CAPABILITIES = ['pick', 'forklift', 'pack', 'load', 'inspect'];
const T_AGENT = Date.UTC(2026, 11, 1, 8, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 23);

/**
 * The site's tables filled the way a site fills them: operations/jobs, operations/resources and
 * inventory/commerce/procurement events through the Ingestor (journal, contracts, seed bindings,
 * seed tables), then commitAll. Seeded job mix: 55 % released, 10 % blocked on material, 25 %
 * in_progress (assigned), 10 % done; priority 0–9; due from −2 h to +72 h around the run's clock;
 * `resources` resources (30 % free for up to 2 h, 60 % busy, 10 % down); `items` items × 2
 * locations of stock. Each repetition copies the filled warehouse and runs a fresh Inbox + Agent
 * (default rules and config, clock fixed) twice: the first run finds every situation new; the
 * second, a minute later on the same state, re-checks the open proposals and finds duplicates.
 * Then the checks between runs (`recheckChanged`, every second on a site) after two commits
 * through the same Ingestor (the seed's journal and warehouse copied, so it continues the site):
 * operations releasing up to 100 blocked jobs and starting up to 100 released ones, then
 * inventory counting every stock row anew.
 */
export async function agentRun(p: AgentParams) {
  const { Catalog } = await import('../core/lsm/index.ts');
  const { Journal } = await import('../core/ingest/journal.ts');
  const { ContractRegistry } = await import('../core/ingest/contracts.ts');
  const { Ingestor } = await import('../core/ingest/ingestor.ts');
  const { SEED_BINDINGS } = await import('../core/ingest/seed-bindings.ts');
  const { SEED_CONTRACTS } = await import('../core/ingest/seed-contracts.ts');
  const { SEED_TABLES } = await import('../core/ingest/seed-tables.ts');
  const { Agent } = await import('../core/agents/index.ts');
  const { Inbox } = await import('../core/inbox/index.ts');

  const seedDir = join(p.dir, 'seed');
  fs.mkdirSync(seedDir, { recursive: true });
  const clock = () => T_AGENT;
  const journal = Journal.open(seedDir);
  const contracts = new ContractRegistry(join(seedDir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
  const ing = Ingestor.open({ site: SITE, catalog: new Catalog(join(seedDir, 'warehouse'), { clock }), database: DATABASE, journal, contracts, bindings: [...SEED_BINDINGS], tables: [...SEED_TABLES], budgets: [], clock, onWarning: () => undefined });
  const rnd = prng(p.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const seqs = new Map<string, number>();
  const batch: Promise<bigint>[] = [];
  let events = 0;
  /** Publishes as a module would: the next sequence per stream from `sq`, groups of 1,000 journaled together. */
  const emitter =
    (into: { accept(topic: string, payload: Buffer, receivedAtMs: number): Promise<bigint> }, sq: Map<string, number>, at: () => number, pending: Promise<bigint>[]) =>
    async (module: string, stream: string, contract: string, after: Record<string, unknown>) => {
      const seq = (sq.get(stream) ?? 0) + 1;
      sq.set(stream, seq);
      const payload = Buffer.from(JSON.stringify({ op: 'c', before: null, after, source: { module, stream, seq }, ts_ms: at(), contract: { name: contract, version: 1 } }));
      pending.push(into.accept(`tilstand/${SITE}/events/${module}/${stream}`, payload, at()));
      if (pending.length >= 1000) await Promise.all(pending.splice(0));
    };
  const emitSeed = emitter(ing, seqs, () => T_AGENT - 1000, batch);
  const emit = async (module: string, stream: string, contract: string, after: Record<string, unknown>) => {
    events++;
    await emitSeed(module, stream, contract, after);
  };
  const jobs: Record<string, unknown>[] = [];
  const stockKeys: [string, string][] = [];
  const t0 = nowMs();
  const itemName = (i: number) => `ITEM-${String(i).padStart(5, '0')}`;
  for (let i = 0; i < p.items; i++) {
    for (const loc of ['LOC-A', 'LOC-B']) {
      stockKeys.push([itemName(i), loc]);
      await emit('inventory', 'stock', 'inventory.stock', { item: itemName(i), location: loc, qty: Math.floor(rnd() * 50) });
      await emit('commerce', 'reservations', 'commerce.reservations', { item: itemName(i), location: loc, reserved_qty: Math.floor(rnd() * 10) });
      await emit('procurement', 'inbound', 'procurement.inbound', { item: itemName(i), location: loc, inbound_qty: Math.floor(rnd() * 5) });
    }
  }
  for (let i = 0; i < p.resources; i++) {
    const r = rnd();
    await emit('operations', 'resources', 'operations.resources', {
      resource_id: `R-${String(i).padStart(4, '0')}`,
      kind: rnd() < 0.8 ? 'machine' : 'team',
      capability: CAPABILITIES[i % CAPABILITIES.length],
      state: r < 0.3 ? 'free' : r < 0.9 ? 'busy' : 'down',
      since: iso(T_AGENT - Math.floor(rnd() * 2 * 3600_000)),
    });
  }
  const statusCount: Record<string, number> = {};
  for (let i = 0; i < p.jobs; i++) {
    const r = rnd();
    const status = r < 0.55 ? 'released' : r < 0.65 ? 'blocked' : r < 0.9 ? 'in_progress' : 'done';
    statusCount[status] = (statusCount[status] ?? 0) + 1;
    const material = status === 'blocked' || rnd() < 0.3;
    const job = {
      job_id: `J-${String(i).padStart(6, '0')}`,
      status,
      blocked_reason: status === 'blocked' ? 'material' : null,
      capability: pick(CAPABILITIES),
      material_item: material ? itemName(Math.floor(rnd() * p.items)) : null,
      material_qty: material ? 1 + Math.floor(rnd() * 20) : null,
      priority: Math.floor(rnd() * 10),
      due_at: iso(T_AGENT + Math.floor((rnd() * 74 - 2) * 3600_000)),
      assigned_resource: status === 'in_progress' ? `R-${String(Math.floor(rnd() * p.resources)).padStart(4, '0')}` : null,
    };
    jobs.push(job);
    await emit('operations', 'jobs', 'operations.jobs', job);
  }
  await Promise.all(batch.splice(0));
  ing.commitAll();
  const fillSec = (nowMs() - t0) / 1000;
  const deadLetters = ing.deadLetterCount();
  ing.close();
  journal.close();

  const users = { verifyPin: async () => ({ ok: false as const, reason: 'unknown' as const }) };
  const reps: Array<Record<string, unknown>> = [];
  for (let r = 0; r < p.reps; r++) {
    const dir = join(p.dir, `rep-${r}`);
    // The whole seed site (journal, contracts, warehouse): the commits below continue it.
    fs.cpSync(seedDir, dir, { recursive: true });
    let now = T_AGENT;
    const catalog = new Catalog(join(dir, 'warehouse'), { clock: () => now });
    const siteJournal = Journal.open(dir, { nowMs: () => now });
    const site = Ingestor.open({ site: SITE, catalog, database: DATABASE, journal: siteJournal, contracts: new ContractRegistry(join(dir, 'contracts')), bindings: [...SEED_BINDINGS], tables: [...SEED_TABLES], budgets: [], clock: () => now, onWarning: () => undefined });
    const pending: Promise<bigint>[] = [];
    const publish = emitter(site, new Map(seqs), () => now, pending);
    let agent: InstanceType<typeof Agent> | undefined;
    const inbox = Inbox.open({ catalog, database: DATABASE, users, recheck: (x) => agent!.recheck(x), clock: () => now, onWarning: () => undefined });
    agent = new Agent({ catalog, database: DATABASE, inbox, clock: () => now, onWarning: () => undefined });
    try {
      let t = nowMs();
      const a = agent.run();
      const firstMs = nowMs() - t;
      now += 60_000;
      t = nowMs();
      const b = agent.run();
      const secondMs = nowMs() - t;
      /** One commit through the site's Ingestor, then the agent's check between runs, timed. */
      const checkAfter = async (change: () => Promise<void>) => {
        now += 1_000;
        await change();
        await Promise.all(pending.splice(0));
        site.commitAll();
        const t0 = nowMs();
        const c = agent!.recheckChanged();
        return { ms: nowMs() - t0, changed: c.changed, checked: c.checked, withdrawn: c.withdrawn.length, open: inbox.openProposals().length };
      };
      const blocked = jobs.filter((j) => j.status === 'blocked').slice(0, 100);
      const released = jobs.filter((j) => j.status === 'released').slice(0, 100);
      const jobsCheck = await checkAfter(async () => {
        for (const j of blocked) await publish('operations', 'jobs', 'operations.jobs', { ...j, status: 'released', blocked_reason: null });
        for (const [i, j] of released.entries()) await publish('operations', 'jobs', 'operations.jobs', { ...j, status: 'in_progress', assigned_resource: `R-${String(i % p.resources).padStart(4, '0')}` });
      });
      const stockCheck = await checkAfter(async () => {
        for (const [item, location] of stockKeys) await publish('inventory', 'stock', 'inventory.stock', { item, location, qty: Math.floor(rnd() * 50) });
      });
      const byRule: Record<string, number> = {};
      for (const x of a.created) byRule[x.ruleId] = (byRule[x.ruleId] ?? 0) + 1;
      reps.push({
        firstMs,
        secondMs,
        created: a.created.length,
        drafts: a.drafts,
        byRule,
        ruleErrors: [...a.ruleErrors, ...b.ruleErrors].map((e) => `${e.ruleId}: ${e.message}`),
        secondCreated: b.created.length,
        secondDuplicates: b.duplicates.length,
        secondWithdrawn: b.withdrawn.length,
        jobChanges: blocked.length + released.length,
        jobsCheck,
        stockChanges: stockKeys.length,
        stockCheck,
        jobsCheckMs: jobsCheck.ms,
        stockCheckMs: stockCheck.ms,
      });
    } finally {
      agent.stop();
      inbox.close();
      site.close();
      siteJournal.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  const med = (k: string) => median(reps.map((x) => x[k] as number));
  return {
    jobs: p.jobs,
    jobStatus: statusCount,
    resources: p.resources,
    stockRows: p.items * 2,
    events,
    fillSec,
    deadLetters,
    reps,
    median: { firstMs: med('firstMs'), secondMs: med('secondMs'), created: med('created'), jobsCheckMs: med('jobsCheckMs'), stockCheckMs: med('stockCheckMs') },
  };
}
