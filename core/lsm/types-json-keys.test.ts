// Paimon's JSON type objects ({"type":"ARRAY","element":…}, {"type":"MAP","key":…,"value":…}):
// a key the type does not take is refused by name (a misspelt 'element' used to be reported as a
// missing 'element'), while every object Java's serializeJson writes still parses.

import { describe, expect, it } from 'vitest';
import { TableSchema } from './schema.ts';
import { parseType, typeToString, type TypeJson } from './types.ts';

describe('parseType: keys of a JSON type object', () => {
  it.each([
    [{ type: 'ARRAY', elemnt: 'INT' }, "ARRAY type object has unknown key 'elemnt': expected only 'type', 'element'"],
    [{ type: 'ARRAY', element: 'INT', nullable: false }, "ARRAY type object has unknown key 'nullable': expected only 'type', 'element'"],
    [{ type: 'MAP', key: 'STRING', vaule: 'INT' }, "MAP type object has unknown key 'vaule': expected only 'type', 'key', 'value'"],
    [{ type: 'MAP NOT NULL', key: 'STRING', value: 'INT', element: 'INT' }, "MAP type object has unknown key 'element': expected only 'type', 'key', 'value'"],
    // Nested: the inner object's typo is the one named.
    [{ type: 'MAP', key: 'INT NOT NULL', value: { type: 'ARRAY', elements: 'DOUBLE' } }, "ARRAY type object has unknown key 'elements'"],
  ])('refuses %j naming the key and the keys the type takes', (json, message) => {
    expect(() => parseType(json as unknown as TypeJson)).toThrow(message);
    try {
      parseType(json as unknown as TypeJson);
    } catch (e) {
      expect((e as { kind?: string }).kind).toBe('InvalidArgument');
    }
  });

  it('parses every object shape Java writes (ArrayType/MapType.serializeJson), nested and NOT NULL', () => {
    const cases: Array<[TypeJson, string]> = [
      [{ type: 'ARRAY', element: 'INT' }, 'ARRAY<INT>'],
      [{ type: 'ARRAY NOT NULL', element: 'STRING NOT NULL' }, 'ARRAY<STRING NOT NULL> NOT NULL'],
      [{ type: 'MAP', key: 'STRING NOT NULL', value: 'DECIMAL(10, 2)' }, 'MAP<STRING NOT NULL, DECIMAL(10, 2)>'],
      [
        { type: 'MAP NOT NULL', key: 'INT NOT NULL', value: { type: 'ARRAY', element: { type: 'MAP', key: 'STRING NOT NULL', value: 'BIGINT' } } },
        'MAP<INT NOT NULL, ARRAY<MAP<STRING NOT NULL, BIGINT>>> NOT NULL',
      ],
    ];
    for (const [json, text] of cases) expect(typeToString(parseType(json))).toBe(text);
    // ROW and MULTISET stay NotSupported (their 'fields'/'element' are not unknown keys).
    expect(() => parseType({ type: 'ROW', fields: [] })).toThrow(/nested ROW columns are not supported/);
    expect(() => parseType({ type: 'MULTISET', element: 'INT' } as TypeJson)).toThrow(/nested MULTISET columns are not supported/);
  });

  it("a table's schema file is read as Paimon reads it (an unknown key ignored); what a person writes at creation is checked", () => {
    const schema = (type: unknown): string =>
      JSON.stringify({
        version: 3,
        id: 0,
        fields: [
          { id: 0, name: 'id', type: 'INT NOT NULL' },
          { id: 1, name: 'tags', type, description: 'labels' },
        ],
        highestFieldId: 1,
        partitionKeys: [],
        primaryKeys: ['id'],
        options: { bucket: '1' },
        timeMillis: 1,
      });
    const ok = TableSchema.parse(schema({ type: 'MAP', key: 'STRING NOT NULL', value: { type: 'ARRAY', element: 'INT' } }), 'schema/schema-0');
    expect(typeToString(ok.fields[1]!.type)).toBe('MAP<STRING NOT NULL, ARRAY<INT>>');
    expect(ok.fields[1]!.description).toBe('labels');
    // A newer Java may add a key to a type object: its tables must still open here.
    const newer = TableSchema.parse(schema({ type: 'ARRAY', element: 'INT', comment: 'x' }), 'schema/schema-0');
    expect(typeToString(newer.fields[1]!.type)).toBe('ARRAY<INT>');
    // A typo there still fails, on the key Paimon's reader would miss too.
    expect(() => TableSchema.parse(schema({ type: 'ARRAY', elemnt: 'INT' }), 'schema/schema-0')).toThrow("ARRAY type object without 'element'");
    // Creation (a schema file given to `table create --schema`) names the misspelt key.
    expect(() =>
      TableSchema.fromSpec({ fields: [{ name: 'id', type: 'INT' }, { name: 'tags', type: { type: 'ARRAY', elemnt: 'INT' } as unknown as TypeJson }], primaryKeys: ['id'] }, 1),
    ).toThrow("ARRAY type object has unknown key 'elemnt'");
  });
});
