// An ALTER COLUMN TYPE whose cast would fail on a value the latest snapshot's data files hold is
// refused (schema-change.ts, EVOLUTION-DESIGN.md "Casts"): reads cast old files' values at read
// time, so such an ALTER made every read of the table fail.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { LsmError } from './errors.ts';
import type { SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function newTable(spec: SchemaSpec): Table {
  const d = mkdtempSync(join(tmpdir(), 'lsm-alter-cast-'));
  dirs.push(d);
  const c = new Catalog(d);
  c.createDatabase('db');
  return c.createTable({ database: 'db', table: 't' }, spec);
}

const PK: SchemaSpec = {
  fields: [
    { name: 'k', type: 'INT' },
    { name: 'p', type: 'INT' },
    { name: 'n', type: 'INT' },
    { name: 's', type: 'STRING' },
  ],
  primaryKeys: ['k', 'p'],
  partitionKeys: ['p'],
  options: { bucket: '2' },
};

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
  throw new Error('expected the ALTER to be refused');
}

describe('ALTER COLUMN TYPE against the values the table holds', () => {
  it('refuses a STRING → TIMESTAMP(3) whose cast fails on a stored value, naming column and value; the table still reads', () => {
    const t = newTable(PK);
    write(t, [
      [1, 1, 10, '2026-12-07 09:00:00'],
      [2, 1, 20, null],
      [3, 2, 30, '2026-12-07 10:00:00'],
    ]);
    write(t, [[4, 2, 40, '2026-12-07T10:00:00Z']]);
    const e = refusal(() => t.alter([{ kind: 'updateColumnType', name: 's', type: 'TIMESTAMP(3)' }]));
    expect(e.kind).toBe('InvalidArgument');
    expect(e.message).toMatch(/column 's'/);
    expect(e.message).toContain('2026-12-07T10:00:00Z');
    expect(e.message).toContain('TIMESTAMP(3)');
    expect(t.schema.id).toBe(0);
    expect(t.scanRows()).toHaveLength(4);
  });

  it('refuses when the bad value is only in an older file a later write shadows (the read casts every file)', () => {
    const t = newTable(PK);
    write(t, [[1, 1, 10, 'not a date']]);
    write(t, [[1, 1, 11, '2026-12-07']]);
    expect(t.scanRows()).toEqual([[1, 1, 11, '2026-12-07']]);
    const e = refusal(() => t.alter([{ kind: 'updateColumnType', name: 's', type: 'DATE' }]));
    expect(e.kind).toBe('InvalidArgument');
    expect(e.message).toContain('not a date');
    expect(t.scanRows()).toHaveLength(1);
  });

  it('lets a type change through when every stored value casts, and the table reads in the new type', () => {
    const t = newTable(PK);
    write(t, [[1, 1, 10, '2026-12-07 09:00:00'], [2, 2, 20, null]]);
    t.alter([{ kind: 'updateColumnType', name: 's', type: 'TIMESTAMP(3)' }]);
    expect(t.schema.id).toBe(1);
    const rows = t.scanRows().sort((a, b) => Number(a[0]) - Number(b[0]));
    expect(rows[0]![3]).toBe(Date.UTC(2026, 11, 7, 9) * 1000);
    expect(rows[1]![3]).toBeNull();
  });

  it('checks files written in an older schema with their own type (VARCHAR(10) → STRING → INT)', () => {
    const t = newTable({ fields: [{ name: 'k', type: 'INT' }, { name: 's', type: 'VARCHAR(10)' }], primaryKeys: ['k'], options: { bucket: '1' } });
    write(t, [[1, '12'], [2, 'x']]);
    t.alter([{ kind: 'updateColumnType', name: 's', type: 'STRING' }]);
    write(t, [[3, '7']]);
    const e = refusal(() => t.alter([{ kind: 'updateColumnType', name: 's', type: 'INT' }]));
    expect(e.message).toMatch(/column 's'.*'x'/);
  });

  it('refuses on an append table too, and skips the check for a table with no snapshot', () => {
    const t = newTable({ fields: [{ name: 'a', type: 'INT' }, { name: 's', type: 'STRING' }] });
    t.alter([{ kind: 'updateColumnType', name: 's', type: 'INT' }]);
    expect(t.schema.id).toBe(1);
    const u = newTable({ fields: [{ name: 'a', type: 'INT' }, { name: 's', type: 'STRING' }] });
    write(u, [[1, '5'], [2, '2026-12-07T10:00:00Z']]);
    const e = refusal(() => u.alter([{ kind: 'updateColumnType', name: 's', type: 'TIMESTAMP(3)' }]));
    expect(e.kind).toBe('InvalidArgument');
    expect(u.scanRows()).toHaveLength(2);
  });

  it('does not check a change whose cast cannot fail (INT → STRING, STRING → VARCHAR(2))', () => {
    const t = newTable(PK);
    write(t, [[1, 1, 10, 'long text']]);
    t.alter([{ kind: 'updateColumnType', name: 'n', type: 'STRING' }, { kind: 'updateColumnType', name: 's', type: 'VARCHAR(2)' }]);
    expect(t.scanRows()).toEqual([[1, 1, '10', 'lo']]);
  });
});

describe('ALTER COLUMN TYPE against the types older files hold', () => {
  it('refuses INT → STRING → DATE while a file still holds the column as INT (no INT → DATE cast), and the table still reads', () => {
    const t = newTable({ fields: [{ name: 'k', type: 'INT' }, { name: 's', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '1' } });
    write(t, [[1, 5]]);
    t.alter([{ kind: 'updateColumnType', name: 's', type: 'STRING' }]);
    const e = refusal(() => t.alter([{ kind: 'updateColumnType', name: 's', type: 'DATE' }]));
    expect(e.kind).toBe('InvalidArgument');
    expect(e.message).toMatch(/column 's'.*holds the column as INT/);
    expect(t.scanRows()).toEqual([[1, '5']]);
    // Once a full compaction rewrote the file as STRING, the values decide.
    const w = t.newWriter();
    w.write([1, '2026-12-07']);
    w.commit();
    w.compact(true);
    w.close();
    t.alter([{ kind: 'updateColumnType', name: 's', type: 'DATE' }]);
    expect(t.scanRows()).toEqual([[1, Date.UTC(2026, 11, 7) / 86_400_000]]);
  });
});
