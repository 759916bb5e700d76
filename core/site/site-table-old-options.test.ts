// A table of the site's own made by an earlier version with an option value the table store now
// refuses at creation and ALTER (core/lsm 47de815: `manifest.compression` not spelled as Avro's
// codec names, a `write-buffer-size` of 0). The site's config.json still gives that very value, so
// its definition matches the table: start and config check go on (nothing is ALTERed), each with a
// warning naming the option and what Java needs. A NEW table given such a value is refused by both,
// naming the option and what is expected.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SEED_BINDINGS } from '../ingest/seed-bindings.ts';
import { YARD_BINDING, YARD_CONTRACT, YARD_DOORS } from '../ingest/test-support/yard-doors.ts';
import { Catalog, TableSchema } from '../lsm/index.ts';
import { dataPaths } from './config.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { runMain as run } from './cli/test-support.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-site-table-old-options-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const OLD = { 'manifest.compression': 'none', 'write-buffer-size': '0 kb' };

/** config.json with `tables` entries added (written as JSON: the site's own config check reads it). */
function addTables(data: string, entries: object[], bindings: object[]): void {
  const path = dataPaths(data).config;
  const c = JSON.parse(readFileSync(path, 'utf8')) as { tables: object[]; bindings: unknown };
  writeFileSync(path, `${JSON.stringify({ ...c, tables: [...c.tables, ...entries], bindings: [...SEED_BINDINGS, ...bindings] }, null, 2)}\n`);
}

/** The table as an earlier version made it from the entry: the schema written as it is, not strictly checked. */
function makeAsBefore(data: string, entry: typeof YARD_DOORS & { options: Record<string, string> }): void {
  const catalog = new Catalog(join(data, 'warehouse'));
  catalog.createDatabase('site_north', true);
  const { options, ...rest } = entry;
  const base = TableSchema.fromSpec({ fields: rest.columns, primaryKeys: rest.primaryKeys, options: YARD_DOORS.options, comment: rest.comment }, Date.now()).toJson();
  catalog.createTable({ database: 'site_north', table: entry.table }, new TableSchema({ ...base, options: { ...base.options, ...options } }, false));
}

describe("a site table made with an option value the store no longer takes at creation", () => {
  it('starts and passes config check with a warning when the table has that very value; a new table with it is refused by both', { timeout: 90_000 }, async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north' });
    writeFileSync(join(dir, 'yard.doors.v1.json'), JSON.stringify(YARD_CONTRACT));
    expect((await run(['contracts', 'add', '--file', join(dir, 'yard.doors.v1.json'), '--data', data])).code).toBe(0);
    const doors = { ...YARD_DOORS, options: { ...YARD_DOORS.options, ...OLD } };
    makeAsBefore(data, doors);
    addTables(data, [doors], [YARD_BINDING]);

    const check = await run(['config', 'check', '--data', data]);
    expect(check.code, check.err).toBe(0);
    expect(check.out).toContain("table yard_doors (the site's own): on disk as defined");
    expect(check.out).toMatch(/option 'manifest\.compression' = 'none'.*'null'/);
    expect(check.out).toMatch(/option 'write-buffer-size' = '0 kb'.*at least 1 b/);

    const logged: string[] = [];
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: (m: string) => logged.push(m) });
    await site.stop();
    const warning = logged.filter((m) => m.includes('yard_doors') && m.includes("option 'manifest.compression' = 'none'"));
    expect(warning.length, logged.join('\n')).toBe(1);
    expect(warning[0]).toContain("'null'");
    expect(logged.some((m) => m.includes("option 'write-buffer-size' = '0 kb'") && m.includes('at least 1 b'))).toBe(true);
    // Nothing was ALTERed: the table keeps the schema an earlier version made.
    const table = new Catalog(join(data, 'warehouse')).getTable({ database: 'site_north', table: 'yard_doors' });
    expect(table.schema.id).toBe(0);
    expect(table.schema.options.raw['manifest.compression']).toBe('none');

    // A new table given such a value: refused by config check and by start, naming the option.
    addTables(data, [{ ...doors, table: 'yard_gates', options: { ...YARD_DOORS.options, 'manifest.compression': 'Deflate' } }], [YARD_BINDING]);
    const refused = await run(['config', 'check', '--data', data]);
    expect(refused.code).not.toBe(0);
    expect(refused.err).toMatch(/tables\[\d+\]\.options\.manifest\.compression.*expected one of 'deflate', 'snappy', 'null'.*got 'Deflate'/);
    await expect(Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false })).rejects.toThrow(/tables\[\d+\]\.options\.manifest\.compression.*got 'Deflate'/);
    expect(new Catalog(join(data, 'warehouse')).tableExists({ database: 'site_north', table: 'yard_gates' })).toBe(false);
  });
});
