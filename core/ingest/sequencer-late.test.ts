// A late event of a range the gap policy skipped: told apart from an ordinary duplicate
// (CONTRACTS.md §4, "A late event after a skipped gap").
import { describe, expect, it } from 'vitest';
import { SKIPPED_RANGES_PER_STREAM, Sequencer } from './sequencer.ts';

function clock() {
  let now = 1_000_000;
  return { now_ms: () => now, advance: (ms: number) => (now += ms) };
}

describe('Sequencer: a late event after a skipped gap', () => {
  it('is `late` (with the range and when it was skipped) once; an applied seq stays a duplicate', () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms, reorder_window_ms: 1_000, resync_retry_ms: 1_000, gap_give_up_ms: 10_000 });
    expect(s.offer('m', 's', 1, 'a').kind).toBe('next');
    expect(s.offer('m', 's', 5, 'e').kind).toBe('gap');
    c.advance(10_000);
    const actions = s.tick(1_234_567);
    expect(actions).toMatchObject([{ type: 'skip', from: 2, to: 4 }]);
    expect(s.skipped('m', 's')).toEqual([{ from: 2, to: 4, atMs: 1_234_567 }]);
    expect(s.offer('m', 's', 1, 'a')).toEqual({ kind: 'duplicate', seq: 1 }); // applied
    expect(s.offer('m', 's', 5, 'e')).toEqual({ kind: 'duplicate', seq: 5 }); // applied by the skip
    expect(s.offer('m', 's', 3, 'c')).toEqual({ kind: 'late', seq: 3, skipped: { from: 2, to: 4, atMs: 1_234_567 } });
    // Its letter was made: a second copy is an ordinary duplicate; the rest of the range is still late.
    expect(s.offer('m', 's', 3, 'c')).toEqual({ kind: 'duplicate', seq: 3 });
    expect(s.skipped('m', 's')).toEqual([
      { from: 2, to: 2, atMs: 1_234_567 },
      { from: 4, to: 4, atMs: 1_234_567 },
    ]);
    expect(s.offer('m', 's', 4, 'd').kind).toBe('late');
    expect(s.offer('m', 's', 2, 'b').kind).toBe('late');
    expect(s.skipped('m', 's')).toEqual([]);
    // The stream's position did not move and later events go on.
    expect(s.state('m', 's')).toMatchObject({ issued: 5, held: [] });
    expect(s.offer('m', 's', 6, 'f').kind).toBe('next');
  });

  it('keeps at most SKIPPED_RANGES_PER_STREAM ranges per stream, the newest', () => {
    const c = clock();
    const s = new Sequencer<number>({ now_ms: c.now_ms, reorder_window_ms: 1_000, resync_retry_ms: 1_000, gap_give_up_ms: 10_000 });
    let seq = 0;
    for (let k = 0; k < SKIPPED_RANGES_PER_STREAM + 5; k++) {
      s.offer('m', 's', ++seq, seq);
      seq += 1; // missing
      s.offer('m', 's', ++seq, seq);
      c.advance(10_000);
      s.tick();
    }
    const ranges = s.skipped('m', 's');
    expect(ranges).toHaveLength(SKIPPED_RANGES_PER_STREAM);
    expect(ranges[0]!.from).toBe(2 + 3 * 5); // the 5 oldest forgotten
    expect(s.offer('m', 's', 2, 2).kind).toBe('duplicate');
    expect(s.offer('m', 's', 2 + 3 * 5, 0).kind).toBe('late');
  });

  it('keeps the bound when late seqs from the middle of a range split it', () => {
    const c = clock();
    const s = new Sequencer<number>({ now_ms: c.now_ms, reorder_window_ms: 1_000, resync_retry_ms: 1_000, gap_give_up_ms: 10_000 });
    s.offer('m', 's', 1, 1);
    s.offer('m', 's', 200, 200);
    c.advance(10_000);
    s.tick();
    expect(s.skipped('m', 's')).toEqual([{ from: 2, to: 199, atMs: 1_010_000 }]);
    // Every tenth seq, highest first: each splits the range again, and the lowest pieces past the
    // bound are forgotten (their seqs are then ordinary duplicates, as past the bound of skips).
    const kinds = [];
    for (let q = 190; q >= 10; q -= 10) kinds.push(s.offer('m', 's', q, q).kind);
    expect(kinds).toEqual([...Array<string>(16).fill('late'), 'duplicate', 'duplicate', 'duplicate']);
    expect(s.skipped('m', 's')).toHaveLength(SKIPPED_RANGES_PER_STREAM);
    expect(s.skipped('m', 's').at(-1)).toEqual({ from: 191, to: 199, atMs: 1_010_000 }); // the highest kept
  });

  it('restore keeps only what is at or below the restored position; restoreSkipped adds the committed ranges', () => {
    const s = new Sequencer<number>({ now_ms: () => 0 });
    s.restore('m', 's', 10);
    s.restoreSkipped('m', 's', [
      { from: 2, to: 3, atMs: 7 },
      { from: 8, to: 12, atMs: 9 },
      { from: 20, to: 30, atMs: 11 },
    ]);
    // Above 10 the events are not behind the position: they come again as next or gap.
    expect(s.skipped('m', 's')).toEqual([
      { from: 2, to: 3, atMs: 7 },
      { from: 8, to: 10, atMs: 9 },
    ]);
    expect(s.offer('m', 's', 9, 0)).toEqual({ kind: 'late', seq: 9, skipped: { from: 8, to: 10, atMs: 9 } });
    expect(s.offer('m', 's', 11, 0).kind).toBe('next');
    s.restore('m', 's', 2);
    expect(s.skipped('m', 's')).toEqual([{ from: 2, to: 2, atMs: 7 }]);
    expect(() => s.restoreSkipped('m', 's', [{ from: 3, to: 2, atMs: 0 }])).toThrow(RangeError);
  });
});
