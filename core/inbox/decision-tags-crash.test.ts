// A process that stops between a decision's commit and the tags that keep its evidence: the
// decision is in approval_inbox (the next open rebuilds its log entries, log-recovery.ts), and
// nothing at the next open makes its `decision-<id>` and `checked-<id>` tags. Without them the
// run tag, no longer renewed once the proposal is decided, expires within days, and the checked
// snapshot within the hour: the record of an approval without what it was decided on. So the tags
// are made before the decision is committed.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { Inbox, readProposal } from './inbox.ts';
import { situationKey, type ProposalInput } from './proposal.ts';
import { UserStore } from './users.ts';

const DB = 'site_s1';
const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);
let dir: string;
let db: Database.Database;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-decision-tags-'));
  db = new Database(join(dir, 'site.db'));
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function proposalInput(): ProposalInput {
  return {
    situationKey: situationKey('assign-job', 'assign_job', { job_id: 'J-1' }),
    ruleId: 'assign-job',
    ruleVersion: '1',
    action: 'assign_job',
    module: 'operations',
    params: { job_id: 'J-1', resource_id: 'M-1' },
    risk: 'low',
    riskReason: 'reversible',
    explanation: 'start J-1 on M-1',
    evidence: [{ table: 'work_queue', snapshotId: 1, tag: 'agent-r1', rows: [{ key: { job_id: 'J-1' }, values: { job_id: 'J-1' } }] }],
    runId: 'r1',
  };
}

it("a decision committed by a process that stops before the log commit has its evidence and checked tags already", async () => {
  const now = T0;
  const catalog = new Catalog(join(dir, 'warehouse'), { clock: () => now });
  const users = new UserStore(db, { scrypt: { N: 1 << 10, r: 8, p: 1 }, nowMs: () => now });
  await users.add({ name: 'lena', role: 'shift_lead', pin: '1111' });
  const inbox = Inbox.open({ catalog, database: DB, users, recheck: () => ({ holds: true, snapshots: { work_queue: 1 } }), clock: () => now, onWarning: () => undefined });
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
  const now = T0;
  const catalog = new Catalog(join(dir, 'warehouse'), { clock: () => now });
  const users = new UserStore(db, { scrypt: { N: 1 << 10, r: 8, p: 1 }, nowMs: () => now });
  await users.add({ name: 'lena', role: 'shift_lead', pin: '1111' });
  let checked = 1;
  const options = { catalog, database: DB, users, recheck: () => ({ holds: true as const, snapshots: { work_queue: checked } }), clock: () => now, onWarning: () => undefined };
  const first = Inbox.open(options);
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
  const second = Inbox.open(options);
  expect(second.get(p!.id)!.status).toBe('open');
  expect((await second.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
  expect(second.get(p!.id)!.decision!.snapshots.checked).toEqual({ work_queue: 2 });
  expect(wq.tags.get(`checked-${p!.id}`).snapshot.id).toBe(2);
  expect(wq.tags.get(`decision-${p!.id}`).snapshot.id).toBe(1);
  second.close();
});
