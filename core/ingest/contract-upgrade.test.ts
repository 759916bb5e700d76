// Modules and Tilstand upgrade independently (CONTRACTS.md): a binding is checked against a
// contract's latest version, and an event of an older version (a module not yet upgraded) is read
// as the latest, so a binding may map a field the latest version added with a default.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog, valueToJson } from '../lsm/index.ts';
import type { Binding } from './binding.ts';
import { ContractRegistry } from './contracts.ts';
import { Ingestor } from './ingestor.ts';
import { Journal } from './journal.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { INVENTORY_STOCK, SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES, type TableDefinition } from './seed-tables.ts';

const SITE = 's1';
const DB = 'site_s1';
const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);
let dir: string;
let journal: Journal;
let contracts: ContractRegistry;
const open: Ingestor[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-contract-upgrade-'));
  journal = Journal.open(dir);
  contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
});
afterEach(() => {
  for (const i of open.splice(0)) i.abandon();
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

const NOTES: TableDefinition = {
  name: 'notes',
  fields: [
    { id: 0, name: 'item', type: 'STRING NOT NULL' },
    { id: 1, name: 'qty', type: 'INT' },
    { id: 2, name: 'note', type: 'STRING' },
  ],
  partitionKeys: [],
  primaryKeys: ['item'],
  options: { bucket: '1', 'merge-engine': 'deduplicate' },
};
const TO_NOTES: Binding = { name: 'inventory→notes', topic: 'tilstand/+/events/inventory/notes', contract: 'inventory.stock', table: 'notes', columns: { item: 'after.item', qty: 'after.qty', note: 'after.note' } };

describe('an event of an older contract version under a binding of the latest', () => {
  it('maps a field the latest version added with a default to that default', async () => {
    // v2 adds `note` with a default: FULL_TRANSITIVE accepts it, so v1 data is readable as v2.
    contracts.register({ ...INVENTORY_STOCK, version: 2, fields: [...INVENTORY_STOCK.fields, { name: 'note', type: 'STRING', default: null }] });
    const i = Ingestor.open({
      site: SITE, catalog: new Catalog(join(dir, 'warehouse')), database: DB, journal, contracts,
      bindings: [...SEED_BINDINGS, TO_NOTES], tables: [...SEED_TABLES, NOTES],
      budgets: [{ table: 'notes', budgetMs: 60_000, decision: 'test', confirmedBy: 'test' }], clock: () => T0,
    });
    open.push(i);
    // The inventory module still publishes v1 (modules and Tilstand upgrade independently).
    const payload = Buffer.from(JSON.stringify({ op: 'u', before: null, after: { item: 'A-1', location: 'L1', qty: 3 }, source: { module: 'inventory', stream: 'notes', seq: 1 }, ts_ms: T0, contract: { name: 'inventory.stock', version: 1 } }));
    await i.accept(`tilstand/${SITE}/events/inventory/notes`, payload);
    i.commitAll();
    const letters = i.listDeadLetters().map((d) => `${d.reason}: ${d.detail}`);
    const t = new Catalog(join(dir, 'warehouse')).getTable({ database: DB, table: 'notes' });
    const r = t.reader();
    const got = r.get({ item: 'A-1' });
    r.close();
    expect({ letters, row: got && t.schema.fields.map((f, k) => valueToJson(f.type, got[k])) }).toEqual({ letters: [], row: ['A-1', 3, null] });
  });
});
