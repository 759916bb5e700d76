// A site on an external mosquitto (`broker.mode: "external"`) reads the events of the modules
// config `broker.modules` names, a module of the site's own (`yard`) included; without the key,
// the seed modules'. Before the key, the site subscribed to the four seed modules only, and a new
// module's events were acknowledged by mosquitto and dropped (no subscriber).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { SiteConfig } from '../../core/site/config.ts';
import { initDataDir } from '../../core/site/init.ts';
import { Site } from '../../core/site/site.ts';
import type { GroupStats } from '../../core/ingest/mqtt-source.ts';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.ts';

let dir: string;
const cleanups: Array<() => Promise<unknown>> = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-ext-modules-'));
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

const SITE = 'extmod';

async function siteOn(m: MosquittoHandle, modules: string[] | undefined): Promise<{ site: Site; data: string }> {
  const data = join(dir, 'data');
  const broker: SiteConfig['broker'] = { mode: 'external', url: m.siteUrl, username: 'tilstand', passwordFile: join(dir, 'broker.pw'), ...(modules ? { modules } : {}) };
  await initDataDir({ data, site: SITE, scrypt: { N: 1024, r: 8, p: 1 }, config: (c) => ({ ...c, broker }) });
  writeFileSync(join(dir, 'broker.pw'), 'pw-tilstand\n');
  const site = await Site.start({ data, httpPort: 0, ui: false, agentTimer: false });
  cleanups.push(() => site.stop());
  // Subscribed (SUBACK), not only connected: an event before it would find no subscriber.
  await until(() => groups(site).length > 0 && groups(site).every((g) => g.subscribes > 0), "the source's subscriptions");
  return { site, data };
}

/** The site's MqttSource's subscriber groups (private to Site). */
const groups = (site: Site): GroupStats[] => (site as unknown as { source: { stats(): GroupStats[] } }).source.stats();

/** Publishes one event as `module` (QoS 1: mosquitto's PUBACK, not Tilstand's). */
async function publish(m: MosquittoHandle, module: string, stream: string, contract: string): Promise<void> {
  const client = await mqtt.connectAsync(m.url, { username: module, password: `pw-${module}`, clientId: module });
  try {
    const event = { op: 'u', before: null, after: { door: 'D1', state: 'open' }, source: { module, stream, seq: 1 }, ts_ms: Date.now(), contract: { name: contract, version: 1 } };
    await client.publishAsync(`tilstand/${SITE}/events/${module}/${stream}`, JSON.stringify(event), { qos: 1 });
  } finally {
    await client.endAsync();
  }
}

/** The open dead letters' modules, once `n` are open. */
async function deadLetterModules(site: Site, n: number): Promise<(string | null)[]> {
  await until(() => site.ingestor.listDeadLetters({ limit: 10 }).length >= n, `${n} dead letter(s)`);
  return site.ingestor.listDeadLetters({ limit: 10 }).map((d) => d.module);
}

it('reads the events of a module named in broker.modules (yard), as a no_contract dead letter', async () => {
  const m = await startMosquitto({ users: { tilstand: 'pw-tilstand', yard: 'pw-yard', inventory: 'pw-inventory' }, site: SITE });
  if (!m) return; // notice printed by the helper (an error under CI=true)
  cleanups.push(() => m.stop());
  const { site, data } = await siteOn(m, ['inventory', 'yard']);
  expect(groups(site).map((g) => g.name)).toEqual(['inventory', 'yard']);

  await publish(m, 'yard', 'doors', 'yard.doors');
  expect(await deadLetterModules(site, 1)).toEqual(['yard']);
  expect(site.ingestor.listDeadLetters({ limit: 10 })[0]).toMatchObject({ module: 'yard', stream: 'doors', reason: 'no_contract', topic: `tilstand/${SITE}/events/yard/doors` });

  // A changed list is the broker section: it applies at the next start, as the other broker keys.
  const file = join(data, 'config.json');
  const raw = JSON.parse(readFileSync(file, 'utf8'));
  raw.broker.modules = ['inventory', 'yard', 'dock'];
  writeFileSync(file, JSON.stringify(raw));
  expect(await site.reloadConfig()).toEqual({ applied: [], restartNeeded: ['broker'] });
}, 30_000);

it('reads the seed modules without broker.modules, and no other module', async () => {
  const m = await startMosquitto({ users: { tilstand: 'pw-tilstand', yard: 'pw-yard', inventory: 'pw-inventory' }, site: SITE });
  if (!m) return; // notice printed by the helper (an error under CI=true)
  cleanups.push(() => m.stop());
  const { site } = await siteOn(m, undefined);
  expect(groups(site).map((g) => g.name)).toEqual(['operations', 'inventory', 'commerce', 'procurement']);

  // yard first: not subscribed, so mosquitto drops it; inventory's letter then shows the site
  // was reading, and is the only one.
  await publish(m, 'yard', 'doors', 'yard.doors');
  await publish(m, 'inventory', 'doors', 'inventory.doors');
  expect(await deadLetterModules(site, 1)).toEqual(['inventory']);
  await new Promise((r) => setTimeout(r, 500));
  expect(site.ingestor.listDeadLetters({ limit: 10 }).map((d) => d.module)).toEqual(['inventory']);
}, 30_000);
