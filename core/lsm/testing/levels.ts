// Test-only: commits records as data files at chosen levels — the layouts Java Paimon's writer and
// compactions leave (a key's complete value at a low level above stale records of it higher up),
// which this store's own compaction does not make. One snapshot per call, through the writer's
// own commit (manifests, snapshot, lock); primary-key tables, any partition and bucket (a file
// names its own; the records must belong there, as a writer would have put them).

import { randomUUID } from 'node:crypto';
import { runFromRecords, writeDataFile } from '../data-file.ts';
import { formatForLevel } from '../data-file-format.ts';
import { RowKind, type KeyValue } from '../key-value.ts';
import { ADD, type ManifestEntry } from '../manifest.ts';
import { partitionPath } from '../partition-path.ts';
import type { Table } from '../table.ts';
import { bucketFor, partitionEncoder } from '../table-read.ts';
import { TableWriter } from '../table-writer.ts';

/** One record: its row (every column, schema order), sequence number and kind (default +I). */
export interface PlacedRecord {
  row: unknown[];
  seq: number;
  kind?: RowKind;
}

/** A data file to commit: its level and its records (any order; at most one per key). */
export interface PlacedFile {
  level: number;
  records: PlacedRecord[];
  /** The partition's values, in partition-key order (default: none, for an unpartitioned table). */
  partition?: unknown[];
  /** The bucket (default 0). */
  bucket?: number;
}

class LevelCommitter extends TableWriter {
  commitPlaced(table: Table, files: readonly PlacedFile[], kind: 'APPEND' | 'COMPACT'): number {
    const schema = table.schema;
    const entries: ManifestEntry[] = [];
    const cmp = table.compareKeys;
    const partFields = schema.partitionIndexes.map((i) => schema.fields[i]!);
    for (const f of files) {
      if (!Number.isInteger(f.level) || f.level < 0) throw new Error(`placed file: level must be an integer ≥ 0, got ${f.level}`);
      const values = f.partition ?? [];
      if (values.length !== partFields.length) throw new Error(`placed file: expected ${partFields.length} partition values (${partFields.map((p) => p.name).join(', ')}), got ${values.length}`);
      const bucket = f.bucket ?? 0;
      if (!Number.isInteger(bucket) || bucket < 0 || bucket >= schema.options.bucket) throw new Error(`placed file: bucket must be an integer in [0, ${schema.options.bucket}), got ${bucket}`);
      const kvs: KeyValue[] = f.records.map((r) => {
        if (r.row.length !== schema.fields.length) throw new Error(`placed record: expected ${schema.fields.length} columns, got ${r.row.length}`);
        const named = Object.fromEntries(schema.fields.map((c, i) => [c.name, r.row[i]]));
        schema.partitionIndexes.forEach((i, p) => {
          if (r.row[i] !== values[p]) throw new Error(`placed record ${JSON.stringify(r.row, big)}: expected partition column '${schema.fields[i]!.name}' = ${JSON.stringify(values[p], big)}`);
        });
        if (bucketFor(schema, named) !== bucket) throw new Error(`placed record ${JSON.stringify(r.row, big)}: expected a key of bucket ${bucket}, it hashes to ${bucketFor(schema, named)}`);
        return { key: schema.keyIndexes.map((i) => r.row[i]), seq: r.seq, kind: r.kind ?? RowKind.INSERT, value: r.row };
      });
      kvs.sort((a, b) => cmp(a.key, b.key));
      for (let i = 1; i < kvs.length; i++) if (cmp(kvs[i - 1]!.key, kvs[i]!.key) === 0) throw new Error(`placed file at level ${f.level}: key ${JSON.stringify(kvs[i]!.key, big)} twice (a sorted run holds a key once)`);
      const meta = writeDataFile({
        fileIO: table.fileIO,
        schema,
        bucketDir: table.paths.bucketDir(partFields.length === 0 ? '' : partitionPath(partFields, values, schema.options.partitionDefaultName), bucket),
        fileName: `data-${randomUUID()}-0.${formatForLevel(schema, f.level)}`,
        run: runFromRecords(kvs, schema.keyIndexes.length, schema.fields.length),
        level: f.level,
        fileSource: f.level === 0 ? 0 : 1,
        creationTimeMs: table.clock(),
      });
      entries.push({ kind: ADD, partition: partitionEncoder(schema.partitionTypes)(values), bucket, totalBuckets: schema.options.bucket, file: meta });
    }
    return this.commitChanges(entries, kind);
  }
}

const big = (_k: string, v: unknown): unknown => (typeof v === 'bigint' ? `${v}n` : v);

/**
 * Adds `files` to the table in one snapshot (APPEND when every file is at level 0, else COMPACT)
 * and returns its id. Sequence numbers are the caller's: keep them above the table's and
 * ascending with recency, as a writer would.
 */
export function commitPlacedFiles(table: Table, files: readonly PlacedFile[]): number {
  const schema = table.schema;
  if (!schema.isPrimaryKeyTable || schema.options.bucket < 1) {
    throw new Error(`commitPlacedFiles: expected a primary-key table with a fixed bucket count, got ${schema.isPrimaryKeyTable ? `bucket = ${schema.options.bucket}` : 'a table without primary key'}`);
  }
  const w = new LevelCommitter(table, {});
  try {
    return w.commitPlaced(table, files, files.every((f) => f.level === 0) ? 'APPEND' : 'COMPACT');
  } finally {
    w.close();
  }
}
