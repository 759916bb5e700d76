// Restore: rebuild a replaced site PC's warehouse (and contracts/) from HQ's latest synced state,
// then say where each module must resend from. The restored tables hold HQ's snapshot N alone
// (EARLIEST = LATEST = N) and every synced tag; the writer continues at N+1. A table whose N at HQ
// is damaged fails the restore, or, with `fallBackToTag` (`--fall-back-to-tag`), is rolled back to
// its newest sound tag M < N (`restoredFromTag` in the note: what came after M is lost), and the
// writer continues at M+1; the resync list is then read from M.
//
// High-water marks: the ingestor commits `tilstand.hwm.<module>/<stream>` = H with the rows
// (core/ingest/progress.ts). After a restore the site has every event ≤ H of that stream in that
// table and nothing after, so it asks the module to resend after H. A stream that feeds several
// tables resends after the smallest H among them (the tables with a larger H drop the duplicates
// by their sequence fields). The note `<data>/restore-note.json` lists both; publishing to
// `tilstand/<site>/resync/<module>` is the site's job (`resyncRequests` returns the list).
//
// HQ's data format mark (hq-data-format.ts) is read first, before anything is written here or at
// HQ: an HQ a newer program sent to, whose `requires` this program does not know, is refused
// (exit 2) — restored, it would be a directory this program misreads. No mark: restored as before.
//
// A restore marks itself under way (`restore-unfinished.json`, before the first table file; gone
// once the note is written): its rerun after a kill redoes the half copy it finds without --force,
// while tables without the mark are a site's and still need --force. So the copy's files need not
// be durable one by one, only all of them once the mark goes: each is written once under its own
// name, not fsynced, and each file and each folder the restore created or wrote into is fsynced
// once, several at a time, before the note is written and the mark removed (mirror.ts
// `DeferredSync`; `hq pull` keeps a temporary file and a rename per file, for readers of its copy
// while it runs). The mark's removal is made durable last. A mark of another site's restore is
// refused without --force; with it, that site's half copy (its database folder) is removed too,
// durably, before this restore's mark replaces the one naming it. A mark that does not read as one
// (torn, empty, no site named by a string) is refused without --force; with it, it is replaced and
// only this site's folder removed.
//
// A database folder the restore removes may be a running site's (one that syncs holds the sync
// lock, which the restore takes; one that does not, only its tables' writer locks): every table's
// writer lock is taken before anything is written and held until the folder is gone.
//
// The restored directory is the site's legitimate successor: once the tables are in place it
// writes HQ's sender marker (sender.ts) with its own sender id, so the replaced PC, should it come
// back online, is the one that stops sending.
//
// HQ holds the tables, not config.json: a table of the site's own (a config.json `tables` entry
// with `columns`) comes back with its data, tags and schemas, but the site `tilstand init` then
// makes defines none, so nothing would write it. The note lists such tables (`ownTables`) and the
// command's output says what to put back. When a PC dies its config.json often goes with it, so
// the restore also drafts each such table's `tables` entry from its latest schema, which says all
// the definition said but the budget: `<data>/restored-tables.json` (`draftTableEntry`).

import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { NEXT_ID_PROPERTY } from '../inbox/decision-log.ts';
import { APPROVAL_INBOX_TABLE, DECISION_LOG_TABLE, decisionLogNextId } from '../inbox/index.ts';
import { LOG_NEXT_PROPERTY } from '../inbox/log-recovery.ts';
import { Catalog, isCorruption, localFileIO, LsmError, type Snapshot, type Table, type TableSchema, type TagInfo } from '../lsm/index.ts';
import { formatDuration } from '../lsm/cli/output.ts';
import { fsyncDir, ioError } from '../lsm/file-io.ts';
import { specDefaultOptions } from '../lsm/schema.ts';
import { typeToString } from '../lsm/types.ts';
import { TablePaths } from '../lsm/table-paths.ts';
import { WriterLock } from '../lsm/writer-lock.ts';
import { STUCK_STEP, SYNC_LOCK_FILE } from './engine.ts';
import { SyncError } from './errors.ts';
import { checkHqDataFormat, type ProgramDataFormat } from './hq-data-format.ts';
import { damageOf, DeferredSync, mirrorSite, tagOfKey, whereAtHq, type MirrorProgress } from './hq/mirror.ts';
import { siteDatabase, tablePrefix } from './names.ts';
import { openOutboxDb, Outbox } from './outbox.ts';
import { referencedFiles } from './plan.ts';
import { claimMarker, localSender, markerDir } from './sender.ts';
import type { SyncTarget } from './targets/target.ts';

export const HWM_PREFIX = 'tilstand.hwm.';
export const RESTORE_NOTE = 'restore-note.json';
/** The drafted config.json `tables` entries of the restored tables of the site's own (`draftTableEntry`). */
export const RESTORED_TABLES = 'restored-tables.json';
/**
 * A restore under way: written before the first table file, removed once the note is written. One
 * a restore left (killed, failed) tells its rerun that the tables are its own half copy, to be
 * done again without --force.
 */
export const RESTORE_UNFINISHED = 'restore-unfinished.json';

interface UnfinishedRestore {
  site: string;
  hq: string;
  startedAtMs: number;
}

export interface ResyncRequest {
  module: string;
  stream: string;
  /** Resend every event with seq > afterSeq. */
  afterSeq: number;
  /** `tilstand/<site>/resync/<module>` */
  topic: string;
  /** The high-water mark found in each restored table that has this stream. */
  tables: Record<string, number>;
}

/**
 * Tilstand's own tables (../shared/DESIGN.md, "Shared names"; core/ingest's RESERVED_TABLE_NAMES,
 * which this folder may not import, names the same: core/site's table-names.test.ts holds them
 * equal): made by the site whatever config.json says. Any other table of a site is one of its
 * own, defined in config.json.
 */
export const TILSTAND_TABLES: readonly string[] = ['work_queue', 'resources', 'stock', APPROVAL_INBOX_TABLE, DECISION_LOG_TABLE, 'dead_letters'];

export interface RestoreNote {
  site: string;
  restoredAtMs: number;
  hq: string;
  tables: Record<string, { snapshotId: number | null; tags: string[] }>;
  /**
   * The restored tables of the site's own (not Tilstand's; absent when there are none): their definitions and bindings live in
   * config.json, which HQ does not hold. Until they are put back into the restored site's
   * config.json the site neither lists nor writes these tables (sync still keeps HQ's copy).
   * Their entries, drafted from their schemas, are in `<data>/restored-tables.json`.
   */
  ownTables?: string[];
  resync: ResyncRequest[];
  /**
   * Tags damaged at HQ (their JSON torn or garbled, or naming a file HQ does not hold), left out of
   * the restored tables and not in `tables`: `tag` is `<table>/<name>`, `key` HQ's key of its JSON,
   * `error` what is wrong. Absent when there are none. `tilstand restore` names each and exits 4.
   */
  damagedTags?: { tag: string; key: string; error: string }[];
  /**
   * Tables whose latest snapshot at HQ was damaged (it names a file HQ does not hold, or a manifest
   * of it does not read), restored at their newest sound tag because the restore was asked to
   * (`fallBackToTag`, `tilstand restore --fall-back-to-tag`): `snapshotId`/`committedMs` are the
   * tag's snapshot, now the table's latest (as a destructive rollback to the tag leaves it);
   * `damagedSnapshotId`/`damagedCommittedMs` HQ's damaged latest, `key` its JSON at HQ, `error`
   * what is wrong; `lostMs` the time between the two commits — what the table committed in it is
   * not restored (the modules are asked to resend after the tag's marks: `resync`). Absent when
   * there are none. `tilstand restore` names each and exits 4.
   */
  restoredFromTag?: RestoredFromTag[];
  /**
   * The unfinished-restore mark this restore (`force`) found and replaced while it did not read as
   * one (torn, empty, not an object naming a site by a string): the file, what was wrong with it,
   * and the other database folders of the warehouse, which stay (the mark could not say whose half
   * copy any of them is). Absent when there was no such mark.
   */
  unreadableMark?: string;
  /**
   * This directory's sender id, and whether HQ's sender marker now names it. Not adopted (a
   * target that cannot be written, e.g. read-only credentials): `error` says why, and the first
   * send is refused while the marker names the replaced PC (`tilstand sync now --take-over`).
   */
  sender?: { id: string; adopted: boolean; error?: string };
}

export interface RestoredFromTag {
  table: string;
  tag: string;
  snapshotId: number;
  committedMs: number;
  damagedSnapshotId: number;
  damagedCommittedMs: number;
  lostMs: number;
  key: string;
  error: string;
}

export interface RestoreOptions {
  dataDir: string;
  target: SyncTarget;
  site: string;
  /** Replace tables already in the data directory (default: refuse). */
  force?: boolean;
  /**
   * A table whose latest snapshot at HQ is damaged is restored at its newest sound tag, what it
   * committed after that lost (`RestoreNote.restoredFromTag`), instead of failing the restore
   * (default). A table with no sound tag older than the damaged latest fails it either way.
   */
  fallBackToTag?: boolean;
  /**
   * The restoring program's data format (core/site data-format.ts, which core/sync may not import):
   * given, HQ's data format mark is read first and an HQ that requires a newer program is refused
   * before anything is written. Absent: not read.
   */
  dataFormat?: ProgramDataFormat;
  onProgress?: (p: MirrorProgress) => void;
  clock?: () => number;
}

/**
 * Every (module, stream) high-water mark in the latest snapshots of a site's tables. `unmarked`:
 * per table, streams (`<module>/<stream>`) it held rows of beyond its restored state while that
 * state has no mark of theirs (a table restored at an older tag than the stream's first event
 * there): each counts as mark 0 in that table, every event of the stream resent.
 */
export function resyncRequests(dataDir: string, site: string, unmarked: Readonly<Record<string, readonly string[]>> = {}): ResyncRequest[] {
  const catalog = new Catalog(join(dataDir, 'warehouse'));
  const db = siteDatabase(site);
  if (!catalog.databaseExists(db)) return [];
  const by = new Map<string, ResyncRequest>();
  const mark = (name: string, sk: string, n: number) => {
    const i = sk.indexOf('/');
    if (i <= 0) return;
    const module = sk.slice(0, i);
    const stream = sk.slice(i + 1);
    const r = by.get(sk) ?? { module, stream, afterSeq: n, topic: `tilstand/${site}/resync/${module}`, tables: {} };
    r.tables[name] = n;
    r.afterSeq = Math.min(r.afterSeq, n);
    by.set(sk, r);
  };
  for (const name of catalog.listTables(db)) {
    const props = catalog.getTable({ database: db, table: name }).committedProperties();
    const marked = new Set<string>();
    for (const [k, v] of Object.entries(props)) {
      if (!k.startsWith(HWM_PREFIX)) continue;
      const n = Number(v);
      if (!/^\d+$/.test(v) || !Number.isSafeInteger(n)) continue;
      const sk = k.slice(HWM_PREFIX.length);
      mark(name, sk, n);
      marked.add(sk);
    }
    for (const sk of unmarked[name] ?? []) if (!marked.has(sk)) mark(name, sk, 0);
  }
  return [...by.values()].sort((a, b) => (a.module + '/' + a.stream < b.module + '/' + b.stream ? -1 : 1));
}

export function readRestoreNote(dataDir: string): RestoreNote | undefined {
  const p = join(dataDir, RESTORE_NOTE);
  return fs.existsSync(p) ? (JSON.parse(fs.readFileSync(p, 'utf8')) as RestoreNote) : undefined;
}

/** A config.json `tables` entry drafted from a restored table's schema (core/ingest site-tables.ts reads it). */
export interface DraftTableEntry {
  table: string;
  budgetMs: number;
  decision: string;
  confirmedBy: string;
  comment?: string;
  columns: { name: string; type: string; description?: string }[];
  primaryKeys: string[];
  /** The table's partition keys, when it has any (a definition without them would not find the table as defined). */
  partitionKeys?: string[];
  options?: Record<string, string>;
}

/** A draft's budget and decision: HQ holds no budget, so these are placeholders that say so, for a person to set. */
export const DRAFT_BUDGET_MS = 60_000;
export const DRAFT_DECISION = "restored from HQ's schema: say what this table's freshness serves";
export const DRAFT_CONFIRMED_BY = 'nobody yet';

/**
 * The config.json `tables` entry that defines a table with `schema` (its latest), as a person would
 * have written it: columns in the table's order with the store's type text (key columns NOT NULL,
 * a column added later nullable, as they are: the definition then finds the table "as defined"),
 * the key, the partition keys, the options the site set, the comment. The budget is not in the schema: `budgetMs`,
 * `decision` and `confirmedBy` are placeholders that say they are to be filled in.
 */
export function draftTableEntry(name: string, schema: TableSchema): DraftTableEntry {
  // The options the table store fills in when a definition leaves them out are left out too when
  // the table has that value: the definition then makes the same schema; another value is kept.
  const filled = specDefaultOptions(schema.primaryKeys.length > 0);
  const options = Object.fromEntries(Object.entries(schema.options.raw).filter(([k, v]) => filled[k] !== v));
  return {
    table: name,
    budgetMs: DRAFT_BUDGET_MS,
    decision: DRAFT_DECISION,
    confirmedBy: DRAFT_CONFIRMED_BY,
    ...(schema.comment === undefined ? {} : { comment: schema.comment }),
    columns: schema.fields.map((f) => ({ name: f.name, type: typeToString(f.type), ...(f.description === undefined ? {} : { description: f.description }) })),
    primaryKeys: [...schema.primaryKeys],
    ...(schema.partitionKeys.length > 0 ? { partitionKeys: [...schema.partitionKeys] } : {}),
    ...(Object.keys(options).length > 0 ? { options } : {}),
  };
}

/**
 * Rebuilds the site's warehouse and contracts/ from HQ. Holds the data directory's sender lock
 * (`sync.lock`, engine.ts) throughout: a site that syncs from the directory, or a `sync now`, holds
 * it, and a restore under it (`--force`) deleted the tables that sender was reading and shipping,
 * and replaced what its outbox says HQ has. Either fails with Conflict naming the other process.
 * A site running without sync holds no sync lock but holds its tables' writer locks: a restore
 * that removes a database folder takes each of its tables' first (`lockTables`), and fails the
 * same way on a live holder.
 */
export async function restoreSite(o: RestoreOptions): Promise<RestoreNote> {
  // First, before the directory, its lock or anything at HQ is written.
  if (o.dataFormat !== undefined) await checkHqDataFormat(o.target, o.site, o.dataFormat);
  fs.mkdirSync(o.dataDir, { recursive: true });
  const lock = WriterLock.acquire(
    join(o.dataDir, SYNC_LOCK_FILE),
    `the data directory ${o.dataDir}`,
    'a restore replaces the tables a syncing site reads: stop the site (or its `tilstand sync now`) first',
  );
  try {
    return await restoreLocked(o);
  } finally {
    lock.release();
  }
}

async function restoreLocked(o: RestoreOptions): Promise<RestoreNote> {
  const warehouse = join(o.dataDir, 'warehouse');
  const catalog = new Catalog(warehouse);
  const db = siteDatabase(o.site);
  const unfinishedPath = join(o.dataDir, RESTORE_UNFINISHED);
  const found = readUnfinished(unfinishedPath);
  const mark = found.kind === 'mark' ? found.mark : undefined;
  // A mark that does not read cannot say whose half copy the warehouse holds: refused without
  // --force; with it, replaced, and only this site's folder removed (the note says so).
  if (found.kind === 'unreadable' && o.force !== true) throw unreadableMark(o, found.why);
  // Another site's restore did not finish here: its half copy would stay in the warehouse for good
  // beside this site's, and this restore's mark would replace the one that tells of it.
  const other = mark !== undefined && mark.site !== o.site ? mark : undefined;
  const otherDb = other === undefined ? undefined : halfCopyDatabase(other.site);
  const halfCopy = otherDb !== undefined && catalog.databaseExists(otherDb) ? otherDb : undefined;
  if (other !== undefined && o.force !== true) throw otherUnfinished(o, other, unfinishedPath, halfCopy !== undefined);
  // Tables an unfinished restore of this site left are its half copy, not a site: done again.
  const redo = o.force === true || mark?.site === o.site;
  if (catalog.databaseExists(db) && catalog.listTables(db).length > 0 && !redo) {
    throw new SyncError('InvalidArgument', `${join(warehouse, `${db}.db`)} already holds tables (${catalog.listTables(db).join(', ')}); restore into a fresh data directory or pass --force`);
  }
  // The database folders this restore removes: this site's (--force, or the rerun of its own
  // unfinished restore) and, with --force, the half copy of another site's unfinished restore.
  const own = redo && catalog.databaseExists(db);
  // Before anything is written: a process that writes one of those tables (a site running without
  // sync, which holds no sync lock; a `tilstand table` command) fails the restore with Conflict.
  const locks = lockTables(catalog, warehouse, [...(own ? [db] : []), ...(halfCopy !== undefined ? [halfCopy] : [])]);
  // The copy's files and folders, fsynced once each before the note (below): nobody reads the
  // copy while the sync lock is held and the mark says unfinished (a site's start refuses it), and
  // a copy cut short is done again from scratch, so no file of it needs a temporary name and a
  // rename.
  const synced = new DeferredSync();
  try {
    // Before the mark: a site.db that does not open (damaged) fails the restore with the directory
    // as it was. After it, the mark stayed over intact tables, and the site's start, `init` and
    // every rerun refused the directory as a half copy (sync-damaged-site-db.test.ts).
    forgetOutboxSteps(o.dataDir);
    // The other site's half copy goes before this site's mark replaces the one that names it, and
    // its removal is made durable first: a restore stopped after the mark (killed, an EIO on the
    // mark's folder), or a power cut that brought the folder back, left a mark naming this site
    // over that half copy, and every rerun redid this site's folder alone. Stopped before the
    // mark, the old mark still names the other site, and a rerun with --force removes what is left.
    if (halfCopy !== undefined) {
      fs.rmSync(join(warehouse, `${halfCopy}.db`), { recursive: true, force: true });
      syncFolderNow(warehouse);
    }
    const begun: UnfinishedRestore = { site: o.site, hq: o.target.description, startedAtMs: (o.clock ?? Date.now)() };
    localFileIO.replaceAtomic(unfinishedPath, Buffer.from(JSON.stringify(begun, null, 2) + '\n'));
    // This site's folder goes after the mark: stopped between the two, the folder's tables are
    // its half copy by the mark, and a rerun redoes them without --force.
    if (own) {
      fs.rmSync(join(warehouse, `${db}.db`), { recursive: true, force: true });
      synced.add(warehouse);
    }
  } finally {
    // Each lock file went with its folder: a release finds none and only forgets the lock here
    // (the copy's own writers, a fallback's rollback, take them again in this process).
    for (const l of locks) l.release();
  }
  synced.mkdirs(warehouse);
  // A damaged tag (its JSON torn at HQ, or naming a file HQ lacks) is left out and reported, as
  // `hq pull` does: failing the whole restore on one old tag left a dead site's operator nothing.
  const damagedTags: NonNullable<RestoreNote['damagedTags']> = [];
  const mirrored = await mirrorSite(o.target, o.site, warehouse, {
    contractsDir: join(o.dataDir, 'contracts'),
    deferredSync: synced,
    onDamagedTag: (key, e) => {
      const t = tagOfKey(key);
      damagedTags.push({ tag: t ? `${t.table}/${t.tag}` : key, key, error: damageOf(e) });
    },
    ...(o.onProgress ? { onProgress: o.onProgress } : {}),
  });
  if (mirrored.tables.length === 0) throw new SyncError('NotFound', `HQ (${o.target.description}) has no tables for site ${o.site}`);
  const tables: RestoreNote['tables'] = {};
  const ownTables: string[] = [];
  const entries: DraftTableEntry[] = [];
  const damagedLatest: DamagedLatest[] = [];
  for (const name of mirrored.tables) {
    const t = catalog.getTable({ database: db, table: name });
    // Every file the latest snapshot and each tag name must have come from HQ: the copy holds all
    // HQ listed. A tag's missing is left out, its JSON removed from the copy, and reported. The
    // latest's missing fails the restore (Verification, the mark left: its rerun redoes it), or,
    // asked to (`fallBackToTag`), the table is rolled back to its newest sound tag below.
    // One Table for every tag: its manifest store keeps what it read by name, and the tags, listed
    // in snapshot order, share most manifests, so each is read once per restore, not once per tag
    // (restore-many-tags.test.ts). One that does not read is not kept: each tag naming it is found.
    for (const tag of t.listTags()) {
      const missing = missingFile(t, tag.snapshot);
      if (missing === undefined) continue;
      const key = `${tablePrefix(o.site, name)}tag/tag-${tag.name}`;
      fs.rmSync(t.paths.tagFile(tag.name), { force: true });
      synced.add(dirname(t.paths.tagFile(tag.name)));
      damagedTags.push({ tag: `${name}/${tag.name}`, key, error: `corruption in ${whereAtHq(o.target, key)}: ${missing}` });
    }
    const latest = t.latestSnapshot();
    if (latest !== undefined) {
      const missing = missingFile(t, latest);
      if (missing !== undefined) {
        const key = `${tablePrefix(o.site, name)}snapshot/snapshot-${latest.id}`;
        // The newest tag of an older snapshot (the damaged tags are gone from the copy by now).
        const older = t.listTags().filter((x) => x.snapshot.id < latest.id);
        const tag = older.sort((a, b) => b.snapshot.id - a.snapshot.id || b.snapshot.timeMillis - a.snapshot.timeMillis)[0];
        damagedLatest.push({ name, t, latest, key, error: `corruption in ${whereAtHq(o.target, key)}: ${missing}`, ...(tag ? { tag } : {}) });
      }
    }
    tables[name] = { snapshotId: latest?.id ?? null, tags: t.listTags().map((x) => x.name) };
    if (TILSTAND_TABLES.includes(name)) continue;
    ownTables.push(name);
    entries.push(draftTableEntry(name, t.schema));
  }
  const restoredFromTag = fallBack(o, damagedLatest);
  if (restoredFromTag.some((r) => r.table === DECISION_LOG_TABLE)) reserveLostLogIds(catalog, db);
  for (const r of restoredFromTag) {
    const t = catalog.getTable({ database: db, table: r.table });
    tables[r.table] = { snapshotId: t.latestSnapshot()?.id ?? r.snapshotId, tags: t.listTags().map((x) => x.name) };
  }
  // Everything the copy wrote, and what the check and a rollback removed from it (in folders the
  // copy wrote into), is on disk before HQ's marker names this directory and before the mark goes
  // (a rollback's and the log's commit write through core/lsm's FileIO, which syncs what they write).
  await synced.flush();
  const restoredAtMs = (o.clock ?? Date.now)();
  // The drafts of their config.json entries; none without such tables, and one a restore with
  // --force left from an earlier restore goes: it would name tables this warehouse may not have.
  const drafts = join(o.dataDir, RESTORED_TABLES);
  if (ownTables.length > 0) localFileIO.replaceAtomic(drafts, Buffer.from(JSON.stringify(entries, null, 2) + '\n'));
  else fs.rmSync(drafts, { force: true });
  const note: RestoreNote = {
    site: o.site,
    restoredAtMs,
    hq: o.target.description,
    tables,
    ...(ownTables.length > 0 ? { ownTables } : {}),
    ...(damagedTags.length > 0 ? { damagedTags } : {}),
    ...(restoredFromTag.length > 0 ? { restoredFromTag } : {}),
    ...(found.kind === 'unreadable' ? { unreadableMark: `${found.why}; replaced, and only site ${o.site}'s database folder removed (${otherDatabases(warehouse, db)})` } : {}),
    // From the tables as restored: a table rolled back to its tag resends after the tag's marks.
    resync: resyncRequests(o.dataDir, o.site, unmarkedStreams(restoredFromTag, damagedLatest)),
    sender: await adoptMarker(o, restoredAtMs),
  };
  // Temp file, fsync, rename: a crash mid-write leaves the old note or none, never a torn one
  // the site's next start would fail to parse.
  localFileIO.replaceAtomic(join(o.dataDir, RESTORE_NOTE), Buffer.from(JSON.stringify(note, null, 2) + '\n'));
  fs.rmSync(unfinishedPath, { force: true });
  // The mark's removal made durable, last: lost in a power cut after the restored site had
  // committed, it came back, the site refused to start, and the rerun it asks for would remove
  // what the site wrote since.
  synced.add(o.dataDir);
  await synced.flush();
  return note;
}

/**
 * The writer lock (core/lsm writer-lock.ts) of every table in the database folders `dbs`, which the
 * restore is about to remove, held until they are gone. A running site's ingest and inbox hold
 * their tables' locks from open, so one running without sync (no sync lock) fails the restore
 * here with Conflict naming the table and its process, nothing written; a lock whose process is
 * gone is taken over. On a failure the locks already taken are released.
 */
function lockTables(catalog: Catalog, warehouse: string, dbs: readonly string[]): WriterLock[] {
  const locks: WriterLock[] = [];
  try {
    for (const d of dbs) {
      const dir = join(warehouse, `${d}.db`);
      for (const name of catalog.listTables(d)) {
        locks.push(
          WriterLock.acquire(
            new TablePaths(join(dir, name)).lockFile,
            `table ${name} of ${dir}`,
            `a restore removes ${dir}, whose tables a running site writes: stop the site (or the command writing the table) first; the data directory is unchanged`,
          ),
        );
      }
    }
  } catch (e) {
    for (const l of locks) l.release();
    throw e;
  }
  return locks;
}

/** The database of the site an unfinished restore's mark names, or undefined when the name is no site id (nothing is removed for it). */
function halfCopyDatabase(site: unknown): string | undefined {
  try {
    return siteDatabase(site as string);
  } catch {
    return undefined;
  }
}

/** The refusal of a restore without --force into a directory whose unfinished restore is another site's. */
function otherUnfinished(o: RestoreOptions, other: UnfinishedRestore, markPath: string, halfCopyThere: boolean): SyncError {
  const db = halfCopyDatabase(other.site);
  const begun = typeof other.startedAtMs === 'number' && Math.abs(other.startedAtMs) <= 8.64e15 ? `, begun ${iso(other.startedAtMs)}` : '';
  // Named only while it is there (a --force restore stopped after removing it left the mark).
  const copy = db === undefined || !halfCopyThere ? '' : ` (${join(o.dataDir, 'warehouse', `${db}.db`)})`;
  return new SyncError(
    'InvalidArgument',
    `${o.dataDir} holds an unfinished restore of site ${String(other.site)} (from HQ ${String(other.hq)}${begun}; ${markPath}), not of site ${o.site}: ` +
      `finish it with \`tilstand restore --data ${o.dataDir} --hq <that HQ> --site ${String(other.site)}\`, ` +
      `or restore site ${o.site} here with --force: --force removes site ${String(other.site)}'s half copy${copy} and restores site ${o.site} in its place`,
  );
}

/**
 * decision_log restored at an older tag beside an approval_inbox whose commits claim log ids after
 * it (`LOG_NEXT_PROPERTY`): the log's next id moves up to that claim in one commit of no rows, so
 * the lost entries' ids stay unused. Left below it, the Inbox's open took the gap for a crash
 * between its two commits (log-recovery.ts) and rebuilt the last inbox commit's entries from the
 * log's next id on — ids approval_inbox's rows name as other proposals' first entries (a trail
 * that began with someone else's approval), with a warning of a crash that never was.
 */
function reserveLostLogIds(catalog: Catalog, db: string): void {
  if (!catalog.tableExists({ database: db, table: APPROVAL_INBOX_TABLE })) return;
  const claimed = Number(catalog.getTable({ database: db, table: APPROVAL_INBOX_TABLE }).committedProperties()[LOG_NEXT_PROPERTY]);
  const log = catalog.getTable({ database: db, table: DECISION_LOG_TABLE });
  const next = decisionLogNextId(log);
  if (!Number.isSafeInteger(claimed) || next === undefined || claimed <= next) return;
  const w = log.newWriter({ commitUser: 'tilstand-inbox' });
  try {
    w.commit({ [NEXT_ID_PROPERTY]: String(claimed) });
  } finally {
    w.close();
  }
}

/** A table whose latest snapshot at HQ is damaged, and the newest sound tag of an older snapshot it has. */
interface DamagedLatest {
  name: string;
  t: Table;
  latest: Snapshot;
  /** HQ's key of the latest's JSON. */
  key: string;
  error: string;
  tag?: TagInfo;
}

/**
 * Per table restored at a tag, the streams whose marks HQ's damaged latest had and the tag's
 * snapshot lacks: the table took their first events after the tag, so every event is to be resent
 * (the damaged snapshot's JSON reads; its files do not).
 */
function unmarkedStreams(restored: readonly RestoredFromTag[], damaged: readonly DamagedLatest[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const r of restored) {
    const d = damaged.find((x) => x.name === r.table)!;
    const had = d.tag?.snapshot.properties ?? {};
    const streams = Object.keys(d.latest.properties ?? {}).filter((k) => k.startsWith(HWM_PREFIX) && !(k in had));
    if (streams.length > 0) out[r.table] = streams.map((k) => k.slice(HWM_PREFIX.length));
  }
  return out;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Tables whose latest snapshot at HQ is damaged: refused (Verification, exit 4; the unfinished mark
 * stays, so a rerun redoes the copy), naming what `--fall-back-to-tag` would restore and lose,
 * unless the restore was asked to fall back and each has a sound older tag. Then each is rolled
 * back to its tag as `tilstand table rollback` does (destructively: LATEST = EARLIEST = the tag's
 * snapshot, written back from the tag; the damaged snapshot and its files leave the copy, HQ is not
 * touched here), and the returned list says what was restored from where and what was lost.
 */
function fallBack(o: RestoreOptions, damaged: readonly DamagedLatest[]): RestoredFromTag[] {
  if (damaged.length === 0) return [];
  const errors = damaged.map((d) => d.error).join('; ');
  const without = damaged.filter((d) => d.tag === undefined);
  if (o.fallBackToTag !== true && without.length === 0) {
    const what = damaged.map((d) => {
      const tag = d.tag!;
      const lostMs = Math.max(0, d.latest.timeMillis - tag.snapshot.timeMillis);
      return `${d.name} is restored at its newest sound tag ${tag.name} (snapshot ${tag.snapshot.id}, committed ${iso(tag.snapshot.timeMillis)}) and what ${d.name} committed after it is lost (up to the damaged snapshot ${d.latest.id}, committed ${iso(d.latest.timeMillis)}, ${formatDuration(lostMs)} later)`;
    });
    throw new SyncError(
      'Verification',
      `HQ's copy is damaged: ${errors}; the restore is not complete: mend HQ's copy and run it again, or run it again with --fall-back-to-tag, with which ${what.join('; ')}; the modules are then asked to resend after the tags' marks`,
    );
  }
  if (without.length > 0) {
    // --fall-back-to-tag cannot help (all of them or none fall back), so it is not offered.
    throw new SyncError('Verification', `HQ's copy is damaged: ${errors}; the restore is not complete (rerun it once HQ's copy is mended): ${without.map((d) => `${d.name} has no sound tag at HQ to fall back to`).join('; ')}`);
  }
  const out: RestoredFromTag[] = [];
  for (const d of damaged) {
    const tag = d.tag!;
    d.t.rollbackTo(tag.name);
    out.push({
      table: d.name,
      tag: tag.name,
      snapshotId: tag.snapshot.id,
      committedMs: tag.snapshot.timeMillis,
      damagedSnapshotId: d.latest.id,
      damagedCommittedMs: d.latest.timeMillis,
      lostMs: Math.max(0, d.latest.timeMillis - tag.snapshot.timeMillis),
      key: d.key,
      error: d.error,
    });
  }
  return out;
}

/**
 * What of snapshot `s` (the latest, or a tag's) the restored copy of `t` lacks, i.e. HQ does not
 * hold (the copy has every file HQ listed), or a manifest of it that does not read: said in words,
 * or undefined when it is whole.
 */
function missingFile(t: Table, s: Snapshot): string | undefined {
  const lists = [s.baseManifestList, s.deltaManifestList, ...(s.changelogManifestList ? [s.changelogManifestList] : [])];
  for (const n of lists) if (!fs.existsSync(t.paths.manifestFile(n))) return `it names manifest/${n}, which HQ does not hold`;
  let files;
  try {
    files = referencedFiles(t, s);
  } catch (e) {
    if (!(e instanceof LsmError) || !(isCorruption(e) || e.kind === 'NotFound')) throw e;
    return `a manifest it names does not read: ${e.message}`;
  }
  for (const f of files) if (!fs.existsSync(f.path)) return `it names ${f.rel}, which HQ does not hold`;
  return undefined;
}

/**
 * The site of a restore into `data` that did not finish (killed, failed), or undefined: its tables
 * are a half copy, which `init` and `start` refuse (a site run on it, its rerun would remove what
 * the site wrote since). `'?'` when the mark does not read as one (`readUnfinished`): a restore
 * refuses it without --force (`unreadableMark`).
 */
export function unfinishedRestore(data: string): string | undefined {
  const found = readUnfinished(join(data, RESTORE_UNFINISHED));
  return found.kind === 'none' ? undefined : found.kind === 'mark' ? found.mark.site : '?';
}

/** What `restore-unfinished.json` holds: nothing, a mark, or a file that does not read as a mark (`why`: what is wrong with it). */
type MarkFound = { kind: 'none' } | { kind: 'mark'; mark: UnfinishedRestore } | { kind: 'unreadable'; why: string };

/**
 * The mark of a restore that did not finish, read once. It is written whole (replaceAtomic), yet a
 * file there may be torn or empty (a file system that lost the rename's data in a power cut, a
 * copy of the directory cut short) or hold anything: all that is not an object naming a site by a
 * string is unreadable, said with the file's path, never thrown.
 */
function readUnfinished(path: string): MarkFound {
  const unreadable = (what: string): MarkFound => ({ kind: 'unreadable', why: `${path} does not read as an unfinished restore's mark: ${what}` });
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (e) {
    // No file there: none, or a path through a file (ENOTDIR), where the restore or `init` then
    // fails on the directory itself, naming it (as `existsSync`, which the reading had before).
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'none' };
    return unreadable((e as Error).message);
  }
  if (text.trim() === '') return unreadable('it is empty');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return unreadable(`it is not JSON (${(e as Error).message})`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return unreadable(`it holds ${v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`}, not an object naming a site`);
  const site = (v as { site?: unknown }).site;
  if (typeof site !== 'string') return unreadable(site === undefined ? 'it names no site' : `its site is ${JSON.stringify(site)}, not a site id in quotes`);
  return { kind: 'mark', mark: v as UnfinishedRestore };
}

/** The refusal of a restore without --force over a mark that does not read (`readUnfinished`); the directory is left as it is. */
function unreadableMark(o: RestoreOptions, why: string): SyncError {
  const warehouse = join(o.dataDir, 'warehouse');
  const db = siteDatabase(o.site);
  const others = otherDatabases(warehouse, db);
  return new SyncError(
    'InvalidArgument',
    `${why}; it cannot say whose restore did not finish in ${o.dataDir}: restore site ${o.site} here with --force, ` +
      `which replaces the mark and site ${o.site}'s database folder (${join(warehouse, `${db}.db`)}); ${others}` +
      (others.endsWith(')') ? '' : ' (remove a half copy of another site among them by hand)'),
  );
}

/** The database folders in `warehouse` other than `db`'s, in words: a restore that replaces a mark that does not read leaves them. */
function otherDatabases(warehouse: string, db: string): string {
  let names: string[];
  try {
    names = fs.readdirSync(warehouse).filter((n) => n.endsWith('.db') && n !== `${db}.db`).sort();
  } catch {
    names = [];
  }
  return names.length === 0 ? 'other database folders in the warehouse stay (there are none)' : `other database folders in the warehouse stay: ${names.join(', ')}`;
}

/**
 * Fsyncs folder `dir` now, making the removal of an entry durable; a refusal that says the file
 * system does not sync folders (core/lsm `DIR_SYNC_NOT_SUPPORTED`) is passed over, any other
 * failure (EIO) is an IOError naming the folder (core/lsm file-io.ts `fsyncDir`).
 */
function syncFolderNow(dir: string): void {
  try {
    fsyncDir(dir);
  } catch (e) {
    throw ioError('sync', dir, e);
  }
}

/**
 * Drops the steps of the outbox in `dataDir` (when it has one) and its record of what HQ holds, as
 * for a new target: they are those of the tables the restore replaces. A pointer still pending (HQ
 * unreachable when the replaced tables committed) carries their snapshot's JSON: the restored
 * site's first sync sent it, pointed HQ's hints at it and pruned HQ's snapshot, so HQ held the
 * replaced tables' state, not the restored one, until the site committed again
 * (restore-over-outbox.test.ts). Planning then asks HQ, as for a fresh site.db (a `head` per unit
 * and file; nothing HQ has is sent again). The removals of run tags the replaced tables expired go
 * too: the restored tables have those tags again, from HQ, and expire them themselves.
 */
function forgetOutboxSteps(dataDir: string): void {
  const path = join(dataDir, 'site.db');
  if (!fs.existsSync(path)) return;
  const outbox = new Outbox(openOutboxDb(path));
  try {
    outbox.forgetTarget();
    outbox.setState(STUCK_STEP, null); // a step dropped here
  } finally {
    outbox.db.close();
  }
}

/**
 * Writes HQ's sender marker with this directory's sender id (minted in its outbox, `site.db`),
 * after the tables are in place: a restore that failed midway leaves the prefix to its sender.
 * A marker that cannot be written does not undo the restore; the note says why.
 */
async function adoptMarker(o: RestoreOptions, nowMs: number): Promise<NonNullable<RestoreNote['sender']>> {
  const outbox = new Outbox(openOutboxDb(join(o.dataDir, 'site.db')));
  try {
    const id = localSender(outbox, o.dataDir);
    try {
      // The outbox's own marker: its first send does not take it for a take-over from outside.
      await claimMarker(outbox, o.target, o.site, { sender: id, dataDir: markerDir(o.dataDir), sinceMs: nowMs, by: 'restore' });
    } catch (e) {
      return { id, adopted: false, error: (e as Error).message };
    }
    return { id, adopted: true };
  } finally {
    outbox.db.close();
  }
}
