// Append tables (no primary key; Paimon's AppendOnlyFileStore): the rules a schema without a
// primary key must follow, checked from TableSchema.validate.
//
//   - `bucket = -1` (Paimon's default, "bucket-unaware"): every file lands in bucket-0 of its
//     partition and the manifest says `_TOTAL_BUCKETS = -1`.
//   - `bucket = N ≥ 1`: rows are hashed by `bucket-key` (required, as Paimon requires it for
//     bucketed append tables) into N buckets.
//   - No merging: merge engines, sequence fields, sequence groups and changelog producers make
//     no sense without a key and are refused; `bucket = -2` (postpone) is refused.

import { invalidArgument, notSupported } from './errors.ts';
import { formatsPerLevel } from './data-file-format.ts';
import type { TableSchema } from './schema.ts';

/**
 * InvalidArgument for `full-compaction.delta-commits` on a bucket-unaware append table: Paimon
 * refuses it (SchemaValidation.validateBucket) at create, at ALTER and in every table copy its
 * engines make (dynamic options, time travel), so Flink and Spark could neither alter nor
 * time-travel such a table; this store ignores the option for append tables. Checked where it is
 * set (creation, ALTER: schema-change.ts); a table an earlier version made with it opens.
 */
export function checkAppendFullCompaction(schema: TableSchema): void {
  if (schema.isPrimaryKeyTable || schema.options.bucket !== -1 || schema.options.raw['full-compaction.delta-commits'] === undefined) return;
  throw invalidArgument(
    "option 'full-compaction.delta-commits' is not allowed on a bucket-unaware append table (bucket = -1; Paimon refuses it, so its engines could not alter or read such a table); " +
      "leave it out, or give the table a bucket count and 'bucket-key'",
  );
}

export function validateAppendTable(schema: TableSchema, bucketKey: readonly string[], strict = false): void {
  const o = schema.options;
  const raw = o.raw;
  if (o.bucket === -2) throw notSupported("option 'bucket': -2 (postpone) is not supported for append tables; use -1 or a bucket count");
  if (o.bucket === 0) throw invalidArgument("option 'bucket': expected -1 (unaware) or a bucket count ≥ 1, got 0");
  if (o.bucket > 0 && bucketKey.length === 0) throw invalidArgument("append table with a fixed bucket count needs option 'bucket-key'");
  if (o.bucket === -1 && bucketKey.length > 0) throw invalidArgument("option 'bucket-key' needs a fixed bucket count (bucket ≥ 1)");
  for (const k of bucketKey) {
    if (schema.partitionKeys.includes(k)) throw invalidArgument(`option 'bucket-key': column '${k}' is a partition key`);
  }
  const refused = ['merge-engine', 'sequence.field', 'changelog-producer', 'partial-update.remove-record-on-delete', 'rowkind.field'];
  for (const k of refused) {
    if (raw[k] !== undefined && !(k === 'merge-engine' && raw[k] === 'deduplicate') && !(k === 'changelog-producer' && raw[k] === 'none')) {
      throw invalidArgument(`option '${k}' needs a primary key; append tables keep every row`);
    }
  }
  if (o.sequenceGroups.length > 0) throw invalidArgument('sequence groups need a primary key; append tables keep every row');
  if (strict) checkAppendFullCompaction(schema);
  formatsPerLevel(raw);
}
