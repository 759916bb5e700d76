// Paimon manifests (paimon-format.md §5): manifest files (ManifestEntry records), manifest lists
// (ManifestFileMeta records) and index manifests (IndexManifestEntry records), as Avro container
// files, plus the ADD/DELETE merge that turns a snapshot's entries into its live file set (§5.4).
//
// Writing uses the exact Avro schemas Java 1.x writes (bare records, `org.apache.paimon.avro.generated`
// names, nullable = `["null", T]` with default null). Reading takes the writer schema from the file and
// maps fields by name, so it accepts 0.8/0.9 `["null", record]`-wrapped records, files that lack newer
// fields (they read as null) and files with extra fields (ignored).
// Invariants: binary rows (partition, keys, stats) stay the raw serialized bytes (§6.2); all longs are
// JS numbers (an unsafe long is a corruption); manifests in ORC/Parquet are refused with notSupported.

import { corruption, notSupported } from './errors.ts';
import { readAvroContainer, writeAvroContainer, type AvroWriteCodec } from './format/avro-container.ts';
import { EMPTY_SERIALIZED_ROW } from './binary-row.ts';

export interface SimpleStats {
  minValues: Uint8Array;
  maxValues: Uint8Array;
  /** Per covered column; null = unknown. Null as a whole when not recorded. */
  nullCounts: Array<number | null> | null;
}

export interface DataFileMeta {
  fileName: string;
  fileSize: number;
  rowCount: number;
  minKey: Uint8Array;
  maxKey: Uint8Array;
  keyStats: SimpleStats;
  valueStats: SimpleStats;
  minSequenceNumber: number;
  maxSequenceNumber: number;
  schemaId: number;
  level: number;
  extraFiles: string[];
  /** Local wall-clock epoch millis (Java `Timestamp.fromLocalDateTime(now)`). */
  creationTime: number | null;
  deleteRowCount: number | null;
  embeddedIndex: Uint8Array | null;
  /** 0 = APPEND, 1 = COMPACT. */
  fileSource: number | null;
  valueStatsCols: string[] | null;
  externalPath: string | null;
  firstRowId: number | null;
  writeCols: string[] | null;
}

export type FileKind = 0 | 1; // ADD, DELETE
export const ADD: FileKind = 0;
export const DELETE: FileKind = 1;

export interface ManifestEntry {
  kind: FileKind;
  /** Serialized BinaryRow of the partition values. */
  partition: Uint8Array;
  bucket: number;
  totalBuckets: number;
  file: DataFileMeta;
}

export interface ManifestFileMeta {
  fileName: string;
  fileSize: number;
  numAddedFiles: number;
  numDeletedFiles: number;
  partitionStats: SimpleStats;
  schemaId: number;
  minBucket: number | null;
  maxBucket: number | null;
  minLevel: number | null;
  maxLevel: number | null;
  minRowId: number | null;
  maxRowId: number | null;
}

export interface DeletionVectorRange {
  dataFileName: string;
  offset: number;
  length: number;
  cardinality: number | null;
}

export interface IndexManifestEntry {
  kind: FileKind;
  partition: Uint8Array;
  bucket: number;
  /** `DELETION_VECTORS`, `HASH`, or a global index type. */
  indexType: string;
  fileName: string;
  fileSize: number;
  rowCount: number;
  dvRanges: DeletionVectorRange[] | null;
  externalPath: string | null;
}

export const emptyStats = (): SimpleStats => ({ minValues: EMPTY_SERIALIZED_ROW, maxValues: EMPTY_SERIALIZED_ROW, nullCounts: [] });

// ---------------------------------------------------------------------------------------------
// Schemas, as Java 1.x writes them.

const NS = 'org.apache.paimon.avro.generated';
const opt = (name: string, type: unknown) => ({ name, type: ['null', type], default: null });
const req = (name: string, type: unknown) => ({ name, type });
const stringArray = { type: 'array', items: 'string' };
const statsRecord = (name: string) => ({
  type: 'record',
  name,
  fields: [req('_MIN_VALUES', 'bytes'), req('_MAX_VALUES', 'bytes'), opt('_NULL_COUNTS', { type: 'array', items: ['null', 'long'] })],
});

export const MANIFEST_ENTRY_SCHEMA = {
  type: 'record',
  name: 'record',
  namespace: NS,
  fields: [
    req('_VERSION', 'int'),
    req('_KIND', 'int'),
    req('_PARTITION', 'bytes'),
    req('_BUCKET', 'int'),
    req('_TOTAL_BUCKETS', 'int'),
    req('_FILE', {
      type: 'record',
      name: 'record__FILE',
      fields: [
        req('_FILE_NAME', 'string'),
        req('_FILE_SIZE', 'long'),
        req('_ROW_COUNT', 'long'),
        req('_MIN_KEY', 'bytes'),
        req('_MAX_KEY', 'bytes'),
        req('_KEY_STATS', statsRecord('record__FILE__KEY_STATS')),
        req('_VALUE_STATS', statsRecord('record__FILE__VALUE_STATS')),
        req('_MIN_SEQUENCE_NUMBER', 'long'),
        req('_MAX_SEQUENCE_NUMBER', 'long'),
        req('_SCHEMA_ID', 'long'),
        req('_LEVEL', 'int'),
        req('_EXTRA_FILES', stringArray),
        opt('_CREATION_TIME', { type: 'long', logicalType: 'timestamp-millis' }),
        opt('_DELETE_ROW_COUNT', 'long'),
        opt('_EMBEDDED_FILE_INDEX', 'bytes'),
        opt('_FILE_SOURCE', 'int'),
        opt('_VALUE_STATS_COLS', stringArray),
        opt('_EXTERNAL_PATH', 'string'),
        opt('_FIRST_ROW_ID', 'long'),
        opt('_WRITE_COLS', stringArray),
      ],
    }),
  ],
};

export const MANIFEST_FILE_META_SCHEMA = {
  type: 'record',
  name: 'record',
  namespace: NS,
  fields: [
    req('_VERSION', 'int'),
    req('_FILE_NAME', 'string'),
    req('_FILE_SIZE', 'long'),
    req('_NUM_ADDED_FILES', 'long'),
    req('_NUM_DELETED_FILES', 'long'),
    req('_PARTITION_STATS', statsRecord('record__PARTITION_STATS')),
    req('_SCHEMA_ID', 'long'),
    opt('_MIN_BUCKET', 'int'),
    opt('_MAX_BUCKET', 'int'),
    opt('_MIN_LEVEL', 'int'),
    opt('_MAX_LEVEL', 'int'),
    opt('_MIN_ROW_ID', 'long'),
    opt('_MAX_ROW_ID', 'long'),
  ],
};

export const INDEX_MANIFEST_ENTRY_SCHEMA = {
  type: 'record',
  name: 'record',
  namespace: NS,
  fields: [
    req('_VERSION', 'int'),
    req('_KIND', 'int'),
    req('_PARTITION', 'bytes'),
    req('_BUCKET', 'int'),
    req('_INDEX_TYPE', 'string'),
    req('_FILE_NAME', 'string'),
    req('_FILE_SIZE', 'long'),
    req('_ROW_COUNT', 'long'),
    opt('_DELETIONS_VECTORS_RANGES', {
      type: 'array',
      items: [
        'null',
        {
          type: 'record',
          name: 'record__DELETIONS_VECTORS_RANGES',
          fields: [req('f0', 'string'), req('f1', 'int'), req('f2', 'int'), opt('_CARDINALITY', 'long')],
        },
      ],
    }),
    opt('_EXTERNAL_PATH', 'string'),
  ],
};

/** `_VERSION` Java 1.x writes for manifest entries and manifest file metas. */
export const MANIFEST_VERSION = 2;

// ---------------------------------------------------------------------------------------------
// Decoding (by field name, tolerant of missing/extra fields and null-wrapped records).

type Rec = Record<string, unknown>;

class Fields {
  constructor(
    readonly path: string,
    readonly what: string,
  ) {}
  rec(r: unknown, name: string): Rec {
    if (r === null || typeof r !== 'object') throw corruption(this.path, `${this.what}: ${name} is missing`);
    return r as Rec;
  }
  req<T>(r: Rec, name: string, check: (v: unknown) => boolean): T {
    const v = r[name];
    if (v === undefined || v === null || !check(v)) throw corruption(this.path, `${this.what}: field ${name} is missing or malformed`);
    return v as T;
  }
  opt<T>(r: Rec, name: string, check: (v: unknown) => boolean): T | null {
    const v = r[name];
    if (v === undefined || v === null) return null;
    if (!check(v)) throw corruption(this.path, `${this.what}: field ${name} is malformed`);
    return v as T;
  }
  num = (r: Rec, n: string) => this.req<number>(r, n, isNum);
  str = (r: Rec, n: string) => this.req<string>(r, n, isStr);
  bytes = (r: Rec, n: string) => copyBytes(this.req<Uint8Array>(r, n, isBytes));
  optNum = (r: Rec, n: string) => this.opt<number>(r, n, isNum);
  optStr = (r: Rec, n: string) => this.opt<string>(r, n, isStr);
  optStrings = (r: Rec, n: string) => this.opt<string[]>(r, n, isStrArray)?.slice() ?? null;
  stats(r: Rec, n: string): SimpleStats {
    const s = r[n];
    if (s === null || s === undefined) return emptyStats(); // 0.9 wrote nullable stats
    const sr = this.rec(s, n);
    const counts = this.opt<unknown[]>(sr, '_NULL_COUNTS', (v) => Array.isArray(v) && v.every((c) => c === null || isNum(c)));
    return { minValues: this.bytes(sr, '_MIN_VALUES'), maxValues: this.bytes(sr, '_MAX_VALUES'), nullCounts: counts ? (counts.slice() as Array<number | null>) : null };
  }
  kind(r: Rec): FileKind {
    const k = this.num(r, '_KIND');
    if (k !== 0 && k !== 1) throw corruption(this.path, `${this.what}: _KIND ${k} is neither ADD nor DELETE`);
    return k;
  }
}
const isNum = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
const isStr = (v: unknown) => typeof v === 'string';
const isBytes = (v: unknown) => v instanceof Uint8Array;
const isStrArray = (v: unknown) => Array.isArray(v) && v.every(isStr);
const copyBytes = (b: Uint8Array) => new Uint8Array(b);
const buf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

function records(bytes: Uint8Array, path: string, what: string): unknown[] {
  const magic = String.fromCharCode(...bytes.subarray(0, 4));
  if (magic.startsWith('ORC')) throw notSupported(`${what} ${path} is an ORC file: manifests in ORC are not supported (only Avro manifests are)`);
  if (magic === 'PAR1') throw notSupported(`${what} ${path} is a Parquet file: manifests in Parquet are not supported (only Avro manifests are)`);
  return readAvroContainer(bytes, path).records;
}

function decodeFile(f: Fields, r: Rec): DataFileMeta {
  return {
    fileName: f.str(r, '_FILE_NAME'),
    fileSize: f.num(r, '_FILE_SIZE'),
    rowCount: f.num(r, '_ROW_COUNT'),
    minKey: f.bytes(r, '_MIN_KEY'),
    maxKey: f.bytes(r, '_MAX_KEY'),
    keyStats: f.stats(r, '_KEY_STATS'),
    valueStats: f.stats(r, '_VALUE_STATS'),
    minSequenceNumber: f.num(r, '_MIN_SEQUENCE_NUMBER'),
    maxSequenceNumber: f.num(r, '_MAX_SEQUENCE_NUMBER'),
    schemaId: f.num(r, '_SCHEMA_ID'),
    level: f.num(r, '_LEVEL'),
    extraFiles: f.req<string[]>(r, '_EXTRA_FILES', isStrArray).slice(),
    creationTime: f.optNum(r, '_CREATION_TIME'),
    deleteRowCount: f.optNum(r, '_DELETE_ROW_COUNT'),
    embeddedIndex: ((b) => (b ? copyBytes(b) : null))(f.opt<Uint8Array>(r, '_EMBEDDED_FILE_INDEX', isBytes)),
    fileSource: f.optNum(r, '_FILE_SOURCE'),
    valueStatsCols: f.optStrings(r, '_VALUE_STATS_COLS'),
    externalPath: f.optStr(r, '_EXTERNAL_PATH'),
    firstRowId: f.optNum(r, '_FIRST_ROW_ID'),
    writeCols: f.optStrings(r, '_WRITE_COLS'),
  };
}

/** Decodes a manifest file (any Paimon 0.8+ Avro manifest, any codec). */
export function decodeManifest(bytes: Uint8Array, path: string): ManifestEntry[] {
  const f = new Fields(path, 'manifest entry');
  return records(bytes, path, 'manifest').map((raw) => {
    const r = f.rec(raw, 'record');
    return {
      kind: f.kind(r),
      partition: f.bytes(r, '_PARTITION'),
      bucket: f.num(r, '_BUCKET'),
      totalBuckets: f.num(r, '_TOTAL_BUCKETS'),
      file: decodeFile(f, f.rec(r['_FILE'], '_FILE')),
    };
  });
}

/** Decodes a manifest list. `_VERSION` 1 (pre-0.5 layout) is refused as Java does. */
export function decodeManifestList(bytes: Uint8Array, path: string): ManifestFileMeta[] {
  const f = new Fields(path, 'manifest list record');
  return records(bytes, path, 'manifest list').map((raw) => {
    const r = f.rec(raw, 'record');
    const version = f.optNum(r, '_VERSION');
    if (version === 1) throw notSupported(`manifest list ${path} has _VERSION 1; the table must be recreated`);
    return {
      fileName: f.str(r, '_FILE_NAME'),
      fileSize: f.num(r, '_FILE_SIZE'),
      numAddedFiles: f.num(r, '_NUM_ADDED_FILES'),
      numDeletedFiles: f.num(r, '_NUM_DELETED_FILES'),
      partitionStats: f.stats(r, '_PARTITION_STATS'),
      schemaId: f.num(r, '_SCHEMA_ID'),
      minBucket: f.optNum(r, '_MIN_BUCKET'),
      maxBucket: f.optNum(r, '_MAX_BUCKET'),
      minLevel: f.optNum(r, '_MIN_LEVEL'),
      maxLevel: f.optNum(r, '_MAX_LEVEL'),
      minRowId: f.optNum(r, '_MIN_ROW_ID'),
      maxRowId: f.optNum(r, '_MAX_ROW_ID'),
    };
  });
}

/** Decodes an index manifest (deletion vectors, HASH, global index entries). */
export function decodeIndexManifest(bytes: Uint8Array, path: string): IndexManifestEntry[] {
  const f = new Fields(path, 'index manifest entry');
  return records(bytes, path, 'index manifest').map((raw) => {
    const r = f.rec(raw, 'record');
    const ranges = f.opt<unknown[]>(r, '_DELETIONS_VECTORS_RANGES', Array.isArray);
    return {
      kind: f.kind(r),
      partition: f.bytes(r, '_PARTITION'),
      bucket: f.num(r, '_BUCKET'),
      indexType: f.str(r, '_INDEX_TYPE'),
      fileName: f.str(r, '_FILE_NAME'),
      fileSize: f.num(r, '_FILE_SIZE'),
      rowCount: f.num(r, '_ROW_COUNT'),
      dvRanges: ranges
        ? ranges.map((x) => {
            const d = f.rec(x, '_DELETIONS_VECTORS_RANGES item');
            return { dataFileName: f.str(d, 'f0'), offset: f.num(d, 'f1'), length: f.num(d, 'f2'), cardinality: f.optNum(d, '_CARDINALITY') };
          })
        : null,
      externalPath: f.optStr(r, '_EXTERNAL_PATH'),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Encoding.

const statsRec = (s: SimpleStats) => ({ _MIN_VALUES: buf(s.minValues), _MAX_VALUES: buf(s.maxValues), _NULL_COUNTS: s.nullCounts });

function fileRec(m: DataFileMeta): Rec {
  return {
    _FILE_NAME: m.fileName,
    _FILE_SIZE: m.fileSize,
    _ROW_COUNT: m.rowCount,
    _MIN_KEY: buf(m.minKey),
    _MAX_KEY: buf(m.maxKey),
    _KEY_STATS: statsRec(m.keyStats),
    _VALUE_STATS: statsRec(m.valueStats),
    _MIN_SEQUENCE_NUMBER: m.minSequenceNumber,
    _MAX_SEQUENCE_NUMBER: m.maxSequenceNumber,
    _SCHEMA_ID: m.schemaId,
    _LEVEL: m.level,
    _EXTRA_FILES: m.extraFiles,
    _CREATION_TIME: m.creationTime,
    _DELETE_ROW_COUNT: m.deleteRowCount,
    _EMBEDDED_FILE_INDEX: m.embeddedIndex ? buf(m.embeddedIndex) : null,
    _FILE_SOURCE: m.fileSource,
    _VALUE_STATS_COLS: m.valueStatsCols,
    _EXTERNAL_PATH: m.externalPath,
    _FIRST_ROW_ID: m.firstRowId,
    _WRITE_COLS: m.writeCols,
  };
}

export function encodeManifest(entries: readonly ManifestEntry[], codec: AvroWriteCodec): Uint8Array {
  return writeAvroContainer(
    MANIFEST_ENTRY_SCHEMA,
    entries.map((e) => ({
      _VERSION: MANIFEST_VERSION,
      _KIND: e.kind,
      _PARTITION: buf(e.partition),
      _BUCKET: e.bucket,
      _TOTAL_BUCKETS: e.totalBuckets,
      _FILE: fileRec(e.file),
    })),
    codec,
  );
}

export function encodeManifestList(metas: readonly ManifestFileMeta[], codec: AvroWriteCodec): Uint8Array {
  return writeAvroContainer(
    MANIFEST_FILE_META_SCHEMA,
    metas.map((m) => ({
      _VERSION: MANIFEST_VERSION,
      _FILE_NAME: m.fileName,
      _FILE_SIZE: m.fileSize,
      _NUM_ADDED_FILES: m.numAddedFiles,
      _NUM_DELETED_FILES: m.numDeletedFiles,
      _PARTITION_STATS: statsRec(m.partitionStats),
      _SCHEMA_ID: m.schemaId,
      _MIN_BUCKET: m.minBucket,
      _MAX_BUCKET: m.maxBucket,
      _MIN_LEVEL: m.minLevel,
      _MAX_LEVEL: m.maxLevel,
      _MIN_ROW_ID: m.minRowId,
      _MAX_ROW_ID: m.maxRowId,
    })),
    codec,
  );
}

/** `_VERSION` of index manifest entries (IndexManifestEntrySerializer). */
export const INDEX_MANIFEST_VERSION = 1;

export function encodeIndexManifest(entries: readonly IndexManifestEntry[], codec: AvroWriteCodec): Uint8Array {
  return writeAvroContainer(
    INDEX_MANIFEST_ENTRY_SCHEMA,
    entries.map((e) => ({
      _VERSION: INDEX_MANIFEST_VERSION,
      _KIND: e.kind,
      _PARTITION: buf(e.partition),
      _BUCKET: e.bucket,
      _INDEX_TYPE: e.indexType,
      _FILE_NAME: e.fileName,
      _FILE_SIZE: e.fileSize,
      _ROW_COUNT: e.rowCount,
      _DELETIONS_VECTORS_RANGES: e.dvRanges?.map((d) => ({ f0: d.dataFileName, f1: d.offset, f2: d.length, _CARDINALITY: d.cardinality })) ?? null,
      _EXTERNAL_PATH: e.externalPath,
    })),
    codec,
  );
}

// ---------------------------------------------------------------------------------------------
// Merging (FileEntry.mergeEntries).

const hex = (b: Uint8Array | null) => (b ? Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex') : '-');

/** Java's `FileEntry.Identifier`: (partition, bucket, level, fileName, extraFiles, embeddedIndex, externalPath). */
export function entryIdentifier(e: ManifestEntry): string {
  const f = e.file;
  return JSON.stringify([hex(e.partition), e.bucket, f.level, f.fileName, f.extraFiles, hex(f.embeddedIndex), f.externalPath]);
}

/**
 * Merges entries in order, as Java does: an ADD of an identity already present is a corruption; a
 * DELETE removes the matching ADD, or — when none was seen — is kept, because its ADD lives in an
 * earlier batch (merging a delta on its own). Returns the surviving entries in first-seen order;
 * for a snapshot's base + delta lists these are exactly its live ADDs.
 */
export function mergeEntries(entries: Iterable<ManifestEntry>, path = 'manifest entries'): ManifestEntry[] {
  const map = new Map<string, ManifestEntry>();
  for (const e of entries) {
    const id = entryIdentifier(e);
    if (e.kind === ADD) {
      if (map.has(id)) throw corruption(path, `file ${e.file.fileName} (bucket ${e.bucket}, level ${e.file.level}) is added twice`);
      map.set(id, e);
    } else if (map.has(id)) map.delete(id);
    else map.set(id, e);
  }
  return [...map.values()];
}

/** The live data files of a complete entry sequence (base then delta): a DELETE left over is a corruption. */
export function liveEntries(entries: Iterable<ManifestEntry>, path = 'manifest entries'): ManifestEntry[] {
  const merged = mergeEntries(entries, path);
  const orphan = merged.find((e) => e.kind === DELETE);
  if (orphan) throw corruption(path, `DELETE of ${orphan.file.fileName} (bucket ${orphan.bucket}, level ${orphan.file.level}) matches no ADD`);
  return merged;
}
