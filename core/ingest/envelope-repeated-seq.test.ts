// A refused event carries its `source.seq` (so the Ingestor sequences the refusal and the stream
// goes on) only when the seq is beyond doubt: every `source.seq` the text gives — a key given
// twice, a `source` given twice — says the same number, and every `source.module`/`.stream` names
// the topic's. Given twice with one value (`"seq":7,"seq":7`), the refusal went unsequenced and the
// stream waited out gap_give_up_ms for a seq no resend could bring; given twice with two values
// while another key was the first one repeated (or the envelope was refused for another field),
// the refusal carried JSON.parse's last value, which may be another event's seq: that event was
// then dropped as a duplicate.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalog, valueToJson } from '../lsm/index.ts';
import { ContractRegistry } from './contracts.ts';
import { parseEnvelope, type ParseResult } from './envelope.ts';
import { Ingestor } from './ingestor.ts';
import { Journal } from './journal.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES } from './seed-tables.ts';

const TOPIC = 'tilstand/s1/events/inventory/stock';
const SRC = '"source":{"module":"inventory","stream":"stock","seq":7,"connector":"wms"}';
const base = `{"op":"u","before":{"item":"A-1","location":"L1","qty":4},"after":{"item":"A-1","location":"L1","qty":3},${SRC},"ts_ms":1,"contract":{"name":"inventory.stock","version":1}}`;
const parse = (text: string): ParseResult => parseEnvelope(TOPIC, Buffer.from(text));
/** The same event with a `\u` escape in an unrelated string: the checked path. */
const escaped = (text: string) => text.replace('"wms"', '"w\\u006ds"');

describe('the seq of a refusal when source.seq (or source) is given more than once', () => {
  it.each([
    ['source.seq twice, one value', base.replace('"seq":7', '"seq":7,"seq":7'), 'bad_envelope', 'source.seq', 7],
    ['source.seq twice, one value, spelled 7 and 7.0', base.replace('"seq":7', '"seq":7,"seq":7.0'), 'bad_envelope', 'source.seq', 7],
    ['source.seq twice, two values', base.replace('"seq":7', '"seq":7,"seq":8'), 'bad_envelope', 'source.seq', undefined],
    ['source.module twice, one value', base.replace('"module":"inventory"', '"module":"inventory","module":"inventory"'), 'bad_envelope', 'source.module', 7],
    ['source.module twice, another module first', base.replace('"module":"inventory"', '"module":"yard","module":"inventory"'), 'bad_envelope', 'source.module', undefined],
    ['after.qty twice, source.seq twice with two values', base.replace('"qty":3', '"qty":3,"qty":5').replace('"seq":7', '"seq":7,"seq":8'), 'contract_violation', 'after.qty', undefined],
    ['after.qty twice, source.seq twice with one value', base.replace('"qty":3', '"qty":3,"qty":5').replace('"seq":7', '"seq":7,"seq":7'), 'contract_violation', 'after.qty', 7],
    ['after.qty twice, source given twice with two seqs', base.replace('"qty":3', '"qty":3,"qty":5').replace(SRC, `${SRC.replace('"seq":7', '"seq":9')},${SRC}`), 'contract_violation', 'after.qty', undefined],
    ['ts_ms twice, source.seq twice with two values (after it)', base.replace('"ts_ms":1', '"ts_ms":1,"ts_ms":2').replace('"seq":7', '"seq":8,"seq":7'), 'bad_envelope', 'source.seq', undefined],
  ])('%s', (_what, text, reason, path, seq) => {
    for (const t of [text, escaped(text)]) {
      const r = parse(t);
      expect(r.ok, t).toBe(false);
      if (r.ok) continue;
      expect(r.reason, t).toBe(reason);
      expect(r.path, t).toBe(path);
      expect(r.seq, t).toBe(seq);
    }
  });

  it('an envelope refused for another field: the seq only when every source.seq agrees', () => {
    const noTs = base.replace('"ts_ms":1,', '');
    for (const [text, seq] of [
      [noTs, 7],
      [noTs.replace('"seq":7', '"seq":7,"seq":7'), 7],
      [noTs.replace('"seq":7', '"seq":8,"seq":7'), undefined],
      [noTs.replace(SRC, `${SRC.replace('"seq":7', '"seq":3')},${SRC}`), undefined],
      [noTs.replace(SRC, `"source":null,${SRC}`), undefined],
    ] as const) {
      for (const t of [text, escaped(text)]) {
        const r = parse(t);
        expect(r.ok, t).toBe(false);
        if (r.ok) continue;
        expect(r.reason, t).toBe('bad_envelope');
        expect(r.path, t).toBe('ts_ms');
        expect(r.seq, t).toBe(seq);
      }
    }
  });
});

describe('ingest: source.seq given twice with one value', () => {
  it('is a dead letter with its seq consumed: the next events of the stream apply at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-ingest-repeated-seq-'));
    const journal = Journal.open(dir);
    let ingestor: Ingestor | undefined;
    try {
      const contracts = new ContractRegistry(join(dir, 'contracts'));
      for (const c of SEED_CONTRACTS) contracts.register(c);
      const T0 = Date.UTC(2026, 11, 5, 8, 0, 0);
      ingestor = Ingestor.open({
        site: 's1', catalog: new Catalog(join(dir, 'warehouse')), database: 'site_s1', journal, contracts,
        bindings: [...SEED_BINDINGS], tables: [...SEED_TABLES], budgets: [], clock: () => T0, publishResync: () => undefined,
      });
      const ev = (seq: string, n: number) =>
        Buffer.from(`{"op":"c","before":null,"after":{"item":"A-${n}","location":"L1","qty":${n}},"source":{"module":"inventory","stream":"stock",${seq}},"ts_ms":${T0},"contract":{"name":"inventory.stock","version":1}}`);
      await ingestor.accept(TOPIC, ev('"seq":1', 1));
      const position = await ingestor.accept(TOPIC, ev('"seq":2,"seq":2', 2));
      await ingestor.accept(TOPIC, ev('"seq":3', 3));
      ingestor.commitAll();
      const t = new Catalog(join(dir, 'warehouse')).getTable({ database: 'site_s1', table: 'stock' });
      const r = t.reader();
      const rows = [...r.scan()].map((v) => Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, v[i])])));
      r.close();
      expect(rows.map((x) => [x.item, x.on_hand])).toEqual([['A-1', 1], ['A-3', 3]]);
      expect(ingestor.status().find((s) => s.table === 'stock')?.heldEvents ?? 0).toBe(0);
      expect(ingestor.listDeadLetters()).toMatchObject([{ position, reason: 'bad_envelope', path: 'source.seq', seq: 2, stream: 'stock' }]);
    } finally {
      ingestor?.abandon();
      journal.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
