// The Electron shell sets no application menu: Electron's default one (set at ready unless the
// app sets its own) keeps its accelerators with the menu bar hidden, so on the floor PC Ctrl+W or
// Ctrl+Q closed the kiosk and Ctrl+R reloaded it. The `electron` module is replaced by a stand-in
// that records, in order, what the shell asks of it.

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

function standIn(locked = false) {
  /** What the shell did, in order: `ready`, `menu <value>`, `window`, `load`. */
  const steps: string[] = [];
  const contents: WebContentsLike = { id: 1, send: () => undefined, on: () => undefined, setWindowOpenHandler: () => undefined, isDestroyed: () => false };
  const e: ElectronLike = {
    app: {
      requestSingleInstanceLock: () => !locked,
      on: () => undefined,
      whenReady: () => {
        steps.push('ready');
        return Promise.resolve();
      },
      quit: () => void steps.push('quit'),
    },
    dialog: { showErrorBox: () => undefined },
    BrowserWindow: class {
      webContents = contents;
      constructor() {
        steps.push('window');
      }
      async loadURL() {
        steps.push('load');
      }
      on() {}
      isMinimized() {
        return false;
      }
      restore() {}
      focus() {}
    },
    Menu: { setApplicationMenu: (m) => void steps.push(`menu ${String(m)}`) },
    ipcMain: { handle: () => undefined },
    protocol: { registerSchemesAsPrivileged: () => undefined, handle: () => undefined },
    session: { defaultSession: { webRequest: { onHeadersReceived: () => undefined }, setPermissionRequestHandler: () => undefined, setPermissionCheckHandler: () => undefined, on: () => undefined } },
  };
  return { e, steps };
}

async function run(o: { kiosk?: boolean; locked?: boolean } = {}): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'renderer-menu-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
  const { e, steps } = standIn(o.locked);
  const backend: SiteBackend = { call: async () => null as never, subscribe: () => () => undefined };
  registerScheme(e);
  await startShell(e, { rendererDir: dir, preloadPath: '/app/preload.cjs', backend, kiosk: o.kiosk ?? false }).ready;
  return steps;
}

describe('Electron shell menu', () => {
  it('sets no application menu once the app is ready and before its window exists, kiosk or not', async () => {
    for (const kiosk of [true, false]) {
      expect(await run({ kiosk }), `kiosk ${kiosk}`).toEqual(['ready', 'menu null', 'window', 'load']);
    }
  });

  it('touches no menu in a second instance, which only quits', async () => {
    expect(await run({ locked: true })).toEqual(['quit']);
  });
});
