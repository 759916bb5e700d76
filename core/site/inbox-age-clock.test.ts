// The approval inbox's age in the site's status and /metrics when the PC's wall clock steps (NTP
// after a cold boot, a person setting the time): the agent counts it on the monotonic clock
// (core/agents inbox-age-clock.test.ts), so an hour's step forward raises no budget_breach for a
// commit checked a moment late, and the age stays what it was.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

let dir: string;
const closers: (() => unknown)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-inbox-age-clock-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of closers.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

const job = (seq: number, id: string) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after: { job_id: id, status: 'released', capability: 'forklift', priority: 5 }, source: { module: 'operations', stream: 'jobs', seq }, ts_ms: Date.now(), contract: { name: 'operations.jobs', version: 1 } }));

describe("the approval inbox's age across a step of the wall clock", () => {
  it('an hour forward: no breach, the age as before; the metric agrees', async () => {
    // The PC's wall clock, stepped at will: every part of the site reads it (the agent, the
    // service, the snapshots' times); performance.now, the monotonic clock, runs on.
    const realNow = Date.now.bind(Date);
    let step = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + step);
    const data = join(dir, 'ic');
    await initDataDir({ data, site: 'ic' });
    // The agent's timers off (the test checks when it likes), the inbox's row shown as with them.
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    closers.push(() => site.stop());
    const agent = site.decisions!.agent;
    vi.spyOn(agent, 'keepsInboxCurrent', 'get').mockReturnValue(true);
    // A run checks work_queue through its first commit; the second is not checked yet.
    await site.ingestor.accept('tilstand/ic/events/operations/jobs', job(1, 'J-1'));
    site.ingestor.commitAll();
    agent.run();
    await site.ingestor.accept('tilstand/ic/events/operations/jobs', job(2, 'J-2'));
    site.ingestor.commitAll();
    expect(agent.oldestUncheckedCommitMs()).not.toBeNull();
    const inboxRow = () => site.service.status().tables.find((t) => t.table === 'approval_inbox')!;
    const before = inboxRow();
    expect(before.withinBudget).toBe(true);
    expect(before.ageMs).toBeLessThan(1_000);

    step = 3_600_000;
    const st = site.service.status();
    const row = st.tables.find((t) => t.table === 'approval_inbox')!;
    expect(row.ageMs).toBeLessThan(1_000); // was 3,600,000 and more
    expect(row.withinBudget).toBe(true);
    expect(st.alarms.filter((a) => a.kind === 'budget_breach')).toEqual([]);
    const metric = /^tilstand_inbox_age_ms\{[^}]*\} (\d+)$/m.exec(site.metrics());
    expect(Number(metric![1])).toBeLessThan(1_000);

    // Checked: nothing behind.
    agent.recheckChanged();
    expect(site.service.status().tables.find((t) => t.table === 'approval_inbox')!.ageMs).toBe(0);
  }, 30_000);
});
