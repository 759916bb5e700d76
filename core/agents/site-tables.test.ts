// Site tables in a run: a rule reads tables of the site's own (`Rule.reads`); the Agent refuses one
// the site does not have, gives the declared ones in `ctx.siteTables` at one snapshot per run,
// cites and tags them as it does the state tables, re-checks an approval on their latest snapshot
// (and the inbox tags it `checked-<id>`), re-checks between runs the proposals citing rows a commit
// to them changed, drops their tags with a run whose submit failed, keeps
// an open proposal's tag on them, and gives their previous run's tag to a change-reading rule.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tagTimeLeftMs, type TableWriter } from '../lsm/index.ts';
import { Agent, siteTablesRead } from './agent.ts';
import { ruleProblem } from './rule-files.ts';
import { AgentError } from './errors.ts';
import { msg } from './messages.ts';
import type { Rule, RuleContext } from './rule.ts';
import { DB, TestSite } from './test-support.ts';

const DAY = 24 * 3600_000;
const DOORS = 'yard_doors';

let site: TestSite;
let doors: TableWriter;
afterEach(() => {
  doors?.close();
  site?.close();
});

/** A TestSite with a table of the site's own, as the demo's yard system feeds it. */
function withDoors(extraOptions: Record<string, string> = {}): TestSite {
  site = new TestSite(extraOptions);
  const t = site.catalog.createTable(
    { database: DB, table: DOORS },
    {
      fields: [
        { name: 'door_id', type: 'STRING NOT NULL' },
        { name: 'state', type: 'STRING' },
        { name: 'yard_seq', type: 'BIGINT' },
      ],
      primaryKeys: ['door_id'],
      options: { bucket: '1', 'merge-engine': 'deduplicate', 'sequence.field': 'yard_seq', ...extraOptions },
    },
  );
  doors = t.newWriter({ commitUser: 'test-ingest' });
  return site;
}

let seq = 0;
function door(id: string, state: string): void {
  doors.writeRecord({ door_id: id, state, yard_seq: BigInt(++seq) });
  doors.commit();
}

/** A notice per door that is down; its recheck holds while the door is still down. */
const doorDown: Rule = {
  id: 'door-down',
  version: '1',
  description: 'a notice for a dock door that is down',
  reads: [DOORS],
  messages: {
    'door-down.explanation': { en: 'Door {door} is down.', nb: 'Port {door} er nede.', de: 'Tor {door} ist außer Betrieb.' },
    'door-down.risk': { en: 'a notice', nb: 'et varsel', de: 'ein Hinweis' },
    'door-down.up': { en: 'door {door} is {state}', nb: 'port {door} er {state}', de: 'Tor {door} ist {state}' },
  },
  evaluate(ctx) {
    return ctx.siteTables[DOORS]!.scan()
      .filter((r) => r.state === 'down')
      .map((r) => ({
        action: 'door_down',
        module: null,
        params: { door: r.door_id as string },
        keyParams: ['door'],
        risk: 'low' as const,
        riskReason: msg('door-down.risk'),
        explanation: msg('door-down.explanation', { door: r.door_id as string }),
        evidence: [{ table: DOORS, rows: [r] }],
      }));
  },
  recheck(ctx, p) {
    const r = ctx.siteTables[DOORS]!.get({ door_id: p.params.door! });
    return r?.state === 'down' ? { holds: true } : { holds: false, reason: msg('door-down.up', { door: p.params.door!, state: (r?.state as string | undefined) ?? 'gone' }) };
  },
  effectSeen: () => false,
};

describe('a rule that reads a site table', () => {
  it('is refused when the Agent is made on a site without that table, naming the rule and the table', () => {
    withDoors();
    const { inbox } = site.agentAndInbox();
    const make = (rules: Rule[], siteTables?: string[]) => () => new Agent({ catalog: site.catalog, database: DB, inbox, rules, ...(siteTables ? { siteTables } : {}) });
    expect(make([doorDown])).toThrow(AgentError);
    expect(make([doorDown])).toThrow("rule door-down reads table 'yard_doors', which this site does not have (its own tables: none; config.json `tables` entries with columns)");
    expect(make([doorDown], ['gate_log'])).toThrow("rule door-down reads table 'yard_doors', which this site does not have (its own tables: gate_log;");
    expect(make([{ ...doorDown, reads: ['stock'] }], [DOORS])).toThrow("rule door-down reads 'stock' as a site table; it is a state table");
    expect(make([doorDown], [DOORS])).not.toThrow();
    expect(siteTablesRead([doorDown, { ...doorDown, id: 'other', reads: [DOORS, 'gate_log'] }], ['gate_log', DOORS])).toEqual([DOORS, 'gate_log']);
    // A rule file's rule: `reads` must be a list of names (whether the site has them is the site's to say).
    expect(ruleProblem({ ...doorDown, reads: 'yard_doors' })).toBe('rule door-down: reads: expected an array of names of the site\'s own tables (config.json `tables` entries with columns), got "yard_doors"');
    expect(ruleProblem(doorDown)).toBeUndefined();
  });

  it('sees the declared tables at one snapshot; the proposal cites its rows, and the run tags that snapshot as it tags the state tables', () => {
    withDoors();
    site.job({ job_id: 'J-1' });
    site.commit();
    door('D1', 'free');
    door('D2', 'down');
    const seen: RuleContext[] = [];
    const watcher: Rule = { ...doorDown, evaluate: (ctx) => (seen.push(ctx), doorDown.evaluate(ctx)) };
    const { agent } = site.agentAndInbox({ agent: { rules: [watcher], siteTables: ['gate_log', DOORS] } });
    const run = agent.run();
    // Exactly the tables the rules in force read, not every table of the site's own.
    expect(Object.keys(seen[0]!.siteTables)).toEqual([DOORS]);
    const doorsTable = site.catalog.getTable({ database: DB, table: DOORS });
    const snap = doorsTable.latestSnapshot()!.id;
    expect(run.snapshots).toMatchObject({ work_queue: expect.any(Number), [DOORS]: snap });
    expect(run.tags[DOORS]).toBe(`agent-${run.runId}`);
    expect(run.created).toHaveLength(1);
    const p = run.created[0]!;
    expect([p.ruleId, p.module, p.params, p.explanation]).toEqual(['door-down', null, { door: 'D2' }, 'Door D2 is down.']);
    // Only the table the rule read is cited (not the state tables it did not touch).
    expect(p.evidence).toEqual([{ table: DOORS, snapshotId: snap, tag: `agent-${run.runId}`, rows: [{ key: { door_id: 'D2' }, values: { door_id: 'D2', state: 'down', yard_seq: 2 } }] }]);
    expect(doorsTable.tags.get(`agent-${run.runId}`).snapshot.id).toBe(snap);
    expect(tagTimeLeftMs(doorsTable.tags.get(`agent-${run.runId}`), site.nowMs)).toBe(agent.config.evidenceRetentionMs);
    // The state tables are tagged as before.
    expect(site.catalog.getTable({ database: DB, table: 'work_queue' }).tags.exists(`agent-${run.runId}`)).toBe(true);
  });

  it('a rule that does not declare reads sees no site table; evidence citing one it cannot read is its error', () => {
    withDoors();
    door('D2', 'down');
    const seen: RuleContext[] = [];
    const blind: Rule = { ...doorDown, reads: undefined, evaluate: (ctx) => (seen.push(ctx), []) };
    const citing: Rule = {
      ...doorDown,
      id: 'citing',
      reads: undefined,
      messages: { 'citing.x': { en: 'x', nb: 'x', de: 'x' } },
      evaluate: () => [{ action: 'door_down', module: null, params: { door: 'D2' }, keyParams: ['door'], risk: 'low', riskReason: msg('citing.x'), explanation: msg('citing.x'), evidence: [{ table: DOORS, rows: [{ door_id: 'D2', state: 'down' }] }] }],
    };
    const { agent } = site.agentAndInbox({ agent: { rules: [blind, citing], siteTables: [DOORS] } });
    const run = agent.run();
    expect(seen[0]!.siteTables).toEqual({});
    expect(run.snapshots).not.toHaveProperty(DOORS);
    expect(site.catalog.getTable({ database: DB, table: DOORS }).listTags()).toEqual([]);
    expect(run.ruleErrors).toEqual([{ ruleId: 'citing', message: "rule citing: evidence cites table 'yard_doors', which is neither a state table (work_queue, resources, stock) nor a site table a rule reads (Rule.reads)" }]);
  });

  it('an approval re-checks the site table at its latest snapshot: the checked tag is made on it; a door up again makes it stale', async () => {
    withDoors();
    await site.addUser('lena', 'shift_lead');
    door('D2', 'down');
    door('D3', 'down');
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [doorDown], siteTables: [DOORS] } });
    const run = agent.run();
    const [d2, d3] = ['D2', 'D3'].map((d) => run.created.find((p) => p.params.door === d)!);
    const doorsTable = site.catalog.getTable({ database: DB, table: DOORS });
    door('D1', 'occupied'); // a commit after the run: the approval reads this snapshot
    const latest = doorsTable.latestSnapshot()!.id;
    const approved = await inbox.decide(d2!.id, 'approve', { user: 'lena', pin: '1234' });
    expect(approved.outcome).toBe('approved');
    expect(inbox.get(d2!.id)!.decision!.snapshots.checked).toMatchObject({ work_queue: null, [DOORS]: latest });
    expect(doorsTable.tags.get(`checked-${d2!.id}`).snapshot.id).toBe(latest);
    expect(doorsTable.tags.get(`decision-${d2!.id}`).snapshot.id).toBe(run.snapshots[DOORS]);
    // D3 repaired after the run: its approval is found stale by the rule, on the latest door row.
    door('D3', 'free');
    const stale = await inbox.decide(d3!.id, 'approve', { user: 'lena', pin: '1234' });
    expect(stale.outcome).toBe('stale');
    expect(inbox.get(d3!.id)!.decision!.reason).toBe('door D3 is free');
    expect(doorsTable.tags.get(`checked-${d3!.id}`).snapshot.id).toBe(doorsTable.latestSnapshot()!.id);
  });

  it('between runs, a commit to the site table re-checks the proposals citing its rows: a door up again withdraws its notice; the inbox age counts the commit', () => {
    withDoors();
    door('D2', 'down');
    door('D3', 'down');
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [doorDown], siteTables: [DOORS] } });
    const run = agent.run();
    expect(run.created.map((p) => p.params.door).sort()).toEqual(['D2', 'D3']);
    expect(agent.oldestUncheckedCommitMs()).toBeNull();
    door('D3', 'free');
    // Seen, not yet checked: the inbox's age counts from the commit.
    expect(agent.oldestUncheckedCommitMs()).not.toBeNull();
    const r = agent.recheckChanged();
    expect(r.changed).toEqual([DOORS]);
    expect(r.checked).toBe(1); // only D3's notice cites the door that changed
    expect(r.withdrawn.map((p) => p.params.door)).toEqual(['D3']);
    expect(inbox.openProposals().map((p) => p.params.door)).toEqual(['D2']);
    expect(agent.oldestUncheckedCommitMs()).toBeNull();
  });

  it('a run whose submit fails deletes its tag on the site table too', () => {
    withDoors();
    door('D2', 'down');
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [doorDown], siteTables: [DOORS] } });
    const submit = vi.spyOn(inbox, 'submit').mockImplementationOnce(() => {
      throw new Error('disk full');
    });
    expect(() => agent.run()).toThrow('disk full');
    submit.mockRestore();
    expect(site.catalog.getTable({ database: DB, table: DOORS }).listTags().map((t) => t.name)).toEqual([]);
  });

  it('keeps the run tag an open proposal cites on the site table past evidenceRetentionMs, as on a state table', () => {
    withDoors({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'snapshot.time-retained': '1 ms' });
    door('D2', 'down');
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [doorDown], siteTables: [DOORS] } });
    const first = agent.run();
    const p = first.created[0]!;
    const tag = `agent-${first.runId}`;
    const doorsTable = site.catalog.getTable({ database: DB, table: DOORS });
    const atRun = doorsTable.scanRows({ tag });
    for (let i = 0; i < 40; i++) {
      site.nowMs += DAY / 4;
      door(`D${100 + i}`, 'free');
      doors.expire();
      agent.run();
    }
    expect(inbox.get(p.id)!.status).toBe('open');
    expect(doorsTable.tags.exists(tag)).toBe(true);
    expect(doorsTable.scanRows({ tag })).toEqual(atRun);
    // Renewed at 3.75 and 7.5 days, as the state tables' cited tags (agent.test.ts): 4.5 days left at 10.
    expect(tagTimeLeftMs(doorsTable.tags.get(tag), site.nowMs)).toBe(4.5 * DAY);
  });

  it('gives a change-reading rule the previous run\'s tag on the site table, also after a restart', () => {
    withDoors();
    door('D1', 'free');
    const changes: string[][] = [];
    const downSince: Rule = {
      ...doorDown,
      id: 'down-since',
      messages: { 'down-since.x': { en: 'x', nb: 'x', de: 'x' } },
      evaluate(ctx) {
        const t = ctx.siteTables[DOORS]!;
        changes.push([String(ctx.previousTags?.[DOORS] ?? null), ...t.changesSince(ctx.previousTags?.[DOORS] ?? null).map((c) => `${c.kind} ${c.row.door_id} ${c.row.state}`)]);
        return [];
      },
    };
    const { agent, inbox } = site.agentAndInbox({ agent: { rules: [downSince], siteTables: [DOORS] } });
    const first = agent.run();
    site.nowMs += 60_000;
    door('D1', 'down');
    agent.run();
    site.nowMs += 60_000;
    door('D2', 'down');
    const restarted = new Agent({ catalog: site.catalog, database: DB, inbox, rules: [downSince], siteTables: [DOORS], clock: site.clock, onWarning: () => undefined });
    restarted.run();
    expect(changes).toEqual([
      ['null', '+I D1 free'],
      [`agent-${first.runId}`, '-U D1 free', '+U D1 down'],
      [expect.stringMatching(/^agent-/), '+I D2 down'],
    ]);
  });
});
