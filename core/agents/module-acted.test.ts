// "Did the module act?": each rule's effectSeen through the real write-back (its poll and its ack
// handling), so what the decision trail ends in — applied, failed, timed out — is checked, not
// only the rule's answer. The module is played by hand: its events are commits of the state
// tables, its acks are handed to WriteBack.handleAck (no broker: write-back.test.ts covers MQTT).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WriteBack, type Inbox, type Proposal } from '../inbox/index.ts';
import { RowKind } from '../lsm/index.ts';
import type { Agent } from './agent.ts';
import { assignJob, escalateLateJob, releaseBlockedJob, stockReorder } from './rules/index.ts';
import { DB, STATE_SPECS, T0, TestSite, type JobRow } from './test-support.ts';

const H = 3600_000;
let site: TestSite;
beforeEach(() => (site = new TestSite()));
afterEach(() => site.close());

/** Sequence numbers above TestSite's own, for the deletions this file writes. */
let deleteSeq = 1_000_000_000n;

/** The operations module removes a job from the queue (a delete event). */
function deleteJob(j: JobRow): void {
  site.writers.work_queue.writeRecord(
    {
      job_id: j.job_id,
      status: j.status ?? 'released',
      blocked_reason: j.blocked_reason ?? null,
      capability: j.capability ?? 'pick',
      material_item: j.material_item ?? null,
      material_qty: j.material_qty ?? null,
      priority: j.priority ?? 1,
      due_at: (T0 + 48 * H) * 1000,
      assigned_resource: j.assigned_resource ?? null,
      ops_seq: ++deleteSeq,
    },
    RowKind.DELETE,
  );
}

/** A write-back wired to the agent as the site wires it; publish always succeeds (the broker took it). */
function writeBack(agent: Agent, inbox: Inbox): { wb: WriteBack; ack: (p: Proposal, a: { ok: boolean; error?: string; result?: unknown }) => void } {
  const wb = new WriteBack({
    inbox,
    publish: async () => undefined,
    onAck: () => undefined,
    effectSeen: (p) => agent.effectSeen(p),
    clock: site.clock,
    monotonic: site.clock,
    onWarning: () => undefined,
  });
  const ack = (p: Proposal, a: { ok: boolean; error?: string; result?: unknown }) =>
    wb.handleAck(`tilstand/s1/acks/${p.module}`, Buffer.from(JSON.stringify({ command_id: p.id, module: p.module, ts_ms: site.nowMs, ...a })));
  return { wb, ack };
}

/** Approves p and waits (bounded) until the write-back marked its command sent. */
async function approveAndSend(inbox: Inbox, p: Proposal): Promise<void> {
  expect(await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'approved' });
  const end = Date.now() + 5000;
  for (let i = 0; i < 500 && inbox.get(p.id)!.command!.state !== 'sent'; i++) {
    if (Date.now() > end) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  expect(inbox.get(p.id)!.command!.state).toBe('sent');
}

const state = (inbox: Inbox, p: Proposal) => inbox.get(p.id)!.command!.state;

describe('release-blocked-job: a job that left the work queue', () => {
  const blocked: JobRow = { job_id: 'J-1', status: 'blocked', blocked_reason: 'material short: BOLT', material_item: 'BOLT', material_qty: 5 };

  async function approvedRelease() {
    await site.addUser('lena', 'shift_lead');
    site.job(blocked);
    site.stock('BOLT', 'A', { on_hand: 10, reserved: 0 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [releaseBlockedJob] } });
    const p = agent.run().created[0]!;
    expect(p).toMatchObject({ ruleVersion: '9', action: 'release_job', params: { job_id: 'J-1' } });
    const { wb, ack } = writeBack(agent, inbox);
    await approveAndSend(inbox, p);
    return { agent, inbox, p, wb, ack };
  }

  it('is not applied when the job was deleted before the module acted: the refusal fails the command', async () => {
    const { inbox, p, wb, ack } = await approvedRelease();
    // The floor removes J-1 while the command is on its way; the module then finds no such job.
    deleteJob(blocked);
    site.commit();
    wb.poll();
    // v4 called a job gone released: applied here, and the refusal below was ignored.
    expect(state(inbox, p)).toBe('sent');
    ack(p, { ok: false, error: 'no such job: J-1' });
    expect(inbox.get(p.id)!.command).toMatchObject({ state: 'failed', detail: 'no such job: J-1' });
    wb.poll();
    expect(state(inbox, p)).toBe('failed');
  });

  it('is applied when the job was released and then removed before the write-back looked', async () => {
    const { inbox, p, wb } = await approvedRelease();
    site.job({ ...blocked, status: 'released', blocked_reason: null }); // the module's release_job
    site.commit();
    deleteJob({ ...blocked, status: 'done', blocked_reason: null }); // run, done and removed
    site.commit();
    wb.poll();
    expect(state(inbox, p)).toBe('applied');
  });

  it('released and removed in one commit: the module\'s ok ack decides, as the versions show only the removal', async () => {
    const { inbox, p, wb, ack } = await approvedRelease();
    site.job({ ...blocked, status: 'released', blocked_reason: null });
    deleteJob({ ...blocked, status: 'done', blocked_reason: null });
    site.commit();
    wb.poll();
    expect(state(inbox, p)).toBe('sent');
    ack(p, { ok: true, result: { job_id: 'J-1', status: 'released' } });
    expect(state(inbox, p)).toBe('acknowledged');
    wb.poll();
    expect(state(inbox, p)).toBe('applied');
  });

  it('is applied when the module released the job and the floor blocked it again before the write-back looked', async () => {
    const { inbox, p, wb } = await approvedRelease();
    site.job({ ...blocked, status: 'released', blocked_reason: null }); // the module's release_job
    site.commit();
    site.job(blocked); // short again: a count found less on the shelf
    site.commit();
    wb.poll();
    // v4 looked at the job now only (blocked) and timed the command out.
    expect(state(inbox, p)).toBe('applied');
  });

  it('a job still in the queue: applied once it is no longer blocked, as before', async () => {
    const { inbox, p, wb } = await approvedRelease();
    wb.poll();
    expect(state(inbox, p)).toBe('sent');
    site.job({ ...blocked, status: 'released', blocked_reason: null });
    site.commit();
    wb.poll();
    expect(state(inbox, p)).toBe('applied');
  });
});

describe('assign-job: a job that left the work queue', () => {
  const waiting: JobRow = { job_id: 'J-1', capability: 'pick' };

  async function approvedAssignment() {
    await site.addUser('lena', 'shift_lead');
    site.job(waiting);
    site.resource('M-1', 'pick', 'free');
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [assignJob] } });
    const p = agent.run().created[0]!;
    expect(p).toMatchObject({ ruleVersion: '6', action: 'assign_job', params: { job_id: 'J-1', resource_id: 'M-1' } });
    const { wb, ack } = writeBack(agent, inbox);
    await approveAndSend(inbox, p);
    return { agent, inbox, p, wb, ack };
  }

  it('is applied when the job was assigned, run and removed before the write-back looked', async () => {
    const { inbox, p, wb } = await approvedAssignment();
    site.job({ ...waiting, status: 'in_progress', assigned_resource: 'M-1' }); // the module's assign_job
    site.commit();
    deleteJob({ ...waiting, status: 'done', assigned_resource: 'M-1' }); // done and removed
    site.commit();
    wb.poll();
    // v4 looked at the job now only (gone) and timed the command out.
    expect(state(inbox, p)).toBe('applied');
  });

  it('assigned and removed in one commit: the module\'s ok ack decides, as the versions show only the removal', async () => {
    const { inbox, p, wb, ack } = await approvedAssignment();
    site.job({ ...waiting, status: 'in_progress', assigned_resource: 'M-1' });
    deleteJob({ ...waiting, status: 'done', assigned_resource: 'M-1' });
    site.commit();
    wb.poll();
    expect(state(inbox, p)).toBe('sent'); // as likely a job deleted before the module acted
    ack(p, { ok: true, result: { job_id: 'J-1', status: 'in_progress', assigned_resource: 'M-1' } });
    wb.poll();
    expect(state(inbox, p)).toBe('applied');
  });

  it('a job still in the queue and waiting: an ok ack alone is not the effect', async () => {
    const { inbox, p, wb, ack } = await approvedAssignment();
    ack(p, { ok: true });
    wb.poll();
    expect(state(inbox, p)).toBe('acknowledged');
    site.job({ ...waiting, status: 'in_progress', assigned_resource: 'M-1' });
    site.commit();
    wb.poll();
    expect(state(inbox, p)).toBe('applied');
  });
});

describe('escalate-late-job: a raise the versions cannot show', () => {
  const late: JobRow = { job_id: 'J-1', capability: 'weld', due_at_ms: T0 + 2 * H, priority: 5 };

  async function approvedEscalation() {
    await site.addUser('lena', 'shift_lead');
    site.job(late);
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [escalateLateJob], config: { jobDurationMsByCapability: { weld: 3 * H } } } });
    const p = agent.run().created[0]!;
    expect(p).toMatchObject({ ruleVersion: '6', params: { job_id: 'J-1', priority_from: 5 } });
    const { wb, ack } = writeBack(agent, inbox);
    await approveAndSend(inbox, p);
    return { agent, inbox, p, wb, ack };
  }

  it('a lowering and the module\'s raise in one commit: applied on the module\'s ok ack', async () => {
    const { inbox, p, wb, ack } = await approvedEscalation();
    // A planner lowers J-1 to 3 and the module's escalate_job raises it to 4, both in one ingest
    // commit: the versions show only 4, below priority_from.
    site.job({ ...late, priority: 3 });
    site.job({ ...late, priority: 4 });
    site.commit();
    wb.poll();
    expect(state(inbox, p)).toBe('sent'); // no ack yet: as likely a lowering whose raise is on its way
    ack(p, { ok: true, result: { job_id: 'J-1', priority: 4 } });
    wb.poll();
    // v4 waited for a raise it could never see, and timed the command out.
    expect(state(inbox, p)).toBe('applied');
  });

  it('a lowering the module then refused: failed, never applied', async () => {
    const { inbox, p, wb, ack } = await approvedEscalation();
    site.job({ ...late, priority: 3 });
    site.commit();
    wb.poll();
    expect(state(inbox, p)).toBe('sent');
    ack(p, { ok: false, error: 'job J-1 is done' });
    wb.poll();
    expect(state(inbox, p)).toBe('failed');
  });

  it('not lowered: an ok ack alone is not the effect, the raise in the tables is', async () => {
    const { inbox, p, wb, ack } = await approvedEscalation();
    ack(p, { ok: true });
    wb.poll();
    expect(state(inbox, p)).toBe('acknowledged');
    site.job({ ...late, priority: 6 });
    site.commit();
    wb.poll();
    expect(state(inbox, p)).toBe('applied');
  });

  it('a job escalated and removed before the write-back looked: applied on the module\'s ok ack; a refusal fails', async () => {
    const { agent, inbox, p, wb, ack } = await approvedEscalation();
    deleteJob({ ...late, priority: 6 });
    site.commit();
    wb.poll();
    expect(state(inbox, p)).toBe('sent');
    ack(p, { ok: true });
    wb.poll();
    expect(state(inbox, p)).toBe('applied');
    // The same situation refused: the job is gone and the module says so.
    expect(agent.effectSeen({ ...inbox.get(p.id)!, command: { ...inbox.get(p.id)!.command!, state: 'failed', detail: 'no such job: J-1' } })).toBe(false);
  });
});

describe('escalate-late-job: a commit of the range expired', () => {
  it('counts the module\'s ok ack when the versions since the approval can no longer be read', async () => {
    site.close();
    // Two snapshots retained, no compaction: each commit is one snapshot, and the third after the
    // approval expires the first after it.
    site = new TestSite({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'num-sorted-run.compaction-trigger': '100', 'num-sorted-run.stop-trigger': '200' });
    await site.addUser('lena', 'shift_lead');
    const late: JobRow = { job_id: 'J-1', capability: 'weld', due_at_ms: T0 + 2 * H, priority: 5 };
    site.job(late);
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [escalateLateJob], config: { jobDurationMsByCapability: { weld: 3 * H } } } });
    const p = agent.run().created[0]!;
    const { wb, ack } = writeBack(agent, inbox);
    await approveAndSend(inbox, p);
    ack(p, { ok: true });
    const checked = inbox.get(p.id)!.decision!.snapshots.checked.work_queue!;
    // Raised to 6 by the module, set back to 5 by a planner, then other jobs: the raise's commit
    // expires unseen (were it readable, the raise would show; nothing here is a lowering).
    site.job({ ...late, priority: 6 });
    site.commit();
    site.job({ ...late, priority: 5 });
    site.commit();
    for (let i = 0; i < 3; i++) {
      site.job({ job_id: `J-9${i}`, status: 'done' });
      site.commit();
    }
    expect(site.catalog.getTable({ database: DB, table: 'work_queue' }).snapshots.earliestId()).toBeGreaterThan(checked + 1);
    wb.poll();
    expect(state(inbox, p)).toBe('applied');
  });
});

describe('stock-reorder: moves after the approval', () => {
  async function approvedOrder() {
    await site.addUser('lena', 'shift_lead');
    site.stock('NUT', 'A', { on_hand: 0, reserved: 0, inbound: 3 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [stockReorder] } });
    const p = agent.run().created[0]!;
    expect(p).toMatchObject({ ruleVersion: '10', params: { item: 'NUT', location: 'A', qty: 17, position_before: 3 } });
    const { wb, ack } = writeBack(agent, inbox);
    await approveAndSend(inbox, p);
    return { agent, inbox, p, wb, ack };
  }

  it('a delivery and a pick between the approval and the order: seen in procurement\'s versions', async () => {
    const { inbox, p, wb } = await approvedOrder();
    // After the approval: the 3 on order arrive (inbound 3 → 0, on hand 0 → 3), 2 are picked.
    site.stock('NUT', 'A', { on_hand: 3, inbound: 0 });
    site.commit();
    site.stock('NUT', 'A', { on_hand: 1 });
    site.commit();
    wb.poll();
    expect(state(inbox, p)).toBe('sent');
    // Procurement opens the order of 17: position 18 (< 3 + 17), inbound 17 (< 3 + 17) against
    // both the proposal's and the checked row; v3 timed it out. Its versions: 3 → 0 → 17.
    site.stock('NUT', 'A', { inbound: 17 });
    site.commit();
    wb.poll();
    expect(state(inbox, p)).toBe('applied');
  });

  it('no order placed: a delivery alone is no effect, and the refusal fails the command', async () => {
    const { inbox, p, wb, ack } = await approvedOrder();
    site.stock('NUT', 'A', { on_hand: 3, inbound: 0 });
    site.commit();
    site.stock('NUT', 'A', { inbound: 10 }); // an order of 10 (someone else's), short of 17
    site.commit();
    wb.poll();
    expect(state(inbox, p)).toBe('sent');
    ack(p, { ok: false, error: 'supplier closed' });
    wb.poll();
    expect(state(inbox, p)).toBe('failed');
  });
});

describe('stock-reorder: the snapshot the approval checked expired', () => {
  it('counts procurement\'s ok ack when that snapshot can no longer be read', async () => {
    site.close();
    site = new TestSite({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'num-sorted-run.compaction-trigger': '100', 'num-sorted-run.stop-trigger': '200' });
    await site.addUser('lena', 'shift_lead');
    site.stock('NUT', 'A', { on_hand: 0, reserved: 0, inbound: 3 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [stockReorder] } });
    const p = agent.run().created[0]!;
    const { wb, ack } = writeBack(agent, inbox);
    await approveAndSend(inbox, p);
    const checked = inbox.get(p.id)!.decision!.snapshots.checked.stock!;
    ack(p, { ok: true });
    // The delivery, a pick and the order, then other items' commits: the row now (position 18,
    // inbound 17) is short of both comparisons, and what came between has expired.
    site.stock('NUT', 'A', { on_hand: 3, inbound: 0 });
    site.commit();
    site.stock('NUT', 'A', { on_hand: 1 });
    site.commit();
    site.stock('NUT', 'A', { inbound: 17 });
    site.commit();
    for (let i = 0; i < 3; i++) {
      site.stock(`ITEM-${i}`, 'A', { on_hand: 50 });
      site.commit();
    }
    expect(site.catalog.getTable({ database: DB, table: 'stock' }).snapshots.earliestId()).toBeGreaterThan(checked);
    wb.poll();
    expect(state(inbox, p)).toBe('applied');
  });
});

// A stock row deleted (an item taken out of a location; a stock table that removes rows, here
// on inventory's delete) can no longer show the order: the effect check answered "not yet" for as
// long as the write-back asked — up to resuggestAfterDecisionMs after an acknowledged command
// timed out — whatever procurement had done. Now, as for a job gone from the queue: procurement's
// versions of the row since the checked snapshot show the order, else the module's word decides.
describe('stock-reorder: the stock row deleted', () => {
  async function approvedOrder() {
    // A stock table on which inventory's delete removes the row (the seed table's nulls its columns).
    site.writers.stock.close();
    const id = { database: DB, table: 'stock' };
    site.catalog.dropTable(id);
    const spec = STATE_SPECS.stock;
    site.writers.stock = site.catalog.createTable(id, { ...spec, options: { ...spec.options, 'partial-update.remove-record-on-sequence-group': 'inventory_seq' } }).newWriter({ commitUser: 'test-ingest' });
    await site.addUser('lena', 'shift_lead');
    site.stock('NUT', 'A', { on_hand: 0, reserved: 0, inbound: 3 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [stockReorder] } });
    const p = agent.run().created[0]!;
    expect(p).toMatchObject({ params: { item: 'NUT', location: 'A', qty: 17, position_before: 3 } });
    const { wb, ack } = writeBack(agent, inbox);
    await approveAndSend(inbox, p);
    return { agent, inbox, p, wb, ack };
  }

  /** Inventory removes the row (a delete of its column group, which removes the whole row here). */
  function deleteStock(item: string, location: string): void {
    site.writers.stock.writeRecord({ item, location, on_hand: 0, inventory_seq: ++deleteSeq }, RowKind.DELETE);
    site.commit();
    expect(site.catalog.getTable({ database: DB, table: 'stock' }).reader().get({ item, location })).toBeUndefined();
  }

  it('ordered and then deleted before the write-back looked: applied, as procurement\'s versions show the order', async () => {
    const { inbox, p, wb } = await approvedOrder();
    site.stock('NUT', 'A', { inbound: 20 }); // procurement's order of 17
    site.commit();
    deleteStock('NUT', 'A');
    wb.poll();
    expect(state(inbox, p)).toBe('applied');
  });

  it('deleted before procurement acted: its ok ack marks the command applied, a refusal fails it', async () => {
    const first = await approvedOrder();
    deleteStock('NUT', 'A');
    first.wb.poll();
    expect(state(first.inbox, first.p)).toBe('sent'); // the module has not said yet
    first.ack(first.p, { ok: true, result: { ordered: 17 } });
    first.wb.poll();
    expect(state(first.inbox, first.p)).toBe('applied');
    site.close();
    site = new TestSite();
    const second = await approvedOrder();
    deleteStock('NUT', 'A');
    second.ack(second.p, { ok: false, error: 'no such stock row: NUT at A' });
    second.wb.poll();
    expect(state(second.inbox, second.p)).toBe('failed');
  });
});
