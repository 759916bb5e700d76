// What a listener of the site refuses of its configuration is a configuration error: exit 2 naming
// the key, in the words of `tilstand config check`. A TLS certificate or key that cannot be read or
// used (config.ts reads no TLS file) and the broker's own BrokerConfigError (an API caller's
// mqttPort, which only the broker checks) were exit 5 with a message naming no key.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exitCodeOf } from './cli/exit-code.ts';
import { runMain as run } from './cli/test-support.ts';
import { ConfigError } from './config.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const FAST = { N: 1024, r: 8, p: 1 };
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-listener-config-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

type Section = 'broker' | 'http';

/** A site whose `section` has `tls` (paths relative to the data directory, as an operator writes them). */
async function siteWithTls(name: string, section: Section, tls: { certPath: string; keyPath: string }): Promise<string> {
  const data = join(dir, name);
  await initDataDir({ data, site: name, scrypt: FAST });
  const file = join(data, 'config.json');
  const c = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, unknown>>;
  c[section] = { ...c[section], tls };
  writeFileSync(file, JSON.stringify(c, null, 2));
  return data;
}

/** `tilstand start` refused: its exit code and the line naming why. */
async function refusedStart(data: string): Promise<{ code: number; line: string | undefined }> {
  const r = await run(['start', '--data', data, '--mqtt-port', '0', '--http-port', '0', '--no-agent-timer']);
  return { code: r.code, line: r.err.split('\n').find((l) => l.includes('did not start')) };
}

describe('a listener refusing its TLS files is a config error naming the key (exit 2)', () => {
  for (const section of ['broker', 'http'] as const) {
    it(`${section}.tls.certPath that does not exist: start says what config check says`, async () => {
      const data = await siteWithTls(`${section}-gone`, section, { certPath: 'tls/none.crt', keyPath: 'tls/none.key' });
      const check = await run(['config', 'check', '--data', data]);
      const why = `config ${section}.tls.certPath: ${join(data, 'tls/none.crt')} cannot be read (ENOENT)`;
      expect([check.code, check.err]).toEqual([2, `tilstand: ${why}\n`]);
      expect(await refusedStart(data)).toEqual({ code: 2, line: `tilstand: site ${section}-gone did not start: ${why}` });
    }, 30_000);
  }

  it('a certificate file that holds no PEM: broker.tls named, exit 2', async () => {
    const data = await siteWithTls('pem', 'broker', { certPath: 'cert.pem', keyPath: 'key.pem' });
    writeFileSync(join(data, 'cert.pem'), 'not a certificate\n');
    writeFileSync(join(data, 'key.pem'), 'not a key\n');
    // config check only sees that the files are readable; start names the key the OpenSSL refusal is about.
    expect((await run(['config', 'check', '--data', data])).code).toBe(0);
    const r = await refusedStart(data);
    expect(r.code).toBe(2);
    expect(r.line).toMatch(/^tilstand: site pem did not start: config broker\.tls: the certificate or its key cannot be used: .*PEM/);
  }, 30_000);

  it("a key that is not the certificate's: http.tls named, exit 2", async () => {
    if (!existsSync('/usr/bin/openssl')) throw new Error('openssl CLI missing: install openssl to run the TLS test');
    const data = await siteWithTls('mismatch', 'http', { certPath: 'a.crt', keyPath: 'b.key' });
    for (const n of ['a', 'b']) {
      const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(data, `${n}.key`), '-out', join(data, `${n}.crt`), '-days', '1', '-subj', '/CN=localhost'], { stdio: 'pipe' });
      expect(r.status, String(r.stderr)).toBe(0);
    }
    const r = await refusedStart(data);
    expect(r.code).toBe(2);
    expect(r.line).toMatch(/^tilstand: site mismatch did not start: config http\.tls: the certificate or its key cannot be used: /);
  }, 30_000);
});

describe("the broker's own BrokerConfigError is a config error naming what gave the value", () => {
  it('Site.start with an mqttPort the broker refuses: option --mqtt-port, exit 2', async () => {
    const data = join(dir, 'port');
    await initDataDir({ data, site: 'port', scrypt: FAST });
    const e = await Site.start({ data, mqttPort: 1.5, httpPort: 0, ui: false, agentTimer: false }).then(
      async (s) => (await s.stop(), new Error('started')),
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as ConfigError).key).toBe('--mqtt-port');
    expect((e as Error).message).toBe('option --mqtt-port: expected a non-negative integer, got 1.5');
    expect(exitCodeOf(e)).toBe(2);
  }, 30_000);
});
