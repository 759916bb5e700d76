// A reorder a shift lead rejected (a delivery was due), or whose approved command timed out
// unanswered, keeps its situation quiet for resuggestAfterDecisionMs (8 h). The other rules look at
// every row each run and propose the situation again once the quiet ends, if it still holds.
// stock-reorder drafts only rows that changed since its baseline, so a row that stayed below its
// point through the quiet period was never proposed again (v7): "order 17 NUT" rejected at 06:00,
// the delivery never came, nothing at 14:00. v8 drafts the rows whose quiet ended since its
// baseline (RuleContext.quietEnded, core/inbox quietEndedSince), once, if still below and not
// underway — also across a restart, read back from approval_inbox.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Inbox } from '../inbox/index.ts';
import { timedOutDetail } from '../inbox/proposal.ts';
import type { Agent } from './agent.ts';
import { stockReorder } from './rules/index.ts';
import { TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

const MIN = 60_000;
const HOUR = 3600_000;
const NUT = { item: 'NUT', location: 'A', qty: 17, position_before: 3 };

/** NUT at A falls to 3 (point 5); the first proposal of it. */
async function nutBelow(): Promise<{ agent: Agent; inbox: Inbox; id: string; key: string }> {
  site = new TestSite();
  await site.addUser('lena', 'shift_lead');
  site.stock('NUT', 'A', { on_hand: 20 });
  site.stock('BOLT', 'A', { on_hand: 20 });
  site.commit();
  const { agent, inbox } = site.agentAndInbox({ agent: { rules: [stockReorder] } });
  agent.run();
  site.stock('NUT', 'A', { on_hand: 3 });
  site.commit();
  site.nowMs += MIN;
  const p = agent.run().created[0]!;
  expect(p.params).toEqual(NUT);
  return { agent, inbox, id: p.id, key: p.situationKey };
}

/** Runs once a minute (or every `stepMs`) from now until `untilMs` (bounded), the proposals each made. */
function runEveryMinute(agent: Agent, untilMs: number, stepMs = MIN): { atMs: number; params: unknown }[] {
  const made: { atMs: number; params: unknown }[] = [];
  for (let i = 0; i < 2000 && site.nowMs < untilMs; i++) {
    site.nowMs += stepMs;
    for (const p of agent.run().created) made.push({ atMs: site.nowMs, params: p.params });
  }
  return made;
}

describe('stock-reorder proposes a row again once its quiet period ended', () => {
  it('after a rejection: the row stayed below through the 8 h, the first run after them proposes it, once', async () => {
    const { agent, inbox, id, key } = await nutBelow();
    const decidedAt = site.nowMs;
    await inbox.decide(id, 'reject', { user: 'lena', pin: '1234', comment: 'delivery due' });
    // Runs every 20 min meanwhile: quiet, nothing proposed.
    for (let i = 0; i < 23; i++) {
      site.nowMs += 20 * MIN;
      expect(agent.run().created).toEqual([]);
    }
    expect(inbox.isQuiet(key)).toBe(true);
    const made = runEveryMinute(agent, decidedAt + 8 * HOUR + 30 * MIN);
    expect(made).toEqual([{ atMs: decidedAt + 8 * HOUR, params: NUT }]);
    expect(stockReorder.version).toBe('10');
  });

  it('after an approval whose command timed out unanswered', async () => {
    const { agent, inbox, id } = await nutBelow();
    const decidedAt = site.nowMs;
    await inbox.decide(id, 'approve', { user: 'lena', pin: '1234' });
    inbox.markCommand(id, 'sent');
    site.nowMs += 10 * MIN + 1000;
    inbox.markCommand(id, 'timed_out', timedOutDetail(601_000, 'sent'));
    site.nowMs = decidedAt + 8 * HOUR - 2 * MIN;
    expect(agent.run().created).toEqual([]);
    const made = runEveryMinute(agent, decidedAt + 8 * HOUR + 20 * MIN);
    expect(made).toEqual([{ atMs: decidedAt + 8 * HOUR, params: NUT }]);
  });

  it('after an approval whose command timed out after procurement acknowledged it: once it is no longer awaited', async () => {
    const { agent, inbox, id } = await nutBelow();
    await inbox.decide(id, 'approve', { user: 'lena', pin: '1234' });
    inbox.markCommand(id, 'sent');
    inbox.markCommand(id, 'acknowledged');
    site.nowMs += 10 * MIN + 1000;
    const timedOutAt = site.nowMs;
    inbox.markCommand(id, 'timed_out', timedOutDetail(601_000, 'acknowledged'));
    site.nowMs = timedOutAt + 8 * HOUR - 30 * MIN;
    expect(agent.run().created).toEqual([]); // the decision's quiet ended, but the order is awaited
    const made = runEveryMinute(agent, timedOutAt + 8 * HOUR + 10 * MIN);
    expect(made.map((m) => m.params)).toEqual([NUT]);
    expect(made[0]!.atMs).toBeGreaterThanOrEqual(timedOutAt + 8 * HOUR);
  });

  it('not a row that recovered; a row rejected again waits for its own 8 h', async () => {
    const { agent, inbox, id } = await nutBelow();
    site.stock('BOLT', 'A', { on_hand: 2 });
    site.commit();
    site.nowMs += MIN;
    const bolt = agent.run().created[0]!;
    await inbox.decide(id, 'reject', { user: 'lena', pin: '1234' });
    await inbox.decide(bolt.id, 'reject', { user: 'lena', pin: '1234' });
    // BOLT was counted again and is well stocked; NUT stays below.
    site.nowMs += HOUR;
    site.stock('BOLT', 'A', { on_hand: 30 });
    site.commit();
    site.nowMs += 6 * HOUR;
    agent.run();
    const made = runEveryMinute(agent, site.nowMs + 2 * HOUR, 5 * MIN);
    expect(made.map((m) => m.params)).toEqual([NUT]);
    // Rejected again: quiet again for its own 8 h, then proposed again, once.
    const again = inbox.list({ status: 'open' })[0]!;
    const rejectedAgainAt = site.nowMs;
    await inbox.decide(again.id, 'reject', { user: 'lena', pin: '1234' });
    expect(runEveryMinute(agent, rejectedAgainAt + 8 * HOUR - 20 * MIN, 20 * MIN)).toEqual([]);
    expect(runEveryMinute(agent, rejectedAgainAt + 9 * HOUR, 5 * MIN)).toEqual([{ atMs: rejectedAgainAt + 8 * HOUR, params: NUT }]);
  });

  it('across a restart: the site was off when the quiet ended, or restarted before it ended', async () => {
    const { agent, inbox, id } = await nutBelow();
    const decidedAt = site.nowMs;
    await inbox.decide(id, 'reject', { user: 'lena', pin: '1234' });
    site.nowMs += 3 * HOUR;
    agent.run();
    inbox.close();
    // Off from 3 h to 9 h after the decision.
    site.nowMs = decidedAt + 9 * HOUR;
    const second = site.agentAndInbox({ agent: { rules: [stockReorder] } });
    expect(second.agent.run().created.map((p) => p.params)).toEqual([NUT]);
    expect(runEveryMinute(second.agent, site.nowMs + 5 * MIN)).toEqual([]);

    // The new proposal rejected, and a restart inside its quiet.
    const p2 = second.inbox.list({ status: 'open' })[0]!;
    const decided2 = site.nowMs;
    await second.inbox.decide(p2.id, 'reject', { user: 'lena', pin: '1234' });
    site.nowMs += HOUR;
    second.agent.run();
    second.inbox.close();
    const third = site.agentAndInbox({ agent: { rules: [stockReorder] } });
    site.nowMs = decided2 + 8 * HOUR - 2 * MIN;
    expect(third.agent.run().created).toEqual([]);
    const made = runEveryMinute(third.agent, decided2 + 8 * HOUR + 5 * MIN);
    expect(made).toEqual([{ atMs: decided2 + 8 * HOUR, params: NUT }]);
  });

  it('reads approval_inbox once per process, not at each run (a large inbox)', async () => {
    const { agent, inbox, id } = await nutBelow();
    await inbox.decide(id, 'reject', { user: 'lena', pin: '1234' });
    inbox.close();
    site.nowMs += MIN;
    const { agent: a2, inbox: i2 } = site.agentAndInbox({ agent: { rules: [stockReorder] } });
    void agent;
    const scans = vi.spyOn(i2.table, 'scanRows');
    const ask = vi.spyOn(i2, 'quietEndedSince');
    a2.run(); // reads the table (and withdrawnSince, once per process too)
    const afterFirst = scans.mock.calls.length;
    runEveryMinute(a2, site.nowMs + 30 * MIN);
    expect(ask.mock.calls.length).toBeGreaterThan(25);
    expect(scans.mock.calls.length).toBe(afterFirst);
  });
});
