// A deferred compaction of dead_letters that fails in a slice (a full disk while it writes its
// output) is given up with a warning in the site's log, as a commit's maintenance failure is
// (core/lsm CommitResult.maintenanceError): the letters are committed, and the next commit plans
// the compaction again. It stopped ingest until a restart, over a disk that may have room again.
// A damaged file met there still stops it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog, ForwardingFileIO, LocalFileIO, LsmError } from '../lsm/index.ts';
import { ContractRegistry } from './contracts.ts';
import { DEAD_LETTERS_TABLE_NAME } from './dead-letters.ts';
import { Ingestor } from './ingestor.ts';
import { Journal } from './journal.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES } from './seed-tables.ts';

const T0 = Date.UTC(2026, 11, 6, 8, 0, 0);
const JOBS = 'tilstand/s1/events/operations/jobs';

/** Fails every data file written into dead_letters' directory while `failing` is set. */
class FailingLettersIO extends ForwardingFileIO {
  failing: LsmError | undefined;
  override writeNew(path: string, data: Uint8Array): void {
    if (this.failing && path.includes(`/${DEAD_LETTERS_TABLE_NAME}/`) && path.slice(path.lastIndexOf('/') + 1).startsWith('data-')) throw this.failing;
    super.writeNew(path, data);
  }
}

let dir: string;
let journal: Journal;
let io: FailingLettersIO;
let warnings: string[];
let ingestor: Ingestor | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-letters-compaction-'));
  journal = Journal.open(dir);
  io = new FailingLettersIO(new LocalFileIO());
  warnings = [];
});

afterEach(() => {
  ingestor?.abandon();
  ingestor = undefined;
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(): Ingestor {
  const contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
  ingestor = Ingestor.open({
    site: 's1',
    catalog: new Catalog(join(dir, 'warehouse'), { fileIO: io }),
    database: 'site_s1',
    journal,
    contracts,
    bindings: [...SEED_BINDINGS],
    tables: [...SEED_TABLES],
    budgets: [],
    clock: () => T0,
    publishResync: () => undefined,
    onWarning: (m) => warnings.push(m),
  });
  return ingestor;
}

/** An event of a contract version nobody registered: a dead letter. */
const refused = (seq: number) =>
  Buffer.from(JSON.stringify({ op: 'c', before: null, after: { job_id: `J-${seq}`, status: 'released', capability: 'forklift', priority: 5 }, source: { module: 'operations', stream: 'jobs', seq }, ts_ms: T0, contract: { name: 'operations.jobs', version: 9 } }));

/** Lets the slices scheduled so far run (each from setImmediate). */
const turns = async (n: number) => {
  for (let k = 0; k < n; k++) await new Promise((r) => setImmediate(r));
};

/**
 * Commits a letter at a time (each a level-0 run of dead_letters), the disk failing with `failure`
 * only while the slices after the commit run, until a slice met it (a warning names it). Returns
 * the letters committed.
 */
async function commitsUntilASliceFails(i: Ingestor, failure: LsmError): Promise<number> {
  for (let seq = 1; seq <= 20; seq++) {
    await i.accept(JOBS, refused(seq));
    i.commitAll();
    // The disk fails until a slice met it, or the slices ran dry: a loaded machine's slice (8 ms)
    // may only decode in the first turns and write in a later one, which then found the disk well
    // and compacted (the test failed under the full suite's load).
    io.failing = failure;
    for (let k = 0; k < 200 && !warnings.some((w) => w.includes(failure.message)); k++) await turns(1);
    io.failing = undefined;
    if (warnings.some((w) => w.includes(failure.message))) return seq;
  }
  throw new Error('no compaction slice of dead_letters ran in 20 commits');
}

/** The commit kinds of dead_letters' retained snapshots, oldest first. */
function letterCommitKinds(): string[] {
  const t = new Catalog(join(dir, 'warehouse')).getTable({ database: 'site_s1', table: DEAD_LETTERS_TABLE_NAME });
  return t.snapshots.listIds().map((id) => t.snapshots.get(id).commitKind);
}

describe('dead_letters: a compaction slice that fails', () => {
  it('on a full disk is a warning; ingest goes on, and the next commit compacts again', async () => {
    const i = start();
    const n = await commitsUntilASliceFails(i, new LsmError('IOError', 'write failed: ENOSPC: no space left on device'));
    expect(warnings.filter((w) => w.includes('ENOSPC'))).toEqual([expect.stringMatching(/^ingest: compacting table .*dead_letters failed: write failed: ENOSPC.*the next commit tries again/)]);
    expect(letterCommitKinds()).not.toContain('COMPACT');
    // Ingest goes on: the next letter is committed, and its commit plans the compaction again.
    await i.accept(JOBS, refused(n + 1));
    i.commitAll();
    expect(i.deadLetterCount()).toBe(n + 1);
    await turns(50);
    expect(letterCommitKinds()).toContain('COMPACT');
  });

  it('on a damaged file stops ingest, as a commit does', async () => {
    const i = start();
    await commitsUntilASliceFails(i, new LsmError('Corruption', 'corruption in a file: bad bytes'));
    expect(warnings.join('\n')).toMatch(/ingest stopped applying \(compacting table .*dead_letters/);
    expect(() => i.commitAll()).toThrow(/ingestor stopped/);
  });
});
