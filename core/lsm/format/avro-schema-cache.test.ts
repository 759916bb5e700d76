// The writer schema of a container file is parsed once per distinct schema text, not once per
// file: a Table's first expiration reads every tag's manifest lists and manifests (thousands of
// files at a thousand tags, all with one of a few schemas), and the header's JSON.parse plus the
// JSON.stringify of the type cache's key were a quarter of each file's decode.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { readAvroContainer, writeAvroContainer } from './avro-container.ts';

const SCHEMA = { type: 'record', name: 'r', namespace: 'org.example.cache', fields: [{ name: 'a', type: 'long' }, { name: 's', type: ['null', 'string'] }] };
const TEXT = JSON.stringify(SCHEMA);

afterEach(() => vi.restoreAllMocks());

describe('Avro writer schema cache', () => {
  it('parses a schema text once for many files', () => {
    const files = Array.from({ length: 20 }, (_, i) => writeAvroContainer(SCHEMA, [{ a: i, s: i % 2 ? null : `x${i}` }], 'deflate'));
    const parse = vi.spyOn(JSON, 'parse');
    const stringify = vi.spyOn(JSON, 'stringify');
    const records = files.map((f, i) => readAvroContainer(f, `mem-${i}`).records);
    expect(records[3]).toEqual([{ a: 3, s: null }]);
    expect(records[4]).toEqual([{ a: 4, s: 'x4' }]);
    const schemaParses = parse.mock.calls.filter((c) => c[0] === TEXT).length;
    expect(schemaParses, 'JSON.parse of the writer schema over 20 files').toBeLessThanOrEqual(1);
    expect(stringify.mock.calls.filter((c) => c[0] !== null && typeof c[0] === 'object' && (c[0] as { name?: unknown }).name === 'r').length, 'JSON.stringify of the schema (type cache key) over 20 files').toBeLessThanOrEqual(1);
  });

  it('a file with another schema text gets its own schema', () => {
    const other = { ...SCHEMA, fields: [{ name: 'b', type: 'int' }] };
    expect(readAvroContainer(writeAvroContainer(SCHEMA, [{ a: 1, s: 'y' }], 'null'), 'one').records).toEqual([{ a: 1, s: 'y' }]);
    const c = readAvroContainer(writeAvroContainer(other, [{ b: 2 }], 'null'), 'two');
    expect(c.records).toEqual([{ b: 2 }]);
    expect(c.schema).toEqual(other);
  });
});
