// stock-reorder and a stock row whose on_hand inventory has not sent yet. `stock` is a
// partial-update table: commerce's reservation (or procurement's inbound) can make the row before
// inventory has ever counted the item. v8 read the missing on_hand as 0, so such a row's position
// was −reserved and it was proposed for a reorder of orderUpTo + reserved — for stock nobody had
// counted. v9 does not evaluate a row whose on_hand is not known (the run's notes say so) and
// treats inventory's first count as the row's first state. A missing reserved or inbound still
// counts as 0: commerce and procurement send rows only for items with reservations or open orders,
// so a missing one is no reservation, no order.
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_AGENT_CONFIG } from './config.ts';
import { stockReorder } from './rules/index.ts';
import { TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

const reorders = (ps: readonly { ruleId: string; params: Record<string, unknown> }[]) => ps.filter((p) => p.ruleId === 'stock-reorder').map((p) => p.params);

describe('stock-reorder: a row without on_hand', () => {
  it('is not proposed while on_hand is unknown, says so in the run, and is evaluated on the first count', () => {
    site = new TestSite();
    site.stock('BOLT', 'A', { reserved: 4 }); // commerce first: inventory has not counted BOLT
    site.stock('NUT', 'A', { on_hand: 2 }); // counted, and below its point: reserved/inbound unknown count as 0
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const first = agent.run();
    expect(reorders(first.created)).toEqual([{ item: 'NUT', location: 'A', qty: 18, position_before: 2 }]);
    expect(first.notes).toEqual([{ ruleId: 'stock-reorder', message: 'not evaluated, on hand not known yet (no count from inventory): BOLT at A' }]);

    // More reservations: still no count, still nothing proposed.
    site.nowMs += 60_000;
    site.stock('BOLT', 'A', { reserved: 6 });
    site.commit();
    const second = agent.run();
    expect(reorders(second.created)).toEqual([]);
    expect(second.notes).toHaveLength(1);

    // Inventory's first count: 8 on hand, 6 reserved → position 2, below 5. Its baseline had no
    // count (v8 saw −6 → 2, "stayed below", and never proposed it).
    site.nowMs += 60_000;
    site.stock('BOLT', 'A', { on_hand: 8 });
    site.commit();
    const third = agent.run();
    expect(reorders(third.created)).toEqual([{ item: 'BOLT', location: 'A', qty: 18, position_before: 2 }]);
    expect(third.created.find((p) => p.params.item === 'BOLT')!.explanation).toBe('BOLT at A: on hand 8, reserved 6, inbound 0 → position 2, below the reorder point 5. Order 18 to bring it to 20.');
    expect(third.notes).toEqual([]);
    expect(inbox.openProposals().map((p) => p.params.item).sort()).toEqual(['BOLT', 'NUT']);
  });

  it('a first count above the point proposes nothing', () => {
    site = new TestSite();
    site.stock('BOLT', 'A', { reserved: 4, inbound: 0 });
    site.commit();
    const { agent } = site.agentAndInbox();
    expect(reorders(agent.run().created)).toEqual([]);
    site.nowMs += 60_000;
    site.stock('BOLT', 'A', { on_hand: 40 });
    site.commit();
    expect(reorders(agent.run().created)).toEqual([]);
  });

  it("withdraws an open proposal whose row's on_hand is not known", () => {
    const ctx = { tables: { stock: { get: () => ({ item: 'BOLT', location: 'A', on_hand: null, reserved: 4, inbound: null }) } }, config: DEFAULT_AGENT_CONFIG } as never;
    const r = stockReorder.recheck(ctx, { params: { item: 'BOLT', location: 'A' } } as never);
    expect(r.holds).toBe(false);
  });
});
