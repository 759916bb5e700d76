// The file `tilstand hq export` writes: whole or not at all. Rows go to a hidden temporary file
// beside the target (`.<name>.<uuid>.tmp`, same directory so the rename cannot cross
// filesystems), in chunks of at most CHUNK_CHARS characters written synchronously, so memory stays
// flat however large the table; `commit` fsyncs it and renames it over the target, then fsyncs the
// directory. `abort` (any failure: the row source threw, the disk filled) removes the temporary
// file: a truncated export never sits at the target path looking finished.
//
// Concurrency: one writer per instance, synchronous; two exports to the same target each write
// their own temporary file and the last rename wins.
// Invariants: the target path is only ever touched by rename(2); after `commit` or `abort` the
// temporary file no longer exists (a kill -9 midway can leave it: hidden, named `.…tmp`).

import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CliError, EXIT } from '../../lsm/cli/args.ts';

/** Characters gathered before one write(2): bounds the memory a CSV export holds. */
const CHUNK_CHARS = 64 * 1024;
/** Bytes handed to one write(2) of a binary body. */
const WRITE_BYTES_MAX = 1024 * 1024;

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

  /** Creates the temporary file beside `dest` (which is not touched until `commit`). */
  constructor(readonly dest: string) {
    this.tempPath = join(dirname(dest), `.${basename(dest)}.${randomUUID()}.tmp`);
    try {
      this.fd = openSync(this.tempPath, 'wx');
    } catch (e) {
      throw writeFailure(dest, e);
    }
  }

  /** Queues one line (a newline is added); writes when a chunk is full. */
  line(text: string): void {
    this.parts.push(text, '\n');
    this.chars += text.length + 1;
    if (this.chars >= CHUNK_CHARS) this.flush();
  }

  /** Writes `data` after what is queued. */
  bytes(data: Uint8Array): void {
    this.flush();
    for (let off = 0; off < data.length; off += WRITE_BYTES_MAX) this.write(data.subarray(off, Math.min(data.length, off + WRITE_BYTES_MAX)));
  }

  /** Writes what is queued. */
  flush(): void {
    if (this.chars === 0) return;
    const text = this.parts.join('');
    this.parts = [];
    this.chars = 0;
    this.write(Buffer.from(text, 'utf8'));
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
