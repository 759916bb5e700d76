// The site API (SiteService) on a table of the site's own (config.json `tables` entry with
// `columns`): `tables` lists it with its budget and decision, as "no source" (`fed: false`) while
// no binding writes it; `history` and `diff` read it; the tick's `tables` event names it when a
// commit changes it (the floor UI refreshes its Tables screen on that). A real data directory, the
// module's events through the embedded broker and the site's ingest, as core/site/site-tables.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SEED_BINDINGS } from '../ingest/seed-bindings.ts';
import { publishYardDoors, YARD_BINDING, YARD_CONTRACT, YARD_DOORS } from '../ingest/test-support/yard-doors.ts';
import type { SiteEvent } from './api.ts';
import { session } from './test-support/session.ts';
import { readConfig, writeConfig, type SiteConfig } from './config.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { runMain as run } from './cli/test-support.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-service-site-tables-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const ADMIN = { name: 'kari', pin: '2468' };

const CONTRACT = YARD_CONTRACT;
const DOORS = { ...YARD_DOORS, confirmedBy: 'Kari' };
const BINDING = YARD_BINDING;

/** Commits until yard_doors holds `rows` rows (bounded: 20 s). */
async function untilRows(site: Site, rows: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (let i = 0; i < 400 && Date.now() < deadline; i++) {
    site.ingestor.commitAll();
    const t = site.catalog.getTable({ database: 'site_north', table: 'yard_doors' });
    if (t.latestSnapshot() && t.scanRows().length >= rows) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`yard_doors did not reach ${rows} rows`);
}

describe("the site API on a table of the site's own", () => {
  it('lists it with its budget and decision (no source while unbound), reads and compares it in history, and names it in the tick', { timeout: 90_000 }, async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north', admin: ADMIN });
    const pw = /\): (\S+)$/m.exec((await run(['modules', 'password', '--module', 'yard', '--data', data])).out)![1]!;
    writeFileSync(join(dir, 'yard.doors.v1.json'), JSON.stringify(CONTRACT));
    expect((await run(['contracts', 'add', '--file', join(dir, 'yard.doors.v1.json'), '--data', data])).code).toBe(0);

    // Defined, but no binding writes it yet: listed, "no source", empty in history.
    const base = readConfig(data);
    writeConfig(data, { ...base, tables: [...base.tables, DOORS] } as unknown as SiteConfig);
    let site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    try {
      const s = session();
      await site.service.call('signIn', { user: ADMIN.name, secret: ADMIN.pin }, s);
      const doors = (await site.service.call('tables', {}, s)).find((t) => t.table === 'yard_doors');
      expect(doors).toMatchObject({ table: 'yard_doors', budgetMs: 30_000, decision: DOORS.decision, confirmedBy: 'Kari', fed: false, snapshots: 0 });
      expect(await site.service.call('history', { table: 'yard_doors', at: { latest: true } }, s)).toMatchObject({ table: 'yard_doors', snapshotId: null, columns: ['door_id', 'state', 'yard_seq'], rows: [] });
      expect((await site.service.call('status', {}, s)).tables.find((t) => t.table === 'yard_doors')).toMatchObject({ budgetMs: 30_000, decision: DOORS.decision, fed: false });
    } finally {
      await site.stop();
    }

    // Bound: fed, its rows in history, a comparison between two points, and the tick names it.
    writeConfig(data, { ...readConfig(data), bindings: [...SEED_BINDINGS, BINDING] } as unknown as SiteConfig);
    site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    try {
      const s = session();
      await site.service.call('signIn', { user: ADMIN.name, secret: ADMIN.pin }, s);
      await publishYardDoors(site.mqttUrl, pw, [
        { seq: 1, door: 'D-01', state: 'free' },
        { seq: 2, door: 'D-02', state: 'occupied' },
      ]);
      await untilRows(site, 2);
      const tables = await site.service.call('tables', {}, s);
      expect(tables.map((t) => t.table)).toContain('yard_doors');
      const doors = tables.find((t) => t.table === 'yard_doors')!;
      expect(doors).toMatchObject({ budgetMs: 30_000, decision: DOORS.decision, confirmedBy: 'Kari', fed: true });
      expect(doors.snapshots).toBeGreaterThan(0);
      expect(doors.bytes).toBeGreaterThan(0);
      const first = await site.service.call('history', { table: 'yard_doors', at: { latest: true } }, s);
      expect(first).toMatchObject({ table: 'yard_doors', columns: ['door_id', 'state', 'yard_seq'], types: ['STRING NOT NULL', 'STRING', 'BIGINT'], more: false });
      expect(first.rows).toEqual([
        ['D-01', 'free', 1],
        ['D-02', 'occupied', 2],
      ]);

      const events: SiteEvent[] = [];
      const off = site.service.subscribe((e) => events.push(e));
      try {
        site.service.tick(); // what the tick had not seen yet goes out now; from here on only what changes
        events.length = 0;
        await publishYardDoors(site.mqttUrl, pw, [{ seq: 3, door: 'D-01', state: 'occupied' }]);
        const deadline = Date.now() + 20_000;
        for (let i = 0; i < 400 && Date.now() < deadline && !events.some((e) => e.type === 'tables' && e.tables.includes('yard_doors')); i++) {
          site.ingestor.commitAll();
          site.service.tick();
          await new Promise((r) => setTimeout(r, 50));
        }
      } finally {
        off();
      }
      expect(events.some((e) => e.type === 'tables' && e.tables.includes('yard_doors'))).toBe(true);
      const later = (await site.service.call('tables', {}, s)).find((t) => t.table === 'yard_doors')!;
      expect(later.snapshots).toBeGreaterThan(doors.snapshots);

      const now = await site.service.call('history', { table: 'yard_doors', at: { latest: true } }, s);
      expect(now.rows).toEqual([
        ['D-01', 'occupied', 3],
        ['D-02', 'occupied', 2],
      ]);
      // The earlier point still reads as it was; the comparison shows D-01's update.
      expect((await site.service.call('history', { table: 'yard_doors', at: { snapshotId: first.snapshotId! } }, s)).rows).toEqual(first.rows);
      const d = await site.service.call('diff', { table: 'yard_doors', from: { snapshotId: first.snapshotId! }, to: { latest: true } }, s);
      expect(d.columns).toEqual(['door_id', 'state', 'yard_seq']);
      expect(d.changes).toEqual([
        { kind: '-U', row: ['D-01', 'free', 1] },
        { kind: '+U', row: ['D-01', 'occupied', 3] },
      ]);
    } finally {
      await site.stop();
    }
  });
});
