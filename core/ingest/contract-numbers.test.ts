// JSON numbers that JSON.parse cannot read exactly, for BIGINT and DECIMAL fields, through the
// real Ingestor on real files. A DECIMAL sent as the number 1234567890123456.7 was read as
// 1234567890123456.8 (12345678901234567.89 as 12345678901234568) and applied so, without a word; a BIGINT beyond 2^53 was refused with a detail
// quoting the rounded value ("got 9007199254740992" for 9007199254740993) as if the module had
// sent it. Both are now contract violations saying to send the value as a string, and the
// string forms are applied exactly.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog, valueToJson } from '../lsm/index.ts';
import type { Binding } from './binding.ts';
import { ContractRegistry, type Contract } from './contracts.ts';
import { Ingestor } from './ingestor.ts';
import { Journal } from './journal.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES } from './seed-tables.ts';
import { parseTableDefinition } from './site-tables.ts';

const SITE = 's1';
const DB = 'site_s1';
const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);

const WEIGHTS: Contract = {
  name: 'yard.weights',
  version: 1,
  compatibility: 'FULL_TRANSITIVE',
  fields: [
    { name: 'id', type: 'STRING NOT NULL' },
    { name: 'grams', type: 'BIGINT' },
    { name: 'price', type: 'DECIMAL(20, 2)' },
  ],
};
const TABLE = {
  table: 'yard_weights',
  budgetMs: 30_000,
  decision: 'test',
  confirmedBy: 'test',
  columns: [
    { name: 'id', type: 'STRING NOT NULL' },
    { name: 'grams', type: 'BIGINT' },
    { name: 'price', type: 'DECIMAL(20, 2)' },
    { name: 'yard_seq', type: 'BIGINT' },
  ],
  primaryKeys: ['id'],
  options: { 'merge-engine': 'deduplicate', 'sequence.field': 'yard_seq' },
};
const BINDING: Binding = {
  name: 'yard.weights→yard_weights',
  topic: 'tilstand/+/events/yard/weights',
  contract: 'yard.weights',
  table: 'yard_weights',
  columns: { id: 'after.id', grams: 'after.grams', price: 'after.price', yard_seq: 'source.seq' },
};
const TOPIC = `tilstand/${SITE}/events/yard/weights`;

let dir: string;
let journal: Journal;
let ingestor: Ingestor | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-contract-numbers-'));
  journal = Journal.open(dir);
});

afterEach(() => {
  ingestor?.abandon();
  ingestor = undefined;
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(): Ingestor {
  const contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of [...SEED_CONTRACTS, WEIGHTS]) contracts.register(c);
  ingestor = Ingestor.open({
    site: SITE,
    catalog: new Catalog(join(dir, 'warehouse')),
    database: DB,
    journal,
    contracts,
    bindings: [...SEED_BINDINGS, BINDING],
    tables: [...SEED_TABLES, parseTableDefinition(TABLE, 'tables[0]')!],
    budgets: [{ table: 'yard_weights', budgetMs: 30_000, decision: 'test', confirmedBy: 'test' }],
    clock: () => T0,
    publishResync: () => {},
  });
  return ingestor;
}

/** The event as its module's JSON text, `after` given as raw JSON text (numbers as written). */
const event = (seq: number, afterJson: string) =>
  Buffer.from(
    `{"op":"c","before":null,"after":${afterJson},"source":{"module":"yard","stream":"weights","seq":${seq}},"ts_ms":${T0},"contract":{"name":"yard.weights","version":1}}`,
  );

function row(id: string): Record<string, unknown> | undefined {
  const t = new Catalog(join(dir, 'warehouse')).getTable({ database: DB, table: 'yard_weights' });
  const r = t.reader();
  try {
    const values = r.get({ id });
    return values && Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, values[i])]));
  } finally {
    r.close();
  }
}

describe('numbers JSON cannot carry exactly, for BIGINT and DECIMAL fields', () => {
  it('a DECIMAL as a number of more than 15 significant digits is a contract violation naming the field, not a rounded row', async () => {
    const i = start();
    await i.accept(TOPIC, event(1, '{"id":"w1","grams":1,"price":1234567890123456.7}'));
    await i.accept(TOPIC, event(2, '{"id":"w0","grams":1,"price":12345678901234567.89}'));
    i.commitAll();
    expect(row('w1')).toBeUndefined();
    expect(row('w0')).toBeUndefined();
    const letters = i.listDeadLetters();
    expect(letters.map((d) => [d.reason, d.path, d.seq])).toEqual([['contract_violation', 'after.price', 1], ['contract_violation', 'after.price', 2]]);
    expect(letters.map((d) => d.detail)).toEqual([
      'after.price: a JSON number of more than 15 significant digits is not read exactly (read as 1234567890123456.8); send DECIMAL(20, 2) as a string',
      'after.price: a JSON number beyond ±9007199254740991 is not read exactly (read as 12345678901234568); send DECIMAL(20, 2) as a string',
    ]);
  });

  it('a BIGINT beyond 2^53 as a number is refused without quoting the rounded value as what was sent', async () => {
    const i = start();
    await i.accept(TOPIC, event(1, '{"id":"w2","grams":9007199254740993,"price":"1.00"}'));
    i.commitAll();
    expect(row('w2')).toBeUndefined();
    const [d] = i.listDeadLetters();
    expect([d!.reason, d!.path]).toEqual(['contract_violation', 'after.grams']);
    expect(d!.detail).toBe(
      'after.grams: a JSON number beyond ±9007199254740991 is not read exactly (read as 9007199254740992); send a BIGINT beyond it as a string',
    );
  });

  it('a DECIMAL that does not fit is refused without the column prefix its type\'s own parentheses kept in the detail', async () => {
    const i = start();
    await i.accept(TOPIC, event(1, '{"id":"w6","grams":1,"price":"1000000000000000000001"}'));
    i.commitAll();
    const [d] = i.listDeadLetters();
    expect(d!.detail).toBe('after.price: value does not fit DECIMAL(20, 2)');
  });

  it('the string forms, and numbers JSON carries exactly, are applied as sent', async () => {
    const i = start();
    await i.accept(TOPIC, event(1, '{"id":"w3","grams":"9007199254740993","price":"12345678901234567.89"}'));
    await i.accept(TOPIC, event(2, '{"id":"w4","grams":9007199254740991,"price":1234567890123.45}'));
    await i.accept(TOPIC, event(3, '{"id":"w5","grams":1e3,"price":1.5e-1}'));
    i.commitAll();
    expect(i.listDeadLetters()).toEqual([]);
    expect(row('w3')).toMatchObject({ grams: '9007199254740993', price: '12345678901234567.89' });
    expect(row('w4')).toMatchObject({ grams: 9007199254740991, price: '1234567890123.45' });
    expect(row('w5')).toMatchObject({ grams: 1000, price: '0.15' });
  });
});
