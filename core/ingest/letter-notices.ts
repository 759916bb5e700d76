// Letter notices: a module is told of its own dead letters on tilstand/<site>/letters/<module>.
//
// A module's event that ingest refuses was still journaled and acknowledged (PUBACK), so the
// module has no way to see the refusal; before this, only the floor's Dead letters screen showed
// it, and a module whose producer drifted from its contract found out when someone looked at the
// site PC. The Ingestor hands `LetterNotices.letters` the letters each commit of dead_letters
// made durable (`Ingestor.setLetterListener`): a notice never names a letter a crash could lose.
//
// Bounded: a module flooding bad events gets at most `perSecond` notices a second (default 10),
// the summaries included. Within one window of a second the first letters are announced one by
// one; the rest are counted, and once the window is over (the next letter of that module, or
// `tick`) one summary says how many more there were, since when, and for which reasons. The
// broker's load from notices is thus a few messages per module and second whatever the flood.
//
// Who is told: the module the event's topic names (tilstand/<site>/events/<module>/…). The broker's
// ACL lets only the principal of that module publish there (broker.ts `siteAcl`; the shipped
// mosquitto ACL does the same with `%u`), so the topic's module is the authenticated publisher.
// A letter whose topic names no module of this site is announced to no one.
//
// Notices are best effort, QoS 1, not retained: the broker keeps them in the session of a module
// that subscribed and is away (clean: false), and drops them when no one subscribed.
// `checkLetterNotice` is what the module client (module-client/client.ts) reads them with.
//
// Concurrency: single-threaded; `letters` and `tick` run to completion.

import type { DeadLetter } from './dead-letters.ts';
import { cutText, NAME_PATTERN } from './envelope.ts';

/** Notices a module gets at most per second, its summaries included. */
export const LETTER_NOTICES_PER_SECOND = 10;
/** Length of a notice window, ms. */
export const LETTER_NOTICE_WINDOW_MS = 1_000;
/** Modules with a window open at once; a letter of another module past it goes unannounced. */
export const LETTER_NOTICE_MODULES_MAX = 10_000;
/** A letter's detail is cut to this many characters in its notice (the letter keeps all of it). */
export const LETTER_NOTICE_DETAIL_MAX = 1_000;
const PATH_MAX = 200;

/** One dead letter, as its module is told of it. */
export interface LetterNotice {
  readonly kind: 'letter';
  readonly module: string;
  /** The topic's stream; null when the topic has none this site can name. */
  readonly stream: string | null;
  /** The envelope's seq, when the event was sequenced (null for an event that did not parse, or had no binding). */
  readonly seq: number | null;
  /** The dead-letter reason code (core/ingest envelope.ts `DEAD_LETTER_REASONS`). */
  readonly reason: string;
  /** The human message, as the dead_letters table has it (cut to LETTER_NOTICE_DETAIL_MAX). */
  readonly detail: string;
  /** Where in the payload the fault is, when known. */
  readonly path: string | null;
  /** The letter's id: its journal position, as `tilstand deadletters list` and the Dead letters screen name it. */
  readonly letter: string;
  /** When the site received the event (ISO 8601, UTC). */
  readonly at: string;
}

/** The letters of one window that were not announced one by one. */
export interface LetterSummaryNotice {
  readonly kind: 'summary';
  readonly module: string;
  /** Letters not announced one by one. */
  readonly more: number;
  /** When the site received the earliest and the latest of them (ISO 8601). */
  readonly since: string;
  readonly until: string;
  /** How many of them per reason code. */
  readonly reasons: Readonly<Record<string, number>>;
  /** The lowest and highest of their letter ids (journal positions): `tilstand deadletters list` shows them all. */
  readonly first_letter: string;
  readonly last_letter: string;
  /** The same in words ("and 4,312 more since …"). */
  readonly detail: string;
  /** When the summary was made (ISO 8601). */
  readonly at: string;
}

export type DeadLetterNotice = LetterNotice | LetterSummaryNotice;

/** tilstand/<site>/letters/<module>: where Tilstand tells a module of its dead letters. */
export function lettersTopic(site: string, module: string): string {
  return `tilstand/${site}/letters/${module}`;
}

export interface LetterNoticesOptions {
  site: string;
  /** Publishes one notice (QoS 1, not retained); must not throw. */
  publish: (topic: string, payload: string) => void;
  /** Default LETTER_NOTICES_PER_SECOND. */
  perSecond?: number;
  /** The windows' clock, ms; monotonic (default performance.now), so a step of the PC's clock changes no window. */
  monotonicClock?: () => number;
  /** The times in notices, epoch ms. Default Date.now. */
  clock?: () => number;
}

interface Window {
  startMs: number;
  sent: number;
  more: number;
  sinceMs: number;
  untilMs: number;
  reasons: Map<string, number>;
  first: bigint;
  last: bigint;
}

export class LetterNotices {
  private readonly o: LetterNoticesOptions;
  private readonly perSecond: number;
  private readonly monotonic: () => number;
  private readonly clock: () => number;
  private readonly windows = new Map<string, Window>();
  private readonly eventsPrefix: string;
  private c = { notices: 0, summaries: 0, unannounced: 0 };

  constructor(o: LetterNoticesOptions) {
    if (!NAME_PATTERN.test(o.site)) throw new RangeError(`site: expected a name matching ${NAME_PATTERN.source}, got ${JSON.stringify(o.site)}`);
    const perSecond = o.perSecond ?? LETTER_NOTICES_PER_SECOND;
    // At least 2: one letter and the summary of the rest.
    if (!Number.isSafeInteger(perSecond) || perSecond < 2) throw new RangeError(`perSecond: expected an integer ≥ 2, got ${String(perSecond)}`);
    this.o = o;
    this.perSecond = perSecond;
    this.monotonic = o.monotonicClock ?? (() => performance.now());
    this.clock = o.clock ?? Date.now;
    this.eventsPrefix = `tilstand/${o.site}/events/`;
  }

  /** Notices and summaries published, and letters left unannounced (LETTER_NOTICE_MODULES_MAX). */
  counts(): { notices: number; summaries: number; unannounced: number } {
    return { ...this.c };
  }

  /** Letters dead_letters' commit made durable: each announced to its module, within the bound. */
  letters(letters: readonly DeadLetter[]): void {
    const now = this.monotonic();
    for (const d of letters) {
      const module = this.moduleOf(d);
      if (module === undefined) continue;
      let w = this.windows.get(module);
      if (w !== undefined && now - w.startMs >= LETTER_NOTICE_WINDOW_MS) w = this.nextWindow(module, w, now);
      if (w === undefined) {
        if (this.windows.size >= LETTER_NOTICE_MODULES_MAX) {
          this.c.unannounced++;
          continue;
        }
        w = fresh(now);
        this.windows.set(module, w);
      }
      // Once one is counted, the rest of the window is too: its notices stay in letter order.
      if (w.more === 0 && w.sent < this.perSecond) {
        w.sent++;
        this.send(module, letterNotice(module, d));
        continue;
      }
      // Over the bound: counted for the window's summary (which keeps a slot of the next window).
      // Lowest and highest, not first and last: a held event's letter comes in a later commit than
      // the letters of later positions, and its receive time is earlier.
      if (w.more === 0 || d.receivedAtMs < w.sinceMs) w.sinceMs = d.receivedAtMs;
      if (w.more === 0 || d.receivedAtMs > w.untilMs) w.untilMs = d.receivedAtMs;
      if (w.more === 0 || d.position < w.first) w.first = d.position;
      if (w.more === 0 || d.position > w.last) w.last = d.position;
      w.more++;
      w.reasons.set(d.reason, (w.reasons.get(d.reason) ?? 0) + 1);
    }
  }

  /**
   * Sends the summary of each window that is over and left letters unannounced, and forgets the
   * modules whose window is over and quiet. Call it often (core/site: at each ingest tick): a
   * flood's last second is told of here, not only when the module's next letter comes.
   */
  tick(): void {
    const now = this.monotonic();
    for (const [module, w] of this.windows) {
      if (now - w.startMs < LETTER_NOTICE_WINDOW_MS) continue;
      if (w.more === 0) this.windows.delete(module);
      else this.nextWindow(module, w, now);
    }
  }

  /** The window after `w`: with the summary of `w` as its first notice, or none (forgotten). */
  private nextWindow(module: string, w: Window, now: number): Window | undefined {
    if (w.more === 0) {
      this.windows.delete(module);
      return undefined;
    }
    this.send(module, this.summary(module, w));
    const next = fresh(now);
    next.sent = 1;
    this.windows.set(module, next);
    return next;
  }

  private summary(module: string, w: Window): LetterSummaryNotice {
    const since = new Date(w.sinceMs).toISOString();
    const reasons = Object.fromEntries([...w.reasons].sort((a, b) => b[1] - a[1]));
    const why = Object.entries(reasons)
      .map(([r, n]) => `${r} ${n.toLocaleString('en-US')}`)
      .join(', ');
    return {
      kind: 'summary',
      module,
      more: w.more,
      since,
      until: new Date(w.untilMs).toISOString(),
      reasons,
      first_letter: w.first.toString(),
      last_letter: w.last.toString(),
      detail: `and ${w.more.toLocaleString('en-US')} more dead letter${w.more === 1 ? '' : 's'} since ${since} (${why}), letters ${w.first}..${w.last}; at most ${this.perSecond} notices a second are sent`,
      at: new Date(this.clock()).toISOString(),
    };
  }

  private send(module: string, notice: DeadLetterNotice): void {
    if (notice.kind === 'summary') this.c.summaries++;
    else this.c.notices++;
    this.o.publish(lettersTopic(this.o.site, module), JSON.stringify(notice));
  }

  /**
   * The module an event topic of this site names (its fourth level), also for a topic with more
   * levels than a stream (the broker's ACL lets a module publish there, and the letter's own
   * `module` column is then null).
   */
  private moduleOf(d: DeadLetter): string | undefined {
    if (!d.topic.startsWith(this.eventsPrefix)) return undefined;
    const module = d.topic.slice(this.eventsPrefix.length).split('/', 1)[0]!;
    return NAME_PATTERN.test(module) ? module : undefined;
  }
}

function fresh(now: number): Window {
  return { startMs: now, sent: 0, more: 0, sinceMs: 0, untilMs: 0, reasons: new Map(), first: 0n, last: 0n };
}

function letterNotice(module: string, d: DeadLetter): LetterNotice {
  return {
    kind: 'letter',
    module,
    stream: d.stream,
    seq: d.seq,
    reason: d.reason,
    detail: cutText(d.detail, LETTER_NOTICE_DETAIL_MAX),
    path: d.path === null ? null : cutText(d.path, PATH_MAX),
    letter: d.position.toString(),
    at: new Date(d.receivedAtMs).toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Reading a notice (the module client's side).

const REASON = /^[a-z][a-z0-9_]{0,63}$/;
const LETTER_ID = /^[1-9][0-9]{0,19}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const TEXT_MAX = 4_096;
const REASONS_MAX = 64;

const isText = (v: unknown, max = TEXT_MAX): v is string => typeof v === 'string' && v.length <= max;
const isTime = (v: unknown): v is string => typeof v === 'string' && ISO_TIME.test(v) && Number.isFinite(Date.parse(v));
const isCount = (v: unknown, min: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;

/**
 * Checks a notice read from tilstand/<site>/letters/<module> (parsed with the envelope's safe JSON:
 * no forbidden keys). A reason code this version does not know is accepted (a newer site may
 * have more); every other field must have its type. Returns the notice, or why not.
 */
export function checkLetterNotice(v: Record<string, unknown>, module: string): { ok: true; notice: DeadLetterNotice } | { ok: false; detail: string } {
  const bad = (what: string) => ({ ok: false as const, detail: `expected ${what}` });
  if (v.module !== module) return bad(`module ${JSON.stringify(module)}`);
  if (v.kind === 'letter') {
    if (!(v.stream === null || (typeof v.stream === 'string' && NAME_PATTERN.test(v.stream)))) return bad('stream: a stream name or null');
    if (!(v.seq === null || isCount(v.seq, 1))) return bad('seq: an integer ≥ 1 or null');
    if (typeof v.reason !== 'string' || !REASON.test(v.reason)) return bad('reason: a reason code');
    if (!isText(v.detail)) return bad('detail: a string');
    if (!(v.path === null || v.path === undefined || isText(v.path))) return bad('path: a string or null');
    if (typeof v.letter !== 'string' || !LETTER_ID.test(v.letter)) return bad('letter: a letter id (digits)');
    if (!isTime(v.at)) return bad('at: an ISO time');
    const notice: LetterNotice = { kind: 'letter', module, stream: v.stream, seq: v.seq, reason: v.reason, detail: v.detail, path: (v.path as string | null | undefined) ?? null, letter: v.letter, at: v.at };
    return { ok: true, notice };
  }
  if (v.kind === 'summary') {
    if (!isCount(v.more, 1)) return bad('more: an integer ≥ 1');
    if (!isTime(v.since) || !isTime(v.until) || !isTime(v.at)) return bad('since, until, at: ISO times');
    const r = v.reasons;
    if (r === null || typeof r !== 'object' || Array.isArray(r)) return bad('reasons: an object');
    const entries = Object.entries(r as Record<string, unknown>);
    if (entries.length > REASONS_MAX || !entries.every(([k, n]) => REASON.test(k) && isCount(n, 1))) return bad('reasons: reason codes with counts');
    if (typeof v.first_letter !== 'string' || !LETTER_ID.test(v.first_letter) || typeof v.last_letter !== 'string' || !LETTER_ID.test(v.last_letter)) return bad('first_letter, last_letter: letter ids');
    if (!isText(v.detail)) return bad('detail: a string');
    const notice: LetterSummaryNotice = {
      kind: 'summary',
      module,
      more: v.more,
      since: v.since,
      until: v.until,
      reasons: Object.fromEntries(entries) as Record<string, number>,
      first_letter: v.first_letter,
      last_letter: v.last_letter,
      detail: v.detail,
      at: v.at,
    };
    return { ok: true, notice };
  }
  return bad("kind: 'letter' or 'summary'");
}
