// Writing into a table Java made with options this store does not implement (write-options.ts,
// DESIGN.md "Options a write depends on"): the table opens and reads, its writer is refused with
// NotSupported naming the option and its value; options judged harmless do not refuse; creation and
// ALTER cannot make a table unwritable; data-file codecs this store cannot write open (read) and
// are refused when a data file is written, naming the table's own value.

import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { applySchemaChanges } from './schema-change.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const KV: SchemaSpec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }, { name: 'ts', type: 'BIGINT' }], primaryKeys: ['k'], options: { bucket: '1' } };
const PARTED: SchemaSpec = {
  fields: [{ name: 'd', type: 'DATE NOT NULL' }, { name: 's', type: 'STRING NOT NULL' }, { name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }],
  partitionKeys: ['d', 's'],
  primaryKeys: ['d', 's', 'k'],
  options: { bucket: '1' },
};
const LOG: SchemaSpec = { fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'STRING' }], options: { bucket: '-1' } };

function rowOf(spec: SchemaSpec, i: number): Record<string, unknown> {
  return spec === PARTED ? { d: 19000 + (i % 2), s: 'x', k: i, v: `v${i}` } : { k: i, v: `v${i}`, ts: BigInt(i) };
}

/**
 * A table with two committed rows, then a `schema-1` as a Java writer (Flink, Spark) would leave it
 * with `options` added — the table as this store finds it when it opens a table made elsewhere.
 */
function javaTable(spec: SchemaSpec, options: Record<string, string>, createOptions: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-java-write-options-'));
  dirs.push(dir);
  const t = Table.create(dir, TableSchema.fromSpec({ ...spec, options: { ...spec.options, ...createOptions } }, 0));
  const w = t.newWriter();
  w.writeRecord(rowOf(spec, 1));
  w.writeRecord(rowOf(spec, 2));
  w.commit();
  w.close();
  const json = JSON.parse(readFileSync(join(dir, 'schema', 'schema-0'), 'utf8')) as { id: number; options: Record<string, string> };
  json.id = 1;
  json.options = { ...json.options, ...options };
  writeFileSync(join(dir, 'schema', 'schema-1'), JSON.stringify(json, null, 2));
  // Where Java would have put the files (java-file-locations.test.ts covers every read path).
  const dataDir = options['data-file.path-directory'];
  if (dataDir !== undefined) {
    mkdirSync(join(dir, dataDir));
    renameSync(join(dir, 'bucket-0'), join(dir, dataDir, 'bucket-0'));
  }
  if (options['partition.legacy-name'] === 'false' && spec === PARTED) {
    // DATE partitions cast to STRING: day 19000 is 2022-01-08.
    for (const [day, date] of [['19000', '2022-01-08'], ['19001', '2022-01-09']]) renameSync(join(dir, `d=${day}`), join(dir, `d=${date}`));
  }
  return dir;
}

function notSupportedOf(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LsmError);
    expect((e as LsmError).kind).toBe('NotSupported');
    return e as LsmError;
  }
  throw new Error('expected NotSupported, nothing was thrown');
}

const rowsOf = (t: Table): number => t.scanRows().length;

describe('a table Java made with an option a write here would not honour', () => {
  const cases: Array<[string, string, SchemaSpec, Record<string, string>, Record<string, string>?]> = [
    ['bucket-function.type', 'mod', KV, { 'bucket-function.type': 'mod' }],
    ['bucket-function.type', 'hive', KV, { 'bucket-function.type': 'hive' }],
    ['rowkind.field', 'v', KV, { 'rowkind.field': 'v' }],
    ['sequence.snapshot-ordering', 'true', KV, { 'sequence.snapshot-ordering': 'true', 'write-only': 'true' }],
    ['write.sequence-number-init-mode', 'snapshot', KV, { 'write.sequence-number-init-mode': 'snapshot' }],
    ['record-level.expire-time', '1 d', KV, { 'record-level.expire-time': '1 d', 'record-level.time-field': 'ts' }],
    ['partition.timestamp-formatter', 'dd MMM yyyy', PARTED, { 'partition.expiration-time': '7 d', 'partition.timestamp-formatter': 'dd MMM yyyy' }],
    ['tag.automatic-creation', 'process-time', KV, { 'tag.automatic-creation': 'process-time' }],
    ['commit.callbacks', 'AuditCallback', KV, { 'commit.callbacks': 'AuditCallback' }],
    ['metadata.iceberg.storage', 'table-location', KV, { 'metadata.iceberg.storage': 'table-location' }],
    ['chain-table.enabled', 'true', KV, { 'chain-table.enabled': 'true' }],
    ['row-tracking.enabled', 'true', LOG, { 'row-tracking.enabled': 'true' }],
    ['data-evolution.enabled', 'true', LOG, { 'row-tracking.enabled': 'false', 'data-evolution.enabled': 'true' }],
    ['pk-clustering-override', 'true', KV, { 'pk-clustering-override': 'true', 'clustering.columns': 'v' }],
    ['data-file.path-directory', 'data', KV, { 'data-file.path-directory': 'data' }],
    ['data-file.external-paths', 'file:///mnt/cold', KV, { 'data-file.external-paths': 'file:///mnt/cold', 'data-file.external-paths.strategy': 'round-robin' }],
    ['index-file-in-data-file-dir', 'true', KV, { 'index-file-in-data-file-dir': 'true' }, { 'deletion-vectors.enabled': 'true' }],
    ['partition.legacy-name', 'false', PARTED, { 'partition.legacy-name': 'false' }],
    ['changelog.num-retained.min', '20', KV, { 'changelog.num-retained.min': '20' }],
    ['changelog.time-retained', '2 h', KV, { 'changelog.time-retained': '2 h' }],
    ['manifest.format', 'orc', KV, { 'manifest.format': 'orc' }],
    ['type', 'format-table', KV, { type: 'format-table' }],
  ];

  it.each(cases)("'%s' = '%s': reads, and the writer is refused naming the option and its value", (key, value, spec, options, createOptions) => {
    const dir = javaTable(spec, options, createOptions);
    const t = Table.open(dir);
    expect(rowsOf(t)).toBe(2);
    const e = notSupportedOf(() => t.newWriter());
    expect(e.message).toContain(`writing table ${dir}: option '${key}' = '${value}' is not supported for writing (`);
    expect(e.message).toContain('the table can still be read here');
    // Refused before anything is written, and the lock is released: reading still works, and the
    // same refusal comes again (not a Conflict over a lock left behind).
    expect(rowsOf(Table.open(dir))).toBe(2);
    expect(notSupportedOf(() => t.newWriter()).message).toBe(e.message);
  });

  it('write-only tables: partition expiration and automatic tags are the job of another process in Java too', () => {
    const dir = javaTable(PARTED, { 'write-only': 'true', 'partition.expiration-time': '7 d', 'tag.automatic-creation': 'process-time' });
    const w = Table.open(dir).newWriter();
    w.writeRecord(rowOf(PARTED, 3));
    w.commit();
    w.close();
    expect(rowsOf(Table.open(dir))).toBe(3);
  });

  it('values that ask nothing of a write, and options judged harmless, do not refuse', () => {
    const harmless = {
      'bucket-function.type': 'default',
      'sequence.snapshot-ordering': 'false',
      'write.sequence-number-init-mode': 'scan',
      'tag.automatic-creation': 'none',
      'metadata.iceberg.storage': 'disabled',
      'commit.callbacks': '',
      'data-file.external-paths': 'file:///mnt/cold',
      'data-file.external-paths.strategy': 'none',
      'index-file-in-data-file-dir': 'true', // no deletion vectors: no index file is written
      'partition.legacy-name': 'false', // STRING partitions: the same directory either way
      type: 'materialized-table',
      'file.compression.per.level': '0:lz4',
      'changelog-file.format': 'avro',
      'changelog-file.compression': 'zstd',
      'manifest.compression': 'bzip2',
      'data-file.thin-mode': 'true',
      'metadata.stats-mode': 'none',
      'manifest.format': 'avro',
      'file-index.bloom-filter.columns': 'v',
      'compaction.force-up-level-0': 'true',
      'lookup-compact': 'gentle',
      'snapshot.expire.execution-mode': 'async',
      'commit.force-create-snapshot': 'true',
      'scan.mode': 'latest',
      'sink.parallelism': '4',
    };
    const spec: SchemaSpec = { ...PARTED, fields: PARTED.fields.map((f) => (f.name === 'd' ? { name: 'd', type: 'STRING NOT NULL' } : f)) };
    const dir = mkdtempSync(join(tmpdir(), 'lsm-java-write-options-'));
    dirs.push(dir);
    const t0 = Table.create(dir, TableSchema.fromSpec(spec, 0));
    t0.newWriter().close();
    const json = JSON.parse(readFileSync(join(dir, 'schema', 'schema-0'), 'utf8')) as { id: number; options: Record<string, string> };
    writeFileSync(join(dir, 'schema', 'schema-1'), JSON.stringify({ ...json, id: 1, options: { ...json.options, ...harmless } }));
    const t = Table.open(dir);
    const w = t.newWriter();
    w.writeRecord({ d: '2026-12-05', s: 'x', k: 1, v: 'a' });
    w.commit();
    w.close();
    expect(t.scanRows()).toEqual([['2026-12-05', 'x', 1, 'a']]);
  });
});

describe('creation and ALTER cannot make a table unwritable here', () => {
  const spec = (options: Record<string, string>): SchemaSpec => ({ ...KV, options: { ...KV.options, ...options } });

  it("creating a table with 'tag.automatic-creation', 'manifest.format' other than avro or a 'type' other than a table (stored, not acted upon) is refused", () => {
    for (const [options, text] of [
      [{ 'tag.automatic-creation': 'process-time' }, "option 'tag.automatic-creation' = 'process-time' is not supported for writing (commits here do not create tags)"],
      [{ type: 'format-table' }, "option 'type' = 'format-table' is not supported for writing ("],
      [{ 'manifest.format': 'orc' }, "option 'manifest.format' = 'orc' is not supported for writing (manifests are written in Avro here"],
    ] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'lsm-java-write-options-'));
      dirs.push(dir);
      const e = notSupportedOf(() => Table.create(dir, TableSchema.fromSpec(spec(options), 0)));
      expect(e.message).toContain(`table ${dir}: ${text}`);
      expect(e.message).not.toContain('can still be read');
      expect(() => Table.open(dir)).toThrow(/does not exist/); // nothing was written
    }
  });

  it("ALTER refuses an option a writer would refuse, also 'write-only' turned off beside one", () => {
    const base = TableSchema.fromSpec(spec({ 'write-only': 'true', 'tag.automatic-creation': 'process-time' }), 0);
    expect(() => applySchemaChanges(base, [{ kind: 'setOption', key: 'write-only', value: 'false' }], 1)).toThrow(
      "ALTER: option 'tag.automatic-creation' = 'process-time' is not supported for writing (commits here do not create tags)",
    );
    const plain = TableSchema.fromSpec(spec({}), 0);
    expect(() => applySchemaChanges(plain, [{ kind: 'setOption', key: 'tag.automatic-creation', value: 'process-time' }], 1)).toThrow(
      "ALTER: option 'tag.automatic-creation' = 'process-time' is not supported for writing",
    );
    expect(applySchemaChanges(plain, [{ kind: 'setOption', key: 'tag.automatic-creation', value: 'none' }], 1).options.raw['tag.automatic-creation']).toBe('none');
  });

  it('a Java table already refused for an option stays alterable (an ALTER adding no refusal)', () => {
    const dir = javaTable(KV, { 'rowkind.field': 'v' });
    const t = Table.open(dir);
    t.alter([{ kind: 'setOption', key: 'snapshot.num-retained.min', value: '5' }]);
    expect(notSupportedOf(() => t.newWriter()).message).toContain("option 'rowkind.field' = 'v'");
  });
});

describe("data-file codecs this store cannot write ('file.compression')", () => {
  it.each(['lz4', 'brotli', 'lzo', 'zstd'])("'%s': the table opens and reads; writing rows is refused naming the table's value; expiration still works", (codec) => {
    const dir = javaTable(KV, { 'file.compression': codec });
    const t = Table.open(dir);
    expect(rowsOf(t)).toBe(2);
    const w = t.newWriter(); // opens: maintenance without data files (expire, tags, rollback) works
    expect(() => w.expire()).not.toThrow();
    w.writeRecord(rowOf(KV, 3));
    const e = notSupportedOf(() => w.commit());
    expect(e.message).toBe(
      `option 'file.compression' = '${codec}': data files with this codec cannot be written here (the table can still be read); ` +
        "to write it here, ALTER 'file.compression' to snappy, gzip or none (files already written keep their codec)",
    );
    w.close();
    expect(rowsOf(Table.open(dir))).toBe(2);
  });

  it("after ALTER to snappy the table is written (the files in Java's codec are still read)", () => {
    const dir = javaTable(KV, { 'file.compression': 'lz4' });
    const t = Table.open(dir);
    t.alter([{ kind: 'setOption', key: 'file.compression', value: 'snappy' }]);
    const w = t.newWriter();
    w.writeRecord(rowOf(KV, 3));
    w.commit();
    w.close();
    expect(rowsOf(Table.open(dir))).toBe(3);
  });

  it('creating a table still checks the codec strictly', () => {
    expect(() => TableSchema.fromSpec({ ...KV, options: { bucket: '1', 'file.compression': 'brotli' } }, 0)).toThrow("option 'file.compression': expected one of");
    expect(() => TableSchema.fromSpec({ ...KV, options: { bucket: '1', 'manifest.compression': 'bzip2' } }, 0)).toThrow("option 'manifest.compression': expected one of");
  });
});
