// Site.start end to end on a real data directory, a real broker on 127.0.0.1 (ephemeral ports),
// real tables: the demo modules fill the state tables within their budgets, /metrics scrapes,
// the control socket answers status, and a dead letter is replayed after its contract arrives.

import mqtt from 'mqtt';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Ingestor } from '../ingest/ingestor.ts';
import { INVENTORY_STOCK } from '../ingest/seed-contracts.ts';
import { Inbox } from '../inbox/index.ts';
import { runCli } from '../lsm/testing/cli.ts';
import { runDeadLetters } from './cli/site-commands.ts';
import { controlRequest } from './control.ts';
import { readModuleSecrets } from './demo/run.ts';
import { demoConfig } from './demo/site.ts';
import { BLOCKED_MAX, DONE_KEPT_MAX, OperationsModule } from './demo/operations.ts';
import { inventoryModule, ON_HAND_HIGH } from './demo/stock-modules.ts';
import { fsyncedDuring } from '../lsm/testing/fsync-spy.ts';
import { initDataDir } from './init.ts';
import { Catalog } from '../lsm/index.ts';
import { readConfig, writeConfig } from './config.ts';
import { DEMO_ADMIN, Site, SiteError } from './site.ts';
import type { SiteStatus } from './status.ts';

let dir: string;
let sites: Site[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-site-'));
});
afterEach(async () => {
  for (const s of sites) await s.stop();
  sites = [];
  rmSync(dir, { recursive: true, force: true });
});

async function until<T>(what: string, f: () => T | Promise<T>, ok: (v: T) => boolean, timeoutMs = 40_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < end) {
    last = await f();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)?.slice(0, 2000)}`);
}

/**
 * Tilstand's side of a demo module's command topic, as the `tilstand` principal: sends commands,
 * collects the module's acks.
 */
async function commander(site: Site, data: string, module: string) {
  const secrets = JSON.parse(readFileSync(join(data, 'secrets', 'modules.json'), 'utf8'));
  const client = await mqtt.connectAsync(site.mqttUrl, { username: 'tilstand', password: secrets.modules.tilstand.password, clientId: 'test-tilstand' });
  const acks: Record<string, unknown>[] = [];
  client.on('message', (_t, p) => acks.push(JSON.parse(p.toString()) as Record<string, unknown>));
  await client.subscribeAsync(`tilstand/demo/acks/${module}`, { qos: 1 });
  return {
    acks,
    send: (c: Record<string, unknown>) => client.publishAsync(`tilstand/demo/commands/${module}`, JSON.stringify(c), { qos: 1 }),
    ack: (id: string) => acks.find((a) => a.command_id === id),
    close: () => client.endAsync(),
  };
}

describe('Site', () => {
  it('runs the demo: events land in the state tables within budget, /metrics and the control socket answer', async () => {
    const data = join(dir, 'demo');
    const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 100, demoSeed: 7 });
    sites.push(site);
    expect(site.mqttUrl).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/);
    expect(statSync(join(data, 'control.sock')).mode & 0o777).toBe(0o600);

    const st = await until(
      'rows in every state table',
      () => controlRequest(join(data, 'control.sock'), 'status') as Promise<SiteStatus>,
      (s) => ['work_queue', 'resources', 'stock', 'yard_doors'].every((t) => (s.tables.find((x) => x.table === t)?.rows ?? 0) > 0),
    );
    const rows = Object.fromEntries(st.tables.map((t) => [t.table, t.rows]));
    expect(rows.resources).toBe(6);
    // The demo's table of its own: one row per dock door, written by the yard module, with its budget.
    expect(st.tables.map((t) => t.table)).toContain('yard_doors');
    expect(rows.yard_doors).toBe(6);
    expect(st.tables.find((t) => t.table === 'yard_doors')!.budgetMs).toBe(10_000);
    expect(rows.stock).toBeGreaterThan(0);
    expect(rows.stock).toBeLessThanOrEqual(80);
    expect(rows.work_queue).toBeGreaterThanOrEqual(1);
    expect(st.running).toBe(true);
    expect(st.site).toBe('demo');
    for (const t of st.tables) {
      expect(t.withinBudget, t.table).toBe(true);
      expect(t.ageMs!).toBeLessThanOrEqual(t.budgetMs);
    }
    expect(st.deadLettersOpen).toBe(0);
    expect(st.broker.mode === 'embedded' && st.broker.metrics!.authFailures).toBe(0);
    expect(st.demo!.map((d) => d.module).sort()).toEqual(['commerce', 'inventory', 'operations', 'procurement', 'yard']);

    const res = await fetch(`${site.httpUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('tilstand_site_up{site="demo"} 1');
    expect(text).toMatch(/tilstand_ingest_table_budget_ms\{site="demo",table="work_queue"\} 5000/);
    expect(text).toMatch(/tilstand_broker_events_acked_total\{site="demo"\} [1-9]/);
    expect((await fetch(`${site.httpUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${site.httpUrl}/nope`)).status).toBe(404);
    expect((await fetch(`${site.httpUrl}/metrics`, { method: 'POST' })).status).toBe(405);

    // Only one site per data directory.
    await expect(Site.start({ data, mqttPort: 0, httpPort: 0 })).rejects.toBeInstanceOf(SiteError);

    await controlRequest(join(data, 'control.sock'), 'stop');
    await site.stopped;
    // logs/site.log, which `start` names, holds the run from its first line to its last.
    const logLines = readFileSync(join(data, 'logs', 'site.log'), 'utf8').trimEnd().split('\n');
    expect(logLines.find((l) => / site demo started \(pid \d+\): mqtt mqtt:\/\/127\.0\.0\.1:\d+, http http:\/\/127\.0\.0\.1:\d+, data /.test(l))).toBeDefined();
    expect(logLines.at(-1)).toMatch(/^\S+ site stopped$/);
  });

  it('runs the demo on a demo directory made before the yard module: the four seed modules, and one line saying why no yard', async () => {
    const data = join(dir, 'older');
    // As an earlier version made it: config.json without yard_doors (seed bindings), secrets without yard.
    await initDataDir({ data, site: 'demo', config: (c) => ({ ...demoConfig(c), tables: demoConfig(c).tables.filter((t) => t.table !== 'yard_doors'), bindings: 'seed' }), admin: DEMO_ADMIN });
    expect(Object.keys(readModuleSecrets(join(data, 'secrets', 'modules.json')).modules).sort()).toEqual(['commerce', 'inventory', 'operations', 'procurement', 'tilstand']);
    const logged: string[] = [];
    const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 100, demoSeed: 7, log: (l) => logged.push(l) });
    sites.push(site);
    const st = await until(
      'rows in every state table',
      () => controlRequest(join(data, 'control.sock'), 'status') as Promise<SiteStatus>,
      (s) => ['work_queue', 'resources', 'stock'].every((t) => (s.tables.find((x) => x.table === t)?.rows ?? 0) > 0),
    );
    expect(st.demo!.map((d) => d.module).sort()).toEqual(['commerce', 'inventory', 'operations', 'procurement']);
    expect(st.tables.map((t) => t.table)).not.toContain('yard_doors');
    expect(st.deadLettersOpen).toBe(0);
    expect(logged.filter((l) => /yard/.test(l))).toEqual([expect.stringMatching(/demo: the yard module does not run here \(no /)]);
    expect(logged.find((l) => /demo modules running: /.test(l))).toMatch(/demo modules running: operations, inventory, commerce, procurement$/);
  });

  it("its tick expires the inbox's quiet tables as well as the ingest's (Inbox.expireIdle)", async () => {
    const expire = vi.spyOn(Inbox.prototype, 'expireIdle');
    try {
      const site = await Site.start({ data: join(dir, 'd'), demo: true, demoStepMs: 60_000, mqttPort: 0, httpPort: 0, tickMs: 20 });
      sites.push(site);
      await until('a few ticks', () => expire.mock.calls.length, (n) => n >= 3, 10_000);
    } finally {
      expire.mockRestore();
    }
  });

  it("the journal's prune also purges closed dead letters, at most once an hour", async () => {
    const purge = vi.spyOn(Ingestor.prototype, 'purgeClosedDeadLetters');
    try {
      const data = join(dir, 'purge');
      await initDataDir({ data, site: 'purge' });
      const site = await Site.start({ data, mqttPort: 0, httpPort: 0 });
      sites.push(site);
      await site.pruneNow();
      expect(purge).toHaveBeenCalledTimes(1);
      const [before] = purge.mock.calls[0]!;
      expect(Math.abs(before - (Date.now() - 30 * 86_400_000))).toBeLessThan(60_000);
      await site.pruneNow();
      expect(purge).toHaveBeenCalledTimes(1);
    } finally {
      purge.mockRestore();
    }
  });

  it('turns an event of an unknown contract version into a dead letter and replays it once the contract is added', async () => {
    const data = join(dir, 'dl');
    await initDataDir({ data, site: 'dl', config: demoConfig });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0 });
    sites.push(site);
    const sock = join(data, 'control.sock');
    const secrets = JSON.parse(readFileSync(join(data, 'secrets', 'modules.json'), 'utf8'));
    const client = await mqtt.connectAsync(site.mqttUrl, { username: 'inventory', password: secrets.modules.inventory.password, clientId: 'test-inventory' });
    try {
      const topic = 'tilstand/dl/events/inventory/stock';
      const event = (seq: number, version: number, after: Record<string, unknown>) =>
        JSON.stringify({ op: 'c', before: null, after, source: { module: 'inventory', stream: 'stock', seq }, ts_ms: Date.now(), contract: { name: 'inventory.stock', version } });
      await client.publishAsync(topic, event(1, 1, { item: 'A', location: 'L1', qty: 5 }), { qos: 1 });
      await client.publishAsync(topic, event(2, 2, { item: 'B', location: 'L1', qty: 7, note: 'new field' }), { qos: 1 });
    } finally {
      await client.endAsync();
    }
    const letters = await until(
      'a dead letter',
      () => controlRequest(sock, 'deadletters.list') as Promise<{ position: string; reason: string; status: string }[]>,
      (l) => l.length === 1,
    );
    expect(letters[0]).toMatchObject({ reason: 'no_contract', status: 'open' });
    expect(((await controlRequest(sock, 'status')) as SiteStatus).deadLettersOpen).toBe(1);

    // Replaying before the contract exists fails again; adding v2 then replaying succeeds.
    expect(await controlRequest(sock, 'deadletters.replay')).toEqual({ replayed: 0, failed: 1, notOpen: [], alike: 0 });
    const v2 = { ...INVENTORY_STOCK, version: 2, fields: [...INVENTORY_STOCK.fields, { name: 'note', type: 'STRING', default: null }] };
    await expect(controlRequest(sock, 'contracts.add', { contract: { ...v2, version: 4 } })).rejects.toMatchObject({ kind: 'InvalidArgument' });
    expect(await controlRequest(sock, 'contracts.add', { contract: v2 })).toMatchObject({ name: 'inventory.stock', version: 2 });
    expect(await controlRequest(sock, 'contracts.list')).toContainEqual({ name: 'inventory.stock', versions: [1, 2] });
    expect(await controlRequest(sock, 'deadletters.replay', { ids: [letters[0]!.position] })).toEqual({ replayed: 1, failed: 0, notOpen: [], alike: 0 });
    // The command line, through the running site: a position that is no open dead letter is named.
    const again = await runCli(runDeadLetters, ['replay', '--data', data, '--id', letters[0]!.position]);
    expect(again.code).toBe(1);
    expect(again.out).toBe('replayed 0, still failing 0\n');
    expect(again.err).toMatch(new RegExp(`no open dead letter at position ${letters[0]!.position} \\(replayed or dismissed already, or not a dead letter`));

    const st = await until('stock rows', () => controlRequest(sock, 'status') as Promise<SiteStatus>, (s) => s.tables.find((t) => t.table === 'stock')!.rows === 2);
    expect(st.deadLettersOpen).toBe(0);
    await expect(controlRequest(sock, 'no-such-op')).rejects.toMatchObject({ kind: 'UnknownOp' });

    // The replayed letter stays for deadLetters.closedRetentionMs (30 days by default), then goes;
    // with 0 (reloaded while the site runs) closed letters stay for good.
    const DAY = 86_400_000;
    expect(await site.purgeClosedDeadLetters()).toEqual({ purged: 0, fullCompaction: false });
    const config = readConfig(data);
    writeConfig(data, { ...config, deadLetters: { closedRetentionMs: 0 } });
    expect(await controlRequest(sock, 'config.reload')).toMatchObject({ applied: ['deadLetters'] });
    expect(await site.purgeClosedDeadLetters(Date.now() + 31 * DAY)).toBeUndefined();
    expect(await controlRequest(sock, 'deadletters.list')).toHaveLength(1);
    writeConfig(data, config);
    await controlRequest(sock, 'config.reload');
    expect(await site.purgeClosedDeadLetters(Date.now() + 31 * DAY)).toEqual({ purged: 1, fullCompaction: true });
    expect(await controlRequest(sock, 'deadletters.list')).toEqual([]);
    expect(readFileSync(join(data, 'logs', 'site.log'), 'utf8')).toMatch(
      /dead letters: deleted 1 closed \(replayed or dismissed\) before \S+ \(deadLetters\.closedRetentionMs\); dead_letters compacts fully in the background/,
    );
  });

  it('dismisses dead letters no replay can mend, from the command line as a named shift lead with a note: through the running site and on the directory', async () => {
    const data = join(dir, 'dismiss');
    await initDataDir({ data, site: 'dm', config: demoConfig });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    sites.push(site);
    await site.users.add({ name: 'Lena', role: 'shift_lead', pin: '4827' });
    await site.users.add({ name: 'Olav', role: 'operator', pin: '3916' });
    const sock = join(data, 'control.sock');
    const secrets = readModuleSecrets(join(data, 'secrets', 'modules.json'));
    const client = await mqtt.connectAsync(site.mqttUrl, { username: 'inventory', password: secrets.modules.inventory.password, clientId: 'test-inventory' });
    try {
      await client.publishAsync('tilstand/dm/events/inventory/stock', '{"a test message', { qos: 1 });
      await client.publishAsync('tilstand/dm/events/inventory/stock', 'another one', { qos: 1 });
      await client.publishAsync('tilstand/dm/events/inventory/stock', 'and a third', { qos: 1 });
      await client.publishAsync('tilstand/dm/events/inventory/stock', '{"op":"c"}', { qos: 1 }); // another reason
      await client.publishAsync('tilstand/dm/events/inventory/stock', 'and a fourth', { qos: 1 });
    } finally {
      await client.endAsync();
    }
    const letters = await until('five dead letters', () => controlRequest(sock, 'deadletters.list') as Promise<{ position: string; reason: string }[]>, (l) => l.length === 5);
    expect(letters.map((l) => l.reason)).toEqual(['bad_json', 'bad_json', 'bad_json', 'bad_envelope', 'bad_json']);
    const [first, second, third, other, fourth] = letters.map((l) => l.position) as [string, string, string, string, string];
    const dismiss = (...args: string[]) => runCli(runDeadLetters, ['dismiss', '--data', data, ...args]);
    // Refused: no note; a wrong PIN; an operator. Nothing is dismissed.
    await expect(dismiss('--id', first, '--user', 'Lena', '--pin', '4827')).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining("option '--note' <why> is required") });
    await expect(dismiss('--id', first, '--user', 'Lena', '--pin', '1111', '--note', 'test')).rejects.toMatchObject({ exitCode: 3, message: expect.stringMatching(/dismiss refused for user 'Lena': wrong PIN \(4 attempts left\)/) });
    await expect(dismiss('--id', first, '--user', 'Olav', '--pin', '3916', '--note', 'test')).rejects.toMatchObject({ exitCode: 3, message: expect.stringMatching(/user 'Olav' is operator; only shift_lead and admin dismiss dead letters/) });
    expect(((await controlRequest(sock, 'status')) as SiteStatus).deadLettersOpen).toBe(5);
    // Replay --alike: the named letter and every other open one from its topic with its reason
    // (these are no events: they fail again and stay open); the site's log says so.
    await expect(runCli(runDeadLetters, ['replay', '--data', data, '--alike'])).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining("option '--alike': name the letters") });
    const replayed = await runCli(runDeadLetters, ['replay', '--data', data, '--id', second, '--alike']);
    expect([replayed.code, replayed.out]).toEqual([3, 'replayed 0, still failing 4 (3 of them alike: open, from the same topic with the same reason)\n']);
    expect(readFileSync(join(data, 'logs', 'site.log'), 'utf8')).toMatch(/dead letters: 0 replayed, 4 still failing \(tilstand deadletters replay, with the open ones alike\)/);
    expect(((await controlRequest(sock, 'status')) as SiteStatus).deadLettersOpen).toBe(5);
    // Through the running site.
    const ok = await dismiss('--id', first, '--user', 'Lena', '--pin', '4827', '--note', 'test messages from the vendor');
    expect([ok.code, ok.out]).toEqual([0, 'dismissed 1 as Lena\n']);
    expect(((await controlRequest(sock, 'status')) as SiteStatus).deadLettersOpen).toBe(4);
    expect(readFileSync(join(data, 'logs', 'site.log'), 'utf8')).toMatch(/dead letters: 1 dismissed by Lena \(tilstand deadletters dismiss\): "test messages from the vendor"/);
    const twice = await dismiss('--id', first, '--user', 'Lena', '--pin', '4827', '--note', 'again');
    expect([twice.code, twice.out]).toEqual([1, 'dismissed 0 as Lena\n']);
    expect(twice.err).toContain(`no open dead letter at position ${first} (replayed or dismissed already`);
    // --alike: every other open letter from that topic with that reason, with the same note.
    const alike = await dismiss('--id', second, '--alike', '--user', 'Lena', '--pin', '4827', '--note', 'same vendor test');
    expect([alike.code, alike.out]).toEqual([0, 'dismissed 3 as Lena (2 of them alike: open, from the same topic with the same reason)\n']);
    expect(readFileSync(join(data, 'logs', 'site.log'), 'utf8')).toMatch(/dead letters: 3 dismissed by Lena \(tilstand deadletters dismiss, with the open ones alike\): "same vendor test"/);
    // The open letter is listed first, however many closed ones come before it; then the newest closed.
    const firstTwo = (out: string) => out.trim().split('\n').map((l) => l.split('  ').slice(0, 2).join(' '));
    expect(firstTwo((await runCli(runDeadLetters, ['list', '--data', data, '--limit', '2'])).out)).toEqual([`${other} open`, `${fourth} dismissed`]);
    // On the directory, with no site running.
    await site.stop();
    expect(firstTwo((await runCli(runDeadLetters, ['list', '--data', data, '--limit', '2'])).out)).toEqual([`${other} open`, `${fourth} dismissed`]);
    const offlineReplay = await runCli(runDeadLetters, ['replay', '--data', data, '--id', other, '--alike']);
    expect([offlineReplay.code, offlineReplay.out]).toEqual([3, 'replayed 0, still failing 1 (0 of them alike: open, from the same topic with the same reason)\n']);
    const offline = await dismiss('--id', other, '--user', 'Lena', '--pin', '4827', '--note', 'a module test');
    expect([offline.code, offline.out]).toEqual([0, 'dismissed 1 as Lena\n']);
    const list = await runCli(runDeadLetters, ['list', '--data', data, '--status', 'dismissed']);
    expect(list.out.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^${first}  dismissed  bad_json  .* — dismissed by Lena \\S+: test messages from the vendor$`)),
      ...[second, third].map((id) => expect.stringMatching(new RegExp(`^${id}  dismissed  bad_json  .* — dismissed by Lena \\S+: same vendor test$`))),
      expect.stringMatching(new RegExp(`^${other}  dismissed  bad_envelope  .* — dismissed by Lena \\S+: a module test$`)),
      expect.stringMatching(new RegExp(`^${fourth}  dismissed  bad_json  .* — dismissed by Lena \\S+: same vendor test$`)),
    ]);
    expect((await runCli(runDeadLetters, ['list', '--data', data, '--status', 'open'])).out).toBe('no dead letters\n');
  });

  it('keeps the agent\'s evidence and thresholds as config.json evidence and agent say', async () => {
    const data = join(dir, 'evidence');
    const DAY = 86_400_000;
    const agent = { reorderByItem: { 'ITEM-007': { reorderPoint: 12, orderUpTo: 60 } }, jobDurationMsByCapability: { pack: 1_200_000 }, idleMsMin: 0 };
    await initDataDir({ data, site: 'ev', config: (c) => ({ ...demoConfig(c), evidence: { proposingRunsMs: 3 * DAY, otherRunsMs: 2 * DAY, decisionsMs: 10 * 365 * DAY }, agent: { ...c.agent, ...agent } }) });
    // One stock row above its reorder point, so a run tags stock and proposes nothing.
    const w = new Catalog(join(data, 'warehouse')).getTable({ database: 'site_ev', table: 'stock' }).newWriter();
    w.writeRecord({ item: 'BOLT', location: 'A-01', on_hand: 30, inventory_seq: 1n });
    w.commit();
    w.close();
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, agentTimer: false, ui: false });
    sites.push(site);
    expect(site.decisions!.agent.config).toMatchObject({ evidenceRetentionMs: 3 * DAY, baselineRetentionMs: 2 * DAY, ...agent });
    expect(site.decisions!.inbox.decisionEvidenceMs).toBe(10 * 365 * DAY);
    expect(site.decisions!.inbox.compaction).toBe('deferred'); // a decision does not wait for one

    // A reload takes new retentions for the tags made from then on, and does not make the agent
    // look at every row again (no threshold changed).
    const c = readConfig(data);
    writeConfig(data, { ...c, evidence: { proposingRunsMs: 5 * DAY, otherRunsMs: 4 * DAY, decisionsMs: 2 * 365 * DAY } });
    expect(await site.reloadConfig()).toEqual({ applied: ['evidence'], restartNeeded: [] });
    expect(site.decisions!.agent.config).toMatchObject({ evidenceRetentionMs: 5 * DAY, baselineRetentionMs: 4 * DAY, ...agent });
    expect(site.decisions!.inbox.decisionEvidenceMs).toBe(2 * 365 * DAY);
    expect(site.config.evidence).toEqual({ proposingRunsMs: 5 * DAY, otherRunsMs: 4 * DAY, decisionsMs: 2 * 365 * DAY });
    const run = site.runAgent();
    expect(run.created).toEqual([]); // a run without proposals keeps its tags otherRunsMs
    const tag = site.catalog.getTable({ database: 'site_ev', table: 'stock' }).tags.get(`agent-${run.runId}`);
    expect(tag?.retainedMillis).toBe(4 * DAY);
  });

  it("a raised reorder point reaches rows already under it: by reload, and by a start on the changed config", async () => {
    const data = join(dir, 'raised');
    await initDataDir({ data, site: 'rp' });
    // Two rows in the state before the agent's first run: positions 30 and 45.
    const w = new Catalog(join(data, 'warehouse')).getTable({ database: 'site_rp', table: 'stock' }).newWriter();
    w.writeRecord({ item: 'BOLT', location: 'A-01', on_hand: 30, inventory_seq: 1n });
    w.writeRecord({ item: 'NUT', location: 'A-01', on_hand: 45, inventory_seq: 1n });
    w.commit();
    w.close();
    const open = async () => {
      const site = await Site.start({ data, mqttPort: 0, httpPort: 0, agentTimer: false, ui: false });
      sites.push(site);
      return site;
    };
    const raise = (item: string, reorderPoint: number) => {
      const c = readConfig(data);
      writeConfig(data, { ...c, agent: { ...c.agent, reorderByItem: { ...c.agent.reorderByItem, [item]: { reorderPoint, orderUpTo: 100 } } } });
    };
    const replenish = (site: Site) => site.decisions!.inbox.openProposals().filter((p) => p.action === 'replenish').map((p) => `${p.params.item} ${p.params.qty}`).sort();
    let site = await open();
    expect(site.runAgent().created).toHaveLength(0); // both above the default reorder point 5
    // Reloaded: the next run sees every row once (neither changed since the last run).
    raise('BOLT', 40);
    expect((await site.reloadConfig()).applied).toEqual(['agent']);
    site.runAgent();
    expect(replenish(site)).toEqual(['BOLT 70']);
    expect(site.runAgent().created).toHaveLength(0); // and then only what changes again
    await site.stop();
    // Changed while the site was stopped: its first run sees every row.
    raise('NUT', 50);
    site = await open();
    site.runAgent();
    expect(replenish(site)).toEqual(['BOLT 70', 'NUT 55']);
  });

  it('the demo operations module obeys commands on its command topic and acks them', async () => {
    const data = join(dir, 'cmd');
    const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 5_000 });
    sites.push(site);
    const { acks, send, ack, close } = await commander(site, data, 'operations');
    try {
      // Until the module has subscribed, a command has no receiver: resend the same id (it runs once).
      await until('the first ack', async () => (await send({ command_id: 'c-1', action: 'escalate_job', job_id: 'J-0001' }), acks.length), (n) => n >= 1);
      await send({ command_id: 'c-2', action: 'release_job', job_id: 'J-9999' });
      await send({ command_id: 'c-3', action: 'dance' });
      await until('acks of c-2 and c-3', () => acks.filter((a) => a.command_id !== 'c-1').length, (n) => n >= 2);
      expect(ack('c-1')).toMatchObject({ module: 'operations', ok: true, result: { job_id: 'J-0001' } });
      // Resent c-1s were answered from the stored ack: the job was escalated once.
      expect(new Set(acks.filter((a) => a.command_id === 'c-1').map((a) => JSON.stringify(a.result))).size).toBe(1);
      expect(site.status().demo!.find((d) => d.module === 'operations')!.commands).toBe(3);
      expect(ack('c-2')).toMatchObject({ ok: false, error: 'no such job: J-9999' });
      expect(ack('c-3')).toMatchObject({ ok: false, error: expect.stringMatching(/unknown action "dance"/) });
    } finally {
      await close();
    }
  });

  it('the demo modules go on from their saved state after a restart: no ghost jobs in work_queue', async () => {
    const data = join(dir, 'restart');
    const statePath = join(data, 'demo', 'operations.state.json');
    const saved = () => {
      try {
        return JSON.parse(readFileSync(statePath, 'utf8')) as { state: { nextJob: number; jobs: { job_id: string }[] } };
      } catch {
        return undefined;
      }
    };
    // Fast steps: done jobs leave and new ones (J-0031 …) take their place.
    const first = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 10 });
    sites.push(first);
    await until('new jobs', () => saved()?.state.nextJob ?? 0, (n) => n > 40);
    await first.stop();
    sites = sites.filter((x) => x !== first);
    const jobs = saved()!.state.jobs.map((j) => j.job_id).sort();
    expect(jobs).toHaveLength(30);

    const second = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000 });
    sites.push(second);
    const wq = second.catalog.getTable({ database: 'site_demo', table: 'work_queue' });
    // From the seed again, the module would know J-0001 … J-0030 only and Tilstand would keep the rest.
    const inTable = () => wq.scanRows({}, { projection: ['job_id'] }).map((r) => r[0] as string).sort();
    // The restarted module's snapshot (30 jobs, 6 resources) is journaled, then committed to work_queue.
    await until('the snapshot acked', () => second.status().demo!.find((d) => d.module === 'operations')!.acked, (n) => n >= 36);
    await until('work_queue caught up', () => second.status().tables.find((t) => t.table === 'work_queue')!.pendingEvents, (n) => n === 0);
    expect(inTable()).toEqual(jobs);
    await second.stop();
    sites = sites.filter((x) => x !== second);

    // A state file that does not parse is set aside; the module starts from the seed.
    writeFileSync(statePath, '{');
    const third = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000 });
    sites.push(third);
    await until('a new state file', () => saved()?.state.nextJob, (n) => n === 31);
    expect(readdirSync(join(data, 'demo')).filter((f) => f.startsWith('operations.state.json.unused-'))).toHaveLength(1);
  });

  it('a demo module saves its state durably: the temporary file and the folder fsynced', async () => {
    const folder = join(dir, 'demo-state');
    mkdirSync(folder);
    const mod = new OperationsModule({ url: 'mqtt://127.0.0.1:1', site: 'demo', username: 'operations', password: '-', outboxPath: join(folder, 'operations.outbox.db'), seed: 1, stepMs: 600_000, statePath: join(folder, 'operations.state.json') });
    mod.start();
    let stopped: Promise<void> | undefined;
    const synced = fsyncedDuring(() => void (stopped = mod.stop())); // stop() saves before it closes the client
    await stopped;
    expect(synced.some((p) => p.startsWith(join(folder, '.operations.state.json.')))).toBe(true);
    expect(synced).toContain(folder);
    expect(JSON.parse(readFileSync(join(folder, 'operations.state.json'), 'utf8')).state.jobs).toHaveLength(30);
    // Nothing is saved after stop(): the save its first snapshot queued did not write the folder
    // anew once the folder was gone (each run of this test left it behind in the temp directory).
    rmSync(folder, { recursive: true });
    await new Promise((r) => setImmediate(r));
    expect(existsSync(folder)).toBe(false);
  });

  it('the demo operations module keeps work in its queue: done jobs are replaced, an hour of steps on', async () => {
    const folder = join(dir, 'demo-hour');
    mkdirSync(folder);
    const mod = new OperationsModule({ url: 'mqtt://127.0.0.1:1', site: 'demo', username: 'operations', password: '-', outboxPath: join(folder, 'operations.outbox.db'), seed: 7, stepMs: 600_000 });
    const m = mod as unknown as { step(): void; exportState(): { jobs: Array<{ status: string }> } };
    const counts = () => {
      const c: Record<string, number> = { released: 0, blocked: 0, in_progress: 0, done: 0 };
      for (const j of m.exportState().jobs) c[j.status]!++;
      return c;
    };
    try {
      // One step a second, as the demo runs: sampled every 5 minutes of an hour.
      for (let minute = 5; minute <= 60; minute += 5) {
        for (let i = 0; i < 300; i++) m.step();
        const c = counts();
        expect(c.released! + c.blocked! + c.in_progress! + c.done!, `minute ${minute}`).toBe(30);
        expect(c.done, `minute ${minute}: ${JSON.stringify(c)}`).toBeLessThanOrEqual(DONE_KEPT_MAX + 1); // a step may finish one after the check
        expect(c.blocked, `minute ${minute}: ${JSON.stringify(c)}`).toBeLessThanOrEqual(BLOCKED_MAX);
        expect(c.released, `minute ${minute}: ${JSON.stringify(c)}`).toBeGreaterThanOrEqual(10); // work the agent can propose to assign
      }
    } finally {
      await mod.stop();
    }
  });

  it('the demo operations module leaves a blocked job blocked for minutes, so a release proposal can be read and decided', async () => {
    const folder = join(dir, 'demo-blocked');
    mkdirSync(folder);
    const mod = new OperationsModule({ url: 'mqtt://127.0.0.1:1', site: 'demo', username: 'operations', password: '-', outboxPath: join(folder, 'operations.outbox.db'), seed: 7, stepMs: 600_000 });
    const m = mod as unknown as { step(): void; exportState(): { jobs: Array<{ job_id: string; status: string }> } };
    try {
      // An hour of steps (one a second), no shift lead: how long each blocked job waited.
      const since = new Map<string, number>();
      const waited: number[] = [];
      for (let i = 0; i < 3600; i++) {
        m.step();
        const jobs = m.exportState().jobs;
        for (const j of jobs) if (j.status === 'blocked' && !since.has(j.job_id)) since.set(j.job_id, i);
        for (const [id, at] of since) {
          if (jobs.some((j) => j.job_id === id && j.status === 'blocked')) continue;
          waited.push(i - at);
          since.delete(id);
        }
      }
      waited.sort((a, b) => a - b);
      expect(waited.length).toBeGreaterThan(3); // jobs are blocked and released now and then
      expect(waited[waited.length >> 1], JSON.stringify(waited)).toBeGreaterThanOrEqual(180);
    } finally {
      await mod.stop();
    }
  });

  it('the demo inventory stays near its level for hours: rows come near a reorder point now and then', async () => {
    const folder = join(dir, 'demo-stock');
    mkdirSync(folder);
    const mod = inventoryModule({ url: 'mqtt://127.0.0.1:1', site: 'demo', username: 'inventory', password: '-', outboxPath: join(folder, 'inventory.outbox.db'), seed: 3, stepMs: 600_000 });
    const m = mod as unknown as { step(): void; exportState(): { rows: Array<{ qty: number }> } };
    try {
      let low = 0;
      for (let hour = 1; hour <= 4; hour++) {
        for (let i = 0; i < 3600; i++) {
          m.step();
          if (i % 60 === 0) low += m.exportState().rows.filter((r) => r.qty < 20).length;
        }
        const qty = m.exportState().rows.map((r) => r.qty).sort((a, b) => a - b);
        expect(qty[qty.length >> 1], `median on hand after ${hour} h`).toBeLessThanOrEqual(ON_HAND_HIGH + 60);
      }
      expect(low).toBeGreaterThan(0); // some row sat under 20 at some sampled minute
    } finally {
      await mod.stop();
    }
  });

  it('the demo procurement module obeys replenish: inbound rises by qty, and the stock table shows it', async () => {
    const data = join(dir, 'replenish');
    const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000 });
    sites.push(site);
    const { acks, send, ack, close } = await commander(site, data, 'procurement');
    const stock = site.catalog.getTable({ database: 'site_demo', table: 'stock' });
    const inboundOf = (item: string, location: string) => {
      const where = [{ column: 'item', op: '=' as const, value: item }, { column: 'location', op: '=' as const, value: location }];
      return stock.scanRows({}, { where, projection: ['inbound'] })[0]?.[0];
    };
    try {
      // The start-up snapshot is in the table before the command (no steps: 10 minutes apart).
      const before = await until('the start-up snapshot', () => inboundOf('ITEM-001', 'A-01'), (v) => typeof v === 'number');
      await until('the first ack', async () => (await send({ command_id: 'r-1', action: 'replenish', item: 'ITEM-001', location: 'A-01', qty: 17, position_before: 0 }), acks.length), (n) => n >= 1);
      await send({ command_id: 'r-2', action: 'replenish', item: 'ITEM-001', location: 'NOWHERE', qty: 5 });
      await send({ command_id: 'r-3', action: 'replenish', item: 'ITEM-001', location: 'A-01', qty: 0 });
      await send({ command_id: 'r-4', action: 'cancel', item: 'ITEM-001', location: 'A-01' });
      await until('acks of r-2 … r-4', () => acks.filter((a) => a.command_id !== 'r-1').length, (n) => n >= 3);
      expect(ack('r-1')).toMatchObject({ module: 'procurement', ok: true, result: { item: 'ITEM-001', location: 'A-01', inbound_qty: (before as number) + 17 } });
      expect(ack('r-2')).toMatchObject({ ok: false, error: 'no such item and location: "ITEM-001" at "NOWHERE"' });
      expect(ack('r-3')).toMatchObject({ ok: false, error: 'qty: expected an integer from 1 to 100000, got 0' });
      expect(ack('r-4')).toMatchObject({ ok: false, error: expect.stringMatching(/unknown action "cancel" \(expected replenish\)/) });
      // The effect reaches Tilstand as an ordinary event.
      await until('the inbound in stock', () => inboundOf('ITEM-001', 'A-01'), (v) => v === (before as number) + 17);
    } finally {
      await close();
    }
  });
});
