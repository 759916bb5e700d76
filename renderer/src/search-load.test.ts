// A search screen's requests (search-load.ts): the first at once when the screen opens, later
// ones a quarter second after the last change, a change within it starting the wait again, and
// nothing after the screen closed.
import { describe, expect, it } from 'vitest';
import type { IdleTimers } from './idle.ts';
import { SEARCH_DEBOUNCE_MS, searchLoader } from './search-load.ts';

function fakeTimers() {
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
  return { timers, advance, pending };
}

describe('searchLoader', () => {
  it('asks at once when the screen opens, and a quarter second after the last keystroke after that', () => {
    const { timers, advance } = fakeTimers();
    const asked: string[] = [];
    const l = searchLoader(timers);
    l.changed(() => asked.push(''));
    expect(asked).toEqual(['']); // no wait on opening
    l.changed(() => asked.push('a'));
    advance(SEARCH_DEBOUNCE_MS - 1);
    l.changed(() => asked.push('ab')); // typed again within the wait: it starts over
    advance(SEARCH_DEBOUNCE_MS - 1);
    expect(asked).toEqual(['']);
    advance(1);
    expect(asked).toEqual(['', 'ab']);
  });

  it('asks nothing after the screen closed', () => {
    const { timers, advance, pending } = fakeTimers();
    const asked: string[] = [];
    const l = searchLoader(timers);
    l.changed(() => asked.push(''));
    l.changed(() => asked.push('x'));
    l.cancel();
    advance(SEARCH_DEBOUNCE_MS * 2);
    expect(asked).toEqual(['']);
    expect(pending.size).toBe(0);
  });
});
