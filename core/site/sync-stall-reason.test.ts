// The sync_stalled alarm says which case makes sync unhealthy (params.reason), for the floor UI's
// words: HQ refusing this data directory (another PC sends for the site: a take-over or a retired
// PC, not a line that is down), one step failing while HQ takes the others, a table or contract
// file left out of planning, or steps waiting with nothing sent. The refusal is a real site's, with
// the engine's own message; the other cases are status figures in the form core/sync statusOf
// gives them (`problems`, most pressing first), through a service of its own.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EMPTY_SYNC_STATUS, type SyncStatus } from '../sync/engine.ts';
import { senderMarkerKey } from '../sync/names.ts';
import { SiteService } from './service.ts';
import { Site } from './site.ts';

const dirs: string[] = [];
const sites: Site[] = [];
afterAll(async () => {
  for (const s of sites.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const WINDOW = 15 * 60_000;
// A site whose last request went through: nothing pending, nothing wrong.
const healthy: SyncStatus = { ...EMPTY_SYNC_STATUS, online: true, lastSuccessMs: Date.UTC(2026, 11, 5, 8) };

describe('sync_stalled names why sync is not healthy', () => {
  let site: Site;

  it('a site whose data directory HQ refuses: reason refused, at once, nothing said of progress', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-site-sync-stall-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    const hq = join(dir, 'hq');
    site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, hq, syncIntervalMs: 600_000, agentTimer: false });
    sites.push(site);
    await site.sync!.syncNow(5);
    expect(site.service.status().alarms.filter((a) => a.kind === 'sync_stalled')).toEqual([]);

    // Another PC of the same site took HQ's prefix (restored from HQ).
    const markerPath = join(hq, ...senderMarkerKey('demo').split('/'));
    mkdirSync(join(markerPath, '..'), { recursive: true });
    writeFileSync(markerPath, JSON.stringify({ format: 1, sender: 'other-pc', host: 'spare', dataDir: '/srv/tilstand', sinceMs: Date.UTC(2026, 11, 1), by: 'restore' }));
    site.ingestor.commitAll();
    await site.sync!.syncNow(5);

    const alarm = site.service.status().alarms.find((a) => a.kind === 'sync_stalled');
    expect(alarm?.params).toMatchObject({ reason: 'refused', windowMs: WINDOW });
    expect(alarm?.message).toMatch(/^sync to HQ is refused: another PC sends for this site \(docs\/operations\.md, "Two PCs for one site"\); \d+ steps waiting \(HQ's site_demo\.db\/ belongs to another sender: other-pc/);
    expect(alarm?.message).not.toContain('no progress');
  }, 120_000);

  it('one step failing while HQ takes the others, a table left out of planning, steps waiting, and a cause it cannot tell', () => {
    let st: SyncStatus = healthy;
    const api = new SiteService(site, { sync: { target: '/srv/hq', windowMs: WINDOW, status: () => st } });
    const stall = () => api.status().alarms.find((a) => a.kind === 'sync_stalled');

    // Much moves (recentItems), one data file fails at each attempt: statusOf names it first.
    const step = 'site_demo.db/stock/bucket-0/data-1.parquet has failed since 2026-12-05T07:40:00.000Z while HQ took other requests (14 attempts): Verification: size 10 at HQ, 12 here';
    st = { ...healthy, healthy: false, problems: ['step'], pendingItems: 1, oldestUnsyncedMs: 20 * 60_000, recentItems: 40, lastError: step };
    expect(stall()?.params).toEqual({ pending: 1, reason: 'step', windowMs: WINDOW });
    expect(stall()?.message).toBe(`sync to HQ is not healthy: a step has failed for the whole health window while HQ took other requests; 1 step waiting (${step})`);

    // Nothing pending: a table whose files are missing is left out of planning.
    st = { ...healthy, healthy: false, problems: ['planning'], lastError: 'planning stock: NotFound: data-9.parquet is missing' };
    expect(stall()?.params).toMatchObject({ reason: 'planning' });
    st = { ...st, lastError: 'not sent contracts/jobs.v2.json: Forbidden: refused by HQ' };
    expect(stall()?.params).toMatchObject({ reason: 'planning' });

    // Steps have waited the whole window and nothing was sent: the line.
    st = { ...healthy, healthy: false, problems: ['waiting'], online: false, pendingItems: 7, oldestUnsyncedMs: WINDOW + 1, lastError: 'Transport: connect ETIMEDOUT' };
    expect(stall()?.params).toMatchObject({ reason: 'waiting' });
    expect(stall()?.message).toBe('sync to HQ has made no progress within the health window; 7 steps waiting (Transport: connect ETIMEDOUT)');
    // ...and a table's planning failing for a window too: the line is said first, as statusOf orders them.
    st = { ...st, problems: ['waiting', 'planning'], lastError: 'planning stock: NotFound: data-9.parquet is missing; Transport: connect ETIMEDOUT' };
    expect(stall()?.params).toMatchObject({ reason: 'waiting' });

    // HQ refuses this site's key (S3 403): its own reason, at once, the engine's sentence after it.
    const denied = "HQ refuses this site's credentials: s3://hq/ (http://127.0.0.1:9000) has refused its put requests since 2026-12-05T07:40:00.000Z (…)";
    st = { ...healthy, healthy: false, problems: ['credentials'], online: false, pendingItems: 3, oldestUnsyncedMs: 5_000, lastError: denied };
    expect(stall()?.params).toEqual({ pending: 3, reason: 'credentials', windowMs: WINDOW });
    expect(stall()?.message).toBe(`sync to HQ is refused: HQ does not accept this site's credentials (check the access key and HQ's policy for the site; for a directory HQ, that the site may write its folder); 3 steps waiting (${denied})`);

    // Unhealthy with no cause given (an engine before `problems`): said so, without guessing.
    st = { ...healthy, healthy: false, problems: undefined, lastError: 'something new' };
    expect(stall()?.params).toMatchObject({ reason: 'other' });
    expect(stall()?.message).toBe('sync to HQ is not healthy; 0 steps waiting (something new)');
  });
});
