// The module's ok ack answered again after its command timed out. A module client answers a
// redelivered command id with the ack it stored (core/ingest module-client): a module that acked
// and stopped before its PUBACK gets the command again from the broker when it comes back, maybe
// long after. The command had timed out after that acknowledgement ("last state: acknowledged"),
// and the same ack moved it timed_out → acknowledged, and the next poll timed it out again: a
// second `command_timed_out` in the decision log and the alarm raised again, for no news. The
// acknowledgement it already had is not taken again; a late first ack (timed out while `sent`)
// is logged and leaves it timed out as acknowledged (late-first-ack.test.ts).
import { expect, it } from 'vitest';
import { inboxTest, proposalInput } from './test-support.ts';
import { WriteBack } from './write-back.ts';

const test = inboxTest('tilstand-duplicate-ack-');

const ack = (id: string) => Buffer.from(JSON.stringify({ command_id: id, module: 'operations', ok: true, result: 'assigned' }));

it('a repeated ok ack of a command that timed out after its acknowledgement changes nothing', async () => {
  const inbox = test.open();
  const wb = new WriteBack({ inbox, publish: async () => undefined, onAck: () => undefined, effectSeen: () => false, clock: () => test.now, monotonic: () => test.now, appliedTimeoutMs: 60_000 });
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' });
  test.now += 1_000;
  wb.handleAck('tilstand/s1/acks/operations', ack(p!.id));
  expect(inbox.get(p!.id)!.command!.state).toBe('acknowledged');
  test.now += 61_000;
  wb.poll();
  expect(inbox.get(p!.id)!.command).toMatchObject({ state: 'timed_out', detail: expect.stringMatching(/\(last state: acknowledged\)$/) });
  test.now += 20 * 60_000;
  wb.handleAck('tilstand/s1/acks/operations', ack(p!.id)); // the stored ack, for a redelivery
  expect(inbox.get(p!.id)!.command!.state).toBe('timed_out');
  test.now += 1_000;
  wb.poll();
  expect(inbox.history(p!.id).map((e) => e.event)).toEqual(['proposed', 'approved', 'command_sent', 'command_acknowledged', 'command_timed_out']);
  wb.stop();
});

it('a first ack after the timeout is taken: the command stays timed out, as acknowledged', async () => {
  const inbox = test.open();
  const wb = new WriteBack({ inbox, publish: async () => undefined, onAck: () => undefined, effectSeen: () => false, clock: () => test.now, monotonic: () => test.now, appliedTimeoutMs: 60_000 });
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' });
  test.now += 61_000;
  wb.poll();
  expect(inbox.get(p!.id)!.command).toMatchObject({ state: 'timed_out', detail: expect.stringMatching(/\(last state: sent\)$/) });
  wb.handleAck('tilstand/s1/acks/operations', ack(p!.id));
  expect(inbox.get(p!.id)!.command).toMatchObject({ state: 'timed_out', detail: expect.stringMatching(/\(last state: acknowledged\)$/) });
  expect(inbox.history(p!.id).at(-1)!.event).toBe('command_acknowledged');
  wb.stop();
});
