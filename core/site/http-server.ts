// The site's HTTP server (127.0.0.1 by default; HTTPS when `http.tls` is configured):
//   GET /metrics   Prometheus text exposition (no auth: it holds counts and ages, no names or rows)
//   GET /healthz   {"ok": true, "site": …} with 200 while the site runs
//   the UI         when a UiServer is given: `/`, `/assets/…`, `POST /api/<method>`, and the
//                  WebSocket `/api/events` (ui-server.ts owns their security)
// /metrics and /healthz are answered first and stay read-only (GET/HEAD only, else 405);
// anything nobody claims is 404.

import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

export interface HttpEndpoints {
  metrics(): string;
  health(): Record<string, unknown>;
  /** The UI (UiServer): claims its own paths and WebSocket upgrades. */
  ui?: {
    handle(req: IncomingMessage, res: ServerResponse): boolean;
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  };
}

export class SiteHttpServer {
  private readonly server: Server;
  private boundPort = 0;

  constructor(
    private readonly host: string,
    private readonly port: number,
    endpoints: HttpEndpoints,
    private readonly tls: { certPath: string; keyPath: string } | null = null,
  ) {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      const path = (req.url ?? '/').split('?')[0];
      const machine = path === '/metrics' || path === '/healthz';
      if (!machine && endpoints.ui?.handle(req, res)) return;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
        return;
      }
      try {
        if (path === '/metrics') {
          res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(req.method === 'HEAD' ? undefined : endpoints.metrics());
        } else if (path === '/healthz') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(req.method === 'HEAD' ? undefined : `${JSON.stringify(endpoints.health())}\n`);
        } else {
          res.writeHead(404, { 'content-type': 'text/plain' }).end('not found (try /metrics or /healthz)\n');
        }
      } catch (e) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(e as Error).message}\n`);
      }
    };
    this.server = tls ? createHttpsServer({ cert: readFileSync(tls.certPath), key: readFileSync(tls.keyPath) }, handler) : createServer(handler);
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (!endpoints.ui?.upgrade(req, socket, head)) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
    });
    this.server.keepAliveTimeout = 5_000;
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, this.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.boundPort = (this.server.address() as AddressInfo).port;
    return this.boundPort;
  }

  get boundTo(): { host: string; port: number; secure: boolean } {
    return { host: this.host, port: this.boundPort, secure: this.tls !== null };
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
  }
}
