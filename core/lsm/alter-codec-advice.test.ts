// An ALTER that sets a `file.compression` this store cannot write (zstd, lz4…) is refused naming
// the codecs to use instead. Since codecs Java's writer of the format refuses are refused too
// (options.ts checkJavaCodecs: gzip and none for Avro), the advice names, per format the table
// writes, only codecs that ALTER then takes: an Avro table was told "snappy, gzip or none", and two
// of the three were refused when tried.
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';

const root = fs.mkdtempSync(join(tmpdir(), 'tilstand-alter-codec-advice-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;

function table(options: Record<string, string>) {
  const catalog = new Catalog(join(root, `wh${n++}`));
  catalog.createDatabase('db', true);
  return catalog.createTable({ database: 'db', table: 't' }, { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], partitionKeys: [], options: { bucket: '1', ...options } });
}

/** The codecs the refusal of `file.compression` = `codec` advises, each then tried by ALTER. */
function advised(options: Record<string, string>, codec: string): { advice: string[]; refused: string[] } {
  const t = table(options);
  let message = '';
  try {
    t.alter([{ kind: 'setOption', key: 'file.compression', value: codec }]);
  } catch (e) {
    message = (e as Error).message;
  }
  const m = /(?:use|set) ([a-z]+(?:, [a-z]+)*(?:,? or [a-z]+)?)\b/.exec(message);
  expect(m, message).not.toBeNull();
  const advice = m![1]!.split(/, | or |,? or /).filter((s) => s !== '');
  const refused: string[] = [];
  for (const c of advice) {
    try {
      t.alter([{ kind: 'setOption', key: 'file.compression', value: c }]);
    } catch (e) {
      refused.push(`${c}: ${(e as Error).message}`);
    }
  }
  return { advice, refused };
}

describe('ALTER file.compression to a codec not written here', () => {
  it('advises, for an Avro table, codecs ALTER then takes', () => {
    for (const codec of ['zstd', 'lz4']) {
      const r = advised({ 'file.format': 'avro' }, codec);
      expect(r.advice.length).toBeGreaterThan(0);
      expect(r.refused).toEqual([]);
    }
  });

  it('advises, for a Parquet table, codecs ALTER then takes (as before)', () => {
    const r = advised({ 'file.format': 'parquet' }, 'zstd');
    expect(r.advice).toEqual(['snappy', 'gzip', 'none']);
    expect(r.refused).toEqual([]);
  });

  it('advises, for a table writing Parquet and Avro, the codec both take', () => {
    const r = advised({ 'file.format': 'parquet', 'file.format.per.level': '0:avro' }, 'zstd');
    expect(r.advice.length).toBeGreaterThan(0);
    expect(r.refused).toEqual([]);
  });
});
