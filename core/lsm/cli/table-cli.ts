// `tilstand table …`: the table store's command line (usage, output formats and exit codes in
// README.md next to this file). Every command opens the warehouse given by `--warehouse`,
// names tables `<db>.<table>`, writes results to stdout and errors to stderr as
// `tilstand: <message>`, and returns an exit code instead of exiting, so tests run it in-process.
//
// Contract: reading commands (scan, get, snapshots, tags, inspect, list) take no lock and pin the
// snapshot they read; writing commands (put, compact, expire, expire-partitions, drop) hold the
// table's single writer for the duration of the call and release it on every path. `put`
// validates every input line before it opens the writer, and commits once.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import {
  Catalog,
  isCorruption,
  localFileIO,
  LsmError,
  parseIdentifier,
  parseType,
  ROW_KIND_TEXT,
  RowKind,
  typeToString,
  type Identifier,
  type SchemaSpec,
  type Table,
  type TableWriter,
} from '../index.ts';
import { TablePaths, tableDir } from '../table-paths.ts';
import type { NestedTypeJson, TypeJson } from '../types.ts';
import { partitionExpireNowConfig, type PartitionExpireArgumentNames, type PartitionExpireArguments } from '../partition-expire.ts';
import { WriterLock } from '../writer-lock.ts';
import { CliError, EXIT, fileInTheWay, parseArgs, pathOption, refuseExtraArguments, usageError, type FlagSpecs, type ParsedArgs } from './args.ts';
import { inspectTable, inspectLines } from './inspect.ts';
import { ALTER_COMMAND } from './table-cli-alter.ts';
import { CHANGES_COMMANDS } from './table-cli-changes.ts';
import { formatDuration, formatTable, LineWriter, OutputClosed, type CliIO } from './output.ts';
import { columnValueFromJson, parseColumns, parseDuration, parseKey, parseSnapshotId, parseWhere, readPoint, repeatedKeyPath, repeatedKeyProblem, rowToJson } from './values.ts';

interface Context {
  args: ParsedArgs;
  io: CliIO;
  out: LineWriter;
  catalog: Catalog;
}

interface Command {
  /** `scan`, or `tag create`. */
  name: string;
  /** Positional arguments and flags, for the usage line. */
  synopsis: string;
  summary: string;
  flags: FlagSpecs;
  /** Names of the positional arguments; those in brackets are optional. */
  positionals: string[];
  run(ctx: Context): Promise<number>;
}

const WAREHOUSE: FlagSpecs = { warehouse: { type: 'string', value: '<dir>' } };
const READ_POINT: FlagSpecs = {
  snapshot: { type: 'string', value: '<id>' },
  tag: { type: 'string', value: '<name>' },
  at: { type: 'string', value: '<ISO time>' },
};
const JSON_FLAG: FlagSpecs = { json: { type: 'boolean' } };

// ---------------------------------------------------------------------------------------------
// Helpers shared by the commands.

function identifier(ctx: Context, index = 0): Identifier {
  try {
    return parseIdentifier(ctx.args.positionals[index]!);
  } catch (e) {
    throw usageError((e as Error).message);
  }
}

function openTable(ctx: Context): { id: Identifier; table: Table } {
  const id = identifier(ctx);
  return { id, table: ctx.catalog.getTable(id) };
}

/** Runs `f` with the table's writer and releases it on every path. */
function withWriter<T>(table: Table, f: (w: TableWriter) => T): T {
  const w = table.newWriter({ commitUser: 'tilstand-cli' });
  try {
    return f(w);
  } finally {
    w.close();
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();
/** Paimon stores tag creation times as local wall-clock millis: print them without a zone. */
const localIso = (ms: number): string => new Date(ms).toISOString().replace(/Z$/, ''); // past year 9999: `+010000-…`, longer

// ---------------------------------------------------------------------------------------------
// create: the schema file.

const SCHEMA_KEYS = new Set(['fields', 'primaryKeys', 'partitionKeys', 'options', 'comment']);
/** Keys of a Paimon schema-N file that a copied schema may carry; ignored (ids are assigned anew). */
const PAIMON_SCHEMA_KEYS = new Set(['version', 'id', 'highestFieldId', 'timeMillis']);

function readSchemaFile(path: string): SchemaSpec {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR') throw usageError(`cannot read schema file ${path}: ${code === 'ENOENT' ? 'no such file' : 'is a directory'}`);
    throw new CliError(EXIT.io, `cannot read schema file ${path}: ${(e as Error).message}`);
  }
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw usageError(`schema file ${path} is not valid JSON: ${(e as Error).message}`);
  }
  const bad = (why: string) => usageError(`schema file ${path}: ${why}`);
  // JSON.parse keeps the last of a repeated key and says nothing: `"bucket": "1", "bucket": "4"`
  // made a table of 4 buckets. Which one was meant is not the command's to guess.
  const twice = repeatedKeyPath(text);
  if (twice !== undefined) throw bad(`key '${twice}' is given twice; expected each key once (JSON would keep only the last)`);
  if (j === null || typeof j !== 'object' || Array.isArray(j)) throw bad('expected a JSON object with fields, primaryKeys, partitionKeys and options');
  const o = j as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!SCHEMA_KEYS.has(k) && !PAIMON_SCHEMA_KEYS.has(k)) throw bad(`unknown key '${k}' (expected fields, primaryKeys, partitionKeys, options, comment)`);
  }
  if (!Array.isArray(o.fields) || o.fields.length === 0) throw bad(`'fields' must be a non-empty list of {"name": …, "type": …}`);
  const fields = o.fields.map((f: unknown, i: number) => {
    if (f === null || typeof f !== 'object') throw bad(`field ${i} must be an object with 'name' and 'type'`);
    const { name, type, description } = f as Record<string, unknown>;
    if (typeof name !== 'string' || name.length === 0) throw bad(`field ${i} needs a 'name' string`);
    // A type object is Paimon's JSON for ARRAY/MAP, as a schema file Java wrote has it (README):
    // parsed here so a wrong one names its field; createTable parses it again from the spec.
    if (type !== null && typeof type === 'object' && !Array.isArray(type)) {
      try {
        parseType(type as NestedTypeJson);
      } catch (e) {
        if (e instanceof LsmError && (e.kind === 'InvalidArgument' || e.kind === 'NotSupported')) throw bad(`field '${name}': ${e.message}`);
        throw e;
      }
    } else if (typeof type !== 'string') {
      throw bad(`field '${name}' needs a 'type': a string such as "INT NOT NULL" or "ARRAY<INT>", or Paimon's JSON type object such as {"type":"ARRAY","element":"INT"}`);
    }
    if (description !== undefined && typeof description !== 'string') throw bad(`field '${name}': 'description' must be a string`);
    return { name, type: type as TypeJson, ...(description === undefined ? {} : { description }) };
  });
  const names = (k: 'primaryKeys' | 'partitionKeys'): string[] => {
    const v = o[k];
    if (v === undefined) return [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw bad(`'${k}' must be a list of column names`);
    return v as string[];
  };
  const options: Record<string, string> = {};
  if (o.options !== undefined) {
    if (o.options === null || typeof o.options !== 'object' || Array.isArray(o.options)) throw bad(`'options' must be an object of option name → value`);
    for (const [k, v] of Object.entries(o.options)) {
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw bad(`option '${k}' must be a string, number or boolean`);
      options[k] = String(v);
    }
  }
  if (o.comment !== undefined && typeof o.comment !== 'string') throw bad(`'comment' must be a string`);
  return {
    fields,
    primaryKeys: names('primaryKeys'),
    partitionKeys: names('partitionKeys'),
    options,
    ...(typeof o.comment === 'string' ? { comment: o.comment } : {}),
  };
}

async function create(ctx: Context): Promise<number> {
  const id = identifier(ctx);
  const path = resolve(pathOption(ctx.args, 'schema', 'a schema file') ?? ctx.args.required('schema'));
  const spec = readSchemaFile(path);
  // createTable checks the schema (types, options, key columns) only once the database is there:
  // a database made for this table goes again when the table is refused, so a refused create
  // leaves the warehouse as it was. Not with cascade: a table another writer has made in it since
  // stays (and so does the database).
  const newDatabase = !ctx.catalog.databaseExists(id.database);
  ctx.catalog.createDatabase(id.database, true);
  let table: Table;
  try {
    table = ctx.catalog.createTable(id, spec, ctx.args.boolean('ignore-if-exists'));
  } catch (e) {
    if (newDatabase) {
      try {
        ctx.catalog.dropDatabase(id.database);
      } catch {
        // not empty any more, or gone: the refusal is what is reported
      }
    }
    if (e instanceof LsmError && (e.kind === 'InvalidArgument' || e.kind === 'NotSupported')) {
      throw new CliError(EXIT.usage, `schema file ${path}: ${e.message}`);
    }
    throw e;
  }
  await ctx.out.line(table.paths.root);
  return EXIT.ok;
}

// ---------------------------------------------------------------------------------------------
// put: JSON lines on stdin, validated in full, then one commit.

interface InputRow {
  row: unknown[];
  kind: RowKind;
}

function parseLine(table: Table, text: string, lineNo: number): InputRow {
  const at = `line ${lineNo}`;
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw usageError(`${at}: not valid JSON: ${(e as Error).message}`);
  }
  if (j === null || typeof j !== 'object' || Array.isArray(j)) throw usageError(`${at}: expected a JSON object keyed by column name`);
  const twice = repeatedKeyProblem(text);
  if (twice) throw usageError(`${at}: ${twice}`);
  const o = j as Record<string, unknown>;
  const schema = table.schema;
  for (const k of Object.keys(o)) {
    if (k !== '_kind' && !schema.fieldIndex.has(k)) {
      throw usageError(`${at}: unknown column '${k}' (columns: ${schema.fields.map((f) => f.name).join(', ')})`);
    }
  }
  let kind = 0 as RowKind;
  if (o._kind !== undefined) {
    const i = (ROW_KIND_TEXT as readonly unknown[]).indexOf(o._kind);
    if (i < 0) throw usageError(`${at}: column '_kind': expected "+I", "-U", "+U" or "-D", got ${JSON.stringify(o._kind)}`);
    kind = i as RowKind;
  }
  // Said here, with the line, rather than by the writer once every line is read.
  if (kind !== RowKind.INSERT && schema.primaryKeys.length === 0) {
    throw usageError(`${at}: column '_kind': an append table (no primary key) takes only "+I" rows, got "${ROW_KIND_TEXT[kind]}"`);
  }
  if (kind === RowKind.DELETE && schema.primaryKeys.length > 0) {
    // "The key is enough" holds for nullable columns only: Paimon writes no null into a NOT NULL
    // column, not even in a delete (TableWriteImpl's nullability check), and its SQL DELETE
    // writes the whole row it read. Values are not made up here: on an aggregation or a
    // sequence-group table they are what the delete retracts.
    const missing = schema.fields.filter((f) => !f.type.nullable && !schema.primaryKeys.includes(f.name) && (o[f.name] === undefined || o[f.name] === null));
    if (missing.length > 0) {
      const cols = missing.map((f) => `'${f.name}' (${typeToString(f.type)})`).join(', ');
      throw usageError(
        `${at}: a -D row must also give the NOT NULL column${missing.length > 1 ? 's' : ''} ${cols}: Paimon writes no null there, not even in a delete; ` +
          'give the deleted row\'s values (`tilstand table get` prints them)',
      );
    }
  }
  const row = schema.fields.map((f) => {
    try {
      return columnValueFromJson(f, o[f.name]);
    } catch (e) {
      throw usageError(`${at}: ${(e as Error).message}`);
    }
  });
  return { row, kind };
}

async function put(ctx: Context): Promise<number> {
  const { table } = openTable(ctx);
  const rows: InputRow[] = [];
  const lines = createInterface({ input: ctx.io.stdin, crlfDelay: Infinity });
  let lineNo = 0;
  for await (const text of lines) {
    lineNo++;
    if (text.trim().length === 0) continue;
    rows.push(parseLine(table, text, lineNo));
  }
  if (rows.length === 0) {
    await ctx.out.line(JSON.stringify({ snapshot: null, rows: 0 }));
    return EXIT.ok;
  }
  const result = withWriter(table, (w) => {
    for (const r of rows) w.write(r.row, r.kind);
    return w.commit();
  });
  await ctx.out.line(JSON.stringify({ snapshot: result.snapshotId ?? null, rows: rows.length }));
  return EXIT.ok;
}

// ---------------------------------------------------------------------------------------------
// Reading.

function readPointOf(ctx: Context) {
  return readPoint({ snapshot: ctx.args.string('snapshot'), tag: ctx.args.string('tag'), at: ctx.args.string('at') });
}

/** The read point given, else where a Paimon engine's batch read of the table starts (its scan.* options). */
function batchPointOf(ctx: Context, table: Table) {
  const at = readPointOf(ctx);
  return Object.keys(at).length > 0 ? at : table.batchReadPoint();
}

async function scan(ctx: Context): Promise<number> {
  const { table } = openTable(ctx);
  const at = batchPointOf(ctx, table);
  // At a snapshot, tag or time the columns are that snapshot's (the reader's schema).
  const reader = table.reader(at);
  try {
    const schema = reader.schema;
    const where = ctx.args.strings('where').map((w) => parseWhere(reader, w));
    const columnsText = ctx.args.string('columns');
    const projection = columnsText === undefined ? undefined : parseColumns(reader, columnsText);
    const fields = projection ? projection.map((c) => schema.fields[schema.fieldIndex.get(c)!]!) : schema.fields;
    for (const row of reader.scan({ where, ...(projection ? { projection } : {}) })) {
      await ctx.out.line(JSON.stringify(rowToJson(fields, row)));
    }
  } finally {
    reader.close();
  }
  return EXIT.ok;
}

async function get(ctx: Context): Promise<number> {
  const { table } = openTable(ctx);
  const at = batchPointOf(ctx, table);
  const reader = table.reader(at);
  let row: unknown[] | undefined;
  try {
    row = reader.get(parseKey(reader, ctx.args.required('key')));
  } finally {
    reader.close();
  }
  if (row === undefined) {
    const where = reader.snapshot ? `snapshot ${reader.snapshot.id}` : 'the table (it has no snapshot yet)';
    throw new CliError(EXIT.notFound, `not found: key ${ctx.args.required('key')} in ${where}`);
  }
  await ctx.out.line(JSON.stringify(rowToJson(reader.schema.fields, row)));
  return EXIT.ok;
}

async function snapshots(ctx: Context): Promise<number> {
  const { table } = openTable(ctx);
  const tagsBySnapshot = new Map<number, string[]>();
  for (const t of table.listTags()) tagsBySnapshot.set(t.snapshot.id, [...(tagsBySnapshot.get(t.snapshot.id) ?? []), t.name]);
  const list = table.snapshots.listIds().flatMap((id) => {
    const s = table.snapshots.tryGet(id);
    return s ? [s] : [];
  });
  if (ctx.args.boolean('json')) {
    const json = list.map((s) => ({
      id: s.id,
      kind: s.commitKind,
      time: iso(s.timeMillis),
      timeMillis: s.timeMillis,
      totalRecordCount: s.totalRecordCount,
      deltaRecordCount: s.deltaRecordCount,
      changelogRecordCount: s.changelogRecordCount,
      schemaId: s.schemaId,
      commitUser: s.commitUser,
      tags: tagsBySnapshot.get(s.id) ?? [],
    }));
    await ctx.out.line(JSON.stringify(json));
    return EXIT.ok;
  }
  if (list.length === 0) {
    await ctx.out.line('(no snapshots)');
    return EXIT.ok;
  }
  const num = (n: number | null) => (n === null ? '-' : String(n));
  const rows = list.map((s) => [
    String(s.id),
    s.commitKind,
    iso(s.timeMillis),
    num(s.totalRecordCount),
    num(s.deltaRecordCount),
    num(s.changelogRecordCount),
    String(s.schemaId),
    (tagsBySnapshot.get(s.id) ?? []).join(','),
  ]);
  // FILE RECORDS, as `tags` and `tilstand hq tags` call the same count (totalRecordCount): the
  // records in the snapshot's data files before they are merged by key, not its rows ("TOTAL"
  // read as rows: 122 for 80 stock rows). The JSON keeps `totalRecordCount`: scripts read it.
  await ctx.out.lines(formatTable(['ID', 'KIND', 'TIME', 'FILE RECORDS', 'DELTA', 'CHANGELOG', 'SCHEMA', 'TAGS'], rows, new Set([0, 3, 4, 5, 6])));
  return EXIT.ok;
}

async function tags(ctx: Context): Promise<number> {
  const { table } = openTable(ctx);
  const list = table.listTags();
  if (ctx.args.boolean('json')) {
    const json = list.map((t) => ({
      name: t.name,
      snapshot: t.snapshot.id,
      snapshotTime: iso(t.snapshot.timeMillis),
      recordCount: t.snapshot.totalRecordCount,
      createTime: t.createTimeMillis === undefined ? null : localIso(t.createTimeMillis),
      retainedMillis: t.retainedMillis ?? null,
      expiresAt: t.createTimeMillis === undefined || t.retainedMillis === undefined ? null : localIso(t.createTimeMillis + t.retainedMillis),
    }));
    await ctx.out.line(JSON.stringify(json));
    return EXIT.ok;
  }
  if (list.length === 0) {
    await ctx.out.line('(no tags)');
    return EXIT.ok;
  }
  const rows = list.map((t) => [
    t.name,
    String(t.snapshot.id),
    iso(t.snapshot.timeMillis),
    t.snapshot.totalRecordCount === null ? '-' : String(t.snapshot.totalRecordCount),
    t.createTimeMillis === undefined ? '-' : localIso(t.createTimeMillis),
    t.retainedMillis === undefined ? 'forever' : formatDuration(t.retainedMillis),
  ]);
  // FILE RECORDS, as `tilstand hq tags` calls it: the snapshot's records across its data files
  // before they are merged by key, more than the rows of a primary-key table not yet compacted
  // ("RECORDS" read as rows). The JSON keeps `recordCount`: scripts read it.
  await ctx.out.lines(formatTable(['NAME', 'SNAPSHOT', 'SNAPSHOT TIME', 'FILE RECORDS', 'CREATED (LOCAL)', 'RETAINED'], rows, new Set([1, 3])));
  return EXIT.ok;
}

async function tagCreate(ctx: Context): Promise<number> {
  const { table } = openTable(ctx);
  const name = ctx.args.positionals[1]!;
  const snapshotText = ctx.args.string('snapshot');
  const snapshotId = snapshotText === undefined ? undefined : parseSnapshotId(snapshotText);
  const retainText = ctx.args.string('retain');
  const retainMs = retainText === undefined ? undefined : parseDuration(retainText, 'retain');
  if (retainMs === 0) throw usageError(`option '--retain': expected a positive duration, got '${retainText}'`);
  const tag = table.createTag(name, snapshotId, retainMs);
  // Without --retain the table's 'tag.default-time-retained' may still apply (Table.createTag): say what the tag got.
  const retained = tag.retainedMillis;
  await ctx.out.line(`created tag '${tag.name}' on snapshot ${tag.snapshot.id}${retained === undefined ? '' : `, retained for ${formatDuration(retained)}${retainMs === undefined ? " (the table's tag.default-time-retained)" : ''}`}`);
  return EXIT.ok;
}

async function tagDelete(ctx: Context): Promise<number> {
  const { table } = openTable(ctx);
  const name = ctx.args.positionals[1]!;
  table.deleteTag(name);
  await ctx.out.line(`deleted tag '${name}'`);
  return EXIT.ok;
}

// ---------------------------------------------------------------------------------------------
// Maintenance.

async function compact(ctx: Context): Promise<number> {
  const { table } = openTable(ctx);
  const full = ctx.args.boolean('full');
  const id = withWriter(table, (w) => w.compact(full));
  await ctx.out.line(JSON.stringify({ snapshot: id ?? null, full }));
  return EXIT.ok;
}

async function expire(ctx: Context): Promise<number> {
  const { table } = openTable(ctx);
  const orphansText = ctx.args.string('orphans-older-than');
  const orphansMs = orphansText === undefined ? undefined : parseDuration(orphansText, 'orphans-older-than');
  const result = withWriter(table, (w) => {
    const r = w.expire();
    const orphans = orphansMs === undefined ? undefined : w.removeOrphanFiles(orphansMs);
    return { ...r, orphans };
  });
  const json: Record<string, unknown> = {
    expiredSnapshots: result.expiredSnapshots,
    expiredTags: result.expiredTags,
    deletedFiles: result.deletedFiles.length,
  };
  if (result.orphans !== undefined) json.orphanFilesRemoved = result.orphans.length;
  await ctx.out.line(JSON.stringify(json));
  return EXIT.ok;
}

async function inspect(ctx: Context): Promise<number> {
  const { id, table } = openTable(ctx);
  const report = inspectTable(`${id.database}.${id.table}`, table, readPointOf(ctx));
  if (ctx.args.boolean('json')) await ctx.out.line(JSON.stringify(report));
  else await ctx.out.lines(inspectLines(report));
  return EXIT.ok;
}

async function list(ctx: Context): Promise<number> {
  const warehouse = ctx.catalog.warehouse;
  if (!localFileIO.exists(warehouse)) throw new LsmError('NotFound', `warehouse ${warehouse} does not exist`);
  const db = ctx.args.positionals[0];
  const names = db === undefined ? ctx.catalog.listDatabases() : ctx.catalog.listTables(db);
  if (ctx.args.boolean('json')) await ctx.out.line(JSON.stringify(names));
  else await ctx.out.lines(names);
  return EXIT.ok;
}

async function drop(ctx: Context): Promise<number> {
  const id = identifier(ctx);
  if (!ctx.catalog.tableExists(id)) throw new LsmError('NotFound', `table '${id.database}.${id.table}' does not exist`);
  // Take the table's writer lock so a table being written is not pulled from under its writer.
  // The lock file itself, not a TableWriter: a table too damaged to open (its schema, its latest
  // snapshot) can still be dropped, and is refused the same way while it is written.
  const name = `${id.database}.${id.table}`;
  const lock = WriterLock.acquire(new TablePaths(tableDir(ctx.catalog.warehouse, id.database, id.table)).lockFile, `table ${name}`);
  try {
    ctx.catalog.dropTable(id);
  } finally {
    lock.release();
  }
  await ctx.out.line(`dropped ${id.database}.${id.table}`);
  return EXIT.ok;
}

// ---------------------------------------------------------------------------------------------
// The command table and dispatch.

export const TABLE_COMMANDS: readonly Command[] = [
  {
    name: 'list',
    synopsis: '[<db>] [--json]',
    summary: 'list the databases of the warehouse, or the tables of one database',
    flags: { ...WAREHOUSE, ...JSON_FLAG },
    positionals: ['[db]'],
    run: list,
  },
  {
    name: 'create',
    synopsis: '<db.table> --schema <file> [--ignore-if-exists]',
    summary: 'create a table (and its database) from a Paimon-shaped schema JSON file; prints the table path',
    flags: { ...WAREHOUSE, schema: { type: 'string', value: '<file>' }, 'ignore-if-exists': { type: 'boolean' } },
    positionals: ['db.table'],
    run: create,
  },
  {
    name: 'put',
    synopsis: '<db.table> < rows.jsonl',
    summary: 'write JSON lines from stdin (optional "_kind": +I -U +U -D) as one commit; prints {"snapshot":N,"rows":M}',
    flags: { ...WAREHOUSE },
    positionals: ['db.table'],
    run: put,
  },
  {
    name: 'scan',
    synopsis: '<db.table> [--snapshot <id> | --tag <name> | --at <ISO time>] [--where <cond>]… [--columns a,b]',
    summary: 'print rows as JSON lines; conditions: col=v col<v col<=v col>v col>=v col^=prefix',
    flags: { ...WAREHOUSE, ...READ_POINT, where: { type: 'string', multiple: true, value: '<cond>' }, columns: { type: 'string', value: '<a,b>' } },
    positionals: ['db.table'],
    run: scan,
  },
  {
    name: 'get',
    synopsis: '<db.table> --key <json> [--snapshot <id> | --tag <name> | --at <ISO time>]',
    summary: 'print the row of one primary key as JSON; exit 1 when there is none',
    flags: { ...WAREHOUSE, ...READ_POINT, key: { type: 'string', value: '<json>' } },
    positionals: ['db.table'],
    run: get,
  },
  {
    name: 'snapshots',
    synopsis: '<db.table> [--json]',
    summary: 'list retained snapshots: id, kind, time, record counts, schema id, tags',
    flags: { ...WAREHOUSE, ...JSON_FLAG },
    positionals: ['db.table'],
    run: snapshots,
  },
  {
    name: 'tags',
    synopsis: '<db.table> [--json]',
    summary: 'list tags: name, snapshot, times, retention',
    flags: { ...WAREHOUSE, ...JSON_FLAG },
    positionals: ['db.table'],
    run: tags,
  },
  {
    name: 'tag create',
    synopsis: '<db.table> <name> [--snapshot <id>] [--retain <duration>]',
    summary: 'tag the latest (or the given) snapshot; --retain 7d, 12h, 30m … lets the tag expire',
    flags: { ...WAREHOUSE, snapshot: { type: 'string', value: '<id>' }, retain: { type: 'string', value: '<duration>' } },
    positionals: ['db.table', 'name'],
    run: tagCreate,
  },
  {
    name: 'tag delete',
    synopsis: '<db.table> <name>',
    summary: 'delete a tag (its files are released at the next expire)',
    flags: { ...WAREHOUSE },
    positionals: ['db.table', 'name'],
    run: tagDelete,
  },
  {
    name: 'compact',
    synopsis: '<db.table> [--full]',
    summary: 'compact as the table options decide, or everything with --full; prints {"snapshot":N|null,"full":…}',
    flags: { ...WAREHOUSE, full: { type: 'boolean' } },
    positionals: ['db.table'],
    run: compact,
  },
  {
    name: 'expire',
    synopsis: '<db.table> [--orphans-older-than <duration>]',
    summary: 'expire snapshots per the table options, then optionally remove orphan files; prints a JSON summary',
    flags: { ...WAREHOUSE, 'orphans-older-than': { type: 'string', value: '<duration>' } },
    positionals: ['db.table'],
    run: expire,
  },
  {
    name: 'expire-partitions',
    synopsis: '<db.table> [--expiration-time <dur>] [--strategy values-time|update-time] [--timestamp-formatter <f>] [--timestamp-pattern <p>] [--max-expires <n>] [--dry-run] [--json]',
    summary: "drop now the partitions the table's partition.* options (or these flags, for this call only) say are expired; prints them and the snapshots written",
    flags: {
      ...WAREHOUSE,
      'expiration-time': { type: 'string', value: '<dur>' },
      strategy: { type: 'string', value: 'values-time|update-time' },
      'timestamp-formatter': { type: 'string', value: '<f>' },
      'timestamp-pattern': { type: 'string', value: '<p>' },
      'max-expires': { type: 'string', value: '<n>' },
      'dry-run': { type: 'boolean' },
      ...JSON_FLAG,
    },
    positionals: ['db.table'],
    run: expirePartitions,
  },
  {
    name: 'inspect',
    synopsis: '<db.table> [--snapshot <id> | --tag <name> | --at <ISO time>] [--json]',
    summary: 'per partition and bucket: levels, files, key and sequence ranges, sorted runs vs the compaction trigger',
    flags: { ...WAREHOUSE, ...READ_POINT, ...JSON_FLAG },
    positionals: ['db.table'],
    run: inspect,
  },
  {
    name: 'drop',
    synopsis: '<db.table>',
    summary: 'delete a table and all its files',
    flags: { ...WAREHOUSE },
    positionals: ['db.table'],
    run: drop,
  },
  ALTER_COMMAND, // table-cli-alter.ts
  ...CHANGES_COMMANDS, // table-cli-changes.ts: diff, follow, rollback
];

/** Usage of every table command, one block per command. */
export function tableUsage(): string[] {
  const lines = ['usage: tilstand table <command> --warehouse <dir> …', '', 'commands:'];
  for (const c of TABLE_COMMANDS) {
    lines.push(`  tilstand table ${c.name} --warehouse <dir> ${c.synopsis}`);
    lines.push(`      ${c.summary}`);
  }
  // `tilstand help` prints this line for every command: there 3 is also a site already running, a
  // user or data directory that exists, a proposal decided meanwhile, a request the running site
  // or HQ refused, dead letters that still fail (README.md: exit codes).
  lines.push('', 'exit codes: 0 ok, 1 not found, 2 usage or invalid argument, 3 conflict (another writer, or not done as things stand; the message says why), 4 corruption, 5 other I/O');
  return lines;
}

function commandUsage(c: Command): string[] {
  return [`usage: tilstand table ${c.name} --warehouse <dir> ${c.synopsis}`, `  ${c.summary}`];
}

function findCommand(argv: readonly string[]): { command: Command; rest: string[] } | undefined {
  const [first, second] = argv;
  if (first === 'tag') {
    const c = TABLE_COMMANDS.find((x) => x.name === `tag ${second}`);
    return c && { command: c, rest: argv.slice(2) };
  }
  const c = TABLE_COMMANDS.find((x) => x.name === first && !x.name.includes(' '));
  return c && { command: c, rest: argv.slice(1) };
}

// ---------------------------------------------------------------------------------------------
// expire-partitions: Java's expire_partitions procedure.

/** The flags of `expire-partitions` as its errors name them (partition-expire.ts checks the values). */
const EXPIRE_PARTITIONS_FLAGS: PartitionExpireArgumentNames = {
  expirationTime: "option '--expiration-time'",
  strategy: "option '--strategy'",
  timestampFormatter: "option '--timestamp-formatter'",
  timestampPattern: "option '--timestamp-pattern'",
  maxExpires: "option '--max-expires'",
};

async function expirePartitions(ctx: Context): Promise<number> {
  const { table } = openTable(ctx);
  const a = ctx.args;
  const maxText = a.string('max-expires');
  if (maxText !== undefined && !/^\s*-?\d+\s*$/.test(maxText)) throw usageError(`${EXPIRE_PARTITIONS_FLAGS.maxExpires}: expected an integer, got '${maxText}'`);
  const args: PartitionExpireArguments = {
    expirationTime: a.string('expiration-time'),
    strategy: a.string('strategy'),
    timestampFormatter: a.string('timestamp-formatter'),
    timestampPattern: a.string('timestamp-pattern'),
    maxExpires: maxText === undefined ? undefined : Number(maxText),
  };
  // Checked here first, so an error names the flag (and comes before the writer is taken); the
  // writer checks them again against the schema it holds.
  partitionExpireNowConfig(table.name, table.schema.options.raw, table.schema.partitionKeys, args, EXPIRE_PARTITIONS_FLAGS);
  const dryRun = a.boolean('dry-run');
  const r = table.expirePartitions({ ...args, dryRun }, { commitUser: 'tilstand-cli' });
  if (a.boolean('json')) {
    await ctx.out.line(JSON.stringify({ dryRun, partitions: r.partitions, snapshots: r.snapshotIds, skipped: r.skipped }));
    return EXIT.ok;
  }
  for (const p of r.partitions) await ctx.out.line(`${dryRun ? 'would drop' : 'dropped'} ${p}`);
  for (const k of r.skipped) await ctx.out.line(`kept ${k.partition}: ${k.reason}`);
  const n = `${r.partitions.length} partition${r.partitions.length === 1 ? '' : 's'}`;
  if (r.partitions.length === 0) await ctx.out.line('no expired partitions');
  else if (dryRun) await ctx.out.line(`dry run: ${n} would be dropped, nothing written`);
  else await ctx.out.line(`${n} dropped in snapshot${r.snapshotIds.length === 1 ? '' : 's'} ${r.snapshotIds.join(', ')}`);
  return EXIT.ok;
}

/** The exit code an error maps to (README.md: exit codes). */
export function exitCodeOf(e: unknown): number {
  if (e instanceof CliError) return e.exitCode;
  if (isCorruption(e)) return EXIT.corruption;
  if (e instanceof LsmError) {
    switch (e.kind) {
      case 'NotFound':
        return EXIT.notFound;
      case 'InvalidArgument':
      case 'AlreadyExists':
      case 'NotSupported':
        return EXIT.usage;
      case 'Conflict':
        return EXIT.conflict;
      case 'Corruption':
        return EXIT.corruption;
      case 'IOError':
        return EXIT.io;
    }
  }
  return EXIT.io;
}

export async function writeError(io: CliIO, message: string): Promise<void> {
  const w = new LineWriter(io.stderr);
  try {
    await w.line(`tilstand: ${message}`);
    await w.end();
  } catch {
    // stderr is gone; nothing left to tell
  }
}

/** `tilstand table <argv…>`; returns the exit code. */
export async function runTableCli(argv: readonly string[], io: CliIO): Promise<number> {
  if (argv.length === 0 || argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h') {
    const help = argv.length > 0;
    const w = new LineWriter(help ? io.stdout : io.stderr);
    await w.lines(tableUsage());
    await w.end().catch(() => undefined);
    return help ? EXIT.ok : EXIT.usage;
  }
  const found = findCommand(argv);
  if (!found) {
    const what = argv[0] === 'tag' ? `tag ${argv[1] ?? ''}`.trim() : argv[0];
    await writeError(io, `unknown table command '${what}'${argv[0] === 'tag' ? " (expected 'tag create' or 'tag delete')" : ''}`);
    const w = new LineWriter(io.stderr);
    await w.lines(['', ...tableUsage()]);
    await w.end().catch(() => undefined);
    return EXIT.usage;
  }
  const { command, rest } = found;
  const out = new LineWriter(io.stdout);
  try {
    const args = parseArgs(rest, command.flags, `table ${command.name}`);
    if (args.help) {
      await out.lines(commandUsage(command));
      await out.end();
      return EXIT.ok;
    }
    const required = command.positionals.filter((p) => !p.startsWith('[')).length;
    if (args.positionals.length < required) {
      const missing = command.positionals[args.positionals.length]!.replace(/[[\]]/g, '');
      throw usageError(`'table ${command.name}' needs <${missing}>: ${commandUsage(command)[0]!.slice('usage: '.length)}`);
    }
    refuseExtraArguments(args, `table ${command.name}`, command.positionals.length);
    const warehouse = resolve(pathOption(args, 'warehouse', 'the warehouse directory') ?? args.required('warehouse'));
    const file = fileInTheWay(warehouse);
    if (file !== undefined) throw usageError(`option '--warehouse': ${file} is a file, not a directory`);
    const catalog = new Catalog(warehouse);
    const code = await command.run({ args, io, out, catalog });
    await out.end();
    return code;
  } catch (e) {
    if (e instanceof OutputClosed) return EXIT.ok; // the reader went away (`| head`): not an error
    await out.end().catch(() => undefined);
    await writeError(io, e instanceof Error ? e.message : String(e));
    return exitCodeOf(e);
  }
}
