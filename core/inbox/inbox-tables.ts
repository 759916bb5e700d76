// The inbox's two tables in `site_<id>.db`, as table-store schema specs, and the conversion
// between a proposal and its `approval_inbox` row.
//
// approval_inbox: primary key `proposal_id`, merge engine partial-update with three sequence
// groups, one per writer side, so no side ever clobbers another's columns:
//   agent     (`agent_seq`)     what the agent proposed, and its withdrawal
//   decision  (`decision_seq`)  who decided what, when, against which snapshots
//   command   (`command_seq`)   the write-back's progress
// Each side rewrites all of its group's columns (a group write replaces the whole group, nulls
// included) with the group's sequence + 1. JSON-valued columns (params, evidence, snapshots) are
// STRING holding JSON text, readable by any Paimon engine with its JSON functions.
//
// decision_log: one row per event (proposed, withdrawn, decided, refused, command progress).
// For now a primary-key table keyed by a monotonically increasing `entry_id` (the next id is kept
// in the table's snapshot properties); append tables (no primary key) are being added to core/lsm
// by another engineer, and the log should become one when they land (DESIGN.md).

import type { SchemaSpec } from '../lsm/index.ts';
import { isMessage, PROPOSAL_MESSAGE_KEYS, statusOf, type CommandProgress, type Decision, type Json, type Message, type Proposal, type ProposalInput, type ProposalMessages } from './proposal.ts';

export const APPROVAL_INBOX_TABLE = 'approval_inbox';

/**
 * Both tables only grow, their keys mostly at the end (proposal ids start with the run's time;
 * log entry ids count up). Files rolled at 2 MB (not Paimon's 128 MB) let compaction move the
 * older ones up a level as they are instead of rewriting the whole table each time the newer
 * runs reach its size (core/lsm compaction/compact-plan.ts). Measured on a decision log filled
 * to 300,000 entries in commits of 50: the commits that compact took 130–250 ms wherever in the
 * log; with 128 MB files the slowest was already 396 ms at 150,000 entries, growing with the log.
 */
export const INBOX_TARGET_FILE_SIZE = '2 mb';
export const DECISION_LOG_TABLE = 'decision_log';

const AGENT_COLUMNS = [
  ['situation_key', 'STRING'],
  ['rule_id', 'STRING'],
  ['rule_version', 'STRING'],
  ['action', 'STRING'],
  ['module', 'STRING'],
  ['params', 'STRING'],
  ['risk', 'STRING'],
  ['risk_reason', 'STRING'],
  ['explanation', 'STRING'],
  ['evidence', 'STRING'],
  ['run_id', 'STRING'],
  ['created_at_ms', 'BIGINT'],
  ['agent_status', 'STRING'],
  ['withdrawn_reason', 'STRING'],
  ['agent_updated_at_ms', 'BIGINT'],
] as const;
const DECISION_COLUMNS = [
  ['decision', 'STRING'],
  ['decided_by', 'STRING'],
  ['decided_role', 'STRING'],
  ['decided_at_ms', 'BIGINT'],
  ['decision_comment', 'STRING'],
  ['decision_snapshots', 'STRING'],
  ['decision_reason', 'STRING'],
] as const;
const COMMAND_COLUMNS = [
  ['command_state', 'STRING'],
  ['command_topic', 'STRING'],
  ['command_sent_at_ms', 'BIGINT'],
  ['command_updated_at_ms', 'BIGINT'],
  ['command_detail', 'STRING'],
] as const;

export type InboxGroup = 'agent' | 'decision' | 'command';
export const GROUP_SEQ: Record<InboxGroup, string> = { agent: 'agent_seq', decision: 'decision_seq', command: 'command_seq' };
export const GROUP_COLUMNS: Record<InboxGroup, readonly string[]> = {
  agent: AGENT_COLUMNS.map((c) => c[0]),
  decision: DECISION_COLUMNS.map((c) => c[0]),
  command: COMMAND_COLUMNS.map((c) => c[0]),
};

export const APPROVAL_INBOX_SPEC: SchemaSpec = {
  comment: 'Proposals of the agents, the decisions of named users and the write-back progress.',
  fields: [
    { name: 'proposal_id', type: 'STRING NOT NULL' },
    ...AGENT_COLUMNS.map(([name, type]) => ({ name, type })),
    { name: 'log_first_entry', type: 'BIGINT' },
    { name: 'agent_messages', type: 'STRING' },
    { name: 'agent_seq', type: 'BIGINT' },
    ...DECISION_COLUMNS.map(([name, type]) => ({ name, type })),
    { name: 'decision_seq', type: 'BIGINT' },
    ...COMMAND_COLUMNS.map(([name, type]) => ({ name, type })),
    { name: 'command_seq', type: 'BIGINT' },
  ],
  primaryKeys: ['proposal_id'],
  options: {
    bucket: '1',
    'merge-engine': 'partial-update',
    'fields.agent_seq.sequence-group': GROUP_COLUMNS.agent.join(','),
    'fields.decision_seq.sequence-group': GROUP_COLUMNS.decision.join(','),
    'fields.command_seq.sequence-group': GROUP_COLUMNS.command.join(','),
    'target-file-size': INBOX_TARGET_FILE_SIZE,
  },
};

export const DECISION_LOG_SPEC: SchemaSpec = {
  comment: 'Every proposal, decision and command outcome, in order (entry_id grows by one).',
  fields: [
    { name: 'entry_id', type: 'BIGINT NOT NULL' },
    { name: 'at_ms', type: 'BIGINT' },
    { name: 'proposal_id', type: 'STRING' },
    { name: 'event', type: 'STRING', description: 'proposed | withdrawn | approved | rejected | deferred | stale | refused | command_<state> | config_changed' },
    { name: 'actor', type: 'STRING', description: 'agent run, user name or module' },
    { name: 'detail', type: 'STRING', description: 'JSON' },
  ],
  primaryKeys: ['entry_id'],
  options: { bucket: '1', 'merge-engine': 'deduplicate', 'target-file-size': INBOX_TARGET_FILE_SIZE },
};

/**
 * `log_first_entry`: the `entry_id` of the proposal's first decision_log entry (its `proposed`).
 * Every entry of the proposal comes at or after it (ids only grow), so its trail is read from
 * there on: files of the log holding only older entries are skipped by their key statistics.
 * Written once, by the agent side's first write, and in no sequence group: outside the groups a
 * null never overwrites (partial-update), so later group writes leave it. (Outside the groups also
 * because Paimon does not let a table's sequence groups change after it is made, and tables from
 * before the column get it by ALTER TABLE.) Null on rows written before the column existed: their
 * trail is read from the start of the log.
 */
export const LOG_FIRST_ENTRY = 'log_first_entry';

/** The log entry a proposal's trail starts at, from its row; undefined when the row has none. */
export function logFirstEntryOf(row: InboxRow | undefined): number | undefined {
  const v = row?.[LOG_FIRST_ENTRY];
  return typeof v === 'bigint' || typeof v === 'number' ? Number(v) : undefined;
}

/**
 * `agent_messages`: the texts the agent's rules wrote as messages (ProposalMessages as JSON:
 * `{explanation, riskReason, withdrawnReason?, staleReason?}`, each `{id, params}`), so the floor
 * reads them in its own language; the English texts (`explanation`, `risk_reason`,
 * `withdrawn_reason`, `decision_reason`) stay the record. In no sequence group, for the reasons
 * `log_first_entry` is in none (tables from before get it by ALTER TABLE, after
 * `log_first_entry`): written whole with the proposal, and again whole (the stored messages and
 * the new one) by the write that withdraws it or finds it stale; a null never overwrites it. Null
 * on rows written before the column existed and on proposals whose rule gave no messages.
 */
export const AGENT_MESSAGES = 'agent_messages';

/** The column value of a proposal's messages (null without). */
export const messagesColumn = (m: ProposalMessages | undefined): string | null => (m === undefined ? null : JSON.stringify(m));

/** A row's messages, those in the shape this version writes; undefined when there are none. */
function messagesOfRow(r: InboxRow): ProposalMessages | undefined {
  const m = parse<Record<string, unknown> | null>(r[AGENT_MESSAGES], null);
  if (m === null || typeof m !== 'object') return undefined;
  const out: Partial<Record<(typeof PROPOSAL_MESSAGE_KEYS)[number], Message>> = {};
  for (const k of PROPOSAL_MESSAGE_KEYS) if (isMessage(m[k])) out[k] = m[k];
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The approval_inbox row as a record by column name (memory form: BIGINT as bigint). */
export type InboxRow = Record<string, unknown>;

const big = (v: number | null): bigint | null => (v === null ? null : BigInt(v));
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const parse = <T>(v: unknown, fallback: T): T => (typeof v === 'string' && v.length > 0 ? (JSON.parse(v) as T) : fallback);

export function agentColumns(id: string, p: ProposalInput, createdAtMs: number, status: 'open' | 'withdrawn', withdrawnReason: string | null, updatedAtMs: number): InboxRow {
  return {
    proposal_id: id,
    situation_key: p.situationKey,
    rule_id: p.ruleId,
    rule_version: p.ruleVersion,
    action: p.action,
    module: p.module,
    params: JSON.stringify(p.params),
    risk: p.risk,
    risk_reason: p.riskReason,
    explanation: p.explanation,
    evidence: JSON.stringify(p.evidence),
    run_id: p.runId,
    created_at_ms: BigInt(createdAtMs),
    agent_status: status,
    withdrawn_reason: withdrawnReason,
    agent_updated_at_ms: BigInt(updatedAtMs),
  };
}

export function decisionColumns(d: Decision): InboxRow {
  return {
    decision: d.kind,
    decided_by: d.by,
    decided_role: d.role,
    decided_at_ms: BigInt(d.atMs),
    decision_comment: d.comment,
    decision_snapshots: JSON.stringify(d.snapshots),
    decision_reason: d.reason,
  };
}

export function commandColumns(c: CommandProgress): InboxRow {
  return {
    command_state: c.state,
    command_topic: c.topic,
    command_sent_at_ms: big(c.sentAtMs),
    command_updated_at_ms: BigInt(c.updatedAtMs),
    command_detail: c.detail,
  };
}

/** The decision group of a row; null when no one has decided. */
export function decisionOfRow(r: InboxRow): Decision | null {
  if (r.decision === null || r.decision === undefined) return null;
  return {
    kind: r.decision as Decision['kind'],
    by: String(r.decided_by),
    role: String(r.decided_role),
    atMs: num(r.decided_at_ms)!,
    comment: str(r.decision_comment),
    snapshots: parse(r.decision_snapshots, { seen: {}, checked: {} }),
    reason: str(r.decision_reason),
  };
}

/** The command group of a row; null before an approval. */
export function commandOfRow(r: InboxRow): CommandProgress | null {
  if (r.command_state === null || r.command_state === undefined) return null;
  return {
    state: r.command_state as CommandProgress['state'],
    topic: String(r.command_topic),
    sentAtMs: num(r.command_sent_at_ms),
    updatedAtMs: num(r.command_updated_at_ms)!,
    detail: str(r.command_detail),
  };
}

/** A proposal from its row (by column name). */
export function proposalFromRow(r: InboxRow): Proposal {
  const decision = decisionOfRow(r);
  const command = commandOfRow(r);
  const messages = messagesOfRow(r);
  const base = {
    id: String(r.proposal_id),
    situationKey: String(r.situation_key),
    ruleId: String(r.rule_id),
    ruleVersion: String(r.rule_version),
    action: String(r.action),
    module: str(r.module),
    params: parse<Record<string, Json>>(r.params, {}),
    risk: r.risk as Proposal['risk'],
    riskReason: String(r.risk_reason ?? ''),
    explanation: String(r.explanation ?? ''),
    ...(messages ? { messages } : {}),
    evidence: parse(r.evidence, []),
    runId: String(r.run_id),
    createdAtMs: num(r.created_at_ms)!,
    agentStatus: (r.agent_status === 'withdrawn' ? 'withdrawn' : 'open') as Proposal['agentStatus'],
    withdrawnReason: str(r.withdrawn_reason),
    agentUpdatedAtMs: num(r.agent_updated_at_ms)!,
    decision,
    command,
  };
  return { ...base, status: statusOf(base) };
}

/** A row (schema order) as a record by column name. */
export function rowRecord(fields: readonly { name: string }[], row: readonly unknown[]): InboxRow {
  const r: InboxRow = {};
  fields.forEach((f, i) => (r[f.name] = row[i]));
  return r;
}
