// One writer per table (and, with the same lock, one HQ sync sender per data directory:
// core/sync/engine.ts). The lock is a hidden file in the table directory (`.writer.lock`,
// ignored by Paimon's listings) holding the owner's pid, host, a token and, on Linux, what tells
// that process instance from a later one with the same pid: the boot id and the process's start
// time. It appears whole: the record is written and fsynced in a temp file next to it, which is
// then linked to the lock name (link(2) fails if the name exists), so no opener ever sees a lock
// without its owner — an empty or torn lock was left by a crash of an older version and is stale.
// A lock whose process is gone (kill -9, power cut) is stale and is taken over; a live owner
// makes a second writer fail with Conflict naming the pid.
//
// Liveness: kill(pid, 0), and where the lock records them, the same boot id and the same start
// time of that pid (`/proc/<pid>/stat`). After a power cut an unrelated process often has the
// dead owner's pid (services start in the same order); the pid alone would keep the lock
// "alive" for good. A lock without these fields (an older version's) is judged by the pid alone.
//
// Takeover of a stale holder X is done under a claim, `<lock>.takeover-t<X's token>.<n>` (a torn
// X is named by its inode: `…-i<inode>.<n>`), created whole like the lock. Holding it, the
// contender reads the lock again and removes it only if it still is X. While X lies there only a
// claim holder removes it (X's owner is dead), and claim n is created (link(2): one winner) only
// when claim n-1's owner is dead, so at most one live process holds a claim on X: a contender
// that judged X stale, then slept while another took X over and linked its own lock, finds a lock
// that is not X and leaves it. (Renaming the lock aside and checking it afterwards cannot be
// made safe: putting a live lock back leaves the name empty for a moment, and a third opener links
// its own.) A claim whose owner died (crash mid-takeover) is passed by creating the next n; once X
// is gone it never comes back, so every claim on X is garbage and is deleted. Readers never take
// the lock.
//
// A record with this process's own pid is an earlier process's unless this process holds that
// lock; what it holds is known by the lock directory's real path (`lockKey`), so the same table
// reached by another spelling of its path (relative, a symbolic link) gets Conflict, never a
// takeover of this process's own live lock.
//
// Limits: liveness is checked on this host only — a table on a shared filesystem written from
// two hosts is not protected (the appliance owns its disk).

import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, resolve } from 'node:path';
import { LsmError } from './errors.ts';

interface LockContent {
  pid: number;
  host: string;
  token: string;
  sinceMs: number;
  /** Linux: /proc/sys/kernel/random/boot_id of the boot the owner ran in. */
  bootId?: string;
  /** Linux: the owner's start time, clock ticks since boot (/proc/<pid>/stat field 22). */
  startTicks?: number;
}

/** A holder as read from the lock name: its record (undefined when torn) and what names it. */
interface Holder {
  content: LockContent | undefined;
  key: string;
}

/** The locks this process holds, by `lockKey`. */
const heldInProcess = new Set<string>();
/** Claims on one stale holder tried before giving up (each needs a crash mid-takeover). */
const MAX_CLAIMS = 16;
const ATTEMPTS = 4;
const waitCell = new Int32Array(new SharedArrayBuffer(4));
const TOKEN = /^[A-Za-z0-9-]{1,64}$/;

let ownBootId: string | null | undefined;

/** This boot's id on Linux (cached: it does not change while the process runs); else undefined. */
function bootId(): string | undefined {
  if (ownBootId === undefined) {
    ownBootId = null;
    if (process.platform === 'linux') {
      try {
        const id = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
        if (id) ownBootId = id;
      } catch {
        // no procfs (a sandbox): the pid check alone, as elsewhere than Linux
      }
    }
  }
  return ownBootId ?? undefined;
}

/**
 * Field 22 (starttime) of a `/proc/<pid>/stat` line. Field 2 is the command in parentheses and
 * may itself hold spaces and ')', so the fields are counted from the last ')'.
 */
export function startTicksFromStat(stat: string): number | undefined {
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  // Fields 3, 4, … follow the command; starttime is the 20th of them.
  const v = stat.slice(close + 1).trim().split(' ')[19];
  if (v === undefined || !/^\d+$/.test(v)) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Start time of `pid` in clock ticks since boot; undefined when it cannot be read here (not
 * Linux, the process is gone, or procfs hides other users' processes: hidepid).
 */
export function processStartTicks(pid: number): number | undefined {
  if (process.platform !== 'linux') return undefined;
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  return startTicksFromStat(stat);
}

let ownStart: number | null | undefined;

/** This process's start ticks on Linux (cached: they never change); else undefined. */
function ownStartTicks(): number | undefined {
  if (ownStart === undefined) ownStart = processStartTicks(process.pid) ?? null;
  return ownStart ?? undefined;
}

/** Whether a process with this pid runs on this host (EPERM: it does, as another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the process that wrote `c` still runs: its pid is alive and, where `c` records them,
 * the boot and the pid's start time are the same (a pid reused after a reboot is not the owner).
 * This process's own pid in a record it is not holding is an earlier process's.
 */
function ownerAlive(c: LockContent): boolean {
  if (c.pid === process.pid || !processAlive(c.pid)) return false;
  if (c.bootId !== undefined) {
    const b = bootId();
    if (b !== undefined && b !== c.bootId) return false;
  }
  if (c.startTicks !== undefined) {
    // Unreadable (hidepid, or it exited just now): the pid check above decides, as without fields.
    const s = processStartTicks(c.pid);
    if (s !== undefined && s !== c.startTicks) return false;
  }
  return true;
}

/** A lock record as parsed, or undefined when it is not one (torn, empty, foreign shape). */
function parseContent(text: string): LockContent | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!v || typeof v !== 'object') return undefined;
  const c = v as Record<string, unknown>;
  // pid 0 or below would name a process group for kill(2), never an owner.
  if (!Number.isSafeInteger(c.pid) || (c.pid as number) <= 0 || typeof c.host !== 'string' || typeof c.token !== 'string') return undefined;
  const out: LockContent = { pid: c.pid as number, host: c.host, token: c.token, sinceMs: typeof c.sinceMs === 'number' ? c.sinceMs : 0 };
  if (typeof c.bootId === 'string') out.bootId = c.bootId;
  if (Number.isSafeInteger(c.startTicks)) out.startTicks = c.startTicks as number;
  return out;
}

/**
 * The file at `path` now, or undefined when there is none. Its key names this very file: the
 * token (unique per lock) or, for a torn one, its inode; a whole lock never gets a torn one's key.
 */
function readHolder(path: string): Holder | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new LsmError('IOError', `cannot read writer lock ${path}: ${(e as Error).message}`, { path, cause: e });
  }
  const content = parseContent(text);
  if (content && TOKEN.test(content.token)) return { content, key: `t${content.token}` };
  let ino: number;
  try {
    ino = fs.statSync(path).ino;
  } catch {
    return undefined;
  }
  // A record with an unusable token is judged like a torn one (by the pid it names, if any).
  return { content, key: `i${ino}` };
}

/** Creates `target` whole (temp file, fsync, link); false when the name exists. */
function createWhole(target: string, temp: string, text: string): boolean {
  try {
    const fd = fs.openSync(temp, 'wx', 0o644);
    try {
      fs.writeSync(fd, text);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.linkSync(temp, target);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new LsmError('IOError', `cannot create writer lock ${target}: ${(e as Error).message}`, { path: target, cause: e });
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

function removeQuietly(path: string): void {
  try {
    fs.unlinkSync(path);
  } catch {
    // gone already, or not ours to remove: a leftover claim only costs a name
  }
}

/**
 * Removes the stale holder keyed `key` from `path` under a claim (see the head of this file).
 * Returns the owner of a live claim on it when another process is taking it over right now.
 */
function takeOver(path: string, key: string, me: LockContent): LockContent | undefined {
  const text = JSON.stringify(me);
  let n = 1;
  for (; n <= MAX_CLAIMS; n++) {
    const claim = `${path}.takeover-${key}.${n}`;
    if (createWhole(claim, `${claim}.${me.token}`, text)) break;
    let other: LockContent | undefined;
    try {
      other = parseContent(fs.readFileSync(claim, 'utf8'));
    } catch {
      continue; // removed since: its owner is done, and the holder is gone
    }
    if (other && (other.host !== me.host || ownerAlive(other))) return other;
  }
  if (n > MAX_CLAIMS) {
    throw new LsmError('IOError', `${MAX_CLAIMS} takeovers of the stale writer lock ${path} died midway; delete ${path} and ${path}.takeover-* by hand`, { path });
  }
  let gone = false;
  try {
    const now = readHolder(path);
    if (now && now.key === key) {
      try {
        fs.unlinkSync(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
          throw new LsmError('IOError', `cannot remove the stale writer lock ${path}: ${(e as Error).message}`, { path, cause: e });
        }
      }
    }
    gone = true;
  } finally {
    // Once the holder is gone it never comes back (its owner is dead), so every claim on it is
    // garbage; while it lies there (an error above) only our own claim may go.
    if (gone) for (let k = n; k >= 1; k--) removeQuietly(`${path}.takeover-${key}.${k}`);
    else removeQuietly(`${path}.takeover-${key}.${n}`);
  }
  return undefined;
}

/**
 * What names the lock file at `path` whatever the spelling: its directory's real path and its
 * name. A record with this process's pid counts as stale unless this process holds that lock
 * (ownerAlive), so a second spelling (relative and absolute, a symbolic link) keyed apart would
 * take over this process's own live lock: two writers of one table.
 */
function lockKey(path: string): string {
  try {
    return resolve(fs.realpathSync(dirname(path)), basename(path));
  } catch {
    return resolve(path); // no such directory: creating the lock fails and names the path
  }
}

/**
 * Whether this process holds the writer lock at `path` now (a WriterLock acquired here and not
 * released): what a kept Table's caches are sound under (kept-tables.ts), read from this
 * process's own record of its locks, not from the lock file's pid and host.
 */
export function heldInThisProcess(path: string): boolean {
  return heldInProcess.has(lockKey(path));
}

export class WriterLock {
  private constructor(
    readonly path: string,
    private readonly token: string,
    private readonly key: string,
  ) {}

  /**
   * Takes the lock at `path` for `what` (named in errors). `rule` ends the message a live
   * owner's Conflict gives (default: the table writer's rule).
   */
  static acquire(path: string, what: string, rule = 'one writer per table'): WriterLock {
    const key = lockKey(path);
    if (heldInProcess.has(key)) {
      throw new LsmError('Conflict', `${what} already has a writer in this process; ${rule}`, { path });
    }
    const content: LockContent = { pid: process.pid, host: hostname(), token: randomUUID(), sinceMs: Date.now() };
    const boot = bootId();
    const start = ownStartTicks();
    if (boot !== undefined && start !== undefined) {
      content.bootId = boot;
      content.startTicks = start;
    }
    let busy: LockContent | undefined;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      busy = undefined;
      // Created whole (see the head of this file): with O_EXCL and then the content, an opener in
      // between would find an empty lock, take it for stale and both would write.
      if (createWhole(path, `${path}.${content.token}`, JSON.stringify(content))) {
        heldInProcess.add(key);
        return new WriterLock(path, content.token, key);
      }
      const holder = readHolder(path);
      if (!holder) continue; // released in between
      const c = holder.content;
      if (c && c.host !== content.host) {
        throw new LsmError('Conflict', `${what} is locked by host ${c.host} (pid ${c.pid})`, { path });
      }
      if (c && ownerAlive(c)) {
        throw new LsmError(
          'Conflict',
          `${what} is being written by process ${c.pid} since ${new Date(c.sinceMs).toISOString()}; ${rule}`,
          { path },
        );
      }
      busy = takeOver(path, holder.key, content);
      // Another process is removing this stale holder right now: give it a moment, then look again.
      if (busy) Atomics.wait(waitCell, 0, 0, 20);
    }
    if (busy) {
      throw new LsmError('Conflict', `the stale writer lock of ${what} is being taken over by process ${busy.pid}; try again`, { path });
    }
    throw new LsmError('Conflict', `could not take the writer lock of ${what}`, { path });
  }

  release(): void {
    heldInProcess.delete(this.key);
    try {
      const holder = JSON.parse(fs.readFileSync(this.path, 'utf8')) as LockContent;
      if (holder.token === this.token) fs.unlinkSync(this.path);
    } catch {
      // already gone
    }
  }
}
