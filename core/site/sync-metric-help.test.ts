// The metric tilstand_sync_oldest_unsynced_seconds is how long HQ has been behind (core/sync
// engine.ts SyncStatus.oldestUnsyncedMs: a superseded snapshot unit's wait carried over), not the
// age of one step: its help text says so, for whoever reads the scrape.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const dirs: string[] = [];
const sites: Site[] = [];
afterEach(async () => {
  for (const s of sites.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the sync metrics of a site with an HQ target', () => {
  it('say that the oldest unsynced age is how long HQ has been behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-metric-help-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    await initDataDir({ data, site: 'help', config: (c) => ({ ...c, hq: { target: join(dir, 'hq') } }) });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, syncIntervalMs: 60_000 });
    sites.push(site);
    const metrics = site.metrics();
    expect(metrics).toMatch(/^# HELP tilstand_sync_oldest_unsynced_seconds How long HQ has been behind\b.*$/m);
    expect(metrics).toMatch(/^tilstand_sync_oldest_unsynced_seconds\{site="help"\} \d+$/m);
  }, 60_000);
});
