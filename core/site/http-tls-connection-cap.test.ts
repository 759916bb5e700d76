// A site served over TLS is reachable from the site network; it kept every connection opened,
// however many (each up to the TLS handshake's 120 s, and again after it), so one client could take
// the process's file descriptors. It keeps at most TLS_CONNECTIONS_PER_SOURCE_MAX from a source
// (loopback as one), closing the next at once, logged; a closed one makes room again.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SiteHttpServer, TLS_CONNECTIONS_PER_SOURCE_MAX } from './http-server.ts';

let dir: string;
let certPath: string;
let keyPath: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-tls-cap-'));
  certPath = join(dir, 'cert.pem');
  keyPath = join(dir, 'key.pem');
  if (!existsSync('/usr/bin/openssl')) throw new Error('openssl CLI missing: install openssl to run the TLS test');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyPath, '-out', certPath, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
    { stdio: 'ignore', timeout: 30_000 },
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A raw TCP connection that sends nothing; resolves once connected. */
const idle = (port: number): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
    s.on('error', () => undefined);
    s.once('error', reject);
  });

/** Resolves 'closed' when the server closes `s` within `ms`, else 'open'. */
const closedWithin = (s: Socket, ms: number): Promise<'closed' | 'open'> =>
  new Promise((resolve) => {
    const t = setTimeout(() => resolve('open'), ms);
    s.once('close', () => {
      clearTimeout(t);
      resolve('closed');
    });
  });

const healthz = (port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, path: '/healthz', ca: readFileSync(certPath), agent: false, timeout: 5_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    r.on('timeout', () => r.destroy(new Error('timed out')));
    r.on('error', reject);
    r.end();
  });

describe('connections to a site served over TLS', () => {
  it(`keeps at most ${TLS_CONNECTIONS_PER_SOURCE_MAX} from one source, closing the next at once, logged`, async () => {
    const lines: string[] = [];
    const http = new SiteHttpServer('127.0.0.1', 0, { metrics: () => '', health: () => ({ ok: true }), log: (l) => lines.push(l) }, { certPath, keyPath });
    const port = await http.listen();
    const held: Socket[] = [];
    try {
      for (let i = 0; i < TLS_CONNECTIONS_PER_SOURCE_MAX; i++) held.push(await idle(port));
      // Give the server time to see them all.
      await new Promise((r) => setTimeout(r, 200));
      expect(await closedWithin(held[0]!, 300)).toBe('open');
      const over = await idle(port);
      expect(await closedWithin(over, 3_000)).toBe('closed');
      expect(lines).toEqual([`http: refused a connection from loopback: ${TLS_CONNECTIONS_PER_SOURCE_MAX} open from there (at most ${TLS_CONNECTIONS_PER_SOURCE_MAX} a source); 1 refused since the last such line`]);
      // One closed makes room: a real request is answered.
      const gone = held.pop()!;
      const closed = new Promise((r) => gone.once('close', r));
      gone.destroy();
      await closed;
      await new Promise((r) => setTimeout(r, 100));
      expect(await healthz(port)).toBe(200);
    } finally {
      for (const s of held) s.destroy();
      await http.close();
    }
  }, 30_000);
});
