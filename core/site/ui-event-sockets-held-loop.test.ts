// The site pings its event sockets and ends one that has not answered by the next round
// (ui-server.ts EVENTS_PING_MS). A page that answered in time must not be ended because the
// site's own event loop was held (a compaction, a long read) between the ping and the next round:
// after such a hold Node runs the due timers before it reads the sockets, so the pong that came
// meanwhile was still unread when the round judged, and every page's socket was ended at once.
// The page here is another process (it answers while this one is held); loopback only.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, stat, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { SiteBackend } from './api.ts';
import { UiServer } from './ui-server.ts';

let server: Server | undefined;
let ui: UiServer | undefined;
let child: ChildProcess | undefined;
let dir: string | undefined;
const realPing = WebSocket.prototype.ping;

afterEach(async () => {
  WebSocket.prototype.ping = realPing;
  if (child && child.exitCode === null) child.kill('SIGKILL');
  child = undefined;
  ui?.close();
  await new Promise<void>((r) => (server ? (server.close(() => r()), server.closeAllConnections()) : r()));
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// The page: opens the events socket, answers each ping 100 ms after it (a network's round trip),
// says when it opened and closed; ends itself after 30 s.
const PAGE = `
const { WebSocket } = require('ws');
const [url, origin, cookie] = process.argv.slice(1);
const ws = new WebSocket(url, { headers: { Origin: origin, Cookie: cookie }, autoPong: false });
ws.on('ping', (d) => setTimeout(() => ws.readyState === ws.OPEN && ws.pong(d), 100));
ws.on('open', () => console.log('open'));
ws.on('close', () => { console.log('close'); process.exit(0); });
ws.on('error', (e) => { console.log('error ' + e.message); process.exit(1); });
setTimeout(() => process.exit(0), 30000);
`;

it('keeps a socket that answered while the site was held between a ping and the next round', async () => {
  const pingMs = 800;
  dir = mkdtempSync(join(tmpdir(), 'ui-held-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>x</title>');
  const backend: SiteBackend = {
    async call(method, _req, session) {
      if (method !== 'signIn') return null as never;
      session.setUser({ name: 'lead', roles: ['viewer'] });
      return session.user as never;
    },
    subscribe: () => () => undefined,
    signedIn: (s) => s.user !== null,
  };
  ui = new UiServer(backend, { rendererDir: dir, secure: false, eventsPingMs: pingMs });
  server = createServer((req, res) => {
    if (!ui!.handle(req, res)) res.writeHead(404).end();
  });
  server.on('upgrade', (req, socket, head) => {
    if (!ui!.upgrade(req, socket, head)) socket.destroy();
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const r = await fetch(`${base}/api/signIn`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1' },
    body: JSON.stringify({ user: 'lead', secret: 'x' }),
    signal: AbortSignal.timeout(10_000),
  });
  expect(r.status).toBe(200);
  const cookie = r.headers.get('set-cookie')!.split(';')[0]!;

  child = spawn(process.execPath, ['-e', PAGE, `${base.replace('http', 'ws')}/api/events`, base, cookie], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  // Open within 20 s (200 × 100 ms).
  for (let i = 0; i < 200 && !out.includes('open') && !out.includes('error'); i++) await new Promise((res) => setTimeout(res, 100));
  expect(out).toContain('open');
  // Two rounds answered as usual.
  await new Promise((res) => setTimeout(res, 2 * pingMs + 100));
  expect(out).not.toContain('close');

  // Right after the next ping, an I/O callback (here a file's stat; on a site an MQTT packet whose
  // commit compacts) holds the loop for 1.3 rounds — less than a round "late" — and the page's
  // answer comes meanwhile: the next round is due before the loop reads it.
  let held = false;
  WebSocket.prototype.ping = function (this: WebSocket, ...a: Parameters<WebSocket['ping']>) {
    realPing.apply(this, a);
    if (!held) {
      held = true;
      stat(dir!, () => {
        const until = performance.now() + 1.3 * pingMs;
        while (performance.now() < until) {
          // held: a compaction, a long read
        }
      });
    }
  };
  // Four rounds after it (bounded): the page's socket is still open.
  for (let i = 0; i < 100 && !held; i++) await new Promise((res) => setTimeout(res, 20));
  expect(held).toBe(true);
  await new Promise((res) => setTimeout(res, 4 * pingMs));
  expect(out, 'the page answered every ping; its socket must not be ended').not.toContain('close');
});
