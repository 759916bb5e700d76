// The inbox's lists from memory (open proposals, commands in flight) and the log entries rebuilt
// at open come in creation order, as the live inbox gives them, also after a restart. Reopened,
// they came in the table's key order, proposal ids as strings (`…-10` before `…-2`): the agent
// walked the open proposals in another order (core/agents open-order-restart.test.ts), the
// write-back resent pending commands in another order, and a rebuilt log listed one operation's
// withdrawals so.
import { expect, it } from 'vitest';
import type { Inbox } from './inbox.ts';
import { RECOVERED_NOTE } from './log-recovery.ts';
import { inboxTest, proposalInput } from './test-support.ts';

const test = inboxTest('tilstand-active-order-');

const ids12 = Array.from({ length: 12 }, (_, i) => `P-r1-${i + 1}`);

function submit12(inbox: Inbox): void {
  const created = inbox.submit({ runId: 'r1', proposals: Array.from({ length: 12 }, (_, i) => proposalInput(`J-${i + 1}`)), withdrawals: [] }).created;
  expect(created.map((p) => p.id)).toEqual(ids12);
}

it('open proposals and commands in flight come in creation order, live and reopened', async () => {
  let inbox = test.open();
  submit12(inbox);
  expect(inbox.openProposals().map((p) => p.id)).toEqual(ids12);
  inbox.close();
  inbox = test.open();
  expect(inbox.openProposals().map((p) => p.id)).toEqual(ids12);
  // Approved in another order: the commands still list by creation (as the live inbox had them).
  for (const id of [...ids12].reverse()) await inbox.decide(id, 'approve', { user: 'lena', pin: '1111' });
  expect(inbox.commandsInFlight().map((p) => p.id)).toEqual(ids12);
  inbox.close();
  inbox = test.open();
  expect(inbox.commandsInFlight().map((p) => p.id)).toEqual(ids12);
  expect(inbox.commandsUnderway().map((p) => p.id)).toEqual(ids12);
});

it("one operation's withdrawals rebuilt at open keep the order they were made in", async () => {
  const first = test.open();
  submit12(first);
  test.now += 60_000;
  const internals = first as unknown as { log: { commit: () => void }; writer: { commit: () => void } };
  internals.log.commit = () => {
    throw new Error('killed in the log commit');
  };
  expect(() => first.submit({ runId: 'r2', proposals: [], withdrawals: ids12.map((id) => ({ id, reason: 'gone' })) })).toThrow('killed');
  internals.writer.commit = internals.log.commit;
  expect(() => first.close()).toThrow('killed');
  const second = test.open();
  const withdrawnAt = ids12.map((id) => {
    const e = second.history(id).find((x) => x.event === 'withdrawn')!;
    expect((e.detail as { recovered?: string }).recovered).toBe(RECOVERED_NOTE);
    return e.id;
  });
  // Entries 1–12 are the proposals; the withdrawals 13–24, in the order the operation made them.
  expect(withdrawnAt).toEqual(Array.from({ length: 12 }, (_, i) => 13 + i));
});
