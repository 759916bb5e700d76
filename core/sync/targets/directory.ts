// A directory target: a mounted share (SMB/NFS) or a local disk at HQ. Keys are paths under the
// root. Immutable files and pointers are both written to a hidden temporary file in the target
// folder, fsynced, renamed into place, and the folder fsynced — a reader never sees a partial
// file, and a crash leaves only `.<name>.<uuid>.tmp` files, which `list` ignores.
// `head` re-reads the file and hashes it: verification here is a real re-read.

import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SyncError } from '../errors.ts';
import { checkKey, checkPrefix, isSiteFolder } from '../names.ts';
import { guardWrite, type ObjectInfo, type PutBody, type PutMeta, type SyncTarget, type TargetScope } from './target.ts';

const TEMP = /^\..*\.tmp$/;

/**
 * Where the symbolic link at `path` leads: a folder or a file, by its real path; undefined when
 * it leads nowhere (its disk not mounted) or in a loop: as a file gone since the folder was read,
 * it fails no listing. Another error (EACCES) is thrown, as a folder's that cannot be read is.
 */
async function linkTarget(path: string): Promise<{ kind: 'dir' | 'file'; real: string } | undefined> {
  try {
    const [st, real] = await Promise.all([fs.promises.stat(path), fs.promises.realpath(path)]);
    return st.isDirectory() ? { kind: 'dir', real } : st.isFile() ? { kind: 'file', real } : undefined;
  } catch (e) {
    if (['ENOENT', 'ENOTDIR', 'ELOOP'].includes((e as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw e;
  }
}

/** Whether the folder `inner` is `outer` or lies below it (compared as given: real paths for where they lead). */
export function within(inner: string, outer: string): boolean {
  const rel = relative(outer, inner);
  return rel === '' || (rel.split(sep)[0] !== '..' && !isAbsolute(rel));
}

function transport(op: string, key: string, e: unknown): SyncError {
  if ((e as NodeJS.ErrnoException)?.code === 'ENOENT') return new SyncError('NotFound', `${op} ${key}: not found`, { cause: e });
  return new SyncError('Transport', `${op} ${key} failed: ${(e as Error)?.message ?? e}`, { cause: e });
}

/** A folder or file that cannot be created: the site's user may not write there, or it is mounted read-only. */
const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS']);

/**
 * Flushes a file or folder to stable storage. Throws: a share reports a failed write-back of the
 * file's bytes here (NFS, SMB), so a put whose file fsync fails has not written it. A file is
 * opened for writing: Windows flushes only a handle that may write.
 */
function fsync(path: string, flags: 'r' | 'r+'): void {
  const fd = fs.openSync(path, flags);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Flushes a folder (a rename, a removal in it); an error is tolerated, unlike a file's. */
function fsyncDir(path: string): void {
  try {
    fsync(path, 'r');
  } catch {
    // some filesystems (SMB) refuse fsync on directories; rename is still atomic there
  }
}

/**
 * The modes of what a site writes into HQ's folder: read by HQ, written by the site alone. Set after
 * creation, as a mode given to open or mkdir passes through the process umask: the site's service
 * runs with UMask=0077 (build/tilstand.service) for its own data directory, and HQ's files came out
 * 0600 in 0700 folders — on an NFS share or a USB disk nobody at HQ but that user (root squashed:
 * nobody) could read them, neither `tilstand hq` nor a Paimon engine. Who may enter HQ's folder
 * is set on its root. A share that keeps modes by its own rules (SMB) may refuse the change: its
 * rules stand.
 */
const FILE_MODE = 0o644;
const FOLDER_MODE = 0o755;

/** `mkdir -p dir`, each folder it makes given FOLDER_MODE. */
async function makeFolders(dir: string): Promise<void> {
  const first = await fs.promises.mkdir(dir, { recursive: true });
  if (first === undefined) return;
  // From `dir` up to the first folder made; bounded by the path's depth.
  for (let d = dir; ; d = dirname(d)) {
    await fs.promises.chmod(d, FOLDER_MODE).catch(() => undefined);
    if (d === first || dirname(d) === d) return;
  }
}

/** A directory target's description (`SyncTarget.description`): `dir:<root>`. */
export function directoryDescription(root: string): string {
  return `dir:${root}`;
}

/** The puts of each file under way in this process, the last one's promise (DirectoryTarget.writeVia). */
const writesInFlight = new Map<string, Promise<void>>();

export class DirectoryTarget implements SyncTarget {
  readonly description: string;

  constructor(
    readonly root: string,
    private readonly scope: TargetScope = {},
  ) {
    this.description = directoryDescription(root);
  }

  private path(key: string): string {
    return join(this.root, ...checkKey(key).split('/'));
  }

  /**
   * Puts of one file in this process go one after the other (`writesInFlight`): they share its
   * temporary name, and one's removal of a leftover, or its clean-up after a failure, took the
   * other's file from under it ("put …: not found"). One engine's loop and syncNow take turns, but
   * `runOnce` may still be called beside the loop.
   */
  private async writeVia(key: string, body: PutBody): Promise<void> {
    const dest = this.path(key);
    const before = writesInFlight.get(dest);
    const mine = (before ?? Promise.resolve()).catch(() => undefined).then(() => this.writeOnce(key, dest, body));
    writesInFlight.set(dest, mine);
    try {
      await mine;
    } finally {
      if (writesInFlight.get(dest) === mine) writesInFlight.delete(dest);
    }
  }

  private async writeOnce(key: string, dest: string, body: PutBody): Promise<void> {
    // One temporary name per key: what a put killed mid-write (kill -9, a power cut) left is removed
    // by the next put of that key — its step's retry. Named with a random part, every kill left one
    // more partial copy of the file in HQ's folder for good. One sender writes a site's keys (the
    // sender lock and marker); a second one's rename would fail, and its step be retried.
    let tmp = join(dirname(dest), `.${basename(dest)}.tmp`);
    let created = false;
    try {
      await makeFolders(dirname(dest));
      // A leftover that cannot be removed (held open by another process on a share or on Windows:
      // EBUSY, EPERM) is left for a later put; this one writes beside it under a name of its own.
      await fs.promises.rm(tmp, { force: true }).catch(() => {
        tmp = join(dirname(dest), `.${basename(dest)}.${randomUUID()}.tmp`);
      });
      const handle = await fs.promises.open(tmp, 'wx');
      created = true;
      await handle.chmod(FILE_MODE).catch(() => undefined);
      const out = fs.createWriteStream(tmp, { fd: handle });
      await pipeline(body instanceof Uint8Array ? Readable.from([Buffer.from(body)]) : body, out);
      fsync(tmp, 'r+');
      await fs.promises.rename(tmp, dest);
      fsyncDir(dirname(dest));
    } catch (e) {
      await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
      // Creating a folder or a new, uniquely named file is refused only by the folder's permissions
      // (or a read-only mount): waiting mends nothing, and "offline" would send the operator to the
      // line. AccessDenied, retried at backoff as HQ refusing S3 credentials is, so a fixed folder
      // resumes without a restart. Later errors stay Transport: on a share a rename over a file
      // another process holds open, or a write-back, can fail so and pass.
      if (!created && NOT_WRITABLE.has((e as NodeJS.ErrnoException)?.code ?? '')) {
        throw new SyncError('AccessDenied', `put ${key}: HQ's folder ${this.root} cannot be written by this site (${(e as Error).message})`, { cause: e });
      }
      throw transport('put', key, e);
    }
  }

  async put(key: string, body: PutBody, _meta: PutMeta): Promise<void> {
    guardWrite(this.scope, key);
    await this.writeVia(key, body);
  }

  async putPointer(key: string, bytes: Uint8Array): Promise<void> {
    guardWrite(this.scope, key);
    await this.writeVia(key, bytes);
  }

  async list(prefix: string): Promise<ObjectInfo[]> {
    checkPrefix(prefix);
    const out: ObjectInfo[] = [];
    // Start at the deepest folder the prefix names, then filter by the full prefix.
    const cut = prefix.lastIndexOf('/');
    const start = cut < 0 ? this.root : join(this.root, ...prefix.slice(0, cut).split('/'));
    // A symbolic link is followed (HQ's admin moved a large table onto a disk of its own and
    // linked it back: the site writes and `head`s through it, and a listing that went past it left
    // the table out of `hq sites`, `hq pull` and `restore`). `chain`: the real paths of the folders
    // walked down to `dir`; a link back to one of them or above is a loop and not followed, and a
    // link to nothing is left out, as a file gone since the folder was read.
    const walk = async (dir: string, chain: readonly string[]): Promise<void> => {
      let entries: fs.Dirent[];
      try {
        entries = await fs.promises.readdir(dir, { withFileTypes: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return;
        throw transport('list', prefix, e);
      }
      const real = chain[chain.length - 1]!;
      for (const d of entries) {
        const p = join(dir, d.name);
        let kind: 'dir' | 'file' | undefined = d.isDirectory() ? 'dir' : d.isFile() ? 'file' : undefined;
        let realP = join(real, d.name);
        if (d.isSymbolicLink()) {
          const to = await linkTarget(p).catch((e: unknown) => {
            throw transport('list', prefix, e);
          });
          if (to === undefined || (to.kind === 'dir' && chain.some((c) => within(c, to.real)))) continue;
          // Only where a site's files lie (names.ts `isSiteFolder`): a link to a large tree left
          // inside a table's folder was walked, and `hq pull` copied all of it.
          if (to.kind === 'dir' && !isSiteFolder(relative(this.root, p).split(sep).join('/'))) continue;
          [kind, realP] = [to.kind, to.real];
        }
        if (kind === 'dir') await walk(p, [...chain, realP]);
        else if (kind === 'file' && !TEMP.test(d.name)) {
          const key = relative(this.root, p).split(sep).join('/');
          if (!key.startsWith(prefix)) continue;
          // Gone since the folder was read (a site's prune or run-tag removal, at HQ every minute;
          // a listing of all of HQ takes minutes): listed as it is now, without it.
          const size = await fs.promises.stat(p).then(
            (st) => st.size,
            (e: NodeJS.ErrnoException) => {
              if (e.code === 'ENOENT') return undefined;
              throw transport('list', prefix, e);
            },
          );
          if (size !== undefined) out.push({ key, size });
        }
      }
    };
    const startReal = await fs.promises.realpath(start).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return undefined;
      throw transport('list', prefix, e);
    });
    if (startReal !== undefined) await walk(start, [startReal]);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async get(key: string): Promise<Buffer> {
    try {
      return await fs.promises.readFile(this.path(key));
    } catch (e) {
      throw transport('get', key, e);
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const p = this.path(key);
    try {
      const sha = createHash('sha256');
      const md5 = createHash('md5');
      let size = 0;
      for await (const chunk of fs.createReadStream(p)) {
        sha.update(chunk as Buffer);
        md5.update(chunk as Buffer);
        size += (chunk as Buffer).length;
      }
      return { key, size, sha256: sha.digest('hex'), md5: md5.digest('hex') };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'EISDIR') return undefined;
      throw transport('head', key, e);
    }
  }

  async remove(key: string): Promise<void> {
    guardWrite(this.scope, key);
    try {
      await fs.promises.rm(this.path(key), { force: true });
      fsyncDir(dirname(this.path(key)));
    } catch (e) {
      throw transport('remove', key, e);
    }
  }

  async close(): Promise<void> {}
}
