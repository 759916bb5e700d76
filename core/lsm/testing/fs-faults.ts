// A failing disk for tests, at the edge: node:fs's openSync or fsyncSync fails with an errno code
// for the paths a test names, while `fn` runs; every other call goes through. As fsync-spy.ts, the
// functions are wrapped and the ESM bindings refreshed (syncBuiltinESMExports), so `import * as fs`
// callers (core/lsm file-io.ts) meet the fault, then restored.

import { createRequire, syncBuiltinESMExports } from 'node:module';
import { resolve } from 'node:path';

type OpenSync = (path: unknown, ...rest: unknown[]) => number;
type FsyncSync = (fd: number) => void;

export interface FsFault {
  /** Which call fails: the open of the path, or the fsync of a descriptor opened on it. */
  at: 'open' | 'fsync';
  /** The errno code the call fails with (EIO, EINVAL, ENOTSUP…). */
  code: string;
  /** The paths (resolved) whose call fails. */
  paths: readonly string[];
}

/** Runs `fn` with `fault` in place; returns the paths whose call failed, in order. */
export function withFsFault(fault: FsFault, fn: () => void): string[] {
  const fs = createRequire(import.meta.url)('node:fs') as { openSync: OpenSync; fsyncSync: FsyncSync };
  const { openSync, fsyncSync } = fs;
  const failing = new Set(fault.paths.map((p) => resolve(p)));
  const open = new Map<number, string>();
  const failed: string[] = [];
  const fail = (path: string, syscall: string): never => {
    failed.push(path);
    throw Object.assign(new Error(`${fault.code}: injected failure, ${syscall} '${path}'`), { code: fault.code, syscall, path });
  };
  fs.openSync = (path, ...rest) => {
    const p = resolve(String(path));
    if (fault.at === 'open' && failing.has(p)) fail(p, 'open');
    const fd = openSync(path, ...rest);
    open.set(fd, p);
    return fd;
  };
  fs.fsyncSync = (fd) => {
    const p = open.get(fd);
    if (fault.at === 'fsync' && p !== undefined && failing.has(p)) fail(p, 'fsync');
    fsyncSync(fd);
  };
  syncBuiltinESMExports();
  try {
    fn();
  } finally {
    fs.openSync = openSync;
    fs.fsyncSync = fsyncSync;
    syncBuiltinESMExports();
  }
  return failed;
}
