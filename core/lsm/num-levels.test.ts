// A table Java made with `num-levels` below 2 (Paimon checks no bound: CoreOptions.numLevels).
// Reading does not depend on levels, so it opens and reads. Java's writer counts a bucket's levels
// as max(num-levels, highest file level + 1) and fails below 2 (Levels' constructor: "Number of
// levels must be at least 2") when it opens a bucket to write or compact it — not when write-only
// (NoopCompactManager, no Levels). The writer here does the same, bucket by bucket, with
// NotSupported naming the option (levels.ts checkBucketLevels). Creating such a table here, or
// an ALTER to it, is refused. There is no Java here: the table is written by this store and then
// given a `schema-1` as a Java writer would leave it (as java-write-options.test.ts does).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const KV: SchemaSpec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1' } };

/**
 * A table with rows 0..9 committed (compacted fully first when `full`: its files then sit at the
 * top level, 2 of num-levels 3), then a `schema-1` carrying `options` as Java would leave it.
 */
function javaTable(options: Record<string, string>, full = false): string {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-num-levels-'));
  dirs.push(dir);
  const t = Table.create(dir, TableSchema.fromSpec({ ...KV, options: { ...KV.options, 'num-levels': '3' } }, 0));
  const w = t.newWriter();
  for (let k = 0; k < 10; k++) w.writeRecord({ k, v: `v${k}` });
  w.commit();
  if (full) w.compact(true);
  w.close();
  const json = JSON.parse(readFileSync(join(dir, 'schema', 'schema-0'), 'utf8')) as { id: number; options: Record<string, string> };
  json.id = 1;
  json.options = { ...json.options, ...options };
  writeFileSync(join(dir, 'schema', 'schema-1'), JSON.stringify(json, null, 2));
  return dir;
}

function refusal(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LsmError);
    return e as LsmError;
  }
  throw new Error('expected a refusal, nothing was thrown');
}

const levelsOf = (t: Table): number[] => t.buckets(t.latestSnapshot()!).flatMap((b) => b.files.map((f) => f.level)).sort();
const sortedRows = (t: Table): unknown[][] => t.scanRows().sort((a, b) => (a[0] as number) - (b[0] as number));
const rows = (n: number, v = (k: number) => `v${k}`): unknown[][] => Array.from({ length: n }, (_, k) => [k, v(k)]);

describe("a table Java made with 'num-levels' below 2", () => {
  for (const levels of ['1', '0']) {
    it(`opens and reads (scan, get, an older snapshot) with num-levels ${levels}`, () => {
      const t = Table.open(javaTable({ 'num-levels': levels }));
      expect(t.schema.options.numLevels).toBe(Number(levels));
      expect(sortedRows(t)).toEqual(rows(10));
      const r = t.reader();
      try {
        expect(r.get({ k: 3 })).toEqual([3, 'v3']);
        expect(r.get({ k: 10 })).toBeUndefined();
      } finally {
        r.close();
      }
      expect(t.scanRows({ snapshotId: 1 }).length).toBe(10);
    });

    it(`a writer that compacts is refused at the first write to a bucket with no file above level 0, naming the option (num-levels ${levels})`, () => {
      const dir = javaTable({ 'num-levels': levels });
      const t = Table.open(dir);
      expect(levelsOf(t)).toEqual([0]);
      const w = t.newWriter();
      try {
        const e = refusal(() => w.writeRecord({ k: 1, v: 'new' }));
        expect(e.kind).toBe('NotSupported');
        expect(e.message).toMatch(new RegExp(`option 'num-levels' = '${levels}': bucket 0 has no file above level 0`));
        expect(e.message).toMatch(/at least 2/);
        expect(e.message).toMatch(/'write-only' = 'true'/);
      } finally {
        w.close();
      }
      // Nothing was written: the same snapshot, the same rows.
      expect(Table.open(dir).latestSnapshot()!.id).toBe(1);
      expect(sortedRows(Table.open(dir))).toEqual(rows(10));
    });
  }

  it('a bucket whose files already reach level 2 is written and compacted as Java does: its top level stays where the files are', () => {
    const dir = javaTable({ 'num-levels': '1', 'num-sorted-run.compaction-trigger': '2' }, true);
    const t = Table.open(dir);
    expect(levelsOf(t)).toEqual([2]);
    const w = t.newWriter();
    try {
      let compactions = 0;
      for (let c = 0; c < 4; c++) {
        for (let k = 0; k < 10; k += 2) w.writeRecord({ k, v: `c${c}-${k}` });
        if (w.commit().compactSnapshotId !== undefined) compactions++;
      }
      expect(compactions).toBeGreaterThan(0);
      w.compact(true);
    } finally {
      w.close();
    }
    const after = Table.open(dir);
    expect(levelsOf(after)).toEqual([2]);
    expect(sortedRows(after)).toEqual(rows(10, (k) => (k % 2 === 0 ? `c3-${k}` : `v${k}`)));
  });

  it('a write-only writer writes and commits level-0 files as Java\'s does; compacting such a bucket is refused naming the option', () => {
    const dir = javaTable({ 'num-levels': '1', 'write-only': 'true' });
    const t = Table.open(dir);
    const w = t.newWriter();
    try {
      w.writeRecord({ k: 1, v: 'new' });
      w.writeRecord({ k: 20, v: 'v20' });
      expect(w.commit().snapshotId).toBe(2);
      expect(levelsOf(Table.open(dir))).toEqual([0, 0]);
      const e = refusal(() => w.compact(true));
      expect(e.kind).toBe('NotSupported');
      expect(e.message).toMatch(/option 'num-levels' = '1': bucket 0 has no file above level 0/);
    } finally {
      w.close();
    }
    const after = Table.open(dir);
    expect(after.latestSnapshot()!.id).toBe(2);
    expect(sortedRows(after)).toEqual([...rows(10, (k) => (k === 1 ? 'new' : `v${k}`)), [20, 'v20']]);
  });

  it('creating a table with num-levels below 2 is refused, and so is an ALTER to it; a Java table already below stays alterable', () => {
    for (const levels of ['1', '0']) {
      expect(refusal(() => TableSchema.fromSpec({ ...KV, options: { ...KV.options, 'num-levels': levels } }, 0)).message).toMatch(/option 'num-levels': expected an integer in 2\.\./);
    }
    const dir = mkdtempSync(join(tmpdir(), 'lsm-num-levels-'));
    dirs.push(dir);
    const t = Table.create(dir, TableSchema.fromSpec(KV, 0));
    expect(refusal(() => t.alter([{ kind: 'setOption', key: 'num-levels', value: '1' }])).message).toMatch(/option 'num-levels': expected an integer in 2\.\..*got 1/);
    // Default num-levels is trigger + 1: a trigger of 1 would give 2, fine; an explicit 1 beside it is not.
    t.alter([{ kind: 'setOption', key: 'num-sorted-run.compaction-trigger', value: '1' }]);
    expect(Table.open(dir).schema.options.numLevels).toBe(2);

    const javaDir = javaTable({ 'num-levels': '1' });
    const java = Table.open(javaDir);
    java.alter([{ kind: 'setOption', key: 'snapshot.num-retained.min', value: '3' }]);
    java.alter([{ kind: 'setOption', key: 'num-levels', value: '1' }]);
    expect(refusal(() => java.alter([{ kind: 'setOption', key: 'num-levels', value: '0' }])).message).toMatch(/got 0/);
    java.alter([{ kind: 'setOption', key: 'num-levels', value: '4' }]);
    expect(Table.open(javaDir).schema.options.numLevels).toBe(4);
  });
});
