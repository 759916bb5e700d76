// Two shift leads at two PCs: one approves, and while the approval is checked against the latest
// state (`freshen`, `recheck`: awaited) the other defers the same proposal ("wait, the truck is
// not here"). The deferral was answered `deferred`, and the approval then went through on top of
// it: the command left, made by someone who never saw the deferral or its comment. The approval's
// compare-and-set takes the decision too: another decision recorded meanwhile is a Conflict.
import { expect, it } from 'vitest';
import { readDecisionLog } from './decision-log.ts';
import { inboxTest, proposalInput } from './test-support.ts';

const test = inboxTest('tilstand-decided-meanwhile-');

it('an approval during whose check another shift lead deferred the proposal is refused (Conflict), and the deferral stands', async () => {
  await test.users.add({ name: 'per', role: 'shift_lead', pin: '2222' });
  let checking!: () => void;
  const checked = new Promise<void>((r) => (checking = r));
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const inbox = test.open({
    recheck: async () => {
      checking();
      await held;
      return { holds: true, snapshots: {} };
    },
  });
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput()], withdrawals: [] }).created;
  const approval = inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' });
  await checked;
  test.now += 1000;
  expect((await inbox.decide(p!.id, 'defer', { user: 'per', pin: '2222', comment: 'the truck is not here' })).outcome).toBe('deferred');
  release();
  await expect(approval).rejects.toThrow(/proposal .* was deferred by per .* while the approval was being checked/);
  const now = inbox.get(p!.id)!;
  expect(now.status).toBe('deferred');
  expect(now.command).toBeNull();
  expect(readDecisionLog(inbox.logTable, p!.id).map((e) => `${e.event}:${e.actor}`)).toEqual(['proposed:agent-r1', 'deferred:per']);
  // Approved again, now that the deferral has been seen: it goes through.
  expect((await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
});

it('an approval of a deferred proposal (the deferral seen) goes through as before', async () => {
  const inbox = test.open();
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput()], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'defer', { user: 'lena', pin: '1111' });
  test.now += 1000;
  expect((await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
});
