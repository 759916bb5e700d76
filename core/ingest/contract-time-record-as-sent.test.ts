// The record a contract's check gives the bindings carries a TIMESTAMP(p) field's text as sent
// unless it has more than p fraction digits (CONTRACTS.md §1, "Time values as Java reads them").
// The check for "more than p digits" looked for a digit p places after the text's '.', and a text
// with no fraction at all ('…T08:00:00Z', the common form) has no '.': it looked at the year's
// digits instead, so every TIMESTAMP(1), (2), (3) or (5) field sent without a fraction was
// rewritten to the value's own text ('…T08:00:00+01:00' became '…T07:00:00.000'), what a STRING
// column bound to the field then stored, and valueToJson ran for every such event.
import { describe, expect, it } from 'vitest';
import { validate, validateGeneric, type Contract } from './contracts.ts';

const TYPES = ['TIMESTAMP(0)', 'TIMESTAMP(1)', 'TIMESTAMP(2)', 'TIMESTAMP(3)', 'TIMESTAMP(5)', 'TIMESTAMP(6)', 'TIMESTAMP(3) WITH LOCAL TIME ZONE'];
const C: Contract = {
  name: 'yard.gate',
  version: 1,
  compatibility: 'NONE',
  fields: [{ name: 'id', type: 'STRING NOT NULL' }, ...TYPES.map((type, i) => ({ name: `f${i}`, type, default: null }))],
};

describe('a TIMESTAMP(p) field sent without a fraction', () => {
  it('is carried in the record as sent, whatever p', () => {
    for (const text of ['2026-12-01T08:00:00Z', '2026-12-01T08:00:00+01:00', '2026-12-01 08:00', '2026-12-01T08:00']) {
      for (let i = 0; i < TYPES.length; i++) {
        for (const check of [validate, validateGeneric]) {
          const r = check(C, { id: 'a', [`f${i}`]: text });
          expect(r.ok, `${TYPES[i]} ${text}`).toBe(true);
          expect((r as { record: Record<string, unknown> }).record[`f${i}`], `${TYPES[i]} ${text}`).toBe(text);
        }
      }
    }
  });

  it('with more fraction digits than p it still carries the value read', () => {
    expect(validate(C, { id: 'a', f3: '2026-12-01T08:00:00.1239Z' })).toMatchObject({ ok: true, record: { f3: '2026-12-01T08:00:00.123' } });
    expect(validate(C, { id: 'a', f1: '2026-12-01T08:00:00.19+01:00' })).toMatchObject({ ok: true, record: { f1: '2026-12-01T07:00:00.1' } });
    expect(validate(C, { id: 'a', f3: '2026-12-01T08:00:00.123Z' })).toMatchObject({ ok: true, record: { f3: '2026-12-01T08:00:00.123Z' } });
  });
});
