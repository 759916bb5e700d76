// Helpers shared by the site-level suites (crash, soak, security): a fresh data directory made by
// `initDataDir` (cheap scrypt so that broker sign-ins cost milliseconds, short freshness budgets
// so commits happen all the time), the child process running site-child.ts, module credentials,
// and the event envelopes of the seed streams.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { buildSync } from 'esbuild';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Catalog, valueToJson, type Table } from '../../../core/lsm/index.ts';
import { initDataDir } from '../../../core/site/init.ts';
import type { SiteConfig } from '../../../core/site/config.ts';

export const CHEAP_SCRYPT = { N: 1 << 10, r: 8, p: 1 };
export const CHILD = join(import.meta.dirname, 'site-child.ts');

/**
 * The child as one ESM bundle (node_modules stay external), built once per test process: tsx
 * transforms the whole module graph at every start (~2.5 s here), the bundle starts in ~1 s, which
 * is what lets the short crash suite kill the site 30 times in its time bound. Written next to the
 * sources (`.build/`, git-ignored) so node_modules resolve; temp name + rename, as test files run
 * in parallel.
 */
let bundled: string | undefined;
export function childEntry(): string {
  if (bundled) return bundled;
  const dir = join(import.meta.dirname, '..', '.build');
  mkdirSync(dir, { recursive: true });
  const out = join(dir, 'site-child.mjs');
  const tmp = join(dir, `site-child.${process.pid}.${Date.now()}.mjs`);
  buildSync({ entryPoints: [CHILD], bundle: true, platform: 'node', format: 'esm', packages: 'external', outfile: tmp, target: 'node20', logLevel: 'error' });
  renameSync(tmp, out);
  statSync(out);
  bundled = out;
  return out;
}

export interface TestSite {
  data: string;
  site: string;
  secrets: Record<string, { username: string; password: string }>;
  catalog: Catalog;
  table(name: string): Table;
}

/** A new site on `data` with budgets of `budgetMs` (all tables), ephemeral ports. */
export async function makeSiteDir(data: string, site: string, o: { budgetMs?: number; tableOptions?: Record<string, Record<string, string>>; config?: (c: SiteConfig) => SiteConfig } = {}): Promise<TestSite> {
  await initDataDir({
    data,
    site,
    scrypt: CHEAP_SCRYPT,
    admin: { name: 'admin', pin: '246810' },
    config: (c) => {
      const out: SiteConfig = {
        ...c,
        // Ingest's tables commit within `budgetMs`; approval_inbox's budget (the agent's checks) stays.
        tables: c.tables.map((b) => (b.table === 'approval_inbox' ? b : { ...b, budgetMs: o.budgetMs ?? 150, confirmedBy: 'reliability test' })),
        broker: { ...c.broker, port: 0 } as SiteConfig['broker'],
        http: { ...c.http, port: 0 },
        journal: { ...c.journal, pruneIntervalMs: 1000 },
      };
      return o.config ? o.config(out) : out;
    },
  });
  const catalog = new Catalog(join(data, 'warehouse'));
  const t = (name: string) => catalog.getTable({ database: `site_${site}`, table: name });
  for (const [table, opts] of Object.entries(o.tableOptions ?? {})) {
    t(table).alter(Object.entries(opts).map(([key, value]) => ({ kind: 'setOption' as const, key, value })));
  }
  const secrets = (JSON.parse(readFileSync(join(data, 'secrets', 'modules.json'), 'utf8')) as { modules: TestSite['secrets'] }).modules;
  return { data, site, secrets, catalog, table: t };
}

export interface ChildStats {
  journal: number;
  snapshots: Record<string, number>;
  earliest: Record<string, number | null>;
  kinds: Record<string, string | null>;
  tags: number;
  stockTagFiles: number;
  syncDone: number;
  syncPending: number;
  rss: number;
  fds: number;
  ingestFailure: string | null;
  broker?: Record<string, number> | null;
}

export interface SiteChild {
  proc: ChildProcess;
  pid: number;
  ready: Promise<{ mqttUrl: string; httpUrl: string }>;
  exited: Promise<number | null>;
  stats: ChildStats[];
  stderr(): string;
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

/** `nodeFlags`: flags for the child's node before its entry (the soak's `--heapsnapshot-signal`). */
export function startSiteChild(data: string, hq: string, args: string[] = [], nodeFlags: string[] = []): SiteChild {
  const proc = spawn(process.execPath, [...nodeFlags, childEntry(), data, hq, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  proc.stdin!.on('error', () => undefined);
  let err = '';
  proc.stderr!.on('data', (d) => {
    err += String(d);
    if (err.length > 200_000) err = err.slice(-100_000);
    if (process.env.TILSTAND_VERBOSE) process.stderr.write(String(d));
  });
  const stats: ChildStats[] = [];
  let readyResolve!: (v: { mqttUrl: string; httpUrl: string }) => void;
  let readyReject!: (e: Error) => void;
  const ready = new Promise<{ mqttUrl: string; httpUrl: string }>((res, rej) => ((readyResolve = res), (readyReject = rej)));
  ready.catch(() => undefined);
  let stoppedSeen = false;
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    if (line.startsWith('ready ')) {
      const [mqttUrl, httpUrl] = line.slice(6).split(' ') as [string, string];
      readyResolve({ mqttUrl, httpUrl });
    } else if (line.startsWith('stats ')) {
      stats.push(JSON.parse(line.slice(6)) as ChildStats);
      if (stats.length > 20_000) stats.splice(0, 10_000);
    } else if (line === 'stopped') stoppedSeen = true;
  });
  const exited = new Promise<number | null>((res) =>
    proc.on('exit', (code) => {
      readyReject(new Error(`site child exited (${code}) before ready: ${err.slice(-3000)}`));
      res(code);
    }),
  );
  return {
    proc,
    pid: proc.pid!,
    ready,
    exited,
    stats,
    stderr: () => err,
    async stop() {
      proc.stdin!.write('stop\n');
      const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 30_000))]);
      if (code === 'timeout') {
        proc.kill('SIGKILL');
        throw new Error(`site child did not stop within 30 s: ${err.slice(-3000)}`);
      }
      if (!stoppedSeen && code === 0) throw new Error('site child exited 0 without "stopped"');
      return code;
    },
    async kill() {
      proc.kill('SIGKILL');
      await exited;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Envelopes of the seed streams.

export const STOCK_STREAMS = [
  { module: 'inventory', stream: 'stock', contract: 'inventory.stock', field: 'qty', column: 'on_hand', seqColumn: 'inventory_seq' },
  { module: 'commerce', stream: 'reservations', contract: 'commerce.reservations', field: 'reserved_qty', column: 'reserved', seqColumn: 'commerce_seq' },
  { module: 'procurement', stream: 'inbound', contract: 'procurement.inbound', field: 'inbound_qty', column: 'inbound', seqColumn: 'procurement_seq' },
] as const;

export function envelope(module: string, stream: string, contract: string, seq: number, after: Record<string, unknown>, op = 'c'): string {
  return JSON.stringify({ op, before: null, after, source: { module, stream, seq }, ts_ms: 1764489600000 + seq, contract: { name: contract, version: 1 } });
}

export const jobAfter = (jobId: string, i: number) => ({ job_id: jobId, status: 'released', capability: i % 2 ? 'forklift' : 'picker', priority: i % 5, material_item: `I-${i % 7}`, material_qty: i % 13 });

/** Rows of a table at a read point as JSON objects keyed by column. */
export function rowsOf(t: Table, at: Parameters<Table['scanRows']>[0] = {}): Record<string, unknown>[] {
  return t.scanRows(at).map((r) => Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, r[i])])));
}
export const canon = (rows: Record<string, unknown>[]): string[] => rows.map((r) => JSON.stringify(r)).sort();
