// Text on the command line → values of the table store: durations, read points (`--snapshot`,
// `--tag`, `--at`), `--where` conditions and `--key` objects, and rows → JSON objects. Column
// values go through `valueFromJson` of the column's type, so the command line accepts exactly
// what `put` accepts (numbers may be written as text here: `qty>=5`).

import { parseType, typeToString, valueFromJson, valueToJson, type DataField, type DataType, type Predicate, type ReadPoint, type Table } from '../index.ts';
import { LsmError } from '../errors.ts';
import { repeatedKey, repeatedKeyPath } from '../json-keys.ts';
import { parseDuration as parseOptionDuration } from '../options.ts';
import { usageError } from './args.ts';

export { repeatedKey, repeatedKeyPath };

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * A duration flag in ms. Two forms, so that what a table's duration option takes (options.ts
 * `parseDuration`: Java's '7 d', '90 min', '12 hours', and the '1.5 h' earlier versions wrote) is
 * taken here too, and the command line's own compact forms keep working: `7d`, `12h`, `30m`, `45s`,
 * `500ms`, `1w`, combined as `1h30m`. `0` alone is zero. A number without a unit is milliseconds
 * to a table option; here it is refused, since `--retain 7` meant as 7 days would keep a tag 7 ms.
 */
export function parseDuration(text: string, flag: string): number {
  const t = text.trim();
  if (t === '0') return 0;
  if (/^\d+$/.test(t)) {
    throw usageError(`option '--${flag}': a number without a unit is milliseconds to a table option; write the unit, such as '${t}d', '${t} d' or '${t} ms', got '${text}'`);
  }
  const ms = compactDurationMs(t) ?? optionDurationMs(text);
  if (ms === undefined) {
    throw usageError(`option '--${flag}': expected a duration such as 7d, 12h, 30m, 1h30m or 1w, or as a table option takes it ('7 d', '90 min', '12 hours'), got '${text}'`);
  }
  if (!Number.isSafeInteger(ms)) throw usageError(`option '--${flag}': the duration '${text}' is too long to count in milliseconds`);
  return ms;
}

/** The command line's compact form (`1h30m`), or undefined when `t` is not one. */
function compactDurationMs(t: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;
  let total = 0;
  let end = 0;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    total += Number(m[1]) * DURATION_UNITS[m[2]!]!;
    end = re.lastIndex;
  }
  return t.length === 0 || end !== t.length ? undefined : Math.round(total);
}

/** The form a table's duration option takes, or undefined when `text` is not one. */
function optionDurationMs(text: string): number | undefined {
  try {
    return parseOptionDuration(text, 'duration');
  } catch (e) {
    if (e instanceof LsmError && e.kind === 'InvalidArgument') return undefined;
    throw e;
  }
}

/** A positive snapshot id. */
export function parseSnapshotId(text: string, flag = 'snapshot'): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) {
    throw usageError(`option '--${flag}': expected a snapshot id (a positive integer), got '${text}'`);
  }
  return Number(text);
}

/** The largest time a JavaScript Date holds, in epoch milliseconds. */
const MAX_DATE_MS = 8.64e15;

const LTZ = parseType('TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL');

/** ISO-8601 text (no zone = UTC) or epoch milliseconds → epoch milliseconds. */
export function parseTime(text: string, flag: string): number {
  const t = text.trim();
  if (/^\d+$/.test(t)) {
    // Beyond a Date's range (year 275760) it is no time at all, most likely digits typed twice:
    // read as "the latest", it would hide the mistake.
    const ms = Number(t);
    if (ms > MAX_DATE_MS) throw usageError(`option '--${flag}': epoch milliseconds must be at most ${MAX_DATE_MS}, got '${text}'`);
    return ms;
  }
  try {
    return (valueFromJson(LTZ, t, flag) as number) / 1000;
  } catch {
    throw usageError(`option '--${flag}': expected an ISO-8601 time such as 2024-05-01T12:00:00Z (or epoch milliseconds), got '${text}'`);
  }
}

/** The read point of `--snapshot`, `--tag` and `--at`; at most one of them. */
export function readPoint(o: { snapshot?: string | undefined; tag?: string | undefined; at?: string | undefined }): ReadPoint {
  const given = (['snapshot', 'tag', 'at'] as const).filter((k) => o[k] !== undefined);
  if (given.length > 1) throw usageError(`give at most one of --snapshot, --tag and --at (got ${given.map((g) => `--${g}`).join(' and ')})`);
  if (o.snapshot !== undefined) return { snapshotId: parseSnapshotId(o.snapshot) };
  if (o.tag !== undefined) {
    if (o.tag.length === 0) throw usageError(`option '--tag': expected a tag name, got ''`);
    return { tag: o.tag };
  }
  if (o.at !== undefined) return { timestampMs: parseTime(o.at, 'at') };
  return {};
}

function fieldOf(table: Pick<Table, 'schema'>, column: string, what: string): DataField {
  const i = table.schema.fieldIndex.get(column);
  if (i === undefined) {
    throw usageError(`${what} names unknown column '${column}' (columns: ${table.schema.fields.map((f) => f.name).join(', ')})`);
  }
  return table.schema.fields[i]!;
}

const isString = (t: DataType) => t.root === 'STRING' || t.root === 'VARCHAR' || t.root === 'CHAR';
/** A number written as text: `5`, `-1.50`, `.5`, `2e3`. */
export const NUMERIC_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * `valueFromJson` of a column, with the column named in every message (core's DATE, TIME and
 * TIMESTAMP parsers leave it out).
 */
export function columnValueFromJson(field: DataField, j: unknown): unknown {
  // JSON numbers are doubles: past 15 significant digits the parsed value may not be what was
  // written (12345678901234567890.12 reads as 12345678901234567000). A DECIMAL would store the
  // rounded value; a BIGINT would be refused naming a number that was never written.
  const root = field.type.root;
  if (typeof j === 'number' && Number.isFinite(j) && !Number.isSafeInteger(j) && ((root === 'BIGINT' && Number.isInteger(j)) || (root === 'DECIMAL' && significantDigits(j) > 15))) {
    throw usageError(
      `column '${field.name}' (${typeToString(field.type)}): the number ${j} has more digits than a JSON number keeps exactly; write it as a string ("…")`,
    );
  }
  try {
    return valueFromJson(field.type, j, field.name);
  } catch (e) {
    const message = (e as Error).message;
    if (message.includes(`column '${field.name}'`)) throw e;
    throw usageError(`column '${field.name}' (${typeToString(field.type)}): ${message}`);
  }
}

/** Significant digits of a double as JavaScript prints it: 1.5e21 → 2, 12345678901234567000 → 17. */
function significantDigits(n: number): number {
  const mantissa = String(Math.abs(n)).split('e')[0]!.replace('.', '');
  return mantissa.replace(/^0+/, '').replace(/0+$/, '').length;
}

/** One value written as text on the command line, parsed by the column's type. */
export function valueFromText(field: DataField, text: string): unknown {
  const t = field.type;
  let j: unknown = text;
  if (isString(t)) {
    if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
      try {
        j = JSON.parse(text);
      } catch {
        j = text;
      }
    }
  } else if (t.root === 'BOOLEAN') {
    if (text === 'true' || text === 'false') j = text === 'true';
  } else if (['TINYINT', 'SMALLINT', 'INT', 'FLOAT', 'DOUBLE'].includes(t.root)) {
    if (NUMERIC_TEXT.test(text.trim())) j = Number(text);
  } else if (t.root === 'ARRAY' || t.root === 'MAP') {
    // JSON text: `[1,2]`, `{"k":1}` or `[[1,"a"]]` (types.ts JSON forms).
    try {
      j = JSON.parse(text);
    } catch {
      throw usageError(`column '${field.name}' (${typeToString(t)}): expected JSON text, got '${text}'`);
    }
  }
  return columnValueFromJson(field, j);
}

const OPS: Record<string, Predicate['op']> = { '=': '=', '<': '<', '<=': '<=', '>': '>', '>=': '>=', '^=': 'prefix' };

/** `item=A1`, `qty>=5`, `item^=A` (prefix) → a Predicate, in the columns of `table.schema` (a reader's at a read point). */
export function parseWhere(table: Pick<Table, 'schema'>, text: string): Predicate {
  const m = /^([^<>=^!]+?)\s*(>=|<=|\^=|!=|=|<|>)(.*)$/s.exec(text);
  if (!m) throw usageError(`option '--where': expected <column><op><value> with op one of = < <= > >= ^= (prefix), got '${text}'`);
  const column = m[1]!.trim();
  const opText = m[2]!;
  if (opText === '!=') throw usageError(`option '--where': '!=' is not supported in '${text}'; use = < <= > >= or ^= (prefix)`);
  const field = fieldOf(table, column, `--where '${text}'`);
  const op = OPS[opText]!;
  if (op === 'prefix' && !isString(field.type)) {
    throw usageError(`--where '${text}': a prefix condition (^=) needs a string column; '${column}' is ${typeToString(field.type)}`);
  }
  try {
    // Spaces around the operator are layout (`qty >= 5`); quotes keep a string's own (`item=" A"`).
    return { column, op, value: valueFromText(field, m[3]!.trim()) };
  } catch (e) {
    throw usageError(`--where '${text}': ${(e as Error).message}`);
  }
}

/** `a,b` → column names, checked against the schema. */
export function parseColumns(table: Pick<Table, 'schema'>, text: string): string[] {
  const cols = text.split(',').map((c) => c.trim());
  if (cols.some((c) => c.length === 0)) throw usageError(`option '--columns': expected a comma list of column names, got '${text}'`);
  for (const c of cols) fieldOf(table, c, '--columns');
  // Each row is printed as one JSON object: a column named twice would come out once.
  const twice = cols.find((c, i) => cols.indexOf(c) !== i);
  if (twice !== undefined) throw usageError(`option '--columns': column '${twice}' is named twice in '${text}'`);
  return cols;
}

/** What `repeatedKey` (json-keys.ts) found in `text`, said for a message (after where it is: a line, an option), or undefined. */
export function repeatedKeyProblem(text: string): string | undefined {
  const twice = repeatedKey(text);
  if (!twice) return undefined;
  return twice.column === undefined
    ? `column '${twice.key}' is given twice; expected each column once (JSON would keep only the last)`
    : `column '${twice.column}': key '${twice.key}' is given twice; expected each key once (JSON would keep only the last)`;
}

/** `--key '{"item":"A1"}'` → the primary key by column name, in memory form. */
export function parseKey(table: Pick<Table, 'schema'>, text: string): Record<string, unknown> {
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw usageError(`option '--key': not valid JSON: ${(e as Error).message}`);
  }
  if (j === null || typeof j !== 'object' || Array.isArray(j)) throw usageError(`option '--key': expected a JSON object of the primary-key columns, got ${text}`);
  const twice = repeatedKeyProblem(text);
  if (twice) throw usageError(`option '--key': ${twice}`);
  const pk = table.schema.primaryKeys;
  if (pk.length === 0) throw usageError("option '--key': the table has no primary key (an append table); find its rows with `scan --where`");
  const key: Record<string, unknown> = {};
  for (const name of Object.keys(j)) {
    if (!pk.includes(name)) throw usageError(`option '--key': '${name}' is not a primary-key column (the primary key is ${pk.join(', ')})`);
  }
  for (const name of pk) {
    const v = (j as Record<string, unknown>)[name];
    if (v === undefined || v === null) throw usageError(`option '--key': missing primary-key column '${name}' (the primary key is ${pk.join(', ')})`);
    try {
      key[name] = columnValueFromJson(fieldOf(table, name, '--key'), v);
    } catch (e) {
      throw usageError(`option '--key': ${(e as Error).message}`);
    }
  }
  return key;
}

/** A row (values in `fields` order, memory form) → a JSON object keyed by column name. */
export function rowToJson(fields: readonly DataField[], row: readonly unknown[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (let i = 0; i < fields.length; i++) o[fields[i]!.name] = valueToJson(fields[i]!.type, row[i]);
  return o;
}
