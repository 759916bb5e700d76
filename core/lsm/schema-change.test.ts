// Schema evolution: ALTER rules (schema-change.ts), casts (cast.ts), and reads of old files
// through field ids (data-file-format.ts) — checked against a model over random write / alter /
// compact sequences.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { castFunction, javaDoubleToString } from './cast.ts';
import { Catalog } from './catalog.ts';
import { RowKind } from './key-value.ts';
import type { SchemaChange } from './schema-change.ts';
import type { SchemaSpec } from './schema.ts';
import type { Table } from './table.ts';
import { parseType } from './types.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function newTable(spec: SchemaSpec): Table {
  const d = mkdtempSync(join(tmpdir(), 'lsm-evo-'));
  dirs.push(d);
  const c = new Catalog(d);
  c.createDatabase('db');
  return c.createTable({ database: 'db', table: 't' }, spec);
}

const BASE: SchemaSpec = {
  fields: [
    { name: 'k', type: 'INT' },
    { name: 'p', type: 'INT' },
    { name: 'a', type: 'INT' },
    { name: 'b', type: 'STRING' },
    { name: 'c', type: 'DOUBLE' },
  ],
  primaryKeys: ['k', 'p'],
  partitionKeys: ['p'],
  options: { bucket: '2' },
};

describe('ALTER rules', () => {
  it('adds, renames, drops, retypes and writes schema-<N+1> with highestFieldId maintained', () => {
    const t = newTable(BASE);
    t.alter([{ kind: 'addColumn', name: 'd', type: 'INT' }]);
    expect(t.schema.id).toBe(1);
    expect(t.schema.highestFieldId).toBe(5);
    t.alter([{ kind: 'dropColumn', name: 'd' }]);
    t.alter([{ kind: 'addColumn', name: 'd', type: 'STRING', position: { first: true } }]);
    // A dropped-then-re-added column gets a new id.
    expect(t.schema.fields[0]).toMatchObject({ id: 6, name: 'd' });
    expect(t.schema.highestFieldId).toBe(6);
    t.alter([{ kind: 'renameColumn', from: 'k', to: 'key' }]);
    expect(t.schema.primaryKeys).toEqual(['key', 'p']);
    t.alter([{ kind: 'updateColumnType', name: 'a', type: 'BIGINT' }, { kind: 'addColumn', name: 'e', type: 'INT', position: { after: 'a' } }]);
    const json = JSON.parse(readFileSync(t.paths.schemaFile(t.schema.id), 'utf8'));
    expect(json.id).toBe(5);
    expect(json.fields.map((f: { name: string; type: string }) => `${f.name}:${f.type}`)).toEqual([
      'd:STRING', 'key:INT NOT NULL', 'p:INT NOT NULL', 'a:BIGINT', 'e:INT', 'b:STRING', 'c:DOUBLE',
    ]);
    expect(json.highestFieldId).toBe(7);
  });

  it.each<[SchemaChange, RegExp]>([
    [{ kind: 'renameColumn', from: 'p', to: 'q' }, /partition column 'p'/],
    [{ kind: 'dropColumn', name: 'k' }, /primary-key column 'k'/],
    [{ kind: 'dropColumn', name: 'p' }, /column 'p'/],
    [{ kind: 'updateColumnType', name: 'k', type: 'BIGINT' }, /primary-key column 'k'/],
    [{ kind: 'updateColumnType', name: 'c', type: 'DATE' }, /column 'c': cannot change type DOUBLE to DATE/],
    [{ kind: 'updateColumnType', name: 'b', type: 'STRING NOT NULL' }, /nullable column to NOT NULL/],
    [{ kind: 'addColumn', name: 'z', type: 'INT NOT NULL' }, /must be nullable/],
    [{ kind: 'addColumn', name: 'a', type: 'INT' }, /already exists/],
    [{ kind: 'renameColumn', from: 'a', to: 'b' }, /already exists/],
    [{ kind: 'setOption', key: 'merge-engine', value: 'partial-update' }, /'merge-engine' cannot be changed/],
    [{ kind: 'setOption', key: 'bucket', value: '4' }, /'bucket' cannot be changed/],
    [{ kind: 'setOption', key: 'fields.a.sequence-group', value: 'b' }, /cannot be changed/],
    [{ kind: 'setOption', key: 'no.such', value: 'x' }, /unknown option/],
    [{ kind: 'updateColumnNullability', name: 'k', nullable: true }, /must stay NOT NULL/],
  ])('refuses %j', (change, message) => {
    const t = newTable(BASE);
    expect(() => t.alter([change])).toThrow(message);
    expect(t.schema.id).toBe(0);
  });

  it('allows mutable options, refuses ignore-delete true→false, and refuses dropping a sequence field', () => {
    const t = newTable({ ...BASE, options: { bucket: '1', 'sequence.field': 'a', 'ignore-delete': 'true' } });
    t.alter([{ kind: 'setOption', key: 'snapshot.num-retained.min', value: '3' }]);
    expect(t.schema.options.snapshotsRetainedMin).toBe(3);
    expect(() => t.alter([{ kind: 'setOption', key: 'ignore-delete', value: 'false' }])).toThrow(/true to false/);
    expect(() => t.alter([{ kind: 'dropColumn', name: 'a' }])).toThrow(/'sequence.field' names it/);
  });

  it('honours disable-explicit-type-casting', () => {
    const t = newTable({ ...BASE, options: { bucket: '1', 'disable-explicit-type-casting': 'true' } });
    t.alter([{ kind: 'updateColumnType', name: 'a', type: 'BIGINT' }]);
    expect(() => t.alter([{ kind: 'updateColumnType', name: 'c', type: 'INT' }])).toThrow(/explicit cast/);
  });

  it('refuses an ALTER while a writer is open', () => {
    const t = newTable(BASE);
    const w = t.newWriter();
    expect(() => t.alter([{ kind: 'addColumn', name: 'z', type: 'INT' }])).toThrow(/writer/);
    w.close();
    t.alter([{ kind: 'addColumn', name: 'z', type: 'INT' }]);
  });
});

describe('casts as Paimon reads old values', () => {
  const cast = (from: string, to: string, v: unknown) => castFunction(parseType(from), parseType(to), 'x')(v);
  it('widens, truncates, wraps and prints like Java', () => {
    expect(cast('INT', 'BIGINT', 7)).toBe(7n);
    expect(cast('DOUBLE', 'INT', 11.9)).toBe(11);
    expect(cast('DOUBLE', 'INT', -11.9)).toBe(-11);
    expect(cast('DOUBLE', 'INT', 1e12)).toBe(2147483647);
    expect(cast('DOUBLE', 'INT', Number.NaN)).toBe(0);
    expect(cast('BIGINT', 'INT', 4294967297n)).toBe(1);
    expect(cast('INT', 'TINYINT', 300)).toBe(44);
    expect(cast('BOOLEAN', 'STRING', true)).toBe('true');
    expect(cast('DOUBLE', 'STRING', 110)).toBe('110.0');
    expect(cast('STRING', 'BYTES', 'hé')).toEqual(new Uint8Array([0x68, 0xc3, 0xa9]));
    expect(cast('STRING', 'INT', ' 42 ')).toBe(42);
    expect(() => cast('STRING', 'INT', 'x')).toThrow(/column 'x'/);
    expect(cast('DECIMAL(5, 2)', 'DECIMAL(4, 1)', 12345n)).toBe(1235n);
    expect(cast('DECIMAL(5, 2)', 'DECIMAL(3, 2)', 12345n)).toBeNull();
    expect(cast('DATE', 'TIMESTAMP(3)', 1)).toBe(86_400_000_000);
    expect(cast('TIMESTAMP(6)', 'TIMESTAMP(3)', 1_234_567)).toBe(1_234_000);
    expect(cast('INT', 'DECIMAL(10, 2)', 5)).toBe(500n);
    expect(cast('DOUBLE', 'DECIMAL(10, 2)', 1.005)).toBe(101n);
    expect(cast('VARCHAR(3)', 'STRING', 'abc')).toBe('abc');
    expect(cast('STRING', 'VARCHAR(2)', 'abc')).toBe('ab');
    expect(cast('INT', 'BOOLEAN', 0)).toBe(false);
    expect(cast('INT', 'STRING', null)).toBeNull();
    expect(javaDoubleToString(1e20)).toBe('1.0E20');
    expect(javaDoubleToString(0.1, true)).toBe('0.1');
  });
});

describe('reading old files through field ids', () => {
  it('keeps the sequence.field ordering across renames (options follow the rename)', () => {
    const t = newTable({
      fields: [{ name: 'k', type: 'INT' }, { name: 's', type: 'INT' }, { name: 'v', type: 'STRING' }],
      primaryKeys: ['k'],
      options: { bucket: '1', 'sequence.field': 's' },
    });
    let w = t.newWriter();
    w.write([1, 10, 'new']);
    w.commit();
    w.close();
    t.alter([{ kind: 'renameColumn', from: 's', to: 'seq' }, { kind: 'renameColumn', from: 'k', to: 'id' }]);
    expect(t.schema.options.raw['sequence.field']).toBe('seq');
    w = t.newWriter();
    w.write([1, 5, 'stale']); // lower sequence value: loses although written later
    w.write([2, 1, 'two']);
    w.commit();
    expect(t.scanRows()).toEqual([[1, 10, 'new'], [2, 1, 'two']]);
    w.compact(true);
    expect(t.scanRows()).toEqual([[1, 10, 'new'], [2, 1, 'two']]);
    expect(t.reader().get({ id: 1 })).toEqual([1, 10, 'new']);
    w.close();
  });

  it('matches a model over random writes, ALTERs and compactions', () => {
    type Col = { id: number; name: string; type: 'INT' | 'BIGINT' | 'STRING' };
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 4; round++) {
      const t = newTable({ fields: [{ name: 'k', type: 'INT' }, { name: 'c0', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '2', 'num-sorted-run.compaction-trigger': '3' } });
      let cols: Col[] = [{ id: 1, name: 'c0', type: 'INT' }];
      let nextName = 1;
      // model: key → (field id → value in the column's current type)
      const model = new Map<number, Map<number, unknown>>();
      const valueOf = (c: Col, x: number): unknown => (c.type === 'INT' ? x : c.type === 'BIGINT' ? BigInt(x) : `s${x}`);
      for (let step = 0; step < 25; step++) {
        const op = rnd(10);
        if (op < 6) {
          const w = t.newWriter();
          for (let i = 0; i < 1 + rnd(20); i++) {
            const k = rnd(30);
            if (rnd(8) === 0) {
              w.write([k, ...cols.map(() => null)], RowKind.DELETE);
              model.delete(k);
              continue;
            }
            const row = cols.map((c) => (rnd(5) === 0 ? null : valueOf(c, rnd(1000))));
            w.write([k, ...row]);
            model.set(k, new Map(cols.map((c, j) => [c.id, row[j]])));
          }
          w.commit();
          if (rnd(3) === 0) w.compact(rnd(2) === 0);
          w.close();
        } else {
          const kind = rnd(4);
          if (kind === 0 || cols.length === 0) {
            const c: Col = { id: t.schema.highestFieldId + 1, name: `c${nextName++}`, type: rnd(2) ? 'INT' : 'STRING' };
            t.alter([{ kind: 'addColumn', name: c.name, type: c.type }]);
            cols.push(c);
          } else if (kind === 1 && cols.length > 1) {
            const c = cols[rnd(cols.length)]!;
            t.alter([{ kind: 'dropColumn', name: c.name }]);
            cols = cols.filter((x) => x !== c);
            for (const m of model.values()) m.delete(c.id);
          } else if (kind === 2) {
            const c = cols[rnd(cols.length)]!;
            const to = `c${nextName++}`;
            t.alter([{ kind: 'renameColumn', from: c.name, to }]);
            c.name = to;
          } else {
            const c = cols.find((x) => x.type !== 'STRING');
            if (c) {
              const to = c.type === 'INT' && rnd(2) ? 'BIGINT' : 'STRING';
              const f = castFunction(parseType(c.type), parseType(to), c.name);
              t.alter([{ kind: 'updateColumnType', name: c.name, type: to }]);
              for (const m of model.values()) if (m.has(c.id)) m.set(c.id, f(m.get(c.id)));
              c.type = to;
            }
          }
        }
        const expected = [...model.entries()].sort((a, b) => a[0] - b[0]).map(([k, m]) => [k, ...cols.map((c) => m.get(c.id) ?? null)]);
        const actual = t.scanRows().sort((a, b) => (a[0] as number) - (b[0] as number));
        expect(t.schema.fields.map((f) => f.name)).toEqual(['k', ...cols.map((c) => c.name)]);
        expect(actual).toEqual(expected);
      }
    }
  });
});
