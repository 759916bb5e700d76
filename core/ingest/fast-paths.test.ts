// The ingest fast paths agree with the generic paths they shortcut: typed value conversion
// (fast-values.ts vs valueFromJson), contract validation (validate vs validateGeneric) and binding
// application (applyBinding vs applyBindingGeneric), on random inputs that mix the common case with
// every kind of odd value. Seeded: FAST_PATH_SEED=<n> reproduces a run (the seed is printed).

import { describe, expect, it } from 'vitest';
import { parseType, valueFromJson, type DataField } from '../lsm/types.ts';
import { applyBinding, applyBindingGeneric, type Binding } from './binding.ts';
import { validate, validateGeneric, type Contract, type ContractField } from './contracts.ts';
import { parseEventTopic, type Envelope } from './envelope.ts';
import { fastConverter, NO_FAST } from './fast-values.ts';
import { mulberry32 as prng } from '../lsm/testing/prng.ts';

const SEED = Number(process.env.FAST_PATH_SEED ?? Math.floor(Math.random() * 2 ** 31));
console.log(`fast-paths test: FAST_PATH_SEED=${SEED}`);

const TYPES = [
  'STRING', 'STRING NOT NULL', 'VARCHAR(5)', 'CHAR(3) NOT NULL', 'TINYINT', 'SMALLINT NOT NULL', 'INT', 'INT NOT NULL',
  'BIGINT', 'BIGINT NOT NULL', 'FLOAT', 'DOUBLE NOT NULL', 'BOOLEAN', 'DECIMAL(10, 2)', 'DATE', 'TIMESTAMP(3)', 'BYTES',
];

const ODD_VALUES: unknown[] = [
  null, undefined, 0, -0, 1, -1, 127, 128, -128, -129, 32767, 32768, 2147483647, 2147483648, -2147483648, -2147483649,
  2 ** 53 - 1, 2 ** 53, -(2 ** 53) + 1, 1.5, -2.25, NaN, Infinity, -Infinity, 'NaN', 'Infinity', '', 'abc', 'abcdef', 'ab',
  '12', '-7', ' 42 ', '1.25', '2026-12-01', '2026-12-01T08:00:00Z', 'QUJD', '\uD800', 'é', true, false, [], [1], {}, { a: 1 },
  '9223372036854775807', '12345678.91',
];

function randomValue(rnd: () => number): unknown {
  const r = rnd();
  if (r < 0.5) return ODD_VALUES[Math.floor(rnd() * ODD_VALUES.length)];
  if (r < 0.7) return Math.floor((rnd() - 0.5) * 2 ** (1 + Math.floor(rnd() * 60)));
  if (r < 0.8) return (rnd() - 0.5) * 1e6;
  return Array.from({ length: Math.floor(rnd() * 8) }, () => String.fromCharCode(32 + Math.floor(rnd() * 90))).join('');
}

/** valueFromJson's outcome as comparable data. */
function generic(t: ReturnType<typeof parseType>, j: unknown): { ok: true; v: unknown } | { ok: false } {
  try {
    return { ok: true, v: valueFromJson(t, j, 'c') };
  } catch {
    return { ok: false };
  }
}

describe('typed fast conversions (fast-values.ts)', () => {
  it('return exactly what valueFromJson returns whenever they take a value', () => {
    const rnd = prng(SEED);
    let fast = 0;
    for (const text of TYPES) {
      const t = parseType(text);
      const f = fastConverter(t);
      for (let i = 0; i < 3000; i++) {
        const j = i < ODD_VALUES.length ? ODD_VALUES[i] : randomValue(rnd);
        const v = f(j);
        if (v === NO_FAST) continue;
        fast++;
        const g = generic(t, j);
        expect(g.ok, `${text} ← ${String(j)}`).toBe(true);
        if (g.ok) expect(Object.is(v, g.v) || (typeof v === 'bigint' && v === g.v), `${text} ← ${String(j)}: ${String(v)} vs ${String(g.v)}`).toBe(true);
      }
    }
    expect(fast).toBeGreaterThan(1000);
  });

  it('cover the common JSON forms', () => {
    expect(fastConverter(parseType('STRING NOT NULL'))('ITEM-1')).toBe('ITEM-1');
    expect(fastConverter(parseType('INT NOT NULL'))(517)).toBe(517);
    expect(fastConverter(parseType('BIGINT'))(12)).toBe(12n);
    expect(fastConverter(parseType('INT'))(2 ** 31)).toBe(NO_FAST);
    expect(fastConverter(parseType('TIMESTAMP(3)'))('2026-12-01T08:00:00Z')).toBe(NO_FAST);
  });
});

describe('CHAR/VARCHAR length: fast-values.ts counts characters as checkValue does', () => {
  it('takes what valueFromJson takes and leaves what it refuses (a surrogate pair is one character, as Paimon counts)', () => {
    const strings = ['😀😀', '😀😀😀', '😀😀😀😀', 'a😀b', 'a😀bc', 'abcd', '\uD800\uD800\uD800', '\uD83D\uDE00\uD83D', 'åäö', 'åäöx'];
    for (const text of ['VARCHAR(3)', 'CHAR(3) NOT NULL', 'VARCHAR(1)']) {
      const t = parseType(text);
      for (const j of strings) {
        const g = generic(t, j);
        expect(fastConverter(t)(j), `${text} ← ${j}`).toBe(g.ok ? j : NO_FAST);
      }
    }
    expect(fastConverter(parseType('VARCHAR(3)'))('😀😀')).toBe('😀😀');
    const c: Contract = { name: 'a.b', version: 1, compatibility: 'NONE', fields: [{ name: 'code', type: 'VARCHAR(3)' }] };
    for (const code of ['😀😀', '😀😀😀😀']) expect(validate(c, { code }), code).toStrictEqual(validateGeneric(c, { code }));
    expect(validate(c, { code: '😀😀' })).toMatchObject({ ok: true, values: { code: '😀😀' } });
  });
});

function randomContract(rnd: () => number, version: number): Contract {
  const n = 1 + Math.floor(rnd() * 5);
  const fields: ContractField[] = [];
  for (let i = 0; i < n; i++) {
    const type = TYPES[Math.floor(rnd() * TYPES.length)]!;
    const f: { name: string; type: string; default?: unknown; symbols?: string[] } = { name: `f${i}`, type };
    if (rnd() < 0.25) f.default = rnd() < 0.5 ? null : randomValue(rnd);
    if (type.startsWith('STRING') && rnd() < 0.3) f.symbols = ['abc', 'ab', 'x'];
    fields.push(f);
  }
  return { name: 'fuzz.contract', version, compatibility: 'NONE', fields };
}

function randomRecord(rnd: () => number, c: Contract): unknown {
  if (rnd() < 0.03) return rnd() < 0.5 ? null : [1];
  const rec: Record<string, unknown> = {};
  for (const f of c.fields) {
    const r = rnd();
    if (r < 0.08) continue; // absent
    if (r < 0.6) rec[f.name] = typicalValue(rnd, f.type, f.symbols);
    else rec[f.name] = randomValue(rnd);
  }
  if (rnd() < 0.05) rec.extra = 1;
  if (rnd() < 0.3) {
    // Another key order.
    const entries = Object.entries(rec).reverse();
    return Object.fromEntries(entries);
  }
  return rec;
}

function typicalValue(rnd: () => number, type: string, symbols?: readonly string[]): unknown {
  if (symbols) return symbols[Math.floor(rnd() * symbols.length)];
  if (type.startsWith('STRING') || type.startsWith('VARCHAR') || type.startsWith('CHAR')) return 'ab';
  if (type.startsWith('BOOLEAN')) return rnd() < 0.5;
  if (type.startsWith('FLOAT') || type.startsWith('DOUBLE')) return rnd() * 100;
  if (type.startsWith('DECIMAL')) return '12.34';
  if (type.startsWith('DATE')) return '2026-12-01';
  if (type.startsWith('TIMESTAMP')) return '2026-12-01T08:00:00.123Z';
  if (type.startsWith('BYTES')) return 'QUJD';
  return Math.floor(rnd() * 100);
}

describe('contract validation: fast path = generic path', () => {
  it('gives the same result, record, values and errors on random records', () => {
    const rnd = prng(SEED ^ 0x5bd1e995);
    let fastOk = 0;
    for (let round = 0; round < 300; round++) {
      const c = Object.freeze({ ...randomContract(rnd, 1 + round) });
      for (const f of c.fields) Object.freeze(f);
      Object.freeze(c.fields);
      for (let i = 0; i < 40; i++) {
        const rec = randomRecord(rnd, c);
        const prefix = rnd() < 0.5 ? 'after' : '';
        const a = validate(c, rec, prefix);
        const b = validateGeneric(c, rec, prefix);
        expect(a, JSON.stringify({ c, rec })).toStrictEqual(b);
        if (a.ok) {
          fastOk++;
          // Same key order as well (fields in contract order).
          expect(Object.keys(a.record)).toEqual(Object.keys(b.ok ? b.record : {}));
        }
      }
    }
    expect(fastOk).toBeGreaterThan(500);
  });
});

describe('applyBinding: compiled path = generic path', () => {
  const TABLE: DataField[] = [
    { id: 0, name: 'k', type: parseType('STRING NOT NULL') },
    { id: 1, name: 'n', type: parseType('INT') },
    { id: 2, name: 'seq', type: parseType('BIGINT') },
    { id: 3, name: 'ts', type: parseType('TIMESTAMP(3)') },
    { id: 4, name: 'flag', type: parseType('BOOLEAN') },
    { id: 5, name: 'short', type: parseType('VARCHAR(3)') },
    { id: 6, name: 'amount', type: parseType('DECIMAL(10, 2)') },
    { id: 7, name: 'name', type: parseType('STRING') },
  ];
  const PATHS = ['after.k', 'after.n', 'after.x', 'before.k', 'source.seq', 'source.module', 'ts_ms', 'op', 'contract.name', 'contract.version', 'after.ts', 'after.amount', 'source.nope'];
  const COLUMNS = TABLE.map((f) => f.name).concat(['missing_column']);

  function randomBinding(rnd: () => number): Binding {
    const columns: Record<string, string> = {};
    const n = 1 + Math.floor(rnd() * 5);
    for (let i = 0; i < n; i++) {
      const col = rnd() < 0.97 ? COLUMNS[Math.floor(rnd() * TABLE.length)]! : 'missing_column';
      columns[col] = PATHS[Math.floor(rnd() * PATHS.length)]!;
    }
    const b: { topic: string; contract: string; table: string; columns: Record<string, string>; kinds?: Record<string, string> } = {
      topic: 'tilstand/+/events/m/s',
      contract: rnd() < 0.95 ? 'fuzz.c' : 'other.c',
      table: 't',
      columns,
    };
    if (rnd() < 0.3) b.kinds = { u: '+I', d: '-U' };
    return b as Binding;
  }

  function randomImage(rnd: () => number): Record<string, unknown> {
    const img: Record<string, unknown> = {};
    for (const k of ['k', 'n', 'x', 'ts', 'amount']) {
      const r = rnd();
      if (r < 0.1) continue;
      img[k] = r < 0.6 ? (k === 'ts' ? '2026-12-01T08:00:00Z' : k === 'amount' ? '1.5' : k === 'k' ? 'key' : 7) : randomValue(rnd);
    }
    return img;
  }

  function randomEnvelope(rnd: () => number): Envelope {
    const op = (['c', 'u', 'd', 'r'] as const)[Math.floor(rnd() * 4)]!;
    const img = randomImage(rnd);
    return {
      op,
      before: op === 'd' ? img : rnd() < 0.3 ? randomImage(rnd) : null,
      after: op === 'd' ? null : img,
      source: { module: 'm', stream: 's', seq: Math.floor(rnd() * 1e6) },
      ts_ms: Math.floor(rnd() * 2e12),
      contract: { name: 'fuzz.c', version: 1 + Math.floor(rnd() * 3) },
    };
  }

  it('maps random envelopes to the same row, kind or refusal', () => {
    const rnd = prng(SEED ^ 0x1b873593);
    let rows = 0;
    for (let round = 0; round < 200; round++) {
      const b = randomBinding(rnd);
      for (let i = 0; i < 30; i++) {
        const env = randomEnvelope(rnd);
        const a = applyBinding(b, env, TABLE);
        const g = applyBindingGeneric(b, env, TABLE);
        expect(a, JSON.stringify({ b, env })).toStrictEqual(g);
        if (a.ok) {
          rows++;
          expect(Object.keys(a.row)).toEqual(Object.keys(g.ok ? g.row : {}));
        }
      }
    }
    // The fuzz must reach the row path, not only refusals: about 490 of 6,000 envelopes give rows
    // (the median of 300 seeds; the fewest 246, FAST_PATH_SEED=5679910, under the 300 this asked
    // for: a failure of the seed, not of the paths).
    expect(rows).toBeGreaterThan(100);
  });

  it('follows a changed table field list (recompiles) and bindings with enrichment take the generic path', () => {
    const b: Binding = { topic: 't/#', contract: 'fuzz.c', table: 't', columns: { k: 'after.k', n: 'after.n' } };
    const env: Envelope = { op: 'c', before: null, after: { k: 'a', n: 5 }, source: { module: 'm', stream: 's', seq: 1 }, ts_ms: 0, contract: { name: 'fuzz.c', version: 1 } };
    expect(applyBinding(b, env, TABLE)).toStrictEqual({ ok: true, kind: '+I', row: { k: 'a', n: 5 } });
    const widened = TABLE.map((f) => (f.name === 'n' ? { ...f, type: parseType('BIGINT') } : f));
    expect(applyBinding(b, env, widened)).toStrictEqual({ ok: true, kind: '+I', row: { k: 'a', n: 5n } });
    const narrowed = TABLE.map((f) => (f.name === 'n' ? { ...f, type: parseType('TINYINT') } : f));
    expect(applyBinding(b, { ...env, after: { k: 'a', n: 500 } }, narrowed)).toStrictEqual(applyBindingGeneric(b, { ...env, after: { k: 'a', n: 500 } }, narrowed));
    const enrich: Binding = { ...b, enrich: { table: 'x', key: { id: 'after.k' }, columns: { name: 'label' } } };
    expect(applyBinding(enrich, env, TABLE, { lookup: () => ({ label: 'L' }) })).toStrictEqual({ ok: true, kind: '+I', row: { k: 'a', n: 5, name: 'L' } });
  });
});

describe('parseEventTopic cache', () => {
  it('gives the same parts on every call and refuses the same topics', () => {
    const a = parseEventTopic('tilstand/s1/events/inventory/stock');
    expect(a).toEqual({ site: 's1', module: 'inventory', stream: 'stock' });
    expect(parseEventTopic('tilstand/s1/events/inventory/stock')).toEqual(a);
    expect(parseEventTopic('tilstand/s1/events/inventory')).toBeUndefined();
    expect(parseEventTopic('tilstand/s1/events/inventory')).toBeUndefined();
    expect(parseEventTopic('tilstand/s 1/events/inventory/stock')).toBeUndefined();
  });
});
