// stock-reorder and the re-check between runs: a proposal withdrawn between runs because the row
// recovered, and a fall below the point again before the next run.
import { afterEach, describe, expect, it } from 'vitest';
import type { Rule } from './rule.ts';
import { stockReorder } from './rules/index.ts';
import { TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

describe('stock-reorder after a withdrawal between runs', () => {
  it('proposes a row that recovered (its proposal withdrawn between runs) and fell below its point again before the next run', () => {
    site = new TestSite();
    site.stock('ITEM-1', 'A', { on_hand: 3 });
    site.stock('ITEM-2', 'A', { on_hand: 50 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const first = agent.run();
    expect(first.created.map((p) => p.params.item)).toEqual(['ITEM-1']);

    // A return puts ITEM-1 above its point: the check between runs withdraws the proposal.
    site.nowMs += 10_000;
    site.stock('ITEM-1', 'A', { on_hand: 12 });
    site.commit();
    expect(agent.recheckChanged().withdrawn.map((p) => p.params.item)).toEqual(['ITEM-1']);
    // A pick takes it below again, before the next run.
    site.nowMs += 10_000;
    site.stock('ITEM-1', 'A', { on_hand: 2 });
    site.commit();
    agent.recheckChanged();

    site.nowMs += 40_000;
    const next = agent.run();
    expect(next.created.map((p) => [p.params.item, p.params.qty])).toEqual([['ITEM-1', 18]]);
    expect(next.created[0]!.explanation).toBe('ITEM-1 at A: on hand 2, reserved 0, inbound 0 → position 2, below the reorder point 5. Order 18 to bring it to 20.');
    expect(inbox.openProposals().map((p) => p.params.item)).toEqual(['ITEM-1']);
    // Told once: the run after drafts nothing again (not even a duplicate) and the proposal stays.
    site.nowMs += 60_000;
    expect(agent.run()).toMatchObject({ drafts: 0, created: [], duplicates: [], withdrawn: [] });
    expect(inbox.openProposals().map((p) => p.id)).toEqual([next.created[0]!.id]);
  });

  it('keeps the withdrawal for the rule while it fails: its next run that runs through proposes the row', () => {
    site = new TestSite();
    site.stock('ITEM-1', 'A', { on_hand: 3 });
    site.commit();
    let fail = false;
    const flaky: Rule = { ...stockReorder, evaluate: (ctx) => (fail ? (() => { throw new Error('read failed'); })() : stockReorder.evaluate(ctx)) };
    const { agent } = site.agentAndInbox({ agent: { rules: [flaky] } });
    expect(agent.run().created).toHaveLength(1);
    site.nowMs += 10_000;
    site.stock('ITEM-1', 'A', { on_hand: 12 });
    site.commit();
    expect(agent.recheckChanged().withdrawn).toHaveLength(1);
    site.stock('ITEM-1', 'A', { on_hand: 2 });
    site.commit();
    fail = true;
    site.nowMs += 50_000;
    expect(agent.run().ruleErrors).toEqual([{ ruleId: 'stock-reorder', message: 'read failed' }]);
    fail = false;
    site.nowMs += 60_000;
    expect(agent.run().created.map((p) => p.params)).toEqual([{ item: 'ITEM-1', location: 'A', qty: 18, position_before: 2 }]);
  });

  it('proposes a row whose proposal a run withdrew while the rule was held on an older baseline (a quiet draft) and that fell below again', async () => {
    site = new TestSite();
    await site.addUser('lena', 'shift_lead');
    site.stock('Q', 'A', { on_hand: 3 });
    site.stock('X', 'A', { on_hand: 3 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const first = agent.run().created;
    expect(first.map((p) => p.params.item)).toEqual(['Q', 'X']);
    await inbox.decide(first[0]!.id, 'reject', { user: 'lena', pin: '1234' });
    // Q recovers and falls again inside the quiet window of its rejection: its draft is suppressed
    // and the rule stays on the baseline before the fall.
    const step = (item: string, onHand: number) => {
      site.stock(item, 'A', { on_hand: onHand });
      site.commit();
      site.nowMs += 60_000;
      return agent.run();
    };
    step('Q', 12);
    expect(step('Q', 2).suppressed).toHaveLength(1);
    // X recovers: the run withdraws its proposal. Then it falls below again.
    expect(step('X', 12).withdrawn.map((p) => p.params.item)).toEqual(['X']);
    const fell = step('X', 1);
    expect(fell.created.map((p) => p.params)).toEqual([{ item: 'X', location: 'A', qty: 19, position_before: 1 }]);
  });

  it('keeps one withdrawal per situation while the rule stays held: a row going up and down for as long as a quiet draft lasts does not grow the list', async () => {
    site = new TestSite();
    await site.addUser('lena', 'shift_lead');
    site.stock('Q', 'A', { on_hand: 3 });
    site.stock('X', 'A', { on_hand: 3 });
    site.commit();
    const seen: number[] = [];
    const counting: Rule = { ...stockReorder, evaluate: (ctx) => (seen.push(ctx.withdrawnBetweenRuns.length), stockReorder.evaluate(ctx)) };
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [counting] } });
    const first = agent.run().created;
    await inbox.decide(first[0]!.id, 'reject', { user: 'lena', pin: '1234' });
    const set = (item: string, onHand: number) => {
      site.nowMs += 30_000;
      site.stock(item, 'A', { on_hand: onHand });
      site.commit();
    };
    set('Q', 12);
    site.nowMs += 60_000;
    agent.run();
    set('Q', 2);
    site.nowMs += 60_000;
    expect(agent.run().suppressed).toHaveLength(1); // Q: quiet, the rule held on its old baseline
    // X recovers (withdrawn between runs) and falls again (proposed again from the list), twelve times.
    for (let i = 0; i < 12; i++) {
      set('X', 12);
      expect(agent.recheckChanged().withdrawn.map((p) => p.params.item)).toEqual(['X']);
      set('X', 2);
      site.nowMs += 60_000;
      const run = agent.run();
      expect(run.created.map((p) => p.params.item)).toEqual(['X']);
      expect(run.suppressed).toHaveLength(1); // Q still quiet: still held
    }
    // The list the rule is shown names X once, not once per withdrawal.
    expect(seen.at(-1)).toBe(1);
  });

  it('proposes a row whose approval was found stale (it had recovered) and that fell below its point again before the next run', async () => {
    site = new TestSite();
    await site.addUser('lena', 'shift_lead');
    site.stock('ITEM-1', 'A', { on_hand: 3 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const p = agent.run().created[0]!;
    // No check between runs looked (the site's timers off, or the approval came first): the
    // approval's compare-and-set finds the row recovered. The inbox then has the agent run
    // (`reevaluate`), and that run, which saw the row above its point, is the next one's baseline.
    site.nowMs += 10_000;
    site.stock('ITEM-1', 'A', { on_hand: 12 });
    site.commit();
    expect(await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'stale' });
    site.nowMs += 10_000;
    site.stock('ITEM-1', 'A', { on_hand: 1 });
    site.commit();
    site.nowMs += 40_000;
    const next = agent.run();
    expect(next.created.map((x) => [x.params.item, x.params.qty])).toEqual([['ITEM-1', 19]]);
  });

  it('does not propose again a row whose proposal was withdrawn between runs and that stays above its point', () => {
    site = new TestSite();
    site.stock('ITEM-1', 'A', { on_hand: 3 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    expect(agent.run().created).toHaveLength(1);
    site.nowMs += 10_000;
    site.stock('ITEM-1', 'A', { on_hand: 12 });
    site.commit();
    expect(agent.recheckChanged().withdrawn).toHaveLength(1);
    for (let i = 0; i < 2; i++) {
      site.nowMs += 60_000;
      expect(agent.run()).toMatchObject({ created: [], duplicates: [], withdrawn: [] });
    }
    expect(inbox.openProposals()).toEqual([]);
  });
});
