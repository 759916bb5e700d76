// Snapshot expiration and file cleanup as one mark-and-sweep (the lesson of Paimon's issues
// #1288, #2409, #5229, #6479: files shared between snapshots and tags must be judged against
// everything that is still retained, never per deleted snapshot).
//
//   1. Snapshots are expired oldest first while all hold: more than `snapshot.num-retained.min`
//      remain, the snapshot is not pinned by a reader in this process (any Table object of the
//      table: Table.pinnedSnapshots) nor unread by a consumer, and the next snapshot is older
//      than `snapshot.time-retained` (as Paimon) or it is beyond `snapshot.num-retained.max`; at most
//      `snapshot.expire.limit` per run. Only pins from EARLIEST on bound this: a pin below it (a
//      reader at a tag of an expired snapshot) has no snapshot file to keep.
//   2. EARLIEST is rewritten and the snapshot files are unlinked — before any data file goes, so
//      a reader never finds a snapshot whose files are gone (Paimon #6978).
//   3. Tags are listed (once, after 2, so a tag another process created before this listing is
//      marked); those whose retention time has passed are deleted.
//   4. Mark: every manifest, manifest list, index and data file of every remaining snapshot and
//      tag, and of every pinned snapshot (a reader at a tag keeps its files when the tag expires
//      or is deleted while it reads), and what Java's long-lived changelogs (changelog/changelog-N)
//      still list. Sweep: the files no longer marked, except the `keep` set
//      (a writer's flushed, uncommitted files).
// A crash between 2 and 4 leaves garbage, never damage; the next run (or orphan cleanup)
// removes it. REQUIRES: the caller holds the writer lock, so no commit is in flight.
//
// Incremental mark (per Table, `MarkState`): a "root" is the file set of one snapshot content,
// named by its manifest lists and index manifest (immutable, uniquely named files, so a root's
// files never change); tags of a retained snapshot share its root. Each root's files are computed
// once, and every file carries the number of retained roots that reference it. A run adds the
// roots that appeared since the last run and releases those that are gone (expired snapshots,
// expired or deleted tags, whoever deleted them); files whose count drops to zero are the sweep's
// candidates. Pinned snapshots are roots as tags are, released by the first run after the last
// unpin. So a commit costs the snapshot and tag listings (validated caches: snapshot-manager and
// tags.ts) plus work proportional to what changed, not to the retained history.
// Spread mark: the first mark of a Table object (every retained root: at a site's 1,000+ tags,
// thousands of manifest reads, ~0.3–0.7 s of CPU) is spread over runs when the caller asks
// (`spreadMark`: expiration after a commit, on the event loop). A run marks roots while under
// MARK_BUDGET_MS (at least MARK_ROOTS_MIN, at most MARK_ROOTS_MAX); the others wait in
// `MarkState.unmarked` for the next runs, which go on marking whether or not they expire
// anything. While any root is unmarked (a retained one, or one this process expired before it was
// marked) nothing is deleted but snapshot and tag files (steps 1–3, which delete no other file):
// files released meanwhile wait in `deferred`, since a root not marked yet may reference them.
// The run that completes the mark sweeps by listing (deleting every unmarked file, so also the
// files of a root dropped unmarked: one that left the retained set before its turn), plus the
// deferred files outside the table's directory by path, when still unmarked. A root this process
// expired is marked and released at once when its turn comes. Explicit calls (expire(), orphan
// removal, a rollback's deletion) complete the mark in the call.
// The sweep deletes the released files. It lists the directories instead (deleting every
// unmarked file, as orphan cleanup does) on the first complete run of a Table object, after the
// writer lock changed hands, after a failed run, and every FULL_SWEEP_EVERY-th sweep — so files no
// snapshot ever referenced (a failed commit's, a crashed process's) still go at the next start,
// or within that many runs. removeOrphanFiles always lists, with the same roots and keep set, and
// also deletes the temporary files a kill inside an atomic create or replace left (snapshot, tag,
// schema, hint, consumer files), older than its threshold (sweepTempFiles); a listing sweep of
// expiration deletes those an hour old (TEMP_FILE_SWEEP_AGE_MS).
// What the caches rely on: manifest and manifest-list files are never rewritten (unique names);
// tag files are never rewritten in place (validated by file identity, tags.ts); snapshot files
// change only under the writer lock (the snapshot cache is dropped when the lock's token differs
// from the last run's). Any error drops the Table's mark state (the next run starts over).

import { join, sep } from 'node:path';
import type { Table } from './table.ts';
import { changelogEntries, changelogManifestNames } from './changelog.ts';
import { minConsumerNextSnapshot } from './consumer.ts';
import { deltaFromPrevious } from './incremental.ts';
import { localWallClockMillis } from './data-file.ts';
import { markIndexFiles } from './dv-expire.ts';
import { isCorruption } from './errors.ts';
import { TEMP_NAME } from './file-io.ts';
import { ADD, type ManifestEntry } from './manifest.ts';
import { snapshotFromJson, type Snapshot } from './snapshot.ts';
import type { TagInfo } from './tags.ts';

export interface ExpireResult {
  expiredSnapshots: number[];
  expiredTags: string[];
  deletedFiles: string[];
}

const NON_DATA_DIRS = new Set(['schema', 'snapshot', 'manifest', 'tag', 'consumer', 'index', 'changelog', 'statistics', 'branch']);
const BUCKET_DIR = /^bucket-\d+$/;
const DATA_FILE = /^(data|changelog)-/;
/** A sweep lists the directories at least every this many sweeps (see the header). */
export const FULL_SWEEP_EVERY = 64;
/** Expiration's listing sweep deletes a killed atomic write's temporary file this old (see sweep). */
export const TEMP_FILE_SWEEP_AGE_MS = 3_600_000;

/**
 * A spread mark (`spreadMark`) marks roots for this long per run: what it bounds is the stall of
 * the event loop, and a root's cost varies widely (with how many of its manifests are cached
 * already, and how many files it holds), which a count of roots would not follow…
 */
export const MARK_BUDGET_MS = 20;
/** …but at least this many (progress on a loaded machine; a table of few roots is marked at once)… */
export const MARK_ROOTS_MIN = 16;
/** …and at most this many, so a run's reads are bounded whatever the machine's speed (first-mark-spread.test.ts counts them). */
export const MARK_ROOTS_MAX = 64;

const MANIFEST = 0;
const INDEX = 1;
const DATA = 2;

/** One file referenced by retained roots: `n` of them. */
interface Ref {
  readonly path: string;
  readonly kind: typeof MANIFEST | typeof INDEX | typeof DATA;
  n: number;
}

/** A root not marked yet: `dying` when this process expired it (its files are released once marked). */
interface Unmarked {
  readonly s: Snapshot;
  dying: boolean;
}

class MarkState {
  /** Every file referenced by at least one retained root, by path. */
  readonly refs = new Map<string, Ref>();
  /** Retained roots (rootKey) and their files, each once. */
  readonly roots = new Map<string, Ref[]>();
  /** Roots found but not marked yet (a spread mark), in the order found; none when the mark is complete. */
  readonly unmarked = new Map<string, Unmarked>();
  /** Files released while the mark was incomplete; swept (when still unmarked) once it is complete. */
  deferred: Ref[] = [];
  /** Data file paths by manifest entry (entries of cached manifests are shared by many roots). */
  readonly dataPaths = new WeakMap<ManifestEntry, string>();
  /** The writer lock file's bytes (pid, host, random token) at the last run. */
  lock: Buffer | undefined;
  /** The next sweep lists the directories. */
  listNext = true;
  sweeps = 0;
}

const states = new WeakMap<Table, MarkState>();

/**
 * Whether `table`'s expiration mark is incomplete (a spread mark with roots left to mark, or files
 * released meanwhile waiting for its sweep): until it completes, expiration deletes nothing but
 * snapshot and tag files, so files nothing retained references may still be on disk.
 */
export function expirationMarkPending(table: Table): boolean {
  const state = states.get(table);
  return state !== undefined && (state.unmarked.size > 0 || state.deferred.length > 0);
}

/**
 * Runs `f` with the table's mark state; any error drops the state, so the next run rebuilds it
 * and lists the directories.
 */
function withState<T>(table: Table, f: (state: MarkState) => T): T {
  let state = states.get(table);
  if (state === undefined) {
    state = new MarkState();
    states.set(table, state);
  }
  try {
    // The snapshot cache is sound while this process holds the lock without a break (only the
    // holder creates and removes snapshot files); otherwise another process may have rolled back
    // and re-used ids — read the snapshots again, and list the directories for its leftovers.
    const lock = table.fileIO.readFileIfExists(table.paths.lockFile);
    if (lock === undefined || state.lock === undefined || !lock.equals(state.lock)) {
      table.snapshots.invalidate();
      state.listNext = true;
      // A spread mark's roots this object expired before their turn: another writer may have
      // completed its own mark since and deleted their manifests, rightly (they are expired), and
      // marking one then threw a false Corruption out of a commit already made. Nothing retained
      // needs them; their files go at the listing sweep that ends the mark
      // (first-mark-lock-handover.test.ts).
      for (const [k, u] of state.unmarked) if (u.dying) state.unmarked.delete(k);
    }
    state.lock = lock;
    return f(state);
  } catch (e) {
    states.delete(table);
    throw e;
  }
}

export interface ExpireOptions {
  /**
   * Mark at most about MARK_BUDGET_MS of new roots in this run, deferring the sweep while any
   * root is unmarked (see the header): for expiration after a commit. Otherwise the mark is
   * completed in this run.
   */
  spreadMark?: boolean;
}

/** The options of expiration after a commit (the commit paths of the writers). */
export const SPREAD_MARK: ExpireOptions = Object.freeze({ spreadMark: true });

/**
 * `keep`: paths of data files a writer has flushed but not yet committed; unreferenced by any
 * snapshot, yet not orphans (the sweep would otherwise delete them under the writer).
 */
export function expireSnapshots(table: Table, keep?: ReadonlySet<string>, options: ExpireOptions = {}): ExpireResult {
  return withState(table, (state) => expireWith(table, state, keep, options.spreadMark === true));
}

function expireWith(table: Table, state: MarkState, keep: ReadonlySet<string> | undefined, spread: boolean): ExpireResult {
  const o = table.schema.options;
  const now = table.clock();
  const result: ExpireResult = { expiredSnapshots: [], expiredTags: [], deletedFiles: [] };
  const listed = table.snapshots.listIds();
  const latest = table.snapshots.latestId();
  const earliest = table.snapshots.earliestId();
  // A crash between rewriting EARLIEST and unlinking the expired snapshot files leaves files below
  // EARLIEST; they were expired already (found by the crash suite): finish the job first.
  const leftovers: number[] = [];
  /** Contents released in this run (their roots may never have been marked: committed since the last sweep). */
  const dying: Snapshot[] = [];
  let first = 0; // index in `listed` of the first snapshot still there
  if (earliest !== undefined) {
    for (const id of listed) {
      if (id >= earliest) break;
      table.snapshots.remove(id);
      leftovers.push(id);
      first++;
    }
  }
  if (latest !== undefined && earliest !== undefined) {
    // A pin below EARLIEST (a reader at a tag of an expired snapshot) has no snapshot file to
    // keep; counting it would stop all expiration while that reader is open.
    let minPinned = Infinity;
    for (const id of table.pinnedSnapshotIds()) if (id >= earliest && id < minPinned) minPinned = id;
    // Consumers (consumer/consumer-<id>) protect every snapshot they have not read yet — and the
    // one before, where a delta is the change from it (a table with deletion vectors).
    const consumerNext = minConsumerNextSnapshot(table, now) - (deltaFromPrevious(table) ? 1 : 0);
    const maxExclusive = Math.min(latest - o.snapshotsRetainedMin + 1, minPinned, consumerNext);
    for (let id = earliest; id < maxExclusive && result.expiredSnapshots.length < o.snapshotExpireLimit; id++) {
      const s = table.snapshots.tryGet(id);
      if (!s) continue;
      const beyondMax = latest - id + 1 > o.snapshotsRetainedMax;
      // As Paimon's ExpireSnapshotsImpl: a snapshot is the state of every time up to the next
      // one's commit, so it goes only once the next snapshot is older than the retention time.
      const next = table.snapshots.tryGet(id + 1);
      const tooOld = (next?.timeMillis ?? s.timeMillis) < now - o.snapshotTimeRetainedMs;
      if (!beyondMax && !tooOld) break;
      result.expiredSnapshots.push(id);
      dying.push(s);
    }
    if (result.expiredSnapshots.length > 0) {
      table.snapshots.writeEarliestHint(result.expiredSnapshots[result.expiredSnapshots.length - 1]! + 1);
      for (const id of result.expiredSnapshots) table.snapshots.remove(id);
    } else if (!table.fileIO.exists(table.paths.earliestHint)) {
      table.snapshots.writeEarliestHint(earliest);
    }
  }
  // Tags: one listing (cached and validated in tags.ts), after the snapshot files are gone.
  const localNow = localWallClockMillis(now);
  const tags: TagInfo[] = [];
  for (const t of table.tags.list()) {
    if (t.createTimeMillis !== undefined && t.retainedMillis !== undefined && t.createTimeMillis + t.retainedMillis < localNow) {
      table.tags.removeListed(t.name);
      result.expiredTags.push(t.name);
      dying.push(t.snapshot);
    } else tags.push(t);
  }
  const expired = new Set(result.expiredSnapshots);
  result.expiredSnapshots.unshift(...leftovers);
  // An incomplete mark goes on in every run, whether or not this one expired anything.
  if (result.expiredSnapshots.length > 0 || result.expiredTags.length > 0 || state.unmarked.size > 0) {
    const retained: number[] = [];
    for (let i = first; i < listed.length; i++) if (!expired.has(listed[i]!)) retained.push(listed[i]!);
    result.deletedFiles = sweep(table, state, retained, tags, dying, 0, keep, false, spread);
  }
  return result;
}

/**
 * Deletes unreferenced files older than `olderThanMs` (age by modification time). `keep`: as
 * expireSnapshots's — a writer's uncommitted files, which no snapshot references yet.
 */
export function removeOrphanFiles(table: Table, olderThanMs: number, keep?: ReadonlySet<string>): string[] {
  return withState(table, (state) => {
    const deleted = sweep(table, state, table.snapshots.listIds(), table.tags.list(), [], olderThanMs, keep, true, false);
    deleted.push(...sweepTempFiles(table, olderThanMs));
    return deleted;
  });
}

/**
 * Deletes the files of `removed` — the contents of the snapshots and tags a rollback took away —
 * that no retained snapshot, tag or pinned reader references; nothing else (Paimon's RollbackHelper
 * deletes the rolled-back snapshots' files the same way). No directory is listed: a file no
 * snapshot names yet may be another process's write under way (a tag or consumer written without
 * the writer lock, a Java writer's files before its commit), which orphan removal at age 0 took.
 * A removed content whose files do not read (damaged: a rollback is the way past it), or
 * `unread` (a removed snapshot file that did not parse), leaves its files to the next listing
 * sweep of expiration, which deletes whatever nothing retained references.
 */
export function deleteRemovedFiles(table: Table, removed: readonly Snapshot[], unread: boolean): string[] {
  return withState(table, (state) => {
    if (unread) state.listNext = true;
    return sweepReleased(table, mark(table, state, table.snapshots.listIds(), table.tags.list(), removed, false, true)!, undefined);
  });
}

/**
 * Per directory where `createAtomic`/`replaceAtomic` write, the names whose temporary files
 * (`.<name>.<uuid>.tmp`, file-io.ts TEMP_NAME) orphan removal deletes: a kill between the temp
 * file's write and its link or rename leaves it, and nothing else ever removes it.
 */
const TEMP_FILE_TARGETS: readonly (readonly [dir: string, name: RegExp])[] = [
  ['snapshot', /^(?:snapshot-\d+|EARLIEST|LATEST)$/],
  ['tag', /^tag-./],
  ['schema', /^schema-\d+$/],
  ['consumer', /^consumer-./],
  // Java's long-lived changelogs' LATEST hint, rewritten by a destructive rollback (rollback.ts).
  ['changelog', /^LATEST$/],
];

/**
 * Deletes the temporary files of killed atomic writes older than `minAgeMs` (by modification
 * time) in `snapshot/`, `tag/`, `schema/`, `consumer/` and `changelog/`; only names that are exactly a
 * temporary name of a file that directory holds. Tags and consumers are written without the
 * writer lock (another process's tag create, a follower), so a young one may be a write under
 * way: the age threshold is what keeps it, as for every other orphan.
 */
function sweepTempFiles(table: Table, minAgeMs: number): string[] {
  const io = table.fileIO;
  if (!io.listHidden) return []; // a FileIO that cannot show hidden files: nothing to judge
  const now = Date.now();
  const deleted: string[] = [];
  for (const [sub, target] of TEMP_FILE_TARGETS) {
    const dir = join(table.paths.root, sub);
    for (const name of io.listHidden(dir)) {
      const m = TEMP_NAME.exec(name);
      if (!m || !target.test(m[1]!)) continue;
      const path = `${dir}/${name}`;
      // Gone since the listing (its write finished and removed it): nothing to do.
      const mtime = io.stat ? io.stat(path)?.mtimeMs : io.exists(path) ? io.mtimeMs(path) : undefined;
      if (mtime === undefined || (minAgeMs > 0 && now - mtime < minAgeMs)) continue;
      io.remove(path);
      deleted.push(path);
    }
  }
  return deleted;
}

/** Root keys by snapshot object (the snapshot and tag caches hand out the same objects each run). */
const rootKeys = new WeakMap<Snapshot, string>();

/** Names a snapshot's file set: its manifest lists and index manifest (immutable, unique names). */
function rootKey(s: Snapshot): string {
  let k = rootKeys.get(s);
  if (k === undefined) {
    k = `${s.baseManifestList}\n${s.deltaManifestList}\n${s.changelogManifestList ?? ''}\n${s.indexManifest ?? ''}`;
    rootKeys.set(s, k);
  }
  return k;
}

/**
 * Brings the marks up to date with the retained snapshots, tags and pinned snapshots; returns the
 * files no retained root references any more (released in this call, and those released while
 * the mark was incomplete), or undefined while the mark is incomplete (`spread`: the roots left
 * unmarked wait for the next runs, and nothing may be deleted). `dying`: the contents of the
 * snapshots and tags expired in this run, released too even if they were never marked (a
 * snapshot committed since the last sweep).
 */
function mark(
  table: Table,
  state: MarkState,
  snapshotIds: readonly number[],
  tags: readonly TagInfo[],
  dying: readonly Snapshot[],
  spread: boolean,
  skipDamagedDying = false,
): Ref[] | undefined {
  const current = new Map<string, Snapshot>();
  for (const id of snapshotIds) {
    const s = table.snapshots.tryGet(id);
    if (s === undefined) continue;
    const k = rootKey(s);
    if (!current.has(k)) current.set(k, s);
  }
  for (const t of tags) {
    const k = rootKey(t.snapshot);
    if (!current.has(k)) current.set(k, t.snapshot);
  }
  // Java's long-lived changelogs (changelog/changelog-N, written by its expiration when
  // `changelog.num-retained.*` outlive the snapshots) keep what their readers need.
  for (const c of longLivedChangelogs(table)) current.set(`${LONG_LIVED}${rootKey(c)}`, c);
  // Readers in this process (any Table object of the table) keep what they read, also when their
  // snapshot file or tag is gone (a tag expired while a reader at it is open).
  const pinned = new Set<string>();
  for (const s of table.pinnedSnapshots()) {
    const k = rootKey(s);
    if (!current.has(k)) {
      current.set(k, s);
      pinned.add(k);
    }
  }
  // The roots to mark: retained ones not marked yet, then this run's dying ones never marked.
  // A root that left the retained set before its turn is dropped: nothing retained needs it, and
  // the listing sweep that ends an incomplete mark finds its files.
  for (const [k, u] of state.unmarked) if (!u.dying && !current.has(k)) state.unmarked.delete(k);
  for (const [k, s] of current) if (!state.roots.has(k) && !state.unmarked.has(k)) state.unmarked.set(k, { s, dying: false });
  for (const s of dying) {
    const k = rootKey(s);
    const u = state.unmarked.get(k);
    if (u !== undefined) u.dying ||= !current.has(k);
    else if (!current.has(k) && !state.roots.has(k)) state.unmarked.set(k, { s, dying: true });
  }
  // New roots first, so a file moving from a released root to a new one never reaches zero (in a
  // spread mark it may: it then waits in `deferred`, and is swept only if still unmarked).
  const start = performance.now();
  let marked = 0;
  for (const [k, u] of state.unmarked) {
    if (spread && marked >= MARK_ROOTS_MIN && (marked >= MARK_ROOTS_MAX || performance.now() - start >= MARK_BUDGET_MS)) break;
    let refs: Ref[];
    try {
      refs = k.startsWith(LONG_LIVED) ? changelogRootRefs(table, state, u.s) : rootRefs(table, state, u.s);
    } catch (e) {
      if (!isCorruption(e)) throw e;
      if (pinned.has(k)) {
        // A pinned content whose manifests are gone already (expired by another process before
        // this one held the lock) has nothing left to keep; its reader fails on its own.
        current.delete(k);
      } else if (u.dying && !current.has(k) && skipDamagedDying) {
        state.listNext = true; // its files go at the next listing sweep (rootRefs made no Ref)
      } else throw e;
      state.unmarked.delete(k);
      continue;
    }
    for (const r of refs) r.n++;
    state.roots.set(k, refs);
    state.unmarked.delete(k);
    marked++;
  }
  const released: Ref[] = [];
  for (const [k, refs] of state.roots) {
    if (current.has(k)) continue;
    state.roots.delete(k);
    for (const r of refs) {
      if (--r.n === 0) {
        state.refs.delete(r.path);
        released.push(r);
      }
    }
  }
  if (state.unmarked.size > 0) {
    // Incomplete: a root not marked yet may reference any released file. The run that completes
    // the mark lists the directories (so also finds the files of roots dropped above).
    for (const r of released) state.deferred.push(r);
    state.listNext = true;
    return undefined;
  }
  if (state.deferred.length > 0) {
    // Released while incomplete; a root marked since may have taken the path again (a new Ref).
    const seen = new Set(released.map((r) => r.path));
    for (const r of state.deferred) {
      if (state.refs.has(r.path) || seen.has(r.path)) continue;
      seen.add(r.path);
      released.push(r);
    }
    state.deferred = [];
  }
  return released;
}

/** Key prefix of a long-lived changelog's root (`changelog/changelog-N`). */
const LONG_LIVED = 'changelog\n';

/**
 * The files of one root, each once: manifest lists, manifests, index manifest and files, data and
 * changelog files. Every file is read before any Ref is made, so a failed read leaves no
 * unreferenced Ref in `state.refs` (the listing sweep would take it for live).
 */
function rootRefs(table: Table, state: MarkState, s: Snapshot): Ref[] {
  const found = new Map<string, Ref['kind']>();
  const add = (path: string, kind: Ref['kind']) => {
    if (!found.has(path)) found.set(path, kind);
  };
  const manifestDir = `${table.paths.manifestDir}/`;
  for (const n of table.manifests.referencedNames(s)) add(manifestDir + n, MANIFEST);
  // Changelog files live exactly as long as a snapshot or tag that lists them (changelog.*
  // retention falls back to the snapshot retention; see CHANGELOG-DESIGN.md).
  for (const n of changelogManifestNames(table, s)) add(manifestDir + n, MANIFEST);
  // Index manifests (snapshot `indexManifest`) and the index files they list (dv-expire.ts).
  const indexManifests = new Set<string>();
  const indexFiles = new Set<string>();
  markIndexFiles(table, [s], indexManifests, indexFiles);
  for (const n of indexManifests) add(manifestDir + n, MANIFEST);
  for (const p of indexFiles) add(p, INDEX);
  for (const e of table.manifests.liveFiles(s)) add(dataPath(table, state, e), DATA);
  for (const e of changelogEntries(table, s)) add(dataPath(table, state, e), DATA);
  return refsOf(state, found);
}

const CHANGELOG_FILE = /^changelog-\d+$/;

/** The long-lived changelogs in `changelog/` (Paimon's ChangelogManager; snapshot JSON each). */
function longLivedChangelogs(table: Table): Snapshot[] {
  const dir = join(table.paths.root, 'changelog');
  const out: Snapshot[] = [];
  for (const name of table.fileIO.list(dir)) {
    if (!CHANGELOG_FILE.test(name)) continue;
    const bytes = table.fileIO.readFileIfExists(`${dir}/${name}`);
    if (bytes !== undefined) out.push(snapshotFromJson(bytes.toString('utf8'), `${dir}/${name}`)); // else expired by Java meanwhile
  }
  return out;
}

/**
 * The files a long-lived changelog keeps, as Paimon's expiration leaves them (SnapshotDeletion
 * with the changelog decoupled; ChangelogDeletion removes them later): with a changelog producer
 * the changelog manifest list, its manifests and changelog files; without, the base and delta
 * manifest lists, their manifests and the data files the delta added. Lists Java has already
 * removed are skipped.
 */
function changelogRootRefs(table: Table, state: MarkState, c: Snapshot): Ref[] {
  const found = new Map<string, Ref['kind']>();
  const manifestDir = `${table.paths.manifestDir}/`;
  const list = (name: string, size: number | null, data: boolean) => {
    if (!table.fileIO.exists(manifestDir + name)) return;
    found.set(manifestDir + name, MANIFEST);
    for (const m of table.manifests.readList(name, size)) {
      found.set(manifestDir + m.fileName, MANIFEST);
      if (data) for (const e of table.manifests.readManifest(m)) if (e.kind === ADD) found.set(dataPath(table, state, e), DATA);
    }
  };
  if (c.changelogManifestList) list(c.changelogManifestList, c.changelogManifestListSize, true);
  else {
    list(c.baseManifestList, c.baseManifestListSize, false);
    list(c.deltaManifestList, c.deltaManifestListSize, true);
  }
  return refsOf(state, found);
}

/** The mark's shared Ref of each file `found` (made on first sight). */
function refsOf(state: MarkState, found: ReadonlyMap<string, Ref['kind']>): Ref[] {
  const out: Ref[] = [];
  for (const [path, kind] of found) {
    let r = state.refs.get(path);
    if (r === undefined) {
      r = { path, kind, n: 0 };
      state.refs.set(path, r);
    }
    out.push(r);
  }
  return out;
}

function dataPath(table: Table, state: MarkState, e: ManifestEntry): string {
  let p = state.dataPaths.get(e);
  if (p === undefined) {
    p = table.dataFilePath(e.partition, e.bucket, e.file.fileName, e.file.externalPath);
    state.dataPaths.set(e, p);
  }
  return p;
}

function sweep(
  table: Table,
  state: MarkState,
  snapshotIds: readonly number[],
  tags: readonly TagInfo[],
  dying: readonly Snapshot[],
  minAgeMs: number,
  keep: ReadonlySet<string> | undefined,
  list: boolean,
  spread: boolean,
): string[] {
  const released = mark(table, state, snapshotIds, tags, dying, spread);
  if (released === undefined) return []; // the mark is incomplete: nothing is deleted yet
  const full = list || state.listNext || state.sweeps % FULL_SWEEP_EVERY === 0;
  const deleted = full ? sweepListed(table, state, minAgeMs, keep) : sweepReleased(table, released, keep);
  // A released file outside the table's directory (Java's `_EXTERNAL_PATH`) is in no listing: it
  // goes by its path, as Java's expiration deletes it (DataFilePathFactory.toPath). Orphans there
  // are never looked for: only what a snapshot of this table named is ever deleted there.
  if (full) {
    const inside = join(table.paths.root, sep);
    const outside = released.filter((r) => !r.path.startsWith(inside));
    if (outside.length > 0) deleted.push(...sweepReleased(table, outside, keep));
  }
  // A listing sweep of expiration (the one that completes a Table object's first mark, so soon
  // after a site's start, and every FULL_SWEEP_EVERY-th) also takes the temporary files of killed atomic
  // writes once they are an hour old: a tag create of another process (without the writer lock)
  // may be writing one now, but not for an hour. Without this a site, which never runs orphan
  // removal, kept each one for good.
  if (full && !list) deleted.push(...sweepTempFiles(table, TEMP_FILE_SWEEP_AGE_MS));
  state.sweeps++;
  // An age threshold leaves young unmarked files (released ones too): the next sweep lists again.
  if (full) state.listNext = minAgeMs > 0;
  return deleted;
}

/** Deletes the released files (those a retained root referenced until now). */
function sweepReleased(table: Table, released: Ref[], keep: ReadonlySet<string> | undefined): string[] {
  const io = table.fileIO;
  const deleted: string[] = [];
  released.sort((a, b) => a.kind - b.kind); // manifests, index files, data files: the listing sweep's order
  for (const r of released) {
    // The same files the listing sweep would consider: any name in manifest/, index-* in index/,
    // data-* and changelog-* in the bucket directories.
    const name = r.path.slice(r.path.lastIndexOf('/') + 1);
    if (r.kind === INDEX && !name.startsWith('index-')) continue;
    if (r.kind === DATA && (!DATA_FILE.test(name) || keep?.has(r.path))) continue;
    if (!io.exists(r.path)) continue;
    io.remove(r.path);
    if (r.kind === DATA) table.cache.drop(r.path);
    else if (r.kind === MANIFEST) table.manifests.forget(name);
    deleted.push(r.path);
  }
  return deleted;
}

/** Lists `manifest/`, `index/` and the bucket directories and deletes every unmarked file. */
function sweepListed(table: Table, state: MarkState, minAgeMs: number, keep: ReadonlySet<string> | undefined): string[] {
  const io = table.fileIO;
  const live = state.refs;
  const now = Date.now();
  const deleted: string[] = [];
  const old = (path: string) => minAgeMs <= 0 || now - io.mtimeMs(path) >= minAgeMs;
  const manifestDir = table.paths.manifestDir;
  for (const name of io.list(manifestDir)) {
    const path = `${manifestDir}/${name}`;
    if (!live.has(path) && old(path)) {
      io.remove(path);
      table.manifests.forget(name);
      deleted.push(path);
    }
  }
  const indexDir = join(table.paths.root, 'index');
  for (const name of io.list(indexDir)) {
    const path = `${indexDir}/${name}`;
    if (name.startsWith('index-') && !live.has(path) && old(path)) {
      io.remove(path);
      deleted.push(path);
    }
  }
  const walk = (dir: string, depth: number) => {
    for (const name of io.list(dir)) {
      if (depth === 0 && NON_DATA_DIRS.has(name)) continue;
      if (BUCKET_DIR.test(name)) {
        const bucketDir = join(dir, name);
        for (const f of io.list(bucketDir)) {
          const fp = `${bucketDir}/${f}`;
          if (!live.has(fp) && !keep?.has(fp) && DATA_FILE.test(f) && old(fp)) {
            io.remove(fp);
            table.cache.drop(fp);
            deleted.push(fp);
          }
        }
      } else if (name.includes('=') && depth < 16) {
        walk(join(dir, name), depth + 1);
      }
    }
  };
  walk(table.paths.root, 0);
  return deleted;
}
