// A filter (ScanOptions.where) whose value is not of its column's in-memory form, or whose op is
// unknown, is InvalidArgument naming the column and the type expected — before, a string against
// an INT column compared by JS coercion, NaN or `true` matched every row, a null threw a TypeError
// and an unknown op read as '>=' on rows but skipped files. Both scan paths are checked: the
// merged scan of a primary-key table (table-read.ts) and the raw scan of an append table
// (raw-scan.ts).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { LsmError } from './errors.ts';
import type { SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';
import type { Predicate } from './table-read.ts';
import { thrownLsmError } from './testing/corruption.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const FIELDS: SchemaSpec['fields'] = [
  { name: 'k', type: 'INT' },
  { name: 's', type: 'STRING' },
  { name: 'c', type: 'CHAR(2)' },
  { name: 'd', type: 'DOUBLE' },
  { name: 'b', type: 'BIGINT' },
  { name: 'm', type: 'DECIMAL(5, 2)' },
  { name: 'f', type: 'BOOLEAN' },
];

function table(primaryKeys: string[]): Table {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-filter-'));
  dirs.push(dir);
  const c = new Catalog(dir);
  c.createDatabase('db', true);
  const t = c.createTable({ database: 'db', table: 't' }, { fields: FIELDS, primaryKeys, options: { bucket: primaryKeys.length ? '1' : '-1' } });
  const w = t.newWriter();
  w.write([1, 'a', 'x', 1.5, 5n, 150n, false]);
  w.write([2, 'b', 'y', Number.NaN, 6n, 250n, true]);
  w.commit();
  w.close();
  return t;
}

function scanKeys(t: Table, p: Predicate): unknown[] {
  return t.scanRows({}, { where: [p], projection: ['k'] }).map((r) => r[0]).sort();
}

const BAD: [Predicate, RegExp][] = [
  [{ column: 'k', op: '=', value: '1' }, /filter on 'k' \(INT\): expected a number, got "1"/],
  [{ column: 'k', op: '=', value: Number.NaN }, /filter on 'k' \(INT\): expected a number, got number NaN/],
  [{ column: 'k', op: '>=', value: true }, /filter on 'k' \(INT\): expected a number, got boolean true/],
  [{ column: 'k', op: '=', value: 1n }, /filter on 'k' \(INT\): expected a number, got 1n/],
  [{ column: 's', op: '>=', value: 1 }, /filter on 's' \(STRING\): expected a string, got number 1/],
  [{ column: 's', op: '=', value: null }, /filter on 's' \(STRING\): expected a string, got null/],
  [{ column: 'b', op: '=', value: 5 }, /filter on 'b' \(BIGINT\): expected a bigint, got number 5/],
  [{ column: 'm', op: '<', value: 1.5 }, /filter on 'm' \(DECIMAL\(5, 2\)\): expected an unscaled bigint, got number 1.5/],
  [{ column: 'f', op: '=', value: 1 }, /filter on 'f' \(BOOLEAN\): expected a boolean/],
  [{ column: 'k', op: 'prefix', value: '1' }, /prefix filter on 'k' needs a string column, got INT/],
  [{ column: 's', op: 'prefix', value: 1 }, /filter on 's' \(STRING\): expected a string, got number 1/],
  [{ column: 'k', op: '!=' as Predicate['op'], value: 1 }, /filter on 'k': unknown op "!=", expected one of = < <= > >= prefix/],
];

for (const [kind, keys] of [
  ['primary-key table (merged scan)', ['k']],
  ['append table (raw scan)', []],
] as const) {
  describe(`filter values, ${kind}`, () => {
    const t = table([...keys]);
    for (const [p, message] of BAD) {
      it(`${p.column} ${p.op} ${typeof p.value === 'bigint' ? `${p.value}n` : String(p.value)} (${typeof p.value}) is InvalidArgument`, () => {
        const e = thrownLsmError(() => scanKeys(t, p));
        expect(e.kind).toBe('InvalidArgument');
        expect(e.message).toMatch(message);
      });
    }

    it('values of the column form still filter as before', () => {
      expect(scanKeys(t, { column: 'k', op: '<', value: 1.5 })).toEqual([1]);
      expect(scanKeys(t, { column: 'k', op: '<', value: Infinity })).toEqual([1, 2]);
      expect(scanKeys(t, { column: 'd', op: '=', value: Number.NaN })).toEqual([2]);
      expect(scanKeys(t, { column: 'c', op: '<', value: 'xyz' })).toEqual([1]);
      expect(scanKeys(t, { column: 's', op: 'prefix', value: 'b' })).toEqual([2]);
      expect(scanKeys(t, { column: 'b', op: '>', value: 5n })).toEqual([2]);
      expect(scanKeys(t, { column: 'm', op: '=', value: 250n })).toEqual([2]);
      expect(scanKeys(t, { column: 'f', op: '=', value: true })).toEqual([2]);
    });
  });
}
