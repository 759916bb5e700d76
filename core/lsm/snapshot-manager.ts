// Finding and reading snapshots (Paimon's SnapshotManager and HintFileUtils).
//
// A snapshot exists once `snapshot/snapshot-N` exists; ids are contiguous from EARLIEST to
// LATEST. The `LATEST` and `EARLIEST` files are hints that may lag: `latestId` trusts LATEST = n
// only when snapshot-(n+1) does not exist, and otherwise lists the directory. A snapshot file that
// exists but does not parse is corruption, never "no snapshot".
//
// Parsed snapshots are cached by id. Expiration removes snapshot files oldest first, writing
// EARLIEST before it unlinks them; a cached snapshot below the highest EARLIEST seen in this
// process (`Floor`) is read from disk again, so an expired one is NotFound as if never cached.

import { resolve } from 'node:path';
import { corruption, LsmError, notFound } from './errors.ts';
import type { FileIO } from './file-io.ts';
import { snapshotFromJson, snapshotToJson, type Snapshot } from './snapshot.ts';
import type { TablePaths } from './table-paths.ts';

const SNAPSHOT_NAME = /^snapshot-(\d+)$/;

/**
 * What every SnapshotManager of one table in this process shares, as the pins are (table.ts), so a
 * reader's cache learns of the writer's expiration and rollback at no cost:
 * - `id`: below it a cached snapshot is not trusted but read again — the highest EARLIEST any of
 *   them wrote (expiration writes it before it unlinks) or found. Expiration in another process is
 *   learnt when this process next asks for the earliest snapshot (`earliestId`, `isRetained`).
 * - `epoch`: bumped when a rollback here removes retained snapshots (their ids will be used again)
 *   or writes back a tag's expired snapshot (EARLIEST goes down, so does `id`), and when a writer
 *   here finds the lock may have changed hands (`invalidate`: another process may have rolled
 *   back); each cache is dropped at its next use after a bump.
 */
interface Floor {
  id: number;
  epoch: number;
}
/** Floors by resolved table root; one small record per table this process opened. */
const processFloors = new Map<string, Floor>();

export class SnapshotManager {
  private readonly cache = new Map<number, Snapshot>();
  /** The cache's size at which `remember` next drops what expiration removed (see there). */
  private pruneAt = 64;
  private readonly floor: Floor;
  /** The floor's epoch this cache is of. */
  private epoch: number;

  constructor(
    private readonly fileIO: FileIO,
    private readonly paths: TablePaths,
  ) {
    const key = resolve(paths.root);
    let floor = processFloors.get(key);
    if (floor === undefined) processFloors.set(key, (floor = { id: 0, epoch: 0 }));
    this.floor = floor;
    this.epoch = floor.epoch;
  }

  /**
   * A table was just created at this root: whatever this process learnt of a table dropped from
   * there before no longer holds (its floor would keep every id below it out of the cache).
   */
  tableCreated(): void {
    this.floor.id = 0;
    this.floor.epoch++;
  }

  private raiseFloor(id: number): void {
    if (id > this.floor.id) this.floor.id = id;
  }

  /** The cache, emptied first when a rollback in this process happened since it was last used. */
  private current(): Map<number, Snapshot> {
    if (this.epoch !== this.floor.epoch) {
      this.cache.clear();
      this.epoch = this.floor.epoch;
    }
    return this.cache;
  }

  exists(id: number): boolean {
    return (id >= this.floor.id && this.current().has(id)) || this.fileIO.exists(this.paths.snapshotFile(id));
  }

  /** Every snapshot id on disk, ascending. */
  listIds(): number[] {
    const ids: number[] = [];
    for (const name of this.fileIO.list(this.paths.snapshotDir)) {
      const m = SNAPSHOT_NAME.exec(name);
      if (m) ids.push(Number(m[1]));
    }
    return ids.sort((a, b) => a - b);
  }

  private readHint(path: string): number | undefined {
    const b = this.fileIO.readFileIfExists(path);
    if (b === undefined) return undefined;
    const n = Number(b.toString('utf8').trim());
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  }

  latestId(): number | undefined {
    const hint = this.readHint(this.paths.latestHint);
    if (hint !== undefined && this.exists(hint) && !this.fileIO.exists(this.paths.snapshotFile(hint + 1))) return hint;
    const ids = this.listIds();
    return ids.length === 0 ? undefined : ids[ids.length - 1];
  }

  /**
   * Points LATEST at the newest snapshot when it lags (a writer killed between creating
   * snapshot-N and rewriting the hint). Readers find the newest snapshot either way, but tools
   * and engines that take the hint as the truth would not; a writer calls this when it takes the
   * table's lock (only the lock holder writes hints). Returns whether the hint was rewritten.
   */
  repairLatestHint(): boolean {
    const latest = this.latestId();
    if (latest === undefined || this.readHint(this.paths.latestHint) === latest) return false;
    this.fileIO.replaceAtomic(this.paths.latestHint, Buffer.from(String(latest)));
    return true;
  }

  /** The earliest snapshot on disk; raises the floor to it (ids below it are expired or being expired). */
  earliestId(): number | undefined {
    const hint = this.readHint(this.paths.earliestHint);
    let earliest: number | undefined;
    if (hint !== undefined && this.exists(hint)) earliest = hint;
    else earliest = this.listIds()[0];
    if (earliest !== undefined) this.raiseFloor(earliest);
    return earliest;
  }

  /**
   * Reads snapshot `id`; NotFound when it does not exist (e.g. expired). A cached snapshot is
   * returned without a look at the disk unless its id is below the floor (see Floor).
   */
  get(id: number): Snapshot {
    const cached = this.current().get(id);
    if (cached !== undefined) {
      if (id >= this.floor.id) return cached;
      this.cache.delete(id); // expired, or about to be: as if never read
    }
    const path = this.paths.snapshotFile(id);
    const bytes = this.fileIO.readFileIfExists(path);
    if (bytes === undefined) throw notFound(`snapshot ${id} does not exist in ${this.paths.root}`);
    const s = snapshotFromJson(bytes.toString('utf8'), path);
    if (s.id !== id) throw corruption(path, `holds snapshot id ${s.id}`);
    this.remember(s);
    return s;
  }

  /**
   * Caches a parsed snapshot. The writer's `remove` keeps its cache to the retained snapshots, but
   * a Table object that only reads (the sync engine's, the agent's) never hears of expiration and
   * would keep every snapshot it ever read: a snapshot more per commit, for as long as the site
   * runs. So once the cache has doubled since it was last pruned, it drops the ids below the
   * EARLIEST hint (expired, or about to be). A dropped snapshot that is wanted again is read from
   * disk again; what stays is about what is on disk, as in the writer.
   */
  private remember(s: Snapshot): void {
    this.cache.set(s.id, s);
    if (this.cache.size < this.pruneAt) return;
    const earliest = this.readHint(this.paths.earliestHint);
    if (earliest !== undefined) for (const id of this.cache.keys()) if (id < earliest) this.cache.delete(id);
    this.pruneAt = Math.max(64, 2 * this.cache.size);
  }

  /**
   * Whether snapshot `s`, as a reader got it (from this cache, or from a tag), is still on disk with
   * the same content: false once expiration removed its file, also in another process, or a
   * rollback gave the id other content. Reads EARLIEST and the file; for error paths only (a read
   * that found a file of `s` missing asks whether `s` expired under it, table.ts). A snapshot file
   * that does not parse counts as retained: that is corruption of its own.
   */
  isRetained(s: Snapshot): boolean {
    const earliest = this.earliestId();
    const bytes = earliest !== undefined && s.id < earliest ? undefined : this.fileIO.readFileIfExists(this.paths.snapshotFile(s.id));
    let same = false;
    if (bytes !== undefined) {
      try {
        const now = snapshotFromJson(bytes.toString('utf8'), this.paths.snapshotFile(s.id));
        same = now.baseManifestList === s.baseManifestList && now.deltaManifestList === s.deltaManifestList;
      } catch {
        return true;
      }
    }
    if (!same && this.cache.get(s.id) === s) this.cache.delete(s.id);
    return same;
  }

  /** How many parsed snapshots are cached (tests). */
  cachedCount(): number {
    return this.current().size;
  }

  tryGet(id: number): Snapshot | undefined {
    try {
      return this.get(id);
    } catch (e) {
      if (e instanceof LsmError && e.kind === 'NotFound') return undefined;
      throw e;
    }
  }

  latest(): Snapshot | undefined {
    const id = this.latestId();
    return id === undefined ? undefined : this.get(id);
  }

  /** The latest snapshot committed at or before `timeMillis`; undefined when none is that old. */
  atOrBefore(timeMillis: number): Snapshot | undefined {
    const ids = this.listIds();
    // Commit times grow with ids: binary search the last id with timeMillis ≤ t.
    let lo = 0;
    let hi = ids.length - 1;
    let found: Snapshot | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = this.tryGet(ids[mid]!);
      if (s === undefined) {
        lo = mid + 1; // expired under us; look later
        continue;
      }
      if (s.timeMillis <= timeMillis) {
        found = s;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  /**
   * Creates snapshot-N atomically; false when another commit took the id first. `latestHint`
   * false leaves LATEST as it is (a rollback writing back a snapshot below later ones it has not
   * removed yet: a hint naming it would be trusted over them).
   */
  commit(s: Snapshot, latestHint = true): boolean {
    const ok = this.fileIO.createAtomic(this.paths.snapshotFile(s.id), Buffer.from(snapshotToJson(s)));
    if (ok) {
      this.remember(s);
      try {
        if (latestHint) this.fileIO.replaceAtomic(this.paths.latestHint, Buffer.from(String(s.id)));
      } catch {
        // LATEST is a hint; readers fall back to listing.
      }
    }
    return ok;
  }

  /** Removes a snapshot file (expiration, rollback). */
  remove(id: number): void {
    // At or above the floor it is a rollback's (expiration writes EARLIEST past what it removes):
    // the id will be committed again with other content, which no cache here may keep.
    if (id >= this.floor.id) this.floor.epoch++;
    this.current().delete(id);
    this.fileIO.remove(this.paths.snapshotFile(id));
  }

  /**
   * Forgets every parsed snapshot. The cache trusts that snapshot-N, once read, stays as it is;
   * that holds while this process holds the writer lock (only the lock holder creates and removes
   * snapshots, and it does so through this manager), but a rollback in another process can
   * remove snapshot-N and commit a different one under the same id. The writer calls this when
   * it takes the lock, expire.ts when the lock changed hands since its last run. What they learn
   * holds for every Table object of the table in this process (a reader's cache may hold the
   * rolled-back snapshot-N as well), so the floor's epoch is bumped: each cache is dropped at its
   * next use, as after a rollback here.
   */
  invalidate(): void {
    this.floor.epoch++;
    this.cache.clear();
  }

  /** Writes EARLIEST (the lock holder); every Table object of the table in this process then reads ids below it from disk. */
  writeEarliestHint(id: number): void {
    if (id < this.floor.id) {
      // A rollback wrote back a tag's expired snapshot: ids from it on are live again.
      this.floor.id = id;
      this.floor.epoch++;
    } else this.raiseFloor(id);
    this.fileIO.replaceAtomic(this.paths.earliestHint, Buffer.from(String(id)));
  }
}
