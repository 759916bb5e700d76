// The tables a decision tags (`decision-<id>`, `checked-<id>`) are opened once per inbox, not per
// decision. A Table opened afresh has empty tag and snapshot caches: a decision whose evidence
// snapshot had expired (a proposal left an hour or more) listed the table's tags to find the one
// holding it, reading every tag file — hundreds to thousands on a site (agent run tags kept a week,
// decision tags a year) — and every approval opened 4–5 tables so (core/inbox DESIGN.md,
// "Tables a decision tags").
import { expect, it, vi } from 'vitest';
import { Table } from '../lsm/index.ts';
import { DB, inboxTest, proposalInput } from './test-support.ts';

const test = inboxTest('tilstand-evidence-tables-kept-');

it('decisions tag their evidence through one Table per table, opened once', async () => {
  const inbox = test.open({ recheck: () => ({ holds: true, snapshots: { work_queue: 1 } }) }); // creates the database
  const wq = test.catalog.createTable({ database: DB, table: 'work_queue' }, { fields: [{ name: 'job_id', type: 'STRING NOT NULL' }], primaryKeys: ['job_id'], options: { bucket: '1' } });
  const w = wq.newWriter();
  w.writeRecord({ job_id: 'J-1' });
  w.commit();
  w.close();
  wq.createTag('agent-r1', 1, 7 * 24 * 3600_000);
  const cite = (job: string) => proposalInput(job, 'r1', { evidence: [{ table: 'work_queue', snapshotId: 1, tag: 'agent-r1', rows: [] }] });
  const created = inbox.submit({ runId: 'r1', proposals: ['J-1', 'J-2', 'J-3', 'J-4'].map(cite), withdrawals: [] }).created;
  const opens = vi.spyOn(Table, 'open');
  try {
    await inbox.decide(created[0]!.id, 'approve', { user: 'lena', pin: '1111' });
    await inbox.decide(created[1]!.id, 'reject', { user: 'lena', pin: '1111' });
    await inbox.decide(created[2]!.id, 'defer', { user: 'lena', pin: '1111' });
    await inbox.decide(created[3]!.id, 'approve', { user: 'lena', pin: '1111' });
    // Before: one open per evidence table and per checked table of each decision (6 here).
    expect(opens.mock.calls.length, 'tables opened by four decisions').toBe(1);
  } finally {
    opens.mockRestore();
  }
  for (const p of created) expect(wq.tags.exists(`decision-${p.id}`)).toBe(true);
  expect(wq.tags.exists(`checked-${created[0]!.id}`)).toBe(true);
  expect(wq.tags.exists(`checked-${created[3]!.id}`)).toBe(true);
});
