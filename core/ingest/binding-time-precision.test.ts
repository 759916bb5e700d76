// A binding into a time column of lower precision than what it reads cuts to the column's precision,
// as Paimon's cast does (TimestampToTimestampCastRule → DateTimeUtils.truncate; never rounded):
// - a TIMESTAMP(6) field into a TIMESTAMP(0) column kept its fraction (the record's text was read
//   at the column's type, and core/lsm cut only p ≤ 3 — to milliseconds — and p = 6);
// - `ts_ms` into a TIMESTAMP(0) column kept its milliseconds (…08:00:00.750 in a column of whole
//   seconds; TIMESTAMP_MILLIS 750 in its file).
// And a column of higher precision than its field gets the field's value, not the digits the
// field cut: a TIMESTAMP(0) field sent …08:00:00.5Z holds 08:00:00, and so does a TIMESTAMP(3)
// column bound to it (the record carries the field's value when the text has more digits).
// Both binding paths (compiled and generic) agree.
import { describe, expect, it } from 'vitest';
import { parseType, type DataField } from '../lsm/types.ts';
import { applyBinding, applyBindingGeneric, type Binding } from './binding.ts';
import { validate, type Contract } from './contracts.ts';
import type { Envelope } from './envelope.ts';

const US = (iso: string) => Date.parse(iso) * 1000;

const CONTRACT: Contract = {
  name: 'yard.gate',
  version: 1,
  compatibility: 'NONE',
  fields: [
    { name: 'id', type: 'STRING NOT NULL' },
    { name: 'at', type: 'TIMESTAMP(6)' },
    { name: 'at_ltz', type: 'TIMESTAMP(6) WITH LOCAL TIME ZONE' },
    { name: 'at0', type: 'TIMESTAMP(0)', default: null },
  ],
};
const TABLE: DataField[] = [
  { id: 0, name: 'id', type: parseType('STRING NOT NULL') },
  { id: 1, name: 's0', type: parseType('TIMESTAMP(0)') },
  { id: 2, name: 's1', type: parseType('TIMESTAMP(1)') },
  { id: 3, name: 's3', type: parseType('TIMESTAMP(3)') },
  { id: 4, name: 's4', type: parseType('TIMESTAMP(4) WITH LOCAL TIME ZONE') },
  { id: 5, name: 'l0', type: parseType('TIMESTAMP(0) WITH LOCAL TIME ZONE') },
  { id: 6, name: 't0', type: parseType('TIMESTAMP(0)') },
  { id: 7, name: 't2', type: parseType('TIMESTAMP(2) WITH LOCAL TIME ZONE') },
  { id: 8, name: 't6', type: parseType('TIMESTAMP(6)') },
  { id: 9, name: 'u3', type: parseType('TIMESTAMP(3)') },
  { id: 10, name: 'u6', type: parseType('TIMESTAMP(6) WITH LOCAL TIME ZONE') },
];
const BINDING: Binding = {
  topic: 'tilstand/+/events/yard/gate',
  contract: 'yard.gate',
  table: 'yard_gate',
  columns: { id: 'after.id', s0: 'after.at', s1: 'after.at', s3: 'after.at', s4: 'after.at', l0: 'after.at_ltz', t0: 'ts_ms', t2: 'ts_ms', t6: 'ts_ms', u3: 'after.at0', u6: 'after.at0' },
};

function rowOf(after: Record<string, unknown>, tsMs: number): Record<string, unknown> {
  const checked = validate(CONTRACT, after, 'after');
  expect(checked.ok, JSON.stringify(checked)).toBe(true);
  const envelope: Envelope = {
    op: 'c',
    before: null,
    after: (checked as { record: Record<string, unknown> }).record,
    source: { module: 'yard', stream: 'gate', seq: 1 },
    ts_ms: tsMs,
    contract: { name: 'yard.gate', version: 1 },
  };
  const fast = applyBinding(BINDING, envelope, TABLE);
  expect(fast).toStrictEqual(applyBindingGeneric(BINDING, envelope, TABLE));
  expect(fast.ok, JSON.stringify(fast)).toBe(true);
  return (fast as { row: Record<string, unknown> }).row;
}

describe('a binding into a time column of lower precision', () => {
  it('cuts a TIMESTAMP(6) field to the column\'s precision', () => {
    const row = rowOf({ id: 'g1', at: '2026-12-01T08:00:00.987654', at_ltz: '2026-12-01T08:00:00.999999Z' }, 1);
    const at = US('2026-12-01T08:00:00Z');
    expect(row).toMatchObject({ s0: at, s1: at + 900_000, s3: at + 987_000, s4: at + 987_600, l0: at });
  });

  it('cuts ts_ms to the column\'s precision', () => {
    const ms = Date.parse('2026-12-01T08:00:00.759Z');
    const row = rowOf({ id: 'g2', at: null, at_ltz: null }, ms);
    expect(row).toMatchObject({ t0: US('2026-12-01T08:00:00Z'), t2: US('2026-12-01T08:00:00.75Z'), t6: ms * 1000 });
  });
});

describe('a binding into a time column of higher precision', () => {
  it('writes the field\'s value, not the digits the field cut', () => {
    const checked = validate(CONTRACT, { id: 'g3', at: null, at_ltz: null, at0: '2026-12-01T08:00:00.5+01:00' }, 'after');
    expect(checked).toMatchObject({ ok: true, values: { at0: US('2026-12-01T07:00:00Z') }, record: { at0: '2026-12-01T07:00:00' } });
    const row = rowOf({ id: 'g3', at: null, at_ltz: null, at0: '2026-12-01T08:00:00.5+01:00' }, 1);
    expect(row).toMatchObject({ u3: US('2026-12-01T07:00:00Z'), u6: US('2026-12-01T07:00:00Z') });
    // Digits within the precision: the text as sent.
    expect(validate(CONTRACT, { id: 'g4', at: '2026-12-01T08:00:00.5+01:00', at_ltz: null, at0: '2026-12-01T08:00:00+01:00' }, 'after')).toMatchObject({
      ok: true,
      record: { at: '2026-12-01T08:00:00.5+01:00', at0: '2026-12-01T08:00:00+01:00' },
    });
  });
});
