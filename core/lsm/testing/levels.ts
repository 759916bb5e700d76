// Test-only: commits records as data files at chosen levels — the layouts Java Paimon's writer and
// compactions leave (a key's complete value at a low level above stale records of it higher up),
// which this store's own compaction does not make. One snapshot per call, through the writer's
// own commit (manifests, snapshot, lock); unpartitioned single-bucket primary-key tables only.

import { randomUUID } from 'node:crypto';
import { runFromRecords, writeDataFile } from '../data-file.ts';
import { formatForLevel } from '../data-file-format.ts';
import { RowKind, type KeyValue } from '../key-value.ts';
import { ADD, type ManifestEntry } from '../manifest.ts';
import type { Table } from '../table.ts';
import { partitionEncoder } from '../table-read.ts';
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
}

class LevelCommitter extends TableWriter {
  commitPlaced(table: Table, files: readonly PlacedFile[], kind: 'APPEND' | 'COMPACT'): number {
    const schema = table.schema;
    const partition = partitionEncoder([])([]);
    const entries: ManifestEntry[] = [];
    const cmp = table.compareKeys;
    for (const f of files) {
      if (!Number.isInteger(f.level) || f.level < 0) throw new Error(`placed file: level must be an integer ≥ 0, got ${f.level}`);
      const kvs: KeyValue[] = f.records.map((r) => {
        if (r.row.length !== schema.fields.length) throw new Error(`placed record: expected ${schema.fields.length} columns, got ${r.row.length}`);
        return { key: schema.keyIndexes.map((i) => r.row[i]), seq: r.seq, kind: r.kind ?? RowKind.INSERT, value: r.row };
      });
      kvs.sort((a, b) => cmp(a.key, b.key));
      for (let i = 1; i < kvs.length; i++) if (cmp(kvs[i - 1]!.key, kvs[i]!.key) === 0) throw new Error(`placed file at level ${f.level}: key ${JSON.stringify(kvs[i]!.key)} twice (a sorted run holds a key once)`);
      const meta = writeDataFile({
        fileIO: table.fileIO,
        schema,
        bucketDir: table.paths.bucketDir('', 0),
        fileName: `data-${randomUUID()}-0.${formatForLevel(schema, f.level)}`,
        run: runFromRecords(kvs, schema.keyIndexes.length, schema.fields.length),
        level: f.level,
        fileSource: f.level === 0 ? 0 : 1,
        creationTimeMs: table.clock(),
      });
      entries.push({ kind: ADD, partition, bucket: 0, totalBuckets: schema.options.bucket, file: meta });
    }
    return this.commitChanges(entries, kind);
  }
}

/**
 * Adds `files` to the table's bucket 0 in one snapshot (APPEND when every file is at level 0,
 * else COMPACT) and returns its id. Sequence numbers are the caller's: keep them above the
 * table's and ascending with recency, as a writer would.
 */
export function commitPlacedFiles(table: Table, files: readonly PlacedFile[]): number {
  const schema = table.schema;
  if (!schema.isPrimaryKeyTable || schema.partitionIndexes.length > 0 || schema.options.bucket !== 1) {
    throw new Error('commitPlacedFiles: expected an unpartitioned primary-key table with bucket = 1');
  }
  const w = new LevelCommitter(table, {});
  try {
    return w.commitPlaced(table, files, files.every((f) => f.level === 0) ? 'APPEND' : 'COMPACT');
  } finally {
    w.close();
  }
}
