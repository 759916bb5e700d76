// Stock quantities in a DECIMAL column (a site that counts kilograms or metres: `tilstand table
// alter … --set-type on_hand:DECIMAL(10, 2)`): their JSON form is text ("12.50"), and the rules
// must read them as the quantities they are, not as missing (0).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DB, TestSite } from './test-support.ts';

let site: TestSite;
beforeEach(() => {
  site = new TestSite();
  site.writers.stock.close();
  const stock = site.catalog.getTable({ database: DB, table: 'stock' });
  stock.alter(['on_hand', 'reserved', 'inbound'].map((name) => ({ kind: 'updateColumnType' as const, name, type: 'DECIMAL(10, 2)' })));
  site.writers.stock = stock.newWriter({ commitUser: 'test-ingest' });
});
afterEach(() => site.close());

/** A stock row with quantities in hundredths (DECIMAL(10, 2) holds them unscaled). */
function stock(item: string, location: string, v: { on_hand: number; reserved: number; inbound: number }): void {
  site.writers.stock.writeRecord({
    item,
    location,
    on_hand: BigInt(Math.round(v.on_hand * 100)),
    inventory_seq: 1n,
    reserved: BigInt(Math.round(v.reserved * 100)),
    commerce_seq: 1n,
    inbound: BigInt(Math.round(v.inbound * 100)),
    procurement_seq: 1n,
  });
}

describe('stock quantities in DECIMAL columns', () => {
  it('reorders by the decimal position, to the exact quantity, and not a row that is well stocked', () => {
    stock('BOLT', 'A', { on_hand: 12.5, reserved: 0, inbound: 0 }); // 12.5: above the point 5
    stock('NUT', 'A', { on_hand: 0.3, reserved: 0.1, inbound: 0 }); // 0.2: order 19.8
    stock('WASHER', 'A', { on_hand: 10.1, reserved: 5.1, inbound: 0 }); // exactly 5: not below 5
    site.commit();
    const { agent } = site.agentAndInbox();
    const re = agent.run().created.filter((p) => p.ruleId === 'stock-reorder');
    expect(re.map((p) => p.params)).toEqual([{ item: 'NUT', location: 'A', qty: 19.8, position_before: 0.2 }]);
    expect(re[0]!.explanation).toMatch(/→ position 0\.2, below the reorder point 5\. Order 19\.8 to bring it to 20\./);
  });

  it('releases a blocked job on decimal stock that covers it', () => {
    site.job({ job_id: 'J-1', status: 'blocked', blocked_reason: 'material short: BOLT', material_item: 'BOLT', material_qty: 10 });
    stock('BOLT', 'A', { on_hand: 12.5, reserved: 0.25, inbound: 0 }); // 12.25 available
    site.commit();
    const { agent } = site.agentAndInbox();
    const re = agent.run().created.filter((p) => p.ruleId === 'release-blocked-job');
    expect(re.map((p) => p.params.job_id)).toEqual(['J-1']);
    expect(re[0]!.explanation).toMatch(/but 12\.25 BOLT are now available/);
  });

  it('adds the locations of an item up exactly: 0.3 + 0.35 + 0.35 covers a job that needs 1', () => {
    site.job({ job_id: 'J-1', status: 'blocked', blocked_reason: 'material short: PIN', material_item: 'PIN', material_qty: 1 });
    // In doubles 0.3 + 0.35 + 0.35 is 0.9999999999999999, short of 1.
    stock('PIN', 'A', { on_hand: 0.3, reserved: 0, inbound: 0 });
    stock('PIN', 'B', { on_hand: 0.35, reserved: 0, inbound: 0 });
    stock('PIN', 'C', { on_hand: 0.35, reserved: 0, inbound: 0 });
    site.commit();
    const { agent } = site.agentAndInbox();
    const re = agent.run().created.filter((p) => p.ruleId === 'release-blocked-job');
    expect(re.map((p) => p.params.job_id)).toEqual(['J-1']);
    expect(re[0]!.explanation).toMatch(/but 1 PIN are now available \(needs 1\)/);
    expect(re[0]!.riskReason).toMatch(/^the job uses 1 of 1 available PIN; only 0 can be taken/);
  });

  it("sees procurement's order among its versions when inbound is a decimal", async () => {
    await site.addUser('lena', 'shift_lead');
    stock('NUT', 'A', { on_hand: 0, reserved: 0, inbound: 3 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const p = agent.run().created.find((x) => x.ruleId === 'stock-reorder')!;
    expect(p.params).toMatchObject({ qty: 17, position_before: 3 });
    // The 3 on order arrive and 2 are picked before the approval (position 1, still below 5).
    stock('NUT', 'A', { on_hand: 3, reserved: 0, inbound: 0 });
    site.commit();
    stock('NUT', 'A', { on_hand: 1, reserved: 0, inbound: 0 });
    site.commit();
    expect(await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'approved' });
    // After the approval: a delivery of 0 is nothing; procurement opens the order (inbound 0 → 17),
    // then a delivery of all 17 and a pick of 17 in the next commits hide it from the row now.
    site.writers.stock.writeRecord({ item: 'NUT', location: 'A', inbound: 1700n, procurement_seq: 2n });
    site.commit();
    site.writers.stock.writeRecord({ item: 'NUT', location: 'A', on_hand: 1800n, inventory_seq: 2n, inbound: 0n, procurement_seq: 3n });
    site.commit();
    site.writers.stock.writeRecord({ item: 'NUT', location: 'A', on_hand: 100n, inventory_seq: 3n });
    site.commit();
    expect(agent.effectSeen(inbox.get(p.id)!)).toBe(true);
  });
});
