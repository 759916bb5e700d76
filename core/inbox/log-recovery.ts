// Rebuilding decision_log entries lost in a crash between the inbox's two commits.
//
// Every inbox operation commits approval_inbox first, then decision_log (two tables, two atomic
// commits; Paimon has no commit across tables). A process killed between the two leaves the
// operation's rows in approval_inbox — the proposal, who decided, the command's progress — and its
// log entries nowhere. So each approval_inbox commit records, in its snapshot properties, the log's
// next entry id once the operation's entries are appended (`LOG_NEXT_PROPERTY`). At open, an
// approval_inbox snapshot that claims more than the log's committed next id names a commit whose
// entries were lost; its delta (the rows that commit wrote, core/lsm incremental.ts) holds one row
// per proposal it touched, with only the groups it wrote, and each written group is one entry:
//   agent group, open         → `proposed`  (at created_at_ms, by agent-<run_id>)
//   agent group, withdrawn    → `withdrawn` (at agent_updated_at_ms; the withdrawing run is not stored: by `agent`)
//   decision group            → the decision (at decided_at_ms, by decided_by)
//   command group             → `command_<state>` (at command_updated_at_ms; the ack's module is not stored: by `write-back`),
//                               except `pending`: the approval writes it and logs no entry for it
// in the order the inbox appends them: withdrawals, proposals (by log_first_entry), decisions,
// commands. Ids are given from the log's next id on, so a lost submit's `proposed` entries get the
// ids their rows' log_first_entry name. Every rebuilt entry says so in `detail.recovered`.
//
// What cannot be rebuilt: a state a proposal passed through within the lost commit (the delta
// holds the commit's merged row — one operation moves a command at most once), and `refused`
// entries, which are written without an inbox commit (the log commits them alone, so none is lost
// this way).

import type { Table } from '../lsm/index.ts';
import { entryDetail, type DecisionLog, type DecisionLogEntry } from './decision-log.ts';
import { commandOfRow, decisionOfRow, logFirstEntryOf, proposalFromRow, rowRecord, type InboxRow } from './inbox-tables.ts';

/** approval_inbox snapshot property: the decision_log's next entry id once this commit's entries are appended. */
export const LOG_NEXT_PROPERTY = 'tilstand.approval_inbox.log_next_id';

export const RECOVERED_NOTE = 'rebuilt from approval_inbox at open: the process stopped after the inbox commit and before the log commit';

type LostEntry = Omit<DecisionLogEntry, 'id'>;

const claimOf = (props: Record<string, string> | null | undefined): number | undefined => {
  const v = props?.[LOG_NEXT_PROPERTY];
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
};

/**
 * Appends and commits the log entries of approval_inbox commits the log never got. Returns how
 * many were rebuilt (0 when the log is complete, or the inbox's commits predate the property).
 */
export function recoverLostLogEntries(inbox: Table, log: DecisionLog, warn: (m: string) => void): number {
  const latest = inbox.latestSnapshot();
  const claimed = claimOf(latest?.properties);
  if (!latest || claimed === undefined || claimed <= log.nextEntryId) return 0;
  // The snapshots whose commit claims entries the log does not have: back from the latest until
  // one that claims no more than the log holds. Compaction snapshots carry the claim unchanged and
  // add no rows of their own.
  const lost = [];
  for (let id = latest.id; id >= 1; id--) {
    const s = inbox.snapshots.tryGet(id);
    if (!s) {
      warn(`decision_log: approval_inbox snapshot ${id} has expired; entries of commits before snapshot ${id + 1} that the log lacks cannot be rebuilt`);
      break;
    }
    const c = claimOf(s.properties);
    if (c === undefined || c <= log.nextEntryId) break;
    if (s.commitKind === 'APPEND') lost.unshift(s.id);
  }
  let entries = 0;
  for (const id of lost) {
    const rows: InboxRow[] = [];
    for (const ch of inbox.changes({ from: id - 1, to: id, mode: 'delta' })) {
      if (ch.kind === '+I' || ch.kind === '+U') rows.push(rowRecord(inbox.schema.fields, ch.row));
    }
    for (const e of entriesOf(rows)) {
      log.append(e);
      entries++;
    }
  }
  log.reserveThrough(claimed);
  log.commit();
  warn(
    `decision_log: rebuilt ${entries} entr${entries === 1 ? 'y' : 'ies'} (ids up to ${log.nextEntryId - 1}) of ${lost.length} approval_inbox commit(s) ` +
      `whose log commit never happened (the process stopped between the two); marked detail.recovered`,
  );
  return entries;
}

/** The log entries one lost commit's rows stand for, in the order the inbox appends them. */
function entriesOf(rows: readonly InboxRow[]): LostEntry[] {
  const withdrawn: LostEntry[] = [];
  const proposed: { at: number; e: LostEntry }[] = [];
  const decided: LostEntry[] = [];
  const commands: LostEntry[] = [];
  const recovered = RECOVERED_NOTE;
  for (const r of rows) {
    const id = String(r.proposal_id);
    if (r.agent_seq !== null && r.agent_seq !== undefined) {
      // The agent group is written whole, so the row reads as the proposal it wrote.
      const p = proposalFromRow(r);
      if (p.agentStatus === 'withdrawn') {
        withdrawn.push({ atMs: p.agentUpdatedAtMs, proposalId: id, event: 'withdrawn', actor: 'agent', detail: { ...entryDetail.withdrawn(p.withdrawnReason), recovered } });
      } else {
        const at = logFirstEntryOf(r) ?? Number.MAX_SAFE_INTEGER;
        proposed.push({ at, e: { atMs: p.createdAtMs, proposalId: id, event: 'proposed', actor: `agent-${p.runId}`, detail: { ...entryDetail.proposed(p), recovered } } });
      }
    }
    const d = r.decision_seq !== null && r.decision_seq !== undefined ? decisionOfRow(r) : null;
    if (d) decided.push({ atMs: d.atMs, proposalId: id, event: d.kind, actor: d.by, detail: { ...entryDetail.decided(d), recovered } });
    const c = r.command_seq !== null && r.command_seq !== undefined ? commandOfRow(r) : null;
    // `pending` is written only by the approval itself, which logs no entry of its own for it.
    if (c && c.state !== 'pending') commands.push({ atMs: c.updatedAtMs, proposalId: id, event: `command_${c.state}`, actor: 'write-back', detail: { ...entryDetail.command(c.topic, c.detail), recovered } });
  }
  const byId = (a: LostEntry, b: LostEntry) => (a.proposalId! < b.proposalId! ? -1 : a.proposalId! > b.proposalId! ? 1 : 0);
  return [...withdrawn.sort(byId), ...proposed.sort((a, b) => a.at - b.at).map((p) => p.e), ...decided, ...commands];
}
