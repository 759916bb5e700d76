// The example rule file docs/examples/rules/door-down.mts (the demo runs it) on a site table as
// the demo's yard system fills it: one outage is one situation. Keyed by the door alone (its
// version 2), a door that went down again within the inbox's quiet window after a decision
// (`resuggestAfterDecisionMs`, 8 h) got no notice: the inbox suppressed it as the situation decided.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TableWriter } from '../lsm/index.ts';
import { loadRuleFiles } from './rule-files.ts';
import { DB, TestSite, T0 } from './test-support.ts';

const EXAMPLE_DIR = join(import.meta.dirname, '..', '..', 'docs', 'examples');
const DOORS = 'yard_doors';
const MIN = 60_000;

let site: TestSite;
let doors: TableWriter;
afterEach(() => {
  doors?.close();
  site?.close();
});

/** A TestSite with `yard_doors` as the demo defines it (core/site/demo/site.ts). */
function withDoors(): TestSite {
  site = new TestSite();
  const t = site.catalog.createTable(
    { database: DB, table: DOORS },
    {
      fields: [
        { name: 'door_id', type: 'STRING NOT NULL' },
        { name: 'state', type: 'STRING' },
        { name: 'trailer_id', type: 'STRING' },
        { name: 'since', type: 'TIMESTAMP(3)' },
        { name: 'yard_seq', type: 'BIGINT' },
      ],
      primaryKeys: ['door_id'],
      options: { bucket: '1', 'merge-engine': 'deduplicate', 'sequence.field': 'yard_seq' },
    },
  );
  doors = t.newWriter({ commitUser: 'test-ingest' });
  return site;
}

let seq = 0;
/** The door takes `state` now, as the yard system reports it (`since`: when it took it). */
function door(id: string, state: string): void {
  doors.writeRecord({ door_id: id, state, trailer_id: null, since: site.nowMs * 1000, yard_seq: BigInt(++seq) });
  doors.commit();
}

async function agentWithExample() {
  const { rules } = await loadRuleFiles(['rules/door-down.mts'], EXAMPLE_DIR);
  return site.agentAndInbox({ agent: { rules, siteTables: [DOORS] } });
}

describe('the example door-down rule file', () => {
  it('gives a door that goes down again after a decided notice a notice of its own, within the quiet window', async () => {
    withDoors();
    await site.addUser('lena', 'shift_lead');
    door('D-02', 'down');
    const { agent, inbox } = await agentWithExample();
    const first = agent.run().created.filter((p) => p.ruleId === 'door-down');
    expect(first.map((p) => p.params)).toEqual([{ door_id: 'D-02', since: new Date(T0).toISOString() }]);
    expect(await inbox.decide(first[0]!.id, 'approve', { user: 'lena', pin: '1234' })).toMatchObject({ outcome: 'approved' });
    // The same outage is not asked about again while the decision keeps it quiet.
    site.nowMs += MIN;
    expect(agent.run().created).toEqual([]);
    // Repaired, then down again an hour later: well inside the 8 h after the approval.
    site.nowMs += MIN;
    door('D-02', 'free');
    site.nowMs += 60 * MIN;
    door('D-02', 'down');
    site.nowMs += MIN;
    const again = agent.run();
    expect(again.suppressed).toEqual([]);
    expect(again.created.map((p) => p.params)).toEqual([{ door_id: 'D-02', since: new Date(T0 + 62 * MIN).toISOString() }]);
  });

  it('withdraws a notice whose door went down again between two looks: the new outage has its own', async () => {
    withDoors();
    door('D-02', 'down');
    const { agent, inbox } = await agentWithExample();
    const [p] = agent.run().created;
    // Repaired and down again before the next run saw it up.
    site.nowMs += 10_000;
    door('D-02', 'free');
    site.nowMs += 10_000;
    door('D-02', 'down');
    const since = new Date(T0 + 20_000).toISOString();
    expect(agent.recheck(p!)).toMatchObject({ holds: false, reason: `door D-02 has been down again since ${since}` });
    const r = agent.run();
    expect(inbox.get(p!.id)!.status).toBe('withdrawn');
    expect(r.created.map((x) => x.params)).toEqual([{ door_id: 'D-02', since }]);
  });
});
