// A search screen's requests (search-load.ts): the first at once when the screen opens, later
// ones a quarter second after the last change, a change within it starting the wait again, and
// nothing after the screen closed.
import { describe, expect, it } from 'vitest';
import { fakeTimers } from './testing/fake-timers.ts';
import { SEARCH_DEBOUNCE_MS, searchLoader } from './search-load.ts';

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
    expect(pending()).toBe(0);
  });
});
