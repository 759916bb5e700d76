// Tags: a named, durable reference to one snapshot (`tag/tag-<name>`, the snapshot's JSON, with
// `tagCreateTime`/`tagTimeRetained` when the tag has a retention time). A tag keeps its
// snapshot's manifests and data files alive after the snapshot itself expires.
//
// Creation writes the tag, then looks at its snapshot (or the tag it was taken from) on disk
// again, and takes the tag back when it went meanwhile: an expiration in another process lists
// the tags after it unlinks the snapshot files, so it may have missed this tag (`create`).
//
// Tags are created atomically and never overwritten (a second tag of the same name is refused),
// except by `renew`, which restarts a tag's retention time: the same snapshot in a new file renamed
// over the old one (Paimon's replace of a tag), so a reader sees the old file or the new one.
//
// Parsed tags are cached per TagManager (so per Table), keyed by name and validated on every use
// by the file's identity (size, mtime, inode; file-identity.ts): another process (the CLI, an
// agent's own Table) may create and delete tags at any time, and a name deleted and created again
// may point elsewhere. A tag file is never rewritten in place, so a changed file is a new identity;
// an identity too recent to rule out a same-tick replacement ("racy") is checked by comparing the
// bytes instead. `list()` costs one stat of `tag/` when the directory is unchanged since the last
// listing (any create/delete/rename in it changes its mtime), else a readdir and a stat per tag;
// only new or replaced tag files are read and parsed.

import { localWallClockMillis } from './data-file.ts';
import { invalidArgument, LsmError, notFound } from './errors.ts';
import type { FileIO } from './file-io.ts';
import { identityOf, isRacy, sameIdentity, type FileIdentity } from './file-identity.ts';
import { checkName } from './partition-path.ts';
import { tagFromJson, tagToJson, type Tag } from './snapshot.ts';
import type { SnapshotManager } from './snapshot-manager.ts';
import type { TablePaths } from './table-paths.ts';

export interface TagInfo extends Tag {
  name: string;
}

const TAG_PREFIX = 'tag-';

/** A tag is renewed only with at least this much of its retention left (`renew`). */
export const RENEW_MARGIN_MS = 3_600_000;

/** How long a tag has left before it expires at `nowMs` (epoch ms); undefined for one that never does. */
export function tagTimeLeftMs(tag: Tag, nowMs: number): number | undefined {
  return tag.createTimeMillis === undefined || tag.retainedMillis === undefined ? undefined : tag.createTimeMillis + tag.retainedMillis - localWallClockMillis(nowMs);
}

/**
 * A name of Java whitespace only (`Character.isWhitespace`; control characters `checkName` refuses
 * before): Paimon's TagManager refuses to create such a tag ("Tag name shouldn't be blank"), so
 * Java could not name one made here. Checked in `create` only: a tag of such a name an earlier
 * version made is still read, renewed and expired. The no-break spaces (U+00A0, U+2007, U+202F)
 * are not whitespace to Java.
 */
const JAVA_BLANK = /^(?:(?![\u00a0\u2007\u202f])[\p{Zs}\p{Zl}\p{Zp}])+$/u;

/** A tag's retention time, checked where it is set (`create`, `renew`). */
function checkRetention(retainedMs: number): void {
  if (!Number.isSafeInteger(retainedMs) || retainedMs <= 0) throw invalidArgument(`tag retention must be a positive number of milliseconds, got ${retainedMs}`);
}

interface CachedTag {
  info: TagInfo;
  /** Identity of the file `info` was parsed from (stat taken before the read). */
  id: FileIdentity;
  /** Kept while the identity is racy: compared byte for byte instead of trusting the stat. */
  bytes: Buffer | undefined;
}

export class TagManager {
  private readonly cached = new Map<string, CachedTag>();
  /** The last full listing, sorted as `list()` returns it; undefined when it must be redone. */
  private sorted: TagInfo[] | undefined;
  /** Identity of `tag/` taken before that listing, and when (Date.now()). */
  private dirSeen: { id: FileIdentity; at: number } | undefined;

  constructor(
    private readonly fileIO: FileIO,
    private readonly paths: TablePaths,
    private readonly snapshots: SnapshotManager,
    private readonly clock: () => number,
  ) {}

  create(name: string, snapshotId?: number, retainedMs?: number): TagInfo {
    checkName('tag', name);
    if (JAVA_BLANK.test(name)) throw invalidArgument(`tag name ${JSON.stringify(name)} is blank (whitespace only)`);
    if (retainedMs !== undefined) checkRetention(retainedMs);
    // A snapshot whose file has expired is still whole while a tag holds it (its manifests and
    // data files are kept for the tag): it can be tagged again from that tag.
    let snapshot = snapshotId === undefined ? this.snapshots.latest() : this.snapshots.tryGet(snapshotId);
    let source: TagInfo | undefined;
    if (!snapshot && snapshotId !== undefined) {
      source = this.holderOf(snapshotId);
      snapshot = source?.snapshot;
    }
    if (!snapshot) {
      throw notFound(snapshotId === undefined ? `cannot tag '${name}': the table has no snapshot yet` : `cannot tag '${name}': snapshot ${snapshotId} does not exist`);
    }
    const nowMs = this.clock();
    const left = source === undefined ? undefined : tagTimeLeftMs(source, nowMs);
    if (source !== undefined && left !== undefined && left < RENEW_MARGIN_MS) {
      // An expiration elsewhere may be deleting that tag and the files only it holds, having
      // listed the tags before this one is written (the hazard `renew` refuses for the same margin).
      throw new LsmError(
        'Conflict',
        `cannot tag '${name}': snapshot ${snapshotId} has expired and tag '${source.name}', which holds it, expires in ${Math.max(0, Math.round(left / 60_000))} min (less than ${RENEW_MARGIN_MS / 60_000} min left: an expiration may be removing it)`,
        { path: this.paths.tagFile(source.name) },
      );
    }
    const ttl = retainedMs === undefined ? undefined : { createTimeMillis: localWallClockMillis(nowMs), retainedMillis: retainedMs };
    this.fileIO.mkdirs(this.paths.tagDir);
    this.forget(name); // re-read from the file at the next use
    const path = this.paths.tagFile(name);
    if (!this.fileIO.createAtomic(path, Buffer.from(tagToJson(snapshot, ttl)))) {
      throw new LsmError('AlreadyExists', `tag '${name}' already exists`, { path });
    }
    // An expiration in another process may have taken the snapshot between the read above and the
    // write: its tag listing then came too early to see this tag, and the files it names are going.
    // Expiration writes EARLIEST and unlinks the snapshot files before it lists the tags, so a
    // snapshot (or source tag) still there now, after the write, is one whose files any later
    // expiration keeps for this tag. Otherwise the tag is taken back and the tagging refused.
    const held = source === undefined ? this.snapshots.isRetained(snapshot) : this.holds(source);
    if (!held) {
      this.forget(name);
      this.fileIO.remove(path);
      throw notFound(`cannot tag '${name}': snapshot ${snapshot.id} expired while it was being tagged`);
    }
    return { name, snapshot, ...(ttl ? { createTimeMillis: ttl.createTimeMillis, retainedMillis: ttl.retainedMillis } : {}) };
  }

  /** The tag holding snapshot `id` that expires last (one without a retention time first), if any. */
  private holderOf(id: number): TagInfo | undefined {
    const nowMs = this.clock();
    let best: TagInfo | undefined;
    let bestLeft = -Infinity;
    for (const t of this.list()) {
      if (t.snapshot.id !== id) continue;
      const left = tagTimeLeftMs(t, nowMs) ?? Infinity;
      if (best === undefined || left > bestLeft) {
        best = t;
        bestLeft = left;
      }
    }
    return best;
  }

  /** Whether tag `t` is still on disk holding the same snapshot content (read from the file). */
  private holds(t: TagInfo): boolean {
    const bytes = this.fileIO.readFileIfExists(this.paths.tagFile(t.name));
    if (bytes === undefined) return false;
    const now = tagFromJson(bytes.toString('utf8'), this.paths.tagFile(t.name)).snapshot;
    return now.baseManifestList === t.snapshot.baseManifestList && now.deltaManifestList === t.snapshot.deltaManifestList;
  }

  /**
   * Restarts the retention time of tag `name` from now: same snapshot, `retainedMs` (the tag's own
   * when not given). Only for a tag still well inside its retention — at least `RENEW_MARGIN_MS`
   * left: an expiration in another process deletes an expired tag's file and then the files only
   * it held, and renewing it meanwhile would bring back a tag whose files are going. A tag
   * without a retention time never expires and is returned as it is.
   */
  renew(name: string, retainedMs?: number): TagInfo {
    const tag = this.get(name);
    const nowMs = this.clock();
    const left = tagTimeLeftMs(tag, nowMs);
    if (left === undefined) return tag;
    const retained = retainedMs ?? tag.retainedMillis!;
    checkRetention(retained);
    if (left < RENEW_MARGIN_MS) {
      throw new LsmError('Conflict', `cannot renew tag '${name}': it expires in ${Math.max(0, Math.round(left / 60_000))} min (less than ${RENEW_MARGIN_MS / 60_000} min left: an expiration may be removing it)`, {
        path: this.paths.tagFile(name),
      });
    }
    const ttl = { createTimeMillis: localWallClockMillis(nowMs), retainedMillis: retained };
    this.forget(name);
    this.fileIO.replaceAtomic(this.paths.tagFile(name), Buffer.from(tagToJson(tag.snapshot, ttl)));
    return { name, snapshot: tag.snapshot, ...ttl };
  }

  get(name: string): TagInfo {
    this.checkCallerName(name);
    const c = this.validate(name, this.paths.tagFile(name), Date.now());
    if (c === undefined) throw notFound(`tag '${name}' does not exist`);
    return c.info;
  }

  /**
   * Whether tag `name` exists. A name `checkName` refuses exists only as a file `tag/` lists (as
   * `checkCallerName` takes it): joined unchecked, a name such as '/../../snapshot/snapshot-1'
   * would name a file outside `tag/`. Such a name is no tag: false, not an error (callers test a
   * reference that may be a tag or something else).
   */
  exists(name: string): boolean {
    try {
      checkName('tag', name);
    } catch {
      return typeof name === 'string' && this.fileIO.list(this.paths.tagDir).includes(TAG_PREFIX + name);
    }
    return this.fileIO.exists(this.paths.tagFile(name));
  }

  /**
   * All tags, ordered by snapshot id then name. The TagInfo objects are shared with the cache:
   * do not modify them.
   */
  list(): TagInfo[] {
    const dir = this.paths.tagDir;
    const at = Date.now();
    const dirId = identityOf(this.fileIO, dir);
    if (this.sorted !== undefined && this.dirSeen !== undefined && dirId !== undefined && sameIdentity(dirId, this.dirSeen.id) && !isRacy(dirId, this.dirSeen.at)) {
      return [...this.sorted];
    }
    const prefix = `${dir}/${TAG_PREFIX}`;
    const seen = new Set<string>();
    let changed = this.sorted === undefined;
    for (const n of this.fileIO.list(dir)) {
      if (!n.startsWith(TAG_PREFIX)) continue;
      const name = n.slice(TAG_PREFIX.length);
      const before = this.cached.get(name);
      const c = this.validate(name, prefix + name, at);
      if (c === undefined) continue; // deleted while listing
      seen.add(name);
      if (c !== before) changed = true;
    }
    for (const name of this.cached.keys()) {
      if (!seen.has(name)) {
        this.cached.delete(name);
        changed = true;
      }
    }
    if (changed || this.sorted === undefined) {
      this.sorted = [...this.cached.values()].map((c) => c.info).sort((a, b) => a.snapshot.id - b.snapshot.id || (a.name < b.name ? -1 : 1));
    }
    this.dirSeen = dirId === undefined ? undefined : { id: dirId, at };
    return [...this.sorted];
  }

  /**
   * The tag `name` as its file holds it now, through the cache; undefined when there is none.
   * `at`: Date.now() taken before this call (the racy rule's reference time).
   */
  private validate(name: string, path: string, at: number): CachedTag | undefined {
    const id = identityOf(this.fileIO, path);
    let c = this.cached.get(name);
    if (id === undefined) {
      if (c !== undefined) this.forget(name);
      return undefined;
    }
    if (c !== undefined && sameIdentity(c.id, id)) {
      if (c.bytes === undefined) return c;
      const bytes = this.fileIO.readFileIfExists(path);
      if (bytes === undefined) {
        this.forget(name);
        return undefined;
      }
      if (bytes.equals(c.bytes)) {
        if (!isRacy(id, at)) c.bytes = undefined;
        return c;
      }
      c = this.parse(name, path, bytes, id, at);
    } else {
      const bytes = this.fileIO.readFileIfExists(path);
      if (bytes === undefined) {
        if (c !== undefined) this.forget(name);
        return undefined;
      }
      c = this.parse(name, path, bytes, id, at);
    }
    this.cached.set(name, c);
    this.sorted = undefined;
    return c;
  }

  private parse(name: string, path: string, bytes: Buffer, id: FileIdentity, at: number): CachedTag {
    return { info: { name, ...tagFromJson(bytes.toString('utf8'), path) }, id, bytes: isRacy(id, at) ? bytes : undefined };
  }

  private forget(name: string): void {
    this.cached.delete(name);
    this.sorted = undefined;
  }

  /**
   * Removes the tag file; its files are released at the next expiration. A name `create` refuses
   * ('a..b', a leading dot, a control character) is taken when `tag/` holds a file of exactly that
   * name (`checkCallerName`).
   */
  delete(name: string): void {
    this.checkCallerName(name);
    if (!this.exists(name)) throw notFound(`tag '${name}' does not exist`);
    this.removeListed(name);
  }

  /**
   * A caller's name of an existing tag (`get`, so every read at a tag, `changes` and rollback from
   * one; `delete`): `checkName`, except that a name it refuses is accepted when `tag/` holds a file
   * of exactly that name — a hand-made tag the listing shows, which the user must be able to read
   * and delete by that name. A readdir entry holds no path separator, so such a name never leads
   * outside `tag/`. The readdir is paid only for a name `checkName` refuses.
   */
  private checkCallerName(name: string): void {
    try {
      checkName('tag', name);
    } catch (e) {
      if (typeof name === 'string' && this.fileIO.list(this.paths.tagDir).includes(TAG_PREFIX + name)) return;
      throw e;
    }
  }

  /**
   * Removes tag `name` as `list()` gave it (expiration, rollback), without the check `delete` makes
   * of a caller's name: a file made by hand may carry a name `create` refuses ('..', a leading
   * dot), and it is a tag all the same — listed, its files kept, deleted when it expires — as to
   * Java's TagManager, which lists every `tag-*` file. The name came from `readdir`, so it holds no
   * path separator and names a file of `tag/`. Before, such a file made every expiration throw.
   */
  removeListed(name: string): void {
    this.forget(name);
    this.fileIO.remove(this.paths.tagFile(name));
  }

  /** Tags whose retention time has passed. */
  expired(): TagInfo[] {
    const nowMs = this.clock();
    return this.list().filter((t) => (tagTimeLeftMs(t, nowMs) ?? 0) < 0);
  }
}
