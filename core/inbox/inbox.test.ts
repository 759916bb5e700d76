// The inbox on real files: submit and dedupe, decisions by role and PIN (refusals, lockout),
// the compare-and-set approval, and the partial-update groups not clobbering each other.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { PROJECTED_KEY } from '../lsm/run-cache.ts';
import { readConfigChanges, readDecisionLog } from './decision-log.ts';
import { InboxError } from './errors.ts';
import { evidenceReport, formatEvidence } from './evidence.ts';
import { Inbox, readActiveCounts, readProposal, readProposalRow, readProposals, type InboxOptions, type RecheckOutcome } from './inbox.ts';
import { APPROVAL_INBOX_SPEC, DECISION_LOG_SPEC } from './inbox-tables.ts';
import { situationKey, timedOutDetail, type Proposal, type ProposalInput } from './proposal.ts';
import { UserStore } from './users.ts';

const DB = 'site_s1';
const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);
let dir: string;
let now: number;
let db: Database.Database;
let users: UserStore;
let catalog: Catalog;
const open: Inbox[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-inbox-'));
  now = T0;
  catalog = new Catalog(join(dir, 'warehouse'), { clock: () => now });
  db = new Database(join(dir, 'site.db'));
  users = new UserStore(db, { scrypt: { N: 1 << 10, r: 8, p: 1 }, nowMs: () => now, failuresMax: 3, lockoutMs: 60_000 });
  await users.add({ name: 'lena', role: 'shift_lead', pin: '1111' });
  await users.add({ name: 'ada', role: 'admin', pin: '2222' });
  await users.add({ name: 'olaf', role: 'operator', pin: '3333' });
  await users.add({ name: 'vic', role: 'viewer', pin: '4444' });
  await users.add({ name: 'gone', role: 'shift_lead', pin: '5555' });
  users.disable('gone');
});

afterEach(() => {
  for (const i of open.splice(0)) i.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function inbox(o: Partial<InboxOptions> = {}): Inbox {
  const i = Inbox.open({ catalog, database: DB, users, recheck: () => ({ holds: true, snapshots: { work_queue: 7 } }), clock: () => now, onWarning: () => undefined, ...o });
  open.push(i);
  return i;
}

const MESSAGES = {
  explanation: { id: 'assign-job.explanation', params: { job: 'J-2', priority: 3, resource: 'M-1', capability: 'pick' } },
  riskReason: { id: 'assign-job.risk', params: {} },
};

function input(job: string, resource = 'M-1'): ProposalInput {
  return {
    situationKey: situationKey('assign-job', 'assign_job', { job_id: job }),
    ruleId: 'assign-job',
    ruleVersion: '1',
    action: 'assign_job',
    module: 'operations',
    params: { job_id: job, resource_id: resource },
    risk: 'low',
    riskReason: 'reversible',
    explanation: `start ${job} on ${resource}`,
    evidence: [{ table: 'work_queue', snapshotId: 5, tag: 'agent-r1', rows: [{ key: { job_id: job }, values: { job_id: job, status: 'released' } }] }],
    runId: 'r1',
  };
}

const propose = (i: Inbox, ...jobs: string[]): Proposal[] => i.submit({ runId: 'r1', proposals: jobs.map((j) => input(j)), withdrawals: [] }).created;

describe('submit', () => {
  it('stores proposals with their evidence and deduplicates by situation key', () => {
    const i = inbox();
    const [p] = propose(i, 'J-1');
    expect(p!.id).toBe('P-r1-1');
    expect(p!.status).toBe('open');
    const again = i.submit({ runId: 'r2', proposals: [input('J-1', 'M-2'), input('J-2')], withdrawals: [] });
    expect(again.duplicates).toEqual([p!.situationKey]);
    expect(again.created.map((x) => x.params.job_id)).toEqual(['J-2']);
    const read = readProposals(i.table, { status: 'open' });
    expect(read.map((x) => x.id).sort()).toEqual(['P-r1-1', 'P-r2-1']);
    expect(read.find((x) => x.id === 'P-r1-1')!.evidence).toEqual(input('J-1').evidence);
    expect(() => readProposals(i.table, { status: 'nope' as never })).toThrow(/status: expected one of/);
  });

  it('reads whole rows only for what it returns: a list of n parses n proposals, an open parses the active ones', () => {
    const i = inbox();
    const jobs = Array.from({ length: 300 }, (_, k) => `J-${k + 1}`);
    const made = propose(i, ...jobs);
    i.submit({ runId: 'r2', proposals: [], withdrawals: made.slice(10).map((p) => ({ id: p.id, reason: 'done' })) });
    const parses = vi.spyOn(JSON, 'parse');
    try {
      expect(readProposals(i.table, { limit: 5 }).map((p) => p.id)).toEqual(['P-r1-300', 'P-r1-299', 'P-r1-298', 'P-r1-297', 'P-r1-296']);
      expect(parses.mock.calls.length).toBeLessThanOrEqual(5 * 3); // params, evidence, decision snapshots
      parses.mockClear();
      expect(readProposals(i.table, { status: 'open', limit: 100 })).toHaveLength(10);
      expect(parses.mock.calls.length).toBeLessThanOrEqual(10 * 3);
      i.close();
      open.splice(0);
      parses.mockClear();
      const j = inbox();
      expect(j.openProposals()).toHaveLength(10);
      expect(parses.mock.calls.length).toBeLessThanOrEqual(10 * 3);
      // The inbox screen's list (open and deferred) comes from memory, equal to the table's.
      const readers = vi.spyOn(j.table, 'reader');
      const listed = j.list({ status: ['open', 'deferred'], limit: 4 });
      expect(readers).not.toHaveBeenCalled();
      readers.mockRestore();
      expect(listed).toEqual(readProposals(j.table, { status: ['open', 'deferred'], limit: 4 }));
      expect(listed.map((p) => p.id)).toEqual(['P-r1-10', 'P-r1-9', 'P-r1-8', 'P-r1-7']);
    } finally {
      parses.mockRestore();
    }
  });

  it("reads every proposal's status columns at its open without keeping them in the run cache", () => {
    const i = inbox();
    const made = propose(i, ...Array.from({ length: 300 }, (_, k) => `J-${k + 1}`));
    i.submit({ runId: 'r2', proposals: [], withdrawals: made.slice(10).map((p) => ({ id: p.id, reason: 'done' })) });
    i.close();
    open.splice(0);
    // A cold catalog, as at a site's start: the open's scan of every proposal is read once; the
    // cache keeps only the whole rows it reads of the active ones (by key).
    const cold = new Catalog(join(dir, 'warehouse'), { clock: () => now });
    const j = inbox({ catalog: cold });
    expect(j.openProposals()).toHaveLength(10);
    const cached = [...cold.cacheBudget.entries.keys()].filter((k) => k.includes('/approval_inbox/'));
    expect(cached.length).toBeGreaterThan(0);
    expect(cached.filter((k) => k.includes(PROJECTED_KEY))).toEqual([]);
  });

  it('lists the proposals of one run newest first by their number (…-12 before …-9 before …-1)', () => {
    const i = inbox();
    const jobs = Array.from({ length: 12 }, (_, k) => `J-${k + 1}`);
    propose(i, ...jobs);
    expect(readProposals(i.table, { limit: 100 }).map((p) => p.id)).toEqual(jobs.map((_, k) => `P-r1-${12 - k}`));
  });

  it('lists the open and deferred ones most urgent first before the cut (high risk, then oldest), and counts them all', async () => {
    const i = inbox();
    const at = (ms: number, job: string, risk: ProposalInput['risk']) => {
      now = T0 + ms;
      return i.submit({ runId: `r${ms}`, proposals: [{ ...input(job), runId: `r${ms}`, risk }], withdrawals: [] }).created[0]!;
    };
    const oldLow = at(1000, 'J-1', 'low');
    const oldHigh = at(2000, 'J-2', 'high');
    const mid = at(3000, 'J-3', 'medium');
    const newHigh = at(4000, 'J-4', 'high');
    const newLow = at(5000, 'J-5', 'low');
    await i.decide(oldLow.id, 'defer', { user: 'lena', pin: '1111' });
    const ids = (ps: Proposal[]) => ps.map((p) => p.id);
    expect(ids(i.list({ status: ['open', 'deferred'], order: 'urgency' }))).toEqual(ids([oldHigh, newHigh, mid, oldLow, newLow]));
    // Cut after the order: an old high-risk proposal is never the one left out.
    expect(ids(i.list({ status: ['open', 'deferred'], order: 'urgency', limit: 2 }))).toEqual(ids([oldHigh, newHigh]));
    expect(ids(i.list({ status: ['open', 'deferred'], limit: 2 }))).toEqual(ids([newLow, newHigh])); // newest first, as before
    expect(i.activeCounts()).toEqual({ open: 4, deferred: 1, oldestOpenMs: oldHigh.createdAtMs });
    i.commit();
    expect(readActiveCounts(i.table)).toEqual(i.activeCounts()); // a site not running: read from the table
    expect(() => i.list({ status: ['approved'], order: 'urgency' })).toThrow(/only the open and deferred ones, not approved/);
  });

  it("lists the decided ones newest decision first before the cut (order 'decided'), from the table and from memory", async () => {
    const i = inbox();
    const at = (ms: number, job: string) => {
      now = T0 + ms;
      return i.submit({ runId: `r${ms}`, proposals: [{ ...input(job), runId: `r${ms}` }], withdrawals: [] }).created[0]!;
    };
    const first = at(1000, 'J-1');
    const second = at(2000, 'J-2');
    const third = at(3000, 'J-3');
    const decide = async (ms: number, p: Proposal, how: 'reject' | 'defer') => {
      now = T0 + ms;
      await i.decide(p.id, how, { user: 'lena', pin: '1111' });
    };
    await decide(4000, second, 'reject');
    await decide(5000, third, 'reject');
    await decide(6000, first, 'reject'); // made first, decided last: it waited
    const ids = (ps: Proposal[]) => ps.map((p) => p.id);
    expect(ids(i.list({ status: ['rejected'], order: 'decided' }))).toEqual(ids([first, third, second]));
    // Cut after the order: the late decision is the one kept (by when made it would be the one cut).
    expect(ids(i.list({ status: ['rejected'], order: 'decided', limit: 1 }))).toEqual(ids([first]));
    expect(ids(i.list({ status: ['rejected'], limit: 1 }))).toEqual(ids([third])); // newest made first, as before
    // From memory (open and deferred): deferred ones by when they were deferred, an open one by when made.
    const fourth = at(7000, 'J-4');
    const fifth = at(8000, 'J-5');
    await decide(9000, fourth, 'defer');
    expect(ids(i.list({ status: ['open', 'deferred'], order: 'decided' }))).toEqual(ids([fourth, fifth]));
  });

  it("puts a withdrawn proposal among the decisions by when the agent withdrew it (order 'decided'), not by a deferral or when it was made", async () => {
    const i = inbox();
    const at = (ms: number, job: string) => {
      now = T0 + ms;
      return i.submit({ runId: `r${ms}`, proposals: [{ ...input(job), runId: `r${ms}` }], withdrawals: [] }).created[0]!;
    };
    const early = at(500, 'J-4'); // made first, withdrawn without a deferral
    const deferred = at(1000, 'J-1');
    const rejected = at(1500, 'J-2');
    now = T0 + 2000;
    await i.decide(deferred.id, 'defer', { user: 'lena', pin: '1111' });
    now = T0 + 2500;
    i.submit({ runId: 'r2500', proposals: [], withdrawals: [{ id: early.id, reason: 'job J-4 is no longer in the queue' }] });
    now = T0 + 3000;
    await i.decide(rejected.id, 'reject', { user: 'lena', pin: '1111' });
    now = T0 + 4000;
    i.submit({ runId: 'r4000', proposals: [], withdrawals: [{ id: deferred.id, reason: 'job J-1 is no longer in the queue' }] });
    const ids = (ps: Proposal[]) => ps.map((p) => p.id);
    const all = ['approved', 'rejected', 'stale', 'withdrawn'] as const;
    // Withdrawn at 4000 (deferred at 2000), rejected at 3000, withdrawn at 2500 (made at 500).
    expect(ids(i.list({ status: [...all], order: 'decided' }))).toEqual(ids([deferred, rejected, early]));
    expect(ids(i.list({ status: [...all], order: 'decided', limit: 1 }))).toEqual(ids([deferred])); // the cut after that order
    expect(ids(readProposals(i.table, { status: [...all], order: 'decided' }))).toEqual(ids([deferred, rejected, early])); // another process
  });

  it("keeps a proposal's messages through a decision, and adds why it was withdrawn or found stale, also on disk", async () => {
    const gone = { id: 'recheck.jobGone', params: { job: 'J-2' } };
    const busy = { id: 'recheck.resourceNow', params: { resource: 'M-1', state: { id: 'resource.state.busy', params: {} } } };
    let check: RecheckOutcome = { holds: true, snapshots: {} };
    const i = inbox({ recheck: () => check });
    const made = i.submit({ runId: 'r1', proposals: ['J-1', 'J-2', 'J-3'].map((j) => ({ ...input(j), messages: MESSAGES })), withdrawals: [] }).created;
    const [a, b, c] = made;
    expect(a!.messages).toEqual(MESSAGES);
    await i.decide(a!.id, 'reject', { user: 'lena', pin: '1111' });
    i.submit({ runId: 'r2', proposals: [], withdrawals: [{ id: b!.id, reason: 'job J-2 is no longer in the queue (run r2)', message: gone }] });
    check = { holds: false, reason: 'resource M-1 is now busy', message: busy, snapshots: {} };
    expect(await i.decide(c!.id, 'approve', { user: 'lena', pin: '1111' })).toMatchObject({ outcome: 'stale', proposal: { messages: { ...MESSAGES, staleReason: busy } } });
    const expected = { [a!.id]: MESSAGES, [b!.id]: { ...MESSAGES, withdrawnReason: gone }, [c!.id]: { ...MESSAGES, staleReason: busy } };
    for (const id of Object.keys(expected)) expect(i.get(id)!.messages, id).toEqual(expected[id]);
    expect(i.get(b!.id)!.withdrawnReason).toBe('job J-2 is no longer in the queue (run r2)');
    i.close();
    open.splice(0);
    for (const p of readProposals(i.table, {})) expect(p.messages, p.id).toEqual(expected[p.id]);
    expect(readProposal(i.table, a!.id)!.status).toBe('rejected');
    // A withdrawal without a message leaves the stored messages as they were.
    const j = inbox();
    const [d] = j.submit({ runId: 'r3', proposals: [{ ...input('J-4'), messages: MESSAGES }], withdrawals: [] }).created;
    j.submit({ runId: 'r4', proposals: [], withdrawals: [{ id: d!.id, reason: 'gone' }] });
    expect(j.get(d!.id)!.messages).toEqual(MESSAGES);
  });

  it('survives a reopen: open proposals still deduplicate', () => {
    const i = inbox();
    propose(i, 'J-1');
    i.close();
    open.splice(0);
    const j = inbox();
    expect(j.openProposals().map((p) => p.id)).toEqual(['P-r1-1']);
    expect(j.submit({ runId: 'r2', proposals: [input('J-1')], withdrawals: [] }).duplicates).toHaveLength(1);
  });
});

describe('decide: who may', () => {
  it('a shift lead and an admin decide; the decision records who, when, the role and the snapshots', async () => {
    const i = inbox();
    const [a, b] = propose(i, 'J-1', 'J-2');
    now += 5000;
    const r = await i.decide(a!.id, 'reject', { user: 'lena', pin: '1111', comment: 'not now' });
    expect(r.outcome).toBe('rejected');
    expect(r.proposal.decision).toMatchObject({ kind: 'rejected', by: 'lena', role: 'shift_lead', atMs: T0 + 5000, comment: 'not now', snapshots: { seen: { work_queue: 5 } } });
    const r2 = await i.decide(b!.id, 'approve', { user: 'ada', pin: '2222', seen: { work_queue: 6 } });
    expect(r2.outcome).toBe('approved');
    expect(r2.proposal.decision!.snapshots).toEqual({ seen: { work_queue: 6 }, checked: { work_queue: 7 } });
    expect(r2.proposal.command).toMatchObject({ state: 'pending', topic: 'tilstand/s1/commands/operations' });
    await expect(i.decide(a!.id, 'approve', { user: 'ada', pin: '2222' })).rejects.toMatchObject({ kind: 'Conflict', message: expect.stringMatching(/is rejected \(rejected by lena/) });
  });

  it('a decided situation is not proposed again for resuggestAfterDecisionMs, unless its command failed', async () => {
    const i = inbox();
    const [a, b] = propose(i, 'J-1', 'J-2');
    await i.decide(a!.id, 'approve', { user: 'lena', pin: '1111' });
    await i.decide(b!.id, 'approve', { user: 'lena', pin: '1111' });
    i.markCommand(a!.id, 'sent');
    i.markCommand(b!.id, 'sent');
    now += 60_000;
    // J-1's module refused it (or it arrived after it expired); J-2's timed out, and may still be done.
    i.markCommand(a!.id, 'failed', 'expired: not carried out');
    i.markCommand(b!.id, 'timed_out');
    const again = i.submit({ runId: 'r2', proposals: [input('J-1'), input('J-2')], withdrawals: [] });
    expect(again.created.map((p) => p.params.job_id)).toEqual(['J-1']);
    expect(again.suppressed).toEqual([input('J-2').situationKey]);
    // The same after a reopen (from the tables).
    i.close();
    open.splice(open.indexOf(i), 1);
    const j = inbox();
    expect(j.submit({ runId: 'r3', proposals: [input('J-2')], withdrawals: [] }).suppressed).toEqual([input('J-2').situationKey]);
    const [c] = propose(j, 'J-3');
    await j.decide(c!.id, 'approve', { user: 'lena', pin: '1111' });
    j.markCommand(c!.id, 'sent');
    j.markCommand(c!.id, 'failed', 'resource M-1 is busy');
    j.close();
    open.splice(open.indexOf(j), 1);
    expect(inbox().submit({ runId: 'r4', proposals: [input('J-3')], withdrawals: [] }).created).toHaveLength(1);
  });

  it('counts a command timed out after its acknowledgement as underway for resuggestAfterDecisionMs, across a reopen', async () => {
    const i = inbox();
    const [a, b] = propose(i, 'J-1', 'J-2');
    for (const p of [a!, b!]) {
      await i.decide(p.id, 'approve', { user: 'lena', pin: '1111' });
      i.markCommand(p.id, 'sent');
    }
    i.markCommand(a!.id, 'acknowledged', 'assigned');
    now += 600_001;
    i.markCommand(a!.id, 'timed_out', timedOutDetail(600_001, 'acknowledged'));
    i.markCommand(b!.id, 'timed_out', timedOutDetail(600_001, 'sent'));
    const timedOutAt = now;
    expect(i.commandsInFlight()).toEqual([]);
    expect(i.commandsUnderway().map((p) => p.id)).toEqual([a!.id]);
    i.close();
    open.splice(open.indexOf(i), 1);
    const j = inbox();
    expect(j.commandsUnderway().map((p) => [p.id, p.command!.state])).toEqual([[a!.id, 'timed_out']]);
    expect(j.commandsAwaitingEffect().map((p) => p.id)).toEqual([a!.id]);
    now = timedOutAt + 8 * 3600_000 - 1;
    expect(j.commandsUnderway()).toHaveLength(1);
    now += 1;
    expect(j.commandsUnderway()).toEqual([]);
    j.close();
    open.splice(open.indexOf(j), 1);
    // Opened past the window, it is not read back as underway.
    now -= 1;
    const k = inbox();
    expect(k.commandsUnderway().map((p) => p.id)).toEqual([a!.id]);
    k.close();
    open.splice(open.indexOf(k), 1);
    now += 1;
    expect(inbox().commandsUnderway()).toEqual([]);
  });

  it('lists the commands that failed or timed out, latest first, until they move on or endedCommandsKeptMs passes, across a reopen', async () => {
    const i = inbox({ endedCommandsKeptMs: 3_600_000 });
    const [a, b, c, d] = propose(i, 'J-1', 'J-2', 'J-3', 'J-4');
    for (const p of [a!, b!, c!, d!]) {
      await i.decide(p.id, 'approve', { user: 'lena', pin: '1111' });
      i.markCommand(p.id, 'sent');
    }
    now += 1000;
    i.markCommand(a!.id, 'failed', 'resource M-1 is busy');
    const failedAt = now;
    now += 1000;
    i.markCommand(b!.id, 'timed_out', timedOutDetail(2000, 'sent'));
    const timedOutAt = now;
    // A late effect ends a timeout; an applied command was never one.
    i.markCommand(c!.id, 'timed_out', timedOutDetail(2000, 'sent'));
    i.markCommand(c!.id, 'applied');
    i.markCommand(d!.id, 'applied');
    const expected = [
      { id: b!.id, action: 'assign_job', state: 'timed_out', atMs: timedOutAt, detail: timedOutDetail(2000, 'sent') },
      { id: a!.id, action: 'assign_job', state: 'failed', atMs: failedAt, detail: 'resource M-1 is busy' },
    ];
    expect(i.endedCommands()).toEqual(expected);
    i.close();
    open.splice(open.indexOf(i), 1);
    // Read back from the table at open.
    const j = inbox({ endedCommandsKeptMs: 3_600_000 });
    expect(j.endedCommands()).toEqual(expected);
    now = failedAt + 3_600_000;
    expect(j.endedCommands()).toEqual([expected[0]]);
    j.close();
    open.splice(open.indexOf(j), 1);
    const k = inbox({ endedCommandsKeptMs: 3_600_000 });
    expect(k.endedCommands()).toEqual([expected[0]]);
    k.close();
    open.splice(open.indexOf(k), 1);
    now = timedOutAt + 3_600_000;
    expect(inbox({ endedCommandsKeptMs: 3_600_000 }).endedCommands()).toEqual([]);
    expect(() => inbox({ endedCommandsKeptMs: 0 })).toThrow(/endedCommandsKeptMs: expected an integer ≥ 1, got 0/);
  });

  it('a situation whose commands failed twice within the last resuggestAfterDecisionMs is not proposed while that holds', async () => {
    const i = inbox();
    const fail = async (x: Inbox, p: Proposal, why: string) => {
      await x.decide(p.id, 'approve', { user: 'lena', pin: '1111' });
      x.markCommand(p.id, 'sent');
      now += 1_000;
      x.markCommand(p.id, 'failed', why);
    };
    const [a] = propose(i, 'J-1');
    await fail(i, a!, 'resource M-1 is reserved for maintenance');
    const firstAt = now;
    // Once: it comes back at once, and says what the module said.
    now += 60_000;
    const [b] = i.submit({ runId: 'r2', proposals: [input('J-1')], withdrawals: [] }).created;
    expect(b).toBeDefined();
    expect(i.failedBefore(b!.situationKey)).toEqual([{ id: a!.id, atMs: firstAt, detail: 'resource M-1 is reserved for maintenance', sent: true }]);
    await fail(i, b!, 'resource M-1 is reserved for maintenance');
    const lastAt = now;
    // Twice: quiet, here and after a reopen (from the tables), with both failures known.
    now += 60_000;
    expect(i.submit({ runId: 'r3', proposals: [input('J-1'), input('J-2')], withdrawals: [] })).toMatchObject({ created: [expect.objectContaining({ params: { job_id: 'J-2', resource_id: 'M-1' } })], suppressed: [input('J-1').situationKey] });
    i.close();
    open.splice(open.indexOf(i), 1);
    const j = inbox();
    expect(j.failedBefore(input('J-1').situationKey).map((f) => f.id)).toEqual([a!.id, b!.id]);
    now = firstAt + 8 * 3600_000 - 1;
    expect(j.submit({ runId: 'r4', proposals: [input('J-1')], withdrawals: [] }).suppressed).toHaveLength(1);
    now += 1; // the first failure is 8 h old: one left, so it may come back
    expect(j.failedBefore(input('J-1').situationKey).map((f) => f.id)).toEqual([b!.id]);
    expect(j.submit({ runId: 'r5', proposals: [input('J-1')], withdrawals: [] }).created).toHaveLength(1);
    expect(j.failedBefore(input('J-1').situationKey)).toEqual([{ id: b!.id, atMs: lastAt, detail: 'resource M-1 is reserved for maintenance', sent: true }]);
  });

  it('a decision keeps its evidence: tag decision-<id> at the snapshot read, for decisionEvidenceRetentionMs; a missing table only warns', async () => {
    const warnings: string[] = [];
    // The approval re-checks at the snapshot there is (its checked tag is the next test's).
    const i = inbox({ decisionEvidenceRetentionMs: 30 * 86_400_000, onWarning: (m) => warnings.push(m), recheck: () => ({ holds: true, snapshots: { work_queue: 1 } }) }); // creates the database
    const wq = catalog.createTable({ database: DB, table: 'work_queue' }, { fields: [{ name: 'job_id', type: 'STRING NOT NULL' }], primaryKeys: ['job_id'], options: { bucket: '1' } });
    const w = wq.newWriter();
    w.writeRecord({ job_id: 'J-1' });
    w.commit();
    w.close();
    wq.createTag('agent-r1', 1, 3600_000);
    const at = (job: string): ProposalInput => ({ ...input(job), evidence: [{ ...input(job).evidence[0]!, snapshotId: 1 }, { table: 'stock', snapshotId: 3, tag: 'agent-r1', rows: [] }] });
    const [a, b, c] = i.submit({ runId: 'r1', proposals: [at('J-1'), at('J-2'), at('J-3')], withdrawals: [] }).created;
    now += 5000;
    await i.decide(a!.id, 'reject', { user: 'lena', pin: '1111' });
    await i.decide(b!.id, 'approve', { user: 'lena', pin: '1111' });
    await i.decide(c!.id, 'defer', { user: 'lena', pin: '1111' });
    for (const p of [a!, b!, c!]) {
      const t = wq.tags.get(`decision-${p.id}`);
      expect(t.snapshot.id).toBe(1);
      expect(t.retainedMillis).toBe(30 * 86_400_000);
    }
    // The deferred one decided later has its tag renewed (deferral-evidence.test.ts).
    await i.decide(c!.id, 'reject', { user: 'lena', pin: '1111' });
    expect(warnings.filter((m) => m.includes('work_queue'))).toEqual([]);
    expect(warnings.filter((m) => m.includes('stock'))).toHaveLength(4); // no stock table: the decisions stand
    expect(() => inbox({ decisionEvidenceRetentionMs: 0 })).toThrow(/decisionEvidenceRetentionMs: expected an integer ≥ 1/);
    // A new retention (a site's config reload) for the decisions from then on; a bad one changes nothing.
    expect(() => i.setDecisionEvidenceRetention(-1)).toThrow(/decisionEvidenceRetentionMs: expected an integer ≥ 1, got -1/);
    i.setDecisionEvidenceRetention(90 * 86_400_000);
    expect(i.decisionEvidenceMs).toBe(90 * 86_400_000);
    const [d] = i.submit({ runId: 'r2', proposals: [at('J-4')], withdrawals: [] }).created;
    await i.decide(d!.id, 'reject', { user: 'lena', pin: '1111' });
    expect(wq.tags.get(`decision-${d!.id}`).retainedMillis).toBe(90 * 86_400_000);
    expect(wq.tags.get(`decision-${a!.id}`).retainedMillis).toBe(30 * 86_400_000);
  });

  it('an approval, and one found stale, keeps the state it was checked against: tag checked-<id> at the checked snapshots, for decisionEvidenceRetentionMs, beyond snapshot expiry; a reject or defer checked nothing', async () => {
    const DAY = 86_400_000;
    const warnings: string[] = [];
    const i = inbox({
      decisionEvidenceRetentionMs: 30 * DAY,
      onWarning: (m) => warnings.push(m),
      // The latest snapshot of each table, as the agent's recheck reads them; stock has none yet. J-2 has moved on.
      recheck: (p) => {
        const snapshots = { work_queue: wq.latestSnapshot()!.id, resources: res.latestSnapshot()!.id, stock: null };
        return p.params.job_id === 'J-2' ? { holds: false, reason: 'J-2 is in_progress', snapshots } : { holds: true, snapshots };
      },
    });
    // Few snapshots kept, and not for long: expiration really removes the checked ones.
    const options = { bucket: '1', 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'snapshot.time-retained': '1 min' };
    const wq = catalog.createTable({ database: DB, table: 'work_queue' }, { fields: [{ name: 'job_id', type: 'STRING NOT NULL' }, { name: 'status', type: 'STRING' }], primaryKeys: ['job_id'], options });
    const res = catalog.createTable({ database: DB, table: 'resources' }, { fields: [{ name: 'resource_id', type: 'STRING NOT NULL' }], primaryKeys: ['resource_id'], options });
    const wqw = wq.newWriter();
    const resw = res.newWriter();
    const put = (rows: Record<string, unknown>[]) => {
      for (const r of rows) wqw.writeRecord(r);
      wqw.commit();
    };
    try {
      put(['J-1', 'J-2', 'J-3', 'J-4'].map((job_id) => ({ job_id, status: 'released' }))); // snapshot 1
      resw.writeRecord({ resource_id: 'M-1' });
      resw.commit(); // resources snapshot 1
      wq.createTag('agent-r1', 1, 3600_000);
      res.createTag('agent-r1', 1, 3600_000);
      const at = (job: string): ProposalInput => ({
        ...input(job),
        evidence: [
          { table: 'work_queue', snapshotId: 1, tag: 'agent-r1', rows: [{ key: { job_id: job }, values: { job_id: job, status: 'released' } }] },
          { table: 'resources', snapshotId: 1, tag: 'agent-r1', rows: [{ key: { resource_id: 'M-1' }, values: { resource_id: 'M-1' } }] },
        ],
      });
      const [a, b, c, d] = i.submit({ runId: 'r1', proposals: [at('J-1'), at('J-2'), at('J-3'), at('J-4')], withdrawals: [] }).created;
      now += 5000;
      put([{ job_id: 'J-9', status: 'released' }]); // snapshot 2: another job
      expect((await i.decide(a!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
      put([{ job_id: 'J-2', status: 'in_progress' }]); // snapshot 3: J-2 moved on
      expect((await i.decide(b!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('stale');
      await i.decide(c!.id, 'reject', { user: 'lena', pin: '1111' });
      await i.decide(d!.id, 'defer', { user: 'lena', pin: '1111' });

      expect(i.get(a!.id)!.decision!.snapshots.checked).toEqual({ work_queue: 2, resources: 1, stock: null });
      for (const [p, wqAt] of [[a!, 2], [b!, 3]] as const) {
        const t = wq.tags.get(`checked-${p.id}`);
        expect(t.snapshot.id).toBe(wqAt);
        expect(t.retainedMillis).toBe(30 * DAY);
        // On resources the checked snapshot is the evidence's: tagged all the same.
        expect(res.tags.get(`checked-${p.id}`).snapshot.id).toBe(1);
        expect(res.tags.get(`decision-${p.id}`).snapshot.id).toBe(1);
      }
      // Nothing was checked for a reject or a defer.
      for (const p of [c!, d!]) for (const t of [wq, res]) expect(t.tags.exists(`checked-${p.id}`)).toBe(false);
      // stock had no snapshot when checked: nothing to tag, nothing to warn of.
      expect(warnings).toEqual([]);

      // Hours later, after more writes: the checked snapshots have expired, their tags still read them.
      now += 2 * 3600_000;
      put([{ job_id: 'J-10', status: 'released' }]);
      now += 2 * 3600_000;
      put([{ job_id: 'J-11', status: 'released' }]);
      wqw.expire();
      for (const id of [1, 2, 3]) expect(wq.snapshots.tryGet(id)).toBeUndefined();
      expect(wq.tags.exists('agent-r1')).toBe(false);
      expect(wq.scanRows({ tag: `checked-${a!.id}` }).map((r) => r.join(':'))).toEqual(['J-1:released', 'J-2:released', 'J-3:released', 'J-4:released', 'J-9:released']);
      expect(wq.scanRows({ tag: `checked-${b!.id}` }).find((r) => r[0] === 'J-2')).toEqual(['J-2', 'in_progress']);

      // The evidence report shows the checked state beside the evidence: the cited rows read at the checked tag.
      const approved = evidenceReport(catalog, DB, a!.id);
      expect(approved.checked).toEqual([
        { table: 'work_queue', snapshotId: 2, tag: `checked-${a!.id}`, tagExists: true, tagRetainedUntilMs: T0 + 5000 + 30 * DAY, cited: [{ key: { job_id: 'J-1' }, values: { job_id: 'J-1', status: 'released' } }], matchesEvidence: true, changedColumns: [], changedCells: [[]], sequenceMoved: false },
        { table: 'resources', snapshotId: 1, tag: `checked-${a!.id}`, tagExists: true, tagRetainedUntilMs: T0 + 5000 + 30 * DAY, cited: [{ key: { resource_id: 'M-1' }, values: { resource_id: 'M-1' } }], matchesEvidence: true, changedColumns: [], changedCells: [[]], sequenceMoved: false },
        { table: 'stock', snapshotId: null, tag: `checked-${a!.id}`, tagExists: false, tagRetainedUntilMs: null, cited: [], matchesEvidence: null, changedColumns: [], changedCells: [], sequenceMoved: false, problem: 'the table had no snapshot when the approval was checked' },
      ]);
      const text = formatEvidence(approved).join('\n');
      expect(text).toContain(`checked at approval (the state the re-check read):\n  work_queue at snapshot 2 (tag checked-${a!.id}, kept until ${new Date(T0 + 5000 + 30 * DAY).toISOString()}) — cited rows as the evidence recorded\n    {"job_id":"J-1","status":"released"}`);
      const stale = evidenceReport(catalog, DB, b!.id);
      expect(stale.checked[0]).toMatchObject({ table: 'work_queue', snapshotId: 3, tagExists: true, cited: [{ values: { job_id: 'J-2', status: 'in_progress' } }], matchesEvidence: false, changedColumns: ['status'], changedCells: [['status']] });
      expect(formatEvidence(stale).join('\n')).toMatch(/checked at the approval found stale[\s\S]*work_queue at snapshot 3 .* cited rows changed since the agent read them: status\n {4}\{"job_id":"J-2","status":"in_progress"\}/);
      expect(evidenceReport(catalog, DB, c!.id).checked).toEqual([]);
      expect(formatEvidence(evidenceReport(catalog, DB, c!.id)).join('\n')).not.toContain('checked at');
    } finally {
      wqw.close();
      resw.close();
    }
  });

  it('a checked snapshot that cannot be tagged only warns: the approval stands', async () => {
    const warnings: string[] = [];
    const i = inbox({ onWarning: (m) => warnings.push(m), recheck: () => ({ holds: true, snapshots: { nowhere: 4 } }) });
    const [p] = propose(i, 'J-1');
    expect((await i.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
    expect(i.get(p!.id)!.status).toBe('approved');
    expect(warnings.filter((m) => m.includes('nowhere'))).toEqual([expect.stringMatching(new RegExp(`^the state ${p!.id}'s approval was checked against in nowhere \\(snapshot 4\\) is not kept`))]);
  });

  it('records a config change under the person who made it: a decision_log entry of no proposal, committed at once', () => {
    const i = inbox();
    propose(i, 'J-1');
    now += 1000;
    const change = i.recordConfigChange({ user: 'lena', key: 'agent.reorderByItem.BOLT.locations.A-01', before: null, after: { reorderPoint: 9, orderUpTo: 30 } });
    // Read as another process would: committed, beside the proposal's entries, not in any trail.
    const table = catalog.getTable({ database: DB, table: 'decision_log' });
    const log = readDecisionLog(table, undefined, undefined, 'config_changed');
    expect(log).toEqual([{ id: change.id, atMs: now, proposalId: null, event: 'config_changed', actor: 'lena', detail: { key: 'agent.reorderByItem.BOLT.locations.A-01', before: null, after: { reorderPoint: 9, orderUpTo: 30 } } }]);
    // What it returns is the change as the log gives it back.
    expect(readConfigChanges(table)).toEqual([change]);
    expect(readDecisionLog(catalog.getTable({ database: DB, table: 'decision_log' })).map((e) => e.event)).toEqual(['proposed', 'config_changed']);
  });

  it('refuses operators, viewers, unknown (as a wrong PIN) and disabled users, and logs each refusal', async () => {
    const i = inbox();
    const [p] = propose(i, 'J-1');
    for (const [user, pin, reason] of [
      ['olaf', '3333', 'role'],
      ['vic', '4444', 'role'],
      ['nobody', '1234', 'wrong_pin'],
      ['gone', '5555', 'disabled'],
    ] as const) {
      const e = await i.decide(p!.id, 'approve', { user, pin }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(InboxError);
      expect(e).toMatchObject({ kind: 'Refused', reason });
    }
    expect(i.get(p!.id)!.status).toBe('open');
    expect(i.history(p!.id).filter((e) => e.event === 'refused').map((e) => [e.actor, (e.detail as { reason: string }).reason])).toEqual([
      ['olaf', 'role'],
      ['vic', 'role'],
      ['nobody', 'wrong_pin'],
      ['gone', 'disabled'],
    ]);
  });

  it('refuses an unknown user, and one without a PIN, as it refuses a wrong PIN: the same reason and message, to the lockout', async () => {
    await users.add({ name: 'bea', role: 'shift_lead', badge: 'RFID-0042' });
    const i = inbox();
    const [p] = propose(i, 'J-1');
    const said = async (user: string): Promise<string[]> => {
      const out: string[] = [];
      for (let k = 0; k < 4; k++) {
        const e = (await i.decide(p!.id, 'approve', { user, pin: '9999' }).catch((x: unknown) => x)) as InboxError;
        out.push(`${e.reason}: ${e.message.replaceAll(`'${user}'`, "'<name>'")}`);
      }
      return out;
    };
    const lena = await said('lena');
    expect(lena[0]).toMatch(/^wrong_pin: .*'<name>' \(2 attempts left\)$/);
    expect(await said('nobody')).toEqual(lena);
    expect(await said('bea')).toEqual(lena);
  });

  it('wrong PINs lock the user out; a locked user is refused even with the right PIN', async () => {
    const i = inbox();
    const [p] = propose(i, 'J-1');
    await expect(i.decide(p!.id, 'approve', { user: 'lena', pin: '0000' })).rejects.toMatchObject({ reason: 'wrong_pin', message: expect.stringMatching(/2 attempts left/) });
    await expect(i.decide(p!.id, 'approve', { user: 'lena', pin: '0000' })).rejects.toMatchObject({ reason: 'wrong_pin' });
    await expect(i.decide(p!.id, 'approve', { user: 'lena', pin: '0000' })).rejects.toMatchObject({ reason: 'locked' });
    await expect(i.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).rejects.toMatchObject({ reason: 'locked' });
    now += 61_000;
    expect((await i.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
  });

  it('checks its arguments', async () => {
    const i = inbox({ commentCharsMax: 5 });
    const [p] = propose(i, 'J-1');
    await expect(i.decide(p!.id, 'maybe' as never, { user: 'lena', pin: '1111' })).rejects.toMatchObject({ kind: 'InvalidArgument' });
    await expect(i.decide(p!.id, 'reject', { user: 'lena', pin: '1111', comment: 'too long' })).rejects.toMatchObject({ kind: 'InvalidArgument' });
    await expect(i.decide('P-none', 'reject', { user: 'lena', pin: '1111' })).rejects.toMatchObject({ kind: 'NotFound' });
  });

  it('refuses a comment the tables cannot hold as written (a lone surrogate), before anything is decided', async () => {
    // The table store refuses such text (its files would write U+FFFD): met inside the decision,
    // the refusal came from the middle of the inbox's writes.
    const i = inbox();
    const [p] = propose(i, 'J-1');
    await expect(i.decide(p!.id, 'reject', { user: 'lena', pin: '1111', comment: 'half \ud83d' })).rejects.toMatchObject({ kind: 'InvalidArgument', message: expect.stringMatching(/^comment: .*lone surrogate/) });
    expect(i.get(p!.id)!.status).toBe('open');
    expect((await i.decide(p!.id, 'reject', { user: 'lena', pin: '1111', comment: 'whole \ud83d\ude9a' })).proposal.decision).toMatchObject({ comment: 'whole \ud83d\ude9a' });
  });
});

describe('decide: defer, and approval as compare-and-set', () => {
  it('a deferred proposal stays in the inbox, deduplicates, and can be approved later', async () => {
    const i = inbox();
    const [p] = propose(i, 'J-1');
    expect((await i.decide(p!.id, 'defer', { user: 'lena', pin: '1111' })).outcome).toBe('deferred');
    expect(i.get(p!.id)!.status).toBe('deferred');
    expect(i.submit({ runId: 'r2', proposals: [input('J-1')], withdrawals: [] }).duplicates).toHaveLength(1);
    expect((await i.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
  });

  it('freshens, then re-checks; if the world moved the outcome is stale, nothing is approved, and it is re-evaluated', async () => {
    const calls: string[] = [];
    let holds = true;
    const approved: Proposal[] = [];
    const i = inbox({
      freshen: () => void calls.push('freshen'),
      recheck: (p): RecheckOutcome => {
        calls.push(`recheck ${p.id}`);
        return holds ? { holds: true, snapshots: { work_queue: 8 } } : { holds: false, reason: 'resource M-1 is now busy', snapshots: { work_queue: 9 } };
      },
      reevaluate: (p) => void calls.push(`reevaluate ${p.id}`),
    });
    i.onApproved((p) => void approved.push(p));
    const [p] = propose(i, 'J-1');
    holds = false;
    const r = await i.decide(p!.id, 'approve', { user: 'lena', pin: '1111' });
    expect(r).toMatchObject({ outcome: 'stale', reason: 'resource M-1 is now busy' });
    expect(calls).toEqual(['freshen', `recheck ${p!.id}`, `reevaluate ${p!.id}`]);
    expect(approved).toEqual([]);
    const stored = i.get(p!.id)!;
    expect(stored.status).toBe('stale');
    expect(stored.command).toBeNull();
    expect(stored.decision).toMatchObject({ kind: 'stale', by: 'lena', reason: 'resource M-1 is now busy', snapshots: { checked: { work_queue: 9 } } });
    // A stale situation may be proposed again at once.
    expect(i.submit({ runId: 'r2', proposals: [input('J-1', 'M-2')], withdrawals: [] }).created).toHaveLength(1);
    expect(i.history(p!.id).map((e) => e.event)).toEqual(['proposed', 'stale']);
  });

  it('a proposal withdrawn while the approval re-checks is not approved', async () => {
    let i!: Inbox;
    i = inbox({ freshen: () => void i.submit({ runId: 'r2', proposals: [], withdrawals: [{ id: 'P-r1-1', reason: 'job started' }] }) });
    propose(i, 'J-1');
    await expect(i.decide('P-r1-1', 'approve', { user: 'lena', pin: '1111' })).rejects.toMatchObject({ kind: 'Conflict', message: expect.stringMatching(/withdrawn \(job started\)/) });
  });
});

describe('approval_inbox sequence groups', () => {
  it('agent, decision and command writes never clobber each other, in any order', async () => {
    const i = inbox();
    const [p] = propose(i, 'J-1');
    await i.decide(p!.id, 'approve', { user: 'lena', pin: '1111', comment: 'go' });
    i.markCommand(p!.id, 'sent');
    i.markCommand(p!.id, 'acknowledged', '{"job_id":"J-1"}');
    expect(i.markCommand(p!.id, 'sent')).toBeUndefined(); // no going back
    expect(i.history(p!.id).map((e) => e.event)).toEqual(['proposed', 'approved', 'command_sent', 'command_acknowledged']);
    i.close();
    open.splice(0);
    // Raw group writes, as another writer of each side would make them: the agent group alone,
    // and an older decision group (sequence 0) that must lose.
    const w = i.table.newWriter();
    w.writeRecord({ proposal_id: p!.id, agent_seq: 5n, explanation: 'rewritten by the agent side', agent_status: 'open', situation_key: p!.situationKey, rule_id: 'assign-job', rule_version: '1', action: 'assign_job', params: '{}', run_id: 'r1', created_at_ms: BigInt(T0), agent_updated_at_ms: BigInt(T0) });
    w.writeRecord({ proposal_id: p!.id, decision_seq: 0n, decision: 'rejected', decided_by: 'mallory' });
    w.commit();
    w.close();
    const read = readProposals(i.table)[0]!;
    expect(read.explanation).toBe('rewritten by the agent side');
    expect(read.decision).toMatchObject({ kind: 'approved', by: 'lena', comment: 'go' });
    expect(read.command).toMatchObject({ state: 'acknowledged', detail: '{"job_id":"J-1"}', sentAtMs: T0 });
  });
});

describe('table options', () => {
  it('rolls both tables at 2 MB, and gives tables made before that the option when the inbox opens', () => {
    const i = inbox();
    expect(i.table.schema.options.raw['target-file-size']).toBe('2 mb');
    i.close();
    open.splice(0);
    // A site made before: both tables without the option, one proposal in them.
    const old = 'site_old';
    catalog.createDatabase(old);
    // The spec as the releases before had it: no target-file-size, no log_first_entry, no agent_messages.
    const strip = (spec: typeof APPROVAL_INBOX_SPEC) => ({
      ...spec,
      fields: spec.fields.filter((f) => f.name !== 'log_first_entry' && f.name !== 'agent_messages'),
      options: Object.fromEntries(Object.entries(spec.options ?? {}).filter(([k]) => k !== 'target-file-size')),
    });
    catalog.createTable({ database: old, table: 'approval_inbox' }, strip(APPROVAL_INBOX_SPEC));
    catalog.createTable({ database: old, table: 'decision_log' }, strip(DECISION_LOG_SPEC));
    const first = inbox({ database: old });
    const [p] = propose(first, 'J-1');
    first.close();
    open.splice(0);
    const fresh = new Catalog(join(dir, 'warehouse'), { clock: () => now });
    for (const t of ['approval_inbox', 'decision_log']) expect(fresh.getTable({ database: old, table: t }).schema.options.raw['target-file-size']).toBe('2 mb');
    const again = inbox({ catalog: fresh, database: old });
    expect(again.get(p!.id)?.status).toBe('open');
    expect(again.history(p!.id).map((e) => e.event)).toEqual(['proposed']);
    // The old table also got the column where the trail starts, where a new table has it.
    const schema = fresh.getTable({ database: old, table: 'approval_inbox' }).schema;
    expect(schema.fields.map((f) => f.name)).toEqual(APPROVAL_INBOX_SPEC.fields.map((f) => f.name));
    expect(schema.options.raw['fields.agent_seq.sequence-group']).toBe(APPROVAL_INBOX_SPEC.options!['fields.agent_seq.sequence-group']);
    // A row from before has none (its trail is read from the start); a new one has its own.
    const [q] = again.submit({ runId: 'r2', proposals: [{ ...input('J-2'), messages: MESSAGES }], withdrawals: [{ id: p!.id, reason: 'gone' }] }).created;
    expect(again.history(p!.id).map((e) => e.event)).toEqual(['proposed', 'withdrawn']);
    expect(again.history(q!.id).map((e) => e.event)).toEqual(['proposed']);
    expect(readProposalRow(again.table, q!.id)!.log_first_entry).toBe(3n); // entries 1 proposed P, 2 withdrawn P, 3 proposed Q
    // The old row has no messages (the UI shows its English text); the new one keeps its own.
    expect(again.get(p!.id)!.messages).toBeUndefined();
    expect(again.get(q!.id)!.messages).toEqual(MESSAGES);
  });

  it("reads a proposal's trail from its first log entry: older files of the log are not opened", () => {
    // Tables made with files rolled at 1 kb (the inbox keeps an option a table already has), so
    // the log is many files with disjoint entry ids.
    const db = 'site_small';
    catalog.createDatabase(db);
    const small = (spec: typeof APPROVAL_INBOX_SPEC) => ({ ...spec, options: { ...spec.options, 'target-file-size': '1 kb', 'num-sorted-run.compaction-trigger': '3' } });
    catalog.createTable({ database: db, table: 'approval_inbox' }, small(APPROVAL_INBOX_SPEC));
    const logTable = catalog.createTable({ database: db, table: 'decision_log' }, small(DECISION_LOG_SPEC));
    const i = inbox({ database: db });
    let last: Proposal | undefined;
    let first: Proposal | undefined;
    for (let r = 0; r < 40; r++) {
      const created = i.submit({ runId: `r${r}`, proposals: [input(`J-${r}-a`), input(`J-${r}-b`), input(`J-${r}-c`)], withdrawals: [] }).created;
      first ??= created[0];
      last = created[2];
      now += 60_000;
    }
    i.submit({ runId: 'r-w', proposals: [], withdrawals: [{ id: last!.id, reason: 'done' }, { id: first!.id, reason: 'done' }] });
    // The withdrawal rewrote the agent's group and left where the trail starts (no group's column).
    expect(readProposalRow(i.table, last!.id)!.log_first_entry).toBe(120n); // 40 runs of 3 proposals: the last proposed is entry 120
    const files = logTable.buckets(logTable.latestSnapshot()!).flatMap((b) => b.files);
    expect(files.length).toBeGreaterThan(5);
    const loads = vi.spyOn(logTable.constructor.prototype as { loadRun: (...a: unknown[]) => unknown }, 'loadRun');
    try {
      expect(i.history(last!.id).map((e) => e.event)).toEqual(['proposed', 'withdrawn']);
      const opened = new Set(loads.mock.calls.filter((c) => c[0] !== undefined).map((c) => (c[2] as { fileName: string }).fileName));
      expect(opened.size).toBeLessThan(files.length / 2);
      // The oldest proposal's trail is read from the start of the log and is whole as well.
      expect(i.history(first!.id).map((e) => e.event)).toEqual(['proposed', 'withdrawn']);
    } finally {
      loads.mockRestore();
    }
    expect(i.history(last!.id)).toEqual(readDecisionLog(logTable, last!.id));
  });
});

describe('maintenance', () => {
  it('expires a table it has not committed for idleExpireMs without a commit: a quiet inbox does not keep overdue tags', async () => {
    expect(() => inbox({ idleExpireMs: 0 })).toThrow(/idleExpireMs: expected an integer ≥ 1, got 0/);
    const i = inbox({ idleExpireMs: 60_000 });
    const [p] = propose(i, 'J-1'); // commits both tables
    const tables = [i.table, i.logTable];
    const snapshots = tables.map((t) => t.latestSnapshot()!.id);
    const tagBoth = (name: string) => {
      for (const t of tables) t.createTag(name, undefined, 1); // overdue a millisecond later
      now += 1;
    };
    tagBoth('hourly-1');
    now += 30_000;
    i.expireIdle();
    for (const t of tables) expect(t.tags.exists('hourly-1')).toBe(true); // idle for 30 s only
    now += 31_000;
    i.expireIdle();
    for (const t of tables) expect(t.tags.exists('hourly-1')).toBe(false);
    expect(tables.map((t) => t.latestSnapshot()!.id)).toEqual(snapshots); // expired, not committed
    // Each table on its own clock: a refused PIN commits the log only.
    now += 30_000;
    await i.decide(p!.id, 'approve', { user: 'lena', pin: '0000' }).catch(() => undefined);
    expect(i.logTable.latestSnapshot()!.id).toBeGreaterThan(snapshots[1]!);
    tagBoth('hourly-2');
    now += 31_000;
    i.expireIdle();
    expect(i.table.tags.exists('hourly-2')).toBe(false); // idle since the last expiry, 61 s
    expect(i.logTable.tags.exists('hourly-2')).toBe(true); // committed 31 s ago
    now += 30_000;
    i.expireIdle();
    expect(i.logTable.tags.exists('hourly-2')).toBe(false);
  });
});

describe('compaction', () => {
  const kinds = (i: Inbox) => [i.table, i.logTable].map((t) => t.latestSnapshot()!.commitKind);
  const runs = (i: Inbox) => [i.table, i.logTable].map((t) => t.runsOf(t.buckets(t.latestSnapshot()!)[0]!.files).length);

  it("inline (a replay's): the commit that reaches the trigger compacts before the operation returns", () => {
    const i = inbox();
    const trigger = i.table.schema.options.compactionTrigger;
    for (let k = 0; k < trigger; k++) propose(i, `J-${k}`);
    expect(kinds(i)).toEqual(['COMPACT', 'COMPACT']);
  });

  it("deferred (the site's): a decision returns without compacting; the tables compact in slices after it, and not after close", async () => {
    const warnings: string[] = [];
    const i = inbox({ compaction: 'deferred', onWarning: (m) => warnings.push(m) });
    const trigger = i.table.schema.options.compactionTrigger;
    const made = propose(i, 'J-0');
    for (let k = 1; k < trigger - 1; k++) propose(i, `J-${k}`);
    await i.decide(made[0]!.id, 'approve', { user: 'lena', pin: '1111' }); // the trigger-th commit of both
    expect(kinds(i)).toEqual(['APPEND', 'APPEND']);
    expect(runs(i)).toEqual([trigger, trigger]);
    for (let turn = 0; turn < 1000 && kinds(i).some((k) => k !== 'COMPACT'); turn++) await new Promise((r) => setImmediate(r));
    expect(kinds(i)).toEqual(['COMPACT', 'COMPACT']);
    expect(runs(i).every((n) => n < trigger)).toBe(true);
    expect(i.get(made[0]!.id)!.status).toBe('approved');
    expect(readDecisionLog(i.logTable).map((e) => e.event)).toContain('approved');
    // Closed right after a commit planned compactions: no slice runs on the closed writers.
    while (runs(i)[0]! < trigger) propose(i, `J-${runs(i)[0]! + 100}`);
    i.close();
    open.splice(0);
    await new Promise((r) => setImmediate(r));
    expect(warnings.filter((m) => m.includes('compacting'))).toEqual([]);
    expect(() => inbox({ compaction: 'later' as never })).toThrow(/writer option 'compaction': expected 'inline' or 'deferred'/);
  });
});

describe('what the inbox keeps in memory', () => {
  it('group writes of active proposals open no table reader, a new run one (was its id used before?); ids stay unique across a reopen', async () => {
    const i = inbox();
    propose(i, 'J-1', 'J-2', 'J-3', 'J-4');
    const readers = vi.spyOn(i.table, 'reader');
    const r2 = i.submit({ runId: 'r2', proposals: [input('J-5')], withdrawals: [{ id: 'P-r1-1', reason: 'done' }, { id: 'P-r1-2', reason: 'done' }] });
    expect(r2.withdrawn.map((p) => p.status)).toEqual(['withdrawn', 'withdrawn']);
    await i.decide('P-r1-3', 'reject', { user: 'lena', pin: '1111' });
    await i.decide('P-r1-4', 'approve', { user: 'lena', pin: '1111' });
    i.markCommand('P-r1-4', 'sent');
    i.submit({ runId: 'r3', proposals: [], withdrawals: [{ id: 'P-r2-1', reason: 'gone' }] });
    expect(readers).toHaveBeenCalledTimes(1); // run r2's first id, not one per proposal or write
    readers.mockRestore();
    // What was written is what the table merged: each group's sequence counts its writes.
    const raw = (id: string) => {
      const r = i.table.reader();
      try {
        const row = r.get({ proposal_id: id })!;
        return Object.fromEntries(['agent_seq', 'decision_seq', 'command_seq', 'agent_status', 'decision', 'command_state'].map((c) => [c, row[i.table.schema.fieldIndex.get(c)!]]));
      } finally {
        r.close();
      }
    };
    expect(raw('P-r1-1')).toEqual({ agent_seq: 2n, decision_seq: null, command_seq: null, agent_status: 'withdrawn', decision: null, command_state: null });
    expect(raw('P-r1-4')).toEqual({ agent_seq: 1n, decision_seq: 1n, command_seq: 2n, agent_status: 'open', decision: 'approved', command_state: 'sent' });
    expect(raw('P-r2-1')).toMatchObject({ agent_seq: 2n, agent_status: 'withdrawn' });
    // After a reopen the ids of the table are known: run r1 again gets P-r1-5, not an old id.
    i.close();
    open.splice(0);
    const j = inbox();
    expect(j.submit({ runId: 'r1', proposals: [input('J-9')], withdrawals: [] }).created.map((p) => p.id)).toEqual(['P-r1-5']);
    expect(readProposals(j.table, { limit: 100 }).map((p) => p.id).sort()).toEqual(['P-r1-1', 'P-r1-2', 'P-r1-3', 'P-r1-4', 'P-r1-5', 'P-r2-1']);
    // The first write of a proposal open before the reopen reads its row once, then continues its sequences.
    j.markCommand('P-r1-4', 'acknowledged');
    expect(raw('P-r1-4')).toMatchObject({ command_seq: 3n, command_state: 'acknowledged', decision: 'approved' });
  });

  it('deferCommits: writes reach the tables at commit() (or list, history, close), the inbox reads them at once, and the tables end as with a commit per operation', async () => {
    const other = 'site_s2';
    const deferred = inbox({ deferCommits: true });
    const each = Inbox.open({ catalog, database: other, users, recheck: () => ({ holds: true, snapshots: { work_queue: 7 } }), clock: () => now, onWarning: () => undefined });
    open.push(each);
    const ops = async (i: Inbox) => {
      propose(i, 'J-1', 'J-2', 'J-3');
      now += 1000;
      i.submit({ runId: 'r2', proposals: [input('J-4')], withdrawals: [{ id: 'P-r1-2', reason: 'done' }] });
      await i.decide('P-r1-1', 'reject', { user: 'lena', pin: '1111', comment: 'no' });
      await expect(i.decide('P-r1-3', 'approve', { user: 'olaf', pin: '3333' })).rejects.toThrow(/only shift_lead and admin decide/);
      await i.decide('P-r1-3', 'approve', { user: 'ada', pin: '2222' });
      i.markCommand('P-r1-3', 'sent');
    };
    const t0 = now;
    await ops(each);
    now = t0;
    await ops(deferred);
    expect(deferred.table.latestSnapshot()).toBeUndefined(); // nothing committed yet
    expect(deferred.logTable.latestSnapshot()).toBeUndefined();
    expect(deferred.get('P-r1-1')).toMatchObject({ status: 'rejected', decision: { by: 'lena', comment: 'no' } });
    expect(deferred.get('P-r1-2')).toMatchObject({ status: 'withdrawn', withdrawnReason: 'done' });
    expect(deferred.openProposals().map((p) => p.id)).toEqual(['P-r2-1']);
    expect(deferred.commandsInFlight().map((p) => [p.id, p.command?.state])).toEqual([['P-r1-3', 'sent']]);
    expect(deferred.submit({ runId: 'r3', proposals: [input('J-4'), input('J-1')], withdrawals: [] })).toMatchObject({ created: [], duplicates: [input('J-4').situationKey], suppressed: [input('J-1').situationKey] });
    deferred.commit();
    const all = { limit: 100 };
    const asS1 = <T>(x: T): T => JSON.parse(JSON.stringify(x).replaceAll('tilstand/s2/', 'tilstand/s1/')) as T; // command topics name the site
    expect(readProposals(deferred.table, all)).toEqual(asS1(readProposals(each.table, all)));
    expect(readDecisionLog(deferred.logTable)).toEqual(asS1(readDecisionLog(each.logTable)));
    expect(readDecisionLog(deferred.logTable).map((e) => e.event)).toEqual(['proposed', 'proposed', 'proposed', 'withdrawn', 'proposed', 'rejected', 'refused', 'approved', 'command_sent']);
    // list and history commit first; close commits what is left.
    deferred.markCommand('P-r1-3', 'acknowledged');
    expect(deferred.list({ status: 'approved' })[0]!.command?.state).toBe('acknowledged');
    deferred.markCommand('P-r1-3', 'applied');
    expect(deferred.history('P-r1-3').map((e) => e.event)).toEqual(['proposed', 'refused', 'approved', 'command_sent', 'command_acknowledged', 'command_applied']);
    deferred.submit({ runId: 'r4', proposals: [input('J-7')], withdrawals: [] });
    deferred.close();
    expect(readProposals(deferred.table, all).map((p) => p.id)).toContain('P-r4-1');
  });
});
