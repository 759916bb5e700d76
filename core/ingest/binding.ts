// Bindings: which events feed which table, and how an envelope becomes one row with a row kind.
// A binding names a topic filter, a contract, a table, and for each column it writes a path into
// the envelope. Only bound columns appear in the row; an absent column means "no change" to a
// partial-update table.
//
// Paths: `<root>(.<name>)*` with root
//   after    the row image: `after`, or `before` for op d (a Debezium delete carries its last image
//            in `before`), so one binding serves inserts, updates and deletes;
//   before   `before` strictly (absent when null);
//   source   `source` (module, stream, seq and any extras);
//   op | ts_ms | contract   the envelope's own fields (`contract.name`, `contract.version`).
// `ts_ms` bound to a TIMESTAMP column is converted from milliseconds (cut to the column's precision,
// as every value valueFromJson reads into a TIMESTAMP(p) is).
//
// Concurrency: pure functions. Invariants: `checkBinding` accepted the binding against the table
// (and contract) before `applyBinding` sees it; `applyBinding` still checks every value it writes
// against the column type, because the table's schema can move on.

import { checkValue, typeToString, valueFromJson, valuesEqual, type DataField, type DataType } from '../lsm/types.ts';
import { FORBIDDEN_KEYS, isObject, NAME_PATTERN, OPS, refuse, type Envelope, type Op, type Refusal } from './envelope.ts';
import { beyondFloatRange, CONTRACT_NAME, inexactNumber, type Contract } from './contracts.ts';
import { fastConverter, NO_FAST, type FastConvert } from './fast-values.ts';
import { sequenceGroups, type TableDefinition } from './seed-tables.ts';

export type RowKind = '+I' | '-U' | '+U' | '-D';
export const ROW_KINDS: readonly RowKind[] = ['+I', '-U', '+U', '-D'];
export const DEFAULT_KINDS: Readonly<Record<Op, RowKind>> = { c: '+I', r: '+I', u: '+U', d: '-D' };

export interface SequenceGroupBinding {
  /** The table column holding this writer's sequence (bound, usually to `source.seq`). */
  readonly field: string;
  /** The columns this writer owns; must equal the table's `fields.<field>.sequence-group`. */
  readonly columns: readonly string[];
}

export interface EnrichBinding {
  /** The table looked up. */
  readonly table: string;
  /** Lookup table column → envelope path giving its value. */
  readonly key: Readonly<Record<string, string>>;
  /** Target column → lookup table column copied into it. */
  readonly columns: Readonly<Record<string, string>>;
}

export interface Binding {
  /** For messages; defaults to `<contract>→<table>`. */
  readonly name?: string;
  readonly topic: string;
  readonly contract: string;
  readonly table: string;
  /** Table column → envelope path. */
  readonly columns: Readonly<Record<string, string>>;
  readonly kinds?: Readonly<Partial<Record<Op, RowKind>>>;
  readonly sequenceGroup?: SequenceGroupBinding;
  readonly enrich?: EnrichBinding;
}

/** The row of the enrichment table whose key columns equal `key`, in JSON form; undefined if none. */
export type EnrichLookup = (table: string, key: Readonly<Record<string, unknown>>) => Record<string, unknown> | undefined;

/** One record a binding writes: its row kind and the row by column name, values in memory form. */
export type BoundRecord = { readonly ok: true; readonly kind: RowKind; readonly row: Record<string, unknown> };
export type ApplyResult = BoundRecord | Refusal;

export class BindingError extends Error {
  readonly binding: string;
  readonly column: string | undefined;
  constructor(binding: string, message: string, column?: string) {
    super(`binding '${binding}': ${message}`);
    this.name = 'BindingError';
    this.binding = binding;
    this.column = column;
  }
}

export const bindingName = (b: Binding): string => b.name ?? `${b.contract}→${b.table}`;

// ---------------------------------------------------------------------------------------------
// Topic filters (MQTT 3.1.1 §4.7).

const TOPIC_LEVELS_MAX = 16;

/** Why `filter` is not a valid MQTT topic filter, or undefined. */
export function topicFilterProblem(filter: string): string | undefined {
  if (typeof filter !== 'string' || filter.length === 0 || filter.length > 1024) return 'expected a non-empty string';
  const levels = filter.split('/');
  if (levels.length > TOPIC_LEVELS_MAX) return `more than ${TOPIC_LEVELS_MAX} levels`;
  for (let i = 0; i < levels.length; i++) {
    const l = levels[i]!;
    if (l === '#') {
      if (i !== levels.length - 1) return "'#' must be the last level";
    } else if (l.includes('#')) return "'#' must be a whole level";
    else if (l !== '+' && l.includes('+')) return "'+' must be a whole level";
  }
  return undefined;
}

/** True when `topic` matches the MQTT topic filter (`+` one level, `#` the rest, including none). */
export function matchTopic(filter: string, topic: string): boolean {
  if (topic.includes('+') || topic.includes('#')) return false;
  const f = filter.split('/');
  const t = topic.split('/');
  // Topics starting with '$' are not matched by a filter starting with a wildcard (MQTT §4.7.2).
  if (t[0]!.startsWith('$') && (f[0] === '+' || f[0] === '#')) return false;
  for (let i = 0; i < f.length; i++) {
    const level = f[i]!;
    if (level === '#') return i === f.length - 1;
    if (i >= t.length) return false;
    if (level !== '+' && level !== t[i]) return false;
  }
  return f.length === t.length;
}

/** The bindings whose topic filter matches `topic`, in the given order. */
const matches = new WeakMap<readonly Binding[], Map<string, Binding[]>>();

/** The bindings whose filter matches `topic` (remembered per binding list: a site has few topics). */
export function bindingsFor(bindings: readonly Binding[], topic: string): Binding[] {
  let byTopic = matches.get(bindings);
  if (!byTopic) {
    byTopic = new Map();
    matches.set(bindings, byTopic);
  }
  let found = byTopic.get(topic);
  if (!found) {
    found = Object.freeze(bindings.filter((b) => matchTopic(b.topic, topic))) as Binding[];
    if (byTopic.size < 10_000) byTopic.set(topic, found);
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// Paths.

const PATH_ROOTS = ['after', 'before', 'source', 'op', 'ts_ms', 'contract'] as const;
type PathRoot = (typeof PATH_ROOTS)[number];
const SEGMENT = /^[A-Za-z_][A-Za-z0-9_-]{0,127}$/;

/** Splits a path, or explains why it is not one. */
const pathCache = new Map<string, { root: PathRoot; rest: string[] } | { problem: string }>();

/** `parsePath`, remembered: bindings name the same few paths for every event. */
function cachedPath(path: string): { root: PathRoot; rest: string[] } | { problem: string } {
  let p = pathCache.get(path);
  if (p === undefined) {
    p = parsePath(path);
    if (pathCache.size < 10_000) pathCache.set(path, p);
  }
  return p;
}

export function parsePath(path: string): { root: PathRoot; rest: string[] } | { problem: string } {
  if (typeof path !== 'string' || path.length === 0) return { problem: 'expected a path such as after.qty' };
  const [root, ...rest] = path.split('.');
  if (!(PATH_ROOTS as readonly string[]).includes(root!)) {
    return { problem: `unknown path root '${root}' (expected ${PATH_ROOTS.join(', ')})` };
  }
  for (const s of rest) if (!SEGMENT.test(s) || FORBIDDEN_KEYS.has(s)) return { problem: `bad path segment '${s}'` };
  const r = root as PathRoot;
  if ((r === 'after' || r === 'before') && rest.length !== 1) return { problem: `'${r}' paths name one field: ${r}.<field>` };
  if ((r === 'op' || r === 'ts_ms') && rest.length !== 0) return { problem: `'${r}' has no sub-fields` };
  if (r === 'contract' && (rest.length !== 1 || !['name', 'version'].includes(rest[0]!))) {
    return { problem: "contract paths are contract.name or contract.version" };
  }
  if (r === 'source' && rest.length === 0) return { problem: 'source paths name a field: source.seq' };
  return { root: r, rest };
}

/** The JSON value at `path`; undefined when absent. */
export function resolvePath(envelope: Envelope, path: string): unknown {
  const p = cachedPath(path);
  if ('problem' in p) return undefined;
  return resolveParsed(envelope, p.root, p.rest);
}

// ---------------------------------------------------------------------------------------------
// Load-time checks.

export interface CheckBindingOptions {
  /** The contract's latest version: `after.x`/`before.x` must name one of its fields. */
  readonly contract?: Contract;
  /** The enrichment table, when the binding has `enrich`. */
  readonly enrichTable?: TableDefinition;
}

/**
 * Checks a binding against its table (and contract); throws BindingError naming the binding and
 * the column. Rules:
 *   0. columns, kinds, sequenceGroup and enrich have their shapes (objects, a list of names);
 *   1. topic is a valid filter; contract a valid name; table the given table;
 *   2. every bound column exists; every path parses (known root) and, with a contract, names a field;
 *   3. every primary-key and partition column is bound;
 *   4. kinds map ops to row kinds;
 *   5. sequenceGroup: the table is partial-update and declares `fields.<field>.sequence-group`
 *      with exactly these columns; the field and every group column are bound (a group sequence
 *      that advances replaces the whole group, so an unbound group column would be nulled);
 *      no other non-key column is bound (a writer touches only its own group);
 *   6. without sequenceGroup, no bound column may belong to a table sequence group;
 *   7. enrich: key columns exist in the enrichment table (if given), paths parse, target columns
 *      exist and obey 5/6 like bound columns;
 *   8. every column of the table's `sequence.field` (unless the binding has a sequenceGroup, whose
 *      field orders all it writes), and a sequenceGroup's field, is bound in
 *      `columns` (not by enrich, whose missing lookup row leaves it absent): an absent sequence
 *      is null, and null orders as the oldest — rows of one binding then fall back to arrival
 *      order, so a replayed dead letter or any late event overwrote a newer row, and a row with
 *      a sequence beat every later one without;
 *   9. a table of the site's own (`definedBy` set): the column that orders what the binding writes
 *      is written from exactly `source.seq` — the first of `sequence.field`'s columns, or a
 *      sequenceGroup's field. Rule 8 asks only that it is bound, which a seed binding (written
 *      here, with the seq) meets; a site's binding from `after.x` or `ts_ms` would pass it, and
 *      an event that comes twice (a dead letter replayed, a module's resend) could then overwrite
 *      a newer row, which the table's definition was made to prevent (site-tables.ts
 *      `orderProblem`). Only the first column of several: Paimon compares them in order, and two
 *      events of one stream differ in their seq unless the same event came twice, when either
 *      copy is the same row; the later columns only break that tie;
 *  10. a table of the site's own, with a column that orders what the binding writes (rule 9): the
 *      topic filter names one module and one stream (`checkOrderingStreams` checks that no other
 *      binding writes that column from another stream);
 *  11. the topic filter can match an event topic (`noEventTopicProblem`).
 */
export function checkBinding(binding: Binding, table: TableDefinition, options: CheckBindingOptions = {}): void {
  const name = bindingName(binding);
  const fail = (why: string, column?: string): never => {
    throw new BindingError(name, why, column);
  };
  const topicProblem = topicFilterProblem(binding.topic);
  if (topicProblem) fail(`topic filter '${binding.topic}': ${topicProblem}`);
  if (typeof binding.contract !== 'string' || !CONTRACT_NAME.test(binding.contract)) fail(`contract name '${binding.contract}' is not valid`);
  if (binding.table !== table.name) fail(`is for table '${binding.table}', checked against '${table.name}'`);
  if (options.contract && options.contract.name !== binding.contract) {
    fail(`is for contract '${binding.contract}', checked against '${options.contract.name}'`);
  }
  shapeProblems(binding, fail);

  const columns = new Map(table.fields.map((f) => [f.name, f]));
  const contractFields = options.contract ? new Set(options.contract.fields.map((f) => f.name)) : undefined;
  const checkPath = (column: string, path: string) => {
    const p = parsePath(path);
    if ('problem' in p) return fail(`column '${column}' ← '${path}': ${p.problem}`, column);
    if (contractFields && (p.root === 'after' || p.root === 'before') && !contractFields.has(p.rest[0]!)) {
      fail(`column '${column}' ← '${path}': contract '${binding.contract}' has no field '${p.rest[0]}'`, column);
    }
  };

  const entries = Object.entries(binding.columns ?? {});
  if (entries.length === 0) fail('binds no columns');
  const written = new Set<string>();
  for (const [column, path] of entries) {
    if (!columns.has(column)) fail(`table '${table.name}' has no column '${column}'`, column);
    checkPath(column, path);
    written.add(column);
  }
  if (binding.enrich) {
    const e = binding.enrich;
    if (typeof e.table !== 'string' || e.table.length === 0) fail('enrich.table is missing');
    if (options.enrichTable && options.enrichTable.name !== e.table) fail(`enrich table '${e.table}' checked against '${options.enrichTable.name}'`);
    const lookupColumns = options.enrichTable ? new Set(options.enrichTable.fields.map((f) => f.name)) : undefined;
    const keys = Object.entries(e.key ?? {});
    if (keys.length === 0) fail('enrich.key binds no columns');
    for (const [col, path] of keys) {
      if (lookupColumns && !lookupColumns.has(col)) fail(`enrich table '${e.table}' has no key column '${col}'`, col);
      checkPath(`${e.table}.${col}`, path);
    }
    const targets = Object.entries(e.columns ?? {});
    if (targets.length === 0) fail('enrich.columns copies no columns');
    for (const [target, source] of targets) {
      if (!columns.has(target)) fail(`table '${table.name}' has no column '${target}' (enrich)`, target);
      if (written.has(target)) fail(`column '${target}' is bound twice (columns and enrich)`, target);
      if (lookupColumns && !lookupColumns.has(source)) fail(`enrich table '${e.table}' has no column '${source}'`, target);
      written.add(target);
    }
  }

  for (const key of [...table.primaryKeys, ...table.partitionKeys]) {
    if (!written.has(key)) fail(`key column '${key}' of table '${table.name}' is not bound`, key);
  }

  const bound = binding.columns ?? {};
  const own = table.definedBy !== undefined;
  // Rule 9: `role` says what the column is to the table, for the message.
  const fromSeq = (column: string, role: string): void => {
    const has = Object.prototype.hasOwnProperty.call(bound, column);
    if (has && bound[column] === 'source.seq') return;
    const now = has
      ? `it is written from ${bound[column]}`
      : written.has(column)
        ? `it is filled by enrich from ${binding.enrich!.table}.${binding.enrich!.columns[column]}`
        : 'it is not written';
    fail(`column ${column} is ${role} and must be written from source.seq (${now}): rows are ordered by the module's seq, so an event that comes twice cannot overwrite a newer row`, column);
  };
  const tableSeq = sequenceFieldsOf(table);
  if (own && !binding.sequenceGroup && tableSeq.length > 0) {
    fromSeq(tableSeq[0]!, tableSeq.length === 1 ? `table ${table.name}'s sequence field` : `the first of table ${table.name}'s sequence fields (${tableSeq.join(', ')})`);
  }
  // Rule 10.
  const ordering = orderingColumn(binding, table);
  if (own && ordering !== undefined && streamOfFilter(binding.topic) === undefined) {
    fail(
      `topic filter '${binding.topic}' does not name one module and stream ('tilstand/+/events/<module>/<stream>'), and table ${table.name} orders what it writes by one stream's seq (column ${ordering}): the seqs of two streams say nothing about which row is newer; a binding for each stream`,
    );
  }
  // A sequenceGroup binding writes only its group's columns (rule 5), which its group field
  // orders; the table-wide sequence then stays null in its rows, harmlessly: partial-update skips
  // nulls, so those rows set no column the table-wide sequence orders.
  for (const f of binding.sequenceGroup ? [] : tableSeq) {
    if (Object.prototype.hasOwnProperty.call(bound, f)) continue;
    fail(
      `table '${table.name}' orders its rows by option 'sequence.field' = '${table.options['sequence.field']}', and column '${f}' is not bound in columns${written.has(f) ? ' (enrich leaves it null when the lookup finds no row)' : ''}; ` +
        `expected a path giving the stream's order, usually '${f}': 'source.seq' (a null sequence sorts as the oldest, so a late or replayed event would overwrite a newer row)`,
      f,
    );
  }

  for (const [op, kind] of Object.entries(binding.kinds ?? {})) {
    if (!(OPS as readonly string[]).includes(op)) fail(`kinds: '${op}' is not an op (c, u, d, r)`);
    if (!ROW_KINDS.includes(kind as RowKind)) fail(`kinds: '${String(kind)}' is not a row kind (+I, -U, +U, -D)`);
  }

  const groups = sequenceGroups(table);
  const keys = new Set(table.primaryKeys);
  const sg = binding.sequenceGroup;
  if (sg) {
    if (table.options['merge-engine'] !== 'partial-update') {
      fail(`sequenceGroup needs a partial-update table; '${table.name}' uses '${table.options['merge-engine'] ?? 'deduplicate'}'`, sg.field);
    }
    if (!columns.has(sg.field)) fail(`sequence-group field '${sg.field}' is not a column of '${table.name}'`, sg.field);
    const group = groups.find((g) => g.fields.includes(sg.field));
    // Of a group ordered by several fields ('fields.a,b.sequence-group'), the first, as for sequence.field.
    if (own && group) fromSeq(group.fields[0]!, `the ${group.fields.length === 1 ? '' : 'first '}sequence field of table ${table.name}'s sequence group (${group.columns.join(', ')})`);
    if (!written.has(sg.field)) fail(`sequence-group field '${sg.field}' is not bound`, sg.field);
    if (!Object.prototype.hasOwnProperty.call(bound, sg.field)) {
      fail(`sequence-group field '${sg.field}' is bound by enrich; expected it in columns, usually '${sg.field}': 'source.seq' (a missing lookup row leaves it null, and the group ignores the event)`, sg.field);
    }
    const declared = groups.find((g) => g.fields.includes(sg.field));
    if (!declared) fail(`table '${table.name}' has no option 'fields.${sg.field}.sequence-group'`, sg.field);
    for (const c of sg.columns) {
      if (!columns.has(c)) fail(`sequence-group column '${c}' is not a column of '${table.name}'`, c);
      if (!declared!.columns.includes(c)) fail(`column '${c}' is not in the table's sequence group of '${sg.field}'`, c);
      if (!written.has(c)) fail(`sequence-group column '${c}' is not bound (an advancing group would null it)`, c);
    }
    for (const c of declared!.columns) {
      if (!sg.columns.includes(c)) fail(`the table's sequence group of '${sg.field}' also holds '${c}'; list and bind it`, c);
    }
    for (const c of written) {
      if (!keys.has(c) && c !== sg.field && !sg.columns.includes(c)) {
        fail(`column '${c}' is outside this binding's sequence group '${sg.field}'`, c);
      }
    }
  } else {
    for (const c of written) {
      const owner = groups.find((g) => g.columns.includes(c) || g.fields.includes(c));
      if (owner) fail(`column '${c}' belongs to the sequence group of '${owner.fields.join(',')}'; declare sequenceGroup`, c);
    }
  }

  // Rule 11 (last, so the rules above name the problems they know first).
  const never = noEventTopicProblem(binding.topic);
  if (never !== undefined) fail(`topic filter '${binding.topic}' can match no event topic (tilstand/<site>/events/<module>/<stream>): ${never}`);
}

/**
 * Why no event topic, `tilstand/<site>/events/<module>/<stream>` with names matching NAME_PATTERN
 * (envelope.ts), matches the filter; undefined when one can. Such a filter is a valid MQTT filter,
 * and its binding fed nothing: every event of the stream meant became a no_binding dead letter.
 */
export function noEventTopicProblem(filter: string): string | undefined {
  const levels = filter.split('/');
  const fixed: Record<number, string> = { 0: 'tilstand', 2: 'events' };
  for (let i = 0; i < levels.length; i++) {
    const level = levels[i]!;
    // '#' matches the rest, none included (MQTT §4.7.1.2: its parent level too).
    if (level === '#') return undefined;
    if (i >= 5) break;
    if (level === '+') continue;
    const want = fixed[i];
    if (want !== undefined && level !== want) return `level ${i + 1} is '${level}', expected '${want}'`;
    if (want === undefined && !NAME_PATTERN.test(level)) return `level ${i + 1} is '${level}', expected a name matching ${NAME_PATTERN.source} (or + or #)`;
  }
  return levels.length === 5 ? undefined : `it has ${levels.length} levels, an event topic 5`;
}

/** A value as a shape message names it: `a string "x"`, `an array`, `undefined`. */
function shapeOf(v: unknown): string {
  if (v === undefined || v === null) return String(v);
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `a string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 39)}…` : v)}`;
  return typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`;
}

/**
 * Rule 0: the options that hold objects and lists have that shape, each refusal naming the option
 * and what was expected. The rules below iterate them: `sequenceGroup` without `columns` stopped
 * the start with a bare TypeError, and a string where an object or list belongs was read one
 * character at a time ("sequence-group column 'o' is not a column", "kinds: '0' is not an op").
 */
function shapeProblems(b: Binding, fail: (why: string, column?: string) => never): void {
  const objectOf = (v: unknown, option: string, of: string): void => {
    if (!isObject(v)) fail(`${option}: expected an object of ${of}, got ${shapeOf(v)}`);
  };
  objectOf(b.columns, 'columns', 'column → path');
  if (b.kinds !== undefined) objectOf(b.kinds, 'kinds', 'op → row kind');
  const sg: unknown = b.sequenceGroup;
  if (sg !== undefined) {
    if (!isObject(sg)) fail(`sequenceGroup: expected an object {field, columns}, got ${shapeOf(sg)}`);
    const g = sg as Record<string, unknown>;
    if (typeof g.field !== 'string' || g.field === '') fail(`sequenceGroup.field: expected a column name, got ${shapeOf(g.field)}`);
    if (!Array.isArray(g.columns) || !g.columns.every((c) => typeof c === 'string')) {
      fail(`sequenceGroup.columns: expected a list of column names, got ${shapeOf(g.columns)}`);
    }
  }
  const e: unknown = b.enrich;
  if (e !== undefined) {
    if (!isObject(e)) fail(`enrich: expected an object {table, key, columns}, got ${shapeOf(e)}`);
    const en = e as Record<string, unknown>;
    objectOf(en.key, 'enrich.key', 'column → path');
    objectOf(en.columns, 'enrich.columns', 'column → column');
  }
}

/**
 * The column that orders the rows `binding` writes to a table: the first field of its sequence
 * group, else the first of the table's `sequence.field`; undefined for a table that orders nothing
 * (first-row).
 */
function orderingColumn(binding: Binding, table: TableDefinition): string | undefined {
  const sg = binding.sequenceGroup;
  if (sg === undefined) return sequenceFieldsOf(table)[0];
  return sequenceGroups(table).find((g) => g.fields.includes(sg.field))?.fields[0] ?? sg.field;
}

/**
 * The one stream whose events the filter matches, `<module>/<stream>`, when it names them
 * (`tilstand/<site or +>/events/<module>/<stream>`); undefined when it can match several.
 */
export function streamOfFilter(filter: string): string | undefined {
  const l = filter.split('/');
  if (l.length !== 5 || l[0] !== 'tilstand' || l[2] !== 'events' || l[1] === '#') return undefined;
  const [module, stream] = [l[3]!, l[4]!];
  return module === '+' || module === '#' || stream === '+' || stream === '#' ? undefined : `${module}/${stream}`;
}

/**
 * Checks the bindings of the tables of the site's own together (each checked alone by
 * `checkBinding` first): the bindings that write one ordering column — a table's sequence field,
 * or one sequence group's — read one stream. A module's seq orders the events of its stream only:
 * yard/doors' seq 900 and yard/gates' seq 12 say nothing about which came later, so with two
 * streams behind one column a row would keep whichever stream counts higher. Throws BindingError
 * naming the later binding of a pair. The seed tables are left as they are (one stream per column).
 */
export function checkOrderingStreams(bindings: readonly Binding[], tables: readonly TableDefinition[]): void {
  const first = new Map<string, { binding: Binding; stream: string }>();
  for (const b of bindings) {
    const table = tables.find((t) => t.name === b.table);
    if (table?.definedBy === undefined) continue;
    const column = orderingColumn(b, table);
    const stream = streamOfFilter(b.topic);
    if (column === undefined || stream === undefined) continue;
    const key = `${table.name}\u0000${column}`;
    const seen = first.get(key);
    if (seen === undefined) first.set(key, { binding: b, stream });
    else if (seen.stream !== stream) {
      throw new BindingError(
        bindingName(b),
        `writes column ${column} of table ${table.name} from the seq of stream ${stream}, and binding '${bindingName(seen.binding)}' from that of ${seen.stream}: the seqs of two streams say nothing about which row is newer; give each stream its own table, or its own sequence group (partial-update)`,
        column,
      );
    }
  }
}

/** The columns of the table's `sequence.field` option (comma-separated), none when unset. */
function sequenceFieldsOf(table: TableDefinition): string[] {
  const v = table.options['sequence.field'];
  return v === undefined ? [] : v.split(',').map((s) => s.trim()).filter(Boolean);
}

// ---------------------------------------------------------------------------------------------
// Applying a binding to one event.

const TIME_ROOTS = new Set(['TIMESTAMP', 'TIMESTAMP_LTZ']);
/**
 * Columns whose JSON form as a number (epoch µs, days, ms of the day) no event should give: a
 * number there is ambiguous, as contracts.ts refuses it for a time field. Only a path without a
 * contract brings one (`source.<x>`, a numeric field bound to a time column, an enrich copy):
 * a connector's `source.ts_ms` (epoch ms) bound to a TIMESTAMP column read as µs put 1970 in the
 * table without a word. `ts_ms` to a TIMESTAMP column is the one number converted (from ms).
 */
const DATE_TIME_ROOTS = new Set(['DATE', 'TIME', 'TIMESTAMP', 'TIMESTAMP_LTZ']);

/** The refusal of a number for a date or time column (DATE_TIME_ROOTS). */
function ambiguousTime(name: string, from: string, column: string, t: DataType): Refusal {
  const text = t.root === 'DATE' ? 'yyyy-mm-dd' : t.root === 'TIME' ? 'hh:mm:ss' : 'ISO-8601';
  return refuse(
    'unfit_for_table',
    `binding '${name}': ${from} → column '${column}' (${typeToString(t)}): expected ${text} text, got a number (ms, µs or days cannot be told apart)${TIME_ROOTS.has(t.root) ? '; bind ts_ms for the envelope\'s own time' : ''}`,
    from,
  );
}

/**
 * Maps one (contract-checked) envelope to a row of the binding's table.
 * Steps: 1. the envelope's contract is the binding's (else binding_error); 2. the row kind from
 * `kinds`; 3. each bound column: resolve its path (absent → binding_error), convert with
 * valueFromJson to the column's type (fails → unfit_for_table); 4. enrich through `lookup`
 * (no lookup given → binding_error; no row found → the enriched columns stay absent).
 */
export function applyBinding(
  binding: Binding,
  envelope: Envelope,
  tableColumns: readonly DataField[],
  options: { lookup?: EnrichLookup } = {},
): ApplyResult {
  if (binding.enrich === undefined) {
    const c = compiledBinding(binding, tableColumns);
    if (c !== undefined) {
      const r = applyCompiled(c, envelope);
      if (r !== undefined) return r;
    }
  }
  return applyBindingGeneric(binding, envelope, tableColumns, options);
}

/**
 * The old key's retraction when an update moves a row to another primary key (`op: u` whose
 * `before` image names another key than `row`, the after image's row of this binding): what a
 * `d` of the before image writes, so with this event's seq in the ordering columns (a late or
 * replayed older event of the old key does not bring it back) and the binding's own kind for a
 * delete (a partial-update table retracts only this binding's group). With the new row alone, the
 * old key's row stayed beside it for good. Undefined when the event moves no row.
 */
export function retractionOfMovedKey(
  binding: Binding,
  envelope: Envelope,
  row: Readonly<Record<string, unknown>>,
  tableColumns: readonly DataField[],
  primaryKeys: readonly string[],
  options: { lookup?: EnrichLookup } = {},
): ApplyResult | undefined {
  if (envelope.op !== 'u' || envelope.before === null) return undefined;
  if (!keyMoved(binding, envelope.before, row, tableColumns, primaryKeys)) return undefined;
  return applyBinding(binding, { ...envelope, op: 'd', after: null }, tableColumns, options);
}

/**
 * Whether the before image gives a key column another value than `row`. Only `after.<field>`
 * paths differ between the images; a key value the before image lacks or the column cannot hold
 * names no row of the table, so it moves nothing. Compared as the table holds them (a BIGINT as
 * text or number, a TIMESTAMP at another offset, is the same key).
 */
function keyMoved(
  binding: Binding,
  before: Readonly<Record<string, unknown>>,
  row: Readonly<Record<string, unknown>>,
  tableColumns: readonly DataField[],
  primaryKeys: readonly string[],
): boolean {
  for (const key of primaryKeys) {
    const path = binding.columns[key];
    if (path === undefined) continue;
    const p = cachedPath(path);
    if ('problem' in p || p.root !== 'after') continue;
    const field = p.rest[0]!;
    if (!Object.prototype.hasOwnProperty.call(before, field)) return false;
    const type = tableColumns.find((f) => f.name === key)?.type;
    if (type === undefined) return false;
    let old: unknown;
    try {
      old = valueFromJson(type, before[field], key);
    } catch {
      return false;
    }
    if (!valuesEqual(old, row[key])) return true;
  }
  return false;
}

/** A bound column prepared for the fast path: its parsed path, table column and typed converter. */
interface CompiledColumn {
  readonly column: string;
  readonly root: PathRoot;
  readonly rest: readonly string[];
  readonly type: DataType;
  readonly fast: FastConvert;
}

interface CompiledBinding {
  readonly columnsObject: Readonly<Record<string, string>>;
  readonly kindsObject: Binding['kinds'];
  readonly tableColumns: readonly DataField[];
  readonly contract: string;
  readonly kinds: Readonly<Record<Op, RowKind>>;
  /** undefined: the fast path does not cover this binding (the generic path runs). */
  readonly columns: readonly CompiledColumn[] | undefined;
}

/** Per binding object: the compiled form for the table columns it was last applied to. */
const compiledBindings = new WeakMap<Binding, CompiledBinding>();

/**
 * The binding prepared for `applyCompiled`, or undefined when the fast path does not cover it
 * (enrichment, a path or column problem, a `ts_ms` → timestamp conversion): then the generic path
 * runs. Recompiled when the binding's columns object or the table's field list changes.
 */
function compiledBinding(binding: Binding, tableColumns: readonly DataField[]): CompiledBinding | undefined {
  let c = compiledBindings.get(binding);
  // Valid while the binding's parts and the table's field list are the same objects.
  if (c === undefined || c.tableColumns !== tableColumns || c.columnsObject !== binding.columns || c.kindsObject !== binding.kinds || c.contract !== binding.contract) {
    c = compileBinding(binding, tableColumns);
    compiledBindings.set(binding, c);
  }
  return c.columns === undefined ? undefined : c;
}

function compileBinding(binding: Binding, tableColumns: readonly DataField[]): CompiledBinding {
  const kinds = {} as Record<Op, RowKind>;
  for (const op of OPS) kinds[op] = binding.kinds?.[op] ?? DEFAULT_KINDS[op];
  const base = { columnsObject: binding.columns, kindsObject: binding.kinds, tableColumns, contract: binding.contract, kinds };
  return { ...base, columns: compileColumns(binding, tableColumns) };
}

function compileColumns(binding: Binding, tableColumns: readonly DataField[]): CompiledColumn[] | undefined {
  if (binding.enrich !== undefined || binding.columns === null || typeof binding.columns !== 'object') return undefined;
  const byName = new Map(tableColumns.map((f) => [f.name, f]));
  const columns: CompiledColumn[] = [];
  for (const [column, path] of Object.entries(binding.columns)) {
    const field = byName.get(column);
    if (!field || typeof path !== 'string') return undefined;
    const p = cachedPath(path);
    if ('problem' in p) return undefined;
    if (path === 'ts_ms' && TIME_ROOTS.has(field.type.root)) return undefined;
    columns.push({ column, root: p.root, rest: p.rest, type: field.type, fast: fastConverter(field.type) });
  }
  return columns;
}

/** The JSON value at a parsed path; undefined when absent. */
function resolveParsed(envelope: Envelope, root: PathRoot, rest: readonly string[]): unknown {
  let node: unknown;
  switch (root) {
    case 'after':
      node = envelope.op === 'd' ? envelope.before : envelope.after;
      break;
    case 'before':
      node = envelope.before;
      break;
    case 'source':
      node = envelope.source;
      break;
    case 'contract':
      node = envelope.contract;
      break;
    case 'op':
      return envelope.op;
    case 'ts_ms':
      return envelope.ts_ms;
  }
  for (let i = 0; i < rest.length; i++) {
    const key = rest[i]!;
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    if (!Object.prototype.hasOwnProperty.call(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * The fast path of applyBinding: every bound value present and converted by its typed fast path.
 * Returns undefined for anything else (a refusal, a value needing valueFromJson), and the generic
 * path then decides — so results and messages are the generic path's.
 */
function applyCompiled(c: CompiledBinding, envelope: Envelope): ApplyResult | undefined {
  if (envelope.contract.name !== c.contract) return undefined;
  const kind = c.kinds[envelope.op];
  if (kind === undefined) return undefined;
  const row: Record<string, unknown> = {};
  const cols = c.columns!;
  for (let i = 0; i < cols.length; i++) {
    const col = cols[i]!;
    const json = resolveParsed(envelope, col.root, col.rest);
    if (json === undefined) return undefined;
    let value = json === null ? (col.type.nullable ? null : NO_FAST) : col.fast(json);
    if (value === NO_FAST) {
      // A number for a date or time column is refused by the generic path (ambiguousTime).
      if (typeof json === 'number' && DATE_TIME_ROOTS.has(col.type.root)) return undefined;
      // A source extra no contract checked, as a number JSON.parse may have rounded (BIGINT,
      // DECIMAL): refused by the generic path (only here, off the typed fast case: no cost there).
      if (col.root === 'source' && typeof json === 'number' && inexactNumber(col.type, json) !== undefined) return undefined;
      // A number beyond a FLOAT or DOUBLE column's range, from any path: refused by the generic path.
      if (typeof json === 'number' && beyondFloatRange(col.type, json) !== undefined) return undefined;
      // Not a typed fast case: the generic conversion (valueFromJson checks what it returns); a
      // failure goes back to the generic path, which makes the refusal.
      try {
        value = valueFromJson(col.type, json, col.column);
      } catch {
        return undefined;
      }
    }
    row[col.column] = value;
  }
  return { ok: true, kind, row };
}

/** The generic applyBinding: every case, every refusal; applyBinding tries the compiled path first. */
export function applyBindingGeneric(
  binding: Binding,
  envelope: Envelope,
  tableColumns: readonly DataField[],
  options: { lookup?: EnrichLookup } = {},
): ApplyResult {
  const name = bindingName(binding);
  if (envelope.contract.name !== binding.contract) {
    return refuse('binding_error', `binding '${name}' expects contract '${binding.contract}', the event has '${envelope.contract.name}'`, 'contract.name');
  }
  const kind = binding.kinds?.[envelope.op] ?? DEFAULT_KINDS[envelope.op];
  const byName = new Map(tableColumns.map((f) => [f.name, f]));
  const row: Record<string, unknown> = {};

  const put = (column: string, json: unknown, from: string): Refusal | undefined => {
    const field = byName.get(column);
    if (!field) return refuse('binding_error', `binding '${name}': table has no column '${column}'`);
    let value: unknown;
    let inexact: string | undefined;
    try {
      if (from === 'ts_ms' && TIME_ROOTS.has(field.type.root) && typeof json === 'number') {
        value = valueFromJson(field.type, json * 1000, column);
      } else if (typeof json === 'number' && DATE_TIME_ROOTS.has(field.type.root)) {
        return ambiguousTime(name, from, column, field.type);
      } else if (typeof json === 'number' && from.startsWith('source.') && (inexact = inexactNumber(field.type, json)) !== undefined) {
        // A source extra: no contract checked it, so the exactness check the contract's fields
        // get is made here (CONTRACTS.md §1): 9007199254740993 arrived as …992 and was written.
        return refuse('unfit_for_table', `binding '${name}': ${from} → column '${column}' (${typeToString(field.type)}): ${inexact}`, from);
      } else if (typeof json === 'number' && (inexact = beyondFloatRange(field.type, json)) !== undefined) {
        // From any path: a DOUBLE field's 1e39 bound to a FLOAT column is an infinity in its file.
        return refuse('unfit_for_table', `binding '${name}': ${from} → column '${column}' (${typeToString(field.type)}): ${inexact}`, from);
      } else {
        value = valueFromJson(field.type, json, column);
      }
    } catch (e) {
      return refuse('unfit_for_table', `binding '${name}': ${from} → ${(e as Error).message}`, from);
    }
    row[column] = value;
    return undefined;
  };

  for (const [column, path] of Object.entries(binding.columns)) {
    const json = resolvePath(envelope, path);
    if (json === undefined) return refuse('binding_error', `binding '${name}': column '${column}' ← '${path}' is absent in the event`, path);
    const problem = put(column, json, path);
    if (problem) return problem;
  }

  if (binding.enrich) {
    const e = binding.enrich;
    if (!options.lookup) return refuse('binding_error', `binding '${name}' enriches from '${e.table}' but no lookup was given`);
    const key: Record<string, unknown> = {};
    for (const [col, path] of Object.entries(e.key)) {
      const json = resolvePath(envelope, path);
      if (json === undefined || json === null) {
        return refuse('binding_error', `binding '${name}': enrich key '${col}' ← '${path}' is absent in the event`, path);
      }
      key[col] = json;
    }
    let found: Record<string, unknown> | undefined;
    try {
      found = options.lookup(e.table, key);
    } catch (err) {
      return refuse('binding_error', `binding '${name}': lookup in '${e.table}' failed: ${(err as Error).message}`);
    }
    if (found) {
      for (const [target, source] of Object.entries(e.columns)) {
        const json = Object.prototype.hasOwnProperty.call(found, source) ? found[source] : undefined;
        if (json === undefined) continue;
        const problem = put(target, json, `${e.table}.${source}`);
        if (problem) return problem;
      }
    }
  }

  // Boundary assertion: whatever leaves here is a valid in-memory value of its column.
  for (const [column, value] of Object.entries(row)) {
    const t = byName.get(column)!.type;
    const problem = checkValue(t, value);
    if (problem) throw new Error(`assertion failed: column '${column}' (${typeToString(t)}) got a bad value: ${problem}`);
  }
  return { ok: true, kind, row };
}
