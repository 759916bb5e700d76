// A deferred proposal decided later: its `decision-<id>` tag was made by the deferral, with the
// retention then in force, counted from then. The final decision (approve, reject, stale) is kept
// `decisionEvidenceRetentionMs` from that decision, as every decision is (DESIGN.md, decide step 5).
// Before, the deferral's tag was taken as it was: near the one-hour minimum retention an approval
// 50 minutes after the deferral kept its evidence 10 minutes, one 70 minutes after it (the tag
// expired, not yet deleted) not at all; and a retention lowered since the deferral kept the
// approval's evidence a year.
import { expect, it } from 'vitest';
import { tagTimeLeftMs, type Table } from '../lsm/index.ts';
import { DB, inboxTest, proposalInput } from './test-support.ts';

const test = inboxTest('tilstand-deferral-evidence-');
const HOUR = 3600_000;

/** work_queue with J-1 at snapshot 1 (kept `snapshot.time-retained`), the agent's run tag on it. */
function workQueue(o: Record<string, string> = {}): Table {
  const wq = test.catalog.createTable({ database: DB, table: 'work_queue' }, { fields: [{ name: 'job_id', type: 'STRING NOT NULL' }], primaryKeys: ['job_id'], options: { bucket: '1', ...o } });
  const w = wq.newWriter();
  w.writeRecord({ job_id: 'J-1' });
  w.commit();
  w.close();
  wq.createTag('agent-r1', 1, 7 * 24 * HOUR);
  return wq;
}

/** A commit of another row, with the table's expiration after it (as the ingestor's). */
function commitAndExpire(wq: Table, job: string): void {
  const w = wq.newWriter();
  w.writeRecord({ job_id: job });
  w.commit();
  w.expire();
  w.close();
}

const cited = () => proposalInput('J-1', 'r1', { evidence: [{ table: 'work_queue', snapshotId: 1, tag: 'agent-r1', rows: [{ key: { job_id: 'J-1' }, values: { job_id: 'J-1' } }] }] });

it('an approval 50 minutes after a deferral keeps its evidence an hour from the approval (the 1 h minimum), not 10 minutes', async () => {
  const inbox = test.open({ decisionEvidenceRetentionMs: HOUR, recheck: () => ({ holds: true, snapshots: { work_queue: 1 } }) }); // creates the database
  const wq = workQueue();
  const [p] = inbox.submit({ runId: 'r1', proposals: [cited()], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'defer', { user: 'lena', pin: '1111' });
  test.now += 50 * 60_000;
  expect((await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
  const tag = wq.tags.get(`decision-${p!.id}`);
  expect(tag.snapshot.id).toBe(1);
  expect(tagTimeLeftMs(tag, test.now)).toBe(HOUR); // was 10 min: the deferral's hour
  // 30 minutes on, the table's expiration keeps it (it deleted it).
  test.now += 30 * 60_000;
  commitAndExpire(wq, 'J-2');
  expect(wq.scanRows({ tag: `decision-${p!.id}` })).toEqual([['J-1']]);
});

it("a rejection after the deferral's tag expired (not yet deleted) keeps the evidence: made anew from the run tag", async () => {
  // Snapshot 1's file expires with the next commit: only the tags hold it then.
  const warnings: string[] = [];
  const inbox = test.open({ decisionEvidenceRetentionMs: HOUR, onWarning: (m) => void warnings.push(m) });
  const wq = workQueue({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '1', 'snapshot.time-retained': '1 ms' });
  const [p] = inbox.submit({ runId: 'r1', proposals: [cited()], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'defer', { user: 'lena', pin: '1111' });
  test.now += 10 * 60_000;
  commitAndExpire(wq, 'J-2'); // snapshot 1's file goes; the two tags hold it
  test.now += 60 * 60_000; // the deferral's tag expired 10 minutes ago; no commit since
  expect(wq.tags.exists(`decision-${p!.id}`)).toBe(true);
  expect((await inbox.decide(p!.id, 'reject', { user: 'lena', pin: '1111' })).outcome).toBe('rejected');
  expect(warnings).toEqual([]);
  expect(tagTimeLeftMs(wq.tags.get(`decision-${p!.id}`), test.now)).toBe(HOUR);
  test.now += 5 * 60_000;
  commitAndExpire(wq, 'J-3'); // deleted the expired tag, and with it the rejection's evidence
  expect(wq.scanRows({ tag: `decision-${p!.id}` })).toEqual([['J-1']]);
});

it('a retention lowered since the deferral holds for the decision made after it (the tag is not kept the old year)', async () => {
  const inbox = test.open({ decisionEvidenceRetentionMs: 365 * 24 * HOUR });
  const wq = workQueue();
  const [p] = inbox.submit({ runId: 'r1', proposals: [cited()], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'defer', { user: 'lena', pin: '1111' });
  expect(wq.tags.get(`decision-${p!.id}`).retainedMillis).toBe(365 * 24 * HOUR);
  inbox.setDecisionEvidenceRetention(2 * HOUR); // config.json evidence.decisionsMs, reloaded
  test.now += HOUR;
  await inbox.decide(p!.id, 'reject', { user: 'lena', pin: '1111' });
  const tag = wq.tags.get(`decision-${p!.id}`);
  expect(tag.retainedMillis).toBe(2 * HOUR); // was a year from the deferral
  expect(tagTimeLeftMs(tag, test.now)).toBe(2 * HOUR);
});

it('a deferral tag near its end that nothing else holds is left as it is, and said', async () => {
  const warnings: string[] = [];
  const inbox = test.open({ decisionEvidenceRetentionMs: HOUR, onWarning: (m) => void warnings.push(m) });
  const wq = workQueue({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '1', 'snapshot.time-retained': '1 ms' });
  const [p] = inbox.submit({ runId: 'r1', proposals: [cited()], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'defer', { user: 'lena', pin: '1111' });
  wq.deleteTag('agent-r1'); // the run tag gone (the site was off past it)
  commitAndExpire(wq, 'J-2'); // and snapshot 1's file: the deferral's tag alone holds it
  test.now += 40 * 60_000;
  expect((await inbox.decide(p!.id, 'reject', { user: 'lena', pin: '1111' })).outcome).toBe('rejected');
  expect(warnings).toEqual([expect.stringMatching(new RegExp(`the evidence of ${p!.id} in work_queue is kept only until tag decision-${p!.id} expires \\(20 min\\)`))]);
  expect(wq.scanRows({ tag: `decision-${p!.id}` })).toEqual([['J-1']]);
});
