// `write-buffer-size` = '0': Paimon accepts it at create (MemorySize.parse) and its writer fails at
// the first row (HeapMemorySegmentPool has no page: "Mem table is too small to hold a single
// element."). Here it was accepted too and every row then flushed to a level-0 file of its own.
// Creating such a table, or an ALTER to it, is refused naming the option; a table Java wrote with
// it (a `schema-1` as a Java writer would leave it) still opens and reads.
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
  const d = mkdtempSync(join(tmpdir(), 'wbs0-'));
  dirs.push(d);
  return d;
};
const KV: SchemaSpec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1' } };

function refusal(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LsmError);
    return e as LsmError;
  }
  throw new Error('expected a refusal, nothing was thrown');
}

describe("write-buffer-size '0'", () => {
  for (const size of ['0', '0 b', '0 kb', '0 mb']) {
    it(`is refused at create, naming the option and what is expected (${size})`, () => {
      const e = refusal(() => Table.create(fresh(), TableSchema.fromSpec({ ...KV, options: { ...KV.options, 'write-buffer-size': size } }, 0)));
      expect(e.kind).toBe('InvalidArgument');
      expect(e.message).toContain("option 'write-buffer-size'");
      expect(e.message).toContain('expected a size of at least 1 b');
      expect(e.message).toContain(`got '${size}'`);
    });
  }

  it('is refused at ALTER; the table keeps its option and still writes', () => {
    const dir = fresh();
    const t = Table.create(dir, TableSchema.fromSpec({ ...KV, options: { ...KV.options, 'write-buffer-size': '4 kb' } }, 0));
    const e = refusal(() => t.alter([{ kind: 'setOption', key: 'write-buffer-size', value: '0' }]));
    expect(e.kind).toBe('InvalidArgument');
    expect(e.message).toMatch(/option 'write-buffer-size': expected a size of at least 1 b/);
    expect(t.schema.options.raw['write-buffer-size']).toBe('4 kb');
    expect(Table.open(dir).schema.options.raw['write-buffer-size']).toBe('4 kb');
    t.alter([{ kind: 'setOption', key: 'write-buffer-size', value: '1 mb' }]);
    expect(Table.open(dir).schema.options.writeBufferBytes).toBe(1024 * 1024);
  });

  it('a table Java wrote with it opens and reads', () => {
    const dir = fresh();
    const t = Table.create(dir, TableSchema.fromSpec(KV, 0));
    const w = t.newWriter();
    for (let k = 0; k < 5; k++) w.writeRecord({ k, v: `v${k}` });
    w.commit();
    w.close();
    const json = JSON.parse(readFileSync(join(dir, 'schema', 'schema-0'), 'utf8')) as { id: number; options: Record<string, string> };
    json.id = 1;
    json.options = { ...json.options, 'write-buffer-size': '0 b' };
    writeFileSync(join(dir, 'schema', 'schema-1'), JSON.stringify(json, null, 2));
    const java = Table.open(dir);
    expect(java.schema.options.writeBufferBytes).toBe(0);
    expect(java.scanRows().sort((a, b) => (a[0] as number) - (b[0] as number))).toEqual([0, 1, 2, 3, 4].map((k) => [k, `v${k}`]));
    // And an ALTER of another option on it is not refused for the value Java left.
    java.alter([{ kind: 'setOption', key: 'snapshot.num-retained.min', value: '3' }]);
    expect(Table.open(dir).schema.options.raw['write-buffer-size']).toBe('0 b');
  });
});
