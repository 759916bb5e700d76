// The difference report as Markdown, as one self-contained HTML page (inline CSS and an inline
// SVG chart; no scripts, no external resources) and as JSON (the DiffReport itself).
// Everything is a function of the report, so equal runs give equal bytes.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson } from '../inbox/index.ts';
import type { AgentChanges, Agreement, Changed, DiffReport, ProposalRef } from './diff.ts';
import { stableJson } from './json.ts';
import type { RunRule } from './replay.ts';

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)} %`);
/** Line endings in CommonMark: LF, CR, CR LF (a lone CR ends a line too), with the blanks around them. */
const LINE_END = /\s*[\r\n]\s*/g;
/** Text in Markdown: CommonMark's inline markup characters backslash-escaped, one line. */
const md = (s: string) => s.replace(/[\\`*_[\]<>|~&#!]/g, '\\$&').replace(LINE_END, ' ');
/** A code span: backslashes are literal there, so the fence is one backtick longer than any run inside. */
const code = (s: string) => {
  const t = s.replace(LINE_END, ' ');
  const fence = '`'.repeat(Math.max(0, ...(t.match(/`+/g) ?? []).map((r) => r.length)) + 1);
  const pad = t.startsWith('`') || t.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${t}${pad}${fence}`;
};
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const params = (p: unknown) => JSON.stringify(p);

function evidenceLines(p: ProposalRef): string[] {
  return p.evidence.flatMap((e) => e.rows.slice(0, 3).map((r) => `${e.table} ${JSON.stringify(r.key)}: ${JSON.stringify(r.values)}`));
}

/**
 * The examples are the first `--examples` of each kind, by creation time over every rule: when the
 * summary counts more, the report says so (a list that looks whole sends the reader looking for
 * the rest, or lets one rule's many crowd out another's few unnoticed); with `--examples 0`, that
 * none of them is shown ("none" under a summary that counts 14 read as no such proposal).
 * Undefined when all are shown (also when there are none).
 */
function firstOf(shown: number, total: number): { text: string; flag: string; after: string } | undefined {
  if (shown >= total) return undefined;
  return shown > 0 ? { text: `The first ${shown} of ${total}, by creation time (`, flag: '--examples <n>', after: ' shows more).' } : { text: `None of the ${total} shown (`, flag: '--examples <n>', after: ' shows them).' };
}

/**
 * A side's version of a rule; one from a rule file with its path and the start of its SHA-256,
 * which covers the files it imports (core/agents ruleFileHash): their count here, each in
 * report.json.
 */
const version = (v: string | null, file?: RunRule['file']) =>
  v === null ? 'not run' : `version ${v}${file ? ` from rule file ${file.path} (sha256 ${file.sha256.slice(0, 12)}…${file.imports?.length ? `, with ${file.imports.length} ${file.imports.length === 1 ? 'file' : 'files'} it imports` : ''})` : ''}`;

/** The files a rule file imports whose bytes differ between the sides (or one side only imports), the first 10 named: what changed when its own file did not. */
function importsDiffer(b?: RunRule['file'], c?: RunRule['file']): string {
  if (b === undefined || c === undefined || (!b.imports && !c.imports)) return '';
  const bi = new Map((b.imports ?? []).map((i) => [i.path, i.sha256]));
  const ci = new Map((c.imports ?? []).map((i) => [i.path, i.sha256]));
  const differ = [...new Set([...bi.keys(), ...ci.keys()])].sort().filter((p) => bi.get(p) !== ci.get(p));
  if (differ.length === 0) return '';
  const named = differ.slice(0, 10).map((p) => `${p} ${bi.get(p)?.slice(0, 12).concat('…') ?? 'none'} → ${ci.get(p)?.slice(0, 12).concat('…') ?? 'none'}`);
  return `; imported files that differ: ${named.join(', ')}${differ.length > 10 ? `, and ${differ.length - 10} more (report.json)` : ''}`;
}

/** A side's base (run.json `agent.base`), as the report says it. */
const baseText = (b: string | null) => (b === null ? 'not recorded' : b === 'live' ? 'live (the rules the live site ran)' : b === 'installed' ? 'installed (the installed rules only)' : b);

/** What the candidate changes, one item each: its base, a rule's text, and a config key with its two values (JSON). */
function changeItems(c: AgentChanges): { rule?: string; key?: string; from?: string; to?: string }[] {
  return [
    ...(c.base ? [{ rule: `base: ${baseText(c.base.baseline)} → ${baseText(c.base.candidate)}` }] : []),
    ...c.rules.map((r) => ({ rule: `rule ${r.id}: ${version(r.baseline, r.baselineFile)} → ${version(r.candidate, r.candidateFile)}${importsDiffer(r.baselineFile, r.candidateFile)}` })),
    ...c.config.map((k) => ({ key: k.key, from: canonicalJson(k.baseline), to: canonicalJson(k.candidate) })),
  ];
}
const NO_CHANGES = 'Nothing: the same rules at the same versions, with the same config.';

function agreementRows(a: Agreement): string[][] {
  return [
    ['judgements (approve + reject)', String(a.judgements)],
    ['agreement', pct(a.agreement)],
    ['approved and proposed', String(a.approvedProposed)],
    ['approved but not proposed', String(a.approvedMissed)],
    ['rejected and not proposed', String(a.rejectedAvoided)],
    ['rejected but proposed', String(a.rejectedProposed)],
  ];
}

type Disagreement = Agreement['disagreements'][number];

/** The runs with the decisions each disagrees with, labelled, in report order (none: left out). */
const disagreeing = (r: DiffReport): (readonly [string, Agreement])[] =>
  ([[r.baseline.label, r.agreement.baseline], [r.candidate.label, r.agreement.candidate]] as const).filter(([, a]) => a.disagreements.length > 0);

/** A disagreement's sentence around its name, key and comment, which each format marks up its own way. */
const disagreementText = (d: Disagreement) => ({
  verb: d.verb === 'approve' ? 'approved' : 'rejected',
  run: `; the run ${d.runHadItOpen ? 'proposed it' : 'did not propose it'}`,
});

export function toMarkdown(r: DiffReport): string {
  const L: string[] = [];
  const table = (head: string[], rows: string[][]) => {
    L.push(`| ${head.map(md).join(' | ')} |`, `|${head.map(() => '---').join('|')}|`);
    for (const row of rows) L.push(`| ${row.map(md).join(' | ')} |`);
    L.push('');
  };
  L.push(`# Replay difference: ${md(r.baseline.label)} → ${md(r.candidate.label)}`, '');
  L.push(`Fixture **${md(r.fixture.name)}** (tag ${code(r.fixture.tag)}, site ${md(r.fixture.site)}), period ${iso(r.fixture.cutMs)} – ${iso(r.fixture.untilMs)}, fixture id \`${r.fixture.id.slice(0, 16)}\`.`, '');
  L.push(`**Gate: ${r.gate.passed ? 'PASSED' : 'FAILED'}**${r.gate.minAgreement !== null ? ` · min agreement ${r.gate.minAgreement}` : ''}${r.gate.maxChanged !== null ? ` · max changed ${r.gate.maxChanged}` : ''}`, '');
  for (const f of r.gate.failures) L.push(`- ${md(f)}`);
  if (r.gate.failures.length) L.push('');
  // What the report is about comes first: a label alone does not say what the candidate is.
  L.push('## What the candidate changes', '');
  const changes = changeItems(r.agentChanges);
  if (changes.length === 0) L.push(NO_CHANGES);
  for (const c of changes) L.push(c.rule !== undefined ? `- ${md(c.rule)}` : `- config ${code(c.key!)}: ${code(c.from!)} → ${code(c.to!)}`);
  L.push('');
  L.push('## Summary', '');
  table(['', 'count'], [
    ['proposals (baseline)', String(r.baseline.proposals)],
    ['proposals (candidate)', String(r.candidate.proposals)],
    ['added', String(r.summary.added)],
    ['removed', String(r.summary.removed)],
    ['changed', String(r.summary.changed)],
    ['unchanged', String(r.summary.unchanged)],
  ]);
  L.push('## Per rule', '');
  table(['rule', 'baseline', 'candidate', 'added', 'removed', 'changed', 'unchanged'], Object.entries(r.perRule).map(([k, c]) => [k, c.baseline, c.candidate, c.added, c.removed, c.changed, c.unchanged].map(String)));
  L.push('## Agreement with the people’s decisions', '');
  L.push('A run agrees with an approval when it had a proposal of that situation open at the decision’s time, and with a rejection when it had none (deferrals are not counted).', '');
  table(['', r.baseline.label, r.candidate.label], agreementRows(r.agreement.baseline).map((row, i) => [row[0]!, row[1]!, agreementRows(r.agreement.candidate)[i]![1]!]));
  for (const [name, a] of disagreeing(r)) {
    L.push(`Disagreements of ${md(name)} (first ${a.disagreements.length}):`, '');
    for (const d of a.disagreements) {
      const t = disagreementText(d);
      L.push(`- ${iso(d.atMs)} ${md(d.by)} ${t.verb} ${code(d.situationKey)}${t.run}${d.comment ? ` (“${md(d.comment)}”)` : ''}`);
    }
    L.push('');
  }
  const one = (p: ProposalRef) => {
    L.push(`- **${md(p.ruleId)}** ${code(p.situationKey)} at ${iso(p.createdAtMs)} — ${md(p.action)} ${code(params(p.params))}, risk ${md(p.risk)}, ${md(p.status)}`, `  - ${md(p.explanation)}`);
    for (const e of evidenceLines(p)) L.push(`  - evidence: ${code(e)}`);
  };
  const partial = (shown: number, total: number) => {
    const s = firstOf(shown, total);
    if (s) L.push(`${s.text}${code(s.flag)}${s.after}`, '');
  };
  L.push('## Examples', '', '### Added (candidate only)', '');
  partial(r.examples.added.length, r.summary.added);
  if (r.summary.added === 0) L.push('none');
  r.examples.added.forEach(one);
  L.push('', '### Removed (baseline only)', '');
  partial(r.examples.removed.length, r.summary.removed);
  if (r.summary.removed === 0) L.push('none');
  r.examples.removed.forEach(one);
  L.push('', '### Changed', '');
  partial(r.examples.changed.length, r.summary.changed);
  if (r.summary.changed === 0) L.push('none');
  for (const c of r.examples.changed) {
    L.push(`- **${md(c.ruleId)}** ${code(c.situationKey)}: ${md(c.fields.join(', '))}`);
    for (const f of c.fields) L.push(`  - ${md(f)}: ${code(JSON.stringify((c.baseline as unknown as Record<string, unknown>)[f] ?? null))} → ${code(JSON.stringify((c.candidate as unknown as Record<string, unknown>)[f] ?? null))}`);
    for (const e of evidenceLines(c.candidate)) L.push(`  - evidence: ${code(e)}`);
  }
  L.push('');
  return `${L.join('\n')}\n`;
}

/** Grouped bars per rule (baseline, candidate proposals) and the two agreements. */
function chart(r: DiffReport): string {
  const rules = Object.entries(r.perRule);
  const max = Math.max(1, ...rules.flatMap(([, c]) => [c.baseline, c.candidate]));
  const rowH = 34;
  const left = 170;
  const width = 640;
  const barW = width - left - 60;
  const h = 40 + rules.length * rowH + 90;
  const out: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${h}" viewBox="0 0 ${width} ${h}" role="img" aria-label="Proposals per rule and agreement">`];
  out.push(`<text x="0" y="16" class="t">Proposals per rule</text>`);
  out.push(`<rect x="${left}" y="24" width="10" height="10" class="b"/><text x="${left + 14}" y="33" class="s">${esc(r.baseline.label)}</text>`);
  out.push(`<rect x="${left + 160}" y="24" width="10" height="10" class="c"/><text x="${left + 174}" y="33" class="s">${esc(r.candidate.label)}</text>`);
  rules.forEach(([rule, c], i) => {
    const y = 44 + i * rowH;
    const wb = Math.round((c.baseline / max) * barW);
    const wc = Math.round((c.candidate / max) * barW);
    out.push(`<text x="${left - 8}" y="${y + 17}" text-anchor="end" class="s">${esc(rule)}</text>`);
    out.push(`<rect x="${left}" y="${y + 2}" width="${wb}" height="12" class="b"/><text x="${left + wb + 4}" y="${y + 12}" class="s">${c.baseline}</text>`);
    out.push(`<rect x="${left}" y="${y + 15}" width="${wc}" height="12" class="c"/><text x="${left + wc + 4}" y="${y + 25}" class="s">${c.candidate}</text>`);
  });
  const y0 = 44 + rules.length * rowH + 16;
  out.push(`<text x="0" y="${y0}" class="t">Agreement with the people</text>`);
  [[r.baseline.label, r.agreement.baseline.agreement, 'b'], [r.candidate.label, r.agreement.candidate.agreement, 'c']].forEach(([label, a, cls], i) => {
    const y = y0 + 10 + i * 24;
    const w = a === null ? 0 : Math.round((a as number) * barW);
    out.push(`<text x="${left - 8}" y="${y + 13}" text-anchor="end" class="s">${esc(String(label))}</text>`);
    out.push(`<rect x="${left}" y="${y + 2}" width="${barW}" height="14" class="g"/><rect x="${left}" y="${y + 2}" width="${w}" height="14" class="${cls}"/>`);
    out.push(`<text x="${left + barW + 4}" y="${y + 13}" class="s">${pct(a as number | null)}</text>`);
  });
  if (r.gate.minAgreement !== null) {
    const x = left + Math.round(r.gate.minAgreement * barW);
    out.push(`<line x1="${x}" y1="${y0 + 6}" x2="${x}" y2="${y0 + 62}" class="m"/>`);
  }
  out.push('</svg>');
  return out.join('\n');
}

export function toHtml(r: DiffReport): string {
  const rows = (cells: string[][]) => cells.map((c) => `<tr>${c.map((x, i) => (i === 0 ? `<th>${esc(x)}</th>` : `<td>${esc(x)}</td>`)).join('')}</tr>`).join('\n');
  const example = (p: ProposalRef) =>
    `<li><b>${esc(p.ruleId)}</b> <code>${esc(p.situationKey)}</code> at ${iso(p.createdAtMs)} — ${esc(p.action)} <code>${esc(params(p.params))}</code>, risk ${esc(p.risk)}, ${esc(p.status)}<br>${esc(p.explanation)}<ul>${evidenceLines(p).map((e) => `<li class="ev">${esc(e)}</li>`).join('')}</ul></li>`;
  const changedItem = (c: Changed) =>
    `<li><b>${esc(c.ruleId)}</b> <code>${esc(c.situationKey)}</code><ul>${c.fields
      .map((f) => `<li>${esc(f)}: <del>${esc(JSON.stringify((c.baseline as unknown as Record<string, unknown>)[f] ?? null))}</del> → <ins>${esc(JSON.stringify((c.candidate as unknown as Record<string, unknown>)[f] ?? null))}</ins></li>`)
      .join('')}${evidenceLines(c.candidate).map((e) => `<li class="ev">${esc(e)}</li>`).join('')}</ul></li>`;
  // "none" only where there are none: with --examples 0 `partial` says none of them is shown.
  const list = (items: string[], total: number) => (total === 0 ? '<p>none</p>' : items.length === 0 ? '' : `<ul>${items.join('\n')}</ul>`);
  const partial = (shown: number, total: number) => {
    const s = firstOf(shown, total);
    return s ? `<p>${esc(s.text)}<code>${esc(s.flag)}</code>${esc(s.after)}</p>` : '';
  };
  const ag = agreementRows(r.agreement.baseline).map((row, i) => [row[0]!, row[1]!, agreementRows(r.agreement.candidate)[i]![1]!]);
  const disagreement = (d: Disagreement) => {
    const t = disagreementText(d);
    return `<li>${iso(d.atMs)} ${esc(d.by)} ${t.verb} <code>${esc(d.situationKey)}</code>${t.run}${d.comment ? ` (“${esc(d.comment)}”)` : ''}</li>`;
  };
  const disagreements = disagreeing(r).map(([name, a]) => `<p>Disagreements of ${esc(name)} (first ${a.disagreements.length}):</p><ul>${a.disagreements.map(disagreement).join('')}</ul>\n`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Replay difference: ${esc(r.baseline.label)} → ${esc(r.candidate.label)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;max-width:60rem;color:#1b1b1b}
table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border:1px solid #ccc;padding:.25rem .6rem;text-align:right}th{text-align:left;background:#f4f4f4}
code{background:#f4f4f4;padding:0 .2rem}.pass{color:#146c2e}.fail{color:#b3261e}.ev{color:#555;font-size:12px}
svg .t{font:bold 13px system-ui,sans-serif}svg .s{font:12px system-ui,sans-serif}svg .b{fill:#8a8a8a}svg .c{fill:#1f5fbf}svg .g{fill:#eee}svg .m{stroke:#b3261e;stroke-width:2}
del{color:#b3261e}ins{color:#146c2e;text-decoration:none}
</style></head><body>
<h1>Replay difference: ${esc(r.baseline.label)} → ${esc(r.candidate.label)}</h1>
<p>Fixture <b>${esc(r.fixture.name)}</b> (tag <code>${esc(r.fixture.tag)}</code>, site ${esc(r.fixture.site)}), period ${iso(r.fixture.cutMs)} – ${iso(r.fixture.untilMs)}.</p>
<p class="${r.gate.passed ? 'pass' : 'fail'}"><b>Gate: ${r.gate.passed ? 'PASSED' : 'FAILED'}</b></p>
${r.gate.failures.length ? `<ul>${r.gate.failures.map((f) => `<li class="fail">${esc(f)}</li>`).join('')}</ul>` : ''}
<h2>What the candidate changes</h2>
${changeItems(r.agentChanges).length === 0 ? `<p>${esc(NO_CHANGES)}</p>` : `<ul>${changeItems(r.agentChanges).map((c) => (c.rule !== undefined ? `<li>${esc(c.rule)}</li>` : `<li>config <code>${esc(c.key!)}</code>: <code>${esc(c.from!)}</code> → <code>${esc(c.to!)}</code></li>`)).join('')}</ul>`}
${chart(r)}
<h2>Summary</h2>
<table>${rows([
    ['proposals (baseline)', String(r.baseline.proposals)],
    ['proposals (candidate)', String(r.candidate.proposals)],
    ['added', String(r.summary.added)],
    ['removed', String(r.summary.removed)],
    ['changed', String(r.summary.changed)],
    ['unchanged', String(r.summary.unchanged)],
  ])}</table>
<h2>Per rule</h2>
<table><tr><th>rule</th><th>baseline</th><th>candidate</th><th>added</th><th>removed</th><th>changed</th><th>unchanged</th></tr>
${rows(Object.entries(r.perRule).map(([k, c]) => [k, c.baseline, c.candidate, c.added, c.removed, c.changed, c.unchanged].map(String)))}</table>
<h2>Agreement with the people’s decisions</h2>
<p>A run agrees with an approval when it had a proposal of that situation open at the decision’s time, and with a rejection when it had none (deferrals are not counted).</p>
<table><tr><th></th><th>${esc(r.baseline.label)}</th><th>${esc(r.candidate.label)}</th></tr>${rows(ag)}</table>
${disagreements.join('')}<h2>Examples</h2>
<h3>Added (candidate only)</h3>${partial(r.examples.added.length, r.summary.added)}${list(r.examples.added.map(example), r.summary.added)}
<h3>Removed (baseline only)</h3>${partial(r.examples.removed.length, r.summary.removed)}${list(r.examples.removed.map(example), r.summary.removed)}
<h3>Changed</h3>${partial(r.examples.changed.length, r.summary.changed)}${list(r.examples.changed.map(changedItem), r.summary.changed)}
</body></html>
`;
}

/** The files a report is: what `replay diff` refuses to overwrite without `--force`. */
export const REPORT_FILES = ['report.md', 'report.html', 'report.json'] as const;

/** Writes report.md, report.html and report.json into `out` (replacing those, touching nothing else). */
export function writeReport(r: DiffReport, out: string): void {
  try {
    mkdirSync(out, { recursive: true });
  } catch (e) {
    throw new Error(`cannot create the report folder ${out}: ${(e as Error).message}`);
  }
  writeFileSync(join(out, 'report.json'), `${stableJson(r)}\n`);
  writeFileSync(join(out, 'report.md'), toMarkdown(r));
  writeFileSync(join(out, 'report.html'), toHtml(r));
}
