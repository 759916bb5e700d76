// Test-only: a table's rows as Java Paimon's batch read gives them for tables that "need lookup"
// (compaction/lookup-levels.ts), written from Paimon's code, not from this store's reader.
//
//   - deletion vectors (merge-on-read off) or first-row: level 0 is skipped
//     (CoreOptions.batchScanSkipLevel0) and the files above it are read minus their vectors,
//     unmerged (MergeTreeSplitGenerator: raw-convertible when no file holds retractions);
//   - changelog-producer=lookup or force-lookup: per key, the fold of its level-0 records and of its record of the
//     lowest level above 0 only (LookupMergeFunction, which PrimaryKeyFileStoreTable hands to
//     MergeFileSplitRead);
//   - any other table: every record of the key folded (as this store folds them).
// Since merge/lookup-rule.ts this store reads `changelog-producer=lookup` tables by the same rule;
// this stays an independent model of it (no use of table-read.ts or merge-reader.ts).
// The merge engines are this store's (merge/), standing in for Java's.

import { kvAt } from '../data-file.ts';
import { snapshotDeletionVectors } from '../deletion-vector.ts';
import { isAdd, type KeyValue } from '../key-value.ts';
import { createMergeFunction, mergeOrder } from '../merge/merge-function.ts';
import type { ReadPoint, Table } from '../table.ts';

export interface JavaRead {
  rows: unknown[][];
  /** Why Java would not take the raw path this emulation assumes (a file with retractions), or undefined. */
  notRaw?: string;
  /** Per key of a merged table, the records Java folds (merge order), retractions included. */
  picked: KeyValue[][];
}

/** The rows Java reads at `at` (default latest), in no particular order. */
export function javaRead(t: Table, at: ReadPoint = {}): JavaRead {
  const s = t.resolve(at);
  if (!s) return { rows: [], picked: [] };
  const schema = t.schema;
  const o = schema.options;
  const dv = (o.raw['deletion-vectors.enabled'] ?? '').trim().toLowerCase() === 'true';
  const raw = dv || o.mergeEngine === 'first-row';
  const lookup = !raw && (o.changelogProducer === 'lookup' || (o.raw['force-lookup'] ?? '').trim().toLowerCase() === 'true');
  const vectors = snapshotDeletionVectors(t, s);
  const rows: unknown[][] = [];
  const pickedAll: KeyValue[][] = [];
  let notRaw: string | undefined;
  const merge = createMergeFunction(schema);
  const order = mergeOrder(schema);
  for (const b of t.buckets(s)) {
    const byKey = new Map<string, Array<{ kv: KeyValue; level: number }>>();
    for (const f of b.files) {
      if (raw && f.level === 0) continue;
      if (raw && f.deleteRowCount !== 0) notRaw ??= `${f.fileName} holds retractions`;
      const run = t.loadRun(b.partition, b.bucket, f);
      const deleted = vectors.deleted(b.partition, b.bucket, f.fileName);
      for (let i = 0; i < run.rowCount; i++) {
        if (deleted?.has(i)) continue;
        const kv = kvAt(run, i);
        if (raw) {
          if (isAdd(kv.kind)) rows.push(kv.value);
          continue;
        }
        const id = JSON.stringify(kv.key, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
        const list = byKey.get(id) ?? [];
        list.push({ kv, level: f.level });
        byKey.set(id, list);
      }
    }
    for (const records of byKey.values()) {
      let high: { kv: KeyValue; level: number } | undefined;
      for (const r of records) if (r.level > 0 && (high === undefined || r.level < high.level)) high = r;
      const picked = (lookup ? records.filter((r) => r.level === 0 || r === high) : records).map((r) => r.kv).sort(order);
      pickedAll.push(picked);
      merge.reset();
      for (const kv of picked) merge.add(kv);
      const r = merge.result();
      if (r && isAdd(r.kind)) rows.push(r.value);
    }
  }
  return notRaw === undefined ? { rows, picked: pickedAll } : { rows, notRaw, picked: pickedAll };
}
