// Child process of inbox-log-crash.test.ts. Two modes:
//   inbox-child.ts <dir> <scenario>      one inbox scenario, killed (SIGKILL, by itself) at the one
//                                        moment the test is about: after an operation's approval_inbox
//                                        commit and before its decision_log commit;
//   inbox-child.ts <dir> random <seed> [inline|deferred]
//                                        seeded random inbox operations (agent runs with
//                                        withdrawals, approvals, rejections, deferrals, stale
//                                        approvals, refusals, command progress) until the parent kills it,
//                                        the tables compacting inline or, as on a site (core/site
//                                        decisions.ts), in slices between operations; prints `ready`
//                                        once open and `op <n> <slices> <compactions> <in flight>` after
//                                        each operation: the deferred compactions' slices run and
//                                        COMPACT snapshots committed so far, and 1 when a compaction
//                                        is planned or half done (0 inline).
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { Catalog, CompactionSlicer, TableWriter } from '../../../core/lsm/index.ts';
import { DecisionLog } from '../../../core/inbox/decision-log.ts';
import { Inbox } from '../../../core/inbox/inbox.ts';
import { situationKey, type CommandState, type ProposalInput } from '../../../core/inbox/proposal.ts';
import { mulberry32 } from '../../../core/lsm/testing/prng.ts';
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

const NEXT_STATES: Record<string, CommandState[]> = { pending: ['sent', 'failed'], sent: ['acknowledged', 'applied', 'failed', 'timed_out'], acknowledged: ['applied', 'failed'], timed_out: ['applied', 'failed'] };

/** Counts the deferred compactions' slices and commits, and keeps the writers that had one planned. */
function watchDeferredCompaction(): () => string {
  const writers = new Set<TableWriter>();
  let slices = 0;
  let compactions = 0;
  const after = CompactionSlicer.prototype.after;
  CompactionSlicer.prototype.after = function (w, hooks) {
    writers.add(w);
    after.call(this, w, hooks);
  };
  const step = TableWriter.prototype.compactStep;
  TableWriter.prototype.compactStep = function (budgetMs) {
    slices++;
    const r = step.call(this, budgetMs);
    if (r.snapshotId !== undefined) compactions++;
    return r;
  };
  return () => `${slices} ${compactions} ${[...writers].some((w) => w.compacting) ? 1 : 0}`;
}

async function random(dir: string, seed: number, compaction: 'inline' | 'deferred'): Promise<void> {
  const rnd = mulberry32(seed);
  const compactionState = compaction === 'deferred' ? watchDeferredCompaction() : () => '0 0 0';
  const pick = <T>(xs: readonly T[]): T | undefined => (xs.length === 0 ? undefined : xs[Math.floor(rnd() * xs.length)]);
  const db = new Database(join(dir, 'site.db'));
  const users = new UserStore(db, { scrypt: { N: 1 << 10, r: 8, p: 1 }, failuresMax: 1_000_000 });
  if (!users.get('lena')) await users.add({ name: 'lena', role: 'shift_lead', pin: '2580' });
  if (!users.get('olaf')) await users.add({ name: 'olaf', role: 'operator', pin: '3690' });
  const inbox = Inbox.open({
    catalog: new Catalog(join(dir, 'warehouse')),
    database: CHILD_DB,
    users,
    recheck: () => (rnd() < 0.2 ? { holds: false, reason: 'the job changed', snapshots: { work_queue: 9 } } : { holds: true, snapshots: { work_queue: 9 } }),
    resuggestAfterDecisionMs: 0,
    compaction,
    onWarning: (m) => process.stderr.write(`${m}\n`),
  });
  process.stdout.write('ready\n');
  for (let n = 1; ; n++) {
    const r = rnd();
    const open = inbox.openProposals();
    if (r < 0.3 || open.length === 0) {
      const runId = `${process.pid}-${n}`;
      const jobs = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => `J-${Math.floor(rnd() * 40)}`);
      const withdrawals = open.filter(() => rnd() < 0.15).map((p) => ({ id: p.id, reason: 'resolved' }));
      inbox.submit({ runId, proposals: jobs.map((j) => childInput(j, runId)), withdrawals });
    } else if (r < 0.75) {
      const p = pick(open)!;
      const verb = pick(['approve', 'approve', 'reject', 'defer'] as const)!;
      const who = rnd() < 0.1 ? { user: 'olaf', pin: '3690' } : rnd() < 0.1 ? { user: 'lena', pin: '0000' } : { user: 'lena', pin: '2580' };
      await inbox.decide(p.id, verb, { ...who, comment: `c${n}` }).catch((e: Error) => {
        if (!/refused/.test(e.message)) throw e;
      });
    } else {
      const p = pick(inbox.commandsInFlight());
      const to = p?.command && pick(NEXT_STATES[p.command.state] ?? []);
      if (p && to) inbox.markCommand(p.id, to, rnd() < 0.5 ? null : `d${n}`, pick(['write-back', 'operations'])!);
    }
    process.stdout.write(`op ${n} ${compactionState()}\n`);
    await new Promise((res) => setImmediate(res));
  }
}

async function main(): Promise<void> {
  const [dir, scenario, seed, compaction = 'inline'] = process.argv.slice(2) as [string, (typeof SCENARIOS)[number] | 'random', string | undefined, string?];
  if (scenario === 'random') {
    if (compaction !== 'inline' && compaction !== 'deferred') throw new Error(`compaction: expected inline or deferred, got ${compaction}`);
    return random(dir, Number(seed), compaction);
  }
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
