// A table's snapshot pointer that HQ refuses for good (a policy that forbids overwriting, a share
// that corrupts that file) while it takes the data files: the table commits every minute, so each
// planning supersedes the pending snapshot unit with a new one (new step ids), and each minute's
// files count as progress. The pointer's failing-since time passes to the newer unit's pointer, so
// health stalls a window after the first failure, naming the key; a refusal that ends within the
// window never shows. Time is a simulated clock: one commit, one planning and one run per
// simulated minute, a bounded number of them.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { statusOf, SyncEngine, type SyncStatus } from './engine.ts';
import { SyncError } from './errors.ts';
import { sitePrefix } from './names.ts';
import { existingOutbox, openOutboxDb } from './outbox.ts';
import { DirectoryTarget } from './targets/directory.ts';
import type { SyncTarget } from './targets/target.ts';
import { makeSite, tempDir, writeStock, type SiteFixture } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const MINUTE = 60_000;
const WINDOW = 15 * MINUTE;

/**
 * A directory HQ that, while `refuse` is set, answers every put of stock's snapshot JSON with a
 * refusal; `down` fails every request as a line that is down does.
 */
function setup(id: string) {
  const fx = makeSite(id, { rows: 30 });
  const hq = tempDir('hq');
  cleanup.push(fx.data, hq);
  const inner = new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) });
  const snapshots = `${sitePrefix(fx.site)}stock/snapshot/snapshot-`;
  const hqSide = { refuse: false, refused: 0, down: false };
  const line = () => {
    if (hqSide.down) throw new SyncError('Transport', 'connect ENETUNREACH');
  };
  const target: SyncTarget = {
    description: inner.description,
    put: async (k, b, m) => (line(), inner.put(k, b, m)),
    putPointer: async (k, b) => {
      line();
      if (hqSide.refuse && k.startsWith(snapshots)) {
        hqSide.refused++;
        throw new SyncError('Transport', 'HTTP 403 AccessDenied: the bucket policy forbids this write');
      }
      return inner.putPointer(k, b);
    },
    list: async (p) => (line(), inner.list(p)),
    get: async (k) => (line(), inner.get(k)),
    head: async (k) => (line(), inner.head(k)),
    remove: async (k) => (line(), inner.remove(k)),
    close: async () => {},
  };
  const clock = { now: Date.UTC(2026, 11, 5, 8, 0, 0) };
  // No scheduled tags: only stock's snapshot units come and go.
  const open = () =>
    new SyncEngine({ dataDir: fx.data, site: fx.site, target, clock: () => clock.now, random: () => 0, retry: { baseMs: 1000, maxMs: MINUTE, jitter: 0 }, scheduledTags: null, healthWindowMs: WINDOW });
  return { fx, hqSide, clock, open };
}

/** Runs what is due until a round does nothing (bounded). */
async function drain(e: SyncEngine): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const r = await e.runOnce();
    if (r.done + r.failed === 0) break;
  }
}

/** One simulated minute: stock commits, the engine plans and runs what is due. */
async function minute(e: SyncEngine, fx: SiteFixture, clock: { now: number }, n: number): Promise<SyncStatus> {
  clock.now += MINUTE;
  writeStock(fx, 30 + n, 31 + n, 2 + n);
  await e.enqueueSnapshotSync();
  await drain(e);
  return e.status();
}

/** `tilstand sync status`: the outbox read by another, read-only connection. */
function statusFromOutbox(fx: SiteFixture, nowMs: number): SyncStatus {
  const db = openOutboxDb(join(fx.data, 'site.db'), true);
  try {
    return statusOf(existingOutbox(db)!, nowMs, WINDOW);
  } finally {
    db.close();
  }
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('a snapshot pointer HQ refuses for good while each minute supersedes its unit', () => {
  it('stalls health a window after its first failure, names the latest pointer, through a restart, and mends', async () => {
    const { fx, hqSide, clock, open } = setup('70');
    let e = open();
    await e.enqueueSnapshotSync();
    await drain(e);
    expect(e.status()).toMatchObject({ pendingItems: 0, healthy: true });
    hqSide.refuse = true;
    const firstMs = clock.now + MINUTE; // the first refusal comes with the next minute's pointer
    let stalledAt: number | undefined;
    for (let n = 0; n < 25 && stalledAt === undefined; n++) {
      if (n === 8) {
        // A restart mid-way: the count goes on from the outbox's stuckStep.
        await e.close();
        e = open();
      }
      const s = await minute(e, fx, clock, n);
      // Each minute's data files reach HQ (progress by the other rule), and its unit superseded the last.
      expect(s.recentItems, `minute ${n + 1}`).toBeGreaterThan(0);
      expect(new Set(e.outbox.rows().filter((r) => r.state === 'pending').map((r) => r.unit)), `minute ${n + 1}`).toEqual(
        new Set([`snapshot:stock:${fx.table('stock').latestSnapshot()!.id}`]),
      );
      if (clock.now - firstMs < WINDOW) expect(s.healthy, `minute ${n + 1}`).toBe(true);
      else if (!s.healthy) stalledAt = clock.now;
    }
    expect(stalledAt, 'stalled once the pointer was refused a whole window').toBe(firstMs + WINDOW);
    // One refusal a minute: the new unit's pointer runs at once, its carried attempts delay no first try.
    expect(hqSide.refused).toBe(16);
    const s = e.status();
    expect(s.problems).toEqual(['step']);
    const key = `${sitePrefix(fx.site)}stock/snapshot/snapshot-${fx.table('stock').latestSnapshot()!.id}`;
    expect(s.lastError).toMatch(new RegExp(`^${escape(key)} has failed since ${escape(new Date(firstMs).toISOString())} while HQ took other requests \\(${hqSide.refused} attempts\\): .*AccessDenied`));
    // Said once, not again as the error of the steps that wait.
    expect(s.lastError!.match(/AccessDenied/g)).toHaveLength(1);
    expect(statusFromOutbox(fx, clock.now)).toMatchObject({ healthy: false, problems: ['step'], lastError: s.lastError });

    // HQ takes the pointer again: the next minute's unit goes whole, and health with it.
    hqSide.refuse = false;
    const mended = await minute(e, fx, clock, 30);
    expect(mended).toMatchObject({ pendingItems: 0, healthy: true, lastError: null, problems: [] });
    expect(statusFromOutbox(fx, clock.now)).toMatchObject({ healthy: true, lastError: null });
    await e.close();
  }, 120_000);

  it('a refusal that ends within the window never shows, though each minute supersedes the unit', async () => {
    const { fx, hqSide, clock, open } = setup('71');
    const e = open();
    await e.enqueueSnapshotSync();
    await drain(e);
    hqSide.refuse = true;
    for (let n = 0; n < 20; n++) {
      // Refused for the window's first 14 minutes, then taken.
      if (n === 14) hqSide.refuse = false;
      const s = await minute(e, fx, clock, n);
      expect(s.healthy, `minute ${n + 1}`).toBe(true);
      expect(s.problems, `minute ${n + 1}`).toEqual([]);
    }
    expect(hqSide.refused).toBe(14);
    expect(e.status()).toMatchObject({ pendingItems: 0, healthy: true, lastError: null });
    expect(e.outbox.getState('stuckStep')).toBeUndefined();
    await e.close();
  }, 120_000);

  it('a pointer failure the line explains passes nothing on: an outage that began at the pointer is waiting, not a step', async () => {
    const { fx, hqSide, clock, open } = setup('72');
    const e = open();
    await e.enqueueSnapshotSync();
    await drain(e);
    // The line drops just as the pointer goes (its files went), and stays down for 20 minutes,
    // a commit and a superseding unit each minute.
    hqSide.refuse = true;
    await minute(e, fx, clock, 0);
    expect(hqSide.refused).toBe(1);
    hqSide.down = true;
    for (let n = 1; n <= 20; n++) {
      const s = await minute(e, fx, clock, n);
      expect(s.problems, `minute ${n + 1}`).not.toContain('step');
    }
    expect(e.status()).toMatchObject({ healthy: false, problems: ['waiting'] });
    expect(e.status().lastError).toMatch(/ENETUNREACH/);
    expect(e.status().lastError).not.toMatch(/has failed since/);
    // The line back and HQ taking the pointer: the latest unit goes whole.
    hqSide.down = false;
    hqSide.refuse = false;
    expect(await minute(e, fx, clock, 21)).toMatchObject({ pendingItems: 0, healthy: true, lastError: null });
    await e.close();
  }, 120_000);
});
