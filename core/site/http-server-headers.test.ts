// Every answer of the site's HTTP server carries nosniff, a Content-Security-Policy that refuses
// framing, and no-store — not only the UI's pages: /metrics, /healthz, the 404 of a path nobody
// claims, 405, 421, 500, and the UI's own 404 for a path that climbs out of the renderer folder
// (which went out with no headers at all, not even a content type). Against the real
// SiteHttpServer and UiServer on loopback.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SiteHttpServer } from './http-server.ts';
import { UI_CONTENT_SECURITY_POLICY, UiServer } from './ui-server.ts';

let server: SiteHttpServer | undefined;
let ui: UiServer | undefined;
const dirs: string[] = [];
afterEach(async () => {
  ui?.close();
  ui = undefined;
  await server?.close();
  server = undefined;
});
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function start(o: { metrics?: () => string } = {}): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'http-headers-'));
  dirs.push(dir);
  const renderer = join(dir, 'renderer');
  mkdirSync(join(renderer, 'assets'), { recursive: true });
  writeFileSync(join(renderer, 'index.html'), '<!doctype html><title>x</title>');
  // What a path that climbs out of the renderer folder would reach.
  writeFileSync(join(dir, 'secret.txt'), 'not for the browser');
  ui = new UiServer({ call: async () => null as never, subscribe: () => () => undefined }, { rendererDir: renderer, secure: false, log: () => undefined });
  server = new SiteHttpServer('127.0.0.1', 0, { metrics: o.metrics ?? (() => 'tilstand_site_up 1\n'), health: () => ({ ok: true }), log: () => undefined, ui });
  return server.listen();
}

/** One request (10 s at most); resolves its status and headers. */
function send(port: number, method: string, path: string, host = `127.0.0.1:${port}`): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { host }, timeout: 10_000 });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

function expectGuarded(r: { status: number; headers: Record<string, unknown> }, what: string): void {
  expect(r.headers['x-content-type-options'], what).toBe('nosniff');
  expect(String(r.headers['content-security-policy'] ?? ''), what).toContain("frame-ancestors 'none'");
  expect(r.headers['cache-control'], what).toBe('no-store');
  expect(r.headers['content-type'], what).toBeDefined();
}

describe('SiteHttpServer response headers', () => {
  it('guards every answer: the machine endpoints, 404, 405, 421, and a path that climbs out of the renderer', async () => {
    const port = await start();
    const answers: Array<[string, number, Awaited<ReturnType<typeof send>>]> = [
      ['GET /metrics', 200, await send(port, 'GET', '/metrics')],
      ['GET /healthz', 200, await send(port, 'GET', '/healthz')],
      ['HEAD /healthz', 200, await send(port, 'HEAD', '/healthz')],
      ['POST /metrics', 405, await send(port, 'POST', '/metrics')],
      ['GET /nothing-here', 404, await send(port, 'GET', '/nothing-here')],
      ['GET / as a rebound name', 421, await send(port, 'GET', '/', `evil.example:${port}`)],
      ['GET /assets/..%2f..%2fsecret.txt', 404, await send(port, 'GET', '/assets/..%2f..%2fsecret.txt')],
      ['GET /assets/%2e%2e/%2e%2e/secret.txt', 404, await send(port, 'GET', '/assets/%2e%2e/%2e%2e/secret.txt')],
    ];
    for (const [what, status, r] of answers) {
      expect(r.status, what).toBe(status);
      expectGuarded(r, what);
    }
  });

  it("leaves the UI's answers their own CSP (the guard's default-src 'none' would stop the page's scripts)", async () => {
    const port = await start();
    for (const path of ['/', '/index.html', '/assets/missing.js']) {
      const r = await send(port, 'GET', path);
      expect(r.headers['content-security-policy'], path).toBe(UI_CONTENT_SECURITY_POLICY);
      expect(r.headers['x-content-type-options'], path).toBe('nosniff');
    }
  });

  it('guards the 500 of a failing /metrics too', async () => {
    const port = await start({
      metrics: () => {
        throw new Error('journal.db: disk I/O error');
      },
    });
    const r = await send(port, 'GET', '/metrics');
    expect(r.status).toBe(500);
    expectGuarded(r, 'GET /metrics (failing)');
  });
});
