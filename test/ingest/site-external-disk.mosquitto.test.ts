// A site on an external mosquitto (`broker.mode: "external"`) holds its acknowledgements to
// mosquitto while its disk budget is full, as the embedded broker holds the modules': nothing is
// journaled meanwhile, mosquitto keeps the event in Tilstand's session, and it is journaled once
// there is room.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { initDataDir } from '../../core/site/init.ts';
import { Site } from '../../core/site/site.ts';
import { startMosquitto } from '../helpers/mosquitto.ts';

let dir: string;
const cleanups: Array<() => Promise<unknown>> = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-ext-disk-'));
});
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('holds the event unjournaled while the disk budget is full, and journals it once there is room', async () => {
  const m = await startMosquitto({ users: { tilstand: 'pw-tilstand', inventory: 'pw-inventory' }, site: 'ext' });
  if (!m) return; // notice printed by the helper (an error under CI=true)
  cleanups.push(() => m.stop());
  const data = join(dir, 'ext');
  await initDataDir({
    data,
    site: 'ext',
    scrypt: { N: 1024, r: 8, p: 1 },
    config: (c) => ({
      ...c,
      broker: { mode: 'external', url: m.siteUrl, username: 'tilstand', passwordFile: join(dir, 'broker.pw') },
      // More free disk than any machine has: the budget is full from the start.
      diskBudget: { journalBytesMax: c.diskBudget.journalBytesMax, diskFreeBytesMin: 2 ** 52 },
    }),
  });
  writeFileSync(join(dir, 'broker.pw'), 'pw-tilstand\n');
  const site = await Site.start({ data, httpPort: 0, ui: false, agentTimer: false });
  cleanups.push(() => site.stop());
  expect(site.status().diskFull).toBe(true);
  await until(() => site.brokerInfo().listening, "the source's subscriptions");

  const module = await mqtt.connectAsync(m.url, { username: 'inventory', password: 'pw-inventory', clientId: 'inventory' });
  cleanups.push(() => module.endAsync(true));
  const before = site.status().journal.lastPosition;
  const event = { op: 'u', before: null, after: { item: 'A-1', location: 'L1', qty: 3 }, source: { module: 'inventory', stream: 'stock', seq: 1 }, ts_ms: Date.now(), contract: { name: 'inventory.stock', version: 1 } };
  await module.publishAsync('tilstand/ext/events/inventory/stock', JSON.stringify(event), { qos: 1 }); // mosquitto's PUBACK
  await new Promise((r) => setTimeout(r, 1000));
  expect(site.status().journal.lastPosition, 'journaled although the disk budget is full').toBe(before);

  // Room again (the disk's free space is the edge faked here): the held event goes through.
  (site as unknown as { ingest: { diskBudget: { full(): boolean } } }).ingest.diskBudget.full = () => false;
  await until(() => BigInt(site.status().journal.lastPosition) > BigInt(before), 'the held event journaled');
}, 30_000);
