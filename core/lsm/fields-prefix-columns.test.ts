// Every `fields.<columns>.<…>` option names columns of the table, as Paimon's
// SchemaValidation.validateFieldsPrefix checks it at create and ALTER for every table (append
// tables and `fields.<f>.default-value` too, not only the aggregate options of a primary-key
// table): refused where the option is set here, naming the option; a schema file written
// elsewhere with one still opens.

import { describe, expect, it } from 'vitest';
import { applySchemaChanges } from './schema-change.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';

const PK: SchemaSpec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '1' } };
const APPEND: SchemaSpec = { fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'INT' }], primaryKeys: [], options: {} };
const create = (base: SchemaSpec, options: Record<string, string>) => TableSchema.fromSpec({ ...base, options: { ...base.options, ...options } }, 0);
const message = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    return `${(e as { kind?: string }).kind ?? ''}: ${(e as Error).message}`;
  }
  return 'accepted';
};
const open = (options: Record<string, string>, primaryKeys: string[]) =>
  TableSchema.parse(
    JSON.stringify({
      version: 3, id: 0, highestFieldId: 1, partitionKeys: [], primaryKeys, timeMillis: 0,
      fields: [{ id: 0, name: 'k', type: 'INT NOT NULL' }, { id: 1, name: 'v', type: 'INT' }],
      options: { bucket: primaryKeys.length ? '1' : '-1', ...options },
    }),
    'schema/schema-0',
  );

describe('fields.<f>.* options name columns of the table (SchemaValidation.validateFieldsPrefix)', () => {
  it('creation refuses an unknown column in default-value (primary-key and append tables) and in the aggregate options of an append table', () => {
    expect(message(() => create(PK, { 'fields.nope.default-value': '1' }))).toMatch(/InvalidArgument.*'fields\.nope\.default-value'.*unknown column 'nope'/);
    expect(message(() => create(APPEND, { 'fields.nope.default-value': '1' }))).toMatch(/InvalidArgument.*'fields\.nope\.default-value'.*unknown column 'nope'/);
    expect(message(() => create(APPEND, { 'fields.nope.aggregate-function': 'sum' }))).toMatch(/InvalidArgument.*'fields\.nope\.aggregate-function'.*unknown column 'nope'/);
    expect(message(() => create(APPEND, { 'fields.v,nope.ignore-retract': 'true' }))).toMatch(/InvalidArgument.*'fields\.v,nope\.ignore-retract'.*unknown column 'nope'/);
    // What Java takes is taken.
    expect(message(() => create(PK, { 'fields.v.default-value': '1' }))).toBe('accepted');
    expect(message(() => create(APPEND, { 'fields.v.aggregate-function': 'sum', 'fields.default-aggregate-function': 'max' }))).toBe('accepted');
  });

  it('ALTER refuses setting one that names an unknown column; the table\'s own options are not re-checked', () => {
    const pk = create(PK, {});
    expect(message(() => applySchemaChanges(pk, [{ kind: 'setOption', key: 'fields.nope.default-value', value: '1' }], 1))).toMatch(/InvalidArgument.*'fields\.nope\.default-value'.*unknown column 'nope'/);
    expect(message(() => applySchemaChanges(pk, [{ kind: 'setOption', key: 'fields.v.default-value', value: '1' }], 1))).toBe('accepted');
    const app = create(APPEND, {});
    expect(message(() => applySchemaChanges(app, [{ kind: 'setOption', key: 'fields.nope.aggregate-function', value: 'sum' }], 1))).toMatch(/InvalidArgument.*'fields\.nope\.aggregate-function'.*unknown column 'nope'/);
    // A table written elsewhere with such an option opens, and an unrelated ALTER goes through.
    const foreign = open({ 'fields.nope.default-value': '1' }, ['k']);
    expect(message(() => applySchemaChanges(foreign, [{ kind: 'setOption', key: 'snapshot.num-retained.min', value: '12' }], 1))).toBe('accepted');
    expect(message(() => open({ 'fields.nope.aggregate-function': 'sum' }, []))).toBe('accepted');
  });
});
