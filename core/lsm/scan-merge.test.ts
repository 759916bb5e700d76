// The scan's merge of sorted runs (table-read.ts BucketScan): key order across runs when string
// keys leave the range where JavaScript's `<` agrees with UTF-8 byte order (and lookups' file
// range checks on such keys), and scans of one reader consumed interleaved.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { PackedColumn, packRun, runFromRecords } from './data-file.ts';
import { RowKind, type KeyValue } from './key-value.ts';
import type { SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';
import { runIsFolded } from './table-read.ts';
import { compareStrings } from './types.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SPEC: SchemaSpec = {
  fields: [
    { name: 'k', type: 'STRING' },
    { name: 'n', type: 'INT' },
    { name: 'a', type: 'INT' },
    { name: 'b', type: 'INT' },
  ],
  primaryKeys: ['k', 'n'],
  // Every commit stays its own level-0 run, so scans merge them.
  options: { bucket: '1', 'merge-engine': 'partial-update', 'write-only': 'true' },
};

function table(spec: SchemaSpec = SPEC): Table {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-scan-'));
  dirs.push(dir);
  const catalog = new Catalog(dir);
  catalog.createDatabase('db');
  return catalog.createTable({ database: 'db', table: 't' }, spec);
}

/** Writes each batch of rows as its own commit (one sorted run each). */
function commits(t: Table, batches: Array<Array<Record<string, unknown>>>): void {
  const w = t.newWriter();
  for (const rows of batches) {
    for (const r of rows) w.writeRecord(r);
    w.commit();
  }
  w.close();
}

describe('scan merge', () => {
  it('orders string keys by UTF-8 bytes across runs when a run holds surrogates or U+E000–U+FFFF', () => {
    // UTF-16 order puts the surrogate pair (U+1F600) before U+E000; UTF-8 order after it.
    const emoji = '\u{1F600}';
    const priv = '\uE000';
    const t = table();
    commits(t, [
      [{ k: priv, n: 1, a: 1 }, { k: 'm', n: 1, a: 1 }],
      [{ k: emoji, n: 1, b: 2 }, { k: 'm', n: 1, b: 2 }, { k: priv, n: 1, b: 2 }],
      [{ k: emoji, n: 2, a: 3 }, { k: 'z', n: 1, a: 3 }],
    ]);
    expect(t.runsOf(t.buckets(t.latestSnapshot()!)[0]!.files)).toHaveLength(3);
    const rows = t.scanRows({});
    expect(rows).toEqual([
      ['m', 1, 1, 2],
      ['z', 1, 3, null],
      [priv, 1, 1, 2],
      [emoji, 1, null, 2],
      [emoji, 2, 3, null],
    ]);
    const keys = rows.map((r) => r[0] as string);
    expect([...keys].sort(compareStrings)).toEqual(keys);
  });

  it('looks up string keys by UTF-8 order in file key ranges that hold surrogates or U+E000–U+FFFF', () => {
    // A file whose key range is [m, U+1F600] in UTF-8 order: by `<` U+E000 would lie above it.
    const emoji = '\u{1F600}';
    const priv = '\uE000';
    const t = table();
    commits(t, [
      [{ k: 'm', n: 1, a: 1 }, { k: priv, n: 1, a: 2 }, { k: emoji, n: 1, a: 3 }],
      [{ k: 'a', n: 1, b: 4 }, { k: 'b', n: 1, b: 5 }],
      [{ k: priv, n: 1, b: 6 }],
    ]);
    const r = t.reader();
    // Past the hash index's threshold too: both search paths take the range check first.
    for (let round = 0; round < 40; round++) {
      expect(r.get({ k: priv, n: 1 })).toEqual([priv, 1, 2, 6]);
      expect(r.get({ k: emoji, n: 1 })).toEqual([emoji, 1, 3, null]);
      expect(r.get({ k: 'm', n: 1 })).toEqual(['m', 1, 1, null]);
      expect(r.get({ k: 'b', n: 1 })).toEqual(['b', 1, null, 5]);
      expect(r.get({ k: emoji, n: 2 })).toBeUndefined();
      expect(r.get({ k: 'c', n: 1 })).toBeUndefined();
    }
    r.close();
  });

  it('gives each of two interleaved scans of one reader its own rows', () => {
    const t = table();
    // More rows than one batch of the scan, in two overlapping runs.
    const n = 1000;
    commits(t, [
      Array.from({ length: n }, (_, i) => ({ k: `k${String(i).padStart(4, '0')}`, n: 0, a: i })),
      Array.from({ length: n / 2 }, (_, i) => ({ k: `k${String(2 * i).padStart(4, '0')}`, n: 0, b: i })),
    ]);
    const r = t.reader();
    const alone = [...r.scan()];
    expect(alone).toHaveLength(n);
    const g1 = r.scan();
    const g2 = r.scan({ projection: ['a', 'k'] });
    const one: unknown[][] = [];
    const two: unknown[][] = [];
    for (;;) {
      const x = g1.next();
      const y = g2.next();
      if (x.done || y.done) {
        expect(x.done && y.done).toBe(true);
        break;
      }
      one.push(x.value);
      two.push(y.value);
    }
    r.close();
    expect(one).toEqual(alone);
    expect(two).toEqual(alone.map((row) => [row[2], row[0]]));
    expect(alone[2]).toEqual(['k0002', 0, 2, 1]);
    expect(alone[3]).toEqual(['k0003', 0, 3, null]);
  });
});

describe('runIsFolded', () => {
  const t = table({
    fields: [
      { name: 'k', type: 'STRING' },
      { name: 'a', type: 'INT' },
      { name: 's', type: 'BIGINT' },
      { name: 'b', type: 'INT' },
      { name: 'u', type: 'BIGINT' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '1', 'merge-engine': 'partial-update', 'fields.s.sequence-group': 'a', 'fields.u.sequence-group': 'b' },
  });
  const folded = runIsFolded(t.schema);
  /** 12 rows (two bytes of a null bitmap): group a set on even rows, group b on odd ones. */
  const rows = (): unknown[][] =>
    Array.from({ length: 12 }, (_, i) => [`k${String(i).padStart(2, '0')}`, i % 2 === 0 ? i : null, i % 2 === 0 ? BigInt(i) : null, i % 2 ? i : null, i % 2 ? BigInt(i) : null]);
  const run = (values: unknown[][], kind: number = RowKind.INSERT) =>
    runFromRecords(
      values.map((v, i): KeyValue => ({ key: [v[0]], seq: i, kind: (i === 5 ? kind : RowKind.INSERT) as KeyValue['kind'], value: v })),
      1,
      5,
    );
  // Each case in both forms: JS arrays (as writers build runs) and packed (as decoded runs are).
  const both = (values: unknown[][], kind?: number) => {
    const plain = run(values, kind);
    const packed = packRun(plain, [0]);
    expect(packed.valueCols[2]).toBeInstanceOf(PackedColumn);
    return [folded(plain), folded(packed)];
  };

  it('passes rows whose groups without a sequence hold only nulls', () => {
    expect(both(rows())).toEqual([true, true]);
    // A sequence field without nulls: every group has its sequence.
    expect(both(rows().map((r) => [r[0], r[1], 1n, r[3], 2n]))).toEqual([true, true]);
  });

  it('refuses a row with a value in a group whose sequence is null, in any bitmap byte', () => {
    for (const at of [0, 7, 9, 11]) {
      const v = rows();
      v[at]![at % 2 === 0 ? 3 : 1] = 42; // the other group's column, whose sequence is null
      expect(both(v), `row ${at}`).toEqual([false, false]);
    }
  });

  it('refuses a run with a retraction', () => {
    expect(both(rows(), RowKind.DELETE)).toEqual([false, false]);
  });
});
