// `tilstand replay diff`: two runs of one fixture (a baseline and a candidate agent), compared
// with each other and each with the people's recorded decisions.
//
// Matching proposals between runs: per situation key, in creation order, a baseline and a
// candidate proposal are the same proposal when their open intervals overlap ([createdAt,
// closedAt), open-ended while open; two made at one instant overlap). Unmatched ones are `removed` (baseline only) or `added`
// (candidate only); matched ones whose content differs are `changed` (the fields that differ are
// listed: created time, rule version, action, module, params, risk, explanation, status, and how
// it ended: when it closed, why it was withdrawn).
// Evidence snapshot ids are not compared (they are ids of the scratch warehouse).
//
// Agreement with the people (per run): every recorded `approve` (approved, or stale: the person
// said yes but the world had moved) and `reject` in the period is one judgement. A run agrees
// with an approval when it had a proposal of that situation open at the decision's time, and with
// a rejection when it had none. agreement = agreeing judgements / judgements (null when there are
// none). Deferrals are not judgements. Whether it had one is the run's own record (decisions.json:
// the replay made each decision again on its open proposal of that situation, `unmatched` when it
// had none), which counts the proposals open since before the cut too: proposals.json lists only
// those made in the period.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson } from '../inbox/index.ts';
import { byCreation, isObject, readJsonFile, REPORT_FORMAT, RUN_FORMAT, type HumanDecision, type ReplayProposal } from './fixture.ts';
import type { AgentRunRecord, DecisionOutcome, RunManifest, RunRule } from './replay.ts';

export interface LoadedRun {
  manifest: RunManifest;
  proposals: ReplayProposal[];
  decisions: HumanDecision[];
  /** What the replay made of each of `decisions` (same order): `unmatched` when it had no proposal of that situation open. */
  outcomes: DecisionOutcome[];
  /** Errors the run's rules threw over its agent runs (agent-runs.json): how many, and the first. */
  ruleErrors: { count: number; first: string | null };
}

/** `n` and its noun, in the singular for one ("1 proposal", "2 proposals"). */
function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** A `replay run` output folder; a missing or damaged file is named (never a bare JSON or type error). */
export function loadRun(dir: string): LoadedRun {
  if (!existsSync(dir)) throw new Error(`run ${dir} does not exist`);
  if (!existsSync(join(dir, 'run.json'))) throw new Error(`${dir} is not a replay run (no run.json)`);
  const manifest = readJsonFile<RunManifest>(join(dir, 'run.json'), (v) => {
    if (!isObject(v)) return 'expected a JSON object';
    if (v.format !== RUN_FORMAT) return `run format ${JSON.stringify(v.format)}, expected ${RUN_FORMAT}`;
    const f = v.fixture;
    if (!isObject(f) || typeof f.id !== 'string' || !Number.isSafeInteger(f.cutMs) || !Number.isSafeInteger(f.untilMs)) return 'fixture: expected {id, name, tag, site, cutMs, untilMs}';
    const a = v.agent;
    if (!isObject(a) || typeof a.label !== 'string' || !Array.isArray(a.rules)) return 'agent: expected {label, rules, …}';
    return undefined;
  });
  const list = (f: string) => {
    if (!existsSync(join(dir, f))) throw new Error(`run ${dir}: ${f} is missing`);
    return readJsonFile<unknown[]>(join(dir, f), (v) => (Array.isArray(v) && v.every(isObject) ? undefined : 'expected a JSON array of objects'));
  };
  const decisions = list('human-decisions.json') as HumanDecision[];
  const outcomes = list('decisions.json') as DecisionOutcome[];
  const odd = decisions.findIndex((d, i) => outcomes[i]?.atMs !== d.atMs || outcomes[i]?.liveProposalId !== d.proposalId || typeof outcomes[i]?.replayOutcome !== 'string');
  if (odd >= 0 || outcomes.length !== decisions.length) throw new Error(`${join(dir, 'decisions.json')} is damaged: expected the outcome of each of human-decisions.json's ${counted(decisions.length, 'decision')}, in order${odd >= 0 ? ` (entry ${odd} is not)` : ''}`);
  // Agreement reads each decision's verb and rule: any verb but approve counted as a rejection.
  const badDecision = decisions.map(decisionProblem).findIndex((x) => x !== undefined);
  if (badDecision >= 0) throw new Error(`${join(dir, 'human-decisions.json')} is damaged: entry ${badDecision}: ${decisionProblem(decisions[badDecision])}`);
  let count = 0;
  let first: string | null = null;
  for (const r of list('agent-runs.json') as Array<Partial<AgentRunRecord>>) {
    if (!Array.isArray(r.ruleErrors)) throw new Error(`${join(dir, 'agent-runs.json')} is damaged: expected ruleErrors in every run`);
    count += r.ruleErrors.length;
    const e = r.ruleErrors[0] as { ruleId?: unknown; message?: unknown } | undefined;
    if (first === null && e) first = `${String(e.ruleId)}: ${String(e.message)}`;
  }
  const proposals = list('proposals.json');
  const bad = proposals.map(proposalProblem).findIndex((x) => x !== undefined);
  if (bad >= 0) throw new Error(`${join(dir, 'proposals.json')} is damaged: entry ${bad}: ${proposalProblem(proposals[bad])}`);
  return { manifest, proposals: proposals as ReplayProposal[], decisions, outcomes, ruleErrors: { count, first } };
}

/** What is wrong with one of a run's human decisions for the agreement, or undefined. */
function decisionProblem(v: unknown): string | undefined {
  const d = v as Record<string, unknown>;
  if (d.verb !== 'approve' && d.verb !== 'reject' && d.verb !== 'defer') return 'verb: expected approve, reject or defer';
  if (!Number.isSafeInteger(d.atMs)) return 'atMs: expected a time (epoch ms)';
  for (const k of ['proposalId', 'ruleId', 'situationKey'] as const) if (typeof d[k] !== 'string') return `${k}: expected a string`;
  return undefined;
}

/**
 * What is wrong with one of a run's proposals for the diff, or undefined: the fields it matches on
 * and compares. Read as it is, an entry without a situation key or creation time matches nothing
 * and is counted added or removed, a difference the runs do not have.
 */
function proposalProblem(v: unknown): string | undefined {
  const p = v as Record<string, unknown>;
  for (const k of ['id', 'ruleId', 'situationKey', 'status'] as const) if (typeof p[k] !== 'string') return `${k}: expected a string`;
  if (!Number.isSafeInteger(p.createdAtMs)) return 'createdAtMs: expected a time (epoch ms)';
  if (p.closedAtMs !== null && !Number.isSafeInteger(p.closedAtMs)) return 'closedAtMs: expected a time (epoch ms) or null';
  if (!Array.isArray(p.evidence)) return 'evidence: expected a list';
  const missing = COMPARED.find((k) => p[k] === undefined);
  return missing === undefined ? undefined : `${missing}: missing`;
}

const COMPARED = ['createdAtMs', 'ruleVersion', 'action', 'module', 'params', 'risk', 'riskReason', 'explanation', 'status'] as const;
/**
 * How a proposal ended besides its status, compared too: when it closed (how long it stood before
 * the people) and why it was withdrawn. Not required of a run's proposals (`null` when absent).
 */
const ENDING = ['closedAtMs', 'withdrawnReason'] as const;

/** A proposal in the report: every field `changed` compares (the report shows both values), evidence. */
export interface ProposalRef {
  id: string;
  ruleId: string;
  ruleVersion: string;
  situationKey: string;
  createdAtMs: number;
  action: string;
  module: string | null;
  params: unknown;
  risk: string;
  riskReason: string;
  explanation: string;
  status: string;
  closedAtMs: number | null;
  withdrawnReason: string | null;
  evidence: ReplayProposal['evidence'];
}

export interface Changed {
  ruleId: string;
  situationKey: string;
  fields: string[];
  baseline: ProposalRef;
  candidate: ProposalRef;
}

export interface RuleCounts {
  baseline: number;
  candidate: number;
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
}

export interface Agreement {
  judgements: number;
  agreed: number;
  agreement: number | null;
  approvedProposed: number;
  approvedMissed: number;
  rejectedAvoided: number;
  rejectedProposed: number;
  perRule: Record<string, { judgements: number; agreed: number; agreement: number | null }>;
  disagreements: { atMs: number; verb: string; situationKey: string; ruleId: string; by: string; comment: string | null; runHadItOpen: boolean }[];
}

export interface GateResult {
  minAgreement: number | null;
  maxChanged: number | null;
  passed: boolean;
  failures: string[];
}

/** What the candidate agent differs in from the baseline: what the report is about, said first. */
export interface AgentChanges {
  /**
   * Rules one side ran and the other did not, or at another version, or from another rule file's
   * bytes: the version each ran (null: not run), and the rule file (path, SHA-256) of a side that
   * ran the rule from one.
   */
  rules: { id: string; baseline: string | null; candidate: string | null; baselineFile?: RunRule['file']; candidateFile?: RunRule['file'] }[];
  /** Agent config keys whose values differ (run.json `agent.config`): each side's value (null: not set). */
  config: { key: string; baseline: unknown; candidate: unknown }[];
  /**
   * What each side's rules started from (run.json `agent.base`: "live" or "installed"; null: not
   * recorded — no live rule files in the fixture, or a run.json from before), only when they differ.
   */
  base?: { baseline: string | null; candidate: string | null };
}

export function agentChanges(b: RunManifest['agent'], c: RunManifest['agent']): AgentChanges {
  const byId = (a: RunManifest['agent']) => new Map(a.rules.map((r) => [r.id, r]));
  const bv = byId(b);
  const cv = byId(c);
  // A rule file's code is its bytes: the same version from another file's bytes is a change too.
  const code = (r: RunRule | undefined) => (r === undefined ? null : `${r.version}\u0000${r.file?.sha256 ?? ''}`);
  const rules = [...new Set([...bv.keys(), ...cv.keys()])]
    .sort()
    .filter((id) => code(bv.get(id)) !== code(cv.get(id)))
    .map((id) => {
      const [br, cr] = [bv.get(id), cv.get(id)];
      return { id, baseline: br?.version ?? null, candidate: cr?.version ?? null, ...(br?.file ? { baselineFile: br.file } : {}), ...(cr?.file ? { candidateFile: cr.file } : {}) };
    });
  // A run written before run.json carried the config compares as none.
  const cfg = (a: RunManifest['agent']) => (isObject(a.config) ? a.config : {});
  const bc = cfg(b);
  const cc = cfg(c);
  const config = [...new Set([...Object.keys(bc), ...Object.keys(cc)])]
    .sort()
    .filter((k) => canonicalJson(bc[k] ?? null) !== canonicalJson(cc[k] ?? null))
    .map((key) => ({ key, baseline: bc[key] ?? null, candidate: cc[key] ?? null }));
  // The base decides whether the live site's rule files ran: said beside the rules it changed.
  const base = (a: RunManifest['agent']) => (typeof a.base === 'string' ? a.base : null);
  return { rules, config, ...(base(b) !== base(c) ? { base: { baseline: base(b), candidate: base(c) } } : {}) };
}

export interface DiffReport {
  format: typeof REPORT_FORMAT;
  fixture: { id: string; name: string; tag: string; site: string; cutMs: number; untilMs: number };
  baseline: { label: string; rules: RunRule[]; proposals: number };
  candidate: { label: string; rules: RunRule[]; proposals: number };
  agentChanges: AgentChanges;
  summary: { added: number; removed: number; changed: number; unchanged: number };
  perRule: Record<string, RuleCounts>;
  agreement: { baseline: Agreement; candidate: Agreement };
  examples: { added: ProposalRef[]; removed: ProposalRef[]; changed: Changed[] };
  gate: GateResult;
}

const ref = (p: ReplayProposal): ProposalRef => ({
  id: p.id,
  ruleId: p.ruleId,
  ruleVersion: p.ruleVersion,
  situationKey: p.situationKey,
  createdAtMs: p.createdAtMs,
  action: p.action,
  module: p.module,
  params: p.params,
  risk: p.risk,
  riskReason: p.riskReason,
  explanation: p.explanation,
  status: p.status,
  closedAtMs: p.closedAtMs ?? null,
  withdrawnReason: p.withdrawnReason ?? null,
  evidence: p.evidence,
});

const closesAt = (p: ReplayProposal) => p.closedAtMs ?? Infinity;
// Open intervals are [created, closed): one closed at the instant another of its situation is made
// (a run withdraws a proposal whose recheck failed and proposes the situation again) was not open
// beside it, and matched to it would be counted as changed while its successor is counted removed.
// Two made at one instant were both open then, however soon one closed.
const overlap = (a: ReplayProposal, b: ReplayProposal) => a.createdAtMs === b.createdAtMs || (a.createdAtMs < closesAt(b) && b.createdAtMs < closesAt(a));

function bySituation(ps: readonly ReplayProposal[]): Map<string, ReplayProposal[]> {
  const m = new Map<string, ReplayProposal[]>();
  for (const p of ps) {
    const l = m.get(p.situationKey) ?? [];
    l.push(p);
    m.set(p.situationKey, l);
  }
  for (const l of m.values()) l.sort(byCreation);
  return m;
}

/** `decisions` and what the run made of each (`outcomes`, same order: LoadedRun). */
export function agreementOf(decisions: readonly HumanDecision[], outcomes: readonly DecisionOutcome[], examples = 5): Agreement {
  const a: Agreement = { judgements: 0, agreed: 0, agreement: null, approvedProposed: 0, approvedMissed: 0, rejectedAvoided: 0, rejectedProposed: 0, perRule: {}, disagreements: [] };
  // Counted in a Map: a rule id may be a name every object has (`constructor` is a valid one).
  const perRule = new Map<string, Agreement['perRule'][string]>();
  for (const [i, d] of decisions.entries()) {
    if (d.verb === 'defer') continue;
    // The replay's proposal of that situation open at the decision's time, if any, is the one it decided.
    const had = outcomes[i]!.replayOutcome !== 'unmatched';
    const ok = d.verb === 'approve' ? had : !had;
    a.judgements++;
    if (ok) a.agreed++;
    if (d.verb === 'approve') had ? a.approvedProposed++ : a.approvedMissed++;
    else had ? a.rejectedProposed++ : a.rejectedAvoided++;
    let r = perRule.get(d.ruleId);
    if (r === undefined) perRule.set(d.ruleId, (r = { judgements: 0, agreed: 0, agreement: null }));
    r.judgements++;
    if (ok) r.agreed++;
    if (!ok && a.disagreements.length < examples) a.disagreements.push({ atMs: d.atMs, verb: d.verb, situationKey: d.situationKey, ruleId: d.ruleId, by: d.by, comment: d.comment, runHadItOpen: had });
  }
  a.agreement = a.judgements === 0 ? null : a.agreed / a.judgements;
  for (const r of perRule.values()) r.agreement = r.agreed / r.judgements;
  a.perRule = Object.fromEntries(perRule);
  return a;
}

export interface DiffOptions {
  minAgreement?: number;
  maxChanged?: number;
  /** Examples of each kind in the report (default 5). */
  examples?: number;
}

export function diffRuns(base: LoadedRun, cand: LoadedRun, o: DiffOptions = {}): DiffReport {
  const fb = base.manifest.fixture;
  if (fb.id !== cand.manifest.fixture.id) throw new Error(`the runs replayed different fixtures (${fb.name} ${fb.id.slice(0, 12)}… and ${cand.manifest.fixture.name} ${cand.manifest.fixture.id.slice(0, 12)}…)`);
  const n = o.examples ?? 5;
  // A Map, not an object: a rule id may be a name every object has (`constructor` is a valid one).
  const perRule = new Map<string, RuleCounts>();
  const rc = (rule: string): RuleCounts => {
    let c = perRule.get(rule);
    if (c === undefined) perRule.set(rule, (c = { baseline: 0, candidate: 0, added: 0, removed: 0, changed: 0, unchanged: 0 }));
    return c;
  };
  for (const p of base.proposals) rc(p.ruleId).baseline++;
  for (const p of cand.proposals) rc(p.ruleId).candidate++;
  const added: ReplayProposal[] = [];
  const removed: ReplayProposal[] = [];
  const changed: Changed[] = [];
  let unchanged = 0;
  const bi = bySituation(base.proposals);
  const ci = bySituation(cand.proposals);
  for (const key of [...new Set([...bi.keys(), ...ci.keys()])].sort()) {
    const bs = bi.get(key) ?? [];
    const cs = ci.get(key) ?? [];
    let i = 0;
    let j = 0;
    while (i < bs.length || j < cs.length) {
      const b = bs[i];
      const c = cs[j];
      if (b && c && overlap(b, c)) {
        const fields = [...COMPARED, ...ENDING].filter((f) => canonicalJson(b[f] ?? null) !== canonicalJson(c[f] ?? null));
        if (fields.length > 0) {
          changed.push({ ruleId: c.ruleId, situationKey: key, fields, baseline: ref(b), candidate: ref(c) });
          rc(c.ruleId).changed++;
        } else {
          unchanged++;
          rc(c.ruleId).unchanged++;
        }
        i++;
        j++;
      } else if (b && (!c || b.createdAtMs <= c.createdAtMs)) {
        removed.push(b);
        rc(b.ruleId).removed++;
        i++;
      } else {
        added.push(c!);
        rc(c!.ruleId).added++;
        j++;
      }
    }
  }
  added.sort(byCreation);
  removed.sort(byCreation);
  changed.sort((a, b) => byCreation(a.candidate, b.candidate));
  const agreement = { baseline: agreementOf(base.decisions, base.outcomes, n), candidate: agreementOf(cand.decisions, cand.outcomes, n) };

  const failures: string[] = [];
  // Whatever the thresholds: a run whose ingest stopped saw part of the period, and a candidate
  // whose rules threw proposed less than it would have; neither is a basis for a release.
  for (const r of [base, cand]) {
    if (r.manifest.ingestFailure) failures.push(`the run of ${r.manifest.agent.label} stopped ingesting (${r.manifest.ingestFailure}): it covers part of the period only`);
  }
  if (cand.ruleErrors.count > 0) failures.push(`${cand.manifest.agent.label}'s rules threw ${counted(cand.ruleErrors.count, 'time')} in its agent runs (first: ${cand.ruleErrors.first})`);
  const total = added.length + removed.length + changed.length;
  if (o.minAgreement !== undefined) {
    const a = agreement.candidate.agreement;
    if (a === null) failures.push(`agreement of ${cand.manifest.agent.label} cannot be measured: the fixture holds no approvals or rejections`);
    else if (a < o.minAgreement) failures.push(`agreement of ${cand.manifest.agent.label} with the people's decisions is ${a.toFixed(3)}, below --min-agreement ${o.minAgreement}`);
  }
  if (o.maxChanged !== undefined && total > o.maxChanged) failures.push(`${counted(total, 'proposal')} added, removed or changed, more than --max-changed ${o.maxChanged}`);

  const side = (r: LoadedRun) => ({ label: r.manifest.agent.label, rules: r.manifest.agent.rules, proposals: r.proposals.length });
  return {
    format: REPORT_FORMAT,
    fixture: { id: fb.id, name: fb.name, tag: fb.tag, site: fb.site, cutMs: fb.cutMs, untilMs: fb.untilMs },
    baseline: side(base),
    candidate: side(cand),
    agentChanges: agentChanges(base.manifest.agent, cand.manifest.agent),
    summary: { added: added.length, removed: removed.length, changed: changed.length, unchanged },
    perRule: Object.fromEntries([...perRule].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    agreement,
    examples: { added: added.slice(0, n).map(ref), removed: removed.slice(0, n).map(ref), changed: changed.slice(0, n) },
    gate: { minAgreement: o.minAgreement ?? null, maxChanged: o.maxChanged ?? null, passed: failures.length === 0, failures },
  };
}
