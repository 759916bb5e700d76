// Manifests and manifest lists of one table: reading them (cached by name — they are immutable),
// writing new ones, and turning a snapshot into its live file set (base list + delta list,
// entries merged by identity, paimon-format.md §5.4).

import { deserializeBinaryRow, serializeBinaryRow } from './binary-row.ts';
import { corruption, LsmError } from './errors.ts';
import type { FileIO } from './file-io.ts';
import {
  decodeManifest,
  decodeManifestList,
  encodeManifest,
  encodeManifestList,
  ADD,
  DELETE,
  entryIdentifier,
  type ManifestEntry,
  type ManifestFileMeta,
} from './manifest.ts';
import type { TableSchema } from './schema.ts';
import type { Snapshot } from './snapshot.ts';
import type { FileNamer, TablePaths } from './table-paths.ts';
import { comparatorFor, withNullable } from './types.ts';

/** Manifests kept in the base list before they are merged into one (Paimon's manifest.merge-min-count). */
export const MANIFEST_MERGE_MIN_COUNT = 30;
/** Names kept per cache at most, used or not. */
const MANIFEST_CACHE_MAX = 4096;
/** Manifest-list reads after which a cached file nobody read again is dropped (see RecentCache). */
export const MANIFEST_CACHE_IDLE_READS = 256;

export class ManifestStore {
  private readonly lists = new RecentCache<ManifestFileMeta[]>();
  private readonly manifests = new RecentCache<ManifestEntry[]>();
  /** Advances with every manifest-list read: the clock of the caches' recency. */
  private tick = 0;
  /** entryIdentifier per entry object: entries of cached manifests are merged again by every snapshot sharing them. */
  private readonly identifiers = new WeakMap<ManifestEntry, string>();

  constructor(
    private readonly fileIO: FileIO,
    private readonly paths: TablePaths,
  ) {}

  private readFile(name: string, what: string): Buffer {
    const path = this.paths.manifestFile(name);
    const bytes = this.fileIO.readFileIfExists(path);
    if (bytes === undefined) throw corruption(path, `${what} referenced by a snapshot is missing`);
    return bytes;
  }

  /**
   * A manifest list, checked against the size its snapshot records (null in snapshots of writers
   * that record none). An Avro container cut right after its header or a block is a well-formed
   * shorter file, so without the size a truncated list would read as fewer manifests.
   */
  readList(name: string, size: number | null): ManifestFileMeta[] {
    const tick = ++this.tick;
    let metas = this.lists.get(name, tick);
    if (!metas) {
      const path = this.paths.manifestFile(name);
      const bytes = this.readFile(name, 'manifest list');
      if (size !== null && bytes.length !== size) throw corruption(path, `size ${bytes.length} differs from the snapshot's ${size}`);
      metas = decodeManifestList(bytes, path);
      this.lists.set(name, metas, tick);
    }
    return metas;
  }

  readManifest(meta: Pick<ManifestFileMeta, 'fileName' | 'fileSize'>): ManifestEntry[] {
    let entries = this.manifests.get(meta.fileName, this.tick);
    if (!entries) {
      const bytes = this.readFile(meta.fileName, 'manifest');
      if (bytes.length !== meta.fileSize) {
        throw corruption(this.paths.manifestFile(meta.fileName), `size ${bytes.length} differs from the manifest list's ${meta.fileSize}`);
      }
      entries = decodeManifest(bytes, this.paths.manifestFile(meta.fileName));
      this.manifests.set(meta.fileName, entries, this.tick);
    }
    return entries;
  }

  /** Data manifests of a snapshot: its base list, then its delta list. */
  dataManifests(s: Snapshot): ManifestFileMeta[] {
    return [...this.readList(s.baseManifestList, s.baseManifestListSize), ...this.readList(s.deltaManifestList, s.deltaManifestListSize)];
  }

  /** The live data files of a snapshot. */
  liveFiles(s: Snapshot): ManifestEntry[] {
    try {
      return this.merge(this.dataManifests(s), this.paths.manifestFile(s.deltaManifestList));
    } catch (e) {
      if (e instanceof LsmError) throw e;
      throw corruption(this.paths.snapshotFile(s.id), (e as Error).message, e);
    }
  }

  /**
   * manifest.ts's `liveEntries` over the entries of `metas` in order (same result, same errors),
   * with each entry's identifier computed once per entry object.
   */
  private merge(metas: readonly ManifestFileMeta[], path: string): ManifestEntry[] {
    const lists = metas.map((m) => this.readManifest(m)); // every manifest read first, as before
    const map = new Map<string, ManifestEntry>();
    for (const entries of lists) {
      for (const e of entries) {
        let id = this.identifiers.get(e);
        if (id === undefined) {
          id = entryIdentifier(e);
          this.identifiers.set(e, id);
        }
        if (e.kind === ADD) {
          if (map.has(id)) throw corruption(path, `file ${e.file.fileName} (bucket ${e.bucket}, level ${e.file.level}) is added twice`);
          map.set(id, e);
        } else if (map.has(id)) map.delete(id);
        else map.set(id, e);
      }
    }
    const merged = [...map.values()];
    for (const e of merged) {
      if (e.kind === DELETE) throw corruption(path, `DELETE of ${e.file.fileName} (bucket ${e.bucket}, level ${e.file.level}) matches no ADD`);
    }
    return merged;
  }

  /** Writes one manifest file holding `entries` and returns its meta. */
  writeManifest(schema: TableSchema, namer: FileNamer, entries: ManifestEntry[]): ManifestFileMeta {
    const name = namer.manifest();
    const bytes = encodeManifest(entries, schema.options.manifestCompression);
    this.fileIO.mkdirs(this.paths.manifestDir);
    this.fileIO.writeNew(this.paths.manifestFile(name), bytes);
    this.manifests.set(name, entries, this.tick);
    let added = 0;
    let minBucket = Infinity;
    let maxBucket = -Infinity;
    let minLevel = Infinity;
    let maxLevel = -Infinity;
    // As Java's manifest writer (ManifestAvroWriter.collectStats): the largest schema id of the
    // files named, not the writer's schema (after an ALTER a rollback or a merged base manifest
    // names only older files); the table's for a manifest without entries (Java writes none).
    let schemaId = entries.length > 0 ? -Infinity : schema.id;
    for (const e of entries) {
      if (e.kind === 0) added++;
      if (e.file.schemaId > schemaId) schemaId = e.file.schemaId;
      minBucket = Math.min(minBucket, e.bucket);
      maxBucket = Math.max(maxBucket, e.bucket);
      minLevel = Math.min(minLevel, e.file.level);
      maxLevel = Math.max(maxLevel, e.file.level);
    }
    return {
      fileName: name,
      fileSize: bytes.length,
      numAddedFiles: added,
      numDeletedFiles: entries.length - added,
      partitionStats: partitionStats(schema, entries, this.paths.manifestFile(name)),
      schemaId,
      minBucket: entries.length ? minBucket : null,
      maxBucket: entries.length ? maxBucket : null,
      minLevel: entries.length ? minLevel : null,
      maxLevel: entries.length ? maxLevel : null,
      minRowId: null,
      maxRowId: null,
    };
  }

  writeList(schema: TableSchema, namer: FileNamer, metas: ManifestFileMeta[]): { name: string; size: number } {
    const name = namer.manifestList();
    const bytes = encodeManifestList(metas, schema.options.manifestCompression);
    this.fileIO.mkdirs(this.paths.manifestDir);
    this.fileIO.writeNew(this.paths.manifestFile(name), bytes);
    this.lists.set(name, metas, this.tick);
    return { name, size: bytes.length };
  }

  /**
   * Drops a deleted manifest or manifest list from the caches (expiration calls it for each file
   * it removes). The writer's caches so hold no expired snapshot's files at all; other Table
   * objects on the same table (a reader's) never hear of the deletion and rely on RecentCache.
   */
  forget(name: string): void {
    this.lists.delete(name);
    this.manifests.delete(name);
  }

  /** How many manifest lists and manifests are cached (tests). */
  cachedCounts(): { lists: number; manifests: number } {
    return { lists: this.lists.size, manifests: this.manifests.size };
  }

  /** Every manifest and manifest-list name a snapshot references (for expiration). */
  referencedNames(s: Snapshot): string[] {
    const names = [s.baseManifestList, s.deltaManifestList];
    if (s.changelogManifestList) names.push(s.changelogManifestList);
    for (const m of this.dataManifests(s)) names.push(m.fileName);
    return names;
  }
}

/**
 * Decoded files by name, each with the tick of its last use; the map's order is the order of last
 * use. The files are immutable, so a decode never goes stale, but a table committing every few
 * hundred milliseconds writes a manifest list and a manifest per commit, and a Table object that
 * only reads (the sync engine's, the agent's) never learns that expiration deleted the old ones.
 * Keeping them until a count bound pushed them out cost tens of megabytes per table and reader on
 * a busy site (heap snapshots of the long soak). So storing a file also drops every file not used
 * in the last MANIFEST_CACHE_IDLE_READS list reads: a reader keeps what the snapshots it reads
 * reference. A dropped file is read again, from disk, only if it is wanted again.
 */
class RecentCache<V> {
  private readonly map = new Map<string, { value: V; tick: number }>();

  get(key: string, tick: number): V | undefined {
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    if (e.tick !== tick) {
      e.tick = tick;
      this.map.delete(key); // to the back: the map stays ordered by last use
      this.map.set(key, e);
    }
    return e.value;
  }

  set(key: string, value: V, tick: number): void {
    this.map.delete(key);
    this.map.set(key, { value, tick });
    for (const [k, e] of this.map) {
      if (this.map.size <= MANIFEST_CACHE_MAX && e.tick >= tick - MANIFEST_CACHE_IDLE_READS) break;
      this.map.delete(k);
    }
  }

  delete(key: string): void {
    this.map.delete(key);
  }

  get size(): number {
    return this.map.size;
  }
}

function partitionStats(schema: TableSchema, entries: ManifestEntry[], path: string): ManifestFileMeta['partitionStats'] {
  const types = schema.partitionTypes.map((t) => withNullable(t, true));
  if (types.length === 0) {
    const empty = serializeBinaryRow([], []);
    return { minValues: empty, maxValues: empty, nullCounts: [] };
  }
  const cmps = types.map(comparatorFor);
  const mins: unknown[] = types.map(() => null);
  const maxs: unknown[] = types.map(() => null);
  const nulls = types.map(() => 0);
  // Decoded once per partition; null counts count entries, as Java's collector sees every entry.
  const seen = new Map<string, unknown[]>();
  for (const e of entries) {
    const k = Buffer.from(e.partition).toString('latin1');
    const known = seen.get(k);
    if (known !== undefined) {
      known.forEach((v, i) => {
        if (v === null) nulls[i]!++;
      });
      continue;
    }
    const values = deserializeBinaryRow(types, e.partition, path);
    seen.set(k, values);
    values.forEach((v, i) => {
      if (v === null) {
        nulls[i]!++;
        return;
      }
      if (mins[i] === null || cmps[i]!(v, mins[i]) < 0) mins[i] = v;
      if (maxs[i] === null || cmps[i]!(v, maxs[i]) > 0) maxs[i] = v;
    });
  }
  return { minValues: serializeBinaryRow(types, mins), maxValues: serializeBinaryRow(types, maxs), nullCounts: nulls };
}
