// Paimon options that change what a write must do and that this store does not implement
// (DESIGN.md, "Options a write depends on"). A table created here cannot carry them (creation is
// strict, and Table.create checks the pass-through ones), but a table Java made may: it opens and
// reads as any other, and its writer is refused (TableWriter's constructor) — with NotSupported
// naming the option and its value — rather than writing files Java would read wrongly or leaving a
// state no Java writer would leave. Expiration, compaction, rollback and the CLI's maintenance all
// go through a writer (Table.expireUnderLock applies the same check), so they are refused too.

import { notSupported } from './errors.ts';
import { changelogOutlivesSnapshots } from './options.ts';
import { formatterRefusal } from './partition-expire.ts';
import type { TableSchema } from './schema.ts';

/** One option that makes the table unwritable here: its key, its value and what it would need. */
export interface WriteRefusal {
  readonly key: string;
  readonly value: string;
  readonly why: string;
}

const isTrue = (v: string | undefined): boolean => (v ?? '').trim().toLowerCase() === 'true';
const lower = (v: string | undefined): string => (v ?? '').trim().toLowerCase();

/** Partition types whose directory name differs between legacy and non-legacy names (Paimon's InternalRowPartitionComputer: toString() vs a cast to STRING). */
const LEGACY_NAME_TYPES = new Set(['DATE', 'TIME', 'TIMESTAMP', 'TIMESTAMP_LTZ']);

/**
 * Every option of `schema` that a writer here would not honour, in a fixed order (empty when the
 * table is writable as far as options go; deletion vectors and file formats are checked
 * elsewhere: dv-writer.ts, data-file-format.ts).
 */
export function writeRefusals(schema: TableSchema): WriteRefusal[] {
  const raw = schema.options.raw;
  const out: WriteRefusal[] = [];
  const refuse = (key: string, why: string): void => {
    out.push({ key, value: raw[key]!, why });
  };
  const has = (key: string): boolean => raw[key] !== undefined && raw[key]!.trim() !== '';
  // Java skips partition expiration and tag creation at commit for write-only tables (its
  // TableCommitImpl gets neither), so these bind only writers that are not write-only.
  const writeOnly = schema.options.writeOnly;

  // Dynamic buckets need Paimon's HASH index (a key keeps the bucket the index gave it; new keys
  // fill buckets up to dynamic-bucket.target-row-num); postpone buckets need its postpone writer
  // and the compaction that moves files into real buckets. Neither is written here.
  if (schema.keyBucketUnknown) {
    refuse(
      'bucket',
      schema.options.bucket === -1
        ? "dynamic bucket mode: a key's bucket comes from Paimon's HASH index, which is not kept here (nor the global index of a cross-partition update)"
        : "postpone bucket mode: writes go to 'bucket-postpone' and Paimon's postpone compaction assigns real buckets, neither of which is done here",
    );
  }
  const type = lower(raw['type']);
  if (type !== '' && type !== 'table' && type !== 'materialized-table') {
    refuse('type', 'only Paimon\'s own LSM tables (\'table\', \'materialized-table\') are written here');
  }
  if (has('manifest.format') && lower(raw['manifest.format']) !== 'avro') {
    refuse('manifest.format', 'manifests are written in Avro here; Java reads them in the format this option names');
  }
  if (has('bucket-function.type') && lower(raw['bucket-function.type']) !== 'default' && schema.options.bucket > 0) {
    refuse('bucket-function.type', 'rows are bucketed by the default hash here; Java would look for a key in another bucket');
  }
  if (schema.isPrimaryKeyTable && has('rowkind.field')) {
    refuse('rowkind.field', 'the row kind is taken from the writer call here, not from the column');
  }
  if (isTrue(raw['sequence.snapshot-ordering'])) {
    refuse('sequence.snapshot-ordering', 'records are ordered by sequence number here, not by the snapshot that committed them');
  }
  if (lower(raw['write.sequence-number-init-mode']) === 'snapshot') {
    refuse('write.sequence-number-init-mode', "the maximum sequence number is not recorded in snapshot properties here; a Java writer starting from them would write records older than ours");
  }
  if (schema.isPrimaryKeyTable && has('record-level.expire-time')) {
    refuse('record-level.expire-time', 'compaction here does not drop expired records');
  }
  // Partition expiration is done at commit (partition-expire.ts), its time read with a subset of
  // Java's DateTimeFormatter letters: a formatter beyond it would judge partitions otherwise.
  const formatter = formatterRefusal(raw, schema.partitionKeys.length > 0, writeOnly);
  if (formatter) refuse('partition.timestamp-formatter', `partition times are read here with the pattern letters y, u, M, d, H, m, s and S only, not ${formatter}`);
  if (!writeOnly && has('tag.automatic-creation') && lower(raw['tag.automatic-creation']) !== 'none') {
    refuse('tag.automatic-creation', 'commits here do not create tags');
  }
  if (has('commit.callbacks')) refuse('commit.callbacks', 'Java commit callbacks cannot run here');
  if (has('metadata.iceberg.storage') && lower(raw['metadata.iceberg.storage']) !== 'disabled') {
    refuse('metadata.iceberg.storage', 'commits here do not write Iceberg metadata');
  }
  if (isTrue(raw['chain-table.enabled'])) refuse('chain-table.enabled', 'chain tables (snapshot and delta branches) are not written here');
  if (isTrue(raw['row-tracking.enabled'])) refuse('row-tracking.enabled', 'row ids (_FIRST_ROW_ID, the snapshot\'s next row id) are not assigned here');
  if (isTrue(raw['data-evolution.enabled'])) refuse('data-evolution.enabled', 'data-evolution tables are not written here');
  if (isTrue(raw['pk-clustering-override'])) refuse('pk-clustering-override', 'data files are sorted by the primary key here, not by the clustering columns');
  if (has('data-file.path-directory')) {
    refuse('data-file.path-directory', 'files under this directory are read here, but orphan removal lists only the table directory, and writing this layout is not done here');
  }
  if (has('data-file.external-paths') && has('data-file.external-paths.strategy') && lower(raw['data-file.external-paths.strategy']) !== 'none') {
    refuse('data-file.external-paths', 'data files are written under the table directory here, not at the external paths this option names (files Java put there are read)');
  }
  if (isTrue(raw['index-file-in-data-file-dir']) && isTrue(raw['deletion-vectors.enabled'])) {
    refuse('index-file-in-data-file-dir', "deletion-vector index files are written under 'index/' here; Java would look for them in the bucket directory");
  }
  const o = schema.options;
  // Paimon accepts any trigger; below 1 its universal compaction asks for more runs than the bucket
  // has (UniversalCompaction.pick: runs − trigger + 1), and the default num-levels (trigger + 1)
  // is below Levels' minimum of 2, so no Java writer writes such a table either. (An explicit
  // num-levels below 2 is not refused here: Java writes such a table write-only, and compacts a
  // bucket whose files already reach level 1; the writer refuses a bucket it could not compact,
  // levels.ts checkBucketLevels.)
  if (o.compactionTrigger < 1) refuse('num-sorted-run.compaction-trigger', "a compaction trigger below 1 would pick more sorted runs than a bucket has (so would Java's writer)");
  const changelog = changelogOutlivesSnapshots(raw, o.snapshotsRetainedMin, o.snapshotsRetainedMax, o.snapshotTimeRetainedMs);
  if (changelog) {
    refuse(changelog.key, `${changelog.text}: a changelog kept longer than its snapshots is not kept here (expiration deletes it with its snapshot)`);
  }
  if (lower(raw['partition.legacy-name']) === 'false') {
    const cols = schema.partitionIndexes.map((i) => schema.fields[i]!).filter((f) => LEGACY_NAME_TYPES.has(f.type.root));
    if (cols.length > 0) {
      refuse('partition.legacy-name', `partition directories are written with legacy names here, which differ for ${cols.map((f) => `'${f.name}' (${f.type.root})`).join(', ')}`);
    }
  }
  return out;
}

/** The message of a refusal: the option, its value, why, and (for a table that exists) that reading still works. */
export function describeRefusal(r: WriteRefusal, exists = true): string {
  return `option '${r.key}' = '${r.value}' is not supported for writing (${r.why})` + (exists ? '; the table can still be read here' : '');
}

/**
 * NotSupported naming the first option of `schema` a writer here would not honour. `exists`:
 * false when the table is being created (nothing to read yet).
 */
export function checkWritableOptions(schema: TableSchema, what: string, exists = true): void {
  const r = writeRefusals(schema);
  if (r.length > 0) throw notSupported(`${what}: ${describeRefusal(r[0]!, exists)}`);
}
