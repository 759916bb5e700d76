// stock-reorder and a level that moves around its reorder point. v8 withdrew an open reorder the
// moment the position reached the point and proposed a new one the moment it fell below again: a
// row swinging between 4 and 5 (point 5) was withdrawn and proposed on every swing — a new
// proposal, a new place in the inbox, the shift lead's deferral or comment on the old one lost.
// v9 keeps an open proposal until the position is at or above the point by a tenth of the band
// between the point and the order-up-to level (5 → 20: 1.5, so it is withdrawn from 6.5 up); a
// row is still proposed only below the point.
import { afterEach, describe, expect, it } from 'vitest';
import { WriteBack } from '../inbox/index.ts';
import { TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

describe('stock-reorder near its reorder point', () => {
  it('keeps one proposal while the level swings between 4 and 6, and withdraws it at 7', () => {
    site = new TestSite();
    site.stock('BOLT', 'A', { on_hand: 4 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const first = agent.run();
    expect(first.created.map((p) => p.params)).toEqual([{ item: 'BOLT', location: 'A', qty: 16, position_before: 4 }]);
    const id = first.created[0]!.id;
    for (const level of [5, 4, 5, 6, 4, 5]) {
      site.nowMs += 20_000;
      site.stock('BOLT', 'A', { on_hand: level });
      site.commit();
      expect(agent.recheckChanged().withdrawn).toEqual([]);
      site.nowMs += 40_000;
      const r = agent.run();
      expect({ level, created: r.created.length, withdrawn: r.withdrawn.length }).toEqual({ level, created: 0, withdrawn: 0 });
      expect(inbox.openProposals().map((p) => p.id)).toEqual([id]);
    }
    site.nowMs += 20_000;
    site.stock('BOLT', 'A', { on_hand: 7 });
    site.commit();
    expect(agent.recheckChanged().withdrawn.map((p) => [p.id, p.withdrawnReason])).toEqual([[id, expect.stringMatching(/^BOLT at A is at 7 now, not below the reorder point 5/)]]);
    // Below the point again: a new proposal.
    site.nowMs += 40_000;
    site.stock('BOLT', 'A', { on_hand: 4 });
    site.commit();
    expect(agent.run().created.map((p) => p.params.qty)).toEqual([16]);
  });

  it('scales the margin with the band: a narrow band (5 → 6) keeps it at 5 and withdraws it at 6; a row at its point is not proposed', () => {
    site = new TestSite();
    site.stock('BOLT', 'A', { on_hand: 5 });
    site.stock('NUT', 'A', { on_hand: 4 });
    site.commit();
    const { agent } = site.agentAndInbox({ agent: { config: { reorderByItem: { NUT: { reorderPoint: 5, orderUpTo: 6 } } } } });
    expect(agent.run().created.map((p) => [p.params.item, p.params.qty])).toEqual([['NUT', 2]]);
    site.nowMs += 60_000;
    site.stock('NUT', 'A', { on_hand: 5 });
    site.commit();
    expect(agent.run()).toMatchObject({ created: [], withdrawn: [] });
    site.nowMs += 60_000;
    site.stock('NUT', 'A', { on_hand: 6 });
    site.commit();
    expect(agent.run().withdrawn.map((p) => p.params.item)).toEqual(['NUT']);
  });

  // Approved while the position is within the margin (4 when proposed, 6 now): the shift lead
  // approves the order shown — 16, "to bring it to 20" from position 4 — and that is what is sent,
  // with the position it was computed from. Not recomputed at the approval (14): that would send a
  // number the lead never saw; the row ends 2 above orderUpTo (DESIGN.md, the rule's row).
  it('an approval within the margin sends the quantity shown, with the position it was computed from', async () => {
    site = new TestSite();
    await site.addUser('lena', 'shift_lead');
    site.stock('BOLT', 'A', { on_hand: 4 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const p = agent.run().created[0]!;
    expect(p.explanation).toBe('BOLT at A: on hand 4, reserved 0, inbound 0 → position 4, below the reorder point 5. Order 16 to bring it to 20.');
    site.nowMs += 20_000;
    site.stock('BOLT', 'A', { on_hand: 6 });
    site.commit();
    expect(agent.recheckChanged().withdrawn).toEqual([]);
    const sent: Record<string, unknown>[] = [];
    const wb = new WriteBack({ inbox, publish: async (_t, payload) => void sent.push(JSON.parse(String(payload))), onAck: () => () => undefined, effectSeen: (x) => agent.effectSeen(x), clock: site.clock, monotonic: site.clock, onWarning: () => undefined });
    wb.start();
    try {
      expect(await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'approved' });
      for (let i = 0; i < 200 && sent.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    } finally {
      wb.stop();
    }
    expect(sent).toEqual([expect.objectContaining({ action: 'replenish', item: 'BOLT', location: 'A', qty: 16, position_before: 4 })]);
  });
});
