// RunsMerge (compaction's merge into columns) yields exactly what mergeRuns (merge-reader.ts)
// yields — same keys, order, sequence numbers, kinds and rows — for random runs of several parts,
// JS-array and packed columns, under deduplicate (with deletes) and partial-update with sequence
// groups, but for a key's lone add, which RunsMerge passes on unfolded (Java's
// ReducerMergeFunctionWrapper; `asJavaReducer` below gives mergeRuns the same rule). Random:
// prints its seed; replay with COMPACT_MERGE_SEED=<seed>.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../catalog.ts';
import { packRun, type RunData } from '../data-file.ts';
import { RowKind, type KeyValue } from '../key-value.ts';
import type { MergeFunction } from '../merge/merge-function.ts';
import { createMergeFunction, keyComparator, mergeOrder } from '../merge/merge-function.ts';
import { mergeRuns } from '../merge-reader.ts';
import { comparatorFor } from '../types.ts';
import { RunsMerge } from './compact-merge.ts';
import { mulberry32 } from '../testing/model.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function schemaOf(options: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'compact-merge-'));
  dirs.push(dir);
  const catalog = new Catalog(join(dir, 'wh'));
  catalog.createDatabase('db', true);
  return catalog.createTable(
    { database: 'db', table: 't' },
    {
      fields: [
        { name: 'k1', type: 'STRING NOT NULL' },
        { name: 'k2', type: 'INT NOT NULL' },
        { name: 'a', type: 'INT' },
        { name: 'a_seq', type: 'BIGINT' },
        { name: 'b', type: 'DOUBLE' },
        { name: 'b_seq', type: 'BIGINT' },
        { name: 'c', type: 'BOOLEAN' },
      ],
      primaryKeys: ['k1', 'k2'],
      partitionKeys: [],
      options,
    },
  ).schema;
}

/** A run of unique sorted keys drawn from a small key space, split into `parts` key-ordered parts. */
function randomRun(rnd: () => number, seq0: number, withDeletes: boolean): RunData[] {
  const keys: Array<[string, number]> = [];
  for (let i = 0; i < 12; i++) for (let j = 0; j < 4; j++) if (rnd() < 0.4) keys.push([`k${String(i).padStart(2, '0')}`, j]);
  const n = keys.length;
  const maybe = <T,>(v: T): T | null => (rnd() < 0.25 ? null : v);
  const rows = keys.map(([k1, k2], i) => {
    const group = Math.floor(rnd() * 3);
    return {
      key: [k1, k2],
      seq: seq0 + Math.floor(rnd() * 30), // overlapping and tied sequence numbers across runs
      kind: withDeletes && rnd() < 0.15 ? RowKind.DELETE : RowKind.INSERT,
      value: [k1, k2, maybe(Math.floor(rnd() * 100)), group === 0 ? maybe(BigInt(Math.floor(rnd() * 5))) : null, maybe(rnd() < 0.1 ? -0 : rnd()), group === 1 ? maybe(BigInt(Math.floor(rnd() * 5))) : null, maybe(rnd() < 0.5)],
    };
  });
  const cut = Math.floor(rnd() * (n + 1));
  const part = (rs: typeof rows): RunData => ({
    rowCount: rs.length,
    keyCols: [rs.map((r) => r.key[0]), rs.map((r) => r.key[1])],
    seq: rs.map((r) => r.seq),
    kind: rs.map((r) => r.kind),
    valueCols: Array.from({ length: 7 }, (_, c) => rs.map((r) => r.value[c])),
  });
  const parts = [part(rows.slice(0, cut)), part(rows.slice(cut))];
  return rnd() < 0.5 ? parts.map((p) => packRun(p)) : parts;
}

/**
 * `mf` behind Java's ReducerMergeFunctionWrapper, for adds only (RunsMerge's rule): a key whose
 * one record is an add is that record, unfolded; `folded` says whether the last key was folded.
 */
function asJavaReducer(mf: MergeFunction): MergeFunction & { folded: boolean } {
  let first: KeyValue | undefined;
  let n = 0;
  const w = {
    folded: false,
    reset() {
      first = undefined;
      n = 0;
    },
    add(kv: KeyValue) {
      if (n++ === 0) first = kv;
      else {
        if (n === 2) {
          mf.reset();
          mf.add(first!);
        }
        mf.add(kv);
      }
    },
    result() {
      w.folded = n !== 1;
      if (!w.folded) return first;
      if (n === 1) {
        mf.reset();
        mf.add(first!);
      }
      return mf.result();
    },
  };
  return w;
}

const copy = (kv: KeyValue) => ({ key: [...kv.key], seq: kv.seq, kind: kv.kind, value: [...kv.value] });

describe('RunsMerge', () => {
  const seed = Number(process.env.COMPACT_MERGE_SEED ?? Date.now() % 1_000_000);
  console.log(`compact-merge seed ${seed} (COMPACT_MERGE_SEED=${seed} to replay)`);

  for (const [name, options, deletes] of [
    ['deduplicate', {}, true],
    ['partial-update with sequence groups', { 'merge-engine': 'partial-update', 'fields.a_seq.sequence-group': 'a', 'fields.b_seq.sequence-group': 'b' }, false],
  ] as const) {
    it(`yields what mergeRuns yields: ${name}`, () => {
      const schema = schemaOf(options);
      const rnd = mulberry32(seed);
      for (let trial = 0; trial < 40; trial++) {
        const runs = Array.from({ length: 1 + Math.floor(rnd() * 5) }, () => randomRun(rnd, Math.floor(rnd() * 40), deletes));
        let checks = 0;
        const reducer = asJavaReducer(createMergeFunction(schema));
        const want = [...mergeRuns(runs, keyComparator(schema), reducer, mergeOrder(schema), () => (checks += reducer.folded ? 1 : 0))].map(copy);
        const got: ReturnType<typeof copy>[] = [];
        let checks2 = 0;
        new RunsMerge(runs, schema.keyTypes.map(comparatorFor), schema.fields.length, createMergeFunction(schema), mergeOrder(schema), () => checks2++, (kv) => got.push(copy(kv))).step(Infinity);
        expect(got, `seed ${seed} trial ${trial}`).toEqual(want);
        expect(checks2).toBe(checks);
        // In steps of a few keys (one run opened per step first): the same records and calls.
        const stepped: ReturnType<typeof copy>[] = [];
        let checks3 = 0;
        const m = new RunsMerge(runs, schema.keyTypes.map(comparatorFor), schema.fields.length, createMergeFunction(schema), mergeOrder(schema), () => checks3++, (kv) => stepped.push(copy(kv)));
        let steps = 0;
        while (!m.step(1 + Math.floor(rnd() * 4))) steps++;
        expect(m.done).toBe(true);
        expect(stepped, `seed ${seed} trial ${trial}, stepped`).toEqual(want);
        expect(checks3).toBe(checks);
        expect(steps).toBeGreaterThanOrEqual(runs.length - 1 + Math.ceil(want.length / 4) - 1);
      }
    });
  }
});
