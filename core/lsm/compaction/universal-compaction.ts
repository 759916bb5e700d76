// Universal compaction (Paimon's UniversalCompaction, after RocksDB's universal style). Given a
// bucket's sorted runs, newest first, it picks the runs to merge and the level to write:
//   1. size amplification: when all runs but the oldest together exceed
//      `compaction.max-size-amplification-percent` of the oldest, compact everything;
//   2. size ratio: starting from the newest run, take the next run while the candidates' size
//      × (100 + `compaction.size-ratio`)/100 ≥ the next run's size; pick when more than one run;
//   3. run count: when there are more runs than `num-sorted-run.compaction-trigger`, force-pick
//      the newest (runs − trigger + 1) runs, widened by the size-ratio rule.
// The output goes to the level just above the first run not picked (never level 0), or to the
// highest level when everything is picked.

import type { LevelSortedRun } from '../levels.ts';

export interface CompactUnit {
  readonly outputLevel: number;
  readonly runs: LevelSortedRun[];
}

export interface UniversalOptions {
  readonly maxSizeAmplificationPercent: number;
  readonly sizeRatio: number;
  readonly compactionTrigger: number;
  readonly numLevels: number;
}

export function pickUniversal(o: UniversalOptions, runs: readonly LevelSortedRun[]): CompactUnit | undefined {
  const maxLevel = o.numLevels - 1;
  if (runs.length < o.compactionTrigger) return undefined;
  // 1. Size amplification.
  let candidate = 0;
  for (let i = 0; i < runs.length - 1; i++) candidate += runs[i]!.totalSize;
  const earliest = runs[runs.length - 1]!.totalSize;
  if (candidate * 100 > o.maxSizeAmplificationPercent * earliest) return { outputLevel: maxLevel, runs: [...runs] };
  // 2. Size ratio.
  const byRatio = pickForSizeRatio(o, runs, 1, false);
  if (byRatio) return byRatio;
  // 3. Run count.
  if (runs.length > o.compactionTrigger) return pickForSizeRatio(o, runs, runs.length - o.compactionTrigger + 1, true);
  return undefined;
}

function pickForSizeRatio(o: UniversalOptions, runs: readonly LevelSortedRun[], count: number, force: boolean): CompactUnit | undefined {
  let size = 0;
  for (let i = 0; i < count; i++) size += runs[i]!.totalSize;
  let n = count;
  for (let i = count; i < runs.length; i++) {
    const next = runs[i]!;
    if ((size * (100 + o.sizeRatio)) / 100 < next.totalSize) break;
    size += next.totalSize;
    n++;
  }
  if (!force && n <= 1) return undefined;
  return createUnit(runs, o.numLevels - 1, n);
}

function createUnit(runs: readonly LevelSortedRun[], maxLevel: number, count: number): CompactUnit {
  let n = count;
  let outputLevel = n === runs.length ? maxLevel : Math.max(0, runs[n]!.level - 1);
  if (outputLevel === 0) {
    // Never write level 0: take runs until the first one of a higher level.
    while (n < runs.length) {
      const next = runs[n++]!;
      if (next.level !== 0) {
        outputLevel = next.level;
        break;
      }
    }
  }
  if (n === runs.length) outputLevel = maxLevel;
  return { outputLevel, runs: runs.slice(0, n) };
}

/** A full compaction: every run into the highest level. */
export function fullCompaction(numLevels: number, runs: readonly LevelSortedRun[]): CompactUnit | undefined {
  if (runs.length === 0) return undefined;
  if (runs.length === 1 && runs[0]!.level === numLevels - 1) return undefined;
  return { outputLevel: numLevels - 1, runs: [...runs] };
}
