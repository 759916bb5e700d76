// A site table an earlier version made with an option value core/lsm now refuses at creation and
// ALTER (47de815: `manifest.compression` not spelled as Avro's codec names, `write-buffer-size` 0).
// Its definition in config.json still gives that very value: it is read (`parseTableDefinition`),
// matches the table (nothing ALTERed) and the Ingestor opens it, telling the site's log which
// option and what Java needs. A new table given such a value, or an ALTER to one, is refused, naming
// the entry's option and what is expected.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog, TableSchema } from '../lsm/index.ts';
import { ContractRegistry } from './contracts.ts';
import { Ingestor } from './ingestor.ts';
import { Journal } from './journal.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES } from './seed-tables.ts';
import { checkNewTable, evolveToDefinition, parseTableDefinition, TableDefinitionError } from './site-tables.ts';
import { YARD_DOORS } from './test-support/yard-doors.ts';

const ID = { database: 'site_s1', table: 'yard_doors' };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-site-tables-earlier-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The table as an earlier version made it: the definition's schema with `options` written as given, not strictly checked. */
function madeBefore(catalog: Catalog, options: Record<string, string>) {
  catalog.createDatabase(ID.database, true);
  const base = TableSchema.fromSpec({ fields: YARD_DOORS.columns, primaryKeys: YARD_DOORS.primaryKeys, options: YARD_DOORS.options, comment: YARD_DOORS.comment }, 0).toJson();
  return catalog.createTable(ID, new TableSchema({ ...base, options: { ...base.options, ...options } }, false));
}

const entry = (options: Record<string, string>) => ({ ...YARD_DOORS, options: { ...YARD_DOORS.options, ...options } });

describe('a site table option value only an earlier version took', () => {
  it.each([
    ['manifest.compression', 'none', /expected one of 'deflate', 'snappy', 'null'.*got 'none'; use 'null'/],
    ['manifest.compression', 'Deflate', /expected one of 'deflate', 'snappy', 'null'.*got 'Deflate'/],
    ['write-buffer-size', '0 kb', /expected a size of at least 1 b.*got '0 kb'/],
  ])('%s = %j: the table made with it matches (a warning, no ALTER); a new table or an ALTER to it is refused', (key, value, why) => {
    const def = parseTableDefinition(entry({ [key]: value }), 'tables[5]')!;
    const catalog = new Catalog(join(dir, 'warehouse'));
    // New: refused, naming the entry's option and what is expected.
    let refused: unknown;
    try {
      checkNewTable(def);
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(TableDefinitionError);
    expect((refused as TableDefinitionError).path).toBe(`tables[5].options.${key}`);
    expect((refused as Error).message).toMatch(why);

    // Made with that very value: matches, one warning naming the option, nothing to change.
    const table = madeBefore(catalog, { [key]: value });
    const warnings: string[] = [];
    expect(evolveToDefinition(table, def, false, (m) => warnings.push(m))).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`option '${key}' = '${value}'`);
    expect(warnings[0]).toMatch(why);

    // A table without it (or deflate, the store's default): the definition's value would be set by an ALTER, refused as before.
    rmSync(join(dir, 'warehouse'), { recursive: true, force: true });
    const plain = madeBefore(new Catalog(join(dir, 'warehouse')), {});
    expect(() => evolveToDefinition(plain, def, false)).toThrow(new RegExp(`option '${key.replace('.', '\\.')}' is (not set|"[^"]*") in the table and "${value}" in the definition: .*${why.source}`));
  });

  // The definition leaves the option out: the store fills in manifest.compression, so a left-out
  // one is not compared (FILLED_OPTIONS) and the table keeps 'none' (Java fails on it): said as for
  // a definition that gives the value, not silently kept. write-buffer-size left out is removed (ALTER).
  it('a definition that leaves manifest.compression out keeps the table\'s earlier value with the warning', () => {
    const table = madeBefore(new Catalog(join(dir, 'warehouse')), { 'manifest.compression': 'none' });
    const def = parseTableDefinition(entry({}), 'tables[5]')!;
    expect(def.options['manifest.compression']).toBeUndefined();
    const warnings: string[] = [];
    expect(evolveToDefinition(table, def, false, (m) => warnings.push(m))).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("option 'manifest.compression' = 'none'");
    expect(warnings[0]).toMatch(/use 'null'/);

    rmSync(join(dir, 'warehouse'), { recursive: true, force: true });
    const zero = madeBefore(new Catalog(join(dir, 'warehouse')), { 'write-buffer-size': '0' });
    const removed: string[] = [];
    expect(evolveToDefinition(zero, def, false, (m) => removed.push(m))).toEqual([{ kind: 'removeOption', key: 'write-buffer-size' }]);
    expect(removed).toEqual([]);
  });

  it('opens in the Ingestor with the warning in its log and the schema untouched; a new one is refused before any table is made', () => {
    const journal = Journal.open(dir);
    const contracts = new ContractRegistry(join(dir, 'contracts'));
    for (const c of SEED_CONTRACTS) contracts.register(c);
    const catalog = new Catalog(join(dir, 'warehouse'));
    const open = (defs: unknown[], warnings: string[]) =>
      Ingestor.open({ site: 's1', catalog, database: ID.database, journal, contracts, bindings: [...SEED_BINDINGS], tables: [...SEED_TABLES, ...(defs as typeof SEED_TABLES)], budgets: [{ table: 'yard_doors', budgetMs: 30_000, decision: 'test', confirmedBy: 'test' }, { table: 'yard_gates', budgetMs: 30_000, decision: 'test', confirmedBy: 'test' }].filter((b) => defs.some((d) => (d as { name: string }).name === b.table)), publishResync: () => {}, onWarning: (m) => warnings.push(m) });
    try {
      const old = { 'manifest.compression': 'none' };
      madeBefore(catalog, old);
      const warnings: string[] = [];
      const doors = parseTableDefinition(entry(old), 'tables[5]')!;
      open([doors], warnings).abandon();
      expect(warnings.filter((m) => m.startsWith("ingest: table yard_doors (tables[5]): option 'manifest.compression' = 'none'"))).toHaveLength(1);
      expect(catalog.getTable(ID).schema.id).toBe(0);

      const gates = parseTableDefinition({ ...entry({ 'write-buffer-size': '0' }), table: 'yard_gates' }, 'tables[6]')!;
      expect(() => open([doors, gates], [])).toThrow(/^tables\[6\]\.options\.write-buffer-size: table 'yard_gates' is not on disk yet/);
      expect(catalog.tableExists({ database: ID.database, table: 'yard_gates' })).toBe(false);
    } finally {
      journal.close();
    }
  });
});
