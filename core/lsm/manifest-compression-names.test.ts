// `manifest.compression` names the Avro codec of the table's manifests. Paimon's engines hand the
// value as it is to Avro (AvroFileFormat.createCodecFactory: CodecFactory.fromString, an exact
// lookup of 'null', 'deflate', 'snappy', 'bzip2', 'xz', 'zstandard'; only 'zstd' is mapped, in any
// case), so 'none', 'Deflate' or ' snappy' make every Java commit fail ("Unrecognized codec").
// Creation and ALTER here took them (trimmed and lower-cased, 'none' read as 'null'). Now they
// take the exact names; a table written elsewhere with another spelling still opens.
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
  const d = mkdtempSync(join(tmpdir(), 'mc-names-'));
  dirs.push(d);
  return d;
};
const KV: SchemaSpec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1', 'file.compression': 'snappy' } };
const withCodec = (codec: string): SchemaSpec => ({ ...KV, options: { ...KV.options, 'manifest.compression': codec } });

function refusal(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LsmError);
    return e as LsmError;
  }
  throw new Error('expected a refusal, nothing was thrown');
}

describe("manifest.compression takes Avro's codec names as Paimon's engines do", () => {
  for (const codec of ['deflate', 'snappy', 'null']) {
    it(`'${codec}' is created and written`, () => {
      const dir = fresh();
      const t = Table.create(dir, TableSchema.fromSpec(withCodec(codec), 0));
      const w = t.newWriter();
      w.writeRecord({ k: 1, v: 'a' });
      w.commit();
      w.close();
      expect(Table.open(dir).scanRows()).toEqual([[1, 'a']]);
    });
  }

  for (const codec of ['none', 'NONE', 'Deflate', 'SNAPPY', ' snappy', 'null ']) {
    it(`${JSON.stringify(codec)} is refused at creation and at ALTER, naming the option and the names taken`, () => {
      const create = refusal(() => Table.create(fresh(), TableSchema.fromSpec(withCodec(codec), 0)));
      expect(create.kind).toBe('InvalidArgument');
      expect(create.message).toContain("option 'manifest.compression'");
      expect(create.message).toContain("'deflate', 'snappy', 'null'");
      expect(create.message).toContain(`got '${codec}'`);
      const dir = fresh();
      const t = Table.create(dir, TableSchema.fromSpec(KV, 0));
      const alter = refusal(() => t.alter([{ kind: 'setOption', key: 'manifest.compression', value: codec }]));
      expect(alter.message).toBe(create.message);
      expect(Table.open(dir).schema.options.raw['manifest.compression']).toBe('deflate');
    });
  }

  it("'none' is pointed to 'null'", () => {
    expect(refusal(() => TableSchema.fromSpec(withCodec('none'), 0)).message).toMatch(/use 'null' for manifests without compression/);
  });

  it('a table written elsewhere naming another spelling opens, reads and writes', () => {
    const dir = fresh();
    Table.create(dir, TableSchema.fromSpec(KV, 0));
    const json = JSON.parse(readFileSync(join(dir, 'schema', 'schema-0'), 'utf8')) as { options: Record<string, string> };
    json.options['manifest.compression'] = 'NONE';
    writeFileSync(join(dir, 'schema', 'schema-0'), JSON.stringify(json, null, 2));
    const t = Table.open(dir);
    const w = t.newWriter();
    w.writeRecord({ k: 2, v: 'b' });
    w.commit();
    w.close();
    expect(Table.open(dir).scanRows()).toEqual([[2, 'b']]);
  });
});
