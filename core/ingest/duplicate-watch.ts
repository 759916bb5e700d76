// Streams that deliver nothing but duplicates: a module whose sequence went back (restored from a
// backup, reinstalled, its outbox deleted) numbers its new events below the high-water mark
// Tilstand holds for the stream, and ingest drops every one of them as already applied — the
// stream's rows stop changing while its events are acknowledged, journaled and counted. Nothing
// else in the pipeline can tell that apart from a module resending old events, so this watch
// looks at the shape over time: a resend (reconnect, resync) is a burst that ends, or is followed
// by new events; a reset module's events keep coming and none is new.
//
// A stream is reported once its duplicates have arrived at `minMoments` distinct moments (a second
// apart at least: a burst is one moment, however many events it resends) spread over at least
// `minSpanMs`, with no event that was not a duplicate in between (any such event clears it). So a
// module that reconnects now and then and resends what lost its PUBACK is never reported, and one
// publishing an event a minute is reported after about `minMoments` minutes. The report goes away
// when the stream's duplicates stop for `quietMs`.
//
// Clocks: the windows (moments, minSpanMs, quietMs) are durations, measured on a monotonic clock
// the caller passes (the Ingestor's monotonicClock); each duplicate also brings its wall time,
// which is what a report shows (firstMs, lastMs). On the wall clock a step forward of 30 min
// cleared a stuck stream's report at once (its duplicates looked quiet) and a step of 2 min made
// one early; a step back held both off by its length.
//
// Concurrency: single-threaded; the caller passes the clocks. No I/O.

export interface DuplicateWatchOptions {
  readonly minMoments: number;
  readonly minSpanMs: number;
  readonly quietMs: number;
}

export const DEFAULT_DUPLICATE_WATCH: DuplicateWatchOptions = { minMoments: 20, minSpanMs: 2 * 60_000, quietMs: 30 * 60_000 };
/** Duplicates closer than this to the last counted moment belong to it. */
const MOMENT_MS = 1_000;

export interface DuplicateRun {
  readonly module: string;
  readonly stream: string;
  /** Duplicates in a row, and when the first and the latest arrived (wall clock, epoch ms). */
  readonly count: number;
  readonly firstMs: number;
  readonly lastMs: number;
  /** From the first to the latest, on the clock for durations (a wall-clock step does not skew it). */
  readonly spanMs: number;
  /** Lowest and highest seq among them. */
  readonly lowSeq: number;
  readonly highSeq: number;
  /** The stream's high-water mark when the latest arrived (what they are all at or below). */
  readonly issued: number;
}

interface Run {
  count: number;
  moments: number;
  /** Monotonic: the last counted moment, the first and the latest duplicate. */
  momentMs: number;
  firstMs: number;
  lastMs: number;
  /** Wall clock, for the report: the first and the latest duplicate. */
  firstWallMs: number;
  lastWallMs: number;
  lowSeq: number;
  highSeq: number;
  issued: number;
}

export class DuplicateWatch {
  /** module → stream → the current run of duplicates. */
  private readonly runs = new Map<string, Map<string, Run>>();

  constructor(private readonly o: DuplicateWatchOptions = DEFAULT_DUPLICATE_WATCH) {}

  /**
   * A duplicate of `seq` arrived; the stream had issued up to `issued`. `nowMs` on the monotonic
   * clock (the windows), `wallMs` on the wall clock (the report; the same clock when not given).
   */
  duplicate(module: string, stream: string, seq: number, issued: number, nowMs: number, wallMs: number = nowMs): void {
    let byStream = this.runs.get(module);
    if (!byStream) this.runs.set(module, (byStream = new Map()));
    const r = byStream.get(stream);
    if (!r || nowMs - r.lastMs >= this.o.quietMs) {
      byStream.set(stream, { count: 1, moments: 1, momentMs: nowMs, firstMs: nowMs, lastMs: nowMs, firstWallMs: wallMs, lastWallMs: wallMs, lowSeq: seq, highSeq: seq, issued });
      return;
    }
    r.count++;
    if (nowMs - r.momentMs >= MOMENT_MS) {
      r.moments++;
      r.momentMs = nowMs;
    }
    r.lastMs = nowMs;
    r.lastWallMs = wallMs;
    if (seq < r.lowSeq) r.lowSeq = seq;
    if (seq > r.highSeq) r.highSeq = seq;
    r.issued = issued;
  }

  /** An event of the stream that was not a duplicate arrived: the stream is alive. */
  progress(module: string, stream: string): void {
    const byStream = this.runs.get(module);
    if (byStream?.size) byStream.delete(stream);
  }

  /** The streams that look stuck below their high-water mark now (`nowMs` on the monotonic clock). */
  stuck(nowMs: number): DuplicateRun[] {
    const out: DuplicateRun[] = [];
    for (const [module, byStream] of this.runs) {
      for (const [stream, r] of byStream) {
        if (nowMs - r.lastMs >= this.o.quietMs) continue;
        if (r.moments >= this.o.minMoments && r.lastMs - r.firstMs >= this.o.minSpanMs) {
          out.push({ module, stream, count: r.count, firstMs: r.firstWallMs, lastMs: r.lastWallMs, spanMs: r.lastMs - r.firstMs, lowSeq: r.lowSeq, highSeq: r.highSeq, issued: r.issued });
        }
      }
    }
    return out;
  }
}
