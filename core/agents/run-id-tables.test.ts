// Run ids after a restart with the clock behind, on a site whose work queue has no snapshot.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, compareRunIds } from './agent.ts';
import { DB, T0, TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

describe('run ids on a site without work-queue commits', () => {
  it('continue after the newest run tag of any table after a restart behind it, and the restart diffs from that run', () => {
    site = new TestSite();
    // A site with no operations module: only stock commits, so only stock carries run tags.
    site.stock('BOLT', 'A', { on_hand: 20 });
    site.writers.stock.commit();
    const { agent, inbox } = site.agentAndInbox();
    site.nowMs = T0 + 3600_000;
    const before = agent.run();
    expect(before.tags).toMatchObject({ work_queue: null, stock: `agent-${before.runId}` });

    // Restarted with the clock an hour behind (set back by hand, an NTP correction).
    site.nowMs = T0;
    const restarted = new Agent({ catalog: site.catalog, database: DB, inbox, clock: site.clock, onWarning: () => undefined });
    const first = restarted.run();
    expect(compareRunIds(first.runId, before.runId)).toBeGreaterThan(0);
    // And the newest run is the one a later restart takes as its baseline: BOLT falling to 2 after
    // it is a crossing, read from the newest tag rather than from the run before the clock stepped.
    site.stock('BOLT', 'A', { on_hand: 2 });
    site.writers.stock.commit();
    site.nowMs += 60_000;
    const second = restarted.run();
    expect(second.created.map((p) => p.params)).toEqual([{ item: 'BOLT', location: 'A', qty: 18, position_before: 2 }]);
    const third = new Agent({ catalog: site.catalog, database: DB, inbox, clock: site.clock, onWarning: () => undefined });
    site.nowMs += 60_000;
    expect(compareRunIds(third.run().runId, second.runId)).toBeGreaterThan(0);
  });
});
