// Keys written into an s3:// target (`s3://KEY:SECRET@bucket/prefix`) were ignored: the bucket is
// the URL's host name, and the keys come from the environment or --access-key/--secret-key. The
// person who wrote them got requests with other keys or none (access denied) and their secret sat
// in config.json or the shell's history. Such a target is refused, saying where keys go, without
// echoing the secret — by every reader of a target's text: openTarget, targetProblem (config.json's
// `hq.target`: `config check`, start and reload), the hq and sync commands, the site's start.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../lsm/testing/cli.ts';
import { runHq } from './cli/hq.ts';
import { runRestore, runSync } from './cli/sync.ts';
import { openTarget, shownTarget, targetProblem } from './targets/open.ts';
import { tempDir } from './test-support/site-fixture.ts';

const dir = tempDir('user-info');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEYS_GO = 'set TILSTAND_HQ_ACCESS_KEY and TILSTAND_HQ_SECRET_KEY in the environment (the hq, sync and restore commands also take --access-key and --secret-key)';
const refusal = (shown: string) => `'${shown}' carries keys in the URL, which are not read from there: take them out of the target and ${KEYS_GO}`;
const keys = { accessKey: 'a', secretKey: 'b' };

/** `tilstand …` as a person runs it, in a child process (core/site's commands, which this folder may not import). */
async function tilstand(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const env = { ...process.env };
  delete env.TILSTAND_HQ_ACCESS_KEY;
  delete env.TILSTAND_HQ_SECRET_KEY;
  const child = spawn(process.execPath, [resolve('bin/tilstand.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((r) => child.on('close', r));
  clearTimeout(timer);
  return { code, out, err };
}

describe('an s3:// target with keys in it', () => {
  it('is refused by openTarget and targetProblem, naming where keys go and never the secret', () => {
    const cases: [string, string][] = [
      ['s3://AKIAKEY:s3cretKey@hq/sites/?endpoint=http://127.0.0.1:9000', 's3://…@hq/sites/'],
      ['s3://AKIAKEY@hq/sites', 's3://…@hq/sites'],
      ['s3://:s3cretKey@hq/', 's3://…@hq/'],
    ];
    for (const [text, shown] of cases) {
      // Also with keys given the proper way: the ones in the URL are a mistake either way.
      expect(() => openTarget(text, keys), text).toThrow(refusal(shown));
      expect(targetProblem(text), text).toBe(refusal(shown));
      expect(targetProblem(text, { relative: false }), text).toBe(refusal(shown));
      expect(shownTarget(text)).toBe(shown);
    }
  });

  it('a secret with a `/` (it ends the authority early) is not echoed either, parsed or not', () => {
    // Does not parse (port "ab/cd…" is no number): named as no s3:// URL, the secret blanked (the old
    // pattern stopped at the `/` and printed the whole text).
    const broken = 's3://AKIAKEY:ab/cdSECRET@hq/sites';
    expect(targetProblem(broken)).toBe("'s3://…@hq/sites' is not an s3://bucket/prefix URL");
    expect(shownTarget(broken)).toBe('s3://…@hq/sites');
    // Parses as host AKIAKEY, port 12, prefix "xSECRET@hq/…": refused for its port (was: bucket
    // AKIAKEY, the port dropped, the rest of the secret shown as the prefix).
    const cut = 's3://AKIAKEY:12/xSECRET@hq/sites';
    const p = targetProblem(cut);
    expect(p).toBe(`'s3://…@hq/sites' is not an s3://bucket/prefix URL: a bucket has no port (the server goes in endpoint=http://host:port; keys: ${KEYS_GO})`);
    expect(() => openTarget(cut, keys)).toThrow(p!);
    expect(shownTarget(cut)).not.toContain('SECRET');
    // A port on the bucket is the server's, which was dropped and the request sent to AWS.
    expect(targetProblem('s3://hq:9000/sites')).toMatch(/^'s3:\/\/hq:9000\/sites' is not an s3:\/\/bucket\/prefix URL: a bucket has no port/);
    for (const ok of ['s3://hq/', 's3://hq/sites?endpoint=http://127.0.0.1:9000&region=eu-north-1']) expect(targetProblem(ok), ok).toBeUndefined();
  });

  it('sync now, restore and the hq commands refuse it, exit 2, before HQ or the outbox is touched', async () => {
    const data = join(dir, 'site');
    mkdirSync(data);
    writeFileSync(join(data, 'config.json'), JSON.stringify({ format: 1, site: '8', hq: { target: null } }));
    const text = 's3://AKIAKEY:s3cretKey@hq/sites/';
    const expected = `tilstand: ${refusal('s3://…@hq/sites/')}\n`;
    const now = await runCli(runSync, ['now', '--data', data, '--hq', text, '--access-key', 'a', '--secret-key', 'b']);
    expect([now.code, now.out, now.err]).toEqual([2, '', expected]);
    expect(existsSync(join(data, 'site.db')), 'the outbox was opened').toBe(false);
    const restore = await runCli(runRestore, ['--data', join(dir, 'fresh'), '--hq', text, '--site', '8']);
    expect([restore.code, restore.err]).toEqual([2, expected]);
    const sites = await runCli(runHq, ['sites', '--hq', text]);
    expect([sites.code, sites.out, sites.err]).toEqual([2, '', expected]);
  });

  it("config check and start refuse config.json's hq.target with the same words, naming the key", { timeout: 90_000 }, async () => {
    const data = join(dir, 'config');
    mkdirSync(data);
    writeFileSync(join(data, 'config.json'), JSON.stringify({ format: 1, site: '8', hq: { target: 's3://AKIAKEY:s3cretKey@hq/sites/' } }));
    const words = refusal('s3://…@hq/sites/');
    const check = await tilstand(['config', 'check', '--data', data]);
    expect(check.code).toBe(2);
    expect(check.err).toContain(`hq.target: ${words}`);
    expect(check.out + check.err).not.toContain('s3cretKey');
    const start = await tilstand(['start', '--data', data, '--headless', '--http-port', '0', '--mqtt-port', '0']);
    expect(start.code).toBe(2);
    expect(start.err).toContain(`hq.target: ${words}`);
    expect(start.out + start.err).not.toContain('s3cretKey');
    // --hq on start: the same parse (Site.open's openTarget), named as the flag.
    writeFileSync(join(data, 'config.json'), JSON.stringify({ format: 1, site: '8', hq: { target: null } }));
    const flag = await tilstand(['start', '--data', data, '--headless', '--http-port', '0', '--mqtt-port', '0', '--hq', 's3://AKIAKEY:s3cretKey@hq/sites/']);
    expect(flag.code).toBe(2);
    expect(flag.err).toContain(`option --hq: ${words}`);
    expect(flag.out + flag.err).not.toContain('s3cretKey');
  });
});
