// The session cookie against planting. Cookies are not kept apart by port, and a sibling host can
// set one for the parent domain: a page on another port of the PC (or another host of the site's
// domain) could plant a `tilstand_session` the site then reads. Over TLS the cookie is
// `__Host-tilstand_session` (the browser takes such a cookie only when Secure, Path=/ and without
// Domain, so it cannot be planted that way) and the unprefixed name is not read. When a browser
// sends several cookies of the name, the one naming a session the server holds counts; two such
// are none (the server cannot tell the planted one), and the next sign-in ends them all.
// Real UiServer on the real SiteHttpServer, over TLS with a self-signed certificate and over plain
// HTTP, loopback only; the backend is a stand-in that signs in anyone with PIN 1234.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SiteBackend } from './api.ts';
import { SiteHttpServer } from './http-server.ts';
import { SESSION_COOKIE, SESSION_COOKIE_TLS, UiServer } from './ui-server.ts';

let dir: string;
let certPath: string;
let keyPath: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-cookie-'));
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

const running: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const s of running.splice(0).reverse()) await s.close();
});

const backend: SiteBackend = {
  async call(method, req, session) {
    if (method === 'signIn') {
      const r = req as { user: string; secret: string };
      if (r.secret !== '1234') throw new Error('unexpected secret in this test');
      session.setUser({ name: r.user, roles: ['operator'] });
      return session.user as never;
    }
    if (method === 'me') return session.user as never;
    return { user: session.user?.name ?? null } as never;
  },
  subscribe: () => () => undefined,
};

interface Answer {
  status: number;
  setCookie: string | undefined;
  body: { ok: boolean; value?: unknown; error?: { kind: string; message: string } };
}

async function start(secure: boolean): Promise<(method: string, body: unknown, cookie?: string) => Promise<Answer>> {
  const ui = new UiServer(backend, { rendererDir: dir, secure });
  const http = new SiteHttpServer('127.0.0.1', 0, { metrics: () => '', health: () => ({ ok: true }), ui }, secure ? { certPath, keyPath } : null);
  running.push(ui, http);
  const port = await http.listen();
  const ca = readFileSync(certPath);
  return (method, body, cookie) =>
    new Promise<Answer>((resolve, reject) => {
      const text = JSON.stringify(body);
      const headers: Record<string, string> = { 'Content-Type': 'application/json', 'X-Tilstand': '1', 'Content-Length': String(Buffer.byteLength(text)) };
      if (cookie !== undefined) headers.Cookie = cookie;
      const o = { host: '127.0.0.1', port, method: 'POST', path: `/api/${method}`, headers, timeout: 10_000 };
      const req = secure ? httpsRequest({ ...o, ca, servername: 'localhost' }) : httpRequest(o);
      req.on('timeout', () => req.destroy(new Error(`${method}: no answer in 10 s`)));
      req.on('error', reject);
      req.on('response', (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (data += d));
        res.on('end', () => {
          const sc = res.headers['set-cookie'];
          resolve({ status: res.statusCode!, setCookie: sc?.[0], body: JSON.parse(data) as Answer['body'] });
        });
      });
      req.end(text);
    });
}

/** The token a sign-in's Set-Cookie gives. */
function tokenOf(a: Answer, name: string): string {
  expect(a.status).toBe(200);
  const m = new RegExp(`^${name.replace(/[-_]/g, '\\$&')}=([A-Za-z0-9_-]{43});`).exec(a.setCookie ?? '');
  expect(m, a.setCookie).not.toBeNull();
  return m![1]!;
}

describe('the session cookie over TLS', () => {
  it('is __Host-tilstand_session: Secure, Path=/, no Domain', async () => {
    const call = await start(true);
    const a = await call('signIn', { user: 'Kari', secret: '1234' });
    expect(a.setCookie).toMatch(/^__Host-tilstand_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
    expect(a.setCookie).not.toMatch(/domain=/i);
    expect(SESSION_COOKIE_TLS).toBe('__Host-tilstand_session');
    const token = tokenOf(a, SESSION_COOKIE_TLS);
    expect((await call('me', {}, `${SESSION_COOKIE_TLS}=${token}`)).body).toEqual({ ok: true, value: { name: 'Kari', roles: ['operator'] } });
  });

  it('does not read the unprefixed name there, which any sibling host or port could have planted', async () => {
    const call = await start(true);
    const token = tokenOf(await call('signIn', { user: 'Kari', secret: '1234' }), SESSION_COOKIE_TLS);
    const r = await call('status', {}, `${SESSION_COOKIE}=${token}`);
    expect(r.status).toBe(401);
    expect(r.body.error).toEqual({ kind: 'unauthenticated', message: 'sign in first', code: 'session.required' });
  });

  it('takes, of several cookies of the name, the one that names a held session, in either order', async () => {
    const call = await start(true);
    const token = tokenOf(await call('signIn', { user: 'Kari', secret: '1234' }), SESSION_COOKIE_TLS);
    const planted = 'A'.repeat(43);
    for (const cookie of [`${SESSION_COOKIE_TLS}=${planted}; ${SESSION_COOKIE_TLS}=${token}`, `${SESSION_COOKIE_TLS}=${token}; ${SESSION_COOKIE_TLS}=${planted}`]) {
      const r = await call('status', {}, cookie);
      expect(r.status, cookie).toBe(200);
      expect(r.body.value, cookie).toEqual({ user: 'Kari' });
    }
  });

  it('takes none when two name held sessions (a planted session of its own), and a sign-in then ends both', async () => {
    const call = await start(true);
    const mallory = tokenOf(await call('signIn', { user: 'Mallory', secret: '1234' }), SESSION_COOKIE_TLS);
    const kari = tokenOf(await call('signIn', { user: 'Kari', secret: '1234' }), SESSION_COOKIE_TLS);
    const both = [`${SESSION_COOKIE_TLS}=${mallory}; ${SESSION_COOKIE_TLS}=${kari}`, `${SESSION_COOKIE_TLS}=${kari}; ${SESSION_COOKIE_TLS}=${mallory}`];
    for (const cookie of both) {
      expect((await call('status', {}, cookie)).status, cookie).toBe(401);
      expect((await call('me', {}, cookie)).body, cookie).toEqual({ ok: true, value: null });
    }
    // Kari signs in again with both cookies in her browser: both sessions end, the new one counts.
    const fresh = tokenOf(await call('signIn', { user: 'Kari', secret: '1234' }, both[0]), SESSION_COOKIE_TLS);
    expect((await call('status', {}, `${SESSION_COOKIE_TLS}=${mallory}`)).status).toBe(401);
    expect((await call('status', {}, `${SESSION_COOKIE_TLS}=${kari}`)).status).toBe(401);
    const r = await call('status', {}, `${SESSION_COOKIE_TLS}=${mallory}; ${SESSION_COOKIE_TLS}=${fresh}`);
    expect(r.status).toBe(200);
    expect(r.body.value).toEqual({ user: 'Kari' });
  });
});

describe('the session cookie over plain HTTP (loopback)', () => {
  it('keeps the plain name without Secure (a __Host- cookie needs Secure), and picks a held session among several', async () => {
    const call = await start(false);
    const a = await call('signIn', { user: 'Kari', secret: '1234' });
    expect(a.setCookie).toMatch(/^tilstand_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    const token = tokenOf(a, SESSION_COOKIE);
    const r = await call('status', {}, `${SESSION_COOKIE}=${token}; ${SESSION_COOKIE}=${'B'.repeat(43)}`);
    expect(r.status).toBe(200);
    expect(r.body.value).toEqual({ user: 'Kari' });
    expect((await call('status', {}, `${SESSION_COOKIE_TLS}=${token}`)).status).toBe(401);
  });
});

describe("the session cookie's life", () => {
  it('runs from the last call that used the session, as the session does, not from the sign-in (a screen in use stays signed in past 12 h)', async () => {
    const call = await start(false);
    const token = tokenOf(await call('signIn', { user: 'Kari', secret: '1234' }), SESSION_COOKIE);
    // Each call of a signed-in session gives the browser the same cookie again, with its whole life.
    for (const method of ['status', 'me']) {
      expect((await call(method, {}, `${SESSION_COOKIE}=${token}`)).setCookie, method).toBe(`${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200`);
    }
    // Nothing to a caller without a session, nor for a token the server does not hold.
    expect((await call('me', {})).setCookie).toBeUndefined();
    expect((await call('me', {}, `${SESSION_COOKIE}=${'C'.repeat(43)}`)).setCookie).toBeUndefined();
  });
});
