// Partition directory names (paimon-format.md §1, `utils/PartitionPathUtils.java`) and the name
// rules for databases, tables, tags and columns.
//
// With Paimon's default `partition.legacy-name=true` a partition value is rendered as the Java
// `toString()` of its *internal* value: DATE as its day number, TIME as milliseconds of the day,
// TIMESTAMP as `LocalDateTime.toString()`, DECIMAL as `BigDecimal.toPlainString()`, FLOAT/DOUBLE as
// `Float/Double.toString()`. With `partition.legacy-name=false` (a table Java made; this store
// does not create one) a value is cast to STRING instead, which differs only for DATE
// (`2024-05-01`), TIME (`10:15:00`), TIMESTAMP (`2024-05-01 10:15:00.000000`, escaped `%3A`) and
// TIMESTAMP_LTZ (`castText`). Null, empty and blank values become the default partition name.
// Invariants: readers recompute this text from `_PARTITION`, so it must match Java byte for byte;
// the result has no trailing `/` (Java's `generatePartitionPath` appends one), and is '' for an
// unpartitioned table. Binary partition columns are refused (Java would print `[B@hash`).

import { invalidArgument, notSupported } from './errors.ts';
import { decimalFromString, decimalToString, utcMs, type DataField, type DataType } from './types.ts';

export const DEFAULT_PARTITION_NAME = '__DEFAULT_PARTITION__';

const ESCAPED = new Set<number>([
  ...Array.from({ length: 0x20 }, (_, i) => i), // every char below ' ', NUL included (Java's CHAR_TO_ESCAPE)
  0x22, 0x23, 0x25, 0x27, 0x2a, 0x2f, 0x3a, 0x3d, 0x3f, 0x5c, 0x7f, 0x7b, 0x7d, 0x5b, 0x5d, 0x5e,
]);

/** `PartitionPathUtils.escapePathName`: `%XX` (uppercase hex) for the reserved ASCII characters. */
export function escapePathName(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out += ESCAPED.has(c) ? `%${c.toString(16).toUpperCase().padStart(2, '0')}` : text[i];
  }
  return out;
}

export function unescapePathName(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** Java `Double.toString` / `Float.toString` for finite and special values (shortest digits). */
export function javaFloatingToString(x: number, isFloat: boolean): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  let digits = '';
  let exp = 0; // value = 0.d1d2… × 10^exp
  let repr = String(x);
  if (isFloat) {
    for (let p = 1; p <= 9; p++) {
      const s = x.toPrecision(p);
      if (Math.fround(Number(s)) === x) {
        repr = String(Number(s));
        break;
      }
    }
  }
  const neg = repr.startsWith('-');
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(neg ? repr.slice(1) : repr)!;
  const intPart = m[1]!;
  const frac = m[2] ?? '';
  digits = (intPart + frac).replace(/^0+/, '');
  const leadingZeros = (intPart + frac).length - digits.length;
  exp = intPart.length - leadingZeros + Number(m[3] ?? 0);
  digits = digits.replace(/0+$/, '') || '0';
  const abs = Math.abs(x);
  let s: string;
  if (abs >= 1e-3 && abs < 1e7) {
    if (exp <= 0) s = `0.${'0'.repeat(-exp)}${digits}`;
    else if (digits.length <= exp) s = `${digits}${'0'.repeat(exp - digits.length)}.0`;
    else s = `${digits.slice(0, exp)}.${digits.slice(exp)}`;
  } else {
    s = `${digits[0]}.${digits.slice(1) || '0'}E${exp - 1}`;
  }
  return neg ? `-${s}` : s;
}

/** Java `LocalDateTime.toString()` of epoch microseconds (UTC wall clock). */
export function localDateTimeToString(micros: number): string {
  const secs = Math.floor(micros / 1_000_000);
  const frac = micros - secs * 1_000_000;
  const iso = new Date(secs * 1000).toISOString(); // yyyy-mm-ddThh:mm:ss.000Z
  let s = iso.slice(0, 16);
  const sec = iso.slice(17, 19);
  if (sec !== '00' || frac !== 0) s += `:${sec}`;
  if (frac !== 0) s += frac % 1000 === 0 ? `.${String(frac / 1000).padStart(3, '0')}` : `.${String(frac).padStart(6, '0')}`;
  return s;
}

/** Java's `int4`/`int2` of DateTimeUtils: digits by truncating division, as Java computes them (a year beyond 0..9999 prints as Java prints it). */
function digits(n: number, width: number): string {
  let out = '';
  for (let d = 10 ** (width - 1); d >= 1; d /= 10) out += String.fromCharCode(48 + (Math.trunc(n / d) % 10));
  return out;
}

/** `DateTimeUtils.formatDate` (a cast of DATE to STRING): `yyyy-MM-dd` of a day number, by its Julian-day arithmetic. */
export function castDateToString(days: number): string {
  const j = days + 2440588 + 32044; // EPOCH_JULIAN + the shift to March 1, 4801 BC
  const g = Math.trunc(j / 146097);
  const dg = j % 146097;
  const c = Math.trunc((Math.trunc(dg / 36524) + 1) * 3 / 4);
  const dc = dg - c * 36524;
  const b = Math.trunc(dc / 1461);
  const db = dc % 1461;
  const a = Math.trunc((Math.trunc(db / 365) + 1) * 3 / 4);
  const da = db - a * 365;
  const y = g * 400 + c * 100 + b * 4 + a;
  const m = Math.trunc((da * 5 + 308) / 153) - 2;
  const d = da - Math.trunc((m + 4) * 153 / 5) + 122;
  return `${digits(y - 4800 + Math.trunc((m + 2) / 12), 4)}-${digits(((m + 2) % 12) + 1, 2)}-${digits(d + 1, 2)}`;
}

/** `DateTimeUtils.formatTimestampMillis(time, precision)` (a cast of TIME(p) to STRING): `HH:mm:ss[.f]`, the fraction cut at its last non-zero digit. */
export function castTimeToString(millis: number, precision: number): string {
  let time = millis;
  while (time < 0) time += 86_400_000;
  const h = Math.trunc(time / 3_600_000);
  const t2 = time % 3_600_000;
  let ms = (t2 % 60_000) % 1000;
  let out = `${digits(h, 2)}:${digits(Math.trunc(t2 / 60_000), 2)}:${digits(Math.trunc((t2 % 60_000) / 1000), 2)}`;
  if (precision > 0) {
    out += '.';
    for (let p = precision; p > 0; p--) {
      out += String.fromCharCode(48 + Math.trunc(ms / 100));
      ms = (ms % 100) * 10;
      if (ms === 0) break; // "keep consistent with Timestamp.toString()" in Java
    }
  }
  return out;
}

/**
 * `DateTimeUtils.formatTimestamp(ts, precision)` (a cast of TIMESTAMP(p) to STRING) of epoch
 * microseconds read as a wall clock: `yyyy-MM-dd HH:mm:ss[.f]`, the 9-digit nanosecond fraction
 * stripped of trailing zeros down to `precision` digits (so TIMESTAMP(3) keeps `.000`).
 */
export function castTimestampToString(micros: number, precision: number): string {
  const secs = Math.floor(micros / 1_000_000);
  const nanos = (micros - secs * 1_000_000) * 1000;
  const days = Math.floor(secs / 86_400);
  const sod = secs - days * 86_400;
  let fraction = String(nanos).padStart(9, '0');
  while (fraction.length > precision && fraction.endsWith('0')) fraction = fraction.slice(0, -1);
  const hms = `${digits(Math.trunc(sod / 3600), 2)}:${digits(Math.trunc((sod % 3600) / 60), 2)}:${digits(sod % 60, 2)}`;
  return `${castDateToString(days)} ${hms}${fraction.length > 0 ? `.${fraction}` : ''}`;
}

/**
 * A TIMESTAMP_LTZ cast to STRING: Java renders the instant in the JVM's default zone
 * (TimestampToStringCastRule: `TimeZone.getDefault()`); the nearest equivalent here is this
 * process's local zone, the same on the machine that wrote it.
 */
function castLtzToString(micros: number, precision: number): string {
  const offsetMin = -new Date(Math.floor(micros / 1000)).getTimezoneOffset();
  return castTimestampToString(micros + offsetMin * 60_000_000, precision);
}

/**
 * A partition value as Paimon names it with `partition.legacy-name` = false: a cast to STRING
 * (InternalRowPartitionComputer.generatePartValues). Only DATE, TIME, TIMESTAMP and
 * TIMESTAMP_LTZ differ from the legacy `toString()` (numbers, booleans and strings cast to what
 * they print; binary partitions are refused either way).
 */
function castText(t: DataType, v: unknown): string | null {
  switch (t.root) {
    case 'DATE':
      return castDateToString(v as number);
    case 'TIME':
      return castTimeToString(v as number, t.precision ?? 0);
    case 'TIMESTAMP':
      return castTimestampToString(v as number, t.precision ?? 6);
    case 'TIMESTAMP_LTZ':
      return castLtzToString(v as number, t.precision ?? 6);
    default:
      return valueText(t, v);
  }
}

/** Java's `toString()` of a partition value's internal form (null for null): what Paimon's partition expiration reads. */
export function partitionValueText(t: DataType, v: unknown): string | null {
  return valueText(t, v);
}

function valueText(t: DataType, v: unknown): string | null {
  if (v === null || v === undefined) return null;
  switch (t.root) {
    case 'BINARY':
    case 'VARBINARY':
    case 'BYTES':
      throw notSupported(`binary partition columns are not supported`);
    case 'DECIMAL':
      return decimalToString(v as bigint, t.scale!);
    case 'FLOAT':
    case 'DOUBLE':
      return javaFloatingToString(v as number, t.root === 'FLOAT');
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return localDateTimeToString(v as number);
    default:
      return String(v); // strings, booleans, integers, bigints, DATE days, TIME millis
  }
}

/**
 * Java's `StringUtils.isNullOrWhitespaceOnly` for a non-null text: empty, or every char
 * `Character.isWhitespace` — a space separator (Zs, Zl, Zp) other than the no-break spaces
 * U+00A0, U+2007, U+202F, or one of \t \n \u000B \f \r \u001C–\u001F. Not JS `trim()`, which
 * also strips the no-break spaces and U+FEFF and keeps U+001C–U+001F: a value of those would name
 * another directory than Java's.
 */
function javaBlank(text: string): boolean {
  return /^(?:(?![\u00a0\u2007\u202f])[\p{Zs}\p{Zl}\p{Zp}]|[\t\n\u000b\f\r\u001c-\u001f])*$/u.test(text);
}

/**
 * A map key for a row's partition values, one-to-one: a null and the string 'null', 0 and -0 (a
 * DOUBLE partition Java names '-0.0'), 'a\u0000b' and two values 'a', 'b' all differ. Writers
 * cache a partition's bytes and path by it instead of encoding every row's values.
 */
export function partitionCacheKey(values: readonly unknown[]): string {
  let key = '';
  for (const v of values) {
    if (v === null || v === undefined) key += 'N;';
    else if (typeof v === 'string') key += `s${v.length}:${v};`;
    else if (typeof v === 'number') key += Object.is(v, -0) ? 'n-0;' : `n${v};`;
    else if (typeof v === 'bigint') key += `i${v};`;
    else if (typeof v === 'boolean') key += v ? 'T;' : 'F;';
    else if (v instanceof Uint8Array) key += `b${Buffer.from(v).toString('hex')};`;
    else {
      const text = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
      key += `o${text.length}:${text};`;
    }
  }
  return key;
}

/**
 * `k1=v1/k2=v2` for the partition values (in `partitionKeys` order), '' when unpartitioned.
 * `legacy` false: the values named as `partition.legacy-name` = false names them (`castText`).
 */
export function partitionPath(fields: readonly DataField[], values: readonly unknown[], defaultName = DEFAULT_PARTITION_NAME, legacy = true): string {
  if (fields.length !== values.length) throw invalidArgument(`${values.length} partition values for ${fields.length} partition fields`);
  const parts: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const v = values[i];
    let text = legacy || v === null || v === undefined ? valueText(fields[i]!.type, v) : castText(fields[i]!.type, v);
    if (text === null || javaBlank(text)) text = defaultName;
    parts.push(`${escapePathName(fields[i]!.name)}=${escapePathName(text)}`);
  }
  return parts.join('/');
}

function parseLocalDateTime(text: string): number {
  const m = /^(-?\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/.exec(text);
  if (!m) throw invalidArgument(`'${text}' is not a LocalDateTime`);
  const ms = utcMs(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0));
  return ms * 1000 + Number((m[7] ?? '').padEnd(9, '0').slice(0, 6));
}

function parseValue(t: DataType, text: string): unknown {
  const bad = () => invalidArgument(`partition value '${text}' is not a ${t.root}`);
  switch (t.root) {
    case 'BOOLEAN':
      if (text !== 'true' && text !== 'false') throw bad();
      return text === 'true';
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME':
      if (!/^-?\d+$/.test(text)) throw bad();
      return Number(text);
    case 'BIGINT':
      if (!/^-?\d+$/.test(text)) throw bad();
      return BigInt(text);
    case 'FLOAT':
    case 'DOUBLE': {
      const n = Number(text);
      if (Number.isNaN(n) && text !== 'NaN') throw bad();
      return t.root === 'FLOAT' ? Math.fround(n) : n;
    }
    case 'DECIMAL':
      return decimalFromString(text, t);
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return parseLocalDateTime(text);
    case 'BINARY':
    case 'VARBINARY':
    case 'BYTES':
      throw notSupported(`binary partition columns are not supported`);
    default:
      return text;
  }
}

/**
 * The reverse of `partitionPath` (orphan cleanup): the values of `k1=v1/k2=v2[/]`. The default
 * name reads as null (so an empty string value does not round-trip). Throws invalidArgument when
 * the path does not name exactly these fields in order.
 */
export function parsePartitionPath(fields: readonly DataField[], path: string, defaultName = DEFAULT_PARTITION_NAME): unknown[] {
  const parts = path.split('/').filter((p) => p !== '');
  if (parts.length !== fields.length) throw invalidArgument(`'${path}' has ${parts.length} levels, expected ${fields.length}`);
  return parts.map((part, i) => {
    const eq = part.indexOf('=');
    const f = fields[i]!;
    if (eq < 0 || unescapePathName(part.slice(0, eq)) !== f.name) {
      throw invalidArgument(`'${part}' in '${path}' is not a partition of column '${f.name}'`);
    }
    const text = unescapePathName(part.slice(eq + 1));
    return text === defaultName ? null : parseValue(f.type, text);
  });
}

export type NameKind = 'database' | 'table' | 'tag' | 'column';

/** Refuses names that are unsafe as path segments or that Paimon readers would mishandle. */
export function checkName(kind: NameKind, name: string): void {
  const why =
    typeof name !== 'string'
      ? 'is not a string'
      : name.length === 0
      ? 'is empty'
      : name.length > 255
        ? 'is longer than 255 characters'
        : name === '.' || name === '..' || name.includes('..')
          ? "contains '..'"
          : name.includes('/') || name.includes('\\')
            ? 'contains a path separator'
            : /[\u0000-\u001f\u007f]/.test(name)
              ? 'contains a control character'
              : name.startsWith('.')
                ? 'starts with a dot'
                : undefined;
  if (why) throw invalidArgument(`${kind} name ${JSON.stringify(name)} ${why}`);
}
