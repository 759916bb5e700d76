// A refused decision is logged under the name that was typed (`refused`, actor = the name, cut to
// 64 characters). A name that is not well-formed text — a lone surrogate, or a long name whose cut
// fell inside a character pair (an emoji at the 64th place) — made the log's write throw: the
// refusal was not logged, the caller got the table store's error instead of Refused, and the log
// skipped the id it had taken. The names that are not users are the attacker's to choose.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { Catalog, localFileIO } from '../lsm/index.ts';
import { FullDiskIO } from '../lsm/test-full-disk.ts';
import { DecisionLog, readDecisionLog } from './decision-log.ts';
import { DECISION_LOG_SPEC } from './inbox-tables.ts';
import { InboxError } from './errors.ts';
import { openInboxTables } from './inbox.ts';
import { DB, inboxTest, proposalInput } from './test-support.ts';

const test = inboxTest('tilstand-refused-name-');

it.each([
  ['a lone surrogate', 'lena\uD800', 'lena\uFFFD'],
  ['a character pair cut at 64', `${'a'.repeat(63)}😀x`, 'a'.repeat(63)],
])('a wrong PIN under a name with %s is refused, logged, and leaves no gap in the log', async (_, name, logged) => {
  const inbox = test.open();
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created; // entry 1
  const e = await inbox.decide(p!.id, 'reject', { user: name, pin: '0000' }).catch((x: unknown) => x); // entry 2
  expect(e).toBeInstanceOf(InboxError);
  expect(e).toMatchObject({ kind: 'Refused', reason: 'wrong_pin' });
  const [q] = inbox.submit({ runId: 'r2', proposals: [proposalInput('J-2', 'r2')], withdrawals: [] }).created; // entry 3
  expect(inbox.history(p!.id).map((x) => [x.id, x.event, x.actor])).toEqual([
    [1, 'proposed', 'agent-r1'],
    [2, 'refused', logged],
  ]);
  expect(inbox.history(q!.id).map((x) => x.id)).toEqual([3]);
});

it('an entry the log table refuses takes no id: the next entry gets it', () => {
  const { log: table } = openInboxTables(test.catalog, DB);
  const log = new DecisionLog(table);
  try {
    log.append({ atMs: test.now, proposalId: null, event: 'config_changed', actor: 'lena', detail: null });
    expect(() => log.append({ atMs: test.now, proposalId: null, event: 'config_changed', actor: 'x\uD800', detail: null })).toThrow('lone surrogate');
    expect(log.append({ atMs: test.now, proposalId: null, event: 'config_changed', actor: 'lena', detail: null })).toBe(2);
    log.commit();
    expect(readDecisionLog(table).map((e) => e.id)).toEqual([1, 2]);
  } finally {
    log.close();
  }
});

it('an entry whose write failed after the writer took it (a flush on a full disk) keeps its id: the next entry does not replace it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tilstand-log-id-full-disk-'));
  const io = new FullDiskIO(localFileIO);
  // A write buffer of one byte: every append flushes, as the last entry before a full buffer does.
  const catalog = new Catalog(join(dir, 'warehouse'), { fileIO: io });
  catalog.createDatabase(DB, true);
  const table = catalog.createTable({ database: DB, table: 'decision_log' }, { ...DECISION_LOG_SPEC, options: { ...DECISION_LOG_SPEC.options, 'write-buffer-size': '1 b' } }, true);
  const log = new DecisionLog(table);
  try {
    log.append({ atMs: test.now, proposalId: null, event: 'config_changed', actor: 'lena', detail: null });
    io.full = true;
    expect(() => log.append({ atMs: test.now, proposalId: null, event: 'config_changed', actor: 'kari', detail: null })).toThrow(/ENOSPC/);
    io.full = false;
    expect(log.append({ atMs: test.now, proposalId: null, event: 'config_changed', actor: 'ola', detail: null })).toBe(3);
    log.commit();
    expect(readDecisionLog(table).map((e) => [e.id, e.actor])).toEqual([[1, 'lena'], [2, 'kari'], [3, 'ola']]);
  } finally {
    log.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
