// End to end through the site's own broker: ModuleClient → mosquitto (the shipped configuration,
// password auth) → MqttSource (persistent sessions, one connection per module) → the Ingestor as
// its durable sink → tables. Also: events published while Tilstand is away arrive after it
// reconnects, and nothing is applied twice. Skips loudly without mosquitto; fails under CI=true.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Catalog, valueToJson } from '../../core/lsm/index.ts';
import { ContractRegistry } from '../../core/ingest/contracts.ts';
import { Ingestor } from '../../core/ingest/ingestor.ts';
import { Journal } from '../../core/ingest/journal.ts';
import { ModuleClient } from '../../core/ingest/module-client/index.ts';
import { MqttSource } from '../../core/ingest/mqtt-source.ts';
import { SEED_BINDINGS } from '../../core/ingest/seed-bindings.ts';
import { SEED_CONTRACTS } from '../../core/ingest/seed-contracts.ts';
import { SEED_TABLES } from '../../core/ingest/seed-tables.ts';
import { startMosquitto } from '../helpers/mosquitto.ts';

const SITE = 'm1';
const USERS = { tilstand: 'til-pw', inventory: 'inv-pw', operations: 'ops-pw', commerce: 'com-pw', procurement: 'pro-pw' };
const mosq = await startMosquitto({ users: USERS, site: SITE });
afterAll(async () => mosq?.stop());

const dirs: string[] = [];
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function openIngest(dir: string, clock: () => number) {
  const journal = Journal.open(dir);
  const contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
  const ingestor = Ingestor.open({
    site: SITE,
    catalog: new Catalog(join(dir, 'warehouse')),
    database: `site_${SITE}`,
    journal,
    contracts,
    bindings: [...SEED_BINDINGS],
    tables: [...SEED_TABLES],
    budgets: [],
    clock,
  });
  return { journal, ingestor };
}

function source(url: string, sink: (topic: string, payload: Buffer) => Promise<unknown>) {
  return new MqttSource({
    url,
    clientId: `tilstand-${SITE}`,
    username: 'tilstand',
    password: USERS.tilstand,
    groups: ['inventory', 'commerce', 'operations'].map((m) => ({ name: m, topics: [`tilstand/${SITE}/events/${m}/#`] })),
    sink,
    backoff: { initialDelayMs: 50, maxDelayMs: 500 },
  });
}

const stockRow = (dir: string, item: string) => {
  const t = new Catalog(join(dir, 'warehouse')).getTable({ database: `site_${SITE}`, table: 'stock' });
  const r = t.reader();
  try {
    const v = r.get({ item, location: 'L1' });
    return v && Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, v[i])]));
  } finally {
    r.close();
  }
};

async function until(cond: () => boolean, ms: number, what = () => ''): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${what()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(!mosq)('Ingestor behind mosquitto', () => {
  it('module events become state, including those published while Tilstand was away, each once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-mosq-'));
    dirs.push(dir);
    let now = Date.now();
    let { journal, ingestor } = openIngest(dir, () => now);
    let accepted = 0;
    // Counted once accept resolved (journaled and applied), so a tick after `accepted >= n` sees them.
    const sink = async (topic: string, payload: Buffer) => {
      const r = await ingestor.accept(topic, payload);
      accepted++;
      return r;
    };
    let src = source(mosq!.siteUrl, sink);
    src.start();
    await until(() => src.stats().every((g) => g.connected), 20_000, () => JSON.stringify(src.stats()) + mosq!.log().slice(-2000));

    const inventory = new ModuleClient({ url: mosq!.url, username: 'inventory', password: USERS.inventory, site: SITE, module: 'inventory', outboxPath: join(dir, 'inv.db') });
    const commerce = new ModuleClient({ url: mosq!.url, username: 'commerce', password: USERS.commerce, site: SITE, module: 'commerce', outboxPath: join(dir, 'com.db') });
    closers.push(() => inventory.close(), () => commerce.close());
    await Promise.all([inventory.connected(), commerce.connected()]);
    const inv = (item: string, qty: number) => inventory.publish('stock', 'u', null, { item, location: 'L1', qty }, { name: 'inventory.stock', version: 1 });
    for (let k = 1; k <= 40; k++) await inv(`A-${k % 4}`, k);
    await commerce.publish('reservations', 'u', null, { item: 'A-1', location: 'L1', reserved_qty: 7 }, { name: 'commerce.reservations', version: 1 });
    await until(() => accepted >= 41, 20_000, () => `accepted ${accepted} ${JSON.stringify(src.stats())}`);

    // Tilstand goes away (commits first, as a clean stop does); the modules keep publishing.
    await src.stop();
    ingestor.close();
    journal.close();
    for (let k = 41; k <= 60; k++) await inv(`A-${k % 4}`, k);

    // Back: the persistent session delivers the backlog.
    now += 1000;
    ({ journal, ingestor } = openIngest(dir, () => now));
    accepted = 0;
    src = source(mosq!.siteUrl, sink);
    closers.push(async () => {
      await src.stop();
      ingestor.close();
      journal.close();
    });
    src.start();
    await until(() => accepted >= 20, 15_000);
    now += 15 * 60_000;
    ingestor.tick();
    expect(stockRow(dir, 'A-1')).toMatchObject({ on_hand: 57, inventory_seq: 57, reserved: 7, commerce_seq: 1 });
    expect(stockRow(dir, 'A-0')).toMatchObject({ on_hand: 60, inventory_seq: 60 });
    expect(ingestor.deadLetterCount()).toBe(0);
    expect(src.stats().reduce((s, g) => s + g.sinkFailures, 0)).toBe(0);
  }, 60_000);
});
