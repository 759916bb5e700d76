// A rule file whose rule reads a table of the site's own (core/agents `Rule.reads`): the example
// docs/examples/rules/door-down.mts on a demo-config site (yard_doors defined, bound, and fed by
// the yard module's events through the broker). A door down → a notice citing the yard_doors row,
// its run tag on yard_doors; approved through the site API, its checked tag is on yard_doors too;
// `tilstand agent run` with no site running runs it as well; and `replay export`/`run` replays it
// (the fixture keeps the live run's tag on yard_doors). A rule file reading a table the site does
// not have is refused by `config check` and the start, naming agent.ruleFiles[0].
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportFixture } from '../replay/export.ts';
import type { FixtureManifest, ReplayProposal } from '../replay/fixture.ts';
import { runReplay } from '../replay/replay.ts';
import type { ProposalView } from './api.ts';
import { runMain } from './cli/test-support.ts';
import { readConfig, writeConfig } from './config.ts';
import { DEMO_CONTRACTS, DEMO_EXTRA_MODULES, DEMO_YARD_TABLE, demoConfig } from './demo/site.ts';
import { readModuleSecrets } from './demo/run.ts';
import { initDataDir } from './init.ts';
import { DEMO_ADMIN, Site } from './site.ts';
import { session } from './test-support/session.ts';

const FAST = { N: 1024, r: 8, p: 1 };
/** The example, from its place in the repository (an absolute path in agent.ruleFiles). */
const EXAMPLE = resolve(import.meta.dirname, '../../docs/examples/rules/door-down.mts');
const SINCE = '2026-12-05T06:30:00.000';
/** SINCE as the rule gives it in a proposal: the instant with its zone, so the floor shows it in local time. */
const SINCE_Z = `${SINCE}Z`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-site-table-rules-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Publishes door changes as the demo's yard module does (its broker user; seq from 1). */
async function publishDoors(url: string, password: string, events: readonly { seq: number; door: string; state: string; since: string }[]): Promise<void> {
  const client = await mqtt.connectAsync(url, { username: 'yard', password, clientId: 'module-demo-yard', protocolVersion: 4, reconnectPeriod: 0, clean: false });
  try {
    for (const e of events) {
      const after = { door_id: e.door, state: e.state, trailer_id: null, since: e.since };
      const event = { op: 'u', before: null, after, source: { module: 'yard', stream: 'doors', seq: e.seq }, ts_ms: Date.now(), contract: { name: 'yard.doors', version: 1 } };
      await client.publishAsync('tilstand/demo/events/yard/doors', JSON.stringify(event), { qos: 1 });
    }
  } finally {
    await client.endAsync();
  }
}

/** Commits until yard_doors holds `rows` rows (bounded: 400 tries, 20 s). */
async function untilDoors(site: Site, rows: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (let i = 0; i < 400 && Date.now() < deadline; i++) {
    site.ingestor.commitAll();
    const t = site.catalog.getTable({ database: 'site_demo', table: DEMO_YARD_TABLE });
    if (t.latestSnapshot() && t.scanRows().length >= rows) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${DEMO_YARD_TABLE} did not reach ${rows} rows`);
}

describe('a rule file that reads a site table (docs/examples/rules/door-down.mts)', () => {
  let data: string;
  let site: Site | undefined;
  let proposalId = '';
  let runId = '';
  /** After the site stopped, before the offline run: the fixture's cut. */
  let cutMs = 0;

  beforeAll(async () => {
    data = join(dir, 'yard');
    await initDataDir({ data, site: 'demo', scrypt: FAST, config: (c) => ({ ...demoConfig(c), agent: { ...demoConfig(c).agent, ruleFiles: [EXAMPLE] } }), admin: DEMO_ADMIN, modules: DEMO_EXTRA_MODULES, contracts: DEMO_CONTRACTS });
  }, 30_000);

  afterAll(async () => {
    await site?.stop();
  });

  it('config check takes it on a site that defines yard_doors', async () => {
    const ok = await runMain(['config', 'check', '--data', data]);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toContain(`rule file ${EXAMPLE}: door-down@3, sha256 `);
  }, 30_000);

  it('a door down: a notice citing its yard_doors row, the run tag on yard_doors; approved, the checked tag is on yard_doors', async () => {
    // The demo's modules are not run: the yard module's events are the ones published here.
    site = await Site.start({ data, mqttPort: 0, httpPort: 0, agentTimer: false, ui: false });
    const password = readModuleSecrets(join(data, 'secrets', 'modules.json')).modules.yard!.password;
    await publishDoors(site.mqttUrl, password, [
      { seq: 1, door: 'D-01', state: 'free', since: SINCE },
      { seq: 2, door: 'D-02', state: 'down', since: SINCE },
    ]);
    await untilDoors(site, 2);
    const run = site.runAgent();
    expect(run.ruleErrors).toEqual([]);
    runId = run.runId;
    const doors = site.catalog.getTable({ database: 'site_demo', table: DEMO_YARD_TABLE });
    const snap = doors.latestSnapshot()!.id;
    expect(run.snapshots[DEMO_YARD_TABLE]).toBe(snap);
    expect(doors.tags.get(`agent-${run.runId}`).snapshot.id).toBe(snap);

    const s = session();
    await site.service.call('signIn', { user: DEMO_ADMIN.name, secret: DEMO_ADMIN.pin }, s);
    const open = ((await site.service.call('listProposals', { status: ['open'] }, s)) as ProposalView[]).filter((p) => p.ruleId === 'door-down');
    expect(open.map((p) => p.params)).toEqual([{ door_id: 'D-02', since: SINCE_Z }]);
    const p = open[0]!;
    proposalId = p.id;
    expect([p.module, p.explanation, p.riskReason]).toEqual([null, `Dock door D-02 has been down since ${SINCE_Z}: no trailer can be docked there.`, 'a notice: nothing is sent to a module']);
    expect(p.translations).toEqual({
      nb: { explanation: `Port D-02 har vært ute av drift siden ${SINCE_Z}: ingen tilhenger kan legge til der.`, riskReason: 'et varsel: ingenting sendes til en modul' },
      de: { explanation: `Tor D-02 ist seit ${SINCE_Z} außer Betrieb: dort kann kein Auflieger andocken.`, riskReason: 'ein Hinweis: nichts wird an ein Modul gesendet' },
    });
    const stored = site.decisions!.inbox.get(p.id)!;
    expect(stored.evidence).toEqual([{ table: DEMO_YARD_TABLE, snapshotId: snap, tag: `agent-${run.runId}`, rows: [{ key: { door_id: 'D-02' }, values: { door_id: 'D-02', state: 'down', trailer_id: null, since: SINCE, yard_seq: 2 } }] }]);

    // Another door changes before the approval: the re-check reads yard_doors at that snapshot.
    await publishDoors(site.mqttUrl, password, [{ seq: 3, door: 'D-03', state: 'occupied', since: SINCE }]);
    await untilDoors(site, 3);
    const latest = doors.latestSnapshot()!.id;
    const decided = await site.service.call('decide', { id: p.id, decision: 'approve' }, s);
    expect(decided.outcome).toBe('approved');
    expect(site.decisions!.inbox.get(p.id)!.decision!.snapshots.checked[DEMO_YARD_TABLE]).toBe(latest);
    expect(doors.tags.get(`checked-${p.id}`).snapshot.id).toBe(latest);
    expect(doors.tags.get(`decision-${p.id}`).snapshot.id).toBe(snap);
    // A second door goes down; no run sees it while the site runs.
    await publishDoors(site.mqttUrl, password, [{ seq: 4, door: 'D-04', state: 'down', since: SINCE }]);
    await untilDoors(site, 4);
    await site.stop();
    site = undefined;
    await new Promise((r) => setTimeout(r, 20));
    cutMs = Date.now();
    await new Promise((r) => setTimeout(r, 20));
  }, 60_000);

  it('with no site running, `tilstand agent run` runs it too (the site tables given to the offline agent)', async () => {
    const r = await runMain(['agent', 'run', '--data', data]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/yard_doors=\d+/);
    const open = await runMain(['proposals', '--data', data, '--status', 'open', '--json']);
    expect((JSON.parse(open.out) as ProposalView[]).filter((p) => p.ruleId === 'door-down').map((p) => p.params)).toEqual([{ door_id: 'D-04', since: SINCE_Z }]);
  }, 60_000);

  it('replay export keeps the live run\'s tag on yard_doors; the replay runs the rule on the fixture\'s yard_doors', async () => {
    const fixture = join(dir, 'fixture');
    // Cut before the offline run: the replay's period holds that run, which it replays.
    await exportFixture({ data, tag: 'yard', atMs: cutMs, untilMs: Date.now(), out: fixture });
    const m = JSON.parse(readFileSync(join(fixture, 'fixture.json'), 'utf8')) as FixtureManifest;
    // The newest run at or before the cut (the live run; the offline one came after it), as on a
    // state table with a snapshot (none has one here: no job, resource or stock row came in); its
    // files travel with the fixture.
    expect(m.tables[DEMO_YARD_TABLE]!.baselineAgentTag).toBe(`agent-${runId}`);
    expect(readdirSync(join(fixture, 'warehouse', 'site_demo.db', DEMO_YARD_TABLE, 'tag'))).toContain(`tag-agent-${runId}`);
    await runReplay({ fixture, out: join(dir, 'run'), runFixtureRuleFiles: true });
    const replayed = (JSON.parse(readFileSync(join(dir, 'run', 'proposals.json'), 'utf8')) as ReplayProposal[]).filter((p) => p.ruleId === 'door-down');
    // As the offline run did after the cut: D-04 proposed; D-02, approved a moment before, is
    // suppressed (resuggestAfterDecisionMs).
    expect(replayed.map((p) => p.params)).toEqual([{ door_id: 'D-04', since: SINCE_Z }]);
    const runs = JSON.parse(readFileSync(join(dir, 'run', 'agent-runs.json'), 'utf8')) as { created: number; suppressed: number; ruleErrors: unknown[] }[];
    expect(runs.map((r) => [r.created, r.suppressed, r.ruleErrors])).toEqual([[1, 1, []]]);
    expect(proposalId).not.toBe('');
  }, 120_000);
});

describe('a rule file that reads a table the site does not have', () => {
  it('config check and start refuse it, naming agent.ruleFiles[0] and the table', async () => {
    const data = join(dir, 'no-yard');
    await initDataDir({ data, site: 'plain', scrypt: FAST, config: (c) => ({ ...c, agent: { ...c.agent, ruleFiles: ['rules/door-down.mts'] } }) });
    mkdirSync(join(data, 'rules'));
    writeFileSync(join(data, 'rules', 'door-down.mts'), readFileSync(EXAMPLE));
    const why = "config agent.ruleFiles[0]: rule file rules/door-down.mts: rule door-down reads table 'yard_doors', which this site does not have (its own tables: none; config.json `tables` entries with columns)";
    const r = await runMain(['config', 'check', '--data', data]);
    expect([r.code, r.err]).toEqual([2, `tilstand: ${why}\n`]);
    const e = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false }).then(
      async (s) => (await s.stop(), new Error('started')),
      (err: Error) => err,
    );
    expect(e.message).toBe(why);
    // With the table defined (and nothing else changed), the same file is taken.
    const c = readConfig(data);
    writeConfig(data, { ...c, tables: [...c.tables, demoConfig(c).tables.find((t) => t.table === DEMO_YARD_TABLE)!] });
    const ok = await runMain(['config', 'check', '--data', data]);
    expect(ok.code, ok.err).toBe(0);
  }, 60_000);
});
