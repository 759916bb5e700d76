// Child process of inbox-log-crash.test.ts: runs one inbox scenario on a data directory and is
// killed (SIGKILL, by itself) at the one moment the test is about: after an operation's
// approval_inbox commit and before its decision_log commit. Usage: inbox-child.ts <dir> <scenario>.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { Catalog } from '../../../core/lsm/index.ts';
import { DecisionLog } from '../../../core/inbox/decision-log.ts';
import { Inbox } from '../../../core/inbox/inbox.ts';
import { situationKey, type ProposalInput } from '../../../core/inbox/proposal.ts';
import { UserStore } from '../../../core/inbox/users.ts';

export const CHILD_DB = 'site_s1';
export const CHILD_T0 = Date.UTC(2026, 11, 1, 8, 0, 0);
export const SCENARIOS = ['submit', 'approve', 'reject', 'command'] as const;

export function childInput(job: string, runId: string): ProposalInput {
  return {
    situationKey: situationKey('assign-job', 'assign_job', { job_id: job }),
    ruleId: 'assign-job',
    ruleVersion: '2',
    action: 'assign_job',
    module: 'operations',
    params: { job_id: job, resource_id: 'M-1' },
    risk: 'low',
    riskReason: 'reversible',
    explanation: `start ${job} on M-1`,
    evidence: [],
    runId,
  };
}

export function childUsers(dir: string): { db: Database.Database; users: UserStore } {
  const db = new Database(join(dir, 'site.db'));
  return { db, users: new UserStore(db, { scrypt: { N: 1 << 10, r: 8, p: 1 } }) };
}

/** From here on, the next decision_log commit kills the process instead. */
function dieAtNextLogCommit(): void {
  DecisionLog.prototype.commit = function () {
    process.kill(process.pid, 'SIGKILL');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000); // the signal ends this
  };
}

async function main(): Promise<void> {
  const [dir, scenario] = process.argv.slice(2) as [string, (typeof SCENARIOS)[number]];
  let now = CHILD_T0;
  const { users } = childUsers(dir);
  await users.add({ name: 'lena', role: 'shift_lead', pin: '2580' });
  const inbox = Inbox.open({
    catalog: new Catalog(join(dir, 'warehouse'), { clock: () => now }),
    database: CHILD_DB,
    users,
    recheck: () => ({ holds: true, snapshots: { work_queue: 3 } }),
    clock: () => now,
    onWarning: (m) => process.stderr.write(`${m}\n`),
  });
  inbox.submit({ runId: 'r1', proposals: ['J-1', 'J-2'].map((j) => childInput(j, 'r1')), withdrawals: [] });
  now += 60_000;
  if (scenario === 'submit') {
    dieAtNextLogCommit();
    inbox.submit({ runId: 'r2', proposals: ['J-3', 'J-4'].map((j) => childInput(j, 'r2')), withdrawals: [{ id: 'P-r1-2', reason: 'J-2 started' }] });
  } else if (scenario === 'approve') {
    dieAtNextLogCommit();
    await inbox.decide('P-r1-1', 'approve', { user: 'lena', pin: '2580', comment: 'go' });
  } else if (scenario === 'reject') {
    dieAtNextLogCommit();
    await inbox.decide('P-r1-1', 'reject', { user: 'lena', pin: '2580', comment: 'not now' });
  } else if (scenario === 'command') {
    await inbox.decide('P-r1-1', 'approve', { user: 'lena', pin: '2580' });
    now += 1_000;
    dieAtNextLogCommit();
    inbox.markCommand('P-r1-1', 'sent');
  }
  process.stderr.write('the scenario ended without the kill\n');
  process.exit(3);
}

if (process.argv[1] === import.meta.filename) {
  main().catch((e) => {
    process.stderr.write(`${(e as Error).stack}\n`);
    process.exit(2);
  });
}
