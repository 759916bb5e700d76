// File identity for caches of files that are written once and never rewritten in place — tags
// (`tag/tag-<name>`) and the table directory listings they live in. Such a file can only change
// by being deleted and created again (link/rename of a new inode), and that new file differs in
// (size, mtime, inode) from the one cached — unless it was created within the same tick of the
// filesystem's timestamp clock as the cached one (Linux stamps files with a coarse clock, 1–10 ms;
// FAT and HFS+ with 1–2 s). The "racy" rule (as git's racy-clean index entries): a cached identity
// is trusted only once its mtime is at least RACY_MS older than the moment the cached content was
// read or compared; until then the bytes are compared instead. A file created after that moment
// gets a later mtime, so a replacement is always seen. Assumes a local POSIX filesystem (stat not
// served from a client-side attribute cache, directory mtime updated by every create/unlink/rename)
// and a wall clock that does not step back by more than RACY_MS.

import type { FileIO, FileStat } from './file-io.ts';

export type FileIdentity = FileStat;

/** Older than this (ms, by mtime against Date.now()) a file's identity is trusted on its own. */
export const RACY_MS = 2000;

/** The identity of a file or directory, undefined when it does not exist. */
export function identityOf(io: FileIO, path: string): FileIdentity | undefined {
  if (io.stat) return io.stat(path);
  try {
    return { size: io.size(path), mtimeMs: io.mtimeMs(path), ino: 0 };
  } catch (e) {
    if (!io.exists(path)) return undefined;
    throw e;
  }
}

export function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino;
}

/** Whether an identity seen at `checkedAt` (Date.now() taken before the stat) may still be shared by a replacement. */
export function isRacy(id: FileIdentity, checkedAt: number): boolean {
  return !(id.mtimeMs + RACY_MS <= checkedAt);
}
