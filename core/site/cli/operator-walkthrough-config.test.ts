// `tilstand config check` and `start` apply the same config rules (config.ts checkStartRules): a
// non-loopback http.host or broker.host without TLS passed the check (exit 0) and only the start
// refused it; the broker's refusal was exit 5 and named its own options, not config.json's keys;
// and the start opened the broker and the write-back before it refused http.tls, whose errors as
// they closed were printed before the reason.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EmbeddedBroker } from '../../ingest/broker.ts';
import { initDataDir } from '../init.ts';
import { Site } from '../site.ts';
import { runMain as run } from './test-support.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-config-rules-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

/** A new site 'north' whose config.json `edit` changed. */
async function siteWith(edit: (c: Record<string, any>) => void): Promise<string> {
  const data = join(dir, 'data');
  await initDataDir({ data, site: 'north' });
  const file = join(data, 'config.json');
  const c = JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
  edit(c);
  writeFileSync(file, JSON.stringify(c, null, 2));
  return data;
}

// A documentation address (TEST-NET-1): nothing here listens on it.
const FAR = '192.0.2.1';
const HTTP_REFUSAL = `config http.tls: http.host is ${FAR}, not loopback: the UI and its sessions need TLS there; set http.tls {certPath, keyPath}, or http.host to 127.0.0.1`;
const BROKER_REFUSAL = `config broker.tls: broker.host is ${FAR}, not loopback: the modules' MQTT needs TLS there; set broker.tls {certPath, keyPath}, or broker.allowInsecureNonLoopback true to accept plaintext MQTT from the site network, or broker.host to 127.0.0.1`;

describe('config rules: config check refuses what start refuses', () => {
  for (const [what, edit, refusal] of [
    ['http.host', (c: Record<string, any>) => (c.http = { ...c.http, host: FAR }), HTTP_REFUSAL],
    ['broker.host', (c: Record<string, any>) => (c.broker = { ...c.broker, host: FAR }), BROKER_REFUSAL],
  ] as const) {
    it(`a non-loopback ${what} without TLS: config check exit 2 naming the key; start exit 2 with the same words, before any listener`, async () => {
      const data = await siteWith(edit);
      const check = await run(['config', 'check', '--data', data]);
      expect(check.code).toBe(2);
      expect(check.err).toBe(`tilstand: ${refusal}\n`);

      const listen = vi.spyOn(EmbeddedBroker.prototype, 'listen');
      const start = await run(['start', '--data', data, '--mqtt-port', '0', '--http-port', '0', '--headless']);
      expect(start.code).toBe(2);
      // One line: the reason, and nothing a half-started site said while it closed.
      expect(start.err).toBe(`tilstand: site north did not start: ${refusal}\n`);
      expect(listen).not.toHaveBeenCalled();
      expect(readFileSync(join(data, 'logs', 'site.log'), 'utf8').trim().split('\n').at(-1)).toMatch(new RegExp(` site north did not start: config ${what === 'http.host' ? 'http' : 'broker'}\\.tls: `));
    }, 30_000);
  }

  it('passes a non-loopback broker.host with allowInsecureNonLoopback, and one with broker.tls, as start does', async () => {
    const data = await siteWith((c) => (c.broker = { ...c.broker, host: FAR, allowInsecureNonLoopback: true }));
    const ok = await run(['config', 'check', '--data', data]);
    expect(ok.err).toBe('');
    expect(ok.code).toBe(0);
    const file = join(data, 'config.json');
    const c = JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
    c.broker = { ...c.broker, allowInsecureNonLoopback: false, tls: { certPath: 'tls/mqtt.crt', keyPath: 'tls/mqtt.key' } };
    writeFileSync(file, JSON.stringify(c));
    // Past the rule: what is left is the files it names.
    const files = await run(['config', 'check', '--data', data]);
    expect(files.err).toBe(`tilstand: config broker.tls.certPath: ${join(data, 'tls/mqtt.crt')} cannot be read (ENOENT)\n`);
  });

  it('a reload of a file the next start would refuse is refused now, naming the key, and the site keeps its config', async () => {
    const data = await siteWith(() => undefined);
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, agentTimer: false, ui: false });
    try {
      const file = join(data, 'config.json');
      const c = JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
      c.http = { ...c.http, host: FAR };
      writeFileSync(file, JSON.stringify(c));
      await expect(site.reloadConfig()).rejects.toThrow(HTTP_REFUSAL);
      expect(readFileSync(join(data, 'logs', 'site.log'), 'utf8')).toContain(`config not reloaded: ${HTTP_REFUSAL}`);
      expect(site.config.http.host).toBe('127.0.0.1');
    } finally {
      await site.stop();
    }
  }, 30_000);
});
