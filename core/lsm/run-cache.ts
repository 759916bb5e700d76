// Decoded data files, kept in memory by path. Data files never change once written, so an entry
// is valid for as long as the file exists; the cache is bounded by estimated bytes and evicts the
// least recently used file. This is what makes point lookups and repeated scans cheap.

import type { RunData } from './data-file.ts';

export function estimateRunBytes(run: RunData): number {
  let bytes = 64;
  const cols = [...run.keyCols, ...run.valueCols];
  bytes += (cols.length + 2) * run.rowCount * 8;
  // Key columns are decoded apart from the value columns: their strings are separate copies.
  for (const c of cols) {
    const sample = c.length > 0 ? c[0] : null;
    if (typeof sample === 'string' || sample instanceof Uint8Array) {
      for (const v of c) if (v !== null) bytes += 24 + (v as string | Uint8Array).length;
    }
  }
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

  /** Puts a run just written, so the first read after a flush or compaction needs no decode. */
  put(path: string, run: RunData): void {
    if (this.entries.has(path)) return;
    this.insert(path, run);
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
