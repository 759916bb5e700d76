// Duration options as Paimon reads them (TimeUtils.parseDuration, then Duration.toMillis): a whole
// number of ASCII digits, then a unit label — d/day/days, h/hour/hours, min/m/minute/minutes,
// s/sec/secs/second/seconds, ms/milli(s)/millisecond(s), µs/micro(s)/microsecond(s),
// ns/nano(s)/nanosecond(s), any case; none is ms. This store read '1.5 h' and '5 mins', which
// Java refuses (the table then did not open in Java), and refused Java's 'millisecond', 'µs' and
// 'ns' forms. Creation and ALTER now refuse what Java refuses, naming the option and the form
// expected; a table an earlier version made with such a value still opens and reads it as before.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { parseDuration } from './options.ts';
import { applySchemaChanges } from './schema-change.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const KV: SchemaSpec = { fields: [{ name: 'dt', type: 'STRING NOT NULL' }, { name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['dt', 'k'], partitionKeys: ['dt'], options: { bucket: '1' } };
const create = (options: Record<string, string>) => TableSchema.fromSpec({ ...KV, options: { ...KV.options, ...options } }, 0);

/** Every duration option this store reads (and Java's reader of the table). */
const DURATION_OPTIONS = [
  'snapshot.time-retained',
  'changelog.time-retained',
  'tag.default-time-retained',
  'partition.expiration-time',
  'partition.expiration-check-interval',
  'consumer.expiration-time',
];

it.each([
  ['1 h', 3_600_000],
  ['1h', 3_600_000],
  [' 7 DAYS ', 7 * 86_400_000],
  ['30 min', 1_800_000],
  ['2 m', 120_000],
  ['3 minutes', 180_000],
  ['1 secs', 1000],
  ['100', 100],
  ['100 ms', 100],
  ['2 millisecond', 2],
  ['3 Milliseconds', 3],
  ['1500 µs', 1],
  ['1 micros', 0],
  ['999999 ns', 0],
  ['2000000 nanoseconds', 2],
  ['0 s', 0],
])('reads %j as Java does: %d ms', (text, ms) => {
  expect(parseDuration(text, 'snapshot.time-retained', true)).toBe(ms);
  expect(parseDuration(text, 'snapshot.time-retained')).toBe(ms);
});

it.each(['1.5 h', '5 mins', '2 hrs', '1 week', '-1 s', '+1 s', '1 h 30 min', 'h', '', '  ', '１ h', '9223372036854775808', '106751991168 d', '1 μs'])(
  'refuses %j where Java refuses it (creation and ALTER), naming the option',
  (text) => {
    expect(() => parseDuration(text, 'snapshot.time-retained', true)).toThrow(/^option 'snapshot.time-retained': expected a duration as Paimon reads it/);
  },
);

it('the longest duration Java reads (Long.MAX_VALUE ms) is read', () => {
  expect(parseDuration('106751991167 d', 'snapshot.time-retained', true)).toBe(106751991167 * 86_400_000);
  expect(parseDuration('9223372036854775807', 'snapshot.time-retained', true)).toBe(9223372036854775807);
});

it.each(DURATION_OPTIONS)("creation refuses '1.5 h' and '5 mins' in '%s', and takes Java's forms", (option) => {
  for (const bad of ['1.5 h', '5 mins']) {
    expect(() => create({ [option]: bad })).toThrow(new RegExp(`option '${option.replace(/\./g, '\\.')}': expected a duration as Paimon reads it.*got '${bad}'`, 's'));
  }
  // Within the snapshots' retention, as a changelog's must be (options.ts).
  expect(() => create({ [option]: '500000 µs' })).not.toThrow();
});

it('ALTER refuses what Java refuses in the option it sets, and leaves an earlier value of another alone', () => {
  const s = create({});
  expect(() => applySchemaChanges(s, [{ kind: 'setOption', key: 'partition.expiration-time', value: '1.5 d' }], 1)).toThrow(/option 'partition.expiration-time': expected a duration/);
  expect(() => applySchemaChanges(s, [{ kind: 'setOption', key: 'consumer.expiration-time', value: '10 mins' }], 1)).toThrow(/option 'consumer.expiration-time': expected a duration/);
  expect(applySchemaChanges(s, [{ kind: 'setOption', key: 'snapshot.time-retained', value: '90 min' }], 1).options.snapshotTimeRetainedMs).toBe(5_400_000);
  const old = TableSchema.parse(JSON.stringify({ ...create({}).toJson(), options: { ...create({}).options.raw, 'snapshot.time-retained': '1.5 h' } }), 'schema/schema-0');
  expect(applySchemaChanges(old, [{ kind: 'setOption', key: 'write-buffer-size', value: '64 mb' }], 1).options.snapshotTimeRetainedMs).toBe(5_400_000);
});

it('a table an earlier version created with such values opens, reads them as before and is written', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-duration-'));
  dirs.push(dir);
  Table.create(dir, create({ 'snapshot.time-retained': '2 h', 'partition.expiration-time': '30 d', 'partition.expiration-check-interval': '1 h' }));
  const file = join(dir, 'schema', 'schema-0');
  const json = JSON.parse(readFileSync(file, 'utf8')) as { options: Record<string, string> };
  Object.assign(json.options, { 'snapshot.time-retained': '1.5 h', 'partition.expiration-time': '30 days', 'partition.expiration-check-interval': '5 mins' });
  writeFileSync(file, JSON.stringify(json));
  const t = Table.open(dir);
  expect(t.schema.options.snapshotTimeRetainedMs).toBe(5_400_000);
  const w = t.newWriter();
  try {
    w.writeRecord({ dt: '2026-12-01', k: 1 });
    expect(w.commit().snapshotId).toBe(1);
  } finally {
    w.close();
  }
  expect(t.scanRows()).toEqual([['2026-12-01', 1]]);
});
