// A second table of inventory's stock stream, of the site's own (`stock_counts`, its quantities by
// item and location, ordered by the stream's seq), and its binding: the tests where two tables of
// one stream commit apart (a crash between them, a table made at a later start).
import type { Binding } from '../binding.ts';
import type { IngestorOptions } from '../ingestor.ts';
import { SEED_BINDINGS } from '../seed-bindings.ts';
import { SEED_TABLES } from '../seed-tables.ts';
import { parseTableDefinition } from '../site-tables.ts';

export const STOCK_COUNTS = parseTableDefinition(
  {
    table: 'stock_counts',
    columns: [
      { name: 'item', type: 'STRING NOT NULL' },
      { name: 'location', type: 'STRING NOT NULL' },
      { name: 'qty', type: 'INT' },
      { name: 'count_seq', type: 'BIGINT' },
    ],
    primaryKeys: ['item', 'location'],
    options: { 'sequence.field': 'count_seq' },
  },
  'tables[5]',
)!;

export const STOCK_COUNTS_BINDING: Binding = {
  name: 'inventory.stock→stock_counts',
  topic: 'tilstand/+/events/inventory/stock',
  contract: 'inventory.stock',
  table: 'stock_counts',
  columns: { item: 'after.item', location: 'after.location', qty: 'after.qty', count_seq: 'source.seq' },
};

/** The options of a start with the seed tables and stock_counts, their bindings, and `budgets` (stock_counts' 60 s by default). */
export function withStockCounts(budgets: IngestorOptions['budgets'] = [{ table: 'stock_counts', budgetMs: 60_000, decision: 'test', confirmedBy: 'test' }]): Partial<IngestorOptions> {
  return { tables: [...SEED_TABLES, STOCK_COUNTS], bindings: [...SEED_BINDINGS, STOCK_COUNTS_BINDING], budgets };
}
