// Opens the ingest half of a site from its data directory and config: the journal, the contract
// registry (seed contracts registered; re-registering is a no-op), the catalog (with the config's
// memory budget), the disk budget
// and the Ingestor (which creates missing tables, dead_letters included, and replays the journal
// after the lowest committed position). Used by `tilstand init` (open and close: the tables
// exist afterwards) and by Site.start. On a site `tilstand restore` rebuilt, an empty journal
// first continues after the highest position its tables hold.
//
// Invariant: on failure nothing stays open. The data format mark is raised first (data-format.ts).

import { Catalog } from '../lsm/index.ts';
import { ContractRegistry } from '../ingest/contracts.ts';
import { Ingestor, DEFAULT_CHECKPOINT_NAME, type IngestorCarry } from '../ingest/ingestor.ts';
import { DiskBudget, Journal } from '../ingest/journal.ts';
import { readProgress } from '../ingest/progress.ts';
import { SEED_CONTRACTS } from '../ingest/seed-contracts.ts';
import { SEED_TABLES } from '../ingest/seed-tables.ts';
import { checkNewTable, describeChanges, evolveToDefinition } from '../ingest/site-tables.ts';
import { readRestoreNote } from '../sync/restore.ts';
import { catalogOptions, configBindings, dataPaths, ingestBudgets, siteTableDefinitions, type SiteConfig } from './config.ts';
import { raiseDataFormat } from './data-format.ts';

export interface IngestParts {
  journal: Journal;
  contracts: ContractRegistry;
  catalog: Catalog;
  diskBudget: DiskBudget;
  ingestor: Ingestor;
}

export interface OpenIngestOptions {
  publishResync?: (module: string, stream: string, fromSeq: number) => void;
  onWarning?: (message: string) => void;
  /** The Ingestor's notes an operator waits for (a long journal read at open). */
  onInfo?: (message: string) => void;
  clock?: () => number;
  /** A resume in place: the stopped Ingestor's counts, which the new one goes on from (core/ingest `carryOver`). */
  carried?: IngestorCarry;
}

/** The journal checkpoint holding the lowest committed position (prune's keepAfter). */
export const INGEST_CHECKPOINT = DEFAULT_CHECKPOINT_NAME;

export function openIngest(data: string, config: SiteConfig, o: OpenIngestOptions = {}): IngestParts {
  // The data format mark before the journal or a table is opened: the Ingestor creates and alters
  // tables (a schema change is a migration), and a directory a newer program requires is refused.
  raiseDataFormat(data);
  const p = dataPaths(data, config.site);
  const contracts = new ContractRegistry(p.contracts);
  for (const c of SEED_CONTRACTS) contracts.register(c);
  // One run-cache budget and one write-buffer size for every table of the site (config `memory`).
  const catalog = new Catalog(p.warehouse, catalogOptions(config));
  const journal = Journal.open(data, o.clock ? { nowMs: o.clock } : {});
  try {
    // A site `tilstand restore` rebuilt starts with an empty journal under tables that hold
    // positions of the old PC's journal: numbered from 1 again, its first events would be taken,
    // table by table, for ones a table holds, and skipped. The Ingestor continues after the tables
    // only when every one of them is ahead of the journal; a table HQ did not have (new in
    // config.json since, never synced) starts at 0 and would keep it from doing so.
    if (journal.lastPosition() === 0n && readRestoreNote(data) !== undefined) journal.continueAfter(highestPosition(catalog, p.database!));
    const diskBudget = new DiskBudget({ journal, journalBytesMax: config.diskBudget.journalBytesMax, diskFreeBytesMin: config.diskBudget.diskFreeBytesMin });
    const ingestor = openIngestor(config, { journal, contracts, catalog, diskBudget }, o);
    return { journal, contracts, catalog, diskBudget, ingestor };
  } catch (e) {
    journal.close();
    throw e;
  }
}

/**
 * A new Ingestor on the parts of an open ingest half (the same journal, contracts, catalog and
 * disk budget): what `openIngest` opens, and what a site's resume in place after a failure opens
 * again once the stopped one released the tables (site.ts `resumeIngest`; core/ingest DESIGN.md).
 * It replays the journal after each table's committed position.
 */
export function openIngestor(config: SiteConfig, parts: Omit<IngestParts, 'ingestor'>, o: OpenIngestOptions = {}): Ingestor {
  return Ingestor.open(ingestorOptions(config, parts, o));
}

/**
 * `openIngestor` with the journal's read in slices, turns of the event loop between (core/ingest
 * `openInSlices`): a site's resume in place, which answers meanwhile.
 */
export function openIngestorInSlices(config: SiteConfig, parts: Omit<IngestParts, 'ingestor'>, o: OpenIngestOptions, s: Parameters<typeof Ingestor.openInSlices>[1]): Promise<Ingestor> {
  return Ingestor.openInSlices(ingestorOptions(config, parts, o), s);
}

function ingestorOptions(config: SiteConfig, parts: Omit<IngestParts, 'ingestor'>, o: OpenIngestOptions): Parameters<typeof Ingestor.open>[0] {
  const { journal, contracts, catalog, diskBudget } = parts;
  return {
    site: config.site,
    catalog,
    database: dataPaths('', config.site).database!,
    journal,
    contracts,
    bindings: [...configBindings(config)],
    tables: [...SEED_TABLES, ...siteTableDefinitions(config)],
    budgets: ingestBudgets(config),
    diskBudget,
    checkpointName: INGEST_CHECKPOINT,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.publishResync ? { publishResync: o.publishResync } : {}),
    ...(o.onWarning ? { onWarning: o.onWarning } : {}),
    ...(o.onInfo ? { onInfo: o.onInfo } : {}),
    ...(o.carried ? { carried: o.carried } : {}),
  };
}

/**
 * Checks, without changing anything, that each table of the site's own that exists already can be
 * brought to its definition, as the Ingestor does at start (core/ingest evolveToDefinition): `tilstand
 * config check` refuses what `start` would, and says what start will change. Throws core/ingest's
 * TableDefinitionError naming the entry.
 */
export function checkSiteTablesOnDisk(data: string, config: SiteConfig): { table: string; exists: boolean; changes: string; warnings: string[] }[] {
  const p = dataPaths(data, config.site);
  const catalog = new Catalog(p.warehouse, catalogOptions(config));
  const defs = siteTableDefinitions(config);
  const exists = defs.map((def) => catalog.tableExists({ database: p.database!, table: def.name }));
  // A new table given an option value only an earlier version took is refused, as the Ingestor refuses it (core/ingest checkNewTable).
  for (const [i, def] of defs.entries()) if (!exists[i]) checkNewTable(def);
  return defs.map((def, i) => {
    if (!exists[i]) return { table: def.name, exists: false, changes: '', warnings: [] };
    // Warnings as start logs them (an option value an earlier version made the table with).
    const warnings: string[] = [];
    const changes = describeChanges(evolveToDefinition(catalog.getTable({ database: p.database!, table: def.name }), def, false, (m) => warnings.push(m)));
    return { table: def.name, exists: true, changes, warnings };
  });
}

/** The highest journal position any table of `database` holds (core/ingest progress.ts); 0 for none. */
function highestPosition(catalog: Catalog, database: string): bigint {
  let high = 0n;
  if (!catalog.databaseExists(database)) return high;
  for (const name of catalog.listTables(database)) {
    const table = catalog.getTable({ database, table: name });
    if (!table.latestSnapshot()) continue;
    const f = readProgress(table.committedProperties(), table.name).position;
    if (f > high) high = f;
  }
  return high;
}
