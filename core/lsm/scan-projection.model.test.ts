// Projected scans decode only the columns they need (Table.loadRunProjected, table-read.ts
// scanColumns): for deduplicate (with and without sequence.field), partial-update (with and
// without sequence groups) and first-row, over several sorted runs with updates, deletes and
// nulls, a scan with a projection (and a predicate on a value column) returns exactly the
// projected columns of the full scan — from a cold cache (pruned runs) and from a warm one
// (whole runs) — and a whole-row scan after a pruned one is not served a pruned run. The seed is
// printed on failure; rerun with MODEL_SEED=<seed>.

import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { RowKind } from './key-value.ts';
import { PROJECTED_KEY } from './run-cache.ts';
import type { SchemaSpec } from './schema.ts';
import type { Predicate } from './table-read.ts';
import type { Table } from './table.ts';
import { modelDir, modelSettings, Rand, removeModelDirs, withSeed } from './testing/model.ts';

afterAll(removeModelDirs);

const FIELDS = [
  { name: 'k', type: 'STRING NOT NULL' },
  { name: 'a', type: 'INT' },
  { name: 'b', type: 'STRING' },
  { name: 'c', type: 'BIGINT' },
  { name: 'g1', type: 'INT' },
  { name: 'x', type: 'STRING' },
  { name: 'g2', type: 'INT' },
  { name: 'y', type: 'INT' },
];
const VALUES = ['a', 'b', 'c', 'g1', 'x', 'g2', 'y'];

interface Scenario {
  name: string;
  options: Record<string, string>;
  /** The kinds written besides +I. */
  kinds: RowKind[];
}

const SCENARIOS: Scenario[] = [
  { name: 'deduplicate', options: { 'merge-engine': 'deduplicate' }, kinds: [RowKind.UPDATE_AFTER, RowKind.DELETE] },
  { name: 'deduplicate with sequence.field', options: { 'merge-engine': 'deduplicate', 'sequence.field': 'c' }, kinds: [RowKind.UPDATE_AFTER, RowKind.DELETE] },
  { name: 'partial-update', options: { 'merge-engine': 'partial-update' }, kinds: [RowKind.UPDATE_AFTER] },
  {
    name: 'partial-update with sequence groups',
    options: { 'merge-engine': 'partial-update', 'fields.g1.sequence-group': 'x', 'fields.g2.sequence-group': 'y', 'partial-update.remove-record-on-delete': 'false' },
    kinds: [RowKind.UPDATE_AFTER, RowKind.UPDATE_BEFORE],
  },
  { name: 'first-row', options: { 'merge-engine': 'first-row' }, kinds: [] },
];

/** The table, and a way to open it afresh: a new catalog, so a cache of its own (cold). */
function make(sc: Scenario): { table: Table; fresh: () => Table } {
  const dir = modelDir('scan-projection');
  const catalog = new Catalog(dir);
  catalog.createDatabase('db');
  // write-only: each commit stays its own level-0 run, so every scan merges several.
  const spec: SchemaSpec = { fields: FIELDS, primaryKeys: ['k'], options: { bucket: '1', 'write-only': 'true', ...sc.options } };
  return { table: catalog.createTable({ database: 'db', table: 't' }, spec), fresh: () => new Catalog(dir).getTable({ database: 'db', table: 't' }) };
}

function fill(t: Table, sc: Scenario, r: Rand): void {
  const w = t.newWriter();
  try {
    for (let commit = 0; commit < 6; commit++) {
      for (let i = 0; i < 120; i++) {
        const kind = sc.kinds.length > 0 && r.chance(0.3) ? r.pick(sc.kinds) : RowKind.INSERT;
        const row: Record<string, unknown> = { k: `k${r.int(60)}` };
        // Partial rows: each value column present (possibly null) or absent.
        if (r.chance(0.7)) row.a = r.maybe(r.range(-50, 50));
        if (r.chance(0.7)) row.b = r.maybe(`s${r.int(30)}`);
        row.c = r.maybe(BigInt(r.range(0, 40)), 0.1);
        if (r.chance(0.6)) row.g1 = r.maybe(r.range(0, 20), 0.2);
        if (r.chance(0.6)) row.x = r.maybe(`x${r.int(10)}`);
        if (r.chance(0.6)) row.g2 = r.maybe(r.range(0, 20), 0.2);
        if (r.chance(0.6)) row.y = r.maybe(r.range(0, 9));
        w.writeRecord(row, kind);
      }
      w.commit();
    }
  } finally {
    w.close();
  }
}

const text = (rows: unknown[][]) => rows.map((x) => JSON.stringify(x, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)));

describe('projected scans', () => {
  for (const sc of SCENARIOS) {
    it(`${sc.name}: the projection of the full scan, cold and warm, and no pruned run for a whole-row scan`, () => {
      withSeed(sc.name, modelSettings(), (seed) => {
        const r = Rand.of(seed);
        const { table: t, fresh } = make(sc);
        fill(t, sc, r);
        const full = t.scanRows();
        const names = FIELDS.map((f) => f.name);
        for (let trial = 0; trial < 12; trial++) {
          const projection = ['k', ...VALUES.filter(() => r.chance(0.35))];
          if (projection.length === 1) projection.push(r.pick(VALUES));
          const where: Predicate[] = r.chance(0.5) ? [{ column: 'a', op: r.pick(['>=', '<'] as const), value: r.range(-20, 20) }] : [];
          const keepRow = (row: unknown[]) => where.every((p) => { const v = row[names.indexOf(p.column)] as number | null; return v !== null && (p.op === '>=' ? v >= (p.value as number) : v < (p.value as number)); });
          const expected = text(full.filter(keepRow).map((row) => projection.map((c) => row[names.indexOf(c)])));
          // Cold: a fresh handle on the table (its own cache) decodes pruned runs.
          const cold = fresh();
          expect(text(cold.scanRows({}, { projection, where })), `seed ${seed}: ${projection.join(',')} ${JSON.stringify(where)} cold`).toEqual(expected);
          // Warm: whole runs in the cache are used as they are.
          const warm = fresh();
          warm.scanRows();
          expect(text(warm.scanRows({}, { projection, where })), `seed ${seed}: warm`).toEqual(expected);
        }
        // A pruned run is cached apart from the whole run: a whole-row scan after one is exact.
        const after = fresh();
        after.scanRows({}, { projection: ['k', 'a'] });
        expect([...after.cache.budget.entries.keys()].some((k) => k.includes(PROJECTED_KEY)), `seed ${seed}: pruned runs were decoded`).toBe(true);
        expect(text(after.scanRows()), `seed ${seed}: whole rows after a pruned scan`).toEqual(text(full));
      }, 'core/lsm/scan-projection.model.test.ts');
    });
  }
});
