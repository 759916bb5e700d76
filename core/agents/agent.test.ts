// The agent: read-only handles, one snapshot per run, evidence tags, deduplication and withdrawal.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tagTimeLeftMs, type Table } from '../lsm/index.ts';
import { evidenceReport, formatEvidence, type Inbox } from '../inbox/index.ts';
import { Agent, compareRunIds, newestRunTag, runIdAt } from './agent.ts';
import { TagManager } from '../lsm/tags.ts';
import { AgentError } from './errors.ts';
import { readOnlyTable, type ReadOnlyTable, type ScanCache } from './read-only-table.ts';
import { renderMessage } from './messages.ts';
import type { Rule } from './rule.ts';
import { DB, TestSite, T0 } from './test-support.ts';
import { assignJob, stockReorder } from './rules/index.ts';

let site: TestSite;
afterEach(() => site?.close());

const DAY = 24 * 3600_000;

describe('read-only table handles', () => {
  it('have no way to write: no method by type, and a cast attempt throws', () => {
    site = new TestSite();
    site.stock('BOLT', 'A', { on_hand: 3 });
    site.commit();
    const table = site.catalog.getTable({ database: DB, table: 'stock' });
    const h = readOnlyTable(table, 'stock');
    // @ts-expect-error — no writer on the type
    expect(() => h.newWriter()).toThrow(AgentError);
    const asTable = h as unknown as Table;
    expect(() => asTable.newWriter()).toThrow(/read-only: 'newWriter' is not available/);
    expect(() => asTable.createTag('x')).toThrow(/read-only/);
    expect(() => asTable.deleteTag('x')).toThrow(/read-only/);
    expect(() => asTable.tags).toThrow(/read-only/);
    expect(() => (asTable as unknown as { writeRecord(r: object): void }).writeRecord({})).toThrow(/read-only/);
    expect(() => ((h as unknown as Record<string, unknown>).scan = () => [])).toThrow(/read-only/);
    expect(Object.values(h).some((v) => v === table)).toBe(false);
    // Rows are frozen copies.
    const row = h.scan()[0]!;
    expect(() => ((row as Record<string, unknown>).on_hand = 99)).toThrow(TypeError);
    expect(h.get({ item: 'BOLT', location: 'A' })).toMatchObject({ on_hand: 3 });
  });

  it('a rule that tries to write a state table fails, and nothing is written', () => {
    site = new TestSite();
    site.job({ job_id: 'J-1' });
    site.commit();
    const sneaky: Rule = {
      id: 'sneaky',
      version: '1',
      description: 'tries to write',
      evaluate(ctx) {
        (ctx.tables.work_queue as unknown as Table).newWriter().writeRecord({ job_id: 'J-1', status: 'done' });
        return [];
      },
      recheck: () => ({ holds: true }),
      effectSeen: () => false,
    };
    const { agent } = site.agentAndInbox({ agent: { rules: [sneaky] } });
    const before = site.catalog.getTable({ database: DB, table: 'work_queue' }).latestSnapshot()!.id;
    const r = agent.run();
    expect(r.ruleErrors).toEqual([{ ruleId: 'sneaky', message: expect.stringMatching(/read-only/) }]);
    expect(site.catalog.getTable({ database: DB, table: 'work_queue' }).latestSnapshot()!.id).toBe(before);
  });

  it('every read of one handle sees its snapshot, whatever is committed later', () => {
    site = new TestSite();
    site.stock('BOLT', 'A', { on_hand: 3 });
    site.commit();
    const h: ReadOnlyTable = readOnlyTable(site.catalog.getTable({ database: DB, table: 'stock' }), 'stock');
    site.stock('BOLT', 'A', { on_hand: 4 });
    site.stock('NUT', 'A', { on_hand: 1 });
    site.commit();
    expect(h.scan()).toHaveLength(1);
    expect(h.get({ item: 'BOLT', location: 'A' })!.on_hand).toBe(3);
    expect(h.get({ item: 'NUT', location: 'A' })).toBeUndefined();
  });
});

describe('runs, deduplication and withdrawal', () => {
  it('the same situation never yields two open proposals; a resolved one is withdrawn with the reason', () => {
    site = new TestSite();
    site.job({ job_id: 'J-1' });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const first = agent.run();
    expect(first.created).toHaveLength(1);
    site.nowMs += 60_000;
    const second = agent.run();
    expect(second.created).toHaveLength(0);
    expect(second.duplicates).toEqual(['assign-job|assign_job|job_id="J-1"']);
    expect(inbox.openProposals()).toHaveLength(1);
    expect(second.tagRetentionMs).toBe(agent.config.baselineRetentionMs);
    expect(first.tagRetentionMs).toBe(agent.config.evidenceRetentionMs);

    // Operations starts the job itself: the situation resolves.
    site.job({ job_id: 'J-1', status: 'in_progress', assigned_resource: 'M-1' });
    site.resource('M-1', 'pick', 'busy');
    site.commit();
    site.nowMs += 60_000;
    const third = agent.run();
    expect(third.withdrawn).toHaveLength(1);
    const w = inbox.get(first.created[0]!.id)!;
    expect(w.status).toBe('withdrawn');
    expect(w.withdrawnReason).toBe(`job J-1 is now in_progress on M-1 (run ${third.runId})`);
    expect(inbox.history(w.id).map((e) => e.event)).toEqual(['proposed', 'withdrawn']);

    // The same situation again later is a new proposal.
    site.job({ job_id: 'J-1', status: 'released', assigned_resource: null });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    site.nowMs += 60_000;
    const fourth = agent.run();
    expect(fourth.created.map((p) => p.situationKey)).toEqual([w.situationKey]);
    expect(fourth.created[0]!.id).not.toBe(w.id);
  });

  it('a draft whose situation is open stays a key: its texts and evidence are not made again; a rule whose texts fail withdraws nothing', () => {
    site = new TestSite();
    site.job({ job_id: 'J-1' });
    site.job({ job_id: 'J-2' });
    site.commit();
    let built = 0;
    let broken = false;
    let stillThere = true;
    const counted: Rule = {
      id: 'counted',
      version: '1',
      description: 'one draft per job, counting how often its evidence is read',
      messages: { 'counted.x': { en: 'job {job}', nb: 'jobb {job}', de: 'Auftrag {job}' } },
      evaluate: (ctx) =>
        ctx.tables.work_queue.scan().map((r) => ({
          action: 'look',
          module: 'operations',
          params: { job_id: String(r.job_id) },
          keyParams: ['job_id'],
          risk: 'low' as const,
          riskReason: { id: 'counted.x', params: { job: String(r.job_id) } },
          explanation: { id: broken && r.job_id === 'J-2' ? 'counted.missing' : 'counted.x', params: { job: String(r.job_id) } },
          get evidence() {
            built++;
            return [{ table: 'work_queue' as const, rows: [r] }];
          },
        })),
      recheck: () => (stillThere ? { holds: true } : { holds: false, reason: { id: 'counted.x', params: { job: 'gone' } } }),
      effectSeen: () => false,
    };
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [counted] } });
    expect(agent.run().created).toHaveLength(2);
    const afterFirst = built;
    site.nowMs += 60_000;
    const second = agent.run();
    expect(second.drafts).toBe(2);
    expect(second.duplicates).toEqual(['counted|look|job_id="J-1"', 'counted|look|job_id="J-2"']);
    expect(built).toBe(afterFirst); // neither duplicate was built
    // J-1's proposal no longer holds, and J-2's draft names a message without a template: the
    // rule fails as if its evaluation had, so nothing of it is withdrawn.
    site.job({ job_id: 'J-3' });
    site.commit();
    stillThere = false;
    broken = true;
    site.nowMs += 60_000;
    const third = agent.run();
    expect(third.ruleErrors).toEqual([{ ruleId: 'counted', message: expect.stringMatching(/message 'counted.missing' has no English template/) }]);
    expect(third.withdrawn).toEqual([]);
    expect(inbox.openProposals()).toHaveLength(2);
  });

  it('a rejected situation is not proposed again within resuggestAfterDecisionMs', async () => {
    site = new TestSite();
    await site.addUser('lena', 'shift_lead');
    site.job({ job_id: 'J-1' });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ inbox: { resuggestAfterDecisionMs: 3600_000 } });
    const p = agent.run().created[0]!;
    await inbox.decide(p.id, 'reject', { user: 'lena', pin: '1234', comment: 'M-1 is reserved for J-7' });
    site.nowMs += 60_000;
    // assign-job (v4) asks the inbox first (RuleContext.quiet) and makes no draft the inbox would suppress.
    const quiet = agent.run();
    expect(quiet.created).toEqual([]);
    expect(quiet.suppressed).toEqual([]);
    expect(inbox.isQuiet(p.situationKey)).toBe(true);
    site.nowMs += 3600_000;
    expect(agent.run().created.filter((x) => x.ruleId === 'assign-job').map((x) => x.situationKey)).toEqual([p.situationKey]);
  });

  it('run ids are time-sortable and unique within one millisecond', () => {
    site = new TestSite();
    site.job({ job_id: 'J-1' });
    site.commit();
    const { agent } = site.agentAndInbox();
    expect(runIdAt(T0)).toBe('20261130-080000-000');
    const a = agent.run();
    const b = agent.run();
    expect(a.runId).toBe('20261130-080000-000');
    expect(b.runId).toBe('20261130-080000-000-2');
    expect(site.catalog.getTable({ database: DB, table: 'work_queue' }).listTags().map((t) => t.name)).toEqual(['agent-20261130-080000-000', 'agent-20261130-080000-000-2']);
  });

  it('run ids keep increasing when the clock steps back, and after a restart behind the newest tag', () => {
    site = new TestSite();
    site.job({ job_id: 'J-1' });
    site.commit();
    // The bug here was an endless synchronous loop (every `<time>-n` sorted before the last id,
    // so the site froze); no test timeout interrupts one. A loop that keeps looking tags up fails
    // on this count instead of hanging.
    const exists = TagManager.prototype.exists;
    let lookups = 0;
    TagManager.prototype.exists = function (this: TagManager, name: string) {
      if (++lookups > 10_000) throw new Error('nextRunId does not end');
      return exists.call(this, name);
    };
    try {
      const { agent, inbox } = site.agentAndInbox();
      expect(agent.run().runId).toBe('20261130-080000-000');
      site.nowMs -= 3600_000; // an NTP step back by an hour
      expect(agent.run().runId).toBe('20261130-080000-000-2');
      expect(agent.run().runId).toBe('20261130-080000-000-3');
      site.nowMs = T0 + 60_000; // the clock caught up
      expect(agent.run().runId).toBe('20261130-080100-000');
      // A new process (restart) with the clock still behind continues after the newest tag.
      site.nowMs = T0 - 3600_000;
      const restarted = new Agent({ catalog: site.catalog, database: DB, inbox, clock: site.clock });
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push(restarted.run().runId);
      expect(ids[0]).toBe('20261130-080100-000-2');
      expect(ids.at(-1)).toBe('20261130-080100-000-13');
      expect(new Set(ids).size).toBe(12);
      // Ordered as they ran (plain string order puts -10 before -9).
      expect([...ids].reverse().sort(compareRunIds)).toEqual(ids);
      expect(newestRunTag(site.catalog.getTable({ database: DB, table: 'work_queue' }).listTags().map((t) => t.name))).toBe('agent-20261130-080100-000-13');
    } finally {
      TagManager.prototype.exists = exists;
    }
  });

  /** A run over BOLT at A with 20 on hand, then a commit that drops it to 2, a minute later. */
  function stockDropAfterRun(): { agent: Agent; inbox: Inbox } {
    site = new TestSite();
    site.stock('BOLT', 'A', { on_hand: 20 });
    site.commit();
    const parts = site.agentAndInbox();
    parts.agent.run();
    site.stock('BOLT', 'A', { on_hand: 2 });
    site.commit();
    site.nowMs += 60_000;
    return parts;
  }

  it('after a restart the previous run is found through its tag (changes are read from it)', () => {
    const { inbox } = stockDropAfterRun();
    const restarted = new Agent({ catalog: site.catalog, database: DB, inbox, clock: site.clock });
    const r = restarted.run();
    expect(r.created.map((p) => p.params)).toEqual([{ item: 'BOLT', location: 'A', qty: 18, position_before: 2 }]);
    expect(r.created[0]!.explanation).toMatch(/\(was 20\)/);
  });

  /** A stock change, then a run whose submit throws; `next` is the agent that runs after it. */
  function failedSubmitThen(next: (agent: Agent, inbox: Inbox) => Agent) {
    const { agent, inbox } = stockDropAfterRun();
    const submit = vi.spyOn(inbox, 'submit').mockImplementationOnce(() => {
      throw new Error('disk full');
    });
    expect(() => agent.run()).toThrow('disk full');
    submit.mockRestore();
    site.nowMs += 60_000;
    return next(agent, inbox).run();
  }

  it('a run whose submit fails leaves the diff base where it was: the next run still sees the change', () => {
    const r = failedSubmitThen((agent) => agent);
    expect(r.created.map((p) => p.params)).toEqual([{ item: 'BOLT', location: 'A', qty: 18, position_before: 2 }]);
  });

  it('a run whose submit fails leaves no newest tag behind: an agent restarted after it still sees the change', () => {
    const r = failedSubmitThen((_, inbox) => new Agent({ catalog: site.catalog, database: DB, inbox, clock: site.clock, onWarning: () => undefined }));
    expect(r.created.map((p) => p.params)).toEqual([{ item: 'BOLT', location: 'A', qty: 18, position_before: 2 }]);
  });
});

describe('a change-reading rule that fails in one run', () => {
  it('reads, in its next run, the changes of the run it failed in: the reorder it missed is proposed then, and the other rules went on', () => {
    site = new TestSite();
    site.stock('BOLT', 'A', { on_hand: 20 });
    site.job({ job_id: 'J-1' });
    site.commit();
    let fail = false;
    const flaky: Rule = { ...stockReorder, evaluate: (ctx) => (fail ? (() => { throw new Error('read failed'); })() : stockReorder.evaluate(ctx)) };
    const { agent } = site.agentAndInbox({ agent: { rules: [assignJob, flaky] } });
    expect(agent.run().created).toEqual([]);
    site.stock('BOLT', 'A', { on_hand: 2 });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    site.nowMs += 60_000;
    fail = true;
    const failedRun = agent.run();
    expect(failedRun.ruleErrors).toEqual([{ ruleId: 'stock-reorder', message: 'read failed' }]);
    expect(failedRun.created.map((p) => p.ruleId)).toEqual(['assign-job']);
    fail = false;
    site.nowMs += 60_000;
    const next = agent.run();
    expect(next.created.map((p) => p.params)).toEqual([{ item: 'BOLT', location: 'A', qty: 18, position_before: 2 }]);
    expect(next.created[0]!.explanation).toMatch(/\(was 20\)/);
    // Once it ran through, it reads from the newest run again: nothing twice.
    site.nowMs += 60_000;
    expect(agent.run().created).toEqual([]);
  });
});

describe('a run after a changed threshold whose submit fails', () => {
  it('leaves the next run reading every row: a row already under the raised reorder point is still proposed', () => {
    site = new TestSite();
    site.stock('BOLT', 'A', { on_hand: 28 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    expect(agent.run().created).toHaveLength(0); // 28, above the default reorder point 5
    agent.reconfigure({ reorderByItem: { BOLT: { reorderPoint: 50, orderUpTo: 100 } } });
    site.nowMs += 60_000;
    const submit = vi.spyOn(inbox, 'submit').mockImplementationOnce(() => {
      throw new Error('disk full');
    });
    expect(() => agent.run()).toThrow('disk full');
    submit.mockRestore();
    site.nowMs += 60_000;
    expect(agent.run().created.map((p) => p.params)).toEqual([{ item: 'BOLT', location: 'A', qty: 72, position_before: 28 }]);
  });
});

describe('evidence tags', () => {
  it('pin the snapshot the agent read; a decision keeps it: months later, after writes and expiration, its tag reads the same rows', async () => {
    // Keep few snapshots so that expiration really removes the old ones.
    site = new TestSite({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'snapshot.time-retained': '1 ms' });
    await site.addUser('lena', 'shift_lead');
    site.job({ job_id: 'J-1', priority: 3 });
    site.resource('M-1', 'pick', 'free');
    site.stock('BOLT', 'A', { on_hand: 2 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const run = agent.run();
    const p = run.created.find((x) => x.ruleId === 'assign-job')!;
    const tagged = run.snapshots.work_queue!;
    const wq = site.catalog.getTable({ database: DB, table: 'work_queue' });
    const atRun = wq.scanRows({ tag: `agent-${run.runId}` });
    site.nowMs += 2 * DAY; // the run's own snapshot expires meanwhile; the run tag still holds it
    site.job({ job_id: 'J-50' });
    site.commit();
    site.nowMs += 1_000; // a snapshot expires once the next one is older than time-retained (1 ms here)
    site.writers.work_queue.expire();
    expect(wq.snapshots.tryGet(tagged)).toBeUndefined();
    await inbox.decide(p.id, 'defer', { user: 'lena', pin: '1234', comment: 'after the stocktake' });
    expect(wq.tags.get(`decision-${p.id}`).snapshot.id).toBe(tagged);

    for (let i = 0; i < 6; i++) {
      site.nowMs += 20 * DAY;
      site.job({ job_id: 'J-1', priority: 4 + i, status: 'in_progress', assigned_resource: 'M-1' });
      site.job({ job_id: `J-${100 + i}` });
      site.commit();
      site.writers.work_queue.expire();
    }
    // 120 days on: the run tag is gone (kept 7 days), the decision's tag reads the same rows.
    expect(wq.tags.exists(`agent-${run.runId}`)).toBe(false);
    expect(wq.scanRows({ tag: `decision-${p.id}` })).toEqual(atRun);

    const report = evidenceReport(site.catalog, DB, p.id);
    const t = report.tables.find((x) => x.table === 'work_queue')!;
    expect(t.tagExists).toBe(true);
    expect(t.readAt).toBe(`decision-${p.id}`);
    expect(t.matches).toBe(true);
    expect(t.atTag[0]!.values).toMatchObject({ job_id: 'J-1', status: 'released', priority: 3 });
    expect(t.tagRetainedUntilMs).toBe(T0 + 2 * DAY + 1_000 + 365 * DAY);
    expect(report.trail.map((e) => e.event)).toEqual(['proposed', 'deferred']);
    expect(inbox.get(p.id)!.status).toBe('deferred');
    expect(formatEvidence(report).join('\n')).toContain(`(tag agent-${run.runId}, kept as decision-${p.id} until`);

    // Undecided evidence is kept evidenceRetentionMs (7 days), not a year.
    expect(agent.config.evidenceRetentionMs).toBe(7 * DAY);
  });

  it('keeps the run tag of a proposal left undecided past evidenceRetentionMs, and a late decision keeps its whole snapshot', async () => {
    site = new TestSite({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'snapshot.time-retained': '1 ms' });
    await site.addUser('lena', 'shift_lead');
    site.job({ job_id: 'J-1', priority: 3, due_at_ms: T0 + 100 * DAY });
    site.resource('M-1', 'pick', 'free');
    site.stock('BOLT', 'A', { on_hand: 50 });
    site.commit();
    const warnings: string[] = [];
    const { agent, inbox } = site.agentAndInbox({ agent: { onWarning: (m) => void warnings.push(m) } });
    const first = agent.run();
    const p = first.created.find((x) => x.ruleId === 'assign-job')!;
    const tag = `agent-${first.runId}`;
    // The tables the proposal cites (assign-job reads work_queue and resources).
    const tables = p.evidence.map((e) => site.catalog.getTable({ database: DB, table: e.table }));
    expect(p.evidence.map((e) => e.table)).toEqual(['work_queue', 'resources']);
    const atRun = tables.map((t) => t.scanRows({ tag }));
    // Ten days of runs every 6 hours with the situation unchanged; every table gets other writes
    // (and so its expiration) meanwhile.
    for (let i = 0; i < 40; i++) {
      site.nowMs += DAY / 4;
      site.job({ job_id: `J-${100 + i}`, status: 'done' });
      site.resource(`M-${100 + i}`, 'pack', 'busy');
      site.stock('NUT', 'A', { on_hand: i });
      site.commit();
      expect(agent.run().withdrawn.map((w) => w.id)).not.toContain(p.id);
    }
    expect(inbox.get(p.id)!.status).toBe('open');
    for (const [i, t] of tables.entries()) {
      expect(t.tags.exists(tag), t.name).toBe(true);
      expect(t.scanRows({ tag }), t.name).toEqual(atRun[i]);
      // Renewed once half its 7 days had passed (the runs at 3.75 and 7.5 days), not every run: 4.5 days left at 10.
      expect(tagTimeLeftMs(t.tags.get(tag), site.nowMs), t.name).toBe(4.5 * DAY);
    }
    await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1234' });
    expect(tables[0]!.scanRows({ tag: `decision-${p.id}` })).toEqual(atRun[0]);
    expect(warnings).toEqual([]);
  });

  it('keeps the run tag of a deferred proposal too: its decision tag may expire first (decisionEvidenceRetentionMs shorter than the wait)', async () => {
    site = new TestSite({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'snapshot.time-retained': '1 ms' });
    await site.addUser('lena', 'shift_lead');
    site.job({ job_id: 'J-1', priority: 3, due_at_ms: T0 + 100 * DAY });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    const warnings: string[] = [];
    const { agent, inbox } = site.agentAndInbox({ agent: { onWarning: (m) => void warnings.push(m) }, inbox: { decisionEvidenceRetentionMs: DAY, onWarning: (m) => void warnings.push(m) } });
    const first = agent.run();
    const p = first.created.find((x) => x.ruleId === 'assign-job')!;
    const tag = `agent-${first.runId}`;
    const tables = p.evidence.map((e) => site.catalog.getTable({ database: DB, table: e.table }));
    const atRun = tables.map((t) => t.scanRows({ tag }));
    expect((await inbox.decide(p.id, 'defer', { user: 'lena', pin: '1234' })).outcome).toBe('deferred');
    // Ten days of runs every 6 hours, still deferred; the decision tag (a day) expires meanwhile.
    for (let i = 0; i < 40; i++) {
      site.nowMs += DAY / 4;
      site.job({ job_id: `J-${100 + i}`, status: 'done' });
      site.resource(`M-${100 + i}`, 'pack', 'busy');
      site.commit();
      agent.run();
    }
    expect(inbox.get(p.id)!.status).toBe('deferred');
    for (const [i, t] of tables.entries()) expect(t.scanRows({ tag }), t.name).toEqual(atRun[i]);
    expect((await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1234' })).outcome).toBe('approved');
    for (const [i, t] of tables.entries()) expect(t.scanRows({ tag: `decision-${p.id}` }), t.name).toEqual(atRun[i]);
    expect(warnings).toEqual([]);
  });

  it('keeps a cited tag with a short retention (90 min): renewed while core/lsm still allows it, not at half', () => {
    site = new TestSite();
    site.job({ job_id: 'J-1' });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    const warnings: string[] = [];
    const { agent, inbox } = site.agentAndInbox({ agent: { onWarning: (m) => void warnings.push(m), config: { evidenceRetentionMs: 90 * 60_000, baselineRetentionMs: 3600_000 } } });
    const first = agent.run();
    const p = first.created.find((x) => x.ruleId === 'assign-job')!;
    const tag = `agent-${first.runId}`;
    const wq = site.catalog.getTable({ database: DB, table: 'work_queue' });
    // Three hours of runs every minute, the situation unchanged; the table's expiration runs at
    // its commits every 10 minutes.
    for (let m = 1; m <= 180; m++) {
      site.nowMs += 60_000;
      if (m % 10 === 0) {
        site.job({ job_id: `J-${100 + m}`, status: 'done' });
        site.commit();
      }
      agent.run();
    }
    expect(inbox.get(p.id)!.status).toBe('open');
    expect(warnings).toEqual([]); // was: "cannot renew tag …: it expires in 44 min (less than 60 min left …)"
    expect(wq.tags.exists(tag)).toBe(true);
    // Renewed once less than 62 min (an hour plus two runs) was left — every 29 runs —, not every run.
    expect(tagTimeLeftMs(wq.tags.get(tag), site.nowMs)).toBeGreaterThan(62 * 60_000);
  });

  it('says once that a cited tag could not be kept (it expired while the site was off)', () => {
    site = new TestSite();
    site.job({ job_id: 'J-1' });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    const warnings: string[] = [];
    const { agent } = site.agentAndInbox({ agent: { onWarning: (m) => void warnings.push(m) } });
    const first = agent.run();
    site.nowMs += 7 * DAY - 30 * 60_000; // off for a week: 30 minutes of the tag's retention left
    agent.run();
    agent.run();
    expect(warnings.filter((w) => w.includes(`tag agent-${first.runId} on work_queue`))).toEqual([
      expect.stringMatching(/is not kept beyond its retention: cannot renew tag .* it expires in 30 min/),
    ]);
  });

  it('tags of runs without a new situation expire after baselineRetentionMs; evidence tags stay', () => {
    site = new TestSite();
    site.job({ job_id: 'J-1' });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    const { agent } = site.agentAndInbox({ agent: { config: { baselineRetentionMs: 3600_000 } } });
    const evidence = agent.run();
    site.nowMs += 60_000;
    const idle = agent.run();
    site.nowMs += 2 * 3600_000;
    site.job({ job_id: 'J-2', status: 'done' });
    site.commit(); // the writer's commit expires tags past their retention
    const names = site.catalog.getTable({ database: DB, table: 'work_queue' }).listTags().map((t) => t.name);
    expect(names).toContain(`agent-${evidence.runId}`);
    expect(names).not.toContain(`agent-${idle.runId}`);
  });
});

  it('read back after an ALTER, in the columns the table had at the tag; a handle on the latest reads in today\'s', () => {
    site = new TestSite();
    site.job({ job_id: 'J-1', priority: 3 });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    const { agent } = site.agentAndInbox();
    const p = agent.run().created.find((x) => x.ruleId === 'assign-job')!;
    const recorded = p.evidence.find((e) => e.table === 'work_queue')!.rows;
    expect(recorded[0]!.values).toMatchObject({ job_id: 'J-1', status: 'released', blocked_reason: null, priority: 3 });

    // ALTER work_queue (its writer closed meanwhile): rename, drop, widen, add.
    site.writers.work_queue.close();
    const wq = site.catalog.getTable({ database: DB, table: 'work_queue' });
    wq.alter([
      { kind: 'renameColumn', from: 'status', to: 'state' },
      { kind: 'dropColumn', name: 'blocked_reason' },
      { kind: 'updateColumnType', name: 'priority', type: 'BIGINT' },
      { kind: 'addColumn', name: 'note', type: 'STRING' },
    ]);
    // No commit since: a handle on the latest snapshot (pinned by id) is in today's columns.
    const now = readOnlyTable(wq, 'work_queue');
    expect(now.columns).toContain('state');
    expect(now.get({ job_id: 'J-1' })).toMatchObject({ state: 'released', note: null, priority: 3 });
    expect(now.scan()[0]).not.toHaveProperty('status');

    site.writers.work_queue = wq.newWriter({ commitUser: 'test-ingest' });
    site.writers.work_queue.writeRecord({ job_id: 'J-1', state: 'in_progress', capability: 'pick', priority: 9n, note: 'moved', ops_seq: 1000n });
    site.commit();

    const report = evidenceReport(site.catalog, DB, p.id);
    const t = report.tables.find((x) => x.table === 'work_queue')!;
    expect(t.problem).toBeUndefined();
    expect(t.atTag).toEqual(recorded);
    expect(t.matches).toBe(true);
    expect(readOnlyTable(wq, 'work_queue').get({ job_id: 'J-1' })).toMatchObject({ state: 'in_progress', priority: 9, note: 'moved' });
  });

  // The agent ran after an ALTER that no commit had followed: it read (and recorded) the rows in
  // the new columns, while its tag's snapshot has the older schema. The evidence read at the tag in
  // the snapshot's columns alone said "does not match" of the same rows.
  it('an ALTER before the run with no commit since: the evidence still reads as it was recorded', () => {
    site = new TestSite();
    site.job({ job_id: 'J-1', priority: 3 });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    site.writers.work_queue.close();
    const wq = site.catalog.getTable({ database: DB, table: 'work_queue' });
    wq.alter([{ kind: 'addColumn', name: 'note', type: 'STRING' }]);
    site.writers.work_queue = wq.newWriter({ commitUser: 'test-ingest' });
    const { agent } = site.agentAndInbox();
    const p = agent.run().created.find((x) => x.ruleId === 'assign-job')!;
    const recorded = p.evidence.find((e) => e.table === 'work_queue')!.rows;
    expect(recorded[0]!.values).toMatchObject({ job_id: 'J-1', note: null });
    const t = evidenceReport(site.catalog, DB, p.id).tables.find((x) => x.table === 'work_queue')!;
    expect(t.problem).toBeUndefined();
    expect(t.atTag).toEqual(recorded);
    expect(t.matches).toBe(true);
  });

describe('reconfigure', () => {
  it('uses the new tunables from the next run on, reschedules the timer for a new interval, and refuses a bad one whole', () => {
    site = new TestSite();
    site.stock('BOLT', 'A', { on_hand: 30 });
    site.commit();
    const { agent } = site.agentAndInbox();
    expect(agent.run().created).toHaveLength(0); // position 30, above the default reorder point 5
    site.stock('BOLT', 'A', { on_hand: 28 });
    site.commit();
    agent.reconfigure({ reorderByItem: { BOLT: { reorderPoint: 50, orderUpTo: 100 } } });
    const r = agent.run();
    expect(r.created.map((p) => [p.action, p.params])).toEqual([['replenish', { item: 'BOLT', location: 'A', qty: 72, position_before: 28 }]]);
    expect(() => agent.reconfigure({ reorderByItem: { BOLT: { reorderPoint: 50, orderUpTo: 10 } } })).toThrow(/agent config reorderByItem\.BOLT: expected orderUpTo > reorderPoint/);
    expect(agent.config.reorderByItem.BOLT).toEqual({ reorderPoint: 50, orderUpTo: 100 });
    // New retentions or a new interval change no row's verdict: the next run reads only what
    // changed, as before; a new threshold makes it read every row.
    const everyRow = vi.spyOn(agent, 'reevaluateAll');
    agent.reconfigure({ ...agent.config, evidenceRetentionMs: 3 * 86_400_000, baselineRetentionMs: 7_200_000, intervalMs: 120_000 });
    expect(agent.config).toMatchObject({ evidenceRetentionMs: 3 * 86_400_000, baselineRetentionMs: 7_200_000 });
    expect(everyRow).not.toHaveBeenCalled();
    agent.reconfigure({ ...agent.config, idleMsMin: 60_000, intervalMs: 60_000 });
    expect(everyRow).toHaveBeenCalledTimes(1);
    everyRow.mockRestore();

    vi.useFakeTimers();
    try {
      const runs = vi.spyOn(agent, 'run').mockImplementation(() => ({}) as ReturnType<Agent['run']>);
      agent.start();
      expect(runs).toHaveBeenCalledTimes(1); // once at start
      vi.advanceTimersByTime(60_000);
      expect(runs).toHaveBeenCalledTimes(2);
      agent.reconfigure({ ...agent.config, intervalMs: 10_000 });
      vi.advanceTimersByTime(30_000);
      expect(runs).toHaveBeenCalledTimes(5);
      // The same interval again: the timer is left as it is.
      vi.advanceTimersByTime(5_000);
      agent.reconfigure({ ...agent.config, idleMsMin: 0 });
      vi.advanceTimersByTime(5_000);
      expect(runs).toHaveBeenCalledTimes(6);
      agent.stop();
      vi.advanceTimersByTime(60_000);
      expect(runs).toHaveBeenCalledTimes(6);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('between runs (recheckChanged)', () => {
  /** J-1 (pick) and J-2 (pack), released; M-1 (pick) and M-2 (pack), free: two assignments to propose. */
  const twoJobsTwoFreeResources = () => {
    site.job({ job_id: 'J-1', capability: 'pick' });
    site.job({ job_id: 'J-2', capability: 'pack' });
    site.resource('M-1', 'pick', 'free');
    site.resource('M-2', 'pack', 'free');
    site.commit();
  };

  it('withdraws, within the check after a commit, the proposals whose cited rows changed and no longer hold; others are not looked at', () => {
    site = new TestSite();
    twoJobsTwoFreeResources();
    const { agent, inbox } = site.agentAndInbox();
    const first = agent.run();
    expect(first.created.map((p) => p.params.job_id).sort()).toEqual(['J-1', 'J-2']);
    const p1 = first.created.find((p) => p.params.job_id === 'J-1')!;
    const p2 = first.created.find((p) => p.params.job_id === 'J-2')!;
    // Nothing committed since the run: nothing is read.
    expect(agent.recheckChanged()).toEqual({ changed: [], checked: 0, withdrawn: [] });

    // Operations starts J-1 on M-1; an unrelated job arrives.
    site.nowMs += 5_000;
    site.job({ job_id: 'J-1', capability: 'pick', status: 'in_progress', assigned_resource: 'M-1' });
    site.job({ job_id: 'J-9', capability: 'forklift', status: 'blocked', blocked_reason: 'waiting' });
    site.resource('M-1', 'pick', 'busy');
    site.commit();
    const r = agent.recheckChanged();
    expect(r.changed).toEqual(['work_queue', 'resources']);
    expect(r.checked).toBe(1); // J-2's proposal cites no changed row
    expect(r.withdrawn.map((p) => p.id)).toEqual([p1.id]);
    const w = inbox.get(p1.id)!;
    expect(w.status).toBe('withdrawn');
    expect(w.withdrawnReason).toBe('job J-1 is now in_progress on M-1 (seen when work_queue, resources changed)');
    // The stored message names the tables in the reader's words, the status too (the English above stays the record).
    expect(renderMessage(w.messages!.withdrawnReason!, agent.messages, 'nb')).toBe('jobb J-1 er nå i gang på M-1 (sett da arbeidskøen og ressursene endret seg)');
    expect(renderMessage(w.messages!.withdrawnReason!, agent.messages, 'de')).toBe('Auftrag J-1 ist jetzt in Arbeit auf M-1 (bemerkt bei Änderungen an Arbeitsvorrat und Ressourcen)');
    expect(inbox.history(p1.id).at(-1)).toMatchObject({ event: 'withdrawn', actor: `agent-recheck-${runIdAt(site.nowMs)}` });
    expect(inbox.get(p2.id)!.status).toBe('open');
    // The same commits are not read twice; the next run finds nothing left to withdraw.
    expect(agent.recheckChanged()).toEqual({ changed: [], checked: 0, withdrawn: [] });
    site.nowMs += 55_000;
    const next = agent.run();
    expect(next.withdrawn).toEqual([]);
    expect(next.duplicates).toEqual([p2.situationKey]);
  });

  it('re-checks every citing proposal when the commits in between can no longer be read (expired)', () => {
    site = new TestSite({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '1' });
    twoJobsTwoFreeResources();
    const { agent, inbox } = site.agentAndInbox();
    expect(agent.run().created).toHaveLength(2);
    for (let i = 0; i < 3; i++) {
      site.nowMs += 1_000;
      site.job({ job_id: `J-${10 + i}`, capability: 'forklift', status: 'blocked', blocked_reason: 'waiting' });
      site.commit();
    }
    site.resource('M-2', 'pack', 'down');
    site.commit();
    const r = agent.recheckChanged();
    expect(r.changed).toEqual(['work_queue', 'resources']);
    expect(r.checked).toBe(2);
    expect(r.withdrawn.map((p) => p.params.job_id)).toEqual(['J-2']);
    expect(inbox.openProposals().map((p) => p.params.job_id)).toEqual(['J-1']);
  });

  it('leaves the run its scan caches: the next run still reads stock changes from its own scans', () => {
    const diffReads = (withRecheck: boolean): number => {
      site?.close();
      site = new TestSite();
      // Twelve rows below the reorder point (5): more lookups than a handle makes before it
      // indexes a full scan of its snapshot.
      for (let i = 0; i < 20; i++) site.stock(`ITEM-${i}`, 'A', { on_hand: i < 12 ? 3 : 50 });
      site.commit();
      const { agent } = site.agentAndInbox();
      expect(agent.run().created).toHaveLength(12);
      site.nowMs += 60_000;
      agent.run(); // the previous run's tag is now a scan the cache holds
      for (let i = 0; i < 12; i++) site.stock(`ITEM-${i}`, 'A', { on_hand: 4 });
      site.commit();
      if (withRecheck) expect(agent.recheckChanged()).toMatchObject({ checked: 12, withdrawn: [] });
      site.stock('ITEM-15', 'A', { on_hand: 2 });
      site.commit();
      if (withRecheck) {
        for (let i = 0; i < 12; i++) site.stock(`ITEM-${i}`, 'A', { on_hand: 3 });
        site.commit();
        expect(agent.recheckChanged()).toMatchObject({ checked: 12, withdrawn: [] });
        // The re-checks hold one snapshot's scan, not also the one before it (they compare none).
        const own = (agent as unknown as { recheckScans: Map<string, ScanCache> }).recheckScans.get('stock')!;
        expect(own.rows).toBeDefined();
        expect(own.prevRows).toBeUndefined();
      }
      const table = site.catalog.getTable({ database: DB, table: 'stock' });
      const changes = vi.spyOn(Object.getPrototypeOf(table) as Table, 'changes');
      try {
        site.nowMs += 60_000;
        expect(agent.run().created.map((p) => p.params.item)).toEqual(['ITEM-15']);
        return changes.mock.calls.filter(([o]) => o.mode === 'diff').length;
      } finally {
        changes.mockRestore();
      }
    };
    expect(diffReads(false)).toBe(0);
    expect(diffReads(true)).toBe(0);
  });

  it('tells the time of the oldest commit not yet checked: the inbox is that old', () => {
    site = new TestSite();
    site.job({ job_id: 'J-1' });
    site.commit();
    const { agent } = site.agentAndInbox();
    expect(agent.oldestUncheckedCommitMs()).toBeNull(); // no check yet: nothing to be behind
    agent.run();
    expect(agent.oldestUncheckedCommitMs()).toBeNull();
    site.nowMs += 10_000;
    const first = site.nowMs;
    site.job({ job_id: 'J-2' });
    site.commit();
    site.nowMs += 10_000;
    site.resource('M-1', 'pick', 'down');
    site.commit();
    expect(agent.oldestUncheckedCommitMs()).toBe(first);
    agent.recheckChanged();
    expect(agent.oldestUncheckedCommitMs()).toBeNull();
    expect(agent.keepsInboxCurrent).toBe(false);
  });

  it('runs on its own timer beside the run timer; 0 turns it off, and a bad interval names the option', () => {
    site = new TestSite();
    const warnings: string[] = [];
    const { agent, inbox } = site.agentAndInbox({ agent: { recheckIntervalMs: 2_000, onWarning: (m) => warnings.push(m) } });
    const another = (recheckIntervalMs: number) => new Agent({ catalog: site.catalog, database: DB, inbox, clock: site.clock, onWarning: () => undefined, recheckIntervalMs });
    vi.useFakeTimers();
    try {
      vi.spyOn(agent, 'run').mockImplementation(() => ({}) as ReturnType<Agent['run']>);
      const checks = vi.spyOn(agent, 'recheckChanged');
      agent.start();
      expect(agent.keepsInboxCurrent).toBe(true);
      vi.advanceTimersByTime(6_000);
      expect(checks).toHaveBeenCalledTimes(3);
      // A failing check (a damaged file) is said once, not every second, and again when it changes.
      checks.mockImplementation(() => {
        throw new Error('corrupt file x');
      });
      vi.advanceTimersByTime(6_000);
      checks.mockImplementationOnce(() => {
        throw new Error('corrupt file y');
      });
      vi.advanceTimersByTime(2_000);
      expect(warnings).toEqual([
        're-check between runs failed: corrupt file x (tried again every 2000 ms; said again when it changes)',
        're-check between runs failed: corrupt file y (tried again every 2000 ms; said again when it changes)',
      ]);
      agent.stop();
      const calls = checks.mock.calls.length;
      vi.advanceTimersByTime(6_000);
      expect(checks).toHaveBeenCalledTimes(calls);
      const off = another(0);
      vi.spyOn(off, 'run').mockImplementation(() => ({}) as ReturnType<Agent['run']>);
      const none = vi.spyOn(off, 'recheckChanged');
      off.start();
      expect(off.keepsInboxCurrent).toBe(false);
      vi.advanceTimersByTime(6_000);
      off.stop();
      expect(none).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
    expect(() => another(-1)).toThrow(/recheckIntervalMs: expected a whole number of milliseconds ≥ 0 \(0: no re-checks between runs\), got -1/);
    expect(() => another(1.5)).toThrow(/recheckIntervalMs: .* got 1\.5/);
  });
});
