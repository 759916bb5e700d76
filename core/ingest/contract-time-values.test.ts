// TIME, TIMESTAMP and TIMESTAMP_LTZ text as Java reads it (CONTRACTS.md §1, "Time values as Java
// reads them"), and a FLOAT or DOUBLE default beyond the type's range:
// - a leap second (`23:59:60`) was refused as "no such time": it is read as 23:59:59 with its
//   fraction, as java.time reads an ISO instant (Instant.parse); a 60 at any other minute is still
//   refused. `T24:00:00` (ISO-8601's end of the day) is the next day's 00:00, as Paimon's cast and
//   Instant.parse read it.
// - more fraction digits than a TIMESTAMP(p)'s precision: Paimon's cast (DateTimeUtils
//   fromTemporalAccessor) truncates to p digits. TIMESTAMP(0), (1), (2), (4), (5) kept them (a
//   TIMESTAMP(0) row held 08:00:00.5); TIME keeps milliseconds whatever its precision and rounds a
//   fourth digit half up (DateTimeUtils.parseFraction), where 4 to 9 digits were refused (Python's
//   isoformat gives 6).
// - a FLOAT default of 1e39 registered, and every event without the field became a dead letter
//   (a FLOAT column's unfit_for_table); a DOUBLE's Infinity registered as null in the file, and a
//   NOT NULL field's file then stopped the next start. Now the registration is refused, naming the
//   field and the range.
// The rules are core/lsm's (types.ts timestampFromString, timeFromString, valueFromJson): the
// contract's record carries the text as sent (a TIMESTAMP(p)'s with more than p fraction digits as
// the value read), and both binding paths read it to the value the contract read; validate (fast)
// and validateGeneric agree.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseType, type DataField } from '../lsm/types.ts';
import { applyBinding, applyBindingGeneric, type Binding } from './binding.ts';
import { checkEnvelopeContract, ContractError, ContractRegistry, validate, validateGeneric, type Contract } from './contracts.ts';
import type { Envelope } from './envelope.ts';

const TYPES = ['TIME(0)', 'TIME(3)', 'TIMESTAMP(0)', 'TIMESTAMP(1)', 'TIMESTAMP(3)', 'TIMESTAMP(5)', 'TIMESTAMP(6)', 'TIMESTAMP(3) WITH LOCAL TIME ZONE', 'TIMESTAMP(0) WITH LOCAL TIME ZONE'];
const CLOCK: Contract = Object.freeze({
  name: 'yard.clock',
  version: 1,
  compatibility: 'NONE',
  fields: Object.freeze([{ name: 'id', type: 'STRING NOT NULL' }, ...TYPES.map((type, i) => ({ name: `f${i}`, type, default: null }))].map((f) => Object.freeze(f))),
}) as Contract;
const FIELD = (type: string) => `f${TYPES.indexOf(type)}`;
const TABLE: DataField[] = [
  { id: 0, name: 'id', type: parseType('STRING NOT NULL') },
  ...TYPES.map((type, i) => ({ id: i + 1, name: `f${i}`, type: parseType(type) })),
];
const BINDING: Binding = {
  topic: 'tilstand/+/events/yard/clock',
  contract: 'yard.clock',
  table: 'yard_clock',
  columns: Object.fromEntries([['id', 'after.id'], ...TYPES.map((_, i) => [`f${i}`, `after.f${i}`])]),
};

const US = (iso: string) => Date.parse(iso) * 1000;

/** The value the contract and both binding paths give `text` for `type`, or the refusal's message. */
function read(type: string, text: string): { value: unknown; record: unknown } | { problem: string } {
  const field = FIELD(type);
  const rec = { id: 'a', [field]: text };
  const a = validate(CLOCK, rec, 'after');
  const b = validateGeneric(CLOCK, rec, 'after');
  expect(a).toStrictEqual(b);
  if (!a.ok) return { problem: a.errors.map((e) => `${e.path}: ${e.message}`).join('; ') };
  const envelope: Envelope = {
    op: 'c',
    before: null,
    after: a.record,
    source: { module: 'yard', stream: 'clock', seq: 1 },
    ts_ms: 1,
    contract: { name: 'yard.clock', version: 1 },
  };
  const fast = applyBinding(BINDING, envelope, TABLE);
  const generic = applyBindingGeneric(BINDING, envelope, TABLE);
  expect(fast).toStrictEqual(generic);
  expect(fast.ok, JSON.stringify(fast)).toBe(true);
  const row = (fast as { row: Record<string, unknown> }).row;
  // What the binding writes is what the contract read.
  expect(row[field]).toBe(a.values[field]);
  return { value: a.values[field], record: a.record[field] };
}

describe('a leap second', () => {
  it('is read as second 59 of 23:59, fraction kept, as java.time reads an ISO instant', () => {
    expect(read('TIMESTAMP(3)', '2026-06-30T23:59:60Z')).toMatchObject({ value: US('2026-06-30T23:59:59Z') });
    expect(read('TIMESTAMP(6)', '2016-12-31T23:59:60.5Z')).toMatchObject({ value: US('2016-12-31T23:59:59.5Z') });
    // The text's own clock decides, as in Instant.parse: 23:59:60+02:00 is 21:59:59Z.
    expect(read('TIMESTAMP(3) WITH LOCAL TIME ZONE', '2016-12-31T23:59:60+02:00')).toMatchObject({ value: US('2016-12-31T21:59:59Z') });
    expect(read('TIMESTAMP(0)', '2016-12-31 23:59:60.999')).toMatchObject({ value: US('2016-12-31T23:59:59Z') });
    expect(read('TIME(0)', '23:59:60')).toMatchObject({ value: 86_399_000 });
    expect(read('TIME(3)', '23:59:60.25')).toMatchObject({ value: 86_399_250 });
  });

  it('at any other minute, or a second 61, is still refused', () => {
    expect(read('TIMESTAMP(3)', '2026-06-30T12:00:60Z')).toMatchObject({ problem: expect.stringContaining('no such time') });
    expect(read('TIMESTAMP(3)', '2026-06-30T23:59:61Z')).toMatchObject({ problem: expect.stringContaining('no such time') });
    expect(read('TIME(0)', '12:34:60')).toMatchObject({ problem: expect.stringContaining('no such time') });
    // The date is still checked.
    expect(read('TIMESTAMP(3)', '2026-02-30T23:59:60Z')).toMatchObject({ problem: expect.stringContaining('no such date') });
  });
});

describe('the end of a day, T24:00', () => {
  it('is the next day at 00:00, as Paimon\'s cast and Instant.parse read it; 24:00:01 is refused', () => {
    expect(read('TIMESTAMP(3)', '2026-12-31T24:00:00Z')).toMatchObject({ value: US('2027-01-01T00:00:00Z') });
    expect(read('TIMESTAMP(6)', '2026-06-30T24:00')).toMatchObject({ value: US('2026-07-01T00:00:00Z') });
    expect(read('TIMESTAMP(3)', '2026-06-30T24:00:01Z')).toMatchObject({ problem: expect.stringContaining('no such time') });
    expect(read('TIMESTAMP(3)', '2026-06-30T24:00:00.001Z')).toMatchObject({ problem: expect.stringContaining('no such time') });
  });
});

describe('more fraction digits than the precision', () => {
  it('a TIMESTAMP(p) keeps p digits, cut and never rounded (Paimon: DateTimeUtils.fromTemporalAccessor)', () => {
    expect(read('TIMESTAMP(0)', '2026-12-01T08:00:00.5Z')).toMatchObject({ value: US('2026-12-01T08:00:00Z'), record: '2026-12-01T08:00:00' });
    expect(read('TIMESTAMP(0) WITH LOCAL TIME ZONE', '2026-12-01T08:00:00.999999Z')).toMatchObject({ value: US('2026-12-01T08:00:00Z') });
    expect(read('TIMESTAMP(1)', '2026-12-01T08:00:00.19Z')).toMatchObject({ value: US('2026-12-01T08:00:00.1Z') });
    expect(read('TIMESTAMP(3)', '2026-12-01T08:00:00.123456789Z')).toMatchObject({ value: US('2026-12-01T08:00:00.123Z') });
    expect(read('TIMESTAMP(5)', '2026-12-01T08:00:00.1234567Z')).toMatchObject({ value: US('2026-12-01T08:00:00Z') + 123_450 });
    expect(read('TIMESTAMP(6)', '2026-12-01T08:00:00.123456789Z')).toMatchObject({ value: US('2026-12-01T08:00:00Z') + 123_456 });
    // Before 1970 too: the fraction is cut, the second stays.
    expect(read('TIMESTAMP(0)', '1969-12-31T23:59:59.9Z')).toMatchObject({ value: -1_000_000 });
    // As many digits as the precision, or fewer: the module's text is kept as sent.
    expect(read('TIMESTAMP(3)', '2026-12-01T08:00:00.120+01:00')).toMatchObject({ value: US('2026-12-01T07:00:00.12Z'), record: '2026-12-01T08:00:00.120+01:00' });
  });

  it('a TIME keeps milliseconds whatever its precision, a fourth digit rounding half up (Paimon: DateTimeUtils.parseFraction)', () => {
    expect(read('TIME(0)', '12:00:00.5')).toMatchObject({ value: 43_200_500 });
    expect(read('TIME(3)', '12:00:00.123456')).toMatchObject({ value: 43_200_123, record: '12:00:00.123456' });
    expect(read('TIME(3)', '12:00:00.1235')).toMatchObject({ value: 43_200_124 });
    expect(read('TIME(0)', '12:00:00.123999999')).toMatchObject({ value: 43_200_124 });
    expect(read('TIME(3)', '12:00:00.9995')).toMatchObject({ value: 43_201_000 });
    // Past the day's last millisecond (Paimon's cast would make 24:00:00, no TIME value): refused.
    expect(read('TIME(3)', '23:59:59.9996')).toMatchObject({ problem: expect.stringContaining('23:59:59.999') });
    expect(read('TIME(3)', '24:00:00.1234')).toMatchObject({ problem: expect.stringContaining('no such time') });
  });

  it('a default is read the same way and fills the record so', () => {
    const c: Contract = { name: 'yard.shift', version: 1, compatibility: 'NONE', fields: [{ name: 'id', type: 'STRING' }, { name: 'ends', type: 'TIMESTAMP(0)', default: '2026-12-31T23:59:60.5Z' }] };
    for (const check of [validate, validateGeneric]) {
      expect(check(c, { id: 'a' })).toMatchObject({ ok: true, values: { ends: US('2026-12-31T23:59:59Z') }, record: { ends: '2026-12-31T23:59:59' } });
    }
  });

  it('the bindings read both images of the checked envelope so', () => {
    const registry = { get: (n: string, v: number) => (n === 'yard.clock' && v === 1 ? CLOCK : undefined), latest: () => CLOCK };
    const f = FIELD('TIMESTAMP(0)');
    const r = checkEnvelopeContract(registry, {
      op: 'u',
      before: { id: 'a', [f]: '2026-12-01T08:00:00.7Z' },
      after: { id: 'a', [f]: '2026-06-30T23:59:60Z' },
      source: { module: 'yard', stream: 'clock', seq: 2 },
      ts_ms: 1,
      contract: { name: 'yard.clock', version: 1 },
    });
    expect(r).toMatchObject({ ok: true, envelope: { before: { [f]: '2026-12-01T08:00:00' }, after: { [f]: '2026-06-30T23:59:60Z' } } });
    const envelope = (r as { envelope: Envelope }).envelope;
    for (const apply of [applyBinding, applyBindingGeneric]) {
      expect(apply(BINDING, envelope, TABLE)).toMatchObject({ ok: true, row: { [f]: US('2026-06-30T23:59:59Z') } });
      expect(apply(BINDING, { ...envelope, op: 'd' }, TABLE)).toMatchObject({ ok: true, row: { [f]: US('2026-12-01T08:00:00Z') } });
    }
  });
});

describe('a FLOAT or DOUBLE default beyond the type\'s range', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tilstand-contract-time-values-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const temps = (type: string, dflt: unknown): Contract => ({ name: 'yard.temps', version: 1, compatibility: 'NONE', fields: [{ name: 'id', type: 'STRING NOT NULL' }, { name: 'ratio', type, default: dflt }] });

  it('is refused at registration, naming the field and the range', () => {
    const registry = new ContractRegistry(join(dir, 'contracts'));
    for (const [type, dflt, range] of [['FLOAT', 1e39, 'FLOAT'], ['FLOAT NOT NULL', -1e39, 'FLOAT'], ['DOUBLE', Infinity, 'DOUBLE'], ['DOUBLE NOT NULL', Infinity, 'DOUBLE'], ['FLOAT', -Infinity, 'DOUBLE']] as const) {
      let err: unknown;
      try {
        registry.register(temps(type, dflt));
      } catch (e) {
        err = e;
      }
      expect(err, `${type} default ${dflt}`).toBeInstanceOf(ContractError);
      expect((err as ContractError).field).toBe('ratio');
      expect((err as Error).message).toContain("field 'ratio'");
      expect((err as Error).message).toContain(`beyond ${range}'s range`);
    }
    expect(registry.list()).toEqual([]);
    // An Infinity default was written to the file as null: a NOT NULL field's file stopped the next start.
    expect(new ContractRegistry(join(dir, 'contracts')).list()).toEqual([]);
    // The largest finite value and the text forms register.
    registry.register(temps('FLOAT', 3.4028234663852886e38));
    registry.register({ ...temps('FLOAT', 'Infinity'), version: 2 });
    registry.register({ ...temps('DOUBLE', '-Infinity'), name: 'yard.temps2' });
  });

  it('in a file already stored still loads (the site keeps starting)', () => {
    mkdirSync(join(dir, 'contracts', 'yard.temps'), { recursive: true });
    writeFileSync(join(dir, 'contracts', 'yard.temps', 'v1.json'), JSON.stringify(temps('FLOAT', 1e39)));
    expect(new ContractRegistry(join(dir, 'contracts')).get('yard.temps', 1)?.fields[1]?.default).toBe(1e39);
  });
});
