// `full-compaction.delta-commits` on a bucket-unaware append table (bucket -1, the default of an
// append table): Paimon refuses it (SchemaValidation.validateBucket: "AppendOnlyTable of unaware or
// dynamic bucket does not support 'full-compaction.delta-commits'") at create, at every ALTER and in
// every table copy its engines make (dynamic options, time travel), so Flink and Spark could not
// alter or time-travel such a table. Here it was accepted and ignored (the option only drives
// primary-key writers). Creation and an ALTER setting it are refused; a table that has it opens.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  const d = mkdtempSync(join(tmpdir(), 'append-fcdc-'));
  dirs.push(d);
  return d;
};
const APPEND: SchemaSpec = { fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'STRING' }], primaryKeys: [], options: {} };

function refusal(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LsmError);
    return e as LsmError;
  }
  throw new Error('expected a refusal, nothing was thrown');
}

function expectRefusal(e: LsmError): void {
  expect(e.kind).toBe('InvalidArgument');
  expect(e.message).toContain("option 'full-compaction.delta-commits'");
  expect(e.message).toMatch(/bucket-unaware append table/);
  expect(e.message).toMatch(/Paimon refuses/);
}

describe("full-compaction.delta-commits on an append table without a fixed bucket count", () => {
  for (const options of [{ 'full-compaction.delta-commits': '1' }, { bucket: '-1', 'full-compaction.delta-commits': '3' }] as Record<string, string>[]) {
    it(`is refused at creation (${JSON.stringify(options)})`, () => {
      expectRefusal(refusal(() => Table.create(fresh(), TableSchema.fromSpec({ ...APPEND, options }, 0))));
    });
  }

  it('is refused at ALTER; the table is unchanged', () => {
    const dir = fresh();
    const t = Table.create(dir, TableSchema.fromSpec(APPEND, 0));
    expectRefusal(refusal(() => t.alter([{ kind: 'setOption', key: 'full-compaction.delta-commits', value: '2' }])));
    expect(Table.open(dir).schema.id).toBe(0);
  });

  it('a fixed-bucket append table and a primary-key table take it, as in Paimon', () => {
    expect(() => TableSchema.fromSpec({ ...APPEND, options: { bucket: '2', 'bucket-key': 'k', 'full-compaction.delta-commits': '2' } }, 0)).not.toThrow();
    expect(() => TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1', 'full-compaction.delta-commits': '2' } }, 0)).not.toThrow();
  });

  it('a table that already has it (an earlier version made it) opens, reads, writes and takes other ALTERs', () => {
    const dir = fresh();
    const t = Table.create(dir, TableSchema.fromSpec(APPEND, 0));
    const json = JSON.parse(readFileSync(join(dir, 'schema', 'schema-0'), 'utf8')) as { id: number; options: Record<string, string> };
    json.id = 1;
    json.options = { ...json.options, 'full-compaction.delta-commits': '1' };
    writeFileSync(join(dir, 'schema', 'schema-1'), JSON.stringify(json, null, 2));
    void t;
    const old = Table.open(dir);
    const w = old.newWriter();
    w.write([1, 'a']);
    w.commit();
    w.close();
    expect(Table.open(dir).scanRows()).toEqual([[1, 'a']]);
    old.alter([{ kind: 'setOption', key: 'snapshot.num-retained.min', value: '3' }]);
    expect(Table.open(dir).schema.options.raw['full-compaction.delta-commits']).toBe('1');
  });
});
