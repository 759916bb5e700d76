// A binding whose sequenceGroup, kinds, enrich or columns has the wrong shape is refused at open
// with a BindingError naming the option and what was expected. Before, `sequenceGroup` without
// `columns` stopped the start with a bare "sg.columns is not iterable", and a string where an
// object or a list belongs was read character by character ("sequence-group column 'o' is not a
// column", "kinds: '0' is not an op").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { BindingError, type Binding } from './binding.ts';
import { ContractRegistry } from './contracts.ts';
import { Ingestor } from './ingestor.ts';
import { Journal } from './journal.ts';
import { INVENTORY_TO_STOCK, SEED_BINDINGS } from './seed-bindings.ts';
import { SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES } from './seed-tables.ts';

let dir: string;
let journal: Journal;
let contracts: ContractRegistry;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-binding-shape-'));
  journal = Journal.open(dir);
  contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
});

afterEach(() => {
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Opens an Ingestor with inventory's stock binding replaced by `bad`; returns what it threw. */
function openWith(bad: unknown): unknown {
  const bindings = SEED_BINDINGS.map((b) => (b === INVENTORY_TO_STOCK ? (bad as Binding) : b));
  try {
    const i = Ingestor.open({
      site: 's1',
      catalog: new Catalog(join(dir, 'warehouse')),
      database: 'site_s1',
      journal,
      contracts,
      bindings,
      tables: [...SEED_TABLES],
      budgets: [],
      publishResync: () => {},
    });
    i.abandon();
    return undefined;
  } catch (e) {
    return e;
  }
}

describe('a binding of the wrong shape', () => {
  const b = INVENTORY_TO_STOCK;
  const field = b.sequenceGroup!.field;
  it.each([
    ['sequenceGroup without columns', { ...b, sequenceGroup: { field } }, /sequenceGroup\.columns: expected a list of column names, got undefined/],
    ['sequenceGroup.columns as text', { ...b, sequenceGroup: { field, columns: 'on_hand' } }, /sequenceGroup\.columns: expected a list of column names, got a string "on_hand"/],
    ['sequenceGroup as text', { ...b, sequenceGroup: field }, /sequenceGroup: expected an object \{field, columns\}, got a string "inventory_seq"/],
    ['sequenceGroup.field missing', { ...b, sequenceGroup: { columns: ['on_hand'] } }, /sequenceGroup\.field: expected a column name, got undefined/],
    ['kinds as text', { ...b, kinds: 'c' }, /kinds: expected an object of op → row kind, got a string "c"/],
    ['enrich.key as text', { ...b, enrich: { table: 'resources', key: 'resource_id', columns: { on_hand: 'x' } } }, /enrich\.key: expected an object of column → path, got a string "resource_id"/],
    ['enrich.columns as a list', { ...b, enrich: { table: 'resources', key: { resource_id: 'after.item' }, columns: ['on_hand'] } }, /enrich\.columns: expected an object of column → column, got an array/],
    ['columns as a list', { ...b, columns: ['item', 'location'] }, /columns: expected an object of column → path, got an array/],
  ])('%s: refused at open, naming the option and what was expected', (_, bad, message) => {
    const e = openWith(bad);
    expect(e).toBeInstanceOf(BindingError);
    expect((e as Error).message).toMatch(message);
    expect((e as Error).message).toContain("binding 'inventory→stock'");
  });

  it('the seed bindings still open', () => {
    expect(openWith(b)).toBeUndefined();
  });
});

describe('a topic filter that can match no event topic', () => {
  // Accepted before: a valid MQTT filter, so the binding opened and fed nothing; every event of
  // the stream became a no_binding dead letter, with nothing saying that the filter was the fault.
  it.each([
    ['a misspelt level', 'tilstand/+/event/inventory/stock', "level 3 is 'event', expected 'events'"],
    ['a stream name no topic can have', 'tilstand/+/events/inventory/stock.levels', `level 5 is 'stock.levels', expected a name matching`],
    ['a level too many', 'tilstand/+/events/inventory/stock/all', 'it has 6 levels, an event topic 5'],
    ['a level too few', 'tilstand/+/events/inventory', 'it has 4 levels, an event topic 5'],
  ])('%s is refused at open, naming the filter and what was expected', (_, topic, why) => {
    const e = openWith({ ...INVENTORY_TO_STOCK, topic });
    expect(e).toBeInstanceOf(BindingError);
    expect((e as Error).message).toContain(`binding 'inventory→stock': topic filter '${topic}' can match no event topic (tilstand/<site>/events/<module>/<stream>): ${why}`);
  });

  it.each(['tilstand/+/events/inventory/stock', 'tilstand/s1/events/inventory/stock', 'tilstand/+/events/inventory/stock/#'])('%s opens', (topic) => {
    expect(openWith({ ...INVENTORY_TO_STOCK, topic })).toBeUndefined();
  });
});
