// A data file's key and value statistics (writeDataFile) equal min/max/null count by the types'
// comparators over every row, whichever shortcut computed them: inline `<` for integer-like
// types, skipping repeated values, the first key column's first and last rows, and a value column
// reusing the figures of the key column it repeats. Values are chosen to trip the shortcuts:
// -0 and 0 and NaN in DOUBLE, surrogate pairs vs U+E000–U+FFFF in strings (UTF-16 order differs
// from code-point order there), bigints, nulls. Random: prints its seed; replay with
// DATA_FILE_STATS_SEED=<seed>.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deserializeBinaryRow } from './binary-row.ts';
import { Catalog } from './catalog.ts';
import { writeDataFile, type RunData } from './data-file.ts';
import { RowKind } from './key-value.ts';
import { comparatorFor, withNullable, type DataType } from './types.ts';
import { mulberry32 } from './testing/model.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function expected(type: DataType, values: unknown[]): [unknown, unknown, number] {
  const cmp = comparatorFor(withNullable(type, false));
  let min: unknown = null;
  let max: unknown = null;
  let nulls = 0;
  for (const v of values) {
    if (v === null || v === undefined) nulls++;
    else {
      if (min === null || cmp(v, min) < 0) min = v;
      if (max === null || cmp(v, max) > 0) max = v;
    }
  }
  return [min, max, nulls];
}

describe('data file statistics', () => {
  const seed = Number(process.env.DATA_FILE_STATS_SEED ?? Date.now() % 1_000_000);
  console.log(`data-file-stats seed ${seed} (DATA_FILE_STATS_SEED=${seed} to replay)`);

  it('equal min, max and null counts by the comparators over every row', () => {
    const dir = mkdtempSync(join(tmpdir(), 'data-file-stats-'));
    dirs.push(dir);
    const catalog = new Catalog(join(dir, 'wh'));
    catalog.createDatabase('db', true);
    const table = catalog.createTable(
      { database: 'db', table: 't' },
      {
        fields: [
          { name: 'k1', type: 'STRING NOT NULL' },
          { name: 'k2', type: 'DOUBLE NOT NULL' },
          { name: 's', type: 'STRING' },
          { name: 'd', type: 'DOUBLE' },
          { name: 'i', type: 'INT' },
          { name: 'b', type: 'BIGINT' },
          { name: 'ts', type: 'TIMESTAMP(6)' },
          { name: 'k2copy', type: 'DOUBLE' },
        ],
        primaryKeys: ['k1', 'k2'],
        partitionKeys: [],
        options: {},
      },
    );
    const schema = table.schema;
    const rnd = mulberry32(seed);
    const strs = ['a', 'b', '\uE000x', '\uFFFF', '\u{1F600}', '\u{10000}a', 'zz', ''];
    const dbls = [0, -0, 1.5, -2, Number.NaN, 3];
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const cmpKey = comparatorFor(schema.fields[0]!.type);
    const cmpK2 = comparatorFor(schema.fields[1]!.type);
    for (let trial = 0; trial < 30; trial++) {
      const keySet = new Map<string, [string, number]>();
      const n = 1 + Math.floor(rnd() * 40);
      for (let i = 0; i < n; i++) {
        const k: [string, number] = [pick(strs), pick([0, -0, 1, 2, -1])];
        keySet.set(`${k[0]}|${Object.is(k[1], -0) ? '-0' : k[1]}`, k);
      }
      const keys = [...keySet.values()].sort((x, y) => cmpKey(x[0], y[0]) || cmpK2(x[1], y[1]));
      const m = keys.length;
      const maybe = <T,>(v: T): T | null => (rnd() < 0.3 ? null : v);
      const valueCols: unknown[][] = [
        keys.map((k) => k[0]),
        keys.map((k) => k[1]),
        keys.map(() => maybe(pick(strs))),
        keys.map(() => maybe(pick(dbls))),
        keys.map(() => maybe(Math.floor(rnd() * 200) - 100)),
        keys.map(() => maybe(BigInt(Math.floor(rnd() * 2e6) - 1e6) * 1_000_000_007n)),
        keys.map(() => maybe(Math.floor(rnd() * 1e15))),
        // Equal to the k2 key column but for 0 vs -0: must not take its figures.
        keys.map((k) => (k[1] === 0 && rnd() < 0.5 ? (Object.is(k[1], -0) ? 0 : -0) : k[1])),
      ];
      const run: RunData = {
        rowCount: m,
        keyCols: [keys.map((k) => k[0]), keys.map((k) => k[1])],
        seq: keys.map((_, i) => i),
        kind: keys.map(() => RowKind.INSERT),
        valueCols,
      };
      const meta = writeDataFile({ fileIO: table.fileIO, schema, bucketDir: table.paths.bucketDir('', 0), fileName: `data-stats-${trial}.parquet`, run, level: 0, fileSource: 0, creationTimeMs: 0 });
      const check = (types: DataType[], cols: unknown[][], stats: typeof meta.keyStats) => {
        const t = types.map((x) => withNullable(x, true));
        const want = types.map((ty, c) => expected(ty, cols[c]!));
        const ctx = `seed ${seed} trial ${trial}`;
        expect(deserializeBinaryRow(t, stats.minValues, 'min'), ctx).toEqual(want.map((w) => w[0]));
        expect(deserializeBinaryRow(t, stats.maxValues, 'max'), ctx).toEqual(want.map((w) => w[1]));
        expect(stats.nullCounts, ctx).toEqual(want.map((w) => w[2]));
      };
      check(schema.keyTypes as DataType[], run.keyCols, meta.keyStats);
      check(schema.fields.map((f) => f.type), valueCols, meta.valueStats);
    }
  });
});
