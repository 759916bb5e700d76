// Tags: a named, durable reference to one snapshot (`tag/tag-<name>`, the snapshot's JSON, with
// `tagCreateTime`/`tagTimeRetained` when the tag has a retention time). A tag keeps its
// snapshot's manifests and data files alive after the snapshot itself expires.
//
// Tags are created atomically and never overwritten (a second tag of the same name is refused).

import { localWallClockMillis } from './data-file.ts';
import { invalidArgument, LsmError, notFound } from './errors.ts';
import type { FileIO } from './file-io.ts';
import { checkName } from './partition-path.ts';
import { tagFromJson, tagToJson, type Tag } from './snapshot.ts';
import type { SnapshotManager } from './snapshot-manager.ts';
import type { TablePaths } from './table-paths.ts';

export interface TagInfo extends Tag {
  name: string;
}

const TAG_PREFIX = 'tag-';

export class TagManager {
  constructor(
    private readonly fileIO: FileIO,
    private readonly paths: TablePaths,
    private readonly snapshots: SnapshotManager,
    private readonly clock: () => number,
  ) {}

  create(name: string, snapshotId?: number, retainedMs?: number): TagInfo {
    checkName('tag', name);
    if (retainedMs !== undefined && (!Number.isSafeInteger(retainedMs) || retainedMs <= 0)) {
      throw invalidArgument(`tag retention must be a positive number of milliseconds, got ${retainedMs}`);
    }
    const snapshot = snapshotId === undefined ? this.snapshots.latest() : this.snapshots.tryGet(snapshotId);
    if (!snapshot) {
      throw notFound(snapshotId === undefined ? `cannot tag '${name}': the table has no snapshot yet` : `cannot tag '${name}': snapshot ${snapshotId} does not exist`);
    }
    const ttl = retainedMs === undefined ? undefined : { createTimeMillis: localWallClockMillis(this.clock()), retainedMillis: retainedMs };
    this.fileIO.mkdirs(this.paths.tagDir);
    if (!this.fileIO.createAtomic(this.paths.tagFile(name), Buffer.from(tagToJson(snapshot, ttl)))) {
      throw new LsmError('AlreadyExists', `tag '${name}' already exists`, { path: this.paths.tagFile(name) });
    }
    return { name, snapshot, ...(ttl ? { createTimeMillis: ttl.createTimeMillis, retainedMillis: ttl.retainedMillis } : {}) };
  }

  get(name: string): TagInfo {
    checkName('tag', name);
    const path = this.paths.tagFile(name);
    const bytes = this.fileIO.readFileIfExists(path);
    if (bytes === undefined) throw notFound(`tag '${name}' does not exist`);
    return { name, ...tagFromJson(bytes.toString('utf8'), path) };
  }

  exists(name: string): boolean {
    return this.fileIO.exists(this.paths.tagFile(name));
  }

  /** All tags, ordered by snapshot id then name. */
  list(): TagInfo[] {
    const tags: TagInfo[] = [];
    for (const n of this.fileIO.list(this.paths.tagDir)) {
      if (!n.startsWith(TAG_PREFIX)) continue;
      const name = n.slice(TAG_PREFIX.length);
      const bytes = this.fileIO.readFileIfExists(this.paths.tagFile(name));
      if (bytes === undefined) continue; // deleted while listing
      tags.push({ name, ...tagFromJson(bytes.toString('utf8'), this.paths.tagFile(name)) });
    }
    return tags.sort((a, b) => a.snapshot.id - b.snapshot.id || (a.name < b.name ? -1 : 1));
  }

  /** Removes the tag file; its files are released at the next expiration. */
  delete(name: string): void {
    checkName('tag', name);
    if (!this.exists(name)) throw notFound(`tag '${name}' does not exist`);
    this.fileIO.remove(this.paths.tagFile(name));
  }

  /** Tags whose retention time has passed. */
  expired(): TagInfo[] {
    const now = localWallClockMillis(this.clock());
    return this.list().filter((t) => t.createTimeMillis !== undefined && t.retainedMillis !== undefined && t.createTimeMillis + t.retainedMillis < now);
  }
}
