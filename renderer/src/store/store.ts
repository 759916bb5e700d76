// One zustand store split into slices (zustand's recommended shape): state, plain selectors, and
// actions that call the site API and hold no business logic. Events pushed by the site arrive via
// `applyEvent` and only say what to refetch. `createAppStore(api)` makes a fresh store — tests
// make one per test.
//
// Invariants: what one person saw is gone when the session ends (sign-out, idle sign-out, the
// site's `unauthenticated`, `me` answering null) and before the next signs in (`resetSession`: every slice but the
// language and the first-run state back to where it started); no reply applies after the session it
// was asked in ended, and one of a numbered kind (a proposal selected, the waiting and Decided
// lists, a work or stock search, the status, Tables and Sync reads) only when it answers the
// newest request of that kind; no status or sync state, read or pushed, over one the site made
// after it (OVERTAKEN_MS_MAX); one decision is on its way at
// a time (`deciding`), and one change to the dead letters or the users (`deadLettersBusy`,
// `usersBusy`), one sign-in (`signingIn`) and one first-run setup (`settingUp`).
import { createStore, type StoreApi } from 'zustand/vanilla';
import type {
  DeadLetterGroupView, DeadLetterView, FirstRunStatus, HistoryResult, JobView, ProposalDetail, ProposalStatus, ProposalView, ResourceView, SessionUser,
  ConfigChangeView, SiteApi, SiteApiMethods, SiteEvent, SiteStatus, StockView, SyncStatus, TableInfo, UserView, ReadPointRequest, DiffResult, WaitingProposal,
} from '../../../core/site/api.ts';
import { columnsWorded, errorLine, formatDuration, NO_ANSWER_MESSAGE, refusalText, translate, valuesWorded, type Lang, type RefusalLike } from '../i18n/messages.ts';
import { GLOBAL_TIMERS, type IdleTimers } from '../idle.ts';
import { compareProposalIds } from './proposal-order.ts';

export type Screen = 'inbox' | 'work' | 'stock' | 'tables' | 'history' | 'sync' | 'deadLetters' | 'users';

interface SessionSlice {
  /** null until asked; `initialized: false` shows the first-run screen. */
  firstRun: FirstRunStatus | null;
  firstRunError: string | null;
  /** The refusal behind `firstRunError` (a guessable PIN), for `selectFirstRunErrorText`. */
  firstRunRefusal: RefusalLike | null;
  /** The page's first `firstRun` read failed and has not been answered since (App says so; asked again every FIRST_RUN_RETRY_MS). */
  firstRunUnread: boolean;
  loadFirstRun(): Promise<void>;
  /** `initSite` is on its way: another is not sent (the site refuses a second at once, "already set up"). */
  settingUp: boolean;
  initSite(siteId: string, adminName: string, adminPin: string): Promise<void>;
  user: SessionUser | null;
  signInError: string | null;
  /** The refusal behind `signInError` as the site sent it (code, params), for `selectSignInErrorText`. */
  signInRefusal: RefusalLike | null;
  /**
   * A sign-in is on its way: another is not sent (a double tap spent two of the attempts before
   * the lockout, and its refusal, answered after the first had signed in, stood for the next person).
   */
  signingIn: boolean;
  signIn(user: string, secret: string): Promise<void>;
  signInBadge(badge: string): Promise<void>;
  signOut(): Promise<void>;
  /** Signs out after `idleMs` without use of the screen (the sign-in screen then says why). */
  signOutIdle(idleMs: number): Promise<void>;
  /** Set by `signOutIdle`: how long the screen had been left (ms); null otherwise. */
  signedOutIdleMs: number | null;
  loadMe(): Promise<void>;
}
interface UiSlice {
  lang: Lang;
  screen: Screen;
  error: string | null;
  /** The refusal behind `error` as the site sent it (code, params), for `selectErrorText`. */
  errorRefusal: RefusalLike | null;
  setLang(lang: Lang): void;
  go(screen: Screen): void;
  clearError(): void;
}
interface InboxSlice {
  proposals: ProposalView[];
  selected: ProposalDetail | null;
  lastOutcome: { id: string; outcome: ProposalStatus; reason?: string } | null;
  /** A decision is on its way to the site: another is not sent (a double tap, a key held down). */
  deciding: boolean;
  /**
   * Another proposal asked for (a row tapped, N) whose read is on its way, or null: the panel still
   * shows the one before, and its decision buttons send nothing until it comes (`decide`).
   */
  opening: string | null;
  /**
   * After a decision made here (or one refused as no longer open or gone, `decide`), the proposal
   * that followed the decided one in the list as it was shown then (wrapping, as N does), among
   * those still listed; null when none is. The decided one
   * leaves the list, so N and the keyboard focus (Inbox.tsx) go on from its place, not the top.
   * After a deferral that took the panel on to the next open proposal, `deferred` and `next` that
   * one: the deferred row stays listed, at the list's end, and a focus left on it goes to `next`'s.
   */
  afterDecision: { decided: string; next: string | null; deferred?: true } | null;
  /** Which list the inbox screen shows: what waits for a decision, or what was decided lately. */
  inboxView: 'waiting' | 'decided';
  /**
   * The newest DECIDED_ROWS approved, rejected and stale proposals and the newest WITHDRAWN_ROWS
   * withdrawn ones, the newest decision (or withdrawal) first (`newestEndedFirst`); null until asked.
   */
  decided: ProposalView[] | null;
  /**
   * Whether the Decided list shows the withdrawn ones too (`decidedShown`). Off at first: a busy
   * floor's withdrawals (43 of 47 rows after 15 minutes of the demo) buried the lead's decisions
   * thousands of pixels down. Kept for the session, not on this PC: the next person starts with
   * the decisions.
   */
  showWithdrawn: boolean;
  /** Shows that list (the decided one read again). */
  showInboxView(view: 'waiting' | 'decided'): void;
  /** Shows the withdrawn ones in the Decided list, or not; a withdrawn one open there is let go when hidden. */
  setShowWithdrawn(on: boolean): void;
  loadDecided(): Promise<void>;
  loadProposals(): Promise<void>;
  select(id: string | null): Promise<void>;
  /** Resolves true when the site took the decision (a failure is the visible error; false too when none was sent). */
  decide(decision: 'approve' | 'reject' | 'defer', comment?: string): Promise<boolean>;
  selectNext(): Promise<void>;
}
interface StateSlice {
  /** The status as the site sent it last (shown through `selectShownStatus`, which ages it while the site is quiet). */
  status: SiteStatus | null;
  /**
   * No status for SITE_QUIET_PUSHES of the site's push intervals (at least SITE_QUIET_MIN_MS): when
   * the last one came (this page's wall clock) and how long ago (its monotonic clock); null while
   * the site speaks. Set by `checkSite`, cleared by the next status.
   */
  siteQuiet: { sinceMs: number; forMs: number } | null;
  /** Whether the site has gone quiet, or spoken again (the header calls it every second). */
  checkSite(): void;
  jobs: JobView[];
  resources: ResourceView[];
  /** Proposals waiting for a decision that name a job or a resource (the work queue shows them on the row). */
  waiting: WaitingProposal[];
  /** The work queue's search (job, status, item, resource…), and whether more jobs matched than WORK_ROWS. */
  workSearch: string;
  /**
   * The search the jobs and resources shown were read with (the reply's; `workSearch` may be ahead
   * of it, on its way or refused): the screen filters the machines and teams by it, as the site did the jobs.
   */
  workShownSearch: string;
  jobsMore: boolean;
  stock: StockView[];
  stockSearch: string;
  /** More stock rows matched than STOCK_ROWS: the screen says so. */
  stockMore: boolean;
  /** Only rows under their reorder point (the Stock screen's filter). */
  stockBelow: boolean;
  /** Whether the stock rows shown were read with a search or the below filter (the reply's; the two above may be ahead, on their way or refused). */
  stockFiltered: boolean;
  /** The reorder points people changed from this UI, newest first; null until asked. */
  configChanges: ConfigChangeView[] | null;
  tables: TableInfo[];
  sync: SyncStatus | null;
  deadLetters: DeadLetterView[];
  /** Where the open letters come from: topic-and-reason groups, the largest first (asked with the list). */
  deadLetterGroups: DeadLetterGroupView[];
  /** The one group the list is of (chosen in the summary; the site filters before its limit), or null: every letter. */
  deadLetterFilter: { topic: string; reason: string } | null;
  /**
   * The group `deadLetters` was read with (null: every letter), what the screen says of the list:
   * the chosen one may be on its way, and one refused goes back to this one.
   */
  deadLettersReadWith: { topic: string; reason: string } | null;
  replayResult: { replayed: number; failed: number } | null;
  /** A replay or a dismissal of dead letters is on its way: another is not sent (a double tap). */
  deadLettersBusy: boolean;
  users: UserView[];
  /** A change to the users (add, disable, enable, PIN reset) is on its way: another is not sent. */
  usersBusy: boolean;
  history: HistoryResult | null;
  diff: DiffResult | null;
  /**
   * The "rows containing" filter (trimmed; '' for none) the history or comparison shown was read
   * with: kept with them, so a read refused leaves the rows and the filter said of them together.
   */
  historyContains: string;
  /** Tags of the table the History screen shows, newest first. */
  tags: SiteApiMethods['tags']['res'];
  /**
   * The table `tags` are of (null: none read yet), kept until another table's come: while a table
   * just picked has its tags on their way, the screen offers none of these (the picker listed the
   * table picked before's, one of them picked, and Show read it as a point of the new table).
   */
  tagsTable: string | null;
  /**
   * The table and search ('' for none) `tags` were read for; null while a read of them is on its
   * way, or after it failed (the error line says why): until then the screen says nothing of what
   * the table has (it said "stock has no tags yet" of a table whose tags had not come).
   */
  tagsReadFor: { table: string; search: string } | null;
  /** The newest tags of `table` (the site sends at most TAGS_SHOWN), those whose name contains `search` when given. */
  loadTags(table: string, search?: string): Promise<void>;
  loadStatus(): Promise<void>;
  loadWork(search?: string): Promise<void>;
  loadStock(search?: string, below?: boolean): Promise<void>;
  /**
   * Sets (or, given null, removes) the agent's reorder policy of an item, or of one location of it
   * (shift lead or admin), then reloads the stock; false when refused (the error is shown).
   */
  setReorderPolicy(item: string, location: string | null, policy: { reorderPoint: number; orderUpTo: number } | null): Promise<boolean>;
  /** The newest CONFIG_CHANGES_SHOWN changes (site API `configChanges`). */
  loadConfigChanges(): Promise<void>;
  loadTables(): Promise<void>;
  loadSync(): Promise<void>;
  loadDeadLetters(): Promise<void>;
  /** Lists only the letters of one topic and reason (null: all again), and reads the list again. */
  filterDeadLetters(filter: { topic: string; reason: string } | null): Promise<void>;
  /**
   * Every open letter, or `ids` and — `alike` — every other open letter from the topic of one of
   * them with its reason (listed or not: the site finds them).
   */
  replayDeadLetters(ids?: string[], alike?: boolean): Promise<void>;
  /**
   * Resolves true when the site dismissed them (a failure is the visible error). `alike`: the
   * site also closes every other open letter with the same topic and reason.
   */
  dismissDeadLetters(ids: string[], note: string, alike?: boolean): Promise<boolean>;
  loadUsers(): Promise<void>;
  /** Resolves true when the site added the user (a failure is the visible error; false too while another change is on its way). */
  addUser(name: string, roles: UserView['roles'], secret: string, badge?: string): Promise<boolean>;
  disableUser(name: string): Promise<void>;
  enableUser(name: string): Promise<void>;
  /** Resolves true when the site set the new secret (a failure is the visible error; false too while another change is on its way). */
  resetSecret(name: string, secret: string): Promise<boolean>;
  /** `contains`: only rows with a cell that contains it (the site filters before the cut at HISTORY_ROWS). */
  loadHistory(table: string, at: ReadPointRequest, contains?: string): Promise<void>;
  loadDiff(table: string, from: ReadPointRequest, contains?: string): Promise<void>;
}

export type AppState = SessionSlice & UiSlice & InboxSlice & StateSlice & {
  applyEvent(e: SiteEvent): void;
  /**
   * The pushed events were broken off and flow again (a new events socket): what they said
   * meanwhile is lost, so the status, the inbox, the open proposal and the screen shown are read again.
   */
  resync(): void;
};
export type AppStore = StoreApi<AppState>;

/** Changes of reorder points the Stock screen lists. */
export const CONFIG_CHANGES_SHOWN = 20;
/** Tags the History screen asks for at most: the newest, or the newest whose name contains the search. */
export const TAGS_SHOWN = 200;
/** The History screen shows at most this many rows (or changes) of a read. */
export const HISTORY_ROWS = 500;

/** The inbox lists at most this many proposals: the most urgent (the site sorts and cuts). */
export const INBOX_ROWS = 200;
/** The inbox's Decided list shows at most this many decided ones: the newest approved, rejected and stale (`tilstand proposals` lists any). */
export const DECIDED_ROWS = 200;
/**
 * And at most this many withdrawn ones, the newest. Apart from the decided ones: a busy floor has
 * the agent withdraw several proposals a minute, and in one cut of 200 they pushed out the
 * approvals of the shift's first hours, which the list is for. A lead looks for a withdrawn one
 * minutes after it vanished from the waiting list.
 */
export const WITHDRAWN_ROWS = 50;

/** When a proposal left the waiting list: its decision, or (withdrawn) its withdrawal; else when it was made. */
const endedMs = (p: ProposalView): number => (p.status === 'withdrawn' ? p.withdrawnMs : p.decidedMs) ?? p.createdMs;

/** The decided and the withdrawn proposals as one list, the newest decision or withdrawal first (as the site's `order: 'decided'`). */
export function newestEndedFirst(decided: readonly ProposalView[], withdrawn: readonly ProposalView[]): ProposalView[] {
  return [...decided, ...withdrawn].sort((a, b) => endedMs(b) - endedMs(a) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** The Decided list's rows as shown: the decisions alone, or (`showWithdrawn`) the withdrawn ones among them, in the merged order. */
export function decidedShown(decided: readonly ProposalView[] | null, showWithdrawn: boolean): ProposalView[] {
  if (!decided) return [];
  return showWithdrawn ? [...decided] : decided.filter((p) => p.status !== 'withdrawn');
}
/**
 * How long a sign-in waits for the site's answer; then the person may try again. Unbounded, one
 * the site never answered (stuck at a commit, a request the line dropped) kept the Sign in button
 * disabled until a reload. A sign-in takes well under a second; 15 s allows a busy site.
 */
export const SIGN_IN_TIMEOUT_MS = 15_000;
/**
 * How often the page's first question (is the site set up?) is asked again while it goes
 * unanswered: asked once, a site down or restarting then left the page blank until a reload.
 */
export const FIRST_RUN_RETRY_MS = 3_000;
/** The sign-in screen's error when the site did not answer within SIGN_IN_TIMEOUT_MS (worded by selectSignInErrorText). */
const SIGN_IN_UNANSWERED: RefusalLike = { message: `the site did not answer the sign-in within ${SIGN_IN_TIMEOUT_MS / 1000} s` };

/**
 * A status or sync state the site made at most this long before the one shown is taken for one
 * overtaken on its way and is not shown over it: a push and a read's reply come by two ways (the
 * events socket, the read's request; one waits behind a lost packet). One made longer before is
 * the site's clock stepped back, and is shown: else the screen would keep the last state until the
 * clock had caught up, an hour for an hour. 10 s: two status pushes; a step back shorter than this
 * holds the state shown at most as long as the step.
 */
export const OVERTAKEN_MS_MAX = 10_000;

/** Whether a state the site made at `madeMs` may replace the one shown, made at `shownMs` (OVERTAKEN_MS_MAX); either unknown: it may. */
function notOvertaken(madeMs: number | null | undefined, shownMs: number | null | undefined): boolean {
  if (typeof madeMs !== 'number' || typeof shownMs !== 'number') return true;
  return madeMs >= shownMs || shownMs - madeMs > OVERTAKEN_MS_MAX;
}

/** The Work queue and Stock screens show at most this many jobs / rows (the site sorts and cuts). */
export const WORK_ROWS = 500;
export const STOCK_ROWS = 500;

/** `{[name]: text}` for a search typed (trimmed), `{}` for none. */
function filterBy<K extends string>(name: K, text: string | undefined): Partial<Record<K, string>> {
  const q = text?.trim();
  return q ? ({ [name]: q } as Record<K, string>) : {};
}

/**
 * The UI's language at start: the one last picked on this PC, else the first of the browser's
 * (in Electron: the system's) languages the UI has — Norwegian for `nb`, `nn` or `no`, German for
 * `de` — else English.
 */
export function initialLang(saved: string | null, preferred: readonly string[]): Lang {
  if (saved === 'nb' || saved === 'de' || saved === 'en') return saved;
  for (const tag of preferred) {
    const base = tag.toLowerCase().split('-')[0];
    if (base === 'nb' || base === 'nn' || base === 'no') return 'nb';
    if (base === 'de' || base === 'en') return base;
  }
  return 'en';
}

const savedLang = (): Lang => {
  let saved: string | null = null;
  try {
    saved = localStorage.getItem('tilstand.lang');
  } catch {
    // no storage (tests in node, a locked-down browser): the browser's languages decide
  }
  const nav = (globalThis as { navigator?: { languages?: readonly string[]; language?: string } }).navigator;
  return initialLang(saved, nav?.languages ?? (nav?.language ? [nav.language] : []));
};

/** The state one person's session fills in: every slice but the language and the first-run state. */
type SessionState = Pick<
  AppState,
  | 'user' | 'screen' | 'error' | 'errorRefusal' | 'proposals' | 'selected' | 'lastOutcome' | 'deciding' | 'opening' | 'afterDecision' | 'inboxView' | 'decided' | 'showWithdrawn' | 'status' | 'siteQuiet' | 'jobs' | 'resources' | 'waiting' | 'workSearch' | 'workShownSearch' | 'jobsMore'
  | 'stock' | 'stockSearch' | 'stockMore' | 'stockBelow' | 'stockFiltered' | 'configChanges' | 'tables' | 'sync' | 'deadLetters' | 'deadLetterGroups' | 'deadLetterFilter' | 'deadLettersReadWith' | 'replayResult' | 'deadLettersBusy' | 'users' | 'usersBusy'
  | 'history' | 'diff' | 'historyContains' | 'tags' | 'tagsTable' | 'tagsReadFor'
>;

/** The session state before anyone signs in; `resetSession` puts it back. */
const sessionStart = (): SessionState => ({
  user: null,
  screen: 'inbox',
  error: null,
  errorRefusal: null,
  proposals: [],
  selected: null,
  lastOutcome: null,
  deciding: false,
  opening: null,
  afterDecision: null,
  inboxView: 'waiting',
  decided: null,
  showWithdrawn: false,
  status: null,
  siteQuiet: null,
  jobs: [],
  resources: [],
  waiting: [],
  workSearch: '',
  workShownSearch: '',
  jobsMore: false,
  stock: [],
  stockSearch: '',
  stockMore: false,
  stockBelow: false,
  stockFiltered: false,
  configChanges: null,
  tables: [],
  sync: null,
  deadLetters: [],
  deadLetterGroups: [],
  deadLetterFilter: null,
  deadLettersReadWith: null,
  replayResult: null,
  deadLettersBusy: false,
  users: [],
  usersBusy: false,
  history: null,
  diff: null,
  historyContains: '',
  tags: [],
  tagsTable: null,
  tagsReadFor: null,
});

/** The Tables screen's rows with the freshness (age, budget, pending…) of a pushed status; the rest as they were read. */
function withFreshness(rows: TableInfo[], fresh: SiteStatus['tables']): TableInfo[] {
  if (rows.length === 0 || fresh.length === 0) return rows;
  const byTable = new Map(fresh.map((f) => [f.table, f]));
  return rows.map((r) => {
    const f = byTable.get(r.table);
    return f ? { ...r, ...f } : r;
  });
}

/** A failure's message with the site's refusal code and params, when it carried them (api/client.ts ApiError). */
function refusalOf(e: unknown): RefusalLike {
  const { message, code, params, kind } = (e ?? {}) as { message?: unknown; code?: unknown; params?: unknown; kind?: unknown };
  return {
    message: typeof message === 'string' ? message : String(e),
    ...(typeof kind === 'string' ? { kind } : {}),
    ...(typeof code === 'string' ? { code } : {}),
    ...(params !== null && typeof params === 'object' ? { params: params as Record<string, string | number> } : {}),
  };
}

/**
 * The visible error in the reader's language: a refusal the site coded, worded (i18n refusalText);
 * anything else, or an error set without its refusal, as its message.
 */
export function selectErrorText(s: Pick<AppState, 'lang' | 'error' | 'errorRefusal'>): string | null {
  if (s.error === null) return null;
  return s.errorRefusal?.message === s.error ? refusalText(s.lang, s.errorRefusal) : s.error;
}

/**
 * The error line as shown: a refusal (the site answered that what was asked is not allowed or not
 * possible, a 4xx) as itself, in the reader's language; a failure of the system — an internal
 * error (its id kept) or no answer at all (the network, a reply that is no API answer) — framed as
 * "Something went wrong" (i18n errorLine).
 */
export function selectErrorLine(s: Pick<AppState, 'lang' | 'error' | 'errorRefusal'>): string | null {
  const text = selectErrorText(s);
  if (text === null) return null;
  return errorLine(s.lang, text, s.errorRefusal?.message === s.error ? s.errorRefusal?.kind : undefined);
}

/** The sign-in screen's error in the reader's language, framed as selectErrorLine frames it. */
export function selectSignInErrorText(s: Pick<AppState, 'lang' | 'signInError' | 'signInRefusal'>): string | null {
  if (s.signInError === null) return null;
  // No answer is a failure of the system, framed as one, but worded in the reader's language.
  if (s.signInRefusal === SIGN_IN_UNANSWERED && s.signInError === SIGN_IN_UNANSWERED.message) {
    return errorLine(s.lang, translate(s.lang, 'signIn.noAnswer', { after: formatDuration(s.lang, SIGN_IN_TIMEOUT_MS) }), undefined);
  }
  // A refusal as itself, a failure of the site or the network framed as one (errorLine).
  return s.signInRefusal?.message === s.signInError ? errorLine(s.lang, refusalText(s.lang, s.signInRefusal), s.signInRefusal.kind) : errorLine(s.lang, s.signInError, undefined);
}

/** The first-run screen's error in the reader's language, framed as selectErrorLine frames it. */
export function selectFirstRunErrorText(s: Pick<AppState, 'lang' | 'firstRunError' | 'firstRunRefusal'>): string | null {
  if (s.firstRunError === null) return null;
  return s.firstRunRefusal?.message === s.firstRunError ? errorLine(s.lang, refusalText(s.lang, s.firstRunRefusal), s.firstRunRefusal.kind) : errorLine(s.lang, s.firstRunError, undefined);
}

/**
 * The site counts as not answering after this many of its status intervals without a status
 * (`SiteStatus.statusEveryMs`, 5 s when a status does not say), and at least SITE_QUIET_MIN_MS:
 * a push late behind a busy commit is not a site gone.
 */
export const SITE_QUIET_PUSHES = 3;
export const SITE_QUIET_MIN_MS = 15_000;
/** How often the page asks `checkSite` (App): the ages shown while the site is quiet grow by the second. */
export const SITE_CHECK_MS = 1_000;
/** The site's status interval as `status` says it (5 s when it does not). */
function statusEvery(status: Pick<SiteStatus, 'statusEveryMs'> | null | undefined): number {
  return typeof status?.statusEveryMs === 'number' && status.statusEveryMs > 0 ? status.statusEveryMs : 5_000;
}
/** How long without a status the site counts as not answering, by the interval `status` says. */
export function siteQuietAfterMs(status: Pick<SiteStatus, 'statusEveryMs'> | null | undefined): number {
  return Math.max(SITE_QUIET_PUSHES * statusEvery(status), SITE_QUIET_MIN_MS);
}
/**
 * After this many of the site's intervals without a status (at least SITE_READ_AFTER_MIN_MS, before
 * the site counts as quiet) `checkSite` reads the status itself: the events socket may be the only
 * thing gone (half-open, dropped by a proxy) while the site answers reads. One read out at a time,
 * one every SITE_READ_EVERY_MS at most.
 */
export const SITE_READ_AFTER_PUSHES = 2;
export const SITE_READ_AFTER_MIN_MS = 10_000;
export const SITE_READ_EVERY_MS = 5_000;
/** How long without a status `checkSite` reads one itself, by the interval `status` says. */
export function siteReadAfterMs(status: Pick<SiteStatus, 'statusEveryMs'> | null | undefined): number {
  return Math.max(SITE_READ_AFTER_PUSHES * statusEvery(status), SITE_READ_AFTER_MIN_MS);
}
/**
 * Checks further apart than this mean the page did not run (a PC asleep, a page frozen, a hidden
 * tab's timers throttled to one a minute): the silence meanwhile is not yet the site's, and the
 * marker waits up to SITE_RESUME_GRACE_MS for the read then started (or a push) before it is said.
 */
export const SITE_CHECK_GAP_MS = 5_000;
export const SITE_RESUME_GRACE_MS = 5_000;

/** The page's clocks: `mono` says how long the site has been quiet (a step of the PC's clock does not), `wall` when it last spoke. */
export interface PageClocks {
  mono(): number;
  wall(): number;
}
export const PAGE_CLOCKS: PageClocks = { mono: () => globalThis.performance.now(), wall: () => Date.now() };

/**
 * `timers`: the sign-in's timeout runs on them (tests hand in testing/fake-timers.ts's);
 * `clocks`: the page's, which `checkSite` reads (tests hand in their own).
 */
export function createAppStore(api: SiteApi, timers: IdleTimers = GLOBAL_TIMERS, clocks: PageClocks = PAGE_CLOCKS): AppStore {
  return createStore<AppState>()((set, get) => {
    // The page's time for the silence, awake and asleep: `clocks.mono` stands still while the PC is
    // suspended (chromium's performance.now is Linux's CLOCK_MONOTONIC), so an hour asleep counted
    // as no time — no check gap, no read at once, the ages an hour too young until the next status.
    // The wall clock's lead over it between two readings, past SITE_CHECK_GAP_MS, is time the page
    // did not run; a wall clock set back is none (site-silence-suspend.test.ts).
    let lastMono = clocks.mono();
    let lastWall = clocks.wall();
    let sleptMs = 0;
    const pageNow = (): number => {
      const mono = clocks.mono();
      const wall = clocks.wall();
      const lead = wall - lastWall - (mono - lastMono);
      if (lead > SITE_CHECK_GAP_MS) sleptMs += lead;
      lastMono = mono;
      lastWall = wall;
      return mono + sleptMs;
    };
    /** When the status shown came (the page's clocks; null: none this session). */
    let heardMono: number | null = null;
    let heardWall = 0;
    /** A status was shown: the site speaks (the ages shown are its own again). */
    const heard = () => {
      heardMono = pageNow();
      heardWall = clocks.wall();
      if (get().siteQuiet !== null) set({ siteQuiet: null, ...noAnswerCleared() });
    };
    /**
     * The site answers again (a status after the "no word" marker, the events socket back): an error
     * line saying it did not answer (a `me` check's, a read's during a restart) is no longer true —
     * it stood until someone closed it. Any other error stays; reads that fail again say it again.
     */
    const noAnswerCleared = (): Partial<AppState> => (get().error === NO_ANSWER_MESSAGE ? { error: null, errorRefusal: null } : {});
    /** When this session began waiting for a status (the page's monotonic clock): reads before the first. */
    let waitingSinceMono = pageNow();
    /** `checkSite`'s own status read: the session it is out in (null: none out), when it went. */
    let siteReadOut: number | null = null;
    let siteReadMono = -Infinity;
    /** The last `checkSite` (null: none this session), and until when the marker waits after a gap. */
    let checkedMono: number | null = null;
    let graceUntilMono = -Infinity;
    /**
     * Reads the status for `checkSite` and takes it as a push (the status, the Tables rows'
     * freshness, the sync state: ordered by when the site made it, as pushes are). A failure is on
     * no error line (the marker says the site does not answer), but a session the site ended is.
     */
    const readSite = (now: number) => {
      const s = session;
      siteReadOut = s;
      siteReadMono = now;
      void guard(async () => {
        let status: SiteStatus;
        try {
          status = await api.status({});
        } catch (e) {
          if ((e as { kind?: string }).kind === 'unauthenticated') throw e;
          return;
        } finally {
          if (siteReadOut === s) siteReadOut = null;
        }
        if (s !== session) return;
        get().applyEvent({ type: 'status', status });
        if (status.sync?.configured) get().applyEvent({ type: 'sync', sync: status.sync });
        // The socket's other events are gone too (the site answers, its pushes do not come): the
        // inbox and the screen shown are read again, or they stood still with no marker saying so.
        readPushed();
      });
    };
    // Replies can come back out of order (two quick clicks, a search typed on while the last one
    // is answered, a sign-out while a request is out): requests are numbered per kind, and a
    // reply is applied only while its request is the newest of its kind in the session it was
    // asked in. `resetSession` starts a new session.
    let session = 0;
    /** The waiting retry of the page's first `firstRun` read (`loadFirstRun`). */
    let firstRunRetry: unknown;
    // Pushes are not numbered with the reads: what the site made last is shown, by when it made it
    // (OVERTAKEN_MS_MAX). A status says so (`nowMs`); a sync state comes with none, so the Sync
    // screen reads it from a status, and a pushed one is of the status the site pushed just before
    // it (core/site service.ts `tick`: a tick's status, then its sync state).
    /** When the site made the sync state shown (null: not known, or none shown). */
    let syncMadeMs: number | null = null;
    // When the site made the freshness the Tables screen's rows show (the status read beside them,
    // or the status pushed since; null: not known), as `syncMadeMs` for the Sync screen.
    let tablesMadeMs: number | null = null;
    /** When the site made the status pushed last (null: none this session). */
    let pushedMadeMs: number | null = null;
    const newest = { select: 0, work: 0, stock: 0, history: 0, tags: 0, deadLetters: 0, deadLetterGroups: 0, decided: 0, proposals: 0, status: 0, tables: 0, sync: 0, users: 0, configChanges: 0 };
    /** Numbers a request (of `kind`, if given): the function says whether it still counts. */
    const ask = (kind?: keyof typeof newest): (() => boolean) => {
      const s = session;
      const n = kind ? ++newest[kind] : 0;
      return () => s === session && (kind === undefined || newest[kind] === n);
    };
    /** The proposal asked for last (undefined: none since the session began). */
    let wantedProposal: string | null | undefined;
    /** Whether proposal `id` is on screen and no other was asked for since. */
    const isShown = (id: string) => get().selected?.id === id && (wantedProposal === undefined || wantedProposal === id);
    /** The newest read `show` asked for (of `wantedProposal`): a decision waits for it (`decide`). */
    let newestShow: Promise<void> = Promise.resolve();
    /** Fetches proposal `id` (null: none) for the detail; applied only if no later one was asked for. */
    const show = (id: string | null, also: Partial<AppState> = {}): Promise<void> => {
      const current = ask('select');
      wantedProposal = id;
      // A read of the one shown (a refresh, a live event) opens nothing new.
      set({ opening: id !== null && id !== get().selected?.id ? id : null });
      const read = (async () => {
        try {
          const selected = id === null ? null : await api.getProposal({ id });
          if (current()) set({ selected, opening: null, ...also });
        } catch (e) {
          // Not opened (the site refused, the line dropped): the one still shown is the one the
          // person has, and what they decide again goes to it — its buttons sent nothing while
          // this read was the last asked for, with no word why once its error was dismissed.
          if (current()) {
            wantedProposal = get().selected?.id ?? null;
            set({ opening: null });
          }
          throw e;
        }
      })();
      newestShow = read.catch(() => {});
      return read;
    };
    /** Ends what the person on the screen saw: the next one starts from nothing (language and first-run state kept). */
    const resetSession = () => {
      session++;
      wantedProposal = undefined;
      syncMadeMs = null;
      tablesMadeMs = null;
      pushedMadeMs = null;
      heardMono = null;
      waitingSinceMono = pageNow();
      siteReadOut = null;
      siteReadMono = -Infinity;
      checkedMono = null;
      graceUntilMono = -Infinity;
      set(sessionStart());
    };
    /**
     * The work queue for `search`, at most WORK_ROWS jobs in the site's order; one more than shown
     * tells whether there are more. The site matches a status as stored (in_progress): a status
     * the search is part of as the screen words it ("pågår", "in Arbeit", "in progress";
     * `valuesWorded`) is asked for by its stored value in the same request (`statuses`).
     */
    const readWork = async (search: string, lang: Lang) => {
      const statuses = valuesWorded(lang, 'work_queue', 'status', search);
      const r = await api.workQueue({ limit: WORK_ROWS + 1, ...filterBy('search', search), ...(statuses.length > 0 ? { statuses } : {}) });
      return { ...r, jobs: r.jobs.slice(0, WORK_ROWS), jobsMore: r.jobs.length > WORK_ROWS };
    };
    /**
     * History's "Rows containing" `contains`: the site matches the cells as stored (in_progress), so
     * the known values the search is part of as the screen words them ("pågår", "hoch"; `columnsWorded`)
     * are asked for by their stored values in the same request (`worded`).
     */
    const rowsContaining = (table: string, contains: string | undefined) => {
      const worded = columnsWorded(get().lang, table, contains ?? '');
      return { ...filterBy('contains', contains), ...(worded.length > 0 ? { worded } : {}) };
    };
    /** Runs an API call; a failure becomes the visible error, never a silent no-op. */
    const guard = async (fn: () => Promise<void>) => {
      const current = ask();
      try {
        await fn();
      } catch (e) {
        // A request of a session that has ended: its failure is not the next person's.
        if (!current()) return;
        const { kind, idleMs } = e as { kind?: string; idleMs?: number };
        // The site signed the person out for want of use: the sign-in screen says so in the
        // reader's language, as when this page's own timer does it.
        if (kind === 'unauthenticated' && idleMs !== undefined) {
          resetSession();
          return set({ signedOutIdleMs: idleMs });
        }
        if (kind === 'unauthenticated') {
          resetSession();
          // The site ended the session (signed out elsewhere, the user disabled, the PIN reset,
          // the site restarted): the sign-in screen, which shows no error line, says why.
          return set({ error: (e as Error).message, errorRefusal: refusalOf(e), signInError: (e as Error).message, signInRefusal: refusalOf(e) });
        }
        set({ error: (e as Error).message, errorRefusal: refusalOf(e) });
      }
    };
    /**
     * `act` then `reload` under guard; true when `act` went through (even if the reload then
     * failed), false when it failed — its error is the visible one. For forms that close on success.
     */
    const succeeded = async (act: () => Promise<unknown>, reload: () => Promise<void>): Promise<boolean> => {
      let done = false;
      await guard(async () => {
        await act();
        done = true;
        // What the site refused before is settled by this success: its error no longer stands.
        set({ error: null });
        await reload();
      });
      return done;
    };
    /**
     * Reads with `fetch` and applies the reply with `apply`, under guard, only while the session it
     * was asked in lasts and, given a `kind`, only while it is the newest read of that kind.
     */
    const read = <T>(fetch: () => Promise<T>, apply: (v: T) => Partial<AppState>, kind?: keyof typeof newest) => guard(async () => {
      const current = ask(kind);
      const v = await fetch();
      if (current()) set(apply(v));
    });
    /**
     * Runs `fn` with `flag` set (a request on its way: the buttons that send another are disabled);
     * not at all, resolving false, while it is set. The flag drops when `fn` ends, if its session lasts.
     */
    const once = async (flag: 'deadLettersBusy' | 'usersBusy' | 'settingUp', fn: () => Promise<boolean>): Promise<boolean> => {
      if (get()[flag]) return false;
      const current = ask();
      set({ [flag]: true } as Partial<AppState>);
      try {
        return await fn();
      } finally {
        if (current()) set({ [flag]: false } as Partial<AppState>);
      }
    };
    /**
     * A sign-in (by name or badge), the session before it ended; none while another is on its way,
     * and none waited for longer than SIGN_IN_TIMEOUT_MS. True when it signed the person in.
     */
    const signingIn = async (send: () => Promise<SessionUser>): Promise<boolean> => {
      if (get().signingIn) return false;
      resetSession();
      set({ signingIn: true });
      const answer = send();
      let handle: unknown;
      const unanswered = new Promise<'unanswered'>((resolve) => (handle = timers.setTimeout(() => resolve('unanswered'), SIGN_IN_TIMEOUT_MS)));
      try {
        const user = await Promise.race([answer, unanswered]);
        if (user === 'unanswered') {
          endLateSession(answer);
          set({ signInError: SIGN_IN_UNANSWERED.message, signInRefusal: SIGN_IN_UNANSWERED });
          return false;
        }
        set({ user, signInError: null, signedOutIdleMs: null });
        return true;
      } catch (e) {
        set({ signInError: (e as Error).message, signInRefusal: refusalOf(e) });
        return false;
      } finally {
        timers.clearTimeout(handle);
        set({ signingIn: false });
      }
    };
    /**
     * A sign-in given up that the site answers after all has made a session there that this page
     * does not show (a reload would open it for whoever stands at the PC then): it is ended, unless
     * another sign-in went out since (a new session here) — the site's session then is that one's.
     */
    const endLateSession = (answer: Promise<SessionUser>) => {
      const current = ask();
      answer.then(
        () => {
          if (current()) void api.signOut({}).catch(() => {});
        },
        () => {},
      );
    };
    /**
     * What the socket's events other than the status keep current (a proposal made or decided, a
     * commit), read again: the socket's `resync` after a break, and each status `checkSite` reads
     * while none is pushed (the socket's events are gone with its statuses).
     */
    const readPushed = () => {
      void get().loadProposals();
      if (get().inboxView === 'decided') void get().loadDecided();
      // The open proposal may have been decided, withdrawn or found stale meanwhile; what the last
      // decision here came to (lastOutcome) stays.
      const sel = get().selected;
      if (sel && isShown(sel.id)) void guard(() => show(sel.id));
      const screen = get().screen;
      if (screen !== 'inbox') void refreshScreen(screen);
    };
    const refreshScreen = (screen: Screen) => {
      const s = get();
      const load: Record<Screen, () => Promise<void>> = {
        inbox: async () => {
          await Promise.all([s.loadProposals(), ...(s.inboxView === 'decided' ? [s.loadDecided()] : [])]);
        },
        work: s.loadWork,
        stock: () => s.loadStock(),
        tables: s.loadTables,
        history: s.loadTables,
        sync: s.loadSync,
        deadLetters: s.loadDeadLetters,
        users: s.loadUsers,
      };
      return load[screen]();
    };
    return {
      // session
      firstRun: null,
      firstRunError: null,
      firstRunRefusal: null,
      firstRunUnread: false,
      loadFirstRun: async () => {
        timers.clearTimeout(firstRunRetry);
        try {
          set({ firstRun: await api.firstRun({}), firstRunUnread: false });
        } catch {
          // Answered before (the server is restarting after initSite): the first-run screen polls
          // again. Never answered: nothing else asks, so this does, one retry waiting at a time.
          if (get().firstRun !== null) return;
          set({ firstRunUnread: true });
          timers.clearTimeout(firstRunRetry);
          firstRunRetry = timers.setTimeout(() => void get().loadFirstRun(), FIRST_RUN_RETRY_MS);
        }
      },
      settingUp: false,
      initSite: async (siteId, adminName, adminPin) => {
        // One at a time: a double tap's second, refused while the first still writes the data
        // directory, said "already set up" under the form of a site that was not yet.
        await once('settingUp', async () => {
          try {
            set({ firstRun: await api.initSite({ siteId, adminName, adminPin }), firstRunError: null });
            return true;
          } catch (e) {
            set({ firstRunError: (e as Error).message, firstRunRefusal: refusalOf(e) });
            return false;
          }
        });
      },
      // What a session fills in, across the slices (user, screen, proposals, rows…), as before anyone signs in.
      ...sessionStart(),
      signInError: null,
      signInRefusal: null,
      signingIn: false,
      signIn: async (user, secret) => {
        // The list is read after the flag drops: a read that hung kept the next person from signing in.
        if (await signingIn(() => api.signIn({ user, secret }))) await get().loadProposals();
      },
      signInBadge: async (badge) => {
        await signingIn(() => api.signIn({ badge }));
      },
      signOut: async () => {
        // Whoever pressed it is leaving a shared PC: the screen is cleared whether or not the site
        // answers (as signOutIdle). Unanswered, the site's session ends at its idle limit; the
        // sign-in screen says why it may not have ended yet.
        resetSession();
        try {
          await api.signOut({});
        } catch (e) {
          if ((e as { kind?: string }).kind !== 'unauthenticated') set({ signInError: (e as Error).message, signInRefusal: refusalOf(e) });
        }
      },
      signedOutIdleMs: null,
      signOutIdle: async (idleMs) => {
        // The screen is cleared whether or not the server answers: nobody is at it.
        resetSession();
        set({ signedOutIdleMs: idleMs });
        try {
          await api.signOut({});
        } catch {
          // the session ends on the server at its own idle limit
        }
      },
      loadMe: () => guard(async () => {
        const current = ask();
        const me = await api.me({});
        // Asked before a sign-out: it would put the person who left back on the screen.
        if (!current()) return;
        // Someone else signed in on this browser meanwhile (another tab shares its session): what
        // the last person saw is not theirs.
        const was = get().user;
        if (was !== null && me !== null && me.name !== was.name) resetSession();
        // The site ended the session without an error (the user disabled or removed, signed out in
        // another tab: `me` says null): it ended as a sign-out does, and the next person finds
        // nothing of it — nor a read of it answered later.
        if (was !== null && me === null) return resetSession();
        // The same person with the same roles keeps the same object: the page asks every 30 s,
        // and a new one each time restarted what follows the user (App's idle timer, which then
        // never ran out).
        const same = was !== null && me !== null && me.name === was.name && me.roles.length === was.roles.length && me.roles.every((r, i) => r === was.roles[i]);
        if (same) return;
        // An admin no longer (another admin changed the role; the site keeps the session): the
        // users list is not theirs to read, and the Users screen, which App shows only to an
        // admin, left the page blank under a navigation without it.
        const admin = me?.roles.includes('admin') === true;
        set({ user: me, ...(admin ? {} : { users: [] }) });
        if (me !== null && !admin && get().screen === 'users') get().go('inbox');
      }),
      // ui
      lang: savedLang(),
      setLang: (lang) => {
        try {
          localStorage.setItem('tilstand.lang', lang);
        } catch {
          // private mode: the choice lasts for this page only
        }
        if (typeof document !== 'undefined') document.documentElement.lang = lang;
        set({ lang });
      },
      go: (screen) => {
        // An error is about what was done on the screen left: it does not follow to the next one.
        set({ screen, error: null });
        void refreshScreen(screen);
      },
      clearError: () => set({ error: null }),
      // inbox
      // The most urgent INBOX_ROWS, in the inbox's order (the site sorts before it cuts).
      // Read again on every change the site pushes and after a decision here: the read asked for
      // last is shown, not an older one answered after it (a proposal just decided came back into
      // the list as open, and the count with it, until the next change).
      loadProposals: () => read(() => api.listProposals({ status: ['open', 'deferred'], order: 'urgency', limit: INBOX_ROWS }), (proposals) => ({ proposals }), 'proposals'),
      // The newest decisions, sorted and cut by the site (`order: 'decided'`: sorted by when they were
      // made, a proposal that waited long and was decided now fell below the cut). And the newest
      // withdrawn ones, by when the agent withdrew them, in a cut of their own (WITHDRAWN_ROWS):
      // nobody decided them, but they left the waiting list as the decided ones do, and a lead who
      // saw one a minute before looks for it here.
      // Read again on every change the site pushes: the read asked for last is shown, not an older
      // one answered after it (a decision just made would leave the list until the next change).
      loadDecided: () =>
        read(
          () =>
            Promise.all([
              api.listProposals({ status: ['approved', 'rejected', 'stale'], order: 'decided', limit: DECIDED_ROWS }),
              api.listProposals({ status: ['withdrawn'], order: 'decided', limit: WITHDRAWN_ROWS }),
            ]),
          ([decided, withdrawn]) => ({ decided: newestEndedFirst(decided, withdrawn) }),
          'decided',
        ),
      showInboxView: (inboxView) => {
        // A proposal of the other list stays open no longer (a waiting one, with Approve, beside the
        // Decided list): the panel's place gives its hint until one of this list is picked.
        const sel = get().selected;
        const waiting = sel !== null && (sel.status === 'open' || sel.status === 'deferred');
        if (sel !== null && waiting !== (inboxView === 'waiting')) set({ selected: null, lastOutcome: null, afterDecision: null });
        // Nor one asked for from the other list whose reply is still on its way (a row tapped, then
        // this toggle): it opened beside this list when it came, a waiting one with Approve beside
        // the Decided list. A newer read of the proposal kept open still applies.
        const kept = get().selected?.id ?? null;
        if (inboxView !== get().inboxView && wantedProposal !== undefined && wantedProposal !== kept) {
          ask('select');
          wantedProposal = kept;
          set({ opening: null });
        }
        set({ inboxView });
        if (inboxView === 'decided') void get().loadDecided();
      },
      setShowWithdrawn: (showWithdrawn) => {
        // A withdrawn one open beside a list that no longer shows it: the panel's hint instead.
        const sel = get().selected;
        if (!showWithdrawn && sel?.status === 'withdrawn' && get().inboxView === 'decided') set({ selected: null, lastOutcome: null, afterDecision: null });
        set({ showWithdrawn });
      },
      select: (id) => guard(() => show(id, { lastOutcome: null })),
      decide: async (decision, comment) => {
        let taken = false;
        await guard(async () => {
          const sel = get().selected;
          // Not while another proposal the person asked for is on its way (a tap on the next row, N,
          // then A before it came): the one still on screen is not the one they mean to decide.
          if (!sel || get().deciding || !isShown(sel.id)) return;
          const current = ask();
          // The list as the person saw it when deciding: where to go on from once the decided one left it.
          const before = sortByUrgency(get().proposals).map((p) => p.id);
          set({ deciding: true });
          try {
            let r: Awaited<ReturnType<SiteApi['decide']>>;
            try {
              r = await api.decide({ id: sel.id, decision, ...(comment ? { comment } : {}) });
            } catch (e) {
              // Decided or withdrawn meanwhile (another lead was first), or gone: the panel showed it
              // open with its buttons, and the list listed it, until a push or the next read (none
              // while the events socket was down). Both read again; the error line says why.
              const code = (e as { code?: unknown }).code;
              if (current() && isShown(sel.id) && (code === 'proposal.notOpen' || code === 'proposal.notFound' || code === 'proposal.decidedMeanwhile')) {
                await Promise.allSettled([show(code === 'proposal.notFound' ? null : sel.id), get().loadProposals()]);
                // Its buttons gone with it, the focus goes on as after a decision made here (Inbox `keepPlaceAfterDecision`), N too;
                // gone, its panel closed (none other opened meanwhile): from its place as well, the focus fell to the page.
                const closed = code === 'proposal.notFound' && wantedProposal === null && get().selected === null;
                if (current() && ((code === 'proposal.notOpen' && isShown(sel.id)) || closed)) set({ afterDecision: { decided: sel.id, next: followingIn(before, sel.id, get().proposals) } });
              }
              throw e;
            }
            taken = true;
            if (!current()) return;
            // Someone who opened another proposal meanwhile stays on it.
            if (isShown(sel.id)) {
              set({ lastOutcome: { id: sel.id, outcome: r.outcome, ...(r.reason ? { reason: r.reason } : {}) } });
              await show(sel.id);
              // A read of it asked since (the live event of this very decision, `applyEvent`) won over
              // this one: until it lands the panel still shows the proposal open, its buttons on the
              // page, and where to go on from (afterDecision) would be named too soon — the focus
              // then fell to the page when the buttons went. Its landing is waited for.
              for (let seen: Promise<void> | undefined; seen !== newestShow && isShown(sel.id); ) await (seen = newestShow);
            }
            await get().loadProposals();
            if (current() && isShown(sel.id)) set({ afterDecision: { decided: sel.id, next: followingIn(before, sel.id, get().proposals) } });
            // Deferred, it is put aside: on to the next open one after it (as the list stood), as a
            // decision goes on; it stays in the list, below the open ones. None open: it stays shown.
            if (r.outcome === 'deferred' && current() && isShown(sel.id)) {
              const next = followingIn(before, sel.id, get().proposals.filter((p) => p.status === 'open'));
              if (next !== null && next !== sel.id) {
                await show(next, { lastOutcome: null });
                // The focus left on the deferred one's row (D pressed there) goes with the panel (Inbox `keepPlaceAfterDecision`).
                if (current() && isShown(next)) set({ afterDecision: { decided: sel.id, next, deferred: true } });
              }
            }
          } finally {
            if (current()) set({ deciding: false });
          }
        });
        return taken;
      },
      selectNext: async () => {
        // In the Decided list, on to that list's next row (wrapping, as in the waiting list): it
        // opened the next waiting proposal, one the list shown does not have.
        // Its rows as shown: past the withdrawn ones while they are hidden.
        const { inboxView } = get();
        if (inboxView === 'decided') {
          const decided = decidedShown(get().decided, get().showWithdrawn);
          if (decided.length === 0) return;
          const sel = get().selected;
          const at = sel ? decided.findIndex((p) => p.id === sel.id) : -1;
          return get().select(decided[(at + 1) % decided.length]!.id);
        }
        // The next row as the inbox shows them (most urgent first), not the order they arrived in.
        const { proposals, selected, afterDecision } = get();
        if (proposals.length === 0) return;
        const shown = sortByUrgency(proposals);
        const i = selected ? shown.findIndex((p) => p.id === selected.id) : -1;
        // The open one was just decided here and has left the list: on from its place, not the top.
        // (Gone, refused as `proposal.notFound`: its panel closed, `selected` null.)
        const after = i < 0 && afterDecision && (selected === null || afterDecision.decided === selected.id) && afterDecision.next !== null ? afterDecision.next : undefined;
        await get().select(after !== undefined && shown.some((p) => p.id === after) ? after : shown[(i + 1) % shown.length]!.id);
      },
      // state
      // The tags of the table picked last, matching the search typed last (not an older one answered later).
      loadTags: (table, search) => {
        set({ tagsReadFor: null });
        return read(() => api.tags({ table, limit: TAGS_SHOWN, ...(search ? { search } : {}) }), (tags) => ({ tags, tagsTable: table, tagsReadFor: { table, search: search ?? '' } }), 'tags');
      },
      // The reads asked for last (here and below, Tables and Sync): an older status answered after a
      // newer one put back the alarm a replay or dismissal here had just cleared.
      // And not one the site made before the status shown, pushed meanwhile (OVERTAKEN_MS_MAX).
      loadStatus: () =>
        read(() => api.status({}), (status) => {
          if (!notOvertaken(status.nowMs, get().status?.nowMs)) return {};
          heard();
          return { status };
        }, 'status'),
      checkSite: () => {
        if (get().user === null) return;
        const now = pageNow();
        // The page did not run since the last check (asleep, frozen, a throttled hidden tab).
        if (checkedMono !== null && now - checkedMono > SITE_CHECK_GAP_MS) graceUntilMono = now + SITE_RESUME_GRACE_MS;
        checkedMono = now;
        // No status for a while, pushed or read: ask for one (the events socket may be all that is gone).
        const silentMs = now - (heardMono ?? waitingSinceMono);
        if (silentMs >= siteReadAfterMs(get().status) && siteReadOut !== session && now - siteReadMono >= SITE_READ_EVERY_MS) readSite(now);
        if (get().status === null || heardMono === null) return;
        const forMs = Math.max(0, now - heardMono);
        if (forMs < siteQuietAfterMs(get().status)) {
          if (get().siteQuiet !== null) set({ siteQuiet: null });
          return;
        }
        // Just back from not running: the read started above (or a push) may answer in a moment.
        if (get().siteQuiet === null && now < graceUntilMono && siteReadOut === session) return;
        set({ siteQuiet: { sinceMs: heardWall, forMs } });
      },
      // One row more than shown tells whether there are more. The search is the one asked for
      // last (a refresh asks for it again); the rows are those of its reply.
      loadWork: (search) => guard(async () => {
        const q = search ?? get().workSearch;
        const current = ask('work');
        set({ workSearch: q });
        const r = await readWork(q, get().lang);
        if (current()) set({ ...r, workShownSearch: q });
      }),
      loadStock: (search, below) => guard(async () => {
        const q = search ?? get().stockSearch;
        const b = below ?? get().stockBelow;
        const current = ask('stock');
        set({ stockSearch: q, stockBelow: b });
        const rows = await api.stock({ limit: STOCK_ROWS + 1, ...filterBy('search', q), ...(b ? { below: true } : {}) });
        if (current()) set({ stock: rows.slice(0, STOCK_ROWS), stockMore: rows.length > STOCK_ROWS, stockFiltered: q.trim() !== '' || b });
      }),
      setReorderPolicy: async (item, location, policy) => {
        let saved = false;
        await guard(async () => {
          await api.setReorderPolicy({ item, location, policy });
          saved = true;
          set({ error: null });
          await get().loadStock();
          if (get().configChanges !== null) await get().loadConfigChanges();
        });
        return saved;
      },
      loadConfigChanges: () => read(() => api.configChanges({ limit: CONFIG_CHANGES_SHOWN }), (configChanges) => ({ configChanges }), 'configChanges'),
      // The rows say no time: their freshness (age, budget, pending…) is taken from a status read
      // beside them, which says when the site made it, so a status pushed before it and landing
      // after it does not put older ages on them (`tablesMadeMs`). Unanswered, the rows' own.
      loadTables: () => read(() => Promise.all([api.tables({}), api.status({}).catch(() => null)]), ([tables, status]) => {
        const madeMs = typeof status?.nowMs === 'number' ? status.nowMs : null;
        // A status pushed after it is already shown: the rows take that one's freshness.
        if (madeMs !== null && !notOvertaken(madeMs, tablesMadeMs)) return { tables: withFreshness(tables, get().status?.tables ?? []) };
        tablesMadeMs = madeMs;
        return { tables: madeMs === null ? tables : withFreshness(tables, status?.tables ?? []) };
      }, 'tables'),
      // From a status, not `syncStatus` (the same state): its `nowMs` says when the site made it,
      // so a sync state pushed before it and landing after it does not replace it.
      loadSync: () => read(() => api.status({}), (status) => {
        if (!notOvertaken(status.nowMs, syncMadeMs)) return {};
        syncMadeMs = typeof status.nowMs === 'number' ? status.nowMs : null;
        return { sync: status.sync };
      }, 'sync'),
      // The list and, beside it, where the open letters come from: a list shows the first few, all
      // of one module when it floods. Asked here only, not with the per-second status.
      // With a group chosen, the site lists that group's letters before its cut (a group of two
      // behind a flood shows); the list asked for last is shown (one filter chosen after another).
      loadDeadLetters: async () => {
        const filter = get().deadLetterFilter;
        await Promise.all([
          guard(async () => {
            const current = ask('deadLetters');
            try {
              const deadLetters = await api.deadLetters(filter ? { topic: filter.topic, reason: filter.reason } : {});
              if (current()) set({ deadLetters, deadLettersReadWith: filter });
            } catch (e) {
              // Not read: the choice goes back to the list still shown. Kept, every letter stayed
              // listed under "Only the letters from …", that group pressed, its Replay offered.
              if (current()) set({ deadLetterFilter: get().deadLettersReadWith });
              throw e;
            }
          }),
          // Numbered too: an older count answered after a newer one showed a group a dismissal had
          // closed, and its button.
          read(() => api.deadLetterGroups({}), (deadLetterGroups) => ({ deadLetterGroups }), 'deadLetterGroups'),
        ]);
      },
      filterDeadLetters: (deadLetterFilter) => {
        set({ deadLetterFilter });
        return get().loadDeadLetters();
      },
      // One replay or dismissal at a time: a second tap on Replay would find nothing open and
      // replace "replayed n" with "replayed 0".
      replayDeadLetters: async (ids, alike) => {
        await once('deadLettersBusy', async () => {
          await guard(async () => {
            const current = ask();
            const replayResult = await api.replayDeadLetters(ids ? { ids, ...(alike ? { alike: true } : {}) } : {});
            if (!current()) return;
            set({ replayResult });
            // The alarm band counts open letters from the status: read it now, not at its next poll.
            await Promise.all([get().loadDeadLetters(), get().loadStatus()]);
          });
          return true;
        });
      },
      dismissDeadLetters: (ids, note, alike) =>
        // The status too: the alarm band ("dead letters waiting for a look") cleared only at its next poll.
        once('deadLettersBusy', () => succeeded(() => api.dismissDeadLetters({ ids, note, ...(alike ? { alike: true } : {}) }), async () => {
          await Promise.all([get().loadDeadLetters(), get().loadStatus()]);
        })),
      // Numbered (here and the reorder changes above): the list the screen's opening read, answered
      // after the one an add read, showed the users without the one just added.
      loadUsers: () => read(() => api.users({}), (users) => ({ users }), 'users'),
      addUser: (name, roles, secret, badge) => once('usersBusy', () => succeeded(() => api.addUser({ name, roles, secret, ...(badge ? { badge } : {}) }), () => get().loadUsers())),
      disableUser: async (name) => {
        await once('usersBusy', () => succeeded(() => api.disableUser({ name }), () => get().loadUsers()));
      },
      enableUser: async (name) => {
        await once('usersBusy', () => succeeded(() => api.enableUser({ name }), () => get().loadUsers()));
      },
      resetSecret: (name, secret) => once('usersBusy', () => succeeded(() => api.resetSecret({ name, secret }), () => get().loadUsers())),
      // A read or a comparison: the one asked for last is shown (a table picked while the last was read).
      loadHistory: (table, at, contains) => read(() => api.history({ table, at, limit: HISTORY_ROWS, ...rowsContaining(table, contains) }), (history) => ({ history, diff: null, historyContains: contains?.trim() ?? '' }), 'history'),
      loadDiff: (table, from, contains) => read(() => api.diff({ table, from, to: { latest: true }, limit: HISTORY_ROWS, ...rowsContaining(table, contains) }), (diff) => ({ diff, historyContains: contains?.trim() ?? '' }), 'history'),
      resync: () => {
        if (get().user === null) return;
        set(noAnswerCleared());
        void get().loadStatus();
        readPushed();
      },
      applyEvent: (e) => {
        // A status carries every table's freshness: the Tables screen's ages and budgets follow it.
        // Not one the site made before the status shown (a read's reply that overtook it).
        if (e.type === 'status') {
          pushedMadeMs = typeof e.status.nowMs === 'number' ? e.status.nowMs : null;
          if (notOvertaken(e.status.nowMs, get().status?.nowMs)) {
            heard();
            set({ status: e.status });
          }
          if (notOvertaken(e.status.nowMs, tablesMadeMs)) {
            tablesMadeMs = pushedMadeMs;
            set((s) => ({ tables: withFreshness(s.tables, e.status.tables) }));
          }
        } else if (e.type === 'sync') {
          // Made when the status pushed just before it was.
          if (!notOvertaken(pushedMadeMs, syncMadeMs)) return;
          syncMadeMs = pushedMadeMs;
          set({ sync: e.sync });
        } else if (e.type === 'proposals') {
          void get().loadProposals();
          // A decision, or a command's progress (sent, applied…): the Decided list, while shown, follows.
          if (get().screen === 'inbox' && get().inboxView === 'decided') void get().loadDecided();
          const sel = get().selected;
          if (sel && e.changed.includes(sel.id) && isShown(sel.id)) void get().select(sel.id);
          // The work queue and stock show on their rows what waits for a decision.
          const screen = get().screen;
          if (screen === 'work' || screen === 'stock') void refreshScreen(screen);
        } else if (e.type === 'tables') {
          const screen = get().screen;
          // The Tables screen: a commit changes a table's snapshots, tags and size. Dead letters: a
          // refused event arrived, or a replay or dismissal was made elsewhere (its group's count too).
          if (
            (screen === 'work' && e.tables.some((t) => t === 'work_queue' || t === 'resources')) ||
            (screen === 'stock' && e.tables.includes('stock')) ||
            (screen === 'deadLetters' && e.tables.includes('dead_letters')) ||
            screen === 'tables'
          ) {
            void refreshScreen(screen);
          }
        }
      },
    };
  });
}

// Selectors.
/**
 * Proposals waiting for a decision, open and deferred, as the inbox lists them: the list's own count
 * while it holds all that wait (fewer than INBOX_ROWS), else the site's count of all, never fewer
 * than listed. Not the status alone: it counted only the open ones under a list showing the
 * deferred too, and it comes every few seconds, so it lags a decision just made or a proposal just
 * listed while the list is read again at once (a `proposals` event, the decision's reply).
 */
export const selectWaitingCount = (s: AppState): number => {
  const listed = s.proposals.length;
  const site = s.status?.proposals;
  return listed < INBOX_ROWS || !site ? listed : Math.max(listed, site.open + site.deferred);
};
/** Of those (selectWaitingCount), the deferred ones, counted the same way. */
export const selectDeferredCount = (s: AppState): number => {
  let listed = 0;
  for (const p of s.proposals) if (p.status === 'deferred') listed++;
  const site = s.status?.proposals;
  return s.proposals.length < INBOX_ROWS || !site ? listed : Math.max(listed, site.deferred);
};
/** A table's freshness `forMs` older: its age grown, and over its budget once the grown age passes it (a table no binding feeds as it was). */
function aged<T extends { ageMs: number; budgetMs: number; withinBudget: boolean; fed?: boolean }>(t: T, forMs: number): T {
  if (t.fed === false) return t;
  const ageMs = t.ageMs + forMs;
  return { ...t, ageMs, withinBudget: t.withinBudget && ageMs <= t.budgetMs };
}
let shownStatus: { status: SiteStatus; forMs: number; shown: SiteStatus } | null = null;
/**
 * The status as the screens show it: as the site sent it while it speaks; while it is quiet
 * (`siteQuiet`), every age in it grown by the time since it came, by this page's monotonic clock —
 * its `nowMs` (from which the screens count a stream's last event, the agent's last run, a
 * proposal's age) and each table's age, a table over its budget once the grown age passes it — so
 * no age looks younger than it is. The same object for the same state (a selector's answer).
 */
export function selectShownStatus(s: Pick<AppState, 'status' | 'siteQuiet'>): SiteStatus | null {
  if (s.status === null || s.siteQuiet === null) return s.status;
  const forMs = s.siteQuiet.forMs;
  if (shownStatus?.status === s.status && shownStatus.forMs === forMs) return shownStatus.shown;
  const shown = { ...s.status, nowMs: s.status.nowMs + forMs, tables: s.status.tables.map((t) => aged(t, forMs)) };
  shownStatus = { status: s.status, forMs, shown };
  return shown;
}
/**
 * The site's clock as shown (`selectShownStatus`'s `nowMs`; null before a status): it moves with
 * every status, and every second while the site is quiet. Selected only by what shows an age
 * (components/Age.tsx): a screen or row that selected it rendered again each second.
 */
export const selectShownNow = (s: Pick<AppState, 'status' | 'siteQuiet'>): number | null => selectShownStatus(s)?.nowMs ?? null;
/** `ms`'s year's first instant in this PC's time zone: all `formatWhen` needs of its `nowMs` (which year is "this year"). */
export const yearStart = (ms: number): number => new Date(new Date(ms).getFullYear(), 0, 1).getTime();
/**
 * The site's clock to the year (`yearStart` of `selectShownNow`; null before a status), for a
 * screen's points in time (`formatWhen`, `localizeInstants`): it changes once a year, not each second.
 */
export const selectShownYear = (s: Pick<AppState, 'status' | 'siteQuiet'>): number | null => {
  const now = selectShownNow(s);
  return now === null ? null : yearStart(now);
};
/** How many tables the status as shown has over their budget (the header's freshness chip). */
export const selectBreaches = (s: Pick<AppState, 'status' | 'siteQuiet'>): number => selectShownStatus(s)?.tables.filter((x) => !x.withinBudget).length ?? 0;
let shownTables: { tables: TableInfo[]; forMs: number; shown: TableInfo[] } | null = null;
/** The Tables screen's rows as shown: their ages grown while the site is quiet, as selectShownStatus's. */
export function selectShownTables(s: Pick<AppState, 'tables' | 'siteQuiet'>): TableInfo[] {
  if (s.siteQuiet === null) return s.tables;
  const forMs = s.siteQuiet.forMs;
  if (shownTables?.tables === s.tables && shownTables.forMs === forMs) return shownTables.shown;
  const shown = s.tables.map((t) => aged(t, forMs));
  shownTables = { tables: s.tables, forMs, shown };
  return shown;
}
const NO_ALARMS: never[] = [];
export const selectAlarms = (s: AppState) => s.status?.alarms ?? NO_ALARMS;
export const selectIsDecider = (s: AppState): boolean => !!s.user?.roles.some((r) => r === 'shift_lead' || r === 'admin');
export const selectIsAdmin = (s: AppState): boolean => !!s.user?.roles.includes('admin');
const RISK_ORDER = { high: 0, medium: 1, low: 2 } as const;
/**
 * The first id after `id` in `order` (wrapping) that `now` still lists; when `order` lacks `id`
 * (it was opened from elsewhere), the first other row `now` shows; null when there is none.
 */
export function followingIn(order: readonly string[], id: string, now: readonly ProposalView[]): string | null {
  const listed = new Set(now.map((p) => p.id));
  const i = order.indexOf(id);
  if (i >= 0) {
    for (let k = 1; k < order.length; k++) {
      const next = order[(i + k) % order.length]!;
      if (listed.has(next)) return next;
    }
  }
  return sortByUrgency([...now]).find((p) => p.id !== id)?.id ?? null;
}

/**
 * Most urgent first: the open ones before the deferred ones (someone put those aside; kept first
 * they stayed in the way of what waits), then risk, then age (oldest first), then the order they
 * were made in (`compareProposalIds`, as the site breaks the same tie: core/inbox `mostUrgentFirst`).
 */
export const sortByUrgency = (ps: ProposalView[]): ProposalView[] =>
  [...ps].sort((a, b) => deferredLast(a) - deferredLast(b) || RISK_ORDER[a.risk] - RISK_ORDER[b.risk] || a.createdMs - b.createdMs || compareProposalIds(a.id, b.id));
const deferredLast = (p: ProposalView): number => (p.status === 'deferred' ? 1 : 0);
