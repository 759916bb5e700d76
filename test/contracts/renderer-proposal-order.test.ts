// The inbox sorts the proposals the site sends (renderer store `sortByUrgency`) and breaks a tie of
// one millisecond by its own copy of core/inbox's `compareProposalIds`, as it imports only types
// from core (scripts/check-imports.mjs). Checked here against core's: the same order for ids as
// the agent makes them (runs in one millisecond `…-000`, `…-000-2`, …, `-10`; n past 9) and for
// ids of other shapes.
import { describe, expect, it } from 'vitest';
import { compareProposalIds } from '../../core/inbox/proposal.ts';
import { compareProposalIds as rendererCompare } from '../../renderer/src/store/proposal-order.ts';

/** A small seeded generator (mulberry32): the seed is printed, so a failure can be run again. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);

describe("the renderer's proposal order and core/inbox's", () => {
  it('give the same order for the same ids', () => {
    const seed = Number(process.env.TILSTAND_SEED ?? Date.now() % 1_000_000);
    console.log(`renderer-proposal-order seed ${seed}`);
    const r = rng(seed);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const ids: string[] = [];
    for (let i = 0; i < 400; i++) {
      const run = `${pick(['20261130', '20261201'])}-${pick(['080000', '080001', '235959'])}-${pick(['000', '001', '999'])}${pick(['', '', '-2', '-3', '-10', '-11'])}`;
      const n = pick([1, 2, 3, 9, 10, 11, 100]);
      ids.push(pick([`P-${run}-${n}`, `P-${run}-${n}`, `P-${run}-${n}`, `P-r-${n}`, `P-${run}-x`, `odd`, `P-${run}-0${n}`]));
    }
    for (let i = 0; i < 5_000; i++) {
      const a = pick(ids);
      const b = pick(ids);
      expect(sign(rendererCompare(a, b)), `${a} vs ${b} (seed ${seed})`).toBe(sign(compareProposalIds(a, b)));
    }
    expect([...ids].sort(rendererCompare)).toEqual([...ids].sort(compareProposalIds));
  });
});
