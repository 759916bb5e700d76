// Data files of a primary-key table: one sorted run of records written as a Parquet file with
// Paimon's columns (`_KEY_<k>…`, `_SEQUENCE_NUMBER`, `_VALUE_KIND`, then every table column), its
// DataFileMeta (sizes, key range, statistics, sequence range) for the manifest, and the way back
// from a file to records.
//
// In memory a file is a `RunData`: columns of values, rows sorted by key, one row per key.
// Invariants: a file is written once under a unique name and never changed; `_FILE_SIZE` is the
// exact byte size; min/max key are the first and last keys.

import { serializeBinaryRow } from './binary-row.ts';
import { corruption, LsmError } from './errors.ts';
import type { FileIO } from './file-io.ts';
import type { ParquetColumn, ParquetReadColumn } from './format/parquet/index.ts';
import { appendRun, decodeDataFile, encodeDataFile } from './data-file-format.ts';
import { RowKind, type KeyValue } from './key-value.ts';
import type { DataFileMeta, SimpleStats } from './manifest.ts';
import {
  KEY_FIELD_ID_START,
  KEY_PREFIX,
  SEQUENCE_NUMBER_FIELD_ID,
  VALUE_KIND_FIELD_ID,
  type TableSchema,
} from './schema.ts';
import { comparatorFor, isBinaryType, isNestedType, isStringType, parseType, withNullable, type DataType } from './types.ts';

const SEQ_TYPE: DataType = parseType('BIGINT NOT NULL');
const KIND_TYPE: DataType = parseType('TINYINT NOT NULL');
const STATS_TRUNCATE_CHARS = 16;

export interface RunData {
  readonly rowCount: number;
  /** One array per trimmed primary-key column. */
  readonly keyCols: unknown[][];
  readonly seq: number[];
  readonly kind: number[];
  /** One array per table column, in schema order. */
  readonly valueCols: unknown[][];
}

export function kvAt(run: RunData, i: number): KeyValue {
  const key = new Array(run.keyCols.length);
  for (let k = 0; k < key.length; k++) key[k] = run.keyCols[k]![i];
  const value = new Array(run.valueCols.length);
  for (let c = 0; c < value.length; c++) value[c] = run.valueCols[c]![i];
  return { key, seq: run.seq[i]!, kind: run.kind[i] as KeyValue['kind'], value };
}

export function runFromRecords(records: readonly KeyValue[], keyArity: number, valueArity: number): RunData {
  const n = records.length;
  const keyCols = Array.from({ length: keyArity }, () => new Array(n));
  const valueCols = Array.from({ length: valueArity }, () => new Array(n));
  const seq = new Array<number>(n);
  const kind = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    for (let k = 0; k < keyArity; k++) keyCols[k]![i] = r.key[k];
    for (let c = 0; c < valueArity; c++) valueCols[c]![i] = r.value[c] ?? null;
    seq[i] = r.seq;
    kind[i] = r.kind;
  }
  return { rowCount: n, keyCols, seq, kind, valueCols };
}

/** The Parquet columns of a data file of this schema. */
export function fileColumns(schema: TableSchema): ParquetColumn[] {
  // Append tables (no primary key): only the table's columns (data-file-format.ts).
  if (!schema.isPrimaryKeyTable) return schema.fields.map((f) => ({ name: f.name, fieldId: f.id, type: f.type }));
  const cols: ParquetColumn[] = schema.keyIndexes.map((i) => ({
    name: `${KEY_PREFIX}${schema.fields[i]!.name}`,
    fieldId: KEY_FIELD_ID_START + schema.fields[i]!.id,
    type: withNullable(schema.fields[i]!.type, false),
  }));
  cols.push({ name: '_SEQUENCE_NUMBER', fieldId: SEQUENCE_NUMBER_FIELD_ID, type: SEQ_TYPE });
  cols.push({ name: '_VALUE_KIND', fieldId: VALUE_KIND_FIELD_ID, type: KIND_TYPE });
  for (const f of schema.fields) cols.push({ name: f.name, fieldId: f.id, type: f.type });
  return cols;
}

function readColumns(schema: TableSchema): ParquetReadColumn[] {
  return fileColumns(schema).map((c) => (c.name === '_SEQUENCE_NUMBER' ? { name: c.name, type: c.type, asNumber: true } : { name: c.name, type: c.type }));
}

/** Min, max and null count of one column; strings are cut to 16 characters as Paimon's truncate(16). */
function columnStats(type: DataType, values: unknown[], truncate: boolean): [unknown, unknown, number] {
  if (isBinaryType(type) || isNestedType(type)) {
    let nulls = 0;
    for (const v of values) if (v === null || v === undefined) nulls++;
    return [null, null, nulls];
  }
  const cmp = comparatorFor(withNullable(type, false));
  let min: unknown = null;
  let max: unknown = null;
  let nulls = 0;
  for (const v of values) {
    if (v === null || v === undefined) {
      nulls++;
      continue;
    }
    if (min === null || cmp(v, min) < 0) min = v;
    if (max === null || cmp(v, max) > 0) max = v;
  }
  if (truncate && isStringType(type)) {
    if (typeof min === 'string' && min.length > STATS_TRUNCATE_CHARS) min = min.slice(0, STATS_TRUNCATE_CHARS);
    if (typeof max === 'string' && max.length > STATS_TRUNCATE_CHARS) {
      const cut = max.slice(0, STATS_TRUNCATE_CHARS);
      const last = cut.charCodeAt(cut.length - 1);
      // An upper bound: bump the last character; give up (unknown) where that would break a surrogate pair.
      max = last < 0xd7ff || (last >= 0xe000 && last < 0xffff) ? cut.slice(0, -1) + String.fromCharCode(last + 1) : null;
    }
  }
  return [min, max, nulls];
}

function statsOf(types: readonly DataType[], cols: unknown[][], truncate: boolean): SimpleStats {
  const mins: unknown[] = [];
  const maxs: unknown[] = [];
  const nulls: number[] = [];
  const statTypes = types.map((t) => withNullable(t, true));
  types.forEach((t, i) => {
    const [mn, mx, nc] = columnStats(t, cols[i]!, truncate);
    mins.push(mn);
    maxs.push(mx);
    nulls.push(nc);
  });
  return { minValues: serializeBinaryRow(statTypes, mins), maxValues: serializeBinaryRow(statTypes, maxs), nullCounts: nulls };
}

export interface WriteDataFileArgs {
  fileIO: FileIO;
  schema: TableSchema;
  /** Absolute path of the bucket directory. */
  bucketDir: string;
  fileName: string;
  run: RunData;
  level: number;
  /** 0 = written by a flush, 1 = written by compaction. */
  fileSource: 0 | 1;
  creationTimeMs: number;
}

/** Writes one sorted run (REQUIRES: rows sorted by key, keys unique) and returns its meta. */
export function writeDataFile(a: WriteDataFileArgs): DataFileMeta {
  const { schema, run } = a;
  if (run.rowCount === 0) throw new Error('assertion failed: an empty run is never written');
  const columns = fileColumns(schema);
  const values: unknown[][] = schema.isPrimaryKeyTable ? [...run.keyCols, run.seq, run.kind, ...run.valueCols] : run.valueCols;
  // Parquet or Avro by the file name's extension (data-file-format.ts).
  const bytes = encodeDataFile(schema, a.fileName, columns, values, run.rowCount);
  a.fileIO.mkdirs(a.bucketDir);
  a.fileIO.writeNew(`${a.bucketDir}/${a.fileName}`, bytes);

  const keyTypes = schema.keyTypes;
  const last = run.rowCount - 1;
  let minSeq = Number.MAX_SAFE_INTEGER;
  let maxSeq = -1;
  let deletes = 0;
  for (let i = 0; i < run.rowCount; i++) {
    const s = run.seq[i]!;
    if (s < minSeq) minSeq = s;
    if (s > maxSeq) maxSeq = s;
    const k = run.kind[i]!;
    if (k === RowKind.UPDATE_BEFORE || k === RowKind.DELETE) deletes++;
  }
  return {
    fileName: a.fileName,
    fileSize: bytes.length,
    rowCount: run.rowCount,
    minKey: serializeBinaryRow(keyTypes, run.keyCols.map((c) => c[0])),
    maxKey: serializeBinaryRow(keyTypes, run.keyCols.map((c) => c[last])),
    keyStats: statsOf(keyTypes, run.keyCols, false),
    valueStats: statsOf(schema.fields.map((f) => f.type), run.valueCols, true),
    minSequenceNumber: minSeq,
    maxSequenceNumber: maxSeq,
    schemaId: schema.id,
    level: a.level,
    extraFiles: [],
    creationTime: localWallClockMillis(a.creationTimeMs),
    deleteRowCount: deletes,
    embeddedIndex: null,
    fileSource: a.fileSource,
    valueStatsCols: null,
    externalPath: null,
    firstRowId: null,
    writeCols: null,
  };
}

/** Java records `_CREATION_TIME` as the local wall clock expressed as if it were UTC. */
export function localWallClockMillis(utcMs: number): number {
  return utcMs - new Date(utcMs).getTimezoneOffset() * 60_000;
}

/** Reads a data file back as a run, checking it against its meta. */
export function readDataFile(fileIO: FileIO, schema: TableSchema, path: string, meta: DataFileMeta): RunData {
  let bytes: Uint8Array;
  try {
    bytes = fileIO.readFile(path);
  } catch (e) {
    if (e instanceof LsmError && e.kind === 'NotFound') {
      throw corruption(path, `data file listed in the manifest is missing`, e);
    }
    throw e;
  }
  if (bytes.length !== meta.fileSize) {
    throw corruption(path, `size ${bytes.length} differs from the manifest's ${meta.fileSize}`);
  }
  let decoded: { rowCount: number; columns: unknown[][] };
  try {
    decoded = decodeDataFile(bytes, readColumns(schema), path);
  } catch (e) {
    // Every decode failure names the file; anything but a deliberate LsmError is damage.
    if (e instanceof LsmError && e.kind === 'Corruption') throw e;
    if (e instanceof LsmError && e.kind === 'NotSupported') {
      throw new LsmError('NotSupported', `${path}: ${e.message} (the file is damaged, or uses a feature this store does not read)`, { path, cause: e });
    }
    throw corruption(path, `cannot decode: ${(e as Error).message}`, e);
  }
  const { rowCount, columns } = decoded;
  if (rowCount !== meta.rowCount) throw corruption(path, `${rowCount} rows, the manifest says ${meta.rowCount}`);
  if (!schema.isPrimaryKeyTable) return appendRun(columns, rowCount, meta);
  const k = schema.keyIndexes.length;
  const seq = columns[k] as number[];
  const kind = columns[k + 1] as number[];
  for (let i = 0; i < rowCount; i++) {
    const kd = kind[i]!;
    if (!(kd >= 0 && kd <= 3)) throw corruption(path, `row ${i} has value kind ${kd}`);
  }
  return { rowCount, keyCols: columns.slice(0, k), seq, kind, valueCols: columns.slice(k + 2) };
}
