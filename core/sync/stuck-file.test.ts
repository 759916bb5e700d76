// A data file HQ refuses for good (a share that damages that one file: Verification at each
// attempt) while the table commits every minute: each planning supersedes the pending snapshot
// unit, and the new unit plans the same file again (same name = same content in Paimon) under a
// new step id. Its failing-since time passes to the new unit's step of that key, as the pointer's
// does (stuck-pointer.test.ts), so health stalls a window after the first failure, naming the
// file. Time is a simulated clock: one commit, one planning and one run per simulated minute, a
// bounded number of them.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SyncError } from './errors.ts';
import { drain, escapeRegExp as escape, faultyTarget, healthSite, stockMinute as minute, WINDOW } from './test-support/health-site.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

/** A directory HQ that, while `refuse` is set, damages every put of `bad` (a data file of stock's first snapshot). */
function setup(id: string) {
  const hqSide = { refuse: true, refused: 0, bad: '' };
  const s = healthSite(id, cleanup, {
    target: (inner) =>
      faultyTarget(inner, (request, key) => {
        if (request === 'put' && hqSide.refuse && key === hqSide.bad) {
          hqSide.refused++;
          throw new SyncError('Verification', `${key} at HQ does not match what was sent (the share damages it)`);
        }
      }),
  });
  // No compaction: the refused file stays in every later snapshot, as a file of a high level does
  // for a long time on a site (a compaction that rewrites it ends the refusal: the file is gone).
  s.fx.table('stock').alter([{ kind: 'setOption', key: 'write-only', value: 'true' }]);
  return { ...s, hqSide };
}

describe('a data file HQ refuses for good while each minute supersedes its unit', () => {
  it('stalls health a window after its first failure and names the file; mends when HQ takes it', async () => {
    const { fx, hqSide, clock, open } = setup('80');
    const e = open();
    await e.enqueueSnapshotSync();
    // The data file of stock's first unit to refuse: a put of a bucket file.
    const bad = e.outbox.rows().find((r) => r.unit.startsWith('snapshot:stock:') && r.op === 'put' && /\/bucket-\d+\/data-/.test(r.key ?? ''));
    expect(bad, 'a data file of stock is planned').toBeDefined();
    hqSide.bad = bad!.key!;
    await drain(e);
    const firstMs = clock.now;
    expect(hqSide.refused).toBe(1);
    let stalledAt: number | undefined;
    for (let n = 0; n < 25 && stalledAt === undefined; n++) {
      const s = await minute(e, fx, clock, n);
      // The refused file is in each new unit again (no compaction rewrote it), and the units
      // supersede one another.
      const pending = e.outbox.rows().filter((r) => r.state === 'pending');
      expect(new Set(pending.map((r) => r.unit)), `minute ${n + 1}`).toEqual(new Set([`snapshot:stock:${fx.table('stock').latestSnapshot()!.id}`]));
      expect(pending.some((r) => r.key === hqSide.bad), `minute ${n + 1}`).toBe(true);
      if (clock.now - firstMs < WINDOW) expect(s.healthy, `minute ${n + 1}`).toBe(true);
      else if (!s.healthy) stalledAt = clock.now;
    }
    expect(stalledAt, 'stalled once the file was refused a whole window').toBe(firstMs + WINDOW);
    const s = e.status();
    expect(s.problems).toContain('step');
    expect(s.lastError).toMatch(new RegExp(`^${escape(hqSide.bad)} has failed since ${escape(new Date(firstMs).toISOString())} while HQ took other requests \\(\\d+ attempts\\): .*damages it`));

    // HQ takes the file again: the next minute's unit goes whole, and health with it.
    hqSide.refuse = false;
    expect(await minute(e, fx, clock, 30)).toMatchObject({ pendingItems: 0, healthy: true, lastError: null, problems: [] });
    expect(e.outbox.getState('stuckStep')).toBeUndefined();
    await e.close();
  }, 120_000);
});
