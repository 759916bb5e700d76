// The UI server's own answer to a failure that is no SiteApiError (backends other than the
// SiteService, which answers such failures itself): a generic text with an error id, never the
// error's text; the log (the `log` option, stderr without one) has the whole error under the id.
// The first-run screen is the case that matters: before a site exists, a client that is not
// signed in calls initSite, and a file-system error names a path of the data directory.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FirstRunBackend } from './first-run.ts';
import { UiServer, type UiServerOptions } from './ui-server.ts';

const GENERIC = /^internal error \(id ([0-9a-f]{8})\); the site's log \(logs\/site\.log\) has the details under that id$/;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  vi.restoreAllMocks();
});

/** A UiServer over a first-run backend whose data directory cannot be made (its parent is a file). */
async function firstRunServer(o: Partial<UiServerOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ui-internal-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const blocker = join(dir, 'not-a-directory');
  writeFileSync(blocker, 'x');
  const data = join(blocker, 'data');
  const ui = new UiServer(new FirstRunBackend(data), { rendererDir: dir, secure: false, ...o });
  const server: Server = createServer((req, res) => {
    if (!ui.handle(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => {
    ui.close();
    return new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections()));
  });
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, data };
}

const initSite = (base: string) =>
  fetch(`${base}/api/initSite`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1' },
    body: JSON.stringify({ siteId: 'north', adminName: 'kari', adminPin: '4817' }),
    signal: AbortSignal.timeout(10_000),
  });

describe('UiServer: a failure that is no SiteApiError', () => {
  it("tells a client that is not signed in an id, not the file system's error naming the data directory; the log gets it whole", async () => {
    const log: string[] = [];
    const { base, data } = await firstRunServer({ log: (l) => void log.push(l) });
    const r = await initSite(base);
    expect(r.status).toBe(500);
    const body = (await r.json()) as { ok: false; error: { kind: string; message: string } };
    expect(body.ok).toBe(false);
    expect(body.error.kind).toBe('internal');
    expect(body.error.message).toMatch(GENERIC);
    expect(body.error.message).not.toContain('not-a-directory');
    expect(body.error.message).not.toMatch(/ENOTDIR/);
    const id = GENERIC.exec(body.error.message)![1]!;
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(new RegExp(`^internal error ${id} in initSite \\(not signed in\\): .*ENOTDIR`));
    expect(log[0]).toContain(data);
    expect(log[0]).not.toContain('\n');
  });

  it('writes the whole error to stderr when the server was given no log', async () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    const { base, data } = await firstRunServer();
    const r = await initSite(base);
    expect(r.status).toBe(500);
    const message = ((await r.json()) as { error: { message: string } }).error.message;
    const id = GENERIC.exec(message)![1]!;
    const line = written.find((w) => w.startsWith(`internal error ${id} in initSite`));
    expect(line).toBeDefined();
    expect(line).toContain(data);
    expect(line!.endsWith('\n')).toBe(true);
  });
});
