// The window's page process dying (the OOM killer on a small floor PC, a crash): the window was
// left blank, and with no menu (no Ctrl+R) and in kiosk mode nobody there could get the UI back
// short of killing the app. The shell reloads the page, once per page that finished loading (one
// that dies again before it loaded would only die again), and says so in the log. One that loads
// and dies every time is reloaded after a growing wait, not in a loop. The `electron`
// module is replaced by a stand-in that records the window's handlers and loads.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { SiteBackend } from '../core/site/api.ts';
import { registerScheme, RELOADS_AT_ONCE, STABLE_PAGE_MS, startShell, type ElectronLike, type WebContentsLike } from './shell.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function started() {
  const dir = mkdtempSync(join(tmpdir(), 'renderer-gone-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
  const handlers = new Map<string, (...a: unknown[]) => void>();
  const loads: string[] = [];
  const logged: string[] = [];
  let onClosed: (() => void) | undefined;
  const contents: WebContentsLike = {
    id: 1,
    send: () => undefined,
    on: ((event: string, cb: (...a: unknown[]) => void) => void handlers.set(event, cb)) as WebContentsLike['on'],
    setWindowOpenHandler: () => undefined,
    isDestroyed: () => false,
  };
  const e: ElectronLike = {
    app: { requestSingleInstanceLock: () => true, on: () => undefined, whenReady: () => Promise.resolve(), quit: () => undefined },
    dialog: { showErrorBox: () => undefined },
    BrowserWindow: class {
      webContents = contents;
      async loadURL(url: string) {
        loads.push(url);
      }
      on(event: string, cb: () => void) {
        if (event === 'closed') onClosed = cb;
      }
      isMinimized() {
        return false;
      }
      restore() {}
      focus() {}
    },
    Menu: { setApplicationMenu: () => undefined },
    ipcMain: { handle: () => undefined },
    protocol: { registerSchemesAsPrivileged: () => undefined, handle: () => undefined },
    session: { defaultSession: { webRequest: { onHeadersReceived: () => undefined }, setPermissionRequestHandler: () => undefined, setPermissionCheckHandler: () => undefined, on: () => undefined } },
  };
  const backend: SiteBackend = { call: async () => null as never, subscribe: () => () => undefined };
  registerScheme(e);
  await startShell(e, { rendererDir: dir, preloadPath: '/app/preload.cjs', backend, log: (l) => void logged.push(l) }).ready;
  const fire = (event: string, ...args: unknown[]) => {
    const h = handlers.get(event);
    expect(h, `a '${event}' handler on the window's contents`).toBeTypeOf('function');
    h!(...args);
  };
  return { loads, logged, fire, close: () => onClosed!() };
}

describe('Electron shell: the page process dies', () => {
  it('reloads the app page when the page process was killed or crashed, and logs it', async () => {
    for (const reason of ['killed', 'crashed', 'oom']) {
      const { loads, logged, fire } = await started();
      expect(loads).toEqual(['tilstand://app/index.html']);
      fire('did-finish-load');
      fire('render-process-gone', {}, { reason, exitCode: 9 });
      expect(loads, reason).toEqual(['tilstand://app/index.html', 'tilstand://app/index.html']);
      expect(logged.join('\n'), reason).toContain(reason);
      // The reloaded page loads and dies again later: reloaded again.
      fire('did-finish-load');
      fire('render-process-gone', {}, { reason, exitCode: 9 });
      expect(loads, reason).toHaveLength(3);
    }
  });

  it('does not reload a page that died again before it finished loading, nor one that exited cleanly', async () => {
    const { loads, logged, fire } = await started();
    fire('did-finish-load');
    fire('render-process-gone', {}, { reason: 'crashed', exitCode: 11 });
    expect(loads).toHaveLength(2);
    fire('render-process-gone', {}, { reason: 'crashed', exitCode: 11 });
    expect(loads, 'no reload loop on a page that dies while loading').toHaveLength(2);
    expect(logged.at(-1)).toMatch(/before its page had loaded/);

    const clean = await started();
    clean.fire('did-finish-load');
    clean.fire('render-process-gone', {}, { reason: 'clean-exit', exitCode: 0 });
    expect(clean.loads).toHaveLength(1);
  });

  describe('a page that loads and then dies every time', () => {
    afterEach(() => vi.useRealTimers());

    it('is reloaded at once a few times, then after a delay that doubles up to a cap, not in a tight loop', async () => {
      vi.useFakeTimers();
      const { loads, logged, fire } = await started();
      const die = () => {
        fire('did-finish-load');
        fire('render-process-gone', {}, { reason: 'oom', exitCode: 9 });
      };
      for (let i = 1; i <= RELOADS_AT_ONCE; i++) die();
      expect(loads, 'the first deaths reload at once').toHaveLength(1 + RELOADS_AT_ONCE);
      die();
      expect(loads, 'the next one waits').toHaveLength(1 + RELOADS_AT_ONCE);
      expect(logged.at(-1)).toMatch(/reloading the page in 5 s/);
      vi.advanceTimersByTime(4_999);
      expect(loads).toHaveLength(1 + RELOADS_AT_ONCE);
      vi.advanceTimersByTime(1);
      expect(loads).toHaveLength(2 + RELOADS_AT_ONCE);
      const waits: number[] = [];
      for (let i = 0; i < 12; i++) {
        const before = loads.length;
        die();
        let waited = 0;
        while (loads.length === before && waited < 3_600_000) {
          vi.advanceTimersByTime(1_000);
          waited += 1_000;
        }
        waits.push(waited);
      }
      expect(waits.slice(0, 6)).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000]);
      expect(waits.slice(6).every((w) => w === 300_000), `capped at 5 minutes: ${waits.join(', ')}`).toBe(true);
    });

    it('reloads at once again after a page that stayed up a while', async () => {
      vi.useFakeTimers();
      const { loads, fire } = await started();
      const die = () => {
        fire('did-finish-load');
        fire('render-process-gone', {}, { reason: 'crashed', exitCode: 11 });
      };
      for (let i = 0; i <= RELOADS_AT_ONCE; i++) die();
      vi.advanceTimersByTime(5_000);
      const before = loads.length;
      fire('did-finish-load');
      vi.advanceTimersByTime(STABLE_PAGE_MS);
      fire('render-process-gone', {}, { reason: 'crashed', exitCode: 11 });
      expect(loads, 'a page that ran for a while died: reloaded at once').toHaveLength(before + 1);
    });

    it('does not reload a window closed while its reload waited', async () => {
      vi.useFakeTimers();
      const { loads, fire, close } = await started();
      for (let i = 0; i <= RELOADS_AT_ONCE; i++) {
        fire('did-finish-load');
        fire('render-process-gone', {}, { reason: 'crashed', exitCode: 11 });
      }
      const before = loads.length;
      close();
      vi.advanceTimersByTime(600_000);
      expect(loads).toHaveLength(before);
    });
  });
});
