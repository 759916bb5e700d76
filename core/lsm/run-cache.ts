// Decoded data files, kept in memory by path. Data files never change once written, so an entry
// is valid for as long as the file exists; the cache is bounded by estimated bytes and evicts the
// least recently used file. This is what makes point lookups and repeated scans cheap.
//
// One byte budget (`RunCacheBudget`) is shared by every table a Catalog opens — a site process
// gives its whole warehouse one budget (core/site config `memory.tableCacheBytes`), not one per
// table — and evicts the least recently used file across all of them. Entries are keyed by the
// file's path, so two Table objects of one table (the ingest writer's and a status reader's)
// share a decoded file instead of holding it twice. A run is shaped by the schema it was read
// for (data-file-format.ts evolves older files to the current columns); an entry records that
// schema id, and a table reading with another schema treats it as a miss. A reader of an older
// snapshot reads in that snapshot's columns (time travel, EVOLUTION-DESIGN.md §1): its runs are
// kept under the path plus the schema id (`SHAPED_KEY`), beside the current shape's, not in its place.

import { packRun, PackedColumn, type RunData } from './data-file.ts';
import { invalidArgument } from './errors.ts';

/** Distinct values remembered per column while counting string bytes (see estimateRunBytes). */
const RECENT = 256;

/**
 * Heap bytes of a decoded run, estimated: 8 per array cell, a packed column's (and the typed
 * sequence and kind arrays') buffers, per string
 * or byte cell its header and length once per distinct value (an array shared by a key and a
 * value column, or by two runs, counted once per run), and 12 per row of key for the lookup hash
 * index built on demand. Measured against heap and array-buffer growth after GC (DESIGN.md,
 * "Memory of a site process"): 4–15 % above it for the stock table's runs, decoded or put; within
 * 1 % (hash index aside) for a decoded 1.14 M-row state with typed sequence numbers and kinds.
 */
export function estimateRunBytes(run: RunData): number {
  let bytes = 64 + arrayBytes(run.seq) + arrayBytes(run.kind);
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
      // Equal values of a column are mostly one object: a decode's dictionary pages give every
      // row of an entry the same string, and JSON.parse internalizes short strings (a `location`
      // cycling through five values costs five strings, not one per row). Counted once while
      // among the last RECENT distinct values: exact for low-cardinality columns, bounded work.
      const recent = new Set<unknown>();
      for (const v of c) {
        if (v === null || v === undefined || recent.has(v)) continue;
        if (recent.size >= RECENT) recent.clear();
        recent.add(v);
        bytes += 24 + (v as string | Uint8Array).length;
      }
    } else if (typeof sample === 'bigint') bytes += c.length * 16;
  }
  if (run.keyCols.length > 0) bytes += 12 * run.rowCount;
  return bytes;
}

/** Bytes of a sequence or kind column: a typed array's buffer, else 8 per cell. */
function arrayBytes(a: ArrayLike<number>): number {
  return ArrayBuffer.isView(a) ? a.byteLength + 64 : 8 * a.length;
}

/** A byte budget shared by the run caches of a Catalog's tables. */
export class RunCacheBudget {
  readonly capacityBytes: number;
  /** path → entry, across every table drawing on the budget (paths never collide). */
  readonly entries = new Map<string, CacheEntry>();
  usedBytes = 0;
  /** Recency is a tick per entry (a hit writes one number instead of re-inserting into the Map). */
  tick = 0;
  /** Runs not cached because their estimate alone exceeds the budget (each use decodes again). */
  oversize = 0;

  constructor(capacityBytes: number) {
    if (!Number.isSafeInteger(capacityBytes) || capacityBytes < 0) {
      throw invalidArgument(`run cache: expected cacheBytes to be a whole number of bytes ≥ 0, got ${capacityBytes}`);
    }
    this.capacityBytes = capacityBytes;
  }

  insert(path: string, run: RunData, shape: number): void {
    this.remove(path);
    const bytes = estimateRunBytes(run);
    if (bytes > this.capacityBytes) {
      this.oversize++;
      return;
    }
    this.entries.set(path, { run, bytes, used: ++this.tick, shape });
    this.usedBytes += bytes;
    while (this.usedBytes > this.capacityBytes) {
      // Evict the least recently used (a linear pass: a cache holds few, large files).
      let oldest: string | undefined;
      let least = Infinity;
      for (const [p, x] of this.entries) {
        if (x.used < least) {
          least = x.used;
          oldest = p;
        }
      }
      this.remove(oldest!);
    }
  }

  remove(path: string): void {
    const e = this.entries.get(path);
    if (e) {
      this.usedBytes -= e.bytes;
      this.entries.delete(path);
    }
  }
}

interface CacheEntry {
  run: RunData;
  bytes: number;
  used: number;
  /** The schema id the run is shaped for. */
  shape: number;
}

export interface RunCacheScope {
  /** Path prefix of this table's files: `clear()` and `usedBytes` cover the entries under it. */
  prefix?: string;
  /** The schema id runs are read for now (default: always 0, one shape). */
  shape?: () => number;
}

/** Between a data file's path and the columns of a run decoded with only those (Table.loadRunProjected), in a cache key; no path holds it. */
export const PROJECTED_KEY = '\u0000columns=';
/** Between a data file's path and the id of the schema a run is shaped for when that is not the table's current one (Table.loadRunAt). */
export const SHAPED_KEY = '\u0000schema=';
/** What every derived key of a path (PROJECTED_KEY, SHAPED_KEY) starts with after the path. */
const DERIVED_KEY = '\u0000';

/** One table's view of a budget: its hit and miss counts, and `clear` limited to its files. */
export class RunCache {
  readonly budget: RunCacheBudget;
  private readonly prefix: string;
  private readonly shape: () => number;
  hits = 0;
  misses = 0;

  /** A cache with a budget of its own (`capacityBytes`), or a view of a shared budget. */
  constructor(budget: number | RunCacheBudget, scope: RunCacheScope = {}) {
    this.budget = typeof budget === 'number' ? new RunCacheBudget(budget) : budget;
    this.prefix = scope.prefix ?? '';
    this.shape = scope.shape ?? (() => 0);
  }

  /**
   * The cached run of `path`, else `load()`'s — kept for later reads unless `fill` is false (a
   * one-off scan of a large table, LevelDB's `fill_cache`: it uses what is cached and evicts
   * nothing). `shape`: the schema id the run is shaped for (default: the table's current one).
   */
  get(path: string, load: () => RunData, fill = true, shape = this.shape()): RunData {
    const hit = this.peek(path, shape);
    if (hit !== undefined) return hit;
    this.misses++;
    const run = load();
    if (fill) this.budget.insert(path, run, shape);
    return run;
  }

  /** The cached run of `path` shaped for `shape` (counted as a hit), without loading it when it is not cached. */
  peek(path: string, shape = this.shape()): RunData | undefined {
    const b = this.budget;
    const e = b.entries.get(path);
    if (e === undefined || e.shape !== shape) return undefined;
    this.hits++;
    e.used = ++b.tick;
    return e.run;
  }

  /**
   * Puts a run just written, so the first read after a flush or compaction needs no decode. The
   * cache keeps a packed copy (numeric columns in typed arrays, key strings shared with their
   * value columns), as a decode would make it; the caller's run is not changed.
   */
  put(path: string, run: RunData): void {
    const shape = this.shape();
    if (this.budget.entries.get(path)?.shape === shape) return;
    this.budget.insert(path, packRun(run), shape);
  }

  /** Forgets this table's runs (after a schema change, runs decoded for the old schema are stale). */
  clear(): void {
    for (const p of [...this.budget.entries.keys()]) if (p.startsWith(this.prefix)) this.budget.remove(p);
  }

  /** Forgets the run of a file gone (compacted away, expired), and its runs a projected scan or an older schema's reader decoded. */
  drop(path: string): void {
    this.budget.remove(path);
    const derived = `${path}${DERIVED_KEY}`;
    for (const k of [...this.budget.entries.keys()]) if (k.startsWith(derived)) this.budget.remove(k);
  }

  /** Estimated bytes of this table's cached runs (the budget's `usedBytes` covers every table). */
  get usedBytes(): number {
    let n = 0;
    for (const [p, e] of this.budget.entries) if (p.startsWith(this.prefix)) n += e.bytes;
    return n;
  }
}
