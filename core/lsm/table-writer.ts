// The single writer of a table (Paimon's MergeTreeWriter + FileStoreCommit, one per table).
//
// Write path: a row gets its partition and bucket (Paimon's hash of the bucket key), the next
// sequence number of that bucket, and is merged into the bucket's write buffer. When the buffers
// pass `write-buffer-size` they flush: each bucket's buffer becomes one sorted level-0 file.
// `commit()` flushes, writes a manifest with the new files, the base and delta manifest lists,
// and creates `snapshot-N` atomically (APPEND). Then, unless `write-only`, it compacts the
// buckets the universal picker chooses (one COMPACT snapshot) — or, with `compaction: 'deferred'`,
// plans that compaction for the caller to run in `compactStep` slices —, drops expired partitions
// (`partition.expiration-time`, OVERWRITE snapshots: partition-expire.ts) and expires old snapshots.
//
// Invariants: sequence numbers grow strictly per bucket across restarts (they resume from the
// largest in the bucket's live files); a file is referenced only after it is fully written and
// fsynced; nothing a commit did not reference is ever needed by a reader (crash leftovers are
// orphans, removed by expiration or orphan cleanup).

import { randomUUID } from 'node:crypto';
import { binaryRowEncoder } from './binary-row.ts';
import { bucketOf } from './bucket.ts';
import { RunsMerge } from './compaction/compact-merge.ts';
import { RunBuilder } from './compaction/run-builder.ts';
import { planCompaction, type CompactStep } from './compaction/compact-plan.ts';
import { fullCompaction, pickUniversal, type CompactUnit } from './compaction/universal-compaction.ts';
import { lookupPolicy, olderRecords } from './compaction/lookup-levels.ts';
import { foldsLowestLevelOnly, forceLookup } from './merge/lookup-rule.ts';
import { kvAt, runFromRecords, writeDataFile, type RunData, type RunParts } from './data-file.ts';
import { corruption, invalidArgument, isCorruption, LsmError, notSupported } from './errors.ts';
import { expireSnapshots, removeOrphanFiles, SPREAD_MARK, type ExpireResult } from './expire.ts';
import { isAdd, RowKind, type KeyValue } from './key-value.ts';
import { bucketNumLevels, checkBucketLevels, highestNonEmptyLevel, lastFullCompactionLevel, type LevelSortedRun } from './levels.ts';
import { ADD, DELETE, decodeIndexManifest, encodeIndexManifest, type DataFileMeta, type ManifestEntry } from './manifest.ts';
import { MANIFEST_MERGE_MIN_COUNT } from './manifest-store.ts';
import { createMergeFunction, mergeOrder, type MergeFunction } from './merge/merge-function.ts';
import { mergeRuns } from './merge-reader.ts';
import { partitionCacheKey, partitionPath } from './partition-path.ts';
import { SNAPSHOT_VERSION, type Snapshot } from './snapshot.ts';
import type { Table } from './table.ts';
import { FileNamer } from './table-paths.ts';
import { checkValue, comparatorFor, isWellFormedString, loneSurrogateIn, typeToString, type DataType } from './types.ts';
import { foldSortsAtLast, WriteBuffer } from './write-buffer.ts';
import type { TableSchema } from './schema.ts';
import { WriterLock } from './writer-lock.ts';
import { deletionVectorsEnabled } from './deletion-vector.ts';
import { checkDvWritable, DeletionVectorState, promoteLevel0 } from './dv-writer.ts';
import { checkWritableOptions } from './write-options.ts';
import { rowsPerTargetFile } from './options.ts';
import { formatForLevel } from './data-file-format.ts';
import { ChangelogWriter, type BucketChanges } from './changelog.ts';
import { diffBuckets, type SnapshotRef } from './incremental.ts';
import { rollbackAsLatestEntries, rollbackChanges, rollbackDestructive, rollbackWithoutWriter, type RollbackResult } from './rollback.ts';
import {
  batchesOf,
  partitionExpireConfig,
  PartitionExpireClock,
  partitionExpireNowConfig,
  type PartitionExpireArguments,
  partitionsOf,
  selectExpired,
  strictPartitionCheck,
  type PartitionExpireConfig,
  type PartitionSkip,
} from './partition-expire.ts';
import { partitionValueText } from './partition-path.ts';

export interface WriterOptions {
  /** Recorded as the snapshots' `commitUser` (default: a random UUID per writer). */
  commitUser?: string;
  /**
   * Whether the files this writer writes (flushes, compaction outputs) are put into the run cache,
   * so the first read after them needs no decode (default true). False for a table written much
   * and read little — a site's dead letters in a flood would otherwise fill the cache the state
   * tables are read from.
   */
  cacheWrites?: boolean;
  /**
   * When a commit's compaction runs. 'inline' (default): before `commit()` returns. 'deferred': a
   * commit only plans it, and the caller runs it in slices with `compactStep(budgetMs)` between its
   * other work; when done it commits its own COMPACT snapshot (Paimon's asynchronous compaction,
   * here on the caller's thread). Meanwhile writes and commits go on as usual; a commit that finds
   * a bucket at `num-sorted-run.stop-trigger` runs the rest at once (the writer's backpressure),
   * and `compact()` finishes it first. Only where a compaction may leave files as they are
   * (primary-key tables without deletion vectors, changelog producer none or input, not
   * first-row, no `full-compaction.delta-commits`, no `force-lookup`).
   */
  compaction?: 'inline' | 'deferred';
  /**
   * Told what a commit's maintenance could not do and went on without: a partition that
   * `partition.expiration-time` would judge but whose values give no time (Java logs a warning
   * and keeps it; the same goes into `CommitResult.partitions`), and a compaction or expiration
   * after the commit's snapshot that failed (`CommitResult.maintenanceError`). Default:
   * `process.emitWarning` (codes `TILSTAND_PARTITION_EXPIRE`, `TILSTAND_COMMIT_MAINTENANCE`).
   */
  onWarning?: (message: string) => void;
  /**
   * The random source of the first partition-expiration check (`partition.expiration-time`): it
   * falls `random()` × the check interval (whole seconds) after the writer opens, as Java's
   * NormalPartitionExpire. Default Math.random; a replay gives a seeded one to stay repeatable.
   */
  partitionExpireRandom?: () => number;
}

/** What a commit's partition expiration did (`partition.expiration-time`; DESIGN.md, "Partition expiration"). */
export interface PartitionExpireResult {
  /** The OVERWRITE snapshots that dropped them, one per batch (`partition.expiration-batch-size`). */
  snapshotIds: number[];
  /** The dropped partitions as their directories (`dt=2026-12-01`), in the order dropped. */
  dropped: string[];
  /** Partitions kept because no time could be told from them, with why (each also told to `onWarning`). */
  skipped: PartitionSkip[];
}

/** What an expiration on demand may be given (`TableWriter.expirePartitionsNow`, `Table.expirePartitions`). */
export interface ExpirePartitionsOptions extends PartitionExpireArguments {
  /** Select and report, write nothing. */
  dryRun?: boolean;
}

/** What an expiration on demand did (or, with `dryRun`, would do). */
export interface ExpirePartitionsResult {
  dryRun: boolean;
  /** The expired partitions as their directories (`dt=2026-12-01`), in the order dropped (or that they would be). */
  partitions: string[];
  /** The OVERWRITE snapshots written, one per batch (`partition.expiration-batch-size`); [] with `dryRun` or when none expired. */
  snapshotIds: number[];
  /** Partitions kept because no time could be told from them, with why. */
  skipped: PartitionSkip[];
}

interface BucketState {
  readonly id: string;
  readonly partition: Uint8Array;
  readonly partitionPath: string;
  readonly bucket: number;
  /** Committed live files. */
  files: DataFileMeta[];
  /** Flushed, not yet committed. */
  pending: DataFileMeta[];
  /** Drained from the buffer, not yet written: a flush failed (a full disk); the next one writes them first. */
  drained: RunData[];
  /** The buffer's estimated bytes when `drained` was drained: counted in the writer's buffered bytes until written. */
  drainedBytes: number;
  nextSeq: number;
  readonly buffer: WriteBuffer;
}

/** What `compactStep` did. */
export interface CompactStepResult {
  /**
   * No compaction is left to run (none was planned, or this step finished and committed it and
   * no full compaction was asked for meanwhile: `requestFullCompaction`).
   */
  done: boolean;
  /** The COMPACT snapshot this step committed, if any (also with `done` false: a full compaction follows it). */
  snapshotId?: number;
  expire?: ExpireResult;
}

export interface CommitResult {
  /** The APPEND snapshot, or undefined when there was nothing to commit. */
  snapshotId: number | undefined;
  /** The COMPACT snapshot that followed, if any. */
  compactSnapshotId: number | undefined;
  expire: ExpireResult | undefined;
  /** Set when this commit checked for expired partitions (at most once per `partition.expiration-check-interval`). */
  partitions?: PartitionExpireResult;
  /**
   * The failure of the maintenance after the commit's own snapshot (compaction, partition or
   * snapshot expiration), also told to the writer's `onWarning`. The commit stands: `snapshotId`
   * and its properties are committed, and the next commit tries the maintenance again.
   */
  maintenanceError?: LsmError;
}

/**
 * The refusal of a write whose row is not taken because `why` (what could not be written first),
 * with `failure`'s kind, naming it: the one error of `write` that leaves the row out (core/lsm
 * DESIGN.md, write path, step 3).
 */
function rowNotTaken(table: Table, why: string, failure: LsmError): LsmError {
  return new LsmError(failure.kind, `table ${table.name}: write refused, the row not taken: ${why}: ${failure.message}`, { path: failure.path, cause: failure });
}

/**
 * The refusal of a write (its row not taken) while the rows a failed flush kept (`keptBytes`,
 * estimated) fill the table's `write-buffer-size` and cannot be written (`failure`).
 */
export function keptRowsRefusal(table: Table, keptBytes: number, failure: LsmError): LsmError {
  const limit = table.schema.options.writeBufferBytes;
  return rowNotTaken(table, `the rows a failed flush kept (about ${keptBytes} bytes) fill 'write-buffer-size' (${limit} bytes) and could not be written`, failure);
}

/** Whether the commit made a snapshot of any kind (snapshot expiration runs only then). */
export function madeSnapshots(r: CommitResult): boolean {
  return r.snapshotId !== undefined || r.compactSnapshotId !== undefined || (r.partitions?.snapshotIds.length ?? 0) > 0;
}

/** A file smaller than this fraction of target-file-size is merged, not upgraded (Paimon's compaction.small-file-ratio). */
const SMALL_FILE_RATIO = 0.7;

/** Thrown inside a compaction that must include the bottom level to stay correct. */
class NeedsFullCompaction extends Error {}

/** Keys a stepped merge merges between two looks at the clock. */
const MERGE_STEP_KEYS = 256;

/** A merge of some runs into new files, in steps (TableWriter.mergeJob). */
interface MergeJob {
  /** Merges until done (true) or `deadline` (performance.now() ms) has passed (false). */
  advance(deadline: number): boolean;
  /** The files written so far: all of them once `advance` returned true. */
  readonly out: DataFileMeta[];
}

/** A bucket's compaction, in steps (TableWriter.bucketCompaction). */
interface BucketCompaction {
  /** Runs until done (true) or `deadline` (performance.now() ms) has passed (false). */
  advance(deadline: number): boolean;
  /** Files leaving the bucket's file list and joining it: complete once `advance` returned true. */
  readonly removed: DataFileMeta[];
  readonly added: DataFileMeta[];
  /** Files written so far, none of them committed yet. */
  written(): readonly DataFileMeta[];
  /** Removes the files written so far; the compaction is not run further. */
  abandon(): void;
}

interface CompactedBucket {
  readonly s: BucketState;
  readonly removed: readonly DataFileMeta[];
  readonly added: readonly DataFileMeta[];
}

export class TableWriter {
  private readonly table: Table;
  private readonly lock: WriterLock;
  private readonly namer = new FileNamer();
  private readonly commitUser: string;
  /** WriterOptions.cacheWrites. */
  protected readonly cacheWrites: boolean;
  private readonly buckets = new Map<string, BucketState>();
  private readonly committed: Map<string, { partition: Uint8Array; bucket: number; files: DataFileMeta[] }>;
  private readonly partitions = new Map<string, { bytes: Uint8Array; path: string; hex: string }>();
  private onlyState: BucketState | undefined;
  private readonly mergeFn: MergeFunction;
  /** Per-schema compiled row access and validation (see `compiled`). */
  private compiledRows: CompiledRows | undefined;
  private readonly encodePartition: (v: readonly unknown[]) => Uint8Array;
  private readonly encodeBucketKey: (v: readonly unknown[]) => Uint8Array;
  /** Estimated bytes of the rows held: the buffers' and those a failed flush kept (`drained`). */
  private bufferedBytes = 0;
  /** The failure of a flush whose rows are still kept; cleared once a flush writes every bucket's. */
  private flushFailure: LsmError | undefined;
  private commitIdentifier = 0;
  /** partial-update with no rule for -D/-U: refuse them at the door, before they reach a file. */
  private readonly refusesRetractions: boolean;
  private closed = false;
  private committing = false;
  /** The stage, kind and code of the maintenance failure warned last, until a maintenance goes through (`maintainAfterCommit`). */
  private maintenanceWarned: string | undefined;
  /** The message of the stop trigger's merge refusal warned last, until one goes through (`relieveStopTrigger`). */
  private stopTriggerWarned: string | undefined;
  /** Changelog producer (changelog.ts); inert when `changelog-producer` is none. */
  private readonly changelog: ChangelogWriter;
  /** Deletion-vector state (dv-writer.ts); undefined unless `deletion-vectors.enabled` on a primary-key table. */
  private readonly dv: DeletionVectorState | undefined;
  /** DV tables with the lookup producer: the changelog `promoteLevel0` found, for the next APPEND. */
  private dvChangelog: BucketChanges[] | undefined;
  /** DV tables: what `promoteLevel0` did per bucket, applied to the buckets once its snapshot is made. */
  private promoted: { s: BucketState; removed: DataFileMeta[]; added: DataFileMeta[] }[] = [];
  /**
   * Append tables: the index manifest (deletion vectors Paimon wrote) of the next snapshot when it
   * is not the latest snapshot's — set by append compaction and rollback as latest.
   */
  protected nextIndexManifest: string | null | undefined;
  /** APPEND snapshots since the last full compaction of every bucket (`full-compaction.delta-commits`). */
  private commitsSinceFull = 0;
  /** WriterOptions.compaction is 'deferred'. */
  private readonly deferred: boolean;
  /** A full compaction was asked for (`requestFullCompaction`) and is not yet planned. */
  private fullWanted = false;
  /** The deferred compaction planned by a commit and not yet committed (one task per bucket). */
  private round: { readonly tasks: { s: BucketState; c: BucketCompaction }[]; next: number; readonly results: CompactedBucket[]; readonly changelog: ManifestEntry[] } | undefined;
  /** `partition.expiration-time` of a partitioned table that is not write-only, and when this writer checks next. */
  private readonly partitionExpire: { readonly config: PartitionExpireConfig; readonly clock: PartitionExpireClock } | undefined;
  /** `partition.timestamp-format.strict`: the check of a new partition's values, else undefined. */
  private readonly strictPartition: ((texts: readonly (string | null)[]) => string | undefined) | undefined;
  /** `onWarning`, or a process warning with `code` when the writer was given none. */
  private readonly warn: (message: string, code: string) => void;

  constructor(table: Table, o: WriterOptions) {
    this.table = table;
    this.lock = WriterLock.acquire(table.paths.lockFile, `table ${table.name}`);
    table.snapshots.invalidate(); // snapshots read before the lock may have been rolled back and re-used since
    try {
      table.snapshots.repairLatestHint();
      this.commitUser = o.commitUser ?? randomUUID();
      this.cacheWrites = o.cacheWrites !== false;
      if (o.compaction !== undefined && o.compaction !== 'inline' && o.compaction !== 'deferred') {
        throw invalidArgument(`writer option 'compaction': expected 'inline' or 'deferred', got ${JSON.stringify(o.compaction)}`);
      }
      this.deferred = o.compaction === 'deferred';
      this.changelog = new ChangelogWriter(table, () => this.namer.changelogFile('parquet'));
      const schema = table.schema;
      this.mergeFn = createMergeFunction(schema);
      const so = schema.options;
      this.refusesRetractions = so.mergeEngine === 'partial-update' && !so.ignoreDelete && !so.removeRecordOnDelete && so.sequenceGroups.length === 0;
      this.encodePartition = binaryRowEncoder(schema.partitionTypes, true);
      this.encodeBucketKey = binaryRowEncoder(schema.bucketKeyIndexes.map((i) => schema.fields[i]!.type));
      const latest = table.latestSnapshot();
      if (deletionVectorsEnabled(so.raw)) checkDvWritable(schema, `writing table ${table.name}`);
      // A table Java made may carry options a write here would not honour (write-options.ts).
      checkWritableOptions(schema, `writing table ${table.name}`);
      // Append tables accept the option and keep no vectors: no row of theirs is ever deleted here.
      this.dv = deletionVectorsEnabled(so.raw) && schema.isPrimaryKeyTable ? new DeletionVectorState(table) : undefined;
      if (this.deferred) {
        const why =
          !schema.isPrimaryKeyTable ? 'it has no primary key'
          : this.dv ? "it has 'deletion-vectors.enabled'"
          : so.changelogProducer !== 'none' && so.changelogProducer !== 'input' ? `its 'changelog-producer' is ${so.changelogProducer}`
          : so.mergeEngine === 'first-row' ? "its 'merge-engine' is first-row"
          : forceLookup(so.raw) ? "it has 'force-lookup'"
          : so.fullCompactionDeltaCommits !== undefined ? "it has 'full-compaction.delta-commits'"
          : undefined;
        if (why) throw invalidArgument(`writer option 'compaction': 'deferred' needs a compaction that may leave files as they are, and table ${table.name} cannot (${why}); use 'inline'`);
      }
      // Java skips partition expiration in a write-only writer (its TableCommitImpl gets none) and
      // in an unpartitioned table, where it reads none of these options either.
      const expires = !so.writeOnly && schema.partitionKeys.length > 0 && so.raw['partition.expiration-time'] !== undefined;
      const expireConfig = expires ? partitionExpireConfig(so.raw, true) : undefined;
      this.partitionExpire = expireConfig && { config: expireConfig, clock: new PartitionExpireClock(expireConfig.checkIntervalMs, table.clock(), o.partitionExpireRandom) };
      this.strictPartition = strictPartitionCheck(so.raw, schema.partitionKeys);
      const onWarning = o.onWarning;
      this.warn = onWarning ? (m) => onWarning(m) : (m, code) => process.emitWarning(m, { code });
      this.committed = new Map();
      if (latest) {
        for (const b of table.buckets(latest)) {
          if (b.totalBuckets !== schema.options.bucket && b.totalBuckets > 0) {
            throw invalidArgument(`table ${table.name} has files written for ${b.totalBuckets} buckets, but option 'bucket' is ${schema.options.bucket}`);
          }
          this.committed.set(`${Buffer.from(b.partition).toString('hex')}/${b.bucket}`, { partition: b.partition, bucket: b.bucket, files: [...b.files] });
        }
      }
    } catch (e) {
      this.lock.release();
      throw e;
    }
  }

  private check(): void {
    if (this.closed) throw invalidArgument(`the writer of ${this.table.name} is closed`);
  }

  // ------------------------------------------------------------------------------------------
  // Writing rows.

  /** Writes a row given by column name (a missing column is null). Values in memory form. */
  writeRecord(record: Record<string, unknown>, kind: RowKind = RowKind.INSERT): void {
    this.write(this.compiled().rowOf(record), kind);
  }

  /** Row extraction and validators compiled for the current schema (it changes with alterTable). */
  private compiled(): CompiledRows {
    const schema = this.table.schema;
    let c = this.compiledRows;
    if (c === undefined || c.schema !== schema) c = this.compiledRows = compileRows(schema);
    return c;
  }

  /**
   * Writes a row with every column in schema order. Values in memory form (types.ts). An LsmError
   * it throws says whether the row was taken (`rowTaken`): a refusal leaves the writer as it was; a
   * failure after the take (a flush on a full disk) leaves the row held for the next flush or commit.
   */
  write(row: unknown[], kind: RowKind = RowKind.INSERT): void {
    let taken = false;
    try {
      this.check();
      if (this.flushFailure !== undefined && this.bufferedBytes >= this.table.schema.options.writeBufferBytes) this.flushOrRefuse();
      const c = this.compiled();
      const schema = c.schema;
      const fields = schema.fields;
      if (row.length !== fields.length) throw invalidArgument(`row has ${row.length} values, table ${this.table.name} has ${fields.length} columns`);
      if (!(kind >= 0 && kind <= 3)) throw invalidArgument(`row kind must be 0..3 (+I, -U, +U, -D), got ${kind}`);
      const accepts = c.accepts;
      for (let i = 0; i < accepts.length; i++) {
        let v = row[i];
        if (v === undefined) row[i] = v = null;
        if (accepts[i]!(v)) continue;
        const problem = checkValue(fields[i]!.type, v) ?? loneSurrogateIn(fields[i]!.type, v);
        if (problem) throw invalidArgument(`column '${fields[i]!.name}' (${typeToString(fields[i]!.type)}): ${problem}`);
      }
      if (kind === RowKind.DELETE || kind === RowKind.UPDATE_BEFORE) {
        // Paimon's TableWriteImpl drops these before the writer (RowKindFilter): no file, no
        // sequence number, and no changelog — the `input` changelog would list them, the `lookup`
        // one a -U/+U pair of an unchanged row.
        const o = schema.options;
        if (o.ignoreDelete || (kind === RowKind.UPDATE_BEFORE && o.ignoreUpdateBefore)) return;
        if (this.refusesRetractions) {
          throw invalidArgument(
            `partial-update table ${this.table.name} cannot take a ${kind === RowKind.DELETE ? '-D' : '-U'} record; ` +
              "set 'ignore-delete', 'partial-update.remove-record-on-delete', or sequence groups ('fields.<seq>.sequence-group')",
          );
        }
        const refusal = this.mergeFn.retractionRefusal?.(kind);
        if (refusal !== undefined) throw invalidArgument(`table ${this.table.name} cannot take a ${kind === RowKind.DELETE ? '-D' : '-U'} record: ${refusal}`);
      }
      const state = this.bucketState(row);
      const seq = state.nextSeq++;
      const buffer = state.buffer;
      let before = buffer.estimatedBytes;
      let flushFailure: LsmError | undefined;
      if (!buffer.add(row, seq, kind)) {
        // The flush takes what it drained off `bufferedBytes`: counted from the emptied buffer, not
        // taken off twice (the count fell below what the buffer held, to 0 with a row in it).
        flushFailure = this.flushToTake(state);
        before = buffer.estimatedBytes;
        buffer.add(row, seq, kind);
      }
      // The row is in the buffer: what fails from here on fails after the take (DESIGN.md, write path, step 3).
      taken = true;
      if (c.changelogInput) this.changelog.onInput(state, { key: schema.keyIndexes.map((i) => row[i]), seq, kind, value: row });
      this.bufferedBytes += buffer.estimatedBytes - before;
      if (flushFailure !== undefined) throw flushFailure;
      if (this.bufferedBytes >= schema.options.writeBufferBytes) {
        this.flush();
        this.relieveStopTrigger();
      }
    } catch (e) {
      // A caller must tell a row refused for what it is (or for the kept rows of a failed flush)
      // from one the writer holds while its disk fails, without reading the message.
      if (e instanceof LsmError) e.rowTaken = taken;
      throw e;
    }
  }

  /** `partition.timestamp-format.strict`: InvalidArgument when a new partition's values give no time (Java's PartitionTimestampValidator, at write). */
  protected checkPartitionValues(values: readonly unknown[]): void {
    if (!this.strictPartition) return;
    const schema = this.table.schema;
    const problem = this.strictPartition(values.map((v, i) => partitionValueText(schema.partitionTypes[i]!, v)));
    if (problem) throw invalidArgument(`table ${this.table.name}: ${problem}`);
  }

  private bucketState(row: unknown[]): BucketState {
    // Unpartitioned single-bucket tables (most site tables) have one state: skip the hashing.
    if (this.onlyState) return this.onlyState;
    const schema = this.table.schema;
    let part: { bytes: Uint8Array; path: string; hex: string };
    if (schema.partitionIndexes.length > 0) {
      const values = schema.partitionIndexes.map((i) => row[i]);
      const pk = partitionCacheKey(values);
      let p = this.partitions.get(pk);
      if (!p) {
        this.checkPartitionValues(values);
        const bytes = this.encodePartition(values);
        p = {
          bytes,
          hex: Buffer.from(bytes).toString('hex'),
          path: partitionPath(schema.partitionIndexes.map((i) => schema.fields[i]!), values, schema.options.partitionDefaultName),
        };
        this.partitions.set(pk, p);
      }
      part = p;
    } else {
      let p = this.partitions.get('');
      if (!p) {
        const bytes = this.encodePartition([]);
        p = { bytes, hex: Buffer.from(bytes).toString('hex'), path: '' };
        this.partitions.set('', p);
      }
      part = p;
    }
    const n = schema.options.bucket;
    const bucket = n === 1 ? 0 : bucketOf(this.encodeBucketKey(schema.bucketKeyIndexes.map((i) => row[i])), n);
    const id = `${part.hex}/${bucket}`;
    let s = this.buckets.get(id);
    if (!s) {
      const files = this.committed.get(id)?.files ?? [];
      // A writer that compacts takes the bucket's levels now, as Java's opens the bucket's Levels
      // at its first write: refused naming 'num-levels' when there would be fewer than 2.
      if (!schema.options.writeOnly) checkBucketLevels(schema.options.numLevels, files, bucketName(part.path, bucket));
      let maxSeq = -1;
      for (const f of files) if (f.maxSequenceNumber > maxSeq) maxSeq = f.maxSequenceNumber;
      const merge = createMergeFunction(schema);
      const pu = merge.resetThenAdded !== undefined;
      s = {
        id,
        partition: part.bytes,
        partitionPath: part.path,
        bucket,
        files: [...files],
        pending: [],
        drained: [],
        drainedBytes: 0,
        nextSeq: maxSeq + 1,
        buffer: new WriteBuffer(schema.keyIndexes, schema.keyTypes, merge, schema.sequenceFieldIndexes.length > 0, pu ? () => merge.resetThenAdded!() : undefined, schema.fields.map((f) => f.type)),
      };
      this.buckets.set(id, s);
      if (schema.partitionIndexes.length === 0 && n === 1) this.onlyState = s;
    }
    return s;
  }

  // ------------------------------------------------------------------------------------------
  // Flush and commit.

  /** Writes every buffer as a level-0 file; the files become visible at the next commit. */
  flush(): void {
    this.check();
    for (const s of this.buckets.values()) this.flushBucket(s);
    this.bufferedBytes = 0;
    this.flushFailure = undefined;
  }

  private flushBucket(s: BucketState): void {
    try {
      this.changelog.onFlush(s);
      if (!s.buffer.isEmpty) {
        const schema = this.table.schema;
        // Still held once drained, and counted (in `bufferedBytes`) until written.
        s.drainedBytes += s.buffer.estimatedBytes;
        // Usually one run; with `sequence.field` a key whose records cannot fold as one gives its
        // later parts to later runs (WriteBuffer.drainRuns), written as consecutive level-0 files.
        s.drained.push(...s.buffer.drainRuns(schema.fields.length, mergeOrder(schema)));
      }
      // A run leaves `drained` only once its file is written: after a failed write the rows are
      // still there for the next flush or commit (they were lost, and a retried commit succeeded
      // without them).
      while (s.drained.length > 0) {
        s.pending.push(this.writeRun(s, s.drained[0]!, 0, 0));
        s.drained.shift();
      }
    } catch (e) {
      if (e instanceof LsmError) this.flushFailure = e;
      throw e;
    }
    this.bufferedBytes = Math.max(0, this.bufferedBytes - s.drainedBytes);
    s.drainedBytes = 0;
  }

  /**
   * Flushes bucket `s` for a record that cannot fold into the one its key holds in the buffer.
   * Returns the flush's failure (a full disk) when the buffer was drained before it: the drained
   * records are kept for the next flush and the buffer is empty, so the write takes its row and
   * throws the failure after (it threw before taking the row, which a caller read as taken).
   * A failure before the drain (the `input` changelog's file) leaves the key's record in the
   * buffer: the write is refused, its row not taken.
   */
  private flushToTake(s: BucketState): LsmError | undefined {
    try {
      this.flushBucket(s);
      return undefined;
    } catch (e) {
      if (!(e instanceof LsmError)) throw e;
      if (s.buffer.isEmpty) return e;
      throw rowNotTaken(this.table, 'it cannot fold into the record its key holds in the write buffer, and that record could not be written', e);
    }
  }

  /**
   * After a failed flush, before a write takes its row: once the rows held (those the flush kept,
   * and any written since) fill `write-buffer-size`, they are flushed first, and the write is
   * refused — its row not taken — when that fails again. A write took its row and only then tried
   * the flush, so a caller that kept writing to a full disk grew memory without bound. Nothing
   * else may fail here: a failure of anything but the refusal, thrown before the row is taken,
   * would read as a write that failed after taking it (the stop trigger's merge waits for the
   * next full buffer, after its write has taken its row).
   */
  private flushOrRefuse(): void {
    try {
      this.flush();
    } catch (e) {
      if (e instanceof LsmError) throw keptRowsRefusal(this.table, this.bufferedBytes, e);
      throw e;
    }
  }

  private writeRun(s: BucketState, run: RunData, level: number, fileSource: 0 | 1): DataFileMeta {
    const fileName = this.namer.dataFile(formatForLevel(this.table.schema, level)); // file.format.per.level
    const dir = this.table.paths.bucketDir(s.partitionPath, s.bucket);
    const meta = writeDataFile({
      fileIO: this.table.fileIO,
      schema: this.table.schema,
      bucketDir: dir,
      fileName,
      run,
      level,
      fileSource,
      creationTimeMs: this.table.clock(),
    });
    if (this.cacheWrites) this.table.cache.put(`${dir}/${fileName}`, run);
    return meta;
  }

  /** Buffered (unflushed) estimated bytes. */
  get bufferedEstimateBytes(): number {
    return this.bufferedBytes;
  }

  /**
   * Flushes and commits everything written so far as one APPEND snapshot, then compacts and
   * expires (unless `write-only`). Returns the snapshots made.
   *
   * `properties` are stored in the snapshot (Paimon's `properties` map) atomically with its rows —
   * e.g. ingest's high-water marks. A commit with properties but no new rows still makes a
   * snapshot, so progress is never lost. Later snapshots (compaction) carry them forward;
   * `Table.committedProperties()` reads the latest. So does a commit of `changelog-producer=input`
   * rows the buffer folded to nothing: their changelog belongs to this snapshot (Paimon's too).
   */
  commit(properties?: Record<string, string>): CommitResult {
    this.check();
    if (this.committing) throw new Error('assertion failed: commit re-entered');
    this.committing = true;
    try {
      this.flush();
      const adds: ManifestEntry[] = this.dv ? this.promoteLevel0() : [];
      for (const s of this.buckets.values()) {
        if (!this.dv) for (const f of s.pending) adds.push(this.entry(ADD, s, f));
      }
      let snapshotId: number | undefined;
      const changed = properties !== undefined && !sameProperties(properties, this.table.latestSnapshot()?.properties ?? null);
      if (adds.length > 0 || changed || this.dv?.changed || this.hasDvChangelog() || this.changelog.hasUncommitted) {
        snapshotId = this.commitPromoted(() => this.commitChanges(adds, 'APPEND', properties));
        for (const s of this.buckets.values()) {
          s.files.push(...s.pending);
          s.pending = [];
        }
      } else this.applyPromotion();
      const result: CommitResult = { snapshotId, compactSnapshotId: undefined, expire: undefined };
      if (this.table.schema.options.writeOnly) return result;
      return this.maintainAfterCommit(result, (step) => {
        if (this.deferred) {
          // Deferred: plan a compaction when none is under way; run the rest of one at once when a
          // bucket has as many runs as the stop trigger allows.
          step('compaction');
          if (this.round && this.atStopTrigger()) result.compactSnapshotId = this.runRound(Infinity);
          // Before planning: a drop gives up a planned compaction (its inputs may be gone).
          step('partition expiration');
          this.expirePartitionsInto(result);
          step('compaction planning');
          this.round ??= this.planRound();
          step('snapshot expiration');
          if (madeSnapshots(result)) result.expire = expireSnapshots(this.table, this.uncommittedFiles(), SPREAD_MARK);
        } else {
          // `full-compaction.delta-commits`: every N APPEND snapshots, every bucket is fully compacted.
          step('compaction');
          const every = this.table.schema.isPrimaryKeyTable ? this.table.schema.options.fullCompactionDeltaCommits : undefined;
          if (every !== undefined && snapshotId !== undefined) this.commitsSinceFull++;
          const full = every !== undefined && this.commitsSinceFull >= every;
          if (full) this.addCommittedBuckets();
          result.compactSnapshotId = this.compactBuckets(full);
          // After the commit's own snapshots and before snapshot expiration, as Java's maintain().
          step('partition expiration');
          this.expirePartitionsInto(result);
          step('snapshot expiration');
          if (madeSnapshots(result)) result.expire = expireSnapshots(this.table, undefined, SPREAD_MARK);
        }
      });
    } finally {
      this.committing = false;
    }
  }

  /**
   * Runs the maintenance after a commit's own snapshot (`steps`, which fill `result` and name each
   * step as it starts). The commit stands once its snapshot is made: a failure of the store's kind
   * (an LsmError: a full disk, an unlink that fails, a lost lock) goes into
   * `result.maintenanceError` and to `onWarning`, and the next commit tries again. Thrown, it made a
   * caller retry or report lost rows that were committed (ingest stopped applying until a restart,
   * over a full disk that had passed). A damaged file (Corruption) is still thrown: reads of the
   * table fail on it too, and a caller must stop and say so rather than go on past it each commit
   * with a warning. Anything else is a bug and is thrown.
   */
  protected maintainAfterCommit(result: CommitResult, steps: (step: (name: string) => void) => void): CommitResult {
    let stage = 'maintenance';
    try {
      steps((name) => (stage = name));
      this.maintenanceWarned = undefined;
    } catch (e) {
      if (!(e instanceof LsmError) || isCorruption(e)) throw e;
      result.maintenanceError = e;
      // Warned once while it fails the same way: a site commits every few seconds, and an option
      // the maintenance refuses (InvalidArgument) or a full disk filled its log with one line per
      // commit. Again when it fails otherwise, or again after a maintenance that went through.
      // By the stage, the kind and the error code, not the message: that names the snapshot and
      // a manifest's random name, new at every commit.
      const key = `${stage}\0${e.kind}\0${errorCode(e) ?? ''}`;
      if (key === this.maintenanceWarned) return result;
      this.maintenanceWarned = key;
      const made = result.snapshotId === undefined ? 'nothing new was committed' : `snapshot ${result.snapshotId} is committed`;
      this.warn(`table ${this.table.name}: ${made}, but the ${stage} after it failed (the next commit tries again; not warned again while it fails so): ${e.message}`, 'TILSTAND_COMMIT_MAINTENANCE');
    }
    return result;
  }

  /** Partition expiration at commit (`expirePartitions`), into `result` when a check was due. */
  protected expirePartitionsInto(result: CommitResult): void {
    const partitions = this.expirePartitions();
    if (partitions) result.partitions = partitions;
  }

  /**
   * DV tables: moves every bucket's level-0 files into level 1 before the snapshot (dv-writer.ts).
   * Returns the entries of the snapshot; the buckets change only when it is made
   * (`commitPromoted`, `applyPromotion`): then their new level-1 files are in `pending`.
   */
  private promoteLevel0(): ManifestEntry[] {
    const dv = this.dv!;
    const entries: ManifestEntry[] = [];
    // The lookup changelog falls out of the promotion: it found each key's visible row before.
    const lookup = this.table.schema.options.changelogProducer === 'lookup';
    if (lookup) this.dvChangelog = [];
    try {
      for (const s of this.buckets.values()) {
        const r = promoteLevel0(this.table, dv, s, (run) => this.writeRun(s, run, 1, 0), (kind, f) => this.entry(kind, s, f));
        if (!r) continue;
        this.promoted.push({ s, removed: r.removed, added: r.added });
        if (lookup) this.dvChangelog!.push({ partition: s.partition, partitionPath: s.partitionPath, bucket: s.bucket, records: this.changelog.lookupRecords(r.changes) });
        entries.push(...r.entries);
      }
    } catch (e) {
      this.abandonPromotion();
      throw e;
    }
    return entries;
  }

  /**
   * The snapshot `commit` makes of a promotion, and only then the promotion applied to the
   * buckets; when it fails, the promotion is given up (`abandonPromotion`), so the next commit
   * promotes the same files again. (Applied first, a failed snapshot — a full disk — left the
   * writer without the files it had merged: the next commit added the new level-1 file beside
   * them, and every key read twice.)
   */
  private commitPromoted(commit: () => number): number {
    let id: number;
    try {
      id = commit();
    } catch (e) {
      if (this.promoted.length > 0) this.abandonPromotion();
      throw e;
    }
    this.applyPromotion();
    return id;
  }

  /** The promotion's snapshot was made (or none was needed): its buckets take the new files. */
  private applyPromotion(): void {
    for (const { s, removed, added } of this.promoted) {
      const gone = new Set(removed.map((f) => f.fileName));
      s.files = s.files.filter((f) => !gone.has(f.fileName));
      for (const f of removed) this.table.cache.drop(this.table.dataFilePath(s.partition, s.bucket, f.fileName, f.externalPath));
      for (const f of s.pending) {
        // Uncommitted level-0 files merged up: referenced by nothing, removed now.
        const path = this.table.dataFilePath(s.partition, s.bucket, f.fileName, f.externalPath);
        this.table.cache.drop(path);
        this.table.fileIO.remove(path);
      }
      s.pending = added;
      this.committed.set(s.id, { partition: s.partition, bucket: s.bucket, files: s.files });
    }
    this.promoted = [];
  }

  /**
   * The promotion's snapshot was not made: the vectors go back to the latest snapshot's and the
   * level-1 files it wrote are removed (one left behind is an orphan the sweep removes).
   */
  private abandonPromotion(): void {
    const promoted = this.promoted;
    this.promoted = [];
    this.dvChangelog = undefined;
    this.dv!.reset(this.table.latestSnapshot());
    for (const { s, added } of promoted) {
      for (const f of added) {
        const path = this.table.dataFilePath(s.partition, s.bucket, f.fileName, f.externalPath);
        this.table.cache.drop(path);
        try {
          this.table.fileIO.remove(path);
        } catch {
          // Left for the sweep: the error that failed the commit is the one to report.
        }
      }
    }
  }

  /** The promotion found changes (lookup changelog) even if no file or vector changed (an older row stood). */
  private hasDvChangelog(): boolean {
    return this.dvChangelog !== undefined && this.dvChangelog.some((b) => b.records.length > 0);
  }

  private entry(kind: 0 | 1, s: { partition: Uint8Array; bucket: number }, file: DataFileMeta): ManifestEntry {
    return { kind, partition: s.partition, bucket: s.bucket, totalBuckets: this.table.schema.options.bucket, file };
  }

  /** Writes manifests and creates the next snapshot. Protected: AppendWriter (append-writer.ts) commits through it. */
  protected commitChanges(
    entries: ManifestEntry[],
    kind: 'APPEND' | 'COMPACT' | 'OVERWRITE',
    properties?: Record<string, string>,
    overwrite?: { changelog: ManifestEntry[]; target: Snapshot },
    compactChangelog?: ManifestEntry[],
    drop?: { indexManifest: string | null },
  ): number {
    const table = this.table;
    const schema = table.schema;
    const latest = table.snapshots.latest();
    // Changelog files of an APPEND (changelog.ts), listed only in the changelog manifest list.
    let changelog: ManifestEntry[];
    if (kind !== 'APPEND') changelog = overwrite?.changelog ?? compactChangelog ?? [];
    else if (this.dvChangelog !== undefined) changelog = this.changelog.write(this.dvChangelog);
    else changelog = this.changelog.produce(this.buckets.values());
    this.dvChangelog = undefined;
    const changelogList = changelog.length > 0 ? table.manifests.writeList(schema, this.namer, [table.manifests.writeManifest(schema, this.namer, changelog)]) : undefined;
    let changelogRows = 0;
    for (const e of changelog) changelogRows += e.file.rowCount;
    const id = (latest?.id ?? 0) + 1;
    // Deletion vectors: the DV writer's, else (append tables) carried forward from the latest
    // snapshot, so rows Paimon deleted stay deleted after this store appends.
    let indexManifest: string | null = null;
    if (drop) indexManifest = drop.indexManifest;
    else if (this.dv) indexManifest = this.dv.writeIndexManifest();
    else if (!schema.isPrimaryKeyTable) indexManifest = this.nextIndexManifest !== undefined ? this.nextIndexManifest : (latest?.indexManifest ?? null);
    this.nextIndexManifest = undefined;
    let base = latest ? table.manifests.dataManifests(latest) : [];
    if (latest && base.length >= MANIFEST_MERGE_MIN_COUNT) {
      const live = table.manifests.liveFiles(latest);
      base = live.length > 0 ? [table.manifests.writeManifest(schema, this.namer, live)] : [];
    }
    // No entries (new properties only, a changelog only): no manifest, as Java's rolling manifest
    // writer opens its file at the first entry; an empty one was carried by every later base list.
    const delta = entries.length > 0 ? [table.manifests.writeManifest(schema, this.namer, entries)] : [];
    const baseList = table.manifests.writeList(schema, this.namer, base);
    const deltaList = table.manifests.writeList(schema, this.namer, delta);
    let added = 0;
    for (const e of entries) added += e.kind === ADD ? e.file.rowCount : -e.file.rowCount;
    const snapshot: Snapshot = {
      version: SNAPSHOT_VERSION,
      id,
      // A rollback as latest: the target's, as Java's rollbackToAsLatest (the table's schema stays).
      schemaId: overwrite ? overwrite.target.schemaId : schema.id,
      baseManifestList: baseList.name,
      baseManifestListSize: baseList.size,
      deltaManifestList: deltaList.name,
      deltaManifestListSize: deltaList.size,
      changelogManifestList: changelogList?.name ?? null,
      changelogManifestListSize: changelogList?.size ?? null,
      indexManifest,
      commitUser: this.commitUser,
      // A partition drop carries the identifier of the commit it follows, as Java's dropPartitions(…, commitIdentifier).
      commitIdentifier: BigInt(drop && this.commitIdentifier > 0 ? this.commitIdentifier : ++this.commitIdentifier),
      commitKind: kind,
      timeMillis: Math.max(table.clock(), latest?.timeMillis ?? 0),
      totalRecordCount: (latest?.totalRecordCount ?? 0) + added,
      deltaRecordCount: added,
      changelogRecordCount: changelogRows,
      // Carried from the previous snapshot (a rollback: from its target), as Paimon's commit does,
      // so a Java table keeps them: the watermark, the statistics file while the schema is the
      // one it was computed for, the row-id counter (never going back).
      watermark: (overwrite ? overwrite.target : latest)?.watermark ?? null,
      statistics: inheritedStatistics(table, overwrite ? overwrite.target : latest, overwrite ? overwrite.target.schemaId : schema.id),
      properties: overwrite ? overwrite.target.properties : properties ? { ...(latest?.properties ?? {}), ...properties } : (latest?.properties ?? null),
      nextRowId: maxOrNull(latest?.nextRowId ?? null, overwrite?.target.nextRowId ?? null),
    };
    if (!table.snapshots.commit(snapshot)) {
      throw new LsmError('Conflict', `snapshot ${id} of ${table.name} was created by another writer; one writer per table`, {
        path: table.paths.snapshotFile(id),
      });
    }
    if (kind === 'APPEND') this.changelog.committed();
    return id;
  }

  // ------------------------------------------------------------------------------------------
  // Compaction.

  /**
   * Between commits a bucket gains one level-0 run per flush. When its runs reach
   * `num-sorted-run.stop-trigger`, the uncommitted runs are merged into one before writing goes
   * on: the writer slows by the cost of that merge instead of stalling, and no commit happens
   * behind the caller's back (a commit is the caller's unit of atomicity).
   */
  private relieveStopTrigger(): void {
    const stop = this.table.schema.options.stopTrigger;
    for (const s of this.buckets.values()) {
      if (s.pending.length < 2) continue;
      if (this.table.runsOf(s.files).length + s.pending.length < stop) continue;
      try {
        this.mergePending(s);
        this.stopTriggerWarned = undefined;
      } catch (e) {
        // A fold the merge engine refuses (a partial-update group's `sum` overflowing its column,
        // a `listagg` longer than its VARCHAR) is no failure of this write, which has taken its
        // row: thrown, ingest read it as a failing disk and stopped, and the reopen replayed the
        // same events into the same merge. The runs stay as they are, each row held once, and the
        // compaction after the commit meets the fold as it would have (a failed maintenance).
        // A failing disk, a damaged file or a bug is still thrown.
        if (!(e instanceof LsmError) || e.kind !== 'InvalidArgument') throw e;
        if (e.message === this.stopTriggerWarned) continue;
        this.stopTriggerWarned = e.message;
        this.warn(
          `table ${this.table.name}: the stop trigger's merge of ${bucketName(s.partitionPath, s.bucket)}'s pending runs failed; they stay as they are (not warned again while it fails so): ${e.message}`,
          'TILSTAND_COMMIT_MAINTENANCE',
        );
      }
    }
  }

  private mergePending(s: BucketState): void {
    const table = this.table;
    const schema = table.schema;
    const merge = createMergeFunction(schema);
    const pu = merge.resetThenAdded !== undefined ? merge : undefined;
    const runs = table.runsOf(s.pending).map((r) => r.files.map((f) => table.loadRun(s.partition, s.bucket, f)));
    const out: KeyValue[] = [];
    const order = mergeOrder(schema);
    const seqFields = schema.sequenceFieldIndexes.length > 0;
    const probe: KeyValue = { key: [], seq: 0, kind: 0, value: [] };
    let split = false;
    const check = (r: KeyValue | undefined, last: KeyValue) => {
      if (pu?.resetThenAdded!()) split = true;
      // The fold must sort where the key's last record does, or the committed files below would
      // meet it out of order (write-buffer.ts foldSortsAtLast, as the write buffer checks its folds).
      else if (seqFields && !foldSortsAtLast(r, last, order, probe)) split = true;
    };
    // `lone`: a key's one record stays as it came, as reads and compaction leave it (merge/README.md,
    // "A key's lone record"); folded, a lone retraction became a row the reader would then show.
    for (const kv of mergeRuns(runs, table.compareKeys, merge, order, check, undefined, true)) {
      // A removal followed by updates, or a fold that would sort elsewhere, cannot stand in for
      // its records above the older runs: keep the runs.
      if (split) return;
      out.push(kv);
    }
    if (split) return;
    const old = s.pending;
    s.pending = out.length > 0 ? [this.writeRun(s, runFromRecords(out, schema.keyIndexes.length, schema.fields.length), 0, 0)] : [];
    for (const f of old) {
      const path = table.dataFilePath(s.partition, s.bucket, f.fileName, f.externalPath);
      table.cache.drop(path);
      table.fileIO.remove(path);
    }
  }

  /**
   * Compacts now: `full` merges every bucket into its highest level; otherwise the universal
   * picker decides per bucket. Commits pending writes first. Returns the COMPACT snapshot id.
   */
  compact(full = false): number | undefined {
    this.check();
    // A deferred compaction under way is finished first: its inputs are what this one would pick.
    const finished = this.round ? this.runRound(Infinity) : undefined;
    if (full) this.fullWanted = false;
    if (this.buckets.size > 0 || full) this.commitPendingOnly();
    this.addCommittedBuckets();
    return this.compactBuckets(full) ?? finished;
  }

  /** Whether a deferred compaction is planned and not yet committed (WriterOptions.compaction). */
  get compacting(): boolean {
    return this.round !== undefined;
  }

  /**
   * Runs the deferred compaction a commit planned for about `budgetMs` (an input file's decode and
   * an output file's write are not cut, so a step can take longer by one of those). When it is
   * done it commits it (one COMPACT snapshot) and expires snapshots. An error abandons it (the
   * files it wrote are removed) and is thrown; the next commit plans again. A full compaction
   * asked for meanwhile (`requestFullCompaction`) is planned when this one is done, and the step
   * says `done: false` with the snapshot it committed.
   */
  compactStep(budgetMs: number): CompactStepResult {
    this.check();
    if (this.committing) throw new Error('assertion failed: compactStep inside a commit');
    if (!this.round) return { done: true };
    const id = this.runRound(performance.now() + budgetMs);
    if (this.round) return { done: false };
    const expire = id !== undefined ? expireSnapshots(this.table, this.uncommittedFiles(), SPREAD_MARK) : undefined;
    if (this.fullWanted) this.round = this.planRound();
    return { done: this.round === undefined, ...(id !== undefined ? { snapshotId: id } : {}), ...(expire ? { expire } : {}) };
  }

  /**
   * Deferred writers: asks for a full compaction — every bucket merged into its highest level,
   * where deleted keys leave the files (what a purge of many rows needs to give their space back;
   * a universal pick may never reach the level they are in). Planned now when no compaction is
   * under way, else when that one is done; run by `compactStep` like any other. Returns whether
   * one is planned now (false: after the one under way, or nothing to merge). An inline writer
   * compacts at once with `compact(true)` instead.
   */
  requestFullCompaction(): boolean {
    this.check();
    if (!this.deferred) throw invalidArgument(`requestFullCompaction: the writer of ${this.table.name} compacts inline; call compact(true)`);
    this.fullWanted = true;
    if (this.round) return false;
    this.round = this.planRound();
    return this.round !== undefined;
  }

  /**
   * The deferred compaction of every bucket the picker finds work in (every committed bucket, into
   * its highest level, when a full one is wanted); undefined when there is none.
   */
  private planRound(): TableWriter['round'] {
    const full = this.fullWanted;
    this.fullWanted = false;
    if (full) this.addCommittedBuckets();
    const tasks: { s: BucketState; c: BucketCompaction }[] = [];
    const changelog: ManifestEntry[] = [];
    for (const s of this.buckets.values()) {
      const c = this.planBucket(s, full, changelog);
      if (c) tasks.push({ s, c });
    }
    return tasks.length > 0 ? { tasks, next: 0, results: [], changelog } : undefined;
  }

  /**
   * Runs the deferred compaction until `deadline` (performance.now() ms; Infinity: to its end);
   * when it ends, commits it and returns the COMPACT snapshot (undefined when every file stayed
   * where it was).
   */
  private runRound(deadline: number): number | undefined {
    const r = this.round!;
    try {
      while (r.next < r.tasks.length) {
        const { s, c } = r.tasks[r.next]!;
        if (!c.advance(deadline)) return undefined;
        if (c.removed.length > 0 || c.added.length > 0) r.results.push({ s, removed: c.removed, added: c.added });
        r.next++;
        if (r.next < r.tasks.length && performance.now() >= deadline) return undefined;
      }
    } catch (e) {
      this.abandonRound();
      throw e;
    }
    this.round = undefined;
    return this.commitCompaction(r.results, r.changelog);
  }

  /** Gives the deferred compaction up and removes the files it wrote. */
  private abandonRound(): void {
    const r = this.round;
    this.round = undefined;
    if (r) for (const t of r.tasks) t.c.abandon();
  }

  /** Whether a bucket of the deferred compaction has reached `num-sorted-run.stop-trigger` runs. */
  private atStopTrigger(): boolean {
    const stop = this.table.schema.options.stopTrigger;
    for (const s of this.buckets.values()) if (this.table.runsOf(s.files).length >= stop) return true;
    return false;
  }

  /**
   * Paths of the files this writer wrote and no snapshot references yet — flushed rows, changelog
   * files, what the deferred compaction wrote: an expiration's sweep must keep them.
   */
  private uncommittedFiles(): Set<string> {
    const keep = new Set<string>();
    for (const s of this.buckets.values()) for (const f of s.pending) keep.add(this.table.dataFilePath(s.partition, s.bucket, f.fileName, f.externalPath));
    for (const p of this.changelog.pendingPaths()) keep.add(p);
    if (this.round) for (const { s, c } of this.round.tasks) for (const f of c.written()) keep.add(this.table.dataFilePath(s.partition, s.bucket, f.fileName, f.externalPath));
    return keep;
  }

  /** Every committed bucket gets a state, also those this writer has not touched. */
  private addCommittedBuckets(): void {
    for (const [id, c] of this.committed) {
      if (!this.buckets.has(id)) this.buckets.set(id, this.stateFor(c));
    }
  }

  private stateFor(c: { partition: Uint8Array; bucket: number; files: DataFileMeta[] }): BucketState {
    const schema = this.table.schema;
    const id = `${Buffer.from(c.partition).toString('hex')}/${c.bucket}`;
    let maxSeq = -1;
    for (const f of c.files) if (f.maxSequenceNumber > maxSeq) maxSeq = f.maxSequenceNumber;
    return {
      id,
      partition: c.partition,
      partitionPath: this.table.partitionPathOf(c.partition),
      bucket: c.bucket,
      files: [...c.files],
      pending: [],
      drained: [],
      drainedBytes: 0,
      nextSeq: maxSeq + 1,
      buffer: newBuffer(schema, createMergeFunction(schema)),
    };
  }

  private commitPendingOnly(): void {
    const wasCommitting = this.committing;
    this.committing = true;
    try {
      this.flush();
      const adds: ManifestEntry[] = this.dv ? this.promoteLevel0() : [];
      if (!this.dv) for (const s of this.buckets.values()) for (const f of s.pending) adds.push(this.entry(ADD, s, f));
      if (adds.length > 0 || this.dv?.changed || this.hasDvChangelog() || this.changelog.hasUncommitted) {
        this.commitPromoted(() => this.commitChanges(adds, 'APPEND'));
        for (const s of this.buckets.values()) {
          s.files.push(...s.pending);
          s.pending = [];
        }
      } else this.applyPromotion();
    } finally {
      this.committing = wasCommitting;
    }
  }

  private compactBuckets(full: boolean): number | undefined {
    const results: CompactedBucket[] = [];
    const changelog: ManifestEntry[] = []; // `full-compaction` producer: changelog files of full compactions
    for (const s of this.buckets.values()) {
      const c = this.planBucket(s, full, changelog);
      if (!c) continue;
      c.advance(Infinity);
      if (c.removed.length > 0 || c.added.length > 0) results.push({ s, removed: c.removed, added: c.added });
    }
    if (full) this.commitsSinceFull = 0;
    return this.commitCompaction(results, changelog);
  }

  /** The bucket's compaction as the picker (or `full`) chooses it, not yet run; undefined when there is none. */
  private planBucket(s: BucketState, full: boolean, changelog: ManifestEntry[]): BucketCompaction | undefined {
    const o = this.table.schema.options;
    const runs = this.table.runsOf(s.files);
    const numLevels = checkBucketLevels(o.numLevels, s.files, bucketName(s.partitionPath, s.bucket));
    let unit: CompactUnit | undefined = full ? fullCompaction(numLevels, runs) : pickUniversal({ ...o, numLevels }, runs);
    let alone: DataFileMeta[] | undefined;
    if (!unit && full && this.dv && runs.length === 1) {
      // A DV bucket that is one top-level run is not fully compacted while positions in it are
      // marked deleted (removals, say, that wrote nothing above it): its files with a vector are
      // rewritten, each alone so that the run stays sorted, and the vectors go with them
      // (Paimon's full compaction does the same). With the full-compaction changelog the whole
      // run is merged: that changelog is the diff of the bucket's top level, old against new.
      const dv = this.dv;
      const marked = runs[0]!.files.filter((f) => (dv.deleted(s.partition, s.bucket, f.fileName)?.size ?? 0) > 0);
      if (marked.length > 0) {
        unit = { outputLevel: numLevels - 1, runs: [...runs] };
        if (!this.changelog.atFullCompaction) alone = marked;
      }
    }
    if (!unit || (this.dv && unit.outputLevel === 0)) return undefined; // DV tables keep level 0 empty
    return this.bucketCompaction(s, unit, runs, changelog, alone);
  }

  /**
   * Commits what compactions did in one COMPACT snapshot (undefined when nothing changed) and
   * updates the buckets' file lists and the run cache.
   */
  private commitCompaction(results: readonly CompactedBucket[], changelog: ManifestEntry[]): number | undefined {
    const entries: ManifestEntry[] = [];
    for (const { s, removed, added } of results) {
      for (const f of removed) entries.push(this.entry(DELETE, s, f));
      for (const f of added) entries.push(this.entry(ADD, s, f));
    }
    if (entries.length === 0) return undefined;
    for (const { s, removed } of results) this.dv?.dropFiles(s.partition, s.bucket, removed);
    let id: number;
    try {
      id = this.commitChanges(entries, 'COMPACT', undefined, undefined, changelog);
    } catch (e) {
      // The inputs' vectors were dropped, maybe written into an index manifest that became the
      // vectors' base (dv-writer.ts), for a snapshot not made: back to the latest snapshot's, or
      // the next commit would drop them for good (the rows they deleted came back).
      this.dv?.reset(this.table.latestSnapshot());
      throw e;
    }
    for (const { s, removed, added } of results) {
      const gone = new Set(removed.map((f) => f.fileName));
      s.files = s.files.filter((f) => !gone.has(f.fileName)).concat(added);
      // An upgraded file keeps its name and bytes (and its decoded run in the cache).
      const kept = new Set(added.map((f) => f.fileName));
      for (const f of removed) if (!kept.has(f.fileName)) this.table.cache.drop(this.table.dataFilePath(s.partition, s.bucket, f.fileName, f.externalPath));
      this.committed.set(s.id, { partition: s.partition, bucket: s.bucket, files: s.files });
    }
    return id;
  }

  /**
   * One bucket's compaction of `unit` into its output level, in steps: the files that overlap
   * others (and small ones beside them) are merged into new files, large files alone with their
   * keys only change level (compaction/compact-plan.ts), when this table allows that
   * (`upgradesAllowed`). `removed` and `added` (complete once `advance` returns true) are the files
   * leaving the bucket's file list and those joining it; a file already at the output level and
   * alone with its keys is in neither. A full compaction (output at the top level: every run is in
   * the unit) of a `full-compaction` table also writes the bucket's changelog — old top level vs
   * merged output (changelog.ts) — and adds its entry to `changelog`. A merge that finds it must
   * include the bottom level (partial-update's reset) starts over as a full compaction of `runs`.
   * With `alone` (files of a top-level run), only those files are rewritten, each by itself.
   * On an error, and on `abandon`, the files it wrote are removed.
   */
  private bucketCompaction(s: BucketState, first: CompactUnit, runs: readonly LevelSortedRun[], changelog: ManifestEntry[], alone?: readonly DataFileMeta[]): BucketCompaction {
    const table = this.table;
    const o = table.schema.options;
    const topLevel = bucketNumLevels(o.numLevels, s.files) - 1;
    let unit = first;
    let steps: CompactStep[] = [];
    let next = 0;
    let job: MergeJob | undefined;
    const removed: DataFileMeta[] = [];
    const added: DataFileMeta[] = [];
    const written: DataFileMeta[] = [];
    const plan = (): void => {
      removed.length = 0;
      added.length = 0;
      next = 0;
      if (alone) {
        steps = alone.map((f) => ({ kind: 'rewrite', files: [f] }));
        return;
      }
      if (!this.upgradesAllowed()) {
        steps = [{ kind: 'rewrite', files: unit.runs.flatMap((r) => r.files) }];
        return;
      }
      const outputFormat = formatForLevel(table.schema, unit.outputLevel);
      steps = planCompaction(
        unit.runs,
        {
          outputLevel: unit.outputLevel,
          maxLevel: topLevel,
          minFileSize: Math.floor(o.targetFileBytes * SMALL_FILE_RATIO),
          // file.format.per.level: a file changes level as it is only into a level of its own format.
          mayUpgrade: (f) => f.fileName.endsWith(`.${outputFormat}`),
        },
        (f) => table.keyRange(f),
        table.compareKeys,
      );
    };
    const removeWritten = (): void => {
      for (const f of job ? written.concat(job.out) : written) {
        const path = table.dataFilePath(s.partition, s.bucket, f.fileName, f.externalPath);
        table.cache.drop(path);
        table.fileIO.remove(path);
      }
      written.length = 0;
      job = undefined;
    };
    plan();
    const advance = (deadline: number): boolean => {
      try {
        while (next < steps.length) {
          const step = steps[next]!;
          if (step.kind === 'upgrade') {
            removed.push(step.file);
            added.push({ ...step.file, level: unit.outputLevel });
          } else if (step.kind === 'rewrite') {
            if (!job) {
              // The step's files by the run they came from, each still in key order.
              const inStep = new Set(step.files);
              const byRun = unit.runs.map((r) => r.files.filter((f) => inStep.has(f))).filter((fs) => fs.length > 0);
              job = this.mergeJob(s, unit, byRun, changelog, runs.filter((r) => !unit.runs.includes(r)));
            }
            if (!job.advance(deadline)) return false;
            written.push(...job.out);
            removed.push(...step.files);
            added.push(...job.out);
            job = undefined;
          }
          next++;
          if (next < steps.length && performance.now() >= deadline) return false;
        }
        return true;
      } catch (e) {
        // What earlier steps wrote is orphaned: removed now.
        removeWritten();
        if (!(e instanceof NeedsFullCompaction)) throw e;
        unit = fullCompaction(topLevel + 1, runs)!;
        plan();
        return advance(deadline); // a full unit writes to the top level: no second restart
      }
    };
    return { removed, added, advance, abandon: removeWritten, written: () => (job ? written.concat(job.out) : written) };
  }

  /**
   * Whether a compaction may move a file to another level without merging it. Not where the
   * compaction must see every record: changelog producers lookup and full-compaction (they derive
   * the changelog from the merge), deletion vectors (level 0 is invisible to readers until
   * compacted), first-row (a key's first row is decided against the levels below), `force-lookup`
   * (a level-0 file moved up as it is would stand as its keys' whole value: merge/lookup-rule.ts).
   */
  private upgradesAllowed(): boolean {
    const o = this.table.schema.options;
    return !this.dv && (o.changelogProducer === 'none' || o.changelogProducer === 'input') && o.mergeEngine !== 'first-row' && !forceLookup(o.raw);
  }

  /**
   * The merge of `runs` (each a sorted run's files in key order) into new files at the unit's
   * output level, in steps: `advance(deadline)` merges until done (true) or until
   * `performance.now()` passes `deadline` (false), checked every MERGE_STEP_KEYS keys; an input
   * file's decode and an output file's write are not cut. `out` holds the files written so far;
   * the caller removes them when it gives the merge up. `older` are the bucket's runs the unit
   * leaves out, where a lookup table's keys are looked up (compaction/lookup-levels.ts).
   */
  private mergeJob(s: BucketState, unit: CompactUnit, runs: readonly (readonly DataFileMeta[])[], changelog: ManifestEntry[], older: readonly LevelSortedRun[]): MergeJob {
    const table = this.table;
    const schema = table.schema;
    const allFiles = [...s.files];
    // Deletes are dropped only where nothing older lies below — and never with `sequence.field`:
    // there a tombstone must keep outranking late records with a lower sequence value (Paimon
    // drops it and lets such a record resurrect the key).
    const dropDelete =
      unit.outputLevel !== 0 && unit.outputLevel >= highestNonEmptyLevel(allFiles) && schema.sequenceFieldIndexes.length === 0;
    const dv = this.dv;
    // Each input file is decoded when the merge reaches it (RunParts), not all before the first row.
    const inputs = runs.map((files): RunParts => ({ length: files.length, load: (i) => (dv ? dv.visibleRun(s.partition, s.bucket, files[i]!) : table.loadRun(s.partition, s.bucket, files[i]!)) }));
    const merge = createMergeFunction(schema);
    const pu = merge.resetThenAdded !== undefined ? merge : undefined;
    let inBytes = 0;
    let inRows = 0;
    /** Rows of the largest input run (by its files' row counts). */
    let largest = 0;
    for (const files of runs) {
      let runRows = 0;
      for (const f of files) {
        inBytes += f.fileSize;
        runRows += f.rowCount;
      }
      inRows += runRows;
      largest = Math.max(largest, runRows);
    }
    const rowsPerFile = rowsPerTargetFile(schema.options.targetFileBytes, inBytes, inRows);
    const out: DataFileMeta[] = [];
    // The merged records go straight into the packed columns of the next output file (RunBuilder:
    // what a decode of the file would give); a file is written every `rowsPerFile` rows. Room is
    // made at first for the largest input run (capped by a file's rows) and grows as rows come:
    // sizing by all the input would hold memory for rows a merge folds away.
    const builder = new RunBuilder(schema.fields.map((f) => f.type), schema.keyIndexes, Math.min(rowsPerFile, largest));
    const nv = schema.fields.length;
    const topLevel = bucketNumLevels(schema.options.numLevels, allFiles) - 1;
    const toTop = unit.outputLevel === topLevel; // only a unit of every run is written to the top level
    // The old top level is the state of the previous full compaction: read it raw (deletion
    // vectors marked since then are changes this changelog reports). Below the top when an ALTER
    // raised the levels since (levels.ts, lastFullCompactionLevel).
    const diff =
      toTop && this.changelog.atFullCompaction
        ? this.changelog.fullCompactionDiff(topLevelRecords(table, s, allFiles, lastFullCompactionLevel(schema.options.numLevels, allFiles, dv !== undefined)))
        : undefined;
    // With every run in the unit nothing older remains, so any fold is complete.
    const check = pu && !dropDelete && !toTop ? () => {
      if (pu.resetThenAdded!()) throw new NeedsFullCompaction();
    } : undefined;
    const keyCmps = schema.keyTypes.map(comparatorFor); // as table.compareKeys (keyComparator) chains them
    // Above level 0 of a lookup table only complete values (Java reads the newest one alone).
    const lookup = olderRecords(lookupPolicy(schema, merge, dv !== undefined), older, (f) => table.keyRange(f), (f) => table.loadRun(s.partition, s.bucket, f), keyCmps, () => {
      throw new NeedsFullCompaction();
    });
    // The record passed in shares arrays with the merge's cursors: copied here, not kept.
    const merging = new RunsMerge(inputs, keyCmps, nv, merge, mergeOrder(schema), check, (kv, records) => {
      diff?.add({ key: kv.key.slice(), seq: kv.seq, kind: kv.kind, value: kv.value.slice() }, records === 1);
      if (dropDelete && !isAdd(kv.kind)) return;
      builder.add(kv);
      if (builder.rowCount >= rowsPerFile) out.push(this.writeRun(s, builder.finish(), unit.outputLevel, 1));
    }, lookup, foldsLowestLevelOnly(schema) ? runs.map((files) => files[0]!.level) : undefined); // merge/lookup-rule.ts
    let finished = false;
    return {
      out,
      advance: (deadline: number): boolean => {
        if (finished) return true;
        if (deadline === Infinity) merging.step(Infinity);
        else while (!merging.step(MERGE_STEP_KEYS) && performance.now() < deadline);
        if (!merging.done) return false;
        if (builder.rowCount > 0) out.push(this.writeRun(s, builder.finish(), unit.outputLevel, 1));
        if (diff) changelog.push(...this.changelog.write([{ partition: s.partition, partitionPath: s.partitionPath, bucket: s.bucket, records: diff.finish() }]));
        finished = true;
        return true;
      },
    };
  }

  // ------------------------------------------------------------------------------------------
  // Maintenance and lifecycle.

  expire(): ExpireResult {
    this.check();
    // Flushed but uncommitted files are referenced by no snapshot; keep them from the sweep.
    return expireSnapshots(this.table, this.uncommittedFiles());
  }

  /**
   * Rolls the table back to a retained snapshot or a tag (rollback.ts). Destructive by default:
   * later snapshots and the tags of later snapshots are deleted with their files. With
   * `keepHistory`, a new OVERWRITE snapshot restores the old state and nothing is deleted.
   * The writer must have nothing buffered or uncommitted; it re-reads its state afterwards.
   */
  rollbackTo(to: SnapshotRef, o: { keepHistory?: boolean } = {}): RollbackResult {
    this.check();
    this.refuseUncommitted('a rollback');
    this.abandonRound(); // planned against the state the rollback replaces
    let result: RollbackResult;
    if (o.keepHistory) {
      const { target, current, entries } = rollbackAsLatestEntries(this.table, to);
      this.dv?.reset(target);
      this.nextIndexManifest = target.indexManifest ?? null;
      const producer = this.table.schema.options.changelogProducer;
      // full-compaction: readers have seen the top levels (states at full compactions); the new
      // snapshot's top levels are the target's, so its changelog is the diff of the top levels.
      const changelog =
        producer === 'lookup' ? this.changelog.write(rollbackChanges(this.table, current, target))
        : producer === 'full-compaction' ? this.changelog.write(diffBuckets(this.table, current, target, { level: this.table.schema.options.numLevels - 1 }))
        : [];
      const id = this.commitChanges(entries, 'OVERWRITE', undefined, { changelog, target });
      result = { snapshotId: id, removedSnapshots: [], removedTags: [], deletedFiles: [] };
    } else {
      result = rollbackDestructive(this.table, to);
    }
    this.reinitialize();
    return result;
  }

  /**
   * Rolls the table back with a writer taken for the call (`Table.rollbackTo`). A writer cannot
   * open on a damaged latest snapshot (it reads that state), and a rollback to an earlier intact
   * snapshot or tag is the way past one: after a Corruption at the writer's open a destructive
   * rollback runs under the writer lock alone (`rollbackWithoutWriter`). One that keeps history
   * needs the damaged state (its files are the new snapshot's DELETEs): the Corruption stands.
   */
  static rollbackOnce(table: Table, to: SnapshotRef, o: { keepHistory?: boolean }, writerOptions: WriterOptions): RollbackResult {
    let w: TableWriter;
    try {
      w = table.newWriter(writerOptions);
    } catch (e) {
      if (!isCorruption(e) || o.keepHistory) throw e;
      return rollbackWithoutWriter(table, to);
    }
    try {
      return w.rollbackTo(to, o);
    } finally {
      w.close();
    }
  }

  /** InvalidArgument when the writer holds rows not committed yet: `what` re-reads its state and would lose them. */
  private refuseUncommitted(what: string): void {
    const message = `the writer of ${this.table.name} has uncommitted rows; commit them (or close the writer) before ${what}`;
    for (const s of this.buckets.values()) if (!s.buffer.isEmpty || s.drained.length > 0 || s.pending.length > 0) throw invalidArgument(message);
    // `input` rows the buffer folded to nothing are still uncommitted changes (their changelog).
    if (this.changelog.hasUncommitted) throw invalidArgument(message);
  }

  /**
   * Partition expiration at commit (partition-expire.ts, after Java's NormalPartitionExpire): once
   * the check interval has passed, the partitions of the latest snapshot whose time is older than
   * `partition.expiration-time` are dropped — at most `partition.expiration-max-num`, one OVERWRITE
   * snapshot per batch. Partitions whose values give no time are kept and told to `onWarning`.
   * Undefined when no check was due. Callers: `commit()` (AppendWriter's too), after the commit's
   * own snapshots; the writer has nothing uncommitted then.
   */
  protected expirePartitions(): PartitionExpireResult | undefined {
    const pe = this.partitionExpire;
    if (!pe) return undefined;
    const now = this.table.clock();
    if (!pe.clock.due(now)) return undefined;
    const result = this.dropExpired(pe.config, now, false, (s) => this.warn(`table ${this.table.name}: partition '${s.partition}' is not expired: ${s.reason}`, 'TILSTAND_PARTITION_EXPIRE'));
    pe.clock.checked(now);
    return { snapshotIds: result.snapshotIds, dropped: result.partitions, skipped: result.skipped };
  }

  /**
   * Drops now, whatever the check interval, the partitions the table's partition-expiration
   * options say are expired — with `o`'s arguments in place of those options for this call only
   * (Java's `expire_partitions` procedure; partition-expire.ts `partitionExpireNowConfig` checks
   * them, naming the argument). One OVERWRITE snapshot per batch, as at commit; snapshots are not
   * expired here, so older snapshots and tags still read the dropped rows. With `dryRun` it only
   * says which partitions it would drop. Skipped partitions are in the result, not told to
   * `onWarning`. The writer must have nothing uncommitted (a drop re-reads its state). Not on an
   * append table's writer, which keeps state of its own this cannot re-read: use
   * `Table.expirePartitions`, which opens a writer for the call.
   */
  expirePartitionsNow(o: ExpirePartitionsOptions = {}): ExpirePartitionsResult {
    this.check();
    if (!this.table.schema.isPrimaryKeyTable) {
      throw notSupported(`expiring partitions through an open writer of append table ${this.table.name}; use Table.expirePartitions, which takes the writer for the call`);
    }
    return this.expireNow(o);
  }

  /**
   * `Table.expirePartitions`: a writer of `table` for this call only (an append writer's own state
   * goes with it, so it need not be re-read after the drop), released on every path.
   */
  static expirePartitionsOnce(table: Table, o: ExpirePartitionsOptions, writerOptions: WriterOptions): ExpirePartitionsResult {
    const w = table.newWriter(writerOptions);
    try {
      return w.expireNow(o);
    } finally {
      w.close();
    }
  }

  private expireNow(o: ExpirePartitionsOptions): ExpirePartitionsResult {
    const table = this.table;
    // Checked as the other arguments are: a truthy non-boolean would pass the uncommitted-rows
    // check as a dry run does and then drop for real.
    if (o.dryRun !== undefined && typeof o.dryRun !== 'boolean') throw invalidArgument(`argument 'dryRun': expected true or false, got ${JSON.stringify(o.dryRun)}`);
    const config = partitionExpireNowConfig(table.name, table.schema.options.raw, table.schema.partitionKeys, o);
    if (!o.dryRun) this.refuseUncommitted('expiring partitions');
    return this.dropExpired(config, table.clock(), o.dryRun === true);
  }

  /**
   * Selects the partitions of the latest snapshot expired at `now` by `config` and, unless
   * `dryRun`, drops them batch by batch; each partition kept for want of a time is told to
   * `onSkipped` first.
   */
  private dropExpired(config: PartitionExpireConfig, now: number, dryRun: boolean, onSkipped?: (s: PartitionSkip) => void): ExpirePartitionsResult {
    const table = this.table;
    const result: ExpirePartitionsResult = { dryRun, partitions: [], snapshotIds: [], skipped: [] };
    const latest = table.latestSnapshot();
    if (!latest) return result;
    const { expired, skipped } = selectExpired(table, config, partitionsOf(table, latest), now);
    for (const s of skipped) {
      result.skipped.push(s);
      onSkipped?.(s);
    }
    try {
      for (const batch of batchesOf(expired, config.batchSize)) {
        if (!dryRun) result.snapshotIds.push(this.dropPartitions(new Set(batch.map((p) => p.hex))));
        for (const p of batch) result.partitions.push(table.partitionPathOf(p.bytes));
      }
    } finally {
      if (result.snapshotIds.length > 0) {
        // What the writer holds of the dropped partitions is gone: a planned compaction (its
        // inputs), bucket states and committed files are read again from the new latest snapshot —
        // also when a later batch failed, or a compaction of the writer's stale files would DELETE
        // files no longer live (a snapshot no reader can read).
        this.abandonRound();
        this.reinitialize();
      }
    }
    return result;
  }

  /**
   * One OVERWRITE snapshot that DELETEs every live data file of the partitions `hexes` (their
   * BinaryRow bytes in hex) and writes the index manifest without their index files (deletion
   * vectors), as Java's `dropPartitions` (OverwriteChangesProvider). No changelog; the watermark,
   * statistics file and properties are carried as by every commit here.
   */
  private dropPartitions(hexes: ReadonlySet<string>): number {
    const table = this.table;
    const latest = table.latestSnapshot()!;
    const entries: ManifestEntry[] = [];
    for (const b of table.buckets(latest)) {
      if (!hexes.has(Buffer.from(b.partition).toString('hex'))) continue;
      for (const f of b.files) entries.push({ kind: DELETE, partition: b.partition, bucket: b.bucket, totalBuckets: b.totalBuckets, file: f });
    }
    let indexManifest = latest.indexManifest;
    if (indexManifest) {
      const path = table.paths.manifestFile(indexManifest);
      const bytes = table.fileIO.readFileIfExists(path);
      if (bytes === undefined) throw corruption(path, `index manifest of snapshot ${latest.id} is missing`);
      const all = decodeIndexManifest(bytes, path);
      const kept = all.filter((e) => !hexes.has(Buffer.from(e.partition).toString('hex')));
      // Unchanged: the same file, as Java's IndexManifestFile.writeIndexFiles with no changes.
      if (kept.length !== all.length) {
        indexManifest = `index-manifest-${randomUUID()}-0`;
        table.fileIO.mkdirs(table.paths.manifestDir);
        table.fileIO.writeNew(table.paths.manifestFile(indexManifest), encodeIndexManifest(kept, table.schema.options.manifestCompression));
      }
    }
    return this.commitChanges(entries, 'OVERWRITE', undefined, undefined, undefined, { indexManifest });
  }

  /** Forgets bucket state and re-reads the committed files of the latest snapshot. */
  protected reinitialize(): void {
    this.buckets.clear();
    this.onlyState = undefined;
    this.committed.clear();
    this.changelog.discard();
    this.bufferedBytes = 0;
    this.flushFailure = undefined;
    const latest = this.table.latestSnapshot();
    this.dv?.reset(latest);
    if (latest) {
      for (const b of this.table.buckets(latest)) {
        this.committed.set(`${Buffer.from(b.partition).toString('hex')}/${b.bucket}`, { partition: b.partition, bucket: b.bucket, files: [...b.files] });
      }
    }
  }

  /**
   * Deletes files no snapshot, tag or pinned reader references, older than `olderThanMs`; keeps
   * this writer's flushed rows and changelog files that the next commit will name.
   */
  removeOrphanFiles(olderThanMs: number): string[] {
    this.check();
    this.abandonRound(); // its files are orphans until it commits; the next commit plans again
    return removeOrphanFiles(this.table, olderThanMs, this.uncommittedFiles());
  }

  /** Releases the writer lock. Unflushed and uncommitted rows are dropped. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.abandonRound();
    } finally {
      this.lock.release();
    }
  }
}

const EMPTY_PARTITION: Uint8Array = new Uint8Array(0);

/**
 * The statistics file of `from` when it was computed for schema `schemaId` (Paimon's commit
 * inherits it then, and drops it after a schema change); null when there is none, or it cannot
 * be read.
 */
function inheritedStatistics(table: Table, from: Snapshot | undefined, schemaId: number): string | null {
  const name = from?.statistics;
  if (!name) return null;
  try {
    const stats = JSON.parse(table.fileIO.readFile(table.paths.statisticsFile(name)).toString('utf8')) as { schemaId?: unknown };
    return stats.schemaId === schemaId ? name : null;
  } catch {
    return null;
  }
}

const maxOrNull = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.max(a, b));

/** The records of a bucket's top-level files, ascending by key, as written (no deletion vectors). */
function* topLevelRecords(table: Table, s: { partition: Uint8Array; bucket: number }, files: readonly DataFileMeta[], level: number): Generator<KeyValue> {
  for (const r of table.runsOf(files.filter((f) => f.level === level))) {
    for (const f of r.files) {
      const d = table.loadRun(s.partition, s.bucket, f);
      for (let i = 0; i < d.rowCount; i++) yield kvAt(d, i);
    }
  }
}

/** A write buffer that keeps apart folds the merge function flags (`resetThenAdded`). */
function newBuffer(schema: TableSchema, merge: MergeFunction): WriteBuffer {
  const keepAll = schema.sequenceFieldIndexes.length > 0;
  return new WriteBuffer(schema.keyIndexes, schema.keyTypes, merge, keepAll, merge.resetThenAdded ? () => merge.resetThenAdded!() : undefined, schema.fields.map((f) => f.type));
}

interface CompiledRows {
  readonly schema: TableSchema;
  /** The row of a record given by column name (missing → null), one property read per column. */
  readonly rowOf: (record: Record<string, unknown>) => unknown[];
  /** Per column: true means `checkValue` and `loneSurrogateIn` accept the value (false: ask them for the reason). */
  readonly accepts: Array<(v: unknown) => boolean>;
  readonly changelogInput: boolean;
}

const BIGINT_MIN = -(2n ** 63n);
const BIGINT_MAX = 2n ** 63n - 1n;
const never = (): boolean => false;

/** A fast acceptance test per type; it never accepts what `checkValue` or `loneSurrogateIn` refuses (it may defer). */
function acceptsFn(t: DataType): (v: unknown) => boolean {
  const n = t.nullable;
  switch (t.root) {
    case 'STRING':
      return n ? (v) => v === null || (typeof v === 'string' && isWellFormedString(v)) : (v) => typeof v === 'string' && isWellFormedString(v);
    case 'INT':
      return n ? (v) => v === null || (typeof v === 'number' && (v | 0) === v) : (v) => typeof v === 'number' && (v | 0) === v;
    case 'BIGINT':
      return n
        ? (v) => v === null || (typeof v === 'bigint' && v >= BIGINT_MIN && v <= BIGINT_MAX)
        : (v) => typeof v === 'bigint' && v >= BIGINT_MIN && v <= BIGINT_MAX;
    case 'DOUBLE':
    case 'FLOAT':
      return n ? (v) => v === null || typeof v === 'number' : (v) => typeof v === 'number';
    case 'BOOLEAN':
      return n ? (v) => v === null || typeof v === 'boolean' : (v) => typeof v === 'boolean';
    default:
      return never;
  }
}

function compileRows(schema: TableSchema): CompiledRows {
  const names = schema.fields.map((f) => f.name);
  // Constant property names make each read a named load (inline-cached per record shape). A name
  // Object has too (constructor, toString, __proto__) is read only as the record's own property: a
  // record leaving it out read the inherited function, and was refused as not fitting the column.
  const read = (n: string) => (n in Object.prototype ? `(Object.hasOwn(r, ${JSON.stringify(n)}) ? r[${JSON.stringify(n)}] : null)` : `r[${JSON.stringify(n)}]`);
  const body = `return [${names.map((n) => `${read(n)} ?? null`).join(', ')}];`;
  const rowOf = new Function('r', body) as (record: Record<string, unknown>) => unknown[];
  return {
    schema,
    rowOf,
    accepts: schema.fields.map((f) => acceptsFn(f.type)),
    changelogInput: schema.options.changelogProducer === 'input',
  };
}

function sameProperties(a: Record<string, string>, b: Record<string, string> | null): boolean {
  if (b === null) return Object.keys(a).length === 0;
  for (const [k, v] of Object.entries(a)) if (b[k] !== v) return false;
  return true;
}

/** A bucket as errors name it: its number and, in a partitioned table, its partition's path. */
/**
 * The errno code (ENOSPC, EIO) of an I/O failure: its cause's, else the one its message names after
 * a colon (`… failed: ENOSPC: …`; a path's EARLIEST is no code).
 */
function errorCode(e: LsmError): string | undefined {
  const code = (e.cause as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : /: (E[A-Z0-9]{2,})\b/.exec(e.message)?.[1];
}

function bucketName(path: string, bucket: number): string {
  return path === '' ? `bucket ${bucket}` : `bucket ${bucket} of partition '${path}'`;
}
