// KeptTables.retain: a caller that lists the database's tables and asks only for those listed
// (core/sync's engine) never asks for a table that was dropped, so `get` never finds it gone;
// `retain(listed)` forgets it. A table listed again later is opened afresh.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { KeptTables } from './kept-tables.ts';

const root = mkdtempSync(join(tmpdir(), 'tilstand-kept-tables-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('retain forgets the tables no longer listed (dropped by another process), and keeps the others as they are', () => {
  const catalog = new Catalog(root);
  catalog.createDatabase('db');
  const spec = { fields: [{ name: 'k', type: 'STRING NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } };
  catalog.createTable({ database: 'db', table: 'a' }, spec);
  catalog.createTable({ database: 'db', table: 'b' }, spec);
  const kept = new KeptTables(catalog, 'db');
  const a = kept.get('a');
  expect(kept.get('b')).toBeDefined();
  expect(kept.keptNames().sort()).toEqual(['a', 'b']);
  new Catalog(root).dropTable({ database: 'db', table: 'b' });
  kept.retain(catalog.listTables('db'));
  expect(kept.keptNames()).toEqual(['a']);
  expect(kept.get('a'), 'a listed table stays the same Table').toBe(a);
  kept.retain([]);
  expect(kept.keptNames()).toEqual([]);
  expect(kept.get('a'), 'asked for again: opened afresh').not.toBe(a);
});
