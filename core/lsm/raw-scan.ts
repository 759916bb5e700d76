// Scans that read files without a key merge: append tables (rows in write order: per bucket,
// files by sequence number, minus the positions the snapshot's deletion vectors mark — Paimon
// writes them for DELETE/UPDATE on an append table with `deletion-vectors.enabled`) and
// deletion-vector primary-key tables (level ≥ 1 files minus their deleted positions; level 0
// skipped, as Paimon's batch scan of a DV table does — deletion-vector.ts).
// Called from TableReader.scan; same ScanOptions (projection, where) and row shape, in the
// reader's schema's columns.
// A file missing under a snapshot whose plan the Table still caches may have been deleted by an
// expiration in another process: Table.expiredUnder turns that into NotFound, asked on the error
// path only (a try around opening each file, none around the per-row loop).

import { deserializeBinaryRow } from './binary-row.ts';
import { cell, type RunData } from './data-file.ts';
import { deletionVectorsEnabled, snapshotDeletionVectors, type SnapshotDeletionVectors } from './deletion-vector.ts';
import { invalidArgument } from './errors.ts';
import { isAdd } from './key-value.ts';
import type { TableSchema } from './schema.ts';
import type { Snapshot } from './snapshot.ts';
import type { Table } from './table.ts';
import type { Predicate, ScanOptions } from './table-read.ts';
import { comparatorFor, withNullable, type Comparator } from './types.ts';

/** True when TableReader.scan must use `rawScan` for this table. */
export function needsRawScan(table: Table): boolean {
  return !table.schema.isPrimaryKeyTable || deletionVectorsEnabled(table.schema.options.raw);
}

interface Compiled {
  index: number;
  op: Predicate['op'];
  value: unknown;
  cmp: Comparator;
  partPos: number;
}

function holds(p: Compiled, v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (p.op === 'prefix') return typeof v === 'string' && v.startsWith(p.value as string);
  const c = p.cmp(v, p.value);
  return p.op === '=' ? c === 0 : p.op === '<' ? c < 0 : p.op === '<=' ? c <= 0 : p.op === '>' ? c > 0 : c >= 0;
}

/** Rows of `snapshot` in the columns of `schema` (a reader's: Table.readSchema), names resolved against it. */
export function* rawScan(table: Table, snapshot: Snapshot, opts: ScanOptions, schema: TableSchema = table.schema): Generator<unknown[]> {
  const preds: Compiled[] = (opts.where ?? []).map((p) => {
    const index = schema.fieldIndex.get(p.column);
    if (index === undefined) throw invalidArgument(`filter names unknown column '${p.column}'`);
    return { index, op: p.op, value: p.value, cmp: comparatorFor(withNullable(schema.fields[index]!.type, false)), partPos: schema.partitionIndexes.indexOf(index) };
  });
  const projection = opts.projection?.map((c) => {
    const i = schema.fieldIndex.get(c);
    if (i === undefined) throw invalidArgument(`projection names unknown column '${c}'`);
    return i;
  });
  const partPreds = preds.filter((p) => p.partPos >= 0);
  const append = !schema.isPrimaryKeyTable;
  // Append tables: whatever vectors the snapshot lists (none without an index manifest), whether or
  // not this store would write them; a damaged vector is a Corruption naming its index file.
  let dvs: SnapshotDeletionVectors;
  try {
    dvs = snapshotDeletionVectors(table, snapshot);
  } catch (e) {
    throw table.expiredUnder(e, snapshot);
  }
  const width = schema.fields.length;
  for (const b of table.readBuckets(snapshot)) {
    if (partPreds.length > 0) {
      const values = deserializeBinaryRow(schema.partitionTypes, b.partition, table.paths.root);
      if (!partPreds.every((p) => holds(p, values[p.partPos]))) continue;
    }
    const files = append
      ? [...b.files].sort((x, y) => x.minSequenceNumber - y.minSequenceNumber)
      : table.runsOf(b.files.filter((f) => f.level > 0)).flatMap((r) => r.files);
    for (const f of files) {
      let d: RunData;
      let deleted: ReadonlySet<number> | undefined;
      try {
        d = table.loadRun(b.partition, b.bucket, f, opts.fillCache !== false, schema);
        deleted = dvs.deleted(b.partition, b.bucket, f.fileName);
      } catch (e) {
        throw table.expiredUnder(e, snapshot);
      }
      for (let i = 0; i < d.rowCount; i++) {
        if (deleted?.has(i)) continue;
        if (!append && !isAdd(d.kind[i]!)) continue;
        if (preds.length > 0 && !preds.every((p) => holds(p, cell(d.valueCols[p.index]!, i)))) continue;
        if (projection) yield projection.map((c) => cell(d.valueCols[c]!, i));
        else {
          const row = new Array(width);
          for (let c = 0; c < width; c++) row[c] = cell(d.valueCols[c]!, i);
          yield row;
        }
      }
    }
  }
}
