// Rebuilding decision_log entries lost in a crash between the inbox's two commits.
//
// Every inbox operation commits approval_inbox first, then decision_log (two tables, two atomic
// commits; Paimon has no commit across tables). A process killed between the two leaves the
// operation's rows in approval_inbox — the proposal, who decided, the command's progress — and its
// log entries nowhere. So each approval_inbox commit records, in its snapshot properties, the log's
// next entry id once the operation's entries are appended (`LOG_NEXT_PROPERTY`). At open, an
// approval_inbox snapshot that claims more than the log's committed next id names a commit whose
// entries were lost; its delta (the rows that commit wrote, core/lsm incremental.ts) holds one row
// per proposal it touched, with only the groups it wrote, and each written group is an entry:
//   agent group, open         → `proposed`  (at created_at_ms, by agent-<run_id>)
//   agent group, withdrawn    → `withdrawn` (at agent_updated_at_ms; the withdrawing run is not stored: by `agent`),
//                               after a `proposed` when its log_first_entry is one the log never got
//   decision group            → the decision (at decided_at_ms, by decided_by)
//   command group             → `command_<state>` (at command_updated_at_ms; the ack's module is not stored: by `write-back`),
//                               except `pending`: the approval writes it and logs no entry for it;
//                               after a `command_sent` (at command_sent_at_ms) when it was pending
//                               before the commit and is past `sent` now
// A commit may hold several operations, also on one proposal: an inbox commit that failed (a full
// disk) leaves its rows in the writer, and the next commit carries them with its own. So each
// proposal's entries go in the order of its life (proposed, decided, withdrawn after a deferral,
// command progress), the proposals' entries merged by time, and at one time in the order one
// operation appends them: withdrawals, proposals (by log_first_entry), decisions, commands. A
// `proposed` entry gets the id its row's log_first_entry names (a proposal's trail is read from
// there); the others the ids between. Every rebuilt entry says so in `detail.recovered`.
//
// The delta holds the commit's merged row: of a group written twice in the commit, the second
// write only (a deferral and then an approval, the approval; a command acknowledged and then
// applied, the effect). So the inbox records in the commit's properties the entries of decision
// and command writes a later write of the same group replaced (`SUPERSEDED_PROPERTY`, written
// only by such a commit), and they are rebuilt from there, whole (actor included), before the
// row's own. A commit from before the record gives back of those only `command_sent` (its time is
// in the row). The agent group needs no record: it is written twice only as proposed and then
// withdrawn, and the row names both. `refused` entries are written without an inbox commit (the
// log commits them alone), so none is lost this way. An id that cannot be rebuilt stays unused.
//
// Cost: the rows of the lost commits read once, a point read per row of the snapshot before, and
// the entries merged with a heap of the proposals' chains (n log n).

import type { Table } from '../lsm/index.ts';
import { entryDetail, type DecisionLog, type DecisionLogEntry } from './decision-log.ts';
import { commandOfRow, decisionOfRow, logFirstEntryOf, proposalFromRow, rowRecord, type InboxRow } from './inbox-tables.ts';
import { compareProposalIds } from './proposal.ts';

/** approval_inbox snapshot property: the decision_log's next entry id once this commit's entries are appended. */
export const LOG_NEXT_PROPERTY = 'tilstand.approval_inbox.log_next_id';

/**
 * approval_inbox snapshot property: the log entries (JSON, without ids, in the order appended) of
 * the decision and command group writes a later write of the same group replaced within this
 * commit — what its rows cannot give back. '' or absent: none.
 */
export const SUPERSEDED_PROPERTY = 'tilstand.approval_inbox.superseded_entries';

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
  const lost: { id: number; claim: number; superseded: LostEntry[] }[] = [];
  let cutShort = false;
  for (let id = latest.id; id >= 1; id--) {
    const s = inbox.snapshots.tryGet(id);
    if (!s) {
      warn(`decision_log: approval_inbox snapshot ${id} has expired; entries of commits before snapshot ${id + 1} that the log lacks cannot be rebuilt`);
      cutShort = true;
      break;
    }
    const c = claimOf(s.properties);
    if (c === undefined || c <= log.nextEntryId) break;
    if (s.commitKind === 'APPEND') lost.push({ id: s.id, claim: c, superseded: supersededOf(s.id, s.properties, warn) });
  }
  lost.reverse();
  let entries = 0;
  for (const [k, { id, claim, superseded }] of lost.entries()) {
    const rows: InboxRow[] = [];
    for (const ch of inbox.changes({ from: id - 1, to: id, mode: 'delta' })) {
      if (ch.kind === '+I' || ch.kind === '+U') rows.push(rowRecord(inbox.schema.fields, ch.row));
    }
    const before = rowsBefore(inbox, id, rows);
    const rebuilt = entriesOf(rows, before, log.nextEntryId, superseded);
    // The oldest of them, when the walk stopped at an expired snapshot: where its entries began is
    // not known — the log may lack commits before it too (a site restored from an HQ whose
    // decision_log lagged its approval_inbox, holding only the latest snapshot). Numbered from the
    // log's next id, they took ids those lost commits had used (a proposal's trail, read from its
    // log_first_entry, began with another's decision); numbered to end where its claim does, they
    // keep their own (log-recovery-expired.test.ts).
    if (k === 0 && cutShort) log.reserveThrough(claim - rebuilt.length);
    for (const { first, e } of rebuilt) {
      // A `proposed` entry takes the id its row names (log_first_entry): a proposal's trail is
      // read from there. Ids skipped on the way are entries that cannot be rebuilt.
      if (first !== undefined) log.reserveThrough(first);
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

/** A lost commit's SUPERSEDED_PROPERTY; one that does not read as a list of entries is told and left out. */
function supersededOf(id: number, props: Record<string, string> | null | undefined, warn: (m: string) => void): LostEntry[] {
  const v = props?.[SUPERSEDED_PROPERTY];
  if (v === undefined || v === '') return [];
  try {
    const list: unknown = JSON.parse(v);
    const isEntry = (e: unknown): e is LostEntry => {
      const x = e as Partial<LostEntry> | null;
      return typeof x === 'object' && x !== null && typeof x.atMs === 'number' && typeof x.proposalId === 'string' && typeof x.event === 'string' && typeof x.actor === 'string';
    };
    if (Array.isArray(list) && list.every(isEntry)) return list;
  } catch {
    // told below
  }
  warn(`decision_log: approval_inbox snapshot ${id} names replaced entries (${SUPERSEDED_PROPERTY}) that are not a list of entries; they are not rebuilt`);
  return [];
}

/**
 * The command state of each proposal the commit wrote, as the snapshot before it had it (null: no
 * command); undefined when that snapshot can no longer be read.
 */
function rowsBefore(inbox: Table, id: number, rows: readonly InboxRow[]): Map<string, string | null> | undefined {
  const out = new Map<string, string | null>();
  if (id === 1) {
    for (const r of rows) out.set(String(r.proposal_id), null);
    return out;
  }
  if (!inbox.snapshots.tryGet(id - 1)) return undefined;
  const reader = inbox.reader({ snapshotId: id - 1, schemaId: inbox.schema.id });
  try {
    for (const r of rows) {
      const was = reader.get({ proposal_id: r.proposal_id });
      out.set(String(r.proposal_id), was === undefined ? null : (commandOfRow(rowRecord(inbox.schema.fields, was))?.state ?? null));
    }
  } finally {
    reader.close();
  }
  return out;
}

/**
 * A rebuilt entry; its place among one operation's entries (`RANK`); for a `proposed` one the id
 * its row names (log_first_entry).
 */
interface Rebuilt {
  rank: number;
  first?: number;
  e: LostEntry;
}

/**
 * The log entries one lost commit's rows stand for, in the order the inbox appended them. A commit
 * may hold several operations (the rows of a commit that failed ride on the next one), also on one
 * proposal, so each proposal's entries are put in the order of its life — proposed, decided,
 * withdrawn (after a deferral), its command's progress — and the proposals' chains merged by time;
 * at one time (one operation) in the order one operation appends them: withdrawals, proposals (by
 * log_first_entry), decisions, commands. `lostFrom`: the log's committed next id (a `proposed`
 * entry named at or after it was lost). `before`: each proposal's command state before the commit.
 */
function entriesOf(rows: readonly InboxRow[], before: Map<string, string | null> | undefined, lostFrom: number, superseded: readonly LostEntry[] = []): Rebuilt[] {
  const recovered = RECOVERED_NOTE;
  // Per proposal, its replaced decision and command entries, in the order they were appended.
  const replaced = new Map<string, { decided: Rebuilt[]; command: Rebuilt[] }>();
  for (const e of superseded) {
    let r = replaced.get(e.proposalId!);
    if (!r) replaced.set(e.proposalId!, (r = { decided: [], command: [] }));
    const isCommand = e.event.startsWith('command_');
    (isCommand ? r.command : r.decided).push({ rank: isCommand ? RANK.command : RANK.decided, e: { ...e, detail: { ...(e.detail as object), recovered } } });
  }
  const chains: Rebuilt[][] = [];
  for (const r of rows) {
    const id = String(r.proposal_id);
    const earlier = replaced.get(id);
    const chain: Rebuilt[] = [];
    const withdrawal: Rebuilt[] = [];
    if (r.agent_seq !== null && r.agent_seq !== undefined) {
      // The agent group is written whole, so the row reads as the proposal it wrote last.
      const p = proposalFromRow(r);
      const first = logFirstEntryOf(r);
      // Proposed in this commit: its row is open, or withdrawn since (by a later operation of the
      // same commit) and names a first entry the log never got.
      if (p.agentStatus !== 'withdrawn' || (first !== undefined && first >= lostFrom)) {
        chain.push({ rank: RANK.proposed, first, e: { atMs: p.createdAtMs, proposalId: id, event: 'proposed', actor: `agent-${p.runId}`, detail: { ...entryDetail.proposed(p), recovered } } });
      }
      if (p.agentStatus === 'withdrawn') withdrawal.push({ rank: RANK.withdrawn, e: { atMs: p.agentUpdatedAtMs, proposalId: id, event: 'withdrawn', actor: 'agent', detail: { ...entryDetail.withdrawn(p.withdrawnReason), recovered } } });
    }
    const d = r.decision_seq !== null && r.decision_seq !== undefined ? decisionOfRow(r) : null;
    if (d && earlier) chain.push(...earlier.decided);
    if (d) chain.push({ rank: RANK.decided, e: { atMs: d.atMs, proposalId: id, event: d.kind, actor: d.by, detail: { ...entryDetail.decided(d), recovered } } });
    chain.push(...withdrawal);
    const c = r.command_seq !== null && r.command_seq !== undefined ? commandOfRow(r) : null;
    // `pending` is written only by the approval itself, which logs no entry of its own for it.
    if (c && c.state !== 'pending') {
      // The states it passed through in this commit, as recorded; else (a commit from before the
      // record) the one that can be told: sent within this commit and moved on in it too (its
      // sending time is kept), when it was pending before, or not yet approved (there is no
      // pending → acknowledged).
      const was = before?.get(id);
      if (earlier && earlier.command.length > 0) chain.push(...earlier.command);
      else if (c.state !== 'sent' && c.sentAtMs !== null && (was === null || was === 'pending')) {
        chain.push({ rank: RANK.command, e: { atMs: c.sentAtMs, proposalId: id, event: 'command_sent', actor: 'write-back', detail: { ...entryDetail.command(c.topic, null), recovered } } });
      }
      chain.push({ rank: RANK.command, e: { atMs: c.updatedAtMs, proposalId: id, event: `command_${c.state}`, actor: 'write-back', detail: { ...entryDetail.command(c.topic, c.detail), recovered } } });
    }
    if (chain.length > 0) chains.push(chain);
  }
  return mergeByHead(chains, rebuiltOrder);
}

/**
 * The earliest first; at one time by rank, proposals by their named id, then by proposal id in the
 * order the proposals were made (`compareProposalIds`; the order the inbox lists them in, so one
 * operation's withdrawals go back in the order the agent made them, not `…-10` before `…-2`).
 */
const rebuiltOrder = (a: Rebuilt, b: Rebuilt): number =>
  a.e.atMs - b.e.atMs || a.rank - b.rank || (a.first ?? Number.MAX_SAFE_INTEGER) - (b.first ?? Number.MAX_SAFE_INTEGER) || compareProposalIds(a.e.proposalId!, b.e.proposalId!);

/**
 * The chains merged, each kept in its own order: repeatedly the chain whose next item comes first
 * by `order` gives it (ties: the chain listed first). A binary heap of the chains by their next
 * item: O(n log k) comparisons for n items in k chains (a scan of every chain per item was n·k:
 * about a million for a lost commit of 1,000 proposals).
 */
export function mergeByHead<T>(chains: readonly (readonly T[])[], order: (a: T, b: T) => number): T[] {
  const out: T[] = [];
  const at = chains.map(() => 0);
  const head = (c: number) => chains[c]![at[c]!]!;
  const before = (a: number, b: number) => {
    const o = order(head(a), head(b));
    return o < 0 || (o === 0 && a < b);
  };
  const heap = chains.flatMap((c, i) => (c.length > 0 ? [i] : []));
  const down = (from: number) => {
    for (let i = from; ; ) {
      const l = 2 * i + 1;
      if (l >= heap.length) return;
      const m = l + 1 < heap.length && before(heap[l + 1]!, heap[l]!) ? l + 1 : l;
      if (!before(heap[m]!, heap[i]!)) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
  while (heap.length > 0) {
    const c = heap[0]!;
    out.push(head(c));
    if (++at[c]! === chains[c]!.length) {
      // This chain is done: the heap's last takes its place.
      heap[0] = heap[heap.length - 1]!;
      heap.pop();
    }
    down(0);
  }
  return out;
}

/** The order of one operation's entries at one time (the inbox appends withdrawals first, then proposals, decisions, commands). */
const RANK = { withdrawn: 0, proposed: 1, decided: 2, command: 3 } as const;
