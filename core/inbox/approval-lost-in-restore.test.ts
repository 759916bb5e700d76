// A module's acknowledgement of a command whose approval the inbox no longer has: the site PC died
// after the approval went out, and the new PC was restored from HQ at an earlier state —
// `tilstand restore --fall-back-to-tag` rolling approval_inbox (and decision_log) back to a tag
// taken before the approval, or an HQ the last commits had not reached yet. The proposal is open
// again, and the module's ack (its mqtt client holds it while the broker is gone) comes in after.
// It was dropped without a word, as an ack of another Tilstand's command is: the proposal stayed
// open, a lead could approve it again and its command went to the module a second time (the module
// client answers a command id it has seen with its stored ack; a refusal stored so refuses every
// approval of it), or reject it over a command carried out. Now the inbox records what the ack
// says: approved, by a person not on record ("?"), the command sent and then acknowledged or
// refused, with a warning — not open for a second approval, the situation quiet as after any
// approval, the effect awaited; a refusal ends the quiet, so the situation is proposed anew.
import { afterEach, expect, it, vi } from 'vitest';
import { TableWriter } from '../lsm/index.ts';
import { APPROVAL_INBOX_TABLE, DECISION_LOG_TABLE } from './inbox-tables.ts';
import type { Inbox, InboxOptions } from './inbox.ts';
import { DB, inboxTest, proposalInput } from './test-support.ts';
import { LOST_APPROVAL_ACK_WINDOW_MS, proposalsWithoutCommandAt, ACK_WARNING_EVERY_MS, WriteBack } from './write-back.ts';

const test = inboxTest('tilstand-approval-lost-');
const TAG = 'hourly-2026113008';
afterEach(() => vi.restoreAllMocks());
const ack = (id: string, ok = true) => Buffer.from(JSON.stringify(ok ? { command_id: id, module: 'operations', ok, result: 'assigned' } : { command_id: id, module: 'operations', ok, error: 'J-1 is already running' }));

/** P proposed and tagged; approved and sent after the tag; both tables rolled back to the tag. Returns the restored inbox, its write-back, what was published and warned. */
async function restoredAfterApproval(deferFirst = false, restored: 'restored' | 'not restored' = 'restored', over: Partial<InboxOptions> = {}) {
  let inbox = test.open();
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created;
  if (deferFirst) await inbox.decide(p!.id, 'defer', { user: 'lena', pin: '1111', comment: 'after the break' });
  inbox.close();
  for (const name of [APPROVAL_INBOX_TABLE, DECISION_LOG_TABLE]) test.catalog.getTable({ database: DB, table: name }).createTag(TAG);
  test.now += 60_000;
  inbox = test.open();
  const published: string[] = [];
  const before = new WriteBack({ inbox, publish: async (_t, m) => void published.push(m), onAck: () => undefined, effectSeen: () => false, clock: () => test.now, monotonic: () => test.now });
  await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' });
  expect(inbox.get(p!.id)!.command!.state).toBe('sent');
  before.stop();
  inbox.close(); // the PC dies; HQ's latest of the inbox tables is damaged
  for (const name of [APPROVAL_INBOX_TABLE, DECISION_LOG_TABLE]) test.catalog.getTable({ database: DB, table: name }).rollbackTo(TAG);
  test.now += 30 * 60_000;
  const warnings: string[] = [];
  const reopened: Inbox = test.open({ onWarning: (m) => warnings.push(m), ...over });
  expect(reopened.get(p!.id)!.status).toBe(deferFirst ? 'deferred' : 'open');
  const effect = { seen: false };
  // The restore ran now (the site's restore note says when), after P was made; the proposals
  // without a command its approval_inbox held as restored (the snapshot the note names) are P.
  const table = test.catalog.getTable({ database: DB, table: APPROVAL_INBOX_TABLE });
  const asRestored = restored === 'restored' ? { restored: { atMs: test.now, proposals: new Set(proposalsWithoutCommandAt(table, table.latestSnapshot()!.id)) } } : {};
  const wb = new WriteBack({ inbox: reopened, publish: async (_t, m) => void published.push(m), onAck: () => undefined, effectSeen: () => effect.seen, clock: () => test.now, monotonic: () => test.now, ...asRestored, onWarning: (m) => warnings.push(m) });
  return { id: p!.id, inbox: reopened, wb, published, warnings, effect };
}

it("an ok ack of a command approved after the tag: the proposal is approved (by '?'), acknowledged, not approved or sent again", async () => {
  const { id, inbox, wb, published, warnings, effect } = await restoredAfterApproval();
  expect(published).toHaveLength(1);
  wb.handleAck('tilstand/s1/acks/operations', ack(id));
  expect(inbox.get(id)!.status, 'the module carried it out: not open for a second approval').toBe('approved');
  expect(inbox.get(id)!.decision).toMatchObject({ kind: 'approved', by: '?', atMs: test.now });
  expect(inbox.get(id)!.command).toMatchObject({ state: 'acknowledged', detail: '"assigned"' });
  expect(inbox.history(id).map((e) => `${e.event} ${e.actor}`)).toEqual(['proposed agent-r1', 'approved ?', 'command_sent write-back', 'command_acknowledged operations']);
  expect(inbox.history(id)[1]!.detail).toMatchObject({ reason: expect.stringMatching(/not on record/) });
  expect(warnings).toEqual([expect.stringMatching(new RegExp(`^ack of ${id} from operations: its approval is not on record`))]);
  await expect(inbox.decide(id, 'approve', { user: 'lena', pin: '1111' })).rejects.toThrow(/is approved/);
  // Quiet as after any approval: the agent does not propose the situation anew while its effect is awaited.
  expect(inbox.submit({ runId: 'r2', proposals: [proposalInput('J-1', 'r2')], withdrawals: [] }).suppressed).toHaveLength(1);
  await wb.resume();
  wb.poll();
  expect(published, 'the command is not published again').toHaveLength(1);
  effect.seen = true;
  wb.poll();
  expect(inbox.get(id)!.command!.state).toBe('applied');
  wb.stop();
});

it('a deferral at the tag, the approval after it lost: the same', async () => {
  const { id, inbox, wb } = await restoredAfterApproval(true);
  wb.handleAck('tilstand/s1/acks/operations', ack(id));
  expect(inbox.get(id)!.status).toBe('approved');
  expect(inbox.get(id)!.command!.state).toBe('acknowledged');
  wb.stop();
});

it('a refusal: approved and failed, so the situation is proposed anew (a second approval of the same id got the stored refusal)', async () => {
  const { id, inbox, wb, warnings } = await restoredAfterApproval();
  wb.handleAck('tilstand/s1/acks/operations', ack(id, false));
  expect(inbox.get(id)!.status).toBe('approved');
  expect(inbox.get(id)!.command).toMatchObject({ state: 'failed', detail: 'J-1 is already running' });
  expect(warnings).toHaveLength(1);
  expect(inbox.failedBefore(inbox.get(id)!.situationKey).map((f) => f.id)).toEqual([id]);
  expect(inbox.submit({ runId: 'r2', proposals: [proposalInput('J-1', 'r2')], withdrawals: [] }).created).toHaveLength(1);
  wb.stop();
});

it('read back at open: approved, its command awaited', async () => {
  const { id, inbox, wb } = await restoredAfterApproval();
  wb.handleAck('tilstand/s1/acks/operations', ack(id));
  wb.stop();
  inbox.close();
  const again = test.open();
  expect(again.get(id)!.status).toBe('approved');
  expect(again.commandsInFlight().map((p) => p.id)).toEqual([id]);
});

it('withdrawn on the restored site before the ack (the agent found the situation gone): recorded as approved too, the trail as it was', async () => {
  const { id, inbox, wb } = await restoredAfterApproval();
  inbox.submit({ runId: 'r2', proposals: [], withdrawals: [{ id, reason: 'J-1 is running' }] });
  expect(inbox.get(id)!.status).toBe('withdrawn');
  wb.handleAck('tilstand/s1/acks/operations', ack(id));
  expect(inbox.get(id)!.status).toBe('approved');
  expect(inbox.history(id).map((e) => e.event)).toEqual(['proposed', 'withdrawn', 'approved', 'command_sent', 'command_acknowledged']);
  wb.stop();
});

// Decided by a named person on the restored site before the module's ack came (it connects once it
// has its new broker password): that decision stands — the ack does not overwrite a person's — but
// the warning says what the module did, which the plain "ignored" hid: a command carried out under
// a proposal the floor sees as rejected, or as stale.
it('rejected on the restored site before the ack: the rejection stands, and the warning says the module carried out its command', async () => {
  const { id, inbox, wb, warnings } = await restoredAfterApproval();
  await inbox.decide(id, 'reject', { user: 'lena', pin: '1111' });
  wb.handleAck('tilstand/s1/acks/operations', ack(id));
  expect(inbox.get(id)!.status).toBe('rejected');
  expect(inbox.get(id)!.decision).toMatchObject({ kind: 'rejected', by: 'lena' });
  expect(warnings).toEqual([
    `ack of ${id} from operations: the module carried out its command, approved before the restore (its approval lost with the site PC), but ${id} is rejected here (by lena); left as it is — check with the module's operators what was done`,
  ]);
  wb.stop();
});

it('found stale on the restored site before the ack (its effect came with the resend): the same, a refusal named as one', async () => {
  const { id, inbox, wb, warnings } = await restoredAfterApproval(false, 'restored', { recheck: () => ({ holds: false, reason: 'J-1 is assigned', snapshots: {} }) });
  expect((await inbox.decide(id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('stale');
  wb.handleAck('tilstand/s1/acks/operations', ack(id, false));
  expect(inbox.get(id)!.status).toBe('stale');
  expect(warnings).toEqual([expect.stringMatching(new RegExp(`^ack of ${id} from operations: the module refused its command, approved before the restore .* but ${id} is stale here \\(by lena\\); left as it is`))]);
  wb.stop();
});

it('an ack from another module than the proposal names is ignored, now with a warning (it went without a word)', async () => {
  const { id, inbox, wb, warnings } = await restoredAfterApproval();
  wb.handleAck('tilstand/s1/acks/inventory', ack(id));
  expect(inbox.get(id)!.status).toBe('open');
  // No command of it went anywhere here: the warning names whom the proposal is for.
  expect(warnings).toEqual([`ack for ${id} came from inventory, but the proposal is for operations; ignored`]);
  wb.stop();
});

it('its commit failing (a full disk) does not throw out of the ack handler; the next commit takes it', async () => {
  const { id, inbox, wb, warnings } = await restoredAfterApproval();
  vi.spyOn(TableWriter.prototype, 'commit').mockImplementationOnce(() => {
    throw new Error('disk full');
  });
  expect(() => wb.handleAck('tilstand/s1/acks/operations', ack(id))).not.toThrow();
  vi.restoreAllMocks();
  expect(warnings.filter((w) => w.includes('disk full'))).not.toEqual([]);
  expect(inbox.get(id)!.command!.state).toBe('acknowledged');
  wb.stop();
  inbox.close();
  const again = test.open();
  expect(again.get(id)!.status).toBe('approved');
  expect(again.history(id).map((e) => e.event)).toEqual(['proposed', 'approved', 'command_sent', 'command_acknowledged']);
});

it('on a site never restored from HQ such an ack decides nothing: warned of and ignored', async () => {
  // A module's ack alone does not approve a proposal: no approval can have been lost on a site
  // that was not restored, nor of a proposal the restored site made itself.
  const never = await restoredAfterApproval(false, 'not restored');
  never.wb.handleAck('tilstand/s1/acks/operations', ack(never.id));
  expect(never.inbox.get(never.id)!.status).toBe('open');
  expect(never.warnings).toEqual([`ack of ${never.id} from operations, which is open without a command and this site was not restored from HQ; ignored`]);
  never.wb.stop();
});

it('of a proposal the restored site made itself, after the restore: warned of and ignored', async () => {
  const after = await restoredAfterApproval();
  test.now += 60_000;
  const [q] = after.inbox.submit({ runId: 'r3', proposals: [proposalInput('J-2', 'r3')], withdrawals: [] }).created;
  after.wb.handleAck('tilstand/s1/acks/operations', ack(q!.id));
  expect(after.inbox.get(q!.id)!.status).toBe('open');
  expect(after.warnings).toEqual([`ack of ${q!.id} from operations, which is open without a command and was made after the restore; ignored`]);
  after.wb.stop();
});

it('more than a week after the restore: warned of and ignored (the note is kept for good; no held answer is still on its way)', async () => {
  const { id, inbox, wb, warnings } = await restoredAfterApproval();
  test.now += LOST_APPROVAL_ACK_WINDOW_MS; // a week to the millisecond after the restore
  wb.handleAck('tilstand/s1/acks/operations', ack(id));
  expect(inbox.get(id)!.status).toBe('open');
  expect(warnings.at(-1)).toBe(`ack of ${id} from operations, which is open without a command and the restore was more than a week ago; ignored`);
  wb.stop();
});

// "Made before the restore" was `createdAtMs < restoredAtMs`, by the wall clock: NTP stepping the
// PC's clock back while the restored site runs made the site's own new proposals older than the
// restore, and a module's ack of one (a made-up one, or a module acting on a command id it guessed)
// approved it by "?". It is now whether the restored inbox held the proposal.
it('the clock stepped back after the start: a proposal the restored site made itself is not approved by an ack, though made "before" the restore by the clock', async () => {
  const { id, inbox, wb, warnings } = await restoredAfterApproval();
  test.now -= 10 * 60_000; // NTP steps the clock back 10 minutes
  const [q] = inbox.submit({ runId: 'r4', proposals: [proposalInput('J-4', 'r4')], withdrawals: [] }).created;
  wb.handleAck('tilstand/s1/acks/operations', ack(q!.id));
  expect(inbox.get(q!.id)!.status).toBe('open');
  expect(inbox.get(q!.id)!.decision).toBeNull();
  expect(warnings).toEqual([`ack of ${q!.id} from operations, which is open without a command and was made after the restore; ignored`]);
  // The proposal the inbox held as restored still is.
  wb.handleAck('tilstand/s1/acks/operations', ack(id));
  expect(inbox.get(id)!.decision).toMatchObject({ kind: 'approved', by: '?' });
  wb.stop();
});

it('proposalsWithoutCommandAt: the proposals at a snapshot that had no command then, at that snapshot whatever came after', async () => {
  const inbox = test.open();
  const [a, b] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1'), proposalInput('J-2')], withdrawals: [] }).created;
  await inbox.decide(b!.id, 'approve', { user: 'lena', pin: '1111' });
  const table = test.catalog.getTable({ database: DB, table: APPROVAL_INBOX_TABLE });
  const at = table.latestSnapshot()!.id;
  inbox.submit({ runId: 'r2', proposals: [proposalInput('J-3', 'r2')], withdrawals: [] });
  await inbox.decide(a!.id, 'approve', { user: 'lena', pin: '1111' });
  expect(proposalsWithoutCommandAt(table, at)).toEqual([a!.id]);
  inbox.close();
});

// An ack naming an id this inbox does not know went without a word (another Tilstand's, a module's
// own test). Within the week after a restore — when an ack can approve — it is said, naming the
// module and the id, so a module (or a client) trying ids leaves a trace in the site's log.
it('an ack of an id the inbox does not know: warned of within the week after a restore, naming the module and the id', async () => {
  const { inbox, wb, warnings } = await restoredAfterApproval();
  wb.handleAck('tilstand/s1/acks/operations', ack('p-made-up-1'));
  expect(warnings).toEqual(['ack of "p-made-up-1" from operations: no proposal of this inbox has that id (this site was restored from HQ within the week); ignored']);
  expect(inbox.get('p-made-up-1')).toBeUndefined();
  test.now += LOST_APPROVAL_ACK_WINDOW_MS;
  wb.handleAck('tilstand/s1/acks/operations', ack('p-made-up-2'));
  expect(warnings, 'past the week: as on any site').toHaveLength(1);
  wb.stop();
});

// Each such ack was a line of its own: 20,000 acks from a module (or a client) trying ids wrote
// 20,000 lines, 7 MB, and the rotated site.log with them was gone. Now at most one line per module
// a minute, by the write-back's clock, the next saying how many were not said (every kind of ack
// warning is so limited: write-back-ack-warnings.test.ts).
it('acks of unknown ids: at most one warning per module a minute, the next with the count not said', async () => {
  const { wb, warnings } = await restoredAfterApproval();
  const unknown = (module: string, n: number) => {
    for (let i = 0; i < n; i++) wb.handleAck(`tilstand/s1/acks/${module}`, ack(`self-test-${module}-${i}`));
  };
  unknown('operations', 20_000);
  unknown('inventory', 3);
  expect(warnings).toEqual([
    'ack of "self-test-operations-0" from operations: no proposal of this inbox has that id (this site was restored from HQ within the week); ignored',
    'ack of "self-test-inventory-0" from inventory: no proposal of this inbox has that id (this site was restored from HQ within the week); ignored',
  ]);
  test.now += ACK_WARNING_EVERY_MS - 1;
  unknown('operations', 1);
  expect(warnings).toHaveLength(2);
  test.now += 1;
  unknown('operations', 2);
  // The first ten ids held back are named (ids 1 to 19,999, then 0 again, were held).
  const held = Array.from({ length: 10 }, (_, i) => `"self-test-operations-${i + 1}"`).join(', ');
  expect(warnings.slice(2)).toEqual([
    `ack of "self-test-operations-0" from operations: no proposal of this inbox has that id (this site was restored from HQ within the week); ignored (since the last warning of acks from operations, not said: 20000 of an unknown id (first held: ${held}, …))`,
  ]);
  // The clock stepped back: the minute is over (else it waited as long as the step).
  test.now -= 3_600_000;
  unknown('operations', 1);
  expect(warnings.at(-1)).toMatch(/ignored \(since the last warning of acks from operations, not said: 1 of an unknown id \(first held: "self-test-operations-1"\)\)$/);
  wb.stop();
});

it('an ack of an id the inbox does not know, on a site never restored: ignored without a word, as before', async () => {
  const never = await restoredAfterApproval(false, 'not restored');
  never.wb.handleAck('tilstand/s1/acks/operations', ack('p-made-up-3'));
  expect(never.warnings).toEqual([]);
  never.wb.stop();
});

// The set of proposals an ack can approve was every proposal without a command at the restored
// snapshot, withdrawn, rejected and stale ones too. None of those could be approved on the old PC
// after HQ's snapshot (a withdrawal or a decision is final), yet a module's ack of one (a made-up
// one, or a module acting on a command id it guessed) approved it by "?". Only open or deferred
// ones are in the set now; an ack of another is warned of and ignored.
it('withdrawn, rejected or stale at the restored snapshot: not in the set, and an ack of it approves nothing', async () => {
  let inbox = test.open({ recheck: (p) => (p.params.job_id === 'J-4' ? { holds: false, reason: 'J-4 is assigned', snapshots: {} } : { holds: true, snapshots: {} }) });
  const [w, r, s, d, o] = inbox.submit({ runId: 'r1', proposals: ['J-1', 'J-2', 'J-4', 'J-5', 'J-6'].map((j) => proposalInput(j)), withdrawals: [] }).created;
  inbox.submit({ runId: 'r2', proposals: [], withdrawals: [{ id: w!.id, reason: 'J-1 was assigned by hand' }] });
  await inbox.decide(r!.id, 'reject', { user: 'lena', pin: '1111' });
  expect((await inbox.decide(s!.id, 'approve', { user: 'lena', pin: '1111' })).outcome).toBe('stale');
  await inbox.decide(d!.id, 'defer', { user: 'lena', pin: '1111' });
  inbox.close();
  const table = test.catalog.getTable({ database: DB, table: APPROVAL_INBOX_TABLE });
  const set = new Set(proposalsWithoutCommandAt(table, table.latestSnapshot()!.id));
  expect([...set].sort()).toEqual([d!.id, o!.id].sort());
  const warnings: string[] = [];
  inbox = test.open({ onWarning: (m) => warnings.push(m) });
  const wb = new WriteBack({ inbox, publish: async () => undefined, onAck: () => undefined, effectSeen: () => false, clock: () => test.now, monotonic: () => test.now, restored: { atMs: test.now, proposals: set }, onWarning: (m) => warnings.push(m) });
  for (const p of [w!, r!, s!]) {
    const before = inbox.get(p.id)!;
    wb.handleAck('tilstand/s1/acks/operations', ack(p.id));
    expect(inbox.get(p.id)!.decision, `${before.status} at the snapshot`).toEqual(before.decision);
    expect(inbox.get(p.id)!.command).toBeNull();
    test.now += ACK_WARNING_EVERY_MS; // each said (a second within the minute is counted: write-back-ack-warnings.test.ts)
  }
  expect(warnings).toEqual(
    [
      [w!.id, 'withdrawn'],
      [r!.id, 'rejected'],
      [s!.id, 'stale'],
    ].map(([id, status]) => `ack of ${id} from operations, which is ${status} without a command and was not open or deferred in the inbox as restored; ignored`),
  );
  // The deferred one is: its approval may have been lost.
  wb.handleAck('tilstand/s1/acks/operations', ack(d!.id));
  expect(inbox.get(d!.id)!.decision).toMatchObject({ kind: 'approved', by: '?' });
  wb.stop();
});

// The restored inbox could not be read at the start (its snapshot expired, and no
// restored-proposals.json was kept from it): which proposals it held cannot be told. An ack of one
// without a command was said to be of a proposal "made after the restore", which it may well not
// have been; it approves nothing, and the warning says that it cannot tell.
it('the inbox as restored could not be read: an ack approves nothing by "?", and the warning says it cannot tell', async () => {
  const { id, inbox, published } = await restoredAfterApproval();
  const warnings: string[] = [];
  const wb = new WriteBack({ inbox, publish: async (_t, m) => void published.push(m), onAck: () => undefined, effectSeen: () => false, clock: () => test.now, monotonic: () => test.now, restored: { atMs: test.now, proposals: 'unreadable' }, onWarning: (m) => warnings.push(m) });
  wb.handleAck('tilstand/s1/acks/operations', ack(id));
  expect(inbox.get(id)!.status).toBe('open');
  expect(inbox.get(id)!.decision).toBeNull();
  expect(warnings).toEqual([
    `ack of ${id} from operations, which is open without a command and the inbox as restored could not be read (the site's log says why, at its start): the module carried out its command, but whether its approval was lost with the old PC cannot be told; ignored — check with the module's operators what was done`,
  ]);
  wb.stop();
});
