// A replay opens the fixture's inbox at the cut as a restart does, and its agent walks the open
// proposals as the live one did. Opened, the inbox listed them in the table's key order, proposal
// ids as strings (`…-10` before `…-2`), where the live inbox had them in creation order: of two open
// proposals that claim one resource another won, and the replay proposed an assignment the live
// site never made (core/agents open-order-restart.test.ts, core/inbox active-order-restart.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { situationKey, type ProposalInput } from '../inbox/index.ts';
import type { DemoEvent } from './demo-events.ts';
import { exportFixture } from './export.ts';
import { defaultScratchParent, runReplay } from './replay.ts';
import { LiveSite, T0 } from './test-support.ts';

const MIN = 60_000;
const dir = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-open-order-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 23);
const seqs = new Map<string, number>();

function event(atMs: number, stream: 'jobs' | 'resources', after: object): DemoEvent {
  const seq = (seqs.get(stream) ?? 0) + 1;
  seqs.set(stream, seq);
  const envelope = { op: 'r', before: null, after, source: { module: 'operations', stream, seq }, ts_ms: atMs, contract: { name: `operations.${stream}`, version: 1 } };
  return { topic: `tilstand/s1/events/operations/${stream}`, payload: Buffer.from(JSON.stringify(envelope)), atMs };
}

const job = (atMs: number, id: string, priority: number) =>
  event(atMs, 'jobs', { job_id: id, status: 'released', blocked_reason: null, capability: 'pick', material_item: null, material_qty: null, priority, due_at: iso(T0 + 48 * 3600_000), assigned_resource: null });
const resource = (atMs: number, id: string, capability: string) => event(atMs, 'resources', { resource_id: id, kind: 'team', capability, state: 'free', since: iso(atMs) });

function input(runId: string, name: string, resourceId: string | null): ProposalInput {
  const assign = resourceId !== null;
  return {
    situationKey: assign ? situationKey('assign-job', 'assign_job', { job_id: name }) : situationKey('test-note', 'note', { note: name }),
    ruleId: assign ? 'assign-job' : 'test-note',
    ruleVersion: assign ? '5' : '1',
    action: assign ? 'assign_job' : 'note',
    module: assign ? 'operations' : null,
    params: assign ? { job_id: name, resource_id: resourceId } : { note: name },
    risk: 'low',
    riskReason: 'reversible',
    explanation: `${name} ${resourceId ?? ''}`,
    evidence: [],
    runId,
  };
}

it('of two open proposals at the cut that claim one resource, the replay keeps the one the live site kept', async () => {
  const site = new LiveSite();
  let live: string[];
  let fixture: string;
  try {
    site.receive([resource(T0 + 100, 'R1', 'pick'), resource(T0 + 100, 'R2', 'pick'), job(T0 + 100, 'J02', 3), job(T0 + 100, 'J20', 2), job(T0 + 100, 'J10', 1)]);
    await site.advance(T0 + 30_000);
    // Proposals 2 and 10 of one run name R1 (as assign-job v2 could leave them, or a rule of the
    // site's own), among notices of a rule the agent does not run.
    const run = 'earlier-run';
    const proposals = Array.from({ length: 11 }, (_, i) => (i + 1 === 2 ? input(run, 'J02', 'R1') : i + 1 === 10 ? input(run, 'J10', 'R1') : input(run, `N${i + 1}`, null)));
    site.inbox.submit({ runId: run, proposals, withdrawals: [] });
    await site.advance(T0 + 90_000);
    site.receive([resource(T0 + 100_000, 'R3', 'pack')]);
    await site.advance(T0 + 4 * MIN);
    live = site.runs.filter((r) => r.atMs > T0 + 90_000).flatMap((r) => r.created.map((p) => `${p.ruleId} ${JSON.stringify(p.params)}`));
    site.close();
    fixture = join(dir, 'fixture');
    await exportFixture({ data: site.dir, tag: 'open-order', untilMs: T0 + 4 * MIN, atMs: T0 + 90_000, out: fixture });
  } finally {
    site.remove();
  }
  const r = await runReplay({ fixture, out: join(dir, 'run') });
  expect(r.manifest.counts.agentRuns).toBeGreaterThan(0);
  // Live: R1 stays J10's (proposal 10, the later claim); J02's draft takes R2 and is its open
  // proposal's duplicate; J20 gets no resource.
  expect(live).not.toContain(`assign-job ${JSON.stringify({ job_id: 'J20', resource_id: 'R2' })}`);
  expect(r.proposals.map((p) => `${p.ruleId} ${JSON.stringify(p.params)}`)).toEqual(live);
}, 120_000);
