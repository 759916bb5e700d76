// A rule: one policy of the work-queue agent, in its own file under rules/. A rule sees one
// consistent snapshot of each table through read-only handles (RuleContext) and returns drafts
// of proposals; it never writes anything.
//
//   evaluate(ctx)        the situations it finds now, as ProposalDrafts;
//   recheck(ctx, p)      does an earlier proposal's precondition still hold in ctx? Used to
//                        withdraw resolved proposals after each run, and as the compare-and-set
//                        check when a person approves (against the latest snapshots);
//   effectSeen(ctx, p)   does the state show that the approved action was carried out?
//   newOccurrence(ctx, p) (optional) after p's command was applied: has its situation ended and
//                        begun again since, so that the approval's quiet no longer holds?
//
// A rule may read tables of the site's own too (config.json `tables` entries with columns): it
// names them in `reads`, and the context holds them in `siteTables` (DESIGN.md, "Site tables").
//
// Invariants for rule authors: pure functions of ctx (no clock but ctx.nowMs, no I/O); a
// situation's key parameters (`keyParams`) identify it across runs; evidence names the rows
// that justify the draft (the whole snapshot stays readable through the run's tag); the
// explanation and risk reason are messages with a template in every language (messages.ts).

import type { Json, Message, Proposal, RiskLevel } from '../inbox/index.ts';
import { timedOutAcknowledged } from '../inbox/proposal.ts';
import type { AgentConfig } from './config.ts';
import type { MessageTemplates } from './messages.ts';
import type { ReadOnlyTable, Row } from './read-only-table.ts';

export const STATE_TABLES = ['work_queue', 'resources', 'stock'] as const;
export type StateTable = (typeof STATE_TABLES)[number];

export interface RuleContext {
  readonly nowMs: number;
  readonly runId: string;
  readonly tables: Readonly<Record<StateTable, ReadOnlyTable>>;
  /**
   * The site's own tables that the rules in force name in `reads` (every rule sees all of them),
   * at the snapshot the run read, as the state tables; empty when no rule reads one.
   */
  readonly siteTables: Readonly<Record<string, ReadOnlyTable>>;
  /**
   * The previous run's tag on each table (changes since then) — the state tables and the site
   * tables the rules read —, or null: the first run, or the first after the thresholds changed
   * (Agent.reevaluateAll).
   */
  readonly previousTags: Readonly<Partial<Record<StateTable, string>> & Partial<Record<string, string>>> | null;
  readonly config: AgentConfig;
  /**
   * Approved proposals whose command is on its way to the module (pending, sent, acknowledged),
   * or timed out after the module acknowledged it (its event is late; core/inbox
   * `commandsUnderway`): what a person has promised and the state tables do not show until the
   * module's event. A rule
   * counts what they take as taken (a resource, a job's material), so two approvals do not
   * promise it twice. Each rule decides from the state whether the module acted already.
   */
  readonly underway: readonly Proposal[];
  /**
   * The open and deferred proposals of every rule (core/inbox `openProposals`) as the context was
   * made, oldest first (the same order live, after a restart and in a replay): what waits for a person. A rule that hands something out once (assign-job: a resource)
   * leaves what an open proposal of its own names to that proposal while it still holds, so two
   * open proposals do not offer it twice.
   */
  readonly open: readonly Proposal[];
  /**
   * Whether the inbox would suppress a proposal of this situation key now (core/inbox `isQuiet`:
   * approved or rejected within `resuggestAfterDecisionMs`, or its commands failed again and
   * again) — not when the quiet is an approval whose command was applied and the situation's rule
   * says it began anew since (`Rule.newOccurrence`). A rule that hands something out once
   * (assign-job: a resource) skips such a draft, so what it would have taken goes to the next
   * situation in the same run.
   */
  readonly quiet: (situationKey: string) => boolean;
  /**
   * The proposals withdrawn after the snapshots the rule's baseline (`previousTags`) read — by the
   * checks between runs (Agent.recheckChanged), or by a run while the rule was held on an older
   * baseline (a failed run, a quiet draft): each no longer held at a commit between that baseline
   * and now. A rule that drafts on what changed since its baseline (stock-reorder) sees the baseline and
   * now on the same side of its threshold and drafts nothing, though the situation ended and began
   * again in between; these tell it so. Every rule's (a rule looks at its own, by `ruleId`), the
   * latest withdrawal per situation; empty outside a run, and after a restart (kept in memory).
   */
  readonly withdrawnBetweenRuns: readonly Proposal[];
  /**
   * The approved proposals (every rule's) whose command failed — the module refused it, or it
   * expired — within the inbox's `endedCommandsKeptMs` (8 h) and has not moved on since (core/inbox
   * `endedCommands`), oldest first. The inbox lets such a situation come back at once if it still
   * holds (not quiet, unless its commands failed FAILURES_TO_QUIET times); a rule that drafts only
   * on what changed (stock-reorder) sees no change and needs these to draft it again. Empty outside
   * a run.
   */
  readonly failedCommands: readonly Proposal[];
  /**
   * The decided proposals (every rule's) whose situation's quiet ended since the rules' baselines
   * (the earliest): approved or rejected `resuggestAfterDecisionMs` ago — an approval whose
   * command timed out after the module acknowledged it, that long after the timeout — and not
   * quiet now, with no open or deferred proposal (core/inbox `quietEndedSince`; read back from
   * approval_inbox after a restart). The rules that look at every row each run propose such a
   * situation again when the quiet ends, if it still holds; a rule that drafts only on what
   * changed (stock-reorder) needs these for a row that stayed as it was through the quiet. Empty
   * outside a run, and when a rule reads every row (no baseline).
   */
  readonly quietEnded: readonly Proposal[];
  /**
   * A note of the run about what the rule left out and why (stock-reorder: rows whose on_hand
   * inventory has not sent yet), in `RunResult.notes` and the agent's log. Not a proposal and not
   * an error. Only in a run's `evaluate` (absent in recheck and effectSeen, and in contexts a test
   * builds): call it as `ctx.note?.(…)`.
   */
  readonly note?: (message: Message) => void;
}

export interface ProposalDraft {
  readonly action: string;
  /** The module that carries it out, or null for a notice. */
  readonly module: string | null;
  readonly params: Readonly<Record<string, Json>>;
  /** Names of the params that identify the situation (with rule id and action: its key). */
  readonly keyParams: readonly string[];
  readonly risk: RiskLevel;
  /** Said as messages of the rule's `messages` (or the shared ones); stored in English beside them. */
  readonly riskReason: Message;
  readonly explanation: Message;
  /** The rows that justify the draft, per table: a state table, or a site table the rule `reads`. */
  readonly evidence: readonly { readonly table: StateTable | (string & {}); readonly rows: readonly Row[] }[];
}

/** Whether a proposal's precondition still holds; when not, why (a message, stored in English beside it). */
export type Recheck = { readonly holds: true } | { readonly holds: false; readonly reason: Message };

export interface Rule {
  readonly id: string;
  readonly version: string;
  readonly description: string;
  /** The templates of its messages in every language (messages.ts); ids start with `<id>.`. */
  readonly messages?: MessageTemplates;
  /**
   * The site's own tables (config.json `tables` entries with columns) it reads besides the state
   * tables, by name: `ctx.siteTables[name]`. An Agent made with a rule that names a table the site
   * does not have refuses to start (AgentError naming the rule and the table).
   */
  readonly reads?: readonly string[];
  evaluate(ctx: RuleContext): ProposalDraft[];
  recheck(ctx: RuleContext, p: Proposal): Recheck;
  effectSeen(ctx: RuleContext, p: Proposal): boolean;
  /**
   * After an approval of this rule whose command was applied (the module carried it out), the
   * situation stays quiet for `resuggestAfterDecisionMs` (core/inbox) — unless this says the state
   * in ctx is a new occurrence of it: the situation was seen ended after the approval (the job
   * assigned, released; the row at or above its point) and holds again now. Asked by the agent for
   * a situation the rule drafts (or asks `ctx.quiet` of) while only that approval keeps it quiet.
   * Absent, or false: the quiet lasts (escalate-late-job: a job still late after its raise is not
   * escalated again every minute). It must never take the state the command found for a new
   * occurrence: an order acknowledged before its inbound shows is still the same dip.
   */
  newOccurrence?(ctx: RuleContext, p: Proposal): boolean;
}

export const HOLDS: Recheck = Object.freeze({ holds: true });
export const gone = (reason: Message): Recheck => ({ holds: false, reason });

/**
 * Whether the module answered the proposal's command with an ok ack (acknowledged, or timed out
 * after it: core/inbox write-back). A rule's `effectSeen` counts it only where the state can no
 * longer show the effect (the row gone, the commits since the approval's check expired, the effect
 * netted into one commit with another change): the module said it carried the command out. The
 * ack alone is not the effect: it comes before the module's events reach the tables, and what is
 * underway must stay promised until they do (core/agents DESIGN.md, "Applied"). A refusal is a
 * `failed` ack and never counts.
 */
export function moduleAcknowledged(p: Proposal): boolean {
  const c = p.command;
  return c !== null && (c.state === 'acknowledged' || c.state === 'applied' || timedOutAcknowledged(c));
}
