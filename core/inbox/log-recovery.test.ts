// Log recovery (log-recovery.ts) when one approval_inbox commit holds several operations on one
// proposal: an inbox commit that failed (a full disk) leaves its rows in the table's writer, and
// the next commit carries them with its own. A process stopped between that commit and the log's
// lost the entries of both operations, and the rebuild read the commit's merged row as one
// operation: a proposal proposed and withdrawn in it kept only `withdrawn` (and under the id its
// row names for `proposed`); a command sent and acknowledged in it only `command_acknowledged`.
// test/reliability/inbox-log-crash.test.ts kills a child between the two commits of one operation.
import { afterEach, expect, it, vi } from 'vitest';
import { TableWriter } from '../lsm/index.ts';
import type { Inbox } from './inbox.ts';
import { RECOVERED_NOTE } from './log-recovery.ts';
import { inboxTest, proposalInput } from './test-support.ts';

const test = inboxTest('tilstand-log-recovery-');
afterEach(() => vi.restoreAllMocks());

/** The next inbox commit fails once, as on a full disk: its rows stay in the writer for the next commit. */
function failNextCommit(): void {
  vi.spyOn(TableWriter.prototype, 'commit').mockImplementationOnce(() => {
    throw new Error('disk full');
  });
}

/** The process stops inside the log's commit of the next operation: the inbox's commit is done. */
async function killedInLogCommit(inbox: Inbox, operation: () => unknown): Promise<void> {
  const internals = inbox as unknown as { log: { commit: () => void }; writer: { commit: () => void } };
  internals.log.commit = () => {
    throw new Error('killed in the log commit');
  };
  await expect(async () => operation()).rejects.toThrow('killed');
  // Dead: nothing more is written (close only lets go of the writers).
  internals.writer.commit = internals.log.commit;
  expect(() => inbox.close()).toThrow('killed');
}

const trail = (i: Inbox, id: string) => i.history(id).map((e) => ({ id: e.id, event: e.event, recovered: (e.detail as { recovered?: string }).recovered === RECOVERED_NOTE }));

it('a proposal proposed and withdrawn in one commit gets both entries back, `proposed` under the id its row names', async () => {
  const first = test.open();
  const [p1] = first.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created; // entry 1
  // The run that proposes J-2 fails to commit; the next run withdraws it, and commits both.
  failNextCommit();
  expect(() => first.submit({ runId: 'r2', proposals: [proposalInput('J-2')], withdrawals: [] })).toThrow('disk full'); // entry 2
  vi.restoreAllMocks();
  const p2 = first.openProposals().find((p) => p.params.job_id === 'J-2')!;
  test.now += 60_000;
  await killedInLogCommit(first, () => first.submit({ runId: 'r3', proposals: [], withdrawals: [{ id: p2.id, reason: 'J-2 started' }] })); // entry 3
  const second = test.open();
  expect(second.get(p2.id)!.status).toBe('withdrawn');
  expect(trail(second, p2.id)).toEqual([
    { id: 2, event: 'proposed', recovered: true },
    { id: 3, event: 'withdrawn', recovered: true },
  ]);
  expect(second.history(p2.id).map((e) => e.atMs)).toEqual([test.T0, test.T0 + 60_000]);
  expect(trail(second, p1!.id)).toEqual([{ id: 1, event: 'proposed', recovered: false }]);
  // Later entries take the ids after them.
  const [p3] = second.submit({ runId: 'r4', proposals: [proposalInput('J-3')], withdrawals: [] }).created;
  expect(trail(second, p3!.id)).toEqual([{ id: 4, event: 'proposed', recovered: false }]);
});

it('a decision and then a proposal in one commit: each entry in the order they were made, `proposed` under the id its row names', async () => {
  const first = test.open();
  const [p1] = first.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created; // entry 1
  failNextCommit();
  await expect(first.decide(p1!.id, 'reject', { user: 'lena', pin: '1111', comment: 'not now' })).rejects.toThrow('disk full'); // entry 2
  vi.restoreAllMocks();
  test.now += 60_000;
  await killedInLogCommit(first, () => first.submit({ runId: 'r2', proposals: [proposalInput('J-2')], withdrawals: [] })); // entry 3
  const second = test.open();
  const p2 = second.list({ status: 'open' }).find((p) => p.params.job_id === 'J-2')!;
  expect(trail(second, p1!.id)).toEqual([
    { id: 1, event: 'proposed', recovered: false },
    { id: 2, event: 'rejected', recovered: true },
  ]);
  expect(trail(second, p2.id)).toEqual([{ id: 3, event: 'proposed', recovered: true }]);
});

it('a command sent and acknowledged in one commit gets both entries back, `command_sent` at its sending time', async () => {
  const first = test.open();
  const [p1] = first.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created; // entry 1
  await first.decide(p1!.id, 'approve', { user: 'lena', pin: '1111' }); // entry 2
  test.now += 1_000;
  failNextCommit();
  expect(() => first.markCommand(p1!.id, 'sent')).toThrow('disk full'); // entry 3
  vi.restoreAllMocks();
  test.now += 1_000;
  await killedInLogCommit(first, () => first.markCommand(p1!.id, 'acknowledged', 'assigned', 'operations')); // entry 4
  const second = test.open();
  expect(second.get(p1!.id)!.command).toMatchObject({ state: 'acknowledged', sentAtMs: test.T0 + 1_000 });
  expect(trail(second, p1!.id)).toEqual([
    { id: 1, event: 'proposed', recovered: false },
    { id: 2, event: 'approved', recovered: false },
    { id: 3, event: 'command_sent', recovered: true },
    { id: 4, event: 'command_acknowledged', recovered: true },
  ]);
  expect(second.history(p1!.id).slice(2).map((e) => e.atMs)).toEqual([test.T0 + 1_000, test.T0 + 2_000]);
});

// Two writes of one group in one commit: the commit's row holds the second only. A deferral and
// then an approval lost the deferral (who deferred, when, why) from the trail; an acknowledgement
// and then the effect lost the module's acknowledgement.
it('a deferral and then an approval in one commit: both decisions come back, each under the user who made it', async () => {
  await test.users.add({ name: 'per', role: 'shift_lead', pin: '2222' });
  const first = test.open();
  const [p1] = first.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created; // entry 1
  test.now += 60_000;
  failNextCommit();
  await expect(first.decide(p1!.id, 'defer', { user: 'per', pin: '2222', comment: 'ask maintenance first' })).rejects.toThrow('disk full'); // entry 2
  vi.restoreAllMocks();
  test.now += 60_000;
  await killedInLogCommit(first, () => first.decide(p1!.id, 'approve', { user: 'lena', pin: '1111' })); // entry 3
  const second = test.open();
  expect(second.get(p1!.id)!.status).toBe('approved');
  expect(trail(second, p1!.id)).toEqual([
    { id: 1, event: 'proposed', recovered: false },
    { id: 2, event: 'deferred', recovered: true },
    { id: 3, event: 'approved', recovered: true },
  ]);
  const [, deferred, approved] = second.history(p1!.id);
  expect(deferred).toMatchObject({ atMs: test.T0 + 60_000, actor: 'per', detail: { role: 'shift_lead', comment: 'ask maintenance first' } });
  expect(approved).toMatchObject({ atMs: test.T0 + 120_000, actor: 'lena' });
  // The record of the replaced decision goes with the commit that carried it, not with later ones.
  const [p2] = second.submit({ runId: 'r2', proposals: [proposalInput('J-2')], withdrawals: [] }).created;
  expect(trail(second, p2!.id)).toEqual([{ id: 4, event: 'proposed', recovered: false }]);
  second.close();
  expect(trail(test.open(), p1!.id).map((e) => e.id)).toEqual([1, 2, 3]);
});

it('an acknowledgement and then the effect in one commit: the acknowledgement comes back with its module and what it said', async () => {
  const first = test.open();
  const [p1] = first.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created; // entry 1
  await first.decide(p1!.id, 'approve', { user: 'lena', pin: '1111' }); // entry 2
  test.now += 1_000;
  first.markCommand(p1!.id, 'sent'); // entry 3
  test.now += 1_000;
  failNextCommit();
  expect(() => first.markCommand(p1!.id, 'acknowledged', 'assigned to M-1', 'operations')).toThrow('disk full'); // entry 4
  vi.restoreAllMocks();
  test.now += 1_000;
  await killedInLogCommit(first, () => first.markCommand(p1!.id, 'applied', 'seen in the state')); // entry 5
  const second = test.open();
  expect(trail(second, p1!.id)).toEqual([
    { id: 1, event: 'proposed', recovered: false },
    { id: 2, event: 'approved', recovered: false },
    { id: 3, event: 'command_sent', recovered: false },
    { id: 4, event: 'command_acknowledged', recovered: true },
    { id: 5, event: 'command_applied', recovered: true },
  ]);
  expect(second.history(p1!.id)[3]).toMatchObject({ atMs: test.T0 + 2_000, actor: 'operations', detail: { detail: 'assigned to M-1' } });
});
