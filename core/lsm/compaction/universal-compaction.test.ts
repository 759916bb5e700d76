import { describe, expect, it } from 'vitest';
import type { LevelSortedRun } from '../levels.ts';
import { pickUniversal } from './universal-compaction.ts';

const o = { maxSizeAmplificationPercent: 200, sizeRatio: 1, compactionTrigger: 5, numLevels: 6 };
const run = (level: number, totalSize: number): LevelSortedRun => ({ level, totalSize, files: [] });

describe('universal compaction picker (Paimon defaults)', () => {
  it('does nothing below the trigger', () => {
    expect(pickUniversal(o, [run(0, 1), run(0, 1), run(5, 100)])).toBeUndefined();
  });

  it('compacts everything into the top level when size amplification exceeds 200 %', () => {
    const runs = [run(0, 100), run(0, 100), run(0, 100), run(0, 100), run(5, 100)];
    const u = pickUniversal(o, runs)!;
    expect(u.outputLevel).toBe(5);
    expect(u.runs).toHaveLength(5);
  });

  it('picks by size ratio and writes just above the next run', () => {
    // newest first: 1, 1, 2, then a big level-4 run and the base.
    const runs = [run(0, 1), run(0, 1), run(0, 2), run(4, 1000), run(5, 10_000)];
    const u = pickUniversal(o, runs)!;
    expect(u.runs.map((r) => r.totalSize)).toEqual([1, 1, 2]);
    expect(u.outputLevel).toBe(3);
  });

  it('forces a pick by run count above the trigger, never writing level 0', () => {
    const runs = [run(0, 1), run(0, 10), run(0, 100), run(0, 1000), run(0, 10_000), run(3, 100_000), run(5, 1_000_000)];
    const u = pickUniversal(o, runs)!;
    expect(u.runs.length).toBeGreaterThanOrEqual(3);
    expect(u.outputLevel).toBeGreaterThan(0);
  });
});
