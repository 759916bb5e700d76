// Open proposals of a rule the agent no longer runs (a rule file taken out of config.json
// `agent.ruleFiles`, a rule renamed). A site's agent (AgentOptions.withdrawNotInstalled) withdraws
// them at its next run, saying why, and their run tags are no longer renewed; without the option
// (a replay, or a test, running a subset of the rules) they stay as they are. A new version of the
// rule (same id) is the same rule.
import { afterEach, describe, expect, it } from 'vitest';
import { tagTimeLeftMs } from '../lsm/index.ts';
import { translations } from './messages.ts';
import { DEFAULT_RULES, stockReorder } from './rules/index.ts';
import { DB, TestSite } from './test-support.ts';

const DAY = 86_400_000;
const others = DEFAULT_RULES.filter((r) => r.id !== 'stock-reorder');

let site: TestSite;
afterEach(() => site?.close());

/** A stock-reorder proposal made by an agent running every rule, then that agent and inbox closed. */
function proposed(): { id: string; tag: string } {
  site.stock('ITEM-1', 'A', { on_hand: 3 });
  site.commit();
  const first = site.agentAndInbox();
  const run = first.agent.run();
  const p = run.created.find((x) => x.ruleId === 'stock-reorder')!;
  expect(p).toBeDefined();
  first.inbox.close();
  return { id: p.id, tag: `agent-${run.runId}` };
}

const stockTagLeft = (tag: string) => tagTimeLeftMs(site.catalog.getTable({ database: DB, table: 'stock' }).tags.get(tag), site.nowMs)!;

describe('a rule no longer installed', () => {
  it('a site agent (withdrawNotInstalled) withdraws its open proposals at the next run, saying why in en/nb/de; their tags are no longer renewed', () => {
    site = new TestSite();
    const { id, tag } = proposed();
    site.nowMs += 60_000;
    const warnings: string[] = [];
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: others, withdrawNotInstalled: true, onWarning: (m) => void warnings.push(m) } });
    const run = agent.run();
    expect(run.withdrawn.map((p) => p.id)).toEqual([id]);
    const p = inbox.get(id)!;
    expect(p.status).toBe('withdrawn');
    expect(p.withdrawnReason).toBe(`rule stock-reorder is not installed any more (run ${run.runId})`);
    expect(translations(p, agent.messages)).toMatchObject({
      nb: { withdrawnReason: `regel stock-reorder er ikke installert lenger (kjøring ${run.runId})` },
      de: { withdrawnReason: `Regel stock-reorder ist nicht mehr installiert (Lauf ${run.runId})` },
    });
    expect(warnings).toContain(`run ${run.runId} withdrew 1 open proposal of rule stock-reorder, which is not installed any more (not among the rules this site runs)`);
    // Said once: the next run finds nothing of it open.
    site.nowMs += 60_000;
    expect(agent.run().withdrawn).toEqual([]);
    // Its evidence tag runs out as any withdrawn proposal's: past half its retention, not renewed.
    site.nowMs += 4 * DAY;
    agent.run();
    expect(stockTagLeft(tag)).toBeLessThan(3.5 * DAY);
  });

  it('an agent without the option (a replay or test running a subset) leaves them open, their tags kept', () => {
    site = new TestSite();
    const { id, tag } = proposed();
    site.nowMs += 60_000;
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: others } });
    expect(agent.run().withdrawn).toEqual([]);
    expect(inbox.get(id)!.status).toBe('open');
    site.nowMs += 4 * DAY;
    agent.run();
    expect(inbox.get(id)!.status).toBe('open');
    expect(stockTagLeft(tag)).toBeGreaterThan(6 * DAY);
  });

  it('a new version of the rule (same id) is the rule installed: its proposals are re-checked, not withdrawn', () => {
    site = new TestSite();
    const { id } = proposed();
    site.nowMs += 60_000;
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [...others, { ...stockReorder, version: `${stockReorder.version}-site` }], withdrawNotInstalled: true } });
    const run = agent.run();
    expect(run.withdrawn).toEqual([]);
    expect(inbox.get(id)!.status).toBe('open');
    // Re-checked by the new version: withdrawn once the row no longer needs an order, for that reason.
    site.nowMs += 60_000;
    site.stock('ITEM-1', 'A', { on_hand: 30 });
    site.commit();
    const later = agent.run();
    expect(later.withdrawn.map((p) => p.id)).toEqual([id]);
    expect(inbox.get(id)!.withdrawnReason).not.toContain('not installed');
  });
});
