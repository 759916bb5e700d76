// Each rule on a real warehouse: what it proposes, what it leaves alone, recheck and effect.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { timedOutDetail } from '../inbox/proposal.ts';
import { TestSite, T0 } from './test-support.ts';

let site: TestSite;
beforeEach(() => (site = new TestSite()));
afterEach(() => site.close());

const H = 3600_000;

describe('assign-job', () => {
  it('assigns released unassigned jobs in queue order to free resources with the capability, each resource once', () => {
    site.job({ job_id: 'J-1', capability: 'pick', priority: 1 });
    site.job({ job_id: 'J-2', capability: 'pick', priority: 5 });
    site.job({ job_id: 'J-3', capability: 'pack', priority: 9 });
    site.job({ job_id: 'J-4', capability: 'pick', status: 'in_progress', assigned_resource: 'M-9' });
    site.resource('M-1', 'pick', 'free');
    site.resource('M-2', 'pack', 'busy');
    site.commit();
    const { agent } = site.agentAndInbox();
    const r = agent.run();
    const assign = r.created.filter((p) => p.ruleId === 'assign-job');
    expect(assign.map((p) => p.params)).toEqual([{ job_id: 'J-2', resource_id: 'M-1' }]);
    const p = assign[0]!;
    expect(p.action).toBe('assign_job');
    expect(p.module).toBe('operations');
    expect(p.risk).toBe('low');
    expect(p.situationKey).toBe('assign-job|assign_job|job_id="J-2"');
    expect(p.explanation).toMatch(/J-2.*M-1/);
    const wq = p.evidence.find((e) => e.table === 'work_queue')!;
    expect(wq.tag).toBe(`agent-${r.runId}`);
    expect(wq.snapshotId).toBe(r.snapshots.work_queue);
    expect(wq.rows).toEqual([{ key: { job_id: 'J-2' }, values: expect.objectContaining({ job_id: 'J-2', status: 'released', priority: 5 }) }]);
    expect(p.evidence.find((e) => e.table === 'resources')!.rows[0]!.key).toEqual({ resource_id: 'M-1' });
  });

  it('recheck fails when the resource became busy; effect seen when the job shows the resource', () => {
    site.job({ job_id: 'J-1' });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const p = agent.run().created[0]!;
    expect(agent.recheck(p)).toMatchObject({ holds: true });
    site.resource('M-1', 'pick', 'busy');
    site.job({ job_id: 'J-1', status: 'in_progress', assigned_resource: 'M-1' });
    site.commit();
    expect(agent.recheck(p)).toMatchObject({ holds: false, reason: expect.stringMatching(/J-1 is now in_progress on M-1/) });
    expect(agent.effectSeen(p)).toBe(true);
    expect(inbox.get(p.id)!.status).toBe('open');
  });
});

describe('assign-job with an approved assignment on its way to the module', () => {
  it('offers the promised resource to no other job, and an open proposal for it goes stale when approved', async () => {
    await site.addUser('lena', 'shift_lead');
    site.job({ job_id: 'J-1', capability: 'pick', priority: 1 });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const p1 = agent.run().created.find((p) => p.ruleId === 'assign-job')!;
    expect(p1.params).toEqual({ job_id: 'J-1', resource_id: 'M-1' });
    // A job ahead of J-1 arrives: the next run offers it M-1 (J-1's own proposal still holds).
    site.job({ job_id: 'J-0', capability: 'pick', priority: 9 });
    site.commit();
    const p0 = agent.run().created.find((p) => p.ruleId === 'assign-job')!;
    expect(p0.params).toEqual({ job_id: 'J-0', resource_id: 'M-1' });
    // Lena approves J-1 → M-1; the module has not answered yet, so the tables still show M-1 free.
    expect(await inbox.decide(p1.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'approved' });
    expect(inbox.get(p1.id)!.command!.state).toBe('pending');
    const promised = `resource M-1 is promised to job J-1 by the approved ${p1.id}`;
    expect(agent.recheck(p0)).toMatchObject({ holds: false, reason: promised });
    expect(await inbox.decide(p0.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'stale', reason: promised });
    // Another job arrives with a second free resource: it gets M-2, never M-1, and J-1 is not proposed again.
    site.job({ job_id: 'J-5', capability: 'pick', priority: 5 });
    site.resource('M-2', 'pick', 'free');
    site.commit();
    const r = agent.run();
    expect(r.created.filter((p) => p.ruleId === 'assign-job').map((p) => p.params)).toEqual([{ job_id: 'J-0', resource_id: 'M-2' }]);
    expect(r.suppressed).toEqual([]);
  });

  it('takes the promise back when the module refuses the command', async () => {
    await site.addUser('lena', 'shift_lead');
    site.job({ job_id: 'J-1', capability: 'pick', priority: 1 });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const p1 = agent.run().created[0]!;
    await inbox.decide(p1.id, 'approve', { user: 'lena', pin: '1234' });
    site.job({ job_id: 'J-0', capability: 'pick', priority: 9 });
    site.commit();
    expect(agent.run().created).toEqual([]);
    inbox.markCommand(p1.id, 'failed', 'resource M-1 is reserved');
    expect(agent.run().created.map((p) => p.params)).toEqual([{ job_id: 'J-0', resource_id: 'M-1' }]);
  });

  it('keeps the promise of a command the module acknowledged whose event is late, not of one it never acknowledged', async () => {
    await site.addUser('lena', 'shift_lead');
    site.job({ job_id: 'J-1', capability: 'pick', priority: 1 });
    site.job({ job_id: 'J-2', capability: 'pack', priority: 1 });
    site.resource('M-1', 'pick', 'free');
    site.resource('M-2', 'pack', 'free');
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const [a, b] = agent.run().created;
    expect([a!.params, b!.params]).toEqual([{ job_id: 'J-1', resource_id: 'M-1' }, { job_id: 'J-2', resource_id: 'M-2' }]);
    for (const p of [a!, b!]) await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1234' });
    // M-1's command: the module said yes, then nothing showed for appliedTimeoutMs. M-2's: never answered.
    inbox.markCommand(a!.id, 'sent');
    inbox.markCommand(a!.id, 'acknowledged', 'assigned');
    site.nowMs += 601_000;
    inbox.markCommand(a!.id, 'timed_out', timedOutDetail(601_000, 'acknowledged'));
    inbox.markCommand(b!.id, 'sent');
    inbox.markCommand(b!.id, 'timed_out', timedOutDetail(601_000, 'sent'));
    site.job({ job_id: 'J-0', capability: 'pick', priority: 9 });
    site.job({ job_id: 'J-9', capability: 'pack', priority: 9 });
    site.commit();
    // M-2 is offered again (its module refuses the expired command); M-1 stays J-1's.
    expect(agent.run().created.filter((p) => p.ruleId === 'assign-job').map((p) => p.params)).toEqual([{ job_id: 'J-9', resource_id: 'M-2' }]);
    expect(inbox.commandsUnderway().map((p) => p.id)).toEqual([a!.id]);
    // As long as the situation itself stays quiet (resuggestAfterDecisionMs); then M-1 is free to offer.
    site.nowMs += 8 * H;
    expect(agent.run().created.filter((p) => p.ruleId === 'assign-job').map((p) => p.params)).toEqual([{ job_id: 'J-0', resource_id: 'M-1' }]);
    expect(inbox.commandsUnderway()).toEqual([]);
  });
});

describe('release-blocked-job', () => {
  it('releases a job blocked on material once on_hand − reserved covers it (summed over locations)', () => {
    site.job({ job_id: 'J-1', status: 'blocked', blocked_reason: 'material short: BOLT', material_item: 'BOLT', material_qty: 10 });
    site.job({ job_id: 'J-2', status: 'blocked', blocked_reason: 'material short: NUT', material_item: 'NUT', material_qty: 10 });
    site.job({ job_id: 'J-3', status: 'blocked', blocked_reason: 'machine fault', material_item: 'BOLT', material_qty: 1 });
    site.stock('BOLT', 'A', { on_hand: 8, reserved: 2 });
    site.stock('BOLT', 'B', { on_hand: 30, reserved: 0 });
    site.stock('NUT', 'A', { on_hand: 12, reserved: 5 });
    site.commit();
    const { agent } = site.agentAndInbox();
    const rel = agent.run().created.filter((p) => p.ruleId === 'release-blocked-job');
    expect(rel.map((p) => p.params.job_id)).toEqual(['J-1']);
    expect(rel[0]!.risk).toBe('low'); // 36 − 10 = 26 stay, above the reorder point 5
    expect(rel[0]!.evidence.find((e) => e.table === 'stock')!.rows).toHaveLength(2);
  });

  it('is medium risk when the release takes the item below its reorder point, and rechecks stock', () => {
    site.job({ job_id: 'J-1', status: 'blocked', material_item: 'BOLT', material_qty: 10 });
    site.stock('BOLT', 'A', { on_hand: 12, reserved: 0 });
    site.commit();
    const { agent } = site.agentAndInbox();
    const p = agent.run().created.find((x) => x.ruleId === 'release-blocked-job')!;
    expect(p.risk).toBe('medium');
    expect(p.riskReason).toMatch(/leaving 2, below the reorder point 5/);
    site.stock('BOLT', 'A', { reserved: 5 });
    site.commit();
    expect(agent.recheck(p)).toMatchObject({ holds: false, reason: 'only 7 BOLT available now; the job needs 10' });
  });
  it('serves jobs waiting for the same item in queue order, each from what the jobs ahead left', () => {
    site.job({ job_id: 'J-A', status: 'blocked', material_item: 'BOLT', material_qty: 25, priority: 5 });
    site.job({ job_id: 'J-B', status: 'blocked', material_item: 'BOLT', material_qty: 20, priority: 1 });
    site.job({ job_id: 'J-C', status: 'blocked', material_item: 'BOLT', material_qty: 5, priority: 0 });
    site.stock('BOLT', 'A', { on_hand: 30, reserved: 0 });
    site.commit();
    const { agent } = site.agentAndInbox();
    const rel = agent.run().created.filter((p) => p.ruleId === 'release-blocked-job');
    // 30 BOLT: J-A takes 25; J-B's 20 do not fit in the 5 left; J-C's 5 do.
    expect(rel.map((p) => p.params.job_id).sort()).toEqual(['J-A', 'J-C']);
    const c = rel.find((p) => p.params.job_id === 'J-C')!;
    expect(c.explanation).toMatch(/needs 5 after 25 for J-A ahead of it in the queue/);
    expect(c.risk).toBe('medium'); // 5 − 5 = 0 left, below the reorder point 5
    expect(c.evidence.find((e) => e.table === 'work_queue')!.rows.map((r) => r.key)).toEqual([{ job_id: 'J-C' }, { job_id: 'J-A' }]);
  });

  it('withdraws a release that a job moving ahead in the queue crowds out', () => {
    site.job({ job_id: 'J-B', status: 'blocked', material_item: 'BOLT', material_qty: 20, priority: 1 });
    site.stock('BOLT', 'A', { on_hand: 30, reserved: 0 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const p = agent.run().created.find((x) => x.ruleId === 'release-blocked-job')!;
    expect(p.params.job_id).toBe('J-B');
    site.job({ job_id: 'J-A', status: 'blocked', material_item: 'BOLT', material_qty: 25, priority: 5 });
    site.commit();
    expect(agent.recheck(p)).toMatchObject({ holds: false, reason: '25 of the 30 available BOLT go to J-A, ahead in the queue; 5 do not cover the 20 the job needs' });
    const r = agent.run();
    expect(r.created.map((x) => x.params.job_id)).toEqual(['J-A']);
    expect(inbox.get(p.id)!.status).toBe('withdrawn');
  });
});

describe('release-blocked-job with an approved release on its way to the module', () => {
  it('serves the promised job first, whatever the queue says now, and never proposes it again', async () => {
    await site.addUser('lena', 'shift_lead');
    site.job({ job_id: 'J-B', status: 'blocked', material_item: 'BOLT', material_qty: 20, priority: 1 });
    site.stock('BOLT', 'A', { on_hand: 30, reserved: 0 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const b = agent.run().created.find((x) => x.ruleId === 'release-blocked-job')!;
    expect(await inbox.decide(b.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'approved' });
    // Two jobs ahead of J-B arrive before the module's event: J-A's 25 no longer fit in the 10
    // J-B leaves, J-C's 5 do, after J-B's 20.
    site.job({ job_id: 'J-A', status: 'blocked', material_item: 'BOLT', material_qty: 25, priority: 5 });
    site.job({ job_id: 'J-C', status: 'blocked', material_item: 'BOLT', material_qty: 5, priority: 3 });
    site.commit();
    const r = agent.run();
    const rel = r.created.filter((p) => p.ruleId === 'release-blocked-job');
    expect(rel.map((p) => p.params.job_id)).toEqual(['J-C']);
    expect(rel[0]!.explanation).toMatch(/needs 5 after 20 for J-B, approved for release or ahead of it in the queue/);
    expect(r.suppressed).toEqual([]);
    // Stock falls under J-B's 20 meanwhile: J-B keeps its promise, and J-C's proposal is withdrawn.
    site.stock('BOLT', 'A', { on_hand: 22 });
    site.commit();
    expect(agent.recheck(rel[0]!)).toMatchObject({ holds: false, reason: '20 of the 22 available BOLT go to J-B, approved for release or ahead in the queue; 2 do not cover the 5 the job needs' });
    agent.run();
    expect(inbox.get(rel[0]!.id)!.status).toBe('withdrawn');
  });
});

describe('escalate-late-job', () => {
  it('escalates a job whose estimate (now + duration of its capability) passes its due time', () => {
    site.job({ job_id: 'J-1', capability: 'weld', due_at_ms: T0 + 2 * H }); // weld takes 3 h → late
    site.job({ job_id: 'J-2', capability: 'pick', due_at_ms: T0 + 2 * H }); // default 1 h → fine
    site.job({ job_id: 'J-3', capability: 'pick', due_at_ms: T0 + 30 * 60_000, priority: 9 }); // already top priority
    site.job({ job_id: 'J-4', capability: 'pick', due_at_ms: T0 + 30 * 60_000, status: 'in_progress', assigned_resource: 'M-1' });
    site.commit();
    const { agent } = site.agentAndInbox({ agent: { config: { jobDurationMsByCapability: { weld: 3 * H } } } });
    const esc = agent.run().created.filter((p) => p.ruleId === 'escalate-late-job');
    expect(esc.map((p) => p.params.job_id)).toEqual(['J-1']);
    expect(esc[0]!.params).toMatchObject({ priority_from: 1, due_at: new Date(T0 + 2 * H).toISOString(), reason: 'will finish about 60 min after its due time' });
    site.job({ job_id: 'J-1', capability: 'weld', due_at_ms: T0 + 2 * H, priority: 2 });
    site.commit();
    expect(agent.effectSeen(esc[0]!)).toBe(true);
    expect(agent.recheck(esc[0]!)).toMatchObject({ holds: false, reason: 'job J-1 already has priority 2' });
  });

  it('says "less than a minute" for a job late by seconds, not "0 min"', () => {
    site.job({ job_id: 'J-1', capability: 'pick', due_at_ms: T0 + H - 20_000 }); // pick takes 1 h: 20 s late
    site.commit();
    const { agent } = site.agentAndInbox();
    const [esc] = agent.run().created.filter((p) => p.ruleId === 'escalate-late-job');
    expect(esc!.params.reason).toBe('will finish less than a minute after its due time');
    expect(esc!.explanation).toContain('so it ends less than a minute late');
    expect(esc!.ruleVersion).toBe('2');
  });
});

describe('idle-resource', () => {
  it('flags a resource free longer than idleMsMin while work with its capability waits (a notice)', () => {
    site.resource('T-1', 'pack', 'free', T0 - 40 * 60_000, 'team');
    site.resource('T-2', 'pack', 'free', T0 - 5 * 60_000, 'team'); // not idle long enough
    site.resource('M-1', 'weld', 'free', T0 - 40 * 60_000); // nothing waits for weld
    site.job({ job_id: 'J-1', capability: 'pack', status: 'blocked', material_item: 'BOX', material_qty: 5 });
    site.commit();
    const { agent } = site.agentAndInbox();
    const idle = agent.run().created.filter((p) => p.ruleId === 'idle-resource');
    expect(idle.map((p) => p.params.resource_id)).toEqual(['T-1']);
    expect(idle[0]!.module).toBeNull();
    expect(idle[0]!.params.waiting_jobs).toEqual(['J-1']);
    expect(idle[0]!.explanation).toMatch(/free for 40 min/);
  });
});

describe('idle-resource over many jobs and capabilities (waiting jobs grouped once per snapshot)', () => {
  it('lists, for each idle resource, exactly the waiting jobs of its capability in key order, on the first and a later run', () => {
    const seed = 20261201;
    console.log(`idle-resource grouping: seed ${seed}`);
    let x = seed;
    const rnd = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const caps = ['pack', 'pick', 'weld', 'load'];
    const statuses = ['released', 'blocked', 'in_progress', 'done'];
    const jobs: { id: string; cap: string; status: string; assigned: string | null }[] = [];
    for (let i = 0; i < 300; i++) {
      const status = statuses[Math.floor(rnd() * statuses.length)]!;
      const assigned = status === 'in_progress' || (status === 'released' && rnd() < 0.3) ? 'R-X' : null;
      jobs.push({ id: `J-${String(i).padStart(3, '0')}`, cap: caps[Math.floor(rnd() * caps.length)]!, status, assigned });
      site.job({ job_id: jobs[i]!.id, capability: jobs[i]!.cap, status, assigned_resource: assigned, ...(status === 'blocked' ? { material_item: 'BOX', material_qty: 1 } : {}) });
    }
    for (const c of caps) site.resource(`R-${c}`, c, 'free', T0 - 60 * 60_000);
    site.resource('R-busy', 'pack', 'busy', T0 - 60 * 60_000);
    site.commit();
    // The reference: a filter over every job per resource (what the rule did before it grouped).
    const expected = (cap: string) => jobs.filter((j) => j.cap === cap && ((j.status === 'released' && j.assigned === null) || j.status === 'blocked')).map((j) => j.id);
    const { agent } = site.agentAndInbox();
    const first = agent.run().created.filter((p) => p.ruleId === 'idle-resource');
    expect(first.map((p) => p.params.resource_id).sort()).toEqual(caps.map((c) => `R-${c}`).sort());
    for (const p of first) {
      const cap = String(p.params.capability);
      expect(p.params.waiting_jobs).toEqual(expected(cap).slice(0, 10));
      expect(p.explanation).toContain(`while ${expected(cap).length} job(s) needing ${cap} wait`);
      expect(agent.recheck(p)).toMatchObject({ holds: true });
    }
    // A minute later on the same snapshot: the same situations (duplicates, nothing withdrawn).
    site.nowMs += 60_000;
    const second = agent.run();
    expect(second.created.filter((p) => p.ruleId === 'idle-resource')).toEqual([]);
    expect(second.withdrawn).toEqual([]);
  });
});

describe('stock-reorder (changelog-triggered)', () => {
  it('proposes replenishment for rows that fall below the reorder point between two runs, from the previous tag', () => {
    site.stock('BOLT', 'A', { on_hand: 20, reserved: 0 });
    site.stock('NUT', 'A', { on_hand: 3, reserved: 0 }); // below on the first run (no baseline: every row is new)
    site.stock('WASHER', 'A', { on_hand: 50 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { config: { reorderByItem: { BOLT: { reorderPoint: 10, orderUpTo: 40 } } } } });
    const first = agent.run();
    expect(first.created.filter((p) => p.ruleId === 'stock-reorder').map((p) => p.params)).toEqual([{ item: 'NUT', location: 'A', qty: 17, position_before: 3 }]);

    site.nowMs += 60_000;
    site.stock('BOLT', 'A', { reserved: 14 }); // 20 − 14 = 6 < 10: crosses
    site.stock('WASHER', 'A', { on_hand: 49 }); // changes, stays above
    site.commit();
    const second = agent.run();
    const re = second.created.filter((p) => p.ruleId === 'stock-reorder');
    expect(re.map((p) => p.params)).toEqual([{ item: 'BOLT', location: 'A', qty: 34, position_before: 6 }]);
    expect(re[0]!.explanation).toMatch(/position 6 \(was 20\), below the reorder point 10/);
    // NUT did not change: not proposed again, and its open proposal still holds (not withdrawn).
    expect(second.withdrawn).toEqual([]);
    expect(inbox.openProposals().filter((p) => p.ruleId === 'stock-reorder')).toHaveLength(2);

    // Inbound arrives for NUT: the situation resolves and the open proposal is withdrawn; effect seen.
    site.nowMs += 60_000;
    site.stock('NUT', 'A', { inbound: 17 });
    site.commit();
    const nut = inbox.openProposals().find((p) => p.params.item === 'NUT')!;
    expect(agent.effectSeen(nut)).toBe(true);
    const third = agent.run();
    expect(third.withdrawn.map((p) => p.id)).toEqual([nut.id]);
    expect(third.withdrawn[0]!.withdrawnReason).toMatch(/NUT at A is at 20 now, not below the reorder point 5/);
  });

  it("orders each location of an item to its own level, and rechecks against that location's", () => {
    // A pick face (A) refilled in small amounts beside a reserve (R) of the same item.
    site.stock('BOLT', 'A', { on_hand: 8, reserved: 0 }); // below A's 10, above nothing else
    site.stock('BOLT', 'R', { on_hand: 30, reserved: 0 }); // below the item's 40
    site.stock('BOLT', 'DOCK', { on_hand: 45, reserved: 0 }); // above the item's 40
    site.commit();
    const config = { reorderByItem: { BOLT: { reorderPoint: 40, orderUpTo: 100, locations: { A: { reorderPoint: 10, orderUpTo: 25 } } } } };
    const { agent } = site.agentAndInbox({ agent: { config } });
    const created = agent.run().created.filter((p) => p.ruleId === 'stock-reorder');
    expect(created.map((p) => p.params)).toEqual([
      { item: 'BOLT', location: 'A', qty: 17, position_before: 8 },
      { item: 'BOLT', location: 'R', qty: 70, position_before: 30 },
    ]);
    const a = created.find((p) => p.params.location === 'A')!;
    expect(a.explanation).toMatch(/below the reorder point 10\. Order 17 to bring it to 25/);
    // A at 12 has recovered by its own point (10), though it is under the item's (40).
    site.stock('BOLT', 'A', { on_hand: 12 });
    site.commit();
    expect(agent.recheck(a)).toMatchObject({ holds: false, reason: 'BOLT at A is at 12 now, not below the reorder point 10' });
  });

  it('sees the order placed when orders reserved more meanwhile (inbound rose by qty over the evidence row)', () => {
    site.stock('NUT', 'A', { on_hand: 1, reserved: 0, inbound: 2 });
    site.commit();
    const { agent } = site.agentAndInbox();
    const p = agent.run().created.find((x) => x.ruleId === 'stock-reorder')!;
    expect(p.params).toEqual({ item: 'NUT', location: 'A', qty: 17, position_before: 3 });
    // The purchase order opens (inbound 2 → 19) while an order reserves 2: position 18, not 20.
    site.stock('NUT', 'A', { reserved: 2, inbound: 19 });
    site.commit();
    expect(agent.effectSeen(p)).toBe(true);
    // Reservations alone, or an order smaller than qty, are no effect.
    site.stock('NUT', 'A', { reserved: 2, inbound: 18 });
    site.commit();
    expect(agent.effectSeen(p)).toBe(false);
  });
});

describe('stock quantities a module got wrong (negative reserved or inbound)', () => {
  it('counts a negative reservation as none: it adds no stock, so a job the shelf cannot cover is not released', () => {
    site.job({ job_id: 'J-1', status: 'blocked', blocked_reason: 'material short: BOLT', material_item: 'BOLT', material_qty: 25 });
    site.stock('BOLT', 'A', { on_hand: 10, reserved: -20 }); // 10 on the shelf, whatever commerce says
    site.commit();
    const { agent } = site.agentAndInbox();
    expect(agent.run().created.filter((p) => p.ruleId === 'release-blocked-job')).toEqual([]);
  });

  it('counts a negative inbound as no order: it does not trigger a reorder nor enlarge it', () => {
    site.stock('NUT', 'A', { on_hand: 10, reserved: 0, inbound: -30 }); // position 10, above 5
    site.stock('BOLT', 'A', { on_hand: 2, reserved: 0, inbound: -30 }); // position 2: order 18, not 48
    site.commit();
    const { agent } = site.agentAndInbox();
    const re = agent.run().created.filter((p) => p.ruleId === 'stock-reorder');
    expect(re.map((p) => p.params)).toEqual([{ item: 'BOLT', location: 'A', qty: 18, position_before: 2 }]);
  });
});

describe('idle-resource with an approved assignment on its way to the module', () => {
  it('does not flag the promised resource, nor count the promised job as waiting; its open notice is withdrawn', async () => {
    await site.addUser('lena', 'shift_lead');
    site.job({ job_id: 'J-1', capability: 'pick', priority: 5 });
    site.resource('M-1', 'pick', 'free', T0 - 40 * 60_000);
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const first = agent.run().created;
    const assign = first.find((p) => p.ruleId === 'assign-job')!;
    const idle = first.find((p) => p.ruleId === 'idle-resource')!;
    expect(idle.params).toMatchObject({ resource_id: 'M-1', waiting_jobs: ['J-1'] });
    // Lena puts M-1 to work on J-1; the module has not answered yet, so M-1 still shows free.
    expect(await inbox.decide(assign.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'approved' });
    // A second pick resource idle as long: J-1 is promised M-1, so nothing waits for it either.
    site.resource('M-2', 'pick', 'free', T0 - 40 * 60_000);
    site.commit();
    site.nowMs += 60_000;
    const r = agent.run();
    expect(r.created.filter((p) => p.ruleId === 'idle-resource')).toEqual([]);
    expect(r.withdrawn.map((p) => p.id)).toEqual([idle.id]);
    expect(inbox.get(idle.id)!.withdrawnReason).toMatch(new RegExp(`^resource M-1 is promised to job J-1 by the approved ${assign.id}`));
  });
});
