// Counts in what `tilstand replay …` prints and its gate says, in the singular for one: "1 event",
// "1 decision", "1 live proposal", "1 agent run", "1 proposal added, removed or changed", "threw 1
// time" (they said "1 events", …, "time(s)"). The export and run lines through the commands on a
// live site where a count is the events of the period, and through the functions that make them
// for the counts a short fixture cannot reach cheaply (proposals, decisions, agent runs).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportedLine, replayedLine } from './cli.ts';
import { DemoEvents } from './demo-events.ts';
import { diffRuns, loadRun, type LoadedRun } from './diff.ts';
import { RUN_FORMAT } from './fixture.ts';
import { progressBar } from './progress.ts';
import { defaultScratchParent, type RunManifest } from './replay.ts';
import { LiveSite, replayCli, T0 } from './test-support.ts';

let site: LiveSite;
let work: string;

beforeAll(async () => {
  site = new LiveSite();
  // The initial state before the cut (T0 + 10 s); after it one event at +12 s and one at +25 s.
  const events = new DemoEvents({ site: site.site, seed: 7 }).initial(T0 + 100);
  const [a, b] = events.splice(-2);
  site.receive([...events, { ...a!, atMs: T0 + 12_000 }, { ...b!, atMs: T0 + 25_000 }]);
  await site.advance(T0 + 30_000);
  site.close();
  work = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-singular-'));
}, 60_000);

afterAll(() => {
  site?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('replay export and run say one event', () => {
  it('"1 event until …", "replayed 1 event"; "2 events", "replayed 2 events"', async () => {
    for (const [tag, untilMs, n] of [['one', T0 + 20_000, 1], ['two', T0 + 30_000, 2]] as const) {
      const fixture = join(work, `fx-${tag}`);
      const at = new Date(T0 + 10_000).toISOString();
      const ex = await replayCli(['replay', 'export', '--data', site.dir, '--tag', tag, '--at', at, '--until', new Date(untilMs).toISOString(), '--out', fixture]);
      expect(ex.code, ex.err).toBe(0);
      const events = n === 1 ? '1 event' : `${n} events`;
      expect(ex.out.split('\n')[0]).toMatch(new RegExp(`^exported fixture .* to ${fixture}: cut .*, ${events} until ${new Date(untilMs).toISOString()}, \\d+ decisions?, \\d+ live proposals?, \\d+ files$`));
      const out = join(work, `run-${tag}`);
      const run = await replayCli(['replay', 'run', '--fixture', fixture, '--out', out]);
      expect(run.code, run.err).toBe(0);
      expect(run.out).toMatch(new RegExp(`^replayed ${events} with agent \\S+: 0 agent runs, 0 proposals, 0 decisions applied \\(0 unmatched\\) → ${out}\\n$`));
    }
  }, 120_000);
});

describe('the lines of replay export and run', () => {
  const fixture = { name: 'day', tag: 'replay-day', cutMs: T0, untilMs: T0 + 60_000, files: [{}, {}, {}] };
  const manifest = (n: number) => ({ ...fixture, events: { count: n }, decisions: n, liveProposals: n }) as unknown as Parameters<typeof exportedLine>[0];

  it('export: "1 event", "1 decision", "1 live proposal"; 2 in the plural', () => {
    expect(exportedLine(manifest(1), '/fx')).toBe('exported fixture day (tag replay-day) to /fx: cut 2026-11-30T06:00:00.000Z, 1 event until 2026-11-30T06:01:00.000Z, 1 decision, 1 live proposal, 3 files');
    expect(exportedLine(manifest(2), '/fx')).toBe('exported fixture day (tag replay-day) to /fx: cut 2026-11-30T06:00:00.000Z, 2 events until 2026-11-30T06:01:00.000Z, 2 decisions, 2 live proposals, 3 files');
  });

  it('run: "1 agent run, 1 proposal, 1 decision applied"; 2 in the plural', () => {
    const counts = (n: number) => ({ events: n, agentRuns: n, proposals: n, decisionsApplied: n, decisionsUnmatched: n });
    expect(replayedLine(counts(1), 'v2', '/out')).toBe('replayed 1 event with agent v2: 1 agent run, 1 proposal, 1 decision applied (1 unmatched) → /out');
    expect(replayedLine(counts(2), 'v2', '/out')).toBe('replayed 2 events with agent v2: 2 agent runs, 2 proposals, 2 decisions applied (2 unmatched) → /out');
  });

  it('the progress bar: "1 agent run", "2 agent runs"', () => {
    for (const [runs, said] of [[1, '1 agent run'], [2, '2 agent runs']] as const) {
      const out = new PassThrough();
      const bar = progressBar(out);
      bar.update({ events: 5, totalEvents: 5, simMs: T0, agentRuns: runs });
      bar.done();
      expect(String(out.read())).toMatch(new RegExp(`5/5 events .* ${said}\\n$`));
    }
  });
});

describe('the difference gate says one proposal, one time', () => {
  const T = T0;
  const proposal = (id: string) => ({
    id,
    runId: 'r',
    createdAtMs: T + 60_000,
    ruleId: 'stock-reorder',
    ruleVersion: '1',
    situationKey: `stock-reorder|replenish|item="${id}"`,
    action: 'replenish',
    module: 'erp',
    params: {},
    risk: 'low',
    riskReason: '',
    explanation: '',
    evidence: [],
    status: 'open',
    closedAtMs: null,
    withdrawnReason: null,
    decision: null,
  });
  const run = (label: string, proposals: ReturnType<typeof proposal>[], ruleErrors = 0): LoadedRun =>
    ({
      manifest: { fixture: { id: 'f1', name: 'day', tag: 'replay-day', site: 's1', cutMs: T, untilMs: T + 3_600_000 }, agent: { label, rules: [] } },
      proposals,
      decisions: [],
      outcomes: [],
      ruleErrors: { count: ruleErrors, first: ruleErrors > 0 ? 'stock-reorder: boom' : null },
    }) as unknown as LoadedRun;

  it('"1 proposal added, removed or changed", "2 proposals …"', () => {
    expect(diffRuns(run('v1', []), run('v2', [proposal('A')]), { maxChanged: 0 }).gate.failures).toEqual(['1 proposal added, removed or changed, more than --max-changed 0']);
    expect(diffRuns(run('v1', []), run('v2', [proposal('A'), proposal('B')]), { maxChanged: 0 }).gate.failures).toEqual(['2 proposals added, removed or changed, more than --max-changed 0']);
  });

  it('"threw 1 time", "threw 2 times"', () => {
    expect(diffRuns(run('v1', []), run('v2', [], 1)).gate.failures).toEqual(["v2's rules threw 1 time in its agent runs (first: stock-reorder: boom)"]);
    expect(diffRuns(run('v1', []), run('v2', [], 2)).gate.failures).toEqual(["v2's rules threw 2 times in its agent runs (first: stock-reorder: boom)"]);
  });

  it("a damaged run: \"each of human-decisions.json's 1 decision\", \"2 decisions\"", () => {
    for (const n of [1, 2]) {
      const dir = join(work, `damaged-${n}`);
      mkdirSync(dir);
      const m: Partial<RunManifest> = { format: RUN_FORMAT, fixture: { id: 'f1', name: 'day', tag: 'replay-day', site: 's1', cutMs: T, untilMs: T + 1 }, agent: { label: 'v1', rules: [], config: null, source: null } };
      writeFileSync(join(dir, 'run.json'), JSON.stringify(m));
      writeFileSync(join(dir, 'human-decisions.json'), JSON.stringify(Array.from({ length: n }, (_, k) => ({ atMs: T + k, proposalId: `P-${k}` }))));
      writeFileSync(join(dir, 'decisions.json'), '[]');
      expect(() => loadRun(dir)).toThrow(`${join(dir, 'decisions.json')} is damaged: expected the outcome of each of human-decisions.json's ${n === 1 ? '1 decision' : '2 decisions'}, in order`);
    }
  });
});
