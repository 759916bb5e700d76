// The Ingestor: journal → envelope → contract → sequencer → bindings → tables, with dead letters
// for whatever cannot be applied, freshness budgets deciding when each table commits, and
// exactly-once effects across crashes. Design and the exactly-once argument: DESIGN.md.
//
// Concurrency: single-threaded (Node's event loop). `accept` is the broker's durable sink: it
// resolves when the event is on disk in the journal; the event is then applied synchronously, in
// journal-position order (group commits resolve their promises in position order and each
// continuation runs to completion before the next). `tick`, `commitAll`, `replayDeadLetters` and
// `close` are synchronous. One Ingestor per data directory (it holds every table's writer lock).
//
// Invariants:
//   - every event is journaled before `accept` resolves, and nothing is applied before that;
//   - events are processed in strictly increasing position (asserted);
//   - a table's snapshot carries `tilstand.journal.position` = F and `tilstand.hwm.<m>/<s>` = H
//     (progress.ts) describing exactly the events whose effects it holds; a write is skipped when
//     the table's recovered progress already covers the event (position ≤ F, or seq ≤ H);
//   - F never passes an event still held in the reorder buffer (F = min held position − 1);
//   - after any failure inside apply or commit, nothing more is committed (`failure()` says why);
//     the journal keeps accepting, and reopening replays what was not committed.

import { Catalog, CompactionSlicer, isCorruption, isWellFormedString, LsmError, parseRowKind, RowKind, Table, TableReader, TableWriter, valueFromJson, valueToJson, type DataField } from '../lsm/index.ts';
import { applyBinding, bindingName, bindingsFor, checkBinding, checkOrderingStreams, retractionOfMovedKey, streamOfFilter, type Binding, type BoundRecord } from './binding.ts';
import { bindingView, checkEnvelopeContract, type ContractCheck, type ContractRegistry } from './contracts.ts';
import {
  DEAD_LETTERS_TABLE,
  DEAD_LETTERS_TABLE_NAME,
  allFound,
  CLOSED_SCAN_TURN_EVERY,
  comparePositions,
  deadLetterHeads,
  lettersOf,
  deadLetterRecord,
  deadLettersAt,
  forClosedDeadLetters,
  groupOpenLetters,
  nextTurn,
  openFirst,
  tombstoneRecord,
  upgradeDeadLetters,
  withOpenAlike,
  type DeadLetter,
  type DeadLetterStatus,
  type LetterHead,
  type OpenLetterGroup,
} from './dead-letters.ts';
import {
  DEAD_LETTER_REASONS,
  DEFAULT_ENVELOPE_LIMITS,
  checkLimits,
  eventTopic,
  parseEnvelope,
  parseEventTopic,
  refuse,
  type DeadLetterReason,
  type Envelope,
  type EnvelopeLimits,
  type ParseResult,
  type Refusal,
} from './envelope.ts';
import { DuplicateWatch, type DuplicateRun, type DuplicateWatchOptions } from './duplicate-watch.ts';
import { Freshness, resolveBudgets, type TableBudget } from './freshness.ts';
import type { DiskBudget, Journal } from './journal.ts';
import { LettersBySeq, type SeqLetter } from './letters-by-seq.ts';
import { PromText } from './metrics.ts';
import { NO_PROGRESS, progressProperties, readProgress, readSkipped, skippedProperties, splitStreamKey, streamKey, type TableProgress } from './progress.ts';
import { DEFAULT_SEQUENCER_OPTIONS, Sequencer, type Ready, type SequencerOptions } from './sequencer.ts';
import type { TableDefinition } from './seed-tables.ts';
import { checkNewTable, evolveToDefinition } from './site-tables.ts';

export type { TableBudget } from './freshness.ts';
export { DEFAULT_TABLE_BUDGETS } from './freshness.ts';
export type { DeadLetter, DeadLetterStatus } from './dead-letters.ts';

export interface IngestorOptions {
  site: string;
  catalog: Catalog;
  /** `site_<id>` */
  database: string;
  journal: Journal;
  contracts: ContractRegistry;
  bindings: Binding[];
  /** Tables to create when missing (seed definitions); dead_letters is added when absent. */
  tables: TableDefinition[];
  /** Per-table budgets; a table without one takes DEFAULT_TABLE_BUDGETS by name. */
  budgets: TableBudget[];
  /** The wall clock, epoch ms: the times stored and shown (receive, commit, dead letter times). Default Date.now. */
  clock?: () => number;
  /**
   * A monotonic clock in ms, for every duration: freshness ages, gap ages (resync, skip), idle
   * progress commits and expiry, the duplicate watch's windows. The wall clock steps (NTP setting
   * a PC's clock, a clock set by hand): a step forward aged every open gap past `gap_give_up_ms`
   * at once (the gap skipped, the module's resend then dropped as a duplicate) and every pending
   * event past its budget. Default:
   * `clock` when only `clock` is given (a simulated clock — tests, core/replay — jumps only when
   * told, and stays deterministic), else performance.now.
   */
  monotonicClock?: () => number;
  /** Ask a module to resend a stream from `fromSeq` (publish on tilstand/<site>/resync/<module>). */
  publishResync?: (module: string, stream: string, fromSeq: number) => void;
  limits?: Partial<EnvelopeLimits>;
  sequencer?: Partial<SequencerOptions>;
  /** When a stream that delivers only duplicates is reported (duplicate-watch.ts). */
  duplicateWatch?: DuplicateWatchOptions;
  /** When given, its alarm state shows in status() and metrics(). */
  diskBudget?: Pick<DiskBudget, 'full'>;
  /**
   * A table with nothing pending still gets a properties-only commit when its committed journal
   * position lags the frontier by more than this many positions, so restart replay and the
   * journal checkpoint stay bounded for idle tables. Default 50 000.
   */
  progressLagMax?: number;
  /**
   * …and also once its last commit is this old while the frontier has moved past it, so a quiet
   * site's idle tables (dead_letters on a healthy site) do not hold the journal checkpoint — and
   * prune, and the replay after a restart — until progressLagMax events have come. Default 5 min.
   */
  progressIntervalMs?: number;
  /**
   * A table that has not committed for this long has its snapshots and tags expired without a
   * commit (TableWriter.expire). Expiration otherwise runs only after a commit, and a table with no
   * events (a quiet night, a weekend) keeps every tag meanwhile: the agent tags it every minute, so
   * after a weekend its first commit would delete a day's worth (~1,440 overdue tags) at once, on the
   * event loop. Default 10 min.
   */
  idleExpireMs?: number;
  /**
   * The streams a binding by wildcard (`tilstand/+/events/yard/+`) takes from one module: an event
   * of a new stream name that only such bindings match, from a module with this many sequenced
   * streams already, is refused (dead letter `binding_error` naming them, not sequenced; a replay
   * writes it). A stream is kept for good once taken (the sequencer, status, every table's
   * progress), so a module publishing under ever new names grew the site without bound. A stream
   * a binding names is always taken. Default 1,000.
   */
  streamsPerModuleMax?: number;
  /** Journal checkpoint name holding the lowest committed position (prune with keepAfter = it). */
  checkpointName?: string;
  /**
   * Loud events without a caller to return to (gap skips, apply failures), and what a table's
   * commit maintenance could not do (a partition `partition.expiration-time` cannot date: the
   * writers' `onWarning`, prefixed `ingest: `; never a process warning).
   */
  onWarning?: (message: string) => void;
  /**
   * Each table writer's random source for its first partition-expiration check (core/lsm
   * WriterOptions.partitionExpireRandom; default Math.random, as Java). core/replay seeds one from
   * the fixture so that two replays drop partitions at the same commits.
   */
  partitionExpireRandom?: () => number;
  /**
   * What an operator waits for and should be told of: a journal read at open of at least
   * `journalReadNoteEvents` events (a table made at this start reads the whole retained journal),
   * said before it and when it is done.
   */
  onInfo?: (message: string) => void;
  /** The journal read at open that `onInfo` tells of, in events. Default 100 000 (about a second here). */
  journalReadNoteEvents?: number;
  /**
   * A resume in place (core/site): what the stopped Ingestor this one replaces counted
   * (`carryOver()`). Its counters go on here — /metrics counts since the site started, not since
   * the resume — and the journal's read at open counts only the events the stopped one had not
   * gone through (after `countedThrough`), so none is counted twice. Added once the open succeeds.
   */
  carried?: IngestorCarry;
}

/** When a stream last delivered an event (journaled and sequenced, a duplicate included). */
export interface StreamActivity {
  module: string;
  stream: string;
  /**
   * Receive time of its newest event since the Ingestor opened (journal replay included), epoch ms
   * as the wall clock reads now (measured on the monotonic clock: after a step of the PC's clock,
   * now − it is still the silence); null: none.
   */
  lastEventMs: number | null;
  /** That event's seq, or null. */
  lastSeq: number | null;
  /**
   * That event's own time (`ts_ms`, the module's clock) minus its receive time (this PC's), or
   * null: how far the module's clock runs ahead of this PC's, less the event's time in transit. A
   * backlog delivered late shows as far behind, never as ahead; ahead by minutes is a clock set
   * wrong (the module's, or this PC's).
   */
  clockAheadMs: number | null;
  /** The highest seq applied or pending (the sequencer's `issued`). */
  appliedSeq: number;
  /**
   * Events held behind missing seqs (Sequencer.gap): `from`..`to` are asked for again from the
   * module every `resync_retry_ms` and skipped at `skipAtMs`; null when nothing is held.
   */
  gap: { from: number; to: number; sinceMs: number; skipAtMs: number | null } | null;
}

export interface TableStatus {
  table: string;
  budgetMs: number;
  decision: string;
  confirmedBy: string;
  /**
   * How far the table is behind what the site has received: the oldest event not visible in it —
   * pending (written, not committed), held behind a gap in the reorder buffer, or, once ingest
   * has stopped, journaled and not applied. 0 when there is none. Monotonic clock.
   */
  ageMs: number;
  pendingEvents: number;
  /** Events for the table held in the reorder buffer behind a missing seq (they count in `ageMs`). */
  heldEvents: number;
  lastCommitMs: number | null;
  snapshotId: number | null;
  breaches: number;
  withinBudget: boolean;
  /** Present when the Ingestor was given a DiskBudget: the journal disk alarm (acks are held). */
  diskFull?: boolean;
}

export interface IngestorHealth {
  /** Why the Ingestor stopped applying and committing (reopen to recover), or null. */
  failure: string | null;
  diskFull: boolean | null;
  /** Events waiting in the reorder buffer for a gap before them. */
  heldEvents: number;
  /** Every journal position ≤ frontier is processed. */
  frontier: bigint;
  /** Events re-applied from the journal at open. */
  recoveredEvents: number;
  /** Open dead letters closed as replayed at open: the journal's read applied their events (`closeLetters`). */
  lettersClosedAtOpen: number;
}

export const DEFAULT_CHECKPOINT_NAME = 'ingest';
const DEFAULT_PROGRESS_LAG_MAX = 50_000;
const DEFAULT_PROGRESS_INTERVAL_MS = 5 * 60_000;
const DEFAULT_IDLE_EXPIRE_MS = 10 * 60_000;
const DEFAULT_JOURNAL_READ_NOTE_EVENTS = 100_000;
const DEFAULT_STREAMS_PER_MODULE_MAX = 1_000;
/**
 * The seq_far_ahead letters a run remembers by seq (`lettersBySeq`), the newest: those it made and
 * those open at its start (the letters closed by the seq alone do not count). An older one whose
 * event comes again past it stays open, a copy to dismiss.
 */
export const FAR_LETTERS_BY_SEQ_MAX = 1_024;
/**
 * The open seq_far_ahead letters a start looks at, newest first, to find the FAR_LETTERS_BY_SEQ_MAX
 * it remembers (`rememberOpenFarLetters`: those whose seq the stream has passed are passed over).
 */
export const FAR_LETTERS_BY_SEQ_LOOKS = 2 * FAR_LETTERS_BY_SEQ_MAX;
export const DEAD_LETTER_LIST_DEFAULT = 100;
/** The most dead letters one list returns (each whole, payload included): a bound on one answer's size. */
export const DEAD_LETTER_LIST_MAX = 10_000;
/**
 * Open dead letters replayed per slice by `replayDeadLetters()`, and dismissed per slice by
 * core/site's dismiss.ts, with a turn of the event loop between slices. Measured on 200,000
 * letters of one stream (a scratch script, one machine): in one go the replay held the event loop
 * 5.3 s and took RSS from 450 to 625 MB; in slices of 10,000 each held it 0.1–0.7 s (1.2 s for
 * the slice whose commit compacted dead_letters), 6.7 s in all, RSS to 575 MB.
 */
export const DEAD_LETTER_SLICE = 10_000;
/**
 * A purge of closed dead letters asks dead_letters' writer for a full compaction once the letters
 * deleted since the last one it asked for reach this share of the letters the table held: only
 * a full compaction takes deleted letters out of the files (and gives their space back), and it
 * rewrites the whole table (which sync then sends to HQ again), so not for every hourly few.
 */
export const PURGE_FULL_COMPACTION_SHARE = 0.25;
/** Turns of the event loop a purge waits at most, before each slice, for dead_letters' compaction to finish. */
const PURGE_COMPACTION_WAIT_TURNS = 10_000;
const COMMIT_USER = 'tilstand-ingest';
/**
 * The longest turn of the event loop a deferred compaction takes (dead_letters': see `commit`),
 * give or take one input file's decode or one output file's write.
 */
export const COMPACTION_SLICE_MS = 8;
/**
 * How long one slice of a resume in place's journal read runs (`openInSlices`) before a turn of
 * the event loop, and how many events it reads between looks at the clock.
 */
export const JOURNAL_READ_SLICE_MS = 20;
const JOURNAL_READ_BATCH = 500;
/** A turn of the event loop: what is due (a journal group commit, a socket) runs first. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Target {
  readonly name: string;
  readonly table: Table;
  readonly writer: TableWriter;
  readonly fields: readonly DataField[];
  /** Progress found at open: writes the snapshot already holds are skipped (recovery). */
  readonly recovered: TableProgress;
  /** Position of the last commit (for lag and the journal checkpoint). */
  committedPosition: bigint;
  /** When this run last committed the table (rows or progress); the open time before that. Monotonic clock. */
  committedAtMs: number;
  /** When this run last expired the table without a commit (`idleExpireMs`). Monotonic clock. */
  idleExpiredAtMs: number;
  snapshotId: number | null;
  readonly freshness: Freshness;
}

/** A moment on both clocks: `wallMs` epoch ms (stored, shown), `elapsedMs` monotonic (durations). */
interface Instant {
  readonly wallMs: number;
  readonly elapsedMs: number;
}

interface Entry {
  readonly position: bigint;
  readonly topic: string;
  readonly payload: Buffer;
  /** Epoch ms (stored in letters, the journal). */
  readonly receivedAtMs: number;
  /** The same moment on the monotonic clock, taken once at accept: every age counts from it. */
  readonly receivedElapsedMs: number;
}

/** What the sequencer holds: a parsed event waiting for its turn. */
interface Item {
  readonly entry: Entry;
  /** undefined only with a refusal (an envelope refused with a seq that reads). */
  readonly envelope: Envelope | undefined;
  /** The envelope's or the contract check's refusal: the event consumes its seq and becomes a dead letter. */
  readonly refusal: Refusal | undefined;
  readonly bindings: readonly Binding[];
  /** streamKey(module, stream) of the envelope's source. */
  readonly key: string;
}

/** What a stopped Ingestor hands the one that replaces it in a resume in place (`carryOver`, option `carried`). */
export interface IngestorCarry {
  /** Its counters: the new Ingestor counts on in the same object (an accept of the stopped one still waiting for the journal lands there too). */
  readonly counters: IngestorCounters;
  /** Every journal position up to here went through its counters (processed whole before it stopped). */
  readonly countedThrough: bigint;
  /**
   * Of those, the events it held behind a gap when it stopped: counted nowhere yet (an event counts
   * at its release), so the new Ingestor counts them when it releases them. The others at or below
   * `countedThrough` it counted, a run a gap skip released among them (the skip's commit may have
   * failed, and the new Ingestor hold and release the run again).
   */
  readonly held: ReadonlySet<bigint>;
  /** The seqs its gap skips gave up on, per stream key (counted in `skippedSeqs`): a skip of them again is not counted again. */
  readonly skipped: ReadonlyMap<string, readonly { from: number; to: number }[]>;
  /** Each stream's newest event it saw (`streamActivity`; monotonic times of the same process). */
  readonly lastEvents: ReadonlyMap<string, { atMs: number; elapsedMs: number; seq: number; tsMs: number }>;
  /** Per table, its budget breaches and commits, and whether it was last seen over its budget (the episode goes on). */
  readonly tables: ReadonlyMap<string, { breaches: number; commits: number; inBreach: boolean }>;
}

export interface IngestorCounters {
  accepted: number;
  applied: number;
  duplicates: number;
  rejected: Map<DeadLetterReason, number>;
  resyncs: number;
  skippedSeqs: number;
  overflowDrops: number;
  replayed: number;
  dismissed: number;
  purged: number;
}

/** What `purgeClosedDeadLetters` did (see there). */
export interface PurgeResult {
  /** Closed letters deleted. */
  purged: number;
  /** Whether dead_letters' writer was asked for a full compaction, to give their space back. */
  fullCompaction: boolean;
}

/** What `replayDeadLetters` did (see there). */
export interface ReplayResult {
  replayed: number;
  failed: number;
  notOpen: string[];
  alike: number;
}

/**
 * How far a `replayDeadLetters` has come, after each slice: `done` of `total` letters gone through
 * (replayed, failed again, or named and not open), `replayed` and `failed` of them. Without ids
 * `total` is the open letters at the start plus those that came since: a flood that goes on while
 * it is replayed is replayed too.
 */
export interface ReplayProgress {
  done: number;
  total: number;
  replayed: number;
  failed: number;
}

export class Ingestor {
  private readonly o: IngestorOptions;
  private readonly clock: () => number;
  private readonly monotonic: () => number;
  private readonly limits: EnvelopeLimits;
  private readonly targets = new Map<string, Target>();
  private readonly deadLetters: Target;
  private readonly sequencer: Sequencer<Item>;
  private readonly duplicateWatch: DuplicateWatch;
  /** Positions of events held in the reorder buffer. */
  private readonly heldPositions = new Set<bigint>();
  /** Streams the sequencer knows (for the hwm properties). */
  private readonly streams = new Set<string>();
  /**
   * Per stream key: the newest event's receive time on both clocks and seq (streamActivity).
   * `elapsedMs` (monotonic) orders events and dates them for display; `atMs` (wall) only serves
   * `clockAheadMs`. Kept on the wall clock, a step forward made every quiet stream silent at once
   * and after a step back the newest event stopped counting until the clock caught up.
   */
  private readonly lastEvents = new Map<string, { atMs: number; elapsedMs: number; seq: number; tsMs: number }>();
  /** module → stream → streamKey, for the streams in `streams` (no key string built per event). */
  private readonly streamKeys = new Map<string, Map<string, string>>();
  /** The enrichment lookup, as the options object applyBinding takes (one object, not one per event). */
  private readonly applyOptions = { lookup: (tableName: string, key: Readonly<Record<string, unknown>>) => this.lookup(tableName, key) };
  private readonly readers = new Map<string, { table: Table; reader: TableReader }>();
  /** Dead letters written but not committed (listDeadLetters shows them too). */
  private readonly uncommittedDeadLetters = new Map<bigint, DeadLetter>();
  /** Told of new letters once dead_letters' commit holds them (`setLetterListener`). */
  private letterListener: ((letters: readonly DeadLetter[]) => void) | undefined;
  /** Positions of the letters opened since dead_letters' last commit, while a listener is set. */
  private lettersToAnnounce = new Set<bigint>();
  private openDeadLetters = 0;
  private lastProcessed = 0n;
  /** The instant `tick` runs at, while it runs (its `nowMs` may differ from the clock's). */
  private tickAt: Instant | undefined;
  private failed: Error | null = null;
  private closed = false;
  /** dead_letters' deferred compaction, in slices between events (`commit`). */
  private readonly slicer = new CompactionSlicer(COMPACTION_SLICE_MS);
  private recoveredEvents = 0;
  /** While the journal's read at open is said in the log (a long one): when it began. */
  private readNote: { startMs: number } | undefined;
  private recovering = false;
  /**
   * Open dead letters after the lowest table's position at open: the journal's read at open goes
   * through their events again. One whose event it now applies to every table bound to it (a
   * table made at this start, a binding added since) has reached its tables, so it is closed as
   * replayed (`closeLetters`). Undefined when there is none (the common start: one check per
   * released event).
   */
  private lettersToClose: Set<bigint> | undefined;
  /**
   * Open letters closed when their event's seq is released again, at another journal position,
   * by stream key and seq, every letter of it (each closes on its own condition, `releaseOne`):
   * - of `lettersToClose`, the ones whose event the reorder buffer dropped while it was held
   *   (overflow): the module's resend brings the event again, and its release closes the letter,
   *   whatever the payload. Bounded by the letters open at the start;
   * - the open `seq_far_ahead` letters, this run's (overflow or tick) and those open at its start
   *   whose seq the stream has not passed: an early event marked far ahead (CONTRACTS.md §4,
   *   "Dropped from a full reorder buffer") comes again in the module's resend, and when that seq
   *   is released with the same payload, byte for byte, its letter is closed as replayed; another
   *   payload (the stream reaching a true far event's seq with its own event) leaves it open.
   *   FAR_LETTERS_BY_SEQ_MAX in all, the oldest forgotten past it (a true far event's seq may
   *   never come); those open at the start found among the newest FAR_LETTERS_BY_SEQ_LOOKS.
   */
  private readonly lettersBySeq = new LettersBySeq(FAR_LETTERS_BY_SEQ_MAX);
  /**
   * The positions of `seq_far_ahead` letters (any status) dead_letters holds after the lowest
   * table's position at open: their events were given up (`farAhead`), so the journal's read at
   * open passes over them instead of holding them again. Undefined outside that read, or when
   * there is none.
   */
  private givenUp: Set<bigint> | undefined;
  /** Of those, the ones applied during the read at open, closed together after it. */
  private readonly lettersApplied: bigint[] = [];
  private closedAtOpen = 0;
  /** The journal position whose processing failed and stopped ingest (its counting may be partial), if a process did. */
  private failedInProcess: bigint | undefined;
  /** The counters /metrics shows; after a resume in place, the stopped Ingestor's object (`carried`). */
  private c: IngestorCounters = newCounters();
  /** While the journal is read at a resume in place: the counters that count (`c` may be the sink of events counted before). */
  private readCounting: IngestorCounters | undefined;
  /** Where the counts of events the stopped Ingestor counted already go (a resume in place), once made. */
  private uncountedSink: IngestorCounters | undefined;
  /**
   * The seqs given up on before this open, per stream key, counted in `skippedSeqs` then: dead_letters'
   * committed ranges, and the stopped Ingestor's (a resume in place). A skip here gives up on them
   * again when a table's snapshot lacks the run the skip had released (the restored sequencer holds
   * it again); they are not counted again. Undefined when there are none.
   */
  private skippedBefore: Map<string, { from: number; to: number }[]> | undefined;
  /** The journal position whose release is under way; left set when it threw (`carryOver`: not counted). */
  private releasing: bigint | undefined;
  /** How many of the bindings the last `applyBindings` skipped, as their table holds the event already. */
  private bindingsCovered = 0;
  /** Letters a purge deleted since dead_letters' writer was last asked for a full compaction (PURGE_FULL_COMPACTION_SHARE). */
  private purgedSinceFull = 0;

  /** Creates missing tables, opens every writer, restores progress and replays the journal. */
  static open(o: IngestorOptions): Ingestor {
    return new Ingestor(o);
  }

  /**
   * `open` for a resume in place after a failure (core/site): the journal's read after the
   * tables' positions — every event journaled while ingest was stopped, a day's at a long stop —
   * runs in slices of about `sliceMs` (JOURNAL_READ_SLICE_MS) with a turn of the event loop
   * between, so the site goes on answering (PUBACKs, /healthz, the UI) meanwhile, as the replay of
   * dead letters does. The stopped Ingestor it replaces keeps journaling what the broker hands it,
   * and the read goes on until it has reached the journal's end; then, in one synchronous step,
   * `beforeLast` (the caller's flush of the journal's queued appends), the rest of the read, the
   * commits and the checkpoint. The caller switches to the new Ingestor in that same step
   * (`onOpen`), so no event is handed to the stopped one between the last read and the switch.
   * `cancelled` is asked after each turn (the site stopping): true, the open gives up and
   * releases the tables. On any failure nothing stays open, as with `open`.
   */
  static async openInSlices(
    o: IngestorOptions,
    s: { sliceMs?: number; beforeLast?: () => void; onOpen?: (i: Ingestor) => void; cancelled?: () => boolean } = {},
  ): Promise<Ingestor> {
    const i = new Ingestor(o, true);
    try {
      const sliceMs = s.sliceMs ?? JOURNAL_READ_SLICE_MS;
      for (;;) {
        await turn();
        if (s.cancelled?.()) throw new Error('the reopen of ingest was given up: the site is stopping');
        if (!i.readJournal(sliceMs)) break;
      }
      if (i.failed) throw i.failed;
      s.beforeLast?.();
      i.readJournal(Infinity);
      i.finishRecovery();
      if (o.carried) i.takeCarried(o.carried);
    } catch (e) {
      i.closed = true;
      i.releaseAll();
      throw e;
    }
    s.onOpen?.(i);
    return i;
  }

  private constructor(o: IngestorOptions, sliced = false) {
    this.o = o;
    this.clock = o.clock ?? Date.now;
    this.monotonic = o.monotonicClock ?? o.clock ?? (() => Math.floor(performance.now()));
    this.limits = { ...DEFAULT_ENVELOPE_LIMITS, ...(o.limits ?? {}) };
    checkLimits(this.limits);
    // Checked here, not at their first use in `tick`: a fraction made every tick throw BigInt's
    // RangeError (no option named) and nothing committed; NaN never gave an idle table its
    // progress commit (the journal's checkpoint and prune stood still) or expired every tick.
    for (const [name, unit] of [['progressLagMax', 'positions'], ['progressIntervalMs', 'ms'], ['idleExpireMs', 'ms'], ['journalReadNoteEvents', 'events'], ['streamsPerModuleMax', 'streams']] as const) {
      const v: unknown = o[name];
      if (v !== undefined && !(typeof v === 'number' && Number.isSafeInteger(v) && v >= 0)) throw new RangeError(`${name}: expected an integer ≥ 0 (${unit}), got ${String(v)}`);
    }
    this.sequencer = new Sequencer<Item>({ ...(o.sequencer ?? {}), now_ms: () => this.tickAt?.elapsedMs ?? this.monotonic() });
    this.duplicateWatch = new DuplicateWatch(o.duplicateWatch);

    const defs = new Map<string, TableDefinition>();
    for (const d of o.tables) {
      if (defs.has(d.name)) throw new RangeError(`table '${d.name}' is given twice`);
      defs.set(d.name, d);
    }
    if (!defs.has(DEAD_LETTERS_TABLE_NAME)) defs.set(DEAD_LETTERS_TABLE_NAME, DEAD_LETTERS_TABLE);
    const budgets = resolveBudgets([...defs.keys()], o.budgets);
    for (const b of budgets.keys()) if (!defs.has(b)) throw new RangeError(`budget for table '${b}', which is not among the tables`);

    // Bindings are checked before anything is opened: a bad binding is a configuration error.
    for (const b of o.bindings) {
      const def = defs.get(b.table);
      if (!def) throw new RangeError(`binding '${bindingName(b)}': table '${b.table}' is not among the ingestor's tables`);
      const enrichTable = b.enrich ? defs.get(b.enrich.table) : undefined;
      checkBinding(b, def, { contract: bindingView(o.contracts, b.contract), ...(enrichTable ? { enrichTable } : {}) });
    }
    checkOrderingStreams(o.bindings, [...defs.values()]);
    // A table of the site's own not on disk yet, given an option value only an earlier version
    // took (site-tables.ts checkNewTable): refused before any table is made or opened.
    for (const def of defs.values()) if (def.definedBy !== undefined && !o.catalog.tableExists({ database: o.database, table: def.name })) checkNewTable(def);

    o.catalog.createDatabase(o.database, true);
    try {
      for (const def of defs.values()) this.openTarget(def, budgets.get(def.name)!);
      this.deadLetters = this.targets.get(DEAD_LETTERS_TABLE_NAME)!;
      // A resume in place: the streams' newest events the stopped Ingestor saw (its read below
      // adds what it journaled while stopped). Not counted: nothing in the carry is.
      for (const [k, v] of o.carried?.lastEvents ?? []) {
        const { module, stream } = splitStreamKey(k);
        this.lastEvents.set(this.streamKeyOf(module, stream), { ...v });
      }
      this.recover(sliced);
      if (o.carried && !sliced) this.takeCarried(o.carried);
    } catch (e) {
      this.releaseAll();
      throw e;
    }
  }

  private openTarget(def: TableDefinition, budget: TableBudget): void {
    const id = { database: this.o.database, table: def.name };
    const table = this.o.catalog.tableExists(id)
      ? def.name === DEAD_LETTERS_TABLE_NAME
        ? upgradeDeadLetters(this.o.catalog.getTable(id))
        : def.definedBy !== undefined
          ? evolvedToDefinition(this.o.catalog.getTable(id), def, (m) => this.o.onWarning?.(`ingest: ${m}`))
          : this.o.catalog.getTable(id)
      : this.o.catalog.createTable(id, {
          fields: def.fields.map((f) => (f.description === undefined ? { name: f.name, type: f.type } : { name: f.name, type: f.type, description: f.description })),
          primaryKeys: [...def.primaryKeys],
          partitionKeys: [...def.partitionKeys],
          options: { ...def.options },
          ...(def.comment === undefined ? {} : { comment: def.comment }),
        });
    // Dead letters are written much (a flood: every event) and read little (a list reads the
    // heads and the few letters it shows): their files stay out of the run cache, and their
    // compaction runs in slices between events (`commit`, core/lsm CompactionSlicer), not inside the commit.
    // A partitioned table of the site's own with `partition.expiration-time` tells of a partition
    // it cannot date (its values give no time) at its commits: into the site's log with ingest's
    // other warnings, not as a process warning nobody reads.
    const writer = table.newWriter({
      commitUser: COMMIT_USER,
      onWarning: (m) => this.o.onWarning?.(`ingest: ${m}`),
      ...(this.o.partitionExpireRandom ? { partitionExpireRandom: this.o.partitionExpireRandom } : {}),
      ...(def.name === DEAD_LETTERS_TABLE_NAME ? { cacheWrites: false, compaction: 'deferred' } : {}),
    });
    const latest = table.latestSnapshot();
    let recovered: TableProgress;
    try {
      recovered = latest ? readProgress(table.committedProperties(), table.name) : NO_PROGRESS;
    } catch (e) {
      writer.close();
      throw e;
    }
    this.targets.set(def.name, {
      name: def.name,
      table,
      writer,
      fields: table.schema.fields,
      recovered,
      committedPosition: recovered.position,
      committedAtMs: this.monotonic(),
      idleExpiredAtMs: this.monotonic(),
      snapshotId: latest?.id ?? null,
      freshness: new Freshness(budget, latest ? latest.timeMillis : null),
    });
    if (this.o.carried?.tables.get(def.name)?.inBreach === true) this.targets.get(def.name)!.freshness.continueBreachEpisode();
  }

  // ------------------------------------------------------------------------------------------
  // Recovery.

  /**
   * 1. Restore each stream's sequencer high-water mark to the lowest committed hwm among the
   *    tables the stream can affect (its bound tables and dead_letters); a table without one
   *    starts where the journal starts (`journalStarts`).
   * 2. Replay the journal after the lowest committed position through the normal pipeline; the
   *    per-table guards (`covered`) skip what a table's snapshot already holds.
   * 3. Commit what the replay wrote, so recovered state is visible at once.
   */
  private recover(sliced: boolean): void {
    const known = new Set<string>();
    for (const t of this.targets.values()) for (const k of t.recovered.hwm.keys()) known.add(k);
    const starts = this.journalStarts(known);
    // The ranges gap skips gave up on, as dead_letters (where their late events go) committed
    // them with its hwm; the sequencer keeps the part at or below the restored position (above
    // it the replay offers those seqs again, and a skip gives up on them again if they stay lost).
    const skipped = this.deadLetters.snapshotId === null ? undefined : readSkipped(this.deadLetters.table.committedProperties());
    if (skipped !== undefined && skipped.bad.length > 0) {
      this.o.onWarning?.(`ingest: table ${this.deadLetters.table.name}: snapshot properties ${skipped.bad.join(', ')} do not read as skipped ranges (from-to@ms,…); late events of those gaps are dropped as duplicates`);
    }
    // Each range once: the carry holds dead_letters' ranges again (the stopped one's, and its
    // sequencer's restored from them), and a list that grew at every resume in place was sorted at
    // every skip.
    for (const [k, ranges] of [...(skipped?.ranges ?? []), ...(this.o.carried?.skipped ?? [])]) {
      if (ranges.length === 0) continue;
      let into: { from: number; to: number }[] | undefined = (this.skippedBefore ??= new Map()).get(k);
      if (into === undefined) this.skippedBefore.set(k, (into = []));
      for (const r of ranges) if (!into.some((x) => x.from === r.from && x.to === r.to)) into.push({ from: r.from, to: r.to });
    }
    for (const k of known) {
      const { module, stream } = splitStreamKey(k);
      let low = Infinity;
      for (const t of this.affected(module, stream)) low = Math.min(low, t.recovered.hwm.get(k) ?? starts.get(t)?.get(k) ?? Infinity);
      if (low === Infinity) low = 0;
      if (low > 0) this.sequencer.restore(module, stream, low);
      const ranges = skipped?.ranges.get(k);
      if (ranges !== undefined) this.sequencer.restoreSkipped(module, stream, ranges);
      this.streamKeyOf(module, stream);
    }
    let start: bigint | undefined;
    for (const t of this.targets.values()) if (start === undefined || t.recovered.position < start) start = t.recovered.position;
    // A journal that ends before every table's position (a fresh journal.db under tables
    // restored from HQ, one restored from an older copy) numbered its new events from there: the
    // first was processed "before" the lowest table's position (the assertion in `process`
    // stopped ingest for good), and one at or below a table's position would be taken for one the
    // table holds. The journal can never bring those positions again, so new events continue
    // after the highest table's; what the tables lack comes back by seq, as the modules resend
    // (resync). (A journal that ends between the lowest and the highest table's position is what
    // core/replay builds: the events above its end come again with the same positions.)
    const journalLast = this.o.journal.lastPosition();
    if (start !== undefined && journalLast < start) {
      let ahead = this.deadLetters;
      for (const t of this.targets.values()) if (t.recovered.position > ahead.recovered.position) ahead = t;
      this.o.journal.continueAfter(ahead.recovered.position);
      this.o.onWarning?.(
        `ingest: journal.db ends at position ${journalLast}, before every table's (table ${ahead.name} holds events through ${ahead.recovered.position}): tables restored, or journal.db lost or older than them; new events are numbered after ${ahead.recovered.position}, and the modules resend what the tables lack`,
      );
    }
    this.lastProcessed = start ?? 0n;
    // The open letters: counted, and those the read below goes through again remembered. One pass
    // over the letters' heads (a site that had a bad day holds hundreds of thousands).
    const after: bigint[] = [];
    const farOpen: bigint[] = [];
    for (const h of deadLetterHeads(this.deadLetters.table, ['reason'])) {
      const far = h.reason === 'seq_far_ahead';
      // Events given up far ahead of their stream whose letters are committed (any status) after
      // the read's start: the tables' positions may still be before them (another event held there
      // at the commit), and held again by the read they kept the journal there for
      // far_ahead_give_up_ms more and were lettered again, a dismissed letter reopened.
      if (far && h.position > this.lastProcessed) (this.givenUp ??= new Set()).add(h.position);
      if (h.status !== 'open') continue;
      this.openDeadLetters++;
      if (h.position > this.lastProcessed) after.push(h.position);
      if (far) farOpen.push(h.position);
    }
    if (after.length > 0) this.lettersToClose = new Set(after);
    this.rememberOpenFarLetters(farOpen);
    // A start's open holds the event loop for the read (the broker and the UI are not up yet): a
    // long one is said, naming the tables it is for, so a start that takes a minute is not taken
    // for hung. A resume in place reads in slices (`openInSlices`): the site answers meanwhile.
    const toRead = this.o.journal.lastPosition() - this.lastProcessed;
    const note = toRead >= BigInt(this.o.journalReadNoteEvents ?? DEFAULT_JOURNAL_READ_NOTE_EVENTS) && this.o.onInfo !== undefined;
    this.readNote = note ? { startMs: performance.now() } : undefined;
    if (note) {
      const behind = [...this.targets.values()].filter((t) => t.recovered.position === this.lastProcessed).map((t) => (t.snapshotId === null ? `${t.name} (new)` : t.name));
      this.o.onInfo!(`ingest: reading ${toRead} journal events after position ${this.lastProcessed} into ${behind.join(', ')}; ${sliced ? 'in slices, the site answering meanwhile' : 'the site answers once they are read'}`);
    }
    if (sliced) return;
    this.readJournal(Infinity);
    this.finishRecovery();
  }

  /**
   * The seq_far_ahead letters open at the start (`positions`) into `lettersBySeq`, as the run that
   * made them had its own: the release of the seq with the same payload closes the letter,
   * whichever run it comes in. The newest FAR_LETTERS_BY_SEQ_MAX of those whose seq the stream has
   * not passed (the sequencer, restored, never releases a seq at or below its position: such a
   * letter would only take the place of one that can still close). Gone through newest first, one
   * point read by position each, at most FAR_LETTERS_BY_SEQ_LOOKS of them: a start reads a bounded
   * number of rows here, however old the oldest open far letter and however many letters lie
   * after it; an older one not looked at stays open, a copy to dismiss.
   */
  private rememberOpenFarLetters(positions: readonly bigint[]): void {
    if (positions.length === 0) return;
    const newestFirst = [...positions].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
    const kept: SeqLetter[] = [];
    const reader = this.deadLetters.table.reader();
    try {
      const fields = reader.schema.fieldIndex;
      const [m, st, sq] = (['module', 'stream', 'seq'] as const).map((c) => fields.get(c)!);
      for (const position of newestFirst.slice(0, FAR_LETTERS_BY_SEQ_LOOKS)) {
        const row = reader.get({ position });
        if (row === undefined) continue;
        const [module, stream, seq] = [row[m!], row[st!], row[sq!]] as [string | null, string | null, bigint | null];
        if (module === null || stream === null || seq === null) continue;
        if (Number(seq) <= this.sequencer.issued(module, stream)) continue;
        kept.push({ key: streamKey(module, stream), seq: Number(seq), position, samePayload: true });
        if (kept.length === FAR_LETTERS_BY_SEQ_MAX) break;
      }
    } finally {
      reader.close();
    }
    // Oldest first, so the run's own letters push out the oldest of them first.
    for (let k = kept.length - 1; k >= 0; k--) this.lettersBySeq.add(kept[k]!);
  }

  /**
   * Reads the journal on from the last event processed, for about `ms` (Infinity: to its end, in
   * one go): true when it stopped for the time and more may follow, false when it read to the end
   * (or ingest failed on the way: `failed`).
   */
  private readJournal(ms: number): boolean {
    const end = performance.now() + ms;
    this.recovering = true;
    // A resume in place: the events the stopped Ingestor went through are counted there already
    // (in its counters, which this one takes over once open), so their second pass counts nowhere.
    const counting = this.c;
    const uncounted = this.o.carried === undefined ? undefined : (this.uncountedSink ??= newCounters());
    const countedThrough = this.o.carried?.countedThrough ?? 0n;
    this.readCounting = counting;
    const batch = ms === Infinity ? Number.MAX_SAFE_INTEGER : JOURNAL_READ_BATCH;
    try {
      for (;;) {
        let n = 0;
        for (const e of this.o.journal.readAfter(this.lastProcessed, batch)) {
          if (uncounted !== undefined) this.c = e.position <= countedThrough ? uncounted : counting;
          this.process({ position: e.position, topic: e.topic, payload: e.payload, receivedAtMs: e.receivedAtMs, receivedElapsedMs: this.elapsedAt(e.receivedAtMs) });
          this.recoveredEvents++;
          n++;
        }
        if (this.failed || n < batch) return false;
        if (performance.now() >= end) return true;
      }
    } finally {
      this.recovering = false;
      this.c = counting;
      this.readCounting = undefined;
    }
  }

  /** After the journal's read at open: the letters it closed, the tables' commits, the checkpoint. */
  private finishRecovery(): void {
    if (this.failed) throw this.failed;
    if (this.readNote) this.o.onInfo!(`ingest: read ${this.recoveredEvents} journal events in ${((performance.now() - this.readNote.startMs) / 1000).toFixed(1)} s`);
    this.closedAtOpen = this.closeLetters(this.lettersApplied.splice(0));
    this.givenUp = undefined;
    // An event still held for a gap may yet be released and applied; the others were read.
    if (this.lettersToClose) for (const p of this.lettersToClose) if (!this.heldPositions.has(p)) this.lettersToClose.delete(p);
    if (this.lettersToClose?.size === 0) this.lettersToClose = undefined;
    // Commit what the replay wrote, and move every lagging table's position to the frontier, so
    // the next start replays from here (one snapshot per table and start, only when behind).
    const now = this.instant();
    const frontier = this.frontier();
    for (const t of this.targets.values()) {
      if (t.freshness.pendingEvents > 0 || t.committedPosition < frontier) this.commit(t, now);
    }
    this.writeCheckpoint();
  }

  /**
   * Where a stream starts for a table it can change that has no high-water mark of it, though
   * another table has (a table made at this start, or bound since). When the journal holds every
   * event after the table's position (nothing after it was pruned: a replay's fixture, a table
   * made before any prune), at the stream's beginning (0): each of its events is replayed. Else
   * where the journal starts: the lowest seq of the stream the journal holds after the table's
   * position, less 1. Counted as 0 there, it restored the stream's sequencer to 0, and once prune
   * had taken seq 1 every table of the stream held its events behind a gap no resend could close
   * (the module's outbox keeps only its newest acknowledged events). Absent when the journal holds
   * none of the stream: the table then counts as none, and starts where the stream's other tables
   * are. One read of the journal, at the start that makes or binds such a table only.
   */
  private journalStarts(known: ReadonlySet<string>): Map<Target, Map<string, number>> {
    const pruned = this.o.journal.prunedThroughPosition();
    /** Per table, the lowest seq of each stream it starts after (1: its beginning; Infinity: none found yet). */
    const lowest = new Map<Target, Map<string, number>>();
    let scan = false;
    for (const k of known) {
      const { module, stream } = splitStreamKey(k);
      for (const t of this.affected(module, stream)) {
        if (t.recovered.hwm.has(k)) continue;
        let m = lowest.get(t);
        if (m === undefined) lowest.set(t, (m = new Map()));
        const whole = pruned <= t.recovered.position;
        m.set(k, whole ? 1 : Infinity);
        if (!whole) scan = true;
      }
    }
    if (scan) {
      let from: bigint | undefined;
      for (const t of lowest.keys()) if (from === undefined || t.recovered.position < from) from = t.recovered.position;
      for (const e of this.o.journal.readAfter(from!)) {
        // The seq the journal took from an envelope that parsed (others are not sequenced, or a refusal's).
        if (e.seq === null || e.seq <= 0n || e.seq > BigInt(Number.MAX_SAFE_INTEGER)) continue;
        const k = streamKey(e.module, e.stream);
        for (const [t, m] of lowest) {
          const seen = m.get(k);
          if (seen !== undefined && e.position > t.recovered.position && Number(e.seq) < seen) m.set(k, Number(e.seq));
        }
      }
    }
    for (const m of lowest.values()) {
      for (const [k, seq] of m) {
        if (seq === Infinity) m.delete(k);
        else m.set(k, seq - 1);
      }
    }
    return lowest;
  }

  /** The stream's key, remembered; adds the stream to `streams`. */
  private streamKeyOf(module: string, stream: string): string {
    let byStream = this.streamKeys.get(module);
    if (byStream === undefined) {
      byStream = new Map();
      this.streamKeys.set(module, byStream);
    }
    let key = byStream.get(stream);
    if (key === undefined) {
      key = streamKey(module, stream);
      byStream.set(stream, key);
      this.streams.add(key);
    }
    return key;
  }

  /**
   * The refusal of a stream the module's limit leaves out (`streamsPerModuleMax`): a new name,
   * only bindings by wildcard match it, and the module has that many streams already. Undefined
   * when the stream is taken.
   */
  private beyondStreamLimit(module: string, stream: string, bindings: readonly Binding[]): Refusal | undefined {
    const byStream = this.streamKeys.get(module);
    const taken = byStream?.size ?? 0;
    const max = this.o.streamsPerModuleMax ?? DEFAULT_STREAMS_PER_MODULE_MAX;
    if (taken < max || byStream?.has(stream) === true) return undefined;
    if (bindings.some((b) => streamOfFilter(b.topic) !== undefined)) return undefined;
    const names = bindings.map((b) => `'${bindingName(b)}'`).join(', ');
    return refuse(
      'binding_error',
      `stream ${module}/${stream}: module ${module} has ${taken} streams already, and a binding by wildcard (${names}) takes at most ${max} (streamsPerModuleMax): each stream is kept for good, so new names are not taken past it; a replay writes this event, or bind the stream by name`,
    );
  }

  /** Tables an event of (module, stream) can change: its bound tables and dead_letters. */
  private affected(module: string, stream: string): Target[] {
    const out = new Set<Target>([this.deadLetters]);
    for (const b of bindingsFor(this.o.bindings, eventTopic(this.o.site, module, stream))) out.add(this.targets.get(b.table)!);
    return [...out];
  }

  /** True when table t's recovered snapshot already holds this event's effect. */
  private covered(t: Target, entry: Entry, seq: { key: string; seq: number } | undefined): boolean {
    if (entry.position <= t.recovered.position) return true;
    return seq !== undefined && seq.seq <= (t.recovered.hwm.get(seq.key) ?? 0);
  }

  /** True when every table the event can change (its bindings' and dead_letters) holds it already. */
  private coveredEverywhere(entry: Entry, bindings: readonly Binding[], seq: { key: string; seq: number }): boolean {
    if (!this.covered(this.deadLetters, entry, seq)) return false;
    return bindings.every((b) => this.covered(this.targets.get(b.table)!, entry, seq));
  }

  /** How many of the seqs from..to a skip gave up on before this open (`skippedBefore`). */
  private skippedAgain(module: string, stream: string, from: number, to: number): number {
    const ranges = this.skippedBefore?.get(streamKey(module, stream));
    if (ranges === undefined) return 0;
    // The ranges may overlap (dead_letters' and the stopped Ingestor's): count each seq once.
    let n = 0;
    let at = from;
    for (const r of [...ranges].sort((a, b) => a.from - b.from)) {
      const lo = Math.max(r.from, at);
      const hi = Math.min(r.to, to);
      if (lo > hi) continue;
      n += hi - lo + 1;
      at = hi + 1;
    }
    return n;
  }

  // ------------------------------------------------------------------------------------------
  // Accepting events.

  /**
   * The broker's durable sink: journals the event (group commit) and resolves with its position
   * once it is on disk; the event is applied right after. A failure to apply does not reject (the
   * event is durable and will be applied on reopen); a failure to journal rejects (no PUBACK).
   */
  accept(topic: string, payload: Buffer, receivedAtMs?: number): Promise<bigint> {
    // Not an async function: its suspend and resume cost about 0.3 µs per event (bench/README.md,
    // "The full Ingestor's extra cost"). It answers as one would: a throw is a rejection, and the
    // event is applied in the journal promise's reaction, before the returned promise resolves.
    try {
      if (this.closed) throw new Error('ingestor is closed');
      const at = receivedAtMs ?? this.clock();
      // Taken now, before the journal's wait: ages count from when the site received the event.
      const atElapsed = receivedAtMs === undefined ? this.monotonic() : this.elapsedAt(receivedAtMs);
      const parsed = parseEnvelope(topic, payload, this.limits, { site: this.o.site });
      const parts = parseEventTopic(topic);
      const journaled: Parameters<Journal['append']>[0] = { topic, payload, receivedAtMs: at, module: parts?.module ?? '', stream: parts?.stream ?? '' };
      if (parsed.ok) journaled.seq = parsed.envelope.source.seq;
      return Promise.resolve(this.o.journal.append(journaled)).then((position) => {
        this.c.accepted++;
        if (!this.closed) this.process({ position, topic, payload, receivedAtMs: at, receivedElapsedMs: atElapsed }, parsed);
        return position;
      });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  private process(entry: Entry, parsed?: ParseResult): void {
    if (this.failed) return this.unapplied(entry, parsed);
    try {
      if (entry.position <= this.lastProcessed) {
        throw new Error(`assertion failed: journal position ${entry.position} processed after ${this.lastProcessed}`);
      }
      this.lastProcessed = entry.position;
      this.route(entry, (parsed ??= parseEnvelope(entry.topic, entry.payload, this.limits, { site: this.o.site })));
    } catch (e) {
      if (this.lastProcessed === entry.position) this.failedInProcess = entry.position;
      this.fail(e, `applying journal position ${entry.position}`);
      this.unapplied(entry, parsed);
    }
  }

  /**
   * Ingest has stopped: the event is journaled and will not be applied in this run, so the tables
   * it is for are behind from its receive time (their age grows, and the screen shows them late).
   * Which tables: its bindings' (by topic), dead_letters for what would be refused.
   */
  private unapplied(entry: Entry, parsed: ParseResult | undefined): void {
    const p = parsed ?? parseEnvelope(entry.topic, entry.payload, this.limits, { site: this.o.site });
    const bindings = p.ok && checkEnvelopeContract(this.o.contracts, p.envelope).ok ? bindingsFor(this.o.bindings, entry.topic) : [];
    // Its module is there: a stream the Ingestor knows shows the event (else every stream still
    // sending read as silent while ingest was stopped, and after the resume in place).
    if (p.ok && bindings.length > 0) {
      const key = this.streamKeys.get(p.envelope.source.module)?.get(p.envelope.source.stream);
      if (key !== undefined) this.noteEvent(key, entry, p.envelope.source.seq, p.envelope.ts_ms);
    }
    if (bindings.length === 0) return this.deadLetters.freshness.noteUnapplied(entry.receivedElapsedMs);
    for (const b of bindings) this.targets.get(b.table)!.freshness.noteUnapplied(entry.receivedElapsedMs);
  }

  private route(entry: Entry, parsed: ParseResult): void {
    // Given up far ahead of its stream before this open, its letter committed: not sequenced again
    // (its seq was not consumed then either), nothing held (CONTRACTS.md §4).
    if (this.givenUp?.delete(entry.position) === true) return;
    // An envelope refused with a seq that reads (parseEnvelope: its source names this topic's
    // module and stream) is sequenced on a bound stream as a contract refusal is: it consumes
    // its seq, or the stream's next events waited behind a gap no resend could close.
    if (!parsed.ok && parsed.seq === undefined) return void this.deadLetter(entry, parsed, undefined, null);
    const env = parsed.ok ? parsed.envelope : undefined;
    const { module, stream } = env ? env.source : parseEventTopic(entry.topic)!;
    const seq = env ? env.source.seq : (parsed as Refusal).seq!;
    const bindings = bindingsFor(this.o.bindings, entry.topic);
    const check: ContractCheck = env ? checkEnvelopeContract(this.o.contracts, env) : (parsed as Refusal);
    if (bindings.length === 0) {
      // Not sequenced: nothing reads this stream yet; the event waits in dead_letters for a binding.
      const why = check.ok ? refuse('no_binding', `no binding matches topic '${entry.topic}'`) : check;
      return void this.deadLetter(entry, why, undefined, null);
    }
    const beyond = this.beyondStreamLimit(module, stream, bindings);
    if (beyond !== undefined) return void this.deadLetter(entry, beyond, undefined, bindings.map(bindingName));
    const key = this.streamKeyOf(module, stream);
    // Its newest event. Not from the journal's read at a start: that event came before this open
    // (a restart after a held event reads everything after it again, and its streams showed a
    // stream_silent alarm at once after a long stop, the others not); a resume in place reads what
    // the stopped Ingestor took since the site started, so there it counts.
    if (!this.recovering || this.o.carried !== undefined) this.noteEvent(key, entry, seq, env?.ts_ms);
    const item: Item = { entry, envelope: check.ok ? check.envelope : env, refusal: check.ok ? undefined : check, bindings, key };
    // The common case (the stream's next seq, nothing held) without the offer's result objects.
    if (this.sequencer.takeNext(module, stream, seq)) {
      this.duplicateWatch.progress(module, stream);
      return this.release({ seq, item });
    }
    // Held, the event costs its payload (and the parse of it): the byte bound counts the payload.
    const offer = this.sequencer.offer(module, stream, seq, item, entry.payload.length);
    if (offer.kind === 'late') {
      // Behind the stream's position, in a range the gap policy gave up on: never applied, so not
      // a duplicate. A letter (keyed by position, like an unsequenced one: the seq is below
      // dead_letters' hwm) that moves no position and holds nothing back (CONTRACTS.md §4).
      const { from, to, atMs } = offer.skipped;
      const why = refuse(
        'late_after_gap',
        `seq ${seq} of ${module}/${stream} came after the site gave up waiting for seq ${from}..${to} at ${Number.isNaN(new Date(atMs).getTime()) ? `${atMs} ms` : new Date(atMs).toISOString()} (gap_give_up_ms) and went on with later events; it was not applied. A replay writes it where no later event of the stream changed the row (the table orders by seq); or dismiss it with a note`,
        'source.seq',
      );
      return void this.deadLetter(entry, why, undefined, null, seq);
    }
    if (offer.kind === 'duplicate') {
      // The journal's read at a restart goes through events every table holds already (after the
      // oldest held event, the tables' position stays before it): those were counted by the run
      // that took them; a module's resend journaled since (a seq some table lacks) counts. A
      // resume in place counts by position instead (`countedThrough`).
      if (!this.recovering || this.o.carried !== undefined || !this.coveredEverywhere(entry, bindings, { key, seq })) this.c.duplicates++;
      // At or below the restored position, read after an event the read holds again: in the run
      // that took it, it came in order after that one (sequencer.ts `wentOnBelow`). Else a far
      // event held at a restart was dropped by the next overflow without a letter (CONTRACTS.md §4).
      if (this.recovering) this.sequencer.wentOnBelow(module, stream, seq);
      // Not while the journal is replayed at open: those events arrived before (their times are old).
      if (!this.recovering) this.duplicateWatch.duplicate(module, stream, seq, this.sequencer.issued(module, stream), this.monotonic(), this.clock());
      return;
    }
    this.duplicateWatch.progress(module, stream);
    switch (offer.kind) {
      case 'next':
        for (const r of offer.ready) this.release(r);
        return;
      case 'gap':
        this.heldPositions.add(entry.position);
        this.hold(item, seq);
        return;
      case 'overflow': {
        this.c.overflowDrops += offer.dropped.length;
        let kept = true;
        for (const d of offer.dropped) {
          if (d.item === item) kept = false;
          // Held far ahead (the stream went on in order below it since it came): the resync's
          // resend will not bring it, so it is a letter now, as `tick`'s far_ahead makes one.
          if (d.farAhead === true) {
            this.farAhead(d, module, stream, offer.resync.from - 1, 'overflow');
            continue;
          }
          if (this.lettersToClose?.delete(d.item.entry.position) === true) this.lettersBySeq.add({ key: d.item.key, seq: d.seq, position: d.item.entry.position, samePayload: false });
          if (d.item !== item) {
            this.heldPositions.delete(d.item.entry.position);
            this.unhold(d.item);
          }
        }
        if (kept) {
          this.heldPositions.add(entry.position);
          this.hold(item, seq);
        }
        this.requestResync(offer.resync.module, offer.resync.stream, offer.resync.from);
        return;
      }
    }
  }

  /** The stream's newest event (`streamActivity`); `tsMs` undefined: a refused envelope's, whose ts_ms may not be a time. */
  private noteEvent(key: string, entry: Entry, seq: number, envTsMs: number | undefined): void {
    const last = this.lastEvents.get(key);
    const tsMs = envTsMs ?? last?.tsMs ?? entry.receivedAtMs;
    if (last === undefined) this.lastEvents.set(key, { atMs: entry.receivedAtMs, elapsedMs: entry.receivedElapsedMs, seq, tsMs });
    else if (entry.receivedElapsedMs >= last.elapsedMs) {
      last.atMs = entry.receivedAtMs;
      last.elapsedMs = entry.receivedElapsedMs;
      last.seq = seq;
      last.tsMs = tsMs;
    }
  }

  /**
   * A held event counts toward the age of the tables it is for from its receive time: received,
   * and not visible there. (Counted nowhere, work_queue showed "within budget" while a job update
   * waited minutes for a missing seq.) Rare: the common path only asks `heldPositions`.
   */
  private hold(item: Item, seq: number): void {
    const { entry } = item;
    if (item.refusal) return this.deadLetters.freshness.hold(entry.position, entry.receivedElapsedMs);
    for (const b of item.bindings) {
      const t = this.targets.get(b.table)!;
      // A table whose recovered snapshot holds the event already is not behind on it.
      if (!this.covered(t, entry, { key: item.key, seq })) t.freshness.hold(entry.position, entry.receivedElapsedMs);
    }
  }

  /** The held event was released (its writes then count as pending) or dropped (its module resends it). */
  private unhold(item: Item): void {
    const p = item.entry.position;
    this.deadLetters.freshness.unhold(p);
    for (const b of item.bindings) this.targets.get(b.table)!.freshness.unhold(p);
  }

  /**
   * An event whose turn came. After a resume in place, one the stopped Ingestor went through
   * (at or below `countedThrough`) counts only if it held it when it stopped (an event counts at
   * its release): the others it counted, a run its gap skip released among them, which the new
   * Ingestor holds and releases again when the skip's commit failed.
   */
  private release(r: Ready<Item>): void {
    const carried = this.o.carried;
    if (carried === undefined || r.item.entry.position > carried.countedThrough) return this.releaseOne(r);
    const c = this.c;
    this.c = carried.held.has(r.item.entry.position) ? (this.readCounting ?? c) : (this.uncountedSink ??= newCounters());
    try {
      this.releaseOne(r);
    } finally {
      this.c = c;
    }
  }

  /**
   * The letters `releaseOne` closes once `entry` is applied (the rules in its body): the one at its
   * position (`atHere`) and those remembered by its seq (`bySeq`), each on its own condition.
   */
  private lettersClosedBy(entry: Entry, seq: { key: string; seq: number }, bindings: readonly Binding[], atHere: boolean, bySeq: readonly SeqLetter[]): bigint[] {
    let takes: boolean | undefined;
    const everyTableTakes = () => (takes ??= bindings.every((b) => !this.covered(this.targets.get(b.table)!, entry, seq)));
    const close: bigint[] = [];
    if (atHere && everyTableTakes()) close.push(entry.position);
    if (bySeq.length > 0) {
      const far = bySeq.filter((l) => l.samePayload);
      const farLetters = far.length === 0 ? [] : this.lettersAt(far.map((l) => l.position));
      for (const l of bySeq) {
        if (l.position === entry.position) continue;
        if (l.samePayload ? farLetters[far.indexOf(l)]?.payload.equals(entry.payload) === true : everyTableTakes()) close.push(l.position);
      }
    }
    return close;
  }

  /** An event whose turn came: contract refusal → dead letter; else every matching binding. */
  private releaseOne(r: Ready<Item>): void {
    const { entry, envelope, refusal, bindings } = r.item;
    this.releasing = entry.position;
    if (this.heldPositions.delete(entry.position)) this.unhold(r.item);
    const seq = { key: r.item.key, seq: r.seq };
    if (refusal) {
      this.deadLetter(entry, refusal, seq, null);
      this.releasing = undefined;
      return;
    }
    // The open letters of this event, closed once it is applied (no binding fails):
    // - at this position (refused whole before): if every bound table takes it now; a table that
    //   holds the event already (covered) may have skipped its seq, so the letter stays open;
    // - remembered by this seq (`lettersBySeq`) at another position, each on its own condition:
    //   one the event had before the reorder buffer dropped it (its resend comes at a new
    //   position), as the one at this position; a seq_far_ahead letter when this is its event again
    //   (the same payload, byte for byte), an early event the overflow took for one far ahead.
    //   Such a letter is of the whole event (its bindings null), so a covered table counts as
    //   having taken it: a kill between the tables' commit and dead_letters' leaves the tables
    //   holding the resend and the letter open, and the journal's read releases the seq again.
    // (The checks only when there is a letter: the common release has none, and allocates nothing here.)
    const atHere = this.lettersToClose?.delete(entry.position) === true;
    const bySeq = this.lettersBySeq.take(seq.key, seq.seq);
    const close = atHere || bySeq.length > 0 ? this.lettersClosedBy(entry, seq, bindings, atHere, bySeq) : undefined;
    const failures = this.applyBindings(entry, envelope!, bindings, seq);
    if (failures.length > 0) {
      // Counted once its letter is written: a write that throws leaves `releasing` set (held, not counted).
      this.deadLetter(entry, combine(failures), seq, failures.map((f) => f.binding));
      this.releasing = undefined;
    } else {
      this.releasing = undefined;
      // Not when every table holds it already: applied (and counted) before — a run a gap skip had
      // released and committed, held again at a restart since dead_letters' snapshot was older.
      if (this.bindingsCovered < bindings.length) this.c.applied++;
      if (close !== undefined && close.length > 0) {
        if (this.recovering) this.lettersApplied.push(...close);
        else this.closeLetters(close);
      }
    }
  }

  /**
   * Marks replayed the open letters at `positions` whose events were just applied to every table
   * bound to them, as a replay would have (`replayLetters`): the events a new module sent before
   * its table was defined and bound are read from the journal by the start that makes the table,
   * and left open their letters counted as unresolved until someone replayed them for nothing. A
   * letter of some bindings' failure only (`bindings` set: the others took the event) is left.
   * Written to dead_letters, committed with the tables' rows (the journal is read again for a
   * table whose commit did not land, and a letter left open is replayed harmlessly). Returns how
   * many it closed.
   */
  private closeLetters(positions: readonly bigint[]): number {
    if (positions.length === 0) return 0;
    const at = this.instant();
    let n = 0;
    for (const d of this.lettersAt(positions)) {
      if (d === undefined || d.status !== 'open' || d.bindings !== null) continue;
      this.writeDeadLetter({ ...d, status: 'replayed', replayedAtMs: at.wallMs }, at.elapsedMs);
      n++;
    }
    this.openDeadLetters -= n;
    this.c.replayed += n;
    return n;
  }

  /** Runs bindings and writes their rows; returns the failures (each binding independently). */
  private applyBindings(
    entry: Entry,
    envelope: Envelope,
    bindings: readonly Binding[],
    seq: { key: string; seq: number } | undefined,
  ): { binding: string; refusal: Refusal }[] {
    const failures: { binding: string; refusal: Refusal }[] = [];
    this.bindingsCovered = 0;
    for (const b of bindings) {
      const t = this.targets.get(b.table)!;
      if (seq && this.covered(t, entry, seq)) {
        this.bindingsCovered++;
        continue;
      }
      const r = this.bindingRecords(b, envelope, t);
      if (!Array.isArray(r)) {
        failures.push({ binding: bindingName(b), refusal: r });
        continue;
      }
      try {
        // TableWriter.write checks every value before it changes anything, so a refusal leaves
        // the writer as it was. A moved key's retraction goes first: it is the record the table
        // can refuse (a partial-update table without retractions), and the new row it precedes
        // has the same columns from an image of the same contract.
        for (const { kind, row } of r) t.writer.writeRecord(row, rowKindOf(kind));
      } catch (e) {
        // Only a refusal of the record for what it is is the event's (and an unexpected error,
        // `refusedRecord`). The table store's other failures (a full disk's flush, its row taken
        // or not) stop ingest as a failed commit does:
        // nothing more is committed, so a moved key's retraction never lands without its new
        // row, and the reopen applies the journaled event once (DESIGN.md, "Failure cases").
        if (!refusedRecord(e)) throw e;
        failures.push({ binding: bindingName(b), refusal: refuse('unfit_for_table', `binding '${bindingName(b)}': table ${t.name}: ${(e as Error).message}`) });
        continue;
      }
      t.freshness.noteWrite(entry.receivedElapsedMs);
    }
    return failures;
  }

  /**
   * The records a binding writes for an event: its row, after the old key's retraction when the
   * event moves the row to another primary key (binding.ts `retractionOfMovedKey`); or the refusal.
   */
  private bindingRecords(b: Binding, envelope: Envelope, t: Target): BoundRecord[] | Refusal {
    const r = applyBinding(b, envelope, t.fields, this.applyOptions);
    if (!r.ok) return r;
    const moved = retractionOfMovedKey(b, envelope, r.row, t.fields, t.table.schema.primaryKeys, this.applyOptions);
    if (moved === undefined) return [r];
    return moved.ok ? [moved, r] : moved;
  }

  /**
   * `letterSeq`: the seq a letter of an event not sequenced here shows (a late one's). True when
   * it wrote the letter (false: dead_letters holds one at this position already).
   */
  private deadLetter(entry: Entry, why: Refusal, seq: { key: string; seq: number } | undefined, bindings: string[] | null, letterSeq?: number): boolean {
    const t = this.deadLetters;
    // A letter dead_letters holds already was counted by the run that wrote it (the journal's read
    // at a restart goes through it again when the tables' position stayed before a held event).
    if (this.covered(t, entry, seq)) return false;
    // An unsequenced event (no seq to compare) after the committed position may still be in the
    // snapshot when the position was held back by the reorder buffer: the key decides.
    if (this.recovering && seq === undefined && this.committedDeadLetter(entry.position)) return false;
    const parts = parseEventTopic(entry.topic);
    const d: DeadLetter = {
      position: entry.position,
      status: 'open',
      reason: why.reason,
      detail: why.detail,
      path: why.path ?? null,
      bindings,
      topic: entry.topic,
      module: parts?.module ?? null,
      stream: parts?.stream ?? null,
      seq: seq?.seq ?? letterSeq ?? null,
      payload: entry.payload,
      receivedAtMs: entry.receivedAtMs,
      replayedAtMs: null,
      dismissed: null,
    };
    this.writeDeadLetter(d, entry.receivedElapsedMs);
    // Counted once written: a write that throws stops ingest, and the reopen reads the event again.
    this.c.rejected.set(why.reason, (this.c.rejected.get(why.reason) ?? 0) + 1);
    this.openDeadLetters++;
    if (this.letterListener !== undefined) this.lettersToAnnounce.add(d.position);
    return true;
  }

  private committedDeadLetter(position: bigint): boolean {
    const r = this.deadLetters.table.reader();
    try {
      return r.get({ position }) !== undefined;
    } finally {
      r.close();
    }
  }

  /** `receivedElapsedMs`: when its age counts from, on the monotonic clock. */
  private writeDeadLetter(d: DeadLetter, receivedElapsedMs: number): void {
    this.deadLetters.writer.writeRecord(deadLetterRecord(d), RowKind.INSERT);
    this.deadLetters.freshness.noteWrite(receivedElapsedMs);
    this.uncommittedDeadLetters.set(d.position, d);
  }

  /** Now on both clocks (the tick's instant while a tick runs). */
  private instant(): Instant {
    return this.tickAt ?? { wallMs: this.clock(), elapsedMs: this.monotonic() };
  }

  /**
   * A wall-clock time (an event's receive time) on the monotonic clock: as far before now as it is
   * on the wall clock, and never after now (a wall clock stepped back since). For a time from
   * before this run (the journal's replay at open) that is the wall clock's distance.
   */
  private elapsedAt(wallMs: number): number {
    const t = this.tickAt;
    const elapsedMs = t ? t.elapsedMs : this.monotonic();
    const nowMs = t ? t.wallMs : this.clock();
    return Math.min(elapsedMs, elapsedMs - (nowMs - wallMs));
  }

  private requestResync(module: string, stream: string, from: number): void {
    this.c.resyncs++;
    this.o.publishResync?.(module, stream, from);
  }

  // ------------------------------------------------------------------------------------------
  // Enrichment lookups: the current committed row of another table.

  private readonly lookup = (tableName: string, key: Readonly<Record<string, unknown>>): Record<string, unknown> | undefined => {
    let cached = this.readers.get(tableName);
    if (!cached) {
      const table = this.targets.get(tableName)?.table ?? this.o.catalog.getTable({ database: this.o.database, table: tableName });
      cached = { table, reader: table.reader() };
      this.readers.set(tableName, cached);
    }
    const fields = cached.table.schema.fields;
    const pk: Record<string, unknown> = {};
    for (const [column, json] of Object.entries(key)) {
      const f = fields.find((x) => x.name === column);
      if (!f) throw new Error(`table ${tableName} has no column '${column}'`);
      pk[column] = valueFromJson(f.type, json, column);
    }
    const row = cached.reader.get(pk);
    if (!row) return undefined;
    const out: Record<string, unknown> = {};
    fields.forEach((f, i) => (out[f.name] = valueToJson(f.type, row[i])));
    return out;
  };

  private refreshReader(tableName: string): void {
    const cached = this.readers.get(tableName);
    if (cached) {
      cached.reader.close();
      this.readers.delete(tableName);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Commits.

  /** Every position ≤ frontier is processed, and none of them waits in the reorder buffer. */
  private frontier(): bigint {
    let f = this.lastProcessed;
    for (const p of this.heldPositions) if (p - 1n < f) f = p - 1n;
    return f;
  }

  /**
   * Table t's progress for its next commit: the frontier and every stream's `issued`, but never
   * less than t's recovered snapshot holds. After a restart the sequencer starts at the lowest H
   * among a stream's tables, and the replay may hold again a run of seqs a gap skip had released
   * before the crash (the skip comes only after the gap's age again), so `issued` and the frontier
   * can sit below what t already holds; written as they are, a lower H or F would let a later
   * recovery apply that run to t a second time (or reopen a dismissed letter). The maxima are
   * exact: t holds (≤ F_t) ∪ (seqs ≤ H_t) from before and (≤ frontier) ∪ (issued seqs) from this
   * run, whose replay skipped what t held.
   */
  private progressOf(t: Target): { position: bigint; hwm: Map<string, number> } {
    const hwm = new Map<string, number>();
    for (const k of this.streams) {
      const { module, stream } = splitStreamKey(k);
      const issued = this.sequencer.state(module, stream).issued;
      const held = t.recovered.hwm.get(k) ?? 0;
      hwm.set(k, issued > held ? issued : held);
    }
    return { position: this.positionOf(t), hwm };
  }

  /** The journal position table t's next commit records: the frontier, never below t's recovered one. */
  private positionOf(t: Target): bigint {
    const f = this.frontier();
    return f > t.recovered.position ? f : t.recovered.position;
  }

  /** Commits table t with the current progress (same snapshot as its rows). */
  private commit(t: Target, now: Instant): void {
    if (this.failed) throw new Error(`ingestor stopped: ${this.failed.message}`);
    const { position, hwm } = this.progressOf(t);
    let made: number | undefined;
    try {
      const properties = progressProperties(position, hwm);
      // dead_letters, where late events go, keeps the skipped ranges with its hwm (restored at open).
      if (t === this.deadLetters) Object.assign(properties, skippedProperties(this.sequencer.skippedStreams()));
      made = t.writer.commit(properties).snapshotId;
    } catch (e) {
      this.fail(e, `committing table ${t.name}`);
      throw e;
    }
    t.committedPosition = position;
    t.committedAtMs = now.elapsedMs;
    t.snapshotId = t.table.latestSnapshot()?.id ?? null;
    if (made !== undefined || t.freshness.pendingEvents > 0) t.freshness.committed(now.elapsedMs, now.wallMs);
    this.refreshReader(t.name);
    const durable = t === this.deadLetters ? this.lettersCommitted() : [];
    if (t === this.deadLetters) this.uncommittedDeadLetters.clear();
    this.compactLater(t);
    if (durable.length > 0) this.announce(durable);
  }

  /** The letters opened since dead_letters' last commit that are open still, now that it committed. */
  private lettersCommitted(): DeadLetter[] {
    if (this.lettersToAnnounce.size === 0) return [];
    const out: DeadLetter[] = [];
    for (const p of this.lettersToAnnounce) {
      const d = this.uncommittedDeadLetters.get(p);
      if (d !== undefined && d.status === 'open') out.push(d);
    }
    this.lettersToAnnounce = new Set();
    // Opened in the order their events were released, not journaled: a held event's letter comes
    // after the letters of later positions that released it.
    return out.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
  }

  /** Hands durable letters to the listener; what it throws is a warning, never a failed commit. */
  private announce(letters: readonly DeadLetter[]): void {
    try {
      this.letterListener?.(letters);
    } catch (e) {
      this.o.onWarning?.(`ingest: the dead letter listener failed: ${(e as Error)?.message ?? String(e)}`);
    }
  }

  /**
   * A deferred compaction (dead_letters') runs in slices with a turn of the event loop between:
   * the events, PUBACKs and requests that came meanwhile go first. A flood of dead letters
   * compacted inside the commit held the loop 0.7–1.0 s at a time (core/ingest DESIGN.md). A
   * failed slice is taken as a commit's failed maintenance is (core/lsm
   * `CommitResult.maintenanceError`): one of the store's kind (a full disk) is a warning, the slice
   * having given the compaction up, and the next commit plans it again (before, every failed slice
   * stopped ingest until a restart); a damaged file, or a bug, stops ingest.
   */
  private compactLater(t: Target): void {
    this.slicer.after(t.writer, {
      committed: () => {
        t.snapshotId = t.table.latestSnapshot()?.id ?? null;
        this.refreshReader(t.name);
      },
      failed: (e) => {
        if (!(e instanceof LsmError) || isCorruption(e)) this.fail(e, `compacting table ${t.name}`);
        else this.o.onWarning?.(`ingest: compacting table ${t.table.name} failed: ${e.message}; the next commit tries again`);
      },
    });
  }

  private writeCheckpoint(): void {
    let low: bigint | undefined;
    for (const t of this.targets.values()) if (low === undefined || t.committedPosition < low) low = t.committedPosition;
    const name = this.o.checkpointName ?? DEFAULT_CHECKPOINT_NAME;
    if (low !== undefined && low !== this.o.journal.getCheckpoint(name)) this.o.journal.setCheckpoint(name, low);
  }

  /**
   * Commits each table whose budget is due; gives idle tables a progress commit when they lag by
   * more than progressLagMax or progressIntervalMs; runs the sequencer's timeouts (resync
   * requests, gap skips). Ages count on the monotonic clock; `nowMs` (a wall time, default the
   * clock's) other than the clock's moves it by the difference (a test forcing the timeouts).
   */
  tick(nowMs?: number): void {
    this.checkOpen();
    if (this.failed) return;
    const wallMs = this.clock();
    const at: Instant = { wallMs: nowMs ?? wallMs, elapsedMs: this.monotonic() + (nowMs === undefined ? 0 : nowMs - wallMs) };
    this.tickAt = at;
    /** The tables of the streams a skip gave up on, dead_letters first (affected's order). */
    const skippedTables = new Set<Target>();
    try {
      for (const a of this.sequencer.tick(at.wallMs)) {
        if (a.type === 'resync') this.requestResync(a.module, a.stream, a.from);
        else if (a.type === 'far_ahead') this.farAhead(a.given, a.module, a.stream, a.from - 1, 'waited');
        else {
          this.c.skippedSeqs += a.to - a.from + 1 - this.skippedAgain(a.module, a.stream, a.from, a.to);
          this.o.onWarning?.(`ingest: gave up waiting for ${a.module}/${a.stream} seq ${a.from}..${a.to}; skipped (later events repair the rows)`);
          for (const r of a.ready) this.release(r);
          for (const t of this.affected(a.module, a.stream)) skippedTables.add(t);
        }
      }
    } catch (e) {
      this.fail(e, 'sequencer tick');
      return;
    } finally {
      this.tickAt = undefined;
    }
    let committed = false;
    // A skip commits at once: dead_letters first (its snapshot keeps the skipped range with an hwm
    // past it), then the stream's tables (the released run). Left to dead_letters' progress commit
    // (minutes away), a kill after a table had committed past the gap lost the range: the restart
    // held the run behind the gap again and the module's resend of a skipped seq was taken as next
    // by dead_letters and covered by the table, dropped without a letter (CONTRACTS.md §4).
    for (const t of this.failed ? [] : skippedTables) {
      this.commit(t, at);
      committed = true;
    }
    const lagMax = BigInt(this.o.progressLagMax ?? DEFAULT_PROGRESS_LAG_MAX);
    const progressEvery = this.o.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
    const frontier = this.frontier();
    for (const t of this.targets.values()) {
      t.freshness.observe(at.elapsedMs);
      // A table that has never committed (a new site's dead_letters) records its progress at once:
      // it would otherwise hold the journal's checkpoint at 0 for its first progressIntervalMs.
      const idleBehind =
        t.freshness.pendingEvents === 0 &&
        frontier > t.committedPosition &&
        (t.snapshotId === null || frontier - t.committedPosition > lagMax || at.elapsedMs - t.committedAtMs >= progressEvery);
      if (t.freshness.due(at.elapsedMs) || idleBehind) {
        this.commit(t, at);
        committed = true;
      }
    }
    if (committed) this.writeCheckpoint();
    const idleExpire = this.o.idleExpireMs ?? DEFAULT_IDLE_EXPIRE_MS;
    for (const t of this.targets.values()) {
      if (at.elapsedMs - Math.max(t.committedAtMs, t.idleExpiredAtMs) < idleExpire) continue;
      t.idleExpiredAtMs = at.elapsedMs;
      try {
        t.writer.expire();
      } catch (e) {
        // Maintenance: the next commit's expiration tries again, and reports what fails there.
        this.o.onWarning?.(`ingest: expiring idle table ${t.name} failed: ${(e as Error).message}`);
      }
    }
  }

  /**
   * A held event the sequencer gave up on while its stream went on in order below it
   * (CONTRACTS.md §4, "An event far ahead of its stream"): held far_ahead_give_up_ms from its
   * arrival (`waited`, tick's far_ahead), or dropped from a full reorder buffer (`overflow`: the
   * resync's resend does not bring a seq the module has not reached; dropped silently, it was lost
   * with only tilstand_ingest_reorder_overflow_drops_total moved). A dead letter, so nothing is
   * lost and the tables' journal position (the frontier, the checkpoint, prune) moves past it; its
   * seq is not consumed. Keyed by position like a late one. Remembered by seq (`lettersBySeq`, as
   * the open ones are at the next start): an early event taken for one far ahead comes again in its
   * turn, and its release with the same payload closes the letter. The warning says what became
   * of the letter: made, an open one from before the start rewritten, or one left as it is.
   */
  private farAhead(r: Ready<Item>, module: string, stream: string, issued: number, cause: 'waited' | 'overflow'): void {
    const { entry, refusal } = r.item;
    if (this.heldPositions.delete(entry.position)) this.unhold(r.item);
    // A letter the event had before this open (no binding then) is rewritten with this reason, not closed.
    const before = this.lettersToClose?.delete(entry.position) === true;
    let what: string;
    let said: string;
    if (cause === 'waited') {
      const waitMs = this.o.sequencer?.far_ahead_give_up_ms ?? DEFAULT_SEQUENCER_OPTIONS.far_ahead_give_up_ms;
      const wait = waitMs % 60_000 === 0 ? `${waitMs / 60_000} min` : `${waitMs} ms`;
      what = `was held ${wait} (far_ahead_give_up_ms) for the seqs before it while the stream went on in order below it (at seq ${issued}); not applied, so the site's journal can move on`;
      said = `waited ${wait} while the stream went on in order below it (at seq ${issued})`;
    } else {
      what = `was dropped from a full reorder buffer (reorder_buffer_max, reorder_buffer_bytes_max), held for the seqs before it while the stream went on in order below it (at seq ${issued}); the module's resend from seq ${issued + 1} does not bring a seq it has not reached, so it is kept here, not applied`;
      said = `was dropped from a full reorder buffer while the stream went on in order below it (at seq ${issued})`;
    }
    const why = refuse(
      'seq_far_ahead',
      `seq ${r.seq} of ${module}/${stream} ${what}. If the module sends this seq again in its turn it is applied then; this letter is closed as replayed if that is this event (the same payload), else it is a copy: dismiss it. A replay is refused unless the stream skipped this seq (below it, its image would win over the stream's events for its keys until the stream reached it, the tables ordering by seq; past it, it would overwrite the stream's own)${refusal ? `; refused as well: ${refusal.reason}: ${refusal.detail}` : ''}`,
      'source.seq',
    );
    const p = entry.position;
    let made: boolean;
    let done: string;
    if (before) {
      const { was, rewritten } = this.rewriteLetter(p, why, r.seq);
      made = rewritten;
      done = rewritten ? `its open ${was!.reason} letter at journal position ${p} is now this seq_far_ahead letter` : leftAsItIs(was, p);
    } else {
      made = this.deadLetter(entry, why, undefined, null, r.seq);
      // Not made: dead_letters' committed position covers the event's (processed before this start).
      done = made ? `made a dead letter at journal position ${p}` : leftAsItIs(this.lettersAt([p])[0], p);
    }
    this.o.onWarning?.(`ingest: ${module}/${stream} seq ${r.seq} ${said}; ${done}`);
    if (made) this.lettersBySeq.add({ key: r.item.key, seq: r.seq, position: p, samePayload: true });
  }

  /**
   * An open letter from before this open (a `no_binding` of an event journaled before its stream
   * had a binding) whose event is now refused for another reason (`farAhead`): written again with
   * that reason, path and seq, still open and counted once. `deadLetter` passes over a position
   * dead_letters' committed position covers (the run that wrote it counted it), and left as
   * `no_binding` the letter bypassed `replayOne`'s seq_far_ahead guard: "replay all" wrote seq
   * 1,000,000's image over the stream's rows. A kill before dead_letters commits it leaves the old
   * letter, and the read at open gives the event up again. Not rewritten, the letter left as it
   * is, when it is no longer open (dismissed or replayed meanwhile) or is of some bindings' failure
   * only (`bindings` set: the run that wrote it applied the event to the other tables). `was`: the
   * letter as it was found (undefined: none).
   */
  private rewriteLetter(position: bigint, why: Refusal, seq: number): { was: DeadLetter | undefined; rewritten: boolean } {
    const d = this.lettersAt([position])[0];
    if (d === undefined || d.status !== 'open' || d.bindings !== null) return { was: d, rewritten: false };
    const at = this.instant();
    this.writeDeadLetter({ ...d, reason: why.reason, detail: why.detail, path: why.path ?? null, seq, bindings: null }, at.elapsedMs);
    this.c.rejected.set(why.reason, (this.c.rejected.get(why.reason) ?? 0) + 1);
    if (this.letterListener !== undefined) this.lettersToAnnounce.add(position);
    return { was: d, rewritten: true };
  }

  /** Commits every table with pending events now (approval compare-and-set, shutdown). */
  commitAll(): void {
    this.checkRunning();
    const now = this.instant();
    let committed = false;
    for (const t of this.targets.values()) {
      if (t.freshness.pendingEvents > 0) {
        this.commit(t, now);
        committed = true;
      }
    }
    if (committed) this.writeCheckpoint();
  }

  // ------------------------------------------------------------------------------------------
  // Dead letters.

  /**
   * `listener` is handed every dead letter opened from now on, once the commit of dead_letters
   * that holds it has landed (never a letter a crash could still lose), in position order, one
   * call per commit, synchronously inside that commit (keep it short; what it throws is a
   * warning). A letter closed or dismissed before the commit is not handed on; one a replay
   * rewrites (still failing) is not handed on again. Letters of the journal's read at open come
   * before any listener can be set and are not handed on. undefined: no listener (and the letters
   * waiting for the next commit are forgotten). core/site announces them to their modules
   * (letter-notices.ts).
   */
  setLetterListener(listener: ((letters: readonly DeadLetter[]) => void) | undefined): void {
    this.letterListener = listener;
    if (listener === undefined) this.lettersToAnnounce = new Set();
  }

  deadLetterCount(): number {
    return this.openDeadLetters;
  }

  /**
   * Dead letters (committed ones plus those not yet committed; of one topic and/or reason when
   * given: `lettersOf`): the first `limit` in position
   * order, or with `openFirst` as a person looks at them (dead-letters.ts `openFirst`). Whole
   * letters only of those returned; of the others, position and status (`deadLetterHeads`).
   */
  listDeadLetters(opts: { limit?: number; status?: DeadLetterStatus; openFirst?: boolean; topic?: string; reason?: string } = {}): DeadLetter[] {
    this.checkOpen();
    const limit = opts.limit ?? DEAD_LETTER_LIST_DEFAULT;
    const heads = lettersOf(this.letterHeads(opts.topic !== undefined || opts.reason !== undefined ? ['topic', 'reason'] : []), opts);
    const status = opts.status;
    const chosen = status !== undefined ? heads.filter((h) => h.status === status).slice(0, limit) : opts.openFirst ? openFirst(heads, limit) : heads.slice(0, limit);
    return this.wholeLetters(chosen.map((h) => h.position));
  }

  /**
   * `ids`, then every other open dead letter from the topic of one of them with its reason
   * (dead-letters.ts `withOpenAlike`): what "dismiss these and every one like them" closes.
   */
  openAlike(ids: readonly bigint[]): bigint[] {
    this.checkOpen();
    return withOpenAlike(this.letterHeads(['topic', 'reason']) as Required<LetterHead>[], ids);
  }

  /**
   * The open letters grouped by topic and reason, the largest first (dead-letters.ts
   * `groupOpenLetters`), those not yet committed included: where the open letters come from.
   */
  openLetterGroups(): OpenLetterGroup[] {
    this.checkOpen();
    return groupOpenLetters(this.letterHeads(['topic', 'reason']));
  }

  /** Every letter's head (after position `after`), committed or not, in position order. */
  private letterHeads(more: readonly ('topic' | 'reason')[] = [], after: bigint | null = null): LetterHead[] {
    const heads = deadLetterHeads(this.deadLetters.table, more, after);
    if (this.uncommittedDeadLetters.size === 0) return heads;
    const byPosition = new Map(heads.map((h) => [h.position, h]));
    for (const d of this.uncommittedDeadLetters.values()) {
      if (after === null || d.position > after) byPosition.set(d.position, { position: d.position, status: d.status, topic: d.topic, reason: d.reason });
    }
    return [...byPosition.values()].sort((a, b) => comparePositions(a.position, b.position));
  }

  /** The whole letters at `positions` (heads of `letterHeads`), in that order. */
  private wholeLetters(positions: readonly bigint[]): DeadLetter[] {
    return allFound(this.deadLetters.table, positions, this.lettersAt(positions));
  }

  /** The letter at each of `positions`, committed or not (undefined where there is none), in that order. */
  private lettersAt(positions: readonly bigint[]): (DeadLetter | undefined)[] {
    const committed = deadLettersAt(
      this.deadLetters.table,
      positions.filter((p) => !this.uncommittedDeadLetters.has(p)),
    );
    let i = 0;
    return positions.map((p) => this.uncommittedDeadLetters.get(p) ?? committed[i++]);
  }

  /**
   * Re-runs the pipeline (current contracts and bindings) on open dead letters — those with the
   * given positions (with `alike`, also every other open letter from the topic of one of them with
   * its reason: the letters of a module whose new contract version was missing, and not the other
   * modules' malformed ones), or all of them — `slice` at a time (all of them:
   * `replayDeadLetterSlice`) with a turn of the event loop between slices. A success is written to
   * its tables and the dead letter becomes 'replayed'; a failure stays open with the new reason.
   * The target tables are committed before dead_letters, so a crash in between leaves the letter
   * open (replayed again: at-least-once, harmless for tables ordered by the stream's seq). The
   * sequencer is not consulted: the event's seq was consumed when it was first refused.
   * `notOpen`: named positions that are no open letter; `alike`: how many were replayed or tried
   * because they were alike. `onProgress` is called once per slice, after its commits (a site's
   * control socket sends the counts with its heartbeats to a waiting `tilstand deadletters replay`).
   */
  async replayDeadLetters(
    ids?: readonly bigint[],
    o: { alike?: boolean; slice?: number; onProgress?: (p: ReplayProgress) => void } = {},
  ): Promise<ReplayResult> {
    this.checkRunning();
    const slice = o.slice ?? DEAD_LETTER_SLICE;
    if (!Number.isSafeInteger(slice) || slice < 1) throw new RangeError(`replayDeadLetters: slice: expected an integer ≥ 1, got ${slice}`);
    if (o.alike && !ids) throw new RangeError('replayDeadLetters: alike needs the letters to be like (positions)');
    if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw new TypeError(`replayDeadLetters: onProgress: expected a function, got ${typeof o.onProgress}`);
    if (ids) {
      let replayed = 0;
      let failed = 0;
      let alike = 0;
      let done = 0;
      const notOpen: string[] = [];
      for await (const { part, named, total } of this.deadLetterSlices(ids, o)) {
        // The event loop turned before this slice: stopped or closed meanwhile, nothing is written.
        this.checkRunning();
        const { letters, notOpen: closed } = this.openLetters(part);
        // An alike letter closed meanwhile (replayed or dismissed by someone else) was not asked for by name.
        notOpen.push(...closed.filter((p) => named.has(p)));
        alike += letters.filter((d) => !named.has(String(d.position))).length;
        const r = this.replayLetters(letters);
        replayed += r.replayed;
        failed += r.failed;
        done += part.length;
        o.onProgress?.({ done, total, replayed, failed });
      }
      return { replayed, failed, notOpen, alike };
    }
    let replayed = 0;
    let failed = 0;
    let after: bigint | null = null;
    for (;;) {
      const r = this.replayDeadLetterSlice(after, slice);
      replayed += r.replayed;
      failed += r.failed;
      // The letters that failed again are still open and behind the cursor; every other open
      // letter (those that came meanwhile included) is ahead of it: what is left is the open
      // count less those, and the whole is that plus what was gone through.
      const done = replayed + failed;
      o.onProgress?.({ done, total: r.last === null ? done : Math.max(done, replayed + this.openDeadLetters), replayed, failed });
      if (r.last === null) return { replayed, failed, notOpen: [], alike: 0 };
      after = r.last;
      await nextTurn();
    }
  }

  /**
   * The positions a named replay or dismissal goes through, `slice` (DEAD_LETTER_SLICE) at a time
   * with a turn of the event loop before every slice but the first: `ids` (each once, in order),
   * then with `alike` every other open letter like one of them (`openAlike`). `named`: the slice's
   * positions that were named, as text (the others are alike); `total`: the positions in all slices. "Every open letter like it" after a
   * module sent garbage for a day is hundreds of thousands.
   */
  async *deadLetterSlices(ids: readonly bigint[], o: { alike?: boolean; slice?: number } = {}): AsyncGenerator<{ part: bigint[]; named: Set<string>; total: number }> {
    const slice = o.slice ?? DEAD_LETTER_SLICE;
    if (!Number.isSafeInteger(slice) || slice < 1) throw new RangeError(`deadLetterSlices: slice: expected an integer ≥ 1, got ${slice}`);
    const named = [...new Set(ids)];
    // The named letters first, then (alike) the others like them.
    const all = o.alike ? this.openAlike(named) : named;
    for (let i = 0; i < all.length; i += slice) {
      if (i > 0) await nextTurn();
      const part = all.slice(i, i + slice);
      yield { part, named: new Set(part.slice(0, Math.max(0, named.length - i)).map(String)), total: all.length };
    }
  }

  /**
   * The first `max` open letters after position `after` (null: from the first) replayed. `last`
   * is the position to continue after, null when no open letter follows. `replayDeadLetters()`
   * goes through all of them this way: a module that sent a contract version the site lacked for
   * a day leaves hundreds of thousands, and replaying them in one go held the event loop (PUBACKs,
   * the UI) for seconds and their payloads in memory at once.
   */
  replayDeadLetterSlice(after: bigint | null, max: number): { replayed: number; failed: number; last: bigint | null } {
    this.checkRunning();
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`replayDeadLetterSlice: max: expected an integer ≥ 1, got ${max}`);
    const heads = this.letterHeads([], after).filter((h) => h.status === 'open');
    const letters = this.wholeLetters(heads.slice(0, max).map((h) => h.position));
    return { ...this.replayLetters(letters), last: heads.length > max ? letters.at(-1)!.position : null };
  }

  private replayLetters(letters: readonly DeadLetter[]): { replayed: number; failed: number } {
    const at = this.instant();
    const now = at.wallMs;
    let replayed = 0;
    let failed = 0;
    const done: DeadLetter[] = [];
    try {
      for (const d of letters) {
        // Its rows are pending from now (committed below), not from when the event came: aged from
        // then, every replay of a letter older than a table's budget counted a breach of it.
        const entry: Entry = { position: d.position, topic: d.topic, payload: d.payload, receivedAtMs: now, receivedElapsedMs: at.elapsedMs };
        const why = this.replayOne(entry, d);
        if (why) {
          failed++;
          this.writeDeadLetter({ ...d, reason: why.reason, detail: why.detail, path: why.path ?? null }, at.elapsedMs);
        } else {
          replayed++;
          done.push(d);
        }
      }
      for (const t of this.targets.values()) if (t !== this.deadLetters && t.freshness.pendingEvents > 0) this.commit(t, at);
      for (const d of done) this.writeDeadLetter({ ...d, status: 'replayed', replayedAtMs: now }, at.elapsedMs);
      if (this.deadLetters.freshness.pendingEvents > 0) this.commit(this.deadLetters, at);
    } catch (e) {
      if (!this.failed) this.fail(e, 'replaying dead letters');
      throw e;
    }
    this.openDeadLetters -= replayed;
    this.c.replayed += replayed;
    this.writeCheckpoint();
    return { replayed, failed };
  }

  /**
   * Closes open dead letters that no replay can mend — `by` (the signed-in user) looked at them
   * and says why in `note` — so they stop counting as open and are never replayed; each keeps its
   * payload, reason and position. Asked-for positions that are no open letter are named back.
   */
  dismissDeadLetters(ids: readonly bigint[], by: string, note: string): { dismissed: number; notOpen: string[] } {
    this.checkRunning();
    if (ids.length === 0) throw new RangeError('dismissDeadLetters: name the dead letters to dismiss (positions)');
    if (by.trim() === '') throw new RangeError('dismissDeadLetters: who dismisses them (a user name) is required');
    if (note.trim() === '') throw new RangeError('dismissDeadLetters: why (a note) is required');
    // Refused before any letter is written: the table store refuses it in the middle of the writes.
    if (!isWellFormedString(note)) throw new RangeError('dismissDeadLetters: the note is not valid Unicode text (a lone surrogate, half of a character pair)');
    const { letters, notOpen } = this.openLetters(ids);
    if (letters.length === 0) return { dismissed: 0, notOpen };
    const at = this.instant();
    const now = at.wallMs;
    try {
      for (const d of letters) this.writeDeadLetter({ ...d, status: 'dismissed', dismissed: { atMs: now, by, note: note.trim() } }, at.elapsedMs);
      this.commit(this.deadLetters, at);
    } catch (e) {
      if (!this.failed) this.fail(e, 'dismissing dead letters');
      throw e;
    }
    this.openDeadLetters -= letters.length;
    this.c.dismissed += letters.length;
    this.writeCheckpoint();
    return { dismissed: letters.length, notOpen };
  }

  /**
   * Deletes the dead letters replayed or dismissed before `closedBeforeMs` (core/site's
   * `deadLetters.closedRetentionMs`): a replayed letter's event is in its tables and a dismissed
   * one was looked at and closed by a named person, yet each kept its payload for good — a module
   * that sent the wrong contract version for a day leaves gigabytes. Open letters stay, however
   * old. Letters written and not yet committed are left for the next purge. The letters' heads
   * are read with a turn of the event loop every `scanTurnEvery` (CLOSED_SCAN_TURN_EVERY); the
   * deletions go `slice` (DEAD_LETTER_SLICE) at a time, each one commit, with a turn between. When
   * the letters deleted since the last full compaction asked for reach PURGE_FULL_COMPACTION_SHARE
   * of those the table held, dead_letters' writer is asked for one (run in slices as its others):
   * only it takes deleted letters out of the files.
   */
  async purgeClosedDeadLetters(closedBeforeMs: number, o: { slice?: number; scanTurnEvery?: number } = {}): Promise<PurgeResult> {
    this.checkRunning();
    if (!Number.isFinite(closedBeforeMs)) throw new RangeError(`purgeClosedDeadLetters: closedBeforeMs: expected a time in ms, got ${closedBeforeMs}`);
    const slice = o.slice ?? DEAD_LETTER_SLICE;
    if (!Number.isSafeInteger(slice) || slice < 1) throw new RangeError(`purgeClosedDeadLetters: slice: expected an integer ≥ 1, got ${slice}`);
    const turnEvery = o.scanTurnEvery ?? CLOSED_SCAN_TURN_EVERY;
    if (!Number.isSafeInteger(turnEvery) || turnEvery < 1) throw new RangeError(`purgeClosedDeadLetters: scanTurnEvery: expected an integer ≥ 1, got ${turnEvery}`);
    const t = this.deadLetters;
    let purged = 0;
    const letters = await forClosedDeadLetters(t.table, closedBeforeMs, { batch: slice, turnEvery }, async (heads) => {
      // A purge is background work: the compaction the last slice's commit planned runs (in its
      // slices) before the next, or commits in a row would reach the stop trigger, where a commit
      // compacts at once (0.47 s turns in a purge of 200,000 letters before this wait).
      for (let k = 0; k < PURGE_COMPACTION_WAIT_TURNS && t.writer.compacting && !this.closed; k++) await nextTurn();
      // The event loop turned since the purge began: closed, or stopped by a failure, meanwhile?
      this.checkRunning();
      let n = 0;
      try {
        // A letter after the frontier (an earlier event still waits in the reorder buffer) is
        // not covered by dead_letters' committed position: a recovery would replay its event,
        // and an unsequenced one, found by key no more, would come back open. It waits for a
        // later purge, when the frontier has passed it.
        const through = this.positionOf(t);
        for (const h of heads) {
          // Written meanwhile (a recovery's rewrite): newer than what was read; the next purge decides.
          if (this.uncommittedDeadLetters.has(h.position)) continue;
          if (h.position > through) continue;
          t.writer.writeRecord(tombstoneRecord(h), RowKind.DELETE);
          n++;
        }
        if (n > 0) this.commit(t, this.instant());
      } catch (e) {
        if (!this.failed) this.fail(e, 'purging closed dead letters');
        throw e;
      }
      purged += n;
      this.c.purged += n;
    });
    this.purgedSinceFull += purged;
    let fullCompaction = false;
    if (purged > 0 && this.purgedSinceFull >= PURGE_FULL_COMPACTION_SHARE * (letters - purged + this.purgedSinceFull)) {
      t.writer.requestFullCompaction();
      this.compactLater(t);
      this.purgedSinceFull = 0;
      fullCompaction = true;
    }
    if (purged > 0) this.writeCheckpoint();
    return { purged, fullCompaction };
  }

  /**
   * The open dead letters at `ids` (all open ones without), and the asked-for positions that are
   * no open letter (replayed or dismissed already, or never one), in order: named back, so
   * "replayed 0" or "dismissed 0" is not mistaken for success.
   */
  private openLetters(ids: readonly bigint[] | undefined): { letters: DeadLetter[]; notOpen: string[] } {
    if (!ids) return { letters: this.wholeLetters(this.letterHeads().filter((h) => h.status === 'open').map((h) => h.position)), notOpen: [] };
    // Named letters are read by key, not found among every letter's head: a dismissal of
    // thousands goes in slices (core/site dismiss.ts), each as cheap as its own size.
    const wanted = [...new Set(ids)].sort(comparePositions);
    const found = this.lettersAt(wanted);
    const letters: DeadLetter[] = [];
    const notOpen: string[] = [];
    wanted.forEach((p, i) => {
      const d = found[i];
      if (d?.status === 'open') letters.push(d);
      else notOpen.push(String(p));
    });
    return { letters, notOpen };
  }

  private replayOne(entry: Entry, d: DeadLetter): Refusal | undefined {
    const parsed = parseEnvelope(entry.topic, entry.payload, this.limits, { site: this.o.site });
    if (!parsed.ok) return parsed;
    if (d.reason === 'seq_far_ahead') {
      // Written while its stream is below its seq, its image would win over every event the
      // stream sends for its keys until it reaches that seq (the tables order by seq), and "replay
      // all" replays it unread. Once the stream has passed it, only where the stream skipped that
      // seq (as a late event's replay): else the stream took its own event of that seq, and this
      // one, a copy or another event numbered the same, would overwrite it.
      const { module, stream, seq } = parsed.envelope.source;
      const at = this.sequencer.issued(module, stream);
      const skipped = seq <= at && this.sequencer.skipped(module, stream).some((r) => r.from <= seq && seq <= r.to);
      if (!skipped) {
        const before = d.detail.replace(/^not replayed: [\s\S]*? Before: /, '');
        const why =
          seq > at
            ? `${module}/${stream} is at seq ${at}, below ${seq}; its image would win over the stream's events for its keys until the stream reached ${seq} (the tables order by seq). Replay it once the stream has passed it, or dismiss it`
            : `${module}/${stream} has passed seq ${seq} and took its own event of that seq (not one it skipped): this letter is a copy, or another event numbered the same; dismiss it`;
        return refuse('seq_far_ahead', `not replayed: ${why}. Before: ${before}`, 'source.seq');
      }
    }
    const check = checkEnvelopeContract(this.o.contracts, parsed.envelope);
    if (!check.ok) return check;
    let bindings = bindingsFor(this.o.bindings, entry.topic);
    if (d.bindings) bindings = bindings.filter((b) => d.bindings!.includes(bindingName(b)));
    if (bindings.length === 0) return refuse('no_binding', `no binding matches topic '${entry.topic}'${d.bindings ? ` among ${d.bindings.join(', ')}` : ''}`);
    // Check every binding before writing any row, so a failed replay writes nothing.
    for (const b of bindings) {
      const r = this.bindingRecords(b, check.envelope, this.targets.get(b.table)!);
      if (!Array.isArray(r)) return r;
    }
    const failures = this.applyBindings(entry, check.envelope, bindings, undefined);
    return failures.length > 0 ? combine(failures) : undefined;
  }

  // ------------------------------------------------------------------------------------------
  // Status and metrics.

  status(): TableStatus[] {
    const now = this.monotonic();
    const disk = this.o.diskBudget ? this.o.diskBudget.full() : undefined;
    return [...this.targets.values()].map((t) => {
      const f = t.freshness;
      f.observe(now);
      const ageMs = f.ageMs(now);
      const s: TableStatus = {
        table: t.name,
        budgetMs: f.budget.budgetMs,
        decision: f.budget.decision,
        confirmedBy: f.budget.confirmedBy,
        ageMs,
        pendingEvents: f.pendingEvents,
        heldEvents: f.heldEvents,
        lastCommitMs: f.lastCommitMs,
        snapshotId: t.snapshotId,
        breaches: f.breaches,
        withinBudget: ageMs <= f.budget.budgetMs,
      };
      if (disk !== undefined) s.diskFull = disk;
      return s;
    });
  }

  /**
   * Every stream the tables know (their high-water marks) or that delivered since open, with its
   * newest event: a stream that stays silent while its module should be publishing is how a
   * stopped module or connector shows (the tables' freshness cannot: nothing is pending).
   */
  streamActivity(): StreamActivity[] {
    // The sequencer's gap times and the newest events' are on the monotonic clock; status shows
    // epoch ms, as the wall clock reads now (after a step, the wall time of an event reads moved
    // by the step, and now − it stays the true silence).
    const toWall = this.clock() - this.monotonic();
    return [...this.streams].sort().map((k) => {
      const { module, stream } = splitStreamKey(k);
      const last = this.lastEvents.get(k);
      const g = this.sequencer.gap(module, stream);
      const gap = g && { from: g.from, to: g.to, sinceMs: Math.round(g.sinceMs + toWall), skipAtMs: g.skipAtMs === null ? null : Math.round(g.skipAtMs + toWall) };
      return { module, stream, lastEventMs: last ? Math.round(last.elapsedMs + toWall) : null, lastSeq: last?.seq ?? null, clockAheadMs: last ? last.tsMs - last.atMs : null, appliedSeq: this.sequencer.issued(module, stream), gap };
    });
  }

  /**
   * Streams that have delivered only duplicates for a while (duplicate-watch.ts): most likely a
   * module whose sequence went back, whose new events are all dropped.
   */
  stuckStreams(nowMs?: number): DuplicateRun[] {
    // The watch's windows are on the monotonic clock; a wall `nowMs` (a caller's tick) moves it by
    // its distance from the wall clock now, as `tick` does.
    return this.duplicateWatch.stuck(this.monotonic() + (nowMs === undefined ? 0 : nowMs - this.clock()));
  }

  health(): IngestorHealth {
    return {
      failure: this.failed ? this.failed.message : null,
      diskFull: this.o.diskBudget ? this.o.diskBudget.full() : null,
      heldEvents: this.heldPositions.size,
      frontier: this.frontier(),
      recoveredEvents: this.recoveredEvents,
      lettersClosedAtOpen: this.closedAtOpen,
    };
  }

  metrics(): string {
    const site = this.o.site;
    const st = this.status();
    const streams = this.streamActivity();
    const per = (pick: (s: TableStatus) => number) => st.map((s) => ({ labels: { site, table: s.table }, value: pick(s) }));
    /** Per stream, in seconds, the streams that have the value. */
    const perStream = (ms: (s: (typeof streams)[number]) => number | null) =>
      streams.flatMap((s) => {
        const v = ms(s);
        return v === null ? [] : [{ labels: { site, module: s.module, stream: s.stream }, value: v / 1000 }];
      });
    const p = new PromText()
      .family('tilstand_ingest_table_age_ms', 'gauge', 'Age of the oldest event received and not yet visible in the table: pending, held behind a gap, or not applied since ingest stopped (0 when none)', per((s) => s.ageMs))
      .family('tilstand_ingest_table_budget_ms', 'gauge', 'Freshness budget of the table', per((s) => s.budgetMs))
      .family('tilstand_ingest_table_pending_events', 'gauge', 'Events written to the table but not committed', per((s) => s.pendingEvents))
      .family('tilstand_ingest_table_held_events', 'gauge', 'Events for the table held in the reorder buffer behind a missing seq', per((s) => s.heldEvents))
      .family('tilstand_ingest_table_budget_breaches_total', 'counter', 'Times the table was seen older than its budget', per((s) => s.breaches))
      .family('tilstand_ingest_table_commits_total', 'counter', 'Commits of the table by ingest since open (carried over a resume in place)', st.map((s) => ({ labels: { site, table: s.table }, value: this.targets.get(s.table)!.freshness.commits })))
      .family('tilstand_ingest_dead_letters_open', 'gauge', 'Dead letters not yet replayed', [{ labels: { site }, value: this.openDeadLetters }])
      .family('tilstand_ingest_events_accepted_total', 'counter', 'Events journaled (acknowledged) since open (carried over a resume in place)', [{ labels: { site }, value: this.c.accepted }])
      .family('tilstand_ingest_events_applied_total', 'counter', 'Events applied to their tables since open (carried over a resume in place)', [{ labels: { site }, value: this.c.applied }])
      .family('tilstand_ingest_events_duplicate_total', 'counter', 'Events dropped as duplicates by (module, stream, seq)', [{ labels: { site }, value: this.c.duplicates }])
      .family(
        'tilstand_ingest_events_rejected_total',
        'counter',
        'Events refused, by dead-letter reason',
        DEAD_LETTER_REASONS.map((reason) => ({ labels: { site, reason }, value: this.c.rejected.get(reason) ?? 0 })),
      )
      .family('tilstand_ingest_dead_letters_replayed_total', 'counter', 'Dead letters replayed successfully since open (carried over a resume in place)', [{ labels: { site }, value: this.c.replayed }])
      .family('tilstand_ingest_dead_letters_dismissed_total', 'counter', 'Dead letters dismissed by a user since open (carried over a resume in place)', [{ labels: { site }, value: this.c.dismissed }])
      .family('tilstand_ingest_dead_letters_purged_total', 'counter', 'Closed dead letters deleted after their retention since open (carried over a resume in place)', [{ labels: { site }, value: this.c.purged }])
      .family('tilstand_ingest_resync_requests_total', 'counter', 'Resync requests published to modules', [{ labels: { site }, value: this.c.resyncs }])
      .family('tilstand_ingest_seq_skipped_total', 'counter', 'Sequence numbers given up after gap_give_up_ms', [{ labels: { site }, value: this.c.skippedSeqs }])
      .family('tilstand_ingest_reorder_held_events', 'gauge', 'Events waiting in the reorder buffer', [{ labels: { site }, value: this.heldPositions.size }])
      .family(
        'tilstand_ingest_reorder_overflow_drops_total',
        'counter',
        'Events dropped from a full reorder buffer (reorder_buffer_max or reorder_buffer_bytes_max) and asked of their module again by a resync',
        [{ labels: { site }, value: this.c.overflowDrops }],
      )
      .family('tilstand_ingest_streams_only_duplicates', 'gauge', 'Streams delivering only duplicates for a while (a module whose sequence went back?)', [{ labels: { site }, value: this.stuckStreams().length }])
      .family(
        'tilstand_ingest_stream_last_event_timestamp_seconds',
        'gauge',
        'Receive time of the newest event of each stream since open (a stream silent too long: a stopped module or connector)',
        perStream((s) => s.lastEventMs),
      )
      .family(
        'tilstand_ingest_stream_clock_ahead_seconds',
        'gauge',
        "The newest event's own time minus its receive time, per stream (minutes ahead: the module's clock or this PC's is set wrong)",
        perStream((s) => s.clockAheadMs),
      )
      .family('tilstand_ingest_failed', 'gauge', '1 when ingest stopped applying after an error (reopen to recover)', [{ labels: { site }, value: this.failed ? 1 : 0 }]);
    if (this.o.diskBudget) {
      p.family('tilstand_ingest_disk_full', 'gauge', '1 while the journal disk budget holds acknowledgements', [{ labels: { site }, value: this.o.diskBudget.full() ? 1 : 0 }]);
    }
    return p.toString();
  }

  // ------------------------------------------------------------------------------------------
  // Lifecycle.

  /** Commits pending rows and idle tables' progress, then releases every writer. */
  close(): void {
    if (this.closed) return;
    try {
      if (!this.failed) {
        const now = this.instant();
        const frontier = this.frontier();
        for (const t of this.targets.values()) {
          if (t.freshness.pendingEvents > 0 || t.committedPosition < frontier) this.commit(t, now);
        }
        this.writeCheckpoint();
      }
    } finally {
      this.closed = true;
      this.releaseAll();
    }
  }

  /**
   * Releases every writer WITHOUT committing: what a crash leaves behind (uncommitted rows are
   * lost, the journal keeps the events). For fault drills and tests; reopening recovers.
   */
  abandon(): void {
    if (this.closed) return;
    this.closed = true;
    this.releaseAll();
  }

  /**
   * For a resume in place after a failure (core/site): releases every writer WITHOUT committing,
   * as `abandon` does (their locks, and buffers that may hold part of an event), so that a new
   * `Ingestor.open` on the same journal can take the tables; unlike `abandon`, this one stays open
   * as a stopped Ingestor: `accept` still journals (never applies), and status, health, metrics
   * and the dead-letter list still answer, until the new one replaces it — or, when that open
   * fails, for as long as it does not. Only a stopped Ingestor (`failure()`) is released.
   */
  releaseStopped(): void {
    if (!this.failed) throw new Error('ingestor is running: only one that stopped (failure()) is released for a reopen');
    if (this.closed) return;
    this.releaseAll();
  }

  /**
   * For a resume in place (core/site): what this stopped Ingestor counted, for the one that
   * replaces it (option `carried`): its counters object, the journal position through which every
   * event went through them, and each table's budget breaches and commits.
   */
  carryOver(): IngestorCarry {
    if (!this.failed) throw new Error('ingestor is running: only one that stopped (failure()) hands over its counters');
    const tables = new Map<string, { breaches: number; commits: number; inBreach: boolean }>();
    for (const t of this.targets.values()) tables.set(t.name, { breaches: t.freshness.breaches, commits: t.freshness.commits, inBreach: t.freshness.inBreachEpisode });
    // Held when it stopped, so not counted: those in the reorder buffer, and one whose release threw.
    const held = new Set(this.heldPositions);
    if (this.releasing !== undefined) held.add(this.releasing);
    const skipped = new Map<string, { from: number; to: number }[]>();
    for (const s of this.sequencer.skippedStreams()) skipped.set(streamKey(s.module, s.stream), s.ranges.map((r) => ({ from: r.from, to: r.to })));
    for (const [k, ranges] of this.skippedBefore ?? []) skipped.set(k, [...(skipped.get(k) ?? []), ...ranges]);
    // The event whose processing failed is counted again by the new Ingestor, unless what threw was
    // the release of a held event after it: its own release (the first of its run) was counted.
    const p = this.failedInProcess;
    const countedThrough = p === undefined ? this.lastProcessed : this.releasing !== undefined && this.releasing !== p ? p : p - 1n;
    const lastEvents = new Map([...this.lastEvents].map(([k, v]) => [k, { ...v }]));
    return { counters: this.c, countedThrough, held, skipped, lastEvents, tables };
  }

  /** The open succeeded: the stopped Ingestor's counts go on here (option `carried`). */
  private takeCarried(carried: IngestorCarry): void {
    const into = carried.counters;
    const own = this.c;
    into.accepted += own.accepted;
    into.applied += own.applied;
    into.duplicates += own.duplicates;
    for (const [reason, n] of own.rejected) into.rejected.set(reason, (into.rejected.get(reason) ?? 0) + n);
    into.resyncs += own.resyncs;
    into.skippedSeqs += own.skippedSeqs;
    into.overflowDrops += own.overflowDrops;
    into.replayed += own.replayed;
    into.dismissed += own.dismissed;
    into.purged += own.purged;
    this.c = into;
    for (const t of this.targets.values()) {
      const was = carried.tables.get(t.name);
      if (was === undefined) continue;
      t.freshness.breaches += was.breaches;
      t.freshness.commits += was.commits;
    }
  }

  /** Why apply/commit stopped, or null. */
  failure(): Error | null {
    return this.failed;
  }

  private fail(e: unknown, what: string): void {
    this.slicer.stop();
    this.failed = new Error(`${what}: ${(e as Error)?.message ?? String(e)}`, { cause: e });
    this.o.onWarning?.(`ingest stopped applying (${this.failed.message}); events are still journaled; reopen to recover`);
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('ingestor is closed');
  }

  /** Open, and not stopped by a failure. */
  private checkRunning(): void {
    this.checkOpen();
    if (this.failed) throw new Error(`ingestor stopped: ${this.failed.message}`);
  }

  private releaseAll(): void {
    this.slicer.stop();
    for (const c of this.readers.values()) c.reader.close();
    this.readers.clear();
    for (const t of this.targets.values()) t.writer.close();
  }
}

function newCounters(): IngestorCounters {
  return { accepted: 0, applied: 0, duplicates: 0, rejected: new Map(), resyncs: 0, skippedSeqs: 0, overflowDrops: 0, replayed: 0, dismissed: 0, purged: 0 };
}

/** parseRowKind without the search (it still reports an unknown text). */
function rowKindOf(text: string): RowKind {
  switch (text) {
    case '+I':
      return RowKind.INSERT;
    case '+U':
      return RowKind.UPDATE_AFTER;
    case '-D':
      return RowKind.DELETE;
    case '-U':
      return RowKind.UPDATE_BEFORE;
    default:
      return parseRowKind(text);
  }
}

/**
 * Whether a table write's error is the event's: a refusal of the record for what it is (a value
 * the column cannot hold, a retraction the table cannot take: InvalidArgument, the row not taken,
 * core/lsm `LsmError.rowTaken`), or an error that is not the table store's at all (a bug met on
 * this event's values). The refusal made because a failed flush's kept rows fill the buffer is of
 * the disk's kind (IOError), and a flush failing after the take has `rowTaken` true: those stop
 * ingest. An unexpected error does not: the reopen would replay the same event into it, and one
 * event would stop the site at every start; as a dead letter it waits for a fixed version.
 */
function refusedRecord(e: unknown): boolean {
  if (!(e instanceof LsmError)) return true;
  return e.kind === 'InvalidArgument' && e.rowTaken === false;
}

/** One refusal for several failing bindings: the first's reason, every detail. */
function combine(failures: { binding: string; refusal: Refusal }[]): Refusal {
  const first = failures[0]!.refusal;
  if (failures.length === 1) return first;
  return { ...first, detail: failures.map((f) => f.refusal.detail).join('; ') };
}

/**
 * The end of the far-ahead warning when no letter was made or rewritten (`farAhead`): the letter
 * at the event's position as it stays, or that there is none (the event was processed before this
 * start, dead_letters' position past it).
 */
function leftAsItIs(d: DeadLetter | undefined, position: bigint): string {
  if (d === undefined) return `no dead letter made: journal position ${position} was processed before this start and has no letter`;
  return `its ${d.status} ${d.reason} letter at journal position ${position} is left as it is`;
}

/** A table of the site's own, brought to its definition as ALTER TABLE would (site-tables.ts evolveToDefinition). */
function evolvedToDefinition(table: Table, def: TableDefinition, onWarning: (message: string) => void): Table {
  evolveToDefinition(table, def, true, onWarning);
  return table;
}
