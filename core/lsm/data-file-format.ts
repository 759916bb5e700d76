// The file format of a data file, and reading old data files through the current schema.
//
// Format: written per level — `file.format.per.level` ('0:avro,5:parquet') overrides
// `file.format` — and read by the file's extension (.parquet / .avro; .orc is refused), as
// Paimon does. Compression comes from `file.compression`: Parquet snappy/gzip/none, Avro
// snappy/deflate(gzip)/null; zstd is read-only here (no compressor on Node 20), as is any other
// codec a table written elsewhere names (lz4, brotli…): writing a data file into it is refused.
//
// Schema evolution on read (Paimon's SchemaEvolutionUtil): a data file records `_SCHEMA_ID`.
// When it differs from the schema read in (the table's current one, or a time-travel reader's:
// EVOLUTION-DESIGN.md §1) the file is read with its own schema's column names and types, and its
// columns are mapped to the target's by field id: an id the file lacks reads as null, an id the
// target lacks is ignored, a renamed column is found by its id, and a changed type is cast
// (cast.ts). `_KEY_<name>` columns are read by the file's names likewise.

import { castFunction, sameType, type CastFn } from './cast.ts';
import { invalidArgument, LsmError, notSupported } from './errors.ts';
import { cell, packColumn, type Column, type RunData } from './data-file.ts';
import { readAvroData, writeAvroData, type AvroDataCodec } from './format/avro-data.ts';
import { readParquet, writeParquet, writeParquetTo, type ColumnValues, type ParquetColumn, type ParquetReadColumn } from './format/parquet/index.ts';
import type { DataFileMeta } from './manifest.ts';
import type { TableSchema } from './schema.ts';
import { RowKind } from './key-value.ts';

export type DataFormat = 'parquet' | 'avro';

function parseFormat(text: string, option: string): DataFormat {
  const f = text.trim().toLowerCase();
  if (f === 'parquet' || f === 'avro') return f;
  if (f === 'orc') throw notSupported(`option '${option}': ORC data files are not supported; use 'parquet' or 'avro'`);
  throw invalidArgument(`option '${option}': expected 'parquet' or 'avro', got '${text}'`);
}

/** `file.format.per.level` as level → format. */
export function formatsPerLevel(raw: Readonly<Record<string, string>>): Map<number, DataFormat> {
  const out = new Map<number, DataFormat>();
  const text = raw['file.format.per.level'];
  if (text === undefined || text.trim() === '') return out;
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)\s*:\s*([A-Za-z]+)\s*$/.exec(part);
    if (!m) throw invalidArgument(`option 'file.format.per.level': expected 'level:format,…' such as '0:avro,5:parquet', got '${text}'`);
    out.set(Number(m[1]), parseFormat(m[2]!, 'file.format.per.level'));
  }
  return out;
}

/** The format new files of `level` are written in. */
export function formatForLevel(schema: TableSchema, level: number): DataFormat {
  const per = formatsPerLevel(schema.options.raw).get(level);
  return per ?? parseFormat(schema.options.raw['file.format'] ?? 'parquet', 'file.format');
}

/** Checks at table creation that every configured format can be written. */
export function validateWritableFormats(schema: TableSchema): void {
  const formats = new Set<DataFormat>([parseFormat(schema.options.raw['file.format'] ?? 'parquet', 'file.format'), ...formatsPerLevel(schema.options.raw).values()]);
  const c = schema.options.fileCompression;
  if (formats.has('avro') && c === 'zstd') {
    throw notSupported(`option 'file.compression': zstd Avro data files cannot be written here (Node 20 has no zstd compressor); use ${writableCodecs(schema)}`);
  }
}

export function formatOfPath(path: string): DataFormat {
  const dot = path.lastIndexOf('.');
  const ext = dot < 0 ? '' : path.slice(dot + 1).toLowerCase();
  if (ext === 'parquet' || ext === 'avro') return ext;
  if (ext === 'orc') throw new LsmError('NotSupported', `reading ORC data files is not supported (${path})`, { path });
  throw new LsmError('NotSupported', `data file ${path} has no known format extension`, { path });
}

/**
 * The `file.compression` values this store writes that Paimon's writer of every format the table
 * writes takes too (options.ts checkJavaCodecs refuses the others at creation and ALTER): Parquet
 * snappy, gzip or none; Avro snappy, deflate or null (Java's Avro writer refuses gzip and none);
 * a table writing both formats (`file.format.per.level`) only snappy.
 */
function writableCodecs(schema: TableSchema): string {
  return writableCodecsFor(schema.options.raw, schema.options.fileFormat);
}

/**
 * `writableCodecs` from a table's options as written (creation, ALTER: options.ts,
 * schema-change.ts); `fallback`, the format when they do not parse.
 */
export function writableCodecsFor(raw: Readonly<Record<string, string>>, fallback: DataFormat = 'parquet'): string {
  let formats: Set<DataFormat>;
  try {
    formats = new Set([parseFormat(raw['file.format'] ?? 'parquet', 'file.format'), ...formatsPerLevel(raw).values()]);
  } catch {
    formats = new Set([fallback]);
  }
  if (formats.size > 1) return "snappy (the one codec both Paimon's Parquet and Avro writers take)";
  return formats.has('avro') ? 'snappy, deflate or null' : 'snappy, gzip or none';
}

/** NotSupported naming the table's `file.compression` as written in its options (lz4, brotli… are held as 'zstd'). */
function unwritableCompression(schema: TableSchema): LsmError {
  const text = schema.options.raw['file.compression'] ?? 'zstd';
  return notSupported(
    `option 'file.compression' = '${text}': data files with this codec cannot be written here (the table can still be read); ` +
      `to write it here, ALTER 'file.compression' to ${writableCodecs(schema)} (files already written keep their codec)`,
  );
}

function avroCodec(schema: TableSchema): AvroDataCodec {
  const c = schema.options.fileCompression;
  if (c === 'none') return 'null';
  if (c === 'gzip') return 'deflate';
  if (c === 'snappy') return 'snappy';
  throw notSupported(`Avro data files: cannot write '${c}' compression; set 'file.compression' to ${writableCodecs(schema)}`);
}

/** Encodes a data file in the format its name's extension says. */
/** `values`: JS arrays; Parquet also takes typed numeric columns (format/parquet TypedValues), Avro does not. */
export function encodeDataFile(schema: TableSchema, fileName: string, columns: ParquetColumn[], values: ColumnValues[], rowCount: number): Uint8Array {
  // Refused when a data file is written, not when the writer opens: a table Java made with its
  // default zstd still expires, tags and rolls back here.
  if (schema.options.fileCompression === 'zstd') throw unwritableCompression(schema);
  if (formatOfPath(fileName) === 'avro') {
    if (!values.every((v) => Array.isArray(v))) throw new Error('assertion failed: Avro data files are written from JS arrays');
    return writeAvroData(columns, values as unknown[][], rowCount, avroCodec(schema));
  }
  return writeParquet(columns, values, rowCount, { compression: parquetCompression(schema) });
}

function parquetCompression(schema: TableSchema): 'uncompressed' | 'snappy' | 'gzip' {
  const c = schema.options.fileCompression;
  if (c === 'zstd') throw unwritableCompression(schema);
  return c === 'none' ? 'uncompressed' : c;
}

/**
 * The encoder of a Parquet data file (what encodeDataFile gives for a `.parquet` name) that hands
 * the bytes to `sink` piece by piece as they are encoded (format/parquet writeParquetTo) — about
 * one column chunk is held at a time, not the file — and returns the file's length. A codec that
 * cannot be written is refused here, before any file is made.
 */
export function parquetDataFileEncoder(schema: TableSchema, columns: ParquetColumn[], values: ColumnValues[], rowCount: number): (sink: (piece: Uint8Array) => void) => number {
  const compression = parquetCompression(schema);
  return (sink) => writeParquetTo(columns, values, rowCount, { compression }, sink);
}

/**
 * Decodes the requested columns (by name) of a data file in the format its extension says. With
 * `expectRows` (the manifest's count) a file that counts otherwise is a Corruption, found before
 * its columns are allocated.
 */
export function decodeDataFile(bytes: Uint8Array, request: ParquetReadColumn[], path: string, expectRows?: number): { rowCount: number; columns: unknown[][] } {
  if (formatOfPath(path) === 'avro') return readAvroData(bytes, request, path, expectRows);
  return readParquet(bytes, request, path, expectRows);
}

/**
 * An append-table file's run: no key columns; sequence numbers are implied by the meta (Paimon
 * numbers an append file's rows minSeq, minSeq+1, …); every row is an insert.
 */
export function appendRun(valueCols: unknown[][], rowCount: number, meta: DataFileMeta): RunData {
  const seq = new Array<number>(rowCount);
  for (let i = 0; i < rowCount; i++) seq[i] = meta.minSequenceNumber + i;
  const kind = new Array<number>(rowCount).fill(RowKind.INSERT);
  return { rowCount, keyCols: [], seq, kind, valueCols };
}

// ---------------------------------------------------------------------------------------------
// Evolution.

interface Mapping {
  /** For each current column: the file's column index and a cast, or -1 (null). */
  values: Array<{ from: number; cast: CastFn | undefined }>;
  keys: Array<{ from: number; cast: CastFn | undefined }>;
}

const mappings = new WeakMap<TableSchema, WeakMap<TableSchema, Mapping>>();

function mappingOf(file: TableSchema, table: TableSchema): Mapping {
  let inner = mappings.get(table);
  if (!inner) {
    inner = new WeakMap();
    mappings.set(table, inner);
  }
  let m = inner.get(file);
  if (m) return m;
  const byId = new Map(file.fields.map((f, i) => [f.id, i]));
  const values = table.fields.map((f) => {
    const from = byId.get(f.id);
    if (from === undefined) return { from: -1, cast: undefined };
    const old = file.fields[from]!;
    return { from, cast: sameType(old.type, f.type) ? undefined : castFunction(old.type, f.type, f.name) };
  });
  const keys = table.keyIndexes.map((ti) => {
    const id = table.fields[ti]!.id;
    const from = file.keyIndexes.findIndex((fi) => file.fields[fi]!.id === id);
    if (from < 0) throw invalidArgument(`primary-key column '${table.fields[ti]!.name}' is not a key of schema ${file.id}`);
    const old = file.fields[file.keyIndexes[from]!]!;
    return { from, cast: sameType(old.type, table.fields[ti]!.type) ? undefined : castFunction(old.type, table.fields[ti]!.type, table.fields[ti]!.name) };
  });
  m = { values, keys };
  inner.set(file, m);
  return m;
}

function mapColumn(src: Column | undefined, cast: CastFn | undefined, n: number): unknown[];
function mapColumn(src: Column | undefined, cast: CastFn | undefined, n: number): Column;
function mapColumn(src: Column | undefined, cast: CastFn | undefined, n: number): Column {
  if (!src) return new Array(n).fill(null);
  if (!cast) return src;
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = cast(cell(src, i));
  return out;
}

/** A run read with the schema it was written with, reshaped to `table` (the schema read in: Table.loadRunAt). */
export function evolveRun(run: RunData, file: TableSchema, table: TableSchema): RunData {
  if (file === table) return run;
  const m = mappingOf(file, table);
  const n = run.rowCount;
  return {
    rowCount: n,
    keyCols: m.keys.map((k) => mapColumn(run.keyCols[k.from], k.cast, n) as unknown[]),
    seq: run.seq,
    kind: run.kind,
    // A cast column is packed again by its new type (a key column shared by its value column
    // stays shared when neither is cast).
    valueCols: m.values.map((v) => {
      const col = mapColumn(v.from < 0 ? undefined : run.valueCols[v.from], v.cast, n);
      return Array.isArray(col) && (v.cast || v.from < 0) ? packColumn(col, n) : col;
    }),
  };
}
