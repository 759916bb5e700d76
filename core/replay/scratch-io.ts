// The FileIO of a replay's scratch warehouse: core/lsm's LocalFileIO without fsync.
//
// A replay's scratch is thrown away when the run ends (and a crashed replay is simply run again),
// so durability buys nothing there; every commit of core/lsm otherwise fsyncs each new file and its
// directory (data file, manifests, manifest list, snapshot, tag, hints). The bytes written, the
// names, and the in-process semantics are those of LocalFileIO: `writeNew` refuses to overwrite,
// `createAtomic` never replaces an existing file (temporary file + link(2)), `replaceAtomic` is
// temporary file + rename(2) — so everything the replay reads back is what a site would have read.
// Only what happens to the files if the machine loses power differs.
//
// It also keeps the small immutable metadata files in memory — tags (`tag/tag-*`), snapshots
// (`snapshot/snapshot-*`) and manifests (`manifest/*`): core/lsm writes each of them once
// (writeNew / createAtomic, never replaced) and removes it whole; expiration re-reads tags it
// cannot prove unchanged and lists folders (expire.ts keeps its own caches since). The cache is
// filled by this FileIO's own writes and reads and dropped by its removes; the directory listings
// of those three folders likewise. Sound because the scratch warehouse is written by this process
// only, through this FileIO (the writer lock, `.writer.lock`, is hidden and never listed).
//
// `stat` (used by core/lsm/tags.ts to tell whether its tag cache still holds) answers from memory
// for those files and folders: a kept file's identity is its real stat, taken once (the file never
// changes until it is removed through here); a folder's identity is a version number that this
// FileIO changes with every create or remove in it. A version is far in the past as a time, so the
// tag cache never takes a folder for "modified just now" (racy) — on a real clock it did after every
// agent run, and then re-validated all of the day's tags (a stat each) at every commit.

import * as fs from 'node:fs';
import { dirname } from 'node:path';
import { LocalFileIO, LsmError, type FileIO } from '../lsm/index.ts';
import type { FileStat } from '../lsm/file-io.ts';
import { ioError, tempNameFor } from '../lsm/file-io.ts';

/** Immutable metadata files whose bytes are kept. */
const CACHED_FILE = /[/\\](?:tag[/\\]tag-|snapshot[/\\]snapshot-|manifest[/\\])[^/\\]+$/;
/** Folders whose listing is kept. */
const CACHED_DIR = /[/\\](?:tag|snapshot|manifest)$/;
/** Bound on the bytes kept (all dropped when passed; they are re-read on demand). */
const CACHE_BYTES_MAX = 64 * 1024 * 1024;

/** Folder versions (see the header): one counter for all folders, so a version is never handed out twice. */
let nextFolderVersion = 1;

/** `dir` itself or a folder that contains it. */
const isSelfOrAncestor = (folder: string, dir: string): boolean => dir === folder || dir.startsWith(`${folder}/`) || dir.startsWith(`${folder}\\`);

export class ScratchFileIO extends LocalFileIO implements FileIO {
  /** Files written by this FileIO (counts for the bench; nothing depends on them). */
  writes = 0;
  private readonly files = new Map<string, Buffer>();
  private fileBytes = 0;
  private readonly lists = new Map<string, string[]>();
  /** Identities `stat` handed out for kept files and folders (see the header). */
  private readonly identities = new Map<string, FileStat>();

  /** The entries of `dir` changed: its listing and identity are stale. */
  private changed(dir: string): void {
    this.lists.delete(dir);
    this.identities.delete(dir);
  }

  /** Folders `dir` or above may have gained entries (mkdirs creates them top-down). */
  private changedUpTo(dir: string): void {
    for (const m of [this.lists, this.identities]) for (const k of [...m.keys()]) if (isSelfOrAncestor(k, dir)) m.delete(k);
  }

  override stat(path: string): FileStat | undefined {
    const known = this.identities.get(path);
    if (known) return known;
    const folder = CACHED_DIR.test(path);
    if (!folder && !CACHED_FILE.test(path)) return super.stat(path);
    const real = super.stat(path);
    if (real === undefined) return undefined; // not there: nothing to keep
    const id = folder ? { size: 0, mtimeMs: nextFolderVersion++, ino: 0 } : real;
    this.identities.set(path, id);
    return id;
  }

  private keep(path: string, data: Uint8Array): void {
    if (!CACHED_FILE.test(path)) return;
    if (this.fileBytes + data.length > CACHE_BYTES_MAX) {
      this.files.clear();
      this.fileBytes = 0;
    }
    const old = this.files.get(path);
    if (old) this.fileBytes -= old.length;
    this.files.set(path, Buffer.from(data));
    this.fileBytes += data.length;
  }

  private forget(path: string): void {
    const old = this.files.get(path);
    if (old) {
      this.fileBytes -= old.length;
      this.files.delete(path);
    }
    this.identities.delete(path);
    this.changed(dirname(path));
  }

  override readFile(path: string): Buffer {
    const b = this.files.get(path);
    if (b) return Buffer.from(b);
    const r = super.readFile(path);
    this.keep(path, r);
    return r;
  }

  override readFileIfExists(path: string): Buffer | undefined {
    const b = this.files.get(path);
    if (b) return Buffer.from(b);
    const r = super.readFileIfExists(path);
    if (r) this.keep(path, r);
    return r;
  }

  override exists(path: string): boolean {
    return this.files.has(path) || super.exists(path);
  }

  override list(dir: string): string[] {
    const l = this.lists.get(dir);
    if (l) return [...l];
    const r = super.list(dir);
    if (CACHED_DIR.test(dir)) this.lists.set(dir, [...r]);
    return r;
  }

  override mkdirs(dir: string): void {
    super.mkdirs(dir);
    this.changedUpTo(dir);
  }

  override remove(path: string): void {
    this.forget(path);
    super.remove(path);
  }

  override removeDir(dir: string): void {
    for (const p of [...this.files.keys()]) if (p.startsWith(dir)) this.forget(p);
    this.lists.clear();
    this.identities.clear();
    super.removeDir(dir);
  }

  override writeNew(path: string, data: Uint8Array): void {
    this.forget(path);
    try {
      fs.writeFileSync(path, data, { flag: 'wx', mode: 0o644 });
      this.writes++;
      this.keep(path, data);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new LsmError('AlreadyExists', `file ${path} already exists`, { path, cause: e });
      throw ioError('write', path, e);
    }
  }

  override createAtomic(path: string, data: Uint8Array): boolean {
    const tmp = tempNameFor(path);
    this.changedUpTo(dirname(path)); // the folder may be created here, and gains the file
    try {
      fs.mkdirSync(dirname(path), { recursive: true });
      fs.writeFileSync(tmp, data, { flag: 'wx', mode: 0o644 });
      try {
        fs.linkSync(tmp, path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw e;
      }
      this.writes++;
      this.keep(path, data);
      this.changed(dirname(path));
      return true;
    } catch (e) {
      throw ioError('create', path, e);
    } finally {
      try {
        fs.unlinkSync(tmp);
      } catch {
        // already gone
      }
    }
  }

  override replaceAtomic(path: string, data: Uint8Array): void {
    const tmp = tempNameFor(path);
    this.forget(path);
    this.changedUpTo(dirname(path));
    try {
      fs.mkdirSync(dirname(path), { recursive: true });
      fs.writeFileSync(tmp, data, { flag: 'wx', mode: 0o644 });
      fs.renameSync(tmp, path);
      this.forget(path);
      this.writes++;
    } catch (e) {
      try {
        fs.unlinkSync(tmp);
      } catch {
        // nothing to clean
      }
      throw ioError('replace', path, e);
    }
  }
}
