// Evidence of a proposal made after an ALTER that no commit had followed (the agent read, and
// recorded, the rows in that ALTER's columns while its tag's snapshot has the schema before), read
// again after a second ALTER: neither the snapshot's columns nor today's are the ones the agent
// saw, and the report said "ROWS AT THE TAG DIFFER FROM THE RECORD" of the very rows it read.
// Real tables (core/lsm), the real agent and inbox.
import { afterEach, expect, it } from 'vitest';
import { evidenceReport, formatEvidence } from '../inbox/index.ts';
import { DB, TestSite } from './test-support.ts';

let site: TestSite | undefined;
afterEach(() => {
  site?.close();
  site = undefined;
});

for (const [name, second] of [
  ['a column added', [{ kind: 'addColumn', name: 'zone', type: 'STRING' }]],
  ['the first ALTER\'s column renamed', [{ kind: 'renameColumn', from: 'note', to: 'remark' }]],
] as const) {
  it(`a second ALTER after the run (${name}): the evidence still reads as it was recorded`, () => {
    site = new TestSite();
    site.job({ job_id: 'J-1', priority: 3 });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    site.writers.work_queue.close();
    const wq = site.catalog.getTable({ database: DB, table: 'work_queue' });
    wq.alter([{ kind: 'addColumn', name: 'note', type: 'STRING' }]);
    const { agent } = site.agentAndInbox();
    const p = agent.run().created.find((x) => x.ruleId === 'assign-job')!;
    const recorded = p.evidence.find((e) => e.table === 'work_queue')!.rows;
    expect(recorded[0]!.values).toMatchObject({ job_id: 'J-1', note: null });
    wq.alter([...second]);
    site.writers.work_queue = wq.newWriter({ commitUser: 'test-ingest' });
    site.writers.work_queue.writeRecord({ job_id: 'J-1', status: 'in_progress', capability: 'pick', priority: 9, ops_seq: 1000n });
    site.commit();
    const report = evidenceReport(site.catalog, DB, p.id, { allRows: true });
    const t = report.tables.find((x) => x.table === 'work_queue')!;
    expect(t.problem).toBeUndefined();
    expect(t.atTag).toEqual(recorded);
    expect(t.allRows).toEqual(recorded);
    expect(t.matches).toBe(true);
    expect(formatEvidence(report)).not.toContain('DIFFER');
  });
}
