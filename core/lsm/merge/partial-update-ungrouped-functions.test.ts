// Which aggregate functions a partial-update table may give a column outside every sequence
// group, checked against Java Paimon (1.1+, #5034): PartialUpdateMergeFunction.getAggFuncName
// (paimon-core/.../mergetree/compact/PartialUpdateMergeFunction.java, at 5dacde51 lines 698-727)
// takes `fields.<f>.aggregate-function`, else `fields.default-aggregate-function`, and refuses it
// ("Must use sequence group for aggregation functions but not found for field %s") unless the
// column is protected by a sequence group or the function is `last_non_null_value`. Java's factory
// runs when a table is opened for reading or writing, so a table it refuses cannot be read there.

import { describe, expect, it } from 'vitest';
import { LsmError } from '../errors.ts';
import { RowKind, type KeyValue } from '../key-value.ts';
import { applySchemaChanges } from '../schema-change.ts';
import { TableSchema } from '../schema.ts';
import { PartialUpdateMergeFunction } from './partial-update.ts';

const FIELDS = [
  { name: 'id', type: 'INT NOT NULL' },
  { name: 'qty', type: 'INT' },
  { name: 'hi', type: 'INT' },
  { name: 'note', type: 'STRING' },
];
const schemaOf = (options: Record<string, string>) =>
  TableSchema.fromSpec({ fields: FIELDS, primaryKeys: ['id'], options: { bucket: '1', 'merge-engine': 'partial-update', ...options } }, 0);
const errorOf = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return e instanceof LsmError ? `${e.kind}: ${e.message}` : String(e);
  }
  return undefined;
};
let seq = 0;
const I = (...value: unknown[]): KeyValue => ({ key: [value[0]], seq: seq++, kind: RowKind.INSERT, value });

describe('partial-update: aggregate functions on columns outside sequence groups (Java getAggFuncName)', () => {
  it('refuses a function other than last_non_null_value on an ungrouped column, also when the table has groups', () => {
    expect(errorOf(() => schemaOf({ 'fields.hi.sequence-group': 'qty', 'fields.note.aggregate-function': 'max' }))).toMatch(
      /^InvalidArgument: option 'fields.note.aggregate-function': column 'note' is in no sequence group/,
    );
  });

  it('refuses a table default that reaches an ungrouped column, naming the default option', () => {
    expect(errorOf(() => schemaOf({ 'fields.hi.sequence-group': 'qty', 'fields.default-aggregate-function': 'max' }))).toMatch(
      /^InvalidArgument: option 'fields.default-aggregate-function': column 'note' is in no sequence group/,
    );
    // The column's own last_non_null_value wins over the default, as in Java.
    expect(errorOf(() => schemaOf({ 'fields.hi.sequence-group': 'qty', 'fields.default-aggregate-function': 'max', 'fields.note.aggregate-function': 'last_non_null_value' }))).toBeUndefined();
  });

  it('accepts last_non_null_value on an ungrouped column, with or without groups, and folds it as the plain rule', () => {
    expect(errorOf(() => schemaOf({ 'fields.note.aggregate-function': 'last_non_null_value' }))).toBeUndefined();
    expect(errorOf(() => schemaOf({ 'fields.default-aggregate-function': 'last_non_null_value' }))).toBeUndefined();
    // (Not through the default here: that would give the group's qty a function too, which makes
    // the group an ordering key, rule 4 of partial-update.ts, as in Java.)
    const mf = new PartialUpdateMergeFunction(schemaOf({ 'fields.hi.sequence-group': 'qty', 'fields.note.aggregate-function': 'last_non_null_value' }));
    mf.reset();
    mf.add(I(1, 5, 1, 'a'));
    mf.add(I(1, null, null, null));
    mf.add(I(1, null, null, 'b'));
    mf.add(I(1, null, null, null));
    expect(mf.result()?.value).toEqual([1, 5, 1, 'b']);
    // Without functions that change the fold, a complete fold still absorbs older records.
    expect(mf.absorbsOlder).toBe(true);
  });
});

// A function on a group's sequence field: Java's getAggFuncName returns none for it ("no agg for
// sequence fields", PartialUpdateMergeFunction.java at 5dacde51 lines 704-707) and no validation
// refuses it, so a table Java made may hold one. It opens here and the group folds as without it;
// creating one here is still refused (the option would do nothing).
describe('partial-update: a function on a sequence-group sequence field', () => {
  const javaSchema = (options: Record<string, string>) =>
    TableSchema.parse(
      JSON.stringify({
        version: 3,
        id: 0,
        fields: FIELDS.map((f, id) => ({ id, ...f })),
        highestFieldId: FIELDS.length - 1,
        partitionKeys: [],
        primaryKeys: ['id'],
        options: { bucket: '1', 'merge-engine': 'partial-update', ...options },
        timeMillis: 0,
      }),
      'schema-0',
    );

  it('opens in a table Java made, and is ignored as Java ignores it', () => {
    const schema = javaSchema({ 'fields.hi.sequence-group': 'qty', 'fields.hi.aggregate-function': 'max' });
    const mf = new PartialUpdateMergeFunction(schema);
    mf.reset();
    mf.add(I(1, 5, 2, 'a'));
    mf.add(I(1, null, 3, null)); // newer group sequence: the group is replaced, nulls included
    mf.add(I(1, 9, 1, 'b')); // older: ignored
    expect(mf.result()?.value).toEqual([1, null, 3, 'b']);
  });

  it('is refused when a table is created here', () => {
    expect(errorOf(() => schemaOf({ 'fields.hi.sequence-group': 'qty', 'fields.hi.aggregate-function': 'max' }))).toMatch(
      /^InvalidArgument: option 'fields.hi.aggregate-function': column 'hi' is a sequence-group sequence field/,
    );
  });
});

describe('partial-update: a table an earlier version made with a function outside its groups', () => {
  it('opens and reads as that version wrote it (the function aggregating): only creation and ALTER refuse it', () => {
    const made = TableSchema.parse(
      JSON.stringify({
        version: 3,
        id: 0,
        fields: FIELDS.map((f, id) => ({ id, ...f })),
        highestFieldId: FIELDS.length - 1,
        partitionKeys: [],
        primaryKeys: ['id'],
        options: { bucket: '1', 'merge-engine': 'partial-update', 'fields.hi.sequence-group': 'qty', 'fields.note.aggregate-function': 'max' },
        timeMillis: 0,
      }),
      'schema-0',
    );
    const mf = new PartialUpdateMergeFunction(made);
    mf.reset();
    mf.add(I(1, 5, 1, 'b'));
    mf.add(I(1, null, null, 'a'));
    expect(mf.result()?.value).toEqual([1, 5, 1, 'b']);
  });

  it('an ALTER that sets such a function is refused', () => {
    const s = schemaOf({ 'fields.hi.sequence-group': 'qty' });
    expect(errorOf(() => applySchemaChanges(s, [{ kind: 'setOption', key: 'fields.note.aggregate-function', value: 'max' }], 1))).toMatch(
      /^InvalidArgument: option 'fields.note.aggregate-function': column 'note' is in no sequence group/,
    );
    expect(errorOf(() => applySchemaChanges(s, [{ kind: 'setOption', key: 'fields.note.aggregate-function', value: 'last_non_null_value' }], 1))).toBeUndefined();
  });
});
