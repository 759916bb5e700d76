// A database is a directory `<name>.db/` (Paimon's filesystem catalog lists directories only):
// a file whose name ends in .db (a data directory's journal.db and site.db, when `tilstand table
// list` was given the data directory instead of its warehouse) is no database.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-catalog-dbdirs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Catalog databases', () => {
  it('are the <name>.db directories, not files named so', () => {
    mkdirSync(join(dir, 'sales.db'));
    writeFileSync(join(dir, 'journal.db'), 'not a database\n');
    writeFileSync(join(dir, 'site.db'), 'not a database\n');
    const catalog = new Catalog(dir);
    expect(catalog.listDatabases()).toEqual(['sales']);
    expect(catalog.databaseExists('sales')).toBe(true);
    expect(catalog.databaseExists('journal')).toBe(false);
  });
});
