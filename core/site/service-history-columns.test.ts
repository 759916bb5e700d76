// The site API's `history` and `diff` name the table's key and sequence columns beside its
// columns: the History screen shows the key first and the sequence columns last, as the inbox's
// evidence does (renderer components/common.tsx `keyFirstColumns`). Stock is the case that needs
// it: its sequence columns stand between the columns they order (on_hand, inventory_seq, reserved…).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { session } from './test-support/session.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-service-history-columns-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const ADMIN = { name: 'kari', pin: '2468' };

describe("the site API's history and diff", () => {
  it('name the key and the sequence columns of the table read', { timeout: 60_000 }, async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north', admin: ADMIN, scrypt: { N: 1024, r: 8, p: 1 } });
    const stock = new Catalog(join(data, 'warehouse')).getTable({ database: 'site_north', table: 'stock' });
    for (const [onHand, seq] of [[7, 1n], [9, 2n]] as const) {
      const w = stock.newWriter();
      w.writeRecord({ item: 'ITEM-1', location: 'A-01', on_hand: onHand, inventory_seq: seq });
      w.commit();
      w.close();
    }
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    try {
      const s = session();
      await site.service.call('signIn', { user: ADMIN.name, secret: ADMIN.pin }, s);
      const h = await site.service.call('history', { table: 'stock', at: { snapshotId: 1 } }, s);
      expect(h.columns).toEqual(['item', 'location', 'on_hand', 'inventory_seq', 'reserved', 'commerce_seq', 'inbound', 'procurement_seq']);
      expect(h.keyColumns).toEqual(['item', 'location']);
      expect([...h.sequenceColumns!].sort()).toEqual(['commerce_seq', 'inventory_seq', 'procurement_seq']);
      const d = await site.service.call('diff', { table: 'stock', from: { snapshotId: 1 }, to: { latest: true } }, s);
      expect(d.changes.map((c) => c.kind)).toEqual(['-U', '+U']);
      expect(d.keyColumns).toEqual(['item', 'location']);
      expect([...d.sequenceColumns!].sort()).toEqual(['commerce_seq', 'inventory_seq', 'procurement_seq']);
    } finally {
      await site.stop();
    }
  });
});
