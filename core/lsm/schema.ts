// A table's schema as Paimon's `schema/schema-N` JSON (SchemaSerializer), and everything derived
// from it that the write and read paths need: the trimmed primary key, the bucket key, the
// columns of a data file, the sequence fields.
//
// Invariants (checked in `validate`): primary-key columns are NOT NULL; the trimmed primary key
// (primary key minus partition keys) is not empty; the bucket key is a subset of the primary key
// disjoint from the partition keys; every column named by an option exists; field ids are unique
// and ≤ highestFieldId.

import { corruption, invalidArgument, notSupported } from './errors.ts';
import { parseOptions, type TableOptions } from './options.ts';
import { validateChangelogOptions } from './changelog-options.ts';
import { validateMergeEngineOptions } from './merge/engine-options.ts';
import { checkName } from './partition-path.ts';
import { validateAppendTable } from './append-table.ts';
import { isNestedType, parseStoredType, parseType, typeToJson, typeToString, withNullable, type DataField, type DataType, type TypeJson } from './types.ts';

export const SCHEMA_VERSION = 3;
/** Field ids of the system columns of a primary-key data file (SpecialFields.java). */
export const KEY_FIELD_ID_START = 1073741823;
export const SEQUENCE_NUMBER_FIELD_ID = 2147483646;
export const VALUE_KIND_FIELD_ID = 2147483645;
export const KEY_PREFIX = '_KEY_';

/** The shape of `tilstand table create --schema`, Paimon's schema JSON without ids. */
export interface SchemaSpec {
  /** `type`: a type string (`ARRAY<INT>` too) or Paimon's JSON object for ARRAY/MAP. */
  fields: Array<{ name: string; type: TypeJson; description?: string }>;
  primaryKeys?: string[];
  partitionKeys?: string[];
  options?: Record<string, string>;
  comment?: string;
}

export interface TableSchemaJson {
  version: number;
  id: number;
  /** `type`: a string, or for ARRAY/MAP Paimon's JSON object (`{"type":"ARRAY","element":…}`). */
  fields: Array<{ id: number; name: string; type: TypeJson; description?: string }>;
  highestFieldId: number;
  partitionKeys: string[];
  primaryKeys: string[];
  options: Record<string, string>;
  comment?: string;
  timeMillis: number;
}

/**
 * InvalidArgument for what Paimon's SchemaValidation.validateSequenceField refuses: an aggregate
 * function on a `sequence.field` column, and a sequence field named twice. Java checks it at create,
 * ALTER and every table copy its engines make, so Flink and Spark could not use such a table. Also
 * a function on a partial-update group's sequence field, which Java takes and ignores: it would do
 * nothing, so it is not set here (a table Java made with one opens: merge/partial-update.ts).
 */
export function checkSequenceFieldOptions(schema: TableSchema): void {
  const seen = new Set<string>();
  for (const f of schema.options.sequenceFields) {
    if (seen.has(f)) throw invalidArgument(`option 'sequence.field' names column '${f}' twice`);
    seen.add(f);
    if (schema.options.raw[`fields.${f}.aggregate-function`] !== undefined) {
      throw invalidArgument(`option 'fields.${f}.aggregate-function': column '${f}' is a 'sequence.field' column, which takes no aggregate function (Paimon refuses it)`);
    }
  }
  if (schema.options.mergeEngine !== 'partial-update') return;
  for (const g of schema.options.sequenceGroups) {
    for (const f of g.sequenceFields) {
      if (schema.options.raw[`fields.${f}.aggregate-function`] !== undefined) throw invalidArgument(`option 'fields.${f}.aggregate-function': column '${f}' is a sequence-group sequence field`);
    }
  }
}

/**
 * InvalidArgument for the first of `keys` of the form `fields.<columns>.…` whose columns (the
 * second dot-separated part, split at ',') are not all columns of the table, as Paimon's
 * SchemaValidation.validateFieldsPrefix refuses them at create, ALTER and every table copy its
 * engines make, for every table (append tables, `fields.<f>.default-value`): Flink and Spark could
 * not use such a table. Checked where the options are set here (creation: all; ALTER: the ones it
 * sets); a table written elsewhere with one opens.
 */
export function checkFieldsPrefixColumns(schema: TableSchema, keys: Iterable<string>): void {
  for (const k of keys) {
    if (!k.startsWith('fields.')) continue;
    const columns = k.split('.')[1]!;
    if (columns === 'default-aggregate-function') continue;
    for (const c of columns.split(',')) {
      if (!schema.fieldIndex.has(c)) throw invalidArgument(`option '${k}' names unknown column '${c}'`);
    }
  }
}

export class TableSchema {
  readonly id: number;
  readonly fields: readonly DataField[];
  readonly highestFieldId: number;
  readonly partitionKeys: readonly string[];
  readonly primaryKeys: readonly string[];
  readonly options: TableOptions;
  readonly comment: string | undefined;
  readonly timeMillis: number;

  // Derived, index-based views used on hot paths.
  readonly fieldIndex: ReadonlyMap<string, number>;
  /** Indexes (into `fields`) of the trimmed primary key: primary keys minus partition keys. */
  readonly keyIndexes: readonly number[];
  readonly keyTypes: readonly DataType[];
  readonly partitionIndexes: readonly number[];
  readonly partitionTypes: readonly DataType[];
  /** Indexes of the bucket key, in `bucket-key` order. */
  readonly bucketKeyIndexes: readonly number[];
  readonly sequenceFieldIndexes: readonly number[];

  constructor(json: TableSchemaJson, strictOptions: boolean) {
    this.id = json.id;
    this.fields = json.fields.map((f) => ({
      id: f.id,
      name: f.name,
      // A schema file on disk is read as Paimon reads it (unknown keys ignored); creation checked
      // what the person wrote (fromSpec) before it got here.
      type: parseStoredType(f.type),
      ...(f.description === undefined ? {} : { description: f.description }),
    }));
    this.highestFieldId = json.highestFieldId;
    this.partitionKeys = [...json.partitionKeys];
    this.primaryKeys = [...json.primaryKeys];
    this.options = parseOptions(json.options, strictOptions, json.primaryKeys.length > 0);
    this.comment = json.comment;
    this.timeMillis = json.timeMillis;
    this.fieldIndex = new Map(this.fields.map((f, i) => [f.name, i]));
    const index = (name: string, what: string): number => {
      const i = this.fieldIndex.get(name);
      if (i === undefined) throw invalidArgument(`${what} names unknown column '${name}'`);
      return i;
    };
    const partitionSet = new Set(this.partitionKeys);
    this.keyIndexes = this.primaryKeys.filter((k) => !partitionSet.has(k)).map((k) => index(k, 'primary key'));
    this.keyTypes = this.keyIndexes.map((i) => withNullable(this.fields[i]!.type, false));
    this.partitionIndexes = this.partitionKeys.map((k) => index(k, 'partition key'));
    this.partitionTypes = this.partitionIndexes.map((i) => this.fields[i]!.type);
    const bucketKey = this.options.bucketKey.length > 0 ? this.options.bucketKey : this.keyIndexes.map((i) => this.fields[i]!.name);
    this.bucketKeyIndexes = bucketKey.map((k) => index(k, "option 'bucket-key'"));
    this.sequenceFieldIndexes = this.options.sequenceFields.map((k) => index(k, "option 'sequence.field'"));
    this.validate(bucketKey, strictOptions);
  }

  get isPrimaryKeyTable(): boolean {
    return this.primaryKeys.length > 0;
  }

  /**
   * A primary-key table whose key's bucket is not the hash of its bucket key modulo `bucket`:
   * dynamic (-1, Paimon's HASH index) or postpone (-2, a per-partition bucket count) mode.
   */
  get keyBucketUnknown(): boolean {
    return this.primaryKeys.length > 0 && this.options.bucket < 0;
  }

  /** Paimon's TableSchema.crossPartitionUpdate: the primary key lacks a partition column. */
  get crossPartitionUpdate(): boolean {
    return this.primaryKeys.length > 0 && this.partitionKeys.some((k) => !this.primaryKeys.includes(k));
  }

  private validate(bucketKey: string[], strict: boolean): void {
    const names = new Set<string>();
    const ids = new Set<number>();
    for (const f of this.fields) {
      checkName('column', f.name);
      if (names.has(f.name)) throw invalidArgument(`duplicate column '${f.name}'`);
      if (ids.has(f.id) || f.id < 0 || f.id > this.highestFieldId) throw invalidArgument(`bad field id ${f.id} of column '${f.name}'`);
      if (f.name.startsWith('_KEY_') || f.name === '_SEQUENCE_NUMBER' || f.name === '_VALUE_KIND') {
        throw invalidArgument(`column name '${f.name}' is reserved for Paimon's system columns`);
      }
      names.add(f.name);
      ids.add(f.id);
    }
    if (new Set(this.primaryKeys).size !== this.primaryKeys.length) throw invalidArgument('primary key names a column twice');
    for (const k of this.primaryKeys) {
      const f = this.fields[this.fieldIndex.get(k) ?? -1];
      if (!f) throw invalidArgument(`primary key names unknown column '${k}'`);
      if (f.type.nullable) throw invalidArgument(`primary-key column '${k}' must be NOT NULL`);
    }
    // ARRAY/MAP values have no order and no partition text (types.ts).
    const unordered = (what: string, idx: readonly number[]): void => {
      for (const i of idx) {
        const f = this.fields[i]!;
        if (isNestedType(f.type)) throw invalidArgument(`${what} '${f.name}' has type ${typeToString(f.type)}; ARRAY and MAP columns cannot be ${what}s`);
      }
    };
    unordered('primary-key column', this.primaryKeys.map((k) => this.fieldIndex.get(k)!));
    unordered('partition column', this.partitionIndexes);
    unordered('bucket-key column', this.bucketKeyIndexes);
    unordered('sequence.field column', this.sequenceFieldIndexes);
    // Set here (creation; ALTER checks it too, schema-change.ts): what Paimon refuses. A table an
    // earlier version made with it opens.
    if (strict) checkSequenceFieldOptions(this);
    if (strict) checkFieldsPrefixColumns(this, Object.keys(this.options.raw));
    if (!this.isPrimaryKeyTable) return validateAppendTable(this, bucketKey, strict); // append-table.ts
    if (this.keyIndexes.length === 0) throw invalidArgument('the primary key must contain a column that is not a partition key');
    const pk = new Set(this.primaryKeys);
    for (const k of bucketKey) {
      if (!pk.has(k)) throw invalidArgument(`option 'bucket-key': column '${k}' is not in the primary key`);
      if (this.partitionKeys.includes(k)) throw invalidArgument(`option 'bucket-key': column '${k}' is a partition key`);
    }
    // Dynamic (-1) and postpone (-2) tables Java made are read (DESIGN.md, "Dynamic and postpone
    // buckets"); this store writes neither, so creating one is refused (strict = being created).
    if ((this.options.bucket === -1 || this.options.bucket === -2) && strict) {
      throw notSupported(
        `option 'bucket': ${this.options.bucket} (${this.options.bucket === -1 ? 'dynamic' : 'postpone'} bucket mode) is not supported for creating a table here ` +
          `(such tables made by Paimon in Java are read here, but not written); use a fixed bucket count ≥ 1`,
      );
    }
    if (this.options.bucket === 0 || this.options.bucket < -2) throw invalidArgument(`option 'bucket': expected a bucket count ≥ 1 (or, in a table made elsewhere, -1 or -2), got ${this.options.bucket}`);
    // Paimon's SchemaValidation: with fixed buckets a key must stay in one partition; with dynamic
    // buckets the key moves (cross-partition update, KeyValueFileStore.bucketMode KEY_DYNAMIC).
    const outside = this.partitionKeys.filter((k) => !pk.has(k));
    if (outside.length > 0 && this.options.bucket !== -1) {
      throw invalidArgument(
        `the primary key (${this.primaryKeys.join(', ')}) does not include the partition key ${outside.map((k) => `'${k}'`).join(', ')}: ` +
          `a key that moves between partitions needs dynamic buckets (bucket = -1, cross-partition update), which this store does not write`,
      );
    }
    const engine = this.options.mergeEngine;
    validateMergeEngineOptions(this, strict); // merge/engine-options.ts
    validateChangelogOptions(this.options, this.fieldIndex); // changelog-options.ts
    // A column (a group's sequence fields included) belongs to one group: the partial-update merge
    // function refuses it otherwise at every write and read, and Paimon at creation ("defined
    // repeatedly by multiple groups"); checked where the table is created (the option is immutable).
    const owner = new Map<string, string>();
    for (const g of this.options.sequenceGroups) {
      const option = `fields.${g.sequenceFields.join(',')}.sequence-group`;
      if (engine !== 'partial-update') throw invalidArgument(`option '${option}' needs merge-engine 'partial-update'`);
      for (const c of [...g.sequenceFields, ...g.columns]) {
        if (!this.fieldIndex.has(c)) throw invalidArgument(`option '${option}' names unknown column '${c}'`);
        if (pk.has(c)) throw invalidArgument(`option '${option}' names primary-key column '${c}'`);
      }
      if (!strict) continue;
      for (const c of new Set([...g.sequenceFields, ...g.columns])) {
        const other = owner.get(c);
        if (other !== undefined) throw invalidArgument(`option '${option}': column '${c}' is also in sequence group '${other}' (a column belongs to at most one group; a column in two sequence groups cannot be merged, and Paimon refuses it)`);
        owner.set(c, g.sequenceFields.join(','));
      }
    }
    for (const g of this.options.removeRecordOnSequenceGroup) {
      if (!this.options.sequenceGroups.some((s) => s.sequenceFields.join(',') === g || s.sequenceFields.includes(g))) {
        throw invalidArgument(`option 'partial-update.remove-record-on-sequence-group': '${g}' is not a sequence group`);
      }
    }
    // Both removal options work with 'sequence.field' (Paimon accepts them): the write buffer cuts a
    // removal apart from the adds after it at flush (WriteBuffer.drainRuns), compaction widens to
    // the bottom level (merge/README.md, partial-update-remove-seqfield.test.ts).
    if (this.options.removeRecordOnDelete && engine !== 'partial-update') {
      throw invalidArgument(`option 'partial-update.remove-record-on-delete' needs merge-engine 'partial-update'`);
    }
    // Paimon's partial-update factory refuses these three pairs (a Paimon engine could not write or
    // compact such a table): a -D cannot both be dropped and remove the row, and a whole-row
    // removal by any -D would overrule the groups' own sequences.
    if (this.options.ignoreDelete) {
      if (this.options.removeRecordOnDelete) {
        throw invalidArgument(`option 'partial-update.remove-record-on-delete' conflicts with 'ignore-delete' (one removes the row on -D, the other drops the -D): expected at most one of them`);
      }
      if (this.options.removeRecordOnSequenceGroup.length > 0) {
        throw invalidArgument(`option 'partial-update.remove-record-on-sequence-group' conflicts with 'ignore-delete' (one removes the row on a group's -D, the other drops the -D): expected at most one of them`);
      }
    }
    if (this.options.removeRecordOnDelete && this.options.sequenceGroups.length > 0) {
      throw invalidArgument(`option 'partial-update.remove-record-on-delete' conflicts with sequence groups ('fields.<f>.sequence-group'): expected one of them (with groups, 'partial-update.remove-record-on-sequence-group' removes the row)`);
    }
  }

  toJson(): TableSchemaJson {
    return {
      version: SCHEMA_VERSION,
      id: this.id,
      fields: this.fields.map((f) => ({
        id: f.id,
        name: f.name,
        type: typeToJson(f.type),
        ...(f.description === undefined ? {} : { description: f.description }),
      })),
      highestFieldId: this.highestFieldId,
      partitionKeys: [...this.partitionKeys],
      primaryKeys: [...this.primaryKeys],
      options: { ...this.options.raw },
      ...(this.comment === undefined ? {} : { comment: this.comment }),
      timeMillis: this.timeMillis,
    };
  }

  /** Schema text as Paimon's SchemaSerializer writes it (pretty JSON). */
  serialize(): string {
    return JSON.stringify(this.toJson(), null, 2);
  }

  static parse(text: string, path: string, strictOptions = false): TableSchema {
    let json: unknown;
    try {
      json = JSON.parse(text) as unknown;
    } catch (e) {
      throw invalidArgumentOrCorrupt(path, `not JSON: ${(e as Error).message}`);
    }
    checkShape(json, path);
    const version = json.version ?? 1;
    const options = { ...json.options! };
    // Compatibility rules of SchemaSerializer for old schema versions.
    if (version <= 1 && options.bucket === undefined) options.bucket = '1';
    if (version <= 2 && options['file.format'] === undefined) options['file.format'] = 'orc';
    try {
      return new TableSchema({ ...(json as TableSchemaJson), version, options, timeMillis: json.timeMillis ?? 0 }, strictOptions);
    } catch (e) {
      // A nested type object of the wrong shape that `checkShape` does not look into.
      if (e instanceof TypeError) throw invalidArgumentOrCorrupt(path, `unexpected shape: ${e.message}`);
      throw e;
    }
  }

  /** Builds schema 0 from a create-table spec, assigning field ids 0..n-1. */
  static fromSpec(spec: SchemaSpec, nowMillis: number): TableSchema {
    if (!spec || !Array.isArray(spec.fields) || spec.fields.length === 0) throw invalidArgument("schema: expected 'fields', a non-empty list");
    const pk = spec.primaryKeys ?? [];
    const options = { ...(spec.options ?? {}) };
    for (const [k, v] of Object.entries(options)) if (typeof v !== 'string') options[k] = String(v);
    for (const [k, v] of Object.entries(specDefaultOptions(pk.length > 0))) if (options[k] === undefined) options[k] = v;
    const fields = spec.fields.map((f, i) => {
      if (!f || typeof f.name !== 'string' || (typeof f.type !== 'string' && (typeof f.type !== 'object' || f.type === null))) {
        throw invalidArgument(`schema: field ${i} needs a 'name' and a 'type' (a string, or a type object for ARRAY/MAP)`);
      }
      let type = parseType(f.type);
      // Paimon forces primary-key columns NOT NULL.
      if (pk.includes(f.name)) type = withNullable(type, false);
      return { id: i, name: f.name, type: typeToJson(type), ...(f.description ? { description: f.description } : {}) };
    });
    return new TableSchema(
      {
        version: SCHEMA_VERSION,
        id: 0,
        fields,
        highestFieldId: fields.length - 1,
        partitionKeys: spec.partitionKeys ?? [],
        primaryKeys: pk,
        options,
        ...(spec.comment === undefined ? {} : { comment: spec.comment }),
        timeMillis: nowMillis,
      },
      true,
    );
  }
}

/** What this store writes when a table does not say (Paimon's own default is zstd). */
export const DEFAULT_FILE_COMPRESSION = 'snappy';

/**
 * The options `TableSchema.fromSpec` writes into a new table's schema when the spec leaves them
 * out, with their values. Append tables default to bucket-unaware mode (-1), as Paimon does
 * (append-table.ts).
 */
export function specDefaultOptions(hasPrimaryKey: boolean): Readonly<Record<string, string>> {
  return { bucket: hasPrimaryKey ? '1' : '-1', 'file.format': 'parquet', 'file.compression': DEFAULT_FILE_COMPRESSION, 'manifest.compression': 'deflate' };
}

/**
 * Corruption for schema JSON of the wrong shape: not an object, a key missing, or a value of the
 * wrong JSON type (SchemaSerializer's types: ints, strings, lists of strings, a map of strings; a
 * field's `type` a string or a type object). Optional keys may be absent or null. What the values
 * mean (an unknown type, a key naming no column) is checked after, as InvalidArgument/NotSupported.
 */
function checkShape(json: unknown, path: string): asserts json is Partial<TableSchemaJson> {
  const bad = (why: string) => invalidArgumentOrCorrupt(path, why);
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw bad(`expected a JSON object, got ${json === null ? 'null' : Array.isArray(json) ? 'an array' : typeof json}`);
  const o = json as Record<string, unknown>;
  for (const k of ['id', 'fields', 'highestFieldId', 'partitionKeys', 'primaryKeys', 'options']) {
    if (o[k] === undefined || o[k] === null) throw bad(`missing '${k}'`);
  }
  const int = (v: unknown) => typeof v === 'number' && Number.isInteger(v);
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  for (const k of ['id', 'highestFieldId']) if (!int(o[k])) throw bad(`'${k}' is not an integer`);
  for (const k of ['version', 'timeMillis']) if (o[k] !== undefined && o[k] !== null && !int(o[k])) throw bad(`'${k}' is not an integer`);
  if (o['comment'] !== undefined && o['comment'] !== null && typeof o['comment'] !== 'string') throw bad(`'comment' is not a string`);
  for (const k of ['partitionKeys', 'primaryKeys']) if (!strings(o[k])) throw bad(`'${k}' is not a list of strings`);
  const opts = o['options'];
  if (typeof opts !== 'object' || Array.isArray(opts) || Object.values(opts as object).some((v) => typeof v !== 'string')) throw bad(`'options' is not a map of strings`);
  if (!Array.isArray(o['fields'])) throw bad(`'fields' is not a list`);
  o['fields'].forEach((f: unknown, i: number) => {
    if (f === null || typeof f !== 'object' || Array.isArray(f)) throw bad(`field ${i} is not an object`);
    const fo = f as Record<string, unknown>;
    if (!int(fo['id'])) throw bad(`field ${i}: 'id' is not an integer`);
    if (typeof fo['name'] !== 'string') throw bad(`field ${i}: 'name' is not a string`);
    checkTypeShape(fo['type'], `field ${i}: 'type'`, bad);
    const d = fo['description'];
    if (d !== undefined && d !== null && typeof d !== 'string') throw bad(`field ${i}: 'description' is not a string`);
  });
}

/**
 * A field's type in a schema file: a string, or a type object whose members have the JSON types
 * Paimon's serializeJson writes (ARRAY/MULTISET 'element', MAP 'key' and 'value', ROW 'fields' of
 * {id, name, type, description?}), nested ones too. Only the JSON shape: a type name unknown or
 * not supported here is left to the type parser (InvalidArgument, NotSupported), which also
 * parses what a person writes and so cannot tell a damaged file from a mistake.
 */
function checkTypeShape(t: unknown, where: string, bad: (why: string) => Error): void {
  if (typeof t === 'string') return;
  if (t === null || typeof t !== 'object' || Array.isArray(t)) throw bad(`${where} is neither a type string nor a type object`);
  const o = t as Record<string, unknown>;
  if (typeof o['type'] !== 'string') throw bad(`${where}: a type object without a 'type' string`);
  const root = /^\s*([A-Za-z_]*)/.exec(o['type'])![1]!.toUpperCase();
  const member = (k: string) => {
    if (o[k] === undefined) throw bad(`${where}: ${root} type object without '${k}'`);
    checkTypeShape(o[k], `${where}: ${root} '${k}'`, bad);
  };
  if (root === 'ARRAY' || root === 'MULTISET') member('element');
  else if (root === 'MAP') {
    member('key');
    member('value');
  } else if (root === 'ROW') {
    const fields = o['fields'];
    if (!Array.isArray(fields)) throw bad(`${where}: ROW 'fields' is not a list`);
    fields.forEach((f: unknown, j: number) => {
      if (f === null || typeof f !== 'object' || Array.isArray(f)) throw bad(`${where}: ROW field ${j} is not an object`);
      const fo = f as Record<string, unknown>;
      if (typeof fo['id'] !== 'number' || !Number.isInteger(fo['id'])) throw bad(`${where}: ROW field ${j}: 'id' is not an integer`);
      if (typeof fo['name'] !== 'string') throw bad(`${where}: ROW field ${j}: 'name' is not a string`);
      checkTypeShape(fo['type'], `${where}: ROW field ${j}: 'type'`, bad);
      const d = fo['description'];
      if (d !== undefined && d !== null && typeof d !== 'string') throw bad(`${where}: ROW field ${j}: 'description' is not a string`);
    });
  }
}

function invalidArgumentOrCorrupt(path: string, why: string): Error {
  return corruption(path, `schema file: ${why}`);
}
