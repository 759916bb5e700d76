// `fields.<f>.ignore-retract` and `fields.<f>.distinct` are booleans Paimon parses only where it
// builds a column's aggregator (FieldAggregatorFactory, when a merge function is created for a
// read or write). A table Java made whose deduplicate or first-row engine never reads them opens
// and works in Java whatever they say; here it was refused at open. Where they are set here
// (creation, ALTER) a value that is not 'true'/'false' is still refused, naming the option.
import { describe, expect, it } from 'vitest';
import { applySchemaChanges } from './schema-change.ts';
import { TableSchema } from './schema.ts';

const open = (options: Record<string, string>) =>
  TableSchema.parse(
    JSON.stringify({
      version: 3, id: 0, highestFieldId: 1, partitionKeys: [], primaryKeys: ['k'], timeMillis: 0,
      fields: [{ id: 0, name: 'k', type: 'INT NOT NULL' }, { id: 1, name: 'v', type: 'STRING' }],
      options: { bucket: '1', 'file.format': 'parquet', ...options },
    }),
    'schema/schema-0',
  );
const create = (options: Record<string, string>) =>
  TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1', ...options } }, 0);

describe('fields.<f>.ignore-retract / distinct that are not booleans', () => {
  for (const engine of ['deduplicate', 'first-row']) {
    it(`a ${engine} table written elsewhere with one opens (no aggregator reads it)`, () => {
      expect(open({ 'merge-engine': engine, 'fields.v.ignore-retract': 'yes' }).options.mergeEngine).toBe(engine);
      expect(open({ 'merge-engine': engine, 'fields.v.distinct': 'maybe' }).options.mergeEngine).toBe(engine);
    });
  }

  it('creation and ALTER refuse one, naming the option', () => {
    expect(() => create({ 'fields.v.ignore-retract': 'yes' })).toThrow(/option 'fields\.v\.ignore-retract': expected 'true' or 'false', got 'yes'/);
    expect(() => create({ 'fields.v.distinct': 'maybe' })).toThrow(/option 'fields\.v\.distinct': expected 'true' or 'false', got 'maybe'/);
    const s = create({});
    expect(() => applySchemaChanges(s, [{ kind: 'setOption', key: 'fields.v.ignore-retract', value: 'yes' }], 1)).toThrow(/option 'fields\.v\.ignore-retract': expected 'true' or 'false'/);
    expect(() => applySchemaChanges(s, [{ kind: 'setOption', key: 'fields.v.distinct', value: 'maybe' }], 1)).toThrow(/option 'fields\.v\.distinct': expected 'true' or 'false'/);
    expect(applySchemaChanges(s, [{ kind: 'setOption', key: 'fields.v.distinct', value: 'TRUE' }], 1).options.raw['fields.v.distinct']).toBe('TRUE');
    // A table written elsewhere keeps its value through an unrelated ALTER.
    expect(applySchemaChanges(open({ 'fields.v.ignore-retract': 'yes' }), [{ kind: 'setOption', key: 'snapshot.num-retained.min', value: '12' }], 1).options.raw['fields.v.ignore-retract']).toBe('yes');
  });

  it('an aggregation table whose aggregator reads one is refused at open, as Paimon fails to build its merge function', () => {
    expect(() => open({ 'merge-engine': 'aggregation', 'fields.v.aggregate-function': 'listagg', 'fields.v.distinct': 'maybe' })).toThrow(/option 'fields\.v\.distinct'/);
  });
});
