// Shared by new-table-letters.crash.test.ts and its child: the site, the contracts, and the yard
// table of the site's own (as config.json gives it, through parseTableDefinition) with its binding.
import type { ContractRegistry } from '../../core/ingest/contracts.ts';
import type { TableBudget } from '../../core/ingest/freshness.ts';
import { SEED_CONTRACTS } from '../../core/ingest/seed-contracts.ts';
import { parseTableDefinition } from '../../core/ingest/site-tables.ts';
import { YARD_BINDING, YARD_CONTRACT, YARD_DOORS } from '../../core/ingest/test-support/yard-doors.ts';

export { YARD_BINDING };

export const LETTERS_SITE = 's1';

export const YARD_TABLE = parseTableDefinition(YARD_DOORS, 'tables[5]')!;

export const YARD_BUDGETS: TableBudget[] = [{ table: 'yard_doors', budgetMs: YARD_DOORS.budgetMs, decision: 'crash test', confirmedBy: 'test' }];

/** The seed contracts and yard.doors: the module's contract is known before its table is. */
export function registerContracts(contracts: ContractRegistry): void {
  for (const c of [...SEED_CONTRACTS, YARD_CONTRACT]) contracts.register(c);
}
