// Avro longs held as JS numbers (TIMESTAMP micros, skipped fields) from 2^52 to 2^53 in size. A
// negative one's zigzag form (2·|n| − 1) is odd and above 2^53, so double arithmetic cannot hold
// it: the writer wrote another value, and the reader refused every such varint as damage. A
// TIMESTAMP(6) before 1827-03 is one — SQL Server's smallest datetime, 1753-01-01, a "no date"
// that warehouse systems send — and an Avro table holding one could no longer be read.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../catalog.ts';
import { mulberry32 } from '../testing/prng.ts';
import { parseType, valueFromJson } from '../types.ts';
import { In, Out } from './avro-block.ts';
import { readAvroData, writeAvroData } from './avro-data.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Avro's zigzag varint of a long, computed with bigints (the reference). */
function zigzagVarint(v: bigint): number[] {
  let z = v >= 0n ? v << 1n : (-v << 1n) - 1n;
  const out: number[] = [];
  while (z >= 0x80n) {
    out.push(Number(z & 0x7fn) | 0x80);
    z >>= 7n;
  }
  out.push(Number(z));
  return out;
}

const P52 = 2 ** 52;
const EDGES = [0, 1, -1, P52 - 1, -(P52 - 1), P52, -P52, P52 + 1, -(P52 + 1), Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, -6_847_804_800_000_000];

describe('Avro longs near 2^53', () => {
  it('are written as Avro writes them and read back exactly', () => {
    const seed = Number(process.env.AVRO_LONG_SEED ?? Date.now() % 1_000_000);
    console.log(`avro-long seed ${seed}`);
    const rnd = mulberry32(seed);
    const values = [...EDGES];
    for (let i = 0; i < 2000; i++) values.push(Math.round((rnd() * 2 - 1) * Number.MAX_SAFE_INTEGER));
    for (const n of values) {
      const o = new Out(16);
      o.long(n);
      const bytes = o.buf.subarray(0, o.pos);
      expect([...bytes], `seed ${seed}: ${n}`).toEqual(zigzagVarint(BigInt(n)));
      const i = new In(Buffer.from(bytes), bytes.length, 'test');
      expect(i.long(), `seed ${seed}: ${n}`).toBe(n);
      expect(i.pos).toBe(bytes.length);
    }
  });

  it('beyond ±2^53 stay refused where a number must hold them; bigLong reads them', () => {
    for (const v of [2n ** 53n, -(2n ** 53n), 2n ** 62n, -(2n ** 63n)]) {
      const bytes = Buffer.from([...zigzagVarint(v), 0x02]);
      expect(() => new In(bytes, bytes.length, 'test').long()).toThrow(/beyond 2\^53/);
      const i = new In(bytes, bytes.length, 'test');
      expect(i.bigLong()).toBe(v);
      expect(i.long()).toBe(1); // the next varint
    }
  });

  it('a field not read is passed over whatever long it holds', () => {
    const cols = [{ name: 'big', type: parseType('BIGINT') }, { name: 'n', type: parseType('INT') }];
    const file = writeAvroData(cols, [[2n ** 60n, -(2n ** 63n), 5n], [1, 2, 3]], 3, 'null');
    expect(readAvroData(file, [cols[1]!], 'test.avro').columns).toEqual([[1, 2, 3]]);
  });

  it('an Avro table keeps a TIMESTAMP(6) of 1753 and 1800, and reads a file whose dropped BIGINT column holds 2^60', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lsm-avro-long-'));
    dirs.push(dir);
    const catalog = new Catalog(dir);
    catalog.createDatabase('db');
    const t = catalog.createTable(
      { database: 'db', table: 't' },
      {
        fields: [{ name: 'k', type: 'INT' }, { name: 'ts', type: 'TIMESTAMP(6)' }, { name: 'big', type: 'BIGINT' }],
        primaryKeys: ['k'],
        options: { bucket: '1', 'file.format': 'avro' },
      },
    );
    const ts = (s: string) => valueFromJson(parseType('TIMESTAMP(6)'), s, 'ts') as number;
    const rows = [
      [0, ts('1753-01-01T00:00:00'), 2n ** 60n],
      [1, ts('1800-06-15T12:00:00.123457'), -(2n ** 60n)],
      [2, ts('2200-01-01T00:00:00.000001'), 1n],
    ];
    const w = t.newWriter();
    for (const r of rows) w.write([...r]);
    w.commit();
    w.close();
    const again = new Catalog(dir).getTable({ database: 'db', table: 't' });
    expect(again.scanRows()).toEqual(rows);
    again.alter([{ kind: 'dropColumn', name: 'big' }]);
    expect(new Catalog(dir).getTable({ database: 'db', table: 't' }).scanRows()).toEqual(rows.map((r) => r.slice(0, 2)));
  });
});
