// The level invariant of Paimon's lookup tables, read the way Java reads them.
//
// Java wraps the merge engine of a primary-key table in LookupMergeFunction when the table "needs
// lookup" (`changelog-producer=lookup`, `deletion-vectors.enabled`, `force-lookup`; first-row is
// not wrapped but reads the same way): a key is the fold of its level-0 records and only the
// newest (lowest-level) record above level 0. That is how it compacts such a table and also how
// it batch-reads it (MergeFileSplitRead uses the wrapped merge function). It holds because every
// record above level 0 is the fully merged value of its key. With deletion vectors Java skips
// level 0 and reads the other files minus their vectors without merging; first-row tables are
// read the same way (no merge, level 0 skipped). These tests write tables here and read them
// as Java would (`javaRead`, testing/java-read.ts), so a compaction that writes a partial fold above level 0 shows up as
// a lost column, a wrong aggregate, a stale row or a duplicated key.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../catalog.ts';
import { kvAt } from '../data-file.ts';
import { RowKind } from '../key-value.ts';
import type { SchemaSpec } from '../schema.ts';
import type { Table } from '../table.ts';
import type { TableWriter } from '../table-writer.ts';
import { javaRead } from '../testing/java-read.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newTable(spec: SchemaSpec): Table {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-lookup-levels-'));
  dirs.push(dir);
  const c = new Catalog(dir);
  c.createDatabase('db');
  return c.createTable({ database: 'db', table: 't' }, spec);
}

/** The rows Java reads (testing/java-read.ts), sorted; its raw path must apply. */
function javaRows(t: Table): unknown[][] {
  const r = javaRead(t);
  expect(r.notRaw).toBeUndefined();
  return sortRows(r.rows);
}

const sortRows = (rows: unknown[][]): unknown[][] => [...rows].sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : String(a[0]) > String(b[0]) ? 1 : 0));

/** Levels of the latest snapshot's files that hold `key` (first key column), ascending. */
function levelsOf(t: Table, key: unknown): number[] {
  const s = t.latestSnapshot()!;
  const levels: number[] = [];
  for (const b of t.buckets(s)) {
    for (const f of b.files) {
      const run = t.loadRun(b.partition, b.bucket, f);
      for (let i = 0; i < run.rowCount; i++) if (run.keyCols[0]![i] === key) levels.push(f.level);
    }
  }
  return levels.sort((a, b) => a - b);
}

const FILLER = 'f'.repeat(200);

/**
 * The shape every scenario needs: `base` committed and fully compacted into the top level (one
 * large run), then small commits of `update` until one compacts. The picker takes the small runs
 * only and writes them to a level between 0 and the top, above the key's older record.
 */
function compactAboveOlder(w: TableWriter, base: () => void, update: (i: number) => void): void {
  base();
  for (let i = 0; i < 300; i++) w.writeRecord({ k: `filler${String(i).padStart(4, '0')}`, a: FILLER, b: FILLER, n: 1n });
  w.commit();
  w.compact(true);
  for (let i = 0; i < 8; i++) {
    update(i);
    if (w.commit().compactSnapshotId !== undefined) return;
  }
  throw new Error('no compaction after the base');
}

const FIELDS: SchemaSpec['fields'] = [
  { name: 'k', type: 'STRING' },
  { name: 'a', type: 'STRING' },
  { name: 'b', type: 'STRING' },
  { name: 'n', type: 'BIGINT' },
];
const LEVELS = { bucket: '1', 'num-sorted-run.compaction-trigger': '3', 'num-levels': '5' };

describe('records above level 0 are fully merged where Java reads only the newest of them', () => {
  it('partial-update, changelog-producer=lookup: a column in an older level is not lost', () => {
    const t = newTable({ fields: FIELDS, primaryKeys: ['k'], options: { ...LEVELS, 'merge-engine': 'partial-update', 'changelog-producer': 'lookup' } });
    const w = t.newWriter();
    compactAboveOlder(w, () => w.writeRecord({ k: 'key', a: 'A', b: null, n: null }), (i) => w.writeRecord({ k: 'key', a: null, b: `B${i}`, n: null }));
    const here = t.scanRows();
    expect(here.find((r) => r[0] === 'key')).toEqual(['key', 'A', expect.stringMatching(/^B/), null]);
    expect(javaRows(t)).toEqual(sortRows(here));
    expect(levelsOf(t, 'key')).toEqual([3, 4]); // the complete value above the older record
    w.close();
  });

  it('aggregation (sum), changelog-producer=lookup: the older sum is not left out', () => {
    const t = newTable({ fields: FIELDS, primaryKeys: ['k'], options: { ...LEVELS, 'merge-engine': 'aggregation', 'fields.n.aggregate-function': 'sum', 'changelog-producer': 'lookup' } });
    const w = t.newWriter();
    let total = 100n;
    compactAboveOlder(w, () => w.writeRecord({ k: 'key', a: 'A', b: null, n: 100n }), (i) => {
      w.writeRecord({ k: 'key', a: null, b: `B${i}`, n: BigInt(i + 1) });
      total += BigInt(i + 1);
    });
    const here = t.scanRows();
    expect(here.find((r) => r[0] === 'key')).toEqual(['key', 'A', expect.stringMatching(/^B/), total]);
    expect(javaRows(t)).toEqual(sortRows(here));
    expect(levelsOf(t, 'key')).toEqual([4]); // widened to a full compaction: a sum is never folded twice
    w.close();
  });

  it('partial-update with a sum in a sequence group, changelog-producer=lookup: widened, not folded twice', () => {
    const fields = [...FIELDS, { name: 's', type: 'BIGINT' }];
    const t = newTable({ fields, primaryKeys: ['k'], options: { ...LEVELS, 'merge-engine': 'partial-update', 'fields.s.sequence-group': 'n', 'fields.n.aggregate-function': 'sum', 'changelog-producer': 'lookup' } });
    const w = t.newWriter();
    let total = 100n;
    compactAboveOlder(w, () => w.writeRecord({ k: 'key', a: 'A', b: null, n: 100n, s: 1n }), (i) => {
      w.writeRecord({ k: 'key', a: null, b: `B${i}`, n: BigInt(i + 1), s: BigInt(i + 2) });
      total += BigInt(i + 1);
    });
    const here = t.scanRows();
    expect(here.find((r) => r[0] === 'key')!.slice(0, 4)).toEqual(['key', 'A', expect.stringMatching(/^B/), total]);
    expect(javaRows(t)).toEqual(sortRows(here));
    expect(levelsOf(t, 'key')).toEqual([4]);
    w.close();
  });

  it('aggregation, changelog-producer=lookup: new keys alone do not widen the compaction', () => {
    const t = newTable({ fields: FIELDS, primaryKeys: ['k'], options: { ...LEVELS, 'merge-engine': 'aggregation', 'fields.n.aggregate-function': 'sum', 'changelog-producer': 'lookup' } });
    const w = t.newWriter();
    compactAboveOlder(w, () => w.writeRecord({ k: 'key', a: 'A', b: null, n: 100n }), (i) => w.writeRecord({ k: `new${i}`, a: null, b: null, n: 1n }));
    expect(javaRows(t)).toEqual(sortRows(t.scanRows()));
    expect(levelsOf(t, 'new0')).toEqual([3]);
    w.close();
  });

  it('deduplicate with sequence.field, changelog-producer=lookup: a late record does not hide a newer one', () => {
    const t = newTable({ fields: FIELDS, primaryKeys: ['k'], options: { ...LEVELS, 'sequence.field': 'n', 'changelog-producer': 'lookup' } });
    const w = t.newWriter();
    compactAboveOlder(w, () => w.writeRecord({ k: 'key', a: 'newest', b: null, n: 1000n }), (i) => {
      w.writeRecord({ k: 'key', a: `late${i}`, b: null, n: BigInt(i) });
      w.writeRecord({ k: 'other', a: `other${i}`, b: null, n: BigInt(i) });
    });
    const here = t.scanRows();
    expect(here.find((r) => r[0] === 'key')).toEqual(['key', 'newest', null, 1000n]);
    expect(javaRows(t)).toEqual(sortRows(here));
    expect(levelsOf(t, 'key')).toEqual([4]); // the older winner stands; nothing written above it
    expect(levelsOf(t, 'other')).toEqual([3]);
    w.close();
  });

  it('first-row: a key is in one level above 0 only (Java reads those files unmerged)', () => {
    const t = newTable({ fields: FIELDS, primaryKeys: ['k'], options: { ...LEVELS, 'merge-engine': 'first-row' } });
    const w = t.newWriter();
    compactAboveOlder(w, () => w.writeRecord({ k: 'key', a: 'first', b: null, n: 1n }), (i) => {
      w.writeRecord({ k: 'key', a: `later${i}`, b: null, n: 2n });
      w.writeRecord({ k: `new${i}`, a: 'x', b: null, n: 3n });
    });
    const here = t.scanRows();
    expect(here.filter((r) => r[0] === 'key')).toEqual([['key', 'first', null, 1n]]);
    expect(javaRows(t)).toEqual(sortRows(here));
    expect(levelsOf(t, 'key')).toEqual([4]);
    expect(levelsOf(t, 'new0')).toEqual([3]);
    w.close();
  });

  it('changelog-producer=none: compaction looks nothing up (Java merges every level)', () => {
    const t = newTable({ fields: FIELDS, primaryKeys: ['k'], options: { ...LEVELS, 'merge-engine': 'partial-update' } });
    const w = t.newWriter();
    compactAboveOlder(w, () => w.writeRecord({ k: 'key', a: 'A', b: null, n: null }), (i) => w.writeRecord({ k: 'key', a: null, b: `B${i}`, n: null }));
    const s = t.latestSnapshot()!;
    const b = t.buckets(s)[0]!;
    const mid = b.files.filter((f) => f.level === 3).map((f) => t.loadRun(b.partition, b.bucket, f));
    const i = mid[0]!.keyCols[0]!.indexOf('key');
    expect(kvAt(mid[0]!, i).value.slice(0, 2)).toEqual(['key', null]); // the unit's own fold, as before
    expect(t.scanRows().find((r) => r[0] === 'key')!.slice(0, 2)).toEqual(['key', 'A']);
    w.close();
  });

  it('deletion vectors, partial-update and lookup: level 0 skipped, vectors applied, no merge', () => {
    const t = newTable({ fields: FIELDS, primaryKeys: ['k'], options: { ...LEVELS, 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true', 'changelog-producer': 'lookup', 'deletion-vectors.enabled': 'true' } });
    const w = t.newWriter();
    w.writeRecord({ k: 'key', a: 'A', b: null, n: null });
    for (let i = 0; i < 300; i++) w.writeRecord({ k: `filler${String(i).padStart(4, '0')}`, a: FILLER, b: FILLER, n: 1n });
    w.commit();
    w.compact(true);
    const seen = new Set<number>();
    for (let i = 0; i < 8; i++) {
      w.writeRecord({ k: 'key', a: null, b: `B${i}`, n: BigInt(i) });
      if (i % 3 === 0) w.write([`filler000${i}`, null, null, null], RowKind.DELETE);
      w.commit();
      for (const l of levelsOf(t, 'key')) seen.add(l);
      expect(javaRows(t)).toEqual(sortRows(t.scanRows()));
    }
    expect([...seen].filter((l) => l > 0).length).toBeGreaterThan(1); // the key's rows crossed levels
    expect(t.scanRows().find((r) => r[0] === 'key')).toEqual(['key', 'A', 'B7', 7n]);
    w.close();
  });
});
