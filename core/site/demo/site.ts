// The demo site's config: the defaults with budgets short enough that changes show within
// seconds (a real site's budgets come from the decisions they serve; see config.ts), two
// items with a reorder policy of their own, and one location of them with its own; and, when
// given one, a directory standing in for headquarters, so sync shows too. Besides the seed tables
// it has a table of its own, `yard_doors` (docs/modules.md, section 5), which the simulated yard
// system (yard.ts) feeds through its binding: the Tables and History screens show it.

import type { Binding } from '../../ingest/binding.ts';
import type { Contract } from '../../ingest/contracts.ts';
import { SEED_BINDINGS } from '../../ingest/seed-bindings.ts';
import { configBindings, siteTableDefinitions, type SiteConfig, type SiteTableEntry } from '../config.ts';
import { YARD_DOORS } from './yard.ts';

const DEMO_BUDGET_MS: Readonly<Record<string, number>> = { work_queue: 5_000, resources: 5_000, stock: 15_000, dead_letters: 2_000 };

const CONFIRMED_BY = 'demo site: short budgets so changes show within seconds';

/** The demo's table of its own, written by the yard module's `doors` stream. */
export const DEMO_YARD_TABLE = 'yard_doors';

export const DEMO_YARD_DOORS_TABLE: SiteTableEntry = {
  table: DEMO_YARD_TABLE,
  budgetMs: 10_000,
  decision: 'the gate crew sees which dock door is free',
  confirmedBy: CONFIRMED_BY,
  comment: 'Dock doors as the yard system reports them; one row per door.',
  columns: [
    { name: 'door_id', type: 'STRING NOT NULL' },
    { name: 'state', type: 'STRING', description: 'free | occupied | down' },
    { name: 'trailer_id', type: 'STRING' },
    { name: 'since', type: 'TIMESTAMP(3)', description: 'when the door took this state' },
    { name: 'yard_seq', type: 'BIGINT', description: 'source.seq of yard/doors' },
  ],
  primaryKeys: ['door_id'],
  options: { 'merge-engine': 'deduplicate', 'sequence.field': 'yard_seq' },
};

export const DEMO_YARD_BINDING: Binding = {
  name: 'yard.doors→yard_doors',
  topic: 'tilstand/+/events/yard/doors',
  contract: 'yard.doors',
  table: DEMO_YARD_TABLE,
  columns: { door_id: 'after.door_id', state: 'after.state', trailer_id: 'after.trailer_id', since: 'after.since', yard_seq: 'source.seq' },
};

/**
 * What a new demo directory gets beside its config (`tilstand init`'s `modules` and `contracts`):
 * a broker user for the yard module and its contract, so the yard system can publish at once.
 */
export const DEMO_EXTRA_MODULES: readonly string[] = ['yard'];
export const DEMO_CONTRACTS: readonly Contract[] = [YARD_DOORS];

/**
 * Why the yard module is not run on a data directory, or undefined when it is: it needs its broker
 * user (`yard` in secrets/modules.json, `secretsPath`), and config.json must define yard_doors (a
 * `tables` entry with columns) and have a binding write it — elsewhere its events would only be
 * dead letters. A demo directory made before the yard system has none of these; a site whose
 * config.json lost the table or the binding, the last two. `tilstand start --demo` and `tilstand
 * demo` ask this and pass runDemoModules `yard`.
 */
export function demoYardMissing(c: SiteConfig, modules: Readonly<Record<string, unknown>>, secretsPath: string): string | undefined {
  const missing: string[] = [];
  if (modules.yard === undefined) missing.push(`no 'yard' in ${secretsPath}`);
  if (!siteTableDefinitions(c).some((d) => d.name === DEMO_YARD_TABLE)) missing.push(`no ${DEMO_YARD_TABLE} table (a tables entry with columns) in config.json`);
  if (!configBindings(c).some((b) => b.table === DEMO_YARD_TABLE)) missing.push(`no binding in config.json writes ${DEMO_YARD_TABLE}`);
  return missing.length === 0 ? undefined : missing.join('; ');
}

/** The directory in a demo's data directory that `tilstand start --demo` syncs to, standing in for HQ. */
export const DEMO_HQ_DIR = 'demo-hq';

/** `hq`: an absolute directory the demo site syncs to (config `hq.target`); absent, it syncs nowhere. */
export function demoConfig(c: SiteConfig, hq?: string): SiteConfig {
  return {
    ...c,
    ...(hq !== undefined ? { hq: { ...c.hq, target: hq } } : {}),
    tables: [
      ...c.tables.filter((b) => b.table !== DEMO_YARD_TABLE).map((b) => ({ ...b, budgetMs: DEMO_BUDGET_MS[b.table] ?? b.budgetMs, confirmedBy: CONFIRMED_BY })),
      DEMO_YARD_DOORS_TABLE,
    ],
    // The seed bindings written out, as a site that adds one must (docs/modules.md, section 5).
    bindings: [...(c.bindings === 'seed' ? SEED_BINDINGS : c.bindings).filter((b) => b.name !== DEMO_YARD_BINDING.name), DEMO_YARD_BINDING],
    // At the default pace every simulated stream publishes within a minute or two: ten silent
    // minutes mean a module stopped (or the demo was slowed down that far with --demo-step-ms).
    alarms: { streamSilentMs: { '*': 600_000 } },
    // Two items with a reorder policy of their own, beside the default (5, up to 20), and one
    // location of them with its own again (ITEM-001's pick face A-01, refilled in smaller amounts),
    // so the stock screen and the agent's replenishments show a site's own numbers (config.json `agent`).
    agent: {
      ...c.agent,
      reorderByItem: {
        'ITEM-001': { reorderPoint: 40, orderUpTo: 150, locations: { 'A-01': { reorderPoint: 30, orderUpTo: 90 } } },
        'ITEM-002': { reorderPoint: 25, orderUpTo: 80 },
      },
    },
  };
}
