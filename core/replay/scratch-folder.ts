// The scratch folders of replay runs under the scratch place (/dev/shm by default, or --scratch):
// `tilstand-replay-…` (the scratch warehouse and journal) and `tilstand-fixture-…` (an archive's
// extracted copy). A run removes its own at the end; one killed (kill -9, the OOM killer) left
// them, in memory on /dev/shm until the next boot, and runs after it filled it.
//
// So a folder a run will remove holds a lock while the run lives (`.owner.lock`, core/lsm
// writer-lock.ts: pid, host, boot id and the process's start time, so a reused pid is not taken
// for the owner), and each run first removes the folders whose lock's owner is gone
// (`removeDeadScratch`). A folder without a lock is never removed: one kept on purpose
// (--keep-scratch, which takes none), one whose run is making it (the lock comes just after
// mkdtemp), an older version's, or a folder of someone else's that starts with the same name.
//
// Concurrency: runs in other processes and in this one may share a scratch place. A live owner's
// lock is never taken (writer-lock.ts: Conflict, also for a lock this process holds), and taking
// a dead owner's lock is one winner's (its claim files), so one folder is removed by one run.

import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { WriterLock } from '../lsm/writer-lock.ts';

/** The lock in a scratch folder a run will remove. */
const SCRATCH_LOCK = '.owner.lock';
/** The names of the scratch folders runs make: mkdtemp adds six characters. */
const SCRATCH_PREFIXES = ['tilstand-replay-', 'tilstand-fixture-'] as const;

export interface ScratchFolder {
  dir: string;
  /** Removes the folder with everything in it. */
  remove(): void;
}

const RULE = 'one run per scratch folder';

/**
 * Makes `<parent>/<prefix>XXXXXX`. `held` (the default): it holds this process's lock until
 * `remove`, so a run after this one's death removes it; without: it is never removed by another
 * run (a folder kept on purpose).
 */
export function makeScratchFolder(parent: string, prefix: (typeof SCRATCH_PREFIXES)[number], held = true): ScratchFolder {
  const dir = mkdtempSync(join(parent, prefix));
  let lock: WriterLock | undefined;
  try {
    if (held) lock = WriterLock.acquire(join(dir, SCRATCH_LOCK), `the scratch folder ${dir}`, RULE);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    dir,
    remove() {
      // Retried: a run that found the lock just before this removal began may make its own lock in
      // the folder meanwhile (ENOTEMPTY here); it then removes the folder too.
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      // Gone with the folder; this forgets that the process holds it.
      lock?.release();
    },
  };
}

/**
 * Removes the scratch folders under `parent` whose run is dead (their lock's owner is gone);
 * returns their paths. Never one whose run lives, nor one without a lock (above).
 */
export function removeDeadScratch(parent: string): string[] {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return []; // no scratch place: making the run's own folder says so
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!SCRATCH_PREFIXES.some((p) => name.startsWith(p))) continue;
    const dir = join(parent, name);
    if (!existsSync(join(dir, SCRATCH_LOCK))) continue;
    let lock: WriterLock;
    try {
      // Taken only from a dead owner (a stale lock); a live one's is Conflict.
      lock = WriterLock.acquire(join(dir, SCRATCH_LOCK), `the scratch folder ${dir}`, RULE);
    } catch {
      continue; // its run lives, its run removed it just now, or it is not ours to take
    }
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      removed.push(dir);
    } catch {
      // not ours to remove (permissions): it stays, as before
    } finally {
      lock.release();
    }
  }
  return removed;
}
