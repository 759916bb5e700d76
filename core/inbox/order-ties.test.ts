// Two runs in one millisecond (a stale approval's re-run beside the timer's run, a clock that
// stands still: run ids `…-000`, `…-000-2`, …, core/agents DESIGN.md "Run") make proposals with
// the same `createdAtMs`. The inbox's orders must then follow the runs, as creation order
// (`inCreationOrder`, `compareProposalIds`) does: newest first put the older run's `-5` above the
// newer run's `-1` (it compared the proposals' numbers before their runs), and run `-10` below
// run `-2` (as strings); most urgent first put the newer run's `-1` above the older run's `-5`.
import { expect, it } from 'vitest';
import { mostUrgentFirst, newestFirst } from './inbox.ts';
import { inCreationOrder } from './proposal.ts';
import { inboxTest, proposalInput } from './test-support.ts';

const test = inboxTest('tilstand-order-ties-');
const RUN = '20261130-080000-000';
const runs = [RUN, `${RUN}-2`, `${RUN}-10`];

it('proposals of runs made in one millisecond list in their runs order, live and reopened', () => {
  let inbox = test.open();
  const made: string[] = [];
  let job = 0;
  for (const [i, runId] of runs.entries()) {
    const n = i === 0 ? 5 : 2;
    const created = inbox.submit({ runId, proposals: Array.from({ length: n }, () => proposalInput(`J-${++job}`, runId)), withdrawals: [] }).created;
    made.push(...created.map((p) => p.id));
  }
  expect(new Set(inbox.openProposals().map((p) => p.createdAtMs)).size).toBe(1);
  expect(inbox.openProposals().map((p) => p.id)).toEqual(made);
  const check = (): void => {
    expect(inbox.list({ status: ['open', 'deferred'] }).map((p) => p.id)).toEqual([...made].reverse());
    expect(inbox.list({ status: ['open', 'deferred'], order: 'urgency' }).map((p) => p.id)).toEqual(made);
    expect(inbox.list({}).map((p) => p.id)).toEqual([...made].reverse()); // read from the table
  };
  check();
  inbox.close();
  inbox = test.open();
  check();
  // The comparators agree with creation order on every pair.
  const ps = inbox.openProposals();
  expect([...ps].sort(mostUrgentFirst).map((p) => p.id)).toEqual(inCreationOrder(ps).map((p) => p.id));
  expect([...ps].sort(newestFirst).map((p) => p.id)).toEqual(inCreationOrder(ps).reverse().map((p) => p.id));
});
