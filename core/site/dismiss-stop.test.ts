// A stop in the middle of a dismissal of many dead letters (the floor UI's, which Site.stop does
// not wait for: service.ts NOT_WAITED_AT_STOP) loses and damages nothing. Each slice is one
// synchronous write and commit of dead_letters (Ingestor.dismissDeadLetters); the stop closes the
// ingestor (after its last commit) and the journal between two slices, never in one; the next
// slice is refused by the closed ingestor before it writes. What the log says was dismissed is
// what a reopened ingestor has dismissed, every other letter is still open, and no site.db is
// touched by the floor UI's dismissal (its user was checked before the first slice). Site.doStop's
// order is modelled here: commitAll, ingestor close, journal close.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ContractRegistry } from '../ingest/contracts.ts';
import { Ingestor } from '../ingest/ingestor.ts';
import { Journal } from '../ingest/journal.ts';
import { SEED_BINDINGS } from '../ingest/seed-bindings.ts';
import { SEED_CONTRACTS } from '../ingest/seed-contracts.ts';
import { SEED_TABLES } from '../ingest/seed-tables.ts';
import { Catalog } from '../lsm/index.ts';
import { dismissAs } from './dismiss.ts';

let dir: string;
const open = () => {
  const journal = Journal.open(dir);
  const contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
  const ingestor = Ingestor.open({ site: 's1', catalog: new Catalog(join(dir, 'warehouse')), database: 'site_s1', journal, contracts, bindings: [...SEED_BINDINGS], tables: [...SEED_TABLES], budgets: [] });
  return { journal, ingestor };
};
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-dismiss-stop-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('a stop between two slices of a dismissal keeps the slices done, leaves the rest open, and logs what was dismissed', async () => {
  const { journal, ingestor } = open();
  const topic = 'tilstand/s1/events/inventory/stock';
  const ps: bigint[] = [];
  for (let k = 0; k < 8; k++) ps.push(await ingestor.accept(topic, Buffer.from(`{garbage ${k}`)));
  ingestor.commitAll();
  const lines: string[] = [];
  const dismissal = dismissAs(ingestor, ps, 'Lena', 'a door state the contract lacks', { log: (l) => lines.push(l), via: 'floor UI' }, false, 3).then(
    () => 'finished',
    (e: Error) => `failed: ${e.message}`,
  );
  // Site.doStop's last steps, at the first turn of the event loop: after the first slice.
  setImmediate(() => {
    ingestor.commitAll();
    ingestor.close();
    journal.close();
  });
  expect(await dismissal).toMatch(/^failed: /);
  expect(lines).toEqual(['dead letters: 3 dismissed by Lena (floor UI): "a door state the contract lacks"']);
  const again = open();
  try {
    const all = again.ingestor.listDeadLetters({});
    expect(all.map((d) => [d.position, d.status])).toEqual(ps.map((p, i) => [p, i < 3 ? 'dismissed' : 'open']));
    expect(all.filter((d) => d.status === 'dismissed').every((d) => d.dismissed?.by === 'Lena' && d.dismissed.note === 'a door state the contract lacks')).toBe(true);
    expect(again.ingestor.deadLetterCount()).toBe(5);
    // The rest can be dismissed after the restart.
    expect(await dismissAs(again.ingestor, ps.slice(3), 'Lena', 'the rest')).toMatchObject({ dismissed: 5, notOpen: [] });
    expect(again.ingestor.deadLetterCount()).toBe(0);
  } finally {
    again.ingestor.close();
    again.journal.close();
  }
});
