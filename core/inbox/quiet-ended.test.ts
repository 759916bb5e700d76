// `quietEndedSince`: the situations whose quiet (an approval or rejection resuggestAfterDecisionMs
// ago) ended in a span of time, for a rule that drafts only on what changed (core/agents
// stock-reorder v8): a row that stayed below its point through the quiet was never proposed again.
// It must survive a restart (read from approval_inbox) and cost the agent's minute runs no scan.
import { describe, expect, it, vi } from 'vitest';
import { DB, inboxTest, proposalInput } from './test-support.ts';
import { timedOutDetail } from './proposal.ts';
import { agentColumns, APPROVAL_INBOX_TABLE, decisionColumns } from './inbox-tables.ts';

const t = inboxTest('tilstand-inbox-quiet-ended-');
const MIN = 60_000;
const HOUR = 3600_000;
const LENA = { user: 'lena', pin: '1111' };

describe('quietEndedSince', () => {
  it('names a rejected and a timed-out approval once their 8 h are over, once per span, also after a restart', async () => {
    const inbox = t.open();
    const [a, b, c] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1'), proposalInput('J-2'), proposalInput('J-3')], withdrawals: [] }).created;
    expect(inbox.quietEndedSince(t.now)).toEqual([]);
    await inbox.decide(a!.id, 'reject', LENA);
    await inbox.decide(b!.id, 'approve', LENA);
    inbox.markCommand(b!.id, 'sent');
    t.now += 11 * MIN;
    inbox.markCommand(b!.id, 'timed_out', timedOutDetail(660_000, 'sent'));
    await inbox.decide(c!.id, 'approve', LENA);
    inbox.markCommand(c!.id, 'sent');
    inbox.markCommand(c!.id, 'failed', 'refused'); // its quiet ended at once: not named later
    t.now = t.T0 + 8 * HOUR - 1;
    expect(inbox.quietEndedSince(t.T0)).toEqual([]);
    t.now = t.T0 + 8 * HOUR;
    expect(inbox.quietEndedSince(t.T0 + 8 * HOUR - 1).map((p) => p.id)).toEqual([a!.id, b!.id]);
    t.now += MIN;
    expect(inbox.quietEndedSince(t.T0 + 8 * HOUR)).toEqual([]);
    inbox.close();

    // Restarted later: the span asked reaches back before the open.
    t.now = t.T0 + 10 * HOUR;
    const again = t.open();
    expect(again.quietEndedSince(t.T0 + HOUR).map((p) => p.id)).toEqual([a!.id, b!.id]);
    expect(again.quietEndedSince(t.T0 + 9 * HOUR)).toEqual([]);
    // Decided again (the situation proposed anew and rejected): quiet again, not named.
    const a2 = again.submit({ runId: 'r2', proposals: [proposalInput('J-1', 'r2')], withdrawals: [] }).created[0]!;
    await again.decide(a2.id, 'reject', LENA);
    expect(again.quietEndedSince(t.T0 + HOUR).map((p) => p.id)).toEqual([b!.id]);
    t.now += 8 * HOUR;
    expect(again.quietEndedSince(t.T0 + 10 * HOUR).map((p) => p.id)).toEqual([a2.id]);
  });

  it('on a large approval_inbox: one scan per process, then the minute runs answer from memory', async () => {
    // Rows written straight into approval_inbox (through decide, 20,000 took minutes): a year of a
    // busy site's proposals, the last 3,000 rejected every 10 s over the last ~8 h.
    const N = 20_000;
    const DECIDED = 3000;
    t.open().close(); // makes the tables
    const w = t.catalog.getTable({ database: DB, table: APPROVAL_INBOX_TABLE }).newWriter({ commitUser: 'test' });
    for (let i = 0; i < N; i++) {
      const id = `P-r1-${i + 1}`;
      const at = t.T0 + (i - (N - DECIDED)) * 10_000;
      w.writeRecord({ ...agentColumns(id, proposalInput(`J-${i}`), at, 'open', null, at), agent_seq: 1n, ...decisionColumns({ kind: 'rejected', by: 'lena', role: 'shift_lead', atMs: at, comment: null, snapshots: { seen: {}, checked: {} }, reason: null }), decision_seq: 1n });
      if (i % 5000 === 4999) w.commit();
    }
    w.commit();
    w.close();
    t.now = t.T0 + 8 * HOUR;
    let t0 = performance.now();
    const inbox = t.open();
    const openMs = performance.now() - t0;
    const scans = vi.spyOn(inbox.table, 'scanRows');
    let since = t.now - MIN;
    t0 = performance.now();
    let named = inbox.quietEndedSince(since).length;
    const first = performance.now() - t0;
    expect(scans).toHaveBeenCalledTimes(1);
    const per: number[] = [];
    for (let i = 0; i < 60; i++) {
      since = t.now;
      t.now += MIN;
      t0 = performance.now();
      named += inbox.quietEndedSince(since).length;
      per.push(performance.now() - t0);
    }
    expect(scans).toHaveBeenCalledTimes(1);
    // Each minute names the rejections of one minute 8 h before (one every 10 s): 6.
    expect(named).toBe(61 * 6);
    per.sort((x, y) => x - y);
    console.log(`quietEndedSince on ${N} decided proposals (open ${openMs.toFixed(0)} ms): first call (scan) ${first.toFixed(1)} ms, later calls median ${per[30]!.toFixed(2)} ms, max ${per[59]!.toFixed(2)} ms`);
  }, 60_000);
});
