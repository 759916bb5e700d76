// Randomized proof of the lookup changelog producer: for ANY two retained snapshots i < j, the
// changelog in (i, j], folded key by key onto the state of snapshot i, gives exactly the state of
// snapshot j — with and without row-deduplicate, for deduplicate and partial-update tables, with
// flushes, compactions, expirations, writer reopens and rollbacks (both kinds) mixed in. The fold
// is strict: +I needs an absent key, -U/-D need the exact current row, +U needs the -U before it.
// `diff` mode is checked the same way. After every commit and compaction the latest state is also
// read as Java reads a lookup table (testing/java-read.ts: level 0 and only the newest record
// above it), which holds only while every record a compaction writes above level 0 is its key's
// complete value (compaction/lookup-levels.ts); the first step writes a large bottom run, so that
// later picks write the small runs into a middle level above it. The seed is printed on failure;
// rerun with MODEL_SEED=<seed>.

import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { RowKind } from './key-value.ts';
import type { SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';
import type { TableWriter } from './table-writer.ts';
import { javaRead } from './testing/java-read.ts';
import { modelDir, modelSettings, removeModelDirs, rng, withSeed } from './testing/model.ts';
import { anyRow, applyChanges, deleteKey, FIELDS, groupDelete, GROUPS, groupRow, smallOptions, stateOf, type Scenario, type State } from './testing/changelog-model.ts';

afterAll(removeModelDirs);

function scenarios(): Scenario[] {
  const small = smallOptions('lookup');
  const out: Scenario[] = [];
  for (const dedup of [false, true]) {
    const d: Record<string, string> = dedup ? { 'changelog-producer.row-deduplicate': 'true' } : {};
    const suffix = dedup ? ' with row-deduplicate' : '';
    out.push({ name: `deduplicate${suffix}`, options: { ...small, ...d }, row: anyRow, deleteRow: deleteKey });
    out.push({ name: `deduplicate with sequence.field${suffix}`, options: { ...small, ...d, 'sequence.field': 'inv_seq' }, row: anyRow, deleteRow: (r, key) => ({ ...key, inv_seq: BigInt(Math.floor(r() * 3)) }) });
    out.push({ name: `partial-update with sequence groups${suffix}`, options: { ...small, ...d, ...GROUPS }, row: groupRow, deleteRow: groupDelete });
    out.push({
      name: `partial-update with remove-record-on-delete${suffix}`,
      options: { ...small, ...d, 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true' },
      row: anyRow,
      deleteRow: deleteKey,
    });
  }
  // Row removals with sequence.field (sequence values in any order; the changelog must still fold
  // onto the states, whatever the states are).
  out.push({
    name: 'partial-update with remove-record-on-delete and sequence.field',
    options: { ...small, 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true', 'sequence.field': 'inv_seq' },
    row: anyRow,
    deleteRow: (r, key) => ({ ...key, inv_seq: BigInt(Math.floor(r() * 3)) }),
  });
  out.push({
    name: 'partial-update with sequence groups, remove-record-on-sequence-group and sequence.field',
    options: { ...small, ...GROUPS, 'partial-update.remove-record-on-sequence-group': 'inv_seq', 'sequence.field': 'com_seq' },
    row: groupRow,
    deleteRow: groupDelete,
  });
  return out;
}

function runScenario(sc: Scenario, seed: number, steps: number): void {
  const r = rng(seed);
  const dir = modelDir('clmodel');
  let now = 1_800_000_000_000;
  const catalog = new Catalog(dir, { clock: () => now });
  catalog.createDatabase('db');
  const spec: SchemaSpec = { fields: FIELDS, primaryKeys: ['item', 'loc', 'p'], partitionKeys: ['p'], options: sc.options };
  let table: Table = catalog.createTable({ database: 'db', table: 't' }, spec);
  let writer: TableWriter = table.newWriter();
  /** The state of every snapshot, recorded when it was made. */
  const states = new Map<number, State>([[0, new Map()]]);
  const record = () => {
    const latest = table.snapshots.latestId() ?? 0;
    for (let id = latest; id > 0 && !states.has(id); id--) states.set(id, stateOf(table.scanRows({ snapshotId: id })));
  };
  /** The latest state as Java reads it (level 0 and the newest record above it) is this store's. */
  const checkJava = (ctx: string) => {
    expect([...stateOf(javaRead(table).rows).entries()].sort(), `${ctx}: Java's lookup read`).toEqual([...stateOf(table.scanRows()).entries()].sort());
  };
  const check = (ctx: string) => {
    checkJava(ctx);
    const earliest = table.snapshots.earliestId() ?? 1;
    const latest = table.snapshots.latestId() ?? 0;
    const ids = [0, ...[...states.keys()].filter((id) => id >= earliest && id <= latest).sort((a, b) => a - b)];
    const pairs: Array<[number, number]> = [];
    for (let t = 0; t < 6; t++) {
      const i = ids[Math.floor(r() * ids.length)]!;
      const j = ids[Math.floor(r() * ids.length)]!;
      pairs.push(i <= j ? [i, j] : [j, i]);
    }
    if (ids.length >= 2) pairs.push([ids[ids.length - 2]!, ids[ids.length - 1]!]);
    for (const [i, j] of pairs) {
      // The changelog needs every snapshot in (i, j]; from 0 only while snapshot 1 is retained.
      if (i + 1 < earliest && i !== j) continue;
      for (const mode of ['changelog', 'diff'] as const) {
        const s = new Map(states.get(i)!);
        const err = applyChanges(s, table.changes({ from: i, to: j, mode }));
        expect(err, `${ctx}: ${mode} (${i}, ${j}]`).toBeUndefined();
        expect([...s.entries()].sort(), `${ctx}: ${mode} (${i}, ${j}] folds to the state of ${j}`).toEqual([...states.get(j)!.entries()].sort());
      }
    }
  };

  for (let step = 0; step < steps; step++) {
    const op = r();
    const ctx = `seed ${seed}, step ${step}`;
    if (step === 0) {
      // A large bottom run under the small ones: later picks merge those into a level between 0
      // and the top, above older records of their keys (compaction/lookup-levels.ts).
      for (let i = 0; i < 200; i++) writer.writeRecord(sc.row(r, { item: `bulk${i}`, loc: 0, p: 0 }, step));
      writer.compact(true);
      now += 700;
    } else if (op < 0.7) {
      const key = { item: `k${Math.floor(r() * 12)}`, loc: Math.floor(r() * 2), p: Math.floor(r() * 2) };
      const del = r() < 0.15;
      writer.writeRecord(del ? sc.deleteRow(r, key) : sc.row(r, key, step), del ? RowKind.DELETE : RowKind.INSERT);
    } else if (op < 0.85) {
      writer.commit();
      now += 700;
      checkJava(ctx);
    } else if (op < 0.89) {
      writer.compact(r() < 0.5);
      checkJava(ctx);
    } else if (op < 0.92) {
      now += 5_000;
      writer.expire();
    } else if (op < 0.95) {
      writer.close();
      table = catalog.getTable({ database: 'db', table: 't' });
      writer = table.newWriter();
    } else if (op < 0.98) {
      writer.commit();
      const earliest = table.snapshots.earliestId();
      const latest = table.snapshots.latestId();
      if (earliest !== undefined && latest !== undefined && latest > earliest) {
        const target = earliest + Math.floor(r() * (latest - earliest));
        if (r() < 0.5) {
          writer.rollbackTo(target, { keepHistory: true });
        } else {
          writer.rollbackTo(target);
          for (const id of [...states.keys()]) if (id > target) states.delete(id);
        }
      }
    } else {
      record();
      check(ctx);
    }
    record();
  }
  writer.commit();
  record();
  check(`seed ${seed}: final`);
  writer.close();
}

describe('randomized: the lookup changelog between any two snapshots is the difference of their states', () => {
  const settings = modelSettings();
  for (const sc of scenarios()) {
    it(sc.name, { timeout: 300_000 }, () => {
      withSeed(sc.name, settings, (seed) => runScenario(sc, seed, settings.steps ?? 120), 'core/lsm/changelog.model.test.ts');
    });
  }
});
