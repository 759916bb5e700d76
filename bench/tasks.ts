// The measurements. Each task runs in its own child process (child.ts), so one figure's garbage,
// caches and heap growth never leak into the next; it returns a JSON-able result.
//
// Nothing here edits core code: Tilstand is driven through its public API (core/lsm/index.ts,
// core/ingest/journal.ts, core/ingest/ingestor.ts, core/ingest/broker.ts).

import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { Catalog, type Table } from '../core/lsm/index.ts';
import { EmbeddedBroker, type Principal } from '../core/ingest/broker.ts';
import { ContractRegistry } from '../core/ingest/contracts.ts';
import { Ingestor } from '../core/ingest/ingestor.ts';
import { Journal, journalSink } from '../core/ingest/journal.ts';
import { SEED_BINDINGS } from '../core/ingest/seed-bindings.ts';
import { SEED_CONTRACTS } from '../core/ingest/seed-contracts.ts';
import { STOCK_TABLE, type TableDefinition } from '../core/ingest/seed-tables.ts';
import { runPublisher } from './publisher.ts';
import { CountingFileIO, dirBytes, fileBytes, ioDelta, median, nowMs, percentileSorted, procIo } from './util.ts';
import { deserializeWorkload, generateEvents, keyOf, MODULES, payloadAt, prng, SITE, T0_MS, TOPICS, type PackedWorkload, type WorkloadSpec } from './workload.ts';

export const DATABASE = `site_${SITE}`;
const STOCK_ID = { database: DATABASE, table: 'stock' };

function stockSpec(def: TableDefinition = STOCK_TABLE, extraOptions: Record<string, string> = {}) {
  return {
    fields: def.fields.map((f) => ({ name: f.name, type: f.type })),
    primaryKeys: [...def.primaryKeys],
    partitionKeys: [...def.partitionKeys],
    options: { ...def.options, ...extraOptions },
  };
}

function loadWorkload(file: string, spec: WorkloadSpec): PackedWorkload {
  return deserializeWorkload(spec, fs.readFileSync(file));
}

/** The row a stock event sets (a binding's output, as core/ingest/seed-bindings.ts maps it). */
function rowOf(m: number, ev: { after: Record<string, unknown>; source: { seq: number } }): Record<string, unknown> {
  const d = MODULES[m]!;
  return { item: ev.after.item, location: ev.after.location, [d.column]: ev.after[d.qtyField], [d.seqColumn]: BigInt(ev.source.seq) };
}

function tableFilesSummary(table: Table): { files: number; runs: number; levels: Record<string, number>; rows: number } {
  const snap = table.latestSnapshot();
  if (!snap) return { files: 0, runs: 0, levels: {}, rows: 0 };
  let files = 0;
  let runs = 0;
  let rows = 0;
  const levels: Record<string, number> = {};
  for (const b of table.buckets(snap)) {
    files += b.files.length;
    runs += table.runsOf(b.files).length;
    for (const f of b.files) {
      levels[String(f.level)] = (levels[String(f.level)] ?? 0) + 1;
      rows += f.rowCount;
    }
  }
  return { files, runs, levels, rows };
}

// ----------------------------------------------------------------------------------------------
// Ingest in process.

export interface IngestParams {
  workloadFile: string;
  spec: WorkloadSpec;
  dir: string;
  /** Events between table commits. */
  commitEvery: number;
  /** Events handed to the journal per tick (= at most one group of groupEventsMax). */
  window: number;
  /** Use only the first `limit` events of the workload. */
  limit?: number;
}

/**
 * The row a stock event sets, as `rowOf` but with one object literal per module: each module's
 * rows have one fixed shape (as a compiled binding's output), where computed keys would make every
 * row go through the runtime's slow keyed define.
 */
const STOCK_ROW = MODULES.map(
  (d) =>
    new Function(
      'ev',
      `return { item: ev.after.item, location: ev.after.location, ${JSON.stringify(d.column)}: ev.after[${JSON.stringify(d.qtyField)}], ${JSON.stringify(d.seqColumn)}: BigInt(ev.source.seq) };`,
    ) as (ev: { after: Record<string, unknown>; source: { seq: number } }) => Record<string, unknown>,
);

/** CPU seconds (user + system, every thread) since `from`. */
function cpuSince(from: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1e6;
}

/**
 * CPU seconds (user + system) of the calling thread — the main thread here — from
 * /proc/thread-self/stat (clock ticks of 10 ms); undefined where there is no such file. Beside the
 * process's CPU it tells the main thread's own work from GC helpers and libuv threads, and its
 * wall time minus this is the time it sat idle (in the journal's fsync).
 */
function threadCpuSec(): number | undefined {
  try {
    const stat = fs.readFileSync('/proc/thread-self/stat', 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // fields 14 and 15 (utime, stime), counted after the name
  } catch {
    return undefined;
  }
}

/**
 * A field of the calling thread's /proc/thread-self/schedstat in seconds (ns resolution, finer
 * than stat's 10 ms ticks): 0 = time it ran on a core; 1 = time it was runnable but waited for a
 * core (on a shared machine, the part of the wall time that is other processes' load).
 */
function threadSchedstatSec(field: 0 | 1): number | undefined {
  try {
    return Number(fs.readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[field]) / 1e9;
  } catch {
    return undefined;
  }
}

/** Windows queued to the journal whose events are applied once durable (ingestTilstand). */
interface QueuedWindow {
  base: number;
  n: number;
  parsed: unknown[];
  /** Resolves with the window's journal positions once its group commit is durable. */
  durable: Promise<bigint[]>;
}

/**
 * Tilstand's ingest path without MQTT, pipelined as a site runs it: per event JSON.parse +
 * Journal.append (group commit, synchronous=FULL, ≤ 1,000 events per fsync); window k+1 is parsed
 * and queued before window k's rows go to TableWriter.writeRecord (partial-update), which happens
 * only once window k's promises resolved — at most two windows in flight, no event applied before
 * it is durable. The journal commits on this thread (its setImmediate flush, inline, as a site's
 * does), so the windows overlap in order, not in time: the fsync's wait is not hidden behind the
 * parse or the apply (core/ingest/TRANSPORT.md, "Open problems", on a writer thread that would). A commit every `commitEvery` applied events
 * carries the journal position of the last applied event (never past what is durable) as snapshot
 * property, as ingest does; compaction and expiration run inline as the writer does them.
 */
export async function ingestTilstand(p: IngestParams) {
  const w = loadWorkload(p.workloadFile, p.spec);
  if (p.limit !== undefined && p.limit < w.count) w.count = p.limit;
  fs.mkdirSync(join(p.dir, 'journal'), { recursive: true });
  const journal = Journal.open(join(p.dir, 'journal'));
  const io = new CountingFileIO();
  const catalog = new Catalog(join(p.dir, 'warehouse'), { fileIO: io });
  catalog.createDatabase(DATABASE, true);
  const table = catalog.createTable(STOCK_ID, stockSpec());
  const writer = table.newWriter({ commitUser: 'bench' });
  io.reset();
  const inFlight: QueuedWindow[] = [];
  let tParse = 0;
  let tWait = 0;
  let tApply = 0;
  let tCommit = 0;
  let commits = 0;
  let compactions = 0;
  let commitMsMax = 0;
  let since = 0;
  let applied = 0;
  let appliedPosition = 0n;
  let positionsInOrder = true;
  let maxInFlight = 0;
  const received = T0_MS;
  /** Waits for the oldest window's group to be durable, applies its rows, commits on cadence. */
  const applyOldest = async () => {
    const win = inFlight.shift()!;
    const a = nowMs();
    const positions = await win.durable;
    const b = nowMs();
    for (let j = 0; j < win.n; j++) writer.writeRecord(STOCK_ROW[w.modules[win.base + j]!]!(win.parsed[j] as never));
    const c = nowMs();
    tWait += b - a;
    tApply += c - b;
    if (positions[0]! <= appliedPosition) positionsInOrder = false;
    appliedPosition = positions[win.n - 1]!;
    applied += win.n;
    since += win.n;
    if (since >= p.commitEvery || applied >= w.count) {
      const r = writer.commit({ 'tilstand.journal.position': String(appliedPosition) });
      const ms = nowMs() - c;
      tCommit += ms;
      commitMsMax = Math.max(commitMsMax, ms);
      commits++;
      if (r.compactSnapshotId !== undefined) compactions++;
      since = 0;
    }
  };
  const io0 = procIo();
  const cpu0 = process.cpuUsage();
  const main0 = threadCpuSec();
  const queued0 = threadSchedstatSec(1);
  const t0 = nowMs();
  for (let base = 0; base < w.count; base += p.window) {
    const n = Math.min(p.window, w.count - base);
    const a = nowMs();
    const parsed: unknown[] = new Array(n);
    const ps: Promise<bigint>[] = new Array(n);
    for (let j = 0; j < n; j++) {
      const i = base + j;
      const payload = payloadAt(w, i);
      const ev = JSON.parse(payload.toString('utf8')) as { source: { module: string; stream: string; seq: number } };
      parsed[j] = ev;
      ps[j] = journal.append({ topic: TOPICS[w.modules[i]!]!, payload, receivedAtMs: received, module: ev.source.module, stream: ev.source.stream, seq: ev.source.seq });
    }
    inFlight.push({ base, n, parsed, durable: Promise.all(ps) });
    maxInFlight = Math.max(maxInFlight, inFlight.length);
    tParse += nowMs() - a;
    if (inFlight.length === 2) await applyOldest();
  }
  while (inFlight.length > 0) await applyOldest();
  const seconds = (nowMs() - t0) / 1000;
  const cpuSec = cpuSince(cpu0);
  const main1 = threadCpuSec();
  const queued1 = threadSchedstatSec(1);
  const ioUsed = ioDelta(io0, procIo());
  const js = journal.stats();
  // The table's committed position is that of the last applied (durable) event: every event.
  const committedPosition = table.committedProperties()?.['tilstand.journal.position'];
  if (!positionsInOrder || committedPosition !== String(js.lastPosition) || applied !== w.count) {
    throw new Error(`ingestTilstand: applied ${applied} of ${w.count} events, committed position ${committedPosition}, journal at ${js.lastPosition}${positionsInOrder ? '' : ', windows applied out of journal order'}`);
  }
  journal.close();
  const tableWritten = io.totalWritten();
  const summary = tableFilesSummary(table);
  writer.close();
  const journalFiles = fileBytes(join(p.dir, 'journal', 'journal.db')) + fileBytes(join(p.dir, 'journal', 'journal.db-wal'));
  return {
    events: w.count,
    seconds,
    eventsPerSec: w.count / seconds,
    /** CPU seconds of the process (all threads: libuv's fsync, GC helpers included). */
    cpuSec,
    /** CPU seconds of the main thread alone (10 ms resolution; absent without /proc). */
    mainThreadCpuSec: main0 === undefined || main1 === undefined ? undefined : main1 - main0,
    /**
     * Wall seconds the main thread was runnable but had no core (other processes' load); wall −
     * main-thread CPU − this = the time it sat idle, i.e. in the journal's and the table's fsyncs.
     */
    mainThreadRunqueueWaitSec: queued0 === undefined || queued1 === undefined ? undefined : queued1 - queued0,
    /**
     * Main-thread time: parse + append (queueing), waiting for the oldest window's group to be
     * durable (idle, or the journal's own commit work when it runs on the main thread), apply
     * (writeRecord), table commit (flush, manifests, snapshot, compaction, expiration).
     */
    breakdownSec: { parseAndQueue: tParse / 1000, waitDurable: tWait / 1000, apply: tApply / 1000, tableCommit: tCommit / 1000 },
    /** Windows queued to the journal and not yet applied, at most (2 once there are two windows). */
    maxWindowsInFlight: maxInFlight,
    commits,
    compactions,
    commitMsMax,
    journal: { commits: js.commits, eventsPerCommitMean: js.eventsPerCommitMean, commitMsTotal: js.commitMsTotal },
    bytes: {
      wcharTotal: ioUsed.wchar,
      writeBytesTotal: ioUsed.write_bytes,
      tableWritten,
      tableByKind: io.counts.written,
      tableFilesWritten: io.counts.filesWritten,
      tableFilesRemoved: io.counts.removed,
      /** Syscall bytes not written by the table store: the journal's (plus a few bytes of output). */
      journalWritten: ioUsed.wchar - tableWritten,
      tableDirBytes: dirBytes(join(p.dir, 'warehouse')),
      journalFileBytes: journalFiles,
    },
    finalState: summary,
  };
}

/** Ingest through the full Ingestor (envelope, contract check, sequencer, binding, freshness). */
export async function ingestIngestor(p: IngestParams) {
  const w = loadWorkload(p.workloadFile, p.spec);
  fs.mkdirSync(join(p.dir, 'journal'), { recursive: true });
  const journal = Journal.open(join(p.dir, 'journal'));
  const contracts = new ContractRegistry(join(p.dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
  const io = new CountingFileIO();
  let clock = T0_MS;
  const ing = Ingestor.open({
    site: SITE,
    catalog: new Catalog(join(p.dir, 'warehouse'), { fileIO: io }),
    database: DATABASE,
    journal,
    contracts,
    bindings: SEED_BINDINGS.filter((b) => b.table === 'stock'),
    tables: [STOCK_TABLE],
    budgets: [],
    clock: () => clock,
  });
  io.reset();
  let since = 0;
  let done = 0;
  let maxInFlight = 0;
  if (p.limit !== undefined && p.limit < w.count) w.count = p.limit;
  // Pipelined as ingestTilstand: window k+1 is accepted (parsed, queued) before window k is
  // settled; accept applies each event itself once durable. At most two windows in flight;
  // commitAll commits what has been applied (the Ingestor's position never passes it).
  const inFlight: Array<{ n: number; durable: Promise<bigint[]> }> = [];
  const settleOldest = async () => {
    const win = inFlight.shift()!;
    await win.durable;
    done += win.n;
    since += win.n;
    if (since >= p.commitEvery || done >= w.count) {
      ing.commitAll();
      since = 0;
    }
  };
  const io0 = procIo();
  const cpu0 = process.cpuUsage();
  const t0 = nowMs();
  for (let base = 0; base < w.count; base += p.window) {
    const n = Math.min(p.window, w.count - base);
    const ps: Promise<bigint>[] = new Array(n);
    for (let j = 0; j < n; j++) ps[j] = ing.accept(TOPICS[w.modules[base + j]!]!, payloadAt(w, base + j), clock);
    inFlight.push({ n, durable: Promise.all(ps) });
    maxInFlight = Math.max(maxInFlight, inFlight.length);
    if (inFlight.length === 2) await settleOldest();
    clock += 1;
  }
  while (inFlight.length > 0) await settleOldest();
  const seconds = (nowMs() - t0) / 1000;
  const cpuSec = cpuSince(cpu0);
  const ioUsed = ioDelta(io0, procIo());
  const health = ing.health();
  ing.close();
  journal.close();
  return {
    events: w.count,
    seconds,
    eventsPerSec: w.count / seconds,
    cpuSec,
    maxWindowsInFlight: maxInFlight,
    failure: health.failure,
    deadLetters: ing.deadLetterCount(),
    bytes: { wcharTotal: ioUsed.wchar, tableWritten: io.totalWritten(), journalWritten: ioUsed.wchar - io.totalWritten() },
  };
}

export interface SqliteIngestParams {
  workloadFile: string;
  spec: WorkloadSpec;
  path: string;
  txEvents: number;
  synchronous: 'FULL' | 'NORMAL';
}

export const SQLITE_SCHEMA = `CREATE TABLE stock (
  item TEXT NOT NULL, location TEXT NOT NULL,
  on_hand INTEGER, inventory_seq INTEGER,
  reserved INTEGER, commerce_seq INTEGER,
  inbound INTEGER, procurement_seq INTEGER,
  PRIMARY KEY (item, location)
) WITHOUT ROWID`;

/** SQLite settings used everywhere (stated in the results). */
export const SQLITE_SETTINGS = 'WAL, WITHOUT ROWID table keyed (item, location), cache_size 64 MiB, wal_autocheckpoint default (1000 pages), page_size 4096';

export function openSqlite(path: string, synchronous: 'FULL' | 'NORMAL'): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma('cache_size = -65536');
  return db;
}

function upsertStatements(db: Database.Database): Database.Statement[] {
  // Only the event's column group; a group is replaced only by a newer sequence (partial-update
  // with sequence groups).
  return MODULES.map((d) =>
    db.prepare(
      `INSERT INTO stock (item, location, ${d.column}, ${d.seqColumn}) VALUES (?, ?, ?, ?) ` +
        `ON CONFLICT (item, location) DO UPDATE SET ${d.column} = excluded.${d.column}, ${d.seqColumn} = excluded.${d.seqColumn} ` +
        `WHERE stock.${d.seqColumn} IS NULL OR excluded.${d.seqColumn} >= stock.${d.seqColumn}`,
    ),
  );
}

/** The SQLite alternative: JSON.parse + UPSERT of the event's columns, `txEvents` per transaction. */
export function ingestSqlite(p: SqliteIngestParams) {
  const w = loadWorkload(p.workloadFile, p.spec);
  const db = openSqlite(p.path, p.synchronous);
  db.exec(SQLITE_SCHEMA);
  const stmts = upsertStatements(db);
  const mods = new Uint8Array(p.txEvents);
  const evs: Array<{ after: Record<string, unknown>; source: { seq: number } }> = new Array(p.txEvents);
  const apply = db.transaction((n: number) => {
    for (let j = 0; j < n; j++) {
      const d = MODULES[mods[j]!]!;
      const e = evs[j]!;
      stmts[mods[j]!]!.run(e.after.item, e.after.location, e.after[d.qtyField], e.source.seq);
    }
  });
  const dbBytes0 = fileBytes(p.path) + fileBytes(`${p.path}-wal`);
  const io0 = procIo();
  const t0 = nowMs();
  let commits = 0;
  for (let base = 0; base < w.count; base += p.txEvents) {
    const n = Math.min(p.txEvents, w.count - base);
    for (let j = 0; j < n; j++) {
      mods[j] = w.modules[base + j]!;
      evs[j] = JSON.parse(payloadAt(w, base + j).toString('utf8'));
    }
    apply(n);
    commits++;
  }
  const seconds = (nowMs() - t0) / 1000;
  const ioUsed = ioDelta(io0, procIo());
  const filesAfter = fileBytes(p.path) + fileBytes(`${p.path}-wal`);
  db.close(); // checkpoints and removes the WAL
  return {
    events: w.count,
    seconds,
    eventsPerSec: w.count / seconds,
    commits,
    bytes: { wcharTotal: ioUsed.wchar, writeBytesTotal: ioUsed.write_bytes, fileGrowth: filesAfter - dbBytes0, dbFileBytes: fileBytes(p.path) },
  };
}

/** The ceiling: only `JSON.parse` of the same payloads (decoded from the same Buffers). */
export function jsonParseOnly(p: { workloadFile: string; spec: WorkloadSpec }) {
  const w = loadWorkload(p.workloadFile, p.spec);
  let sink = 0;
  const t0 = nowMs();
  for (let i = 0; i < w.count; i++) {
    const ev = JSON.parse(payloadAt(w, i).toString('utf8')) as { source: { seq: number } };
    sink += ev.source.seq & 1;
  }
  const seconds = (nowMs() - t0) / 1000;
  return { events: w.count, seconds, eventsPerSec: w.count / seconds, sink };
}

// ----------------------------------------------------------------------------------------------
// Reads on the final state: point lookups and full scans, both engines in the same process.

export interface ReadParams {
  warehouse: string;
  sqlitePath: string;
  keys: number;
  lookups: number;
  reps: number;
  seed: number;
}

export function reads(p: ReadParams) {
  const catalog = new Catalog(p.warehouse);
  // Cold scan first: a freshly opened table decodes its files (OS page cache warm).
  const coldTable = catalog.getTable(STOCK_ID);
  const coldReader = coldTable.reader();
  // Scans go through `TableReader.scan()`, row arrays one by one: what the site's API (history,
  // status) and the agents' read-only tables consume. CPU time (whole process) beside wall time,
  // since the machine running the bench may be shared.
  const cpuSec = (c0: NodeJS.CpuUsage) => {
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1e6;
  };
  const c0 = process.cpuUsage();
  let t = nowMs();
  let coldRows = 0;
  for (const _ of coldReader.scan()) coldRows++;
  const coldScanSec = (nowMs() - t) / 1000;
  const coldScanCpuSec = cpuSec(c0);
  coldReader.close();

  const table = catalog.getTable(STOCK_ID);
  const reader = table.reader();
  const db = openSqlite(p.sqlitePath, 'NORMAL');
  const get = db.prepare('SELECT * FROM stock WHERE item = ? AND location = ?').raw(true);
  const all = db.prepare('SELECT * FROM stock').raw(true);

  const rnd = prng(p.seed);
  const sample = Array.from({ length: p.lookups }, () => keyOf(Math.floor(rnd() * p.keys)));
  const pkArgs = sample.map((k) => ({ item: k.item, location: k.location }));

  // Correctness: the two final states agree (on a sample of keys, and in row count).
  let mismatches = 0;
  for (const k of pkArgs.slice(0, 2000)) {
    const a = reader.get(k);
    const b = get.get(k.item, k.location) as unknown[] | undefined;
    const norm = (r: unknown[] | undefined) => (r ? r.map((v) => (v === null || v === undefined ? 'null' : String(v))).join('|') : 'none');
    if (norm(a) !== norm(b)) mismatches++;
  }

  const scanT = (): { rows: number; sec: number; cpuSec: number } => {
    const c = process.cpuUsage();
    const s = nowMs();
    let n = 0;
    for (const _ of reader.scan()) n++;
    return { rows: n, sec: (nowMs() - s) / 1000, cpuSec: cpuSec(c) };
  };
  const scanS = (): { rows: number; sec: number; cpuSec: number } => {
    const c = process.cpuUsage();
    const s = nowMs();
    let n = 0;
    for (const _ of all.iterate()) n++;
    return { rows: n, sec: (nowMs() - s) / 1000, cpuSec: cpuSec(c) };
  };
  const lookT = (lat: Float64Array): number => {
    const s = nowMs();
    for (let i = 0; i < pkArgs.length; i++) {
      const a = performance.now();
      reader.get(pkArgs[i]!);
      lat[i] = (performance.now() - a) * 1000;
    }
    return (nowMs() - s) / 1000;
  };
  // Throughput passes call the engine back to back, with no timer per call (two clock reads cost
  // ~0.1–0.5 µs, up to a tenth of a lookup); the latency passes time every call with
  // performance.now() (a double: hrtime.bigint would leave two BigInts of garbage per call for the
  // scans that follow to collect).
  const rateT = (): number => {
    const s = nowMs();
    for (let i = 0; i < pkArgs.length; i++) reader.get(pkArgs[i]!);
    return (nowMs() - s) / 1000;
  };
  const rateS = (): number => {
    const s = nowMs();
    for (let i = 0; i < sample.length; i++) get.get(sample[i]!.item, sample[i]!.location);
    return (nowMs() - s) / 1000;
  };
  const lookS = (lat: Float64Array): number => {
    const s = nowMs();
    for (let i = 0; i < sample.length; i++) {
      const k = sample[i]!;
      const a = performance.now();
      get.get(k.item, k.location);
      lat[i] = (performance.now() - a) * 1000;
    }
    return (nowMs() - s) / 1000;
  };
  // Warm both.
  scanT();
  scanS();
  const lat = new Float64Array(p.lookups);
  lookT(lat);
  lookS(lat);
  const runs: Array<Record<string, number>> = [];
  for (let r = 0; r < p.reps; r++) {
    const out: Record<string, number> = {};
    const tl = rateT();
    const sl = rateS();
    lookT(lat);
    const sortedT = Float64Array.from(lat).sort();
    lookS(lat);
    const sortedS = Float64Array.from(lat).sort();
    out.tLookupOps = p.lookups / tl;
    out.tLookupP50 = percentileSorted(sortedT, 50);
    out.tLookupP99 = percentileSorted(sortedT, 99);
    out.sLookupOps = p.lookups / sl;
    out.sLookupP50 = percentileSorted(sortedS, 50);
    out.sLookupP99 = percentileSorted(sortedS, 99);
    const ts = scanT();
    const ss = scanS();
    out.tScanRows = ts.rows;
    out.tScanRowsPerSec = ts.rows / ts.sec;
    out.tScanCpuRowsPerSec = ts.rows / ts.cpuSec;
    out.sScanRows = ss.rows;
    out.sScanRowsPerSec = ss.rows / ss.sec;
    out.sScanCpuRowsPerSec = ss.rows / ss.cpuSec;
    out.lookupRatio = out.tLookupOps / out.sLookupOps;
    out.scanRatio = out.tScanRowsPerSec / out.sScanRowsPerSec;
    runs.push(out);
  }
  reader.close();
  db.close();
  const med = (k: string) => median(runs.map((r) => r[k]!));
  const keysOf = Object.keys(runs[0]!);
  return {
    lookups: p.lookups,
    reps: p.reps,
    mismatches,
    checkedKeys: Math.min(2000, pkArgs.length),
    coldScan: { rows: coldRows, sec: coldScanSec, rowsPerSec: coldRows / coldScanSec, cpuSec: coldScanCpuSec, cpuRowsPerSec: coldRows / coldScanCpuSec },
    median: Object.fromEntries(keysOf.map((k) => [k, med(k)])),
    runs,
    finalState: tableFilesSummary(table),
  };
}

// ----------------------------------------------------------------------------------------------
// Flush and compaction throughput.

export interface FlushParams {
  dir: string;
  keys: number;
  runs: number;
  seed: number;
}

/**
 * `runs` batches, each writing every one of `keys` keys (one column group, rotating), flushed and
 * committed as one level-0 file each ('write-only' so no compaction happens in between); then a
 * fresh Table (cold run cache) and writer compact everything fully: rows read from data files,
 * merged and written as one run.
 */
export function flushCompaction(p: FlushParams) {
  const io = new CountingFileIO();
  const catalog = new Catalog(join(p.dir, 'warehouse'), { fileIO: io });
  catalog.createDatabase(DATABASE, true);
  const table = catalog.createTable(STOCK_ID, stockSpec(STOCK_TABLE, { 'write-only': 'true' }));
  const writer = table.newWriter({ commitUser: 'bench' });
  const keys = Array.from({ length: p.keys }, (_, k) => keyOf(k));
  const rnd = prng(p.seed);
  const flushes: Array<{ rows: number; sec: number; bytes: number }> = [];
  let seq = 0;
  for (let r = 0; r < p.runs; r++) {
    const d = MODULES[r % 3]!;
    seq++;
    for (const k of keys) writer.writeRecord({ item: k.item, location: k.location, [d.column]: Math.floor(rnd() * 1000), [d.seqColumn]: BigInt(seq) });
    const before = io.counts.written.data;
    const t = nowMs();
    writer.flush();
    const sec = (nowMs() - t) / 1000;
    flushes.push({ rows: p.keys, sec, bytes: io.counts.written.data - before });
    writer.commit();
  }
  writer.close();
  // Compaction with a cold cache: the inputs are decoded from their files.
  const io2 = new CountingFileIO();
  const t2 = new Catalog(join(p.dir, 'warehouse'), { fileIO: io2 }).getTable(STOCK_ID);
  const w2 = t2.newWriter({ commitUser: 'bench' });
  const before = tableFilesSummary(t2);
  const t = nowMs();
  w2.compact(true);
  const compactSec = (nowMs() - t) / 1000;
  const after = tableFilesSummary(t2);
  w2.close();
  // Cold read of the compacted run (decode only; one run, no merge partner).
  const t3 = new Catalog(join(p.dir, 'warehouse')).getTable(STOCK_ID);
  const rd = t3.reader();
  const s = nowMs();
  let n = 0;
  for (const _ of rd.scan()) n++;
  const readSec = (nowMs() - s) / 1000;
  rd.close();
  const flushRowsPerSec = median(flushes.map((f) => f.rows / f.sec));
  return {
    keys: p.keys,
    flushes,
    flushRowsPerSec,
    flushBytesPerRow: median(flushes.map((f) => f.bytes / f.rows)),
    compaction: {
      inputFiles: before.files,
      inputRows: before.rows,
      outputFiles: after.files,
      outputRows: after.rows,
      sec: compactSec,
      inRowsPerSec: before.rows / compactSec,
      outRowsPerSec: after.rows / compactSec,
      bytesRead: io2.counts.read.data,
      bytesWritten: io2.counts.written.data,
    },
    coldRead: { rows: n, sec: readSec, rowsPerSec: n / readSec },
  };
}

// ----------------------------------------------------------------------------------------------
// Tags and time travel vs copying the SQLite file.

export interface TagParams {
  dir: string;
  sizes: number[];
  seed: number;
  reps: number;
}

function fsyncFile(path: string): void {
  const fd = fs.openSync(path, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function tags(p: TagParams) {
  const out: Array<Record<string, number>> = [];
  for (const size of p.sizes) {
    const dir = join(p.dir, `tags-${size}`);
    fs.mkdirSync(dir, { recursive: true });
    const catalog = new Catalog(join(dir, 'warehouse'));
    catalog.createDatabase(DATABASE, true);
    const table = catalog.createTable(STOCK_ID, stockSpec());
    const writer = table.newWriter({ commitUser: 'bench' });
    const db = openSqlite(join(dir, 'stock.db'), 'NORMAL');
    db.exec(SQLITE_SCHEMA);
    const ins = db.prepare('INSERT INTO stock VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    const rnd = prng(p.seed + size);
    const fill = db.transaction((from: number, to: number) => {
      for (let k = from; k < to; k++) {
        const { item, location } = keyOf(k);
        const a = Math.floor(rnd() * 1000);
        writer.writeRecord({ item, location, on_hand: a, inventory_seq: 1n, reserved: 0, commerce_seq: 1n, inbound: 0, procurement_seq: 1n });
        ins.run(item, location, a, 1, 0, 1, 0, 1);
      }
    });
    for (let k = 0; k < size; k += 100_000) fill(k, Math.min(size, k + 100_000));
    writer.commit();
    db.pragma('wal_checkpoint(TRUNCATE)');
    // A tag: one small file (createAtomic: write, fsync, link, dir fsync).
    const tagMs: number[] = [];
    for (let r = 0; r < p.reps; r++) {
      const t = nowMs();
      table.createTag(`t${r}`);
      tagMs.push(nowMs() - t);
    }
    // The SQLite alternative for "a snapshot": a durable copy of the database file.
    const copyMs: number[] = [];
    for (let r = 0; r < p.reps; r++) {
      const target = join(dir, `copy-${r}.db`);
      const t = nowMs();
      fs.copyFileSync(join(dir, 'stock.db'), target);
      fsyncFile(target);
      copyMs.push(nowMs() - t);
      fs.rmSync(target);
    }
    // Change 10 % of the rows after the tag, then read the tag and the latest snapshot, each on a
    // freshly opened table (cold run cache, OS page cache warm).
    for (let k = 0; k < size; k += 10) {
      const { item, location } = keyOf(k);
      writer.writeRecord({ item, location, reserved: 5, commerce_seq: 2n });
    }
    writer.commit();
    writer.close();
    db.close();
    const scanAt = (at: { tag?: string }) => {
      const t = new Catalog(join(dir, 'warehouse')).getTable(STOCK_ID);
      const r = t.reader(at);
      const s = nowMs();
      let n = 0;
      for (const _ of r.scan()) n++;
      const sec = (nowMs() - s) / 1000;
      r.close();
      return { n, sec };
    };
    const tagScan: number[] = [];
    const latestScan: number[] = [];
    for (let r = 0; r < Math.max(1, Math.min(3, p.reps)); r++) {
      tagScan.push(scanAt({ tag: 't0' }).sec);
      latestScan.push(scanAt({}).sec);
    }
    out.push({
      rows: size,
      tagCreateMs: median(tagMs),
      sqliteCopyMs: median(copyMs),
      sqliteFileBytes: fileBytes(join(dir, 'stock.db')),
      tagReadSec: median(tagScan),
      latestReadSec: median(latestScan),
      tagReadRowsPerSec: size / median(tagScan),
      latestReadRowsPerSec: size / median(latestScan),
    });
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { sizes: out };
}

// ----------------------------------------------------------------------------------------------
// MQTT end to end through the embedded broker.

export interface MqttParams {
  dir: string;
  publisherScript: string;
  /** Messages per publisher connection (3 connections: inventory, commerce, procurement). */
  perPublisher: number;
  window: number;
  maxMs: number;
  reps: number;
  pacedRate: number;
  pacedMs: number;
}

const credentials = {
  async verify(username: string): Promise<Principal | null> {
    return MODULES.some((m) => m.module === username) ? { name: username, kind: 'module', module: username } : null;
  },
};

async function withBroker<T>(dir: string, journaled: boolean, f: (port: number, journal: Journal | undefined) => Promise<T>): Promise<T> {
  let journal: Journal | undefined;
  if (journaled) {
    fs.mkdirSync(dir, { recursive: true });
    journal = Journal.open(dir);
  }
  const inner = journal ? journalSink(journal) : async () => 0n;
  // The broker thread's time from the first event to the last: wall, CPU, and (journaled) the
  // group commits' share (insert + fsync on the event loop) — what limits the journaled rate.
  let first = 0;
  let last = 0;
  let cpuAtFirst = 0;
  const sink: typeof inner = (topic, payload) => {
    last = nowMs();
    if (first === 0) {
      first = last;
      cpuAtFirst = threadSchedstatSec(0) ?? 0;
    }
    return inner(topic, payload);
  };
  const broker = new EmbeddedBroker({ site: SITE, credentials, onEvent: sink, host: '127.0.0.1', port: 0 });
  const port = await broker.listen();
  const commitMs0 = journal?.stats().commitMsTotal ?? 0;
  try {
    const r = await f(port, journal);
    const wallSec = (last - first) / 1000;
    if (r && typeof r === 'object' && wallSec > 0) {
      Object.assign(r, {
        brokerCpuShare: ((threadSchedstatSec(0) ?? 0) - cpuAtFirst) / wallSec,
        ...(journal ? { commitShare: (journal.stats().commitMsTotal - commitMs0) / 1000 / wallSec } : {}),
      });
    }
    return r;
  } finally {
    await broker.close();
    journal?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function mqtt(p: MqttParams) {
  const runs: Array<Record<string, number>> = [];
  for (let r = 0; r < p.reps; r++) {
    const order = r % 2 === 0 ? [false, true] : [true, false];
    const rec: Record<string, number> = {};
    for (const journaled of order) {
      const res: Record<string, number> = await withBroker(join(p.dir, `mqtt-${r}-${journaled}`), journaled, async (port, journal): Promise<Record<string, number>> => {
        const x = await runPublisher(p.publisherScript, { port, site: SITE, perPublisher: p.perPublisher, window: p.window, maxMs: p.maxMs });
        return { ...x, eventsPerCommit: journal ? journal.stats().eventsPerCommitMean : 0 };
      });
      const k = journaled ? 'journal' : 'bare';
      rec[`${k}MsgPerSec`] = res.msgPerSec!;
      rec[`${k}Acked`] = res.acked!;
      rec[`${k}CpuShare`] = res.brokerCpuShare!;
      if (journaled) {
        rec.eventsPerCommit = res.eventsPerCommit!;
        rec.commitShare = res.commitShare!;
      }
    }
    rec.ratio = rec.journalMsgPerSec! / rec.bareMsgPerSec!;
    runs.push(rec);
  }
  // Paced latency: publish → PUBACK (= journaled, for the journaled broker).
  const paced: Record<string, Record<string, number>> = {};
  for (const journaled of [true, false]) {
    paced[journaled ? 'journal' : 'bare'] = await withBroker(join(p.dir, `mqtt-paced-${journaled}`), journaled, (port) =>
      runPublisher(p.publisherScript, { port, site: SITE, paced: true, rate: p.pacedRate, durationMs: p.pacedMs }),
    );
  }
  const med = (k: string) => median(runs.map((r) => r[k]!));
  return {
    runs,
    median: {
      bareMsgPerSec: med('bareMsgPerSec'),
      journalMsgPerSec: med('journalMsgPerSec'),
      ratio: med('ratio'),
      eventsPerCommit: med('eventsPerCommit'),
      bareCpuShare: med('bareCpuShare'),
      journalCpuShare: med('journalCpuShare'),
      commitShare: med('commitShare'),
    },
    paced,
  };
}

// ----------------------------------------------------------------------------------------------
// Memory: peak RSS of a site process holding a state of `keys` rows.
//
// The process is launched as a site process is launched (the harness gives it core/site/v8-flags.ts
// `SITE_LAUNCH`: node flags and environment), sets itself up as a site sets itself up
// (`applySiteV8Flags`, the call bin/tilstand.mjs and electron/main.mjs make first: the same flag
// list, not a copy) and the catalog is opened as core/site opens it (config.ts `catalogOptions` of
// a default config): one run-cache budget (`memory.tableCacheBytes`) for every table and the
// site's write-buffer size (`memory.writeBufferBytes`), so the figure is that of a site with its
// default config.

export interface MemoryParams {
  dir: string;
  spec: WorkloadSpec;
  commitEvery: number;
  /** Only load the modules and report (the baseline of a Node process with Tilstand loaded). */
  baseline?: boolean;
}

const MiB = 2 ** 20;

/** process.memoryUsage() in MB: RSS, V8 heap used / reserved, external (array buffers among it). */
function usageMB() {
  const m = process.memoryUsage();
  return { rssMB: m.rss / MiB, heapUsedMB: m.heapUsed / MiB, heapTotalMB: m.heapTotal / MiB, externalMB: m.external / MiB, arrayBuffersMB: m.arrayBuffers / MiB };
}

export async function memory(p: MemoryParams) {
  const { applySiteV8Flags, missingLaunchSettings, SITE_LAUNCH, SITE_V8_FLAGS } = await import('../core/site/v8-flags.ts');
  applySiteV8Flags();
  // Loaded before the baseline returns, so the baseline holds every module the measurement does.
  const { catalogOptions, defaultConfig } = await import('../core/site/config.ts');
  if (p.baseline) {
    const ru = process.resourceUsage();
    return { maxRssMB: ru.maxRSS / 1024 };
  }
  const settings = catalogOptions(defaultConfig(SITE));
  fs.mkdirSync(join(p.dir, 'journal'), { recursive: true });
  const journal = Journal.open(join(p.dir, 'journal'));
  const catalog = new Catalog(join(p.dir, 'warehouse'), settings);
  catalog.createDatabase(DATABASE, true);
  const table = catalog.createTable(STOCK_ID, stockSpec());
  const writer = table.newWriter({ commitUser: 'bench' });
  // The largest RSS sampled (before and after each commit: a commit flushes and may compact),
  // with what was in memory then; maxRSS (the kernel's high-water mark) is the figure.
  let peak = { stage: 'start', ...usageMB(), runCacheMB: 0, writeBufferMB: 0 };
  let writeBufferPeakMB = 0;
  let commits = 0;
  const sample = (stage: string) => {
    const u = usageMB();
    const writeBufferMB = writer.bufferedEstimateBytes / MiB;
    writeBufferPeakMB = Math.max(writeBufferPeakMB, writeBufferMB);
    if (u.rssMB > peak.rssMB) peak = { stage, ...u, runCacheMB: catalog.cacheBudget.usedBytes / MiB, writeBufferMB };
  };
  const commit = () => {
    sample(`before commit ${commits + 1}`);
    writer.commit({ 'tilstand.journal.position': String(journal.lastPosition()) });
    commits++;
    sample(`after commit ${commits}`);
  };
  const WINDOW = 1000;
  let batch: { payload: Buffer; m: number }[] = [];
  let since = 0;
  const flushBatch = async () => {
    const evs = batch.map((b) => JSON.parse(b.payload.toString('utf8')) as { source: { module: string; stream: string; seq: number } });
    await Promise.all(batch.map((b, j) => journal.append({ topic: TOPICS[b.m]!, payload: b.payload, receivedAtMs: T0_MS, module: evs[j]!.source.module, stream: evs[j]!.source.stream, seq: evs[j]!.source.seq })));
    for (let j = 0; j < batch.length; j++) writer.writeRecord(rowOf(batch[j]!.m, evs[j] as never));
    since += batch.length;
    batch = [];
    if (since >= p.commitEvery) {
      commit();
      since = 0;
    }
  };
  const allKeys = { ...p.spec };
  for (const e of generateEvents(allKeys)) {
    batch.push({ payload: Buffer.from(e.payload), m: e.m });
    if (batch.length === WINDOW) await flushBatch();
  }
  if (batch.length > 0) await flushBatch();
  commit();
  const afterIngest = usageMB();
  // Hold and read the state: a full scan and lookups through one reader (the run cache fills).
  const reader = table.reader();
  let rows = 0;
  for (const _ of reader.scan()) rows++;
  sample('after scan');
  const rnd = prng(7);
  for (let i = 0; i < 20_000; i++) reader.get(keyOf(Math.floor(rnd() * p.spec.keys)));
  sample('after lookups');
  const held = usageMB();
  const summary = tableFilesSummary(table);
  const runCacheMB = catalog.cacheBudget.usedBytes / MiB;
  reader.close();
  writer.close();
  journal.close();
  const ru = process.resourceUsage();
  return {
    rows,
    maxRssMB: ru.maxRSS / 1024,
    settings: {
      tableCacheBytes: settings.cacheBytes,
      writeBufferBytes: settings.writeBufferBytes,
      v8Flags: [...SITE_V8_FLAGS],
      // What of core/site/v8-flags.ts SITE_LAUNCH this process was started with (the harness launches it as a site is launched).
      launch: { nodeFlags: [...SITE_LAUNCH.nodeFlags], env: { ...SITE_LAUNCH.env }, missing: missingLaunchSettings() },
    },
    // The whole process (modules, ingest, reads): the cost side of the site's V8 flags.
    cpuSec: cpuSince({ user: 0, system: 0 }),
    afterIngest,
    holding: held,
    peakSample: peak,
    runCacheMB,
    // Misses after the ingest mean a file of the state was evicted and decoded again.
    runCache: { hits: table.cache.hits, misses: table.cache.misses, oversize: catalog.cacheBudget.oversize },
    writeBufferPeakMB,
    finalState: summary,
  };
}
