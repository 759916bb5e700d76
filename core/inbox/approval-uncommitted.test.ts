// An approval whose commit failed (a full disk) stands in the inbox's memory and in the table
// writer, which commits it with the next commit; the person was told the error. Its command is not
// published before that commit: a restart in between forgets the approval (and its decision log
// entry), while the module would have carried it out with nothing on record.
import { afterEach, expect, it, vi } from 'vitest';
import { TableWriter } from '../lsm/index.ts';
import { inboxTest, proposalInput } from './test-support.ts';
import { WriteBack } from './write-back.ts';

const test = inboxTest('tilstand-approval-uncommitted-');
afterEach(() => vi.restoreAllMocks());

it('an approval whose commit failed is not published until a commit makes it durable', async () => {
  const inbox = test.open();
  const published: string[] = [];
  const wb = new WriteBack({
    inbox,
    publish: async (_topic, payload) => {
      published.push((JSON.parse(payload) as { command_id: string }).command_id);
    },
    onAck: () => undefined,
    effectSeen: () => false,
    clock: () => test.now,
    onWarning: () => undefined,
  });
  const [p] = inbox.submit({ runId: 'r1', proposals: [proposalInput()], withdrawals: [] }).created;
  const commit = vi.spyOn(TableWriter.prototype, 'commit').mockImplementationOnce(() => {
    throw new Error('disk full');
  });
  await expect(inbox.decide(p!.id, 'approve', { user: 'lena', pin: '1111' })).rejects.toThrow('disk full');
  commit.mockRestore();
  // The approval stands (a second try is told so) and waits for the next commit.
  expect(inbox.get(p!.id)).toMatchObject({ status: 'approved', command: { state: 'pending' } });
  wb.poll();
  await wb.resume();
  expect(published).toEqual([]);
  // The next operation's commit (here the agent's next run) makes it durable: then it is sent.
  inbox.submit({ runId: 'r2', proposals: [], withdrawals: [] });
  wb.poll();
  await vi.waitFor(() => expect(inbox.get(p!.id)!.command!.state).toBe('sent'));
  expect(published).toEqual([p!.id]);
  wb.stop();
});
