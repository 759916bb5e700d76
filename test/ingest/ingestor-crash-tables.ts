// Shared by ingestor.crash.test.ts and its child: a `ledger` table where every event of the three
// stock streams writes its own row (key module, stream, seq). Its APPEND snapshots' delta record
// counts then add up to the number of event applications that reached a committed snapshot, so an
// event applied twice shows as a larger sum. Snapshots are kept (no expiry during the test).
import type { Binding } from '../../core/ingest/binding.ts';
import type { TableBudget } from '../../core/ingest/freshness.ts';
import type { TableDefinition } from '../../core/ingest/seed-tables.ts';

export const LEDGER_TABLE: TableDefinition = {
  name: 'ledger',
  fields: [
    { id: 0, name: 'module', type: 'STRING NOT NULL' },
    { id: 1, name: 'stream', type: 'STRING NOT NULL' },
    { id: 2, name: 'seq', type: 'BIGINT NOT NULL' },
    { id: 3, name: 'qty', type: 'INT' },
  ],
  partitionKeys: [],
  primaryKeys: ['module', 'stream', 'seq'],
  options: { bucket: '1', 'merge-engine': 'deduplicate', 'snapshot.num-retained.min': '1000000', 'snapshot.time-retained': '100 d' },
};

const ledger = (module: string, stream: string, contract: string, qty: string): Binding => ({
  name: `${module}/${stream}→ledger`,
  topic: `tilstand/+/events/${module}/${stream}`,
  contract,
  table: 'ledger',
  columns: { module: 'source.module', stream: 'source.stream', seq: 'source.seq', qty: `after.${qty}` },
});

export const LEDGER_BINDINGS: Binding[] = [
  ledger('inventory', 'stock', 'inventory.stock', 'qty'),
  ledger('commerce', 'reservations', 'commerce.reservations', 'reserved_qty'),
  ledger('procurement', 'inbound', 'procurement.inbound', 'inbound_qty'),
];

/** Short budgets so that commits happen all the time while the parent kills the child. */
export const CRASH_BUDGETS: TableBudget[] = [
  { table: 'stock', budgetMs: 80, decision: 'crash test', confirmedBy: 'test' },
  { table: 'ledger', budgetMs: 50, decision: 'crash test', confirmedBy: 'test' },
  { table: 'dead_letters', budgetMs: 100, decision: 'crash test', confirmedBy: 'test' },
];
