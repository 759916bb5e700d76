// Timers on a clock the test moves (`advance`), for the renderer's timer logic (idle.ts,
// search-load.ts): what is due runs in order of its time, a timer set by one that ran included
// (idle.ts looks at the clock every second), each run with the clock at its time. `clocks` read
// that clock (idle.ts IdleClocks): `mono` is it, `wall` it plus `slept` (a PC suspended: the wall
// clock goes on, the monotonic clock and the timers do not). Only tests import this file (a
// `testing/` folder: scripts/check-imports.mjs `TEST_ONLY`).
import type { IdleClocks, IdleTimers } from '../idle.ts';

export const FAKE_WALL_START = Date.UTC(2026, 11, 7, 8, 0);

export function fakeTimers(): {
  timers: IdleTimers;
  advance: (ms: number) => void;
  pending: () => number;
  clocks: IdleClocks;
  /** The PC suspended for `ms`: the wall clock moves, no timer runs (advance then runs what is due). */
  sleep: (ms: number) => void;
} {
  let now = 0;
  let slept = 0;
  const pending = new Map<number, { at: number; fn: () => void }>();
  let next = 1;
  const timers: IdleTimers = {
    setTimeout: (fn, ms) => {
      pending.set(next, { at: now + ms, fn });
      return next++;
    },
    clearTimeout: (h) => void pending.delete(h as number),
  };
  const advance = (ms: number) => {
    const to = now + ms;
    for (;;) {
      let due: [number, { at: number; fn: () => void }] | undefined;
      for (const e of pending) if (e[1].at <= to && (due === undefined || e[1].at < due[1].at)) due = e;
      if (due === undefined) break;
      pending.delete(due[0]);
      now = Math.max(now, due[1].at);
      due[1].fn();
    }
    now = to;
  };
  const clocks: IdleClocks = { mono: () => now, wall: () => FAKE_WALL_START + now + slept };
  return { timers, advance, pending: () => pending.size, clocks, sleep: (ms) => void (slept += ms) };
}
