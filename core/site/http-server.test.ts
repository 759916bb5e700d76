// The site's HTTP server against DNS rebinding: over plain HTTP (loopback) it answers only a Host
// that names a loopback address or localhost — a page of another name made to resolve to
// 127.0.0.1 gets 421, for the UI, the API, /metrics and WebSocket upgrades alike.
import { request, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loopbackHost, SiteHttpServer } from './http-server.ts';

let server: SiteHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** `metrics`: what /metrics answers instead (return a text, or throw). */
async function start(o: { metrics?: () => string } = {}): Promise<{ port: number; seen: string[] }> {
  const seen: string[] = [];
  server = new SiteHttpServer('127.0.0.1', 0, {
    metrics: o.metrics ?? (() => 'tilstand_site_up 1\n'),
    health: () => ({ ok: true }),
    ui: {
      handle: (req, res) => {
        if (!(req.url ?? '').startsWith('/api/')) return false;
        seen.push(req.url!);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        return true;
      },
      upgrade: (req, socket) => {
        if (req.url !== '/api/events') return false;
        seen.push('upgrade');
        socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
        return true;
      },
    },
  });
  return { port: await server.listen(), seen };
}

/** One request to 127.0.0.1:port with the given Host header; resolves status and body. */
function get(port: number, path: string, host: string, o: { method?: string; upgrade?: boolean } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: o.method ?? 'GET', headers: { host, ...(o.upgrade ? { connection: 'Upgrade', upgrade: 'websocket' } : {}) } });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (b: Buffer) => (body += b.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('upgrade', (res, socket: Socket) => {
      socket.destroy();
      resolve({ status: res.statusCode!, body: '' });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('SiteHttpServer over plain HTTP', () => {
  it('answers the loopback names', async () => {
    const { port, seen } = await start();
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'LOCALHOST', `127.0.0.2:${port}`, `app.localhost:${port}`]) {
      expect((await get(port, '/metrics', host)).status, host).toBe(200);
    }
    expect((await get(port, '/api/status', `127.0.0.1:${port}`, { method: 'POST' })).status).toBe(200);
    expect(seen).toEqual(['/api/status']);
  });

  it('refuses a rebound name with 421, before the UI, the API or an upgrade sees it', async () => {
    const { port, seen } = await start();
    for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1.evil.example:${port}`, `localhost.evil.example:${port}`, `10.0.0.5:${port}`]) {
      const r = await get(port, '/api/initSite', host, { method: 'POST' });
      expect(r.status, host).toBe(421);
      expect(r.body).toMatch(/answers plain HTTP only as 127\.0\.0\.1, localhost or \[::1\]/);
      expect((await get(port, '/metrics', host)).status, host).toBe(421);
    }
    expect((await get(port, '/api/events', `evil.example:${port}`, { upgrade: true })).status).toBe(421);
    expect(seen).toEqual([]);
  });
});

describe('SiteHttpServer paths', () => {
  it('answers 405 to a method other than GET or HEAD only on /metrics and /healthz; a path nobody claims is 404 for any method', async () => {
    const { port } = await start();
    const host = `127.0.0.1:${port}`;
    for (const path of ['/metrics', '/healthz']) {
      expect((await get(port, path, host, { method: 'POST' })).status, path).toBe(405);
      expect((await get(port, path, host, { method: 'HEAD' })).status, path).toBe(200);
    }
    for (const method of ['GET', 'POST', 'PUT', 'DELETE']) expect((await get(port, '/nothing-here', host, { method })).status, method).toBe(404);
  });
});

describe('SiteHttpServer failures', () => {
  it('answers 500 when /metrics fails, and goes on answering', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      const { port } = await start({
        metrics: () => {
          throw new Error('journal.db: disk I/O error');
        },
      });
      const r = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) });
      expect(r.status).toBe(500);
      // The error's own text stays in the log (internal-errors.test.ts), not in the answer.
      expect(await r.text()).toMatch(/^internal error \(id [0-9a-f]{8}\)[^\n]*\n$/);
      expect((await get(port, '/healthz', `127.0.0.1:${port}`)).status).toBe(200);
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('survives a client that resets the connection of an upgrade it refused (421, 403 or 404)', async () => {
    const uncaught: unknown[] = [];
    let woken: (() => void) | undefined;
    const onUncaught = (e: unknown) => (uncaught.push(e), woken?.());
    process.on('uncaughtException', onUncaught);
    try {
      const { port } = await start();
      const node = (server as unknown as { server: Server }).server;
      for (const [path, host, status] of [
        ['/api/events', `evil.example:${port}`, 421],
        ['/api/events', `127.0.0.1:${port}`, 403],
        ['/elsewhere', `127.0.0.1:${port}`, 404],
      ] as const) {
        const serverSide = new Promise<Socket>((r) => node.once('connection', r));
        const client = connect(port, '127.0.0.1');
        client.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n`);
        const answer = await new Promise<string>((r) => client.once('data', (b: Buffer) => r(b.toString())));
        expect(answer, path).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
        const socket = await serverSide;
        // The server's socket closes, or the reset becomes an error nobody handles (which ends the process).
        const done = new Promise<void>((r) => {
          woken = r;
          socket.once('close', () => r());
        });
        client.resetAndDestroy();
        await done;
      }
      expect(uncaught.map(String)).toEqual([]);
      expect((await get(port, '/metrics', `127.0.0.1:${port}`)).status).toBe(200);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});

describe('loopbackHost', () => {
  it('takes the name from the Host header, ports and brackets aside', () => {
    expect(loopbackHost('127.0.0.1:8470', '127.0.0.1')).toBe(true);
    expect(loopbackHost('[::1]:8470', '127.0.0.1')).toBe(true);
    expect(loopbackHost(undefined, '127.0.0.1')).toBe(true);
    expect(loopbackHost('floor-pc-3:8470', 'floor-pc-3')).toBe(true); // its own bind name
    expect(loopbackHost('127.0.0.1.nip.example:8470', '127.0.0.1')).toBe(false);
    expect(loopbackHost('[::2]:8470', '127.0.0.1')).toBe(false);
    expect(loopbackHost('128.0.0.1', '127.0.0.1')).toBe(false);
  });
});
