// The floor UI's idle sign-out (idle.ts): the wait starts at once, each touch, click, key or
// pointer movement starts it again, it fires once, and stopping removes every listener; the input
// age every call carries (trackInput).
import { describe, expect, it, vi } from 'vitest';
import { fakeTimers } from './testing/fake-timers.ts';
import { ACTIVITY_EVENTS, IDLE_CHECK_MS, trackInput, watchIdle } from './idle.ts';

function fakes() {
  const { timers, advance, pending, clocks, sleep } = fakeTimers();
  const target = new EventTarget();
  let listeners = 0;
  const counted = {
    addEventListener: (type: string, fn: EventListenerOrEventListenerObject, o?: AddEventListenerOptions | boolean) => {
      listeners++;
      target.addEventListener(type, fn, o);
    },
    removeEventListener: (type: string, fn: EventListenerOrEventListenerObject, o?: EventListenerOptions | boolean) => {
      listeners--;
      target.removeEventListener(type, fn, o);
    },
  };
  return { timers, advance, target, counted, listeners: () => listeners, pending, clocks, sleep };
}

describe('watchIdle', () => {
  it('fires once after the idle time without activity', () => {
    const f = fakes();
    let fired = 0;
    watchIdle(f.counted, 600_000, () => fired++, f.timers, f.clocks);
    f.advance(599_999);
    expect(fired).toBe(0);
    f.advance(1);
    expect(fired).toBe(1);
    f.advance(10 * 600_000);
    expect(fired).toBe(1);
    expect(f.listeners()).toBe(0); // it stops watching once it fired
  });

  it('starts the wait again on every kind of activity', () => {
    for (const type of ACTIVITY_EVENTS) {
      const f = fakes();
      let fired = 0;
      watchIdle(f.counted, 600_000, () => fired++, f.timers, f.clocks);
      f.advance(500_000);
      f.target.dispatchEvent(new Event(type));
      f.advance(500_000);
      expect(fired, type).toBe(0);
      f.advance(100_000);
      expect(fired, type).toBe(1);
    }
  });

  it('ignores what is not someone at the screen, and stops cleanly', () => {
    const f = fakes();
    let fired = 0;
    const stop = watchIdle(f.counted, 600_000, () => fired++, f.timers, f.clocks);
    expect(f.listeners()).toBe(ACTIVITY_EVENTS.length);
    f.advance(500_000);
    f.target.dispatchEvent(new Event('focus'));
    f.target.dispatchEvent(new Event('message'));
    f.advance(100_000);
    expect(fired).toBe(1);
    const g = fakes();
    const stopG = watchIdle(g.counted, 600_000, () => fired++, g.timers, g.clocks);
    stopG();
    stopG();
    expect(g.listeners()).toBe(0);
    expect(g.pending()).toBe(0);
    g.advance(10 * 600_000);
    expect(fired).toBe(1);
    stop();
  });
});

// A floor PC suspended (Linux): the monotonic clock, and chromium's timers with it, stand still
// while it sleeps, the wall clock does not. One timer of the idle limit on that clock left the
// person signed in on the page after a night asleep, until its next call to the site; the key or
// mouse that woke the PC even started the wait again.
describe('watchIdle after the PC slept', () => {
  const HOUR = 3_600_000;
  it('a night asleep past the limit: signed out at the first look after the resume', () => {
    const f = fakes();
    let fired = 0;
    watchIdle(f.counted, 600_000, () => fired++, f.timers, f.clocks);
    f.advance(120_000);
    f.target.dispatchEvent(new Event('pointerdown'));
    f.advance(60_000);
    f.sleep(10 * HOUR);
    expect(fired).toBe(0);
    f.advance(IDLE_CHECK_MS);
    expect(fired).toBe(1);
    expect(f.listeners()).toBe(0);
    expect(f.pending()).toBe(0);
  });

  it('the key or mouse that wakes it is the next person at the screen: it signs out, it does not start the wait again', () => {
    const f = fakes();
    let fired = 0;
    watchIdle(f.counted, 600_000, () => fired++, f.timers, f.clocks);
    f.advance(30_000);
    f.sleep(10 * HOUR);
    f.target.dispatchEvent(new Event('pointermove'));
    expect(fired).toBe(1);
    f.target.dispatchEvent(new Event('keydown'));
    f.advance(10 * 600_000);
    expect(fired).toBe(1);
  });

  it('a shorter sleep counts toward the limit; a wall clock set back adds nothing', () => {
    const f = fakes();
    let fired = 0;
    watchIdle(f.counted, 600_000, () => fired++, f.timers, f.clocks);
    f.advance(60_000);
    f.sleep(8 * 60_000);
    f.advance(59_000);
    expect(fired).toBe(0);
    f.advance(1_000);
    expect(fired).toBe(1);
    const g = fakes();
    watchIdle(g.counted, 600_000, () => fired++, g.timers, g.clocks);
    g.advance(60_000);
    g.sleep(-HOUR); // the PC's clock set back an hour: the limit still comes after 10 minutes of use
    g.advance(539_000);
    expect(fired).toBe(1);
    g.advance(1_000);
    expect(fired).toBe(2);
  });
});

describe('trackInput', () => {
  it('says null until someone uses the page, then how long ago they last did', () => {
    const target = new EventTarget();
    let now = 1_000_000;
    const age = trackInput(target, () => now);
    expect(age()).toBeNull();
    target.dispatchEvent(new Event('focus')); // not someone at the screen
    now += 5_000;
    expect(age()).toBeNull();
    for (const type of ACTIVITY_EVENTS) {
      target.dispatchEvent(new Event(type));
      now += 250;
      expect(age(), type).toBe(250);
    }
    now += 60_000;
    expect(age()).toBe(60_250);
  });

  it('measures on the monotonic clock: the PC clock set back or ahead changes no age', () => {
    const target = new EventTarget();
    let mono = 1_000;
    let wall = Date.UTC(2026, 11, 4, 9, 0);
    const perf = vi.spyOn(performance, 'now').mockImplementation(() => mono);
    const date = vi.spyOn(Date, 'now').mockImplementation(() => wall);
    try {
      const age = trackInput(target);
      target.dispatchEvent(new Event('keydown'));
      mono += 5_000;
      wall -= 3_600_000; // five seconds later the PC's clock is set back an hour
      expect(age()).toBe(5_000);
      target.dispatchEvent(new Event('pointerdown'));
      mono += 2_000;
      wall += 2 * 3_600_000; // and then an hour ahead of where it was: not "input an hour ago"
      expect(age()).toBe(2_000);
    } finally {
      perf.mockRestore();
      date.mockRestore();
    }
  });
});

