// Which files of a compaction unit are merged and which only change level (Paimon's
// MergeTreeCompactTask over IntervalPartition).
//
// The unit's files are cut into sections: files sorted by (min key, max key), a file whose min key
// is above the highest max key so far starts a new section (equal keys overlap). Sections are
// disjoint in key range and in key order. A section of one file overlaps nothing else in the unit,
// so merging it would only copy it: when it is large (at least `minFileSize`, Paimon's 70 % of
// target-file-size) it is *upgraded* — the same file, its manifest entry moved to the output level
// — and the small ones and overlapping sections between two large files are merged together. A
// merge batch that turns out to be one lone file is upgraded as well. A file already at the output
// level stays as it is. A file going to the highest level that holds or may hold retractions
// (delete row count not 0 or unknown) is rewritten instead, so the top level keeps no retractions
// (Paimon: "files with delete records should not be upgraded directly to max level").
//
// Without this a table whose keys only grow (a log keyed by a counter, ids that start with a
// time) rewrote its whole oldest run whenever the newer runs had grown to its size: every row of
// the table, again and again as it grew, on the writer's thread.
//
// The caller decides whether upgrades are allowed at all (writers that must see every row of a
// compaction — changelog producers lookup and full-compaction, deletion vectors, first-row — merge
// everything as before).

import type { DataFileMeta } from '../manifest.ts';
import type { LevelSortedRun } from '../levels.ts';

export type CompactStep =
  /** Merge these files (in the unit's runs' order) into new files at the output level. */
  | { readonly kind: 'rewrite'; readonly files: readonly DataFileMeta[] }
  /** Move this file to the output level without touching its bytes. */
  | { readonly kind: 'upgrade'; readonly file: DataFileMeta }
  /** Already at the output level and alone with its keys: neither removed nor added. */
  | { readonly kind: 'keep'; readonly file: DataFileMeta };

export interface PlanOptions {
  readonly outputLevel: number;
  readonly maxLevel: number;
  /** Files smaller than this are merged with their neighbours rather than upgraded. */
  readonly minFileSize: number;
  /** Whether the file may change level as it is (e.g. its format is the output level's). */
  readonly mayUpgrade?: (f: DataFileMeta) => boolean;
}

/** The unit's steps in key order. Every file of `runs` is in exactly one step. */
export function planCompaction(
  runs: readonly LevelSortedRun[],
  o: PlanOptions,
  range: (f: DataFileMeta) => { min: unknown[]; max: unknown[] },
  compareKeys: (a: unknown[], b: unknown[]) => number,
): CompactStep[] {
  const files = runs.flatMap((r) => r.files).map((f) => ({ f, ...range(f) }));
  files.sort((a, b) => compareKeys(a.min, b.min) || compareKeys(a.max, b.max));
  const sections: DataFileMeta[][] = [];
  let bound: unknown[] | undefined;
  for (const x of files) {
    if (bound === undefined || compareKeys(x.min, bound) > 0) {
      sections.push([x.f]);
      bound = x.max;
    } else {
      sections[sections.length - 1]!.push(x.f);
      if (compareKeys(x.max, bound) > 0) bound = x.max;
    }
  }
  const steps: CompactStep[] = [];
  const upgrade = (f: DataFileMeta): void => {
    if (f.level === o.outputLevel) steps.push({ kind: 'keep', file: f });
    else if ((o.outputLevel !== o.maxLevel || f.deleteRowCount === 0) && (o.mayUpgrade?.(f) ?? true)) steps.push({ kind: 'upgrade', file: f });
    else steps.push({ kind: 'rewrite', files: [f] });
  };
  let candidate: DataFileMeta[][] = [];
  const flush = (): void => {
    if (candidate.length === 1 && candidate[0]!.length === 1) upgrade(candidate[0]![0]!);
    else if (candidate.length > 0) steps.push({ kind: 'rewrite', files: candidate.flat() });
    candidate = [];
  };
  for (const section of sections) {
    if (section.length > 1 || section[0]!.fileSize < o.minFileSize) candidate.push(section);
    else {
      flush();
      upgrade(section[0]!);
    }
  }
  flush();
  return steps;
}
