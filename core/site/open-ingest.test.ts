// openIngest opens the site's catalog with the config's memory settings: every table the
// Ingestor opens draws on one run-cache budget of `memory.tableCacheBytes` and flushes its write
// buffer at `memory.writeBufferBytes`.

import { mkdtempSync, rmSync } from 'node:fs';
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
});
