// The LSM shape of one bucket: level 0 holds one sorted run per file (newest first, by maximum
// sequence number); every level ≥ 1 is a single sorted run of files with disjoint key ranges.

import { notSupported } from './errors.ts';
import type { DataFileMeta, ManifestEntry } from './manifest.ts';

export interface LevelSortedRun {
  readonly level: number;
  /** Files of the run in key order (one file for a level-0 run). */
  readonly files: DataFileMeta[];
  readonly totalSize: number;
}

export interface BucketFiles {
  readonly partition: Uint8Array;
  readonly bucket: number;
  readonly totalBuckets: number;
  readonly files: DataFileMeta[];
}

const compareBytes = (a: Uint8Array, b: Uint8Array): number => Buffer.compare(a, b);

/** Groups live entries by (partition, bucket), in a stable order. */
export function groupByBucket(entries: readonly ManifestEntry[]): BucketFiles[] {
  const groups = new Map<string, { partition: Uint8Array; bucket: number; totalBuckets: number; files: DataFileMeta[] }>();
  for (const e of entries) {
    const id = `${Buffer.from(e.partition).toString('hex')}/${e.bucket}`;
    let g = groups.get(id);
    if (!g) {
      g = { partition: e.partition, bucket: e.bucket, totalBuckets: e.totalBuckets, files: [] };
      groups.set(id, g);
    }
    g.files.push(e.file);
  }
  return [...groups.values()].sort((a, b) => compareBytes(a.partition, b.partition) || a.bucket - b.bucket);
}

/**
 * Sorted runs of a bucket, newest first: level-0 files by descending max sequence number, then
 * levels 1, 2, … . `compareMinKey` orders the files inside a level.
 */
export function sortedRuns(files: readonly DataFileMeta[], compareMinKey: (a: DataFileMeta, b: DataFileMeta) => number): LevelSortedRun[] {
  const runs: LevelSortedRun[] = [];
  const level0 = files.filter((f) => f.level === 0).sort((a, b) => b.maxSequenceNumber - a.maxSequenceNumber || (a.fileName < b.fileName ? 1 : -1));
  for (const f of level0) runs.push({ level: 0, files: [f], totalSize: f.fileSize });
  const byLevel = new Map<number, DataFileMeta[]>();
  for (const f of files) {
    if (f.level === 0) continue;
    const l = byLevel.get(f.level) ?? [];
    l.push(f);
    byLevel.set(f.level, l);
  }
  for (const level of [...byLevel.keys()].sort((a, b) => a - b)) {
    const fs = byLevel.get(level)!.sort(compareMinKey);
    runs.push({ level, files: fs, totalSize: fs.reduce((s, f) => s + f.fileSize, 0) });
  }
  return runs;
}

export function highestNonEmptyLevel(files: readonly DataFileMeta[]): number {
  let h = -1;
  for (const f of files) if (f.level > h) h = f.level;
  return h;
}

/**
 * The levels of a bucket: `num-levels`, or more when a file sits higher — in a table whose
 * `num-levels` an ALTER lowered — as Paimon's `Levels` counts them, so the top level (full
 * compactions' output, the `full-compaction` changelog's old state) stays where the files are.
 */
export function bucketNumLevels(numLevels: number, files: readonly DataFileMeta[]): number {
  return Math.max(numLevels, highestNonEmptyLevel(files) + 1);
}

/**
 * The level holding a bucket's state at its last full compaction — the old state a
 * `full-compaction` changelog is the diff against: the bucket's highest level with a file, when
 * above level 0 (above level 1 with deletion vectors, where level 1 is where every commit moves
 * level 0 and full compactions need 3 levels or more); else its top level (no file there yet).
 * Only full compactions write a bucket's highest non-empty level: the first compaction of a bucket
 * of level-0 runs takes them all, and one that leaves a run out writes below that run
 * (universal-compaction.ts, createUnit). So this is the top level (bucketNumLevels) — but also
 * after an ALTER raised `num-levels` (or `num-sorted-run.compaction-trigger`, whose value + 1 is
 * its default) above the files, where the old state stays below the new top until the next full
 * compaction: read at the new top it was empty, and that compaction gave +I again for every kept
 * key and no -D for a removed one.
 */
export function lastFullCompactionLevel(numLevels: number, files: readonly DataFileMeta[], deletionVectors: boolean): number {
  const h = highestNonEmptyLevel(files);
  return h > (deletionVectors ? 1 : 0) ? h : bucketNumLevels(numLevels, files) - 1;
}

/**
 * The bucket's levels (bucketNumLevels), refused below 2 with an error naming `num-levels`: a
 * bucket needs level 0 and one above it before it can be compacted. Java's writer fails the same
 * way when it opens such a bucket for writing or compaction (Levels' constructor: "Number of levels
 * must be at least 2"); a table Java made with `num-levels` 1 reaches it only in a bucket with no
 * file above level 0. `where` names the bucket.
 */
export function checkBucketLevels(numLevels: number, files: readonly DataFileMeta[], where: string): number {
  const n = bucketNumLevels(numLevels, files);
  if (n < 2) {
    throw notSupported(
      `option 'num-levels' = '${numLevels}': ${where} has no file above level 0, so it would have ${n} level${n === 1 ? '' : 's'}; ` +
        "compacting a bucket needs at least 2 (level 0 and one above it), as in Paimon; set 'num-levels' to 2 or more, or 'write-only' = 'true' to write without compacting",
    );
  }
  return n;
}
