// Every on-disk name of a table, in one place (leveldb's filename.h): the layout of Paimon's
// filesystem catalog, `<warehouse>/<db>.db/<table>/`, and the names inside a table directory.

import { randomUUID } from 'node:crypto';
import { isAbsolute, join } from 'node:path';
import { notSupported } from './errors.ts';

export const databaseDir = (warehouse: string, db: string): string => join(warehouse, `${db}.db`);
export const tableDir = (warehouse: string, db: string, table: string): string => join(warehouse, `${db}.db`, table);

/** A URI scheme (two letters or more, so a Windows drive letter is not one). */
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]+):/;

/**
 * A path Java recorded or was configured with (`_EXTERNAL_PATH` of a data or index file, an
 * absolute `data-file.path-directory`) as a local path: an absolute path as it is, a `file:` URI
 * (`file:/x`, `file:///x`, `file://localhost/x`) without its scheme. Java's `Path.toString()`
 * prints the path undecoded, so `%3A` in a partition directory's name stays as it is. Any other
 * scheme (s3, oss, hdfs…) is NotSupported naming it; `what` says whose path it is.
 */
export function localPathOf(text: string, what: string): string {
  const m = SCHEME.exec(text);
  if (m) {
    const scheme = m[1]!.toLowerCase();
    if (scheme !== 'file') throw notSupported(`${what} is at '${text}': only local paths and file: URIs are read here, not scheme '${m[1]}'`);
    const rest = text.slice(m[0].length);
    const auth = /^\/\/([^/]*)(\/.*)$/.exec(rest);
    if (auth) {
      if (auth[1] !== '' && auth[1]!.toLowerCase() !== 'localhost') throw notSupported(`${what} is at '${text}': a file: URI naming host '${auth[1]}' is not a local path`);
      return auth[2]!;
    }
    if (rest.startsWith('/')) return rest;
    throw notSupported(`${what} is at '${text}': expected an absolute path or a file: URI with one`);
  }
  if (!isAbsolute(text)) throw notSupported(`${what} is at '${text}': expected an absolute path or a file: URI`);
  return text;
}

export class TablePaths {
  readonly root: string;
  /**
   * The directory the partition and bucket directories are under: the root, or the table's
   * `data-file.path-directory` (Paimon's FileStorePathFactory.dataFilePath: `new Path(root, dir)`,
   * so an absolute one or a URI stands alone). Set by the Table from its schema (`setDataDirectory`).
   */
  private dataRoot: string;
  /** Why `dataRoot` cannot be read here (a directory on another file system), thrown by `bucketDir` only: the table still opens, its metadata reads. */
  private dataRootError: Error | undefined;
  constructor(root: string) {
    this.root = root;
    this.dataRoot = root;
  }
  /** `data-file.path-directory` of the table's schema (undefined: none). */
  setDataDirectory(dir: string | undefined): void {
    this.dataRootError = undefined;
    if (dir === undefined) this.dataRoot = this.root;
    else if (!SCHEME.test(dir) && !isAbsolute(dir)) this.dataRoot = join(this.root, dir);
    else {
      try {
        this.dataRoot = localPathOf(dir, "the data directory (option 'data-file.path-directory')");
      } catch (e) {
        this.dataRootError = e as Error;
      }
    }
  }
  get schemaDir(): string {
    return join(this.root, 'schema');
  }
  schemaFile(id: number): string {
    return join(this.root, 'schema', `schema-${id}`);
  }
  get snapshotDir(): string {
    return join(this.root, 'snapshot');
  }
  snapshotFile(id: number): string {
    return join(this.root, 'snapshot', `snapshot-${id}`);
  }
  get latestHint(): string {
    return join(this.root, 'snapshot', 'LATEST');
  }
  get earliestHint(): string {
    return join(this.root, 'snapshot', 'EARLIEST');
  }
  get manifestDir(): string {
    return join(this.root, 'manifest');
  }
  manifestFile(name: string): string {
    return join(this.root, 'manifest', name);
  }
  /** An index file (deletion vectors, hash index) the index manifest lists. */
  indexFile(name: string): string {
    return join(this.root, 'index', name);
  }
  get tagDir(): string {
    return join(this.root, 'tag');
  }
  tagFile(name: string): string {
    return join(this.root, 'tag', `tag-${name}`);
  }
  /** A table statistics file named by `Snapshot.statistics` (Java's ANALYZE writes them; this store never does). */
  statisticsFile(name: string): string {
    return join(this.root, 'statistics', name);
  }
  get lockFile(): string {
    return join(this.root, '.writer.lock');
  }
  /** `<partition path>/bucket-<b>` under the table's data directory ('' partition path when unpartitioned). */
  bucketDir(partitionPath: string, bucket: number): string {
    // Paimon's FileStorePathFactory.relativeBucketPath names the postpone bucket (-2) 'bucket-postpone'.
    const name = bucket === -2 ? 'bucket-postpone' : `bucket-${bucket}`;
    if (this.dataRootError) throw this.dataRootError;
    return partitionPath === '' ? join(this.dataRoot, name) : join(this.dataRoot, partitionPath, name);
  }
}

/**
 * Paimon's unique file names: `<prefix><uuid>-<n><ext>`, one uuid per writer instance and a
 * counter from 0 (DataFilePathFactory, FileStorePathFactory).
 */
export class FileNamer {
  private readonly uuid = randomUUID();
  private dataCounter = 0;
  private manifestCounter = 0;
  private listCounter = 0;

  dataFile(extension: string): string {
    return `data-${this.uuid}-${this.dataCounter++}.${extension}`;
  }
  /** A changelog file (`changelog-file.prefix` default); shares the data-file counter as Paimon's path factory does. */
  changelogFile(extension: string): string {
    return `changelog-${this.uuid}-${this.dataCounter++}.${extension}`;
  }
  manifest(): string {
    return `manifest-${this.uuid}-${this.manifestCounter++}`;
  }
  manifestList(): string {
    return `manifest-list-${this.uuid}-${this.listCounter++}`;
  }
}
