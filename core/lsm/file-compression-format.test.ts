// `file.compression` as Paimon's writer of the table's data-file format takes it (options.ts
// checkJavaCodecs): Parquet's codec names in any case (CompressionCodecName.fromConf) or 'none';
// Avro's codec names spelled exactly (CodecFactory.fromString) or 'zstd'. A value the Java writer
// refuses was accepted here (and written under another name: 'deflate' as gzip Parquet, 'gzip' as
// deflate Avro, 'none' as null Avro), and every Java engine's write of the table then failed.
// Refused at creation and ALTER, naming option, value and what is accepted; a table written
// elsewhere with such a codec still opens and is written here as before.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { LsmError } from './errors.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { applySchemaChanges } from './schema-change.ts';
import { readAvroContainer } from './format/avro-container.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SPEC = (options: Record<string, string>): SchemaSpec => ({
  fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'STRING' }],
  primaryKeys: ['k'],
  options: { bucket: '1', ...options },
});

function refusal(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    if (e instanceof LsmError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

const PARQUET = "expected 'snappy', 'gzip', 'none' or 'uncompressed' (Parquet's codec names, any case";
const AVRO = "expected 'snappy', 'deflate' or 'null' (Avro's codec names, spelled exactly";

describe("file.compression as the Java writer of the table's format takes it", () => {
  it.each([
    [{ 'file.compression': 'deflate' }, "option 'file.compression': 'deflate' is not a codec Paimon's Parquet writer takes: a Java engine's first Parquet data file would fail; ", PARQUET],
    [{ 'file.format': 'avro', 'file.compression': 'gzip' }, "option 'file.compression': 'gzip' is not a codec Paimon's Avro writer takes: a Java engine's first Avro data file would fail; ", AVRO],
    [{ 'file.format': 'avro', 'file.compression': 'none' }, "option 'file.compression': 'none' is not a codec Paimon's Avro writer takes", AVRO],
    [{ 'file.format': 'avro', 'file.compression': 'uncompressed' }, "option 'file.compression': 'uncompressed' is not a codec Paimon's Avro writer takes", AVRO],
    [{ 'file.format': 'avro', 'file.compression': 'Snappy' }, "option 'file.compression': 'Snappy' is not a codec Paimon's Avro writer takes", AVRO],
    [{ 'file.format': 'avro', 'file.compression': ' snappy' }, "option 'file.compression': ' snappy' is not a codec Paimon's Avro writer takes", AVRO],
    [{ 'file.compression': 'null' }, "option 'file.compression': 'null' is not a codec Paimon's Parquet writer takes", PARQUET],
    [{ 'file.compression': ' gzip' }, "option 'file.compression': ' gzip' is not a codec Paimon's Parquet writer takes", PARQUET],
    // A Parquet table writing level 0 in Avro: the codec must suit both writers.
    [{ 'file.format.per.level': '0:avro', 'file.compression': 'gzip' }, "option 'file.compression': 'gzip' is not a codec Paimon's Avro writer takes (level 0 is written in Avro: 'file.format.per.level')", AVRO],
    [{ 'file.format': 'avro', 'file.format.per.level': '5:parquet', 'file.compression': 'deflate' }, "option 'file.compression': 'deflate' is not a codec Paimon's Parquet writer takes (level 5 is written in Parquet: 'file.format.per.level')", PARQUET],
    // Java's writers take file.compression.per.level's codec for its level.
    [{ 'file.format': 'avro', 'file.compression': 'snappy', 'file.compression.per.level': '0:lz4' }, "option 'file.compression.per.level': 'lz4' for level 0 is not a codec Paimon's Avro writer takes", AVRO],
    [{ 'file.compression.per.level': '2:deflate' }, "option 'file.compression.per.level': 'deflate' for level 2 is not a codec Paimon's Parquet writer takes", PARQUET],
  ] as Array<[Record<string, string>, string, string]>)('creation with %j is refused', (options, message, expected) => {
    // Was: created; Paimon's engines then failed at their first data file ("Unrecognized codec: gzip",
    // "No enum constant …CompressionCodecName.DEFLATE").
    const e = refusal(() => TableSchema.fromSpec(SPEC(options), 0));
    expect(e.kind).toBe('InvalidArgument');
    expect(e.message).toContain(message);
    expect(e.message).toContain(expected);
  });

  it.each([
    [{ 'file.compression': 'snappy' }], [{ 'file.compression': 'GZIP' }], [{ 'file.compression': 'none' }], [{ 'file.compression': 'Uncompressed' }],
    [{ 'file.format': 'avro', 'file.compression': 'snappy' }], [{ 'file.format': 'avro', 'file.compression': 'deflate' }], [{ 'file.format': 'avro', 'file.compression': 'null' }],
    [{ 'file.format.per.level': '0:avro', 'file.compression': 'snappy' }],
    // Every level in Avro: the Parquet writer is never used.
    [{ 'num-levels': '2', 'file.format.per.level': '0:avro,1:avro', 'file.compression': 'deflate' }],
    [{ 'file.compression.per.level': '0:lz4,5:zstd' }], [{ 'file.format': 'avro', 'file.compression': 'snappy', 'file.compression.per.level': '0:xz,1:ZSTD' }],
  ] as Array<[Record<string, string>]>)('creation with %j (codecs Java takes) works', (options) => {
    expect(TableSchema.fromSpec(SPEC(options), 0).options.raw['file.compression']).toBe(options['file.compression'] ?? 'snappy');
  });

  it('an ALTER to a codec or format the Java writer refuses is refused; to one it takes goes through', () => {
    const parquet = TableSchema.fromSpec(SPEC({ 'file.compression': 'gzip' }), 0);
    expect(refusal(() => applySchemaChanges(parquet, [{ kind: 'setOption', key: 'file.compression', value: 'deflate' }], 1)).message).toContain("option 'file.compression': 'deflate' is not a codec Paimon's Parquet writer takes");
    // The format changed under the codec: gzip is no Avro codec.
    expect(refusal(() => applySchemaChanges(parquet, [{ kind: 'setOption', key: 'file.format', value: 'avro' }], 1)).message).toContain("option 'file.compression': 'gzip' is not a codec Paimon's Avro writer takes");
    expect(refusal(() => applySchemaChanges(parquet, [{ kind: 'setOption', key: 'file.format.per.level', value: '0:avro' }], 1)).message).toContain("'gzip' is not a codec Paimon's Avro writer takes (level 0 is written in Avro");
    expect(refusal(() => applySchemaChanges(parquet, [{ kind: 'setOption', key: 'file.compression.per.level', value: '1:bzip2' }], 1)).message).toContain("option 'file.compression.per.level': 'bzip2' for level 1 is not a codec Paimon's Parquet writer takes");
    const avro = applySchemaChanges(parquet, [{ kind: 'setOption', key: 'file.format', value: 'avro' }, { kind: 'setOption', key: 'file.compression', value: 'null' }], 1);
    expect(avro.options.fileCompression).toBe('none');
    expect(avro.options.raw['file.compression']).toBe('null');
  });

  it("an Avro table with 'null' writes uncompressed Avro files, as Java's writer does", () => {
    const dir = mkdtempSync(join(tmpdir(), 'codec-format-'));
    dirs.push(dir);
    const c = new Catalog(dir);
    c.createDatabase('db');
    const t = c.createTable({ database: 'db', table: 't' }, SPEC({ 'file.format': 'avro', 'file.compression': 'null' }));
    const w = t.newWriter();
    w.write([1, 'a']);
    w.commit();
    w.close();
    const bucket = join(t.paths.root, 'bucket-0');
    const file = readdirSync(bucket).find((n) => n.endsWith('.avro'))!;
    expect(readAvroContainer(readFileSync(join(bucket, file)), file).codec).toBe('null');
    expect(t.scanRows()).toEqual([[1, 'a']]);
  });

  it('a table written elsewhere with a codec its Java writer refuses opens and is written here as before', () => {
    const dir = mkdtempSync(join(tmpdir(), 'codec-format-'));
    dirs.push(dir);
    const made = TableSchema.fromSpec(SPEC({ 'file.format': 'avro', 'file.compression': 'snappy' }), 0).toJson();
    const schema = new TableSchema({ ...made, options: { ...made.options, 'file.compression': 'gzip' } }, false);
    const c = new Catalog(dir);
    c.createDatabase('db');
    c.createTable({ database: 'db', table: 't' }, schema);
    const t = c.getTable({ database: 'db', table: 't' });
    const w = t.newWriter();
    w.write([1, 'a']);
    w.commit();
    w.close();
    expect(t.scanRows()).toEqual([[1, 'a']]);
    t.alter([{ kind: 'setOption', key: 'snapshot.num-retained.min', value: '3' }]); // other options stay alterable
    t.alter([{ kind: 'setOption', key: 'file.compression', value: 'deflate' }]); // and the codec can be repaired
    expect(c.getTable({ database: 'db', table: 't' }).scanRows()).toEqual([[1, 'a']]);
  });
});
