// An approval whose commit failed (a full disk) stands in the inbox's memory and in the table
// writer, which commits it with the next commit; the person was told the error. Its command is not
// published before that commit: a restart in between forgets the approval (and its decision log
// entry), while the module would have carried it out with nothing on record.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { Catalog, TableWriter } from '../lsm/index.ts';
import { Inbox } from './inbox.ts';
import { situationKey, type ProposalInput } from './proposal.ts';
import { UserStore } from './users.ts';
import { WriteBack } from './write-back.ts';

const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);
let dir: string;
let db: Database.Database;
let inbox: Inbox;
const now = T0;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-approval-uncommitted-'));
  db = new Database(join(dir, 'site.db'));
  const users = new UserStore(db, { scrypt: { N: 1 << 10, r: 8, p: 1 }, nowMs: () => now });
  await users.add({ name: 'lena', role: 'shift_lead', pin: '1111' });
  inbox = Inbox.open({ catalog: new Catalog(join(dir, 'warehouse'), { clock: () => now }), database: 'site_s1', users, recheck: () => ({ holds: true, snapshots: {} }), clock: () => now, onWarning: () => undefined });
});

afterEach(() => {
  vi.restoreAllMocks();
  inbox.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const proposal: ProposalInput = {
  situationKey: situationKey('assign-job', 'assign_job', { job_id: 'J-1' }),
  ruleId: 'assign-job',
  ruleVersion: '1',
  action: 'assign_job',
  module: 'operations',
  params: { job_id: 'J-1', resource_id: 'M-1' },
  risk: 'low',
  riskReason: 'reversible',
  explanation: 'start it',
  evidence: [],
  runId: 'r1',
};

it('an approval whose commit failed is not published until a commit makes it durable', async () => {
  const published: string[] = [];
  const wb = new WriteBack({
    inbox,
    publish: async (_topic, payload) => {
      published.push((JSON.parse(payload) as { command_id: string }).command_id);
    },
    onAck: () => undefined,
    effectSeen: () => false,
    clock: () => now,
    onWarning: () => undefined,
  });
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposal], withdrawals: [] }).created;
  const commit = vi.spyOn(TableWriter.prototype, 'commit').mockImplementationOnce(() => {
    throw new Error('disk full');
  });
  await expect(inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).rejects.toThrow('disk full');
  commit.mockRestore();
  // The approval stands (a second try is told so) and waits for the next commit.
  expect(inbox.get(p!.id)).toMatchObject({ status: 'approved', command: { state: 'pending' } });
  wb.poll();
  await wb.resume();
  expect(published).toEqual([]);
  // The next operation's commit (here the agent's next run) makes it durable: then it is sent.
  inbox.submit({ runId: 'r2', proposals: [], withdrawals: [] });
  wb.poll();
  await vi.waitFor(() => expect(inbox.get(p!.id)!.command!.state).toBe('sent'));
  expect(published).toEqual([p!.id]);
  wb.stop();
});
