// The Electron shell's hardening beyond shell.test.ts: permission *checks* are answered no, as
// permission requests are (Electron grants a check when no check handler is set, and web APIs that
// check before they ask never reach the request handler); the window has no DevTools (on a shared
// floor PC a script left in the page through them would act as the next person to sign in); a
// download is refused (the app asks for none; Electron's default is a save dialog, a file browser on
// a kiosk PC). The `electron` module is replaced by a stand-in that records what the shell sets.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SiteBackend } from '../core/site/api.ts';
import { registerScheme, startShell, type ElectronLike, type WebContentsLike } from './shell.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function standIn() {
  const rec = {
    check: undefined as undefined | ((wc: unknown, permission: string) => boolean),
    request: undefined as undefined | ((wc: unknown, permission: string, done: (g: boolean) => void) => void),
    windows: [] as Array<Record<string, unknown>>,
    download: undefined as undefined | ((e: { preventDefault(): void }, item: { getURL(): string }) => void),
    lines: [] as string[],
  };
  const contents: WebContentsLike = { id: 1, send: () => undefined, on: () => undefined, setWindowOpenHandler: () => undefined, isDestroyed: () => false };
  const e: ElectronLike = {
    app: { requestSingleInstanceLock: () => true, on: () => undefined, whenReady: () => Promise.resolve(), quit: () => undefined },
    dialog: { showErrorBox: () => undefined },
    BrowserWindow: class {
      webContents = contents;
      constructor(options: Record<string, unknown>) {
        rec.windows.push(options);
      }
      async loadURL() {}
      on() {}
      isMinimized() {
        return false;
      }
      restore() {}
      focus() {}
    },
    Menu: { setApplicationMenu: () => undefined },
    ipcMain: { handle: () => undefined },
    protocol: { registerSchemesAsPrivileged: () => undefined, handle: () => undefined },
    session: {
      defaultSession: {
        webRequest: { onHeadersReceived: () => undefined },
        setPermissionRequestHandler: (cb) => void (rec.request = cb),
        setPermissionCheckHandler: (cb) => void (rec.check = cb),
        on: (event, cb) => void (event === 'will-download' && (rec.download = cb)),
      },
    },
  };
  return { e, rec };
}

async function started(o: { kiosk?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'renderer-hard-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
  const { e, rec } = standIn();
  const backend: SiteBackend = { call: async () => null as never, subscribe: () => () => undefined };
  registerScheme(e);
  await startShell(e, { rendererDir: dir, preloadPath: '/app/preload.cjs', backend, log: (l) => rec.lines.push(l), ...o }).ready;
  return rec;
}

describe('Electron shell hardening', () => {
  it('opens its window without DevTools, kiosk or not', async () => {
    for (const kiosk of [true, false]) {
      const rec = await started({ kiosk });
      expect(rec.windows).toHaveLength(1);
      expect((rec.windows[0]!.webPreferences as Record<string, unknown>).devTools, `kiosk ${kiosk}`).toBe(false);
    }
  });

  it('answers every permission check no, as every request', async () => {
    const rec = await started();
    expect(rec.check, 'a permission check handler is set').toBeTypeOf('function');
    // What Chromium checks without asking: the clipboard, devices (HID, serial, USB), media, …
    for (const p of ['clipboard-read', 'clipboard-sanitized-write', 'hid', 'serial', 'usb', 'media', 'notifications', 'geolocation', 'fullscreen', 'openExternal']) {
      expect(rec.check!({}, p), p).toBe(false);
      let granted: boolean | undefined;
      rec.request!({}, p, (g) => (granted = g));
      expect(granted, p).toBe(false);
    }
  });

  it('refuses every download, logging one line a minute at most', async () => {
    const rec = await started();
    expect(rec.download, 'a will-download handler is set').toBeTypeOf('function');
    let prevented = 0;
    for (let i = 0; i < 5; i++) rec.download!({ preventDefault: () => void prevented++ }, { getURL: () => 'data:text/plain,\u202Ehi\n' });
    expect(prevented).toBe(5);
    expect(rec.lines).toEqual(['refused a download the app did not ask for: "data:text/plain,\\u202ehi\\n"']);
  });
});
