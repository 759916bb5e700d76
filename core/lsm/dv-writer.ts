// Writing deletion vectors (EVOLUTION-DESIGN.md §4; Paimon's DeletionVectorsMaintainer and
// LookupMergeTreeCompactRewriter, simplified). Used by TableWriter for `deletion-vectors.enabled`.
//
// Level policy: level 0 is staging only. At every commit the bucket's level-0 files (pending, and
// any committed by another writer) are merged with the level-1 run into new level-1 files, so a
// reader that skips level 0 sees every committed row. For each key written there, the row of the
// same key in an older (level ≥ 2) file gets its position marked in that file's deletion vector;
// retractions only mark and are not written. Compaction reads its inputs minus their deleted
// positions, and the vectors of files it removes are dropped.
//
// State: per (partition, bucket) the vectors of its files (file name → positions), loaded lazily
// from the latest snapshot's index manifest. At a commit the buckets whose vectors changed get a
// new DV index file (`index/index-<uuid>-<n>`); the new index manifest carries the other buckets'
// entries forward (only ADD entries, the full current set); an unchanged state re-references the
// previous index manifest.

import { randomUUID } from 'node:crypto';
import { runFromRecords, type RunData } from './data-file.ts';
import { decodeDeletionVector, encodeDeletionVectorFile } from './deletion-vector.ts';
import { corruption, notSupported } from './errors.ts';
import { isAdd, type KeyValue } from './key-value.ts';
import { ADD, decodeIndexManifest, encodeIndexManifest, type DataFileMeta, type IndexManifestEntry, type ManifestEntry, DELETE } from './manifest.ts';
import { createMergeFunction, mergeOrder } from './merge/merge-function.ts';
import { findKey, mergeRuns } from './merge-reader.ts';
import type { TableSchema } from './schema.ts';
import type { Snapshot } from './snapshot.ts';
import type { Table } from './table.ts';

export const DV_INDEX_TYPE = 'DELETION_VECTORS';

/** Why this store cannot write deletion vectors for the schema, or undefined when it can. */
export function dvWriteRefusal(schema: TableSchema): string | undefined {
  const o = schema.options;
  if (!schema.isPrimaryKeyTable) return 'deletion vectors of append tables are not written';
  if (o.mergeEngine !== 'deduplicate') return `merge-engine '${o.mergeEngine}' with deletion vectors is not written (only deduplicate)`;
  if (schema.sequenceFieldIndexes.length > 0) return "'sequence.field' with deletion vectors is not written";
  if (o.changelogProducer !== 'none' && o.changelogProducer !== 'input') return `changelog-producer '${o.changelogProducer}' with deletion vectors is not written`;
  if ((o.raw['deletion-vectors.bitmap64'] ?? 'false').trim().toLowerCase() === 'true') return "'deletion-vectors.bitmap64' is not written";
  if ((o.raw['deletion-vectors.merge-on-read'] ?? 'false').trim().toLowerCase() === 'true') return "'deletion-vectors.merge-on-read' is not supported";
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
      const path = this.indexPath(e.fileName);
      const bytes = this.table.fileIO.readFileIfExists(path);
      if (bytes === undefined) throw corruption(path, 'deletion vector index file listed in the index manifest is missing');
      for (const r of e.dvRanges ?? []) v.files.set(r.dataFileName, new Set(decodeDeletionVector(bytes, r.offset, r.length, path)));
    }
    this.loaded.set(key, v);
    return v;
  }

  private indexPath(name: string): string {
    return `${this.table.paths.root}/index/${name}`;
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
    const d = this.table.loadRun(partition, bucket, f);
    const del = this.deleted(partition, bucket, f.fileName);
    if (!del || del.size === 0) return d;
    const keep: number[] = [];
    for (let i = 0; i < d.rowCount; i++) if (!del.has(i)) keep.push(i);
    return {
      rowCount: keep.length,
      keyCols: d.keyCols.map((c) => keep.map((i) => c[i])),
      seq: keep.map((i) => d.seq[i]!),
      kind: keep.map((i) => d.kind[i]!),
      valueCols: d.valueCols.map((c) => keep.map((i) => c[i])),
    };
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
      io.writeNew(this.indexPath(name), bytes);
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

/**
 * Moves a bucket's level-0 files up: merges them with the level-1 run into new level-1 files,
 * marking the superseded rows of older (level ≥ 2) files. Returns the manifest entries (DELETE of
 * the merged files, ADD of the new ones) and the new files; `files` are the bucket's committed
 * files, `pending` its uncommitted level-0 files. No-op (undefined) when there is no level 0.
 */
export function promoteLevel0(
  table: Table,
  dv: DeletionVectorState,
  s: { partition: Uint8Array; bucket: number; files: readonly DataFileMeta[]; pending: readonly DataFileMeta[] },
  writeLevel1: (run: RunData) => DataFileMeta,
  entry: (kind: 0 | 1, f: DataFileMeta) => ManifestEntry,
): { entries: ManifestEntry[]; removed: DataFileMeta[]; added: DataFileMeta[] } | undefined {
  const committedL0 = s.files.filter((f) => f.level === 0);
  if (committedL0.length === 0 && s.pending.length === 0) return undefined;
  const schema = table.schema;
  const l1 = s.files.filter((f) => f.level === 1);
  const inputs = table.runsOf([...committedL0, ...s.pending, ...l1]).map((r) => r.files.map((f) => dv.visibleRun(s.partition, s.bucket, f)));
  const older = table.runsOf(s.files.filter((f) => f.level >= 2)).flatMap((r) => r.files);
  const out: KeyValue[] = [];
  for (const kv of mergeRuns(inputs, table.compareKeys, createMergeFunction(schema), mergeOrder(schema))) {
    for (const f of older) {
      const range = table.keyRange(f);
      if (table.compareKeys(kv.key, range.min) < 0 || table.compareKeys(kv.key, range.max) > 0) continue;
      const pos = findKey(table.loadRun(s.partition, s.bucket, f), kv.key, table.compareKeys);
      if (pos < 0 || dv.deleted(s.partition, s.bucket, f.fileName)?.has(pos)) continue;
      dv.mark(s.partition, s.bucket, f.fileName, pos);
    }
    if (isAdd(kv.kind)) out.push(kv);
  }
  const removed = [...committedL0, ...l1];
  dv.dropFiles(s.partition, s.bucket, removed);
  const added = out.length > 0 ? [writeLevel1(runFromRecords(out, schema.keyIndexes.length, schema.fields.length))] : [];
  const entries = [...removed.map((f) => entry(DELETE, f)), ...added.map((f) => entry(ADD, f))];
  return { entries, removed, added };
}
