// Stable JSON (json.ts) keeps every key, `__proto__` too: ingest takes it as a column name, so an
// evidence row or a config read with JSON.parse may hold it as an own key. Copied into a plain
// object by assignment it set that object's prototype instead, and the key left the output.
import { describe, expect, it } from 'vitest';
import { stableJson } from './json.ts';

describe('stableJson', () => {
  it('keeps a __proto__ key, with a plain value and with an object, sorted as any key', () => {
    const row = JSON.parse('{"z": 1, "__proto__": "pallet", "a": {"__proto__": {"b": 2}}}', (_k, v) => (v === 2 ? 2n : v)) as unknown;
    expect(stableJson(row, 0)).toBe('{"__proto__":"pallet","a":{"__proto__":{"b":"2"}},"z":1}');
    expect(JSON.parse(stableJson(row))).toEqual(JSON.parse('{"__proto__": "pallet", "a": {"__proto__": {"b": "2"}}, "z": 1}'));
  });
});
