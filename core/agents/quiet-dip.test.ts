// stock-reorder proposes a row when it falls below its reorder point since the run before. A row
// that fell while its situation was quiet (decided lately: the inbox suppresses it for
// resuggestAfterDecisionMs) was drafted once, suppressed, and then never drafted again — the run
// that saw it became the next one's baseline — so it stayed below its point, unproposed, for good.
// The rule now reads from the same baseline while a draft of it is quiet, and the row is proposed
// once the quiet ends; runs meanwhile keep their tags only as a quiet run does (no drafts to cite).
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HeldBaselines, Inbox } from '../inbox/index.ts';
import { Table } from '../lsm/index.ts';
import { newestRunTag, runIdAt, type Agent } from './agent.ts';
import { agentConfig } from './config.ts';
import { HOLDS, type Rule } from './rule.ts';
import { stockReorder } from './rules/index.ts';
import { DB, TestSite } from './test-support.ts';

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

// The hold was in memory only: a site restarted inside the quiet window took the newest run tag
// as every rule's baseline, the row no longer crossed its point, and it stayed below it,
// unproposed, for good. The inbox now keeps each held baseline (and a failed rule's) with its
// commits, and a restarted agent reads from it.
describe('the hold across a restart', () => {
  /** A site restarted: the inbox closed and opened again, a new agent on the same data. */
  function restart(inbox: Inbox): { agent: Agent; inbox: Inbox } {
    inbox.close();
    return site.agentAndInbox({ inbox: { resuggestAfterDecisionMs: 8 * HOUR } });
  }

  /** A reorder rejected at T0 + 1 min, then a dip back below the point inside the quiet window. */
  async function dipWhileQuiet(): Promise<{ inbox: Inbox; agent: Agent; key: string }> {
    site = new TestSite();
    await site.addUser('lena', 'shift_lead');
    site.stock('NUT', 'A', { on_hand: 20 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ inbox: { resuggestAfterDecisionMs: 8 * HOUR } });
    agent.run();
    site.stock('NUT', 'A', { on_hand: 3 });
    site.commit();
    site.nowMs += 60_000;
    const [p] = agent.run().created;
    await inbox.decide(p!.id, 'reject', { user: 'lena', pin: '1234', comment: 'counted wrong' });
    site.nowMs += HOUR;
    site.stock('NUT', 'A', { on_hand: 15 });
    site.commit();
    site.nowMs += 60_000;
    agent.run();
    site.stock('NUT', 'A', { on_hand: 2 });
    site.commit();
    site.nowMs += 60_000;
    expect(agent.run().suppressed).toEqual([p!.situationKey]);
    return { inbox, agent, key: p!.situationKey };
  }

  it('a restart inside the quiet window keeps the hold: the dip is proposed once the quiet ends', async () => {
    let { inbox, agent, key } = await dipWhileQuiet();
    site.nowMs += HOUR;
    expect(agent.run().suppressed).toEqual([key]); // a run after the hold began, so the newest tag is past the dip
    ({ inbox, agent } = restart(inbox));
    site.nowMs += HOUR;
    expect(agent.run().suppressed).toEqual([key]); // still quiet, still drafted
    ({ inbox, agent } = restart(inbox)); // a second restart, with the hold read back once already
    site.nowMs += 6 * HOUR; // past the quiet window of the rejection
    expect(agent.run().created.map((p) => p.params)).toEqual([{ item: 'NUT', location: 'A', qty: 18, position_before: 2 }]);
    // Once proposed, the hold is let go, also across a restart: not proposed again.
    site.nowMs += 60_000;
    expect(agent.run().created).toEqual([]);
    ({ inbox, agent } = restart(inbox));
    site.nowMs += 60_000;
    const after = agent.run();
    expect(after.created).toEqual([]);
    expect(after.duplicates).toEqual([]);
  });

  it('a run killed between its tags and its submit, the one that began the hold, leaves the hold for the restart', async () => {
    site = new TestSite();
    await site.addUser('lena', 'shift_lead');
    site.stock('NUT', 'A', { on_hand: 20 });
    site.commit();
    const first = site.agentAndInbox({ inbox: { resuggestAfterDecisionMs: 8 * HOUR } });
    first.agent.run();
    site.stock('NUT', 'A', { on_hand: 3 });
    site.commit();
    site.nowMs += 60_000;
    const [p] = first.agent.run().created;
    await first.inbox.decide(p!.id, 'reject', { user: 'lena', pin: '1234', comment: 'counted wrong' });
    site.nowMs += HOUR;
    site.stock('NUT', 'A', { on_hand: 15 });
    site.commit();
    site.nowMs += 60_000;
    first.agent.run();
    site.stock('NUT', 'A', { on_hand: 2 });
    site.commit();
    site.nowMs += 60_000;
    // The process dies in the submit of the run that drafts the quiet dip: its tags stay, and
    // nothing after them is written (the agent's clean-up of a failed submit cannot delete them).
    const submit = vi.spyOn(first.inbox, 'submit').mockImplementationOnce(() => {
      throw new Error('killed');
    });
    const deleteTag = vi.spyOn(Table.prototype, 'deleteTag').mockImplementation(() => {
      throw new Error('killed');
    });
    expect(() => first.agent.run()).toThrow('killed');
    submit.mockRestore();
    deleteTag.mockRestore();
    first.inbox.close();
    const stock = site.catalog.getTable({ database: DB, table: 'stock' });
    const killed = newestRunTag(stock.listTags().map((t) => t.name))!;
    expect(killed).toBe(`agent-${runIdAt(site.nowMs)}`);
    expect(stock.tags.get(killed).retainedMillis).toBe(agentConfig().baselineRetentionMs); // the restart's baseline: not passed over
    const { agent } = site.agentAndInbox({ inbox: { resuggestAfterDecisionMs: 8 * HOUR } });
    site.nowMs += HOUR;
    expect(agent.run().suppressed).toEqual([p!.situationKey]);
    site.nowMs += 7 * HOUR;
    expect(agent.run().created.map((x) => x.params)).toEqual([{ item: 'NUT', location: 'A', qty: 18, position_before: 2 }]);
  });

  it('a run killed between its tags and its submit, the one that proposes the held dip, leaves the hold for the restart', async () => {
    const { inbox, agent } = await dipWhileQuiet();
    site.nowMs += 7 * HOUR; // past the quiet window: this run proposes the dip
    vi.spyOn(inbox, 'submit').mockImplementationOnce(() => {
      throw new Error('killed');
    });
    const deleteTag = vi.spyOn(Table.prototype, 'deleteTag').mockImplementation(() => {
      throw new Error('killed');
    });
    expect(() => agent.run()).toThrow('killed');
    deleteTag.mockRestore();
    const restarted = restart(inbox);
    site.nowMs += 60_000;
    expect(restarted.agent.run().created.map((p) => p.params)).toEqual([{ item: 'NUT', location: 'A', qty: 18, position_before: 2 }]);
  });

  it('a rule that failed before a restart reads, after it, from the baseline it had then', () => {
    site = new TestSite();
    site.stock('BOLT', 'A', { on_hand: 20 });
    site.commit();
    let fail = false;
    const flaky: Rule = { ...stockReorder, evaluate: (ctx) => (fail ? (() => { throw new Error('read failed'); })() : stockReorder.evaluate(ctx)) };
    const first = site.agentAndInbox({ agent: { rules: [flaky] } });
    first.agent.run();
    site.stock('BOLT', 'A', { on_hand: 2 });
    site.commit();
    site.nowMs += 60_000;
    fail = true;
    expect(first.agent.run().ruleErrors).toEqual([{ ruleId: 'stock-reorder', message: 'read failed' }]);
    fail = false;
    first.inbox.close();
    const { agent } = site.agentAndInbox({ agent: { rules: [flaky] } });
    site.nowMs += 60_000;
    expect(agent.run().created.map((p) => p.params)).toEqual([{ item: 'BOLT', location: 'A', qty: 18, position_before: 2 }]);
  });

  // The record is read back as JSON: a rule's entry of another type (a string, an array, a tag
  // that is not a string) made every run of the restarted agent throw (a string's characters were
  // taken for table names). Such an entry is dropped with a warning; the others still hold.
  it('a held baseline of the wrong type is dropped with a warning, and the other rules keep theirs', () => {
    site = new TestSite();
    site.stock('BOLT', 'A', { on_hand: 20 });
    site.commit();
    let fail = false;
    const flaky: Rule = { ...stockReorder, evaluate: (ctx) => (fail ? (() => { throw new Error('read failed'); })() : stockReorder.evaluate(ctx)) };
    const others: Rule[] = ['as-string', 'as-array', 'tag-number'].map((id) => ({ id, version: '1', description: id, evaluate: () => [], recheck: () => HOLDS, effectSeen: () => false }));
    const rules = [flaky, ...others];
    const first = site.agentAndInbox({ agent: { rules } });
    first.agent.run();
    site.stock('BOLT', 'A', { on_hand: 2 });
    site.commit();
    site.nowMs += 60_000;
    fail = true;
    first.agent.run();
    fail = false;
    const bad = { 'as-string': 'agent-20261130-080000-000', 'as-array': ['agent-20261130-080000-000'], 'tag-number': { stock: 7 } };
    first.inbox.holdBaselines({ ...first.inbox.heldBaselines(), ...(bad as unknown as HeldBaselines) });
    first.inbox.close();
    const warnings: string[] = [];
    const { agent, inbox } = site.agentAndInbox({ agent: { rules, onWarning: (m) => warnings.push(m) } });
    site.nowMs += 60_000;
    const r = agent.run();
    expect(r.ruleErrors).toEqual([]);
    expect(r.created.map((p) => [p.ruleId, p.params])).toEqual([['stock-reorder', { item: 'BOLT', location: 'A', qty: 18, position_before: 2 }]]);
    expect(warnings.filter((w) => w.includes('held baseline')).sort()).toEqual(
      ['as-array', 'as-string', 'tag-number'].map((id) => expect.stringContaining(`rule ${id} `)),
    );
    // The run settled: the record holds what it holds (nothing), the bad entries gone with it.
    expect(inbox.heldBaselines()).toEqual({});
  });
});

// A held baseline names the tables its rule read, site tables too. A table the site no longer has
// (taken out of config.json `tables` and dropped) made every run of the restarted agent throw:
// the hold's tag was looked up on a table the catalog no longer holds. The hold on that table is
// dropped with a warning; the rule keeps its hold on the others.
it('a held baseline naming a table no longer in the catalog drops that table with a warning, and the run goes on', () => {
  site = new TestSite();
  const spec = { fields: [{ name: 'door_id', type: 'STRING NOT NULL' }, { name: 'state', type: 'STRING' }], primaryKeys: ['door_id'], options: { bucket: '1' } };
  const doors = site.catalog.createTable({ database: DB, table: 'yard_doors' }, spec).newWriter({ commitUser: 'test-ingest' });
  doors.writeRecord({ door_id: 'D1', state: 'up' });
  doors.commit();
  doors.close();
  site.stock('BOLT', 'A', { on_hand: 20 });
  site.commit();
  let fail = false;
  const flaky: Rule = { ...stockReorder, reads: ['yard_doors'], evaluate: (ctx) => (fail ? (() => { throw new Error('read failed'); })() : stockReorder.evaluate(ctx)) };
  const first = site.agentAndInbox({ agent: { rules: [flaky], siteTables: ['yard_doors'] } });
  first.agent.run();
  site.stock('BOLT', 'A', { on_hand: 2 });
  site.commit();
  site.nowMs += 60_000;
  fail = true;
  first.agent.run();
  fail = false;
  expect(Object.keys(first.inbox.heldBaselines()['stock-reorder']!)).toContain('yard_doors');
  first.inbox.close();
  // The site's own table goes, and with it the rule's reading of it.
  site.catalog.dropTable({ database: DB, table: 'yard_doors' });
  const warnings: string[] = [];
  const { agent, inbox } = site.agentAndInbox({ agent: { rules: [{ ...flaky, reads: undefined }], onWarning: (m) => warnings.push(m) } });
  site.nowMs += 60_000;
  const r = agent.run();
  expect(r.ruleErrors).toEqual([]);
  expect(r.created.map((p) => p.params)).toEqual([{ item: 'BOLT', location: 'A', qty: 18, position_before: 2 }]);
  expect(warnings).toEqual([expect.stringContaining("rule stock-reorder's held baseline names table yard_doors")]);
  expect(inbox.heldBaselines()).toEqual({});
});
