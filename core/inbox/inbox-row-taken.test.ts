// A write into approval_inbox that failed after the table writer took the row (a flush on a full
// disk: LsmError.rowTaken). The writer holds the row and commits it with the next commit, so the
// inbox counts it as written, as it does a row whose commit failed (approval-uncommitted.test.ts).
// Thrown as a refused write, the operation's state and decision log entry were left out while its
// row went into the next commit: an approval the person was told had failed was committed without
// its log entry (its command then sent by the next start's resume), and a proposal the agent's run
// failed on stood in the table beside the one its next run proposed for the same situation.
// On a real warehouse whose data files cannot be written while the test says the disk is full.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { Catalog, localFileIO } from '../lsm/index.ts';
import { FullDiskIO } from '../lsm/test-full-disk.ts';
import { readDecisionLog } from './decision-log.ts';
import { APPROVAL_INBOX_SPEC } from './inbox-tables.ts';
import { Inbox, openInboxTables, readProposals } from './inbox.ts';
import { DB, inboxTest, proposalInput } from './test-support.ts';

const test = inboxTest('tilstand-inbox-row-taken-');

/** A warehouse on `io` whose approval_inbox flushes every row as it is written (a write buffer of one byte): the last row before a full buffer. */
function warehouse(io: FullDiskIO): Catalog {
  const catalog = new Catalog(join(test.dir, 'full-disk-warehouse'), { fileIO: io, clock: () => test.now });
  catalog.createDatabase(DB, true);
  catalog.createTable({ database: DB, table: 'approval_inbox' }, { ...APPROVAL_INBOX_SPEC, options: { ...APPROVAL_INBOX_SPEC.options, 'write-buffer-size': '1 b' } }, true);
  return catalog;
}

const open = (catalog: Catalog) =>
  Inbox.open({ catalog, database: DB, users: test.users, recheck: () => ({ holds: true, snapshots: {} }), clock: () => test.now, onWarning: () => undefined });

/** What the tables hold once reopened: each proposal's status, and the log's events per proposal. */
function durable(catalog: Catalog): { status: Record<string, string>; log: Record<string, string[]> } {
  const { inbox, log } = openInboxTables(catalog, DB);
  const status = Object.fromEntries(readProposals(inbox, { limit: 100 }).map((p) => [p.id, p.status]));
  const events: Record<string, string[]> = {};
  for (const e of readDecisionLog(log)) if (e.proposalId !== null) (events[e.proposalId] ??= []).push(e.event);
  return { status, log: events };
}

it('an approval whose write failed after the writer took it stands as approved, with its log entry, when the next commit makes it durable', async () => {
  const io = new FullDiskIO(localFileIO);
  const catalog = warehouse(io);
  const inbox = open(catalog);
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created;
  io.full = true;
  await expect(inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).rejects.toThrow(/ENOSPC/);
  io.full = false;
  // As a failed commit's approval: it stands, and a second try is told so.
  expect(inbox.get(p!.id)?.status).toBe('approved');
  // The agent's next run commits what the writer holds.
  inbox.submit({ runId: 'r2', proposals: [proposalInput('J-2')], withdrawals: [] });
  inbox.close();
  const d = durable(catalog);
  expect(d.status[p!.id]).toBe('approved');
  expect(d.log[p!.id]).toEqual(['proposed', 'approved']);
});

it("a proposal whose write failed after the writer took it is the situation's open proposal: the next run proposes no second one", () => {
  const io = new FullDiskIO(localFileIO);
  const catalog = warehouse(io);
  const inbox = open(catalog);
  io.full = true;
  expect(() => inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] })).toThrow(/ENOSPC/);
  io.full = false;
  const again = inbox.submit({ runId: 'r2', proposals: [proposalInput('J-1')], withdrawals: [] });
  expect(again.created).toEqual([]);
  expect(again.duplicates).toHaveLength(1);
  inbox.close();
  const d = durable(catalog);
  expect(Object.values(d.status)).toEqual(['open']);
  expect(Object.values(d.log)).toEqual([['proposed']]);
});
