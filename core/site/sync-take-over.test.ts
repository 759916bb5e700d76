// `tilstand sync now --take-over` on a running site: the site's engine holds the sender lock, so
// the command writes HQ's sender marker (core/sync/sender.ts) with the directory's sender id and
// then asks the site to sync; the site's engine, refused while the marker named another sender,
// sends again. Refused while HQ's marker is gone and its folder has fallen back onto this PC's own
// disk (a share not mounted, core/sync/take-over-own-disk.test.ts), unless --hq-on-this-disk.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { senderMarkerKey, sitePrefix } from '../sync/names.ts';
import { openOutboxDb, Outbox } from '../sync/outbox.ts';
import { fileSystemOf, HQ_FILE_SYSTEM } from '../sync/sender.ts';
import { runMain as cli } from './cli/test-support.ts';
import { Site } from './site.ts';

const dirs: string[] = [];
const sites: Site[] = [];
afterEach(async () => {
  for (const s of sites.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('sync now --take-over on a running site', () => {
  it('rewrites the marker with the site’s sender id; the site sends again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-site-take-over-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    const hq = join(dir, 'hq');
    const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, hq, syncIntervalMs: 600_000, agentTimer: false });
    sites.push(site);
    const first = await cli(['sync', 'now', '--data', data]);
    expect(first.code, first.err).toBe(0);
    const markerPath = join(hq, ...senderMarkerKey('demo').split('/'));
    const own = (JSON.parse(readFileSync(markerPath, 'utf8')) as { sender: string }).sender;
    expect(own).toBe(site.sync!.sender);
    // Another PC took the prefix (its take-over, or a restore from HQ).
    mkdirSync(join(markerPath, '..'), { recursive: true });
    writeFileSync(markerPath, JSON.stringify({ format: 1, sender: 'other-pc', host: 'spare', dataDir: '/srv/tilstand', sinceMs: Date.UTC(2026, 11, 1), by: 'restore' }));
    site.ingestor.commitAll();
    const refused = await cli(['sync', 'now', '--data', data]);
    expect(refused.out).toContain('belongs to another sender: other-pc on spare (/srv/tilstand), since 2026-12-01T00:00:00.000Z (restore)');
    expect(refused.out).toMatch(/health: +STALLED/);
    const taken = await cli(['sync', 'now', '--data', data, '--take-over']);
    expect(taken.err).toBe('');
    expect(taken.code).toBe(0);
    expect(taken.out).toContain(`HQ's sender marker for site demo now names this directory (sender ${own})`);
    expect(taken.out).toMatch(/by the site running on/);
    expect(taken.out).not.toContain('last error');
    expect(JSON.parse(readFileSync(markerPath, 'utf8'))).toMatchObject({ sender: own, by: 'take-over' });
  }, 120_000);

  it('onto this PC’s own disk while the marker is gone: refused, nothing written; taken with --hq-on-this-disk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-site-take-over-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    const hq = join(dir, 'hq');
    const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, hq, syncIntervalMs: 600_000, agentTimer: false });
    sites.push(site);
    const first = await cli(['sync', 'now', '--data', data]);
    expect(first.code, first.err).toBe(0);
    // The share is not mounted: HQ's folder is the empty mount point. Nothing here can be mounted,
    // so the outbox is left as the site's engine records a share on another file system.
    rmSync(join(hq, sitePrefix('demo')), { recursive: true });
    const db = openOutboxDb(join(data, 'site.db'));
    try {
      new Outbox(db).setState(HQ_FILE_SYSTEM, JSON.stringify({ apart: true, hqDevice: '4242', dataDevice: String(fileSystemOf(data)) }));
    } finally {
      db.close();
    }
    const alone = await cli(['sync', 'now', '--data', data, '--hq-on-this-disk']);
    expect(alone.code).toBe(2);
    expect(alone.err).toContain("option '--hq-on-this-disk' goes with --take-over");
    const refused = await cli(['sync', 'now', '--data', data, '--take-over']);
    expect(refused.code, refused.err).toBe(3);
    expect(refused.err).toContain(`take-over refused: HQ's folder ${hq} is now on this PC's own disk`);
    expect(refused.err).toContain('--take-over --hq-on-this-disk');
    expect(existsSync(join(hq, sitePrefix('demo')))).toBe(false);
    const taken = await cli(['sync', 'now', '--data', data, '--take-over', '--hq-on-this-disk']);
    expect(taken.code, taken.err).toBe(0);
    expect(taken.out).toContain(`HQ's sender marker for site demo now names this directory (sender ${site.sync!.sender})`);
    expect(JSON.parse(readFileSync(join(hq, ...senderMarkerKey('demo').split('/')), 'utf8'))).toMatchObject({ sender: site.sync!.sender, by: 'take-over' });
  }, 120_000);
});
