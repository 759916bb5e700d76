// Snapshot and Tag JSON (paimon-format.md §4; `Snapshot.java`, `tag/Tag.java`).
//
// Writing emits the maximally compatible field set (readable by Java 1.x and 2.x and pypaimon) in
// Java's property order, Jackson-style (`"key" : value`, 2-space indent) or compact. Reading ignores
// unknown fields (as Jackson's ignoreUnknown does) and fails with a corruption on bad JSON, missing
// required fields or wrongly typed values.
// Invariants: `commitIdentifier` and `watermark` are bigint and round-trip every long exactly
// (Long.MAX_VALUE commit ids, Long.MIN_VALUE "no watermark"); the JSON parser here keeps integer
// literals beyond 2^53 as bigint. Every other long must be a safe integer (else corruption).

import { corruption, invalidArgument } from './errors.ts';

export type CommitKind = 'APPEND' | 'COMPACT' | 'OVERWRITE' | 'ANALYZE';
const COMMIT_KINDS: readonly CommitKind[] = ['APPEND', 'COMPACT', 'OVERWRITE', 'ANALYZE'];
export const SNAPSHOT_VERSION = 3;
/** Batch writes use Long.MAX_VALUE as their commit identifier. */
export const BATCH_COMMIT_IDENTIFIER = 9223372036854775807n;

export interface Snapshot {
  version: number;
  id: number;
  schemaId: number;
  baseManifestList: string;
  baseManifestListSize: number | null;
  deltaManifestList: string;
  deltaManifestListSize: number | null;
  changelogManifestList: string | null;
  changelogManifestListSize: number | null;
  indexManifest: string | null;
  commitUser: string;
  commitIdentifier: bigint;
  commitKind: CommitKind;
  timeMillis: number;
  totalRecordCount: number | null;
  deltaRecordCount: number | null;
  changelogRecordCount: number | null;
  watermark: bigint | null;
  statistics: string | null;
  properties: Record<string, string> | null;
  nextRowId: number | null;
}

// ---------------------------------------------------------------------------------------------
// JSON with exact longs.

type Json = null | boolean | number | bigint | string | RawNumber | Json[] | { [k: string]: Json };
/** A number literal written verbatim (Jackson's BigDecimal output such as `5.000000000`). */
class RawNumber {
  constructor(readonly text: string) {}
}

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
/** A string body that JSON.parse would return as is: no escape, no control character. */
const PLAIN_STRING = /[^"\\\u0000-\u001f]*"/y;

/** JSON.parse, except integer literals outside ±2^53 come back as bigint. Throws SyntaxError. */
export function parseJsonExact(text: string): Json {
  let i = 0;
  const ws = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else return;
    }
  };
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at position ${i}`);
  };
  const value = (): Json => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const o: { [k: string]: Json } = {};
      ws();
      if (text[i] === '}') return i++, o;
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const k = str();
        ws();
        if (text[i++] !== ':') fail("expected ':'");
        o[k] = value();
        ws();
        const d = text[i++];
        if (d === '}') return o;
        if (d !== ',') fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const a: Json[] = [];
      ws();
      if (text[i] === ']') return i++, a;
      for (;;) {
        a.push(value());
        ws();
        const d = text[i++];
        if (d === ']') return a;
        if (d !== ',') fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    if (c === 't' && text.startsWith('true', i)) return (i += 4), true;
    if (c === 'f' && text.startsWith('false', i)) return (i += 5), false;
    if (c === 'n' && text.startsWith('null', i)) return (i += 4), null;
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return fail('unexpected character');
    i += m[0].length;
    const n = Number(m[0]);
    return !m[1] && !m[2] && !Number.isSafeInteger(n) ? BigInt(m[0]) : n;
  };
  const str = (): string => {
    const start = i;
    i++;
    PLAIN_STRING.lastIndex = i;
    if (PLAIN_STRING.test(text)) {
      i = PLAIN_STRING.lastIndex;
      return text.slice(start + 1, i - 1);
    }
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail('unterminated string');
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const v = value();
  ws();
  if (i !== text.length) fail('trailing characters');
  return v;
}

/** Jackson-like output: `"key" : value`, 2-space indent, `{ }` for an empty object; or compact. */
function stringify(v: Json, pretty: boolean, indent = ''): string {
  if (v === null) return 'null';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v !== 'object') return JSON.stringify(v);
  if (v instanceof RawNumber) return v.text;
  const inner = indent + '  ';
  if (Array.isArray(v)) {
    if (v.length === 0) return '[ ]';
    const items = v.map((x) => stringify(x, pretty, inner));
    return pretty ? `[ ${items.join(', ')} ]` : `[${items.join(',')}]`;
  }
  const keys = Object.keys(v);
  if (keys.length === 0) return pretty ? '{ }' : '{}';
  const parts = keys.map((k) => `${JSON.stringify(k)}${pretty ? ' : ' : ':'}${stringify(v[k]!, pretty, inner)}`);
  return pretty ? `{\n${parts.map((p) => inner + p).join(',\n')}\n${indent}}` : `{${parts.join(',')}}`;
}

// ---------------------------------------------------------------------------------------------
// Snapshot.

function snapshotFields(s: Snapshot): { [k: string]: Json } {
  const o: { [k: string]: Json } = {
    version: s.version,
    id: s.id,
    schemaId: s.schemaId,
    baseManifestList: s.baseManifestList,
  };
  const put = (k: string, v: Json | undefined) => {
    if (v !== null && v !== undefined) o[k] = v;
  };
  put('baseManifestListSize', s.baseManifestListSize);
  o['deltaManifestList'] = s.deltaManifestList;
  put('deltaManifestListSize', s.deltaManifestListSize);
  put('changelogManifestList', s.changelogManifestList);
  put('changelogManifestListSize', s.changelogManifestListSize);
  put('indexManifest', s.indexManifest);
  o['commitUser'] = s.commitUser;
  o['commitIdentifier'] = s.commitIdentifier;
  o['commitKind'] = s.commitKind;
  o['timeMillis'] = s.timeMillis;
  put('totalRecordCount', s.totalRecordCount);
  put('deltaRecordCount', s.deltaRecordCount);
  put('changelogRecordCount', s.changelogRecordCount);
  put('watermark', s.watermark);
  put('statistics', s.statistics);
  if (s.properties && Object.keys(s.properties).length > 0) o['properties'] = { ...s.properties };
  put('nextRowId', s.nextRowId);
  return o;
}

export function snapshotToJson(s: Snapshot, pretty = true): string {
  if (!COMMIT_KINDS.includes(s.commitKind)) throw invalidArgument(`unknown commit kind '${s.commitKind}'`);
  return stringify(snapshotFields(s), pretty);
}

function parseObject(text: string, path: string): { [k: string]: Json } {
  let j: Json;
  try {
    j = parseJsonExact(text);
  } catch (e) {
    throw corruption(path, `not JSON: ${(e as Error).message}`, e);
  }
  if (j === null || typeof j !== 'object' || Array.isArray(j) || j instanceof RawNumber) throw corruption(path, 'expected a JSON object');
  return j;
}

function snapshotFromObject(o: { [k: string]: Json }, path: string): Snapshot {
  const bad = (k: string, why: string) => corruption(path, `snapshot field '${k}' ${why}`);
  const has = (k: string) => o[k] !== undefined && o[k] !== null;
  const long = (k: string, required: boolean): number | null => {
    if (!has(k)) {
      if (required) throw bad(k, 'is missing');
      return null;
    }
    const v = o[k];
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw bad(k, `is not a safe integer: ${String(v)}`);
    return v;
  };
  const exactLong = (k: string, required: boolean): bigint | null => {
    if (!has(k)) {
      if (required) throw bad(k, 'is missing');
      return null;
    }
    const v = o[k];
    if (typeof v === 'bigint') return v;
    if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
    throw bad(k, `is not an integer: ${String(v)}`);
  };
  const string = (k: string, required: boolean): string | null => {
    if (!has(k)) {
      if (required) throw bad(k, 'is missing');
      return null;
    }
    if (typeof o[k] !== 'string') throw bad(k, 'is not a string');
    return o[k] as string;
  };
  const kind = string('commitKind', true) as CommitKind;
  if (!COMMIT_KINDS.includes(kind)) throw bad('commitKind', `has unknown value '${kind}'`);
  let properties: Record<string, string> | null = null;
  if (has('properties')) {
    const p = o['properties'];
    if (typeof p !== 'object' || Array.isArray(p) || Object.values(p!).some((v) => typeof v !== 'string')) {
      throw bad('properties', 'is not a map of strings');
    }
    properties = { ...(p as Record<string, string>) };
  }
  return {
    version: long('version', false) ?? 1,
    id: long('id', true)!,
    schemaId: long('schemaId', true)!,
    baseManifestList: string('baseManifestList', true)!,
    baseManifestListSize: long('baseManifestListSize', false),
    deltaManifestList: string('deltaManifestList', true)!,
    deltaManifestListSize: long('deltaManifestListSize', false),
    changelogManifestList: string('changelogManifestList', false),
    changelogManifestListSize: long('changelogManifestListSize', false),
    indexManifest: string('indexManifest', false),
    commitUser: string('commitUser', true)!,
    commitIdentifier: exactLong('commitIdentifier', true)!,
    commitKind: kind,
    timeMillis: long('timeMillis', true)!,
    totalRecordCount: long('totalRecordCount', false),
    deltaRecordCount: long('deltaRecordCount', false),
    changelogRecordCount: long('changelogRecordCount', false),
    watermark: exactLong('watermark', false),
    statistics: string('statistics', false),
    properties,
    nextRowId: long('nextRowId', false),
  };
}

export function snapshotFromJson(text: string, path: string): Snapshot {
  return snapshotFromObject(parseObject(text, path), path);
}

// ---------------------------------------------------------------------------------------------
// Tag = snapshot JSON (+ tagCreateTime as a Jackson LocalDateTime array, tagTimeRetained as seconds).

export interface TagTtl {
  /** The tag's creation time as wall-clock millis (Java stores a zone-less LocalDateTime). */
  createTimeMillis: number;
  retainedMillis: number;
}

export interface Tag {
  snapshot: Snapshot;
  createTimeMillis?: number;
  retainedMillis?: number;
}

function localDateTimeArray(millis: number): number[] {
  const d = new Date(millis);
  const out = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes()];
  const secs = d.getUTCSeconds();
  const nanos = (((millis % 1000) + 1000) % 1000) * 1_000_000;
  if (secs > 0 || nanos > 0) out.push(secs);
  if (nanos > 0) out.push(nanos);
  return out;
}

function durationSeconds(millis: number): string {
  const neg = millis < 0;
  const abs = Math.abs(millis);
  return `${neg ? '-' : ''}${Math.floor(abs / 1000)}.${String((abs % 1000) * 1_000_000).padStart(9, '0')}`;
}

export function tagToJson(snapshot: Snapshot, ttl?: TagTtl, pretty = true): string {
  const o = snapshotFields(snapshot);
  if (!ttl) return stringify(o, pretty);
  if (!Number.isSafeInteger(ttl.createTimeMillis) || !Number.isSafeInteger(ttl.retainedMillis)) {
    throw invalidArgument('tag create time and retention must be whole milliseconds');
  }
  o['tagCreateTime'] = localDateTimeArray(ttl.createTimeMillis);
  o['tagTimeRetained'] = new RawNumber(durationSeconds(ttl.retainedMillis)); // Duration as decimal seconds
  return stringify(o, pretty);
}

export function tagFromJson(text: string, path: string): Tag {
  const o = parseObject(text, path);
  const tag: Tag = { snapshot: snapshotFromObject(o, path) };
  const ct = o['tagCreateTime'];
  if (ct !== undefined && ct !== null) {
    if (typeof ct === 'string') {
      const ms = Date.parse(`${ct}Z`);
      if (Number.isNaN(ms)) throw corruption(path, `tagCreateTime '${ct}' is not a date-time`);
      tag.createTimeMillis = ms;
    } else {
      if (!Array.isArray(ct) || ct.length < 5 || ct.length > 7 || ct.some((x) => typeof x !== 'number' || !Number.isInteger(x))) {
        throw corruption(path, 'tagCreateTime is not a LocalDateTime array');
      }
      const [y, mo, d, h, mi, s = 0, nanos = 0] = ct as number[];
      tag.createTimeMillis = Date.UTC(y!, mo! - 1, d!, h!, mi!, s) + Math.floor(nanos / 1_000_000);
    }
  }
  const tr = o['tagTimeRetained'];
  if (tr !== undefined && tr !== null) {
    if (typeof tr !== 'number') throw corruption(path, 'tagTimeRetained is not a number of seconds');
    tag.retainedMillis = Math.round(tr * 1000);
  }
  return tag;
}
