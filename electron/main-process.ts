// The Electron main process, minus the `electron` import (electron/main.mjs passes the real
// module in; tests pass a fake): argument handling, the Site in this process, the SiteService
// as the IPC backend, the first-run screen on a new data directory, and a clean stop on quit.
//
//   electron electron/main.mjs [--data <dir>] [--demo] [--kiosk] [--fullscreen]
//                              [--mqtt-port <n>] [--http-port <n>] [--serve-ui]
// Arguments Electron or Chromium add (`--no-sandbox`, `--enable-logging`, the app path, …) are
// ignored, as is any other flag we do not know — except one within two edits of one of ours
// (`--htp-port`, `--kiosc`, `--mqtt_port`: `nearMiss`), which is refused naming the flag meant,
// with the usage. Ignored, a mistyped flag left the shell on the config's port or out of kiosk
// mode without a word. No switch of Chromium's or Electron's is that close to ours.
//
// Order (Electron's rules): the privileged app scheme is registered before `ready`; the
// single-instance lock is taken before the site starts (a second start only focuses the first
// window and never opens the data directory); the site stops before the app quits.
//
// Quitting — the window closed, SIGINT, SIGTERM or SIGHUP (taken from before the site starts),
// or a quit Electron makes itself (the OS's logout or shutdown on macOS, the Dock's Quit: held at
// `before-quit` / `will-quit`) — runs one clean stop: the site stops, then the app quits, its own
// quit then let through (no quit → before-quit → stop loop). The wait for the stop is bounded,
// QUIT_STOP_WAIT_MS, after which the app quits without it (logged). SIGHUP stops the app as SIGTERM
// does: unlike `tilstand start`, where it is a reload (`systemctl reload`), the app has no reload
// signal (`tilstand config reload` reloads its site). A quit that comes while the site starts
// waits for the start to end (Site.start cannot be cut short), then stops it; no window opens, and
// a start that fails meanwhile is logged, not shown in an error box (a modal box would hold the
// quit up). A repeated signal is said and the stop goes on, as `tilstand start`
// (core/site/cli/common.ts repeatedStopSignals); SIGKILL ends the process at once. A start that
// fails with no quit asked gives the stop signals their default back before its error box (a modal
// box holds the main process's listeners off, so one left in place kept a stop signal from ending
// the app until the box was clicked). Not covered: Windows ends an app at logout or shutdown
// without before-quit (Electron's documented behaviour) and soon after; the journal (durable
// before PUBACK) is what keeps the events then, as after a kill.

import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SiteBackend } from '../core/site/api.ts';
import { dataDirProblem } from '../core/site/cli/common.ts';
import { FirstRunBackend, isInitialized, SwitchingBackend } from '../core/site/first-run.ts';
import { DEFAULT_RENDERER_DIR, reportedBySite, type SiteStartOptions } from '../core/site/site.ts';
import { SITE_LAUNCH, shellWord } from '../core/site/v8-flags.ts';
import { registerScheme, startShell, type ElectronLike } from './shell.ts';

export interface ShellArgs {
  data: string;
  demo: boolean;
  kiosk: boolean;
  fullscreen: boolean;
  serveUi: boolean;
  mqttPort?: number;
  httpPort?: number;
}

export class ShellArgsError extends Error {}

/** Errors runMain has said on the console already (`notStarted`): main.mjs does not print them again. */
const saidErrors = new WeakSet<object>();

/**
 * What electron/main.mjs prints for an error runMain threw, and the app's exit code: a bad flag's
 * message and usage (2); nothing for a start the site's log (core/site reportedBySite) or runMain
 * has said already (1) — main.mjs printed its stack after those lines, the reason a second or third
 * time; any other error with its stack (1).
 */
export function mainFailure(e: unknown): { line: string | undefined; code: number } {
  if (e instanceof ShellArgsError) return { line: e.message, code: 2 };
  if (reportedBySite(e) || (typeof e === 'object' && e !== null && saidErrors.has(e))) return { line: undefined, code: 1 };
  return { line: (e as Error | undefined)?.stack ?? String(e), code: 1 };
}

export const SHELL_USAGE = 'usage: tilstand-electron [--data <dir>] [--demo] [--kiosk] [--fullscreen] [--mqtt-port <n>] [--http-port <n>] [--serve-ui]';
const OURS = new Set(['--data', '--demo', '--kiosk', '--fullscreen', '--mqtt-port', '--http-port', '--serve-ui']);
const VALUED = new Set(['--data', '--mqtt-port', '--http-port']);

/** The longest edit distance at which an unknown flag is taken for a mistyped one of ours. */
const NEAR_MISS_EDITS = 2;

/** The flag of ours `flag` (not one of them) is within NEAR_MISS_EDITS edits of, if any. */
function nearMiss(flag: string): string | undefined {
  let best: { flag: string; d: number } | undefined;
  for (const ours of OURS) {
    const d = editDistance(flag, ours);
    if (d <= NEAR_MISS_EDITS && (best === undefined || d < best.d)) best = { flag: ours, d };
  }
  return best?.flag;
}

/** Levenshtein distance (insert, delete, substitute: one edit each). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** Parses our flags out of process.argv (everything else belongs to Electron/Chromium). */
export function parseShellArgs(argv: readonly string[], defaults: { data?: string } = {}): ShellArgs {
  const out: ShellArgs = { data: resolve(defaults.data ?? './tilstand-data'), demo: false, kiosk: false, fullscreen: false, serveUi: false };
  const port = (flag: string, v: string | undefined): number => {
    if (v === undefined || !/^\d+$/.test(v) || Number(v) > 65535) throw new ShellArgsError(`${flag}: expected a port number from 0 to 65535, got ${v === undefined ? 'nothing' : `'${v}'`}\n${SHELL_USAGE}`);
    return Number(v);
  };
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i]!;
    const eq = raw.indexOf('=');
    const flag = raw.startsWith('--') && eq > 0 ? raw.slice(0, eq) : raw;
    if (!OURS.has(flag)) {
      const meant = raw.startsWith('--') ? nearMiss(flag) : undefined;
      if (meant !== undefined) throw new ShellArgsError(`${flag}: unknown option; did you mean ${meant}?\n${SHELL_USAGE}`);
      continue;
    }
    let value: string | undefined;
    if (VALUED.has(flag)) value = eq > 0 && raw.startsWith('--') ? raw.slice(eq + 1) : argv[++i];
    switch (flag) {
      case '--data':
        if (!value) throw new ShellArgsError(`--data: expected a directory\n${SHELL_USAGE}`);
        // Another flag where the directory should be (`--data --kiosk`): it was taken as the
        // directory, a data directory named after the flag, and the flag itself was lost.
        if (eq < 0 && value.startsWith('--') && value.length > 2) {
          throw new ShellArgsError(`--data: expected a directory, got the option '${value}' (write --data=${value} if that is the value)\n${SHELL_USAGE}`);
        }
        out.data = resolve(value);
        break;
      case '--demo':
        out.demo = true;
        break;
      case '--kiosk':
        out.kiosk = true;
        break;
      case '--fullscreen':
        out.fullscreen = true;
        break;
      case '--serve-ui':
        out.serveUi = true;
        break;
      case '--mqtt-port':
        out.mqttPort = port(flag, value);
        break;
      case '--http-port':
        out.httpPort = port(flag, value);
        break;
    }
  }
  return out;
}

/** What `relaunchWithLaunchSettings` needs of Electron's `app`. */
export interface RelaunchApp {
  commandLine: { getSwitchValue(name: string): string };
  relaunch(options: { args: string[] }): void;
  exit(code: number): void;
}

/** Set in the environment of a relaunched shell, so it never relaunches twice. */
export const RELAUNCH_MARKER = 'TILSTAND_RELAUNCHED';

/**
 * The site runs in Electron's main process, whose V8 takes flags only from Electron's command line
 * (`--js-flags=…`; `v8.setFlagsFromString` comes too late for the young generation's size) and
 * whose glibc reads MALLOC_ARENA_MAX at start: a shell started without core/site/v8-flags.ts
 * `SITE_LAUNCH` relaunches itself once with them (the flags appended to any `--js-flags` it had,
 * the variables set in the environment the relaunched process inherits), as `npm start` and the
 * service units launch a site. Returns true when it relaunched: the caller does nothing more, this
 * process exits. A relaunched shell that still lacks them (a launcher that drops the switch) logs
 * what is missing and the command that starts it with them, and runs without them rather than
 * relaunching again.
 */
export function relaunchWithLaunchSettings(app: RelaunchApp, argv: readonly string[], env: NodeJS.ProcessEnv, platform: NodeJS.Platform, log: (line: string) => void): boolean {
  const jsFlags = app.commandLine.getSwitchValue('js-flags').split(/\s+/).filter((f) => f !== '');
  const flags = SITE_LAUNCH.nodeFlags.filter((f) => !jsFlags.includes(f));
  const vars = platform === 'win32' ? [] : Object.entries(SITE_LAUNCH.env).filter(([k, v]) => env[k] !== v);
  if (flags.length === 0 && vars.length === 0) return false;
  const args = argv.slice(1).filter((a) => !a.startsWith('--js-flags='));
  args.push(`--js-flags=${[...jsFlags, ...flags].join(' ')}`);
  if (env[RELAUNCH_MARKER] === '1') {
    // Whatever started this shell dropped the switch or the variable on the way (a wrapper script,
    // a launcher that passes on only its own arguments): relaunching again would lose them again.
    // Only the person who set up that launcher can put them in, so give them the command.
    const command = [...vars.map(([k, v]) => `${k}=${v}`), argv[0] ?? 'tilstand', ...args].map((w) => shellWord(w, platform)).join(' ');
    log(`memory:  relaunched and still without ${[...flags, ...vars.map(([k, v]) => `${k}=${v}`)].join(' ')}; running without them: a higher peak RSS (docs/operations.md, "Memory settings")`);
    log(`         start it with them (in the menu entry, shortcut or script that starts it): ${command}`);
    return false;
  }
  for (const [k, v] of vars) env[k] = v;
  env[RELAUNCH_MARKER] = '1';
  app.relaunch({ args });
  app.exit(0);
  return true;
}

/** What the main process needs of a running site (core/site's Site). */
export interface RunningSite {
  readonly service: SiteBackend;
  stop(): Promise<void>;
  /** A line in the site's log (logs/site.log and `log`); core/site's Site has it. */
  logLine?(line: string): void;
}

export interface MainDeps {
  startSite: (o: SiteStartOptions) => Promise<RunningSite>;
  rendererDir?: string;
  preloadPath?: string;
  log?: (line: string) => void;
}

export const PRELOAD_PATH = fileURLToPath(new URL('./preload.cjs', import.meta.url));

/**
 * The box a failed start shows, in the system's language (the UI's own language lives in the
 * renderer, which never started; the reason is the site's, in English).
 */
const NOT_STARTED = {
  en: {
    title: 'Tilstand could not start',
    content: (why: string, data: string, logPath: string) =>
      `${why}\n\nData directory: ${data}\nThe site's log: ${logPath}\n\nWhoever runs this PC can start it from a terminal (tilstand start --data …) to see more, or run tilstand config check.`,
  },
  nb: {
    title: 'Tilstand kunne ikke starte',
    content: (why: string, data: string, logPath: string) =>
      `${why}\n\nDatakatalog: ${data}\nStedets logg: ${logPath}\n\nDen som drifter denne PC-en kan starte den fra en terminal (tilstand start --data …) for å se mer, eller kjøre tilstand config check.`,
  },
  de: {
    title: 'Tilstand konnte nicht starten',
    content: (why: string, data: string, logPath: string) =>
      `${why}\n\nDatenverzeichnis: ${data}\nProtokoll des Standorts: ${logPath}\n\nWer diesen PC betreut, kann ihn aus einem Terminal starten (tilstand start --data …), um mehr zu sehen, oder tilstand config check ausführen.`,
  },
} as const;

/** `nb`, `nn` and `no` give Norwegian, `de` German, anything else English (as the renderer's initialLang). */
function boxLang(locale: string): keyof typeof NOT_STARTED {
  const base = locale.toLowerCase().split('-')[0];
  return base === 'nb' || base === 'nn' || base === 'no' ? 'nb' : base === 'de' ? 'de' : 'en';
}

/**
 * How long a quit waits for the site's clean stop before the app quits without it. Site.stop waits
 * at most 10 s for the calls in flight (core/site service.ts STOP_CALLS_WAIT_MS), then commits and
 * closes; 50 s holds that on a slow disk and stays under what an OS gives an app at logout or
 * shutdown (systemd's default stop timeout is 90 s).
 */
export const QUIT_STOP_WAIT_MS = 50_000;

/**
 * The signals that stop the app cleanly. SIGHUP too (the terminal of `npm run electron` closed, a
 * session's hang-up): it met Node's default and ended the app without its stop. The app has no
 * reload to give it, unlike `tilstand start` (a service's SIGHUP is `systemctl reload`: core/site
 * cli/start.ts sighupReloads); a reload goes through `tilstand config reload`.
 */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
type StopSignal = (typeof STOP_SIGNALS)[number];

/** Runs the app; resolves once the window is up (or at once when another instance has the lock). */
export async function runMain(e: ElectronLike, argv: readonly string[], deps: MainDeps): Promise<{ site: () => RunningSite | undefined; quit: () => Promise<void> }> {
  const log = deps.log ?? ((l: string) => console.error(`tilstand: ${l}`));
  const args = parseShellArgs(argv);
  registerScheme(e);
  let site: RunningSite | undefined;
  /** The site while it starts (undefined once it failed): a quit meanwhile waits for it. */
  let starting: Promise<RunningSite | undefined> | undefined;
  let quitting: Promise<void> | undefined;
  /** Set once the site has stopped (or the wait for it ran out): the app's own quit then goes through. */
  let released = false;
  const quit = (): Promise<void> => {
    quitting ??= (async () => {
      // A signal, or the window closed, while the site was starting: without the wait the app
      // quit with that site running, never stopped (its tables not committed, its locks and
      // control socket left as by a kill).
      const stop = (async () => (site ?? (await starting))?.stop())().catch((err: unknown) => log(`stopping the site: ${(err as Error).message}`));
      // Bounded: a stop that does not end (a bug, a disk that hangs) must not hold the app, and
      // with it the OS's logout or shutdown, for good. Quitting then is as a kill: the journal
      // is durable before PUBACK and the next start replays it.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), QUIT_STOP_WAIT_MS)));
      if ((await Promise.race([stop, bound])) === 'timeout') log(`the site did not ${site === undefined ? 'finish starting and stop' : 'stop'} within ${QUIT_STOP_WAIT_MS / 1000} s; quitting without waiting for it`);
      clearTimeout(timer);
      released = true;
      e.app.quit();
    })();
    return quitting;
  };
  if (!e.app.requestSingleInstanceLock()) {
    e.app.quit();
    return { site: () => undefined, quit };
  }
  // A quit Electron makes itself (the OS's logout or shutdown on macOS, the Dock's Quit):
  // `app.quit()` emits before-quit, then will-quit, and without a listener that holds it the app
  // quit with the site running. Held (preventDefault) until the clean stop has run; the app's own
  // quit after it (`released`) goes through, so a quit does not come round to a stop again.
  const holdQuit = (ev: { preventDefault(): void }): void => {
    if (released) return;
    ev.preventDefault();
    void quit();
  };
  e.app.on('before-quit', holdQuit);
  e.app.on('will-quit', holdQuit);
  // Every SIGINT, SIGTERM and SIGHUP from here on, before the site starts: taken only once it had started,
  // one during the start (a service manager stopping the app as it starts, a Ctrl-C) met the
  // default and ended the process without a clean stop (the stop's last commits and site.log's
  // "stopped" line lost, a half-started broker never closed). One during the start waits for it,
  // then stops the site. Not only the first of each: one Ctrl-C under `npm run electron` sends two
  // (the terminal's to the process group and npm's copy), and the second, with no listener left,
  // ended the process mid-stop — a repeated one is said and the stop goes on, as `tilstand start`
  // does (core/site/cli/common.ts repeatedStopSignals).
  const onSignal = (s: StopSignal): void => {
    if (quitting) log(`received ${s} while a clean stop is under way; it goes on (SIGKILL ends the process at once, without one)`);
    else if (site === undefined && starting !== undefined) log(`received ${s} while the site starts; it stops once started`);
    void quit();
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  const options = (): SiteStartOptions => ({
    data: args.data,
    demo: args.demo,
    demoHq: args.demo, // as `tilstand start --demo`: a new demo syncs to a stand-in HQ in its directory
    ui: args.serveUi,
    ...(args.mqttPort !== undefined ? { mqttPort: args.mqttPort } : {}),
    ...(args.httpPort !== undefined ? { httpPort: args.httpPort } : {}),
    log,
  });
  // A site that does not start leaves the floor PC with no window: say why in a box (the site's
  // log has the same line last), then the caller exits.
  const notStarted = async (err: unknown, when: string): Promise<void> => {
    const why = (err as Error)?.message ?? String(err);
    // The site's log said it already (its last line, to the console too): once is enough.
    if (!reportedBySite(err)) log(`the site did not start${when}: ${why}`);
    if (typeof err === 'object' && err !== null) saidErrors.add(err);
    // Asked to quit meanwhile (a signal, the window closed): a box is modal, and shown now it held
    // the quit up until someone at the PC clicked it. The log has the reason.
    if (quitting) return;
    // No site runs to stop: the signals get their default back before the box. It is modal and
    // shown synchronously, so no listener could run while it is up, and one left taking SIGTERM
    // or SIGINT kept a service manager's stop or a Ctrl-C from ending the app until someone
    // clicked the box.
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
    await e.app.whenReady(); // the system's language is known once the app is ready
    const box = NOT_STARTED[boxLang(e.app.getLocale?.() ?? '')];
    e.dialog.showErrorBox(box.title, box.content(why, args.data, join(args.data, 'logs', 'site.log')));
  };
  // A --data that is a file: said in the box, as a site that does not start. Left to go on, the
  // window showed the first-run screen for it, whose setup then failed.
  const problem = dataDirProblem(args.data);
  if (problem !== undefined) {
    const err = new Error(`--data: ${problem}`);
    await notStarted(err, '');
    throw err;
  }
  let backend: SiteBackend;
  if (args.demo || isInitialized(args.data)) {
    try {
      const start = deps.startSite(options());
      starting = start.catch(() => undefined);
      site = await start;
    } catch (err) {
      await notStarted(err, '');
      throw err;
    }
    // A quit came while it started: `quit` stops it; a window would only open on a stopping site.
    if (quitting) return { site: () => site, quit };
    backend = site.service;
  } else {
    // First run: the window shows the first-run screen; once it is filled in, the site starts
    // here and the same window talks to it.
    const first = new FirstRunBackend(args.data);
    const switching = new SwitchingBackend(first);
    backend = switching;
    void first.done.then(async () => {
      // The app quit while the first run was being sent (a shutdown's SIGTERM, the window closed):
      // it quit at once, having no site, and one started now would run in an exiting process.
      if (quitting) return;
      try {
        const start = deps.startSite(options());
        starting = start.catch(() => undefined);
        site = await start;
        switching.switchTo(site.service);
      } catch (err) {
        await notStarted(err, ' after the first run');
        void quit();
      }
    });
  }
  // Quitting (window closed, or a signal) stops the site first.
  const shellElectron: ElectronLike = { ...e, app: { ...e.app, quit: () => void quit(), on: e.app.on.bind(e.app), whenReady: e.app.whenReady.bind(e.app), requestSingleInstanceLock: e.app.requestSingleInstanceLock.bind(e.app) } };
  const shell = startShell(shellElectron, {
    rendererDir: deps.rendererDir ?? DEFAULT_RENDERER_DIR,
    preloadPath: deps.preloadPath ?? PRELOAD_PATH,
    kiosk: args.kiosk,
    fullscreen: args.fullscreen,
    backend,
    // The site's log once it runs (the page's error reports and IPC's unforeseen failures are
    // looked up there by id); before it (the first run), the main process's own.
    log: (line) => (site?.logLine ? site.logLine(line) : log(line)),
  });
  await shell.ready;
  return { site: () => site, quit };
}
