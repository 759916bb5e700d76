import { describe, expect, it } from 'vitest';
import { Sequencer } from './sequencer.ts';
import { mulberry32 as rng } from '../lsm/testing/prng.ts';

// `takeNext` is `offer`'s common case without its result objects (the Ingestor's per-event path):
// a stream driven through takeNext-then-offer must end every step exactly as one driven by offer.
describe('Sequencer.takeNext', () => {
  it('answers true only for the next seq with nothing held, and leaves the stream as offer would', () => {
    const seed = Date.now() >>> 0;
    console.log(`sequencer-take-next seed ${seed}`);
    const r = rng(seed);
    let now = 0;
    const o = { now_ms: () => now, reorder_buffer_max: 8, gap_give_up_ms: 50, reorder_window_ms: 10, far_ahead_give_up_ms: 100 };
    const a = new Sequencer<number>(o);
    const b = new Sequencer<number>(o);
    let top = 0;
    for (let i = 0; i < 5_000; i++) {
      const stream = r() < 0.5 ? 's1' : 's2';
      const x = r();
      const seq = x < 0.7 ? a.state('m', stream).issued + 1 : x < 0.85 ? Math.floor(r() * (top + 10)) + 1 : a.state('m', stream).issued + 2 + Math.floor(r() * 12);
      top = Math.max(top, seq);
      const viaOffer = b.offer('m', stream, seq, i);
      const held = a.state('m', stream).held.length > 0;
      const next = seq === a.state('m', stream).issued + 1;
      if (a.takeNext('m', stream, seq)) {
        expect(next && !held).toBe(true);
        expect(viaOffer).toEqual({ kind: 'next', ready: [{ seq, item: i }] });
      } else {
        expect(next && !held).toBe(false);
        expect(a.offer('m', stream, seq, i)).toEqual(viaOffer);
      }
      expect(a.state('m', stream)).toEqual(b.state('m', stream));
      if (r() < 0.05) {
        now += Math.floor(r() * 60);
        expect(a.tick(now)).toEqual(b.tick(now));
      }
    }
  });

  it('refuses a seq past the safe integers (offer throws for it) and a stream holding events', () => {
    const s = new Sequencer<number>({ now_ms: () => 0 });
    s.restore('m', 's', Number.MAX_SAFE_INTEGER);
    expect(s.takeNext('m', 's', Number.MAX_SAFE_INTEGER + 1)).toBe(false);
    const t = new Sequencer<number>({ now_ms: () => 0 });
    expect(t.offer('m', 's', 3, 3).kind).toBe('gap');
    expect(t.takeNext('m', 's', 1)).toBe(false);
    expect(t.offer('m', 's', 1, 1).kind).toBe('next');
    expect(t.takeNext('m', 's', 2)).toBe(false); // 2 releases the held 3: offer's run, not takeNext's
    expect(t.offer('m', 's', 2, 2)).toEqual({ kind: 'next', ready: [{ seq: 2, item: 2 }, { seq: 3, item: 3 }] });
    expect(t.takeNext('m', 's', 4)).toBe(true);
    expect(t.state('m', 's')).toEqual({ committed: 0, issued: 4, held: [] });
  });
});
