// `full-compaction.delta-commits` with `changelog-producer=lookup`: Paimon 2.0+ refuses the pair
// in SchemaValidation.validateTableSchema (paimon-core/.../schema/SchemaValidation.java at
// 5dacde51, lines 195-209, #7999: "'full-compaction.delta-commits' is incompatible with
// 'changelog-producer'='lookup'"). Java validates there at create and ALTER, and in every
// AbstractFileStoreTable.copy (Flink's and Spark's sources and sinks copy the table with their
// dynamic options), so a table holding both cannot be read or written by those engines. A table
// an earlier writer made with both (Paimon 1.x, an earlier version of this store) still opens here.

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
];
function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'lookup-fc-'));
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

describe("'full-compaction.delta-commits' with changelog-producer 'lookup' (Paimon SchemaValidation, #7999)", () => {
  it('is refused at creation, naming both options', () => {
    const { create } = setup();
    expect(errorOf(() => create({ 'changelog-producer': 'lookup', 'full-compaction.delta-commits': '1' }))).toMatch(
      /^InvalidArgument: option 'full-compaction.delta-commits' conflicts with 'changelog-producer' = 'lookup'/,
    );
  });

  it('is refused by an ALTER that sets it on a lookup table', () => {
    const { create } = setup();
    const t = create({ 'changelog-producer': 'lookup' });
    expect(errorOf(() => t.alter([{ kind: 'setOption', key: 'full-compaction.delta-commits', value: '2' }]))).toMatch(
      /^InvalidArgument: option 'full-compaction.delta-commits' conflicts with 'changelog-producer' = 'lookup'/,
    );
  });

  it('stays accepted with the full-compaction producer, and a table that already holds both opens', () => {
    const { catalog, create, dir } = setup();
    expect(errorOf(() => create({ 'changelog-producer': 'full-compaction', 'full-compaction.delta-commits': '1' }))).toBeUndefined();
    catalog.dropTable({ database: 'db', table: 't' });
    create({ 'changelog-producer': 'lookup' });
    // As a Paimon 1.x writer (or an earlier version of this store) left it.
    const path = join(dir, 'db.db', 't', 'schema', 'schema-0');
    const json = JSON.parse(readFileSync(path, 'utf8')) as { options: Record<string, string> };
    json.options['full-compaction.delta-commits'] = '1';
    writeFileSync(path, JSON.stringify(json, null, 2));
    const t = new Catalog(dir).getTable({ database: 'db', table: 't' });
    expect(t.schema.options.fullCompactionDeltaCommits).toBe(1);
  });
});
