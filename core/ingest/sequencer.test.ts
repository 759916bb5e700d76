import { describe, expect, it } from 'vitest';
import { Sequencer, type Offer, type Ready, type TickAction } from './sequencer.ts';
import { mulberry32 as rng } from '../lsm/testing/prng.ts';

const SEED = Number(process.env.SEQUENCER_SEED ?? Math.floor(Math.random() * 2 ** 31));
console.log(`sequencer randomized tests: seed ${SEED} (rerun with SEQUENCER_SEED=${SEED})`);

function clock() {
  let now = 1_000_000;
  return { now_ms: () => now, advance: (ms: number) => (now += ms) };
}

const readyOf = <T>(o: Offer<T>): readonly Ready<T>[] => (o.kind === 'next' ? o.ready : []);

describe('Sequencer: classification', () => {
  it('classifies next, gap, duplicate and drains held successors in order', () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms });
    s.restore('inventory', 'stock', 10);
    expect(s.offer('inventory', 'stock', 10, 'x')).toEqual({ kind: 'duplicate', seq: 10 });
    expect(s.offer('inventory', 'stock', 13, 'c')).toMatchObject({ kind: 'gap', seq: 13, missing: { from: 11, to: 12 } });
    expect(s.offer('inventory', 'stock', 13, 'c')).toEqual({ kind: 'duplicate', seq: 13 }); // already held
    expect(s.offer('inventory', 'stock', 12, 'b')).toMatchObject({ kind: 'gap', missing: { from: 11, to: 11 } });
    expect(s.offer('inventory', 'stock', 11, 'a')).toEqual({
      kind: 'next',
      ready: [
        { seq: 11, item: 'a' },
        { seq: 12, item: 'b' },
        { seq: 13, item: 'c' },
      ],
    });
    expect(s.offer('inventory', 'stock', 12, 'b')).toEqual({ kind: 'duplicate', seq: 12 }); // pending, not committed
    expect(s.state('inventory', 'stock')).toEqual({ committed: 10, issued: 13, held: [] });
    s.commit('inventory', 'stock', 13);
    expect(s.state('inventory', 'stock').committed).toBe(13);
  });

  it('keeps streams apart', () => {
    const s = new Sequencer<number>({ now_ms: () => 0 });
    expect(s.offer('a', 'x', 1, 1).kind).toBe('next');
    expect(s.offer('a', 'y', 1, 1).kind).toBe('next');
    expect(s.offer('b', 'x', 2, 2).kind).toBe('gap');
  });

  it('rewind makes pending events acceptable again (the caller failed to apply them)', () => {
    const s = new Sequencer<number>({ now_ms: () => 0 });
    s.offer('m', 's', 1, 1);
    s.commit('m', 's', 1);
    s.offer('m', 's', 2, 2);
    expect(s.offer('m', 's', 2, 2).kind).toBe('duplicate');
    s.rewind('m', 's');
    expect(s.offer('m', 's', 2, 2).kind).toBe('next');
  });

  it('refuses a commit beyond what was issued (a bug in the caller)', () => {
    const s = new Sequencer<number>({ now_ms: () => 0 });
    s.offer('m', 's', 1, 1);
    expect(() => s.commit('m', 's', 2)).toThrow(/assertion failed: commit 2 outside 0..1/);
  });

  it('validates its options with expected/got', () => {
    expect(() => new Sequencer({ now_ms: () => 0, reorder_buffer_max: 0 })).toThrow(/reorder_buffer_max: expected an integer ≥ 1, got 0/);
    expect(() => new Sequencer({ now_ms: () => 0, reorder_window_ms: 10, gap_give_up_ms: 5 })).toThrow(/gap_give_up_ms: expected ≥ reorder_window_ms/);
    expect(() => new Sequencer({ now_ms: () => 0, gap_give_up_ms: Infinity })).not.toThrow();
  });
});

describe('Sequencer: gaps', () => {
  it('asks for a resync after the window, again after the retry interval, and skips after give-up', () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms, reorder_window_ms: 100, resync_retry_ms: 1_000, gap_give_up_ms: 5_000 });
    s.offer('ops', 'jobs', 1, 'a');
    expect(s.gap('ops', 'jobs')).toBeNull();
    s.offer('ops', 'jobs', 4, 'd');
    const held = c.now_ms();
    s.offer('ops', 'jobs', 5, 'e');
    expect(s.gap('ops', 'jobs')).toEqual({ from: 2, to: 3, sinceMs: held, skipAtMs: held + 5_000 });
    c.advance(99);
    expect(s.tick()).toEqual([]);
    c.advance(1);
    expect(s.tick()).toEqual([{ type: 'resync', module: 'ops', stream: 'jobs', from: 2, to: 3 }]);
    c.advance(500);
    expect(s.tick()).toEqual([]);
    c.advance(500);
    expect(s.tick()).toEqual([{ type: 'resync', module: 'ops', stream: 'jobs', from: 2, to: 3 }]);
    c.advance(4_000);
    const actions = s.tick();
    expect(actions).toEqual([
      { type: 'skip', module: 'ops', stream: 'jobs', from: 2, to: 3, ready: [{ seq: 4, item: 'd' }, { seq: 5, item: 'e' }] },
    ]);
    expect(s.state('ops', 'jobs')).toEqual({ committed: 0, issued: 5, held: [] });
    expect(s.gap('ops', 'jobs')).toBeNull();
    // A skipped event arriving late is not applied: it is `late` (a dead letter for the caller), once.
    expect(s.offer('ops', 'jobs', 2, 'late').kind).toBe('late');
    expect(s.offer('ops', 'jobs', 2, 'late').kind).toBe('duplicate');
  });

  it('a wall clock stepped back an hour does not hold the gap for the hour: it ages from the step', () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms, reorder_window_ms: 100, resync_retry_ms: 1_000, gap_give_up_ms: 5_000 });
    s.offer('ops', 'jobs', 1, 'a');
    s.offer('ops', 'jobs', 3, 'c');
    c.advance(100);
    expect(s.tick()).toEqual([{ type: 'resync', module: 'ops', stream: 'jobs', from: 2, to: 2 }]);
    c.advance(-3_600_000); // NTP steps the PC's clock back an hour
    expect(s.tick()).toEqual([]);
    c.advance(1_000);
    expect(s.tick()).toEqual([{ type: 'resync', module: 'ops', stream: 'jobs', from: 2, to: 2 }]);
    c.advance(4_000);
    expect(s.tick()).toEqual([{ type: 'skip', module: 'ops', stream: 'jobs', from: 2, to: 2, ready: [{ seq: 3, item: 'c' }] }]);
  });

  it('does not skip to an event far ahead while the stream goes on in order (it waits; the stream is not frozen)', () => {
    const c = clock();
    const s = new Sequencer<string>({ now_ms: c.now_ms, reorder_window_ms: 100, resync_retry_ms: 1_000, gap_give_up_ms: 5_000 });
    s.offer('inv', 'stock', 1, 'a');
    // A bug in the module (or a forged event) sends seq 999999; its real next events keep coming.
    expect(s.offer('inv', 'stock', 999_999, 'far').kind).toBe('gap');
    let seq = 1;
    for (let t = 0; t < 20_000; t += 50) {
      c.advance(50);
      expect(s.offer('inv', 'stock', ++seq, `e${seq}`)).toEqual({ kind: 'next', ready: [{ seq, item: `e${seq}` }] });
      expect(s.tick()).toEqual([]); // neither a resync (progress within the window) nor a skip
    }
    expect(s.state('inv', 'stock')).toEqual({ committed: 0, issued: seq, held: [999_999] });
    // The gap's age runs from the stream's last progress, as tick counts it; never skipped when give-up is Infinity.
    expect(s.gap('inv', 'stock')).toEqual({ from: seq + 1, to: 999_998, sinceMs: c.now_ms(), skipAtMs: c.now_ms() + 5_000 });
    expect(new Sequencer<string>({ now_ms: c.now_ms, gap_give_up_ms: Infinity }).gap('inv', 'stock')).toBeNull();
    // Once the stream stalls, the gap ages from its last progress: resync after the window, skip after give-up.
    c.advance(100);
    expect(s.tick()).toEqual([{ type: 'resync', module: 'inv', stream: 'stock', from: seq + 1, to: 999_998 }]);
    c.advance(4_900);
    expect(s.tick()).toMatchObject([{ type: 'skip', from: seq + 1, to: 999_998, ready: [{ seq: 999_999, item: 'far' }] }]);
  });

  it('when the buffer is full, drops the highest seq and asks for a resync at once', () => {
    const s = new Sequencer<number>({ now_ms: () => 0, reorder_buffer_max: 2 });
    s.offer('m', 's', 3, 3);
    s.offer('m', 's', 5, 5);
    const o = s.offer('m', 's', 4, 4);
    expect(o).toEqual({ kind: 'overflow', seq: 4, dropped: [{ seq: 5, item: 5 }], resync: { module: 'm', stream: 's', from: 1, to: 2 } });
    const o2 = s.offer('m', 's', 9, 9);
    expect(o2).toMatchObject({ kind: 'overflow', dropped: [{ seq: 9 }] });
    expect(s.state('m', 's').held).toEqual([3, 4]);
  });

  it('bounds the held bytes too: past reorder_buffer_bytes_max the highest seqs go until the rest fits, and a resync is due at once', () => {
    const c = clock();
    const s = new Sequencer<number>({ now_ms: c.now_ms, reorder_buffer_max: 100, reorder_buffer_bytes_max: 100, reorder_window_ms: 10, resync_retry_ms: 1_000 });
    expect(s.offer('m', 's', 3, 3, 40).kind).toBe('gap');
    expect(s.offer('m', 's', 5, 5, 40).kind).toBe('gap');
    // 120 bytes: the highest (5) goes, far below the count bound.
    expect(s.offer('m', 's', 4, 4, 40)).toEqual({ kind: 'overflow', seq: 4, dropped: [{ seq: 5, item: 5 }], resync: { module: 'm', stream: 's', from: 1, to: 2 } });
    // The new event is the highest: it is the one dropped.
    expect(s.offer('m', 's', 6, 6, 90)).toMatchObject({ kind: 'overflow', dropped: [{ seq: 6, item: 6 }] });
    expect(s.state('m', 's').held).toEqual([3, 4]);
    // A large low one stays; as many higher ones go as it takes (highest first).
    expect(s.offer('m', 's', 2, 2, 90)).toEqual({ kind: 'overflow', seq: 2, dropped: [{ seq: 4, item: 4 }, { seq: 3, item: 3 }], resync: { module: 'm', stream: 's', from: 1, to: 1 } });
    expect(s.state('m', 's').held).toEqual([2]);
    // The overflow asked for its resync: tick repeats it only after resync_retry_ms.
    c.advance(10);
    expect(s.tick()).toEqual([]);
    // Released bytes are free again: the drain gives them back.
    expect(s.offer('m', 's', 1, 1, 90)).toMatchObject({ kind: 'next', ready: [{ seq: 1 }, { seq: 2 }] });
    expect(s.offer('m', 's', 4, 4, 60).kind).toBe('gap');
    expect(s.offer('m', 's', 5, 5, 40).kind).toBe('gap');
    expect(s.state('m', 's').held).toEqual([4, 5]);
    // One event above the bound alone: dropped itself, nothing held, no gap left open; the resync
    // asks from the next seq (it comes back in order, never held).
    s.restore('m', 't', 10);
    expect(s.offer('m', 't', 12, 12, 101)).toEqual({ kind: 'overflow', seq: 12, dropped: [{ seq: 12, item: 12 }], resync: { module: 'm', stream: 't', from: 11, to: 11 } });
    expect(s.state('m', 't').held).toEqual([]);
    expect(s.gap('m', 't')).toBeNull();
    expect(s.offer('m', 't', 11, 11, 101)).toMatchObject({ kind: 'next' });
    expect(s.offer('m', 't', 12, 12, 101)).toMatchObject({ kind: 'next' });
  });

  it('refuses a byte bound or an event size that is no whole number of bytes, naming it', () => {
    for (const bad of [0, 1.5, -1, NaN, Infinity]) {
      expect(() => new Sequencer({ now_ms: () => 0, reorder_buffer_bytes_max: bad })).toThrow(`reorder_buffer_bytes_max: expected an integer ≥ 1, got ${bad}`);
    }
    const s = new Sequencer<number>({ now_ms: () => 0 });
    expect(() => s.offer('m', 's', 2, 2, -1)).toThrow('bytes: expected a non-negative integer, got -1');
    expect(() => s.offer('m', 's', 2, 2, 0.5)).toThrow('bytes: expected a non-negative integer, got 0.5');
  });
});

// ---------------------------------------------------------------------------------------------
// Randomized, against the model "a stream's events are applied exactly once, in seq order".

interface Module {
  /** Everything published so far, by seq. */
  published: number;
  resend(from: number): number[];
}

function runScenario(seed: number, opts: { n: number; displacement: number; dupRate: number; lossRate: number; bufferMax: number; bytesMax?: number }) {
  const r = rng(seed);
  const c = clock();
  const window = 50;
  const s = new Sequencer<number>({
    now_ms: c.now_ms,
    reorder_window_ms: window,
    resync_retry_ms: 200,
    gap_give_up_ms: Infinity,
    reorder_buffer_max: opts.bufferMax,
    ...(opts.bytesMax === undefined ? {} : { reorder_buffer_bytes_max: opts.bytesMax }),
  });
  // Arrival plan: seq i arrives at position i + jitter (bounded displacement); some are duplicated
  // later, some lost in flight (only a resync brings them back).
  const plan: { at: number; seq: number }[] = [];
  for (let i = 1; i <= opts.n; i++) {
    const lost = r() < opts.lossRate;
    if (!lost) plan.push({ at: i + r() * opts.displacement, seq: i });
    if (r() < opts.dupRate) plan.push({ at: i + r() * opts.displacement, seq: i });
  }
  plan.sort((a, b) => a.at - b.at);
  // Each seq's size (1..100 bytes), the same whenever it is sent again; drawn after the plan, so a
  // seed gives the plan it gave before sizes were drawn.
  const sizes = Array.from({ length: opts.n + 1 }, () => 1 + Math.floor(r() * 100));

  const applied: number[] = [];
  let resyncs = 0;
  const take = (o: Offer<number>) => {
    for (const x of readyOf(o)) {
      expect(x.item).toBe(x.seq);
      applied.push(x.seq);
    }
  };
  const module: Module = {
    published: opts.n,
    resend: (from) => Array.from({ length: Math.max(0, opts.n - from + 1) }, (_, k) => from + k),
  };
  const onActions = (actions: TickAction<number>[]) => {
    for (const a of actions) {
      expect(a.type).toBe('resync'); // give-up is Infinity: never skip
      resyncs++;
      for (const seq of module.resend(a.from)) take(s.offer('m', 's', seq, seq, sizes[seq]));
    }
  };
  for (const p of plan) {
    c.advance(1);
    const o = s.offer('m', 's', p.seq, p.seq, sizes[p.seq]);
    take(o);
    if (o.kind === 'overflow') onActions([{ type: 'resync', ...o.resync }]);
    onActions(s.tick());
  }
  // Let the clock run until every gap is closed (bounded).
  for (let i = 0; i < 100 && applied.length < opts.n; i++) {
    c.advance(window);
    onActions(s.tick());
  }
  return { applied, resyncs, state: s.state('m', 's') };
}

describe('Sequencer: randomized against the model', () => {
  const expected = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

  it(`shuffled and duplicated within the window: every seq once, in order, no resync (seed ${SEED})`, () => {
    for (let round = 0; round < 20; round++) {
      const seed = SEED + round;
      const { applied, resyncs } = runScenario(seed, { n: 500, displacement: 20, dupRate: 0.2, lossRate: 0, bufferMax: 64 });
      expect(applied, `seed ${seed}`).toEqual(expected(500));
      expect(resyncs, `seed ${seed}`).toBe(0);
    }
  });

  it(`with losses, resyncs fill every gap: every seq once, in order (seed ${SEED})`, () => {
    for (let round = 0; round < 20; round++) {
      const seed = SEED + 1000 + round;
      const { applied, state } = runScenario(seed, { n: 300, displacement: 10, dupRate: 0.1, lossRate: 0.02, bufferMax: 64 });
      expect(applied, `seed ${seed}`).toEqual(expected(300));
      expect(state.held, `seed ${seed}`).toEqual([]);
    }
  });

  it(`with a tiny buffer that overflows, still every seq once, in order (seed ${SEED})`, () => {
    for (let round = 0; round < 20; round++) {
      const seed = SEED + 2000 + round;
      const { applied } = runScenario(seed, { n: 300, displacement: 15, dupRate: 0.1, lossRate: 0.02, bufferMax: 4 });
      expect(applied, `seed ${seed}`).toEqual(expected(300));
    }
  });

  it(`with a byte bound that overflows (events of 1-100 bytes, 250 held at most), still every seq once, in order (seed ${SEED})`, () => {
    for (let round = 0; round < 20; round++) {
      const seed = SEED + 3000 + round;
      const { applied, state } = runScenario(seed, { n: 300, displacement: 15, dupRate: 0.1, lossRate: 0.02, bufferMax: 64, bytesMax: 250 });
      expect(applied, `seed ${seed}`).toEqual(expected(300));
      expect(state.held, `seed ${seed}`).toEqual([]);
    }
  });
});
