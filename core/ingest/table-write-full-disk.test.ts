// A table write that fails on the disk (ENOSPC from a flush) is not the event's fault. It became an
// `unfit_for_table` dead letter like a value the column cannot hold, and for an update that moves
// a row to another key (binding.ts retractionOfMovedKey) the old key's retraction could be taken
// and the new row not: the next commit, once the disk had room again, deleted the old key and the
// new one stayed missing until someone replayed the letter. Now such a failure stops ingest as a
// failed commit does (DESIGN.md, "Failure cases"): nothing more is committed in this run, the
// events stay journaled, and the reopen after the disk recovers applies each of them once.
// Through the real ingest path, with the table store's full-disk FileIO (core/lsm FullDiskIO).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Catalog, localFileIO, TableWriter, valueToJson } from '../lsm/index.ts';
import { FullDiskIO } from '../lsm/test-full-disk.ts';
import { ContractRegistry } from './contracts.ts';
import { Ingestor } from './ingestor.ts';
import { Journal } from './journal.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { OPERATIONS_JOBS, SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES } from './seed-tables.ts';

const T0 = Date.UTC(2026, 11, 6, 8, 0, 0);
const JOBS = 'tilstand/s1/events/operations/jobs';

let dir: string;
let io: FullDiskIO;
let journal: Journal;
let contracts: ContractRegistry;
let ingestor: Ingestor | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-table-write-full-disk-'));
  io = new FullDiskIO(localFileIO);
  journal = Journal.open(dir);
  contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
});

afterEach(() => {
  ingestor?.abandon();
  ingestor = undefined;
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

// work_queue with a write buffer of one byte: every write flushes, so a full disk fails the
// write that takes a row (the flush after the take), as a large buffer's last row would.
const TABLES = SEED_TABLES.map((t) => (t.name === 'work_queue' ? { ...t, options: { ...t.options, 'write-buffer-size': '1 b' } } : t));

function start(onWarning?: (m: string) => void): Ingestor {
  ingestor = Ingestor.open({
    site: 's1',
    catalog: new Catalog(join(dir, 'warehouse'), { fileIO: io }),
    database: 'site_s1',
    journal,
    contracts,
    bindings: [...SEED_BINDINGS],
    tables: TABLES,
    budgets: [],
    clock: () => T0,
    publishResync: () => undefined,
    ...(onWarning ? { onWarning } : {}),
  });
  return ingestor;
}

const jobImage = (job_id: string) => ({ job_id, status: 'released', capability: 'forklift', priority: 5 });

function jobEvent(seq: number, op: 'c' | 'u', before: object | null, after: object, version = 1): Buffer {
  return Buffer.from(JSON.stringify({ op, before, after, source: { module: 'operations', stream: 'jobs', seq }, ts_ms: T0, contract: { name: 'operations.jobs', version } }));
}

/** Every committed row of a table, in JSON form. */
function rows(table: string): Record<string, unknown>[] {
  const t = new Catalog(join(dir, 'warehouse')).getTable({ database: 'site_s1', table });
  const r = t.reader();
  try {
    return [...r.scan()].map((values) => Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, values[i])])));
  } finally {
    r.close();
  }
}

const jobIds = () => rows('work_queue').map((r) => `${r.job_id}@${r.ops_seq}`).sort();

describe('ingest: a table write that fails on a full disk', () => {
  it.each([
    ['a moved key (its retraction taken, then the flush failed)', jobEvent(2, 'u', jobImage('J-1'), jobImage('J-2')), ['J-2@2', 'J-3@3']],
    ['a new row', jobEvent(2, 'c', null, jobImage('J-2')), ['J-1@1', 'J-2@2', 'J-3@3']],
  ])('%s: no dead letter; ingest stops, commits nothing more, and the reopen after the disk recovers applies it once', async (_what, event, after) => {
    const warnings: string[] = [];
    const i = start((m) => warnings.push(m));
    await i.accept(JOBS, jobEvent(1, 'c', null, jobImage('J-1')));
    i.commitAll();
    expect(jobIds()).toEqual(['J-1@1']);

    io.full = true;
    await i.accept(JOBS, event);
    expect(i.deadLetterCount()).toBe(0);
    expect(i.listDeadLetters()).toEqual([]);
    expect(i.failure()?.message).toMatch(/^applying journal position 2: .*ENOSPC/);
    expect(i.health().failure).toMatch(/ENOSPC/);
    expect(warnings).toEqual([expect.stringMatching(/^ingest stopped applying \(applying journal position 2: .*ENOSPC.*reopen to recover$/)]);
    // Stopped: the next event is journaled (acknowledged), not applied; nothing commits.
    await i.accept(JOBS, jobEvent(3, 'c', null, jobImage('J-3')));
    io.full = false;
    expect(() => i.commitAll()).toThrow(/ingestor stopped/);
    i.tick();
    i.close();
    expect(jobIds()).toEqual(['J-1@1']); // the retraction never reached a snapshot without its row
    expect(rows('dead_letters')).toEqual([]);

    warnings.length = 0;
    const j = start((m) => warnings.push(m));
    j.commitAll();
    expect(j.failure()).toBeNull();
    expect(jobIds()).toEqual(after);
    expect(j.deadLetterCount()).toBe(0);
    expect(rows('dead_letters')).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it("a dead letter's replay that fails on the disk stops ingest too: the letter stays open with its own reason, and a replay after the reopen writes it", async () => {
    const i = start();
    await i.accept(JOBS, jobEvent(1, 'c', null, jobImage('J-1')));
    await i.accept(JOBS, jobEvent(2, 'u', jobImage('J-1'), jobImage('J-2'), 2)); // v2 not registered yet
    i.commitAll();
    expect(jobIds()).toEqual(['J-1@1']);
    contracts.register({ ...OPERATIONS_JOBS, version: 2 });
    io.full = true;
    await expect(i.replayDeadLetters()).rejects.toThrow(/ENOSPC/);
    expect(i.failure()?.message).toMatch(/^replaying dead letters: .*ENOSPC/);
    io.full = false;
    i.close();
    expect(jobIds()).toEqual(['J-1@1']);
    expect(rows('dead_letters').map((d) => [d.status, d.reason])).toEqual([['open', 'no_contract']]);

    const j = start();
    expect((await j.replayDeadLetters()).replayed).toBe(1);
    expect(jobIds()).toEqual(['J-2@2']);
    expect(j.deadLetterCount()).toBe(0);
  });

  it("an error that is not the table store's (a bug met on one event's values) stays that event's dead letter: stopping would stop every start on it", async () => {
    const i = start();
    await i.accept(JOBS, jobEvent(1, 'c', null, jobImage('J-1')));
    const real = TableWriter.prototype.writeRecord;
    const spy = vi.spyOn(TableWriter.prototype, 'writeRecord').mockImplementation(function (this: TableWriter, ...args: Parameters<TableWriter['writeRecord']>) {
      if (args[0].job_id === 'J-2') throw new TypeError('a bug met on J-2');
      return real.apply(this, args);
    });
    try {
      await i.accept(JOBS, jobEvent(2, 'c', null, jobImage('J-2')));
      await i.accept(JOBS, jobEvent(3, 'c', null, jobImage('J-3')));
    } finally {
      spy.mockRestore();
    }
    i.commitAll();
    expect(i.failure()).toBeNull();
    expect(jobIds()).toEqual(['J-1@1', 'J-3@3']);
    expect(i.listDeadLetters().map((d) => [d.reason, d.detail])).toEqual([['unfit_for_table', expect.stringMatching(/a bug met on J-2/)]]);
  });
});
