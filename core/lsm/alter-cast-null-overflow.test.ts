// ALTER COLUMN TYPE where Java Paimon's cast yields null or throws on a stored value
// (EVOLUTION-DESIGN.md "Casts"): a DECIMAL target that a value overflows reads null
// (Decimal.fromBigDecimal), which a NOT NULL column cannot hold — refused; a FLOAT/DOUBLE NaN or
// infinity cast to DECIMAL throws in Java (BigDecimal.valueOf), so it fails the read — refused.
// Integer narrowing wraps and DOUBLE → FLOAT overflows to infinity, as Java's Number casts.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { castFunction } from './cast.ts';
import { Catalog } from './catalog.ts';
import { LsmError } from './errors.ts';
import type { SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';
import { parseType } from './types.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function newTable(spec: SchemaSpec): Table {
  const d = mkdtempSync(join(tmpdir(), 'lsm-alter-null-'));
  dirs.push(d);
  const c = new Catalog(d);
  c.createDatabase('db');
  return c.createTable({ database: 'db', table: 't' }, spec);
}
function write(t: Table, rows: unknown[][]): void {
  const w = t.newWriter();
  for (const r of rows) w.write(r);
  w.commit();
  w.close();
}
function refusal(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    if (e instanceof LsmError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}
function fileNames(t: Table): string[] {
  return t.buckets(t.latestSnapshot()!).flatMap((b) => b.files.map((f) => f.fileName));
}

describe('ALTER COLUMN TYPE: Java yields null into a NOT NULL column', () => {
  it('refuses DECIMAL(10,2) NOT NULL → DECIMAL(5,2) when a stored value overflows, naming column, value and file', () => {
    const t = newTable({ fields: [{ name: 'k', type: 'INT' }, { name: 'd', type: 'DECIMAL(10,2) NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } });
    write(t, [[1, 12345n], [2, 1234567n]]); // 123.45, 12345.67
    const e = refusal(() => t.alter([{ kind: 'updateColumnType', name: 'd', type: 'DECIMAL(5,2)' }]));
    expect(e.kind).toBe('InvalidArgument');
    expect(e.message).toMatch(/column 'd'/);
    expect(e.message).toContain('12345.67');
    expect(e.message).toContain(fileNames(t)[0]!);
    expect(e.message).toMatch(/NOT NULL/);
    expect(t.schema.id).toBe(0);
    expect(t.scanRows()).toEqual([[1, 12345n], [2, 1234567n]]);
  });

  it('refuses a rounding that overflows (DECIMAL(4,2) 99.95 → DECIMAL(3,1) is 100.0) and BIGINT NOT NULL → DECIMAL(5,0)', () => {
    const t = newTable({ fields: [{ name: 'k', type: 'INT' }, { name: 'd', type: 'DECIMAL(4,2) NOT NULL' }, { name: 'b', type: 'BIGINT NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } });
    write(t, [[1, 9995n, 1234567n]]);
    expect(refusal(() => t.alter([{ kind: 'updateColumnType', name: 'd', type: 'DECIMAL(3,1)' }])).message).toContain('99.95');
    expect(refusal(() => t.alter([{ kind: 'updateColumnType', name: 'b', type: 'DECIMAL(5,0)' }])).message).toContain('1234567');
    // What fits is allowed.
    t.alter([{ kind: 'updateColumnType', name: 'd', type: 'DECIMAL(4,1)' }]);
    expect(t.scanRows()).toEqual([[1, 1000n, 1234567n]]); // 99.95 HALF_UP → 100.0
  });

  it('allows the overflow into a nullable column, which reads null as in Java', () => {
    const t = newTable({ fields: [{ name: 'k', type: 'INT' }, { name: 'd', type: 'DECIMAL(10,2)' }], primaryKeys: ['k'], options: { bucket: '1' } });
    write(t, [[1, 1234567n], [2, 12n]]);
    t.alter([{ kind: 'updateColumnType', name: 'd', type: 'DECIMAL(5,2)' }]);
    expect(t.scanRows()).toEqual([[1, null], [2, 12n]]);
  });

  it('integer narrowing wraps and DOUBLE → FLOAT overflows to Infinity (Java Number casts): allowed into NOT NULL', () => {
    const t = newTable({ fields: [{ name: 'k', type: 'INT' }, { name: 'b', type: 'BIGINT NOT NULL' }, { name: 'x', type: 'DOUBLE NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } });
    write(t, [[1, 4294967297n, 1e300]]);
    t.alter([{ kind: 'updateColumnType', name: 'b', type: 'INT' }, { kind: 'updateColumnType', name: 'x', type: 'FLOAT' }]);
    expect(t.scanRows()).toEqual([[1, 1, Infinity]]);
  });
});

describe('ALTER COLUMN TYPE: FLOAT/DOUBLE NaN or infinity → DECIMAL (Java throws)', () => {
  it('the cast throws naming the column, as BigDecimal.valueOf(NaN) does', () => {
    const cast = castFunction(parseType('DOUBLE'), parseType('DECIMAL(10,2)'), 'x');
    expect(cast(1.5)).toBe(150n);
    for (const v of [NaN, Infinity, -Infinity]) {
      const e = refusal(() => cast(v));
      expect(e.kind).toBe('InvalidArgument');
      expect(e.message).toMatch(/column 'x'/);
    }
  });

  it('refuses the ALTER when a stored value is NaN, also in a nullable column', () => {
    const t = newTable({ fields: [{ name: 'k', type: 'INT' }, { name: 'x', type: 'DOUBLE' }], primaryKeys: ['k'], options: { bucket: '1' } });
    write(t, [[1, 2.5], [2, NaN], [3, null]]);
    const e = refusal(() => t.alter([{ kind: 'updateColumnType', name: 'x', type: 'DECIMAL(10,2)' }]));
    expect(e.kind).toBe('InvalidArgument');
    expect(e.message).toMatch(/column 'x'/);
    expect(e.message).toContain('NaN');
    expect(e.message).toContain(fileNames(t)[0]!);
    expect(t.schema.id).toBe(0);
  });
});
