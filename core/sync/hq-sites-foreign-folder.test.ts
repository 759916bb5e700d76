// `tilstand hq sites` on a directory HQ whose root holds a folder that is no site's and that the
// analyst cannot read: `lost+found` of an HQ on a disk of its own (root's, mode 0700), `System
// Volume Information` or `$RECYCLE.BIN` of a Windows share. The command listed the whole root, and
// that folder's EACCES failed it (exit 5) whatever the sites held.
//
// The folder's refusal is the readdir's, made to fail EACCES as it does for a user who is not root
// (modes do not stop root, who runs these tests in CI).

import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../lsm/testing/cli.ts';
import { runHq } from './cli/hq.ts';
import { makeSite, tempDir } from './test-support/site-fixture.ts';
import { shipToDirectory } from './test-support/ship.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) fs.rmSync(d, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('hq sites on a directory HQ with a folder of its own at the root', () => {
  it("lists the sites past a folder the analyst cannot read (lost+found of HQ's own disk)", async () => {
    const fx = makeSite('31', { rows: 10 });
    const hqDir = tempDir('hq');
    cleanup.push(fx.data, hqDir);
    await shipToDirectory(fx.data, fx.site, hqDir);
    const lostFound = join(hqDir, 'lost+found');
    fs.mkdirSync(lostFound, { mode: 0o700 });
    const readdir = fs.promises.readdir;
    vi.spyOn(fs.promises, 'readdir').mockImplementation(((path: fs.PathLike, o?: unknown) => {
      if (String(path) === lostFound) return Promise.reject(Object.assign(new Error(`EACCES: permission denied, scandir '${lostFound}'`), { code: 'EACCES' }));
      return (readdir as (p: fs.PathLike, o?: unknown) => Promise<unknown>)(path, o);
    }) as typeof fs.promises.readdir);
    const r = await runCli(runHq, ['sites', '--hq', hqDir, '--json']);
    expect([r.code, r.err]).toEqual([0, '']);
    const newest = Math.max(...['stock', 'approval_inbox', 'decision_log'].map((t) => fx.table(t).latestSnapshot()!.timeMillis));
    expect(JSON.parse(r.out)).toEqual([{ site: '31', tables: 3, stateAsOfMs: newest }]);
  }, 60_000);
});
