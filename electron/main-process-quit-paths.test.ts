// Every way the app quits runs the same clean stop once: the site stops, then the app quits. A quit
// Electron makes itself — `app.quit()` from the OS (logout or shutdown on macOS, the Dock's Quit),
// seen as `before-quit` and then `will-quit` — went straight on to quitting with the site
// running (its last commits and site.log's "stopped" line lost, its locks and control socket left as
// by a kill); and SIGHUP (the terminal of `npm run electron` closed, a session's hang-up) met
// Node's default and ended the process at once. Now both take the same stop as SIGTERM and the
// window closing; the app's own final quit after the stop is let through (no quit → before-quit →
// stop → quit loop), and a stop that does not end is waited for only `QUIT_STOP_WAIT_MS`. The fake
// `app.quit` emits `before-quit` and `will-quit` as Electron does (a listener's preventDefault
// cancels the quit); signals are called as a signal would, never sent to this test's process.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SiteBackend } from '../core/site/api.ts';
import { QUIT_STOP_WAIT_MS, runMain, type RunningSite } from './main-process.ts';
import type { ElectronLike, WebContentsLike } from './shell.ts';

type Sig = 'SIGINT' | 'SIGTERM' | 'SIGHUP';
const SIGS: Sig[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
let before: Record<Sig, Function[]>;
const added = (s: Sig) => process.rawListeners(s).filter((l) => !before[s].includes(l)) as Array<(s: NodeJS.Signals) => void>;
const signal = (s: Sig): number => {
  const ls = added(s);
  for (const l of ls) l(s);
  return ls.length;
};
beforeEach(() => {
  before = { SIGINT: process.rawListeners('SIGINT'), SIGTERM: process.rawListeners('SIGTERM'), SIGHUP: process.rawListeners('SIGHUP') };
});
afterEach(() => {
  vi.useRealTimers();
  for (const s of SIGS) for (const l of added(s)) process.off(s, l);
});

/** An Electron whose `app.quit()` emits before-quit and will-quit; `quit` is recorded only when no listener prevented it. */
function fakeElectron() {
  const rec = { log: [] as string[], beforeQuit: 0 };
  const listeners = new Map<string, Array<(...a: unknown[]) => void>>();
  const emit = (name: string): boolean => {
    let prevented = false;
    const ev = { preventDefault: () => void (prevented = true) };
    for (const l of listeners.get(name) ?? []) l(ev);
    return !prevented;
  };
  let id = 1;
  const contents = (): WebContentsLike => ({ id: id++, send: () => undefined, on: () => undefined, setWindowOpenHandler: () => undefined, isDestroyed: () => false });
  const app = {
    requestSingleInstanceLock: () => true,
    on: (name: string, cb: (...a: never[]) => void) => void listeners.set(name, [...(listeners.get(name) ?? []), cb as (...a: unknown[]) => void]),
    whenReady: () => Promise.resolve(),
    quit: () => {
      rec.beforeQuit++;
      if (rec.beforeQuit > 20) throw new Error('quit loop');
      if (!emit('before-quit')) return;
      if (!emit('will-quit')) return;
      rec.log.push('app.quit');
    },
  };
  const e: ElectronLike = {
    app,
    dialog: { showErrorBox: () => undefined },
    BrowserWindow: class {
      webContents = contents();
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
    session: { defaultSession: { webRequest: { onHeadersReceived: () => undefined }, setPermissionRequestHandler: () => undefined, setPermissionCheckHandler: () => undefined, on: () => undefined } },
  };
  /** What Electron does on its own: the OS's logout, the Dock's Quit. */
  const electronQuits = () => app.quit();
  /** A quit that reaches only will-quit (Electron's autoUpdater quits so). */
  const willQuitOnly = () => (emit('will-quit') ? rec.log.push('app.quit') : undefined);
  return { e, rec, electronQuits, willQuitOnly, windowAllClosed: () => emit('window-all-closed') };
}

const service: SiteBackend = { call: async () => null as never, subscribe: () => () => undefined };
const settle = () => new Promise((r) => setTimeout(r, 10));

describe('every quit path stops the site once, then quits', () => {
  it("a quit Electron makes itself (before-quit) waits for the site's clean stop, and quits once after it", async () => {
    const { e, rec, electronQuits } = fakeElectron();
    let stopped!: () => void;
    const stopping = new Promise<void>((r) => (stopped = r));
    const startSite = async (): Promise<RunningSite> => ({ service, stop: async () => (rec.log.push('site.stop'), stopping) });
    await runMain(e, ['--demo', '--data', '/tmp/nowhere-demo'], { startSite, log: () => undefined });
    electronQuits();
    expect(rec.log, 'the quit waits for the stop').toEqual(['site.stop']);
    electronQuits(); // asked again meanwhile (the Dock's Quit twice): the same stop
    stopped();
    await settle();
    expect(rec.log, 'one stop, then one quit').toEqual(['site.stop', 'app.quit']);
    expect(rec.beforeQuit, "Electron's two quits and the app's own after the stop").toBe(3);
  });

  it('will-quit alone (a quit that skips before-quit) stops the site first as well', async () => {
    const { e, rec, willQuitOnly } = fakeElectron();
    const startSite = async (): Promise<RunningSite> => ({ service, stop: async () => void rec.log.push('site.stop') });
    await runMain(e, ['--demo', '--data', '/tmp/nowhere-demo'], { startSite, log: () => undefined });
    willQuitOnly();
    await settle();
    expect(rec.log).toEqual(['site.stop', 'app.quit']);
  });

  it('the window closed: one stop and one quit, with no loop through before-quit', async () => {
    const { e, rec, windowAllClosed } = fakeElectron();
    const startSite = async (): Promise<RunningSite> => ({ service, stop: async () => void rec.log.push('site.stop') });
    await runMain(e, ['--demo', '--data', '/tmp/nowhere-demo'], { startSite, log: () => undefined });
    windowAllClosed();
    await settle();
    expect(rec.log).toEqual(['site.stop', 'app.quit']);
    expect(rec.beforeQuit).toBe(1);
  });

  it('SIGHUP stops the site cleanly as SIGTERM does, and a repeated one does not cut the stop short', async () => {
    const { e, rec } = fakeElectron();
    let stopped!: () => void;
    const stopping = new Promise<void>((r) => (stopped = r));
    const lines: string[] = [];
    const startSite = async (): Promise<RunningSite> => ({ service, stop: async () => (rec.log.push('site.stop'), stopping) });
    await runMain(e, ['--demo', '--data', '/tmp/nowhere-demo'], { startSite, log: (l) => void lines.push(l) });
    expect(signal('SIGHUP'), 'a listener takes SIGHUP').toBeGreaterThan(0);
    expect(rec.log).toEqual(['site.stop']);
    expect(signal('SIGHUP')).toBeGreaterThan(0);
    expect(lines.filter((l) => /received SIGHUP while a clean stop is under way/.test(l))).toHaveLength(1);
    stopped();
    await settle();
    expect(rec.log).toEqual(['site.stop', 'app.quit']);
  });

  it('SIGHUP while the site starts waits for the start, then stops it', async () => {
    const { e, rec } = fakeElectron();
    let finish!: (s: RunningSite) => void;
    const startSite = () => new Promise<RunningSite>((r) => (finish = r));
    const run = runMain(e, ['--demo', '--data', '/tmp/nowhere-demo'], { startSite, log: () => undefined });
    await settle();
    expect(signal('SIGHUP')).toBeGreaterThan(0);
    finish({ service, stop: async () => void rec.log.push('site.stop') });
    const app = await run;
    await app.quit();
    expect(rec.log).toEqual(['site.stop', 'app.quit']);
  });

  it(`a stop that does not end is waited for ${QUIT_STOP_WAIT_MS / 1000} s, then the app quits and says so`, async () => {
    const { e, rec, electronQuits } = fakeElectron();
    const lines: string[] = [];
    const startSite = async (): Promise<RunningSite> => ({ service, stop: () => (rec.log.push('site.stop'), new Promise<void>(() => undefined)) });
    await runMain(e, ['--demo', '--data', '/tmp/nowhere-demo'], { startSite, log: (l) => void lines.push(l) });
    vi.useFakeTimers();
    electronQuits();
    await vi.advanceTimersByTimeAsync(QUIT_STOP_WAIT_MS - 100);
    expect(rec.log).toEqual(['site.stop']);
    await vi.advanceTimersByTimeAsync(200);
    expect(rec.log).toEqual(['site.stop', 'app.quit']);
    expect(lines.some((l) => /did not stop within \d+ s/.test(l)), lines.join('\n')).toBe(true);
  });
});
