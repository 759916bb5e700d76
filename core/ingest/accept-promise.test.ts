// `accept` is not an async function (bench/README.md, "The full Ingestor's extra cost"): it must
// still answer only by its promise — a failure before the journal is a rejection, never a throw
// to the broker's handler — and apply the event before that promise resolves.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { ContractRegistry } from './contracts.ts';
import { Ingestor } from './ingestor.ts';
import { Journal } from './journal.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES } from './seed-tables.ts';

const SITE = 's1';
const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);
const TOPIC = `tilstand/${SITE}/events/inventory/stock`;

let dir: string;
let journal: Journal;
let clockFails: boolean;
let ing: Ingestor;

const inv = (seq: number, qty: number) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after: { item: 'i1', location: 'A1', qty }, source: { module: 'inventory', stream: 'stock', seq }, ts_ms: T0, contract: { name: 'inventory.stock', version: 1 } }));
const pending = () => ing.status().find((s) => s.table === 'stock')!.pendingEvents;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-accept-'));
  journal = Journal.open(dir);
  const contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
  clockFails = false;
  ing = Ingestor.open({
    site: SITE,
    catalog: new Catalog(join(dir, 'warehouse')),
    database: 'site_s1',
    journal,
    contracts,
    bindings: [...SEED_BINDINGS],
    tables: [...SEED_TABLES],
    budgets: [],
    clock: () => {
      if (clockFails) throw new Error('clock is gone');
      return T0;
    },
  });
});

afterEach(() => {
  ing.abandon();
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Ingestor.accept', () => {
  it('applies the event before its promise resolves', async () => {
    const seen: number[] = [];
    const a = ing.accept(TOPIC, inv(1, 5)).then((p) => seen.push(Number(p), pending()));
    const b = ing.accept(TOPIC, inv(2, 6)).then((p) => seen.push(Number(p), pending()));
    expect(pending()).toBe(0);
    await Promise.all([a, b]);
    // Each resolves with its position once its event is applied (the group's later events may be too).
    expect(seen[0]).toBe(1);
    expect(seen[1]).toBeGreaterThanOrEqual(1);
    expect(seen.slice(2)).toEqual([2, 2]);
  });

  it('rejects, never throws, when it is closed, its clock fails or the journal refuses', async () => {
    clockFails = true;
    let p: Promise<bigint> | undefined;
    expect(() => (p = ing.accept(TOPIC, inv(1, 5)))).not.toThrow();
    await expect(p).rejects.toThrow(/^clock is gone$/);
    clockFails = false;

    const append = journal.append;
    journal.append = () => {
      throw new Error('append threw');
    };
    expect(() => (p = ing.accept(TOPIC, inv(1, 5)))).not.toThrow();
    await expect(p).rejects.toThrow(/^append threw$/);
    journal.append = append;

    // The journal's own refusal (a payload that is not a Buffer) rejects, and nothing is applied.
    await expect(ing.accept(TOPIC, 'text' as unknown as Buffer)).rejects.toThrow(/payload must be a Buffer/);
    expect(pending()).toBe(0);
    expect(await ing.accept(TOPIC, inv(1, 5))).toBe(1n);
    expect(pending()).toBe(1);

    ing.close();
    expect(() => (p = ing.accept(TOPIC, inv(2, 6)))).not.toThrow();
    await expect(p).rejects.toThrow(/^ingestor is closed$/);
  });
});
