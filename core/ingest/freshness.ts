// Freshness budgets: how stale each table may look to its readers, and therefore how often it is
// committed. A table's budget names the decision it serves and who confirmed the figure.
//
// Rule (per table):
//   pending   events written to the table's writer but not yet committed (not visible);
//   ageMs     now − receivedAt of the oldest pending event (0 when nothing is pending);
//   due       pending > 0 and ageMs ≥ budgetMs / 2. Committing at half the budget leaves the
//             other half for the commit itself and for the tick interval, so a reader never sees
//             the table older than its budget. A table with nothing pending is never due.
//   breach    ageMs > budgetMs observed (in tick, status or at commit); counted once per episode
//             (an episode ends when the pending events are committed).
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

  ageMs(nowMs: number): number {
    // A clock stepped back below the oldest pending event's receive time (an injected wall clock
    // standing in for the monotonic one): its age counts from now on, or nothing would commit (and
    // no breach show) until the clock caught up.
    if (this.oldestPendingMs !== null && nowMs < this.oldestPendingMs) this.oldestPendingMs = nowMs;
    return this.oldestPendingMs === null ? 0 : nowMs - this.oldestPendingMs;
  }

  due(nowMs: number): boolean {
    return this.pendingEvents > 0 && this.ageMs(nowMs) >= this.budget.budgetMs / 2;
  }

  /** Counts a breach when the oldest invisible event is older than the budget (once per episode). */
  observe(nowMs: number): void {
    if (!this.inBreach && this.ageMs(nowMs) > this.budget.budgetMs) {
      this.inBreach = true;
      this.breaches++;
    }
  }

  /** The pending events became visible: `nowMs` on the monotonic clock, `wallMs` epoch ms. */
  committed(nowMs: number, wallMs: number): void {
    this.observe(nowMs);
    this.pendingEvents = 0;
    this.oldestPendingMs = null;
    this.lastCommitMs = wallMs;
    this.inBreach = false;
    this.commits++;
  }
}
