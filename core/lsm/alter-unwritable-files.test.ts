// An ALTER here may not make a table whose data files are written here unwritable: a
// `file.compression` this store cannot write (zstd, lz4, brotli…: creation refuses each) or ORC
// data files (`file.format`, `file.format.per.level`), or a `file.compression` removed so that
// Paimon's default zstd applies. Before, the ALTER went through (exit 0) and every later commit
// with rows failed ("data files with this codec cannot be written here"): a site's ingest into the
// table stopped. A table Java made with such a codec or format (read-only for data here) stays
// alterable, and ALTER to a codec written here makes it writable (DESIGN.md, "Options a write
// depends on"). A `manifest.compression` set here is one creation takes too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function open(options: Record<string, string>, asJava = false): Table {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-alter-unwritable-'));
  dirs.push(dir);
  const spec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1', 'write-only': 'true', ...options } };
  if (!asJava) return Table.create(dir, TableSchema.fromSpec(spec, 0));
  // As Java writes a schema: only the options given (no file.compression: Java's default zstd).
  const fields = [
    { id: 0, name: 'k', type: 'INT NOT NULL' },
    { id: 1, name: 'v', type: 'STRING' },
  ];
  return Table.create(dir, new TableSchema({ version: 3, id: 0, fields, highestFieldId: 1, partitionKeys: [], primaryKeys: ['k'], options: spec.options, timeMillis: 0 }, false));
}

function put(t: Table, k: number): void {
  const w = t.newWriter();
  try {
    w.writeRecord({ k, v: 'x' });
    w.commit();
  } finally {
    w.close();
  }
}

it.each([
  [{ kind: 'setOption', key: 'file.compression', value: 'zstd' }, 'file.compression'],
  [{ kind: 'setOption', key: 'file.compression', value: 'lz4' }, 'file.compression'],
  [{ kind: 'setOption', key: 'file.compression', value: 'brotli' }, 'file.compression'],
  [{ kind: 'removeOption', key: 'file.compression' }, 'file.compression'],
  [{ kind: 'setOption', key: 'file.format', value: 'orc' }, 'file.format'],
  [{ kind: 'setOption', key: 'file.format.per.level', value: '0:orc' }, 'file.format.per.level'],
  [{ kind: 'setOption', key: 'manifest.compression', value: 'brotli' }, 'manifest.compression'],
] as const)('ALTER %j of a table written here is refused naming the option, and the table stays writable', (change, option) => {
  const t = open({ 'file.compression': 'snappy' });
  put(t, 1);
  expect(() => t.alter([change])).toThrow(expect.objectContaining({ message: expect.stringContaining(`'${option}'`) }));
  expect(t.schema.id).toBe(0);
  put(t, 2);
  const r = t.reader();
  try {
    expect([...r.scan()].map((row) => row[0])).toEqual([1, 2]);
  } finally {
    r.close();
  }
});

it('a table Java made with zstd stays alterable, and ALTER to snappy makes it writable', () => {
  // As Java leaves it: no file.compression (its default zstd) and a manifest codec named.
  const t = open({ 'manifest.compression': 'zstd' }, true);
  expect(() => put(t, 1)).toThrow(/cannot be written here/);
  t.alter([{ kind: 'setOption', key: 'snapshot.num-retained.min', value: '3' }]);
  t.alter([{ kind: 'setOption', key: 'file.format', value: 'avro' }]);
  t.alter([{ kind: 'setOption', key: 'file.compression', value: 'snappy' }]);
  put(t, 1);
  expect(t.schema.options.raw['file.compression']).toBe('snappy');
});
