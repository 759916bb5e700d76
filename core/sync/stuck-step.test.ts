// A step that fails for good while other units move (a share that always corrupts one file:
// Verification at each attempt) stalls health once it has failed for a whole health window while
// HQ answered other requests, and `lastError` names it first; a failure that then succeeds, and
// failures the line explains (HQ down, then back), do not stall it. Time is a simulated clock:
// one planning and one run per simulated minute, a bounded number of them.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { SyncEngine, SyncStatus } from './engine.ts';
import { SyncError } from './errors.ts';
import { sitePrefix } from './names.ts';
import type { DirectoryTarget } from './targets/directory.ts';
import type { ObjectInfo, PutBody, PutMeta, SyncTarget } from './targets/target.ts';
import { healthSite, MINUTE, statusFromOutbox, WINDOW } from './test-support/health-site.ts';
import { writeInbox, type SiteFixture } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

/**
 * A directory target whose share corrupts one file: `head` of the first stock data file it is
 * asked about reports other bytes while `corrupt` is true (the put goes, its verification fails).
 * `down` makes every request fail as a line that is down does.
 */
class FaultyShare implements SyncTarget {
  corrupt = true;
  down = false;
  badKey: string | undefined;
  constructor(
    readonly inner: DirectoryTarget,
    site: string,
  ) {
    this.stockFiles = `${sitePrefix(site)}stock/bucket-`;
  }
  private readonly stockFiles: string;
  get description() {
    return this.inner.description;
  }
  private line(): void {
    if (this.down) throw new SyncError('Transport', 'connect ETIMEDOUT');
  }
  async put(key: string, body: PutBody, meta: PutMeta) {
    this.line();
    await this.inner.put(key, body, meta);
  }
  async putPointer(key: string, bytes: Uint8Array) {
    this.line();
    await this.inner.putPointer(key, bytes);
  }
  async list(prefix: string) {
    this.line();
    return this.inner.list(prefix);
  }
  async get(key: string) {
    this.line();
    return this.inner.get(key);
  }
  async head(key: string): Promise<ObjectInfo | undefined> {
    this.line();
    const info = await this.inner.head(key);
    if (this.badKey === undefined && key.startsWith(this.stockFiles)) this.badKey = key;
    return this.corrupt && info && key === this.badKey ? { ...info, sha256: '0'.repeat(64) } : info;
  }
  async remove(key: string) {
    this.line();
    await this.inner.remove(key);
  }
  async close() {}
}

function setup(id: string) {
  const s = healthSite(id, cleanup, { rows: 300, target: (inner, fx) => new FaultyShare(inner, fx.site) });
  return { fx: s.fx, share: s.target, clock: s.clock, open: s.open };
}

/** One simulated minute: the agent's inbox moves (a new unit), the engine plans and runs what is due. */
async function minute(e: SyncEngine, fx: SiteFixture, clock: { now: number }, n: number, stepMs = MINUTE): Promise<SyncStatus> {
  clock.now += stepMs;
  writeInbox(fx, 5 + 2 * n, 7 + 2 * n);
  await e.enqueueSnapshotSync();
  await e.runOnce();
  return e.status();
}

describe('a step that fails for good while other units move', () => {
  it('stalls health after a whole window of failures while HQ answers, names the step first, and mends when it goes', async () => {
    const { fx, share, clock, open } = setup('41');
    let e = open();
    const firstMs = clock.now;
    await e.enqueueSnapshotSync();
    await e.runOnce();
    expect(share.badKey).toBeDefined();
    const bad = share.badKey!;
    const failing = () => e.outbox.rows().find((r) => r.key === bad && r.state === 'pending');
    expect(failing()?.last_error).toMatch(/does not match/);
    let stalledAt: number | undefined;
    for (let n = 0; n < 25 && stalledAt === undefined; n++) {
      const s = await minute(e, fx, clock, n);
      // The other units move every minute: the old rule alone said healthy for good.
      expect(s.recentItems).toBeGreaterThan(0);
      if (clock.now - firstMs < WINDOW) expect(s.healthy, `minute ${n + 1}`).toBe(true);
      else if (!s.healthy) stalledAt = clock.now;
    }
    expect(stalledAt, 'stalled once the step failed a whole window').toBe(firstMs + WINDOW);
    const s = e.status();
    expect(s.lastError).toMatch(new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has failed since 2026-12-05T08:00:00.000Z while HQ took other requests \\(\\d+ attempts\\): .*does not match`));
    // Said once, not again as the error of the steps that wait.
    expect(s.lastError!.match(/does not match/g)).toHaveLength(1);
    // `sync status` reads the same from the outbox.
    expect(s.problems).toEqual(['step']);
    expect(statusFromOutbox(fx, clock.now)).toMatchObject({ healthy: false, problems: ['step'], lastError: s.lastError });

    // A restart does not start the count again.
    await e.close();
    e = open();
    expect(e.status().healthy).toBe(false);
    expect((await minute(e, fx, clock, 30)).healthy).toBe(false);
    expect(e.status().lastError).toContain('since 2026-12-05T08:00:00.000Z');

    // The share mended: the step goes at its next retry, and health with it.
    share.corrupt = false;
    const mended = await minute(e, fx, clock, 31);
    expect(failing()).toBeUndefined();
    expect(mended.healthy).toBe(true);
    expect(mended.lastError).toBeNull();
    expect(statusFromOutbox(fx, clock.now)).toMatchObject({ healthy: true, lastError: null });
    await e.close();
  }, 120_000);

  it('a failure that then succeeds, even after most of a window, does not stall health', async () => {
    const { fx, share, clock, open } = setup('42');
    const e = open();
    const firstMs = clock.now;
    await e.enqueueSnapshotSync();
    await e.runOnce();
    expect(share.badKey).toBeDefined();
    for (let n = 0; n < 18; n++) {
      // Corrupt for 14 of the window's 15 minutes, then fine.
      share.corrupt = clock.now + MINUTE - firstMs < WINDOW - MINUTE;
      const s = await minute(e, fx, clock, n);
      expect(s.healthy, `minute ${n + 1}`).toBe(true);
      // Still failing, while HQ answers, 13 minutes in.
      if (n === 12) expect(e.outbox.rows().find((r) => r.key === share.badKey && r.state === 'pending')?.attempts).toBeGreaterThan(10);
    }
    expect(e.outbox.rows().filter((r) => r.state === 'pending')).toEqual([]);
    expect(e.status()).toMatchObject({ healthy: true, lastError: null });
    await e.close();
  }, 120_000);

  it('steps that failed while HQ was down do not hold health back once the line is up and others move', async () => {
    const { fx, share, clock, open } = setup('43');
    const e = open();
    await e.enqueueSnapshotSync();
    share.corrupt = false;
    for (let i = 0; i < 20 && e.status().pendingItems > 0; i++) {
      clock.now += 1000;
      await e.runOnce();
    }
    expect(e.status().pendingItems).toBe(0);
    // The line is down for 20 minutes: every step fails (a run tag's, which nothing supersedes),
    // health stalls (nothing moves).
    share.down = true;
    fx.table('stock').createTag('agent-1');
    for (let n = 0; n < 20; n++) {
      clock.now += MINUTE;
      await e.enqueueSnapshotSync();
      await e.runOnce();
    }
    expect(e.status().healthy).toBe(false);
    expect(e.outbox.rows().some((r) => r.state === 'pending' && r.attempts > 1)).toBe(true);
    // Back up: a second later new steps go while the old ones wait for their retry (up to a minute).
    share.down = false;
    const back = await minute(e, fx, clock, 20, 1000);
    expect(e.outbox.rows().some((r) => r.state === 'pending' && r.attempts > 1)).toBe(true);
    expect(back.recentItems).toBeGreaterThan(0);
    expect(back.healthy).toBe(true);
    // And once they are due they go.
    clock.now += MINUTE;
    await e.runOnce();
    expect(e.status()).toMatchObject({ healthy: true, pendingItems: 0 });
    await e.close();
  }, 120_000);
});
