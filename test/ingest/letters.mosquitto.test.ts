// A site on an external mosquitto tells a module of its own dead letters on
// tilstand/<site>/letters/<module>, and the shipped ACL template (core/ingest/mosquitto) lets the
// site publish there and each module read its own only. Without the template's `letters` lines
// mosquitto dropped the site's notices.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { DeadLetterNotice } from '../../core/ingest/letter-notices.ts';
import { ModuleClient } from '../../core/ingest/module-client/index.ts';
import type { GroupStats } from '../../core/ingest/mqtt-source.ts';
import type { SiteConfig } from '../../core/site/config.ts';
import { initDataDir } from '../../core/site/init.ts';
import { Site } from '../../core/site/site.ts';
import { startMosquitto } from '../helpers/mosquitto.ts';

const SITE = 'extlet';
let dir: string;
const cleanups: Array<() => Promise<unknown>> = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-ext-letters-'));
});
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

async function until(cond: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

it("tells a module of its dead letter through mosquitto, and no other module hears of it", async () => {
  const m = await startMosquitto({ users: { tilstand: 'pw-tilstand', inventory: 'pw-inventory', operations: 'pw-operations' }, site: SITE });
  if (!m) return; // notice printed by the helper (an error under CI=true)
  cleanups.push(() => m.stop());
  const data = join(dir, 'data');
  const broker: SiteConfig['broker'] = { mode: 'external', url: m.siteUrl, username: 'tilstand', passwordFile: join(dir, 'broker.pw'), modules: ['inventory', 'operations'] };
  await initDataDir({ data, site: SITE, scrypt: { N: 1024, r: 8, p: 1 }, config: (c) => ({ ...c, broker }) });
  writeFileSync(join(dir, 'broker.pw'), 'pw-tilstand\n');
  const site = await Site.start({ data, httpPort: 0, ui: false, agentTimer: false });
  cleanups.push(() => site.stop());
  const groups = () => (site as unknown as { source: { stats(): GroupStats[] } }).source.stats();
  await until(() => groups().every((g) => g.subscribes > 0), "the source's subscriptions");

  // operations tries to read inventory's notices (and every module's).
  const snoop = await mqtt.connectAsync(m.url, { username: 'operations', password: 'pw-operations', clientId: 'operations' });
  cleanups.push(() => snoop.endAsync(true));
  const snooped: string[] = [];
  snoop.on('message', (t) => snooped.push(t));
  await snoop.subscribeAsync([`tilstand/${SITE}/letters/inventory`, `tilstand/${SITE}/letters/#`], { qos: 1 }).catch(() => undefined);

  const got: DeadLetterNotice[] = [];
  const warned: string[] = [];
  const inv = new ModuleClient({ url: m.url, site: SITE, module: 'inventory', username: 'inventory', password: 'pw-inventory', outboxPath: join(dir, 'inventory.db'), onWarning: (w) => warned.push(w), onDeadLetter: (n) => got.push(n) });
  cleanups.push(() => inv.close());
  // The client subscribes on connect, before it publishes on that connection: mosquitto has the
  // subscription before the event, and the notice comes after the site's commit.
  await inv.connected();
  const { seq } = await inv.publish('stock', 'c', null, { item: 'A-1', location: 'L1', qty: 'three' }, { name: 'inventory.stock', version: 1 });
  await until(() => got.length === 1, `the notice (mosquitto log: ${m.log().slice(-500)})`);
  const [letter] = site.ingestor.listDeadLetters();
  expect(got[0]).toMatchObject({ kind: 'letter', module: 'inventory', stream: 'stock', seq, reason: 'contract_violation', letter: letter!.position.toString() });
  // A round trip on the snoop's connection after the notice went out: nothing came to it.
  await snoop.publishAsync(`tilstand/${SITE}/acks/operations`, '{}', { qos: 1 });
  expect(snooped).toEqual([]);
  expect(warned.filter((w) => w.startsWith('subscribe'))).toEqual([]);
}, 60_000);
