// The event envelope: a Debezium-shaped change event as a module publishes it on
// `tilstand/<site>/events/<module>/<stream>`, and `parseEnvelope`, the first gate every payload
// passes. Pure: no broker, no table store, no clock.
//
// Concurrency: stateless; safe to call from anywhere.
// Invariants of an envelope returned with ok:true:
//   - it came from at most `payload_bytes_max` bytes of well-formed UTF-8 JSON;
//   - no object anywhere in it has a key `__proto__`, `constructor` or `prototype`, and no string
//     or key holds a lone UTF-16 surrogate (the payload is refused instead);
//   - `source.module`/`source.stream` equal the topic's module/stream; `source.seq` and `ts_ms`
//     are non-negative safe integers; `contract.version` is a positive safe integer;
//   - op c/r: `after` is an object and `before` null; op d: `before` is an object and `after`
//     null; op u: `after` is an object, `before` an object or null.
// Refusals carry a reason from the closed set `DEAD_LETTER_REASONS`, a one-line detail and, when
// the fault sits at one place in the payload, its path (`source.seq`, `after.items[2].sku`).

import { closingQuote, repeatedKeyPath } from '../lsm/json-keys.ts';

export type Op = 'c' | 'u' | 'd' | 'r';
export const OPS: readonly Op[] = ['c', 'u', 'd', 'r'];

/** A row image: a JSON object as the module sent it (values in types.ts's JSON forms). */
export type RowImage = Record<string, unknown>;

export interface EnvelopeSource {
  readonly module: string;
  readonly stream: string;
  /** Monotonic per (module, stream), starting at 1; 0 is allowed and means "before the first". */
  readonly seq: number;
  /** Anything else a module adds (Debezium's `connector`, `db`, `txId`, …) is kept as sent. */
  readonly [extra: string]: unknown;
}

export interface ContractRef {
  readonly name: string;
  readonly version: number;
}

export interface Envelope {
  readonly op: Op;
  readonly before: RowImage | null;
  readonly after: RowImage | null;
  readonly source: EnvelopeSource;
  readonly ts_ms: number;
  readonly contract: ContractRef;
}

/** Why an event went to `dead_letters`. Closed: every refusal in core/ingest uses one of these. */
export const DEAD_LETTER_REASONS = [
  'too_large', // payload above payload_bytes_max
  'bad_json', // not UTF-8, or not JSON
  'unsafe_json', // a forbidden key (__proto__, constructor, prototype) or a lone surrogate
  'bad_envelope', // a field of the envelope is missing or has the wrong type or value
  'topic_mismatch', // not an event topic, or source.module/stream disagree with the topic
  'no_contract', // the named contract version is not registered
  'contract_violation', // before/after do not match the contract's fields
  'no_binding', // no binding's topic filter matches the topic
  'binding_error', // a binding could not map the event (path missing, contract mismatch, lookup failed)
  'unfit_for_table', // a mapped value does not fit the table column's type
  'late_after_gap', // came after the sequencer gave up waiting for its seq (a skipped gap): never applied
  'seq_far_ahead', // held far ahead of its stream (far_ahead_give_up_ms) while the stream went on below it: not applied
] as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[number];

export interface Refusal {
  readonly ok: false;
  readonly reason: DeadLetterReason;
  readonly detail: string;
  /** Where in the payload the fault is, when it is at one place. */
  readonly path?: string;
  /**
   * A bad_envelope's or unsafe_json's `source.seq`, when it reads (a positive safe integer), its
   * source names the topic's module and stream, and the text gives no other seq, module or stream
   * for it (`sourceAgrees`): the Ingestor sequences the refusal so that it consumes the seq.
   */
  readonly seq?: number;
}

export type ParseResult = { readonly ok: true; readonly envelope: Envelope } | Refusal;

export interface EnvelopeLimits {
  /** Largest payload accepted, in bytes. Bounds parse time and memory per event. */
  readonly payload_bytes_max: number;
}

export const DEFAULT_ENVELOPE_LIMITS: EnvelopeLimits = { payload_bytes_max: 256 * 1024 };

export interface TopicParts {
  readonly site: string;
  readonly module: string;
  readonly stream: string;
}

/** Site, module and stream names: they appear in topics, file names and table values. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
/** Any occurrence of a forbidden name in the raw text sends a payload down the checked path. */
const FORBIDDEN_NAME_IN_TEXT = /__proto__|constructor|prototype/;

export function refuse(reason: DeadLetterReason, detail: string, path?: string): Refusal {
  return path === undefined ? { ok: false, reason, detail } : { ok: false, reason, detail, path };
}

/**
 * Parsed event topics, remembered: a site has few topics and every event's topic is parsed (the
 * split and three pattern tests cost more than the rest of the envelope checks). Valid topics
 * only, so bounded in bytes as well as in count (three names of at most 64 characters each): an
 * invalid one may be as long as a packet, and a flood of unique ones held hundreds of MB and
 * filled the cache. The cached parts are frozen so no caller can change what the next caller gets.
 */
const topicCache = new Map<string, TopicParts>();
const TOPIC_CACHE_MAX = 10_000;

/** Splits `tilstand/<site>/events/<module>/<stream>`; undefined for any other topic. */
export function parseEventTopic(topic: string): TopicParts | undefined {
  const hit = topicCache.get(topic);
  if (hit !== undefined) return hit;
  const parts = parseEventTopicUncached(topic);
  if (parts && topicCache.size < TOPIC_CACHE_MAX) topicCache.set(topic, Object.freeze(parts));
  return parts;
}

function parseEventTopicUncached(topic: string): TopicParts | undefined {
  const parts = topic.split('/');
  if (parts.length !== 5 || parts[0] !== 'tilstand' || parts[2] !== 'events') return undefined;
  const [, site, , module, stream] = parts as [string, string, string, string, string];
  if (!NAME_PATTERN.test(site) || !NAME_PATTERN.test(module) || !NAME_PATTERN.test(stream)) return undefined;
  return { site, module, stream };
}

export function eventTopic(site: string, module: string, stream: string): string {
  return `tilstand/${site}/events/${module}/${stream}`;
}

/** Limits objects already checked (checkLimits runs per event; the options object rarely changes). */
const checkedLimits = new WeakMap<object, number>();

export function checkLimits(limits: EnvelopeLimits): void {
  const n = limits?.payload_bytes_max;
  if (limits !== null && typeof limits === 'object' && checkedLimits.get(limits) === n) return;
  checkLimitsValue(n);
  if (limits !== null && typeof limits === 'object') checkedLimits.set(limits, n);
}

function checkLimitsValue(n: number): void {
  if (!Number.isSafeInteger(n) || n < 64) {
    throw new RangeError(`payload_bytes_max: expected an integer ≥ 64 (bytes), got ${String(n)}`);
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const hasLoneSurrogate = (s: string): boolean => LONE_SURROGATE.test(s);

/** Appends a key to a path: `a.b`, `a[3]`, `a["odd key"]`. */
export function joinPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

type SafeJson = { ok: true; value: unknown } | Refusal;

/**
 * Decodes UTF-8 strictly and parses JSON. A reviver drops every forbidden key before the object
 * is handed to anyone (JSON.parse already stores `__proto__` as an own property, so no prototype
 * is touched even during the parse), and the first forbidden key or lone surrogate is reported
 * with its path. Paths are rebuilt after the parse from a child→parent map the reviver fills
 * (the reviver runs bottom-up, so a holder's own path is not known when its child is visited).
 */
const UTF8_STRICT = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
const RAW_LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Deepest nesting of arrays and objects a payload may have (the envelope itself is 1, `source` 2).
 * Checked before either parse below, so both agree: the plain JSON.parse takes any depth, the
 * reviver's walk is recursive and threw at ~2,700 levels (fewer on a deeper stack).
 */
export const JSON_DEPTH_MAX = 512;

/**
 * Whether `text` nests arrays and objects deeper than JSON_DEPTH_MAX (brackets in strings do not
 * count). A text of at most 2 × JSON_DEPTH_MAX characters cannot (each level takes an opening and
 * a closing bracket), so an ordinary event is not scanned at all.
 */
function nestsTooDeep(text: string): boolean {
  if (text.length <= 2 * JSON_DEPTH_MAX || !openersOver(text, JSON_DEPTH_MAX)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next unit is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > JSON_DEPTH_MAX) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * Whether `text` holds more than `max` opening brackets (`{` and `[`, in strings too): with at most
 * that many it cannot nest deeper, so nestsTooDeep's scan of every character (as costly as the
 * parse of a long event) is skipped. indexOf skips to each one natively.
 */
function openersOver(text: string, max: number): boolean {
  let n = 0;
  for (const c of ['{', '[']) {
    for (let i = text.indexOf(c); i !== -1; i = text.indexOf(c, i + 1)) if (++n > max) return true;
  }
  return false;
}

export function parseJsonSafely(payload: Uint8Array): SafeJson {
  const r = parseJsonChecked(payload);
  return r.ok ? { ok: true, value: r.value } : refusalOnly(r);
}

/** The refusal without the value (and text) parseJsonChecked keeps beside an unsafe_json one. */
function refusalOnly(r: Refusal & { value?: unknown; text?: string }): Refusal {
  const { value: _value, text: _text, ...refusal } = r;
  return refusal;
}

/**
 * parseJsonSafely, and beside an unsafe_json refusal the value with the forbidden keys dropped
 * (its `source.seq` may still read: parseEnvelope).
 */
/** A parse of parseJsonChecked: the value, its text, and whether the escape-free fast path read it. */
type CheckedJson = { ok: true; value: unknown; text: string; fast: boolean };

function parseJsonChecked(payload: Uint8Array): CheckedJson | Refusal | (Refusal & { value: unknown; text: string }) {
  let text: string;
  try {
    text = UTF8_STRICT.decode(payload);
  } catch {
    return refuse('bad_json', 'payload is not well-formed UTF-8');
  }
  if (nestsTooDeep(text)) {
    // Beside it the value as the plain parse reads it (iterative: any depth, and `__proto__` an own
    // property), so that a seq that reads sequences the refusal as an unsafe_json one is (parseEnvelope).
    const refusal = refuse('bad_json', `payload is not JSON: nesting deeper than ${JSON_DEPTH_MAX} levels`);
    try {
      return { ...refusal, value: JSON.parse(text) as unknown, text };
    } catch {
      return refusal;
    }
  }
  // Fast path for the common payload: no escape sequences (so no key or string can hide a
  // forbidden name or a surrogate behind `\u`), none of the forbidden names anywhere in the
  // text, and no raw lone surrogate — then a plain JSON.parse is exactly as safe as the checked
  // walk below, at a fraction of its cost.
  if (!text.includes('\\u') && !RAW_LONE_SURROGATE.test(text) && !FORBIDDEN_NAME_IN_TEXT.test(text)) {
    try {
      return { ok: true, value: JSON.parse(text), text, fast: true };
    } catch (e) {
      const why = e instanceof RangeError ? 'nesting too deep' : (e as Error).message;
      return refuse('bad_json', `payload is not JSON: ${why}`);
    }
  }
  const parentOf = new WeakMap<object, { holder: object; key: string }>();
  let problem: { holder: object; key: string; why: string; own: boolean } | undefined;
  let value: unknown;
  try {
    value = JSON.parse(text, function (this: object, key: string, v: unknown) {
      if (v !== null && typeof v === 'object') parentOf.set(v, { holder: this, key });
      if (problem === undefined) {
        if (FORBIDDEN_KEYS.has(key)) problem = { holder: this, key, why: `forbidden key '${key}'`, own: true };
        else if (hasLoneSurrogate(key)) problem = { holder: this, key, why: 'a key holds a lone surrogate', own: true };
        else if (typeof v === 'string' && hasLoneSurrogate(v)) {
          problem = { holder: this, key, why: 'a string holds a lone surrogate', own: true };
        }
      }
      return FORBIDDEN_KEYS.has(key) ? undefined : v;
    });
  } catch (e) {
    const why = e instanceof RangeError ? 'nesting too deep' : (e as Error).message;
    return refuse('bad_json', `payload is not JSON: ${why}`);
  }
  if (problem) return { ...refuse('unsafe_json', problem.why, pathOf(parentOf, problem.holder, problem.key)), value, text };
  return { ok: true, value, text, fast: false };
}

/** How many times `:` occurs in `s`. */
function colonsIn(s: string): number {
  let n = 0;
  for (let i = s.indexOf(':'); i !== -1; i = s.indexOf(':', i + 1)) n++;
  return n;
}

/** The colons a JSON text of `v` holds when written without `\u` escapes: one per key, and those in keys and strings. */
function colonsOfValue(v: unknown): number {
  if (typeof v === 'string') return v.indexOf(':') === -1 ? 0 : colonsIn(v);
  if (v === null || typeof v !== 'object') return 0;
  let n = 0;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) n += colonsOfValue(v[i]);
    return n;
  }
  const o = v as Record<string, unknown>;
  for (const k in o) n += 1 + (k.indexOf(':') === -1 ? 0 : colonsIn(k)) + colonsOfValue(o[k]);
  return n;
}

/**
 * How many keys the objects of `v` have, nested ones included (an object's own enumerable keys,
 * as colonsOfValue counts them, without looking into any key or string).
 */
function keysOfValue(v: object): number {
  let n = 0;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (x !== null && typeof x === 'object') n += keysOfValue(x);
    }
    return n;
  }
  const o = v as Record<string, unknown>;
  for (const k in o) {
    n++;
    const x = o[k];
    if (x !== null && typeof x === 'object') n += keysOfValue(x);
  }
  return n;
}

/**
 * A key given twice in a parse of parseJsonChecked. On the fast path (no `\u` escape, nothing
 * dropped) the text's colons are one per key plus those in keys and strings, so a count of them
 * against the parsed value's tells whether JSON.parse let a key go (then the scan names it); the
 * checked path's text may spell a colon as an escape, so it is scanned. The value's keys alone are
 * counted first (a third of the walk's cost: no key or string is searched): the text has at least
 * as many keys as the value and at least as many colons as keys, so colons = the value's keys
 * means no colon in a key or string and no key lost; a text with colons in its strings (a time
 * value) takes the full count.
 */
function repeatedKey(parsed: CheckedJson): string | undefined {
  if (parsed.fast) {
    const colons = colonsIn(parsed.text);
    const v = parsed.value;
    if (v !== null && typeof v === 'object' && colons === keysOfValue(v)) return undefined;
    if (colons === colonsOfValue(v)) return undefined;
  }
  return repeatedKeyPath(parsed.text, joinPath);
}

function pathOf(parentOf: WeakMap<object, { holder: object; key: string }>, holder: object, key: string): string {
  const keys: Array<string | number> = [];
  const push = (h: object, k: string) => keys.push(Array.isArray(h) && /^\d+$/.test(k) ? Number(k) : k);
  if (key !== '') push(holder, key);
  // The root's wrapper holder ({"": root}) has no parent entry; the walk stops there.
  for (let node: object | undefined = holder, guard = 0; node && guard < 10_000; guard++) {
    const up = parentOf.get(node);
    if (!up || up.key === '') break;
    push(up.holder, up.key);
    node = up.holder;
  }
  return keys.reverse().reduce<string>((p, k) => joinPath(p, k), '') || '$';
}

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isNonNegInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/**
 * `s` in at most `max` UTF-16 units, "…" where it was cut, never between the two halves of a
 * character outside the BMP (an emoji in a refused value), and with no lone surrogate. A dead
 * letter notice is read with the envelope's safe JSON, which refuses a lone surrogate, so a cut
 * inside a character lost the whole notice; a refused value quoted in a detail cut inside one
 * stored half of it (JSON's escape `\ud83d`, shown on the Dead letters screen for the character).
 */
export function cutText(s: string, max: number): string {
  let out = s;
  if (s.length > max) {
    let end = max - 1;
    const last = s.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end--;
    out = `${s.slice(0, end)}…`;
  }
  return out.replace(LONE_SURROGATES, '\uFFFD');
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  // At most 30 units of the value and "…".
  if (typeof v === 'string') return `a string ${JSON.stringify(cutText(v, 31))}`;
  return `${typeof v} ${String(v)}`;
}

/**
 * Parses and checks one event. `expect.site`, when given, must equal the topic's site.
 * Steps, in order (the first failing step decides the reason):
 *   1. size ≤ payload_bytes_max                       → too_large
 *   2. topic is an event topic (of the expected site)  → topic_mismatch
 *   3. UTF-8 + JSON                                    → bad_json
 *   4. no forbidden keys, no lone surrogates           → unsafe_json
 *   5. envelope fields, op rules                       → bad_envelope (with path)
 *   6. source.module/stream equal the topic's          → topic_mismatch
 *   7. no key given twice in an object                 → contract_violation in before/after,
 *                                                        else bad_envelope (with path and seq)
 * Step 3 also refuses nesting deeper than JSON_DEPTH_MAX, on either JSON path alike.
 */
export function parseEnvelope(
  topic: string,
  payload: Uint8Array,
  limits: EnvelopeLimits = DEFAULT_ENVELOPE_LIMITS,
  expect: { site?: string } = {},
): ParseResult {
  checkLimits(limits);
  if (payload.length > limits.payload_bytes_max) {
    return refuse('too_large', `payload is ${payload.length} bytes, more than payload_bytes_max ${limits.payload_bytes_max}`);
  }
  const parts = parseEventTopic(topic);
  if (!parts) return refuse('topic_mismatch', `'${topic}' is not tilstand/<site>/events/<module>/<stream>`);
  if (expect.site !== undefined && parts.site !== expect.site) {
    return refuse('topic_mismatch', `topic site '${parts.site}' is not this site '${expect.site}'`);
  }
  const parsed = parseJsonChecked(payload);
  if (!parsed.ok) {
    // Sequenced as a bad_envelope is (below), when its seq reads: a lone surrogate in a value, a
    // value nested too deep.
    const seq = 'value' in parsed ? readableSeq(parsed.value, parts, parsed.text) : undefined;
    return seq === undefined ? refusalOnly(parsed) : { ...refusalOnly(parsed), seq };
  }
  const checked = checkEnvelope(parsed.value);
  if (!checked.ok) {
    // A module's next events wait for this seq, and its resend is refused the same way: without
    // the seq the stream stood still until the gap was given up (5 min), a letter per resync.
    const seq = readableSeq(parsed.value, parts, parsed.text, parsed.fast);
    return seq === undefined ? checked : { ...checked, seq };
  }
  const { source } = checked.envelope;
  if (source.module !== parts.module) {
    return refuse('topic_mismatch', `source.module '${source.module}' but the topic's module is '${parts.module}'`, 'source.module');
  }
  if (source.stream !== parts.stream) {
    return refuse('topic_mismatch', `source.stream '${source.stream}' but the topic's stream is '${parts.stream}'`, 'source.stream');
  }
  // 7. No key given twice: JSON.parse kept the last value and said nothing ({"qty":1,"qty":5}
  // wrote 5). In a row image it is a contract_violation (no record of the contract), elsewhere a
  // bad_envelope; sequenced by its seq when the text gives no other (sourceAgrees: `source.seq`,
  // `source`, `.module` or `.stream` may be the key repeated, or repeated too after the one named).
  const twice = repeatedKey(parsed);
  if (twice !== undefined) {
    const reason = /^(after|before)[.[]/.test(twice) ? 'contract_violation' : 'bad_envelope';
    const r = refuse(reason, `${twice}: given twice; expected each key once (JSON would keep only the last)`, twice);
    return sourceAgrees(parsed.text, source.seq, parts) ? { ...r, seq: source.seq } : r;
  }
  return checked;
}

/**
 * `source.seq` of a value checkEnvelope refused, when it reads, the source names the topic's module
 * and stream, and the text gives no other seq or source (`sourceAgrees`).
 */
function readableSeq(v: unknown, parts: TopicParts, text: string, escapeFree = false): number | undefined {
  if (!isObject(v) || !isObject(v.source)) return undefined;
  const { module, stream, seq } = v.source;
  if (!(module === parts.module && stream === parts.stream && isNonNegInt(seq) && seq > 0)) return undefined;
  return (escapeFree && sourceKeysOnce(text)) || sourceAgrees(text, seq, parts) ? seq : undefined;
}

/**
 * Whether an escape-free text (the fast path's: no `\u`, so a key is spelled only as itself) names
 * `source`, `seq`, `module` and `stream` at most once each (as keys or strings): then none of them
 * was given twice, and the parsed value's are the only ones. Spares sourceAgrees' scan (a few µs)
 * on the common refusal (a field missing or mistyped); any other text is scanned.
 */
function sourceKeysOnce(text: string): boolean {
  let seen = 0;
  SOURCE_NAMES.lastIndex = 0;
  for (let m = SOURCE_NAMES.exec(text); m !== null; m = SOURCE_NAMES.exec(text)) {
    // Told apart by the fourth character: "se[q]", "so[u]rce", "mo[d]ule", "st[r]eam".
    const c = m[0].charCodeAt(3);
    const bit = c === 0x71 ? 1 : c === 0x75 ? 2 : c === 0x64 ? 4 : 8;
    if ((seen & bit) !== 0) return false;
    seen |= bit;
  }
  return true;
}

const SOURCE_NAMES = /"(?:seq|source|module|stream)"/g;

const JSON_SPACE = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * Whether every `source` object of the envelope `text` (valid JSON) gives `source.seq` = `seq` (at
 * least once; each time it gives it), and every `source.module`/`source.stream` it gives is the
 * topic's. JSON.parse keeps the last of a key given twice, so a refusal's seq read from the parsed
 * value may be one of two: a seq that is another event's consumes it (that event is then dropped
 * as a duplicate), so the refusal is sequenced only when the text gives this one seq (`"seq":7,
 * "seq":7` does; `"seq":7,"seq":8` does not, and waits out the gap as an unsequenced refusal).
 * Runs on refused events only (one pass over the text, strings skipped).
 */
function sourceAgrees(text: string, seq: number, parts: TopicParts): boolean {
  const kinds: boolean[] = []; // per open bracket: an object (true) or an array
  let expectKey = false;
  let inSource = false; // inside a top-level `source` object (kinds.length === 2 at its own level)
  let sourceSeq = false;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const j = closingQuote(text, i);
      if (j < 0) return false;
      if (!expectKey) {
        i = j + 1;
        continue;
      }
      expectKey = false;
      let key = text.slice(i + 1, j);
      if (key.includes('\\')) key = JSON.parse(text.slice(i, j + 1)) as string;
      let v = j + 1;
      while (v < n && JSON_SPACE(text.charCodeAt(v))) v++;
      v++; // the colon
      while (v < n && JSON_SPACE(text.charCodeAt(v))) v++;
      const depth = kinds.length;
      if (depth === 1 && key === 'source') {
        if (text.charCodeAt(v) !== 0x7b) return false; // a source that is no object gives no seq
        kinds.push(true);
        inSource = true;
        sourceSeq = false;
        expectKey = true;
        i = v + 1;
        continue;
      }
      if (depth === 2 && inSource && (key === 'seq' || key === 'module' || key === 'stream')) {
        const first = text.charCodeAt(v);
        if (first === 0x7b || first === 0x5b) return false;
        let end = v;
        if (first === 0x22) end = closingQuote(text, v) + 1;
        else while (end < n && !JSON_SPACE(text.charCodeAt(end)) && !',}]'.includes(text[end]!)) end++;
        if (end <= v) return false;
        const value = JSON.parse(text.slice(v, end)) as unknown;
        if (key === 'seq') {
          if (value !== seq) return false;
          sourceSeq = true;
        } else if (value !== (key === 'module' ? parts.module : parts.stream)) return false;
        i = end;
        continue;
      }
      i = v;
      continue;
    }
    if (c === 0x7b) {
      kinds.push(true);
      expectKey = true;
    } else if (c === 0x5b) kinds.push(false);
    else if (c === 0x7d || c === 0x5d) {
      if (inSource && kinds.length === 2) {
        if (!sourceSeq) return false;
        inSource = false;
      }
      kinds.pop();
    } else if (c === 0x2c) expectKey = kinds[kinds.length - 1] === true;
    i++;
  }
  return true;
}

/** Checks the shape of an already-parsed JSON value (step 5 above). */
/** A bad_envelope refusal at `path` (module level: no closure made per event). */
function bad(path: string, why: string): Refusal {
  return refuse('bad_envelope', `${path}: ${why}`, path);
}

export function checkEnvelope(v: unknown): ParseResult {
  if (!isObject(v)) return bad('$', `expected an object, got ${kindOf(v)}`);

  if (!('op' in v)) return bad('op', 'missing');
  if (typeof v.op !== 'string' || !(OPS as readonly string[]).includes(v.op)) {
    return bad('op', `expected one of c, u, d, r, got ${kindOf(v.op)}`);
  }
  const op = v.op as Op;

  for (const side of ['before', 'after'] as const) {
    if (!(side in v)) return bad(side, 'missing (send null when there is no image)');
    if (v[side] !== null && !isObject(v[side])) return bad(side, `expected an object or null, got ${kindOf(v[side])}`);
  }
  const before = v.before as RowImage | null;
  const after = v.after as RowImage | null;
  switch (op) {
    case 'c':
    case 'r':
      if (after === null) return bad('after', `op '${op}' needs an after image`);
      if (before !== null) return bad('before', `op '${op}' must have before = null`);
      break;
    case 'u':
      if (after === null) return bad('after', `op 'u' needs an after image`);
      break;
    case 'd':
      if (before === null) return bad('before', `op 'd' needs a before image`);
      if (after !== null) return bad('after', `op 'd' must have after = null`);
      break;
  }

  if (!('source' in v)) return bad('source', 'missing');
  const source = v.source;
  if (!isObject(source)) return bad('source', `expected an object, got ${kindOf(source)}`);
  for (const key of ['module', 'stream'] as const) {
    const s = source[key];
    if (s === undefined) return bad(`source.${key}`, 'missing');
    if (typeof s !== 'string' || !NAME_PATTERN.test(s)) {
      return bad(`source.${key}`, `expected a name matching ${NAME_PATTERN.source}, got ${kindOf(s)}`);
    }
  }
  if (source.seq === undefined) return bad('source.seq', 'missing');
  // Streams start at 1: a 0 would be taken for "already applied" by the sequencer (its high-water
  // mark starts at 0) and dropped after its PUBACK, so it is a dead letter instead.
  if (!isNonNegInt(source.seq) || source.seq === 0) return bad('source.seq', `expected a positive safe integer (a stream starts at 1), got ${kindOf(source.seq)}`);

  if (v.ts_ms === undefined) return bad('ts_ms', 'missing');
  if (!isNonNegInt(v.ts_ms)) return bad('ts_ms', `expected a non-negative safe integer (epoch ms), got ${kindOf(v.ts_ms)}`);

  if (v.contract === undefined) return bad('contract', 'missing');
  const contract = v.contract;
  if (!isObject(contract)) return bad('contract', `expected an object, got ${kindOf(contract)}`);
  if (contract.name === undefined) return bad('contract.name', 'missing');
  if (typeof contract.name !== 'string' || contract.name.length === 0 || contract.name.length > 128) {
    return bad('contract.name', `expected a non-empty string, got ${kindOf(contract.name)}`);
  }
  if (contract.version === undefined) return bad('contract.version', 'missing');
  if (!isNonNegInt(contract.version) || contract.version < 1) {
    return bad('contract.version', `expected a positive integer, got ${kindOf(contract.version)}`);
  }

  const envelope: Envelope = {
    op,
    before,
    after,
    source: source as EnvelopeSource,
    ts_ms: v.ts_ms,
    contract: { name: contract.name, version: contract.version },
  };
  return { ok: true, envelope };
}
