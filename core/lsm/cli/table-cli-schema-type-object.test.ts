// `tilstand table create --schema`: a field's `type` may be Paimon's JSON type object (as a
// schema-N file Java writes holds for ARRAY and MAP columns), not only a type string (README,
// "In `create --schema` files …"). A wrong object is refused, exit 2, naming the field.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog, typeToString } from '../index.ts';
import { runTableCli } from './table-cli.ts';
import { runCli } from '../testing/cli.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function place(schema: unknown): { wh: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-schema-type-object-'));
  dirs.push(dir);
  const file = join(dir, 'schema.json');
  writeFileSync(file, JSON.stringify(schema, null, 2));
  return { wh: join(dir, 'wh'), file };
}

const create = (wh: string, file: string) => runCli(runTableCli, ['create', 'site_1.bins', '--schema', file, '--warehouse', wh]);

describe('table create: a type object in the schema file', () => {
  it("takes a schema-0 file as Java writes it, ARRAY and MAP columns as type objects, and reads and writes them", async () => {
    // The shape of Paimon's schema-0 (ids and times are ignored, new ones are assigned).
    const { wh, file } = place({
      version: 3,
      id: 0,
      fields: [
        { id: 0, name: 'bin', type: 'STRING NOT NULL' },
        { id: 1, name: 'items', type: { type: 'ARRAY', element: 'STRING' } },
        { id: 2, name: 'counts', type: { type: 'MAP NOT NULL', key: 'STRING NOT NULL', value: 'BIGINT' } },
        { id: 3, name: 'nested', type: { type: 'ARRAY', element: { type: 'MAP', key: 'INT NOT NULL', value: 'DECIMAL(10, 2)' } } },
      ],
      highestFieldId: 3,
      partitionKeys: [],
      primaryKeys: ['bin'],
      options: { bucket: '1' },
      timeMillis: 1733400000000,
    });
    const r = await create(wh, file);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const table = new Catalog(wh).getTable({ database: 'site_1', table: 'bins' });
    expect(table.schema.fields.map((f) => `${f.name}:${typeToString(f.type)}`)).toEqual([
      'bin:STRING NOT NULL',
      'items:ARRAY<STRING>',
      'counts:MAP<STRING NOT NULL, BIGINT> NOT NULL',
      'nested:ARRAY<MAP<INT NOT NULL, DECIMAL(10, 2)>>',
    ]);
    const row = { bin: 'A-01', items: ['bolt', null], counts: { bolt: 4 }, nested: [[[1, '2.50']]] };
    const put = await runCli(runTableCli, ['put', 'site_1.bins', '--warehouse', wh], `${JSON.stringify(row)}\n`);
    expect(put.err).toBe('');
    expect(put.code).toBe(0);
    const scan = await runCli(runTableCli, ['scan', 'site_1.bins', '--warehouse', wh]);
    expect(scan.code).toBe(0);
    expect(JSON.parse(scan.out.trim())).toEqual(row);
  });

  it.each([
    [{ type: 'ARRAY' }, /field 'a': ARRAY type object without 'element'/],
    [{ type: 'MAP', key: 'STRING' }, /field 'a': MAP type object without 'key'\/'value'/],
    [{ element: 'INT' }, /field 'a': type object without a 'type' string/],
    [{ type: 'ARRAY', element: 'FOO' }, /field 'a': unknown or unsupported type 'FOO'/],
    [{ type: 'ARRAY', element: 5 }, /field 'a': expected a type string, got 5/],
    [{ type: 'ROW', fields: [] }, /field 'a': nested ROW columns are not supported/],
    [5, /field 'a' needs a 'type': a string such as "INT NOT NULL" or "ARRAY<INT>", or Paimon's JSON type object/],
    [['INT'], /field 'a' needs a 'type': a string/],
    [null, /field 'a' needs a 'type': a string/],
  ])('refuses the type %j with exit 2, naming the field', async (type, why) => {
    const { wh, file } = place({ fields: [{ name: 'id', type: 'INT NOT NULL' }, { name: 'a', type }], primaryKeys: ['id'] });
    const r = await create(wh, file);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`schema file ${file}: `);
    expect(r.err).toMatch(why);
    expect(r.out).toBe('');
  });
});
