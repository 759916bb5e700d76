// Opens the ingest half of a site from its data directory and config: the journal, the contract
// registry (seed contracts registered; re-registering is a no-op), the catalog (with the config's
// memory budget), the disk budget
// and the Ingestor (which creates missing tables, dead_letters included, and replays the journal
// after the lowest committed position). Used by `tilstand init` (open and close: the tables
// exist afterwards) and by Site.start.
//
// Invariant: on failure nothing stays open.

import { Catalog } from '../lsm/index.ts';
import { ContractRegistry } from '../ingest/contracts.ts';
import { Ingestor, DEFAULT_CHECKPOINT_NAME } from '../ingest/ingestor.ts';
import { DiskBudget, Journal } from '../ingest/journal.ts';
import { SEED_CONTRACTS } from '../ingest/seed-contracts.ts';
import { SEED_TABLES } from '../ingest/seed-tables.ts';
import { catalogOptions, configBindings, dataPaths, ingestBudgets, type SiteConfig } from './config.ts';

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
  clock?: () => number;
}

/** The journal checkpoint holding the lowest committed position (prune's keepAfter). */
export const INGEST_CHECKPOINT = DEFAULT_CHECKPOINT_NAME;

export function openIngest(data: string, config: SiteConfig, o: OpenIngestOptions = {}): IngestParts {
  const p = dataPaths(data, config.site);
  const contracts = new ContractRegistry(p.contracts);
  for (const c of SEED_CONTRACTS) contracts.register(c);
  // One run-cache budget and one write-buffer size for every table of the site (config `memory`).
  const catalog = new Catalog(p.warehouse, catalogOptions(config));
  const journal = Journal.open(data, o.clock ? { nowMs: o.clock } : {});
  try {
    const diskBudget = new DiskBudget({ journal, journalBytesMax: config.diskBudget.journalBytesMax, diskFreeBytesMin: config.diskBudget.diskFreeBytesMin });
    const ingestor = Ingestor.open({
      site: config.site,
      catalog,
      database: p.database!,
      journal,
      contracts,
      bindings: [...configBindings(config)],
      tables: [...SEED_TABLES],
      budgets: ingestBudgets(config),
      diskBudget,
      checkpointName: INGEST_CHECKPOINT,
      ...(o.clock ? { clock: o.clock } : {}),
      ...(o.publishResync ? { publishResync: o.publishResync } : {}),
      ...(o.onWarning ? { onWarning: o.onWarning } : {}),
    });
    return { journal, contracts, catalog, diskBudget, ingestor };
  } catch (e) {
    journal.close();
    throw e;
  }
}
