// `tilstand table put` with "_kind": "-D" on a table with NOT NULL columns besides the key.
// Paimon writes no null into a NOT NULL column, whatever the row kind (TableWriteImpl's
// nullability check; its SQL DELETE writes the whole row it read), so a key-only delete cannot be
// written there: the line is refused, before anything is committed, naming the columns it must
// give and where to find their values. Where the other columns are nullable the key is enough.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../testing/cli.ts';
import { runTableCli } from './table-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-cli-put-delete-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const W = ['--warehouse', join(dir, 'warehouse')];
const table = (args: string[], stdin = '') => runCli(runTableCli, [...args, ...W], stdin);
const lines = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n');

async function create(name: string, fields: { name: string; type: string }[]): Promise<void> {
  const schema = join(dir, `${name}.json`);
  writeFileSync(schema, JSON.stringify({ fields, primaryKeys: ['site', 'item'], partitionKeys: ['site'], options: { bucket: '1' } }));
  expect(await table(['create', name, '--schema', schema])).toMatchObject({ code: 0, err: '' });
}

describe('table put -D on a table with NOT NULL value columns', () => {
  it('refuses a key-only delete naming the NOT NULL columns, commits nothing, and deletes when they are given', async () => {
    await create('d.stock', [
      { name: 'site', type: 'STRING' },
      { name: 'item', type: 'STRING' },
      { name: 'qty', type: 'INT NOT NULL' },
      { name: 'unit', type: 'STRING NOT NULL' },
      { name: 'note', type: 'STRING' },
    ]);
    const rows = [
      { site: 'S1', item: 'A1', qty: 5, unit: 'pcs', note: 'x' },
      { site: 'S1', item: 'A2', qty: 2, unit: 'box', note: null },
    ];
    expect((await table(['put', 'd.stock'], lines(rows))).out).toBe('{"snapshot":1,"rows":2}\n');

    // Line 2 leaves out one NOT NULL column and gives the other as null.
    const keyOnly = await table(['put', 'd.stock'], lines([{ site: 'S1', item: 'A3', qty: 1, unit: 'pcs' }, { _kind: '-D', site: 'S1', item: 'A1', unit: null }]));
    expect([keyOnly.code, keyOnly.out]).toEqual([2, '']);
    // Was "line 2: column 'qty' (INT NOT NULL): must not be null", while the usage says a -D needs only the key.
    expect(keyOnly.err).toBe(
      "tilstand: line 2: a -D row must also give the NOT NULL columns 'qty' (INT NOT NULL), 'unit' (STRING NOT NULL): Paimon writes no null there, not even in a delete; give the deleted row's values (`tilstand table get` prints them)\n",
    );
    // Nothing was committed: not the delete, not line 1's insert.
    expect(JSON.parse((await table(['snapshots', 'd.stock', '--json'])).out)).toHaveLength(1);
    expect((await table(['get', 'd.stock', '--key', '{"site":"S1","item":"A1"}'])).code).toBe(0);
    expect((await table(['get', 'd.stock', '--key', '{"site":"S1","item":"A3"}'])).code).toBe(1);

    // With the row's values (as `get` prints them) the delete is written and reads back.
    const whole = (await table(['get', 'd.stock', '--key', '{"site":"S1","item":"A1"}'])).out.trim();
    const del = await table(['put', 'd.stock'], lines([{ _kind: '-D', ...JSON.parse(whole) }]));
    expect([del.code, del.err, del.out]).toEqual([0, '', '{"snapshot":2,"rows":1}\n']);
    expect((await table(['get', 'd.stock', '--key', '{"site":"S1","item":"A1"}'])).code).toBe(1);
    expect((await table(['scan', 'd.stock'])).out).toBe('{"site":"S1","item":"A2","qty":2,"unit":"box","note":null}\n');
  });

  it('still takes a key-only delete where the other columns are nullable', async () => {
    await create('d.loose', [
      { name: 'site', type: 'STRING' },
      { name: 'item', type: 'STRING' },
      { name: 'qty', type: 'INT' },
    ]);
    await table(['put', 'd.loose'], lines([{ site: 'S1', item: 'A1', qty: 5 }, { site: 'S1', item: 'A2', qty: 2 }]));
    const del = await table(['put', 'd.loose'], lines([{ _kind: '-D', site: 'S1', item: 'A1' }]));
    expect([del.code, del.err, del.out]).toEqual([0, '', '{"snapshot":2,"rows":1}\n']);
    expect((await table(['scan', 'd.loose'])).out).toBe('{"site":"S1","item":"A2","qty":2}\n');
  });
});
