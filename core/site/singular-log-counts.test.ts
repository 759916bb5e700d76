// Counts in the site's log and the CLI's output said in the singular for one: "journal: pruned 1
// event" (not "1 events") and `tilstand demo`'s "1 command" as it ends. The texts people read in
// the UI and `status` are in singular-counts.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demoStatsLine } from './cli/site-commands.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

let dir: string;
const closers: (() => unknown)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-singular-log-'));
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

const DAY_MS = 86_400_000;
const job = (seq: number) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after: { job_id: `J-${seq}`, status: 'released', capability: 'forklift', priority: 5 }, source: { module: 'operations', stream: 'jobs', seq }, ts_ms: Date.now(), contract: { name: 'operations.jobs', version: 1 } }));

/** Polls (at most 250 × 20 ms) until `ok` holds. */
async function until(ok: () => boolean): Promise<void> {
  for (let k = 0; k < 250 && !ok(); k++) await new Promise((r) => setTimeout(r, 20));
}

/**
 * The log of a new site's prune after `n` events received 30 days ago (past the journal's 7-day
 * retention) reached its tables. One accept each, together: a new site's tables record their
 * first progress at once, a later one only every 5 minutes (progressIntervalMs).
 */
async function prunedAfter(site: string, n: number): Promise<string[]> {
  const data = join(dir, site);
  await initDataDir({ data, site, scrypt: { N: 1024, r: 8, p: 1 } });
  const lines: string[] = [];
  const s = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: (l) => lines.push(l) });
  closers.push(() => s.stop());
  const old = Date.now() - 30 * DAY_MS;
  await Promise.all(Array.from({ length: n }, (_, k) => s.ingestor.accept(`tilstand/${site}/events/operations/jobs`, job(k + 1), old)));
  await until(() => s.status().journal.committedPosition === String(n));
  expect(s.status().journal.committedPosition).toBe(String(n));
  await s.pruneNow();
  return lines.filter((l) => l.startsWith('journal'));
}

describe('one of a count is said in the singular in the log and the CLI', () => {
  it('"journal: pruned 1 event", "journal: pruned 2 events"', async () => {
    expect(await prunedAfter('one', 1)).toEqual(['journal: pruned 1 event (kept everything after position 1)']);
    expect(await prunedAfter('two', 2)).toEqual(['journal: pruned 2 events (kept everything after position 2)']);
  }, 30_000);

  it('`tilstand demo` as it ends: "1 command", "2 commands"', () => {
    expect(demoStatsLine({ module: 'operations', published: 41, acked: 40, failed: 0, commands: 1 })).toBe('  operations: 40/41 acknowledged, 1 command');
    expect(demoStatsLine({ module: 'inventory', published: 3, acked: 3, failed: 0, commands: 2 })).toBe('  inventory: 3/3 acknowledged, 2 commands');
    expect(demoStatsLine({ module: 'commerce', published: 0, acked: 0, failed: 0, commands: 0 })).toBe('  commerce: 0/0 acknowledged, 0 commands');
  });
});
