// A user's event sockets on the headless server are bounded (16, all their sessions together): each
// may hold up to a MiB of pushes its page leaves unread, so one account that opened thousands and
// read none grew the site's memory without end. Against the real UiServer on loopback.
//
// A socket its page gave up on (half-open after a network blip or a laptop's sleep: the page's
// watchdog opens another, renderer/src/api/client.ts) must stop counting: the server pings its
// sockets and ends one that does not answer, instead of holding it until TCP gives up (hours).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { SiteApiError, type SiteBackend, type SiteEvent } from './api.ts';
import { UiServer } from './ui-server.ts';

let server: Server | undefined;
let ui: UiServer | undefined;
const dirs: string[] = [];
const sockets: WebSocket[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  ui?.close();
  await new Promise<void>((r) => (server ? (server.close(() => r()), server.closeAllConnections()) : r()));
  server = undefined;
});

async function start(o: { eventsPingMs?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ui-sockets-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>x</title>');
  const listeners: Array<(e: SiteEvent) => void> = [];
  const backend: SiteBackend = {
    async call(method, req, session) {
      if (method !== 'signIn') return null as never;
      const r = req as { user: string; secret: string };
      if (r.secret !== '2580') throw new SiteApiError('unauthenticated', 'sign-in refused: wrong name, PIN or password');
      session.setUser({ name: r.user, roles: ['viewer'] });
      return session.user as never;
    },
    subscribe: (l) => (listeners.push(l), () => undefined),
    signedIn: (s) => s.user !== null,
  };
  ui = new UiServer(backend, { rendererDir: dir, secure: false, ...o });
  server = createServer((req, res) => {
    if (!ui!.handle(req, res)) res.writeHead(404).end();
  });
  server.on('upgrade', (req, socket, head) => {
    if (!ui!.upgrade(req, socket, head)) socket.destroy();
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, emit: (e: SiteEvent) => listeners.forEach((l) => l(e)) };
}

async function signIn(base: string, user: string): Promise<string> {
  const r = await fetch(`${base}/api/signIn`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1' },
    body: JSON.stringify({ user, secret: '2580' }),
    signal: AbortSignal.timeout(10_000),
  });
  expect(r.status).toBe(200);
  return r.headers.get('set-cookie')!.split(';')[0]!;
}

/** Opens an event socket: resolves it once open, or the status of the refused upgrade (5 s at most). */
function connect(base: string, cookie: string, o: { autoPong?: boolean } = {}): Promise<WebSocket | number> {
  const ws = new WebSocket(base.replace('http', 'ws') + '/api/events', { headers: { Origin: base, Cookie: cookie }, ...o });
  sockets.push(ws);
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('no answer to the upgrade in 5 s')), 5_000);
    ws.on('open', () => (clearTimeout(t), resolve(ws)));
    ws.on('unexpected-response', (_req, res) => (clearTimeout(t), res.resume(), resolve(res.statusCode!)));
    ws.on('error', () => undefined);
  });
}

describe('event sockets per user', () => {
  it('opens at most 16 for one user across their sessions, refuses the next with 429, and opens one again once one has closed', async () => {
    const { base, emit } = await start();
    // Two sessions of one user (two sign-ins without the cookie), eight sockets each.
    const first = await signIn(base, 'kari');
    const second = await signIn(base, 'kari');
    const open: WebSocket[] = [];
    for (let i = 0; i < 16; i++) {
      const r = await connect(base, i % 2 === 0 ? first : second);
      expect(r, `socket ${i + 1}`).toBeInstanceOf(WebSocket);
      open.push(r as WebSocket);
    }
    expect(await connect(base, first)).toBe(429);
    expect(await connect(base, second)).toBe(429);
    // Another user is not held back by kari's.
    expect(await connect(base, await signIn(base, 'per'))).toBeInstanceOf(WebSocket);
    // The sockets open still get the pushes.
    const got = new Promise((r) => open[15]!.once('message', (m) => r(JSON.parse(String(m)))));
    emit({ type: 'proposals', changed: ['p1'] });
    expect(await got).toEqual({ type: 'proposals', changed: ['p1'] });
    // One closes: once the server has seen it go (bounded: 100 × 20 ms), kari opens one again.
    const closed = new Promise((r) => open[0]!.once('close', r));
    open[0]!.close();
    await closed;
    let again: WebSocket | number = 429;
    for (let i = 0; i < 100 && again === 429; i++) {
      await new Promise((r) => setTimeout(r, 20));
      again = await connect(base, first);
    }
    expect(again).toBeInstanceOf(WebSocket);
  });
});

/** Tries to open an event socket every 20 ms until it opens, for at most `ms`; the last answer. */
async function connectWithin(base: string, cookie: string, ms: number): Promise<WebSocket | number> {
  const until = Date.now() + ms;
  let r: WebSocket | number = 429;
  for (let i = 0; i < 1_000 && Date.now() < until; i++) {
    r = await connect(base, cookie);
    if (r !== 429) return r;
    await new Promise((res) => setTimeout(res, 20));
  }
  return r;
}

describe('event sockets whose page is gone', () => {
  it('ends sockets that do not answer the pings, so 16 half-open ones no longer lock the user out', async () => {
    const pingMs = 100;
    const { base } = await start({ eventsPingMs: pingMs });
    const cookie = await signIn(base, 'lead');
    // 16 sockets whose page is gone: nothing answers a ping, and nothing is read any more.
    const dead: WebSocket[] = [];
    for (let i = 0; i < 16; i++) {
      const r = await connect(base, cookie, { autoPong: false });
      expect(r, `socket ${i + 1}`).toBeInstanceOf(WebSocket);
      dead.push(r as WebSocket);
      (r as unknown as { _socket: { pause(): void } })._socket.pause();
    }
    // Held at first: the cap stands.
    expect(await connect(base, cookie)).toBe(429);
    // Within a few ping rounds (bounded: 20 rounds) the dead ones are ended and the page's next socket opens.
    const again = await connectWithin(base, cookie, 20 * pingMs);
    expect(again, 'the 17th socket, once the dead ones stopped counting').toBeInstanceOf(WebSocket);
  });

  it('keeps sockets that answer the pings, and still refuses the 17th', async () => {
    const pingMs = 100;
    const { base, emit } = await start({ eventsPingMs: pingMs });
    const cookie = await signIn(base, 'lead');
    const live: WebSocket[] = [];
    let closes = 0;
    for (let i = 0; i < 16; i++) {
      const r = await connect(base, cookie);
      expect(r, `socket ${i + 1}`).toBeInstanceOf(WebSocket);
      (r as WebSocket).on('close', () => closes++);
      live.push(r as WebSocket);
    }
    let pings = 0;
    live[0]!.on('ping', () => pings++);
    // Ten ping rounds: every socket answers, none is ended, and the cap still holds.
    await new Promise((r) => setTimeout(r, 10 * pingMs));
    expect(pings).toBeGreaterThanOrEqual(3);
    expect(closes).toBe(0);
    expect(live.every((ws) => ws.readyState === ws.OPEN)).toBe(true);
    expect(await connect(base, cookie)).toBe(429);
    const got = new Promise((r) => live[15]!.once('message', (m) => r(JSON.parse(String(m)))));
    emit({ type: 'proposals', changed: ['p2'] });
    expect(await got).toEqual({ type: 'proposals', changed: ['p2'] });
  });
});
