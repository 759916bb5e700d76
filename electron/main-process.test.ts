// The Electron main process with a fake `electron` and a fake site: argument handling (our flags
// among Electron's), kiosk/fullscreen reaching the window, the single-instance lock taken before
// the site starts, quit stopping the site first, and the first run on a new data directory.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SiteBackend, SiteEvent } from '../core/site/api.ts';
import type { SiteStartOptions } from '../core/site/site.ts';
import { CALL_CHANNEL } from './ipc.ts';
import { SITE_LAUNCH } from '../core/site/v8-flags.ts';
import { parseShellArgs, RELAUNCH_MARKER, relaunchWithLaunchSettings, runMain, ShellArgsError, type RelaunchApp, type RunningSite } from './main-process.ts';
import { APP_ORIGIN } from './security.ts';
import type { ElectronLike, WebContentsLike } from './shell.ts';

function fakeElectron(locked = false) {
  const rec = { quit: 0, windows: [] as Array<Record<string, unknown>>, handlers: new Map<string, (...a: unknown[]) => Promise<unknown>>(), schemes: 0, menus: [] as unknown[], log: [] as string[], errorBoxes: [] as Array<{ title: string; content: string }> };
  let id = 1;
  const contents = (): WebContentsLike => ({ id: id++, send: () => undefined, on: () => undefined, setWindowOpenHandler: () => undefined, isDestroyed: () => false });
  const e: ElectronLike = {
    app: {
      requestSingleInstanceLock: () => !locked,
      on: () => undefined,
      whenReady: () => Promise.resolve(),
      quit: () => {
        rec.log.push('app.quit');
        rec.quit++;
      },
    },
    dialog: { showErrorBox: (title, content) => void rec.errorBoxes.push({ title, content }) },
    BrowserWindow: class {
      webContents = contents();
      constructor(o: Record<string, unknown>) {
        rec.windows.push(o);
      }
      async loadURL() {}
      on() {}
      isMinimized() {
        return false;
      }
      restore() {}
      focus() {}
    },
    Menu: { setApplicationMenu: (m) => void rec.menus.push(m) },
    ipcMain: { handle: (ch, fn) => void rec.handlers.set(ch, fn as never) },
    protocol: { registerSchemesAsPrivileged: () => void rec.schemes++, handle: () => undefined },
    session: { defaultSession: { webRequest: { onHeadersReceived: () => undefined }, setPermissionRequestHandler: () => undefined, setPermissionCheckHandler: () => undefined, on: () => undefined } },
  };
  const call = (method: string, req: unknown = {}) => rec.handlers.get(CALL_CHANNEL)!({ sender: { id: 99 }, senderFrame: { url: `${APP_ORIGIN}/index.html` } }, method, req) as Promise<{ ok: boolean; value?: unknown; error?: { kind: string } }>;
  return { e, rec, call };
}

function fakeSite(rec: { log: string[] }) {
  const started: SiteStartOptions[] = [];
  const service: SiteBackend = {
    call: async (method) => (method === 'firstRun' ? { initialized: true, siteId: 'north', restoredSite: null } : { from: 'site' }) as never,
    subscribe: (_l: (e: SiteEvent) => void) => () => undefined,
  };
  const startSite = async (o: SiteStartOptions): Promise<RunningSite> => {
    started.push(o);
    return { service, stop: async () => void rec.log.push('site.stop') };
  };
  return { started, startSite };
}

let dir: string | undefined;
// runMain takes SIGINT, SIGTERM and SIGHUP for the process's life: what a test's runMain added goes with it.
let signalListeners: Record<'SIGINT' | 'SIGTERM' | 'SIGHUP', Function[]>;
beforeEach(() => {
  signalListeners = { SIGINT: process.rawListeners('SIGINT'), SIGTERM: process.rawListeners('SIGTERM'), SIGHUP: process.rawListeners('SIGHUP') };
});
afterEach(() => {
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) for (const l of process.rawListeners(s)) if (!signalListeners[s].includes(l)) process.off(s, l as () => void);
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('electron main process', () => {
  it('takes its flags from among Electron’s and refuses bad ones', () => {
    const a = parseShellArgs(['/usr/lib/electron', 'electron/main.mjs', '--no-sandbox', '--kiosk', '--data=/srv/t', '--http-port', '8471', '--enable-logging']);
    expect(a).toMatchObject({ data: '/srv/t', kiosk: true, fullscreen: false, demo: false, serveUi: false, httpPort: 8471 });
    expect(parseShellArgs(['--fullscreen', '--demo', '--serve-ui', '--mqtt-port=0'])).toMatchObject({ fullscreen: true, demo: true, serveUi: true, mqttPort: 0 });
    expect(() => parseShellArgs(['--http-port', 'x'])).toThrow(ShellArgsError);
    expect(() => parseShellArgs(['--http-port', '70000'])).toThrow(/0 to 65535/);
    expect(() => parseShellArgs(['--data'])).toThrow(/--data: expected a directory/);
  });

  it('starts the site in the main process, opens a kiosk window on it, and stops the site before quitting', async () => {
    const { e, rec, call } = fakeElectron();
    const s = fakeSite(rec);
    const app = await runMain(e, ['--demo', '--kiosk', '--fullscreen', '--http-port', '0', '--data', '/tmp/nowhere-demo'], { startSite: s.startSite, log: () => undefined });
    expect(rec.schemes).toBe(1);
    expect(s.started).toEqual([expect.objectContaining({ data: '/tmp/nowhere-demo', demo: true, demoHq: true, ui: false, httpPort: 0 })]);
    expect(rec.windows).toHaveLength(1);
    expect(rec.windows[0]).toMatchObject({ kiosk: true, fullscreen: true });
    // The kiosk has no application menu (its default one's Ctrl+W / Ctrl+Q would close it).
    expect(rec.menus).toEqual([null]);
    expect(await call('status')).toEqual({ ok: true, value: { from: 'site' } });
    await app.quit();
    expect(rec.log).toEqual(['site.stop', 'app.quit']);
  });

  it('a site that does not start is explained in an error box, not only on a console the floor never sees', async () => {
    const { e, rec } = fakeElectron();
    const lines: string[] = [];
    const refused = new Error('broker: cannot listen on port 1883: listen EADDRINUSE: address already in use 127.0.0.1:1883');
    const startSite = async (): Promise<RunningSite> => {
      throw refused;
    };
    await expect(runMain(e, ['--demo', '--data', '/tmp/nowhere-demo'], { startSite, log: (l) => lines.push(l) })).rejects.toBe(refused);
    expect(rec.errorBoxes).toEqual([{ title: 'Tilstand could not start', content: expect.stringContaining(refused.message) }]);
    expect(rec.errorBoxes[0]!.content).toContain('The site\'s log: /tmp/nowhere-demo/logs/site.log');
    expect(lines).toEqual([`the site did not start: ${refused.message}`]);
    expect(rec.windows).toHaveLength(0);
  });

  it('a --data that is a file is explained in the box, and neither the site nor the first-run screen starts', async () => {
    const { e, rec } = fakeElectron();
    const s = fakeSite(rec);
    const folder = mkdtempSync(join(tmpdir(), 'tilstand-electron-data-file-'));
    const file = join(folder, 'not-a-folder');
    writeFileSync(file, 'x');
    try {
      await expect(runMain(e, ['--data', file], { startSite: s.startSite, log: () => undefined })).rejects.toThrow(`--data: ${file} is a file, not a directory`);
      expect(rec.errorBoxes).toEqual([{ title: 'Tilstand could not start', content: expect.stringContaining(`${file} is a file, not a directory`) }]);
      expect(s.started).toEqual([]);
      expect(rec.windows).toHaveLength(0);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("says it in the system's language: Norwegian on a Norwegian PC, German on a German one", async () => {
    const fail = async (): Promise<RunningSite> => {
      throw new Error('broker: cannot listen on port 1883');
    };
    for (const [locale, title, logLine] of [
      ['nb-NO', 'Tilstand kunne ikke starte', 'Stedets logg: /tmp/nowhere-demo/logs/site.log'],
      ['nn', 'Tilstand kunne ikke starte', 'Stedets logg:'],
      ['de-AT', 'Tilstand konnte nicht starten', 'Protokoll des Standorts: /tmp/nowhere-demo/logs/site.log'],
      ['fr-FR', 'Tilstand could not start', "The site's log:"],
    ] as const) {
      const { e, rec } = fakeElectron();
      e.app.getLocale = () => locale;
      await expect(runMain(e, ['--demo', '--data', '/tmp/nowhere-demo'], { startSite: fail, log: () => undefined })).rejects.toThrow();
      expect(rec.errorBoxes, locale).toEqual([{ title, content: expect.stringContaining('broker: cannot listen on port 1883') }]);
      expect(rec.errorBoxes[0]!.content, locale).toContain(logLine);
    }
  });

  it('a second instance starts no site and quits', async () => {
    const { e, rec } = fakeElectron(true);
    const s = fakeSite(rec);
    await runMain(e, ['--demo'], { startSite: s.startSite, log: () => undefined });
    expect(s.started).toEqual([]);
    expect(rec.quit).toBe(1);
    expect(rec.windows).toHaveLength(0);
  });

  it('shows the first run on a new data directory, then switches the window to the site it set up', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tilstand-electron-'));
    const data = join(dir, 'data');
    const { e, rec, call } = fakeElectron();
    const s = fakeSite(rec);
    await runMain(e, ['--data', data], { startSite: s.startSite, log: () => undefined });
    expect(s.started).toEqual([]);
    expect(await call('firstRun')).toEqual({ ok: true, value: { initialized: false, siteId: null, restoredSite: null } });
    expect((await call('status')).error?.kind).toBe('conflict');
    expect(await call('initSite', { siteId: 'north', adminName: 'ada', adminPin: '2468' })).toEqual({ ok: true, value: { initialized: true, siteId: 'north', restoredSite: null, starting: true } });
    for (let i = 0; i < 100 && s.started.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(s.started).toEqual([expect.objectContaining({ data, demo: false, demoHq: false })]);
    await new Promise((r) => setTimeout(r, 10));
    expect(await call('status')).toEqual({ ok: true, value: { from: 'site' } });
  }, 30_000);

  it('quitting while the first run\'s site is still starting waits for it and stops it before the app quits', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tilstand-electron-'));
    const data = join(dir, 'data');
    const { e, rec, call } = fakeElectron();
    // The site takes a while to start (tables, broker, HTTP): the window is closed meanwhile.
    let started!: (s: RunningSite) => void;
    let asked = 0;
    const startSite = (): Promise<RunningSite> => {
      asked++;
      return new Promise((r) => (started = r));
    };
    const app = await runMain(e, ['--data', data], { startSite, log: () => undefined });
    await call('initSite', { siteId: 'north', adminName: 'ada', adminPin: '2468' });
    for (let i = 0; i < 100 && asked === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(asked).toBe(1);
    const quitting = app.quit();
    await new Promise((r) => setTimeout(r, 20));
    // Not quit yet: the site it is starting would be left running, never stopped.
    expect(rec.log).toEqual([]);
    const service: SiteBackend = { call: async () => null as never, subscribe: () => () => undefined };
    started({ service, stop: async () => void rec.log.push('site.stop') });
    await quitting;
    expect(rec.log).toEqual(['site.stop', 'app.quit']);
  }, 30_000);

  it('a quit before the first run is filled in starts no site when it is then filled in', async () => {
    // SIGTERM (a shutdown) or the window closing while the first-run form was being sent: the app
    // quit at once, having no site, and the first run finishing then started one in a quitting
    // app, which exited under it (its locks and control socket left as by a kill).
    dir = mkdtempSync(join(tmpdir(), 'tilstand-electron-'));
    const data = join(dir, 'data');
    const { e, rec, call } = fakeElectron();
    let asked = 0;
    const startSite = async (): Promise<RunningSite> => {
      asked++;
      return { service: { call: async () => null as never, subscribe: () => () => undefined }, stop: async () => void rec.log.push('site.stop') };
    };
    const app = await runMain(e, ['--data', data], { startSite, log: () => undefined });
    const init = call('initSite', { siteId: 'north', adminName: 'ada', adminPin: '2468' });
    await app.quit();
    expect(rec.log).toEqual(['app.quit']);
    await init;
    // The first run's end is handled on the next turns (first.done's callbacks).
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
    expect(asked, 'no site started in a quitting app').toBe(0);
    expect(rec.log).toEqual(['app.quit']);
  }, 30_000);

  it('a site that does not start after the first run is explained in an error box, and the app quits', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tilstand-electron-'));
    const data = join(dir, 'data');
    const { e, rec, call } = fakeElectron();
    const startSite = async (): Promise<RunningSite> => {
      throw new Error('http: cannot listen on port 8470: listen EACCES');
    };
    await runMain(e, ['--data', data], { startSite, log: () => undefined });
    await call('initSite', { siteId: 'north', adminName: 'ada', adminPin: '2468' });
    for (let i = 0; i < 100 && rec.quit === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(rec.errorBoxes).toEqual([{ title: 'Tilstand could not start', content: expect.stringContaining('http: cannot listen on port 8470') }]);
    expect(rec.quit).toBe(1);
  }, 30_000);

  it('a repeated SIGINT or SIGTERM while the site stops is taken for the same stop, not left to end the process', async () => {
    // One Ctrl-C under `npm run electron` sends two SIGINTs (the terminal's to the process group and
    // npm's copy): with no listener left for the second, Node's default ended the process mid-stop.
    // The listeners are called as a signal would (rawListeners: a once-listener goes when called),
    // never by sending one to this test's own process.
    const before = { SIGINT: process.rawListeners('SIGINT'), SIGTERM: process.rawListeners('SIGTERM') };
    const added = (s: 'SIGINT' | 'SIGTERM') => process.rawListeners(s).filter((l) => !before[s].includes(l)) as Array<(s: NodeJS.Signals) => void>;
    const signal = (s: 'SIGINT' | 'SIGTERM') => {
      const ls = added(s);
      for (const l of ls) l(s);
      return ls.length;
    };
    const { e, rec } = fakeElectron();
    let stopped!: () => void;
    const stopping = new Promise<void>((r) => (stopped = r));
    const lines: string[] = [];
    const startSite = async (): Promise<RunningSite> => ({ service: { call: async () => null as never, subscribe: () => () => undefined }, stop: async () => (rec.log.push('site.stop'), stopping) });
    try {
      await runMain(e, ['--demo', '--data', '/tmp/nowhere-demo'], { startSite, log: (l) => void lines.push(l) });
      expect(signal('SIGINT'), 'a listener takes the first SIGINT').toBeGreaterThan(0);
      expect(rec.log).toEqual(['site.stop']);
      for (const s of ['SIGINT', 'SIGTERM'] as const) expect(signal(s), `a listener takes a repeated ${s} while the site stops`).toBeGreaterThan(0);
      expect(lines.filter((l) => /while a clean stop is under way/.test(l))).toHaveLength(2);
      stopped();
      await new Promise((r) => setTimeout(r, 10));
      expect(rec.log, 'one stop, then one quit').toEqual(['site.stop', 'app.quit']);
    } finally {
      for (const s of ['SIGINT', 'SIGTERM'] as const) for (const l of added(s)) process.off(s, l);
    }
  });

  describe('relaunch with the site\'s launch settings', () => {
    /** An `app` whose command line has the given --js-flags value; records relaunch and exit. */
    function app(jsFlags = '') {
      const rec = { relaunched: [] as string[][], exits: [] as number[] };
      const a: RelaunchApp = {
        commandLine: { getSwitchValue: (name) => (name === 'js-flags' ? jsFlags : '') },
        relaunch: (o) => void rec.relaunched.push(o.args),
        exit: (code) => void rec.exits.push(code),
      };
      return { a, rec };
    }
    const argv = ['/opt/tilstand/tilstand', '--kiosk', '--data', '/var/lib/tilstand'];
    const allEnv = () => ({ ...SITE_LAUNCH.env }) as NodeJS.ProcessEnv;

    it('relaunches once, the flags on --js-flags and the variables in the environment it passes on', () => {
      const { a, rec } = app();
      const env: NodeJS.ProcessEnv = { PATH: '/usr/bin' };
      const log: string[] = [];
      expect(relaunchWithLaunchSettings(a, argv, env, 'linux', (l) => log.push(l))).toBe(true);
      expect(rec.relaunched).toEqual([['--kiosk', '--data', '/var/lib/tilstand', `--js-flags=${SITE_LAUNCH.nodeFlags.join(' ')}`]]);
      expect(rec.exits).toEqual([0]);
      expect(env).toEqual({ PATH: '/usr/bin', ...SITE_LAUNCH.env, [RELAUNCH_MARKER]: '1' });
      expect(log).toEqual([]);
    });

    it('keeps --js-flags the shell was given, and sets only what is missing', () => {
      const { a, rec } = app('--expose-gc');
      const env = allEnv();
      expect(relaunchWithLaunchSettings(a, [...argv, '--js-flags=--expose-gc'], env, 'linux', () => undefined)).toBe(true);
      expect(rec.relaunched).toEqual([['--kiosk', '--data', '/var/lib/tilstand', `--js-flags=--expose-gc ${SITE_LAUNCH.nodeFlags.join(' ')}`]]);
    });

    it('goes on when started with them (on Windows the flags alone: no glibc there)', () => {
      for (const [env, platform] of [[allEnv(), 'linux'], [{}, 'win32']] as const) {
        const { a, rec } = app(`--expose-gc ${SITE_LAUNCH.nodeFlags.join(' ')}`);
        expect(relaunchWithLaunchSettings(a, argv, { ...env }, platform, () => undefined)).toBe(false);
        expect(rec).toEqual({ relaunched: [], exits: [] });
      }
      const { a, rec } = app('');
      expect(relaunchWithLaunchSettings(a, argv, {}, 'win32', () => undefined)).toBe(true);
      expect(rec.relaunched[0]!.at(-1)).toBe(`--js-flags=${SITE_LAUNCH.nodeFlags.join(' ')}`);
    });

    it('a relaunched shell that still lacks them says so and runs without them, never relaunching again', () => {
      const { a, rec } = app('');
      const log: string[] = [];
      expect(relaunchWithLaunchSettings(a, argv, { [RELAUNCH_MARKER]: '1' }, 'linux', (l) => log.push(l))).toBe(false);
      expect(rec).toEqual({ relaunched: [], exits: [] });
      expect(log[0]).toMatch(/^memory: {2}relaunched and still without --max-semi-space-size=8 MALLOC_ARENA_MAX=2; running without them/);
      // And how to start it with them, for whoever set up what starts it (a wrapper dropped them):
      // the variable before the program, the switch after the arguments it was given.
      expect(log).toEqual([log[0], '         start it with them (in the menu entry, shortcut or script that starts it): MALLOC_ARENA_MAX=2 /opt/tilstand/tilstand --kiosk --data /var/lib/tilstand --js-flags=--max-semi-space-size=8']);
    });

    it("a relaunched shell's command keeps the --js-flags it had, quoted for the shell; on Windows the flags alone", () => {
      const log: string[] = [];
      const withFlag = ['/opt/My Tilstand/tilstand', '--data', '/var/lib/tilstand', '--js-flags=--expose-gc'];
      expect(relaunchWithLaunchSettings(app('--expose-gc').a, withFlag, { [RELAUNCH_MARKER]: '1' }, 'linux', (l) => log.push(l))).toBe(false);
      expect(log[1]).toMatch(/: MALLOC_ARENA_MAX=2 '\/opt\/My Tilstand\/tilstand' --data \/var\/lib\/tilstand '--js-flags=--expose-gc --max-semi-space-size=8'$/);
      const win: string[] = [];
      expect(relaunchWithLaunchSettings(app('').a, ['C:\\Program Files\\Tilstand\\Tilstand.exe', '--kiosk'], { [RELAUNCH_MARKER]: '1' }, 'win32', (l) => win.push(l))).toBe(false);
      expect(win[0]).toMatch(/still without --max-semi-space-size=8; running/);
      expect(win[1]).toMatch(/: "C:\\Program Files\\Tilstand\\Tilstand.exe" --kiosk --js-flags=--max-semi-space-size=8$/);
    });
  });
});
