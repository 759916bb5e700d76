// KeptTables: a process's Table objects, one per table of a database, kept from call to call and
// checked at each for what would make them stale (a newer schema, a drop, another process's writes
// while no writer of this process held the table's lock). core/site and core/inbox read through it.

import type { Catalog } from './catalog.ts';
import type { Table } from './table.ts';
import { heldInThisProcess } from './writer-lock.ts';

/**
 * The tables of one database, one Table object per table kept for the process: the running
 * site's reads for the floor UI and `tilstand status` (core/site SiteService `tables`, `tags`,
 * `history`, `diff`, a proposal's columns; Site.status's row counts) and the tables the inbox's
 * decisions tag (core/inbox `evidenceTable`). A Table opened afresh starts with empty tag and
 * snapshot caches and decodes its manifests again: the Tables screen, read again at each commit while it is open, read every tag
 * file of every table at each call (≈ 700 tags × 5 tables: 3,500 reads, 90–160 ms CPU). A kept
 * Table sees the commits and tags of the ingest writer, the agent, the inbox and other processes
 * (DESIGN.md "What the caches rely on": the tag cache is checked at every listing, the
 * latest snapshot read from disk). Opened again when the latest schema on disk is another than
 * its own (an ALTER: its `schema` and readers are the one it was opened with), forgotten when the
 * table is gone and asked for, or no longer listed (`retain`). Costs one listing of the table's
 * `schema/` per call, as `Catalog.tableExists` did before each open, and one read of its writer
 * lock.
 *
 * Its snapshot cache is sound only while a writer of this process holds the table's lock without
 * a break (expire.ts reasons the same way): otherwise — a table the site does not write,
 * or ingest stopped and its writers released — another process may have rolled the table back and
 * committed again under the same ids, expired snapshots the cache still holds, or dropped the
 * table and made it again. Then each call drops the table's snapshot caches (they are read again
 * from disk; the tags stay cached, checked as always) and opens the table again when its schema
 * file is no longer the one it was opened with.
 */
export class KeptTables {
  private readonly kept = new Map<string, { table: Table; lock: Buffer | undefined; schema: Buffer | undefined }>();

  constructor(
    private readonly catalog: Catalog,
    private readonly database: string,
  ) {}

  /** The table `name`, or undefined when the database has none by that name. */
  get(name: string): Table | undefined {
    const kept = this.kept.get(name);
    if (kept !== undefined) {
      const latest = kept.table.latestSchemaIdOnDisk();
      if (latest === kept.table.schema.id && this.stillSound(kept)) return kept.table;
      this.kept.delete(name);
      if (latest < 0) return undefined;
    }
    const id = { database: this.database, table: name };
    if (!this.catalog.tableExists(id)) return undefined;
    const table = this.catalog.getTable(id);
    const { fileIO, paths } = table;
    this.kept.set(name, { table, lock: fileIO.readFileIfExists(paths.lockFile), schema: fileIO.readFileIfExists(paths.schemaFile(table.schema.id)) });
    return table;
  }

  /**
   * Forgets every kept table not among `names`: for a caller that lists the database's tables and
   * asks only for those listed (core/sync's engine, each round). `get` forgets a table only when it
   * is asked for one that is gone, so a table dropped by another process (the CLI's drop) stayed
   * kept — its Table with its parsed tags and cached manifests — for the process's life.
   */
  retain(names: Iterable<string>): void {
    const listed = new Set(names);
    for (const name of this.kept.keys()) if (!listed.has(name)) this.kept.delete(name);
  }

  /** The names of the tables kept now (for tests and diagnostics). */
  keptNames(): string[] {
    return [...this.kept.keys()];
  }

  /**
   * Whether `kept` may be used as it is: true at once while the lock held at the last call is still
   * held, by a writer of this process; else its snapshot caches are dropped, and it may be kept only
   * while its schema file is the one it was opened with (not a table dropped and made again).
   */
  private stillSound(kept: { table: Table; lock: Buffer | undefined; schema: Buffer | undefined }): boolean {
    const { fileIO, paths, snapshots } = kept.table;
    const lock = fileIO.readFileIfExists(paths.lockFile);
    const same = lock !== undefined && kept.lock !== undefined && lock.equals(kept.lock);
    kept.lock = lock;
    if (same && heldInThisProcess(paths.lockFile)) return true;
    const schema = fileIO.readFileIfExists(paths.schemaFile(kept.table.schema.id));
    if (schema === undefined || kept.schema === undefined || !schema.equals(kept.schema)) return false;
    snapshots.invalidate();
    return true;
  }
}
