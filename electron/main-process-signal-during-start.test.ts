// SIGTERM / SIGINT while the site is still starting (a service manager stopping the app as it
// starts, a Ctrl-C): the handlers were registered only once `startSite` had returned, so such a
// signal met Node's (or Electron's) default and ended the process without a clean stop — the clean
// stop's last commits and site.log's "stopped" line lost, a half-started broker never closed. Now
// the signal waits for the start and then stops the site (no window opened in between); a repeated
// one is said and the stop goes on, as `tilstand start` (core/site/cli/common.ts
// repeatedStopSignals). The listeners are called as a signal would, never by sending one to this
// test's own process.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SiteBackend } from '../core/site/api.ts';
import { CALL_CHANNEL } from './ipc.ts';
import { runMain, type RunningSite } from './main-process.ts';
import { APP_ORIGIN } from './security.ts';
import type { ElectronLike, WebContentsLike } from './shell.ts';

type Sig = 'SIGINT' | 'SIGTERM' | 'SIGHUP';
let before: Record<Sig, Function[]>;
const added = (s: Sig) => process.rawListeners(s).filter((l) => !before[s].includes(l)) as Array<(s: NodeJS.Signals) => void>;
/** Calls the listeners runMain added, as a signal would; how many there were. */
const signal = (s: Sig): number => {
  const ls = added(s);
  for (const l of ls) l(s);
  return ls.length;
};
let dir: string | undefined;
beforeEach(() => {
  before = { SIGINT: process.rawListeners('SIGINT'), SIGTERM: process.rawListeners('SIGTERM'), SIGHUP: process.rawListeners('SIGHUP') };
});
afterEach(() => {
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) for (const l of added(s)) process.off(s, l);
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function fakeElectron() {
  const rec = { log: [] as string[], windows: 0, errorBoxes: [] as string[], listenersAtBox: [] as number[], handlers: new Map<string, (...a: unknown[]) => Promise<unknown>>() };
  let id = 1;
  const contents = (): WebContentsLike => ({ id: id++, send: () => undefined, on: () => undefined, setWindowOpenHandler: () => undefined, isDestroyed: () => false });
  const e: ElectronLike = {
    app: { requestSingleInstanceLock: () => true, on: () => undefined, whenReady: () => Promise.resolve(), quit: () => void rec.log.push('app.quit') },
    dialog: {
      showErrorBox: (title) => {
        rec.errorBoxes.push(title);
        rec.listenersAtBox.push(added('SIGINT').length + added('SIGTERM').length + added('SIGHUP').length);
      },
    },
    BrowserWindow: class {
      webContents = contents();
      constructor() {
        rec.windows++;
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
    ipcMain: { handle: (ch, fn) => void rec.handlers.set(ch, fn as never) },
    protocol: { registerSchemesAsPrivileged: () => undefined, handle: () => undefined },
    session: { defaultSession: { webRequest: { onHeadersReceived: () => undefined }, setPermissionRequestHandler: () => undefined, setPermissionCheckHandler: () => undefined, on: () => undefined } },
  };
  const call = (method: string, req: unknown = {}) => rec.handlers.get(CALL_CHANNEL)!({ sender: { id: 99 }, senderFrame: { url: `${APP_ORIGIN}/index.html` } }, method, req);
  return { e, rec, call };
}

/** A start that takes as long as the test wants (tables, broker, HTTP on a big site). */
function slowStart(rec: { log: string[] }) {
  let finish!: (s: RunningSite) => void;
  let fail!: (e: Error) => void;
  let asked = 0;
  const service: SiteBackend = { call: async () => null as never, subscribe: () => () => undefined };
  const startSite = (): Promise<RunningSite> => {
    asked++;
    return new Promise((res, rej) => {
      finish = res;
      fail = rej;
    });
  };
  return {
    startSite,
    asked: () => asked,
    started: () => finish({ service, stop: async () => void rec.log.push('site.stop') }),
    failed: (e: Error) => fail(e),
  };
}

const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
};

describe('a stop signal while the site starts', () => {
  it('is taken: the site stops cleanly once started, no window opens, and the app quits', async () => {
    const { e, rec } = fakeElectron();
    const s = slowStart(rec);
    const lines: string[] = [];
    const run = runMain(e, ['--demo', '--data', '/tmp/nowhere-demo'], { startSite: s.startSite, log: (l) => void lines.push(l) });
    await turns();
    expect(s.asked()).toBe(1);
    expect(signal('SIGTERM'), 'a listener takes SIGTERM while the site starts').toBeGreaterThan(0);
    expect(lines.some((l) => /received SIGTERM while the site starts/.test(l)), lines.join('\n')).toBe(true);
    // A repeated one (one Ctrl-C under `npm run electron` is two SIGINTs) is said, and the stop goes on.
    expect(signal('SIGINT'), 'a listener takes a repeated SIGINT').toBeGreaterThan(0);
    expect(rec.log, 'nothing stopped or quit before the start ends').toEqual([]);
    s.started();
    const app = await run;
    await app.quit();
    expect(rec.log, 'the site it started is stopped, then the app quits').toEqual(['site.stop', 'app.quit']);
    expect(rec.windows, 'no window for a site that is stopping').toBe(0);
  });

  it('a start that then fails quits without an error box holding the shutdown up', async () => {
    const { e, rec } = fakeElectron();
    const s = slowStart(rec);
    const lines: string[] = [];
    const run = runMain(e, ['--demo', '--data', '/tmp/nowhere-demo'], { startSite: s.startSite, log: (l) => void lines.push(l) });
    await turns();
    expect(signal('SIGINT')).toBeGreaterThan(0);
    s.failed(new Error('broker: cannot listen on port 1883'));
    await expect(run).rejects.toThrow('cannot listen');
    await turns();
    expect(rec.errorBoxes).toEqual([]);
    expect(lines).toContain('the site did not start: broker: cannot listen on port 1883');
    expect(rec.log).toEqual(['app.quit']);
  });

  it("the window closed while the first run's site starts, and that start fails: no box, the app quits", async () => {
    // A box is modal: shown in an app asked to quit (the window closed, a shutdown's SIGTERM) it
    // held the quit up until someone at the PC clicked it.
    dir = mkdtempSync(join(tmpdir(), 'tilstand-electron-'));
    const { e, rec, call } = fakeElectron();
    const s = slowStart(rec);
    const app = await runMain(e, ['--data', join(dir, 'data')], { startSite: s.startSite, log: () => undefined });
    await call('initSite', { siteId: 'north', adminName: 'ada', adminPin: '2468' });
    for (let i = 0; i < 100 && s.asked() === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(s.asked()).toBe(1);
    const quitting = app.quit();
    s.failed(new Error('http: cannot listen on port 8470'));
    await quitting;
    await turns();
    expect(rec.errorBoxes).toEqual([]);
    expect(rec.log).toEqual(['app.quit']);
  }, 30_000);
});

describe('a start that fails with no stop signal asked', () => {
  // The box is modal and shown synchronously: while it is up no listener of the main process's can
  // run. With runMain's listeners still taking SIGTERM and SIGINT, a service manager's stop or a
  // Ctrl-C in the terminal then did nothing until someone at the PC clicked the box (before the
  // listeners were taken early, such a signal met the default and ended the process). No site runs
  // to stop: the box is shown with the signals' default back, and no listener stays behind.
  it('shows the box with SIGINT and SIGTERM left to their default, and leaves no listener', async () => {
    const { e, rec } = fakeElectron();
    const s = slowStart(rec);
    const run = runMain(e, ['--demo', '--data', '/tmp/nowhere-demo'], { startSite: s.startSite, log: () => undefined });
    await turns();
    expect(added('SIGTERM').length, 'taken while the site starts').toBeGreaterThan(0);
    s.failed(new Error('broker: cannot listen on port 1883'));
    await expect(run).rejects.toThrow('cannot listen');
    expect(rec.errorBoxes).toHaveLength(1);
    expect(rec.listenersAtBox, "runMain's signal listeners while the box is up").toEqual([0]);
    expect([added('SIGINT').length, added('SIGTERM').length, added('SIGHUP').length]).toEqual([0, 0, 0]);
  });

  it('a --data that is a file: the box is shown with no listener of runMain taking the signals', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tilstand-electron-'));
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a directory');
    const { e, rec } = fakeElectron();
    const s = slowStart(rec);
    await expect(runMain(e, ['--data', file], { startSite: s.startSite, log: () => undefined })).rejects.toThrow('--data');
    expect(rec.errorBoxes).toHaveLength(1);
    expect(rec.listenersAtBox).toEqual([0]);
    expect([added('SIGINT').length, added('SIGTERM').length, added('SIGHUP').length]).toEqual([0, 0, 0]);
  });
});
