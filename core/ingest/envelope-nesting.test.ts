// The two JSON paths of parseEnvelope agree on nesting. An escape-free payload took a plain
// JSON.parse (iterative in V8: any depth), and one with a `\u` escape the checked walk (a reviver,
// recursive: a RangeError past ~2,700 levels, fewer on a deeper stack), so the same event was an
// accepted envelope or a `bad_json` letter depending on an escape in an unrelated string. Now both
// refuse more than JSON_DEPTH_MAX levels before parsing, with the same detail.
import { describe, expect, it } from 'vitest';
import { JSON_DEPTH_MAX, parseEnvelope, parseJsonSafely } from './envelope.ts';

const TOPIC = 'tilstand/s1/events/inventory/stock';
const LIMITS = { payload_bytes_max: 1 << 20 };

/** A valid envelope whose source extra `deep` nests `levels` levels (the envelope itself adds 2). */
function event(levels: number, escape: boolean): Buffer {
  const deep = '['.repeat(levels) + ']'.repeat(levels);
  const connector = escape ? 'wms\\u0041' : 'wmsA';
  return Buffer.from(
    `{"op":"c","before":null,"after":{"item":"A-1","location":"L1","qty":4},"source":{"module":"inventory","stream":"stock","seq":7,"connector":"${connector}","deep":${deep}},"ts_ms":1,"contract":{"name":"inventory.stock","version":1}}`,
  );
}

const outcome = (payload: Buffer) => {
  const r = parseEnvelope(TOPIC, payload, LIMITS);
  return r.ok ? { ok: true, connector: r.envelope.source.connector } : { ok: false, reason: r.reason, detail: r.detail };
};

describe('nesting depth: the fast and the checked path agree', () => {
  it.each([3_000, 10_000, JSON_DEPTH_MAX - 1])('an event nesting %i levels in a source extra', (levels) => {
    const plain = outcome(event(levels, false));
    const escaped = outcome(event(levels, true));
    expect({ ...escaped, connector: undefined }).toEqual({ ...plain, connector: undefined });
    // Every case is past the bound (the envelope and `source` add 2 levels).
    expect(plain).toEqual({ ok: false, reason: 'bad_json', detail: `payload is not JSON: nesting deeper than ${JSON_DEPTH_MAX} levels` });
    // Its seq reads, so the Ingestor sequences the refusal and the stream goes on (DESIGN.md).
    for (const escape of [false, true]) {
      const r = parseEnvelope(TOPIC, event(levels, escape), LIMITS);
      expect(!r.ok && r.seq).toBe(7);
    }
  });

  it('the bound is exact: JSON_DEPTH_MAX levels go, one more is refused, on both paths; brackets inside strings do not count', () => {
    for (const escape of [false, true]) {
      expect(outcome(event(JSON_DEPTH_MAX - 2, escape)).ok).toBe(true);
      expect(outcome(event(JSON_DEPTH_MAX - 1, escape))).toMatchObject({ ok: false, reason: 'bad_json' });
    }
    const brackets = `{"a":"${'['.repeat(5000)}\\u0041${'{'.repeat(5000)}"}`;
    expect(parseJsonSafely(Buffer.from(brackets)).ok).toBe(true);
    expect(parseJsonSafely(Buffer.from(brackets.replace('\\u0041', 'A'))).ok).toBe(true);
  });
});
