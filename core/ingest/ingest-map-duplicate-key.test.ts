// An event whose MAP value comes as [key, value] pairs with a key twice
// (`source.attrs: [["w",1],["w",2]]` bound to a MAP column): valueFromJson kept the last pair and
// the row was written with {w: 2}, nothing said. Now the conversion refuses it (InvalidArgument
// naming the column and the key), and the Ingestor turns that into an `unfit_for_table` dead
// letter with that reason, as any value the table cannot take; the events around it go on.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog, valueToJson } from '../lsm/index.ts';
import type { Binding } from './binding.ts';
import { ContractRegistry } from './contracts.ts';
import { Ingestor } from './ingestor.ts';
import { Journal } from './journal.ts';
import { SEED_CONTRACTS } from './seed-contracts.ts';
import type { TableDefinition } from './seed-tables.ts';

const T0 = Date.UTC(2026, 11, 5, 8, 0, 0);
const TOPIC = 'tilstand/s1/events/inventory/attrs';

const ATTRS: TableDefinition = {
  name: 'item_attrs',
  fields: [
    { id: 0, name: 'item', type: 'STRING NOT NULL' },
    { id: 1, name: 'qty', type: 'INT' },
    { id: 2, name: 'attrs', type: 'MAP<STRING, INT>' },
  ],
  partitionKeys: [],
  primaryKeys: ['item'],
  options: { bucket: '1', 'merge-engine': 'deduplicate' },
};
const TO_ATTRS: Binding = { name: 'inventory.attrs→item_attrs', topic: 'tilstand/+/events/inventory/attrs', contract: 'inventory.stock', table: 'item_attrs', columns: { item: 'after.item', qty: 'after.qty', attrs: 'source.attrs' } };

let dir: string;
let journal: Journal;
let ingestor: Ingestor | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-ingest-map-dup-'));
  journal = Journal.open(dir);
});

afterEach(() => {
  ingestor?.abandon();
  ingestor = undefined;
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

const event = (seq: number, item: string, attrs: unknown) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after: { item, location: 'L1', qty: seq }, source: { module: 'inventory', stream: 'attrs', seq, attrs }, ts_ms: T0, contract: { name: 'inventory.stock', version: 1 } }));

function rows(): Record<string, unknown>[] {
  const t = new Catalog(join(dir, 'warehouse')).getTable({ database: 'site_s1', table: 'item_attrs' });
  const r = t.reader();
  try {
    return [...r.scan()].map((values) => Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, values[i])])));
  } finally {
    r.close();
  }
}

describe('ingest: a MAP value with a key given twice', () => {
  it('becomes an unfit_for_table dead letter naming the column and the key; the events around it are written', async () => {
    const contracts = new ContractRegistry(join(dir, 'contracts'));
    for (const c of SEED_CONTRACTS) contracts.register(c);
    ingestor = Ingestor.open({
      site: 's1',
      catalog: new Catalog(join(dir, 'warehouse')),
      database: 'site_s1',
      journal,
      contracts,
      bindings: [TO_ATTRS],
      tables: [ATTRS],
      budgets: [{ table: 'item_attrs', budgetMs: 60_000, decision: 'test', confirmedBy: 'test' }],
      clock: () => T0,
      publishResync: () => undefined,
    });
    await ingestor.accept(TOPIC, event(1, 'A', [['w', 1], ['h', 2]]));
    const bad = event(2, 'B', [['w', 1], ['h', 2], ['w', 3]]); // was written as {w: 3, h: 2}
    const position = await ingestor.accept(TOPIC, bad);
    await ingestor.accept(TOPIC, event(3, 'C', { w: 4 }));
    ingestor.commitAll();

    expect(rows()).toEqual([
      { item: 'A', qty: 1, attrs: { w: 1, h: 2 } },
      { item: 'C', qty: 3, attrs: { w: 4 } },
    ]);
    const letters = ingestor.listDeadLetters();
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({
      position,
      reason: 'unfit_for_table',
      path: 'source.attrs',
      bindings: ['inventory.attrs→item_attrs'],
      module: 'inventory',
      stream: 'attrs',
      seq: 2,
    });
    expect(letters[0]!.detail).toBe(`binding 'inventory.attrs→item_attrs': source.attrs → column 'attrs' (MAP<STRING, INT>): key "w" is given twice; expected each key once`);
    expect(letters[0]!.payload.equals(bad)).toBe(true);
  });
});
