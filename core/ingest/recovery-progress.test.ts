// The progress a table commits after a restart (core/ingest DESIGN.md, "Exactly-once effect"):
// never below what its recovered snapshot holds, so a second crash applies nothing twice; and a
// closed dead letter is purged only once dead_letters' committed position covers it, so a crash
// cannot bring it back open.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { ContractRegistry } from './contracts.ts';
import { Ingestor, type IngestorOptions } from './ingestor.ts';
import { Journal } from './journal.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES } from './seed-tables.ts';

const SITE = 's1';
const DB = 'site_s1';
const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);

let dir: string;
let journal: Journal;
let contracts: ContractRegistry;
let now: number;
const open: Ingestor[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-recovery-progress-'));
  journal = Journal.open(dir);
  contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
  now = T0;
});

afterEach(() => {
  for (const i of open.splice(0)) i.abandon();
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(sequencer: IngestorOptions['sequencer'] = { reorder_window_ms: 1_000, resync_retry_ms: 1_000, gap_give_up_ms: 10_000 }): Ingestor {
  const i = Ingestor.open({
    site: SITE,
    catalog: new Catalog(join(dir, 'warehouse')),
    database: DB,
    journal,
    contracts,
    bindings: [...SEED_BINDINGS],
    tables: [...SEED_TABLES],
    budgets: [],
    clock: () => now,
    sequencer,
  });
  open.push(i);
  return i;
}

/** kill -9: nothing more is committed. */
function crash(i: Ingestor): void {
  i.abandon();
  open.splice(open.indexOf(i), 1);
}

const topic = (module: string, stream: string) => `tilstand/${SITE}/events/${module}/${stream}`;
const ev = (module: string, stream: string, seq: number, after: Record<string, unknown>, contract: string) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after, source: { module, stream, seq }, ts_ms: T0, contract: { name: contract, version: 1 } }));
const inv = (seq: number, qty: unknown = seq) => ev('inventory', 'stock', seq, { item: 'A-1', location: 'L1', qty }, 'inventory.stock');
const res = (seq: number, qty: number) => ev('commerce', 'reservations', seq, { item: 'A-1', location: 'L1', reserved_qty: qty }, 'commerce.reservations');

function committed(table: string): Record<string, string> {
  return new Catalog(join(dir, 'warehouse')).getTable({ database: DB, table }).committedProperties();
}

describe('a table commit after a restart keeps the progress its snapshot holds', () => {
  it('a run a gap skip released is not applied to stock again after a second crash', async () => {
    // Run 1: seq 1 applied, dead_letters' progress commit at hwm 1; seq 2 never comes, 3 and 4
    // are held, the skip releases them, stock commits hwm 4 and dead_letters stays at 1.
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1));
    i.tick();
    await i.accept(topic('inventory', 'stock'), inv(3));
    await i.accept(topic('inventory', 'stock'), inv(4));
    now += 10_000;
    i.tick();
    i.commitAll();
    expect(committed('stock')['tilstand.hwm.inventory/stock']).toBe('4');
    const stockPosition = BigInt(committed('stock')['tilstand.journal.position']!);
    crash(i);

    // Run 2: the sequencer starts at min(stock 4, dead_letters 1) = 1, so 3 and 4 are held again;
    // another module's event makes stock commit meanwhile.
    const j = start();
    expect(j.health().heldEvents).toBe(2);
    await j.accept(topic('commerce', 'reservations'), res(1, 2));
    j.commitAll();
    expect(committed('stock')['tilstand.hwm.inventory/stock']).toBe('4');
    expect(BigInt(committed('stock')['tilstand.journal.position']!)).toBeGreaterThanOrEqual(stockPosition);
    crash(j);

    // Run 3: the skip releases 3 and 4 again; stock holds them and writes nothing.
    const k = start();
    now += 10_000;
    k.tick();
    expect(k.status().find((s) => s.table === 'stock')!.pendingEvents).toBe(0);
  });

  it('a dismissed dead letter of such a run is not reopened after a second crash', async () => {
    const i = start();
    await i.accept(topic('inventory', 'stock'), inv(1));
    i.commitAll(); // stock: hwm 1
    i.tick();
    const bad = await i.accept(topic('inventory', 'stock'), inv(3, 'x'));
    await i.accept(topic('inventory', 'stock'), inv(4));
    now += 10_000;
    i.tick(); // the skip: seq 3 → a dead letter (committed at once), seq 4 → stock (pending)
    expect(i.deadLetterCount()).toBe(1);
    crash(i);

    const j = start(); // sequencer at min(stock 1, dead_letters 4) = 1: 3 and 4 held again
    expect(j.dismissDeadLetters([bad], 'reviewer', 'test message')).toEqual({ dismissed: 1, notOpen: [] });
    expect(committed('dead_letters')['tilstand.hwm.inventory/stock']).toBe('4');
    crash(j);

    const k = start();
    now += 10_000;
    k.tick(); // the skip releases seq 3 again
    expect({ open: k.deadLetterCount(), status: k.listDeadLetters().map((d) => d.status) }).toEqual({ open: 0, status: ['dismissed'] });
  });
});

describe('closed dead letters are purged once the committed position covers them', () => {
  it('a closed letter after a held event waits for the gap, and a crash does not bring it back', async () => {
    const i = start({ gap_give_up_ms: Infinity });
    await i.accept(topic('inventory', 'stock'), inv(1));
    await i.accept(topic('inventory', 'stock'), inv(3)); // held: 2 is missing
    const p = await i.accept(topic('inventory', 'stock'), Buffer.from('{not json')); // unsequenced
    i.commitAll();
    expect(i.dismissDeadLetters([p], 'reviewer', 'garbage')).toMatchObject({ dismissed: 1 });
    now += 1_000;
    // dead_letters' position stops before the held event: the letter is not purged yet.
    expect(await i.purgeClosedDeadLetters(now)).toMatchObject({ purged: 0 });
    crash(i);

    const j = start({ gap_give_up_ms: Infinity });
    expect(j.listDeadLetters().map((d) => `${d.position} ${d.status}`)).toEqual([`${p} dismissed`]);
    await j.accept(topic('inventory', 'stock'), inv(2)); // the gap closes: 2 and 3 applied
    j.commitAll();
    expect(await j.purgeClosedDeadLetters(now)).toMatchObject({ purged: 1 });
    expect(j.listDeadLetters()).toEqual([]);
    crash(j);

    const k = start({ gap_give_up_ms: Infinity });
    expect(k.listDeadLetters()).toEqual([]);
  });
});
