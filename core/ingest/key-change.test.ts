// A Debezium update that moves a row to another primary key (`op: u`, the before image's key ≠
// the after image's: a job renumbered, stock moved to another location). Only the after image was
// written, so the old key's row stayed in the table for good. Now the binding writes the old key's
// retraction (what a `d` of the before image writes, with this event's seq) before the new row,
// in the same commit; through the real ingest path (journal, sequencer, tables, dead letters).
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
import { OPERATIONS_JOBS, SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES, type TableDefinition } from './seed-tables.ts';

const T0 = Date.UTC(2026, 11, 6, 8, 0, 0);
const JOBS = 'tilstand/s1/events/operations/jobs';
const STOCK = 'tilstand/s1/events/inventory/stock';

let dir: string;
let journal: Journal;
let contracts: ContractRegistry;
let ingestor: Ingestor | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-key-change-'));
  journal = Journal.open(dir);
  contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
});

afterEach(() => {
  ingestor?.abandon();
  ingestor = undefined;
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(extra: { tables?: TableDefinition[]; bindings?: Binding[] } = {}): Ingestor {
  ingestor = Ingestor.open({
    site: 's1',
    catalog: new Catalog(join(dir, 'warehouse')),
    database: 'site_s1',
    journal,
    contracts,
    bindings: [...SEED_BINDINGS, ...(extra.bindings ?? [])],
    tables: [...SEED_TABLES, ...(extra.tables ?? [])],
    budgets: (extra.tables ?? []).map((t) => ({ table: t.name, budgetMs: 60_000, decision: 'test', confirmedBy: 'test' })),
    clock: () => T0,
    publishResync: () => undefined,
  });
  return ingestor;
}

const jobImage = (job_id: string, status = 'released') => ({ job_id, status, capability: 'forklift', priority: 5 });

function jobEvent(seq: number, op: 'c' | 'u' | 'd', before: object | null, after: object | null, version = 1): Buffer {
  return Buffer.from(JSON.stringify({ op, before, after, source: { module: 'operations', stream: 'jobs', seq }, ts_ms: T0, contract: { name: 'operations.jobs', version } }));
}

function stockEvent(seq: number, op: 'c' | 'u', before: object | null, after: object): Buffer {
  return Buffer.from(JSON.stringify({ op, before, after, source: { module: 'inventory', stream: 'stock', seq }, ts_ms: T0, contract: { name: 'inventory.stock', version: 1 } }));
}

/** Every committed row of a table, in JSON form. */
function rows(table: string): Record<string, unknown>[] {
  const t = new Catalog(join(dir, 'warehouse')).getTable({ database: 'site_s1', table });
  const r = t.reader();
  try {
    return [...r.scan()].map((values) => Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, values[i])])));
  } finally {
    r.close();
  }
}

const jobIds = () => rows('work_queue').map((r) => `${r.job_id}@${r.ops_seq}`);

describe('ingest: an update that changes the primary key', () => {
  it('deletes the old key and writes the new row, in the same commit', async () => {
    const i = start();
    await i.accept(JOBS, jobEvent(1, 'c', null, jobImage('J-1')));
    i.commitAll();
    expect(jobIds()).toEqual(['J-1@1']);
    await i.accept(JOBS, jobEvent(2, 'u', jobImage('J-1'), jobImage('J-2', 'blocked')));
    const before = rows('work_queue');
    i.commitAll();
    expect(before.map((r) => r.job_id)).toEqual(['J-1']); // nothing seen before the commit
    expect(jobIds()).toEqual(['J-2@2']); // J-1 stayed beside J-2
    expect(i.deadLetterCount()).toBe(0);
  });

  it("retracts the old key with the event's seq: it wins over the old row written in the same commit", async () => {
    const i = start();
    await i.accept(JOBS, jobEvent(1, 'c', null, jobImage('J-1')));
    await i.accept(JOBS, jobEvent(2, 'u', jobImage('J-1'), jobImage('J-2')));
    i.commitAll();
    expect(jobIds()).toEqual(['J-2@2']);
  });

  it('an update whose before image has the same key writes only the new row', async () => {
    const i = start();
    await i.accept(JOBS, jobEvent(1, 'c', null, jobImage('J-1')));
    await i.accept(JOBS, jobEvent(2, 'u', jobImage('J-1'), jobImage('J-1', 'done')));
    i.commitAll();
    expect(rows('work_queue').map((r) => [r.job_id, r.status, r.ops_seq])).toEqual([['J-1', 'done', 2]]);
  });

  it("moves stock to another location: the old key's group is retracted as a delete of it would", async () => {
    const i = start();
    await i.accept(STOCK, stockEvent(1, 'c', null, { item: 'A-1', location: 'L1', qty: 7 }));
    await i.accept(STOCK, stockEvent(2, 'u', { item: 'A-1', location: 'L1', qty: 7 }, { item: 'A-1', location: 'L2', qty: 7 }));
    i.commitAll();
    const onHand = rows('stock').filter((r) => r.on_hand !== null).map((r) => `${r.item}/${r.location}=${r.on_hand}`);
    expect(onHand).toEqual(['A-1/L2=7']);
  });

  it('a table that cannot take the retraction refuses the binding as it refuses a delete: a letter naming it, neither record written', async () => {
    // partial-update ordered by sequence.field, without groups or remove-record-on-delete: no -D.
    const counts: TableDefinition = {
      name: 'job_counts',
      fields: [
        { id: 0, name: 'job_id', type: 'STRING NOT NULL' },
        { id: 1, name: 'priority', type: 'INT' },
        { id: 2, name: 'n', type: 'BIGINT' },
      ],
      partitionKeys: [],
      primaryKeys: ['job_id'],
      options: { bucket: '1', 'merge-engine': 'partial-update', 'sequence.field': 'n' },
    };
    const toCounts: Binding = { name: 'jobs→job_counts', topic: 'tilstand/+/events/operations/jobs', contract: 'operations.jobs', table: 'job_counts', columns: { job_id: 'after.job_id', priority: 'after.priority', n: 'source.seq' } };
    const i = start({ tables: [counts], bindings: [toCounts] });
    await i.accept(JOBS, jobEvent(1, 'c', null, jobImage('J-1')));
    await i.accept(JOBS, jobEvent(2, 'u', jobImage('J-1'), jobImage('J-2')));
    i.commitAll();
    expect(rows('job_counts').map((r) => `${r.job_id}@${r.n}`)).toEqual(['J-1@1']);
    expect(jobIds()).toEqual(['J-2@2']); // the other binding took the event
    const [letter] = i.listDeadLetters();
    expect(letter).toMatchObject({ reason: 'unfit_for_table', bindings: ['jobs→job_counts'], seq: 2 });
    expect(letter!.detail).toMatch(/cannot take a -D record/);
  });

  it('a replayed dead letter of such an update deletes the old key too', async () => {
    const i = start();
    await i.accept(JOBS, jobEvent(1, 'c', null, jobImage('J-1')));
    await i.accept(JOBS, jobEvent(2, 'u', jobImage('J-1'), jobImage('J-2'), 2)); // v2 not registered yet
    i.commitAll();
    expect(i.deadLetterCount()).toBe(1);
    expect(jobIds()).toEqual(['J-1@1']);
    contracts.register({ ...OPERATIONS_JOBS, version: 2 });
    const r = await i.replayDeadLetters();
    expect(r.replayed).toBe(1);
    expect(jobIds()).toEqual(['J-2@2']);
  });
});
