// The set-up of the Ingestor tests that run the seed site (seed contracts, bindings and tables) on
// a simulated clock: a temp dir with a Journal and a ContractRegistry, a mutable `now`, `start()`
// opening an Ingestor on them, every Ingestor still open abandoned after each test, event makers
// and a stock row reader. Call `seededIngestor` at a test file's top level: it registers the
// beforeEach/afterEach itself. What a file varies (sequencer options, its own clock, another
// catalog) it passes as `defaults` or as `start`'s `extra`.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { Catalog, valueToJson } from '../../lsm/index.ts';
import { ContractRegistry } from '../contracts.ts';
import { Ingestor, type IngestorOptions } from '../ingestor.ts';
import { Journal } from '../journal.ts';
import { SEED_BINDINGS } from '../seed-bindings.ts';
import { SEED_CONTRACTS } from '../seed-contracts.ts';
import { SEED_TABLES } from '../seed-tables.ts';

export const SITE = 's1';
export const DB = 'site_s1';

/** The site's event topic of a module's stream. */
export const topic = (module: string, stream: string) => `tilstand/${SITE}/events/${module}/${stream}`;

/** A module's `u` event (no before image) as it sends it. */
export const moduleEvent = (module: string, stream: string, seq: number, after: Record<string, unknown>, contract: string, tsMs: number) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after, source: { module, stream, seq }, ts_ms: tsMs, contract: { name: contract, version: 1 } }));

/** inventory/stock's event for `item` at location L1. */
export const stockEvent = (seq: number, item: string, qty: number, tsMs: number) =>
  moduleEvent('inventory', 'stock', seq, { item, location: 'L1', qty }, 'inventory.stock', tsMs);

export interface SeededIngestor {
  /** This test's temp dir (the journal's; the warehouse and contracts below it). */
  readonly dir: string;
  readonly journal: Journal;
  readonly contracts: ContractRegistry;
  /** The simulated wall clock (`clock` of every Ingestor started here), `t0` at each test's start. */
  now: number;
  /** The Ingestors abandoned after the test; a test that abandons one itself takes it out. */
  readonly open: Ingestor[];
  /** The options `start` opens with: the seed site on this dir's warehouse, then `defaults`, then `extra`. */
  options(extra?: Partial<IngestorOptions>): IngestorOptions;
  start(extra?: Partial<IngestorOptions>): Ingestor;
  /** stock's committed row of (`item`, L1), by column name, as read by a new Catalog. */
  stockRow(item: string): Record<string, unknown> | undefined;
}

export function seededIngestor(setup: { tmpPrefix: string; t0: number; defaults?: Partial<IngestorOptions> }): SeededIngestor {
  let dir = '';
  let journal: Journal | undefined;
  let contracts: ContractRegistry | undefined;
  const open: Ingestor[] = [];
  const env: SeededIngestor = {
    get dir() {
      return dir;
    },
    get journal() {
      return journal!;
    },
    get contracts() {
      return contracts!;
    },
    now: setup.t0,
    open,
    options: (extra = {}) => ({
      site: SITE,
      catalog: new Catalog(join(dir, 'warehouse')),
      database: DB,
      journal: journal!,
      contracts: contracts!,
      bindings: [...SEED_BINDINGS],
      tables: [...SEED_TABLES],
      budgets: [],
      clock: () => env.now,
      publishResync: () => {},
      ...setup.defaults,
      ...extra,
    }),
    start: (extra = {}) => {
      const i = Ingestor.open(env.options(extra));
      open.push(i);
      return i;
    },
    stockRow: (item) => {
      const t = new Catalog(join(dir, 'warehouse')).getTable({ database: DB, table: 'stock' });
      const r = t.reader();
      try {
        const values = r.get({ item, location: 'L1' });
        return values ? Object.fromEntries(t.schema.fields.map((f, k) => [f.name, valueToJson(f.type, values[k])])) : undefined;
      } finally {
        r.close();
      }
    },
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), setup.tmpPrefix));
    journal = Journal.open(dir);
    contracts = new ContractRegistry(join(dir, 'contracts'));
    for (const c of SEED_CONTRACTS) contracts.register(c);
    env.now = setup.t0;
  });

  afterEach(() => {
    for (const i of open.splice(0)) i.abandon();
    journal!.close();
    rmSync(dir, { recursive: true, force: true });
  });

  return env;
}
