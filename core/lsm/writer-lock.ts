// One writer per table (and, with the same lock, one HQ sync sender per data directory:
// core/sync/engine.ts). The lock is a hidden file in the table directory (`.writer.lock`,
// ignored by Paimon's listings) holding the owner's pid, host and a token. It appears whole:
// the record is written and fsynced in a temp file next to it, which is then linked to the lock
// name (link(2) fails if the name exists), so no opener ever sees a lock without its owner — an
// empty or torn lock was left by a crash of an older version and is stale. A lock whose process
// is gone (kill -9, power cut) is stale and is taken over; a live owner makes a second writer
// fail with Conflict naming the pid. Readers never take it.
//
// Limits: liveness is checked with kill(pid, 0) on this host only — a table on a shared
// filesystem written from two hosts is not protected (the appliance owns its disk).

import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import { LsmError } from './errors.ts';

interface LockContent {
  pid: number;
  host: string;
  token: string;
  sinceMs: number;
}

const heldInProcess = new Set<string>();

/** Whether a process with this pid runs on this host (EPERM: it does, as another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class WriterLock {
  private constructor(
    readonly path: string,
    private readonly token: string,
  ) {}

  /**
   * Takes the lock at `path` for `what` (named in errors). `rule` ends the message a live
   * owner's Conflict gives (default: the table writer's rule).
   */
  static acquire(path: string, what: string, rule = 'one writer per table'): WriterLock {
    if (heldInProcess.has(path)) {
      throw new LsmError('Conflict', `${what} already has a writer in this process; ${rule}`, { path });
    }
    const content: LockContent = { pid: process.pid, host: hostname(), token: randomUUID(), sinceMs: Date.now() };
    for (let attempt = 0; attempt < 3; attempt++) {
      // Created whole (see the head of this file): with O_EXCL and then the content, an opener in
      // between would find an empty lock, take it for stale and both would write.
      const temp = `${path}.${content.token}`;
      try {
        const fd = fs.openSync(temp, 'wx', 0o644);
        try {
          fs.writeSync(fd, JSON.stringify(content));
          fs.fsyncSync(fd);
        } finally {
          fs.closeSync(fd);
        }
        fs.linkSync(temp, path);
        heldInProcess.add(path);
        return new WriterLock(path, content.token);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw new LsmError('IOError', `cannot create writer lock ${path}: ${(e as Error).message}`, { path, cause: e });
        }
      } finally {
        fs.rmSync(temp, { force: true });
      }
      let holder: LockContent | undefined;
      try {
        holder = JSON.parse(fs.readFileSync(path, 'utf8')) as LockContent;
      } catch {
        holder = undefined; // torn or vanished: treat as stale
      }
      if (holder && holder.host === content.host && holder.pid !== process.pid && processAlive(holder.pid)) {
        throw new LsmError(
          'Conflict',
          `${what} is being written by process ${holder.pid} since ${new Date(holder.sinceMs).toISOString()}; ${rule}`,
          { path },
        );
      }
      if (holder && holder.host !== content.host) {
        throw new LsmError('Conflict', `${what} is locked by host ${holder.host} (pid ${holder.pid})`, { path });
      }
      // Stale: move it aside atomically so that only one contender removes it.
      const aside = `${path}.stale-${content.token}`;
      try {
        fs.renameSync(path, aside);
        fs.unlinkSync(aside);
      } catch {
        // someone else took it over first; try again
      }
    }
    throw new LsmError('Conflict', `could not take the writer lock of ${what}`, { path });
  }

  release(): void {
    heldInProcess.delete(this.path);
    try {
      const holder = JSON.parse(fs.readFileSync(this.path, 'utf8')) as LockContent;
      if (holder.token === this.token) fs.unlinkSync(this.path);
    } catch {
      // already gone
    }
  }
}
