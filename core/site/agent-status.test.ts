// The site's status says how often the agent looks and when it last did (`SiteStatus.agent`): the
// empty inbox and `tilstand status` say so, so a shift lead facing an empty inbox sees the agent is
// alive. A run with nothing new commits nothing, so approval_inbox's last commit is not the last run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runMain as run } from './cli/test-support.ts';
import { initDataDir } from './init.ts';
import { readConfig, writeConfig } from './config.ts';
import { Site } from './site.ts';
import type { SiteStatus } from './status.ts';

let dir: string;
const closers: (() => unknown)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-agent-status-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of closers.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

const SINCE = '2026-12-05T06:30:00.000';
const event = (stream: string, seq: number, after: Record<string, unknown>) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after, source: { module: 'operations', stream, seq }, ts_ms: Date.now(), contract: { name: `operations.${stream}`, version: 1 } }));

describe("the agent in the site's status", () => {
  it('without its timers: says so, no run yet; a run (one with nothing new too) sets the last run, also in Site.status; a step of the wall clock does not age it', async () => {
    // The PC's wall clock, stepped at will (every part of the site reads it); the monotonic runs on.
    const realNow = Date.now.bind(Date);
    let step = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + step);
    const data = join(dir, 'off');
    await initDataDir({ data, site: 'ag' });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    closers.push(() => site.stop());
    expect(site.service.status().agent).toEqual({ intervalMs: 60_000, timer: false, lastRunMs: null });
    expect(site.status().agent).toEqual({ intervalMs: 60_000, timer: false, lastRunMs: null });

    // An empty floor, run again: nothing to propose, nothing committed to approval_inbox — still a run.
    expect(site.runAgent().created).toEqual([]);
    const inboxSnapshot = () => site.decisions!.inbox.table.latestSnapshot()?.id ?? null;
    const before = inboxSnapshot();
    const t0 = Date.now();
    expect(site.runAgent().created).toEqual([]);
    const t1 = Date.now();
    expect(inboxSnapshot()).toBe(before);
    const first = site.service.status().agent!.lastRunMs!;
    // The monotonic clock's ms against the wall clock's: a ms either way.
    expect(first).toBeGreaterThanOrEqual(t0 - 1);
    expect(first).toBeLessThanOrEqual(t1 + 1);
    expect(site.status().agent).toMatchObject({ timer: false, lastRunMs: expect.any(Number) });

    // The wall clock an hour ahead: the run was not an hour ago.
    step = 3_600_000;
    const st = site.service.status();
    expect(st.nowMs - st.agent!.lastRunMs!).toBeLessThan(1_000);
    expect(st.nowMs - st.agent!.lastRunMs!).toBeGreaterThanOrEqual(0);
  }, 30_000);

  it('a later run advances the last run; the checks between runs do not count as one', async () => {
    // The monotonic clock, moved at will: a minute passes between the runs.
    const realMono = performance.now.bind(performance);
    let later = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => realMono() + later);
    const data = join(dir, 'runs');
    await initDataDir({ data, site: 'ag' });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    closers.push(() => site.stop());
    // A released pick job and a free pick machine: the run proposes the assignment.
    await site.ingestor.accept('tilstand/ag/events/operations/jobs', event('jobs', 1, { job_id: 'J-1', status: 'released', capability: 'pick', priority: 5 }));
    await site.ingestor.accept('tilstand/ag/events/operations/resources', event('resources', 1, { resource_id: 'M-1', kind: 'machine', capability: 'pick', state: 'free', since: SINCE }));
    site.ingestor.commitAll();
    expect(site.runAgent().created.length).toBeGreaterThan(0);
    expect(site.service.status().agent!.lastRunMs).not.toBeNull();

    later = 60_000;
    // The job starts on the machine: the check between runs withdraws the proposal (it submits to
    // the inbox, as a run does), and is no run.
    await site.ingestor.accept('tilstand/ag/events/operations/jobs', event('jobs', 2, { job_id: 'J-1', status: 'in_progress', capability: 'pick', priority: 5, assigned_resource: 'M-1' }));
    site.ingestor.commitAll();
    expect(site.decisions!.agent.recheckChanged().withdrawn.length).toBeGreaterThan(0);
    const afterCheck = site.service.status();
    expect(afterCheck.nowMs - afterCheck.agent!.lastRunMs!).toBeGreaterThanOrEqual(59_000);

    site.runAgent();
    const second = site.service.status();
    expect(second.agent!.lastRunMs! - afterCheck.agent!.lastRunMs!).toBeGreaterThanOrEqual(59_000);
    expect(second.nowMs - second.agent!.lastRunMs!).toBeLessThan(1_000);
  }, 30_000);

  it("with its timers: a run at the start; the interval follows config.json's agent.intervalMs through a reload", async () => {
    const data = join(dir, 'on');
    await initDataDir({ data, site: 'ag' });
    const t0 = Date.now();
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false });
    closers.push(() => site.stop());
    const a = site.service.status().agent!;
    expect(a).toMatchObject({ intervalMs: 60_000, timer: true });
    expect(a.lastRunMs).toBeGreaterThanOrEqual(t0 - 1);

    writeConfig(data, { ...readConfig(data), agent: { ...readConfig(data).agent, intervalMs: 15_000 } });
    expect((await site.reloadConfig()).applied).toContain('agent');
    expect(site.service.status().agent!.intervalMs).toBe(15_000);
    expect(site.status().agent!.intervalMs).toBe(15_000);
  }, 30_000);
});

const agentLines = (out: string) => out.split('\n').filter((l) => l.startsWith('agent: ') && !/^agent: \d+ rules?,/.test(l));

describe('tilstand status: the agent', () => {
  it("of a running site: how often it looks and when it last did, asked over the control socket; of a stopped one, nothing", async () => {
    const data = join(dir, 'cli');
    await initDataDir({ data, site: 'ag', scrypt: { N: 1024, r: 8, p: 1 } });
    // Nothing misleading from the directory alone: no agent runs.
    const stopped = await run(['status', '--data', data]);
    expect([stopped.code, stopped.err]).toEqual([0, '']);
    expect(agentLines(stopped.out)).toEqual([]);
    expect((JSON.parse((await run(['status', '--data', data, '--json'])).out) as SiteStatus).agent).toBeUndefined();

    let site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    try {
      expect(agentLines((await run(['status', '--data', data])).out)).toEqual(['agent: does not run on its own (started with --no-agent-timer): only when asked (tilstand agent run)']);
      site.runAgent();
      expect(agentLines((await run(['status', '--data', data])).out)).toEqual([
        expect.stringMatching(/^agent: does not run on its own \(started with --no-agent-timer\): only when asked \(tilstand agent run\); last at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, [\d.]+ (ms|s) ago$/),
      ]);
    } finally {
      await site.stop();
    }
    writeConfig(data, { ...readConfig(data), agent: { ...readConfig(data).agent, intervalMs: 90_000 } });
    site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false });
    try {
      const r = await run(['status', '--data', data]);
      expect(agentLines(r.out)).toEqual([expect.stringMatching(/^agent: looks every 90 s; last at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, [\d.]+ (ms|s) ago$/)]);
      const j = JSON.parse((await run(['status', '--data', data, '--json'])).out) as SiteStatus;
      expect(j.agent).toMatchObject({ intervalMs: 90_000, timer: true, lastRunMs: expect.any(Number) });
      expect(j.nowMs - j.agent!.lastRunMs!).toBeGreaterThanOrEqual(0);
    } finally {
      await site.stop();
    }
  }, 60_000);
});
