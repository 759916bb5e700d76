// A module's first ok ack that arrives after its command timed out (the module was off, or its
// ack queued at the broker, while the command waited in `sent`). The timeout was told to the floor
// once: a `command_timed_out` in the decision log and the `command_failed` alarm. The ack used to
// move the command timed_out → acknowledged; the next poll found it acknowledged and more than
// `appliedTimeoutMs` after its send and timed it out again: a second `command_timed_out` and the
// alarm raised anew (a new time), for a timeout the shift lead had seen. The ack is news — the
// module says it acted — and is logged; the command stays timed out, now as one the module
// acknowledged ("last state: acknowledged"): awaited for its effect, as an acknowledged command
// that timed out is, without a second timeout.
import { expect, it } from 'vitest';
import { inboxTest, proposalInput } from './test-support.ts';
import { WriteBack } from './write-back.ts';

const test = inboxTest('tilstand-late-first-ack-');

const ack = (id: string) => Buffer.from(JSON.stringify({ command_id: id, module: 'operations', ok: true, result: 'assigned' }));

it('a late first ack is logged once and raises no second timeout; the effect is still awaited', async () => {
  const inbox = test.open();
  const effect = { seen: false };
  const wb = new WriteBack({ inbox, publish: async () => undefined, onAck: () => undefined, effectSeen: () => effect.seen, clock: () => test.now, monotonic: () => test.now, appliedTimeoutMs: 60_000 });
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' });
  await wb.resume();
  test.now += 61_000;
  wb.poll();
  expect(inbox.get(p!.id)!.command).toMatchObject({ state: 'timed_out', detail: 'not applied 61 s after it was sent (last state: sent)' });
  const alarm = inbox.endedCommands();
  expect(alarm).toMatchObject([{ id: p!.id, state: 'timed_out' }]);
  const timedOutAt = test.now;

  test.now += 5 * 60_000;
  wb.handleAck('tilstand/s1/acks/operations', ack(p!.id)); // the module's first word, late
  for (let i = 0; i < 3; i++) {
    test.now += 1_000;
    wb.poll();
  }
  expect(inbox.history(p!.id).map((e) => e.event)).toEqual(['proposed', 'approved', 'command_sent', 'command_timed_out', 'command_acknowledged']);
  expect(inbox.history(p!.id).at(-1)).toMatchObject({ actor: 'operations' });
  expect(inbox.get(p!.id)!.command).toMatchObject({ state: 'timed_out', detail: 'not applied 61 s after it was sent (last state: acknowledged)' });
  // The alarm is the same one (its time is the timeout's), now saying the module acknowledged it.
  expect(inbox.endedCommands()).toEqual([{ ...alarm[0]!, atMs: timedOutAt, detail: 'not applied 61 s after it was sent (last state: acknowledged)' }]);
  // Awaited for its effect and promised, as an acknowledged command that timed out.
  expect(inbox.commandsAwaitingEffect().map((x) => x.id)).toEqual([p!.id]);
  expect(inbox.commandsUnderway().map((x) => x.id)).toEqual([p!.id]);
  effect.seen = true;
  wb.poll();
  expect(inbox.get(p!.id)!.command!.state).toBe('applied');
  expect(inbox.endedCommands()).toEqual([]);
  wb.stop();
  inbox.close();

  // Read back at open: the same.
  const again = test.open();
  expect(again.history(p!.id).map((e) => e.event)).toEqual(['proposed', 'approved', 'command_sent', 'command_timed_out', 'command_acknowledged', 'command_applied']);
});

it('after a restart the late-acknowledged timeout is still awaited and still one alarm', async () => {
  let inbox = test.open();
  const wb = new WriteBack({ inbox, publish: async () => undefined, onAck: () => undefined, effectSeen: () => false, clock: () => test.now, monotonic: () => test.now, appliedTimeoutMs: 60_000 });
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' });
  await wb.resume();
  test.now += 61_000;
  wb.poll();
  const timedOutAt = test.now;
  test.now += 60_000;
  wb.handleAck('tilstand/s1/acks/operations', ack(p!.id));
  wb.stop();
  inbox.close();
  inbox = test.open();
  expect(inbox.endedCommands()).toMatchObject([{ id: p!.id, state: 'timed_out', atMs: timedOutAt, detail: expect.stringMatching(/\(last state: acknowledged\)$/) }]);
  expect(inbox.commandsAwaitingEffect().map((x) => x.id)).toEqual([p!.id]);
});
