// A newcomer's walk through `tilstand sync …` and `tilstand hq …`:
//   - `sync status|now` showed `--data <dir>` as required; it defaults to ./tilstand-data;
//   - on a folder whose config.json is not Tilstand's, `sync status` said "site.db does not exist"
//     (exit 1) and `sync now` on one that names a site made site.db there (exit 0): refused, exit 2,
//     naming the problem, nothing made (the site's dispatcher passes config.json's own check);
//   - `sync --data X status` and `hq --hq X sites` took the flag for the command (exit 2,
//     "unknown sync command '--data'");
//   - `sync now --hq <a file>` switched the outbox to it, dropped the steps sent to the old HQ and
//     exited 5 after its rounds; `--hq` the data directory itself or a folder in it (its warehouse)
//     shipped the site's tables into itself, exit 0.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { makeSite } from '../test-support/site-fixture.ts';
import { runHq } from './hq.ts';
import { runSync, syncSubcommand, syncUsage } from './sync.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-cli-walk-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sync = (...args: string[]) => runCli((argv, io) => runSync(argv, io), args);

describe('sync usage', () => {
  it('shows --data as optional for status and now (it defaults to ./tilstand-data)', () => {
    for (const c of ['status', 'now']) {
      const line = syncUsage.find((l) => l.startsWith(`  tilstand sync ${c} `));
      expect(line, c).toContain(`tilstand sync ${c} [--data <dir>]`);
    }
  });
});

describe("sync on a folder whose config.json is not Tilstand's", () => {
  const other = join(dir, 'other-app');
  mkdirSync(other);
  writeFileSync(join(other, 'config.json'), '{"name": "other app", "version": 3}\n');
  // One that names a site but is still not Tilstand's: only the site's own check tells.
  const named = join(dir, 'named-app');
  mkdirSync(named);
  writeFileSync(join(named, 'config.json'), '{"site": "s1", "name": "other app"}\n');
  const hq = join(dir, 'hq-foreign');

  it('is refused, exit 2, and nothing is made there', async () => {
    for (const sub of ['status', 'now']) {
      const r = await sync(sub, '--data', other, ...(sub === 'now' ? ['--hq', hq] : []));
      expect([r.code, r.out, r.err], sub).toEqual([2, '', `tilstand: ${join(other, 'config.json')} names no site\n`]);
    }
    expect(readdirSync(other)).toEqual(['config.json']);
  });

  it("is refused with the site's own check (checkConfig), before anything is made", async () => {
    // As core/site's readConfig throws it (a ConfigError, no CliError): exit 2 all the same.
    const checkConfig = (data: string) => {
      throw new Error(`config name: unknown key (in ${data})`);
    };
    for (const sub of ['status', 'now']) {
      const r = await runCli((argv, io) => runSync(argv, io, { checkConfig }), [sub, '--data', named, ...(sub === 'now' ? ['--hq', hq] : [])]);
      expect([r.code, r.out, r.err], sub).toEqual([2, '', `tilstand: config name: unknown key (in ${named})\n`]);
    }
    expect(readdirSync(named)).toEqual(['config.json']);
    expect(existsSync(hq)).toBe(false);
  });

  it('a folder without config.json is still "not found" (exit 1), the site\'s check not asked', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const checkConfig = () => {
      throw new Error('config.json does not exist');
    };
    const r = await runCli((argv, io) => runSync(argv, io, { checkConfig }), ['now', '--data', empty, '--hq', hq]);
    expect(r.code).toBe(1);
    expect(r.err).not.toContain('config.json does not exist');
    expect(readdirSync(empty)).toEqual([]);
  });
});

describe('a subcommand after the flags', () => {
  it('sync --data X status reads X', async () => {
    const fx = makeSite('41', { rows: 5 });
    const hqDir = join(dir, 'hq-41');
    try {
      const now = await sync('--data', fx.data, '--hq', hqDir, 'now', '--json');
      expect([now.code, now.err]).toEqual([0, '']);
      const status = await sync('--json', '--data', fx.data, 'status');
      expect([status.code, status.err]).toEqual([0, '']);
      expect(JSON.parse(status.out)).toMatchObject({ pendingItems: 0 });
      const sites = await runCli(runHq, ['--hq', hqDir, 'sites', '--json']);
      expect([sites.code, sites.err]).toEqual([0, '']);
      expect(JSON.parse(sites.out)).toMatchObject([{ site: '41' }]);
      const tables = await runCli(runHq, ['--hq', hqDir, '--site', '41', 'tables']);
      expect([tables.code, tables.err]).toEqual([0, '']);
      expect(tables.out).toContain('stock');
    } finally {
      rmSync(fx.data, { recursive: true, force: true });
    }
  }, 60_000);

  it('syncSubcommand skips the values of string flags only', () => {
    expect(syncSubcommand(['--data', 'status', 'now'])).toEqual(['now', ['--data', 'status']]);
    expect(syncSubcommand(['--json', 'status', '--data', 'x'])).toEqual(['status', ['--json', '--data', 'x']]);
    expect(syncSubcommand(['--data=x', 'status'])).toEqual(['status', ['--data=x']]);
    expect(syncSubcommand(['--data', 'x'])).toEqual([undefined, ['--data', 'x']]);
  });

  it('still refuses what it refused, and --help anywhere asks for the usage', async () => {
    for (const [args, code, err] of [
      [['--data', dir], 2, /^tilstand: sync needs a command\n/],
      [['--data', dir, 'walk'], 2, /^tilstand: unknown sync command 'walk'\n/],
      [['--bogus', 'status'], 2, /^tilstand: unknown option '--bogus' for 'sync status'/],
      [['--data', dir, 'status', 'x'], 2, /^tilstand: 'sync status': unexpected argument 'x'\n$/],
      [['--help'], 0, /^$/],
      [['--data', dir, '--help'], 0, /^$/],
    ] as const) {
      const r = await sync(...args);
      expect([r.code, r.err], args.join(' ')).toEqual([code, expect.stringMatching(err)]);
    }
    for (const [args, code, err] of [
      [['--hq', dir], 2, /^tilstand: hq needs a command\n/],
      [['--hq', dir, 'walk'], 2, /^tilstand: unknown hq command 'walk'\n/],
      [['--hq', dir, '--help'], 0, /^$/],
      [['--hq', dir, 'sites', 'x'], 2, /^tilstand: 'hq sites': unexpected argument 'x'\n$/],
    ] as const) {
      const r = await runCli(runHq, [...args]);
      expect([r.code, r.err], args.join(' ')).toEqual([code, expect.stringMatching(err)]);
      // Asked for, the usage alone: "hq needs a command" led it, as if the request were an error.
      if (code === 0) expect(r.out, args.join(' ')).toMatch(/^usage:\n/);
    }
    for (const args of [['--help'], ['-h'], ['help']]) {
      const r = await runCli(runHq, args);
      expect([r.code, r.out.split('\n')[0], r.err], args.join(' ')).toEqual([0, 'usage:', '']);
    }
  });
});

describe('sync now --hq that cannot be HQ', () => {
  it('a file, the data directory itself or a folder in it: exit 2 naming --hq, the outbox untouched', async () => {
    const fx = makeSite('42', { rows: 5 });
    const hqDir = join(dir, 'hq-42');
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    try {
      const first = await sync('now', '--data', fx.data, '--hq', hqDir, '--json');
      expect([first.code, first.err]).toEqual([0, '']);
      const cases: [string, string][] = [
        [file, `tilstand: option '--hq': ${file} is a file; expected a directory or s3://bucket/prefix?endpoint=…\n`],
        [join(file, 'hq'), `tilstand: option '--hq': ${file} is a file; expected a directory or s3://bucket/prefix?endpoint=…\n`],
        [fx.data, `tilstand: option '--hq': ${fx.data} is the site's data directory itself; HQ is a directory outside it\n`],
        [join(fx.data, 'warehouse'), `tilstand: option '--hq': ${join(fx.data, 'warehouse')} is inside the site's data directory ${fx.data}; HQ is a directory outside it\n`],
      ];
      for (const [hq, err] of cases) {
        const r = await sync('now', '--data', fx.data, '--hq', hq);
        expect([r.code, r.out, r.err], hq).toEqual([2, '', err]);
      }
      // From config.json, not typed here: named as such.
      const config = join(fx.data, 'config.json');
      writeFileSync(config, JSON.stringify({ format: 1, site: '42', hq: { target: join(fx.data, 'warehouse') } }));
      const fromConfig = await sync('now', '--data', fx.data);
      expect([fromConfig.code, fromConfig.out, fromConfig.err]).toEqual([2, '', `tilstand: hq.target in ${config}: ${join(fx.data, 'warehouse')} is inside the site's data directory ${fx.data}; HQ is a directory outside it\n`]);
      writeFileSync(config, JSON.stringify({ format: 1, site: '42', hq: { target: file } }));
      const fileInConfig = await sync('now', '--data', fx.data);
      expect([fileInConfig.code, fileInConfig.out, fileInConfig.err]).toEqual([2, '', `tilstand: hq.target in ${config}: ${file} is a file; expected a directory or s3://bucket/prefix?endpoint=…\n`]);
      writeFileSync(config, JSON.stringify({ format: 1, site: '42', hq: { target: null } }));
      expect(readdirSync(join(fx.data, 'warehouse'))).toEqual(['site_42.db']);
      expect(readdirSync(join(fx.data, 'warehouse', 'site_42.db')).sort()).not.toContain('.tilstand');
      // Still sending to the HQ it had: nothing was dropped.
      const again = await sync('now', '--data', fx.data, '--hq', hqDir);
      expect([again.code, again.err]).toEqual([0, '']);
      expect(again.out).not.toContain('the target changed');
    } finally {
      rmSync(fx.data, { recursive: true, force: true });
    }
  }, 60_000);
});
