// A wrong PIN at a decision says how many tries are left before the lockout, in the singular for
// one: it said "(1 attempts left)".
import { expect, it } from 'vitest';
import { inboxTest, proposalInput } from './test-support.ts';

const test = inboxTest('tilstand-attempts-left-', { users: { failuresMax: 3, lockoutMs: 60_000 } });

it('counts the attempts left, "1 attempt left" for the last', async () => {
  const inbox = test.open({ recheck: () => ({ holds: true, snapshots: { work_queue: 7 } }) });
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput()], withdrawals: [] }).created;
  const said: string[] = [];
  for (let k = 0; k < 2; k++) said.push(((await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '9999' }).catch((e: unknown) => e)) as Error).message);
  expect(said[0]).toMatch(/ \(2 attempts left\)$/);
  expect(said[1]).toMatch(/ \(1 attempt left\)$/);
});
