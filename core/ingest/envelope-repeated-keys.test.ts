// A key given twice in an event: JSON.parse keeps the last value and says nothing, so a module
// sending {"qty":1,"qty":5} had 5 written and nobody learned the module is broken. The rest of the
// product refuses a repeated key naming its path (core/site json-repeated-keys.test.ts); an event
// is refused too, losing nothing: in a row image a `contract_violation` (the image is no record of
// its contract), elsewhere a `bad_envelope`; either carries the seq when it reads, so the stream
// goes on (DESIGN.md, "Data flow"). Both JSON paths (escape-free and checked) agree.
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
const base =
  '{"op":"u","before":{"item":"A-1","location":"L1","qty":4},"after":{"item":"A-1","location":"L1","qty":3},"source":{"module":"inventory","stream":"stock","seq":7,"connector":"wms","at":"2026-12-01T08:00:00Z"},"ts_ms":1,"contract":{"name":"inventory.stock","version":1}}';
const parse = (text: string): ParseResult => parseEnvelope(TOPIC, Buffer.from(text));
/** The same event with a `\u` escape in an unrelated string: the checked path. */
const escaped = (text: string) => text.replace('"wms"', '"w\\u006ds"');

describe('a key given twice in an event', () => {
  it.each([
    ['in after', base.replace('"qty":3', '"qty":3,"qty":5'), 'contract_violation', 'after.qty', 7],
    ['in before', base.replace('"qty":4', '"qty":4,"qty":9'), 'contract_violation', 'before.qty', 7],
    ['an envelope field', base.replace('"ts_ms":1', '"ts_ms":1,"ts_ms":2'), 'bad_envelope', 'ts_ms', 7],
    ['a source extra', base.replace('"connector":"wms"', '"connector":"wms","at":1'), 'bad_envelope', 'source.at', 7],
    ['source.seq itself', base.replace('"seq":7', '"seq":7,"seq":8'), 'bad_envelope', 'source.seq', undefined],
    ['the same key spelled with an escape', base.replace('"qty":3', '"qty":3,"q\\u0074y":5'), 'contract_violation', 'after.qty', 7],
  ])('%s: refused naming its path, on both JSON paths', (_what, text, reason, path, seq) => {
    for (const t of [text, escaped(text)]) {
      const r = parse(t);
      expect(r.ok, t).toBe(false);
      if (r.ok) continue;
      expect(r.reason).toBe(reason);
      expect(r.path).toBe(path);
      expect(r.detail).toBe(`${path}: given twice; expected each key once (JSON would keep only the last)`);
      expect(r.seq).toBe(seq);
    }
  });

  it('the same key in different objects, colons in strings and keys, escapes: accepted', () => {
    for (const t of [
      base,
      escaped(base),
      base.replace('"connector":"wms"', '"connector":"a:b::c","x:y":[{"k":1},{"k":"2:3"}],"n":{"k":{"k":1}}'),
      base.replace('"connector":"wms"', '"connector":"\\":\\\\","q\\"":1,"q\\\\":2'),
    ]) {
      const r = parse(t);
      expect(r.ok, `${t}: ${r.ok ? '' : r.detail}`).toBe(true);
    }
  });
});

describe('ingest: an event with a key given twice', () => {
  it('is a dead letter with its seq consumed: the next events of the stream apply at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-ingest-repeated-'));
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
      const ev = (seq: number, qty: string) =>
        Buffer.from(`{"op":"c","before":null,"after":{"item":"A-${seq}","location":"L1",${qty}},"source":{"module":"inventory","stream":"stock","seq":${seq}},"ts_ms":${T0},"contract":{"name":"inventory.stock","version":1}}`);
      await ingestor.accept(TOPIC, ev(1, '"qty":1'));
      const position = await ingestor.accept(TOPIC, ev(2, '"qty":1,"qty":5'));
      await ingestor.accept(TOPIC, ev(3, '"qty":3'));
      ingestor.commitAll();
      const t = new Catalog(join(dir, 'warehouse')).getTable({ database: 'site_s1', table: 'stock' });
      const r = t.reader();
      const rows = [...r.scan()].map((v) => Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, v[i])])));
      r.close();
      expect(rows.map((x) => [x.item, x.on_hand])).toEqual([['A-1', 1], ['A-3', 3]]);
      expect(ingestor.status().find((s) => s.table === 'stock')?.heldEvents ?? 0).toBe(0);
      expect(ingestor.listDeadLetters()).toMatchObject([{ position, reason: 'contract_violation', path: 'after.qty', seq: 2, stream: 'stock' }]);
    } finally {
      ingestor?.abandon();
      journal.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
