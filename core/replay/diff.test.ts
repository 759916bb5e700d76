// The difference report's counts and examples, on runs built in memory (whole replays:
// replay.test.ts). A matched proposal that changed shows each differing field's two values.

import { describe, expect, it } from 'vitest';
import { diffRuns, type LoadedRun } from './diff.ts';
import type { ReplayProposal } from './fixture.ts';
import type { RunManifest } from './replay.ts';
import { toHtml, toMarkdown } from './report.ts';

const T = Date.UTC(2026, 10, 30, 6, 0);

const proposal = (o: Partial<ReplayProposal> = {}): ReplayProposal => ({
  id: 'P-20261130-060100-000-1',
  runId: '20261130-060100-000',
  createdAtMs: T + 60_000,
  ruleId: 'stock-reorder',
  ruleVersion: '1',
  situationKey: 'stock-reorder|replenish|item="BOLT"|location="DOCK"',
  action: 'replenish',
  module: 'erp',
  params: { item: 'BOLT', qty: 20 },
  risk: 'low',
  riskReason: 'below the reorder point',
  explanation: 'BOLT at DOCK: 4 on hand',
  evidence: [],
  status: 'open',
  closedAtMs: null,
  withdrawnReason: null,
  decision: null,
  ...o,
});

const run = (label: string, proposals: ReplayProposal[]): LoadedRun => ({
  manifest: { fixture: { id: 'f1', name: 'day', tag: 'replay-day', site: 's1', cutMs: T, untilMs: T + 3_600_000 }, agent: { label, rules: [] } } as unknown as RunManifest,
  proposals,
  decisions: [],
  outcomes: [],
  ruleErrors: { count: 0, first: null },
});

describe('diffRuns', () => {
  it('a changed example carries the values of every compared field (rule version, module, risk reason too)', () => {
    const base = run('v1', [proposal()]);
    const cand = run('v2', [proposal({ ruleVersion: '2', module: 'wms', riskReason: 'below the new reorder point' })]);
    const r = diffRuns(base, cand);
    expect(r.summary).toEqual({ added: 0, removed: 0, changed: 1, unchanged: 0 });
    const c = r.examples.changed[0]!;
    expect(c.fields).toEqual(['ruleVersion', 'module', 'riskReason']);
    const md = toMarkdown(r);
    expect(md).toContain('  - ruleVersion: `"1"` → `"2"`');
    expect(md).toContain('  - module: `"erp"` → `"wms"`');
    expect(md).toContain('  - riskReason: `"below the reorder point"` → `"below the new reorder point"`');
    expect(toHtml(r)).toContain('ruleVersion: <del>&quot;1&quot;</del> → <ins>&quot;2&quot;</ins>');
  });
});

describe('what the candidate changes', () => {
  // A report of "default → reorder-15" that does not say what reorder-15 is cannot be checked: the
  // rules, versions and thresholds that differ come first, from each run's run.json.
  const withAgent = (label: string, rules: { id: string; version: string }[], config: Record<string, unknown>): LoadedRun => {
    const r = run(label, []);
    return { ...r, manifest: { ...r.manifest, agent: { label, rules, config, source: 'default' } } };
  };
  const live = { defaultReorder: { reorderPoint: 5, orderUpTo: 20 }, idleMsMin: 900_000, intervalMs: 60_000 };

  it('lists the rules run at another version or by one side only, and the config keys that differ, in the report', () => {
    const base = withAgent('default', [{ id: 'assign-job', version: '4' }, { id: 'idle-resource', version: '3' }, { id: 'stock-reorder', version: '4' }], live);
    const cand = withAgent('reorder-15', [{ id: 'assign-job', version: '4' }, { id: 'stock-reorder', version: '5' }, { id: 'yard-check', version: '1' }], { ...live, defaultReorder: { reorderPoint: 15, orderUpTo: 40 } });
    const r = diffRuns(base, cand);
    expect(r.agentChanges).toEqual({
      rules: [
        { id: 'idle-resource', baseline: '3', candidate: null },
        { id: 'stock-reorder', baseline: '4', candidate: '5' },
        { id: 'yard-check', baseline: null, candidate: '1' },
      ],
      config: [{ key: 'defaultReorder', baseline: { reorderPoint: 5, orderUpTo: 20 }, candidate: { reorderPoint: 15, orderUpTo: 40 } }],
    });
    const md = toMarkdown(r).split('\n');
    const at = md.indexOf('## What the candidate changes');
    expect(md.slice(at + 2, at + 6)).toEqual([
      '- rule idle-resource: version 3 → not run',
      '- rule stock-reorder: version 4 → version 5',
      '- rule yard-check: not run → version 1',
      '- config `defaultReorder`: `{"orderUpTo":20,"reorderPoint":5}` → `{"orderUpTo":40,"reorderPoint":15}`',
    ]);
    const html = toHtml(r);
    expect(html).toContain('<h2>What the candidate changes</h2>');
    expect(html).toContain('<li>rule stock-reorder: version 4 → version 5</li>');
    expect(html).toContain('<li>config <code>defaultReorder</code>: <code>{&quot;orderUpTo&quot;:20,&quot;reorderPoint&quot;:5}</code> → <code>{&quot;orderUpTo&quot;:40,&quot;reorderPoint&quot;:15}</code></li>');
  });

  it('says so when the two agents are the same', () => {
    const same = withAgent('default', [{ id: 'assign-job', version: '4' }], live);
    const r = diffRuns(same, { ...same });
    expect(r.agentChanges).toEqual({ rules: [], config: [] });
    expect(toMarkdown(r)).toContain('## What the candidate changes\n\nNothing: the same rules at the same versions, with the same config.\n');
  });
});

describe('the gate', () => {
  const errors = (count: number, first: string | null = null) => ({ count, first });

  it('fails a candidate whose rules threw, whatever the thresholds (a rule that throws proposes nothing, which rejections score as agreement)', () => {
    const cand = { ...run('v2', []), ruleErrors: errors(3, 'stock-reorder: boom') };
    const r = diffRuns(run('v1', []), cand, { maxChanged: 10 });
    expect(r.gate.passed).toBe(false);
    expect(r.gate.failures).toEqual(["v2's rules threw 3 times in its agent runs (first: stock-reorder: boom)"]);
    // The baseline's own rule errors are the old version's: no reason to hold the candidate back.
    expect(diffRuns({ ...run('v1', []), ruleErrors: errors(2, 'x: y') }, run('v2', [])).gate.passed).toBe(true);
  });

  it('fails when either run stopped ingesting: it saw part of the period only', () => {
    const stopped = (r: LoadedRun): LoadedRun => ({ ...r, manifest: { ...r.manifest, ingestFailure: 'journal damaged' } });
    expect(diffRuns(stopped(run('v1', [])), run('v2', [])).gate.failures).toEqual(['the run of v1 stopped ingesting (journal damaged): it covers part of the period only']);
    expect(diffRuns(run('v1', []), stopped(run('v2', []))).gate.passed).toBe(false);
    expect(diffRuns(run('v1', []), run('v2', [])).gate.passed).toBe(true);
  });
});

// Matching a baseline proposal to a candidate one: open intervals are [created, closed), so a
// proposal withdrawn at the instant another of its situation is made (an agent run withdraws one
// whose recheck failed and proposes the situation again in the same run) is not open beside it.
describe('diffRuns matching', () => {
  it('a proposal withdrawn at the instant the situation is proposed again is not matched to the new one', () => {
    const t1 = T + 120_000;
    // Baseline: proposed at minute 1, withdrawn at minute 2 by the run that proposed it again.
    const old = proposal({ id: 'P-b-1', createdAtMs: T + 60_000, status: 'withdrawn', closedAtMs: t1, withdrawnReason: 'qty changed', explanation: 'BOLT at DOCK: 6 on hand', params: { item: 'BOLT', qty: 18 } });
    const again = proposal({ id: 'P-b-2', createdAtMs: t1 });
    // Candidate: only the second, the same as the baseline's.
    const cand = proposal({ id: 'P-c-1', createdAtMs: t1 });
    const r = diffRuns(run('base', [old, again]), run('cand', [cand]));
    expect(r.summary).toEqual({ added: 0, removed: 1, changed: 0, unchanged: 1 });
    expect(r.examples.removed.map((p) => p.id)).toEqual(['P-b-1']);
  });

  it('the same case the other way round: added, not changed', () => {
    const t1 = T + 120_000;
    const old = proposal({ id: 'P-c-1', createdAtMs: T + 60_000, status: 'withdrawn', closedAtMs: t1, withdrawnReason: 'qty changed' });
    const again = proposal({ id: 'P-c-2', createdAtMs: t1 });
    const r = diffRuns(run('base', [proposal({ id: 'P-b-1', createdAtMs: t1 })]), run('cand', [old, again]));
    expect(r.summary).toEqual({ added: 1, removed: 0, changed: 0, unchanged: 1 });
    expect(r.examples.added.map((p) => p.id)).toEqual(['P-c-1']);
  });

  it('two proposals made at one instant are matched, also when one closed at once', () => {
    // Made and withdrawn at the same instant: still the same proposal on both sides.
    const b = proposal({ id: 'P-b-1', createdAtMs: T + 60_000, status: 'withdrawn', closedAtMs: T + 60_000, withdrawnReason: 'gone' });
    const c = proposal({ id: 'P-c-1', createdAtMs: T + 60_000 });
    const r = diffRuns(run('base', [b]), run('cand', [c]));
    expect(r.summary).toEqual({ added: 0, removed: 0, changed: 1, unchanged: 0 });
    // Overlapping open intervals still match.
    const r2 = diffRuns(run('base', [proposal({ id: 'P-b-1', createdAtMs: T, closedAtMs: T + 90_000, status: 'rejected' })]), run('cand', [proposal({ id: 'P-c-1', createdAtMs: T + 60_000 })]));
    expect(r2.summary).toEqual({ added: 0, removed: 0, changed: 1, unchanged: 0 });
  });
});

describe('diffRuns: how a proposal ended', () => {
  it('one withdrawn later, or for another reason, is changed, not unchanged', () => {
    // Was unchanged: only the end status was compared, so a candidate that left a proposal open
    // half an hour longer in front of the people (or withdrew it for another reason) passed
    // --max-changed 0.
    const b = proposal({ id: 'P-b-1', status: 'withdrawn', closedAtMs: T + 120_000, withdrawnReason: 'qty changed' });
    const later = proposal({ id: 'P-c-1', status: 'withdrawn', closedAtMs: T + 1_800_000, withdrawnReason: 'qty changed' });
    const r = diffRuns(run('base', [b]), run('cand', [later]), { maxChanged: 0 });
    expect(r.summary).toEqual({ added: 0, removed: 0, changed: 1, unchanged: 0 });
    expect(r.examples.changed[0]!.fields).toEqual(['closedAtMs']);
    expect(r.gate.passed).toBe(false);
    expect(toMarkdown(r)).toContain(`  - closedAtMs: \`${T + 120_000}\` → \`${T + 1_800_000}\``);
    const otherReason = proposal({ id: 'P-c-1', status: 'withdrawn', closedAtMs: T + 120_000, withdrawnReason: 'situation gone' });
    const r2 = diffRuns(run('base', [b]), run('cand', [otherReason]));
    expect(r2.examples.changed[0]?.fields).toEqual(['withdrawnReason']);
    // The same end on both sides is unchanged.
    expect(diffRuns(run('base', [b]), run('cand', [{ ...b, id: 'P-c-1' }])).summary.unchanged).toBe(1);
  });
});

describe('diffRuns counts per rule', () => {
  it('counts a rule whose id is a name every object has ("constructor" is a valid rule id)', () => {
    const p = proposal({ id: 'P-b-1', ruleId: 'constructor', situationKey: 'constructor|x|{}' });
    const r = diffRuns(run('base', [p]), run('cand', [{ ...p, id: 'P-c-1', riskReason: 'other' }]));
    expect(r.perRule.constructor).toEqual({ baseline: 1, candidate: 1, added: 0, removed: 0, changed: 1, unchanged: 0 });
    expect(Object.keys(r.perRule)).toEqual(['constructor']);
    expect((Object as unknown as Record<string, unknown>).baseline).toBeUndefined();
  });
});
