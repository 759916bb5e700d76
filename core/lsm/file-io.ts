// The filesystem as the table store uses it. Every write of a table file goes through here, so a
// test can hand in a FileIO that fails or tears writes (the fault suites), and so the two
// primitives the commit protocol rests on are written once:
//   - `writeNew`: an immutable, uniquely named file (data file, manifest) written and fsynced;
//     refuses to overwrite.
//   - `createAtomic`: a file that appears whole or not at all and never replaces an existing one
//     (snapshot-N): written to a hidden temporary file, fsynced, then hard-linked to its name —
//     link(2) fails with EEXIST where rename(2) would silently overwrite — then the directory is
//     fsynced.
// `replaceAtomic` (hints, tags, consumers) may overwrite: temporary file + rename.
// `writeNewStream` (optional; LocalFileIO's) is `writeNew` of bytes handed over in parts as they
// are made: a Parquet data file is never whole in memory (`writeNewInParts` joins them for a
// FileIO without it).
// A file's fsync does not make its name durable: that is its directory's (fsync(2)). `writeNew` and
// `mkdirs` note the directories whose entries changed, and the next `createAtomic` or
// `replaceAtomic` — the snapshot, the tag, the hint that names those files — fsyncs them first, so a
// power cut cannot keep a snapshot and lose the name of a file it lists. One fsync per directory
// per commit, not one per file. A directory's fsync that fails (EIO) fails the atomic write with
// an IOError naming the directory; only the refusals that say the file system does not sync
// directories (`DIR_SYNC_NOT_SUPPORTED`) are passed over. `createAtomic` then leaves nothing: a
// name it had linked is removed again, so a throw means "not made" (`takeBack`).

import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { LsmError } from './errors.ts';

/** What identifies one version of a file: a file replaced by another (delete + create) differs. */
export interface FileStat {
  size: number;
  mtimeMs: number;
  /** 0 when the FileIO cannot tell. */
  ino: number;
}

export interface FileIO {
  readFile(path: string): Buffer;
  /** undefined when the file does not exist. */
  readFileIfExists(path: string): Buffer | undefined;
  exists(path: string): boolean;
  size(path: string): number;
  mtimeMs(path: string): number;
  /** One stat(2) of a file or directory; undefined when it does not exist. Optional (expire.ts falls back to size + mtimeMs). */
  stat?(path: string): FileStat | undefined;
  /** Names in a directory; [] when it does not exist. Hidden temporary files are left out. */
  list(dir: string): string[];
  /**
   * The regular files `list` leaves out (names starting with a dot: the temporary files of
   * `createAtomic`/`replaceAtomic` among them); [] when the directory does not exist. Optional:
   * orphan removal (expire.ts) sweeps a killed atomic write's temporary file only through it.
   */
  listHidden?(dir: string): string[];
  mkdirs(dir: string): void;
  writeNew(path: string, data: Uint8Array): void;
  /**
   * Optional: `writeNew` of a file whose bytes `produce` hands to `write` in parts, in order, as it
   * makes them (a Parquet data file, a column chunk at a time), so the file is never whole in
   * memory. The same contract as `writeNew`: created exclusively (AlreadyExists), complete and
   * fsynced when it returns; besides, when `produce` or a write fails, the part written is removed
   * and the error rethrown (produce's own as it is). Callers go through `writeNewInParts`, which
   * joins the parts and calls `writeNew` where this is not offered.
   */
  writeNewStream?(path: string, produce: (write: (part: Uint8Array) => void) => void): void;
  /**
   * false when the target already exists (nothing written). A throw (IOError) means not made: the
   * name is not there (LocalFileIO's, unless its message says removing it again failed too).
   */
  createAtomic(path: string, data: Uint8Array): boolean;
  /** A throw (IOError) may come after the new content took the name: its directory's fsync failed. */
  replaceAtomic(path: string, data: Uint8Array): void;
  remove(path: string): void;
  removeDir(dir: string): void;
}

/**
 * An IOError for a failed file operation: `<op> <path> failed: <code>: <message>`. Node's message
 * already starts with its code ("EEXIST: file already exists, mkdir '…'"), which was then said
 * twice ("EEXIST EEXIST: …"); it is said once.
 */
export function ioError(op: string, path: string, cause: unknown): LsmError {
  const code = (cause as NodeJS.ErrnoException)?.code ?? 'unknown';
  const message = (cause as Error)?.message ?? '';
  const text = message.startsWith(`${code}:`) || message.startsWith(`${code} `) || message === code ? message : `${code} ${message}`.trim();
  return new LsmError('IOError', `${op} ${path} failed: ${text}`, { path, cause });
}

/**
 * The refusals of a folder's open or fsync that mean "not done here", passed over: EINVAL,
 * ENOTSUP/EOPNOTSUPP (a file system without fsync of folders: some FUSE and network ones), EISDIR,
 * EPERM/EACCES (Windows, where a folder opens only for reading and its fsync is refused; a share
 * that does not let a folder be opened), and ENOENT (a folder removed since it was noted: its
 * parent's fsync makes that durable). A rename or link there is still atomic, only its
 * durability is the file system's. Anything else (EIO above all) is a failure: the folder's
 * entries may not be on disk. core/sync's restore (hq/mirror.ts) passes over the same set.
 */
export const DIR_SYNC_NOT_SUPPORTED: ReadonlySet<string> = new Set(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EISDIR', 'EPERM', 'EACCES', 'ENOENT']);

/**
 * Fsyncs a folder; a refusal in `DIR_SYNC_NOT_SUPPORTED` is passed over. Any other failure is
 * thrown as an error with the errno's code whose message names the folder (`EIO: …; folder <dir>
 * not synced`), for the atomic write that needed it to wrap (ioError).
 */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException)?.code;
    if (code !== undefined && DIR_SYNC_NOT_SUPPORTED.has(code)) return;
    throw dirSyncFailure(dir, e);
  } finally {
    if (fd !== undefined) {
      try {
        fs.closeSync(fd);
      } catch {
        // a read-only descriptor: nothing of the folder's rides on its close
      }
    }
  }
}

/** `e` (a folder's open or fsync failing) as an error with its code whose message names the folder. */
function dirSyncFailure(dir: string, e: unknown): NodeJS.ErrnoException {
  const code = (e as NodeJS.ErrnoException)?.code ?? 'unknown';
  const text = ((e as Error)?.message ?? '').replace(`${code}: `, '');
  return Object.assign(new Error(`${code}: ${text}; folder ${dir} not synced`, { cause: e }), { code });
}

/**
 * `mkdirSync(dir, recursive)`, adding to `changed` the parent of every directory it created: a new
 * directory's name is durable only once its parent is fsynced (LocalFileIO, core/sync's restore).
 */
export function makeDirsNoting(dir: string, changed: Set<string>): void {
  const first = fs.mkdirSync(dir, { recursive: true });
  if (first === undefined) return;
  for (let d = dir; ; d = dirname(d)) {
    changed.add(dirname(d));
    if (d === first || dirname(d) === d) break;
  }
}

function writeAndSync(path: string, data: Uint8Array, flag: string): void {
  const fd = fs.openSync(path, flag, 0o644);
  try {
    let off = 0;
    while (off < data.length) off += fs.writeSync(fd, data, off, data.length - off);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Writes a new file (FileIO.writeNew's contract) whose bytes `produce` hands over in parts:
 * streamed to the file where the FileIO offers `writeNewStream`, else joined and given to
 * `writeNew` (a wrapper that watches or disturbs writeNew sees the file as before).
 */
export function writeNewInParts(io: FileIO, path: string, produce: (write: (part: Uint8Array) => void) => void): void {
  if (io.writeNewStream) {
    io.writeNewStream(path, produce);
    return;
  }
  io.writeNew(path, joinParts(produce));
}

function joinParts(produce: (write: (part: Uint8Array) => void) => void): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  produce((part) => {
    parts.push(part); // a producer never changes a part it handed over
    total += part.length;
  });
  const out = new Uint8Array(total);
  let p = 0;
  for (const part of parts) {
    out.set(part, p);
    p += part.length;
  }
  return out;
}

/** Parts smaller than this are gathered into one write(2); larger ones are written as they are. */
const STAGE_BYTES = 256 * 1024;

export const tempNameFor = (path: string): string => join(dirname(path), `.${basename(path)}.${randomUUID()}.tmp`);

/**
 * A name `tempNameFor` gives, exactly: `.<name>.<uuid>.tmp`; group 1 is `<name>`. Java's
 * `Path.createTempPath` names its temporary files the same way (its FileType.unwrapTempFileName).
 */
export const TEMP_NAME = /^\.(.+)\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$/;

export class LocalFileIO implements FileIO {
  /** Directories whose entries changed since the last atomic write (see the header). */
  private readonly unsyncedDirs = new Set<string>();

  /**
   * Fsyncs the directories `writeNew` and `mkdirs` changed: before a file that names their files.
   * One whose fsync fails stays noted (and so do those not reached): the atomic write fails before
   * it writes, and the next one tries them again.
   */
  private syncDirs(): void {
    for (const d of this.unsyncedDirs) {
      fsyncDir(d);
      this.unsyncedDirs.delete(d);
    }
  }

  /** `mkdirSync(dir, recursive)`, noting the parent of every directory it created. */
  private makeDirs(dir: string): void {
    makeDirsNoting(dir, this.unsyncedDirs);
  }

  readFile(path: string): Buffer {
    try {
      return fs.readFileSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new LsmError('NotFound', `file ${path} does not exist`, { path, cause: e });
      }
      throw ioError('read', path, e);
    }
  }

  readFileIfExists(path: string): Buffer | undefined {
    try {
      return fs.readFileSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw ioError('read', path, e);
    }
  }

  exists(path: string): boolean {
    return fs.existsSync(path);
  }

  size(path: string): number {
    try {
      return fs.statSync(path).size;
    } catch (e) {
      throw ioError('stat', path, e);
    }
  }

  mtimeMs(path: string): number {
    try {
      return fs.statSync(path).mtimeMs;
    } catch (e) {
      throw ioError('stat', path, e);
    }
  }

  stat(path: string): FileStat | undefined {
    try {
      const s = fs.statSync(path, { throwIfNoEntry: false });
      return s === undefined ? undefined : { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
    } catch (e) {
      throw ioError('stat', path, e);
    }
  }

  list(dir: string): string[] {
    try {
      return fs.readdirSync(dir).filter((n) => !n.startsWith('.'));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw ioError('list', dir, e);
    }
  }

  listHidden(dir: string): string[] {
    try {
      return fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.name.startsWith('.') && e.isFile())
        .map((e) => e.name);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw ioError('list', dir, e);
    }
  }

  mkdirs(dir: string): void {
    try {
      this.makeDirs(dir);
    } catch (e) {
      throw ioError('mkdir', dir, e);
    }
  }

  writeNew(path: string, data: Uint8Array): void {
    try {
      writeAndSync(path, data, 'wx');
      this.unsyncedDirs.add(dirname(path));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new LsmError('AlreadyExists', `file ${path} already exists`, { path, cause: e });
      }
      throw ioError('write', path, e);
    }
  }

  writeNewStream(path: string, produce: (write: (part: Uint8Array) => void) => void): void {
    // A subclass that changes writeNew (core/replay's scratch FileIO: no fsync, its own
    // bookkeeping) gets the file through its writeNew, joined, as before this method existed.
    if (this.writeNew !== LocalFileIO.prototype.writeNew) {
      this.writeNew(path, joinParts(produce));
      return;
    }
    let fd: number;
    try {
      fd = fs.openSync(path, 'wx', 0o644);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new LsmError('AlreadyExists', `file ${path} already exists`, { path, cause: e });
      }
      throw ioError('write', path, e);
    }
    const writeAll = (data: Uint8Array, length: number): void => {
      try {
        let off = 0;
        while (off < length) off += fs.writeSync(fd, data, off, length - off);
      } catch (e) {
        throw ioError('write', path, e);
      }
    };
    let stage: Uint8Array | undefined;
    let staged = 0;
    const flushStage = (): void => {
      if (staged > 0) writeAll(stage!, staged);
      staged = 0;
    };
    let open = true;
    try {
      produce((part) => {
        if (part.length >= STAGE_BYTES / 4) {
          flushStage();
          writeAll(part, part.length);
          return;
        }
        if (staged + part.length > STAGE_BYTES) flushStage();
        stage ??= new Uint8Array(STAGE_BYTES);
        stage.set(part, staged);
        staged += part.length;
      });
      flushStage();
      try {
        fs.fsyncSync(fd);
        open = false;
        fs.closeSync(fd);
      } catch (e) {
        throw ioError('write', path, e);
      }
    } catch (e) {
      if (open) {
        try {
          fs.closeSync(fd);
        } catch {
          // the error below is the one to report
        }
      }
      try {
        fs.unlinkSync(path);
      } catch {
        // nothing to clean
      }
      throw e;
    }
    this.unsyncedDirs.add(dirname(path));
  }

  createAtomic(path: string, data: Uint8Array): boolean {
    const tmp = tempNameFor(path);
    try {
      this.makeDirs(dirname(path));
      this.syncDirs();
      writeAndSync(tmp, data, 'wx');
      try {
        fs.linkSync(tmp, path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw e;
      }
      try {
        fsyncDir(dirname(path));
      } catch (e) {
        throw takeBack(path, e, this.unsyncedDirs);
      }
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

  replaceAtomic(path: string, data: Uint8Array): void {
    const tmp = tempNameFor(path);
    try {
      this.makeDirs(dirname(path));
      this.syncDirs();
      writeAndSync(tmp, data, 'wx');
      fs.renameSync(tmp, path);
      try {
        fsyncDir(dirname(path));
      } catch (e) {
        // A rename cannot be taken back (the old content is gone): the new content stays in
        // place, told by the error, and the folder stays noted for the next atomic write.
        this.unsyncedDirs.add(dirname(path));
        throw Object.assign(new Error(`${(e as Error).message}; ${basename(path)} is replaced, but may not survive a power cut`, { cause: e }), { code: (e as NodeJS.ErrnoException).code });
      }
    } catch (e) {
      try {
        fs.unlinkSync(tmp);
      } catch {
        // nothing to clean
      }
      throw ioError('replace', path, e);
    }
  }

  remove(path: string): void {
    try {
      fs.unlinkSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw ioError('remove', path, e);
    }
  }

  removeDir(dir: string): void {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch (e) {
      throw ioError('remove', dir, e);
    }
  }
}

/**
 * `createAtomic`'s file at `path` is linked but its folder's fsync failed (`e`): the name is
 * removed again, so that the throw means "not made" as every other failure of createAtomic does:
 * a table writer whose commit failed commits the same files again, and with the snapshot left in
 * place its retry made the next snapshot add them a second time (read as Corruption, "added
 * twice"). No other code of this process runs between the link and the unlink (both are
 * synchronous), so no reader here saw the snapshot; a reader in another process may have. The
 * folder stays noted for the next atomic write. Returns the error to throw: `e`'s code, its message
 * saying what became of the name (still there when the unlink failed too).
 */
function takeBack(path: string, e: unknown, unsynced: Set<string>): NodeJS.ErrnoException {
  unsynced.add(dirname(path));
  let outcome = `${basename(path)} was removed again`;
  try {
    fs.unlinkSync(path);
  } catch (e2) {
    outcome = `${basename(path)} is in place, but may not survive a power cut: removing it again failed (${(e2 as Error)?.message ?? String(e2)})`;
  }
  return Object.assign(new Error(`${(e as Error).message}; ${outcome}`, { cause: e }), { code: (e as NodeJS.ErrnoException).code });
}

export const localFileIO: FileIO = new LocalFileIO();

/**
 * A FileIO that hands every call to another. Wrappers that watch or disturb some calls (byte
 * counters, fault injectors) extend it and override only those; `stat` and `listHidden` are
 * offered exactly when the inner FileIO offers them.
 */
export class ForwardingFileIO implements FileIO {
  readonly stat?: (path: string) => FileStat | undefined;
  readonly listHidden?: (dir: string) => string[];
  constructor(protected readonly inner: FileIO) {
    if (inner.stat) this.stat = (path) => inner.stat!(path);
    if (inner.listHidden) this.listHidden = (dir) => inner.listHidden!(dir);
  }
  readFile(path: string): Buffer {
    return this.inner.readFile(path);
  }
  readFileIfExists(path: string): Buffer | undefined {
    return this.inner.readFileIfExists(path);
  }
  exists(path: string): boolean {
    return this.inner.exists(path);
  }
  size(path: string): number {
    return this.inner.size(path);
  }
  mtimeMs(path: string): number {
    return this.inner.mtimeMs(path);
  }
  list(dir: string): string[] {
    return this.inner.list(dir);
  }
  mkdirs(dir: string): void {
    this.inner.mkdirs(dir);
  }
  writeNew(path: string, data: Uint8Array): void {
    this.inner.writeNew(path, data);
  }
  createAtomic(path: string, data: Uint8Array): boolean {
    return this.inner.createAtomic(path, data);
  }
  replaceAtomic(path: string, data: Uint8Array): void {
    this.inner.replaceAtomic(path, data);
  }
  remove(path: string): void {
    this.inner.remove(path);
  }
  removeDir(dir: string): void {
    this.inner.removeDir(dir);
  }
}
