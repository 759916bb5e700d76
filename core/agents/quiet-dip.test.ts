// stock-reorder proposes a row when it falls below its reorder point since the run before. A row
// that fell while its situation was quiet (decided lately: the inbox suppresses it for
// resuggestAfterDecisionMs) was drafted once, suppressed, and then never drafted again — the run
// that saw it became the next one's baseline — so it stayed below its point, unproposed, for good.
// The rule now reads from the same baseline while a draft of it is quiet, and the row is proposed
// once the quiet ends; runs meanwhile keep their tags only as a quiet run does (no drafts to cite).
import { afterEach, expect, it } from 'vitest';
import { agentConfig } from './config.ts';
import { TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

const HOUR = 3600_000;

it('proposes a reorder for a dip that came while the row was quiet, once the quiet ends', async () => {
  site = new TestSite();
  await site.addUser('lena', 'shift_lead');
  site.stock('NUT', 'A', { on_hand: 20 });
  site.commit();
  const { agent, inbox } = site.agentAndInbox({ inbox: { resuggestAfterDecisionMs: 8 * HOUR } });
  agent.run();
  site.stock('NUT', 'A', { on_hand: 3 });
  site.commit();
  site.nowMs += 60_000;
  const first = agent.run().created;
  expect(first.map((p) => p.params)).toEqual([{ item: 'NUT', location: 'A', qty: 17, position_before: 3 }]);
  await inbox.decide(first[0]!.id, 'reject', { user: 'lena', pin: '1234', comment: 'counted wrong' });
  // The count was put right, then picks took it below the point again within the quiet window.
  site.nowMs += HOUR;
  site.stock('NUT', 'A', { on_hand: 15 });
  site.commit();
  site.nowMs += 60_000;
  expect(agent.run().created).toEqual([]);
  site.stock('NUT', 'A', { on_hand: 2 });
  site.commit();
  site.nowMs += 60_000;
  const quiet = agent.run();
  expect(quiet.created).toEqual([]);
  expect(quiet.suppressed).toEqual([first[0]!.situationKey]);
  // A run of quiet drafts keeps its tags as a run that proposes nothing does.
  expect(quiet.tagRetentionMs).toBe(agentConfig().baselineRetentionMs);
  // Runs go on; nothing changes the row.
  for (let i = 0; i < 3; i++) {
    site.nowMs += HOUR;
    expect(agent.run().created).toEqual([]);
  }
  site.nowMs += 5 * HOUR; // past the quiet window of the rejection
  const after = agent.run().created;
  expect(after.map((p) => p.params)).toEqual([{ item: 'NUT', location: 'A', qty: 18, position_before: 2 }]);
  // And once proposed, not again.
  site.nowMs += 60_000;
  expect(agent.run().created).toEqual([]);
});
