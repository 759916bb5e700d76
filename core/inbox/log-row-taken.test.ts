// A decision_log entry whose write failed after the log's writer took it (a flush on a full disk:
// LsmError.rowTaken). The writer holds the entry and commits it with the next log commit, so the
// inbox counts it as written, as it does such a row of approval_inbox (inbox-row-taken.test.ts).
// Thrown out of the operation, the rest of it was left out while what it had written before went
// into the next commit: an approval's decision row stood without its command (never sent: the
// proposal read as approved with no command on its way), and a failed command was not counted
// towards the situation's quiet.
// On a real warehouse whose data files cannot be written while the test says the disk is full.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { Catalog, localFileIO } from '../lsm/index.ts';
import { FullDiskIO } from '../lsm/test-full-disk.ts';
import { readDecisionLog } from './decision-log.ts';
import { DECISION_LOG_SPEC } from './inbox-tables.ts';
import { Inbox, openInboxTables, readProposals } from './inbox.ts';
import { DB, inboxTest, proposalInput } from './test-support.ts';

const test = inboxTest('tilstand-log-row-taken-');

/** A warehouse on `io` whose decision_log flushes every entry as it is written (a write buffer of one byte). */
function warehouse(io: FullDiskIO): Catalog {
  const catalog = new Catalog(join(test.dir, 'full-disk-warehouse'), { fileIO: io, clock: () => test.now });
  catalog.createDatabase(DB, true);
  catalog.createTable({ database: DB, table: 'decision_log' }, { ...DECISION_LOG_SPEC, options: { ...DECISION_LOG_SPEC.options, 'write-buffer-size': '1 b' } }, true);
  return catalog;
}

const open = (catalog: Catalog) =>
  Inbox.open({ catalog, database: DB, users: test.users, recheck: () => ({ holds: true, snapshots: {} }), clock: () => test.now, onWarning: () => undefined });

it('an approval whose log entry failed after the writer took it is committed with its command, which the write-back then sends', async () => {
  const io = new FullDiskIO(localFileIO);
  const catalog = warehouse(io);
  const inbox = open(catalog);
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created;
  expect(p!.module).not.toBeNull();
  io.full = true;
  await expect(inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).rejects.toThrow(/ENOSPC/);
  io.full = false;
  // As a failed commit's approval: it stands, its command pending (WriteBack.resume sends it once committed).
  expect(inbox.get(p!.id)).toMatchObject({ status: 'approved', command: { state: 'pending' } });
  expect(inbox.commandsInFlight().map((x) => x.id)).toEqual([p!.id]);
  inbox.submit({ runId: 'r2', proposals: [proposalInput('J-2')], withdrawals: [] });
  inbox.close();
  const { inbox: table, log } = openInboxTables(catalog, DB);
  const stored = readProposals(table, { limit: 100 }).find((x) => x.id === p!.id);
  expect(stored).toMatchObject({ status: 'approved', command: { state: 'pending' } });
  expect(readDecisionLog(log, p!.id).map((e) => e.event)).toEqual(['proposed', 'approved']);
});

it("a failed command whose log entry failed after the writer took it counts towards its situation's failures", async () => {
  const io = new FullDiskIO(localFileIO);
  const catalog = warehouse(io);
  const inbox = open(catalog);
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' });
  inbox.markCommand(p!.id, 'sent');
  io.full = true;
  expect(() => inbox.markCommand(p!.id, 'failed', 'no such job')).toThrow(/ENOSPC/);
  io.full = false;
  expect(inbox.failedBefore(p!.situationKey).map((f) => f.id)).toEqual([p!.id]);
  inbox.close();
  const { log } = openInboxTables(catalog, DB);
  expect(readDecisionLog(log, p!.id).map((e) => e.event)).toEqual(['proposed', 'approved', 'command_sent', 'command_failed']);
});
