// Paimon's data types as the table store sees them: parsing and printing Paimon's type strings
// (`DataType.asSQLString`), the in-memory value of each type, conversion to and from JSON, and
// the one comparator every merge path uses.
//
// In-memory values (every file format, merge and read path works with these):
//   BOOLEAN → boolean           TINYINT, SMALLINT, INT → number      BIGINT → bigint
//   FLOAT, DOUBLE → number      DECIMAL(p,s) → bigint (the unscaled value; the scale is the type's)
//   CHAR, VARCHAR, STRING → string                  BINARY, VARBINARY, BYTES → Uint8Array
//   DATE → number (days since 1970-01-01)           TIME(p) → number (milliseconds of the day)
//   TIMESTAMP(p), TIMESTAMP(p) WITH LOCAL TIME ZONE → number (microseconds since the epoch, UTC
//     wall clock for TIMESTAMP; for p ≤ 3 always a multiple of 1000; valueFromJson cuts what it
//     reads to p digits, DESIGN.md "Values and types"). Precision above 6 is refused.
//   ARRAY<T> → a JS array of T values (elements may be null where T is nullable)
//   MAP<K, V> → a JS `Map` of K → V (keys never null; keys compared by value, so two Uint8Array
//     keys with the same bytes are the same key and a map holding both is refused)
//   null → null (only where the type is nullable).
// JSON (CLI, site API): BIGINT as a number when it is a safe integer, else a string; DECIMAL as a
// string; BYTES as base64; DATE as `yyyy-mm-dd`; TIMESTAMP as ISO-8601 text (`…Z` for LTZ);
// ARRAY as a JSON array; MAP with a CHAR/VARCHAR/STRING key as an object, any other MAP as an
// array of [key, value] pairs (both forms, and Map objects, are accepted on input; a key given
// twice is refused, not kept last).
// ARRAY and MAP have no order: they cannot be primary-key, partition, bucket-key or sequence
// columns, cannot be compared by predicates or min/max, and their file statistics are null.
// Nested ROW and MULTISET are refused with NotSupported.

import { invalidArgument, notSupported } from './errors.ts';

export type TypeRoot =
  | 'BOOLEAN'
  | 'TINYINT'
  | 'SMALLINT'
  | 'INT'
  | 'BIGINT'
  | 'FLOAT'
  | 'DOUBLE'
  | 'DECIMAL'
  | 'CHAR'
  | 'VARCHAR'
  | 'STRING'
  | 'BINARY'
  | 'VARBINARY'
  | 'BYTES'
  | 'DATE'
  | 'TIME'
  | 'TIMESTAMP'
  | 'TIMESTAMP_LTZ'
  | 'ARRAY'
  | 'MAP';

export interface DataType {
  readonly root: TypeRoot;
  readonly nullable: boolean;
  /** DECIMAL precision, TIME/TIMESTAMP precision. */
  readonly precision?: number;
  /** DECIMAL scale. */
  readonly scale?: number;
  /** CHAR/VARCHAR/BINARY/VARBINARY length. */
  readonly length?: number;
  /** ARRAY element type. */
  readonly element?: DataType;
  /** MAP key type (never nullable in values) and value type. */
  readonly key?: DataType;
  readonly value?: DataType;
}

export const isNestedType = (t: DataType): boolean => t.root === 'ARRAY' || t.root === 'MAP';

/** Paimon's schema JSON of a nested type: `{"type":"ARRAY","element":…}` / `{"type":"MAP","key":…,"value":…}`. */
export interface NestedTypeJson {
  type: string;
  element?: TypeJson;
  key?: TypeJson;
  value?: TypeJson;
  fields?: unknown;
}
export type TypeJson = string | NestedTypeJson;

export interface DataField {
  readonly id: number;
  readonly name: string;
  readonly type: DataType;
  readonly description?: string;
}

const MAX_LEN = 2147483647;

/**
 * Parses a Paimon type: a string such as `DECIMAL(10, 2) NOT NULL`, `ARRAY<INT>` or
 * `MAP<STRING, BIGINT> NOT NULL`, or a schema-file JSON object for a nested type. A type object's
 * unknown key is refused, named: this is for what a person wrote (a schema spec, a contract).
 */
export function parseType(text: TypeJson): DataType {
  return parseTypeOf(text, true);
}

/**
 * The same for a type read from a table's own schema file: an unknown key in a type object is
 * ignored, as Paimon's parser ignores it, so a key a newer Java adds does not make the table
 * unreadable here.
 */
export function parseStoredType(text: TypeJson): DataType {
  return parseTypeOf(text, false);
}

function parseTypeOf(text: TypeJson, strictKeys: boolean): DataType {
  if (text !== null && typeof text === 'object' && !Array.isArray(text)) return parseTypeJson(text, strictKeys);
  if (typeof text !== 'string') throw invalidArgument(`expected a type string, got ${JSON.stringify(text)}`);
  const nested = parseNestedString(text);
  if (nested) return nested;
  let s = text.trim().toUpperCase().replace(/\s+/g, ' ');
  let nullable = true;
  if (s.endsWith(' NOT NULL')) {
    nullable = false;
    s = s.slice(0, -' NOT NULL'.length).trim();
  } else if (s.endsWith(' NULL')) {
    s = s.slice(0, -' NULL'.length).trim();
  }
  const m = /^([A-Z_ ]+?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?(\s+WITH(?:OUT)? (?:LOCAL )?TIME ZONE)?$/.exec(s);
  if (!m) throw invalidArgument(`unknown type '${text}'`);
  const name = m[1]!.trim();
  const a = m[2] === undefined ? undefined : Number(m[2]);
  const b = m[3] === undefined ? undefined : Number(m[3]);
  const tz = m[4]?.trim();
  const bad = (why: string) => invalidArgument(`type '${text}': ${why}`);
  if (tz && name !== 'TIMESTAMP') throw bad('only TIMESTAMP takes a time zone clause');
  switch (name) {
    case 'BOOLEAN':
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'BIGINT':
    case 'FLOAT':
    case 'DOUBLE':
    case 'DATE':
    case 'STRING':
    case 'BYTES':
      if (a !== undefined) throw bad(`${name} takes no parameters`);
      return { root: name, nullable };
    case 'INTEGER':
      return { root: 'INT', nullable };
    case 'DECIMAL': {
      const precision = a ?? 10;
      const scale = b ?? 0;
      if (precision < 1 || precision > 38) throw bad(`precision must be 1..38, got ${precision}`);
      if (scale < 0 || scale > precision) throw bad(`scale must be 0..${precision}, got ${scale}`);
      return { root: 'DECIMAL', nullable, precision, scale };
    }
    case 'CHAR':
    case 'VARCHAR':
    case 'BINARY':
    case 'VARBINARY': {
      const length = a ?? 1;
      if (b !== undefined) throw bad(`${name} takes one parameter`);
      if (length < 1 || length > MAX_LEN) throw bad(`length must be 1..${MAX_LEN}, got ${length}`);
      if (name === 'VARCHAR' && length === MAX_LEN) return { root: 'STRING', nullable };
      if (name === 'VARBINARY' && length === MAX_LEN) return { root: 'BYTES', nullable };
      return { root: name, nullable, length };
    }
    case 'TIME': {
      const precision = a ?? 0;
      if (precision > 3) throw bad(`TIME precision above 3 is not supported, got ${precision}`);
      return { root: 'TIME', nullable, precision };
    }
    case 'TIMESTAMP': {
      const precision = a ?? 6;
      if (precision > 6) throw bad(`TIMESTAMP precision above 6 is not supported, got ${precision}`);
      const ltz = tz === 'WITH LOCAL TIME ZONE';
      if (tz && !ltz && tz !== 'WITHOUT TIME ZONE') throw bad(`unsupported time zone clause '${tz}'`);
      return { root: ltz ? 'TIMESTAMP_LTZ' : 'TIMESTAMP', nullable, precision };
    }
    case 'TIMESTAMP_LTZ': {
      const precision = a ?? 6;
      if (precision > 6) throw bad(`TIMESTAMP precision above 6 is not supported, got ${precision}`);
      return { root: 'TIMESTAMP_LTZ', nullable, precision };
    }
    case 'ROW':
    case 'MULTISET':
      throw notSupported(`type '${text}': nested ${name} columns are not supported (ARRAY and MAP are)`);
    default:
      throw invalidArgument(`unknown or unsupported type '${text}'`);
  }
}

function splitNullable(text: string): { body: string; nullable: boolean } {
  const s = text.trim();
  const m = /\s+(NOT\s+)?NULL$/i.exec(s);
  if (m && !/[<(]\s*$/.test(s.slice(0, m.index))) return { body: s.slice(0, m.index).trim(), nullable: !m[1] };
  return { body: s, nullable: true };
}

/** `ARRAY<…>` / `MAP<…, …>` (with optional NOT NULL), or undefined for anything else. */
function parseNestedString(text: string): DataType | undefined {
  const { body, nullable } = splitNullable(text);
  const m = /^(ARRAY|MAP|ROW|MULTISET)\s*</i.exec(body);
  if (!m) return undefined;
  const name = m[1]!.toUpperCase();
  if (!body.endsWith('>')) throw invalidArgument(`type '${text}': missing closing '>'`);
  const inner = body.slice(m[0].length, -1);
  if (name === 'ROW' || name === 'MULTISET') {
    throw notSupported(`type '${text}': nested ${name} columns are not supported (ARRAY and MAP are)`);
  }
  // Split at top-level commas (not inside <> or ()).
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c === '<' || c === '(') depth++;
    else if (c === '>' || c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(inner.slice(start, i));
      start = i + 1;
    }
    if (depth < 0) throw invalidArgument(`type '${text}': unbalanced brackets`);
  }
  if (depth !== 0) throw invalidArgument(`type '${text}': unbalanced brackets`);
  parts.push(inner.slice(start));
  if (name === 'ARRAY') {
    if (parts.length !== 1 || parts[0]!.trim() === '') throw invalidArgument(`type '${text}': ARRAY takes one element type`);
    return { root: 'ARRAY', nullable, element: parseType(parts[0]!) };
  }
  if (parts.length !== 2) throw invalidArgument(`type '${text}': MAP takes a key type and a value type`);
  return { root: 'MAP', nullable, key: parseType(parts[0]!), value: parseType(parts[1]!) };
}

function parseTypeJson(j: NestedTypeJson, strictKeys: boolean): DataType {
  if (typeof j.type !== 'string') throw invalidArgument(`type object without a 'type' string: ${JSON.stringify(j)}`);
  const { body, nullable } = splitNullable(j.type);
  const name = body.toUpperCase();
  if (strictKeys && (name === 'ARRAY' || name === 'MAP')) checkTypeObjectKeys(name, j);
  if (name === 'ARRAY') {
    if (j.element === undefined) throw invalidArgument(`ARRAY type object without 'element': ${JSON.stringify(j)}`);
    return { root: 'ARRAY', nullable, element: parseTypeOf(j.element, strictKeys) };
  }
  if (name === 'MAP') {
    if (j.key === undefined || j.value === undefined) throw invalidArgument(`MAP type object without 'key'/'value': ${JSON.stringify(j)}`);
    return { root: 'MAP', nullable, key: parseTypeOf(j.key, strictKeys), value: parseTypeOf(j.value, strictKeys) };
  }
  if (name === 'ROW' || name === 'MULTISET') throw notSupported(`nested ${name} columns are not supported (ARRAY and MAP are)`);
  throw invalidArgument(`unknown type object ${JSON.stringify(j)}`);
}

/** The keys Java's serializeJson writes for each type object we read (ArrayType, MapType). */
const TYPE_OBJECT_KEYS: Readonly<Record<'ARRAY' | 'MAP', readonly string[]>> = {
  ARRAY: ['type', 'element'],
  MAP: ['type', 'key', 'value'],
};

// Paimon's parser ignores keys it does not read, so a misspelt key ('elemnt') would only surface
// as the missing one; naming it is the useful error for what a person wrote. Java writes no other
// keys today; a table's own schema files are read leniently (parseStoredType).
function checkTypeObjectKeys(name: 'ARRAY' | 'MAP', j: NestedTypeJson): void {
  const allowed = TYPE_OBJECT_KEYS[name];
  for (const k of Object.keys(j)) {
    if (!allowed.includes(k)) {
      throw invalidArgument(
        `${name} type object has unknown key '${k}': expected only ${allowed.map((a) => `'${a}'`).join(', ')} (${JSON.stringify(j)})`,
      );
    }
  }
}

/** The type as Paimon's schema JSON writes it: a string, or an object for ARRAY/MAP. */
export function typeToJson(t: DataType): TypeJson {
  const suffix = t.nullable ? '' : ' NOT NULL';
  if (t.root === 'ARRAY') return { type: `ARRAY${suffix}`, element: typeToJson(t.element!) };
  if (t.root === 'MAP') return { type: `MAP${suffix}`, key: typeToJson(t.key!), value: typeToJson(t.value!) };
  return typeToString(t);
}

/** Structural equality of two types (nullability included at every level). */
export function typesEqual(a: DataType, b: DataType): boolean {
  if (a.root !== b.root || a.nullable !== b.nullable || a.precision !== b.precision || a.scale !== b.scale || a.length !== b.length) return false;
  if (a.root === 'ARRAY') return typesEqual(a.element!, b.element!);
  if (a.root === 'MAP') return typesEqual(a.key!, b.key!) && typesEqual(a.value!, b.value!);
  return true;
}

/** Prints a type as Paimon's `asSQLString` does. */
export function typeToString(t: DataType): string {
  let s: string;
  switch (t.root) {
    case 'DECIMAL':
      s = `DECIMAL(${t.precision}, ${t.scale})`;
      break;
    case 'CHAR':
    case 'VARCHAR':
    case 'BINARY':
    case 'VARBINARY':
      s = `${t.root}(${t.length})`;
      break;
    case 'TIME':
      s = `TIME(${t.precision})`;
      break;
    case 'TIMESTAMP':
      s = `TIMESTAMP(${t.precision})`;
      break;
    case 'TIMESTAMP_LTZ':
      s = `TIMESTAMP(${t.precision}) WITH LOCAL TIME ZONE`;
      break;
    case 'ARRAY':
      s = `ARRAY<${typeToString(t.element!)}>`;
      break;
    case 'MAP':
      s = `MAP<${typeToString(t.key!)}, ${typeToString(t.value!)}>`;
      break;
    default:
      s = t.root;
  }
  return t.nullable ? s : `${s} NOT NULL`;
}

export function withNullable(t: DataType, nullable: boolean): DataType {
  return t.nullable === nullable ? t : { ...t, nullable };
}

export const isStringType = (t: DataType): boolean => t.root === 'STRING' || t.root === 'VARCHAR' || t.root === 'CHAR';
export const isBinaryType = (t: DataType): boolean => t.root === 'BYTES' || t.root === 'VARBINARY' || t.root === 'BINARY';
export const isTimestampType = (t: DataType): boolean => t.root === 'TIMESTAMP' || t.root === 'TIMESTAMP_LTZ';
export const isIntegerType = (t: DataType): boolean =>
  t.root === 'TINYINT' || t.root === 'SMALLINT' || t.root === 'INT';
export const isNumericType = (t: DataType): boolean =>
  isIntegerType(t) || t.root === 'BIGINT' || t.root === 'FLOAT' || t.root === 'DOUBLE' || t.root === 'DECIMAL';

const INT_RANGE: Partial<Record<TypeRoot, [number, number]>> = {
  TINYINT: [-128, 127],
  SMALLINT: [-32768, 32767],
  INT: [-2147483648, 2147483647],
  DATE: [-2147483648, 2147483647],
  TIME: [0, 86_399_999],
};
const BIGINT_MIN = -(2n ** 63n);
const BIGINT_MAX = 2n ** 63n - 1n;

// ES2024's String.prototype.isWellFormed (Node 20 has it; the project's lib is ES2023).
const isWellFormed = (String.prototype as unknown as { isWellFormed(this: string): boolean }).isWellFormed;

/** True when `s` has UTF-8 bytes: no lone surrogate (the files' encoders would write U+FFFD for one). */
export const isWellFormedString = (s: string): boolean => isWellFormed.call(s);

/**
 * The writers' check after `checkValue` (REQUIRES: it accepted `v`): a string the files cannot
 * hold as it is, anywhere in the value. One with a lone surrogate would read back as U+FFFD, and
 * two keys differing only there would be one key on disk. Returns an error message or undefined.
 */
export function loneSurrogateIn(t: DataType, v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  switch (t.root) {
    case 'CHAR':
    case 'VARCHAR':
    case 'STRING': {
      const s = v as string;
      if (isWellFormedString(s)) return undefined;
      const at = s.search(/\p{Cs}/u);
      return `not valid Unicode: a lone surrogate at index ${at} (U+${s.charCodeAt(at).toString(16).toUpperCase()})`;
    }
    case 'ARRAY': {
      const a = v as unknown[];
      for (let i = 0; i < a.length; i++) {
        const p = loneSurrogateIn(t.element!, a[i]);
        if (p) return `element ${i}: ${p}`;
      }
      return undefined;
    }
    case 'MAP':
      for (const [k, x] of v as Map<unknown, unknown>) {
        const p = loneSurrogateIn(t.key!, k);
        if (p) return `map key: ${p}`;
        const px = loneSurrogateIn(t.value!, x);
        if (px) return `value of map key ${describeValue(k)}: ${px}`;
      }
      return undefined;
    default:
      return undefined;
  }
}

/**
 * Whether `s` has at most `max` characters as Paimon counts them (BinaryString.numChars: one per
 * UTF-8 sequence, so one per code point): a surrogate pair (😀) is one character, where
 * `s.length` counts two UTF-16 units; a lone surrogate is one (U+FFFD in UTF-8). Only a string
 * with between `max` and `2 * max` units is counted.
 */
export function fitsChars(s: string, max: number): boolean {
  const n = s.length;
  if (n <= max) return true;
  if (n > 2 * max) return false;
  let chars = n;
  for (let i = 0; i < n - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        chars--;
        i++;
      }
    }
  }
  return chars <= max;
}

/**
 * Checks that `v` is a valid in-memory value of `t`; returns an error message or undefined.
 * Used at every boundary where values enter the store.
 */
export function checkValue(t: DataType, v: unknown): string | undefined {
  if (v === null || v === undefined) return t.nullable ? undefined : 'must not be null';
  switch (t.root) {
    case 'BOOLEAN':
      return typeof v === 'boolean' ? undefined : `expected a boolean, got ${describeValue(v)}`;
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME': {
      const [lo, hi] = INT_RANGE[t.root]!;
      return typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi
        ? undefined
        : `expected an integer in ${lo}..${hi}, got ${describeValue(v)}`;
    }
    case 'BIGINT':
      return typeof v === 'bigint' && v >= BIGINT_MIN && v <= BIGINT_MAX
        ? undefined
        : `expected a 64-bit bigint, got ${describeValue(v)}`;
    case 'FLOAT':
    case 'DOUBLE':
      return typeof v === 'number' ? undefined : `expected a number, got ${describeValue(v)}`;
    case 'DECIMAL': {
      if (typeof v !== 'bigint') return `expected an unscaled bigint, got ${describeValue(v)}`;
      const limit = 10n ** BigInt(t.precision!);
      return v < limit && v > -limit ? undefined : `value does not fit ${typeToString(t)}`;
    }
    case 'CHAR':
    case 'VARCHAR':
      if (typeof v !== 'string') return `expected a string, got ${describeValue(v)}`;
      return fitsChars(v, t.length!) ? undefined : `string longer than ${t.length} characters`;
    case 'STRING':
      return typeof v === 'string' ? undefined : `expected a string, got ${describeValue(v)}`;
    case 'BINARY':
    case 'VARBINARY':
      if (!(v instanceof Uint8Array)) return `expected bytes, got ${describeValue(v)}`;
      return v.length <= t.length! ? undefined : `bytes longer than ${t.length}`;
    case 'BYTES':
      return v instanceof Uint8Array ? undefined : `expected bytes, got ${describeValue(v)}`;
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) return `expected epoch microseconds, got ${describeValue(v)}`;
      return t.precision! <= 3 && v % 1000 !== 0 ? `TIMESTAMP(${t.precision}) holds whole milliseconds` : undefined;
    case 'ARRAY': {
      if (!Array.isArray(v)) return `expected an array, got ${describeValue(v)}`;
      for (let i = 0; i < v.length; i++) {
        const p = checkValue(t.element!, v[i]);
        if (p) return `element ${i}: ${p}`;
      }
      return undefined;
    }
    case 'MAP': {
      if (!(v instanceof Map)) return `expected a Map, got ${describeValue(v)}`;
      const seen = new Set<string>();
      for (const [k, x] of v) {
        if (k === null || k === undefined) return 'a map key must not be null';
        const pk = checkValue(withNullable(t.key!, false), k);
        if (pk) return `map key: ${pk}`;
        const id = mapKeyId(k);
        if (seen.has(id)) return `duplicate map key ${describeValue(k)}`;
        seen.add(id);
        const pv = checkValue(t.value!, x);
        if (pv) return `value of map key ${describeValue(k)}: ${pv}`;
      }
      return undefined;
    }
  }
}

/**
 * A string identifying a map key by value (Uint8Array keys by their bytes), for de-duplication
 * and lookups where JS `Map` identity would not do.
 */
export function mapKeyId(k: unknown): string {
  if (k instanceof Uint8Array) return `b:${Buffer.from(k).toString('hex')}`;
  if (typeof k === 'number' && Object.is(k, -0)) return 'n:-0';
  return `${typeof k}:${String(k)}`;
}

/** A value as a message shows it: its kind and, when short, the value. */
export function describeValue(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return `${v.length} bytes`;
  if (typeof v === 'object') return Array.isArray(v) ? 'an array' : v instanceof Map ? 'a Map' : 'an object';
  return `${typeof v} ${String(v)}`;
}

// ---------------------------------------------------------------------------------------------
// Comparison. One comparator for keys, sequence fields and statistics, everywhere.
// Numbers numerically, strings and bytes by unsigned UTF-8 bytes, false < true, null first.
// FLOAT/DOUBLE as Java's Double.compare (-0.0 < 0.0, NaN greatest).

export type Comparator = (a: unknown, b: unknown) => number;

export function compareValues(t: DataType, a: unknown, b: unknown): number {
  return comparatorFor(t)(a, b);
}

const cmpNum = (a: unknown, b: unknown): number => ((a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0);
const cmpBig = (a: unknown, b: unknown): number => ((a as bigint) < (b as bigint) ? -1 : (a as bigint) > (b as bigint) ? 1 : 0);
const cmpBool = (a: unknown, b: unknown): number => (a === b ? 0 : a ? 1 : -1);
function cmpDouble(a: unknown, b: unknown): number {
  const x = a as number;
  const y = b as number;
  if (x < y) return -1;
  if (x > y) return 1;
  if (x === y) {
    if (x !== 0) return 0;
    const nx = Object.is(x, -0);
    const ny = Object.is(y, -0);
    return nx === ny ? 0 : nx ? -1 : 1;
  }
  const xn = Number.isNaN(x);
  const yn = Number.isNaN(y);
  return xn === yn ? 0 : xn ? 1 : -1;
}
/** JS strings compare by UTF-16 code units; this compares by code point, which equals UTF-8 byte order. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      // Surrogates (0xD800–0xDFFF) encode code points above 0xFFFF and sort after 0xE000–0xFFFF in UTF-8.
      const sx = x >= 0xd800 && x <= 0xdfff;
      const sy = y >= 0xd800 && y <= 0xdfff;
      if (sx !== sy) return sx ? 1 : -1;
      return x < y ? -1 : 1;
    }
  }
  return a.length - b.length < 0 ? -1 : a.length === b.length ? 0 : 1;
}
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

function baseComparator(t: DataType): Comparator {
  switch (t.root) {
    case 'BOOLEAN':
      return cmpBool;
    case 'BIGINT':
    case 'DECIMAL':
      return cmpBig;
    case 'FLOAT':
    case 'DOUBLE':
      return cmpDouble;
    case 'CHAR':
    case 'VARCHAR':
    case 'STRING':
      return (a, b) => compareStrings(a as string, b as string);
    case 'BINARY':
    case 'VARBINARY':
    case 'BYTES':
      return (a, b) => compareBytes(a as Uint8Array, b as Uint8Array);
    case 'ARRAY':
    case 'MAP':
      throw notSupported(`values of type ${typeToString(t)} have no order: they cannot be keys, partitions, sequence fields, min/max inputs or predicate columns`);
    default:
      return cmpNum;
  }
}

/** A comparator for values of `t`, nulls first. Throws NotSupported for ARRAY and MAP. */
export function comparatorFor(t: DataType): Comparator {
  const base = baseComparator(t);
  if (!t.nullable) return base;
  return (a, b) => {
    if (a === null || a === undefined) return b === null || b === undefined ? 0 : -1;
    if (b === null || b === undefined) return 1;
    return base(a, b);
  };
}

/** True when two in-memory values of one type are equal (bytes by content). */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return compareBytes(a, b) === 0;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i])) return false;
    return true;
  }
  if (a instanceof Map && b instanceof Map) {
    if (a.size !== b.size) return false;
    const other = new Map<string, unknown>();
    for (const [k, v] of b) other.set(mapKeyId(k), v);
    for (const [k, v] of a) {
      const id = mapKeyId(k);
      if (!other.has(id) || !valuesEqual(v, other.get(id))) return false;
    }
    return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// JSON conversion.

const DAY_MS = 86_400_000;

export function decimalToString(unscaled: bigint, scale: number): string {
  if (scale === 0) return unscaled.toString();
  const neg = unscaled < 0n;
  const digits = (neg ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  return `${neg ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/**
 * Text of a decimal in exponent notation (`1e-8`, `1.5E+21`: how a JSON number prints below 1e-6
 * and from 1e21 on) as plain digits (`0.00000001`), else the text as it is.
 */
function withoutExponent(text: string): string {
  const m = /^\s*([+-]?)(\d+)(?:\.(\d*))?[eE]([+-]?\d{1,4})\s*$/.exec(text);
  if (!m) return text;
  const digits = m[2]! + (m[3] ?? '');
  const point = m[2]!.length + Number(m[4]);
  if (point <= 0) return `${m[1]}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${m[1]}${digits}${'0'.repeat(point - digits.length)}`;
  return `${m[1]}${digits.slice(0, point)}.${digits.slice(point)}`;
}

export function decimalFromString(input: string, t: DataType): bigint {
  const text = withoutExponent(input);
  const m = /^\s*([+-])?(\d*)(?:\.(\d*))?\s*$/.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw invalidArgument(`expected a decimal, got ${JSON.stringify(input)}`);
  const scale = t.scale!;
  const frac = m[3] ?? '';
  if (frac.length > scale && /[1-9]/.test(frac.slice(scale))) {
    throw invalidArgument(`${JSON.stringify(input)} has more than ${scale} decimal places`);
  }
  const v = BigInt((m[2] || '0') + frac.slice(0, scale).padEnd(scale, '0'));
  return m[1] === '-' ? -v : v;
}

/**
 * Epoch milliseconds of a proleptic-Gregorian UTC date and time (month 1–12; out-of-range parts roll
 * over, as Date's do). Not `Date.UTC`: it reads years 0–99 as 1900–1999, so .NET's
 * `DateTime.MinValue` (0001-01-01), a common "no date", became 1901-01-01.
 */
export function utcMs(year: number, month: number, day: number, hours = 0, minutes = 0, seconds = 0): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  if (hours !== 0 || minutes !== 0 || seconds !== 0) d.setUTCHours(hours, minutes, seconds);
  return d.getTime();
}

/** yyyy-mm-dd of a Date in UTC; a year outside 0–9999 as -0001 or 10000 (what `dateFromString` reads; toISOString writes ±00yyyy). */
function isoDate(d: Date): string {
  const y = d.getUTCFullYear();
  const year = y < 0 ? `-${String(-y).padStart(4, '0')}` : String(y).padStart(4, '0');
  return `${year}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-${String(d.getUTCDate()).padStart(2, '0')}`;
}

function dateFromString(text: string): number {
  const m = /^(-?\d{4,})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) throw invalidArgument(`expected a date yyyy-mm-dd, got ${JSON.stringify(text)}`);
  const month = Number(m[2]);
  const ms = utcMs(Number(m[1]), month, Number(m[3]));
  const d = new Date(ms);
  if (month < 1 || month > 12 || d.getUTCDate() !== Number(m[3])) throw invalidArgument(`no such date ${text}`);
  return Math.round(ms / DAY_MS);
}

const TIMESTAMP_TEXT = /^(-?\d{4,}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/;
const POW10 = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000];

/**
 * Parses ISO-8601 text to epoch microseconds; a missing zone means UTC. Reads it as Java does
 * (DESIGN.md, "Values and types"):
 * - the fraction cut to `precision` digits (at most 6), never rounded: Paimon's cast
 *   (DateTimeUtils.fromTemporalAccessor) floors the nanos to the precision;
 * - a leap second, 23:59:60 in the text's own clock: second 59, the fraction kept (java.time's
 *   Instant.parse; Paimon's types have no leap second). A second 60 at another minute is refused;
 * - T24:00 (seconds and fraction zero), ISO-8601's end of a day: the next day's 00:00.
 */
export function timestampFromString(text: string, precision = 6): number {
  const m = TIMESTAMP_TEXT.exec(text.trim());
  if (!m) throw invalidArgument(`expected an ISO-8601 timestamp, got ${JSON.stringify(text)}`);
  const days = dateFromString(m[1]!);
  const h = Number(m[2]);
  const mi = Number(m[3]);
  let s = m[4] === undefined ? 0 : Number(m[4]);
  const frac = m[5];
  if (h > 23 || mi > 59 || s > 59) {
    if (h === 23 && mi === 59 && s === 60) s = 59;
    else if (!(h === 24 && mi === 0 && s === 0 && (frac === undefined || !/[1-9]/.test(frac)))) throw invalidArgument(`no such time in ${text}`);
  }
  const secs = h * 3600 + mi * 60 + s;
  let micros = frac === undefined ? 0 : Number(frac.length >= 6 ? frac.slice(0, 6) : frac.padEnd(6, '0'));
  if (precision < 6 && micros !== 0) micros -= micros % POW10[6 - precision]!;
  let offsetMin = 0;
  if (m[6] && m[6] !== 'Z') {
    const z = m[6].replace(':', '');
    const hours = Number(z.slice(1, 3));
    const minutes = Number(z.slice(3, 5));
    // ISO-8601 offsets as Java's ZoneOffset takes them (±18:00 at most): +99:99 shifted the value by four days.
    if (minutes > 59 || hours * 60 + minutes > 18 * 60) throw invalidArgument(`no such zone offset in ${text} (expected from -18:00 to +18:00)`);
    offsetMin = (z[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  const v = (days * 86_400 + secs - offsetMin * 60) * 1_000_000 + micros;
  // Microseconds since 1970 are held as a double: exact within ±2^53 only.
  if (!Number.isSafeInteger(v)) throw invalidArgument(`${text} is outside the timestamps this store holds (1684-07-28T00:12:26 to 2255-06-05T23:47:34 UTC)`);
  return v;
}

/**
 * Epoch microseconds cut to a TIMESTAMP(p)'s digits: the wall clock's fraction cut, never
 * rounded (before 1970 too: -0.5 s is -1 s in a TIMESTAMP(0)). REQUIRES: a safe integer.
 */
export function cutMicros(micros: number, precision: number): number {
  if (precision >= 6) return micros;
  const unit = POW10[6 - precision]!;
  const r = micros % unit;
  return r === 0 ? micros : micros - (r < 0 ? r + unit : r);
}

export function timestampToString(micros: number, precision: number, utcSuffix: boolean): string {
  const secs = Math.floor(micros / 1_000_000);
  const fraction = micros - secs * 1_000_000; // 0 ≤ fraction < 1e6, also before 1970
  const d = new Date(secs * 1000);
  const base = `${isoDate(d)}T${d.toISOString().slice(11, 19)}`;
  const frac = precision <= 0 ? '' : `.${String(fraction).padStart(6, '0').slice(0, precision)}`;
  return `${base}${frac}${utcSuffix ? 'Z' : ''}`;
}

function timeToString(ms: number, precision: number): string {
  const h = Math.floor(ms / 3_600_000);
  const mi = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  const base = `${String(h).padStart(2, '0')}:${String(mi).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
  return precision > 0 ? `${base}.${String(ms % 1000).padStart(3, '0').slice(0, precision)}` : base;
}

/**
 * Parses hh:mm[:ss[.fraction]] to milliseconds of the day, as Paimon's cast (DateTimeUtils.parseTime)
 * reads it: milliseconds whatever the TIME's precision, a fourth fraction digit rounding half up
 * (parseFraction), up to 9 digits. A leap second, 23:59:60, is 23:59:59 with its fraction (as for
 * a TIMESTAMP). A value that rounds past 23:59:59.999 is refused (Paimon's cast would make
 * 24:00:00, no TIME value).
 */
function timeFromString(text: string): number {
  const m = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/.exec(text);
  if (!m) throw invalidArgument(`expected a time hh:mm:ss, got ${JSON.stringify(text)}`);
  const h = Number(m[1]);
  const mi = Number(m[2]);
  let s = m[3] === undefined ? 0 : Number(m[3]);
  if (h > 23 || mi > 59 || s > 59) {
    if (h === 23 && mi === 59 && s === 60) s = 59;
    else throw invalidArgument(`no such time ${text}`);
  }
  const frac = m[4];
  let ms = ((h * 60 + mi) * 60 + s) * 1000;
  if (frac !== undefined) {
    ms += Number(frac.length >= 3 ? frac.slice(0, 3) : frac.padEnd(3, '0'));
    if (frac.length > 3 && frac.charCodeAt(3) >= 53 /* '5' */) ms++;
    if (ms > 86_399_999) throw invalidArgument(`${text} rounds to milliseconds past 23:59:59.999, the last TIME of a day`);
  }
  return ms;
}

/** Converts an in-memory value to its JSON form. */
export function valueToJson(t: DataType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (t.root) {
    case 'BIGINT': {
      const b = v as bigint;
      return b <= BigInt(Number.MAX_SAFE_INTEGER) && b >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(b) : b.toString();
    }
    case 'DECIMAL':
      return decimalToString(v as bigint, t.scale!);
    case 'BINARY':
    case 'VARBINARY':
    case 'BYTES':
      return Buffer.from(v as Uint8Array).toString('base64');
    case 'DATE':
      return isoDate(new Date((v as number) * DAY_MS));
    case 'TIME':
      return timeToString(v as number, t.precision!);
    case 'TIMESTAMP':
      return timestampToString(v as number, t.precision!, false);
    case 'TIMESTAMP_LTZ':
      return timestampToString(v as number, t.precision!, true);
    case 'FLOAT':
    case 'DOUBLE': {
      const n = v as number;
      return Number.isFinite(n) ? n : String(n);
    }
    case 'ARRAY':
      return (v as unknown[]).map((e) => valueToJson(t.element!, e));
    case 'MAP': {
      const m = v as Map<unknown, unknown>;
      if (isStringType(t.key!)) {
        const o: Record<string, unknown> = {};
        for (const [k, x] of m) o[k as string] = valueToJson(t.value!, x);
        return o;
      }
      return [...m].map(([k, x]) => [valueToJson(t.key!, k), valueToJson(t.value!, x)]);
    }
    default:
      return v;
  }
}

/** Converts a JSON value (or a natural JS value) to the in-memory value of `t`, checking it. */
/** An InvalidArgument naming the column and its type (module level: valueFromJson is hot). */
function columnError(t: DataType, column: string, why: string): Error {
  return invalidArgument(`column '${column}' (${typeToString(t)}): ${why}`);
}

/** A map key as the input gave it, for messages (JSON text; a bigint of a Map input as digits). */
function givenKeyText(k: unknown): string {
  return typeof k === 'bigint' ? String(k) : (JSON.stringify(k) ?? String(k));
}

function parseNamed(t: DataType, column: string, parse: () => number): number {
  try {
    return parse();
  } catch (e) {
    throw columnError(t, column, (e as Error).message);
  }
}

export function valueFromJson(t: DataType, j: unknown, column = 'value'): unknown {
  if (j === null || j === undefined) {
    if (!t.nullable) throw invalidArgument(`column '${column}' must not be null`);
    return null;
  }
  let v: unknown = j;
  switch (t.root) {
    case 'BIGINT':
      if (typeof j === 'number') {
        if (!Number.isSafeInteger(j)) throw columnError(t, column, `expected an integer, got ${j}`);
        v = BigInt(j);
      } else if (typeof j === 'string' && /^-?\d+$/.test(j.trim())) v = BigInt(j.trim());
      break;
    case 'DECIMAL':
      if (typeof j === 'string' || typeof j === 'number') {
        try {
          v = decimalFromString(String(j), t);
        } catch (e) {
          throw columnError(t, column, (e as Error).message);
        }
      }
      break;
    case 'BINARY':
    case 'VARBINARY':
    case 'BYTES':
      if (typeof j === 'string') {
        // Whole groups of four (padded), or an unpadded tail of two or three characters: 'A' or 'A='
        // (no whole byte) decoded to nothing, and 'AA=' to one byte.
        const padded = j.endsWith('=');
        if (!/^[A-Za-z0-9+/]*={0,2}$/.test(j) || j.length % 4 === 1 || (padded && j.length % 4 !== 0)) throw columnError(t, column, 'expected base64 text');
        v = new Uint8Array(Buffer.from(j, 'base64'));
      }
      break;
    case 'DATE':
      if (typeof j === 'string') v = parseNamed(t, column, () => dateFromString(j));
      break;
    case 'TIME':
      if (typeof j === 'string') v = parseNamed(t, column, () => timeFromString(j));
      break;
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      // Text is cut to the precision as it is read; a number of µs (a binding's ts_ms × 1000) or a
      // Date is cut here: a TIMESTAMP(0) holds whole seconds, as Paimon's cast makes them.
      if (typeof j === 'string') v = parseNamed(t, column, () => timestampFromString(j, t.precision!));
      else {
        if (j instanceof Date) v = j.getTime() * 1000;
        if (t.precision! < 6 && Number.isSafeInteger(v)) v = cutMicros(v as number, t.precision!);
      }
      break;
    case 'FLOAT':
    case 'DOUBLE':
      if (j === 'NaN' || j === 'Infinity' || j === '-Infinity') v = Number(j);
      break;
    case 'ARRAY':
      if (Array.isArray(j)) v = j.map((e, i) => valueFromJson(t.element!, e, `${column}[${i}]`));
      break;
    case 'MAP': {
      let pairs: Array<[unknown, unknown]> | undefined;
      if (j instanceof Map) pairs = [...j];
      else if (Array.isArray(j)) {
        if (!j.every((p) => Array.isArray(p) && p.length === 2)) throw columnError(t, column, 'expected an object, a Map or an array of [key, value] pairs');
        pairs = j as Array<[unknown, unknown]>;
      } else if (typeof j === 'object' && !(j instanceof Uint8Array)) {
        if (!isStringType(t.key!)) throw columnError(t, column, `a JSON object is a map with string keys; give MAP<${typeToString(t.key!)}, …> as an array of [key, value] pairs`);
        pairs = Object.entries(j as Record<string, unknown>);
      }
      if (pairs) {
        const keyType = withNullable(t.key!, false);
        const m = new Map<unknown, unknown>();
        for (let i = 0; i < pairs.length; i++) {
          const [k, x] = pairs[i]!;
          const key = valueFromJson(keyType, k, `${column} key`);
          // A Map keeps the last value of a repeated key and says nothing ([["k",1],["k",2]] was
          // {k: 2}); the Map being built finds it without another allocation. Uint8Array keys are
          // told apart by identity here: checkValue below refuses two with the same bytes.
          if (m.has(key)) throw columnError(t, column, `key ${givenKeyText(k)} is given twice; expected each key once`);
          m.set(key, valueFromJson(t.value!, x, `${column}[${givenKeyText(k)}]`));
        }
        v = m;
      }
      break;
    }
  }
  const problem = checkValue(t, v);
  if (problem) throw columnError(t, column, problem);
  return v;
}
