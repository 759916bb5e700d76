// Site: the composition root of a running site. `Site.start` wires, in this order:
//   1. config.json (a new data directory with --demo becomes a demo site first);
//   2. refuse to start twice (a live control.sock answers);
//   3. site.db (broker credentials), the ingest half (open-ingest.ts: journal, contracts,
//      catalog, disk budget, Ingestor — which replays the journal after the last commit);
//   4. the broker: embedded (EmbeddedBroker, credentials from site.db, onEvent → ingestor.accept,
//      disk budget) or external (MqttSource → ingestor.accept);
//   5. the internal MQTT client as the `tilstand` principal (resync requests, and the notices
//      that tell a module of its own dead letters once they are committed: letter-notices.ts);
//   6. timers: ingest tick every tickMs, journal prune every journal.pruneIntervalMs;
//   7. the HTTP server (/metrics, /healthz) and the control socket;
//   8. with demo: the simulated modules, in-process, against the broker.
// `stop()` undoes it in reverse: modules, clients, broker (held publishes stay unacknowledged,
// so modules resend them), timers, commitAll + close of the Ingestor, journal, site.db, servers.
//
// Concurrency: single-threaded. Timers and socket handlers never run after stop() began.
// Invariants: at most one Site per data directory (the control socket and the tables' writer
// locks); nothing is acknowledged to a module before it is in the journal (EmbeddedBroker).

import { DEFAULT_HEALTH_WINDOW_MS, EMPTY_SYNC_STATUS, SyncEngine, statusOf, type SyncStatus } from '../sync/engine.ts';
import { Outbox } from '../sync/outbox.ts';
import { isCorruption, localFileIO, LsmError } from '../lsm/index.ts';
import { formatDuration } from '../lsm/cli/output.ts';
import { openTarget, targetPlace } from '../sync/targets/open.ts';
import type { SyncTarget } from '../sync/targets/target.ts';
import { restoredProposals } from './restored-proposals.ts';
import { readRestoreNote, RESTORE_NOTE, RESTORE_UNFINISHED, unfinishedRestore, type RestoreNote } from '../sync/restore.ts';
import { damageIn } from '../sync/cli/common.ts';
import mqtt, { type MqttClient } from 'mqtt';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { BrokerConfigError, EmbeddedBroker, type BrokerRefusal, type CredentialStore, type Principal } from '../ingest/broker.ts';
import { refusalLogLine } from './refusals.ts';
import { describeError, internalErrorId } from './internal-error.ts';
import { dismissWithPin, replayLogged } from './dismiss.ts';
import { LetterNotices } from '../ingest/letter-notices.ts';
import { MqttSource } from '../ingest/mqtt-source.ts';
import type { DiskBudget } from '../ingest/journal.ts';
import { PromText } from '../ingest/metrics.ts';
import { bindingConfigError, checkStartRules, hqInDataProblemWithin, configBindings, dataPaths, decisionOptions, externalBrokerModules, inboxBudget, LIVE_CONFIG_SECTIONS, loadSiteRuleFiles, readConfig, siteTableNames, reorderPolicyEdit, reorderPolicyHeld, type SiteAgentConfig, type SiteConfig } from './config.ts';
import { ControlError, ControlServer, socketAnswers, type ControlHandler } from './control.ts';
import { internalClientTls } from './internal-client-tls.ts';
import { runDemoModules, readModuleSecrets, type DemoModules } from './demo/run.ts';
import { DEMO_CONTRACTS, DEMO_EXTRA_MODULES, DEMO_HQ_DIR, demoConfig, demoYardMissing } from './demo/site.ts';
import { SiteHttpServer } from './http-server.ts';
import { initDataDir } from './init.ts';
import { siteLogger, type LogSink } from './log.ts';
import { INGEST_CHECKPOINT, openIngest, openIngestorInSlices, type IngestParts } from './open-ingest.ts';
import { ModuleCredentials, TILSTAND_PRINCIPAL, openSiteDb, setSiteMeta, siteMeta, tilstandPrincipal } from './site-db.ts';
import { checkDataFormat, programDataFormat } from './data-format.ts';
import { fedTables, journalState, redactTarget, restoredFromTagShown, restoreWaiting, resyncStreamKey, RowCounter, unansweredResyncs, type IngestFailureKind, type IngestResumeState, type RestoreNoteState, type SiteStatus } from './status.ts';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { UserStore } from '../inbox/users.ts';
import { decisionLogNextId, readConfigChanges, type ConfigChange, type Json } from '../inbox/index.ts';
import { FloorChanges } from './floor-changes.ts';
import { DEAD_LETTER_LIST_DEFAULT, DEAD_LETTER_LIST_MAX, type Ingestor, type PurgeResult } from '../ingest/ingestor.ts';
import { KeptTables, type Catalog, type Table } from '../lsm/index.ts';
import { ConfigError } from './config.ts';
import { Decisions } from './decisions.ts';
import { agentControlHandlers } from './cli/agent-cli.ts';
import { ruleOrigins, rulesInForce, type LoadedRuleFiles, type RunResult } from '../agents/index.ts';
import { RuleFileModules } from '../agents/rule-files.ts';
import type { AgentRuleView, RestoredFromTagView } from './api.ts';
import { SiteService, STOP_CALLS_WAIT_MS } from './service.ts';
import { UiServer } from './ui-server.ts';
import type { Contract } from '../ingest/contracts.ts';

export interface SiteStartOptions {
  data: string;
  /** Run the simulated modules in-process; a directory without config.json becomes a demo site. */
  demo?: boolean;
  demoSeed?: number;
  demoStepMs?: number;
  /**
   * A new demo directory syncs to `<data>/demo-hq` (DEMO_HQ_DIR), a directory standing in for
   * headquarters, so a newcomer sees sync as well (`tilstand start --demo` sets it). Default false.
   */
  demoHq?: boolean;
  /**
   * Override config broker.port / http.port (0 = ephemeral): `--mqtt-port` / `--http-port`, as the
   * errors name them. One that is taken fails the start, with `demo` too (only config.json's port
   * of a demo falls back to a free one).
   */
  mqttPort?: number;
  httpPort?: number;
  /** Ingest tick period. */
  tickMs?: number;
  /** Where log lines go besides logs/site.log (default: nowhere). */
  log?: LogSink;
  /** Serve the UI (built renderer + site API) on the HTTP server. Default true. */
  ui?: boolean;
  /** The built renderer (default `<repo>/dist/renderer`). */
  rendererDir?: string;
  /** Run the agent on its timer (default true; false: only on demand, e.g. `tilstand agent run`). */
  agentTimer?: boolean;
  /** The HQ target for this run (a directory or s3:// URL); overrides config `hq.target`. */
  hq?: string;
  /** How often sync plans and uploads (default 60 s). */
  syncIntervalMs?: number;
  /** After a restore, how often a module not heard from yet is asked again to resend (default 30 s). */
  restoreResyncRepeatMs?: number;
  /** After ingest stopped on an error, the first try to resume it in place (default 30 s); each next one waits twice as long. */
  ingestResumeFirstMs?: number;
  /** The longest wait between two tries to resume ingest (default 10 min). */
  ingestResumeMaxMs?: number;
}

/** The renderer `npm run build` writes. */
const DEFAULT_SYNC_INTERVAL_MS = 60_000;
/** How often closed dead letters past their retention are deleted (config `deadLetters`). */
const DEAD_LETTER_PURGE_EVERY_MS = 3_600_000;
/**
 * How long the external source holds an event's PUBACK while the disk budget is full, before it
 * drops the connection unacknowledged (mosquitto redelivers when it reconnects): the embedded
 * broker's default `broker.diskFullHoldMaxMs`.
 */
const EXTERNAL_DISK_FULL_HOLD_MAX_MS = 30_000;
const DISK_ROOM_POLL_MS = 100;
/** After a restore, how often a stream with no event yet is asked again to resend (`resyncAfterRestore`). */
const RESTORE_RESYNC_REPEAT_MS = 30_000;
/**
 * What kind of error stopped ingest, or failed a try to resume it, for readers who may not see its
 * text (/healthz is unauthenticated; the text names files of the data directory): `disk_full`
 * (ENOSPC, EDQUOT), `io` (another failure of the file system: EIO, EROFS, …), `damaged` (a
 * damaged file, core/lsm `isCorruption`: not retried), `conflict` (another writer holds a table),
 * `other`.
 */
function ingestFailureKind(err: unknown): IngestFailureKind {
  if (isCorruption(err)) return 'damaged';
  let kind: IngestFailureKind = 'other';
  for (let e = err, n = 0; e instanceof Error && n < 16; e = (e as Error & { cause?: unknown }).cause, n++) {
    const code = (e as NodeJS.ErrnoException).code;
    if ((typeof code === 'string' && /^(ENOSPC|EDQUOT)$/.test(code)) || /\b(ENOSPC|EDQUOT)\b/.test(e.message)) return 'disk_full';
    if (kind === 'other' && ((e instanceof LsmError && e.kind === 'IOError') || (typeof code === 'string' && /^E[A-Z]+$/.test(code)))) kind = 'io';
    if (kind === 'other' && e instanceof LsmError && e.kind === 'Conflict') kind = 'conflict';
  }
  return kind;
}

/** After ingest stopped, the first try to resume it in place; each next one waits twice as long, at most INGEST_RESUME_MAX_MS. */
const INGEST_RESUME_FIRST_MS = 30_000;
const INGEST_RESUME_MAX_MS = 600_000;
/** How long start waits for HQ's folder to resolve its links (hqInDataProblemWithin) before it compares the paths as written only. */
const HQ_RESOLVE_WAIT_MS = 2_000;
/** How often a site whose sync lock another process holds tries to take it. */
const SYNC_LOCK_RETRY_MS = 10_000;

export const DEFAULT_RENDERER_DIR = fileURLToPath(new URL('../../dist/renderer', import.meta.url));

export class SiteError extends Error {
  readonly kind: 'AlreadyRunning' | 'NotInitialized' | 'Listen' | 'RestoreUnfinished';
  constructor(kind: SiteError['kind'], message: string) {
    super(message);
    this.name = `SiteError(${kind})`;
    this.kind = kind;
  }
}

/**
 * A restore into `data` that did not finish left part of HQ's tables: a site run on them would
 * miss the rest, and the restore's rerun (which redoes its half copy) would remove what it wrote.
 */
function refuseUnfinishedRestore(data: string): void {
  const site = unfinishedRestore(data);
  if (site === undefined) return;
  // A mark that does not read ('?'): the restore refuses it without --force (core/sync restore.ts).
  const again = site === '?' ? `its mark does not read: run \`tilstand restore --force\` into it (it replaces the mark and that site's database folder; other database folders stay)` : `run \`tilstand restore\` into it again (it does the copy again)`;
  throw new SiteError('RestoreUnfinished', `${data} holds a restore that did not finish (${RESTORE_UNFINISHED}, site '${site}'): ${again}, or use another directory`);
}

const DEFAULT_TICK_MS = 250;
/** A difference between the wall clock and the monotonic one taken for a step of the wall clock. */
const CLOCK_STEP_MS = 1_000;

/**
 * How often the ingest tick runs for these budgets: every 250 ms, or a quarter of the shortest
 * budget when that is less. A table commits at the first tick that finds its oldest pending event
 * half its budget old, so the other half must hold the wait for that tick and the commit; at
 * 250 ms a budget under 500 ms (config allows 100 ms) was seen over it by design — about two in
 * five refused events of a 300 ms dead_letters budget counted a breach.
 */
export function ingestTickMs(budgets: readonly { budgetMs: number }[]): number {
  let shortest = Infinity;
  for (const b of budgets) shortest = Math.min(shortest, b.budgetMs);
  return Math.max(1, Math.min(DEFAULT_TICK_MS, Math.floor(shortest / 4)));
}

/** The admin a new demo site gets, so the demo UI can be signed in to at once (printed at start). */
export const DEMO_ADMIN = { name: 'demo', pin: '1234' } as const;

/** Broker credentials from site.db, plus a per-run secret for the site's own `tilstand` client. */
class SiteCredentials implements CredentialStore {
  constructor(
    private readonly stored: ModuleCredentials,
    private readonly runSecret: Buffer,
  ) {}

  async verify(username: string, password: string): Promise<Principal | null> {
    const given = Buffer.from(password, 'utf8');
    if (username === TILSTAND_PRINCIPAL && given.length === this.runSecret.length && timingSafeEqual(given, this.runSecret)) return tilstandPrincipal;
    return this.stored.verify(username, password);
  }
}

/**
 * A listener's port and where it came from: an option (`--http-port`) or a config key
 * (`config http.port`), named when it cannot be had. `fallback`: a port of a demo's own, which
 * may give way to a free one when it is taken; one given as an option never does (its user meant
 * that port: a free one instead left them reaching for the site where it is not).
 */
export interface ListenPort {
  port: number;
  source: string;
  fallback: boolean;
}

/** The port a listener takes: the option's when given, else config.json's (a demo's may fall back). */
function listenPort(option: { name: string; port: number | undefined }, config: { key: string; port: number }, demo: boolean): ListenPort {
  if (option.port !== undefined) return { port: option.port, source: option.name, fallback: false };
  return { port: config.port, source: `config ${config.key}`, fallback: demo };
}

/** Listens on `at.port`; when it is taken and `at.fallback` is set, on an ephemeral port instead. */
export async function listenWithFallback<T extends { listen(): Promise<number>; close(): Promise<void> }>(
  make: (port: number) => T,
  at: ListenPort,
  what: string,
  log: LogSink,
): Promise<T> {
  const first = make(at.port);
  try {
    await first.listen();
    return first;
  } catch (e) {
    await first.close().catch(() => undefined);
    const code = (e as NodeJS.ErrnoException).code;
    if (!at.fallback || at.port === 0 || (code !== 'EADDRINUSE' && code !== 'EACCES')) {
      throw new SiteError('Listen', `${what}: cannot listen on port ${at.port} (${at.source}): ${(e as Error).message}`);
    }
    log(`${what}: port ${at.port} is in use; listening on a free port instead`);
    const second = make(0);
    await second.listen();
    return second;
  }
}

/**
 * A listener's refusal of what the config gave it, as the ConfigError naming the key: exit 2, in
 * the words of `config check`. Unmapped, an unreadable or unusable TLS file and the broker's own
 * BrokerConfigError were exit 5 naming no key (config.ts reads no TLS file; an API caller's
 * mqttPort is checked by the broker alone). Anything else is returned as it is.
 */
function listenerConfigError(e: unknown, section: 'broker' | 'http', tls: { certPath: string; keyPath: string } | null, portOption: string | undefined): unknown {
  if (e instanceof BrokerConfigError) {
    const o = e.option;
    const key = o === 'port' && portOption ? portOption : o === 'site' ? 'site' : o === 'allowInsecureNonLoopback' ? 'broker.tls' : `broker.${o}`;
    return new ConfigError(key, e.message.replace(/^(EmbeddedBroker[^:]*|site): /, ''));
  }
  if (!tls) return e;
  const err = e as NodeJS.ErrnoException;
  for (const k of ['certPath', 'keyPath'] as const) {
    if (err.path === tls[k]) return new ConfigError(`${section}.tls.${k}`, `${tls[k]} cannot be read (${err.code ?? err.message})`);
  }
  // OpenSSL's refusal of the PEM (not one, or a key that does not match the certificate).
  if (typeof err.code === 'string' && err.code.startsWith('ERR_OSSL')) return new ConfigError(`${section}.tls`, `the certificate or its key cannot be used: ${err.message}`);
  return e;
}

/** Errors of `Site.start` that the site's log has already reported (its last line, on the console too). */
const reportedStartFailures = new WeakSet<object>();

/** Whether `Site.start` reported this error in the site's log (a caller need not print it again). */
export const reportedBySite = (e: unknown): boolean => typeof e === 'object' && e !== null && reportedStartFailures.has(e);

/** A floor change whose record failed to commit (`Site.recordNotCommitted`); `fromId`: the log's next entry id before it. */
interface UncommittedChange {
  user: string;
  key: string;
  before: Json;
  after: Json;
  fromId: number;
}

export class Site {
  readonly data: string;
  private current: SiteConfig;
  private readonly startedMonoMs = performance.now();
  private startedWallMs = Date.now();
  /**
   * When the site started (epoch ms), as the wall clock reads now: moved by a step of the PC's clock
   * (NTP setting it, a clock set by hand; a second or more off the time run on the monotonic
   * clock), else as it was. Kept fixed, a step moved the uptime by the step (negative after one
   * back), and after one forward every stream not heard from since the start was `stream_silent`
   * at once.
   */
  get startedAtMs(): number {
    const now = Date.now() - Math.round(performance.now() - this.startedMonoMs);
    if (Math.abs(now - this.startedWallMs) >= CLOCK_STEP_MS) this.startedWallMs = now;
    return this.startedWallMs;
  }
  private readonly log: LogSink;
  private readonly siteDb: Database.Database;
  /** The ingest half; its `ingestor` is replaced when ingest resumes in place after a failure (`resumeIngest`). */
  private ingest: IngestParts;
  private broker: EmbeddedBroker | undefined;
  private source: MqttSource | undefined;
  private internal: MqttClient | undefined;
  /** Tells each module of its own dead letters (tilstand/<site>/letters/<module>), bounded per module. */
  private letterNotices: LetterNotices | undefined;
  private http: SiteHttpServer | undefined;
  private control: ControlServer | undefined;
  private demo: DemoModules | undefined;

  /** The simulated modules a `--demo` start runs (none without --demo, or before they start). */
  get demoModules(): string[] {
    return this.demo ? this.demo.modules.map((m) => m.module) : [];
  }
  private decisionParts: Decisions | undefined;
  /** The site's rule files as loaded at start (config `agent.ruleFiles`): their rules run until the next start. */
  private readonly ruleFiles: LoadedRuleFiles;
  /** The rule files' modules as imported at start and at reloads: a reload imports only a file whose code changed. */
  private readonly ruleModules: RuleFileModules;
  /**
   * The decision log's `config_changed` entries (configChanges, lastFloorSetting), kept in site.db
   * too and read on first use (floor-changes.ts: the log holds every decision ever made), then kept
   * up by each change made here. undefined: no inbox.
   */
  private floorChanges: FloorChanges | undefined;
  /** Changes whose record failed to commit, until the log has them and their corrections committed (`recordNotCommitted`). */
  private uncommittedChanges: UncommittedChange[] = [];
  private uncommittedCheckedMono = -Infinity;
  private ui: UiServer | undefined;
  private siteService: SiteService | undefined;
  /** Sync to HQ, when a target is configured. */
  sync: SyncEngine | undefined;
  /** Why sync is not open yet (another process holds the sender lock), while the site waits for it. */
  private syncWaiting: string | undefined;
  private syncRetry: NodeJS.Timeout | undefined;
  /** The ingest failure as /healthz tells of it: when the site saw it, and the id of its log line. */
  private ingestStop: { failure: Error; id: string; atMs: number } | undefined;
  /**
   * The resume in place of ingest that stopped (`resumeIngest`): the failure it is for, the tries
   * made, when the next one runs (its timer), or why none will (`gaveUp`: a damaged file).
   */
  private resume:
    | {
        failure: Error;
        tries: number;
        delayMs: number;
        nextAtMs: number | null;
        timer: NodeJS.Timeout | undefined;
        gaveUp: string | undefined;
        lastError: string | undefined;
        lastKind: IngestFailureKind | undefined;
        /** While a try runs (its journal read takes turns of the event loop): since when. */
        runningSinceMs?: number | undefined;
      }
    | undefined;
  /** The try to resume in place under way, if one is (`resumeIngest`). */
  private resuming: Promise<{ resumed: boolean; error?: string; damaged?: boolean }> | undefined;
  private resumeBackoff = { firstMs: INGEST_RESUME_FIRST_MS, maxMs: INGEST_RESUME_MAX_MS };
  /** The last resume in place: a failure soon after it (within the longest wait) waits longer than the one before, not the first wait again. */
  private lastResume: { atMs: number; delayMs: number } | undefined;
  /** The HQ target this run syncs to, as given (`--hq` or config `hq.target`). */
  private hqTarget: string | undefined;
  /** That target's description (`SyncTarget.description`), which `tilstand status` compares config.json's with. */
  private hqDescription: string | undefined;

  /** The HQ target this run syncs to, with any credentials in it blanked; undefined: none. */
  get hqShown(): string | undefined {
    return this.hqTarget === undefined ? undefined : redactTarget(this.hqTarget);
  }
  private readonly userStore: UserStore;
  private tickTimer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private restoreTimer: NodeJS.Timeout | undefined;
  /**
   * The restore note as the start read it, for `restoredFromTag` (the status is sent every few
   * seconds; the note's tables do not change while a site runs: a restore refuses a running site)
   * and the write-back's `restored` (restored-proposals.ts).
   */
  private restoreNote: RestoreNote | undefined;
  private pruning = false;
  private purgingDeadLetters = false;
  /** When the last dead-letter purge started (DEAD_LETTER_PURGE_EVERY_MS); 0: none yet, so the first prune after the start purges. */
  private lastDeadLetterPurgeMs = 0;
  private stopping: Promise<void> | undefined;
  private readonly rowCounter = new RowCounter();
  /** The tables the site API and `status` read, one Table each for the process (`readTable`); made at the first read. */
  private keptTables: KeptTables | undefined;
  private resolveStopped!: () => void;
  /** Resolves once the site has stopped (by stop() or the control socket's `stop`). */
  readonly stopped: Promise<void> = new Promise((r) => (this.resolveStopped = r));

  private constructor(data: string, config: SiteConfig, log: LogSink, ruleFiles: LoadedRuleFiles, ruleModules: RuleFileModules) {
    this.data = data;
    this.current = config;
    this.log = log;
    this.ruleFiles = ruleFiles;
    this.ruleModules = ruleModules;
    const p = dataPaths(data, config.site);
    // SQLite's words for a damaged site.db name no file ("file is not a database"): named here, as
    // journal.db's damage is (exit 4 either way).
    try {
      this.siteDb = openSiteDb(p.siteDb);
    } catch (e) {
      throw damageIn(p.siteDb, e);
    }
    try {
      try {
        this.userStore = new UserStore(this.siteDb);
      } catch (e) {
        throw damageIn(p.siteDb, e);
      }
      this.ingest = openIngest(data, config, this.ingestHooks());
      // Said where someone looks for the letters they expected a replay to close.
      const closed = this.ingest.ingestor.health().lettersClosedAtOpen;
      if (closed > 0) log(`ingest: ${closed} dead letter${closed === 1 ? '' : 's'} closed as replayed: the journal's read at start applied ${closed === 1 ? 'its event' : 'their events'} to the tables now bound to ${closed === 1 ? 'it' : 'them'}`);
    } catch (e) {
      this.siteDb.close();
      // A binding of config.json that its contract refuses (config check reads contracts/ too).
      throw bindingConfigError(config, e);
    }
  }

  static async start(o: SiteStartOptions): Promise<Site> {
    const data = resolve(o.data);
    const p = dataPaths(data);
    const sink = o.log ?? (() => undefined);
    // Before anything is read or written (the log, config.json, site.db): a directory a newer
    // program requires is refused unchanged (data-format.ts; its mark is raised in site.db's open).
    checkDataFormat(data);
    refuseUnfinishedRestore(data);
    if (!existsSync(p.config)) {
      if (!o.demo) throw new SiteError('NotInitialized', `${data} is not a Tilstand data directory (no config.json); run \`tilstand init --data ${o.data} --site <id>\`, or start with --demo`);
      await initDataDir({ data, site: 'demo', config: (c) => demoConfig(c, o.demoHq ? join(data, DEMO_HQ_DIR) : undefined), admin: DEMO_ADMIN, modules: DEMO_EXTRA_MODULES, contracts: DEMO_CONTRACTS, demoRule: true });
      sink(`initialized a demo site in ${data} (admin '${DEMO_ADMIN.name}', PIN ${DEMO_ADMIN.pin}: a demo, never a real site)`);
    }
    const config = readConfig(data);
    // The simulated modules publish as the site's own modules, with their passwords from
    // secrets/modules.json, into its tables; the agent proposes on what they send and approvals go
    // out as commands. Only on a demo's directory: one --demo made (site 'demo'), or one where the
    // demo modules ran before (their demo/ folder). `start --demo` in the default ./tilstand-data
    // of a real site fed it simulated stock.
    if (o.demo && config.site !== 'demo' && !existsSync(p.demo)) {
      throw new ConfigError('--demo', `${data} holds site '${config.site}', not a demo: the simulated modules would publish into its tables as its own modules; start it without --demo, or try the demo in a new directory (tilstand start --demo --data <a new folder>)`);
    }
    if (existsSync(p.controlSocket) && (await socketAnswers(p.controlSocket))) {
      throw new SiteError('AlreadyRunning', `a site is already running on ${data} (${p.controlSocket} answers); stop it first`);
    }
    // logs/ is made by init; one deleted to free space (or a copy without it) left the whole run
    // without a log file.
    mkdirSync(p.logs, { recursive: true });
    const log = siteLogger(p.logs, sink);
    let ruleFiles: LoadedRuleFiles;
    const ruleModules = new RuleFileModules();
    try {
      // Before anything opens or listens: a refused config used to start the broker and the
      // write-back first, whose errors as they closed came before the reason.
      checkStartRules(config);
      // An external broker's port is in its broker.url and the site listens on none of its own:
      // taken and ignored, `--mqtt-port` left the operator believing the modules' port had moved.
      if (o.mqttPort !== undefined && config.broker.mode === 'external') {
        throw new ConfigError('--mqtt-port', 'the site uses an external broker (config broker.mode "external"), whose port is in broker.url; leave out --mqtt-port');
      }
      // The site's rule files (config agent.ruleFiles), loaded and checked as config check does:
      // a refused one is a bad config, said before anything opens, naming agent.ruleFiles[<i>].
      ruleFiles = await loadSiteRuleFiles(config, data, ruleModules);
    } catch (e) {
      log(`site ${config.site} did not start: ${(e as Error).message}`);
      reportedStartFailures.add(e as Error);
      throw e;
    }
    let site: Site;
    try {
      site = new Site(data, config, log, ruleFiles, ruleModules);
    } catch (e) {
      // Opening site.db or the ingest half failed (a damaged journal.db, the tables' writer locks
      // held by a command): the log says why as its last line, as for a failure later in the start.
      log(`site ${config.site} did not start: ${(e as Error)?.message ?? String(e)}`);
      if (typeof e === 'object' && e !== null) reportedStartFailures.add(e);
      throw e;
    }
    try {
      await site.open(o);
    } catch (e) {
      // The log's last line of this run says why it ended (logs/site.log is what a service's
      // operator reads later), in place of "site stopped".
      await site.stop(e);
      if (typeof e === 'object' && e !== null) reportedStartFailures.add(e);
      throw e;
    }
    return site;
  }

  private async open(o: SiteStartOptions): Promise<void> {
    const c = this.config;
    const p = dataPaths(this.data, c.site);
    // The HQ target first: a bad one (no bucket, no S3 keys) stops the start before anything listens.
    const hqTarget = o.hq ?? c.hq.target;
    let target: SyncTarget | undefined;
    if (hqTarget) {
      try {
        target = openTarget(hqTarget, { site: c.site });
      } catch (e) {
        throw new ConfigError(o.hq ? '--hq' : 'hq.target', (e as Error).message);
      }
      // Not the data directory or a folder of it, also through a link (as `sync now` refuses it).
      // Resolved off the event loop, at most HQ_RESOLVE_WAIT_MS: a share that hangs must not hold the start.
      const inData = await hqInDataProblemWithin(this.data, hqTarget, DEMO_HQ_DIR, HQ_RESOLVE_WAIT_MS, (l) => this.log(`sync: ${l}`));
      if (inData !== undefined) throw new ConfigError(o.hq ? '--hq' : 'hq.target', inData);
    }
    const { ingestor } = this.ingest;
    const demo = o.demo === true;
    const runSecret = randomBytes(24).toString('base64url');
    let url: string;
    let internalCreds: { username: string; password: string };
    if (c.broker.mode === 'embedded') {
      const b = c.broker;
      const credentials = new SiteCredentials(new ModuleCredentials(this.siteDb), Buffer.from(runSecret));
      this.broker = await listenWithFallback(
        (port) => {
          try {
            return new EmbeddedBroker({
              site: c.site,
              credentials,
              // The current Ingestor's: one resumed in place after a failure replaces it (`resumeIngest`).
              onEvent: (topic, payload) => this.ingest.ingestor.accept(topic, payload),
              host: b.host,
              port,
              ...(b.tls ? { tls: b.tls } : {}),
              allowInsecureNonLoopback: b.allowInsecureNonLoopback,
              diskFull: () => this.ingest.diskBudget.full(),
              diskFullHoldMaxMs: b.diskFullHoldMaxMs,
              onRefused: (r, since) => this.log(refusalLogLine(c.site, r, since)),
            });
          } catch (e) {
            throw listenerConfigError(e, 'broker', b.tls, o.mqttPort !== undefined ? '--mqtt-port' : undefined);
          }
        },
        listenPort({ name: '--mqtt-port', port: o.mqttPort }, { key: 'broker.port', port: b.port }, demo),
        'broker',
        this.log,
      );
      const host = b.host.includes(':') ? `[${b.host}]` : b.host;
      url = `${b.tls ? 'mqtts' : 'mqtt'}://${host}:${this.broker.port}`;
      internalCreds = { username: TILSTAND_PRINCIPAL, password: runSecret };
    } else {
      const b = c.broker;
      let password: string;
      try {
        password = readFileSync(b.passwordFile, 'utf8').trim();
      } catch (e) {
        throw new ConfigError('broker.passwordFile', `cannot read ${b.passwordFile}: ${(e as Error).message}`);
      }
      const budget = this.ingest.diskBudget;
      this.source = new MqttSource({
        url: b.url,
        clientId: `tilstand-${c.site}`,
        // One group per module named in config (`broker.modules`): a module left out has no
        // subscriber, and mosquitto drops its events. No `events/+/#` wildcard: one connection
        // carries one event per group commit (mqtt-source.ts), so the modules would queue behind
        // each other, and beside the per-module groups it would read their events twice.
        groups: externalBrokerModules(b).map((m) => ({ name: m, topics: [`tilstand/${c.site}/events/${m}/#`] })),
        // The disk budget holds the PUBACK here as the embedded broker does (mosquitto keeps the
        // event in the session meanwhile): the external source journaled and acknowledged
        // whatever the budget said, until the disk was full for the tables and site.db too.
        sink: async (topic, payload) => {
          if (budget.full()) await this.roomOnDisk(budget, EXTERNAL_DISK_FULL_HOLD_MAX_MS);
          return this.ingest.ingestor.accept(topic, payload);
        },
        username: b.username,
        password,
      });
      this.source.start();
      url = b.url;
      internalCreds = { username: b.username, password };
    }
    this.brokerUrl = url;

    // With broker.tls, the certificate the broker was given and no other (internal-client-tls.ts).
    this.internal = mqtt.connect(url, { ...internalCreds, ...internalClientTls(c.broker), clientId: `tilstand-${c.site}-site`, clean: true, reconnectPeriod: 1000 });
    let warned = false;
    this.internal.on('error', (e) => {
      if (!warned) this.log(`internal MQTT client: ${e.message}`);
      warned = true;
    });
    this.internal.on('connect', () => (warned = false));
    // A module is told of its own dead letters once dead_letters' commit holds them (never one a
    // crash could lose), at most LETTER_NOTICES_PER_SECOND a second each, the rest summed up.
    const internal = this.internal;
    let noticeFailed = false;
    this.letterNotices = new LetterNotices({
      site: c.site,
      publish: (topic, payload) =>
        internal.publish(topic, payload, { qos: 1 }, (e) => {
          // Once per run of failures: a broker that is away fails every notice.
          if (e && !noticeFailed) this.log(`dead letter notice on ${topic}: ${e.message}`);
          noticeFailed = e !== undefined && e !== null;
        }),
    });
    const notices = this.letterNotices;
    ingestor.setLetterListener((letters) => notices.letters(letters));
    this.resumeBackoff = { firstMs: o.ingestResumeFirstMs ?? INGEST_RESUME_FIRST_MS, maxMs: o.ingestResumeMaxMs ?? INGEST_RESUME_MAX_MS };

    this.restoreNote = readRestoreNote(this.data);
    // What the inbox held as restored (before the inbox opens and commits: restored-proposals.ts),
    // and when; a module's ack of one of those proposals may be its approval lost with the old PC.
    // The time not later than the first start after the restore (a note ahead of a clock stepped
    // back since the restore opens no longer window, nor does a restart); a note whose time is no
    // number: as no restore. 'unreadable' when the inbox as restored no longer reads: no ack approves.
    const restored = restoredProposals({ data: this.data, note: this.restoreNote, catalog: this.ingest.catalog, database: p.database!, nowMs: Date.now(), log: this.log });
    this.decisionParts = new Decisions({
      site: c.site,
      catalog: this.ingest.catalog,
      database: p.database!,
      users: this.userStore,
      ingestor: { commitAll: () => this.ingest.ingestor.commitAll() },
      internal: this.internal,
      ...decisionOptions(c),
      rules: rulesInForce(this.ruleFiles.rules),
      // The tables a rule file's rule may read besides the state tables (Rule.reads).
      siteTables: siteTableNames(c),
      agentTimer: o.agentTimer ?? true,
      reevaluateAll: this.agentConfigChanged(c),
      // A site rebuilt from HQ: a module's ack of a proposal its inbox held as restored may be an
      // approval lost with the old PC (core/inbox write-back.ts).
      ...(restored !== undefined ? { restored } : {}),
      log: this.log,
    });
    this.floorChanges = new FloorChanges(this.siteDb, this.decisionParts.inbox.logTable);
    this.hqTarget = hqTarget ?? undefined;
    this.hqDescription = target?.description;
    if (hqTarget && target) this.openSync(c.site, hqTarget, target, o.syncIntervalMs ?? DEFAULT_SYNC_INTERVAL_MS, true);
    this.siteService = new SiteService(this, {
      sync: hqTarget && target ? { target: this.hqShown!, windowMs: DEFAULT_HEALTH_WINDOW_MS, status: () => this.syncStatus() } : null,
    });

    const tickMs = o.tickMs ?? ingestTickMs(ingestor.status());
    this.tickTimer = setInterval(() => {
      try {
        this.ingest.ingestor.tick();
      } catch (e) {
        this.log(`ingest tick: ${(e as Error).message}`);
      }
      // The summary of a flood's last second, not only when the module's next letter comes.
      this.letterNotices?.tick();
      // Here, not only at /healthz, so its time is when it happened (within a tick).
      this.noteIngestFailure();
      try {
        this.decisionParts?.inbox.expireIdle();
      } catch (e) {
        this.log(`inbox tick: ${(e as Error).message}`);
      }
    }, tickMs);
    this.pruneTimer = setInterval(() => void this.prune(), c.journal.pruneIntervalMs);

    if (o.ui !== false) this.ui = new UiServer(this.siteService, { rendererDir: o.rendererDir ?? DEFAULT_RENDERER_DIR, secure: c.http.tls !== null, log: this.log });
    const ui = this.ui;
    this.http = await listenWithFallback(
      (port) => {
        try {
          return new SiteHttpServer(c.http.host, port, { metrics: () => this.metrics(), health: () => this.health(), log: this.log, ...(ui ? { ui } : {}) }, c.http.tls);
        } catch (e) {
          throw listenerConfigError(e, 'http', c.http.tls, undefined);
        }
      },
      listenPort({ name: '--http-port', port: o.httpPort }, { key: 'http.port', port: c.http.port }, demo),
      'http',
      this.log,
    );
    try {
      this.control = await ControlServer.listen(p.controlSocket, this.controlHandlers());
    } catch (e) {
      // Another site answering there is a second start on this directory. Any other refusal (a
      // data directory whose path is too long for a unix socket, which control.ts refuses as
      // 'Failed' before the bind) leaves the site running without the control socket: rethrown,
      // a deep data directory could not start at all.
      if (e instanceof ControlError && e.kind === 'AlreadyRunning') throw e;
      this.log(`control socket ${p.controlSocket} cannot listen (${(e as Error).message}); CLI commands will read the directory instead`);
    }
    this.siteService.start();
    this.resyncAfterRestore(o.restoreResyncRepeatMs ?? RESTORE_RESYNC_REPEAT_MS);

    if (o.demo) {
      let secrets;
      try {
        secrets = readModuleSecrets(p.moduleSecrets);
      } catch (e) {
        this.log(`demo modules not started: ${(e as Error).message}`);
      }
      if (secrets) {
        // The yard system writes yard_doors, a table of the demo site's own: a demo directory made
        // before it has neither its broker user nor the table (nor its binding), and runs the four
        // seed modules only.
        const noYard = demoYardMissing(c, secrets.modules, p.moduleSecrets);
        const yard = noYard === undefined;
        this.demo = runDemoModules({
          url,
          site: c.site,
          credentials: secrets.modules,
          outboxDir: p.demo,
          yard,
          ...(o.demoSeed !== undefined ? { seed: o.demoSeed } : {}),
          ...(o.demoStepMs !== undefined ? { stepMs: o.demoStepMs } : {}),
          onWarning: (m) => this.log(`demo: ${m}`),
        });
        this.log(`demo modules running: ${this.demo.modules.map((m) => m.module).join(', ')}`);
        if (noYard !== undefined) this.log(`demo: the yard module does not run here (${noYard}); a new demo directory has it`);
      }
    }
    // Recorded for the next start (and `replay export`) once this one is up. Recorded before the
    // listeners, a start that then failed (a taken port), its agent run not yet made, told the
    // next start that the agent had run with this config (its first run then skipped the rows
    // the change concerns) and `replay export` that these rule files had run.
    this.recordAgentConfig(c);
    recordLoadedRuleFiles(this.siteDb, this.ruleFiles, Date.now());
    // The log's first line of each run, so logs/site.log (which `start` names) exists from the
    // start and a run's lines can be told from the one before; "site stopped" is its last.
    this.log(`site ${c.site} started (pid ${process.pid}): mqtt ${this.mqttUrl}, http ${this.httpUrl}, data ${this.data}`);
  }

  private brokerUrl: string | undefined;

  /**
   * Opens and starts the sync engine. While another process holds the data directory's sender
   * lock — a `tilstand sync now` begun while no site ran — the site runs without it and tries
   * again every SYNC_LOCK_RETRY_MS (the engine's Conflict names that process); any other failure
   * fails the start, or, on a retry, is logged and retried.
   */
  private openSync(site: string, hqTarget: string, target: SyncTarget, intervalMs: number, first: boolean): void {
    this.syncRetry = undefined;
    if (this.stopping) return;
    try {
      // With this program's data format: the engine keeps HQ's data format mark up to it, which `restore` reads.
      this.sync = new SyncEngine({ dataDir: this.data, site, target, catalog: { cacheBudget: this.ingest.catalog.cacheBudget }, dataFormat: programDataFormat(), log: this.log });
    } catch (e) {
      const conflict = e instanceof LsmError && e.kind === 'Conflict';
      if (first && !conflict) throw e;
      if (this.syncWaiting !== (e as Error).message) this.log(`sync waits: ${(e as Error).message}; trying again every ${SYNC_LOCK_RETRY_MS / 1000} s`);
      this.syncWaiting = (e as Error).message;
      this.syncRetry = setTimeout(() => this.openSync(site, hqTarget, target, intervalMs, false), SYNC_LOCK_RETRY_MS);
      this.syncRetry.unref?.();
      return;
    }
    this.syncWaiting = undefined;
    // Offline-first: the engine keeps its outbox in site.db and retries until HQ answers.
    this.sync.start(intervalMs);
    this.log(`sync to ${redactTarget(hqTarget)} every ${intervalMs / 1000} s`);
  }

  /** The engine's status; while it waits for the sender lock, the outbox as it stands and why. */
  private syncStatus(): SyncStatus {
    if (this.sync) return this.sync.status();
    let st: SyncStatus = EMPTY_SYNC_STATUS;
    try {
      // site.db holds the outbox (the waiting engine's, and the site's own connection reads it).
      st = statusOf(new Outbox(this.siteDb), Date.now(), DEFAULT_HEALTH_WINDOW_MS);
    } catch {
      // the outbox could not be read: the zeros above, with the reason below
    }
    // Another process is sending meanwhile: not a stall of this site's.
    return { ...st, healthy: true, lastError: `not sending: ${this.syncWaiting ?? 'the sync engine is not open'}` };
  }

  /** The site API backend (both UIs use it). */
  get service(): SiteService {
    if (!this.siteService) throw new SiteError('NotInitialized', 'the site has not started');
    return this.siteService;
  }

  get ingestor(): Ingestor {
    return this.ingest.ingestor;
  }

  get catalog(): Catalog {
    return this.ingest.catalog;
  }

  /**
   * A table of the site's database as the site API and `status` read it, or undefined when there
   * is none by that name: the same Table object at every call while its schema stays the same
   * (core/lsm `KeptTables`: a fresh one read every tag file again at each call).
   */
  readTable(name: string): Table | undefined {
    this.keptTables ??= new KeptTables(this.catalog, dataPaths(this.data, this.config.site).database!);
    return this.keptTables.get(name);
  }

  get users(): UserStore {
    return this.userStore;
  }

  /** The inbox, agent and write-back (undefined before start finished). */
  get decisions(): Decisions | undefined {
    return this.decisionParts;
  }

  brokerInfo(): { listening: boolean; host: string; port: number; clients: number } {
    const b = this.config.broker;
    if (b.mode === 'embedded') return { listening: this.broker !== undefined, host: b.host, port: this.broker?.port ?? 0, clients: this.broker?.metrics().connectionsAccepted ?? 0 };
    const stats = this.source?.stats() ?? [];
    return { listening: stats.length > 0 && stats.every((g) => g.connected), host: b.url, port: 0, clients: stats.filter((g) => g.connected).length };
  }

  /** A line in the site's log (logs/site.log and the terminal). */
  logLine(line: string): void {
    this.log(line);
  }

  /** Who the embedded broker refused and why, the latest first (none with an external broker). */
  brokerRefusals(): BrokerRefusal[] {
    return this.broker?.refusals() ?? [];
  }

  /** Where the broker listens (embedded) or what it connects to (external). */
  get mqttUrl(): string {
    return this.brokerUrl ?? '';
  }

  get httpUrl(): string {
    const h = this.http?.boundTo;
    return h ? `${h.secure ? 'https' : 'http'}://${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}` : '';
  }

  get controlSocketPath(): string | undefined {
    return this.control?.path;
  }

  /**
   * A site rebuilt by `tilstand restore` holds HQ's last synced state; its note says, per module
   * and stream, the high-water mark it has. Each stream is asked to resend what came after, and
   * asked again every `repeatMs` until it delivers its first event: on a replacement PC the modules
   * connect only once their installers have the new broker passwords, and a request published
   * while no module is connected reaches no one (MQTT keeps nothing for a session the new broker
   * never had). Once a stream delivers, the sequencer's own gap handling covers whatever is still
   * missing. The streams heard from are kept in the note (`resyncAnswered`), so a restart asks only
   * the others.
   */
  private resyncAfterRestore(repeatMs: number): void {
    const path = join(this.data, RESTORE_NOTE);
    const note = readRestoreNote(this.data) as RestoreNoteState | undefined;
    if (!note) return;
    const key = resyncStreamKey;
    const answered = { ...(note.resyncAnswered ?? {}) };
    let pending = unansweredResyncs(note);
    if (pending.length === 0) return;
    const first = note.resyncSentAtMs === undefined;
    for (const r of pending) {
      this.publishResync(r.module, r.stream, r.afterSeq + 1);
      this.log(`restore: ${first ? 'asked' : 'asking again:'} ${key(r)} to resend after seq ${r.afterSeq}${first ? '' : ' (not heard from since the restore)'}`);
    }
    // Replaced whole (temp, fsync, rename): torn by a crash, the note failed the next start.
    const save = () => localFileIO.replaceAtomic(path, Buffer.from(`${JSON.stringify({ ...note, resyncSentAtMs: note.resyncSentAtMs ?? Date.now(), resyncAnswered: answered }, null, 2)}\n`));
    if (first) save();
    // A save that fails in the timer (a full disk, a folder's fsync failing: core/lsm file-io.ts)
    // is said and tried again at the next tick, the timer kept until it goes through: thrown from
    // the timer's callback, it ended the site process.
    // Said once per failure that differs from the last one said, and once when a save goes through again.
    let unsaved = false;
    let failure: string | undefined;
    const trySave = () => {
      try {
        save();
        unsaved = false;
        if (failure !== undefined) this.log(`restore: ${path} saved again`);
        failure = undefined;
      } catch (e) {
        unsaved = true;
        const message = (e as Error).message;
        if (message.replace(/\.[^/\s]*\.tmp\b/g, '') !== failure?.replace(/\.[^/\s]*\.tmp\b/g, '')) {
          this.log(`restore: ${path} could not be saved (${message}); tried again every ${formatDuration(repeatMs)}`);
        }
        failure = message;
      }
    };
    this.restoreTimer = setInterval(() => {
      const heard = new Map(this.ingest.ingestor.streamActivity().map((a) => [key(a), a]));
      const still: typeof pending = [];
      for (const r of pending) {
        const a = heard.get(key(r));
        if (a && a.lastEventMs !== null) {
          answered[key(r)] = a.lastEventMs;
          this.log(`restore: ${key(r)} is delivering again (seq ${a.lastSeq}); no more resend requests`);
        } else {
          still.push(r);
          this.publishResync(r.module, r.stream, r.afterSeq + 1);
        }
      }
      if (still.length < pending.length) unsaved = true;
      pending = still;
      if (unsaved) trySave();
      if (pending.length === 0 && !unsaved) {
        clearInterval(this.restoreTimer);
        this.restoreTimer = undefined;
      }
    }, repeatMs);
    this.restoreTimer.unref?.();
  }

  private publishResync(module: string, stream: string, from: number): void {
    const topic = `tilstand/${this.config.site}/resync/${module}`;
    this.internal?.publish(topic, JSON.stringify({ stream, from }), { qos: 1 }, (e) => {
      if (e) this.log(`resync ${module}/${stream} from ${from}: ${e.message}`);
    });
  }

  private async prune(): Promise<void> {
    if (this.pruning || this.stopping) return;
    this.pruning = true;
    try {
      const j = this.ingest.journal;
      const keepAfter = j.getCheckpoint(INGEST_CHECKPOINT) ?? 0n;
      const r = await j.prune({ maxAgeMs: this.config.journal.retentionAgeMs, maxBytes: this.config.journal.retentionBytesMax, keepAfter });
      if (r.deletedRows > 0) this.log(`journal: pruned ${r.deletedRows} event${r.deletedRows === 1 ? '' : 's'} (kept everything after position ${keepAfter})`);
    } catch (e) {
      this.log(`journal prune: ${(e as Error).message}`);
    } finally {
      this.pruning = false;
    }
    // With the journal's prune timer, at most once an hour: reading every letter's head is not
    // free on a table a flood filled.
    // A clock stepped back (since < 0) makes it due as well: else no purge until the clock caught up.
    const since = Date.now() - this.lastDeadLetterPurgeMs;
    if (since >= DEAD_LETTER_PURGE_EVERY_MS || since < 0) await this.purgeClosedDeadLetters();
  }

  /** Resolves once the disk budget has room; rejects after `holdMaxMs`, or when the site stops. */
  private async roomOnDisk(budget: Pick<DiskBudget, 'full'>, holdMaxMs: number): Promise<void> {
    const started = performance.now();
    while (budget.full()) {
      if (this.stopping) throw new Error('site stopping: event not acknowledged');
      if (performance.now() - started >= holdMaxMs) throw new Error(`disk full: event not acknowledged after ${holdMaxMs} ms`);
      await new Promise((r) => setTimeout(r, DISK_ROOM_POLL_MS));
    }
  }

  /**
   * Deletes the dead letters closed (replayed or dismissed) longer ago than config
   * `deadLetters.closedRetentionMs` at `nowMs` (0: keeps them; core/ingest
   * `purgeClosedDeadLetters`); logs what it deleted. Runs hourly with the journal's prune, and
   * from tests. Undefined when it did not run (kept for good, already running, stopping).
   */
  async purgeClosedDeadLetters(nowMs = Date.now()): Promise<PurgeResult | undefined> {
    const keepMs = this.config.deadLetters.closedRetentionMs;
    if (keepMs === 0 || this.purgingDeadLetters || this.stopping) return undefined;
    this.purgingDeadLetters = true;
    this.lastDeadLetterPurgeMs = Date.now();
    try {
      const before = nowMs - keepMs;
      const r = await this.ingest.ingestor.purgeClosedDeadLetters(before);
      if (r.purged > 0) {
        this.log(
          `dead letters: deleted ${r.purged} closed (replayed or dismissed) before ${new Date(before).toISOString()} (deadLetters.closedRetentionMs)` +
            (r.fullCompaction ? '; dead_letters compacts fully in the background to give their space back' : ''),
        );
      }
      return r;
    } catch (e) {
      // Stopping closes the ingestor under a purge between two of its slices: not a failure.
      if (!this.stopping) this.log(`dead letters purge: ${(e as Error).message}`);
      return undefined;
    } finally {
      this.purgingDeadLetters = false;
    }
  }

  /** One agent run now (the control op `agent.run`, `tilstand agent run`). */
  runAgent(): RunResult {
    if (!this.decisionParts) throw Object.assign(new Error('the agent is not running'), { kind: 'Failed' });
    this.ingest.ingestor.commitAll();
    return this.decisionParts.agent.run();
  }

  /**
   * Sets (or, given null, removes) the reorder policy of an item, or of one location of it, for
   * `user` (the site API's `setReorderPolicy`, from the Stock screen): config.json's new content is
   * checked whole first (a file that does not validate is left as it is and the error names its
   * key), recorded under the user's name in the decision log (`config_changed`, which travels to
   * HQ with the decisions), then written and reloaded as `reloadConfig` does — so other edits of
   * the file's live sections apply with it; then the agent runs once. Returns the log entry's id.
   */
  setReorderPolicy(user: string, item: string, location: string | null, policy: { reorderPoint: number; orderUpTo: number } | null): number {
    // Refused before the file changes when there is no inbox to record it under the user's name.
    if (!this.decisionParts) throw Object.assign(new Error('the inbox is not running'), { kind: 'Failed' });
    const { config, key, before, write } = reorderPolicyEdit(this.data, item, location, policy);
    // The record first, committed: a crash (or a failed write) after it leaves a change in the log
    // that config.json does not hold, which the Stock screen shows as nobody's (it names a setter
    // only while the file holds what they set). The other way round left a changed policy that
    // nobody was named for.
    const inbox = this.decisionParts.inbox;
    // Entries the log's writer holds for its next commit have ids from here on.
    const fromId = decisionLogNextId(inbox.logTable) ?? 1;
    let change: ConfigChange;
    try {
      change = inbox.recordConfigChange({ user, key, before: (before ?? null) as Json, after: policy });
    } catch (e) {
      // config.json is not written. But a log commit that failed (a full disk, a read-only mount)
      // leaves the entry with the log's writer, which commits it with its next commit: the log
      // (and HQ) would claim a change the file never held.
      this.recordNotCommitted({ user, key, before: (before ?? null) as Json, after: policy, fromId }, (e as Error).message);
      throw e;
    }
    this.floorChanges?.add(change);
    // Its commit committed what the log's writer held from a record that failed before.
    this.markUncommitted(true);
    try {
      write();
    } catch (e) {
      this.recordNotWritten(change, item, location, policy, (e as Error).message);
      throw e;
    }
    this.applyConfig(config);
    const said = (v: unknown) => (v === null || v === undefined ? 'not set' : `reorder point ${String((v as { reorderPoint?: unknown }).reorderPoint)}, up to ${String((v as { orderUpTo?: unknown }).orderUpTo)}`);
    this.log(`config ${key} set by ${user}: was ${said(before)}; now ${said(policy)}`);
    // The agent looks at every row against it now (the reconfigure made its next run a full one),
    // so the floor sees at once the replenishment it proposes, or the one it withdraws.
    const run = this.decisionParts.runAgent();
    if (!run.ok) this.log(`agent run after ${key} changed: ${run.message}`);
    return change.id;
  }

  /**
   * After `change` was recorded and config.json's write failed: the record claims a change the
   * file may not hold, and it travels to HQ. Read back, a file that kept its value gets a
   * correction under the same name (`config_changed` from the value claimed back to the one held),
   * which travels the same way; one that holds the change after all (the replace failed after its
   * rename) needs none. The record stays first either way: a crash after a write that worked must
   * not lose who made it.
   */
  private recordNotWritten(change: ConfigChange, item: string, location: string | null, policy: { reorderPoint: number; orderUpTo: number } | null, why: string): void {
    const { user, key } = change;
    let held: unknown;
    try {
      held = reorderPolicyHeld(this.data, item, location);
    } catch (e) {
      this.log(`config ${key}: set by ${user} in the decision log (entry ${change.id}), but config.json was not written: ${why}; reading it back failed too (${(e as Error).message}), so the entry may name a change it does not hold`);
      return;
    }
    if (isDeepStrictEqual(held, policy)) {
      this.log(`config ${key}: set by ${user} (entry ${change.id}); config.json holds it, but its write failed: ${why}; the site runs the old value until \`tilstand config reload\` or the next start`);
      return;
    }
    try {
      const correction = this.decisionParts!.inbox.recordConfigChange({ user, key, before: change.after, after: (held ?? null) as Json });
      this.floorChanges?.notMade(change, correction);
      this.log(`config ${key}: set by ${user} in the decision log (entry ${change.id}), but config.json was not written: ${why}; entry ${correction.id} records that it keeps its value`);
    } catch (e) {
      this.log(`config ${key}: set by ${user} in the decision log (entry ${change.id}), but config.json was not written: ${why}; recording that it keeps its value failed too (${(e as Error).message})`);
    }
  }

  /**
   * After the record of a change failed to commit (config.json not written): the log's writer may
   * hold the entry for its next commit. A correction under the same name follows it at once, from
   * the value claimed back to the one held, so that they commit together (or the correction alone
   * commits, naming the entry before it). The pair is marked in the floor's list once the log has
   * both committed (`markUncommitted`): now, or at a later look at the list while the disk stays
   * full.
   */
  private recordNotCommitted(c: UncommittedChange, why: string): void {
    const { user, key } = c;
    if (this.uncommittedChanges.length >= 100) this.uncommittedChanges.shift();
    this.uncommittedChanges.push(c);
    let fixed = 'recording that it keeps its value';
    try {
      this.decisionParts!.inbox.recordConfigChange({ user, key, before: c.after, after: c.before });
      fixed = 'the entry after it records that it keeps its value';
    } catch (e) {
      fixed += ` failed too (${(e as Error).message}); both go into the log's next commit`;
    }
    this.log(`config ${key}: set by ${user}, but the decision log could not record it: ${why}; config.json was not written, the value stays; ${fixed}`);
    this.markUncommitted(true);
  }

  /**
   * Marks in the floor's list the pairs `recordNotCommitted` left once the log has them committed.
   * The log's writer commits what it holds with its next commit, so once the log's next entry id
   * has moved past the pair's ids they are in the log, or were never taken (then nothing is
   * marked): each is looked for once. Checked after each change recorded here, at stop, and at
   * most once a second at the list's readers (the Stock screen asks per row).
   */
  private markUncommitted(force = false): void {
    if (this.uncommittedChanges.length === 0 || !this.decisionParts || !this.floorChanges) return;
    const mono = performance.now();
    if (!force && mono - this.uncommittedCheckedMono < 1000) return;
    this.uncommittedCheckedMono = mono;
    const logTable = this.decisionParts.inbox.logTable;
    let next: number;
    try {
      next = decisionLogNextId(logTable) ?? 1;
    } catch (e) {
      this.log(`config changes: reading the decision log failed (${(e as Error).message}); the changes not made are marked at a later look`);
      return;
    }
    this.uncommittedChanges = this.uncommittedChanges.filter((c) => {
      if (next <= c.fromId + 1) return true; // not both committed yet
      let found: ConfigChange[];
      try {
        found = readConfigChanges(logTable, c.fromId).reverse();
      } catch (e) {
        this.log(`config ${c.key}: reading the decision log failed (${(e as Error).message}); the change by ${c.user} that was not made is marked at a later look`);
        return true;
      }
      for (let i = 0; i + 1 < found.length; i++) {
        const [a, b] = [found[i]!, found[i + 1]!];
        const pair =
          b.id === a.id + 1 && a.key === c.key && b.key === c.key && a.user === b.user &&
          isDeepStrictEqual(a.before, c.before) && isDeepStrictEqual(a.after, c.after) && isDeepStrictEqual(b.before, c.after) && isDeepStrictEqual(b.after, c.before);
        if (pair) {
          try {
            this.floorChanges!.notMadeFound(a, b);
          } catch (e) {
            this.log(`config ${c.key}: marking entries ${a.id} and ${b.id} as a change not made failed (${(e as Error).message}); tried again at a later look`);
            return true;
          }
          break;
        }
      }
      return false;
    });
  }

  /**
   * Who last set a config.json key from the floor UI (`setReorderPolicy`), when, and to what
   * (`after`, null for removed); undefined when nobody did. From the decision log's
   * `config_changed` entries, read on first use; each change made here is added to them.
   */
  lastFloorSetting(key: string): ConfigChange | undefined {
    this.markUncommitted();
    return this.floorChanges?.read().byKey.get(key);
  }

  /** The config.json keys people changed from the floor UI, newest first (at most `limit`). */
  configChanges(limit: number): ConfigChange[] {
    this.markUncommitted();
    return this.floorChanges?.read().list.slice(0, limit) ?? [];
  }

  /** Runs a journal prune now (tests, and the `prune` control op). */
  pruneNow(): Promise<void> {
    return this.prune();
  }

  status(): SiteStatus {
    const { ingestor, journal } = this.ingest;
    // The app's view (streams and alarms), as the UI gets it.
    const app = this.siteService?.status();
    const health = ingestor.health();
    // The approval inbox first, as the app shows it (its age: commits the agent has not checked
    // the open proposals against; present while the agent's timers run), then ingest's tables.
    const inbox = app?.tables.filter((t) => t.table === 'approval_inbox') ?? [];
    const fed = fedTables(configBindings(this.config));
    const tables = [...inbox, ...ingestor.status()].map((t) => {
      let rows: number | null = null;
      try {
        const table = this.readTable(t.table);
        rows = table ? this.rowCounter.count(table).rows : null;
      } catch {
        rows = null;
      }
      return {
        table: t.table,
        budgetMs: t.budgetMs,
        decision: t.decision,
        confirmedBy: t.confirmedBy,
        ageMs: t.ageMs,
        withinBudget: t.withinBudget,
        pendingEvents: t.pendingEvents,
        lastCommitMs: t.lastCommitMs,
        snapshotId: t.snapshotId,
        rows,
        breaches: t.breaches,
        fed: t.table === 'approval_inbox' || fed.has(t.table),
      };
    });
    const b = this.config.broker;
    const restoredFromTag = this.restoredFromTag(Date.now());
    return {
      site: this.config.site,
      data: this.data,
      running: true,
      pid: process.pid,
      startedAtMs: this.startedAtMs,
      nowMs: Date.now(),
      broker:
        b.mode === 'embedded'
          ? { mode: 'embedded', url: this.mqttUrl, host: b.host, port: this.broker?.port ?? null, metrics: this.broker ? { ...this.broker.metrics() } : null }
          : { mode: 'external', url: b.url, connected: this.source ? this.source.stats().every((g) => g.connected) : false },
      http: { url: this.httpUrl },
      tables,
      deadLettersOpen: ingestor.deadLetterCount(),
      journal: journalState(journal),
      ingestFailure: health.failure,
      ...(health.failure !== null && this.ingestResumeText() !== undefined ? { ingestResume: this.ingestResumeText()! } : {}),
      ...(health.failure !== null && this.ingestResumeState() !== undefined ? { ingestResumePlan: this.ingestResumeState()! } : {}),
      diskFull: health.diskFull,
      demo: this.demo ? this.demo.stats() : null,
      streams: app ? app.streams : null,
      alarms: app ? app.alarms : null,
      sync: app?.sync.configured ? app.sync : null,
      restoreWaiting: restoreWaiting(this.data),
      ...(restoredFromTag.length > 0 ? { restoredFromTag } : {}),
      proposals: this.decisions ? this.decisions.inbox.activeCounts() : null,
      syncDescription: this.hqDescription ?? null,
      ...(this.decisions ? { agentRules: this.agentRules() } : {}),
      ...(app?.agent ? { agent: app.agent } : {}),
    };
  }

  /** The tables a restore took from an older tag, while they are shown (`restoredFromTagShown`). */
  restoredFromTag(nowMs: number): RestoredFromTagView[] {
    return restoredFromTagShown(this.restoreNote, nowMs);
  }

  /** The rules the agent runs, in its order; a rule from a rule file (config agent.ruleFiles) names the file as loaded at start. */
  agentRules(): AgentRuleView[] {
    return ruleOrigins(this.decisions?.agent.rules ?? [], this.ruleFiles.files);
  }

  metrics(): string {
    const site = this.config.site;
    const p = new PromText().family('tilstand_site_up', 'gauge', '1 while the site runs', [{ labels: { site }, value: 1 }]);
    p.family('tilstand_site_uptime_seconds', 'gauge', 'Seconds since the site started', [{ labels: { site }, value: Math.round((Date.now() - this.startedAtMs) / 1000) }]);
    const js = this.ingest.journal.stats();
    p.family('tilstand_journal_bytes_used', 'gauge', 'Live bytes in journal.db', [{ labels: { site }, value: this.ingest.journal.bytesUsed() }])
      .family('tilstand_journal_commits_total', 'counter', 'Group commits of the journal since start', [{ labels: { site }, value: js.commits }])
      .family('tilstand_journal_events_total', 'counter', 'Events journaled since start', [{ labels: { site }, value: js.events }]);
    if (this.letterNotices) {
      // What modules were told of their dead letters (letter-notices.ts), so a flood shows here too.
      const n = this.letterNotices.counts();
      p.family('tilstand_ingest_letter_notices_total', 'counter', "Notices published to modules of their own dead letters since start (kind letter: one each; summary: the rest of a module's second)", [
        { labels: { site, kind: 'letter' }, value: n.notices },
        { labels: { site, kind: 'summary' }, value: n.summaries },
      ]).family('tilstand_ingest_letters_unannounced_total', 'counter', 'Dead letters told to no module since start (more modules with a notice window open than the bound)', [{ labels: { site }, value: n.unannounced }]);
    }
    if (this.broker) {
      const m = this.broker.metrics();
      for (const [k, v] of Object.entries(m)) {
        const name = `tilstand_broker_${k.replace(/[A-Z]/g, (x) => `_${x.toLowerCase()}`)}${k === 'heldNow' ? '' : '_total'}`;
        p.family(name, k === 'heldNow' ? 'gauge' : 'counter', `EmbeddedBroker metric ${k}`, [{ labels: { site }, value: v }]);
      }
    }
    if (this.sync) {
      const st = this.sync.status();
      p.family('tilstand_sync_pending_items', 'gauge', 'Sync steps waiting for HQ', [{ labels: { site }, value: st.pendingItems }])
        .family('tilstand_sync_pending_bytes', 'gauge', 'Bytes waiting for HQ', [{ labels: { site }, value: st.pendingBytes }])
        .family('tilstand_sync_oldest_unsynced_seconds', 'gauge', "How long HQ has been behind: the oldest pending step's wait, carried over superseded snapshot units", [{ labels: { site }, value: Math.round(st.oldestUnsyncedMs / 1000) }])
        .family('tilstand_sync_last_success_timestamp_seconds', 'gauge', 'Last successful HQ request (0: never)', [{ labels: { site }, value: st.lastSuccessMs === null ? 0 : Math.round(st.lastSuccessMs / 1000) }])
        .family('tilstand_sync_healthy', 'gauge', '1 while sync makes progress or has nothing to do', [{ labels: { site }, value: st.healthy ? 1 : 0 }]);
    }
    const agent = this.decisionParts?.agent;
    if (agent?.keepsInboxCurrent) {
      const since = agent.oldestUncheckedCommitMs();
      p.family('tilstand_inbox_age_ms', 'gauge', "How long state-table commits have waited for the agent's check of the open proposals (the approval inbox's age)", [
        { labels: { site }, value: since === null ? 0 : Math.max(0, Date.now() - since) },
      ]).family('tilstand_inbox_budget_ms', 'gauge', "The approval inbox's freshness budget (config.json tables)", [{ labels: { site }, value: inboxBudget(this.config).budgetMs }]);
    }
    if (this.decisions) {
      // What waits for a decision: a monitor sees a floor that stopped deciding (an oldest proposal growing old).
      const q = this.decisions.inbox.activeCounts();
      p.family('tilstand_proposals_waiting', 'gauge', 'Proposals waiting for a decision, open or deferred', [
        { labels: { site, status: 'open' }, value: q.open },
        { labels: { site, status: 'deferred' }, value: q.deferred },
      ]).family('tilstand_proposals_oldest_open_seconds', 'gauge', 'How long the oldest open proposal has waited (0: none open)', [
        { labels: { site }, value: q.oldestOpenMs === null ? 0 : Math.max(0, Math.round((Date.now() - q.oldestOpenMs) / 1000)) },
      ]);
    }
    return p.toString() + this.ingest.ingestor.metrics();
  }

  /**
   * /healthz, which anyone who reaches the port reads (unauthenticated): that ingest stopped, since
   * when and the id of the log line with the error, never the error's text — it names files of the
   * data directory (a path of the warehouse, a decoder's view of a damaged file). The signed-in
   * alarm, `tilstand status` and logs/site.log keep the text.
   */
  health(): Record<string, unknown> {
    const h = this.ingest.ingestor.health();
    const stop = this.noteIngestFailure();
    const plan = this.ingestResumeState();
    return {
      ok: stop === undefined,
      site: this.config.site,
      ingestFailure: stop ? `ingest stopped (error id ${stop.id}); the site's log (logs/site.log) has the details under that id` : null,
      ingestStoppedAtMs: stop ? stop.atMs : null,
      ingestErrorId: stop ? stop.id : null,
      // The plan, as values only (no error text): kinds, a count and a time.
      ingestFailureKind: plan ? plan.lastFailureKind : null,
      ingestResumeAtMs: plan ? plan.atMs : null,
      ingestResumeTries: plan ? plan.tries : null,
      ingestResumeRunningSinceMs: plan ? plan.runningSinceMs : null,
      ingestResumeStopped: plan ? plan.stopped : null,
      diskFull: h.diskFull,
      mqtt: this.mqttUrl,
    };
  }

  /**
   * The resume in place of ingest that stopped, as values (`/healthz`, `tilstand status`): the
   * tries made since the stop, when the next runs (null: none planned), `stopped: 'damaged'` when
   * none will (a damaged file), and the kind of the last failure — the last try's, else the stop's.
   * Undefined while ingest runs.
   */
  ingestResumeState(): IngestResumeState | undefined {
    const stop = this.noteIngestFailure();
    if (stop === undefined) return undefined;
    const r = this.resume !== undefined && this.resume.failure === stop.failure ? this.resume : undefined;
    return {
      tries: r?.tries ?? 0,
      atMs: r?.runningSinceMs === undefined && r?.gaveUp === undefined ? (r?.nextAtMs ?? null) : null,
      runningSinceMs: r?.runningSinceMs ?? null,
      stopped: r?.gaveUp !== undefined ? 'damaged' : null,
      lastFailureKind: r?.lastKind ?? ingestFailureKind(stop.failure),
    };
  }

  /** The ingest failure, if any; a new one gets its time, an id, and the whole error in the log under that id. */
  private noteIngestFailure(): { failure: Error; id: string; atMs: number } | undefined {
    const failure = this.ingest.ingestor.failure();
    if (failure === null) return undefined;
    if (this.ingestStop?.failure !== failure) {
      this.ingestStop = { failure, id: internalErrorId(), atMs: Date.now() };
      this.log(`ingest stopped (error id ${this.ingestStop.id}): ${describeError(failure)}`);
      this.planResume(failure);
    }
    return this.ingestStop;
  }

  /**
   * Plans the resume in place of ingest that stopped on `failure`: a try after the first backoff,
   * or, for a damaged file (corruption: the reopen would read it and fail again), none.
   */
  private planResume(failure: Error): void {
    if (this.stopping || this.resume?.failure === failure) return;
    if (this.resume?.timer) clearTimeout(this.resume.timer);
    const again = this.lastResume !== undefined && Date.now() - this.lastResume.atMs < this.resumeBackoff.maxMs;
    const delayMs = again ? Math.min(this.lastResume!.delayMs * 2, this.resumeBackoff.maxMs) : this.resumeBackoff.firstMs;
    this.resume = { failure, tries: 0, delayMs, nextAtMs: null, timer: undefined, gaveUp: undefined, lastError: undefined, lastKind: undefined };
    if (isCorruption(failure)) {
      this.giveUpResume('the error is a damaged file, which a reopen reads again and fails on');
      return;
    }
    this.scheduleResume();
  }

  private scheduleResume(): void {
    const r = this.resume;
    if (!r || this.stopping) return;
    r.nextAtMs = Date.now() + r.delayMs;
    r.timer = setTimeout(() => {
      r.timer = undefined;
      void this.resumeIngest('retry');
    }, r.delayMs);
    r.timer.unref?.();
    this.log(`ingest: resuming in place in ${formatWait(r.delayMs)} (try ${r.tries + 1}); meanwhile events are journaled and acknowledged`);
  }

  private giveUpResume(why: string): void {
    const r = this.resume!;
    r.gaveUp = why;
    r.nextAtMs = null;
    this.log(`ingest: not resumed in place automatically: ${why}; fix or restore the table file the error names, then \`tilstand ingest resume\` (or restart the site)`);
  }

  /**
   * Resumes ingest that stopped, in place (core/site/DESIGN.md, "Ingest that stopped"): the stopped
   * Ingestor's events are committed to the journal (flush), it releases the tables without
   * committing (`releaseStopped`: its writers may hold part of an event), and a new Ingestor opens
   * on the same journal, replaying every event after each table's committed position — what a
   * restart does, without one. The replay runs in slices with turns of the event loop between
   * (core/ingest `openInSlices`), the stopped Ingestor journaling and acknowledging meanwhile; its
   * last slice, the journal's flush before it and the switch to the new Ingestor are one
   * synchronous step: no event reaches either Ingestor meanwhile, and the stopped one's accepts
   * still waiting for their commit resolve after it (it is closed by then, so applies none of
   * them; the new one read them). The broker's sink, the letter listener, the metrics and the
   * control socket reach the Ingestor through `this.ingest`. When the open fails the stopped
   * Ingestor stays (journaling, raising the alarm) and the next try waits twice as long; a damaged
   * file ends the tries. `manual`: asked for (`tilstand ingest resume`). A call while a try runs
   * is answered with that try's outcome.
   */
  private resumeIngest(why: 'retry' | 'manual'): Promise<{ resumed: boolean; error?: string; damaged?: boolean }> {
    if (this.resuming) return this.resuming;
    const p = this.resumeIngestOnce(why).finally(() => {
      if (this.resuming === p) this.resuming = undefined;
    });
    this.resuming = p;
    return p;
  }

  private async resumeIngestOnce(why: 'retry' | 'manual'): Promise<{ resumed: boolean; error?: string; damaged?: boolean }> {
    const old = this.ingest.ingestor;
    const failure = old.failure();
    if (failure === null || this.stopping) return { resumed: false };
    if (this.resume?.failure !== failure) this.planResume(failure);
    const r = this.resume!;
    if (r.timer) clearTimeout(r.timer);
    r.timer = undefined;
    r.tries++;
    r.nextAtMs = null;
    r.runningSinceMs = Date.now();
    let fresh: Ingestor;
    try {
      this.ingest.journal.flush();
      old.releaseStopped();
      // Throws when what it reads fails to apply or commit again (the disk still fails).
      // Its counters go on from the stopped one's: /metrics counts since the site started.
      fresh = await openIngestorInSlices(
        this.current,
        this.ingest,
        { ...this.ingestHooks(), carried: old.carryOver() },
        {
          beforeLast: () => this.ingest.journal.flush(),
          // The switch, in the same synchronous step as the last slice.
          onOpen: (i) => {
            old.setLetterListener(undefined);
            old.abandon();
            this.ingest = { ...this.ingest, ingestor: i };
            const notices = this.letterNotices;
            if (notices) i.setLetterListener((letters) => notices.letters(letters));
          },
          // The site stopping: the open gives up at its next turn, and the stop closes the stopped one.
          cancelled: () => this.stopping !== undefined,
        },
      );
    } catch (e) {
      r.runningSinceMs = undefined;
      if (this.stopping) return { resumed: false, error: (e as Error)?.message ?? String(e) };
      r.lastError = (e as Error)?.message ?? String(e);
      r.lastKind = ingestFailureKind(e);
      this.log(`ingest: resume in place failed (try ${r.tries}${why === 'manual' ? ', asked for' : ''}): ${describeError(e)}`);
      if (isCorruption(e)) {
        if (r.gaveUp === undefined) this.giveUpResume('the table files are damaged (the reopen failed on a damaged file)');
      } else if (r.gaveUp !== undefined) {
        // Asked for after a damaged file (no try was planned), and this try failed on something
        // that is no damage (a full or failing disk): the file was fixed, so the tries go on with
        // the backoff, from the wait planned at the stop, as after any such error. Before, none
        // was planned and ingest stayed stopped until someone asked again.
        r.gaveUp = undefined;
        this.log('ingest: the try failed on an error that is no damaged file: the site tries to resume in place by itself again, with the backoff');
        this.scheduleResume();
      } else {
        r.delayMs = Math.min(r.delayMs * 2, this.resumeBackoff.maxMs);
        this.scheduleResume();
      }
      return { resumed: false, error: r.lastError, damaged: isCorruption(e) };
    }
    const stop = this.ingestStop;
    this.ingestStop = undefined;
    this.resume = undefined;
    this.lastResume = { atMs: Date.now(), delayMs: r.delayMs };
    this.log(
      `ingest resumed in place (try ${r.tries}${why === 'manual' ? ', asked for' : ''}${stop ? `; it had stopped with error id ${stop.id} ${formatWait(Date.now() - stop.atMs)} before` : ''}): ${fresh.health().recoveredEvents} journal events read again`,
    );
    return { resumed: true };
  }

  /** The control op `ingest.resume`: a try now; refused while ingest runs. */
  private async resumeIngestNow(): Promise<{ resumed: true }> {
    if (this.ingest.ingestor.failure() === null) throw Object.assign(new Error(`ingest is running on ${this.data}: nothing to resume`), { kind: 'Conflict' });
    this.noteIngestFailure();
    const r = await this.resumeIngest('manual');
    // A damaged file is kind Corruption (the CLI's exit 4, as every command says damage), any other error Failed (5).
    if (!r.resumed) throw Object.assign(new Error(`ingest did not resume: ${r.error ?? 'the site is stopping'}${this.resume?.nextAtMs ? `; the site tries again at ${new Date(this.resume.nextAtMs).toISOString()}` : ''}`), { kind: r.damaged ? 'Corruption' : 'Failed' });
    return { resumed: true };
  }

  /** What is done about ingest that stopped, for the alarm and `tilstand status`; undefined while it runs. */
  ingestResumeText(): string | undefined {
    // A failure the tick has not noted yet is noted (and its try planned) here: else, for up to a
    // tick, status and the alarm said "restart" for ingest the site is about to retry by itself.
    this.noteIngestFailure();
    const r = this.resume;
    if (!r || this.ingest.ingestor.failure() !== r.failure) return undefined;
    const last = r.lastError !== undefined ? ` (the last try failed: ${r.lastError})` : '';
    if (r.runningSinceMs !== undefined) return `the site is resuming it now (try ${r.tries}, since ${new Date(r.runningSinceMs).toISOString()}: reading what was journaled meanwhile)${last}`;
    if (r.gaveUp !== undefined) return `not retried: ${r.gaveUp}${last}; fix or restore the file, then \`tilstand ingest resume\` or restart the site`;
    if (r.nextAtMs !== null) return `the site tries to resume it at ${new Date(r.nextAtMs).toISOString()}${last}; \`tilstand ingest resume\` tries now`;
    return undefined;
  }

  /**
   * The same as values, for the alarm's params (a UI words them in its reader's language):
   * `atMs`, when the site tries next; `resuming`, a try under way (its read of what was journaled
   * meanwhile takes turns of the event loop: the alarm is seen during it, and its start, a time
   * past, read as "tries again at" a moment gone); or `stopped: 'damaged'`, no try (a damaged
   * file: fixed or restored, then `tilstand ingest resume` or a restart). Undefined while ingest
   * runs or when nothing is planned.
   */
  ingestResumePlan(): { atMs: number } | { resuming: true } | { stopped: 'damaged' } | undefined {
    // The same state as ingestResumeState's values, in the alarm's shape.
    const s = this.ingestResumeState();
    if (s === undefined) return undefined;
    if (s.runningSinceMs !== null) return { resuming: true };
    // Every reason to give up is a damaged file (planResume, resumeIngest).
    if (s.stopped !== null) return { stopped: s.stopped };
    return s.atMs === null ? undefined : { atMs: s.atMs };
  }

  /** The Ingestor's hooks, at start and at a resume in place. */
  private ingestHooks() {
    return {
      publishResync: (module: string, stream: string, from: number) => this.publishResync(module, stream, from),
      onWarning: (m: string) => this.log(m),
      onInfo: (m: string) => this.log(m),
    };
  }

  private controlHandlers(): Map<string, ControlHandler> {
    const { contracts } = this.ingest;
    // The current Ingestor at each call: one resumed in place replaces it.
    const ingestor = {
      listDeadLetters: (...a: Parameters<Ingestor['listDeadLetters']>) => this.ingest.ingestor.listDeadLetters(...a),
    };
    const positions = (v: unknown): bigint[] | undefined => {
      if (v === undefined || v === null) return undefined;
      if (!Array.isArray(v) || !v.every((x) => (typeof x === 'string' && /^\d+$/.test(x)) || (Number.isSafeInteger(x) && (x as number) >= 0))) {
        throw Object.assign(new Error('ids: expected an array of journal positions'), { kind: 'InvalidArgument' });
      }
      return v.map((x) => BigInt(x as string | number));
    };
    return new Map<string, ControlHandler>([
      ['status', () => this.status()],
      [
        'deadletters.list',
        (a) => {
          const n = a.limit ?? DEAD_LETTER_LIST_DEFAULT;
          // Bounded as the UI's list is (api-validate.ts): each letter goes out whole.
          if (!(typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 && n <= DEAD_LETTER_LIST_MAX)) {
            throw Object.assign(new Error(`limit: expected an integer from 1 to ${DEAD_LETTER_LIST_MAX}, got ${JSON.stringify(a.limit)}`), { kind: 'InvalidArgument' });
          }
          const status = a.status === 'open' || a.status === 'replayed' || a.status === 'dismissed' ? a.status : undefined;
          const topic = typeof a.topic === 'string' ? a.topic : undefined;
          const reason = typeof a.reason === 'string' ? a.reason : undefined;
          return ingestor.listDeadLetters({ limit: n, ...(status ? { status } : { openFirst: true }), ...(topic !== undefined ? { topic } : {}), ...(reason !== undefined ? { reason } : {}) }).map((d) => ({
            ...d,
            position: d.position.toString(),
            payload: d.payload.toString('utf8').slice(0, 2000),
          }));
        },
      ],
      // The counts so far go out with the heartbeats `tilstand deadletters replay` asks for.
      [
        'deadletters.replay',
        async (a, work) => {
          // Slice by slice, each commit standing: the stop does not wait for a flood's replay.
          work.interruptible();
          const r = await replayLogged(this.ingest.ingestor, positions(a.ids), a.alike === true, { log: this.log, via: 'tilstand deadletters replay' }, (p) => work.progress({ ...p }));
          // Letters still failing while config.json holds bindings or tables the running site has
          // not loaded (they take effect at the next start): the person is told, not left guessing.
          const pending = r.failed > 0 ? this.startPendingSections(['bindings', 'tables']) : [];
          return pending.length > 0 ? { ...r, startPending: pending } : r;
        },
      ],
      [
        'deadletters.dismiss',
        (a, work) =>
          dismissWithPin(
            this.users,
            this.ingest.ingestor,
            { ids: positions(a.ids) ?? [], user: String(a.user ?? ''), pin: String(a.pin ?? ''), note: a.note as string, alike: a.alike === true },
            { log: this.log, via: 'tilstand deadletters dismiss' },
            // The PIN's check is waited for at stop (its attempt is counted before the hash); the
            // slices after it, each commit standing, are not.
            () => work.interruptible(),
          ),
      ],
      ['contracts.list', () => contracts.list()],
      [
        'contracts.add',
        (a) => {
          try {
            return contracts.register(a.contract as Contract);
          } catch (e) {
            throw Object.assign(e as Error, { kind: 'InvalidArgument' });
          }
        },
      ],
      // proposals/decide/agent from the CLI (core/site/cli/agent-cli.ts); `agent.run` commits first.
      ...(this.decisionParts ? agentControlHandlers(this.decisionParts.agent, this.decisionParts.inbox) : []),
      ['agent.run', () => this.runAgent()],
      [
        'config.reload',
        () =>
          this.reloadConfig().catch((e: unknown) => {
            throw e instanceof ConfigError ? Object.assign(e, { kind: 'InvalidArgument' }) : e;
          }),
      ],
      // `tilstand sync now` on a running site: its engine holds the sender lock (core/sync/engine.ts).
      [
        'sync.now',
        (a, work) => {
          // The sync engine stops right after the calls in flight: its round ends after the step in flight.
          work.interruptible();
          if (this.syncWaiting !== undefined) throw Object.assign(new Error(`the site running on ${this.data} is waiting for the sync lock: ${this.syncWaiting}`), { kind: 'Conflict' });
          if (!this.sync || this.hqTarget === undefined) {
            throw Object.assign(new Error(`the site running on ${this.data} has no HQ target (config hq.target, or start --hq)`), { kind: 'NotConfigured' });
          }
          if (a.hq !== undefined && (typeof a.hq !== 'string' || targetPlace(a.hq) !== targetPlace(this.hqTarget))) {
            throw Object.assign(new Error(`the site running on ${this.data} syncs to ${redactTarget(this.hqTarget)}, not ${typeof a.hq === 'string' ? redactTarget(a.hq) : String(a.hq)}; leave out --hq, or stop the site first`), { kind: 'InvalidArgument' });
          }
          const rounds = a.maxRounds === undefined ? 5 : a.maxRounds;
          if (typeof rounds !== 'number' || !Number.isSafeInteger(rounds) || rounds < 1) throw Object.assign(new Error('maxRounds: expected a positive integer'), { kind: 'InvalidArgument' });
          const sync = this.sync;
          // `refused`: HQ's sender marker names another data directory, so the command exits 3 as it
          // does with no site running (pending steps alone read as exit 5). An added field: an older
          // CLI ignores it.
          return sync.syncNow(rounds).then((r) => ({ ...r, refused: sync.refusedByHq }));
        },
      ],
      ['prune', async () => (await this.prune(), journalState(this.ingest.journal))],
      // `tilstand ingest resume`: ingest that stopped resumes now, not at its next retry.
      ['ingest.resume', () => this.resumeIngestNow()],
      [
        'stop',
        () => {
          setImmediate(() => void this.stop());
          return { stopping: true };
        },
      ],
    ]);
  }

  /** The config in force: config.json as read at start, with the sections `reloadConfig` applied since. */
  get config(): SiteConfig {
    return this.current;
  }

  /**
   * Reads config.json again and applies what a running site can change in place: the agent's
   * thresholds (`agent`, from its next run on; not `agent.ruleFiles`, whose rules are loaded at
   * start: named in `restartNeeded`), the retentions of the evidence tags made from now
   * on (`evidence`), the stream alarms (`alarms`) and the floor UI's sign-out (`ui`). Every other
   * section that changed is named in `restartNeeded` and keeps its running value until the next
   * start. A file that does not validate throws (ConfigError), changes nothing and is logged
   * (`config not reloaded: …`); so does a rule file the next start would refuse (loaded and checked
   * as the start does, as it is on disk now). What it applies is the file as it is when it applies:
   * one changed while its rule files were checked is read again (up to RELOAD_ROUNDS times).
   * `tilstand config reload` and SIGHUP call it.
   */
  async reloadConfig(): Promise<{ applied: string[]; restartNeeded: string[] }> {
    try {
      for (let round = 1; ; round++) {
        const next = readConfig(this.data);
        // A file the next start would refuse is said now, not found at that start.
        checkStartRules(next);
        // So is a rule file, edited or newly named: the running rules stay the ones loaded at start,
        // and a file that no longer loads would keep the next start (a reboot at night) from starting.
        // Imported at its hash (loadRuleFiles), so the check reads the file as it is now; a file
        // whose code did not change is checked on the module held since it was imported.
        const files = await loadSiteRuleFiles(next, this.data, this.ruleModules);
        // While the rule files loaded, config.json may have changed and a newer read been applied
        // (a reorder point set from the Stock screen, `setReorderPolicy`, or another reload that
        // finished first): applying this older read would put it back. Applied only when the file
        // still says it (read and applied with no await between), else read again.
        if (JSON.stringify(readConfig(this.data)) === JSON.stringify(next)) return this.applyConfig(next, files);
        if (round === RELOAD_ROUNDS) throw new ConfigError('(file)', `${dataPaths(this.data).config} changed while each of ${RELOAD_ROUNDS} reads of it was being checked; nothing applied: reload again once it is no longer being written`);
      }
    } catch (e) {
      // Said where a reload's success is said: SIGHUP (`systemctl reload`) tells its caller nothing.
      this.log(`config not reloaded: ${(e as Error).message}`);
      throw e;
    }
  }

  /**
   * Which of `sections` config.json now says otherwise than the running site (they take effect at
   * its next start); none when the file cannot be read (the failure is `config reload`'s to say).
   */
  private startPendingSections(sections: readonly (keyof SiteConfig)[]): string[] {
    let next: SiteConfig;
    try {
      next = readConfig(this.data);
    } catch {
      return [];
    }
    return sections.filter((k) => sectionChanged(next, this.current, k));
  }

  /**
   * `reloadConfig` of a config already read and validated (the one `setReorderPolicy` just wrote);
   * `files`, its rule files as loaded now, when they were (reloadConfig), to compare with the code
   * that runs.
   */
  private applyConfig(read: SiteConfig, files?: LoadedRuleFiles): { applied: string[]; restartNeeded: string[] } {
    const now = this.current;
    // `agent` is a live section but for its `ruleFiles`: a rule file is code, loaded and checked
    // at start, and the rules that run stay those until the next start. A changed list, or a file
    // whose code (its SHA-256, with its imports) is no longer what was loaded at start, is named
    // `agent.ruleFiles` among restartNeeded, and the section applied keeps the running list (what
    // `tilstand status` says runs).
    const codeOf = (f: LoadedRuleFiles) => JSON.stringify(f.files.map((x) => [x.path, x.sha256]));
    const ruleFilesChanged =
      JSON.stringify(read.agent.ruleFiles ?? []) !== JSON.stringify(now.agent.ruleFiles ?? []) || (files !== undefined && codeOf(files) !== codeOf(this.ruleFiles));
    const next: SiteConfig = { ...read, agent: withRuleFiles(read.agent, now.agent.ruleFiles) };
    const changed = (k: keyof SiteConfig) => sectionChanged(next, now, k);
    const live = LIVE_CONFIG_SECTIONS as readonly string[];
    const applied = LIVE_CONFIG_SECTIONS.filter(changed);
    const restartNeeded: string[] = (Object.keys(next) as (keyof SiteConfig)[]).filter((k) => !live.includes(k) && changed(k));
    if (ruleFilesChanged) restartNeeded.push('agent.ruleFiles');
    // The agent's tunables hold the evidence retentions of its runs' tags (config `evidence`); the
    // inbox holds the decisions'. Both apply to the tags made from now on.
    const options = decisionOptions(next);
    if (applied.includes('agent') || applied.includes('evidence')) this.decisionParts?.agent.reconfigure(options.agent);
    if (applied.includes('evidence')) this.decisionParts?.inbox.setDecisionEvidenceRetention(options.decisionEvidenceRetentionMs);
    if (applied.includes('agent')) this.recordAgentConfig(next);
    this.current = { ...now, agent: next.agent, evidence: next.evidence, alarms: next.alarms, deadLetters: next.deadLetters, ui: next.ui };
    this.log(
      `config reloaded: ${applied.length > 0 ? `applied ${applied.join(', ')}` : 'no change to apply'}` +
        (restartNeeded.length > 0 ? `; ${restartNeeded.join(', ')} changed, taking effect at the next start` : ''),
    );
    return { applied, restartNeeded };
  }

  /**
   * Whether config.json's `agent` section differs from the one the agent last ran with (site.db
   * `site_meta`), so its first run evaluates every row (Agent.reevaluateAll): a row already under
   * a raised reorder point would otherwise not be proposed. Unknown (a site from before this was
   * kept) counts as unchanged.
   */
  private agentConfigChanged(c: SiteConfig): boolean {
    const last = siteMeta(this.siteDb, 'agent_config');
    return last !== undefined && last !== JSON.stringify(c.agent);
  }

  private recordAgentConfig(c: SiteConfig): void {
    setSiteMeta(this.siteDb, 'agent_config', JSON.stringify(c.agent));
  }

  /** Stops everything; safe to call more than once (later calls wait for the first). */
  /** Stops everything that runs; `failedStart`: the error that ended the start, for the log's last line. */
  stop(failedStart?: unknown): Promise<void> {
    this.stopping ??= this.doStop(failedStart).finally(() => this.resolveStopped());
    return this.stopping;
  }

  private async doStop(failedStart?: unknown): Promise<void> {
    const step = async (what: string, f: () => unknown) => {
      try {
        await f();
      } catch (e) {
        this.log(`stop: ${what}: ${(e as Error).message}`);
      }
    };
    if (this.tickTimer) clearInterval(this.tickTimer);
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    if (this.restoreTimer) clearInterval(this.restoreTimer);
    if (this.resume?.timer) clearTimeout(this.resume.timer);
    // First the calls in flight (the site API's, the control socket's): they finish on an open
    // site.db and open tables, at most STOP_CALLS_WAIT_MS for both together; new ones are refused
    // ("the site is stopping") from here on.
    await step('calls in flight', async () => {
      const [, control] = await Promise.all([this.siteService?.stop(STOP_CALLS_WAIT_MS), this.control?.quiesce(STOP_CALLS_WAIT_MS)]);
      if (control) this.log(`stop: ${control === 1 ? '1 control request' : `${control} control requests`} still running after ${STOP_CALLS_WAIT_MS / 1000} s; the site stops without ${control === 1 ? 'it' : 'them'}`);
    });
    await step('sync', async () => {
      if (this.syncRetry) clearTimeout(this.syncRetry);
      await this.sync?.stop();
      await this.sync?.close();
    });
    await step('ui', () => this.ui?.close());
    await step('decisions', () => this.decisionParts?.close());
    await step('floor changes', () => this.markUncommitted(true));
    await step('demo modules', () => this.demo?.stop());
    // No notices through a client that is ending (the last commits below still make letters).
    this.ingest?.ingestor.setLetterListener(undefined);
    await step('internal client', () => this.internal?.endAsync(true));
    await step('broker', () => this.broker?.close());
    await step('mqtt source', () => this.source?.stop());
    // Let journal appends queued by the last packets commit before the ingestor closes.
    await new Promise<void>((r) => setImmediate(r));
    await step('control socket', () => this.control?.close());
    await step('http', () => this.http?.close());
    // A resume in place under way gives up at its next turn (`cancelled`); waited for, so its
    // tables are released before the stopped Ingestor closes and the journal with it.
    await step('ingest resume', () => this.resuming);
    await step('ingest commit', () => this.ingest?.ingestor.commitAll());
    await step('ingest close', () => this.ingest?.ingestor.close());
    await step('journal close', () => this.ingest?.journal.close());
    await step('site.db', () => this.siteDb.close());
    this.log(failedStart === undefined ? 'site stopped' : `site ${this.config.site} did not start: ${(failedStart as Error)?.message ?? String(failedStart)}`);
  }
}

/** How many times a reload reads config.json again when the file changed while a read of it was being checked (`Site.reloadConfig`). */
const RELOAD_ROUNDS = 5;

/** site.db `site_meta` key: the rule files the site last started with (`LoadedRuleFilesRecord`). */
export const LOADED_RULE_FILES_KEY = 'rule_files_loaded';

/**
 * What `LOADED_RULE_FILES_KEY` holds: when the site started, the time zone it runs in (its
 * process's: TZ, else the system's; absent in a record of an earlier version), and each rule
 * file's path and SHA-256 as loaded then.
 */
export interface LoadedRuleFilesRecord {
  startedAtMs: number;
  timeZone?: string;
  files: { path: string; sha256: string }[];
}

/**
 * Records the rule files the site runs from this start on, so `replay export` (which copies the
 * files as they are at the export) can say when one is not the code the site runs; and its time
 * zone, which the export records in the fixture (the table store's local times are the site's:
 * an export run from a shell in another zone recorded that one, and the replay ran in it).
 */
function recordLoadedRuleFiles(db: Database.Database, loaded: LoadedRuleFiles, nowMs: number): void {
  const record: LoadedRuleFilesRecord = {
    startedAtMs: nowMs,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    files: loaded.files.map((f) => ({ path: f.path, sha256: f.sha256 })),
  };
  setSiteMeta(db, LOADED_RULE_FILES_KEY, JSON.stringify(record));
}

/** Config `agent` with `ruleFiles` as given (left out when undefined), last as parseSiteAgent puts it. */
function withRuleFiles(a: SiteAgentConfig, ruleFiles: readonly string[] | undefined): SiteAgentConfig {
  const { ruleFiles: _, ...tunables } = a;
  return ruleFiles === undefined ? tunables : { ...tunables, ruleFiles };
}

/** Whether config.json section `k` says otherwise in `next` than in `now` (config reload, replay's note). */
function sectionChanged(next: SiteConfig, now: SiteConfig, k: keyof SiteConfig): boolean {
  return JSON.stringify(next[k]) !== JSON.stringify(now[k]);
}

/** A wait in words: `30 s`, `2 min`, `1 min 30 s`. */
function formatWait(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} min${s % 60 === 0 ? '' : ` ${s % 60} s`}`;
}
