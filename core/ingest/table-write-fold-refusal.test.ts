// An event whose row the table takes, and whose fold with an earlier row the merge engine then
// refuses inside the same write (the stop trigger's merge of pending runs: a partial-update group's
// `sum` overflowing INT), is not a failing disk. Since ingest stops on a table-store failure after
// the take (table-write-full-disk.test.ts), that refusal stopped ingest, and the reopen replayed
// the same events into the same merge: the site stopped at every start. The write goes through
// now (core/lsm stop-trigger-fold-refusal.test.ts): ingest goes on, no letter (the row is in the
// table: a replay would add it twice), and the refused fold is told by the compaction warning.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { ContractRegistry } from './contracts.ts';
import { Ingestor } from './ingestor.ts';
import { Journal } from './journal.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES } from './seed-tables.ts';

const T0 = Date.UTC(2026, 11, 6, 8, 0, 0);
const INBOUND = 'tilstand/s1/events/procurement/inbound';

let dir: string;
let journal: Journal;
let contracts: ContractRegistry;
let ingestor: Ingestor | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-table-write-fold-refusal-'));
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

// stock's inbound group sums its quantities; a write buffer of one byte flushes every row to its
// own run, so the third run of a commit reaches the stop trigger and its merge folds the three.
const TABLES = SEED_TABLES.map((t) =>
  t.name === 'stock'
    ? { ...t, options: { ...t.options, 'fields.inbound.aggregate-function': 'sum', 'write-buffer-size': '1 b', 'num-sorted-run.compaction-trigger': '2', 'num-sorted-run.stop-trigger': '3' } }
    : t,
);

function start(onWarning: (m: string) => void): Ingestor {
  ingestor = Ingestor.open({
    site: 's1',
    catalog: new Catalog(join(dir, 'warehouse')),
    database: 'site_s1',
    journal,
    contracts,
    bindings: [...SEED_BINDINGS],
    tables: TABLES,
    budgets: [],
    clock: () => T0,
    publishResync: () => undefined,
    onWarning,
  });
  return ingestor;
}

function inbound(seq: number, inbound_qty: number): Buffer {
  const after = { item: 'bolt', location: 'A1', inbound_qty, next_due_at: null };
  return Buffer.from(JSON.stringify({ op: 'c', before: null, after, source: { module: 'procurement', stream: 'inbound', seq }, ts_ms: T0, contract: { name: 'procurement.inbound', version: 1 } }));
}

it("a fold the stop trigger's merge refuses after the write took its row does not stop ingest, at this start or the next", async () => {
  for (let run = 0; run < 2; run++) {
    const warnings: string[] = [];
    const i = start((m) => warnings.push(m));
    if (run === 0) for (const [n, qty] of [2147483000, 1000, 5, 7].entries()) await i.accept(INBOUND, inbound(n + 1, qty));
    expect(i.failure(), `start ${run + 1}`).toBeNull();
    expect(i.deadLetterCount()).toBe(0);
    i.commitAll();
    expect(i.failure()).toBeNull();
    if (run === 0) expect(warnings.some((m) => /stop trigger.*sum overflows/.test(m)), warnings.join('\n')).toBe(true);
    i.close();
    ingestor = undefined;
  }
});
