// openIngest opens the site's catalog with the config's memory settings: every table the
// Ingestor opens draws on one run-cache budget of `memory.tableCacheBytes` and flushes its write
// buffer at `memory.writeBufferBytes`.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from './config.ts';
import { openIngest } from './open-ingest.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-open-ingest-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('openIngest', () => {
  it("gives the site's tables one cache budget and the write-buffer size of config.json", () => {
    const config = parseConfig({ site: 'mem', memory: { tableCacheBytes: 48 * 1024 * 1024, writeBufferBytes: 3 * 1024 * 1024 } });
    const parts = openIngest(dir, config);
    try {
      expect(parts.catalog.cacheBudget.capacityBytes).toBe(48 * 1024 * 1024);
      const db = `site_${config.site}`;
      const tables = parts.catalog.listTables(db).map((t) => parts.catalog.getTable({ database: db, table: t }));
      expect(tables.map((t) => t.name).sort()).toEqual(['site_mem.dead_letters', 'site_mem.resources', 'site_mem.stock', 'site_mem.work_queue']);
      for (const t of tables) {
        expect(t.cache.budget, t.name).toBe(parts.catalog.cacheBudget);
        expect(t.schema.options.writeBufferBytes, t.name).toBe(3 * 1024 * 1024);
        expect(t.schema.options.raw['write-buffer-size'], t.name).toBeUndefined(); // not written into the schema
      }
    } finally {
      parts.ingestor.close();
      parts.journal.close();
    }
  });

  it('on a site `tilstand restore` rebuilt, an empty journal continues after every table: a table HQ did not have does not make the others skip the resent events', async () => {
    const config = parseConfig({ site: 'r1' });
    const db = `site_${config.site}`;
    const event = (seq: number, qty: number) =>
      Buffer.from(JSON.stringify({ op: 'u', before: null, after: { item: 'A-1', location: 'L1', qty }, source: { module: 'inventory', stream: 'stock', seq }, ts_ms: Date.now(), contract: { name: 'inventory.stock', version: 1 } }));
    const topic = `tilstand/${config.site}/events/inventory/stock`;
    // The old PC: three events, every table committed through position 3.
    let parts = openIngest(dir, config);
    for (let s = 1; s <= 3; s++) await parts.ingestor.accept(topic, event(s, s));
    parts.ingestor.commitAll();
    parts.ingestor.close();
    parts.journal.close();
    // The new PC: the tables from HQ but one (resources, say, added to config.json after HQ's
    // last copy), a fresh journal.db, and the note `tilstand restore` leaves.
    rmSync(join(dir, 'warehouse', `${db}.db`, 'resources'), { recursive: true, force: true });
    for (const f of ['journal.db', 'journal.db-wal', 'journal.db-shm']) rmSync(join(dir, f), { force: true });
    writeFileSync(join(dir, 'restore-note.json'), JSON.stringify({ site: config.site, restoredAtMs: 1, hq: '/hq', tables: {}, resync: [] }));
    parts = openIngest(dir, config);
    try {
      // inventory resends after its high-water mark: seq 4, which must reach stock.
      const position = await parts.ingestor.accept(topic, event(4, 40));
      parts.ingestor.commitAll();
      expect(parts.ingestor.health().failure).toBeNull();
      const stock = parts.catalog.getTable({ database: db, table: 'stock' });
      const r = stock.reader();
      try {
        const onHand = stock.schema.fields.findIndex((f) => f.name === 'on_hand');
        expect(r.get({ item: 'A-1', location: 'L1' })?.[onHand]).toBe(40);
      } finally {
        r.close();
      }
      expect(position).toBe(4n);
    } finally {
      parts.ingestor.close();
      parts.journal.close();
    }
  });
});
