// restoredProposals (restored-proposals.ts), called as the site's start calls it, on an inbox made
// here: what a kept restored-proposals.json is trusted for, what an inbox that cannot be read says,
// and when the week after the restore is counted from.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { APPROVAL_INBOX_TABLE, LOST_APPROVAL_ACK_WINDOW_MS, WriteBack, type Inbox } from '../inbox/index.ts';
import { DB, inboxTest, proposalInput } from '../inbox/test-support.ts';
import type { RestoreNote } from '../sync/restore.ts';
import { RESTORED_PROPOSALS, restoredProposals } from './restored-proposals.ts';

const test = inboxTest('tilstand-restored-proposals-');
const DAY_MS = 24 * 3_600_000;
const ack = (id: string) => Buffer.from(JSON.stringify({ command_id: id, module: 'operations', ok: true, result: 'assigned' }));

/** An inbox with w withdrawn and o open; the note of a restore at its latest snapshot, at `restoredAtMs` (now by default). */
function restoredInbox(restoredAtMs = test.now) {
  const inbox = test.open();
  const [w, o] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1'), proposalInput('J-2')], withdrawals: [] }).created;
  inbox.submit({ runId: 'r2', proposals: [], withdrawals: [{ id: w!.id, reason: 'J-1 was assigned by hand' }] });
  const table = test.catalog.getTable({ database: DB, table: APPROVAL_INBOX_TABLE });
  const snapshotId = table.latestSnapshot()!.id;
  const note: RestoreNote = { site: 's1', restoredAtMs, hq: 'file:///hq', tables: { [APPROVAL_INBOX_TABLE]: { snapshotId, tags: [] } }, resync: [] };
  return { inbox, table, snapshotId, note, w: w!.id, o: o!.id };
}

function atStart(note: RestoreNote, nowMs = test.now, lines: string[] = []) {
  return restoredProposals({ data: test.dir, note, catalog: test.catalog, database: DB, nowMs, log: (l) => lines.push(l) });
}

function writeBack(inbox: Inbox, restored: ReturnType<typeof atStart>, warnings: string[] = []) {
  return new WriteBack({ inbox, publish: async () => undefined, onAck: () => undefined, effectSeen: () => false, clock: () => test.now, monotonic: () => test.now, ...(restored ? { restored } : {}), onWarning: (m) => warnings.push(m) });
}

const keptFile = () => JSON.parse(readFileSync(join(test.dir, RESTORED_PROPOSALS), 'utf8')) as Record<string, unknown>;

// A restored-proposals.json kept by an older version held every proposal without a command at the
// snapshot, withdrawn ones too, and nothing in it said so: its time and snapshot matched the note,
// so it was trusted, and a module's ack of a withdrawn proposal approved it by "?". A file without
// the rule this version fills it by is now as none: read anew from the snapshot.
it("a kept file without the current rule (an older version's, withdrawn proposals in it) is read anew: an ack of a withdrawn one leaves it withdrawn", () => {
  const { inbox, snapshotId, note, w, o } = restoredInbox();
  const older = { restoredAtMs: note.restoredAtMs, snapshotId, proposals: [w, o] };
  // As 85ebc41 wrote it (no rule), and one naming another rule.
  for (const file of [older, { ...older, rule: 'without a command', atMs: note.restoredAtMs }]) {
    writeFileSync(join(test.dir, RESTORED_PROPOSALS), `${JSON.stringify(file)}\n`);
    expect(atStart(note)?.proposals, JSON.stringify(file)).toEqual(new Set([o]));
    expect(keptFile(), 'written again, by the current rule').toMatchObject({ rule: 'open or deferred without a command', snapshotId, proposals: [o] });
  }
  const restored = atStart(note);
  const warnings: string[] = [];
  const wb = writeBack(inbox, restored, warnings);
  wb.handleAck('tilstand/s1/acks/operations', ack(w));
  expect(inbox.get(w)!.status).toBe('withdrawn');
  expect(warnings).toEqual([`ack of ${w} from operations, which is withdrawn without a command and was not open or deferred in the inbox as restored; ignored`]);
  wb.handleAck('tilstand/s1/acks/operations', ack(o));
  expect(inbox.get(o)!.decision).toMatchObject({ kind: 'approved', by: '?' });
  wb.stop();
});

// Neither a file kept by the current rule nor the snapshot (expired): the set was empty, and an ack
// of a proposal the restored inbox held was warned of as one "made after the restore". Now the
// start says the inbox as restored could not be read, and the write-back that it cannot tell.
it('an older file and a snapshot that no longer reads: the inbox as restored "could not be read", and no ack approves', () => {
  const { inbox, table, snapshotId, note, w, o } = restoredInbox();
  inbox.submit({ runId: 'r3', proposals: [proposalInput('J-3', 'r3')], withdrawals: [] });
  rmSync(table.paths.snapshotFile(snapshotId));
  writeFileSync(join(test.dir, RESTORED_PROPOSALS), `${JSON.stringify({ restoredAtMs: note.restoredAtMs, snapshotId, proposals: [w, o] })}\n`);
  const lines: string[] = [];
  const restored = atStart(note, test.now, lines);
  expect(restored).toEqual({ atMs: note.restoredAtMs, proposals: 'unreadable' });
  expect(lines).toEqual([expect.stringMatching(new RegExp(`^restore: approval_inbox as restored \\(snapshot ${snapshotId}\\) does not read \\(.*\\), and restored-proposals.json holds none of its proposals: a module's ack approves none of them$`))]);
  const warnings: string[] = [];
  const wb = writeBack(inbox, restored, warnings);
  for (const id of [o, w]) wb.handleAck('tilstand/s1/acks/operations', ack(id));
  expect(inbox.get(w)!.status).toBe('withdrawn');
  expect(inbox.get(o)!.status).toBe('open');
  expect(warnings[0]).toBe(
    `ack of ${o} from operations, which is open without a command and the inbox as restored could not be read (the site's log says why, at its start): the module carried out its command, but whether its approval was lost with the old PC cannot be told; ignored — check with the module's operators what was done`,
  );
  wb.stop();
});

// The week was counted from min(note, now) at each start: a clock more than a week behind the note
// made every start "now", and the week never ended. The first start's time is kept in the file, and
// later starts count from it (or the note's, if earlier).
it('a clock behind the note: the week counts from the first start, kept in the file, over three starts', () => {
  const behind = 10 * DAY_MS;
  const { inbox, note, o } = restoredInbox(test.now + behind);
  const first = test.now;
  expect(atStart(note, first)).toEqual({ atMs: first, proposals: new Set([o]) });
  expect(keptFile()).toMatchObject({ atMs: first });
  expect(atStart(note, first + 6 * DAY_MS), 'within the week of the first start').toEqual({ atMs: first, proposals: new Set([o]) });
  const third = atStart(note, first + 8 * DAY_MS);
  expect(third?.atMs).toBe(first);
  expect(third?.proposals).toEqual(new Set());
  test.now = first + 8 * DAY_MS;
  const warnings: string[] = [];
  const wb = writeBack(inbox, third, warnings);
  wb.handleAck('tilstand/s1/acks/operations', ack(o));
  expect(inbox.get(o)!.status).toBe('open');
  expect(warnings).toEqual([`ack of ${o} from operations, which is open without a command and the restore was more than a week ago; ignored`]);
  wb.stop();
  expect(keptFile(), 'the first start’s time stays').toMatchObject({ atMs: first });
  expect(LOST_APPROVAL_ACK_WINDOW_MS).toBeLessThan(8 * DAY_MS);
});

// A replacement PC a year behind at its first start kept that wrong time, and after NTP set the
// clock right a restart a day after the restore counted the week from it: "more than a week ago",
// and a lost approval's ack approved nothing. The kept time counts only while the clock is still
// behind the note's; once it has reached the note, the week counts from the note.
it('a clock a year behind at the first start, set right before a restart a day after the restore: the week counts from the note, and an ack approves by "?"', () => {
  const { inbox, note, o } = restoredInbox();
  const noted = note.restoredAtMs;
  expect(atStart(note, noted - 365 * DAY_MS)).toEqual({ atMs: noted - 365 * DAY_MS, proposals: new Set([o]) });
  expect(keptFile()).toMatchObject({ atMs: noted - 365 * DAY_MS });
  test.now = noted + DAY_MS;
  const restored = atStart(note, test.now);
  expect(restored).toEqual({ atMs: noted, proposals: new Set([o]) });
  const warnings: string[] = [];
  const wb = writeBack(inbox, restored, warnings);
  wb.handleAck('tilstand/s1/acks/operations', ack(o));
  expect(inbox.get(o)!.decision).toMatchObject({ kind: 'approved', by: '?' });
  expect(warnings).toEqual([expect.stringMatching(new RegExp(`^ack of ${o} from operations: its approval is not on record`))]);
  wb.stop();
});

it('a kept file of another restore (its note time not this note’s) counts the week from this one', () => {
  const { note, o } = restoredInbox();
  expect(atStart(note)?.proposals).toEqual(new Set([o]));
  const again = { ...note, restoredAtMs: note.restoredAtMs + DAY_MS };
  expect(atStart(again, test.now + DAY_MS)).toEqual({ atMs: test.now + DAY_MS, proposals: new Set([o]) });
  expect(keptFile()).toMatchObject({ restoredAtMs: again.restoredAtMs, atMs: test.now + DAY_MS });
  expect(existsSync(join(test.dir, RESTORED_PROPOSALS))).toBe(true);
});
