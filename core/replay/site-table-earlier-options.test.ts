// A table of the site's own that an earlier version made with an option value the table store now
// refuses at creation (core/ingest site-tables.ts EARLIER_VALUES: `manifest.compression` 'none',
// `write-buffer-size` 0). The site opens it with a warning; but with no snapshot at the cut (its
// module's first event still pending under its budget) the export copied none of its files, so the replay had to make it
// anew from the definition, which `checkNewTable` refuses: "table 'yard_doors' is not on disk yet
// and cannot be made with it". The export now copies the schema of a table with no snapshot at
// the cut, and the replay opens it as the site did.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TableSchema, Catalog, Table, valueToJson } from '../lsm/index.ts';
import { YARD_BINDING, YARD_CONTRACT, YARD_DOORS } from '../ingest/test-support/yard-doors.ts';
import { DemoEvents, type DemoEvent } from './demo-events.ts';
import { exportFixture, makeCut } from './export.ts';
import { defaultScratchParent, runReplay } from './replay.ts';
import { LiveSite, T0 } from './test-support.ts';

const MIN = 60_000;
const work = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-earlier-options-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const door = (atMs: number, seq: number, id: string, state: string): DemoEvent => ({
  topic: 'tilstand/s1/events/yard/doors',
  payload: Buffer.from(JSON.stringify({ op: 'u', before: null, after: { door_id: id, state }, source: { module: 'yard', stream: 'doors', seq }, ts_ms: atMs, contract: { name: 'yard.doors', version: 1 } })),
  atMs,
});

function rowsOf(t: Table): Record<string, unknown>[] {
  return t.scanRows({}).map((row) => Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, row[i])])));
}

describe("a site's table made by an earlier version with an option value a new table may not have", () => {
  it.each([
    ['manifest.compression', 'none'],
    ['write-buffer-size', '0 b'],
  ])('%s = %j, no snapshot at the cut: the replay opens it as the site did, not as a new table', async (key, value) => {
    const dir = mkdtempSync(join(work, 'site-'));
    // A two-minute budget: the yard event that comes first is still pending at the cut, so nothing has
    // committed the table (the frontier commits of an idle table come only after it).
    const doors = { ...YARD_DOORS, budgetMs: 120_000, options: { ...YARD_DOORS.options, [key]: value } };
    // The table as an earlier version made it, before the site's (simulated) start.
    const earlier = new Catalog(join(dir, 'warehouse'), { clock: () => T0 - MIN });
    earlier.createDatabase('site_s1', true);
    const base = TableSchema.fromSpec({ fields: doors.columns, primaryKeys: doors.primaryKeys, options: YARD_DOORS.options, comment: doors.comment }, 0).toJson();
    earlier.createTable({ database: 'site_s1', table: 'yard_doors' }, new TableSchema({ ...base, options: { ...base.options, [key]: value } }, false));

    const warnings: string[] = [];
    const site = new LiveSite({ dir, own: { tables: [doors], bindings: [YARD_BINDING], contracts: [YARD_CONTRACT] }, onWarning: (m) => warnings.push(m) });
    const cut = T0 + 30_000;
    const until = cut + 3 * MIN;
    let liveDoors: Record<string, unknown>[];
    try {
      expect(warnings.join('\n')).toContain(`option '${key}' = '${value}'`);
      const gen = new DemoEvents({ site: site.site, seed: 21 });
      site.receive([door(T0 + 100, 1, 'D-01', 'free'), ...gen.initial(T0 + 200)]);
      const demo: DemoEvent[] = [];
      for (let i = 0; i < 60; i++) demo.push(...gen.step(T0 + 1000 + i * 1000));
      site.receive(demo);
      await site.advance(cut);
      makeCut(site.catalog, site.database, 'replay-earlier', { clock: site.clock });
      site.receive([door(cut + 20_000, 2, 'D-01', 'occupied'), door(cut + 40_000, 3, 'D-02', 'free')]);
      await site.advance(until);
      site.ingestor.commitAll();
      liveDoors = rowsOf(site.catalog.getTable({ database: site.database, table: 'yard_doors' }));
      site.close();
    } catch (e) {
      site.remove();
      throw e;
    }
    expect(liveDoors).toEqual([
      { door_id: 'D-01', state: 'occupied', yard_seq: 2 },
      { door_id: 'D-02', state: 'free', yard_seq: 3 },
    ]);
    try {
      const fixture = join(work, `fixture-${key}`);
      const m = await exportFixture({ data: dir, tag: 'earlier', untilMs: until, out: fixture });
      expect(m.tables.yard_doors).toMatchObject({ snapshotId: null, journalPosition: null });
      let scratch = '';
      // Was: "fixture config/budgets.json: tables[4].options.<key>: table 'yard_doors' is not on disk yet and cannot be made with it: …".
      const r = await runReplay({ fixture, out: join(work, `run-${key}`), keepScratch: true, onScratch: (d) => void (scratch = d) });
      try {
        expect(r.manifest.ingestFailure).toBeNull();
        expect(r.manifest.counts.events).toBe(m.events.count);
        const t = new Catalog(join(scratch, 'warehouse')).getTable({ database: 'site_s1', table: 'yard_doors' });
        expect(rowsOf(t)).toEqual(liveDoors);
        // The table the site had: its own schema, its option value kept.
        expect(t.schema.id).toBe(0);
        expect(t.schema.options.raw[key]).toBe(value);
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
