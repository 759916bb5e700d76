// The Parquet codec of the table store: our own writer and reader of the subset of Parquet that
// Java Paimon writes and reads (flat schemas; see README.md). Public surface only.

import type { DataType } from '../../types.ts';
import type { TypedColumn } from './chunk-reader.ts';
import { readColumns, readColumnsTyped, readFooterColumns } from './reader.ts';

export type { TypedColumn };
export type { ColumnValues, TypedValues } from './plain-encode.ts';
import { writeParquetFile, writeParquetTo as writePiecesTo } from './writer.ts';
import type { ColumnValues } from './plain-encode.ts';

export interface ParquetColumn {
  name: string;
  fieldId: number;
  /** `type.nullable` → OPTIONAL, else REQUIRED. */
  type: DataType;
}
export type ParquetCompression = 'uncompressed' | 'snappy' | 'gzip' | 'zstd';
export interface ParquetWriteOptions {
  compression: ParquetCompression;
  /** Rows per row group; default 1 << 20. */
  rowGroupRows?: number;
  /** Rows per data page; default 20 000. */
  pageRows?: number;
}

/**
 * values[c][r]: column-major, in-memory values per types.ts — or, for a numeric or boolean
 * column, a typed column (TypedValues). Returns the complete file bytes.
 */
export function writeParquet(columns: ParquetColumn[], values: ColumnValues[], rowCount: number, opts: ParquetWriteOptions): Uint8Array {
  return writeParquetFile(columns, values, rowCount, opts);
}

/**
 * writeParquet's bytes handed to `sink` piece by piece as they are encoded, in file order; returns
 * the file's length. About one column chunk is held at a time, not the file (writer.ts).
 */
export function writeParquetTo(columns: ParquetColumn[], values: ColumnValues[], rowCount: number, opts: ParquetWriteOptions, sink: (piece: Uint8Array) => void): number {
  return writePiecesTo(columns, values, rowCount, opts, sink);
}

/**
 * A Parquet file written one row group at a time, each handed to `sink` as it is encoded, the
 * footer at `finish` (stream-writer.ts): memory holds one group, not the file.
 */
export { ParquetStreamWriter } from './stream-writer.ts';

export interface ParquetReadColumn {
  name: string;
  type: DataType;
  /** INT64 → JS number instead of bigint (for _SEQUENCE_NUMBER). */
  asNumber?: boolean;
  /** readParquetTyped: INT32/INT64/BOOLEAN columns of INT-like, BIGINT, BOOLEAN types as TypedColumns. */
  typed?: boolean;
}
export interface ParquetFooterColumn {
  name: string;
  fieldId?: number;
  physicalType: string;
  logicalType?: string;
  required: boolean;
}

/**
 * Reads the requested columns (matched BY NAME, as Java Paimon does) from all row groups. A
 * requested column absent from the file → array of nulls (schema evolution). Returns values[c][r]
 * in request order. `path` is only for error messages. With `expectRows` a footer that counts
 * other than that many rows is a Corruption, found before any column is allocated.
 */
export function readParquet(bytes: Uint8Array, request: ParquetReadColumn[], path: string, expectRows?: number): { rowCount: number; columns: unknown[][] } {
  return readColumns(bytes, request, path, expectRows);
}

/** `readParquet`, with the columns requested `typed` that have a typed form as TypedColumns. */
export function readParquetTyped(bytes: Uint8Array, request: ParquetReadColumn[], path: string, expectRows?: number): { rowCount: number; columns: Array<unknown[] | TypedColumn> } {
  return readColumnsTyped(bytes, request, path, expectRows);
}

export function readParquetFooter(bytes: Uint8Array, path: string): { rowCount: number; columns: ParquetFooterColumn[] } {
  return readFooterColumns(bytes, path);
}
