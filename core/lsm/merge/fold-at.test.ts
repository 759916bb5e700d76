// The read paths' fold by position (MergeFunction.foldAt) against the generic fold
// (reset/add/result) on the same records: random records of random schemas, held in runs of every
// column form (JS arrays, packed columns of each kind, with and without nulls), must give the same
// row value for value, or undefined (the caller then takes the generic fold).

import { describe, expect, it } from 'vitest';
import { packRun, rowAt, runFromRecords, type RunData } from '../data-file.ts';
import { isAdd, RowKind, type KeyValue } from '../key-value.ts';
import { TableSchema } from '../schema.ts';
import { mulberry32 } from '../testing/prng.ts';
import { compareInPlace, isNullAt, readAt, runView, sortBySeq } from './cell-view.ts';
import { createMergeFunction, type MergeFunction } from './merge-function.ts';

const SEED = Number(process.env.MODEL_SEED ?? Date.now() % 1_000_000);

interface Case {
  name: string;
  fields: { name: string; type: string }[];
  options: Record<string, string>;
  /** Value maker per column (after the key column). */
  values: Array<(r: () => number) => unknown>;
}

const maybe = (r: () => number, p: number, f: () => unknown) => (r() < p ? null : f());
const smallBig = (r: () => number) => BigInt(Math.floor(r() * 7) - 2);
const wideBig = (r: () => number) => (r() < 0.5 ? BigInt(Math.floor(r() * 7) - 2) : BigInt(Math.floor(r() * 7) - 2) * 10_000_000_000n);

const CASES: Case[] = [
  {
    name: 'partial-update, one-field groups (nullable BIGINT, INT) and plain columns',
    fields: [
      { name: 'k', type: 'STRING NOT NULL' },
      { name: 'a', type: 'INT' },
      { name: 'a_seq', type: 'BIGINT' },
      { name: 'b', type: 'STRING' },
      { name: 'b_seq', type: 'INT' },
      { name: 'p', type: 'DOUBLE' },
      { name: 'q', type: 'BOOLEAN' },
      { name: 'w', type: 'BIGINT' },
    ],
    options: { 'merge-engine': 'partial-update', 'fields.a_seq.sequence-group': 'a', 'fields.b_seq.sequence-group': 'b' },
    values: [
      (r) => maybe(r, 0.3, () => Math.floor(r() * 100) - 50),
      (r) => maybe(r, 0.4, () => (r() < 0.8 ? smallBig(r) : wideBig(r))),
      (r) => maybe(r, 0.3, () => `s${Math.floor(r() * 5)}`),
      (r) => maybe(r, 0.4, () => Math.floor(r() * 5) - 2),
      (r) => maybe(r, 0.5, () => (r() < 0.5 ? Math.floor(r() * 9) : r() * 3)),
      (r) => maybe(r, 0.5, () => r() < 0.5),
      (r) => maybe(r, 0.5, () => wideBig(r)),
    ],
  },
  {
    name: 'partial-update, a NOT NULL sequence field and a two-field group',
    fields: [
      { name: 'k', type: 'STRING NOT NULL' },
      { name: 'a', type: 'INT' },
      { name: 'a_seq', type: 'BIGINT NOT NULL' },
      { name: 'b', type: 'STRING' },
      { name: 's1', type: 'INT' },
      { name: 's2', type: 'BIGINT' },
    ],
    options: { 'merge-engine': 'partial-update', 'fields.a_seq.sequence-group': 'a', 'fields.s1,s2.sequence-group': 'b' },
    values: [
      (r) => maybe(r, 0.3, () => Math.floor(r() * 100)),
      (r) => smallBig(r),
      (r) => maybe(r, 0.3, () => `s${Math.floor(r() * 5)}`),
      (r) => maybe(r, 0.4, () => Math.floor(r() * 3)),
      (r) => maybe(r, 0.4, () => smallBig(r)),
    ],
  },
  {
    name: 'partial-update without sequence groups',
    fields: [
      { name: 'k', type: 'STRING NOT NULL' },
      { name: 'a', type: 'INT' },
      { name: 'b', type: 'STRING' },
      { name: 'c', type: 'BIGINT' },
    ],
    options: { 'merge-engine': 'partial-update' },
    values: [(r) => maybe(r, 0.5, () => Math.floor(r() * 100)), (r) => maybe(r, 0.5, () => `s${Math.floor(r() * 5)}`), (r) => maybe(r, 0.5, () => wideBig(r))],
  },
  {
    name: 'deduplicate',
    fields: [
      { name: 'k', type: 'STRING NOT NULL' },
      { name: 'a', type: 'INT' },
      { name: 'c', type: 'BIGINT' },
    ],
    options: { 'merge-engine': 'deduplicate' },
    values: [(r) => maybe(r, 0.3, () => Math.floor(r() * 100)), (r) => maybe(r, 0.3, () => wideBig(r))],
  },
  {
    name: 'first-row',
    fields: [
      { name: 'k', type: 'STRING NOT NULL' },
      { name: 'a', type: 'INT' },
      { name: 'c', type: 'BIGINT' },
    ],
    options: { 'merge-engine': 'first-row', 'ignore-delete': 'true' },
    values: [(r) => maybe(r, 0.3, () => Math.floor(r() * 100)), (r) => maybe(r, 0.3, () => wideBig(r))],
  },
];

/** A run of records of one key each (ROWS rows), packed or left as JS arrays. */
const ROWS = 40;

function randomRun(c: Case, r: () => number, seq: { next: number }, kinds: boolean): RunData {
  const records: KeyValue[] = [];
  for (let i = 0; i < ROWS; i++) {
    const key = `k${String(i).padStart(3, '0')}`;
    const kind = kinds && r() < 0.15 ? (r() < 0.5 ? RowKind.DELETE : RowKind.UPDATE_BEFORE) : r() < 0.5 ? RowKind.INSERT : RowKind.UPDATE_AFTER;
    records.push({ key: [key], seq: seq.next++, kind, value: [key, ...c.values.map((f) => f(r))] });
  }
  const run = runFromRecords(records, 1, c.fields.length);
  return r() < 0.7 ? packRun(run, [0]) : run;
}

function genericFold(merge: MergeFunction, parts: RunData[], rows: number[]): unknown[] | undefined | 'threw' {
  merge.reset();
  try {
    for (let k = 0; k < parts.length; k++) {
      const d = parts[k]!;
      const i = rows[k]!;
      merge.add({ key: [d.keyCols[0]![i]], seq: d.seq[i]!, kind: d.kind[i] as KeyValue['kind'], value: rowAt(d, i) });
    }
  } catch {
    return 'threw';
  }
  const kv = merge.result();
  return kv && isAdd(kv.kind) ? kv.value : undefined;
}

describe('MergeFunction.foldAt', () => {
  for (const c of CASES) {
    it(`equals the generic fold: ${c.name} (seed ${SEED})`, () => {
      const r = mulberry32(SEED);
      const schema = TableSchema.fromSpec({ fields: c.fields, primaryKeys: ['k'], options: { bucket: '1', ...c.options } }, 0);
      const fast = createMergeFunction(schema);
      const generic = createMergeFunction(schema);
      expect(fast.foldAt).toBeDefined();
      let folded = 0;
      for (let round = 0; round < 60; round++) {
        const seq = { next: Math.floor(r() * 10) };
        const retractions = r() < 0.3;
        const runs = Array.from({ length: 1 + Math.floor(r() * 4) }, () => randomRun(c, r, seq, retractions));
        for (let i = 0; i < ROWS; i++) {
          // The key's records in merge order (oldest run first: sequence numbers grow run by run).
          const parts = runs.filter(() => r() < 0.8);
          if (parts.length === 0) continue;
          const rows = parts.map(() => i);
          const want = genericFold(generic, parts, rows);
          const got = fast.foldAt!(parts, rows, parts.length);
          if (got === undefined) {
            // Declined: only where the records hold a retraction.
            expect(parts.some((d) => !isAdd(d.kind[i]!)), `declined all adds, round ${round} row ${i}`).toBe(true);
            continue;
          }
          folded++;
          expect(got, `round ${round} row ${i}`).toEqual(want);
        }
      }
      expect(folded).toBeGreaterThan(100);
    });
  }

  it('reads cells as cell() does and compares integers in place as the comparator does', () => {
    const r = mulberry32(SEED + 1);
    const c = CASES[0]!;
    const seq = { next: 0 };
    for (let round = 0; round < 20; round++) {
      const a = randomRun(c, r, seq, false);
      const b = randomRun(c, r, seq, false);
      const va = runView(a).cols;
      const vb = runView(b).cols;
      for (let col = 0; col < c.fields.length; col++) {
        for (let i = 0; i < ROWS; i++) {
          const x = rowAt(a, i)[col];
          expect(readAt(va[col]!, i)).toBe(x);
          expect(isNullAt(va[col]!, i)).toBe(x === null || x === undefined);
          const y = rowAt(b, i)[col];
          if (x === null || y === null || typeof x !== typeof y || typeof x === 'string' || typeof x === 'boolean') continue;
          const r2 = compareInPlace(va[col]!, i, vb[col]!, i);
          if (r2 === r2) expect(r2).toBe((x as number) < (y as number) ? -1 : (x as number) > (y as number) ? 1 : 0);
        }
      }
    }
  });

  it('sortBySeq orders records by sequence number as a stable sort does, from run ranges or record by record', () => {
    const r = mulberry32(SEED + 2);
    let reversed = 0;
    for (let round = 0; round < 400; round++) {
      // Runs whose sequence ranges are disjoint (newest first or not) or overlap, ties included.
      const disjoint = r() < 0.5;
      const runs: RunData[] = Array.from({ length: 1 + Math.floor(r() * 4) }, (_, q) => {
        const base = disjoint ? (4 - q) * 4 : 0; // neighbouring ranges may touch (a tie across runs)
        const seq = Array.from({ length: 5 }, () => base + Math.floor(r() * (disjoint ? 5 : 6)));
        return { rowCount: 5, keyCols: [[0, 1, 2, 3, 4]], seq, kind: seq.map(() => RowKind.INSERT), valueCols: [] };
      });
      const order = r() < 0.7 ? runs : [...runs].sort(() => r() - 0.5);
      const parts = order.map((d) => d);
      const rows = order.map(() => Math.floor(r() * 5));
      const want = parts.map((d, k) => ({ d, i: rows[k]! })).sort((a, b) => a.d.seq[a.i]! - b.d.seq[b.i]!);
      if (parts.every((d, k) => k + 1 >= parts.length || runView(d).minSeq > runView(parts[k + 1]!).maxSeq)) reversed++;
      sortBySeq(parts, rows, parts.length);
      expect(parts.map((d, k) => [runs.indexOf(d), rows[k]]), `round ${round}`).toEqual(want.map((w) => [runs.indexOf(w.d), w.i]));
    }
    expect(reversed).toBeGreaterThan(20);
  });
});

