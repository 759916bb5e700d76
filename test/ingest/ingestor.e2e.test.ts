// End to end over a real MQTT broker (loopback): ModuleClient → EmbeddedBroker (aedes) → the
// Ingestor as the broker's durable sink (PUBACK after the journal commit) → tables, visible after tick.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog, valueToJson } from '../../core/lsm/index.ts';
import { EmbeddedBroker, type CredentialStore, type Principal } from '../../core/ingest/broker.ts';
import { ContractRegistry } from '../../core/ingest/contracts.ts';
import { Ingestor } from '../../core/ingest/ingestor.ts';
import { Journal } from '../../core/ingest/journal.ts';
import { ModuleClient } from '../../core/ingest/module-client/index.ts';
import { SEED_BINDINGS } from '../../core/ingest/seed-bindings.ts';
import { SEED_CONTRACTS } from '../../core/ingest/seed-contracts.ts';
import { SEED_TABLES } from '../../core/ingest/seed-tables.ts';

const SITE = 's1';
const MODULES = ['inventory', 'commerce', 'operations'];
const credentials: CredentialStore = {
  async verify(username, password): Promise<Principal | null> {
    return MODULES.includes(username) && password === `${username}-pw` ? { name: username, kind: 'module', module: username } : null;
  },
};

let dir: string;
let journal: Journal;
let ingestor: Ingestor;
let broker: EmbeddedBroker;
const clients: ModuleClient[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-ingest-e2e-'));
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await broker?.close();
  ingestor?.close();
  journal?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Ingestor behind the embedded broker', () => {
  it('module events published over MQTT become table state after tick', async () => {
    let now = Date.now();
    journal = Journal.open(dir);
    const contracts = new ContractRegistry(join(dir, 'contracts'));
    for (const c of SEED_CONTRACTS) contracts.register(c);
    ingestor = Ingestor.open({
      site: SITE,
      catalog: new Catalog(join(dir, 'warehouse')),
      database: `site_${SITE}`,
      journal,
      contracts,
      bindings: [...SEED_BINDINGS],
      tables: [...SEED_TABLES],
      budgets: [],
      clock: () => now,
    });
    broker = new EmbeddedBroker({ site: SITE, credentials, port: 0, onEvent: (topic, payload) => ingestor.accept(topic, payload) });
    const port = await broker.listen();
    const client = (module: string) => {
      const c = new ModuleClient({ url: `mqtt://127.0.0.1:${port}`, username: module, password: `${module}-pw`, site: SITE, module, outboxPath: join(dir, `${module}.outbox.db`), reconnect_period_ms: 100 });
      clients.push(c);
      return c;
    };
    const inventory = client('inventory');
    const commerce = client('commerce');
    const operations = client('operations');
    await Promise.all([inventory.connected(), commerce.connected(), operations.connected()]);

    const published: Promise<{ seq: number }>[] = [];
    for (let k = 1; k <= 50; k++) {
      published.push(inventory.publish('stock', 'u', null, { item: `A-${k % 5}`, location: 'L1', qty: k }, { name: 'inventory.stock', version: 1 }));
    }
    published.push(commerce.publish('reservations', 'u', null, { item: 'A-1', location: 'L1', reserved_qty: 3 }, { name: 'commerce.reservations', version: 1 }));
    published.push(
      operations.publish('jobs', 'c', null, { job_id: 'J-1', status: 'blocked', blocked_reason: 'no material', capability: 'forklift', priority: 2 }, { name: 'operations.jobs', version: 1 }),
    );
    await Promise.all(published); // every PUBACK arrived: each event is in the journal

    const catalog = new Catalog(join(dir, 'warehouse'));
    const get = (table: string, pk: Record<string, unknown>) => {
      const t = catalog.getTable({ database: `site_${SITE}`, table });
      const r = t.reader();
      try {
        const v = r.get(pk);
        return v && Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, v[i])]));
      } finally {
        r.close();
      }
    };
    expect(get('stock', { item: 'A-1', location: 'L1' })).toBeUndefined(); // within budget, not yet committed
    now += 10 * 60_000;
    ingestor.tick();
    expect(get('stock', { item: 'A-1', location: 'L1' })).toMatchObject({ on_hand: 46, inventory_seq: 46, reserved: 3, commerce_seq: 1 });
    expect(get('stock', { item: 'A-0', location: 'L1' })).toMatchObject({ on_hand: 50, inventory_seq: 50 });
    expect(get('work_queue', { job_id: 'J-1' })).toMatchObject({ status: 'blocked', blocked_reason: 'no material', ops_seq: 1 });
    expect(ingestor.deadLetterCount()).toBe(0);
    expect(ingestor.metrics()).toMatch(/tilstand_ingest_events_accepted_total\{site="s1"\} 52/);
    expect(broker.metrics().eventsAcked).toBe(52);
  });
});
