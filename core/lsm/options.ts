// Table options, named as Paimon names them (CoreOptions), each declared once with its default,
// its parser and a one-line reason. Options are strings in the schema file (Paimon writes every
// option value as a JSON string); `TableOptions` holds them parsed and validated.
//
// Creating a table validates strictly: an unknown option, or a value that does not parse (for a
// typed Paimon option, also one stored and not acted on here: as Java parses it, PAIMON_OPTION_TYPES),
// is an InvalidArgument naming the option and what was expected. Opening a table written elsewhere is
// lenient about options this store does not know (Paimon has hundreds), strict about the ones it
// uses; the ones a write depends on and this store does not implement make its writer refuse
// (write-options.ts).

import { invalidArgument, notSupported } from './errors.ts';
import { formatsPerLevel, writableCodecsFor } from './data-file-format.ts';
import { partitionExpireConfig } from './partition-expire.ts';

export type MergeEngine = 'deduplicate' | 'partial-update' | 'aggregation' | 'first-row';
export type ChangelogProducer = 'none' | 'input' | 'lookup' | 'full-compaction';
export type SortOrder = 'ascending' | 'descending';

const MAX_INT = 2147483647;

/** Java's memory unit labels (MemorySize.MemoryUnit) and their size in bytes. */
const JAVA_MEMORY_UNITS: ReadonlyMap<string, bigint> = new Map(
  (
    [
      [1n, 'b', 'bytes'],
      [1024n, 'k', 'kb', 'kibibytes'],
      [1024n ** 2n, 'm', 'mb', 'mebibytes'],
      [1024n ** 3n, 'g', 'gb', 'gibibytes'],
      [1024n ** 4n, 't', 'tb', 'tebibytes'],
    ] as const
  ).flatMap(([size, ...labels]) => labels.map((l) => [l, size] as const)),
);

/**
 * A memory size in bytes as Paimon reads it (MemorySize.parseBytes): ASCII digits, then a unit
 * label of JAVA_MEMORY_UNITS in any case (none: bytes). Undefined where Java throws: no leading
 * digit, a fraction, an unknown label ('mib'), a value past a long.
 */
function javaMemoryBytes(text: string): number | undefined {
  const m = /^([0-9]+)(.*)$/s.exec(javaTrim(text));
  if (!m) return undefined;
  const label = javaTrim(m[2]!).toLowerCase();
  const size = label === '' ? 1n : JAVA_MEMORY_UNITS.get(label);
  const bytes = size === undefined ? undefined : BigInt(m[1]!) * size;
  return bytes === undefined || BigInt(m[1]!) > LONG_MAX || bytes > LONG_MAX ? undefined : Number(bytes);
}

/**
 * Parses a memory size option: Paimon's forms (`256 mb`, `64kb`, `8 mebibytes`, `1024` bytes), and
 * what earlier versions of this store also read (`1.5 mb`, `64 kib`), so a table one of them made
 * opens. Creation and ALTER take Paimon's forms only (checkOptionValues).
 */
export function parseMemorySize(text: string, option: string): number {
  const java = javaMemoryBytes(text);
  if (java !== undefined) return java;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|bytes?|k|kb|kib|m|mb|mib|g|gb|gib|t|tb|tib)?\s*$/i.exec(text);
  if (!m) throw invalidArgument(`option '${option}': expected a memory size such as '64 mb', got '${text}'`);
  const unit = (m[2] ?? 'b').toLowerCase()[0];
  const mult = { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[unit as 'b'];
  return Math.floor(Number(m[1]) * mult);
}

/** Java's duration unit labels (TimeUtils.TimeUnit: each label, and the plural of most) and their length in ns. */
const JAVA_DURATION_UNITS: ReadonlyMap<string, bigint> = new Map(
  (
    [
      [86_400_000_000_000n, 'd', 'day', 'days'],
      [3_600_000_000_000n, 'h', 'hour', 'hours'],
      [60_000_000_000n, 'min', 'm', 'minute', 'minutes'],
      [1_000_000_000n, 's', 'sec', 'secs', 'second', 'seconds'],
      [1_000_000n, 'ms', 'milli', 'millis', 'millisecond', 'milliseconds'],
      [1_000n, '\u00b5s', 'micro', 'micros', 'microsecond', 'microseconds'],
      [1n, 'ns', 'nano', 'nanos', 'nanosecond', 'nanoseconds'],
    ] as const
  ).flatMap(([ns, ...labels]) => labels.map((l) => [l, ns] as const)),
);
const LONG_MAX = 2n ** 63n - 1n;

/** Java's String.trim: strips the characters up to U+0020 at both ends (not other whitespace). */
const javaTrim = (text: string): string => text.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');

/**
 * A duration in ms as Paimon reads it (TimeUtils.parseDuration, then Duration.toMillis, which
 * truncates µs and ns): ASCII digits, then a unit label of JAVA_DURATION_UNITS in any case (none:
 * ms). Undefined where Java throws: no leading digit, a sign or a fraction, an unknown label, a
 * value past a long.
 */
function javaDurationMs(text: string): number | undefined {
  const m = /^([0-9]+)(.*)$/s.exec(javaTrim(text));
  if (!m) return undefined;
  const value = BigInt(m[1]!);
  const label = javaTrim(m[2]!).toLowerCase();
  const unitNs = label === '' ? 1_000_000n : JAVA_DURATION_UNITS.get(label);
  if (unitNs === undefined || value > LONG_MAX) return undefined;
  const ms = (value * unitNs) / 1_000_000n;
  return ms > LONG_MAX ? undefined : Number(ms);
}

/**
 * What earlier versions of this store read besides Java's forms: a fraction ('1.5 h') and 'mins'.
 * Only read (a table one of them created opens), never accepted at creation or ALTER.
 */
function legacyDurationMs(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|milli|millis|s|sec|secs|second|seconds|min|mins|minute|minutes|m|h|hour|hours|d|day|days)?\s*$/i.exec(text);
  if (!m) return undefined;
  const u = (m[2] ?? 'ms').toLowerCase();
  const mult = u.startsWith('ms') || u.startsWith('milli') ? 1
    : u === 's' || u.startsWith('sec') ? 1000
    : u === 'm' || u.startsWith('min') ? 60_000
    : u.startsWith('h') ? 3_600_000
    : 86_400_000;
  return Math.floor(Number(m[1]) * mult);
}

/** `ms` in the largest unit that holds it whole, as Java writes it ('90 min'). */
function javaDurationText(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['min', 60_000], ['s', 1000]] as const) {
    if (ms !== 0 && ms % size === 0) return `${ms / size} ${unit}`;
  }
  return `${ms} ms`;
}

/**
 * Parses a duration option in ms. `strict` (creation and ALTER): only what Paimon reads (TimeUtils:
 * `1 h`, `30 min`, `500 ms`, `1500 µs`, `7 days`…; a whole number), else InvalidArgument naming the
 * option and the form expected — a table Java cannot open is not made here. Otherwise (opening a
 * table) also the forms earlier versions of this store accepted at creation ('1.5 h', '5 mins').
 */
export function parseDuration(text: string, option: string, strict = false): number {
  const ms = javaDurationMs(text);
  if (ms !== undefined) return ms;
  const legacy = legacyDurationMs(text);
  if (strict) {
    const hint = legacy === undefined ? '' : ` (earlier versions read it as ${legacy} ms: write '${javaDurationText(legacy)}')`;
    throw invalidArgument(
      `option '${option}': expected a duration as Paimon reads it, a whole number and a unit (d, h, min, s, ms, \u00b5s, ns, or names such as 'hours'; none: ms) such as '90 min', got '${text}'${hint}`,
    );
  }
  if (legacy === undefined) throw invalidArgument(`option '${option}': expected a duration such as '1 h' or '30 s', got '${text}'`);
  return legacy;
}

/** A Paimon option's type (CoreOptions); an enum is its values, as Java names them. */
type OptionType = 'boolean' | 'int' | 'long' | 'duration' | 'memory' | readonly string[];
const STARTUP_MODES = ['default', 'latest-full', 'full', 'latest', 'latest-delta', 'compacted-full', 'from-timestamp', 'from-creation-timestamp', 'from-file-creation-time', 'from-snapshot', 'from-snapshot-full', 'incremental'];

/**
 * The type of each Paimon option (CoreOptions of the mirrored source, with its fallback keys) whose
 * value creation and ALTER check as Java parses it (checkOptionValues): the snapshot, changelog,
 * tag, partition, compaction, write, commit, scan, lookup, consumer and manifest options, and the
 * other typed ones a table here may be created or altered with. Java parses a value only when it
 * reads the option, and then fails whatever reads it (an expiration, a scan, a write), so a value
 * it cannot parse is refused where it is set here. Opening a table does not check them (a Java
 * table may hold a value no Java reader of it ever parsed); the options this store uses are parsed
 * when it opens, leniently where an earlier version took looser forms.
 */
export const PAIMON_OPTION_TYPES: ReadonlyMap<string, OptionType> = new Map<string, OptionType>([
  ...([
    'compaction.force-rewrite-all-files', 'manifest.merge-optimize.enabled',
    'partition.legacy-name', 'snapshot.clean-empty-directories',
    'snapshot.expire.clean-empty-directories', 'ignore-delete', 'first-row.ignore-delete',
    'deduplicate.ignore-delete', 'partial-update.ignore-delete', 'ignore-update-before',
    'write-only', 'write.compaction-skip', 'write-buffer-spillable', 'write-buffer-for-append',
    'commit.force-compact', 'compaction.force-up-level-0', 'changelog-producer.row-deduplicate',
    'sequence.snapshot-ordering', 'aggregation.remove-record-on-delete',
    'partial-update.remove-record-on-delete', 'scan.ignore-corrupt-files',
    'scan.ignore-lost-files', 'compaction.skip-expired-partitions',
    'partition.timestamp-format.strict', 'partition.end-input-to-done', 'scan.plan-sort-partition',
    'lookup.blob-as-descriptor', 'lookup.cache.bloom.filter.enabled', 'lookup.remote-file.enabled',
    'consumer.ignore-progress', 'consumer.changelog-only', 'tag.create-success-file',
    'tag.time-expire-enabled', 'tag.automatic-completion', 'commit.force-create-snapshot',
    'deletion-vectors.enabled', 'force-lookup', 'lookup-wait', 'changelog-producer.lookup-wait',
    'scan.fallback-branch.read-fail-fast', 'manifest.delete-file-drop-stats',
    'alter-column-null-to-not-null.disabled', 'snapshot.ignore-empty-commit',
    'index-file-in-data-file-dir', 'commit.discard-duplicate-files',
    'disable-explicit-type-casting',
  ] as const).map((k) => [k, 'boolean'] as const),
  ...([
    'bucket', 'file.compression.zstd-level', 'manifest.merge-min-count',
    'snapshot.num-retained.min', 'snapshot.num-retained.max', 'changelog.num-retained.min',
    'changelog.num-retained.max', 'snapshot.expire.limit', 'scan.max-splits-per-task',
    'scan.bucket', 'write-max-writers-to-spill', 'num-sorted-run.compaction-trigger',
    'num-sorted-run.stop-trigger', 'num-levels', 'commit.max-retries',
    'compaction.max-size-amplification-percent', 'compaction.size-ratio',
    'compaction.offpeak.start.hour', 'compaction.offpeak.end.hour', 'compaction.offpeak-ratio',
    'compaction.min.file-num', 'compaction.file-num-limit', 'scan.manifest.parallelism',
    'partition.expiration-max-num', 'partition.expiration-batch-size',
    'lookup.remote-file.level-threshold', 'write.batch-size', 'orc.write.batch-size',
    'full-compaction.delta-commits', 'tag.num-retained-max', 'lookup-compact.max-interval',
    'lookup.merge-records-threshold',
  ] as const).map((k) => [k, 'int'] as const),
  ...([
    'scan.timestamp-millis', 'log.scan.timestamp-millis', 'scan.watermark',
    'scan.file-creation-time-millis', 'scan.creation-time-millis', 'scan.snapshot-id',
    'scan.bounded.watermark', 'lookup.cache-rows', 'commit.strict-mode.last-safe-snapshot',
  ] as const).map((k) => [k, 'long'] as const),
  ...([
    'snapshot.time-retained', 'changelog.time-retained', 'continuous.discovery-interval',
    'commit.timeout', 'commit.min-retry-wait', 'commit.max-retry-wait',
    'compaction.optimization-interval', 'partition.expiration-time',
    'partition.expiration-check-interval', 'lookup.continuous.discovery-interval',
    'lookup.cache-file-retention', 'consumer.expiration-time', 'tag.creation-delay',
    'tag.creation-period-duration', 'tag.default-time-retained',
    'scan.plan-auto-tag-for-read.time-retained', 'snapshot.watermark-idle-timeout',
    'record-level.expire-time', 'partition.idle-time-to-report-statistic',
  ] as const).map((k) => [k, 'duration'] as const),
  ...([
    'manifest.target-file-size', 'manifest.full-compaction-threshold-size', 'write-buffer-size',
    'write-buffer-spill.max-disk-size', 'target-file-size', 'compaction.total-size-threshold',
    'compaction.incremental-size-threshold', 'lookup.cache-max-disk-size',
    'lookup.cache-max-memory-size', 'write.batch-memory', 'lookup.merge-buffer-size',
  ] as const).map((k) => [k, 'memory'] as const),
  ['type', ['table', 'format-table', 'materialized-table', 'object-table', 'lance-table', 'iceberg-table']],
  ['snapshot.expire.execution-mode', ['sync', 'async']],
  ['merge-engine', ['deduplicate', 'partial-update', 'aggregation', 'first-row']],
  ['write.sequence-number-init-mode', ['scan', 'snapshot']],
  ['changelog-producer', ['none', 'input', 'full-compaction', 'lookup']],
  ['sequence.field.sort-order', ['ascending', 'descending']],
  ['scan.mode', STARTUP_MODES],
  ['log.scan', STARTUP_MODES],
  ['consumer.mode', ['exactly-once', 'at-least-once']],
  ['tag.automatic-creation', ['none', 'process-time', 'watermark', 'batch']],
  ['tag.creation-period', ['daily', 'hourly', 'two-hours']],
  ['tag.period-formatter', ['with_dashes', 'without_dashes', 'without_dashes_and_spaces']],
  ['lookup-compact', ['radical', 'gentle']],
]);

/** Whether Java's parser of an option of type `type` takes `text` (OptionsUtils.convertValue). */
function javaParses(type: OptionType, text: string): boolean {
  if (typeof type !== 'string') return type.some((v) => v.toUpperCase() === text.toUpperCase()); // OptionsUtils.convertToEnum
  switch (type) {
    case 'boolean': // OptionsUtils.convertToBoolean: no trimming
      return text.toUpperCase() === 'TRUE' || text.toUpperCase() === 'FALSE';
    case 'int': // Integer.parseInt: a sign, ASCII digits here (Java also takes other Unicode digits), no spaces
      return /^[+-]?[0-9]+$/.test(text) && BigInt(text) >= -(2n ** 31n) && BigInt(text) < 2n ** 31n;
    case 'long':
      return /^[+-]?[0-9]+$/.test(text) && BigInt(text) >= -(2n ** 63n) && BigInt(text) <= LONG_MAX;
    case 'duration':
      return javaDurationMs(text) !== undefined;
    case 'memory':
      return javaMemoryBytes(text) !== undefined;
  }
}

const EXPECTED: Record<Exclude<OptionType, readonly string[]>, string> = {
  boolean: "'true' or 'false'", // any case, no spaces
  int: 'an integer', // 32 bits, no spaces
  long: 'an integer', // 64 bits
  duration: '', // parseDuration words it
  memory: "a memory size as Paimon reads it, a whole number and a unit (b, k, kb, m, mb, g, gb, t, tb, or 'mebibytes'…; none: bytes) such as '64 mb'",
};

/**
 * InvalidArgument for the first of `keys` that PAIMON_OPTION_TYPES types and whose value in `raw`
 * Java would not parse, naming the option and what is expected. Creation checks every option it
 * is given, ALTER the ones it sets.
 */
export function checkOptionValues(raw: Readonly<Record<string, string>>, keys: Iterable<string>): void {
  for (const k of keys) {
    const type = PAIMON_OPTION_TYPES.get(k);
    const text = raw[k];
    if (type === undefined || text === undefined || javaParses(type, text)) continue;
    if (type === 'duration') parseDuration(text, k, true); // throws, with an earlier version's reading
    const expected = typeof type === 'string' ? EXPECTED[type] : `one of ${type.map((a) => `'${a}'`).join(', ')}`;
    throw invalidArgument(`option '${k}': expected ${expected}, got '${text}'`);
  }
}

/**
 * InvalidArgument for a `write-buffer-size` of 0 bytes, set at creation or by an ALTER. Paimon
 * accepts it there and its writer fails at the first row (its memory pool has no page: "Mem table
 * is too small to hold a single element."); here every row flushed to a level-0 file of its own.
 * A table written elsewhere with it opens and reads (parseOptions, not strict).
 */
export function checkWriteBufferSize(raw: Readonly<Record<string, string>>): void {
  const text = raw['write-buffer-size'];
  if (text === undefined || parseMemorySize(text, 'write-buffer-size') > 0) return;
  throw invalidArgument(`option 'write-buffer-size': expected a size of at least 1 b (the bytes of rows buffered before a flush, such as '64 mb'), got '${text}': a buffer of 0 bytes would flush every row to a level-0 file of its own, and Paimon's writer fails at its first row`);
}

function parseInt32(text: string, option: string, min: number, max = MAX_INT): number {
  if (!/^\s*[+-]?\d+\s*$/.test(text)) throw invalidArgument(`option '${option}': expected an integer, got '${text}'`);
  const n = Number(text);
  if (n < min || n > max) throw invalidArgument(`option '${option}': expected an integer in ${min}..${max}, got ${n}`);
  return n;
}

function parseBool(text: string, option: string): boolean {
  const t = text.trim().toLowerCase();
  if (t === 'true') return true;
  if (t === 'false') return false;
  throw invalidArgument(`option '${option}': expected 'true' or 'false', got '${text}'`);
}

function parseEnum<T extends string>(text: string, option: string, allowed: readonly T[]): T {
  const t = text.trim().toLowerCase() as T;
  if (!allowed.includes(t)) {
    throw invalidArgument(`option '${option}': expected one of ${allowed.map((a) => `'${a}'`).join(', ')}, got '${text}'`);
  }
  return t;
}

export function parseList(text: string | undefined): string[] {
  if (text === undefined) return [];
  return text.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
}

/** Options this store reads. Any other option is refused at table creation unless listed in PASS_THROUGH. */
export const DECLARED_OPTIONS: Record<string, string> = {
  bucket: 'fixed bucket count per partition (≥ 1); Paimon defaults to -1 (dynamic); tables Java made with -1 (dynamic) or -2 (postpone) are read here, not created or written',
  'bucket-key': 'comma list of primary-key columns hashed to choose the bucket (default: the trimmed primary key)',
  'file.format': 'data file format: parquet (default) or avro',
  'file.format.per.level': "data file format per LSM level, e.g. '0:avro,5:parquet' (data-file-format.ts)",
  'deletion-vectors.enabled': "tables with deletion vectors are read (deletion-vector.ts) and written (dv-writer.ts: every merge engine, sequence.field, changelog none/input/lookup; append tables: read, kept across commits, applied by compaction); not with changelog-producer full-compaction or merge-engine first-row (Paimon refuses both pairs; a table an earlier version made with one is read and written)",
  'disable-explicit-type-casting': 'ALTER may only widen column types (schema-change.ts)',
  'file.compression': "data file compression as Java's writer of the format takes it: Parquet snappy, gzip or none (any case), Avro snappy, deflate or null (spelled exactly); zstd (Paimon default) is read only here, refused at creation; a table written elsewhere may name any codec (read; a data file written into it is refused)",
  'manifest.compression': 'Avro codec of manifests: deflate (default here), snappy or null, spelled exactly (Avro\'s names, as Paimon takes them); a table written elsewhere may name any (manifests written here use deflate)',
  'merge-engine': 'deduplicate (default), partial-update, aggregation or first-row (merge/README.md)',
  'sequence.field': 'comma list of columns compared before the system sequence number',
  'sequence.field.sort-order': 'ascending (default) or descending',
  'ignore-delete': 'drop -D and -U input; of it and its fallback keys the first present decides, in this order (Paimon)',
  'ignore-update-before': 'drop -U input',
  'deduplicate.ignore-delete': 'fallback of ignore-delete',
  'partial-update.ignore-delete': 'fallback of ignore-delete',
  'first-row.ignore-delete': 'fallback of ignore-delete',
  'partial-update.remove-record-on-delete': 'a -D removes the whole row in partial-update',
  'partial-update.remove-record-on-sequence-group': 'sequence groups whose -D removes the whole row',
  'fields.default-aggregate-function': 'aggregate function of columns without fields.<f>.aggregate-function (aggregation; partial-update group columns)',
  'aggregation.remove-record-on-delete': 'a -D removes the whole row in aggregation (default false)',
  'changelog-producer': 'none (default), input, lookup or full-compaction (see CHANGELOG-DESIGN.md)',
  'changelog-producer.row-deduplicate': 'lookup, full-compaction: no -U/+U pair when a value did not change (default false)',
  'full-compaction.delta-commits': 'primary-key tables: a full compaction after every N commits (default none, as Paimon; Flink sinks use 1 with full-compaction); not with changelog-producer lookup (Paimon refuses the pair)',
  'changelog-producer.row-deduplicate-ignore-fields': 'columns left out of the row-deduplicate comparison',
  'changelog.num-retained.min': 'checked (≥ 1, ≤ max); changelog files follow their snapshot, so a value above snapshot.num-retained.min is refused at creation and ALTER',
  'changelog.num-retained.max': 'checked; changelog files follow their snapshot, so a value above snapshot.num-retained.max is refused at creation and ALTER',
  'changelog.time-retained': 'checked; changelog files follow their snapshot, so a value above snapshot.time-retained is refused at creation and ALTER',
  'write-buffer-size': 'bytes of rows buffered in memory before a flush to level 0 (default 256 mb)',
  'target-file-size': 'size at which a compaction output file is rolled (default 128 mb; append tables 256 mb, as Paimon)',
  'num-sorted-run.compaction-trigger': 'sorted runs that trigger a compaction (default 5; at least 1 here — any value of a table written elsewhere is read, a writer refused below 1)',
  'num-sorted-run.stop-trigger': 'sorted runs at which writes wait for compaction (default trigger + 3; below the trigger refused at creation, read as the trigger in a table written elsewhere, as Paimon)',
  'num-levels': 'LSM levels (default trigger + 1)',
  'compaction.max-size-amplification-percent': 'size amplification that triggers a full compaction (default 200)',
  'compaction.size-ratio': 'size ratio percentage for universal compaction (default 1)',
  'write-only': 'skip compaction and expiration in the writer',
  'snapshot.num-retained.min': 'snapshots always kept (default 10)',
  'snapshot.num-retained.max': 'snapshots kept at most (default unlimited)',
  'snapshot.time-retained': 'age after which snapshots beyond the minimum expire (default 1 h)',
  'snapshot.expire.limit': 'snapshots expired per run at most (default 50)',
  'partition.default-name': 'directory name of a null partition value',
  'partition.expiration-time': 'partitioned tables: commits drop partitions older than this (partition-expire.ts; not write-only, as Paimon)',
  'partition.expiration-check-interval': 'how often a writer looks for expired partitions, at a commit (default 1 h)',
  'partition.expiration-strategy': "values-time (default: the time in the partition's values) or update-time (its newest file's creation time)",
  'partition.expiration-max-num': 'partitions dropped at most per check (default 100)',
  'partition.expiration-batch-size': 'partitions per dropping snapshot (default: all of a check in one)',
  'partition.timestamp-formatter': "Java DateTimeFormatter pattern of the partition time (default 'yyyy-MM-dd[ HH:mm:ss]'; letters y u M d H m s S here)",
  'partition.timestamp-pattern': "how the partition time is built from the values, e.g. '$dt $hour:00:00' (default: the first partition value)",
  'partition.timestamp-format.strict': 'refuse a row whose partition values do not give a time (default false)',
  'tag.default-time-retained': 'retention of a tag created without one (as Paimon\'s manual tag creation); tag expiration honours it (default: kept until deleted)',
  'commit.max-retries': 'commit retries after a lost race (default 10)',
};

/**
 * Paimon options accepted and stored but not acted upon by this store, their values checked by
 * type where PAIMON_OPTION_TYPES has them (checkOptionValues) (`partition.legacy-name`
 * only as 'true', its default: parseOptions; `type`, `manifest.format` and
 * `tag.automatic-creation` only with values a write here honours: write-options.ts, checked by
 * Table.create and ALTER).
 */
const PASS_THROUGH = new Set([
  'path', 'type', 'comment', 'owner', 'file.compression.zstd-level', 'metadata.stats-mode',
  'manifest.format', 'manifest.target-file-size', 'manifest.merge-min-count', 'data-file.prefix',
  'changelog-file.prefix', 'partition.legacy-name', 'consumer.expiration-time', 'tag.automatic-creation',
  'file.compression.per.level',
  'continuous.discovery-interval', 'scan.mode', 'snapshot.clean-empty-directories',
]);
/**
 * `tag.default-time-retained` in ms, undefined when not set. A zero (Java's tag would expire at
 * once) is refused when set here (`strict`: creation and ALTER); a table written elsewhere with it
 * opens, and a tag created here without a retention is refused then (Table.createTag).
 */
export function tagDefaultRetention(raw: Readonly<Record<string, string>>, strict: boolean): number | undefined {
  const text = raw['tag.default-time-retained'];
  if (text === undefined) return undefined;
  const ms = parseDuration(text, 'tag.default-time-retained');
  if (strict && ms <= 0) throw invalidArgument(`option 'tag.default-time-retained': expected a positive duration such as '7 d', got '${text}'`);
  return ms;
}

/**
 * InvalidArgument for `full-compaction.delta-commits` beside `changelog-producer=lookup`: Paimon 2.0+
 * refuses the pair (SchemaValidation.validateTableSchema, #7999) at create and ALTER and in every
 * table copy its engines make, so Flink and Spark could not use such a table. Checked where the
 * options are set here (creation, ALTER); a table an earlier writer made with both still opens.
 */
export function checkLookupFullCompaction(raw: Readonly<Record<string, string>>, producer: ChangelogProducer): void {
  if (producer === 'lookup' && raw['full-compaction.delta-commits'] !== undefined) {
    throw invalidArgument(
      "option 'full-compaction.delta-commits' conflicts with 'changelog-producer' = 'lookup' (Paimon refuses the pair); " +
        "use 'changelog-producer' = 'full-compaction' for periodic full compactions with a changelog, or leave 'full-compaction.delta-commits' out",
    );
  }
}

/**
 * InvalidArgument for deletion vectors beside a changelog producer or merge engine Paimon refuses
 * them with (SchemaValidation.validateForDeletionVectors, at create and ALTER): `full-compaction`
 * (only none, input and lookup are supported) and `first-row` (unless `pk-clustering-override`,
 * refused here anyway: write-options.ts). Checked where they are set here (creation, and an ALTER
 * of one of the three, which are immutable here, so that it is told Paimon's reason:
 * schema-change.ts); a table an earlier version or another writer made with such a pair opens and
 * is read, and written as before (dv-writer.ts).
 */
export function checkDeletionVectorsPairs(raw: Readonly<Record<string, string>>, producer: ChangelogProducer, engine: MergeEngine): void {
  if ((raw['deletion-vectors.enabled'] ?? 'false').trim().toLowerCase() !== 'true') return;
  const dv = `option 'deletion-vectors.enabled' = '${raw['deletion-vectors.enabled']}'`;
  if (producer !== 'none' && producer !== 'input' && producer !== 'lookup') {
    throw invalidArgument(
      `${dv} conflicts with 'changelog-producer' = '${raw['changelog-producer']}': Paimon refuses the pair ` +
        `("Deletion vectors mode is only supported for NONE/INPUT/LOOKUP changelog producer now."); use changelog-producer none, input or lookup, or no deletion vectors`,
    );
  }
  if (engine === 'first-row' && (raw['pk-clustering-override'] ?? 'false').trim().toLowerCase() !== 'true') {
    throw invalidArgument(
      `${dv} conflicts with 'merge-engine' = '${raw['merge-engine']}': Paimon refuses the pair ` +
        `("First row merge engine does not need deletion vectors because there is no deletion of old data in this merge engine."); leave deletion vectors out`,
    );
  }
}

/**
 * `file.compression.per.level` ('0:lz4,1:zstd', Paimon's map of level to codec): InvalidArgument
 * unless every part is a level number and a codec name.
 */
export function compressionPerLevel(raw: Readonly<Record<string, string>>): Map<number, string> {
  const out = new Map<number, string>();
  const text = raw['file.compression.per.level'];
  if (text === undefined || text.trim() === '') return out;
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)\s*:\s*([A-Za-z0-9_]+)\s*$/.exec(part);
    if (!m) throw invalidArgument(`option 'file.compression.per.level': expected 'level:codec,…' such as '0:lz4,1:zstd', got '${text}'`);
    out.set(Number(m[1]), m[2]!.toLowerCase());
  }
  return out;
}

/** `file.compression` values this store writes (data-file-format.ts); the others are read only. */
const WRITABLE_COMPRESSION = new Set(['snappy', 'gzip', 'deflate', 'none', 'uncompressed', 'null']);

/** Parquet's codec names (CompressionCodecName), which Paimon's Parquet writer takes in any case, besides 'none'. */
const PARQUET_CODECS = new Set(['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'LZO', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW']);
/** Avro's codec names (CodecFactory.fromString, an exact lookup), which Paimon's Avro writer takes besides 'zstd' in any case. */
const AVRO_CODECS = new Set(['null', 'deflate', 'snappy', 'bzip2', 'xz', 'zstandard']);

/**
 * Whether Paimon's writer of `format` takes `codec` (its format factories): Parquet maps 'none' (any
 * case) to uncompressed and looks the rest up as CompressionCodecName.fromConf (upper-cased,
 * nothing trimmed); Avro maps 'zstd' (any case) and hands the rest to Avro's
 * CodecFactory.fromString (spelled exactly). A codec either refuses fails a Java engine at its
 * first data file of that format, not when the option is set.
 */
function javaWriterTakes(format: DataFormatName, codec: string): boolean {
  if (format === 'parquet') return codec.toLowerCase() === 'none' || (/^[A-Za-z0-9_]+$/.test(codec) && PARQUET_CODECS.has(codec.toUpperCase()));
  if (format === 'avro') return codec.toLowerCase() === 'zstd' || AVRO_CODECS.has(codec);
  return true; // orc: refused here on its own (parseOptions, data-file-format.ts)
}

type DataFormatName = 'parquet' | 'avro' | 'orc';

const CODECS_EXPECTED: Record<'parquet' | 'avro', string> = {
  parquet: "expected 'snappy', 'gzip', 'none' or 'uncompressed' (Parquet's codec names, any case; Java also takes zstd, lz4, lzo, brotli and lz4_raw, which this store does not write)",
  avro: "expected 'snappy', 'deflate' or 'null' (Avro's codec names, spelled exactly; Java also takes zstd, bzip2, xz and zstandard, which this store does not write)",
};

/**
 * InvalidArgument when a data-file codec is one Paimon's writer for the format it is used with
 * refuses (javaWriterTakes): `file.compression` with `file.format` and every format of
 * `file.format.per.level`, and each `file.compression.per.level` codec with its level's format (as
 * Java picks them: KeyValueFileWriterFactory). E.g. 'deflate' for Parquet, 'gzip' or 'none' for
 * Avro, whose writers here wrote them as gzip, deflate and null: the files read in Java, but every
 * Java engine's write failed. Checked where these options are set here (creation; ALTER when it
 * sets one of them: schema-change.ts); a table written elsewhere with such a codec opens, and is
 * written here as before.
 */
export function checkJavaCodecs(raw: Readonly<Record<string, string>>, numLevels: number): void {
  const format = (raw['file.format'] ?? 'parquet').trim().toLowerCase() as DataFormatName;
  const formatPerLevel = formatsPerLevel(raw);
  const codec = raw['file.compression'] ?? 'zstd';
  const codecPerLevel = new Map<number, string>();
  const perLevelText = raw['file.compression.per.level'];
  if (perLevelText !== undefined && perLevelText.trim() !== '') {
    for (const part of perLevelText.split(',')) {
      const m = /^\s*(\d+)\s*:\s*([A-Za-z0-9_]+)\s*$/.exec(part);
      if (m) codecPerLevel.set(Number(m[1]), m[2]!);
    }
  }
  const check = (f: DataFormatName, c: string, level: number | undefined): void => {
    if (f === 'orc' || javaWriterTakes(f, c)) return;
    const name = f === 'avro' ? 'Avro' : 'Parquet';
    const option = level !== undefined && codecPerLevel.has(level) ? `option 'file.compression.per.level': '${c}' for level ${level}` : `option 'file.compression': '${c}'`;
    const where = level !== undefined && formatPerLevel.has(level) ? ` (level ${level} is written in ${name}: 'file.format.per.level')` : '';
    throw invalidArgument(`${option} is not a codec Paimon's ${name} writer takes${where}: a Java engine's first ${name} data file would fail; ${CODECS_EXPECTED[f]}`);
  };
  const levels = new Set([...formatPerLevel.keys(), ...codecPerLevel.keys()]);
  // The table's own pair, for the levels neither map names (a writer has levels 0..num-levels - 1).
  if ([...levels].filter((l) => l < numLevels).length < numLevels) check(format, codec, undefined);
  for (const level of levels) check(formatPerLevel.get(level) ?? format, codecPerLevel.get(level) ?? codec, level);
}
/** `ignore-delete` and its fallback keys, in the order Paimon looks them up. */
const IGNORE_DELETE_KEYS = ['ignore-delete', 'first-row.ignore-delete', 'deduplicate.ignore-delete', 'partial-update.ignore-delete'] as const;

/**
 * `changelog.num-retained.min|max` and `changelog.time-retained` fall back to the snapshot values
 * and are checked as Paimon's SchemaValidation checks them (min ≥ 1, min ≤ max). A changelog kept
 * longer than its snapshots (CoreOptions.changelogLifecycleDecoupled) is not written here: creating
 * such a table is refused (`strict`; ALTER calls this strictly when it changes one of these); one
 * Java made opens (expire.ts leaves Java's `changelog/` files alone).
 */
export function checkChangelogRetention(raw: Readonly<Record<string, string>>, strict: boolean, snapMin: number, snapMax: number, snapTimeMs: number): void {
  const min = raw['changelog.num-retained.min'] === undefined ? snapMin : parseInt32(raw['changelog.num-retained.min'], 'changelog.num-retained.min', 1);
  const max = raw['changelog.num-retained.max'] === undefined ? snapMax : parseInt32(raw['changelog.num-retained.max'], 'changelog.num-retained.max', 1);
  if (min > max) throw invalidArgument(`option 'changelog.num-retained.min' (${min}) must not be larger than 'changelog.num-retained.max' (${max})`);
  const timeMs = raw['changelog.time-retained'] === undefined ? snapTimeMs : parseDuration(raw['changelog.time-retained'], 'changelog.time-retained');
  if (!strict) return;
  const longer = changelogOutlivesSnapshots(raw, snapMin, snapMax, snapTimeMs)?.text;
  if (longer) {
    throw notSupported(`option ${longer}: a changelog kept longer than its snapshots is not supported here (changelog files expire with their snapshot); expected changelog retention no longer than the snapshots'`);
  }
}

/**
 * Which changelog retention outlives the snapshots' (CoreOptions.changelogLifecycleDecoupled), as
 * text naming both options; undefined when none does. The values must have passed
 * checkChangelogRetention. A writer refuses such a table (write-options.ts): expiration here
 * deletes a changelog with its snapshot.
 */
export function changelogOutlivesSnapshots(raw: Readonly<Record<string, string>>, snapMin: number, snapMax: number, snapTimeMs: number): { key: string; text: string } | undefined {
  const min = raw['changelog.num-retained.min'] === undefined ? snapMin : parseInt32(raw['changelog.num-retained.min'], 'changelog.num-retained.min', 1);
  const max = raw['changelog.num-retained.max'] === undefined ? snapMax : parseInt32(raw['changelog.num-retained.max'], 'changelog.num-retained.max', 1);
  const timeMs = raw['changelog.time-retained'] === undefined ? snapTimeMs : parseDuration(raw['changelog.time-retained'], 'changelog.time-retained');
  return max > snapMax ? { key: 'changelog.num-retained.max', text: `'changelog.num-retained.max' (${max}) above 'snapshot.num-retained.max' (${snapMax})` }
    : min > snapMin ? { key: 'changelog.num-retained.min', text: `'changelog.num-retained.min' (${min}) above 'snapshot.num-retained.min' (${snapMin})` }
    : timeMs > snapTimeMs ? { key: 'changelog.time-retained', text: `'changelog.time-retained' (${timeMs} ms) above 'snapshot.time-retained' (${snapTimeMs} ms)` }
    : undefined;
}

/** Paimon's RollingFileWriter.CHECK_ROLLING_RECORD_CNT: it checks a file's size every this many rows. */
const ROLLING_CHECK_ROWS = 1000;

/**
 * Rows per output file for `target-file-size` (`targetBytes`), estimated from the input's `bytes`
 * over `rows`. A target below one row's size ('0' included, which Paimon accepts) rolls where
 * Paimon's writer checks the size, every 1000 rows, not after every row.
 */
export function rowsPerTargetFile(targetBytes: number, bytes: number, rows: number): number {
  const n = Math.floor(targetBytes / Math.max(1, bytes / Math.max(1, rows)));
  return n >= 1 ? n : ROLLING_CHECK_ROWS;
}

const FIELD_OPTION = /^fields\.(.+)\.(sequence-group|aggregate-function|ignore-retract|list-agg-delimiter|distinct|default-value)$/;

export interface TableOptions {
  readonly raw: Readonly<Record<string, string>>;
  readonly bucket: number;
  readonly bucketKey: string[];
  readonly fileFormat: 'parquet' | 'avro';
  readonly fileCompression: 'zstd' | 'snappy' | 'gzip' | 'none';
  readonly manifestCompression: 'deflate' | 'snappy' | 'null';
  readonly mergeEngine: MergeEngine;
  readonly sequenceFields: string[];
  readonly sequenceSortOrder: SortOrder;
  readonly ignoreDelete: boolean;
  readonly ignoreUpdateBefore: boolean;
  readonly removeRecordOnDelete: boolean;
  readonly removeRecordOnSequenceGroup: string[];
  /** `fields.<a,b>.sequence-group` = 'x,y': sequence fields → the columns they order. */
  readonly sequenceGroups: Array<{ sequenceFields: string[]; columns: string[] }>;
  readonly changelogProducer: ChangelogProducer;
  readonly writeBufferBytes: number;
  readonly targetFileBytes: number;
  readonly compactionTrigger: number;
  readonly stopTrigger: number;
  readonly numLevels: number;
  readonly maxSizeAmplificationPercent: number;
  readonly sizeRatio: number;
  readonly writeOnly: boolean;
  /** `full-compaction.delta-commits`: the writer fully compacts every bucket after this many commits. */
  readonly fullCompactionDeltaCommits: number | undefined;
  readonly snapshotsRetainedMin: number;
  readonly snapshotsRetainedMax: number;
  readonly snapshotTimeRetainedMs: number;
  readonly snapshotExpireLimit: number;
  readonly partitionDefaultName: string;
  /** `partition.legacy-name` (default true): false names DATE/TIME/TIMESTAMP partition directories by a cast to STRING (partition-path.ts). */
  readonly partitionLegacyName: boolean;
  /** `data-file.path-directory`: the directory bucket directories are under (relative to the table root), when set. */
  readonly dataFilePathDirectory: string | undefined;
  /** `index-file-in-data-file-dir`: index files (deletion vectors) without an external path are in their bucket directory, not `index/`. */
  readonly indexFileInDataFileDir: boolean;
  /** `tag.default-time-retained`: the retention a tag created without one gets (Paimon's manual tag creation). */
  readonly tagDefaultTimeRetainedMs: number | undefined;
  readonly commitMaxRetries: number;
}

/**
 * Parses and validates a table's options. `strict` (table creation) refuses unknown options;
 * otherwise they are kept but ignored. `hasPrimaryKey` picks Paimon's default target file size.
 */
export function parseOptions(raw: Record<string, string>, strict: boolean, hasPrimaryKey = true): TableOptions {
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== 'string') throw invalidArgument(`option '${k}': expected a string value, got ${typeof v}`);
    if (strict && !(k in DECLARED_OPTIONS) && !PASS_THROUGH.has(k) && !FIELD_OPTION.test(k)) {
      throw invalidArgument(`unknown option '${k}'`);
    }
  }
  const get = (k: string): string | undefined => raw[k];
  const bool = (k: string, d: boolean): boolean => (get(k) === undefined ? d : parseBool(get(k)!, k));
  const int = (k: string, d: number, min: number, max?: number): number =>
    get(k) === undefined ? d : parseInt32(get(k)!, k, min, max);

  const bucket = int('bucket', -1, -2);
  const format = get('file.format') ?? 'parquet';
  if (format !== 'parquet' && format !== 'avro') {
    if (format === 'orc') {
      if (strict) throw notSupported(`option 'file.format': '${format}' data files are not supported; use 'parquet' or 'avro'`);
    } else throw invalidArgument(`option 'file.format': expected 'parquet', 'avro' or 'orc', got '${format}'`);
  }
  // A table written elsewhere may name any codec its format takes (lzo, brotli, lz4_raw, zlib…):
  // every data file records its own codec, so it opens and reads; a codec this store cannot write
  // (zstd and the rest) is refused when a data file is written (data-file-format.ts).
  const compressionText = get('file.compression') ?? 'zstd';
  const compression = strict || WRITABLE_COMPRESSION.has(compressionText.trim().toLowerCase())
    ? parseEnum(compressionText, 'file.compression', ['zstd', 'snappy', 'gzip', 'deflate', 'none', 'uncompressed', 'null', 'lz4'] as const)
    : 'zstd';
  if (strict) {
    // Avro data files (data-file-format.ts): per-level formats must parse; zstd cannot be written.
    const avro = format === 'avro' || [...formatsPerLevel(raw).values()].includes('avro');
    if (avro && compression === 'zstd') throw notSupported(`option 'file.compression': zstd Avro data files cannot be written here (no zstd compressor on Node 20); use ${writableCodecsFor(raw)}`);
  }
  // Parquet too (format/parquet/compression.ts): named at creation, not at the first flush.
  if (strict && compression === 'zstd' && get('file.compression') !== undefined) {
    throw notSupported(`option 'file.compression': zstd data files cannot be written here (no zstd compressor on Node 20); use ${writableCodecsFor(raw)}`);
  }
  if (strict && compression === 'lz4') throw notSupported(`option 'file.compression': 'lz4' cannot be written here; use ${writableCodecsFor(raw)}`);
  // Elsewhere-written: any Avro codec (bzip2, xz, zstd…) is kept; manifests written here use
  // deflate then, which Java reads (an Avro file names its codec in its header).
  // Set here (strict), zstd is refused saying why: zstd manifests Java wrote are read (fzstd), but
  // this store has no zstd compressor; an ALTER removing the option leaves Java's writers their default.
  const manifestText = get('manifest.compression') ?? 'deflate';
  if (strict && manifestText.trim().toLowerCase() === 'zstd') {
    throw notSupported(
      `option 'manifest.compression': zstd manifests cannot be written here (Node 20 has no zstd compressor and none is installed; zstd manifests Java wrote are read); ` +
        `use deflate, snappy or null, or remove the option by an ALTER (Java's writers then use their default, zstd; this store writes deflate)`,
    );
  }
  // Set here, the exact Avro codec names: Paimon's engines hand the value as it is to Avro
  // (CodecFactory.fromString, an exact lookup; only 'zstd' is mapped), so 'none', 'Deflate' or
  // ' snappy' would fail every Java commit ("Unrecognized codec"). Read leniently below.
  if (strict && !['deflate', 'snappy', 'null'].includes(manifestText)) {
    const none = manifestText.trim().toLowerCase() === 'none' ? "; use 'null' for manifests without compression" : '';
    throw invalidArgument(
      `option 'manifest.compression': expected one of 'deflate', 'snappy', 'null' (Avro's codec names, spelled exactly: Paimon's engines take no other), got '${manifestText}'${none}`,
    );
  }
  const manifestCompression = strict || ['deflate', 'snappy', 'null', 'none'].includes(manifestText.trim().toLowerCase())
    ? parseEnum(manifestText, 'manifest.compression', ['deflate', 'snappy', 'null', 'none'] as const)
    : 'zstd';
  const mergeEngine = parseEnum(get('merge-engine') ?? 'deduplicate', 'merge-engine', ['deduplicate', 'partial-update', 'aggregation', 'first-row'] as const);
  const changelogProducer = parseEnum(get('changelog-producer') ?? 'none', 'changelog-producer', ['none', 'input', 'lookup', 'full-compaction'] as const);
  if (strict) checkLookupFullCompaction(raw, changelogProducer);
  if (strict) checkDeletionVectorsPairs(raw, changelogProducer, mergeEngine);
  // Paimon checks no bound (CoreOptions.numSortedRunCompactionTrigger): a table Java made with any
  // trigger opens and reads; a writer here is refused below 1 (write-options.ts), where Java's
  // universal compaction picks more runs than there are. 1 (compact whenever a bucket has two runs)
  // works as in Java and may be created.
  const trigger = int('num-sorted-run.compaction-trigger', 5, strict ? 1 : -MAX_INT - 1);
  // Paimon takes max(trigger, stop-trigger) (CoreOptions.numSortedRunStopTrigger): a table written
  // elsewhere with a lower stop trigger opens; creating one here is refused as meaningless.
  const stopTrigger = strict ? int('num-sorted-run.stop-trigger', trigger + 3, trigger) : Math.max(trigger, int('num-sorted-run.stop-trigger', trigger + 3, 1));
  // Paimon checks no bound either (CoreOptions.numLevels): a table Java made with num-levels 1 (or
  // less) opens and reads — reads do not depend on levels. Java's writer counts a bucket's levels
  // as max(num-levels, highest file level + 1) and fails below 2 (Levels: "Number of levels must be
  // at least 2") unless write-only; so does the writer here (levels.ts checkBucketLevels). Creating
  // such a table, or an ALTER to it (schema-change.ts), is refused: no writer could compact its new buckets.
  const numLevels = int('num-levels', trigger + 1, strict ? 2 : -MAX_INT - 1);

  const sequenceGroups: Array<{ sequenceFields: string[]; columns: string[] }> = [];
  for (const [k, v] of Object.entries(raw)) {
    const m = FIELD_OPTION.exec(k);
    if (m && m[2] === 'sequence-group') {
      const columns = parseList(v);
      if (columns.length === 0) throw invalidArgument(`option '${k}': expected a comma list of columns, got '${v}'`);
      sequenceGroups.push({ sequenceFields: parseList(m[1]), columns });
    }
  }
  // Paimon's fallback keys: the first key present decides (CoreOptions.IGNORE_DELETE), so an
  // explicit 'ignore-delete' = 'false' wins over 'partial-update.ignore-delete' = 'true'. Every one
  // present must still parse.
  let ignoreDelete: boolean | undefined;
  for (const k of IGNORE_DELETE_KEYS) {
    if (get(k) === undefined) continue;
    const v = bool(k, false);
    if (ignoreDelete === undefined) ignoreDelete = v;
  }
  // Read elsewhere from the raw options (deletion-vector.ts, schema-change.ts): checked here so a
  // value such as 'yes' is refused, not read as false.
  bool('deletion-vectors.enabled', false);
  // Stored for Java's writers (this store writes every level with 'file.compression'; a reader
  // takes each file's own codec): checked for its form where it is set here, creation and ALTER.
  if (strict) compressionPerLevel(raw);
  // Set here, a codec the Java writer of the format it is used with takes (checkJavaCodecs).
  if (strict) checkJavaCodecs(raw, numLevels);
  bool('disable-explicit-type-casting', false);
  // Partition directories are always written with Paimon's legacy names (partition-path.ts); a
  // Java reader of a table saying 'false' would look for DATE, TIME and TIMESTAMP partitions
  // elsewhere, so creating one is refused rather than the option ignored (a table written
  // elsewhere: its writer is refused when it has such a partition column, write-options.ts).
  if (!bool('partition.legacy-name', true) && strict) {
    throw notSupported(`option 'partition.legacy-name': 'false' is not supported (partition directories are written with Paimon's legacy names); expected 'true' or no value`);
  }

  // Read leniently below (a table an earlier version made opens); where set here, as Java reads them.
  if (strict) checkOptionValues(raw, Object.keys(raw));
  if (strict) checkWriteBufferSize(raw);
  const retainedMin = int('snapshot.num-retained.min', 10, 1);
  const retainedMax = int('snapshot.num-retained.max', MAX_INT, 1);
  // As Paimon's SchemaValidation: a max below the min (10 unless set) would be ignored silently.
  if (retainedMin > retainedMax) {
    throw invalidArgument(`option 'snapshot.num-retained.min' (${retainedMin}) must not be larger than 'snapshot.num-retained.max' (${retainedMax})`);
  }
  const snapshotTimeRetainedMs = get('snapshot.time-retained') === undefined ? 3_600_000 : parseDuration(get('snapshot.time-retained')!, 'snapshot.time-retained');
  checkChangelogRetention(raw, strict, retainedMin, retainedMax, snapshotTimeRetainedMs);
  const tagDefaultTimeRetained = tagDefaultRetention(raw, strict);
  // Read by the writer (partition-expire.ts); checked where set here, creation and ALTER.
  if (strict) partitionExpireConfig(raw, true);
  return {
    raw: { ...raw },
    bucket,
    bucketKey: parseList(get('bucket-key')),
    fileFormat: format === 'avro' ? 'avro' : 'parquet',
    // 'zstd' stands for every codec not written here (lz4 and the others kept above).
    fileCompression: compression === 'uncompressed' || compression === 'null' ? 'none' : compression === 'lz4' ? 'zstd' : compression === 'deflate' ? 'gzip' : compression,
    manifestCompression: manifestCompression === 'none' ? 'null' : manifestCompression === 'zstd' ? 'deflate' : manifestCompression,
    mergeEngine,
    sequenceFields: parseList(get('sequence.field')),
    sequenceSortOrder: parseEnum(get('sequence.field.sort-order') ?? 'ascending', 'sequence.field.sort-order', ['ascending', 'descending'] as const),
    ignoreDelete: ignoreDelete ?? false,
    ignoreUpdateBefore: bool('ignore-update-before', false),
    removeRecordOnDelete: bool('partial-update.remove-record-on-delete', false),
    removeRecordOnSequenceGroup: parseList(get('partial-update.remove-record-on-sequence-group')),
    sequenceGroups,
    changelogProducer,
    writeBufferBytes: get('write-buffer-size') === undefined ? 256 * 1024 * 1024 : parseMemorySize(get('write-buffer-size')!, 'write-buffer-size'),
    // Paimon's default differs by table kind (CoreOptions.targetFileSize(hasPrimaryKey)).
    targetFileBytes: get('target-file-size') === undefined ? (hasPrimaryKey ? 128 : 256) * 1024 * 1024 : parseMemorySize(get('target-file-size')!, 'target-file-size'),
    compactionTrigger: trigger,
    stopTrigger,
    numLevels,
    maxSizeAmplificationPercent: int('compaction.max-size-amplification-percent', 200, 0),
    sizeRatio: int('compaction.size-ratio', 1, 0),
    writeOnly: bool('write-only', false),
    fullCompactionDeltaCommits: get('full-compaction.delta-commits') === undefined ? undefined : int('full-compaction.delta-commits', 1, 1),
    snapshotsRetainedMin: retainedMin,
    snapshotsRetainedMax: retainedMax,
    snapshotTimeRetainedMs,
    snapshotExpireLimit: int('snapshot.expire.limit', 50, 1),
    partitionDefaultName: get('partition.default-name') ?? '__DEFAULT_PARTITION__',
    partitionLegacyName: bool('partition.legacy-name', true),
    dataFilePathDirectory: get('data-file.path-directory')?.trim() || undefined,
    indexFileInDataFileDir: bool('index-file-in-data-file-dir', false),
    tagDefaultTimeRetainedMs: tagDefaultTimeRetained,
    commitMaxRetries: int('commit.max-retries', 10, 0),
  };
}
