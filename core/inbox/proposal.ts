// What a proposal is, as the inbox stores and shows it. The agent side submits a `ProposalInput`
// (action, parameters, evidence, rule, risk, explanation); the decision side adds a `Decision`;
// the write-back side adds a `CommandProgress`. `statusOf` derives the one status a person sees.
//
// Invariants: a proposal's agent part never changes after submission except `agentStatus`
// (open → withdrawn) and its reason; a decision other than `deferred` is final; command progress
// moves pending → sent → acknowledged → applied, or ends in failed / timed_out (a late refusal or
// effect after timed_out still moves it on; a late first ok ack leaves it timed_out, "last state:
// acknowledged", its effect awaited).

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const PROPOSAL_STATUSES = ['open', 'deferred', 'approved', 'rejected', 'stale', 'withdrawn'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

export const RISK_LEVELS = ['low', 'medium', 'high'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

export const DECISIONS = ['approve', 'reject', 'defer'] as const;
export type DecisionVerb = (typeof DECISIONS)[number];
export type DecisionKind = 'approved' | 'rejected' | 'deferred' | 'stale';

export const COMMAND_STATES = ['pending', 'sent', 'acknowledged', 'applied', 'failed', 'timed_out'] as const;
export type CommandState = (typeof COMMAND_STATES)[number];

/** One row the agent read, in the JSON forms of core/lsm/types.ts. */
export interface EvidenceRow {
  readonly key: Record<string, Json>;
  readonly values: Record<string, Json>;
}

/** What the agent saw of one table: the snapshot, the tag that pins it, the rows that mattered. */
export interface EvidenceTable {
  readonly table: string;
  readonly snapshotId: number | null;
  /** `agent-<run id>`; null only when the table had no snapshot (nothing to pin). */
  readonly tag: string | null;
  readonly rows: readonly EvidenceRow[];
}

/**
 * A text as a message id and its parameters, for showing it in the reader's language: the agents'
 * rules keep a template per id and language (core/agents/messages.ts). A parameter may itself be
 * a message (a fragment such as "no reason given"). The stored English text stays the record;
 * the message is only how to say it otherwise.
 */
export type Message = { readonly id: string; readonly params: Readonly<Record<string, Json>> };

/** Whether a value (parsed JSON) has the shape of a Message. */
export function isMessage(v: unknown): v is Message {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const m = v as Message;
  return typeof m.id === 'string' && typeof m.params === 'object' && m.params !== null && !Array.isArray(m.params);
}

/**
 * The texts of a proposal the agent's rules wrote, as messages: the explanation and risk reason
 * (with the proposal), why it was withdrawn (a run's re-check) or why an approval found it stale
 * (the re-check at approval). Each is there when its text is.
 */
export type ProposalMessages = {
  readonly explanation?: Message;
  readonly riskReason?: Message;
  readonly withdrawnReason?: Message;
  readonly staleReason?: Message;
};
export const PROPOSAL_MESSAGE_KEYS = ['explanation', 'riskReason', 'withdrawnReason', 'staleReason'] as const;

export interface ProposalInput {
  /** Deduplication key: rule id + action + the key parameters (see `situationKey`). */
  readonly situationKey: string;
  readonly ruleId: string;
  readonly ruleVersion: string;
  readonly action: string;
  /** The module that carries the action out, or null for a notice (nothing is sent). */
  readonly module: string | null;
  readonly params: Readonly<Record<string, Json>>;
  readonly risk: RiskLevel;
  readonly riskReason: string;
  readonly explanation: string;
  /** Its texts as messages; absent on proposals stored before they were kept. */
  readonly messages?: ProposalMessages;
  readonly evidence: readonly EvidenceTable[];
  readonly runId: string;
}

export interface Decision {
  readonly kind: DecisionKind;
  /** The user's name; for `stale`, the user whose approval found the world moved. */
  readonly by: string;
  readonly role: string;
  readonly atMs: number;
  readonly comment: string | null;
  /** Snapshot ids: `seen` (what the person was shown), `checked` (latest, at the re-check). */
  readonly snapshots: { readonly seen: Record<string, number | null>; readonly checked: Record<string, number | null> };
  /** Why a decision became `stale`. */
  readonly reason: string | null;
}

export interface CommandProgress {
  readonly state: CommandState;
  readonly topic: string;
  readonly sentAtMs: number | null;
  readonly updatedAtMs: number;
  /** The ack's error, the module's result, or why it timed out. */
  readonly detail: string | null;
}

export interface Proposal extends ProposalInput {
  readonly id: string;
  readonly createdAtMs: number;
  readonly agentStatus: 'open' | 'withdrawn';
  readonly withdrawnReason: string | null;
  readonly agentUpdatedAtMs: number;
  readonly decision: Decision | null;
  readonly command: CommandProgress | null;
  readonly status: ProposalStatus;
}

/** The status a person sees. A final decision wins over a withdrawal; a withdrawal over a deferral. */
export function statusOf(p: Pick<Proposal, 'agentStatus' | 'decision'>): ProposalStatus {
  const d = p.decision?.kind;
  if (d === 'approved' || d === 'rejected' || d === 'stale') return d;
  if (p.agentStatus === 'withdrawn') return 'withdrawn';
  return d === 'deferred' ? 'deferred' : 'open';
}

/** Two texts with the numbers in them compared as numbers (`…-000-9` before `…-000-10`), a text that ends first first. */
function compareNumbered(a: string, b: string): number {
  const x = a.split(/(\d+)/);
  const y = b.split(/(\d+)/);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    let p = x[i]!;
    let q = y[i]!;
    if (p === q) continue;
    if (i % 2 === 1) {
      // Digits: without leading zeros, the longer is the larger.
      p = p.replace(/^0+/, '');
      q = q.replace(/^0+/, '');
      if (p.length !== q.length) return p.length - q.length;
    }
    if (p !== q) return p < q ? -1 : 1;
  }
  return x.length - y.length || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * Proposal ids (`P-<run id>-<n>`) in the order they were made: by run id, its numbers compared as
 * numbers (the agent's run ids increase: `…-080000-000`, `…-080000-000-2`, …), then by `n` — not
 * as strings, which put `…-10` before `…-2`.
 */
export function compareProposalIds(a: string, b: string): number {
  const x = a.slice(0, a.lastIndexOf('-'));
  const y = b.slice(0, b.lastIndexOf('-'));
  const run = x === y ? 0 : compareNumbered(x, y);
  const n = Number(a.slice(a.lastIndexOf('-') + 1)) - Number(b.slice(b.lastIndexOf('-') + 1));
  return run || (Number.isNaN(n) ? 0 : n) || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * The proposals in creation order, the oldest first: by `createdAtMs`, then one time's proposals
 * as `compareProposalIds` (keyed once per proposal: the agent asks for the open ones every second).
 * The order of the inbox's lists from memory (`openProposals`, `commandsInFlight`, …), live and
 * after a restart alike.
 */
export function inCreationOrder<T extends Pick<Proposal, 'createdAtMs' | 'id'>>(ps: readonly T[]): T[] {
  const keyed = ps.map((p) => {
    const i = p.id.lastIndexOf('-');
    return { p, run: p.id.slice(0, i), n: Number(p.id.slice(i + 1)) };
  });
  keyed.sort(
    (a, b) =>
      a.p.createdAtMs - b.p.createdAtMs || (a.run === b.run ? 0 : compareNumbered(a.run, b.run)) || a.n - b.n || 0 || (a.p.id < b.p.id ? -1 : a.p.id > b.p.id ? 1 : 0),
  );
  return keyed.map((k) => k.p);
}

/** Open or deferred: still waiting for a person, and still the agent's to withdraw. */
export const isActive = (p: Pick<Proposal, 'status'>): boolean => p.status === 'open' || p.status === 'deferred';

/** Command progress that can still change by itself (an ack or the effect may still come). */
export const commandInFlight = (c: CommandProgress | null): boolean => c !== null && (c.state === 'pending' || c.state === 'sent' || c.state === 'acknowledged');

/** Why write-back timed a command out (its `detail`): how long since it was sent, the state it was in. */
export const timedOutDetail = (sinceSentMs: number, lastState: CommandState): string =>
  `not applied ${Math.round(sinceSentMs / 1000)} s after it was sent (last state: ${lastState})`;

/** Why write-back gave up a command it could not send in time (its `detail`, state `failed`). */
export const notSentDetail = (windowMs: number, sinceApprovalMs: number): string =>
  `not sent within ${Math.round(windowMs / 1000)} s of the approval (${Math.round(sinceApprovalMs / 1000)} s ago): nothing was done; decide again if it still holds`;

/**
 * Write-back's own detail (`timedOutDetail`, `notSentDetail`) as a code and its numbers, for a UI to
 * word in its language (core/site api.ts `WriteBackWords`); null for any other text (what a module
 * said, a detail of another wording). Read back from the English, which stays the record: the
 * decision log and `command_detail` hold it, old entries and new alike, and nothing else is stored.
 */
export function writeBackWords(
  detail: string | null,
): { code: 'command.notApplied'; params: { seconds: number; lastState: string } } | { code: 'command.notSent'; params: { windowSeconds: number; agoSeconds: number } } | null {
  if (detail === null) return null;
  const a = /^not applied (-?\d+) s after it was sent \(last state: (\w+)\)$/.exec(detail);
  if (a) return { code: 'command.notApplied', params: { seconds: Number(a[1]), lastState: a[2]! } };
  const n = /^not sent within (-?\d+) s of the approval \((-?\d+) s ago\): nothing was done; decide again if it still holds$/.exec(detail);
  if (n) return { code: 'command.notSent', params: { windowSeconds: Number(n[1]), agoSeconds: Number(n[2]) } };
  return null;
}

/**
 * A command that timed out after the module acknowledged it: the module said it carried it out,
 * and its event is late. Read from the detail `timedOutDetail` wrote.
 */
export const timedOutAcknowledged = (c: CommandProgress | null): boolean =>
  c !== null && c.state === 'timed_out' && c.detail !== null && c.detail.endsWith(`(last state: acknowledged)`);

/**
 * The deduplication key of a situation: rule id, action and the key parameters, in a stable
 * text form (`assign-job|assign_job|job_id=J-1`). Two drafts with the same key are the same
 * situation, whatever their other parameters. An object value is written with its keys sorted
 * (`canonicalJson`): a site's rule file may build one in any property order; scalars key as ever.
 */
export function situationKey(ruleId: string, action: string, keyParams: Readonly<Record<string, Json>>): string {
  const parts = Object.keys(keyParams)
    .sort()
    .map((k) => `${k}=${canonicalJson(keyParams[k])}`); // sorted keys: an object value keys by content
  return [ruleId, action, ...parts].join('|');
}

/** Stable JSON (sorted keys) for comparing parameters. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, (x as Record<string, unknown>)[k]])) : x));
}

/**
 * The first `max` UTF-16 units of `s` as well-formed text: a character pair the cut would split is
 * left out, and a lone surrogate becomes U+FFFD. The tables refuse text that is not well-formed,
 * and some text the inbox stores comes from outside: a name typed at a refused decision, what a
 * module says in its ack.
 */
export function wellFormedPrefix(s: string, max: number): string {
  let cut = s.slice(0, max);
  if (/[\uD800-\uDBFF]$/.test(cut) && /^[\uDC00-\uDFFF]/.test(s.slice(max))) cut = cut.slice(0, -1);
  return cut.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}
