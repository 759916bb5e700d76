// stock-reorder and a restart between a withdrawal between runs and the next run. The check
// between runs withdrew a proposal (the row recovered), the row fell below its point again, and the
// site restarted before the next run: the agent kept the withdrawals in memory only, so the new
// process's first run compared with a baseline that showed the row below already, saw no
// crossing, and the row stayed below its point, unproposed, until it next rose and fell.
import { afterEach, expect, it } from 'vitest';
import { TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

it('a row whose proposal was withdrawn between runs and that fell below again before a restart is proposed by the first run after it', () => {
  site = new TestSite();
  site.stock('ITEM-1', 'A', { on_hand: 3 });
  site.stock('ITEM-2', 'A', { on_hand: 50 });
  site.commit();
  const first = site.agentAndInbox();
  expect(first.agent.run().created.map((p) => p.params.item)).toEqual(['ITEM-1']);
  site.nowMs += 10_000;
  site.stock('ITEM-1', 'A', { on_hand: 12 });
  site.commit();
  expect(first.agent.recheckChanged().withdrawn.map((p) => p.params.item)).toEqual(['ITEM-1']);
  site.nowMs += 10_000;
  site.stock('ITEM-1', 'A', { on_hand: 2 });
  site.commit();
  // The site stops (a restart for an update) before the next run.
  first.agent.stop();
  first.inbox.close();

  site.nowMs += 40_000;
  const { agent, inbox } = site.agentAndInbox();
  const next = agent.run();
  expect(next.created.map((p) => [p.params.item, p.params.qty])).toEqual([['ITEM-1', 18]]);
  expect(inbox.openProposals().map((p) => p.params.item)).toEqual(['ITEM-1']);
  // Told once: the run after drafts nothing again.
  site.nowMs += 60_000;
  expect(agent.run()).toMatchObject({ drafts: 0, created: [], duplicates: [], withdrawn: [] });
});

it('a withdrawal the baseline run already saw is not proposed again after a restart (the row is above its point)', () => {
  site = new TestSite();
  site.stock('ITEM-1', 'A', { on_hand: 3 });
  site.commit();
  const first = site.agentAndInbox();
  expect(first.agent.run().created).toHaveLength(1);
  site.nowMs += 10_000;
  site.stock('ITEM-1', 'A', { on_hand: 12 });
  site.commit();
  expect(first.agent.recheckChanged().withdrawn).toHaveLength(1);
  site.nowMs += 50_000;
  expect(first.agent.run()).toMatchObject({ created: [] });
  first.agent.stop();
  first.inbox.close();
  site.nowMs += 60_000;
  const { agent } = site.agentAndInbox();
  expect(agent.run()).toMatchObject({ drafts: 0, created: [] });
});
