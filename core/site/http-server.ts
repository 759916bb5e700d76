// The site's HTTP server (127.0.0.1 by default; HTTPS when `http.tls` is configured):
//   GET /metrics   Prometheus text exposition (no auth: it holds counts and ages, no names or rows)
//   GET /healthz   {"ok": true, "site": …} with 200 while the site runs
//   the UI         when a UiServer is given: `/`, `/assets/…`, `POST /api/<method>`, and the
//                  WebSocket `/api/events` (ui-server.ts owns their security)
// /metrics and /healthz are answered first and stay read-only (GET/HEAD only, else 405);
// anything nobody claims is 404. One that fails answers 500 with an error id, never the error's
// text (paths, a decoder's complaint); `HttpEndpoints.log` gets the whole error under the id.
// Every answer carries nosniff, no-store and a CSP under which nothing runs or frames it
// (`GUARD_HEADERS`; the UI's answers carry the UI's own CSP instead).
//
// DNS rebinding: a web page of another name (evil.example) whose name is made to resolve to
// 127.0.0.1 reaches a loopback server as "same origin" — its requests carry Origin and Host
// evil.example:8470, which agree — and could drive the first-run screen's initSite or try PINs.
// So plain HTTP (loopback only: a non-loopback host needs TLS, config.ts) answers only requests
// whose Host names a loopback address or `localhost` (421 otherwise, upgrades too). Over TLS the
// certificate does that job: a rebound name fails the browser's certificate check.

/** The Host header's host name, without the port and brackets; undefined when it is absent. */
function hostName(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') === -1 ? undefined : h.indexOf(']'));
  const colon = h.lastIndexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}

/** A Host a plain-HTTP site answers: 127.0.0.0/8, ::1, localhost (or a name under .localhost), or its own bind address. */
export function loopbackHost(header: string | undefined, bindHost: string): boolean {
  const name = hostName(header);
  if (name === undefined) return true; // HTTP/1.0 without Host: no browser sends that
  if (name === bindHost.toLowerCase()) return true;
  return name === 'localhost' || name.endsWith('.localhost') || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);
}

const MISDIRECTED = 'this site answers plain HTTP only as 127.0.0.1, localhost or [::1] (a page of another name that resolves here is refused)\n';

/**
 * Set on every answer before anything else is written: /metrics, /healthz, 404, 405, 421 and 500
 * are never pages, so nothing may run, load or frame in them, nor a browser take them for another
 * type or keep them. The UI's answers write their own (ui-server.ts SECURITY_HEADERS), which take
 * precedence over these (Node merges `setHeader` under `writeHead`'s).
 */
const GUARD_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { logToStderr, reportInternalError } from './internal-error.ts';
import { clientSource } from './ui-server.ts';

/**
 * Open connections a site served over TLS keeps (the site network reaches it): at most this many
 * from one source (`clientSource`: an address; loopback as one) and in all. Without a cap a
 * client that opened connections and sent nothing (each kept up to the TLS handshake's 120 s,
 * and again once it had) took file descriptors until the site's process had none left for its
 * journal, tables and broker. A browser keeps 6 and an event socket a tab; a connection over
 * either limit is closed at once (before the TLS handshake), logged once a minute.
 */
export const TLS_CONNECTIONS_PER_SOURCE_MAX = 64;
export const TLS_CONNECTIONS_MAX = 256;

export interface HttpEndpoints {
  metrics(): string;
  health(): Record<string, unknown>;
  /** The site's log (logs/site.log): a failing /metrics or /healthz is written here under its error id; stderr when absent. */
  log?: (line: string) => void;
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
      for (const [name, value] of Object.entries(GUARD_HEADERS)) res.setHeader(name, value);
      if (!tls && !loopbackHost(req.headers.host, host)) {
        res.writeHead(421, { 'content-type': 'text/plain', connection: 'close' }).end(MISDIRECTED);
        return;
      }
      const path = (req.url ?? '/').split('?')[0];
      const machine = path === '/metrics' || path === '/healthz';
      if (!machine && endpoints.ui?.handle(req, res)) return;
      // 405 says the path exists; only these two do here (anything else nobody claimed is 404).
      if (machine && req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
        return;
      }
      try {
        // Each body is made before its head is written: one that fails then answers 500 below
        // (writing a second head would throw out of this handler and end the site's process).
        if (path === '/metrics') {
          const body = req.method === 'HEAD' ? undefined : endpoints.metrics();
          res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(body);
        } else if (path === '/healthz') {
          const body = req.method === 'HEAD' ? undefined : `${JSON.stringify(endpoints.health())}\n`;
          res.writeHead(200, { 'content-type': 'application/json' }).end(body);
        } else {
          res.writeHead(404, { 'content-type': 'text/plain' }).end('not found (try /metrics or /healthz)\n');
        }
      } catch (e) {
        // Unauthenticated, and reachable from the site network when served over TLS: the error's
        // text (paths, a decoder's complaint) goes to the log under an id, the client gets the id.
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`${reportInternalError(endpoints.log ?? logToStderr, path, e)}\n`);
      }
    };
    this.server = tls ? createHttpsServer({ cert: readFileSync(tls.certPath), key: readFileSync(tls.keyPath) }, handler) : createServer(handler);
    if (tls) this.capConnections(endpoints.log ?? logToStderr);
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      // Node hands the socket over without its own error handling: a client that resets it (after
      // a refusal below, or ui-server's) would raise an 'error' nobody listens to, ending the process.
      socket.on('error', () => socket.destroy());
      if (!tls && !loopbackHost(req.headers.host, host)) {
        socket.end(`HTTP/1.1 421 Misdirected Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${MISDIRECTED}`);
        return;
      }
      if (!endpoints.ui?.upgrade(req, socket, head)) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
    });
    this.server.keepAliveTimeout = 5_000;
  }

  /** `TLS_CONNECTIONS_PER_SOURCE_MAX` and `TLS_CONNECTIONS_MAX` on the raw connections, before their TLS handshake. */
  private capConnections(log: (line: string) => void): void {
    const open = new Map<string, number>();
    let total = 0;
    let lastLogMs = -Infinity;
    let refusedSinceLog = 0;
    this.server.on('connection', (socket: Socket) => {
      const source = clientSource(socket.remoteAddress);
      const fromThere = open.get(source) ?? 0;
      if (fromThere >= TLS_CONNECTIONS_PER_SOURCE_MAX || total >= TLS_CONNECTIONS_MAX) {
        socket.destroy();
        refusedSinceLog++;
        const now = performance.now();
        if (now - lastLogMs >= 60_000) {
          lastLogMs = now;
          const why = fromThere >= TLS_CONNECTIONS_PER_SOURCE_MAX ? `${fromThere} open from there (at most ${TLS_CONNECTIONS_PER_SOURCE_MAX} a source)` : `${total} open in all (at most ${TLS_CONNECTIONS_MAX})`;
          log(`http: refused a connection from ${source}: ${why}; ${refusedSinceLog} refused since the last such line`);
          refusedSinceLog = 0;
        }
        return;
      }
      open.set(source, fromThere + 1);
      total++;
      socket.once('close', () => {
        total--;
        const n = (open.get(source) ?? 1) - 1;
        if (n === 0) open.delete(source);
        else open.set(source, n);
      });
    });
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
