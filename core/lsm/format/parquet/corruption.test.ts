// Damaged files: every flipped bit and every truncation must end in a Corruption (or, for a
// flipped enum that now names a real but unsupported feature, NotSupported) or in the same row
// count (bits in statistics and other fields the reader does not need) — never a bare
// TypeError/RangeError, never a crash. The seed is printed; set PARQUET_FUZZ_SEED to replay.

import { describe, expect, it } from 'vitest';
import { LsmError } from '../../errors.ts';
import { readParquet, readParquetFooter, writeParquet, type ParquetCompression } from './index.ts';
import { generate, hyparquetMeta, rng, typedColumns } from './test-support.ts';
import { readStruct } from './thrift-compact.ts';

const cols = typedColumns(['INT', 'STRING', 'BIGINT', 'DOUBLE', 'BOOLEAN', 'DECIMAL(20, 2)', 'TIMESTAMP(3)', 'BYTES'], true);
const request = cols.map((c) => ({ name: c.name, type: c.type }));
const ROWS = 400;

type Outcome = 'corruption' | 'not-supported' | 'same-rows';

function attempt(bytes: Uint8Array): Outcome {
  try {
    readParquetFooter(bytes, 'damaged.parquet');
    const r = readParquet(bytes, request, 'damaged.parquet');
    if (r.rowCount !== ROWS) throw new Error(`damaged file read with ${r.rowCount} rows`);
    for (const c of r.columns) if (c.length !== ROWS) throw new Error(`damaged file read a column of ${c.length} values`);
    return 'same-rows';
  } catch (e) {
    if (!(e instanceof LsmError)) throw e;
    const cause = (e as Error & { cause?: unknown }).cause;
    if (cause instanceof TypeError || cause instanceof RangeError) {
      throw new Error(`a ${cause.name} reached the safety net: ${cause.message}`, { cause });
    }
    if (e.kind === 'Corruption') return 'corruption';
    if (e.kind === 'NotSupported') return 'not-supported';
    throw e;
  }
}

/** Byte ranges of every page body (what the page CRCs cover). */
function pageBodies(bytes: Uint8Array): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const g of hyparquetMeta(bytes).row_groups) {
    for (const c of g.columns) {
      const md = c.meta_data!;
      let pos = Number(md.dictionary_page_offset ?? md.data_page_offset);
      const end = pos + Number(md.total_compressed_size);
      while (pos < end) {
        const { value, end: body } = readStruct(bytes, pos, end);
        out.push([body, body + (value[3] as number)]);
        pos = body + (value[3] as number);
      }
    }
  }
  return out;
}

function seed(): number {
  const s = Number(process.env.PARQUET_FUZZ_SEED ?? Date.now() % 1_000_000);
  console.log(`Parquet corruption fuzz seed ${s} (PARQUET_FUZZ_SEED=${s} to replay)`);
  return s;
}

describe('damaged Parquet files', () => {
  for (const compression of ['uncompressed', 'snappy', 'gzip'] as ParquetCompression[]) {
    const good = writeParquet(cols, generate(cols, ROWS, 5), ROWS, { compression, rowGroupRows: 150, pageRows: 64 });

    it(`${compression}: flipped bits are detected or harmless`, () => {
      const s = seed();
      const r = rng(s);
      const counts: Record<Outcome, number> = { corruption: 0, 'not-supported': 0, 'same-rows': 0 };
      let dataFlips = 0;
      const bodies = pageBodies(good);
      for (let i = 0; i < 1500; i++) {
        const at = Math.floor(r() * good.length);
        const bad = good.slice();
        bad[at]! ^= 1 << Math.floor(r() * 8);
        let outcome: Outcome;
        try {
          outcome = attempt(bad);
        } catch (e) {
          throw new Error(`seed ${s}, flip at byte ${at}: ${(e as Error).message}`, { cause: e });
        }
        counts[outcome]++;
        // Page bodies are covered by CRCs: a flip there is always caught. (Flips in page-header
        // fields the reader has no use for, such as the repetition-level encoding, are harmless.)
        if (bodies.some(([a, b]) => at >= a && at < b)) {
          dataFlips++;
          expect(outcome, `seed ${s}, flip at ${at}`).not.toBe('same-rows');
        }
      }
      expect(dataFlips).toBeGreaterThan(100);
      expect(counts.corruption).toBeGreaterThan(counts['same-rows']);
    });

    it(`${compression}: truncation at any offset is a Corruption`, () => {
      const s = seed();
      const r = rng(s);
      const offsets = new Set<number>([0, 1, 3, 4, 8, 11, 12, good.length - 1, good.length - 4, good.length - 8, good.length - 9]);
      while (offsets.size < 300) offsets.add(Math.floor(r() * good.length));
      for (const n of offsets) {
        const cut = good.subarray(0, n);
        let kind: string | undefined;
        try {
          readParquet(cut, request, 'cut.parquet');
        } catch (e) {
          kind = e instanceof LsmError ? e.kind : `non-LsmError ${(e as Error).name}`;
        }
        expect(kind, `seed ${s}, truncated to ${n} bytes`).toBe('Corruption');
      }
    });
  }

  it('names the file and the problem', () => {
    const good = writeParquet(cols, generate(cols, 10, 1), 10, { compression: 'snappy' });
    const cases: Array<[Uint8Array, RegExp]> = [
      [new Uint8Array(0), /too short/],
      [Uint8Array.from([...good.subarray(0, good.length - 1), 0x30]), /magic/],
      [(() => { const b = good.slice(); new DataView(b.buffer).setUint32(b.length - 8, b.length, true); return b; })(), /footer length/],
      [(() => { const b = good.slice(); b[40]! ^= 0x10; return b; })(), /CRC|page|thrift/],
    ];
    for (const [bytes, msg] of cases) {
      try {
        readParquet(bytes, request, '/data/x.parquet');
        throw new Error('no error');
      } catch (e) {
        expect(e).toBeInstanceOf(LsmError);
        expect((e as LsmError).kind).toBe('Corruption');
        expect((e as LsmError).path).toBe('/data/x.parquet');
        expect((e as Error).message).toMatch(msg);
      }
    }
  });
});
