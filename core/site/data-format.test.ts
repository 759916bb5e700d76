// The data directory's format mark (data-format.ts; DESIGN.md "Data format"): a directory that
// requires a newer program is refused by start and by every command that opens it, before anything
// in it changes; a directory from before the mark is marked by its first start, and the mark
// survives restarts; init and restore write it.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATA_FORMAT, DataFormatError, dataFormatPath, programVersion, readDataFormat } from './data-format.ts';
import { Catalog } from '../lsm/index.ts';
import { initDataDir } from './init.ts';
import { FirstRunBackend } from './first-run.ts';
import { SiteApiError } from './api.ts';
import { Site } from './site.ts';
import { runMain as run } from './cli/test-support.ts';

const FAST = { N: 1024, r: 8, p: 1 };
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-data-format-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Writes the mark file as another version would have left it (undefined: removes it). */
function setMark(data: string, mark: Record<string, unknown> | undefined): void {
  if (mark === undefined) rmSync(dataFormatPath(data));
  else writeFileSync(dataFormatPath(data), JSON.stringify(mark));
}

const markOf = (data: string) => readDataFormat(data);

/** Every file and folder under `root`: its size, mtime and content hash (folders: mtime and names). */
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

const NEWER = { written: DATA_FORMAT + 1, requires: DATA_FORMAT + 1, by: 'tilstand 9.9.9' };
const REFUSAL = new RegExp(`has data format ${DATA_FORMAT + 1} \\(raised by tilstand 9\\.9\\.9\\) and requires a program that knows data format ${DATA_FORMAT + 1} or later; this one \\(${programVersion().replace(/[.()]/g, '\\$&')}\\) knows data format ${DATA_FORMAT}`);

describe('the data format mark', () => {
  it('init writes this version\'s mark: the format it writes, the one it requires, and who wrote it', async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north', scrypt: FAST });
    expect(markOf(data)).toEqual({ written: DATA_FORMAT, requires: 1, by: programVersion() });
    expect(programVersion()).toMatch(/^tilstand \d+\.\d+\.\d+/);
  });

  it('a directory from before the mark is marked at its first start, and the mark survives restarts', async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north', scrypt: FAST });
    setMark(data, undefined);
    expect(markOf(data)).toBeUndefined();
    // Read-only commands pass an unmarked directory and do not mark it (they change nothing).
    expect((await run(['status', '--data', data])).code).toBe(0);
    expect(markOf(data)).toBeUndefined();
    for (let i = 0; i < 2; i++) {
      const site = await Site.start({ data, httpPort: 0, mqttPort: 0, ui: false, agentTimer: false });
      await site.stop();
      expect(markOf(data), `after start ${i + 1}`).toEqual({ written: DATA_FORMAT, requires: 1, by: programVersion() });
    }
  });

  it('a newer program\'s compatible mark (written higher, requires no more than this one knows) runs, and is never lowered', async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north', scrypt: FAST });
    setMark(data, { written: DATA_FORMAT + 2, requires: DATA_FORMAT, by: 'tilstand 9.9.9', future: { kept: true } });
    const site = await Site.start({ data, httpPort: 0, mqttPort: 0, ui: false, agentTimer: false });
    await site.stop();
    expect((await run(['users', 'add', '--data', data, '--name', 'ann', '--role', 'viewer', '--pin', '4711'])).code).toBe(0);
    expect(markOf(data)).toMatchObject({ written: DATA_FORMAT + 2, requires: DATA_FORMAT, by: 'tilstand 9.9.9' });
    expect(JSON.parse(readFileSync(dataFormatPath(data), 'utf8'))).toMatchObject({ future: { kept: true } });
  });

  it('start refuses a directory that requires a newer program, exit 2, naming both formats and the way back, and changes nothing', async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north', scrypt: FAST });
    // A config section this version does not know, as a newer version may have written: the
    // refusal names the format, not the key (whose advice, "remove it", would be wrong here).
    const cfg = JSON.parse(readFileSync(join(data, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(data, 'config.json'), JSON.stringify({ ...cfg, futureSection: { on: true } }, null, 2));
    setMark(data, NEWER);
    const before = snapshot(data);
    const r = await run(['start', '--headless', '--data', data, '--http-port', '0', '--mqtt-port', '0']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(REFUSAL);
    expect(r.err).toContain('restore the copy of the directory taken before the upgrade (docs/operations.md, "Upgrading")');
    expect(r.err).not.toContain('futureSection');
    expect(snapshot(data)).toEqual(before);
    // Site.start itself (the Electron main's start path) refuses the same way.
    await expect(Site.start({ data, httpPort: 0, mqttPort: 0, ui: false, agentTimer: false })).rejects.toThrow(DataFormatError);
    expect(snapshot(data)).toEqual(before);
  });

  it('every command that opens the directory refuses it before anything changes, the writing ones and the reading ones', async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north', scrypt: FAST, admin: { name: 'boss', pin: '4711' } });
    // A contract `contracts add` would register: a seed contract under a new name.
    const contract = join(dir, 'contract.json');
    const seed = JSON.parse(readFileSync(join(data, 'contracts', 'inventory.stock', 'v1.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(contract, JSON.stringify({ ...seed, name: 'inventory.extra' }));
    const hq = join(dir, 'hq');
    mkdirSync(hq);
    setMark(data, NEWER);
    const before = snapshot(data);
    const commands: string[][] = [
      // write
      ['users', 'add', '--data', data, '--name', 'ann', '--role', 'viewer', '--pin', '4711'],
      ['users', 'reset', '--data', data, '--name', 'boss', '--pin', '8642'],
      ['users', 'disable', '--data', data, '--name', 'boss'],
      ['users', 'enable', '--data', data, '--name', 'boss'],
      ['modules', 'password', '--data', data, '--module', 'inventory'],
      ['contracts', 'add', '--data', data, '--file', contract],
      ['deadletters', 'replay', '--data', data],
      ['deadletters', 'dismiss', '--data', data, '--id', '1', '--user', 'boss', '--pin', '4711', '--note', 'n'],
      ['decide', 'p-1', 'approve', '--data', data, '--user', 'boss', '--pin', '4711'],
      ['agent', 'run', '--data', data],
      ['config', 'reload', '--data', data],
      ['sync', 'now', '--data', data, '--hq', hq],
      ['restore', '--data', data, '--hq', hq, '--site', 'north', '--force'],
      ['replay', 'export', '--data', data, '--tag', 'f1', '--until', 'now', '--out', join(dir, 'fixture')],
      // read
      ['status', '--data', data],
      ['config', 'check', '--data', data],
      ['config', 'changes', '--data', data],
      ['users', 'list', '--data', data],
      ['modules', 'list', '--data', data],
      ['contracts', 'list', '--data', data],
      ['deadletters', 'list', '--data', data],
      ['proposals', '--data', data],
      ['evidence', 'p-1', '--data', data],
      ['sync', 'status', '--data', data],
    ];
    // Each command on its own: one refused wrongly does not hide the others.
    const wrong: string[] = [];
    for (const c of commands) {
      const pre = snapshot(data);
      const r = await run(c);
      if (r.code !== 2 || !REFUSAL.test(r.err)) wrong.push(`${c.slice(0, 2).join(' ')}: exit ${r.code}, ${r.err.split('\n')[0]}`);
      if (!isDeepStrictEqual(snapshot(data), pre)) wrong.push(`${c.slice(0, 2).join(' ')}: changed the directory`);
    }
    expect(wrong).toEqual([]);
    expect(snapshot(data)).toEqual(before);
    expect(existsSync(join(dir, 'fixture'))).toBe(false);
    expect(readdirSync(hq)).toEqual([]);
  });

  it('init refuses a directory a newer version marked and left without config.json (its restore, its init stopped half-way), creating nothing', async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north', scrypt: FAST });
    for (const n of readdirSync(data)) if (n !== 'site.db' && n !== 'data-format.json') rmSync(join(data, n), { recursive: true, force: true });
    setMark(data, NEWER);
    const before = snapshot(data);
    const r = await run(['init', '--data', data, '--site', 'north']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(REFUSAL);
    expect(snapshot(data)).toEqual(before);
  });

  it('a directory a newer version restored (no config.json yet) is refused before the first-run screen, and by that screen', async () => {
    const data = join(dir, 'r');
    mkdirSync(data);
    setMark(data, NEWER);
    const before = snapshot(data);
    const r = await run(['start', '--headless', '--data', data, '--http-port', '0']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(REFUSAL);
    // The Electron app's first run (and a screen the CLI's opened earlier) asks FirstRunBackend.
    const first = new FirstRunBackend(data);
    const e = await first.call('initSite', { siteId: 'north', adminName: 'boss', adminPin: '4711' }, { user: null } as never).then(
      () => new Error('initialized'),
      (err: Error) => err,
    );
    expect(e).toBeInstanceOf(SiteApiError);
    expect((e as SiteApiError).kind).toBe('conflict');
    expect(e.message).toMatch(REFUSAL);
    expect(snapshot(data)).toEqual(before);
  });

  it('a damaged mark is refused as damage (exit 4), naming the file, the key and what was expected', async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'north', scrypt: FAST });
    for (const [text, why] of [
      ['{"written": 1, "requires": "two"}', `'requires' is "two"`],
      ['{"written": 1}', `'requires' is missing`],
      ['{"written": 0, "requires": 1}', `'written' is 0`],
      ['[1, 1]', 'not a JSON object'],
      ['{"written": 1, "requ', 'not JSON'],
    ] as const) {
      writeFileSync(dataFormatPath(data), text);
      const before = snapshot(data);
      const r = await run(['users', 'add', '--data', data, '--name', 'ann', '--role', 'viewer', '--pin', '4711']);
      expect(r.code, text).toBe(4);
      expect(r.err, text).toContain(`${dataFormatPath(data)}: ${why}; expected {"written": <n>, "requires": <n>, "by": "<program>"} with whole numbers from 1`);
      expect(snapshot(data), text).toEqual(before);
    }
  });

  it('restore writes the mark into the directory it rebuilds', async () => {
    // A site that shipped its state to a directory "HQ".
    const hq = join(dir, 'hq');
    const src = join(dir, 'src');
    await initDataDir({ data: src, site: 'north', scrypt: FAST });
    const stock = new Catalog(join(src, 'warehouse')).getTable({ database: 'site_north', table: 'stock' });
    const w = stock.newWriter();
    w.writeRecord({ item: 'ITEM-1', location: 'A-01', on_hand: 7, inventory_seq: 3n });
    w.commit({ 'tilstand.hwm.inventory/stock': '3' });
    w.close();
    const sync = await run(['sync', 'now', '--data', src, '--hq', hq]);
    expect(sync.code, sync.err).toBe(0);
    const data = join(dir, 'restored');
    const r = await run(['restore', '--data', data, '--hq', hq, '--site', 'north']);
    expect(r.code, r.err).toBe(0);
    expect(markOf(data)).toEqual({ written: DATA_FORMAT, requires: 1, by: programVersion() });
    // And init, on the replacement PC, goes on from there.
    expect((await run(['init', '--data', data, '--site', 'north'])).code).toBe(0);
    expect(markOf(data)).toEqual({ written: DATA_FORMAT, requires: 1, by: programVersion() });
  });
});
