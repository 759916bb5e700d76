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

/** The page's own timers (tests hand in testing/fake-timers.ts's instead). */
export const GLOBAL_TIMERS: IdleTimers = { setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms), clearTimeout: (h) => globalThis.clearTimeout(h as number) };

/** The page's clocks the idle time is judged by (tests hand in their own). */
export interface IdleClocks {
  /** Monotonic (performance.now): stands still while a Linux PC is suspended (CLOCK_MONOTONIC). */
  mono(): number;
  /** The PC's wall clock (Date.now): goes on while it sleeps. */
  wall(): number;
}
export const GLOBAL_CLOCKS: IdleClocks = { mono: () => globalThis.performance.now(), wall: () => Date.now() };

/** How often `watchIdle` looks at the clock: a PC woken after the limit shows the sign-in screen within this. */
export const IDLE_CHECK_MS = 1_000;

/**
 * A screen's time, as the site keeps it (core/site service.ts `screenNow`): the wall clock, but
 * never behind the time run on the monotonic clock since the last reading. A PC asleep counts (its
 * monotonic clock, and chromium's timers with it, stand still meanwhile), a wall clock set back
 * adds nothing, one set forward counts (signs out early, as the site does).
 */
export function screenClock(clocks: IdleClocks = GLOBAL_CLOCKS): () => number {
  let last: { atMs: number; monoMs: number } | undefined;
  return () => {
    const wall = clocks.wall();
    const mono = clocks.mono();
    const at = last === undefined ? wall : Math.max(wall, last.atMs + (mono - last.monoMs));
    last = { atMs: at, monoMs: mono };
    return at;
  };
}

/**
 * Calls `onIdle` once when `idleMs` pass without any of `ACTIVITY_EVENTS` on `target` (the window);
 * each such event starts the wait again. Returns the function that stops watching.
 *
 * The time is `screenClock`'s, looked at every IDLE_CHECK_MS: one timer of `idleMs` ran on the
 * monotonic clock, so a PC suspended overnight woke with the person still signed in on the page
 * (the site, which counts the sleep, signed them out only at the page's next call, up to 30 s
 * later). Input that comes after the limit has run out (the key or mouse that wakes the PC) is the
 * next person's, as at the site: it signs out, it does not start the wait again.
 */
export function watchIdle(
  target: Pick<EventTarget, 'addEventListener' | 'removeEventListener'>,
  idleMs: number,
  onIdle: () => void,
  timers: IdleTimers = GLOBAL_TIMERS,
  clocks: IdleClocks = GLOBAL_CLOCKS,
): () => void {
  const now = screenClock(clocks);
  let lastInputMs = now();
  let handle: unknown;
  let stopped = false;
  const fire = () => {
    stop();
    onIdle();
  };
  const check = () => {
    handle = undefined;
    if (stopped) return;
    const left = idleMs - (now() - lastInputMs);
    if (left <= 0) return fire();
    handle = timers.setTimeout(check, Math.min(left, IDLE_CHECK_MS));
  };
  const seen = () => {
    if (stopped) return;
    const at = now();
    if (at - lastInputMs >= idleMs) return fire();
    lastInputMs = at;
  };
  const stop = () => {
    if (stopped) return;
    stopped = true;
    if (handle !== undefined) timers.clearTimeout(handle);
    handle = undefined;
    for (const e of ACTIVITY_EVENTS) target.removeEventListener(e, seen, true);
  };
  for (const e of ACTIVITY_EVENTS) target.addEventListener(e, seen, { capture: true, passive: true });
  check();
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
