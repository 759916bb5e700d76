// The running site ships its tables to HQ when a target is given (`tilstand start --hq`, or
// config hq.target): HQ ends with each synced table at EARLIEST = LATEST, readable with the table
// store, and the site API reports sync as configured.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Table } from '../lsm/index.ts';
import { Site } from './site.ts';

const dirs: string[] = [];
const sites: Site[] = [];
afterEach(async () => {
  for (const s of sites.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('Site with an HQ target', () => {
  it('syncs the state tables to a directory target and reports it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-site-sync-'));
    dirs.push(dir);
    const hq = join(dir, 'hq');
    const site = await Site.start({ data: join(dir, 'data'), demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 100, demoSeed: 3, hq, syncIntervalMs: 60_000, agentTimer: false });
    sites.push(site);
    expect(site.sync).toBeDefined();
    const stockAtHq = join(hq, 'site_demo.db', 'stock');
    const end = Date.now() + 60_000;
    while (!existsSync(join(stockAtHq, 'snapshot', 'LATEST')) && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 500));
      site.sync!.enqueueSnapshotSync();
      await site.sync!.runOnce();
    }
    const latest = readFileSync(join(stockAtHq, 'snapshot', 'LATEST'), 'utf8');
    expect(readFileSync(join(stockAtHq, 'snapshot', 'EARLIEST'), 'utf8')).toBe(latest);
    expect(Table.open(stockAtHq).scanRows().length).toBeGreaterThan(0);
    const status = site.sync!.status();
    expect(status.lastSuccessMs).not.toBeNull();
  }, 120_000);
});
