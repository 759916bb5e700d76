// Freshness budgets: how stale each table may look to its readers, and therefore how often it is
// committed. A table's budget names the decision it serves and who confirmed the figure.
//
// Rule (per table):
//   pending   events written to the table's writer but not yet committed (not visible);
//   held      events bound for the table waiting in the reorder buffer behind a missing seq, and,
//             once ingest has stopped on an error, events journaled for it and never applied:
//             received, not visible, and no commit can show them;
//   ageMs     now − receivedAt of the oldest pending or held event (0 when there is none): how far
//             the table is behind what the site has received;
//   due       pending > 0 and the oldest *pending* event ≥ budgetMs / 2 old. Committing at half
//             the budget leaves the other half for the commit itself and for the tick interval, so
//             a reader never sees the table older than its budget. Held events do not make a
//             table due (a commit cannot show them; counted, a gap of minutes committed every tick).
//   breach    ageMs > budgetMs observed (in tick, status or at commit); counted once per episode
//             (an episode ends when the table is seen within its budget again: at a commit that
//             leaves no held event over the budget, or when its held events are let go).
// Clocks: receive times, `nowMs` and ages are on a monotonic clock (the Ingestor's
// `monotonicClock`, performance.now on a site): measured on the wall clock, a step forward (NTP
// setting a PC's clock, a clock set by hand) aged every pending event by the step at once, counting
// breaches and committing early. Only `lastCommitMs` is a wall-clock time (epoch ms, shown).
//
// Concurrency: single-threaded; the clocks are passed in. No I/O.

export interface TableBudget {
  table: string;
  budgetMs: number;
  /** The decision this table's freshness serves (why the figure is what it is). */
  decision: string;
  /** Who confirmed the figure (a role or a name, and where). */
  confirmedBy: string;
}

/**
 * The budget of a config.json `tables` entry, without what else the entry says (the definition of
 * a table of the site's own: its columns, key, options), which a budget shown or kept must not carry.
 */
export function budgetOf(entry: TableBudget): TableBudget {
  return { table: entry.table, budgetMs: entry.budgetMs, decision: entry.decision, confirmedBy: entry.confirmedBy };
}

const UNCONFIRMED = 'default in core/ingest/freshness.ts (not yet confirmed by the site)';

export const DEFAULT_TABLE_BUDGETS: readonly TableBudget[] = [
  { table: 'approval_inbox', budgetMs: 2_000, decision: 'a shift lead approves or rejects a proposal on the floor PC', confirmedBy: UNCONFIRMED },
  { table: 'work_queue', budgetMs: 60_000, decision: 'the work-queue agent proposes the next job every minute', confirmedBy: UNCONFIRMED },
  { table: 'stock', budgetMs: 10 * 60_000, decision: 'material availability checked before a job is released', confirmedBy: UNCONFIRMED },
  { table: 'resources', budgetMs: 60_000, decision: 'the work-queue agent matches jobs to free resources every minute', confirmedBy: UNCONFIRMED },
  { table: 'dead_letters', budgetMs: 2_000, decision: 'an operator sees a refused event and fixes its contract or binding', confirmedBy: UNCONFIRMED },
];

/** Budgets for `tables`: the given one, else the default by name; throws for a table with neither. */
export function resolveBudgets(tables: readonly string[], given: readonly TableBudget[]): Map<string, TableBudget> {
  const out = new Map<string, TableBudget>();
  for (const b of given) {
    if (!Number.isSafeInteger(b.budgetMs) || b.budgetMs < 2) {
      throw new RangeError(`budget of table '${b.table}': budgetMs expected an integer ≥ 2 (ms), got ${b.budgetMs}`);
    }
    if (out.has(b.table)) throw new RangeError(`budget of table '${b.table}' is given twice`);
    out.set(b.table, { ...b });
  }
  for (const t of tables) {
    if (out.has(t)) continue;
    const d = DEFAULT_TABLE_BUDGETS.find((b) => b.table === t);
    if (!d) throw new RangeError(`table '${t}' has no freshness budget (give one in budgets: {table, budgetMs, decision, confirmedBy})`);
    out.set(t, { ...d });
  }
  return out;
}

export class Freshness {
  pendingEvents = 0;
  /** On the monotonic clock. */
  oldestPendingMs: number | null = null;
  /** Epoch ms (the wall clock): when the table last committed, as status shows it. */
  lastCommitMs: number | null;
  breaches = 0;
  commits = 0;
  private inBreach = false;
  /** Held events (position → receive time, monotonic): rare, so kept one by one. */
  private readonly held = new Map<bigint, number>();
  /** The oldest of `held`; undefined: to be found again (the oldest was let go). */
  private oldestHeld: number | null | undefined = null;
  /** Since ingest stopped: the oldest event journaled for the table and not applied (monotonic), or null. */
  private oldestUnappliedMs: number | null = null;

  constructor(
    readonly budget: TableBudget,
    lastCommitMs: number | null,
  ) {
    this.lastCommitMs = lastCommitMs;
  }

  /** One event's effect was written (not yet visible); `receivedAtMs` on the monotonic clock. */
  noteWrite(receivedAtMs: number): void {
    this.pendingEvents++;
    if (this.oldestPendingMs === null || receivedAtMs < this.oldestPendingMs) this.oldestPendingMs = receivedAtMs;
  }

  /** Events for this table held behind a gap in the reorder buffer. */
  get heldEvents(): number {
    return this.held.size;
  }

  /** An event for this table is held in the reorder buffer (journal `position`, `receivedAtMs` monotonic). */
  hold(position: bigint, receivedAtMs: number): void {
    this.held.set(position, receivedAtMs);
    if (this.oldestHeld === null || (this.oldestHeld !== undefined && receivedAtMs < this.oldestHeld)) this.oldestHeld = receivedAtMs;
  }

  /** The held event at `position` was released (then written: `noteWrite`) or dropped; unknown positions are ignored. */
  unhold(position: bigint): void {
    const at = this.held.get(position);
    if (at === undefined) return;
    this.held.delete(position);
    // Found again lazily, at the next age asked for: a run of held events is let go at once.
    if (this.held.size === 0) this.oldestHeld = null;
    else if (at === this.oldestHeld) this.oldestHeld = undefined;
  }

  /** Ingest stopped: an event for this table was journaled and will not be applied in this run. */
  noteUnapplied(receivedAtMs: number): void {
    if (this.oldestUnappliedMs === null || receivedAtMs < this.oldestUnappliedMs) this.oldestUnappliedMs = receivedAtMs;
  }

  ageMs(nowMs: number): number {
    const oldest = min(min(this.pendingSince(nowMs), this.heldSince(nowMs)), this.unappliedSince(nowMs));
    return oldest === null ? 0 : nowMs - oldest;
  }

  due(nowMs: number): boolean {
    return this.pendingEvents > 0 && nowMs - this.pendingSince(nowMs)! >= this.budget.budgetMs / 2;
  }

  /** Whether the table was last seen over its budget: a breach episode goes on. */
  get inBreachEpisode(): boolean {
    return this.inBreach;
  }

  /**
   * The stopped Ingestor this one replaces (a resume in place) last saw the table over its budget:
   * its episode goes on here, so a table still over its budget at the resume is not counted a
   * second breach for the same wait (its events held behind a gap, or journaled while stopped).
   */
  continueBreachEpisode(): void {
    this.inBreach = true;
  }

  /** Counts a breach when the oldest invisible event is older than the budget (once per episode). */
  observe(nowMs: number): void {
    const over = this.ageMs(nowMs) > this.budget.budgetMs;
    if (over && !this.inBreach) this.breaches++;
    this.inBreach = over;
  }

  /** The pending events became visible: `nowMs` on the monotonic clock, `wallMs` epoch ms. */
  committed(nowMs: number, wallMs: number): void {
    this.observe(nowMs);
    this.pendingEvents = 0;
    this.oldestPendingMs = null;
    this.lastCommitMs = wallMs;
    this.commits++;
    // Held events older than the budget keep the episode going: one breach per wait, not per
    // commit of the table's other streams meanwhile.
    this.observe(nowMs);
  }

  // A clock stepped back below a receive time (an injected wall clock standing in for the
  // monotonic one): the age counts from now on, or nothing would commit (and no breach show) until
  // the clock caught up.
  private pendingSince(nowMs: number): number | null {
    if (this.oldestPendingMs !== null && nowMs < this.oldestPendingMs) this.oldestPendingMs = nowMs;
    return this.oldestPendingMs;
  }

  private heldSince(nowMs: number): number | null {
    if (this.oldestHeld === undefined) {
      let oldest = Infinity;
      for (const at of this.held.values()) if (at < oldest) oldest = at;
      this.oldestHeld = oldest === Infinity ? null : oldest;
    }
    if (this.oldestHeld !== null && nowMs < this.oldestHeld) {
      for (const [p, at] of this.held) if (at > nowMs) this.held.set(p, nowMs);
      this.oldestHeld = nowMs;
    }
    return this.oldestHeld;
  }

  private unappliedSince(nowMs: number): number | null {
    if (this.oldestUnappliedMs !== null && nowMs < this.oldestUnappliedMs) this.oldestUnappliedMs = nowMs;
    return this.oldestUnappliedMs;
  }
}

/** The lower of two times, null being none. */
function min(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null || a <= b ? a : b;
}
