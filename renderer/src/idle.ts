// Sign-out after a while without use: a floor PC is shared, and whoever steps up to a screen left
// signed in would decide under the name shown there. Background refreshes are requests too, so
// only the person's own input counts: `watchIdle` signs out here, and `trackInput` tells the
// backend with every call how long ago that input was (core/site/api.ts InputAge), so the backend
// signs out a page that was closed, reloaded or kept from running its timer.

/** What counts as someone using the screen. */
export const ACTIVITY_EVENTS = ['pointerdown', 'pointermove', 'keydown', 'wheel', 'touchstart'] as const;

export interface IdleTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The page's own timers (tests hand in fake-timers.ts's instead). */
export const GLOBAL_TIMERS: IdleTimers = { setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms), clearTimeout: (h) => globalThis.clearTimeout(h as number) };

/**
 * Calls `onIdle` once when `idleMs` pass without any of `ACTIVITY_EVENTS` on `target` (the window);
 * each such event starts the wait again. Returns the function that stops watching.
 */
export function watchIdle(
  target: Pick<EventTarget, 'addEventListener' | 'removeEventListener'>,
  idleMs: number,
  onIdle: () => void,
  timers: IdleTimers = GLOBAL_TIMERS,
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

/**
 * Follows `ACTIVITY_EVENTS` on `target` (the window) for the page's life; returns how many ms ago
 * the last one was, or null before the first (a page just opened or reloaded has seen nobody).
 * `now` is a monotonic clock (performance.now): the PC's clock set back or ahead (by hand, by NTP)
 * must not make old input look new, nor new input old.
 */
export function trackInput(target: Pick<EventTarget, 'addEventListener'>, now: () => number = () => performance.now()): () => number | null {
  let last: number | null = null;
  const seen = () => {
    last = now();
  };
  for (const e of ACTIVITY_EVENTS) target.addEventListener(e, seen, { capture: true, passive: true });
  return () => (last === null ? null : Math.max(0, Math.round(now() - last)));
}
