// A process that stops between a decision's commit and the tags that keep its evidence: the
// decision is in approval_inbox (the next open rebuilds its log entries, log-recovery.ts), and
// nothing at the next open makes its `decision-<id>` and `checked-<id>` tags. Without them the
// run tag, no longer renewed once the proposal is decided, expires within days, and the checked
// snapshot within the hour: the record of an approval without what it was decided on. So the tags
// are made before the decision is committed.
import { expect, it } from 'vitest';
import { readProposal } from './inbox.ts';
import { DB, inboxTest, proposalInput as assignJ1 } from './test-support.ts';

const test = inboxTest('tilstand-decision-tags-');

/** J-1's assignment, citing J-1 at work_queue's snapshot 1 under the run tag. */
const proposalInput = () => assignJ1('J-1', 'r1', { evidence: [{ table: 'work_queue', snapshotId: 1, tag: 'agent-r1', rows: [{ key: { job_id: 'J-1' }, values: { job_id: 'J-1' } }] }] });

it("a decision committed by a process that stops before the log commit has its evidence and checked tags already", async () => {
  const catalog = test.catalog;
  const inbox = test.open({ recheck: () => ({ holds: true, snapshots: { work_queue: 1 } }) });
  const wq = catalog.createTable({ database: DB, table: 'work_queue' }, { fields: [{ name: 'job_id', type: 'STRING NOT NULL' }], primaryKeys: ['job_id'], options: { bucket: '1' } });
  const w = wq.newWriter();
  w.writeRecord({ job_id: 'J-1' });
  w.commit();
  w.close();
  wq.createTag('agent-r1', 1, 3600_000);
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput()], withdrawals: [] }).created;
  // The process stops inside the log's commit: the inbox's is done (as in
  // test/reliability/inbox-log-crash.test.ts, where a child is killed there).
  const log = (inbox as unknown as { log: { commit: () => void } }).log;
  const commit = log.commit.bind(log);
  log.commit = () => {
    throw new Error('killed in the log commit');
  };
  await expect(inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).rejects.toThrow(/killed/);
  expect(readProposal(inbox.table, p!.id)!.status).toBe('approved'); // committed: it stands after a restart
  expect(wq.tags.exists(`decision-${p!.id}`)).toBe(true);
  expect(wq.tags.exists(`checked-${p!.id}`)).toBe(true);
  log.commit = commit;
  inbox.close();
});

it('the checked tag of an approval whose commit never happened gives way to the approval made instead, at the state that one checked', async () => {
  const catalog = test.catalog;
  let checked = 1;
  const options = { recheck: () => ({ holds: true as const, snapshots: { work_queue: checked } }) };
  const first = test.open(options);
  const wq = catalog.createTable({ database: DB, table: 'work_queue' }, { fields: [{ name: 'job_id', type: 'STRING NOT NULL' }], primaryKeys: ['job_id'], options: { bucket: '1' } });
  const w = wq.newWriter();
  w.writeRecord({ job_id: 'J-1' });
  w.commit();
  wq.createTag('agent-r1', 1, 3600_000);
  const [p] = first.submit({ runId: 'r1', proposals: [proposalInput()], withdrawals: [] }).created;
  // The process stops before the approval's commit: nothing of it is on disk but its tags.
  const writer = (first as unknown as { writer: { commit: () => void } }).writer;
  writer.commit = () => {
    throw new Error('killed before the commit');
  };
  await expect(first.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).rejects.toThrow(/killed/);
  expect(() => first.close()).toThrow(/killed/);
  expect(wq.tags.get(`checked-${p!.id}`).snapshot.id).toBe(1);
  // The state moves on; after the restart the proposal is open, and approved against snapshot 2.
  w.writeRecord({ job_id: 'J-2' });
  w.commit();
  w.close();
  checked = 2;
  const second = test.open(options);
  expect(second.get(p!.id)!.status).toBe('open');
  expect((await second.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
  expect(second.get(p!.id)!.decision!.snapshots.checked).toEqual({ work_queue: 2 });
  expect(wq.tags.get(`checked-${p!.id}`).snapshot.id).toBe(2);
  expect(wq.tags.get(`decision-${p!.id}`).snapshot.id).toBe(1);
  second.close();
});
