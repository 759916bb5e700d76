// SiteService: the site API (api.ts) over a running Site — the one backend both user interfaces
// use (the headless UiServer and the Electron shell). Requests arrive validated (api-validate.ts);
// this file checks *who* may do what, reads the tables, and turns the subsystems' errors into
// the API's typed kinds (`SiteApiError`).
//
// Authority:
//   public           firstRun, initSite (refused here: the site is initialized), signIn, me
//   signed in        everything that reads, and signOut
//   shift_lead/admin decide (the Inbox re-checks the role itself)
//   admin            users, addUser, disableUser, enableUser, resetSecret, setRoles
// A signed-in session is re-checked against the UserStore on every call: a user disabled or
// locked meanwhile, or whose PIN or password was reset since the session began, is signed out at
// their next call, and role changes apply at once. A user disabled since the session began is
// signed out though enabled again before that call (User.disabledAtMs).
//
// Events (subscribe): the site tick (every `tickMs`, default 1 s) compares each table's snapshot
// id with the last seen — the ingest tables from the Ingestor's memory, the inbox from its
// LATEST hint — and pushes `tables` / `proposals`; `status` (and `sync` when configured) every
// `statusEveryMs` (default 5 s); `alarm` when an alarm appears. Nothing polls a table's data
// faster than its budget: data is read only when a UI asks.
//
// Concurrency: single-threaded; the listeners run synchronously on the tick. A call may wait across
// an await (a PIN's hash, a decision's re-check): `stop` refuses new calls and waits for those in
// flight, at most STOP_CALLS_WAIT_MS, before the site closes site.db and the tables.

import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { sortedRuns } from '../lsm/levels.ts';
import { needsRawScan } from '../lsm/raw-scan.ts';
import { compareStrings } from '../lsm/types.ts';
import { typeToString, valueToJson, type ReadPoint, type Snapshot, type Table } from '../lsm/index.ts';
import { checkedReport, sequenceColumns, writeBackWords, isPin, guessablePin, guessablePinMessage, InboxError, UserError, type CommandFailure, type Inbox, type Proposal, type Role as InboxRole, type User } from '../inbox/index.ts';
import { DEFAULT_RULES, messageCatalog, reorderLookup, stockPosition, translations, type MessageTemplates } from '../agents/index.ts';
import {
  SiteApiError,
  type Alarm,
  type CheckedTable,
  type DeadLetterGroupView,
  type DeadLetterView,
  type DiffResult,
  type HistoryResult,
  type ProposalDetail,
  type ProposalView,
  type ReadPointRequest,
  type WordedValues,
  type Refusal,
  guessablePinRefusal,
  type InputAge,
  type JobView,
  type Role,
  type SessionContext,
  type SessionUser,
  type TrailField,
  type SiteApiMethods,
  type SiteBackend,
  type SiteEvent,
  type SiteMethod,
  type SiteStatus,
  type StockView,
  type WaitingProposal,
  type SyncStatus,
  type TableFreshness,
  type StreamView,
  type TableInfo,
  type UserView,
} from './api.ts';
import { ConfigError, configBindings, decisionOptions, inboxBudget, parseReorderPolicyKey, reorderLevelsErrorKey, reorderPolicyKey, streamSilentMs } from './config.ts';
import type { Site } from './site.ts';
import { fedTables, syncView } from './status.ts';
import { refusalAlarms } from './refusals.ts';
import { dismissAs, replayLogged } from './dismiss.ts';
import { ACCESS, refusal } from './access.ts';
import { callIn, reportInternalError } from './internal-error.ts';
import type { SyncProblem, SyncStatus as EngineSyncStatus } from '../sync/engine.ts';
import { DEAD_LETTERS_TABLE_NAME, type DeadLetter, type DeadLetterStatus } from '../ingest/dead-letters.ts';
import { bindingsFor } from '../ingest/binding.ts';
import { eventTopic } from '../ingest/envelope.ts';

/** What the service needs of a sync engine (core/sync's SyncEngine.status()). */
export interface SyncStatusSource {
  /** Where it syncs to, credentials blanked. */
  readonly target: string;
  /** The health window the recent figures count (core/sync DEFAULT_HEALTH_WINDOW_MS). */
  readonly windowMs: number;
  status(): EngineSyncStatus;
}

export interface SiteServiceOptions {
  sync?: SyncStatusSource | null;
  tickMs?: number;
  statusEveryMs?: number;
  now?: () => number;
  /**
   * The monotonic clock (ms) a screen's idle time also runs on (`screenNow`): performance.now, or
   * `now` when only that is given (a test's clock, which then alone says how much time passed).
   */
  monoNow?: () => number;
}

type Handler<M extends SiteMethod> = (req: SiteApiMethods[M]['req'], session: SessionContext) => Promise<SiteApiMethods[M]['res']> | SiteApiMethods[M]['res'];

/**
 * How long `SiteService.stop` waits for the API calls in flight before the site closes site.db and
 * the tables. A sign-in or a decision hashes a PIN (about 0.1 s at the default scrypt cost; a few
 * dozen queued on the threadpool take seconds), and a decision commits, re-checks and runs the
 * agent once; 10 s holds all of that and leaves most of a service manager's stop timeout
 * (docs/operations.md: TimeoutStopSec=60) to the commit and close that follow. A call still running
 * then is stuck, not slow: the site stops without it.
 */
export const STOP_CALLS_WAIT_MS = 10_000;

/**
 * The calls `stop` does not wait for: the floor UI's replay and dismissal of dead letters, in
 * slices whose every commit stands (core/ingest `deadLetterSlices`), as the control socket's
 * `deadletters.replay` and `deadletters.dismiss` past its PIN check. Waited for, a stop during a
 * flood's took the whole STOP_CALLS_WAIT_MS more and logged the replay as stuck.
 */
const NOT_WAITED_AT_STOP: ReadonlySet<SiteMethod> = new Set<SiteMethod>(['replayDeadLetters', 'dismissDeadLetters']);

/** A call refused (`site.stopping`), or cut short (`site.stopped`), because the site is stopping. */
const stoppingError = (code: 'site.stopping' | 'site.stopped', message: string): SiteApiError => new SiteApiError('conflict', message, undefined, { code });

const STATE_TABLES = ['work_queue', 'resources', 'stock'] as const;
const HISTORY_LIMIT = 1000;
const STOCK_LIMIT = 500;
const JOBS_LIMIT = 1000;
/** The order the Work queue screen shows jobs in: what needs attention first, done last. */
const JOB_STATUS_ORDER = ['blocked', 'released', 'in_progress', 'done'];
/** Tags listed for the History screen at most (a site keeps thousands: a day of agent runs is 1,440 per table). */
const TAGS_LIMIT = 200;

/** A stock cell as the view shows it: a number, else null (module-level: it runs per row). */
const numberOrNull = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/** Stock rows in the table's key order (item, location; strings by code point, as the table sorts them). */
const compareStockKey = (a: { item: string; location: string }, b: { item: string; location: string }): number => compareStrings(a.item, b.item) || compareStrings(a.location, b.location);

/**
 * The `limit` first of the values added, by `cmp`, in a max-heap: a scan that must look at every
 * row to find them holds the screen's rows, not the table's.
 */
class FirstN<K, T extends K> {
  private readonly heap: T[] = [];
  constructor(
    private readonly limit: number,
    private readonly cmp: (a: K, b: K) => number,
  ) {}

  get full(): boolean {
    return this.heap.length >= this.limit;
  }

  /** Whether `v` would be among the first (false once full and `v` comes after all of them). */
  wants(v: K): boolean {
    return !this.full || (this.heap.length > 0 && this.cmp(v, this.heap[0]!) < 0);
  }

  add(v: T): void {
    const h = this.heap;
    if (this.full) {
      if (!this.wants(v)) return;
      h[0] = v;
      this.down(0);
      return;
    }
    h.push(v);
    for (let i = h.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (this.cmp(h[i]!, h[parent]!) <= 0) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  /** The values kept, in `cmp` order. */
  sorted(): T[] {
    return this.heap.sort(this.cmp);
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < h.length && this.cmp(h[l]!, h[top]!) > 0) top = l;
      if (r < h.length && this.cmp(h[r]!, h[top]!) > 0) top = r;
      if (top === i) return;
      [h[i], h[top]] = [h[top]!, h[i]!];
      i = top;
    }
  }
}

/** The earlier approvals of a proposal's situation whose command failed (the inbox's window), not the proposal's own. */
const failedBefore = (inbox: Inbox, p: Proposal): readonly CommandFailure[] => inbox.failedBefore(p.situationKey).filter((f) => f.id !== p.id);

export class SiteService implements SiteBackend {
  private readonly listeners = new Set<(e: SiteEvent) => void>();
  private readonly now: () => number;
  private readonly monoNow: () => number;
  /** The last reading of `screenNow`, and the monotonic clock then. */
  private screenClock: { atMs: number; monoMs: number } | undefined;
  private readonly handlers: { [M in SiteMethod]: Handler<M> };
  private timer: NodeJS.Timeout | undefined;
  private lastStatusMs = 0;
  /** How often `status` is pushed (option `statusEveryMs`, 5 s by default); the status says it. */
  private get statusEveryMs(): number {
    return this.o.statusEveryMs ?? 5000;
  }
  private readonly seenSnapshots = new Map<string, number | null>();
  private inboxSnapshot: number | null | undefined;
  private readonly alarmSince = new Map<string, number>();
  /** Per table, its folder's bytes and the latest snapshot they were read at (`bytesOf`: id and delta manifest list; null: none). */
  private readonly bytesCache = new Map<string, { key: string | null; bytes: number }>();
  /** The approval inbox's budget episodes (`inboxFreshness`): whether the last look found it over, and how often it went over. */
  private inboxOver = { over: false, breaches: 0 };
  /** The tables some binding of the config writes to, for the bindings they were found from (`fedTables`). */
  private fed: { bindings: readonly unknown[]; tables: ReadonlySet<string> } | undefined;
  /** Alarm keys the last status tick pushed (an `alarm` event goes out for each new one). */
  private pushedAlarms = new Set<string>();
  /** The calls being answered (`call`), which `stop` waits for. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Set by `stop`: every call from then on is refused. */
  private stopping = false;
  /** Set once `stop` has waited for the calls in flight (they finished, or the wait's bound passed). */
  private stoppedWaiting = false;

  constructor(
    private readonly site: Site,
    private readonly o: SiteServiceOptions = {},
  ) {
    this.now = o.now ?? Date.now;
    this.monoNow = o.monoNow ?? o.now ?? (() => performance.now());
    this.handlers = {
      firstRun: () => ({ initialized: true, siteId: this.site.config.site, restoredSite: null }),
      initSite: () => {
        throw new SiteApiError('conflict', `this site is already set up (site id ${this.site.config.site})`);
      },
      signIn: (req, s) => this.signIn(req, s),
      signOut: (_req, s) => {
        s.setUser(null);
        return { ok: true as const };
      },
      me: (_req, s) => this.me(s),
      status: () => this.status(),
      listProposals: (req) => {
        const inbox = this.inbox();
        if (req.order === 'urgency' && !(req.status && req.status.length > 0 && req.status.every((x) => x === 'open' || x === 'deferred'))) {
          throw new SiteApiError('invalid', 'order urgency lists open and deferred proposals: give status [open], [deferred] or both');
        }
        return inbox.list({ ...(req.status ? { status: req.status } : {}), ...(req.order ? { order: req.order } : {}), limit: req.limit ?? 200 }).map((p) => {
          const failed = failedBefore(inbox, p).length;
          return { ...proposalView(p, this.agentTemplates()), ...(failed > 0 ? { failedBeforeCount: failed } : {}) };
        });
      },
      getProposal: (req) => this.proposalDetail(req.id),
      decide: (req, s) => this.decide(req, s),
      workQueue: (req) => ({
        jobs: this.jobs(req.search, req.limit ?? JOBS_LIMIT, req.statuses),
        resources: this.rows('resources') as unknown as SiteApiMethods['workQueue']['res']['resources'],
        waiting: this.waiting().filter((w) => w.job_id !== null || w.resource_id !== null),
      }),
      stock: (req) => this.stock(req.search, req.limit ?? STOCK_LIMIT, req.below === true),
      setReorderPolicy: (req, s) => {
        const location = req.location ?? null;
        this.site.setReorderPolicy(this.current(s).name, req.item, location, req.policy);
        const config = this.agentConfig();
        const { policy, scope } = reorderLookup(config, req.item, location ?? undefined);
        return { reorder_point: policy.reorderPoint, order_up_to: policy.orderUpTo, reorder_scope: scope };
      },
      configChanges: (req) => this.site.configChanges(req.limit ?? 50).map((c) => ({ ...c, policyOf: parseReorderPolicyKey(c.key) ?? null })),
      tables: () => this.tables(),
      tags: (req) => {
        const q = req.search?.trim() ?? '';
        return this.table(req.table)
          .listTags()
          .filter((t) => q === '' || t.name.includes(q))
          .map((t) => ({ name: t.name, snapshotId: t.snapshot.id, createdMs: t.createTimeMillis ?? t.snapshot.timeMillis ?? null }))
          .sort((a, b) => b.snapshotId - a.snapshotId || (a.name < b.name ? 1 : -1))
          .slice(0, req.limit ?? TAGS_LIMIT);
      },
      history: (req) => this.history(req.table, req.at, req.limit ?? HISTORY_LIMIT, req.contains, req.worded),
      diff: (req) => this.diff(req.table, req.from, req.to, req.limit ?? HISTORY_LIMIT, req.contains, req.worded),
      syncStatus: () => this.syncStatus(),
      deadLetters: (req) =>
        this.deadLetters(req.status, req.limit ?? 200, { ...(req.topic !== undefined ? { topic: req.topic } : {}), ...(req.reason !== undefined ? { reason: req.reason } : {}) })
          .map((d): DeadLetterView => ({ id: d.position.toString(), reason: d.reason, detail: d.detail, topic: d.topic, payload: d.payload.toString('utf8').slice(0, 2000), receivedMs: d.receivedAtMs, status: d.status, dismissed: d.dismissed })),
      // Asked when the Dead letters screen loads, not with the per-second status: it reads every
      // letter's head, and a flood leaves hundreds of thousands.
      deadLetterGroups: () => this.site.ingestor.openLetterGroups().map((g): DeadLetterGroupView => ({ topic: g.topic, reason: g.reason, count: g.count })),
      replayDeadLetters: (req, s) =>
        replayLogged(this.site.ingestor, req.ids?.map((id) => parsePosition(id)), req.alike === true, { log: (l) => this.site.logLine(l), via: 'floor UI', by: this.current(s).name }),
      dismissDeadLetters: async (req, s) => {
        const ids = req.ids.map((id) => parsePosition(id));
        const { dismissed, notOpen } = await dismissAs(this.site.ingestor, ids, this.current(s).name, req.note, { log: (l) => this.site.logLine(l), via: 'floor UI' }, req.alike === true);
        return { dismissed, notOpen };
      },
      users: () => this.site.users.list().map(userView),
      addUser: async (req) => {
        const role = oneRole(req.roles);
        return userView(await this.site.users.add({ name: req.name, role, ...secretOf(req.secret), ...(req.badge ? { badge: req.badge } : {}) }));
      },
      disableUser: (req, s) => {
        if (this.isSelf(req.name, s)) throw new SiteApiError('conflict', 'you cannot disable yourself', undefined, { code: 'user.selfDisable' });
        return userView(this.site.users.disable(req.name));
      },
      enableUser: (req) => userView(this.site.users.enable(req.name)),
      resetSecret: async (req, s) => {
        const u = await this.site.users.resetSecret(req.name, secretOf(req.secret));
        // The reset ends the user's other sessions (`current`), not the one that made it.
        if (this.isSelf(req.name, s)) s.secretChangedMs = u.secretChangedMs ?? null;
        return userView(u);
      },
      setRoles: (req, s) => {
        const role = oneRole(req.roles);
        if (this.isSelf(req.name, s) && role !== 'admin') throw new SiteApiError('conflict', 'you cannot take the admin role from yourself', undefined, { code: 'user.selfDemote' });
        return userView(this.site.users.setRole(req.name, role));
      },
    };
  }

  /**
   * Whether `name` is the signed-in user's: the user it finds, not its text, since the store finds
   * a user by the name's composed form too (core/inbox users.ts `row`): "A\u030Ase" from a
   * hand-made request is the admin "Åse", who must not disable or demote themselves with it.
   */
  private isSelf(name: string, s: SessionContext): boolean {
    return s.user !== null && (name === s.user.name || this.site.users.get(name)?.name === s.user.name);
  }

  // ------------------------------------------------------------------------------------------
  // SiteBackend.

  async call<M extends SiteMethod>(method: M, req: SiteApiMethods[M]['req'], session: SessionContext, input?: InputAge): Promise<SiteApiMethods[M]['res']> {
    // Once the site stops, nothing new begins: site.db and the tables close behind it.
    if (this.stopping) throw stoppingError('site.stopping', 'the site is stopping; try again once it has started again');
    const p = this.run(method, req, session, input);
    // The replay and dismissal of dead letters work in slices whose every commit stands (a flood's
    // take minutes): not waited for, as the control socket's (ControlWork.interruptible). One cut
    // short is answered that the site stopped, with what it did logged.
    if (NOT_WAITED_AT_STOP.has(method)) return p;
    const done = () => void this.inFlight.delete(p);
    this.inFlight.add(p);
    p.then(done, done);
    return p;
  }

  private async run<M extends SiteMethod>(method: M, req: SiteApiMethods[M]['req'], session: SessionContext, input?: InputAge): Promise<SiteApiMethods[M]['res']> {
    const h = this.handlers[method] as Handler<M> | undefined;
    if (!h) throw new SiteApiError('invalid', `unknown method ${method}`);
    // The session's checks are inside too: they read the user store, which can fail like any handler.
    try {
      this.noteInput(session, input);
      if (ACCESS[method].who !== 'anyone') {
        const user = this.current(session);
        const why = refusal(method, user.name, user.roles);
        if (why !== null) {
          const a = ACCESS[method];
          const allowed = a.who === 'roles' ? a.roles.join(',') : '';
          throw new SiteApiError('forbidden', why, undefined, { code: 'role.refused', params: { user: user.name, role: user.roles.join(','), allowed } });
        }
      }
      return await h(req, session);
    } catch (e) {
      // A call that outlived the wait at stop failed on a closed site.db or table: said as such,
      // not as an internal error whose log line comes after "site stopped".
      if (this.stoppedWaiting && !(e instanceof SiteApiError)) throw stoppingError('site.stopped', 'the site stopped before this call finished; try again once it has started again');
      throw apiError(e, method, session, this.site, req);
    }
  }

  subscribe(listener: (e: SiteEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A disabled, locked or removed user's session is signed out here (as by any other call). */
  signedIn(session: SessionContext): boolean {
    if (!session.user) return false;
    try {
      this.current(session, false);
      return true;
    } catch {
      return false;
    }
  }

  /** Starts the site tick (events). */
  start(): void {
    if (this.timer) return;
    for (const t of this.site.ingestor.status()) this.seenSnapshots.set(t.table, t.snapshotId);
    this.inboxSnapshot = this.site.decisions?.inbox.table.latestSnapshot()?.id ?? null;
    this.timer = setInterval(() => this.tick(), this.o.tickMs ?? 1000);
    this.timer.unref?.();
  }

  /**
   * Stops the site tick, refuses every call from now on (`conflict`, "the site is stopping"), and
   * waits for the calls in flight — a PIN being hashed at a sign-in or a decision, a user being
   * added, a decision being checked and committed — to finish, at most `waitMs`
   * (STOP_CALLS_WAIT_MS): the site closes site.db and the tables only after it. Without the wait,
   * a sign-in still hashing answered `internal` ("The database connection is not open"), its
   * attempt counted against the user (the count is taken back after the hash), and its log line
   * came after "site stopped". Resolves with how many calls were still running at the bound.
   */
  async stop(waitMs = STOP_CALLS_WAIT_MS): Promise<number> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.listeners.clear();
    this.stopping = true;
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((r) => (timer = setTimeout(r, waitMs)));
      await Promise.race([Promise.allSettled([...this.inFlight]), bound]);
      clearTimeout(timer);
    }
    this.stoppedWaiting = true;
    const left = this.inFlight.size;
    if (left > 0) this.site.logLine(`stop: ${left === 1 ? '1 API call' : `${left} API calls`} still running after ${waitMs / 1000} s; the site stops without ${left === 1 ? 'it' : 'them'} (${left === 1 ? 'it is' : 'they are'} answered that the site stopped)`);
    return left;
  }

  /** One site tick (exported for tests): pushes what changed. */
  tick(): void {
    const now = this.now();
    const emit = (e: SiteEvent) => {
      for (const l of this.listeners) {
        try {
          l(e);
        } catch {
          // a listener's failure is its own
        }
      }
    };
    try {
      const changed: string[] = [];
      for (const t of this.site.ingestor.status()) {
        if (this.seenSnapshots.get(t.table) !== t.snapshotId) changed.push(t.table);
        this.seenSnapshots.set(t.table, t.snapshotId);
      }
      if (changed.length > 0) emit({ type: 'tables', tables: changed });
      const inbox = this.site.decisions?.inbox;
      if (inbox) {
        const id = inbox.table.latestSnapshot()?.id ?? null;
        if (id !== this.inboxSnapshot) {
          emit({ type: 'proposals', changed: this.changedProposals(inbox.table, this.inboxSnapshot ?? null, id) });
          this.inboxSnapshot = id;
        }
      }
      // A wall clock stepped back (now < lastStatusMs) makes it due as well: else no status or
      // alarm went out until the clock had caught up with the last push, an hour for an hour.
      if (now - this.lastStatusMs >= this.statusEveryMs || now < this.lastStatusMs) {
        this.lastStatusMs = now;
        const status = this.status();
        emit({ type: 'status', status });
        // An alarm event for each alarm the previous tick did not push (status() also answers the
        // control socket's `status`, so its own bookkeeping is not "what the UI was told").
        const keys = new Set(status.alarms.map(alarmKey));
        for (const a of status.alarms) if (!this.pushedAlarms.has(alarmKey(a))) emit({ type: 'alarm', alarm: a });
        this.pushedAlarms = keys;
        if (status.sync.configured) emit({ type: 'sync', sync: status.sync });
      }
    } catch {
      // the site is stopping; the next tick (if any) tries again
    }
  }

  // ------------------------------------------------------------------------------------------
  // Sessions.

  /**
   * Moves the session's last known use of the screen by what a call says (api.ts `InputAge`): a
   * call from outside the floor UI is use itself; the UI's says how long ago its page last saw
   * input, or that it has seen none (a page just opened or reloaded, which says nothing of the
   * person signed in before).
   *
   * Input a page reports from after the limit had run out on the mark as it stood is the next
   * person's, not a use of this session: it is signed out (`current` then says why), not revived.
   * A page frozen for half an hour and then touched would otherwise run the touch as the person
   * before. Input within the limit that the page reports only after it (pointer movement makes no
   * call; the page asks `me` every 30 s) still counts, and so does a call from outside the UI (no
   * input age: no screen, no next person at it).
   */
  private noteInput(session: SessionContext, input: InputAge): void {
    if (input === null || session.user === null || session.inputAtMs === undefined) return;
    const at = this.screenNow() - (input ?? 0);
    const idleMs = this.site.config.ui.idleSignOutMs;
    if (input !== undefined && idleMs > 0 && at - session.inputAtMs > idleMs) {
      this.signOutIdle(session, session.user.name, idleMs);
      return;
    }
    if (at > session.inputAtMs) session.inputAtMs = at;
  }

  /**
   * The clock a screen's use is kept on (`SessionContext.inputAtMs`): the wall clock, but never
   * behind the time run on the monotonic clock since its last reading. On the wall clock alone a
   * step back (NTP after a cold boot, a clock set by hand) kept every session signed in for as long
   * as the step, an hour for an hour: the next person at a reloaded page was the one before. A PC
   * asleep, whose monotonic clock stands still, is still measured by the wall clock; a step forward
   * signs out early, as before.
   */
  private screenNow(): number {
    const wall = this.now();
    const mono = this.monoNow();
    const c = this.screenClock;
    const at = c === undefined ? wall : Math.max(wall, c.atMs + (mono - c.monoMs));
    this.screenClock = { atMs: at, monoMs: mono };
    return at;
  }

  private signOutIdle(session: SessionContext, user: string, idleMs: number): void {
    session.signedOutIdle = { user, idleMs }; // before setUser: a transport keeps such a session to say why
    session.setUser(null);
  }

  /** `tellWhy`: the error says an idle sign-out not yet told of (and it counts as told). */
  private current(session: SessionContext, tellWhy = true): SessionUser {
    const u = session.user;
    if (!u) throw (tellWhy ? this.signedOutWhy(session) : undefined) ?? new SiteApiError('unauthenticated', 'sign in first', undefined, { code: 'session.required' });
    // A shared floor PC: the UI signs the person out after `ui.idleSignOutMs` without use, and so
    // does the backend, for a page that was closed, reloaded or kept from running its timer.
    const idleMs = this.site.config.ui.idleSignOutMs;
    if (idleMs > 0 && session.inputAtMs !== undefined && this.screenNow() - session.inputAtMs > idleMs) {
      this.signOutIdle(session, u.name, idleMs);
      throw (tellWhy ? this.signedOutWhy(session) : undefined) ?? new SiteApiError('unauthenticated', `${u.name} was signed out`, undefined, { code: 'session.ended', params: { user: u.name, why: 'idle', idleMs } });
    }
    const stored = this.site.users.get(u.name);
    if (!stored || stored.disabled || stored.lockedUntilMs !== null) {
      session.setUser(null);
      const why = !stored ? 'removed' : stored.disabled ? 'disabled' : 'locked';
      throw new SiteApiError('unauthenticated', `user ${u.name} can no longer sign in (${why}); sign in again`, undefined, { code: 'session.ended', params: { user: u.name, why } });
    }
    // A session that began before a disable: the user is enabled again, but this session was not
    // (a tab closed with its cookie kept, which made no call while the user was disabled).
    if ((stored.disabledAtMs ?? null) !== (session.disabledAtMs ?? null)) {
      session.setUser(null);
      throw new SiteApiError('unauthenticated', `user ${u.name} was disabled after this sign-in; sign in again`, undefined, { code: 'session.ended', params: { user: u.name, why: 'disabled' } });
    }
    // A session that began before a reset of the PIN or password (whoever knew the old one).
    if ((stored.secretChangedMs ?? null) !== (session.secretChangedMs ?? null)) {
      session.setUser(null);
      throw new SiteApiError('unauthenticated', `the PIN or password of ${u.name} was reset after this sign-in; sign in again`, undefined, { code: 'session.ended', params: { user: u.name, why: 'secretReset' } });
    }
    if (stored.role !== u.roles[0] || u.roles.length !== 1) session.setUser({ name: u.name, roles: [stored.role] });
    return session.user!;
  }

  /**
   * Who is signed in here, or null. A session the backend signed out for want of use says so once,
   * here or at any other call (`unauthenticated` with `idleMs`), however the backend learnt of it:
   * at this call, an earlier one, or the event push's check. So a page opened or reloaded after the
   * limit, or one whose socket was closed for it, tells the next person at the screen why nobody is
   * signed in.
   */
  private me(session: SessionContext): SessionUser | null {
    if (this.signedIn(session)) return session.user;
    const why = this.signedOutWhy(session);
    if (why) throw why;
    return null;
  }

  /** The idle sign-out this session has not yet been told of, as its error (and then forgotten). */
  private signedOutWhy(session: SessionContext): SiteApiError | undefined {
    const idle = session.signedOutIdle;
    if (!idle) return undefined;
    session.signedOutIdle = undefined;
    const msg = `${idle.user} was signed out after ${Math.round(idle.idleMs / 60_000)} min without use of the screen; sign in again`;
    return new SiteApiError('unauthenticated', msg, idle.idleMs, { code: 'session.ended', params: { user: idle.user, why: 'idle', idleMs: idle.idleMs } });
  }

  private async signIn(req: SiteApiMethods['signIn']['req'], session: SessionContext): Promise<SessionUser> {
    const users = this.site.users;
    let r;
    // Unknown badges count against where they come from (SessionContext.source), not everyone.
    if ('badge' in req) r = await users.signInWithBadge(req.badge, session.source);
    else {
      const u = users.get(req.user);
      r = u && isPin(req.secret) && u.hasPin ? await users.verifyPin(req.user, req.secret) : await users.verifyPassword(req.user, req.secret);
    }
    if (!r.ok) {
      // Neither says whether a name is a user (an unknown one is locked as a user is) nor, for a
      // badge, whose it is: a badge is refused for its source's count as for its user's lockout.
      const left = 'failuresLeft' in r && r.failuresLeft !== undefined ? ` (${r.failuresLeft} attempt${r.failuresLeft === 1 ? '' : 's'} left)` : '';
      const badge = 'badge' in req;
      const why =
        r.reason === 'locked'
          ? `${badge ? 'badge refused' : 'locked'} until ${new Date(r.lockedUntilMs).toLocaleTimeString('en-GB')} after too many wrong attempts`
          : r.reason === 'disabled'
            ? 'this user is disabled'
            : badge
              ? `unknown badge${left}`
              : `wrong name, PIN or password${left}`;
      // The same refusal as data, for the floor UI to say in the reader's language (api.ts RefusalCode).
      const coded: Refusal =
        r.reason === 'locked'
          ? { code: badge ? 'signin.badgeLocked' : 'signin.locked', params: { untilMs: r.lockedUntilMs } }
          : r.reason === 'disabled'
            ? { code: 'signin.disabled' }
            : { code: badge ? 'signin.badgeUnknown' : 'signin.wrong', ...('failuresLeft' in r && r.failuresLeft !== undefined ? { params: { left: r.failuresLeft } } : {}) };
      throw new SiteApiError('unauthenticated', `sign-in refused: ${why}`, undefined, coded);
    }
    const user: SessionUser = { name: r.user.name, roles: [r.user.role] };
    session.setUser(user);
    session.secretChangedMs = r.user.secretChangedMs ?? null;
    session.disabledAtMs = r.user.disabledAtMs ?? null;
    session.inputAtMs = this.screenNow();
    session.signedOutIdle = undefined;
    return user;
  }

  // ------------------------------------------------------------------------------------------
  // Status and alarms.

  /** `held`, when given, gets each ingest table's events held behind a gap (they count in its age). */
  private freshness(held?: Map<string, number>): TableFreshness[] {
    const inbox = this.inboxFreshness();
    const fed = this.fedTables();
    const ingest = this.site.ingestor.status().map((t) => {
      held?.set(t.table, t.heldEvents);
      return {
        table: t.table,
        budgetMs: t.budgetMs,
        decision: t.decision,
        confirmedBy: t.confirmedBy,
        ageMs: t.ageMs,
        pendingEvents: t.pendingEvents,
        lastCommitMs: t.lastCommitMs,
        snapshotId: t.snapshotId,
        breaches: t.breaches,
        withinBudget: t.withinBudget,
        fed: fed.has(t.table),
      };
    });
    return inbox ? [inbox, ...ingest] : ingest;
  }

  /**
   * The ingest tables something writes to: those a binding of config.json names (`bindings`), and
   * dead_letters, which takes refused events from every stream. A table no binding feeds is never
   * behind anything — its age stays 0 and it stays "within budget" forever, which read as current
   * — so status says `fed: false` and the UIs show that it has no source (it raises no alarm).
   * The bindings change only with a restart; found again when the config object's bindings differ.
   */
  private fedTables(): ReadonlySet<string> {
    const bindings = configBindings(this.site.config);
    if (this.fed?.bindings !== bindings) this.fed = { bindings, tables: fedTables(bindings) };
    return this.fed.tables;
  }

  /**
   * The approval inbox against its budget (seconds: a person waits in it). Its age is how long the
   * state has had commits the agent has not checked the open proposals against (core/agents
   * `oldestUncheckedCommitMs`; the agent checks every second between its runs) — how long the
   * inbox may have offered a proposal the state already overtook. Absent while the agent's timers
   * do not run (`agentTimer: false`: the agent runs only on demand, and nothing keeps the inbox
   * current). The budget is config.json `tables`' approval_inbox entry, else core/ingest's default
   * (2 s).
   */
  private inboxFreshness(): TableFreshness | undefined {
    const d = this.site.decisions;
    if (!d || !d.agent.keepsInboxCurrent) return undefined;
    const b = inboxBudget(this.site.config);
    const since = d.agent.oldestUncheckedCommitMs();
    const ageMs = since === null ? 0 : Math.max(0, this.now() - since);
    const withinBudget = ageMs <= b.budgetMs;
    if (!withinBudget && !this.inboxOver.over) this.inboxOver.breaches++;
    this.inboxOver.over = !withinBudget;
    const latest = d.inbox.table.latestSnapshot();
    return {
      table: b.table,
      budgetMs: b.budgetMs,
      decision: b.decision,
      confirmedBy: b.confirmedBy,
      ageMs,
      pendingEvents: 0,
      lastCommitMs: latest?.timeMillis ?? null,
      snapshotId: latest?.id ?? null,
      breaches: this.inboxOver.breaches,
      withinBudget,
      fed: true,
    };
  }

  status(): SiteStatus {
    const now = this.now();
    const held = new Map<string, number>();
    const tables = this.freshness(held);
    const health = this.site.ingestor.health();
    const sync = this.syncStatus();
    const deadLetters = this.site.ingestor.deadLetterCount();
    const alarms: Alarm[] = [];
    for (const t of tables) {
      if (!t.withinBudget) {
        // Why no commit mends it: events that wait behind a gap, or ingest that stopped.
        const n = held.get(t.table) ?? 0;
        const why = `${n > 0 ? `; ${n === 1 ? '1 event for it waits' : `${n} events for it wait`} behind a missing one (streams: gap)` : ''}${health.failure ? '; ingest stopped, events are only journaled' : ''}`;
        alarms.push({
          kind: 'budget_breach',
          message: `${t.table} is ${secs(t.ageMs)} old; its budget is ${secs(t.budgetMs)} (${t.decision})${why}`,
          sinceMs: now - Math.max(0, t.ageMs - t.budgetMs),
          params: { table: t.table, ageMs: t.ageMs, budgetMs: t.budgetMs, ...(n > 0 ? { held: n, streams: this.gapStreams(t.table) } : {}), ...(health.failure ? { stopped: 1 } : {}) },
        });
      }
    }
    if (health.diskFull) alarms.push({ kind: 'disk_budget', message: 'disk budget reached: the journal holds acknowledgements until space is free (see logs/site.log)', sinceMs: now });
    // Its own kind: raised as disk_budget, it read "disk budget" to whoever sorts or words alarms by kind.
    if (health.failure) {
      // What the site does about it: a resume in place planned at a time, or none (a damaged file).
      // `resume` is the English sentence; `resumeAtMs` (an instant), `resumeRunning` or `resumeStopped` the same
      // as values, which the floor's UI words in its reader's language.
      const resume = this.site.ingestResumeText();
      const plan = this.site.ingestResumePlan();
      alarms.push({
        kind: 'ingest_stopped',
        message: `ingest stopped: ${health.failure}; events are only journaled until ${resume === undefined ? 'the site is restarted' : `ingest resumes (${resume})`} (see logs/site.log)`,
        sinceMs: now,
        params: {
          failure: health.failure,
          ...(resume === undefined ? {} : { resume }),
          ...(plan === undefined ? {} : 'atMs' in plan ? { resumeAtMs: plan.atMs } : 'resuming' in plan ? { resumeRunning: 1 } : { resumeStopped: plan.stopped }),
        },
      });
    }
    const src = this.o.sync?.status();
    if (src && !src.healthy) {
      // Which case it is (params.reason): "no progress" read as "the line is down" to whoever HQ
      // refused (a take-over, not a cable) or whose one step or table fails while others go.
      const windowMs = this.o.sync!.windowMs;
      const reason = syncStallReason(src);
      alarms.push({
        kind: 'sync_stalled',
        message: `${SYNC_STALL_TEXT[reason]}; ${src.pendingItems} step${src.pendingItems === 1 ? '' : 's'} waiting${src.lastError ? ` (${src.lastError})` : ''}`,
        sinceMs: now - src.oldestUnsyncedMs,
        params: { pending: src.pendingItems, reason, windowMs },
      });
    }
    alarms.push(...this.failedCommands());
    if (deadLetters > 0) alarms.push({ kind: 'dead_letters', message: `dead letters waiting for a look: ${deadLetters}`, sinceMs: now, params: { n: deadLetters } });
    for (const d of this.site.ingestor.stuckStreams(now)) {
      alarms.push({
        kind: 'stream_only_duplicates',
        message:
          `${d.module}/${d.stream}: ${d.count} events in ${secs(d.spanMs)}, seq ${d.lowSeq}…${d.highSeq}, all at or below ${d.issued} (already applied) and dropped — ` +
          `did the module's sequence go back (restored, reinstalled)? Its rows are not changing (docs/operations.md, "A module's sequence went back")`,
        sinceMs: d.firstMs,
      });
    }
    for (const r of refusalAlarms(this.site.config.site, this.site.brokerRefusals(), now)) alarms.push({ kind: 'module_refused', ...r });
    const streams = this.streams(now);
    alarms.push(...this.silentStreams(streams, now));
    for (const v of streams) {
      if (v.clockAheadMs === null || v.clockAheadMs <= CLOCK_AHEAD_ALARM_MS) continue;
      alarms.push({
        kind: 'clock_ahead',
        message:
          `${v.stream}: its newest event is stamped ${secs(v.clockAheadMs)} after this PC received it — the module's clock (or this PC's) is set wrong. ` +
          `The module takes Tilstand's commands to expire that much early (10 min after sending: ahead by more, it refuses every one), and its event times read wrong; set both clocks from the same time source (NTP)`,
        sinceMs: v.lastEventMs ?? now,
      });
    }
    // Keep the first time each alarm was seen.
    const keys = new Set<string>();
    for (const a of alarms) {
      const k = alarmKey(a);
      keys.add(k);
      if (!this.alarmSince.has(k)) this.alarmSince.set(k, a.sinceMs);
      a.sinceMs = Math.min(a.sinceMs, this.alarmSince.get(k)!);
    }
    for (const k of [...this.alarmSince.keys()]) if (!keys.has(k)) this.alarmSince.delete(k);
    const b = this.site.brokerInfo();
    const proposals = this.site.decisions?.inbox.activeCounts() ?? { open: 0, deferred: 0, oldestOpenMs: null };
    const deadLetterClosedRetentionMs = this.site.config.deadLetters.closedRetentionMs;
    // From the decision half's memory (no table read): status comes every few seconds.
    const agent = this.site.decisions?.agentStatus(now);
    // From the note as the start read it (Site.restoredFromTag), for the Sync screen.
    const restoredFromTag = this.site.restoredFromTag(now);
    return { siteId: this.site.config.site, nowMs: now, statusEveryMs: this.statusEveryMs, broker: b, tables, streams, deadLetters, deadLetterClosedRetentionMs, alarms, sync, proposals, ui: { idleSignOutMs: this.site.config.ui.idleSignOutMs }, agentRules: this.site.agentRules(), ...(agent ? { agent } : {}), ...(restoredFromTag.length > 0 ? { restoredFromTag } : {}) };
  }

  /**
   * The streams (`module/stream`) with an open gap whose bindings feed `table` (any such stream for
   * dead_letters, where a held event may end), for budget_breach's `streams`: the floor's UI names
   * them, where the English message only points at the streams' gap column. Asked only while a
   * table has held events (rare).
   */
  private gapStreams(table: string): string {
    const bindings = configBindings(this.site.config);
    const out: string[] = [];
    for (const s of this.site.ingestor.streamActivity()) {
      if (s.gap === null) continue;
      const topic = eventTopic(this.site.config.site, s.module, s.stream);
      if (table === DEAD_LETTERS_TABLE_NAME || bindingsFor(bindings, topic).some((b) => b.table === table)) out.push(`${s.module}/${s.stream}`);
    }
    return out.join(', ');
  }

  private streams(now: number): StreamView[] {
    return this.site.ingestor.streamActivity().map((s) => {
      const allowed = streamSilentMs(this.site.config, s.module, s.stream);
      return {
        stream: `${s.module}/${s.stream}`,
        lastEventMs: s.lastEventMs,
        lastSeq: s.lastSeq,
        clockAheadMs: s.clockAheadMs,
        appliedSeq: s.appliedSeq,
        gap: s.gap,
        silentAllowedMs: allowed,
        silent: allowed > 0 && now - (s.lastEventMs ?? this.site.startedAtMs) > allowed,
      };
    });
  }

  /**
   * Streams silent longer than config `alarms.streamSilentMs` allows: a stopped module or
   * connector leaves its rows as they were while every freshness budget still holds (nothing is
   * pending). A stream with no event since the site started counts its silence from the start.
   */
  private silentStreams(streams: readonly StreamView[], now: number): Alarm[] {
    return streams
      .filter((v) => v.silent)
      .map((v) => {
        const from = v.lastEventMs ?? this.site.startedAtMs;
        const last = v.lastEventMs === null ? 'none since the site started' : `the last was seq ${v.lastSeq} at ${new Date(v.lastEventMs).toISOString()}`;
        return {
          kind: 'stream_silent' as const,
          message: `${v.stream}: no event for ${secs(now - from)} (${last}; allowed ${secs(v.silentAllowedMs)}) — is the module running and connected? Its rows stay as they were`,
          sinceMs: from + v.silentAllowedMs,
          params: { stream: v.stream, silentMs: now - from, allowedMs: v.silentAllowedMs },
        };
      });
  }

  /** From the inbox's memory: a status comes every few seconds, and approval_inbox holds every proposal ever made. */
  private failedCommands(): Alarm[] {
    const inbox = this.site.decisions?.inbox;
    if (!inbox) return [];
    return inbox.endedCommands().map(
      (c): Alarm => ({
        kind: 'command_failed',
        message: `${c.action} for ${c.id} ${c.state === 'failed' ? 'failed' : 'timed out'}${c.detail ? `: ${c.detail}` : ''}`,
        sinceMs: c.atMs,
        params: { action: c.action, id: c.id, state: c.state, detail: c.detail ?? '' },
      }),
    );
  }

  private syncStatus(): SyncStatus {
    const src = this.o.sync;
    if (!src) {
      return { configured: false, target: null, online: false, pendingItems: 0, pendingBytes: 0, oldestUnsyncedMs: null, lastSuccessMs: null, current: null, recentItems: 0, recentBytes: 0, windowMs: 0, healthy: true, lastError: null };
    }
    return syncView(src.target, src.windowMs, src.status());
  }

  // ------------------------------------------------------------------------------------------
  // Proposals.

  private inbox() {
    const d = this.site.decisions;
    if (!d) throw new SiteApiError('internal', 'the approval inbox is not running on this site');
    return d.inbox;
  }

  /**
   * The templates of the rules in force: the agent's own catalog (the installed rules with the
   * site's rule files, config `agent.ruleFiles`, made when the agent was), so a rule of the site's
   * own shows its proposals in nb and de too.
   */
  private agentTemplates(): MessageTemplates {
    return this.site.decisions?.agent.messages ?? INSTALLED_TEMPLATES;
  }

  private proposalDetail(id: string): ProposalDetail {
    const inbox = this.inbox();
    const p = inbox.get(id);
    if (!p) throw new SiteApiError('not_found', `proposal ${id} does not exist`, undefined, { code: 'proposal.notFound', params: { id } });
    return {
      ...proposalView(p, this.agentTemplates()),
      evidence: p.evidence.map((e) => ({ table: e.table, snapshotId: e.snapshotId, tag: e.tag, rows: e.rows.map((r) => ({ ...r.key, ...r.values })), types: this.columnTypes(e.table), ...this.columnRoles(e.table) })),
      trail: inbox.history(id).map(trailEntry),
      failedBefore: failedBefore(inbox, p).map(failedBeforeView),
      checked: this.checkedState(p),
    };
  }

  /**
   * For an approved or stale proposal, the state its approval was checked against, read at its
   * `checked-<id>` tags as `tilstand evidence` reads it (core/inbox `checkedReport`, the part of
   * `evidenceReport` that reads them); [] for any other, nothing read.
   */
  private checkedState(p: Proposal): CheckedTable[] {
    const kind = p.decision?.kind;
    if (kind !== 'approved' && kind !== 'stale') return [];
    return checkedReport(this.site.catalog, `site_${this.site.config.site}`, p).map((c) => ({
      table: c.table,
      snapshotId: c.snapshotId,
      tag: c.tag,
      tagExists: c.tagExists,
      tagRetainedUntilMs: c.tagRetainedUntilMs,
      rows: c.cited.map((r) => ({ ...r.key, ...r.values })),
      matchesEvidence: c.matchesEvidence,
      changedColumns: c.changedColumns,
      changedCells: c.changedCells,
      sequenceMoved: c.sequenceMoved,
      types: this.columnTypes(c.table),
      ...this.columnRoles(c.table),
      ...(c.problem !== undefined ? { problem: c.problem } : {}),
    }));
  }

  /** A site table's key and sequence columns (the evidence tables put them first and last); empty when it does not exist (any more). */
  private columnRoles(name: string): { keyColumns: string[]; sequenceColumns: string[] } {
    const t = this.tableIfExists(name);
    return t ? { keyColumns: [...t.schema.primaryKeys], sequenceColumns: sequenceColumns(t.schema) } : { keyColumns: [], sequenceColumns: [] };
  }

  /** A site table's column types by name; empty when it does not exist (any more). */
  private columnTypes(name: string): Record<string, string> {
    const t = this.tableIfExists(name);
    return t ? Object.fromEntries(t.schema.fields.map((f) => [f.name, typeToString(f.type)])) : {};
  }

  private async decide(req: SiteApiMethods['decide']['req'], session: SessionContext): Promise<SiteApiMethods['decide']['res']> {
    const d = this.site.decisions;
    if (!d) throw new SiteApiError('internal', 'the approval inbox is not running on this site');
    const user = session.user!;
    let r;
    try {
      r = await d.inbox.decide(req.id, req.decision, { user: user.name, pin: d.tickets.issue(user.name), ...(req.comment ? { comment: req.comment } : {}) });
    } catch (e) {
      // Decided (or withdrawn) meanwhile, or gone: the inbox's message stays, the code says which.
      if (e instanceof InboxError && (e.kind === 'Conflict' || e.kind === 'NotFound')) {
        const p = d.inbox.get(req.id);
        if (!p) throw new SiteApiError('not_found', e.message, undefined, { code: 'proposal.notFound', params: { id: req.id } });
        if (p.status !== 'open' && p.status !== 'deferred') throw new SiteApiError('conflict', e.message, undefined, { code: 'proposal.notOpen', params: { id: req.id, status: p.status } });
        // Another lead's decision recorded while this one was made (core/inbox decided-meanwhile.test.ts).
        if (e.decidedMeanwhileBy !== undefined) {
          throw new SiteApiError('conflict', e.message, undefined, { code: 'proposal.decidedMeanwhile', params: { id: req.id, status: p.status, by: e.decidedMeanwhileBy } });
        }
      }
      throw e;
    }
    return { outcome: r.outcome, ...(r.outcome === 'stale' ? { reason: r.reason } : {}), proposal: proposalView(r.proposal, this.agentTemplates()) };
  }

  private changedProposals(table: Table, from: number | null, to: number | null): string[] {
    if (to === null) return [];
    try {
      const idx = table.schema.fields.findIndex((f) => f.name === 'proposal_id');
      const ids = new Set<string>();
      for (const c of table.changes({ from: from ?? 0, to, mode: 'delta' })) ids.add(String(c.row[idx]));
      return [...ids].slice(0, 500);
    } catch {
      return [];
    }
  }

  // ------------------------------------------------------------------------------------------
  // Tables.

  private table(name: string): Table {
    const t = this.tableIfExists(name);
    if (!t) throw new SiteApiError('not_found', `table ${name} does not exist`);
    return t;
  }

  /**
   * A table of the site's database, or undefined when there is none by that name: the site's kept
   * Table (Site.readTable), not one opened per call, whose empty caches made `tables` and `tags`
   * read every tag file at each call.
   */
  private tableIfExists(name: string): Table | undefined {
    return this.site.readTable(name);
  }

  /** Rows of the latest snapshot (or of `at`, in its snapshot's columns) as objects in JSON form. */
  private rows(name: string, at: ReadPoint = {}): Record<string, unknown>[] {
    const r = this.table(name).reader(at);
    try {
      const fields = r.schema.fields;
      return [...r.scan()].map((row) => Object.fromEntries(fields.map((f, i) => [f.name, valueToJson(f.type, row[i])])));
    } finally {
      r.close();
    }
  }

  /**
   * Dead letters of one status, oldest first; without a status the open ones first (oldest first:
   * what the alarm counts, so none hides behind closed ones), then the replayed and dismissed ones,
   * newest first. Of one topic and/or reason when given (the Ingestor's `lettersOf`, before the
   * cut: a group behind another module's thousands still shows). At most `limit`.
   */
  private deadLetters(status: DeadLetterStatus | undefined, limit: number, of: { topic?: string; reason?: string } = {}): DeadLetter[] {
    return this.site.ingestor.listDeadLetters({ limit, ...of, ...(status ? { status } : { openFirst: true }) });
  }

  /**
   * The work queue's jobs in the screen's order — status (blocked, released, in progress, done; a
   * status the contract does not list first), then priority, highest first, then id — the first
   * `limit` of those whose id, status, capability, item, resource or blocked reason contains
   * `search` (case-insensitive), or whose status is one of `statuses` (the search in the page's
   * words for a status: the site knows only the stored one).
   */
  private jobs(search: string | undefined, limit: number, statuses: readonly string[] = []): JobView[] {
    const q = search?.trim().toLowerCase() ?? '';
    const has = (v: unknown) => typeof v === 'string' && v.toLowerCase().includes(q);
    const all = this.rows('work_queue') as unknown as JobView[];
    const worded = (j: JobView) => statuses.includes(j.status);
    const picked = q ? all.filter((j) => has(j.job_id) || has(j.status) || worded(j) || has(j.capability) || has(j.material_item) || has(j.assigned_resource) || has(j.blocked_reason)) : all;
    const rank = (j: JobView) => JOB_STATUS_ORDER.indexOf(j.status);
    picked.sort((a, b) => rank(a) - rank(b) || (b.priority ?? 0) - (a.priority ?? 0) || (a.job_id < b.job_id ? -1 : a.job_id > b.job_id ? 1 : 0));
    return picked.length > limit ? picked.slice(0, limit) : picked;
  }

  /** Open and deferred proposals (the inbox's memory), oldest first, with what their parameters name. */
  private waiting(): WaitingProposal[] {
    const inbox = this.site.decisions?.inbox;
    if (!inbox) return [];
    const name = (v: unknown): string | null => (typeof v === 'string' ? v : null);
    // openProposals lists them in creation order (a sort by id as a string put …-10 before …-2).
    return inbox
      .openProposals()
      .map((p) => ({
        id: p.id,
        action: p.action,
        status: p.status === 'deferred' ? ('deferred' as const) : ('open' as const),
        risk: p.risk,
        job_id: name(p.params.job_id),
        resource_id: name(p.params.resource_id),
        item: name(p.params.item),
        location: name(p.params.location),
      }));
  }

  /**
   * Stock rows in key order (item, location), at most `limit` of those matching: scanned lazily
   * and five columns only, so a screen's 500 rows of a 1 M-row state do not convert the other
   * rows. Each with the reorder policy the agent applies to it (config.json `agent`).
   */
  private stock(search: string | undefined, limit: number, below: boolean): StockView[] {
    const q = search?.trim().toLowerCase() ?? '';
    const config = this.agentConfig();
    const waiting = new Map<string, WaitingProposal[]>();
    for (const w of this.waiting()) {
      if (w.item === null || w.location === null) continue;
      const k = `${w.item}\u0000${w.location}`;
      const list = waiting.get(k);
      if (list) list.push(w);
      else waiting.set(k, [w]);
    }
    const itemPolicies = new Map<string, StockView['item_policy']>();
    const itemPolicy = (item: string): StockView['item_policy'] => {
      let p = itemPolicies.get(item);
      if (p === undefined) {
        const own = reorderLookup(config, item);
        p = own.scope === 'item' ? { reorder_point: own.policy.reorderPoint, order_up_to: own.policy.orderUpTo } : null;
        itemPolicies.set(item, p);
      }
      return p;
    };
    const table = this.table('stock');
    const reader = table.reader();
    // Cut after sorting, not before: the scan yields each bucket's rows in key order, one bucket
    // after another, so on a table of several buckets the first `limit` rows it met were the first
    // of each bucket, not the first of the table. One bucket read with the key merge (the seed
    // table's) comes in key order, and the scan stops at the limit; otherwise every row is looked
    // at, and only those before the ones kept so far are made into a view.
    const inKeyOrder = reader.snapshot !== undefined && !needsRawScan(table) && table.buckets(reader.snapshot).length <= 1;
    const first = new FirstN<{ item: string; location: string }, StockView>(limit, compareStockKey);
    try {
      for (const [itemV, locationV, onHandV, reservedV, inboundV] of reader.scan({ projection: ['item', 'location', 'on_hand', 'reserved', 'inbound'] })) {
        const item = String(itemV ?? '');
        const location = String(locationV ?? '');
        if (q && !item.toLowerCase().startsWith(q) && !location.toLowerCase().startsWith(q)) continue;
        if (!first.wants({ item, location })) continue;
        const onHand = numberOrNull(onHandV);
        const reserved = numberOrNull(reservedV);
        const inbound = numberOrNull(inboundV);
        const { policy, scope } = reorderLookup(config, item, location);
        const { reorderPoint, orderUpTo } = policy;
        const set = scope === 'default' ? undefined : this.site.lastFloorSetting(reorderPolicyKey(item, scope === 'location' ? location : null));
        const after = set?.after as { reorderPoint?: unknown; orderUpTo?: unknown } | null | undefined;
        // Only while config.json still holds what was set: a hand edit since is nobody's.
        const reorderSet = set && after?.reorderPoint === reorderPoint && after.orderUpTo === orderUpTo ? { by: set.user, atMs: set.atMs } : null;
        // The agent's own position (nulls as 0; a negative reserved or inbound, a module's
        // correction, as 0), so a row only commerce or procurement has written yet counts as the
        // agent counts it.
        const position = stockPosition({ on_hand: onHand, reserved, inbound });
        const belowPoint = position < reorderPoint;
        if (below && !belowPoint) continue;
        // available and projected by the same helper: computed here from the raw values, a
        // negative reserved showed more available than the agent counts, on a row it marks below.
        const available = onHand === null ? null : stockPosition({ on_hand: onHand, reserved, inbound: 0 });
        first.add({ item, location, on_hand: onHand, reserved, inbound, available, projected: onHand === null ? null : position, reorder_point: reorderPoint, order_up_to: orderUpTo, reorder_scope: scope, reorder_set: reorderSet, item_policy: itemPolicy(item), below_reorder_point: belowPoint, waiting: waiting.get(`${item}\u0000${location}`) ?? [] });
        if (inKeyOrder && first.full) break;
      }
    } finally {
      reader.close();
    }
    return first.sorted();
  }

  /** The agent's tunables in force (the running agent's, or config.json's without one). */
  private agentConfig() {
    return this.site.decisions?.agent.config ?? decisionOptions(this.site.config).agent;
  }

  private tables(): TableInfo[] {
    return this.freshness().map((f) => {
      const t = this.table(f.table);
      const latest = t.latestSnapshot();
      const earliest = t.snapshots.earliestId();
      let debt = 0;
      if (latest) {
        const trigger = t.schema.options.compactionTrigger;
        for (const b of t.buckets(latest)) {
          const runs = sortedRuns(b.files, (x, y) => t.compareKeys(t.keyRange(x).min, t.keyRange(y).min)).length;
          debt += Math.max(0, runs - trigger);
        }
      }
      return {
        ...f,
        snapshots: latest && earliest !== undefined ? latest.id - earliest + 1 : 0,
        tags: t.listTags().length,
        bytes: this.bytesOf(f.table, t.paths.root, latest),
        compactionDebt: debt,
      };
    });
  }

  /**
   * The bytes under a table's folder, read again only when its latest snapshot changed: its id or
   * its delta manifest list (as core/lsm's `bucketIndex` keys what it keeps). By the id alone, a
   * table another process rolled back and committed again up to the same id kept the old size.
   */
  private bytesOf(name: string, dir: string, latest: Snapshot | undefined): number {
    const key = latest === undefined ? null : `${latest.id}/${latest.deltaManifestList}`;
    const c = this.bytesCache.get(name);
    if (c && c.key === key) return c.bytes;
    const bytes = dirBytes(dir);
    this.bytesCache.set(name, { key, bytes });
    return bytes;
  }

  private readPoint(t: Table, at: ReadPointRequest): ReadPoint {
    if ('tag' in at) return { tag: at.tag };
    if ('snapshotId' in at) return { snapshotId: at.snapshotId };
    if ('timestampMs' in at) return { timestampMs: at.timestampMs };
    void t;
    return {};
  }

  /**
   * The table as it was at `at`: at most `limit` rows (`more` says there were others), those with
   * a cell that contains `contains` (case-insensitive, as the cell is shown) when it is given, or
   * whose cell of a `worded` column is one of its values (`cellFilter`).
   */
  private history(name: string, at: ReadPointRequest, limit: number, contains?: string, worded?: readonly WordedValues[]): HistoryResult {
    const t = this.table(name);
    // In the columns the table had at that snapshot (time travel reads in the snapshot's schema);
    // the latest (no point) in today's.
    const r = t.reader(this.readPoint(t, at));
    const snapshot = r.snapshot;
    const fields = r.schema.fields;
    const keep = cellFilter(contains, fields, worded);
    const rows: unknown[][] = [];
    let more = false;
    try {
      for (const row of r.scan()) {
        const out = fields.map((f, i) => valueToJson(f.type, row[i]));
        if (!keep(out)) continue;
        if (rows.length === limit) {
          more = true;
          break;
        }
        rows.push(out);
      }
    } finally {
      r.close();
    }
    return {
      table: name, snapshotId: snapshot?.id ?? null, snapshotMs: snapshot?.timeMillis ?? null,
      columns: fields.map((f) => f.name), types: fields.map((f) => typeToString(f.type)), rows, more,
      // The snapshot's own key and sequence columns, as its columns are (History puts them first and last).
      keyColumns: [...r.schema.primaryKeys], sequenceColumns: sequenceColumns(r.schema),
    };
  }

  /** What changed between two points of a table, as `history` filters and cuts it. */
  private diff(name: string, from: ReadPointRequest, to: ReadPointRequest, limit: number, contains?: string, worded?: readonly WordedValues[]): DiffResult {
    const t = this.table(name);
    const a = t.resolve(this.readPoint(t, from));
    const b = t.resolve(this.readPoint(t, to));
    // Both states in today's columns (Table.changes compares two snapshots in the latest schema,
    // mapping older files by field id), not in either snapshot's own: one set of columns for both.
    const fields = t.schema.fields;
    const keep = cellFilter(contains, fields, worded);
    function* kept(): Generator<DiffResult['changes'][number]> {
      if ((a?.id ?? 0) === (b?.id ?? 0)) return;
      for (const c of t.changes({ from: a?.id ?? 0, to: b?.id ?? 0, mode: 'diff' })) {
        const row = fields.map((f, i) => valueToJson(f.type, c.row[i]));
        if (keep(row)) yield { kind: c.kind, row };
      }
    }
    const { changes, more } = cutChanges(kept(), limit);
    return {
      table: name, from: { snapshotId: a?.id ?? null, snapshotMs: a?.timeMillis ?? null }, to: { snapshotId: b?.id ?? null, snapshotMs: b?.timeMillis ?? null },
      columns: fields.map((f) => f.name), types: fields.map((f) => typeToString(f.type)), changes, more,
      keyColumns: [...t.schema.primaryKeys], sequenceColumns: sequenceColumns(t.schema),
    };
  }
}

/**
 * The first `limit` changes, and whether there were more; the cut never parts an update's before
 * (-U) from its after (+U), so it may keep one more.
 */
export function cutChanges<C extends { kind: string }>(all: Iterable<C>, limit: number): { changes: C[]; more: boolean } {
  const changes: C[] = [];
  for (const c of all) {
    if (changes.length >= limit && !(c.kind === '+U' && changes[changes.length - 1]?.kind === '-U')) return { changes, more: true };
    changes.push(c);
  }
  return { changes, more: false };
}

/**
 * History's row filter: some cell, as the API gives it (nested values as JSON), contains the text
 * (case-insensitive), or a cell of a `worded` column of `fields` is one of its values — the text as
 * the page words them ("pågår" for in_progress), which only the page knows. Without a text, every row.
 */
function cellFilter(contains: string | undefined, fields: readonly { name: string }[], worded: readonly WordedValues[] = []): (row: unknown[]) => boolean {
  const q = contains?.trim().toLowerCase();
  if (!q) return () => true;
  const has = (v: unknown) => v !== null && v !== undefined && (typeof v === 'object' ? JSON.stringify(v) : String(v)).toLowerCase().includes(q);
  // By the column's place in the columns read; a column they do not have (another schema) names no cell.
  const named = worded.flatMap((w) => {
    const i = fields.findIndex((f) => f.name === w.column);
    return i < 0 ? [] : [{ i, values: new Set(w.values) }];
  });
  return (row) => row.some(has) || named.some((w) => typeof row[w.i] === 'string' && w.values.has(row[w.i] as string));
}

// --------------------------------------------------------------------------------------------

/** The templates of the installed rules' messages (a site without its agent, as in a test). */
const INSTALLED_TEMPLATES = messageCatalog(DEFAULT_RULES);

/**
 * A proposal as the UI gets it, its texts translated by `templates` (the messages of the rules in
 * force). A proposal of a rule the site no longer runs (a rule file taken out of config.json)
 * translates as far as those templates still say its messages; the rest shows its stored English.
 */
function proposalView(p: Proposal, templates: MessageTemplates): ProposalView {
  const d = p.decision;
  const translated = translations(p, templates);
  return {
    id: p.id,
    status: p.status,
    action: p.action,
    module: p.module,
    params: { ...p.params },
    ruleId: p.ruleId,
    ruleVersion: p.ruleVersion,
    risk: p.risk,
    riskReason: p.riskReason,
    explanation: p.explanation,
    ...(Object.keys(translated).length > 0 ? { translations: translated } : {}),
    createdMs: p.createdAtMs,
    ...(d && d.kind !== 'deferred' ? { decidedBy: d.by, decidedMs: d.atMs } : {}),
    ...(d?.comment ? { comment: d.comment } : {}),
    ...(p.command && p.module ? { command: { module: p.module, progress: p.command.state, updatedMs: p.command.updatedAtMs, ...(p.command.detail ? { detail: p.command.detail } : {}) } } : {}),
    ...(d?.kind === 'stale' && d.reason ? { staleReason: d.reason } : {}),
    ...(p.withdrawnReason ? { withdrawnReason: p.withdrawnReason } : {}),
    // The withdrawal's time is the agent part's last change: nothing changes it after (core/inbox proposal.ts).
    ...(p.status === 'withdrawn' ? { withdrawnMs: p.agentUpdatedAtMs } : {}),
  };
}

/** The write-back's actor in the decision log (core/inbox `markCommand`'s default): its command details are its own, not a module's. */
const WRITE_BACK_ACTOR = 'write-back';

/**
 * One decision-log entry as the trail shows it: its detail as one English line and as named parts;
 * a command's detail that is write-back's own with its code and numbers (`writeBackWords`), so a UI
 * words it in its language — never what a module said, even if it read the same.
 */
export function trailEntry(e: { atMs: number; event: string; actor: string; detail: unknown }): ProposalDetail['trail'][number] {
  const fields = trailFields(e.detail).map((f) => {
    const words = e.event.startsWith('command_') && e.actor === WRITE_BACK_ACTOR && f.name === 'detail' ? writeBackWords(f.value) : null;
    return words ? { ...f, ...words } : f;
  });
  const detail = trailDetail(e.detail, fields);
  return { atMs: e.atMs, event: e.event, user: e.actor, ...(detail ? { detail } : {}), ...(fields.length ? { fields } : {}) };
}

/**
 * An earlier failure of the situation: what the module said, or — a command never sent, which only
 * write-back fails (a module's refusal marks it sent first) — write-back's own detail with its code.
 */
export function failedBeforeView(f: CommandFailure): ProposalDetail['failedBefore'][number] {
  const words = f.sent ? null : writeBackWords(f.detail);
  return { id: f.id, atMs: f.atMs, detail: f.detail, ...(words ?? {}) };
}

const TRAIL_FIELDS: readonly TrailField['name'][] = ['reason', 'comment', 'detail', 'decision', 'action'];

/** The parts of a log entry's detail a person reads, each cut to 500 characters. */
function trailFields(detail: unknown): TrailField[] {
  if (detail === null || detail === undefined || typeof detail !== 'object' || Array.isArray(detail)) return [];
  const o = detail as Record<string, unknown>;
  const out: TrailField[] = [];
  for (const name of TRAIL_FIELDS) {
    const v = o[name];
    if (v !== null && v !== undefined) out.push({ name, value: (typeof v === 'string' ? v : JSON.stringify(v)).slice(0, 500) });
  }
  return out;
}

/** The same as one line (`reason: …; comment: …`), or the detail itself when it is no object. */
function trailDetail(detail: unknown, fields: readonly TrailField[]): string | undefined {
  if (detail === null || detail === undefined) return undefined;
  if (typeof detail !== 'object' || Array.isArray(detail)) return String(detail);
  return fields.length ? fields.map((f) => `${f.name}: ${f.value}`).join('; ').slice(0, 500) : undefined;
}

function userView(u: User): UserView {
  return { name: u.name, roles: [u.role], disabled: u.disabled, lockedUntilMs: u.lockedUntilMs, hasBadge: u.hasBadge };
}

function oneRole(roles: Role[]): InboxRole {
  const unique = [...new Set(roles)];
  if (unique.length !== 1) throw new SiteApiError('invalid', `roles: a user has exactly one role (viewer, operator, shift_lead or admin), got ${unique.length}`);
  return unique[0]!;
}

/** A PIN (4–12 digits) or a password, as an admin chose it: a guessable PIN is refused. */
function secretOf(secret: string): { pin: string } | { password: string } {
  if (!isPin(secret)) return { password: secret };
  const why = guessablePin(secret);
  if (why) throw new SiteApiError('invalid', `secret: ${guessablePinMessage(secret, why)}`, undefined, guessablePinRefusal(secret, why));
  return { pin: secret };
}

function parsePosition(id: string): bigint {
  if (!/^[0-9]{1,20}$/.test(id)) throw new SiteApiError('invalid', `ids: expected journal positions (digits), got ${JSON.stringify(id.slice(0, 32))}`);
  return BigInt(id);
}

/** Why sync is not healthy (`sync_stalled` params.reason; the floor UI words each case). */
export type SyncStallReason = SyncProblem | 'other';

const SYNC_STALL_TEXT: Record<SyncStallReason, string> = {
  refused: 'sync to HQ is refused: another PC sends for this site (docs/operations.md, "Two PCs for one site")',
  gone: "sync to HQ is stopped: HQ no longer holds this site's sender marker (is HQ's share mounted? was HQ's copy deleted?); nothing is sent until it is back (docs/operations.md, \"HQ's folder is empty\")",
  credentials: "sync to HQ is refused: HQ does not accept this site's credentials (check the access key and HQ's policy for the site; for a directory HQ, that the site may write its folder)",
  step: 'sync to HQ is not healthy: a step has failed for the whole health window while HQ took other requests',
  waiting: 'sync to HQ has made no progress within the health window',
  planning: 'sync to HQ is not healthy: a table or contract file has been left out of planning for the whole health window',
  other: 'sync to HQ is not healthy',
};

/**
 * Which of core/sync statusOf()'s causes makes `st` unhealthy: the first of its `problems` (most
 * pressing first), or 'other' when it gives none (an engine before `problems`).
 */
export function syncStallReason(st: Pick<EngineSyncStatus, 'problems'>): SyncStallReason {
  return st.problems?.[0] ?? 'other';
}

/** One key per alarm and subject (a table, a command, a stream), whatever its message says now. */
function alarmKey(a: Alarm): string {
  switch (a.kind) {
    case 'budget_breach':
      return `${a.kind}|${a.message.split(' ')[0]}`;
    case 'command_failed':
      return `${a.kind}|${a.message.split(' ')[2]}`;
    case 'stream_only_duplicates':
    case 'stream_silent':
    case 'clock_ahead':
      return `${a.kind}|${a.message.split(':')[0]}`;
    case 'module_refused':
      return `${a.kind}|${a.message.split(' refused: ')[0]}`;
    default:
      return `${a.kind}|`;
  }
}

/**
 * A stream whose newest event is stamped this far after its receipt raises `clock_ahead`: transit
 * only ever makes an event look older, so minutes ahead is a clock set wrong, not the network.
 */
export const CLOCK_AHEAD_ALARM_MS = 120_000;

const secs = (ms: number): string => (ms < 120_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`);

function dirBytes(dir: string): number {
  let n = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) n += dirBytes(p);
    else {
      try {
        n += statSync(p).size;
      } catch {
        // removed meanwhile (expiration)
      }
    }
  }
  return n;
}

/**
 * A ConfigError at setReorderPolicy as a refusal: the levels given (order-up-to not above the
 * reorder point) when it names the key being set and they are the fault, else the key of
 * config.json that does not validate (a hand edit of the file; nothing was changed), or the file
 * as a whole (`(file)`: gone, unreadable, not JSON, or JSON but no object, `[]` or `3`).
 */
function configRefusal(e: ConfigError, method: string, req: unknown): Refusal | undefined {
  if (method !== 'setReorderPolicy' || e.key.startsWith('--')) return undefined;
  if (e.key === '(file)') return { code: 'config.file' };
  const r = req as SiteApiMethods['setReorderPolicy']['req'];
  const location = r.location ?? null;
  if (r.policy && r.policy.orderUpTo <= r.policy.reorderPoint && e.key === reorderLevelsErrorKey(r.item, location)) {
    const params = { item: r.item, reorderPoint: r.policy.reorderPoint, orderUpTo: r.policy.orderUpTo };
    return { code: 'reorder.levels', params: location === null ? params : { ...params, location } };
  }
  return { code: 'config.refused', params: { key: e.key } };
}

/**
 * Subsystem errors → the API's kinds. The kinds a person can act on (a bad argument, something
 * not found, a conflict, a refusal) keep their message: the UI shows it. Anything else is a
 * failure nobody foresaw, whose message may name files, SQL or stack fragments: the client gets a
 * generic text with an id, the site's log the whole error under that id (internal-error.ts).
 */
function apiError(e: unknown, method: string, session: SessionContext, site: { logLine(line: string): void }, req?: unknown): Error {
  if (e instanceof SiteApiError) return e;
  const err = e as Error & { kind?: string; reason?: string };
  // config.json refused a change (a reorder point set from the Stock screen): the key is named.
  if (e instanceof ConfigError) return new SiteApiError('invalid', err.message, undefined, configRefusal(e, method, req));
  // The user store's refusals carry their code (a name taken, a password too short, a user removed meanwhile).
  if (e instanceof UserError && e.refusal) {
    const kind = ({ NotFound: 'not_found', InvalidArgument: 'invalid', AlreadyExists: 'conflict' } as const)[e.kind];
    return new SiteApiError(kind, err.message, undefined, e.refusal);
  }
  if (e instanceof InboxError) {
    const kind = ({ NotFound: 'not_found', InvalidArgument: 'invalid', Refused: 'forbidden', Conflict: 'conflict' } as const)[e.kind];
    return new SiteApiError(kind, err.message);
  }
  switch (err?.kind) {
    case 'NotFound':
      return new SiteApiError('not_found', err.message);
    case 'InvalidArgument':
      return new SiteApiError('invalid', err.message);
    case 'AlreadyExists':
    case 'Conflict':
      return new SiteApiError('conflict', err.message);
    default:
      return new SiteApiError('internal', reportInternalError((l) => site.logLine(l), callIn(method, session.user), e));
  }
}
