// Scheduled tags: `hourly-<yyyyMMddHH>` on the latest snapshot of each configured table, created
// the first time the engine runs within that hour (a site that was off for hours gets one tag for
// the hour it is back in, not one per missed hour — there is no snapshot to tag for them anyway
// when nothing was written). Hours are UTC unless `timeZone: 'local'`. A tag may carry a site-side
// retention; HQ keeps every tag it received regardless.

import { LsmError, type Table } from '../lsm/index.ts';

export interface ScheduledTagRule {
  /** Tables that get hourly tags: '*' for every table (default), or a list of names. */
  tables?: '*' | readonly string[];
  /** Site-side retention of each tag in ms (default 7 days); HQ keeps tags forever. */
  retainedMs?: number;
  timeZone?: 'utc' | 'local';
}

export const DEFAULT_SCHEDULED_TAGS: ScheduledTagRule = { tables: '*', retainedMs: 7 * 24 * 3_600_000, timeZone: 'utc' };

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

export function hourlyTagName(nowMs: number, timeZone: 'utc' | 'local' = 'utc'): string {
  const d = new Date(nowMs);
  return timeZone === 'local'
    ? `hourly-${pad(d.getFullYear(), 4)}${pad(d.getMonth() + 1)}${pad(d.getDate())}${pad(d.getHours())}`
    : `hourly-${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}${pad(d.getUTCHours())}`;
}

/** Creates this hour's tag on every table the rule names that has a snapshot; returns `table:tag` created. */
export function createScheduledTags(tables: ReadonlyMap<string, Table>, rule: ScheduledTagRule | null, nowMs: number): string[] {
  if (!rule) return [];
  const name = hourlyTagName(nowMs, rule.timeZone);
  const created: string[] = [];
  for (const [tableName, table] of tables) {
    if (rule.tables !== undefined && rule.tables !== '*' && !rule.tables.includes(tableName)) continue;
    if (table.latestSnapshot() === undefined || table.tags.exists(name)) continue;
    try {
      table.createTag(name, undefined, rule.retainedMs);
      created.push(`${tableName}:${name}`);
    } catch (e) {
      if (e instanceof LsmError && e.kind === 'AlreadyExists') continue;
      throw e;
    }
  }
  return created;
}
