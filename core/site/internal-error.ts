// What a client is told of a failure nobody foresaw, and what the site's log keeps of it.
//
// An unexpected error's message can hold what no browser should see: a file's path inside the
// data directory, a decoder's view of a damaged file, a stack fragment. Such a failure answers a
// generic text with a short id; the log line (logs/site.log) carries the same id and the whole
// error, so the person who reads the id off the screen finds the details.

import { randomBytes } from 'node:crypto';

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
