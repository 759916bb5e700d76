// Deletion vectors beside `changelog-producer` = full-compaction or `merge-engine` = first-row:
// Paimon's SchemaValidation.validateForDeletionVectors refuses both pairs at create and ALTER, so
// a table made here with one could not be created, altered or written by a Java engine (every
// table copy its engines make validates the schema again). Refused here at creation and ALTER,
// with Paimon's reason; a table an earlier version made with such a pair opens, reads and writes.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { LsmError } from './errors.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { applySchemaChanges } from './schema-change.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SPEC = (options: Record<string, string>): SchemaSpec => ({
  fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'STRING' }],
  primaryKeys: ['k'],
  options: { bucket: '1', ...options },
});

const FULL = "'deletion-vectors.enabled' = 'true' conflicts with 'changelog-producer' = 'full-compaction': Paimon refuses the pair (\"Deletion vectors mode is only supported for NONE/INPUT/LOOKUP changelog producer now.\")";
const FIRST = "'deletion-vectors.enabled' = 'true' conflicts with 'merge-engine' = 'first-row': Paimon refuses the pair (\"First row merge engine does not need deletion vectors because there is no deletion of old data in this merge engine.\")";

function refusal(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    if (e instanceof LsmError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('deletion vectors with a changelog producer or merge engine Paimon refuses them with', () => {
  it.each([
    [{ 'changelog-producer': 'full-compaction' }, FULL],
    [{ 'changelog-producer': 'full-compaction', 'num-levels': '2' }, FULL],
    [{ 'merge-engine': 'first-row' }, FIRST],
    [{ 'merge-engine': 'first-row', 'ignore-delete': 'true' }, FIRST],
  ] as Array<[Record<string, string>, string]>)('creation with %j is refused with Paimon\'s reason', (options, why) => {
    // Was: created (documented as written by dv-writer.ts); Java refuses the table at every ALTER and write.
    const e = refusal(() => TableSchema.fromSpec(SPEC({ 'deletion-vectors.enabled': 'true', ...options }), 0));
    expect(e.kind).toBe('InvalidArgument');
    expect(e.message).toContain(why);
  });

  it.each([
    [{}], [{ 'changelog-producer': 'input' }], [{ 'changelog-producer': 'lookup' }],
    [{ 'merge-engine': 'partial-update' }], [{ 'merge-engine': 'aggregation' }],
  ] as Array<[Record<string, string>]>)('creation with %j (pairs Paimon takes) still works', (options) => {
    expect(TableSchema.fromSpec(SPEC({ 'deletion-vectors.enabled': 'true', ...options }), 0).options.raw['deletion-vectors.enabled']).toBe('true');
  });

  it('an ALTER that would make such a pair is refused with Paimon\'s reason', () => {
    const dv = TableSchema.fromSpec(SPEC({ 'deletion-vectors.enabled': 'true' }), 0);
    expect(refusal(() => applySchemaChanges(dv, [{ kind: 'setOption', key: 'changelog-producer', value: 'full-compaction' }], 1)).message).toContain(FULL);
    expect(refusal(() => applySchemaChanges(dv, [{ kind: 'setOption', key: 'merge-engine', value: 'first-row' }], 1)).message).toContain(FIRST);
    const firstRow = TableSchema.fromSpec(SPEC({ 'merge-engine': 'first-row' }), 0);
    expect(refusal(() => applySchemaChanges(firstRow, [{ kind: 'setOption', key: 'deletion-vectors.enabled', value: 'true' }], 1)).message).toContain(FIRST);
    const full = TableSchema.fromSpec(SPEC({ 'changelog-producer': 'full-compaction' }), 0);
    expect(refusal(() => applySchemaChanges(full, [{ kind: 'setOption', key: 'deletion-vectors.enabled', value: 'TRUE' }], 1)).message).toContain(
      "'deletion-vectors.enabled' = 'TRUE' conflicts with 'changelog-producer' = 'full-compaction'",
    );
    // Otherwise these options stay fixed after creation, as before.
    expect(refusal(() => applySchemaChanges(dv, [{ kind: 'setOption', key: 'changelog-producer', value: 'lookup' }], 1)).message).toBe("option 'changelog-producer' cannot be changed after the table is created");
  });

  it.each([
    ['full-compaction changelog', { 'changelog-producer': 'full-compaction' }],
    ['first-row', { 'merge-engine': 'first-row', 'ignore-delete': 'true' }],
  ] as Array<[string, Record<string, string>]>)('a table an earlier version made with deletion vectors and %s opens, reads, writes and alters its other options', (_, options) => {
    const dir = mkdtempSync(join(tmpdir(), 'dv-pairs-'));
    dirs.push(dir);
    const made = TableSchema.fromSpec(SPEC(options), 0).toJson();
    const schema = new TableSchema({ ...made, options: { ...made.options, 'deletion-vectors.enabled': 'true' } }, false);
    const catalog = new Catalog(dir);
    catalog.createDatabase('db');
    catalog.createTable({ database: 'db', table: 't' }, schema);
    const t = catalog.getTable({ database: 'db', table: 't' });
    const w = t.newWriter();
    w.write([1, 'a']);
    w.commit();
    w.write([2, 'b']);
    w.commit();
    w.close();
    expect(t.scanRows()).toEqual([[1, 'a'], [2, 'b']]);
    t.alter([{ kind: 'setOption', key: 'snapshot.num-retained.min', value: '3' }]);
    expect(catalog.getTable({ database: 'db', table: 't' }).scanRows()).toEqual([[1, 'a'], [2, 'b']]);
  });
});
