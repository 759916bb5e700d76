// Health after the wall clock stepped back (a PC that booted with a clock hours fast, then NTP):
// what the fast clock recorded must not read as progress, or as a wait that has not begun.

import { rmSync, unlinkSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { statusOf, SyncEngine } from './engine.ts';
import { SyncError } from './errors.ts';
import { sitePrefix } from './names.ts';
import { referencedFiles } from './plan.ts';
import { DirectoryTarget } from './targets/directory.ts';
import type { SyncTarget } from './targets/target.ts';
import { makeSite, tempDir, writeStock } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const WINDOW = 15 * 60_000;

/** A site, a directory HQ behind a switch, and an engine on a clock the test sets. */
function setup(id: string) {
  const fx = makeSite(id, { rows: 30 });
  const hq = tempDir('hq');
  cleanup.push(fx.data, hq);
  const inner = new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) });
  const line = { up: true };
  const check = () => {
    if (!line.up) throw new SyncError('Transport', 'connect ENETUNREACH');
  };
  const target: SyncTarget = {
    description: inner.description,
    put: async (k, b, m) => (check(), inner.put(k, b, m)),
    putPointer: async (k, b) => (check(), inner.putPointer(k, b)),
    list: async (p) => (check(), inner.list(p)),
    get: async (k) => (check(), inner.get(k)),
    head: async (k) => (check(), inner.head(k)),
    remove: async (k) => (check(), inner.remove(k)),
    close: async () => {},
  };
  const clock = { now: Date.UTC(2026, 11, 1, 9) + 2 * HOUR }; // booted two hours fast
  const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target, clock: () => clock.now, random: () => 0, retry: { baseMs: 1000, maxMs: 60_000, jitter: 0 }, scheduledTags: null, healthWindowMs: WINDOW });
  const run = async (rounds: number) => {
    for (let i = 0; i < rounds; i++) await e.runOnce();
  };
  return { fx, e, line, clock, run };
}

describe('health after the clock stepped back', () => {
  it('steps finished by the fast clock are not progress: a line down for a whole window after the step is stalled', async () => {
    const s = setup('50');
    await s.e.enqueueSnapshotSync();
    await s.run(3);
    expect(s.e.status().pendingItems).toBe(0);
    // NTP steps the clock back two hours; the line goes down; the site goes on writing.
    s.clock.now -= 2 * HOUR;
    s.line.up = false;
    writeStock(s.fx, 30, 40, 2);
    await s.e.enqueueSnapshotSync();
    await s.run(1);
    s.clock.now += WINDOW + 60_000;
    await s.run(1);
    const st = s.e.status();
    expect(st.pendingItems).toBeGreaterThan(0);
    expect(st.recentItems).toBe(0);
    expect(st.online).toBe(false);
    expect(st.healthy).toBe(false);
    // `tilstand sync status` reads the same from the outbox.
    expect(statusOf(s.e.outbox, s.clock.now, WINDOW).healthy).toBe(false);
    await s.e.close();
  });

  it('a step planned by the fast clock, offline: it has waited since the step, and stalls a window later', async () => {
    const s = setup('51');
    s.line.up = false;
    await s.e.enqueueSnapshotSync();
    await s.run(1);
    s.clock.now -= 2 * HOUR;
    await s.run(1);
    s.clock.now += WINDOW + 60_000;
    const st = s.e.status();
    expect(st.pendingItems).toBeGreaterThan(0);
    expect(st.oldestUnsyncedMs).toBe(WINDOW + 60_000);
    expect(st.healthy).toBe(false);
    await s.e.close();
  });
  it('a table whose planning began failing by the fast clock stalls health a window after the step', async () => {
    const s = setup('52');
    await s.e.enqueueSnapshotSync();
    await s.run(3);
    const before = new Set(referencedFiles(s.fx.table('stock'), s.fx.table('stock').latestSnapshot()!).map((f) => f.path));
    writeStock(s.fx, 30, 40, 2);
    const stock = s.fx.table('stock');
    const lost = referencedFiles(stock, stock.latestSnapshot()!).find((f) => f.phase === 0 && !before.has(f.path) && f.rel.includes('bucket-'))!;
    unlinkSync(lost.path);
    await s.e.enqueueSnapshotSync(); // fails for stock, noted at the fast clock's time
    expect(s.e.status().lastError).toMatch(/^planning stock: /);
    s.clock.now -= 2 * HOUR;
    await s.e.enqueueSnapshotSync();
    s.clock.now += WINDOW + 60_000;
    await s.e.enqueueSnapshotSync();
    expect(s.e.status()).toMatchObject({ healthy: false, lastError: expect.stringMatching(/^planning stock: .*missing on the site/) });
    await s.e.close();
  });
});
