// The approval inbox: where proposals wait for a named person, and the record of what they chose.
//
// Three sides write `approval_inbox`, each its own sequence group (inbox-tables.ts):
//   agent     `submit` — new proposals (deduplicated by situation key) and withdrawals;
//   decision  `decide` — approve / reject / defer by a shift lead or an admin, PIN-verified;
//   command   `markCommand` — the write-back's progress (write-back.ts).
// Every change is also a `decision_log` entry. Each operation commits both tables before it
// returns (inbox first, then the log), so a reader in another process sees it at once — except
// with `deferCommits` (a replay's scratch warehouse, which no other process reads): then writes
// wait for `commit()`. The inbox's commit names the log's next entry id, so an open after a crash
// between the two rebuilds the lost entries from the inbox's rows (log-recovery.ts).
//
// Approval is a compare-and-set:
//   1. the user is verified (UserStore: unknown, disabled, locked, wrong PIN → refused; a role
//      other than shift_lead/admin → refused); refusals are logged, nothing else changes;
//   2. `freshen()` brings the state tables up to date (the site: `ingestor.commitAll()`);
//   3. `recheck(proposal)` re-checks the rule's preconditions against the latest snapshots;
//   4. the proposal must still be open or deferred (the agent may have withdrawn it meanwhile);
//   5. if the world moved, the decision is `stale`, nothing is sent, and `reevaluate` runs;
//      otherwise the decision is `approved` and the approval listeners (the write-back) run.
//      Either way the snapshots step 3 read are tagged `checked-<proposal id>` (`keepChecked`).
// Steps 4–5 run without an await in between, so nothing interleaves with the write.
//
// Concurrency: single-threaded; one Inbox per data directory (it holds both tables' writer
// locks). Invariants: at most one open-or-deferred proposal per situation key; a final decision
// (approved, rejected, stale) is never overwritten; no command is sent for a proposal that is not
// approved.

import { CompactionSlicer, isWellFormedString, KeptTables, LsmError, RENEW_MARGIN_MS, rowHeld, tagTimeLeftMs, type Catalog, type ReadPoint, type SchemaChange, type Table, type TableWriter } from '../lsm/index.ts';
import { CONFIG_CHANGED_EVENT, DecisionLog, entryDetail, type ConfigChange, type DecisionLogEntry } from './decision-log.ts';
import { LOG_NEXT_PROPERTY, recoverLostLogEntries, SUPERSEDED_PROPERTY } from './log-recovery.ts';
import { InboxError, type RefusalReason } from './errors.ts';
import {
  agentColumns,
  AGENT_MESSAGES,
  APPROVAL_INBOX_SPEC,
  APPROVAL_INBOX_TABLE,
  commandColumns,
  decisionColumns,
  DECISION_LOG_SPEC,
  DECISION_LOG_TABLE,
  GROUP_SEQ,
  INBOX_TARGET_FILE_SIZE,
  LOG_FIRST_ENTRY,
  logFirstEntryOf,
  messagesColumn,
  proposalFromRow,
  rowRecord,
  type InboxGroup,
  type InboxRow,
} from './inbox-tables.ts';
import {
  canonicalJson,
  commandInFlight,
  DECISIONS,
  isActive,
  compareProposalIds,
  inCreationOrder,
  PROPOSAL_STATUSES,
  statusOf,
  timedOutAcknowledged,
  timedOutDetail,
  writeBackWords,
  type CommandProgress,
  type CommandState,
  type Decision,
  type DecisionVerb,
  type Json,
  type Message,
  type Proposal,
  type ProposalInput,
  type ProposalStatus,
  wellFormedPrefix,
} from './proposal.ts';
import type { Role, SignInResult } from './users.ts';

/** Roles that may decide proposals. */
export const DECIDER_ROLES: readonly Role[] = ['shift_lead', 'admin'];

/** The longest turn of the event loop the tables' deferred compaction takes (InboxOptions.compaction), give or take a file's decode or write. */
export const INBOX_COMPACTION_SLICE_MS = 8;

export type Snapshots = Record<string, number | null>;
/** A re-check at approval. When it fails: why, as text (the record) and as a message (for the UI's languages; absent when the checker has none). */
export type RecheckOutcome =
  | { readonly holds: true; readonly snapshots: Snapshots }
  | { readonly holds: false; readonly reason: string; readonly message?: Message; readonly snapshots: Snapshots };

export interface InboxOptions {
  catalog: Catalog;
  /** `site_<id>`; created when missing. */
  database: string;
  /** The site's UserStore (only `verifyPin` is used). */
  users: { verifyPin(name: string, pin: string): Promise<SignInResult> };
  /** Re-checks a proposal's preconditions against the latest state (the agent's `recheck`). */
  recheck: (p: Proposal) => RecheckOutcome | Promise<RecheckOutcome>;
  /** Brings the state tables up to date before a re-check (the site: `ingestor.commitAll()`). */
  freshen?: () => void | Promise<void>;
  /** After a stale approval: evaluate the situation again (the site: one agent run). */
  reevaluate?: (p: Proposal) => void | Promise<void>;
  clock?: () => number;
  /**
   * A situation approved or rejected this recently is not proposed again — unless the approved
   * command failed (the module refused it, or it expired), and not `FAILURES_TO_QUIET` times
   * within it. Default 8 h (a shift).
   */
  resuggestAfterDecisionMs?: number;
  /** Longest decision comment. Default 1000. */
  commentCharsMax?: number;
  /**
   * How long the evidence of a decided proposal is kept: tag `decision-<proposal id>` on each
   * table it read, at the snapshot it read; and, for an approved or stale one, tag
   * `checked-<proposal id>` at each snapshot its approval was re-checked against. The agent keeps
   * its own run tags for days only. Default 365 days.
   */
  decisionEvidenceRetentionMs?: number;
  /**
   * Leave each operation's writes uncommitted until `commit()` (or `list`, `history`, `close`).
   * Only for a warehouse no other process reads — a replay's scratch warehouse (core/replay),
   * where two table commits per agent run were the largest cost of the inbox. This inbox's own
   * reads (`get`, `openProposals`, `submit`'s deduplication) see every operation either way.
   * Default false: each operation commits both tables before it returns.
   */
  deferCommits?: boolean;
  /**
   * When the tables' compactions run (core/lsm WriterOptions.compaction): 'inline' (default)
   * inside the commit, so inside the decision that made it; 'deferred' in slices of
   * INBOX_COMPACTION_SLICE_MS on the event loop after it (the site's floor: a decision returns
   * without waiting for a compaction). A replay keeps 'inline': its snapshots follow its events
   * and nothing else.
   */
  compaction?: 'inline' | 'deferred';
  /**
   * `expireIdle` expires (snapshots and tags, core/lsm) a table of this inbox that has not
   * committed for this long. Expiration otherwise runs only after a commit, and a quiet inbox (no
   * proposal, decision or command for a night or a weekend) keeps every tag meanwhile: sync tags
   * each table hourly. Default 10 min.
   */
  idleExpireMs?: number;
  /**
   * `endedCommands` lists a command that failed or timed out for this long after (the site's
   * `command_failed` alarm). Default 8 h.
   */
  endedCommandsKeptMs?: number;
  onWarning?: (message: string) => void;
}

export interface DecideOptions {
  user: string;
  pin: string;
  comment?: string;
  /** Snapshot ids the person was shown; default the proposal's evidence snapshots. */
  seen?: Snapshots;
}

export type DecideResult =
  | { readonly outcome: 'approved' | 'rejected' | 'deferred'; readonly proposal: Proposal }
  | { readonly outcome: 'stale'; readonly reason: string; readonly proposal: Proposal };

/**
 * Per rule, the baseline an agent holds it on (core/agents `failedBaselines`): its table → run tag,
 * or null (every row). The inbox keeps it for the agent across a restart and does not read it.
 */
export type HeldBaselines = Readonly<Record<string, Readonly<Partial<Record<string, string>>> | null>>;

/** The approval_inbox snapshot property that keeps the agent's `HeldBaselines` (JSON). */
export const HELD_BASELINES_PROPERTY = 'tilstand.agent.held_baselines';

export interface SubmitBatch {
  runId: string;
  proposals: readonly ProposalInput[];
  /** Why each is withdrawn: the text (the record) and, where the rule gave one, the message. */
  withdrawals: readonly { id: string; reason: string; message?: Message }[];
  /**
   * Situations that began anew after an approval whose command was applied (`after`: that
   * proposal's id, `appliedQuiet`): the agent's rule saw the situation end and come back (core/agents
   * `Rule.newOccurrence`). That approval's quiet does not suppress their proposals; another
   * decision's, or failures', still does. Default none.
   */
  newOccurrences?: readonly { situationKey: string; after: string }[];
}

export interface SubmitResult {
  created: Proposal[];
  /** Situation keys that already have an open or deferred proposal. */
  duplicates: string[];
  /**
   * Situation keys decided (approved/rejected) within resuggestAfterDecisionMs, or whose commands
   * failed `FAILURES_TO_QUIET` times within it.
   */
  suppressed: string[];
  withdrawn: Proposal[];
}

/** An approved proposal whose command failed: the module refused it, or it expired. */
export interface CommandFailure {
  id: string;
  /** When the command failed (the inbox's clock). */
  atMs: number;
  /** The module's reason, or the expiry's, as the write-back recorded it. */
  detail: string | null;
  /**
   * Whether the command reached the broker. One never sent (the write-back gave it up, core/inbox
   * write-back.ts) says nothing of the module and does not count toward FAILURES_TO_QUIET.
   */
  sent: boolean;
}

/** A situation's latest approval or rejection and when its quiet ends (`Inbox.quietEndedSince`); the proposal once read. */
interface QuietEnd {
  id: string;
  decidedAtMs: number;
  endMs: number;
  proposal?: Proposal;
}

/** An approved proposal's command that failed or timed out and has not moved on since (`Inbox.endedCommands`). */
export interface EndedCommand {
  id: string;
  action: string;
  state: 'failed' | 'timed_out';
  /** When it failed or timed out (the inbox's clock). */
  atMs: number;
  /** The module's reason, or the timeout's, as the write-back recorded it. */
  detail: string | null;
}

/**
 * A situation whose approved commands failed this many times within the last
 * resuggestAfterDecisionMs, each after it was sent (one the write-back never sent says nothing of
 * the module), is not proposed while that holds (until the older failure is that old).
 * One failure may be passing (the state moved on, the command came late), so the situation comes
 * back at once if it still holds; a module that refuses it again means it, and is not asked every
 * minute.
 */
export const FAILURES_TO_QUIET = 2;

export interface ProposalFilter {
  status?: ProposalStatus | readonly ProposalStatus[];
  ruleId?: string;
  /** Most proposals returned, newest first. Default 1000. */
  limit?: number;
  /**
   * `urgency`: most urgent first (`mostUrgentFirst`), before the cut at `limit` — the inbox's own
   * order, so a long inbox's cut keeps what the floor must see. Only for open and deferred
   * proposals (the inbox's memory); the others come newest first. `decided`: the newest decision
   * first (`newestDecisionFirst`; a withdrawn proposal by when the agent withdrew it, one without
   * a decision by when it was made), before the cut — a list of what left the inbox lately, where a
   * proposal that waited long and was decided or withdrawn now would fall below the cut by its
   * creation time.
   */
  order?: 'newest' | 'urgency' | 'decided';
}

const DEFAULT_RESUGGEST_MS = 8 * 3600_000;
const DEFAULT_IDLE_EXPIRE_MS = 10 * 60_000;
const DEFAULT_ENDED_COMMANDS_KEPT_MS = 8 * 3600_000;
const DEFAULT_COMMENT_CHARS_MAX = 1000;
const DEFAULT_DECISION_EVIDENCE_MS = 365 * 24 * 3600_000;
function checkedDecisionEvidenceMs(ms: number): number {
  if (!Number.isSafeInteger(ms) || ms < 1) throw new InboxError('InvalidArgument', `decisionEvidenceRetentionMs: expected an integer ≥ 1, got ${ms}`);
  return ms;
}
const DEFAULT_LIST_LIMIT = 1000;

/** The tag that keeps a decided proposal's evidence (on each table it read). */
export const DECISION_TAG_PREFIX = 'decision-';
export const decisionTagName = (proposalId: string): string => `${DECISION_TAG_PREFIX}${proposalId}`;
/**
 * The tag that keeps the state an approval was checked against (`snapshots.checked`: each table's
 * latest snapshot at the compare-and-set), on an approved or stale proposal.
 */
export const CHECKED_TAG_PREFIX = 'checked-';
export const checkedTagName = (proposalId: string): string => `${CHECKED_TAG_PREFIX}${proposalId}`;

/**
 * Command transitions; a late refusal or effect after timed_out still moves the command on. A late
 * first ok ack is not a move to `acknowledged` (markCommand: it stays timed out, as acknowledged).
 */
const NEXT: Record<CommandState, readonly CommandState[]> = {
  pending: ['sent', 'failed'],
  sent: ['acknowledged', 'applied', 'failed', 'timed_out'],
  acknowledged: ['applied', 'failed', 'timed_out'],
  timed_out: ['acknowledged', 'applied', 'failed'],
  applied: [],
  failed: [],
};

/**
 * The decider of an approval the inbox learnt of from the module's ack alone (`approvalNotOnRecord`):
 * "?" needs no translation on the floor UI. Its role is empty, which no user's is, and its reason
 * says what happened.
 */
export const APPROVER_NOT_ON_RECORD = '?';

const REFUSAL: Record<string, RefusalReason> = { unknown: 'unknown_user', disabled: 'disabled', locked: 'locked', wrong: 'wrong_pin', no_secret: 'no_pin' };

export class Inbox {
  readonly site: string;
  readonly table: Table;
  readonly logTable: Table;
  private readonly writer: TableWriter;
  private readonly log: DecisionLog;
  private readonly o: InboxOptions;
  private readonly clock: () => number;
  private readonly resuggestMs: number;
  private readonly commentMax: number;
  private decisionEvidence: number;
  private readonly warn: (m: string) => void;
  /** Open or deferred proposals, and approved ones whose command is in flight. */
  private readonly active = new Map<string, Proposal>();
  /** Situation key → id of its open or deferred proposal. */
  private readonly bySituation = new Map<string, string>();
  /** Situation key → when it was last approved or rejected. */
  private readonly decidedAt = new Map<string, number>();
  /**
   * Situation key → the proposal of that decision (`decidedAt`): its id, and the proposal once
   * `appliedQuiet` read it (read again after its command moves, `markCommand`).
   */
  private readonly decidedBy = new Map<string, { id: string; proposal?: Proposal | null }>();
  /** Situation key → its commands that failed within resuggestAfterDecisionMs, oldest first. */
  private readonly failures = new Map<string, CommandFailure[]>();
  /**
   * Proposal id → its command, where it failed or timed out within endedCommandsKeptMs and has
   * not moved on since. This inbox writes every command state (`markCommand`), so memory holds
   * them all; the table is read for them only at open.
   */
  private readonly ended = new Map<string, EndedCommand>();
  private readonly endedKeptMs: number;
  /**
   * Situation key → its latest approval or rejection and when the quiet it makes ends
   * (`quietEndedSince`): every one that ends after `quietEndsFromMs`. Empty, and that time
   * +Infinity, until the first `quietEndedSince` reads the table (once); kept by the decisions
   * after it, and let go once their end is behind the time asked.
   */
  private readonly quietEnds = new Map<string, QuietEnd>();
  private quietEndsFromMs = Infinity;
  /**
   * The ids this inbox gave in the run it last submitted. Ids are `P-<run id>-<n>` and the agent
   * never repeats a run id, so a new id can only meet one of the same run: of the last run (this
   * set), or — a run id used before, by this process or an earlier one — a stored row (looked up
   * once per run, then per id only for such a run). Not every id ever made: the table keeps
   * every proposal, thousands a day.
   */
  private lastRun: { runId: string; ids: Set<string>; usedBefore: boolean } | undefined;
  /** The agent's held baselines as JSON (`holdBaselines`): written with every commit once set, read back at open. */
  private heldJson: string | undefined;
  /**
   * The stored row (all groups, as the table merges them) of each proposal in `active`, kept as
   * this inbox writes it: the next group write of an active proposal takes its sequence from here
   * instead of opening a table reader (an agent run withdraws dozens per minute). Filled on the
   * first write after open; dropped when the proposal leaves `active` (only active proposals are
   * written again). Same single-writer argument as `ids`.
   */
  private readonly rows = new Map<string, InboxRow>();
  private readonly approvedListeners: ((p: Proposal) => void | Promise<void>)[] = [];
  /** Per table (inbox, log): when this inbox last committed it, or expired it idle (`expireIdle`); the open time before that. */
  private readonly maintainedAtMs: { inbox: number; log: number };
  private closed = false;
  /** The tables' deferred compactions (InboxOptions.compaction), in slices after their commits. */
  private readonly slicer = new CompactionSlicer(INBOX_COMPACTION_SLICE_MS);
  /** The tables decisions tag (`evidenceTable`), opened once per inbox. */
  private readonly evidenceTables: KeptTables;

  static open(o: InboxOptions): Inbox {
    return new Inbox(o);
  }

  /** When the tables compact (InboxOptions.compaction). */
  get compaction(): 'inline' | 'deferred' {
    return this.o.compaction ?? 'inline';
  }

  /** `decisionEvidenceRetentionMs` in force. */
  get decisionEvidenceMs(): number {
    return this.decisionEvidence;
  }

  /**
   * A new `decisionEvidenceRetentionMs` for the decisions made from now on (a site's config
   * reload); the tags of earlier decisions keep the retention they were made with, except a
   * deferral's `decision-` tag, which the proposal's later decision renews (or makes anew) at the
   * retention then in force (`renewEvidence`).
   */
  setDecisionEvidenceRetention(ms: number): void {
    this.decisionEvidence = checkedDecisionEvidenceMs(ms);
  }

  private constructor(o: InboxOptions) {
    this.o = o;
    this.evidenceTables = new KeptTables(o.catalog, o.database);
    this.site = siteOfDatabase(o.database);
    this.clock = o.clock ?? Date.now;
    this.maintainedAtMs = { inbox: this.clock(), log: this.clock() };
    this.resuggestMs = o.resuggestAfterDecisionMs ?? DEFAULT_RESUGGEST_MS;
    this.commentMax = o.commentCharsMax ?? DEFAULT_COMMENT_CHARS_MAX;
    this.endedKeptMs = o.endedCommandsKeptMs ?? DEFAULT_ENDED_COMMANDS_KEPT_MS;
    this.decisionEvidence = checkedDecisionEvidenceMs(o.decisionEvidenceRetentionMs ?? DEFAULT_DECISION_EVIDENCE_MS);
    if (!Number.isSafeInteger(this.resuggestMs) || this.resuggestMs < 0) throw new InboxError('InvalidArgument', `resuggestAfterDecisionMs: expected an integer ≥ 0, got ${this.resuggestMs}`);
    if (o.idleExpireMs !== undefined && (!Number.isSafeInteger(o.idleExpireMs) || o.idleExpireMs < 1)) throw new InboxError('InvalidArgument', `idleExpireMs: expected an integer ≥ 1, got ${o.idleExpireMs}`);
    if (!Number.isSafeInteger(this.endedKeptMs) || this.endedKeptMs < 1) throw new InboxError('InvalidArgument', `endedCommandsKeptMs: expected an integer ≥ 1, got ${this.endedKeptMs}`);
    if (!Number.isSafeInteger(this.commentMax) || this.commentMax < 0) throw new InboxError('InvalidArgument', `commentCharsMax: expected an integer ≥ 0, got ${this.commentMax}`);
    this.warn = o.onWarning ?? ((m) => console.warn(`inbox: ${m}`));
    const { inbox, log } = openInboxTables(o.catalog, o.database);
    upgradeInboxTable(inbox, true);
    upgradeInboxTable(log, false);
    this.table = inbox;
    this.logTable = log;
    const compaction = this.compaction;
    // A commit's failed maintenance (a full disk during a compaction, core/lsm
    // `CommitResult.maintenanceError`) is told, not thrown: to the inbox's warnings (the site's
    // log), not as a process warning nobody on a site reads.
    const onWarning = (m: string) => this.warn(m);
    this.writer = inbox.newWriter({ commitUser: 'tilstand-inbox', compaction, onWarning });
    try {
      this.log = new DecisionLog(log, { compaction, onWarning, afterCommit: (w) => this.compactLater(w, log.name) });
    } catch (e) {
      this.writer.close();
      throw e;
    }
    try {
      recoverLostLogEntries(inbox, this.log, this.warn);
    } catch (e) {
      this.writer.close();
      this.log.close();
      throw e;
    }
    // What this inbox needs of the past: the active proposals whole, and the recent decisions'
    // situations. The rest of the table (every proposal ever made) is read in a few columns only
    // (the table store decodes only those: core/lsm/DESIGN.md, "Memory of a site process"), row
    // by row, and once: the decoded files are not kept in the run cache (`fillCache`), which stays
    // with the tables read again and again. The read still grows with the table.
    const now = this.clock();
    const snapshot = inbox.latestSnapshot();
    this.heldJson = snapshot?.properties?.[HELD_BASELINES_PROPERTY];
    this.supersededInLatest = (snapshot?.properties?.[SUPERSEDED_PROPERTY] ?? '') !== '';
    const wanted: string[] = [];
    const columns = ['proposal_id', 'situation_key', 'agent_status', 'decision', 'decided_at_ms', 'command_state', 'command_updated_at_ms', 'command_detail', 'action', 'command_sent_at_ms'];
    const reader = snapshot ? inbox.reader(latestAt(inbox, snapshot.id)) : undefined;
    try {
      for (const [id, key, agentStatus, decision, decidedAt, command, commandAt, commandDetail, action, sentAt] of reader ? reader.scan({ projection: columns, fillCache: false }) : []) {
        const detail = commandDetail === null || commandDetail === undefined ? null : String(commandDetail);
        if (command === 'failed' && now - Number(commandAt) < this.resuggestMs) this.failedAgain(String(key), { id: String(id), atMs: Number(commandAt), detail, sent: sentAt !== null && sentAt !== undefined });
        if ((command === 'failed' || command === 'timed_out') && now - Number(commandAt) < this.endedKeptMs) {
          this.ended.set(String(id), { id: String(id), action: String(action), state: command, atMs: Number(commandAt), detail });
        }
        const status = lightStatus(agentStatus, decision);
        const commandState = command === null || command === undefined ? null : ({ state: command, detail: commandDetail ?? null } as CommandProgress);
        const awaited = timedOutAcknowledged(commandState) && now - Number(commandAt) < this.resuggestMs;
        if (status === 'open' || status === 'deferred' || (status === 'approved' && (commandInFlight(commandState) || awaited))) wanted.push(String(id));
        if ((decision === 'approved' || decision === 'rejected') && now - Number(decidedAt) < this.resuggestMs && command !== 'failed') {
          if (Number(decidedAt) >= (this.decidedAt.get(String(key)) ?? 0)) {
            this.decidedAt.set(String(key), Number(decidedAt));
            this.decidedBy.set(String(key), { id: String(id) });
          }
        }
      }
    } finally {
      reader?.close();
    }
    if (snapshot) for (const p of wholeProposals(inbox, snapshot.id, wanted)) this.index(p);
  }

  // ------------------------------------------------------------------------------------------
  // Reading.

  get(id: string): Proposal | undefined {
    const active = this.active.get(id);
    if (active) return active;
    const written = this.pending.get(id);
    return written ? proposalFromRow(written) : readProposal(this.table, id);
  }

  /**
   * Proposals, newest first. Open and deferred ones (the inbox screen's list, asked at every
   * change) come from memory: this inbox is their only writer and keeps every active proposal.
   * Other statuses are read from the table.
   */
  list(filter: ProposalFilter = {}): Proposal[] {
    const statuses: readonly ProposalStatus[] = filter.status === undefined ? [] : typeof filter.status === 'string' ? [filter.status] : filter.status;
    if (statuses.length > 0 && statuses.every((st) => st === 'open' || st === 'deferred')) {
      return [...this.active.values()]
        .filter((p) => (statuses as readonly string[]).includes(p.status) && (filter.ruleId === undefined || p.ruleId === filter.ruleId))
        .sort(filter.order === 'urgency' ? mostUrgentFirst : filter.order === 'decided' ? (a, b) => newestDecisionFirst(decidedAt(a), decidedAt(b)) : newestFirst)
        .slice(0, filter.limit ?? DEFAULT_LIST_LIMIT);
    }
    if (filter.order === 'urgency') throw new Error(`proposals in order of urgency are only the open and deferred ones, not ${statuses.length > 0 ? statuses.join(', ') : 'every status'}`);
    this.commit();
    return readProposals(this.table, filter);
  }

  /** How many proposals are open and how many deferred, and when the oldest open one was made (the inbox's memory: no read). */
  activeCounts(): ActiveCounts {
    const c = countActive();
    for (const p of this.active.values()) c.add(p.status, p.createdAtMs);
    return c.counts();
  }

  /**
   * Open and deferred proposals (what the agent may withdraw), the oldest first (`inCreationOrder`).
   * This and the lists below are sorted: the memory they come from is filled at open in the
   * table's key order, proposal ids as strings (`…-10` before `…-2`), and live in the order of the
   * writes. The agent walks this list (withdrawals, claims), so a run after a restart, or a
   * replay of a fixture's inbox, acts as the live one did.
   */
  openProposals(): Proposal[] {
    return inCreationOrder([...this.active.values()].filter(isActive));
  }

  /** Approved proposals whose command has not reached a final state, the oldest first (the write-back sends and resends in this order). */
  commandsInFlight(): Proposal[] {
    return inCreationOrder([...this.active.values()].filter((p) => p.status === 'approved' && commandInFlight(p.command)));
  }

  /**
   * Approved proposals whose effect may still come: commands in flight, and those that timed out
   * after the module acknowledged them (its event is late: it said it carried them out), for
   * resuggestAfterDecisionMs after the timeout — as long as the same situation stays quiet. The
   * agent counts them as promised (RuleContext.underway); write-back keeps checking the late ones'
   * effect (`commandsAwaitingEffect`), which ends their wait.
   */
  commandsUnderway(): Proposal[] {
    const now = this.clock();
    return inCreationOrder([...this.active.values()].filter((p) => p.status === 'approved' && (commandInFlight(p.command) || this.awaited(p, now))));
  }

  /** Approved commands that timed out after the module acknowledged them, still awaited (see `commandsUnderway`). */
  commandsAwaitingEffect(): Proposal[] {
    const now = this.clock();
    return inCreationOrder([...this.active.values()].filter((p) => p.status === 'approved' && this.awaited(p, now)));
  }

  /**
   * Commands that failed or timed out within endedCommandsKeptMs and have not moved on since (a
   * late effect of a timed-out one, or a refusal, ends it; a late first ok ack keeps it, saying
   * "last state: acknowledged" from then on), the latest first. From memory:
   * a site asks at every status, and the table keeps every proposal ever made.
   */
  endedCommands(): EndedCommand[] {
    this.check();
    const now = this.clock();
    for (const [id, c] of this.ended) if (now - c.atMs >= this.endedKeptMs) this.ended.delete(id);
    return [...this.ended.values()].sort((a, b) => b.atMs - a.atMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((c) => ({ ...c }));
  }

  /** Timed out after an acknowledgement, within resuggestAfterDecisionMs; one past it is dropped from memory. */
  private awaited(p: Proposal, now: number): boolean {
    if (!timedOutAcknowledged(p.command)) return false;
    if (now - p.command!.updatedAtMs < this.resuggestMs) return true;
    this.active.delete(p.id);
    this.rows.delete(p.id);
    return false;
  }

  /**
   * Whether every write of the proposal is committed. A commit that failed (a full disk) leaves
   * them in memory and in the table's writer, which commits them with the next commit; until then
   * a restart forgets them (the write-back sends no command of such an approval).
   */
  isCommitted(id: string): boolean {
    return !this.pending.has(id);
  }

  /** The proposal's decision trail, oldest first, read from its first log entry on. */
  history(id: string): DecisionLogEntry[] {
    this.commit();
    return this.log.entries(id, logFirstEntryOf(this.storedRow(id)));
  }

  /** Runs after each approval is recorded (the write-back sends the command). */
  onApproved(listener: (p: Proposal) => void | Promise<void>): void {
    this.approvedListeners.push(listener);
  }

  // ------------------------------------------------------------------------------------------
  // The agent side.

  /**
   * Whether `submit` would suppress a proposal of this situation now (decided within
   * resuggestAfterDecisionMs, or its commands failed FAILURES_TO_QUIET times within it: the same
   * test as `submit`'s, which prunes the old entries first) — asked
   * before the draft, by a rule that hands something out once (core/agents assign-job): a draft
   * that would be suppressed must not take a resource another job could have.
   */
  isQuiet(situationKey: string): boolean {
    this.check();
    return this.quietAt(situationKey, this.clock());
  }

  /**
   * isQuiet at `now` (submit's test, after its pruning too). `newAfter`: the id of an applied
   * approval the agent says the situation began anew after (`SubmitBatch.newOccurrences`) — that
   * decision's quiet does not count.
   */
  private quietAt(situationKey: string, now: number, newAfter?: string): boolean {
    const at = this.decidedAt.get(situationKey);
    if (at !== undefined && now - at < this.resuggestMs && (newAfter === undefined || this.appliedQuietAt(situationKey, now)?.id !== newAfter)) return true;
    return this.failures.has(situationKey) && this.recentFailures(situationKey, now).filter((f) => f.sent).length >= FAILURES_TO_QUIET;
  }

  /**
   * The approval that alone keeps this situation quiet now, when its command was applied (the
   * module carried it out): the situation's latest decision, within resuggestAfterDecisionMs, and
   * no failures quiet it. Undefined otherwise (not quiet; quiet by a rejection, by an approval whose
   * command is anything but applied, or by failures). The inbox does not judge whether the
   * situation began anew since: the agent asks the proposal's rule (core/agents
   * `Rule.newOccurrence`) and says so in `submit` (`SubmitBatch.newOccurrences`); without that, the
   * quiet lasts as any decision's. The proposal is read once per decision (applied is final).
   */
  appliedQuiet(situationKey: string): Proposal | undefined {
    this.check();
    return this.appliedQuietAt(situationKey, this.clock());
  }

  private appliedQuietAt(situationKey: string, now: number): Proposal | undefined {
    const at = this.decidedAt.get(situationKey);
    const by = this.decidedBy.get(situationKey);
    if (at === undefined || by === undefined || now - at >= this.resuggestMs) return undefined;
    if (this.failures.has(situationKey) && this.recentFailures(situationKey, now).filter((f) => f.sent).length >= FAILURES_TO_QUIET) return undefined;
    if (by.proposal === undefined) by.proposal = this.get(by.id) ?? null;
    const p = by.proposal;
    return p !== null && p.status === 'approved' && p.command?.state === 'applied' ? p : undefined;
  }

  /**
   * Whether a proposal of run `runId` is stored (its first id, `P-<run id>-1`): the agent asks at a
   * restart whether its newest run got as far as its submit (core/agents `baseline`).
   */
  hasRun(runId: string): boolean {
    this.check();
    return this.storedRow(proposalIdOf(runId, 1)) !== undefined;
  }

  /**
   * The proposals of `ruleIds` withdrawn at or after `sinceMs` (`agent_updated_at_ms`), in creation
   * order: for a restarted agent, what the checks between runs withdrew after its rules' baselines
   * (core/agents DESIGN.md, "Between runs", step 4), which the agent before the restart held in
   * memory only. One scan of a few columns of the table, whole rows for those only; the writes
   * not committed yet (`pending`) as this inbox holds them.
   */
  withdrawnSince(sinceMs: number, ruleIds: readonly string[]): Proposal[] {
    this.check();
    const rules = new Set(ruleIds);
    const wanted = (agentStatus: unknown, decision: unknown, ruleId: unknown, atMs: unknown): boolean =>
      rules.has(String(ruleId)) && lightStatus(agentStatus, decision) === 'withdrawn' && Number(atMs) >= sinceMs;
    const out = new Map<string, Proposal>();
    const snapshot = this.table.latestSnapshot();
    if (snapshot) {
      const ids: string[] = [];
      for (const [id, agentStatus, decision, ruleId, atMs] of this.table.scanRows(latestAt(this.table, snapshot.id), {
        projection: ['proposal_id', 'agent_status', 'decision', 'rule_id', 'agent_updated_at_ms'],
      })) {
        if (!this.pending.has(String(id)) && wanted(agentStatus, decision, ruleId, atMs)) ids.push(String(id));
      }
      for (const p of wholeProposals(this.table, snapshot.id, ids)) out.set(p.id, p);
    }
    for (const [id, row] of this.pending) {
      if (wanted(row.agent_status, row.decision, row.rule_id, row.agent_updated_at_ms)) out.set(id, proposalFromRow(row));
    }
    return inCreationOrder([...out.values()]);
  }

  /**
   * The decided proposals whose situation's quiet ended after `sinceMs` and by now: approved or
   * rejected (the latest decision of the situation) `resuggestAfterDecisionMs` ago — or, for an
   * approval whose command timed out after the module acknowledged it, as long after that timeout
   * (`commandsUnderway` awaits its effect until then) — and not quiet now (`isQuiet`), with no open
   * or deferred proposal; one whose command failed is not (the failure ended its quiet at once:
   * `endedCommands`). In creation order. For a rule that drafts only what changed since its
   * baseline (core/agents stock-reorder): the others look at every row each run and propose such a
   * situation again when the quiet ends; a row that stayed below its reorder point through it
   * never crossed it again. The first call reads the table (one scan of a few columns, the
   * uncommitted writes as this inbox holds them: a restart loses nothing); the calls after it,
   * from a time not earlier than the one before, read memory only.
   */
  quietEndedSince(sinceMs: number): Proposal[] {
    this.check();
    const now = this.clock();
    if (sinceMs < this.quietEndsFromMs) this.readQuietEnds(sinceMs);
    const out: Proposal[] = [];
    for (const [key, q] of this.quietEnds) {
      if (q.endMs <= sinceMs) {
        this.quietEnds.delete(key);
        continue;
      }
      if (q.endMs > now) continue;
      const p = (q.proposal ??= this.get(q.id));
      if (p === undefined || p.command?.state === 'failed') {
        this.quietEnds.delete(key);
        continue;
      }
      // Timed out after the module acknowledged it: awaited (underway) for as long after the timeout.
      const awaitedUntil = timedOutAcknowledged(p.command) ? p.command!.updatedAtMs + this.resuggestMs : -Infinity;
      if (awaitedUntil > q.endMs) {
        q.endMs = awaitedUntil;
        if (awaitedUntil > now) {
          q.proposal = undefined; // read again then: its effect may have come meanwhile
          continue;
        }
      }
      if (this.bySituation.has(key) || this.quietAt(key, now)) continue;
      out.push(p);
    }
    this.quietEndsFromMs = sinceMs;
    return inCreationOrder(out);
  }

  /** A decision made once `quietEndsFromMs` is known: the situation's latest, whose quiet ends `resuggestAfterDecisionMs` after it. */
  private noteQuietEnd(p: Proposal, d: Decision): void {
    if ((d.kind !== 'approved' && d.kind !== 'rejected') || this.quietEndsFromMs === Infinity) return;
    const was = this.quietEnds.get(p.situationKey);
    if (was === undefined || was.decidedAtMs <= d.atMs) this.quietEnds.set(p.situationKey, { id: p.id, decidedAtMs: d.atMs, endMs: d.atMs + this.resuggestMs });
  }

  /** Fills `quietEnds` with every quiet that ends after `sinceMs`, from the table and the uncommitted writes. */
  private readQuietEnds(sinceMs: number): void {
    const latest = new Map<string, QuietEnd>();
    const take = (id: unknown, key: unknown, decision: unknown, decidedAt: unknown, command: unknown, commandAt: unknown, detail: unknown): void => {
      if (decision !== 'approved' && decision !== 'rejected') return;
      const at = Number(decidedAt);
      const c = command === null || command === undefined ? null : ({ state: command, detail: detail ?? null } as CommandProgress);
      const endMs = Math.max(at + this.resuggestMs, timedOutAcknowledged(c) ? Number(commandAt) + this.resuggestMs : -Infinity);
      const was = latest.get(String(key));
      if (was === undefined || was.decidedAtMs < at) latest.set(String(key), { id: String(id), decidedAtMs: at, endMs });
    };
    const snapshot = this.table.latestSnapshot();
    if (snapshot) {
      for (const [id, key, decision, decidedAt, command, commandAt, detail] of this.table.scanRows(latestAt(this.table, snapshot.id), {
        projection: ['proposal_id', 'situation_key', 'decision', 'decided_at_ms', 'command_state', 'command_updated_at_ms', 'command_detail'],
        fillCache: false,
      })) {
        if (!this.pending.has(String(id))) take(id, key, decision, decidedAt, command, commandAt, detail);
      }
    }
    for (const [id, r] of this.pending) take(id, r.situation_key, r.decision, r.decided_at_ms, r.command_state, r.command_updated_at_ms, r.command_detail);
    for (const [key, q] of latest) {
      if (q.endMs <= sinceMs) continue;
      const mem = this.quietEnds.get(key);
      if (mem === undefined || mem.decidedAtMs < q.decidedAtMs) this.quietEnds.set(key, q);
    }
    this.quietEndsFromMs = sinceMs;
  }

  /**
   * The baselines the agent holds its rules on (`holdBaselines`), as last committed — by this
   * process or, after a restart, an earlier one; {} when none (or, said as a warning, unreadable:
   * the agent then reads every rule from its newest run, as before there was a record).
   */
  heldBaselines(): HeldBaselines {
    this.check();
    if (this.heldJson === undefined) return {};
    try {
      const v: unknown = JSON.parse(this.heldJson);
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as HeldBaselines;
    } catch {
      // said below
    }
    this.warn(`the agent's held baselines (${HELD_BASELINES_PROPERTY}) are not a JSON object; none are held`);
    return {};
  }

  /**
   * Keeps the agent's held baselines across a restart: committed at once (in approval_inbox's
   * snapshot properties, atomically with the commit's rows; a commit of its own when nothing else
   * is written) and carried by every commit after it. Unchanged: nothing is written.
   */
  holdBaselines(held: HeldBaselines): void {
    this.check();
    const json = canonicalJson(held);
    if (json === this.heldJson) return;
    const before = this.heldJson;
    this.heldJson = json;
    try {
      this.commitBoth();
    } catch (e) {
      // Not kept: the same holds asked again are committed then, not taken as kept already.
      this.heldJson = before;
      throw e;
    }
  }

  submit(batch: SubmitBatch): SubmitResult {
    this.check();
    const now = this.clock();
    const result: SubmitResult = { created: [], duplicates: [], suppressed: [], withdrawn: [] };
    for (const [key, at] of this.decidedAt) {
      if (now - at < this.resuggestMs) continue;
      this.decidedAt.delete(key);
      this.decidedBy.delete(key);
    }
    const newAfter = new Map((batch.newOccurrences ?? []).map((o) => [o.situationKey, o.after]));
    for (const key of this.failures.keys()) this.recentFailures(key, now);
    // Withdrawals first: a situation resolved and seen again in the same run gets a new proposal.
    for (const w of batch.withdrawals) {
      const p = this.active.get(w.id);
      if (!p || !isActive(p)) continue;
      const next = this.writeGroup(p, 'agent', { ...agentColumns(p.id, p, p.createdAtMs, 'withdrawn', w.reason, now), ...withMessage(p, 'withdrawnReason', w.message) });
      this.appendLog({ atMs: now, proposalId: p.id, event: 'withdrawn', actor: `agent-${batch.runId}`, detail: entryDetail.withdrawn(w.reason) });
      result.withdrawn.push(next);
    }
    let n = 0;
    for (const input of batch.proposals) {
      if (this.bySituation.has(input.situationKey)) {
        result.duplicates.push(input.situationKey);
        continue;
      }
      if (this.quietAt(input.situationKey, now, newAfter.get(input.situationKey))) {
        result.suppressed.push(input.situationKey);
        continue;
      }
      if (this.lastRun?.runId !== batch.runId) this.lastRun = { runId: batch.runId, ids: new Set(), usedBefore: this.hasRun(batch.runId) };
      const run = this.lastRun;
      let id: string;
      do id = proposalIdOf(batch.runId, ++n);
      while (run.ids.has(id) || (run.usedBefore && this.storedRow(id) !== undefined));
      const entry = this.appendLog({ atMs: now, proposalId: id, event: 'proposed', actor: `agent-${batch.runId}`, detail: entryDetail.proposed(input) });
      const row = { proposal_id: id, ...agentColumns(id, input, now, 'open', null, now), [LOG_FIRST_ENTRY]: BigInt(entry), [AGENT_MESSAGES]: messagesColumn(input.messages), agent_seq: 1n };
      this.writeRow(row);
      run.ids.add(id);
      const p = proposalFromRow(row);
      this.index(p);
      this.rows.set(id, row);
      result.created.push(p);
    }
    this.commitBoth();
    return result;
  }

  // ------------------------------------------------------------------------------------------
  // The decision side.

  async decide(id: string, verb: DecisionVerb, o: DecideOptions): Promise<DecideResult> {
    this.check();
    if (!(DECISIONS as readonly string[]).includes(verb)) throw new InboxError('InvalidArgument', `decision: expected one of ${DECISIONS.join(', ')}, got ${JSON.stringify(verb)}`);
    if (typeof o?.user !== 'string' || o.user.length === 0) throw new InboxError('InvalidArgument', 'user: expected a user name');
    if (typeof o.pin !== 'string') throw new InboxError('InvalidArgument', 'pin: expected a PIN');
    const comment = o.comment === undefined || o.comment === '' ? null : o.comment;
    if (comment !== null && (typeof comment !== 'string' || comment.length > this.commentMax)) {
      throw new InboxError('InvalidArgument', `comment: expected at most ${this.commentMax} characters, got ${typeof comment === 'string' ? comment.length : typeof comment}`);
    }
    // Refused here, before anything is decided: the table store refuses it in the middle of the writes.
    if (comment !== null && !isWellFormedString(comment)) throw new InboxError('InvalidArgument', 'comment: not valid Unicode text (a lone surrogate, half of a character pair)');
    const before = this.requireActive(id);

    const signIn = await this.o.users.verifyPin(o.user, o.pin);
    if (!signIn.ok) {
      const reason = REFUSAL[signIn.reason] ?? 'wrong_pin';
      this.refuse(id, o.user, verb, reason);
      const extra = signIn.reason === 'locked' ? ` until ${new Date(signIn.lockedUntilMs).toISOString()}` : signIn.reason === 'wrong' && signIn.failuresLeft !== undefined ? ` (${signIn.failuresLeft} attempt${signIn.failuresLeft === 1 ? '' : 's'} left)` : '';
      throw new InboxError('Refused', `${verb} ${id} refused: ${reason.replace('_', ' ')} for user '${logName(o.user)}'${extra}`, reason);
    }
    const user = signIn.user;
    if (!DECIDER_ROLES.includes(user.role)) {
      this.refuse(id, user.name, verb, 'role');
      throw new InboxError('Refused', `${verb} ${id} refused: user '${user.name}' is ${user.role}; only ${DECIDER_ROLES.join(' and ')} decide`, 'role');
    }
    const seen = o.seen ?? Object.fromEntries(before.evidence.map((e) => [e.table, e.snapshotId]));

    if (verb !== 'approve') {
      const p = this.requireUndecidedSince(before, verb);
      const kind = verb === 'reject' ? 'rejected' : 'deferred';
      const next = this.decideAs(p, { kind, by: user.name, role: user.role, atMs: this.clock(), comment, snapshots: { seen, checked: {} }, reason: null });
      this.keepEvidence(next); // before the commit: see keepEvidence
      this.commitBoth();
      return { outcome: kind, proposal: next };
    }

    // Compare-and-set: bring state up to date, then re-check against the latest snapshots.
    await this.o.freshen?.();
    const check = await this.o.recheck(before);
    const p = this.requireUndecidedSince(before, verb); // withdrawn, or decided by someone else, while we waited?
    const atMs = this.clock();
    if (!check.holds) {
      const next = this.decideAs(p, { kind: 'stale', by: user.name, role: user.role, atMs, comment, snapshots: { seen, checked: check.snapshots }, reason: check.reason }, withMessage(p, 'staleReason', check.message));
      this.keepEvidence(next);
      this.keepChecked(next);
      this.commitBoth();
      try {
        await this.o.reevaluate?.(next);
      } catch (e) {
        this.warn(`re-evaluation after the stale approval of ${id}: ${(e as Error).message}`);
      }
      return { outcome: 'stale', reason: check.reason, proposal: this.get(id) ?? next };
    }
    const decision: Decision = { kind: 'approved', by: user.name, role: user.role, atMs, comment, snapshots: { seen, checked: check.snapshots }, reason: null };
    let next = this.decideAs(p, decision);
    if (p.module !== null) {
      next = this.writeGroup(next, 'command', commandColumns({ state: 'pending', topic: commandTopic(this.site, p.module), sentAtMs: null, updatedAtMs: atMs, detail: null }));
    }
    this.keepEvidence(next);
    this.keepChecked(next);
    this.commitBoth();
    for (const l of this.approvedListeners) {
      try {
        await l(next);
      } catch (e) {
        this.warn(`after approving ${id}: ${(e as Error).message} (the command stays pending; WriteBack.resume sends it)`);
      }
    }
    return { outcome: 'approved', proposal: this.get(id) ?? next };
  }

  /**
   * Keeps what a person decided on: tag `decision-<proposal id>` on each table the proposal read,
   * at the snapshot it read, for `decisionEvidenceRetentionMs`. From the agent's run tag when the
   * snapshot itself has expired (core/lsm tags.ts); a deferred proposal decided later has the tag
   * its deferral made renewed, or made anew (`renewEvidence`). A failure only warns: the decision
   * stands, and the proposal's recorded rows remain.
   *
   * Made before the decision is committed (with keepChecked): a process that stopped between the
   * commit and the tags left a decision that stands after the restart (its log entries rebuilt,
   * log-recovery.ts) and nothing that tags it then — the run tag, no longer renewed once the
   * proposal is decided, expired within days, the checked snapshot within the hour. A stop before
   * the commit leaves tags of a decision not made: kept for nothing until they expire, and renewed
   * (or made anew) by the decision made instead, as a deferral's (decision-tags-crash.test.ts).
   */
  private keepEvidence(p: Proposal): void {
    const name = decisionTagName(p.id);
    for (const e of p.evidence) {
      if (e.tag === null || e.snapshotId === null) continue;
      try {
        const table = this.evidenceTable(e.table);
        if (table.tags.exists(name) && !this.renewEvidence(table, name, p.id, e.table, e.snapshotId)) continue;
        table.createTag(name, e.snapshotId, this.decisionEvidence);
      } catch (err) {
        this.warn(`the evidence of ${p.id} in ${e.table} is not kept beyond the agent's run tag: ${(err as Error).message}`);
      }
    }
  }

  /**
   * The table `name` as decisions tag it, opened once and kept, as the agent keeps the tables it
   * tags: a Table opened afresh starts with empty tag and snapshot caches, so a decision whose
   * evidence snapshot had expired listed the tags by reading every tag file (hundreds to thousands
   * on a site), and each approval opened its 4–5 tables again. A kept Table sees other processes'
   * tags and commits (core/lsm validates its tag cache on every listing and looks at the disk
   * before tagging a cached snapshot). Kept by core/lsm `KeptTables`, as the site API's tables:
   * opened again when its latest schema is another (an ALTER); a table gone is getTable's
   * NotFound, rather than a tag written into a dropped table's directory.
   */
  private evidenceTable(name: string): Table {
    return this.evidenceTables.get(name) ?? this.o.catalog.getTable({ database: this.o.database, table: name });
  }

  /**
   * The `decision-` tag an earlier decision made (a deferral's, or one of a decision whose commit
   * never happened): its retention was that decision's, counted from then, and this decision is
   * kept `decisionEvidenceRetentionMs` from now. Taken as it was, an approval 50 minutes after a
   * deferral under the one-hour minimum kept its evidence 10 minutes, one after the tag expired
   * (not yet deleted) none, and a retention lowered since the deferral kept it the old year.
   * Renewed (core/lsm refuses a renewal with less than `RENEW_MARGIN_MS` left: an expiration may
   * be deleting it); else deleted and made anew (returns true) when the snapshot or another tag
   * still holds it, or left as it is with a warning.
   */
  private renewEvidence(table: Table, name: string, proposalId: string, tableName: string, snapshotId: number): boolean {
    const tag = table.tags.get(name);
    const now = this.clock();
    const left = tagTimeLeftMs(tag, now);
    // Kept until deleted (made by hand), or at another snapshot (not made by this inbox): as before.
    if (left === undefined || tag.snapshot.id !== snapshotId) return false;
    if (left >= RENEW_MARGIN_MS) {
      try {
        table.renewTag(name, this.decisionEvidence);
        return false;
      } catch (err) {
        // Refused by the table's own clock (another than the inbox's): made anew as below.
        if (!(err instanceof LsmError && err.kind === 'Conflict')) throw err;
      }
    }
    const snapshot = table.snapshots.tryGet(snapshotId);
    const held =
      (snapshot !== undefined && table.snapshots.isRetained(snapshot)) ||
      table.listTags().some((t) => t.name !== name && t.snapshot.id === snapshotId && (tagTimeLeftMs(t, now) ?? Infinity) >= RENEW_MARGIN_MS);
    if (!held) {
      this.warn(`the evidence of ${proposalId} in ${tableName} is kept only until tag ${name} expires (${Math.max(0, Math.round(left / 60_000))} min): neither snapshot ${snapshotId} nor another tag of it is left to make it anew from`);
      return false;
    }
    table.deleteTag(name);
    return true;
  }

  /**
   * Keeps the state an approval was checked against: tag `checked-<proposal id>` on each table the
   * re-check read (`decision.snapshots.checked`), at the snapshot it read, for
   * `decisionEvidenceRetentionMs` — for an approved or a stale decision, the only ones that
   * checked. The tables keep an untagged snapshot about an hour, and this is the state that decided
   * whether the command was sent. Tagged also where it is the evidence's snapshot: a second tag
   * costs a tag file, and a reader finds the checked state under one name on every table. A
   * failure only warns: the decision stands, and its recorded snapshot ids remain.
   */
  private keepChecked(p: Proposal): void {
    if (p.decision === null || (p.decision.kind !== 'approved' && p.decision.kind !== 'stale')) return;
    const name = checkedTagName(p.id);
    for (const [tableName, snapshotId] of Object.entries(p.decision.snapshots.checked)) {
      if (snapshotId === null) continue; // the table had no snapshot: nothing to keep
      try {
        const table = this.evidenceTable(tableName);
        if (table.tags.exists(name)) {
          // A final decision is made once: a tag at another snapshot is the leftover of an
          // approval whose commit never happened (the tags come first), not this one's state.
          if (table.tags.get(name).snapshot.id === snapshotId) continue;
          table.deleteTag(name);
        }
        table.createTag(name, snapshotId, this.decisionEvidence);
      } catch (err) {
        this.warn(`the state ${p.id}'s approval was checked against in ${tableName} (snapshot ${snapshotId}) is not kept beyond the table's snapshot retention: ${(err as Error).message}`);
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // The write-back side.

  /**
   * The module `module` answers the command of proposal `id`, which this inbox never approved (it
   * is open, deferred or withdrawn, without a command): its approval was lost with the site PC — a
   * restore from an earlier state of HQ (`--fall-back-to-tag`, or an HQ the last commits had not
   * reached) — while the command had gone out. Recorded as the ack says it was: approved by a
   * person not on record (`APPROVER_NOT_ON_RECORD`), now, and the command `sent` (the caller then
   * marks the ack). Left open, a second approval sent the same command id, which the module client
   * answers with its stored ack (a refusal refused every approval of it), and a rejection stood
   * over a command carried out (approval-lost-in-restore.test.ts).
   * Withdrawn is taken, as the agent withdraws a proposal whose situation the command ended (after
   * the restore, seeing its effect); that it was open or deferred when HQ's snapshot was taken (not
   * withdrawn, rejected or stale then, which no one could approve after) is the caller's to know
   * (write-back.ts `proposalsWithoutCommandAt`).
   * Returns the proposal, or undefined when it is not such a one.
   */
  approvalNotOnRecord(id: string, module: string): Proposal | undefined {
    this.check();
    const p = this.get(id);
    if (!p || p.module !== module || p.command !== null || (p.decision !== null && p.decision.kind !== 'deferred')) return undefined;
    const atMs = this.clock();
    const reason = `not on record: module ${module} answered the command of ${id}, approved before the site was restored from an earlier state (its approval lost with the PC); who approved it and when are not known`;
    const next = this.decideAs(p, { kind: 'approved', by: APPROVER_NOT_ON_RECORD, role: '', atMs, comment: null, snapshots: { seen: {}, checked: {} }, reason });
    // Sent at some time before; counted from now, so the effect is awaited appliedTimeoutMs.
    const c: CommandProgress = { state: 'sent', topic: commandTopic(this.site, module), sentAtMs: atMs, updatedAtMs: atMs, detail: null };
    const sent = this.writeGroup(next, 'command', commandColumns(c));
    this.appendGroupEntry('command', { atMs, proposalId: id, event: 'command_sent', actor: 'write-back', detail: entryDetail.command(c.topic, null) });
    this.keepEvidence(sent);
    this.commitBoth();
    return sent;
  }

  /**
   * Moves an approved proposal's command to `state`. Returns the proposal, or undefined when the
   * transition is not allowed (a duplicate ack, an ack after applied); nothing is written then.
   */
  markCommand(id: string, state: CommandState, detail: string | null = null, actor = 'write-back'): Proposal | undefined {
    this.check();
    const p = this.get(id);
    if (!p || p.status !== 'approved' || p.command === null) return undefined;
    if (!NEXT[p.command.state].includes(state)) return undefined;
    // Timed out after the module acknowledged it: an ok ack now is that one again (the module
    // client answers a redelivered command with its stored ack), no news. Taken, the next poll
    // timed it out again: a second command_timed_out and its alarm.
    if (state === 'acknowledged' && timedOutAcknowledged(p.command)) return undefined;
    const now = this.clock();
    // Timed out while `sent`, and the module's first ok ack comes now: the ack is news (logged, the
    // module's result with it), the timeout is not. Moved to `acknowledged`, the next poll found it
    // past appliedTimeoutMs and timed it out a second time — another `command_timed_out` and the
    // alarm raised anew, for the timeout the floor was told of (late-first-ack.test.ts). It stays
    // timed out, as one the module acknowledged (`timedOutAcknowledged`: its effect awaited), at
    // the timeout's time, so the alarm is the same one.
    if (state === 'acknowledged' && p.command.state === 'timed_out') return this.lateAck(p, p.command, now, detail, actor);
    const c: CommandProgress = { state, topic: p.command.topic, sentAtMs: state === 'sent' ? now : p.command.sentAtMs, updatedAtMs: now, detail: detail ?? p.command.detail };
    const next = this.writeGroup(p, 'command', commandColumns(c));
    const by = this.decidedBy.get(p.situationKey);
    if (by?.id === id) by.proposal = undefined; // appliedQuiet reads it again
    if (state === 'failed' || state === 'timed_out') this.ended.set(id, { id, action: p.action, state, atMs: now, detail: c.detail });
    else this.ended.delete(id);
    this.appendGroupEntry('command', { atMs: now, proposalId: id, event: `command_${state}`, actor, detail: entryDetail.command(c.topic, detail) });
    // The module did not carry it out (refused, or the command expired): the situation may be
    // proposed again, if it still holds, instead of staying quiet for resuggestAfterDecisionMs —
    // unless its commands failed FAILURES_TO_QUIET times by now. Before the commit, as the write
    // above: a commit that fails leaves the failure in memory and in the writer, for the next one.
    if (state === 'failed') {
      if (this.decidedAt.get(p.situationKey) === p.decision!.atMs) {
        this.decidedAt.delete(p.situationKey);
        this.decidedBy.delete(p.situationKey);
      }
      this.failedAgain(p.situationKey, { id, atMs: now, detail: c.detail, sent: c.sentAtMs !== null });
    }
    this.commitBoth();
    return next;
  }

  /** markCommand's ok ack of a command that timed out unacknowledged (see there). */
  private lateAck(p: Proposal, was: CommandProgress, now: number, detail: string | null, actor: string): Proposal {
    const words = writeBackWords(was.detail);
    const sinceSentMs = words?.code === 'command.notApplied' ? words.params.seconds * 1000 : was.updatedAtMs - (was.sentAtMs ?? was.updatedAtMs);
    const c: CommandProgress = { ...was, detail: timedOutDetail(sinceSentMs, 'acknowledged') };
    const next = this.writeGroup(p, 'command', commandColumns(c));
    const ended = this.ended.get(p.id);
    this.ended.set(p.id, { id: p.id, action: p.action, state: 'timed_out', atMs: ended?.atMs ?? was.updatedAtMs, detail: c.detail });
    this.appendGroupEntry('command', { atMs: now, proposalId: p.id, event: 'command_acknowledged', actor, detail: entryDetail.command(c.topic, detail) });
    this.commitBoth();
    return next;
  }

  /**
   * The approved proposals of a situation whose command failed within resuggestAfterDecisionMs,
   * oldest first: a new proposal of it shows a person what the module said the last times.
   */
  failedBefore(situationKey: string): readonly CommandFailure[] {
    this.check();
    return this.recentFailures(situationKey, this.clock());
  }

  private failedAgain(key: string, f: CommandFailure): void {
    const list = this.failures.get(key);
    if (!list) this.failures.set(key, [f]);
    else if (!list.some((x) => x.id === f.id)) {
      list.push(f);
      list.sort((a, b) => a.atMs - b.atMs);
    }
  }

  /** A situation's failures within resuggestAfterDecisionMs of `now`; older ones are forgotten. */
  private recentFailures(key: string, now: number): readonly CommandFailure[] {
    const list = this.failures.get(key);
    if (!list) return [];
    const recent = list.filter((f) => now - f.atMs < this.resuggestMs);
    if (recent.length === 0) this.failures.delete(key);
    else if (recent.length !== list.length) this.failures.set(key, recent);
    return recent;
  }

  /**
   * A config.json key a signed-in person changed (a reorder point set on the Stock screen): a
   * decision_log entry `config_changed` with no proposal, under their name, committed at once — so
   * it is kept, and travels to HQ, with the decisions. Returns the change as `readConfigChanges`
   * reads it back from the log.
   */
  recordConfigChange(c: { user: string; key: string; before: Json; after: Json }): ConfigChange {
    this.check();
    const atMs = this.clock();
    const user = logName(c.user);
    const id = this.appendLog({ atMs, proposalId: null, event: CONFIG_CHANGED_EVENT, actor: user, detail: entryDetail.configChanged(c.key, c.before, c.after) });
    if (this.o.deferCommits) this.uncommitted = true;
    else this.commitLog(); // nothing of the inbox table was written
    return { id, atMs, user, key: c.key, before: c.before, after: c.after };
  }

  /** Commits writes left uncommitted by `deferCommits` (inbox first, then the log); else nothing to do. */
  commit(): void {
    this.check();
    if (!this.uncommitted) return;
    // The claim lets the next open rebuild this commit's log entries if the log's commit never happens.
    // And the entries its rows cannot give back (appendGroupEntry); a snapshot's properties carry
    // on to the next commits, so a commit without any says so.
    const superseded = this.superseded.length > 0 ? JSON.stringify(this.superseded) : this.supersededInLatest ? '' : undefined;
    this.writer.commit({
      [LOG_NEXT_PROPERTY]: String(this.log.nextEntryId),
      ...(this.heldJson === undefined ? {} : { [HELD_BASELINES_PROPERTY]: this.heldJson }),
      ...(superseded === undefined ? {} : { [SUPERSEDED_PROPERTY]: superseded }),
    });
    this.pending.clear(); // committed (isCommitted)
    this.supersededInLatest = this.superseded.length > 0;
    this.superseded = [];
    this.groupEntries.clear();
    this.compactLater(this.writer, this.table.name);
    this.maintainedAtMs.inbox = this.clock();
    this.commitLog();
    this.uncommitted = false;
  }

  /**
   * After a commit of one of the tables: its deferred compaction (`compaction: 'deferred'`) in
   * slices. A failed slice gives that compaction up (what it wrote is removed) and is a warning:
   * the rows are committed, and the next commit plans the compaction again.
   */
  private compactLater(w: TableWriter, table: string): void {
    this.slicer.after(w, { failed: (e) => this.warn(`compacting ${table} failed: ${(e as Error)?.message ?? String(e)}; the next commit tries again`) });
  }

  private commitLog(): void {
    this.log.commit();
    this.maintainedAtMs.log = this.clock();
  }

  /**
   * Expires each table this inbox has not committed (nor expired this way) for `idleExpireMs`,
   * without a commit (TableWriter.expire). The site calls it from its tick. A failure is a
   * warning: the next commit's expiration tries again, and reports what fails there.
   */
  expireIdle(): void {
    this.check();
    const now = this.clock();
    const idle = this.o.idleExpireMs ?? DEFAULT_IDLE_EXPIRE_MS;
    for (const which of ['inbox', 'log'] as const) {
      if (now - this.maintainedAtMs[which] < idle) continue;
      this.maintainedAtMs[which] = now;
      const table = which === 'inbox' ? this.table : this.logTable;
      try {
        if (which === 'inbox') this.writer.expire();
        else this.log.expire();
      } catch (e) {
        this.warn(`expiring idle table ${table.name} failed: ${(e as Error).message}`);
      }
    }
  }

  close(): void {
    if (this.closed) return;
    try {
      this.commit();
    } finally {
      this.closed = true;
      this.slicer.stop();
      try {
        this.writer.close();
      } finally {
        this.log.close();
      }
    }
  }

  // ------------------------------------------------------------------------------------------

  private check(): void {
    if (this.closed) throw new InboxError('Conflict', 'the inbox is closed');
  }

  private requireActive(id: string): Proposal {
    const p = this.get(id);
    if (!p) throw new InboxError('NotFound', `proposal ${id} does not exist`);
    if (!isActive(p)) {
      const why = p.decision && p.status !== 'withdrawn' ? ` (${p.decision.kind} by ${p.decision.by} at ${new Date(p.decision.atMs).toISOString()})` : p.withdrawnReason ? ` (${p.withdrawnReason})` : '';
      throw new InboxError('Conflict', `proposal ${id} is ${p.status}${why}; only open or deferred proposals can be decided`);
    }
    return p;
  }

  /**
   * The proposal `before` still active and with the decision it had then. A deferral someone else
   * recorded while this decision awaited its PIN check or the approval's re-check was answered
   * `deferred`, and then the approval went through on top of it: made by a person who never saw
   * the deferral or its comment (decided-meanwhile.test.ts). A Conflict now, naming that decision;
   * deciding again (having seen it) goes through as any decision of a deferred proposal.
   */
  private requireUndecidedSince(before: Proposal, verb: DecisionVerb): Proposal {
    const p = this.requireActive(before.id);
    const was = before.decision;
    const d = p.decision;
    if (d !== null && (was === null || was.kind !== d.kind || was.by !== d.by || was.atMs !== d.atMs)) {
      throw new InboxError('Conflict', `proposal ${p.id} was ${d.kind} by ${d.by} at ${new Date(d.atMs).toISOString()}${d.comment ? ` (${JSON.stringify(d.comment)})` : ''} while the ${verb === 'approve' ? 'approval was being checked' : `${verb} was being made`}; look at it again before deciding`, undefined, d.by);
    }
    return p;
  }

  private refuse(id: string, user: string, verb: DecisionVerb, reason: RefusalReason): void {
    this.appendLog({ atMs: this.clock(), proposalId: id, event: 'refused', actor: logName(user), detail: { decision: verb, reason } });
    if (this.o.deferCommits) this.uncommitted = true;
    else this.commitLog(); // nothing of the inbox table was written
  }

  /** `extra`: columns outside the groups written with the decision (a stale approval's message). */
  private decideAs(p: Proposal, d: Decision, extra: InboxRow = {}): Proposal {
    const next = this.writeGroup(p, 'decision', { ...decisionColumns(d), ...extra });
    if (d.kind === 'approved' || d.kind === 'rejected') {
      this.decidedAt.set(p.situationKey, d.atMs);
      this.decidedBy.set(p.situationKey, { id: p.id });
    }
    this.noteQuietEnd(p, d);
    this.appendGroupEntry('decision', { atMs: d.atMs, proposalId: p.id, event: d.kind, actor: d.by, detail: entryDetail.decided(d) });
    return next;
  }

  /**
   * Appends the log entry of a decision or command group write. One that replaces a write of the
   * same group still uncommitted (a commit that failed left it in the writer) is kept for the
   * commit's properties (`superseded`): the commit's row holds only the later write, and a crash
   * before the log's commit would lose the earlier one's entry — a deferral's user, time and
   * comment under the approval that followed it.
   */
  private appendGroupEntry(group: 'decision' | 'command', e: Omit<DecisionLogEntry, 'id'>): void {
    const key = `${group} ${e.proposalId}`;
    const before = this.groupEntries.get(key);
    if (before) this.superseded.push(before);
    this.groupEntries.set(key, e);
    this.appendLog(e);
  }

  /** The last decision and command entry per proposal since the inbox's last commit (`appendGroupEntry`). */
  private readonly groupEntries = new Map<string, Omit<DecisionLogEntry, 'id'>>();
  /** Entries of group writes a later write of the same group replaced since the inbox's last commit (SUPERSEDED_PROPERTY). */
  private superseded: Omit<DecisionLogEntry, 'id'>[] = [];
  /** The latest approval_inbox commit names superseded entries: the next one clears the property (properties carry on). */
  private supersededInLatest = false;

  /** Writes one group of a proposal's row with the group's sequence + 1; returns the new proposal. */
  private writeGroup(p: Proposal, group: InboxGroup, columns: InboxRow): Proposal {
    const stored = this.storedRow(p.id);
    const seqColumn = GROUP_SEQ[group];
    const seq = ((stored?.[seqColumn] as bigint | null | undefined) ?? 0n) + 1n;
    const row = { proposal_id: p.id, [seqColumn]: seq, ...columns };
    this.writeRow(row);
    const mergedRow = { ...(stored ?? {}), ...row };
    const merged = proposalFromRow(mergedRow);
    this.pending.set(p.id, mergedRow);
    this.index(merged);
    if (this.active.has(p.id)) this.rows.set(p.id, mergedRow);
    return merged;
  }

  /**
   * Writes `row` into approval_inbox's writer. A write that failed after the writer took the row
   * (a flush on a full disk: `LsmError.rowTaken`) counts as written: the writer holds the row and
   * commits it with the next commit, which throws the disk's error while it lasts — as for a row
   * whose commit failed, the operation stands in memory and in the log. Thrown here, the state and
   * the log entry were left out while the row went into the next commit: an approval the person
   * was told had failed was committed without its log entry, and a proposal stood in the table
   * beside the one the next run made for its situation (inbox-row-taken.test.ts).
   */
  private writeRow(row: InboxRow): void {
    try {
      this.writer.writeRecord(row);
    } catch (e) {
      if (!rowHeld(e)) throw e;
    }
  }

  /**
   * Appends a decision_log entry; its id. One whose write failed after the log's writer took it (a
   * flush on a full disk: `LsmError.rowTaken`) counts as written, as `writeRow`'s row: the writer
   * holds it for the next log commit, which throws the disk's error while it lasts. Thrown here,
   * the operation stopped half-way while what it had written went into the next commit: an
   * approval's decision stood without its command (never sent), a failed command went uncounted
   * towards its situation's quiet (log-row-taken.test.ts).
   */
  private appendLog(e: Omit<DecisionLogEntry, 'id'>): number {
    const id = this.log.nextEntryId;
    try {
      return this.log.append(e);
    } catch (err) {
      if (!rowHeld(err)) throw err;
      return id; // DecisionLog.append keeps the id of an entry its writer took
    }
  }

  /** Rows written but not committed yet (this operation's, or all since `commit()` with deferCommits), by id. */
  private readonly pending = new Map<string, InboxRow>();
  /** Something was written (either table) since the last commit. */
  private uncommitted = false;

  private storedRow(id: string): InboxRow | undefined {
    return this.pending.get(id) ?? this.rows.get(id) ?? readProposalRow(this.table, id);
  }

  /** The end of an operation: commit both tables, unless deferCommits leaves that to `commit()`. */
  private commitBoth(): void {
    this.uncommitted = true;
    if (!this.o.deferCommits) this.commit();
  }

  private index(p: Proposal): void {
    if (isActive(p) || (p.status === 'approved' && (commandInFlight(p.command) || timedOutAcknowledged(p.command)))) this.active.set(p.id, p);
    else {
      this.active.delete(p.id);
      this.rows.delete(p.id);
    }
    if (isActive(p)) this.bySituation.set(p.situationKey, p.id);
    else if (this.bySituation.get(p.situationKey) === p.id) this.bySituation.delete(p.situationKey);
  }
}

/**
 * The `agent_messages` value with one more of the proposal's messages (the stored ones kept: a
 * column outside the groups is written whole), or no column to write when there is none.
 */
function withMessage(p: Proposal, key: 'withdrawnReason' | 'staleReason', m: Message | undefined): InboxRow {
  return m === undefined ? {} : { [AGENT_MESSAGES]: messagesColumn({ ...p.messages, [key]: m }) };
}

/** The most of a typed name the log keeps as an actor. */
const LOG_NAME_CHARS_MAX = 64;

/** A typed name as the log's actor (a refused one is whatever was typed: refused-name.test.ts). */
const logName = (name: string): string => wellFormedPrefix(name, LOG_NAME_CHARS_MAX);

/** `tilstand/<site>/commands/<module>`: the site is the database name without `site_`. */
export function commandTopic(site: string, module: string): string {
  return `tilstand/${site}/commands/${module}`;
}

/** The site id of a `site_<id>` database. */
export function siteOfDatabase(database: string): string {
  if (!/^site_./.test(database)) throw new InboxError('InvalidArgument', `database: expected 'site_<id>', got ${JSON.stringify(database)}`);
  return database.slice('site_'.length);
}

/** Creates `approval_inbox` and `decision_log` when missing (and the database). */
export function openInboxTables(catalog: Catalog, database: string): { inbox: Table; log: Table } {
  if (!catalog.databaseExists(database)) catalog.createDatabase(database, true);
  const inbox = catalog.createTable({ database, table: APPROVAL_INBOX_TABLE }, APPROVAL_INBOX_SPEC, true);
  const log = catalog.createTable({ database, table: DECISION_LOG_TABLE }, DECISION_LOG_SPEC, true);
  return { inbox, log };
}

/**
 * Brings tables made by an earlier version to the current spec: `target-file-size` on both, and
 * approval_inbox's `log_first_entry` column (after `agent_updated_at_ms`, as in a new table) and
 * `agent_messages` (after `log_first_entry`). One schema change each (`schema-<N+1>`; rows written
 * before read the new columns as null). Called by the inbox before it opens its writers; a table
 * whose writer another process holds is left as it is (opening the writer then reports that
 * process).
 */
function upgradeInboxTable(table: Table, isInbox: boolean): void {
  const changes: SchemaChange[] = [];
  if (isInbox && !table.schema.fieldIndex.has(LOG_FIRST_ENTRY)) {
    changes.push({ kind: 'addColumn', name: LOG_FIRST_ENTRY, type: 'BIGINT', position: { after: 'agent_updated_at_ms' } });
  }
  if (isInbox && !table.schema.fieldIndex.has(AGENT_MESSAGES)) {
    changes.push({ kind: 'addColumn', name: AGENT_MESSAGES, type: 'STRING', position: { after: LOG_FIRST_ENTRY } });
  }
  if (table.schema.options.raw['target-file-size'] === undefined) changes.push({ kind: 'setOption', key: 'target-file-size', value: INBOX_TARGET_FILE_SIZE });
  if (changes.length === 0) return;
  try {
    table.alter(changes);
  } catch (e) {
    if (!(e instanceof LsmError && e.kind === 'Conflict')) throw e;
  }
}

/** One proposal, read from any process. */
export function readProposal(table: Table, id: string): Proposal | undefined {
  const row = readProposalRow(table, id);
  return row && proposalFromRow(row);
}

/** One proposal's approval_inbox row by column name, read from any process. */
export function readProposalRow(table: Table, id: string): InboxRow | undefined {
  const r = table.reader();
  try {
    const row = r.get({ proposal_id: id });
    return row && rowRecord(table.schema.fields, row);
  } finally {
    r.close();
  }
}

/** The id of the `n`th proposal a run made (1-based): `P-<run id>-<n>`. */
const proposalIdOf = (runId: string, n: number): string => `P-${runId}-${n}`;

/**
 * Newest first. One run's proposals share their creation time, and so may two runs' (two runs in
 * one millisecond: `…-000`, `…-000-2`): then creation order backwards (`compareProposalIds`: the
 * newer run first, then the highest number first — `…-15` before `…-9`, which a string comparison
 * puts the other way round). It compared the numbers before the runs: an older run's `-5` came
 * above a newer run's `-1` (order-ties.test.ts).
 */
export function newestFirst(a: Pick<Proposal, 'createdAtMs' | 'id'>, b: Pick<Proposal, 'createdAtMs' | 'id'>): number {
  return b.createdAtMs - a.createdAtMs || compareProposalIds(b.id, a.id);
}

/**
 * The newest decision first; a proposal without one (`decidedAtMs` undefined) by when it was made,
 * then as `newestFirst`. For a withdrawn proposal `decidedAtMs` is when the agent withdrew it
 * (`endedAt`): it left the waiting list then, and a list of what left it lately (the floor UI's
 * Decided list) puts it among the decisions of that minute, not at a deferral it may have had.
 */
export function newestDecisionFirst(a: Pick<Proposal, 'createdAtMs' | 'id'> & { decidedAtMs?: number }, b: Pick<Proposal, 'createdAtMs' | 'id'> & { decidedAtMs?: number }): number {
  return (b.decidedAtMs ?? b.createdAtMs) - (a.decidedAtMs ?? a.createdAtMs) || newestFirst(a, b);
}

/** When a proposal's decision was made, or (withdrawn) when the agent withdrew it; undefined: neither. */
function endedAt(status: ProposalStatus, decidedAtMs: number | undefined, agentUpdatedAtMs: number): number | undefined {
  return status === 'withdrawn' ? agentUpdatedAtMs : decidedAtMs;
}

const decidedAt = (p: Proposal): Pick<Proposal, 'createdAtMs' | 'id'> & { decidedAtMs?: number } => {
  const at = endedAt(p.status, p.decision?.atMs, p.agentUpdatedAtMs);
  return at === undefined ? p : { createdAtMs: p.createdAtMs, id: p.id, decidedAtMs: at };
};

/** `readProposals`' order key of a row from its projected columns (`endedAt`), as `{decidedAtMs}` or nothing. */
function withEndedAt(status: ProposalStatus, decidedAtMs: unknown, agentUpdatedAtMs: unknown): { decidedAtMs?: number } {
  const at = endedAt(status, decidedAtMs === null || decidedAtMs === undefined ? undefined : Number(decidedAtMs), Number(agentUpdatedAtMs));
  return at === undefined ? {} : { decidedAtMs: at };
}

const RISK_RANK = { high: 0, medium: 1, low: 2 } as const;

/**
 * The inbox's order: high risk first, then the oldest, then the order they were made in (two runs
 * in one millisecond: the older run's first, `compareProposalIds`, as `inCreationOrder`).
 */
export function mostUrgentFirst(a: Pick<Proposal, 'risk' | 'createdAtMs' | 'id'>, b: Pick<Proposal, 'risk' | 'createdAtMs' | 'id'>): number {
  return RISK_RANK[a.risk] - RISK_RANK[b.risk] || a.createdAtMs - b.createdAtMs || compareProposalIds(a.id, b.id);
}

/**
 * Where this file reads "the latest" when it reads twice: the latest snapshot, found once and
 * pinned by its id so that both reads agree, in today's columns. Not time travel, which reads a
 * snapshot in its own schema's columns (core/lsm ReadPoint): rows committed before the upgrade's
 * ALTER (`upgradeInboxTable`) read its new columns as null, also before the next commit.
 */
function latestAt(table: Table, snapshotId: number): ReadPoint {
  return { snapshotId, schemaId: table.schema.id };
}

/** Whole proposals by id, read at the latest snapshot `snapshotId` (the ids were found there: each row exists). */
function wholeProposals(table: Table, snapshotId: number, ids: readonly string[]): Proposal[] {
  const reader = table.reader(latestAt(table, snapshotId));
  try {
    const fields = reader.schema.fields;
    return ids.map((id) => proposalFromRow(rowRecord(fields, reader.get({ proposal_id: id })!)));
  } finally {
    reader.close();
  }
}

/** A proposal's status from its `agent_status` and `decision` columns (statusOf without the rest of the row). */
const lightStatus = (agentStatus: unknown, decision: unknown): ProposalStatus =>
  statusOf({ agentStatus: agentStatus === 'withdrawn' ? 'withdrawn' : 'open', decision: decision === null || decision === undefined ? null : ({ kind: decision } as Decision) });

/** Open and deferred proposals: how many, and when the oldest open one was made (null: none open). */
export interface ActiveCounts {
  open: number;
  deferred: number;
  oldestOpenMs: number | null;
}

function countActive() {
  const c: ActiveCounts = { open: 0, deferred: 0, oldestOpenMs: null };
  return {
    add(status: ProposalStatus, createdAtMs: number) {
      if (status === 'deferred') c.deferred++;
      else if (status === 'open') {
        c.open++;
        if (c.oldestOpenMs === null || createdAtMs < c.oldestOpenMs) c.oldestOpenMs = createdAtMs;
      }
    },
    counts: () => c,
  };
}

/** `Inbox.activeCounts` of an inbox that is not open (a site not running): the latest snapshot's status columns only. */
export function readActiveCounts(table: Table): ActiveCounts {
  const c = countActive();
  const snapshot = table.latestSnapshot();
  if (snapshot) {
    for (const [createdAtMs, agentStatus, decision] of table.scanRows(latestAt(table, snapshot.id), { projection: ['created_at_ms', 'agent_status', 'decision'] })) {
      c.add(lightStatus(agentStatus, decision), Number(createdAtMs));
    }
  }
  return c.counts();
}

/**
 * Proposals, newest first (or `filter.order`), read from any process. `waitingFirst`: those waiting
 * for a decision (open, deferred) before the rest, each part in that order, before the cut at
 * `limit` — one scan where a waiting read and a read of the rest took two (`tilstand proposals`).
 */
export function readProposals(table: Table, filter: ProposalFilter & { waitingFirst?: boolean } = {}): Proposal[] {
  const statuses = filter.status === undefined ? undefined : new Set(typeof filter.status === 'string' ? [filter.status] : filter.status);
  for (const s of statuses ?? []) {
    if (!(PROPOSAL_STATUSES as readonly string[]).includes(s)) throw new InboxError('InvalidArgument', `status: expected one of ${PROPOSAL_STATUSES.join(', ')}, got ${JSON.stringify(s)}`);
  }
  const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
  // The table keeps every proposal ever made (thousands a day on a busy site), and a whole row
  // costs ~50 µs to decode and parse (its evidence is JSON). So: the few columns that decide the
  // status and the order for every row, then whole rows for the first `limit` only — both at one
  // snapshot.
  const snapshot = table.latestSnapshot();
  if (!snapshot) return [];
  const picked: { id: string; createdAtMs: number; decidedAtMs?: number; waiting: boolean }[] = [];
  for (const [id, createdAtMs, agentStatus, decision, ruleId, decidedAtMs, agentUpdatedAtMs] of table.scanRows(latestAt(table, snapshot.id), {
    projection: ['proposal_id', 'created_at_ms', 'agent_status', 'decision', 'rule_id', 'decided_at_ms', 'agent_updated_at_ms'],
  })) {
    const status = lightStatus(agentStatus, decision);
    if (statuses && !statuses.has(status)) continue;
    if (filter.ruleId !== undefined && ruleId !== filter.ruleId) continue;
    const waiting = status === 'open' || status === 'deferred';
    picked.push({ id: String(id), createdAtMs: Number(createdAtMs), ...withEndedAt(status, decidedAtMs, agentUpdatedAtMs), waiting });
  }
  const order = filter.order === 'decided' ? newestDecisionFirst : newestFirst;
  picked.sort(filter.waitingFirst ? (a, b) => Number(b.waiting) - Number(a.waiting) || order(a, b) : order);
  return wholeProposals(table, snapshot.id, picked.slice(0, limit).map((x) => x.id));
}
