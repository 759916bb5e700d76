// The order of the inbox's open proposals, which the agent walks (its run's withdrawals, a
// recheck's, assign-job's claims), is the same in a live inbox and after a restart. After a
// restart it was the table's key order, proposal ids as strings (`…-10` before `…-2`), where the
// live inbox had them in creation order: a site's run after a restart (and a replay, which opens the
// fixture's inbox at the cut) withdrew in another order, and of two open proposals that claim one
// resource another one won — a job then got a proposal live that it did not get after a restart.
import { afterEach, expect, it } from 'vitest';
import { situationKey } from '../inbox/index.ts';
import type { ProposalInput } from '../inbox/index.ts';
import { runIdAt } from './agent.ts';
import { T0, TestSite } from './test-support.ts';

const sites: TestSite[] = [];
afterEach(() => {
  for (const s of sites.splice(0)) s.close();
});

function site(): TestSite {
  const s = new TestSite();
  sites.push(s);
  return s;
}

/** The agent and inbox of `s`, live (`restart` false) or opened again as after a restart. */
function agentAfter(s: TestSite, first: ReturnType<TestSite['agentAndInbox']>, restart: boolean): ReturnType<TestSite['agentAndInbox']> {
  if (!restart) return first;
  first.inbox.close();
  return s.agentAndInbox();
}

it("a run's withdrawals go in the same order live and after a restart (12 open proposals of one run)", () => {
  const withdrawn: Record<string, string[]> = {};
  for (const restart of [false, true]) {
    const s = site();
    for (let i = 1; i <= 12; i++) {
      const n = String(i).padStart(2, '0');
      s.job({ job_id: `J${n}`, priority: 100 - i });
      s.resource(`R${n}`, 'pick', 'free');
    }
    s.commit();
    const first = s.agentAndInbox();
    expect(first.agent.run().created).toHaveLength(12);
    const { agent, inbox } = agentAfter(s, first, restart);
    expect(inbox.openProposals()).toHaveLength(12);
    s.nowMs += 60_000;
    for (let i = 1; i <= 12; i++) s.resource(`R${String(i).padStart(2, '0')}`, 'pick', 'down');
    s.commit();
    withdrawn[String(restart)] = agent.run().withdrawn.map((p) => p.id);
  }
  const run = runIdAt(T0);
  const inCreationOrder = Array.from({ length: 12 }, (_, i) => `P-${run}-${i + 1}`);
  expect(withdrawn.false).toEqual(inCreationOrder);
  expect(withdrawn.true).toEqual(inCreationOrder);
});

/** An assign-job proposal of `job` on `resource` (as the rule drafts it), or a notice of another rule. */
function input(runId: string, job: string, resource: string | null): ProposalInput {
  const params: Record<string, string> = resource === null ? { note: job } : { job_id: job, resource_id: resource };
  return {
    situationKey: resource === null ? situationKey('test-note', 'note', { note: job }) : situationKey('assign-job', 'assign_job', { job_id: job }),
    ruleId: resource === null ? 'test-note' : 'assign-job',
    ruleVersion: '5',
    action: resource === null ? 'note' : 'assign_job',
    module: resource === null ? null : 'operations',
    params,
    risk: 'low',
    riskReason: 'reversible',
    explanation: `${job} ${resource ?? ''}`,
    evidence: [],
    runId,
  };
}

it('of two open proposals that claim one resource, the same one wins live and after a restart', () => {
  // Proposals 2 and 10 of one run both name R1 (as assign-job v2 could leave them, or a rule of
  // the site's own): assign-job gives R1 to the claim its walk of the open proposals meets last,
  // and its other free resource to the first job in the queue without a claim.
  const results: Record<string, { created: string[]; duplicates: string[] }> = {};
  for (const restart of [false, true]) {
    const s = site();
    s.job({ job_id: 'J02', priority: 9 });
    s.job({ job_id: 'J20', priority: 8 });
    s.job({ job_id: 'J10', priority: 7 });
    s.resource('R1', 'pick', 'free');
    s.resource('R2', 'pick', 'free');
    s.commit();
    const first = s.agentAndInbox();
    const run = 'earlier-run';
    const proposals = Array.from({ length: 11 }, (_, i) => (i + 1 === 2 ? input(run, 'J02', 'R1') : i + 1 === 10 ? input(run, 'J10', 'R1') : input(run, `N${i + 1}`, null)));
    const ids = first.inbox.submit({ runId: run, proposals, withdrawals: [] }).created.map((p) => p.id);
    expect(ids[1]).toBe(`P-${run}-2`);
    expect(ids[9]).toBe(`P-${run}-10`);
    const { agent } = agentAfter(s, first, restart);
    s.nowMs += 60_000;
    const r = agent.run();
    results[String(restart)] = { created: r.created.map((p) => `${p.params.job_id}→${p.params.resource_id}`), duplicates: [...r.duplicates].sort() };
  }
  // Live: R1 stays J10's (proposal 10, met last); J02 takes R2 in a draft that is its open
  // proposal's duplicate, and J20 gets none.
  expect(results.false).toEqual({ created: [], duplicates: [situationKey('assign-job', 'assign_job', { job_id: 'J02' }), situationKey('assign-job', 'assign_job', { job_id: 'J10' })].sort() });
  expect(results.true).toEqual(results.false);
});
