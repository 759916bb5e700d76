// Snapshot expiration and file cleanup as one mark-and-sweep (the lesson of Paimon's issues
// #1288, #2409, #5229, #6479: files shared between snapshots and tags must be judged against
// everything that is still retained, never per deleted snapshot).
//
//   1. Tags whose retention time has passed are deleted.
//   2. Snapshots are expired oldest first while all hold: more than `snapshot.num-retained.min`
//      remain, the snapshot is not pinned by a reader in this process, and it is older than
//      `snapshot.time-retained` or beyond `snapshot.num-retained.max`; at most
//      `snapshot.expire.limit` per run.
//   3. EARLIEST is rewritten and the snapshot files are unlinked — before any data file goes, so
//      a reader never finds a snapshot whose files are gone (Paimon #6978).
//   4. Mark: every manifest, manifest list and data file of every remaining snapshot and tag.
//      Sweep: every other file in `manifest/` and in the bucket directories.
// A crash between 3 and 4 leaves garbage, never damage; the next run (or orphan cleanup)
// removes it. REQUIRES: the caller holds the writer lock, so no commit is in flight.

import { join } from 'node:path';
import type { Table } from './table.ts';
import { changelogEntries, changelogManifestNames } from './changelog.ts';
import { minConsumerNextSnapshot } from './consumer.ts';
import { markIndexFiles } from './dv-expire.ts';

export interface ExpireResult {
  expiredSnapshots: number[];
  expiredTags: string[];
  deletedFiles: string[];
}

const NON_DATA_DIRS = new Set(['schema', 'snapshot', 'manifest', 'tag', 'consumer', 'index', 'changelog', 'statistics', 'branch']);

/**
 * `keep`: paths of data files a writer has flushed but not yet committed; unreferenced by any
 * snapshot, yet not orphans (the sweep would otherwise delete them under the writer).
 */
export function expireSnapshots(table: Table, keep?: ReadonlySet<string>): ExpireResult {
  const o = table.schema.options;
  const now = table.clock();
  const result: ExpireResult = { expiredSnapshots: [], expiredTags: [], deletedFiles: [] };
  for (const t of table.tags.expired()) {
    table.tags.delete(t.name);
    result.expiredTags.push(t.name);
  }
  const latest = table.snapshots.latestId();
  const earliest = table.snapshots.earliestId();
  // A crash between rewriting EARLIEST and unlinking the expired snapshot files leaves files below
  // EARLIEST; they were expired already (found by the crash suite): finish the job first.
  const leftovers: number[] = [];
  if (earliest !== undefined) {
    for (const id of table.snapshots.listIds()) {
      if (id >= earliest) break;
      table.snapshots.remove(id);
      leftovers.push(id);
    }
  }
  if (latest !== undefined && earliest !== undefined) {
    const pinned = table.pinnedSnapshotIds();
    const minPinned = pinned.length > 0 ? Math.min(...pinned) : Infinity;
    // Consumers (consumer/consumer-<id>) protect every snapshot they have not read yet.
    const maxExclusive = Math.min(latest - o.snapshotsRetainedMin + 1, minPinned, minConsumerNextSnapshot(table, now));
    for (let id = earliest; id < maxExclusive && result.expiredSnapshots.length < o.snapshotExpireLimit; id++) {
      const s = table.snapshots.tryGet(id);
      if (!s) continue;
      const beyondMax = latest - id + 1 > o.snapshotsRetainedMax;
      const tooOld = s.timeMillis < now - o.snapshotTimeRetainedMs;
      if (!beyondMax && !tooOld) break;
      result.expiredSnapshots.push(id);
    }
    if (result.expiredSnapshots.length > 0) {
      table.snapshots.writeEarliestHint(result.expiredSnapshots[result.expiredSnapshots.length - 1]! + 1);
      for (const id of result.expiredSnapshots) table.snapshots.remove(id);
    } else if (!table.fileIO.exists(table.paths.earliestHint)) {
      table.snapshots.writeEarliestHint(earliest);
    }
  }
  result.expiredSnapshots.unshift(...leftovers);
  if (result.expiredSnapshots.length > 0 || result.expiredTags.length > 0) {
    result.deletedFiles = sweep(table, 0, keep);
  }
  return result;
}

/** Deletes unreferenced files older than `olderThanMs` (age by modification time). */
export function removeOrphanFiles(table: Table, olderThanMs: number): string[] {
  return sweep(table, olderThanMs);
}

interface LiveSet {
  manifests: Set<string>;
  dataFiles: Set<string>;
  /** Names in `index/` (deletion-vector and other index files) listed by a live index manifest. */
  indexFiles: Set<string>;
}

function mark(table: Table): LiveSet {
  const live: LiveSet = { manifests: new Set(), dataFiles: new Set(), indexFiles: new Set() };
  const snapshots = table.snapshots.listIds().map((id) => table.snapshots.tryGet(id)).filter((s) => s !== undefined);
  const all = [...snapshots, ...table.tags.list().map((t) => t.snapshot)];
  const seen = new Set<string>();
  for (const s of all) {
    const key = `${s.baseManifestList}|${s.deltaManifestList}`;
    if (seen.has(key)) continue;
    seen.add(key);
    for (const n of table.manifests.referencedNames(s)) live.manifests.add(n);
    for (const e of table.manifests.liveFiles(s)) live.dataFiles.add(table.dataFilePath(e.partition, e.bucket, e.file.fileName));
  }
  // Changelog files live exactly as long as a snapshot or tag that lists them (changelog.*
  // retention falls back to the snapshot retention; see CHANGELOG-DESIGN.md).
  for (const s of all) {
    for (const n of changelogManifestNames(table, s)) live.manifests.add(n);
    for (const e of changelogEntries(table, s)) live.dataFiles.add(table.dataFilePath(e.partition, e.bucket, e.file.fileName));
  }
  // Index manifests (snapshot `indexManifest`) and the index files they list (dv-expire.ts).
  markIndexFiles(table, all, live.manifests, live.indexFiles);
  return live;
}

function sweep(table: Table, minAgeMs: number, keep?: ReadonlySet<string>): string[] {
  const live = mark(table);
  const io = table.fileIO;
  const now = Date.now();
  const deleted: string[] = [];
  const old = (path: string) => minAgeMs <= 0 || now - io.mtimeMs(path) >= minAgeMs;
  for (const name of io.list(table.paths.manifestDir)) {
    const path = table.paths.manifestFile(name);
    if (!live.manifests.has(name) && old(path)) {
      io.remove(path);
      deleted.push(path);
    }
  }
  const indexDir = join(table.paths.root, 'index');
  for (const name of io.list(indexDir)) {
    const path = join(indexDir, name);
    if (name.startsWith('index-') && !live.indexFiles.has(name) && old(path)) {
      io.remove(path);
      deleted.push(path);
    }
  }
  const walk = (dir: string, depth: number) => {
    for (const name of io.list(dir)) {
      const path = join(dir, name);
      if (depth === 0 && NON_DATA_DIRS.has(name)) continue;
      if (/^bucket-\d+$/.test(name)) {
        for (const f of io.list(path)) {
          const fp = join(path, f);
          if (!live.dataFiles.has(fp) && !keep?.has(fp) && /^(data|changelog)-/.test(f) && old(fp)) {
            io.remove(fp);
            table.cache.drop(fp);
            deleted.push(fp);
          }
        }
      } else if (name.includes('=') && depth < 16) {
        walk(path, depth + 1);
      }
    }
  };
  walk(table.paths.root, 0);
  return deleted;
}
