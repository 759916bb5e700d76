// The running site ships its tables to HQ when a target is given (`tilstand start --hq`, or
// config hq.target): HQ ends with each synced table at EARLIEST = LATEST, readable with the table
// store, and the site API reports sync as configured.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
    expect(site.metrics()).toMatch(/tilstand_sync_healthy\{site="demo"\} 1/);
    expect(site.metrics()).toMatch(/tilstand_sync_pending_items\{site="demo"\} \d+/);
  }, 120_000);

  it('after a restore, asks each module once to resend what came after the restored state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-site-restore-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    // First start makes the demo site; stop it, then leave a restore note as `tilstand restore` does.
    const first = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, agentTimer: false });
    await first.stop();
    const note = {
      site: 'demo', restoredAtMs: 1, hq: '/hq', tables: {},
      resync: [{ module: 'inventory', stream: 'stock', afterSeq: 41, topic: 'tilstand/demo/resync/inventory', tables: { stock: 41 } }],
    };
    writeFileSync(join(data, 'restore-note.json'), JSON.stringify(note));
    const lines: string[] = [];
    const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, agentTimer: false, log: (l) => lines.push(l) });
    sites.push(site);
    expect(lines.some((l) => l.includes('restore: asked inventory/stock to resend after seq 41'))).toBe(true);
    expect(JSON.parse(readFileSync(join(data, 'restore-note.json'), 'utf8')).resyncSentAtMs).toEqual(expect.any(Number));
    await site.stop();
    sites.pop();
    const again: string[] = [];
    const third = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, agentTimer: false, log: (l) => again.push(l) });
    sites.push(third);
    expect(again.some((l) => l.includes('restore: asked'))).toBe(false); // once only
  }, 120_000);
});
