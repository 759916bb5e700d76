// Tables a site defines for its own modules' data (config.json `tables` entries that give
// `columns`), next to the seed tables. A definition is checked whole before anything is opened —
// its name, columns, key, partition keys and options, the options by the table store itself (the
// schema it would write, and whether this store can write it) — so `tilstand config check` refuses
// what `start` would. A table that exists already is brought to its definition as Paimon's ALTER
// TABLE would (schema evolution, `schema-<N+1>`): columns added at the end (earlier rows read them
// as null), descriptions and the options Paimon lets change; any other difference (a column
// dropped, renamed or retyped, the key or the partition keys, an option fixed at creation) is
// refused, naming the config entry and the difference, because the table's files, HQ's copy and
// every engine reading it follow the schema it was made with. An option value an earlier version
// took and the store now refuses at creation (EARLIER_VALUES) is judged against the table on disk:
// its own value is kept with a warning, a new table or an ALTER to it is refused.

import { specDefaultOptions, TableSchema } from '../lsm/schema.ts';
import type { Table } from '../lsm/table.ts';
import { applySchemaChanges, type SchemaChange } from '../lsm/schema-change.ts';
import { parseMemorySize, parseOptions } from '../lsm/options.ts';
import { isNestedType, parseType, typeToString, withNullable } from '../lsm/types.ts';
import { checkWritableOptions } from '../lsm/write-options.ts';
import { sequenceGroups, type TableDefinition } from './seed-tables.ts';

/** A refused definition; `path` is the config key it is about (`tables[5].columns[2].type`). */
export class TableDefinitionError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = 'TableDefinitionError';
  }
}

/**
 * Names a site may not give a table of its own: Tilstand's tables (DESIGN.md, "Shared names"),
 * made or read by the site whatever config says.
 */
export const RESERVED_TABLE_NAMES: readonly string[] = ['work_queue', 'resources', 'stock', 'approval_inbox', 'decision_log', 'dead_letters'];

/**
 * Lower case only: HQ reads the tables with Flink, Spark, Trino, StarRocks or Doris, and Hive-style
 * catalogs and Trino fold identifiers to lower case, so `DoorState` would be unreadable there.
 */
const TABLE_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const COLUMN_NAME = /^[a-z_][a-z0-9_]{0,63}$/;

/**
 * Paimon options a site's table may not take, with why: the site must find every file of the table
 * where it made it (sync, restore and backups copy `warehouse/`), and its writer is the only
 * compaction it gets.
 */
const REFUSED_OPTIONS: readonly [(key: string) => boolean, string][] = [
  [(k) => k === 'path', "a site's table lives in warehouse/site_<id>.db/<table>/, where sync, restore and backups find it"],
  [(k) => k.startsWith('data-file.external-paths'), "a site's table keeps its files in warehouse/site_<id>.db/<table>/, where sync, restore and backups find them"],
  [(k) => k === 'write-only', "the site's writer is the only compaction a site's table gets (Paimon's write-only leaves it to a separate job)"],
];

/**
 * Option values an earlier version took in a definition, and made the site's table with, that the
 * table store now refuses at creation and ALTER because Java's writers fail on them (core/lsm
 * DESIGN.md): a `manifest.compression` not spelled as Avro's codec names ('none', 'Deflate',
 * ' snappy'), a `write-buffer-size` of 0. The table store opens and writes a table made so; a
 * definition that gives the table's very value matches it and starts with a warning
 * (`evolveToDefinition`), a new table or an ALTER to such a value is refused (`checkNewTable`,
 * the ALTER's own check).
 */
const EARLIER_VALUES: Readonly<Record<string, (value: string) => boolean>> = {
  'manifest.compression': (v) => ['deflate', 'snappy', 'null', 'none'].includes(v.trim().toLowerCase()),
  'write-buffer-size': (v) => {
    try {
      return parseMemorySize(v, 'write-buffer-size') === 0;
    } catch {
      return false;
    }
  },
};

/**
 * The options of `options` whose value an earlier version took (EARLIER_VALUES) and the table
 * store now refuses at creation, each with the store's own words for why and what is expected.
 */
function earlierOnlyOptions(options: Readonly<Record<string, string>>): { key: string; value: string; why: string }[] {
  const out: { key: string; value: string; why: string }[] = [];
  for (const [key, accepted] of Object.entries(EARLIER_VALUES)) {
    const value = options[key];
    if (value === undefined || !accepted(value)) continue;
    try {
      parseOptions({ [key]: value }, true, true);
    } catch (e) {
      out.push({ key, value, why: (e as Error).message });
    }
  }
  return out;
}

/**
 * TableDefinitionError when `def` gives an option value an earlier version took but a new table
 * may not have (EARLIER_VALUES): checked where the table is made (the Ingestor's open, `config
 * check` for a table not on disk yet), naming the entry's option and what is expected.
 */
export function checkNewTable(def: TableDefinition): void {
  const first = earlierOnlyOptions(def.options)[0];
  if (first === undefined) return;
  throw new TableDefinitionError(
    `${def.definedBy ?? def.name}.options.${first.key}`,
    `table '${def.name}' is not on disk yet and cannot be made with it: ${first.why} (an earlier version took it; a table it made so still opens)`,
  );
}

/** The keys of a `tables` entry that define a table (besides table, budgetMs, decision, confirmedBy). */
export const DEFINITION_KEYS = ['comment', 'columns', 'primaryKeys', 'partitionKeys', 'options'] as const;

const describe = (v: unknown): string => (v === undefined ? 'nothing (the key is missing)' : v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'string' ? JSON.stringify(v) : typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`);

/**
 * The table a config `tables` entry defines, or undefined when it defines none (no `columns`: a
 * budget for one of Tilstand's tables). `path` is the entry's config key (`tables[5]`).
 */
export function parseTableDefinition(entry: Readonly<Record<string, unknown>>, path: string): TableDefinition | undefined {
  const name = entry.table;
  if (typeof name !== 'string') throw new TableDefinitionError(`${path}.table`, `expected a string, got ${describe(name)}`);
  const given = DEFINITION_KEYS.filter((k) => entry[k] !== undefined);
  if (entry.columns === undefined) {
    if (given.length > 0) throw new TableDefinitionError(`${path}.${given[0]}`, `only a table of the site's own, with 'columns', takes '${given[0]}'`);
    return undefined;
  }
  if (RESERVED_TABLE_NAMES.includes(name)) {
    throw new TableDefinitionError(`${path}.columns`, `'${name}' is one of Tilstand's own tables; its columns are not config's to give (a table of the site's own needs another name)`);
  }
  if (!TABLE_NAME.test(name)) {
    throw new TableDefinitionError(`${path}.table`, `expected a table name of lower-case letters, digits and '_' (a letter first, at most 64; engines at HQ fold names to lower case), got ${JSON.stringify(name)}`);
  }

  const columns = entry.columns;
  if (!Array.isArray(columns) || columns.length === 0) throw new TableDefinitionError(`${path}.columns`, `expected a non-empty array of {name, type, description?}, got ${describe(columns)}`);
  const fields: { id: number; name: string; type: string; description?: string }[] = [];
  for (const [i, c] of columns.entries()) {
    const at = `${path}.columns[${i}]`;
    if (c === null || typeof c !== 'object' || Array.isArray(c)) throw new TableDefinitionError(at, `expected {name, type, description?}, got ${describe(c)}`);
    const o = c as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!['name', 'type', 'description'].includes(k)) throw new TableDefinitionError(`${at}.${k}`, `unknown key (expected name, type, description)`);
    if (typeof o.name !== 'string' || !COLUMN_NAME.test(o.name)) {
      throw new TableDefinitionError(`${at}.name`, `expected a column name of lower-case letters, digits and '_' (not a digit first, at most 64), got ${describe(o.name)}`);
    }
    if (fields.some((f) => f.name === o.name)) throw new TableDefinitionError(`${at}.name`, `column '${o.name}' is given twice`);
    if (typeof o.type !== 'string') throw new TableDefinitionError(`${at}.type`, `expected a Paimon type such as "STRING", "BIGINT", "DECIMAL(10, 2)" or "TIMESTAMP(3)", got ${describe(o.type)}`);
    try {
      parseType(o.type);
    } catch (e) {
      throw new TableDefinitionError(`${at}.type`, `not a Paimon type: ${(e as Error).message}`);
    }
    if (o.description !== undefined && typeof o.description !== 'string') throw new TableDefinitionError(`${at}.description`, `expected a string, got ${describe(o.description)}`);
    fields.push({ id: i, name: o.name, type: o.type, ...(o.description === undefined ? {} : { description: o.description as string }) });
  }

  const pk = entry.primaryKeys;
  if (!Array.isArray(pk) || pk.length === 0 || pk.some((k) => typeof k !== 'string')) {
    throw new TableDefinitionError(`${path}.primaryKeys`, `expected a non-empty array of column names (a site's table is a primary-key table: one row per key, as its module reports it), got ${describe(pk)}`);
  }
  for (const [i, k] of (pk as string[]).entries()) {
    if (!fields.some((f) => f.name === k)) throw new TableDefinitionError(`${path}.primaryKeys[${i}]`, `'${k}' is not one of the columns (${fields.map((f) => f.name).join(', ')})`);
    if ((pk as string[]).indexOf(k) !== i) throw new TableDefinitionError(`${path}.primaryKeys[${i}]`, `'${k}' is given twice`);
  }

  const partitionKeys = parsePartitionKeys(entry.partitionKeys, fields, pk as string[], path);

  const raw = entry.options ?? {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new TableDefinitionError(`${path}.options`, `expected an object of Paimon table options (strings), got ${describe(raw)}`);
  const options: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof v !== 'string') throw new TableDefinitionError(`${path}.options.${k}`, `expected a string (Paimon options are strings: "1", "true"), got ${describe(v)}`);
    if (k === 'partition' || k === 'primary-key') throw new TableDefinitionError(`${path}.options.${k}`, `not an option here: the keys are 'primaryKeys' and 'partitionKeys' of the entry`);
    const refused = REFUSED_OPTIONS.find(([test]) => test(k));
    if (refused) throw new TableDefinitionError(`${path}.options.${k}`, refused[1]);
    options[k] = v;
  }
  // Paimon's writer expires nothing in a table without partitions and says nothing of it: a
  // history table given '30 d' and no partitionKeys would keep every row on the site PC for good.
  if (partitionKeys.length === 0) {
    const idle = Object.keys(options).find((k) => k.startsWith('partition.expiration-') || k.startsWith('partition.timestamp-'));
    if (idle) throw new TableDefinitionError(`${path}.options.${idle}`, `the table has no partitionKeys, so no partition of it ever expires: give partitionKeys (a column of primaryKeys, e.g. ["day"]) or leave the option out`);
  }

  if (entry.comment !== undefined && typeof entry.comment !== 'string') throw new TableDefinitionError(`${path}.comment`, `expected a string, got ${describe(entry.comment)}`);
  const def: TableDefinition = {
    name,
    fields,
    partitionKeys,
    primaryKeys: [...(pk as string[])],
    options,
    ...(entry.comment === undefined ? {} : { comment: entry.comment as string }),
    definedBy: path,
  };
  // The schema the table would be made with, checked as the table store checks it at creation:
  // option names and values (a bad one names the option), and what this store can write.
  try {
    checkWritableOptions(definitionSchema(def), `table ${name}`, false);
  } catch (e) {
    throw new TableDefinitionError(`${path}.options`, (e as Error).message);
  }
  const unordered = orderProblem(def);
  if (unordered) throw new TableDefinitionError(`${path}.options`, unordered);
  return def;
}

/**
 * A `tables` entry's `partitionKeys` (Paimon's name), checked as the table store would check the
 * schema, but naming the config key of the one at fault: each a column of the entry, once, of a type
 * a partition can have here (not ARRAY or MAP, which have no order and no partition text, nor
 * binary, whose directory name Java prints as `[B@hash`), and in the primary key — Paimon keeps a
 * key in one partition only with the partition keys in the primary key (else it needs dynamic
 * buckets and a cross-partition index, which this store does not write) — which also makes each
 * NOT NULL (a key column is). The key must keep a column besides them: rows are told apart within a
 * partition by it. Absent or [] is an unpartitioned table.
 */
function parsePartitionKeys(given: unknown, fields: readonly { name: string; type: string }[], pk: readonly string[], path: string): string[] {
  if (given === undefined) return [];
  const at = `${path}.partitionKeys`;
  if (!Array.isArray(given)) throw new TableDefinitionError(at, `expected an array of column names that are in primaryKeys (e.g. ["day"]), got ${describe(given)}`);
  const keys: string[] = [];
  for (const [i, k] of given.entries()) {
    const here = `${at}[${i}]`;
    if (typeof k !== 'string') throw new TableDefinitionError(here, `expected a column name, got ${describe(k)}`);
    const field = fields.find((f) => f.name === k);
    if (!field) throw new TableDefinitionError(here, `'${k}' is not one of the columns (${fields.map((f) => f.name).join(', ')})`);
    if (keys.includes(k)) throw new TableDefinitionError(here, `'${k}' is given twice`);
    const type = parseType(field.type);
    if (isNestedType(type)) throw new TableDefinitionError(here, `'${k}' is ${typeToString(type)}: expected a column of a type a partition can have (not ARRAY or MAP), such as STRING, DATE, INT or BIGINT`);
    if (['BINARY', 'VARBINARY', 'BYTES'].includes(type.root)) {
      throw new TableDefinitionError(here, `'${k}' is ${typeToString(type)}: binary partition columns are not written here (Java would name the partition's directory by the array's identity); expected a column such as STRING, DATE, INT or BIGINT`);
    }
    if (!pk.includes(k)) {
      throw new TableDefinitionError(
        here,
        `'${k}' is not in primaryKeys (${pk.join(', ')}): Paimon keeps a key's row in one partition only when the primary key contains every partition key (else the key moves between partitions, which needs dynamic buckets this store does not write); add '${k}' to primaryKeys, which also makes it NOT NULL`,
      );
    }
    keys.push(k);
  }
  if (keys.length > 0 && pk.every((k) => keys.includes(k))) {
    throw new TableDefinitionError(at, `every primary-key column (${pk.join(', ')}) is a partition key: the primary key needs a column besides them that tells the rows of a partition apart`);
  }
  return keys;
}

/** How an event reaches a table twice, in the refusals below. */
const TWICE = "(the module's resend, a dead letter replayed, a replay a crash cut short)";

/**
 * Why the table's rows would not be ordered by its module's seq, or undefined. An event can reach
 * a table twice: the module resends what it is asked to (a resync) or what it was not sure went,
 * a dead letter is replayed (`tilstand deadletters replay`, which does not go through the
 * sequencer) after its stream was bound to a table that already has the event from the module's
 * resend, and a replay interrupted by a crash runs again. A
 * table ordered by the seq (`sequence.field`, or a sequence group over every column) keeps the
 * newest row whatever comes again; otherwise an old event written again overwrites a newer row,
 * and an aggregate counts it twice. The seed tables are ordered so (CONTRACTS.md "Seed tables").
 */
function orderProblem(def: TableDefinition): string | undefined {
  const engine = (def.options['merge-engine'] ?? 'deduplicate').trim().toLowerCase();
  const hint = "bind the module's source.seq to a BIGINT column and name it in 'sequence.field'";
  if (engine === 'first-row') return undefined; // the first row stays: an event again changes nothing
  if (engine === 'aggregation') {
    return `merge-engine 'aggregation' is not taken for a site's table: an event can reach a table twice ${TWICE}, and an aggregate would count it twice; use deduplicate or partial-update and ${hint}`;
  }
  // Valid values were checked before (checkWritableOptions). Descending keeps the lowest seq: the
  // module's first event for a key would stay for good, and an old one sent again replace newer rows.
  const sortOrder = def.options['sequence.field.sort-order'];
  if (sortOrder !== undefined && sortOrder.trim().toLowerCase() !== 'ascending') {
    return `option 'sequence.field.sort-order' = '${sortOrder}' keeps the row with the lowest seq: a module's newer events would never replace its first, and an old one that comes again (a dead letter replayed, a resend) would replace newer rows; leave the option out (ascending)`;
  }
  if (def.options['sequence.field'] !== undefined) return undefined;
  if (engine === 'partial-update') {
    const grouped = new Set(sequenceGroups(def).flatMap((g) => [...g.fields, ...g.columns]));
    const loose = def.fields.filter((f) => !def.primaryKeys.includes(f.name) && !grouped.has(f.name)).map((f) => f.name);
    if (grouped.size > 0 && loose.length === 0) return undefined;
    return `a partial-update table of the site's own needs 'sequence.field', or a sequence group ('fields.<seq column>.sequence-group') over every column${loose.length > 0 && grouped.size > 0 ? ` (not in one: ${loose.join(', ')})` : ''}: an event can reach a table twice ${TWICE}, and without the seq an old one overwrites a newer row`;
  }
  return `a ${engine} table of the site's own needs 'sequence.field': an event can reach a table twice ${TWICE}, and without the seq an old one overwrites a newer row; ${hint}`;
}

/**
 * The tables a config `tables` list defines (entries with `columns`), in order; entries that are
 * not objects are left to the config's own check. For readers of a config.json or a replay
 * fixture's budgets.json outside core/site.
 */
export function tableDefinitionsIn(entries: unknown): TableDefinition[] {
  if (!Array.isArray(entries)) return [];
  const out: TableDefinition[] = [];
  for (const [i, e] of entries.entries()) {
    if (e === null || typeof e !== 'object' || Array.isArray(e)) continue;
    const def = parseTableDefinition(e as Record<string, unknown>, `tables[${i}]`);
    if (def) out.push(def);
  }
  return out;
}

/**
 * The schema `def` makes a new table with (Paimon's defaults filled in, key columns NOT NULL),
 * checked as the table store checks a new table's, except for the values an earlier version took
 * (EARLIER_VALUES), which are kept unchecked here: a table may exist with them (`checkNewTable`
 * refuses them for a new one).
 */
export function definitionSchema(def: TableDefinition): TableSchema {
  const earlier = Object.fromEntries(earlierOnlyOptions(def.options).map((o) => [o.key, o.value]));
  const options = Object.fromEntries(Object.entries(def.options).filter(([k]) => earlier[k] === undefined));
  const schema = TableSchema.fromSpec(
    {
      fields: def.fields.map((f) => (f.description === undefined ? { name: f.name, type: f.type } : { name: f.name, type: f.type, description: f.description })),
      primaryKeys: [...def.primaryKeys],
      partitionKeys: [...def.partitionKeys],
      options,
      ...(def.comment === undefined ? {} : { comment: def.comment }),
    },
    0,
  );
  if (Object.keys(earlier).length === 0) return schema;
  const json = schema.toJson();
  return new TableSchema({ ...json, options: { ...json.options, ...earlier } }, false);
}

/**
 * Options the table store fills in when a definition leaves them out (core/lsm specDefaultOptions):
 * they are compared only when the definition gives them, so a later version's different default
 * does not turn into a change of every site table at its upgrade.
 */
const FILLED_OPTIONS = Object.keys(specDefaultOptions(true));

/**
 * Brings an existing table to a site definition, as Paimon's ALTER TABLE would: columns the
 * definition adds after the table's last are added; an option it sets, changes or no longer gives
 * is set or removed where Paimon lets an option change after creation; a changed description or
 * comment is written. A column dropped, renamed, moved or retyped, another key or other partition
 * keys, or an option that
 * is fixed at creation (merge-engine, bucket, sequence groups, …) is refused with the definition's
 * config key and every difference. Returns the changes (none when the table matches); with `apply`
 * false only checks them (`tilstand config check`). An option value an earlier version took and the
 * table has (EARLIER_VALUES) matches, and goes to `onWarning` naming the option and what Java needs;
 * so does such a value of an option the store fills in that the definition leaves out (kept).
 */
export function evolveToDefinition(table: Table, def: TableDefinition, apply = true, onWarning?: (message: string) => void): SchemaChange[] {
  const where = def.definedBy ?? def.name;
  const want = definitionSchema(def);
  const have = table.schema;
  const problems: string[] = [];
  const changes: SchemaChange[] = [];
  // A column new to the table but given before one of its columns (inserted, not added at the
  // end) is named once; the table's later columns are then compared by name, not each reported
  // as renamed because it moved down one place.
  let inserted = false;
  for (const [i, f] of have.fields.entries()) {
    let w: (typeof want.fields)[number] | undefined = want.fields[i];
    if (!inserted && w && w.name !== f.name && !have.fields.some((h) => h.name === w!.name) && want.fields.some((x) => x.name === f.name)) {
      inserted = true;
      problems.push(`column '${w.name}' is new and given before '${f.name}': a new column goes at the end of columns`);
    }
    if (inserted) w = want.fields.find((x) => x.name === f.name);
    if (!w) problems.push(`column '${f.name}' (${typeToString(f.type)}) is not in the definition: a column cannot be dropped`);
    else if (w.name !== f.name) problems.push(`column ${i + 1} is '${f.name}' in the table and '${w.name}' in the definition: columns cannot be renamed or reordered`);
    // A column added to an existing table is nullable (its earlier rows have none), whatever the
    // definition says: NOT NULL there holds for tables made with it.
    else if (typeToString(f.type.nullable ? withNullable(w.type, true) : w.type) !== typeToString(f.type)) problems.push(`column '${f.name}' is ${typeToString(f.type)} in the table and ${typeToString(w.type)} in the definition: a column's type cannot change`);
    else if ((w.description ?? null) !== (f.description ?? null)) changes.push({ kind: 'updateColumnComment', name: f.name, comment: w.description ?? null });
  }
  if (want.primaryKeys.join(',') !== have.primaryKeys.join(',')) problems.push(`the primary key is (${have.primaryKeys.join(', ')}) in the table and (${want.primaryKeys.join(', ')}) in the definition`);
  // Paimon's partition keys are fixed at creation (its `partition` option is immutable): the
  // table's files live in one directory per partition, at HQ too.
  if (want.partitionKeys.join(',') !== have.partitionKeys.join(',')) {
    const keys = (k: readonly string[]) => (k.length === 0 ? 'none' : `(${k.join(', ')})`);
    problems.push(`the partition keys are ${keys(have.partitionKeys)} in the table and ${keys(want.partitionKeys)} in the definition: partition keys cannot change`);
  }
  if ((want.comment ?? null) !== (have.comment ?? null)) changes.push({ kind: 'updateComment', comment: want.comment ?? null });

  const wantOptions = want.options.raw;
  const haveOptions = have.options.raw;
  const optionChanges: SchemaChange[] = [];
  for (const [k, v] of Object.entries(wantOptions)) {
    if (FILLED_OPTIONS.includes(k) && def.options[k] === undefined) continue;
    if (haveOptions[k] !== v) optionChanges.push({ kind: 'setOption', key: k, value: v });
  }
  for (const k of Object.keys(haveOptions)) if (wantOptions[k] === undefined && !FILLED_OPTIONS.includes(k)) optionChanges.push({ kind: 'removeOption', key: k });
  // Columns the definition adds at the end (after the options in the ALTER, which checks its result).
  const addedColumns: SchemaChange[] = [];
  let after = have.fields.at(-1)!.name;
  for (const f of want.fields.slice(have.fields.length)) {
    // Added columns are nullable whatever the definition says: rows written before have none.
    const type = typeToString(withNullable(f.type, true));
    addedColumns.push({ kind: 'addColumn', name: f.name, type, ...(f.description === undefined ? {} : { description: f.description }), position: { after } });
    after = f.name;
  }
  // The columns added, which an option may name (`fields.<new column>.default-value`); not when
  // adding them fails by itself (a column given in the middle, named above), which no option caused.
  let withColumns = addedColumns;
  try {
    if (addedColumns.length > 0) applySchemaChanges(have, addedColumns, 0);
  } catch {
    withColumns = [];
  }
  for (const c of optionChanges) {
    // Each option on its own, so every refused one is named with both values.
    try {
      applySchemaChanges(have, [c, ...withColumns], 0);
    } catch (e) {
      const k = (c as { key: string }).key;
      const was = haveOptions[k] === undefined ? 'not set' : JSON.stringify(haveOptions[k]);
      const now = c.kind === 'setOption' ? JSON.stringify(c.value) : 'not set';
      problems.push(`option '${k}' is ${was} in the table and ${now} in the definition: ${(e as Error).message}`);
    }
  }
  changes.push(...optionChanges, ...addedColumns);
  if (problems.length === 0 && changes.length > 0) {
    // The table as the changes would leave it must be one this store can write.
    try {
      checkWritableOptions(applySchemaChanges(have, changes, 0), `table ${def.name}`);
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  if (problems.length > 0) {
    throw new TableDefinitionError(
      where,
      `table '${def.name}' exists with columns (${have.fields.map((f) => `${f.name} ${typeToString(f.type)}`).join(', ')}) and differs from its definition: ${problems.join('; ')}. A table of the site's own can gain columns at the end and change its descriptions and the options Paimon lets change; for another shape, give the table another name`,
    );
  }
  // The table's own earlier value, which no change here replaces: the definition gives that very
  // value, or leaves out an option the store fills in (manifest.compression, not compared when left
  // out: FILLED_OPTIONS), which kept it without a word.
  for (const o of earlierOnlyOptions(haveOptions)) {
    if (def.options[o.key] !== undefined ? def.options[o.key] !== o.value : optionChanges.some((c) => (c as { key: string }).key === o.key)) continue;
    onWarning?.(
      `table ${def.name} (${where}): option '${o.key}' = '${o.value}' is the table's own (an earlier version made it so), so the site goes on with it, but Java's engines fail on it: ${o.why}. ` +
        `Give the value expected in config.json (the next start sets it on the table, an ALTER); a new table is refused with '${o.value}'`,
    );
  }
  if (apply && changes.length > 0) table.alter(changes);
  return changes;
}

/** The changes `evolveToDefinition` found, in words for `tilstand config check` ("" for none). */
export function describeChanges(changes: readonly SchemaChange[]): string {
  const added = changes.flatMap((c) => (c.kind === 'addColumn' ? [c.name] : []));
  const options = changes.flatMap((c) => (c.kind === 'setOption' || c.kind === 'removeOption' ? [c.key] : []));
  const words = changes.some((c) => c.kind === 'updateColumnComment' || c.kind === 'updateComment');
  const parts = [
    added.length > 0 ? `adds column${added.length === 1 ? '' : 's'} ${added.join(', ')}` : '',
    options.length > 0 ? `changes option${options.length === 1 ? '' : 's'} ${options.join(', ')}` : '',
    words ? 'updates its descriptions' : '',
  ].filter((p) => p !== '');
  return parts.length === 0 ? '' : parts.length === 1 ? parts[0]! : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)!}`;
}
