// HQ's sender marker gone where this outbox had one (DESIGN.md "One sender per site at HQ"): a
// directory target whose share is not mounted is the empty local mount point (the PC booted before
// the NAS, the mount failed), and an HQ whose copy was deleted looks the same. The engine adopted
// the absent marker silently, as for a first send, and — the outbox trusting its record of what HQ
// holds — wrote the next snapshot's new files, its pointer and the marker onto the site PC's own
// disk: a copy HQ never sees, without the files it references, and status said healthy.

import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { runCli } from '../lsm/testing/cli.ts';
import { runSync } from './cli/sync.ts';
import { SyncEngine, statusOf } from './engine.ts';
import { SyncError } from './errors.ts';
import { senderMarkerKey, sitePrefix } from './names.ts';
import { openOutboxDb, Outbox } from './outbox.ts';
import { MARKER_SINCE, takeOverFor } from './sender.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { S3Target } from './targets/s3.ts';
import type { SyncTarget } from './targets/target.ts';
import { makeSite, scanSorted, startS3, tempDir, writeStock, type S3Fixture, type SiteFixture } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
let s3: S3Fixture;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3.close();
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const SITE = 'mount';

function site(rows: number): SiteFixture {
  const fx = makeSite(SITE, { rows });
  cleanup.push(fx.data);
  return fx;
}

/** A folder holding the mount point `mnt` (the share while mounted) and room to move it aside. */
function mountPoint(): { root: string; mnt: string } {
  const root = tempDir('hq-mount');
  cleanup.push(root);
  const mnt = join(root, 'mnt');
  mkdirSync(mnt);
  return { root, mnt };
}

const dirTarget = (hq: string) => new DirectoryTarget(hq, { writePrefix: sitePrefix(SITE) });

function engine(data: string, target: SyncTarget, extra: Partial<ConstructorParameters<typeof SyncEngine>[0]> = {}): SyncEngine {
  return new SyncEngine({ dataDir: data, site: SITE, target, retry: { baseMs: 1, maxMs: 5, jitter: 0 }, scheduledTags: null, ...extra });
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

/** HQ's copy of the site's stock table holds exactly the site's rows (every file it references is there). */
function expectStockAtHq(hq: string, fx: SiteFixture): void {
  const atHq = new Catalog(hq).getTable({ database: `site_${SITE}`, table: 'stock' });
  expect(atHq.latestSnapshot()!.id).toBe(fx.table('stock').latestSnapshot()!.id);
  expect(scanSorted(atHq)).toEqual(scanSorted(fx.table('stock')));
}

const marker = (hq: string) => JSON.parse(readFileSync(join(hq, senderMarkerKey(SITE)), 'utf8')) as { sender: string; by: string; sinceMs: number };

describe('a share not mounted: the empty mount point in its place', () => {
  it('nothing is written to it, unhealthy at once saying so; the share back, sending resumes without a restart', async () => {
    const { root, mnt } = mountPoint();
    const fx = site(300);
    const logs: string[] = [];
    const e = engine(fx.data, dirTarget(mnt), { log: (l) => logs.push(l) });
    await e.syncNow(20);
    expect(e.status()).toMatchObject({ healthy: true, pendingItems: 0 });
    const since = marker(mnt).sinceMs;

    // The NAS is not mounted: the mount point is an empty local folder.
    renameSync(mnt, join(root, 'share'));
    mkdirSync(mnt);
    // Nothing due: the planning's check says it at once.
    await e.syncNow(20);
    expect(e.status()).toMatchObject({ healthy: false, problems: ['gone'] });
    // A commit: its steps stay pending, and nothing reaches the local disk.
    writeStock(fx, 300, 330, 2);
    const r = await e.syncNow(20);
    expect(files(mnt)).toEqual([]);
    expect(e.refusedByHq).toBe(true);
    const st = e.status();
    expect(st.healthy).toBe(false);
    expect(st.problems).toEqual(['gone']);
    expect(st.pendingItems).toBeGreaterThan(0);
    expect(r.status.lastError).toContain(`HQ's folder no longer holds this site's sender marker (site_${SITE}.db/.tilstand/sender.json)`);
    expect(st.lastError).toContain(`wrote at ${new Date(since).toISOString()}: is the share mounted at ${mnt}?`);
    expect(st.lastError).toContain('tilstand sync now --take-over');
    expect(st.lastError).toContain('it is refused while the share is not mounted: mount it first');
    expect(logs.filter((l) => l.startsWith('sync: stopped: HQ\'s folder no longer holds')).length).toBe(1);
    // `sync status` (from the outbox, as for a stopped site) says the same, and why in words.
    const db = openOutboxDb(join(fx.data, 'site.db'), true);
    try {
      expect(statusOf(new Outbox(db), Date.now(), 60_000)).toMatchObject({ healthy: false, problems: ['gone'], lastError: expect.stringContaining('is the share mounted') });
    } finally {
      db.close();
    }
    const status = await runCli(runSync, ['status', '--data', fx.data]);
    expect(status.out).toMatch(/health: +STALLED/);
    expect(status.out).toContain("why:              HQ no longer holds this site's sender marker");

    // The share is mounted again: the next check finds the marker, and the pending steps go to HQ.
    rmSync(mnt, { recursive: true });
    renameSync(join(root, 'share'), mnt);
    const back = await e.syncNow(20);
    expect(back.status).toMatchObject({ healthy: true, problems: [], lastError: null, pendingItems: 0 });
    expect(e.refusedByHq).toBe(false);
    expect(marker(mnt)).toMatchObject({ sinceMs: since, by: 'first send' });
    expectStockAtHq(mnt, fx);
    await e.close();
  });

  it('`sync now` on a stopped site exits 3 saying the marker is gone, not that another PC sends', async () => {
    const { root, mnt } = mountPoint();
    const fx = site(200);
    const now = (...more: string[]) => runCli(runSync, ['now', '--data', fx.data, '--hq', mnt, '--json', ...more]);
    expect((await now()).code).toBe(0);
    renameSync(mnt, join(root, 'share'));
    mkdirSync(mnt);
    writeStock(fx, 200, 220, 2);
    const r = await now();
    expect(r.code, r.err).toBe(3);
    expect(r.err).toContain('HQ no longer holds the sender marker this directory wrote');
    expect(r.err).not.toContain('names another data directory');
    expect(JSON.parse(r.out)).toMatchObject({ healthy: false, problems: ['gone'] });
    expect(files(mnt)).toEqual([]);
  });
});

describe("HQ's copy removed on purpose", () => {
  it('is refused until `sync now --take-over`, which sends everything again', async () => {
    const { mnt } = mountPoint();
    const fx = site(300);
    const e = engine(fx.data, dirTarget(mnt));
    await e.syncNow(20);
    rmSync(join(mnt, sitePrefix(SITE)), { recursive: true });
    writeStock(fx, 300, 320, 2);
    await e.syncNow(20);
    expect(files(mnt)).toEqual([]);
    expect(e.status().problems).toEqual(['gone']);
    await e.close();
    const taken = await runCli(runSync, ['now', '--data', fx.data, '--hq', mnt, '--json', '--take-over']);
    expect(taken.code, taken.err + taken.out).toBe(0);
    expect(JSON.parse(taken.out)).toMatchObject({ healthy: true, problems: [], lastError: null, pendingItems: 0 });
    expect(marker(mnt).by).toBe('take-over');
    // Every file of the table, those sent before the wipe too: the outbox's record was dropped.
    expectStockAtHq(mnt, fx);
  });

  it('a take-over beside the running site (the command writes the marker): the engine sends everything again', async () => {
    const { mnt } = mountPoint();
    const fx = site(300);
    const e = engine(fx.data, dirTarget(mnt));
    await e.syncNow(20);
    rmSync(join(mnt, sitePrefix(SITE)), { recursive: true });
    await e.syncNow(20);
    expect(e.status().problems).toEqual(['gone']);
    const db = openOutboxDb(join(fx.data, 'site.db'), true);
    try {
      await takeOverFor(new Outbox(db), fx.data, SITE, dirTarget(mnt), Date.now());
    } finally {
      db.close();
    }
    const r = await e.syncNow(20);
    expect(r.status).toMatchObject({ healthy: true, problems: [], lastError: null, pendingItems: 0 });
    expectStockAtHq(mnt, fx);
    await e.close();
  });
});

describe('an absent marker still adopted silently', () => {
  it('the first send of a fresh outbox', async () => {
    const { mnt } = mountPoint();
    const fx = site(200);
    const e = engine(fx.data, dirTarget(mnt));
    const r = await e.syncNow(20);
    expect(r.status).toMatchObject({ healthy: true, problems: [], lastError: null, pendingItems: 0 });
    expect(marker(mnt)).toMatchObject({ sender: e.sender, by: 'first send' });
    expectStockAtHq(mnt, fx);
    await e.close();
  });

  it('a first send whose marker write failed: no proof HQ had it, so the next round writes it', async () => {
    const { mnt } = mountPoint();
    const fx = site(200);
    const inner = dirTarget(mnt);
    let failed = 0;
    // The share drops the first marker write before it lands.
    const target: SyncTarget = Object.assign(Object.create(inner) as SyncTarget, {
      async putPointer(key: string, bytes: Buffer): Promise<void> {
        if (key === senderMarkerKey(SITE) && failed++ === 0) throw new SyncError('Transport', 'connection reset before the request was sent');
        await inner.putPointer(key, bytes);
      },
    });
    const e = engine(fx.data, target);
    const r = await e.syncNow(20);
    expect(failed).toBeGreaterThanOrEqual(2);
    expect(r.status).toMatchObject({ healthy: true, problems: [], lastError: null, pendingItems: 0 });
    expect(marker(mnt).by).toBe('first send');
    expectStockAtHq(mnt, fx);
    await e.close();
  });

  it('a site that synced before markers (its outbox has no senderMarkerSinceMs)', async () => {
    const { mnt } = mountPoint();
    const fx = site(200);
    const e = engine(fx.data, dirTarget(mnt));
    await e.syncNow(20);
    await e.close();
    // What a version before markers left: HQ without one, an outbox that never knew one.
    rmSync(join(mnt, senderMarkerKey(SITE)));
    const db = openOutboxDb(join(fx.data, 'site.db'));
    try {
      new Outbox(db).setState(MARKER_SINCE, null);
    } finally {
      db.close();
    }
    writeStock(fx, 200, 230, 2);
    const again = engine(fx.data, dirTarget(mnt));
    const r = await again.syncNow(20);
    expect(r.status).toMatchObject({ healthy: true, problems: [], lastError: null, pendingItems: 0 });
    expect(marker(mnt)).toMatchObject({ sender: again.sender, by: 'first send' });
    expectStockAtHq(mnt, fx);
    await again.close();
  });
});

describe('over S3', () => {
  it("HQ's copy deleted: nothing written, the message asks whether it was", async () => {
    const root = `gone-${Date.now()}/`;
    const target = () => new S3Target({ bucket: s3.bucket, root, endpoint: s3.endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', writePrefix: sitePrefix(SITE) });
    const fx = site(200);
    const t = target();
    const e = engine(fx.data, t);
    await e.syncNow(20);
    const wiper = target();
    for (const o of await wiper.list(sitePrefix(SITE))) await wiper.remove(o.key);
    writeStock(fx, 200, 220, 2);
    const r = await e.syncNow(20);
    expect(await wiper.list(sitePrefix(SITE))).toEqual([]);
    expect(r.status).toMatchObject({ healthy: false, problems: ['gone'] });
    expect(r.status.lastError).toContain(`HQ (${t.description}) no longer holds this site's sender marker`);
    expect(r.status.lastError).toContain("was HQ's copy deleted?");
    expect(r.status.lastError).not.toContain('mount it first');
    await e.close();
    for (const x of [t, wiper]) await x.close();
  });
});
