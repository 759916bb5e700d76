// An ack handled while the inbox cannot commit (a full disk). The write-back's ack handler runs
// inside the MQTT client's packet handling (core/site decisions.ts: `internal.on('message', …)`),
// where an exception is uncaught and ends the site's process; the inbox's commit error went
// straight through it. The ack is kept instead: the inbox holds it in memory and in its writer,
// which commits it with the next commit (as any write whose commit failed). The same for a send
// given up, and for an ack whose text the table refused (below).
import { afterEach, expect, it, vi } from 'vitest';
import { TableWriter } from '../lsm/index.ts';
import { inboxTest, proposalInput } from './test-support.ts';
import { WriteBack } from './write-back.ts';

const test = inboxTest('tilstand-writeback-ack-commit-');
afterEach(() => vi.restoreAllMocks());

/** The next `n` table commits fail, as on a full disk. */
function failCommits(n: number): void {
  const spy = vi.spyOn(TableWriter.prototype, 'commit');
  for (let i = 0; i < n; i++) {
    spy.mockImplementationOnce(() => {
      throw new Error('disk full');
    });
  }
}

const ack = (id: string, ok = true) => Buffer.from(JSON.stringify({ command_id: id, module: 'operations', ok, ...(ok ? { result: 'assigned' } : { error: 'M-1 is down' }) }));

it.each([
  ['a sent command', 'sent'],
  ['a command still pending (the module answered a publish whose PUBACK did not come)', 'pending'],
] as const)('an ack of %s whose inbox commit fails does not throw out of the handler, and is committed with the next commit', async (_, was) => {
  const inbox = test.open();
  const warnings: string[] = [];
  const wb = new WriteBack({
    inbox,
    publish: async () => {
      if (was === 'pending') throw new Error('no PUBACK');
    },
    onAck: () => undefined,
    effectSeen: () => false,
    clock: () => test.now,
    onWarning: (m) => warnings.push(m),
  });
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' });
  expect(inbox.get(p!.id)!.command!.state).toBe(was);
  test.now += 1_000;
  failCommits(was === 'pending' ? 2 : 1);
  expect(() => wb.handleAck('tilstand/s1/acks/operations', ack(p!.id))).not.toThrow();
  vi.restoreAllMocks();
  expect(warnings.filter((w) => w.includes('disk full'))).not.toEqual([]);
  expect(inbox.get(p!.id)!.command).toMatchObject({ state: 'acknowledged', detail: '"assigned"' });
  wb.stop();
  inbox.close(); // the next commit
  const again = test.open();
  expect(again.get(p!.id)!.command).toMatchObject({ state: 'acknowledged', detail: '"assigned"' });
  expect(again.history(p!.id).map((e) => e.event)).toEqual(['proposed', 'approved', 'command_sent', 'command_acknowledged']);
});

it('a refusal whose inbox commit fails lets the situation be proposed again, as a committed one does', async () => {
  const inbox = test.open();
  const wb = new WriteBack({ inbox, publish: async () => undefined, onAck: () => undefined, effectSeen: () => false, clock: () => test.now, onWarning: () => undefined });
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' });
  expect(inbox.isQuiet(p!.situationKey)).toBe(true);
  test.now += 1_000;
  failCommits(1);
  wb.handleAck('tilstand/s1/acks/operations', ack(p!.id, false));
  vi.restoreAllMocks();
  expect(inbox.get(p!.id)!.command).toMatchObject({ state: 'failed', detail: 'M-1 is down' });
  expect(inbox.failedBefore(p!.situationKey).map((f) => f.id)).toEqual([p!.id]);
  expect(inbox.isQuiet(p!.situationKey)).toBe(false);
  wb.stop();
});

// The same for a command given up unsent: poll() and start() call send() without awaiting it
// (`void`), so its commit error was an unhandled rejection, which ends a Node process too.
it('a command given up unsent whose inbox commit fails: send() does not reject, and the failure is committed with the next commit', async () => {
  const inbox = test.open();
  const wb = new WriteBack({
    inbox,
    publish: async () => {
      throw new Error('broker down');
    },
    onAck: () => undefined,
    effectSeen: () => false,
    clock: () => test.now,
    appliedTimeoutMs: 60_000,
    onWarning: () => undefined,
  });
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' });
  test.now += 60_000;
  failCommits(1);
  await expect(wb.send(inbox.get(p!.id)!)).resolves.toBeUndefined();
  vi.restoreAllMocks();
  expect(inbox.get(p!.id)!.command!.state).toBe('failed');
  wb.stop();
  inbox.close();
  expect(test.open().get(p!.id)!.command!.state).toBe('failed');
});

// What a module says is cut to 2,000 characters and stored as the command's detail. A lone
// surrogate in it (JSON's "\ud800" escape, or the cut falling inside a character pair) made the
// table refuse the write: the ack was lost (the command timed out though the module had acted),
// and before the handler caught errors the exception ended the process.
it.each([
  ['a refusal whose text holds a lone surrogate', { ok: false, error: 'M-1 \ud800 is down' }, 'failed', 'M-1 \uFFFD is down'],
  ['a result whose cut at 2,000 falls inside a character pair', { ok: true, result: `${'x'.repeat(1998)}😀` }, 'acknowledged', `"${'x'.repeat(1998)}`],
] as const)('%s is recorded, made well-formed', async (_, body, state, detail) => {
  const inbox = test.open();
  const warnings: string[] = [];
  const wb = new WriteBack({ inbox, publish: async () => undefined, onAck: () => undefined, effectSeen: () => false, clock: () => test.now, onWarning: (m) => warnings.push(m) });
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' });
  wb.handleAck('tilstand/s1/acks/operations', Buffer.from(JSON.stringify({ command_id: p!.id, module: 'operations', ...body })));
  expect(warnings).toEqual([]);
  expect(inbox.get(p!.id)!.command).toMatchObject({ state, detail });
  wb.stop();
});

/** Table commit number `n` from now (the inbox's and the log's commits each count) fails, as on a full disk. */
function failCommitNumber(n: number): void {
  const original = TableWriter.prototype.commit;
  let commits = 0;
  vi.spyOn(TableWriter.prototype, 'commit').mockImplementation(function (this: TableWriter, ...args: Parameters<TableWriter['commit']>) {
    if (++commits === n) throw new Error('disk full');
    return original.apply(this, args);
  });
}

// The broker took the command (PUBACK), and then the inbox's commit of `sent` failed. The warning
// said "not sent (stays pending, retried on the next poll)": the command had gone out, and the
// inbox holds `sent` (no retry comes). It says the command was sent and the state not committed.
it('a publish the broker took whose `sent` commit fails is not reported as not sent', async () => {
  const inbox = test.open();
  const warnings: string[] = [];
  let published = 0;
  const wb = new WriteBack({
    inbox,
    publish: async () => {
      published++;
    },
    onAck: () => undefined,
    effectSeen: () => false,
    clock: () => test.now,
    onWarning: (m) => warnings.push(m),
  });
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created;
  // The approval commits both tables; the command's publish follows, then the `sent` commit fails.
  failCommitNumber(3);
  await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' });
  vi.restoreAllMocks();
  expect(published).toBe(1);
  expect(inbox.get(p!.id)!.command!.state).toBe('sent');
  expect(warnings.filter((w) => w.includes('disk full'))).toHaveLength(1);
  expect(warnings.filter((w) => /not sent|stays pending/.test(w))).toEqual([]);
  wb.stop();
  inbox.close(); // the next commit
  expect(test.open().get(p!.id)!.command!.state).toBe('sent');
});

// poll() marked applied and timed_out with markCommand itself: a commit failing under the first
// threw out of the poll (start() warned "poll: disk full"), and the commands after it in the list
// waited for the next poll, one more each second — and a timed-out command's warning named no
// command. Marked as the ack handler marks: a warning each, and the poll goes on.
it('a poll whose first mark fails to commit still marks the commands after it', async () => {
  const inbox = test.open();
  const warnings: string[] = [];
  const wb = new WriteBack({ inbox, publish: async () => undefined, onAck: () => undefined, effectSeen: (p) => p.params['job_id'] !== 'J-3', clock: () => test.now, appliedTimeoutMs: 60_000, onWarning: (m) => warnings.push(m) });
  const created = inbox.submit({ runId: 'r1', proposals: ['J-1', 'J-2', 'J-3'].map((j) => proposalInput(j)), withdrawals: [] }).created;
  for (const p of created) await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1111' });
  expect(created.map((p) => inbox.get(p.id)!.command!.state)).toEqual(['sent', 'sent', 'sent']);
  test.now += 61_000;
  failCommits(1);
  expect(() => wb.poll()).not.toThrow();
  vi.restoreAllMocks();
  expect(created.map((p) => inbox.get(p.id)!.command!.state)).toEqual(['applied', 'applied', 'timed_out']);
  expect(warnings.filter((w) => w.includes('disk full'))).toHaveLength(1);
  wb.stop();
  inbox.close();
  const again = test.open();
  expect(created.map((p) => again.get(p.id)!.command!.state)).toEqual(['applied', 'applied', 'timed_out']);
});
