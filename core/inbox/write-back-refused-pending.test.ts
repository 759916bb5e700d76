// A module that refuses a command before the broker's PUBACK reaches the write-back (a module on
// the same PC answers within the publish): the command was sent — the module read it — so its
// failure counts toward FAILURES_TO_QUIET as any refusal does, and the trail says it was sent.
import { expect, it } from 'vitest';
import { inboxTest, proposalInput as proposal, T0 } from './test-support.ts';
import { WriteBack } from './write-back.ts';

const test = inboxTest('tilstand-writeback-refused-');

it('a refusal handled before the publish returns is a failure of a sent command: it is logged as sent, and two quiet the situation', async () => {
  const inbox = test.open();
  let wb!: WriteBack;
  wb = new WriteBack({
    inbox,
    publish: async (_topic, payload) => {
      const c = JSON.parse(payload) as { command_id: string };
      wb.handleAck('tilstand/s1/acks/operations', Buffer.from(JSON.stringify({ command_id: c.command_id, module: 'operations', ok: false, error: 'resource M-1 is down' })));
    },
    onAck: () => undefined,
    effectSeen: () => false,
    clock: () => test.now,
    onWarning: () => undefined,
  });
  const ids: string[] = [];
  for (const run of ['r1', 'r2']) {
    const [p] = inbox.submit({ runId: run, proposals: [proposal('J-1', run)], withdrawals: [] }).created;
    expect(p, `proposed in ${run}`).toBeDefined();
    expect((await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('approved');
    expect(inbox.get(p!.id)!.command).toMatchObject({ state: 'failed', sentAtMs: T0, detail: 'resource M-1 is down' });
    ids.push(p!.id);
  }
  expect(inbox.history(ids[0]!).map((e) => e.event)).toEqual(['proposed', 'approved', 'command_sent', 'command_failed']);
  expect(inbox.failedBefore(proposal('J-1', 'r3').situationKey).map((f) => f.sent)).toEqual([true, true]);
  // The module refused it twice: not asked again every minute.
  expect(inbox.submit({ runId: 'r3', proposals: [proposal('J-1', 'r3')], withdrawals: [] }).suppressed).toEqual([proposal('J-1', 'r3').situationKey]);
  wb.stop();
});
