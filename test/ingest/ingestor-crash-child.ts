// Child process of ingestor.crash.test.ts: runs an Ingestor on a data directory and accepts events
// from stdin (`<index>\t<topic>\t<payload json>` per line), printing `ack <index>` once each is
// durable (what a PUBACK would mean). `close` commits and exits. The parent kill -9s it at random.
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { Catalog } from '../../core/lsm/index.ts';
import { ContractRegistry } from '../../core/ingest/contracts.ts';
import { Ingestor } from '../../core/ingest/ingestor.ts';
import { Journal } from '../../core/ingest/journal.ts';
import { SEED_BINDINGS } from '../../core/ingest/seed-bindings.ts';
import { SEED_CONTRACTS } from '../../core/ingest/seed-contracts.ts';
import { SEED_TABLES } from '../../core/ingest/seed-tables.ts';
import { CRASH_BUDGETS, LEDGER_BINDINGS, LEDGER_TABLE } from './ingestor-crash-tables.ts';

const dataDir = process.argv[2]!;
const journal = Journal.open(dataDir);
const contracts = new ContractRegistry(join(dataDir, 'contracts'));
for (const c of SEED_CONTRACTS) contracts.register(c);
const ingestor = Ingestor.open({
  site: 's1',
  catalog: new Catalog(join(dataDir, 'warehouse')),
  database: 'site_s1',
  journal,
  contracts,
  bindings: [...SEED_BINDINGS, ...LEDGER_BINDINGS],
  tables: [...SEED_TABLES, LEDGER_TABLE],
  budgets: CRASH_BUDGETS,
  onWarning: (m) => process.stderr.write(`${m}\n`),
});
const timer = setInterval(() => ingestor.tick(), 10);
process.stdout.write(`ready ${ingestor.health().recoveredEvents}\n`);

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line === 'close') {
    clearInterval(timer);
    ingestor.close();
    journal.close();
    process.stdout.write('closed\n', () => process.exit(0));
    return;
  }
  const [index, topic, payload] = line.split('\t') as [string, string, string];
  ingestor.accept(topic, Buffer.from(payload)).then(
    () => process.stdout.write(`ack ${index}\n`),
    (e) => process.stderr.write(`accept ${index} failed: ${(e as Error).message}\n`),
  );
});
