// `--access-key`/`--secret-key` with a directory HQ: a directory takes no keys (it is read and
// written with the user's own file permissions), and the keys were ignored without a word — the
// person giving them believed the command used them (a key meant to limit what a site may write,
// a read-only key for an analyst). Refused now, exit 2, naming the flags given and why, before HQ
// or the data directory is touched: by every hq command, `sync now` (also when the directory
// comes from config.json's hq.target) and `restore`. The environment's keys
// (TILSTAND_HQ_ACCESS_KEY…) are no flag anyone typed for this command, and stay unread.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { makeSite, tempDir } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runHq } from './hq.ts';
import { runRestore, runSync } from './sync.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-keys-with-directory-'));
const cleanup: string[] = [dir];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const REFUSED = /^tilstand: option '--access-key', '--secret-key': .*is the directory .*, which takes no S3 keys .*; leave (it|them) out, or give the s3:\/\/… target (it is|they are) for\n$/;

describe('S3 keys given with a directory HQ', () => {
  it('are refused by the hq commands, exit 2, naming the flags', async () => {
    const fx = makeSite('k1', { rows: 5 });
    const hqDir = tempDir('hq');
    cleanup.push(fx.data, hqDir);
    await shipToDirectory(fx.data, fx.site, hqDir);
    for (const argv of [
      ['sites'],
      ['tables', '--site', 'k1'],
      ['scan', '--site', 'k1', '--table', 'stock'],
      ['pull', '--site', 'k1', '--out', join(dir, 'pulled')],
    ]) {
      for (const keys of [['--access-key', 'AKIA1', '--secret-key', 's3cr3t'], ['--secret-key', 's3cr3t']]) {
        const r = await runCli(runHq, [...argv, '--hq', hqDir, ...keys]);
        expect([r.code, r.out], `${argv.join(' ')} ${keys.join(' ')}`).toEqual([2, '']);
        expect(r.err, argv.join(' ')).toMatch(keys.length === 4 ? REFUSED : /^tilstand: option '--secret-key': .*which takes no S3 keys.*; leave it out, or give the s3:\/\/… target it is for\n$/);
        expect(r.err).toContain(hqDir);
        expect(r.err).not.toContain('s3cr3t');
      }
      // Without keys the command runs.
      expect((await runCli(runHq, [...argv, '--hq', hqDir])).code, argv.join(' ')).toBe(0);
    }
    expect(existsSync(join(dir, 'pulled', 'site_k1.db', 'stock', 'schema')), 'only the run without keys pulled').toBe(true);
  }, 60_000);

  it('are refused by sync now (the directory from --hq or from config.json) and restore, nothing written', async () => {
    const fx = makeSite('k2', { rows: 5 });
    const hqDir = tempDir('hq');
    cleanup.push(fx.data, hqDir);
    writeFileSync(join(fx.data, 'config.json'), JSON.stringify({ format: 1, site: 'k2', hq: { target: hqDir } }));
    for (const args of [['--hq', hqDir], []]) {
      const r = await runCli(runSync, ['now', '--data', fx.data, ...args, '--access-key', 'AKIA1', '--secret-key', 's3cr3t']);
      expect([r.code, r.out], args.join(' ')).toEqual([2, '']);
      expect(r.err, args.join(' ')).toMatch(REFUSED);
      expect(r.err).toContain(args.length > 0 ? "option '--hq'" : `hq.target in ${join(fx.data, 'config.json')}`);
    }
    expect(existsSync(join(fx.data, 'site.db')), 'a refused sync now made the outbox').toBe(false);
    expect(readdirSync(hqDir)).toEqual([]);
    const fresh = join(dir, 'restored');
    mkdirSync(join(hqDir, 'site_k2.db'));
    const r = await runCli(runRestore, ['--data', fresh, '--hq', hqDir, '--site', 'k2', '--access-key', 'AKIA1']);
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err).toMatch(/^tilstand: option '--access-key': .*which takes no S3 keys.*; leave it out, or give the s3:\/\/… target it is for\n$/);
    expect(existsSync(fresh), 'a refused restore made the data directory').toBe(false);
  }, 60_000);
});
