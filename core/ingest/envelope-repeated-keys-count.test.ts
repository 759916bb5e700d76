// The escape-free parse decides "no key given twice" by counting: first the text's colons against
// the parsed value's keys alone (equal only when no key or string holds a colon and no key was
// lost), then against the keys plus the colons in keys and strings, and otherwise the text is
// scanned (envelope.ts `repeatedKey`). Randomized events with and without colons in their strings,
// with and without a repeated key, nested objects and arrays: parseEnvelope refuses exactly the
// ones the scan finds a repeated key in, naming the scan's path.
import { describe, expect, it } from 'vitest';
import { repeatedKeyPath } from '../lsm/json-keys.ts';
import { mulberry32 } from '../lsm/testing/prng.ts';
import { joinPath, parseEnvelope } from './envelope.ts';

const TOPIC = 'tilstand/s1/events/inventory/stock';

describe('a repeated key found by counting, on the escape-free path', () => {
  it('refuses exactly what the scan finds (randomized)', () => {
    const seed = Number(process.env.TEST_SEED ?? Date.now() % 1_000_000);
    console.log(`envelope-repeated-keys-count seed ${seed}`);
    const rnd = mulberry32(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const KEYS = ['a', 'b', 'c', 'k', 'x:y', 'at'];
    const STRINGS = ['w', 'a:b', '2026-12-01T08:00:00Z', '', 'q"', ':"k":', '::'];
    const value = (depth: number): string => {
      const r = rnd();
      if (depth > 0 && r < 0.2) return object(depth - 1);
      if (depth > 0 && r < 0.3) return `[${Array.from({ length: Math.floor(rnd() * 3) }, () => value(depth - 1)).join(',')}]`;
      if (r < 0.6) return JSON.stringify(pick(STRINGS));
      return String(Math.floor(rnd() * 100));
    };
    const object = (depth: number): string => {
      const n = Math.floor(rnd() * 4);
      const keys: string[] = [];
      for (let i = 0; i < n; i++) keys.push(rnd() < 0.15 && keys.length > 0 ? pick(keys) : pick(KEYS));
      return `{${keys.map((k) => `${JSON.stringify(k)}:${value(depth)}`).join(',')}}`;
    };
    let refused = 0;
    let accepted = 0;
    for (let i = 0; i < 3000; i++) {
      const extras = [`"extra":${object(2)}`];
      if (rnd() < 0.3) extras.push(`"at":${value(1)}`);
      const qty = rnd() < 0.1 ? '"qty":1,"qty":2' : '"qty":1';
      const text = `{"op":"u","before":null,"after":{"item":"A-1","location":"L1",${qty}},"source":{"module":"inventory","stream":"stock","seq":7,${extras.join(',')}},"ts_ms":1,"contract":{"name":"inventory.stock","version":1}}`;
      expect(text.includes('\\u'), text).toBe(false);
      JSON.parse(text); // valid JSON, or the generator is wrong
      const twice = repeatedKeyPath(text, joinPath);
      const r = parseEnvelope(TOPIC, Buffer.from(text));
      if (twice === undefined) {
        expect(r.ok, `seed ${seed}: ${text}: ${r.ok ? '' : r.detail}`).toBe(true);
        accepted++;
      } else {
        expect(r.ok, `seed ${seed}: ${text}`).toBe(false);
        if (!r.ok) expect(r.path, `seed ${seed}: ${text}`).toBe(twice);
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(100);
    expect(accepted).toBeGreaterThan(100);
  });

  it('an event without a colon in any key or string: a repeated key anywhere is refused, none is accepted', () => {
    const ok = '{"op":"u","before":null,"after":{"item":"A-1","location":"L1","qty":3},"source":{"module":"inventory","stream":"stock","seq":7,"x":[{"k":1},{"k":2}]},"ts_ms":1,"contract":{"name":"inventory.stock","version":1}}';
    expect(parseEnvelope(TOPIC, Buffer.from(ok)).ok).toBe(true);
    for (const [text, path] of [
      [ok.replace('"qty":3', '"qty":3,"qty":5'), 'after.qty'],
      [ok.replace('{"k":2}', '{"k":2,"k":3}'), 'source.x[1].k'],
      [ok.replace('"ts_ms":1', '"ts_ms":1,"ts_ms":1'), 'ts_ms'],
    ] as const) {
      const r = parseEnvelope(TOPIC, Buffer.from(text));
      expect(r.ok, text).toBe(false);
      if (!r.ok) expect(r.path).toBe(path);
    }
  });
});
