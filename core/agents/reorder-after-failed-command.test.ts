// stock-reorder drafts a row when it crosses its reorder point between two runs. An approved
// replenishment whose command procurement refused (a failed ack: "supplier blocked") leaves the
// row below its point, and the inbox lets the situation come back at once (core/inbox markCommand:
// a failed command is not quiet). But no run saw the row cross again — it was below at the
// baseline too — so v6 never proposed it again: the shelf stayed below its point, with nothing in
// the inbox, until the row rose and fell again.
import { afterEach, expect, it } from 'vitest';
import { stockReorder } from './rules/index.ts';
import { TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

it('proposes a replenishment again when procurement refused the approved one and the row is still below its point', async () => {
  site = new TestSite();
  await site.addUser('lena', 'shift_lead');
  site.stock('NUT', 'A', { on_hand: 20 });
  site.commit();
  const { agent, inbox } = site.agentAndInbox({ agent: { rules: [stockReorder] } });
  agent.run();
  site.stock('NUT', 'A', { on_hand: 3 });
  site.commit();
  site.nowMs += 60_000;
  const p = agent.run().created[0]!;
  expect(p.params).toEqual({ item: 'NUT', location: 'A', qty: 17, position_before: 3 });
  expect(await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'approved' });
  inbox.markCommand(p.id, 'sent');
  site.nowMs += 5_000;
  inbox.markCommand(p.id, 'failed', 'supplier blocked');
  expect(inbox.isQuiet(p.situationKey)).toBe(false);

  site.nowMs += 60_000;
  const again = agent.run().created;
  expect(again.map((x) => x.params)).toEqual([{ item: 'NUT', location: 'A', qty: 17, position_before: 3 }]);
  expect(again[0]!.ruleVersion).toBe('10');
  // Once proposed, not again (its open proposal is the duplicate's).
  site.nowMs += 60_000;
  const next = agent.run();
  expect(next.created).toEqual([]);
  expect(next.duplicates).toEqual([p.situationKey]);
});

it('does not propose it again when the row recovered after the refusal, nor while a new approval is on its way', async () => {
  site = new TestSite();
  await site.addUser('lena', 'shift_lead');
  site.stock('NUT', 'A', { on_hand: 3 });
  site.stock('BOLT', 'A', { on_hand: 2 });
  site.commit();
  const { agent, inbox } = site.agentAndInbox({ agent: { rules: [stockReorder] } });
  const first = agent.run().created;
  const nut = first.find((x) => x.params.item === 'NUT')!;
  const bolt = first.find((x) => x.params.item === 'BOLT')!;
  for (const p of [nut, bolt]) {
    await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1234' });
    inbox.markCommand(p.id, 'sent');
    inbox.markCommand(p.id, 'failed', 'supplier blocked');
  }
  // NUT was counted again and is well stocked; BOLT's refusal is re-proposed, approved, and on its way.
  site.stock('NUT', 'A', { on_hand: 30 });
  site.commit();
  site.nowMs += 60_000;
  const again = agent.run().created;
  expect(again.map((x) => x.params.item)).toEqual(['BOLT']);
  await inbox.decide(again[0]!.id, 'approve', { user: 'lena', pin: '1234' });
  inbox.markCommand(again[0]!.id, 'sent');
  site.nowMs += 60_000;
  const r = agent.run();
  expect(r.created).toEqual([]);
  expect(r.suppressed).toEqual([]);
});

it('proposes it again after a restart too (the inbox keeps its failed commands)', async () => {
  site = new TestSite();
  await site.addUser('lena', 'shift_lead');
  site.stock('NUT', 'A', { on_hand: 3 });
  site.commit();
  const first = site.agentAndInbox({ agent: { rules: [stockReorder] } });
  const p = first.agent.run().created[0]!;
  await first.inbox.decide(p.id, 'approve', { user: 'lena', pin: '1234' });
  first.inbox.markCommand(p.id, 'sent');
  first.inbox.markCommand(p.id, 'failed', 'supplier blocked');
  first.inbox.close();
  site.nowMs += 60_000;
  const { agent } = site.agentAndInbox({ agent: { rules: [stockReorder] } });
  expect(agent.run().created.map((x) => x.params)).toEqual([{ item: 'NUT', location: 'A', qty: 17, position_before: 3 }]);
});
