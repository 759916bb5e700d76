// Table options checked against Paimon's CoreOptions and SchemaValidation: the fallback keys of
// 'ignore-delete', the append table's default target file size, boolean options read elsewhere
// from the raw map, a stop trigger below the compaction trigger in a table written elsewhere, and
// the changelog retention options (bounds, and a changelog outliving its snapshots refused).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { RowKind } from './key-value.ts';
import { parseOptions } from './options.ts';
import { applySchemaChanges } from './schema-change.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const KV: SchemaSpec = { fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1' } };
const spec = (options: Record<string, string>, base: SchemaSpec = KV): SchemaSpec => ({ ...base, options: { ...base.options, ...options } });
const create = (options: Record<string, string>, base: SchemaSpec = KV) => TableSchema.fromSpec(spec(options, base), 0);
/** A schema file as another writer left it (options not checked strictly). */
const open = (options: Record<string, string>, primaryKeys = ['k']) =>
  TableSchema.parse(
    JSON.stringify({
      version: 3, id: 0, highestFieldId: 1, partitionKeys: [], primaryKeys, timeMillis: 0,
      fields: [{ id: 0, name: 'k', type: primaryKeys.length ? 'INT NOT NULL' : 'INT' }, { id: 1, name: 'v', type: 'STRING' }],
      options: { bucket: primaryKeys.length ? '1' : '-1', 'file.format': 'parquet', ...options },
    }),
    'schema/schema-0',
  );

describe("'ignore-delete' and its fallback keys (CoreOptions.IGNORE_DELETE)", () => {
  it('the first key present decides, in Paimon\'s order: ignore-delete, first-row., deduplicate., partial-update.', () => {
    expect(parseOptions({ 'ignore-delete': 'false', 'partial-update.ignore-delete': 'true' }, true).ignoreDelete).toBe(false);
    expect(parseOptions({ 'ignore-delete': 'true', 'partial-update.ignore-delete': 'false' }, true).ignoreDelete).toBe(true);
    expect(parseOptions({ 'partial-update.ignore-delete': 'true' }, true).ignoreDelete).toBe(true);
    expect(parseOptions({ 'first-row.ignore-delete': 'false', 'deduplicate.ignore-delete': 'true' }, true).ignoreDelete).toBe(false);
    expect(parseOptions({ 'deduplicate.ignore-delete': 'false', 'partial-update.ignore-delete': 'true' }, true).ignoreDelete).toBe(false);
    expect(parseOptions({}, true).ignoreDelete).toBe(false);
    // A key that does not decide must still be a boolean.
    expect(() => parseOptions({ 'ignore-delete': 'true', 'partial-update.ignore-delete': 'yes' }, true)).toThrow(
      "option 'partial-update.ignore-delete': expected 'true' or 'false', got 'yes'",
    );
  });

  it("a delete is applied when 'ignore-delete' = 'false' stands beside 'deduplicate.ignore-delete' = 'true'", () => {
    const dir = mkdtempSync(join(tmpdir(), 'lsm-options-'));
    dirs.push(dir);
    const catalog = new Catalog(dir);
    catalog.createDatabase('db');
    const table = catalog.createTable({ database: 'db', table: 't' }, spec({ 'ignore-delete': 'false', 'deduplicate.ignore-delete': 'true' }));
    const w = table.newWriter();
    w.writeRecord({ k: 1, v: 'a' });
    w.writeRecord({ k: 2, v: 'b' });
    w.commit();
    w.writeRecord({ k: 1, v: 'a' }, RowKind.DELETE);
    w.commit();
    w.close();
    expect(table.scanRows().map((r) => r[0])).toEqual([2]);
  });
});

describe("'target-file-size' default (CoreOptions.targetFileSize(hasPrimaryKey))", () => {
  it('is 128 mb for primary-key tables and 256 mb for append tables; a set value is kept', () => {
    expect(create({}).options.targetFileBytes).toBe(128 * 1024 * 1024);
    const append: SchemaSpec = { fields: KV.fields, options: {} };
    expect(create({}, append).options.targetFileBytes).toBe(256 * 1024 * 1024);
    expect(open({}, []).options.targetFileBytes).toBe(256 * 1024 * 1024);
    expect(open({}).options.targetFileBytes).toBe(128 * 1024 * 1024);
    expect(create({ 'target-file-size': '64 mb' }, append).options.targetFileBytes).toBe(64 * 1024 * 1024);
  });
});

describe('boolean options read from the raw map elsewhere', () => {
  it.each(['deletion-vectors.enabled', 'disable-explicit-type-casting'])("'%s' = 'yes' is refused, naming the option and what it takes", (key) => {
    expect(() => create({ [key]: 'yes' })).toThrow(`option '${key}': expected 'true' or 'false', got 'yes'`);
    expect(() => open({ [key]: 'yes' })).toThrow(`option '${key}': expected 'true' or 'false', got 'yes'`);
    expect(() => create({ [key]: 'FALSE' })).not.toThrow();
  });
});

describe("'num-sorted-run.stop-trigger' below the compaction trigger", () => {
  it('a table written elsewhere opens with max(trigger, stop-trigger), as Paimon reads it; creating one is refused', () => {
    expect(open({ 'num-sorted-run.stop-trigger': '3' }).options.stopTrigger).toBe(5);
    expect(open({ 'num-sorted-run.stop-trigger': '9' }).options.stopTrigger).toBe(9);
    expect(() => open({ 'num-sorted-run.stop-trigger': '0' })).toThrow("option 'num-sorted-run.stop-trigger': expected an integer in 1..");
    expect(() => create({ 'num-sorted-run.stop-trigger': '3' })).toThrow("option 'num-sorted-run.stop-trigger': expected an integer in 5..");
  });
});

describe('changelog retention (SchemaValidation, CoreOptions.changelogLifecycleDecoupled)', () => {
  it('refuses a minimum below 1 and a minimum above the maximum, also in a table written elsewhere', () => {
    expect(() => create({ 'changelog.num-retained.min': '0' })).toThrow("option 'changelog.num-retained.min': expected an integer in 1..");
    expect(() => open({ 'changelog.num-retained.min': '0' })).toThrow("option 'changelog.num-retained.min': expected an integer in 1..");
    expect(() => create({ 'changelog.num-retained.max': 'many' })).toThrow("option 'changelog.num-retained.max': expected an integer, got 'many'");
    // The minimum falls back to snapshot.num-retained.min (10).
    expect(() => create({ 'changelog.num-retained.max': '5' })).toThrow(
      "option 'changelog.num-retained.min' (10) must not be larger than 'changelog.num-retained.max' (5)",
    );
  });

  it.each([
    [{ 'changelog.num-retained.max': '100' }, "'changelog.num-retained.max' (100) above 'snapshot.num-retained.max'"],
    [{ 'changelog.num-retained.min': '20' }, "'changelog.num-retained.min' (20) above 'snapshot.num-retained.min' (10)"],
    [{ 'snapshot.num-retained.max': '50', 'changelog.num-retained.max': '60' }, "'changelog.num-retained.max' (60) above 'snapshot.num-retained.max' (50)"],
    [{ 'changelog.time-retained': '2 h' }, "'changelog.time-retained' (7200000 ms) above 'snapshot.time-retained' (3600000 ms)"],
  ])('creating a table whose changelog outlives its snapshots (%j) is NotSupported, naming the options', (options, why) => {
    let err: unknown;
    try {
      create({ 'snapshot.num-retained.max': '50', ...options });
    } catch (e) {
      err = e;
    }
    expect((err as { kind?: string }).kind).toBe('NotSupported');
    expect((err as Error).message).toContain(why);
    expect((err as Error).message).toContain('a changelog kept longer than its snapshots is not supported');
    // A table Java wrote so opens (expire.ts leaves Java's changelog/ files alone).
    expect(() => open({ 'snapshot.num-retained.max': '50', ...options })).not.toThrow();
  });

  it('retention no longer than the snapshots\' is accepted', () => {
    expect(() => create({ 'changelog.num-retained.min': '10', 'changelog.num-retained.max': '30', 'snapshot.num-retained.max': '30', 'changelog.time-retained': '30 min' })).not.toThrow();
  });

  it('ALTER may not make the changelog outlive its snapshots', () => {
    const s = create({ 'snapshot.num-retained.max': '50', 'changelog.num-retained.max': '50' });
    expect(() => applySchemaChanges(s, [{ kind: 'setOption', key: 'changelog.num-retained.max', value: '100' }], 1)).toThrow(
      "'changelog.num-retained.max' (100) above 'snapshot.num-retained.max' (50)",
    );
    expect(() => applySchemaChanges(s, [{ kind: 'setOption', key: 'snapshot.num-retained.max', value: '20' }], 1)).toThrow(
      "'changelog.num-retained.max' (50) above 'snapshot.num-retained.max' (20)",
    );
    expect(applySchemaChanges(s, [{ kind: 'setOption', key: 'snapshot.num-retained.max', value: '80' }], 1).options.snapshotsRetainedMax).toBe(80);
  });
});

describe("'partition.legacy-name' (stored, not acted upon: directories always get the legacy names)", () => {
  it("creating a table with 'false' is NotSupported, a value that is no boolean is refused; 'true' is accepted", () => {
    let err: unknown;
    try {
      create({ 'partition.legacy-name': 'false' });
    } catch (e) {
      err = e;
    }
    expect((err as { kind?: string }).kind).toBe('NotSupported');
    expect((err as Error).message).toBe("option 'partition.legacy-name': 'false' is not supported (partition directories are written with Paimon's legacy names); expected 'true' or no value");
    expect(() => create({ 'partition.legacy-name': 'no' })).toThrow("option 'partition.legacy-name': expected 'true' or 'false', got 'no'");
    expect(create({ 'partition.legacy-name': 'true' }).options.raw['partition.legacy-name']).toBe('true');
  });
});

describe("ALTER of 'ignore-delete' through its fallback keys", () => {
  it("setting 'ignore-delete' = 'false' beside 'deduplicate.ignore-delete' = 'true' is refused (it would turn dropping deletes off)", () => {
    const s = create({ 'deduplicate.ignore-delete': 'true' });
    expect(() => applySchemaChanges(s, [{ kind: 'setOption', key: 'ignore-delete', value: 'false' }], 1)).toThrow(
      "option 'ignore-delete' cannot be changed from true to false (records already dropped cannot come back); it is true through 'deduplicate.ignore-delete' = 'true'",
    );
    expect(applySchemaChanges(s, [{ kind: 'setOption', key: 'ignore-delete', value: 'true' }], 1).options.ignoreDelete).toBe(true);
  });
});

describe("file.compression 'zstd' named at creation", () => {
  it('a Parquet table asking for zstd is refused when it is created, naming the option, not at its first flush', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zstd-create-'));
    try {
      const catalog = new Catalog(dir);
      catalog.createDatabase('d');
      expect(() =>
        catalog.createTable({ database: 'd', table: 't' }, { fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { 'file.compression': 'zstd' } }),
      ).toThrow(/option 'file\.compression': zstd data files cannot be written here/);
      // The default (snappy) and the other writable codecs are created as before.
      catalog.createTable({ database: 'd', table: 'u' }, { fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { 'file.compression': 'gzip' } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
