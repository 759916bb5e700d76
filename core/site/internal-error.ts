// What a client is told of a failure nobody foresaw, and what the site's log keeps of it.
//
// An unexpected error's message can hold what no browser should see: a file's path inside the
// data directory, a decoder's view of a damaged file, a stack fragment. Such a failure answers a
// generic text with a short id; the log line (logs/site.log) carries the same id and the whole
// error, so the person who reads the id off the screen finds the details.

import { randomBytes } from 'node:crypto';
import type { ClientErrorReport } from './api.ts';

/** A new error id: 8 hex digits, enough to find one line in a site's log. */
export function internalErrorId(): string {
  return randomBytes(4).toString('hex');
}

/** The text a client gets for an internal error: no part of the error itself. */
export function internalErrorMessage(id: string): string {
  return `internal error (id ${id}); the site's log (logs/site.log) has the details under that id`;
}

/**
 * The error as one log line: its stack (which starts with name and message) or its text, and its
 * causes, newlines folded so the id's line holds all of it.
 */
export function describeError(e: unknown): string {
  if (e === null || e === undefined) return String(e); // a thrown null: said, not an empty line
  const parts: string[] = [];
  let cur: unknown = e;
  // Bounded: a cause chain can loop (a.cause = b, b.cause = a).
  for (let depth = 0; depth < 5 && cur !== undefined && cur !== null; depth++) {
    const text = cur instanceof Error ? (cur.stack ?? `${cur.name}: ${cur.message}`) : String(cur);
    parts.push(text.replace(/\s*\n\s*/g, ' | '));
    cur = cur instanceof Error ? (cur as Error & { cause?: unknown }).cause : undefined;
  }
  return parts.join(' | caused by: ');
}

/** Where an internal error is written when the caller gives no log (the first-run screen has no site log yet). */
export const logToStderr = (line: string): void => void process.stderr.write(`${line}\n`);

/**
 * Logs `e` whole under a new id — `internal error <id> in <where>: …`, where = a path, or a method
 * with who called it (`callIn`) — and returns what the client is told (`internalErrorMessage`).
 * The one place for the site API, the UI server's fallback, /metrics and /healthz, and the IPC.
 */
export function reportInternalError(log: (line: string) => void, where: string, e: unknown): string {
  const id = internalErrorId();
  log(`internal error ${id} in ${where}: ${describeError(e)}`);
  return internalErrorMessage(id);
}

/** `where` for a call: the method and who made it. */
export function callIn(method: string, user: { name: string } | null | undefined): string {
  return `${method} (${user ? `user ${user.name}` : 'not signed in'})`;
}

/** Client errors logged per minute for one signed-in session. */
export const CLIENT_ERRORS_PER_SESSION_MINUTE = 6;
/** Client errors logged per minute for one source (client address) not signed in. */
export const CLIENT_ERRORS_PER_SOURCE_MINUTE = 3;
/** Client errors logged per minute from every caller not signed in together. */
export const CLIENT_ERRORS_UNSIGNED_MINUTE = 6;
/** Of a caller not signed in, the stack is cut to this many characters before it is logged. */
export const CLIENT_ERROR_UNSIGNED_STACK_MAX = 1000;
/** Callers tracked at once; beyond, a new one counts as dropped (a bounded map, whatever calls). */
const CLIENT_ERROR_KEYS_MAX = 1000;
const MINUTE_MS = 60_000;

/**
 * A client's text as one log line may hold it: quoted as JSON (newlines, ESC and the other C0
 * controls escaped) and with DEL, the C1 controls, line and paragraph separators, bidi overrides
 * and < > & escaped too, so a page's text can neither colour a terminal, start a line of its own,
 * reorder what a reader sees, nor be markup in a viewer that renders HTML.
 */
export function logSafe(text: string): string {
  return JSON.stringify(text).replace(/[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069<>&]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Who reported a client error, as ui-server.ts knows it. */
export interface ClientErrorCaller {
  /** The signed-in user, or null. */
  user: string | null;
  /** A signed-in caller's budget: its session (a token nobody logs). */
  session?: string;
  /** The client's address (ui-server.ts clientSource): a caller not signed in is counted by it. */
  source: string;
}

interface RateWindow {
  startMs: number;
  logged: number;
  dropped: number;
  who: string;
  /** Reports it logs in its minute. */
  cap: number;
}

/**
 * The floor UI's reports of its own failures, written to the site's log once each under an id
 * (internalErrorId's scheme) — and bounded, since a screen that fails on every render, or anyone
 * who reaches the port before signing in, would otherwise fill logs/site.log: per minute at most
 * CLIENT_ERRORS_PER_SESSION_MINUTE per signed-in session, CLIENT_ERRORS_PER_SOURCE_MINUTE per
 * address not signed in and CLIENT_ERRORS_UNSIGNED_MINUTE for all of those together; the rest are
 * counted, and one line says how many once that caller's minute is over (at the next report from
 * anyone, or at `flush`).
 */
export class ClientErrorLog {
  private readonly windows = new Map<string, RateWindow>();

  constructor(
    private readonly log: (line: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Logs the report under a new id and returns it; null when over the rate (counted, not logged). */
  report(caller: ClientErrorCaller, r: ClientErrorReport): string | null {
    const now = this.now();
    this.sweep(now);
    const signed = caller.user !== null && caller.session !== undefined;
    const who = signed ? `user ${logSafe(caller.user!)}` : `not signed in, from ${logSafe(caller.source)}`;
    const own = this.window(signed ? `s:${caller.session}` : `a:${caller.source}`, who, signed ? CLIENT_ERRORS_PER_SESSION_MINUTE : CLIENT_ERRORS_PER_SOURCE_MINUTE, now);
    const all = signed ? undefined : this.window('unsigned', 'callers not signed in', CLIENT_ERRORS_UNSIGNED_MINUTE, now, true);
    if (own.logged >= own.cap || (all !== undefined && all.logged >= all.cap)) {
      own.dropped++;
      return null;
    }
    own.logged++;
    if (all) all.logged++;
    const id = internalErrorId();
    const stack = r.stack === undefined ? undefined : signed ? r.stack : r.stack.slice(0, CLIENT_ERROR_UNSIGNED_STACK_MAX);
    const about = [who, r.screen !== undefined ? `screen ${logSafe(r.screen)}` : null, r.lang !== undefined ? `lang ${logSafe(r.lang)}` : null, r.version !== undefined ? `version ${logSafe(r.version)}` : null, r.kind]
      .filter((x) => x !== null)
      .join(', ');
    this.log(`client error ${id} (${about}): ${logSafe(r.message)}${stack ? ` stack: ${logSafe(stack)}` : ''}`);
    return id;
  }

  /** Says what was dropped in the minutes that are over (all of them with `all`: the server closes). */
  flush(all = false): void {
    this.sweep(all ? Number.POSITIVE_INFINITY : this.now());
  }

  /** The caller's minute; with the map full, one shared minute that logs nothing (`cap` 0). */
  private window(key: string, who: string, cap: number, now: number, always = false): RateWindow {
    let w = this.windows.get(key);
    if (w === undefined) {
      if (!always && this.windows.size >= CLIENT_ERROR_KEYS_MAX) return this.window('overflow', `more callers than ${CLIENT_ERROR_KEYS_MAX}`, 0, now, true);
      w = { startMs: now, logged: 0, dropped: 0, who, cap };
      this.windows.set(key, w);
    }
    return w;
  }

  private sweep(now: number): void {
    for (const [key, w] of this.windows) {
      // A clock set back ends the minute too: else a caller at its cap, and the map once full,
      // stayed so until the clock had caught up with the minute's start, an hour for an hour.
      if (now >= w.startMs && now - w.startMs < MINUTE_MS) continue;
      this.windows.delete(key);
      if (w.dropped > 0) this.log(`client errors: ${w.dropped} more from ${w.who} dropped (over the rate for a minute from ${new Date(w.startMs).toISOString()}; core/site DESIGN.md, "Errors the floor UI reports")`);
    }
  }
}
