// An event held far ahead of a stream that goes on in order is given up after
// far_ahead_give_up_ms from its own arrival (sequencer.ts header; CONTRACTS.md §4).
import { describe, expect, it } from 'vitest';
import { Sequencer } from './sequencer.ts';

function clock() {
  let now = 1_000_000;
  return { now_ms: () => now, advance: (ms: number) => (now += ms) };
}

const opts = { reorder_window_ms: 100, resync_retry_ms: 1_000, gap_give_up_ms: 5_000, far_ahead_give_up_ms: 15_000 };

describe('Sequencer: an event far ahead of its stream', () => {
  it('is given up (far_ahead) once held far_ahead_give_up_ms while the stream went on in order; its seq is not consumed', () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms, ...opts });
    s.offer('inv', 'stock', 1, 'a');
    s.offer('inv', 'stock', 999_999, 'far', 40);
    let seq = 1;
    for (let t = 50; t < 15_000; t += 50) {
      c.advance(50);
      s.offer('inv', 'stock', ++seq, `e${seq}`);
      expect(s.tick()).toEqual([]);
    }
    c.advance(50);
    s.offer('inv', 'stock', ++seq, `e${seq}`);
    expect(s.tick()).toEqual([{ type: 'far_ahead', module: 'inv', stream: 'stock', from: seq + 1, to: 999_998, given: { seq: 999_999, item: 'far' } }]);
    expect(s.state('inv', 'stock')).toEqual({ committed: 0, issued: seq, held: [] });
    expect(s.gap('inv', 'stock')).toBeNull();
    // The stream goes on; when it reaches the seq, its event of that seq is taken in its turn.
    expect(s.offer('inv', 'stock', seq + 1, 'next').kind).toBe('next');
    expect(s.offer('inv', 'stock', 999_999, 'again').kind).toBe('gap');
  });

  it('keeps the rest of the buffer: a lower held event that came after the stream last moved stays', () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms, ...opts, gap_give_up_ms: Infinity });
    s.offer('m', 's', 1, 'a');
    s.offer('m', 's', 500, 'far');
    c.advance(1_000);
    s.offer('m', 's', 2, 'b'); // progress after 500 arrived
    c.advance(13_999);
    s.offer('m', 's', 4, 'd'); // held, arrived after the last progress
    expect(s.tick().map((a) => a.type)).toEqual(['resync']); // 500 is 1 ms short of its bound
    c.advance(1);
    expect(s.tick()).toEqual([{ type: 'far_ahead', module: 'm', stream: 's', from: 3, to: 499, given: { seq: 500, item: 'far' } }]);
    // 4 came after the stream last moved: it waits for 3 (resync, then with Infinity for ever).
    c.advance(60_000);
    expect(s.tick().map((a) => a.type)).toEqual(['resync']);
    expect(s.state('m', 's').held).toEqual([4]);
    expect(s.gap('m', 's')).toMatchObject({ from: 3, to: 3 });
  });

  it('never gives up a held event of a stream that has not moved since it arrived (an ordinary gap: resync, then the skip)', () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms, ...opts, gap_give_up_ms: Infinity });
    s.offer('m', 's', 1, 'a');
    s.offer('m', 's', 3, 'c');
    for (let k = 0; k < 100; k++) {
      c.advance(1_000);
      for (const a of s.tick()) expect(a.type).toBe('resync');
    }
    expect(s.state('m', 's').held).toEqual([3]);
    expect(s.offer('m', 's', 2, 'b')).toMatchObject({ kind: 'next', ready: [{ seq: 2 }, { seq: 3 }] });
  });

  it('validates far_ahead_give_up_ms: an integer ≥ reorder_window_ms, not Infinity (the journal would stay pinned)', () => {
    expect(() => new Sequencer({ now_ms: () => 0, far_ahead_give_up_ms: Infinity })).toThrow(/far_ahead_give_up_ms: expected an integer ≥ 1, got Infinity/);
    expect(() => new Sequencer({ now_ms: () => 0, far_ahead_give_up_ms: 1.5 })).toThrow(/far_ahead_give_up_ms: expected an integer ≥ 1, got 1.5/);
    expect(() => new Sequencer({ now_ms: () => 0, reorder_window_ms: 10, far_ahead_give_up_ms: 5 })).toThrow(/far_ahead_give_up_ms: expected ≥ reorder_window_ms \(10\), got 5/);
  });
});
