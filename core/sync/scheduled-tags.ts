// Scheduled tags: `hourly-<yyyyMMddHH>` on the latest snapshot of each configured table, created
// the first time the engine runs within that hour (a site that was off for hours gets one tag for
// the hour it is back in, not one per missed hour — there is no snapshot to tag for them anyway
// when nothing was written). Hours are UTC unless `timeZone: 'local'`. A tag may carry a site-side
// retention; HQ keeps every tag it received regardless.

import { LsmError, type Table, type TagInfo } from '../lsm/index.ts';

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

/** The name of a scheduled tag (`hourlyTagName`). */
const HOURLY = /^hourly-\d{10}$/;

/**
 * Creates this hour's tag on every table the rule names that has a snapshot; returns `table:tag`
 * created. First it deletes the scheduled tags named for an hour after this one: made while the
 * clock ran fast (a PC that booted with its clock hours ahead, then NTP), each holds the state of
 * hours before the one it names, and when
 * that hour came it was not made again, the name being taken — HQ kept the older state under the
 * hour's name for good. Deleted, the tag is made when its hour really comes, on the state of then,
 * and sent again (a tag moved to another snapshot: HQ's JSON replaced; hourly-tag-clock-step.test.ts).
 */
export function createScheduledTags(tables: ReadonlyMap<string, Table>, rule: ScheduledTagRule | null, nowMs: number): string[] {
  if (!rule) return [];
  const name = hourlyTagName(nowMs, rule.timeZone);
  const created: string[] = [];
  for (const [tableName, table] of tables) {
    if (rule.tables !== undefined && rule.tables !== '*' && !rule.tables.includes(tableName)) continue;
    if (table.latestSnapshot() === undefined) continue;
    let ahead: TagInfo[] = [];
    try {
      ahead = table.listTags().filter((t) => HOURLY.test(t.name) && t.name > name); // same width: the order of the hours
    } catch {
      // A tag that does not read: the table's planning lists the tags too, and reports it.
    }
    for (const t of ahead) {
      try {
        table.deleteTag(t.name);
      } catch (e) {
        if (!(e instanceof LsmError && e.kind === 'NotFound')) throw e;
      }
    }
    if (table.tags.exists(name)) continue;
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
