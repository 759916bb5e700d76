// A take-over onto an HQ share that is not mounted (DESIGN.md "One sender per site at HQ", **Onto
// this PC's own disk**): the site's marker is gone because the NAS is not mounted at /mnt/hq, and
// `sync now --take-over` wrote the marker again and HQ's whole copy into the empty mount point —
// this PC's own disk, which it may fill, where HQ never sees it. Now the engine records, when it
// sees its marker, whether HQ's folder is on another file system than the data directory; a
// take-over while the marker is gone is refused when it was then and is not now.
//
// Nothing can be mounted here: a share is stood in for by `fileSystemOf` (the engine's seam, stat's
// dev by default) answering another device for the mount point while "mounted". The command line
// has no seam: there the record is left as such an engine wrote it, and the real stat finds the
// folder on the data directory's file system (both are under the same temporary folder).

import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { runCli } from '../lsm/testing/cli.ts';
import { runSync } from './cli/sync.ts';
import { SyncEngine } from './engine.ts';
import { senderMarkerKey, sitePrefix } from './names.ts';
import { openOutboxDb, Outbox } from './outbox.ts';
import { fileSystemOf, HQ_FILE_SYSTEM, markerDir, takeOverFor } from './sender.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { makeSite, scanSorted, tempDir, writeStock, type SiteFixture } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const SITE = 'nas';

function site(rows: number): SiteFixture {
  const fx = makeSite(SITE, { rows });
  cleanup.push(fx.data);
  return fx;
}

/**
 * A mount point `mnt` and a stand-in for the share mounted on it: while `mounted`, `fileSystemOf`
 * answers another device for the mount point (and what is under it) than for anything else.
 * `unmount()` moves HQ's copy aside and leaves the empty mount point, as a share not mounted does.
 */
function share(): { mnt: string; of: (p: string) => number | bigint; unmount(): void; state: { mounted: boolean } } {
  const root = tempDir('hq-nas');
  cleanup.push(root);
  const mnt = join(root, 'mnt');
  mkdirSync(mnt);
  const state = { mounted: true };
  return {
    mnt,
    state,
    of: (p) => (state.mounted && (p === mnt || p.startsWith(mnt + '/')) ? 4242 : fileSystemOf(p)),
    unmount() {
      renameSync(mnt, join(root, 'share'));
      mkdirSync(mnt);
      state.mounted = false;
    },
  };
}

const dirTarget = (hq: string) => new DirectoryTarget(hq, { writePrefix: sitePrefix(SITE) });

function engine(data: string, hq: string, extra: Partial<ConstructorParameters<typeof SyncEngine>[0]> = {}): SyncEngine {
  return new SyncEngine({ dataDir: data, site: SITE, target: dirTarget(hq), retry: { baseMs: 1, maxMs: 5, jitter: 0 }, scheduledTags: null, ...extra });
}

/** Every file under `dir` (relative paths), sorted. */
function files(dir: string, base = dir): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory()) out.push(...files(p, base));
    else out.push(p.slice(base.length + 1));
  }
  return out.sort();
}

/** The outbox's `sync_state` value of `key`, read beside the engine. */
function state(data: string, key: string): string | undefined {
  const db = openOutboxDb(join(data, 'site.db'), true);
  try {
    return new Outbox(db).getState(key);
  } finally {
    db.close();
  }
}

function setState(data: string, key: string, value: string | null): void {
  const db = openOutboxDb(join(data, 'site.db'));
  try {
    new Outbox(db).setState(key, value);
  } finally {
    db.close();
  }
}

const record = (data: string) => JSON.parse(state(data, HQ_FILE_SYSTEM) ?? 'null') as { apart: boolean; hqDevice: string; dataDevice: string } | null;

const marker = (hq: string) => JSON.parse(readFileSync(join(hq, senderMarkerKey(SITE)), 'utf8')) as { sender: string; by: string };

function expectStockAtHq(hq: string, fx: SiteFixture): void {
  const atHq = new Catalog(hq).getTable({ database: `site_${SITE}`, table: 'stock' });
  expect(atHq.latestSnapshot()!.id).toBe(fx.table('stock').latestSnapshot()!.id);
  expect(scanSorted(atHq)).toEqual(scanSorted(fx.table('stock')));
}

/** A site that sent to the share, whose share is then not mounted and whose engine found the marker gone. */
async function sentThenUnmounted(rows: number): Promise<{ fx: SiteFixture; nas: ReturnType<typeof share> }> {
  const fx = site(rows);
  const nas = share();
  const e = engine(fx.data, nas.mnt, { fileSystemOf: nas.of });
  await e.syncNow(20);
  expect(e.status()).toMatchObject({ healthy: true, pendingItems: 0 });
  nas.unmount();
  writeStock(fx, rows, rows + 20, 2);
  await e.syncNow(20);
  expect(e.status().problems).toEqual(['gone']);
  await e.close();
  expect(files(nas.mnt)).toEqual([]);
  return { fx, nas };
}

describe('where HQ’s folder was, recorded when the marker is seen', () => {
  it('another file system than the data directory: apart, with both devices; a new target drops it', async () => {
    const fx = site(100);
    const nas = share();
    const e = engine(fx.data, nas.mnt, { fileSystemOf: nas.of });
    await e.syncNow(20);
    await e.close();
    expect(record(fx.data)).toEqual({ apart: true, hqDevice: '4242', dataDevice: String(fileSystemOf(fx.data)), mountRoot: nas.mnt });
    // Another target: the old folder's record says nothing of it.
    const other = share();
    other.state.mounted = false;
    const again = engine(fx.data, other.mnt, { fileSystemOf: other.of });
    expect(state(fx.data, HQ_FILE_SYSTEM)).toBeUndefined();
    await again.close();
  });

  it('the same file system as the data directory (a test, the demo, one disk): not apart', async () => {
    const fx = site(100);
    const hq = tempDir('hq-local');
    cleanup.push(hq);
    const e = engine(fx.data, hq);
    await e.syncNow(20);
    await e.close();
    expect(record(fx.data)).toMatchObject({ apart: false });
  });
});

describe('a take-over while the marker is gone and HQ’s folder fell back onto this PC’s disk', () => {
  it('is refused by the engine: nothing written in the folder, the message says why and what to do', async () => {
    const { fx, nas } = await sentThenUnmounted(200);
    const logs: string[] = [];
    const e = engine(fx.data, nas.mnt, { fileSystemOf: nas.of, takeOver: true, log: (l) => logs.push(l) });
    const r = e.syncNow(20);
    await expect(r).rejects.toMatchObject({ kind: 'Conflict' });
    const message = ((await r.catch((x: unknown) => x)) as Error).message;
    await e.close();
    expect(files(nas.mnt)).toEqual([]);
    const data = markerDir(fx.data);
    expect(message).toContain(`HQ's folder ${nas.mnt} is now on this PC's own disk (the same file system as the data directory ${data}`);
    expect(message).toContain('whereas it was on another file system (device 4242) when this site last found its sender marker there: the share is most likely not mounted');
    expect(message).toContain(`\`findmnt ${nas.mnt}\``);
    expect(message).toContain(`\`tilstand sync now --take-over --hq-on-this-disk --data ${data}\``);
    expect(logs.some((l) => l.includes('take-over refused'))).toBe(true);
    // Still refused as gone, the record as it was: the share's return resumes sending.
    expect(record(fx.data)).toMatchObject({ apart: true });
  });

  it('`sync now --take-over` exits 3 with the message; with --hq-on-this-disk it takes over and sends everything', async () => {
    const { fx, nas } = await sentThenUnmounted(200);
    const now = (...more: string[]) => runCli(runSync, ['now', '--data', fx.data, '--hq', nas.mnt, '--json', ...more]);
    const refused = await now('--take-over');
    expect(refused.code, refused.err).toBe(3);
    expect(refused.err).toContain(`take-over refused: HQ's folder ${nas.mnt} is now on this PC's own disk`);
    expect(refused.err).toContain('--hq-on-this-disk');
    expect(files(nas.mnt)).toEqual([]);

    const taken = await now('--take-over', '--hq-on-this-disk');
    expect(taken.code, taken.err + taken.out).toBe(0);
    expect(JSON.parse(taken.out)).toMatchObject({ healthy: true, problems: [], lastError: null, pendingItems: 0 });
    expect(marker(nas.mnt).by).toBe('take-over');
    expectStockAtHq(nas.mnt, fx);
    // Seen on this disk now: a later take-over here is not refused again.
    expect(record(fx.data)).toMatchObject({ apart: false });
  });

  it('`--hq-on-this-disk` without `--take-over` is refused (exit 2)', async () => {
    const fx = site(50);
    const r = await runCli(runSync, ['now', '--data', fx.data, '--hq', tempDir('hq-unused'), '--hq-on-this-disk']);
    expect(r.code).toBe(2);
    expect(r.err).toContain("option '--hq-on-this-disk' goes with --take-over");
  });

  it('beside a running site (the command writes the marker, takeOverFor): refused, and taken with hqOnThisDisk', async () => {
    const { fx, nas } = await sentThenUnmounted(200);
    const db = openOutboxDb(join(fx.data, 'site.db'), true);
    try {
      const outbox = new Outbox(db);
      await expect(takeOverFor(outbox, fx.data, SITE, dirTarget(nas.mnt), Date.now(), { fileSystemOf: nas.of })).rejects.toMatchObject({
        kind: 'Conflict',
        message: expect.stringContaining(`HQ's folder ${nas.mnt} is now on this PC's own disk`),
      });
      expect(files(nas.mnt)).toEqual([]);
      const m = await takeOverFor(outbox, fx.data, SITE, dirTarget(nas.mnt), Date.now(), { fileSystemOf: nas.of, hqOnThisDisk: true });
      expect(m).toMatchObject({ by: 'take-over' });
      expect(marker(nas.mnt).by).toBe('take-over');
    } finally {
      db.close();
    }
  });
});

describe('the data directory on a disk of its own (HQ’s empty mount point is on the system disk, apart from it mounted or not)', () => {
  /** `nas.of`, with the data directory on a second disk (device 777). */
  const secondDisk = (nas: ReturnType<typeof share>, data: string) => (p: string) => (p === data || p.startsWith(data + '/') ? 777 : nas.of(p));

  it('a take-over while the share is not mounted is refused by where HQ’s file system is mounted: nothing written; --hq-on-this-disk takes over', async () => {
    const fx = site(200);
    const nas = share();
    const data = markerDir(fx.data);
    const of = secondDisk(nas, data);
    // Sent into a folder of the share, so the mount point is a folder above HQ's.
    const hq = join(nas.mnt, 'tilstand');
    mkdirSync(hq);
    const e = engine(fx.data, hq, { fileSystemOf: of });
    await e.syncNow(20);
    await e.close();
    expect(record(fx.data)).toMatchObject({ apart: true, mountRoot: nas.mnt });
    nas.unmount();
    const gone = engine(fx.data, hq, { fileSystemOf: of });
    await gone.syncNow(20);
    expect(gone.status().problems).toEqual(['gone']);
    await gone.close();
    // Still apart from the data directory (the system disk): only the mount root tells.
    const refused = engine(fx.data, hq, { fileSystemOf: of, takeOver: true });
    const r = refused.syncNow(20);
    const message = ((await r.catch((x: unknown) => x)) as Error).message;
    await expect(r).rejects.toMatchObject({ kind: 'Conflict' });
    await refused.close();
    expect(message).toContain(`take-over refused: HQ's folder ${hq} is no longer on the file system mounted at ${nas.mnt}, where it was when this site last found its sender marker there, but on the one at `);
    expect(message).toContain(`\`findmnt ${nas.mnt}\``);
    expect(files(nas.mnt)).toEqual([]);
    const db = openOutboxDb(join(fx.data, 'site.db'), true);
    try {
      await expect(takeOverFor(new Outbox(db), fx.data, SITE, dirTarget(hq), Date.now(), { fileSystemOf: of })).rejects.toMatchObject({ kind: 'Conflict', message: expect.stringContaining(`no longer on the file system mounted at ${nas.mnt}`) });
    } finally {
      db.close();
    }
    expect(files(nas.mnt)).toEqual([]);
    // The operator says so: taken over there.
    const taken = engine(fx.data, hq, { fileSystemOf: of, takeOver: true, hqOnThisDisk: true });
    const done = await taken.syncNow(20);
    await taken.close();
    expect(done.status).toMatchObject({ healthy: true, problems: [], pendingItems: 0 });
    expect(marker(hq).by).toBe('take-over');
  });

  it('the share mounted again, HQ’s copy deleted there on purpose: taken over onto the share', async () => {
    const fx = site(100);
    const nas = share();
    const of = secondDisk(nas, markerDir(fx.data));
    const e = engine(fx.data, nas.mnt, { fileSystemOf: of });
    await e.syncNow(20);
    rmSync(join(nas.mnt, sitePrefix(SITE)), { recursive: true });
    await e.syncNow(20);
    expect(e.status().problems).toEqual(['gone']);
    await e.close();
    const taken = engine(fx.data, nas.mnt, { fileSystemOf: of, takeOver: true });
    const r = await taken.syncNow(20);
    await taken.close();
    expect(r.status).toMatchObject({ healthy: true, problems: [], pendingItems: 0 });
    expectStockAtHq(nas.mnt, fx);
  });
});

describe('a take-over as before', () => {
  it('HQ’s folder always on the data directory’s file system: HQ’s copy removed on purpose is taken over', async () => {
    const fx = site(200);
    const hq = tempDir('hq-local');
    cleanup.push(hq);
    const e = engine(fx.data, hq);
    await e.syncNow(20);
    rmSync(join(hq, sitePrefix(SITE)), { recursive: true });
    await e.syncNow(20);
    expect(e.status().problems).toEqual(['gone']);
    await e.close();
    const taken = engine(fx.data, hq, { takeOver: true });
    const r = await taken.syncNow(20);
    await taken.close();
    expect(r.status).toMatchObject({ healthy: true, problems: [], pendingItems: 0 });
    expect(marker(hq).by).toBe('take-over');
    expectStockAtHq(hq, fx);
  });

  it('the share still mounted, HQ’s copy deleted there: taken over onto the share', async () => {
    const fx = site(200);
    const nas = share();
    const e = engine(fx.data, nas.mnt, { fileSystemOf: nas.of });
    await e.syncNow(20);
    rmSync(join(nas.mnt, sitePrefix(SITE)), { recursive: true });
    await e.syncNow(20);
    expect(e.status().problems).toEqual(['gone']);
    await e.close();
    const taken = engine(fx.data, nas.mnt, { fileSystemOf: nas.of, takeOver: true });
    const r = await taken.syncNow(20);
    await taken.close();
    expect(r.status).toMatchObject({ healthy: true, problems: [], pendingItems: 0 });
    expectStockAtHq(nas.mnt, fx);
  });

  it('a site that last sent with a version before the record: taken over', async () => {
    const { fx, nas } = await sentThenUnmounted(200);
    setState(fx.data, HQ_FILE_SYSTEM, null);
    const taken = engine(fx.data, nas.mnt, { fileSystemOf: nas.of, takeOver: true });
    const r = await taken.syncNow(20);
    await taken.close();
    expect(r.status).toMatchObject({ healthy: true, problems: [], pendingItems: 0 });
    expect(marker(nas.mnt).by).toBe('take-over');
  });
});
