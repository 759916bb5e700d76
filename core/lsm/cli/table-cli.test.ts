// `tilstand table …` end to end: every command and every error path, run in-process against
// real temporary warehouses, plus runs of the real binary from a shell.
//
// In-process runs call `runTableCli`, the function `main` (core/site/cli/main.ts) hands every
// `tilstand table …` to: the import rule forbids core/lsm to import core/site. The dispatcher
// itself (help, unknown commands, start) is tested in core/site/cli/main.test.ts, and the
// binary tests below go through `main` for real.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog, parseIdentifier, type TableWriter } from '../index.ts';
import { parseArgs } from './args.ts';
import { runTableCli } from './table-cli.ts';
import { parseDuration } from './values.ts';
import { runCli } from '../testing/cli.ts';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

interface Run {
  code: number;
  out: string;
  err: string;
}

async function run(args: string[], stdin = ''): Promise<Run> {
  if (args[0] !== 'table') throw new Error('run() takes `table …` arguments');
  return runCli(runTableCli, args.slice(1), stdin);
}

const jsonLines = (text: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const STOCK_SCHEMA = {
  fields: [
    { name: 'site', type: 'STRING' },
    { name: 'item', type: 'STRING' },
    { name: 'qty', type: 'INT' },
    { name: 'price', type: 'DECIMAL(10, 2)' },
    { name: 'serial', type: 'BIGINT' },
    { name: 'day', type: 'DATE' },
    { name: 'seen', type: 'TIMESTAMP(3)' },
    { name: 'tagbytes', type: 'BYTES' },
  ],
  primaryKeys: ['site', 'item'],
  partitionKeys: ['site'],
  options: { bucket: '2' },
};

let dir: string;
let wh: string;
let schemaFile: string;
const W = () => ['--warehouse', wh];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-cli-'));
  wh = join(dir, 'warehouse');
  schemaFile = join(dir, 'stock.json');
  writeFileSync(schemaFile, JSON.stringify(STOCK_SCHEMA));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function createStock(name = 'site_1.stock'): Promise<void> {
  const r = await run(['table', 'create', name, '--schema', schemaFile, ...W()]);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
}

const ROWS = [
  { site: 'S1', item: 'A1', qty: 5, price: '1.50', serial: '9007199254740993', day: '2024-05-01', seen: '2024-05-01T10:00:00.123Z', tagbytes: 'AAEC' },
  { site: 'S1', item: 'A2', qty: 2, price: '0.99', serial: 7, day: '2024-05-02', seen: '2024-05-02T11:30:00Z', tagbytes: null },
  { site: 'S1', item: 'B1', qty: 9 },
  { site: 'S2', item: 'A1', qty: 1 },
];
const lines = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

async function putRows(rows: object[], name = 'site_1.stock'): Promise<Record<string, unknown>> {
  const r = await run(['table', 'put', name, ...W()], lines(rows));
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as Record<string, unknown>;
}

async function scan(extra: string[] = [], name = 'site_1.stock'): Promise<Record<string, unknown>[]> {
  const r = await run(['table', 'scan', name, ...W(), ...extra]);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return jsonLines(r.out);
}

const items = (rows: Record<string, unknown>[]) => rows.map((r) => `${r.site}/${r.item}`).sort();

/** Holds the table's writer open, as another process would. */
function holdWriter(name = 'site_1.stock'): TableWriter {
  return new Catalog(wh).getTable(parseIdentifier(name)).newWriter();
}

// ---------------------------------------------------------------------------------------------

describe('argument parser', () => {
  const specs = { warehouse: { type: 'string' as const, value: '<dir>' }, where: { type: 'string' as const, multiple: true }, json: { type: 'boolean' as const } };

  it('reads --flag value, --flag=value, repeated and boolean flags, and positionals in any order', () => {
    const a = parseArgs(['x.y', '--warehouse', '/w', '--where=a=1', '--where', 'b>2', '--json', 'extra'], specs, 'table scan');
    expect(a.positionals).toEqual(['x.y', 'extra']);
    expect(a.required('warehouse')).toBe('/w');
    expect(a.strings('where')).toEqual(['a=1', 'b>2']);
    expect(a.boolean('json')).toBe(true);
    expect(parseArgs(['--json=false'], specs, 'c').boolean('json')).toBe(false);
    expect(parseArgs(['--', '--json'], specs, 'c').positionals).toEqual(['--json']);
    expect(parseArgs(['--where', '-5'], specs, 'c').strings('where')).toEqual(['-5']);
  });

  it('names the flag and what was expected', () => {
    expect(() => parseArgs(['--nope'], specs, 'table scan')).toThrow(/unknown option '--nope' for 'table scan'/);
    expect(() => parseArgs(['-x'], specs, 'table scan')).toThrow(/unknown option '-x'/);
    expect(() => parseArgs(['--warehouse'], specs, 'c')).toThrow(/option '--warehouse' expects a value <dir>/);
    expect(() => parseArgs(['--warehouse', '--json'], specs, 'c')).toThrow(/'--warehouse' expects a value <dir>, got the option '--json'/);
    expect(() => parseArgs(['--warehouse', 'a', '--warehouse', 'b'], specs, 'c')).toThrow(/'--warehouse' is given more than once/);
    expect(() => parseArgs(['--json=yes'], specs, 'c')).toThrow(/'--json' is a switch/);
    expect(() => parseArgs([], specs, 'table scan').required('warehouse')).toThrow(/option '--warehouse' <dir> is required for 'table scan'/);
  });

  it('parses durations', () => {
    expect(parseDuration('7d', 'retain')).toBe(7 * 86_400_000);
    expect(parseDuration('1h30m', 'retain')).toBe(90 * 60_000);
    expect(parseDuration('500ms', 'retain')).toBe(500);
    expect(parseDuration('0', 'retain')).toBe(0);
    expect(() => parseDuration('7', 'retain')).toThrow(/'--retain': a number without a unit is milliseconds/);
    expect(() => parseDuration('7 weeks', 'retain')).toThrow(/'--retain': expected a duration such as 7d/);
    // As a table's duration option takes it (table-cli-durations.test.ts).
    expect(parseDuration('7 days', 'retain')).toBe(7 * 86_400_000);
  });
});

describe('table help and unknown commands', () => {
  it('prints the table usage and the usage of one command', async () => {
    for (const h of [['table', '--help'], ['table', 'help'], ['table', '-h']]) {
      const t = await run(h);
      expect(t.code).toBe(0);
      expect(t.out).toContain('tilstand table scan');
      expect(t.out).toContain('tilstand table tag create');
      // The line `tilstand help` shares, so 3 says more than a table's other writer.
      expect(t.out).toContain('\nexit codes: 0 ok, 1 not found, 2 usage or invalid argument, 3 conflict (another writer, or not done as things stand; the message says why), 4 corruption, 5 other I/O\n');
    }
    const c = await run(['table', 'scan', '--help']);
    expect(c.code).toBe(0);
    expect(c.out).toMatch(/^usage: tilstand table scan --warehouse <dir> <db.table>/);
    const tc = await run(['table', 'tag', 'create', '--help']);
    expect(tc.out).toMatch(/^usage: tilstand table tag create --warehouse <dir> <db.table> <name>/);
  });

  it('exits 2 with the usage on stderr for an unknown or missing table command', async () => {
    const t = await run(['table', 'frob', ...W()]);
    expect(t.code).toBe(2);
    expect(t.out).toBe('');
    expect(t.err).toMatch(/^tilstand: unknown table command 'frob'/);
    expect(t.err).toContain('usage: tilstand table');
    const g = await run(['table', 'tag', 'rename', 'a.b', ...W()]);
    expect(g.code).toBe(2);
    expect(g.err).toContain("'tag create' or 'tag delete'");
    const none = await run(['table']);
    expect(none.code).toBe(2);
    expect(none.err).toContain('usage: tilstand table');
  });
});

describe('table create', () => {
  it('creates the database and the table and prints the table path', async () => {
    const r = await run(['table', 'create', 'site_1.stock', '--schema', schemaFile, '--warehouse', wh]);
    expect(r.code).toBe(0);
    expect(r.out.trim()).toBe(join(wh, 'site_1.db', 'stock'));
    expect(readdirSync(join(wh, 'site_1.db', 'stock', 'schema'))).toEqual(['schema-0']);
    // --flag=value works as well
    const again = await run(['table', 'create', 'site_1.other', `--schema=${schemaFile}`, `--warehouse=${wh}`]);
    expect(again.code).toBe(0);
  });

  it('refuses an existing table unless --ignore-if-exists', async () => {
    await createStock();
    const r = await run(['table', 'create', 'site_1.stock', '--schema', schemaFile, ...W()]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^tilstand: .*already exists/);
    expect((await run(['table', 'create', 'site_1.stock', '--schema', schemaFile, '--ignore-if-exists', ...W()])).code).toBe(0);
  });

  it('reports a bad schema file clearly', async () => {
    const bad = async (content: string | undefined, expected: RegExp) => {
      const f = join(dir, `bad-${Math.random()}.json`);
      if (content !== undefined) writeFileSync(f, content);
      const r = await run(['table', 'create', 'site_1.bad', '--schema', f, ...W()]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(expected);
      expect(r.err.startsWith('tilstand: ')).toBe(true);
    };
    await bad(undefined, /cannot read schema file .*no such file/);
    await bad('{"fields": [', /is not valid JSON/);
    await bad('[]', /expected a JSON object/);
    await bad('{"fields": []}', /'fields' must be a non-empty list/);
    await bad('{"fields": [{"name": "a"}]}', /field 'a' needs a 'type': a string such as .*, or Paimon's JSON type object/);
    await bad('{"fields": [{"name": "a", "type": "INT"}], "primaryKey": ["a"]}', /unknown key 'primaryKey'/);
    await bad('{"fields": [{"name": "a", "type": "INTEGRAL"}], "primaryKeys": ["a"]}', /unknown or unsupported type 'INTEGRAL'/);
    await bad('{"fields": [{"name": "a", "type": "INT"}], "primaryKeys": ["a"], "options": {"bucket.count": "2"}}', /unknown option 'bucket.count'/);
    await bad('{"fields": [{"name": "a", "type": "INT"}], "primaryKeys": ["b"]}', /unknown column 'b'/);
    await bad('{"fields": [{"name": "a", "type": "INT"}], "primaryKeys": ["a"], "options": {"bucket": "zero"}}', /option 'bucket': expected an integer/);
    // No table made, and not the database made for it either.
    expect((await run(['table', 'list', ...W()])).out).toBe('');
  });

  it('a refused create leaves no database behind, and keeps one that was there', async () => {
    for (const [schema, why] of [
      [{ fields: [{ name: 'k', type: 'STRNG' }], primaryKeys: ['k'] }, "unknown or unsupported type 'STRNG'"],
      [{ fields: [{ name: 'k', type: 'INT' }], primaryKeys: ['k'], options: { 'bucket.count': '2' } }, "unknown option 'bucket.count'"],
      [{ fields: [{ name: 'k', type: 'INT' }], primaryKeys: ['j'] }, "unknown column 'j'"],
    ] as const) {
      const f = join(dir, 'bad.json');
      writeFileSync(f, JSON.stringify(schema));
      const r = await run(['table', 'create', 'fresh.t', '--schema', f, ...W()]);
      expect([r.code, r.err], why).toEqual([2, expect.stringContaining(why)]);
      expect(existsSync(join(wh, 'fresh.db')), why).toBe(false);
      // A database that was there before the call stays, empty or not.
      await createStock();
      new Catalog(wh).createDatabase('empty');
      for (const name of ['site_1.t', 'empty.t']) expect((await run(['table', 'create', name, '--schema', f, ...W()])).code, name).toBe(2);
      expect((await run(['table', 'list', ...W()])).out).toBe('empty\nsite_1\n');
      expect((await run(['table', 'list', 'site_1', ...W()])).out).toBe('stock\n');
      rmSync(wh, { recursive: true });
    }
  });

  it('checks the table name and the required flags', async () => {
    const r = await run(['table', 'create', 'stock', '--schema', schemaFile, ...W()]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('<database>.<table>');
    const w = await run(['table', 'create', 'site_1.stock', '--schema', schemaFile]);
    expect(w.code).toBe(2);
    expect(w.err).toContain("option '--warehouse' <dir> is required");
    const s = await run(['table', 'create', 'site_1.stock', ...W()]);
    expect(s.code).toBe(2);
    expect(s.err).toContain("option '--schema' <file> is required");
    const p = await run(['table', 'create', '--schema', schemaFile, ...W()]);
    expect(p.code).toBe(2);
    expect(p.err).toContain('needs <db.table>');
    const x = await run(['table', 'create', 'a.b', 'c.d', '--schema', schemaFile, ...W()]);
    expect(x.code).toBe(2);
    expect(x.err).toContain("unexpected argument 'c.d'");
  });

  it('refuses an empty --warehouse (an unset variable) rather than working in the current directory', async () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      for (const argv of [
        ['table', 'create', 'site_1.stock', '--schema', schemaFile, '--warehouse', ''],
        ['table', 'drop', 'site_1.stock', '--warehouse='],
        ['table', 'list', '--warehouse', ' '],
      ]) {
        const r = await run(argv);
        // Was 0: create made <cwd>/site_1.db/stock, drop deleted it again, list listed the cwd.
        expect([r.code, r.out, r.err], argv.join(' ')).toEqual([2, '', `tilstand: option '--warehouse': expected the warehouse directory, got '${argv.at(-1)!.replace('--warehouse=', '')}'\n`]);
      }
      expect(readdirSync(dir).sort()).toEqual(['stock.json']);
    } finally {
      process.chdir(cwd);
    }
  });
});

describe('table put and scan', () => {
  it('round-trips every JSON form and commits once per call', async () => {
    await createStock();
    expect(await putRows(ROWS)).toEqual({ snapshot: 1, rows: 4 });
    const rows = await scan();
    expect(items(rows)).toEqual(['S1/A1', 'S1/A2', 'S1/B1', 'S2/A1']);
    const a1 = rows.find((r) => r.site === 'S1' && r.item === 'A1');
    expect(a1).toEqual({
      site: 'S1',
      item: 'A1',
      qty: 5,
      price: '1.50',
      serial: '9007199254740993',
      day: '2024-05-01',
      seen: '2024-05-01T10:00:00.123',
      tagbytes: 'AAEC',
    });
    expect(rows.find((r) => r.item === 'A2')!.serial).toBe(7);
    expect(rows.find((r) => r.item === 'B1')!.price).toBeNull();

    // Row kinds: an update and a delete, as a second commit.
    const second = await putRows([
      { _kind: '+U', site: 'S1', item: 'A2', qty: 3 },
      { _kind: '-D', site: 'S1', item: 'B1' },
      { site: 'S3', item: 'C1', qty: 0 },
    ]);
    expect(second).toEqual({ snapshot: 2, rows: 3 });
    const after = await scan();
    expect(items(after)).toEqual(['S1/A1', 'S1/A2', 'S2/A1', 'S3/C1']);
    expect(after.find((r) => r.item === 'A2')!.qty).toBe(3);
  });

  it('skips blank lines and accepts CRLF; an empty input commits nothing', async () => {
    await createStock();
    const r = await run(['table', 'put', 'site_1.stock', ...W()], '\r\n{"site":"S1","item":"A1","qty":1}\r\n\n{"site":"S1","item":"A2","qty":2}\r\n');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ snapshot: 1, rows: 2 });
    const empty = await run(['table', 'put', 'site_1.stock', ...W()], '');
    expect(empty.code).toBe(0);
    expect(JSON.parse(empty.out)).toEqual({ snapshot: null, rows: 0 });
  });

  it('refuses a BIGINT or DECIMAL written as a JSON number with more digits than a double keeps', async () => {
    writeFileSync(schemaFile, JSON.stringify({ fields: [{ name: 'id', type: 'STRING' }, { name: 'amount', type: 'DECIMAL(38, 2)' }, { name: 'n', type: 'BIGINT' }], primaryKeys: ['id'], options: { bucket: '1' } }));
    await createStock('d.t');
    for (const [line, column] of [
      ['{"id":"a","amount":12345678901234567890.12}', "'amount' (DECIMAL(38, 2))"], // was stored as 12345678901234567000.00, exit 0
      ['{"id":"a","n":12345678901234567}', "'n' (BIGINT)"], // was "expected an integer, got 12345678901234568"
    ] as const) {
      const r = await run(['table', 'put', 'd.t', ...W()], `${line}\n`);
      expect([r.code, r.out], line).toEqual([2, '']);
      expect(r.err).toMatch(new RegExp(`^tilstand: line 1: column ${column.replace(/[()]/g, '\\$&')}: the number \\S+ has more digits than a JSON number keeps exactly; write it as a string`));
    }
    expect(await scan([], 'd.t')).toEqual([]);
    // As strings, and as numbers a double keeps, they are taken as written.
    await putRows([{ id: 'a', amount: '12345678901234567890.12', n: '12345678901234567' }, { id: 'b', amount: 123456789012.34, n: 9007199254740991 }, { id: 'c', amount: 0.1, n: -5 }], 'd.t');
    expect((await scan([], 'd.t')).sort((x, y) => String(x.id).localeCompare(String(y.id)))).toEqual([
      { id: 'a', amount: '12345678901234567890.12', n: '12345678901234567' },
      { id: 'b', amount: '123456789012.34', n: 9007199254740991 },
      { id: 'c', amount: '0.10', n: -5 },
    ]);
  });

  it('refuses a bad line naming the line number and column, and commits nothing', async () => {
    await createStock();
    await putRows(ROWS.slice(0, 1));
    const bad = async (input: string, expected: RegExp) => {
      const r = await run(['table', 'put', 'site_1.stock', ...W()], input);
      expect(r.code, r.err).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toMatch(expected);
    };
    const good = '{"site":"S1","item":"Z1","qty":1}\n';
    await bad(`${good}${good}{"site":"S1","item":\n`, /^tilstand: line 3: not valid JSON/);
    await bad(`${good}{"site":"S1","item":"Z2","qty":"many"}\n`, /^tilstand: line 2: column 'qty' \(INT\)/);
    await bad(`${good}{"site":"S1","item":"Z2","qty":1,"colour":"red"}\n`, /^tilstand: line 2: unknown column 'colour'/);
    await bad(`{"site":"S1","qty":1}\n`, /^tilstand: line 1: column 'item' must not be null/);
    await bad(`${good}{"_kind":"+X","site":"S1","item":"Z2"}\n`, /^tilstand: line 2: column '_kind': expected "\+I", "-U", "\+U" or "-D", got "\+X"/);
    await bad(`${good}[1,2]\n`, /^tilstand: line 2: expected a JSON object/);
    await bad(`{"site":"S1","item":"Z2","price":"1.234"}\n`, /^tilstand: line 1: column 'price' \(DECIMAL\(10, 2\)\): .*more than 2 decimal places/);
    await bad(`{"site":"S1","item":"Z2","day":"2024-02-30"}\n`, /^tilstand: line 1: column 'day' \(DATE\): .*2024-02-30/);
    await bad(`{"site":"S1","item":"Z2","tagbytes":"***"}\n`, /^tilstand: line 1: column 'tagbytes' \(BYTES\): expected base64/);
    await bad(`{"site":"S1","item":"Z2","serial":1.5}\n`, /^tilstand: line 1: column 'serial' \(BIGINT\)/);
    // Nothing from any refused input was committed.
    const snaps = JSON.parse((await run(['table', 'snapshots', 'site_1.stock', '--json', ...W()])).out) as unknown[];
    expect(snaps).toHaveLength(1);
    expect(items(await scan())).toEqual(['S1/A1']);
  });

  it('filters with --where on key, partition and value columns, and projects with --columns', async () => {
    await createStock();
    await putRows(ROWS);
    expect(items(await scan(['--where', 'item=A1']))).toEqual(['S1/A1', 'S2/A1']);
    expect(items(await scan(['--where', 'item^=A']))).toEqual(['S1/A1', 'S1/A2', 'S2/A1']);
    expect(items(await scan(['--where', 'qty>=5']))).toEqual(['S1/A1', 'S1/B1']);
    expect(items(await scan(['--where', 'qty<2']))).toEqual(['S2/A1']);
    expect(items(await scan(['--where', 'site=S1', '--where', 'qty>2', '--where', 'qty<=9']))).toEqual(['S1/A1', 'S1/B1']);
    expect(items(await scan(['--where', 'price>1']))).toEqual(['S1/A1']);
    expect(items(await scan(['--where', 'day>=2024-05-02']))).toEqual(['S1/A2']);
    expect(items(await scan(['--where', 'serial>8']))).toEqual(['S1/A1']);
    expect(items(await scan(['--where', 'item="A2"']))).toEqual(['S1/A2']);
    expect(await scan(['--where', 'item=A1', '--columns', 'qty,item'])).toEqual([
      { qty: 5, item: 'A1' },
      { qty: 1, item: 'A1' },
    ].sort((a, b) => b.qty - a.qty));
    expect(Object.keys((await scan(['--columns', 'qty,item']))[0]!)).toEqual(['qty', 'item']);
  });

  it('refuses bad conditions and columns with exit 2, also on an empty table', async () => {
    await createStock();
    const bad = async (extra: string[], expected: RegExp) => {
      const r = await run(['table', 'scan', 'site_1.stock', ...W(), ...extra]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(expected);
    };
    await bad(['--where', 'colour=red'], /unknown column 'colour'/);
    await bad(['--where', 'qty>=lots'], /--where 'qty>=lots': column 'qty' \(INT\)/);
    await bad(['--where', 'qty^=1'], /prefix condition \(\^=\) needs a string column/);
    await bad(['--where', 'qty!=1'], /'!=' is not supported/);
    await bad(['--where', 'qty'], /expected <column><op><value>/);
    await bad(['--columns', 'qty,colour'], /--columns names unknown column 'colour'/);
    await bad(['--columns', 'qty,'], /expected a comma list/);
    await bad(['--where', 'day<2024-02-30'], /--where 'day<2024-02-30': column 'day' \(DATE\)/);
    await bad(['--snapshot', 'one'], /'--snapshot': expected a snapshot id/);
    await bad(['--at', 'yesterday'], /'--at': expected an ISO-8601 time/);
    await bad(['--snapshot', '1', '--tag', 't'], /at most one of --snapshot, --tag and --at/);
  });

  it('prints nothing for a table without snapshots', async () => {
    await createStock();
    expect(await scan()).toEqual([]);
  });
});

describe('time travel', () => {
  it('reads by --snapshot, --tag and --at (scan and get)', async () => {
    await createStock();
    await putRows([{ site: 'S1', item: 'A1', qty: 1 }]);
    await sleep(20);
    await putRows([{ site: 'S1', item: 'A1', qty: 2 }, { site: 'S1', item: 'A2', qty: 2 }]);
    await sleep(20);
    await putRows([{ _kind: '-D', site: 'S1', item: 'A1' }]);
    const snaps = JSON.parse((await run(['table', 'snapshots', 'site_1.stock', '--json', ...W()])).out) as Array<{ id: number; time: string; timeMillis: number }>;
    expect(snaps.map((s) => s.id)).toEqual([1, 2, 3]);

    expect(await scan(['--snapshot', '1', '--columns', 'item,qty'])).toEqual([{ item: 'A1', qty: 1 }]);
    expect(await scan(['--snapshot', '2', '--columns', 'item,qty'])).toEqual([{ item: 'A1', qty: 2 }, { item: 'A2', qty: 2 }]);
    expect(await scan(['--columns', 'item,qty'])).toEqual([{ item: 'A2', qty: 2 }]);

    expect((await run(['table', 'tag', 'create', 'site_1.stock', 'first', '--snapshot', '1', ...W()])).code).toBe(0);
    expect(await scan(['--tag', 'first', '--columns', 'item,qty'])).toEqual([{ item: 'A1', qty: 1 }]);

    // --at: the latest snapshot committed at or before the time; ISO text or epoch millis.
    expect(await scan(['--at', snaps[0]!.time, '--columns', 'item,qty'])).toEqual([{ item: 'A1', qty: 1 }]);
    expect(await scan(['--at', String(snaps[1]!.timeMillis + 1), '--columns', 'item,qty'])).toEqual([{ item: 'A1', qty: 2 }, { item: 'A2', qty: 2 }]);

    const key = ['--key', '{"site":"S1","item":"A1"}'];
    const get = (extra: string[]) => run(['table', 'get', 'site_1.stock', ...W(), ...key, ...extra]);
    expect((await get([])).code).toBe(1);
    expect(JSON.parse((await get(['--snapshot', '2'])).out).qty).toBe(2);
    expect(JSON.parse((await get(['--tag', 'first'])).out).qty).toBe(1);
    expect(JSON.parse((await get(['--at', snaps[1]!.time])).out).qty).toBe(2);

    // Points that do not exist are "not found".
    const missing = async (extra: string[], expected: RegExp) => {
      const r = await run(['table', 'scan', 'site_1.stock', ...W(), ...extra]);
      expect(r.code, r.err).toBe(1);
      expect(r.err).toMatch(expected);
    };
    await missing(['--snapshot', '99'], /snapshot 99 .*does not exist/);
    await missing(['--tag', 'nope'], /tag 'nope' does not exist/);
    await missing(['--at', '2000-01-01T00:00:00Z'], /no snapshot .* at or before 2000-01-01T00:00:00.000Z/);
  });
});

describe('table get', () => {
  it('prints the row of a key, or exits 1 with not found', async () => {
    await createStock();
    await putRows(ROWS);
    const r = await run(['table', 'get', 'site_1.stock', '--key', '{"site":"S1","item":"A2"}', ...W()]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ site: 'S1', item: 'A2', qty: 2, price: '0.99' });
    const nf = await run(['table', 'get', 'site_1.stock', '--key', '{"site":"S9","item":"A2"}', ...W()]);
    expect(nf.code).toBe(1);
    expect(nf.out).toBe('');
    expect(nf.err).toMatch(/^tilstand: not found/);
  });

  it('needs every primary-key column, and nothing else', async () => {
    await createStock();
    const bad = async (key: string, expected: RegExp) => {
      const r = await run(['table', 'get', 'site_1.stock', '--key', key, ...W()]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(expected);
    };
    await bad('{"item":"A1"}', /missing primary-key column 'site'/);
    await bad('{"site":"S1","item":"A1","qty":1}', /'qty' is not a primary-key column/);
    await bad('{site}', /'--key': not valid JSON/);
    await bad('["S1","A1"]', /expected a JSON object/);
    const r = await run(['table', 'get', 'site_1.stock', ...W()]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("option '--key' <json> is required");
  });
});

describe('table snapshots and tags', () => {
  it('lists snapshots as an aligned table and as JSON', async () => {
    await createStock();
    const empty = await run(['table', 'snapshots', 'site_1.stock', ...W()]);
    expect(empty.out.trim()).toBe('(no snapshots)');
    await putRows(ROWS);
    await putRows(ROWS.slice(0, 1));
    await run(['table', 'tag', 'create', 'site_1.stock', 'nightly', ...W()]);
    const human = await run(['table', 'snapshots', 'site_1.stock', ...W()]);
    expect(human.code).toBe(0);
    const [header, ...rows] = human.out.trimEnd().split('\n');
    // FILE RECORDS, as `table tags` and `hq tags` call it (was TOTAL, read as rows): snapshot 2
    // counts 5 records in its files, of 4 rows (one put twice).
    expect(header).toMatch(/^ID\s+KIND\s+TIME\s+FILE RECORDS\s+DELTA\s+CHANGELOG\s+SCHEMA\s+TAGS$/);
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatch(/^ 2\s+APPEND\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+5\s+1\s+0\s+0\s+nightly$/);
    // Aligned: the TIME column starts at the same offset on every line.
    expect(new Set([header, ...rows].map((l) => l!.search(/TIME|\d{4}-/))).size).toBe(1);
    const json = JSON.parse((await run(['table', 'snapshots', 'site_1.stock', '--json', ...W()])).out) as Array<Record<string, unknown>>;
    expect(json[0]).toMatchObject({ id: 1, kind: 'APPEND', totalRecordCount: 4, deltaRecordCount: 4, schemaId: 0, tags: [] });
    expect(json[1]).toMatchObject({ id: 2, totalRecordCount: 5, tags: ['nightly'] });
  });

  it('creates, lists and deletes tags', async () => {
    await createStock();
    const none = await run(['table', 'tags', 'site_1.stock', ...W()]);
    expect(none.out.trim()).toBe('(no tags)');
    const early = await run(['table', 'tag', 'create', 'site_1.stock', 'early', ...W()]);
    expect(early.code).toBe(1);
    expect(early.err).toContain('no snapshot yet');
    await putRows(ROWS);
    await putRows(ROWS.slice(0, 1));
    const c = await run(['table', 'tag', 'create', 'site_1.stock', 'week', '--retain', '7d', ...W()]);
    expect(c.code, c.err).toBe(0);
    expect(c.out).toContain("created tag 'week' on snapshot 2, retained for 7d");
    expect((await run(['table', 'tag', 'create', 'site_1.stock', 'first', '--snapshot', '1', ...W()])).code).toBe(0);
    const human = await run(['table', 'tags', 'site_1.stock', ...W()]);
    const out = human.out.trimEnd().split('\n');
    // FILE RECORDS, as `hq tags` says: 'week' counts 5 records in its files, of 4 rows (one put twice).
    expect(out[0]).toMatch(/^NAME\s+SNAPSHOT\s+SNAPSHOT TIME\s+FILE RECORDS\s+CREATED \(LOCAL\)\s+RETAINED$/);
    expect(out[1]).toMatch(/^first\s+1\s+\S+Z\s+4\s+-\s+forever$/);
    expect(out[2]).toMatch(/^week\s+2\s+\S+Z\s+5\s+\S+\s+7d$/);
    const json = JSON.parse((await run(['table', 'tags', 'site_1.stock', '--json', ...W()])).out) as Array<Record<string, unknown>>;
    expect(json.map((t) => [t.name, t.snapshot, t.retainedMillis])).toEqual([['first', 1, null], ['week', 2, 7 * 86_400_000]]);
    // The JSON's key stays `recordCount` (scripts read it).
    expect(json.map((t) => t.recordCount)).toEqual([4, 5]);

    const dup = await run(['table', 'tag', 'create', 'site_1.stock', 'week', ...W()]);
    expect(dup.code).toBe(2);
    expect(dup.err).toContain("tag 'week' already exists");
    const badSnap = await run(['table', 'tag', 'create', 'site_1.stock', 'x', '--snapshot', '42', ...W()]);
    expect(badSnap.code).toBe(1);
    const badRetain = await run(['table', 'tag', 'create', 'site_1.stock', 'x', '--retain', 'a week', ...W()]);
    expect(badRetain.code).toBe(2);
    expect(badRetain.err).toContain("'--retain': expected a duration");
    const noName = await run(['table', 'tag', 'create', 'site_1.stock', ...W()]);
    expect(noName.code).toBe(2);
    expect(noName.err).toContain('needs <name>');

    const d = await run(['table', 'tag', 'delete', 'site_1.stock', 'week', ...W()]);
    expect(d.code).toBe(0);
    expect(d.out).toContain("deleted tag 'week'");
    const again = await run(['table', 'tag', 'delete', 'site_1.stock', 'week', ...W()]);
    expect(again.code).toBe(1);
    expect(again.err).toContain("tag 'week' does not exist");
  });
});

describe('table compact, expire and inspect', () => {
  const compactSchema = (options: Record<string, string>) => {
    const f = join(dir, 'kv.json');
    writeFileSync(f, JSON.stringify({ fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options }));
    return f;
  };

  it('compacts fully and inspect shows the levels before and after', async () => {
    expect((await run(['table', 'create', 'd.kv', '--schema', compactSchema({ 'write-only': 'true' }), ...W()])).code).toBe(0);
    for (let i = 0; i < 3; i++) await putRows([{ k: i, v: `v${i}` }, { k: 10 + i, v: 'x' }], 'd.kv');
    const before = JSON.parse((await run(['table', 'inspect', 'd.kv', '--json', ...W()])).out);
    expect(before).toMatchObject({ table: 'd.kv', snapshot: 3, compactionTrigger: 5, totalFiles: 3, totalRows: 6 });
    expect(before.buckets).toHaveLength(1);
    expect(before.buckets[0]).toMatchObject({ partition: '', bucket: 0, sortedRuns: 3, levels: [{ level: 0, files: 3, rows: 6 }] });
    // Files in read order: the newest level-0 run first.
    expect(before.buckets[0].files[0]).toMatchObject({ level: 0, rows: 2, minKey: { k: 2 }, maxKey: { k: 12 }, minSequence: 4, maxSequence: 5 });
    expect(before.buckets[0].files[2]).toMatchObject({ minKey: { k: 0 }, maxKey: { k: 10 }, minSequence: 0, maxSequence: 1 });
    expect(before.buckets[0].files[0].bytes).toBeGreaterThan(0);

    const human = await run(['table', 'inspect', 'd.kv', ...W()]);
    expect(human.code).toBe(0);
    expect(human.out).toContain('compaction trigger 5 sorted runs');
    expect(human.out).toContain('bucket 0: 3/5 sorted runs; L0: 3 files; 6 rows');
    expect(human.out).toMatch(/LEVEL\s+FILE\s+ROWS\s+BYTES\s+MIN KEY\s+MAX KEY\s+SEQUENCE/);
    expect(human.out).toContain('{"k":0}');
    expect(human.out).toMatch(/total: 1 bucket, 3 files, 6 rows/);

    const c = await run(['table', 'compact', 'd.kv', '--full', ...W()]);
    expect(c.code, c.err).toBe(0);
    expect(JSON.parse(c.out)).toEqual({ snapshot: 4, full: true });
    const after = JSON.parse((await run(['table', 'inspect', 'd.kv', '--json', ...W()])).out);
    expect(after.buckets[0].sortedRuns).toBe(1);
    expect(after.buckets[0].files).toHaveLength(1);
    expect(after.buckets[0].files[0].level).toBeGreaterThan(0);
    expect(after.totalRows).toBe(6);
    const snaps = JSON.parse((await run(['table', 'snapshots', 'd.kv', '--json', ...W()])).out) as Array<{ kind: string }>;
    expect(snaps.at(-1)!.kind).toBe('COMPACT');
    // The old shape is still there by snapshot.
    expect(JSON.parse((await run(['table', 'inspect', 'd.kv', '--snapshot', '3', '--json', ...W()])).out).totalFiles).toBe(3);
    expect(await scan([], 'd.kv')).toHaveLength(6);

    // A compaction without --full runs and reports its snapshot (or null when nothing was due).
    const plain = await run(['table', 'compact', 'd.kv', ...W()]);
    expect(plain.code, plain.err).toBe(0);
    expect(JSON.parse(plain.out)).toMatchObject({ full: false });
  });

  it('inspect reports a missing and a truncated data file as corruption, naming both, with exit 4', async () => {
    expect((await run(['table', 'create', 'd.kv', '--schema', compactSchema({ 'write-only': 'true' }), ...W()])).code).toBe(0);
    for (let i = 0; i < 3; i++) await putRows([{ k: i, v: `v${i}` }, { k: 10 + i, v: 'x' }], 'd.kv');
    const intact = await run(['table', 'inspect', 'd.kv', '--json', ...W()]);
    expect([intact.code, intact.err]).toEqual([0, '']);
    const files = (JSON.parse(intact.out).buckets[0].files as Array<{ name: string; bytes: number }>).map((f) => ({ ...f, path: join(wh, 'd.db', 'kv', 'bucket-0', f.name) }));
    expect(files).toHaveLength(3);
    const [gone, cut, ok] = files as [(typeof files)[0], (typeof files)[0], (typeof files)[0]];
    rmSync(gone.path);
    truncateSync(cut.path, cut.bytes - 10);
    for (const json of [[], ['--json']]) {
      const r = await run(['table', 'inspect', 'd.kv', ...json, ...W()]);
      // Was exit 0 with both files listed as healthy, at the sizes the manifest recorded.
      expect(r.code, r.err).toBe(4);
      expect(r.out).toBe('');
      expect(r.err).toMatch(/^tilstand: snapshot 3 of d\.kv references 2 damaged files: /);
      expect(r.err).toContain(`${gone.path} is missing`);
      expect(r.err).toContain(`${cut.path} is ${cut.bytes - 10} bytes, its manifest says ${cut.bytes}`);
      expect(r.err).not.toContain(ok.name);
      expect(r.err.split('\n')).toHaveLength(2); // one line
    }
    // Files are listed newest first: snapshot 1 has only the intact file, snapshot 2 also the truncated one.
    const first = await run(['table', 'inspect', 'd.kv', '--snapshot', '1', ...W()]);
    expect([first.code, first.err]).toEqual([0, '']);
    const second = await run(['table', 'inspect', 'd.kv', '--snapshot', '2', ...W()]);
    expect([second.code, second.err]).toEqual([4, `tilstand: snapshot 2 of d.kv references 1 damaged file: ${cut.path} is ${cut.bytes - 10} bytes, its manifest says ${cut.bytes}\n`]);
  });

  it('inspect checks the deletion-vector files a snapshot lists', async () => {
    expect((await run(['table', 'create', 'd.kv', '--schema', compactSchema({ bucket: '1', 'deletion-vectors.enabled': 'true' }), ...W()])).code).toBe(0);
    await putRows([0, 1, 2, 3].map((k) => ({ k, v: `v${k}` })), 'd.kv');
    expect((await run(['table', 'compact', 'd.kv', '--full', ...W()])).code).toBe(0);
    await putRows([{ k: 1, v: 'new' }], 'd.kv');
    await putRows([{ k: 2, v: 'new' }], 'd.kv');
    const index = join(wh, 'd.db', 'kv', 'index');
    const dvFiles = readdirSync(index);
    expect(dvFiles.length).toBeGreaterThan(0);
    const intact = await run(['table', 'inspect', 'd.kv', ...W()]);
    expect([intact.code, intact.err]).toEqual([0, '']);
    for (const f of dvFiles) rmSync(join(index, f));
    const r = await run(['table', 'inspect', 'd.kv', ...W()]);
    expect(r.code, r.err).toBe(4);
    expect(r.err).toMatch(new RegExp(`references 1 damaged file: .*/index/index-.* is missing\n$`));
  });

  it('inspect of an empty table', async () => {
    await createStock();
    const r = await run(['table', 'inspect', 'site_1.stock', ...W()]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('snapshot (none)');
    expect(JSON.parse((await run(['table', 'inspect', 'site_1.stock', '--json', ...W()])).out)).toMatchObject({ snapshot: null, buckets: [], totalFiles: 0 });
  });

  it('expires snapshots per the table options and removes orphan files', async () => {
    const options = { 'write-only': 'true', 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2' };
    expect((await run(['table', 'create', 'd.kv', '--schema', compactSchema(options), ...W()])).code).toBe(0);
    for (let i = 0; i < 4; i++) await putRows([{ k: i, v: `v${i}` }], 'd.kv');
    const first = await run(['table', 'expire', 'd.kv', ...W()]);
    expect(first.code, first.err).toBe(0);
    const r1 = JSON.parse(first.out);
    expect(r1.expiredSnapshots).toEqual([1, 2]);
    expect(r1.deletedFiles).toBeGreaterThan(0);
    expect(r1.orphanFilesRemoved).toBeUndefined();
    const ids = (JSON.parse((await run(['table', 'snapshots', 'd.kv', '--json', ...W()])).out) as Array<{ id: number }>).map((s) => s.id);
    expect(ids).toEqual([3, 4]);
    expect((await scan([], 'd.kv')).map((r) => r.k)).toEqual([0, 1, 2, 3]);

    // An orphan (a file no snapshot or tag references, e.g. left by a crash) younger than the limit stays.
    const orphan = join(wh, 'd.db', 'kv', 'bucket-0', 'data-00000000-0000-0000-0000-000000000000-0.parquet');
    writeFileSync(orphan, 'left by a crash');
    const young = await run(['table', 'expire', 'd.kv', '--orphans-older-than', '1d', ...W()]);
    expect(young.code, young.err).toBe(0);
    expect(JSON.parse(young.out)).toEqual({ expiredSnapshots: [], expiredTags: [], deletedFiles: 0, orphanFilesRemoved: 0 });
    expect(existsSync(orphan)).toBe(true);

    const all = await run(['table', 'expire', 'd.kv', '--orphans-older-than', '0', ...W()]);
    expect(all.code, all.err).toBe(0);
    expect(JSON.parse(all.out)).toEqual({ expiredSnapshots: [], expiredTags: [], deletedFiles: 0, orphanFilesRemoved: 1 });
    expect(existsSync(orphan)).toBe(false);
    expect((await scan([], 'd.kv')).map((r) => r.k)).toEqual([0, 1, 2, 3]);

    const plain = await run(['table', 'expire', 'd.kv', ...W()]);
    expect(JSON.parse(plain.out)).toEqual({ expiredSnapshots: [], expiredTags: [], deletedFiles: 0 });
    const bad = await run(['table', 'expire', 'd.kv', '--orphans-older-than', 'old', ...W()]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("'--orphans-older-than': expected a duration");
  });
});

describe('one writer per table', () => {
  it('put, compact, expire and drop exit 3 while another writer holds the table', async () => {
    await createStock();
    await putRows(ROWS);
    const writer = holdWriter();
    try {
      const cases: Array<[string[], string]> = [
        [['table', 'put', 'site_1.stock', ...W()], lines(ROWS)],
        [['table', 'compact', 'site_1.stock', '--full', ...W()], ''],
        [['table', 'expire', 'site_1.stock', ...W()], ''],
        [['table', 'drop', 'site_1.stock', ...W()], ''],
      ];
      for (const [args, stdin] of cases) {
        const r = await run(args, stdin);
        expect(r.code, `${args[1]}: ${r.err}`).toBe(3);
        expect(r.err).toMatch(/^tilstand: table site_1\.stock .*writer/);
      }
      // Readers need no lock.
      expect(items(await scan())).toHaveLength(4);
    } finally {
      writer.close();
    }
    expect(JSON.parse((await run(['table', 'snapshots', 'site_1.stock', '--json', ...W()])).out)).toHaveLength(1);
    // Released: the next writer gets the table.
    expect(await putRows(ROWS.slice(0, 1))).toEqual({ snapshot: 2, rows: 1 });
  });
});

describe('drop of a table whose schema does not open', () => {
  it('is refused while another process holds the writer lock, as for a table that opens (exit 3), and goes through once it is released', async () => {
    await createStock();
    await putRows(ROWS);
    // This process holds the writer, as a site does; the drop runs as its own process (the binary).
    const writer = holdWriter();
    const bin = join(REPO, 'bin', 'tilstand.mjs');
    const drop = () => spawnSync(process.execPath, [bin, 'table', 'drop', 'site_1.stock', ...W()], { encoding: 'utf8', timeout: 60_000 });
    const table = join(wh, 'site_1.db', 'stock');
    let intact: ReturnType<typeof drop>;
    let damaged: ReturnType<typeof drop>;
    try {
      intact = drop();
      writeFileSync(join(table, 'schema', 'schema-0'), '{"version": 3, "id": 0, "fields": [');
      damaged = drop();
    } finally {
      writer.close();
    }
    const refusal = new RegExp(`^tilstand: table site_1\\.stock is being written by process ${process.pid} since .*; one writer per table\\n$`);
    expect([intact.status, intact.stdout], intact.stderr).toEqual([3, '']);
    expect(intact.stderr).toMatch(refusal);
    // Was exit 0 and the table deleted under its writer: the schema did not open, so no lock was taken.
    expect([damaged.status, damaged.stdout], damaged.stderr).toEqual([3, '']);
    expect(damaged.stderr).toMatch(refusal);
    expect(existsSync(join(table, 'schema', 'schema-0'))).toBe(true);
    // Nobody writes it any more: the damaged table can be dropped.
    const free = await run(['table', 'drop', 'site_1.stock', ...W()]);
    expect([free.code, free.out, free.err]).toEqual([0, 'dropped site_1.stock\n', '']);
    expect(existsSync(table)).toBe(false);
  }, 120_000);

  it('is refused in the same process while a writer is open on it, and the lock is free again after a refusal', async () => {
    await createStock();
    const writer = holdWriter();
    try {
      writeFileSync(join(wh, 'site_1.db', 'stock', 'schema', 'schema-0'), 'not json');
      const r = await run(['table', 'drop', 'site_1.stock', ...W()]);
      expect([r.code, r.err]).toEqual([3, 'tilstand: table site_1.stock already has a writer in this process; one writer per table\n']);
    } finally {
      writer.close();
    }
    expect((await run(['table', 'drop', 'site_1.stock', ...W()])).code).toBe(0);
  });
});

describe('not found, list and drop', () => {
  it('an unknown table exits 1 for every command', async () => {
    await createStock();
    const cmds: string[][] = [
      ['put', 'site_1.nope'],
      ['scan', 'site_1.nope'],
      ['get', 'site_1.nope', '--key', '{"k":1}'],
      ['snapshots', 'site_1.nope'],
      ['tags', 'site_1.nope'],
      ['tag', 'create', 'site_1.nope', 't'],
      ['tag', 'delete', 'site_1.nope', 't'],
      ['compact', 'site_1.nope'],
      ['expire', 'site_1.nope'],
      ['inspect', 'site_1.nope'],
      ['drop', 'site_1.nope'],
      ['scan', 'other_db.stock'],
      ['list', 'other_db'],
    ];
    for (const c of cmds) {
      const r = await run(['table', ...c, ...W()], '{"k":1}\n');
      expect(r.code, `${c.join(' ')}: ${r.err}`).toBe(1);
      expect(r.err).toMatch(/^tilstand: .*does not exist/);
    }
    const nowhere = await run(['table', 'list', '--warehouse', join(dir, 'nowhere')]);
    expect(nowhere.code).toBe(1);
    expect(nowhere.err).toContain('does not exist');
  });

  it('lists databases and tables, and drops a table', async () => {
    await createStock('site_1.stock');
    await createStock('site_1.work_queue');
    await createStock('site_2.stock');
    expect((await run(['table', 'list', ...W()])).out).toBe('site_1\nsite_2\n');
    expect((await run(['table', 'list', 'site_1', ...W()])).out).toBe('stock\nwork_queue\n');
    expect(JSON.parse((await run(['table', 'list', 'site_1', '--json', ...W()])).out)).toEqual(['stock', 'work_queue']);
    await putRows(ROWS);
    const d = await run(['table', 'drop', 'site_1.stock', ...W()]);
    expect(d.code, d.err).toBe(0);
    expect(d.out.trim()).toBe('dropped site_1.stock');
    expect(existsSync(join(wh, 'site_1.db', 'stock'))).toBe(false);
    expect((await run(['table', 'list', 'site_1', ...W()])).out).toBe('work_queue\n');
    expect((await run(['table', 'scan', 'site_1.stock', ...W()])).code).toBe(1);
  });
});

describe('corruption and I/O errors', () => {
  it('a damaged snapshot file exits 4', async () => {
    await createStock();
    await putRows(ROWS);
    writeFileSync(join(wh, 'site_1.db', 'stock', 'snapshot', 'snapshot-1'), '{"id": 1, "schemaId":');
    const r = await run(['table', 'scan', 'site_1.stock', ...W()]);
    expect(r.code).toBe(4);
    expect(r.err).toMatch(/^tilstand: corruption in .*snapshot-1/);
  });

  it('a warehouse that is a file is a bad --warehouse, exit 2 (was exit 5, "mkdir … failed: ENOTDIR")', async () => {
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, '');
    const r = await run(['table', 'create', 'site_1.stock', '--schema', schemaFile, '--warehouse', file]);
    expect([r.code, r.err]).toEqual([2, `tilstand: option '--warehouse': ${file} is a file, not a directory\n`]);
  });
});

describe('output', () => {
  it('streams a large scan with backpressure to a slow consumer', async () => {
    await createStock();
    const n = 20_000;
    const rows = Array.from({ length: n }, (_, i) => ({ site: `S${i % 3}`, item: `I${String(i).padStart(6, '0')}`, qty: i }));
    expect(await putRows(rows)).toEqual({ snapshot: 1, rows: n });
    let received = 0;
    let text = '';
    let writes = 0;
    const slow = new Writable({
      highWaterMark: 1024,
      write(chunk, _enc, done) {
        writes++;
        text += chunk;
        received += chunk.length;
        setTimeout(done, 1);
      },
    });
    let drains = 0;
    slow.on('drain', () => drains++);
    const stderr = new PassThrough();
    const code = await runTableCli(['scan', 'site_1.stock', ...W()], { stdin: Readable.from([]), stdout: slow, stderr });
    expect(code).toBe(0);
    await new Promise((r) => slow.end(r));
    expect(received).toBeGreaterThan(0);
    expect(jsonLines(text)).toHaveLength(n);
    expect(drains).toBeGreaterThan(0); // it waited for 'drain' rather than buffering everything
    expect(writes).toBeLessThan(n); // lines are written in chunks
  });

  it('stops quietly when the reader goes away', async () => {
    await createStock();
    await putRows(Array.from({ length: 20_000 }, (_, i) => ({ site: 'S1', item: `I${i}`, qty: i })));
    let seen = 0;
    const closing = new Writable({
      highWaterMark: 1024,
      write(chunk, _enc, done) {
        seen += chunk.length;
        if (seen > 100_000) done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
        else done();
      },
    });
    closing.on('error', () => undefined);
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (d) => (err += d));
    const code = await runTableCli(['scan', 'site_1.stock', ...W()], { stdin: Readable.from([]), stdout: closing, stderr });
    expect(code).toBe(0);
    expect(err).toBe('');
  });

  it('a failed write (a full disk) is an error, not a quiet end: exit 5, named on stderr', async () => {
    await createStock();
    await putRows(Array.from({ length: 20_000 }, (_, i) => ({ site: 'S1', item: `I${i}`, qty: i })));
    let seen = 0;
    const full = new Writable({
      highWaterMark: 1024,
      write(chunk, _enc, done) {
        seen += chunk.length;
        if (seen > 100_000) done(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
        else done();
      },
    });
    full.on('error', () => undefined);
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (d) => (err += d));
    const code = await runTableCli(['scan', 'site_1.stock', ...W()], { stdin: Readable.from([]), stdout: full, stderr });
    // Was 0 with nothing on stderr: `scan … > rows.jsonl` on a full disk left a truncated file that looked finished.
    expect(code).toBe(5);
    expect(err).toBe('tilstand: cannot write the output: ENOSPC: no space left on device, write\n');
  });
});

describe('the tilstand binary', () => {
  it('creates, puts from stdin and scans from a shell', () => {
    const bin = join(REPO, 'bin', 'tilstand.mjs');
    const sh = (args: string[], input?: string) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, input, encoding: 'utf8', timeout: 60_000 });
    const created = sh(['table', 'create', 'site_1.stock', '--schema', schemaFile, '--warehouse', 'warehouse']);
    expect(created.stderr).toBe('');
    expect(created.status).toBe(0);
    expect(created.stdout.trim()).toBe(join(dir, 'warehouse', 'site_1.db', 'stock'));
    const put = sh(['table', 'put', 'site_1.stock', '--warehouse', 'warehouse'], lines(ROWS));
    expect(put.stderr).toBe('');
    expect(put.status).toBe(0);
    expect(JSON.parse(put.stdout)).toEqual({ snapshot: 1, rows: 4 });
    const out = execFileSync(process.execPath, [bin, 'table', 'scan', 'site_1.stock', '--warehouse', 'warehouse', '--where', 'qty>=5', '--columns', 'item,qty,price'], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(jsonLines(out).sort((a, b) => String(a.item).localeCompare(String(b.item)))).toEqual([
      { item: 'A1', qty: 5, price: '1.50' },
      { item: 'B1', qty: 9, price: null },
    ]);
    const bad = sh(['table', 'scan', 'site_1.stock', '--warehouse', 'warehouse', '--colour', 'red']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("unknown option '--colour'");
    const unknown = sh(['nope']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('usage: tilstand');
  });
});
