import { describe, expect, it } from 'vitest';
import { DuplicateWatch } from './duplicate-watch.ts';

describe('DuplicateWatch', () => {
  const o = { minMoments: 5, minSpanMs: 1_000, quietMs: 10_000 };

  it('reports a stream only after duplicates at enough moments over long enough, with nothing new between them', () => {
    const w = new DuplicateWatch(o);
    for (let b = 0; b < 4; b++) for (let k = 0; k < 50; k++) w.duplicate('m', 's', k, 100, b * 2_000 + k); // 4 resend bursts
    expect(w.stuck(6_100)).toEqual([]); // many events, long enough, but 4 moments
    w.duplicate('m', 's', 60, 100, 7_000);
    expect(w.stuck(7_000)).toEqual([{ module: 'm', stream: 's', count: 201, firstMs: 0, lastMs: 7_000, spanMs: 7_000, lowSeq: 0, highSeq: 60, issued: 100 }]);
    w.progress('m', 's');
    expect(w.stuck(1_200)).toEqual([]);
  });

  it('forgets a run once its duplicates stop for quietMs, and starts a new one after', () => {
    const w = new DuplicateWatch(o);
    for (let k = 0; k < 5; k++) w.duplicate('m', 's', k, 10, k * 1_000);
    expect(w.stuck(4_000)).toHaveLength(1);
    expect(w.stuck(4_000 + 10_000)).toEqual([]);
    w.duplicate('m', 's', 7, 10, 20_000);
    expect(w.stuck(20_000)).toEqual([]); // a new run of one
  });

  it('counts its windows on the clock it is given for durations, and reports the wall times', () => {
    const w = new DuplicateWatch(o);
    const WALL = 1_700_000_000_000;
    // The wall clock steps forward an hour after the first duplicate; the monotonic one runs on.
    for (let k = 0; k < 5; k++) w.duplicate('m', 's', k, 10, k * 1_000, WALL + k * 1_000 + (k > 0 ? 3_600_000 : 0));
    expect(w.stuck(4_000)).toEqual([{ module: 'm', stream: 's', count: 5, firstMs: WALL, lastMs: WALL + 3_604_000, spanMs: 4_000, lowSeq: 0, highSeq: 4, issued: 10 }]);
    expect(w.stuck(4_000 + 9_999)).toHaveLength(1);
    expect(w.stuck(4_000 + 10_000)).toEqual([]);
  });

  it('keeps streams apart', () => {
    const w = new DuplicateWatch(o);
    for (let k = 0; k < 5; k++) w.duplicate('m', 'a', k, 10, k * 1_000);
    for (let k = 0; k < 5; k++) w.duplicate('m', 'b', k, 10, k * 1_000);
    w.progress('m', 'b');
    expect(w.stuck(4_000).map((r) => r.stream)).toEqual(['a']);
  });
});
