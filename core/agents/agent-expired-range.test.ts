// The agent's re-check between runs when commits it has not checked yet expired meanwhile while
// its own Table object still held one of them parsed (core/lsm snapshot-manager's cache): the
// commits cannot be read one by one, so every proposal citing the table is re-checked ('all'),
// never a Corruption thrown out of the check for files expiration deleted.

import { afterEach, describe, expect, it } from 'vitest';
import { DB, TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

describe('recheckChanged across commits that expired', () => {
  it('re-checks every citing proposal when a commit of the range expired after the agent had read it', () => {
    // Two snapshots retained; no compaction, so each commit is one snapshot.
    site = new TestSite({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'num-sorted-run.compaction-trigger': '100', 'num-sorted-run.stop-trigger': '200' });
    site.job({ job_id: 'J-1', capability: 'pick' });
    site.job({ job_id: 'J-2', capability: 'pack' });
    site.resource('M-1', 'pick', 'free');
    site.resource('M-2', 'pack', 'free');
    site.commit();
    const { agent } = site.agentAndInbox();
    expect(agent.run().created).toHaveLength(2); // both cite work_queue and resources
    const runAt = site.catalog.getTable({ database: DB, table: 'work_queue' }).snapshots.latestId()!;

    // An unrelated job arrives; the inbox's age is asked (it reads the first unchecked commit).
    site.nowMs += 1_000;
    site.job({ job_id: 'J-9', capability: 'forklift', status: 'blocked', blocked_reason: 'waiting' });
    site.commit();
    expect(agent.oldestUncheckedCommitMs()).toBe(site.nowMs);
    // Two more commits before the next check: the first unchecked one expires with its files.
    for (let i = 0; i < 2; i++) {
      site.nowMs += 1_000;
      site.job({ job_id: `J-9${i}`, capability: 'forklift', status: 'blocked', blocked_reason: 'waiting' });
      site.commit();
    }
    const wq = site.catalog.getTable({ database: DB, table: 'work_queue' });
    expect(wq.snapshots.earliestId()).toBeGreaterThan(runAt + 1);

    const r = agent.recheckChanged();
    expect(r.changed).toContain('work_queue');
    // The changed keys cannot be told: both proposals are re-checked (J-9s alone would re-check none).
    expect(r.checked).toBe(2);
    expect(r.withdrawn).toEqual([]);
    // And the check moved on: nothing new, nothing read.
    expect(agent.recheckChanged()).toEqual({ changed: [], checked: 0, withdrawn: [] });
  });
});
