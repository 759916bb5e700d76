// The floor UI's report of its own failure (core/site/api.ts CLIENT_ERROR_METHOD) in the Electron
// app: answered by the main process, not refused as an unknown method — only from the app's own
// frames, validated as the headless server validates it, bounded per window as there, and
// written to the site's log (the one the main process runs the site with). With the `electron`
// module replaced by a fake.

import { describe, expect, it } from 'vitest';
import type { SiteBackend, SiteEvent } from '../core/site/api.ts';
import { CLIENT_ERROR_METHOD, SiteApiError } from '../core/site/api.ts';
import { CLIENT_ERRORS_PER_SESSION_MINUTE, CLIENT_ERRORS_PER_SOURCE_MINUTE } from '../core/site/internal-error.ts';
import { CALL_CHANNEL } from './ipc.ts';
import { runMain, type RunningSite } from './main-process.ts';
import { APP_ORIGIN } from './security.ts';
import { startShell, type ElectronLike, type WebContentsLike } from './shell.ts';

const APP = `${APP_ORIGIN}/index.html`;
const REPORT = { kind: 'render', message: 'Cannot read properties of undefined', stack: 'at Stock (Stock.tsx:12)', screen: 'stock', lang: 'nb', version: '0.1.0' };

function fakeElectron() {
  const rec = { handlers: new Map<string, (...a: unknown[]) => Promise<unknown>>(), closed: [] as Array<() => void> };
  let id = 1;
  const contents = (): WebContentsLike => ({ id: id++, send: () => undefined, on: () => undefined, setWindowOpenHandler: () => undefined, isDestroyed: () => false });
  const e: ElectronLike = {
    app: { requestSingleInstanceLock: () => true, on: () => undefined, whenReady: () => Promise.resolve(), quit: () => undefined },
    dialog: { showErrorBox: () => undefined },
    BrowserWindow: class {
      webContents = contents();
      async loadURL() {}
      on(_event: 'closed', cb: () => void) {
        rec.closed.push(cb);
      }
      isMinimized() {
        return false;
      }
      restore() {}
      focus() {}
    },
    Menu: { setApplicationMenu: () => undefined },
    ipcMain: { handle: (ch, fn) => void rec.handlers.set(ch, fn as never) },
    protocol: { registerSchemesAsPrivileged: () => undefined, handle: () => undefined },
    session: { defaultSession: { webRequest: { onHeadersReceived: () => undefined }, setPermissionRequestHandler: () => undefined, setPermissionCheckHandler: () => undefined, on: () => undefined } },
  };
  /** A call from window `sender` (its webContents id; the main window's is 1), from `url`. */
  const call = (method: string, req: unknown, o: { sender?: number; url?: string } = {}) =>
    rec.handlers.get(CALL_CHANNEL)!({ sender: { id: o.sender ?? 1 }, senderFrame: { url: o.url ?? APP } }, method, req, null) as Promise<{ ok: boolean; value?: { id: string | null }; error?: { kind: string; message: string } }>;
  return { e, rec, call };
}

function fakeBackend() {
  const calls: string[] = [];
  const backend: SiteBackend = {
    async call(method, _req, session) {
      calls.push(method);
      if (method === 'signIn') {
        session.setUser({ name: (_req as { user?: string }).user ?? 'Kari', roles: ['shift_lead'] });
        return session.user as never;
      }
      throw new SiteApiError('invalid', `unknown method ${method}`);
    },
    subscribe: (_l: (e: SiteEvent) => void) => () => undefined,
  };
  return { backend, calls };
}

describe('reportClientError over IPC', () => {
  it('logs the report under an id it answers, without the backend, naming the window or the user signed in there', async () => {
    const { e, call } = fakeElectron();
    const { backend, calls } = fakeBackend();
    const log: string[] = [];
    await startShell(e, { rendererDir: '/nonexistent', preloadPath: '/p.cjs', backend, log: (l) => void log.push(l) }).ready;
    const r = await call(CLIENT_ERROR_METHOD, REPORT);
    expect(r).toEqual({ ok: true, value: { id: expect.stringMatching(/^[0-9a-f]{8}$/) } });
    expect(log).toEqual([
      `client error ${r.value!.id} (not signed in, from "window", screen "stock", lang "nb", version "0.1.0", render): "Cannot read properties of undefined" stack: "at Stock (Stock.tsx:12)"`,
    ]);
    await call('signIn', { user: 'Kari', secret: '2580' });
    const signed = await call(CLIENT_ERROR_METHOD, { kind: 'error', message: 'x' });
    expect(log[1]).toBe(`client error ${signed.value!.id} (user "Kari", error): "x"`);
    expect(calls).toEqual(['signIn']);
  });

  it('refuses a report from a frame outside the app, and one that does not validate, naming the field; logs neither', async () => {
    const { e, call } = fakeElectron();
    const log: string[] = [];
    await startShell(e, { rendererDir: '/nonexistent', preloadPath: '/p.cjs', backend: fakeBackend().backend, log: (l) => void log.push(l) }).ready;
    expect(await call(CLIENT_ERROR_METHOD, REPORT, { url: 'https://example.invalid/' })).toMatchObject({ ok: false, error: { kind: 'forbidden' } });
    const bad = [{ kind: 'render' }, { ...REPORT, message: 'x'.repeat(501) }, { ...REPORT, extra: 1 }, { ...REPORT, kind: 'other' }, null, 'text'];
    for (const report of bad) {
      const r = await call(CLIENT_ERROR_METHOD, report);
      expect(r, JSON.stringify(report)?.slice(0, 60)).toMatchObject({ ok: false, error: { kind: 'invalid' } });
    }
    expect((await call(CLIENT_ERROR_METHOD, { kind: 'render' })).error!.message).toMatch(/message/);
    expect(log).toEqual([]);
  });

  it('bounds each window as the headless server bounds an address and a session, and says what it dropped when the window closes', async () => {
    const { e, rec, call } = fakeElectron();
    const log: string[] = [];
    await startShell(e, { rendererDir: '/nonexistent', preloadPath: '/p.cjs', backend: fakeBackend().backend, log: (l) => void log.push(l) }).ready;
    const ids: Array<string | null> = [];
    for (let i = 0; i < CLIENT_ERRORS_PER_SOURCE_MINUTE + 2; i++) ids.push((await call(CLIENT_ERROR_METHOD, { kind: 'render', message: `m${i}` })).value!.id);
    expect(ids.slice(0, CLIENT_ERRORS_PER_SOURCE_MINUTE)).toEqual(Array(CLIENT_ERRORS_PER_SOURCE_MINUTE).fill(expect.stringMatching(/^[0-9a-f]{8}$/)));
    expect(ids.slice(CLIENT_ERRORS_PER_SOURCE_MINUTE)).toEqual([null, null]);
    expect(log).toHaveLength(CLIENT_ERRORS_PER_SOURCE_MINUTE);
    // Signed in, the window's session has a budget of its own.
    await call('signIn', { user: 'Kari', secret: '2580' });
    for (let i = 0; i < CLIENT_ERRORS_PER_SESSION_MINUTE + 1; i++) await call(CLIENT_ERROR_METHOD, { kind: 'render', message: `s${i}` });
    expect(log).toHaveLength(CLIENT_ERRORS_PER_SOURCE_MINUTE + CLIENT_ERRORS_PER_SESSION_MINUTE);
    // The next person signed in at this window has a budget of their own, and is named for it.
    await call('signIn', { user: 'Ola', secret: '1357' });
    expect((await call(CLIENT_ERROR_METHOD, { kind: 'render', message: 'ola' })).value!.id).not.toBeNull();
    expect(log.at(-1)).toMatch(/\(user "Ola", render\): "ola"$/);
    // Another window (a second webContents) is counted apart.
    expect((await call(CLIENT_ERROR_METHOD, { kind: 'render', message: 'other' }, { sender: 2 })).value!.id).not.toBeNull();
    // The main window closes: what it dropped is said.
    expect(rec.closed).toHaveLength(1);
    rec.closed[0]!();
    expect(log.slice(-2).sort()).toEqual([
      expect.stringMatching(/^client errors: 1 more from user "Kari" dropped \(over the rate for a minute from /),
      expect.stringMatching(/^client errors: 2 more from not signed in, from "window" dropped \(over the rate for a minute from /),
    ]);
  });

  it("in the app as main-process.ts runs it, goes to the running site's log", async () => {
    const { e, call } = fakeElectron();
    const siteLog: string[] = [];
    const mainLog: string[] = [];
    const service: SiteBackend = { call: async () => null as never, subscribe: () => () => undefined };
    const startSite = async (): Promise<RunningSite> => ({ service, stop: async () => undefined, logLine: (l) => void siteLog.push(l) });
    const app = await runMain(e, ['--demo', '--data', '/nonexistent-tilstand-data'], { startSite, rendererDir: '/nonexistent', preloadPath: '/p.cjs', log: (l) => void mainLog.push(l) });
    const r = await call(CLIENT_ERROR_METHOD, { kind: 'error', message: 'boom' });
    expect(r.ok).toBe(true);
    expect(siteLog).toEqual([`client error ${r.value!.id} (not signed in, from "window", error): "boom"`]);
    expect(mainLog).toEqual([]);
    await app.quit();
  });
});
