import { describe, expect, it } from 'vitest';
import { DEAD_LETTER_REASONS, parseEnvelope, parseEventTopic, type ParseResult } from './envelope.ts';

const TOPIC = 'tilstand/s1/events/inventory/stock';
const LIMITS = { payload_bytes_max: 4096 };

const good = () => ({
  op: 'c',
  before: null,
  after: { item: 'A-1', location: 'L1', qty: 4 },
  source: { module: 'inventory', stream: 'stock', seq: 7, connector: 'wms' },
  ts_ms: 1_764_000_000_000,
  contract: { name: 'inventory.stock', version: 1 },
});

const parse = (v: unknown, topic = TOPIC): ParseResult => parseEnvelope(topic, Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)), LIMITS);
const refusal = (r: ParseResult) => {
  if (r.ok) throw new Error('expected a refusal');
  return r;
};

describe('parseEnvelope: accepts', () => {
  it('a well-formed create, keeping source extras', () => {
    const r = parse(good());
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.envelope.source).toEqual({ module: 'inventory', stream: 'stock', seq: 7, connector: 'wms' });
      expect(r.envelope.contract).toEqual({ name: 'inventory.stock', version: 1 });
    }
  });

  it('u with or without before, d with before, r like c; seq 1 and surrogate pairs are fine', () => {
    expect(parse({ ...good(), op: 'u' }).ok).toBe(true);
    expect(parse({ ...good(), op: 'u', before: { item: 'A-1' } }).ok).toBe(true);
    expect(parse({ ...good(), op: 'd', before: { item: 'A-1' }, after: null }).ok).toBe(true);
    expect(parse({ ...good(), op: 'r' }).ok).toBe(true);
    expect(parse({ ...good(), source: { module: 'inventory', stream: 'stock', seq: 1 } }).ok).toBe(true);
    expect(parse({ ...good(), after: { item: 'box 📦', location: 'L1', qty: 1 } }).ok).toBe(true);
  });
});

describe('parseEnvelope: refuses, with reason and path', () => {
  it('payloads above payload_bytes_max', () => {
    const r = refusal(parseEnvelope(TOPIC, Buffer.alloc(4097, 0x20), LIMITS));
    expect(r.reason).toBe('too_large');
    expect(r.detail).toMatch(/4097 bytes, more than payload_bytes_max 4096/);
  });

  it('bad UTF-8 and bad JSON', () => {
    expect(refusal(parseEnvelope(TOPIC, Buffer.from([0x7b, 0xff, 0x7d]), LIMITS)).reason).toBe('bad_json');
    expect(refusal(parse('{"op": "c",')).reason).toBe('bad_json');
    expect(refusal(parse('')).reason).toBe('bad_json');
  });

  it('very deep nesting within the size limit', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const r = parseEnvelope(TOPIC, Buffer.from(deep), { payload_bytes_max: 300_000 });
    expect(r.ok).toBe(false);
  });

  it.each(['__proto__', 'constructor', 'prototype'])('the key %s anywhere, naming its path, without touching prototypes', (key) => {
    const text = JSON.stringify(good()).replace('"qty":4', `"qty":4,"${key}":{"polluted":true}`);
    const r = refusal(parse(text));
    expect(r.reason).toBe('unsafe_json');
    expect(r.path).toBe(`after.${key}`);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a forbidden key deep in an array', () => {
    const text = JSON.stringify({ ...good(), source: { module: 'inventory', stream: 'stock', seq: 1, tags: [{}, { ok: 1 }] } }).replace(
      '{"ok":1}',
      '{"ok":1,"__proto__":{"x":1}}',
    );
    expect(refusal(parse(text)).path).toBe('source.tags[1].__proto__');
  });

  it('lone surrogates in values and keys', () => {
    const v = JSON.stringify(good()).replace('"A-1"', '"A\\ud800-1"');
    const r = refusal(parse(v));
    expect(r.reason).toBe('unsafe_json');
    expect(r.path).toBe('after.item');
    const k = JSON.stringify(good()).replace('"qty"', '"q\\udc00ty"');
    expect(refusal(parse(k))).toMatchObject({ reason: 'unsafe_json', detail: 'a key holds a lone surrogate' });
  });

  it.each([
    [{ op: undefined }, 'op', /missing/],
    [{ op: 'x' }, 'op', /expected one of c, u, d, r, got a string "x"/],
    [{ before: undefined }, 'before', /missing/],
    [{ after: [1] }, 'after', /expected an object or null, got an array/],
    [{ after: null }, 'after', /op 'c' needs an after image/],
    [{ before: { item: 'A' } }, 'before', /op 'c' must have before = null/],
    [{ op: 'd', before: null, after: null }, 'before', /op 'd' needs a before image/],
    [{ op: 'd', before: { a: 1 } }, 'after', /op 'd' must have after = null/],
    [{ op: 'u', after: null }, 'after', /op 'u' needs an after image/],
    [{ source: undefined }, 'source', /missing/],
    [{ source: { module: 'inventory', stream: 'stock' } }, 'source.seq', /missing/],
    [{ source: { module: 'inventory', stream: 'stock', seq: -1 } }, 'source.seq', /positive safe integer \(a stream starts at 1\), got number -1/],
    // Was accepted, then taken for a duplicate by the sequencer and dropped after its PUBACK.
    [{ source: { module: 'inventory', stream: 'stock', seq: 0 } }, 'source.seq', /positive safe integer \(a stream starts at 1\), got number 0/],
    [{ source: { module: 'inventory', stream: 'stock', seq: 1.5 } }, 'source.seq', /got number 1.5/],
    [{ source: { module: 'inventory', stream: 'stock', seq: 2 ** 53 } }, 'source.seq', /positive safe integer/],
    [{ source: { module: 'inventory', stream: 'stock', seq: '7' } }, 'source.seq', /got a string "7"/],
    [{ source: { stream: 'stock', seq: 1 } }, 'source.module', /missing/],
    [{ source: { module: 'inv/x', stream: 'stock', seq: 1 } }, 'source.module', /expected a name/],
    [{ ts_ms: 'now' }, 'ts_ms', /epoch ms/],
    [{ contract: undefined }, 'contract', /missing/],
    [{ contract: { version: 1 } }, 'contract.name', /missing/],
    [{ contract: { name: 'inventory.stock', version: 0 } }, 'contract.version', /positive integer/],
  ])('bad envelope %j at %s', (patch, path, why) => {
    const v: Record<string, unknown> = { ...good(), ...patch };
    for (const [k, x] of Object.entries(patch)) if (x === undefined) delete v[k];
    const r = refusal(parse(v));
    expect(r.reason).toBe('bad_envelope');
    expect(r.path).toBe(path);
    expect(r.detail).toMatch(why);
  });

  it('shows a long refused value cut at a character boundary, never inside a character outside the BMP', () => {
    // A 😀 is two UTF-16 units; cut between them at 30 units, the detail stored half of it (as
    // JSON's escape \ud83d) and the Dead letters screen showed that text for the character.
    const emoji = '\u{1F600}';
    const r = refusal(parse({ ...good(), op: `${'o'.repeat(29)}${emoji}more` }));
    expect(r.path).toBe('op');
    expect(r.detail).toBe(`op: expected one of c, u, d, r, got a string "${'o'.repeat(29)}…"`);
    const whole = refusal(parse({ ...good(), op: `${'o'.repeat(28)}${emoji}more` }));
    expect(whole.detail).toBe(`op: expected one of c, u, d, r, got a string "${'o'.repeat(28)}${emoji}…"`);
  });

  it('a payload that is not an object', () => {
    expect(refusal(parse('[1]'))).toMatchObject({ reason: 'bad_envelope', path: '$' });
  });

  it('topic and source that disagree, and topics that are not event topics', () => {
    const r = refusal(parse(good(), 'tilstand/s1/events/commerce/stock'));
    expect(r).toMatchObject({ reason: 'topic_mismatch', path: 'source.module' });
    expect(r.detail).toMatch(/source.module 'inventory' but the topic's module is 'commerce'/);
    expect(refusal(parse(good(), 'tilstand/s1/events/inventory/levels'))).toMatchObject({ reason: 'topic_mismatch', path: 'source.stream' });
    expect(refusal(parse(good(), 'tilstand/s1/commands/inventory')).reason).toBe('topic_mismatch');
    expect(refusal(parse(good(), 'tilstand/s1/events/inventory/stock/extra')).reason).toBe('topic_mismatch');
    const other = parseEnvelope(TOPIC, Buffer.from(JSON.stringify(good())), LIMITS, { site: 's2' });
    expect(refusal(other).detail).toMatch(/topic site 's1' is not this site 's2'/);
  });

  it('every reason used is in the closed set', () => {
    for (const r of ['too_large', 'bad_json', 'unsafe_json', 'bad_envelope', 'topic_mismatch']) {
      expect(DEAD_LETTER_REASONS).toContain(r);
    }
  });

  it('refuses a nonsense limit at the call, not per event', () => {
    expect(() => parseEnvelope(TOPIC, Buffer.from('{}'), { payload_bytes_max: 0 })).toThrow(/payload_bytes_max: expected an integer ≥ 64 \(bytes\), got 0/);
  });
});

describe('parseEventTopic', () => {
  it('splits event topics and refuses others', () => {
    expect(parseEventTopic('tilstand/s1/events/inventory/stock')).toEqual({ site: 's1', module: 'inventory', stream: 'stock' });
    expect(parseEventTopic('tilstand/s1/events/inventory')).toBeUndefined();
    expect(parseEventTopic('tilstand/s1/events/inv+/stock')).toBeUndefined();
    expect(parseEventTopic('other/s1/events/inventory/stock')).toBeUndefined();
  });
});
