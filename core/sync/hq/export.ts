// `tilstand hq export`'s body: rows of a table into a CSV or Parquet file, whole or not at all
// (export-file.ts), streamed: CSV row by row in bounded chunks, Parquet a row group at a time
// (output.ts ParquetRowGroups), so memory stays bounded however large the table.

import type { DataField } from '../../lsm/index.ts';
import { ExportFile } from './export-file.ts';
import { csvHeader, formatRow, ParquetRowGroups, ROW_GROUP_LIMITS, type RowGroupLimits } from './output.ts';

export type ExportFormat = 'csv' | 'parquet';

/**
 * Writes `rows` (in the columns of `fields`) to `dest` in `format`; returns how many. On any
 * failure (the rows throw, a write fails) nothing is left at `dest` nor beside it.
 */
export function exportRows(dest: string, format: ExportFormat, fields: readonly DataField[], rows: Iterable<readonly unknown[]>, limits: RowGroupLimits = ROW_GROUP_LIMITS): number {
  if (format !== 'csv' && format !== 'parquet') throw new RangeError(`export format: expected 'csv' or 'parquet', got '${String(format)}'`);
  const file = new ExportFile(dest);
  try {
    let n = 0;
    if (format === 'parquet') {
      const pq = new ParquetRowGroups(fields, (b) => file.bytes(b), limits);
      for (const row of rows) pq.row(row);
      pq.finish();
      n = pq.rowCount;
    } else {
      file.line(csvHeader(fields));
      for (const row of rows) {
        file.line(formatRow('csv', fields, row));
        n++;
      }
    }
    file.commit();
    return n;
  } catch (e) {
    file.abort();
    throw e;
  }
}
