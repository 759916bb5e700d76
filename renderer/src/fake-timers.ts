// Timers on a clock the test moves (`advance`), for the renderer's timer logic (idle.ts,
// search-load.ts): what is due runs in order of its time. Test support only.
import type { IdleTimers } from './idle.ts';

export function fakeTimers(): { timers: IdleTimers; advance: (ms: number) => void; pending: () => number } {
  let now = 0;
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
    now += ms;
    for (const [h, t] of [...pending].sort((a, b) => a[1].at - b[1].at)) {
      if (t.at <= now) {
        pending.delete(h);
        t.fn();
      }
    }
  };
  return { timers, advance, pending: () => pending.size };
}
