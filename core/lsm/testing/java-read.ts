// Test-only: a table's rows as Java Paimon's batch read gives them for tables that "need lookup"
// (compaction/lookup-levels.ts), written from Paimon's code, not from this store's reader.
//
//   - deletion vectors (merge-on-read off) or first-row: level 0 is skipped
//     (CoreOptions.batchScanSkipLevel0) and the files above it are read minus their vectors,
//     unmerged (MergeTreeSplitGenerator: raw-convertible when no file holds retractions);
//   - changelog-producer=lookup or force-lookup: per key, the fold of its level-0 records and of its record of the
//     lowest level above 0 only (LookupMergeFunction, which PrimaryKeyFileStoreTable hands to
//     MergeFileSplitRead);
//   - any other table: every record of the key folded (as this store folds them);
//   - in every merged table a key with ONE record in the files read is that record as it is,
//     not its fold (ReducerMergeFunctionWrapper around the engine, and around LookupMergeFunction
//     — the count is of all the key's records, before the lookup pick), then dropped when it is
//     a retraction (DropDeleteReader). merge/README.md, "A key's lone record". This store's
//     reader (table-read.ts) follows the same rule; `{ lone: 'folded' }` folds a lone record
//     like any other instead (what that reader did before, and what the engine alone makes).
//     For lookup tables 'folded' is the default: Java compacts their level 0 at every commit
//     with LookupChangelogMergeFunctionWrapper, which folds every key, so Java's reads meet their
//     records folded, and this store reads them so (merge/README.md).
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

export interface JavaReadOptions {
  /**
   * 'as-is' (default but for lookup tables): Java's rule for a key with one record in the files
   * read (the header); 'folded' (the default for lookup tables): that record folded by the engine
   * like a key of several.
   */
  lone?: 'as-is' | 'folded';
}

/** The rows Java reads at `at` (default latest), in no particular order. */
export function javaRead(t: Table, at: ReadPoint = {}, opts: JavaReadOptions = {}): JavaRead {
  if (opts.lone !== undefined && opts.lone !== 'as-is' && opts.lone !== 'folded') throw new Error(`javaRead: lone must be 'as-is' or 'folded', got ${String(opts.lone)}`);
  const s = t.resolve(at);
  if (!s) return { rows: [], picked: [] };
  const schema = t.schema;
  const o = schema.options;
  const dv = (o.raw['deletion-vectors.enabled'] ?? '').trim().toLowerCase() === 'true';
  const raw = dv || o.mergeEngine === 'first-row';
  const lookup = !raw && (o.changelogProducer === 'lookup' || (o.raw['force-lookup'] ?? '').trim().toLowerCase() === 'true');
  const lone = opts.lone ?? (lookup ? 'folded' : 'as-is');
  const vectors = snapshotDeletionVectors(t, s);
  const rows: unknown[][] = [];
  const pickedAll: KeyValue[][] = [];
  let notRaw: string | undefined;
  const merge = createMergeFunction(schema);
  const order = mergeOrder(schema);
  for (const b of t.buckets(s)) {
    // Java's batch scan of a postpone table reads real buckets only (AbstractBatchTableScan: onlyReadRealBuckets).
    if (b.bucket < 0) continue;
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
      // ReducerMergeFunctionWrapper (MergeFileSplitRead wraps the engine, LookupMergeFunction
      // included, in it): a key with one record in the files read is that record, unfolded; a
      // retraction is then dropped (DropDeleteReader), as any merged retraction is.
      if (lone === 'as-is' && records.length === 1) {
        const only = records[0]!.kv;
        pickedAll.push([only]);
        if (isAdd(only.kind)) rows.push(only.value);
        continue;
      }
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
