// The file `tilstand hq export` writes: whole or not at all. Rows go to a hidden temporary file
// beside the target (`.<name>.<pid>@<host>.<uuid>.tmp`, a long name cut: below; same directory
// so the rename cannot cross filesystems), in chunks of at most CHUNK_CHARS characters (CHUNK_BYTES bytes of a binary body)
// written synchronously, so memory stays flat however large the table; `commit` fsyncs it and
// renames it over the target, then fsyncs the directory. `abort` (any failure: the row source
// threw, the disk filled) removes the temporary file: a truncated export never sits at the target
// path looking finished.
//
// A kill -9 midway leaves the temporary file behind; the next export to the same target removes
// such leftovers: those named with this host and a pid that is no longer alive. One whose pid is
// alive (another export writing it now, or a pid reused since: then it stays) or that names
// another host (a shared directory) is left alone; so are names of another form (the `.<name>.
// <uuid>.tmp` of older versions, whose owner cannot be told).
//
// A file name may have 255 bytes (NAME_MAX of ext4, XFS, NTFS, SMB), and the tail after the name
// takes up to TAIL_BYTES_MAX of them: a target name too long to leave room for it is cut, at a
// character, and followed by `~` and a hash of the whole name (`tempStem`), so the temporary name
// fits and still belongs to that target alone. Uncut, a name of 140 to 200 bytes (as long as the
// host's name) failed the export with ENAMETOOLONG.
//
// Concurrency: one writer per instance, synchronous; two exports to the same target each write
// their own temporary file and the last rename wins.
// Invariants: the target path is only ever touched by rename(2); after `commit` or `abort` the
// temporary file no longer exists.

import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { CliError, EXIT } from '../../lsm/cli/args.ts';
import { tempStem as stemOf } from '../../lsm/temp-names.ts';
import { processAlive } from '../../lsm/writer-lock.ts';

/** Characters gathered before one write(2): bounds the memory a CSV export holds. */
const CHUNK_CHARS = 64 * 1024;
/** Bytes of a binary body (Parquet pages, many of them small) gathered before one write(2). */
const CHUNK_BYTES = 1024 * 1024;
/** Bytes handed to one write(2) of a binary body. */
const WRITE_BYTES_MAX = 1024 * 1024;

/** This host in a temporary file's name: letters, digits and `-` only, so the name parses back. */
const HOST = hostname().replace(/[^A-Za-z0-9-]/g, '-').slice(0, 64);
/** What follows `.<name>.` in a temporary file's name: owner pid, host, uuid. */
const TEMP_TAIL = /^(\d+)@([A-Za-z0-9-]*)\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$/;

/** Bytes of the tail after the stem: a pid of up to 10 digits, `@`, the host, `.`, a uuid, `.tmp`. */
const TAIL_BYTES_MAX = 10 + 1 + 64 + 1 + 36 + 4;

/** What a temporary file of an export to `dest` is named before its tail (core/lsm temp-names.ts). */
const tempStem = (dest: string): string => stemOf(basename(dest), TAIL_BYTES_MAX);

/**
 * Removes the temporary files of exports to `dest` that a process of this host left when it died
 * (kill -9, power cut); returns their paths. Never one whose process is alive.
 */
export function removeStaleTemps(dest: string): string[] {
  const dir = dirname(dest);
  const prefix = tempStem(dest);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return []; // no directory: creating the temporary file says so
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const m = TEMP_TAIL.exec(name.slice(prefix.length));
    if (!m || m[2] !== HOST) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || processAlive(pid)) continue;
    try {
      rmSync(join(dir, name), { force: true });
      removed.push(join(dir, name));
    } catch {
      // not ours to remove (permissions): it stays, as before
    }
  }
  return removed;
}

function writeFailure(dest: string, cause: unknown): CliError {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  const message = (cause as Error | undefined)?.message ?? String(cause);
  return new CliError(EXIT.io, `cannot write ${dest}: ${code !== undefined && !message.startsWith(code) ? `${code} ` : ''}${message}`);
}

export class ExportFile {
  readonly tempPath: string;
  private fd: number | undefined;
  private parts: string[] = [];
  private chars = 0;
  private binParts: Uint8Array[] = [];
  private binBytes = 0;

  /**
   * Creates the temporary file beside `dest` (which is not touched until `commit`), after
   * removing those earlier exports to `dest` left when they were killed.
   */
  constructor(readonly dest: string) {
    removeStaleTemps(dest);
    this.tempPath = join(dirname(dest), `${tempStem(dest)}${process.pid}@${HOST}.${randomUUID()}.tmp`);
    try {
      this.fd = openSync(this.tempPath, 'wx');
    } catch (e) {
      throw writeFailure(dest, e);
    }
  }

  /** Queues one line (a newline is added); writes when a chunk is full. */
  line(text: string): void {
    if (this.binBytes > 0) this.flushBytes();
    this.parts.push(text, '\n');
    this.chars += text.length + 1;
    if (this.chars >= CHUNK_CHARS) this.flush();
  }

  /** Queues `data` after what is queued (it is not copied: the caller leaves it as it is); writes when a chunk is full. */
  bytes(data: Uint8Array): void {
    if (this.fd === undefined) throw new Error(`ExportFile ${this.dest}: written after commit or abort`);
    this.flushText();
    if (data.length >= CHUNK_BYTES) {
      this.flushBytes();
      for (let off = 0; off < data.length; off += WRITE_BYTES_MAX) this.write(data.subarray(off, Math.min(data.length, off + WRITE_BYTES_MAX)));
      return;
    }
    this.binParts.push(data);
    this.binBytes += data.length;
    if (this.binBytes >= CHUNK_BYTES) this.flushBytes();
  }

  /** Writes what is queued. */
  flush(): void {
    this.flushText();
    this.flushBytes();
  }

  private flushText(): void {
    if (this.chars === 0) return;
    const text = this.parts.join('');
    this.parts = [];
    this.chars = 0;
    this.write(Buffer.from(text, 'utf8'));
  }

  private flushBytes(): void {
    if (this.binBytes === 0) return;
    const data = this.binParts.length === 1 ? this.binParts[0]! : Buffer.concat(this.binParts, this.binBytes);
    this.binParts = [];
    this.binBytes = 0;
    this.write(data);
  }

  private write(data: Uint8Array): void {
    if (this.fd === undefined) throw new Error(`ExportFile ${this.dest}: written after commit or abort`);
    try {
      // write(2) may write less than asked (a full disk, a signal): go on from there.
      for (let off = 0; off < data.length; ) off += writeSync(this.fd, data, off, data.length - off);
    } catch (e) {
      throw writeFailure(this.dest, e);
    }
  }

  /** Flushes, fsyncs and renames the temporary file to the target; on failure removes it and throws. */
  commit(): void {
    try {
      this.flush();
      const fd = this.fd!;
      this.fd = undefined;
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(this.tempPath, this.dest);
    } catch (e) {
      this.abort();
      throw e instanceof CliError ? e : writeFailure(this.dest, e);
    }
    fsyncDir(dirname(this.dest));
  }

  /** Closes and removes the temporary file; never throws (it runs while another error unwinds). */
  abort(): void {
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        // already failing; the removal below is what matters
      }
      this.fd = undefined;
    }
    this.parts = [];
    this.chars = 0;
    this.binParts = [];
    this.binBytes = 0;
    try {
      rmSync(this.tempPath, { force: true });
    } catch {
      // cannot remove it (permissions changed midway): it stays hidden, named `.…tmp`
    }
  }
}

/** Makes the rename durable; some filesystems refuse fsync on a directory (the rename is still atomic). */
function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // best effort
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
