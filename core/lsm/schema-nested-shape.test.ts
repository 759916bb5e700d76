// A nested type object (ARRAY, MAP, MULTISET, ROW) in a schema file whose members have the wrong
// JSON type, or that lacks one, is a damaged file: Corruption naming the file, as a top-level
// field of the wrong JSON type is (schema-shape.test.ts). What a person writes at creation
// (types.ts parses users' specs too) stays InvalidArgument, and a well-formed but unsupported
// nested type (ROW, MULTISET) stays NotSupported.
import { expect, it } from 'vitest';
import { isCorruption, LsmError } from './errors.ts';
import { TableSchema } from './schema.ts';
import { parseType, type TypeJson } from './types.ts';

const WHERE = '/hq/site-1/db/t/schema/schema-0';
const schemaWith = (type: unknown): string =>
  JSON.stringify({
    version: 3, id: 0, highestFieldId: 1, partitionKeys: [], primaryKeys: ['k'], options: { bucket: '1' }, timeMillis: 1,
    fields: [{ id: 0, name: 'k', type: 'INT NOT NULL' }, { id: 1, name: 'v', type }],
  });
const errorOf = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
};

const WRONG: Array<[string, unknown]> = [
  ['type a number', { type: 5 }],
  ['type missing', { element: 'INT' }],
  ['ARRAY element a number', { type: 'ARRAY', element: 5 }],
  ['ARRAY element null', { type: 'ARRAY', element: null }],
  ['ARRAY element missing', { type: 'ARRAY' }],
  ['ARRAY element an array', { type: 'ARRAY', element: ['INT'] }],
  ['MAP key a number', { type: 'MAP', key: 1, value: 'INT' }],
  ['MAP value missing', { type: 'MAP NOT NULL', key: 'STRING NOT NULL' }],
  ['nested: MAP value ARRAY element true', { type: 'MAP', key: 'STRING NOT NULL', value: { type: 'ARRAY', element: true } }],
  ['MULTISET element a number', { type: 'MULTISET', element: 3 }],
  ['ROW fields a string', { type: 'ROW', fields: 'a' }],
  ['ROW field name a number', { type: 'ROW', fields: [{ id: 2, name: 1, type: 'INT' }] }],
  ['ROW field id a string', { type: 'ROW', fields: [{ id: '2', name: 'a', type: 'INT' }] }],
  ['ROW field type a number', { type: 'ROW', fields: [{ id: 2, name: 'a', type: 7 }] }],
  ['ROW field null', { type: 'ROW', fields: [null] }],
];

it.each(WRONG)('a schema file with a nested type object of the wrong shape (%s) is Corruption naming the file', (_what, type) => {
  const err = errorOf(() => TableSchema.parse(schemaWith(type), WHERE));
  expect(err).toBeInstanceOf(LsmError);
  expect(isCorruption(err), String(err)).toBe(true);
  expect((err as LsmError).path).toBe(WHERE);
});

it('a person\'s type object of that shape stays InvalidArgument; well-formed nested types read, or stay NotSupported', () => {
  for (const [, type] of WRONG.filter(([w]) => !w.startsWith('ROW') && !w.startsWith('MULTISET'))) {
    const err = errorOf(() => parseType(type as TypeJson));
    expect((err as { kind?: string }).kind, JSON.stringify(type)).toBe('InvalidArgument');
  }
  expect(TableSchema.parse(schemaWith({ type: 'MAP', key: 'STRING NOT NULL', value: { type: 'ARRAY', element: 'INT' } }), WHERE).fields[1]!.type.root).toBe('MAP');
  for (const type of [{ type: 'ROW', fields: [{ id: 2, name: 'a', type: 'INT', description: null }] }, { type: 'MULTISET', element: 'INT' }, 'GEOMETRY']) {
    const err = errorOf(() => TableSchema.parse(schemaWith(type), WHERE));
    expect(err).toBeInstanceOf(LsmError);
    expect(isCorruption(err), String(err)).toBe(false);
  }
});
