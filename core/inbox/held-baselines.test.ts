// The inbox keeps, for the agent, the baselines it holds its rules on (core/agents DESIGN.md, "A
// run", step 5): in approval_inbox's snapshot properties, so that a restart reads them back.
// core/agents quiet-dip.test.ts tests what the agent does with them; this, what the inbox keeps.
import { afterEach, expect, it, vi } from 'vitest';
import { TableWriter } from '../lsm/index.ts';
import { HELD_BASELINES_PROPERTY } from './inbox.ts';
import { DB, inboxTest, proposalInput } from './test-support.ts';

const test = inboxTest('tilstand-held-baselines-');
afterEach(() => vi.restoreAllMocks());
const committed = () => test.catalog.getTable({ database: DB, table: 'approval_inbox' }).committedProperties()[HELD_BASELINES_PROPERTY];
const held = { 'stock-reorder': { stock: 'agent-20261130-080000-000', work_queue: 'agent-20261130-080000-000' }, 'own-rule': null };

it('are committed when they change, carried by later commits, and read back by the next open', async () => {
  const inbox = test.open();
  expect(inbox.heldBaselines()).toEqual({});
  inbox.holdBaselines(held);
  expect(JSON.parse(committed()!)).toEqual(held);
  // A decision commits after it: the record stays.
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput()], withdrawals: [] }).created;
  await inbox.decide(p!.id, 'reject', { user: 'lena', pin: '1111' });
  inbox.close();
  expect(test.open().heldBaselines()).toEqual(held);
});

it('a commit that failed is made by the next call with the same holds', () => {
  const inbox = test.open();
  const commit = vi.spyOn(TableWriter.prototype, 'commit').mockImplementationOnce(() => {
    throw new Error('disk full');
  });
  expect(() => inbox.holdBaselines(held)).toThrow('disk full');
  commit.mockRestore();
  expect(committed()).toBeUndefined();
  inbox.holdBaselines(held);
  expect(JSON.parse(committed()!)).toEqual(held);
});
