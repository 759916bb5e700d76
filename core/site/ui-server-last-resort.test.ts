// The UI server's last resort: a failure outside the API handler's own catch (in its catch, or
// before its try) answers like every other internal error — a generic text and an 8-hex id, the
// whole error in the log under that id (internal-error.ts) — not a bare "internal error" that no
// log line matches. Reached here two ways a real server can meet: a backend's SiteApiError of a
// kind the server has no status for (its 500 answer itself throws, inside the catch), and a
// failing clock (the session lookup runs before the try).

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SiteApiError, type SiteBackend } from './api.ts';
import { answered, UiServer, type UiServerOptions } from './ui-server.ts';

const GENERIC = /^internal error \(id ([0-9a-f]{8})\); the site's log \(logs\/site\.log\) has the details under that id$/;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  vi.restoreAllMocks();
});

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server: Server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A UiServer whose backend answers every call with `call`. */
async function uiServer(call: () => Promise<never>, o: Partial<UiServerOptions> = {}): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'ui-last-resort-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const backend: SiteBackend = { call, subscribe: () => () => undefined };
  const ui = new UiServer(backend, { rendererDir: dir, secure: false, ...o });
  cleanups.push(() => ui.close());
  return listen((req, res) => {
    if (!ui.handle(req, res)) res.writeHead(404).end();
  });
}

const firstRun = (base: string) =>
  fetch(`${base}/api/firstRun`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1' },
    body: '{}',
    signal: AbortSignal.timeout(10_000),
  });

async function genericId(r: Response): Promise<string> {
  expect(r.status).toBe(500);
  const body = (await r.json()) as { ok: boolean; error: { kind: string; message: string } };
  expect(body.ok).toBe(false);
  expect(body.error.kind).toBe('internal');
  expect(body.error.message).toMatch(GENERIC);
  return GENERIC.exec(body.error.message)![1]!;
}

describe('UiServer: the last-resort 500', () => {
  it("a SiteApiError of a kind with no status (the catch's own answer throws): an id, the log has the whole error under it", async () => {
    const log: string[] = [];
    const base = await uiServer(async () => {
      throw new SiteApiError('exploded' as never, 'secret detail /data/dir/x');
    }, { log: (l) => void log.push(l) });
    const r = await firstRun(base);
    const id = await genericId(r);
    expect(log).toHaveLength(1);
    // The error that escaped is writeHead's (no status for the kind), logged with its stack.
    expect(log[0]).toMatch(new RegExp(`^internal error ${id} in POST /api/firstRun: .*[Ss]tatus code`));
    expect(log[0]).not.toContain('\n');
  });

  it('a failing clock before the API call is checked: the same generic answer and a log line under its id', async () => {
    const log: string[] = [];
    const base = await uiServer(async () => null as never, {
      log: (l) => void log.push(l),
      now: () => {
        throw new Error('clock source gone');
      },
    });
    const id = await genericId(await firstRun(base));
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(new RegExp(`^internal error ${id} in POST /api/firstRun: Error: clock source gone`));
  });

  it('without a log option the line goes to stderr', async () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    const base = await uiServer(async () => {
      throw new SiteApiError('exploded' as never, 'x');
    });
    const id = await genericId(await firstRun(base));
    expect(written.some((w) => w.startsWith(`internal error ${id} in POST /api/firstRun: `) && w.endsWith('\n'))).toBe(true);
  });

  it('a failure after the head went out cuts the response off and still logs the whole error', async () => {
    const log: string[] = [];
    const base = await listen((_req, res) => {
      answered(
        res,
        (async () => {
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          res.write('partial');
          await new Promise((r) => setTimeout(r, 10));
          throw new Error('failed mid-answer');
        })(),
        (l) => void log.push(l),
        'GET /assets/app.js',
      );
    });
    const r = await fetch(`${base}/assets/app.js`, { signal: AbortSignal.timeout(10_000) });
    expect(r.status).toBe(200);
    await expect(r.text()).rejects.toThrow();
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(/^internal error [0-9a-f]{8} in GET \/assets\/app\.js \(response cut off\): Error: failed mid-answer/);
  });
});
