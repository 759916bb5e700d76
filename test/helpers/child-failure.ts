// Test helper: a child process's 'error' event as a clear failure of the test that started it.
//
// Node reports a child it could not start (a missing binary: ENOENT; one that is not executable:
// EACCES; a script whose interpreter is missing: ENOENT) with an 'error' event, not a throw from
// spawn(). With no listener that event is an uncaught exception: vitest reports it as an unhandled
// error outside any test, which fails the run, while the test that asked for the child waits for
// its own timeout and then fails on something else ("timed out waiting for …", "exited with -2").
// `childFailure` listens from the start and gives the failure to that test instead, naming what
// was started and where: "could not start mosquitto at /usr/sbin/mosquitto: ENOENT".

import type { ChildProcess } from 'node:child_process';

/** A child's 'error' event as an error of the test: `could not start <what>: <code>`, or `<what> failed: …` once it ran. */
export class ChildFailure extends Error {
  /** Whether the child had started (its 'spawn' event) when the error came: false for a binary that could not be run. */
  readonly started: boolean;
  constructor(what: string, started: boolean, cause: NodeJS.ErrnoException) {
    super(started ? `${what} failed: ${cause.message}` : `could not start ${what}: ${cause.code ?? cause.message}`, { cause });
    this.name = 'ChildFailure';
    this.started = started;
  }
}

export interface WatchedChild {
  /** Rejects with the child's first 'error' as a ChildFailure; pending while there is none. Unobserved, it is no unhandled rejection. */
  failed: Promise<never>;
  /** That failure once there is one, for a test that polls (throw it from the poll). */
  error(): ChildFailure | undefined;
}

/**
 * Listens to `child`'s 'error' event (call it right after spawn(), in the same tick): the first
 * error becomes a ChildFailure naming `what` (e.g. `mosquitto at /usr/sbin/mosquitto`), which
 * `failed` rejects with and `error()` returns; later ones are dropped.
 */
export function childFailure(child: ChildProcess, what: string): WatchedChild {
  let started = false;
  let error: ChildFailure | undefined;
  let reject!: (e: ChildFailure) => void;
  const failed = new Promise<never>((_, r) => (reject = r));
  failed.catch(() => undefined);
  child.once('spawn', () => (started = true));
  child.on('error', (e: NodeJS.ErrnoException) => {
    if (error) return;
    error = new ChildFailure(what, started, e);
    reject(error);
  });
  return { failed, error: () => error };
}
