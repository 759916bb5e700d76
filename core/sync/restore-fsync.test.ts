// The fsyncs of a restore's copy. A restore runs under its mark (`restore-unfinished.json`): one
// cut short is done again from scratch, and nobody reads the copy meanwhile, so each copied file is
// written once under its own name, and each file and each folder the copy created or wrote into is
// fsynced once, before the mark goes; the mark's removal is made durable last. It wrote each file
// to a temporary file, fsynced it, renamed it and fsynced its folder: two fsyncs a file, 4.5 s of
// a 9.2 s restore at 1,000 tags (DESIGN.md, "Restore"). `hq pull` (mirrorSite without
// `deferredSync`), whose copy may be read while it runs, keeps the temporary file and the rename.
//
// fs.fsyncSync and fs.fsync are wrapped through the CommonJS module object, which
// syncBuiltinESMExports() carries to the `import * as fs` of restore.ts, mirror.ts and core/lsm's
// file-io.ts; each fsync's file is read back from /proc/self/fd when it is asked for.

import * as fs from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { basename, dirname, join, sep } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { mirrorSite } from './hq/mirror.ts';
import { restoreSite, RESTORE_UNFINISHED } from './restore.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { makeSite, scanSorted, tempDir, writeStock } from './test-support/site-fixture.ts';
import { shipToDirectory } from './test-support/ship.ts';

const cjsFs = createRequire(import.meta.url)('node:fs') as typeof fs;
const realFsync = cjsFs.fsyncSync;
const realFsyncAsync = cjsFs.fsync;

interface Fsync {
  path: string;
  dir: boolean;
  /** Whether the restore's mark was there when it ran. */
  marked: boolean;
}

/** Records every fsync from now on (until afterEach), with its file and whether `mark` existed. */
function recordFsyncs(mark: string): Fsync[] {
  const out: Fsync[] = [];
  const note = (fd: number) => out.push({ path: cjsFs.readlinkSync(`/proc/self/fd/${fd}`), dir: cjsFs.fstatSync(fd).isDirectory(), marked: cjsFs.existsSync(mark) });
  cjsFs.fsyncSync = (fd: number) => {
    note(fd);
    realFsync(fd);
  };
  cjsFs.fsync = ((fd: number, done: (e: NodeJS.ErrnoException | null) => void) => {
    note(fd);
    realFsyncAsync(fd, done);
  }) as typeof fs.fsync;
  syncBuiltinESMExports();
  expect(fs.fsyncSync).not.toBe(realFsync); // the patch reaches the modules' namespace
  expect(fs.fsync).not.toBe(realFsyncAsync);
  return out;
}

afterEach(() => {
  cjsFs.fsyncSync = realFsync;
  cjsFs.fsync = realFsyncAsync;
  syncBuiltinESMExports();
});

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) fs.rmSync(d, { recursive: true, force: true });
});

/** The folders (the roots included) and regular files under each root. */
function tree(...roots: string[]): { dirs: string[]; files: string[] } {
  const dirs: string[] = [];
  const files: string[] = [];
  const walk = (d: string) => {
    dirs.push(d);
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.isFile()) files.push(join(d, e.name));
    }
  };
  for (const r of roots) walk(r);
  return { dirs: dirs.sort(), files: files.sort() };
}

const under = (roots: string[]) => (p: string) => roots.some((r) => p === r || p.startsWith(r + sep));

function countBy(paths: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const p of paths) m.set(p, (m.get(p) ?? 0) + 1);
  return m;
}

/** A site with stock at several commits and tags, shipped to a directory HQ. */
async function shippedSite(site: string): Promise<{ data: string; hq: string; site: string }> {
  const fx = makeSite(site, { rows: 20 });
  const hq = tempDir('hq');
  cleanup.push(fx.data, hq);
  for (let i = 0, row = 20; i < 6; i++, row += 3) {
    writeStock(fx, row, row + 3, row);
    fx.table('stock').createTag(`t${i}`);
  }
  await shipToDirectory(fx.data, fx.site, hq);
  return { data: fx.data, hq: fs.realpathSync(hq), site: fx.site };
}

describe("a restore's copy", () => {
  it('fsyncs each file once, under its own name, and each folder once, before the mark goes; the mark goes durably, last', async () => {
    const s = await shippedSite('rfs');
    const fresh = fs.realpathSync(tempDir('fresh'));
    cleanup.push(fresh);
    const syncs = recordFsyncs(join(fresh, RESTORE_UNFINISHED));
    const note = await restoreSite({ dataDir: fresh, target: new DirectoryTarget(s.hq), site: s.site });
    const roots = [join(fresh, 'warehouse'), join(fresh, 'contracts')];
    const copy = tree(...roots);
    expect(copy.files.length).toBeGreaterThan(50);
    expect(note.tables.stock!.tags).toHaveLength(6);

    const ofCopy = syncs.filter((x) => under(roots)(x.path));
    // Was: every file's fsync under a temporary name (`.<name>.<uuid>.tmp`), and its folder's after
    // each file (bucket-0's and manifest's dozens of times), while the folders it created were
    // not fsynced in their parents at all.
    expect([...countBy(ofCopy.filter((x) => !x.dir).map((x) => x.path))].sort()).toEqual(copy.files.map((f) => [f, 1]));
    expect([...countBy(ofCopy.filter((x) => x.dir).map((x) => x.path))].sort()).toEqual(copy.dirs.map((d) => [d, 1]));
    expect(ofCopy.filter((x) => !x.marked), 'fsyncs of the copy after the mark went').toEqual([]);
    // The data directory (the parent of the warehouse and contracts folders it created) is
    // fsynced with the mark still there, and again, last, once the mark is gone.
    expect(syncs.some((x) => x.path === fresh && x.marked)).toBe(true);
    expect(syncs.slice(syncs.findLastIndex((x) => x.marked) + 1)).toEqual([{ path: fresh, dir: true, marked: false }]);

    const rows = (data: string) => scanSorted(new Catalog(join(data, 'warehouse')).getTable({ database: `site_${s.site}`, table: 'stock' }));
    expect(rows(fresh)).toEqual(rows(s.data));
  }, 60_000);

  it("fails when a file's fsync at the end fails, the mark left for its rerun", async () => {
    const s = await shippedSite('rfe');
    const fresh = fs.realpathSync(tempDir('fresh'));
    cleanup.push(fresh);
    const warehouse = join(fresh, 'warehouse') + sep;
    let failed = '';
    cjsFs.fsync = ((fd: number, done: (e: NodeJS.ErrnoException | null) => void) => {
      const path = cjsFs.readlinkSync(`/proc/self/fd/${fd}`);
      if (failed === '' && path.startsWith(warehouse) && cjsFs.fstatSync(fd).isFile()) {
        failed = path;
        done(Object.assign(new Error(`EIO: i/o error, fsync`), { code: 'EIO' }));
        return;
      }
      realFsyncAsync(fd, done);
    }) as typeof fs.fsync;
    syncBuiltinESMExports();
    // Its bytes may not be on disk: the restore is not done (a write-back error surfaces here now).
    await expect(restoreSite({ dataDir: fresh, target: new DirectoryTarget(s.hq), site: s.site })).rejects.toThrow(/sync .* failed: EIO/);
    expect(failed).not.toBe('');
    expect(fs.existsSync(join(fresh, RESTORE_UNFINISHED))).toBe(true);
    expect(fs.existsSync(join(fresh, 'restore-note.json'))).toBe(false);
  }, 60_000);

  // A folder's fsync that failed was passed over whatever the failure, EIO too, and the mark went:
  // in a restore that fsync is the only one that makes the folder's entries (its copied files'
  // names) durable. Only a refusal that says the file system does not do it is passed over.
  it("fails when a folder's fsync at the end fails with EIO, the mark left; passes over one refused as not supported", async () => {
    const s = await shippedSite('rfd');
    for (const code of ['EIO', 'EINVAL']) {
      const fresh = fs.realpathSync(tempDir('fresh'));
      cleanup.push(fresh);
      const folder = join(fresh, 'warehouse', `site_${s.site}.db`, 'stock', 'bucket-0');
      let failed = 0;
      cjsFs.fsync = ((fd: number, done: (e: NodeJS.ErrnoException | null) => void) => {
        if (cjsFs.readlinkSync(`/proc/self/fd/${fd}`) === folder) {
          failed++;
          done(Object.assign(new Error(`${code}: fsync`), { code }));
          return;
        }
        realFsyncAsync(fd, done);
      }) as typeof fs.fsync;
      syncBuiltinESMExports();
      const restoring = restoreSite({ dataDir: fresh, target: new DirectoryTarget(s.hq), site: s.site });
      if (code === 'EIO') {
        await expect(restoring).rejects.toThrow(new RegExp(`sync ${folder} failed: EIO`));
        expect(fs.existsSync(join(fresh, RESTORE_UNFINISHED))).toBe(true);
        expect(fs.existsSync(join(fresh, 'restore-note.json'))).toBe(false);
      } else {
        expect((await restoring).site).toBe(s.site);
        expect(fs.existsSync(join(fresh, RESTORE_UNFINISHED))).toBe(false);
      }
      expect(failed, code).toBe(1);
    }
  }, 60_000);

  it("of hq pull (no deferredSync) keeps a temporary file, its fsync, a rename and the folder's fsync per file", async () => {
    const s = await shippedSite('rfp');
    const out = fs.realpathSync(tempDir('pull'));
    cleanup.push(out);
    const syncs = recordFsyncs(join(out, 'no-mark'));
    await mirrorSite(new DirectoryTarget(s.hq), s.site, out);
    const copy = tree(join(out, `site_${s.site}.db`));
    const ofCopy = syncs.filter((x) => under([out])(x.path));
    const fileSyncs = ofCopy.filter((x) => !x.dir);
    expect(fileSyncs).toHaveLength(copy.files.length);
    const temp = (f: string) => `${dirname(f)}${sep}.${basename(f)}.`;
    for (const f of copy.files) expect(fileSyncs.filter((x) => x.path.startsWith(temp(f)) && x.path.endsWith('.tmp')), f).toHaveLength(1);
    const perDir = countBy(copy.files.map(dirname));
    expect(countBy(ofCopy.filter((x) => x.dir).map((x) => x.path))).toEqual(perDir);
  }, 60_000);
});
