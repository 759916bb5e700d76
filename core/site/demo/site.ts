// The demo site's config: the defaults with budgets short enough that changes show within
// seconds (a real site's budgets come from the decisions they serve; see config.ts), two
// items with a reorder policy of their own, and one location of them with its own; and, when
// given one, a directory standing in for headquarters, so sync shows too.

import type { SiteConfig } from '../config.ts';

const DEMO_BUDGET_MS: Readonly<Record<string, number>> = { work_queue: 5_000, resources: 5_000, stock: 15_000, dead_letters: 2_000 };

/** The directory in a demo's data directory that `tilstand start --demo` syncs to, standing in for HQ. */
export const DEMO_HQ_DIR = 'demo-hq';

/** `hq`: an absolute directory the demo site syncs to (config `hq.target`); absent, it syncs nowhere. */
export function demoConfig(c: SiteConfig, hq?: string): SiteConfig {
  return {
    ...c,
    ...(hq !== undefined ? { hq: { ...c.hq, target: hq } } : {}),
    tables: c.tables.map((b) => ({ ...b, budgetMs: DEMO_BUDGET_MS[b.table] ?? b.budgetMs, confirmedBy: 'demo site: short budgets so changes show within seconds' })),
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
