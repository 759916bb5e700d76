// Paimon's options are typed (CoreOptions: boolean, int, long, duration, memory size, enum) and
// Java parses a value only when it reads the option (OptionsUtils.convertValue): a value it cannot
// parse fails whatever reads it — `snapshot.clean-empty-directories` = 'yes' failed Java's
// expiration of a table this store made. Creation and ALTER refuse, for the options of
// PAIMON_OPTION_TYPES, what Java would not parse (naming the option and the form expected) and
// take what it does; opening a table stays lenient (a Java table with a value Java never read, or
// an earlier version's looser form, opens and reads).

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseMemorySize, parseOptions } from './options.ts';
import { applySchemaChanges } from './schema-change.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';
import { PAIMON_FIXTURES, paimonFixturesAvailable } from './testing/shared.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const KV: SchemaSpec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1' } };
const create = (options: Record<string, string>) => TableSchema.fromSpec({ ...KV, options: { ...KV.options, ...options } }, 0);
const alter = (key: string, value: string) => applySchemaChanges(create({}), [{ kind: 'setOption', key, value }], 1);
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// [option, a value Java refuses, what the refusal says is expected]
const REFUSED: Array<[string, string, string]> = [
  ['snapshot.clean-empty-directories', 'yes', "expected 'true' or 'false'"],
  ['snapshot.clean-empty-directories', ' true', "expected 'true' or 'false'"],
  ['write-only', 'true ', "expected 'true' or 'false'"],
  ['deletion-vectors.enabled', '1', "expected 'true' or 'false'"],
  ['manifest.merge-min-count', '30 files', 'expected an integer'],
  ['file.compression.zstd-level', '1.5', 'expected an integer'],
  ['commit.max-retries', ' 5', 'expected an integer'],
  ['snapshot.num-retained.min', '2147483648', 'expected an integer'],
  ['manifest.target-file-size', '8 megabytes', 'expected a memory size'],
  ['write-buffer-size', '1.5 mb', 'expected a memory size'],
  ['write-buffer-size', '64 mib', 'expected a memory size'],
  ['target-file-size', 'mb', 'expected a memory size'],
  ['target-file-size', '9223372036854775807 kb', 'expected a memory size'],
  ['scan.mode', 'earliest', "expected one of 'default', 'latest-full'"],
  ['changelog-producer', ' lookup', "expected one of 'none', 'input'"],
  ['continuous.discovery-interval', '10 secondz', 'expected a duration'],
];

describe('creation and ALTER refuse what Java would not parse', () => {
  it.each(REFUSED)("creation: '%s' = %j", (option, value, expected) => {
    expect(() => create({ [option]: value })).toThrow(new RegExp(`option '${esc(option)}': ${esc(expected)}.*got '${esc(value)}'`, 's'));
  });

  // (changelog-producer and deletion-vectors.enabled cannot be altered; an integer out of range is
  // refused by the lenient parse ALTER makes first, with the range)
  it.each(REFUSED.filter(([o]) => o !== 'changelog-producer' && o !== 'deletion-vectors.enabled'))("ALTER: '%s' = %j", (option, value, expected) => {
    expect(() => alter(option, value)).toThrow(new RegExp(`option '${esc(option)}': ${esc(expected)}.*got '?${esc(value)}`, 's'));
  });

  it("ALTER refuses 'alter-column-null-to-not-null.disabled' = 'no' (only ALTER takes it)", () => {
    expect(() => alter('alter-column-null-to-not-null.disabled', 'no')).toThrow(/option 'alter-column-null-to-not-null\.disabled': expected 'true' or 'false'/);
  });

  it("'tag.automatic-creation' beside write-only (which a writer here honours) must still be one of Java's modes", () => {
    expect(() => create({ 'write-only': 'true', 'tag.automatic-creation': 'daily' })).toThrow(/option 'tag\.automatic-creation': expected one of 'none', 'process-time', 'watermark', 'batch'/);
    expect(() => create({ 'write-only': 'true', 'tag.automatic-creation': 'process-time' })).not.toThrow();
  });
});

describe("and take Java's forms", () => {
  const ACCEPTED: Array<[string, string]> = [
    ['snapshot.clean-empty-directories', 'TRUE'],
    ['snapshot.clean-empty-directories', 'False'],
    ['write-only', 'True'],
    ['commit.max-retries', '+5'],
    ['manifest.merge-min-count', '-1'],
    ['manifest.target-file-size', '8 MB'],
    ['manifest.target-file-size', ' 8mebibytes '],
    ['write-buffer-size', '64 kibibytes'],
    ['target-file-size', '1048576'],
    ['target-file-size', '2 Bytes'],
    ['scan.mode', 'LATEST-FULL'],
    ['merge-engine', 'Deduplicate'],
    ['continuous.discovery-interval', '10 s'],
  ];
  it.each(ACCEPTED)("creation and ALTER: '%s' = %j", (option, value) => {
    expect(() => create({ [option]: value })).not.toThrow();
    if (option !== 'merge-engine') expect(() => alter(option, value)).not.toThrow();
  });

  it('reads a memory size in Java form as Java does (also when a table is opened)', () => {
    expect(parseMemorySize('64 kibibytes', 'write-buffer-size')).toBe(65536);
    expect(parseMemorySize(' 8MB ', 'write-buffer-size')).toBe(8 * 1024 * 1024);
    expect(parseMemorySize('3 tebibytes', 'write-buffer-size')).toBe(3 * 1024 ** 4);
    expect(parseOptions({ 'write-buffer-size': '2 mebibytes' }, false).writeBufferBytes).toBe(2 * 1024 * 1024);
    expect(parseOptions({ 'commit.max-retries': '+3' }, false).commitMaxRetries).toBe(3);
  });
});

describe('opening stays lenient', () => {
  it("a table an earlier version made with '1.5 mb' or ' true' still opens with those values", () => {
    const o = parseOptions({ 'write-buffer-size': '1.5 mb', 'write-only': ' true', 'snapshot.clean-empty-directories': 'yes' }, false);
    expect(o.writeBufferBytes).toBe(1.5 * 1024 * 1024);
    expect(o.writeOnly).toBe(true);
  });

  it.skipIf(!paimonFixturesAvailable('the Java fixture test of typed-options.test.ts'))(
    'a Java table with values Java never read, and Java forms this store refused, opens and reads',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'typed-options-'));
      dirs.push(dir);
      const table = join(dir, 't');
      cpSync(join(PAIMON_FIXTURES, 'java13-pk-parquet-mor-partitioned-2buckets'), table, { recursive: true });
      const before = Table.open(table).scanRows().length;
      const schemaFile = join(table, 'schema', 'schema-0');
      const json = JSON.parse(readFileSync(schemaFile, 'utf8')) as { options: Record<string, string> };
      Object.assign(json.options, {
        'snapshot.clean-empty-directories': 'yes',
        'lookup.cache-rows': 'many',
        'scan.manifest.parallelism': 'auto',
        'write-buffer-size': '64 mebibytes',
        'commit.max-retries': '+3',
      });
      writeFileSync(schemaFile, JSON.stringify(json, null, 2));
      const t = Table.open(table);
      expect(t.schema.options.writeBufferBytes).toBe(64 * 1024 * 1024);
      expect(t.schema.options.commitMaxRetries).toBe(3);
      expect(t.scanRows().length).toBe(before);
      expect(before).toBeGreaterThan(0);
    },
  );
});
