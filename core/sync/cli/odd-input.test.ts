// `tilstand hq …` and `tilstand sync …` on odd input:
//   - `hq sites --hq <a folder that is no HQ>` (a site's data directory, a home folder) said "no site
//     has shipped to … yet", exit 0, as for an empty HQ: a mistyped folder read as an HQ nobody
//     shipped to. Now exit 2 naming what is there; an empty HQ (or one holding only what a disk or
//     share puts at its root: lost+found, dot files) still says no site has shipped.
//   - `sync --site X now` (a flag of no sync command before the command) said "unknown sync command
//     'X'": the flag's value named, not the flag. `sync --data now` said "sync needs a command".
//   - `sync now --hq <a link to <data>/warehouse>` was not refused: the inside-the-data-directory
//     check compared the paths as written, not where they lead.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { makeSite } from '../test-support/site-fixture.ts';
import { runHq } from './hq.ts';
import { runRestore, runSync } from './sync.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-odd-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const hq = (...args: string[]) => runCli((argv, io) => runHq(argv, io), args);
const sync = (...args: string[]) => runCli((argv, io) => runSync(argv, io), args);

describe('hq on a folder that is not an HQ', () => {
  it('is refused, exit 2, naming what the folder holds; an empty HQ still says no site has shipped', async () => {
    const notHq = join(dir, 'data');
    mkdirSync(join(notHq, 'warehouse'), { recursive: true });
    writeFileSync(join(notHq, 'config.json'), '{"site": "7"}\n');
    writeFileSync(join(notHq, 'site.db'), '');
    const r = await hq('sites', '--hq', notHq);
    expect([r.code, r.out, r.err]).toEqual([2, '', `tilstand: option '--hq': ${notHq} is not an HQ warehouse: it holds no site's folder (site_<id>.db) but config.json, site.db, warehouse (check --hq)\n`]);
    expect((await hq('sites', '--hq', notHq, '--json')).code).toBe(2);
    // A command with --site says the same, not "HQ has no site 7 (… no site has shipped …)".
    const t = await hq('tables', '--hq', notHq, '--site', '7');
    expect([t.code, t.err]).toEqual([2, `tilstand: option '--hq': ${notHq} is not an HQ warehouse: it holds no site's folder (site_<id>.db) but config.json, site.db, warehouse (check --hq)\n`]);

    // Many entries: a few named; a name's control characters escaped.
    const home = join(dir, 'home');
    mkdirSync(home);
    for (const n of ['a', 'b', 'c\x1b[2J', 'd', 'e']) writeFileSync(join(home, n), '');
    const h = await hq('sites', '--hq', home);
    expect([h.code, h.err]).toEqual([2, `tilstand: option '--hq': ${home} is not an HQ warehouse: it holds no site's folder (site_<id>.db) but a, b, c\\u001b[2J and 2 more (check --hq)\n`]);

    // An empty HQ, or one with only a disk's or a share's own entries: no site has shipped.
    const empty = join(dir, 'hq');
    mkdirSync(join(empty, 'lost+found'), { recursive: true });
    mkdirSync(join(empty, 'System Volume Information'));
    mkdirSync(join(empty, '#recycle'));
    mkdirSync(join(empty, '@eaDir'));
    writeFileSync(join(empty, '.DS_Store'), '');
    const e = await hq('sites', '--hq', empty);
    expect([e.code, e.out, e.err]).toEqual([0, '', `tilstand: no site has shipped to ${empty} yet\n`]);
    const et = await hq('tables', '--hq', empty, '--site', '7');
    expect([et.code, et.err]).toEqual([1, `tilstand: HQ has no site 7 (check --site; no site has shipped to ${empty} yet)\n`]);
  });
});

describe('sync with a flag where the command is expected', () => {
  it('names the flag, not its value', async () => {
    const r = await sync('--site', 'X', 'now');
    expect(r.code).toBe(2);
    expect(r.err.split('\n')[0]).toBe("tilstand: sync takes no option '--site' ('X' after it was read as the command)");
    const h = await hq('--sit', '7', 'tables');
    expect(h.code).toBe(2);
    expect(h.err.split('\n')[0]).toBe("tilstand: hq takes no option '--sit' ('7' after it was read as the command)");
    // The word found after the unknown option, though the same word came earlier as a value.
    const twice = await sync('--data', 'X', '--sit', 'X');
    expect(twice.err.split('\n')[0]).toBe("tilstand: sync takes no option '--sit' ('X' after it was read as the command)");
    // A string option with its value missing took the command as its value.
    const d = await sync('--data', 'now');
    expect(d.code).toBe(2);
    expect(d.err.split('\n')[0]).toBe("tilstand: sync needs a command ('now' was read as the value of '--data')");
  });
});

describe('sync now --hq <a link to a folder inside the data directory>', () => {
  it('is refused as the folder itself is', async () => {
    const fx = makeSite('42', { rows: 5 });
    try {
      writeFileSync(join(fx.data, 'config.json'), JSON.stringify({ format: 1, site: '42', hq: { target: null } }));
      const link = join(dir, 'hq-link');
      symlinkSync(join(fx.data, 'warehouse'), link);
      const r = await sync('now', '--data', fx.data, '--hq', link);
      expect([r.code, r.out, r.err]).toEqual([2, '', `tilstand: option '--hq': ${link} is inside the site's data directory ${fx.data}; HQ is a directory outside it\n`]);
      // A folder below the link, not there yet, too.
      const below = await sync('now', '--data', fx.data, '--hq', join(link, 'hq'));
      expect([below.code, below.out]).toEqual([2, '']);
      expect(readdirSync(join(fx.data, 'warehouse'))).toEqual(['site_42.db']);
      // The data directory given through a link, HQ as its real path.
      const dataLink = join(dir, 'data-link');
      symlinkSync(fx.data, dataLink);
      const viaLink = await sync('now', '--data', dataLink, '--hq', join(fx.data, 'warehouse'));
      expect([viaLink.code, viaLink.out]).toEqual([2, '']);
      // <data>/demo-hq is allowed as written, but not when it is a link into the warehouse.
      symlinkSync(join(fx.data, 'warehouse'), join(fx.data, 'demo-hq'));
      const demoLink = await runCli((argv, io) => runSync(argv, io, { hqFolderInData: 'demo-hq' }), ['now', '--data', fx.data, '--hq', join(fx.data, 'demo-hq')]);
      expect([demoLink.code, demoLink.out]).toEqual([2, '']);
    } finally {
      rmSync(fx.data, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('hq pull --out <a link to HQ or into it>', () => {
  it('is refused as HQ itself is', async () => {
    const root = join(dir, 'pull-hq');
    mkdirSync(join(root, 'site_7.db'), { recursive: true });
    const link = join(dir, 'pull-link');
    symlinkSync(root, link);
    for (const out of [link, join(link, 'copy')]) {
      const r = await hq('pull', '--hq', root, '--site', '7', '--out', out);
      expect([r.code, r.out], out).toEqual([2, '']);
      expect(r.err, out).toMatch(/^tilstand: option '--out': .* (is the HQ directory itself|is inside the HQ directory .*); pull into a warehouse outside it\n$/);
    }
    expect(readdirSync(root)).toEqual(['site_7.db']);
  });
});

describe('restore --hq <the data directory\'s own warehouse>', () => {
  it('is refused, exit 2, and the tables stay (with --force it deleted them, then failed "no tables")', async () => {
    const fx = makeSite('7', { rows: 5 });
    try {
      const link = join(dir, 'restore-link');
      symlinkSync(join(fx.data, 'warehouse'), link);
      for (const hqDir of [join(fx.data, 'warehouse'), link]) {
        const r = await runCli((argv, io) => runRestore(argv, io), ['--data', fx.data, '--hq', hqDir, '--site', '7', '--force']);
        expect([r.code, r.out], hqDir).toEqual([2, '']);
        expect(r.err, hqDir).toBe(`tilstand: option '--hq': HQ's copy of site 7 (${join(hqDir, 'site_7.db')}) is where the restore writes the site's tables (${join(fx.data, 'warehouse', 'site_7.db')}); restore from HQ's folder, not from a copy inside the data directory\n`);
        expect(readdirSync(join(fx.data, 'warehouse', 'site_7.db')).sort(), hqDir).toEqual(['approval_inbox', 'decision_log', 'stock']);
      }
    } finally {
      rmSync(fx.data, { recursive: true, force: true });
    }
  }, 60_000);
});
