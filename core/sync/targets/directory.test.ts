// The directory target's durability: a file's fsync failing fails the put (a share reports a lost
// write-back there), a folder's is tolerated (SMB refuses fsync on folders). The rest of the target
// is exercised through the engine in ../sync.test.ts.

import * as fs from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { isSyncError } from '../errors.ts';
import { tempDir } from '../test-support/site-fixture.ts';
import { DirectoryTarget } from './directory.ts';

// fsync fails on a file or a folder, as a share may: patched on the CommonJS module, whose
// changes syncBuiltinESMExports() carries to `import * as fs` in directory.ts.
const cjsFs = createRequire(import.meta.url)('node:fs') as typeof fs;
const realFsync = cjsFs.fsyncSync;
function failFsync(on: 'file' | 'directory'): { refused: number } {
  const counts = { refused: 0 };
  cjsFs.fsyncSync = (fd: number) => {
    if (fs.fstatSync(fd).isDirectory() === (on === 'directory')) {
      counts.refused++;
      throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    }
    return realFsync(fd);
  };
  syncBuiltinESMExports();
  expect(fs.fsyncSync).not.toBe(realFsync); // the patch reaches the module's namespace
  return counts;
}

const dirs: string[] = [];
afterEach(() => {
  cjsFs.fsyncSync = realFsync;
  syncBuiltinESMExports();
  vi.restoreAllMocks();
});
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function hq(): { root: string; target: DirectoryTarget } {
  const root = tempDir('hq');
  dirs.push(root);
  return { root, target: new DirectoryTarget(root, { writePrefix: 'site_7.db/' }) };
}

const KEY = 'site_7.db/stock/bucket-0/data-1.parquet';
const bytes = Buffer.from('data file bytes');

describe('DirectoryTarget', () => {
  it("fails a put whose file fsync fails (a share's lost write-back), as Transport, and leaves nothing at the key or in the folder", async () => {
    const { root, target } = hq();
    const fsync = failFsync('file');
    const err = await target.put(KEY, bytes, { size: bytes.length, sha256: 'x' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(fsync.refused).toBe(1);
    expect(isSyncError(err, 'Transport')).toBe(true);
    expect((err as Error).message).toMatch(/EIO/);
    expect(fs.readdirSync(join(root, 'site_7.db', 'stock', 'bucket-0'))).toEqual([]); // no file, no temp file
  });

  it("takes a folder's fsync failing (SMB refuses it) as written: the rename is atomic there", async () => {
    const { root, target } = hq();
    const fsync = failFsync('directory');
    await target.put(KEY, bytes, { size: bytes.length, sha256: 'x' });
    await target.putPointer('site_7.db/stock/snapshot/LATEST', Buffer.from('1'));
    expect(fsync.refused).toBeGreaterThanOrEqual(2);
    expect(fs.readFileSync(join(root, ...KEY.split('/')))).toEqual(bytes);
    expect(await target.head(KEY)).toMatchObject({ size: bytes.length });
  });

  it("lists a folder whose file goes between the folder's listing and the file's stat (a site pruning its snapshot JSON while HQ reads) without that file", async () => {
    const { root, target } = hq();
    const pruned = 'site_7.db/stock/snapshot/snapshot-1';
    for (const key of [KEY, pruned, 'site_7.db/stock/snapshot/snapshot-2']) await target.putPointer(key, bytes);
    // The site's prune removes snapshot-1 after the folder was read and before its stat.
    const realStat = fs.promises.stat;
    vi.spyOn(fs.promises, 'stat').mockImplementation(((p: fs.PathLike, o?: fs.StatOptions) => {
      if (String(p) === join(root, ...pruned.split('/'))) fs.rmSync(p);
      return realStat(p, o);
    }) as typeof fs.promises.stat);
    expect((await target.list('site_7.db/')).map((o) => o.key)).toEqual([KEY, 'site_7.db/stock/snapshot/snapshot-2']);
  });

  it("writes HQ's files and folders readable by HQ (0644, 0755) under the site service's umask 0077 (build/tilstand.service)", async () => {
    const { root, target } = hq();
    const was = process.umask(0o077);
    try {
      await target.put(KEY, bytes, { size: bytes.length, sha256: 'x' });
      await target.putPointer('site_7.db/stock/snapshot/LATEST', Buffer.from('1'));
    } finally {
      process.umask(was);
    }
    const mode = (...parts: string[]) => fs.statSync(join(root, ...parts)).mode & 0o777;
    expect([mode('site_7.db'), mode('site_7.db', 'stock'), mode('site_7.db', 'stock', 'bucket-0'), mode('site_7.db', 'stock', 'snapshot')]).toEqual([0o755, 0o755, 0o755, 0o755]);
    expect([mode(...KEY.split('/')), mode('site_7.db', 'stock', 'snapshot', 'LATEST')]).toEqual([0o644, 0o644]);
  });
});
