// Event contracts: versioned record schemas with a declared compatibility mode, kept as JSON files
// in `<data>/contracts/<name>/v<version>.json`, and the checks that go with them.
//
// Semantics follow Confluent Schema Registry for Avro records, with Paimon types for fields:
//   reader R can read data written with W  ⇔  for every field f of R:
//     f is in W  → W's type widens to R's type (`widens`), and nullable data never meets NOT NULL;
//     f not in W → f has a default.
//   (Fields of W that R lacks are ignored.)
//   BACKWARD: R = new, W = previous.   FORWARD: R = previous, W = new.   FULL: both.
//   *_TRANSITIVE: against every earlier version instead of only the latest. NONE: no check.
// A default must be given explicitly (`"default": null` for an optional nullable field), as in
// Avro: a nullable field without one is still a required field.
//
// Concurrency: one registry per data directory per process; writes are atomic (temp + rename) so
// a reader never sees half a file. Invariants: versions of a name are 1..n without gaps; a file's
// content never changes once written; `register` of an identical contract is a no-op.

import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonErrorWhere } from '../lsm/errors.ts';
import { localFileIO } from '../lsm/file-io.ts';
import { isNestedType, parseType, typeToString, valueFromJson, valueToJson, type DataType } from '../lsm/types.ts';
import { FORBIDDEN_KEYS, hasLoneSurrogate, joinPath, refuse, type Envelope, type Refusal, type RowImage } from './envelope.ts';
import { fastConverter, NO_FAST, type FastConvert } from './fast-values.ts';

export const COMPATIBILITY_MODES = [
  'BACKWARD',
  'BACKWARD_TRANSITIVE',
  'FORWARD',
  'FORWARD_TRANSITIVE',
  'FULL',
  'FULL_TRANSITIVE',
  'NONE',
] as const;
export type Compatibility = (typeof COMPATIBILITY_MODES)[number];

export interface ContractField {
  readonly name: string;
  /** A Paimon type string: 'STRING NOT NULL', 'INT', 'DECIMAL(12, 3)', 'TIMESTAMP(3)'. */
  readonly type: string;
  /** JSON form of the value used when the field is absent (types.ts's JSON forms). */
  readonly default?: unknown;
  /** For STRING/CHAR/VARCHAR fields: the allowed values (an Avro enum). */
  readonly symbols?: readonly string[];
  readonly doc?: string;
}

export interface Contract {
  readonly name: string;
  readonly version: number;
  readonly compatibility: Compatibility;
  readonly fields: readonly ContractField[];
  readonly doc?: string;
}

/** Contract names: dotted lower-case words, safe as a folder name (`inventory.stock`). */
export const CONTRACT_NAME = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_-]*){0,7}$/;
export const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const CONTRACT_FIELDS_MAX = 512;

export class ContractError extends Error {
  readonly contract: string;
  readonly field: string | undefined;
  constructor(contract: string, message: string, field?: string) {
    super(message);
    this.name = 'ContractError';
    this.contract = contract;
    this.field = field;
  }
}

const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/**
 * Checks a contract's own shape (names, types, defaults, symbols); throws ContractError.
 * `stored`: a file the registry already holds, loaded at start — a nested field type (refused
 * since) is let through there, so a site that has one keeps starting.
 */
export function checkContract(c: Contract, o: { stored?: boolean } = {}): void {
  const label = `contract '${String(c?.name)}' v${String(c?.version)}`;
  const fail = (why: string, field?: string): never => {
    throw new ContractError(String(c?.name), `${label}: ${why}`, field);
  };
  if (typeof c !== 'object' || c === null) fail('expected an object');
  if (typeof c.name !== 'string' || !CONTRACT_NAME.test(c.name)) fail(`name: expected ${CONTRACT_NAME.source}`);
  if (!Number.isSafeInteger(c.version) || c.version < 1) fail(`version: expected a positive integer, got ${typeof c.version === 'string' ? `a string ${JSON.stringify(c.version)}` : String(c.version)}`);
  if (!(COMPATIBILITY_MODES as readonly string[]).includes(c.compatibility)) {
    fail(`compatibility: expected one of ${COMPATIBILITY_MODES.join(', ')}, got ${String(c.compatibility)}`);
  }
  if (!Array.isArray(c.fields) || c.fields.length === 0 || c.fields.length > CONTRACT_FIELDS_MAX) {
    fail(`fields: expected 1..${CONTRACT_FIELDS_MAX} fields`);
  }
  const seen = new Set<string>();
  for (const f of c.fields) {
    if (typeof f?.name !== 'string' || !FIELD_NAME.test(f.name) || FORBIDDEN_KEYS.has(f.name)) {
      fail(`field name ${JSON.stringify(f?.name)} is not allowed`);
    }
    if (seen.has(f.name)) fail(`field '${f.name}' appears twice`, f.name);
    seen.add(f.name);
    let t: DataType;
    try {
      t = parseType(f.type);
    } catch (e) {
      return fail(`field '${f.name}': ${(e as Error).message}`, f.name);
    }
    // An event's value for it could never validate (`convert` takes scalars only): the contract
    // registered, and every event that gave the field a value became a contract violation.
    if (!o.stored && isNestedType(t)) {
      fail(`field '${f.name}': type ${typeToString(t)} is nested; contracts have no nested types (expected a scalar Paimon type: STRING, INT, DECIMAL(p, s), TIMESTAMP(3), …)`, f.name);
    }
    if (f.symbols !== undefined) {
      const ok = Array.isArray(f.symbols) && f.symbols.length > 0 && f.symbols.every((s) => typeof s === 'string' && !hasLoneSurrogate(s));
      if (!ok || !['STRING', 'VARCHAR', 'CHAR'].includes(t.root)) {
        fail(`field '${f.name}': symbols must be a non-empty list of strings on a string type`, f.name);
      }
      if (new Set(f.symbols).size !== f.symbols.length) fail(`field '${f.name}': symbols repeat`, f.name);
    }
    if (hasOwn(f, 'default')) {
      const problem = valueProblem(f, t, f.default);
      if (problem) fail(`field '${f.name}': default ${problem}`, f.name);
      // A FLOAT's 1e39 (an infinity in its file) or a DOUBLE's Infinity (JSON's 1e400; the file
      // kept null for it): the contract registered, and every event that left the field out was a
      // dead letter. A file already stored keeps loading, as a default is not refused after the fact.
      const range = !o.stored && typeof f.default === 'number' ? beyondFloatRange(t, f.default) : undefined;
      if (range) {
        const max = t.root === 'FLOAT' && Number.isFinite(f.default as number) ? `FLOAT's range (±${FLOAT_MAX})` : `DOUBLE's range (±${Number.MAX_VALUE})`;
        fail(`field '${f.name}': default ${String(f.default)} is beyond ${max}; every event without the field would be refused (give "${(f.default as number) < 0 ? '-' : ''}Infinity" as text if that is meant)`, f.name);
      }
    }
  }
}

/**
 * Why `json` is not a valid JSON value of the field, or undefined. Also returns the value, and in
 * `json` the JSON form the record carries when it is not the one given: a TIMESTAMP(p)'s text with
 * more fraction digits than p (core/lsm cut them) is carried as the field's value, so a column of
 * higher precision bound to the field gets what the field holds (CONTRACTS.md §1).
 */
function convert(f: ContractField, t: DataType, json: unknown, event = true): { value?: unknown; problem?: string; json?: unknown } {
  if (json !== null && typeof json === 'object') return { problem: `expected a ${typeToString(t)} value, got an ${Array.isArray(json) ? 'array' : 'object'}` };
  // Date/time values must use their text form: a number is ambiguous (ms? µs? days?).
  if (typeof json === 'number' && ['DATE', 'TIME', 'TIMESTAMP', 'TIMESTAMP_LTZ'].includes(t.root)) {
    return { problem: `expected ${t.root === 'DATE' ? 'yyyy-mm-dd' : t.root === 'TIME' ? 'hh:mm:ss' : 'ISO-8601'} text, got a number` };
  }
  if ((json === null || json === undefined) && !t.nullable) return { problem: 'must not be null' };
  // What a module sent only: a contract's default, checked at registration and filled in for a field
  // an event leaves out, is not refused after the fact (its file would stop the start).
  if (event && typeof json === 'number') {
    const inexact = inexactNumber(t, json);
    if (inexact !== undefined) return { problem: inexact };
  }
  let value: unknown;
  try {
    value = valueFromJson(t, json, f.name);
  } catch (e) {
    // The type in the prefix may hold parentheses itself: `column 'd' (DECIMAL(20, 2)): `.
    return { problem: (e as Error).message.replace(/^column '[^']*' \(.*?\): /, '') };
  }
  if (f.symbols && value !== null && !f.symbols.includes(value as string)) {
    return { problem: `expected one of ${f.symbols.join('|')}, got ${JSON.stringify(value)}` };
  }
  if (typeof json === 'string' && t.precision! < 6 && (t.root === 'TIMESTAMP' || t.root === 'TIMESTAMP_LTZ') && moreDigitsThan(json, t.precision!)) {
    return { value, json: valueToJson(t, value) };
  }
  return { value };
}

/**
 * Whether `text` has more than `p` fraction digits (REQUIRES: `text` a timestamp valueFromJson
 * read, so its one '.' starts the fraction: a digit one past the precision's last). A text with no
 * '.' has none (its year's digits were taken for a fraction's, and '…T08:00:00Z' was rewritten).
 */
function moreDigitsThan(text: string, p: number): boolean {
  const dot = text.indexOf('.');
  if (dot < 0) return false;
  const c = text.charCodeAt(dot + 1 + p);
  return c >= 48 && c <= 57;
}

/**
 * Why a JSON number for a BIGINT or DECIMAL field may not be what the module wrote, or undefined
 * (for a FLOAT or DOUBLE: one beyond its range, `beyondFloatRange`).
 * JSON.parse keeps about 15 significant digits: 12345678901234567.89 arrives as 12345678901234568
 * and 9007199254740993 as 9007199254740992. The text is gone by now, so what is refused is every
 * number that a longer text could have been rounded to: an integer beyond ±2^53 (BIGINT, DECIMAL)
 * and, for DECIMAL, one whose shortest form has more than 15 significant digits. A DECIMAL applied
 * so changed the row without a word, and a BIGINT's refusal quoted the rounded value as sent.
 * Their JSON form beyond that is a string (CONTRACTS.md), which is read exactly.
 */
export function inexactNumber(t: DataType, n: number): string | undefined {
  if (t.root === 'FLOAT' || t.root === 'DOUBLE') return beyondFloatRange(t, n);
  // 1e400 for an integer or DECIMAL: refused by valueFromJson too, but as "got Infinity", a value
  // the module never sent.
  if (!Number.isFinite(n)) return Number.isNaN(n) || !EXACT_ROOTS.has(t.root) ? undefined : `a JSON number beyond DOUBLE's range (±${Number.MAX_VALUE}) is read as ${n}`;
  const read = String(n);
  if (t.root === 'BIGINT') {
    if (!Number.isInteger(n) || Number.isSafeInteger(n)) return undefined;
    return `a JSON number beyond ±${Number.MAX_SAFE_INTEGER} is not read exactly (read as ${Math.abs(n) < 1e21 ? BigInt(n) : n}); send a BIGINT beyond it as a string`;
  }
  if (t.root !== 'DECIMAL') return undefined;
  const what = Math.abs(n) > Number.MAX_SAFE_INTEGER ? `beyond ±${Number.MAX_SAFE_INTEGER}` : significantDigits(read) > 15 ? 'of more than 15 significant digits' : undefined;
  if (what !== undefined) return `a JSON number ${what} is not read exactly (read as ${read}); send ${typeToString({ ...t, nullable: true })} as a string`;
  return undefined;
}

const FLOAT_MAX = 3.4028234663852886e38;
const EXACT_ROOTS: ReadonlySet<string> = new Set(['TINYINT', 'SMALLINT', 'INT', 'BIGINT', 'DECIMAL']);

/**
 * Why a JSON number for a FLOAT or DOUBLE is not a value of it, or undefined. JSON has no Infinity:
 * a number read as ±Infinity was a literal beyond DOUBLE's range (1e400), which JSON.parse reads
 * so without a word; a finite one beyond FLOAT's range becomes ±Infinity in a FLOAT column's file
 * (float32). Either put an infinity in the row the module never sent. The text forms "Infinity",
 * "-Infinity" and "NaN" (core/lsm valueFromJson) say it when it is meant. A number too small for
 * the type rounds towards 0 as any float does, and is taken.
 */
export function beyondFloatRange(t: DataType, n: number): string | undefined {
  if ((t.root !== 'FLOAT' && t.root !== 'DOUBLE') || Number.isNaN(n)) return undefined;
  if (!Number.isFinite(n)) return `a JSON number beyond DOUBLE's range (±${Number.MAX_VALUE}) is read as ${n}; send "${n}" as text if that is meant`;
  if (t.root === 'FLOAT' && Math.abs(n) > FLOAT_MAX && !Number.isFinite(Math.fround(n))) {
    return `a JSON number beyond FLOAT's range (±${FLOAT_MAX}), got ${n}; send "${n < 0 ? '-' : ''}Infinity" as text if that is meant`;
  }
  return undefined;
}

/** Significant digits of a number's text (`String(n)`, maybe with an exponent): 1.5e-7 has 2, 1200 has 2. */
function significantDigits(text: string): number {
  const mantissa = text.replace(/^-/, '').replace(/e.*$/i, '').replace('.', '');
  return mantissa.replace(/^0+/, '').replace(/0+$/, '').length;
}

function valueProblem(f: ContractField, t: DataType, json: unknown): string | undefined {
  return convert(f, t, json, false).problem;
}

// ---------------------------------------------------------------------------------------------
// Compatibility.

const INT_DIGITS: Partial<Record<DataType['root'], number>> = { TINYINT: 3, SMALLINT: 5, INT: 10, BIGINT: 19 };
const INT_ORDER = ['TINYINT', 'SMALLINT', 'INT', 'BIGINT'];

/**
 * True when every value of `from` is a value of `to` and Paimon's implicit casts allow the
 * change (`DataTypeCasts.supportsImplicitCast`), ignoring nullability (checked separately).
 * This is Paimon's implicit-cast table narrowed to the lossless cases: it refuses shrinking
 * lengths/precisions, INT→FLOAT, BIGINT→FLOAT/DOUBLE, TIMESTAMP↔LTZ and TIMESTAMP→DATE/TIME, which
 * Paimon would allow but which lose or reinterpret values.
 */
export function widens(from: DataType, to: DataType): boolean {
  const a = from.root;
  const b = to.root;
  if (INT_DIGITS[a] !== undefined) {
    if (INT_DIGITS[b] !== undefined) return INT_ORDER.indexOf(a) <= INT_ORDER.indexOf(b);
    if (b === 'DECIMAL') return to.precision! - to.scale! >= INT_DIGITS[a]!;
    if (b === 'DOUBLE') return a !== 'BIGINT';
    if (b === 'FLOAT') return a === 'TINYINT' || a === 'SMALLINT';
    return false;
  }
  switch (a) {
    case 'FLOAT':
      return b === 'FLOAT' || b === 'DOUBLE';
    case 'DOUBLE':
    case 'BOOLEAN':
    case 'DATE':
      return b === a;
    case 'DECIMAL':
      return b === 'DECIMAL' && to.scale! >= from.scale! && to.precision! - to.scale! >= from.precision! - from.scale!;
    case 'CHAR':
      return (b === 'CHAR' && to.length === from.length) || (b === 'VARCHAR' && to.length! >= from.length!) || b === 'STRING';
    case 'VARCHAR':
      return (b === 'VARCHAR' && to.length! >= from.length!) || b === 'STRING';
    case 'STRING':
      return b === 'STRING';
    case 'BINARY':
      return (b === 'BINARY' && to.length === from.length) || (b === 'VARBINARY' && to.length! >= from.length!) || b === 'BYTES';
    case 'VARBINARY':
      return (b === 'VARBINARY' && to.length! >= from.length!) || b === 'BYTES';
    case 'BYTES':
      return b === 'BYTES';
    case 'TIME':
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return b === a && to.precision! >= from.precision!;
    default:
      return false;
  }
}

/** Why a reader with `reader`'s fields cannot read data written with `writer`'s; empty if it can. */
export function readProblems(reader: Contract, writer: Contract): { field: string; why: string }[] {
  const problems: { field: string; why: string }[] = [];
  const written = new Map(writer.fields.map((f) => [f.name, f]));
  for (const rf of reader.fields) {
    const wf = written.get(rf.name);
    if (!wf) {
      if (!hasOwn(rf, 'default')) problems.push({ field: rf.name, why: 'has no default' });
      continue;
    }
    const rt = parseType(rf.type);
    const wt = parseType(wf.type);
    if (!widens(wt, rt)) {
      problems.push({ field: rf.name, why: `${typeToString({ ...wt, nullable: true })} does not widen to ${typeToString({ ...rt, nullable: true })}` });
    } else if (wt.nullable && !rt.nullable) {
      problems.push({ field: rf.name, why: 'nullable data cannot be read as NOT NULL' });
    } else if (rf.symbols) {
      const missing = (wf.symbols ?? null) === null ? ['(any string)'] : wf.symbols!.filter((s) => !rf.symbols!.includes(s));
      if (missing.length > 0) problems.push({ field: rf.name, why: `symbols ${missing.join('|')} are unknown to the reader` });
    }
  }
  return problems;
}

/**
 * Explains, in terms of what changed from `older` to `newer`, why `newer` is not compatible in
 * direction `dir`; undefined when it is.
 */
function directionProblem(older: Contract, newer: Contract, dir: 'backward' | 'forward'): string | undefined {
  const [reader, writer] = dir === 'backward' ? [newer, older] : [older, newer];
  const p = readProblems(reader, writer)[0];
  if (!p) return undefined;
  const inOld = older.fields.find((f) => f.name === p.field);
  const inNew = newer.fields.find((f) => f.name === p.field);
  if (dir === 'backward' && !inOld) return `field '${p.field}' was added without a default`;
  if (dir === 'forward' && !inNew) return `field '${p.field}' was removed but had no default in v${older.version}`;
  const change = inOld!.type === inNew!.type ? '' : ` (type ${typeToString(parseType(inOld!.type))} → ${typeToString(parseType(inNew!.type))})`;
  const who = dir === 'backward' ? `v${newer.version} readers of v${older.version} data` : `v${older.version} readers of v${newer.version} data`;
  return `field '${p.field}' changed${change}: for ${who}, ${p.why}`;
}

/** Checks `next` against the earlier versions of its name, as its `compatibility` asks; throws ContractError. */
export function checkCompatibility(earlier: readonly Contract[], next: Contract): void {
  const mode = next.compatibility;
  if (mode === 'NONE' || earlier.length === 0) return;
  const sorted = [...earlier].sort((a, b) => b.version - a.version); // newest first
  const against = mode.endsWith('_TRANSITIVE') ? sorted : sorted.slice(0, 1);
  const dirs: ('backward' | 'forward')[] = mode.startsWith('BACKWARD') ? ['backward'] : mode.startsWith('FORWARD') ? ['forward'] : ['backward', 'forward'];
  for (const old of against) {
    for (const dir of dirs) {
      const why = directionProblem(old, next, dir);
      if (why) {
        const detail = dirs.length > 1 ? ` (${dir})` : '';
        const field = /field '([^']+)'/.exec(why)?.[1];
        throw new ContractError(next.name, `contract '${next.name}' v${next.version} is not ${mode} compatible with v${old.version}: ${why}${detail}`, field);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Validation of one record.

export interface FieldError {
  readonly path: string;
  readonly message: string;
}

export type ValidateResult =
  | {
      readonly ok: true;
      /** The record in JSON form, defaults filled in, fields in contract order (a TIMESTAMP(p)'s text with more than p fraction digits as the value read, `convert`). */
      readonly record: RowImage;
      /** The same values in memory (types.ts), keyed by field name. */
      readonly values: Record<string, unknown>;
    }
  | { readonly ok: false; readonly errors: readonly FieldError[] };

/**
 * Checks one row image against a contract. Policy: a field missing from the record takes its
 * default, else is an error; a field the contract does not name is an error (the envelope names
 * its writer's exact version, so an extra field is a typo or an unregistered version);
 * a value must convert with valueFromJson (date/time values as text only).
 */
/** Parsed contract field types, by type string: validation runs per event, parsing once per type. */
const typeCache = new Map<string, DataType>();
function cachedType(text: string): DataType {
  let t = typeCache.get(text);
  if (t === undefined) {
    t = parseType(text);
    if (typeCache.size < 10_000) typeCache.set(text, t);
  }
  return t;
}

export function validate(contract: Contract, record: unknown, pathPrefix = ''): ValidateResult {
  return validateFast(contract, record) ?? validateGeneric(contract, record, pathPrefix);
}

/** One contract field, prepared once per contract object for the fast path. */
interface CompiledField {
  readonly field: ContractField;
  readonly name: string;
  readonly type: DataType;
  readonly fast: FastConvert;
  readonly hasDefault: boolean;
  readonly default: unknown;
  readonly symbols: ReadonlySet<string> | undefined;
}

interface CompiledContract {
  readonly fields: readonly CompiledField[];
  readonly names: ReadonlySet<string>;
}

/** Contracts are frozen once registered: the compiled form is kept per contract object. */
const compiledContracts = new WeakMap<Contract, CompiledContract>();

function compileContract(contract: Contract): CompiledContract {
  let c = compiledContracts.get(contract);
  if (c === undefined) {
    const fields = contract.fields.map((f): CompiledField => {
      const type = cachedType(f.type);
      return {
        field: f,
        name: f.name,
        type,
        fast: fastConverter(type),
        hasDefault: hasOwn(f, 'default'),
        default: f.default,
        symbols: f.symbols === undefined ? undefined : new Set(f.symbols),
      };
    });
    c = { fields, names: new Set(fields.map((f) => f.name)) };
    // A contract that is not frozen could still change: compile it again next time.
    if (Object.isFrozen(contract) && Object.isFrozen(contract.fields) && contract.fields.every((f) => Object.isFrozen(f))) {
      compiledContracts.set(contract, c);
    }
  }
  return c;
}

/**
 * The fast path of `validate`: a record whose every field is present (or defaulted) with a value of
 * a typed fast path (fast-values.ts) and which has no other key. Returns undefined whenever it
 * cannot decide — then the generic path runs and produces the same result or the errors.
 */
function validateFast(contract: Contract, record: unknown): ValidateResult | undefined {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return undefined;
  const rec = record as Record<string, unknown>;
  const c = compileContract(contract);
  const out: RowImage = {};
  const values: Record<string, unknown> = {};
  const fields = c.fields;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    let json: unknown;
    const sent = hasOwn(rec, f.name);
    if (sent) json = rec[f.name];
    else if (f.hasDefault) json = f.default;
    else return undefined;
    let value: unknown;
    if (json === null) {
      if (!f.type.nullable) return undefined;
      value = null;
    } else {
      value = f.fast(json);
      if (value === NO_FAST) {
        // Not a typed fast case: the generic conversion of this one field; a problem goes to the
        // generic path, which collects the errors.
        const r = convert(f.field, f.type, json, sent);
        if (r.problem !== undefined) return undefined;
        value = r.value;
        if (r.json !== undefined) json = r.json;
      } else if (f.symbols !== undefined && !f.symbols.has(value as string)) return undefined;
    }
    out[f.name] = json;
    values[f.name] = value;
  }
  // Every key must be a field (for-in also sees inherited enumerable keys: those go the generic way).
  for (const key in rec) if (!c.names.has(key)) return undefined;
  return { ok: true, record: out, values };
}

/** The generic validation (every case, every error); `validate` tries the fast path first. */
export function validateGeneric(contract: Contract, record: unknown, pathPrefix = ''): ValidateResult {
  const errors: FieldError[] = [];
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    return { ok: false, errors: [{ path: pathPrefix || '$', message: 'expected an object' }] };
  }
  const rec = record as Record<string, unknown>;
  const out: RowImage = {};
  const values: Record<string, unknown> = {};
  const known = new Set<string>();
  for (const f of contract.fields) {
    known.add(f.name);
    const path = joinPath(pathPrefix, f.name);
    let json: unknown;
    const sent = hasOwn(rec, f.name);
    if (sent) json = rec[f.name];
    else if (hasOwn(f, 'default')) json = f.default;
    else {
      errors.push({ path, message: 'missing (required: no default)' });
      continue;
    }
    // A default is read as registration read it (`valueProblem`): the exactness check is for what
    // a module sends, and an event that left the field out was refused for a number it never sent.
    const { value, problem, json: read } = convert(f, cachedType(f.type), json, sent);
    if (problem) errors.push({ path, message: problem });
    else {
      out[f.name] = read ?? json;
      values[f.name] = value;
    }
  }
  for (const key of Object.keys(rec)) {
    if (!known.has(key)) errors.push({ path: joinPath(pathPrefix, key), message: `not a field of contract '${contract.name}' v${contract.version}` });
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, record: out, values };
}

export type ContractCheck = { readonly ok: true; readonly envelope: Envelope; readonly contract: Contract } | (Refusal & { readonly errors?: readonly FieldError[] });

/** Looks up the envelope's contract and validates its images; returns the envelope with defaults filled. */
/** Field errors a contract violation's detail names; the rest are counted. */
const DETAIL_ERRORS = 8;

export function checkEnvelopeContract(registry: Pick<ContractRegistry, 'get' | 'latest'>, envelope: Envelope): ContractCheck {
  const { name, version } = envelope.contract;
  const contract = registry.get(name, version);
  if (!contract) return refuse('no_contract', `contract '${name}' v${version} is not registered`, 'contract');
  const added = defaultsFor(contract, registry);
  let before = envelope.before;
  let after = envelope.after;
  const errors: FieldError[] = [];
  if (before !== null) {
    const r = validate(contract, before, 'before');
    if (r.ok) before = r.record;
    else errors.push(...r.errors);
  }
  if (after !== null) {
    const r = validate(contract, after, 'after');
    if (r.ok) after = r.record;
    else errors.push(...r.errors);
  }
  if (errors.length > 0) {
    // Every error, so the module's owner sees all that is wrong with the event at once (a
    // dead letter keeps only this text), up to DETAIL_ERRORS of them: an event of the wrong
    // contract can fail every field.
    const shown = errors.slice(0, DETAIL_ERRORS).map((e) => `${e.path}: ${e.message}`);
    const more = errors.length > DETAIL_ERRORS ? ` (and ${errors.length - DETAIL_ERRORS} more)` : '';
    return { ...refuse('contract_violation', `${shown.join('; ')}${more}`, errors[0]!.path), errors };
  }
  if (added.length > 0) {
    if (before !== null) before = withDefaults(before, added);
    if (after !== null) after = withDefaults(after, added);
  }
  return { ok: true, contract, envelope: { ...envelope, before, after } };
}

/**
 * The fields other versions declare with a default, which an event of `writer` lacks: the event is
 * read as the contract's reader sees it (Avro's schema resolution), a field taking the default of
 * the newest version that declares it. Bindings are checked against every version's fields
 * (`bindingView`) and may map such a field:
 *   - added by a later version with a default: without this, every event of a module not yet
 *     upgraded became a `binding_error` dead letter the moment a binding mapped the new field (and
 *     its replay failed the same way), although the compatibility check had accepted the version
 *     exactly so that old data stays readable;
 *   - dropped by a later version (the writer's own, or one in between) after an earlier one gave it a
 *     default: FULL_TRANSITIVE allows exactly that, "a field a binding maps can never vanish without
 *     a default" (CONTRACTS.md), and every event of the upgraded module became a dead letter.
 * Fields without a default are not filled (a binding that maps one fails, as it should: the data
 * does not have it). Cached per writer version until a newer version is registered.
 */
function defaultsFor(writer: Contract, registry: Pick<ContractRegistry, 'get' | 'latest'>): ReadonlyArray<readonly [string, unknown]> {
  const latest = registry.latest(writer.name);
  if (latest === undefined || latest.version === 1) return NONE_ADDED;
  const hit = addedCache.get(writer);
  if (hit !== undefined && hit.latest === latest) return hit.added;
  const had = new Set(writer.fields.map((f) => f.name));
  const added: (readonly [string, unknown])[] = [];
  for (const f of declaredFields(latest, registry)) if (!had.has(f.name) && hasOwn(f, 'default')) added.push([f.name, f.default] as const);
  addedCache.set(writer, { latest, added });
  return added;
}

/** Every field name of versions 1..latest, each as the newest version that has it declares it (latest's first, in order). */
function declaredFields(latest: Contract, registry: Pick<ContractRegistry, 'get'>): ContractField[] {
  const seen = new Set<string>();
  const out: ContractField[] = [];
  for (let v = latest.version; v >= 1; v--) {
    const c = v === latest.version ? latest : registry.get(latest.name, v);
    for (const f of c?.fields ?? []) {
      if (seen.has(f.name)) continue;
      seen.add(f.name);
      out.push(f);
    }
  }
  return out;
}

/**
 * What a binding of contract `name` is checked against (`checkBinding`'s `contract`): the latest
 * version, with the fields only earlier versions have appended (the newest declaration of each).
 * An event of any version is read with the others' defaults (`checkEnvelopeContract`), so a field
 * a later version dropped stays mappable; checked against the latest alone, registering a version
 * that drops a mapped field (with a default, as FULL_TRANSITIVE demands) made the next start
 * refuse the binding. undefined when no version is registered.
 */
export function bindingView(registry: Pick<ContractRegistry, 'get' | 'latest'>, name: string): Contract | undefined {
  const latest = registry.latest(name);
  if (latest === undefined || latest.version === 1) return latest;
  return { ...latest, fields: declaredFields(latest, registry) };
}

const NONE_ADDED: ReadonlyArray<readonly [string, unknown]> = [];
const addedCache = new WeakMap<Contract, { latest: Contract; added: ReadonlyArray<readonly [string, unknown]> }>();

function withDefaults(image: RowImage, added: ReadonlyArray<readonly [string, unknown]>): RowImage {
  const out: RowImage = { ...image };
  for (const [k, v] of added) if (!hasOwn(out, k)) out[k] = v;
  return out;
}

// ---------------------------------------------------------------------------------------------
// The registry.

export interface ContractSummary {
  readonly name: string;
  readonly versions: readonly number[];
}

export class ContractRegistry {
  private readonly byName = new Map<string, Contract[]>(); // versions ascending, 1..n

  /** Opens (creating if needed) `<data>/contracts`, loading every contract file in it. */
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const name = entry.name;
      if (!CONTRACT_NAME.test(name)) continue;
      // A file named like a contract (notes, readme.md) stopped the start with a bare ENOTDIR.
      if (!entry.isDirectory()) throw new ContractError(name, `${join(dir, name)} is not a directory: a contract's versions are the files ${join(dir, name, 'v<N>.json')} (move or remove it)`);
      const files = readdirSync(join(dir, name));
      const versions: number[] = [];
      for (const f of files) {
        const m = /^v(\d+)\.json$/.exec(f);
        if (m === null) continue;
        const v = Number(m[1]);
        // Read as v<N>.json below: a hand-copied v01.json failed the start with a bare ENOENT for
        // a v1.json that was not there, and beside v1.json read as "v1 but no v2".
        const right = `v${v}.json`;
        if (f !== right) {
          const fix = files.includes(right) ? `${right} is there too: keep one of them` : `rename it ${right}`;
          throw new ContractError(name, `${join(dir, name, f)}: a contract's version files are named v<N>.json without leading zeros; ${fix}`);
        }
        versions.push(v);
      }
      versions.sort((a, b) => a - b);
      const list: Contract[] = [];
      for (const v of versions) {
        const file = join(dir, name, `v${v}.json`);
        const text = readFileSync(file, 'utf8');
        let c: Contract;
        try {
          c = JSON.parse(text) as Contract;
        } catch (e) {
          throw new ContractError(name, `${file} is not valid JSON: ${jsonErrorWhere(text, e)}`);
        }
        checkContract(c, { stored: true });
        if (c.name !== name || c.version !== v) throw new ContractError(name, `${file} holds contract '${c.name}' v${c.version}`);
        if (v !== list.length + 1) throw new ContractError(name, `contract '${name}' has v${v} but no v${list.length + 1} in ${dir}`);
        list.push(freeze(c));
      }
      if (list.length > 0) this.byName.set(name, list);
    }
  }

  /**
   * Registers the next version of a contract. Refuses a malformed contract, a version that is not
   * latest+1 (a gap, or an existing version with other content), and an incompatible one.
   * Registering a contract identical to the stored version is a no-op that returns it.
   */
  register(contract: Contract): Contract {
    checkContract(contract);
    const list = this.byName.get(contract.name) ?? [];
    const existing = list[contract.version - 1];
    if (existing) {
      if (canonical(existing) === canonical(contract)) return existing;
      throw new ContractError(contract.name, `contract '${contract.name}' v${contract.version} is already registered with other content`);
    }
    if (contract.version !== list.length + 1) {
      throw new ContractError(
        contract.name,
        `contract '${contract.name}' v${contract.version} would leave a gap: the next version is v${list.length + 1}`,
      );
    }
    checkCompatibility(list, contract);
    const frozen = freeze(JSON.parse(canonical(contract)) as Contract);
    const folder = join(this.dir, contract.name);
    mkdirSync(folder, { recursive: true });
    const file = join(folder, `v${contract.version}.json`);
    // Durably (fsynced, linked to its name, the folder fsynced), and never over a file already there.
    if (!localFileIO.createAtomic(file, Buffer.from(`${JSON.stringify(frozen, null, 2)}\n`))) {
      throw new ContractError(contract.name, `${file} exists but was not loaded`);
    }
    list.push(frozen);
    this.byName.set(contract.name, list);
    return frozen;
  }

  list(): ContractSummary[] {
    return [...this.byName.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, l]) => ({ name, versions: l.map((c) => c.version) }));
  }

  get(name: string, version: number): Contract | undefined {
    return Number.isSafeInteger(version) && version >= 1 ? this.byName.get(name)?.[version - 1] : undefined;
  }

  latest(name: string): Contract | undefined {
    const l = this.byName.get(name);
    return l?.[l.length - 1];
  }
}

/** Key order fixed, so equal contracts print equal. */
function canonical(c: Contract): string {
  const fields = c.fields.map((f) => {
    const o: Record<string, unknown> = { name: f.name, type: f.type };
    if (hasOwn(f, 'default')) o.default = f.default;
    if (f.symbols !== undefined) o.symbols = f.symbols;
    if (f.doc !== undefined) o.doc = f.doc;
    return o;
  });
  const o: Record<string, unknown> = { name: c.name, version: c.version, compatibility: c.compatibility, fields };
  if (c.doc !== undefined) o.doc = c.doc;
  return JSON.stringify(o);
}

function freeze(c: Contract): Contract {
  for (const f of c.fields) Object.freeze(f);
  Object.freeze(c.fields);
  return Object.freeze(c);
}
