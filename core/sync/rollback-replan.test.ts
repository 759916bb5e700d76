// A snapshot unit planned again after the site rolled its table back (the next commit took the id
// of the one rolled back) while the line is down: the old unit's cancel and the new unit's steps
// are one transaction. Cancelled apart, a process killed between the two left the old unit
// cancelled and nothing planned: the next planning found no unit pending of that name, planned it
// as new, and HQ's wait restarted — health read healthy for another window of the outage
// (behind-carry.test.ts has the same without the crash). Time is a simulated clock.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SyncError } from './errors.ts';
import { drain, faultyTarget, healthSite, MINUTE, WINDOW } from './test-support/health-site.ts';
import { writeStock } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

describe('a rollback planned again while HQ is unreachable', () => {
  it('a crash between cancelling the unit rolled back and planning it again keeps when HQ fell behind', async () => {
    const line = { down: false };
    const s = healthSite('95', cleanup, {
      target: (inner) =>
        faultyTarget(inner, () => {
          if (line.down) throw new SyncError('Transport', 'connect ENETUNREACH');
        }),
    });
    const stock = s.fx.table('stock');
    stock.createTag('good', stock.latestSnapshot()!.id);
    let e = s.open();
    await e.enqueueSnapshotSync();
    await drain(e);
    expect(e.status().pendingItems).toBe(0);

    line.down = true;
    const fellBehindMs = s.clock.now + MINUTE;
    s.clock.now = fellBehindMs;
    const waiting = writeStock(s.fx, 30, 40, 2);
    await e.enqueueSnapshotSync();
    await drain(e);
    const unit = `snapshot:stock:${waiting}`;
    expect(e.outbox.pendingUnits('snapshot:stock:')).toEqual([unit]);

    // The operator rolls stock back; the next commit takes the rolled back one's id.
    s.clock.now += 10 * MINUTE;
    const w = stock.newWriter();
    w.rollbackTo('good');
    w.close();
    expect(writeStock(s.fx, 40, 45, 3)).toBe(waiting);
    // The process dies as the new unit's steps are written (here: their insert throws, as the
    // process would stop there), after the old unit's cancel was issued.
    const add = e.outbox.add.bind(e.outbox);
    e.outbox.add = () => {
      throw new Error('killed');
    };
    await e.enqueueSnapshotSync();
    e.outbox.add = add;
    // What the dead process left: the old unit still pending, not cancelled without a successor.
    expect(e.outbox.pendingUnits('snapshot:stock:')).toEqual([unit]);
    await e.close();

    // The restart plans it again, and HQ has been behind since the first version was planned.
    e = s.open();
    s.clock.now += MINUTE;
    await e.enqueueSnapshotSync();
    expect(e.outbox.pendingUnits('snapshot:stock:')).toEqual([unit]);
    const pointer = e.outbox.rows().find((r) => r.unit === unit && r.state === 'pending' && r.op === 'pointer' && r.key!.includes('snapshot/snapshot-'));
    expect(pointer?.body?.toString()).toBe(stock.fileIO.readFileIfExists(stock.paths.snapshotFile(waiting))!.toString());
    expect(e.status().oldestUnsyncedMs).toBe(s.clock.now - fellBehindMs);
    s.clock.now = fellBehindMs + WINDOW;
    await e.enqueueSnapshotSync();
    expect(e.status()).toMatchObject({ healthy: false, problems: ['waiting'] });

    // The line back: the site's snapshot reaches HQ, health with it.
    line.down = false;
    s.clock.now += MINUTE;
    await e.enqueueSnapshotSync();
    await drain(e);
    expect(e.status()).toMatchObject({ pendingItems: 0, healthy: true, oldestUnsyncedMs: 0 });
    await e.close();
  });
});
