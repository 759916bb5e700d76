// Dismissing dead letters as a named user (dismiss.ts) on a real Ingestor: named letters are read
// by key, not found among every letter; many go in slices with a turn of the event loop between.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { ContractRegistry } from '../ingest/contracts.ts';
import { Ingestor } from '../ingest/ingestor.ts';
import { Journal } from '../ingest/journal.ts';
import { SEED_BINDINGS } from '../ingest/seed-bindings.ts';
import { SEED_CONTRACTS } from '../ingest/seed-contracts.ts';
import { SEED_TABLES } from '../ingest/seed-tables.ts';
import { Catalog, Table } from '../lsm/index.ts';
import { dismissAs } from './dismiss.ts';

let dir: string;
let journal: Journal;
let ingestor: Ingestor;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-dismiss-'));
  journal = Journal.open(dir);
  const contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
  ingestor = Ingestor.open({ site: 's1', catalog: new Catalog(join(dir, 'warehouse')), database: 'site_s1', journal, contracts, bindings: [...SEED_BINDINGS], tables: [...SEED_TABLES], budgets: [] });
});

afterEach(() => {
  ingestor.close();
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

it('dismisses many letters in slices with a turn of the event loop between, reading only the named ones, and logs the total', async () => {
  const topic = 'tilstand/s1/events/inventory/stock';
  const ps: bigint[] = [];
  for (let k = 0; k < 8; k++) ps.push(await ingestor.accept(topic, Buffer.from(`{garbage ${k}`)));
  const other = await ingestor.accept('tilstand/s1/events/commerce/reservations', Buffer.from('{garbage'));
  ingestor.commitAll();
  const lines: string[] = [];
  const slices = vi.spyOn(ingestor, 'dismissDeadLetters');
  const scans = vi.spyOn(Table.prototype, 'scanRows');
  let turned = false;
  setImmediate(() => (turned = true));
  const done = dismissAs(ingestor, [ps[0]!, ps[1]!, ps[2]!, ps[3]!, ps[4]!, 424_242n], 'Lena', 'vendor test', { log: (l) => lines.push(l), via: 'test' }, false, 4);
  expect(turned).toBe(false);
  expect(await done).toEqual({ dismissed: 5, notOpen: ['424242'], by: 'Lena', alike: 0 });
  expect(turned).toBe(true);
  expect(slices.mock.calls.map((c) => c[0].length)).toEqual([4, 2]);
  expect(scans).not.toHaveBeenCalled(); // named letters by key
  scans.mockRestore();
  expect(lines).toEqual(['dead letters: 5 dismissed by Lena (test): "vendor test"']);
  // Alike: the other open letters of that topic and reason, not the other topic's.
  slices.mockClear();
  expect(await dismissAs(ingestor, [ps[5]!], 'Lena', 'the rest of it', undefined, true, 2)).toEqual({ dismissed: 3, notOpen: [], by: 'Lena', alike: 2 });
  expect(slices).toHaveBeenCalledTimes(2);
  expect(ingestor.listDeadLetters({ status: 'open' }).map((d) => d.position)).toEqual([other]);
  expect(ingestor.deadLetterCount()).toBe(1);
});

it('does not name an alike letter someone else closed meanwhile as "not open": only named ones are', async () => {
  const topic = 'tilstand/s1/events/inventory/stock';
  const ps: bigint[] = [];
  for (let k = 0; k < 6; k++) ps.push(await ingestor.accept(topic, Buffer.from(`{garbage ${k}`)));
  ingestor.commitAll();
  const done = dismissAs(ingestor, [ps[0]!, 999_999n], 'Lena', 'all of it', undefined, true, 2);
  // Before the second slice (after the first turn of the event loop), another dismissal closes an alike one.
  setImmediate(() => ingestor.dismissDeadLetters([ps[4]!], 'Ada', 'meanwhile'));
  expect(await done).toEqual({ dismissed: 5, notOpen: ['999999'], by: 'Lena', alike: 5 });
  expect(ingestor.deadLetterCount()).toBe(0);
});
