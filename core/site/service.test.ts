// SiteService over a real demo site in-process: authority (who may decide, who administers),
// sign-in with lockout, decisions recorded under the session's user, stock arithmetic, tables,
// history/diff, and the events the site tick pushes.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SiteEvent } from './api.ts';
import { session } from './test-support/session.ts';
import { SiteApiError } from './api.ts';
import { readDecisionLog } from '../inbox/index.ts';
import { readModuleSecrets } from './demo/run.ts';
import { demoConfig } from './demo/site.ts';
import type { SiteConfig } from './config.ts';
import { initDataDir } from './init.ts';
import { DEMO_ADMIN, Site } from './site.ts';
import { cutChanges, SiteService } from './service.ts';
import { validateCall } from './api-validate.ts';
import { runMain } from './cli/test-support.ts';
import { formatStatus } from './status.ts';

let dir: string;
let site: Site;

const kindOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
    return 'ok';
  } catch (e) {
    expect(e).toBeInstanceOf(SiteApiError);
    return (e as SiteApiError).kind;
  }
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-service-'));
  // The demo site, with one item's reorder policy of its own (config.json agent), and one location
  // of it with its own again: every ITEM-001 row is under its reorder point, the other items have
  // the default (5, up to 20).
  const agent = (c: ReturnType<typeof demoConfig>) => ({
    ...c.agent,
    reorderByItem: { 'ITEM-001': { reorderPoint: 1000, orderUpTo: 2000, locations: { DOCK: { reorderPoint: 2000, orderUpTo: 3000 } } } },
  });
  // approval_inbox's budget is this site's own (3 s), not core/ingest's default (2 s).
  const tables = (c: SiteConfig) => c.tables.map((b) => (b.table === 'approval_inbox' ? { ...b, budgetMs: 3_000, confirmedBy: 'the test site' } : b));
  await initDataDir({ data: join(dir, 'data'), site: 'demo', config: (c) => ({ ...demoConfig(c), agent: agent(c), tables: tables(demoConfig(c)) }), admin: DEMO_ADMIN });
  site = await Site.start({ data: join(dir, 'data'), demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, agentTimer: false, ui: false });
  await site.users.add({ name: 'Olav', role: 'operator', pin: '1357' });
  await site.users.add({ name: 'Lena', role: 'shift_lead', pin: '2580' });
  for (let i = 0; i < 200; i++) {
    site.ingestor.commitAll();
    const s = site.catalog.getTable({ database: 'site_demo', table: 'stock' }).scanRows();
    const w = site.catalog.getTable({ database: 'site_demo', table: 'work_queue' }).scanRows();
    if (s.length > 0 && w.length >= 30) break;
    await new Promise((r) => setTimeout(r, 100));
  }
}, 60_000);

afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('SiteService', () => {
  it('signs in by PIN, refuses wrong ones, and locks after five', async () => {
    const api = site.service;
    const s = session();
    expect(await api.call('signIn', { user: 'Olav', secret: '1357' }, s)).toEqual({ name: 'Olav', roles: ['operator'] });
    expect(await api.call('me', {}, s)).toEqual({ name: 'Olav', roles: ['operator'] });
    await site.users.add({ name: 'Unlucky', role: 'viewer', pin: '1111' });
    const bad = session();
    let last = '';
    for (let i = 0; i < 5; i++) {
      try {
        await api.call('signIn', { user: 'Unlucky', secret: '9999' }, bad);
      } catch (e) {
        last = (e as Error).message;
      }
    }
    expect(last).toMatch(/locked until/);
    expect(await kindOf(api.call('signIn', { user: 'Unlucky', secret: '1111' }, bad))).toBe('unauthenticated');
    expect(await kindOf(api.call('status', {}, session()))).toBe('unauthenticated');
  });

  it('only shift leads and admins decide; only admins administer users', async () => {
    const api = site.service;
    const op = session();
    await api.call('signIn', { user: 'Olav', secret: '1357' }, op);
    expect(await kindOf(api.call('decide', { id: 'P-x', decision: 'reject' }, op))).toBe('forbidden');
    expect(await kindOf(api.call('users', {}, op))).toBe('forbidden');
    expect(await kindOf(api.call('addUser', { name: 'Eve', roles: ['admin'], secret: '0000' }, op))).toBe('forbidden');
  });

  it('records a decision under the session user, and pushes the change as an event', async () => {
    const api = site.service;
    const lead = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, lead);
    site.runAgent();
    const open = await api.call('listProposals', { status: ['open'] }, lead);
    expect(open.length).toBeGreaterThan(0);
    // Each comes with its explanation and risk reason in Norwegian and German besides the stored English.
    for (const p of open) {
      for (const lang of ['nb', 'de']) {
        expect(p.translations?.[lang]?.explanation, `${p.id} ${lang}`).toMatch(/\S/);
        expect(p.translations?.[lang]?.riskReason, `${p.id} ${lang}`).toMatch(/\S/);
        expect(p.translations![lang]!.explanation).not.toBe(p.explanation);
      }
    }
    const events: SiteEvent[] = [];
    const off = api.subscribe((e) => events.push(e));
    site.service.tick();
    events.length = 0;
    const r = await api.call('decide', { id: open[0]!.id, decision: 'reject', comment: 'not now' }, lead);
    expect(r.outcome).toBe('rejected');
    expect(r.proposal).toMatchObject({ decidedBy: 'Lena', comment: 'not now', status: 'rejected' });
    site.service.tick();
    off();
    expect(events).toContainEqual({ type: 'proposals', changed: expect.arrayContaining([open[0]!.id]) });
    const detail = await api.call('getProposal', { id: open[0]!.id }, lead);
    expect(detail.trail.map((t) => t.event)).toEqual(expect.arrayContaining(['proposed', 'rejected']));
    // The detail both as one line and as named parts a UI labels in its own language.
    const rejected = detail.trail.find((t) => t.event === 'rejected')!;
    expect(rejected).toMatchObject({ user: 'Lena', detail: 'comment: not now', fields: [{ name: 'comment', value: 'not now' }] });
    const proposed = detail.trail.find((t) => t.event === 'proposed')!;
    expect(proposed.fields?.map((f) => f.name)).toEqual(['action']);
    // Each evidence table comes with its column types, so the UI can show a TIMESTAMP in local time.
    expect(detail.evidence.length).toBeGreaterThan(0);
    for (const ev of detail.evidence) {
      const fields = site.catalog.getTable({ database: 'site_demo', table: ev.table }).schema.fields;
      expect(Object.keys(ev.types).sort()).toEqual(fields.map((f) => f.name).sort());
      for (const column of ['due_at', 'since']) if (column in ev.types) expect(ev.types[column]).toBe('TIMESTAMP(3)');
    }
    expect(await kindOf(api.call('decide', { id: open[0]!.id, decision: 'approve' }, lead))).toBe('conflict');
    expect(await kindOf(api.call('getProposal', { id: 'P-none' }, lead))).toBe('not_found');
  });

  it("shows on a proposal the same situation's earlier approvals that the module did not carry out", async () => {
    const api = site.service;
    const lead = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, lead);
    site.runAgent();
    const inbox = site.decisions!.inbox;
    const p = inbox.openProposals().find((x) => x.module !== null && x.status === 'open')!;
    const r = await api.call('decide', { id: p.id, decision: 'approve' }, lead);
    expect(r.outcome).toBe('approved');
    expect(inbox.markCommand(p.id, 'failed', 'refused by the module: not now')).toBeDefined();
    // The status says so as an alarm, from the inbox's memory: approval_inbox holds every
    // proposal ever made, and a status (every few seconds) reads none of them.
    const scans = vi.spyOn(inbox.table, 'scanRows');
    const readers = vi.spyOn(inbox.table, 'reader');
    const status = await api.call('status', {}, lead);
    expect(scans).not.toHaveBeenCalled();
    expect(readers).not.toHaveBeenCalled();
    scans.mockRestore();
    readers.mockRestore();
    expect(status.alarms).toContainEqual(
      expect.objectContaining({ kind: 'command_failed', message: `${p.action} for ${p.id} failed: refused by the module: not now`, params: { action: p.action, id: p.id, state: 'failed', detail: 'refused by the module: not now' } }),
    );
    expect((await api.call('getProposal', { id: p.id }, lead)).failedBefore).toEqual([]); // not its own
    // The situation proposed again (as the agent's next run does while it holds).
    const { situationKey, ruleId, ruleVersion, action, module, params, risk, riskReason, explanation, evidence } = p;
    const input = { situationKey, ruleId, ruleVersion, action, module, params, risk, riskReason, explanation, evidence, runId: 'service-test' };
    const [again] = inbox.submit({ runId: 'service-test', proposals: [input], withdrawals: [] }).created;
    expect(again?.situationKey).toBe(p.situationKey);
    const detail = await api.call('getProposal', { id: again!.id }, lead);
    expect(detail.failedBefore).toEqual([{ id: p.id, atMs: expect.any(Number), detail: 'refused by the module: not now' }]);
    // The inbox list says so too, by count.
    const listed = await api.call('listProposals', {}, lead);
    expect(listed.find((x) => x.id === again!.id)?.failedBeforeCount).toBe(1);
    expect(listed.find((x) => x.id === p.id)?.failedBeforeCount).toBeUndefined();
  });

  it("lists a withdrawn proposal among the decided ones, newest first by when the agent withdrew it, with why and when (the inbox's Decided list)", async () => {
    const api = site.service;
    const lead = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, lead);
    site.runAgent();
    const inbox = site.decisions!.inbox;
    // The older one made before the other was rejected, and withdrawn after that rejection.
    const [p, q] = inbox.list({ status: ['open'] }).sort((a, b) => a.createdAtMs - b.createdAtMs);
    expect(q).toBeDefined();
    await api.call('decide', { id: q!.id, decision: 'reject' }, lead);
    const [w] = inbox.submit({ runId: 'service-test-withdraw', proposals: [], withdrawals: [{ id: p!.id, reason: 'job J-2 is no longer in the queue' }] }).withdrawn;
    // Decided and withdrawn in one list (the floor UI asks the two apart, store.ts loadDecided, in the same order), through the API's validation too.
    const req = { status: ['approved', 'rejected', 'stale', 'withdrawn'], order: 'decided', limit: 200 };
    expect(validateCall('listProposals', req).req).toEqual(req);
    const decided = await api.call('listProposals', req as never, lead);
    expect(decided.map((x) => x.id).slice(0, 2)).toEqual([p!.id, q!.id]);
    expect(decided[0]).toMatchObject({ status: 'withdrawn', withdrawnReason: 'job J-2 is no longer in the queue', withdrawnMs: w!.agentUpdatedAtMs });
    expect(decided[0]!.decidedMs).toBeUndefined();
    expect((await api.call('getProposal', { id: p.id }, lead)).withdrawnMs).toBe(w!.agentUpdatedAtMs);
  });

  it('computes available and projected stock, and filters by item or location prefix', async () => {
    const api = site.service;
    const s = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, s);
    const all = await api.call('stock', {}, s);
    expect(all.length).toBeGreaterThan(0);
    for (const r of all) {
      if (r.on_hand === null) continue;
      // A negative reserved or inbound counts as 0, as the agent counts it.
      expect(r.available).toBe(r.on_hand - Math.max(0, r.reserved ?? 0));
      expect(r.projected).toBe(r.available! + Math.max(0, r.inbound ?? 0));
    }
    const item = all[0]!.item;
    expect((await api.call('stock', { search: item.toLowerCase() }, s)).every((r) => r.item.startsWith(item))).toBe(true);
    const loc = all[0]!.location;
    expect((await api.call('stock', { search: loc }, s)).some((r) => r.location === loc)).toBe(true);
  });

  it("gives each stock row the agent's reorder policy for its item, and lists only the rows below it when asked", async () => {
    const api = site.service;
    const s = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, s);
    const all = await api.call('stock', {}, s);
    const own = all.filter((r) => r.item === 'ITEM-001');
    expect(own.length).toBeGreaterThan(0);
    expect(own.map((r) => r.location)).toContain('DOCK');
    for (const r of all) {
      expect([r.reorder_point, r.order_up_to]).toEqual(r.item !== 'ITEM-001' ? [5, 20] : r.location === 'DOCK' ? [2000, 3000] : [1000, 2000]);
      // The item's own levels on every row of it, the DOCK row (its location has its own) included.
      expect(r.item_policy).toEqual(r.item === 'ITEM-001' ? { reorder_point: 1000, order_up_to: 2000 } : null);
      // The agent's position: on hand − reserved + inbound, nulls (and a negative reserved or inbound) as 0.
      expect(r.below_reorder_point).toBe((r.on_hand ?? 0) - Math.max(0, r.reserved ?? 0) + Math.max(0, r.inbound ?? 0) < r.reorder_point);
    }
    const below = await api.call('stock', { below: true }, s);
    expect(below.map((r) => `${r.item}|${r.location}`)).toEqual(all.filter((r) => r.below_reorder_point).map((r) => `${r.item}|${r.location}`));
    expect(below.filter((r) => r.item === 'ITEM-001')).toEqual(own);
    // The limit counts the rows that match, and the rows come in key order.
    expect(await api.call('stock', { below: true, limit: 2 }, s)).toEqual(below.slice(0, 2));
  });

  it("lets a shift lead set a row's reorder point, for its location or its item: config.json, the agent and the audit follow", async () => {
    const api = site.service;
    const lead = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, lead);
    const op = session();
    await api.call('signIn', { user: 'Olav', secret: '1357' }, op);
    const file = join(dir, 'data', 'config.json');
    const before = readFileSync(file, 'utf8');
    const row = async (item: string, location: string) => (await api.call('stock', { search: item }, lead)).find((r) => r.location === location)!;
    expect(await row('ITEM-002', 'A-01')).toMatchObject({ reorder_point: 5, order_up_to: 20, reorder_scope: 'default' });

    expect(await kindOf(api.call('setReorderPolicy', { item: 'ITEM-002', location: 'A-01', policy: { reorderPoint: 9, orderUpTo: 30 } }, op))).toBe('forbidden');
    // One location of the item, then the item: the location keeps its own.
    expect(await api.call('setReorderPolicy', { item: 'ITEM-002', location: 'A-01', policy: { reorderPoint: 9, orderUpTo: 30 } }, lead)).toEqual({ reorder_point: 9, order_up_to: 30, reorder_scope: 'location' });
    expect(await row('ITEM-002', 'B-01')).toMatchObject({ reorder_point: 5, order_up_to: 20, reorder_scope: 'default' }); // the item has no levels of its own yet
    expect(await api.call('setReorderPolicy', { item: 'ITEM-002', policy: { reorderPoint: 15, orderUpTo: 60 } }, lead)).toEqual({ reorder_point: 15, order_up_to: 60, reorder_scope: 'item' });
    expect(await row('ITEM-002', 'A-01')).toMatchObject({ reorder_point: 9, order_up_to: 30, reorder_scope: 'location' });
    expect(await row('ITEM-002', 'B-01')).toMatchObject({ reorder_point: 15, order_up_to: 60, reorder_scope: 'item' });
    // Each row says who set its policy and when; a policy set by hand in config.json, nobody.
    expect((await row('ITEM-002', 'A-01')).reorder_set).toEqual({ by: 'Lena', atMs: expect.any(Number) });
    expect((await row('ITEM-002', 'B-01')).reorder_set).toEqual({ by: 'Lena', atMs: expect.any(Number) });
    expect((await row('ITEM-001', 'DOCK')).reorder_set).toBeNull();
    expect(site.decisions!.agent.config.reorderByItem['ITEM-002']).toEqual({ reorderPoint: 15, orderUpTo: 60, locations: { 'A-01': { reorderPoint: 9, orderUpTo: 30 } } });
    // The file as written: only that key changed (the rest of the file is as it was).
    const written = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown> & { agent: { reorderByItem: Record<string, unknown> } };
    const was = JSON.parse(before) as typeof written;
    expect(written.agent.reorderByItem['ITEM-002']).toEqual({ reorderPoint: 15, orderUpTo: 60, locations: { 'A-01': { reorderPoint: 9, orderUpTo: 30 } } });
    expect({ ...written, agent: { ...written.agent, reorderByItem: {} } }).toEqual({ ...was, agent: { ...was.agent, reorderByItem: {} } });

    // A value config.json refuses: named, and nothing changes.
    const bad = api.call('setReorderPolicy', { item: 'ITEM-002', location: 'A-01', policy: { reorderPoint: 30, orderUpTo: 30 } }, lead);
    await expect(bad).rejects.toThrow(/config agent\.reorderByItem\.ITEM-002\.locations\.A-01: expected orderUpTo > reorderPoint, got 30 ≤ 30/);
    expect(await kindOf(bad)).toBe('invalid');
    expect(await row('ITEM-002', 'A-01')).toMatchObject({ reorder_point: 9, reorder_scope: 'location' });

    // Removed: the location takes the item's again, then the item the default; the file is as before.
    expect(await api.call('setReorderPolicy', { item: 'ITEM-002', location: 'A-01', policy: null }, lead)).toEqual({ reorder_point: 15, order_up_to: 60, reorder_scope: 'item' });
    expect(await api.call('setReorderPolicy', { item: 'ITEM-002', location: null, policy: null }, lead)).toEqual({ reorder_point: 5, order_up_to: 20, reorder_scope: 'default' });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(JSON.parse(before));

    // The agent runs at once: a point far above a row's position proposes its replenishment, and
    // removing it withdraws that proposal.
    const dock = () => site.decisions!.inbox.openProposals().filter((p) => p.action === 'replenish' && p.params.item === 'ITEM-002' && p.params.location === 'DOCK');
    expect(dock()).toEqual([]);
    await api.call('setReorderPolicy', { item: 'ITEM-002', location: 'DOCK', policy: { reorderPoint: 5000, orderUpTo: 6000 } }, lead);
    expect(dock()).toHaveLength(1);
    await api.call('setReorderPolicy', { item: 'ITEM-002', location: 'DOCK', policy: null }, lead);
    expect(dock()).toEqual([]);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(JSON.parse(before));

    // Every change under the name of who made it, newest first.
    // In the decision log (config_changed, no proposal), which travels to HQ with the decisions.
    const log = readDecisionLog(site.catalog.getTable({ database: 'site_demo', table: 'decision_log' }), undefined, undefined, 'config_changed').reverse();
    expect(log.every((e) => e.proposalId === null)).toBe(true);
    const changes = log.map((e) => ({ user: e.actor, ...(e.detail as { key: string; before: unknown; after: unknown }) }));
    expect(changes.slice(0, 6).map((c) => [c.user, c.key, c.before, c.after])).toEqual([
      ['Lena', 'agent.reorderByItem.ITEM-002.locations.DOCK', { reorderPoint: 5000, orderUpTo: 6000 }, null],
      ['Lena', 'agent.reorderByItem.ITEM-002.locations.DOCK', null, { reorderPoint: 5000, orderUpTo: 6000 }],
      ['Lena', 'agent.reorderByItem.ITEM-002', { reorderPoint: 15, orderUpTo: 60 }, null],
      ['Lena', 'agent.reorderByItem.ITEM-002.locations.A-01', { reorderPoint: 9, orderUpTo: 30 }, null],
      ['Lena', 'agent.reorderByItem.ITEM-002', null, { reorderPoint: 15, orderUpTo: 60 }],
      ['Lena', 'agent.reorderByItem.ITEM-002.locations.A-01', null, { reorderPoint: 9, orderUpTo: 30 }],
    ]);

    // The same list through the site API (anyone signed in reads it), newest first.
    expect((await api.call('configChanges', { limit: 2 }, op)).map((c) => [c.user, c.key, c.before, c.after])).toEqual(changes.slice(0, 2).map((c) => [c.user, c.key, c.before, c.after]));
    expect((await api.call('configChanges', { limit: 1 }, op))[0]!.policyOf).toEqual({ item: 'ITEM-002', location: 'DOCK' });

    // Once read, the changes are kept up by each new one, not read again from the log (which holds
    // every decision ever made).
    const scans = vi.spyOn(site.decisions!.inbox.logTable, 'scanRows');
    // Changed by hand in config.json since: no longer what Lena set, so nobody's.
    await api.call('setReorderPolicy', { item: 'ITEM-002', location: 'B-01', policy: { reorderPoint: 7, orderUpTo: 21 } }, lead);
    expect((await api.call('configChanges', { limit: 1 }, op)).map((c) => [c.user, c.key, c.before, c.after])).toEqual([['Lena', 'agent.reorderByItem.ITEM-002.locations.B-01', null, { reorderPoint: 7, orderUpTo: 21 }]]);
    expect(scans).not.toHaveBeenCalled();
    scans.mockRestore();
    expect((await row('ITEM-002', 'B-01')).reorder_set).toMatchObject({ by: 'Lena' });
    const edited = JSON.parse(readFileSync(file, 'utf8')) as { agent: { reorderByItem: Record<string, { locations: Record<string, unknown> }> } };
    edited.agent.reorderByItem['ITEM-002']!.locations['B-01'] = { reorderPoint: 8, orderUpTo: 21 };
    writeFileSync(file, JSON.stringify(edited, null, 2));
    await site.reloadConfig();
    expect(await row('ITEM-002', 'B-01')).toMatchObject({ reorder_point: 8, reorder_scope: 'location', reorder_set: null });
    await api.call('setReorderPolicy', { item: 'ITEM-002', location: 'B-01', policy: null }, lead);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(JSON.parse(before));
  });

  it('shows on work queue and stock rows the proposals about them that wait for a decision', async () => {
    const api = site.service;
    const s = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, s);
    site.runAgent();
    const active = await api.call('listProposals', { status: ['open', 'deferred'] }, s);
    const ids = (ps: { id: string }[]) => ps.map((p) => p.id).sort();
    const names = (p: (typeof active)[number], k: string) => typeof p.params[k] === 'string';
    // The inbox's order and its cut come from the site; the status counts every one that waits.
    const rank = { high: 0, medium: 1, low: 2 } as const;
    const urgent = await api.call('listProposals', { status: ['open', 'deferred'], order: 'urgency' }, s);
    expect(ids(urgent)).toEqual(ids(active));
    for (let i = 1; i < urgent.length; i++) {
      const [a, b] = [urgent[i - 1]!, urgent[i]!];
      expect(rank[a.risk] < rank[b.risk] || (rank[a.risk] === rank[b.risk] && a.createdMs <= b.createdMs), `${a.id} before ${b.id}`).toBe(true);
    }
    expect((await api.call('listProposals', { status: ['open', 'deferred'], order: 'urgency', limit: 2 }, s)).map((p) => p.id)).toEqual(urgent.slice(0, 2).map((p) => p.id));
    const openOnes = active.filter((p) => p.status === 'open');
    expect((await api.call('status', {}, s)).proposals).toEqual({ open: openOnes.length, deferred: active.filter((p) => p.status === 'deferred').length, oldestOpenMs: Math.min(...openOnes.map((p) => p.createdMs)) });
    // `tilstand status` says so too, with how long the oldest has waited, and names the command that
    // lists both the open and the deferred ones (`--status open` hid the deferred).
    expect(formatStatus(site.status()).join('\n')).toMatch(new RegExp(`^proposals: ${openOnes.length} open \\(the oldest waits [\\d.]+ (ms|s|min)\\), \\d+ deferred \\(tilstand proposals\\)$`, 'm'));
    expect(await kindOf(api.call('listProposals', { status: ['approved'], order: 'urgency' }, s))).toBe('invalid');
    expect(await kindOf(api.call('listProposals', { order: 'urgency' }, s))).toBe('invalid');
    const wq = await api.call('workQueue', {}, s);
    expect(wq.waiting.length).toBeGreaterThan(0);
    // Jobs in the screen's order (blocked, released, in progress, done; then priority, highest
    // first); a search keeps the jobs that contain it, and `limit` cuts after the order.
    const order = ['blocked', 'released', 'in_progress', 'done'];
    const key = (j: (typeof wq.jobs)[number]) => [order.indexOf(j.status), -(j.priority ?? 0), j.job_id] as const;
    for (let i = 1; i < wq.jobs.length; i++) {
      const [a, b] = [key(wq.jobs[i - 1]!), key(wq.jobs[i]!)];
      expect(a[0] < b[0] || (a[0] === b[0] && (a[1] < b[1] || (a[1] === b[1] && a[2] < b[2]))), `${wq.jobs[i - 1]!.job_id} before ${wq.jobs[i]!.job_id}`).toBe(true);
    }
    expect((await api.call('workQueue', { limit: 3 }, s)).jobs).toEqual(wq.jobs.slice(0, 3));
    const last = wq.jobs[wq.jobs.length - 1]!;
    expect((await api.call('workQueue', { search: ` ${last.job_id.toLowerCase()} ` }, s)).jobs).toEqual([last]);
    const blocked = (await api.call('workQueue', { search: 'BLOCKED' }, s)).jobs;
    expect(blocked.length).toBeGreaterThan(0);
    expect(blocked).toEqual(wq.jobs.filter((j) => j.status === 'blocked' || (j.blocked_reason ?? '').toLowerCase().includes('blocked')));
    expect((await api.call('workQueue', { search: 'no such job' }, s)).jobs).toEqual([]);
    // A status the page found the search in as its language words it ("pågår"): its jobs too,
    // beside those the text is in, in the same order and cut.
    const inProgress = wq.jobs.filter((j) => j.status === 'in_progress' || j.job_id.toLowerCase().includes('pågår'));
    expect(inProgress.length).toBeGreaterThan(0);
    expect((await api.call('workQueue', { search: 'pågår', statuses: ['in_progress'] }, s)).jobs).toEqual(inProgress);
    expect((await api.call('workQueue', { search: 'pågår', statuses: ['in_progress'], limit: 1 }, s)).jobs).toEqual(inProgress.slice(0, 1));
    expect((await api.call('workQueue', { search: 'pågår' }, s)).jobs).toEqual([]);
    expect(ids(wq.waiting)).toEqual(ids(active.filter((p) => names(p, 'job_id') || names(p, 'resource_id'))));
    // Oldest first, one run's by their number: …-2 before …-10 (a sort by id as a string put them the other way).
    const made = wq.waiting.map((w) => active.find((p) => p.id === w.id)!);
    const nOf = (id: string) => Number(id.slice(id.lastIndexOf('-') + 1));
    expect(made.some((p) => nOf(p.id) >= 10), 'a run of ten proposals or more').toBe(true);
    for (let i = 1; i < made.length; i++) {
      const [a, b] = [made[i - 1]!, made[i]!];
      expect(a.createdMs < b.createdMs || (a.createdMs === b.createdMs && nOf(a.id) < nOf(b.id)), `${a.id} before ${b.id}`).toBe(true);
    }
    for (const w of wq.waiting) {
      const p = active.find((x) => x.id === w.id)!;
      expect(w).toEqual({ id: p.id, action: p.action, status: p.status, risk: p.risk, job_id: p.params.job_id ?? null, resource_id: p.params.resource_id ?? null, item: null, location: null });
    }
    // ITEM-001 is under its reorder point everywhere: its replenishments wait on its rows.
    const reorders = active.filter((p) => p.action === 'replenish');
    expect(reorders.some((p) => p.params.item === 'ITEM-001')).toBe(true);
    const stock = await api.call('stock', {}, s);
    for (const r of stock) {
      expect(ids(r.waiting)).toEqual(ids(reorders.filter((p) => p.params.item === r.item && p.params.location === r.location)));
    }
  });

  it('reports tables with budgets, sizes and compaction debt; history and diff at an agent tag', async () => {
    const api = site.service;
    const s = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, s);
    const tables = await api.call('tables', {}, s);
    expect(tables.map((t) => t.table).sort()).toEqual(['dead_letters', 'resources', 'stock', 'work_queue', 'yard_doors']);
    const wq = tables.find((t) => t.table === 'work_queue')!;
    expect(wq.bytes).toBeGreaterThan(0);
    expect(wq.snapshots).toBeGreaterThan(0);
    expect(wq.tags).toBeGreaterThan(0);
    expect(wq.compactionDebt).toBeGreaterThanOrEqual(0);
    const [tag] = await api.call('tags', { table: 'work_queue' }, s);
    expect(tag!.name).toMatch(/^agent-/);
    // At most `limit`, newest first; a search keeps the names that contain it.
    for (const n of ['old-a', 'old-b', 'old-c']) site.catalog.getTable({ database: 'site_demo', table: 'work_queue' }).createTag(n);
    const all = await api.call('tags', { table: 'work_queue' }, s);
    expect(all.length).toBeGreaterThanOrEqual(4);
    expect((await api.call('tags', { table: 'work_queue', limit: 2 }, s)).map((x) => x.name)).toEqual(all.slice(0, 2).map((x) => x.name));
    expect((await api.call('tags', { table: 'work_queue', search: 'old-' }, s)).map((x) => x.name).sort()).toEqual(['old-a', 'old-b', 'old-c']);
    const h = await api.call('history', { table: 'work_queue', at: { tag: tag!.name } }, s);
    expect(h.rows.length).toBeGreaterThanOrEqual(30);
    expect(h.columns).toContain('job_id');
    const d = await api.call('diff', { table: 'work_queue', from: { tag: tag!.name }, to: { latest: true } }, s);
    expect(d.columns).toEqual(h.columns);
    expect(h.types[h.columns.indexOf('due_at')]).toBe('TIMESTAMP(3)');
    expect(h.types[h.columns.indexOf('job_id')]).toBe('STRING NOT NULL');
    expect(d.types).toEqual(h.types);
    // The snapshots read, with their commit times; a cut says there is more.
    const wqTable = site.catalog.getTable({ database: 'site_demo', table: 'work_queue' });
    const tagged = wqTable.resolve({ tag: tag!.name })!;
    // `d` compared with the latest snapshot when it was asked; the demo's modules may have
    // committed since, so that one is looked up by the id it names.
    const latest = wqTable.resolve({ snapshotId: d.to.snapshotId! })!;
    expect(latest.id).toBeGreaterThanOrEqual(tagged.id);
    expect(h).toMatchObject({ snapshotId: tagged.id, snapshotMs: tagged.timeMillis, more: false });
    expect(d).toMatchObject({ from: { snapshotId: tagged.id, snapshotMs: tagged.timeMillis }, to: { snapshotId: latest.id, snapshotMs: latest.timeMillis } });
    const cut = await api.call('history', { table: 'work_queue', at: { tag: tag!.name }, limit: 5 }, s);
    expect(cut.rows).toEqual(h.rows.slice(0, 5));
    expect(cut.more).toBe(true);
    expect((await api.call('history', { table: 'work_queue', at: { tag: tag!.name }, limit: h.rows.length }, s)).more).toBe(false);
    // `contains` keeps the rows with a cell that contains it, case-insensitive, before the cut.
    const job = h.rows[h.rows.length - 1]![h.columns.indexOf('job_id')] as string;
    const one = await api.call('history', { table: 'work_queue', at: { tag: tag!.name }, contains: ` ${job.toLowerCase()} `, limit: 1 }, s);
    expect(one.rows.map((r) => r[h.columns.indexOf('job_id')])).toEqual([job]);
    expect(one.more).toBe(false);
    const blocked = await api.call('history', { table: 'work_queue', at: { tag: tag!.name }, contains: 'BLOCKED' }, s);
    expect(blocked.rows.length).toBeGreaterThan(0);
    expect(blocked.rows.length).toBeLessThan(h.rows.length);
    expect(blocked.rows.every((r) => r.some((v) => String(v).toLowerCase().includes('blocked')))).toBe(true);
    // `worded`: a column's stored values the page found `contains` in as its language words them
    // ("pågår": in_progress), which the site does not know; their rows too, beside those the text
    // is in, before the cut. A column the table does not have names no row.
    const statusAt = h.columns.indexOf('status');
    const aStatus = h.rows[0]![statusAt] as string;
    const worded = [{ column: 'status', values: [aStatus] }, { column: 'no_such_column', values: ['x'] }];
    const ofStatus = h.rows.filter((r) => r[statusAt] === aStatus);
    expect(ofStatus.length).toBeLessThan(h.rows.length);
    expect((await api.call('history', { table: 'work_queue', at: { tag: tag!.name }, contains: 'no such text', worded }, s)).rows).toEqual(ofStatus);
    expect((await api.call('history', { table: 'work_queue', at: { tag: tag!.name }, contains: 'no such text', worded, limit: 1 }, s)).rows).toEqual(ofStatus.slice(0, 1));
    expect((await api.call('history', { table: 'work_queue', at: { tag: tag!.name }, contains: job, worded }, s)).rows).toEqual(h.rows.filter((r) => r[statusAt] === aStatus || r.includes(job)));
    // From the first snapshot: what changed since depends on the demo's timing (its first commit
    // may already hold every job), so each check is against the full comparison, and each call
    // compares with the same snapshot (the modules may still commit meanwhile).
    expect(latest.id).toBeGreaterThan(1);
    const fromFirst = await api.call('diff', { table: 'work_queue', from: { snapshotId: 1 }, to: { snapshotId: latest.id } }, s);
    expect(fromFirst.changes.length).toBeGreaterThan(0);
    const dJob = fromFirst.changes[fromFirst.changes.length - 1]!.row[h.columns.indexOf('job_id')] as string;
    const dOne = await api.call('diff', { table: 'work_queue', from: { snapshotId: 1 }, to: { snapshotId: latest.id }, contains: dJob }, s);
    expect(dOne.changes.length).toBeGreaterThan(0);
    expect(dOne.changes).toEqual(fromFirst.changes.filter((c) => c.row.some((v) => String(v).includes(dJob))));
    const dStatus = fromFirst.changes[0]!.row[statusAt] as string;
    const dWorded = await api.call('diff', { table: 'work_queue', from: { snapshotId: 1 }, to: { snapshotId: latest.id }, contains: 'no such text', worded: [{ column: 'status', values: [dStatus] }] }, s);
    expect(dWorded.changes.length).toBeGreaterThan(0);
    expect(dWorded.changes).toEqual(fromFirst.changes.filter((c) => c.row[statusAt] === dStatus));
    // The cut at 1: the first change, or the first update's -U and +U.
    const firstCut = fromFirst.changes[0]!.kind === '-U' ? 2 : 1;
    expect(await api.call('diff', { table: 'work_queue', from: { snapshotId: 1 }, to: { snapshotId: latest.id }, limit: 1 }, s)).toMatchObject({
      changes: fromFirst.changes.slice(0, firstCut),
      more: fromFirst.changes.length > firstCut,
    });
    // A cut that would fall between an update's -U and +U keeps the pair whole.
    const seq = ['+I', '-U', '+U', '-D', '-U', '+U'].map((kind, i) => ({ kind, i }));
    expect(cutChanges(seq, 1)).toEqual({ changes: seq.slice(0, 1), more: true });
    expect(cutChanges(seq, 2)).toEqual({ changes: seq.slice(0, 3), more: true });
    expect(cutChanges(seq, 5)).toEqual({ changes: seq, more: false });
    expect(cutChanges(seq, 6)).toEqual({ changes: seq, more: false });
    expect(cutChanges(seq, 4)).toEqual({ changes: seq.slice(0, 4), more: true });
    expect((await api.call('diff', { table: 'work_queue', from: { latest: true }, to: { latest: true } }, s))).toMatchObject({ changes: [], more: false, from: { snapshotId: latest.id }, to: { snapshotId: latest.id } });
    expect(await kindOf(api.call('history', { table: 'nope', at: { latest: true } }, s))).toBe('not_found');
    expect(await kindOf(api.call('history', { table: 'work_queue', at: { tag: 'no-such-tag' } }, s))).toBe('not_found');
    const st = await api.call('status', {}, s);
    expect(st.siteId).toBe('demo');
    expect(st.sync.configured).toBe(false);
    // How long a closed dead letter stays (the Dead letters screen says so): config deadLetters.
    expect(st.deadLetterClosedRetentionMs).toBe(site.config.deadLetters.closedRetentionMs);
    expect(st.deadLetterClosedRetentionMs).toBe(30 * 86_400_000);
  });

  it("shows the approval inbox's age against its budget while the agent keeps it current, and a breach as an alarm", async () => {
    const api = site.service;
    const s = session();
    await api.call('signIn', { user: 'Olav', secret: '1357' }, s);
    const inboxRow = async () => (await api.call('status', {}, s)).tables.find((t) => t.table === 'approval_inbox');
    // This site's agent runs only on demand: nothing keeps the inbox current, so no row claims it.
    expect(await inboxRow()).toBeUndefined();
    const agent = site.decisions!.agent;
    const keeps = vi.spyOn(agent, 'keepsInboxCurrent', 'get').mockReturnValue(true);
    const unchecked = vi.spyOn(agent, 'oldestUncheckedCommitMs').mockReturnValue(null);
    try {
      // The budget from config.json `tables`.
      expect(await inboxRow()).toMatchObject({ budgetMs: 3_000, confirmedBy: 'the test site', ageMs: 0, withinBudget: true, breaches: 0, pendingEvents: 0 });
      const tables = await api.call('tables', {}, s);
      expect(tables[0]).toMatchObject({ table: 'approval_inbox', budgetMs: 3_000, decision: 'a shift lead approves or rejects a proposal on the floor PC' });
      // 2.5 s unchecked: over the default, within this site's budget.
      unchecked.mockReturnValue(Date.now() - 2_500);
      expect(await inboxRow()).toMatchObject({ withinBudget: true, breaches: 0 });
      expect(tables[0]!.snapshots).toBeGreaterThan(0);
      // A commit the agent has not checked for 5 s (its checks failing): over budget, an alarm.
      unchecked.mockReturnValue(Date.now() - 5_000);
      const st = await api.call('status', {}, s);
      const row = st.tables.find((t) => t.table === 'approval_inbox')!;
      expect(row.ageMs).toBeGreaterThanOrEqual(5_000);
      expect(row).toMatchObject({ withinBudget: false, breaches: 1 });
      expect(st.alarms.find((a) => a.kind === 'budget_breach')?.message).toMatch(/^approval_inbox is \d+ s old; its budget is 3 s/);
      expect(st.alarms.find((a) => a.kind === 'budget_breach')?.params).toEqual({ table: 'approval_inbox', ageMs: row.ageMs, budgetMs: 3_000 });
      expect((await inboxRow())!.breaches).toBe(1); // the same episode
      unchecked.mockReturnValue(null);
      expect(await inboxRow()).toMatchObject({ ageMs: 0, withinBudget: true, breaches: 1 });
      unchecked.mockReturnValue(Date.now() - 4_000);
      expect(await inboxRow()).toMatchObject({ withinBudget: false, breaches: 2 });
    } finally {
      keeps.mockRestore();
      unchecked.mockRestore();
    }
  });

  it('lets an admin add, re-role and disable users; a disabled user is signed out at the next call', async () => {
    const api = site.service;
    const admin = session();
    await api.call('signIn', { user: 'demo', secret: '1234' }, admin);
    expect(await api.call('addUser', { name: 'Kari', roles: ['operator'], secret: '4725' }, admin)).toMatchObject({ name: 'Kari', roles: ['operator'], disabled: false });
    expect(await kindOf(api.call('addUser', { name: 'Two', roles: ['operator', 'admin'], secret: '4725' }, admin))).toBe('invalid');
    // A PIN a colleague would try first is refused, naming why; a password of digits-and-more is not a PIN.
    await expect(api.call('addUser', { name: 'Easy', roles: ['operator'], secret: '1111' }, admin)).rejects.toThrow(/secret: PIN 1111: one digit repeated is among the first a colleague would try/);
    await expect(api.call('resetSecret', { name: 'Kari', secret: '98765' }, admin)).rejects.toThrow(/PIN 98765: digits in a row/);
    const kari = session();
    await api.call('signIn', { user: 'Kari', secret: '4725' }, kari);
    expect(await api.call('setRoles', { name: 'Kari', roles: ['shift_lead'] }, admin)).toMatchObject({ roles: ['shift_lead'] });
    await api.call('status', {}, kari);
    expect(kari.user?.roles).toEqual(['shift_lead']);
    await api.call('resetSecret', { name: 'Kari', secret: '8642' }, admin);
    expect(await kindOf(api.call('signIn', { user: 'Kari', secret: '4725' }, session()))).toBe('unauthenticated');
    const again = session();
    await api.call('signIn', { user: 'Kari', secret: '8642' }, again);
    await api.call('disableUser', { name: 'Kari' }, admin);
    // `me` (public, what the UI asks on load) does not report a disabled user as signed in.
    expect(api.signedIn(again)).toBe(false);
    expect(await api.call('me', {}, again)).toBeNull();
    expect(await kindOf(api.call('status', {}, kari))).toBe('unauthenticated');
    expect(kari.user).toBeNull();
    // Enabled again by an admin (only an admin): the PIN she had works again.
    expect(await kindOf(api.call('enableUser', { name: 'Kari' }, again))).toBe('unauthenticated');
    expect(await api.call('enableUser', { name: 'Kari' }, admin)).toMatchObject({ name: 'Kari', disabled: false });
    await api.call('signIn', { user: 'Kari', secret: '8642' }, kari);
    expect(await kindOf(api.call('enableUser', { name: 'Kari' }, kari))).toBe('forbidden');
    expect(await kindOf(api.call('disableUser', { name: 'demo' }, admin))).toBe('conflict');
    expect(await kindOf(api.call('initSite', { siteId: 'x', adminName: 'y', adminPin: '1234' }, session()))).toBe('conflict');
  });

  it("counts unknown badges per source: one client's five stop badges from it, not from another; the answers name no user", async () => {
    const api = site.service;
    await site.users.add({ name: 'Badger', role: 'operator', badge: 'RFID-7F3A9C21' });
    const messages: string[] = [];
    for (let i = 0; i < 5; i++) {
      try {
        await api.call('signIn', { badge: `RFID-guess-${i}` }, session('10.0.0.66'));
      } catch (e) {
        messages.push((e as Error).message);
      }
    }
    expect(messages[0]).toBe('sign-in refused: unknown badge (4 attempts left)');
    expect(messages[4]).toMatch(/^sign-in refused: badge refused until \d\d:\d\d:\d\d after too many wrong attempts$/);
    // That source's right badge too (else the refusal told right from wrong), and it names nobody.
    await expect(api.call('signIn', { badge: 'RFID-7F3A9C21' }, session('10.0.0.66'))).rejects.toThrow(/^sign-in refused: badge refused until/);
    // Another client, and the floor PC's own screens, go on: the stranger's badges stopped only theirs.
    expect(await api.call('signIn', { badge: 'RFID-7F3A9C21' }, session('loopback'))).toEqual({ name: 'Badger', roles: ['operator'] });
    expect(await api.call('signIn', { badge: 'RFID-7F3A9C21' }, session('10.0.0.7'))).toEqual({ name: 'Badger', roles: ['operator'] });
    // A name that is no user is locked as a user is, in the same words: they tell no one it is none.
    const nobody: string[] = [];
    for (let i = 0; i < 6; i++) await api.call('signIn', { user: 'Nobody', secret: '4826' }, session()).catch((e: Error) => nobody.push(e.message));
    expect(nobody[0]).toBe('sign-in refused: wrong name, PIN or password (4 attempts left)');
    expect(nobody[5]).toMatch(/^sign-in refused: locked until \d\d:\d\d:\d\d after too many wrong attempts$/);
  });

  it('ends the sessions a user began before an admin reset their PIN or password (API or `tilstand users reset`), events too; not the one that reset', async () => {
    const api = site.service;
    await site.users.add({ name: 'Reset', role: 'operator', pin: '4826' });
    await site.users.add({ name: 'Boss', role: 'admin', pin: '5937' });
    const admin = session();
    await api.call('signIn', { user: 'Boss', secret: '5937' }, admin);
    // Someone who learned the old PIN signed in with it; the reset ends that session at its next
    // call, and its event socket at the next push (`signedIn`).
    const before = session();
    const pushed = session();
    await api.call('signIn', { user: 'Reset', secret: '4826' }, before);
    await api.call('signIn', { user: 'Reset', secret: '4826' }, pushed);
    await api.call('resetSecret', { name: 'Reset', secret: '6284' }, admin);
    await expect(api.call('status', {}, before)).rejects.toThrow('the PIN or password of Reset was reset after this sign-in; sign in again');
    expect(before.user).toBeNull();
    expect(api.signedIn(pushed)).toBe(false);
    expect(await api.call('me', {}, pushed)).toBeNull();
    // A sign-in with the new PIN is kept.
    const after = session();
    await api.call('signIn', { user: 'Reset', secret: '6284' }, after);
    expect(await kindOf(api.call('status', {}, after))).toBe('ok');
    expect(api.signedIn(after)).toBe(true);
    // `tilstand users reset`, another process on site.db, ends it too: a password as long as one may
    // be (256), which the UI's sign-in then takes (api-validate: it stopped at 128).
    const password = 'correct horse battery staple '.repeat(9).slice(0, 256);
    const cli = await runMain(['users', 'reset', '--data', join(dir, 'data'), '--name', 'Reset', '--password', password]);
    expect(cli.code).toBe(0);
    expect(await kindOf(api.call('status', {}, after))).toBe('unauthenticated');
    const ui = validateCall('signIn', { user: 'Reset', secret: password });
    const viaUi = session();
    expect(await api.call(ui.method, ui.req, viaUi)).toEqual({ name: 'Reset', roles: ['operator'] });
    expect(await kindOf(api.call('status', {}, viaUi))).toBe('ok');
    // An admin who resets their own PIN keeps the session that did it; their others end.
    const elsewhere = session();
    await api.call('signIn', { user: 'Boss', secret: '5937' }, elsewhere);
    await api.call('resetSecret', { name: 'Boss', secret: '7395' }, admin);
    expect(await kindOf(api.call('users', {}, admin))).toBe('ok');
    expect(await kindOf(api.call('users', {}, elsewhere))).toBe('unauthenticated');
  });

  it('an admin reset replaces the secrets it does not set: a password given ends the old PIN, a PIN the old password; the badge stays', async () => {
    const api = site.service;
    await site.users.add({ name: 'Pinned', role: 'operator', pin: '4826' });
    await site.users.add({ name: 'Both', role: 'operator', pin: '5937', password: 'old password', badge: 'RFID-B07H' });
    await site.users.add({ name: 'Typist', role: 'operator', password: 'old password' });
    const admin = session();
    await api.call('signIn', { user: 'demo', secret: '1234' }, admin);
    // The PIN became known; the admin types a password on the Users screen (the API takes it so).
    expect(await api.call('resetSecret', { name: 'Pinned', secret: 'new password' }, admin)).toMatchObject({ name: 'Pinned', disabled: false });
    expect(await kindOf(api.call('signIn', { user: 'Pinned', secret: '4826' }, session()))).toBe('unauthenticated');
    expect(await api.call('signIn', { user: 'Pinned', secret: 'new password' }, session())).toEqual({ name: 'Pinned', roles: ['operator'] });
    await api.call('resetSecret', { name: 'Both', secret: 'new password' }, admin);
    expect(await kindOf(api.call('signIn', { user: 'Both', secret: '5937' }, session()))).toBe('unauthenticated');
    expect(await kindOf(api.call('signIn', { user: 'Both', secret: 'old password' }, session()))).toBe('unauthenticated');
    expect(await api.call('signIn', { user: 'Both', secret: 'new password' }, session())).toEqual({ name: 'Both', roles: ['operator'] });
    // The reverse: a PIN given ends the password. The badge, a card and no secret typed, stays.
    await api.call('resetSecret', { name: 'Both', secret: '6284' }, admin);
    expect(await kindOf(api.call('signIn', { user: 'Both', secret: 'new password' }, session()))).toBe('unauthenticated');
    expect(await api.call('signIn', { user: 'Both', secret: '6284' }, session())).toEqual({ name: 'Both', roles: ['operator'] });
    expect(await api.call('signIn', { badge: 'RFID-B07H' }, session())).toEqual({ name: 'Both', roles: ['operator'] });
    await api.call('resetSecret', { name: 'Typist', secret: '7395' }, admin);
    expect(await kindOf(api.call('signIn', { user: 'Typist', secret: 'old password' }, session()))).toBe('unauthenticated');
    expect(await api.call('signIn', { user: 'Typist', secret: '7395' }, session())).toEqual({ name: 'Typist', roles: ['operator'] });
  });

  it('a session begun before its user was disabled stays ended when the user is enabled again, with no call between', async () => {
    const api = site.service;
    await site.users.add({ name: 'Ragnhild', role: 'operator', pin: '2468' });
    const admin = session();
    await api.call('signIn', { user: 'demo', secret: '1234' }, admin);
    const old = session();
    const pushed = session();
    await api.call('signIn', { user: 'Ragnhild', secret: '2468' }, old);
    await api.call('signIn', { user: 'Ragnhild', secret: '2468' }, pushed);
    // Disabled and enabled while the sessions made no call (a tab closed, its cookie kept).
    await api.call('disableUser', { name: 'Ragnhild' }, admin);
    await api.call('enableUser', { name: 'Ragnhild' }, admin);
    expect(api.signedIn(pushed)).toBe(false);
    await expect(api.call('me', {}, old)).resolves.toBeNull();
    await expect(api.call('status', {}, old)).rejects.toThrow(/sign in/);
    expect(old.user).toBeNull();
    // A sign-in after the enable is kept, and a second disable/enable ends it too.
    const after = session();
    await api.call('signIn', { user: 'Ragnhild', secret: '2468' }, after);
    expect(await kindOf(api.call('status', {}, after))).toBe('ok');
    expect(await api.call('me', {}, after)).toEqual({ name: 'Ragnhild', roles: ['operator'] });
    await api.call('disableUser', { name: 'Ragnhild' }, admin);
    await api.call('enableUser', { name: 'Ragnhild' }, admin);
    await expect(api.call('status', {}, after)).rejects.toMatchObject({ kind: 'unauthenticated', refusal: { code: 'session.ended', params: { user: 'Ragnhild', why: 'disabled' } } });
    // `tilstand users disable` / `enable`, another process on site.db, end it too.
    const third = session();
    await api.call('signIn', { user: 'Ragnhild', secret: '2468' }, third);
    expect((await runMain(['users', 'disable', '--data', join(dir, 'data'), '--name', 'Ragnhild'])).code).toBe(0);
    expect((await runMain(['users', 'enable', '--data', join(dir, 'data'), '--name', 'Ragnhild'])).code).toBe(0);
    expect(await kindOf(api.call('status', {}, third))).toBe('unauthenticated');
  });

  it('signs out a session its screen has not been used at for ui.idleSignOutMs, whatever became of the page', async () => {
    // A service of its own over the site, on a clock of its own and never started: the site's
    // tick does not see that clock (its alarms keep their real times for the tests after this).
    let t = Date.now();
    const api = new SiteService(site, { now: () => t });
    const idle = site.config.ui.idleSignOutMs;
    expect(idle).toBe(600_000);
    const s = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, s, null);
    // The page's background refreshes say how long ago its last input was: up to the limit, in.
    t += idle - 1_000;
    expect(await kindOf(api.call('status', {}, s, idle - 1_000))).toBe('ok');
    // A touch within the limit (at its last ms), told by the next call only after the limit: the
    // call's input age moves the mark. (A touch after the limit is the next person's: below.)
    t += 2_000;
    expect(await kindOf(api.call('status', {}, s, 1_000))).toBe('ok');
    // A page opened again (closed, reloaded) has seen no input and says so: it says nothing of
    // Lena, so the limit runs from her last input on the page before.
    t += idle - 1_000;
    expect(await api.call('me', {}, s, null)).toEqual({ name: 'Lena', roles: ['shift_lead'] });
    t += 1_000;
    expect(api.signedIn(s)).toBe(false);
    expect(s.user).toBeNull();
    // The event push's check signed her out. The page's next call (`me`, which a reloaded page asks
    // first) says why, with the limit for the sign-in screen to say it in its own words; once.
    const why = { kind: 'unauthenticated', idleMs: idle, message: 'Lena was signed out after 10 min without use of the screen; sign in again' };
    await expect(api.call('me', {}, s, null)).rejects.toMatchObject(why);
    expect(await api.call('me', {}, s, null)).toBeNull();
    await expect(api.call('status', {}, s, 0)).rejects.toMatchObject({ kind: 'unauthenticated', message: 'sign in first', idleMs: undefined });
    // A page that refreshes on, long after its last input (its own timer kept from running): the
    // call that finds it says why, and nothing after it says so again.
    const r = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, r, 0);
    t += idle + 1;
    await expect(api.call('listProposals', {}, r, idle + 1)).rejects.toMatchObject(why);
    await expect(api.call('decide', { id: 'x', decision: 'reject' } as never, r, 0)).rejects.toMatchObject({ kind: 'unauthenticated', idleMs: undefined });
    expect(await api.call('me', {}, r, null)).toBeNull();
    // Signed out by the push's check, then a call other than `me` is the one told; signing in
    // again forgets a reason nobody was told.
    const q = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, q, 0);
    t += idle + 1;
    expect(api.signedIn(q)).toBe(false);
    await expect(api.call('status', {}, q, 0)).rejects.toMatchObject(why);
    await api.call('signIn', { user: 'Lena', secret: '2580' }, q, 0);
    t += idle + 1;
    expect(api.signedIn(q)).toBe(false);
    await api.call('signIn', { user: 'Lena', secret: '2580' }, q, 0);
    await api.call('signOut', {}, q, 0);
    expect(await api.call('me', {}, q, null)).toBeNull();
    // A caller outside the floor UI (no input age: a script on the HTTP API): each call is use.
    const script = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, script);
    t += idle - 1;
    expect(await kindOf(api.call('status', {}, script))).toBe('ok');
    t += idle - 1;
    expect(await kindOf(api.call('status', {}, script))).toBe('ok');
  });

  it('signs out a session idle past the limit though the first call after the silence reports a touch: the next person', async () => {
    let t = Date.now();
    const api = new SiteService(site, { now: () => t });
    const idle = site.config.ui.idleSignOutMs;
    const why = { kind: 'unauthenticated', idleMs: idle, message: 'Lena was signed out after 10 min without use of the screen; sign in again' };
    // Lena signs in and walks away; the page is kept from running (frozen, the PC asleep): no
    // timer, no refresh, no call for 30 minutes. The next person's touch says "input 50 ms ago".
    const s = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, s, 0);
    t += 30 * 60_000;
    await expect(api.call('configChanges', {}, s, 50)).rejects.toMatchObject(why);
    expect(s.user).toBeNull();
    // `me`, which a page asks first, the same; and a touch just past the limit.
    const m = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, m, 0);
    t += idle + 1_000;
    await expect(api.call('me', {}, m, 999)).rejects.toMatchObject(why);
    expect(await api.call('me', {}, m, 0)).toBeNull();
    // A caller outside the floor UI (no input age) has no screen, nor a next person at it: its call is use.
    const script = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, script);
    t += idle + 1_000;
    expect(await kindOf(api.call('status', {}, script))).toBe('ok');
  });

  it("raises an alarm for a stream whose events are stamped minutes after they arrived: a module's clock set ahead", async () => {
    const api = site.service;
    const s = session();
    await api.call('signIn', { user: 'Olav', secret: '1357' }, s);
    const t = Date.now();
    const fast = { module: 'commerce', stream: 'reservations', lastEventMs: t - 1_000, lastSeq: 7, clockAheadMs: 7 * 60_000, appliedSeq: 7, gap: null };
    // Two minutes is the line; a backlog (far behind) never raises it.
    const edge = { module: 'inventory', stream: 'stock', lastEventMs: t - 1_000, lastSeq: 9, clockAheadMs: 120_000, appliedSeq: 9, gap: null };
    const late = { module: 'procurement', stream: 'inbound', lastEventMs: t - 1_000, lastSeq: 3, clockAheadMs: -3_600_000, appliedSeq: 3, gap: null };
    const spy = vi.spyOn(site.ingestor, 'streamActivity').mockReturnValue([fast, edge, late]);
    try {
      const alarms = (await api.call('status', {}, s)).alarms.filter((a) => a.kind === 'clock_ahead');
      expect(alarms).toHaveLength(1);
      expect(alarms[0]!.message).toMatch(/^commerce\/reservations: its newest event is stamped 7 min after this PC received it — the module's clock \(or this PC's\) is set wrong\./);
      expect(alarms[0]!.sinceMs).toBe(t - 1_000);
      expect(formatStatus(site.status()).join('\n')).toMatch(/ALARM clock_ahead \(for [\d.]+ s\): commerce\/reservations: /);
    } finally {
      spy.mockRestore();
    }
    // The demo modules' clocks are this PC's: none of its streams raises it.
    expect((await api.call('status', {}, s)).alarms.filter((a) => a.kind === 'clock_ahead')).toEqual([]);
  });

  it('raises an alarm for a stream silent longer than config alarms.streamSilentMs allows (the demo: 10 min)', async () => {
    const api = site.service;
    const s = session();
    await api.call('signIn', { user: 'Olav', secret: '1357' }, s);
    const t = Date.now();
    const quiet = { module: 'procurement', stream: 'inbound', lastEventMs: t - 11 * 60_000, lastSeq: 41, clockAheadMs: -40, appliedSeq: 41, gap: null };
    // Busy, but seq 897..899 went missing: 900 waits for them.
    const busy = { module: 'inventory', stream: 'stock', lastEventMs: t - 5_000, lastSeq: 900, clockAheadMs: -15, appliedSeq: 896, gap: { from: 897, to: 899, sinceMs: t - 5_000, skipAtMs: t + 295_000 } };
    const never = { module: 'operations', stream: 'jobs', lastEventMs: null, lastSeq: null, clockAheadMs: null, appliedSeq: 30, gap: null };
    const spy = vi.spyOn(site.ingestor, 'streamActivity').mockReturnValue([quiet, busy, never]);
    try {
      const silent = (await api.call('status', {}, s)).alarms.filter((a) => a.kind === 'stream_silent');
      expect(silent).toEqual([
        {
          kind: 'stream_silent',
          message: `procurement/inbound: no event for 11 min (the last was seq 41 at ${new Date(t - 11 * 60_000).toISOString()}; allowed 10 min) — is the module running and connected? Its rows stay as they were`,
          sinceMs: t - 60_000,
          // The values a UI words the alarm with in its reader's language.
          params: { stream: 'procurement/inbound', silentMs: expect.any(Number), allowedMs: 600_000 },
        },
      ]);
      expect(silent[0]!.params!.silentMs).toBeGreaterThanOrEqual(11 * 60_000);
      // A stream that has said nothing since the site started counts from the start.
      const started = site.startedAtMs;
      const later = started + 10 * 60_000 + 1;
      const svc = site.service as unknown as { now: () => number };
      const realNow = svc.now;
      svc.now = () => later;
      try {
        const withNever = (await api.call('status', {}, s)).alarms.filter((a) => a.kind === 'stream_silent').map((a) => a.message.split(':')[0]);
        expect(withNever).toContain('operations/jobs');
      } finally {
        svc.now = realNow;
      }
      // `tilstand status` lists every stream with its last event and the silence it is allowed.
      const st = site.status();
      expect(st.streams).toContainEqual({ stream: 'procurement/inbound', lastEventMs: quiet.lastEventMs, lastSeq: 41, clockAheadMs: -40, appliedSeq: 41, gap: null, silentAllowedMs: 600_000, silent: true });
      expect(formatStatus(st).join('\n')).toMatch(/procurement\/inbound +11\.0 min ago +41 +41 +10\.0 min silent/);
      expect(formatStatus(st).join('\n')).toMatch(/operations\/jobs +none since start +– +30/);
      // Events held behind a gap: what is missing, since when, and when it is given up.
      expect(formatStatus(st).join('\n')).toMatch(/^ {2}inventory\/stock: later events wait for seqs 897\.\.899, missing for [\d.]+ s: asked for again from inventory; skipped in [\d.]+ (s|min) if they do not come \(later events of a row repair it\)$/m);
      expect(formatStatus(st).join('\n')).not.toMatch(/procurement\/inbound: later events wait/);
      // The journal's checkpoint is what a restart re-reads, not events missing from the tables.
      expect(formatStatus(st).join('\n')).toMatch(/^journal: position \d+, every table committed through \d+ \(a restart re-reads the \d+ after it; not yet visible: the tables' pending\), [\d.]+ MiB$/m);
    } finally {
      spy.mockRestore();
    }
    // The real streams of the demo site: each that delivered has a receive time and seq.
    const real = site.ingestor.streamActivity();
    expect(real.map((x) => `${x.module}/${x.stream}`)).toEqual(expect.arrayContaining(['inventory/stock', 'operations/jobs']));
    for (const x of real.filter((x) => x.lastEventMs !== null)) expect(x.lastSeq).toBeGreaterThan(0);
  });

  it('dismissDeadLetters: a shift lead closes letters under their own name with a note; an operator may not, a viewer not even replay; the alarm clears', async () => {
    const api = site.service;
    const lead = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, lead);
    const op = session();
    await api.call('signIn', { user: 'Olav', secret: '1357' }, op);
    const inv = readModuleSecrets(join(dir, 'data', 'secrets', 'modules.json')).modules.inventory!;
    const c = await mqtt.connectAsync(site.mqttUrl, { username: inv.username, password: inv.password, clientId: 'inventory-dismiss-test', protocolVersion: 4 });
    await c.publishAsync('tilstand/demo/events/inventory/stock', 'not an event', { qos: 1 });
    await c.endAsync();
    const open = (await api.call('deadLetters', { status: 'open' }, lead)).filter((d) => d.payload === 'not an event');
    expect(open).toHaveLength(1);
    expect(open[0]).toMatchObject({ status: 'open', dismissed: null });
    expect((await api.call('status', {}, lead)).alarms.find((a) => a.kind === 'dead_letters')).toMatchObject({ message: 'dead letters waiting for a look: 1', params: { n: 1 } });
    const ids = [open[0]!.id];
    expect(await kindOf(api.call('dismissDeadLetters', { ids, note: 'a test' }, op))).toBe('forbidden');
    // A viewer only looks: replaying writes the state tables.
    await site.users.add({ name: 'Vera', role: 'viewer', pin: '8642' });
    const viewer = session();
    await api.call('signIn', { user: 'Vera', secret: '8642' }, viewer);
    expect(await kindOf(api.call('replayDeadLetters', { ids }, viewer))).toBe('forbidden');
    expect(await kindOf(api.call('deadLetters', {}, viewer))).toBe('ok');
    expect(await kindOf(api.call('dismissDeadLetters', { ids, note: '   ' }, lead))).toBe('invalid');
    expect(await kindOf(api.call('dismissDeadLetters', { ids: [], note: 'a test' }, lead))).toBe('invalid');
    expect(await api.call('dismissDeadLetters', { ids: [...ids, '999999999'], note: ' the module vendor testing ' }, lead)).toEqual({ dismissed: 1, notOpen: ['999999999'] });
    const [d] = (await api.call('deadLetters', { status: 'dismissed' }, lead)).filter((x) => x.id === ids[0]);
    expect(d).toMatchObject({ status: 'dismissed', dismissed: { by: 'Lena', note: 'the module vendor testing', atMs: expect.any(Number) } });
    expect((await api.call('status', {}, lead)).alarms.map((a) => a.kind)).not.toContain('dead_letters');
    expect(readFileSync(join(dir, 'data', 'logs', 'site.log'), 'utf8')).toMatch(/dead letters: 1 dismissed by Lena \(floor UI\): "the module vendor testing"/);
    // The screen's list (no status) puts the open letters first, then the closed ones newest
    // first: a new open letter is listed even when the cut would otherwise end in older ones.
    const c2 = await mqtt.connectAsync(site.mqttUrl, { username: inv.username, password: inv.password, clientId: 'inventory-dismiss-test', protocolVersion: 4 });
    await c2.publishAsync('tilstand/demo/events/inventory/stock', 'still not an event', { qos: 1 });
    await c2.endAsync();
    const listed = await api.call('deadLetters', {}, lead);
    const later = listed.find((x) => x.payload === 'still not an event')!;
    expect(later.status).toBe('open');
    expect(BigInt(later.id)).toBeGreaterThan(BigInt(ids[0]!));
    const firstClosed = listed.findIndex((x) => x.status !== 'open');
    expect(listed.slice(0, firstClosed === -1 ? listed.length : firstClosed).every((x) => x.status === 'open')).toBe(true);
    expect(listed.slice(firstClosed).every((x) => x.status !== 'open')).toBe(true);
    const closedIds = listed.slice(firstClosed).map((x) => BigInt(x.id));
    expect(closedIds).toEqual([...closedIds].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
    expect(closedIds).toContain(BigInt(ids[0]!));
    expect((await api.call('deadLetters', { limit: 1 }, lead)).map((x) => x.status)).toEqual(['open']);
    // `alike`: one note closes every other open letter of the same topic and reason, listed or
    // not; a letter of another reason stays open.
    const c3 = await mqtt.connectAsync(site.mqttUrl, { username: inv.username, password: inv.password, clientId: 'inventory-dismiss-test', protocolVersion: 4 });
    for (const junk of ['junk 1', 'junk 2']) await c3.publishAsync('tilstand/demo/events/inventory/stock', junk, { qos: 1 });
    for (const empty of ['{}', '{ }']) await c3.publishAsync('tilstand/demo/events/inventory/stock', empty, { qos: 1 });
    await c3.endAsync();
    const openNow = await api.call('deadLetters', { status: 'open' }, lead);
    const other = openNow.find((x) => x.payload === '{}')!;
    expect(other.reason).not.toBe(later.reason);
    const alike = openNow.filter((x) => x.reason === later.reason && x.topic === later.topic).map((x) => x.id).sort();
    expect(alike.length).toBeGreaterThanOrEqual(3);
    expect(await api.call('dismissDeadLetters', { ids: [later.id], note: 'the vendor test run', alike: true }, lead)).toEqual({ dismissed: alike.length, notOpen: [] });
    const after = await api.call('deadLetters', {}, lead);
    for (const id of alike) expect(after.find((x) => x.id === id)).toMatchObject({ status: 'dismissed', dismissed: { by: 'Lena', note: 'the vendor test run' } });
    expect(after.find((x) => x.id === other.id)!.status).toBe('open');
    // Replay `alike`: anyone but a viewer re-runs the letters like one (its topic and reason), and
    // the site's log says who. These two are still no events: they stay open.
    const empties = openNow.filter((x) => x.reason === other.reason && x.topic === other.topic);
    expect(empties.map((x) => x.payload).sort()).toEqual(['{ }', '{}']);
    expect(await kindOf(api.call('replayDeadLetters', { alike: true }, op))).toBe('invalid');
    expect(await api.call('replayDeadLetters', { ids: [other.id], alike: true }, op)).toEqual({ replayed: 0, failed: 2, notOpen: [], alike: 1 });
    expect((await api.call('deadLetters', { status: 'open' }, lead)).map((x) => x.id).sort()).toEqual(empties.map((x) => x.id).sort());
    expect(readFileSync(join(dir, 'data', 'logs', 'site.log'), 'utf8')).toMatch(/dead letters: 0 replayed, 2 still failing, by Olav \(floor UI, with the open ones alike\)/);
  });

  it('raises module_refused and logs it when the broker refuses a module: a publish to a topic it may not, a wrong password', async () => {
    const api = site.service;
    const s = session();
    await api.call('signIn', { user: 'Olav', secret: '1357' }, s);
    const inv = readModuleSecrets(join(dir, 'data', 'secrets', 'modules.json')).modules.inventory!;
    // The module's installer typed another site's id into its topics.
    const wrong = 'tilstand/site-7/events/inventory/stock';
    for (let i = 0; i < 2; i++) {
      const c = mqtt.connect(site.mqttUrl, { username: inv.username, password: inv.password, clientId: `inventory-test-${i}`, protocolVersion: 4, reconnectPeriod: 0 });
      c.on('error', () => undefined);
      await new Promise<void>((resolve, reject) => {
        c.once('connect', () => resolve());
        c.once('close', () => reject(new Error('closed before connect')));
      });
      const gone = new Promise<void>((resolve) => c.once('close', () => resolve()));
      c.publish(wrong, '{}', { qos: 1 });
      await gone; // MQTT 3.1.1 has no negative PUBACK: the broker closes the connection
    }
    const bad = mqtt.connect(site.mqttUrl, { username: 'procurement', password: 'not-its-password', protocolVersion: 4, reconnectPeriod: 0 });
    bad.on('error', () => undefined);
    await new Promise<void>((resolve) => bad.once('close', () => resolve()));
    const alarms = (await api.call('status', {}, s)).alarms.filter((a) => a.kind === 'module_refused');
    expect(alarms.map((a) => a.message)).toEqual([
      expect.stringMatching(/^connections as "procurement" refused: once \(bad username or password\) — its events are not received; check the username and password/),
      expect.stringMatching(/^publishes by "inventory" refused: 2 times, the latest to tilstand\/site-7\/events\/inventory\/stock, which it may not publish to — its events on that topic are not received; a module publishes to tilstand\/demo\/events\/<module>\/<stream>/),
    ]);
    expect(formatStatus(site.status()).join('\n')).toMatch(/ALARM module_refused \(for [^)]+\): publishes by "inventory" refused/);
    expect(formatStatus(site.status()).join('\n')).toMatch(/publishes refused 2,/);
    // The log has the first refusal of each; the second publish falls within the report period.
    const log = readFileSync(join(dir, 'data', 'logs', 'site.log'), 'utf8');
    expect(log.match(/broker: refused once a publish by "inventory" to tilstand\/site-7\/events\/inventory\/stock, which it may not publish to: /g)).toHaveLength(1);
    expect(log).toMatch(/broker: refused once a connection as "procurement": bad username or password: /);
    // Ten minutes after the last refusal the alarm is gone.
    const svc = site.service as unknown as { now: () => number };
    const realNow = svc.now;
    svc.now = () => Date.now() + 10 * 60_000 + 1_000;
    try {
      expect((await api.call('status', {}, s)).alarms.filter((a) => a.kind === 'module_refused')).toEqual([]);
    } finally {
      svc.now = realNow;
    }
  });

  it('raises an alarm for a stream that delivers only duplicates, one per stream whatever its counts say', async () => {
    const api = site.service;
    const s = session();
    await api.call('signIn', { user: 'Olav', secret: '1357' }, s);
    const t = Date.now();
    // The wall times are an hour apart (a clock step within the run); the duration is the monotonic span.
    const run = { module: 'inventory', stream: 'stock', count: 120, firstMs: t - 300_000 - 3_600_000, lastMs: t, spanMs: 300_000, lowSeq: 1, highSeq: 120, issued: 1436 };
    const spy = vi.spyOn(site.ingestor, 'stuckStreams').mockReturnValue([run]);
    try {
      const first = (await api.call('status', {}, s)).alarms.filter((a) => a.kind === 'stream_only_duplicates');
      expect(first).toEqual([
        {
          kind: 'stream_only_duplicates',
          message: expect.stringMatching(/^inventory\/stock: 120 events in 5 min, seq 1…120, all at or below 1436 \(already applied\) and dropped — did the module's sequence go back/),
          sinceMs: t - 300_000 - 3_600_000,
        },
      ]);
      spy.mockReturnValue([{ ...run, count: 130, lastMs: t + 10_000 }]);
      const second = (await api.call('status', {}, s)).alarms.filter((a) => a.kind === 'stream_only_duplicates');
      expect(second.map((a) => a.sinceMs)).toEqual([t - 300_000 - 3_600_000]);
      // `tilstand status` (the control socket) asked first: the app still gets its alarm event.
      expect(site.status().alarms).toContainEqual(expect.objectContaining({ kind: 'stream_only_duplicates' }));
      const events: SiteEvent[] = [];
      const off = api.subscribe((e) => events.push(e));
      try {
        for (let k = 0; k < 60 && !events.some((e) => e.type === 'status'); k++) {
          site.service.tick();
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        off();
      }
      expect(events.filter((e) => e.type === 'alarm').map((e) => (e as { alarm: { kind: string } }).alarm.kind)).toContain('stream_only_duplicates');
    } finally {
      spy.mockRestore();
    }
    expect((await api.call('status', {}, s)).alarms.filter((a) => a.kind === 'stream_only_duplicates')).toEqual([]);
  });

  // Last in this file: it adds a stock row (ITEM-NEG) the tests before do not expect.
  it("counts a negative reserved or inbound (a module's correction) as 0 in available and projected, as the agent does for the row's below flag", async () => {
    const api = site.service;
    const s = session();
    await api.call('signIn', { user: 'Lena', secret: '2580' }, s);
    const streams = [
      { module: 'inventory', stream: 'stock', contract: 'inventory.stock', after: { item: 'ITEM-NEG', location: 'NEG-01', qty: 3 } },
      { module: 'commerce', stream: 'reservations', contract: 'commerce.reservations', after: { item: 'ITEM-NEG', location: 'NEG-01', reserved_qty: -4 } },
      { module: 'procurement', stream: 'inbound', contract: 'procurement.inbound', after: { item: 'ITEM-NEG', location: 'NEG-01', inbound_qty: -3, next_due_at: null } },
    ];
    // Each demo module's snapshot (80 rows) applied, nothing held: the next seq is the stream's own.
    const activity = (module: string, stream: string) => site.ingestor.streamActivity().find((a) => a.module === module && a.stream === stream);
    const settled = () => streams.every((x) => (activity(x.module, x.stream)?.appliedSeq ?? 0) >= 80 && activity(x.module, x.stream)?.gap === null);
    for (let i = 0; i < 100 && !settled(); i++) await new Promise((r) => setTimeout(r, 100));
    expect(settled(), 'the demo modules delivered their snapshots').toBe(true);
    for (const x of streams) {
      const seq = activity(x.module, x.stream)!.appliedSeq + 1;
      const envelope = { op: 'c', before: null, after: x.after, source: { module: x.module, stream: x.stream, seq }, ts_ms: Date.now(), contract: { name: x.contract, version: 1 } };
      await site.ingestor.accept(`tilstand/demo/events/${x.module}/${x.stream}`, Buffer.from(JSON.stringify(envelope)));
    }
    site.ingestor.commitAll();
    const [row] = await api.call('stock', { search: 'ITEM-NEG' }, s);
    // The raw values as the modules sent them; available 3 − 0 and projected 3 + 0, not 7 and 4:
    // 7 available on a row marked below its reorder point of 5 contradicted itself.
    expect(row).toMatchObject({ item: 'ITEM-NEG', location: 'NEG-01', on_hand: 3, reserved: -4, inbound: -3, available: 3, projected: 3, reorder_point: 5, below_reorder_point: true });
    expect((await api.call('stock', { below: true, search: 'ITEM-NEG' }, s)).map((r) => r.item)).toEqual(['ITEM-NEG']);
  });
});
