// A partial-update column in two sequence groups ('fields.g.sequence-group' = 'a' and
// 'fields.h.sequence-group' = 'a'; or a group's sequence field that another group lists as a
// column). Paimon refuses it when the table is created ("Field a is defined repeatedly by multiple
// groups": SchemaValidation builds the merge function factory). Here the table was created, and
// then every write and read failed ("column 'a' belongs to two sequence groups", the merge
// function's check): an ingest table that takes no row. Creation now refuses it, naming the option.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const fresh = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'seqgroup-overlap-'));
  dirs.push(d);
  return d;
};
const spec = (options: Record<string, string>): SchemaSpec => ({
  fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'a', type: 'INT' }, { name: 'g', type: 'INT' }, { name: 'h', type: 'INT' }],
  primaryKeys: ['k'],
  options: { bucket: '1', 'merge-engine': 'partial-update', ...options },
});

function refusal(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LsmError);
    return e as LsmError;
  }
  throw new Error('expected a refusal, nothing was thrown');
}

describe('a column in two sequence groups', () => {
  it.each([
    [{ 'fields.g.sequence-group': 'a', 'fields.h.sequence-group': 'a' }, 'a'],
    [{ 'fields.g.sequence-group': 'h', 'fields.h.sequence-group': 'a' }, 'h'],
  ])('is refused at creation, naming the option and the column (%j)', (options, column) => {
    const e = refusal(() => Table.create(fresh(), TableSchema.fromSpec(spec(options), 0)));
    expect(e.kind).toBe('InvalidArgument');
    expect(e.message).toMatch(/option 'fields\.[gh]\.sequence-group'/);
    expect(e.message).toContain(`column '${column}'`);
    expect(e.message).toMatch(/two sequence groups/);
  });

  it('a group listing its own sequence field, and disjoint groups, are created and written', () => {
    for (const options of [{ 'fields.g.sequence-group': 'g,a' }, { 'fields.g.sequence-group': 'a', 'fields.h.sequence-group': 'h' }] as Record<string, string>[]) {
      const t = Table.create(fresh(), TableSchema.fromSpec(spec(options), 0));
      const w = t.newWriter();
      w.write([1, 1, 1, 1]);
      w.write([1, 2, 2, 2]);
      w.commit();
      w.close();
      expect(t.scanRows()).toEqual([[1, 2, 2, 2]]);
    }
  });
});
