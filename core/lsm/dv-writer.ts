// Writing deletion vectors (EVOLUTION-DESIGN.md §4; Paimon's DeletionVectorsMaintainer and
// LookupMergeTreeCompactRewriter, simplified). Used by TableWriter for `deletion-vectors.enabled`
// on primary-key tables of every merge engine; append tables accept the option and get no vectors
// (this store never deletes a row of an append table).
//
// Level policy: level 0 is staging only. At every commit the bucket's level-0 files (pending, and
// any committed by another writer) are merged with the level-1 run into new level-1 files, so a
// reader that skips level 0 sees every committed row. Invariant: among levels ≥ 1 minus their
// vectors a key has at most one record — its current row (or, with `sequence.field` only, a
// tombstone).
//
// Per key of the level-0 files (`promoteLevel0`): the key's current record — its level-1 row,
// else the unmarked row of an older (level ≥ 2) file, found by key range and binary search — is
// folded by the table's merge function together with the new records, in merge order (with
// `sequence.field` by its own sequence value, so the highest sequence wins even when the new
// record is older; on a tie the new record wins). This is Paimon's lookup: partial-update,
// aggregation (retractions, sequence groups, `*.remove-record-on-delete`, `ignore-delete`) fold
// onto the stored row exactly as a full compaction would. Then:
//   - the fold is the older row itself (first-row, or an older row with the higher sequence):
//     nothing is marked or written;
//   - otherwise the older row's position is marked in its file's vector, and the fold is written
//     at level 1 when it is a row. A retraction result (the key was removed) is written only with
//     `sequence.field`, as a tombstone that keeps outranking late records of a lower sequence
//     (as the table without vectors keeps it; Paimon drops it); without `sequence.field` every
//     later record sorts after the removal, so absence is the same and nothing is written.
// The same pass gives the lookup changelog (`changelog-producer=lookup`): the record found is the
// key's value before the commit and the fold the value after it (+I, -U/+U, -D; row-deduplicate
// applied by ChangelogWriter.lookupRecords). An older row that stands still gives -U/+U of the same
// row unless row-deduplicate is set (first-row always deduplicates), as the lookup producer of a
// table without vectors does, and a commit is made for that changelog even if no file changed.
//
// Compaction reads its inputs minus their deleted positions, and the vectors of files it removes
// are dropped.
//
// State: per (partition, bucket) the vectors of its files (file name → positions), loaded lazily
// from the latest snapshot's index manifest. At a commit the buckets whose vectors changed get a
// new DV index file (`index/index-<uuid>-<n>`); the new index manifest carries the other buckets'
// entries forward (only ADD entries, the full current set); an unchanged state re-references the
// previous index manifest. Refused: `deletion-vectors.bitmap64`, `deletion-vectors.merge-on-read`,
// and the `full-compaction` producer with fewer than 3 levels (table-writer.ts diffs the raw top
// level, which only full compactions write, against the full compaction's output).

import { randomUUID } from 'node:crypto';
import { kvAt, runFromRecords, type RunData } from './data-file.ts';
import { decodeDeletionVector, encodeDeletionVectorFile, withoutDeleted } from './deletion-vector.ts';
import { corruption, notSupported } from './errors.ts';
import { isAdd, type KeyValue } from './key-value.ts';
import { ADD, decodeIndexManifest, encodeIndexManifest, type DataFileMeta, type IndexManifestEntry, type ManifestEntry, DELETE } from './manifest.ts';
import { createMergeFunction, mergeOrder, type MergeFunction } from './merge/merge-function.ts';
import { findKey, mergeRuns } from './merge-reader.ts';
import type { TableSchema } from './schema.ts';
import type { Snapshot } from './snapshot.ts';
import type { Table } from './table.ts';

export const DV_INDEX_TYPE = 'DELETION_VECTORS';

/**
 * Why this store cannot write deletion vectors for the schema, or undefined when it can: every
 * merge engine, `sequence.field`, changelog producers none/input/lookup/full-compaction (≥ 3 levels), and append tables (which
 * accept the option and get no vectors: this store never deletes rows of an append table).
 */
export function dvWriteRefusal(schema: TableSchema): string | undefined {
  const o = schema.options;
  if ((o.raw['deletion-vectors.bitmap64'] ?? 'false').trim().toLowerCase() === 'true') return "'deletion-vectors.bitmap64' is not written";
  if ((o.raw['deletion-vectors.merge-on-read'] ?? 'false').trim().toLowerCase() === 'true') return "'deletion-vectors.merge-on-read' is not supported";
  if (!schema.isPrimaryKeyTable) return undefined;
  // full-compaction: the writer diffs the raw top level (vectors ignored) against the compaction
  // output; levels ≥ 2 are written only by compaction (num-levels ≥ 3 is checked with the options).
  if (o.changelogProducer === 'full-compaction' && o.numLevels < 3) {
    return `changelog-producer 'full-compaction' with deletion vectors needs 'num-levels' ≥ 3`;
  }
  return undefined;
}

export function checkDvWritable(schema: TableSchema, what: string): void {
  const r = dvWriteRefusal(schema);
  if (r !== undefined) throw notSupported(`${what}: ${r}`);
}

const bucketKey = (partition: Uint8Array, bucket: number) => `${Buffer.from(partition).toString('hex')}/${bucket}`;

interface BucketVectors {
  partition: Uint8Array;
  bucket: number;
  files: Map<string, Set<number>>;
}

export class DeletionVectorState {
  private baseName: string | null = null;
  private base: IndexManifestEntry[] = [];
  private readonly loaded = new Map<string, BucketVectors>();
  private readonly dirty = new Set<string>();
  private readonly uuid = randomUUID();
  private counter = 0;

  constructor(private readonly table: Table) {
    this.reset(table.latestSnapshot());
  }

  /** Forgets all state and takes the vectors of `snapshot` (the writer's base). */
  reset(snapshot: Snapshot | undefined): void {
    this.loaded.clear();
    this.dirty.clear();
    this.baseName = snapshot?.indexManifest ?? null;
    this.base = [];
    if (this.baseName) {
      const path = this.table.paths.manifestFile(this.baseName);
      const bytes = this.table.fileIO.readFileIfExists(path);
      if (bytes === undefined) throw corruption(path, `index manifest of snapshot ${snapshot!.id} is missing`);
      this.base = decodeIndexManifest(bytes, path).filter((e) => e.kind === ADD);
    }
  }

  private vectors(partition: Uint8Array, bucket: number): BucketVectors {
    const key = bucketKey(partition, bucket);
    let v = this.loaded.get(key);
    if (v) return v;
    v = { partition, bucket, files: new Map() };
    for (const e of this.base) {
      if (e.indexType !== DV_INDEX_TYPE || e.bucket !== bucket || bucketKey(e.partition, e.bucket) !== key) continue;
      const path = this.table.indexFilePath(e);
      const bytes = this.table.fileIO.readFileIfExists(path);
      if (bytes === undefined) throw corruption(path, 'deletion vector index file listed in the index manifest is missing');
      for (const r of e.dvRanges ?? []) v.files.set(r.dataFileName, new Set(decodeDeletionVector(bytes, r.offset, r.length, path)));
    }
    this.loaded.set(key, v);
    return v;
  }

  /** True when vectors changed since the last index manifest was written. */
  get changed(): boolean {
    return this.dirty.size > 0;
  }

  deleted(partition: Uint8Array, bucket: number, fileName: string): ReadonlySet<number> | undefined {
    return this.vectors(partition, bucket).files.get(fileName);
  }

  mark(partition: Uint8Array, bucket: number, fileName: string, position: number): void {
    const v = this.vectors(partition, bucket);
    let set = v.files.get(fileName);
    if (!set) v.files.set(fileName, (set = new Set()));
    set.add(position);
    this.dirty.add(bucketKey(partition, bucket));
  }

  /** Drops the vectors of files removed from the bucket. */
  dropFiles(partition: Uint8Array, bucket: number, files: readonly DataFileMeta[]): void {
    const v = this.vectors(partition, bucket);
    for (const f of files) if (v.files.delete(f.fileName)) this.dirty.add(bucketKey(partition, bucket));
  }

  /** `loadRun` minus the deleted positions (a filtered copy when the file has any). */
  visibleRun(partition: Uint8Array, bucket: number, f: DataFileMeta): RunData {
    return withoutDeleted(this.table.loadRun(partition, bucket, f), this.deleted(partition, bucket, f.fileName));
  }

  /**
   * Writes the DV index files of the changed buckets and the index manifest; returns the name to
   * put in the snapshot's `indexManifest` (the previous one when nothing changed).
   */
  writeIndexManifest(): string | null {
    if (this.dirty.size === 0) return this.baseName;
    const io = this.table.fileIO;
    const next: IndexManifestEntry[] = this.base.filter((e) => e.indexType !== DV_INDEX_TYPE || !this.dirty.has(bucketKey(e.partition, e.bucket)));
    for (const key of [...this.dirty].sort()) {
      const v = this.loaded.get(key)!;
      const vectors = new Map<string, number[]>();
      for (const [file, set] of [...v.files].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
        if (set.size > 0) vectors.set(file, [...set].sort((a, b) => a - b));
      }
      if (vectors.size === 0) continue;
      const { bytes, ranges } = encodeDeletionVectorFile(vectors);
      const name = `index-${this.uuid}-${this.counter++}`;
      io.mkdirs(`${this.table.paths.root}/index`);
      io.writeNew(this.table.paths.indexFile(name), bytes);
      next.push({ kind: ADD, partition: v.partition, bucket: v.bucket, indexType: DV_INDEX_TYPE, fileName: name, fileSize: bytes.length, rowCount: ranges.length, dvRanges: ranges, externalPath: null });
    }
    const name = `index-manifest-${this.uuid}-${this.counter++}`;
    io.mkdirs(this.table.paths.manifestDir);
    io.writeNew(this.table.paths.manifestFile(name), encodeIndexManifest(next, this.table.schema.options.manifestCompression));
    this.base = next;
    this.baseName = name;
    this.dirty.clear();
    return name;
  }
}

/** One key's change made by `promoteLevel0`: its visible row before and after (undefined = absent). */
export interface DvKeyChange {
  key: unknown[];
  seq: number;
  before: unknown[] | undefined;
  after: unknown[] | undefined;
}

/** A visible record of an older (level ≥ 2) file: the record, its file and position. */
interface OlderHit {
  kv: KeyValue;
  file: DataFileMeta;
  pos: number;
}

/**
 * Moves a bucket's level-0 files up: merges them with the level-1 run into new level-1 files.
 * For each key of the level-0 files its current visible record — the level-1 row, else the
 * unmarked row of an older (level ≥ 2) file, found by key-range check and `findKey` — is folded
 * first (in merge order, so with `sequence.field` by its own sequence value) with the new records,
 * and the older row's position is marked. A fold whose result is the older row itself (first-row,
 * or an older row with the higher sequence) changes nothing. A retraction result is written only
 * with `sequence.field` (a tombstone that must keep outranking late records); otherwise it only
 * marks. Returns the manifest entries (DELETE of the merged files, ADD of the new ones), the new
 * files, and each changed key's before/after rows (for the lookup changelog). `files` are the
 * bucket's committed files, `pending` its uncommitted level-0 files. Undefined when there is no
 * level 0.
 */
export function promoteLevel0(
  table: Table,
  dv: DeletionVectorState,
  s: { partition: Uint8Array; bucket: number; files: readonly DataFileMeta[]; pending: readonly DataFileMeta[] },
  writeLevel1: (run: RunData) => DataFileMeta,
  entry: (kind: 0 | 1, f: DataFileMeta) => ManifestEntry,
): { entries: ManifestEntry[]; removed: DataFileMeta[]; added: DataFileMeta[]; changes: DvKeyChange[] } | undefined {
  const committedL0 = s.files.filter((f) => f.level === 0);
  if (committedL0.length === 0 && s.pending.length === 0) return undefined;
  const schema = table.schema;
  const cmp = table.compareKeys;
  const order = mergeOrder(schema);
  const merge = createMergeFunction(schema);
  const keepTombstones = schema.sequenceFieldIndexes.length > 0;
  const { partition, bucket } = s;
  const l1 = s.files.filter((f) => f.level === 1);
  // The level-1 rows (visible, one per key) and the new records grouped per key, both by key.
  const keep = lastRecord();
  const l1Rows = [...mergeRuns(table.runsOf(l1).map((r) => r.files.map((f) => dv.visibleRun(partition, bucket, f))), cmp, keep, order)];
  const collect = collector();
  const l0Runs = table.runsOf([...committedL0, ...s.pending]).map((r) => r.files.map((f) => table.loadRun(partition, bucket, f)));
  const older = table.runsOf(s.files.filter((f) => f.level >= 2)).flatMap((r) => r.files);
  /** The visible records of `key` in older files, newest run first (at most one by the invariant). */
  const olderHits = (key: unknown[]): OlderHit[] => {
    const hits: OlderHit[] = [];
    for (const f of older) {
      const range = table.keyRange(f);
      if (cmp(key, range.min) < 0 || cmp(key, range.max) > 0) continue;
      const d = table.loadRun(partition, bucket, f);
      const pos = findKey(d, key, cmp);
      if (pos < 0 || dv.deleted(partition, bucket, f.fileName)?.has(pos)) continue;
      hits.push({ kv: kvAt(d, pos), file: f, pos });
    }
    return hits;
  };
  const out: KeyValue[] = [];
  const changes: DvKeyChange[] = [];
  let i = 0;
  for (const first of mergeRuns(l0Runs, cmp, collect, order)) {
    const records = collect.records();
    const key = first.key;
    while (i < l1Rows.length && cmp(l1Rows[i]!.key, key) < 0) out.push(l1Rows[i++]!);
    let before: KeyValue | undefined;
    let hits: OlderHit[] = [];
    if (i < l1Rows.length && cmp(l1Rows[i]!.key, key) === 0) before = l1Rows[i++]!;
    else {
      hits = olderHits(key);
      before = hits[0]?.kv;
    }
    const all = before ? [before, ...records] : records;
    all.sort(order); // stable: the older row first on a tie
    merge.reset();
    for (const kv of all) merge.add(kv);
    const r = merge.result();
    const beforeRow = before && isAdd(before.kind) ? before.value : undefined;
    const afterRow = r && isAdd(r.kind) ? r.value : undefined;
    if (beforeRow !== undefined || afterRow !== undefined) changes.push({ key, seq: r?.seq ?? records[records.length - 1]!.seq, before: beforeRow, after: afterRow });
    if (r === before && hits.length > 0) continue; // the older row stands: nothing marked or written
    for (const h of hits) dv.mark(partition, bucket, h.file.fileName, h.pos);
    if (r !== undefined && (isAdd(r.kind) || keepTombstones)) out.push(r);
  }
  while (i < l1Rows.length) out.push(l1Rows[i++]!);
  const removed = [...committedL0, ...l1];
  dv.dropFiles(partition, bucket, removed);
  const added = out.length > 0 ? [writeLevel1(runFromRecords(out, schema.keyIndexes.length, schema.fields.length))] : [];
  const entries = [...removed.map((f) => entry(DELETE, f)), ...added.map((f) => entry(ADD, f))];
  return { entries, removed, added, changes };
}

/** A merge function that keeps the last record of a key (runs whose keys are unique). */
function lastRecord(): MergeFunction {
  let last: KeyValue | undefined;
  return { reset: () => (last = undefined), add: (kv) => (last = kv), result: () => last };
}

/** A merge function that collects a key's records in merge order; `records()` until the next key. */
function collector(): MergeFunction & { records(): KeyValue[] } {
  let group: KeyValue[] = [];
  return {
    reset: () => (group = []),
    add: (kv) => group.push(kv),
    result: () => group[0],
    records: () => group,
  };
}
