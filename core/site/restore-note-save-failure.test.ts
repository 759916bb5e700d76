// After a restore the site asks each stream to resend until it delivers, and records the answers
// in restore-note.json from a timer (Site.resyncAfterRestore). A save that fails there (a full
// disk, a folder's fsync failing) is said and tried again; thrown from the timer's callback it
// ended the site process.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterEach, expect, it } from 'vitest';
import { readModuleSecrets } from './demo/run.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const dirs: string[] = [];
const sites: Site[] = [];
afterEach(async () => {
  for (const s of sites.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function until(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  expect(ok(), what).toBe(true);
}

it("a restore note the resync timer cannot save is said and saved at a later tick; the site runs on", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tilstand-restore-note-save-'));
  dirs.push(dir);
  const data = join(dir, 'data');
  await initDataDir({ data, site: 'north' });
  const notePath = join(data, 'restore-note.json');
  const note = {
    site: 'north', restoredAtMs: 1, hq: '/hq', tables: {},
    resync: [{ module: 'inventory', stream: 'stock', afterSeq: 41, topic: 'tilstand/north/resync/inventory', tables: { stock: 41 } }],
  };
  writeFileSync(notePath, JSON.stringify(note));
  const lines: string[] = [];
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, agentTimer: false, ui: false, restoreResyncRepeatMs: 100, log: (l) => lines.push(l) });
  sites.push(site);
  const firstSaved = readFileSync(notePath, 'utf8');
  // The note's name taken by a folder that is not empty: the save's rename over it fails.
  rmSync(notePath);
  mkdirSync(join(notePath, 'x'), { recursive: true });
  const { modules } = readModuleSecrets(join(data, 'secrets', 'modules.json'));
  const inv = modules.inventory!;
  const client = await mqtt.connectAsync(site.mqttUrl, { username: inv.username, password: inv.password, clientId: 'inventory', protocolVersion: 4, reconnectPeriod: 0 });
  try {
    const event = { op: 'u', before: null, after: { item: 'A-1', location: 'L1', qty: 3 }, source: { module: 'inventory', stream: 'stock', seq: 42 }, ts_ms: Date.now(), contract: { name: 'inventory.stock', version: 1 } };
    await client.publishAsync('tilstand/north/events/inventory/stock', JSON.stringify(event), { qos: 1 });
    await until('the stream heard from', () => lines.some((l) => l.includes('restore: inventory/stock is delivering again (seq 42)')));
    await until("the failed save said", () => lines.some((l) => l.startsWith(`restore: ${notePath} could not be saved (`) && l.endsWith('tried again every 100ms')));
    // The way cleared, a later tick saves the answer.
    rmSync(notePath, { recursive: true, force: true });
    writeFileSync(notePath, firstSaved);
    await until('the answer saved', () => {
      try {
        return (JSON.parse(readFileSync(notePath, 'utf8')) as { resyncAnswered?: Record<string, number> }).resyncAnswered?.['inventory/stock'] !== undefined;
      } catch {
        return false;
      }
    });
    // Said once while it failed the same way, and once when it went through again.
    expect(lines.filter((l) => l.includes('could not be saved')).length).toBe(1);
    await until('the save said', () => lines.includes(`restore: ${notePath} saved again`));
    // Still running: its status answers.
    expect(site.status().site).toBe('north');
  } finally {
    await client.endAsync();
  }
}, 60_000);
