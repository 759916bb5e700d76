// Log recovery (log-recovery.ts) when the log lacks more than the inbox commits still readable: a
// site restored from an HQ whose decision_log lagged its approval_inbox by two commits holds
// approval_inbox's latest snapshot alone. The one lost commit that can be rebuilt numbered its
// entries from the log's next id — ids the commits before it had used — so a proposal's trail,
// read from the id its row names, began with another proposal's decision.
import { rmSync } from 'node:fs';
import { expect, it } from 'vitest';
import { NEXT_ID_PROPERTY } from './decision-log.ts';
import { RECOVERED_NOTE } from './log-recovery.ts';
import { inboxTest, proposalInput } from './test-support.ts';

const test = inboxTest('tilstand-log-recovery-expired-');

it('the one lost commit left readable keeps its entries at the ids they had, not the lost commits before it', async () => {
  const first = test.open();
  const [p1] = first.submit({ runId: 'r1', proposals: [proposalInput('J-1')], withdrawals: [] }).created; // entry 1
  const [p2] = first.submit({ runId: 'r2', proposals: [proposalInput('J-2')], withdrawals: [] }).created; // entry 2
  test.now += 60_000;
  await first.decide(p1!.id, 'reject', { user: 'lena', pin: '1111', comment: 'not now' }); // entry 3
  const inboxTable = first.table;
  const logTable = first.logTable;
  first.close();
  // The log as HQ held it: after entry 1 only. approval_inbox: its latest snapshot alone.
  const logAfterFirst = logTable.snapshots.listIds().map((id) => logTable.snapshots.tryGet(id)!).find((s) => s.properties?.[NEXT_ID_PROPERTY] === '2')!;
  expect(logAfterFirst).toBeDefined();
  logTable.rollbackTo(logAfterFirst.id);
  const latest = inboxTable.latestSnapshot()!;
  for (let id = 1; id < latest.id; id++) rmSync(inboxTable.paths.snapshotFile(id), { force: true });

  const warnings: string[] = [];
  const second = test.open({ onWarning: (m: string) => warnings.push(m) });
  expect(warnings.some((m) => m.includes('has expired'))).toBe(true);
  const trail = (id: string) => second.history(id).map((e) => ({ id: e.id, event: e.event, recovered: (e.detail as { recovered?: string }).recovered === RECOVERED_NOTE }));
  // The rejection keeps id 3 (it took id 2 before); J-2's `proposed` (id 2, lost with its commit) stays unused.
  expect(trail(p1!.id)).toEqual([
    { id: 1, event: 'proposed', recovered: false },
    { id: 3, event: 'rejected', recovered: true },
  ]);
  expect(trail(p2!.id)).toEqual([]);
  // Later entries take the ids after the claim.
  const [p3] = second.submit({ runId: 'r3', proposals: [proposalInput('J-3')], withdrawals: [] }).created;
  expect(trail(p3!.id)).toEqual([{ id: 4, event: 'proposed', recovered: false }]);
});
