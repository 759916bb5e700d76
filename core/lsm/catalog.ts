// A warehouse directory laid out as Paimon's filesystem catalog: `<warehouse>/<db>.db/<table>/`.
// Databases are directories; a table exists when its `schema/` holds a schema file.

import { statSync } from 'node:fs';
import { join } from 'node:path';
import { invalidArgument, LsmError, notFound } from './errors.ts';
import { localFileIO, type FileIO } from './file-io.ts';
import { checkName } from './partition-path.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { RunCacheBudget } from './run-cache.ts';
import { checkOpenOptions, DEFAULT_CACHE_BYTES, Table, type TableOpenOptions } from './table.ts';
import { databaseDir, tableDir } from './table-paths.ts';

/**
 * Is `path` a directory? FileIO does not say (every FileIO here reads the local disk: LocalFileIO
 * and those that wrap or extend it), so the disk is asked.
 */
function isDirectory(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}

export interface Identifier {
  database: string;
  table: string;
}

/** Parses `<db>.<table>`. */
export function parseIdentifier(text: string): Identifier {
  const i = typeof text === 'string' ? text.indexOf('.') : -1;
  if (i <= 0 || i === text.length - 1 || text.indexOf('.', i + 1) >= 0) {
    throw invalidArgument(`expected a table name of the form <database>.<table>, got '${text}'`);
  }
  const id = { database: text.slice(0, i), table: text.slice(i + 1) };
  checkName('database', id.database);
  checkName('table', id.table);
  return id;
}

export class Catalog {
  readonly warehouse: string;
  private readonly io: FileIO;
  private readonly tableOptions: TableOpenOptions;

  /** The run cache budget every table opened here draws on (`cacheBytes`, default 256 MiB). */
  readonly cacheBudget: RunCacheBudget;

  constructor(warehouse: string, o: TableOpenOptions = {}) {
    this.warehouse = warehouse;
    this.io = o.fileIO ?? localFileIO;
    checkOpenOptions(o, `catalog ${warehouse}`);
    this.cacheBudget = o.cacheBudget ?? new RunCacheBudget(o.cacheBytes ?? DEFAULT_CACHE_BYTES);
    this.tableOptions = { ...o, cacheBudget: this.cacheBudget };
  }

  /**
   * The `<name>.db` directories, as Java's catalog lists them (directories only): a file named so
   * (journal.db, site.db of a data directory given as the warehouse) is no database.
   */
  listDatabases(): string[] {
    return this.io
      .list(this.warehouse)
      .filter((n) => n.endsWith('.db') && n.length > 3 && isDirectory(join(this.warehouse, n)))
      .map((n) => n.slice(0, -3))
      .sort();
  }

  databaseExists(db: string): boolean {
    checkName('database', db);
    const path = databaseDir(this.warehouse, db);
    return this.io.exists(path) && isDirectory(path);
  }

  createDatabase(db: string, ignoreIfExists = false): void {
    checkName('database', db);
    if (this.databaseExists(db)) {
      if (ignoreIfExists) return;
      throw new LsmError('AlreadyExists', `database '${db}' already exists`);
    }
    this.io.mkdirs(databaseDir(this.warehouse, db));
  }

  /** Drops a database; with `cascade` its tables too, otherwise it must be empty. */
  dropDatabase(db: string, cascade = false): void {
    if (!this.databaseExists(db)) throw notFound(`database '${db}' does not exist`);
    const tables = this.listTables(db);
    if (tables.length > 0 && !cascade) throw invalidArgument(`database '${db}' is not empty (${tables.length} tables); drop with cascade`);
    this.io.removeDir(databaseDir(this.warehouse, db));
  }

  listTables(db: string): string[] {
    if (!this.databaseExists(db)) throw notFound(`database '${db}' does not exist`);
    const dir = databaseDir(this.warehouse, db);
    return this.io.list(dir).filter((t) => this.io.list(join(dir, t, 'schema')).some((n) => n.startsWith('schema-'))).sort();
  }

  tableExists(id: Identifier): boolean {
    checkName('database', id.database);
    checkName('table', id.table);
    return this.io.list(join(tableDir(this.warehouse, id.database, id.table), 'schema')).some((n) => n.startsWith('schema-'));
  }

  createTable(id: Identifier, spec: SchemaSpec | TableSchema, ignoreIfExists = false): Table {
    if (!this.databaseExists(id.database)) throw notFound(`database '${id.database}' does not exist`);
    checkName('table', id.table);
    const schema = spec instanceof TableSchema ? spec : TableSchema.fromSpec(spec, (this.tableOptions.clock ?? Date.now)());
    if (this.tableExists(id)) {
      if (ignoreIfExists) return this.getTable(id);
      throw new LsmError('AlreadyExists', `table '${id.database}.${id.table}' already exists`);
    }
    return Table.create(tableDir(this.warehouse, id.database, id.table), schema, { ...this.tableOptions, name: `${id.database}.${id.table}` });
  }

  getTable(id: Identifier): Table {
    if (!this.tableExists(id)) throw notFound(`table '${id.database}.${id.table}' does not exist`);
    return Table.open(tableDir(this.warehouse, id.database, id.table), { ...this.tableOptions, name: `${id.database}.${id.table}` });
  }

  dropTable(id: Identifier): void {
    if (!this.tableExists(id)) throw notFound(`table '${id.database}.${id.table}' does not exist`);
    this.io.removeDir(tableDir(this.warehouse, id.database, id.table));
  }
}
