// Rows out of HQ: JSON lines and CSV (RFC 4180: quoted when needed, header line), and Parquet
// files through the table store's own Parquet writer (snappy), whole (`parquetBytes`) or a row
// group at a time as rows arrive (`ParquetRowGroups`, what `hq export` writes).

import { ParquetStreamWriter, writeParquet, type ParquetColumn } from '../../lsm/format/parquet/index.ts';
import type { DataField } from '../../lsm/index.ts';
import { NUMERIC_TEXT, rowToJson } from '../../lsm/cli/values.ts';

/**
 * One CSV cell. Text a site wrote (a comment, an explanation, a job name) that starts with = + - @
 * (or a tab or CR) would run as a formula in the spreadsheet HQ opens the file with: it gets a
 * leading `'`, the usual guard, unless it is a number (a DECIMAL's value, a signed count) or
 * `guard` is false (a value the command itself writes, formatRow). null is an empty cell, an
 * empty text `""`.
 */
export function csvCell(v: unknown, guard = true): string {
  if (v === null || v === undefined) return '';
  let s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (guard && typeof v === 'string' && /^[=+\-@\t\r]/.test(s) && !NUMERIC_TEXT.test(s)) s = `'${s}`;
  // An empty text quoted, a null left empty: the two read apart (COPY … CSV, DuckDB, pandas).
  return s === '' || /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvLine = (cells: readonly unknown[]): string => cells.map((c) => csvCell(c)).join(',');

/** One row as an object of JSON values (column names → values), as `tilstand table scan` prints. */
export const rowObject = (fields: readonly DataField[], row: readonly unknown[]): Record<string, unknown> => rowToJson(fields, row);

/**
 * One row, after the columns the command adds (`extra`: `hq diff`'s `_kind`, `hq proposals`'
 * `status`). In CSV those are the command's own words, not text a site wrote, so they are not
 * guarded as formulas: `hq diff`'s kinds were `'+I`, `'-U`, `'+U`, `'-D`, which no tool reading
 * the file took for the row kinds of the JSON lines and of Paimon.
 */
export function formatRow(format: 'jsonl' | 'csv', fields: readonly DataField[], row: readonly unknown[], extra?: Record<string, unknown>): string {
  if (format === 'jsonl') return JSON.stringify({ ...(extra ?? {}), ...rowObject(fields, row) });
  return [...Object.values(extra ?? {}).map((v) => csvCell(v, false)), ...Object.values(rowObject(fields, row)).map((v) => csvCell(v))].join(',');
}

export function csvHeader(fields: readonly DataField[], extra: readonly string[] = []): string {
  return csvLine([...extra, ...fields.map((f) => f.name)]);
}

/** The whole Parquet file of `rows` at once (row groups of writeParquet's default 1 Mi rows). */
export function parquetBytes(fields: readonly DataField[], rows: readonly (readonly unknown[])[]): Uint8Array {
  const columns = parquetColumns(fields);
  const values = fields.map((_, c) => rows.map((r) => r[c] ?? null));
  return writeParquet(columns, values, rows.length, { compression: 'snappy' });
}

/** Where `ParquetRowGroups` cuts a row group: whichever of the two is reached first. */
export interface RowGroupLimits {
  /** Rows per row group. */
  rows: number;
  /** Rough in-memory size of a group's values (`approxBytes`), in bytes. */
  bytes: number;
}

/**
 * 100 000 rows or 32 MiB of values: a few row groups for most tables of a site, and a bound on
 * what an export holds whatever its rows look like (a column of long texts reaches the bytes first).
 */
export const ROW_GROUP_LIMITS: RowGroupLimits = { rows: 100_000, bytes: 32 * 1024 * 1024 };

/**
 * A Parquet file written as rows arrive: rows gather column by column until a group is full by
 * `limits`, then the group is encoded and handed to `sink` and its values dropped. Memory holds
 * one group's values and encoded pages, and the footer's metadata.
 */
export class ParquetRowGroups {
  private readonly writer: ParquetStreamWriter;
  private columns: unknown[][];
  private rows = 0;
  private bytes = 0;

  constructor(
    private readonly fields: readonly DataField[],
    sink: (bytes: Uint8Array) => void,
    private readonly limits: RowGroupLimits = ROW_GROUP_LIMITS,
  ) {
    for (const k of ['rows', 'bytes'] as const) {
      if (!Number.isInteger(limits[k]) || limits[k] < 1) throw new RangeError(`row group limit '${k}': expected an integer ≥ 1, got ${limits[k]}`);
    }
    this.writer = new ParquetStreamWriter(parquetColumns(fields), { compression: 'snappy' }, sink);
    this.columns = fields.map(() => []);
  }

  /** Rows taken so far. */
  get rowCount(): number {
    return this.writer.rowCount + this.rows;
  }

  /** One row in the fields' order (as a table scan returns it). */
  row(r: readonly unknown[]): void {
    const columns = this.columns;
    let bytes = 0;
    for (let c = 0; c < columns.length; c++) {
      const v = r[c] ?? null;
      columns[c]!.push(v);
      bytes += approxBytes(v);
    }
    this.rows++;
    this.bytes += bytes;
    if (this.rows >= this.limits.rows || this.bytes >= this.limits.bytes) this.flushGroup();
  }

  /** Writes the last group and the footer: the file is complete. */
  finish(): void {
    this.flushGroup();
    this.writer.finish();
  }

  private flushGroup(): void {
    if (this.rows === 0) return;
    this.writer.writeRowGroup(this.columns, this.rows);
    this.columns = this.fields.map(() => []);
    this.rows = 0;
    this.bytes = 0;
  }
}

const parquetColumns = (fields: readonly DataField[]): ParquetColumn[] => fields.map((f) => ({ name: f.name, fieldId: f.id, type: f.type }));

/**
 * Rough bytes a value holds in memory: texts 2 per character, binaries their length, arrays and
 * maps their elements, anything else 8. Only compared against a limit; it need not be exact.
 */
export function approxBytes(v: unknown): number {
  if (typeof v === 'string') return 16 + 2 * v.length;
  if (v instanceof Uint8Array) return 16 + v.length;
  if (Array.isArray(v)) {
    let n = 16;
    for (const x of v) n += approxBytes(x);
    return n;
  }
  if (v instanceof Map) {
    let n = 16;
    for (const [k, x] of v) n += approxBytes(k) + approxBytes(x);
    return n;
  }
  return 8;
}
