// A primary-key table in Paimon's layout: its schema, snapshots, tags and the way to read it at
// any retained point in time. Writing goes through a TableWriter (one per table, see
// table-writer.ts); reading needs no lock and works from any process.
//
// Concurrency: a Table object belongs to one thread. Readers pin the snapshot they read, so
// expiration in this process never removes files a reader in progress still needs: the pins live
// in one registry per process, keyed by the table's resolved root directory, so every Table object
// of a table (the writer's, the sync engine's, the agent's) sees the pins of all of them.

import { join, resolve as resolvePath, sep } from 'node:path';
import { deserializeBinaryRow } from './binary-row.ts';
import { corruption, invalidArgument, LsmError, nameReadState, notFound, uncastableRead } from './errors.ts';
import { localFileIO, type FileIO } from './file-io.ts';
import { readDataFile, type RunData } from './data-file.ts';
import { evolveRun, formatOfPath } from './data-file-format.ts';
import { AppendWriter } from './append-writer.ts';
import { alterTable, optionsInColumnsOf, type SchemaChange } from './schema-change.ts';
import { groupByBucket, sortedRuns, type BucketFiles } from './levels.ts';
import type { DataFileMeta, ManifestEntry } from './manifest.ts';
import { ManifestStore } from './manifest-store.ts';
import { keyComparator } from './merge/merge-function.ts';
import { partitionPath } from './partition-path.ts';
import { PROJECTED_KEY, RunCache, RunCacheBudget, SHAPED_KEY } from './run-cache.ts';
import { TableSchema } from './schema.ts';
import { checkDvWritable } from './dv-writer.ts';
import { checkWritableOptions } from './write-options.ts';
import type { Snapshot } from './snapshot.ts';
import { SnapshotManager } from './snapshot-manager.ts';
import { batchReadPointOf } from './scan-options.ts';
import { localPathOf, TablePaths } from './table-paths.ts';
import { TableReader, type ScanColumns } from './table-read.ts';
import type { RollbackResult } from './rollback.ts';
import { TagManager, type TagInfo } from './tags.ts';
import { describeValue, typeToString } from './types.ts';
import { TableWriter, type ExpirePartitionsOptions, type ExpirePartitionsResult, type WriterOptions } from './table-writer.ts';
import { expireSnapshots, removeOrphanFiles, type ExpireResult } from './expire.ts';
import { ChangeFollower, readChanges, type Change, type ChangesOptions, type FollowOptions, type SnapshotRef } from './incremental.ts';

export interface TableOpenOptions {
  fileIO?: FileIO;
  /** Milliseconds since the epoch; injected in tests. */
  clock?: () => number;
  /**
   * Bytes of decoded data files kept in memory (default 256 MiB). A Catalog turns this into one
   * budget shared by every table it opens (`cacheBudget`); a table opened alone gets its own.
   */
  cacheBytes?: number;
  /** The shared budget to draw on (a Catalog passes its own); takes precedence over cacheBytes. */
  cacheBudget?: RunCacheBudget;
  /**
   * Overrides the tables' `write-buffer-size` in this process, as Paimon's dynamic table options
   * do: it bounds this process's memory and is never written into a schema (an ALTER writes the
   * table's own options). Bytes of estimated JS heap (write-buffer.ts).
   */
  writeBufferBytes?: number;
  /** Name used in messages, e.g. `site_1.stock`. */
  name?: string;
}

/**
 * Where to read: the latest snapshot unless one of `snapshotId`, `tag`, `timestampMs` is given.
 * The columns rows come in (`TableReader.schema`): the latest schema's for the latest snapshot;
 * the snapshot's own schema's at a snapshot id, tag or time (time travel, as Paimon's;
 * EVOLUTION-DESIGN.md §1) — unless `schemaId` names the schema to read in.
 */
export interface ReadPoint {
  snapshotId?: number;
  tag?: string;
  /** Epoch milliseconds: the latest snapshot committed at or before it. */
  timestampMs?: number;
  /**
   * Read in the columns of this schema instead (`readSchema`). A caller that pins the snapshot it
   * found latest by its id, and means "now", passes `table.schema.id`: after an ALTER that no
   * commit has followed yet the latest snapshot's own schema is the older one.
   */
  schemaId?: number;
}

const SCHEMA_NAME = /^schema-(\d+)$/;

/** The id of the newest `schema-<id>` file under `paths`, -1 when there is none. */
function latestSchemaIdIn(io: FileIO, paths: TablePaths): number {
  let max = -1;
  for (const n of io.list(paths.schemaDir)) {
    const m = SCHEMA_NAME.exec(n);
    if (m && Number(m[1]) > max) max = Number(m[1]);
  }
  return max;
}

/** One pin: the snapshot a reader reads. A record per pin, so two readers of one snapshot hold two. */
interface Pin {
  readonly snapshot: Snapshot;
}
/** The pins of this process by resolved table root, shared by every Table object of the table. */
const processPins = new Map<string, Set<Pin>>();
/**
 * The run cache of a Catalog (or of a table opened alone) unless `cacheBytes` says otherwise:
 * enough for a few million rows of a narrow table. A site sets its own from config.json.
 */
export const DEFAULT_CACHE_BYTES = 256 * 1024 * 1024;

/** InvalidArgument naming the option when a memory setting is not a whole number of bytes. */
export function checkOpenOptions(o: TableOpenOptions, what: string): void {
  const bytes = (name: 'cacheBytes' | 'writeBufferBytes', min: number) => {
    const v = o[name];
    if (v !== undefined && (!Number.isSafeInteger(v) || v < min)) throw invalidArgument(`${what}: expected ${name} to be a whole number of bytes ≥ ${min}, got ${v}`);
  };
  bytes('cacheBytes', 0);
  bytes('writeBufferBytes', 1);
}

/**
 * InvalidArgument naming the option when a read point is not what its kind holds (a NaN time would
 * otherwise surface as a RangeError where the message formats it, a NaN id as "snapshot NaN does
 * not exist"). A time is Java's epoch millis (a long): any whole number, a negative one included
 * (NotFound then names the earliest snapshot). A tag name is checked where it is read (checkName).
 */
function checkReadPoint(at: ReadPoint): void {
  const given = [at.snapshotId, at.tag, at.timestampMs].filter((x) => x !== undefined).length;
  if (given > 1) throw invalidArgument('give at most one of snapshot id, tag and timestamp');
  const whole = (name: 'snapshotId' | 'schemaId' | 'timestampMs', expected: string, min: number) => {
    const v = at[name];
    if (v !== undefined && (!Number.isSafeInteger(v) || v < min)) throw invalidArgument(`read point option ${name}: expected ${expected}, got ${describeValue(v)}`);
  };
  whole('snapshotId', 'a snapshot id ≥ 1', 1);
  whole('schemaId', 'a schema id ≥ 0', 0);
  whole('timestampMs', 'whole milliseconds since the epoch', Number.MIN_SAFE_INTEGER);
}

export class Table {
  readonly fileIO: FileIO;
  readonly paths: TablePaths;
  readonly name: string;
  readonly clock: () => number;
  readonly snapshots: SnapshotManager;
  readonly manifests: ManifestStore;
  readonly tags: TagManager;
  readonly cache: RunCache;
  readonly compareKeys: (a: unknown[], b: unknown[]) => number;
  /** The schema as read and written here: the latest schema with this process's overrides. */
  private currentSchema: TableSchema;
  private readonly writeBufferBytes: number | undefined;
  private readonly schemas = new Map<number, TableSchema>();
  /** `readSchema` by schema id (not the current one); emptied by an ALTER (they take the current options). */
  private readonly readSchemas = new Map<number, TableSchema>();
  /** Per schema a reader reads in (not the current one), the schema its runs are decoded for (`runSchemaOf`). */
  private runSchemas = new WeakMap<TableSchema, TableSchema>();
  /** Key of this table's pins in `processPins`. */
  private readonly pinKey: string;
  /** Per file meta object, so it lives exactly as long as the cached manifest entry holding it. */
  private readonly decodedKeys = new WeakMap<DataFileMeta, { min: unknown[]; max: unknown[] }>();
  private readonly partitionPaths = new Map<string, string>();
  private readonly bucketIndexes = new Map<number, { list: BucketFiles[]; real: BucketFiles[]; byId: Map<string, BucketFiles>; delta?: string }>();

  private constructor(dir: string, schema: TableSchema, o: TableOpenOptions) {
    this.fileIO = o.fileIO ?? localFileIO;
    this.paths = new TablePaths(dir);
    this.pinKey = resolvePath(this.paths.root);
    this.name = o.name ?? dir;
    this.clock = o.clock ?? Date.now;
    this.writeBufferBytes = o.writeBufferBytes;
    this.currentSchema = this.effective(schema);
    this.paths.setDataDirectory(schema.options.dataFilePathDirectory);
    this.schemas.set(schema.id, schema);
    this.snapshots = new SnapshotManager(this.fileIO, this.paths);
    this.manifests = new ManifestStore(this.fileIO, this.paths);
    this.tags = new TagManager(this.fileIO, this.paths, this.snapshots, this.clock);
    // Shaped by the current schema: a run read for an older one is a miss (run-cache.ts).
    this.cache = new RunCache(o.cacheBudget ?? o.cacheBytes ?? DEFAULT_CACHE_BYTES, { prefix: join(this.paths.root, sep), shape: () => this.currentSchema.id });
    this.compareKeys = keyComparator(schema);
  }

  /** Creates the table directory with schema-0. AlreadyExists when a schema is there. */
  static create(dir: string, schema: TableSchema, o: TableOpenOptions = {}): Table {
    checkOpenOptions(o, `table ${o.name ?? dir}`); // before anything is written
    // A table this store could not write is refused when it is made, not at its first writer.
    if ((schema.options.raw['deletion-vectors.enabled'] ?? 'false').trim().toLowerCase() === 'true') {
      checkDvWritable(schema, `option 'deletion-vectors.enabled' on table ${o.name ?? dir}`);
    }
    checkWritableOptions(schema, `table ${o.name ?? dir}`, false);
    const io = o.fileIO ?? localFileIO;
    const paths = new TablePaths(dir);
    io.mkdirs(paths.schemaDir);
    if (!io.createAtomic(paths.schemaFile(0), Buffer.from(schema.serialize()))) {
      throw new LsmError('AlreadyExists', `table ${o.name ?? dir} already exists`, { path: dir });
    }
    const table = new Table(dir, schema, o);
    table.snapshots.tableCreated();
    return table;
  }

  static open(dir: string, o: TableOpenOptions = {}): Table {
    checkOpenOptions(o, `table ${o.name ?? dir}`);
    const io = o.fileIO ?? localFileIO;
    const paths = new TablePaths(dir);
    const latest = latestSchemaIdIn(io, paths);
    if (latest < 0) throw notFound(`table ${o.name ?? dir} does not exist (no schema in ${paths.schemaDir})`);
    const file = paths.schemaFile(latest);
    return new Table(dir, TableSchema.parse(io.readFile(file).toString('utf8'), file), o);
  }

  /**
   * The id of the newest schema file in the table's directory now; -1 when there is none (the
   * table was dropped). A Table kept for a process (the sync engine's, the inbox's, the site
   * API's) compares it with its own `schema.id` to see an ALTER made since it was opened: its
   * `schema` and readers stay the ones it was opened with.
   */
  latestSchemaIdOnDisk(): number {
    return latestSchemaIdIn(this.fileIO, this.paths);
  }

  /** The latest schema; its options carry this process's `writeBufferBytes` when one is set. */
  get schema(): TableSchema {
    return this.currentSchema;
  }

  /**
   * `s` with the process's overrides applied to its parsed options. `options.raw` (what toJson
   * and so an ALTER write) stays the table's own, so an override never reaches a schema file.
   */
  private effective(s: TableSchema): TableSchema {
    const bytes = this.writeBufferBytes;
    if (bytes === undefined || s.options.writeBufferBytes === bytes) return s;
    const copy = Object.create(Object.getPrototypeOf(s) as object) as TableSchema;
    return Object.assign(copy, s, { options: { ...s.options, writeBufferBytes: bytes } });
  }

  /** The schema a data file (or a snapshot) was written with. */
  schemaById(id: number): TableSchema {
    let s = this.schemas.get(id);
    if (!s) {
      const file = this.paths.schemaFile(id);
      const bytes = this.fileIO.readFileIfExists(file);
      if (bytes === undefined) throw corruption(file, `schema ${id} referenced by a data file or snapshot is missing`);
      s = TableSchema.parse(bytes.toString('utf8'), file);
      this.schemas.set(id, s);
    }
    return s;
  }

  // ------------------------------------------------------------------------------------------
  // Snapshots and time travel.

  latestSnapshot(): Snapshot | undefined {
    return this.snapshots.latest();
  }

  /** The properties of the latest snapshot (e.g. ingest high-water marks); {} when none. */
  committedProperties(): Record<string, string> {
    return { ...(this.snapshots.latest()?.properties ?? {}) };
  }

  /** The snapshot a read point names; undefined for "latest" on an empty table. */
  resolve(at: ReadPoint = {}): Snapshot | undefined {
    checkReadPoint(at);
    if (at.snapshotId !== undefined) {
      const s = this.snapshots.tryGet(at.snapshotId);
      if (!s) {
        const e = this.snapshots.earliestId();
        throw notFound(`snapshot ${at.snapshotId} of ${this.name} does not exist (retained: ${e ?? 'none'}..${this.snapshots.latestId() ?? 'none'})`);
      }
      return s;
    }
    if (at.tag !== undefined) return this.tags.get(at.tag).snapshot;
    if (at.timestampMs !== undefined) {
      const s = this.snapshots.atOrBefore(at.timestampMs);
      if (!s) {
        const e = this.snapshots.earliestId();
        const first = e === undefined ? undefined : this.snapshots.tryGet(e);
        throw notFound(
          `no snapshot of ${this.name} at or before ${new Date(at.timestampMs).toISOString()}` +
            (first ? ` (the earliest retained is ${first.id}, committed ${new Date(first.timeMillis).toISOString()})` : ' (the table has no snapshot)'),
        );
      }
      return s;
    }
    return this.snapshots.latest();
  }

  /**
   * Where a batch read without a read point of its own reads, as a Paimon engine reads this table:
   * at the snapshot, tag or time its options `scan.snapshot-id`, `scan.tag-name`,
   * `scan.timestamp-millis` name (a Java engine's ALTER), else {} (the latest). For readers that
   * read as an engine would (the CLI's scan and get); `reader()` without a point reads the latest
   * whatever the options say (scan-options.ts).
   */
  batchReadPoint(): ReadPoint {
    return batchReadPointOf(this.schema.options.raw);
  }

  /**
   * A reader of one snapshot. It pins the snapshot (its content, also at a tag) until `close()`.
   * Its `schema` is the one rows come in (ReadPoint): the snapshot's at a snapshot id, tag or time;
   * without one, the table's schema at each call (as `table.schema`, so an ALTER in this process
   * shows at once).
   */
  reader(at: ReadPoint = {}): TableReader {
    const snapshot = this.resolve(at);
    const travel = at.snapshotId !== undefined || at.tag !== undefined || at.timestampMs !== undefined;
    const schemaId = at.schemaId ?? (travel ? snapshot?.schemaId : undefined);
    const schema = schemaId === undefined ? undefined : this.readSchema(schemaId);
    return new TableReader(this, snapshot, snapshot ? this.pinSnapshot(snapshot) : () => {}, schema);
  }

  /**
   * The schema a read in the columns of schema `id` uses (a time-travel read, EVOLUTION-DESIGN.md
   * §1): the current schema when `id` is its id, else schema `id`'s columns, keys and comments with
   * the current options (this process's overrides included), as Paimon's time travel takes the
   * table's options onto the snapshot's schema — the column names they hold changed to schema
   * `id`'s by field id (Paimon would refuse an option naming a column by its newer name).
   * NotFound when there is no schema `id`.
   */
  readSchema(id: number): TableSchema {
    const current = this.currentSchema;
    if (id === current.id) return current;
    let s = this.readSchemas.get(id);
    if (!s) {
      if (!Number.isSafeInteger(id) || id < 0 || !this.fileIO.exists(this.paths.schemaFile(id))) throw notFound(`schema ${id} of ${this.name} does not exist`);
      const own = this.schemaById(id);
      s = this.effective(new TableSchema({ ...own.toJson(), options: optionsInColumnsOf(current.options.raw, current, own) }, false));
      this.readSchemas.set(id, s);
    }
    return s;
  }

  /** Reads rows (schema order) at a read point; see TableReader.scan. */
  scanRows(at: ReadPoint = {}, opts: Parameters<TableReader['scan']>[0] = {}): unknown[][] {
    const r = this.reader(at);
    try {
      return [...r.scan(opts)];
    } finally {
      r.close();
    }
  }

  /**
   * Pins a snapshot for every expiration in this process, whichever Table object of this table
   * runs it, until the returned function is called (once; later calls do nothing). Expiration
   * keeps a pinned id from EARLIEST on, and keeps the files of every pinned snapshot's content
   * even when its snapshot file or tag is gone (expire.ts).
   */
  pinSnapshot(snapshot: Snapshot): () => void {
    const pin: Pin = { snapshot };
    const key = this.pinKey;
    let pins = processPins.get(key);
    if (!pins) {
      pins = new Set();
      processPins.set(key, pins);
    }
    pins.add(pin);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = processPins.get(key);
      if (!now) return;
      now.delete(pin);
      if (now.size === 0) processPins.delete(key);
    };
  }

  /** The snapshots pinned in this process on this table (by any of its Table objects), each once. */
  pinnedSnapshots(): Snapshot[] {
    return [...new Set([...(processPins.get(this.pinKey) ?? [])].map((p) => p.snapshot))];
  }

  /** The ids of pinnedSnapshots. */
  pinnedSnapshotIds(): number[] {
    return [...new Set(this.pinnedSnapshots().map((s) => s.id))];
  }

  // ------------------------------------------------------------------------------------------
  // Files.

  /** Live files of a snapshot grouped by (partition, bucket); the last few snapshots are cached. */
  buckets(snapshot: Snapshot): BucketFiles[] {
    return this.bucketIndex(snapshot).list;
  }

  /**
   * The buckets a read takes: `buckets` without the postpone bucket (-2) of a postpone-mode
   * table, which Paimon's batch and changelog scans skip until its compaction moves the files into
   * real buckets (AbstractBatchTableScan: `onlyReadRealBuckets`). The same array otherwise.
   */
  readBuckets(snapshot: Snapshot): BucketFiles[] {
    return this.bucketIndex(snapshot).real;
  }

  /** The live files of one (partition, bucket) of a snapshot, or undefined when it has none. */
  bucketFiles(snapshot: Snapshot, partition: Uint8Array, bucket: number): BucketFiles | undefined {
    return this.bucketIndex(snapshot).byId.get(`${Buffer.from(partition).toString('hex')}/${bucket}`);
  }

  private bucketIndex(snapshot: Snapshot): { list: BucketFiles[]; real: BucketFiles[]; byId: Map<string, BucketFiles> } {
    let idx = this.bucketIndexes.get(snapshot.id);
    // A rollback can give a snapshot id new content: the delta list names the content.
    if (idx && idx.delta !== snapshot.deltaManifestList) idx = undefined;
    if (!idx) {
      let live: ManifestEntry[];
      try {
        live = this.manifests.liveFiles(snapshot);
      } catch (e) {
        throw this.expiredUnder(e, snapshot);
      }
      const list = groupByBucket(live);
      const real = list.some((b) => b.bucket < 0) ? list.filter((b) => b.bucket >= 0) : list;
      idx = { list, real, byId: new Map(list.map((b) => [`${Buffer.from(b.partition).toString('hex')}/${b.bucket}`, b])), delta: snapshot.deltaManifestList };
      if (this.bucketIndexes.size >= 8) this.bucketIndexes.delete(this.bucketIndexes.keys().next().value as number);
      this.bucketIndexes.set(snapshot.id, idx);
    }
    return idx;
  }

  partitionPathOf(partition: Uint8Array): string {
    const k = Buffer.from(partition).toString('hex');
    let p = this.partitionPaths.get(k);
    if (p === undefined) {
      const s = this.schema;
      const values = deserializeBinaryRow(s.partitionTypes, partition, this.paths.root);
      p = partitionPath(s.partitionIndexes.map((i) => s.fields[i]!), values, s.options.partitionDefaultName, s.options.partitionLegacyName);
      this.partitionPaths.set(k, p);
    }
    return p;
  }

  /**
   * Where a data or changelog file of (partition, bucket) is: at its `_EXTERNAL_PATH` when its
   * manifest entry records one (a table Java wrote with `data-file.external-paths`:
   * DataFilePathFactory.toPath), else in its bucket directory (`TablePaths.bucketDir`: under
   * `data-file.path-directory` when the table has one).
   */
  dataFilePath(partition: Uint8Array, bucket: number, fileName: string, externalPath?: string | null): string {
    if (externalPath) return localPathOf(externalPath, `data file ${fileName}`);
    return `${this.paths.bucketDir(this.partitionPathOf(partition), bucket)}/${fileName}`;
  }

  /**
   * Where an index file (deletion vectors, hash index) of the index manifest is: at its
   * `_EXTERNAL_PATH` when one is recorded, in its bucket directory with
   * `index-file-in-data-file-dir` (IndexInDataFileDirPathFactory.toPath), else under `index/`
   * (FileStorePathFactory.globalIndexFileFactory).
   */
  indexFilePath(e: { partition: Uint8Array; bucket: number; fileName: string; externalPath: string | null }): string {
    if (e.externalPath) return localPathOf(e.externalPath, `index file ${e.fileName}`);
    if (this.schema.options.indexFileInDataFileDir) return `${this.paths.bucketDir(this.partitionPathOf(e.partition), e.bucket)}/${e.fileName}`;
    return this.paths.indexFile(e.fileName);
  }

  /** Decoded min and max key of a data file. */
  keyRange(meta: DataFileMeta): { min: unknown[]; max: unknown[] } {
    let r = this.decodedKeys.get(meta);
    if (!r) {
      const types = this.schema.keyTypes;
      r = {
        min: deserializeBinaryRow(types, meta.minKey, meta.fileName),
        max: deserializeBinaryRow(types, meta.maxKey, meta.fileName),
      };
      this.decodedKeys.set(meta, r);
    }
    return r;
  }

  /**
   * A data file as a run in the columns of `schema` (default: the current schema; a reader passes
   * its own), through the cache (`fill` false: a decode is not kept, RunCache.get).
   */
  loadRun(partition: Uint8Array, bucket: number, meta: DataFileMeta, fill = true, schema: TableSchema = this.currentSchema): RunData {
    return this.loadRunAt(this.dataFilePath(partition, bucket, meta.fileName, meta.externalPath), meta, fill, schema);
  }

  /** `loadRun` for a path already computed with `dataFilePath` (lookups keep it per file). */
  loadRunAt(path: string, meta: DataFileMeta, fill = true, schema: TableSchema = this.currentSchema): RunData {
    const target = this.runSchemaOf(schema);
    // The loaders are written inline: a closure bound to a name is wrapped at every call when the
    // code runs under tsx/esbuild's keepNames (a defineProperty per lookup, +75 % on `get`).
    if (target === this.currentSchema) return this.cache.get(path, () => this.decodeRun(path, meta, target), fill);
    return this.cache.get(`${path}${SHAPED_KEY}${target.id}`, () => this.decodeRun(path, meta, target), fill, target.id);
  }

  /**
   * A data file decoded in the columns of `target`: a file of another schema is read with that
   * schema's names and types, then mapped to the target's columns by field id (data-file-format.ts).
   */
  private decodeRun(path: string, meta: DataFileMeta, target: TableSchema): RunData {
    if (meta.schemaId === target.id) return readDataFile(this.fileIO, target, path, meta);
    const own = this.schemaById(meta.schemaId);
    const run = readDataFile(this.fileIO, own, path, meta);
    try {
      return evolveRun(run, own, target);
    } catch (e) {
      // A stored value that does not cast to the type read in: named with its file here, with the
      // snapshot or diff read by the reader's error path (expiredUnder, incremental.ts).
      if (!(e instanceof LsmError) || e.kind !== 'InvalidArgument') throw e;
      throw uncastableRead(`${e.message}: data file ${path} (schema ${own.id}) read in the columns of schema ${target.id}`, path, e);
    }
  }

  /**
   * A data file as a run for a scan that needs only some value columns (`ScanColumns`, and the
   * keys): the whole run when the cache holds it, else a run decoded with only those columns (the
   * others null), cached apart from the whole run (its key names the columns). An Avro file, a
   * file of another schema than the current one and a read in an older schema's columns read
   * whole, as `loadRunAt` reads them. `fill` and `schema`: as `loadRun`'s.
   */
  loadRunProjected(partition: Uint8Array, bucket: number, meta: DataFileMeta, columns: ScanColumns, fill = true, schema: TableSchema = this.currentSchema): RunData {
    const path = this.dataFilePath(partition, bucket, meta.fileName, meta.externalPath);
    if (this.runSchemaOf(schema) !== this.currentSchema) return this.loadRunAt(path, meta, fill, schema);
    const whole = this.cache.peek(path);
    if (whole !== undefined) return whole;
    if (meta.schemaId !== this.schema.id || formatOfPath(path) !== 'parquet') return this.loadRunAt(path, meta, fill);
    return this.cache.get(`${path}${PROJECTED_KEY}${columns.key}`, () => readDataFile(this.fileIO, this.schema, path, meta, columns.keep), fill);
  }

  /**
   * The schema runs read in the columns of `s` are decoded for: the current schema when `s` has its
   * columns (same field ids and types in the same order — only names, options or comments differ),
   * so such reads share the current runs; else `s`.
   */
  private runSchemaOf(s: TableSchema): TableSchema {
    const current = this.currentSchema;
    if (s === current) return s;
    let r = this.runSchemas.get(s);
    if (r === undefined) {
      const same = s.fields.length === current.fields.length && s.fields.every((f, i) => f.id === current.fields[i]!.id && typeToString(f.type) === typeToString(current.fields[i]!.type));
      r = same ? current : s;
      this.runSchemas.set(s, r);
    }
    return r;
  }

  /** Sorted runs (newest first) of a bucket's files. */
  runsOf(files: readonly DataFileMeta[]) {
    return sortedRuns(files, (a, b) => this.compareKeys(this.keyRange(a).min, this.keyRange(b).min));
  }

  // ------------------------------------------------------------------------------------------
  // Changes (incremental.ts): between two points, and followed under a named consumer.

  /**
   * Changes in (from, to] (ids or tag names) as +I/-U/+U/-D rows; mode auto, delta, changelog or
   * diff. NotFound when a snapshot the read needs has expired, also when it expired in another
   * process after this Table object had read it (`changesExpired`).
   */
  changes(o: ChangesOptions): Iterable<Change> {
    return this.changesChecked(o);
  }

  private *changesChecked(o: ChangesOptions): Generator<Change> {
    try {
      yield* readChanges(this, o);
    } catch (e) {
      throw this.changesExpired(e, o);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Expired under a read. The snapshot cache reads ids below EARLIEST from disk again
  // (snapshot-manager.ts), so a snapshot expired in this process is NotFound before anything of it
  // is read. Expiration in another process is learnt when EARLIEST is next read; until then a
  // cached snapshot may be handed out whose files are gone. A file found missing then is checked
  // against the disk here, on the error path only: NotFound when the snapshot has expired,
  // Corruption (the error as it was) when its snapshot or a tag of it is still there.

  /**
   * `e`, or NotFound when `e` is a corruption met while reading `s` and `s` is retained by nothing
   * on disk any more: its snapshot file is gone (or holds other content) and no tag holds it.
   * Planning asks it (`bucketIndex`), and so does TableReader when a data file of a snapshot whose
   * plan is cached turns out missing. Call it on the error path only: it reads the disk.
   */
  expiredUnder(e: unknown, s: Snapshot): unknown {
    nameReadState(e, () => {
      const tags = this.tags.list().filter((t) => t.snapshot.id === s.id).map((t) => `'${t.name}'`);
      return `snapshot ${s.id}${tags.length > 0 ? ` (tag ${tags.join(', ')})` : ''}`;
    });
    if (!(e instanceof LsmError) || e.kind !== 'Corruption') return e;
    try {
      if (this.snapshots.isRetained(s) || this.tags.list().some((t) => t.snapshot.id === s.id && t.snapshot.deltaManifestList === s.deltaManifestList)) return e;
    } catch {
      return e; // the look itself failed: report what was met first
    }
    return this.expiredError(s.id, e);
  }

  /** `e`, or NotFound when `e` is a corruption met by `changes(o)` and a snapshot the read needs has expired. */
  private changesExpired(e: unknown, o: ChangesOptions): unknown {
    if (!(e instanceof LsmError) || e.kind !== 'Corruption') return e;
    try {
      const earliest = this.snapshots.earliestId(); // raises the snapshot cache's floor
      const from = this.refId(o.from);
      if (o.mode === 'diff') {
        // Both states are read: an id whose snapshot is gone (a tag holds its own state).
        for (const r of [from, o.to === undefined ? undefined : this.refId(o.to)]) {
          if (r !== undefined && !r.tag && r.id > 0 && !this.snapshots.exists(r.id)) return this.expiredError(r.id, e);
        }
      } else if (from !== undefined && (earliest === undefined || from.id + 1 < earliest)) {
        // Every snapshot of (from, to] is read; expiration takes the oldest first.
        return this.expiredError(from.id + 1, e);
      }
    } catch {
      return e;
    }
    return e;
  }

  /** The snapshot id a changes() reference names now, and whether a tag names it; undefined when neither. */
  private refId(ref: SnapshotRef): { id: number; tag: boolean } | undefined {
    if (typeof ref === 'string' && this.tags.exists(ref)) return { id: this.tags.get(ref).snapshot.id, tag: true };
    const id = typeof ref === 'number' ? ref : /^\d+$/.test(ref) ? Number(ref) : NaN;
    return Number.isSafeInteger(id) ? { id, tag: false } : undefined;
  }

  private expiredError(id: number, e: LsmError): LsmError {
    // Not the corruption as `cause`: isCorruption walks causes, and nothing here is damaged.
    return notFound(
      `snapshot ${id} of ${this.name} has expired (retained: ${this.snapshots.earliestId() ?? 'none'}..${this.snapshots.latestId() ?? 'none'}); ` +
        `reading it found its files gone (${e.path ?? e.message})`,
    );
  }

  /** A poll-driven follower whose progress is stored in `consumer/consumer-<id>`. */
  follow(o: FollowOptions): ChangeFollower {
    return new ChangeFollower(this, o);
  }

  // ------------------------------------------------------------------------------------------
  // Writing, tags, maintenance.

  /** The table's single writer; Conflict when another process or object writes it. */
  newWriter(o: WriterOptions = {}): TableWriter {
    // Append tables (no primary key) get an AppendWriter, a TableWriter with an append row path.
    return this.schema.isPrimaryKeyTable ? new TableWriter(this, o) : new AppendWriter(this, o);
  }

  /**
   * Expires partitions now (Java's `expire_partitions` procedure): takes the table's writer for
   * the call (Conflict while another holds it), drops what `TableWriter.expirePartitionsNow` says
   * — the table's partition-expiration options, with `o`'s arguments in their place for this
   * call only — and releases the writer. Works on append tables too.
   */
  expirePartitions(o: ExpirePartitionsOptions = {}, writer: WriterOptions = {}): ExpirePartitionsResult {
    return TableWriter.expirePartitionsOnce(this, o, writer);
  }

  /**
   * Rolls the table back to a retained snapshot or a tag (TableWriter.rollbackTo) with the table's
   * writer taken for the call (Conflict while another holds it). Also when the latest snapshot is
   * damaged and no writer opens: destructively, the damaged snapshot removed with every later one
   * (TableWriter.rollbackOnce).
   */
  rollbackTo(to: SnapshotRef, o: { keepHistory?: boolean } = {}, writer: WriterOptions = {}): RollbackResult {
    return TableWriter.rollbackOnce(this, to, o, writer);
  }

  /**
   * ALTER TABLE (schema-change.ts): applies the changes under the writer lock (Conflict while a
   * writer is open) and writes `schema-<N+1>`; the table reads and writes with it from now on.
   */
  alter(changes: readonly SchemaChange[]): TableSchema {
    return alterTable(this, changes, (s) => {
      this.currentSchema = this.effective(s);
      this.paths.setDataDirectory(s.options.dataFilePathDirectory);
      this.schemas.set(s.id, s);
      this.readSchemas.clear(); // they take the current options
      this.runSchemas = new WeakMap();
      this.cache.clear(); // cached runs have the old schema's shape
    });
  }

  /**
   * Tags snapshot `snapshotId` (the latest when not given). NotFound when that snapshot has expired
   * and no tag holds it — also when this object's snapshot cache still holds it. `retainedMs`
   * undefined: the table's `tag.default-time-retained` when it has one (as Paimon's manual tag
   * creation, AbstractFileStoreTable.createTag), else kept until deleted; null: kept until deleted
   * whatever the table's default (a hold this store's own code needs, never Java's).
   */
  createTag(name: string, snapshotId?: number, retainedMs?: number | null): TagInfo {
    let retained = retainedMs ?? undefined;
    if (retainedMs === undefined && this.schema.options.tagDefaultTimeRetainedMs !== undefined) {
      retained = this.schema.options.tagDefaultTimeRetainedMs;
      // A table written elsewhere may say 0 (Java's tag would expire at once); named here rather
      // than as a bad argument the caller never gave.
      if (retained <= 0) {
        throw invalidArgument(`cannot tag '${name}': the table's option 'tag.default-time-retained' is '${this.schema.options.raw['tag.default-time-retained']}', expected a positive duration; give the tag a retention`);
      }
    }
    if (snapshotId !== undefined) {
      // The cache may hold a snapshot another process has since expired (learnt only when EARLIEST
      // is next read) or rolled back: a tag of it would name files that are gone. isRetained looks
      // at the disk once (this path is rare) and drops such a snapshot from the cache, so the tag is
      // made from the snapshot file, or from a tag that holds it, or refused.
      const cached = this.snapshots.tryGet(snapshotId);
      if (cached !== undefined) this.snapshots.isRetained(cached);
    }
    return this.tags.create(name, snapshotId, retained);
  }

  /** Restarts a tag's retention time from now (TagManager.renew). */
  renewTag(name: string, retainedMs?: number): TagInfo {
    return this.tags.renew(name, retainedMs);
  }

  deleteTag(name: string): void {
    this.tags.delete(name);
  }

  listTags(): TagInfo[] {
    return this.tags.list();
  }

  /**
   * Expires snapshots by the table's retention options and deletes the files no retained
   * snapshot or tag needs. REQUIRES: the caller holds the table's writer lock (use
   * TableWriter.expire, or a writer opened for maintenance).
   * Refused (NotSupported) for a table whose options a writer here refuses (write-options.ts), as
   * every writer path is: expiration is a write too, and one such option changes what it must
   * keep (a changelog retained longer than its snapshots, whose files Java keeps and this
   * expiration would delete).
   */
  expireUnderLock(): ExpireResult {
    checkWritableOptions(this.schema, `expiring table ${this.name}`);
    return expireSnapshots(this);
  }

  /** Deletes files no snapshot or tag references, older than `olderThanMs`. REQUIRES the writer lock. */
  removeOrphansUnderLock(olderThanMs: number): string[] {
    return removeOrphanFiles(this, olderThanMs);
  }
}
