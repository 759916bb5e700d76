// `<data>/config.json`: what a site is (its id, tables and their freshness budgets, bindings,
// broker, HTTP server, HQ target, journal retention, disk budget, memory, the agent's thresholds),
// and the data directory's names.
//
// `parseConfig` validates every key and fills defaults; an error names the key and says what was
// expected and what it got (`ConfigError.key`, e.g. `broker.port`). Reading never writes.
// Invariants: a parsed config's site id is a safe name (no '..', slash or control character, and
// usable in MQTT topics and folder names); every table name is a safe name; ports are 0..65535.

import { readFileSync, promises as fsPromises } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { NAME_PATTERN } from '../ingest/envelope.ts';
import { jsonErrorWhere } from '../lsm/errors.ts';
import { repeatedKeyPath } from '../lsm/json-keys.ts';
import { nameProblem } from '../inbox/users.ts';
import { BindingError, bindingName, checkBinding, checkOrderingStreams, type Binding } from '../ingest/binding.ts';
import type { Contract } from '../ingest/contracts.ts';
import { SEED_BINDINGS } from '../ingest/seed-bindings.ts';
import { SEED_TABLES, type TableDefinition } from '../ingest/seed-tables.ts';
import { DEFINITION_KEYS, parseTableDefinition, TableDefinitionError } from '../ingest/site-tables.ts';
import { DEAD_LETTERS_TABLE, DEAD_LETTERS_TABLE_NAME } from '../ingest/dead-letters.ts';
import { isLoopback } from '../ingest/broker.ts';
import { budgetOf, DEFAULT_TABLE_BUDGETS, type TableBudget } from '../ingest/freshness.ts';
import { SITE_MODULES } from './site-db.ts';
import { targetDescription, targetProblem } from '../sync/targets/open.ts';
import { foldersUp, hqInData, realFolder } from '../sync/cli/common.ts';
import { APPROVAL_INBOX_TABLE } from '../inbox/inbox-tables.ts';
import { localFileIO } from '../lsm/index.ts';
import { AGENT_CONFIG_KEYS, AgentConfigError, agentConfig, DEFAULT_AGENT_CONFIG, DEFAULT_RECHECK_INTERVAL_MS, loadRuleFiles, RuleFileError, siteTablesRead, type AgentConfig, type AgentConfigInput, type LoadedRuleFiles } from '../agents/index.ts';
import { outsideImportProblem, type RuleFileModules } from '../agents/rule-files.ts';

export type { TableBudget } from '../ingest/freshness.ts';

/** Tilstand's own tables a site's ingest keeps (the seed state tables and dead_letters); with the site's own: `siteTables`. */
export const SITE_TABLES: readonly string[] = [...SEED_TABLES.map((t) => t.name), DEAD_LETTERS_TABLE_NAME];

/**
 * The tables config `tables` takes a budget for: the approval inbox (its age is how long state
 * commits have waited for the agent's check of the open proposals; the site measures it, not
 * ingest) and ingest's tables.
 */
export const BUDGET_TABLES: readonly string[] = [APPROVAL_INBOX_TABLE, ...SITE_TABLES];

/**
 * The smallest approval_inbox budget: twice the agent's check interval. A commit can wait one
 * interval for the check, and the check takes time of its own; a budget under that would be
 * breached by the design, not by a fault.
 */
export const MIN_INBOX_BUDGET_MS = 2 * DEFAULT_RECHECK_INTERVAL_MS;

/** The budgets ingest keeps (config `tables` without approval_inbox). */
export function ingestBudgets(c: Pick<SiteConfig, 'tables'>): TableBudget[] {
  const names = siteTables(c);
  return c.tables.filter((b) => names.includes(b.table)).map(budgetOf);
}

/**
 * The tables the site defines for its own modules' data (config `tables` entries with `columns`;
 * core/ingest site-tables.ts), in config order. parseConfig has checked them.
 */
export function siteTableDefinitions(c: Pick<SiteConfig, 'tables'>): TableDefinition[] {
  const out: TableDefinition[] = [];
  for (const [i, b] of c.tables.entries()) {
    const def = parseTableDefinition(b as unknown as Record<string, unknown>, `tables[${i}]`);
    if (def) out.push(def);
  }
  return out;
}

/**
 * Every table the site's ingest keeps, in the order a running site lists them (the Ingestor's):
 * the seed tables, the site's own (config order), dead_letters.
 */
export function siteTables(c: Pick<SiteConfig, 'tables'>): string[] {
  return [...SEED_TABLES.map((t) => t.name), ...siteTableDefinitions(c).map((d) => d.name), DEAD_LETTERS_TABLE_NAME];
}

/** approval_inbox's budget: config `tables`' entry, else core/ingest's default (2 s). */
export function inboxBudget(c: Pick<SiteConfig, 'tables'>): TableBudget {
  const b = c.tables.find((x) => x.table === APPROVAL_INBOX_TABLE) ?? DEFAULT_TABLE_BUDGETS.find((x) => x.table === APPROVAL_INBOX_TABLE)!;
  return { ...b };
}

/** Every name inside a data directory (DESIGN.md, "Shared names"). */
export const dataPaths = (data: string, site?: string) => ({
  config: join(data, 'config.json'),
  warehouse: join(data, 'warehouse'),
  database: site === undefined ? undefined : `site_${site}`,
  databaseDir: site === undefined ? undefined : join(data, 'warehouse', `site_${site}.db`),
  journal: join(data, 'journal.db'),
  siteDb: join(data, 'site.db'),
  contracts: join(data, 'contracts'),
  logs: join(data, 'logs'),
  controlSocket: join(data, 'control.sock'),
  secrets: join(data, 'secrets'),
  moduleSecrets: join(data, 'secrets', 'modules.json'),
  demo: join(data, 'demo'),
});

export const DEFAULT_DATA_DIR = './tilstand-data';
export const CONFIG_FORMAT = 1;

export type BrokerConfig =
  | {
      readonly mode: 'embedded';
      readonly host: string;
      readonly port: number;
      readonly tls: { readonly certPath: string; readonly keyPath: string } | null;
      readonly allowInsecureNonLoopback: boolean;
      /** Hold a publish this long while the disk is full, then disconnect the client unacknowledged. */
      readonly diskFullHoldMaxMs: number;
    }
  | {
      readonly mode: 'external';
      readonly url: string;
      readonly username: string;
      /** A file holding the password (kept out of config.json). */
      readonly passwordFile: string;
      /**
       * The modules whose events the site reads: one subscription (and mosquitto session) per
       * module on `tilstand/<site>/events/<module>/#`. Absent: the seed modules
       * (`externalBrokerModules`); left absent when config.json does not give it, so a config
       * written back keeps the file's shape.
       */
      readonly modules?: readonly string[];
    };

/**
 * A config `tables` entry: a freshness budget, and for a table of the site's own its definition
 * (core/ingest site-tables.ts `parseTableDefinition`: columns, primary key, partition keys, Paimon
 * options).
 */
export interface SiteTableEntry extends TableBudget {
  readonly comment?: string;
  readonly columns?: readonly { readonly name: string; readonly type: string; readonly description?: string }[];
  readonly primaryKeys?: readonly string[];
  /** Paimon's partition keys (columns in primaryKeys); absent: an unpartitioned table. */
  readonly partitionKeys?: readonly string[];
  readonly options?: Readonly<Record<string, string>>;
}

export interface SiteConfig {
  readonly format: number;
  readonly site: string;
  /**
   * Freshness budget per table (ingest's TableBudget: table, budgetMs, decision, confirmedBy); an
   * entry that gives `columns` also defines a table of the site's own (`siteTableDefinitions`).
   */
  readonly tables: readonly SiteTableEntry[];
  /** 'seed' = core/ingest's seed bindings; otherwise the bindings themselves. */
  readonly bindings: 'seed' | readonly Binding[];
  readonly broker: BrokerConfig;
  /** `tls` is required when `host` is not loopback (the UI's sessions travel over it). */
  readonly http: { readonly host: string; readonly port: number; readonly tls: { readonly certPath: string; readonly keyPath: string } | null };
  /** Where core/sync ships snapshots; null until a line to HQ exists. */
  readonly hq: { readonly target: string | null };
  readonly journal: { readonly retentionAgeMs: number; readonly retentionBytesMax: number; readonly pruneIntervalMs: number };
  readonly diskBudget: { readonly journalBytesMax: number; readonly diskFreeBytesMin: number };
  /**
   * What the site process may hold of the tables in memory (core/lsm/DESIGN.md, "Memory of a
   * site process"): `tableCacheBytes` is one budget of decoded data files shared by every table
   * of the site's catalog; `writeBufferBytes` is each table writer's buffer, flushed to a
   * level-0 file when it reaches this (overrides the tables' `write-buffer-size` in this process
   * only).
   */
  readonly memory: { readonly tableCacheBytes: number; readonly writeBufferBytes: number };
  /**
   * `streamSilentMs`: per stream (`module/stream`, or `*` for every stream not named), how long it
   * may deliver nothing before the `stream_silent` alarm says so (0: never). Only the site knows
   * how quiet a stream may be (inbound orders may come twice a day), so a new site has none.
   */
  readonly alarms: { readonly streamSilentMs: Readonly<Record<string, number>> };
  /**
   * How long the agent's evidence stays on the site (core/agents DESIGN.md, step 4): the run tags
   * of a run that proposed something new (`proposingRunsMs`, time for a person to decide), of the
   * other runs (`otherRunsMs`, only the next run's baseline), and the `decision-<proposal id>` tags
   * of what a person decided (`decisionsMs`, what an audit asks about). HQ keeps every tag synced.
   */
  readonly evidence: { readonly proposingRunsMs: number; readonly otherRunsMs: number; readonly decisionsMs: number };
  /**
   * How long a dead letter stays once it is closed — replayed, or dismissed by a named person
   * (`closedRetentionMs`; 0: for good). Open letters stay however old. The site deletes the older
   * closed ones hourly (core/ingest `purgeClosedDeadLetters`): each kept its payload, and a module
   * that sent a version the site lacked for a day leaves gigabytes of them.
   */
  readonly deadLetters: { readonly closedRetentionMs: number };
  /**
   * The floor UI: `idleSignOutMs` signs the person at a screen out after that long without a
   * touch, click, key or pointer movement there (0: never), so the next person at a shared floor
   * PC does not decide under their name. The UI's timer does it, and the SiteService from the
   * input age each UI call carries (a page closed or reloaded). A session left without any request
   * at all still ends after 12 h (ui-server.ts).
   */
  readonly ui: { readonly idleSignOutMs: number };
  /**
   * The work-queue agent's thresholds (core/agents config.ts): how often it runs, each item's
   * reorder point and order-up-to level, job run times by capability, when a free resource counts
   * as idle, from what quantity a replenishment is medium risk. The evidence retentions are
   * `evidence`. `tilstand replay export` records this section, so a replay runs what ran live.
   * `ruleFiles`: rules of the site's own (core/agents rule-files.ts), paths relative to the data
   * directory or absolute; absent when none. Only the paths are read here (readConfig stays
   * synchronous and runs no code): `loadSiteRuleFiles` loads and checks them, at start and in
   * `tilstand config check`. Unlike the thresholds, they take effect at the next start.
   */
  readonly agent: SiteAgentConfig;
}

/** The agent's tunables config.json's `agent` section sets (the retentions of its tags are `evidence`). */
const SITE_AGENT_TUNABLES = AGENT_CONFIG_KEYS.filter((k) => k !== 'evidenceRetentionMs' && k !== 'baselineRetentionMs');
/** The keys of config.json's `agent` section: the agent's tunables and `ruleFiles` (not a tunable: the rules it runs). */
export const SITE_AGENT_KEYS: readonly string[] = [...SITE_AGENT_TUNABLES, 'ruleFiles'];
export type SiteAgentConfig = Omit<AgentConfig, 'evidenceRetentionMs' | 'baselineRetentionMs'> & { readonly ruleFiles?: readonly string[] };

const siteAgentOf = (c: AgentConfig, ruleFiles?: readonly string[]): SiteAgentConfig =>
  Object.freeze({ ...Object.fromEntries(SITE_AGENT_TUNABLES.map((k) => [k, c[k]])), ...(ruleFiles !== undefined ? { ruleFiles: Object.freeze([...ruleFiles]) } : {}) }) as unknown as SiteAgentConfig;

export class ConfigError extends Error {
  readonly key: string;
  /** `key` names a config.json key, or a command-line option (`--hq`), which is then said as such. */
  constructor(key: string, message: string) {
    super(key.startsWith('--') ? `option ${key}: ${message}` : `config ${key}: ${message}`);
    this.name = 'ConfigError';
    this.key = key;
  }
}

const DAY_MS = 24 * 3600_000;
const STREAM_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\/[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/**
 * Memory defaults of a site process (core/lsm/DESIGN.md, "Memory of a site process"; measured
 * with `npm run bench -- --only memory`): a 1.14 M-row stock state is ≈ 60 MB decoded (74 MiB
 * estimated with its lookup hash index), so 128 MiB of run cache holds it with room for what a
 * flush or compaction puts before the files it replaces are dropped and for the other tables (the
 * bench's scan and lookups after the ingest: no miss); 32 MiB of write buffer is ≈ 100 k buffered
 * keys of the stock table. The peak RSS of a site process is set elsewhere (V8's heap growth —
 * core/site/v8-flags.ts — and compaction's working set), not by these two. Smaller values trade memory for
 * time: a run cache smaller than the state decodes a file again on each miss, a smaller write
 * buffer makes more, smaller level-0 files.
 */
export const DEFAULT_TABLE_CACHE_BYTES = 128 * MIB;
export const DEFAULT_WRITE_BUFFER_BYTES = 32 * MIB;

/** A floor PC is shared: 10 minutes without use signs the person out (config `ui.idleSignOutMs`). */
export const DEFAULT_IDLE_SIGN_OUT_MS = 10 * 60_000;

export const DEFAULT_HTTP_PORT = 8470;
export const DEFAULT_MQTT_PORT = 1883;

/** The config a new site gets. */
export function defaultConfig(site: string): SiteConfig {
  return {
    format: CONFIG_FORMAT,
    site,
    tables: DEFAULT_TABLE_BUDGETS.filter((b) => BUDGET_TABLES.includes(b.table)).map((b) => ({ ...b })),
    bindings: 'seed',
    broker: { mode: 'embedded', host: '127.0.0.1', port: DEFAULT_MQTT_PORT, tls: null, allowInsecureNonLoopback: false, diskFullHoldMaxMs: 30_000 },
    http: { host: '127.0.0.1', port: DEFAULT_HTTP_PORT, tls: null },
    hq: { target: null },
    journal: { retentionAgeMs: 7 * DAY_MS, retentionBytesMax: 2 * GIB, pruneIntervalMs: 60_000 },
    diskBudget: { journalBytesMax: 4 * GIB, diskFreeBytesMin: 512 * 1024 * 1024 },
    memory: { tableCacheBytes: DEFAULT_TABLE_CACHE_BYTES, writeBufferBytes: DEFAULT_WRITE_BUFFER_BYTES },
    alarms: { streamSilentMs: {} },
    evidence: { proposingRunsMs: 7 * DAY_MS, otherRunsMs: DAY_MS, decisionsMs: 365 * DAY_MS },
    deadLetters: { closedRetentionMs: 30 * DAY_MS },
    ui: { idleSignOutMs: DEFAULT_IDLE_SIGN_OUT_MS },
    agent: siteAgentOf(DEFAULT_AGENT_CONFIG),
  };
}

/** The silence a stream is allowed before its alarm (config `alarms.streamSilentMs`), or 0 for none. */
export function streamSilentMs(config: Pick<SiteConfig, 'alarms'>, module: string, stream: string): number {
  const m = config.alarms.streamSilentMs;
  return m[`${module}/${stream}`] ?? m['*'] ?? 0;
}

/** How the site opens its catalog: every table draws on one cache budget and flushes at one size. */
export function catalogOptions(config: Pick<SiteConfig, 'memory'>): { cacheBytes: number; writeBufferBytes: number } {
  return { cacheBytes: config.memory.tableCacheBytes, writeBufferBytes: config.memory.writeBufferBytes };
}

/** Why `site` cannot be a site id; undefined when it can. */
export function siteIdProblem(site: unknown): string | undefined {
  const p = nameProblem(site);
  if (p) return p;
  if (!NAME_PATTERN.test(site as string)) return `expected letters, digits, '_' or '-' (at most 64, starting with a letter or digit), got ${JSON.stringify(site)}`;
  return undefined;
}

type Obj = Record<string, unknown>;
const describe = (v: unknown): string => (v === undefined ? 'nothing' : v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'string' ? JSON.stringify(v) : typeof v === 'object' ? 'an object' : String(v));

function obj(v: unknown, key: string): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ConfigError(key, `expected an object, got ${describe(v)}`);
  return v as Obj;
}

function known(o: Obj, key: string, keys: readonly string[]): void {
  for (const k of Object.keys(o)) {
    if (!keys.includes(k)) throw new ConfigError(key ? `${key}.${k}` : k, `unknown key (expected one of ${keys.join(', ')})`);
  }
}

/**
 * A key's value, or `fallback` when the key is left out. Only left out: a null is no value, and
 * taken for the default a `"closedRetentionMs": null` meant as "for good" deleted closed letters
 * after 30 days, a `"port": null` listened on 1883, with no word from `config check`.
 */
const given = (o: Obj, k: string, fallback: unknown): unknown => (o[k] === undefined ? fallback : o[k]);

function str(o: Obj, k: string, key: string, fallback?: string): string {
  const v = given(o, k, fallback);
  if (typeof v !== 'string' || v.length === 0) throw new ConfigError(`${key}${k}`, `expected a non-empty string, got ${describe(o[k])}`);
  return v;
}

function int(o: Obj, k: string, key: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = given(o, k, fallback);
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    throw new ConfigError(`${key}${k}`, `expected an integer from ${min} to ${max}, got ${describe(o[k])}`);
  }
  return v;
}

function bool(o: Obj, k: string, key: string, fallback: boolean): boolean {
  const v = given(o, k, fallback);
  if (typeof v !== 'boolean') throw new ConfigError(`${key}${k}`, `expected true or false, got ${describe(o[k])}`);
  return v;
}

/**
 * Names a module may not have in `broker.modules`: `tilstand` and `admin` are the site's own broker
 * users (as `tilstand modules password` refuses them, site-commands.ts RESERVED_USERS), and
 * `site` would give its subscriber the client id `tilstand-<site>-site` of the site's internal
 * client, so mosquitto would cut the two off each other in turn.
 */
const RESERVED_EXTERNAL_MODULES: readonly string[] = ['tilstand', 'admin', 'site'];

/** config `broker.modules` (external broker): the modules whose events the site subscribes to. */
function externalModules(v: unknown): readonly string[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.length === 0) {
    throw new ConfigError('broker.modules', `expected a non-empty array of module names (e.g. ${JSON.stringify(SITE_MODULES)}), got ${Array.isArray(v) ? 'an empty array' : describe(v)}`);
  }
  const out: string[] = [];
  for (const [i, m] of v.entries()) {
    const key = `broker.modules[${i}]`;
    if (typeof m !== 'string' || !NAME_PATTERN.test(m)) throw new ConfigError(key, `expected a module name (${NAME_PATTERN.source}, the <module> level of its topics), got ${describe(m)}`);
    if (RESERVED_EXTERNAL_MODULES.includes(m)) throw new ConfigError(key, `'${m}' is reserved for the site itself, not a module; expected a module name such as ${SITE_MODULES.join(', ')} or one of your own`);
    if (out.includes(m)) throw new ConfigError(key, `'${m}' is listed twice; expected each module once (each has one subscription)`);
    out.push(m);
  }
  return out;
}

/** The modules an external broker's subscriber reads (config `broker.modules`, else the seed modules). */
export function externalBrokerModules(b: Extract<BrokerConfig, { mode: 'external' }>): readonly string[] {
  return b.modules ?? SITE_MODULES;
}

/** Validates a config object (as read from JSON), filling defaults for absent optional keys. */
export function parseConfig(raw: unknown): SiteConfig {
  const o = obj(raw, '(top level)');
  known(o, '', ['format', 'site', 'tables', 'bindings', 'broker', 'http', 'hq', 'journal', 'diskBudget', 'memory', 'alarms', 'evidence', 'deadLetters', 'ui', 'agent']);
  const format = int(o, 'format', '', CONFIG_FORMAT, 1, 1);
  const site = o.site;
  const sp = siteIdProblem(site);
  if (sp) throw new ConfigError('site', `${sp}`);
  const d = defaultConfig(site as string);

  if (o.tables !== undefined && !Array.isArray(o.tables)) throw new ConfigError('tables', `expected an array of {table, budgetMs, decision, confirmedBy}, got ${describe(o.tables)}`);
  const tables: SiteTableEntry[] = [];
  const definitions: TableDefinition[] = [];
  for (const [i, v] of ((o.tables as unknown[] | undefined) ?? d.tables).entries()) {
    const b = obj(v, `tables[${i}]`);
    const key = `tables[${i}].`;
    known(b, `tables[${i}]`, ['table', 'budgetMs', 'decision', 'confirmedBy', ...DEFINITION_KEYS]);
    const table = str(b, 'table', key);
    let def: TableDefinition | undefined;
    try {
      def = parseTableDefinition(b, `tables[${i}]`);
    } catch (e) {
      if (e instanceof TableDefinitionError) throw new ConfigError(e.path, e.message.slice(e.path.length + 2));
      throw e;
    }
    if (!def && !BUDGET_TABLES.includes(table)) {
      throw new ConfigError(`${key}table`, `expected one of ${BUDGET_TABLES.join(', ')}, or a table of the site's own with 'columns' and 'primaryKeys' (docs/modules.md, section 5), got ${JSON.stringify(table)}`);
    }
    if (tables.some((t) => t.table === table)) throw new ConfigError(`${key}table`, `table '${table}' has a budget already`);
    const budgetMs = int(b, 'budgetMs', key, NaN, 100, 7 * DAY_MS);
    if (table === APPROVAL_INBOX_TABLE && budgetMs < MIN_INBOX_BUDGET_MS) {
      throw new ConfigError(
        `${key}budgetMs`,
        `expected at least ${MIN_INBOX_BUDGET_MS} for ${APPROVAL_INBOX_TABLE} (twice the agent's check of the open proposals, every ${DEFAULT_RECHECK_INTERVAL_MS} ms), got ${budgetMs}`,
      );
    }
    const budget = { table, budgetMs, decision: str(b, 'decision', key), confirmedBy: str(b, 'confirmedBy', key) };
    if (!def) {
      tables.push(budget);
      continue;
    }
    definitions.push(def);
    // The definition's keys as config.json gave them (writeConfig writes them back the same).
    const columns = def.fields.map((f) => (f.description === undefined ? { name: f.name, type: f.type } : { name: f.name, type: f.type, description: f.description }));
    tables.push({
      ...budget,
      ...(def.comment === undefined ? {} : { comment: def.comment }),
      columns,
      primaryKeys: [...def.primaryKeys],
      ...(b.partitionKeys === undefined ? {} : { partitionKeys: [...def.partitionKeys] }),
      ...(b.options === undefined ? {} : { options: { ...def.options } }),
    });
  }

  let bindings: SiteConfig['bindings'] = 'seed';
  if (o.bindings !== undefined && o.bindings !== 'seed') {
    if (!Array.isArray(o.bindings)) throw new ConfigError('bindings', `expected "seed" or an array of bindings, got ${describe(o.bindings)}`);
    bindings = o.bindings.map((b, i) => {
      const bo = obj(b, `bindings[${i}]`);
      for (const k of ['topic', 'contract', 'table']) str(bo, k, `bindings[${i}].`);
      obj(bo.columns, `bindings[${i}].columns`);
      return bo as unknown as Binding;
    });
    checkConfigBindings(bindings, undefined, definitions);
  }

  const b = obj(given(o, 'broker', d.broker), 'broker');
  let broker: BrokerConfig;
  const mode = given(b, 'mode', 'embedded');
  if (mode === 'embedded') {
    // The embedded broker hands the site every module's events; only a subscriber needs the list.
    if (b.modules !== undefined) throw new ConfigError('broker.modules', 'only with broker.mode "external": the embedded broker passes every module\'s events to the site');
    known(b, 'broker', ['mode', 'host', 'port', 'tls', 'allowInsecureNonLoopback', 'diskFullHoldMaxMs']);
    let tls: { certPath: string; keyPath: string } | null = null;
    if (b.tls !== undefined && b.tls !== null) {
      const to = obj(b.tls, 'broker.tls');
      known(to, 'broker.tls', ['certPath', 'keyPath']);
      tls = { certPath: str(to, 'certPath', 'broker.tls.'), keyPath: str(to, 'keyPath', 'broker.tls.') };
    }
    broker = {
      mode: 'embedded',
      host: str(b, 'host', 'broker.', '127.0.0.1'),
      port: int(b, 'port', 'broker.', DEFAULT_MQTT_PORT, 0, 65535),
      tls,
      allowInsecureNonLoopback: bool(b, 'allowInsecureNonLoopback', 'broker.', false),
      diskFullHoldMaxMs: int(b, 'diskFullHoldMaxMs', 'broker.', 30_000, 0, 3600_000),
    };
  } else if (mode === 'external') {
    known(b, 'broker', ['mode', 'url', 'username', 'passwordFile', 'modules']);
    const url = str(b, 'url', 'broker.');
    if (!/^mqtts?:\/\/[^/]+/.test(url)) throw new ConfigError('broker.url', `expected mqtt://host:port or mqtts://host:port, got ${JSON.stringify(url)}`);
    const modules = externalModules(b.modules);
    broker = { mode: 'external', url, username: str(b, 'username', 'broker.'), passwordFile: str(b, 'passwordFile', 'broker.'), ...(modules ? { modules } : {}) };
  } else {
    throw new ConfigError('broker.mode', `expected "embedded" or "external", got ${describe(mode)}`);
  }

  const h = obj(given(o, 'http', d.http), 'http');
  known(h, 'http', ['host', 'port', 'tls']);
  let httpTls: { certPath: string; keyPath: string } | null = null;
  if (h.tls !== undefined && h.tls !== null) {
    const to = obj(h.tls, 'http.tls');
    known(to, 'http.tls', ['certPath', 'keyPath']);
    httpTls = { certPath: str(to, 'certPath', 'http.tls.'), keyPath: str(to, 'keyPath', 'http.tls.') };
  }
  const http = { host: str(h, 'host', 'http.', '127.0.0.1'), port: int(h, 'port', 'http.', DEFAULT_HTTP_PORT, 0, 65535), tls: httpTls };

  const q = obj(given(o, 'hq', d.hq), 'hq');
  known(q, 'hq', ['target']);
  if (q.target !== undefined && q.target !== null && (typeof q.target !== 'string' || q.target.length === 0)) {
    throw new ConfigError('hq.target', `expected null or a non-empty string, got ${describe(q.target)}`);
  }
  const targetWrong = q.target === undefined || q.target === null ? undefined : targetProblem(q.target, { relative: false });
  if (targetWrong) throw new ConfigError('hq.target', targetWrong);
  const hq = { target: (q.target as string | null | undefined) ?? null };

  const j = obj(given(o, 'journal', d.journal), 'journal');
  known(j, 'journal', ['retentionAgeMs', 'retentionBytesMax', 'pruneIntervalMs']);
  const journal = {
    retentionAgeMs: int(j, 'retentionAgeMs', 'journal.', d.journal.retentionAgeMs, 60_000),
    retentionBytesMax: int(j, 'retentionBytesMax', 'journal.', d.journal.retentionBytesMax, 1024 * 1024),
    pruneIntervalMs: int(j, 'pruneIntervalMs', 'journal.', d.journal.pruneIntervalMs, 1_000, DAY_MS),
  };

  const g = obj(given(o, 'diskBudget', d.diskBudget), 'diskBudget');
  known(g, 'diskBudget', ['journalBytesMax', 'diskFreeBytesMin']);
  const diskBudget = {
    journalBytesMax: int(g, 'journalBytesMax', 'diskBudget.', d.diskBudget.journalBytesMax, 1024 * 1024),
    diskFreeBytesMin: int(g, 'diskFreeBytesMin', 'diskBudget.', d.diskBudget.diskFreeBytesMin, 0),
  };
  if (diskBudget.journalBytesMax <= journal.retentionBytesMax) {
    throw new ConfigError('diskBudget.journalBytesMax', `expected more than journal.retentionBytesMax (${journal.retentionBytesMax}), got ${diskBudget.journalBytesMax}: retention must free room before the budget refuses events`);
  }

  const m = obj(given(o, 'memory', d.memory), 'memory');
  known(m, 'memory', ['tableCacheBytes', 'writeBufferBytes']);
  const memory = {
    // 0 is allowed: no run cache (every read decodes), for a machine where memory is tighter than time.
    tableCacheBytes: int(m, 'tableCacheBytes', 'memory.', d.memory.tableCacheBytes, 0),
    writeBufferBytes: int(m, 'writeBufferBytes', 'memory.', d.memory.writeBufferBytes, MIB),
  };
  const al = obj(given(o, 'alarms', d.alarms), 'alarms');
  known(al, 'alarms', ['streamSilentMs']);
  const silent = obj(given(al, 'streamSilentMs', {}), 'alarms.streamSilentMs');
  const streamSilent: Record<string, number> = {};
  for (const k of Object.keys(silent)) {
    if (k !== '*' && !STREAM_NAME.test(k)) throw new ConfigError(`alarms.streamSilentMs.${k}`, `expected a stream as module/stream (letters, digits, _ and -) or '*'`);
    const v = int(silent, k, 'alarms.streamSilentMs.', 0, 0, 30 * DAY_MS);
    if (v !== 0 && v < 60_000) throw new ConfigError(`alarms.streamSilentMs.${k}`, `expected 0 (never) or at least 60000 ms, got ${v}`);
    streamSilent[k] = v;
  }
  const alarms = { streamSilentMs: streamSilent };
  const ev = obj(given(o, 'evidence', d.evidence), 'evidence');
  known(ev, 'evidence', ['proposingRunsMs', 'otherRunsMs', 'decisionsMs']);
  // At least an hour: the agent reads the previous run's tag as its baseline a minute later.
  const evidence = {
    proposingRunsMs: int(ev, 'proposingRunsMs', 'evidence.', d.evidence.proposingRunsMs, 3600_000, 100 * 365 * DAY_MS),
    otherRunsMs: int(ev, 'otherRunsMs', 'evidence.', d.evidence.otherRunsMs, 3600_000, 100 * 365 * DAY_MS),
    decisionsMs: int(ev, 'decisionsMs', 'evidence.', d.evidence.decisionsMs, 3600_000, 100 * 365 * DAY_MS),
  };
  const dl = obj(given(o, 'deadLetters', d.deadLetters), 'deadLetters');
  known(dl, 'deadLetters', ['closedRetentionMs']);
  const closedRetentionMs = int(dl, 'closedRetentionMs', 'deadLetters.', d.deadLetters.closedRetentionMs, 0, 100 * 365 * DAY_MS);
  // At least an hour: a letter someone just dismissed or replayed stays to be looked at.
  if (closedRetentionMs !== 0 && closedRetentionMs < 3600_000) throw new ConfigError('deadLetters.closedRetentionMs', `expected 0 (keep closed letters for good) or at least 3600000 ms (1 h), got ${closedRetentionMs}`);
  const u = obj(given(o, 'ui', d.ui), 'ui');
  known(u, 'ui', ['idleSignOutMs']);
  const idleSignOutMs = int(u, 'idleSignOutMs', 'ui.', d.ui.idleSignOutMs, 0, 12 * 3600_000);
  if (idleSignOutMs !== 0 && idleSignOutMs < 60_000) throw new ConfigError('ui.idleSignOutMs', `expected 0 (never) or at least 60000 ms, got ${idleSignOutMs}`);
  return { format, site: site as string, tables, bindings, broker, http, hq, journal, diskBudget, memory, alarms, evidence, deadLetters: { closedRetentionMs }, ui: { idleSignOutMs }, agent: parseSiteAgent(given(o, 'agent', d.agent)) };
}

/** config.json's `agent` section, validated by core/agents' own `agentConfig` (errors keyed `agent.…`). */
function parseSiteAgent(raw: unknown): SiteAgentConfig {
  const a = obj(raw, 'agent');
  for (const k of ['evidenceRetentionMs', 'baselineRetentionMs']) {
    if (k in a) throw new ConfigError(`agent.${k}`, 'the agent keeps its run tags as config evidence.proposingRunsMs and evidence.otherRunsMs say: set those instead');
  }
  known(a, 'agent', SITE_AGENT_KEYS);
  // The agent's decisions are made by the minute; a run every second would only burn the floor PC.
  int(a, 'intervalMs', 'agent.', DEFAULT_AGENT_CONFIG.intervalMs, 10_000, 3600_000);
  const { ruleFiles, ...tunables } = a;
  if (ruleFiles !== undefined) {
    if (!Array.isArray(ruleFiles)) throw new ConfigError('agent.ruleFiles', `expected an array of paths to rule files (.ts, .mts, .js, .mjs), relative to the data directory or absolute, got ${JSON.stringify(ruleFiles)}`);
    ruleFiles.forEach((p, i) => {
      if (typeof p !== 'string' || p.length === 0) throw new ConfigError(`agent.ruleFiles[${i}]`, `expected the path of a rule file (.ts, .mts, .js, .mjs), relative to the data directory or absolute, got ${JSON.stringify(p)}`);
    });
  }
  let c: AgentConfig;
  try {
    c = agentConfig(tunables as AgentConfigInput);
  } catch (e) {
    if (e instanceof AgentConfigError) throw new ConfigError(`agent.${e.key}`, e.problem);
    throw e;
  }
  return siteAgentOf(c, ruleFiles as string[] | undefined);
}

/** The agent's tunables of config `agent` (without `ruleFiles`), as core/agents' `agentConfig` takes them. */
export function agentTunables(a: SiteAgentConfig): Omit<SiteAgentConfig, 'ruleFiles'> {
  const { ruleFiles: _, ...tunables } = a;
  return tunables;
}

/**
 * Loads and checks config `agent.ruleFiles` (core/agents `loadRuleFiles`; paths relative to the
 * data directory): at start, before the agent is made, and in `tilstand config check`. A refused
 * file is a ConfigError naming `agent.ruleFiles[<i>]` and the loader's reason (exit 2), as is a
 * file whose rule reads a table the site does not define (`Rule.reads`: the site's own tables,
 * `siteTableDefinitions`; the Agent would refuse it at start) and a file that imports one outside
 * its own folder (which could not travel with it into a replay fixture). None: no files, the
 * installed rules. `modules`: the running site's (its start and its reloads), so a file whose code
 * did not change is not imported again (core/agents RuleFileModules).
 */
export async function loadSiteRuleFiles(c: Pick<SiteConfig, 'agent' | 'tables'>, data: string, modules?: RuleFileModules): Promise<LoadedRuleFiles> {
  const paths = c.agent.ruleFiles ?? [];
  if (paths.length === 0) return { files: [], rules: [] };
  let loaded: LoadedRuleFiles;
  try {
    loaded = await loadRuleFiles(paths, resolve(data), modules);
  } catch (e) {
    if (e instanceof RuleFileError) throw new ConfigError(`agent.ruleFiles[${e.index}]`, e.message);
    throw e;
  }
  const own = siteTableNames(c);
  for (const [i, f] of loaded.files.entries()) {
    // A site's rule file travels into a replay fixture (core/replay export.ts) with the files it
    // imports: refused here, at the start and in config check, rather than at an export.
    const outside = outsideImportProblem(f.imports ?? []);
    if (outside !== undefined) throw new ConfigError(`agent.ruleFiles[${i}]`, `rule file ${f.path}: ${outside}`);
    try {
      siteTablesRead(loaded.rules.filter((r) => f.rules.includes(r.id)), own);
    } catch (e) {
      throw new ConfigError(`agent.ruleFiles[${i}]`, `rule file ${f.path}: ${(e as Error).message}`);
    }
  }
  return loaded;
}

/** The names of the site's own tables (`siteTableDefinitions`): what its agent's rules may read besides the state tables (`Rule.reads`). */
export function siteTableNames(c: Pick<SiteConfig, 'tables'>): string[] {
  return siteTableDefinitions(c).map((d) => d.name);
}

/** Reads and validates `<data>/config.json`. */
export function readConfig(data: string): SiteConfig {
  return filesFrom(parseConfig(readRawConfig(data)), resolve(data));
}

/** Loopback hosts need no TLS for the UI; anything else does (like the broker). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * The rules a whole config must meet to start, beyond each key's own value: a listener on a
 * non-loopback address needs TLS (the broker's may be let off with allowInsecureNonLoopback).
 * `Site.start` checks them before it opens anything, and `tilstand config check` with it, so the
 * check passes no file the start refuses. Not in parseConfig: `status` and the other commands
 * still read such a file.
 */
export function checkStartRules(c: SiteConfig): void {
  if (c.http.tls === null && !isLoopbackHost(c.http.host)) {
    throw new ConfigError('http.tls', `http.host is ${c.http.host}, not loopback: the UI and its sessions need TLS there; set http.tls {certPath, keyPath}, or http.host to 127.0.0.1`);
  }
  const b = c.broker;
  // The broker's own test (EmbeddedBroker refuses the same), so the two never disagree.
  if (b.mode === 'embedded' && b.tls === null && !b.allowInsecureNonLoopback && !isLoopback(b.host)) {
    throw new ConfigError(
      'broker.tls',
      `broker.host is ${b.host}, not loopback: the modules' MQTT needs TLS there; set broker.tls {certPath, keyPath}, or broker.allowInsecureNonLoopback true to accept plaintext MQTT from the site network, or broker.host to 127.0.0.1`,
    );
  }
}

/**
 * Why HQ target `text` (`--hq` or config `hq.target`) cannot be the HQ of the site in `data`: a
 * directory that is the data directory or in it (`<data>/warehouse` shipped the site's tables onto
 * themselves), compared as written and where both lead through symbolic links (core/sync's
 * `realFolder`, as `sync now` compares them: sync.ts `refuseHqInData`), except `allowed`, a folder
 * of `data` (the stand-in HQ a new demo syncs to, DEMO_HQ_DIR). Undefined for any other target
 * (an s3:// one, or text that is no target, which `targetProblem` names).
 */
export function hqInDataProblem(data: string, text: string, allowed: string | undefined, real: ((path: string) => string) | undefined = realFolder): string | undefined {
  const d = targetDescription(text);
  if (d === undefined || !d.startsWith('dir:')) return undefined;
  const where = hqInData(data, d.slice('dir:'.length), allowed, real);
  if (where === 'itself') return `${text} is the site's data directory itself; HQ is a directory outside it`;
  if (where === 'inside') return `${text} is inside the site's data directory ${data}; HQ is a directory outside it`;
  return undefined;
}

/**
 * `hqInDataProblem` as start makes it (Site.open): the links resolved off the event loop, waiting
 * at most `waitMs`. HQ's folder may be a share that does not answer (a hard NFS mount whose server
 * is down), and the synchronous resolve held the start, before the broker listened, for as long:
 * the site did not come up while HQ was unreachable. Past the wait (`onSlow` says so) the paths are
 * compared as written only; `config check` and `sync now` compare them resolved as well.
 * `realpath` is for tests.
 */
export async function hqInDataProblemWithin(
  data: string,
  text: string,
  allowed: string | undefined,
  waitMs: number,
  onSlow: (line: string) => void,
  realpath: (path: string) => Promise<string> = (path) => fsPromises.realpath(path),
): Promise<string | undefined> {
  const d = targetDescription(text);
  if (d === undefined || !d.startsWith('dir:')) return undefined;
  const root = d.slice('dir:'.length);
  // realFolder's walk (foldersUp): the real path of the nearest existing folder, the rest below it.
  const realOf = async (path: string): Promise<string> => {
    for (const [p, below] of foldersUp(path)) {
      try {
        return join(await realpath(p), ...below);
      } catch {
        // not there (yet): the folder above
      }
    }
    return resolve(path);
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((done) => (timer = setTimeout(() => done(undefined), waitMs)));
  const both = await Promise.race([Promise.all([realOf(data), realOf(root)]), late]);
  clearTimeout(timer);
  if (both === undefined) {
    onSlow(`HQ's folder ${root} did not answer within ${waitMs / 1000} s (a share that does not answer?): whether it lies in the data directory through a link was not checked at this start (\`tilstand config check\` checks it)`);
    return hqInDataProblem(data, text, allowed, undefined);
  }
  const [realData, realHq] = both;
  return hqInDataProblem(data, text, allowed, (path) => (path === data ? realData : realHq));
}

/** config.json as its JSON says, before validation and defaults. */
function readRawConfig(data: string): unknown {
  const file = dataPaths(data).config;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw new ConfigError('(file)', code === 'ENOENT' ? `${file} does not exist (run \`tilstand init --data ${data} --site <id>\` first)` : `cannot read ${file}: ${(e as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConfigError('(file)', `${file} is not valid JSON: ${jsonErrorWhere(text, e)}`);
  }
  // JSON.parse keeps the last of a key given twice: a hand edit that added `"site": "s2"` below
  // `"site": "s1"` ran as s2, and `config check` said ok.
  const twice = repeatedKeyPath(text);
  if (twice !== undefined) throw new ConfigError(twice, `given twice in ${file}; expected each key once (JSON would keep only the last)`);
  return raw;
}

/** A JSON object's own member (`__proto__` included, as JSON.parse makes it), or undefined. */
const ownMember = (o: Record<string, unknown>, key: string): unknown => (Object.hasOwn(o, key) ? o[key] : undefined);
/** Sets an own member, also for a name like `__proto__` (where assignment would set the prototype). */
const setOwn = (o: Record<string, unknown>, key: string, value: unknown): void => void Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
const jsonObject = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/**
 * The config.json key of an item's reorder policy, or of one location's (`reorderPolicyEdit`; the
 * decision log's `config_changed` entries name it): `agent.reorderByItem.ITEM-7.locations.A-01`.
 * An item id or location with a dot or a bracket is quoted, `agent.reorderByItem["A.locations.B"]`:
 * dotted, item `A.locations.B` had the key of item `A` at location `B`. The ids the modules use
 * (without either) keep the key they had before.
 */
export function reorderPolicyKey(item: string, location: string | null): string {
  return `agent.reorderByItem${keyPart(item)}${location === null ? '' : `.locations${keyPart(location)}`}`;
}

/**
 * The key a ConfigError names when these levels are refused: core/agents' path of them, dotted as
 * the ids come (it quotes nothing), not the record's `reorderPolicyKey`.
 */
export function reorderLevelsErrorKey(item: string, location: string | null): string {
  return `agent.reorderByItem.${item}${location === null ? '' : `.locations.${location}`}`;
}

/** `.name`, or `["name"]` (JSON) for a name a dot would leave ambiguous. */
const keyPart = (name: string): string => (/^[^.[\]]+$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`);
const KEY_PART = String.raw`(?:\.([^.[\]]+)|\[("(?:[^"\\]|\\.)*")\])`;
const POLICY_KEY = new RegExp(String.raw`^agent\.reorderByItem${KEY_PART}(?:\.locations${KEY_PART})?$`);
/** The dotted keys of releases before ids were quoted: the item up to the first `.locations.`, as they read them. */
const DOTTED_POLICY_KEY = /^agent\.reorderByItem\.(.+?)(?:\.locations\.(.+))?$/;

/**
 * The item and location (null: the item's own) a `reorderPolicyKey` names; undefined for another
 * key. A key recorded before ids were quoted is read as it was then.
 */
export function parseReorderPolicyKey(key: string): { item: string; location: string | null } | undefined {
  const m = POLICY_KEY.exec(key);
  if (m) {
    const name = (plain: string | undefined, quoted: string | undefined) => plain ?? (quoted === undefined ? undefined : (JSON.parse(quoted) as string));
    return { item: name(m[1], m[2])!, location: name(m[3], m[4]) ?? null };
  }
  const d = DOTTED_POLICY_KEY.exec(key);
  return d ? { item: d[1]!, location: d[2] ?? null } : undefined;
}

/** A recorded key as `reorderPolicyKey` writes it now (another config key as it is): the one to look a policy's last floor setting up by. */
export function currentReorderPolicyKey(key: string): string {
  const p = parseReorderPolicyKey(key);
  return p ? reorderPolicyKey(p.item, p.location) : key;
}

/**
 * Sets (or, given null, removes) the reorder policy of an item, or of one location of it, in
 * config.json: the file as written (other keys, relative paths and left-out defaults stay as they
 * are), checked whole as `readConfig` checks it. Nothing is written until `write()`, which
 * replaces the old file atomically, so the caller can record the change first
 * (`Site.setReorderPolicy`). `config` is the new file's config. Throws ConfigError naming the key
 * when the result does not validate. `key` is the changed key's path, `before` what the file held
 * there.
 */
export function reorderPolicyEdit(
  data: string,
  item: string,
  location: string | null,
  policy: { reorderPoint: number; orderUpTo: number } | null,
): { config: SiteConfig; key: string; before: unknown; write: () => void } {
  const { top, agent, items, entry, before } = policyIn(data, item, location);
  const key = reorderPolicyKey(item, location);
  if (location === null) {
    delete entry.reorderPoint;
    delete entry.orderUpTo;
    if (policy) Object.assign(entry, { reorderPoint: policy.reorderPoint, orderUpTo: policy.orderUpTo });
  } else {
    const locations = Object.fromEntries(Object.entries(jsonObject(ownMember(entry, 'locations')) ?? {}).filter(([l]) => l !== location));
    if (policy) setOwn(locations, location, { reorderPoint: policy.reorderPoint, orderUpTo: policy.orderUpTo });
    if (Object.keys(locations).length > 0) entry.locations = locations;
    else delete entry.locations;
  }
  const nextItems = Object.fromEntries(Object.entries(items).filter(([i]) => i !== item));
  if (Object.keys(entry).length > 0) setOwn(nextItems, item, entry);
  const next = { ...top, agent: { ...agent, reorderByItem: nextItems } };
  const parsed = filesFrom(parseConfig(next), resolve(data));
  const write = () => localFileIO.replaceAtomic(dataPaths(data).config, Buffer.from(`${JSON.stringify(next, null, 2)}\n`));
  return { config: parsed, key, before, write };
}

/**
 * The reorder policy config.json holds for an item, or for one location of it, as the file has it
 * (null: not set); read again after a failed `reorderPolicyEdit` write, to tell whether the file
 * holds the change. Throws ConfigError when the file is no JSON object.
 */
export function reorderPolicyHeld(data: string, item: string, location: string | null): unknown {
  return policyIn(data, item, location).before;
}

/** config.json as written, the parts of it on the way to a reorder policy, and that policy (null: not set). */
function policyIn(data: string, item: string, location: string | null) {
  const raw = readRawConfig(data);
  const top = jsonObject(raw);
  if (!top) throw new ConfigError('(file)', `${dataPaths(data).config}: expected a JSON object, got ${Array.isArray(raw) ? 'an array' : JSON.stringify(raw)}`);
  const agent = jsonObject(ownMember(top, 'agent')) ?? {};
  const items = jsonObject(ownMember(agent, 'reorderByItem')) ?? {};
  const entry: Record<string, unknown> = { ...(jsonObject(ownMember(items, item)) ?? {}) };
  const levelsOf = (o: Record<string, unknown>) => (o.reorderPoint === undefined && o.orderUpTo === undefined ? null : { reorderPoint: o.reorderPoint, orderUpTo: o.orderUpTo });
  const before: unknown = location === null ? levelsOf(entry) : (ownMember(jsonObject(ownMember(entry, 'locations')) ?? {}, location) ?? null);
  return { top, agent, items, entry, before };
}

/**
 * The config with its relative file paths (TLS certificates and keys, the external broker's
 * password file) resolved against the data directory: the process's working directory is a
 * service manager's choice (/opt/tilstand under the shipped unit), the data directory is not.
 */
function filesFrom(c: SiteConfig, data: string): SiteConfig {
  const at = (p: string) => (isAbsolute(p) ? p : resolve(data, p));
  const tls = <T extends { certPath: string; keyPath: string } | null>(t: T): T => (t === null ? t : ({ ...t, certPath: at(t.certPath), keyPath: at(t.keyPath) } as T));
  const broker: BrokerConfig = c.broker.mode === 'embedded' ? { ...c.broker, tls: tls(c.broker.tls) } : { ...c.broker, passwordFile: at(c.broker.passwordFile) };
  return { ...c, broker, http: { ...c.http, tls: tls(c.http.tls) } };
}

/** The config.json sections a running site applies when it reloads the file (`Site.reloadConfig`). */
export const LIVE_CONFIG_SECTIONS = ['agent', 'evidence', 'alarms', 'deadLetters', 'ui'] as const;
/** The live sections as a list in words: 'agent, evidence, alarms, deadLetters and ui'. */
export const LIVE_CONFIG_SECTIONS_TEXT = `${LIVE_CONFIG_SECTIONS.slice(0, -1).join(', ')} and ${LIVE_CONFIG_SECTIONS.at(-1)!}`;

/**
 * Config `agent` and `evidence` as the agent's options and the inbox's (the names differ:
 * core/agents, core/inbox).
 */
export function decisionOptions(c: Pick<SiteConfig, 'agent' | 'evidence'>): { agent: AgentConfig; decisionEvidenceRetentionMs: number } {
  return {
    agent: agentConfig({ ...agentTunables(c.agent), evidenceRetentionMs: c.evidence.proposingRunsMs, baselineRetentionMs: c.evidence.otherRunsMs }),
    decisionEvidenceRetentionMs: c.evidence.decisionsMs,
  };
}

/**
 * Writes config.json atomically and durably (a temporary file fsynced, renamed, the directory
 * fsynced): a power cut leaves the old file or the new one, never an empty one.
 */
export function writeConfig(data: string, config: SiteConfig): void {
  localFileIO.replaceAtomic(dataPaths(data).config, Buffer.from(`${JSON.stringify(config, null, 2)}\n`));
}

/** Tilstand's tables a binding in config.json may write (with the site's own: the ones the site's Ingestor opens). */
const BINDABLE_TABLES = [...SEED_TABLES, DEAD_LETTERS_TABLE];

/**
 * Checks config.json's bindings as the Ingestor checks them at start (core/ingest `checkBinding`:
 * the table and its columns, the key columns bound, the paths, the kinds), and, given `contract`
 * (what the Ingestor checks them against: core/ingest `bindingView`, the latest version of a name in
 * the contracts/ directory plus the fields only earlier versions have; `tilstand config check`), each path into
 * `after`/`before` against the contract's fields. A refusal names `bindings[<i>]`: without it,
 * `config check` passed a binding that `start` then refused, naming no config key.
 */
export function checkConfigBindings(bindings: readonly Binding[], contract?: (name: string) => Contract | undefined, siteDefinitions: readonly TableDefinition[] = []): void {
  const bindable = [...BINDABLE_TABLES, ...siteDefinitions];
  for (const [i, b] of bindings.entries()) {
    const table = bindable.find((t) => t.name === b.table);
    if (!table) throw new ConfigError(`bindings[${i}].table`, `expected one of ${bindable.map((t) => t.name).join(', ')}, got ${JSON.stringify(b.table)}`);
    const enrichTable = b.enrich ? bindable.find((t) => t.name === b.enrich!.table) : undefined;
    const c = contract?.(b.contract);
    try {
      checkBinding(b, table, { ...(c ? { contract: c } : {}), ...(enrichTable ? { enrichTable } : {}) });
    } catch (e) {
      if (e instanceof BindingError) throw new ConfigError(`bindings[${i}]`, e.message);
      throw e;
    }
  }
  try {
    checkOrderingStreams(bindings, siteDefinitions);
  } catch (e) {
    if (e instanceof BindingError) throw new ConfigError(`bindings[${bindings.findIndex((b) => bindingName(b) === e.binding)}]`, e.message);
    throw e;
  }
}

/** A BindingError the Ingestor raised at start for one of config.json's bindings, as a ConfigError naming it. */
export function bindingConfigError(config: SiteConfig, e: unknown): unknown {
  // A table of the site's own that no longer fits its definition (core/ingest evolveToDefinition).
  if (e instanceof TableDefinitionError) return new ConfigError(e.path, e.message.slice(e.path.length + 2));
  if (!(e instanceof BindingError) || config.bindings === 'seed') return e;
  const i = config.bindings.findIndex((b) => bindingName(b) === e.binding);
  return new ConfigError(i < 0 ? 'bindings' : `bindings[${i}]`, e.message);
}

/** The bindings a config names. */
export function configBindings(config: SiteConfig): readonly Binding[] {
  return config.bindings === 'seed' ? SEED_BINDINGS : config.bindings;
}
