// The Electron main process's window and IPC wiring, written against the small part of Electron's
// API it uses (`ElectronLike`) so that it is tested with a fake and type-checks without the
// Electron binary. The site core runs in this (main) process, never in the renderer.
//
// Invariants: one instance per machine (single-instance lock; a second start focuses the first);
// no application menu (so no accelerators: Ctrl+W, Ctrl+Q, Ctrl+R);
// every window is sandboxed with context isolation, no node and no DevTools; every response
// carries the CSP; navigation, new windows, webviews, downloads, permission requests and permission
// checks are refused; IPC answers only frames of the app's own origin and validates every payload; a page
// process that dies after its page loaded is replaced by loading the page again (after a wait that
// grows when it keeps dying soon after its load).

import { readFile } from 'node:fs/promises';
import type { SessionContext, SessionUser, SiteBackend } from '../core/site/api.ts';
import { ClientErrorLog, logSafe, logToStderr } from '../core/site/internal-error.ts';
import { rendererContentType } from '../core/site/renderer-files.ts';
import { CALL_CHANNEL, EVENT_CHANNEL, handleCall } from './ipc.ts';
import { APP_ORIGIN, APP_SCHEME, CONTENT_SECURITY_POLICY, isAppUrl, resolveAppFile, webPreferences } from './security.ts';

export interface WebContentsLike {
  id: number;
  send(channel: string, payload: unknown): void;
  on(event: 'will-navigate' | 'will-redirect' | 'will-attach-webview', cb: (e: { preventDefault(): void }, url?: string) => void): void;
  on(event: 'did-finish-load', cb: () => void): void;
  on(event: 'render-process-gone', cb: (e: unknown, details: { reason: string; exitCode: number }) => void): void;
  setWindowOpenHandler(cb: (d: { url: string }) => { action: 'deny' | 'allow' }): void;
  isDestroyed(): boolean;
}
export interface BrowserWindowLike {
  webContents: WebContentsLike;
  loadURL(url: string): Promise<void>;
  on(event: 'closed', cb: () => void): void;
  isMinimized(): boolean;
  restore(): void;
  focus(): void;
}
export interface ElectronLike {
  app: {
    requestSingleInstanceLock(): boolean;
    /** `before-quit` and `will-quit` get an event whose preventDefault holds the quit (main-process.ts, to stop the site first). */
    on(event: 'second-instance' | 'window-all-closed' | 'web-contents-created' | 'before-quit' | 'will-quit', cb: (...args: never[]) => void): void;
    whenReady(): Promise<void>;
    quit(): void;
    /** The system's language (`nb-NO`, `de-DE`, …), once the app is ready. */
    getLocale?(): string;
  };
  /** Electron's `dialog`: a modal error box, the only way a floor PC's user learns why the app did not start. */
  dialog: { showErrorBox(title: string, content: string): void };
  BrowserWindow: new (options: Record<string, unknown>) => BrowserWindowLike;
  /** Electron's `Menu`: only to set no application menu (its default one quits, closes, reloads). */
  Menu: { setApplicationMenu(menu: null): void };
  ipcMain: { handle(channel: string, fn: (event: { sender: WebContentsLike; senderFrame?: { url: string } | null }, ...args: unknown[]) => Promise<unknown>): void };
  protocol: {
    registerSchemesAsPrivileged(schemes: Array<{ scheme: string; privileges: Record<string, boolean> }>): void;
    handle(scheme: string, handler: (request: { url: string }) => Promise<Response>): void;
  };
  session: {
    defaultSession: {
      webRequest: { onHeadersReceived(cb: (d: { responseHeaders?: Record<string, string[]> }, done: (r: { responseHeaders: Record<string, string[]> }) => void) => void): void };
      setPermissionRequestHandler(cb: (wc: unknown, permission: string, done: (granted: boolean) => void) => void): void;
      /**
       * Electron answers a permission *check* yes when no handler is set, and many web APIs check
       * before they ask (so a denied request handler is never reached).
       */
      setPermissionCheckHandler(cb: (wc: unknown, permission: string) => boolean): void;
      /** A download about to start (Electron's `will-download`); `preventDefault` cancels it. */
      on(event: 'will-download', cb: (e: { preventDefault(): void }, item: { getURL(): string }) => void): void;
    };
  };
}

export interface ShellOptions {
  rendererDir: string;
  preloadPath: string;
  kiosk?: boolean;
  fullscreen?: boolean;
  backend: SiteBackend;
  width?: number;
  height?: number;
  /**
   * The site's log (logs/site.log, as main-process.ts has it): where the page's reports of its own
   * failures and an IPC call's unforeseen failure go; stderr when absent.
   */
  log?: (line: string) => void;
}

/** Must run before the app is ready (Electron's rule for privileged schemes). */
export function registerScheme(e: ElectronLike): void {
  e.protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } }]);
}

export function startShell(e: ElectronLike, o: ShellOptions): { ready: Promise<BrowserWindowLike | undefined> } {
  if (!e.app.requestSingleInstanceLock()) {
    e.app.quit();
    return { ready: Promise.resolve(undefined) };
  }
  let main: BrowserWindowLike | undefined;
  const sessions = new Map<number, SessionContext>();
  const log = o.log ?? logToStderr;
  // Per window, as the headless server bounds each session and address (core/site internal-error.ts).
  const clientErrors = new Map<number, ClientErrorLog>();
  const clientErrorsFor = (wc: WebContentsLike): ClientErrorLog => {
    let c = clientErrors.get(wc.id);
    if (!c) clientErrors.set(wc.id, (c = new ClientErrorLog(log)));
    return c;
  };
  const sessionFor = (wc: WebContentsLike): SessionContext => {
    let s = sessions.get(wc.id);
    if (!s) {
      let user: SessionUser | null = null;
      s = {
        // Unknown badges are counted per source (core/site api.ts SessionContext.source): the
        // window, where a badge reader at this PC types.
        source: 'window',
        get user() {
          return user;
        },
        setUser(u) {
          user = u;
        },
      };
      sessions.set(wc.id, s);
    }
    return s;
  };

  e.app.on('second-instance', () => {
    if (!main) return;
    if (main.isMinimized()) main.restore();
    main.focus();
  });
  e.app.on('window-all-closed', () => e.app.quit());
  e.app.on('web-contents-created', ((_ev: unknown, contents: WebContentsLike) => lockDown(contents)) as (...a: never[]) => void);

  e.ipcMain.handle(CALL_CHANNEL, (event, method, request, inputAge) =>
    handleCall(o.backend, sessionFor(event.sender), event.senderFrame?.url, method, request, inputAge, log, clientErrorsFor(event.sender)),
  );
  // Events go to the window only while someone is signed in there (as the headless server
  // sends them only to signed-in sessions' sockets), and stop when that user is disabled.
  o.backend.subscribe((ev) => {
    if (!main || main.webContents.isDestroyed()) return;
    const s = sessions.get(main.webContents.id);
    if (!s || !(o.backend.signedIn ? o.backend.signedIn(s) : s.user !== null)) return;
    main.webContents.send(EVENT_CHANNEL, ev);
  });

  const ready = e.app.whenReady().then(async () => {
    // No application menu, kiosk or not: the app has no menu items of its own, and Electron's
    // default menu (set at ready unless one is) brings accelerators that work with the menu bar
    // hidden — Ctrl+W and Ctrl+Q close the floor PC's window, Ctrl+R reloads it, and Alt shows
    // the menu. Set here, after Electron's own ready handler, before the window exists.
    e.Menu.setApplicationMenu(null);
    e.session.defaultSession.webRequest.onHeadersReceived((d, done) => {
      done({ responseHeaders: { ...(d.responseHeaders ?? {}), 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] } });
    });
    e.session.defaultSession.setPermissionRequestHandler((_wc, _permission, done) => done(false));
    // Checks too: without a handler Electron grants every check (the renderer needs no permission).
    e.session.defaultSession.setPermissionCheckHandler(() => false);
    // No downloads: the app asks for none, and Electron's way with one it is not told about is a
    // save dialog — on a kiosk floor PC, a file browser over the PC's disks — or a file written
    // where the dialog would have put it. Logged, at most a line a minute (a page could try in a loop).
    let downloadLoggedMs = -Infinity;
    let downloadsRefused = 0;
    e.session.defaultSession.on('will-download', (ev, item) => {
      ev.preventDefault();
      downloadsRefused++;
      const now = performance.now();
      if (now - downloadLoggedMs < 60_000) return;
      downloadLoggedMs = now;
      log(`refused a download the app did not ask for: ${logSafe(item.getURL().slice(0, 200))}${downloadsRefused > 1 ? ` (${downloadsRefused} refused since the last such line)` : ''}`);
      downloadsRefused = 0;
    });
    // Every answer of the scheme carries the CSP itself, a 404 too (onHeadersReceived above is
    // not relied on for a scheme of our own), and nosniff: a file is only what its name says.
    const guard = { 'Content-Security-Policy': CONTENT_SECURITY_POLICY, 'X-Content-Type-Options': 'nosniff' };
    const notFound = () => new Response('not found', { status: 404, headers: { 'Content-Type': 'text/plain; charset=utf-8', ...guard } });
    e.protocol.handle(APP_SCHEME, async (request) => {
      const file = resolveAppFile(o.rendererDir, request.url);
      if (!file) return notFound();
      try {
        const body = await readFile(file);
        return new Response(body, { headers: { 'Content-Type': rendererContentType(file), ...guard } });
      } catch {
        return notFound();
      }
    });
    main = new e.BrowserWindow({
      width: o.width ?? 1280,
      height: o.height ?? 800,
      kiosk: o.kiosk ?? false,
      fullscreen: o.fullscreen ?? false,
      backgroundColor: '#e6e6e6',
      autoHideMenuBar: true,
      webPreferences: webPreferences(o.preloadPath),
    });
    const contents = main.webContents;
    reloadWhenGone(contents, () => main, log);
    main.on('closed', () => {
      main = undefined;
      // What the window's reports dropped over the rate is said, not lost with the window.
      clientErrors.get(contents.id)?.flush(true);
      clientErrors.delete(contents.id);
    });
    await main.loadURL(`${APP_ORIGIN}/index.html`);
    return main;
  });
  return { ready };
}

/** Page deaths in a row (each within `STABLE_PAGE_MS` of its load) that are reloaded at once. */
export const RELOADS_AT_ONCE = 3;
/** A page that ran this long before it died was working: its death starts the count again. */
export const STABLE_PAGE_MS = 10 * 60_000;
const RELOAD_DELAY_FIRST_MS = 5_000;
const RELOAD_DELAY_MAX_MS = 5 * 60_000;

/**
 * The window's page process died (the OOM killer on a small floor PC, a crash): the window stays
 * blank, and with no menu (no Ctrl+R) and in kiosk mode nobody at the PC can get the UI back short
 * of killing the app. The page is loaded again, once per page that finished loading: one that dies
 * again before it has loaded would only die again (a loop, and a log line each time). A clean exit
 * is the window closing.
 *
 * A page that loads and then dies every time (it runs out of memory on what it shows) is reloaded
 * at once `RELOADS_AT_ONCE` times, then after a wait that doubles from 5 s up to 5 minutes: the PC
 * and its log are not spent on a reload loop, and the page still comes back once what killed it
 * has gone. A page that stayed up `STABLE_PAGE_MS` starts the count again.
 */
function reloadWhenGone(contents: WebContentsLike, window: () => BrowserWindowLike | undefined, log: (line: string) => void): void {
  let loaded = false;
  let loadedAt = 0;
  let quickDeaths = 0;
  let waiting: ReturnType<typeof setTimeout> | undefined;
  contents.on('did-finish-load', () => {
    loaded = true;
    loadedAt = Date.now();
  });
  contents.on('render-process-gone', (_e, details) => {
    if (details.reason === 'clean-exit' || !window() || contents.isDestroyed()) return;
    if (!loaded) {
      log(`the window's page process ended (${details.reason}, exit code ${details.exitCode}) before its page had loaded; not reloaded, it would only end again`);
      return;
    }
    loaded = false;
    quickDeaths = Date.now() - loadedAt >= STABLE_PAGE_MS ? 1 : quickDeaths + 1;
    const reload = () => {
      waiting = undefined;
      const w = window();
      if (!w || contents.isDestroyed()) return;
      w.loadURL(`${APP_ORIGIN}/index.html`).catch((err: unknown) => log(`reloading the window's page: ${(err as Error).message}`));
    };
    const ended = `the window's page process ended (${details.reason}, exit code ${details.exitCode})`;
    if (quickDeaths <= RELOADS_AT_ONCE) {
      log(`${ended}; reloading the page`);
      reload();
      return;
    }
    const delay = Math.min(RELOAD_DELAY_FIRST_MS * 2 ** (quickDeaths - RELOADS_AT_ONCE - 1), RELOAD_DELAY_MAX_MS);
    log(`${ended}, the ${quickDeaths}th time in a row soon after its page loaded; reloading the page in ${delay / 1000} s`);
    clearTimeout(waiting);
    waiting = setTimeout(reload, delay);
  });
}

/** Navigation, redirects, webviews and new windows are refused for every web contents. */
export function lockDown(contents: WebContentsLike): void {
  const refuseForeign = (ev: { preventDefault(): void }, url?: string) => {
    if (!isAppUrl(url)) ev.preventDefault();
  };
  contents.on('will-navigate', refuseForeign);
  contents.on('will-redirect', refuseForeign);
  contents.on('will-attach-webview', (ev) => ev.preventDefault());
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
}
