// A run killed between its tags and its submit (a power cut, SIGKILL): the tables hold its
// `agent-<run id>` tags, the inbox nothing of it. A restarted agent took the newest agent tag as
// the previous run, so the changes that run had read — a stock row fallen below its reorder point
// — were never read again, and the reorder was never proposed.
import { afterEach, expect, it } from 'vitest';
import { Agent, runIdAt } from './agent.ts';
import { agentConfig } from './config.ts';
import { DB, TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

/** What a run killed before its submit leaves: its tags, at each table's latest snapshot, kept as a run that proposes keeps them. */
function killedRun(): string {
  const runId = runIdAt(site.nowMs);
  for (const name of ['work_queue', 'resources', 'stock']) {
    const t = site.catalog.getTable({ database: DB, table: name });
    const latest = t.latestSnapshot();
    if (latest) t.createTag(`agent-${runId}`, latest.id, agentConfig().evidenceRetentionMs);
  }
  return runId;
}

it('an agent restarted after a run killed before its submit reads the changes that run read: the reorder is proposed', () => {
  site = new TestSite();
  site.stock('BOLT', 'A', { on_hand: 20 });
  site.commit();
  const { inbox, agent } = site.agentAndInbox();
  agent.run();
  site.stock('BOLT', 'A', { on_hand: 2 });
  site.commit();
  site.nowMs += 60_000;
  const killed = killedRun();
  site.nowMs += 60_000;
  const restarted = new Agent({ catalog: site.catalog, database: DB, inbox, clock: site.clock, onWarning: () => undefined });
  const r = restarted.run();
  expect(r.created.map((p) => p.params)).toEqual([{ item: 'BOLT', location: 'A', qty: 18, position_before: 2 }]);
  expect(r.created[0]!.explanation).toMatch(/\(was 20\)/);
  // Its run id still comes after the killed run's (ids only increase).
  expect(r.runId > killed).toBe(true);
  // A run that did submit is the previous run after a restart, as before: nothing twice.
  site.nowMs += 60_000;
  expect(new Agent({ catalog: site.catalog, database: DB, inbox, clock: site.clock, onWarning: () => undefined }).run().created).toEqual([]);
});

it('a restart after a run that proposed nothing reads from that run, as before', () => {
  site = new TestSite();
  site.stock('BOLT', 'A', { on_hand: 20 });
  site.commit();
  const { inbox, agent } = site.agentAndInbox();
  agent.run();
  site.stock('BOLT', 'A', { on_hand: 2 });
  site.commit();
  site.nowMs += 60_000;
  expect(agent.run().created).toHaveLength(1);
  site.nowMs += 60_000;
  expect(agent.run().created).toEqual([]); // a quiet run: its tags are the baseline's retention
  site.nowMs += 60_000;
  const r = new Agent({ catalog: site.catalog, database: DB, inbox, clock: site.clock, onWarning: () => undefined }).run();
  expect(r.created).toEqual([]);
  expect(r.duplicates).toEqual([]);
});
