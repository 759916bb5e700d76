// Matching a baseline proposal to a candidate one: open intervals are [created, closed), so a
// proposal withdrawn at the instant another of its situation is made (an agent run withdraws one
// whose recheck failed and proposes the situation again in the same run) is not open beside it.

import { describe, expect, it } from 'vitest';
import { diffRuns, type LoadedRun } from './diff.ts';
import type { ReplayProposal } from './fixture.ts';
import type { RunManifest } from './replay.ts';

const T = Date.UTC(2026, 10, 30, 6, 0);
const KEY = 'stock-reorder|replenish|item="BOLT"|location="DOCK"';

const proposal = (o: Partial<ReplayProposal>): ReplayProposal => ({
  id: 'P-x-1',
  runId: 'x',
  createdAtMs: T + 60_000,
  ruleId: 'stock-reorder',
  ruleVersion: '1',
  situationKey: KEY,
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

describe('diffRuns counts per rule', () => {
  it('counts a rule whose id is a name every object has ("constructor" is a valid rule id)', () => {
    const p = proposal({ id: 'P-b-1', ruleId: 'constructor', situationKey: 'constructor|x|{}' });
    const r = diffRuns(run('base', [p]), run('cand', [{ ...p, id: 'P-c-1', riskReason: 'other' }]));
    expect(r.perRule.constructor).toEqual({ baseline: 1, candidate: 1, added: 0, removed: 0, changed: 1, unchanged: 0 });
    expect(Object.keys(r.perRule)).toEqual(['constructor']);
    expect((Object as unknown as Record<string, unknown>).baseline).toBeUndefined();
  });
});
