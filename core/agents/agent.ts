// The work-queue agent. One run:
//   1. reads the latest snapshot of each state table (work_queue, resources, stock) — one
//      snapshot per table for the whole run, pinned in this process while the run lasts;
//   2. runs every rule on read-only handles of those snapshots (a failing rule is reported and
//      its proposals are left alone this run);
//   3. re-checks the open and deferred proposals of the rules that ran; those that no longer hold
//      are withdrawn with the rule's reason (and, with `withdrawNotInstalled` — a site's agent —
//      those of a rule it does not run: "rule X is not installed any more");
//   4. turns drafts into proposals: situation key, evidence per table the rule read (snapshot id,
//      the tag `agent-<run id>`, the rows it cites in JSON form), rule id and version — all but a
//      draft whose situation has an open proposal that stays, a duplicate by its key alone;
//   5. tags each table's snapshot `agent-<run id>`: kept `evidenceRetentionMs` (7 days: time to
//      decide) when the run brings a situation that has no open proposal yet, else
//      `baselineRetentionMs` (a day: only the next run's change-reading rules need it). A
//      decision keeps its proposal's evidence for a year under its own tag (core/inbox,
//      `decision-<proposal id>`). Tags are made before the proposals that cite them are submitted;
//   6. submits proposals and withdrawals to the inbox (which deduplicates by situation key); the
//      run becomes the next run's diff base only then. A submit that throws with nothing of the
//      run in the inbox deletes the run's tags, so neither the next run nor a restart diffs from it.
// `recheck(p)` and `effectSeen(p)` read the latest snapshots the same way, for the inbox's
// compare-and-set and the write-back's "applied". Between runs, `recheckChanged()` (every
// `recheckIntervalMs`) withdraws within a second the proposals whose cited rows a commit changed
// and that no longer hold (DESIGN.md, "Between runs").
//
// Site tables: a rule may read tables of the site's own (`Rule.reads`, names among the Agent's
// `siteTables`); a run reads, pins, cites and tags them as it does the state tables, and the
// re-checks read their latest snapshot (DESIGN.md, "Site tables in a run").
//
// Concurrency: single-threaded; `run` is synchronous, so runs never overlap. The agent writes
// nothing but tags (the only thing it needs a Table, not a ReadOnlyTable, for) and proposals.
// Invariant: every proposal's evidence names a tag that exists when the proposal is stored.

import { isWellFormedString, LsmError, RENEW_MARGIN_MS, tagTimeLeftMs, valueToJson, type Catalog, type Table } from '../lsm/index.ts';
import { canonicalJson, RISK_LEVELS, situationKey, type EndedCommand, type EvidenceTable, type HeldBaselines, type Json, type Message, type Proposal, type ProposalInput, type RecheckOutcome, type SubmitResult } from '../inbox/index.ts';
import { agentConfig, type AgentConfig, type AgentConfigInput } from './config.ts';
import { AgentError } from './errors.ts';
import { messageCatalog, msg, renderMessage, tableList, type MessageTemplates } from './messages.ts';
import { readOnlyTable, type ReadOnlyTable, type ScanCache } from './read-only-table.ts';
import { STATE_TABLES, type Rule, type RuleContext, type StateTable } from './rule.ts';
import { DEFAULT_RULES } from './rules/index.ts';
import { inCreationOrder } from '../inbox/proposal.ts';

export const AGENT_TAG_PREFIX = 'agent-';

/** What the agent needs of the inbox. */
export interface AgentInbox {
  openProposals(): Proposal[];
  /** Approved proposals whose effect may still come (RuleContext.underway; core/inbox `commandsUnderway`). */
  commandsUnderway(): Proposal[];
  /**
   * Whether a proposal of this situation would be suppressed now (decided lately; RuleContext.quiet;
   * core/inbox `isQuiet`). An inbox without it suppresses nothing the rules are told of.
   */
  isQuiet?(situationKey: string): boolean;
  /**
   * The approval that alone keeps this situation quiet, when its command was applied (core/inbox
   * `appliedQuiet`): the agent asks its rule whether the situation began anew since
   * (`Rule.newOccurrence`), and if so passes it to `submit` (`newOccurrences`). An inbox without
   * it: every quiet lasts.
   */
  appliedQuiet?(situationKey: string): Proposal | undefined;
  /**
   * Whether the inbox holds a proposal of this run (core/inbox `hasRun`): a restart's test of
   * whether the newest run got as far as its submit. An inbox without it: every run did.
   */
  hasRun?(runId: string): boolean;
  /**
   * The baselines `holdBaselines` recorded (core/inbox `heldBaselines`), read at a restart's first
   * run. An inbox without the pair keeps none: a restart forgets them.
   */
  heldBaselines?(): HeldBaselines;
  /** Keeps the rules' held baselines (`failedBaselines`) across a restart; committed when it returns. */
  holdBaselines?(held: HeldBaselines): void;
  /**
   * The proposals of these rules withdrawn at or after `sinceMs` (core/inbox `withdrawnSince`),
   * read at a restart's first run: the withdrawals between runs the process before kept in memory
   * (`withdrawnBetween`). An inbox without it: a restart forgets them.
   */
  withdrawnSince?(sinceMs: number, ruleIds: readonly string[]): readonly Proposal[];
  /**
   * The commands that failed or timed out lately and have not moved on since (core/inbox
   * `endedCommands`), with `get` for their proposals: a run's RuleContext.failedCommands. An
   * inbox without the pair: none.
   */
  endedCommands?(): readonly EndedCommand[];
  get?(id: string): Proposal | undefined;
  /**
   * The decided proposals whose situation's quiet ended after `sinceMs` (core/inbox
   * `quietEndedSince`): a run's RuleContext.quietEnded. An inbox without it: none.
   */
  quietEndedSince?(sinceMs: number): readonly Proposal[];
  submit(batch: {
    runId: string;
    proposals: readonly ProposalInput[];
    withdrawals: readonly { id: string; reason: string; message?: Message }[];
    newOccurrences?: readonly { situationKey: string; after: string }[];
  }): SubmitResult;
}

export interface AgentOptions {
  catalog: Catalog;
  /** `site_<id>` */
  database: string;
  inbox: AgentInbox;
  rules?: readonly Rule[];
  config?: AgentConfigInput;
  clock?: () => number;
  /**
   * A monotonic clock in ms, for the inbox's age (`oldestUncheckedCommitMs`): a snapshot's time is
   * the wall clock's at the commit, and a step of the PC's clock (NTP, a clock set by hand) moved
   * the age by the step — a false budget breach forward, a stuck agent hidden back. Default, as
   * core/ingest's Ingestor: `clock` when only `clock` is given (a simulated clock stays
   * deterministic), else performance.now.
   */
  monotonicClock?: () => number;
  onWarning?: (message: string) => void;
  /**
   * The site's own tables (config.json `tables` entries with columns) a rule may name in
   * `Rule.reads`; a rule naming another is refused here (AgentError). Default: none.
   */
  siteTables?: readonly string[];
  /**
   * How often `start()`'s timer looks for commits between runs (`recheckChanged`: the state tables and the site tables the rules read);
   * 0: never. Default 1 000 ms: the inbox's freshness budget is seconds.
   */
  recheckIntervalMs?: number;
  /**
   * Each run withdraws the open and deferred proposals of a rule this Agent does not run (by id:
   * a new version of a rule is the same rule), "rule <id> is not installed any more (run …)":
   * a rule file taken out of config.json `agent.ruleFiles`, a rule renamed. Nobody would act on
   * them, and their run tags were renewed for as long as they stayed open. Only for a caller whose
   * `rules` are every rule it means to run — a site (core/site, whose start refuses a rule file
   * that fails to load, so a rule of a failed file is never taken for one taken out); not a
   * replay or a test that runs a subset, whose other rules' proposals stay as they are. Default
   * false.
   */
  withdrawNotInstalled?: boolean;
}

/** Default `recheckIntervalMs`. */
export const DEFAULT_RECHECK_INTERVAL_MS = 1_000;

/**
 * Changed keys read from one table's commits beyond which `recheckChanged` stops collecting them
 * and re-checks every open proposal citing the table (a bulk load, a module's resend).
 */
const MAX_CHANGED_KEYS = 20_000;

export interface RecheckChangedResult {
  /** The tables that committed since the last check: the state tables, and the site tables the rules read. */
  changed: string[];
  /** Proposals re-checked (those citing a row that changed). */
  checked: number;
  withdrawn: Proposal[];
}

export interface RunResult {
  runId: string;
  atMs: number;
  /** Per table read: the state tables, then the site tables the rules read (`Rule.reads`). */
  snapshots: Record<StateTable, number | null> & Record<string, number | null>;
  /** The tag made on each table (null: the table has no snapshot yet). */
  tags: Record<StateTable, string | null> & Record<string, string | null>;
  tagRetentionMs: number;
  drafts: number;
  created: Proposal[];
  duplicates: string[];
  suppressed: string[];
  withdrawn: Proposal[];
  ruleErrors: { ruleId: string; message: string }[];
  /** What the rules left out and why (`RuleContext.note`), in English; each also in the agent's log. */
  notes: { ruleId: string; message: string }[];
}

/** performance.now in whole ms: the default monotonic clock (module-level: it is called every second). */
function monotonicNow(): number {
  return Math.floor(performance.now());
}

/** `yyyyMMdd-HHmmss-SSS` in UTC: sortable, and usable in a tag name. */
export function runIdAt(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-11-30T08:00:00.000Z
  return `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}-${iso.slice(20, 23)}`;
}

/** The time a run id names (its time part, UTC), or undefined for a name of another form. */
function runIdMs(id: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-(\d{3})(?:-\d+)?$/.exec(id);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), Number(m[7])) : undefined;
}

/** A run id's time part and its number within that time (1 without a `-n` suffix). */
function runIdParts(id: string): { base: string; n: number } {
  const m = /^(\d{8}-\d{6}-\d{3})(?:-(\d+))?$/.exec(id);
  return m ? { base: m[1]!, n: m[2] === undefined ? 1 : Number(m[2]) } : { base: id, n: 1 };
}

/**
 * Orders run ids as runs happened: by time part, then by number (`…-000-10` after `…-000-9`,
 * which plain string order gets wrong).
 */
export function compareRunIds(a: string, b: string): number {
  const x = runIdParts(a);
  const y = runIdParts(b);
  return x.base < y.base ? -1 : x.base > y.base ? 1 : x.n - y.n;
}

export class Agent {
  private cfg: AgentConfig;
  readonly rules: readonly Rule[];
  /** The templates of the rules' messages and the shared fragments (messages.ts). */
  readonly messages: MessageTemplates;
  /** The rules by id: each run re-checks every open proposal (thousands late in a busy day). */
  private readonly ruleById = new Map<string, Rule>();
  private readonly o: AgentOptions;
  private readonly clock: () => number;
  private readonly monotonic: () => number;
  private readonly warn: (m: string) => void;
  /** The site tables the rules read (`Rule.reads`, `siteTablesRead`), in the rules' order. */
  private readonly siteNames: readonly string[];
  /** Every table a run reads and tags: the state tables, then `siteNames`. */
  private readonly tableNames: readonly string[];
  private readonly tables = new Map<string, Table>();
  /** Per table, the rows of the newest snapshot scanned: the next run reuses them while the table has not committed. */
  private readonly scans = new Map<string, ScanCache>();
  /**
   * Per table, the rows `recheckChanged` scanned, apart from the run's: a re-check between runs
   * must not move the run's cache off the snapshot its change-reading rules compare against. The
   * two share rows of the same snapshot instead of scanning it twice (`shareScan`).
   */
  private readonly recheckScans = new Map<string, ScanCache>();
  private previousTags: Partial<Record<string, string>> | undefined;
  /** Run tags open proposals cite, by `<table>/<tag>`: when to look at each again (keepCitedTags). */
  private citedTags = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private recheckTimer: NodeJS.Timeout | undefined;
  private readonly recheckIntervalMs: number;
  /**
   * Per state table, the snapshot the open proposals were last checked against: the latest a run
   * read, or the latest `recheckChanged` looked at. Commits after it are what the next check reads.
   */
  private readonly checkedThrough = new Map<string, number>();
  /**
   * Per state table, when (monotonic) a look last found no commit after `checkedThrough`: a run's or
   * check's read of the latest snapshot, or a look that found nothing new. A commit not yet checked
   * was made after it.
   */
  private readonly quietAtMono = new Map<string, number>();
  /**
   * Per state table, the first commit after `checkedThrough` = `from` as first seen: when it was
   * made, on the monotonic clock (`sightUnchecked`). Stale once `checkedThrough` moves.
   */
  private readonly uncheckedSince = new Map<string, { from: number; atMono: number }>();
  /** `citedKeys` per proposal object (the inbox makes a new object when a proposal changes). */
  private readonly cited = new WeakMap<Proposal, [string, string[]][]>();
  private lastRunId = '';
  /** When the last run handed its result to the inbox, on the monotonic clock (undefined: none yet; `sinceLastRunMs`). */
  private lastRunMono: number | undefined;
  /** The next run reads no baseline: every row counts as changed (`reevaluateAll`). */
  private everyRowNext = false;
  /**
   * Per rule that failed in the run that is now the baseline, the baseline it had then (null:
   * every row): its next run reads the changes from there, so what changed in the run it failed
   * is not lost to it (a `stock-reorder` that threw once would never propose the crossing it
   * missed). Dropped once the rule runs through. Also a rule with a draft the inbox would
   * suppress now (quiet): it reads from the same baseline until that draft can be proposed.
   */
  private failedBaselines = new Map<string, RuleContext['previousTags']>();
  /**
   * Per rule, the proposals withdrawn since the snapshots its baseline read — by `recheckChanged`,
   * or by a run while the rule was held on an older baseline (RuleContext.withdrawnBetweenRuns);
   * let go once a run is the rule's baseline. In memory only. The latest per situation: a rule held
   * for days (a quiet draft) sees a row go up and down many times, and each withdrawal of it kept
   * grew the list without bound, though the rule reads only which rows they name.
   */
  private readonly withdrawnBetween = new Map<string, Map<string, Proposal>>();
  /** The held baselines the inbox keeps for a restart (`recordHolds`); undefined until the first run reads them back. */
  private storedHolds: HeldBaselines | undefined;

  constructor(o: AgentOptions) {
    this.o = o;
    this.cfg = agentConfig(o.config);
    this.rules = o.rules ?? DEFAULT_RULES;
    this.messages = checkRuleSet(this.rules);
    for (const r of this.rules) this.ruleById.set(r.id, r);
    this.siteNames = siteTablesRead(this.rules, o.siteTables ?? []);
    this.tableNames = [...STATE_TABLES, ...this.siteNames];
    this.clock = o.clock ?? Date.now;
    this.monotonic = o.monotonicClock ?? o.clock ?? monotonicNow;
    this.warn = o.onWarning ?? ((m) => console.warn(`agent: ${m}`));
    this.recheckIntervalMs = o.recheckIntervalMs ?? DEFAULT_RECHECK_INTERVAL_MS;
    if (!Number.isSafeInteger(this.recheckIntervalMs) || this.recheckIntervalMs < 0) {
      throw new AgentError('InvalidArgument', `recheckIntervalMs: expected a whole number of milliseconds ≥ 0 (0: no re-checks between runs), got ${o.recheckIntervalMs}`);
    }
  }

  private table(name: string): Table {
    let t = this.tables.get(name);
    if (!t) {
      t = this.o.catalog.getTable({ database: this.o.database, table: name });
      this.tables.set(name, t);
    }
    return t;
  }

  /** Read-only handles on the latest snapshot of every state table. */
  private handles(): Record<StateTable, ReadOnlyTable> {
    const h = {} as Record<StateTable, ReadOnlyTable>;
    for (const name of STATE_TABLES) {
      let cache = this.scans.get(name);
      if (!cache) this.scans.set(name, (cache = {}));
      h[name] = readOnlyTable(this.table(name), name, undefined, cache);
      shareScan(cache, this.recheckScans.get(name));
    }
    return h;
  }

  /**
   * Read-only handles on the latest snapshot of every site table the rules read, through the
   * run's scan caches (`scans`) or, between runs, the re-checks' (`recheckScans`).
   */
  private siteHandles(caches = this.scans): Record<string, ReadOnlyTable> {
    const h: Record<string, ReadOnlyTable> = {};
    for (const name of this.siteNames) {
      let cache = caches.get(name);
      if (!cache) caches.set(name, (cache = {}));
      h[name] = readOnlyTable(this.table(name), name, undefined, cache);
      if (caches === this.recheckScans) {
        // A re-check compares no two snapshots: the scan left behind is not kept.
        cache.prevKey = cache.prevRows = cache.prevByKey = undefined;
        shareScan(cache, this.scans.get(name));
      } else shareScan(cache, this.recheckScans.get(name));
    }
    return h;
  }

  /**
   * The previous run's tags: remembered, or after a restart the newest `agent-*` tag per table —
   * unless that run was killed between its tags and its submit: tagged as a run that proposes
   * (evidenceRetentionMs) with no proposal of it in the inbox. Its changes were never proposed, so
   * the run before it is the previous run (else a stock row that fell below its reorder point in
   * that run was never proposed). A run whose proposals the inbox all dropped as duplicates or
   * suppressed looks the same; reading its changes again proposes nothing the inbox takes now.
   */
  private baseline(): Partial<Record<string, string>> | null {
    if (this.previousTags === undefined) {
      this.previousTags = {};
      const submitted = new Map<string, boolean>();
      for (const name of this.tableNames) {
        const tags = this.table(name).listTags().filter((t) => t.name.startsWith(AGENT_TAG_PREFIX));
        tags.sort((a, b) => compareRunIds(a.name.slice(AGENT_TAG_PREFIX.length), b.name.slice(AGENT_TAG_PREFIX.length)));
        let newest = tags.pop();
        if (newest && tags.length > 0 && newest.retainedMillis === this.cfg.evidenceRetentionMs && this.o.inbox.hasRun) {
          const runId = newest.name.slice(AGENT_TAG_PREFIX.length);
          if (!submitted.has(runId)) submitted.set(runId, this.o.inbox.hasRun(runId));
          if (!submitted.get(runId)) newest = tags.pop();
        }
        if (newest) this.previousTags[name] = newest.name;
      }
    }
    return this.existingTags(this.previousTags);
  }

  /** Those of a baseline's tags that still exist (null: none, or no baseline: every row is new). */
  private existingTags(tags: RuleContext['previousTags']): RuleContext['previousTags'] {
    if (tags === null) return null;
    const out: Partial<Record<string, string>> = {};
    for (const [name, tag] of Object.entries(tags) as [string, string][]) {
      if (this.table(name).tags.exists(tag)) out[name] = tag;
    }
    return Object.keys(out).length === 0 ? null : out;
  }

  /**
   * Whether the inbox would suppress the situation now, as the rules see it in `ctx`
   * (RuleContext.quiet): the inbox's `isQuiet`, except where the quiet is an approval whose command
   * was applied and its rule says the situation began anew since (`Rule.newOccurrence`); then
   * `after` names that approval, for `submit`'s `newOccurrences`. A rule whose check throws keeps
   * the quiet (a warning).
   */
  private quietIn(ctx: RuleContext, situationKey: string): { quiet: boolean; after?: string } {
    const inbox = this.o.inbox;
    if (!(inbox.isQuiet?.(situationKey) ?? false)) return { quiet: false };
    const p = inbox.appliedQuiet?.(situationKey);
    const rule = p === undefined ? undefined : this.ruleById.get(p.ruleId);
    if (p === undefined || rule?.newOccurrence === undefined) return { quiet: true };
    try {
      return rule.newOccurrence(ctx, p) ? { quiet: false, after: p.id } : { quiet: true };
    } catch (e) {
      this.warn(`rule ${rule.id}@${rule.version}: whether ${situationKey} began anew after ${p.id} failed: ${(e as Error).message}; it stays quiet`);
      return { quiet: true };
    }
  }

  /** A context's `quiet`, judged on that context's state (`quietIn`). */
  private withQuiet(make: (quiet: RuleContext['quiet']) => RuleContext): RuleContext {
    let ctx!: RuleContext;
    ctx = make((situationKey) => this.quietIn(ctx, situationKey).quiet);
    return ctx;
  }

  private context(
    runId: string,
    tables: Record<StateTable, ReadOnlyTable>,
    siteTables: Record<string, ReadOnlyTable>,
    previousTags: RuleContext['previousTags'],
    nowMs: number,
    open: readonly Proposal[] = this.o.inbox.openProposals(),
    withdrawnBetweenRuns: readonly Proposal[] = [],
    failedCommands: readonly Proposal[] = [],
    quietEnded: readonly Proposal[] = [],
  ): RuleContext {
    const underway = Object.freeze(this.o.inbox.commandsUnderway());
    return this.withQuiet((quiet) => Object.freeze({ nowMs, runId, tables: Object.freeze(tables), siteTables: Object.freeze(siteTables), previousTags, config: this.config, underway, open: Object.freeze(open), quiet, withdrawnBetweenRuns: Object.freeze(withdrawnBetweenRuns), failedCommands: Object.freeze(failedCommands), quietEnded: Object.freeze(quietEnded) }));
  }

  /**
   * RuleContext.quietEnded: the situations whose quiet ended since the earliest of the rules'
   * baselines — the time of that run (this process's clock at it; after a restart, its id's time).
   * Asked every run; the inbox answers from memory after its first read. Reading more than one
   * rule needs (a held rule's older baseline) only drafts again what is open or proposed anyway.
   */
  private quietEnded(baselineOf: (rule: Rule) => RuleContext['previousTags'], tag: string, nowMs: number): Proposal[] {
    const inbox = this.o.inbox;
    const used = new Set<string>();
    let since = Infinity;
    for (const rule of this.rules) {
      const tags = baselineOf(rule);
      if (tags === null) continue; // every row counts as changed: nothing to add
      for (const t of Object.values(tags) as string[]) {
        used.add(t);
        since = Math.min(since, this.runAtMs.get(t) ?? runIdMs(t.slice(AGENT_TAG_PREFIX.length)) ?? Infinity);
      }
    }
    // The next run's baselines are this run's tag or those used now (a held rule keeps its own).
    for (const t of [...this.runAtMs.keys()]) if (!used.has(t)) this.runAtMs.delete(t);
    this.runAtMs.set(tag, nowMs);
    if (inbox.quietEndedSince === undefined || !Number.isFinite(since)) return [];
    try {
      return [...inbox.quietEndedSince(since)];
    } catch (e) {
      this.warn(`reading the situations whose quiet ended failed: ${(e as Error).message}; a stock row still below its point may wait for its next change`);
      return [];
    }
  }

  /** Per run tag of this process, the clock's time at its run (`quietEnded`: a run id may be later after a clock stepped back). */
  private readonly runAtMs = new Map<string, number>();

  /** RuleContext.failedCommands: the approved proposals whose command the module refused (or that expired) lately. */
  private failedCommands(): Proposal[] {
    const inbox = this.o.inbox;
    if (inbox.endedCommands === undefined || inbox.get === undefined) return [];
    const out: Proposal[] = [];
    for (const c of inbox.endedCommands()) {
      if (c.state !== 'failed') continue;
      const p = inbox.get(c.id);
      if (p !== undefined && p.command?.state === 'failed') out.push(p);
    }
    return inCreationOrder(out);
  }

  /** A context that records which tables a rule reads (state tables and site tables). */
  private recording(ctx: RuleContext, note?: RuleContext['note']): { ctx: RuleContext; read: Set<string> } {
    const read = new Set<string>();
    const watch = <T extends string>(names: readonly T[], from: Readonly<Record<T, ReadOnlyTable>>): Record<T, ReadOnlyTable> => {
      const out = {} as Record<T, ReadOnlyTable>;
      for (const name of names) {
        Object.defineProperty(out, name, {
          enumerable: true,
          get: () => {
            read.add(name);
            return from[name];
          },
        });
      }
      return Object.freeze(out);
    };
    return { ctx: this.withQuiet((quiet) => Object.freeze({ ...ctx, tables: watch(STATE_TABLES, ctx.tables), siteTables: watch(this.siteNames, ctx.siteTables), quiet, ...(note ? { note } : {}) })), read };
  }

  /**
   * The next run id: the clock's time, numbered within its millisecond. Ids only increase: when
   * the clock stands still or steps back (an NTP correction; a restart after the clock was set
   * back), a run continues after the newest run — this process's, or at start the newest agent
   * tag's — so "the newest run" stays the largest id and no id is taken twice.
   */
  private nextRunId(nowMs: number): string {
    // Every table a run tags: a run tags only the tables that have a snapshot, and a site whose
    // work queue never committed (no operations module) had its run tags on stock alone — looked
    // up on work_queue, a restart with the clock behind took ids before the newest run's.
    if (this.lastRunId === '') this.lastRunId = newestRunTag(this.tableNames.flatMap((n) => this.table(n).listTags().map((t) => t.name)))?.slice(AGENT_TAG_PREFIX.length) ?? '';
    let base = runIdAt(nowMs);
    let n = 1;
    if (this.lastRunId !== '') {
      const last = runIdParts(this.lastRunId);
      if (base <= last.base) {
        base = last.base;
        n = last.n + 1;
      }
    }
    let id = n === 1 ? base : `${base}-${n}`;
    while (this.tableNames.some((name) => this.table(name).tags.exists(`${AGENT_TAG_PREFIX}${id}`))) id = `${base}-${++n}`;
    this.lastRunId = id;
    return id;
  }

  /**
   * How long ago the last run handed its result to the inbox (one with nothing new too; not the
   * checks between runs, which re-read only what commits changed), on the monotonic clock: a step
   * of the PC's clock neither ages a run just made nor hides an agent that stopped. Null: no run
   * since this Agent was made. The site's status says it (core/site `agentStatus`).
   */
  sinceLastRunMs(): number | null {
    return this.lastRunMono === undefined ? null : Math.max(0, this.monotonic() - this.lastRunMono);
  }

  /** One run now (see the file header). */
  run(): RunResult {
    const nowMs = this.clock();
    const runId = this.nextRunId(nowMs);
    const tag = `${AGENT_TAG_PREFIX}${runId}`;
    // Taken before the latest snapshots are read: a commit after them was made after this moment.
    const lookedMono = this.monotonic();
    const tables = this.handles();
    const siteTables = this.siteHandles();
    const all: Record<string, ReadOnlyTable> = { ...tables, ...siteTables };
    // The snapshots read are pinned for the run: no expiration in this process takes their files.
    const releases: (() => void)[] = [];
    for (const name of this.tableNames) {
      const id = all[name]!.snapshotId;
      const s = id === null ? undefined : this.table(name).snapshots.tryGet(id);
      if (s) releases.push(this.table(name).pinSnapshot(s));
    }
    try {
      this.restoreHolds();
      // A rule that reads only what changed since the previous run (stock-reorder) sees every row
      // once after the thresholds changed: a row already under a raised reorder point has not
      // crossed it and would otherwise never be proposed.
      // The flag stays until this run is the next one's baseline: a run whose submit fails with
      // nothing in the inbox leaves the baseline where it was, and its successor must read every
      // row again (else a row already under a raised reorder point is never proposed).
      const previous = this.everyRowNext ? null : this.baseline();
      // A rule that failed in the previous run reads from the baseline it had then.
      const baselineOf = (rule: Rule): RuleContext['previousTags'] => (previous !== null && this.failedBaselines.has(rule.id) ? this.existingTags(this.failedBaselines.get(rule.id)!) : previous);
      this.restoreWithdrawn(baselineOf);
      const ctx = this.context(runId, tables, siteTables, previous, nowMs, undefined, [...this.withdrawnBetween.values()].flatMap((m) => [...m.values()]), this.failedCommands(), this.quietEnded(baselineOf, tag, nowMs));
      const nextFailedBaselines = new Map<string, RuleContext['previousTags']>();
      const snapshots = Object.fromEntries(this.tableNames.map((n) => [n, all[n]!.snapshotId])) as RunResult['snapshots'];
      const tags = Object.fromEntries(this.tableNames.map((n) => [n, all[n]!.snapshotId === null ? null : tag])) as RunResult['tags'];
      const ruleErrors: RunResult['ruleErrors'] = [];
      const failed = (rule: Rule, e: unknown) => {
        ruleErrors.push({ ruleId: rule.id, message: (e as Error).message });
        this.warn(`rule ${rule.id}@${rule.version} failed in run ${runId}: ${(e as Error).message}`);
      };
      const evaluated: { rule: Rule; drafts: ReturnType<Rule['evaluate']>; read: Set<string>; ctx: RuleContext }[] = [];
      const notes: RunResult['notes'] = [];
      let drafts = 0;
      for (const rule of this.rules) {
        const own = baselineOf(rule);
        // A note in English, as the record is; one without an English template fails the rule as a draft's does.
        const note = (m: Message) => {
          const message = this.english(rule, m);
          notes.push({ ruleId: rule.id, message });
          this.warn(`rule ${rule.id}@${rule.version} in run ${runId}: ${message}`);
        };
        const ruleCtx = own === ctx.previousTags ? ctx : this.withQuiet((quiet) => Object.freeze({ ...ctx, previousTags: own, quiet }));
        const rec = this.recording(ruleCtx, note);
        try {
          const ds = rule.evaluate(rec.ctx);
          drafts += ds.length;
          evaluated.push({ rule, drafts: ds, read: rec.read, ctx: ruleCtx });
        } catch (e) {
          failed(rule, e);
          nextFailedBaselines.set(rule.id, own);
        }
      }
      const ran = new Set(evaluated.map((x) => x.rule.id));
      const withdrawals: { id: string; reason: string; message: Message; ruleId: string }[] = [];
      // The rules saw the same list (nothing changes the inbox while they evaluate).
      const open = ctx.open;
      for (const p of open) {
        const rule = this.ruleById.get(p.ruleId);
        if (!rule && this.o.withdrawNotInstalled === true) {
          // A rule no longer installed (AgentOptions.withdrawNotInstalled): nobody would act on it.
          const message = msg('recheck.withdrawn', { reason: msg('recheck.ruleGone', { rule: p.ruleId }), run: runId });
          withdrawals.push({ id: p.id, reason: renderMessage(message, this.messages, 'en')!, message, ruleId: p.ruleId });
          continue;
        }
        if (!rule || !ran.has(rule.id)) continue;
        try {
          const r = rule.recheck(ctx, p);
          if (!r.holds) {
            const message = msg('recheck.withdrawn', { reason: r.reason, run: runId });
            withdrawals.push({ id: p.id, reason: this.english(rule, message), message, ruleId: rule.id });
          }
        } catch (e) {
          this.warn(`recheck of ${p.id} by ${rule.id} failed: ${(e as Error).message}`);
        }
      }
      // A draft whose situation already has an open or deferred proposal that stays is a duplicate:
      // told apart by its key alone, before its texts and evidence are made (a run over a large
      // work queue finds most of its situations open already, minute after minute).
      const withdrawnIds = new Set(withdrawals.map((w) => w.id));
      const openKeys = new Set(open.filter((p) => !withdrawnIds.has(p.id)).map((p) => p.situationKey));
      const inputs: ProposalInput[] = [];
      const duplicates: string[] = [];
      // Drafts whose situation the inbox would suppress now (decided lately: RuleContext.quiet).
      const quietDrafts: string[] = [];
      // Situations quiet by an applied approval that their rule says began anew (Rule.newOccurrence).
      const newOccurrences: { situationKey: string; after: string }[] = [];
      const broken = new Set<string>();
      for (const { rule, drafts: ds, read, ctx: ruleCtx } of evaluated) {
        const ruleInputs: ProposalInput[] = [];
        const ruleDuplicates: string[] = [];
        const ruleQuiet: string[] = [];
        const ruleNew: { situationKey: string; after: string }[] = [];
        try {
          for (const d of ds) {
            const key = situationKey(rule.id, d.action, this.keyParams(rule, d));
            if (openKeys.has(key)) {
              ruleDuplicates.push(key);
              continue;
            }
            const q = this.quietIn(ruleCtx, key);
            if (q.quiet) ruleQuiet.push(key);
            else {
              ruleInputs.push(this.toInput(rule, d, key, read, all, tags, runId));
              if (q.after !== undefined) ruleNew.push({ situationKey: key, after: q.after });
            }
          }
          inputs.push(...ruleInputs);
          duplicates.push(...ruleDuplicates);
          quietDrafts.push(...ruleQuiet);
          newOccurrences.push(...ruleNew);
          // A quiet draft is not proposed, and a rule that drafts on what changed since its
          // baseline (stock-reorder: a row fallen below its point) would not draft it again: the
          // row stayed below its point, unproposed, for good. The rule reads from the same baseline
          // while it has one, so the draft comes again each run and is proposed once the quiet ends.
          if (ruleQuiet.length > 0) nextFailedBaselines.set(rule.id, baselineOf(rule));
        } catch (e) {
          // As a rule that failed to evaluate: none of its drafts is proposed (not those before
          // the one that failed either), and its proposals are not withdrawn.
          broken.add(rule.id);
          failed(rule, e);
          nextFailedBaselines.set(rule.id, baselineOf(rule));
        }
      }
      const kept = withdrawals.filter((w) => !broken.has(w.ruleId)).map(({ ruleId: _, ...w }) => w);
      // Kept before the tags: a restart whose baseline is this run's tags (a kill before the
      // submit; a submit that wrote nothing is the same) holds what this run holds. What was held
      // before stays held until the submit: a rule this run lets go has its drafts in it.
      this.recordHolds({ ...Object.fromEntries(nextFailedBaselines), ...this.storedHolds });
      const fresh = inputs.length > 0;
      const tagRetentionMs = fresh ? this.config.evidenceRetentionMs : this.config.baselineRetentionMs;
      for (const name of this.tableNames) {
        const id = all[name]!.snapshotId;
        if (id !== null) this.table(name).createTag(tag, id, tagRetentionMs);
      }
      let submitted: SubmitResult;
      try {
        submitted = this.o.inbox.submit({ runId, proposals: inputs, withdrawals: kept, ...(newOccurrences.length > 0 ? { newOccurrences } : {}) });
      } catch (e) {
        // Nothing of this run reached the inbox: its tags go and the diff base stays, so the next
        // run — or a restart, from the newest agent-* tag — reads these changes again, and a
        // situation first seen now is proposed then. Proposals the inbox holds keep their tag.
        if (!this.o.inbox.openProposals().some((p) => p.runId === runId)) this.dropRunTag(tag, all);
        else {
          this.previousTags = Object.fromEntries(this.tableNames.filter((n) => tags[n] !== null).map((n) => [n, tag]));
          this.everyRowNext = false;
          this.failedBaselines = nextFailedBaselines;
          // Whether the inbox took the withdrawals is not known: one it did not is still open, and
          // a draft of it a duplicate.
          this.letGoWithdrawn(nextFailedBaselines, open.filter((p) => kept.some((w) => w.id === p.id)));
          this.settleHolds();
        }
        throw e;
      }
      this.previousTags = Object.fromEntries(this.tableNames.filter((n) => tags[n] !== null).map((n) => [n, tag]));
      this.everyRowNext = false;
      this.failedBaselines = nextFailedBaselines;
      this.letGoWithdrawn(nextFailedBaselines, submitted.withdrawn);
      this.settleHolds();
      // Said in the log once per rule: they are gone from the inbox after this run.
      const notInstalled = new Map<string, number>();
      for (const p of submitted.withdrawn) if (!this.ruleById.has(p.ruleId)) notInstalled.set(p.ruleId, (notInstalled.get(p.ruleId) ?? 0) + 1);
      for (const [ruleId, n] of notInstalled) this.warn(`run ${runId} withdrew ${n} open proposal${n === 1 ? '' : 's'} of rule ${ruleId}, which is not installed any more (not among the rules this site runs)`);
      this.lastRunMono = this.monotonic();
      for (const name of this.tableNames) {
        const id = all[name]!.snapshotId;
        if (id !== null) this.checked(name, id, lookedMono);
      }
      const keptIds = new Set(kept.map((w) => w.id));
      this.keepCitedTags(open.filter((p) => !keptIds.has(p.id)), nowMs);
      return { runId, atMs: nowMs, snapshots, tags, tagRetentionMs, drafts, ...submitted, duplicates: [...duplicates, ...submitted.duplicates], suppressed: [...quietDrafts, ...submitted.suppressed], ruleErrors, notes };
    } finally {
      for (const release of releases) release();
    }
  }

  /**
   * At the first run of this Agent: the baselines an earlier process held its rules on (read back
   * from the inbox), so a restart inside a quiet window, or after a rule failed, does not take the
   * newest run tag for them and lose the changes they have not proposed yet.
   */
  private restoreHolds(): void {
    if (this.storedHolds !== undefined) return;
    this.storedHolds = this.o.inbox.heldBaselines?.() ?? {};
    for (const [ruleId, tags] of Object.entries(this.storedHolds)) {
      if (this.failedBaselines.has(ruleId)) continue;
      // Read back as JSON the inbox does not look into: an entry of another shape (its string's
      // characters taken for table names) would make every run throw. Without it the rule reads
      // from the newest run, as before there was a record; the next settled run writes it away.
      if (isHeldBaseline(tags)) this.failedBaselines.set(ruleId, this.tablesInCatalog(ruleId, tags));
      else this.warn(`the held baseline of rule ${ruleId} is not a table → tag object or null (${JSON.stringify(tags)}); the rule reads from the newest run`);
    }
  }

  /**
   * At the first run of this Agent: the proposals withdrawn since each rule's baseline (its tags'
   * creation, the earliest), read back from the inbox (`withdrawnSince`) — what the checks between
   * runs withdrew before a restart, which `withdrawnBetween` held in memory only: a stock row that
   * recovered (its proposal withdrawn) and fell below its point again before the restart was seen
   * by no run as a crossing and stayed below, unproposed (withdrawn-restart.test.ts). Those the
   * baseline run withdrew itself come back too: reading them again drafts a row only when it is
   * below its point now, which after that run is a crossing its changes show anyway.
   */
  private restoreWithdrawn(baselineOf: (rule: Rule) => RuleContext['previousTags']): void {
    if (this.withdrawnRestored) return;
    this.withdrawnRestored = true;
    if (!this.o.inbox.withdrawnSince) return;
    const since = new Map<string, number>();
    try {
      for (const rule of this.rules) {
        const tags = baselineOf(rule);
        if (tags === null) continue; // every row counts as changed: nothing to add
        let at = Infinity;
        for (const [name, tag] of Object.entries(tags) as [string, string][]) {
          const created = this.table(name).tags.get(tag).createTimeMillis;
          if (created !== undefined) at = Math.min(at, created);
        }
        if (Number.isFinite(at)) since.set(rule.id, at);
      }
      if (since.size === 0) return;
      for (const p of this.o.inbox.withdrawnSince(Math.min(...since.values()), [...since.keys()])) {
        if (p.agentUpdatedAtMs >= since.get(p.ruleId)!) this.noteWithdrawn(p);
      }
    } catch (e) {
      this.warn(`reading the proposals withdrawn before the restart failed: ${(e as Error).message}; a row that fell below again since may wait for its next change`);
    }
  }

  /** The withdrawals before this Agent was made have been read back (`restoreWithdrawn`). */
  private withdrawnRestored = false;

  /**
   * A held baseline without the tables the catalog no longer has (a site table taken out of
   * config.json and dropped): looking up its tag there made every run throw. The rule keeps its
   * hold on the other tables; the next settled run writes the record without the dropped ones.
   */
  private tablesInCatalog(ruleId: string, tags: RuleContext['previousTags']): RuleContext['previousTags'] {
    if (tags === null) return null;
    const out: Partial<Record<string, string>> = {};
    for (const [table, tag] of Object.entries(tags)) {
      if (this.o.catalog.tableExists({ database: this.o.database, table })) out[table] = tag;
      else this.warn(`rule ${ruleId}'s held baseline names table ${table}, which the site no longer has; its hold on that table is dropped`);
    }
    return out;
  }

  /**
   * Once a run is the baseline: the between-runs withdrawals it showed its rules are behind them,
   * except a held rule's (it reads from its old baseline again, and they came after that). A held
   * rule's proposals this run withdrew join them: its next run compares with that older baseline
   * too, where a row that recovered in this run and falls again later was below as well.
   */
  private letGoWithdrawn(held: ReadonlyMap<string, unknown>, runWithdrawn: readonly Proposal[]): void {
    for (const ruleId of [...this.withdrawnBetween.keys()]) if (!held.has(ruleId)) this.withdrawnBetween.delete(ruleId);
    for (const p of runWithdrawn) if (held.has(p.ruleId)) this.noteWithdrawn(p);
  }

  /** Keeps a withdrawn proposal for its rule's next run (RuleContext.withdrawnBetweenRuns). */
  private noteWithdrawn(p: Proposal): void {
    let bySituation = this.withdrawnBetween.get(p.ruleId);
    if (!bySituation) this.withdrawnBetween.set(p.ruleId, (bySituation = new Map()));
    bySituation.delete(p.situationKey); // re-inserted: the latest withdrawal last
    bySituation.set(p.situationKey, p);
  }

  /** Has the inbox keep `held` for a restart (committed when it returns); nothing when unchanged. */
  private recordHolds(held: HeldBaselines): void {
    if (canonicalJson(held) === canonicalJson(this.storedHolds)) return;
    this.o.inbox.holdBaselines?.(held);
    this.storedHolds = held;
  }

  /**
   * Once a run is the baseline: the inbox keeps exactly its holds (those it let go, it proposed
   * from). A failure only warns: the holds kept are older baselines, and a rule read from one
   * drafts again what it proposed since — duplicates, or suppressed.
   */
  private settleHolds(): void {
    try {
      this.recordHolds(Object.fromEntries(this.failedBaselines));
    } catch (e) {
      this.warn(`the rules' held baselines were not updated: ${(e as Error).message}`);
    }
  }

  /** Deletes a run's tag from the tables it was made on (a run whose submit failed); a failure only warns. */
  private dropRunTag(tag: string, tables: Record<string, ReadOnlyTable>): void {
    for (const name of this.tableNames) {
      if (tables[name]!.snapshotId === null) continue;
      try {
        this.table(name).deleteTag(tag);
      } catch (e) {
        this.warn(`tag ${tag} of a run whose submit failed stays on ${name}: ${(e as Error).message}`);
      }
    }
  }

  /**
   * Keeps the run tags that open proposals cite while they wait for a person: a tag is renewed
   * (its retention restarted, core/lsm `renewTag`) once half its retention has passed (or, for a
   * short retention, two runs before core/lsm's renewal margin would refuse it), so a
   * proposal left undecided longer than `evidenceRetentionMs` still has its whole snapshot when
   * someone decides (the decision then tags it for a year, core/inbox). Deferred proposals too:
   * the tag their deferral made lasts `decisionEvidenceRetentionMs`, which may be shorter than
   * the wait (down to an hour), and the approval after it tags the evidence from the run tag.
   * Each tag is looked at again only when it is due (`citedTags`); one
   * that cannot be kept (expired while the site was off) is reported once.
   */
  private keepCitedTags(open: readonly Proposal[], nowMs: number): void {
    const seen = new Map<string, number>();
    for (const p of open) {
      for (const e of p.evidence) {
        if (e.tag === null || !e.tag.startsWith(AGENT_TAG_PREFIX) || !this.tableNames.includes(e.table)) continue;
        const key = `${e.table}/${e.tag}`;
        if (seen.has(key)) continue;
        const due = this.citedTags.get(key);
        if (due !== undefined && due > nowMs) {
          seen.set(key, due);
          continue;
        }
        const table = this.table(e.table);
        try {
          const tag = table.tags.get(e.tag);
          const left = tagTimeLeftMs(tag, nowMs);
          if (left === undefined) {
            seen.set(key, Infinity);
            continue;
          }
          // Renewed once half the retention has passed, but never later than two runs before
          // less than RENEW_MARGIN_MS is left (core/lsm refuses a renewal then): with a
          // retention under about two hours, half of it was already inside the margin, every
          // renewal was refused and the evidence of open proposals expired.
          const renewBelow = Math.max(tag.retainedMillis! / 2, RENEW_MARGIN_MS + 2 * this.cfg.intervalMs);
          if (left < renewBelow) {
            table.renewTag(e.tag);
            const renewed = tagTimeLeftMs(table.tags.get(e.tag), nowMs) ?? 0;
            seen.set(key, nowMs + Math.max(0, renewed - renewBelow));
          } else seen.set(key, nowMs + left - renewBelow);
        } catch (err) {
          seen.set(key, Infinity);
          this.warn(`the evidence of ${p.id} (tag ${e.tag} on ${e.table}) is not kept beyond its retention: ${(err as Error).message}`);
        }
      }
    }
    this.citedTags = seen;
  }

  /** The parameters that name a draft's situation; one not among its parameters is the rule's error. */
  private keyParams(rule: Rule, d: ReturnType<Rule['evaluate']>[number]): Record<string, Json> {
    const keyParams: Record<string, Json> = {};
    for (const k of d.keyParams) {
      if (!(k in d.params)) throw new AgentError('InvalidArgument', `rule ${rule.id}: key parameter '${k}' is not among the parameters`);
      keyParams[k] = d.params[k]!;
    }
    return keyParams;
  }

  private toInput(rule: Rule, d: ReturnType<Rule['evaluate']>[number], key: string, read: Set<string>, tables: Record<string, ReadOnlyTable>, tags: Record<string, string | null>, runId: string): ProposalInput {
    const cited = new Set<string>([...read, ...d.evidence.map((e) => e.table)]);
    // A table the run did not read (neither a state table nor a site table a rule reads) has no
    // snapshot or tag to cite: the rule's error, said, rather than a proposal without the rows it names.
    for (const e of d.evidence) {
      if (!this.tableNames.includes(e.table)) throw new AgentError('InvalidArgument', `rule ${rule.id}: evidence cites table '${e.table}', which is neither a state table (${STATE_TABLES.join(', ')}) nor a site table a rule reads (Rule.reads${this.siteNames.length > 0 ? `: ${this.siteNames.join(', ')}` : ''})`);
    }
    checkText(rule, 'action', d.action);
    if (d.module !== null) checkText(rule, 'module', d.module);
    // A rule file is JavaScript run without a type check: a level the inbox does not know ('High',
    // 'critical', none) was stored as drafted, and the floor UI sorted the inbox by it as NaN.
    if (!(RISK_LEVELS as readonly unknown[]).includes(d.risk)) throw new AgentError('InvalidArgument', `rule ${rule.id}: risk: expected one of ${RISK_LEVELS.join(', ')}, got ${JSON.stringify(d.risk) ?? 'undefined'}`);
    const evidence: EvidenceTable[] = this.tableNames.filter((n) => cited.has(n)).map((n) => ({
      table: n,
      snapshotId: tables[n]!.snapshotId,
      tag: tags[n]!,
      rows: d.evidence.filter((e) => e.table === n).flatMap((e) => e.rows.map((r) => ({ key: tables[n]!.keyOf(r), values: { ...r } }))),
    }));
    return {
      situationKey: key,
      ruleId: rule.id,
      ruleVersion: rule.version,
      action: d.action,
      module: d.module,
      params: d.params,
      risk: d.risk,
      riskReason: this.english(rule, d.riskReason),
      explanation: this.english(rule, d.explanation),
      messages: { explanation: d.explanation, riskReason: d.riskReason },
      evidence,
      runId,
    };
  }

  /** A draft's message as the stored English text; a message without a template is the rule's error. */
  private english(rule: Rule, m: Message): string {
    const text = renderMessage(m, this.messages, 'en');
    if (text === undefined) throw new AgentError('InvalidArgument', `rule ${rule.id}: message '${m.id}' has no English template, or lacks one of its parameters (${JSON.stringify(m.params)})`);
    checkText(rule, `message '${m.id}'`, text);
    return text;
  }

  /** Does the proposal's precondition still hold in the latest snapshots? (the inbox's compare-and-set) */
  recheck(p: Proposal): RecheckOutcome {
    const tables = this.handles();
    const siteTables = this.siteHandles();
    // Every table read: the inbox tags each `checked-<proposal id>` (the site tables too).
    const snapshots = Object.fromEntries([...Object.entries(tables), ...Object.entries(siteTables)].map(([n, t]) => [n, t.snapshotId]));
    const rule = this.ruleById.get(p.ruleId);
    if (!rule) {
      const message = msg('recheck.ruleGone', { rule: p.ruleId });
      return { holds: false, reason: renderMessage(message, this.messages, 'en')!, message, snapshots };
    }
    const r = rule.recheck(this.context('recheck', tables, siteTables, null, this.clock()), p);
    return r.holds ? { holds: true, snapshots } : { holds: false, reason: this.english(rule, r.reason), message: r.reason, snapshots };
  }

  /**
   * Between runs: re-checks the open and deferred proposals that cite a row a state table's (or a
   * read site table's) commits changed since the last check (a run, or this), and withdraws those that no longer
   * hold, as a run's step 3 would a minute later. The inbox is what a person waits in, so it is
   * kept current to the second: a job a module started, a resource gone down, is not left on offer
   * until the next run. A proposal that depends on a row it does not cite is left to the run.
   *
   * Cost: one read of the hint per table; for a table that committed, its commits' added files
   * (`changes`, mode delta) and a lookup per cited row that changed. A table whose commits can no
   * longer be read one by one (expired) or changed more than `MAX_CHANGED_KEYS` keys gets every
   * citing proposal re-checked. Reads use handles of their own, so the run's scan caches stay at
   * the snapshots its change-reading rules compare against.
   */
  recheckChanged(): RecheckChangedResult {
    const changed: string[] = [];
    const keys = new Map<string, Set<string> | 'all'>();
    const latest = new Map<string, number>();
    const lookedMono = this.monotonic();
    for (const name of this.tableNames) {
      const table = this.table(name);
      const id = table.snapshots.latestId();
      if (id === undefined) continue;
      const from = this.checkedThrough.get(name);
      latest.set(name, id);
      if (from === undefined || from >= id) {
        // Nothing checked against this table yet (the first run does), or nothing new.
        this.checked(name, from === undefined ? id : from, lookedMono);
        continue;
      }
      // Seen now, should this check fail: the inbox's age then counts from the commit.
      this.sightUnchecked(name, from, id, lookedMono);
      changed.push(name);
      keys.set(name, changedKeys(table, from, id));
    }
    if (changed.length === 0) return { changed, checked: 0, withdrawn: [] };
    const nowMs = this.clock();
    const candidates: { p: Proposal; rule: Rule; tables: string[] }[] = [];
    const open = this.o.inbox.openProposals();
    for (const p of open) {
      const rule = this.ruleById.get(p.ruleId);
      if (!rule) continue; // a site's next run withdraws it (withdrawNotInstalled); the compare-and-set refuses it
      const hit: string[] = [];
      for (const [table, cited] of this.citedKeys(p)) {
        const k = keys.get(table);
        if (k !== undefined && (k === 'all' || cited.some((c) => k.has(c)))) hit.push(table);
      }
      if (hit.length > 0) candidates.push({ p, rule, tables: hit });
    }
    const withdrawals: { id: string; reason: string; message: Message }[] = [];
    if (candidates.length > 0) {
      const handles = {} as Record<StateTable, ReadOnlyTable>;
      for (const name of STATE_TABLES) {
        let cache = this.recheckScans.get(name);
        if (!cache) this.recheckScans.set(name, (cache = {}));
        handles[name] = readOnlyTable(this.table(name), name, latest.get(name), cache);
        // A re-check compares no two snapshots: the scan left behind is not kept.
        cache.prevKey = cache.prevRows = cache.prevByKey = undefined;
        shareScan(cache, this.scans.get(name));
      }
      // The site tables the rules read: at their latest snapshot, as the state tables.
      const ctx = this.context('recheck', handles, this.siteHandles(this.recheckScans), null, nowMs, open);
      for (const { p, rule, tables } of candidates) {
        try {
          const r = rule.recheck(ctx, p);
          if (!r.holds) {
            const message = msg('recheck.withdrawnChanged', { reason: r.reason, tables: tableList(tables) });
            withdrawals.push({ id: p.id, reason: this.english(rule, message), message });
          }
        } catch (e) {
          this.warn(`recheck of ${p.id} by ${rule.id} failed: ${(e as Error).message}`);
        }
      }
    }
    const submitted = withdrawals.length > 0 ? this.o.inbox.submit({ runId: `recheck-${runIdAt(nowMs)}`, proposals: [], withdrawals }) : undefined;
    // The next run's change-reading rules compare with a baseline from before these withdrawals:
    // a row that recovered here and fell back before the run looks unchanged to them.
    for (const p of submitted?.withdrawn ?? []) this.noteWithdrawn(p);
    for (const name of changed) this.checked(name, latest.get(name)!, lookedMono);
    return { changed, checked: candidates.length, withdrawn: submitted?.withdrawn ?? [] };
  }

  /** Whether `start()`'s timers run: runs every interval and, with a `recheckIntervalMs`, the checks between them. */
  get keepsInboxCurrent(): boolean {
    return this.timer !== undefined && this.recheckTimer !== undefined;
  }

  /**
   * The time (epoch ms, as the wall clock reads now) of the oldest commit (to a state table, or a site table the rules read) the open
   * proposals have not been checked against — by a run or `recheckChanged` —, or null when there is
   * none: the inbox's age is now minus this, how long it may have offered a proposal the state had
   * overtaken. A table no check has looked at yet (no run since start) does not count.
   *
   * Measured on the monotonic clock from the moment the agent first sees the commit
   * (`sightUnchecked`) and given as the wall clock reads now, as core/ingest's `streamActivity`
   * gives a stream's newest event: now − this is the true age across a step of the PC's clock
   * (the snapshot's own time is the wall clock's at the commit: a step forward made the inbox look
   * late, one back hid a stuck agent for the size of the step). Called every second: a read of the
   * latest snapshot id per table, and one snapshot read per commit first seen.
   */
  oldestUncheckedCommitMs(): number | null {
    const monoNow = this.monotonic();
    let oldest: number | null = null;
    for (const name of this.tableNames) {
      const from = this.checkedThrough.get(name);
      if (from === undefined) continue;
      const latest = this.table(name).snapshots.latestId();
      if (latest === undefined || latest <= from) {
        this.checked(name, from, monoNow);
        continue;
      }
      const at = this.sightUnchecked(name, from, latest, monoNow);
      if (oldest === null || at < oldest) oldest = at;
    }
    return oldest === null ? null : this.clock() - (monoNow - oldest);
  }

  /** `name` is checked through snapshot `id`, read (or found with nothing after it) at `atMono`. */
  private checked(name: string, id: number, atMono: number): void {
    this.checkedThrough.set(name, id);
    this.quietAtMono.set(name, atMono);
    // What was seen after the old mark is checked now (or, found quiet, there is nothing after it).
    this.uncheckedSince.delete(name);
  }

  /**
   * When (monotonic) the first commit after `from` was made, estimated once, when first seen: then
   * by its snapshot's wall-clock age, bounded by the last look that found the table quiet (the
   * commit came after it), so a step of the wall clock between the commit and this sight moves the
   * estimate by at most the time between two looks (a second while the checks run); a step after
   * it moves nothing.
   */
  private sightUnchecked(name: string, from: number, latest: number, monoNow: number): number {
    const seen = this.uncheckedSince.get(name);
    if (seen !== undefined && seen.from === from) return seen.atMono;
    const snapshots = this.table(name).snapshots;
    // The first commit after the check; expired already, the oldest one left is younger than it.
    const s = snapshots.tryGet(from + 1) ?? snapshots.tryGet(Math.max(from + 1, snapshots.earliestId() ?? latest)) ?? snapshots.tryGet(latest);
    const quiet = this.quietAtMono.get(name) ?? monoNow;
    const wallAge = s ? this.clock() - s.timeMillis : 0;
    const atMono = monoNow - Math.min(Math.max(0, wallAge), Math.max(0, monoNow - quiet));
    this.uncheckedSince.set(name, { from, atMono });
    return atMono;
  }

  /** The rows a proposal's evidence cites, per table it watches (state and read site tables), as `changedKeys` writes keys (made once per proposal). */
  private citedKeys(p: Proposal): [string, string[]][] {
    let out = this.cited.get(p);
    if (out === undefined) {
      out = [];
      for (const e of p.evidence) {
        if (!this.tableNames.includes(e.table)) continue;
        const pks = this.table(e.table).schema.primaryKeys;
        out.push([e.table, e.rows.map((r) => JSON.stringify(pks.map((c) => r.key[c] ?? null)))]);
      }
      this.cited.set(p, out);
    }
    return out;
  }

  /** Does the latest state show the approved action's effect? (the write-back's "applied") */
  effectSeen(p: Proposal): boolean {
    const rule = this.ruleById.get(p.ruleId);
    return rule ? rule.effectSeen(this.context('effect', this.handles(), this.siteHandles(), null, this.clock()), p) : false;
  }

  /** The tunables the next run uses (`reconfigure` replaces them). */
  get config(): AgentConfig {
    return this.cfg;
  }

  /**
   * New tunables from the next run on (a site's config.json `agent` section, reloaded): validated
   * first, so a bad one leaves the old in force. A changed `intervalMs` reschedules the timer
   * (the next run one new interval from now). Runs are synchronous, so none sees a mix.
   */
  reconfigure(partial: AgentConfigInput): void {
    const next = agentConfig(partial);
    const rescheduled = next.intervalMs !== this.cfg.intervalMs && this.timer !== undefined;
    // The evidence retentions and the interval change no row's verdict: only the thresholds do.
    const verdicts = (c: AgentConfig) => JSON.stringify({ ...c, evidenceRetentionMs: 0, baselineRetentionMs: 0, intervalMs: 0 });
    if (verdicts(next) !== verdicts(this.cfg)) this.reevaluateAll();
    this.cfg = next;
    if (rescheduled) {
      clearInterval(this.timer);
      this.timer = setInterval(this.tick, next.intervalMs);
    }
  }

  /**
   * The next run evaluates every row, as a first run does, instead of what changed since the
   * previous run: after its thresholds changed (`reconfigure`, or a site started on a changed
   * config). The inbox keeps it from repeating what is open or was decided lately.
   */
  reevaluateAll(): void {
    this.everyRowNext = true;
  }

  private readonly tick = (): void => {
    try {
      this.run();
    } catch (e) {
      this.warn(`run failed: ${(e as Error).message}`);
    }
  };

  /** The last failure of the timer's re-check, said once until a check succeeds (it retries every second). */
  private recheckFailure: string | undefined;

  private readonly recheckTick = (): void => {
    try {
      this.recheckChanged();
      this.recheckFailure = undefined;
    } catch (e) {
      const m = (e as Error).message;
      if (m !== this.recheckFailure) this.warn(`re-check between runs failed: ${m} (tried again every ${this.recheckIntervalMs} ms; said again when it changes)`);
      this.recheckFailure = m;
    }
  };

  /**
   * Runs every `intervalMs` (and once now), and between runs re-checks what commits changed every
   * `recheckIntervalMs` (`recheckChanged`). Errors are reported, never thrown.
   */
  start(): void {
    if (this.timer) return;
    this.tick();
    this.timer = setInterval(this.tick, this.cfg.intervalMs);
    if (this.recheckIntervalMs > 0) this.recheckTimer = setInterval(this.recheckTick, this.recheckIntervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.recheckTimer) clearInterval(this.recheckTimer);
    this.timer = undefined;
    this.recheckTimer = undefined;
  }
}

/**
 * The checks an agent makes of its rules when it is made: ids of lower-case letters, digits and
 * '-', each once, versions of valid Unicode text (no lone surrogate), and every message id under
 * its rule's id (`messageCatalog`). Returns the
 * catalog. Also what core/replay holds a rule file's rules to before a run.
 */
export function checkRuleSet(rules: readonly Rule[]): MessageTemplates {
  const ids = new Set<string>();
  for (const r of rules) {
    if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(r.id)) throw new AgentError('InvalidArgument', `rule id: expected lower-case letters, digits and '-', got ${JSON.stringify(r.id)}`);
    // Stored as it is with each proposal: core/lsm's writers refuse a lone surrogate, and inside
    // the inbox's submit that failed every run, every rule's proposals with it.
    if (!isWellFormedString(r.version)) throw new AgentError('InvalidArgument', `rule ${r.id}: version: expected valid Unicode text, got ${JSON.stringify(r.version)} (a lone surrogate, half of a character pair)`);
    if (ids.has(r.id)) throw new AgentError('InvalidArgument', `rule id ${r.id} is used twice`);
    ids.add(r.id);
  }
  return messageCatalog(rules);
}

/**
 * The site tables rules read (`Rule.reads`), each once, in the rules' order. Refuses (AgentError)
 * a rule whose `reads` is not a list of names, names a state table (every rule reads those:
 * `ctx.tables`), or names a table the site does not have (`siteTables`: its config.json `tables`
 * entries with columns). What an Agent checks when it is made, and core/site of its rule files.
 */
export function siteTablesRead(rules: readonly Rule[], siteTables: readonly string[]): string[] {
  const out: string[] = [];
  for (const r of rules) {
    if (r.reads === undefined) continue;
    if (!Array.isArray(r.reads) || r.reads.some((t) => typeof t !== 'string')) throw new AgentError('InvalidArgument', `rule ${r.id}: reads: expected an array of names of the site's own tables, got ${JSON.stringify(r.reads)}`);
    for (const t of r.reads) {
      if ((STATE_TABLES as readonly string[]).includes(t)) throw new AgentError('InvalidArgument', `rule ${r.id} reads '${t}' as a site table; it is a state table, in every rule's context already (ctx.tables): expected only tables of the site's own in reads`);
      if (!siteTables.includes(t)) throw new AgentError('InvalidArgument', `rule ${r.id} reads table '${t}', which this site does not have (its own tables: ${siteTables.length > 0 ? siteTables.join(', ') : 'none'}; config.json \`tables\` entries with columns)`);
      if (!out.includes(t)) out.push(t);
    }
  }
  return out;
}

/** The newest `agent-<run id>` among tag names (compareRunIds order), if any. */
export function newestRunTag(names: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const n of names) {
    if (n.startsWith(AGENT_TAG_PREFIX) && (best === undefined || compareRunIds(n.slice(AGENT_TAG_PREFIX.length), best.slice(AGENT_TAG_PREFIX.length)) > 0)) best = n;
  }
  return best;
}

/**
 * Refuses a draft's text that the inbox stores as it is (not as JSON, whose escapes keep any
 * string) when it holds a lone surrogate: core/lsm's writers refuse it, and inside the inbox's
 * submit that failed the whole run. Thrown here, it is the rule's error.
 */
function checkText(rule: Rule, what: string, text: string): void {
  if (!isWellFormedString(text)) throw new AgentError('InvalidArgument', `rule ${rule.id}: ${what} is not valid Unicode text (a lone surrogate, half of a character pair): ${JSON.stringify(text)}`);
}

/** A rule's held baseline as `holdBaselines` writes it: null (every row) or table name → tag. */
function isHeldBaseline(v: unknown): v is RuleContext['previousTags'] {
  return v === null || (typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((tag) => typeof tag === 'string'));
}

/**
 * Gives `to` the scanned rows (and index) `from` holds of the snapshot `to` was just keyed to, when
 * `to` has none yet: rows of one snapshot never change, so the run and the re-checks between runs
 * scan each snapshot once between them and hold one copy.
 */
function shareScan(to: ScanCache, from: ScanCache | undefined): void {
  if (to.rows !== undefined || from === undefined || from.key !== to.key || from.rows === undefined) return;
  to.rows = from.rows;
  to.byKey ??= from.byKey;
}

/**
 * The primary keys (JSON text of the key columns' JSON forms, in key order) that `table`'s commits
 * in (from, to] wrote; 'all' when they cannot be read one by one (a snapshot in between expired)
 * or are more than MAX_CHANGED_KEYS.
 */
function changedKeys(table: Table, from: number, to: number): Set<string> | 'all' {
  const schema = table.schema;
  const idx = schema.primaryKeys.map((k) => schema.fieldIndex.get(k)!);
  const types = idx.map((i) => schema.fields[i]!.type);
  const out = new Set<string>();
  try {
    for (const c of table.changes({ from, to, mode: 'delta' })) {
      out.add(JSON.stringify(idx.map((i, j) => valueToJson(types[j]!, c.row[i]) ?? null)));
      if (out.size > MAX_CHANGED_KEYS) return 'all';
    }
  } catch (e) {
    // Expired in between: every citing proposal is re-checked instead. Anything else (a damaged
    // file) is the caller's to report.
    if (e instanceof LsmError && e.kind === 'NotFound') return 'all';
    throw e;
  }
  return out;
}
