// The first run's refusals and the UI server's own carry a code (api.ts RefusalCode) beside the
// English message, so the floor UI words them in nb and de (renderer i18n refusalText): the data
// directory init refuses (init.ts InitError's `refusal`), the first-run backend's conflicts, and
// the UI server's "sign in first". The English message stays as it was (logs, the CLI).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SiteApiError, type SessionContext } from './api.ts';
import { FirstRunBackend } from './first-run.ts';
import { initDataDir } from './init.ts';
import { UiServer } from './ui-server.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'first-run-codes-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'data');
}

const session: SessionContext = { user: null, setUser: () => undefined };
const refused = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(SiteApiError);
    return (e as SiteApiError).body();
  }
  throw new Error('not refused');
};
const init = (b: FirstRunBackend, siteId = 'north') => b.call('initSite', { siteId, adminName: 'kari', adminPin: '4817' }, session);

describe('the first run refuses with a code', () => {
  it('a directory restored for another site: init.restoredOther with the site', async () => {
    const data = dataDir();
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'restore-note.json'), JSON.stringify({ site: 'south', restoredMs: 0, streams: {} }));
    const body = await refused(init(new FirstRunBackend(data)));
    expect(body).toMatchObject({ kind: 'invalid', code: 'init.restoredOther', params: { site: 'south' } });
    expect(body.message).toMatch(/holds a restore of site 'south' \(restore-note\.json\)/);
  });

  it('a restore note that does not parse: init.restoreNote', async () => {
    const data = dataDir();
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'restore-note.json'), '{');
    expect(await refused(init(new FirstRunBackend(data)))).toMatchObject({ kind: 'invalid', code: 'init.restoreNote' });
  });

  it("a warehouse with other sites' tables: init.otherSite with their ids", async () => {
    const data = dataDir();
    mkdirSync(join(data, 'warehouse', 'site_south.db'), { recursive: true });
    mkdirSync(join(data, 'warehouse', 'site_east.db'), { recursive: true });
    const body = await refused(init(new FirstRunBackend(data)));
    expect(body.code).toBe('init.otherSite');
    expect(String(body.params!.sites).split(',').sort()).toEqual(['east', 'south']);
  });

  it('another admin name after an init that stopped half-way: init.adminExists with the admin it added', async () => {
    const data = dataDir();
    // Stopped once its admin was in site.db (the secrets file cannot be written: a folder in its place).
    mkdirSync(join(data, 'secrets', 'modules.json'), { recursive: true });
    await expect(initDataDir({ data, site: 'north', admin: { name: 'kari', pin: '4711' }, scrypt: { N: 1024, r: 8, p: 1 } })).rejects.toThrow(/EISDIR/);
    rmSync(join(data, 'secrets', 'modules.json'), { recursive: true });
    const body = await refused(new FirstRunBackend(data).call('initSite', { siteId: 'north', adminName: 'ola', adminPin: '5820' }, session));
    expect(body).toMatchObject({ kind: 'conflict', code: 'init.adminExists', params: { admin: 'kari' } });
    expect(body.message).toMatch(/added the admin 'kari'/);
  }, 30_000);

  it('set up already, or not yet: site.alreadySetUp, site.notSetUp, init.exists', async () => {
    const data = dataDir();
    const b = new FirstRunBackend(data);
    expect(await refused(b.call('status', {}, session))).toMatchObject({ kind: 'conflict', code: 'site.notSetUp' });
    await init(b);
    expect(await refused(init(b))).toMatchObject({ kind: 'conflict', code: 'site.alreadySetUp', message: 'this site is already set up' });
    // init itself on a directory set up meanwhile (what the backend's own check runs before).
    await expect(initDataDir({ data, site: 'north' })).rejects.toMatchObject({ kind: 'AlreadyExists', refusal: { code: 'init.exists' } });
  }, 30_000);
});

describe('the UI server', () => {
  it("answers a call without a session with session.required beside 'sign in first'", async () => {
    const ui = new UiServer(new FirstRunBackend(dataDir()), { rendererDir: tmpdir(), secure: false, log: () => undefined });
    const http: Server = createServer((req, res) => void (ui.handle(req, res) || res.writeHead(404).end()));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => (ui.close(), http.close(() => r()), http.closeAllConnections())));
    const r = await fetch(`http://127.0.0.1:${(http.address() as AddressInfo).port}/api/status`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1' },
      body: '{}',
      signal: AbortSignal.timeout(10_000),
    });
    expect(r.status).toBe(401);
    expect(await r.json()).toEqual({ ok: false, error: { kind: 'unauthenticated', message: 'sign in first', code: 'session.required' } });
  });
});
