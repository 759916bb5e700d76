// Child process of new-table-letters.crash.test.ts: opens the Ingestor on a data directory whose
// journal holds yard/doors events that were dead-lettered as no_binding, now WITH the yard_doors
// table and its binding, so the open reads the journal into the new table, closes the letters and
// commits. Arguments: <dataDir> <order> <mode> [<k>].
//   order: `yard-first` (the site's order: its own tables, then dead_letters) or `letters-first`
//          (dead_letters given before yard_doors, so its commit at the end of the open comes first);
//   mode:  `open` (open, then close) or `replay` (open, `replayDeadLetters()` of what is still
//          open, then close);
//   k:     SIGKILL itself right after the k-th table commit of this process returns (a kill exactly
//          between two tables' commits, which a timed kill from outside hits only now and then).
// Prints `opening` just before the open, `opened <ms> <closed at open>` after it, `replayed <n>`,
// and `closed` before a clean exit. The parent SIGKILLs it at random moments in between.
import { join } from 'node:path';
import { Catalog, TableWriter } from '../../core/lsm/index.ts';
import { ContractRegistry } from '../../core/ingest/contracts.ts';
import { DEAD_LETTERS_TABLE } from '../../core/ingest/dead-letters.ts';
import { Ingestor } from '../../core/ingest/ingestor.ts';
import { Journal } from '../../core/ingest/journal.ts';
import { SEED_BINDINGS } from '../../core/ingest/seed-bindings.ts';
import { SEED_TABLES } from '../../core/ingest/seed-tables.ts';
import { LETTERS_SITE, YARD_BUDGETS, YARD_TABLE, YARD_BINDING, registerContracts } from './new-table-letters-tables.ts';

const [dataDir, order, mode, k] = process.argv.slice(2) as [string, string, string, string | undefined];
if (order !== 'yard-first' && order !== 'letters-first') throw new Error(`order: ${order}`);
if (mode !== 'open' && mode !== 'replay') throw new Error(`mode: ${mode}`);
if (k !== undefined) {
  const killAfter = Number(k);
  let commits = 0;
  const commit = TableWriter.prototype.commit;
  TableWriter.prototype.commit = function (this: TableWriter, ...args: Parameters<TableWriter['commit']>) {
    const r = commit.apply(this, args);
    if (++commits === killAfter) process.kill(process.pid, 'SIGKILL');
    return r;
  };
}

const journal = Journal.open(dataDir);
const contracts = new ContractRegistry(join(dataDir, 'contracts'));
registerContracts(contracts);
const write = (line: string) => new Promise<void>((res) => process.stdout.write(`${line}\n`, () => res()));

await write('opening');
const t0 = performance.now();
const ingestor = Ingestor.open({
  site: LETTERS_SITE,
  catalog: new Catalog(join(dataDir, 'warehouse')),
  database: `site_${LETTERS_SITE}`,
  journal,
  contracts,
  bindings: [...SEED_BINDINGS, YARD_BINDING],
  tables: order === 'yard-first' ? [...SEED_TABLES, YARD_TABLE] : [...SEED_TABLES, DEAD_LETTERS_TABLE, YARD_TABLE],
  budgets: YARD_BUDGETS,
  onWarning: (m) => process.stderr.write(`${m}\n`),
});
await write(`opened ${(performance.now() - t0).toFixed(1)} ${ingestor.health().lettersClosedAtOpen}`);
if (mode === 'replay') {
  const r = await ingestor.replayDeadLetters();
  await write(`replayed ${r.replayed}`);
}
ingestor.close();
journal.close();
await write('closed');
process.exit(0);
