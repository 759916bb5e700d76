// `TableReader.get` checks its key values as a scan checks its filters (filter-check.ts): a value
// of each key and partition column's in-memory form — a number for INT, a bigint for BIGINT, a
// string for STRING. Before, a key of another kind ('1' for an INT, 7 for a BIGINT) was looked up
// as it was: hashed to another bucket or compared by JS coercion, it found nothing, a silent miss
// (or, by coercion, a row). Now it is InvalidArgument naming the column and what was expected, on
// every lookup path (plain, lookup-changelog, deletion vectors).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';
import { thrownLsmError } from './testing/corruption.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const VARIANTS: Record<string, Record<string, string>> = {
  plain: { bucket: '2' },
  'one bucket': { bucket: '1' },
  'lookup changelog': { bucket: '2', 'changelog-producer': 'lookup' },
  'deletion vectors': { bucket: '2', 'deletion-vectors.enabled': 'true' },
};

function tableWithRows(options: Record<string, string>): Table {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-get-key-types-'));
  dirs.push(dir);
  const spec = {
    fields: [{ name: 'dt', type: 'STRING NOT NULL' }, { name: 'k', type: 'INT NOT NULL' }, { name: 'b', type: 'BIGINT NOT NULL' }, { name: 'v', type: 'STRING' }],
    primaryKeys: ['dt', 'k', 'b'],
    partitionKeys: ['dt'],
    options,
  };
  const t = Table.create(dir, TableSchema.fromSpec(spec, 0));
  const w = t.newWriter();
  for (let k = 1; k <= 3; k++) w.writeRecord({ dt: 'd1', k, b: BigInt(k), v: `v${k}` });
  w.commit();
  w.close();
  return t;
}

it.each(Object.keys(VARIANTS))('%s: a key of the right kinds is found, and its miss is undefined', (variant) => {
  const t = tableWithRows(VARIANTS[variant]!);
  const r = t.reader();
  try {
    expect(r.get({ dt: 'd1', k: 2, b: 2n })).toEqual(['d1', 2, 2n, 'v2']);
    expect(r.get({ dt: 'd1', k: 9, b: 9n })).toBeUndefined();
    expect(r.get({ dt: 'd2', k: 2, b: 2n })).toBeUndefined();
  } finally {
    r.close();
  }
});

it.each(Object.keys(VARIANTS))('%s: a key value of another kind is InvalidArgument naming the column', (variant) => {
  const t = tableWithRows(VARIANTS[variant]!);
  const r = t.reader();
  try {
    for (const [pk, message] of [
      [{ dt: 'd1', k: '2', b: 2n }, /lookup key 'k' \(INT\): expected a number, got "2"$/],
      [{ dt: 'd1', k: 2, b: 2 }, /lookup key 'b' \(BIGINT\): expected a bigint, got number 2$/],
      [{ dt: 'd1', k: 2n, b: 2n }, /lookup key 'k' \(INT\): expected a number, got .*2n?$/],
      [{ dt: 'd1', k: Number.NaN, b: 2n }, /lookup key 'k' \(INT\): expected a number, got .*NaN$/],
      [{ dt: 1, k: 2, b: 2n }, /lookup key 'dt' \(STRING\): expected a string, got number 1$/],
    ] as const) {
      const e = thrownLsmError(() => r.get(pk as Record<string, unknown>));
      expect(e.kind).toBe('InvalidArgument');
      expect(e.message).toMatch(message);
    }
  } finally {
    r.close();
  }
});
