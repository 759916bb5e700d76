// A replay of named dead letters (`ids`, with `alike` a whole flood) goes in slices with a turn of
// the event loop between them; ingest can stop (or the Ingestor close) during such a turn. The
// replay of every open letter and the dismissal check that ingest still runs at each slice; the
// named replay did not: its next slice wrote the letters' rows into the stopped Ingestor's table
// buffers (and a letter that failed again into dead_letters' buffer) before the commit refused.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { Catalog, TableWriter } from '../lsm/index.ts';
import { ContractRegistry } from './contracts.ts';
import { Ingestor } from './ingestor.ts';
import { Journal } from './journal.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { INVENTORY_STOCK, SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES } from './seed-tables.ts';

const T0 = Date.UTC(2026, 11, 7, 8, 0, 0);
const STOCK = 'tilstand/s1/events/inventory/stock';

let dir: string;
let journal: Journal;
let contracts: ContractRegistry;
let ingestor: Ingestor | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-replay-stopped-'));
  journal = Journal.open(dir);
  contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
});

afterEach(() => {
  vi.restoreAllMocks();
  ingestor?.abandon();
  ingestor = undefined;
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(): Ingestor {
  ingestor = Ingestor.open({
    site: 's1',
    catalog: new Catalog(join(dir, 'warehouse')),
    database: 'site_s1',
    journal,
    contracts,
    bindings: [...SEED_BINDINGS],
    tables: [...SEED_TABLES],
    budgets: [],
    clock: () => T0,
  });
  return ingestor;
}

const v2 = (seq: number) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after: { item: `I-${seq}`, location: 'L1', qty: seq, note: null }, source: { module: 'inventory', stream: 'stock', seq }, ts_ms: T0, contract: { name: 'inventory.stock', version: 2 } }));

/** Six no_contract letters of inventory (its v2 came before the site had it), and one of garbage; then v2 is added. */
async function letters(i: Ingestor): Promise<{ missing: bigint[]; garbage: bigint }> {
  const missing: bigint[] = [];
  for (let k = 1; k <= 6; k++) missing.push(await i.accept(STOCK, v2(k)));
  const garbage = await i.accept(STOCK, Buffer.from('{not json'));
  i.commitAll();
  expect(i.deadLetterCount()).toBe(7);
  contracts.register({ ...INVENTORY_STOCK, version: 2, fields: [...INVENTORY_STOCK.fields, { name: 'note', type: 'STRING', default: null }] });
  return { missing, garbage };
}

it('stops a named replay at the next slice once ingest stopped meanwhile, writing nothing more, with the error the others give', async () => {
  const i = start();
  const { missing, garbage } = await letters(i);
  const writes = vi.spyOn(TableWriter.prototype, 'writeRecord');
  let afterStop = -1;
  const progress: number[] = [];
  const replaying = i.replayDeadLetters([missing[0]!], {
    alike: true,
    slice: 2,
    onProgress: (p) => {
      progress.push(p.done);
      if (progress.length > 1) return;
      // During the turn before the next slice, someone dismisses the garbage letter and the disk
      // fails dead_letters' commit: ingest stops.
      setImmediate(() => {
        vi.spyOn(TableWriter.prototype, 'commit').mockImplementationOnce(() => {
          throw new Error('EIO: i/o error, write');
        });
        expect(() => i.dismissDeadLetters([garbage], 'Lena', 'a test message')).toThrow(/EIO/);
        expect(i.failure()?.message).toMatch(/^committing table dead_letters: EIO/);
        afterStop = writes.mock.calls.length;
      });
    },
  });
  await expect(replaying).rejects.toThrow(/^ingestor stopped: committing table dead_letters: EIO/);
  expect(progress).toEqual([2]);
  expect(afterStop).toBeGreaterThanOrEqual(0);
  expect(writes.mock.calls.length, 'no row written into the stopped Ingestor').toBe(afterStop);
  // The letters of the first slice were replayed; the rest stay open for the reopen's replay.
  expect(i.listDeadLetters({ status: 'replayed' }).map((d) => d.position)).toEqual(missing.slice(0, 2));
  // The same as the replay of every open letter, which checks at each slice.
  await expect(i.replayDeadLetters()).rejects.toThrow(/^ingestor stopped: committing table dead_letters: EIO/);
});

it('stops a named replay at the next slice once the Ingestor was closed meanwhile', async () => {
  const i = start();
  const { missing } = await letters(i);
  const replaying = i.replayDeadLetters([missing[0]!], {
    alike: true,
    slice: 2,
    onProgress: () => void setImmediate(() => i.close()),
  });
  await expect(replaying).rejects.toThrow(/^ingestor is closed$/);
  ingestor = undefined;
});
