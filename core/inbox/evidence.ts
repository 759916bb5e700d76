// Evidence on demand: what the agent saw for a proposal, read back from the tags that pin it,
// and the proposal's decision trail. Works from any process (reads only) and at any later time:
// a tag keeps its snapshot's files after the snapshot itself expires, so the rows read here are
// the rows the agent read, as long as the tag is retained (one year by default, core/agents).
//
// For each table in the evidence: the tag, its snapshot, the recorded rows, the same keys read
// again at the tag (with `matches` = identical JSON), and optionally every row at the tag. Rows at
// the tag are in the columns the table had at its snapshot (time travel reads in the snapshot's
// schema, core/lsm), as the agent saw them: an ALTER since (a column renamed, dropped, added,
// retyped) changes neither the keys looked up nor the rows compared.

import { valueToJson, type Catalog, type Table } from '../lsm/index.ts';
import { readDecisionLog, type DecisionLogEntry } from './decision-log.ts';
import { InboxError } from './errors.ts';
import { decisionTagName, openInboxTables, readProposalRow } from './inbox.ts';
import { logFirstEntryOf, proposalFromRow } from './inbox-tables.ts';
import { canonicalJson, type EvidenceRow, type Json, type Proposal } from './proposal.ts';

export interface EvidenceTableReport {
  table: string;
  snapshotId: number | null;
  tag: string | null;
  /**
   * The tag the rows were read at: `decision-<proposal id>` when a person decided (kept for the
   * decision's retention, inbox.ts `keepEvidence`), else the agent's run tag; null when neither is left.
   */
  readAt: string | null;
  /** Whether a tag holding the evidence still exists, and until when it is retained (null: no retention time). */
  tagExists: boolean;
  tagRetainedUntilMs: number | null;
  recorded: readonly EvidenceRow[];
  /** The recorded keys read again at the tag; null values where a key is absent. */
  atTag: EvidenceRow[];
  matches: boolean;
  /** Every row at the tag (with `allRows`). */
  allRows?: EvidenceRow[];
  problem?: string;
}

export interface EvidenceReport {
  proposal: Proposal;
  tables: EvidenceTableReport[];
  trail: DecisionLogEntry[];
}

/** Rows in the columns of `reader.schema` (a reader's at a read point), as evidence rows (JSON forms). */
export function evidenceRows(reader: Pick<Table, 'schema'>, rows: Iterable<unknown[]>): EvidenceRow[] {
  const s = reader.schema;
  const out: EvidenceRow[] = [];
  for (const row of rows) {
    const values: Record<string, Json> = {};
    s.fields.forEach((f, i) => (values[f.name] = valueToJson(f.type, row[i]) as Json));
    const key: Record<string, Json> = {};
    for (const k of s.primaryKeys) key[k] = values[k]!;
    out.push({ key, values });
  }
  return out;
}

export function evidenceReport(catalog: Catalog, database: string, proposalId: string, o: { allRows?: boolean } = {}): EvidenceReport {
  const { inbox, log } = openInboxTables(catalog, database);
  const row = readProposalRow(inbox, proposalId);
  const proposal = row && proposalFromRow(row);
  if (!proposal) throw new InboxError('NotFound', `proposal ${proposalId} does not exist`);
  const tables: EvidenceTableReport[] = [];
  for (const e of proposal.evidence) {
    const r: EvidenceTableReport = { table: e.table, snapshotId: e.snapshotId, tag: e.tag, readAt: null, tagExists: false, tagRetainedUntilMs: null, recorded: e.rows, atTag: [], matches: false };
    tables.push(r);
    if (e.tag === null) {
      r.problem = 'the table had no snapshot when the agent read it';
      r.matches = e.rows.length === 0;
      continue;
    }
    let table: Table;
    try {
      table = catalog.getTable({ database, table: e.table });
    } catch (err) {
      r.problem = (err as Error).message;
      continue;
    }
    const kept = decisionTagName(proposal.id);
    const tag = table.tags.exists(kept) ? kept : table.tags.exists(e.tag) ? e.tag : undefined;
    if (tag === undefined) {
      r.problem = `tag '${e.tag}' no longer exists (expired or deleted); the recorded rows are all that is left`;
      continue;
    }
    const info = table.tags.get(tag);
    r.readAt = tag;
    r.tagExists = true;
    r.tagRetainedUntilMs = info.createTimeMillis !== undefined && info.retainedMillis !== undefined ? info.createTimeMillis + info.retainedMillis : null;
    if (info.snapshot.id !== e.snapshotId) r.problem = `tag '${tag}' points at snapshot ${info.snapshot.id}, the proposal recorded ${e.snapshotId}`;
    const reader = table.reader({ tag });
    try {
      for (const rec of e.rows) {
        const row = reader.get(keyInMemory(reader, rec.key));
        r.atTag.push(row ? evidenceRows(reader, [row])[0]! : { key: rec.key, values: {} });
      }
      if (o.allRows) r.allRows = evidenceRows(reader, reader.scan());
    } finally {
      reader.close();
    }
    r.matches = r.problem === undefined && canonicalJson(r.atTag) === canonicalJson(e.rows);
  }
  return { proposal, tables, trail: readDecisionLog(log, proposalId, logFirstEntryOf(row)) };
}

/** A recorded key in memory form, by the key columns of `reader.schema`. */
function keyInMemory(reader: Pick<Table, 'schema'>, key: Record<string, Json>): Record<string, unknown> {
  const s = reader.schema;
  const out: Record<string, unknown> = {};
  for (const k of s.primaryKeys) {
    const f = s.fields[s.fieldIndex.get(k)!]!;
    out[k] = jsonToMemory(f.type, key[k]);
  }
  return out;
}

// Keys are strings and integers in the seed tables; BIGINT keys come back as bigint.
function jsonToMemory(type: Table['schema']['fields'][number]['type'], v: Json | undefined): unknown {
  if (v === null || v === undefined) return v;
  if (type.root === 'BIGINT') return BigInt(v as number | string);
  return v;
}

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? '-' : new Date(ms).toISOString());

/** The report as lines for a terminal. */
export function formatEvidence(r: EvidenceReport): string[] {
  const p = r.proposal;
  const lines = [
    `proposal ${p.id}  ${p.status}${p.command ? ` (command ${p.command.state})` : ''}`,
    `  rule       ${p.ruleId}@${p.ruleVersion}   run ${p.runId}   proposed ${iso(p.createdAtMs)}`,
    `  action     ${p.action}${p.module ? ` → ${p.module}` : ' (notice)'} ${JSON.stringify(p.params)}`,
    `  risk       ${p.risk}: ${p.riskReason}`,
    `  why        ${p.explanation}`,
  ];
  for (const t of r.tables) {
    lines.push('', `  ${t.table} at snapshot ${t.snapshotId ?? '-'} (tag ${t.tag ?? '-'}${t.tagExists ? `, kept${t.readAt !== t.tag ? ` as ${t.readAt}` : ''} until ${iso(t.tagRetainedUntilMs)}` : ''})${t.tagExists ? (t.matches ? ' — rows at the tag match the record' : ' — ROWS AT THE TAG DIFFER FROM THE RECORD') : ''}`);
    if (t.problem) lines.push(`    note: ${t.problem}`);
    const shown = t.tagExists ? t.atTag : t.recorded;
    for (const row of shown) lines.push(`    ${JSON.stringify(row.values)}`);
    if (t.allRows) {
      lines.push(`    every row at the tag (${t.allRows.length}):`);
      for (const row of t.allRows) lines.push(`      ${JSON.stringify(row.values)}`);
    }
  }
  lines.push('', '  decision trail:');
  for (const e of r.trail) lines.push(`    #${e.id} ${iso(e.atMs)} ${e.event.padEnd(20)} ${e.actor}  ${JSON.stringify(e.detail)}`);
  if (r.trail.length === 0) lines.push('    (none)');
  return lines;
}
