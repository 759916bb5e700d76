// `sequence.field` checks of Paimon's SchemaValidation.validateSequenceField
// (paimon-core/.../schema/SchemaValidation.java at 5dacde51, lines 1331-1369; the same in 1.0.0):
// an aggregate function on a sequence field ("Should not define aggregation on sequence field")
// and a sequence field named twice ("Sequence field '%s' is defined repeatedly") are refused.
// Java validates at create and ALTER and in every AbstractFileStoreTable.copy (Flink's and Spark's
// sources and sinks copy the table), so those engines could not use a table holding either. A
// table an earlier version of this store made with one still opens here.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { LsmError } from './errors.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const FIELDS = [
  { name: 'id', type: 'INT NOT NULL' },
  { name: 'v', type: 'INT' },
  { name: 's', type: 'BIGINT' },
  { name: 't', type: 'BIGINT' },
];
function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'seq-field-opts-'));
  dirs.push(dir);
  const catalog = new Catalog(dir);
  catalog.createDatabase('db');
  const create = (options: Record<string, string>) => catalog.createTable({ database: 'db', table: 't' }, { fields: FIELDS, primaryKeys: ['id'], options: { bucket: '1', ...options } });
  return { dir, catalog, create };
}
const errorOf = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return e instanceof LsmError ? `${e.kind}: ${e.message}` : String(e);
  }
  return undefined;
};

describe("'sequence.field' option checks as Paimon's SchemaValidation.validateSequenceField", () => {
  it('refuses an aggregate function on a sequence field, whatever the merge engine', () => {
    const { create } = setup();
    for (const engine of ['aggregation', 'deduplicate']) {
      expect(errorOf(() => create({ 'merge-engine': engine, 'sequence.field': 's', 'fields.s.aggregate-function': 'max' }))).toBe(
        "InvalidArgument: option 'fields.s.aggregate-function': column 's' is a 'sequence.field' column, which takes no aggregate function (Paimon refuses it)",
      );
    }
  });

  it('refuses a sequence field named twice', () => {
    const { create } = setup();
    expect(errorOf(() => create({ 'sequence.field': 's,t,s' }))).toBe("InvalidArgument: option 'sequence.field' names column 's' twice");
  });

  it('refuses both by ALTER, and still opens a table an earlier version made with them', () => {
    const { create, dir } = setup();
    const t = create({ 'merge-engine': 'aggregation', 'sequence.field': 's' });
    expect(errorOf(() => t.alter([{ kind: 'setOption', key: 'fields.s.aggregate-function', value: 'sum' }]))).toMatch(/^InvalidArgument: option 'fields.s.aggregate-function': column 's' is a 'sequence.field' column/);
    expect(errorOf(() => t.alter([{ kind: 'setOption', key: 'sequence.field', value: 't,t' }]))).toMatch(/^InvalidArgument: option 'sequence.field' names column 't' twice/);
    expect(errorOf(() => t.alter([{ kind: 'setOption', key: 'sequence.field', value: 's,t' }]))).toBeUndefined();
    const path = join(dir, 'db.db', 't', 'schema', 'schema-0');
    const json = JSON.parse(readFileSync(path, 'utf8')) as { options: Record<string, string> };
    json.options['sequence.field'] = 's,s';
    json.options['fields.s.aggregate-function'] = 'max';
    writeFileSync(path, JSON.stringify(json, null, 2));
    const old = new Catalog(dir).getTable({ database: 'db', table: 't' }).schemaById(0);
    expect(old.options.sequenceFields).toEqual(['s', 's']);
  });
});
