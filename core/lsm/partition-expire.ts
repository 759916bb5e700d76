// Partition expiration at commit (`partition.expiration-time`), after Paimon's
// NormalPartitionExpire, PartitionValuesTimeExpireStrategy / PartitionUpdateTimeExpireStrategy and
// PartitionTimeExtractor (DESIGN.md, "Partition expiration").
//
// What is here: the options as Paimon's CoreOptions gives them, the time of a partition (parsed from
// its values, or its newest file's creation time), which partitions are expired at a time, and the
// check interval a writer keeps in memory. The commit that drops them is the writer's
// (TableWriter.expirePartitions): an OVERWRITE snapshot that DELETEs every data file of those
// partitions and leaves their index files out of the index manifest, as Java's `dropPartitions`.
//
// Times are compared as local wall-clock millis (Java's LocalDateTime.now() against the
// LocalDateTime a partition's values give, or a file's `_CREATION_TIME`, which is a local wall
// clock too): `localWallClockMillis(now) - expiration > partition time`.

import { deserializeBinaryRow } from './binary-row.ts';
import { localWallClockMillis } from './data-file.ts';
import { invalidArgument, notSupported } from './errors.ts';
import { ADD } from './manifest.ts';
import { parseDuration } from './options.ts';
import { partitionValueText } from './partition-path.ts';
import type { Snapshot } from './snapshot.ts';
import type { Table } from './table.ts';

export const PARTITION_EXPIRE_OPTIONS = [
  'partition.expiration-time',
  'partition.expiration-check-interval',
  'partition.expiration-strategy',
  'partition.expiration-max-num',
  'partition.expiration-batch-size',
  'partition.timestamp-formatter',
  'partition.timestamp-pattern',
  'partition.timestamp-format.strict',
] as const;

export type PartitionExpireStrategy = 'values-time' | 'update-time';

export interface PartitionExpireConfig {
  readonly expirationMs: number;
  /** `partition.expiration-check-interval` (default 1 h); 0 checks at every commit. */
  readonly checkIntervalMs: number;
  readonly strategy: PartitionExpireStrategy;
  /** `partition.expiration-max-num` (default 100): partitions dropped at most per check. */
  readonly maxNum: number;
  /** `partition.expiration-batch-size` (default: max-num): partitions per OVERWRITE snapshot. */
  readonly batchSize: number;
  readonly extractor: PartitionTimeExtractor;
}

const MAX_INT = 2147483647;

function int32(raw: Readonly<Record<string, string>>, key: string, d: number, min: number): number {
  const text = raw[key];
  if (text === undefined) return d;
  if (!/^\s*-?\d+\s*$/.test(text)) throw invalidArgument(`option '${key}': expected an integer, got '${text}'`);
  const n = Number(text);
  if (n < min || n > MAX_INT) throw invalidArgument(`option '${key}': expected an integer in ${min}..${MAX_INT}, got ${n}`);
  return n;
}

/**
 * Checks every partition-expiration option present (InvalidArgument naming the option and what
 * was expected) and returns the configuration, or undefined when the table has no
 * `partition.expiration-time` or no partition keys (Java's newPartitionExpire returns null then).
 * A formatter with pattern letters this store does not parse is not an error here: the writer is
 * refused for it (`formatterRefusal`, write-options.ts).
 */
export function partitionExpireConfig(raw: Readonly<Record<string, string>>, partitioned: boolean): PartitionExpireConfig | undefined {
  const timeText = raw['partition.expiration-time'];
  const expirationMs = timeText === undefined ? undefined : parseDuration(timeText, 'partition.expiration-time');
  const intervalText = raw['partition.expiration-check-interval'];
  const checkIntervalMs = intervalText === undefined ? 3_600_000 : parseDuration(intervalText, 'partition.expiration-check-interval');
  // Java switches on the exact text (PartitionExpireStrategy.createPartitionExpireStrategy).
  const strategyText = raw['partition.expiration-strategy'] ?? 'values-time';
  if (strategyText !== 'values-time' && strategyText !== 'update-time') {
    throw invalidArgument(`option 'partition.expiration-strategy': expected 'values-time' or 'update-time', got '${strategyText}'`);
  }
  // Java's Stream.limit refuses a negative count; 0 drops nothing.
  const maxNum = int32(raw, 'partition.expiration-max-num', 100, 0);
  // Any value: only 0 < size < partitions found cuts the drop into batches (NormalPartitionExpire.doExpire).
  const batchSize = int32(raw, 'partition.expiration-batch-size', maxNum, -MAX_INT - 1);
  const strict = raw['partition.timestamp-format.strict'];
  if (strict !== undefined && !['true', 'false'].includes(strict.trim().toLowerCase())) {
    throw invalidArgument(`option 'partition.timestamp-format.strict': expected 'true' or 'false', got '${strict}'`);
  }
  const extractor = new PartitionTimeExtractor(raw['partition.timestamp-pattern'], raw['partition.timestamp-formatter']);
  if (expirationMs === undefined || !partitioned) return undefined;
  return { expirationMs, checkIntervalMs, strategy: strategyText, maxNum, batchSize, extractor };
}

/**
 * The arguments of an expiration on demand (Java's `expire_partitions` procedure): each given one
 * stands in for its option for that call only; nothing is written into the schema.
 */
export interface PartitionExpireArguments {
  /** For `partition.expiration-time` (a duration as the option takes it: '2 d', '12 h'). */
  expirationTime?: string;
  /** For `partition.expiration-strategy`: 'values-time' or 'update-time'. */
  strategy?: string;
  /** For `partition.timestamp-formatter`. */
  timestampFormatter?: string;
  /** For `partition.timestamp-pattern`. */
  timestampPattern?: string;
  /** For `partition.expiration-max-num`: partitions dropped at most. */
  maxExpires?: number;
}

/** How errors name each argument (the API's names by default; the CLI gives its flags). */
export type PartitionExpireArgumentNames = Readonly<Record<keyof PartitionExpireArguments, string>>;

export const PARTITION_EXPIRE_ARGUMENT_NAMES: PartitionExpireArgumentNames = {
  expirationTime: "argument 'expirationTime'",
  strategy: "argument 'strategy'",
  timestampFormatter: "argument 'timestampFormatter'",
  timestampPattern: "argument 'timestampPattern'",
  maxExpires: "argument 'maxExpires'",
};

/**
 * The configuration of an expiration on demand of table `name` (options `raw`): the table's
 * partition-expiration options with `args` in place of theirs, and no check interval (Java's
 * procedure sets it to 0: ProcedureUtils.fillInPartitionOptions). Each argument is checked as its
 * option is, the error naming the argument; the table's own options as at commit, naming the
 * option. InvalidArgument for an unpartitioned table, and when neither the table nor `args` gives
 * an expiration time (Java's "Both the partition expiration time and partition field can not be
 * null"); NotSupported for a formatter whose pattern letters this store does not parse, when
 * values-time uses it (the writer's refusal, write-options.ts, for the table's own).
 */
export function partitionExpireNowConfig(
  name: string,
  raw: Readonly<Record<string, string>>,
  partitionKeys: readonly string[],
  args: PartitionExpireArguments,
  names: PartitionExpireArgumentNames = PARTITION_EXPIRE_ARGUMENT_NAMES,
): PartitionExpireConfig {
  const merged: Record<string, string> = { ...raw, 'partition.expiration-check-interval': '0' };
  const text = (key: keyof PartitionExpireArguments, v: unknown): string => {
    if (typeof v !== 'string' || v.trim() === '') throw invalidArgument(`${names[key]}: expected a non-empty string, got ${JSON.stringify(v)}`);
    return v;
  };
  if (args.expirationTime !== undefined) {
    const t = text('expirationTime', args.expirationTime);
    try {
      parseDuration(t, 'partition.expiration-time');
    } catch {
      throw invalidArgument(`${names.expirationTime}: expected a duration such as '2 d', '12 h' or '30 min', got '${t}'`);
    }
    merged['partition.expiration-time'] = t;
  }
  if (args.strategy !== undefined) {
    const t = text('strategy', args.strategy);
    if (t !== 'values-time' && t !== 'update-time') throw invalidArgument(`${names.strategy}: expected 'values-time' or 'update-time', got '${t}'`);
    merged['partition.expiration-strategy'] = t;
  }
  if (args.maxExpires !== undefined) {
    const n = args.maxExpires;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_INT) throw invalidArgument(`${names.maxExpires}: expected an integer in 0..${MAX_INT}, got ${String(n)}`);
    merged['partition.expiration-max-num'] = String(n);
  }
  if (args.timestampFormatter !== undefined) merged['partition.timestamp-formatter'] = text('timestampFormatter', args.timestampFormatter);
  if (args.timestampPattern !== undefined) merged['partition.timestamp-pattern'] = text('timestampPattern', args.timestampPattern);
  if (partitionKeys.length === 0) throw invalidArgument(`table ${name} has no partition keys: there are no partitions to expire`);
  if (merged['partition.expiration-time'] === undefined) {
    throw invalidArgument(`table ${name} has no option 'partition.expiration-time' and no ${names.expirationTime} was given: nothing says when a partition is expired`);
  }
  const config = partitionExpireConfig(merged, true)!;
  const formatter = merged['partition.timestamp-formatter'];
  if (config.strategy === 'values-time' && formatter !== undefined) {
    const c = compileFormatter(formatter);
    if (typeof c === 'string') {
      const what = args.timestampFormatter !== undefined ? names.timestampFormatter : "option 'partition.timestamp-formatter'";
      throw notSupported(`${what}: '${formatter}' is not parsed here: ${c}`);
    }
  }
  return config;
}

/**
 * Why a writer here cannot honour the table's `partition.timestamp-formatter` (pattern letters it
 * does not parse), when the formatter is used: by values-time expiration or by
 * `partition.timestamp-format.strict`. Undefined when it is fine or unused.
 */
export function formatterRefusal(raw: Readonly<Record<string, string>>, partitioned: boolean, writeOnly: boolean): string | undefined {
  const formatter = raw['partition.timestamp-formatter'];
  if (formatter === undefined || !partitioned) return undefined;
  const expiring = !writeOnly && raw['partition.expiration-time'] !== undefined && (raw['partition.expiration-strategy'] ?? 'values-time') === 'values-time';
  const strict = (raw['partition.timestamp-format.strict'] ?? '').trim().toLowerCase() === 'true';
  if (!expiring && !strict) return undefined;
  const c = compileFormatter(formatter);
  return typeof c === 'string' ? c : undefined;
}

// ------------------------------------------------------------------------------------------------
// The time of a partition's values (Java's PartitionTimeExtractor).

/** A partition's values cannot give a time: Java's DateTimeParseException or its NullPointerException. */
export class PartitionTimeError extends Error {
  constructor(
    message: string,
    readonly nullValue: boolean,
  ) {
    super(message);
  }
}

interface CompiledFormatter {
  readonly regex: RegExp;
  /** What each capture group of `regex` is. */
  readonly groups: readonly FieldKind[];
  readonly hasDate: boolean;
  /** Which time fields the pattern has (Java builds a time only from some combinations: timeOfDay). */
  readonly hasHour: boolean;
  readonly hasMinute: boolean;
  readonly hasSecond: boolean;
  readonly hasFraction: boolean;
}

type FieldKind = 'yoe' | 'year' | 'year2' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'fraction';

const WIDTH_ONE_OR_TWO: Record<string, FieldKind> = { M: 'month', d: 'day', H: 'hour', m: 'minute', s: 'second' };

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/**
 * A Java DateTimeFormatter pattern (`DateTimeFormatter.ofPattern`) compiled to a regex, for the
 * letters a partition time is written with: y and u (year), M and MM (month as a number), d, H, m,
 * s (one or two letters), S… (fraction), quoted text and other non-letter characters. Anything
 * else (month names, am/pm, optional sections…) gives the reason it is not parsed here.
 *
 * Java reads adjacent numbers without backtracking (DateTimeFormatterBuilder's adjacent value
 * parsing, strict): a field of variable width ('y', 'yyyy', 'M', 'd', 'H', 'm', 's') followed by
 * fixed-width fields ('yy', 'MM', 'dd', 'HH', 'mm', 'ss', 'S…') leaves them their widths, but one
 * followed by another variable-width field, or by a digit literal, reads greedily up to 19 digits
 * and the pattern never parses. Those are refused here (a regex would backtrack and find a split
 * Java never finds: 'yyyyMd' read '2024111' as 2024-11-1); with them out, the regex reads what
 * Java reads.
 */
export function compileFormatter(pattern: string): CompiledFormatter | string {
  let re = '';
  const groups: FieldKind[] = [];
  /** The variable-width field of the current run of adjacent numbers (no literal between), if any. */
  let greedy: string | undefined;
  const neverParses = (what: string) =>
    `pattern letters '${greedy}' ${what}: Java reads '${greedy}' greedily (it has no fixed width), so '${pattern}' never parses; ` +
    'give what follows it a separator, or the fields fixed widths (yyyyMMdd, HH, mm, ss)';
  /** A literal ends the run; a digit right after a variable-width field is read as part of it. */
  const literal = (text: string): string | undefined => {
    const digit = greedy !== undefined && /^\d/.test(text) ? text[0] : undefined;
    if (digit !== undefined) return neverParses(`before the digit '${digit}'`);
    greedy = undefined;
    return undefined;
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "'") {
      // Quoted text; '' is one quote (inside or outside quotes).
      let j = i + 1;
      let text = '';
      for (;;) {
        if (j >= pattern.length) return `unterminated quote in '${pattern}'`;
        if (pattern[j] === "'") {
          if (pattern[j + 1] === "'") {
            text += "'";
            j += 2;
            continue;
          }
          break;
        }
        text += pattern[j++];
      }
      const lit = j === i + 1 ? "'" : text;
      const refused = literal(lit);
      if (refused) return refused;
      re += escapeRegex(lit);
      i = j + 1;
      continue;
    }
    if (/[A-Za-z]/.test(c)) {
      let n = 1;
      while (pattern[i + n] === c) n++;
      i += n;
      // Fixed width: 'yy' (reduced), two-letter M, d, H, m, s, and every S… (a fraction of fixed width).
      const variable = c === 'y' || c === 'u' ? n !== 2 : c in WIDTH_ONE_OR_TWO ? n === 1 : false;
      if (variable) {
        if (greedy !== undefined) return neverParses(`and '${c.repeat(n)}' have only digits between them`);
        greedy = c.repeat(n);
      }
      if (c === 'y' || c === 'u') {
        if (n === 2) {
          re += '(\\d{2})';
          groups.push('year2');
        } else {
          // 'y', 'yyy': NORMAL sign style; 'yyyy'+: EXCEEDS_PAD (a sign only beyond the width).
          re += n >= 4 ? `(\\d{${n}}|[+-]\\d{${n + 1},19})` : `(${c === 'u' ? '-?' : ''}\\d{${n},19})`;
          groups.push(c === 'y' ? 'yoe' : 'year');
        }
      } else if (c in WIDTH_ONE_OR_TWO) {
        if (n > 2) return `pattern letters '${c.repeat(n)}' (only '${c}' and '${c}${c}' are parsed here)`;
        re += n === 1 ? '(\\d{1,19})' : '(\\d{2})';
        groups.push(WIDTH_ONE_OR_TWO[c]!);
      } else if (c === 'S') {
        if (n > 9) return `pattern letters '${c.repeat(n)}' (at most 9 fraction digits)`;
        re += `(\\d{${n}})`;
        groups.push('fraction');
      } else {
        return `pattern letter '${c}' (only y, u, M, d, H, m, s and S are parsed here)`;
      }
      continue;
    }
    if (c === '[' || c === ']' || c === '{' || c === '}' || c === '#') return `'${c}' (optional sections and reserved characters are not parsed here)`;
    const refused = literal(c);
    if (refused) return refused;
    re += escapeRegex(c);
    i++;
  }
  const has = (k: FieldKind) => groups.includes(k);
  return {
    regex: new RegExp(`^${re}$`),
    groups,
    hasDate: (has('yoe') || has('year') || has('year2')) && has('month') && has('day'),
    hasHour: has('hour'),
    hasMinute: has('minute'),
    hasSecond: has('second'),
    hasFraction: has('fraction'),
  };
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const MAX_YEAR = 999_999_999;

/** Wall millis (as if UTC) of a date plus a time of day, with months and days overflowing as Java's plusMonths/plusDays do. */
function wallMillis(year: number, month: number, day: number, timeMs: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day); // setUTCFullYear: years 0–99 are years, not 1900+
  d.setUTCHours(0, 0, 0, 0);
  return d.getTime() + timeMs;
}

function parseError(text: string, what: string): PartitionTimeError {
  return new PartitionTimeError(`'${text}' ${what}`, false);
}

/** Java's default parse (no formatter): 'y-M-d[ H:m:s[.S…]]', resolved leniently (month 13 rolls into the next year). */
function parseDefault(text: string): number {
  const m = /^(-?\d{1,10})-(\d{1,2})-(\d{1,2})(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?)?$/.exec(text);
  if (!m) throw parseError(text, "is not a date 'yyyy-MM-dd' or a timestamp 'yyyy-MM-dd HH:mm:ss'");
  const year = Number(m[1]);
  if (Math.abs(year) > MAX_YEAR) throw parseError(text, 'has a year out of range');
  const frac = m[7] === undefined ? 0 : Number(m[7].padEnd(9, '0')) / 1e6;
  const timeMs = m[4] === undefined ? 0 : Number(m[4]) * 3_600_000 + Number(m[5]) * 60_000 + Number(m[6]) * 1000 + frac;
  // LENIENT: Jan 1 of the year plus (month − 1) months plus (day − 1) days plus the time (Date
  // rolls a month of 13 or a day of 32 over the same way).
  return wallMillis(year, Number(m[2]), Number(m[3]), timeMs);
}

/** A formatter's parse, resolved as Java's SMART resolver (ranges checked, a day past the month's end clipped to it). */
function parseWith(f: CompiledFormatter, text: string, formatter: string): number {
  const m = f.regex.exec(text);
  if (!m || !f.hasDate) throw parseError(text, `does not match 'partition.timestamp-formatter' '${formatter}'`);
  // A field the pattern names twice must be given the same value both times, as Java's parse
  // (DateTimeParseContext.setParsedField; a year of era and a year are cross-checked the same way).
  const values = new Map<string, number>();
  f.groups.forEach((k, g) => {
    const s = m[g + 1]!;
    const field = k === 'yoe' || k === 'year' || k === 'year2' ? 'year' : k;
    const v = k === 'year2' ? 2000 + Number(s) : k === 'fraction' ? Number(s.padEnd(9, '0')) / 1e6 : Number(s);
    const before = values.get(field);
    if (before !== undefined && before !== v) throw parseError(text, `gives the ${field} twice, differently, for 'partition.timestamp-formatter' '${formatter}'`);
    values.set(field, v);
  });
  const year = values.get('year') ?? 0;
  const month = values.get('month') ?? 0;
  let day = values.get('day') ?? 0;
  const hour = values.get('hour') ?? 0;
  const minute = values.get('minute') ?? 0;
  const second = values.get('second') ?? 0;
  const fracMs = values.get('fraction') ?? 0;
  const bad = (what: string): PartitionTimeError => parseError(text, `has ${what} out of range for 'partition.timestamp-formatter' '${formatter}'`);
  if (Math.abs(year) > MAX_YEAR || (f.groups.includes('yoe') && year < 1)) throw bad('a year');
  if (month < 1 || month > 12) throw bad('a month');
  if (day < 1 || day > 31) throw bad('a day');
  const dim = month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1]!;
  day = Math.min(day, dim);
  const time = timeOfDay(f, hour, minute, second, fracMs, bad);
  return wallMillis(year, month, day + time.extraDay, time.ms);
}

/**
 * The time of day a formatter's fields give, as Java's SMART resolver (Parsed.resolveTimeLenient)
 * and Paimon's fallback to LocalDate.parse at midnight when no time resolves: without an hour
 * there is no time, but the minute and second are range-checked ("validate remaining"); an hour
 * with seconds but no minutes, or minutes and a fraction but no seconds, resolves no time and
 * checks nothing; otherwise the missing fields are 0, 24:00 is the next day's midnight and every
 * field is range-checked.
 */
function timeOfDay(
  f: CompiledFormatter,
  hour: number,
  minute: number,
  second: number,
  fracMs: number,
  bad: (what: string) => PartitionTimeError,
): { ms: number; extraDay: number } {
  const midnight = { ms: 0, extraDay: 0 };
  if (!f.hasHour) {
    if (minute > 59) throw bad('a minute');
    if (second > 59) throw bad('a second');
    return midnight;
  }
  if ((!f.hasMinute && (f.hasSecond || f.hasFraction)) || (f.hasMinute && !f.hasSecond && f.hasFraction)) return midnight;
  if (minute > 59) throw bad('a minute');
  if (hour === 24 && minute === 0 && second === 0 && fracMs === 0) return { ms: 0, extraDay: 1 };
  if (hour > 23) throw bad('an hour');
  if (second > 59) throw bad('a second');
  return { ms: hour * 3_600_000 + minute * 60_000 + second * 1000 + fracMs, extraDay: 0 };
}

/**
 * The time of a partition from its values (`partition.timestamp-pattern`, then
 * `partition.timestamp-formatter`), as Java's PartitionTimeExtractor: without a pattern the first
 * partition value; `$key` in the pattern replaced by that key's value, longer keys first.
 */
export class PartitionTimeExtractor {
  private readonly compiled: CompiledFormatter | string | undefined;

  constructor(
    readonly pattern: string | undefined,
    readonly formatter: string | undefined,
  ) {
    this.compiled = formatter === undefined ? undefined : compileFormatter(formatter);
  }

  /** Local wall millis of the partition; PartitionTimeError when its values give none. `values`: Java's toString of each, null for null. */
  extract(keys: readonly string[], values: readonly (string | null)[]): number {
    let text: string;
    if (this.pattern === undefined) {
      if (values[0] === null || values[0] === undefined) throw new PartitionTimeError(`'${keys[0]}' is null`, true);
      text = values[0];
    } else text = replacePattern(this.pattern, keys, values);
    if (this.compiled === undefined) return parseDefault(text);
    if (typeof this.compiled === 'string') throw new Error(`assertion failed: formatter '${this.formatter}' not parsed here (${this.compiled}) yet used`);
    return parseWith(this.compiled, text, this.formatter!);
  }
}

function replacePattern(pattern: string, keys: readonly string[], values: readonly (string | null)[]): string {
  const order = keys.map((_, i) => i).sort((a, b) => keys[b]!.length - keys[a]!.length);
  let out = '';
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i]!;
    if (c === '$' && i + 1 < pattern.length) {
      const idx = order.find((k) => pattern.startsWith(keys[k]!, i + 1));
      if (idx !== undefined) {
        const v = values[idx];
        if (v === null || v === undefined) throw new PartitionTimeError(`'${keys[idx]}' is null`, true);
        out += v;
        i += 1 + keys[idx]!.length;
        continue;
      }
    }
    out += c;
    i++;
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// Which partitions are expired.

/** A partition of the latest snapshot (Java's PartitionEntry, with fileCount > 0). */
export interface PartitionInfo {
  readonly bytes: Uint8Array;
  readonly hex: string;
  /** Java's toString of each value (null for null), partition key order. */
  readonly texts: readonly (string | null)[];
  /** Largest `_CREATION_TIME` of its manifest entries (local wall millis); null when none records one. */
  readonly lastFileCreationTime: number | null;
}

export interface PartitionSkip {
  /** `k1=v1/k2=v2`, the partition's directory. */
  readonly partition: string;
  readonly reason: string;
}

/** Every partition with live files in `snapshot`, counted over its manifest entries as Java's readPartitionEntries. */
export function partitionsOf(table: Table, snapshot: Snapshot): PartitionInfo[] {
  const schema = table.schema;
  const acc = new Map<string, { bytes: Uint8Array; files: number; time: number | null }>();
  for (const meta of table.manifests.dataManifests(snapshot)) {
    for (const e of table.manifests.readManifest(meta)) {
      const hex = Buffer.from(e.partition).toString('hex');
      let a = acc.get(hex);
      if (!a) acc.set(hex, (a = { bytes: e.partition, files: 0, time: null }));
      a.files += e.kind === ADD ? 1 : -1;
      const t = e.file.creationTime;
      if (t !== null && (a.time === null || t > a.time)) a.time = t;
    }
  }
  const fields = schema.partitionIndexes.map((i) => schema.fields[i]!);
  const out: PartitionInfo[] = [];
  for (const [hex, a] of acc) {
    if (a.files <= 0) continue;
    const values = deserializeBinaryRow(schema.partitionTypes, a.bytes, table.paths.root);
    out.push({ bytes: a.bytes, hex, texts: values.map((v, i) => partitionValueText(fields[i]!.type, v)), lastFileCreationTime: a.time });
  }
  return out;
}

export interface ExpiredSelection {
  /** In Java's order (joined values, ascending), at most `maxNum`. */
  readonly expired: PartitionInfo[];
  /** Partitions whose time could not be told, with why (Java logs these and keeps them). */
  readonly skipped: PartitionSkip[];
}

/** The partitions of `partitions` expired at `nowMs` (epoch millis). */
export function selectExpired(table: Table, config: PartitionExpireConfig, partitions: readonly PartitionInfo[], nowMs: number): ExpiredSelection {
  const schema = table.schema;
  const keys = schema.partitionKeys;
  const threshold = localWallClockMillis(nowMs) - config.expirationMs;
  const expired: PartitionInfo[] = [];
  const skipped: PartitionSkip[] = [];
  for (const p of partitions) {
    if (config.strategy === 'update-time') {
      if (p.lastFileCreationTime === null) {
        skipped.push({ partition: table.partitionPathOf(p.bytes), reason: 'none of its files records a creation time' });
      } else if (threshold > p.lastFileCreationTime) expired.push(p);
      continue;
    }
    try {
      if (threshold > config.extractor.extract(keys, p.texts)) expired.push(p);
    } catch (e) {
      if (!(e instanceof PartitionTimeError)) throw e;
      const reason = e.nullValue
        ? `it cannot be expired because it contains a null value (${e.message}); drop it by hand or use 'partition.expiration-strategy' = 'update-time'`
        : `no time can be read from its values: ${e.message}; check 'partition.timestamp-formatter' / 'partition.timestamp-pattern', drop it by hand, or use 'partition.expiration-strategy' = 'update-time'`;
      skipped.push({ partition: table.partitionPathOf(p.bytes), reason });
    }
  }
  const joined = (p: PartitionInfo): string => p.texts.map((t) => t ?? schema.options.partitionDefaultName).join(',');
  const sorted = expired.map((p) => ({ p, k: joined(p) })).sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  return { expired: sorted.slice(0, Math.max(0, config.maxNum)).map((x) => x.p), skipped };
}

/** Batches of `expired` as Java cuts them (`partition.expiration-batch-size`: only 0 < size < count cuts). */
export function batchesOf<T>(expired: readonly T[], batchSize: number): T[][] {
  if (expired.length === 0) return [];
  if (!(batchSize > 0 && batchSize < expired.length)) return [[...expired]];
  const out: T[][] = [];
  for (let i = 0; i < expired.length; i += batchSize) out.push(expired.slice(i, i + batchSize));
  return out;
}

/**
 * When a writer checks (NormalPartitionExpire): the first check comes a random part of the interval
 * after the writer opens (whole seconds; Java's guard against short jobs never reaching it), then
 * once the interval has passed since the last check, at a commit. Kept in memory per writer.
 */
export class PartitionExpireClock {
  private lastCheckMs: number;

  constructor(
    private readonly intervalMs: number,
    nowMs: number,
    random: () => number = Math.random,
  ) {
    const secs = Math.floor(intervalMs / 1000);
    this.lastCheckMs = nowMs - (secs > 0 ? Math.floor(random() * secs) * 1000 : 0);
  }

  due(nowMs: number): boolean {
    return this.intervalMs === 0 || nowMs > this.lastCheckMs + this.intervalMs;
  }

  checked(nowMs: number): void {
    this.lastCheckMs = nowMs;
  }
}

/** The partition's time-format check of `partition.timestamp-format.strict` (Java's PartitionTimestampValidator); undefined when not asked for. */
export function strictPartitionCheck(raw: Readonly<Record<string, string>>, keys: readonly string[]): ((texts: readonly (string | null)[]) => string | undefined) | undefined {
  if ((raw['partition.timestamp-format.strict'] ?? '').trim().toLowerCase() !== 'true' || keys.length === 0) return undefined;
  const pattern = raw['partition.timestamp-pattern'];
  const formatter = raw['partition.timestamp-formatter'];
  if (pattern === undefined && formatter === undefined) return undefined;
  const extractor = new PartitionTimeExtractor(pattern, formatter);
  return (texts) => {
    try {
      extractor.extract(keys, texts);
      return undefined;
    } catch (e) {
      // Java's validator catches only the parse error; a null value ends in its NullPointerException.
      if (!(e instanceof PartitionTimeError)) throw e;
      return `partition ${keys.map((k, i) => `${k}=${texts[i]}`).join(', ')} does not match the 'partition.timestamp-formatter' or 'partition.timestamp-pattern' configuration ('partition.timestamp-format.strict' is true): ${e.message}`;
    }
  };
}
