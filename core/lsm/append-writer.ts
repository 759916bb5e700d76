// The writer of an append table (no primary key; Paimon's AppendOnlyWriter + bucket-unaware
// compaction). `Table.newWriter()` returns one for append tables; it is a TableWriter, so tags,
// expiration, rollback and the writer lock are the same code, and only the row path differs:
//
//   - `write(row)` checks the row's values and appends them to column arrays of its
//     (partition, bucket): no key, no sort, no merge — appends are cheap. `bucket = -1` puts every
//     row in bucket 0 of its partition; `bucket = N` hashes `bucket-key`.
//   - a flush writes each buffer as level-0 files (format of level 0, `file.format.per.level`),
//     rolled at `target-file-size`; rows get consecutive sequence numbers per bucket, so a file's
//     rows are exactly minSeq..maxSeq and reads order files by sequence number.
//   - `commit()` is one APPEND snapshot (manifest `_TOTAL_BUCKETS` = the bucket option, -1 for
//     unaware), then — unless `write-only` — a COMPACT snapshot if some bucket has at least
//     APPEND_COMPACT_MIN_FILES adjacent small files, which are concatenated in sequence order,
//     partition expiration (TableWriter.expirePartitions) and snapshot expiration.
// Invariant: within a bucket, live files never overlap in sequence numbers and concatenating
// them by minSeq gives the rows in write order.
//
// Deletion vectors (written by Paimon for DELETE/UPDATE on an append table with
// `deletion-vectors.enabled`; this store never deletes append rows): every snapshot keeps the
// latest one's index manifest (TableWriter.commitChanges), so deleted rows stay deleted; a
// compaction leaves the deleted positions out of the concatenated files and writes an index
// manifest without the vectors of the files it removed.

import { binaryRowEncoder } from './binary-row.ts';
import { bucketOf } from './bucket.ts';
import { formatForLevel } from './data-file-format.ts';
import { cell, writeDataFile, type RunData } from './data-file.ts';
import { corruption, invalidArgument, LsmError } from './errors.ts';
import { expireSnapshots, removeOrphanFiles, SPREAD_MARK, type ExpireResult } from './expire.ts';
import { RowKind } from './key-value.ts';
import { randomUUID } from 'node:crypto';
import { snapshotDeletionVectors } from './deletion-vector.ts';
import { ADD, DELETE, decodeIndexManifest, encodeIndexManifest, type DataFileMeta, type IndexManifestEntry, type ManifestEntry } from './manifest.ts';
import { partitionCacheKey, partitionPath } from './partition-path.ts';
import type { Table } from './table.ts';
import { FileNamer } from './table-paths.ts';
import { keptRowsRefusal, madeSnapshots, TableWriter, type CommitResult, type WriterOptions } from './table-writer.ts';
import { checkValue, loneSurrogateIn, typeToString } from './types.ts';
import { estimateValueBytes } from './write-buffer.ts';
import type { SnapshotRef } from './incremental.ts';
import type { RollbackResult } from './rollback.ts';
import { rowsPerTargetFile } from './options.ts';

/** Adjacent small files that trigger a compaction of a bucket (Paimon's compaction.min.file-num). */
export const APPEND_COMPACT_MIN_FILES = 5;
/** Files compacted at most per bucket and run (Paimon's compaction.max.file-num). */
export const APPEND_COMPACT_MAX_FILES = 50;
/** A file smaller than this fraction of target-file-size is small (compaction.small-file-ratio). */
const SMALL_FILE_RATIO = 0.7;

interface AppendBucket {
  readonly id: string;
  readonly partition: Uint8Array;
  readonly partitionPath: string;
  readonly bucket: number;
  files: DataFileMeta[];
  pending: DataFileMeta[];
  nextSeq: number;
  cols: unknown[][];
  rows: number;
  bytes: number;
}

export class AppendWriter extends TableWriter {
  private readonly appTable: Table;
  private readonly appNamer = new FileNamer();
  private readonly appBuckets = new Map<string, AppendBucket>();
  private readonly appCommitted = new Map<string, DataFileMeta[]>();
  private readonly appPartitions = new Map<string, { bytes: Uint8Array; path: string }>();
  private readonly appEncodePartition: (v: readonly unknown[]) => Uint8Array;
  private readonly appEncodeBucketKey: (v: readonly unknown[]) => Uint8Array;
  private appBufferedBytes = 0;
  /** The failure of a flush whose rows are still buffered; cleared by a flush that writes them all. */
  private appFlushFailure: LsmError | undefined;
  private appClosed = false;

  constructor(table: Table, o: WriterOptions) {
    super(table, o);
    if (table.schema.isPrimaryKeyTable) throw new Error('assertion failed: AppendWriter on a primary-key table');
    this.appTable = table;
    const schema = table.schema;
    this.appEncodePartition = binaryRowEncoder(schema.partitionTypes, true);
    this.appEncodeBucketKey = binaryRowEncoder(schema.bucketKeyIndexes.map((i) => schema.fields[i]!.type));
    this.appReload();
  }

  private appReload(): void {
    this.appBuckets.clear();
    this.appCommitted.clear();
    this.appBufferedBytes = 0;
    this.appFlushFailure = undefined;
    const latest = this.appTable.latestSnapshot();
    if (latest) for (const b of this.appTable.buckets(latest)) this.appCommitted.set(bucketId(b.partition, b.bucket), [...b.files]);
  }

  /** TableWriter's, and this writer's own bucket state: after a rollback or a partition drop. */
  protected override reinitialize(): void {
    super.reinitialize();
    this.appReload();
  }

  private appCheck(): void {
    if (this.appClosed) throw invalidArgument(`the writer of ${this.appTable.name} is closed`);
  }

  // ------------------------------------------------------------------------------------------
  // Rows.

  override writeRecord(record: Record<string, unknown>, kind: RowKind = RowKind.INSERT): void {
    // Own properties only, as TableWriter's compileRows: a column named `constructor` left out read a function.
    this.write(this.appTable.schema.fields.map((f) => (Object.hasOwn(record, f.name) ? record[f.name] : null) ?? null), kind);
  }

  override write(row: unknown[], kind: RowKind = RowKind.INSERT): void {
    this.appCheck();
    const table = this.appTable;
    const fields = table.schema.fields;
    if (kind !== RowKind.INSERT) throw invalidArgument(`append table ${table.name} takes only +I rows (it has no primary key to retract)`);
    if (row.length !== fields.length) throw invalidArgument(`row has ${row.length} values, table ${table.name} has ${fields.length} columns`);
    // After a failed flush its rows stay buffered: once they fill the buffer they are written
    // before the write takes its row, and the write is refused when that fails again (each took
    // its row and tried the flush after it, without bound).
    if (this.appFlushFailure !== undefined && this.appBufferedBytes >= table.schema.options.writeBufferBytes) {
      try {
        this.flush();
      } catch (e) {
        if (e instanceof LsmError) throw keptRowsRefusal(table, this.appBufferedBytes, e);
        throw e;
      }
    }
    let bytes = 16;
    for (let i = 0; i < fields.length; i++) {
      let v = row[i];
      if (v === undefined) v = row[i] = null;
      const problem = checkValue(fields[i]!.type, v) ?? loneSurrogateIn(fields[i]!.type, v);
      if (problem) throw invalidArgument(`column '${fields[i]!.name}' (${typeToString(fields[i]!.type)}): ${problem}`);
      bytes += estimateValueBytes(v);
    }
    const b = this.appBucketOf(row);
    for (let i = 0; i < fields.length; i++) b.cols[i]!.push(row[i]);
    b.rows++;
    b.bytes += bytes;
    this.appBufferedBytes += bytes;
    if (this.appBufferedBytes >= table.schema.options.writeBufferBytes) this.flush();
  }

  private appBucketOf(row: unknown[]): AppendBucket {
    const schema = this.appTable.schema;
    let partKey = '';
    let values: unknown[] = [];
    if (schema.partitionIndexes.length > 0) {
      values = schema.partitionIndexes.map((i) => row[i]);
      partKey = partitionCacheKey(values);
    }
    let part = this.appPartitions.get(partKey);
    if (!part) {
      this.checkPartitionValues(values);
      part = {
        bytes: this.appEncodePartition(values),
        path: partitionPath(schema.partitionIndexes.map((i) => schema.fields[i]!), values, schema.options.partitionDefaultName),
      };
      this.appPartitions.set(partKey, part);
    }
    const n = schema.options.bucket;
    const bucket = n <= 1 ? 0 : bucketOf(this.appEncodeBucketKey(schema.bucketKeyIndexes.map((i) => row[i])), n);
    const id = bucketId(part.bytes, bucket);
    let b = this.appBuckets.get(id);
    if (!b) {
      const files = this.appCommitted.get(id) ?? [];
      let maxSeq = -1;
      for (const f of files) if (f.maxSequenceNumber > maxSeq) maxSeq = f.maxSequenceNumber;
      b = { id, partition: part.bytes, partitionPath: part.path, bucket, files: [...files], pending: [], nextSeq: maxSeq + 1, cols: schema.fields.map(() => []), rows: 0, bytes: 0 };
      this.appBuckets.set(id, b);
    }
    return b;
  }

  // ------------------------------------------------------------------------------------------
  // Flush and commit.

  override flush(): void {
    this.appCheck();
    try {
      for (const b of this.appBuckets.values()) this.appFlushBucket(b);
    } catch (e) {
      // What is still held: the rows of the files not written (appFlushBucket).
      let held = 0;
      for (const b of this.appBuckets.values()) held += b.bytes;
      this.appBufferedBytes = held;
      if (e instanceof LsmError) this.appFlushFailure = e;
      throw e;
    }
    this.appBufferedBytes = 0;
    this.appFlushFailure = undefined;
  }

  override get bufferedEstimateBytes(): number {
    return this.appBufferedBytes;
  }

  private appFlushBucket(b: AppendBucket): void {
    if (b.rows === 0) return;
    const rowsPerFile = rowsPerTargetFile(this.appTable.schema.options.targetFileBytes, b.bytes, b.rows);
    let start = 0;
    try {
      for (; start < b.rows; start += rowsPerFile) {
        const end = Math.min(b.rows, start + rowsPerFile);
        const cols = start === 0 && end === b.rows ? b.cols : b.cols.map((c) => c.slice(start, end));
        b.pending.push(this.appWriteRun(b, cols, end - start, 0, 0));
      }
    } finally {
      // Only the rows written leave the buffer: after a failed file (a full disk) the next flush
      // writes the rest, and not again the files already pending.
      const left = b.rows - Math.min(start, b.rows);
      b.bytes = left === 0 ? 0 : Math.round((b.bytes * left) / b.rows);
      b.cols = left === 0 ? b.cols.map(() => []) : start === 0 ? b.cols : b.cols.map((c) => c.slice(start));
      b.rows = left;
    }
  }

  private appWriteRun(b: AppendBucket, valueCols: unknown[][], n: number, level: number, fileSource: 0 | 1, firstSeq?: number): DataFileMeta {
    const table = this.appTable;
    const seqStart = firstSeq ?? b.nextSeq;
    if (firstSeq === undefined) b.nextSeq += n;
    const seq = new Array<number>(n);
    for (let i = 0; i < n; i++) seq[i] = seqStart + i;
    const run: RunData = { rowCount: n, keyCols: [], seq, kind: new Array<number>(n).fill(RowKind.INSERT), valueCols };
    const fileName = this.appNamer.dataFile(formatForLevel(table.schema, level));
    const dir = table.paths.bucketDir(b.partitionPath, b.bucket);
    const meta = writeDataFile({ fileIO: table.fileIO, schema: table.schema, bucketDir: dir, fileName, run, level, fileSource, creationTimeMs: table.clock() });
    if (this.cacheWrites) table.cache.put(`${dir}/${fileName}`, run);
    return meta;
  }

  private appEntry(kind: 0 | 1, b: AppendBucket, file: DataFileMeta): ManifestEntry {
    return { kind, partition: b.partition, bucket: b.bucket, totalBuckets: this.appTable.schema.options.bucket, file };
  }

  /** One APPEND snapshot with every flushed file (and `properties`), then compaction and expiry. */
  override commit(properties?: Record<string, string>): CommitResult {
    this.appCheck();
    this.flush();
    const table = this.appTable;
    const adds: ManifestEntry[] = [];
    for (const b of this.appBuckets.values()) for (const f of b.pending) adds.push(this.appEntry(ADD, b, f));
    let snapshotId: number | undefined;
    const latestProps = table.latestSnapshot()?.properties ?? null;
    const changed = properties !== undefined && Object.entries(properties).some(([k, v]) => latestProps?.[k] !== v);
    if (adds.length > 0 || changed) {
      snapshotId = this.commitChanges(adds, 'APPEND', properties);
      for (const b of this.appBuckets.values()) {
        b.files.push(...b.pending);
        b.pending = [];
        this.appCommitted.set(b.id, b.files);
      }
    }
    const result: CommitResult = { snapshotId, compactSnapshotId: undefined, expire: undefined };
    if (table.schema.options.writeOnly) return result;
    return this.maintainAfterCommit(result, (step) => {
      step('compaction');
      result.compactSnapshotId = this.appCompact(false);
      // As TableWriter.commit: after the commit's own snapshots, before snapshot expiration.
      // A drop re-reads this writer's state (its reinitialize), also when a later batch failed.
      step('partition expiration');
      this.expirePartitionsInto(result);
      step('snapshot expiration');
      if (madeSnapshots(result)) result.expire = expireSnapshots(table, undefined, SPREAD_MARK);
    });
  }

  // ------------------------------------------------------------------------------------------
  // Compaction: concatenating adjacent small files.

  /** Compacts now (`full`: every bucket's files into target-size files). Returns the COMPACT snapshot id. */
  override compact(full = false): number | undefined {
    this.appCheck();
    if ([...this.appBuckets.values()].some((b) => b.rows > 0 || b.pending.length > 0)) this.appCommitPendingOnly();
    if (full) {
      const latest = this.appTable.latestSnapshot();
      if (latest) {
        for (const bf of this.appTable.buckets(latest)) {
          const id = bucketId(bf.partition, bf.bucket);
          if (!this.appBuckets.has(id)) {
            let maxSeq = -1;
            for (const f of bf.files) if (f.maxSequenceNumber > maxSeq) maxSeq = f.maxSequenceNumber;
            const path = this.appTable.partitionPathOf(bf.partition);
            this.appBuckets.set(id, { id, partition: bf.partition, partitionPath: path, bucket: bf.bucket, files: [...bf.files], pending: [], nextSeq: maxSeq + 1, cols: this.appTable.schema.fields.map(() => []), rows: 0, bytes: 0 });
          }
        }
      }
    }
    return this.appCompact(full);
  }

  private appCommitPendingOnly(): void {
    this.flush();
    const adds: ManifestEntry[] = [];
    for (const b of this.appBuckets.values()) for (const f of b.pending) adds.push(this.appEntry(ADD, b, f));
    if (adds.length === 0) return;
    this.commitChanges(adds, 'APPEND');
    for (const b of this.appBuckets.values()) {
      b.files.push(...b.pending);
      b.pending = [];
      this.appCommitted.set(b.id, b.files);
    }
  }

  /** The files of a bucket to concatenate, in sequence order, or undefined. */
  private appPick(files: DataFileMeta[], full: boolean): DataFileMeta[] | undefined {
    const target = this.appTable.schema.options.targetFileBytes;
    const sorted = [...files].sort((a, b) => a.minSequenceNumber - b.minSequenceNumber);
    if (full) return sorted.length > 1 || (sorted.length === 1 && sorted[0]!.level !== 0) ? sorted : undefined;
    let run: DataFileMeta[] = [];
    for (const f of sorted) {
      if (f.fileSize < target * SMALL_FILE_RATIO) {
        run.push(f);
        if (run.length >= APPEND_COMPACT_MAX_FILES) return run;
      } else {
        if (run.length >= APPEND_COMPACT_MIN_FILES) return run;
        run = [];
      }
    }
    return run.length >= APPEND_COMPACT_MIN_FILES ? run : undefined;
  }

  private appCompact(full: boolean): number | undefined {
    const table = this.appTable;
    const latest = table.latestSnapshot();
    const dvs = latest ? snapshotDeletionVectors(table, latest) : undefined;
    /** Removed files that had deletion vectors, per bucket key (their vectors leave the index manifest). */
    const vectorsGone = new Map<string, Set<string>>();
    const entries: ManifestEntry[] = [];
    const results: Array<{ b: AppendBucket; removed: DataFileMeta[]; added: DataFileMeta[] }> = [];
    for (const b of this.appBuckets.values()) {
      const picked = this.appPick(b.files, full);
      if (!picked) continue;
      const runs = picked.map((f) => table.loadRun(b.partition, b.bucket, f));
      const total = runs.reduce((n, r) => n + r.rowCount, 0);
      const bytes = picked.reduce((n, f) => n + f.fileSize, 0);
      const rowsPerFile = rowsPerTargetFile(table.schema.options.targetFileBytes, bytes, total);
      const added: DataFileMeta[] = [];
      const width = table.schema.fields.length;
      let cols: unknown[][] = Array.from({ length: width }, () => []);
      let n = 0;
      let firstSeq = picked[0]!.minSequenceNumber;
      const roll = () => {
        if (n === 0) return;
        added.push(this.appWriteRun(b, cols, n, 0, 1, firstSeq));
        firstSeq += n;
        cols = Array.from({ length: width }, () => []);
        n = 0;
      };
      runs.forEach((r, k) => {
        const deleted = dvs?.deleted(b.partition, b.bucket, picked[k]!.fileName);
        if (deleted && deleted.size > 0) {
          let gone = vectorsGone.get(b.id);
          if (!gone) vectorsGone.set(b.id, (gone = new Set()));
          gone.add(picked[k]!.fileName);
        }
        for (let i = 0; i < r.rowCount; i++) {
          if (deleted?.has(i)) continue;
          for (let c = 0; c < width; c++) cols[c]!.push(cell(r.valueCols[c]!, i));
          if (++n >= rowsPerFile) roll();
        }
      });
      roll();
      for (const f of picked) entries.push(this.appEntry(DELETE, b, f));
      for (const f of added) entries.push(this.appEntry(ADD, b, f));
      results.push({ b, removed: picked, added });
    }
    if (entries.length === 0) return undefined;
    if (vectorsGone.size > 0) this.nextIndexManifest = this.indexManifestWithout(latest!, vectorsGone);
    const id = this.commitChanges(entries, 'COMPACT');
    for (const { b, removed, added } of results) {
      const gone = new Set(removed.map((f) => f.fileName));
      b.files = b.files.filter((f) => !gone.has(f.fileName)).concat(added);
      for (const f of removed) table.cache.drop(table.dataFilePath(b.partition, b.bucket, f.fileName, f.externalPath));
      this.appCommitted.set(b.id, b.files);
    }
    return id;
  }

  /** A new index manifest: the latest one minus the vectors of `gone` (bucket key → data file names). */
  private indexManifestWithout(latest: { id: number; indexManifest: string | null }, gone: Map<string, Set<string>>): string | null {
    const table = this.appTable;
    const path = table.paths.manifestFile(latest.indexManifest!);
    const bytes = table.fileIO.readFileIfExists(path);
    if (bytes === undefined) throw corruption(path, `index manifest of snapshot ${latest.id} is missing`);
    const next: IndexManifestEntry[] = [];
    for (const e of decodeIndexManifest(bytes, path)) {
      if (e.kind !== ADD) continue;
      const files = gone.get(bucketId(e.partition, e.bucket));
      if (e.indexType !== 'DELETION_VECTORS' || !files || !e.dvRanges) {
        next.push(e);
        continue;
      }
      const ranges = e.dvRanges.filter((r) => !files.has(r.dataFileName));
      if (ranges.length > 0) next.push({ ...e, dvRanges: ranges, rowCount: ranges.length });
    }
    if (next.length === 0) return null;
    const name = `index-manifest-${randomUUID()}-0`;
    table.fileIO.mkdirs(table.paths.manifestDir);
    table.fileIO.writeNew(table.paths.manifestFile(name), encodeIndexManifest(next, table.schema.options.manifestCompression));
    return name;
  }

  // ------------------------------------------------------------------------------------------
  // Lifecycle.

  override expire(): ExpireResult {
    this.appCheck();
    return expireSnapshots(this.appTable, this.appPendingPaths());
  }

  /** As TableWriter's, keeping this writer's flushed files that the next commit will name. */
  override removeOrphanFiles(olderThanMs: number): string[] {
    this.appCheck();
    return removeOrphanFiles(this.appTable, olderThanMs, this.appPendingPaths());
  }

  /** Paths of the files flushed and not committed yet: no snapshot references them, no sweep may take them. */
  private appPendingPaths(): Set<string> {
    const pending = new Set<string>();
    for (const b of this.appBuckets.values()) for (const f of b.pending) pending.add(this.appTable.dataFilePath(b.partition, b.bucket, f.fileName, f.externalPath));
    return pending;
  }

  override rollbackTo(to: SnapshotRef, o: { keepHistory?: boolean } = {}): RollbackResult {
    this.appCheck();
    for (const b of this.appBuckets.values()) {
      if (b.rows > 0 || b.pending.length > 0) throw invalidArgument(`the writer of ${this.appTable.name} has uncommitted rows; commit them (or close the writer) before a rollback`);
    }
    const r = super.rollbackTo(to, o);
    this.appReload();
    return r;
  }

  override close(): void {
    this.appClosed = true;
    super.close();
  }
}

function bucketId(partition: Uint8Array, bucket: number): string {
  return `${Buffer.from(partition).toString('hex')}/${bucket}`;
}
