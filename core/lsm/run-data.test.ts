// Decoded runs (data-file.ts's RunData): packed columns (typed arrays with a null bitmap) read back
// exactly what they were made of, key strings shared with their value columns, the lookup hash
// index (merge-reader.ts) agrees with the binary search, and tables of every packable type read
// the same through a packed run cache as what was written, across runs and after a reopen.
// Random tests print their seed; replay with RUN_DATA_SEED=<seed>.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import {
  BigInt64Column,
  BoolColumn,
  cell,
  columnArray,
  Float64Column,
  Int32BigIntColumn,
  Int32Column,
  packColumn,
  packKind,
  packSeq,
  packRun,
  PackedColumn,
  rowAt,
  type RunData,
} from './data-file.ts';
import { RowKind } from './key-value.ts';
import { findKeyCols, lookupIndexBytes, lookupKey } from './merge-reader.ts';
import { estimateRunBytes } from './run-cache.ts';
import { comparatorFor, parseType } from './types.ts';
import { mulberry32 } from './testing/model.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function seedFor(name: string): number {
  const env = process.env.RUN_DATA_SEED;
  const seed = env ? Number(env) : Math.floor(Math.random() * 2 ** 31);
  console.log(`${name}: seed ${seed} (replay with RUN_DATA_SEED=${seed})`);
  return seed;
}

/** Exact equality of cells: Object.is for numbers (-0, NaN), === otherwise. */
function sameCells(a: unknown[], b: unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x === 'number' && typeof y === 'number' ? !Object.is(x, y) : x !== y) return false;
  }
  return true;
}

describe('packed columns', () => {
  const cases: Array<[string, unknown[], (new (...a: never[]) => PackedColumn) | undefined]> = [
    ['int32 with nulls', [1, null, -2, 2147483647, -2147483648, null, 0], Int32Column],
    ['int32 without nulls', [5, 6, 7], Int32Column],
    ['leading nulls then ints', [null, null, 3], Int32Column],
    ['-0 goes to doubles', [1, -0, 2], Float64Column],
    ['doubles, NaN, infinities', [1.5, null, NaN, Infinity, -Infinity, 2 ** 53, -0, 1e-300], Float64Column],
    ['ints then a double', [1, 2, 3.25, null, 4], Float64Column],
    ['epoch microseconds (TIMESTAMP)', [1_700_000_000_000_000, null, -1], Float64Column],
    ['bigints, 64-bit extremes', [0n, -(2n ** 63n), 2n ** 63n - 1n, null, 42n], BigInt64Column],
    ['bigints within 32 bits go to an Int32Array', [0n, -(2n ** 31n), 2n ** 31n - 1n, null, 42n, -1n], Int32BigIntColumn],
    ['one bigint past 32 bits keeps 64', [1n, 2n ** 31n, null], BigInt64Column],
    ['one bigint below 32 bits keeps 64', [-(2n ** 31n) - 1n, 5n], BigInt64Column],
    ['a bigint of 2^32 + 1 (low half fits) keeps 64', [2n ** 32n + 1n, 1n], BigInt64Column],
    ['a bigint of -2^32 (low half 0) keeps 64', [-(2n ** 32n), 0n], BigInt64Column],
    ['a bigint beyond 64 bits stays an array', [1n, 2n ** 64n, null], undefined],
    ['booleans', [true, false, null, true], BoolColumn],
    ['strings stay an array', ['a', null, 'b'], undefined],
    ['bytes stay an array', [new Uint8Array([1]), null], undefined],
    ['mixed kinds stay an array', [1, 'x'], undefined],
    ['number then bigint stays an array', [1, 2n], undefined],
    ['all null stays an array', [null, null], undefined],
    ['empty', [], undefined],
  ];
  for (const [name, values, cls] of cases) {
    it(name, () => {
      const c = packColumn(values);
      if (cls === undefined) expect(c).toBe(values);
      else {
        expect(c).toBeInstanceOf(cls);
        const p = c as PackedColumn;
        expect(p.length).toBe(values.length);
        for (let i = 0; i < values.length; i++) expect(p.isNull(i)).toBe(values[i] === null);
      }
      const back = Array.from({ length: values.length }, (_, i) => cell(c, i));
      expect(sameCells(back, values)).toBe(true);
      expect(sameCells(columnArray(c), values)).toBe(true);
    });
  }

  it('random columns of every kind round-trip (seeded)', () => {
    const seed = seedFor('packed columns');
    const rnd = mulberry32(seed);
    const gens: Array<() => unknown> = [
      () => (Math.floor(rnd() * 2 ** 32) | 0),
      () => (rnd() - 0.5) * 1e12,
      () => BigInt.asIntN(64, BigInt(Math.floor(rnd() * 2 ** 53)) * BigInt(Math.floor(rnd() * 2 ** 20))),
      () => rnd() < 0.5,
    ];
    for (let t = 0; t < 200; t++) {
      const g = gens[t % gens.length]!;
      const nullRate = rnd() < 0.3 ? 0 : rnd();
      const n = Math.floor(rnd() * 300);
      const values = Array.from({ length: n }, () => (rnd() < nullRate ? null : g()));
      const c = packColumn(values);
      expect(sameCells(columnArray(c), values), `seed ${seed} trial ${t}`).toBe(true);
    }
  });

  it('packRun shares key arrays with their value columns and keeps the input', () => {
    const keys = ['a', 'b', 'c'];
    const run: RunData = {
      rowCount: 3,
      keyCols: [keys],
      seq: [1, 2, 3],
      kind: [0, 0, 0],
      valueCols: [[...keys], [1, null, 3], [10n, 20n, null]],
    };
    const p = packRun(run);
    expect(p.keyCols[0]).toEqual(keys);
    expect(p.valueCols[0]).toBe(p.keyCols[0]);
    expect(run.keyCols[0]).toBe(keys);
    expect(p.valueCols[1]).toBeInstanceOf(Int32Column);
    expect(p.valueCols[2]).toBeInstanceOf(Int32BigIntColumn);
    expect(p.seq).toBeInstanceOf(Int32Array);
    expect(p.kind).toBeInstanceOf(Uint8Array);
    expect(Array.from(p.seq)).toEqual([1, 2, 3]);
    expect(run.seq).toEqual([1, 2, 3]);
    expect(run.valueCols[1]).toEqual([1, null, 3]);
    expect(rowAt(p, 1)).toEqual(['b', null, 20n]);
    expect(rowAt(p, 2)).toEqual(['c', 3, null]);
    // A value column that differs from the key column is not shared.
    const q = packRun({ ...run, valueCols: [['a', 'b', 'x'], [1, 2, 3]] });
    expect(q.valueCols[0]).not.toBe(q.keyCols[0]);
    // Equal neighbouring key strings become one string object.
    const twins = [`x${1}`, `x${1}`, 'y'];
    const r = packRun({ ...run, keyCols: [twins], valueCols: [] });
    expect(r.keyCols[0]).toEqual(twins);
    // Packed is smaller in the cache's estimate than plain arrays of bigints (past a few rows of
    // typed-array overhead).
    const n = 100;
    const wide: RunData = { rowCount: n, keyCols: [], seq: Array.from({ length: n }, (_, i) => i), kind: new Array<number>(n).fill(0), valueCols: [Array.from({ length: n }, (_, i) => BigInt(i))] };
    expect(estimateRunBytes(packRun(wide))).toBeLessThan(estimateRunBytes(wide));
  });
});

describe('packed sequence numbers and kinds', () => {
  it('sequence numbers go to an Int32Array while every one fits, else stay as they are', () => {
    const small = [0, 1, 2 ** 31 - 1, 7];
    expect(packSeq(small)).toBeInstanceOf(Int32Array);
    expect(Array.from(packSeq(small))).toEqual(small);
    for (const big of [[0, 2 ** 31], [2 ** 40, 1], [Number.MAX_SAFE_INTEGER]]) expect(packSeq(big)).toBe(big);
  });

  it('kinds go to a Uint8Array', () => {
    const kinds = [RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE];
    expect(packKind(kinds)).toBeInstanceOf(Uint8Array);
    expect([...packKind(kinds)]).toEqual(kinds);
  });

  it('a run of typed sequence numbers and kinds counts their bytes, not 8 a row', () => {
    const n = 1000;
    const run: RunData = { rowCount: n, keyCols: [], seq: Array.from({ length: n }, (_, i) => i), kind: new Array<number>(n).fill(0), valueCols: [] };
    const packed = packRun(run);
    expect(estimateRunBytes(run) - estimateRunBytes(packed)).toBe(16 * n - 5 * n - 128);
  });
});

describe('lookup hash index', () => {
  function run(keyCols: unknown[][]): RunData {
    const n = keyCols[0]!.length;
    return { rowCount: n, keyCols, seq: new Array(n).fill(0), kind: new Array(n).fill(0), valueCols: [] };
  }
  /** Sorted unique keys of the given generators. */
  function sortedKeys(rnd: () => number, gens: Array<() => unknown>, cmps: ReturnType<typeof comparatorFor>[], n: number): unknown[][] {
    const rows: unknown[][] = Array.from({ length: n }, () => gens.map((g) => g()));
    const cmp = (a: unknown[], b: unknown[]) => {
      for (let k = 0; k < cmps.length; k++) {
        const r = cmps[k]!(a[k], b[k]);
        if (r !== 0) return r;
      }
      return 0;
    };
    rows.sort(cmp);
    const uniq = rows.filter((r, i) => i === 0 || cmp(rows[i - 1]!, r) !== 0);
    return gens.map((_, k) => uniq.map((r) => r[k]));
  }

  it('agrees with the binary search on random keys of every hashable kind (seeded)', () => {
    const seed = seedFor('hash index');
    const rnd = mulberry32(seed);
    const str = () => `K-${Math.floor(rnd() * 500)}${rnd() < 0.1 ? '\u00e9\ud83d\ude00' : ''}`;
    const int = () => Math.floor(rnd() * 2000) - 1000;
    const big = () => BigInt(Math.floor(rnd() * 2000) - 1000) * 4294967296n + BigInt(Math.floor(rnd() * 3));
    const bool = () => rnd() < 0.5;
    const shapes: Array<{ name: string; types: string[]; gens: Array<() => unknown> }> = [
      { name: 'string, string', types: ['STRING', 'STRING'], gens: [str, () => `L${Math.floor(rnd() * 5)}`] },
      { name: 'int', types: ['INT'], gens: [int] },
      { name: 'bigint', types: ['BIGINT'], gens: [big] },
      { name: 'boolean, int', types: ['BOOLEAN', 'INT'], gens: [bool, int] },
      { name: 'string, bigint, int', types: ['STRING', 'BIGINT', 'INT'], gens: [str, big, int] },
    ];
    for (const sh of shapes) {
      const cmps = sh.types.map((t) => comparatorFor(parseType(`${t} NOT NULL`)));
      const cols = sortedKeys(rnd, sh.gens, cmps, 1 + Math.floor(rnd() * 3000));
      const d = run(cols);
      let found = 0;
      for (let t = 0; t < 3000; t++) {
        // Half the probes are keys of the run (fresh string objects), half random (mostly absent).
        const probe =
          rnd() < 0.5
            ? cols.map((c, k) => {
                const v = c[Math.floor(rnd() * c.length)];
                return typeof v === 'string' ? ` ${v}`.slice(1) : v;
              })
            : sh.gens.map((g) => g());
        if (rnd() < 0.5) {
          const row = Math.floor(rnd() * d.rowCount);
          for (let k = 0; k < cols.length; k++) probe[k] = typeof cols[k]![row] === 'string' ? ` ${cols[k]![row]}`.slice(1) : cols[k]![row];
        }
        const want = findKeyCols(d, probe, cmps);
        const got = lookupKey(d, probe, cmps);
        expect(got, `seed ${seed}, shape ${sh.name}, probe ${String(probe)}`).toBe(want);
        if (want >= 0) found++;
      }
      expect(found).toBeGreaterThan(0);
      expect(lookupIndexBytes(d)).toBeGreaterThan(0);
    }
  });

  it('a slot whose hash tag matches but whose key differs is passed over (large run: few tag bits)', () => {
    // 2^21 rows leave 9 bits of hash tag per slot, so among 40,000 absent probes hundreds meet a
    // slot of another key with their tag: only the key comparison tells them apart.
    const n = 1 << 21;
    const keys = new Array<number>(n);
    for (let i = 0; i < n; i++) keys[i] = 2 * i;
    const cmps = [comparatorFor(parseType('INT NOT NULL'))];
    const d = run([keys]);
    for (let i = 0; i < 40; i++) lookupKey(d, [0], cmps);
    expect(lookupIndexBytes(d)).toBeGreaterThan(0);
    const seed = seedFor('hash tag');
    const rnd = mulberry32(seed);
    for (let t = 0; t < 40_000; t++) {
      const row = Math.floor(rnd() * n);
      expect(lookupKey(d, [2 * row + 1], cmps), `seed ${seed}, absent ${2 * row + 1}`).toBe(-1);
      if (t % 8 === 0) expect(lookupKey(d, [2 * row], cmps), `seed ${seed}, key ${2 * row}`).toBe(row);
    }
  });

  it('a probe of another kind than the column takes the binary search (same answer)', () => {
    const cmps = [comparatorFor(parseType('BIGINT NOT NULL'))];
    const d = run([[1n, 2n, 3n, 5n]]);
    for (let i = 0; i < 40; i++) lookupKey(d, [2n], cmps);
    expect(lookupIndexBytes(d)).toBeGreaterThan(0);
    expect(lookupKey(d, [3n], cmps)).toBe(2);
    expect(lookupKey(d, [4n], cmps)).toBe(-1);
    expect(lookupKey(d, [3], cmps)).toBe(findKeyCols(d, [3], cmps));
  });

  it('keys that cannot be hashed (doubles, bytes) use the binary search', () => {
    const cmps = [comparatorFor(parseType('DOUBLE NOT NULL'))];
    const d = run([[-1.5, 0, 2.25]]);
    for (let i = 0; i < 40; i++) expect(lookupKey(d, [2.25], cmps)).toBe(2);
    expect(lookupKey(d, [1], cmps)).toBe(-1);
    expect(lookupIndexBytes(d)).toBe(0);
  });
});

describe('tables read through packed runs', () => {
  const fields = [
    { name: 'k', type: 'STRING NOT NULL' },
    { name: 'n', type: 'INT NOT NULL' },
    { name: 'ti', type: 'TINYINT' },
    { name: 'si', type: 'SMALLINT' },
    { name: 'i', type: 'INT' },
    { name: 'b', type: 'BIGINT' },
    { name: 'f', type: 'FLOAT' },
    { name: 'd', type: 'DOUBLE' },
    { name: 'bo', type: 'BOOLEAN' },
    { name: 'dt', type: 'DATE' },
    { name: 'tm', type: 'TIME' },
    { name: 'ts', type: 'TIMESTAMP(6)' },
    { name: 'dec', type: 'DECIMAL(20, 2)' },
    { name: 's', type: 'STRING' },
    { name: 'by', type: 'BYTES' },
    { name: 'b32', type: 'BIGINT' },
  ];

  function randomRow(rnd: () => number, key: number): unknown[] {
    const nul = (v: unknown) => (rnd() < 0.3 ? null : v);
    return [
      `key-${String(key).padStart(5, '0')}`,
      key % 7,
      nul(Math.floor(rnd() * 256) - 128),
      nul(Math.floor(rnd() * 65536) - 32768),
      nul(Math.floor(rnd() * 2 ** 32) | 0),
      nul(BigInt(Math.floor(rnd() * 2 ** 53)) * (rnd() < 0.5 ? -1n : 1n) * 1000n),
      nul(Math.fround((rnd() - 0.5) * 1000)),
      nul(rnd() < 0.1 ? -0 : (rnd() - 0.5) * 1e6),
      nul(rnd() < 0.5),
      nul(Math.floor(rnd() * 40000)),
      nul(Math.floor(rnd() * 86_400_000)),
      nul(Math.floor(rnd() * 2 ** 50)),
      nul(BigInt(Math.floor(rnd() * 2 ** 53)) * 1000n),
      nul(`s${Math.floor(rnd() * 10)}`),
      nul(new Uint8Array([Math.floor(rnd() * 256)])),
      // Mostly within 32 bits (an Int32BigIntColumn), with the edges on both sides now and then.
      nul(rnd() < 0.05 ? [2n ** 31n - 1n, -(2n ** 31n), 2n ** 31n, -(2n ** 31n) - 1n][Math.floor(rnd() * 4)]! : BigInt(Math.floor(rnd() * 2 ** 20) - 2 ** 19)),
    ];
  }

  const canon = (rows: unknown[][]) =>
    rows.map((r) => r.map((v) => (v instanceof Uint8Array ? `bytes:${[...v]}` : typeof v === 'bigint' ? `${v}n` : Object.is(v, -0) ? '-0' : v)));

  for (const engine of ['deduplicate', 'partial-update'] as const) {
    it(`${engine}: scans, projections, filters and lookups equal the model over several runs, warm and after reopening (seeded)`, () => {
      const seed = seedFor(`tables ${engine}`);
      const rnd = mulberry32(seed);
      const dir = mkdtempSync(join(tmpdir(), 'run-data-'));
      dirs.push(dir);
      const catalog = new Catalog(dir);
      catalog.createDatabase('db');
      const table = catalog.createTable(
        { database: 'db', table: 't' },
        { fields, primaryKeys: ['k'], options: { bucket: '1', 'merge-engine': engine, 'num-sorted-run.compaction-trigger': '10', 'num-sorted-run.stop-trigger': '20' } },
      );
      const model = new Map<string, unknown[]>();
      for (let c = 0; c < 4; c++) {
        const w = table.newWriter();
        for (let t = 0; t < 150; t++) {
          const row = randomRow(rnd, Math.floor(rnd() * 300));
          const key = row[0] as string;
          if (engine === 'deduplicate' && rnd() < 0.1) {
            w.write(row, RowKind.DELETE);
            model.delete(key);
            continue;
          }
          w.write(row, RowKind.INSERT);
          if (engine === 'deduplicate') model.set(key, row);
          else {
            const old = model.get(key);
            model.set(key, old ? row.map((v, i) => (v === null ? old[i] : v)) : row);
          }
        }
        w.commit();
        w.close();
      }
      const expected = [...model.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map((e) => e[1]);
      const check = (t: typeof table, label: string) => {
        const r = t.reader();
        expect(canon([...r.scan()]), `${label} seed ${seed}`).toEqual(canon(expected));
        expect(canon([...r.scan({ projection: ['b', 'k', 'bo'] })]), `${label} seed ${seed}`).toEqual(canon(expected.map((x) => [x[5], x[0], x[8]])));
        const where = [{ column: 'i', op: '>' as const, value: 0 }];
        expect(canon([...r.scan({ where })]), `${label} seed ${seed}`).toEqual(canon(expected.filter((x) => x[4] !== null && (x[4] as number) > 0)));
        for (let t2 = 0; t2 < 400; t2++) {
          const key = `key-${String(Math.floor(rnd() * 320)).padStart(5, '0')}`;
          const got = r.get({ k: key });
          const want = model.get(key);
          expect(got === undefined ? undefined : canon([got])[0], `${label} seed ${seed} key ${key}`).toEqual(want === undefined ? undefined : canon([want])[0]);
        }
        r.close();
      };
      check(table, 'warm');
      check(catalog.getTable({ database: 'db', table: 't' }), 'reopened');
      const w = table.newWriter();
      w.compact(true);
      w.close();
      check(table, 'compacted');
      check(catalog.getTable({ database: 'db', table: 't' }), 'compacted, reopened');
    });
  }
});
