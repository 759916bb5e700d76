// `manifest.compression` = 'zstd' (Paimon's default) at creation or ALTER. Manifests Java wrote with
// zstd ('zstandard' Avro blocks) are read here (fzstd; the Java fixtures), but this store has no
// zstd compressor (Node 20's zlib has none, fzstd only decompresses), so it cannot write them: the
// option stays refused. The refusal said only "zstd is not written here", and the list of values an
// unknown codec was told to pick from named zstd, which is then refused. The error now says why
// and what to do instead; removing the option (Java's writers then use zstd, this store deflate)
// is the way to give Java's writers their default.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const fresh = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'mc-zstd-'));
  dirs.push(d);
  return d;
};
const KV: SchemaSpec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1', 'file.compression': 'snappy' } };

function refusal(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LsmError);
    return e as LsmError;
  }
  throw new Error('expected a refusal, nothing was thrown');
}

function expectWhy(e: LsmError): void {
  expect(e.kind).toBe('NotSupported');
  expect(e.message).toContain("option 'manifest.compression'");
  expect(e.message).toMatch(/no zstd compressor/);
  expect(e.message).toMatch(/zstd manifests .*are read/);
  expect(e.message).toMatch(/use deflate, snappy or null/);
}

describe("manifest.compression 'zstd'", () => {
  for (const codec of ['zstd', 'ZSTD']) {
    it(`is refused at creation, saying why (${codec})`, () => {
      expectWhy(refusal(() => Table.create(fresh(), TableSchema.fromSpec({ ...KV, options: { ...KV.options, 'manifest.compression': codec } }, 0))));
    });
  }

  it('is refused at ALTER, saying why; removing the option is allowed and the table still writes', () => {
    const dir = fresh();
    const t = Table.create(dir, TableSchema.fromSpec(KV, 0));
    expectWhy(refusal(() => t.alter([{ kind: 'setOption', key: 'manifest.compression', value: 'zstd' }])));
    expect(Table.open(dir).schema.id).toBe(0);
    t.alter([{ kind: 'removeOption', key: 'manifest.compression' }]);
    const w = t.newWriter();
    w.writeRecord({ k: 1, v: 'a' });
    w.commit();
    w.close();
    expect(Table.open(dir).scanRows()).toEqual([[1, 'a']]);
  });

  it('an unknown codec is told the values that are taken, not zstd', () => {
    const dir = fresh();
    const t = Table.create(dir, TableSchema.fromSpec(KV, 0));
    const e = refusal(() => t.alter([{ kind: 'setOption', key: 'manifest.compression', value: 'lz4' }]));
    expect(e.kind).toBe('InvalidArgument');
    expect(e.message).toMatch(/option 'manifest.compression': expected one of/);
    expect(e.message).not.toContain("'zstd'");
  });
});
