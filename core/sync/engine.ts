// SyncEngine: ships a site's tables to HQ through the outbox (outbox.ts), offline-first.
//
//   enqueueSnapshotSync()  plans: hourly tags due now; per table every tag HQ lacks and the latest
//                          snapshot if HQ has an older one; the contracts that changed. Each is a
//                          unit of steps in phase order (plan.ts). Files HQ already has (the
//                          record of verified files, `sync_at_hq`) are left out. Now and then it
//                          forgets finished units (`outboxKeepMs`); a run tag the site expired
//                          leaves a step that removes it at HQ (`hqDropsExpiredTags`).
//   runOnce()              runs due steps until none is due: priority first (approval_inbox and
//                          decision_log before everything else), then age; a step waits until every
//                          lower phase of its unit is done, so a snapshot/tag JSON is never sent
//                          before its files are at HQ and verified. A failed step is retried later
//                          with exponential backoff and jitter; other units go on meanwhile.
//   start(ms) / stop()     the loop; status() the health: progress, not "connected".
//   syncNow()              plans and runs until nothing is pending (bounded rounds), queued
//                          behind the loop's tick in flight: `tilstand sync now` on a running
//                          site (control op `sync.now`) and on a stopped one.
//
// One sender per data directory: the engine holds `<data>/sync.lock` (core/lsm/writer-lock.ts:
// pid, host, token; a dead owner's lock is taken over) from construction to close(). A second
// engine on the same directory — `tilstand sync now` while the site syncs, two `sync now` at
// once — fails with Conflict instead of sending the same steps twice and writing HQ's pointers
// out of order. In one process, the loop and syncNow() take turns (`exclusive`).
//
// One sender per site at HQ: `site_<id>.db/.tilstand/sender.json` names the data directory that
// sends (sender.ts). Read at each planning, before a round's first step and before each pointer,
// prune and remove; another sender's id stops the engine (Conflict: nothing written or removed,
// status unhealthy, lastError names the owner) until a take-over. So does no marker where this
// outbox had one (a share not mounted, HQ's copy deleted) until it is back or taken over — and a
// take-over onto a folder target that fell back onto the data directory's file system is refused
// too (sender.ts `ontoOwnDisk`), unless `hqOnThisDisk`.
//
// HQ's data format mark: with `dataFormat` (the site's DATA_FORMAT / DATA_FORMAT_REQUIRES, passed in),
// `site_<id>.db/.tilstand/data-format.json` is read once per engine and raised when this program's
// numbers are higher, after the first sender check and before the first step (hq-data-format.ts):
// `tilstand restore` of an older program refuses what it would misread.
//
// Snapshot hold: while a table's snapshot N is being shipped, tag `sync-N` on the site table keeps
// its files from expiring (a tag pins exactly that snapshot's files; a consumer would pin N and
// every later snapshot). The last step of the unit deletes the tag. Hold tags are never shipped;
// one whose unit is no longer pending (crash, superseded) is deleted at the next plan.

import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, readFileSync, statSync, type ReadStream } from 'node:fs';
import { join, sep } from 'node:path';
import { pipeline } from 'node:stream';
import type Database from 'better-sqlite3';
import { Catalog, KeptTables, LsmError, type Snapshot, type Table, type TableOpenOptions } from '../lsm/index.ts';
import { snapshotFromJson, snapshotToJson, tagFromJson, type Tag } from '../lsm/snapshot.ts';
import { WriterLock } from '../lsm/writer-lock.ts';
import { ACCESS_DENIED, accessDeniedMessage, WatchedTarget } from './access.ts';
import { isSyncError, SyncError } from './errors.ts';
import { checkKey, contractsPrefix, holdTagName, isHoldTag, siteDatabase, tablePrefix } from './names.ts';
import { ensureOutboxSchema, openOutboxDb, Outbox, type DroppedUnit, type NewRow, type OutboxRow } from './outbox.ts';
import { raisedHqDataFormat, readHqDataFormat, writeHqDataFormat, type HqDataFormat, type ProgramDataFormat } from './hq-data-format.ts';
import { claimMarker, conflictMessage, fileSystemOf, goneMessage, HQ_FILE_SYSTEM, localSender, MARKER_SINCE, MARKER_UNCONFIRMED, markerDir, markerHeldSince, noteHqFileSystem, ontoOwnDisk, readMarker, SENDER_CONFLICT, type FileSystemOf, type SenderMarker } from './sender.ts';
import { PHASE, referencedFiles } from './plan.ts';
import { createScheduledTags, DEFAULT_SCHEDULED_TAGS, type ScheduledTagRule } from './scheduled-tags.ts';
import { shownDescription, type ObjectInfo, type SyncTarget } from './targets/target.ts';
import { MeteredStream, TokenBucket } from './throttle.ts';

export interface RetryOptions {
  /** First retry delay (default 1 s). */
  baseMs?: number;
  /** Largest delay (default 5 min). */
  maxMs?: number;
  /** Fraction of the delay drawn at random, 0..1 (default 0.5): delay × (1 − jitter × U[0,1)). */
  jitter?: number;
}

export interface SyncEngineOptions {
  /** The site's data directory (`warehouse/`, `site.db`, `contracts/`). */
  dataDir: string;
  site: string;
  target: SyncTarget;
  /** An open site.db connection; default: the engine opens `<data>/site.db` itself. */
  db?: Database.Database;
  retry?: RetryOptions;
  /** Optional bandwidth cap in bytes per second. */
  bandwidthBytesPerSecond?: number;
  /** Tables whose units go first (default approval_inbox, decision_log). */
  priorityTables?: readonly string[];
  /** Hourly tags; null turns them off. Default: every table, 7 days site-side retention. */
  scheduledTags?: ScheduledTagRule | null;
  /**
   * Tags whose names start with one of these leave HQ once the site has expired them (a `remove`
   * step, planned when the outbox forgets the tag's unit). Default `['agent-']`: the agent's run
   * tags, three a minute on a site whose agent runs every minute — evidence while proposals wait,
   * kept on the site as long as they are cited and then by each decision's own tag. Every other
   * tag (hourly, decision, replay) stays at HQ for good. `[]` keeps every tag at HQ.
   */
  hqDropsExpiredTags?: readonly string[];
  /** Window of the progress-based health (default 15 min). */
  healthWindowMs?: number;
  /**
   * How long finished tag and snapshot units stay whole in the outbox before planning forgets
   * them (`Outbox.compact`; default 1 h, at least the health window). Checked every tenth of it.
   */
  outboxKeepMs?: number;
  /** How many entries of the record of what HQ holds are checked against the site's files per planning round (default 5,000). */
  atHqCheckedPerRound?: number;
  /**
   * How the engine opens the site's warehouse: the site passes its own catalog's options
   * (`cacheBudget`, `writeBufferBytes`), so the engine's reads draw on the site's run-cache
   * budget instead of a library-default budget of their own. Default: the library's defaults.
   */
  catalog?: TableOpenOptions;
  /**
   * Write HQ's sender marker with this data directory's id at the first planning, whoever it names
   * (`tilstand sync now --take-over`): this directory becomes the site's sender, and the one the
   * marker named stops at its next check (sender.ts).
   */
  takeOver?: boolean;
  /**
   * With `takeOver`: HQ's folder is on this PC's own disk on purpose (`--hq-on-this-disk`). Without
   * it, a take-over while the marker is gone is refused when the folder was on another file system
   * than the data directory when the marker was last seen there and is on the data directory's now
   * (sender.ts `ontoOwnDisk`: the share not mounted).
   */
  hqOnThisDisk?: boolean;
  /** How a path's file system is found (sender.ts `fileSystemOf`, stat's dev); tests stand in for a mount. */
  fileSystemOf?: FileSystemOf;
  /**
   * The site program's data format (core/site data-format.ts: DATA_FORMAT, DATA_FORMAT_REQUIRES and
   * its version), which core/sync may not import. Given, HQ's data format mark
   * (`site_<id>.db/.tilstand/data-format.json`) is read once per engine and raised to it before the
   * first step (hq-data-format.ts); `tilstand restore` reads it first. Absent: no mark is written.
   */
  dataFormat?: ProgramDataFormat;
  clock?: () => number;
  random?: () => number;
  log?: (line: string) => void;
}

export interface SyncStatus {
  /** The last request to HQ succeeded (informational; health is `healthy`). */
  online: boolean;
  pendingItems: number;
  pendingBytes: number;
  /** How long HQ has been behind, ms: the oldest pending step's wait (a superseded unit's carried over); 0 when nothing is pending. */
  oldestUnsyncedMs: number;
  lastSuccessMs: number | null;
  current: { file: string; bytes: number; total: number } | null;
  /** Steps and bytes finished within the health window. */
  recentItems: number;
  recentBytes: number;
  /**
   * Nothing pending, or progress within the health window, and none of `problems`.
   */
  healthy: boolean;
  /**
   * Why `healthy` is false, the most pressing first (empty or absent when healthy; absent from an
   * older engine's answer): `refused` — HQ's sender marker names another data directory;
   * `gone` — HQ no longer holds the marker this directory had there (a share not mounted, HQ's
   * copy deleted; at once, nothing is sent, `lastError` says what to do);
   * `credentials` — HQ refuses this site's credentials (S3 403/401: a key wrong, expired or
   * revoked, a policy without the request; a directory HQ whose folder the site's user may not
   * write; at once, `lastError` says what was refused); `step` —
   * one step has failed for a whole window while HQ answered others; `waiting` — steps waited a
   * whole window and nothing reached HQ; `planning` — a table or contract file was left out of
   * planning for a whole window. For the UIs, which word each case (`lastError` is English).
   */
  problems?: SyncProblem[];
  lastError: string | null;
  /**
   * Units dropped rather than sent in the last day (DROPPED_SHOWN_MS), oldest first: a tag deleted
   * on the site (by an operator, by its retention) while its upload waited. No problem for health:
   * nothing is owed to HQ for it. Absent from an older engine's answer.
   */
  dropped?: DroppedTag[];
}

/**
 * A unit dropped as `SyncStatus.dropped` gives it: the outbox's record (`why` in English, for
 * `sync status`) and what it was as values, for the UIs to word (core/site's SyncView, the floor
 * UI's Sync screen): the table and tag of its unit (`tag:<table>:<tag>`) and `kind` — `deleted`:
 * the tag was deleted on the site (by an operator, by its retention, with its table) before it
 * reached HQ, the one kind there is (`dropDeletedTag`).
 */
export interface DroppedTag extends DroppedUnit {
  table: string;
  tag: string;
  kind: DropKind;
}

export type DropKind = 'deleted';

/** How long `sync status` shows a unit dropped (`SyncStatus.dropped`). */
export const DROPPED_SHOWN_MS = 24 * 3_600_000;

export type SyncProblem = 'refused' | 'gone' | 'credentials' | 'step' | 'waiting' | 'planning';

/**
 * Each problem in words for the person at the PC: one table for `tilstand sync status` and
 * `tilstand status` (core/site), so both say the same. The UIs have their own translated words.
 */
export const SYNC_PROBLEM_TEXT: Readonly<Record<SyncProblem, string>> = Object.freeze({
  refused: 'HQ refuses this PC: another PC sends for this site, docs/operations.md "Two PCs for one site"',
  gone: "HQ no longer holds this site's sender marker: is HQ's share mounted, or was HQ's copy deleted? Nothing is sent until it is back; `tilstand sync now --take-over` sends everything again if it was removed on purpose (docs/operations.md \"HQ's folder is empty\")",
  credentials: "HQ refuses this site's credentials: check its access key and HQ's policy for the site, or, for a directory HQ, that the site's user may write its folder (the last error says what was refused)",
  step: 'a step has failed for the whole health window while HQ took other requests',
  waiting: 'nothing reached HQ within the health window',
  planning: 'a table or contract file has been left out of sending for the whole health window',
});

/** A problem's words; one this version does not know (a newer engine's) as it came. */
export function syncProblemText(p: string): string {
  return Object.hasOwn(SYNC_PROBLEM_TEXT, p) ? SYNC_PROBLEM_TEXT[p as SyncProblem] : p;
}

export interface PlanResult {
  units: string[];
  items: number;
  bytes: number;
  tagsCreated: string[];
}

export interface RunResult {
  done: number;
  failed: number;
  sentBytes: number;
  skipped: number;
  /** HQ's sender marker names another data directory: nothing was run (status().lastError says which). */
  refused?: boolean;
  /** The round ended to plan again: the prefix was taken over for this directory from outside (`forgetHq`). */
  replan?: boolean;
}

/** What syncNow() did: its plan, the bytes it sent, and the status after. */
export interface SyncNowResult {
  plan: PlanResult;
  sentBytes: number;
  rounds: number;
  status: SyncStatus;
}

/** The sender lock's file in a data directory. */
export const SYNC_LOCK_FILE = 'sync.lock';
/** Sync is healthy while nothing is pending or a step finished within this window (`healthWindowMs`). */
export const DEFAULT_HEALTH_WINDOW_MS = 15 * 60_000;
export const DEFAULT_OUTBOX_KEEP_MS = 3_600_000;
const DEFAULT_AT_HQ_CHECKED_PER_ROUND = 5_000;
/** Unsettled tags of a table that planning asks the outbox about one by one; more: one query for all of the table's. */
const UNIT_QUERIES_PER_TABLE_MAX = 32;

const DEFAULT_PRIORITY_TABLES = ['approval_inbox', 'decision_log'];
/** The agent's run tags (`agent-<run id>`, ../shared/DESIGN.md "Tags"). */
const DEFAULT_HQ_DROPS_EXPIRED_TAGS: readonly string[] = ['agent-'];
const PRIORITY = { first: 0, contracts: 1, bulk: 2 } as const;

interface Hashes {
  sha256: string;
  md5: string;
  size: number;
}

async function hashFile(path: string): Promise<Hashes> {
  const sha = createHash('sha256');
  const md5 = createHash('md5');
  let size = 0;
  for await (const chunk of createReadStream(path)) {
    sha.update(chunk as Buffer);
    md5.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: sha.digest('hex'), md5: md5.digest('hex'), size };
}

const hashBytes = (b: Uint8Array): Hashes => ({
  sha256: createHash('sha256').update(b).digest('hex'),
  md5: createHash('md5').update(b).digest('hex'),
  size: b.length,
});

/** True when the object at HQ holds exactly these bytes (size and every digest the target reports). */
function matches(info: ObjectInfo | undefined, h: Hashes): boolean {
  if (!info || info.size !== h.size) return false;
  if (info.sha256 === undefined && info.md5 === undefined) return false;
  if (info.sha256 !== undefined && info.sha256 !== h.sha256) return false;
  if (info.md5 !== undefined && info.md5 !== h.md5) return false;
  return true;
}

const errorText = (e: unknown): string => (e instanceof Error ? `${e.name === 'Error' ? '' : `${e.name}: `}${e.message}` : String(e));

export class SyncEngine {
  readonly outbox: Outbox;
  private readonly ownsDb: boolean;
  private readonly clock: () => number;
  private readonly random: () => number;
  private readonly bucket: TokenBucket | undefined;
  private readonly priorityTables: ReadonlySet<string>;
  private readonly log: (line: string) => void;
  /**
   * The log line saying the outbox was last used with another target and starts again for this
   * one, or undefined: `tilstand sync now` prints it (it runs without the site's log).
   */
  readonly targetChanged: string | undefined;
  private current: SyncStatus['current'] = null;
  private online = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = true;
  /** Set by stop(): runOnce ends after the step in flight. */
  private halt = false;
  /** When planning last compacted the outbox (this process). */
  private compactedAtMs = -Infinity;
  /**
   * Per table, per tag unit: the creation time and retention of the tag JSON HQ got or is getting
   * (`tagStamp`), read from the outbox's pointer rows once per table, then kept up by planning.
   */
  private readonly tagStamps = new Map<string, Map<string, string>>();
  /**
   * Per table, per tag unit an earlier round found done: the stamp (`tagStamp`) its tag had then.
   * Planning takes a listed tag whose unit is here with the same stamp as settled, and asks the
   * outbox only about the others: a site holds thousands of tags per table, and a round brings one
   * or two new ones (the agent's run tag). Done is final for a unit while its tag is listed
   * (compaction deletes a unit only once its tag is gone; only this engine writes the outbox while
   * it holds the lock), and a renewed tag has a new stamp.
   */
  private readonly settledTags = new Map<string, Map<string, string>>();
  /** The site's tables as the last round opened them (`openTables`). */
  private tables = new Map<string, Table>();
  /** The Table objects `openTables` keeps from round to round (core/lsm KeptTables). */
  private kept: KeptTables | undefined;
  /** Contract keys the target refused when sent (`planContracts` leaves them out), with its error. */
  private readonly refusedKeys = new Map<string, string>();
  /** Where the walk through the record of what HQ holds goes on (`pruneAtHq`); '' = from its start. */
  private atHqCursor = '';

  /** This data directory's sender id (sender.ts), the one HQ's marker must name. */
  readonly sender: string;
  /** `takeOver` not yet done. */
  private takeOverPending: boolean;
  /** The last check found HQ's marker naming another sender (cleared by a check that finds ours). */
  private refused = false;
  /**
   * HQ's data format mark was read (and raised where it said less) since this engine started or
   * the prefix last became this sender's again (`markDataFormat`).
   */
  private formatMarked = false;
  /** What the outbox knew HQ holds was dropped (`forgetHq`): plan again before running. */
  private replan = false;
  /**
   * Steps that failed and are still pending, by outbox id: HQ's answers counted at the step's last
   * failure, and since when it has failed while HQ answered other requests (`noteStepFailure`).
   */
  private readonly failingSteps = new Map<number, { answersAtLastFailure: number; aloneSinceMs: number | undefined }>();
  /** Requests HQ answered in this process (`noteSuccess`). */
  private hqAnswers = 0;
  /** The step `sync_state` `stuckStep` names: the one failing longest while HQ answers. */
  private stuck: StuckStep | undefined;

  /** `o.target`, noting what HQ says of this site's credentials (access.ts). */
  private readonly target: WatchedTarget;
  /** Held from construction to close(): one sender per data directory. */
  private readonly lock: WriterLock;
  /** The loop's ticks and syncNow() run one at a time, in call order. */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(readonly o: SyncEngineOptions) {
    this.lock = WriterLock.acquire(
      join(o.dataDir, SYNC_LOCK_FILE),
      `the HQ sync outbox of ${o.dataDir}`,
      'one sender per data directory (`tilstand sync now` asks a running site to sync)',
    );
    this.ownsDb = o.db === undefined;
    try {
      this.outbox = new Outbox(o.db ?? openOutboxDb(join(o.dataDir, 'site.db')));
      if (!this.ownsDb) ensureOutboxSchema(this.outbox.db);
    } catch (e) {
      this.lock.release();
      throw e;
    }
    this.clock = o.clock ?? Date.now;
    this.random = o.random ?? Math.random;
    this.bucket = o.bandwidthBytesPerSecond ? new TokenBucket(o.bandwidthBytesPerSecond) : undefined;
    this.priorityTables = new Set(o.priorityTables ?? DEFAULT_PRIORITY_TABLES);
    this.log = o.log ?? (() => {});
    // The outbox knows what one target holds: for another, it starts again (sync_at_hq, units).
    const kept = this.outbox.getState('target');
    // An S3 description an older version kept with the endpoint's user info is the same target:
    // compared as this version writes it (resending everything would not be what changed).
    const was = kept === undefined ? undefined : shownDescription(kept);
    if (was !== undefined && was !== o.target.description) {
      const n = this.outbox.forgetTarget();
      // The old target's sender marker, and a refusal by it, say nothing of the new one.
      this.outbox.setState(SENDER_CONFLICT, null);
      this.outbox.setState(MARKER_SINCE, null);
      this.outbox.setState(MARKER_UNCONFIRMED, null);
      this.outbox.setState(HQ_FILE_SYSTEM, null);
      this.outbox.setState(ACCESS_DENIED, null);
      this.targetChanged = `sync: the target changed from ${was} to ${o.target.description}: ${counted(n, 'step')} of the old one dropped; everything is sent again`;
      this.log(this.targetChanged);
    }
    if (kept !== o.target.description) this.outbox.setState('target', o.target.description);
    this.target = new WatchedTarget(o.target, this.outbox, this.clock, this.log);
    // The old target's failing step is gone with its steps.
    if (was !== undefined && was !== o.target.description) this.outbox.setState(STUCK_STEP, null);
    // A step failing for good is still failing after a restart: its count goes on from the outbox.
    this.stuck = storedStuckStep(this.outbox);
    if (this.stuck) this.failingSteps.set(this.stuck.id, { answersAtLastFailure: 0, aloneSinceMs: this.stuck.sinceMs });
    this.sender = localSender(this.outbox, o.dataDir, this.log);
    this.takeOverPending = o.takeOver === true;
    this.refused = this.outbox.getState(SENDER_CONFLICT) !== undefined;
    this.online = statusOf(this.outbox, this.clock(), 0).online;
  }

  private get warehouse(): string {
    return join(this.o.dataDir, 'warehouse');
  }

  /**
   * The site's tables, opened once and kept from round to round while their schema stays the same:
   * a table's tags are read through its cache (core/lsm tags.ts), and a table opened afresh each
   * round read every tag file again — thousands per table on a site with a week of run tags, a
   * fifth of a second per round per 3,000 tags, on the event loop. A table whose latest schema
   * changed (the site altered it) is opened again; one another process wrote while no writer of
   * this process held it has its snapshot cache dropped (core/lsm KeptTables, as the site API's);
   * one no longer listed (dropped) is forgotten (`KeptTables.retain`).
   */
  openTables(): Map<string, Table> {
    // The engine's clock unless the catalog options give one: the hourly tags it names by its clock
    // were stamped (their retention counted) by the tables' own, Date.now.
    const catalog = new Catalog(this.warehouse, { ...(this.o.clock ? { clock: this.o.clock } : {}), ...this.o.catalog });
    const db = siteDatabase(this.o.site);
    const out = new Map<string, Table>();
    if (catalog.databaseExists(db)) {
      this.kept ??= new KeptTables(catalog, db);
      const names = catalog.listTables(db);
      // A table dropped since the last round is not asked for again: forgotten here, or its Table
      // (its parsed tags, its cached manifests) stayed kept for the engine's life.
      this.kept.retain(names);
      for (const t of names) {
        const table = this.kept.get(t);
        if (table !== undefined) out.set(t, table);
      }
    } else {
      this.kept?.retain([]);
    }
    this.tables = out;
    return out;
  }

  private priorityOf(table: string): number {
    return this.priorityTables.has(table) ? PRIORITY.first : PRIORITY.bulk;
  }

  // ------------------------------------------------------------------------------------------
  // Planning.

  /**
   * Whether HQ holds `key` (one HEAD; with `bytes`, exactly these bytes); false when it does not,
   * or when it cannot be asked (then `reach.ok` turns false and the round asks no more: what it
   * plans is checked again when sent).
   */
  private async hqHas(key: string, reach: { ok: boolean }, bytes?: Uint8Array): Promise<boolean> {
    if (!reach.ok) return false;
    try {
      const info = await this.target.head(key);
      this.noteSuccess();
      return bytes === undefined ? info !== undefined : matches(info, hashBytes(bytes));
    } catch (e) {
      this.noteFailure(e);
      reach.ok = false;
      return false;
    }
  }

  async enqueueSnapshotSync(): Promise<PlanResult> {
    if (this.takeOverPending) await this.takeOverNow();
    else await this.peekSender();
    this.replan = false;
    this.pruneFailingSteps();
    const now = this.clock();
    const tables = this.openTables();
    const tagsCreated = createScheduledTags(tables, this.o.scheduledTags === undefined ? DEFAULT_SCHEDULED_TAGS : this.o.scheduledTags, now);
    const result: PlanResult = { units: [], items: 0, bytes: 0, tagsCreated };
    const add = (unit: string, rows: NewRow[]) => {
      this.outbox.add(rows, now);
      result.units.push(unit);
      result.items += rows.length;
      result.bytes += rows.reduce((s, r) => s + (r.size ?? 0), 0);
    };
    // What HQ holds is known from the outbox's record of verified steps, not from a listing of HQ
    // (which grows with everything HQ keeps): HQ is asked per key only what the record cannot say.
    const reach = { ok: true };
    /** Tables whose planning failed this round, with the error. */
    const failed = new Map<string, string>();
    for (const [name, table] of tables) {
      try {
        const prefix = tablePrefix(this.o.site, name);
        const priority = this.priorityOf(name);
        const known = (key: string, size: number) => this.outbox.atHq(key, size);
        // A unit the outbox does not know of may be at HQ already (a site restored from HQ, a site.db
        // set up afresh): HQ is asked once, and a unit it holds is recorded as done.
        // With `body`, HQ holds the unit only when its object is exactly these bytes, kept in the row.
        // `cancelWhy`: the pending unit of this name (rolled back on the site) is cancelled in the
        // transaction that records HQ's copy, so a crash never leaves it pending beside that record.
        const heldAtHq = async (unit: string, key: string, body?: Buffer, cancelWhy?: string): Promise<boolean> => {
          if (!(await this.hqHas(key, reach, body))) return false;
          this.outbox.db.transaction(() => {
            if (cancelWhy !== undefined) this.outbox.cancelUnit(unit, cancelWhy);
            this.outbox.addHeld({ unit, table_name: name, phase: PHASE.pointer, op: 'pointer', key, body, priority }, now);
          })();
          return true;
        };
        const fileRows = (unit: string, s: Parameters<typeof referencedFiles>[1]): NewRow[] => {
          const rows: NewRow[] = [];
          for (const f of referencedFiles(table, s)) {
            const key = prefix + f.rel;
            let size: number;
            try {
              size = statSync(f.path).size;
            } catch {
              throw new LsmError('NotFound', `${name}: ${f.rel} referenced by snapshot ${s.id} is missing on the site`);
            }
            if (known(key, size)) continue;
            rows.push({ unit, table_name: name, phase: f.phase, op: 'put', src: f.path, key, size, priority });
          }
          return rows;
        };

        // Tags HQ lacks (hold tags excepted), oldest first. A site holds thousands of tags per table
        // (a week of run tags): those settled in an earlier round are passed over, and the outbox is
        // asked about the rest, unit by unit when they are few, else all of the table's in one query.
        const settled = this.settledTags.get(name) ?? new Map<string, string>();
        this.settledTags.set(name, settled);
        const tags = table
          .listTags()
          .filter((t) => !isHoldTag(t.name))
          .map((tag) => ({ tag, unit: `tag:${name}:${tag.name}`, stamp: tagStamp(tag) }));
        const listed = new Set(tags.map((t) => t.unit));
        const unsettled = tags.filter((t) => settled.get(t.unit) !== t.stamp);
        const tagUnits = unsettled.length > UNIT_QUERIES_PER_TABLE_MAX ? this.outbox.unitStates(`tag:${name}:`) : undefined;
        const stateOf = (unit: string) => (tagUnits ? tagUnits.get(unit) : this.outbox.unitState(unit));
        const sent = this.sentTagStamps(name);
        // The tag's JSON as the site holds it now, recorded as what HQ gets; undefined: deleted since listing.
        const tagJson = (unit: string, tag: string): { body: Buffer; snapshot: Snapshot } | undefined => {
          const path = table.paths.tagFile(tag);
          const body = table.fileIO.readFileIfExists(path);
          if (body === undefined) return undefined;
          const parsed = tagFromJson(body.toString('utf8'), path);
          sent.set(unit, tagStamp(parsed));
          return { body, snapshot: parsed.snapshot };
        };
        for (const { tag, unit, stamp } of unsettled) {
          const key = `${prefix}tag/tag-${tag.name}`;
          const pointer = (body: Buffer): NewRow => ({ unit, table_name: name, phase: PHASE.pointer, op: 'pointer', body, key, size: body.length, priority });
          // The files of the tag's snapshot HQ lacks, then its JSON; undefined: the tag expired under us.
          const unitRows = (json: { body: Buffer; snapshot: Snapshot }): NewRow[] | undefined => {
            try {
              return [...fileRows(unit, json.snapshot), pointer(json.body)];
            } catch (e) {
              if (e instanceof LsmError && e.kind === 'NotFound' && !table.tags.exists(tag.name)) return undefined;
              throw e;
            }
          };
          const state = stateOf(unit);
          let was = sent.get(unit);
          if (was === undefined && state !== undefined) {
            // A tag no longer listed in an earlier round (deleted on the site) is forgotten from
            // `sent`, not from the outbox: made again (on another snapshot, an operator moving
            // "baseline" with a planning between; an hourly tag made by a fast clock, made again in
            // its hour, scheduled-tags.ts), the stamp HQ got is read from its unit's pointer row, or
            // its unit was taken for settled and HQ kept the old state (hourly-tag-clock-step.test.ts).
            // Also while that version still waits (HQ unreachable): it is cancelled below as a tag
            // moved while waiting; left, its steps failed for good on the files its snapshot had
            // (swept once the tag was deleted) and the new version was never planned
            // (hourly-tag-remade-while-pending.test.ts).
            const body = this.outbox.pointerBodies(unit).get(unit);
            try {
              if (body !== undefined) sent.set(unit, (was = tagStamp(tagFromJson(body.toString('utf8'), unit))));
            } catch {
              // not a tag's JSON: never compared, as in sentTagStamps
            }
          }
          if (state === 'pending' && was !== undefined && stampedSnapshotId(was) !== tag.snapshot.id) {
            // Moved to another snapshot while its earlier version still waits (HQ unreachable):
            // nothing holds that snapshot on the site any more, so its files may be swept and the
            // steps would fail for good; and its JSON is not what the site has. The new version goes,
            // waiting (for health) since the first was planned: HQ got no version of the tag since.
            // The earlier version is cancelled also when the new one cannot be planned (the table's
            // planning fails and is reported).
            const json = tagJson(unit, tag.name);
            let rows: NewRow[] | undefined;
            let unplanned: unknown;
            try {
              rows = json === undefined ? undefined : unitRows(json);
            } catch (e) {
              unplanned = e;
            }
            this.outbox.db.transaction(() => {
              const behindMs = this.outbox.behindSince(unit, PHASE.pointer);
              this.outbox.cancelUnit(unit, `tag ${tag.name} moved to snapshot ${tag.snapshot.id} on the site`);
              if (rows === undefined) return;
              if (behindMs !== undefined) for (const r of rows) r.behind_ms = behindMs;
              add(unit, rows);
            })();
            if (unplanned !== undefined) throw unplanned;
            continue;
          }
          if (state === 'done' && was !== undefined && was !== stamp) {
            const json = tagJson(unit, tag.name);
            if (json === undefined) continue;
            if (stampedSnapshotId(was) === json.snapshot.id) {
              // Renewed on the site (core/lsm renewTag: a cited run tag's retention restarted): HQ gets
              // the new JSON, so its copy — and a site restored from it — keeps the tag as long.
              add(unit, [pointer(json.body)]);
            } else {
              // Deleted and created again on another snapshot (an operator moving "baseline"): that
              // snapshot's files go before the JSON, as for a new tag.
              const rows = unitRows(json);
              if (rows) add(unit, rows);
            }
            continue;
          }
          if (state === 'done') settled.set(unit, stamp);
          if (state !== undefined) continue;
          const json = tagJson(unit, tag.name);
          if (json === undefined) continue;
          // Held at HQ only with these very bytes, recorded with the unit: a renewal or a move
          // later is compared with what HQ has (an older version there is sent again whole).
          if (await heldAtHq(unit, key, json.body)) continue;
          const rows = unitRows(json);
          if (rows) add(unit, rows);
        }
        // A tag whose upload still waits but that the site no longer has (an operator deleted it,
        // its retention expired it) is dropped, not sent: its snapshot is held by nothing on the
        // site, and HQ would get a tag nobody wants, or half of one once expiration swept its files.
        // Only the site's tag folder decides: a tag gone from HQ alone is HQ's retention.
        for (const unit of this.outbox.pendingUnits(`tag:${name}:`)) {
          const tagName = unit.slice(`tag:${name}:`.length);
          if (!listed.has(unit) && !table.tags.exists(tagName)) this.dropDeletedTag(unit, name, tagName);
        }
        for (const unit of sent.keys()) if (!listed.has(unit)) sent.delete(unit);
        for (const unit of settled.keys()) if (!listed.has(unit)) settled.delete(unit);

        // The latest snapshot, when HQ does not have it yet.
        const latest = table.latestSnapshot();
        const pending = this.outbox.pendingUnits(`snapshot:${name}:`);
        if (latest) {
          const unit = `snapshot:${name}:${latest.id}`;
          const key = `${prefix}snapshot/snapshot-${latest.id}`;
          const path = table.paths.snapshotFile(latest.id);
          const file = table.fileIO.readFileIfExists(path);
          const body = file ?? Buffer.from(snapshotToJson(latest));
          // HQ has, or is getting, the snapshot JSON planned last. After a rollback on the site
          // (`tilstand table rollback`: the later snapshots go, and the next commits take their ids
          // again) the site's latest is an older unit than that, or one whose id HQ got for the
          // snapshot rolled back: either is planned again.
          const state = this.outbox.unitState(unit);
          const last = state === undefined ? undefined : this.outbox.lastPointer(`snapshot:${name}:`, PHASE.pointer);
          const rolledBack = last !== undefined && (last.unit !== unit || (last.body !== null && !last.body.equals(body)));
          // The unit of this name still pending after a rollback (HQ unreachable) is cancelled in the
          // transaction that plans it again (or records HQ's copy): cancelled apart, a crash before
          // the planning lost when HQ fell behind (below), as the cancelled unit has nothing pending.
          const rollbackWhy = rolledBack ? `snapshot ${latest.id} of ${name} is not the one HQ got last (rolled back on the site)` : undefined;
          if (rolledBack) this.log(`sync: ${unit} planned again: the site rolled ${name} back`);
          if ((state === undefined || rolledBack) && !(await heldAtHq(unit, key, body, rollbackWhy))) {
            const hold = holdTagName(latest.id);
            let rows: NewRow[];
            try {
              try {
                // null: kept until released, not the table's tag.default-time-retained (a hold that
                // expired would take the files of a unit still waiting for the line).
                table.createTag(hold, latest.id, null);
              } catch (e) {
                if (!(e instanceof LsmError && e.kind === 'AlreadyExists')) throw e;
              }
              // The files planned are those of the JSON sent: the table's cache keeps a snapshot by
              // its id, and after a rollback the id names another one.
              rows = fileRows(unit, file === undefined ? latest : snapshotFromJson(file.toString('utf8'), path));
            } catch (e) {
              // The unit rolled back goes also when the new one cannot be planned (reported as the
              // table's planning failure): its JSON is not the site's, its files may be gone.
              if (rollbackWhy !== undefined) this.outbox.cancelUnit(unit, rollbackWhy);
              throw e;
            }
            const id = Buffer.from(String(latest.id));
            rows.push(
              { unit, table_name: name, phase: PHASE.pointer, op: 'pointer', body, key, size: body.length, priority },
              { unit, table_name: name, phase: PHASE.hints, op: 'pointer', body: id, key: `${prefix}snapshot/EARLIEST`, size: id.length, priority },
              { unit, table_name: name, phase: PHASE.hints, op: 'pointer', body: id, key: `${prefix}snapshot/LATEST`, size: id.length, priority },
              { unit, table_name: name, phase: PHASE.prune, op: 'prune', body: id, key: `${prefix}snapshot/`, priority },
              { unit, table_name: name, phase: PHASE.release, op: 'release', body: Buffer.from(hold), priority },
            );
            // Only the latest matters at HQ: an older snapshot still on its way is superseded, in
            // the transaction that plans the new one. A crash between the two left both pending, and
            // nothing cancels the older one later (the latest's unit exists): its pointer, retried
            // after the newer one's, wrote HQ's hints back to it and pruned the newer snapshot.
            // HQ's copy of the table has been behind since the oldest superseded unit whose pointer
            // did not reach HQ was planned; the new unit keeps that for health, or an outage where a
            // table commits every minute read as a wait of one minute, healthy for hours.
            // A superseded pointer that kept failing while HQ answered (HQ refuses that write) passes
            // its failure on to the new unit's pointer, and a data file the new unit plans again (same
            // name, same content) to the new step of its key, or neither ever failed a whole window
            // under one id.
            const superseded = pending.filter((old) => old !== unit);
            this.outbox.db.transaction(() => {
              // A unit of this name still pending (the one rolled back): HQ has been behind since it
              // was planned, and the unit planned again keeps that, as a superseding one.
              let behindMs = rollbackWhy === undefined ? undefined : this.outbox.behindSince(unit, PHASE.pointer);
              if (rollbackWhy !== undefined) this.outbox.cancelUnit(unit, rollbackWhy);
              const failing = new Map<string, FailingStep>();
              for (const old of superseded) {
                const since = this.outbox.behindSince(old, PHASE.pointer);
                if (since !== undefined && (behindMs === undefined || since < behindMs)) behindMs = since;
                this.failingOf(old, failing);
                this.outbox.cancelUnit(old, `superseded by snapshot ${latest.id}`);
              }
              if (behindMs !== undefined) for (const r of rows) r.behind_ms = behindMs;
              add(unit, rows);
              if (failing.size > 0) this.carryFailures(failing, unit);
            })();
            for (const old of superseded) this.log(`sync: ${old} superseded by snapshot ${latest.id}`);
          }
        }
      } catch (e) {
        // One table's failure (a data file missing on the site, a manifest that cannot be read)
        // holds back that table alone: the others, the contracts and compaction go on, and the
        // failure stays where status() reports it until a round plans the table again.
        failed.set(name, errorText(e));
        this.log(`sync: planning ${name} failed (tried again next round): ${errorText(e)}`);
      }
      // Hold tags whose unit is no longer pending (finished, superseded, a crash before release, or
      // made by a planning that failed before it added the unit).
      try {
        const stillPending = new Set(this.outbox.pendingUnits(`snapshot:${name}:`).map((u) => holdTagName(Number(u.slice(u.lastIndexOf(':') + 1)))));
        for (const t of table.listTags()) {
          if (isHoldTag(t.name) && !stillPending.has(t.name)) {
            try {
              table.deleteTag(t.name);
            } catch {
              // deleted concurrently
            }
          }
        }
      } catch (e) {
        if (!failed.has(name)) failed.set(name, errorText(e));
        this.log(`sync: releasing the hold tags of ${name} failed: ${errorText(e)}`);
      }
    }
    this.planContracts(now, add, failed);
    this.notePlanFailures(failed, now);

    const keepMs = this.o.outboxKeepMs ?? DEFAULT_OUTBOX_KEEP_MS;
    if (now - this.compactedAtMs >= keepMs / 10 || now < this.compactedAtMs) {
      this.compactedAtMs = now;
      this.compactOutbox(tables, now - keepMs, now);
    }
    this.pruneAtHq();
    for (const t of tables.values()) t.cache.clear();
    return result;
  }

  /**
   * contracts/: small files that may change in place, sent as pointers when their bytes change,
   * each on its own (a batch's steps do not wait for one another). A file that cannot go — a name
   * HQ's keys refuse (a backslash or a control character: an archive unpacked from another system,
   * an operator's copy), a name that is not UTF-8, a file that cannot be read — is left out and
   * added to `failed` under `contracts/<path>`: the others go, and status() names it. Planned, it
   * cancelled the whole batch at its first step, every round, with nothing but a log line to say why.
   */
  private planContracts(now: number, add: (unit: string, rows: NewRow[]) => void, failed: Map<string, string>): void {
    const dir = join(this.o.dataDir, 'contracts');
    if (!existsSync(dir)) return;
    const was = planFailures(this.outbox);
    const fail = (what: string, error: string) => {
      failed.set(what, error);
      // Once, not every round: the line would bury the log's other errors.
      if (was[what]?.error !== error) this.log(`sync: ${what} is not sent to HQ: ${error}`);
    };
    const rows: NewRow[] = [];
    const unit = `contracts:${now}`;
    for (const f of contractFiles(dir)) {
      const what = `contracts/${printable(f.rel)}`;
      if (f.problem !== undefined) {
        fail(what, f.problem);
        continue;
      }
      const key = contractsPrefix(this.o.site) + f.rel;
      const refused = this.refusedKeys.get(key) ?? keyRefusal(key);
      if (refused !== undefined) {
        fail(what, `${refused} (rename the file; the other contracts go)`);
        continue;
      }
      let body: Buffer;
      try {
        body = readFileSync(f.path);
      } catch (e) {
        // Removed since the listing: nothing to send.
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') fail(what, `cannot be read: ${errorText(e)}`);
        continue;
      }
      const h = hashBytes(body);
      if (this.outbox.lastShaForKey(key) === h.sha256) continue;
      rows.push({ unit, phase: PHASE.pointer, op: 'pointer', body, key, size: h.size, sha256: h.sha256, md5: h.md5, priority: PRIORITY.contracts });
    }
    if (rows.length > 0) {
      // An older version still waiting (a failed send's retry) would land after this one and
      // stay at HQ: planning compares the site's file with the newest row alone.
      for (const r of rows) this.outbox.cancelKey(r.key!, `superseded by a newer version planned at ${now}`);
      add(unit, rows);
    }
  }

  /**
   * `Outbox.compact` with what planning still asks of the outbox: a tag unit is live while the
   * site has the tag; a snapshot unit while its snapshot is its table's latest (the only one
   * planning asks about). Units of a table the site no longer has are not live. A run tag the site
   * expired after HQ got it leaves a step that removes it at HQ (`hqDropsExpiredTags`).
   */
  private compactOutbox(tables: Map<string, Table>, beforeMs: number, nowMs: number): void {
    const held = new Map<string, { latest: number | undefined; tags: Set<string> }>();
    const live = (unit: string): boolean => {
      const [kind, name, rest] = splitUnit(unit);
      const table = name === undefined ? undefined : tables.get(name);
      if (!table || rest === undefined || kind === 'untag') return false;
      let h = held.get(name!);
      if (!h) held.set(name!, (h = { latest: table.latestSnapshot()?.id, tags: new Set(table.listTags().map((t) => t.name)) }));
      return kind === 'snapshot' ? Number(rest) === h.latest : h.tags.has(rest);
    };
    const dropped = this.o.hqDropsExpiredTags ?? DEFAULT_HQ_DROPS_EXPIRED_TAGS;
    const removal = (unit: string, key: string): NewRow | undefined => {
      const [kind, name, tag] = splitUnit(unit);
      // Only for a table the site still has: the tag expired, the table was not dropped.
      if (kind !== 'tag' || tag === undefined || !tables.has(name!) || !dropped.some((p) => tag.startsWith(p))) return undefined;
      return { unit: `untag:${name}:${tag}`, table_name: name!, phase: 0, op: 'remove', key, priority: PRIORITY.bulk };
    };
    this.outbox.compact(beforeMs, live, nowMs, removal);
  }

  /**
   * Keeps the tables whose planning failed this round, and the contract files left out
   * (`contracts/<path>`, planContracts), in `sync_state` (`planFailures`), each with when it began
   * failing, for statusOf(): no step of such a table or file exists, so the outbox's steps alone
   * would say healthy with no error while it never reaches HQ. Cleared per entry by the first
   * round that plans it.
   */
  private notePlanFailures(failed: ReadonlyMap<string, string>, nowMs: number): void {
    const was = planFailures(this.outbox);
    const now: Record<string, PlanFailure> = {};
    // Not later than now: a failure noted by a clock that was fast must still stall health.
    for (const [table, error] of failed) now[table] = { sinceMs: Math.min(was[table]?.sinceMs ?? nowMs, nowMs), error };
    this.outbox.setState(PLAN_FAILURES, failed.size > 0 ? JSON.stringify(now) : null);
  }

  /**
   * `tagStamps` of a table, read from the outbox on first use. A tag unit HQ was found holding
   * (`addHeld`) has the site's JSON HQ matched as its body; one recorded before that has none, and
   * no stamp: its tag is not sent again when renewed or moved.
   */
  private sentTagStamps(table: string): Map<string, string> {
    let m = this.tagStamps.get(table);
    if (m === undefined) {
      m = new Map();
      for (const [unit, body] of this.outbox.pointerBodies(`tag:${table}:`)) {
        try {
          m.set(unit, tagStamp(tagFromJson(body.toString('utf8'), unit)));
        } catch {
          // not a tag's JSON: never compared, so never sent again for it
        }
      }
      this.tagStamps.set(table, m);
    }
    return m;
  }

  /**
   * Keeps the record of what HQ holds to files the site still has: a file the site deleted
   * (expired: nothing references it any more, and names are never reused) is never planned again.
   * One slice of `atHqCheckedPerRound` entries per planning round, walking the record in key order
   * and starting again at its end: a site holds about one entry per file its tags reference (well
   * over 100,000 with a week of run tags), and a check is a stat (3–6 µs here), so the whole record
   * at once would hold the event loop, and the PUBACKs with it, for half a second.
   */
  private pruneAtHq(): void {
    const slice = this.o.atHqCheckedPerRound ?? DEFAULT_AT_HQ_CHECKED_PER_ROUND;
    const entries = this.outbox.atHqEntries(this.atHqCursor, slice);
    this.atHqCursor = entries.length < slice ? '' : entries[entries.length - 1]!.key;
    this.outbox.forgetAtHq(entries.filter((e) => e.src !== null && !existsSync(e.src)).map((e) => e.key));
  }

  // ------------------------------------------------------------------------------------------
  // Running.

  /** Runs every due step (bounded: each step runs at most once per call). */
  async runOnce(): Promise<RunResult> {
    const r: RunResult = { done: 0, failed: 0, sentBytes: 0, skipped: 0 };
    const tried = new Set<number>();
    // After the clock stepped back, retries planned by the old clock would wait out the step too,
    // and health would read the old clock's times as progress still to come.
    this.outbox.clampRetries(this.clock() + this.maxBackoffMs());
    this.outbox.clampFuture(this.clock());
    // HQ's sender marker is read once per round before the first step (and again before each
    // pointer, prune and remove): a round with nothing due asks HQ nothing.
    let checked = false;
    for (;;) {
      const row = this.outbox.next(this.clock());
      if (!row || tried.has(row.id)) break;
      tried.add(row.id);
      try {
        // A tag deleted on the site since planning: nothing more of it goes (dropDeletedTag).
        if (row.unit.startsWith('tag:') && this.tagDeletedOnSite(row)) continue;
        if (!checked) {
          await this.checkSender();
          // Before the first step this engine runs: HQ never holds what this program sent without the mark.
          await this.markDataFormat();
        }
        checked = true;
        const sent = await this.execute(row);
        if (this.failingSteps.delete(row.id) && row.id === this.stuck?.id) this.saveStuckStep();
        if (sent === 0) r.skipped++;
        r.sentBytes += sent;
        r.done++;
      } catch (e) {
        this.current = null;
        if (isSyncError(e, 'Conflict')) {
          // Another data directory owns the site's prefix: the step stays pending as it was (no
          // attempt counted), and nothing more is run until a check finds the prefix ours again.
          // Or the prefix became ours by a take-over from outside: the steps are gone, plan again.
          if (this.refused) r.refused = true;
          else r.replan = true;
          break;
        }
        r.failed++;
        if (isSyncError(e, 'InvalidArgument') || isSyncError(e, 'Forbidden')) {
          // Never retried: a bad key or a key outside the prefix is a bug, not weather.
          if (row.unit.startsWith('contracts:') && row.key !== null) {
            // A contract goes alone: the batch's other files are not held back by it, and planning
            // leaves this key out and reports it (planContracts) instead of planning it each round.
            this.refusedKeys.set(row.key, errorText(e));
            this.outbox.cancelKey(row.key, errorText(e));
            this.log(`sync: ${row.key} cancelled: ${errorText(e)}`);
            continue;
          }
          this.outbox.cancelUnit(row.unit, errorText(e));
          this.log(`sync: ${row.unit} cancelled: ${errorText(e)}`);
          continue;
        }
        this.noteFailure(e);
        const delay = this.backoff(row.attempts + 1);
        this.outbox.markFailed(row.id, errorText(e), this.clock() + delay);
        this.noteStepFailure(row.id);
        this.log(`sync: ${row.key ?? row.op} failed (attempt ${row.attempts + 1}, retry in ${delay} ms): ${errorText(e)}`);
      }
      if (this.halt) break;
    }
    return r;
  }

  /** The longest retry delay (`retry.maxMs`). */
  private maxBackoffMs(): number {
    return this.o.retry?.maxMs ?? 300_000;
  }

  backoff(attempt: number): number {
    const base = this.o.retry?.baseMs ?? 1000;
    const max = this.maxBackoffMs();
    const jitter = Math.min(1, Math.max(0, this.o.retry?.jitter ?? 0.5));
    const d = Math.min(max, base * 2 ** Math.min(attempt - 1, 30));
    return Math.max(0, Math.round(d * (1 - jitter * this.random())));
  }

  private noteSuccess(): void {
    this.online = true;
    this.hqAnswers++;
  }

  /**
   * A step failed (and will be retried). It counts as failing while HQ answers — for good (a share
   * that corrupts one file: Verification each time), not the line — from a failure that came after
   * HQ answered a request since the step's previous one (another step, the marker's read, a HEAD;
   * for its first failure, any answer in this process); a failure with no answer since the one
   * before is the line (a timeout, a refused connection), and clears that count. The
   * oldest such step is kept in `sync_state` `stuckStep` for statusOf(): once it has failed so for
   * a whole health window it stalls health, whatever the other units move.
   */
  private noteStepFailure(id: number): void {
    const now = this.clock();
    const was = this.failingSteps.get(id);
    const answered = this.hqAnswers > (was?.answersAtLastFailure ?? 0);
    const aloneSinceMs = answered ? Math.min(was?.aloneSinceMs ?? now, now) : undefined;
    this.failingSteps.set(id, { answersAtLastFailure: this.hqAnswers, aloneSinceMs });
    if (aloneSinceMs === undefined ? id === this.stuck?.id : this.stuck === undefined || aloneSinceMs < this.stuck.sinceMs) this.saveStuckStep();
  }

  /**
   * Adds to `into` the steps of `unit` (about to be superseded) that have been failing while HQ
   * answers, by what takes them over in the new unit: its pointer (`POINTER_STEP`: another key,
   * the same table's state) or the put of the same key (a data file both snapshots reference; a
   * name in Paimon is one content). Where two superseded units have one, the one failing longer.
   * Only when HQ has answered since its last failure (this planning's marker read, at least): else
   * that failure may be the line going down, which its retry would have told (`noteStepFailure`),
   * and the new pointer does not run while its files fail.
   */
  private failingOf(unit: string, into: Map<string, FailingStep>): void {
    if (this.failingSteps.size === 0) return;
    for (const row of this.outbox.failedSteps(unit)) {
      const what = row.phase === PHASE.pointer ? POINTER_STEP : row.op === 'put' ? row.key : null;
      const f = this.failingSteps.get(row.id);
      if (what === null || f?.aloneSinceMs === undefined || this.hqAnswers <= f.answersAtLastFailure) continue;
      const than = into.get(what);
      if (than !== undefined && than.failing.aloneSinceMs! <= f.aloneSinceMs) continue;
      into.set(what, { id: row.id, attempts: row.attempts, error: row.last_error, failing: f });
    }
  }

  /**
   * The steps of `unit`, which superseded the units `failingOf` read, take over their failures:
   * since when each has failed while HQ answers, its attempts and error (status reports one
   * failure). A file the new unit does not plan (HQ got it meanwhile, or the new snapshot no longer
   * references it) passes nothing on.
   */
  private carryFailures(failing: ReadonlyMap<string, FailingStep>, unit: string): void {
    for (const [what, from] of failing) {
      const id =
        what === POINTER_STEP ? this.outbox.inheritFailure(unit, PHASE.pointer, from.attempts, from.error) : this.outbox.inheritFailureOfKey(unit, what, from.attempts, from.error);
      this.failingSteps.delete(from.id);
      if (id !== undefined) this.failingSteps.set(id, { ...from.failing });
    }
    this.saveStuckStep();
  }

  /** Writes `stuckStep`: the step of `failingSteps` failing longest while HQ answers, or none. */
  private saveStuckStep(): void {
    let oldest: StuckStep | undefined;
    for (const [id, f] of this.failingSteps) {
      if (f.aloneSinceMs !== undefined && (oldest === undefined || f.aloneSinceMs < oldest.sinceMs)) oldest = { id, sinceMs: f.aloneSinceMs };
    }
    if (oldest?.id === this.stuck?.id && oldest?.sinceMs === this.stuck?.sinceMs) return;
    this.stuck = oldest;
    this.outbox.setState(STUCK_STEP, oldest === undefined ? null : JSON.stringify(oldest));
  }

  /**
   * Forgets failing steps that are no longer pending (cancelled, superseded, dropped for a new
   * target or a take-over): once per planning, one query, only while some step fails.
   */
  private pruneFailingSteps(): void {
    if (this.failingSteps.size === 0) return;
    const pending = new Set(this.outbox.db.prepare(`SELECT id FROM sync_outbox WHERE state = 'pending' AND attempts > 0`).pluck().all() as number[]);
    for (const id of this.failingSteps.keys()) if (!pending.has(id)) this.failingSteps.delete(id);
    this.saveStuckStep();
  }

  private noteFailure(e: unknown): void {
    if (isSyncError(e, 'Transport') || isSyncError(e, 'AccessDenied') || isSyncError(e, 'NotFound') || isSyncError(e, 'Verification')) {
      this.online = !isSyncError(e, 'Transport') && !isSyncError(e, 'AccessDenied') && this.online;
      this.outbox.setState('lastErrorMs', String(this.clock()));
    }
  }

  /** Runs one step; returns the bytes actually sent (0 when HQ already had them). */
  private async execute(row: OutboxRow): Promise<number> {
    const t = this.target;
    switch (row.op) {
      case 'put': {
        const key = row.key!;
        if (this.outbox.doneWithKey(key)) {
          this.outbox.markDone(row.id, 0, this.clock());
          return 0;
        }
        let h: Hashes;
        if (row.sha256 && row.md5) h = { sha256: row.sha256, md5: row.md5, size: row.size };
        else {
          try {
            h = await hashFile(row.src!);
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code === 'ENOENT') return this.sourceGone(row);
            throw e;
          }
          this.outbox.setHashes(row.id, h.sha256, h.md5, h.size);
        }
        // A PUT that completed before a crash or a broken connection is not sent again.
        if (matches(await t.head(key), h)) {
          this.noteSuccess();
          this.outbox.markDone(row.id, 0, this.clock());
          return 0;
        }
        let src: ReadStream;
        try {
          statSync(row.src!);
          src = createReadStream(row.src!);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') return this.sourceGone(row);
          throw e;
        }
        this.current = { file: key, bytes: 0, total: h.size };
        const metered = new MeteredStream(this.bucket, (n) => {
          if (this.current) this.current.bytes = n;
        });
        // pipeline: an error on either side destroys both (a read error fails the put). A put that
        // fails without reading the body to its end (HQ answers 503, the connection is refused)
        // destroys the metered stream, and so the site file's: else each failed attempt, retried
        // forever offline, would leave a file descriptor open.
        pipeline(src, metered, () => {});
        try {
          await t.put(key, metered, h);
        } catch (e) {
          metered.destroy();
          throw e;
        } finally {
          this.current = null;
        }
        await this.verify(key, h);
        this.noteSuccess();
        this.outbox.markDone(row.id, h.size, this.clock());
        return h.size;
      }
      case 'pointer': {
        const key = row.key!;
        const body = row.body ?? readFileSync(row.src!);
        const h = hashBytes(body);
        if (matches(await t.head(key), h)) {
          this.noteSuccess();
          this.outbox.markDone(row.id, 0, this.clock());
          return 0;
        }
        // A pointer decides what HQ's readers see: written only while the prefix is this sender's.
        await this.checkSender();
        this.current = { file: key, bytes: 0, total: body.length };
        try {
          if (this.bucket) await this.bucket.take(body.length);
          await t.putPointer(key, body);
        } finally {
          this.current = null;
        }
        await this.verify(key, h);
        this.noteSuccess();
        if (!row.sha256) this.outbox.setHashes(row.id, h.sha256, h.md5, h.size);
        this.outbox.markDone(row.id, body.length, this.clock());
        return body.length;
      }
      case 'prune': {
        // One snapshot per table at HQ: remove every snapshot JSON but the one just shipped.
        const keep = `snapshot-${row.body!.toString()}`;
        const listed = await t.list(row.key!);
        // Checked after the listing: a snapshot JSON another sender wrote is in it only if that
        // sender's marker was at HQ before (it checks its own before each pointer), so this check
        // sees it and removes nothing (the race of two first senders, DESIGN.md).
        await this.checkSender();
        for (const o of listed) {
          const name = o.key.slice(row.key!.length);
          if (/^snapshot-\d+$/.test(name) && name !== keep) await t.remove(o.key);
        }
        this.noteSuccess();
        this.outbox.markDone(row.id, 0, this.clock());
        return 0;
      }
      case 'remove': {
        // A pointer the site no longer has (an expired run tag): gone at HQ too. Idempotent.
        await this.checkSender();
        await t.remove(row.key!);
        this.noteSuccess();
        this.outbox.markDone(row.id, 0, this.clock());
        return 0;
      }
      case 'release': {
        const table = this.openTables().get(row.table_name!);
        const tag = row.body!.toString();
        if (table?.tags.exists(tag)) {
          try {
            table.deleteTag(tag);
          } catch (e) {
            if (!(e instanceof LsmError && e.kind === 'NotFound')) throw e;
          }
        }
        this.outbox.markDone(row.id, 0, this.clock());
        return 0;
      }
    }
  }

  /**
   * Throws Conflict unless HQ's sender marker names this data directory. A prefix without one
   * where this outbox never had one (the first send, or a site that synced before markers) is
   * taken (where it had one, `refuseIfGone` throws: HQ's copy is not there): the marker is written and
   * read back, so a sender that wrote at the same moment as another and lost learns it now or at
   * its next check. A marker naming this directory that it did not write (`sync now --take-over`
   * from the command line while the site runs) also throws, once, after `forgetHq`: the round
   * ends, and planning starts again from what HQ holds.
   */
  private async checkSender(): Promise<void> {
    let m = await this.readMarker();
    if (m === undefined) {
      this.refuseIfGone();
      await this.writeOwnMarker('first send');
      m = await this.readMarker();
    }
    await this.judgeMarker(m);
  }

  /** HQ's marker; one that is not a marker is a refusal (`refuse`), as another sender's. */
  private async readMarker(): Promise<SenderMarker | undefined> {
    try {
      return await readMarker(this.target, this.o.site);
    } catch (e) {
      if (isSyncError(e, 'Conflict')) this.refuse(e.message);
      throw e;
    }
  }

  /** Returns when `m` names this directory and its outbox knew it; else throws Conflict (see checkSender). */
  private async judgeMarker(m: SenderMarker | undefined): Promise<void> {
    const site = this.o.site;
    this.noteSuccess();
    if (m !== undefined && m.sender === this.sender) {
      // Seen at HQ: from now on its absence means HQ's copy went (`refuseIfGone`).
      if (this.outbox.getState(MARKER_UNCONFIRMED) !== undefined) this.outbox.setState(MARKER_UNCONFIRMED, null);
      // And where HQ's folder then was: a take-over once it is gone asks whether it moved onto this disk.
      noteHqFileSystem(this.outbox, this.o.target.description, this.o.dataDir, this.o.fileSystemOf ?? fileSystemOf);
      if (this.refused) {
        this.refused = false;
        this.formatMarked = false;
        this.outbox.setState(SENDER_CONFLICT, null);
        this.log(`sync: HQ's sender marker names this data directory again: sending resumes`);
      }
      if (this.outbox.getState(MARKER_SINCE) !== String(m.sinceMs)) {
        this.outbox.setState(MARKER_SINCE, String(m.sinceMs));
        this.forgetHq(`HQ's sender marker was rewritten with this directory's id (${m.by} at ${new Date(m.sinceMs).toISOString()})`);
        throw new SyncError('Conflict', 'planning again after a take-over');
      }
      return;
    }
    const message = m === undefined ? `HQ's sender marker for site ${site} vanished right after it was written: nothing is sent this round` : conflictMessage(site, this.sender, markerDir(this.o.dataDir), m);
    this.refuse(message);
    throw new SyncError('Conflict', message);
  }

  /**
   * Keeps a refusal for status() (`senderConflict`) and the loop; logged once per message. `gone`:
   * HQ no longer holds the marker this directory had there (`refuseIfGone`), not another sender's.
   */
  private refuse(message: string, gone = false): void {
    const was = senderConflict(this.outbox);
    // Logged once per refusal, not every round: the line would bury the log's other errors.
    if (was?.message !== message) this.log(`sync: stopped: ${message}`);
    this.refused = true;
    this.outbox.setState(SENDER_CONFLICT, JSON.stringify({ sinceMs: Math.min(was?.sinceMs ?? Infinity, this.clock()), message, ...(gone ? { gone: true } : {}) }));
  }

  /**
   * HQ has no marker, and this outbox had one there (`markerHeldSince`): a directory target whose
   * share is not mounted (the empty local mount point: the PC booted before the NAS, the mount
   * failed), or HQ's copy deleted. Writing the marker and going on would put HQ's files on this
   * PC's own disk, where HQ never sees them — and only those the outbox does not already count as
   * sent — while status said healthy. So it is refused as another sender's marker is: nothing is
   * written, the step stays pending, unhealthy at once; a check that finds the marker again clears
   * it, and a take-over (a deliberate wipe) sends everything again. Returns when the outbox never
   * had a marker there: the first send, a site that synced before markers, adopt it.
   */
  private refuseIfGone(): void {
    const since = markerHeldSince(this.outbox);
    if (since === undefined) return;
    const message = goneMessage(this.o.site, this.o.target.description, markerDir(this.o.dataDir), since);
    this.refuse(message, true);
    throw new SyncError('Conflict', message);
  }

  /**
   * At each planning (one GET): a take-over from outside (the marker names this directory with a
   * time its outbox does not know) drops what the outbox knew HQ holds before planning — with
   * nothing due, no step would check it, and planning would trust a record another sender made
   * stale; another sender's marker, one that is not a marker, or none where this outbox had one
   * (`refuseIfGone`) is reported at once. Writes
   * nothing; HQ unreachable: left to the steps' checks.
   */
  private async peekSender(): Promise<void> {
    try {
      const m = await this.readMarker();
      if (m !== undefined) await this.judgeMarker(m);
      else this.refuseIfGone();
    } catch (e) {
      if (!isSyncError(e)) throw e;
    }
  }

  private async writeOwnMarker(by: 'first send' | 'take-over'): Promise<void> {
    await claimMarker(this.outbox, this.target, this.o.site, { sender: this.sender, dataDir: markerDir(this.o.dataDir), sinceMs: this.clock(), by });
    this.log(`sync: HQ's sender marker for site ${this.o.site} now names this data directory (sender ${this.sender}, ${by})`);
  }

  /**
   * `takeOver`, at the first planning: the marker is written whoever it names. When it named
   * another sender, that one may have written and removed pointers since this outbox last sent,
   * so what the outbox knows HQ holds is dropped (`forgetHq`) before planning. Errors propagate:
   * `sync now --take-over` with HQ unreachable fails saying so, and so does one onto this PC's own
   * disk while the marker is gone (`ontoOwnDisk`, unless `hqOnThisDisk`).
   */
  private async takeOverNow(): Promise<void> {
    let was: string | undefined;
    // No marker where this outbox had one: HQ's copy was removed (or the share is not mounted, and
    // the operator takes it over all the same). The outbox's record of what HQ holds is then false.
    const held = markerHeldSince(this.outbox);
    try {
      was = (await readMarker(this.target, this.o.site))?.sender;
    } catch (e) {
      if (!isSyncError(e, 'Conflict')) throw e;
      was = '(unreadable)';
    }
    // No marker, and HQ's folder, on another file system when the marker was last seen, is on the
    // data directory's now: the share is most likely not mounted, and HQ's whole copy would go
    // onto this PC's disk. Nothing is written unless the operator says it moved there.
    const ownDisk = was === undefined && this.o.hqOnThisDisk !== true ? ontoOwnDisk(this.outbox, this.o.target.description, markerDir(this.o.dataDir), this.o.fileSystemOf ?? fileSystemOf) : undefined;
    if (ownDisk !== undefined) {
      this.log(`sync: ${ownDisk}`);
      throw new SyncError('Conflict', ownDisk);
    }
    await this.writeOwnMarker('take-over');
    this.takeOverPending = false;
    if (this.refused) {
      this.refused = false;
      this.outbox.setState(SENDER_CONFLICT, null);
    }
    if (was !== undefined && was !== this.sender) this.forgetHq(`this directory took HQ's prefix over from sender ${was}`);
    else if (was === undefined && held !== undefined) this.forgetHq(`this directory took HQ's prefix over, which no longer held the marker it wrote at ${new Date(held).toISOString()}`);
  }

  /**
   * Drops every step and the record of what HQ holds, as for a new target: another sender owned
   * the prefix meanwhile (a tag's JSON it removed, a pointer it wrote), so planning asks HQ again
   * (a `head` per unit and file; nothing HQ has is sent again). But not the removals HQ still owes
   * this site: the run tags it expired are still at HQ (nobody removes what the site no longer
   * has), and planning never plans their removal once their units are gone. So every ended unit
   * of such a tag gets its `untag:` step first, whatever its age, and the pending ones stay.
   */
  private forgetHq(why: string): void {
    this.compactOutbox(this.openTables(), Number.MAX_SAFE_INTEGER, this.clock());
    const n = this.outbox.forgetTarget(true);
    this.tagStamps.clear();
    this.settledTags.clear();
    this.atHqCursor = '';
    this.replan = true;
    // The other sender may have written a mark of its own (an older program's): read it again.
    this.formatMarked = false;
    this.log(`sync: ${why}: ${counted(n, 'step')} and the record of what HQ holds dropped; planning asks HQ again`);
  }

  /**
   * HQ's data format mark (hq-data-format.ts), once per engine (and again after the prefix was
   * another sender's): one GET, and a PUT only when this program's numbers are higher than HQ's,
   * or HQ has none or a damaged one. Errors propagate: the round ends as for a failed marker read,
   * and no step runs before the mark is right.
   */
  private async markDataFormat(): Promise<void> {
    const program = this.o.dataFormat;
    if (program === undefined || this.formatMarked) return;
    let found: HqDataFormat | undefined | 'damaged';
    try {
      found = await readHqDataFormat(this.target, this.o.site);
    } catch (e) {
      if (!isSyncError(e, 'Verification')) throw e;
      this.log(`sync: ${(e as Error).message}: written again with this program's numbers`);
      found = 'damaged';
    }
    this.noteSuccess();
    const next = raisedHqDataFormat(found, program);
    if (next !== undefined) {
      await writeHqDataFormat(this.target, this.o.site, next);
      this.noteSuccess();
      this.log(`sync: HQ's data format mark for site ${this.o.site} now says data format ${next.written}, requires ${next.requires} (${next.by})`);
    }
    this.formatMarked = true;
  }

  /**
   * Whether the last check found HQ's sender marker naming another data directory, or no marker
   * where this outbox had one (nothing is sent; `status().problems` says which).
   */
  get refusedByHq(): boolean {
    return this.refused;
  }

  private async verify(key: string, h: Hashes): Promise<void> {
    const info = await this.target.head(key);
    if (!matches(info, h)) {
      throw new SyncError(
        'Verification',
        `${key} at HQ does not match what was sent: ${info ? `size ${info.size}${info.sha256 ? `, sha256 ${info.sha256.slice(0, 12)}…` : ''}${info.md5 ? `, md5 ${info.md5}` : ''}` : 'absent'} vs size ${h.size}, sha256 ${h.sha256.slice(0, 12)}…`,
      );
    }
  }

  /**
   * Whether the tag of `row` (a step of a `tag:` unit) is gone from the site: then its unit is
   * dropped (`dropDeletedTag`) and true returned. Read from the site's tag folder, never HQ.
   */
  private tagDeletedOnSite(row: OutboxRow): boolean {
    const [, table, name] = splitUnit(row.unit);
    if (table === undefined || name === undefined) return false;
    const t = this.tables.get(table) ?? this.openTables().get(table);
    if (t !== undefined && t.tags.exists(name)) return false;
    this.dropDeletedTag(row.unit, table, name, t === undefined ? `table ${table} is gone` : undefined);
    return true;
  }

  /**
   * Ends the pending steps of a tag's unit whose tag the site no longer has: cancelled, each row
   * saying it was dropped and why (the outbox's history), and kept in `sync_state` for `sync
   * status` (`SyncStatus.dropped`), in one transaction. What it already sent stays at HQ, unnamed by
   * any pointer; a tag of that name made later is a new unit (`Outbox.unitState`).
   */
  private dropDeletedTag(unit: string, table: string, tag: string, detail?: string): number {
    const why = `dropped, not sent: tag ${tag} of ${table} was deleted on the site before it reached HQ${detail === undefined ? '' : ` (${detail})`}`;
    const n = this.outbox.db.transaction(() => {
      const c = this.outbox.cancelUnit(unit, why);
      if (c > 0) this.outbox.noteDropped({ unit, why, atMs: this.clock() });
      return c;
    })();
    if (n > 0) this.log(`sync: ${unit} cancelled (${counted(n, 'step')}): tag removed on the site before it reached HQ`);
    return n;
  }

  /** A source file vanished: fine when its tag or hold tag is gone too (cancel the unit), else an error. */
  private sourceGone(row: OutboxRow): number {
    const [kind, table, name] = splitUnit(row.unit);
    const t = table === undefined ? undefined : this.openTables().get(table);
    const owner = kind === 'tag' ? name! : holdTagName(Number(name));
    if (kind === 'tag' && table !== undefined && (!t || !t.tags.exists(owner))) {
      this.dropDeletedTag(row.unit, table, owner, `its file ${row.src} is gone`);
      return 0;
    }
    if (!t || !t.tags.exists(owner)) {
      const n = this.outbox.cancelUnit(row.unit, `source ${row.src} is gone (its ${kind} was removed on the site)`);
      this.log(`sync: ${row.unit} cancelled (${counted(n, 'step')}): ${kind} removed on the site before it reached HQ`);
      return 0;
    }
    throw new SyncError('NotFound', `${row.src} is missing on the site although ${kind} ${name} of ${table} still references it`);
  }

  // ------------------------------------------------------------------------------------------
  // Loop and status.

  /** Plans and runs every `intervalMs`; wakes earlier when a retry falls due. */
  start(intervalMs: number): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.halt = false;
    let lastPlan = 0;
    const tick = async () => {
      this.timer = undefined;
      if (this.stopped) return;
      try {
        await this.exclusive(async () => {
          if (this.stopped) return;
          const now = this.clock();
          // A clock that stepped back (NTP after a boot with a wrong clock) makes planning due at
          // once: waiting for it to catch up with the last plan would plan nothing for the step.
          if (now - lastPlan >= intervalMs || now < lastPlan || this.replan) {
            lastPlan = now;
            // A round that failed to plan must not hold back the steps planned before it.
            try {
              await this.enqueueSnapshotSync();
            } catch (e) {
              this.log(`sync: planning failed: ${errorText(e)}`);
            }
          }
          await this.runOnce();
        });
      } catch (e) {
        this.log(`sync: ${errorText(e)}`);
      }
      if (this.stopped) return;
      const due = this.outbox.nextDueMs();
      const now = this.clock();
      // At most one interval: after a step back, the time to the next plan or retry by the old clock
      // can pass setTimeout's 2^31 ms, which it takes as 1 ms (a busy loop).
      // Refused by HQ's sender marker, the pending steps stay due: checked again at the next plan, not every 50 ms.
      const wait = this.replan ? 50 : Math.max(50, Math.min(intervalMs, intervalMs - (now - lastPlan), due === undefined || this.refused ? Infinity : due - now));
      this.timer = setTimeout(() => void (this.running = tick()), wait);
    };
    this.running = tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.halt = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    this.halt = false;
  }

  status(): SyncStatus {
    return statusOf(this.outbox, this.clock(), this.o.healthWindowMs ?? DEFAULT_HEALTH_WINDOW_MS, this.current, this.online);
  }

  /**
   * Plans, then runs due steps until nothing is pending or `maxRounds` runs are done, waiting
   * between runs for the next retry to fall due (50 ms – 2 s). Waits for the loop's tick in flight.
   */
  syncNow(maxRounds = 5): Promise<SyncNowResult> {
    if (!Number.isSafeInteger(maxRounds) || maxRounds < 1) throw new SyncError('InvalidArgument', `maxRounds: expected a positive integer, got ${maxRounds}`);
    return this.exclusive(async () => {
      const plan = await this.enqueueSnapshotSync();
      let sentBytes = 0;
      let rounds = 0;
      while (rounds < maxRounds) {
        const r = await this.runOnce();
        rounds++;
        sentBytes += r.sentBytes;
        if (r.replan) {
          const again = await this.enqueueSnapshotSync();
          plan.units.push(...again.units);
          plan.items += again.items;
          plan.bytes += again.bytes;
          plan.tagsCreated.push(...again.tagsCreated);
          continue;
        }
        if (this.status().pendingItems === 0 || rounds >= maxRounds || this.halt || r.refused) break;
        const wait = (this.outbox.nextDueMs() ?? this.clock()) - this.clock();
        await new Promise((res) => setTimeout(res, Math.min(2000, Math.max(50, wait))));
      }
      return { plan, sentBytes, rounds, status: this.status() };
    });
  }

  /** Runs f after every earlier tick and syncNow() of this engine has settled. */
  private exclusive<T>(f: () => Promise<T>): Promise<T> {
    const run = this.turn.then(f, f);
    this.turn = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    await this.stop();
    await this.turn;
    try {
      if (this.ownsDb) this.outbox.db.close();
    } finally {
      this.lock.release();
    }
  }
}

/**
 * What tells one JSON of a tag from another: the snapshot it names (a tag deleted and created
 * again elsewhere), its creation time and retention (a renewal).
 */
function tagStamp(t: Pick<Tag, 'snapshot' | 'createTimeMillis' | 'retainedMillis'>): string {
  return `${t.snapshot.id}/${t.createTimeMillis ?? ''}/${t.retainedMillis ?? ''}`;
}

/** The snapshot id in a `tagStamp`. */
const stampedSnapshotId = (stamp: string): number => Number(stamp.slice(0, stamp.indexOf('/')));

function splitUnit(unit: string): [string, string | undefined, string | undefined] {
  const a = unit.indexOf(':');
  const b = unit.indexOf(':', a + 1);
  if (a < 0) return [unit, undefined, undefined];
  if (b < 0) return [unit.slice(0, a), unit.slice(a + 1), undefined];
  return [unit.slice(0, a), unit.slice(a + 1, b), unit.slice(b + 1)];
}

interface ContractFile {
  /** '/'-separated, relative to contracts/. */
  rel: string;
  /** Bytes: a name that is not UTF-8 is reached by its own bytes. */
  path: Buffer;
  /** Why it cannot be sent (planContracts reports it). */
  problem?: string;
}

const SEP = Buffer.from(sep);

/**
 * The files under contracts/ (dot names left out), sorted by path. Walked by the names' bytes: a
 * name that is not UTF-8 (an archive from a Windows PC) came back from a string listing with U+FFFD
 * in it, a path no read could open (ENOENT), and that failed the whole planning round. A folder
 * that cannot be listed is one problem, not the walk's end.
 */
function contractFiles(dir: string): ContractFile[] {
  const out: ContractFile[] = [];
  const walk = (path: Buffer, rel: string): void => {
    let entries: Array<{ name: Buffer; isDirectory(): boolean; isFile(): boolean }>;
    try {
      entries = readdirSync(path, { withFileTypes: true, encoding: 'buffer' });
    } catch (e) {
      out.push({ rel: rel === '' ? '' : `${rel}/`, path, problem: `cannot be listed: ${errorText(e)}` });
      return;
    }
    for (const d of entries) {
      if (d.name[0] === 0x2e) continue; // '.'
      const name = d.name.toString('utf8');
      const r = rel === '' ? name : `${rel}/${name}`;
      const p = Buffer.concat([path, SEP, d.name]);
      if (!isUtf8(d.name)) {
        if (d.isDirectory() || d.isFile()) out.push({ rel: r, path: p, problem: 'its name is not UTF-8 (rename it; the other contracts go)' });
      } else if (d.isDirectory()) walk(p, r);
      else if (d.isFile()) out.push({ rel: r, path: p });
    }
  };
  walk(Buffer.from(dir), '');
  return out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/** Why checkKey refuses `key`, or undefined. */
function keyRefusal(key: string): string | undefined {
  try {
    checkKey(key);
    return undefined;
  } catch (e) {
    if (isSyncError(e)) return e.message;
    throw e;
  }
}

/** A site path fit for a message: control characters and backslashes escaped, as checkKey prints keys. */
const printable = (s: string): string => JSON.stringify(s).slice(1, -1);

/** `sync_state` key of the tables and contract files whose last planning failed (`notePlanFailures`). */
const PLAN_FAILURES = 'planFailures';

interface PlanFailure {
  /** When the table's (or contract file's) planning began failing (the first round of the run that still fails). */
  sinceMs: number;
  error: string;
}

/** The refusal the last check of HQ's sender marker found (checkSender), if any. */
function senderConflict(outbox: Outbox): { sinceMs: number; message: string; gone: boolean } | undefined {
  const v = outbox.getState(SENDER_CONFLICT);
  if (v === undefined) return undefined;
  try {
    const c = JSON.parse(v) as { sinceMs?: unknown; message?: unknown; gone?: unknown };
    return { sinceMs: typeof c.sinceMs === 'number' ? c.sinceMs : 0, message: typeof c.message === 'string' ? c.message : v, gone: c.gone === true };
  } catch {
    return { sinceMs: 0, message: v, gone: false };
  }
}

/** `n` and its noun, in the singular for one ("1 step", "2 steps"). */
function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** `sync_state` key of the step failing longest while HQ answers (`noteStepFailure`). */
export const STUCK_STEP = 'stuckStep';

/** `failingOf`'s entry for a unit's pointer (keys are never empty). */
const POINTER_STEP = '';

/** A superseded unit's step that was failing while HQ answered (`failingOf`). */
interface FailingStep {
  id: number;
  attempts: number;
  error: string | null;
  failing: { answersAtLastFailure: number; aloneSinceMs: number | undefined };
}

interface StuckStep {
  /** The step's outbox id (ids are never reused: AUTOINCREMENT). */
  id: number;
  /** Since when it has failed while HQ answered other requests. */
  sinceMs: number;
}

function storedStuckStep(outbox: Outbox): StuckStep | undefined {
  const v = outbox.getState(STUCK_STEP);
  if (v === undefined) return undefined;
  try {
    const s = JSON.parse(v) as { id?: unknown; sinceMs?: unknown };
    return Number.isSafeInteger(s.id) && typeof s.sinceMs === 'number' ? { id: s.id as number, sinceMs: s.sinceMs } : undefined;
  } catch {
    return undefined;
  }
}

/** The stored `stuckStep` while its step is still pending, with what the outbox says of it. */
function stuckStepOf(outbox: Outbox): (StuckStep & { what: string; attempts: number; error: string | null }) | undefined {
  const s = storedStuckStep(outbox);
  if (s === undefined) return undefined;
  const r = outbox.db.prepare(`SELECT unit, op, key, attempts, last_error FROM sync_outbox WHERE id = ? AND state = 'pending'`).get(s.id) as
    | { unit: string; op: string; key: string | null; attempts: number; last_error: string | null }
    | undefined;
  return r === undefined ? undefined : { ...s, what: r.key ?? `${r.op} of ${r.unit}`, attempts: r.attempts, error: r.last_error };
}

function planFailures(outbox: Outbox): Record<string, PlanFailure> {
  const v = outbox.getState(PLAN_FAILURES);
  if (v === undefined) return {};
  try {
    return JSON.parse(v) as Record<string, PlanFailure>;
  } catch {
    return {};
  }
}

/** The status of an outbox that holds nothing yet (or could not be read). */
export const EMPTY_SYNC_STATUS: Readonly<SyncStatus> = Object.freeze({
  online: false,
  pendingItems: 0,
  pendingBytes: 0,
  oldestUnsyncedMs: 0,
  lastSuccessMs: null,
  current: null,
  recentItems: 0,
  recentBytes: 0,
  healthy: true,
  problems: [],
  lastError: null,
});

/** Status from the outbox alone (what `tilstand sync status` shows while another process syncs). */
export function statusOf(outbox: Outbox, nowMs: number, windowMs: number, current: SyncStatus['current'] = null, online?: boolean): SyncStatus {
  const t = outbox.totals(nowMs, windowMs);
  const lastSuccess = outbox.getState('lastSuccessMs');
  const lastError = outbox.getState('lastErrorMs');
  const lastSuccessMs = lastSuccess === undefined ? null : Number(lastSuccess);
  const oldestUnsyncedMs = t.oldestCreatedMs === null ? 0 : Math.max(0, nowMs - t.oldestCreatedMs);
  // A table that cannot be planned (a file missing on the site: corruption, not weather) has no
  // step to wait; it is reported at once and stalls health once it has failed for a whole window,
  // whatever the other tables move meanwhile.
  const failing = Object.entries(planFailures(outbox)).sort(([, a], [, b]) => a.sinceMs - b.sinceMs);
  const failingSinceMs = failing.length === 0 ? null : failing[0]![1].sinceMs;
  // A table's entry is its name; a contract file's (planContracts) `contracts/<path>`: no table name has a '/'.
  const planError = failing.length === 0 ? null : failing.map(([what, f]) => `${what.startsWith('contracts/') ? 'not sent' : 'planning'} ${what}: ${f.error}`).join('; ');
  // HQ's sender marker names another data directory, or HQ no longer holds the one this directory
  // had there: unhealthy at once (no window: waiting for the line mends neither), and said first.
  const refused = senderConflict(outbox);
  // A step that has failed for a whole window while HQ answered other requests (a share that
  // always corrupts one file) stalls health however much else moves, and is said first after a
  // refusal; a failure that then succeeds, or that the line explains, never gets here.
  const stuck = stuckStepOf(outbox);
  const stalledStep = stuck !== undefined && nowMs - Math.min(stuck.sinceMs, nowMs) >= windowMs ? stuck : undefined;
  const stepError =
    stalledStep === undefined
      ? null
      : `${stalledStep.what} has failed since ${new Date(stalledStep.sinceMs).toISOString()} while HQ took other requests (${counted(stalledStep.attempts, 'attempt')}): ${stalledStep.error ?? 'no error recorded'}`;
  // HQ refuses this site's credentials (a 403: a key revoked, a policy): unhealthy at once, as
  // waiting mends nothing, and said after a sender refusal; the steps' own errors would repeat it.
  const denied = accessDeniedMessage(outbox);
  const waiting = (stalledStep !== undefined && t.lastError === stalledStep.error) || (t.lastError !== null && denied?.errors.has(t.lastError)) ? null : t.lastError;
  const errors = [refused?.message ?? null, denied?.message ?? null, stepError, planError, waiting].filter((x): x is string => x !== null);
  const problems: SyncProblem[] = [];
  if (refused !== undefined) problems.push(refused.gone ? 'gone' : 'refused');
  if (denied !== undefined) problems.push('credentials');
  if (stalledStep !== undefined) problems.push('step');
  if (!(t.pendingItems === 0 || t.recentItems > 0 || oldestUnsyncedMs < windowMs)) problems.push('waiting');
  if (failingSinceMs !== null && nowMs - failingSinceMs >= windowMs) problems.push('planning');
  return {
    online: online ?? (lastSuccessMs !== null && lastSuccessMs >= Number(lastError ?? 0)),
    pendingItems: t.pendingItems,
    pendingBytes: t.pendingBytes,
    oldestUnsyncedMs,
    lastSuccessMs,
    current: current ? { ...current } : null,
    recentItems: t.recentItems,
    recentBytes: t.recentBytes,
    // Stalled = something has waited a whole window and nothing moved in it: not at once when a
    // step is planned after a quiet hour, nor at the first failure of a line that just went down.
    // A refusal (of this PC, of the credentials) is unhealthy at once: waiting mends nothing.
    healthy: problems.length === 0,
    problems,
    // All: a file or table left out of planning must not hide why the planned steps wait (HQ down).
    lastError: errors.length === 0 ? null : errors.join('; '),
    dropped: outbox.dropped().flatMap((d): DroppedTag[] => {
      if (nowMs - d.atMs >= DROPPED_SHOWN_MS) return [];
      // Every record is a tag's unit (dropDeletedTag): its table and tag as values, not the English `why`.
      const [kind, table, tag] = splitUnit(d.unit);
      return kind === 'tag' && table !== undefined && tag !== undefined ? [{ ...d, table, tag, kind: 'deleted' }] : [];
    }),
  };
}
