// A table's snapshot pointer that HQ refuses for good (a policy that forbids overwriting, a share
// that corrupts that file) while it takes the data files: the table commits every minute, so each
// planning supersedes the pending snapshot unit with a new one (new step ids), and each minute's
// files count as progress. The pointer's failing-since time passes to the newer unit's pointer, so
// health stalls a window after the first failure, naming the key; a refusal that ends within the
// window never shows. Time is a simulated clock: one commit, one planning and one run per
// simulated minute, a bounded number of them.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SyncError } from './errors.ts';
import { sitePrefix } from './names.ts';
import { drain, escapeRegExp as escape, faultyTarget, healthSite, MINUTE, stockMinute as minute, statusFromOutbox, WINDOW } from './test-support/health-site.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

/**
 * A directory HQ that, while `refuse` is set, answers every put of stock's snapshot JSON with a
 * refusal; `down` fails every request as a line that is down does.
 */
function setup(id: string) {
  const hqSide = { refuse: false, refused: 0, down: false };
  const s = healthSite(id, cleanup, {
    target: (inner, fx) => {
      const snapshots = `${sitePrefix(fx.site)}stock/snapshot/snapshot-`;
      return faultyTarget(inner, (request, key) => {
        if (hqSide.down) throw new SyncError('Transport', 'connect ENETUNREACH');
        if (request === 'putPointer' && hqSide.refuse && key.startsWith(snapshots)) {
          hqSide.refused++;
          throw new SyncError('Transport', 'HTTP 403 AccessDenied: the bucket policy forbids this write');
        }
      });
    },
  });
  return { ...s, hqSide };
}

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
