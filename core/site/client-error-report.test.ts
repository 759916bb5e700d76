// The floor UI's report of its own failure (`POST /api/reportClientError`): logged once under an
// id the client is told, before sign-in too, with the signed-in user when there is one; bounded
// per session, per address and for all callers not signed in together, with one line for what was
// dropped; a page's text never reaches the log raw (no newline, ESC, bidi override or markup).

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLIENT_ERROR_MESSAGE_MAX, type SessionContext, type SiteBackend } from './api.ts';
import { CLIENT_ERROR_UNSIGNED_STACK_MAX, CLIENT_ERRORS_PER_SESSION_MINUTE, CLIENT_ERRORS_PER_SOURCE_MINUTE, ClientErrorLog, logSafe } from './internal-error.ts';
import { UiServer } from './ui-server.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A backend whose sign-in takes any name (the report never reaches a backend). */
const backend: SiteBackend = {
  async call(method, req, session: SessionContext) {
    if (method === 'signIn') {
      const user = { name: (req as { user: string }).user, roles: ['viewer' as const] };
      session.setUser(user);
      return user as never;
    }
    if (method === 'me') return session.user as never;
    throw new Error(`the report reached the backend: ${method}`);
  },
  subscribe: () => () => undefined,
};

async function server() {
  const dir = mkdtempSync(join(tmpdir(), 'client-error-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const log: string[] = [];
  let nowMs = Date.parse('2026-12-05T10:00:00Z');
  const ui = new UiServer(backend, { rendererDir: dir, secure: false, log: (l) => void log.push(l), now: () => nowMs });
  const http: Server = createServer((req, res) => {
    if (!ui.handle(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => (ui.close(), http.close(() => r()), http.closeAllConnections())));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const post = async (method: string, body: unknown, o: { cookie?: string; header?: boolean } = {}) => {
    const r = await fetch(`${base}/api/${method}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(o.header === false ? {} : { 'X-Tilstand': '1' }), ...(o.cookie ? { Cookie: o.cookie } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    return { status: r.status, body: (await r.json()) as { ok: boolean; value?: { id: string | null }; error?: { message: string } }, cookie: r.headers.get('set-cookie')?.split(';')[0] };
  };
  return { post, log, advance: (ms: number) => void (nowMs += ms) };
}

const report = (message: string, extra: Record<string, unknown> = {}) => ({ kind: 'render', message, screen: 'stock', lang: 'nb', ...extra });

describe('reportClientError', () => {
  it('before sign-in: logs the report once under the id it answers, naming no user but the address', async () => {
    const s = await server();
    const r = await s.post('reportClientError', report('Cannot read properties of undefined (reading "map")', { stack: '    at Stock\n    at ErrorBoundary', version: '0.1.0' }));
    expect(r.status).toBe(200);
    const id = r.body.value!.id!;
    expect(id).toMatch(/^[0-9a-f]{8}$/);
    expect(s.log).toEqual([
      `client error ${id} (not signed in, from "loopback", screen "stock", lang "nb", version "0.1.0", render): "Cannot read properties of undefined (reading \\"map\\")" stack: "    at Stock\\n    at ErrorBoundary"`,
    ]);
  });

  it('signed in: names the user, and counts per session', async () => {
    const s = await server();
    const signIn = await s.post('signIn', { user: 'kari', secret: '4817' });
    expect(signIn.status).toBe(200);
    const ids: Array<string | null> = [];
    for (let i = 0; i < CLIENT_ERRORS_PER_SESSION_MINUTE + 2; i++) ids.push((await s.post('reportClientError', report(`boom ${i}`), { cookie: signIn.cookie! })).body.value!.id);
    expect(ids.slice(0, CLIENT_ERRORS_PER_SESSION_MINUTE).every((id) => id !== null)).toBe(true);
    expect(ids.slice(CLIENT_ERRORS_PER_SESSION_MINUTE)).toEqual([null, null]);
    expect(s.log).toHaveLength(CLIENT_ERRORS_PER_SESSION_MINUTE);
    expect(s.log[0]).toMatch(new RegExp(`^client error ${ids[0]} \\(user "kari", screen "stock", lang "nb", render\\): "boom 0"$`));
    // The minute over, the next report first says how many were dropped.
    s.advance(60_000);
    const next = await s.post('reportClientError', report('again'), { cookie: signIn.cookie! });
    expect(next.body.value!.id).toMatch(/^[0-9a-f]{8}$/);
    expect(s.log[CLIENT_ERRORS_PER_SESSION_MINUTE]).toMatch(/^client errors: 2 more from user "kari" dropped \(over the rate for a minute from 2026-12-05T10:00:00\.000Z;/);
    expect(s.log[CLIENT_ERRORS_PER_SESSION_MINUTE + 1]).toContain(`client error ${next.body.value!.id} (user "kari"`);
  });

  it('a render loop before sign-in writes a bounded number of lines, then one for the dropped, at close', async () => {
    const s = await server();
    const started = Date.now();
    let n = 0;
    for (; n < 50 && Date.now() - started < 20_000; n++) await s.post('reportClientError', report('loop', { stack: 'x'.repeat(4000) }));
    expect(n).toBe(50);
    expect(s.log).toHaveLength(CLIENT_ERRORS_PER_SOURCE_MINUTE);
    // Of a caller not signed in, the stack is cut before it is logged.
    expect(s.log[0]!.length).toBeLessThan(CLIENT_ERROR_UNSIGNED_STACK_MAX + 200);
    await cleanups.pop()!();
    expect(s.log).toHaveLength(CLIENT_ERRORS_PER_SOURCE_MINUTE + 1);
    expect(s.log.at(-1)).toMatch(/^client errors: 47 more from not signed in, from "loopback" dropped/);
  });

  it('writes no newline, ESC, control, bidi override or markup of the page raw', async () => {
    const s = await server();
    const nasty = 'a\nclient error 00000000 (user "admin"): forged\r\u001b[31mred\u001b[0m\u0007\u009b\u202eevil\u2028<img src=x onerror=alert(1)>&amp;';
    const r = await s.post('reportClientError', report(nasty, { stack: nasty, screen: '<b>', lang: '\u001b]0;t\u0007' }));
    expect(r.status).toBe(200);
    expect(s.log).toHaveLength(1);
    const line = s.log[0]!;
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069<>&]/);
    expect(line).toContain('\\nclient error 00000000');
    expect(line).toContain('\\u003cimg src=x onerror=alert(1)\\u003e\\u0026amp;');
    expect(JSON.parse(logSafe(nasty))).toBe(nasty); // escaped, not lost
  });

  it('is refused like any call without the header, and a report of the wrong shape names the field', async () => {
    const s = await server();
    expect((await s.post('reportClientError', report('x'), { header: false })).status).toBe(403);
    const long = await s.post('reportClientError', report('x'.repeat(CLIENT_ERROR_MESSAGE_MAX + 1)));
    expect(long.status).toBe(400);
    expect(long.body.error!.message).toBe(`request.message: longer than ${CLIENT_ERROR_MESSAGE_MAX} characters`);
    const kind = await s.post('reportClientError', { kind: 'boom', message: 'x' });
    expect(kind.body.error!.message).toBe('request.kind: expected one of render, error, rejection, got string');
    const extra = await s.post('reportClientError', { kind: 'error', message: 'x', html: '<p>' });
    expect(extra.body.error!.message).toBe("request: unexpected field 'html'");
    expect(s.log).toEqual([]);
  });
});

describe('ClientErrorLog', () => {
  it('bounds callers not signed in together, whatever addresses they come from', () => {
    const log: string[] = [];
    const now = 0;
    const c = new ClientErrorLog((l) => void log.push(l), () => now);
    const ids = Array.from({ length: 20 }, (_, i) => c.report({ user: null, source: `10.0.0.${i}` }, { kind: 'error', message: 'x' }));
    expect(ids.filter((id) => id !== null)).toHaveLength(6);
    c.flush(true);
    // Each address that was dropped says so once.
    expect(log.filter((l) => l.startsWith('client errors: 1 more from not signed in, from "10.0.0.'))).toHaveLength(14);
  });

  it('starts a new minute after the clock stepped back, not only once the clock has caught up', () => {
    const log: string[] = [];
    let now = Date.parse('2026-12-05T10:00:00Z');
    const c = new ClientErrorLog((l) => void log.push(l), () => now);
    const report = () => c.report({ user: 'Kari', session: 's1', source: 'loopback' }, { kind: 'error', message: 'x' });
    for (let i = 0; i < CLIENT_ERRORS_PER_SESSION_MINUTE; i++) expect(report()).not.toBeNull();
    expect(report()).toBeNull();
    // NTP sets the PC's clock back an hour; a minute later the screen's next failure is logged.
    now -= 3_600_000;
    now += 61_000;
    expect(report()).not.toBeNull();
    expect(log.filter((l) => l.startsWith('client errors: 1 more from user "Kari" dropped'))).toHaveLength(1);
  });
});
