// The internal MQTT client accepts exactly the certificate the site gave its embedded broker
// (broker.tls.certPath), on 127.0.0.1 where the certificate's host name does not match: a
// self-signed one, and a CA-issued one whose file holds the chain. It used to connect with
// `rejectUnauthorized: false`, so any listener on the port passed; another certificate, even one
// from the same CA, is now refused.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, createServer as createTlsServer, type Server } from 'node:tls';
import mqtt from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BrokerConfig } from './config.ts';
import { initDataDir } from './init.ts';
import { internalClientTls } from './internal-client-tls.ts';
import { Site } from './site.ts';

const FAST = { N: 1024, r: 8, p: 1 };
let dir: string;
const servers: Server[] = [];
beforeEach(() => {
  if (!existsSync('/usr/bin/openssl')) throw new Error('openssl CLI missing: install openssl to run the TLS test');
  dir = mkdtempSync(join(tmpdir(), 'tilstand-internal-tls-'));
});
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  rmSync(dir, { recursive: true, force: true });
});

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { stdio: 'pipe' });
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A self-signed certificate for the site's host name (not 127.0.0.1): `<name>.crt`, `<name>.key`. */
function selfSigned(name: string): { certPath: string; keyPath: string } {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  openssl('req', '-x509', ...EC, '-keyout', keyPath, '-out', certPath, '-days', '1', '-subj', '/CN=north.example', '-addext', 'subjectAltName=DNS:north.example');
  return { certPath, keyPath };
}

/** `name` issued by `ca` (a CA when `isCa`): `<name>.crt`, `<name>.key`. */
function issued(name: string, ca: string, isCa: boolean): { certPath: string; keyPath: string } {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  openssl('req', '-new', ...EC, '-keyout', keyPath, '-out', csr, '-subj', `/CN=${isCa ? name : 'north.example'}`);
  writeFileSync(ext, isCa ? 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n' : 'basicConstraints=CA:FALSE\nsubjectAltName=DNS:north.example\n');
  openssl('x509', '-req', '-in', csr, '-CA', join(dir, `${ca}.crt`), '-CAkey', join(dir, `${ca}.key`), '-CAcreateserial', '-out', certPath, '-days', '1', '-extfile', ext);
  return { certPath, keyPath };
}

/** A TLS listener on 127.0.0.1 presenting `cert` (a PEM chain file) with `key`; its port. */
async function listener(certPath: string, keyPath: string): Promise<number> {
  const s = createTlsServer({ cert: readFileSync(certPath), key: readFileSync(keyPath) }, (c) => c.destroy());
  s.on('tlsClientError', () => undefined);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as { port: number }).port;
}

function embedded(certPath: string | null): BrokerConfig {
  return { mode: 'embedded', host: '127.0.0.1', port: 0, tls: certPath === null ? null : { certPath, keyPath: '' }, allowInsecureNonLoopback: false, diskFullHoldMaxMs: 30_000 };
}

/** 'connected' when the internal client's options let the handshake through, else the refusal. */
function handshake(port: number, broker: BrokerConfig): Promise<string> {
  return new Promise((resolve) => {
    const s = tlsConnect({ host: '127.0.0.1', port, ...internalClientTls(broker) });
    const t = setTimeout(() => (s.destroy(), resolve('no answer within 5 s')), 5_000);
    const done = (v: string) => {
      clearTimeout(t);
      s.destroy();
      resolve(v);
    };
    s.once('secureConnect', () => done('connected'));
    s.once('error', (e) => done(e.message));
  });
}

/** What the MQTT client (as the site makes it) says when it meets the listener on `port`. */
function mqttRefusal(port: number, broker: BrokerConfig): Promise<string> {
  return new Promise((resolve) => {
    const c = mqtt.connect(`mqtts://127.0.0.1:${port}`, { ...internalClientTls(broker), reconnectPeriod: 0, connectTimeout: 5_000 });
    const done = (v: string) => {
      c.end(true);
      resolve(v);
    };
    c.once('error', (e) => done(e.message));
    c.once('close', () => done('closed without an error'));
  });
}

describe('internal client TLS: the configured certificate, pinned', () => {
  it('accepts the self-signed certificate the broker was given, on 127.0.0.1 (not its host name)', async () => {
    const a = selfSigned('a');
    expect(await handshake(await listener(a.certPath, a.keyPath), embedded(a.certPath))).toBe('connected');
  });

  it('refuses a listener presenting another self-signed certificate of the same name', async () => {
    const a = selfSigned('a');
    const b = selfSigned('b');
    const port = await listener(b.certPath, b.keyPath);
    expect(await handshake(port, embedded(a.certPath))).toMatch(/self[- ]signed/);
    expect(await mqttRefusal(port, embedded(a.certPath))).toMatch(/self[- ]signed/);
  });

  it('accepts a CA-issued certificate whose file holds the chain (no root), and refuses another leaf of the same CA', async () => {
    openssl('req', '-x509', ...EC, '-keyout', join(dir, 'root.key'), '-out', join(dir, 'root.crt'), '-days', '1', '-subj', '/CN=root');
    const intermediate = issued('intermediate', 'root', true);
    const leaf = issued('leaf', 'intermediate', false);
    const other = issued('other', 'intermediate', false);
    // As an operator configures it: leaf first, then the intermediate (what Node's `cert` wants).
    const chain = (l: { certPath: string }, name: string) => {
      const p = join(dir, `${name}.chain.crt`);
      writeFileSync(p, readFileSync(l.certPath, 'utf8') + readFileSync(intermediate.certPath, 'utf8'));
      return p;
    };
    const configured = chain(leaf, 'leaf');
    expect(await handshake(await listener(configured, leaf.keyPath), embedded(configured))).toBe('connected');
    // The other leaf's chain verifies against the configured file's intermediate: the pin refuses it.
    const port = await listener(chain(other, 'other'), other.keyPath);
    expect(await handshake(port, embedded(configured))).toMatch(/^the broker presented certificate [0-9A-F:]+, not the one in .*leaf\.chain\.crt/);
    expect(await mqttRefusal(port, embedded(configured))).toMatch(/^the broker presented certificate /);
  });

  it('adds nothing without broker.tls, and for an external broker verifies as its MqttSource does', async () => {
    expect(internalClientTls(embedded(null))).toEqual({});
    const external: BrokerConfig = { mode: 'external', url: 'mqtts://127.0.0.1:8883', username: 'tilstand', passwordFile: 'pw' };
    expect(internalClientTls(external)).toEqual({});
    const b = selfSigned('b');
    expect(await handshake(await listener(b.certPath, b.keyPath), external)).toMatch(/self[- ]signed/);
  });
});

describe('a site whose embedded broker uses TLS', () => {
  it('starts, and its internal client connects to the listener over the pinned certificate', async () => {
    const data = join(dir, 'site');
    await initDataDir({ data, site: 'tlssite', scrypt: FAST });
    const { certPath, keyPath } = selfSigned('broker');
    const file = join(data, 'config.json');
    const c = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, unknown>>;
    c.broker = { ...c.broker, tls: { certPath, keyPath } };
    writeFileSync(file, JSON.stringify(c, null, 2));
    const lines: string[] = [];
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: (l) => lines.push(l) });
    try {
      // The internal client is the only one: the broker's count of accepted connections says it came in.
      for (let i = 0; i < 100 && site.brokerInfo().clients === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(site.brokerInfo().clients).toBe(1);
      expect(lines.filter((l) => l.includes('internal MQTT client'))).toEqual([]);
    } finally {
      await site.stop();
    }
  }, 30_000);
});
