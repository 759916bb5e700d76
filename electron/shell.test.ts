// The Electron shell with the `electron` module replaced by a fake that records what the shell
// asks of it: the security checklist is checked as data, and IPC through the real handler.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { InputAge, SessionContext, SiteBackend, SiteEvent } from '../core/site/api.ts';
import { SiteApiError } from '../core/site/api.ts';
import { CALL_CHANNEL, EVENT_CHANNEL } from './ipc.ts';
import { CONTENT_SECURITY_POLICY, resolveAppFile } from './security.ts';
import { registerScheme, startShell, type ElectronLike, type WebContentsLike } from './shell.ts';

function fakeElectron(opts: { locked?: boolean } = {}) {
  const rec = {
    quit: 0,
    windows: [] as Array<{ options: Record<string, unknown>; url?: string; contents: FakeContents }>,
    handlers: new Map<string, (...a: never[]) => unknown>(),
    appEvents: new Map<string, (...a: never[]) => void>(),
    headers: undefined as undefined | ((d: { responseHeaders?: Record<string, string[]> }, done: (r: { responseHeaders: Record<string, string[]> }) => void) => void),
    permission: undefined as undefined | ((wc: unknown, p: string, done: (g: boolean) => void) => void),
    protocolHandler: undefined as undefined | ((r: { url: string }) => Promise<Response>),
    schemes: [] as unknown[],
    /** The application menus set, in order (`null`: none). */
    menus: [] as unknown[],
  };
  class FakeContents implements WebContentsLike {
    static next = 1;
    id = FakeContents.next++;
    sent: Array<[string, unknown]> = [];
    events = new Map<string, (e: { preventDefault(): void }, url?: string) => void>();
    openHandler?: (d: { url: string }) => { action: 'deny' | 'allow' };
    send(channel: string, payload: unknown) {
      this.sent.push([channel, payload]);
    }
    // Every event's handler (WebContentsLike.on's overloads); the tests here fire the navigation ones.
    on(event: string, cb: (...a: never[]) => void) {
      this.events.set(event, cb as (e: { preventDefault(): void }, url?: string) => void);
    }
    setWindowOpenHandler(cb: (d: { url: string }) => { action: 'deny' | 'allow' }) {
      this.openHandler = cb;
    }
    isDestroyed() {
      return false;
    }
  }
  const e: ElectronLike = {
    app: {
      requestSingleInstanceLock: () => !opts.locked,
      on: (event, cb) => void rec.appEvents.set(event, cb),
      whenReady: () => Promise.resolve(),
      quit: () => void rec.quit++,
    },
    dialog: { showErrorBox: () => undefined },
    BrowserWindow: class {
      webContents = new FakeContents();
      constructor(options: Record<string, unknown>) {
        rec.windows.push({ options, contents: this.webContents });
        (rec.appEvents.get('web-contents-created') as unknown as (ev: unknown, c: WebContentsLike) => void)?.({}, this.webContents);
      }
      async loadURL(url: string) {
        rec.windows[rec.windows.length - 1]!.url = url;
      }
      on() {}
      isMinimized() {
        return false;
      }
      restore() {}
      focus() {}
    },
    Menu: { setApplicationMenu: (m) => void rec.menus.push(m) },
    ipcMain: { handle: (channel, fn) => void rec.handlers.set(channel, fn as never) },
    protocol: {
      registerSchemesAsPrivileged: (s) => void rec.schemes.push(...s),
      handle: (_scheme, h) => {
        rec.protocolHandler = h;
      },
    },
    session: {
      defaultSession: {
        webRequest: { onHeadersReceived: (cb) => void (rec.headers = cb) },
        setPermissionRequestHandler: (cb) => void (rec.permission = cb),
        setPermissionCheckHandler: () => undefined,
        on: () => undefined,
      },
    },
  };
  return { e, rec };
}

function fakeBackend() {
  const disabled = new Set<string>();
  const listeners: Array<(e: SiteEvent) => void> = [];
  const calls: Array<{ method: string; req: unknown; session: SessionContext; input: InputAge }> = [];
  const backend: SiteBackend = {
    async call(method, req, session, input) {
      calls.push({ method, req, session, input });
      if (method === 'signIn') {
        session.setUser({ name: 'Kari', roles: ['shift_lead'] });
        return session.user as never;
      }
      if (method === 'decide' && !session.user) throw new SiteApiError('unauthenticated', 'sign in first');
      if (method === 'me' && !session.user) throw new SiteApiError('unauthenticated', 'Kari was signed out', 600_000);
      return { ok: true } as never;
    },
    subscribe(l) {
      listeners.push(l);
      return () => undefined;
    },
    signedIn: (s) => s.user !== null && !disabled.has(s.user.name),
  };
  return { backend, calls, disabled, emit: (ev: SiteEvent) => listeners.forEach((l) => l(ev)) };
}

/** The renderer folders `setup` made, removed at the end. */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(opts: { locked?: boolean; kiosk?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'renderer-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
  const { e, rec } = fakeElectron(opts);
  const b = fakeBackend();
  registerScheme(e);
  const shell = startShell(e, { rendererDir: dir, preloadPath: '/app/preload.cjs', backend: b.backend, kiosk: opts.kiosk });
  return { dir, rec, shell, ...b };
}

describe('Electron shell', () => {
  it('opens a sandboxed, isolated window without node, from the app scheme', async () => {
    const { rec, shell } = setup({ kiosk: true });
    await shell.ready;
    expect(rec.windows).toHaveLength(1);
    const w = rec.windows[0]!;
    expect(w.url).toBe('tilstand://app/index.html');
    expect(w.options.kiosk).toBe(true);
    expect(w.options.webPreferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true, webviewTag: false, preload: '/app/preload.cjs' });
    expect(rec.schemes).toEqual([{ scheme: 'tilstand', privileges: { standard: true, secure: true, supportFetchAPI: true } }]);
  });

  it('quits when another instance holds the lock', async () => {
    const { rec, shell } = setup({ locked: true });
    expect(await shell.ready).toBeUndefined();
    expect(rec.quit).toBe(1);
    expect(rec.windows).toHaveLength(0);
  });

  it('adds the CSP to every response and denies every permission', async () => {
    const { rec, shell } = setup();
    await shell.ready;
    let headers: Record<string, string[]> = {};
    rec.headers!({ responseHeaders: { 'X-A': ['1'] } }, (r) => (headers = r.responseHeaders));
    expect(headers['Content-Security-Policy']).toEqual([CONTENT_SECURITY_POLICY]);
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    let granted: boolean | undefined;
    rec.permission!({}, 'media', (g) => (granted = g));
    expect(granted).toBe(false);
  });

  it('blocks navigation away from the app, new windows and webviews', async () => {
    const { rec, shell } = setup();
    await shell.ready;
    const c = rec.windows[0]!.contents;
    let prevented = 0;
    const ev = { preventDefault: () => void prevented++ };
    c.events.get('will-navigate')!(ev, 'https://example.invalid/');
    c.events.get('will-navigate')!(ev, 'tilstand://app/index.html#/stock');
    c.events.get('will-redirect')!(ev, 'file:///etc/passwd');
    c.events.get('will-attach-webview')!(ev);
    expect(prevented).toBe(3);
    expect(c.openHandler!({ url: 'https://example.invalid' })).toEqual({ action: 'deny' });
  });

  it('serves only files inside the renderer folder', async () => {
    const { rec, shell, dir } = setup();
    await shell.ready;
    const ok = await rec.protocolHandler!({ url: 'tilstand://app/index.html' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toContain('text/html');
    expect((await rec.protocolHandler!({ url: 'tilstand://app/../../etc/passwd' })).status).toBe(404);
    expect((await rec.protocolHandler!({ url: 'tilstand://app/%2e%2e/secret' })).status).toBe(404);
    expect(resolveAppFile(dir, 'tilstand://other/index.html')).toBeUndefined();
    expect(readFileSync(join(dir, 'index.html'), 'utf8')).toContain('doctype');
  });

  it('gives every app-scheme answer the CSP and nosniff, a 404 as well as a file', async () => {
    const { rec, shell } = setup();
    await shell.ready;
    for (const [url, status] of [
      ['tilstand://app/index.html', 200],
      ['tilstand://app/missing.html', 404],
      ['tilstand://app/%2e%2e/secret', 404],
      ['tilstand://other/index.html', 404],
    ] as const) {
      const r = await rec.protocolHandler!({ url });
      expect(r.status, url).toBe(status);
      expect(r.headers.get('content-security-policy'), url).toBe(CONTENT_SECURITY_POLICY);
      expect(r.headers.get('x-content-type-options'), url).toBe('nosniff');
    }
  });

  it('refuses a backslash, a colon or a malformed escape in an app URL, whatever the host (Windows reads a backslash as a separator)', async () => {
    const { rec, shell } = setup();
    await shell.ready;
    for (const url of ['tilstand://app/..%5C..%5C..%5Csecret.txt', 'tilstand://app/assets%5C..%5C..%5Csecret.txt', 'tilstand://app/C:%2Fsecret.txt', 'tilstand://app/index.html%00.js', 'tilstand://app/assets/%E0%A4%A']) {
      expect((await rec.protocolHandler!({ url })).status, url).toBe(404);
    }
    // As a packaged Windows app would ask; the check is text, so this host's path module does not matter.
    const root = 'C:\\Program Files\\Tilstand\\resources\\renderer';
    expect(resolveAppFile(root, 'tilstand://app/..%5C..%5C..%5Csecret.txt')).toBeUndefined();
    expect(resolveAppFile(root, 'tilstand://app/assets/%E0%A4%A')).toBeUndefined();
  });

  it('answers IPC only from app frames, validates payloads, keeps a session per window, and pushes events', async () => {
    const { rec, shell, calls, disabled, emit } = setup();
    await shell.ready;
    const handler = rec.handlers.get(CALL_CHANNEL) as unknown as (ev: unknown, m: unknown, r: unknown) => Promise<unknown>;
    const sender = rec.windows[0]!.contents;
    const app = { sender, senderFrame: { url: 'tilstand://app/index.html' } };
    expect(await handler({ sender, senderFrame: { url: 'https://evil.invalid/' } }, 'status', {})).toEqual({
      ok: false,
      error: { kind: 'forbidden', message: expect.stringContaining('outside the app') },
    });
    expect(await handler(app, 'decide', { id: 'p1', decision: 'yes' })).toMatchObject({ ok: false, error: { kind: 'invalid' } });
    expect(await handler(app, 'require', { module: 'fs' })).toMatchObject({ ok: false, error: { kind: 'invalid', message: expect.stringContaining('unknown method') } });
    // A refusal of the request's shape crosses with its code and field, for the floor UI to word (api.ts `input.*`).
    expect(await handler(app, 'signIn', { user: 'Ola/Per', secret: '2580' })).toMatchObject({
      ok: false,
      error: { kind: 'invalid', message: expect.stringContaining('request.user: not a user name: must not contain a slash'), code: 'input.name', params: { field: 'user', max: 64 } },
    });
    expect(await handler(app, 'decide', { id: 'p1', decision: 'approve' })).toEqual({ ok: false, error: { kind: 'unauthenticated', message: 'sign in first' } });
    // An idle sign-out crosses with its limit, for the sign-in screen to say why.
    expect(await handler(app, 'me', {})).toEqual({ ok: false, error: { kind: 'unauthenticated', message: 'Kari was signed out', idleMs: 600_000 } });
    emit({ type: 'proposals', changed: ['p0'] }); // nobody signed in at the window: not sent
    expect(await handler(app, 'signIn', { user: 'Kari', secret: '1234' })).toEqual({ ok: true, value: { name: 'Kari', roles: ['shift_lead'] } });
    expect(await handler(app, 'decide', { id: 'p1', decision: 'approve' })).toEqual({ ok: true, value: { ok: true } });
    expect(calls.map((c) => c.method)).toEqual(['decide', 'me', 'signIn', 'decide']);
    // Unknown badges at this window count against it (core/inbox signInWithBadge's source), not against every caller.
    expect(calls.map((c) => c.session.source)).toEqual(['window', 'window', 'window', 'window']);
    emit({ type: 'proposals', changed: ['p1'] });
    expect(sender.sent).toEqual([[EVENT_CHANNEL, { type: 'proposals', changed: ['p1'] }]]);
    disabled.add('Kari'); // disabled by an admin elsewhere: the window gets no more events
    emit({ type: 'proposals', changed: ['p2'] });
    expect(sender.sent).toHaveLength(1);
  });

  it("hands the backend the page's input age with each call; an absent one is no input, never use", async () => {
    const { rec, shell, calls } = setup();
    await shell.ready;
    const handler = rec.handlers.get(CALL_CHANNEL) as unknown as (ev: unknown, m: unknown, r: unknown, a?: unknown) => Promise<unknown>;
    const app = { sender: rec.windows[0]!.contents, senderFrame: { url: 'tilstand://app/index.html' } };
    for (const age of [1234, 0, null, undefined]) expect(await handler(app, 'status', {}, age)).toEqual({ ok: true, value: { ok: true } });
    expect(calls.map((c) => c.input)).toEqual([1234, 0, null, null]);
    for (const age of [-1, 1.5, 'soon', {}]) {
      expect(await handler(app, 'status', {}, age)).toEqual({ ok: false, error: { kind: 'invalid', message: expect.stringMatching(/^input age: expected/), code: 'input.refused', params: { field: 'inputAge' } } });
    }
    expect(calls).toHaveLength(4);
  });

  it("the preload's call passes the method, the request and the page's input age on the call channel", async () => {
    const src = readFileSync(join(__dirname, 'preload.cjs'), 'utf8');
    let exposed: { call(m: unknown, r: unknown, a: unknown): Promise<unknown> } | undefined;
    const invoked: unknown[][] = [];
    const electron = {
      contextBridge: { exposeInMainWorld: (_name: string, api: typeof exposed) => void (exposed = api) },
      ipcRenderer: { invoke: async (...args: unknown[]) => void invoked.push(args), on: () => undefined, removeListener: () => undefined },
    };
    new Function('require', src)((m: string) => (m === 'electron' ? electron : undefined));
    await exposed!.call('status', { a: 1 }, 250);
    await exposed!.call('me', {}, null);
    expect(invoked).toEqual([
      [CALL_CHANNEL, 'status', { a: 1 }, 250],
      [CALL_CHANNEL, 'me', {}, null],
    ]);
  });

  it('the preload exposes only call and subscribe, on the same channels', () => {
    const src = readFileSync(join(__dirname, 'preload.cjs'), 'utf8');
    expect(src).toContain(`'${CALL_CHANNEL}'`);
    expect(src).toContain(`'${EVENT_CHANNEL}'`);
    expect(src.match(/exposeInMainWorld\('tilstand', \{[\s\S]*?\n\}\);/)![0].match(/^\s{2}(\w+):/gm)!.map((s) => s.trim())).toEqual(['call:', 'subscribe:']);
  });
});
