// A clock stepped back (an NTP correction of a PC that ran ahead) while a time-based proposal is
// open. idle-resource v3 and escalate-late-job v5 re-checked "free for idleMsMin" and "finishes
// after its due time" against the run's clock alone: the next run withdrew the notice or the
// escalation ("free for 14 min, less than the 15 min…", "can now make its due time"), and once the
// clock passed the same moment again a run proposed the same situation anew — a new proposal for
// the shift lead, the one they were reading gone. Time does not go back for a proposal: its time
// checks count from no earlier than when it was proposed (after a step back of up to 10 min); a
// raised threshold still withdraws it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { escalateLateJob, idleResource } from './rules/index.ts';
import { TestSite, T0 } from './test-support.ts';

let site: TestSite;
beforeEach(() => (site = new TestSite()));
afterEach(() => site.close());

const MIN = 60_000;
const H = 60 * MIN;

describe('a clock stepped back under an open time-based proposal', () => {
  it('idle-resource: the notice stays open, and no second one is made when the clock passes it again', async () => {
    await site.addUser('lena', 'shift_lead');
    site.resource('T-1', 'pack', 'free', T0 - 16 * MIN, 'team'); // idle for 16 min (idleMsMin 15)
    site.job({ job_id: 'J-1', capability: 'pack' });
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [idleResource] } });
    const idle = agent.run().created[0]!;
    expect(idle.params.resource_id).toBe('T-1');
    site.nowMs -= 5 * MIN; // NTP steps the clock back five minutes: "free for 11 min"
    const back = agent.run();
    expect(back.withdrawn).toEqual([]);
    expect(inbox.get(idle.id)!.status).toBe('open');
    expect(agent.recheck(idle)).toMatchObject({ holds: true });
    site.nowMs += 6 * MIN;
    const on = agent.run();
    expect(on.withdrawn).toEqual([]);
    expect(on.created).toEqual([]);
    expect(inbox.openProposals().map((p) => p.id)).toEqual([idle.id]);
    expect(await inbox.decide(idle.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'approved' });
  });

  it('idle-resource: a raised idleMsMin still withdraws the notice after a step back', () => {
    site.resource('T-1', 'pack', 'free', T0 - 16 * MIN, 'team');
    site.job({ job_id: 'J-1', capability: 'pack' });
    site.commit();
    const { agent } = site.agentAndInbox({ agent: { rules: [idleResource] } });
    const idle = agent.run().created[0]!;
    site.nowMs -= 5 * MIN;
    agent.reconfigure({ idleMsMin: 60 * MIN });
    expect(agent.run().withdrawn.map((p) => p.id)).toEqual([idle.id]);
  });

  it('escalate-late-job: the escalation stays open, and no second one is made when the clock passes it again', async () => {
    await site.addUser('lena', 'shift_lead');
    site.job({ job_id: 'J-1', capability: 'pick', due_at_ms: T0 + H - 2 * MIN }); // pick takes 1 h: 2 min late
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [escalateLateJob] } });
    const esc = agent.run().created[0]!;
    expect(esc.params.job_id).toBe('J-1');
    site.nowMs -= 5 * MIN; // now it would finish 3 min early
    const back = agent.run();
    expect(back.withdrawn).toEqual([]);
    expect(inbox.get(esc.id)!.status).toBe('open');
    site.nowMs += 6 * MIN;
    const on = agent.run();
    expect(on.withdrawn).toEqual([]);
    expect(on.created).toEqual([]);
    expect(inbox.openProposals().map((p) => p.id)).toEqual([esc.id]);
    site.nowMs -= 10 * MIN;
    expect(await inbox.decide(esc.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'approved' });
  });

  it('escalate-late-job: a shorter run time in the config still withdraws the escalation after a step back', () => {
    site.job({ job_id: 'J-1', capability: 'pick', due_at_ms: T0 + H - 2 * MIN });
    site.commit();
    const { agent } = site.agentAndInbox({ agent: { rules: [escalateLateJob] } });
    const esc = agent.run().created[0]!;
    site.nowMs -= 5 * MIN;
    agent.reconfigure({ jobDurationMsByCapability: { pick: 30 * MIN } });
    expect(agent.run().withdrawn.map((p) => p.id)).toEqual([esc.id]);
  });

  // A step back of hours: the proposal was made under a wrong clock (a PC whose hardware clock runs
  // in local time, 5 h ahead, until NTP corrected it). Counted from its making it stayed open until
  // real time caught up: an escalation for a job with 3 h to spare, a notice for a resource free 1 min.
  it('a step back of hours is no correction: the recheck counts from the clock now and withdraws', () => {
    site.nowMs += 5 * H; // the PC runs 5 h ahead
    site.resource('T-1', 'pack', 'free', T0 - MIN, 'team'); // free since a minute before the real now
    site.job({ job_id: 'J-1', capability: 'pack' });
    site.job({ job_id: 'J-2', capability: 'pick', due_at_ms: T0 + 4 * H }); // pick takes 1 h
    site.commit();
    const { agent } = site.agentAndInbox({ agent: { rules: [idleResource, escalateLateJob] } });
    const made = agent.run().created;
    expect(made.map((p) => p.ruleId).sort()).toEqual(['escalate-late-job', 'idle-resource']);
    site.nowMs -= 5 * H; // NTP corrects it
    expect(agent.run().withdrawn.map((p) => p.id).sort()).toEqual(made.map((p) => p.id).sort());
  });
});
