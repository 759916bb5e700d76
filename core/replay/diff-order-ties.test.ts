// Proposals made in one millisecond (one agent run makes them all at its instant; a second run in
// the same millisecond is `…-000-2`) in the difference report and in proposals.json: in the order
// they were made (`P-<run id>-<n>` by run, then n as a number), not as strings, which put `…-10`
// before `…-2`. As strings, "the first 5 of 12, by creation time" showed proposals 1, 10, 11, 12
// and 2 of a run, and of a situation proposed twice in one millisecond (closed by a stale approval,
// proposed again by the run it set off) the report paired the baseline's first with the candidate's
// second, counting both as changed. The order was repeatable either way (ids are the simulated
// clock's): the same fixture gives the same report.

import { describe, expect, it } from 'vitest';
import { diffRuns, type LoadedRun } from './diff.ts';
import { byCreation, type ReplayProposal } from './fixture.ts';
import type { RunManifest } from './replay.ts';

const T = Date.UTC(2026, 10, 30, 6, 1);
const RUN = '20261130-060100-000';

const proposal = (id: string, o: Partial<ReplayProposal> = {}): ReplayProposal => ({
  id,
  runId: id.slice(2, id.lastIndexOf('-')),
  createdAtMs: T,
  ruleId: 'stock-reorder',
  ruleVersion: '1',
  situationKey: `stock-reorder|replenish|item="${id}"`,
  action: 'replenish',
  module: 'erp',
  params: { item: id },
  risk: 'low',
  riskReason: 'below the reorder point',
  explanation: id,
  evidence: [],
  status: 'open',
  closedAtMs: null,
  withdrawnReason: null,
  decision: null,
  ...o,
});

const run = (label: string, proposals: ReplayProposal[]): LoadedRun => ({
  manifest: { fixture: { id: 'f1', name: 'day', tag: 'replay-day', site: 's1', cutMs: T - 60_000, untilMs: T + 3_600_000 }, agent: { label, rules: [] } } as unknown as RunManifest,
  proposals,
  decisions: [],
  outcomes: [],
  ruleErrors: { count: 0, first: null },
});

describe('proposals made in one millisecond', () => {
  it('the first examples are the first the run made: …-1 to …-5 of twelve, not …-1, …-10, …-11, …-12, …-2', () => {
    const made = Array.from({ length: 12 }, (_, i) => proposal(`P-${RUN}-${i + 1}`));
    const r = diffRuns(run('none', []), run('twelve', [...made].reverse()));
    expect(r.summary.added).toBe(12);
    expect(r.examples.added.map((p) => p.id)).toEqual(made.slice(0, 5).map((p) => p.id));
    // proposals.json (replay.ts, export.ts) is written in the same order.
    expect([...made].reverse().sort(byCreation).map((p) => p.id)).toEqual(made.map((p) => p.id));
  });

  it('a situation proposed twice in one millisecond is paired first with first: unchanged', () => {
    const key = 'assign-job|assign_job|job_id="J1"';
    const same = { situationKey: key, params: { job_id: 'J1' }, explanation: 'J1 is released' };
    const twice = (firstN: number) => [
      // The run's proposal, found stale by an approval in that millisecond: closed at once.
      proposal(`P-${RUN}-${firstN}`, { ...same, status: 'stale', closedAtMs: T }),
      // The run that approval set off, in the same millisecond (`…-000-2`), proposes it again.
      proposal(`P-${RUN}-2-1`, same),
    ];
    // The baseline's run made it first of its proposals, the candidate's (which ran another rule
    // before) third: the ids differ, the proposals do not.
    const r = diffRuns(run('baseline', twice(1)), run('candidate', twice(3)));
    expect(r.summary).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 2 });
  });
});
