// `tilstand table get --key '{"item":"d","item":"zz"}'`: JSON.parse keeps the last value of a
// repeated key and says nothing, so the row of "zz" was looked up (and printed, or "no row") for a
// key the person typed as "d". Refused as `table put` refuses such a line: exit 2, naming the
// option and the column given twice (values.ts repeatedKey, shared with put).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../testing/cli.ts';
import { runTableCli } from './table-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-cli-get-dup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const W = ['--warehouse', join(dir, 'warehouse')];
const table = (args: string[], stdin = '') => runCli(runTableCli, [...args, ...W], stdin);

beforeAll(async () => {
  const schema = join(dir, 'stock.json');
  writeFileSync(
    schema,
    JSON.stringify({
      fields: [
        { name: 'site', type: 'STRING' },
        { name: 'item', type: 'STRING' },
        { name: 'qty', type: 'INT' },
      ],
      primaryKeys: ['site', 'item'],
      options: { bucket: '1' },
    }),
  );
  expect(await table(['create', 'd.stock', '--schema', schema])).toMatchObject({ code: 0, err: '' });
  const odd = JSON.stringify({ site: 's', item: '","item":"d', qty: 3 });
  const put = await table(['put', 'd.stock'], `{"site":"s","item":"d","qty":1}\n{"site":"s","item":"zz","qty":2}\n${odd}\n`);
  expect([put.code, put.err]).toEqual([0, '']);
});

describe('table get: a key column given twice in --key', () => {
  it('is refused naming --key and the column, exit 2 (it looked up the last value)', async () => {
    const message = (col: string) => `tilstand: option '--key': column '${col}' is given twice; expected each column once (JSON would keep only the last)\n`;
    for (const [key, col] of [
      ['{"site":"s","item":"d","item":"zz"}', 'item'], // was: the row of "zz", exit 0
      ['{"site":"s","item":"d","\\u0069tem":"zz"}', 'item'], // the same column spelled with an escape
      ['{"site":"x","item":"d","site":"s"}', 'site'],
    ] as const) {
      const r = await table(['get', 'd.stock', '--key', key]);
      expect([r.code, r.out, r.err], key).toEqual([2, '', message(col)]);
    }
  });

  it('still finds a row whose key is given once, also when a value reads like a key', async () => {
    const r = await table(['get', 'd.stock', '--key', '{"site":"s","item":"zz"}']);
    expect([r.code, r.err, JSON.parse(r.out)]).toEqual([0, '', { site: 's', item: 'zz', qty: 2 }]);
    const odd = await table(['get', 'd.stock', '--key', JSON.stringify({ site: 's', item: '","item":"d' })]);
    expect([odd.code, odd.err, JSON.parse(odd.out)]).toEqual([0, '', { site: 's', item: '","item":"d', qty: 3 }]);
  });
});
