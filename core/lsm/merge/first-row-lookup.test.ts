// merge-engine=first-row with changelog-producer=lookup, a pair Paimon accepts (SchemaValidation:
// "Only support 'none' and 'lookup' changelog-producer on FIRST_ROW merge engine"): the table opens,
// reads and is written, and the lookup changelog holds a +I for each key the table did not have and
// nothing else (Paimon's FirstRowMergeFunctionWrapper). 'input' and 'full-compaction' are refused
// with first-row, as Java refuses them.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RowKind } from '../key-value.ts';
import { TableSchema, type SchemaSpec } from '../schema.ts';
import { Table } from '../table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const spec = (options: Record<string, string>): SchemaSpec => ({
  fields: [{ name: 'k', type: 'STRING NOT NULL' }, { name: 'v', type: 'INT' }],
  primaryKeys: ['k'],
  options: { bucket: '2', 'merge-engine': 'first-row', ...options },
});

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-first-row-lookup-'));
  dirs.push(dir);
  return dir;
}

function commit(t: Table, rows: Array<[string, number, RowKind?]>): void {
  const w = t.newWriter();
  for (const [k, v, kind] of rows) w.writeRecord({ k, v }, kind);
  w.commit();
  w.close();
}

const state = (t: Table) => t.scanRows().map((r) => `${String(r[0])}:${String(r[1])}`).sort();
const changelog = (t: Table, from: number) => [...t.changes({ from, mode: 'changelog' })].map((c) => `${c.kind}${String(c.row[0])}:${String(c.row[1])}`).sort();

describe("first-row with changelog-producer 'lookup'", () => {
  it('is created, written and read; its changelog is +I for new keys only', () => {
    const dir = newDir();
    const t = Table.create(dir, TableSchema.fromSpec(spec({ 'changelog-producer': 'lookup' }), 0));
    commit(t, [['a', 1], ['b', 2], ['a', 9]]);
    commit(t, [['a', 5], ['c', 3], ['c', 4]]);
    commit(t, [['b', 7]]); // changes nothing: no changelog row
    expect(state(t)).toEqual(['a:1', 'b:2', 'c:3']);
    expect(changelog(t, 0)).toEqual(['+Ia:1', '+Ib:2', '+Ic:3']);
    expect(changelog(t, 2)).toEqual([]);
    // After a full compaction (no changelog of its own) a known key still makes none.
    const w = t.newWriter();
    w.compact(true);
    w.close();
    const compacted = t.latestSnapshot()!.id;
    commit(t, [['c', 6], ['e', 5]]);
    expect(state(t)).toEqual(['a:1', 'b:2', 'c:3', 'e:5']);
    expect(changelog(t, compacted)).toEqual(['+Ie:5']);
    expect(state(Table.open(dir))).toEqual(['a:1', 'b:2', 'c:3', 'e:5']);
  });

  it('with ignore-delete a -D changes nothing and is in no changelog', () => {
    const t = Table.create(newDir(), TableSchema.fromSpec(spec({ 'changelog-producer': 'lookup', 'ignore-delete': 'true' }), 0));
    commit(t, [['a', 1]]);
    commit(t, [['a', 1, RowKind.DELETE], ['d', 4]]);
    expect(state(t)).toEqual(['a:1', 'd:4']);
    expect(changelog(t, 1)).toEqual(['+Id:4']);
  });

  it('a table Java made so opens, reads and is written', () => {
    const dir = newDir();
    commit(Table.create(dir, TableSchema.fromSpec(spec({}), 0)), [['a', 1], ['b', 2]]);
    // schema-1 as a Java engine's ALTER … SET ('changelog-producer' = 'lookup') leaves it.
    const json = JSON.parse(readFileSync(join(dir, 'schema', 'schema-0'), 'utf8')) as { id: number; options: Record<string, string> };
    json.id = 1;
    json.options = { ...json.options, 'changelog-producer': 'lookup' };
    writeFileSync(join(dir, 'schema', 'schema-1'), JSON.stringify(json, null, 2));
    const t = Table.open(dir);
    expect(t.schema.options.changelogProducer).toBe('lookup');
    expect(state(t)).toEqual(['a:1', 'b:2']);
    commit(t, [['a', 8], ['c', 3]]);
    expect(state(Table.open(dir))).toEqual(['a:1', 'b:2', 'c:3']);
    expect(changelog(t, 1)).toEqual(['+Ic:3']);
  });

  it("'input' and 'full-compaction' are refused with first-row, as Paimon refuses them", () => {
    for (const p of ['input', 'full-compaction']) {
      expect(() => TableSchema.fromSpec(spec({ 'changelog-producer': p }), 0), p).toThrow(/not allowed with merge-engine 'first-row' \(Paimon takes only 'none' and 'lookup' with it\)/);
    }
  });
});
