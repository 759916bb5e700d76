// A `source` extra (a connector's txId, a DECIMAL total it adds) bound to a BIGINT or DECIMAL
// column: the contract never sees it, so the JSON-number exactness check the contract's fields
// get (CONTRACTS.md §1) did not run, and JSON.parse's rounding went into the row without a word:
// 9007199254740993 was written as 9007199254740992. Now it is `unfit_for_table`, saying to send
// a string, on the fast and the generic path alike; the string form and safe numbers still go.
import { describe, expect, it } from 'vitest';
import { parseType, type DataField } from '../lsm/types.ts';
import { applyBinding, applyBindingGeneric, type Binding } from './binding.ts';
import { parseEnvelope, type Envelope } from './envelope.ts';

const TOPIC = 'tilstand/s1/events/wms/moves';
const FIELDS: DataField[] = [
  { id: 0, name: 'id', type: parseType('STRING NOT NULL') },
  { id: 1, name: 'tx', type: parseType('BIGINT') },
  { id: 2, name: 'total', type: parseType('DECIMAL(20, 2)') },
];
const BINDING: Binding = {
  topic: TOPIC,
  contract: 'wms.moves',
  table: 'moves',
  columns: { id: 'after.id', tx: 'source.tx', total: 'source.total' },
};

function envelope(extras: string): Envelope {
  const text = `{"op":"c","before":null,"after":{"id":"m1"},"source":{"module":"wms","stream":"moves","seq":1,${extras}},"ts_ms":1,"contract":{"name":"wms.moves","version":1}}`;
  const r = parseEnvelope(TOPIC, Buffer.from(text));
  if (!r.ok) throw new Error(r.detail);
  return r.envelope;
}

describe('source extras bound to BIGINT / DECIMAL', () => {
  it.each([
    ['"tx":9007199254740993,"total":"1.00"', 'source.tx', /not read exactly.*as a string/],
    ['"tx":1,"total":12345678901234567.89', 'source.total', /not read exactly.*as a string/],
    ['"tx":1,"total":123456789012.345678', 'source.total', /not read exactly.*as a string/],
  ])('a number JSON rounded is refused: %s', (extras, path, detail) => {
    for (const apply of [applyBinding, applyBindingGeneric]) {
      const r = apply(BINDING, envelope(extras), FIELDS);
      expect(r.ok, `${apply.name}: ${JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`).toBe(false);
      if (!r.ok) {
        expect(r.reason).toBe('unfit_for_table');
        expect(r.path).toBe(path);
        expect(r.detail).toMatch(detail);
      }
    }
  });

  it('exact numbers and the string forms still go', () => {
    for (const apply of [applyBinding, applyBindingGeneric]) {
      const a = apply(BINDING, envelope('"tx":"9007199254740993","total":"12345678901234567.89"'), FIELDS);
      expect(a.ok && a.row.tx).toBe(9007199254740993n);
      const b = apply(BINDING, envelope('"tx":9007199254740991,"total":12.5'), FIELDS);
      expect(b.ok && b.row.tx).toBe(9007199254740991n);
      expect(b.ok).toBe(true);
    }
  });
});
