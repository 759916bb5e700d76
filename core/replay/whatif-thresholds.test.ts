// A rules config that changes a threshold is a what-if: "the site's config.json `agent` section,
// changed at the cut". A site whose thresholds change (a reload, or a start on a changed section)
// evaluates every row at its next run (core/agents `reevaluateAll`); the replay's candidate has to
// do the same, or `stock-reorder`, which reads only the rows changed since the live baseline run,
// never proposes a row that was already under the raised point and did not move — and the
// difference report then shows no change where the site would have ordered.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DemoEvents } from './demo-events.ts';
import { diffRuns, loadRun } from './diff.ts';
import { exportFixture, makeCut } from './export.ts';
import type { ReplayProposal } from './fixture.ts';
import { defaultScratchParent, runReplay } from './replay.ts';
import { LiveSite, replayCli, T0 } from './test-support.ts';

const MIN = 60_000;

describe('a rules config that raises a reorder point', () => {
  it('proposes, in its first run, the rows already under the new point that did not change since the live baseline run', async () => {
    const site = new LiveSite();
    const dir = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-whatif-'));
    try {
      // Stock arrives once and never moves: every row is unchanged since the live run at T0+1 min.
      site.receive(new DemoEvents({ site: site.site, seed: 5 }).initial(T0 + 100));
      await site.advance(T0 + 90_000);
      makeCut(site.catalog, site.database, 'replay-raise', { clock: site.clock });
      // What the live agent's run before the cut left open (rows under the live point, 5).
      const openBefore = site.inbox.openProposals().filter((p) => p.ruleId === 'stock-reorder').length;
      await site.advance(T0 + 4 * MIN);
      site.close();
      const fixture = join(dir, 'fixture');
      const m = await exportFixture({ data: site.dir, tag: 'raise', untilMs: T0 + 4 * MIN, atMs: T0 + 90_000, out: fixture });
      expect(m.liveAgent.baselineRunId).toBe('20261130-060100-000');

      await runReplay({ fixture, out: join(dir, 'run-default') });
      const rules = join(dir, 'reorder-high.json');
      writeFileSync(rules, JSON.stringify({ label: 'reorder-high', config: { defaultReorder: { reorderPoint: 100_000, orderUpTo: 200_000 } } }));
      const run = await replayCli(['replay', 'run', '--fixture', fixture, '--agent', rules, '--out', join(dir, 'run-high')]);
      expect(run.code, run.err).toBe(0);

      // Every stock row (20 items × 4 locations) is under 100,000: each is proposed by the
      // candidate's first run, or was already open from before the cut (the inbox keeps one).
      const high = (JSON.parse(readFileSync(join(dir, 'run-high', 'proposals.json'), 'utf8')) as ReplayProposal[]).filter((p) => p.ruleId === 'stock-reorder');
      expect(high.length).toBeGreaterThan(0);
      expect(high.length + openBefore).toBe(80);
      expect(new Set(high.map((p) => p.runId))).toEqual(new Set(['20261130-060200-000']));
      const report = diffRuns(loadRun(join(dir, 'run-default')), loadRun(join(dir, 'run-high')));
      expect(report.perRule['stock-reorder']!.added).toBe(high.length);
      // The live thresholds (the default agent) are no change: the default replay does not
      // re-evaluate, and reproduces the live proposals.
      expect(readFileSync(join(dir, 'run-default', 'proposals.json'), 'utf8')).toBe(readFileSync(join(fixture, 'live', 'proposals.json'), 'utf8'));
    } finally {
      site.remove();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
