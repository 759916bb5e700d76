// The site's HTTP server (127.0.0.1 by default): read-only endpoints for machines.
//   GET /metrics   Prometheus text exposition (no auth: it holds counts and ages, no names or rows)
//   GET /healthz   {"ok": true, "site": …} with 200 while the site runs
// Anything else is 404; a method other than GET/HEAD is 405. The headless UI's API joins later.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpEndpoints {
  metrics(): string;
  health(): Record<string, unknown>;
}

export class SiteHttpServer {
  private readonly server: Server;
  private boundPort = 0;

  constructor(
    private readonly host: string,
    private readonly port: number,
    endpoints: HttpEndpoints,
  ) {
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
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

  get boundTo(): { host: string; port: number } {
    return { host: this.host, port: this.boundPort };
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
  }
}
