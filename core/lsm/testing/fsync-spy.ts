// Which paths were fsynced while `fn` ran: node:fs's openSync and fsyncSync are wrapped (and the
// ESM bindings refreshed with syncBuiltinESMExports, so `import * as fs` callers see the wrappers
// too), then restored. For tests of code whose durability a test cannot otherwise observe.

import { createRequire, syncBuiltinESMExports } from 'node:module';
import { resolve } from 'node:path';

type OpenSync = (path: unknown, ...rest: unknown[]) => number;
type FsyncSync = (fd: number) => void;

export function fsyncedDuring(fn: () => void): string[] {
  const spy = spyFsync();
  try {
    fn();
  } finally {
    spy.restore();
  }
  return spy.synced;
}

/** fsyncedDuring for an async `fn` (code that awaits between its writes): the paths fsynced until its promise settled. */
export async function fsyncedWhile(fn: () => Promise<unknown>): Promise<string[]> {
  const spy = spyFsync();
  try {
    await fn();
  } finally {
    spy.restore();
  }
  return spy.synced;
}

function spyFsync(): { synced: string[]; restore(): void } {
  const fs = createRequire(import.meta.url)('node:fs') as { openSync: OpenSync; fsyncSync: FsyncSync };
  const { openSync, fsyncSync } = fs;
  const open = new Map<number, string>();
  const synced: string[] = [];
  fs.openSync = (path, ...rest) => {
    const fd = openSync(path, ...rest);
    open.set(fd, resolve(String(path)));
    return fd;
  };
  fs.fsyncSync = (fd) => {
    fsyncSync(fd);
    synced.push(open.get(fd) ?? `fd ${fd}`);
  };
  syncBuiltinESMExports();
  return {
    synced,
    restore() {
      fs.openSync = openSync;
      fs.fsyncSync = fsyncSync;
      syncBuiltinESMExports();
    },
  };
}
