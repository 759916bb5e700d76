// Decoded data files, kept in memory by path. Data files never change once written, so an entry
// is valid for as long as the file exists; the cache is bounded by estimated bytes and evicts the
// least recently used file. This is what makes point lookups and repeated scans cheap.

import { packRun, PackedColumn, type RunData } from './data-file.ts';

/**
 * Heap bytes of a decoded run, estimated: 8 per array cell, a packed column's buffers, per string
 * or byte cell its header and length (an array shared by a key and a value column, or by two
 * runs, counted once per run), and 8 per row of key for the lookup hash index built on demand.
 */
export function estimateRunBytes(run: RunData): number {
  let bytes = 64 + 2 * 8 * run.rowCount;
  const seen = new Set<unknown>();
  for (const c of [...run.keyCols, ...run.valueCols]) {
    if (seen.has(c)) continue;
    seen.add(c);
    if (c instanceof PackedColumn) {
      bytes += c.byteSize;
      continue;
    }
    bytes += c.length * 8;
    let sample: unknown = null;
    for (let i = 0; i < c.length && (sample === null || sample === undefined); i++) sample = c[i];
    if (typeof sample === 'string' || sample instanceof Uint8Array) {
      // Repeats of the previous cell's value are mostly one shared object (dictionary pages).
      let prev: unknown;
      for (const v of c) {
        if (v !== null && v !== undefined && v !== prev) bytes += 24 + (v as string | Uint8Array).length;
        prev = v;
      }
    } else if (typeof sample === 'bigint') bytes += c.length * 16;
  }
  if (run.keyCols.length > 0) bytes += 8 * run.rowCount;
  return bytes;
}

export class RunCache {
  /** Recency is a tick per entry (a hit writes one number instead of re-inserting into the Map). */
  private readonly entries = new Map<string, { run: RunData; bytes: number; used: number }>();
  private bytes = 0;
  private tick = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly capacityBytes: number) {}

  get(path: string, load: () => RunData): RunData {
    const e = this.entries.get(path);
    if (e) {
      this.hits++;
      e.used = ++this.tick;
      return e.run;
    }
    this.misses++;
    const run = load();
    this.insert(path, run);
    return run;
  }

  /**
   * Puts a run just written, so the first read after a flush or compaction needs no decode. The
   * cache keeps a packed copy (numeric columns in typed arrays, key strings shared with their
   * value columns), as a decode would make it; the caller's run is not changed.
   */
  put(path: string, run: RunData): void {
    if (this.entries.has(path)) return;
    this.insert(path, packRun(run));
  }

  private insert(path: string, run: RunData): void {
    const bytes = estimateRunBytes(run);
    if (bytes > this.capacityBytes) return;
    this.entries.set(path, { run, bytes, used: ++this.tick });
    this.bytes += bytes;
    while (this.bytes > this.capacityBytes) {
      // Evict the least recently used (a linear pass: a cache holds few, large files).
      let oldest: string | undefined;
      let least = Infinity;
      for (const [p, x] of this.entries) {
        if (x.used < least) {
          least = x.used;
          oldest = p;
        }
      }
      this.bytes -= this.entries.get(oldest!)!.bytes;
      this.entries.delete(oldest!);
    }
  }

  /** Forgets every run (after a schema change, runs decoded for the old schema are stale). */
  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  drop(path: string): void {
    const e = this.entries.get(path);
    if (e) {
      this.bytes -= e.bytes;
      this.entries.delete(path);
    }
  }

  get usedBytes(): number {
    return this.bytes;
  }
}
