// Copies what HQ holds for a site into a local warehouse: `hq pull`, `restore`, and the local
// cache through which S3 tables are opened. Per table: the snapshot and tag JSON are read first
// (one gone since the listing is left out), then the table's files are listed and copied (skipped
// when the local copy has the listed size — names are unique, so the size check is the resume
// check; not for a name the caller says is no file of HQ's, `refetch`), then that JSON is written
// and the hints with the snapshot ids it names, then local
// snapshot JSON HQ no longer has is removed, so the copy, like HQ, holds one snapshot with
// EARLIEST = LATEST. Reading the JSON before listing the files is what keeps a copy made while
// the site syncs whole: every file the JSON names was at HQ before it. Every file is written
// to a hidden temporary file and renamed: an interrupted pull leaves nothing half-written, and a
// rerun continues where it stopped. Local tags are kept (a pulled warehouse may hold tags of its
// own) unless `dropGoneTags`: the cache through which `hq` commands read S3 (hq/store.ts) shows
// what HQ holds, so a tag gone at HQ (a run tag its site expired, core/sync DESIGN.md) goes there too.
// A restore copies with `deferredSync` instead: each file written once under its own name, and
// each file and folder fsynced once at the end, by the restore (see `DeferredSync`).

import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { DIR_SYNC_NOT_SUPPORTED, ioError, makeDirsNoting } from '../../lsm/file-io.ts';
import { isCorruption, localFileIO, TableSchema } from '../../lsm/index.ts';
import { snapshotFromJson, tagFromJson } from '../../lsm/snapshot.ts';
import { SyncError } from '../errors.ts';
import { checkKey, contractsPrefix, sitePrefix } from '../names.ts';
import { DirectoryTarget } from '../targets/directory.ts';
import { getIfPresent, type ObjectInfo, type SyncTarget } from '../targets/target.ts';

/**
 * A key at HQ as an operator finds it: under a directory HQ its path (a key alone is relative to
 * nothing they typed), elsewhere the key and the target (`… at s3://hq/prefix (endpoint)`).
 */
export function whereAtHq(target: SyncTarget, key: string): string {
  return target instanceof DirectoryTarget ? join(target.root, ...key.split('/')) : `${key} at ${target.description}`;
}

export interface MirrorProgress {
  table: string;
  key: string;
  doneFiles: number;
  totalFiles: number;
  doneBytes: number;
  totalBytes: number;
}

export interface MirrorOptions {
  /** Only these tables (default: every table of the site). */
  tables?: readonly string[];
  /** Also copy `.tilstand/contracts/` to this directory. */
  contractsDir?: string;
  onProgress?: (p: MirrorProgress) => void;
  /** Remove local tag JSON that HQ no longer has (default: local tags are kept). */
  dropGoneTags?: boolean;
  /**
   * Called once a table's copy is done, with the keys it now holds as HQ had them: its files and
   * the snapshot and tag JSON written — which may be newer than a listing made before the mirror
   * — before the next table is read (`hq pull`'s record of what it left, pull-record.ts: a pull
   * that fails later has still recorded the tables it finished).
   */
  onTableCopied?: (table: string, copied: readonly string[]) => void;
  /**
   * Called with a table's schema, snapshot and tag files (key → bytes) before they are written
   * (`hq pull` records them first, pull-record.ts `recordUnfinished`: a pull stopped between two of
   * them has not written one it does not know of).
   */
  beforeWrite?: (table: string, files: ReadonlyMap<string, Uint8Array>) => void;
  /**
   * The site's listing the caller made (`listSite`), used instead of listing the site again
   * (`hq pull` checks the copy for own writes against it before anything is copied).
   */
  listed?: readonly ObjectInfo[];
  /**
   * Keys fetched even when the local copy has the listed size: files not from HQ that bear its
   * names (`hq pull --force` over an analyst's `schema-N`, which can have the size of HQ's).
   */
  refetch?: ReadonlySet<string>;
  /**
   * Called with a tag JSON at HQ that is damaged (`checkJson`'s Verification error), which is then
   * left out of the copy — not written, a local copy of it left as it is — instead of failing the
   * whole mirror: `hq pull` of a site one of whose old tags was torn at HQ got nothing, not even the
   * latest snapshot. The caller must report it (`hq pull` names each on stderr and exits 4).
   * Without it a damaged tag fails the mirror, as a damaged snapshot or schema always does.
   */
  onDamagedTag?: (key: string, error: SyncError) => void;
  /**
   * Write each file once, under its own name, without an fsync, and note it and the folders
   * created or written into here: the caller fsyncs each once (`DeferredSync.flush`) before it
   * takes the copy for done. Without it (`hq pull`, the S3 cache) each file is written to a
   * temporary file, fsynced, renamed and its folder fsynced (two fsyncs a file, one after the
   * other), so a reader of the copy while it is made, or after a crash, never sees a file
   * half-written. Only for a copy that nobody reads until it is done and that is done again from
   * scratch when it was interrupted (`tilstand restore`, under its sync lock and its
   * `restore-unfinished.json`, into a folder it emptied): a write cut short leaves the file torn
   * under its name, which the resume check (a present file of the listed size is HQ's) could take
   * for whole.
   */
  deferredSync?: DeferredSync;
}

/**
 * The files a copy with `MirrorOptions.deferredSync` wrote and the folders it created or wrote
 * into (a file's fsync does not make its name durable, its folder's does, fsync(2); a new folder's
 * name is its parent's), for `flush` to fsync each once at the end. There the fsyncs run several
 * at a time: a journaling file system (ext4's jbd2) commits the fsyncs that wait together in one
 * journal commit, where one after the other each waits for a commit of its own — at 1,000 tags
 * (6,320 files) 0.9–2.0 s of fsyncs against 4.8–8.7 s for the same count, each as its file was
 * written (DESIGN.md, "Restore").
 */
export class DeferredSync {
  private readonly dirs = new Set<string>();
  /** Folder → names of the files written in it (whole paths would repeat each folder's text per file). */
  private readonly files = new Map<string, string[]>();

  /** A folder whose entries changed (a file written or removed in it). */
  add(dir: string): void {
    this.dirs.add(dir);
  }

  /** `mkdirSync(dir, recursive)`, noting the parent of every folder it created. */
  mkdirs(dir: string): void {
    makeDirsNoting(dir, this.dirs);
  }

  /** Writes `bytes` to `path` (a file there replaced), not fsynced: noted, with its folder, for `flush`. */
  write(path: string, bytes: Uint8Array): void {
    const dir = dirname(path);
    this.mkdirs(dir);
    let fd: number;
    try {
      fd = openNew(path);
    } catch (e) {
      throw ioError('write', path, e);
    }
    this.dirs.add(dir);
    try {
      let off = 0;
      while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off);
    } catch (e) {
      fs.closeSync(fd);
      fs.rmSync(path, { force: true });
      throw ioError('write', path, e);
    }
    fs.closeSync(fd);
    const names = this.files.get(dir);
    if (names === undefined) this.files.set(dir, [basename(path)]);
    else names.push(basename(path));
  }

  /**
   * Fsyncs every file noted since the last flush (that is still there), then every folder, each
   * once, `SYNC_AT_ONCE` at a time. A file's fsync that fails fails the flush (IOError: its bytes
   * may not be on disk), and so does a folder's (its entries may not be), unless the refusal says
   * the file system does not do it (`DIR_SYNC_NOT_SUPPORTED`).
   */
  async flush(): Promise<void> {
    const files = [...this.files].flatMap(([dir, names]) => names.map((n) => join(dir, n)));
    const dirs = [...this.dirs];
    this.files.clear();
    this.dirs.clear();
    await inTurns(files, (f) => fsyncPath(f, false));
    await inTurns(dirs, (d) => fsyncPath(d, true));
  }
}

/** How many fsyncs `DeferredSync.flush` keeps waiting at once (Node runs them on its thread pool, 4 threads by default). */
const SYNC_AT_ONCE = 8;

/** `run` over `items`, `SYNC_AT_ONCE` at a time; the first failure fails it (once the others running end). */
async function inTurns<T>(items: readonly T[], run: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown;
  const worker = async () => {
    while (next < items.length && failed === undefined) {
      try {
        await run(items[next++]!);
      } catch (e) {
        failed ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SYNC_AT_ONCE, items.length) }, worker));
  if (failed !== undefined) throw failed;
}

/**
 * One fsync of a file (opened for writing, which Windows' FlushFileBuffers needs; one removed
 * since it was written — a damaged tag's JSON, what a restore's rollback drops — has nothing to
 * sync: its folder's fsync makes the removal durable) or a folder (read-only; a refusal in
 * `DIR_SYNC_NOT_SUPPORTED` passed over: core/lsm file-io.ts's set of the refusals that mean "not done
 * on this file system", which LocalFileIO's atomic writes pass over too). Any other failure (EIO
 * above all) is an IOError: in a restore that fsync is the only one that makes the folder's
 * entries durable.
 */
function fsyncPath(path: string, dir: boolean): Promise<void> {
  const passedOver = (e: NodeJS.ErrnoException) => (dir ? DIR_SYNC_NOT_SUPPORTED.has(e.code ?? '') : e.code === 'ENOENT');
  return new Promise((done, fail) => {
    fs.open(path, dir ? 'r' : 'r+', (e, fd) => {
      if (e) return passedOver(e) ? done() : fail(ioError('sync', path, e));
      fs.fsync(fd, (e2) => fs.close(fd, () => (e2 && !(dir && DIR_SYNC_NOT_SUPPORTED.has(e2.code ?? '')) ? fail(ioError('sync', path, e2)) : done())));
    });
  });
}

/**
 * A new file at `path` (O_EXCL: never written through a symbolic link there); one already there is
 * removed first, as a rename over it would replace it.
 */
function openNew(path: string): number {
  try {
    return fs.openSync(path, 'wx', 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  fs.rmSync(path, { force: true });
  return fs.openSync(path, 'wx', 0o644);
}

export interface MirrorResult {
  tables: string[];
  files: number;
  downloadedFiles: number;
  downloadedBytes: number;
}

const POINTER = /^(snapshot\/snapshot-\d+|tag\/tag-[^/]+)$/;
const HINT = /^snapshot\/(EARLIEST|LATEST)$/;
const HINT_KEY = /\/snapshot\/(EARLIEST|LATEST)$/;
const SNAPSHOT_KEY = /\/snapshot\/snapshot-(\d+)$/;
const SCHEMA_KEY = /^[^/]+\/[^/]+\/schema\/schema-\d+$/;
const TAG_KEY = /^[^/]+\/([^/]+)\/tag\/tag-([^/]+)$/;
/** What a damaged HQ file's Verification error (`damaged` below) starts with. */
const DAMAGED = "HQ's file is damaged: ";

/** The table and tag of an HQ key of a tag's JSON (`site_<id>.db/<table>/tag/tag-<name>`), or undefined. */
export function tagOfKey(key: string): { table: string; tag: string } | undefined {
  const m = TAG_KEY.exec(key);
  return m ? { table: m[1]!, tag: m[2]! } : undefined;
}

/** What is wrong with a damaged HQ file, without the words its error starts with. */
export const damageOf = (e: Error): string => (e.message.startsWith(DAMAGED) ? e.message.slice(DAMAGED.length) : e.message);

/** Tables of a site at HQ: folders under `site_<id>.db/` holding a schema file. */
export function tablesOf(site: string, keys: readonly ObjectInfo[]): string[] {
  const prefix = sitePrefix(site);
  const out = new Set<string>();
  for (const { key } of keys) {
    const m = /^([^/.][^/]*)\/schema\/schema-\d+$/.exec(key.slice(prefix.length));
    if (key.startsWith(prefix) && m) out.add(m[1]!);
  }
  return [...out].sort();
}

/**
 * What the target lists under `prefix`, refused (InvalidArgument) when a key is not a clean
 * relative path (names.ts `checkKey`): an object store takes `..` in a key literally, a policy
 * that limits a site's access key to `site_<id>.db/*` lets it write one, and the copy would put it
 * outside its folder — into another site's tables, or anywhere the user running it may write.
 */
async function listClean(target: SyncTarget, prefix: string): Promise<ObjectInfo[]> {
  return checkedListing(await target.list(prefix));
}

function checkedListing<T extends readonly ObjectInfo[]>(listed: T): T {
  for (const o of listed) checkKey(o.key);
  return listed;
}

/** Everything HQ holds under a site's prefix, checked as the mirror checks it (MirrorOptions `listed`). */
export function listSite(target: SyncTarget, site: string): Promise<ObjectInfo[]> {
  return listClean(target, sitePrefix(site));
}

/**
 * The bytes of a table's snapshot and tag JSON listed at HQ. One gone since the listing is left
 * out (a run tag its site expired, a snapshot superseded: the newer one is put before the older
 * goes, so the table's snapshot folder is listed again when every listed one is gone).
 */
async function getPointers(target: SyncTarget, listed: readonly ObjectInfo[], tablePrefix: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const take = async (objects: readonly ObjectInfo[]) => {
    for (const p of objects) {
      const bytes = await getIfPresent(target, p.key);
      if (bytes !== undefined) out.set(p.key, bytes);
    }
  };
  await take(listed);
  const snapshots = (keys: Iterable<string>) => [...keys].filter((k) => SNAPSHOT_KEY.test(k)).length;
  if (snapshots(listed.map((p) => p.key)) > 0 && snapshots(out.keys()) === 0) {
    await take((await listClean(target, `${tablePrefix}snapshot/`)).filter((x) => SNAPSHOT_KEY.test(x.key)));
    if (snapshots(out.keys()) === 0) throw new SyncError('NotFound', `${tablePrefix}: every snapshot listed at HQ was replaced while it was read; try again`);
  }
  return out;
}

/**
 * Refuses (Verification: a damaged file, exit 4) a schema, snapshot or tag JSON from HQ that does
 * not read as one, before it is written: copied, the pulled warehouse (or a restored site) held a
 * file no reader opens, said to be HQ's, and the command exited 0. One that reads as one but holds
 * what this program does not support (a newer site's merge engine or column type) is no damage:
 * copied as before — rethrown, `hq pull` failed with the reader's complaint, exit 2, as if the
 * command line were wrong (cli/hq-pull-unsupported-schema.test.ts).
 */
function checkJson(target: SyncTarget, key: string, bytes: Uint8Array): void {
  const text = Buffer.from(bytes).toString('utf8');
  const where = whereAtHq(target, key);
  try {
    if (SCHEMA_KEY.test(key)) TableSchema.parse(text, where);
    else if (SNAPSHOT_KEY.test(key)) snapshotFromJson(text, where);
    else if (TAG_KEY.test(key)) tagFromJson(text, where);
  } catch (e) {
    if (!isCorruption(e)) return;
    throw new SyncError('Verification', `${DAMAGED}${(e as Error).message}`, { cause: e });
  }
}

function writeAtomic(path: string, bytes: Uint8Array): void {
  fs.mkdirSync(dirname(path), { recursive: true });
  localFileIO.replaceAtomic(path, bytes);
}

export async function mirrorSite(target: SyncTarget, site: string, warehouse: string, o: MirrorOptions = {}): Promise<MirrorResult> {
  const prefix = sitePrefix(site);
  const all = o.listed !== undefined ? checkedListing(o.listed) : await listClean(target, prefix);
  const tables = (o.tables ?? tablesOf(site, all)).slice();
  const known = new Set(tablesOf(site, all));
  for (const t of tables) if (!known.has(t)) throw new SyncError('NotFound', `HQ has no table '${t}' for site ${site}`);
  const dbDir = join(warehouse, `${prefix.slice(0, -1)}`);
  const deferred = o.deferredSync;
  const writeLocal = deferred === undefined ? writeAtomic : (path: string, bytes: Uint8Array) => deferred.write(path, bytes);
  const result: MirrorResult = { tables, files: 0, downloadedFiles: 0, downloadedBytes: 0 };
  const work = all.filter((x) => tables.some((t) => x.key.startsWith(`${prefix}${t}/`)) && !HINT_KEY.test(x.key));
  const contracts = o.contractsDir ? all.filter((x) => x.key.startsWith(contractsPrefix(site))) : [];
  // Grown by the files a table's second listing finds (below).
  let totalFiles = work.length + contracts.length;
  let totalBytes = [...work, ...contracts].reduce((s, x) => s + x.size, 0);
  const counted = new Set(work.map((x) => x.key));
  let doneFiles = 0;
  let doneBytes = 0;
  const progress = (table: string, key: string, size: number) => {
    doneFiles++;
    doneBytes += size;
    o.onProgress?.({ table, key, doneFiles, totalFiles, doneBytes, totalBytes });
  };
  const fetch = async (key: string, path: string, size: number | undefined, table?: string) => {
    const bytes = await target.get(key);
    if (size !== undefined && bytes.length !== size) throw new SyncError('Verification', `${key}: got ${bytes.length} bytes, HQ lists ${size}`);
    if (table !== undefined) checkJson(target, key, bytes);
    if (table !== undefined && SCHEMA_KEY.test(key)) o.beforeWrite?.(table, new Map([[key, bytes]]));
    writeLocal(path, bytes);
    result.downloadedFiles++;
    result.downloadedBytes += bytes.length;
  };
  for (const t of tables) {
    const tp = `${prefix}${t}/`;
    const local = (key: string) => join(dbDir, t, ...key.slice(tp.length).split('/'));
    const rel = (x: ObjectInfo) => x.key.slice(tp.length);
    const copied: string[] = [];
    // The snapshot and tag JSON first, then a listing of the files: a site puts a pointer only
    // after its files, so every file a pointer read here names is in the listing that follows. The
    // site's listing above does not do: an object store lists in pages, in key order, and a site
    // that syncs between two pages shows a new snapshot or tag (keys after `bucket-*/` and
    // `manifest/`) whose files came after the page that listed those.
    const pointers = await getPointers(target, work.filter((x) => x.key.startsWith(tp) && POINTER.test(rel(x))), tp);
    for (const [key, bytes] of pointers) {
      try {
        checkJson(target, key, bytes);
      } catch (e) {
        if (o.onDamagedTag === undefined || !TAG_KEY.test(key) || !(e instanceof SyncError) || e.kind !== 'Verification') throw e;
        o.onDamagedTag(key, e);
        pointers.delete(key);
      }
    }
    const listed = await listClean(target, tp);
    const files = listed.filter((x) => !POINTER.test(rel(x)) && !HINT.test(rel(x)));
    for (const f of files) {
      if (counted.has(f.key)) continue;
      totalFiles++;
      totalBytes += f.size;
    }
    for (const f of files) {
      const path = local(f.key);
      let have = -1;
      try {
        have = fs.statSync(path).size;
      } catch {
        // absent
      }
      if (have !== f.size || o.refetch?.has(f.key)) await fetch(f.key, path, f.size, t);
      copied.push(f.key);
      result.files++;
      progress(t, f.key, f.size);
    }
    if (pointers.size > 0) o.beforeWrite?.(t, pointers);
    for (const [key, bytes] of pointers) {
      writeLocal(local(key), bytes);
      copied.push(key);
      result.downloadedFiles++;
      result.downloadedBytes += bytes.length;
      result.files++;
      progress(t, key, bytes.length);
    }
    // The hints name the snapshots copied (HQ's, read now, may name one that came after them).
    const ids = [...pointers.keys()].flatMap((k) => {
      const m = SNAPSHOT_KEY.exec(k);
      return m ? [Number(m[1])] : [];
    });
    if (ids.length > 0) {
      writeLocal(join(dbDir, t, 'snapshot', 'EARLIEST'), Buffer.from(String(Math.min(...ids))));
      writeLocal(join(dbDir, t, 'snapshot', 'LATEST'), Buffer.from(String(Math.max(...ids))));
    }
    const keep = new Set([...pointers.keys()].map((k) => k.slice(tp.length)));
    const snapDir = join(dbDir, t, 'snapshot');
    for (const n of fs.existsSync(snapDir) ? fs.readdirSync(snapDir) : []) {
      if (/^snapshot-\d+$/.test(n) && !keep.has(`snapshot/${n}`)) {
        fs.rmSync(join(snapDir, n), { force: true });
        deferred?.add(snapDir);
      }
    }
    const tagDir = join(dbDir, t, 'tag');
    for (const n of o.dropGoneTags && fs.existsSync(tagDir) ? fs.readdirSync(tagDir) : []) {
      if (n.startsWith('tag-') && !keep.has(`tag/${n}`)) {
        fs.rmSync(join(tagDir, n), { force: true });
        deferred?.add(tagDir);
      }
    }
    o.onTableCopied?.(t, copied);
  }
  for (const c of contracts) {
    const rel = c.key.slice(contractsPrefix(site).length);
    await fetch(c.key, join(o.contractsDir!, ...rel.split('/')), c.size);
    progress('.contracts', c.key, c.size);
  }
  return result;
}
