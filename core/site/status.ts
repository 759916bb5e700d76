// What `tilstand status` shows, from a running site (Site.status, over the control socket) or,
// when no site runs, from the data directory alone (`statusFromDirectory`: the tables' latest
// snapshots, the journal beyond the ingest checkpoint, the open dead letters).
//
// Every value is plain JSON (bigints as decimal strings), so the same object crosses the socket.

import { existsSync } from 'node:fs';
import { Catalog, type Table } from '../lsm/index.ts';
import { DEAD_LETTERS_TABLE_NAME, openLetterGroups, type OpenLetterGroup } from '../ingest/dead-letters.ts';
import type { Binding } from '../ingest/binding.ts';
import { Journal } from '../ingest/journal.ts';
import { APPROVAL_INBOX_TABLE, DECISION_LOG_TABLE, readActiveCounts, type ActiveCounts } from '../inbox/index.ts';
import { formatDuration } from '../lsm/cli/output.ts';
import { resolveBudgets } from '../ingest/freshness.ts';
import { catalogOptions, configBindings, dataPaths, ingestBudgets, readConfig, siteTables, type SiteConfig } from './config.ts';
import { INGEST_CHECKPOINT } from './open-ingest.ts';
import { DEFAULT_HEALTH_WINDOW_MS, EMPTY_SYNC_STATUS, statusOf, syncProblemText, type SyncProblem, type SyncStatus as EngineSyncStatus } from '../sync/engine.ts';
import { existingOutbox, openOutboxDb } from '../sync/outbox.ts';
import { shownTarget, targetDescription } from '../sync/targets/open.ts';
import { shownDescription } from '../sync/targets/target.ts';
import { readRestoreNote, type RestoreNote } from '../sync/restore.ts';
import { damageIn } from '../sync/cli/common.ts';
import type { AgentRuleView, AgentStatus, RestoredFromTagView, StreamView, SyncDropped, SyncStatus } from './api.ts';

export interface TableState {
  table: string;
  budgetMs: number;
  decision: string;
  confirmedBy: string;
  /**
   * Age of the oldest event received and not yet visible — pending, held behind a gap, or not
   * applied since ingest stopped — (running), or null when unknown (not running).
   */
  ageMs: number | null;
  withinBudget: boolean | null;
  pendingEvents: number | null;
  lastCommitMs: number | null;
  snapshotId: number | null;
  /** Rows at the latest snapshot. */
  rows: number | null;
  breaches: number | null;
  /**
   * false: no binding of config.json writes to the table (`fedTables`): its age of 0 and "within
   * budget" would say nothing, so the human form says it has no source. Absent (an older site): fed.
   */
  fed?: boolean;
}

export interface SiteStatus {
  site: string;
  data: string;
  running: boolean;
  pid: number | null;
  startedAtMs: number | null;
  nowMs: number;
  broker:
    | { mode: 'embedded'; url: string | null; host: string; port: number | null; metrics: Record<string, number> | null }
    | { mode: 'external'; url: string; connected: boolean | null };
  http: { url: string | null };
  tables: TableState[];
  deadLettersOpen: number;
  journal: { lastPosition: string; committedPosition: string; uncommittedEvents: string; oldestUncommittedMs: number | null; bytesUsed: number };
  ingestFailure: string | null;
  /**
   * With ingest stopped on a running site: when it is tried again in place, or why it is not (a
   * damaged file); absent from an older site and when nothing is planned (Site.ingestResumeText).
   */
  ingestResume?: string;
  /**
   * The same plan as values (Site.ingestResumeState; /healthz has them too): tries made since the
   * stop, when the next runs, whether none will (a damaged file), and the last failure's kind.
   * Absent from an older site and while ingest runs.
   */
  ingestResumePlan?: IngestResumeState;
  diskFull: boolean | null;
  demo: { module: string; published: number; acked: number; failed: number; commands: number }[] | null;
  /**
   * Each stream's newest event since the site started and the silence its `stream_silent` alarm
   * allows (the app's view, core/site/service.ts), or null when the site is not running.
   */
  streams: StreamView[] | null;
  /** The alarms the app shows (core/site/service.ts), or null when the site is not running. */
  alarms: { kind: string; message: string; sinceMs: number }[] | null;
  /**
   * HQ sync as the UI's Sync screen shows it (`syncView`), from the running site or, when none
   * runs, from the outbox in site.db; null when the site has no HQ target. `problems` is absent
   * from an older running site's answer over the control socket.
   */
  sync: SyncStatus | null;
  /**
   * After `tilstand restore`: the streams (`module/stream`) not heard from since, which the site
   * asks to resend what came after the restored state; null without a restore note or once all
   * have delivered.
   */
  restoreWaiting: string[] | null;
  /**
   * After `tilstand restore --fall-back-to-tag`: the tables rolled back to an older tag because
   * HQ's latest snapshot of them was damaged, and what they lost, for RESTORED_FROM_TAG_SHOWN_MS
   * after the restore (the note keeps them for good). Absent when there are none, past that, and
   * from an older running site's answer.
   */
  restoredFromTag?: RestoredFromTagView[];
  /** Proposals waiting for a decision (the approval inbox); null on a site whose inbox has no table yet. */
  proposals: ActiveCounts | null;
  /**
   * A running site's HQ target as its sync engine compares targets (`targetDescription`:
   * `dir:<absolute path>` or `s3://bucket/prefix (endpoint)`), null when it syncs nowhere: what
   * `tilstand status` compares config.json's `hq.target` with. Absent from a stopped site's status
   * and from an older running site's answer.
   */
  syncDescription?: string | null;
  /**
   * Set by `tilstand status` on a running site's status (`withConfigSyncTarget`) when config.json
   * names another HQ target than the one the site syncs to — edited while it runs, or the site was
   * started with --hq: config.json's target as shown (`redactTarget`), which the next start without
   * --hq syncs to, or null when config.json names none (the site's target was given with --hq).
   * Absent when they are the same, or config.json could not be read. `sync.target` stays the
   * running site's.
   */
  configSyncTarget?: string | null;
  /**
   * Set by `tilstand status` (`withOpenLetterGroups`) when letters are open: they grouped by topic
   * and reason, the largest groups first, as dead_letters holds them committed (a running site's
   * newest letters may not be in it yet). Absent when none are open or the table was not read.
   */
  deadLettersOpenBy?: OpenLetterGroup[];
  /**
   * The rules a running site's agent runs, in its order, a rule from a rule file of the site's
   * own (config `agent.ruleFiles`) with the file's path and SHA-256: so an operator sees that a
   * floor PC runs a rule of its own. Absent from a stopped site's status (the files are loaded at
   * start) and from an older running site's answer.
   */
  agentRules?: AgentRuleView[];
  /**
   * A running site's agent as the app's status has it (core/site/service.ts): how often it looks,
   * whether its timers run, when its last run finished. Absent from a stopped site's status (no
   * agent runs) and from an older running site's answer.
   */
  agent?: AgentStatus;
}

/** What kind of error stopped ingest or failed a try to resume it (site.ts `ingestFailureKind`). */
export type IngestFailureKind = 'disk_full' | 'io' | 'damaged' | 'conflict' | 'other';

/** The resume in place of ingest that stopped, as values (site.ts `ingestResumeState`). */
export interface IngestResumeState {
  /** Tries made since ingest stopped (0 before the first). */
  tries: number;
  /** When the site tries next (ms since the epoch), or null when no try is planned (or one runs). */
  atMs: number | null;
  /** A try under way (its read of what was journaled meanwhile takes a while): since when; else null. */
  runningSinceMs: number | null;
  /** 'damaged': no try until the file is fixed and `tilstand ingest resume` (or a restart); else null. */
  stopped: 'damaged' | null;
  /** The kind of the last try's failure, or of the stop's before the first try. */
  lastFailureKind: IngestFailureKind;
}

const FAILURE_KIND_TEXT: Readonly<Record<IngestFailureKind, string>> = {
  disk_full: 'a full disk',
  io: 'a failing disk',
  damaged: 'a damaged file',
  conflict: 'a table another writer holds',
  other: 'an error that is no disk failure',
};

/** The plan's line under INGEST STOPPED. */
function resumePlanLine(p: IngestResumeState): string {
  const kind = `${Object.hasOwn(FAILURE_KIND_TEXT, p.lastFailureKind) ? FAILURE_KIND_TEXT[p.lastFailureKind] : p.lastFailureKind} (${p.lastFailureKind})`;
  // A try under way is counted in `tries`: the failures are the ones before it ("the next at" its
  // start, a time gone, read as a plan).
  if (typeof p.runningSinceMs === 'number') {
    const before = p.tries <= 1 ? `ingest stopped on ${kind}` : `the last failed on ${kind}`;
    return `  ingest resume: try ${p.tries} under way since ${new Date(p.runningSinceMs).toISOString()}, reading what was journaled meanwhile; ${before}`;
  }
  const tries = p.tries === 0 ? `no try yet, ingest stopped on ${kind}` : `${p.tries} ${p.tries === 1 ? 'try' : 'tries'} so far, the last failed on ${kind}`;
  const next =
    p.stopped === 'damaged'
      ? 'no next try: fix or restore the file, then `tilstand ingest resume`'
      : p.atMs === null
        ? 'no next try planned'
        : `the next at ${new Date(p.atMs).toISOString()}`;
  return `  ingest resume: ${tries}; ${next}`;
}

/** The restore note as the site keeps it: `tilstand restore`'s, plus what the site has asked and heard. */
export type RestoreNoteState = RestoreNote & { resyncSentAtMs?: number; resyncAnswered?: Record<string, number> };

export const resyncStreamKey = (r: { module: string; stream: string }): string => `${r.module}/${r.stream}`;

/** The note's resync requests whose streams have not delivered since the restore. */
export function unansweredResyncs(note: RestoreNoteState): RestoreNote['resync'] {
  return note.resync.filter((r) => note.resyncAnswered?.[resyncStreamKey(r)] === undefined);
}

/** `SiteStatus.restoreWaiting` of a data directory (its note, when read already). */
export function restoreWaiting(data: string, note = readRestoreNote(data) as RestoreNoteState | undefined): string[] | null {
  const waiting = note ? unansweredResyncs(note).map(resyncStreamKey) : [];
  return waiting.length > 0 ? waiting : null;
}

/**
 * How long after a restore `tilstand status` and the floor UI say which tables it took from an
 * older tag: a week, so the operators of every shift after the replacement see it (the restore's
 * own output reached only whoever ran it); restore-note.json keeps it for good.
 */
export const RESTORED_FROM_TAG_SHOWN_MS = 7 * 24 * 3_600_000;

/**
 * `SiteStatus.restoredFromTag` of a restore note at `nowMs`: empty without a note, without such
 * tables, or once RESTORED_FROM_TAG_SHOWN_MS have passed since the restore. A clock set back
 * before the restore still shows them. A note whose `restoredAtMs` is no number (edited by hand)
 * shows none: no week could pass, and `tilstand status` threw writing its time.
 */
export function restoredFromTagShown(note: RestoreNote | undefined, nowMs: number): RestoredFromTagView[] {
  if (!note || !Array.isArray(note.restoredFromTag) || !Number.isFinite(note.restoredAtMs) || nowMs - note.restoredAtMs >= RESTORED_FROM_TAG_SHOWN_MS) return [];
  return note.restoredFromTag.map((f) => ({
    table: f.table,
    tag: f.tag,
    snapshotId: f.snapshotId,
    committedMs: f.committedMs,
    damagedSnapshotId: f.damagedSnapshotId,
    damagedCommittedMs: f.damagedCommittedMs,
    lostMs: f.lostMs,
    error: f.error,
    restoredAtMs: note.restoredAtMs,
  }));
}

/** `tilstand status`'s line for a table restored from an older tag: what it lost, and why. */
export function restoredFromTagLine(f: RestoredFromTagView): string {
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  // As the restore's own output: the inbox's tables are the site's own writing, which no module resends.
  const lost =
    f.table === APPROVAL_INBOX_TABLE
      ? 'the proposals, decisions and command progress made then are lost, not resent'
      : f.table === DECISION_LOG_TABLE
        ? "the log's entries made then are lost, not resent"
        : `what ${f.table} committed then is lost, but for what its modules resent after the tag`;
  return `restored from an older tag: ${f.table}, from tag ${f.tag} (committed ${iso(f.committedMs)}) by the restore at ${iso(f.restoredAtMs)}, because HQ's latest snapshot ${f.damagedSnapshotId} of it was damaged: in the ${formatDuration(f.lostMs)} from the tag up to that snapshot (committed ${iso(f.damagedCommittedMs)}), ${lost}`;
}

/**
 * The site API's SyncStatus with why it is not healthy: core/sync's `problems`, most pressing
 * first (the first is the `sync_stalled` alarm's params.reason), empty when healthy or when an
 * older engine gave none. The UIs word each case from it; `lastError` is English. And the tags
 * dropped rather than sent in the last day (core/sync's `dropped`: table, tag, when, and why as a
 * kind the UIs word, with the engine's English `why`), empty when none or from an older engine.
 */
export type SyncView = SyncStatus & { problems: SyncProblem[]; dropped: SyncDropped[] };

/** A sync engine's status as the site shows it (the UI's Sync screen and header, `tilstand status`). */
export function syncView(target: string, windowMs: number, s: EngineSyncStatus): SyncView {
  return {
    configured: true,
    target,
    online: s.online,
    pendingItems: s.pendingItems,
    pendingBytes: s.pendingBytes,
    oldestUnsyncedMs: s.pendingItems > 0 ? s.oldestUnsyncedMs : null,
    lastSuccessMs: s.lastSuccessMs,
    current: s.current,
    recentItems: s.recentItems,
    recentBytes: s.recentBytes,
    windowMs,
    healthy: s.healthy,
    // Only while unhealthy: a site waiting for the sender lock reports the outbox's problems as
    // healthy (another process sends), and a view saying both would contradict itself.
    problems: s.healthy ? [] : [...(s.problems ?? [])],
    lastError: s.lastError,
    // Not a problem (nothing is owed to HQ for them), so shown healthy or not.
    dropped: (s.dropped ?? []).map((d) => ({ table: d.table, tag: d.tag, kind: d.kind, atMs: d.atMs, why: d.why })),
  };
}

/**
 * A target's text for logs, status and messages: as core/sync shows it (`shownTarget`: an s3://
 * URL without the endpoint's user info or any query secret, percent-encoded or not).
 */
export function redactTarget(text: string): string {
  return shownTarget(text);
}

/**
 * The sync state of a site that is not running: the target its outbox last sent to (core/sync
 * engine.ts, `sync_state` `target`) with the outbox's state, which is that target's, not
 * config.json's. A target given with `tilstand start --hq` (or `sync now --hq`) is not in
 * config.json, or another than the one config.json names: shown, saying which config.json names
 * (a start without --hq syncs there, and the engine then sends everything again). Without an
 * outbox that has sent, config.json's target.
 */
function syncFromDirectory(data: string, config: SiteConfig, nowMs: number): SyncView | null {
  const path = dataPaths(data).siteDb;
  const configured = config.hq.target;
  const view = (target: string, s: EngineSyncStatus) => syncView(target, DEFAULT_HEALTH_WINDOW_MS, s);
  if (!existsSync(path)) return configured ? view(redactTarget(configured), EMPTY_SYNC_STATUS) : null;
  // SQLite's words for a damaged site.db name no file: said as corruption in site.db (exit 4), as
  // `users list` and `modules list` say it.
  let db: ReturnType<typeof openOutboxDb>;
  try {
    db = openOutboxDb(path, true);
  } catch (e) {
    throw damageIn(path, e);
  }
  try {
    const outbox = existingOutbox(db);
    const kept = outbox?.getState('target');
    // As the engine compares it (an older version's S3 description kept the endpoint's user info).
    const last = kept === undefined ? undefined : shownDescription(kept);
    let target: string | undefined;
    if (last === undefined) target = configured ? redactTarget(configured) : undefined;
    else if (!configured) target = `${last} (given with --hq at the last start; not in config.json)`;
    else if (last === targetDescription(configured)) target = redactTarget(configured);
    else target = `${last} (where it last synced; config.json names ${redactTarget(configured)}, where a start without --hq syncs, sending everything again)`;
    if (target === undefined) return null;
    return view(target, outbox ? statusOf(outbox, nowMs, DEFAULT_HEALTH_WINDOW_MS) : EMPTY_SYNC_STATUS);
  } catch (e) {
    throw damageIn(path, e);
  } finally {
    db.close();
  }
}

/**
 * A running site's status with `configSyncTarget` set when `config` (config.json, read now) names
 * another HQ target than the one the site syncs to (compared as the engine compares them and as
 * `syncFromDirectory` does: `targetDescription`). The site read config.json when it started; an
 * `hq.target` edited since, or one overridden with --hq, applies at the next start only. A status
 * from a stopped site or an older one (no `syncDescription`), or without a config (config.json
 * could not be read), is returned as it is.
 */
export function withConfigSyncTarget(s: SiteStatus, config: SiteConfig | undefined): SiteStatus {
  if (!s.running || s.syncDescription === undefined || config === undefined) return s;
  const configured = config.hq.target;
  const running = s.syncDescription;
  if (configured === null) return running === null ? s : { ...s, configSyncTarget: null };
  if (running !== null && targetDescription(configured) === running) return s;
  return { ...s, configSyncTarget: redactTarget(configured) };
}

/**
 * A running site's status with `deadLettersOpenBy` set from `data`'s dead_letters table when
 * letters are open: which module sends what the site refuses, and why, on the status screen an
 * operator reads first (the count alone sent them to `deadletters list` to find out). Read by the
 * command, not by the running site (the floor UI's status is sent every second, and the heads of a
 * day's letters are hundreds of thousands); `statusFromDirectory` groups them as it counts them. A
 * directory that cannot be read leaves the status as it is.
 */
export function withOpenLetterGroups(s: SiteStatus, data: string, config: SiteConfig | undefined): SiteStatus {
  if (s.deadLettersOpen === 0 || config === undefined) return s;
  try {
    const p = dataPaths(data, config.site);
    const catalog = new Catalog(p.warehouse, catalogOptions(config));
    const id = { database: p.database!, table: DEAD_LETTERS_TABLE_NAME };
    if (!catalog.tableExists(id)) return s;
    const groups = openLetterGroups(catalog.getTable(id));
    return groups.length === 0 ? s : { ...s, deadLettersOpenBy: groups };
  } catch {
    return s;
  }
}

/** The open letters' groups `formatStatus` lists, the largest first; the rest are counted. */
const LETTER_GROUPS_SHOWN = 5;

/** The tables `bindings` write to, and dead_letters (every stream's refused events go there). */
export function fedTables(bindings: readonly Binding[]): Set<string> {
  const out = new Set<string>([DEAD_LETTERS_TABLE_NAME]);
  for (const b of bindings) out.add(b.table);
  return out;
}

/**
 * Counts a table's rows at its latest snapshot, remembering the count per snapshot: its id and its
 * delta manifest list, as core/lsm's `bucketIndex` keys what it keeps. The id alone is not the
 * content: another process that rolled the table back and committed again reached the same id
 * with other rows, and the count of the old snapshot was shown until the next commit.
 */
export class RowCounter {
  private readonly cache = new Map<string, { snapshotId: number; delta: string; rows: number }>();

  count(table: Table): { snapshotId: number | null; rows: number } {
    const s = table.latestSnapshot();
    if (!s) return { snapshotId: null, rows: 0 };
    const hit = this.cache.get(table.name);
    if (hit && hit.snapshotId === s.id && hit.delta === s.deltaManifestList) return { snapshotId: hit.snapshotId, rows: hit.rows };
    // The latest snapshot in today's columns (a count does not depend on them, and the runs read
    // are then those the table's other readers cache).
    const r = table.reader({ snapshotId: s.id, schemaId: table.schema.id });
    let rows = 0;
    try {
      for (const _ of r.scan()) rows++;
    } finally {
      r.close();
    }
    this.cache.set(table.name, { snapshotId: s.id, delta: s.deltaManifestList, rows });
    return { snapshotId: s.id, rows };
  }
}

export function journalState(journal: Journal): SiteStatus['journal'] {
  const last = journal.lastPosition();
  const committed = journal.getCheckpoint(INGEST_CHECKPOINT) ?? 0n;
  const first = journal.readAfter(committed, 1).next();
  return {
    lastPosition: last.toString(),
    committedPosition: committed.toString(),
    uncommittedEvents: (last > committed ? last - committed : 0n).toString(),
    oldestUncommittedMs: first.done ? null : first.value.receivedAtMs,
    bytesUsed: journal.bytesUsed(),
  };
}

/** Status of a site that is not running, read from its directory. */
export function statusFromDirectory(data: string, nowMs = Date.now()): SiteStatus {
  const config: SiteConfig = readConfig(data);
  const p = dataPaths(data, config.site);
  const catalog = new Catalog(p.warehouse, catalogOptions(config));
  const counter = new RowCounter();
  let deadLettersOpen = 0;
  let deadLettersOpenBy: OpenLetterGroup[] = [];
  // Ingest's tables: the inbox's age exists only while a site's agent checks it. Every one the
  // site's Ingestor keeps, with the budget it would keep (config.json's, else the default), as a
  // running site lists them: config `tables` may name only some, and the rest (dead_letters and
  // its open count among them) went missing here.
  const names = siteTables(config);
  const budgets = resolveBudgets(names, ingestBudgets(config));
  const fed = fedTables(configBindings(config));
  const tables: TableState[] = names.map((name) => {
    const b = budgets.get(name)!;
    const id = { database: p.database!, table: b.table };
    let snapshotId: number | null = null;
    let rows: number | null = null;
    let lastCommitMs: number | null = null;
    if (catalog.tableExists(id)) {
      const t = catalog.getTable(id);
      const c = counter.count(t);
      snapshotId = c.snapshotId;
      rows = c.rows;
      lastCommitMs = t.latestSnapshot()?.timeMillis ?? null;
      if (b.table === DEAD_LETTERS_TABLE_NAME) {
        // One pass over the letters' heads gives the count and the groups `formatStatus` lists.
        deadLettersOpenBy = openLetterGroups(t);
        for (const g of deadLettersOpenBy) deadLettersOpen += g.count;
      }
    }
    return { ...b, ageMs: null, withinBudget: null, pendingEvents: null, lastCommitMs, snapshotId, rows, breaches: null, fed: fed.has(b.table) };
  });
  let journal: SiteStatus['journal'] = { lastPosition: '0', committedPosition: '0', uncommittedEvents: '0', oldestUncommittedMs: null, bytesUsed: 0 };
  if (existsSync(p.journal)) {
    const j = Journal.open(data);
    try {
      journal = journalState(j);
    } finally {
      j.close();
    }
  }
  const b = config.broker;
  // Read once for both of its fields.
  const note = readRestoreNote(data) as RestoreNoteState | undefined;
  const restoredFromTag = restoredFromTagShown(note, nowMs);
  return {
    site: config.site,
    data,
    running: false,
    pid: null,
    startedAtMs: null,
    nowMs,
    broker: b.mode === 'embedded' ? { mode: 'embedded', url: null, host: b.host, port: null, metrics: null } : { mode: 'external', url: b.url, connected: null },
    http: { url: null },
    tables,
    deadLettersOpen,
    ...(deadLettersOpenBy.length > 0 ? { deadLettersOpenBy } : {}),
    journal,
    ingestFailure: null,
    diskFull: null,
    demo: null,
    streams: null,
    alarms: null,
    sync: syncFromDirectory(data, config, nowMs),
    restoreWaiting: restoreWaiting(data, note),
    ...(restoredFromTag.length > 0 ? { restoredFromTag } : {}),
    proposals: catalog.tableExists({ database: p.database!, table: APPROVAL_INBOX_TABLE }) ? readActiveCounts(catalog.getTable({ database: p.database!, table: APPROVAL_INBOX_TABLE })) : null,
  };
}

const secs = (ms: number | null): string => (ms === null ? '–' : ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`);

function pad(rows: string[][]): string[] {
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(w[i]!)).join('  ').trimEnd());
}

/** An interval in its largest whole unit ("1 min", "90 s"): config.json gives it in ms. */
const every = (ms: number): string => (ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`);

/**
 * The running agent as the empty inbox says it: how often it looks and when it last did, or that
 * it runs only when asked (a site started with --no-agent-timer).
 */
function agentLine(a: AgentStatus, nowMs: number): string {
  const last = a.lastRunMs === null ? null : `last at ${new Date(a.lastRunMs).toISOString().replace(/\.\d{3}Z$/, 'Z')}, ${secs(Math.max(0, nowMs - a.lastRunMs))} ago`;
  if (!a.timer) return `agent: does not run on its own (started with --no-agent-timer): only when asked (tilstand agent run)${last ? `; ${last}` : ''}`;
  return `agent: looks every ${every(a.intervalMs)}; ${last ?? 'no run has finished since the site started'}`;
}

/** The human form of a status. */
export function formatStatus(s: SiteStatus): string[] {
  const lines: string[] = [];
  if (s.running) lines.push(`site ${s.site} — running (pid ${s.pid}, up ${secs(s.nowMs - (s.startedAtMs ?? s.nowMs))}), data ${s.data}`);
  else lines.push(`site ${s.site} — not running (read from ${s.data})`);
  const b = s.broker;
  if (b.mode === 'embedded') {
    lines.push(`broker  embedded ${b.url ?? `${b.host} (not listening)`}${b.metrics ? `  connections accepted ${b.metrics.connectionsAccepted}, events acked ${b.metrics.eventsAcked}, auth failures ${b.metrics.authFailures}, publishes refused ${b.metrics.publishRefused}, held ${b.metrics.heldNow}` : ''}`);
  } else {
    lines.push(`broker  external ${b.url}${b.connected === null ? '' : b.connected ? '  connected' : '  NOT connected'}`);
  }
  if (s.http.url) lines.push(`http    ${s.http.url}  (/metrics, /healthz)`);
  lines.push('');
  const rows: string[][] = [['table', 'rows', 'freshness', 'budget', 'pending', 'last commit', 'state']];
  for (const t of s.tables) {
    // A table no binding feeds is 0 ms behind forever: said as what it is, not as current.
    const unfed = t.fed === false;
    const state = unfed ? 'no binding feeds it' : t.withinBudget === null ? '–' : t.withinBudget ? 'within budget' : 'OVER BUDGET';
    const lastCommit = t.lastCommitMs === null ? 'never' : `${secs(Math.max(0, s.nowMs - t.lastCommitMs))} ago`;
    const freshness = unfed ? 'no source' : t.ageMs === null ? '–' : `${secs(t.ageMs)} behind`;
    rows.push([t.table, t.rows === null ? '–' : String(t.rows), freshness, secs(t.budgetMs), t.pendingEvents === null ? '–' : String(t.pendingEvents), lastCommit, state]);
  }
  lines.push(...pad(rows));
  lines.push('');
  if (s.proposals) {
    const q = s.proposals;
    const oldest = q.oldestOpenMs === null ? '' : ` (the oldest waits ${secs(Math.max(0, s.nowMs - q.oldestOpenMs))})`;
    // `tilstand proposals` alone lists the open and the deferred ones first; `--status open` hid the deferred.
    lines.push(`proposals: ${q.open} open${oldest}, ${q.deferred} deferred${q.open + q.deferred > 0 ? ' (tilstand proposals)' : ''}`);
  }
  lines.push(`dead letters: ${s.deadLettersOpen} open${s.deadLettersOpen > 0 ? ' (tilstand deadletters list)' : ''}`);
  const groups = s.deadLettersOpenBy ?? [];
  for (const g of groups.slice(0, LETTER_GROUPS_SHOWN)) lines.push(`  ${g.count} ${g.reason} from ${g.topic}`);
  if (groups.length > LETTER_GROUPS_SHOWN) {
    const rest = groups.slice(LETTER_GROUPS_SHOWN);
    lines.push(`  and ${rest.reduce((n, g) => n + g.count, 0)} more from ${rest.length} other topic${rest.length === 1 ? '' : 's'} or reason${rest.length === 1 ? '' : 's'}`);
  }
  const j = s.journal;
  // The checkpoint is the lowest position every table has recorded (an idle table records its
  // progress every few minutes): what a restart re-reads, not what is missing from the tables —
  // that is each table's pending count above.
  lines.push(`journal: position ${j.lastPosition}, every table committed through ${j.committedPosition} (a restart re-reads the ${j.uncommittedEvents} after it; not yet visible: the tables' pending), ${(j.bytesUsed / 1024 / 1024).toFixed(1)} MiB`);
  if (s.ingestFailure) lines.push(`INGEST STOPPED: ${s.ingestFailure} (${s.ingestResume ?? 'restart the site to recover'})`);
  if (s.ingestFailure && s.ingestResumePlan) lines.push(resumePlanLine(s.ingestResumePlan));
  if (s.diskFull) lines.push('DISK BUDGET FULL: events are not being acknowledged');
  if (s.demo) lines.push(`demo modules: ${s.demo.map((d) => `${d.module} ${d.acked}/${d.published} acked`).join(', ')}`);
  const y = s.sync;
  // config.json's hq.target where the running site syncs elsewhere (`withConfigSyncTarget`).
  const other = s.configSyncTarget;
  if (!y && typeof other === 'string') lines.push(`sync: no HQ target in this run (config.json names ${other}, used from the next start)`);
  else if (!y) lines.push('sync: no HQ target (config hq.target; docs/operations.md, "Connecting to headquarters")');
  else {
    const target =
      other === undefined ? y.target : other === null ? `${y.target} (given with --hq; not in config.json)` : `${y.target} (config.json names ${other}, used from the next start without --hq, sending everything again)`;
    const waited = y.oldestUnsyncedMs === null ? '' : ` (the oldest waited ${secs(y.oldestUnsyncedMs)})`;
    const last = y.lastSuccessMs === null ? 'never' : `${secs(Math.max(0, s.nowMs - y.lastSuccessMs))} ago`;
    // Why, in words: "STALLED" beside "online" read as a line problem to whoever HQ refused.
    const why = y.problems && y.problems.length > 0 ? ` (${y.problems.map((p) => syncProblemText(p)).join('; ')})` : '';
    lines.push(`sync: to ${target}, ${y.online ? 'online' : 'OFFLINE'}${y.healthy ? '' : `, STALLED${why}`}, ${y.pendingItems} step${y.pendingItems === 1 ? '' : 's'} pending${waited}, last success ${last}${y.lastError ? `; last error: ${y.lastError}` : ''}`);
    // Tags dropped rather than sent (the last day): an analyst at HQ looks for them in vain.
    for (const d of y.dropped ?? []) lines.push(`  ${d.why} (at ${new Date(d.atMs).toISOString()})`);
  }
  // Tables a restore took from an older tag: what they lost (the week after the restore).
  for (const f of s.restoredFromTag ?? []) lines.push(restoredFromTagLine(f));
  if (s.restoreWaiting) {
    lines.push(`restore: not heard from since the restore: ${s.restoreWaiting.join(', ')} (${s.running ? 'asked every 30 s to resend what came after the restored state' : 'the site asks them once it runs'}; a module needs its new broker password to connect)`);
  }
  if (s.streams && s.streams.length > 0) {
    lines.push('');
    const rows: string[][] = [['stream', 'last event', 'seq', 'applied', 'alarm after']];
    for (const st of s.streams) {
      const last = st.lastEventMs === null ? 'none since start' : `${secs(Math.max(0, s.nowMs - st.lastEventMs))} ago`;
      rows.push([st.stream, last, st.lastSeq === null ? '–' : String(st.lastSeq), String(st.appliedSeq), st.silentAllowedMs === 0 ? 'never' : `${secs(st.silentAllowedMs)} silent`]);
    }
    lines.push(...pad(rows));
    // Events held behind a gap are neither applied nor lost: say what is missing and what happens next.
    for (const st of s.streams) {
      const g = st.gap;
      if (!g) continue;
      const missing = g.from === g.to ? `seq ${g.from}` : `seqs ${g.from}..${g.to}`;
      const skip = g.skipAtMs === null ? 'waiting until they come' : `skipped in ${secs(Math.max(0, g.skipAtMs - s.nowMs))} if they do not come (later events of a row repair it)`;
      lines.push(`  ${st.stream}: later events wait for ${missing}, missing for ${secs(Math.max(0, s.nowMs - g.sinceMs))}: asked for again from ${st.stream.split('/')[0]}; ${skip}`);
    }
  }
  if (s.agent) lines.push(agentLine(s.agent, s.nowMs));
  const own = (s.agentRules ?? []).filter((r) => r.file !== undefined);
  if (s.agentRules) {
    lines.push(`agent: ${s.agentRules.length} rule${s.agentRules.length === 1 ? '' : 's'}, ${own.length === 0 ? 'all installed' : `${own.length} from rule files of this site's own (config agent.ruleFiles)`}`);
    // The SHA-256 names the file with the files it imports (core/agents ruleFileHash): name those too.
  for (const r of own) lines.push(`  rule ${r.id}@${r.version} from ${r.file!.path} (sha256 ${r.file!.sha256.slice(0, 12)}…${r.file!.imports?.length ? `; with ${r.file!.imports.map((i) => i.path).join(', ')}` : ''})`);
  }
  if (s.alarms) {
    lines.push('');
    if (s.alarms.length === 0) lines.push('alarms: none');
    for (const a of s.alarms) lines.push(`ALARM ${a.kind} (for ${secs(Math.max(0, s.nowMs - a.sinceMs))}): ${a.message}`);
  }
  return lines;
}
