// Rows out of HQ: JSON lines and CSV (RFC 4180: quoted when needed, header line), and Parquet
// files through the table store's own Parquet writer (flat schemas, snappy).

import { writeParquet } from '../../lsm/format/parquet/index.ts';
import type { DataField } from '../../lsm/index.ts';
import { NUMERIC_TEXT, rowToJson } from '../../lsm/cli/values.ts';

/**
 * One CSV cell. Text a site wrote (a comment, an explanation, a job name) that starts with = + - @
 * (or a tab or CR) would run as a formula in the spreadsheet HQ opens the file with: it gets a
 * leading `'`, the usual guard, unless it is a number (a DECIMAL's value, a signed count).
 * null is an empty cell, an empty text `""`.
 */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  let s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s) && !NUMERIC_TEXT.test(s)) s = `'${s}`;
  // An empty text quoted, a null left empty: the two read apart (COPY … CSV, DuckDB, pandas).
  return s === '' || /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvLine = (cells: readonly unknown[]): string => cells.map(csvCell).join(',');

/** One row as an object of JSON values (column names → values), as `tilstand table scan` prints. */
export const rowObject = (fields: readonly DataField[], row: readonly unknown[]): Record<string, unknown> => rowToJson(fields, row);

export function formatRow(format: 'jsonl' | 'csv', fields: readonly DataField[], row: readonly unknown[], extra?: Record<string, unknown>): string {
  const o = { ...(extra ?? {}), ...rowObject(fields, row) };
  return format === 'jsonl' ? JSON.stringify(o) : csvLine(Object.values(o));
}

export function csvHeader(fields: readonly DataField[], extra: readonly string[] = []): string {
  return csvLine([...extra, ...fields.map((f) => f.name)]);
}

export function parquetBytes(fields: readonly DataField[], rows: readonly (readonly unknown[])[]): Uint8Array {
  const columns = fields.map((f) => ({ name: f.name, fieldId: f.id, type: f.type }));
  const values = fields.map((_, c) => rows.map((r) => r[c] ?? null));
  return writeParquet(columns, values, rows.length, { compression: 'snappy' });
}
