// A schema file's JSON of the wrong shape (not an object, a field of the wrong JSON type) is a
// damaged file: Corruption naming the file, as a torn one is. Before, `null`, `"fields": 3` and
// the like threw a plain TypeError, which `hq pull` (core/sync/hq/mirror.ts `checkJson`) did not
// take for damage and copied the file. A well-formed schema is read as before. Snapshot and tag
// JSON of the wrong shape are checked the same way.
import { expect, it } from 'vitest';
import { isCorruption, LsmError } from './errors.ts';
import { TableSchema } from './schema.ts';
import { snapshotFromJson, snapshotToJson, tagFromJson } from './snapshot.ts';

const WHERE = '/hq/site-1/db/t/schema/schema-0';

const good = (): Record<string, unknown> => JSON.parse(TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '2' } }, 123).serialize()) as Record<string, unknown>;
const withKey = (k: string, v: unknown): string => JSON.stringify({ ...good(), [k]: v });
const withField = (k: string, v: unknown): string => {
  const g = good();
  const fields = g['fields'] as Array<Record<string, unknown>>;
  fields[1] = { ...fields[1], [k]: v };
  return JSON.stringify(g);
};

const WRONG: Array<[string, string]> = [
  ['null', 'null'],
  ['an array', '[]'],
  ['a number', '3'],
  ['a string', '"schema"'],
  ['true', 'true'],
  ['fields: 3', withKey('fields', 3)],
  ['fields: null', withKey('fields', null)],
  ['fields: {}', withKey('fields', {})],
  ['fields: [null]', withKey('fields', [null])],
  ['fields: [3]', withKey('fields', [3])],
  ['a field id a string', withField('id', '1')],
  ['a field id 1.5', withField('id', 1.5)],
  ['a field name a number', withField('name', 7)],
  ['a field type a number', withField('type', 7)],
  ['a field type null', withField('type', null)],
  ['a field type an array', withField('type', ['INT'])],
  ['a field description a number', withField('description', 7)],
  ['id a string', withKey('id', '0')],
  ['id null', withKey('id', null)],
  ['highestFieldId a string', withKey('highestFieldId', '1')],
  ['partitionKeys a string', withKey('partitionKeys', 'k')],
  ['partitionKeys null', withKey('partitionKeys', null)],
  ['primaryKeys [1]', withKey('primaryKeys', [1])],
  ['primaryKeys {}', withKey('primaryKeys', {})],
  ['options null', withKey('options', null)],
  ['options an array', withKey('options', ['bucket'])],
  ['options 3', withKey('options', 3)],
  ['an option a number', withKey('options', { bucket: 2 })],
  ['comment a number', withKey('comment', 3)],
  ['timeMillis a string', withKey('timeMillis', 'now')],
  ['version a string', withKey('version', '3')],
];

it.each(WRONG)('schema JSON of the wrong shape (%s) is Corruption naming the file', (_what, text) => {
  let err: unknown;
  try {
    TableSchema.parse(text, WHERE);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(LsmError);
  expect(isCorruption(err), String(err)).toBe(true);
  expect((err as LsmError).path).toBe(WHERE);
  expect((err as Error).message).toContain(WHERE);
});

it('a well-formed schema reads as before; an unsupported but well-formed one is not corruption', () => {
  const s = TableSchema.parse(JSON.stringify(good()), WHERE);
  expect(s.fields.map((f) => f.name)).toEqual(['k', 'v']);
  expect(s.timeMillis).toBe(123);
  // Optional keys absent or null, as older writers leave them.
  const g = good();
  delete g['version'];
  delete g['timeMillis'];
  g['comment'] = null;
  const old = TableSchema.parse(JSON.stringify(g), WHERE);
  expect(old.timeMillis).toBe(0);
  expect(old.options.bucket).toBe(2);
  // An unknown type and an unknown column in the key are not damage: InvalidArgument, as before.
  for (const text of [withField('type', 'GEOMETRY'), withKey('primaryKeys', ['nope'])]) {
    expect(() => TableSchema.parse(text, WHERE)).toThrow(LsmError);
    try {
      TableSchema.parse(text, WHERE);
    } catch (e) {
      expect(isCorruption(e)).toBe(false);
    }
  }
});

const SNAP = snapshotToJson({
  version: 3, id: 1, schemaId: 0, baseManifestList: 'manifest-list-a', baseManifestListSize: 1, deltaManifestList: 'manifest-list-b', deltaManifestListSize: 1,
  changelogManifestList: null, changelogManifestListSize: null, indexManifest: null, commitUser: 'u', commitIdentifier: 1n, commitKind: 'APPEND', timeMillis: 1,
  totalRecordCount: 1, deltaRecordCount: 1, changelogRecordCount: null, watermark: null, statistics: null, properties: null, nextRowId: null,
});
const snapWith = (k: string, v: unknown): string => JSON.stringify({ ...(JSON.parse(SNAP) as object), [k]: v });

it.each([
  ['null', 'null'],
  ['an array', '[]'],
  ['a number', '3'],
  ['id a string', snapWith('id', '1')],
  ['properties 3', snapWith('properties', 3)],
  ['properties an array', snapWith('properties', ['a'])],
  ['properties of a number', snapWith('properties', { a: 1 })],
  ['commitKind a number', snapWith('commitKind', 1)],
  ['tagCreateTime an object', snapWith('tagCreateTime', {})],
  ['tagTimeRetained a string', snapWith('tagTimeRetained', '1 d')],
])('snapshot/tag JSON of the wrong shape (%s) is Corruption naming the file', (_what, text) => {
  for (const parse of [snapshotFromJson, tagFromJson]) {
    if (parse === snapshotFromJson && text.includes('"tag')) continue;
    let err: unknown;
    try {
      parse(text, WHERE);
    } catch (e) {
      err = e;
    }
    expect(isCorruption(err), String(err)).toBe(true);
    expect((err as LsmError).path).toBe(WHERE);
  }
});
