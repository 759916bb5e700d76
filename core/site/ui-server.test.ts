import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { SiteApiError, type SessionContext, type SiteBackend, type SiteEvent } from './api.ts';
import { clientSource, SESSION_COOKIE, UiServer } from './ui-server.ts';

let server: Server | undefined;
let ui: UiServer | undefined;
/** The renderer folders `start` made, removed at the end. */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterEach(async () => {
  ui?.close();
  // closeAllConnections: a request a test left unanswered does not hold the close up.
  await new Promise<void>((r) => (server ? (server.close(() => r()), server.closeAllConnections()) : r()));
  server = undefined;
});

/** `answers`: what the backend does for a method instead of its usual answer (return a value, or throw). */
async function start(o: { now?: () => number; disabled?: Set<string>; idle?: Set<string>; answers?: Record<string, () => unknown>; log?: (line: string) => void } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ui-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>x</title>');
  writeFileSync(join(dir, 'assets', 'app.js'), 'console.log(1)');
  const listeners: Array<(e: SiteEvent) => void> = [];
  const inputs: unknown[] = [];
  /** Each sign-in's session source. */
  const sources: unknown[] = [];
  // As the site's service tells of an idle sign-out (service.ts `signedOutWhy`): once, at any call.
  const told = (session: SessionContext) => {
    const idle = session.signedOutIdle;
    if (!idle) return undefined;
    session.signedOutIdle = undefined;
    return new SiteApiError('unauthenticated', `${idle.user} was signed out`, idle.idleMs);
  };
  const backend: SiteBackend = {
    async call(method, req, session, input) {
      inputs.push(input);
      if (session.user && o.idle?.has(session.user.name)) {
        backend.signedIn!(session);
        throw told(session);
      }
      if (!session.user && method !== 'signIn') {
        const why = told(session);
        if (why) throw why;
      }
      if (method === 'signIn') {
        sources.push(session.source);
        const r = req as { user: string; secret: string };
        if (r.secret !== '1234') throw new SiteApiError('unauthenticated', 'wrong name or PIN');
        session.setUser({ name: r.user, roles: ['shift_lead'] });
        return session.user as never;
      }
      if (o.answers?.[method]) return o.answers[method]() as never;
      if (method === 'me') return session.user as never;
      if (method === 'signOut') {
        session.setUser(null);
        return { ok: true } as never;
      }
      return { method, user: session.user?.name } as never;
    },
    subscribe: (l) => {
      listeners.push(l);
      return () => undefined;
    },
    signedIn: (s) => {
      if (s.user && o.idle?.has(s.user.name)) {
        s.signedOutIdle = { user: s.user.name, idleMs: 600_000 };
        s.setUser(null);
      }
      return s.user !== null && !o.disabled?.has(s.user.name);
    },
  };
  ui = new UiServer(backend, { rendererDir: dir, secure: false, ...(o.now ? { now: o.now } : {}), ...(o.log ? { log: o.log } : {}) });
  server = createServer((req, res) => {
    if (!ui!.handle(req, res)) res.writeHead(404).end();
  });
  server.on('upgrade', (req, socket, head) => {
    if (!ui!.upgrade(req, socket, head)) socket.destroy();
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, emit: (e: SiteEvent) => listeners.forEach((l) => l(e)), inputs, sources };
}

// A call the server never answers fails its test in seconds instead of the test's timeout.
const post = (base: string, method: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}/api/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });

async function signIn(base: string): Promise<string> {
  const r = await post(base, 'signIn', { user: 'Kari', secret: '1234' });
  expect(r.status).toBe(200);
  const cookie = r.headers.get('set-cookie')!;
  expect(cookie).toMatch(new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Strict`));
  return cookie.split(';')[0]!;
}

/** A push the backend emits reaches an event socket the session opens now. */
async function pushArrives(base: string, cookie: string, emit: (e: { type: 'proposals'; changed: string[] }) => void): Promise<void> {
  const ws = new WebSocket(base.replace('http', 'ws') + '/api/events', { headers: { Origin: base, Cookie: cookie } });
  await new Promise((r) => ws.on('open', r));
  const got = new Promise((r) => ws.on('message', (m) => r(JSON.parse(String(m)))));
  emit({ type: 'proposals', changed: ['p1'] });
  expect(await got).toEqual({ type: 'proposals', changed: ['p1'] });
  ws.close();
}

describe('headless UI server', () => {
  it('refuses API calls without a session, and answers them after sign-in', async () => {
    const { base } = await start();
    const anon = await post(base, 'status', {});
    expect(anon.status).toBe(401);
    expect(await anon.json()).toEqual({ ok: false, error: { kind: 'unauthenticated', message: 'sign in first', code: 'session.required' } });
    expect((await post(base, 'signIn', { user: 'Kari', secret: 'bad' })).status).toBe(401);
    const cookie = await signIn(base);
    const r = await post(base, 'status', {}, { Cookie: cookie });
    expect(await r.json()).toEqual({ ok: true, value: { method: 'status', user: 'Kari' } });
    await post(base, 'signOut', {}, { Cookie: cookie });
    expect((await post(base, 'status', {}, { Cookie: cookie })).status).toBe(401);
  });

  it('refuses cross-site requests', async () => {
    const { base } = await start();
    const cookie = await signIn(base);
    const noHeader = await fetch(`${base}/api/status`, { method: 'POST', headers: { 'Content-Type': 'application/json', Cookie: cookie }, body: '{}' });
    expect(noHeader.status).toBe(403);
    expect((await post(base, 'status', {}, { Cookie: cookie, Origin: 'http://evil.invalid' })).status).toBe(403);
    const form = await fetch(`${base}/api/status`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Tilstand': '1', Cookie: cookie }, body: 'a=1' });
    expect(form.status).toBe(403);
    expect((await fetch(`${base}/api/status`, { headers: { Cookie: cookie } })).status).toBe(405);
  });

  it('gives its refusals of a request as a whole a code the floor UI words (api.ts request.refused), beside the English message', async () => {
    const { base } = await start();
    const cookie = await signIn(base);
    const refusal = async (r: Response) => [r.status, await r.json()];
    const refused = (status: number, kind: string, message: string) => [status, { ok: false, error: { kind, message, code: 'request.refused' } }];
    const crossSite = refused(403, 'forbidden', 'cross-site request refused');
    expect(await refusal(await fetch(`${base}/api/status`, { method: 'POST', headers: { 'Content-Type': 'application/json', Cookie: cookie }, body: '{}' }))).toEqual(crossSite);
    expect(await refusal(await post(base, 'status', {}, { Cookie: cookie, Origin: 'http://evil.invalid' }))).toEqual(crossSite);
    expect(await refusal(await fetch(`${base}/api/status`, { method: 'POST', headers: { 'Content-Type': 'text/plain', 'X-Tilstand': '1', Cookie: cookie }, body: '{}' }))).toEqual(crossSite);
    expect(await refusal(await fetch(`${base}/api/status`, { headers: { Cookie: cookie } }))).toEqual(refused(405, 'invalid', 'POST only'));
    const notJson = await fetch(`${base}/api/status`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1', Cookie: cookie }, body: '{"comment": "half' });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: unknown }).error).toMatchObject({ kind: 'invalid', code: 'request.refused' });
  });

  it('validates payloads', async () => {
    const { base } = await start();
    const cookie = await signIn(base);
    const bad = await post(base, 'decide', { id: 'p', decision: 'sure' }, { Cookie: cookie });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/decision/);
    expect((await post(base, 'nope', {}, { Cookie: cookie })).status).toBe(400);
  });

  it('answers a body over 64 KiB with 413 and Connection: close, not a reset connection', async () => {
    const { base } = await start();
    const cookie = await signIn(base);
    const port = Number(new URL(base).port);
    for (const size of [70_000, 2_000_000]) {
      const body = JSON.stringify({ x: 'y'.repeat(size) });
      // node:http, which writes the whole body whatever comes back first (as a browser may).
      const got = await new Promise<string>((resolve) => {
        const req = request({ host: '127.0.0.1', port, path: '/api/status', method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1', Cookie: cookie, 'Content-Length': Buffer.byteLength(body) } });
        req.on('response', (res) => {
          let text = '';
          res.on('data', (b: Buffer) => (text += b.toString()));
          res.on('end', () => resolve(`${res.statusCode} ${res.headers.connection} ${text}`));
        });
        req.on('error', (e: NodeJS.ErrnoException) => resolve(`error ${e.code ?? e.message}`));
        req.end(body);
      });
      expect(got, String(size)).toBe('413 close {"ok":false,"error":{"kind":"invalid","message":"request body over 65536 bytes","code":"request.tooLarge","params":{"max":65536}}}');
    }
    // The server goes on answering.
    expect((await post(base, 'status', {}, { Cookie: cookie })).status).toBe(200);
  });

  it("hands the backend each call's input age: the page's number, null for 'none', nothing without the header", async () => {
    const { base, inputs } = await start();
    const cookie = await signIn(base);
    inputs.length = 0;
    for (const age of ['1234', 'none', '0']) expect((await post(base, 'status', {}, { Cookie: cookie, 'X-Tilstand-Input-Age': age })).status).toBe(200);
    expect((await post(base, 'status', {}, { Cookie: cookie })).status).toBe(200);
    expect(inputs).toEqual([1234, null, 0, undefined]);
    // Anything else is refused before the backend sees the call.
    for (const age of ['-1', '1.5', 'soon', '']) {
      const r = await post(base, 'status', {}, { Cookie: cookie, 'X-Tilstand-Input-Age': age });
      expect(r.status, age).toBe(400);
      expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/^input age: expected 'none' or a whole number of milliseconds/);
    }
    expect(inputs).toHaveLength(4);
  });

  it("gives a sign-in's session the client's address as its source (badges count per source), whatever the request's headers say", async () => {
    const { base, sources } = await start();
    await post(base, 'signIn', { user: 'Kari', secret: 'bad' }, { 'X-Forwarded-For': '10.0.0.9' });
    await signIn(base);
    expect(sources).toEqual(['loopback', 'loopback']);
    // Every loopback address is the site PC's own screens: one source, not a fresh one per 127.x.
    for (const a of ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1']) expect(clientSource(a), a).toBe('loopback');
    expect(clientSource('::ffff:10.0.0.7')).toBe('10.0.0.7');
    expect(clientSource('10.0.0.7')).toBe('10.0.0.7');
    expect(clientSource('fe80::1')).toBe('fe80::1');
    expect(clientSource(undefined)).toBe('unknown');
  });

  it('serves the renderer with security headers and no path escape', async () => {
    const { base } = await start();
    const r = await fetch(`${base}/`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    expect((await fetch(`${base}/assets/app.js`)).headers.get('content-type')).toContain('javascript');
    expect((await fetch(`${base}/assets/..%2f..%2fetc%2fpasswd`)).status).toBe(404);
  });

  it('answers a malformed percent-escape in a static path with 400, leaving no unhandled rejection', async () => {
    const rejections: unknown[] = [];
    const onRejection = (e: unknown) => rejections.push(e);
    process.on('unhandledRejection', onRejection);
    try {
      const { base } = await start();
      const r = await fetch(`${base}/assets/%E0%A4%A`, { signal: AbortSignal.timeout(10_000) });
      expect(r.status).toBe(400);
      expect(r.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect((await fetch(`${base}/assets/app.js`)).status).toBe(200);
      await new Promise((r) => setImmediate(r));
      expect(rejections.map(String)).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });

  it('answers 500 to a call the backend fails in a way nobody foresaw, leaving no unhandled rejection', async () => {
    const rejections: unknown[] = [];
    const onRejection = (e: unknown) => rejections.push(e);
    process.on('unhandledRejection', onRejection);
    try {
      const log: string[] = [];
      const { base } = await start({
        answers: {
          tables: () => 10n, // a value JSON cannot carry
          tags: () => {
            throw null; // not an Error: no message to read
          },
        },
        log: (l) => void log.push(l),
      });
      const cookie = await signIn(base);
      // The client is told an id, not the error's text; the log has the error under that id.
      const generic = /^internal error \(id ([0-9a-f]{8})\); the site's log \(logs\/site\.log\) has the details under that id$/;
      const bigint = await post(base, 'tables', {}, { Cookie: cookie });
      expect(bigint.status).toBe(500);
      const bigintBody = (await bigint.json()) as { ok: false; error: { kind: string; message: string } };
      expect(bigintBody).toMatchObject({ ok: false, error: { kind: 'internal', message: expect.stringMatching(generic) } });
      expect(bigintBody.error.message).not.toMatch(/BigInt/);
      expect(log[0]).toMatch(new RegExp(`^internal error ${generic.exec(bigintBody.error.message)![1]} in tables \\(user Kari\\): TypeError: .*BigInt`));
      const thrown = await post(base, 'tags', { table: 'stock' }, { Cookie: cookie });
      expect(thrown.status).toBe(500);
      const thrownBody = (await thrown.json()) as { ok: false; error: { kind: string; message: string } };
      expect(thrownBody).toMatchObject({ ok: false, error: { kind: 'internal', message: expect.stringMatching(generic) } });
      expect(log[1]).toBe(`internal error ${generic.exec(thrownBody.error.message)![1]} in tags (user Kari): null`);
      expect(log).toHaveLength(2);
      await new Promise((r) => setImmediate(r));
      expect(rejections.map(String)).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });

  it('pushes events over a WebSocket only to signed-in sessions from the same origin', async () => {
    const { base, emit } = await start();
    const url = base.replace('http', 'ws') + '/api/events';
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url, { headers: { Origin: base } });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
    });
    expect(refused).toBe(403);
    await pushArrives(base, await signIn(base), emit);
  });

  it('closes an event socket whose page sends an over-size frame, and goes on', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      const { base, emit } = await start();
      const cookie = await signIn(base);
      const url = base.replace('http', 'ws') + '/api/events';
      // Over the socket's 4 KiB limit: the server's receiver fails it (as any malformed frame).
      const big = new WebSocket(url, { headers: { Origin: base, Cookie: cookie } });
      await new Promise((r) => big.on('open', r));
      const closed = new Promise<number>((r) => big.on('close', r));
      big.send('x'.repeat(5000));
      expect([1006, 1009]).toContain(await closed); // 1009 (too big) unless the server's close outran its frame
      expect(uncaught.map(String)).toEqual([]);
      // The server goes on answering and pushing to the sockets that behave.
      expect((await post(base, 'status', {}, { Cookie: cookie })).status).toBe(200);
      await pushArrives(base, cookie, emit);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('ends an event socket whose page stopped reading once a MiB of events waits for it, instead of holding them all', async () => {
    const { base, emit } = await start();
    const cookie = await signIn(base);
    const ws = new WebSocket(base.replace('http', 'ws') + '/api/events', { headers: { Origin: base, Cookie: cookie } });
    await new Promise((r) => ws.on('open', r));
    ws.pause(); // a page that reads nothing (stalled, or its network gone without a word)
    // 64 MiB: more than the kernel's socket buffers on both ends take in.
    const events = 64;
    const changed = ['x'.repeat(1024 * 1024)];
    for (let i = 0; i < events; i++) emit({ type: 'proposals', changed });
    let got = 0;
    const end = new Promise<string>((r) => {
      ws.on('message', () => ++got === events && r('every event held for it'));
      ws.on('close', () => r('closed'));
    });
    ws.resume();
    expect(await end).toBe('closed');
    expect(got).toBeLessThan(events);
  });

  it('closes an event socket once its session ends or its user may no longer sign in', async () => {
    let now = 1_000_000;
    const disabled = new Set<string>();
    const { base, emit } = await start({ now: () => now, disabled });
    const url = base.replace('http', 'ws') + '/api/events';
    const open = async (cookie: string) => {
      const ws = new WebSocket(url, { headers: { Origin: base, Cookie: cookie } });
      await new Promise((r) => ws.on('open', r));
      const got: unknown[] = [];
      ws.on('message', (m) => got.push(JSON.parse(String(m))));
      const closed = new Promise<number>((r, reject) => {
        const t = setTimeout(() => reject(new Error('the socket stayed open')), 5_000);
        ws.on('close', (code) => (clearTimeout(t), r(code)));
      });
      return { got, closed };
    };
    const settle = () => new Promise((r) => setTimeout(r, 50));
    // Disabled (or locked, or removed) while the page is open.
    const a = await open(await signIn(base));
    emit({ type: 'proposals', changed: ['p1'] });
    await settle();
    expect(a.got).toEqual([{ type: 'proposals', changed: ['p1'] }]);
    disabled.add('Kari');
    emit({ type: 'proposals', changed: ['p2'] });
    expect(await a.closed).toBe(4401);
    expect(a.got).toHaveLength(1);
    disabled.clear();
    // Signed out on another tab of the same session.
    const cookie = await signIn(base);
    const b = await open(cookie);
    await post(base, 'signOut', {}, { Cookie: cookie });
    emit({ type: 'proposals', changed: ['p3'] });
    expect(await b.closed).toBe(4401);
    expect(b.got).toEqual([]);
    // Idle longer than the session lives (12 h by default): the socket does not keep it alive.
    const c = await open(await signIn(base));
    now += 12 * 3_600_000 + 1;
    emit({ type: 'proposals', changed: ['p4'] });
    expect(await c.closed).toBe(4401);
    expect(c.got).toEqual([]);
  });

  it('keeps a session the site signed out for want of use until a call has said why, with the limit', async () => {
    const idle = new Set<string>();
    const { base, emit } = await start({ idle });
    const why = { ok: false, error: { kind: 'unauthenticated', message: 'Kari was signed out', idleMs: 600_000 } };
    // Signed out by the event push's check (the socket closed): the page's `me` is told, once.
    const idleOut = async (cookie: string) => {
      const ws = new WebSocket(base.replace('http', 'ws') + '/api/events', { headers: { Origin: base, Cookie: cookie } });
      await new Promise((r) => ws.on('open', r));
      const closed = new Promise<number>((r) => ws.on('close', r));
      idle.add('Kari');
      emit({ type: 'proposals', changed: ['p1'] });
      expect(await closed).toBe(4401);
      expect(ui!.sessionCount()).toBe(1);
      idle.clear();
    };
    const cookie = await signIn(base);
    await idleOut(cookie);
    const me = await post(base, 'me', {}, { Cookie: cookie });
    expect(me.status).toBe(401);
    expect(await me.json()).toEqual(why);
    expect(ui!.sessionCount()).toBe(0);
    expect(await (await post(base, 'me', {}, { Cookie: cookie })).json()).toEqual({ ok: true, value: null });
    // Told by another call: the session reaches the backend though nobody is signed in.
    const again = await signIn(base);
    await idleOut(again);
    const status = await post(base, 'status', {}, { Cookie: again });
    expect(status.status).toBe(401);
    expect(await status.json()).toEqual(why);
    expect(ui!.sessionCount()).toBe(0);
    expect(await (await post(base, 'status', {}, { Cookie: again })).json()).toEqual({ ok: false, error: { kind: 'unauthenticated', message: 'sign in first', code: 'session.required' } });
    // Told by the call that found it, in the backend's own check.
    const found = await signIn(base);
    idle.add('Kari');
    expect(await (await post(base, 'listProposals', {}, { Cookie: found })).json()).toEqual(why);
    expect(ui!.sessionCount()).toBe(0);
    idle.clear();
    // A plain sign-out keeps nothing.
    const third = await signIn(base);
    await post(base, 'signOut', {}, { Cookie: third });
    expect(ui!.sessionCount()).toBe(0);
  });

  it('gives every sign-in a new token and ends the session its request came with; a failed sign-in changes nothing', async () => {
    const { base } = await start();
    const tokenOf = (r: Response) => r.headers.get('set-cookie')?.split(';')[0];
    const me = async (cookie: string) => ((await (await post(base, 'me', {}, { Cookie: cookie })).json()) as { value: { name: string } | null }).value;
    const vera = tokenOf(await post(base, 'signIn', { user: 'Vera', secret: '1234' }))!;
    expect(vera).toMatch(new RegExp(`^${SESSION_COOKIE}=`));
    // Ada signs in on a browser that carries Vera's token (planted there, or the PC's last session).
    const signedIn = await post(base, 'signIn', { user: 'Ada', secret: '1234' }, { Cookie: vera });
    expect(signedIn.status).toBe(200);
    const ada = tokenOf(signedIn)!;
    expect(ada).toMatch(new RegExp(`^${SESSION_COOKIE}=`));
    expect(ada).not.toBe(vera);
    expect(await me(ada)).toMatchObject({ name: 'Ada' });
    expect(await me(vera)).toBeNull();
    expect((await post(base, 'status', {}, { Cookie: vera })).status).toBe(401);
    // A wrong PIN on Ada's browser sends no cookie and leaves her signed in.
    const wrong = await post(base, 'signIn', { user: 'Vera', secret: '0000' }, { Cookie: ada });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect(await me(ada)).toMatchObject({ name: 'Ada' });
    expect(ui!.sessionCount()).toBe(1);
  });

  it('keeps no session for a failed sign-in, and drops sessions idle longer than they live', async () => {
    let now = 1_000_000;
    const { base } = await start({ now: () => now });
    for (let i = 0; i < 20; i++) expect((await post(base, 'signIn', { user: 'Kari', secret: '0000' })).status).toBe(401);
    expect(ui!.sessionCount()).toBe(0);
    await signIn(base);
    await signIn(base);
    expect(ui!.sessionCount()).toBe(2);
    now += 12 * 3_600_000 + 1;
    await signIn(base);
    expect(ui!.sessionCount()).toBe(1);
  });
});
