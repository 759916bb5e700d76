// ALTER of 'fields.default-aggregate-function': an option creation takes (DECLARED_OPTIONS) and
// Paimon lets an ALTER change (not @Immutable), as an ALTER here changes
// 'fields.<f>.aggregate-function'. Before, the ALTER was refused as an "unknown option" (its key has
// no column part, which the check for 'fields.<f>.<option>' keys required).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { applySchemaChanges } from './schema-change.ts';
import { Table } from './table.ts';
import { TableSchema } from './schema.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const spec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'a', type: 'INT' }, { name: 'b', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '1', 'merge-engine': 'aggregation', 'fields.a.aggregate-function': 'sum' } };

it("ALTER sets and removes 'fields.default-aggregate-function', checked as at creation", () => {
  const d = mkdtempSync(join(tmpdir(), 'alter-dagg-'));
  dirs.push(d);
  const t = Table.create(d, TableSchema.fromSpec(spec, 0));
  t.alter([{ kind: 'setOption', key: 'fields.default-aggregate-function', value: 'max' }]);
  expect(t.schema.options.raw['fields.default-aggregate-function']).toBe('max');
  const w = t.newWriter();
  w.write([1, 1, 7]);
  w.write([1, 2, 3]);
  w.commit();
  w.close();
  expect(t.scanRows()).toEqual([[1, 3, 7]]);
  t.alter([{ kind: 'removeOption', key: 'fields.default-aggregate-function' }]);
  expect(t.schema.options.raw['fields.default-aggregate-function']).toBeUndefined();
  // A function Paimon does not have is refused, naming the option.
  expect(() => applySchemaChanges(t.schema, [{ kind: 'setOption', key: 'fields.default-aggregate-function', value: 'bogus' }], 1)).toThrow(/option 'fields\.default-aggregate-function': unknown aggregate function 'bogus'/);
});
