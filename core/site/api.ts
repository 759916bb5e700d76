// The site API: the one typed interface both user interfaces use — the Electron preload exposes it
// over IPC, the headless server over HTTP and WebSocket — and the renderer's only door. This file
// holds types and the list of methods only (no runtime imports), so the renderer can
// `import type` it without pulling in node.
//
// Every method takes one JSON-serializable request and answers one JSON-serializable response;
// errors cross the boundary as `{ ok: false, error: { kind, message } }` (Electron passes only an
// error's message across IPC, so kinds travel as data).

export type Role = 'viewer' | 'operator' | 'shift_lead' | 'admin';

export interface SessionUser {
  name: string;
  roles: Role[];
}

export type ProposalStatus = 'open' | 'deferred' | 'approved' | 'rejected' | 'stale' | 'withdrawn';
export type CommandProgress = 'pending' | 'sent' | 'acknowledged' | 'applied' | 'failed' | 'timed_out';
export type Risk = 'low' | 'medium' | 'high';

export interface EvidenceTable {
  table: string;
  /** Null when the table had no snapshot when the agent read it (nothing to pin). */
  snapshotId: number | null;
  tag: string | null;
  /** Rows read, keyed by column name, in JSON form. */
  rows: Array<Record<string, unknown>>;
  /**
   * The table's column types by name, as Paimon spells them (`TIMESTAMP(3)`, `BIGINT`…), from its
   * current schema; empty when the table is gone. The UI shows a TIMESTAMP's text (UTC wall clock)
   * in the PC's time zone by it.
   */
  types: Record<string, string>;
  /** The table's primary-key columns, from its current schema (empty when the table is gone; absent from an older site). */
  keyColumns?: string[];
  /**
   * Its sequence columns (`sequence.field`, the partial-update sequence groups' fields; core/inbox
   * evidence.ts `sequenceColumns`): numbers that order a module's events, which the UI shows last.
   */
  sequenceColumns?: string[];
}

/** A proposal's texts in one language (ProposalView.translations). */
export interface ProposalTranslation {
  explanation?: string;
  riskReason?: string;
  withdrawnReason?: string;
  staleReason?: string;
}

export interface ProposalView {
  id: string;
  status: ProposalStatus;
  action: string;
  /** The module that carries the action out; null for a notice (nothing is sent). */
  module?: string | null;
  params: Record<string, unknown>;
  ruleId: string;
  ruleVersion: string;
  risk: Risk;
  /** The stored text (English): the record HQ and the audit read. */
  riskReason: string;
  explanation: string;
  /**
   * The explanation, the risk reason, and why it was withdrawn or found stale, in the UI's other
   * languages, by language code (`nb`, `de`), each where the agent's message for it renders
   * (core/agents messages.ts); absent for a proposal stored before they were kept. The UI falls
   * back to the English text.
   */
  translations?: Partial<Record<string, ProposalTranslation>>;
  createdMs: number;
  decidedBy?: string;
  decidedMs?: number;
  comment?: string;
  command?: { module: string; progress: CommandProgress; updatedMs: number; detail?: string };
  staleReason?: string;
  withdrawnReason?: string;
  /** When the agent withdrew it (status `withdrawn`): the Decided list's time for it, as `decidedMs` is a decision's. */
  withdrawnMs?: number;
  /**
   * In `listProposals`: how many earlier approvals of the same situation the module did not
   * carry out within the inbox's resuggest window (the detail's `failedBefore` lists them).
   */
  failedBeforeCount?: number;
}

/** A named part of a trail entry's detail (a refusal's reason, a decision's comment, a command's detail…). */
export interface TrailField {
  name: 'reason' | 'comment' | 'detail' | 'decision' | 'action';
  value: string;
  /**
   * On a command's `detail` that is write-back's own (not applied in time, not sent in time; core/inbox
   * `writeBackWords`): its code and numbers, for a UI to word in its language. `value` is the stored
   * English, the record, shown for a code a UI does not know. Absent from an older site.
   */
  code?: WriteBackCode;
  params?: Record<string, string | number>;
}

/**
 * The codes of write-back's own command details (core/inbox `writeBackWords`): `command.notApplied`
 * (seconds: since it was sent, lastState: the command state it was in, a CommandState) and
 * `command.notSent` (windowSeconds: the inbox's appliedTimeoutMs, agoSeconds: since the approval).
 * The floor UI words each in en, nb and de (renderer i18n/messages.ts `writeBackText`); a new code
 * is additive: a UI that does not know it shows the English.
 */
export const WRITE_BACK_CODES = ['command.notApplied', 'command.notSent'] as const;
export type WriteBackCode = (typeof WRITE_BACK_CODES)[number];

/**
 * One table of the state an approval was checked against (core/inbox evidence.ts
 * `EvidenceCheckedReport`): the compare-and-set's re-check read the table at `snapshotId`, kept as
 * tag `checked-<proposal id>`; `rows` are the rows the evidence cites, read again there.
 */
export interface CheckedTable {
  table: string;
  /** Null when the table had no snapshot when the approval was checked. */
  snapshotId: number | null;
  tag: string;
  /** Whether the tag still exists (false: expired, deleted, or a decision from before checked tags), and until when it is kept (null: no retention time). */
  tagExists: boolean;
  tagRetainedUntilMs: number | null;
  /** The cited rows at the tag, keyed by column name, in JSON form (a row gone there: its key only); empty when none is cited or the tag is gone. */
  rows: Array<Record<string, unknown>>;
  /**
   * Whether those rows are the ones the agent read, the sequence columns left out (a module's
   * sequence number moves with events that change nothing the rule read); null when the evidence
   * cites no row of this table or the tag is gone.
   */
  matchesEvidence: boolean | null;
  /** The columns that differ in any cited row, sequence columns left out (evidence.ts `changedColumns`). Absent from an older site. */
  changedColumns?: string[];
  /** Per row of `rows`, the columns of that row that differ. Absent from an older site. */
  changedCells?: string[][];
  /** Whether a sequence column moved (alone it does not make the rows changed). Absent from an older site. */
  sequenceMoved?: boolean;
  /** The table's column types by name, as in EvidenceTable. */
  types: Record<string, string>;
  /** As in EvidenceTable. */
  keyColumns?: string[];
  sequenceColumns?: string[];
  /** Why the table could not be read there, in English (evidence.ts `problem`), for logs and a title. */
  problem?: string;
}

export interface ProposalDetail extends ProposalView {
  evidence: EvidenceTable[];
  /**
   * For an approved or stale proposal, the state its approval was checked against, per table
   * (what `tilstand evidence` shows under "checked at"); empty for any other. Absent from an older site.
   */
  checked?: CheckedTable[];
  /**
   * The decision log's entries, oldest first. `detail` is the entry's detail as one English line;
   * `fields` the same named parts, for a UI to label in its own language.
   */
  trail: Array<{ atMs: number; event: string; user?: string; detail?: string; fields?: TrailField[] }>;
  /**
   * Earlier approvals of the same situation whose command failed (the module refused it, or it
   * expired, or write-back gave it up unsent) within the inbox's resuggest window, oldest first, with
   * what the module said (as it said it), or write-back's own detail with its `code` and `params` as
   * in TrailField. Two of them keep the situation from being proposed again (core/inbox FAILURES_TO_QUIET).
   */
  failedBefore: Array<{ id: string; atMs: number; detail: string | null; code?: WriteBackCode; params?: Record<string, string | number> }>;
}

export interface TableFreshness {
  table: string;
  budgetMs: number;
  decision: string;
  confirmedBy: string;
  ageMs: number;
  pendingEvents: number;
  lastCommitMs: number | null;
  snapshotId: number | null;
  breaches: number;
  withinBudget: boolean;
  /**
   * false: no binding of the site's config.json writes to the table (nor does anything else), so
   * nothing can make it late — its age of 0 says nothing about how current it is, and the UIs show
   * "no source" instead. It raises no alarm by itself. Absent (an older site) or true: fed.
   */
  fed?: boolean;
}

export interface TableInfo extends TableFreshness {
  snapshots: number;
  tags: number;
  bytes: number;
  /** Sorted runs above the compaction trigger, summed over buckets. */
  compactionDebt: number;
}

export interface Alarm {
  kind: 'budget_breach' | 'disk_budget' | 'ingest_stopped' | 'sync_stalled' | 'command_failed' | 'dead_letters' | 'stream_only_duplicates' | 'stream_silent' | 'clock_ahead' | 'module_refused';
  /** In English. */
  message: string;
  sinceMs: number;
  /**
   * The message's values, for a UI that words the alarm in its reader's language (renderer i18n
   * `alarm.<kind>`; a value named `…Ms` is a duration, one named `…AtMs` — ms since the epoch — a
   * time of day). Given for the alarms a shift lead acts on
   * (budget_breach, ingest_stopped, dead_letters, command_failed, stream_silent, sync_stalled); the others, for
   * IT, are worded in English only. budget_breach adds why no commit mends the table: `held` (its
   * events waiting behind a missing seq) with `streams` (those with an open gap that feed it,
   * comma-separated) when there are any, and `stopped: 1` once ingest has stopped on an error.
   * ingest_stopped (the Ingestor stopped applying after an error; events are only journaled until
   * ingest resumes in place or the site restarts) gives `failure`, the error as the Ingestor has it
   * (English, as logged), and what the site does about it: `resume` (an English sentence), with
   * `resumeAtMs` (when it tries next), `resumeRunning: 1` (a try under way) or `resumeStopped: 'damaged'` (a damaged file: not tried
   * again; fixed or restored, then `tilstand ingest resume` or a restart). An older site sends
   * `failure` alone.
   */
  params?: Record<string, string | number>;
}

/** One module stream: when it last delivered, and the silence its `stream_silent` alarm allows. */
export interface StreamView {
  /** `module/stream`. */
  stream: string;
  /** Receive time of its newest event since the site started; null: none yet. */
  lastEventMs: number | null;
  lastSeq: number | null;
  /**
   * Its newest event's own time minus its receive time (null: none yet): how far the module's
   * clock runs ahead of this PC's, less transit; over CLOCK_AHEAD_ALARM_MS raises `clock_ahead`.
   */
  clockAheadMs: number | null;
  /** The highest seq applied or pending. */
  appliedSeq: number;
  /**
   * Later events held while seqs `from`..`to` are missing: asked for again from the module, and
   * skipped at `skipAtMs` (null: never) if they do not come; null when nothing is held.
   */
  gap: { from: number; to: number; sinceMs: number; skipAtMs: number | null } | null;
  /** Config `alarms.streamSilentMs` for it; 0: no alarm. */
  silentAllowedMs: number;
  /** Silent longer than allowed (its alarm is up). */
  silent: boolean;
}

export interface SiteStatus {
  siteId: string;
  nowMs: number;
  /**
   * How often the site pushes its status (ms; core/site service.ts `statusEveryMs`, 5 s by
   * default): the floor UI takes a few of these without one for the site not answering, and lets
   * the ages it shows grow by its own clock (renderer README, "When the site does not answer").
   */
  statusEveryMs: number;
  broker: { listening: boolean; host: string; port: number; clients: number };
  tables: TableFreshness[];
  streams: StreamView[];
  deadLetters: number;
  /** Config `deadLetters.closedRetentionMs`: a replayed or dismissed letter is deleted this long after it was closed; 0 = kept. */
  deadLetterClosedRetentionMs: number;
  alarms: Alarm[];
  sync: SyncStatus;
  /** Proposals waiting for a decision: all of them (the inbox lists at most a few hundred). */
  proposals: { open: number; deferred: number; oldestOpenMs: number | null };
  /** The floor UI's settings (config `ui`): sign out after this long without use there; 0 = never. */
  ui: { idleSignOutMs: number };
  /** The rules the site's agent runs, in its order (absent from an older site's answer). */
  agentRules?: AgentRuleView[];
  /**
   * How often the agent looks and when it last did: what the empty inbox says, so a shift lead
   * sees the agent is alive (absent from an older site's answer).
   */
  agent?: AgentStatus;
  /**
   * The tables `tilstand restore --fall-back-to-tag` rolled back to an older tag, for a week after
   * the restore (core/site status.ts `RESTORED_FROM_TAG_SHOWN_MS`): the Sync screen says what they
   * lost. Absent when there are none, past the week, and from an older site's answer.
   */
  restoredFromTag?: RestoredFromTagView[];
}

/** The site's agent: its interval, whether its timers run, its last run. */
export interface AgentStatus {
  /** Config `agent.intervalMs` in force (a config reload changes it): a run this often while `timer`. */
  intervalMs: number;
  /**
   * Whether the agent's timers run; false: the site was started without them (`tilstand start
   * --no-agent-timer`), and the agent runs only when asked (`tilstand agent run`).
   */
  timer: boolean;
  /**
   * When its last run finished (epoch ms, as the wall clock reads now: kept on the monotonic clock,
   * so a step of the PC's clock does not age it); null: none since the site started. A run with
   * nothing new counts: it commits nothing, so approval_inbox's last commit is not the last run.
   */
  lastRunMs: number | null;
}

/**
 * A rule the site's agent runs. `file`: it comes from a rule file of the site's own (config
 * `agent.ruleFiles`): the path as config.json gives it and the SHA-256 of its code as loaded at
 * the start (core/agents `ruleFileHash`: of its bytes, or with `imports`, the local files it
 * imports — path relative to it, SHA-256 — of them all); absent for an installed rule.
 */
export interface AgentRuleView {
  id: string;
  version: string;
  file?: { path: string; sha256: string; imports?: { path: string; sha256: string }[] };
}

export interface SyncStatus {
  configured: boolean;
  /** Where the site syncs to (a directory or an s3:// URL, credentials blanked); null when not configured. */
  target: string | null;
  /** The last request to HQ succeeded. */
  online: boolean;
  pendingItems: number;
  pendingBytes: number;
  /** How long the oldest unsent step has waited, ms (an age, not a time); null when none waits. */
  oldestUnsyncedMs: number | null;
  /** Epoch ms of the last successful request to HQ. */
  lastSuccessMs: number | null;
  current: { file: string; bytes: number; total: number } | null;
  /** Steps finished, and bytes sent, within the health window (`windowMs`, 15 min). */
  recentItems: number;
  recentBytes: number;
  windowMs: number;
  /**
   * False (`sync_stalled`; `problems` says which) when HQ's sender marker names another
   * data directory (at once), a step has failed for the whole health window while HQ took other
   * requests, a table or contract file has been left out of planning for the window, or a step has
   * waited the whole window with nothing sent in it (core/sync DESIGN.md, "Retry, backoff, health").
   */
  healthy: boolean;
  /**
   * Why not healthy, most pressing first (core/sync's SyncProblem: 'refused', 'credentials', 'gone', 'step', 'waiting',
   * 'planning', or one a newer site adds); empty when healthy; absent from an older site's answer.
   */
  problems?: string[];
  /** The last failure's message (a closed line, a refused key, a full disk at HQ). */
  lastError: string | null;
  /**
   * Tags dropped rather than sent to HQ in the last day, oldest first (core/sync's
   * `SyncStatus.dropped`): no health problem, nothing is owed to HQ for them, but an analyst at HQ
   * will not find them. Absent from an older site's answer: none.
   */
  dropped?: SyncDropped[];
}

/**
 * Why a tag never reached HQ: `deleted` — it was deleted on the site (by an operator, by its
 * retention, with its table) while its upload waited. A newer site may add kinds.
 */
export type SyncDropKind = 'deleted';

/** A tag's upload dropped, not sent (`SyncStatus.dropped`). */
export interface SyncDropped {
  table: string;
  tag: string;
  kind: SyncDropKind;
  /** When the site dropped it (epoch ms). */
  atMs: number;
  /** The engine's English sentence (`tilstand status`, `sync status`); the UIs word `kind`. */
  why: string;
}

/**
 * A table restored from an older tag because its latest snapshot at HQ was damaged (core/sync
 * `RestoreNote.restoredFromTag`, `tilstand restore --fall-back-to-tag`): what it committed after
 * the tag, up to that damaged snapshot, is lost — but for what its modules resent after the tag's
 * marks; approval_inbox and decision_log are the site's own writing, which nothing resends.
 */
export interface RestoredFromTagView {
  table: string;
  tag: string;
  /** The tag's snapshot, the table's latest as restored, and its commit (epoch ms). */
  snapshotId: number;
  committedMs: number;
  /** HQ's damaged latest snapshot and its commit (epoch ms): the end of what is lost. */
  damagedSnapshotId: number;
  damagedCommittedMs: number;
  /** The time between the two commits. */
  lostMs: number;
  /** What was wrong with the damaged snapshot (core/sync's English; the UIs word the case). */
  error: string;
  /** When the restore ran (epoch ms). */
  restoredAtMs: number;
}

/**
 * A proposal waiting for a decision (open or deferred), with the job, resource or stock row its
 * parameters name (null where it names none): the work queue and stock screens show it on the
 * row, one click from the inbox.
 */
export interface WaitingProposal {
  id: string;
  action: string;
  status: 'open' | 'deferred';
  risk: string;
  job_id: string | null;
  resource_id: string | null;
  item: string | null;
  location: string | null;
}

export interface JobView {
  job_id: string;
  status: string;
  blocked_reason: string | null;
  capability: string | null;
  material_item: string | null;
  material_qty: number | null;
  priority: number | null;
  due_at: string | null;
  assigned_resource: string | null;
}

export interface ResourceView {
  resource_id: string;
  kind: string | null;
  capability: string | null;
  state: string | null;
  since: string | null;
}

export type ReorderScope = 'location' | 'item' | 'default';

export interface StockView {
  item: string;
  location: string;
  on_hand: number | null;
  reserved: number | null;
  inbound: number | null;
  available: number | null;
  projected: number | null;
  /**
   * The agent's reorder policy for the item (config.json `agent`): it proposes a replenishment up
   * to `order_up_to` when the position (on hand − reserved + inbound, nulls as 0) falls below
   * `reorder_point`.
   */
  reorder_point: number;
  order_up_to: number;
  /** Where the policy comes from: this location's own, the item's, or the site's default. */
  reorder_scope: ReorderScope;
  /**
   * Who set that policy from the floor UI and when (the decision log's `config_changed`), while
   * config.json still holds what they set; null for the site default, a policy set by hand in
   * config.json, or one changed by hand since.
   */
  reorder_set: { by: string; atMs: number } | null;
  /** The item's own levels (every location of it without its own follows them), or null. */
  item_policy: { reorder_point: number; order_up_to: number } | null;
  below_reorder_point: boolean;
  /** Proposals about this item at this location waiting for a decision (e.g. a replenishment). */
  waiting: WaitingProposal[];
}

export interface ConfigChangeView {
  id: number;
  atMs: number;
  user: string;
  key: string;
  /** The reorder policy the key names: its item, and its location (null: the item's own); null for another key. */
  policyOf: { item: string; location: string | null } | null;
  before: unknown;
  after: unknown;
}

export interface DeadLetterView {
  id: string;
  reason: string;
  detail: string;
  topic: string;
  payload: string;
  receivedMs: number;
  status: 'open' | 'replayed' | 'dismissed';
  /** Who dismissed it, when and why (status 'dismissed'). */
  dismissed: { by: string; atMs: number; note: string } | null;
}

/** Open dead letters of one topic with one reason, and how many (`deadLetterGroups`). */
export interface DeadLetterGroupView {
  topic: string;
  reason: string;
  count: number;
}

export interface UserView {
  name: string;
  roles: Role[];
  disabled: boolean;
  lockedUntilMs: number | null;
  /** Whether the user signs in with a badge too. Never the badge: it is a secret like a PIN (core/inbox users.ts keeps only its hash). */
  hasBadge: boolean;
}

export type ReadPointRequest = { tag: string } | { snapshotId: number } | { timestampMs: number } | { latest: true };

/** A column's stored values whose words on the page contain History's search (`history`, `diff` `worded`). */
export interface WordedValues {
  column: string;
  values: string[];
}

export interface HistoryResult {
  table: string;
  /** The snapshot read and when it was committed; null for a table with no snapshot yet. */
  snapshotId: number | null;
  snapshotMs: number | null;
  columns: string[];
  /** Each column's type as Paimon spells it, in `columns` order. */
  types: string[];
  rows: unknown[][];
  /** More rows matched than `limit`: the read stopped there. */
  more: boolean;
  /** The table's primary-key columns at that snapshot; the UI shows them first. Absent from an older site. */
  keyColumns?: string[];
  /** Its sequence columns at that snapshot (as EvidenceTable's), which the UI shows last. Absent from an older site. */
  sequenceColumns?: string[];
}

export interface DiffResult {
  table: string;
  /** The two snapshots compared (null: before the table's first). */
  from: { snapshotId: number | null; snapshotMs: number | null };
  to: { snapshotId: number | null; snapshotMs: number | null };
  columns: string[];
  /** Each column's type as Paimon spells it, in `columns` order. */
  types: string[];
  changes: Array<{ kind: '+I' | '-U' | '+U' | '-D'; row: unknown[] }>;
  /** More changes matched than `limit`: the read stopped there. */
  more: boolean;
  /** As in HistoryResult, in today's schema (the columns `columns` are in). Absent from an older site. */
  keyColumns?: string[];
  sequenceColumns?: string[];
}

/** The first-run state: a new data directory has no site id and no admin yet. */
export interface FirstRunStatus {
  /** True once config.json exists (the site id is set) and the first admin exists. */
  initialized: boolean;
  /** The site id when initialized. */
  siteId: string | null;
  /**
   * Before init: the site `tilstand restore` brought into this directory (its restore note), which
   * init accepts as the site id and no other; null otherwise.
   */
  restoredSite: string | null;
  /**
   * True from the first-run backend once the directory is set up: the site is starting and does
   * not answer yet (the page waits for an answer without it before it offers the sign-in).
   */
  starting?: boolean;
}

/** Methods callable without a signed-in session. */
export const PUBLIC_METHODS: readonly SiteMethod[] = ['firstRun', 'initSite', 'signIn', 'me'];

/** Every method: request → response. */
export interface SiteApiMethods {
  /** Public. Whether the data directory still needs its first run. */
  firstRun: { req: Record<string, never>; res: FirstRunStatus };
  /** Public only while uninitialized: sets the site id and the first admin (PIN). */
  initSite: { req: { siteId: string; adminName: string; adminPin: string }; res: FirstRunStatus };
  signIn: { req: { user: string; secret: string } | { badge: string }; res: SessionUser };
  signOut: { req: Record<string, never>; res: { ok: true } };
  me: { req: Record<string, never>; res: SessionUser | null };
  status: { req: Record<string, never>; res: SiteStatus };
  /**
   * Newest first, at most `limit` (default 200); `order: 'urgency'` (open and deferred only): the
   * inbox's order — high risk first, then the oldest — before the cut; `order: 'decided'`: the
   * newest decision first, a withdrawn proposal by when it was withdrawn (`withdrawnMs`), before
   * the cut (the inbox's Decided list, which asks for the approved, rejected and stale ones and,
   * apart, the withdrawn ones).
   */
  listProposals: { req: { status?: ProposalStatus[]; limit?: number; order?: 'newest' | 'urgency' | 'decided' }; res: ProposalView[] };
  getProposal: { req: { id: string }; res: ProposalDetail };
  decide: {
    req: { id: string; decision: 'approve' | 'reject' | 'defer'; comment?: string };
    res: { outcome: ProposalStatus; reason?: string; proposal: ProposalView };
  };
  /** `waiting`: the proposals waiting for a decision that name a job or a resource. */
  /**
   * Jobs in the screen's order (status, then priority), the first `limit` (default 1000) of those
   * that contain `search` in their id, status, capability, item, resource or blocked reason, or
   * (with a search) whose status is one of `statuses` — the stored statuses the page found the
   * search in as its language words them ("pågår": in_progress), which the site does not know;
   * every resource.
   */
  workQueue: { req: { search?: string; statuses?: string[]; limit?: number }; res: { jobs: JobView[]; resources: ResourceView[]; waiting: WaitingProposal[] } };
  /** `below`: only rows under their reorder point. */
  stock: { req: { search?: string; limit?: number; below?: boolean }; res: StockView[] };
  /**
   * Shift lead or admin. Sets the agent's reorder policy of an item (`location` null or left out)
   * or of one location of it, or removes it (`policy` null: the location then takes the item's,
   * the item the default). Written to config.json and applied at once, under the caller's name.
   * `res`: the policy now in force for the item at `location` (or for the item).
   */
  setReorderPolicy: {
    req: { item: string; location?: string | null; policy: { reorderPoint: number; orderUpTo: number } | null };
    res: { reorder_point: number; order_up_to: number; reorder_scope: ReorderScope };
  };
  /**
   * The config.json keys people changed from the floor UI (reorder points), newest first, at most
   * `limit` (default 50): who, when, the key, and its value before and after (null: not set).
   */
  configChanges: { req: { limit?: number }; res: ConfigChangeView[] };
  tables: { req: Record<string, never>; res: TableInfo[] };
  /**
   * The table's tags, newest snapshot first: at most `limit` (default 200), those whose name
   * contains `search` when given. A site keeps thousands (an agent run tags every minute).
   */
  tags: { req: { table: string; search?: string; limit?: number }; res: Array<{ name: string; snapshotId: number; createdMs: number | null }> };
  /**
   * `contains`: only rows with a cell that contains it (case-insensitive), as the API gives the
   * cell, or (with `contains`) whose cell of a `worded` column is one of its `values` — the stored
   * values the page found `contains` in as its language words them ("pågår": in_progress), which
   * the site does not know.
   */
  history: { req: { table: string; at: ReadPointRequest; limit?: number; contains?: string; worded?: WordedValues[] }; res: HistoryResult };
  diff: { req: { table: string; from: ReadPointRequest; to: ReadPointRequest; limit?: number; contains?: string; worded?: WordedValues[] }; res: DiffResult };
  syncStatus: { req: Record<string, never>; res: SyncStatus };
  /**
   * `topic` and `reason` (each as stored, exactly): only the letters of that topic and/or reason,
   * chosen before the cut at `limit` — one group of `deadLetterGroups`, however many others hold.
   */
  deadLetters: { req: { status?: 'open' | 'replayed' | 'dismissed'; limit?: number; topic?: string; reason?: string }; res: DeadLetterView[] };
  /**
   * Where the open letters come from: every topic-and-reason group of them, the largest first
   * (those not yet committed included) — the few of a list can all be one module's.
   */
  deadLetterGroups: { req: Record<string, never>; res: DeadLetterGroupView[] };
  /**
   * Anyone but a viewer: re-runs open letters (those named, or all) with the site's contracts now.
   * `alike` (with `ids`): also every other open letter with the topic and reason of one named —
   * a module's letters once its missing contract version is added, not other modules' garbage.
   */
  replayDeadLetters: { req: { ids?: string[]; alike?: boolean }; res: { replayed: number; failed: number; notOpen: string[]; alike: number } };
  /**
   * Shift lead or admin: closes open letters no replay can mend, as the signed-in user, with why.
   * `alike`: also every other open letter with the topic and reason of one named (listed or not).
   */
  dismissDeadLetters: { req: { ids: string[]; note: string; alike?: boolean }; res: { dismissed: number; notOpen: string[] } };
  users: { req: Record<string, never>; res: UserView[] };
  addUser: { req: { name: string; roles: Role[]; secret: string; badge?: string }; res: UserView };
  disableUser: { req: { name: string }; res: UserView };
  enableUser: { req: { name: string }; res: UserView };
  resetSecret: { req: { name: string; secret: string }; res: UserView };
  setRoles: { req: { name: string; roles: Role[] }; res: UserView };
}

export type SiteMethod = keyof SiteApiMethods;

/**
 * What the floor UI reports of its own failure (a screen its error boundary caught, an uncaught
 * error or rejection on the page): `POST /api/reportClientError`, public (the sign-in and first-run
 * screens can fail too). Not a SiteMethod: the transport that holds the session and the log answers
 * it (ui-server.ts), not the backend. The site logs it once under an id and answers the id
 * (`null`: over the rate, not logged but counted — core/site DESIGN.md, "Errors the floor UI
 * reports"). Strings are bounded by api-validate.ts `validateClientErrorReport`.
 */
export interface ClientErrorReport {
  /** `render`: an error boundary caught it; `error`, `rejection`: window 'error' / 'unhandledrejection'. */
  kind: 'render' | 'error' | 'rejection';
  message: string;
  /** The component stack (render) or the error's stack, trimmed by the UI (CLIENT_ERROR_STACK_MAX). */
  stack?: string;
  /** The screen shown (`inbox`, `stock`, `signIn`, `firstRun`, …). */
  screen?: string;
  /** The UI's language. */
  lang?: string;
  /** The UI's version, when it knows it. */
  version?: string;
}

/** The path segment of the client-error report (`POST /api/<it>`). */
export const CLIENT_ERROR_METHOD = 'reportClientError';
/** Longest `message` of a ClientErrorReport. */
export const CLIENT_ERROR_MESSAGE_MAX = 500;
/** Longest `stack` of a ClientErrorReport (the UI trims to it; the site refuses longer). */
export const CLIENT_ERROR_STACK_MAX = 4000;

/** Longest note kept with a dismissal of dead letters. */
export const DISMISS_NOTE_MAX = 500;

/** The methods in one list, for the preload bridge and the server's router. */
export const SITE_METHODS: readonly SiteMethod[] = [
  'firstRun', 'initSite', 'signIn', 'signOut', 'me', 'status', 'listProposals', 'getProposal', 'decide', 'workQueue', 'stock',
  'setReorderPolicy', 'configChanges', 'tables', 'tags', 'history', 'diff', 'syncStatus', 'deadLetters', 'deadLetterGroups', 'replayDeadLetters', 'dismissDeadLetters', 'users',
  'addUser', 'disableUser', 'enableUser', 'resetSecret', 'setRoles',
] as const;

/** Events pushed to the UI (WebSocket / IPC); the UI refetches what an event names. */
export type SiteEvent =
  | { type: 'status'; status: SiteStatus }
  | { type: 'proposals'; changed: string[] }
  | { type: 'tables'; tables: string[] }
  | { type: 'sync'; sync: SyncStatus }
  | { type: 'alarm'; alarm: Alarm };

export type ApiErrorKind = 'unauthenticated' | 'forbidden' | 'invalid' | 'not_found' | 'conflict' | 'internal';

/** An error as it crosses a transport. */
export interface ApiErrorBody {
  kind: ApiErrorKind;
  message: string;
  /**
   * On `unauthenticated` only: the backend signed the person out after this long (ms) without use
   * of the screen (`ui.idleSignOutMs`), so the sign-in screen can say why in the reader's language.
   */
  idleMs?: number;
  /**
   * On the refusals a floor user meets most (RefusalCode): what was refused, as data, so the floor
   * UI can say it in the reader's language. `message` stays the English text (logs, the CLI, older
   * UIs, and any code a UI does not know).
   */
  code?: RefusalCode;
  params?: Record<string, string | number>;
}

/**
 * The refusals that carry a `code` (ApiErrorBody), with their params:
 * - `signin.wrong` (left?: attempts before the lockout), `signin.locked` (untilMs),
 *   `signin.badgeUnknown` (left?), `signin.badgeLocked` (untilMs), `signin.disabled`;
 * - `pin.guessable` (pin, why: `repeated` | `sequence`) at addUser and resetSecret;
 * - `role.refused` (user, role, allowed: the roles that may, comma-separated) for any method;
 * - `proposal.notFound` (id), `proposal.notOpen` (id, status) at getProposal and decide;
 *   `proposal.decidedMeanwhile` (id, status, by) at decide: another lead recorded a decision
 *   (a deferral) while this one was being checked, which its maker has not seen;
 * - `user.exists` (name) at addUser, `user.selfDisable`, `user.selfDemote`;
 * - `session.required`: a call that needs a session came without one held (never signed in here,
 *   or the session ended: signed out, idle past its life, the site restarted) — ui-server.ts, and service.ts for a
 *   session context without a user (the Electron window after a sign-out);
 *   `signin.busy`: too many sign-ins from the client's address waiting (429);
 * - the site stopping (service.ts `stoppingError`, kind `conflict`): `site.stopping` a call that
 *   came once the stop had begun (the site answers none from then on), `site.stopped` a call in
 *   flight that outlived the stop's wait and failed on what the stop closed (what it had not
 *   committed is not kept);
 * - first run (first-run.ts): `site.notSetUp` (any method but firstRun and initSite),
 *   `site.alreadySetUp` (initSite again), and init.ts's refusals of the data directory:
 *   `init.exists`, `init.restoredOther` (site: the restored one), `init.otherSite` (sites: the
 *   ids whose tables the warehouse holds, comma-separated), `init.restoreNote` (unreadable), `init.restoreUnfinished` (a restore killed or failed midway: run it again),
 *   `init.adminExists` (admin: the admin an earlier init that stopped half-way added, the names
 *   joined by ', ' if it was several), for an init run again under another admin name;
 *   `init.configLost` (a directory without config.json whose site.db shows a site started there);
 * - `session.ended` (user, why: `disabled` | `locked` | `removed` (the user, since the sign-in),
 *   `secretReset` (their PIN or password reset since), `idle` (with idleMs, as ApiErrorBody's)):
 *   the backend ended the session at this call — service.ts `current`;
 * - the user store's refusals (core/inbox users.ts UserError) at addUser, resetSecret, setRoles,
 *   disableUser and enableUser: `user.nameInvalid` (name), `user.noSecret` (name),
 *   `user.roleInvalid` (role), `user.pinInvalid` (min, max: digits), `user.passwordLength` and
 *   `user.badgeLength` (min, max: characters), `user.badgeTaken`, `user.notFound` (name);
 * - at setReorderPolicy (config.json refused the change, config.ts ConfigError):
 *   `reorder.levels` (item, location?: absent for the item's own levels, reorderPoint, orderUpTo:
 *   order-up-to not above the reorder point), `config.refused` (key: the config.json key that does
 *   not validate, the file left as it was), `config.file` (config.json cannot be read as a config:
 *   missing, unreadable, not JSON, or JSON but not an object such as `[]` or `3`; left as it was);
 * - api-validate.ts's refusals of a request's shape at any method (kind `invalid`; `field`: the
 *   request's field as a path, `policy.reorderPoint`, `ids[2]`, '' for the request itself):
 *   `input.name` (field, max: characters) a user name the user store does not take (core/inbox
 *   nameProblem: too long, a slash, `..`, a control character, a space at either end; the
 *   sign-in, first-run and users forms send what was typed);
 *   `input.tooLong` (field, max: characters) a comment, search, PIN or password… too long;
 *   `input.range` (field, min, max) a number out of its range (a reorder point, a snapshot id, a
 *   time before 1970); `input.characters` (field, char: the first one as "U+202E") a bidi control
 *   (U+202A–202E, U+2066–2069) in a decision's comment or a dismissal's note — pasted with the
 *   text, as a form can send it; `input.refused` (field) any other, which no floor form sends (a missing or
 *   mistyped field, an unknown one, an unknown method (field `method`), a bad input age (field
 *   `inputAge`));
 * - ui-server.ts's refusals of a request as a whole, before api-validate.ts sees it:
 *   `request.tooLarge` (max: bytes) a body over its size limit (413; a long pasted comment is
 *   one), `request.refused` any other (a body that is no JSON, a method other than POST, a missing
 *   `X-Tilstand` header, a content type other than JSON, an Origin not the host's), which only a
 *   hand-made request meets.
 * The floor UI words each code it knows in every language, English included (renderer
 * i18n/messages.ts refusalText); a new code is additive: a UI that does not know it shows `message`.
 */
export const REFUSAL_CODES = [
  'signin.wrong', 'signin.locked', 'signin.badgeUnknown', 'signin.badgeLocked', 'signin.disabled', 'signin.busy',
  'pin.guessable', 'role.refused', 'proposal.notFound', 'proposal.notOpen', 'proposal.decidedMeanwhile',
  'user.exists', 'user.selfDisable', 'user.selfDemote',
  'session.required', 'site.notSetUp', 'site.alreadySetUp', 'site.stopping', 'site.stopped',
  'init.exists', 'init.restoredOther', 'init.otherSite', 'init.restoreNote', 'init.restoreUnfinished', 'init.adminExists', 'init.configLost',
  'session.ended',
  'user.nameInvalid', 'user.noSecret', 'user.roleInvalid', 'user.pinInvalid', 'user.passwordLength', 'user.badgeLength', 'user.badgeTaken', 'user.notFound',
  'reorder.levels', 'config.refused', 'config.file',
  'input.name', 'input.tooLong', 'input.range', 'input.refused', 'input.characters',
  'request.tooLarge', 'request.refused',
] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];

/** A refusal's code and params (ApiErrorBody). */
export interface Refusal {
  code: RefusalCode;
  params?: Record<string, string | number>;
}

/** core/inbox `guessablePin`'s reasons, as `pin.guessable`'s `why`. */
const GUESSABLE_WHY: Readonly<Record<string, string>> = { 'one digit repeated': 'repeated', 'digits in a row': 'sequence' };

/** The `pin.guessable` refusal for a guessable PIN; none for a reason the floor UI has no words for. */
export function guessablePinRefusal(pin: string, why: string): Refusal | undefined {
  const w = GUESSABLE_WHY[why];
  return w === undefined ? undefined : { code: 'pin.guessable', params: { pin, why: w } };
}

export type ApiResult<T> = { ok: true; value: T } | { ok: false; error: ApiErrorBody };

/** The interface both transports implement for the renderer. */
export type SiteApi = {
  [M in SiteMethod]: (req: SiteApiMethods[M]['req']) => Promise<SiteApiMethods[M]['res']>;
} & {
  subscribe(listener: (e: SiteEvent) => void): () => void;
};

/** Who is calling: one per browser session or Electron window; sign-in sets the user. */
export interface SessionContext {
  user: SessionUser | null;
  setUser(user: SessionUser | null): void;
  /**
   * Where the calls come from, as the transport knows it (never what a page says): the headless
   * server's client address (ui-server.ts `clientSource`; every loopback address is `loopback`),
   * `window` in the Electron shell. Unknown badges are counted per source (core/inbox
   * `signInWithBadge`): one source's bad badges do not stop another's. Absent: one shared count.
   */
  readonly source?: string;
  /**
   * The backend's own record: the signed-in user's `secretChangedMs` (core/inbox User) at sign-in.
   * A reset of their PIN or password since (the API's resetSecret, `tilstand users reset`) ends
   * the session.
   */
  secretChangedMs?: number | null;
  /**
   * The backend's own record: the signed-in user's `disabledAtMs` (core/inbox User) at sign-in. A
   * disable since ends the session for good, though the user was enabled again before it made a call.
   */
  disabledAtMs?: number | null;
  /**
   * The backend's own record (the transports leave it alone): when the person signed in here was
   * last known to use the screen, in the backend's clock (ms). Sign-in sets it; each call moves it
   * by what the call says (`InputAge`).
   */
  inputAtMs?: number;
  /**
   * The backend's own record: set when it signed this session's person out for want of use of the
   * screen (who, and the limit in ms), until a call has said so once or someone signs in here again.
   */
  signedOutIdle?: { user: string; idleMs: number };
}

/**
 * What a call says about the person at the screen, as the floor UI reports it with every call
 * (header `X-Tilstand-Input-Age`, or the IPC call's third argument): milliseconds since their last
 * touch, click, key or pointer movement on this page, or null when this page has seen none yet (it
 * was just opened or reloaded). Undefined: the caller is not the floor UI (a script on the HTTP
 * API), and the call itself counts as use.
 */
export type InputAge = number | null | undefined;

/** The HTTP header that carries a call's `InputAge` ('none' for null). */
export const INPUT_AGE_HEADER = 'x-tilstand-input-age';

/** The server side of the API, shared by the Electron main process and the headless server. */
export interface SiteBackend {
  call<M extends SiteMethod>(method: M, req: SiteApiMethods[M]['req'], session: SessionContext, input?: InputAge): Promise<SiteApiMethods[M]['res']>;
  subscribe(listener: (e: SiteEvent) => void): () => void;
  /**
   * Whether the session's user may still see the site: signed in, and not disabled, locked or
   * removed since. Events are pushed only to such sessions. Absent: `session.user !== null`.
   */
  signedIn?(session: SessionContext): boolean;
}

/** Errors a backend throws on purpose carry their kind across the boundary. */
export class SiteApiError extends Error {
  constructor(
    readonly kind: ApiErrorKind,
    message: string,
    /** See `ApiErrorBody.idleMs`. */
    readonly idleMs?: number,
    /** See `ApiErrorBody.code`. */
    readonly refusal?: Refusal,
  ) {
    super(message);
  }

  /** The error as it crosses a transport. */
  body(): ApiErrorBody {
    return {
      kind: this.kind,
      message: this.message,
      ...(this.idleMs !== undefined ? { idleMs: this.idleMs } : {}),
      ...(this.refusal ? { code: this.refusal.code, ...(this.refusal.params ? { params: this.refusal.params } : {}) } : {}),
    };
  }
}
