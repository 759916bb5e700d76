// The data format mark (core/site/DESIGN.md, "Data format") read by the two commands that took
// none: `tilstand table --warehouse <data>/warehouse` and `tilstand demo --data <data>`. A
// directory a newer program requires is refused by both, exit 2 (a damaged mark: 4), with the
// words of every other command and before anything in it changes; a bare warehouse, with no data
// directory around it, is read as before.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { isDeepStrictEqual } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../lsm/index.ts';
import { DATA_FORMAT, dataFormatPath, programVersion, readDataFormat } from '../data-format.ts';
import { initDataDir } from '../init.ts';
import { main } from './main.ts';
import { runMain as run } from './test-support.ts';

const FAST = { N: 1024, r: 8, p: 1 };
const NEWER = { written: DATA_FORMAT + 1, requires: DATA_FORMAT + 1, by: 'tilstand 9.9.9' };
const REFUSAL = new RegExp(`has data format ${DATA_FORMAT + 1} \\(raised by tilstand 9\\.9\\.9\\) and requires a program that knows data format ${DATA_FORMAT + 1} or later; this one \\(${programVersion().replace(/[.()]/g, '\\$&')}\\) knows data format ${DATA_FORMAT}`);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-mark-table-demo-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Every file and folder under `root`: size, mtime and content hash (folders: mtime and names). */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    const names = readdirSync(d).sort();
    out.set(d, `dir ${statSync(d).mtimeMs} ${names.join(',')}`);
    for (const n of names) {
      const p = join(d, n);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else out.set(p, `${st.size} ${st.mtimeMs} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`);
    }
  };
  walk(root);
  return out;
}

/** A site's data directory whose stock table holds a row at snapshot 1 or later. */
async function siteDir(name = 'd'): Promise<string> {
  const data = join(dir, name);
  await initDataDir({ data, site: 'north', scrypt: FAST });
  const w = new Catalog(join(data, 'warehouse')).getTable({ database: 'site_north', table: 'stock' }).newWriter();
  w.writeRecord({ item: 'ITEM-1', location: 'A-01', on_hand: 7, inventory_seq: 3n });
  w.commit({ 'tilstand.hwm.inventory/stock': '3' });
  w.close();
  return data;
}

/** Every `tilstand table` command on `warehouse`, the writing ones and the reading ones. */
function tableCommands(warehouse: string, schema: string): string[][] {
  const W = ['--warehouse', warehouse];
  const t = 'site_north.stock';
  return [
    // write
    ['table', 'put', t, ...W],
    ['table', 'tag', 'create', t, 'mine', ...W],
    ['table', 'tag', 'delete', t, 'mine', ...W],
    ['table', 'compact', t, '--full', ...W],
    ['table', 'expire', t, ...W],
    ['table', 'rollback', t, '--to', '1', ...W],
    ['table', 'alter', t, '--set-option', 'snapshot.num-retained.min=3', ...W],
    ['table', 'create', 'site_north.extra', '--schema', schema, ...W],
    ['table', 'follow', t, '--consumer', 'c1', '--once', ...W],
    ['table', 'drop', t, ...W],
    // read
    ['table', 'list', ...W],
    ['table', 'scan', t, ...W],
    ['table', 'get', t, '--key', '{"item":"ITEM-1","location":"A-01"}', ...W],
    ['table', 'snapshots', t, ...W],
    ['table', 'tags', t, ...W],
    ['table', 'inspect', t, ...W],
    ['table', 'diff', t, '--from', '1', ...W],
  ];
}

function schemaFile(): string {
  const schema = join(dir, 'schema.json');
  writeFileSync(schema, JSON.stringify({ fields: [{ name: 'id', type: 'STRING NOT NULL' }], primaryKeys: ['id'] }));
  return schema;
}

describe('tilstand table on the warehouse of a data directory', () => {
  it('refuses every command, exit 2 with the words of the other commands, when the directory requires a newer program, and changes nothing', async () => {
    const data = await siteDir();
    writeFileSync(dataFormatPath(data), JSON.stringify(NEWER));
    const schema = schemaFile();
    // As given, with a trailing slash, and through a link to it (a path the operator keeps handy).
    const link = join(dir, 'wh-link');
    symlinkSync(join(data, 'warehouse'), link);
    const before = snapshot(data);
    const wrong: string[] = [];
    for (const warehouse of [join(data, 'warehouse'), `${join(data, 'warehouse')}/`, link]) {
      for (const c of tableCommands(warehouse, schema)) {
        const r = await run(c, '{"item":"ITEM-2","location":"A-01","on_hand":1,"inventory_seq":4}\n');
        const what = `${c.slice(1, c[1] === 'tag' ? 3 : 2).join(' ')} on ${warehouse}`;
        if (r.code !== 2 || !REFUSAL.test(r.err) || !r.err.startsWith(`tilstand: ${data} has data format`)) wrong.push(`${what}: exit ${r.code}, ${r.err.split('\n')[0]}`);
        if (!isDeepStrictEqual(snapshot(data), before)) wrong.push(`${what}: changed the directory`);
      }
    }
    expect(wrong).toEqual([]);
    // `--warehouse=<dir>` is the same option.
    const eq = await run(['table', 'list', `--warehouse=${join(data, 'warehouse')}`]);
    expect([eq.code, REFUSAL.test(eq.err)]).toEqual([2, true]);
    expect(snapshot(data)).toEqual(before);
  });

  it('a warehouse moved to another disk and linked back is the directory\'s too', async () => {
    const data = await siteDir();
    const moved = join(dir, 'big-disk', 'warehouse');
    mkdirSync(join(dir, 'big-disk'));
    // The real directory elsewhere, `<data>/warehouse` a link to it.
    renameSync(join(data, 'warehouse'), moved);
    symlinkSync(moved, join(data, 'warehouse'));
    writeFileSync(dataFormatPath(data), JSON.stringify(NEWER));
    const r = await run(['table', 'tag', 'create', 'site_north.stock', 'mine', '--warehouse', join(data, 'warehouse')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(REFUSAL);
    expect(existsSync(join(moved, 'site_north.db', 'stock', 'tag', 'tag-mine'))).toBe(false);
  });

  it('a damaged mark is refused as damage, exit 4, naming the file', async () => {
    const data = await siteDir();
    writeFileSync(dataFormatPath(data), '{"written": 1, "requires": "two"}');
    const before = snapshot(data);
    const r = await run(['table', 'tag', 'create', 'site_north.stock', 'mine', '--warehouse', join(data, 'warehouse')]);
    expect(r.code).toBe(4);
    expect(r.err).toContain(`tilstand: ${dataFormatPath(data)}: 'requires' is "two"; expected {"written": <n>, "requires": <n>, "by": "<program>"}`);
    expect(snapshot(data)).toEqual(before);
  });

  it('a directory this program may run on (marked, or from before the mark) is read and written as before, and not marked by it', async () => {
    const data = await siteDir();
    const W = ['--warehouse', join(data, 'warehouse')];
    expect((await run(['table', 'tag', 'create', 'site_north.stock', 'mine', ...W])).code).toBe(0);
    rmSync(dataFormatPath(data));
    const scan = await run(['table', 'scan', 'site_north.stock', ...W]);
    expect([scan.code, scan.err]).toEqual([0, '']);
    expect(scan.out).toContain('ITEM-1');
    expect(readDataFormat(data)).toBeUndefined();
  });

  it('a bare warehouse, with no data directory around it, is read as before', async () => {
    // Beside a newer program's mark, but not the data directory's warehouse (another name), and a
    // folder named warehouse with nothing of a data directory beside it.
    const data = await siteDir();
    writeFileSync(dataFormatPath(data), JSON.stringify(NEWER));
    const schema = schemaFile();
    for (const warehouse of [join(data, 'scratch'), join(dir, 'plain', 'warehouse')]) {
      const W = ['--warehouse', warehouse];
      const created = await run(['table', 'create', 'db.t', '--schema', schema, ...W]);
      expect([created.code, created.err], warehouse).toEqual([0, '']);
      expect((await run(['table', 'put', 'db.t', ...W], '{"id":"a"}\n')).code).toBe(0);
      const scan = await run(['table', 'scan', 'db.t', ...W]);
      expect(scan.code).toBe(0);
      expect(scan.out).toContain('"a"');
    }
  });
});

/**
 * `tilstand demo` in this process. The demo runs until SIGINT or SIGTERM; once it says it runs
 * (what it did before it read the mark), it is told to stop as Ctrl-C would, so a run that was not
 * refused ends, and the test says so instead of waiting.
 */
async function demo(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  let stopped = false;
  stdout.on('data', (d) => {
    out += d;
    if (!stopped && out.includes('publishing to')) {
      stopped = true;
      process.emit('SIGINT', 'SIGINT');
    }
  });
  stderr.on('data', (d) => (err += d));
  const code = await main(['demo', ...args], { stdin: Readable.from([]), stdout, stderr });
  return { code, out, err };
}

describe('tilstand demo on a data directory', () => {
  it('refuses a directory that requires a newer program, exit 2, before its modules start or anything changes', async () => {
    const data = await siteDir();
    writeFileSync(dataFormatPath(data), JSON.stringify(NEWER));
    const before = snapshot(data);
    const r = await demo(['--data', data, '--mqtt-url', 'mqtt://127.0.0.1:1']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(REFUSAL);
    expect(r.out).toBe('');
    expect(existsSync(join(data, 'demo'))).toBe(false);
    expect(snapshot(data)).toEqual(before);
  });

  it('refuses a damaged mark as damage, exit 4', async () => {
    const data = await siteDir();
    writeFileSync(dataFormatPath(data), '[1, 1]');
    const r = await demo(['--data', data, '--mqtt-url', 'mqtt://127.0.0.1:1']);
    expect(r.code).toBe(4);
    expect(r.err).toContain(`tilstand: ${dataFormatPath(data)}: not a JSON object; expected`);
    expect(existsSync(join(data, 'demo'))).toBe(false);
  });
});
