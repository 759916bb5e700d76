// Randomized proof of the `full-compaction` changelog producer: changelog files appear only in
// full compactions (and a rollback-as-latest), and for ANY two full-compaction points i < j (the
// snapshots of `compact(full)` and of `full-compaction.delta-commits`; 0 = the empty table) the
// changelog in (i, j], folded strictly key by key onto the state of i, gives exactly the state of
// j — for every merge engine that takes the producer (deduplicate, partial-update, aggregation;
// first-row refuses it, as in Paimon), with and without row-deduplicate, with deletion vectors,
// and with commits, minor compactions (the universal picker also fully compacts single buckets),
// expiry, writer reopens and both kinds of rollback mixed in. The seed is printed on failure; rerun with
// MODEL_SEED=<seed>.

import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { RowKind } from './key-value.ts';
import type { SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';
import type { TableWriter } from './table-writer.ts';
import { modelDir, modelSettings, removeModelDirs, rng, withSeed } from './testing/model.ts';
import { aggRow, anyRow, applyChanges, deleteKey, FIELDS, groupDelete, GROUPS, groupRow, smallOptions, stateOf, type Scenario, type State } from './testing/changelog-model.ts';
import { earlierSchema } from './testing/earlier-schema.ts';

afterAll(removeModelDirs);

function scenarios(): Scenario[] {
  const small = smallOptions('full-compaction');
  const dv = { 'deletion-vectors.enabled': 'true' };
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
    out.push({
      name: `aggregation (sum, max, remove-record-on-delete)${suffix}`,
      options: { ...small, ...d, 'merge-engine': 'aggregation', 'fields.on_hand.aggregate-function': 'sum', 'fields.reserved.aggregate-function': 'max', 'fields.reserved.ignore-retract': 'true', 'aggregation.remove-record-on-delete': 'true' },
      row: aggRow,
      deleteRow: deleteKey,
    });
    out.push({ name: `deduplicate, deletion vectors${suffix}`, options: { ...small, ...d, ...dv }, row: anyRow, deleteRow: deleteKey });
    out.push({ name: `partial-update with sequence groups, deletion vectors${suffix}`, options: { ...small, ...d, ...dv, ...GROUPS }, row: groupRow, deleteRow: groupDelete });
  }
  out.push({ name: 'deduplicate, full-compaction.delta-commits=3', options: { ...small, 'full-compaction.delta-commits': '3' }, row: anyRow, deleteRow: deleteKey });
  out.push({ name: 'aggregation, deletion vectors, full-compaction.delta-commits=2', options: { ...small, ...dv, 'full-compaction.delta-commits': '2', 'merge-engine': 'aggregation', 'fields.on_hand.aggregate-function': 'sum', 'aggregation.remove-record-on-delete': 'true' }, row: aggRow, deleteRow: deleteKey });
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
  const dir = modelDir('clfull');
  let now = 1_800_000_000_000;
  const catalog = new Catalog(dir, { clock: () => now });
  catalog.createDatabase('db');
  const spec: SchemaSpec = { fields: FIELDS, primaryKeys: ['item', 'loc', 'p'], partitionKeys: ['p'], options: sc.options };
  // With deletion vectors as an earlier version made it: creation refuses them beside full-compaction (Paimon's pair).
  let table: Table = catalog.createTable({ database: 'db', table: 't' }, sc.options['deletion-vectors.enabled'] === undefined ? spec : earlierSchema(spec));
  let writer: TableWriter = table.newWriter();
  const deltaCommits = Number(sc.options['full-compaction.delta-commits'] ?? 0);
  let appends = 0; // APPEND snapshots of this writer since its last full compaction
  /** The state of every snapshot, recorded when it was made. */
  const states = new Map<number, State>([[0, new Map()]]);
  /** Snapshots at which every bucket had just been fully compacted (0: the empty table). */
  const fullPoints = new Set<number>([0]);
  let fullCompactions = 0;
  const record = () => {
    const latest = table.snapshots.latestId() ?? 0;
    for (let id = latest; id > 0 && !states.has(id); id--) {
      states.set(id, stateOf(table.scanRows({ snapshotId: id })));
      const s = table.snapshots.get(id);
      // Changelog only where a full compaction (or a rollback as latest) made one.
      if (s.commitKind === 'APPEND') expect(s.changelogManifestList, `seed ${seed}: APPEND snapshot ${id} has no changelog`).toBeNull();
    }
  };
  const markFull = () => {
    record();
    fullPoints.add(table.snapshots.latestId() ?? 0);
    fullCompactions++;
  };
  const commit = () => {
    const c = writer.commit();
    if (deltaCommits > 0 && c.snapshotId !== undefined && ++appends >= deltaCommits) {
      appends = 0;
      expect(c.compactSnapshotId === undefined || table.snapshots.get(c.compactSnapshotId).commitKind === 'COMPACT').toBe(true);
      markFull();
    }
  };
  const check = (ctx: string) => {
    const earliest = table.snapshots.earliestId() ?? 1;
    const latest = table.snapshots.latestId() ?? 0;
    const ids = [...fullPoints].filter((id) => id === 0 || (id >= earliest && id <= latest)).sort((a, b) => a - b);
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
      const s = new Map(states.get(i)!);
      const err = applyChanges(s, table.changes({ from: i, to: j, mode: 'changelog' }));
      expect(err, `${ctx}: changelog (${i}, ${j}]`).toBeUndefined();
      expect([...s.entries()].sort(), `${ctx}: changelog (${i}, ${j}] folds to the state of ${j}`).toEqual([...states.get(j)!.entries()].sort());
    }
  };

  for (let step = 0; step < steps; step++) {
    const op = r();
    const ctx = `seed ${seed}, step ${step}`;
    if (op < 0.68) {
      const key = { item: `k${Math.floor(r() * 12)}`, loc: Math.floor(r() * 2), p: Math.floor(r() * 2) };
      const del = r() < 0.15;
      writer.writeRecord(del ? sc.deleteRow(r, key) : sc.row(r, key, step), del ? RowKind.DELETE : RowKind.INSERT);
    } else if (op < 0.83) {
      commit();
      now += 700;
    } else if (op < 0.86) {
      writer.compact(false);
    } else if (op < 0.9) {
      writer.compact(true);
      appends = 0;
      markFull();
    } else if (op < 0.92) {
      now += 5_000;
      writer.expire();
    } else if (op < 0.95) {
      writer.close();
      table = catalog.getTable({ database: 'db', table: 't' });
      writer = table.newWriter();
      appends = 0;
    } else if (op < 0.97) {
      commit();
      const earliest = table.snapshots.earliestId();
      const latest = table.snapshots.latestId();
      if (earliest !== undefined && latest !== undefined && latest > earliest) {
        const target = earliest + Math.floor(r() * (latest - earliest));
        if (r() < 0.5) {
          writer.rollbackTo(target, { keepHistory: true });
        } else {
          writer.rollbackTo(target);
          for (const id of [...states.keys()]) if (id > target) states.delete(id);
          for (const id of [...fullPoints]) if (id > target) fullPoints.delete(id);
        }
      }
    } else {
      record();
      check(ctx);
    }
    record();
    // A full compaction before the final one whatever the draws (about 1 seed in 500 draws none
    // in 150 steps): a changelog between two full compactions is what this test is about.
    if (step === steps >> 1 && fullCompactions === 0) {
      writer.compact(true);
      appends = 0;
      markFull();
    }
  }
  writer.compact(true);
  markFull();
  check(`seed ${seed}: final`);
  expect(fullCompactions).toBeGreaterThan(1);
  writer.close();
}

describe('randomized: the full-compaction changelog between two full compactions is the difference of their states', () => {
  const settings = modelSettings();
  for (const sc of scenarios()) {
    it(sc.name, { timeout: 300_000 }, () => {
      withSeed(sc.name, settings, (seed) => runScenario(sc, seed, settings.steps ?? 150), 'core/lsm/changelog-full.model.test.ts');
    });
  }
});
