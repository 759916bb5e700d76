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

import * as fs from 'node:fs';
import { dirname } from 'node:path';
import { LocalFileIO, LsmError, type FileIO } from '../lsm/index.ts';
import { tempNameFor } from '../lsm/file-io.ts';

function ioError(op: string, path: string, cause: unknown): LsmError {
  const code = (cause as NodeJS.ErrnoException)?.code ?? 'unknown';
  return new LsmError('IOError', `${op} ${path} failed: ${code} ${(cause as Error)?.message ?? ''}`.trim(), { path, cause });
}

/** Immutable metadata files whose bytes are kept. */
const CACHED_FILE = /[/\\](?:tag[/\\]tag-|snapshot[/\\]snapshot-|manifest[/\\])[^/\\]+$/;
/** Folders whose listing is kept. */
const CACHED_DIR = /[/\\](?:tag|snapshot|manifest)$/;
/** Bound on the bytes kept (all dropped when passed; they are re-read on demand). */
const CACHE_BYTES_MAX = 64 * 1024 * 1024;

export class ScratchFileIO extends LocalFileIO implements FileIO {
  /** Files written by this FileIO (counts for the bench; nothing depends on them). */
  writes = 0;
  private readonly files = new Map<string, Buffer>();
  private fileBytes = 0;
  private readonly lists = new Map<string, string[]>();

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
    this.lists.delete(dirname(path));
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
    this.lists.clear();
  }

  override remove(path: string): void {
    this.forget(path);
    super.remove(path);
  }

  override removeDir(dir: string): void {
    for (const p of [...this.files.keys()]) if (p.startsWith(dir)) this.forget(p);
    this.lists.clear();
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
    this.lists.delete(dirname(path));
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
    try {
      fs.mkdirSync(dirname(path), { recursive: true });
      fs.writeFileSync(tmp, data, { flag: 'wx', mode: 0o644 });
      fs.renameSync(tmp, path);
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
