// The site API's stock listing over a stock table of several buckets (one made before init, as a
// restore or another tool may leave it): the scan yields each bucket's rows in key order, one
// bucket after another, so the rows shown must be the first `limit` of the whole table in key
// order, not the first `limit` the scan met.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { STOCK_TABLE } from '../ingest/seed-tables.ts';
import { dataPaths } from './config.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { session } from './test-support/session.ts';

let dir: string;
let site: Site;
const ITEMS = 60;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-stock-order-'));
  const data = join(dir, 'data');
  const p = dataPaths(data, 'order');
  const catalog = new Catalog(p.warehouse);
  catalog.createDatabase(p.database!);
  const t = catalog.createTable(
    { database: p.database!, table: STOCK_TABLE.name },
    {
      fields: STOCK_TABLE.fields.map((f) => ({ name: f.name, type: f.type })),
      primaryKeys: [...STOCK_TABLE.primaryKeys],
      options: { ...STOCK_TABLE.options, bucket: '4' },
    },
  );
  const w = t.newWriter({ commitUser: 'test' });
  // Every third item under its reorder point (the default, 5), so `below` cuts a filtered list too.
  for (let i = 0; i < ITEMS; i++) {
    const item = `ITEM-${String(i).padStart(3, '0')}`;
    for (const location of ['A', 'B']) w.writeRecord({ item, location, on_hand: i % 3 === 0 ? 1 : 50, inventory_seq: 1n });
  }
  w.commit();
  w.close();
  expect(t.buckets(t.latestSnapshot()!).length, 'the rows are spread over several buckets').toBeGreaterThan(1);
  await initDataDir({ data, site: 'order', admin: { name: 'Ada', pin: '1234' }, scrypt: { N: 1024, r: 8, p: 1 } });
  site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
}, 60_000);

afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const key = (r: { item: string; location: string }) => `${r.item}|${r.location}`;

it('lists the first rows in key order of a stock table of several buckets, not the first the scan met', async () => {
  const s = session();
  await site.service.call('signIn', { user: 'Ada', secret: '1234' }, s);
  const all = await site.service.call('stock', { limit: 10_000 }, s);
  expect(all).toHaveLength(ITEMS * 2);
  const sorted = all.map(key);
  expect(sorted).toEqual([...sorted].sort());
  for (const limit of [1, 7, 10, 33, ITEMS * 2 - 1]) {
    expect((await site.service.call('stock', { limit }, s)).map(key), `limit ${limit}`).toEqual(sorted.slice(0, limit));
  }
  const below = all.filter((r) => r.below_reorder_point).map(key);
  expect(below).toHaveLength(ITEMS / 3 * 2);
  expect((await site.service.call('stock', { below: true, limit: 5 }, s)).map(key)).toEqual(below.slice(0, 5));
  // A search with a limit: the matching rows in key order.
  const ones = sorted.filter((k) => k.startsWith('ITEM-01'));
  expect((await site.service.call('stock', { search: 'item-01', limit: 4 }, s)).map(key)).toEqual(ones.slice(0, 4));
});
