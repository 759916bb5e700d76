// Small helpers of the benchmark harness: statistics, /proc/self/io, directory sizes, a FileIO
// that counts every byte the table store writes and reads (deleted files included), versions.

import * as fs from 'node:fs';
import { join } from 'node:path';
import { ForwardingFileIO, localFileIO, type FileIO } from '../core/lsm/index.ts';

export function median(xs: readonly number[]): number {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

/**
 * The run whose `value` is the median of the runs' (the lower of the two middle ones for an even
 * count), so a figure and the notes beside it come from one run.
 */
export function medianRun<T>(runs: readonly T[], value: (r: T) => number): T {
  if (runs.length === 0) throw new Error('medianRun: no runs');
  return [...runs].sort((a, b) => value(a) - value(b))[(runs.length - 1) >> 1]!;
}

/** Nearest-rank percentile of an already sorted array. */
export function percentileSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export interface ProcIo {
  wchar: number;
  write_bytes: number;
  cancelled_write_bytes: number;
  rchar: number;
  read_bytes: number;
}

/** This process's I/O counters; zeros when /proc is not there. */
export function procIo(): ProcIo {
  try {
    const o: Record<string, number> = {};
    for (const l of fs.readFileSync('/proc/self/io', 'utf8').trim().split('\n')) {
      const [k, v] = l.split(':');
      o[k!.trim()] = Number(v);
    }
    return { wchar: o.wchar ?? 0, write_bytes: o.write_bytes ?? 0, cancelled_write_bytes: o.cancelled_write_bytes ?? 0, rchar: o.rchar ?? 0, read_bytes: o.read_bytes ?? 0 };
  } catch {
    return { wchar: 0, write_bytes: 0, cancelled_write_bytes: 0, rchar: 0, read_bytes: 0 };
  }
}

export function ioDelta(a: ProcIo, b: ProcIo): ProcIo {
  return {
    wchar: b.wchar - a.wchar,
    write_bytes: b.write_bytes - a.write_bytes,
    cancelled_write_bytes: b.cancelled_write_bytes - a.cancelled_write_bytes,
    rchar: b.rchar - a.rchar,
    read_bytes: b.read_bytes - a.read_bytes,
  };
}

/** Apparent bytes of all files under dir (like `du -sb`). */
export function dirBytes(dir: string): number {
  let total = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += dirBytes(p);
    else if (e.isFile()) total += fs.statSync(p).size;
  }
  return total;
}

export function fileBytes(path: string): number {
  try {
    return fs.statSync(path).size;
  } catch {
    return 0;
  }
}

export type IoCategory = 'data' | 'manifest' | 'snapshot' | 'other';

function categorize(path: string): IoCategory {
  if (path.endsWith('.parquet') || path.endsWith('.avro') || /\/bucket-\d+\//.test(path)) return 'data';
  if (path.includes('/manifest/')) return 'manifest';
  if (path.includes('/snapshot/') || path.includes('/tag/')) return 'snapshot';
  return 'other';
}

export interface IoCounts {
  written: Record<IoCategory, number>;
  read: Record<IoCategory, number>;
  filesWritten: Record<IoCategory, number>;
  removed: number;
}

const zero = (): Record<IoCategory, number> => ({ data: 0, manifest: 0, snapshot: 0, other: 0 });

/**
 * A FileIO that forwards to the local one and counts bytes by kind of file. Every table file is
 * written through FileIO (core/lsm/file-io.ts), so `written` is the sum of the sizes of all files
 * ever written — those later deleted by compaction or expiration included.
 */
export class CountingFileIO extends ForwardingFileIO {
  counts: IoCounts = { written: zero(), read: zero(), filesWritten: zero(), removed: 0 };
  constructor(inner: FileIO = localFileIO) {
    super(inner);
  }
  reset(): void {
    this.counts = { written: zero(), read: zero(), filesWritten: zero(), removed: 0 };
  }
  totalWritten(): number {
    const w = this.counts.written;
    return w.data + w.manifest + w.snapshot + w.other;
  }
  private wrote(path: string, n: number): void {
    const c = categorize(path);
    this.counts.written[c] += n;
    this.counts.filesWritten[c]++;
  }
  override readFile(path: string): Buffer {
    const b = this.inner.readFile(path);
    this.counts.read[categorize(path)] += b.length;
    return b;
  }
  override readFileIfExists(path: string): Buffer | undefined {
    const b = this.inner.readFileIfExists(path);
    if (b) this.counts.read[categorize(path)] += b.length;
    return b;
  }
  override writeNew(path: string, data: Uint8Array): void {
    this.inner.writeNew(path, data);
    this.wrote(path, data.length);
  }
  override createAtomic(path: string, data: Uint8Array): boolean {
    const ok = this.inner.createAtomic(path, data);
    if (ok) this.wrote(path, data.length);
    return ok;
  }
  override replaceAtomic(path: string, data: Uint8Array): void {
    this.inner.replaceAtomic(path, data);
    this.wrote(path, data.length);
  }
  override remove(path: string): void {
    this.inner.remove(path);
    this.counts.removed++;
  }
}

export function packageVersion(root: string, name: string): string {
  try {
    return JSON.parse(fs.readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version as string;
  } catch {
    return 'unknown';
  }
}

export const nowMs = (): number => performance.now();
