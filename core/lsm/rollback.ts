// Rollback (Paimon's rollback_to and rollback_to_as_latest). Both run through TableWriter, which
// holds the writer lock and re-reads its bucket state afterwards.
//
// Destructive (`rollbackTo(target)`): tags of later snapshots are deleted, LATEST is rewritten,
// then the later snapshots are removed newest first, then Java's long-lived changelogs after the
// target (`removeLongLivedChangelogs`); consumers positioned after the target are
// moved back to target+1; finally the files of the removed snapshots and tags that no remaining
// snapshot, tag or pinned reader references are deleted (expire.ts deleteRemovedFiles) — not
// every unreferenced file: one may be another process's write under way. A crash at any point
// leaves a readable table: the remaining snapshots are always a contiguous prefix of the old
// history. A tag whose snapshot has expired can be the target: its
// snapshot file is written back from the tag (the tag kept its files) before the earliest later
// snapshot goes (EARLIEST and LATEST name that one meanwhile), so a kill never leaves the table
// without a snapshot — Paimon's RollbackHelper removes them all first, and a kill there left the
// table empty with the rollback refused when run again (rollback-crash.test.ts). LATEST is written
// before any snapshot goes, as Paimon does, so Paimon's readers find the latest after a kill too.
//
// Non-destructive (`keepHistory`): one new OVERWRITE snapshot whose delta DELETEs the current
// files the target does not have and ADDs the target's files the current state does not have.
// Nothing is deleted; the target's files must still exist (a retained snapshot or a tag
// guarantees that). With the lookup producer the snapshot also lists a changelog: the diff from
// the current state to the restored one, so changelog readers stay consistent across it.

import { deleteRemovedFiles } from './expire.ts';
import { listConsumers, writeConsumer } from './consumer.ts';
import { invalidArgument, isCorruption, LsmError, notFound } from './errors.ts';
import type { BucketChanges } from './changelog.ts';
import { diffBuckets, type SnapshotRef } from './incremental.ts';
import { ADD, DELETE, entryIdentifier, type ManifestEntry } from './manifest.ts';
import type { Snapshot } from './snapshot.ts';
import type { Table } from './table.ts';
import { checkWritableOptions } from './write-options.ts';
import { WriterLock } from './writer-lock.ts';

export interface RollbackResult {
  /** The latest snapshot afterwards: the target, or the new OVERWRITE snapshot. */
  snapshotId: number;
  removedSnapshots: number[];
  removedTags: string[];
  deletedFiles: string[];
}

/** The snapshot a rollback restores: a retained snapshot, or a tag's snapshot. */
export function rollbackTarget(table: Table, ref: SnapshotRef): { snapshot: Snapshot; fromTag: boolean } {
  if (typeof ref === 'string' && table.tags.exists(ref)) return { snapshot: table.tags.get(ref).snapshot, fromTag: true };
  const id = typeof ref === 'number' ? ref : /^\d+$/.test(ref) ? Number(ref) : NaN;
  if (Number.isNaN(id)) throw notFound(`cannot roll back to tag '${ref}': it does not exist`);
  const s = table.snapshots.tryGet(id);
  if (!s) {
    throw notFound(
      `cannot roll back ${table.name} to snapshot ${id}: it is not retained (${table.snapshots.earliestId() ?? 'none'}..${table.snapshots.latestId() ?? 'none'}); a tag can restore an expired snapshot`,
    );
  }
  return { snapshot: s, fromTag: false };
}

/** REQUIRES: the writer lock, and a writer with nothing buffered or pending. */
export function rollbackDestructive(table: Table, ref: SnapshotRef): RollbackResult {
  const { snapshot: target } = rollbackTarget(table, ref);
  const latest = table.snapshots.latestId();
  if (latest === undefined) throw notFound(`table ${table.name} has no snapshot`);
  if (target.id > latest) throw invalidArgument(`snapshot ${target.id} is after the latest snapshot ${latest}`);
  const result: RollbackResult = { snapshotId: target.id, removedSnapshots: [], removedTags: [], deletedFiles: [] };
  /** The contents taken away, whose files go at the end (read before their snapshot files go). */
  const removed: Snapshot[] = [];
  // A tag of an expired snapshot: every snapshot is after it, and it is written back. The earliest
  // of them goes only after that, so a kill never leaves the table without a snapshot (it read as
  // empty, and a rollback run again found no snapshot to start from). Its files are checked before
  // anything is removed: a refused rollback leaves every tag (it deleted the later ones before).
  const writeBack = !table.snapshots.exists(target.id);
  const last = writeBack ? table.snapshots.earliestId() : undefined;
  if (writeBack) {
    for (const e of table.manifests.liveFiles(target)) {
      const path = table.dataFilePath(e.partition, e.bucket, e.file.fileName, e.file.externalPath);
      if (!table.fileIO.exists(path)) throw new LsmError('NotFound', `cannot restore snapshot ${target.id}: its file ${path} is gone`, { path });
    }
  }
  for (const t of table.tags.list()) {
    if (t.snapshot.id > target.id) {
      table.tags.removeListed(t.name);
      result.removedTags.push(t.name);
      removed.push(t.snapshot);
    }
  }
  // LATEST first, as Paimon's RollbackHelper does: it names a snapshot that stays until the end
  // (or the one after it still exists), so a reader that trusts the hint (Paimon's findLatest,
  // which does not check that LATEST's own file exists) never meets a removed one after a kill.
  table.fileIO.replaceAtomic(table.paths.latestHint, Buffer.from(String(last ?? target.id)));
  let unread = false;
  for (let id = latest; id > target.id; id--) {
    if (!table.snapshots.exists(id)) continue;
    try {
      removed.push(table.snapshots.get(id));
    } catch (e) {
      // A damaged snapshot goes all the same (a rollback is the way past it); its files are left
      // to expiration's next listing sweep.
      if (!isCorruption(e)) throw e;
      unread = true;
    }
    if (id === last) continue;
    table.snapshots.remove(id);
    result.removedSnapshots.push(id);
  }
  if (writeBack) {
    // EARLIEST names the one later snapshot left, and LATEST is not pointed at the written-back
    // snapshot yet, so a kill before that later snapshot goes leaves the written-back one below
    // EARLIEST (not read, and removed as a leftover by expiration) and the later one the latest:
    // a snapshot of the old history, retained without a gap.
    if (last !== undefined) table.snapshots.writeEarliestHint(last);
    if (!table.snapshots.commit(target, false)) throw new LsmError('Conflict', `snapshot ${target.id} appeared during rollback`);
    if (last !== undefined) {
      // A kill between this and LATEST's rewrite leaves LATEST naming this removed snapshot, which
      // Paimon's findLatest returns (ours lists): one step, until our next writer's open repairs it.
      table.snapshots.remove(last);
      result.removedSnapshots.push(last);
      table.fileIO.replaceAtomic(table.paths.latestHint, Buffer.from(String(target.id)));
    }
    table.snapshots.writeEarliestHint(target.id);
  }
  const changelogs = removeLongLivedChangelogs(table, target.id);
  for (const c of listConsumers(table)) if (c.nextSnapshot > target.id + 1) writeConsumer(table, c.id, target.id + 1);
  // Only the removed contents' files: orphan removal at age 0 also took what another process is
  // writing without the writer lock (a tag, a consumer's progress; a Java writer's new files).
  result.deletedFiles = [...changelogs, ...deleteRemovedFiles(table, removed, unread)];
  return result;
}

const LONG_LIVED_CHANGELOG = /^changelog-(\d+)$/;

/**
 * Java's long-lived changelogs (`changelog/changelog-N`, which its expiration writes when the
 * changelog outlives its snapshot) after `targetId`, removed as Paimon's
 * RollbackHelper.cleanLongLivedChangelogs removes them: `changelog/LATEST` first names the last one
 * kept (-1 when none is: Java then lists the directory), then the files go, newest first. Left,
 * the commits after the rollback made snapshots of their ids beside a changelog of the old
 * history, which Java's changelog reads took for the new one. Only the JSON files go, as in Java;
 * the files they listed are released by the mark-and-sweep that follows (this process had marked
 * them) or are orphans for orphan removal. Returns the paths deleted.
 */
function removeLongLivedChangelogs(table: Table, targetId: number): string[] {
  const dir = `${table.paths.root}/changelog`;
  const ids: number[] = [];
  for (const name of table.fileIO.list(dir)) {
    const m = LONG_LIVED_CHANGELOG.exec(name);
    if (m) ids.push(Number(m[1]));
  }
  const later = ids.filter((id) => id > targetId).sort((a, b) => b - a);
  if (later.length === 0) return [];
  const kept = ids.filter((id) => id <= targetId);
  table.fileIO.replaceAtomic(`${dir}/LATEST`, Buffer.from(String(kept.length > 0 ? Math.max(...kept) : -1)));
  const deleted: string[] = [];
  for (const id of later) {
    const path = `${dir}/changelog-${id}`;
    table.fileIO.remove(path);
    deleted.push(path);
  }
  return deleted;
}

/**
 * A destructive rollback under the writer lock alone, for a table no writer opens on: its latest
 * snapshot, or a file that snapshot names, is damaged, and a writer reads that state when it opens
 * (`TableWriter.rollbackOnce` comes here after a writer's open failed with Corruption). The target
 * must read; every later snapshot goes, the damaged one too (`rollbackDestructive`). A rollback is
 * a write: the writer's option check applies, as to expiration without a writer.
 */
export function rollbackWithoutWriter(table: Table, ref: SnapshotRef): RollbackResult {
  const lock = WriterLock.acquire(table.paths.lockFile, `table ${table.name}`);
  try {
    table.snapshots.invalidate(); // as a writer does once it holds the lock
    checkWritableOptions(table.schema, `rolling back table ${table.name}`);
    return rollbackDestructive(table, ref);
  } finally {
    lock.release();
  }
}

/**
 * The manifest entries that turn the latest state into the target's, and the target itself.
 * Throws NotFound when a file of the target is gone.
 */
export function rollbackAsLatestEntries(table: Table, ref: SnapshotRef): { target: Snapshot; current: Snapshot; entries: ManifestEntry[] } {
  const { snapshot: target } = rollbackTarget(table, ref);
  const current = table.snapshots.latest();
  if (!current) throw notFound(`table ${table.name} has no snapshot`);
  const now = new Map(table.manifests.liveFiles(current).map((e) => [entryIdentifier(e), e]));
  const then = new Map(table.manifests.liveFiles(target).map((e) => [entryIdentifier(e), e]));
  const entries: ManifestEntry[] = [];
  for (const [id, e] of now) if (!then.has(id)) entries.push({ ...e, kind: DELETE });
  for (const [id, e] of then) {
    if (now.has(id)) continue;
    const path = table.dataFilePath(e.partition, e.bucket, e.file.fileName, e.file.externalPath);
    if (!table.fileIO.exists(path)) {
      throw new LsmError('NotFound', `cannot restore snapshot ${target.id}: its file ${path} was removed by expiration; only a retained snapshot or a tag can be restored`, { path });
    }
    entries.push({ ...e, kind: ADD });
  }
  return { target, current, entries };
}

/** The changelog of a rollback as latest: the diff from the current state to the target's. */
export function rollbackChanges(table: Table, current: Snapshot, target: Snapshot): BucketChanges[] {
  return [...diffBuckets(table, current, target)];
}
