// Sign-out after a while without use: a floor PC is shared, and whoever steps up to a screen left
// signed in would decide under the name shown there. Background refreshes keep the server's
// session alive (ui-server.ts counts requests), so only the person's own input counts here.

/** What counts as someone using the screen. */
export const ACTIVITY_EVENTS = ['pointerdown', 'pointermove', 'keydown', 'wheel', 'touchstart'] as const;

export interface IdleTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * Calls `onIdle` once when `idleMs` pass without any of `ACTIVITY_EVENTS` on `target` (the window);
 * each such event starts the wait again. Returns the function that stops watching.
 */
export function watchIdle(
  target: Pick<EventTarget, 'addEventListener' | 'removeEventListener'>,
  idleMs: number,
  onIdle: () => void,
  timers: IdleTimers = { setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms), clearTimeout: (h) => globalThis.clearTimeout(h as number) },
): () => void {
  let handle: unknown;
  let stopped = false;
  const arm = () => {
    if (stopped) return;
    if (handle !== undefined) timers.clearTimeout(handle);
    handle = timers.setTimeout(() => {
      handle = undefined;
      stop();
      onIdle();
    }, idleMs);
  };
  const stop = () => {
    if (stopped) return;
    stopped = true;
    if (handle !== undefined) timers.clearTimeout(handle);
    for (const e of ACTIVITY_EVENTS) target.removeEventListener(e, arm, true);
  };
  for (const e of ACTIVITY_EVENTS) target.addEventListener(e, arm, { capture: true, passive: true });
  arm();
  return stop;
}
