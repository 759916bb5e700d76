// An approved command that was carried out (`applied`) kept its situation quiet for
// resuggestAfterDecisionMs (8 h) like a rejection, whatever happened after: J-1 assigned and
// started, its machine down half an hour later and J-1 back in the queue while M-2 was free — no
// proposal for ~8 h; NUT ordered and the inbound arrived, reservations an hour later below the
// point again — the new draft suppressed. Each rule now says what a new occurrence of its situation
// is after an applied command (Rule.newOccurrence); the inbox lets such a situation be proposed
// (SubmitBatch.newOccurrences). escalate-late-job has none: a job still late after its raise stays
// quiet. stock-reorder never reads a row still low from before its order as a new dip: procurement's
// ack can mark the order applied before the inbound shows (the checked snapshot expired).
import { afterEach, describe, expect, it } from 'vitest';
import { WriteBack, type Inbox, type Proposal } from '../inbox/index.ts';
import type { Agent } from './agent.ts';
import { assignJob, escalateLateJob, releaseBlockedJob, stockReorder } from './rules/index.ts';
import { DB, TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

const MIN = 60_000;
const HOUR = 3600_000;

/** Approves p, and marks its command sent (the write-back's publish). */
async function approve(inbox: Inbox, p: Proposal): Promise<void> {
  expect(await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'approved' });
  inbox.markCommand(p.id, 'sent');
}

/** The write-back's poll for one command: applied when the rule sees its effect. */
function pollEffect(agent: Agent, inbox: Inbox, p: Proposal): void {
  if (agent.effectSeen(inbox.get(p.id)!)) inbox.markCommand(p.id, 'applied', null, 'state');
}

/** Runs every `stepMs` from now until `untilMs` (bounded), the proposals each made. */
function runUntil(agent: Agent, untilMs: number, stepMs = MIN): Proposal[] {
  const made: Proposal[] = [];
  for (let i = 0; i < 2000 && site.nowMs < untilMs; i++) {
    site.nowMs += stepMs;
    made.push(...agent.run().created);
  }
  return made;
}

describe('a situation whose approved command was applied', () => {
  it('assign-job: J-1 back in the queue unassigned after its machine went down is proposed again at once', async () => {
    site = new TestSite();
    await site.addUser('lena', 'shift_lead');
    site.resource('M-1', 'pick', 'free');
    site.resource('M-2', 'pick', 'busy');
    site.job({ job_id: 'J-1' });
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [assignJob] } });
    const p = agent.run().created[0]!;
    expect(p.params).toEqual({ job_id: 'J-1', resource_id: 'M-1' });
    await approve(inbox, p);
    // The module assigns and starts J-1 on M-1.
    site.job({ job_id: 'J-1', status: 'in_progress', assigned_resource: 'M-1' });
    site.resource('M-1', 'pick', 'busy');
    site.commit();
    pollEffect(agent, inbox, p);
    expect(inbox.get(p.id)!.command!.state).toBe('applied');
    expect(runUntil(agent, site.nowMs + 30 * MIN)).toEqual([]);
    // M-1 goes down; operations puts J-1 back in the queue, unassigned; M-2 is free.
    site.resource('M-1', 'pick', 'down');
    site.resource('M-2', 'pick', 'free');
    site.job({ job_id: 'J-1', status: 'released', assigned_resource: null });
    site.commit();
    site.nowMs += MIN;
    const again = agent.run();
    expect(again.created.map((x) => x.params)).toEqual([{ job_id: 'J-1', resource_id: 'M-2' }]);
    expect(again.suppressed).toEqual([]);
    expect(assignJob.version).toBe('6');
  });

  it('assign-job: the approved job still waiting for its assignment to show is not proposed again', async () => {
    site = new TestSite();
    await site.addUser('lena', 'shift_lead');
    site.resource('M-1', 'pick', 'free');
    site.resource('M-2', 'pick', 'free');
    site.job({ job_id: 'J-1' });
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [assignJob] } });
    const p = agent.run().created[0]!;
    await approve(inbox, p);
    inbox.markCommand(p.id, 'acknowledged');
    // Acknowledged, the event not in yet: the job is promised (underway), not a new occurrence.
    expect(runUntil(agent, site.nowMs + 10 * MIN)).toEqual([]);
  });

  it('release-blocked-job: J-1 released, then blocked on material again, is proposed again', async () => {
    site = new TestSite();
    await site.addUser('lena', 'shift_lead');
    const blocked = { job_id: 'J-1', status: 'blocked', blocked_reason: 'material short: BOLT', material_item: 'BOLT', material_qty: 5 };
    site.job(blocked);
    site.stock('BOLT', 'A', { on_hand: 10, reserved: 0 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [releaseBlockedJob] } });
    const p = agent.run().created[0]!;
    expect(p.params).toMatchObject({ job_id: 'J-1' });
    await approve(inbox, p);
    site.job({ ...blocked, status: 'released', blocked_reason: null });
    site.commit();
    pollEffect(agent, inbox, p);
    expect(inbox.get(p.id)!.command!.state).toBe('applied');
    expect(runUntil(agent, site.nowMs + HOUR)).toEqual([]);
    site.job(blocked);
    site.commit();
    site.nowMs += MIN;
    expect(agent.run().created.map((x) => x.params.job_id)).toEqual(['J-1']);
    expect(releaseBlockedJob.version).toBe('9');
  });

  it('stock-reorder: the order came in, and reservations an hour later put the row below its point again: a new order', async () => {
    site = new TestSite();
    await site.addUser('lena', 'shift_lead');
    site.stock('NUT', 'A', { on_hand: 20 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [stockReorder] } });
    agent.run();
    site.stock('NUT', 'A', { on_hand: 3 });
    site.commit();
    site.nowMs += MIN;
    const p = agent.run().created[0]!;
    expect(p.params).toEqual({ item: 'NUT', location: 'A', qty: 17, position_before: 3 });
    await approve(inbox, p);
    inbox.markCommand(p.id, 'acknowledged');
    site.stock('NUT', 'A', { inbound: 17 });
    site.commit();
    pollEffect(agent, inbox, p);
    expect(inbox.get(p.id)!.command!.state).toBe('applied');
    expect(runUntil(agent, site.nowMs + HOUR)).toEqual([]);
    site.stock('NUT', 'A', { reserved: 16 });
    site.commit();
    site.nowMs += MIN;
    const again = agent.run();
    expect(again.created.map((x) => x.params)).toEqual([{ item: 'NUT', location: 'A', qty: 16, position_before: 4 }]);
    expect(again.suppressed).toEqual([]);
    expect(stockReorder.version).toBe('10');
  });

  it('stock-reorder: the same across a restart of the site between the order and the new dip', async () => {
    site = new TestSite();
    await site.addUser('lena', 'shift_lead');
    site.stock('NUT', 'A', { on_hand: 20 });
    site.commit();
    const first = site.agentAndInbox({ agent: { rules: [stockReorder] } });
    first.agent.run();
    site.stock('NUT', 'A', { on_hand: 3 });
    site.commit();
    site.nowMs += MIN;
    const p = first.agent.run().created[0]!;
    await approve(first.inbox, p);
    site.stock('NUT', 'A', { inbound: 17 });
    site.commit();
    pollEffect(first.agent, first.inbox, p);
    expect(first.inbox.get(p.id)!.command!.state).toBe('applied');
    expect(runUntil(first.agent, site.nowMs + 20 * MIN)).toEqual([]);
    first.inbox.close();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [stockReorder] } });
    expect(inbox.isQuiet(p.situationKey)).toBe(true);
    expect(inbox.appliedQuiet(p.situationKey)?.id).toBe(p.id);
    site.stock('NUT', 'A', { reserved: 16 });
    site.commit();
    site.nowMs += MIN;
    expect(agent.run().created.map((x) => x.params)).toEqual([{ item: 'NUT', location: 'A', qty: 16, position_before: 4 }]);
  });

  it('stock-reorder: applied on procurement\'s ack before the inbound shows — the still-low row is no new dip, until the order came and it fell again', async () => {
    // Two snapshots kept: the snapshot the approval checked expires, and the write-back takes
    // procurement's ok ack as the effect (core/agents DESIGN.md, "Applied").
    site = new TestSite({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'num-sorted-run.compaction-trigger': '100', 'num-sorted-run.stop-trigger': '200' });
    await site.addUser('lena', 'shift_lead');
    site.stock('NUT', 'A', { on_hand: 20 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [stockReorder] } });
    agent.run();
    site.stock('NUT', 'A', { on_hand: 3 });
    site.commit();
    site.nowMs += MIN;
    const p = agent.run().created[0]!;
    expect(await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'approved' });
    const wb = new WriteBack({ inbox, publish: async () => undefined, onAck: () => undefined, effectSeen: (x) => agent.effectSeen(x), clock: site.clock, monotonic: site.clock, onWarning: () => undefined });
    for (let i = 0; i < 500 && inbox.get(p.id)!.command!.state !== 'sent'; i++) await new Promise((r) => setTimeout(r, 5));
    const checked = inbox.get(p.id)!.decision!.snapshots.checked.stock!;
    wb.handleAck('tilstand/s1/acks/procurement', Buffer.from(JSON.stringify({ command_id: p.id, module: 'procurement', ok: true, ts_ms: site.nowMs })));
    for (let i = 0; i < 3; i++) {
      site.stock(`ITEM-${i}`, 'A', { on_hand: 50 });
      site.commit();
    }
    expect(site.catalog.getTable({ database: DB, table: 'stock' }).snapshots.earliestId()).toBeGreaterThan(checked);
    wb.poll();
    expect(inbox.get(p.id)!.command!.state).toBe('applied');
    // NUT still shows 3 (the inbound not in yet). A run that reads every row (a threshold changed)
    // and a pick that lowers it further see it below: the same dip, not a new one.
    agent.reevaluateAll();
    site.nowMs += MIN;
    const all = agent.run();
    expect(all.created).toEqual([]);
    expect(all.suppressed).toEqual(['stock-reorder|replenish|item="NUT"|location="A"']);
    site.stock('NUT', 'A', { on_hand: 2 });
    site.commit();
    expect(runUntil(agent, site.nowMs + 10 * MIN)).toEqual([]);
    // The inbound shows; then reservations put the row below its point again: a new dip.
    site.stock('NUT', 'A', { inbound: 17 });
    site.commit();
    expect(runUntil(agent, site.nowMs + 30 * MIN)).toEqual([]);
    site.stock('NUT', 'A', { reserved: 16 });
    site.commit();
    site.nowMs += MIN;
    expect(agent.run().created.map((x) => x.params)).toEqual([{ item: 'NUT', location: 'A', qty: 17, position_before: 3 }]);
  });

  it('escalate-late-job: a job still late after its applied raise stays quiet for resuggestAfterDecisionMs', async () => {
    site = new TestSite();
    await site.addUser('lena', 'shift_lead');
    const job = { job_id: 'J-1', priority: 3, due_at_ms: site.nowMs + 30 * MIN };
    site.job(job);
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [escalateLateJob] } });
    const p = agent.run().created[0]!;
    expect(p.params).toMatchObject({ job_id: 'J-1', priority_from: 3 });
    await approve(inbox, p);
    site.job({ ...job, priority: 4 });
    site.commit();
    pollEffect(agent, inbox, p);
    expect(inbox.get(p.id)!.command!.state).toBe('applied');
    // Still late at priority 4: drafted each run, suppressed, not proposed for 8 h.
    const made = runUntil(agent, site.nowMs + 8 * HOUR - 10 * MIN, 5 * MIN);
    expect(made).toEqual([]);
    expect(agent.run().suppressed).toEqual([p.situationKey]);
  });
});
