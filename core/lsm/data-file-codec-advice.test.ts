// The refusal to write a data file in a codec this store has no writer for (data-file-format.ts)
// advises the `file.compression` values Paimon's writer of the table's own formats takes (options.ts
// checkJavaCodecs refuses the others at ALTER): following the advice must work.
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

const KV: SchemaSpec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1' } };

/** A table made here with `create` options, then a schema-1 a Java writer left with `options`. */
function javaTable(create: Record<string, string>, options: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-codec-advice-'));
  dirs.push(dir);
  const t = Table.create(dir, TableSchema.fromSpec({ ...KV, options: { ...KV.options, ...create } }, 0));
  const w = t.newWriter();
  w.writeRecord({ k: 1, v: 'a' });
  w.commit();
  w.close();
  const json = JSON.parse(readFileSync(join(dir, 'schema', 'schema-0'), 'utf8')) as { id: number; options: Record<string, string> };
  json.id = 1;
  json.options = { ...json.options, ...options };
  writeFileSync(join(dir, 'schema', 'schema-1'), JSON.stringify(json, null, 2));
  return dir;
}

function refusalOf(t: Table): string {
  const w = t.newWriter();
  try {
    w.writeRecord({ k: 2, v: 'b' });
    w.commit();
  } catch (e) {
    expect(e).toBeInstanceOf(LsmError);
    expect((e as LsmError).kind).toBe('NotSupported');
    return (e as LsmError).message;
  } finally {
    w.close();
  }
  throw new Error('expected the write to be refused');
}

function writes(t: Table): number {
  const w = t.newWriter();
  w.writeRecord({ k: 2, v: 'b' });
  w.commit();
  w.close();
  return t.scanRows().length;
}

describe("an unwritable codec's refusal advises the codecs of the table's formats", () => {
  it("Avro (Java's default zstd): advises snappy, deflate or null, and deflate then writes", () => {
    const dir = javaTable({ 'file.format': 'avro', 'file.compression': 'snappy' }, { 'file.compression': 'zstd' });
    const t = Table.open(dir);
    expect(refusalOf(t)).toContain("to write it here, ALTER 'file.compression' to snappy, deflate or null (files already written keep their codec)");
    // What the old advice said is refused at ALTER (Java's Avro writer takes neither).
    expect(() => t.alter([{ kind: 'setOption', key: 'file.compression', value: 'gzip' }])).toThrow(/not a codec Paimon's Avro writer takes/);
    expect(() => t.alter([{ kind: 'setOption', key: 'file.compression', value: 'none' }])).toThrow(/not a codec Paimon's Avro writer takes/);
    t.alter([{ kind: 'setOption', key: 'file.compression', value: 'deflate' }]);
    expect(writes(Table.open(dir))).toBe(2);
  });

  it('Parquet: advises snappy, gzip or none as before', () => {
    const t = Table.open(javaTable({}, { 'file.compression': 'lz4' }));
    expect(refusalOf(t)).toContain("ALTER 'file.compression' to snappy, gzip or none (");
  });

  it('Parquet with a level written in Avro: advises snappy, the one codec both writers take', () => {
    const dir = javaTable({ 'file.format.per.level': '0:avro', 'file.compression': 'snappy' }, { 'file.compression': 'zstd' });
    const t = Table.open(dir);
    expect(refusalOf(t)).toContain("ALTER 'file.compression' to snappy (the one codec both Paimon's Parquet and Avro writers take) (");
    t.alter([{ kind: 'setOption', key: 'file.compression', value: 'snappy' }]);
    expect(writes(Table.open(dir))).toBe(2);
  });
});

// Creation refuses the codecs it cannot write with the same advice (options.ts): lz4 was told
// "use zstd, snappy, gzip or none" — zstd cannot be written here, and gzip and none are refused for
// Avro — and zstd beside Parquet and Avro levels "snappy, deflate or null", which Parquet's refuses.
describe('creation refusing an unwritable codec', () => {
  const create = (options: Record<string, string>): string => {
    const dir = mkdtempSync(join(tmpdir(), 'lsm-codec-advice-create-'));
    dirs.push(dir);
    try {
      Table.create(dir, TableSchema.fromSpec({ ...KV, options: { ...KV.options, ...options } }, 0));
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error('created');
  };
  it.each([
    [{ 'file.format': 'avro', 'file.compression': 'lz4' }, /use snappy, deflate or null$/],
    [{ 'file.compression': 'lz4' }, /use snappy, gzip or none$/],
    [{ 'file.format': 'avro', 'file.compression': 'zstd' }, /use snappy, deflate or null$/],
    [{ 'file.format': 'parquet', 'file.format.per.level': '0:avro', 'file.compression': 'zstd' }, /use snappy \(the one codec both/],
  ])('%j: %s', (options, advice) => {
    expect(create(options)).toMatch(advice);
  });
});
