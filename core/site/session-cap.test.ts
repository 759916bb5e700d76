// The headless server's sessions per user are capped (ui-server.ts SESSIONS_PER_USER_MAX): every
// sign-in makes a session, kept until 12 h without use, so a script that signed in over and over
// grew the site's memory without bound. Beyond the cap the user's oldest session ends, and its next
// call is refused as one without a sign-in; other users' sessions are not touched.
// Real UiServer on the real SiteHttpServer over plain HTTP, loopback only; the backend is a
// stand-in that signs in anyone with PIN 1234.

import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { SiteBackend } from './api.ts';
import { SiteHttpServer } from './http-server.ts';
import { SESSION_COOKIE, SESSIONS_PER_USER_MAX, UiServer } from './ui-server.ts';

const backend: SiteBackend = {
  async call(method, req, session) {
    if (method === 'signIn') {
      session.setUser({ name: (req as { user: string }).user, roles: ['operator'] });
      return session.user as never;
    }
    return { user: session.user?.name ?? null } as never;
  },
  subscribe: () => () => undefined,
};

let dir: string;
let ui: UiServer;
let http: SiteHttpServer;
let port: number;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-session-cap-'));
  ui = new UiServer(backend, { rendererDir: dir, secure: false });
  http = new SiteHttpServer('127.0.0.1', 0, { metrics: () => '', health: () => ({ ok: true }), ui }, null);
  port = await http.listen();
});
afterEach(async () => {
  ui.close();
  await http.close();
  rmSync(dir, { recursive: true, force: true });
});

/** POST /api/<method>: the status and, for a sign-in, the session token its cookie gives. */
function call(method: string, body: unknown, token?: string): Promise<{ status: number; token: string | undefined }> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'X-Tilstand': '1', 'Content-Length': String(Buffer.byteLength(text)) };
    if (token !== undefined) headers.Cookie = `${SESSION_COOKIE}=${token}`;
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: `/api/${method}`, headers, timeout: 10_000 });
    req.on('timeout', () => req.destroy(new Error(`${method}: no answer in 10 s`)));
    req.on('error', reject);
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, token: /^tilstand_session=([^;]+);/.exec(res.headers['set-cookie']?.[0] ?? '')?.[1] }));
    });
    req.end(text);
  });
}

async function signIn(user: string): Promise<string> {
  const r = await call('signIn', { user, secret: '1234' });
  expect(r.status).toBe(200);
  return r.token!;
}

it(`keeps a user's newest ${SESSIONS_PER_USER_MAX} sessions: each sign-in beyond ends the oldest, whose next call is refused`, async () => {
  const other = await signIn('Bo');
  const tokens: string[] = [];
  const extra = 4;
  for (let i = 0; i < SESSIONS_PER_USER_MAX + extra; i++) tokens.push(await signIn('Kari'));
  expect(ui.sessionCount()).toBe(SESSIONS_PER_USER_MAX + 1);
  for (const [i, token] of tokens.entries()) {
    expect((await call('status', {}, token)).status, `session ${i}`).toBe(i < extra ? 401 : 200);
  }
  // Another user's session is not one of Kari's.
  expect((await call('status', {}, other)).status).toBe(200);
});
