// A JSON number beyond a FLOAT's or DOUBLE's range. JSON has no Infinity, yet JSON.parse reads
// 1e400 as Infinity and says nothing, and a FLOAT column (float32 in the files) turns 1e39 into
// Infinity when it is written: a module that sent a finite number (a sensor's overflowing reading,
// a unit mix-up) had Infinity in its row, without a letter. Now such a number is a
// contract_violation (a field) or unfit_for_table (a source extra, a DOUBLE field bound to a FLOAT
// column), naming the range; the text forms "Infinity", "-Infinity" and "NaN" still go, as does
// the largest finite value. Through the real Ingestor on real files, and on both binding paths.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog, valueToJson } from '../lsm/index.ts';
import { parseType, type DataField } from '../lsm/types.ts';
import { applyBinding, applyBindingGeneric, type Binding } from './binding.ts';
import { ContractRegistry, validate, type Contract } from './contracts.ts';
import { parseEnvelope, type Envelope } from './envelope.ts';
import { Ingestor } from './ingestor.ts';
import { Journal } from './journal.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES } from './seed-tables.ts';
import { parseTableDefinition } from './site-tables.ts';

const T0 = Date.UTC(2026, 11, 7, 8, 0, 0);
const TOPIC = 'tilstand/s1/events/yard/temps';

const TEMPS: Contract = {
  name: 'yard.temps',
  version: 1,
  compatibility: 'FULL_TRANSITIVE',
  fields: [
    { name: 'id', type: 'STRING NOT NULL' },
    { name: 'celsius', type: 'DOUBLE', default: null },
    { name: 'ratio', type: 'FLOAT', default: null },
  ],
};
const TABLE = {
  table: 'yard_temps',
  budgetMs: 30_000,
  decision: 'test',
  confirmedBy: 'test',
  columns: [
    { name: 'id', type: 'STRING NOT NULL' },
    { name: 'celsius', type: 'DOUBLE' },
    { name: 'ratio', type: 'FLOAT' },
    { name: 'yard_seq', type: 'BIGINT' },
  ],
  primaryKeys: ['id'],
  options: { 'merge-engine': 'deduplicate', 'sequence.field': 'yard_seq' },
};
const BINDING: Binding = {
  name: 'yard.temps→yard_temps',
  topic: 'tilstand/+/events/yard/temps',
  contract: 'yard.temps',
  table: 'yard_temps',
  columns: { id: 'after.id', celsius: 'after.celsius', ratio: 'after.ratio', yard_seq: 'source.seq' },
};

const text = (seq: number, after: string, extras = '') =>
  `{"op":"u","before":null,"after":${after},"source":{"module":"yard","stream":"temps","seq":${seq}${extras}},"ts_ms":1,"contract":{"name":"yard.temps","version":1}}`;

function envelope(after: string, extras = ''): Envelope {
  const r = parseEnvelope(TOPIC, Buffer.from(text(1, after, extras)));
  if (!r.ok) throw new Error(r.detail);
  return r.envelope;
}

describe('validate', () => {
  it.each([
    ['{"id":"a","celsius":1e400}', 'after.celsius', /a JSON number beyond DOUBLE's range .* is read as Infinity/],
    ['{"id":"a","celsius":-1e400}', 'after.celsius', /a JSON number beyond DOUBLE's range .* is read as -Infinity/],
    ['{"id":"a","ratio":1e39}', 'after.ratio', /a JSON number beyond FLOAT's range \(±3\.4028234663852886e\+38\)/],
    ['{"id":"a","ratio":-3.5e38}', 'after.ratio', /beyond FLOAT's range/],
  ])('refuses %s', (after, path, message) => {
    const r = validate(TEMPS, envelope(after).after, 'after');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors).toEqual([{ path, message: expect.stringMatching(message) }]);
  });

  it.each([
    ['{"id":"a","celsius":1.7976931348623157e308,"ratio":3.4028234663852886e38}', 1.7976931348623157e308, 3.4028234663852886e38],
    ['{"id":"a","celsius":"Infinity","ratio":"-Infinity"}', Infinity, -Infinity],
    ['{"id":"a","celsius":-0,"ratio":1e-50}', -0, 1e-50],
  ])('takes %s', (after, celsius, ratio) => {
    const r = validate(TEMPS, envelope(after).after, 'after');
    expect(r.ok && r.values).toEqual({ id: 'a', celsius, ratio });
  });
});

it('names 1e400 for an integer or DECIMAL field as the number beyond the range it was, not as "got Infinity"', () => {
  const counts: Contract = { name: 'yard.counts', version: 1, compatibility: 'NONE', fields: [{ name: 'n', type: 'INT', default: null }, { name: 'big', type: 'BIGINT', default: null }, { name: 'dec', type: 'DECIMAL(10, 2)', default: null }] };
  for (const f of ['n', 'big', 'dec']) {
    const r = validate(counts, JSON.parse(`{"${f}":-1e400}`), 'after');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors).toEqual([{ path: `after.${f}`, message: expect.stringMatching(/^a JSON number beyond DOUBLE's range \(±1\.7976931348623157e\+308\) is read as -Infinity$/) }]);
  }
});

describe('bindings', () => {
  const FIELDS: DataField[] = [
    { id: 0, name: 'id', type: parseType('STRING NOT NULL') },
    { id: 1, name: 'celsius', type: parseType('FLOAT') },
    { id: 2, name: 'probe', type: parseType('DOUBLE') },
  ];
  const B: Binding = { topic: TOPIC, contract: 'yard.temps', table: 't', columns: { id: 'after.id', celsius: 'after.celsius', probe: 'source.probe' } };
  it.each([
    ['{"id":"a","celsius":1e39}', '"probe":1', 'after.celsius', /FLOAT's range/],
    ['{"id":"a","celsius":1}', '"probe":1e400', 'source.probe', /DOUBLE's range/],
  ])('refuses %s %s as unfit for the table', (after, extras, path, detail) => {
    for (const apply of [applyBinding, applyBindingGeneric]) {
      const r = apply(B, envelope(after, `,${extras}`), FIELDS);
      expect(r.ok, apply.name).toBe(false);
      if (!r.ok) {
        expect(r.reason).toBe('unfit_for_table');
        expect(r.path).toBe(path);
        expect(r.detail).toMatch(detail);
      }
    }
  });
  it('takes the largest finite values and the text forms', () => {
    for (const apply of [applyBinding, applyBindingGeneric]) {
      const r = apply(B, envelope('{"id":"a","celsius":3.4028234663852886e38}', ',"probe":"-Infinity"'), FIELDS);
      expect(r.ok && r.row).toEqual({ id: 'a', celsius: 3.4028234663852886e38, probe: -Infinity });
    }
  });
});

describe('through the Ingestor', () => {
  let dir: string;
  let journal: Journal;
  let ingestor: Ingestor | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tilstand-float-range-'));
    journal = Journal.open(dir);
  });
  afterEach(() => {
    ingestor?.abandon();
    ingestor = undefined;
    journal.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('letters a number beyond the range and applies the others; no row holds an Infinity the module did not send', async () => {
    const contracts = new ContractRegistry(join(dir, 'contracts'));
    for (const c of [...SEED_CONTRACTS, TEMPS]) contracts.register(c);
    const i = (ingestor = Ingestor.open({
      site: 's1',
      catalog: new Catalog(join(dir, 'warehouse')),
      database: 'site_s1',
      journal,
      contracts,
      bindings: [...SEED_BINDINGS, BINDING],
      tables: [...SEED_TABLES, parseTableDefinition(TABLE, 'tables[0]')!],
      budgets: [{ table: 'yard_temps', budgetMs: 30_000, decision: 'test', confirmedBy: 'test' }],
      clock: () => T0,
    }));
    const sent = ['{"id":"d","celsius":1e400}', '{"id":"f","ratio":1e39}', '{"id":"ok","celsius":21.5,"ratio":0.5}', '{"id":"inf","celsius":"Infinity"}'];
    const positions: bigint[] = [];
    for (let k = 0; k < sent.length; k++) positions.push(await i.accept(TOPIC, Buffer.from(text(k + 1, sent[k]!))));
    i.commitAll();
    expect(i.failure()).toBeNull();
    expect(i.listDeadLetters().map((d) => [d.position, d.reason, d.path])).toEqual([
      [positions[0], 'contract_violation', 'after.celsius'],
      [positions[1], 'contract_violation', 'after.ratio'],
    ]);
    const t = new Catalog(join(dir, 'warehouse')).getTable({ database: 'site_s1', table: 'yard_temps' });
    const r = t.reader();
    try {
      const row = (id: string) => {
        const v = r.get({ id });
        return v && Object.fromEntries(t.schema.fields.map((f, k) => [f.name, valueToJson(f.type, v[k])]));
      };
      expect(row('d')).toBeUndefined();
      expect(row('f')).toBeUndefined();
      expect(row('ok')).toMatchObject({ celsius: 21.5, ratio: 0.5 });
      expect(row('inf')).toMatchObject({ celsius: 'Infinity' });
    } finally {
      r.close();
    }
    // The stream went on: the refused events consumed their seqs.
    expect(i.streamActivity().find((s) => s.stream === 'temps')?.appliedSeq).toBe(4);
  });
});
