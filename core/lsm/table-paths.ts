// Every on-disk name of a table, in one place (leveldb's filename.h): the layout of Paimon's
// filesystem catalog, `<warehouse>/<db>.db/<table>/`, and the names inside a table directory.

import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

export const databaseDir = (warehouse: string, db: string): string => join(warehouse, `${db}.db`);
export const tableDir = (warehouse: string, db: string, table: string): string => join(warehouse, `${db}.db`, table);

export class TablePaths {
  readonly root: string;
  constructor(root: string) {
    this.root = root;
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
  /** `<partition path>/bucket-<b>` relative to the table root ('' partition path when unpartitioned). */
  bucketDir(partitionPath: string, bucket: number): string {
    // Paimon's FileStorePathFactory.relativeBucketPath names the postpone bucket (-2) 'bucket-postpone'.
    const name = bucket === -2 ? 'bucket-postpone' : `bucket-${bucket}`;
    return partitionPath === '' ? join(this.root, name) : join(this.root, partitionPath, name);
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
