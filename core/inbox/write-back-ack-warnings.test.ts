// Every warning the write-back says of a single ack goes through one limiter per module: the first
// of each kind at once (an operator must see it), after that at most one line a minute per module,
// the next line (or the poll once the minute is over, or the stop) saying how many of each kind were
// not said. Only the unknown-id warning was so limited: acks of known ids that are refused, and acks
// that are not JSON, wrote a line each — 5,000 acks, 5,000 lines (proposal ids are guessable), and
// the rotated site.log went with what it held.
import { expect, it } from 'vitest';
import { APPROVAL_INBOX_TABLE } from './inbox-tables.ts';
import { DB, inboxTest, proposalInput } from './test-support.ts';
import { ACK_WARNING_EVERY_MS, proposalsWithoutCommandAt, WriteBack } from './write-back.ts';

const test = inboxTest('tilstand-ack-warnings-');
const ack = (id: string) => Buffer.from(JSON.stringify({ command_id: id, module: 'operations', ok: true, result: 'assigned' }));
const N = 5_000;

/**
 * A site restored from HQ: w withdrawn and o open at the restored snapshot (the set is o and r);
 * r rejected on the restored site after it; a made by the restored site itself. Returns the ids,
 * the write-back and what it warned.
 */
async function restoredSite() {
  const inbox = test.open();
  const [w, r, o] = inbox.submit({ runId: 'r1', proposals: ['J-1', 'J-2', 'J-3'].map((j) => proposalInput(j)), withdrawals: [] }).created;
  inbox.submit({ runId: 'r2', proposals: [], withdrawals: [{ id: w!.id, reason: 'J-1 was assigned by hand' }] });
  const table = test.catalog.getTable({ database: DB, table: APPROVAL_INBOX_TABLE });
  const set = new Set(proposalsWithoutCommandAt(table, table.latestSnapshot()!.id));
  expect([...set].sort()).toEqual([r!.id, o!.id].sort());
  await inbox.decide(r!.id, 'reject', { user: 'lena', pin: '1111' });
  const [a] = inbox.submit({ runId: 'r3', proposals: [proposalInput('J-4', 'r3')], withdrawals: [] }).created;
  const warnings: string[] = [];
  const wb = new WriteBack({
    inbox,
    publish: async () => undefined,
    onAck: () => undefined,
    effectSeen: () => false,
    clock: () => test.now,
    monotonic: () => test.now,
    ackBytesMax: 300,
    restored: { atMs: test.now, proposals: set },
    onWarning: (m) => warnings.push(m),
  });
  return { w: w!.id, r: r!.id, o: o!.id, a: a!.id, inbox, wb, warnings };
}

it(`${N} acks of each kind: the first of each said at once, then one line a minute per module with the counts, the rest at the stop`, async () => {
  const { w, r, o, a, inbox, wb, warnings } = await restoredSite();
  const ops = 'tilstand/s1/acks/operations';
  const kinds: [string, () => void][] = [
    ['too large', () => wb.handleAck(ops, Buffer.from(JSON.stringify({ command_id: 'x'.repeat(400), module: 'operations', ok: true })))],
    ['not JSON', () => wb.handleAck(ops, Buffer.from('{not json'))],
    ['no command_id', () => wb.handleAck(ops, Buffer.from('{"ok":true}'))],
    ['unknown id', () => wb.handleAck(ops, ack('p-made-up'))],
    ['made after', () => wb.handleAck(ops, ack(a))],
    ['not as restored', () => wb.handleAck(ops, ack(w))],
    ['decided here', () => wb.handleAck(ops, ack(r))],
    ['another module', () => wb.handleAck('tilstand/s1/acks/inventory', ack(o))],
  ];
  for (const [, send] of kinds) for (let i = 0; i < N; i++) send();
  // The first of each kind at once; each such line says what was held back before it.
  const held = (n: number, kind: string) => ` (since the last warning of acks from operations, not said: ${n} ${kind})`;
  expect(warnings).toEqual([
    'ack of 449 bytes on tilstand/s1/acks/operations is above ackBytesMax 300; ignored',
    `ack on tilstand/s1/acks/operations is not JSON; ignored${held(N - 1, 'above ackBytesMax')}`,
    `ack on tilstand/s1/acks/operations has no command_id/ok; ignored${held(N - 1, 'not JSON')}`,
    `ack of "p-made-up" from operations: no proposal of this inbox has that id (this site was restored from HQ within the week); ignored${held(N - 1, 'without command_id/ok')}`,
    `ack of ${a} from operations, which is open without a command and was made after the restore; ignored${held(N - 1, 'of an unknown id (first held: "p-made-up", …)')}`,
    `ack of ${w} from operations, which is withdrawn without a command and was not open or deferred in the inbox as restored; ignored${held(N - 1, 'of a proposal without a command')}`,
    `ack of ${r} from operations: the module carried out its command, approved before the restore (its approval lost with the site PC), but ${r} is rejected here (by lena); left as it is — check with the module's operators what was done${held(N - 1, 'of a proposal without a command')}`,
    `ack for ${o} came from inventory, but the proposal is for operations; ignored`,
  ]);
  expect(inbox.get(o)!.status, 'an ack from another module decides nothing').toBe('open');
  // Within the minute: held back.
  test.now += ACK_WARNING_EVERY_MS - 1;
  kinds[1]![1]();
  expect(warnings).toHaveLength(kinds.length);
  // The minute over: one line, with what was held back, kind by kind.
  test.now += 1;
  for (const [, send] of kinds.slice(0, 5)) send();
  kinds[1]![1]();
  expect(warnings.slice(kinds.length)).toEqual([`ack of 449 bytes on tilstand/s1/acks/operations is above ackBytesMax 300; ignored (since the last warning of acks from operations, not said: ${N - 1} of a proposal decided here, 1 not JSON)`]);
  test.now += ACK_WARNING_EVERY_MS;
  kinds[0]![1]();
  expect(warnings.at(-1)).toBe(
    'ack of 449 bytes on tilstand/s1/acks/operations is above ackBytesMax 300; ignored (since the last warning of acks from operations, not said: 2 not JSON, 1 without command_id/ok, 1 of an unknown id (first held: "p-made-up"), 1 of a proposal without a command)',
  );
  // Inventory's count is said by the stop, and what operations sent after its last line.
  for (let i = 0; i < 10; i++) kinds[3]![1]();
  const said = warnings.length;
  wb.stop();
  expect(warnings.slice(said).sort()).toEqual([
    `acks from inventory, not said since the last warning of them (the write-back stopped): ${N - 1} of another module's proposal`,
    'acks from operations, not said since the last warning of them (the write-back stopped): 10 of an unknown id (first held: "p-made-up", …)',
  ]);
  expect(warnings.length, 'bounded: not a line an ack').toBe(kinds.length + 4);
});

it('a second proposal decided here is said at once too (each asks its module operators what was done); a repeat of either is held back', async () => {
  const { r, o, inbox, wb, warnings } = await restoredSite();
  await inbox.decide(o, 'reject', { user: 'lena', pin: '1111' });
  for (let i = 0; i < 3; i++) for (const id of [r, o]) wb.handleAck('tilstand/s1/acks/operations', ack(id));
  expect(warnings.map((m) => m.slice(0, m.indexOf(':')))).toEqual([`ack of ${r} from operations`, `ack of ${o} from operations`]);
  wb.stop();
  expect(warnings.at(-1)).toBe('acks from operations, not said since the last warning of them (the write-back stopped): 4 of a proposal decided here');
});

it('what was held back is said by the poll once the minute is over, without waiting for another ack', async () => {
  const { wb, warnings } = await restoredSite();
  for (let i = 0; i < 100; i++) wb.handleAck('tilstand/s1/acks/operations', Buffer.from('not json'));
  wb.poll();
  expect(warnings).toHaveLength(1);
  test.now += ACK_WARNING_EVERY_MS;
  wb.poll();
  expect(warnings.slice(1)).toEqual(['acks from operations, not said since the last warning of them: 99 not JSON']);
  wb.poll();
  wb.stop();
  expect(warnings, 'said once').toHaveLength(2);
});

// After a restore a module sends its held answers in a burst. The first refusal of each reason was
// said and the rest became a bare count: the log named one proposal, though the operator is to ask
// the module's operators about each (above all where the inbox as restored could not be read).
// Each proposal's first refusal is said now, with what the module did; a repeat is counted.
it('a burst of acks of proposals the inbox as restored could not tell: each proposal named once, with what its module did', async () => {
  const inbox = test.open();
  const ids = inbox.submit({ runId: 'r1', proposals: ['J-1', 'J-2', 'J-3'].map((j) => proposalInput(j)), withdrawals: [] }).created.map((p) => p.id);
  const warnings: string[] = [];
  const wb = new WriteBack({ inbox, publish: async () => undefined, onAck: () => undefined, effectSeen: () => false, clock: () => test.now, monotonic: () => test.now, restored: { atMs: test.now, proposals: 'unreadable' }, onWarning: (m) => warnings.push(m) });
  const refused = (id: string) => Buffer.from(JSON.stringify({ command_id: id, module: 'operations', ok: false, error: 'no such job' }));
  for (let i = 0; i < 2; i++) for (const id of ids) wb.handleAck('tilstand/s1/acks/operations', id === ids[1] ? refused(id) : ack(id));
  const unreadable = (id: string, did: string) =>
    `ack of ${id} from operations, which is open without a command and the inbox as restored could not be read (the site's log says why, at its start): the module ${did} its command, but whether its approval was lost with the old PC cannot be told; ignored — check with the module's operators what was done`;
  expect(warnings).toEqual([unreadable(ids[0]!, 'carried out'), unreadable(ids[1]!, 'refused'), unreadable(ids[2]!, 'carried out')]);
  for (const id of ids) expect(inbox.get(id)!.status).toBe('open');
  wb.stop();
  expect(warnings.at(-1)).toBe('acks from operations, not said since the last warning of them (the write-back stopped): 3 of a proposal without a command');
});

// The held-back line said only "12 of an unknown id": which ids a module (or a client) tried was
// lost but for the first. It names the first ones held (distinct, at most ACK_HELD_IDS_SHOWN_MAX).
it('a burst of unknown ids: the held-back line names the first ids held, at most ten', async () => {
  const { wb, warnings } = await restoredSite();
  for (let i = 0; i < 13; i++) wb.handleAck('tilstand/s1/acks/operations', ack(`p-made-up-${i % 12}`));
  expect(warnings).toHaveLength(1);
  test.now += ACK_WARNING_EVERY_MS;
  wb.poll();
  const shown = Array.from({ length: 10 }, (_, i) => `"p-made-up-${i + 1}"`).join(', ');
  expect(warnings.slice(1)).toEqual([`acks from operations, not said since the last warning of them: 12 of an unknown id (first held: ${shown}, …)`]);
  // Emptied with the count: the next line names only what was held after it.
  wb.handleAck('tilstand/s1/acks/operations', ack('p-made-up-x'));
  wb.stop();
  expect(warnings.at(-1)).toBe('acks from operations, not said since the last warning of them (the write-back stopped): 1 of an unknown id (first held: "p-made-up-x")');
});
