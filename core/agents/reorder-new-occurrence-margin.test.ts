// stock-reorder v10's new occurrence after an applied order (Rule.newOccurrence) took a row at
// its reorder point for a recovered one. Procurement's ack marks the order applied before its
// inbound shows (the snapshot the approval checked expired); a recount that puts the row at the
// point and a pick back below it — a swing v9's margin treats as the same dip (an open proposal is
// withdrawn only from the point plus withdrawMargin) — proposed a second order for the dip the
// first order, still on its way, was for. A swing up past the margin is a recovery, as before.
import { afterEach, describe, expect, it } from 'vitest';
import { WriteBack } from '../inbox/index.ts';
import { stockReorder } from './rules/index.ts';
import { DB, TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

const MIN = 60_000;

/** NUT ordered at 3 (point 5, order-up-to 20), applied on procurement's ack before its inbound shows. */
async function orderedOnAck() {
  site = new TestSite({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'num-sorted-run.compaction-trigger': '100', 'num-sorted-run.stop-trigger': '200' });
  await site.addUser('lena', 'shift_lead');
  site.stock('NUT', 'A', { on_hand: 20 });
  site.commit();
  const { agent, inbox } = site.agentAndInbox({ agent: { rules: [stockReorder] } });
  agent.run();
  site.stock('NUT', 'A', { on_hand: 3 });
  site.commit();
  site.nowMs += MIN;
  const p = agent.run().created[0]!;
  expect(p.params).toEqual({ item: 'NUT', location: 'A', qty: 17, position_before: 3 });
  expect(await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'approved' });
  const wb = new WriteBack({ inbox, publish: async () => undefined, onAck: () => undefined, effectSeen: (x) => agent.effectSeen(x), clock: site.clock, monotonic: site.clock, onWarning: () => undefined });
  for (let i = 0; i < 500 && inbox.get(p.id)!.command!.state !== 'sent'; i++) await new Promise((r) => setTimeout(r, 5));
  const checked = inbox.get(p.id)!.decision!.snapshots.checked.stock!;
  wb.handleAck('tilstand/s1/acks/procurement', Buffer.from(JSON.stringify({ command_id: p.id, module: 'procurement', ok: true, ts_ms: site.nowMs })));
  for (let i = 0; i < 3; i++) {
    site.stock(`ITEM-${i}`, 'A', { on_hand: 50 });
    site.commit();
  }
  expect(site.catalog.getTable({ database: DB, table: 'stock' }).snapshots.earliestId()).toBeGreaterThan(checked);
  wb.poll();
  expect(inbox.get(p.id)!.command!.state).toBe('applied');
  return { agent, p };
}

describe('stock-reorder: a new occurrence after an order applied on the ack, before its inbound shows', () => {
  it('a recount at the point and a pick back below it is the same dip: no second order', async () => {
    const { agent, p } = await orderedOnAck();
    site.stock('NUT', 'A', { on_hand: 5 });
    site.commit();
    site.nowMs += MIN;
    expect(agent.run().created).toEqual([]);
    site.stock('NUT', 'A', { on_hand: 4 });
    site.commit();
    site.nowMs += MIN;
    const run = agent.run();
    expect(run.created).toEqual([]);
    expect(run.suppressed).toEqual([p.situationKey]);
  });

  it('a rise past the point plus the margin (6.5) and a fall below the point is a new dip: proposed', async () => {
    const { agent } = await orderedOnAck();
    site.stock('NUT', 'A', { on_hand: 7 });
    site.commit();
    site.nowMs += MIN;
    expect(agent.run().created).toEqual([]);
    site.stock('NUT', 'A', { on_hand: 4 });
    site.commit();
    site.nowMs += MIN;
    expect(agent.run().created.map((x) => x.params)).toEqual([{ item: 'NUT', location: 'A', qty: 16, position_before: 4 }]);
  });
});
