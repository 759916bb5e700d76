// The Markdown report carries text from outside the code: run labels (a rules file's name or
// label), item and location names inside situation keys and evidence (module events), people's
// names and comments. None of it may break the report's tables or turn into markup.

import { describe, expect, it } from 'vitest';
import type { Agreement, DiffReport, ProposalRef } from './diff.ts';
import { toHtml, toMarkdown } from './report.ts';

const agreement = (o: Partial<Agreement> = {}): Agreement => ({
  judgements: 0, agreed: 0, agreement: null, approvedProposed: 0, approvedMissed: 0, rejectedAvoided: 0, rejectedProposed: 0, perRule: {}, disagreements: [], ...o,
});

const proposal = (situationKey: string, item: string): ProposalRef => ({
  id: 'p1',
  ruleId: 'stock-reorder',
  ruleVersion: '1',
  situationKey,
  createdAtMs: Date.UTC(2026, 11, 3, 11, 31, 55),
  action: 'replenish',
  module: 'erp',
  params: { item, qty: 48 },
  risk: 'low',
  riskReason: 'below the reorder point',
  explanation: `${item} at DOCK: below the reorder point`,
  status: 'open',
  closedAtMs: null,
  withdrawnReason: null,
  evidence: [{ table: 'stock', snapshotId: 8, tag: 'agent-x', rows: [{ key: { item, location: 'DOCK' }, values: { on_hand: 33 } }] }],
});

function report(): DiffReport {
  const key = 'stock-reorder|replenish|item="A|`B`"|location="DOCK"';
  const p = proposal(key, 'A|`B`');
  return {
    format: 'tilstand-replay-diff-1',
    fixture: { id: '0123456789abcdef0123', name: 'day_1', tag: 'replay-day_1', site: 'demo', cutMs: Date.UTC(2026, 11, 3), untilMs: Date.UTC(2026, 11, 4) },
    baseline: { label: 'live', rules: [], proposals: 0 },
    candidate: { label: 'reorder | *40*', rules: [], proposals: 1 },
    agentChanges: { rules: [], config: [] },
    summary: { added: 1, removed: 0, changed: 0, unchanged: 0 },
    perRule: { 'stock-reorder': { baseline: 0, candidate: 1, added: 1, removed: 0, changed: 0, unchanged: 0 } },
    agreement: {
      baseline: agreement({ judgements: 1, disagreements: [{ atMs: Date.UTC(2026, 11, 3, 12), verb: 'approve', situationKey: key, ruleId: 'stock-reorder', by: 'lena_m', comment: 'order *now*\n<b>urgent</b>', runHadItOpen: false }] }),
      candidate: agreement(),
    },
    examples: { added: [p], removed: [], changed: [] },
    gate: { minAgreement: null, maxChanged: null, passed: true, failures: [] },
  };
}

describe('the Markdown report', () => {
  const lines = toMarkdown(report()).split('\n');

  it('keeps a label with a pipe inside its table cell, and its asterisks literal', () => {
    const head = lines.find((l) => l.startsWith('|  | live |'));
    expect(head).toBe('|  | live | reorder \\| \\*40\\* |');
    expect(head!.split(/(?<!\\)\|/).length - 2).toBe(3); // three cells, as the separator line has
  });

  it('puts situation keys, parameters and evidence in code spans whose fence outlasts any backtick run inside', () => {
    const added = lines.find((l) => l.startsWith('- **stock-reorder**'))!;
    // Backslashes are literal in a code span: the key appears as it is, fenced by two backticks.
    expect(added).toContain('``stock-reorder|replenish|item="A|`B`"|location="DOCK"``');
    expect(added).toContain('``{"item":"A|`B`","qty":48}``');
    const evidence = lines.find((l) => l.startsWith('  - evidence: '))!;
    expect(evidence).toBe('  - evidence: ``stock {"item":"A|`B`","location":"DOCK"}: {"on_hand":33}``');
  });

  it('escapes markup in names and comments and keeps each on one line', () => {
    const d = lines.find((l) => l.startsWith('- 2026-12-03T12:00:00Z '))!;
    expect(d).toContain('lena\\_m approved ``stock-reorder|');
    expect(d).toContain('(“order \\*now\\* \\<b\\>urgent\\</b\\>”)');
    expect(lines.find((l) => l.startsWith('  - A'))).toBe('  - A\\|\\`B\\` at DOCK: below the reorder point');
  });

  it('keeps text with a carriage return on one line (a lone CR ends a line in CommonMark, as LF does)', () => {
    const r = report();
    r.agreement.baseline.disagreements[0]!.comment = 'checked\r- all clear\r\n# done';
    r.examples.added = [{ ...r.examples.added[0]!, explanation: 'BOLT at DOCK\r| x | y |', evidence: [] }];
    const out = toMarkdown(r).split(/\r\n|\r|\n/);
    expect(out.find((l) => l.startsWith('- 2026-12-03T12:00:00Z '))).toContain('(“checked - all clear \\# done”)');
    expect(out.filter((l) => l.startsWith('- all clear') || l.startsWith('\\# done') || l.startsWith('| x'))).toEqual([]);
    expect(out).toContain('  - BOLT at DOCK \\| x \\| y \\|');
  });

  it('pads a code span whose text starts or ends with a backtick', () => {
    const r = report();
    r.examples.added = [{ ...r.examples.added[0]!, situationKey: '`x`' }];
    expect(toMarkdown(r)).toContain('** `` `x` `` at');
  });
});

describe('the examples of a report', () => {
  // The examples are the first --examples of each kind, by creation time over every rule: a list
  // that looks whole while the summary counts more sends the reader looking for the rest.
  it('say when they are the first few of more, and how to see more (Markdown and HTML)', () => {
    const r = report();
    r.summary = { added: 14, removed: 0, changed: 0, unchanged: 0 };
    const md = toMarkdown(r).split('\n');
    const at = md.indexOf('### Added (candidate only)');
    expect(md.slice(at + 1, at + 3)).toEqual(['', 'The first 1 of 14, by creation time (`--examples <n>` shows more).']);
    expect(toHtml(r)).toContain('<h3>Added (candidate only)</h3><p>The first 1 of 14, by creation time (<code>--examples &lt;n&gt;</code> shows more).</p>');
    // All of them shown, or none to show: no such line.
    r.summary.added = 1;
    expect(toMarkdown(r)).not.toContain('The first');
    expect(toHtml(r)).not.toContain('The first');
  });

  it('with --examples 0 say that none of them is shown, not "none" under a summary that counts 14', () => {
    const r = report();
    r.summary = { added: 14, removed: 0, changed: 0, unchanged: 0 };
    r.examples.added = [];
    const md = toMarkdown(r).split('\n');
    const at = md.indexOf('### Added (candidate only)');
    expect(md.slice(at + 1, at + 4)).toEqual(['', 'None of the 14 shown (`--examples <n>` shows them).', '']);
    const html = toHtml(r);
    expect(html).toContain('<h3>Added (candidate only)</h3><p>None of the 14 shown (<code>--examples &lt;n&gt;</code> shows them).</p>\n');
    // Where there are none, "none" as before.
    expect(md[md.indexOf('### Removed (baseline only)') + 2]).toBe('none');
    expect(html).toContain('<h3>Removed (baseline only)</h3><p>none</p>');
  });
});

describe('the HTML report', () => {
  // report.md and report.json list the decisions a run disagrees with; report.html, the page a
  // reviewer opens, had the agreement's counts only.
  it('lists the disagreements of each run after the agreement table, text from outside escaped', () => {
    const html = toHtml(report());
    const agreementAt = html.indexOf('<h2>Agreement with the people’s decisions</h2>');
    const at = html.indexOf('<p>Disagreements of live (first 1):</p>');
    expect(at).toBeGreaterThan(agreementAt);
    expect(at).toBeLessThan(html.indexOf('<h2>Examples</h2>'));
    expect(html).toContain(
      '<ul><li>2026-12-03T12:00:00Z lena_m approved <code>stock-reorder|replenish|item=&quot;A|`B`&quot;|location=&quot;DOCK&quot;</code>; the run did not propose it (“order *now*\n&lt;b&gt;urgent&lt;/b&gt;”)</li></ul>',
    );
    // A run without disagreements has no such list.
    expect(html).not.toContain('Disagreements of reorder');
  });
});
