// Test-only harness of the randomized model tests (merge engines, aggregate functions, the lookup
// changelog). NOT for production code: nothing under core/lsm outside *.test.ts may import it.
//
//   - `rng(seed)`: a seeded xorshift32 PRNG; `Rand` wraps it with int/pick/maybe helpers.
//   - `modelSettings()`: seed and trial count from the environment. The seed is printed on
//     failure together with the line that replays it:
//       MODEL_SEED=<seed>     replay one seed (one trial)
//       MODEL_TRIALS=<n>      trials per scenario (default 1; 10 under TILSTAND_LONG=1)
//       MODEL_STEPS=<n>       operations per trial (default: the scenario's own count)
//   - `withSeed(name, settings, run)`: runs the trials, printing the seed of a failure.
//   - `runTableModel(scenario, seed, steps)`: the driver. Random batches of writes (+I/+U and the
//     scenario's retractions), commits, compactions (minor and full), tags, expirations, writer
//     reopens and point lookups, then compares the table with the scenario's in-memory model at
//     the latest snapshot, at a random retained earlier snapshot, at every tag (also after the
//     tagged snapshots expired) and after a final full compaction; every merged table (not
//     first-row, no deletion vectors) also with Java's read of its files (testing/java-read.ts)
//     by scan and `get` after every commit and compaction.
//
// The model of an engine is a `ModelFold`: the state of one key from its full history (every
// record written for the key, in write order), written plainly and independently of core/lsm/merge.
// A fold may throw `ModelError` to say "reading this key must fail with this error" (overflow).
// What a key reads is its fold, except where the files decide (`readOutcomes`): a key's lone
// record is read as it is, as Java reads it (merge/README.md, "A key's lone record"), and a
// bottom-level compaction may drop what folds to no row, so the key starts afresh there.

import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { Catalog } from '../catalog.ts';
import { RowKind } from '../key-value.ts';
import type { SchemaSpec } from '../schema.ts';
import type { Table } from '../table.ts';
import type { TableWriter } from '../table-writer.ts';
import { javaRead } from './java-read.ts';

// ------------------------------------------------------------------------------------------------
// Seeded randomness and settings.

/** xorshift32; never returns the same sequence for two seeds in 1..2^32-1. */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

export { mulberry32 } from './prng.ts';

export class Rand {
  constructor(readonly next: () => number) {}
  static of(seed: number): Rand {
    return new Rand(rng(seed));
  }
  /** 0..n-1 */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** lo..hi inclusive */
  range(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(a: readonly T[]): T {
    return a[Math.floor(this.next() * a.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** v, or null with probability pNull. */
  maybe<T>(v: T, pNull = 0.25): T | null {
    return this.next() < pNull ? null : v;
  }
  list<T>(max: number, f: () => T): T[] {
    return Array.from({ length: this.int(max + 1) }, f);
  }
}

export const LONG = process.env.TILSTAND_LONG === '1';

export interface ModelSettings {
  base: number;
  trials: number;
  /** Operation count override (MODEL_STEPS), else undefined. */
  steps: number | undefined;
}

export function modelSettings(): ModelSettings {
  const env = process.env;
  const replay = env.MODEL_SEED !== undefined && env.MODEL_SEED !== '';
  return {
    base: replay ? Number(env.MODEL_SEED) : (Date.now() % 1_000_000) + 1,
    trials: replay ? 1 : Number(env.MODEL_TRIALS ?? (LONG ? 10 : 1)),
    steps: env.MODEL_STEPS ? Number(env.MODEL_STEPS) : undefined,
  };
}

/** Runs `run(seed)` for each trial; a failure prints its seed and the replay command. */
export function withSeed(name: string, s: ModelSettings, run: (seed: number) => void, file?: string): void {
  for (let t = 0; t < s.trials; t++) {
    const seed = s.base + t * 7919;
    try {
      run(seed);
    } catch (e) {
      console.error(`model test '${name}' failed with seed ${seed} (replay: MODEL_SEED=${seed} npx vitest run ${file ?? '<file>'} -t '${name}')`);
      throw e;
    }
  }
}

const dirs: string[] = [];
/**
 * Where the tables go: tmpfs (/dev/shm) when there is one, since the store fsyncs every file and
 * fsync dominates the run time on disk; MODEL_DIR overrides; else the OS temporary directory.
 */
function modelRoot(): string {
  if (process.env.MODEL_DIR) return process.env.MODEL_DIR;
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}
/** A fresh temporary directory, removed by `removeModelDirs` (call it in afterAll). */
export function modelDir(tag: string): string {
  const d = mkdtempSync(join(modelRoot(), `tilstand-${tag}-`));
  dirs.push(d);
  return d;
}
export function removeModelDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

// ------------------------------------------------------------------------------------------------
// Rows, histories, folds.

export type Row = Record<string, unknown>;
export interface Rec {
  kind: number;
  row: Row;
  /** Write order over the whole trial. */
  order: number;
}
/** An engine's semantics, written plainly: the state of one key from its full history, or undefined (no row). */
export type ModelFold = (history: Rec[]) => Row | undefined;

/** Thrown by a fold: reading the key must fail with an error matching `pattern`. */
export class ModelError extends Error {
  constructor(readonly pattern: RegExp) {
    super(`model: expected error ${pattern}`);
  }
}

/** One ModelError accepting the message of any of `errors` (the table may hit any of them first). */
export function anyOf(errors: ModelError[]): ModelError {
  if (errors.length === 1) return errors[0]!;
  return new ModelError(new RegExp([...new Set(errors.map((e) => `(?:${e.pattern.source})`))].join('|')));
}

export const isRetract = (k: number): boolean => k === RowKind.DELETE || k === RowKind.UPDATE_BEFORE;
export const isNull = (v: unknown): v is null | undefined => v === null || v === undefined;

/** Canonical text of a row (by column names, or an array in schema order). */
export function normalize(row: Row | unknown[] | undefined, cols: string[]): string {
  if (row === undefined) return 'undefined';
  const o: Row = Array.isArray(row) ? Object.fromEntries(cols.map((c, i) => [c, row[i]])) : row;
  return JSON.stringify(
    cols.map((c) => o[c] ?? null),
    (_k, v) =>
      typeof v === 'bigint' ? `${v}n`
      : v instanceof Map ? { map: [...v] }
      : v instanceof Uint8Array ? { bytes: [...v] }
      : typeof v === 'number' && Object.is(v, -0) ? 0
      : v,
  );
}

// ------------------------------------------------------------------------------------------------
// What a key may read as.

/** One way a key may read: its row as `normalize` writes it ('undefined': no row), or an error. */
export type Outcome = { text: string; error?: undefined } | { error: ModelError; text?: undefined };

/**
 * What a key whose history is `h` may read as. The reader takes a key's lone record — its only
 * record in the files — as it is (Java's ReducerMergeFunctionWrapper): an add is its row as
 * written, a retraction no row. So where the files decide, so does the model:
 *   - a history of one record is that record alone in the files; its fold by the engine is also
 *     allowed, since some merges fold a lone record (compaction of a lone retraction, a lookup
 *     table's compaction of level 0, the writer's merge of pending runs);
 *   - a compaction to the bottom level drops a key whose records fold to no row (a tombstone, a
 *     retraction), and would drop a lone retraction as Java does: the key then starts afresh, and
 *     every such point of the history is a possible start (which one, only the layout knows).
 * Otherwise — one start, two records or more — the key reads as the fold of its history.
 */
export function readOutcomes(fold: ModelFold, h: readonly Rec[], cols: string[]): Outcome[] {
  const foldOf = (seg: Rec[]): Outcome => {
    try {
      return { text: normalize(fold(seg), cols) };
    } catch (e) {
      if (e instanceof ModelError) return { error: e };
      throw e;
    }
  };
  const starts = [0];
  for (let k = 0; k < starts.length && k < h.length + 1; k++) {
    const d = starts[k]!;
    for (let j = d + 1; j <= h.length; j++) {
      if (starts.includes(j)) continue;
      const seg = h.slice(d, j);
      const gone = seg.length === 1 ? isRetract(seg[0]!.kind) || foldOf(seg).text === 'undefined' : foldOf(seg).text === 'undefined';
      if (gone) starts.push(j);
    }
  }
  const out: Outcome[] = [];
  const seen = new Set<string>();
  const push = (o: Outcome) => {
    const id = o.text ?? `error ${o.error!.pattern.source}`;
    if (!seen.has(id)) {
      seen.add(id);
      out.push(o);
    }
  };
  for (const d of starts) {
    const seg = h.slice(d);
    if (seg.length === 0) push({ text: 'undefined' });
    else if (seg.length === 1) {
      push(isRetract(seg[0]!.kind) ? { text: 'undefined' } : { text: normalize(seg[0]!.row, cols) });
      push(foldOf(seg));
    } else push(foldOf(seg));
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// The table driver.

/** The key columns of every model table: `item`, `loc`, and `p` (the partition). */
export const KEY_FIELDS = [
  { name: 'item', type: 'STRING NOT NULL' },
  { name: 'loc', type: 'INT NOT NULL' },
  { name: 'p', type: 'INT NOT NULL' },
];
export const KEYS = ['item', 'loc', 'p'];

/** Small buffers and triggers, so a few hundred records make flushes, compactions and expirations. */
export const SMALL_TABLE = {
  bucket: '2',
  'write-buffer-size': '4 kb',
  'num-sorted-run.compaction-trigger': '3',
  'snapshot.num-retained.min': '2',
  'snapshot.time-retained': '1 s',
};

export interface Generated {
  kind: number;
  row: Row;
  /** The table must refuse the record at write time with this error (the model ignores it). */
  refused?: RegExp;
}

export interface TableScenario {
  name: string;
  /** Columns `item`, `loc`, `p` are the key (see KEY_FIELDS); `p` is usually the partition. */
  spec: SchemaSpec;
  fold: ModelFold;
  /** A random +I/+U row for `key`; `n` is the record's write order. */
  row: (r: Rand, key: Row, n: number) => Row;
  /** A random -U/-D (or a record the table must refuse) for `key`, or undefined for none. */
  retract?: (r: Rand, key: Row, n: number) => Generated;
  /** Share of writes that are retractions (default 0.18). */
  retractRate?: number;
  /** Distinct `item` values (default 12). */
  items?: number;
  /** Operations per trial unless MODEL_STEPS says otherwise. */
  steps?: number;
}

/** The error raised by `f`, or undefined. */
function errorOf(f: () => unknown): Error | undefined {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  return undefined;
}

/**
 * One trial of a scenario. Returns the number of records written (for sanity checks).
 * Ends early (successfully) after the first expected error, e.g. an overflow the model predicted.
 */
export function runTableModel(sc: TableScenario, seed: number, steps: number): number {
  const r = Rand.of(seed);
  const dir = modelDir('model');
  let now = 1_800_000_000_000;
  const catalog = new Catalog(dir, { clock: () => now });
  catalog.createDatabase('db');
  let table: Table = catalog.createTable({ database: 'db', table: 't' }, sc.spec);
  let writer: TableWriter = table.newWriter();
  const cols = sc.spec.fields.map((f) => f.name);
  const keyOf = (row: Row) => `${String(row.item)}|${String(row.loc)}|${String(row.p)}`;
  const copy = (m: Map<string, Rec[]>) => new Map([...m].map(([k, v]) => [k, [...v]]));
  let history = new Map<string, Rec[]>();
  let committed = new Map<string, Rec[]>();
  const tags = new Map<string, Map<string, Rec[]>>();
  /** Model state (as a history map) of every snapshot id made. */
  const snaps = new Map<number, Map<string, Rec[]>>();
  let order = 0;
  let written = 0;
  const items = sc.items ?? 12;
  const retractRate = sc.retract ? (sc.retractRate ?? 0.18) : 0;

  /** Per key of a history map, what it may read as (readOutcomes). */
  const modelOutcomes = (m: Map<string, Rec[]>): Map<string, Outcome[]> => new Map([...m].map(([k, h]) => [k, readOutcomes(sc.fold, h, cols)]));
  /**
   * The errors some key's read may raise, as one ModelError (the table reads keys in its own
   * order and may fail on any of them first), or undefined.
   */
  const modelErrors = (outs: Map<string, Outcome[]>): ModelError | undefined => {
    const errors: ModelError[] = [];
    for (const os of outs.values()) for (const o of os) if (o.error) errors.push(o.error);
    return errors.length > 0 ? anyOf(errors) : undefined;
  };
  /**
   * The model's rows for what the table read (`got`, by key): per key the outcome the table gave
   * when it is one of the key's, else the key's first — so a mismatch shows as a diff of rows.
   */
  const wantRows = (outs: Map<string, Outcome[]>, got: Map<string, string>): string[] => {
    const out: string[] = [];
    for (const [k, os] of outs) {
      const g = got.get(k) ?? 'undefined';
      const texts = os.filter((o) => o.text !== undefined).map((o) => o.text!);
      const t = texts.includes(g) ? g : (texts[0] ?? `an error (${os.map((o) => o.error?.pattern).join(' or ')})`);
      if (t !== 'undefined') out.push(t);
    }
    return out.sort();
  };
  const tableRows = (at: { tag?: string; snapshotId?: number } = {}) => table.scanRows(at).map((row) => normalize(row, cols)).sort();
  const byKeyText = (rows: unknown[][]): Map<string, string> => new Map(rows.map((row) => [keyOf(Object.fromEntries(cols.map((c, i) => [c, row[i]]))), normalize(row, cols)]));
  /** Compares; returns true when both agree on an expected error (the trial then ends). */
  const compare = (ctx: string, m: Map<string, Rec[]>, at: { tag?: string; snapshotId?: number } = {}): boolean => {
    const outs = modelOutcomes(m);
    let rows: unknown[][] = [];
    const err = errorOf(() => (rows = table.scanRows(at)));
    const errs = modelErrors(outs);
    if (err !== undefined) {
      if (errs === undefined) throw err;
      expect(err.message, `${ctx}: the model fails with ${errs.pattern}`).toMatch(errs.pattern);
      return true;
    }
    const got = byKeyText(rows);
    expect(rows.map((row) => normalize(row, cols)).sort(), ctx).toEqual(wantRows(outs, got));
    return false;
  };
  /** Runs a writer operation; an error must be one the model predicts for the written history. */
  const writerOp = (ctx: string, f: () => void): boolean => {
    const err = errorOf(f);
    if (err === undefined) return false;
    const want = modelErrors(modelOutcomes(history));
    if (want === undefined) throw err;
    expect(err.message, `${ctx}: writer error`).toMatch(want.pattern);
    return true;
  };
  /**
   * A merged table (without deletion vectors, not first-row: Java reads those raw, skipping level
   * 0): the latest state by scan and by `get` of every key the model knows is what Java reads of
   * the same files (testing/java-read.ts: a key's lone record as it is; for `changelog-producer=
   * lookup`, level 0 and the lowest level above it per key) — checked after every commit and
   * compaction. Exact where the history model allows several outcomes.
   */
  const o = sc.spec.options ?? {};
  const javaMerged = o['merge-engine'] !== 'first-row' && o['deletion-vectors.enabled'] !== 'true';
  const checkJava = (ctx: string) => {
    if (!javaMerged || modelErrors(modelOutcomes(committed)) !== undefined) return;
    const java = new Map<string, string>();
    for (const row of javaRead(table).rows) java.set(keyOf(Object.fromEntries(cols.map((c, i) => [c, row[i]]))), normalize(row, cols));
    expect(tableRows(), `${ctx}: scan as Java reads it`).toEqual([...java.values()].sort());
    const reader = table.reader();
    try {
      for (const k of committed.keys()) {
        const [item, loc, p] = k.split('|');
        expect(normalize(reader.get({ item, loc: Number(loc), p: Number(p) }), cols), `${ctx}: get ${k} as Java reads it`).toBe(java.get(k) ?? 'undefined');
      }
    } finally {
      reader.close();
    }
  };
  const noteSnapshots = () => {
    const latest = table.snapshots.latestId() ?? 0;
    for (let id = latest; id > 0 && !snaps.has(id); id--) snaps.set(id, committed);
  };

  for (let step = 0; step < steps; step++) {
    const op = r.next();
    const ctx = `seed ${seed}, step ${step}`;
    if (op < 0.62) {
      // A batch of 1..6 records.
      const n = r.range(1, 6);
      for (let b = 0; b < n; b++) {
        const key = { item: `k${r.int(items)}`, loc: r.int(2), p: r.int(2) };
        const rec: Generated =
          sc.retract && r.chance(retractRate) ? sc.retract(r, key, order)
          : { kind: r.chance(0.5) ? RowKind.INSERT : RowKind.UPDATE_AFTER, row: sc.row(r, key, order) };
        if (rec.refused) {
          const err = errorOf(() => writer.writeRecord(rec.row, rec.kind as RowKind));
          expect(err?.message, `${ctx}: refused at write time`).toMatch(rec.refused);
          continue;
        }
        const full = Object.fromEntries(cols.map((c) => [c, rec.row[c] ?? null]));
        const h = history.get(keyOf(full)) ?? [];
        h.push({ kind: rec.kind, row: full, order: order++ });
        history.set(keyOf(full), h);
        written++;
        if (writerOp(ctx, () => writer.writeRecord(rec.row, rec.kind as RowKind))) return written;
      }
    } else if (op < 0.76) {
      if (writerOp(ctx, () => writer.commit())) return written;
      committed = copy(history);
      noteSnapshots();
      checkJava(ctx);
      now += 700;
    } else if (op < 0.83) {
      if (writerOp(ctx, () => writer.compact(r.chance(0.4)))) return written;
      committed = copy(history);
      noteSnapshots();
      checkJava(ctx);
    } else if (op < 0.87) {
      if (table.latestSnapshot()) {
        const name = `t${step}`;
        table.createTag(name);
        tags.set(name, committed);
      }
    } else if (op < 0.9) {
      now += 5_000;
      writer.expire();
    } else if (op < 0.94) {
      writer.close();
      history = copy(committed);
      table = catalog.getTable({ database: 'db', table: 't' });
      writer = table.newWriter();
    } else if (op < 0.97) {
      // Point lookups of committed keys.
      const reader = table.reader();
      try {
        for (const [k, h] of committed) {
          if (!r.chance(0.3)) continue;
          const [item, loc, p] = k.split('|');
          const outs = readOutcomes(sc.fold, h, cols);
          let row: unknown[] | undefined;
          const err = errorOf(() => (row = reader.get({ item, loc: Number(loc), p: Number(p) })));
          const errs = modelErrors(new Map([[k, outs]]));
          if (err !== undefined) {
            if (errs === undefined) throw err;
            expect(err.message, `${ctx}: get ${k}`).toMatch(errs.pattern);
            return written;
          }
          expect(wantRows(new Map([[k, outs]]), new Map(row ? [[k, normalize(row, cols)]] : [])), `${ctx}: get ${k}`).toEqual(row ? [normalize(row, cols)] : []);
        }
      } finally {
        reader.close();
      }
    } else {
      // An earlier retained snapshot.
      const earliest = table.snapshots.earliestId() ?? 1;
      const ids = [...snaps.keys()].filter((id) => id >= earliest);
      if (ids.length > 0) {
        const id = r.pick(ids);
        if (compare(`${ctx}: snapshot ${id}`, snaps.get(id)!, { snapshotId: id })) return written;
      }
    }
    if (step % 20 === 0 || step === steps - 1) if (compare(`${ctx}: latest`, committed)) return written;
  }
  if (writerOp('final commit', () => writer.commit())) return written;
  committed = copy(history);
  if (compare(`seed ${seed}: final`, committed)) return written;
  for (const [name, m] of tags) if (compare(`seed ${seed}: tag ${name}`, m, { tag: name })) return written;
  now += 3_600_000;
  writer.expire();
  for (const [name, m] of tags) compare(`seed ${seed}: tag ${name} after expire`, m, { tag: name });
  if (writerOp('final full compaction', () => writer.compact(true))) return written;
  writer.expire();
  compare(`seed ${seed}: after full compaction`, committed);
  checkJava(`seed ${seed}: after full compaction`);
  for (const [name, m] of tags) compare(`seed ${seed}: tag ${name} after compaction`, m, { tag: name });
  writer.close();
  return written;
}
