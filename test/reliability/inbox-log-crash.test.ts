// kill -9 between an inbox operation's two commits (approval_inbox, then decision_log): the next
// open rebuilds the lost log entries from approval_inbox (core/inbox/log-recovery.ts), so a
// decision made just before a power cut still has its entry — who, when, with what comment — in
// the trail, and later entries never reuse the ids the inbox's rows name.
//
// The child (lib/inbox-child.ts) kills itself with SIGKILL inside the decision_log commit of the
// scenario's last operation, after the approval_inbox commit of the same operation is durable.
// Then seeded random operations are kill -9ed from outside at random moments, and after each
// restart every proposal's row has the log entries it stands for (its `proposed`, a withdrawal,
// the decision by the one who decided, command progress) and the log's ids run 1..n without a
// gap or a repeat. Reproduce with TILSTAND_SEED_INBOX_CRASH=<seed> (printed).

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../core/lsm/index.ts';
import { mulberry32 } from '../../core/lsm/testing/prng.ts';
import { paimonCheck, paimonCheckAvailable, pick } from './lib/common.ts';
import { rowRecord } from '../../core/inbox/inbox-tables.ts';
import { Inbox } from '../../core/inbox/inbox.ts';
import { readDecisionLog } from '../../core/inbox/decision-log.ts';
import { RECOVERED_NOTE } from '../../core/inbox/log-recovery.ts';
import { CHILD_DB, CHILD_T0, childInput, childUsers } from './lib/inbox-child.ts';

const CHILD = join(import.meta.dirname, 'lib', 'inbox-child.ts');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function crashIn(scenario: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'tilstand-inbox-crash-'));
  dirs.push(dir);
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, scenario], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
  expect(signal, `child stderr: ${stderr}`).toBe('SIGKILL');
  return dir;
}

function reopen(dir: string): { inbox: Inbox; warnings: string[]; close(): void } {
  const warnings: string[] = [];
  const { db, users } = childUsers(dir);
  const inbox = Inbox.open({
    catalog: new Catalog(join(dir, 'warehouse'), { clock: () => CHILD_T0 + 3_600_000 }),
    database: CHILD_DB,
    users,
    recheck: () => ({ holds: true, snapshots: {} }),
    clock: () => CHILD_T0 + 3_600_000,
    onWarning: (m) => warnings.push(m),
  });
  return {
    inbox,
    warnings,
    close: () => {
      inbox.close();
      db.close();
    },
  };
}

const trail = (i: Inbox, id: string) => i.history(id).map((e) => ({ id: e.id, event: e.event, actor: e.actor, atMs: e.atMs, recovered: (e.detail as { recovered?: string }).recovered === RECOVERED_NOTE }));

describe('a crash between the approval_inbox and decision_log commits', () => {
  it('an approval: the decision gets its entry back (who, role, comment, snapshots)', async () => {
    const dir = await crashIn('approve');
    const s = reopen(dir);
    try {
      const p = s.inbox.get('P-r1-1')!;
      expect(p.status).toBe('approved');
      expect(trail(s.inbox, 'P-r1-1')).toEqual([
        { id: 1, event: 'proposed', actor: 'agent-r1', atMs: CHILD_T0, recovered: false },
        { id: 3, event: 'approved', actor: 'lena', atMs: CHILD_T0 + 60_000, recovered: true },
      ]);
      expect(p.command?.state).toBe('pending'); // the approval's own write, which logs no entry
      const approved = s.inbox.history('P-r1-1')[1]!.detail as Record<string, unknown>;
      expect(approved).toMatchObject({ role: 'shift_lead', comment: 'go', reason: null, snapshots: { checked: { work_queue: 3 } } });
      expect(s.warnings.join('\n')).toMatch(/rebuilt 1 entry \(ids up to 3\) of 1 approval_inbox commit/);
    } finally {
      s.close();
    }
  });

  it('a rejection', async () => {
    const dir = await crashIn('reject');
    const s = reopen(dir);
    try {
      expect(trail(s.inbox, 'P-r1-1').map((e) => [e.id, e.event, e.actor, e.recovered])).toEqual([
        [1, 'proposed', 'agent-r1', false],
        [3, 'rejected', 'lena', true],
      ]);
      expect(s.inbox.history('P-r1-1')[1]!.detail).toMatchObject({ comment: 'not now', role: 'shift_lead' });
    } finally {
      s.close();
    }
  });

  it("a command's progress", async () => {
    const dir = await crashIn('command');
    const s = reopen(dir);
    try {
      expect(trail(s.inbox, 'P-r1-1').map((e) => [e.id, e.event, e.recovered, e.atMs - CHILD_T0])).toEqual([
        [1, 'proposed', false, 0],
        [3, 'approved', false, 60_000],
        [4, 'command_sent', true, 61_000],
      ]);
    } finally {
      s.close();
    }
  });

  it("an agent run's submit: withdrawals and proposals, with the ids the rows name; later entries do not reuse them", async () => {
    const dir = await crashIn('submit');
    let s = reopen(dir);
    try {
      expect(trail(s.inbox, 'P-r1-2').map((e) => [e.id, e.event, e.recovered])).toEqual([
        [2, 'proposed', false],
        [3, 'withdrawn', true],
      ]);
      expect(s.inbox.history('P-r1-2')[1]!.detail).toMatchObject({ reason: 'J-2 started' });
      expect(trail(s.inbox, 'P-r2-1')).toEqual([{ id: 4, event: 'proposed', actor: 'agent-r2', atMs: CHILD_T0 + 60_000, recovered: true }]);
      expect(s.inbox.history('P-r2-1')[0]!.detail).toMatchObject({ situation: childInput('J-3', 'r2').situationKey, rule: 'assign-job@2', action: 'assign_job', params: { job_id: 'J-3', resource_id: 'M-1' }, risk: 'low' });
      expect(trail(s.inbox, 'P-r2-2').map((e) => e.id)).toEqual([5]);
      const next = s.inbox.submit({ runId: 'r3', proposals: [childInput('J-5', 'r3')], withdrawals: [] });
      expect(trail(s.inbox, next.created[0]!.id).map((e) => [e.id, e.recovered])).toEqual([[6, false]]);
    } finally {
      s.close();
    }
    // Once rebuilt, a later open finds nothing to rebuild and the log holds each entry once.
    s = reopen(dir);
    try {
      expect(s.warnings.filter((w) => w.includes('rebuilt'))).toEqual([]);
      const ids = readDecisionLog(new Catalog(join(dir, 'warehouse')).getTable({ database: CHILD_DB, table: 'decision_log' })).map((e) => e.id);
      expect(ids).toEqual([1, 2, 3, 4, 5, 6]);
    } finally {
      s.close();
    }
  });
});

/** Kills of the random child: 10 in the short mode, 100 in the long one (`npm run test:long`). */
const KILLS = Number(process.env.TILSTAND_INBOX_CRASH_KILLS ?? pick(10, 100));

interface RandomRun {
  ops: number;
  /** Deferred compactions' slices run and COMPACT snapshots they committed (0 inline). */
  slices: number;
  compactions: number;
  /** A compaction was planned or half done at the child's last operation before the kill. */
  inFlight: boolean;
}

/** Runs the random child until it has done at least one operation and `afterMs` have passed, then kill -9s it. */
async function killRandomChild(dir: string, seed: number, afterMs: number, compaction: 'inline' | 'deferred'): Promise<RandomRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, 'random', String(seed), compaction], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const run: RandomRun = { ops: 0, slices: 0, compactions: 0, inFlight: false };
  let timer: NodeJS.Timeout | undefined;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line === 'ready') timer = setTimeout(() => child.kill('SIGKILL'), afterMs);
    else if (line.startsWith('op ')) {
      const [ops, slices, compactions, inFlight] = line.slice(3).split(' ').map(Number) as [number, number, number, number];
      Object.assign(run, { ops, slices, compactions, inFlight: inFlight === 1 });
    }
  });
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
  clearTimeout(timer);
  expect(signal, `child stderr: ${stderr.slice(-3000)}`).toBe('SIGKILL');
  expect(stderr, 'a child warned (a compaction slice failed?)').not.toMatch(/compacting .* failed/);
  return run;
}

/** What the tables hold, read directly: every proposal row's entries are in the log, ids 1..n. */
function checkTrails(dir: string): { proposals: number; entries: number } {
  const catalog = new Catalog(join(dir, 'warehouse'));
  if (!catalog.tableExists({ database: CHILD_DB, table: 'approval_inbox' })) return { proposals: 0, entries: 0 };
  const inbox = catalog.getTable({ database: CHILD_DB, table: 'approval_inbox' });
  const log = readDecisionLog(catalog.getTable({ database: CHILD_DB, table: 'decision_log' }));
  expect(log.map((e) => e.id)).toEqual(log.map((_, i) => i + 1));
  const byProposal = new Map<string, typeof log>();
  for (const e of log) if (e.proposalId) byProposal.set(e.proposalId, [...(byProposal.get(e.proposalId) ?? []), e]);
  let proposals = 0;
  for (const row of inbox.scanRows({})) {
    const r = rowRecord(inbox.schema.fields, row);
    const id = String(r.proposal_id);
    const events = (byProposal.get(id) ?? []).map((e) => `${e.event}:${e.actor}`);
    const has = (event: string, actor?: string) => expect(events.some((x) => x === `${event}:${actor}` || (actor === undefined && x.startsWith(`${event}:`))), `${id} (${events.join(', ')}) lacks ${event}${actor ? ` by ${actor}` : ''}`).toBe(true);
    has('proposed');
    if (r.agent_status === 'withdrawn') has('withdrawn');
    if (typeof r.decision === 'string') has(r.decision, String(r.decided_by));
    if (typeof r.command_state === 'string' && r.command_state !== 'pending') has(`command_${r.command_state}`);
    proposals++;
  }
  return { proposals, entries: log.length };
}

/** Every retained snapshot of both tables reads without a missing or damaged file (a compaction given up by the kill left none referenced). */
function checkEverySnapshot(dir: string): void {
  const catalog = new Catalog(join(dir, 'warehouse'));
  for (const table of ['approval_inbox', 'decision_log']) {
    if (!catalog.tableExists({ database: CHILD_DB, table })) continue;
    const t = catalog.getTable({ database: CHILD_DB, table });
    for (const id of t.snapshots.listIds()) t.scanRows({ snapshotId: id });
  }
}

describe('kill -9 at random moments during inbox operations', () => {
  it('leaves every proposal with its trail and the log without gaps or repeats, whether the tables compact inline or in slices as on a site', async () => {
    const seed = Number(process.env.TILSTAND_SEED_INBOX_CRASH ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`inbox crash seed ${seed} (TILSTAND_SEED_INBOX_CRASH=${seed} to reproduce)`);
    const rnd = mulberry32(seed);
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-inbox-random-'));
    dirs.push(dir);
    let rebuilt = 0;
    let ops = 0;
    const deferred = { runs: 0, slices: 0, compactions: 0, killedInFlight: 0 };
    // On a loaded machine (CI's two cores running the suite) the children got through 11
    // operations in 10 kills and no compaction ran, so the check that the site's way ran failed
    // with nothing wrong: then more children run, compacting in slices and living longer, until
    // slices committed a compaction (at most KILLS more; the checks stay the same).
    const extraMax = KILLS;
    let extra = 0;
    for (let k = 0; k < KILLS || (extra < extraMax && (deferred.slices === 0 || deferred.compactions === 0)); k++) {
      const more = k >= KILLS;
      if (more) extra++;
      const afterMs = more ? 400 + Math.floor(rnd() * 800) : 30 + Math.floor(rnd() * 400);
      // Most runs compact as the site does (core/site decisions.ts: in slices after the commit),
      // every third as a replay and the CLI do (inline), on the same tables.
      const compaction = !more && k % 3 === 2 ? 'inline' : 'deferred';
      const run = await killRandomChild(dir, Math.floor(rnd() * 2 ** 31), afterMs, compaction);
      ops += run.ops;
      if (compaction === 'deferred') {
        deferred.runs++;
        deferred.slices += run.slices;
        deferred.compactions += run.compactions;
        if (run.inFlight) deferred.killedInFlight++;
      }
      const s = reopen(dir);
      rebuilt += s.warnings.filter((w) => w.includes('rebuilt')).length;
      s.close();
      checkTrails(dir);
      checkEverySnapshot(dir);
    }
    const end = checkTrails(dir);
    console.log(
      `inbox crash: ${KILLS + extra} kills (${extra} more for a compaction in slices), ${ops} operations, ${end.proposals} proposals, ${end.entries} log entries; ${rebuilt} restart(s) rebuilt lost entries; ` +
        `${deferred.runs} runs compacted in slices: ${deferred.slices} slices, ${deferred.compactions} COMPACT snapshots, ${deferred.killedInFlight} killed with a compaction in flight at their last operation`,
    );
    expect(end.proposals).toBeGreaterThan(0);
    // The site's way ran: slices ran and committed compactions in the children that were killed.
    expect(deferred.slices).toBeGreaterThan(0);
    expect(deferred.compactions).toBeGreaterThan(0);
    if (paimonCheckAvailable()) {
      for (const table of ['approval_inbox', 'decision_log']) {
        const r = paimonCheck(join(dir, 'warehouse', `${CHILD_DB}.db`, table));
        expect(r.problems, `paimon-check ${table}: ${r.output}`).toBe(0);
      }
    }
  }, KILLS * 2 * 18_000);
});
