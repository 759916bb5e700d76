// The run cache as a site uses it: one byte budget for every table of a Catalog (never above its
// capacity, least recently used evicted across tables), entries shared by path between Table
// objects, shaped by the schema they were read for, cleared per table; and the process-level
// write-buffer size a Catalog gives its tables.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import type { RunData } from './data-file.ts';
import { LsmError } from './errors.ts';
import { estimateRunBytes, RunCache, RunCacheBudget } from './run-cache.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';
import { mulberry32 as prng } from './testing/model.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'run-cache-'));
  dirs.push(d);
  return d;
}

const SPEC: SchemaSpec = {
  fields: [
    { name: 'item', type: 'STRING' },
    { name: 'qty', type: 'INT' },
  ],
  primaryKeys: ['item'],
  options: { bucket: '1' },
};

/** A table of `rows` rows in one data file. */
function filled(catalog: Catalog, name: string, rows: number): Table {
  catalog.createDatabase('db', true);
  const t = catalog.createTable({ database: 'db', table: name }, SPEC);
  const w = t.newWriter();
  for (let i = 0; i < rows; i++) w.writeRecord({ item: `${name}-${String(i).padStart(6, '0')}`, qty: i });
  w.commit();
  w.close();
  t.cache.clear(); // reads below decode from the file
  return t;
}

/** Reads every file of the table's latest snapshot through its cache. */
function readAll(t: Table): void {
  const snap = t.latestSnapshot()!;
  for (const b of t.buckets(snap)) for (const f of b.files) t.loadRun(b.partition, b.bucket, f);
}

function syntheticRun(rows: number): RunData {
  const keys = Array.from({ length: rows }, (_, i) => `k${i}`);
  return { rowCount: rows, keyCols: [keys], seq: keys.map((_, i) => i), kind: keys.map(() => 0), valueCols: [keys, keys.map((_, i) => i * 1.5)] };
}

describe('run cache budget', () => {
  it('never holds more than its capacity across views and evicts the least recently used (randomized, against a model)', () => {
    const seed = Number(process.env.RUN_CACHE_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`run-cache model test seed ${seed} (rerun with RUN_CACHE_SEED=${seed})`);
    const rnd = prng(seed);
    const runs = [10, 40, 80, 150, 400].map(syntheticRun);
    const sizes = runs.map(estimateRunBytes);
    const capacity = sizes[3]! + sizes[2]! + 1; // room for a few runs, never for all
    const budget = new RunCacheBudget(capacity);
    const views = ['/a/', '/b/', '/c/'].map((prefix) => ({ prefix, cache: new RunCache(budget, { prefix }) }));
    // The model: path → [bytes, last use]; LRU order by last use.
    const model = new Map<string, { bytes: number; used: number }>();
    let tick = 0;
    for (let step = 0; step < 2000; step++) {
      const v = views[Math.floor(rnd() * views.length)]!;
      const r = Math.floor(rnd() * runs.length);
      const path = `${v.prefix}f${r}`;
      const op = rnd();
      if (op < 0.8) {
        let loaded = false;
        const got = v.cache.get(path, () => ((loaded = true), runs[r]!));
        expect(got).toBe(runs[r]);
        const m = model.get(path);
        expect(loaded, `step ${step}: ${path} ${m ? 'should hit' : 'should miss'}`).toBe(m === undefined);
        if (m) m.used = ++tick;
        else if (sizes[r]! <= capacity) {
          model.set(path, { bytes: sizes[r]!, used: ++tick });
          let total = [...model.values()].reduce((s, e) => s + e.bytes, 0);
          while (total > capacity) {
            const [oldest, e] = [...model.entries()].reduce((a, b) => (b[1].used < a[1].used ? b : a));
            model.delete(oldest);
            total -= e.bytes;
          }
        }
      } else if (op < 0.95) {
        v.cache.drop(path);
        model.delete(path);
      } else {
        v.cache.clear();
        for (const p of [...model.keys()]) if (p.startsWith(v.prefix)) model.delete(p);
      }
      expect(budget.usedBytes, `step ${step}`).toBeLessThanOrEqual(capacity);
      expect([...budget.entries.keys()].sort(), `step ${step}`).toEqual([...model.keys()].sort());
      expect(budget.usedBytes).toBe([...model.values()].reduce((s, e) => s + e.bytes, 0));
      for (const w of views) expect(w.cache.usedBytes).toBe([...model].filter(([p]) => p.startsWith(w.prefix)).reduce((s, [, e]) => s + e.bytes, 0));
    }
  });

  it('gives every table of a catalog one budget: reading a second table evicts the first', () => {
    const probe = new Catalog(tempDir());
    const one = estimateRunBytes(readRun(filled(probe, 'p', 2000)));
    const catalog = new Catalog(tempDir(), { cacheBytes: Math.floor(one * 1.5) }); // one table's file, not two
    const a = filled(catalog, 'a', 2000);
    const b = filled(catalog, 'b', 2000);
    expect(a.cache.budget).toBe(catalog.cacheBudget);
    expect(b.cache.budget).toBe(catalog.cacheBudget);
    readAll(a);
    expect(a.cache.usedBytes).toBeGreaterThan(0);
    readAll(b);
    expect(catalog.cacheBudget.usedBytes).toBeLessThanOrEqual(catalog.cacheBudget.capacityBytes);
    expect(a.cache.usedBytes).toBe(0);
    expect(b.cache.usedBytes).toBe(catalog.cacheBudget.usedBytes);
    // A catalog of its own keeps its own budget.
    expect(new Catalog(tempDir()).cacheBudget).not.toBe(catalog.cacheBudget);
  });

  it('shares a decoded file between Table objects of one catalog, and clear() forgets only its own table', () => {
    const catalog = new Catalog(tempDir());
    const a = filled(catalog, 'a', 100);
    const b = filled(catalog, 'b', 100);
    readAll(a);
    readAll(b);
    const again = catalog.getTable({ database: 'db', table: 'a' });
    readAll(again);
    expect(again.cache.misses).toBe(0);
    expect(again.cache.hits).toBe(1);
    again.cache.clear();
    expect(a.cache.usedBytes).toBe(0);
    expect(b.cache.usedBytes).toBeGreaterThan(0);
  });

  it('does not give a table a run shaped for another schema of the same file', () => {
    const catalog = new Catalog(tempDir());
    const old = filled(catalog, 't', 10);
    const altered = catalog.getTable({ database: 'db', table: 't' });
    altered.alter([{ kind: 'addColumn', name: 'note', type: 'STRING' }]);
    expect(old.scanRows()[0]).toEqual(['t-000000', 0]); // cached with schema 0's two columns
    expect(altered.scanRows()[0]).toEqual(['t-000000', 0, null]);
    expect(old.scanRows()[0]).toEqual(['t-000000', 0]);
  });

  it('refuses a capacity that is not a whole number of bytes, naming cacheBytes, before writing anything', () => {
    for (const bad of [-1, 1.5, Number.NaN]) {
      const dir = tempDir();
      expect(() => new Catalog(dir, { cacheBytes: bad })).toThrow(LsmError);
      expect(() => new Catalog(dir, { cacheBytes: bad })).toThrow(`catalog ${dir}: expected cacheBytes to be a whole number of bytes ≥ 0, got ${bad}`);
      expect(() => new RunCacheBudget(bad)).toThrow(`expected cacheBytes to be a whole number of bytes ≥ 0, got ${bad}`);
      const t = join(dir, 't');
      expect(() => Table.create(t, TableSchema.fromSpec(SPEC, 0), { cacheBytes: bad })).toThrow(`table ${t}: expected cacheBytes`);
      expect(readdirSync(dir)).toEqual([]); // no schema-0 left behind
    }
  });
});

describe('estimateRunBytes', () => {
  it('counts a string that repeats in a column once, as a decode shares it', () => {
    const n = 1000;
    const keys = Array.from({ length: n }, (_, i) => `item-${String(i).padStart(6, '0')}`);
    const run = (location: (i: number) => string): RunData => {
      const loc = keys.map((_, i) => location(i));
      return { rowCount: n, keyCols: [keys, loc], seq: keys.map((_, i) => i), kind: keys.map(() => 0), valueCols: [keys, loc] };
    };
    const cycling = estimateRunBytes(run((i) => `LOC-0${i % 5}`)); // five values, each one object
    const distinct = estimateRunBytes(run((i) => i.toString(36).padStart(6, '0'))); // as long, all different
    expect(distinct - cycling).toBe((n - 5) * (24 + 6));
  });
});

describe('writeBufferBytes', () => {
  const files = (t: Table) => readdirSync(join(t.paths.root, 'bucket-0')).filter((n) => n.startsWith('data-')).length;

  it('flushes the write buffer at its size, in this process only (never written into a schema)', () => {
    const small = new Catalog(tempDir(), { writeBufferBytes: 16 * 1024 });
    const t = filled(small, 't', 2000); // ~2000 × ≥ 150 B of buffer: several flushes before the commit
    expect(files(t)).toBeGreaterThan(3);
    expect(t.schema.options.writeBufferBytes).toBe(16 * 1024);
    expect(JSON.parse(readFileSync(t.paths.schemaFile(0), 'utf8')).options['write-buffer-size']).toBeUndefined();
    t.alter([{ kind: 'setOption', key: 'snapshot.num-retained.min', value: '20' }]);
    expect(JSON.parse(readFileSync(t.paths.schemaFile(1), 'utf8')).options['write-buffer-size']).toBeUndefined();
    expect(t.schema.options.writeBufferBytes).toBe(16 * 1024); // still overridden after the ALTER
    expect(t.schema.options.snapshotsRetainedMin).toBe(20);
    // Without the override the table's own option (Paimon's 256 mb default) holds: one file.
    const plain = filled(new Catalog(tempDir()), 'p', 2000);
    expect(files(plain)).toBe(1);
  });

  it('refuses a size that is not a positive whole number of bytes, naming writeBufferBytes, before writing anything', () => {
    for (const bad of [0, 2.5, -4]) {
      const dir = tempDir();
      expect(() => new Catalog(dir, { writeBufferBytes: bad })).toThrow(`catalog ${dir}: expected writeBufferBytes to be a whole number of bytes ≥ 1, got ${bad}`);
      const t = join(dir, 't');
      expect(() => Table.create(t, TableSchema.fromSpec(SPEC, 0), { writeBufferBytes: bad })).toThrow(`table ${t}: expected writeBufferBytes`);
      expect(readdirSync(dir)).toEqual([]);
    }
  });
});

function readRun(t: Table): RunData {
  const snap = t.latestSnapshot()!;
  const b = t.buckets(snap)[0]!;
  return t.loadRun(b.partition, b.bucket, b.files[0]!);
}
