// Exactly-once effect bookkeeping per (module, stream): decides, for each arriving sequence
// number, whether its event is a duplicate, the next one to apply (releasing any held successors
// in order), or early (held in a bounded reorder buffer while the gap before it is open). A clock
// tick turns gaps that stay open too long into resync requests, and, at the last, into skips.
//
// Vocabulary, per stream:  committed ≤ issued < every held seq.
//   committed  the high-water mark the caller made durable (`restore` at start, `commit` after).
//   issued     the highest seq handed out as ready; committed+1..issued are "pending".
//   held       seqs > issued+1 waiting for the gap before them.
// Classification of seq s:
//   s ≤ issued, in a skipped range    → late: never applied (the gap policy gave up on it); the
//                                       caller makes it a dead letter, and the seq leaves the range
//   s ≤ issued, or s held             → duplicate (drop; already applied, pending or waiting)
//   s = issued+1                      → next: ready = [s, s+1, …] as long as they are held
//   s > issued+1, buffer has room     → gap (held)
//   s > issued+1, buffer full         → overflow: the highest of (held ∪ {s}) are dropped until
//                                       the rest fits, and a resync from issued+1 is due at once.
//                                       Dropping an early event is safe: a resync makes the module
//                                       resend everything from `from`. A dropped event the stream
//                                       went on in order below since it arrived is marked
//                                       `farAhead` (below): the resend does not bring it.
// "Full" counts events (`reorder_buffer_max`) and their bytes (`reorder_buffer_bytes_max`, the
// size the caller gives with each offer): a module sending large payloads otherwise held up to
// reorder_buffer_max × payload_bytes_max (256 MiB) per stream. Past the byte bound more than one
// held event can go (the lowest seqs stay: they close the gap soonest); an event larger than the
// bound alone is dropped itself, and comes back through the resync in order, never held.
// Gap policy (`tick`): a gap is open while something is held. Its age is measured from the
// earliest arrival among the held events, or from the stream's last in-order progress if that is
// later: a stream whose events keep arriving in order is not stuck behind a lost event, it holds
// one that came far too early (a module's bug, or a forged seq). Aged from its arrival, such an
// event was skipped to after gap_give_up_ms and the stream's own next events, now below the
// high-water mark, were dropped as duplicates for good; aged from progress, it waits (one buffer
// slot, the first dropped on overflow) while the stream goes on — but not for good: once it has
// been held far_ahead_give_up_ms (15 min) from its own arrival, and the stream moved on in order
// after it arrived, `tick` gives it up (`far_ahead`: taken out of the buffer, its seq not consumed;
// the caller makes it a dead letter). Held until the stream reached it, it kept the caller's
// journal position before it for good (seq 1,000,000 while the stream is at 10: every table's
// position, the journal's checkpoint and prune stood still, and the journal grew until its disk
// budget held every module's acks), with gap_give_up_ms Infinity too. Not a skip to it: the
// stream's own next events would then all be below the high-water mark (CONTRACTS.md §4).
// Such an event is the highest held, so the first an overflow drops, and the module's resend from
// issued+1 never brings a seq the module has not reached: dropped like an early one it was gone
// with only a counter moved. So `overflow` marks each dropped event the stream went on in order
// below since it arrived (`farAhead`; the caller makes it a dead letter as `tick`'s `far_ahead`),
// without the wait: the buffer is full now. "Went on in order since it arrived" is one test for
// both: an in-order arrival (`next` while something is held; a skip is not one) offered after it,
// by the order of offers (`arrival`/`progress` ordinals), not by their times: a burst, the
// journal's read at open, or a simulated clock gives both the same ms. Early events that came
// before the stream's last in-order arrival and are still the highest held when the buffer fills
// are marked too (heavy reordering, e.g. live events above a resend with its own hole): a letter
// that the resend makes a copy (applied in its turn), never a loss. `restore` forgets progress; the
// caller's read of its journal at open, which holds such an event again, tells of each duplicate at
// or below the restored position it reads after it (`wentOnBelow`: the stopped run took it in order).
// A far event arriving when the buffer is already full is dropped as itself, unmarked (nothing
// went on below it yet): a known limit.
// At age ≥ reorder_window_ms: request a resync {from: issued+1, to: lowest held − 1}, again every
// resync_retry_ms while it stays open. At age ≥ gap_give_up_ms: skip — issued jumps over the
// missing range, the held run is released, and the caller records the loss. Events are absolute
// row images, so later events repair the rows the lost ones touched; waiting forever would instead
// freeze every row of the stream.
// Skipped ranges: each skip's {from, to, atMs} is remembered per stream (the newest
// SKIPPED_RANGES_PER_STREAM), so a late arrival of one of those seqs is told apart from a true
// duplicate (`late`: its content was never applied; dropped silently it was lost without a trace).
// A seq answered `late` leaves its range: a second copy is a duplicate. `restore` keeps only what
// lies at or below the restored position (above it the events are offered again as next or gap);
// `restoreSkipped` brings back what the caller made durable (the Ingestor: dead_letters' snapshot).
// Clock: `now_ms` measures these ages, so it must be monotonic (the Ingestor gives its
// `monotonicClock`, performance.now on a site). The wall clock steps: one step forward of 10 min
// aged every open gap past gap_give_up_ms at once, skipped it, and dropped the module's resend of
// the missing events as duplicates (below `issued` by then). A clock that goes back (a simulated
// one) is tolerated: times ahead of now count from now. `gap()` answers on the same clock; the
// caller converts to epoch ms for display.
//
// Concurrency: single-threaded, synchronous, deterministic given the clock. No I/O.

export interface SequencerOptions {
  /** How long an out-of-order event may wait for its predecessors before a resync is asked. */
  readonly reorder_window_ms: number;
  /** How often a resync is asked again while the gap stays open. */
  readonly resync_retry_ms: number;
  /** How long a gap may stay open before it is skipped; Infinity waits forever. */
  readonly gap_give_up_ms: number;
  /**
   * How long an event may stay held, from its own arrival, while its stream goes on in order below
   * it, before `tick` gives it up (`far_ahead`). Not Infinity: the caller's journal stays pinned
   * before a held event.
   */
  readonly far_ahead_give_up_ms: number;
  /** Held events per stream; bounds memory when a module races ahead of a lost event. */
  readonly reorder_buffer_max: number;
  /** Held bytes per stream (the sizes given to `offer`): the count bound alone let large payloads hold far more. */
  readonly reorder_buffer_bytes_max: number;
  /**
   * A monotonic clock in ms, on which gaps age (injected so tests and replays are deterministic).
   * Not the wall clock: a step forward would skip every open gap at once (header).
   */
  readonly now_ms: () => number;
}

export const DEFAULT_SEQUENCER_OPTIONS: Omit<SequencerOptions, 'now_ms'> = {
  reorder_window_ms: 2_000,
  resync_retry_ms: 10_000,
  gap_give_up_ms: 5 * 60_000,
  far_ahead_give_up_ms: 15 * 60_000,
  reorder_buffer_max: 1_024,
  reorder_buffer_bytes_max: 16 * 1024 * 1024,
};

/** Ranges remembered per stream; the oldest (lowest) go first. Bounds memory and the snapshot property. */
export const SKIPPED_RANGES_PER_STREAM = 16;

/** Seqs a skip gave up on: from..to, skipped at `atMs` (the time `tick` was given; epoch ms for the Ingestor). */
export interface SkippedRange {
  readonly from: number;
  readonly to: number;
  readonly atMs: number;
}

export interface Ready<T> {
  readonly seq: number;
  readonly item: T;
}

export interface GapReport {
  readonly module: string;
  readonly stream: string;
  /** First missing seq (issued + 1). */
  readonly from: number;
  /** Last missing seq before the lowest held one. */
  readonly to: number;
}

export type Offer<T> =
  | { readonly kind: 'duplicate'; readonly seq: number }
  /** Below `issued`, in a range a skip gave up on: never applied. `skipped`: that range as it was. */
  | { readonly kind: 'late'; readonly seq: number; readonly skipped: SkippedRange }
  | { readonly kind: 'next'; readonly ready: readonly Ready<T>[] }
  | { readonly kind: 'gap'; readonly seq: number; readonly missing: GapReport }
  /** `dropped`: the highest seqs of held ∪ {seq}, highest first (one, unless the byte bound needed more). */
  | { readonly kind: 'overflow'; readonly seq: number; readonly dropped: readonly Dropped<T>[]; readonly resync: GapReport };

/**
 * An event an overflow dropped. `farAhead`: the stream went on in order below it since it arrived
 * (header): the resync's resend will not bring it; absent for an early event, which it will.
 */
export interface Dropped<T> extends Ready<T> {
  readonly farAhead?: true;
}

export type TickAction<T> =
  | ({ readonly type: 'resync' } & GapReport)
  /**
   * A held event given up (`given`): held far_ahead_give_up_ms from its own arrival while the
   * stream went on in order below it; `from..to` the seqs it still waited for (from − 1 is the
   * stream's position). Out of the buffer, its seq not consumed: the stream's own event of that
   * seq is taken when it comes. One action per event, ascending.
   */
  | ({ readonly type: 'far_ahead'; readonly given: Ready<T> } & GapReport)
  | ({ readonly type: 'skip'; readonly ready: readonly Ready<T>[] } & GapReport);

export interface StreamState {
  readonly committed: number;
  readonly issued: number;
  readonly held: readonly number[];
}

interface Stream<T> {
  readonly module: string;
  readonly stream: string;
  committed: number;
  issued: number;
  /** `arrival`: the Sequencer's `offers` when it was held (orders it against `progress`). */
  readonly held: Map<number, { item: T; arrived_ms: number; arrival: number; bytes: number }>;
  /** Sum of the held events' bytes. */
  held_bytes: number;
  /** When a resync was last asked for the current gap; undefined when none was. */
  resync_at_ms: number | undefined;
  /** When `issued` last moved on while something was held (an in-order arrival); -Infinity: never. */
  progress_ms: number;
  /**
   * The Sequencer's `offers` at that arrival, or at a duplicate the caller's read at open says the
   * stream took in order (`wentOnBelow`); 0: never. Went on since a held event arrived ⇔ progress > its arrival.
   */
  progress: number;
  /** The ranges skips gave up on, ascending, disjoint, all ≤ issued; at most SKIPPED_RANGES_PER_STREAM. */
  skipped: SkippedRange[];
}

function checkOptions(o: SequencerOptions): void {
  const int = (name: keyof SequencerOptions, min: number, allowInfinity = false) => {
    const v = o[name] as unknown;
    const ok = (typeof v === 'number' && Number.isSafeInteger(v) && v >= min) || (allowInfinity && v === Infinity);
    if (!ok) throw new RangeError(`${name}: expected an integer ≥ ${min}${allowInfinity ? ' or Infinity' : ''}, got ${String(v)}`);
  };
  int('reorder_window_ms', 1);
  int('resync_retry_ms', 1);
  int('gap_give_up_ms', 1, true);
  int('far_ahead_give_up_ms', 1);
  int('reorder_buffer_max', 1);
  int('reorder_buffer_bytes_max', 1);
  if (o.gap_give_up_ms < o.reorder_window_ms) {
    throw new RangeError(`gap_give_up_ms: expected ≥ reorder_window_ms (${o.reorder_window_ms}), got ${o.gap_give_up_ms}`);
  }
  if (o.far_ahead_give_up_ms < o.reorder_window_ms) {
    throw new RangeError(`far_ahead_give_up_ms: expected ≥ reorder_window_ms (${o.reorder_window_ms}), got ${o.far_ahead_give_up_ms}`);
  }
  if (typeof o.now_ms !== 'function') throw new TypeError('now_ms: expected a function returning monotonic milliseconds');
}

export class Sequencer<T> {
  private readonly streams = new Map<string, Stream<T>>();
  /** module → stream → state: the per-event lookup without building the key string. */
  private readonly byModule = new Map<string, Map<string, Stream<T>>>();
  private readonly options: SequencerOptions;
  /** Offers so far that held an event or moved a held stream on: orders arrivals and progress exactly. */
  private offers = 0;

  constructor(options: Partial<SequencerOptions> & Pick<SequencerOptions, 'now_ms'>) {
    this.options = { ...DEFAULT_SEQUENCER_OPTIONS, ...options };
    checkOptions(this.options);
  }

  /** Sets a stream's committed high-water mark (0 = nothing yet), dropping whatever was pending or held. */
  restore(module: string, stream: string, hwm: number): void {
    if (!Number.isSafeInteger(hwm) || hwm < 0) throw new RangeError(`hwm: expected a non-negative integer, got ${hwm}`);
    const s = this.get(module, stream);
    s.committed = hwm;
    s.issued = hwm;
    s.held.clear();
    s.held_bytes = 0;
    s.resync_at_ms = undefined;
    s.progress_ms = -Infinity;
    s.progress = 0;
    if (s.skipped.length > 0) s.skipped = trimmed(s.skipped, hwm);
  }

  /**
   * Adds ranges skipped before (the caller's durable copy), as far as they lie at or below the
   * stream's `issued` (call after `restore`); overlaps with known ranges are left out.
   */
  restoreSkipped(module: string, stream: string, ranges: readonly SkippedRange[]): void {
    for (const r of ranges) {
      if (!Number.isSafeInteger(r.from) || !Number.isSafeInteger(r.to) || r.from < 1 || r.to < r.from || !Number.isFinite(r.atMs)) {
        throw new RangeError(`skipped range: expected 1 ≤ from ≤ to, got ${r.from}..${r.to}`);
      }
    }
    const s = this.get(module, stream);
    for (const r of trimmed(ranges, s.issued)) addSkipped(s, r);
  }

  /** The stream's remembered skipped ranges, ascending. */
  skipped(module: string, stream: string): readonly SkippedRange[] {
    return this.byModule.get(module)?.get(stream)?.skipped ?? [];
  }

  /** Every stream that has skipped ranges, in stream order. */
  skippedStreams(): { module: string; stream: string; ranges: readonly SkippedRange[] }[] {
    const out: { module: string; stream: string; ranges: readonly SkippedRange[] }[] = [];
    for (const s of this.streams.values()) if (s.skipped.length > 0) out.push({ module: s.module, stream: s.stream, ranges: s.skipped });
    return out;
  }

  /** Forgets pending and held events (after the caller failed to apply them): they will be accepted again. */
  rewind(module: string, stream: string): void {
    const s = this.get(module, stream);
    this.restore(module, stream, s.committed);
  }

  /** `bytes`: what holding `item` costs (the Ingestor gives the payload's length); counted against reorder_buffer_bytes_max. */
  offer(module: string, stream: string, seq: number, item: T, bytes = 0): Offer<T> {
    if (!Number.isSafeInteger(seq) || seq < 0) throw new RangeError(`seq: expected a non-negative integer, got ${seq}`);
    if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`bytes: expected a non-negative integer, got ${bytes}`);
    const s = this.get(module, stream);
    if (seq <= s.issued && s.skipped.length > 0) {
      const skipped = takeSkipped(s, seq);
      if (skipped !== undefined) return { kind: 'late', seq, skipped };
    }
    if (seq <= s.issued || s.held.has(seq)) return { kind: 'duplicate', seq };
    if (seq === s.issued + 1) {
      s.issued = seq;
      const ready: Ready<T>[] = [{ seq, item }];
      if (s.held.size > 0) {
        // The gap moved on: it is a new one, aged from now, with no resync asked yet.
        s.progress_ms = this.options.now_ms();
        s.progress = ++this.offers;
        s.resync_at_ms = undefined;
        this.drain(s, ready);
      }
      return { kind: 'next', ready };
    }
    const now = this.options.now_ms();
    const { reorder_buffer_max: countMax, reorder_buffer_bytes_max: bytesMax } = this.options;
    const arrival = ++this.offers;
    if (s.held.size < countMax && s.held_bytes + bytes <= bytesMax) {
      s.held.set(seq, { item, arrived_ms: now, arrival, bytes });
      s.held_bytes += bytes;
      return { kind: 'gap', seq, missing: this.gapOf(s) };
    }
    // Full: keep the lowest seqs (they close the gap soonest); drop the highest until the rest fits.
    s.held.set(seq, { item, arrived_ms: now, arrival, bytes });
    s.held_bytes += bytes;
    const dropped: Dropped<T>[] = [];
    while (s.held.size > countMax || s.held_bytes > bytesMax) {
      let highest = -1;
      for (const h of s.held.keys()) if (h > highest) highest = h;
      const h = s.held.get(highest)!;
      s.held.delete(highest);
      s.held_bytes -= h.bytes;
      dropped.push(s.progress > h.arrival ? { seq: highest, item: h.item, farAhead: true } : { seq: highest, item: h.item });
    }
    if (s.held.size > 0) {
      s.resync_at_ms = now;
      return { kind: 'overflow', seq, dropped, resync: this.gapOf(s) };
    }
    // Nothing fits (one event above the byte bound): no gap stays open; the resync covers all
    // dropped, whose lowest is the last one.
    s.resync_at_ms = undefined;
    return { kind: 'overflow', seq, dropped, resync: { module, stream, from: s.issued + 1, to: dropped[dropped.length - 1]!.seq - 1 } };
  }

  /**
   * `offer`'s common case without its result objects: `seq` is the stream's next and nothing is
   * held, so `issued` moves to it and the caller releases the event at once (what `offer` answers
   * `next` with a ready run of one). False, and nothing changed, in every other case: then `offer`.
   */
  takeNext(module: string, stream: string, seq: number): boolean {
    const s = this.get(module, stream);
    if (seq !== s.issued + 1 || s.held.size > 0 || !Number.isSafeInteger(seq)) return false;
    s.issued = seq;
    return true;
  }

  /**
   * The caller's read of its journal at open offered `seq` again, a `duplicate` at or below the
   * stream's committed position (the one `restore` set), after events of the stream it holds now:
   * in the run that took that event it came after them, and in order (or in a run released by
   * one), so the stream went on in order below them since they arrived, as a `next` would have
   * marked (`progress`, header). `restore` forgets that, and the stream's events after a held far
   * event, read again, are all such duplicates: without this the next overflow dropped the far
   * event unmarked (no letter, only a counter moved). An event the run took otherwise (a gap skip
   * released it; a copy it dropped as a duplicate then too) marks the held ones as well: at worst
   * an early event is then lettered far ahead and applied by the resend in its turn, never lost.
   * Call it only for the read at open: a duplicate that arrives live is a copy, not progress.
   */
  wentOnBelow(module: string, stream: string, seq: number): void {
    const s = this.byModule.get(module)?.get(stream);
    if (s === undefined || s.held.size === 0 || !(seq <= s.committed)) return;
    s.progress = ++this.offers;
  }

  /** Records that everything up to `seq` is durable. REQUIRES: committed ≤ seq ≤ issued. */
  commit(module: string, stream: string, seq: number): void {
    const s = this.get(module, stream);
    if (!(seq >= s.committed && seq <= s.issued)) {
      throw new Error(`assertion failed: commit ${seq} outside ${s.committed}..${s.issued} for ${module}/${stream}`);
    }
    s.committed = seq;
  }

  /**
   * Ages the open gaps; returns the resyncs now due and the gaps given up, in stream order.
   * `atMs`: the time a skip is remembered with (`skipped`, shown to people; default now_ms).
   */
  tick(atMs?: number): TickAction<T>[] {
    const now = this.options.now_ms();
    const actions: TickAction<T>[] = [];
    for (const s of this.streams.values()) {
      if (s.held.size === 0) continue;
      // A clock stepped back (a wall clock given as now_ms) leaves these times ahead of now; they
      // count from now instead, or the gap would wait out the length of the step (an hour's step:
      // an hour with the stream frozen and no resync asked).
      for (const h of s.held.values()) if (h.arrived_ms > now) h.arrived_ms = now;
      if (s.progress_ms > now) s.progress_ms = now;
      if (s.resync_at_ms !== undefined && s.resync_at_ms > now) s.resync_at_ms = now;
      // Held far ahead: the stream went on in order after it arrived, and it is still not reached.
      let gaveUp: Ready<T>[] | undefined;
      for (const [seq, h] of s.held) {
        if (now - h.arrived_ms < this.options.far_ahead_give_up_ms || !(s.progress > h.arrival)) continue;
        (gaveUp ??= []).push({ seq, item: h.item });
      }
      if (gaveUp !== undefined) {
        gaveUp.sort((a, b) => a.seq - b.seq);
        for (const g of gaveUp) {
          s.held_bytes -= s.held.get(g.seq)!.bytes;
          s.held.delete(g.seq);
          actions.push({ type: 'far_ahead', module: s.module, stream: s.stream, from: s.issued + 1, to: g.seq - 1, given: g });
        }
        if (s.held.size === 0) {
          s.resync_at_ms = undefined;
          continue;
        }
      }
      const age = now - this.gapSince(s);
      if (age >= this.options.gap_give_up_ms) {
        const gap = this.gapOf(s);
        s.issued = gap.to;
        s.resync_at_ms = undefined;
        addSkipped(s, { from: gap.from, to: gap.to, atMs: atMs ?? now });
        const ready: Ready<T>[] = [];
        this.drain(s, ready);
        actions.push({ type: 'skip', ...gap, ready });
        continue;
      }
      if (age < this.options.reorder_window_ms) continue;
      if (s.resync_at_ms !== undefined && now - s.resync_at_ms < this.options.resync_retry_ms) continue;
      s.resync_at_ms = now;
      actions.push({ type: 'resync', ...this.gapOf(s) });
    }
    return actions;
  }

  /** The highest seq handed out as ready (0: none). */
  issued(module: string, stream: string): number {
    return this.byModule.get(module)?.get(stream)?.issued ?? 0;
  }

  state(module: string, stream: string): StreamState {
    const s = this.byModule.get(module)?.get(stream);
    if (!s) return { committed: 0, issued: 0, held: [] };
    return { committed: s.committed, issued: s.issued, held: [...s.held.keys()].sort((a, b) => a - b) };
  }

  /**
   * The stream's open gap: the seqs missing before the lowest held one, since when its age counts
   * (as `tick` counts it), and when it is skipped (null: `gap_give_up_ms` is Infinity); null when
   * nothing is held. Times on the `now_ms` clock.
   */
  gap(module: string, stream: string): { from: number; to: number; sinceMs: number; skipAtMs: number | null } | null {
    const s = this.byModule.get(module)?.get(stream);
    if (!s || s.held.size === 0) return null;
    const sinceMs = this.gapSince(s);
    const { from, to } = this.gapOf(s);
    const giveUp = this.options.gap_give_up_ms;
    return { from, to, sinceMs, skipAtMs: giveUp === Infinity ? null : sinceMs + giveUp };
  }

  private get(module: string, stream: string): Stream<T> {
    let byStream = this.byModule.get(module);
    if (byStream === undefined) {
      byStream = new Map();
      this.byModule.set(module, byStream);
    }
    let s = byStream.get(stream);
    if (!s) {
      s = { module, stream, committed: 0, issued: 0, held: new Map(), held_bytes: 0, resync_at_ms: undefined, progress_ms: -Infinity, progress: 0, skipped: [] };
      // `streams` keeps creation order for tick's "stream order".
      this.streams.set(key(module, stream), s);
      byStream.set(stream, s);
    }
    return s;
  }

  private drain(s: Stream<T>, ready: Ready<T>[]): void {
    for (let next = s.held.get(s.issued + 1); next !== undefined; next = s.held.get(s.issued + 1)) {
      s.held.delete(s.issued + 1);
      s.held_bytes -= next.bytes;
      s.issued += 1;
      ready.push({ seq: s.issued, item: next.item });
    }
    if (s.held.size === 0) s.resync_at_ms = undefined;
  }

  /**
   * Where a held stream's gap age counts from: the earliest arrival among its held events, or its
   * last in-order progress if that came later (CONTRACTS.md, "Gap policy").
   */
  private gapSince(s: Stream<T>): number {
    let since = Infinity;
    for (const h of s.held.values()) since = Math.min(since, h.arrived_ms);
    return Math.max(since, s.progress_ms);
  }

  private gapOf(s: Stream<T>): GapReport {
    let lowest = Infinity;
    for (const h of s.held.keys()) lowest = Math.min(lowest, h);
    return { module: s.module, stream: s.stream, from: s.issued + 1, to: lowest - 1 };
  }
}

const key = (module: string, stream: string) => `${module}\u0000${stream}`;

/** The ranges cut to seqs ≤ max. */
function trimmed(ranges: readonly SkippedRange[], max: number): SkippedRange[] {
  const out: SkippedRange[] = [];
  for (const r of ranges) {
    if (r.from > max) continue;
    out.push(r.to > max ? { ...r, to: max } : r);
  }
  return out;
}

/** Adds the parts of r no known range has, keeps the list ascending, and forgets the oldest past the bound. */
function addSkipped(s: { skipped: SkippedRange[] }, r: SkippedRange): void {
  let pieces: SkippedRange[] = [r];
  for (const k of s.skipped) {
    const next: SkippedRange[] = [];
    for (const p of pieces) {
      if (p.to < k.from || p.from > k.to) next.push(p);
      else {
        if (p.from < k.from) next.push({ ...p, to: k.from - 1 });
        if (p.to > k.to) next.push({ ...p, from: k.to + 1 });
      }
    }
    pieces = next;
  }
  if (pieces.length === 0) return;
  s.skipped.push(...pieces);
  s.skipped.sort((a, b) => a.from - b.from);
  if (s.skipped.length > SKIPPED_RANGES_PER_STREAM) s.skipped.splice(0, s.skipped.length - SKIPPED_RANGES_PER_STREAM);
}

/** The range holding seq, as it was, with seq taken out of it; undefined when none holds it. */
function takeSkipped(s: { skipped: SkippedRange[] }, seq: number): SkippedRange | undefined {
  const i = s.skipped.findIndex((r) => r.from <= seq && seq <= r.to);
  if (i < 0) return undefined;
  const r = s.skipped[i]!;
  const rest: SkippedRange[] = [];
  if (r.from < seq) rest.push({ ...r, to: seq - 1 });
  if (seq < r.to) rest.push({ ...r, from: seq + 1 });
  s.skipped.splice(i, 1, ...rest);
  // A seq from the middle of a range splits it: late events resent out of order would grow the list
  // (and dead_letters' snapshot property) one range each, so the bound holds here too.
  if (s.skipped.length > SKIPPED_RANGES_PER_STREAM) s.skipped.splice(0, s.skipped.length - SKIPPED_RANGES_PER_STREAM);
  return r;
}
