// The full loop on real parts: module events over a real broker (EmbeddedBroker on 127.0.0.1,
// port 0) → Ingestor (journal, contracts, bindings, seed tables) → agent run → proposal →
// approval by a shift lead (compare-and-set with freshen = ingestor.commitAll) → command on the
// broker → the operations module (ModuleClient) obeys by publishing events → Ingestor → state
// changes → the proposal's command is `applied`. Plus the stale case through the real path.
import Database from 'better-sqlite3';
import mqtt, { type MqttClient } from 'mqtt';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../../core/agents/index.ts';
import { Inbox, UserStore, WriteBack, evidenceReport, formatEvidence } from '../../core/inbox/index.ts';
import { EmbeddedBroker, type Principal } from '../../core/ingest/broker.ts';
import { ContractRegistry } from '../../core/ingest/contracts.ts';
import { Ingestor } from '../../core/ingest/ingestor.ts';
import { Journal } from '../../core/ingest/journal.ts';
import { ModuleClient } from '../../core/ingest/module-client/index.ts';
import { SEED_BINDINGS } from '../../core/ingest/seed-bindings.ts';
import { OPERATIONS_JOBS, OPERATIONS_RESOURCES, SEED_CONTRACTS } from '../../core/ingest/seed-contracts.ts';
import { SEED_TABLES } from '../../core/ingest/seed-tables.ts';
import { Catalog } from '../../core/lsm/index.ts';

const SITE = 's1';
const DB = 'site_s1';
let dir: string;
let journal: Journal;
let ingestor: Ingestor;
let broker: EmbeddedBroker;
let siteDb: Database.Database;
let internal: MqttClient;
let ops: ModuleClient;
let inbox: Inbox;
let agent: Agent;
let writeBack: WriteBack;
let catalog: Catalog;

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

type Job = { job_id: string; status: string; blocked_reason: string | null; capability: string; material_item: string | null; material_qty: number | null; priority: number; due_at: string | null; assigned_resource: string | null };
type Res = { resource_id: string; kind: string; capability: string; state: string; since: string };
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 23);

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-loop-'));
  journal = Journal.open(dir);
  const contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
  catalog = new Catalog(join(dir, 'warehouse'));
  ingestor = Ingestor.open({ site: SITE, catalog, database: DB, journal, contracts, bindings: [...SEED_BINDINGS], tables: [...SEED_TABLES], budgets: [], onWarning: () => undefined });
  broker = new EmbeddedBroker({
    site: SITE,
    credentials: { verify: async (u): Promise<Principal> => (u === 'tilstand' ? { name: u, kind: 'tilstand' } : { name: u, kind: 'module', module: u }) },
    onEvent: (topic, payload) => ingestor.accept(topic, payload),
    host: '127.0.0.1',
    port: 0,
  });
  const port = await broker.listen();
  const url = `mqtt://127.0.0.1:${port}`;

  internal = mqtt.connect(url, { username: 'tilstand', password: 'x', clientId: 'tilstand-s1-site', reconnectPeriod: 0 });
  await new Promise<void>((resolve, reject) => {
    internal.once('connect', () => resolve());
    internal.once('error', reject);
  });
  await internal.subscribeAsync(`tilstand/${SITE}/acks/+`, { qos: 1 });

  siteDb = new Database(join(dir, 'site.db'));
  const users = new UserStore(siteDb, { scrypt: { N: 1 << 10, r: 8, p: 1 } });
  await users.add({ name: 'lena', role: 'shift_lead', pin: '1111' });

  // The wiring the site does (core/agents/DESIGN.md, "Wiring").
  inbox = Inbox.open({
    catalog,
    database: DB,
    users,
    freshen: () => ingestor.commitAll(),
    recheck: (p) => agent.recheck(p),
    reevaluate: () => void agent.run(),
    onWarning: () => undefined,
  });
  agent = new Agent({ catalog, database: DB, inbox, onWarning: () => undefined });
  writeBack = new WriteBack({
    inbox,
    publish: async (topic, payload) => void (await internal.publishAsync(topic, payload, { qos: 1 })),
    onAck: (h) => {
      internal.on('message', h);
      return () => internal.off('message', h);
    },
    effectSeen: (p) => agent.effectSeen(p),
    onWarning: () => undefined,
  });

  // The operations module: a job and a resource, and commands it obeys by publishing events.
  ops = new ModuleClient({ url, site: SITE, module: 'operations', username: 'operations', password: 'x', outboxPath: join(dir, 'ops-outbox.db'), onWarning: () => undefined });
  await ops.connected();
});

afterEach(async () => {
  writeBack.stop();
  agent.stop();
  await ops.close();
  await internal.endAsync(true);
  await broker.close();
  inbox.close();
  ingestor.close();
  journal.close();
  siteDb.close();
  rmSync(dir, { recursive: true, force: true });
});

function moduleState() {
  const now = Date.now();
  const jobs = new Map<string, Job>([['J-1', { job_id: 'J-1', status: 'released', blocked_reason: null, capability: 'pick', material_item: null, material_qty: null, priority: 2, due_at: iso(now + 48 * 3600_000), assigned_resource: null }]]);
  const res = new Map<string, Res>([['M-1', { resource_id: 'M-1', kind: 'machine', capability: 'pick', state: 'free', since: iso(now) }]]);
  return { jobs, res };
}

describe('the full loop', () => {
  it('state → agent → proposal → shift lead approves → command → module obeys → event → state → applied', async () => {
    const { jobs, res } = moduleState();
    await ops.publish('resources', 'c', null, { ...res.get('M-1')! }, OPERATIONS_RESOURCES);
    await ops.publish('jobs', 'c', null, { ...jobs.get('J-1')! }, OPERATIONS_JOBS);
    const commands: Record<string, unknown>[] = [];
    ops.onCommand(async (c) => {
      commands.push({ ...c });
      if (c.action !== 'assign_job') return { ok: false, error: `unknown action ${String(c.action)}` };
      const job = jobs.get(String(c.job_id))!;
      const r = res.get(String(c.resource_id))!;
      const rb = { ...r };
      r.state = 'busy';
      r.since = iso(Date.now());
      await ops.publish('resources', 'u', rb, { ...r }, OPERATIONS_RESOURCES);
      const jb = { ...job };
      job.status = 'in_progress';
      job.assigned_resource = r.resource_id;
      await ops.publish('jobs', 'u', jb, { ...job }, OPERATIONS_JOBS);
      return { ok: true, result: { job_id: job.job_id, status: job.status } };
    });
    ingestor.commitAll(); // the events are journaled (PUBACK); commit them into the tables

    const run = agent.run();
    const p = run.created.find((x) => x.ruleId === 'assign-job')!;
    expect(p.params).toEqual({ job_id: 'J-1', resource_id: 'M-1' });
    expect(p.evidence.map((e) => e.tag)).toEqual([`agent-${run.runId}`, `agent-${run.runId}`]);

    const r = await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1111', comment: 'yes' });
    expect(r.outcome).toBe('approved');
    await until(() => commands.length === 1, 'the command at the module');
    expect(commands[0]).toMatchObject({ command_id: p.id, action: 'assign_job', job_id: 'J-1', resource_id: 'M-1', requested_by: 'lena' });

    await until(() => {
      ingestor.commitAll(); // the module's events reach the tables
      writeBack.poll();
      return inbox.get(p.id)!.command!.state === 'applied';
    }, 'applied');
    const final = inbox.get(p.id)!;
    expect(final.status).toBe('approved');
    const events = inbox.history(p.id).map((e) => e.event);
    expect(events.slice(0, 3)).toEqual(['proposed', 'approved', 'command_sent']);
    expect(events.at(-1)).toBe('command_applied');

    // The next run sees the job running: nothing to propose for it, and no open proposal left.
    const next = agent.run();
    expect(next.created.filter((x) => x.ruleId === 'assign-job')).toEqual([]);
    expect(inbox.openProposals().filter((x) => x.ruleId === 'assign-job')).toEqual([]);

    // Evidence on demand: what the agent saw (the job released, the machine free), and the trail.
    const report = evidenceReport(catalog, DB, p.id);
    expect(report.tables.every((t) => t.tagExists && t.matches)).toBe(true);
    expect(report.tables.find((t) => t.table === 'work_queue')!.atTag[0]!.values).toMatchObject({ status: 'released', assigned_resource: null });
    expect(formatEvidence(report).join('\n')).toMatch(/command_applied/);
  });

  it('an approval after the world moved is stale: nothing is sent, and the agent re-evaluates', async () => {
    const { jobs, res } = moduleState();
    await ops.publish('resources', 'c', null, { ...res.get('M-1')! }, OPERATIONS_RESOURCES);
    await ops.publish('jobs', 'c', null, { ...jobs.get('J-1')! }, OPERATIONS_JOBS);
    const commands: unknown[] = [];
    ops.onCommand((c) => void commands.push(c));
    ingestor.commitAll();
    const p = agent.run().created.find((x) => x.ruleId === 'assign-job')!;

    // The machine goes down; the event is journaled but not yet committed — freshen() commits it.
    const rb = { ...res.get('M-1')! };
    await ops.publish('resources', 'u', rb, { ...rb, state: 'down', since: iso(Date.now()) }, OPERATIONS_RESOURCES);
    const r = await inbox.decide(p.id, 'approve', { user: 'lena', pin: '1111' });
    expect(r).toMatchObject({ outcome: 'stale', reason: 'resource M-1 is now down' });
    expect(inbox.get(p.id)!.command).toBeNull();
    await new Promise((x) => setTimeout(x, 200));
    expect(commands).toEqual([]);
  });

  it('the inbox is current to the second: a proposal the world overtook is withdrawn at the next check after the commit, not at the next run', async () => {
    const { jobs, res } = moduleState();
    await ops.publish('resources', 'c', null, { ...res.get('M-1')! }, OPERATIONS_RESOURCES);
    await ops.publish('jobs', 'c', null, { ...jobs.get('J-1')! }, OPERATIONS_JOBS);
    ingestor.commitAll();
    const runs: string[] = [];
    const run = agent.run.bind(agent);
    agent.run = () => {
      const r = run();
      runs.push(r.runId);
      return r;
    };
    agent.start(); // runs now, then every minute; re-checks every second between runs
    const p = inbox.openProposals().find((x) => x.ruleId === 'assign-job')!;
    expect(p).toBeDefined();
    const rb = { ...res.get('M-1')! };
    await ops.publish('resources', 'u', rb, { ...rb, state: 'down', since: iso(Date.now()) }, OPERATIONS_RESOURCES);
    ingestor.commitAll(); // as the ingest tick does within the table's budget
    await until(() => inbox.get(p.id)!.status === 'withdrawn', 'the proposal withdrawn between runs', 5_000);
    expect(inbox.get(p.id)!.withdrawnReason).toBe('resource M-1 is now down (seen when resources changed)');
    expect(runs).toHaveLength(1); // the start's run only
  });
});
