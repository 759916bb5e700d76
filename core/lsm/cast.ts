// Type changes of schema evolution: which column type changes an ALTER may make (Paimon's
// DataTypeCasts.supportsCast), and how a value written under the old type reads under the new one
// (Paimon's CastExecutors, used by SchemaEvolutionUtil when old files are read).
//
// Two classes, as in Paimon: implicit casts (widening, never lose information: INT→BIGINT,
// FLOAT→DOUBLE, CHAR→STRING, DATE→TIMESTAMP, …) and explicit casts (allowed unless
// `disable-explicit-type-casting`, possibly lossy: DOUBLE→INT truncates, BIGINT→INT wraps,
// BOOLEAN→STRING gives 'true'/'false', STRING→BYTES is the UTF-8 encoding, …). Anything else is
// refused at ALTER time, so a cast function is only ever built for a permitted pair.
//
// Semantics follow Java: integer narrowing wraps (two's complement), floating → integer truncates
// toward zero and saturates (NaN → 0), decimal overflow reads as null (a failed read into a NOT
// NULL column), FLOAT/DOUBLE NaN or infinity → DECIMAL fails the read, numbers print as Java's
// toString does for the common cases (110.0, 1.0E20). TIMESTAMP ↔ TIMESTAMP WITH LOCAL TIME ZONE
// uses UTC as the session zone (the appliance runs in UTC; Paimon uses the JVM's zone).

import { invalidArgument } from './errors.ts';
import { fitsChars, isNestedType, typesEqual, withNullable, decimalToString, timestampToString, typeToString, utcMs, valueToJson, type DataType, type TypeRoot } from './types.ts';

const INTEGERS: readonly TypeRoot[] = ['TINYINT', 'SMALLINT', 'INT', 'BIGINT'];
const NUMERIC: readonly TypeRoot[] = [...INTEGERS, 'FLOAT', 'DOUBLE', 'DECIMAL'];
const CHARS: readonly TypeRoot[] = ['CHAR', 'VARCHAR', 'STRING'];
const BINARIES: readonly TypeRoot[] = ['BINARY', 'VARBINARY', 'BYTES'];
const TIMESTAMPS: readonly TypeRoot[] = ['TIMESTAMP', 'TIMESTAMP_LTZ'];

const rank = (r: TypeRoot): number => INTEGERS.indexOf(r);
const lengthOf = (t: DataType): number => (t.root === 'STRING' || t.root === 'BYTES' ? 2147483647 : t.length ?? 1);

/** True when `from` → `to` never loses information (Paimon's implicit cast). */
export function isImplicitCast(from: DataType, to: DataType): boolean {
  if (isNestedType(from) || isNestedType(to)) return sameType(from, to); // no casts into, out of or inside ARRAY/MAP
  const a = from.root;
  const b = to.root;
  if (sameType(from, to)) return true;
  if (INTEGERS.includes(a) && INTEGERS.includes(b)) return rank(a) <= rank(b);
  if (INTEGERS.includes(a) && (b === 'FLOAT' || b === 'DOUBLE' || b === 'DECIMAL')) {
    if (b !== 'DECIMAL') return true;
    const digits = { TINYINT: 3, SMALLINT: 5, INT: 10, BIGINT: 19 }[a as 'INT'];
    return to.precision! - to.scale! >= digits;
  }
  if (a === 'FLOAT' && b === 'DOUBLE') return true;
  if (a === 'DECIMAL' && b === 'DECIMAL') return to.scale! >= from.scale! && to.precision! - to.scale! >= from.precision! - from.scale!;
  if (a === 'DECIMAL' && (b === 'FLOAT' || b === 'DOUBLE')) return true;
  if (CHARS.includes(a) && CHARS.includes(b)) return lengthOf(to) >= lengthOf(from) && !(b === 'CHAR' && a !== 'CHAR');
  if (BINARIES.includes(a) && BINARIES.includes(b)) return lengthOf(to) >= lengthOf(from) && !(b === 'BINARY' && a !== 'BINARY');
  if (a === 'DATE' && TIMESTAMPS.includes(b)) return true;
  if (TIMESTAMPS.includes(a) && b === a) return to.precision! >= from.precision!;
  if (a === 'TIME' && b === 'TIME') return to.precision! >= from.precision!;
  return false;
}

/** True when Paimon permits `from` → `to` as an explicit (possibly lossy) cast. */
export function isExplicitCast(from: DataType, to: DataType): boolean {
  if (isNestedType(from) || isNestedType(to)) return sameType(from, to);
  const a = from.root;
  const b = to.root;
  if (isImplicitCast(from, to)) return true;
  if (NUMERIC.includes(a) && NUMERIC.includes(b)) return true;
  if (CHARS.includes(a) && CHARS.includes(b)) return true;
  if (BINARIES.includes(a) && BINARIES.includes(b)) return true;
  if (CHARS.includes(b)) return true; // every type prints as a string
  if (CHARS.includes(a)) return true; // strings parse into every type
  if (a === 'BOOLEAN' && INTEGERS.includes(b)) return true;
  if (INTEGERS.includes(a) && b === 'BOOLEAN') return true;
  if (TIMESTAMPS.includes(a) && (TIMESTAMPS.includes(b) || b === 'DATE' || b === 'TIME')) return true;
  return false;
}

export function sameType(a: DataType, b: DataType): boolean {
  if (isNestedType(a) || isNestedType(b)) return typesEqual(withNullable(a, true), withNullable(b, true));
  return a.root === b.root && a.precision === b.precision && a.scale === b.scale && a.length === b.length;
}

/** Throws an InvalidArgument naming the column when the change is not allowed. */
export function checkTypeChange(column: string, from: DataType, to: DataType, allowExplicit: boolean): void {
  const ok = allowExplicit ? isExplicitCast(from, to) : isImplicitCast(from, to);
  if (!ok) {
    throw invalidArgument(
      `column '${column}': cannot change type ${typeToString(from)} to ${typeToString(to)}` +
        (allowExplicit || !isExplicitCast(from, to) ? ' (Paimon has no cast between them)' : " (an explicit cast, refused by 'disable-explicit-type-casting')"),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Value casts.

export type CastFn = (v: unknown) => unknown;

const TWO32 = 4294967296;
function wrapInt(v: number, bits: 8 | 16 | 32): number {
  if (bits === 32) return v | 0;
  return bits === 16 ? (v << 16) >> 16 : (v << 24) >> 24;
}
const bitsOf = (r: TypeRoot): 8 | 16 | 32 => (r === 'TINYINT' ? 8 : r === 'SMALLINT' ? 16 : 32);

/** Java `(int) d` / `(long) d`: truncation toward zero, NaN → 0, saturation at the range. */
function doubleToIntegral(d: number, root: TypeRoot): number | bigint {
  if (root === 'BIGINT') {
    if (Number.isNaN(d)) return 0n;
    if (d >= 9.223372036854776e18) return 2n ** 63n - 1n;
    if (d <= -9.223372036854776e18) return -(2n ** 63n);
    return BigInt(Math.trunc(d));
  }
  let i: number;
  if (Number.isNaN(d)) i = 0;
  else if (d >= 2147483647) i = 2147483647;
  else if (d <= -2147483648) i = -2147483648;
  else i = Math.trunc(d);
  return root === 'INT' ? i : wrapInt(i, bitsOf(root));
}

function integralToNumber(v: unknown): number {
  return typeof v === 'bigint' ? Number(v) : (v as number);
}

function toIntegral(v: unknown, from: TypeRoot, to: TypeRoot): number | bigint {
  if (from === 'FLOAT' || from === 'DOUBLE') return doubleToIntegral(v as number, to);
  if (to === 'BIGINT') return typeof v === 'bigint' ? v : BigInt(v as number);
  if (typeof v === 'bigint') return wrapInt(Number(BigInt.asIntN(32, v)), bitsOf(to));
  return wrapInt((v as number) % TWO32, bitsOf(to));
}

const POW10 = (n: number): bigint => 10n ** BigInt(n);

/** Rescales an unscaled decimal with HALF_UP rounding; undefined when it overflows `precision`. */
function rescale(unscaled: bigint, fromScale: number, to: DataType): bigint | null {
  let v = unscaled;
  const d = to.scale! - fromScale;
  if (d > 0) v *= POW10(d);
  else if (d < 0) {
    const div = POW10(-d);
    const q = v / div;
    const r = v % div;
    const half = (r < 0n ? -r : r) * 2n >= div;
    v = half ? q + (v < 0n ? -1n : 1n) : q;
  }
  const limit = POW10(to.precision!);
  return v < limit && v > -limit ? v : null;
}

function numberToDecimal(n: number, to: DataType, column: string): bigint | null {
  // Java's BigDecimal.valueOf(NaN or ±Infinity) throws NumberFormatException: the read fails.
  if (!Number.isFinite(n)) throw invalidArgument(`column '${column}': cannot cast ${javaDoubleToString(n)} to ${typeToString(to)} while reading an older data file (NaN and infinities have no DECIMAL value)`);
  // BigDecimal.valueOf(d): the shortest decimal of d (Double.toString), then HALF_UP to the scale.
  const [mant, expText] = n.toExponential().split('e');
  const neg = mant!.startsWith('-');
  const digits = mant!.replace('-', '').replace('.', '');
  const scale = digits.length - 1 - Number(expText);
  const v = BigInt(digits) * (neg ? -1n : 1n);
  if (scale < 0) return rescale(v * POW10(-scale), 0, to);
  return rescale(v, scale, to);
}

/** Java's Double.toString / Float.toString for the common cases: 110.0, 11.1, 1.0E20, 1.0E-5, NaN. */
export function javaDoubleToString(d: number, float = false): string {
  if (Number.isNaN(d)) return 'NaN';
  if (!Number.isFinite(d)) return d > 0 ? 'Infinity' : '-Infinity';
  if (d === 0) return Object.is(d, -0) ? '-0.0' : '0.0';
  let x = d;
  if (float) {
    // The shortest decimal that rounds back to the same float.
    const f = Math.fround(d);
    for (let p = 1; p <= 9; p++) {
      const c = Number(f.toPrecision(p));
      if (Math.fround(c) === f) {
        x = c;
        break;
      }
    }
  }
  const abs = Math.abs(x);
  if (abs >= 1e-3 && abs < 1e7) {
    const s = String(x);
    return s.includes('.') ? s : `${s}.0`;
  }
  const [mant, exp] = x.toExponential().split('e');
  const m = mant!.includes('.') ? mant! : `${mant}.0`;
  return `${m}E${Number(exp)}`;
}

function decimalToNumber(v: bigint, scale: number): number {
  return Number(decimalToString(v, scale));
}

const utf8 = new TextEncoder();
const utf8d = new TextDecoder();

function toStringValue(v: unknown, from: DataType): string {
  switch (from.root) {
    case 'BOOLEAN':
      return v ? 'true' : 'false';
    case 'FLOAT':
      return javaDoubleToString(v as number, true);
    case 'DOUBLE':
      return javaDoubleToString(v as number);
    case 'DECIMAL':
      return decimalToString(v as bigint, from.scale!);
    case 'BIGINT':
      return (v as bigint).toString();
    case 'BINARY':
    case 'VARBINARY':
    case 'BYTES':
      return utf8d.decode(v as Uint8Array);
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return timestampToString(v as number, from.precision!, false).replace('T', ' ');
    case 'DATE':
    case 'TIME':
      return String(valueToJson(from, v));
    default:
      return String(v);
  }
}

/**
 * Paimon's BinaryStringUtils.toCharacterString: a string longer than n characters cut to its first
 * n, a shorter one padded with spaces to n for a CHAR. Characters as Paimon counts them
 * (BinaryString.numChars, types.ts `fitsChars`: one per code point), so a cut never splits a
 * surrogate pair and "😀😀" fits a VARCHAR(2).
 */
function fitString(s: string, to: DataType): string {
  if (to.root === 'STRING') return s;
  const n = to.length!;
  if (fitsChars(s, n)) return to.root === 'CHAR' ? s + ' '.repeat(Math.max(0, n - charCount(s))) : s;
  let end = 0;
  for (let chars = 0; chars < n; chars++) end += isPairAt(s, end) ? 2 : 1;
  return s.slice(0, end);
}

function isPairAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff) return false;
  const d = s.charCodeAt(i + 1);
  return d >= 0xdc00 && d <= 0xdfff;
}

function charCount(s: string): number {
  let chars = 0;
  for (let i = 0; i < s.length; i += isPairAt(s, i) ? 2 : 1) chars++;
  return chars;
}

function fitBytes(b: Uint8Array, to: DataType): Uint8Array {
  if (to.root === 'BYTES') return b;
  const n = to.length!;
  if (b.length > n) return b.subarray(0, n);
  if (to.root === 'BINARY' && b.length < n) {
    const out = new Uint8Array(n);
    out.set(b);
    return out;
  }
  return b;
}

function parseFail(column: string, text: string, to: DataType): Error {
  return invalidArgument(`column '${column}': cannot cast '${text.length > 40 ? `${text.slice(0, 40)}…` : text}' to ${typeToString(to)} while reading an older data file`);
}

function fromStringValue(s: string, to: DataType, column: string): unknown {
  const t = s.trim();
  switch (to.root) {
    case 'BOOLEAN': {
      const l = t.toLowerCase();
      if (['true', 't', 'yes', 'y', '1'].includes(l)) return true;
      if (['false', 'f', 'no', 'n', '0'].includes(l)) return false;
      throw parseFail(column, s, to);
    }
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'BIGINT': {
      if (!/^[+-]?\d+$/.test(t)) throw parseFail(column, s, to);
      const b = BigInt(t);
      if (to.root === 'BIGINT') return b;
      const bits = bitsOf(to.root);
      const lo = -(2n ** BigInt(bits - 1));
      if (b < lo || b >= -lo) throw parseFail(column, s, to);
      return Number(b);
    }
    case 'FLOAT':
    case 'DOUBLE': {
      const n = Number(t);
      if (t === '' || Number.isNaN(n) && t !== 'NaN') throw parseFail(column, s, to);
      return to.root === 'FLOAT' ? Math.fround(n) : n;
    }
    case 'DECIMAL': {
      const m = /^([+-])?(\d*)(?:\.(\d*))?$/.exec(t);
      if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw parseFail(column, s, to);
      const frac = m[3] ?? '';
      const v = BigInt((m[2] || '0') + frac) * (m[1] === '-' ? -1n : 1n);
      return rescale(v, frac.length, to);
    }
    case 'BINARY':
    case 'VARBINARY':
    case 'BYTES':
      return fitBytes(utf8.encode(s), to);
    case 'DATE': {
      const days = javaDateOf(s);
      if (days === null) throw parseFail(column, s, to);
      return days;
    }
    case 'TIME': {
      const ms = javaTimeOf(s);
      // Paimon's cast makes any int; one that is no time of a day (24:00, a leap second 23:59:60,
      // 25:00, an offset past midnight) is no TIME value here.
      if (ms === null || ms < 0 || ms > 86_399_999) throw parseFail(column, s, to);
      return ms;
    }
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      const micros = javaTimestampOf(s, to);
      if (micros === null) throw parseFail(column, s, to);
      return micros;
    }
    default:
      return fitString(s, to);
  }
}

/** Paimon's StringUtils.isNumeric: an optional '-' and digits (BinaryStringUtils reads such text as a number). */
const isNumeric = (s: string): boolean => /^-?\d+$/.test(s);

/** Java's `Integer.parseInt(s.trim())` after DateTimeUtils.isInteger; null where Java fails. */
function javaInt(text: string): number | null {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return null;
  const n = Number(t);
  return n > 2147483647 ? null : n;
}

/** DateTimeUtils.parseFraction: milliseconds of a fraction, the fourth character rounding half up. */
function parseFraction(v: string): number {
  let multiplier = 100;
  let r = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    r += multiplier * (c < 48 || c > 57 ? 0 : c - 48);
    if (multiplier < 10) {
      if (i + 1 < v.length && v.charCodeAt(i + 1) >= 53 /* '5' */) r++;
      break;
    }
    multiplier /= 10;
  }
  return r;
}

/**
 * Days since 1970 as Paimon's STRING → DATE cast gives them (BinaryStringUtils.toDate: a number as
 * it is, else DateTimeUtils.parseDate — y[-m[-d]], what follows a blank ignored, years 0–9999, a
 * date that does not exist refused); null where Java fails.
 */
function javaDateOf(s: string): number | null {
  if (isNumeric(s)) {
    const n = Number(s);
    return n < -2147483648 || n > 2147483647 ? null : n;
  }
  const blank = s.indexOf(' ');
  const v = blank > 0 ? s.slice(0, blank) : s;
  const hyphen1 = v.indexOf('-');
  let y: number | null;
  let m: number | null = 1;
  let d: number | null = 1;
  if (hyphen1 < 0) y = javaInt(v);
  else {
    y = javaInt(v.slice(0, hyphen1));
    const hyphen2 = v.indexOf('-', hyphen1 + 1);
    if (hyphen2 < 0) m = javaInt(v.slice(hyphen1 + 1));
    else {
      m = javaInt(v.slice(hyphen1 + 1, hyphen2));
      d = javaInt(v.slice(hyphen2 + 1));
    }
  }
  if (y === null || m === null || d === null || y > 9999 || m < 1 || m > 12 || d < 1 || d > 31) return null;
  if (d > new Date(utcMs(y, m + 1, 0)).getUTCDate()) return null;
  return Math.round(utcMs(y, m, d) / 86_400_000);
}

/**
 * Milliseconds of a day as Paimon's STRING → TIME cast gives them (BinaryStringUtils.toTime:
 * a number as it is, else DateTimeUtils.parseTime — h[:m[:s[.fraction]]] with an optional ±hh[:mm]
 * added, a fraction's fourth digit rounding half up); null where Java throws. Not range-checked.
 */
function javaTimeOf(v: string): number | null {
  if (isNumeric(v)) {
    const n = Number(v);
    return n < -2147483648 || n > 2147483647 ? null : n;
  }
  let end = v.length;
  let operator = -1;
  let timezone = v.indexOf('-');
  if (timezone < 0) {
    timezone = v.indexOf('+');
    operator = 1;
  }
  let tzHour = 0;
  let tzMinute = 0;
  if (timezone >= 0) {
    end = timezone;
    const colon3 = v.indexOf(':', timezone);
    const h = javaInt(colon3 < 0 ? v.slice(timezone + 1) : v.slice(timezone + 1, colon3));
    const m = colon3 < 0 ? 0 : javaInt(v.slice(colon3 + 1));
    if (h === null || m === null) return null;
    tzHour = h;
    tzMinute = m;
  }
  const colon1 = v.indexOf(':');
  let hour: number | null;
  let minute: number | null = 0;
  let second: number | null = 0;
  let milli = 0;
  if (colon1 < 0) hour = javaInt(v.slice(0, end));
  else {
    hour = javaInt(v.slice(0, colon1));
    const colon2 = v.indexOf(':', colon1 + 1);
    if (colon2 < 0) minute = javaInt(v.slice(colon1 + 1, end));
    else {
      minute = javaInt(v.slice(colon1 + 1, colon2));
      const dot = v.indexOf('.', colon2);
      if (dot < 0) second = javaInt(v.slice(colon2 + 1, end));
      else {
        if (dot + 1 > end) return null; // Java's substring throws
        second = javaInt(v.slice(colon2 + 1, dot));
        milli = parseFraction(v.slice(dot + 1, end).trim());
      }
    }
  }
  if (hour === null || minute === null || second === null) return null;
  return (hour + operator * tzHour) * 3_600_000 + (minute + operator * tzMinute) * 60_000 + second * 1000 + milli;
}

/**
 * The text Paimon's STRING → TIMESTAMP cast reads (DateTimeUtils.DEFAULT_TIMESTAMP_FORMATTER):
 * yyyy-M-d, optionally followed by ` H:m:s[.fraction]` or `TH:m[:s[.fraction]]`, up to 9 fraction
 * digits, no zone, no surrounding blanks.
 */
const JAVA_TIMESTAMP_TEXT = /^(\d{4,})-(\d{1,2})-(\d{1,2})(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{0,9}))?|T(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{0,9}))?)?)?$/;

/**
 * Epoch microseconds as Paimon's STRING → TIMESTAMP(p) cast gives them (BinaryStringUtils.toTimestamp);
 * null where Java throws or the value is outside what this store holds. A number is epoch seconds,
 * milliseconds or microseconds for p 0, 3, 6 (another p fails, as in Java; not for TIMESTAMP_LTZ;
 * this store has no p above 6). Text is resolved as java.time's SMART resolver does: a day past its month's end
 * (up to 31) is the month's last day, T24:00 (zero seconds and fraction) the next day's 00:00, a
 * leap second (:60) refused; the fraction floored to p digits (fromTemporalAccessor).
 * TIMESTAMP_LTZ reads the text in UTC (Paimon: the JVM's zone).
 */
function javaTimestampOf(s: string, to: DataType): number | null {
  const p = to.precision!;
  if (isNumeric(s)) {
    if (to.root !== 'TIMESTAMP') return null;
    const epoch = BigInt(s);
    if (epoch < -(2n ** 63n) || epoch >= 2n ** 63n) return null; // toLong overflows
    const micros = p === 0 ? epoch * 1_000_000n : p === 3 ? epoch * 1000n : p === 6 ? epoch : null;
    if (micros === null) return null;
    const n = Number(micros);
    return Number.isSafeInteger(n) ? n : null;
  }
  const m = JAVA_TIMESTAMP_TEXT.exec(s);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > 31) return null;
  let hour = Number(m[4] ?? m[8] ?? 0);
  const minute = Number(m[5] ?? m[9] ?? 0);
  const second = Number(m[6] ?? m[10] ?? 0);
  const nanos = Number((m[7] ?? m[11] ?? '').padEnd(9, '0'));
  let nextDay = 0;
  if (minute > 59) return null;
  if (hour === 24 && minute === 0 && second === 0 && nanos === 0) {
    hour = 0;
    nextDay = 1;
  } else if (hour > 23 || second > 59) return null;
  const lastDay = new Date(utcMs(year, month + 1, 0)).getUTCDate();
  const days = Math.round(utcMs(year, month, Math.min(day, lastDay)) / 86_400_000) + nextDay;
  const v = (days * 86_400 + hour * 3600 + minute * 60 + second) * 1_000_000 + Math.floor(nanos / 1000);
  return Number.isSafeInteger(v) ? truncTimestamp(v, to) : null;
}

function truncTimestamp(micros: number, to: DataType): number {
  const p = to.precision!;
  if (p >= 6) return micros;
  const unit = 10 ** (6 - p);
  return Math.floor(micros / unit) * unit;
}

const MICROS_PER_DAY = 86_400_000_000;

/**
 * The function that turns a value of `from` into the value of `to` (null stays null). REQUIRES:
 * the cast is permitted (checkTypeChange). `column` names the column in errors.
 */
export function castFunction(from: DataType, to: DataType, column: string): CastFn {
  const cast = castValues(from, to, column);
  if (to.root !== 'DECIMAL' || to.nullable) return cast;
  // A DECIMAL a value overflows is null (Java's Decimal.fromBigDecimal), which a NOT NULL column
  // cannot hold (Java's readers fail on it too): the read fails, naming the value.
  return (v) => {
    const r = cast(v);
    if (r === null && v !== null && v !== undefined) {
      throw invalidArgument(`column '${column}': ${castValueText(v, from)} overflows ${typeToString(to)} (a cast gives null, and the column is NOT NULL) while reading an older data file`);
    }
    return r;
  };
}

/**
 * Whether casting a non-null value of `from` to `to` can fail the read (REQUIRES: a permitted
 * cast): text that does not parse, NaN or an infinity to DECIMAL, a value that overflows a
 * NOT NULL DECIMAL. Every other cast gives a value (wrapping, truncating, cutting) or null.
 */
export function castMayFail(from: DataType, to: DataType): boolean {
  if (sameType(from, to)) return false;
  const a = from.root;
  const b = to.root;
  if (CHARS.includes(a)) return !CHARS.includes(b) && !BINARIES.includes(b);
  if (b !== 'DECIMAL') return false;
  if (a === 'FLOAT' || a === 'DOUBLE') return true;
  return !to.nullable && !isImplicitCast(from, to);
}

/** A value of `from` as the cast's error messages quote it (a DECIMAL with its scale, a number as Java prints it). */
export function castValueText(v: unknown, from: DataType): string {
  return toStringValue(v, from);
}

function castValues(from: DataType, to: DataType, column: string): CastFn {
  const a = from.root;
  const b = to.root;
  const wrap = (f: (v: unknown) => unknown): CastFn => (v) => (v === null || v === undefined ? null : f(v));
  if (sameType(from, to)) return (v) => v ?? null;
  if (CHARS.includes(b)) return wrap((v) => fitString(CHARS.includes(a) ? (v as string) : toStringValue(v, from), to));
  if (CHARS.includes(a)) return wrap((v) => fromStringValue(v as string, to, column));
  if (BINARIES.includes(a) && BINARIES.includes(b)) return wrap((v) => fitBytes(v as Uint8Array, to));
  if (INTEGERS.includes(b)) {
    if (a === 'BOOLEAN') return wrap((v) => (b === 'BIGINT' ? (v ? 1n : 0n) : v ? 1 : 0));
    if (a === 'DECIMAL') {
      return wrap((v) => {
        const q = (v as bigint) / POW10(from.scale!); // truncation toward zero
        return b === 'BIGINT' ? BigInt.asIntN(64, q) : wrapInt(Number(BigInt.asIntN(32, q)), bitsOf(b));
      });
    }
    return wrap((v) => toIntegral(v, a, b));
  }
  if (b === 'FLOAT' || b === 'DOUBLE') {
    const round = b === 'FLOAT' ? Math.fround : (x: number) => x;
    if (a === 'DECIMAL') return wrap((v) => round(decimalToNumber(v as bigint, from.scale!)));
    return wrap((v) => round(integralToNumber(v)));
  }
  if (b === 'DECIMAL') {
    if (a === 'DECIMAL') return wrap((v) => rescale(v as bigint, from.scale!, to));
    if (a === 'FLOAT' || a === 'DOUBLE') return wrap((v) => numberToDecimal(v as number, to, column));
    return wrap((v) => rescale(typeof v === 'bigint' ? v : BigInt(v as number), 0, to));
  }
  if (b === 'BOOLEAN') return wrap((v) => (typeof v === 'bigint' ? v !== 0n : v !== 0));
  if (TIMESTAMPS.includes(b)) {
    if (a === 'DATE') return wrap((v) => (v as number) * MICROS_PER_DAY);
    return wrap((v) => truncTimestamp(v as number, to));
  }
  if (b === 'DATE' && TIMESTAMPS.includes(a)) return wrap((v) => Math.floor((v as number) / MICROS_PER_DAY));
  if (b === 'TIME' && TIMESTAMPS.includes(a)) {
    return wrap((v) => {
      const ms = Math.floor((v as number) / 1000);
      const day = ((ms % 86_400_000) + 86_400_000) % 86_400_000;
      const p = to.precision!;
      return p >= 3 ? day : Math.floor(day / 10 ** (3 - p)) * 10 ** (3 - p);
    });
  }
  if (a === 'TIME' && b === 'TIME') return wrap((v) => v);
  throw new Error(`assertion failed: no cast from ${typeToString(from)} to ${typeToString(to)} for column '${column}'`);
}
