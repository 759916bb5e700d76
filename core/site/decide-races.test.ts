// Two shift leads deciding the same proposal from two PCs at once (two sessions of the site API).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readDecisionLog } from '../inbox/index.ts';
import { demoConfig } from './demo/site.ts';
import { initDataDir } from './init.ts';
import { DEMO_ADMIN, Site } from './site.ts';
import { session } from './test-support/session.ts';

let dir: string;
let site: Site;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-decide-races-'));
  await initDataDir({ data: join(dir, 'data'), site: 'demo', config: (c) => demoConfig(c), admin: DEMO_ADMIN });
  site = await Site.start({ data: join(dir, 'data'), demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, agentTimer: false, ui: false });
  await site.users.add({ name: 'Lena', role: 'shift_lead', pin: '2580' });
  await site.users.add({ name: 'Per', role: 'shift_lead', pin: '1470' });
  // Bounded wait (200 × 100 ms) for the demo modules' first work queue, for the agent's proposals.
  for (let i = 0; i < 200; i++) {
    site.ingestor.commitAll();
    if (site.catalog.getTable({ database: 'site_demo', table: 'work_queue' }).scanRows().length >= 30) break;
    await new Promise((r) => setTimeout(r, 100));
  }
}, 60_000);

afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('two shift leads deciding one proposal at once from two PCs: one decision stands, the other is told so (conflict); one log entry, a command only for an approval', async () => {
  const api = site.service;
  const lena = session('10.0.0.1');
  const per = session('10.0.0.2');
  await api.call('signIn', { user: 'Lena', secret: '2580' }, lena);
  await api.call('signIn', { user: 'Per', secret: '1470' }, per);
  site.runAgent();
  const open = (await api.call('listProposals', { status: ['open'] }, lena)).filter((p) => p.module);
  const pairs = [['approve', 'approve'], ['approve', 'reject'], ['reject', 'approve'], ['defer', 'approve'], ['approve', 'defer']] as const;
  expect(open.length).toBeGreaterThanOrEqual(pairs.length);
  const outcomes = { approve: 'approved', reject: 'rejected', defer: 'deferred' } as const;
  for (const [k, [a, b]] of pairs.entries()) {
    const id = open[k]!.id;
    const results = await Promise.allSettled([api.call('decide', { id, decision: a }, lena), api.call('decide', { id, decision: b }, per)]);
    const done = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ who: i === 0 ? 'Lena' : 'Per', outcome: r.value.outcome }] : []));
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as { kind?: string; message: string; refusal?: { code?: string; params?: Record<string, unknown> } }] : []));
    // Before: an approval and a deferral at once were both answered as done, the approval over the deferral.
    expect(done, `${a} / ${b}`).toHaveLength(1);
    expect(refused[0]!.kind, `${a} / ${b}`).toBe('conflict');
    const p = site.decisions!.inbox.get(id)!;
    expect(p.status).toBe(done[0]!.outcome);
    // The refusal's code tells the floor UI which: decided for good (notOpen), or deferred by the
    // other lead meanwhile and still to decide (decidedMeanwhile, naming who).
    expect(refused[0]!.refusal, `${a} / ${b}`).toEqual(
      p.status === 'deferred' ? { code: 'proposal.decidedMeanwhile', params: { id, status: 'deferred', by: done[0]!.who } } : { code: 'proposal.notOpen', params: { id, status: p.status } },
    );
    expect(p.decision!.by).toBe(done[0]!.who);
    expect(p.command !== null).toBe(p.status === 'approved');
    const decisions = readDecisionLog(site.decisions!.inbox.logTable, id).filter((e) => (Object.values(outcomes) as string[]).includes(e.event));
    expect(decisions.map((e) => `${e.event}:${e.actor}`)).toEqual([`${done[0]!.outcome}:${done[0]!.who}`]);
  }
}, 60_000);
