// How long HQ has been behind (`behind_ms`, status's oldestUnsyncedMs) when a pending unit is
// replaced by one of the same name while the line is down: a snapshot unit planned again after
// the site rolled its table back (the next commit takes the id of the one rolled back), and a tag
// moved to another snapshot while its first version waits. HQ got neither version, so the new
// unit waits since the first one was planned, as a superseding snapshot unit does
// (outage-health.test.ts). Time is a simulated clock.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { SyncEngine } from './engine.ts';
import { SyncError } from './errors.ts';
import { drain, faultyTarget, healthSite, MINUTE, WINDOW } from './test-support/health-site.ts';
import { writeStock } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

/** A site and a directory HQ behind a line the test controls (`down` refuses every request). */
function setup(id: string) {
  const line = { down: false };
  const s = healthSite(id, cleanup, {
    target: (inner) =>
      faultyTarget(inner, () => {
        if (line.down) throw new SyncError('Transport', 'connect ENETUNREACH');
      }),
  });
  return { fx: s.fx, line, clock: s.clock, e: s.open() };
}

async function round(e: SyncEngine): Promise<void> {
  await e.enqueueSnapshotSync();
  await drain(e);
}

describe('behind_ms across a unit planned again under the same name', () => {
  it('a snapshot unit planned again after a rollback keeps when HQ fell behind', async () => {
    const { fx, line, clock, e } = setup('90');
    const stock = fx.table('stock');
    stock.createTag('good', stock.latestSnapshot()!.id);
    await round(e);
    expect(e.status().pendingItems).toBe(0);
    // The line goes down; the next commit waits for HQ from now.
    line.down = true;
    const fellBehindMs = clock.now + MINUTE;
    clock.now = fellBehindMs;
    const waiting = writeStock(fx, 30, 40, 2);
    await round(e);
    expect(e.outbox.pendingUnits('snapshot:stock:')).toEqual([`snapshot:stock:${waiting}`]);
    // Ten minutes on, the operator rolls stock back to `good`, and the site's next commit takes the
    // id of the one rolled back: the same unit name, other bytes, planned again.
    clock.now += 10 * MINUTE;
    const w = stock.newWriter();
    w.rollbackTo('good');
    w.close();
    expect(writeStock(fx, 40, 45, 3)).toBe(waiting);
    await round(e);
    expect(e.outbox.pendingUnits('snapshot:stock:')).toEqual([`snapshot:stock:${waiting}`]);
    // HQ has had neither version: it has been behind since the first was planned.
    expect(e.status().oldestUnsyncedMs).toBe(clock.now - fellBehindMs);
    clock.now = fellBehindMs + WINDOW;
    await round(e);
    expect(e.status()).toMatchObject({ healthy: false, problems: ['waiting'] });
    // The line back: the site's snapshot reaches HQ, health with it.
    line.down = false;
    clock.now += MINUTE;
    await round(e);
    expect(e.status()).toMatchObject({ pendingItems: 0, healthy: true, oldestUnsyncedMs: 0 });
    await e.close();
  });

  it('a tag moved while its first version waits keeps when HQ fell behind for it', async () => {
    const { fx, line, clock, e } = setup('91');
    const stock = fx.table('stock');
    await round(e);
    line.down = true;
    const fellBehindMs = clock.now + MINUTE;
    clock.now = fellBehindMs;
    stock.createTag('baseline', stock.latestSnapshot()!.id);
    await round(e);
    expect(e.outbox.pendingUnits('tag:stock:')).toEqual(['tag:stock:baseline']);
    // Ten minutes on, the operator moves baseline to a new snapshot (whose own unit waits from now).
    clock.now += 10 * MINUTE;
    const moved = writeStock(fx, 30, 40, 2);
    stock.deleteTag('baseline');
    stock.createTag('baseline', moved);
    await round(e);
    const tagRows = e.outbox.rows().filter((r) => r.unit === 'tag:stock:baseline' && r.state === 'pending');
    expect(tagRows.find((r) => r.op === 'pointer')?.body?.toString()).toContain(`"id" : ${moved}`);
    // HQ has had no baseline since the first version was planned.
    expect(e.status().oldestUnsyncedMs).toBe(clock.now - fellBehindMs);
    line.down = false;
    clock.now += MINUTE;
    await round(e);
    expect(e.status()).toMatchObject({ pendingItems: 0, healthy: true, oldestUnsyncedMs: 0 });
    await e.close();
  });
});
