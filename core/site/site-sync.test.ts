// The running site ships its tables to HQ when a target is given (`tilstand start --hq`, or
// config hq.target): HQ ends with each synced table at EARLIEST = LATEST, readable with the table
// store, and the site API reports sync as configured.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { Table } from '../lsm/index.ts';
import { SyncEngine } from '../sync/engine.ts';
import { openOutboxDb, Outbox } from '../sync/outbox.ts';
import { DirectoryTarget } from '../sync/targets/directory.ts';
import { runMain as cli } from './cli/test-support.ts';
import { readModuleSecrets } from './demo/run.ts';
import { demoConfig } from './demo/site.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { formatStatus, statusFromDirectory } from './status.ts';

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
    // The target in config.json (hq.target), as the demo's own and a real site's.
    await initDataDir({ data: join(dir, 'data'), site: 'demo', config: (c) => demoConfig(c, hq) });
    const site = await Site.start({ data: join(dir, 'data'), demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 100, demoSeed: 3, syncIntervalMs: 60_000, agentTimer: false });
    sites.push(site);
    expect(site.sync).toBeDefined();
    const stockAtHq = join(hq, 'site_demo.db', 'stock');
    // Until HQ's stock holds rows: the table's first snapshot may be a progress commit without any
    // (a table commits its journal position at the first tick after the journal moved past it,
    // which can come before the demo's first stock event).
    const hqRows = () => (existsSync(join(stockAtHq, 'snapshot', 'LATEST')) ? Table.open(stockAtHq).scanRows().length : 0);
    const end = Date.now() + 60_000;
    while (hqRows() === 0 && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 500));
      site.sync!.enqueueSnapshotSync();
      await site.sync!.runOnce();
    }
    const latest = readFileSync(join(stockAtHq, 'snapshot', 'LATEST'), 'utf8');
    expect(readFileSync(join(stockAtHq, 'snapshot', 'EARLIEST'), 'utf8')).toBe(latest);
    expect(Table.open(stockAtHq).scanRows().length).toBeGreaterThan(0);
    const status = site.sync!.status();
    expect(status.lastSuccessMs).not.toBeNull();
    // The floor UI's Sync screen: where to, and what moved within the health window.
    const shown = site.service.status().sync;
    expect(shown).toMatchObject({ configured: true, target: hq, windowMs: 15 * 60_000 });
    expect(shown.recentItems).toBeGreaterThan(0);
    expect(shown.recentBytes).toBeGreaterThan(0);
    // `tilstand status`, from the running site and, once it stopped, from the outbox.
    expect(formatStatus(site.status()).join('\n')).toMatch(new RegExp(`^sync: to ${hq}, online, \\d+ steps? pending.*, last success [\\d.]+ (ms|s) ago$`, 'm'));
    expect(site.metrics()).toMatch(/tilstand_sync_healthy\{site="demo"\} 1/);
    expect(site.metrics()).toMatch(/tilstand_sync_pending_items\{site="demo"\} \d+/);
    await site.stop();
    const after = statusFromDirectory(join(dir, 'data'));
    expect(after.sync).toMatchObject({ target: hq, online: true, lastSuccessMs: expect.any(Number), lastError: null });
    expect(formatStatus(after).join('\n')).toMatch(new RegExp(`^sync: to ${hq}, online, \\d+ steps? pending`, 'm'));
    // What waits for a decision, read from the approval inbox's table.
    const waiting = site.decisions!.inbox.activeCounts();
    expect(after.proposals).toEqual(waiting);
    expect(formatStatus(after).join('\n')).toMatch(new RegExp(`^proposals: ${waiting.open} open.*, ${waiting.deferred} deferred`, 'm'));
  }, 120_000);

  it('`tilstand status` of a site without a target says where to set one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-site-nosync-'));
    dirs.push(dir);
    await initDataDir({ data: join(dir, 'data'), site: 'demo', config: demoConfig });
    const st = statusFromDirectory(join(dir, 'data'));
    expect(st.sync).toBeNull();
    expect(formatStatus(st)).toContain('sync: no HQ target (config hq.target; docs/operations.md, "Connecting to headquarters")');
    // A site that never ran has no approval inbox yet: no line for it.
    expect(st.proposals).toBeNull();
    expect(formatStatus(st).join('\n')).not.toContain('proposals:');
  });

  it('`tilstand sync now` asks the running site; a second sender on the directory is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-site-sync-now-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    const hq = join(dir, 'hq');
    const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, hq, syncIntervalMs: 600_000, agentTimer: false });
    sites.push(site);
    for (let i = 0; i < 100 && site.catalog.getTable({ database: 'site_demo', table: 'stock' }).scanRows().length === 0; i++) {
      site.ingestor.commitAll();
      await new Promise((r) => setTimeout(r, 100));
    }
    // The site's engine holds <data>/sync.lock: another engine (another process's `sync now`, or
    // this one's) would send the same steps again and write HQ's pointers out of order.
    expect(() => new SyncEngine({ dataDir: data, site: 'demo', target: new DirectoryTarget(join(dir, 'other')) })).toThrow(/one sender per data directory/);
    const now = await cli(['sync', 'now', '--data', data]);
    expect(now.err).toBe('');
    expect(now.code).toBe(0);
    expect(now.out).toMatch(new RegExp(`^planned \\d+ units .*sent \\d+ bytes \\(by the site running on ${data.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)`));
    expect(now.out).toMatch(/pending: +0 steps/);
    expect(existsSync(join(hq, 'site_demo.db', 'stock', 'snapshot', 'LATEST'))).toBe(true);
    // The same target may be named; another one is refused, naming the site's.
    expect((await cli(['sync', 'now', '--data', data, '--hq', hq, '--json'])).code).toBe(0);
    const other = await cli(['sync', 'now', '--data', data, '--hq', join(dir, 'other')]);
    expect(other.code).toBe(2);
    expect(other.err).toContain(`syncs to ${hq}, not ${join(dir, 'other')}`);
    expect(existsSync(join(dir, 'other'))).toBe(false);
    // Stopped, the site gives the lock back: the command then syncs the directory itself.
    await site.stop();
    sites.pop();
    expect(existsSync(join(data, 'sync.lock'))).toBe(false);
    // `tilstand status` of the stopped site: the target it was given only with --hq, from the outbox.
    const stopped = formatStatus(statusFromDirectory(data)).join('\n');
    expect(stopped).toMatch(new RegExp(`^sync: to dir:${hq} \\(given with --hq at the last start; not in config.json\\), online, 0 steps pending`, 'm'));
    const offline = await cli(['sync', 'now', '--data', data, '--hq', hq]);
    expect(offline.code).toBe(0);
    expect(offline.out).not.toContain('by the site running');
    // Without --hq, the command takes that target too, saying so.
    const again = await cli(['sync', 'now', '--data', data]);
    expect(again.err).toBe('');
    expect(again.code).toBe(0);
    expect(again.out).toContain(`syncing to ${hq}: config.json names no HQ target, and the site's last start was given this one with --hq`);
    // An S3 target's description lacks its options: named, not guessed.
    const db = openOutboxDb(join(data, 'site.db'));
    new Outbox(db).setState('target', 's3://bucket/sites (http://127.0.0.1:9000)');
    db.close();
    const s3 = await cli(['sync', 'now', '--data', data]);
    expect(s3.code).toBe(2);
    expect(s3.err).toContain("option '--hq' is required: config.json names no HQ target, and the site last synced to s3://bucket/sites (http://127.0.0.1:9000), given with --hq at its start");
  }, 120_000);

  it('a target it cannot use stops the start before anything listens, naming where it came from', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-site-sync-bad-'));
    dirs.push(dir);
    const lines: string[] = [];
    const saved = { a: process.env.TILSTAND_HQ_ACCESS_KEY, s: process.env.TILSTAND_HQ_SECRET_KEY };
    delete process.env.TILSTAND_HQ_ACCESS_KEY;
    delete process.env.TILSTAND_HQ_SECRET_KEY;
    try {
      await expect(Site.start({ data: join(dir, 'data'), demo: true, mqttPort: 0, httpPort: 0, hq: 's3://bucket/sites', agentTimer: false, log: (l) => lines.push(l) })).rejects.toThrow(
        /^option --hq: S3 target needs credentials: set TILSTAND_HQ_ACCESS_KEY and TILSTAND_HQ_SECRET_KEY/,
      );
    } finally {
      if (saved.a !== undefined) process.env.TILSTAND_HQ_ACCESS_KEY = saved.a;
      if (saved.s !== undefined) process.env.TILSTAND_HQ_SECRET_KEY = saved.s;
    }
    // Nothing had started: no broker for the write-back to lose, no modules.
    expect(lines.filter((l) => /write-back|demo modules|running from/.test(l))).toEqual([]);
  });

  it('a running site without an HQ target leaves `sync now` to the command', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-site-sync-none-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, agentTimer: false });
    sites.push(site);
    expect(site.sync).toBeUndefined();
    for (let i = 0; i < 100 && site.catalog.getTable({ database: 'site_demo', table: 'stock' }).scanRows().length === 0; i++) {
      site.ingestor.commitAll();
      await new Promise((r) => setTimeout(r, 100));
    }
    const r = await cli(['sync', 'now', '--data', data, '--hq', join(dir, 'usb')]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).not.toContain('by the site running');
    expect(existsSync(join(dir, 'usb', 'site_demo.db', 'stock', 'snapshot', 'LATEST'))).toBe(true);
  }, 120_000);

  it('while another process holds the sync lock (a `sync now` begun with no site running), the site runs and waits for it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-site-sync-wait-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    const hq = join(dir, 'hq');
    await initDataDir({ data, site: 'demo', config: demoConfig });
    // A live process of this host holds <data>/sync.lock, as `tilstand sync now` does.
    const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      writeFileSync(join(data, 'sync.lock'), JSON.stringify({ pid: holder.pid, host: hostname(), token: 'other', sinceMs: Date.now() }));
      const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, hq, syncIntervalMs: 600_000, agentTimer: false });
      sites.push(site);
      expect(site.sync).toBeUndefined();
      const st = site.service.status().sync;
      expect(st).toMatchObject({ configured: true, healthy: true, lastError: expect.stringMatching(new RegExp(`^not sending: .*being written by process ${holder.pid}`)) });
      const asked = await cli(['sync', 'now', '--data', data]);
      expect(asked.err).toMatch(/waiting for the sync lock/);
      expect(asked.code).not.toBe(0);
      // The holder ends: the site takes the lock at its next try (every 10 s) and syncs.
      holder.kill('SIGKILL');
      await new Promise((r) => holder.once('exit', r));
      const end = Date.now() + 30_000;
      while (!site.sync && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
      expect(site.sync).toBeDefined();
      expect(site.service.status().sync.lastError).toBeNull();
    } finally {
      holder.kill('SIGKILL');
    }
  }, 120_000);

  it('after a restore, asks each module to resend what came after the restored state until it delivers', async () => {
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
    const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, agentTimer: false, restoreResyncRepeatMs: 100, log: (l) => lines.push(l) });
    sites.push(site);
    expect(lines.some((l) => l.includes('restore: asked inventory/stock to resend after seq 41'))).toBe(true);
    const saved = () => JSON.parse(readFileSync(join(data, 'restore-note.json'), 'utf8')) as { resyncSentAtMs?: number; resyncAnswered?: Record<string, number> };
    expect(saved().resyncSentAtMs).toEqual(expect.any(Number));
    // The demo's inventory module delivers (its start-up snapshot): heard from, asked no more.
    const end = Date.now() + 20_000;
    while (saved().resyncAnswered?.['inventory/stock'] === undefined && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    expect(saved().resyncAnswered?.['inventory/stock']).toEqual(expect.any(Number));
    expect(lines.some((l) => l.includes('restore: inventory/stock is delivering again'))).toBe(true);
    await site.stop();
    sites.pop();
    const again: string[] = [];
    const third = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, agentTimer: false, log: (l) => again.push(l) });
    sites.push(third);
    expect(again.some((l) => l.includes('restore: ask'))).toBe(false); // answered: never again
  }, 120_000);

  it('after a restore, a module that connects only later (new broker passwords) still gets the request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-site-restore-late-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    await initDataDir({ data, site: 'north' });
    const note = {
      site: 'north', restoredAtMs: 1, hq: '/hq', tables: {},
      resync: [{ module: 'inventory', stream: 'stock', afterSeq: 41, topic: 'tilstand/north/resync/inventory', tables: { stock: 41 } }],
    };
    writeFileSync(join(data, 'restore-note.json'), JSON.stringify(note));
    // `tilstand status` on the stopped directory names the streams the site will ask.
    expect(formatStatus(statusFromDirectory(data)).join('\n')).toContain('restore: not heard from since the restore: inventory/stock (the site asks them once it runs;');
    const lines: string[] = [];
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, agentTimer: false, ui: false, restoreResyncRepeatMs: 200, log: (l) => lines.push(l) });
    sites.push(site);
    expect(lines.some((l) => l.includes('restore: asked inventory/stock to resend after seq 41'))).toBe(true);
    // The module connects a second later, long after that first request went to no one.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(formatStatus(site.status()).join('\n')).toContain('restore: not heard from since the restore: inventory/stock (asked every 30 s to resend what came after the restored state;');
    const { modules } = readModuleSecrets(join(data, 'secrets', 'modules.json'));
    const inv = modules.inventory!;
    const client = await mqtt.connectAsync(site.mqttUrl, { username: inv.username, password: inv.password, clientId: 'inventory', protocolVersion: 4, reconnectPeriod: 0 });
    try {
      const requests: Array<{ stream: string; from: number }> = [];
      client.on('message', (_t, payload) => requests.push(JSON.parse(payload.toString()) as { stream: string; from: number }));
      await client.subscribeAsync('tilstand/north/resync/inventory', { qos: 1 });
      const until = async (what: string, ok: () => boolean) => {
        const end = Date.now() + 15_000;
        while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
        expect(ok(), what).toBe(true);
      };
      await until('a resend request', () => requests.length > 0);
      expect(requests[0]).toEqual({ stream: 'stock', from: 42 });
      // It resends from 42: heard from, so the requests stop.
      const event = { op: 'u', before: null, after: { item: 'A-1', location: 'L1', qty: 3 }, source: { module: 'inventory', stream: 'stock', seq: 42 }, ts_ms: Date.now(), contract: { name: 'inventory.stock', version: 1 } };
      await client.publishAsync('tilstand/north/events/inventory/stock', JSON.stringify(event), { qos: 1 });
      await until('the stream heard from', () => lines.some((l) => l.includes('restore: inventory/stock is delivering again (seq 42)')));
      expect(formatStatus(site.status()).join('\n')).not.toContain('restore:');
      const seen = requests.length;
      await new Promise((r) => setTimeout(r, 1_000)); // five periods
      expect(requests.length).toBe(seen);
    } finally {
      await client.endAsync();
    }
  }, 60_000);
});
