// Schema evolution (Paimon's SchemaChange + SchemaManager.generateTableSchema): an ALTER is a
// list of changes applied to the latest schema, written as `schema/schema-<N+1>` with an atomic
// create; old schema files stay, because data files name the schema they were written with and
// are read through it (data-file-read.ts maps their columns to the current ones by field id).
//
// Rules (paimon-features.md §5):
//   - add column: nullable only (existing rows read null), at the end, FIRST or AFTER a column;
//     it gets id highestFieldId+1, so a dropped-then-re-added name never sees its old data.
//   - rename column: also primary-key columns (Paimon #3809), never partition columns; option
//     values and `fields.<name>.*` keys that name the column follow the rename.
//   - drop column: not primary-key or partition columns, not columns an option names, not the last.
//   - change type: what cast.ts permits (explicit casts unless `disable-explicit-type-casting`);
//     never a primary-key or partition column.
//   - nullability: NOT NULL → nullable only; primary-key columns stay NOT NULL.
//   - options: set/remove, except immutable ones (merge engine, bucket layout, sequence groups,
//     deletion-vector mode, …); `ignore-delete` cannot go from true to false.
// Invariant: field ids are never reused; `highestFieldId` only grows.

import { checkAppendFullCompaction } from './append-table.ts';
import { castFunction, castMayFail, castValueText, checkTypeChange, sameType } from './cast.ts';
import { cell, readDataFile } from './data-file.ts';
import { invalidArgument, LsmError, notSupported } from './errors.ts';
import { checkChangelogRetention, checkDeletionVectorsPairs, checkJavaCodecs, checkLookupFullCompaction, checkOptionValues, checkWriteBufferSize, compressionPerLevel, DECLARED_OPTIONS, parseList, parseOptions, tagDefaultRetention, type ChangelogProducer, type MergeEngine } from './options.ts';
import { formatForLevel, formatsPerLevel, validateWritableFormats, writableCodecsFor } from './data-file-format.ts';
import { partialUpdateAggregators } from './merge/partial-update.ts';
import { checkFieldOptionBooleans } from './merge/field-options.ts';
import { checkFieldsPrefixColumns, checkSequenceFieldOptions, TableSchema, type TableSchemaJson } from './schema.ts';
import type { Table } from './table.ts';
import { parseType, typeToJson, typeToString, withNullable, type DataType, type TypeRoot } from './types.ts';
import { WriterLock } from './writer-lock.ts';
import { describeRefusal, writeRefusals } from './write-options.ts';
import { PARTITION_EXPIRE_OPTIONS, partitionExpireConfig } from './partition-expire.ts';

export type ColumnPosition = { first: true } | { after: string };

export type SchemaChange =
  | { kind: 'setOption'; key: string; value: string }
  | { kind: 'removeOption'; key: string }
  | { kind: 'addColumn'; name: string; type: string; description?: string; position?: ColumnPosition }
  | { kind: 'renameColumn'; from: string; to: string }
  | { kind: 'dropColumn'; name: string }
  | { kind: 'updateColumnType'; name: string; type: string }
  | { kind: 'updateColumnNullability'; name: string; nullable: boolean }
  | { kind: 'updateColumnComment'; name: string; comment: string | null }
  | { kind: 'moveColumn'; name: string; position: ColumnPosition }
  | { kind: 'updateComment'; comment: string | null };

/** Options fixed at creation (CoreOptions @Immutable and what this store's files depend on). */
const IMMUTABLE_OPTIONS = new Set([
  'merge-engine', 'bucket', 'bucket-key', 'primary-key', 'partition', 'rowkind.field', 'sequence.snapshot-ordering',
  'partial-update.remove-record-on-delete', 'partial-update.remove-record-on-sequence-group',
  // What a -D already in the files does when read: changed, committed snapshots would read otherwise.
  'aggregation.remove-record-on-delete',
  'dynamic-bucket.initial-buckets', 'force-lookup', 'deletion-vectors.enabled', 'deletion-vectors.bitmap64',
  'data-file.thin-mode', 'changelog-producer', 'first-row.ignore-delete', 'row-tracking.enabled', 'data-evolution.enabled',
]);
const IMMUTABLE_FIELD_OPTION = /^fields\..+\.sequence-group$/;
/** Options whose value is a comma list of column names (renamed along with the column). */
const COLUMN_LIST_OPTIONS = [
  'sequence.field', 'bucket-key', 'rowkind.field', 'changelog-producer.row-deduplicate-ignore-fields',
  'partial-update.remove-record-on-sequence-group', 'record-level.time-field',
];
const FIELD_OPTION = /^fields\.(.+)\.([a-z-]+)$/;

function isImmutable(key: string): boolean {
  return IMMUTABLE_OPTIONS.has(key) || IMMUTABLE_FIELD_OPTION.test(key);
}

/** Options whose value names columns, with the names they hold (for drop and rename checks). */
function columnReferences(options: Record<string, string>): Array<{ key: string; columns: string[] }> {
  const refs: Array<{ key: string; columns: string[] }> = [];
  for (const [k, v] of Object.entries(options)) {
    if (COLUMN_LIST_OPTIONS.includes(k)) refs.push({ key: k, columns: parseList(v) });
    const m = FIELD_OPTION.exec(k);
    if (m) {
      refs.push({ key: k, columns: parseList(m[1]) });
      if (m[2] === 'sequence-group') refs.push({ key: k, columns: parseList(v) });
    }
  }
  return refs;
}

function renameInList(text: string, from: string, to: string): string {
  return text
    .split(',')
    .map((s) => (s.trim() === from ? to : s.trim()))
    .join(',');
}

/** Rewrites option keys and values that name `from` (Paimon applies renames to options too). */
function renameInOptions(options: Record<string, string>, from: string, to: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(options)) {
    let key = k;
    let value = v;
    if (COLUMN_LIST_OPTIONS.includes(k)) value = renameInList(v, from, to);
    const m = FIELD_OPTION.exec(k);
    if (m) {
      key = `fields.${renameInList(m[1]!, from, to)}.${m[2]}`;
      if (m[2] === 'sequence-group') value = renameInList(v, from, to);
    }
    out[key] = value;
  }
  return out;
}

/**
 * `options`, written for the columns of `from`, with the column names they hold changed to those
 * of `to` by field id (a time-travel read takes the current options onto an older schema's
 * columns: table.ts `readSchema`). A `fields.<c>.*` option of a column `to` lacks is left out, as
 * is such a column in a list (an option left with an empty list goes). Names `from` does not know
 * stay as they are.
 */
export function optionsInColumnsOf(options: Readonly<Record<string, string>>, from: TableSchema, to: TableSchema): Record<string, string> {
  const nameById = new Map(to.fields.map((f) => [f.id, f.name]));
  // `from`'s name → `to`'s name, or null when `to` lacks the column. All at once: renames may swap names.
  const names = new Map(from.fields.map((f) => [f.name, nameById.get(f.id) ?? null]));
  const mapList = (text: string): string[] => parseList(text).flatMap((c) => {
    const n = names.get(c);
    return n === undefined ? [c] : n === null ? [] : [n];
  });
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(options)) {
    let key = k;
    let value = v;
    if (COLUMN_LIST_OPTIONS.includes(k)) {
      const list = mapList(v);
      if (list.length === 0) continue;
      value = list.join(',');
    }
    const m = FIELD_OPTION.exec(k);
    if (m) {
      const columns = parseList(m[1]);
      const list = mapList(m[1]!);
      if (list.length < columns.length) continue;
      key = `fields.${list.join(',')}.${m[2]}`;
      if (m[2] === 'sequence-group') value = mapList(v).join(',');
    }
    out[key] = value;
  }
  return out;
}

type FieldJson = TableSchemaJson['fields'][number];

function insertAt(fields: FieldJson[], f: FieldJson, position: ColumnPosition | undefined): void {
  if (!position) fields.push(f);
  else if ('first' in position) fields.unshift(f);
  else {
    const i = fields.findIndex((x) => x.name === position.after);
    if (i < 0) throw invalidArgument(`column position: AFTER names unknown column '${position.after}'`);
    fields.splice(i + 1, 0, f);
  }
}

function boolOption(options: Record<string, string>, key: string): boolean {
  return (options[key] ?? 'false').trim().toLowerCase() === 'true';
}

/**
 * The schema after `changes` (REQUIRES: `current` is the table's latest schema). Throws an
 * InvalidArgument (or NotSupported) naming the column or option when a change is not allowed;
 * nothing is written here.
 */
export function applySchemaChanges(current: TableSchema, changes: readonly SchemaChange[], nowMillis: number): TableSchema {
  if (!Array.isArray(changes) || changes.length === 0) throw invalidArgument('ALTER needs at least one change');
  const json = current.toJson();
  let fields: FieldJson[] = json.fields.map((f) => ({ ...f }));
  let options: Record<string, string> = { ...json.options };
  let primaryKeys = [...json.primaryKeys];
  const partitionKeys = [...json.partitionKeys];
  let highest = json.highestFieldId;
  let comment = json.comment;
  const allowExplicit = !boolOption(options, 'disable-explicit-type-casting');

  const field = (name: string): FieldJson => {
    const f = fields.find((x) => x.name === name);
    if (!f) throw invalidArgument(`column '${name}' does not exist`);
    return f;
  };
  const isPk = (name: string) => primaryKeys.includes(name);
  const isPartition = (name: string) => partitionKeys.includes(name);
  // The options this ALTER sets, under the names its later renames give them (renameInOptions), as
  // they stand in its result: what the checks after the loop check (Paimon validates the result).
  let setKeys: string[] = [];

  for (const c of changes) {
    switch (c.kind) {
      case 'setOption':
      case 'removeOption': {
        const key = c.key;
        if (typeof key !== 'string' || key.length === 0) throw invalidArgument('option change needs a key');
        const old = options[key];
        const value = c.kind === 'setOption' ? String(c.value) : undefined;
        if (old === value) break;
        // A pair Paimon refuses whatever may change is refused with its reason (options.ts).
        if (DV_PAIR_OPTIONS.includes(key)) dvPairsAfter(options, key, value);
        if (isImmutable(key)) throw invalidArgument(`option '${key}' cannot be changed after the table is created`);
        if (key.startsWith('fields.') && !FIELD_OPTION.test(key) && !(key in DECLARED_OPTIONS)) throw invalidArgument(`unknown option '${key}'`);
        if (!key.startsWith('fields.') && !(key in DECLARED_OPTIONS) && !KNOWN_MUTABLE.has(key)) throw invalidArgument(`unknown option '${key}'`);
        if ((key === 'ignore-delete' || key === 'ignore-update-before' || key.endsWith('.ignore-delete')) && old?.trim().toLowerCase() === 'true' && value?.trim().toLowerCase() !== 'true') {
          throw invalidArgument(`option '${key}' cannot be changed from true to false (records already dropped cannot come back)`);
        }
        if (value === undefined) delete options[key];
        else options[key] = value;
        setKeys = setKeys.filter((k) => k !== key);
        if (value !== undefined) setKeys.push(key);
        break;
      }
      case 'addColumn': {
        if (fields.some((f) => f.name === c.name)) throw invalidArgument(`column '${c.name}' already exists`);
        const type = parseType(c.type);
        if (!type.nullable) throw invalidArgument(`column '${c.name}': an added column must be nullable (existing rows have no value for it)`);
        const f: FieldJson = { id: ++highest, name: c.name, type: typeToJson(type), ...(c.description ? { description: c.description } : {}) };
        insertAt(fields, f, c.position);
        break;
      }
      case 'renameColumn': {
        const f = field(c.from);
        if (c.from === c.to) break;
        if (fields.some((x) => x.name === c.to)) throw invalidArgument(`cannot rename '${c.from}' to '${c.to}': column '${c.to}' already exists`);
        if (isPartition(c.from)) throw invalidArgument(`cannot rename partition column '${c.from}' (Paimon does not allow it)`);
        f.name = c.to;
        primaryKeys = primaryKeys.map((k) => (k === c.from ? c.to : k));
        options = renameInOptions(options, c.from, c.to);
        setKeys = setKeys.map((k) => Object.keys(renameInOptions({ [k]: '' }, c.from, c.to))[0]!);
        break;
      }
      case 'dropColumn': {
        const f = field(c.name);
        if (isPk(c.name)) throw invalidArgument(`cannot drop primary-key column '${c.name}'`);
        if (isPartition(c.name)) throw invalidArgument(`cannot drop partition column '${c.name}'`);
        const ref = columnReferences(options).find((r) => r.columns.includes(c.name));
        if (ref) throw invalidArgument(`cannot drop column '${c.name}': option '${ref.key}' names it`);
        if (fields.length === 1) throw invalidArgument(`cannot drop '${c.name}', the table's only column`);
        fields = fields.filter((x) => x !== f);
        break;
      }
      case 'updateColumnType': {
        const f = field(c.name);
        if (isPk(c.name)) throw invalidArgument(`cannot change the type of primary-key column '${c.name}' (Paimon #6264)`);
        if (isPartition(c.name)) throw invalidArgument(`cannot change the type of partition column '${c.name}'`);
        const from = parseType(f.type);
        const explicit = /\bNOT\s+NULL\s*$/i.test(c.type) || /\bNULL\s*$/i.test(c.type);
        let to = parseType(c.type);
        // A bare type keeps the column's nullability; `... NOT NULL` / `... NULL` set it.
        if (!explicit) to = withNullable(to, from.nullable);
        if (from.nullable && !to.nullable) throw invalidArgument(`column '${c.name}': cannot change a nullable column to NOT NULL`);
        if (!sameType(from, to)) checkTypeChange(c.name, from, to, allowExplicit);
        f.type = typeToJson(to);
        break;
      }
      case 'updateColumnNullability': {
        const f = field(c.name);
        const t = parseType(f.type);
        if (c.nullable && isPk(c.name)) throw invalidArgument(`primary-key column '${c.name}' must stay NOT NULL`);
        if (!c.nullable && t.nullable) throw invalidArgument(`column '${c.name}': cannot change a nullable column to NOT NULL (existing rows may hold null)`);
        f.type = typeToJson(withNullable(t, c.nullable));
        break;
      }
      case 'updateColumnComment': {
        const f = field(c.name);
        if (c.comment === null || c.comment === '') delete f.description;
        else f.description = c.comment;
        break;
      }
      case 'moveColumn': {
        const f = field(c.name);
        if ('after' in c.position && c.position.after === c.name) throw invalidArgument(`cannot move '${c.name}' after itself`);
        fields = fields.filter((x) => x !== f);
        insertAt(fields, f, c.position);
        break;
      }
      case 'updateComment':
        comment = c.comment ?? undefined;
        break;
      default:
        throw invalidArgument(`unknown schema change ${JSON.stringify((c as { kind?: unknown }).kind)}`);
    }
  }
  const next: TableSchemaJson = {
    version: json.version,
    id: current.id + 1,
    fields,
    highestFieldId: highest,
    partitionKeys,
    primaryKeys,
    options,
    ...(comment === undefined ? {} : { comment }),
    timeMillis: nowMillis,
  };
  // Validates everything the constructor checks (columns named by options exist, keys NOT NULL, …).
  const schema = new TableSchema(next, false);
  // The first of 'ignore-delete' and its fallback keys decides (options.ts): an explicit 'false'
  // set beside a fallback key's 'true' turns it off as surely as changing the key itself.
  if (current.options.ignoreDelete && !schema.options.ignoreDelete) {
    throw invalidArgument(`option 'ignore-delete' cannot be changed from true to false (records already dropped cannot come back); it is true through ${IGNORE_DELETE_SOURCES.filter((k) => current.options.raw[k] !== undefined).map((k) => `'${k}' = '${current.options.raw[k]}'`).join(', ')}`);
  }
  // Lenient above (a Java table's own options pass); a retention changed here may not make the
  // changelog outlive its snapshots, which this store does not keep (options.ts).
  if (changes.some((c) => (c.kind === 'setOption' || c.kind === 'removeOption') && RETENTION_OPTION.test(c.key))) {
    const o = schema.options;
    checkChangelogRetention(o.raw, true, o.snapshotsRetainedMin, o.snapshotsRetainedMax, o.snapshotTimeRetainedMs);
  }
  // Lenient above (a Java table may say num-levels 1: options.ts); an ALTER here may not bring the
  // levels below 2, which no writer could compact (creation refuses it too), nor lower them further
  // in a Java table already below.
  if (changes.some((c) => (c.kind === 'setOption' || c.kind === 'removeOption') && (c.key === 'num-levels' || c.key === 'num-sorted-run.compaction-trigger')) && schema.options.numLevels < Math.min(2, current.options.numLevels)) {
    throw invalidArgument(`option 'num-levels': expected an integer in 2..2147483647, got ${schema.options.numLevels}`);
  }
  // Lenient above; partition-expiration options set here must parse (partition-expire.ts).
  if (changes.some((c) => c.kind === 'setOption' && (PARTITION_EXPIRE_OPTIONS as readonly string[]).includes(c.key))) partitionExpireConfig(schema.options.raw, true);
  // Lenient above (a value an earlier version accepted stays); a typed option set here as Java
  // parses it (options.ts PAIMON_OPTION_TYPES: a duration, memory size, boolean, integer or enum).
  checkOptionValues(schema.options.raw, changes.flatMap((c) => (c.kind === 'setOption' ? [c.key] : [])));
  // Lenient above (a table Java made with '0' opens); set here, a buffer must hold a row (options.ts).
  if (changes.some((c) => c.kind === 'setOption' && c.key === 'write-buffer-size')) checkWriteBufferSize(schema.options.raw);
  // Lenient above; a default tag retention set here must be one a tag can have (options.ts).
  if (changes.some((c) => c.kind === 'setOption' && c.key === 'tag.default-time-retained')) tagDefaultRetention(schema.options.raw, true);
  if (changes.some((c) => c.kind === 'setOption' && c.key === 'file.compression.per.level')) compressionPerLevel(schema.options.raw);
  // Lenient above (a table written elsewhere with one opens); a fields.<f>.* option set here names
  // columns of the table, as Paimon checks it (schema.ts).
  // Under the names a later rename in this ALTER gave them (setKeys).
  checkFieldsPrefixColumns(schema, setKeys);
  // Lenient above (a Java table whose engine never reads them opens); set here, they must parse.
  checkFieldOptionBooleans(schema.options.raw, setKeys);
  // Lenient above (a table an earlier version made so opens); set here, as Paimon checks it (schema.ts).
  if (changes.some((c) => (c.kind === 'setOption' || c.kind === 'removeOption') && (c.key === 'sequence.field' || /^fields\..+\.aggregate-function$/.test(c.key)))) checkSequenceFieldOptions(schema);
  // And what Paimon refuses of a partial-update table's functions outside its groups (lenient at open).
  if (schema.options.mergeEngine === 'partial-update' && changes.some((c) => (c.kind === 'setOption' || c.kind === 'removeOption') && /^fields\.(.+\.(aggregate-function|sequence-group)|default-aggregate-function)$/.test(c.key))) partialUpdateAggregators(schema, true);
  // Lenient above (a table Paimon 1.x made with both opens); set here, not beside 'lookup' (options.ts).
  if (changes.some((c) => c.kind === 'setOption' && c.key === 'full-compaction.delta-commits')) checkLookupFullCompaction(schema.options.raw, schema.options.changelogProducer);
  // Lenient above (a table an earlier version made opens); set here, as Paimon refuses it (append-table.ts).
  if (changes.some((c) => c.kind === 'setOption' && (c.key === 'full-compaction.delta-commits' || c.key === 'bucket'))) checkAppendFullCompaction(schema);
  // Lenient above (a table Java made with zstd, its default codec, or ORC files opens and reads); an
  // ALTER may not make a table whose data files are written here unwritable by its codec or format,
  // which creation refuses (the refusal came only at the next commit with rows, ingest's), nor set
  // a manifest codec creation refuses.
  if (changes.some((c) => (c.kind === 'setOption' || c.kind === 'removeOption') && DATA_FILE_OPTIONS.includes(c.key))) {
    const why = unwritableDataFiles(schema);
    if (why !== undefined && unwritableDataFiles(current) === undefined) throw notSupported(`ALTER: ${why}`);
  }
  // Lenient above (a table written elsewhere with any codec opens); a data-file codec or format set
  // here must give codecs Java's writers take (options.ts checkJavaCodecs: 'deflate' for Parquet,
  // 'gzip' or 'none' for Avro made every Java write fail).
  if (changes.some((c) => (c.kind === 'setOption' || c.kind === 'removeOption') && (DATA_FILE_OPTIONS.includes(c.key) || c.key === 'file.compression.per.level'))) checkJavaCodecs(schema.options.raw, schema.options.numLevels);
  const manifestCodec = changes.some((c) => c.kind === 'setOption' && c.key === 'manifest.compression') ? schema.options.raw['manifest.compression'] : undefined;
  if (manifestCodec !== undefined) parseOptions({ 'manifest.compression': manifestCodec }, true);
  // An ALTER may not make the table unwritable here (write-options.ts: e.g. 'tag.automatic-creation',
  // or 'write-only' turned off beside it); a Java table already refused for an option stays alterable.
  const before = new Set(writeRefusals(current).map((r) => r.key));
  const added = writeRefusals(schema).find((r) => !before.has(r.key));
  if (added) throw notSupported(`ALTER: ${describeRefusal(added, false)}`);
  return schema;
}

/** The options of Paimon's deletion-vector pairs (options.ts checkDeletionVectorsPairs); immutable here. */
const DV_PAIR_OPTIONS: readonly string[] = ['deletion-vectors.enabled', 'changelog-producer', 'merge-engine'];

/** Throws Paimon's reason when `options` with `key` set to `value` (removed: undefined) hold a refused pair. */
function dvPairsAfter(options: Readonly<Record<string, string>>, key: string, value: string | undefined): void {
  const next: Record<string, string> = { ...options };
  if (value === undefined) delete next[key];
  else next[key] = value;
  const producer = (next['changelog-producer'] ?? 'none').trim().toLowerCase();
  const engine = (next['merge-engine'] ?? 'deduplicate').trim().toLowerCase();
  checkDeletionVectorsPairs(next, producer as ChangelogProducer, engine as MergeEngine);
}

const DATA_FILE_OPTIONS: readonly string[] = ['file.compression', 'file.format', 'file.format.per.level'];

/**
 * Why no data file of `schema` could be written here (the codec or a format: data-file-format.ts
 * refuses it at the first data file), as creation's strict check words it; undefined when they can.
 */
function unwritableDataFiles(schema: TableSchema): string | undefined {
  const raw = schema.options.raw;
  if (schema.options.fileCompression === 'zstd') {
    const codecs = writableCodecsFor(raw);
    return raw['file.compression'] === undefined
      ? `option 'file.compression' unset: Paimon's default zstd data files cannot be written here; set ${codecs}`
      : `option 'file.compression' = '${raw['file.compression']}': data files with this codec cannot be written here; use ${codecs}`;
  }
  try {
    const perLevel = formatsPerLevel(raw);
    let other = 0; // a level `file.format` itself applies to
    while (perLevel.has(other)) other++;
    for (const level of [...perLevel.keys(), other]) formatForLevel(schema, level);
    validateWritableFormats(schema);
  } catch (e) {
    if (e instanceof LsmError) return e.message;
    throw e;
  }
  return undefined;
}

const IGNORE_DELETE_SOURCES = ['ignore-delete', 'first-row.ignore-delete', 'deduplicate.ignore-delete', 'partial-update.ignore-delete'];
const RETENTION_OPTION = /^(snapshot|changelog)\.(num-retained\.(min|max)|time-retained)$/;

/** Options this store accepts on ALTER besides DECLARED_OPTIONS (Paimon options it passes through). */
const KNOWN_MUTABLE = new Set([
  'comment', 'owner', 'file.compression.zstd-level', 'metadata.stats-mode', 'manifest.target-file-size',
  'manifest.merge-min-count', 'consumer.expiration-time', 'tag.automatic-creation', 'continuous.discovery-interval',
  'scan.mode', 'snapshot.clean-empty-directories', 'disable-explicit-type-casting', 'file.format.per.level',
  'file.compression.per.level', 'alter-column-null-to-not-null.disabled',
]);

/**
 * ALTER TABLE: applies `changes` to the latest schema under the table's writer lock and writes
 * `schema-<N+1>` atomically. Conflict when a writer holds the table (close it first) or another
 * process altered it concurrently. Returns the new schema, which the table uses from now on.
 */
export function alterTable(table: Table, changes: readonly SchemaChange[], setSchema: (s: TableSchema) => void): TableSchema {
  const lock = WriterLock.acquire(table.paths.lockFile, `table ${table.name}`);
  try {
    // Another process may have altered the table since it was opened: start from the newest file.
    const latestId = latestSchemaId(table);
    const base = latestId === table.schema.id ? table.schema : table.schemaById(latestId);
    const next = applySchemaChanges(base, changes, table.clock());
    checkStoredValuesCast(table, base, next);
    const file = table.paths.schemaFile(next.id);
    if (!table.fileIO.createAtomic(file, Buffer.from(next.serialize()))) {
      throw new LsmError('Conflict', `schema ${next.id} of ${table.name} was created concurrently; retry the ALTER`, { path: file });
    }
    setSchema(next);
    return next;
  } finally {
    lock.release();
  }
}

const CHAR_ROOTS: readonly TypeRoot[] = ['CHAR', 'VARCHAR', 'STRING'];

/** What a text must look like to cast to a type (cast.ts fromStringValue, Paimon's casts). */
function textFormOf(to: DataType): string {
  switch (to.root) {
    case 'BOOLEAN': return 'true/false, t/f, yes/no, y/n or 1/0';
    case 'TINYINT': case 'SMALLINT': case 'INT': case 'BIGINT': return `an integer within ${to.root}'s range`;
    case 'FLOAT': case 'DOUBLE': return 'a number';
    case 'DECIMAL': return 'a plain decimal number';
    case 'DATE': return 'a date y[-m[-d]] that exists (no ISO \'T\' time)';
    case 'TIME': return 'a time of day h[:m[:s[.fraction]]] before 24:00';
    default: return `yyyy-M-d with an optional ' H:m:s[.f]' or 'TH:m[:s[.f]]' (no zone, no leap second, no blanks)${to.root === 'TIMESTAMP' ? ', or epoch seconds/ms/µs for precision 0/3/6' : ''}`;
  }
}

/** Why a value of `from` does not cast to `to` (castMayFail's cases), for the ALTER's refusal. */
function whyNoCast(from: DataType, to: DataType): string {
  if (CHAR_ROOTS.includes(from.root)) return `expected ${textFormOf(to)}${to.root === 'DECIMAL' && !to.nullable ? ' that fits the precision: one that overflows casts to null (as in Java Paimon), and the column is NOT NULL' : ''}`;
  if ((from.root === 'FLOAT' || from.root === 'DOUBLE') && !to.nullable) return 'NaN and infinities have no DECIMAL value; a value that overflows the precision casts to null (as in Java Paimon), and the column is NOT NULL';
  if (from.root === 'FLOAT' || from.root === 'DOUBLE') return 'NaN and infinities have no DECIMAL value: Java Paimon\'s cast throws too';
  return 'it overflows the precision, so it casts to null (as in Java Paimon), and the column is NOT NULL';
}

/**
 * Refuses an ALTER COLUMN TYPE whose cast would fail on a value held by a data file of the latest
 * snapshot: a read casts an older file's values to the current type (data-file-format.ts
 * evolveRun) and a value that does not cast fails the read, so the ALTER would make every read of
 * the table fail. Casts that can fail (cast.ts castMayFail): text to a type that is not text,
 * FLOAT/DOUBLE to DECIMAL (NaN, infinities: Java's cast throws), and a narrowing into a NOT NULL
 * DECIMAL (an overflow is null, as in Java, which the column cannot hold). Every live file is
 * checked, rows a later write shadows or a deletion vector marks too (the read casts the whole
 * file), each with the column's type in the file's own schema; only the changed columns are
 * decoded (Parquet files of primary-key tables), and the first failure ends the check.
 * Older snapshots and tags are not read (EVOLUTION-DESIGN.md "Casts": time travel reads them in
 * their own schema; a read of one in today's columns — a diff across the ALTER — fails with an
 * error naming column, value, file and snapshot or tag, Table.decodeRun). No snapshot, nothing to
 * check. Also refused: a live file holding the column in a type (of its own schema) with no cast
 * to the new one.
 */
function checkStoredValuesCast(table: Table, base: TableSchema, next: TableSchema): void {
  const changed = next.fields.flatMap((f) => {
    const old = base.fields.find((o) => o.id === f.id);
    return old !== undefined && !sameType(old.type, f.type) ? [{ ...f, was: old.type }] : [];
  });
  if (changed.length === 0) return;
  const snapshot = table.latestSnapshot();
  if (snapshot === undefined) return;
  for (const b of table.buckets(snapshot)) {
    for (const meta of b.files) {
      const own = table.schemaById(meta.schemaId);
      const checks: Array<{ index: number; from: DataType; to: DataType; was: DataType; name: string }> = [];
      for (const f of changed) {
        const index = own.fields.findIndex((o) => o.id === f.id);
        if (index < 0) continue;
        const from = own.fields[index]!.type;
        if (sameType(from, f.type)) continue;
        // A read casts from the file's own type, which an earlier ALTER may have changed since
        // (INT → STRING → DATE): with no cast from it, every read would fail too.
        try {
          castFunction(from, f.type, f.name);
        } catch (e) {
          if (e instanceof LsmError) throw e;
          throw invalidArgument(
            `column '${f.name}': cannot change type ${typeToString(f.was)} to ${typeToString(f.type)}: data file ${meta.fileName} (schema ${own.id}) holds the column as ${typeToString(from)}, ` +
              `which has no cast to ${typeToString(f.type)}; reads cast older files' values, so every read of the table would fail. Compact the table fully first`,
          );
        }
        if (!castMayFail(from, f.type)) continue;
        checks.push({ index, from, to: f.type, was: f.was, name: f.name });
      }
      if (checks.length === 0) continue;
      const path = table.dataFilePath(b.partition, b.bucket, meta.fileName, meta.externalPath);
      const run = readDataFile(table.fileIO, own, path, meta, new Set(checks.map((c) => c.index)));
      for (const c of checks) {
        const cast = castFunction(c.from, c.to, c.name);
        const col = run.valueCols[c.index]!;
        for (let i = 0; i < run.rowCount; i++) {
          const v = cell(col, i);
          if (v === null || v === undefined) continue;
          try {
            cast(v);
          } catch (e) {
            if (!(e instanceof LsmError)) throw e;
            const text = castValueText(v, c.from);
            const where = next.partitionKeys.length > 0 ? `partition ${table.partitionPathOf(b.partition)}, ` : '';
            throw invalidArgument(
              `column '${c.name}': cannot change type ${typeToString(c.was)} to ${typeToString(c.to)}: ` +
                `the table holds '${text.length > 60 ? `${text.slice(0, 60)}…` : text}' (${where}bucket ${b.bucket}, file ${meta.fileName}), which does not cast to ${typeToString(c.to)} ` +
                `(${whyNoCast(c.from, c.to)}); reads cast older files' values, so every read of the table would fail. ` +
                `Update or delete such rows and compact the table first`,
            );
          }
        }
      }
    }
  }
}

function latestSchemaId(table: Table): number {
  const max = table.latestSchemaIdOnDisk();
  if (max < 0) throw notSupported(`table ${table.name} has no schema file`);
  return max;
}
