// `tilstand table …` given values it cannot use: refused naming the option and what was expected
// (exit 2), where they used to run on something else than was meant and exit 0.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../testing/cli.ts';
import { runTableCli } from './table-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-cli-bad-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const W = ['--warehouse', join(dir, 'warehouse')];
const table = (args: string[], stdin = '') => runCli(runTableCli, [...args, ...W], stdin);
const schema = join(dir, 'kv.json');

beforeAll(async () => {
  writeFileSync(schema, JSON.stringify({ fields: [{ name: 'k', type: 'STRING' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '1' } }));
  expect((await table(['create', 'd.kv', '--schema', schema])).code).toBe(0);
  expect((await table(['put', 'd.kv'], '{"k":"a","v":1}\n{"k":"b","v":2}')).out).toBe('{"snapshot":1,"rows":2}\n');
});

describe('tilstand table refuses values it cannot use', () => {
  it('scan --columns naming a column twice', async () => {
    // Was exit 0 with each row's column printed once: a JSON object has one key of a name.
    const r = await table(['scan', 'd.kv', '--columns', 'k,v,k']);
    expect([r.code, r.out, r.err]).toEqual([2, '', "tilstand: option '--columns': column 'k' is named twice in 'k,v,k'\n"]);
  });

  it('--at in epoch milliseconds beyond any time', async () => {
    for (const args of [['scan', 'd.kv'], ['get', 'd.kv', '--key', '{"k":"a"}'], ['inspect', 'd.kv']]) {
      // Was exit 0 at the latest snapshot: 1e20 ms is after every commit.
      const r = await table([...args, '--at', '99999999999999999999']);
      expect([r.code, r.out, r.err], args[0]).toEqual([2, '', "tilstand: option '--at': epoch milliseconds must be at most 8640000000000000, got '99999999999999999999'\n"]);
    }
    // The largest time there is still reads.
    expect((await table(['scan', 'd.kv', '--at', '8640000000000000'])).code).toBe(0);
  });

  it('follow --consumer with an id a consumer file cannot have', async () => {
    // Was "a consumer needs a non-empty id" / "consumer name \"a..b\" contains '..'": no option named.
    for (const [id, why] of [
      ['', 'a consumer needs a non-empty id'],
      ['a..b', `consumer name "a..b" contains '..'`],
      ['x/y', 'consumer name "x/y" contains a path separator'],
    ]) {
      const r = await table(['follow', 'd.kv', '--consumer', id!, '--once']);
      expect([r.code, r.out, r.err], id).toEqual([2, '', `tilstand: option '--consumer': ${why}\n`]);
    }
    expect((await table(['follow', 'd.kv', '--consumer', 'ok', '--once'])).code).toBe(0);
  });

  it("create --schema '' (an unset variable)", async () => {
    // Was "cannot read schema file <cwd>: is a directory".
    const r = await table(['create', 'd.other', '--schema', '']);
    expect([r.code, r.out, r.err]).toEqual([2, '', "tilstand: option '--schema': expected a schema file, got ''\n"]);
  });
});

describe('tilstand table on an append table (no primary key)', () => {
  beforeAll(async () => {
    const app = join(dir, 'app.json');
    writeFileSync(app, JSON.stringify({ fields: [{ name: 'a', type: 'INT NOT NULL' }, { name: 'b', type: 'STRING' }] }));
    expect((await table(['create', 'd.app', '--schema', app])).code).toBe(0);
    expect((await table(['put', 'd.app'], '{"a":1,"b":"x"}')).code).toBe(0);
  });

  it('put refuses a retraction naming its line, before the other columns are checked', async () => {
    const r = await table(['put', 'd.app'], '{"a":2}\n{"_kind":"-D","b":"x"}');
    // Was "column 'a' must not be null" with no line; with 'a' given, the writer's refusal, also without one.
    expect([r.code, r.out, r.err]).toEqual([2, '', 'tilstand: line 2: column \'_kind\': an append table (no primary key) takes only "+I" rows, got "-D"\n']);
    expect((await table(['scan', 'd.app'])).out).toBe('{"a":1,"b":"x"}\n');
  });

  it('get says the table has no primary key', async () => {
    const r = await table(['get', 'd.app', '--key', '{"a":1}']);
    // Was "'a' is not a primary-key column (the primary key is )".
    expect([r.code, r.out, r.err]).toEqual([2, '', "tilstand: option '--key': the table has no primary key (an append table); find its rows with `scan --where`\n"]);
  });
});

describe('tilstand table tags with a retention past the year 9999', () => {
  it('prints the whole expiry time', async () => {
    // 9,999,999 weeks: the tag expires in the year 193,6xx, written `+193…-…` (six-digit year).
    expect((await table(['tag', 'create', 'd.kv', 'long', '--retain', '9999999w'])).code).toBe(0);
    const [t] = JSON.parse((await table(['tags', 'd.kv', '--json'])).out) as { createTime: string; expiresAt: string }[];
    // Was cut at 23 characters: "+193…-…T…:…:…." without its milliseconds.
    expect(t!.expiresAt).toMatch(/^\+\d{6}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
    expect(t!.createTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
  });
});
