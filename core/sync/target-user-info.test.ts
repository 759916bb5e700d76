// Keys written into an s3:// target (`s3://KEY:SECRET@bucket/prefix`, or its endpoint's
// `?endpoint=http://KEY:SECRET@host:9000`) were ignored: the bucket is
// the URL's host name, and the keys come from the environment or --access-key/--secret-key. The
// person who wrote them got requests with other keys or none (access denied) and their secret sat
// in config.json or the shell's history. Such a target is refused, saying where keys go, without
// echoing the secret — by every reader of a target's text: openTarget, targetProblem (config.json's
// `hq.target`: `config check`, start and reload), the hq and sync commands, the site's start. The
// endpoint's were accepted and only left out of descriptions.
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
const endpointRefusal = (shown: string, endpoint: string) => `'${shown}' carries keys in its endpoint (${endpoint}), which are not read from there: take them out of the endpoint and ${KEYS_GO}`;
/** An S3 target whose endpoint holds keys, percent-encoded in the parameter as a shell user writes it or not. */
const withEndpointKeys = 's3://hq/sites/?endpoint=' + encodeURIComponent('http://AKIAKEY:s3cretKey@127.0.0.1:9000') + '&region=eu-north-1';
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

  it("config check and start refuse config.json's hq.target with the same words, naming the key", { timeout: 120_000 }, async () => {
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
    // The endpoint's keys: the same readers, their own words.
    writeFileSync(join(data, 'config.json'), JSON.stringify({ format: 1, site: '8', hq: { target: withEndpointKeys } }));
    const endpointWords = endpointRefusal('s3://hq/sites/', 'http://…@127.0.0.1:9000');
    for (const args of [
      ['config', 'check', '--data', data],
      ['start', '--data', data, '--headless', '--http-port', '0', '--mqtt-port', '0'],
    ]) {
      const r = await tilstand(args);
      expect(r.code, args[0]).toBe(2);
      expect(r.err, args[0]).toContain(`hq.target: ${endpointWords}`);
      expect(r.out + r.err, args[0]).not.toMatch(/s3cretKey|AKIAKEY/);
    }
  });
});

describe("an s3:// target with keys in its endpoint", () => {
  it('is refused by openTarget and targetProblem, naming where keys go and never the keys', () => {
    const cases: [string, string, string][] = [
      [withEndpointKeys, 's3://hq/sites/', 'http://…@127.0.0.1:9000'],
      // Not percent-encoded: the URL still reads it as the parameter's value.
      ['s3://hq/?endpoint=https://AKIAKEY:s3cretKey@minio.local:9000/base', 's3://hq/', 'https://…@minio.local:9000/base'],
      ['s3://hq/p?region=x&endpoint=' + encodeURIComponent('http://AKIAKEY@127.0.0.1:9000'), 's3://hq/p', 'http://…@127.0.0.1:9000'],
      ['s3://hq/?endpoint=' + encodeURIComponent('http://:s3cretKey@127.0.0.1:9000'), 's3://hq/', 'http://…@127.0.0.1:9000'],
      // A secret with a `/` ends the authority early: the URL reads host AKIAKEY, port 12 and a
      // path holding the rest of the secret; the `@` still tells it.
      ['s3://hq/?endpoint=' + encodeURIComponent('http://AKIAKEY:12/xs3cretKey@127.0.0.1:9000'), 's3://hq/', 'http://…@127.0.0.1:9000'],
    ];
    for (const [text, shown, endpoint] of cases) {
      const message = endpointRefusal(shown, endpoint);
      // Also with keys given the proper way: the ones in the endpoint are a mistake either way.
      expect(() => openTarget(text, keys), text).toThrow(message);
      expect(targetProblem(text), text).toBe(message);
      expect(targetProblem(text, { relative: false }), text).toBe(message);
      // Shown (status, logs) as the description would read, without them.
      expect(shownTarget(text), text).not.toMatch(/s3cretKey|AKIAKEY/);
    }
    expect(shownTarget(withEndpointKeys)).toBe('s3://hq/sites/ (http://127.0.0.1:9000)');
    // A secret with a `/` that does not parse as a URL at all is not echoed by the other refusal either.
    const broken = 's3://hq/?endpoint=' + encodeURIComponent('http://AKIAKEY:ab/cds3cretKey@127.0.0.1:9000');
    expect(targetProblem(broken)).toBe("s3:// target: endpoint must be an http:// or https:// URL (endpoint=http://host:9000), got 'http://…@127.0.0.1:9000'");
    for (const ok of ['s3://hq/?endpoint=http://127.0.0.1:9000', 's3://hq/?endpoint=' + encodeURIComponent('https://host:443/base')]) expect(targetProblem(ok), ok).toBeUndefined();
  });

  it('sync now, restore and the hq commands refuse it, exit 2, before HQ or the outbox is touched', async () => {
    const data = join(dir, 'site-endpoint');
    mkdirSync(data);
    writeFileSync(join(data, 'config.json'), JSON.stringify({ format: 1, site: '8', hq: { target: null } }));
    const expected = `tilstand: ${endpointRefusal('s3://hq/sites/', 'http://…@127.0.0.1:9000')}\n`;
    const now = await runCli(runSync, ['now', '--data', data, '--hq', withEndpointKeys, '--access-key', 'a', '--secret-key', 'b']);
    expect([now.code, now.out, now.err]).toEqual([2, '', expected]);
    expect(existsSync(join(data, 'site.db')), 'the outbox was opened').toBe(false);
    const restore = await runCli(runRestore, ['--data', join(dir, 'fresh-endpoint'), '--hq', withEndpointKeys, '--site', '8', '--access-key', 'a', '--secret-key', 'b']);
    expect([restore.code, restore.err]).toEqual([2, expected]);
    expect(existsSync(join(dir, 'fresh-endpoint')), 'the restore made its directory').toBe(false);
    const sites = await runCli(runHq, ['sites', '--hq', withEndpointKeys, '--access-key', 'a', '--secret-key', 'b']);
    expect([sites.code, sites.out, sites.err]).toEqual([2, '', expected]);
  });
});
