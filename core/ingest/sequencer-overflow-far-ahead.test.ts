// An event held far ahead of its stream is the highest held, so the first a full reorder buffer
// drops, and the resync's resend never brings a seq the module has not reached: `overflow` marks
// each dropped event the stream went on in order below since it arrived (`farAhead`), for the
// caller's dead letter (sequencer.ts header; CONTRACTS.md §4, "An event far ahead of its stream").
import { describe, expect, it } from 'vitest';
import { Sequencer } from './sequencer.ts';

function clock() {
  let now = 1_000_000;
  return { now_ms: () => now, advance: (ms: number) => (now += ms) };
}

const opts = { reorder_window_ms: 100, resync_retry_ms: 1_000, gap_give_up_ms: 5_000, far_ahead_give_up_ms: 15_000, reorder_buffer_max: 4 };

describe('Sequencer: overflow of a buffer holding an event far ahead', () => {
  it('marks the dropped event the stream went on in order below since it arrived; the early ones it drops after are not marked', () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms, ...opts });
    for (let seq = 1; seq <= 10; seq++) s.offer('inv', 'stock', seq, `e${seq}`);
    c.advance(10);
    expect(s.offer('inv', 'stock', 1_000_000, 'far').kind).toBe('gap');
    c.advance(10);
    expect(s.offer('inv', 'stock', 11, 'e11')).toMatchObject({ kind: 'next', ready: [{ seq: 11 }] });
    expect(s.offer('inv', 'stock', 12, 'e12')).toMatchObject({ kind: 'next', ready: [{ seq: 12 }] });
    // 13 is lost; 14.. come early and fill the buffer.
    for (const seq of [14, 15, 16]) expect(s.offer('inv', 'stock', seq, `e${seq}`).kind).toBe('gap');
    expect(s.offer('inv', 'stock', 17, 'e17')).toEqual({
      kind: 'overflow',
      seq: 17,
      dropped: [{ seq: 1_000_000, item: 'far', farAhead: true }],
      resync: { module: 'inv', stream: 'stock', from: 13, to: 13 },
    });
    // An early event dropped (here the one arriving) is not marked: the resend brings it.
    expect(s.offer('inv', 'stock', 18, 'e18')).toEqual({ kind: 'overflow', seq: 18, dropped: [{ seq: 18, item: 'e18' }], resync: { module: 'inv', stream: 'stock', from: 13, to: 13 } });
    expect(s.state('inv', 'stock').held).toEqual([14, 15, 16, 17]);
    // The resend: 13 releases the held run, 18 comes in its turn.
    expect(s.offer('inv', 'stock', 13, 'e13')).toMatchObject({ kind: 'next', ready: [{ seq: 13 }, { seq: 14 }, { seq: 15 }, { seq: 16 }, { seq: 17 }] });
    expect(s.offer('inv', 'stock', 18, 'e18')).toMatchObject({ kind: 'next', ready: [{ seq: 18 }] });
  });

  it('does not mark an early event held while the stream has not moved in order since (an ordinary gap)', () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms, ...opts });
    s.offer('m', 's', 1, 'a');
    s.offer('m', 's', 500, 'high');
    c.advance(50);
    for (const seq of [3, 4, 5]) s.offer('m', 's', seq, `e${seq}`);
    expect(s.offer('m', 's', 6, 'e6')).toEqual({ kind: 'overflow', seq: 6, dropped: [{ seq: 500, item: 'high' }], resync: { module: 'm', stream: 's', from: 2, to: 2 } });
  });

  it('orders arrival and progress by the offers, not by their times: the same ms (a burst, the journal read at open) still counts', () => {
    const c = clock(); // never advanced
    const s = new Sequencer<string>({ now_ms: c.now_ms, ...opts });
    s.offer('m', 's', 1, 'a');
    s.offer('m', 's', 1_000, 'far');
    s.offer('m', 's', 2, 'b'); // in order, after 1,000 arrived, in the same ms
    for (const seq of [4, 5, 6]) s.offer('m', 's', seq, `e${seq}`);
    expect(s.offer('m', 's', 7, 'e7')).toMatchObject({ kind: 'overflow', dropped: [{ seq: 1_000, item: 'far', farAhead: true }] });
  });

  it("tick's far_ahead uses the same order: an in-order arrival in the ms of the held event's own counts as the stream going on", () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms, ...opts, gap_give_up_ms: Infinity });
    s.offer('m', 's', 1, 'a');
    s.offer('m', 's', 1_000, 'far');
    s.offer('m', 's', 2, 'b'); // the same ms; the stream then falls silent
    c.advance(15_000);
    expect(s.tick()).toEqual([{ type: 'far_ahead', module: 'm', stream: 's', from: 3, to: 999, given: { seq: 1_000, item: 'far' } }]);
    expect(s.state('m', 's').held).toEqual([]);
  });

  it('does not take a skip for the stream going on in order: an event held across a skip and dropped after it is not marked', () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms, ...opts });
    s.offer('m', 's', 1, 'a');
    s.offer('m', 's', 3, 'c');
    s.offer('m', 's', 100, 'high');
    c.advance(5_000);
    expect(s.tick()).toMatchObject([{ type: 'skip', from: 2, to: 2, ready: [{ seq: 3 }] }]);
    expect(s.state('m', 's')).toMatchObject({ issued: 3, held: [100] });
    for (const seq of [6, 7, 8]) s.offer('m', 's', seq, `e${seq}`);
    expect(s.offer('m', 's', 9, 'e9')).toEqual({ kind: 'overflow', seq: 9, dropped: [{ seq: 100, item: 'high' }], resync: { module: 'm', stream: 's', from: 4, to: 5 } });
  });

  it('a duplicate at or below the restored position, said by the read at open to have come in order (wentOnBelow), counts as the stream going on', () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms, ...opts });
    s.restore('m', 's', 20); // a restart: the stream's progress is forgotten
    expect(s.offer('m', 's', 1_000, 'far').kind).toBe('gap');
    expect(s.offer('m', 's', 15, 'e15').kind).toBe('duplicate');
    s.wentOnBelow('m', 's', 15);
    for (const seq of [22, 23, 24]) s.offer('m', 's', seq, `e${seq}`);
    expect(s.offer('m', 's', 25, 'e25')).toMatchObject({ kind: 'overflow', dropped: [{ seq: 1_000, item: 'far', farAhead: true }] });
  });

  it('wentOnBelow marks nothing for a seq above the restored position (a copy of one this run took)', () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms, ...opts });
    s.restore('m', 's', 20);
    expect(s.offer('m', 's', 21, 'e21').kind).toBe('next'); // nothing held: no progress to mark
    s.offer('m', 's', 1_000, 'far');
    expect(s.offer('m', 's', 21, 'e21').kind).toBe('duplicate'); // taken in this run: a copy
    s.wentOnBelow('m', 's', 21);
    for (const seq of [23, 24, 25]) s.offer('m', 's', seq, `e${seq}`);
    expect(s.offer('m', 's', 26, 'e26')).toEqual({ kind: 'overflow', seq: 26, dropped: [{ seq: 1_000, item: 'far' }], resync: { module: 'm', stream: 's', from: 22, to: 22 } });
  });

  it('a far event that arrives when the buffer is full is dropped as itself, unmarked (a known limit: nothing went on below it yet)', () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms, ...opts });
    s.offer('m', 's', 1, 'a');
    for (const seq of [3, 4, 5, 6]) s.offer('m', 's', seq, `e${seq}`);
    expect(s.offer('m', 's', 1_000, 'far')).toEqual({ kind: 'overflow', seq: 1_000, dropped: [{ seq: 1_000, item: 'far' }], resync: { module: 'm', stream: 's', from: 2, to: 2 } });
  });
});
