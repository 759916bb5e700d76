// An ALTER's `fields.<column>.*` option is checked against the ALTER's result, as Paimon's
// SchemaManager does (it renames the columns in every option, those set by the same ALTER too,
// then validateFieldsPrefix): an option set for a column the same ALTER renames afterwards names
// the column by its new name, and one set then removed again is not there to check.

import { describe, expect, it } from 'vitest';
import { applySchemaChanges } from './schema-change.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';

const PK: SchemaSpec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '1' } };

describe("fields.<f>.* set in an ALTER that renames f (Paimon's applyRenameColumnsToOptions)", () => {
  it('takes a set option whose column the same ALTER renames afterwards, under the new name', () => {
    const pk = TableSchema.fromSpec(PK, 0);
    const next = applySchemaChanges(pk, [{ kind: 'setOption', key: 'fields.v.default-value', value: '1' }, { kind: 'renameColumn', from: 'v', to: 'w' }], 1);
    expect(next.options.raw).toMatchObject({ 'fields.w.default-value': '1' });
    expect(next.options.raw['fields.v.default-value']).toBeUndefined();
  });

  it('checks the renamed option still: an unknown column, or an ignore-retract that is no boolean', () => {
    const pk = TableSchema.fromSpec(PK, 0);
    expect(() => applySchemaChanges(pk, [{ kind: 'setOption', key: 'fields.v,nope.default-value', value: '1' }, { kind: 'renameColumn', from: 'v', to: 'w' }], 1)).toThrow(/'fields\.w,nope\.default-value' names unknown column 'nope'/);
    expect(() => applySchemaChanges(pk, [{ kind: 'setOption', key: 'fields.v.ignore-retract', value: 'yes' }, { kind: 'renameColumn', from: 'v', to: 'w' }], 1)).toThrow(/fields\.w\.ignore-retract/);
  });
});
