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
//
// For an approved or stale proposal also the state its approval was checked against (the
// compare-and-set's re-check, `decision.snapshots.checked`): each table's snapshot, its tag
// `checked-<proposal id>` (inbox.ts `keepChecked`), and the rows the evidence cites read again
// there — what the rule saw when it let the command go, or found the world moved. Those rows are
// compared without the table's sequence columns (`sequence.field`, the partial-update sequence
// groups' fields): a module's sequence number moves with every event it sends, also one that
// changes nothing the rule read, and an approval that went through was shown as "changed". The
// report says which columns differ, per row and per table, and whether a sequence number moved.

import { isCorruption, LsmError, valueFromJson, valueToJson, type Catalog, type Table } from '../lsm/index.ts';
import { readDecisionLog, type DecisionLogEntry } from './decision-log.ts';
import { InboxError } from './errors.ts';
import { checkedTagName, decisionTagName, openInboxTables, readProposalRow } from './inbox.ts';
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

/** One table of the state an approval was checked against (`EvidenceReport.checked`). */
export interface EvidenceCheckedReport {
  table: string;
  /** The snapshot the re-check read (null: the table had none then). */
  snapshotId: number | null;
  /** `checked-<proposal id>`, made at the decision and kept for the decision's retention. */
  tag: string;
  /** Whether the tag still exists, and until when it is retained (null: no retention time). */
  tagExists: boolean;
  tagRetainedUntilMs: number | null;
  /** The rows the evidence cites on this table, read at the tag (empty when it cites none or the tag is gone). */
  cited: EvidenceRow[];
  /**
   * Whether those rows are the ones the evidence recorded, leaving out the sequence columns; null
   * when the evidence cites no row of this table or the tag is gone.
   */
  matchesEvidence: boolean | null;
  /** The columns that differ from the record in any cited row, sequence columns left out, in the rows' column order ([] when none does). */
  changedColumns: string[];
  /** Per cited row (as `cited`), the columns of that row that differ (a row gone at the tag: all it had). */
  changedCells: string[][];
  /** Whether a sequence column differs (alone it does not make the rows changed). */
  sequenceMoved: boolean;
  problem?: string;
}

export interface EvidenceReport {
  proposal: Proposal;
  tables: EvidenceTableReport[];
  /** For an approved or stale proposal: the state its approval was checked against, per table; else empty. */
  checked: EvidenceCheckedReport[];
  trail: DecisionLogEntry[];
}

/**
 * A table's sequence columns: its `sequence.field` and the fields of its partial-update sequence
 * groups (`fields.<f>.sequence-group`). They order a module's events and move with each one.
 */
export function sequenceColumns(schema: Pick<Table['schema'], 'options'>): string[] {
  const o = schema.options;
  return [...new Set([...o.sequenceFields, ...o.sequenceGroups.flatMap((g) => g.sequenceFields)])];
}

/**
 * The cited rows read again (`read`, one per `recorded` row, in its order) against the record:
 * per row the columns whose values differ (a column one side lacks counts as null), sequence
 * columns apart.
 */
export function compareCited(recorded: readonly EvidenceRow[], read: readonly EvidenceRow[], sequence: Iterable<string>): { changedColumns: string[]; changedCells: string[][]; sequenceMoved: boolean } {
  const seq = new Set(sequence);
  const all = new Set<string>();
  const changedCells: string[][] = [];
  let sequenceMoved = false;
  recorded.forEach((rec, i) => {
    const now = read[i]?.values ?? {};
    const changed: string[] = [];
    for (const c of new Set([...Object.keys(rec.values), ...Object.keys(now)])) {
      if (canonicalJson(rec.values[c] ?? null) === canonicalJson(now[c] ?? null)) continue;
      if (seq.has(c)) sequenceMoved = true;
      else changed.push(c);
    }
    changed.forEach((c) => all.add(c));
    changedCells.push(changed);
  });
  return { changedColumns: [...all], changedCells, sequenceMoved };
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
    // In the tag's snapshot's columns, and — not matching there — in the table's later ones, today's
    // first: the agent reads "now" in the current schema (read-only-table.ts), so after an ALTER
    // that no commit had followed when it ran (or a rollback as latest across one) it recorded its
    // rows in newer columns than the snapshot's own, and the same rows read as a mismatch. Which
    // schema was current at the run is not recorded: after a second ALTER it is neither the
    // snapshot's nor today's, so each schema in between is tried (only while none matches).
    const atTag = (schemaId?: number): { rows: EvidenceRow[]; all?: EvidenceRow[] } => {
      const reader = table.reader(schemaId === undefined ? { tag } : { tag, schemaId });
      try {
        const rows = e.rows.map((rec) => {
          const row = reader.get(keyInMemory(reader, rec.key));
          return row ? evidenceRows(reader, [row])[0]! : { key: rec.key, values: {} };
        });
        return o.allRows ? { rows, all: evidenceRows(reader, reader.scan()) } : { rows };
      } finally {
        reader.close();
      }
    };
    let read = atTag();
    for (let id = table.schema.id; id > info.snapshot.schemaId && canonicalJson(read.rows) !== canonicalJson(e.rows); id--) {
      let later: ReturnType<typeof atTag>;
      try {
        later = atTag(id);
      } catch (err) {
        // Only a schema the rows cannot be read in (a retyped column whose old values do not cast,
        // a well-formed schema this store does not take) is passed over: the others may still
        // match. A damaged schema file (Corruption), a failing disk (IOError), a schema file gone
        // (NotFound) are thrown, as every read here throws them: skipped, they left a mismatch
        // that sent a person after a wrong agent instead of a damaged file.
        if (err instanceof LsmError && (err.kind === 'InvalidArgument' || err.kind === 'NotSupported') && !isCorruption(err)) continue;
        throw err;
      }
      if (canonicalJson(later.rows) === canonicalJson(e.rows)) read = later;
    }
    r.atTag = read.rows;
    if (read.all !== undefined) r.allRows = read.all;
    r.matches = r.problem === undefined && canonicalJson(r.atTag) === canonicalJson(e.rows);
  }
  return { proposal, tables, checked: checkedReport(catalog, database, proposal), trail: readDecisionLog(log, proposalId, logFirstEntryOf(row)) };
}

/** The state an approved or stale proposal's approval was checked against, read at its `checked-<id>` tags. */
export function checkedReport(catalog: Catalog, database: string, proposal: Proposal): EvidenceCheckedReport[] {
  const d = proposal.decision;
  if (d === null || (d.kind !== 'approved' && d.kind !== 'stale')) return [];
  const tag = checkedTagName(proposal.id);
  const out: EvidenceCheckedReport[] = [];
  for (const [name, snapshotId] of Object.entries(d.snapshots.checked)) {
    const r: EvidenceCheckedReport = { table: name, snapshotId, tag, tagExists: false, tagRetainedUntilMs: null, cited: [], matchesEvidence: null, changedColumns: [], changedCells: [], sequenceMoved: false };
    out.push(r);
    if (snapshotId === null) {
      r.problem = 'the table had no snapshot when the approval was checked';
      continue;
    }
    let table: Table;
    try {
      table = catalog.getTable({ database, table: name });
    } catch (err) {
      r.problem = (err as Error).message;
      continue;
    }
    if (!table.tags.exists(tag)) {
      r.problem = `tag '${tag}' does not exist (a decision from before checked tags, expired, or deleted); the snapshot id is all that is left`;
      continue;
    }
    const info = table.tags.get(tag);
    r.tagExists = true;
    r.tagRetainedUntilMs = info.createTimeMillis !== undefined && info.retainedMillis !== undefined ? info.createTimeMillis + info.retainedMillis : null;
    if (info.snapshot.id !== snapshotId) r.problem = `tag '${tag}' points at snapshot ${info.snapshot.id}, the decision recorded ${snapshotId}`;
    const recorded = proposal.evidence.filter((e) => e.table === name).flatMap((e) => e.rows);
    if (recorded.length === 0) continue;
    const reader = table.reader({ tag });
    let sequence: string[];
    try {
      for (const rec of recorded) {
        const row = reader.get(keyInMemory(reader, rec.key));
        r.cited.push(row ? evidenceRows(reader, [row])[0]! : { key: rec.key, values: {} });
      }
      sequence = sequenceColumns(reader.schema);
    } finally {
      reader.close();
    }
    Object.assign(r, compareCited(recorded, r.cited, sequence));
    r.matchesEvidence = r.changedColumns.length === 0;
  }
  return out;
}

/** A recorded key in memory form, by the key columns of `reader.schema`. */
function keyInMemory(reader: Pick<Table, 'schema'>, key: Record<string, Json>): Record<string, unknown> {
  const s = reader.schema;
  const out: Record<string, unknown> = {};
  for (const k of s.primaryKeys) {
    const f = s.fields[s.fieldIndex.get(k)!]!;
    out[k] = jsonToMemory(f.type, key[k], k);
  }
  return out;
}

// A key as evidence stores it (JSON form) to the stored form: a BIGINT as bigint, a DATE, TIMESTAMP
// or DECIMAL from its text. Only BIGINT was converted; core/lsm's get refuses a value of another
// kind, so the evidence of a row of a table keyed by a date failed.
function jsonToMemory(type: Table['schema']['fields'][number]['type'], v: Json | undefined, column: string): unknown {
  if (v === null || v === undefined) return v;
  return valueFromJson(type, v, column);
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
  if (r.checked.length > 0) {
    lines.push('', `  checked at ${p.status === 'stale' ? 'the approval found stale' : 'approval'} (the state the re-check read):`);
    for (const c of r.checked) {
      const kept = c.tagExists ? `, kept until ${iso(c.tagRetainedUntilMs)}` : ', gone';
      const rows =
        c.matchesEvidence === null
          ? ''
          : c.matchesEvidence
            ? ` — cited rows as the evidence recorded${c.sequenceMoved ? ' (only sequence numbers moved)' : ''}`
            : ` — cited rows changed since the agent read them: ${c.changedColumns.join(', ')}`;
      lines.push(`  ${c.table} at snapshot ${c.snapshotId ?? '-'} (tag ${c.tag}${kept})${rows}`);
      if (c.problem) lines.push(`    note: ${c.problem}`);
      for (const row of c.cited) lines.push(`    ${JSON.stringify(row.values)}`);
    }
  }
  lines.push('', '  decision trail:');
  for (const e of r.trail) lines.push(`    #${e.id} ${iso(e.atMs)} ${e.event.padEnd(20)} ${e.actor}  ${JSON.stringify(e.detail)}`);
  if (r.trail.length === 0) lines.push('    (none)');
  return lines;
}
