// `tilstand start [--data <dir>] [--headless] [--demo] [--mqtt-port <n>] [--http-port <n>]`:
// runs the site until SIGINT or SIGTERM (or a `stop` on the control socket), then stops it
// cleanly and exits 0; a signal that comes again meanwhile does not cut that stop short (one
// Ctrl-C under `npm start` is two SIGINTs: repeatedStopSignals). Prints where the broker, the UI
// and the machine endpoints listen (the bound ports, so `--mqtt-port 0 --http-port 0` is useful).
//
// The UI: the site's HTTP server serves the floor UI to a browser (headless mode). The Electron
// window (`npm run electron`) is the other way to show it; when Electron is not installed the
// output says that headless mode is what there is.
//
// First run: a directory without config.json and without --demo serves only the first-run
// screen (site id + first admin, first-run.ts) on the HTTP port; once it is filled in, the site
// starts on the same port and the browser continues at the sign-in screen.

import { createRequire } from 'node:module';
import { EXIT, parseArgs, usageError, type FlagSpecs } from '../../lsm/cli/args.ts';
import { dataPaths, DEFAULT_HTTP_PORT } from '../config.ts';
import { checkDataFormat } from '../data-format.ts';
import { FirstRunBackend, isInitialized } from '../first-run.ts';
import { SiteHttpServer } from '../http-server.ts';
import { DEMO_HQ_DIR } from '../demo/site.ts';
import { DEFAULT_RENDERER_DIR, DEMO_ADMIN, listenWithFallback, reportedBySite, Site } from '../site.ts';
import { UiServer } from '../ui-server.ts';
import { missingLaunchSettings, shellWord } from '../v8-flags.ts';
import { dataDir, DEMO_MAX_STEP_MS, DEMO_MIN_STEP_MS, nextSignal, port, positiveInt, print, refuseExtraArguments, repeatedStopSignals, type CliIO } from './common.ts';
import { exitCodeOf } from './exit-code.ts';
import { existsSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';

export const START_FLAGS: FlagSpecs = {
  data: { type: 'string', value: '<dir>' },
  headless: { type: 'boolean' },
  demo: { type: 'boolean' },
  'mqtt-port': { type: 'string', value: '<n>' },
  'http-port': { type: 'string', value: '<n>' },
  'demo-seed': { type: 'string', value: '<n>' },
  'demo-step-ms': { type: 'string', value: '<ms>' },
  'no-agent-timer': { type: 'boolean' },
  hq: { type: 'string', value: '<dir or s3 URL>' },
};

export const startUsage = [
  '  tilstand start [--data <dir>] [--demo [--demo-seed <n>] [--demo-step-ms <ms>]] [--headless] [--mqtt-port <n>] [--http-port <n>] [--hq <dir or s3 URL>] [--no-agent-timer]',
  '                                           run the site and its UI until Ctrl-C (--demo: a demo site with simulated',
  '                                           modules; port 0 = any free port; a new directory without --demo serves',
  '                                           the first-run screen; --no-agent-timer: the agent runs only on demand;',
  '                                           --hq: ship the tables (latest snapshot, tags), inbox and decisions to HQ, overriding config hq.target)',
];

/** Is the optional `electron` package installed? (never loads it) */
export function electronInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve('electron');
    return true;
  } catch {
    return false;
  }
}

/** Serves the first-run screen until the site id and admin are set; returns the bound port. */
async function firstRun(data: string, httpPort: number | undefined, io: CliIO, signal: Promise<NodeJS.Signals>): Promise<number | undefined> {
  const backend = new FirstRunBackend(data);
  const ui = new UiServer(backend, { rendererDir: DEFAULT_RENDERER_DIR, secure: false });
  // No fallback: the first run is no demo, and the site starts on this port once it is set up.
  const at = { port: httpPort ?? DEFAULT_HTTP_PORT, source: httpPort === undefined ? 'the default; --http-port <n> gives another' : '--http-port', fallback: false };
  let http: SiteHttpServer;
  try {
    http = await listenWithFallback((p) => new SiteHttpServer('127.0.0.1', p, { metrics: () => '', health: () => ({ ok: false, firstRun: true }), ui }), at, 'http', () => undefined);
  } catch (e) {
    ui.close();
    throw e;
  }
  const bound = http.boundTo.port;
  await print(io.stdout, [
    `tilstand: ${data} is a new data directory`,
    `  first run: open http://127.0.0.1:${bound}/ to set the site id and the first admin`,
    `  (or \`tilstand init --data ${data} --site <id> --admin <name> --pin <pin>\`, then start again)`,
  ]);
  const r = await Promise.race([backend.done.then((id) => ({ id })), signal.then((s) => ({ signal: s }))]);
  // Let the browser receive initSite's answer before the server goes.
  await new Promise((res) => setTimeout(res, 200));
  ui.close();
  await http.close();
  if ('signal' in r) {
    await print(io.stdout, [`tilstand: received ${r.signal} during the first run; stopped`]);
    return undefined;
  }
  await print(io.stdout, [`tilstand: site ${r.id} set up; starting it`]);
  return bound;
}

export async function runStart(argv: string[], io: CliIO): Promise<number> {
  const a = parseArgs(argv, START_FLAGS, 'start');
  if (a.help) {
    await print(io.stdout, ['usage:', ...startUsage]);
    return EXIT.ok;
  }
  refuseExtraArguments(a, 'start');
  const data = dataDir(a.string('data'));
  const demo = a.boolean('demo');
  // The seed and pace of the simulated modules, which only --demo runs: without it they were taken and ignored.
  for (const f of ['demo-seed', 'demo-step-ms']) {
    if (a.has(f) && !demo) throw usageError(`option '--${f}' sets the simulated modules of a demo site: give --demo with it, or leave it out`);
  }
  const mqttPort = port(a.string('mqtt-port'), 'mqtt-port');
  let httpPort = port(a.string('http-port'), 'http-port');
  const seed = positiveInt(a.string('demo-seed'), 'demo-seed');
  const stepMs = positiveInt(a.string('demo-step-ms'), 'demo-step-ms', DEMO_MIN_STEP_MS, DEMO_MAX_STEP_MS);
  const signal = nextSignal();
  const hup = sighupReloads(io);
  const again = repeatedStopSignals(io);
  keepRunningWithoutStderr(io.stderr);
  try {
    if (!demo && !isInitialized(data)) {
      // Before the first-run screen offers to set up a directory a newer version marked (its restore).
      checkDataFormat(data);
      const bound = await firstRun(data, httpPort, io, signal);
      if (bound === undefined) return EXIT.ok;
      httpPort = bound;
    }
    const site = await startSite({
      data,
      demo,
      demoHq: demo,
      ...(mqttPort !== undefined ? { mqttPort } : {}),
      ...(httpPort !== undefined ? { httpPort } : {}),
      ...(seed !== undefined ? { demoSeed: seed } : {}),
      ...(stepMs !== undefined ? { demoStepMs: stepMs } : {}),
      ...(a.boolean('no-agent-timer') ? { agentTimer: false } : {}),
      ...(a.string('hq') !== undefined ? { hq: a.string('hq')! } : {}),
      log: (line) => io.stderr.write(`tilstand: ${line}\n`),
    });
    if (typeof site === 'number') return site; // the site's log said why (its last line)
    const b = site.config.broker;
    const headless = a.boolean('headless');
    const unlaunched = missingLaunchSettings();
    const built = existsSync(join(DEFAULT_RENDERER_DIR, 'index.html'));
    const uiNote = headless
      ? '(headless)'
      : electronInstalled()
        ? '(Electron is installed: `npm run electron` opens the floor-PC window)'
        : '(Electron is not installed: headless mode — open the URL in a browser)';
    await print(io.stdout, [
      `tilstand: site ${site.config.site} running from ${data}`,
      `  ui:      ${site.httpUrl}/  ${uiNote}`,
      ...(built ? [] : ['           the renderer is not built: run `npm run build` (npm start does it)']),
      `  mqtt:    ${site.mqttUrl}${b.mode === 'embedded' ? ' (embedded broker)' : ' (external broker)'}`,
      `  http:    ${site.httpUrl}/metrics  ${site.httpUrl}/healthz`,
      `  control: ${site.controlSocketPath ?? '(none)'}`,
      ...(site.hqShown === undefined
        ? []
        : [
            `  hq:      syncing to ${site.hqShown}${demo && site.hqShown === resolve(data, DEMO_HQ_DIR) ? ' (a directory standing in for headquarters)' : ''}`,
            `           read it as HQ does: tilstand hq tables --hq ${site.hqShown} --site ${site.config.site}`,
          ]),
      ...(demo ? [`  demo:    simulated modules publishing: ${demoModulesText(site.demoModules)}`, `           sign in as '${DEMO_ADMIN.name}' with PIN ${DEMO_ADMIN.pin} (a new demo site's admin), or add a user:`,
            `           tilstand users add --data ${data} --name <name> --role shift_lead --pin <pin>`] : []),
      `  logs:    ${join(dataPaths(data).logs, 'site.log')}`,
      ...memoryLines(unlaunched, { execArgv: process.execArgv, script: process.argv[1], args: process.argv.slice(2), cwd: process.cwd() }),
      '  stop with Ctrl-C (SIGINT) or SIGTERM',
    ]);
    hup.started(site);
    const why = await Promise.race([signal.then((s) => `received ${s}`), site.stopped.then(() => 'stopped through the control socket')]);
    hup.stopping();
    await print(io.stdout, [`tilstand: ${why}; stopping`]);
    await site.stop();
    await print(io.stdout, ['tilstand: stopped cleanly']);
    return EXIT.ok;
  } finally {
    signal.cancel();
    hup.close();
    again.close();
  }
}

/**
 * Site.start, or the exit code when it failed and its log's last line (on stderr too) already
 * said why: printed again, the console would show the reason twice.
 */
async function startSite(o: Parameters<typeof Site.start>[0]): Promise<Site | number> {
  try {
    return await Site.start(o);
  } catch (e) {
    if (reportedBySite(e)) return exitCodeOf(e);
    throw e;
  }
}

/**
 * SIGHUP (systemd's ExecReload, `kill -HUP`) while the command runs: the running site reads
 * config.json again and applies its live sections (Site.reloadConfig logs what it applied); a bad
 * file is logged (by the site: logs/site.log and stderr) and changes nothing. Taken for the whole
 * command, so one that comes while the site starts or stops is answered instead of Node's default
 * (exit at once). One while it starts is remembered and made once the site runs (`started`): the
 * start may have read config.json before the edit the reload was sent for, and dropped, that edit
 * waited for the next reload. One while it stops is said and dropped. Windows sends SIGHUP only
 * when the console closes: not taken there.
 */
function sighupReloads(io: CliIO): { started(site: Site): void; stopping(): void; close(): void } {
  let site: Site | undefined;
  let stopping = false;
  let asked = false;
  const reload = (s: Site) =>
    s.reloadConfig().catch(() => {
      // The site's log said why (logs/site.log, and stderr through its sink).
    });
  const on = () => {
    if (site) return void reload(site);
    if (stopping) return void io.stderr.write('tilstand: SIGHUP while the site stops: config.json not reloaded\n');
    if (!asked) io.stderr.write('tilstand: SIGHUP while the site starts: config.json is read again once it runs\n');
    asked = true;
  };
  if (process.platform !== 'win32') process.on('SIGHUP', on);
  return {
    started: (s) => {
      site = s;
      if (asked) reload(s);
    },
    stopping: () => {
      site = undefined;
      stopping = true;
    },
    close: () => process.off('SIGHUP', on),
  };
}

/** Streams that already carry `lostConsole` (one listener each, however many starts in a process). */
const quietStreams = new WeakSet<NodeJS.WritableStream>();

/** A failed write of the site's log to a console that is gone: logs/site.log has the line. */
function lostConsole(): void {}

/**
 * The site's log goes to stderr too, written as it comes (not through `print`, whose LineWriter
 * keeps a failed write quiet). A stderr that is gone — the terminal closed (EIO; its SIGHUP is a
 * reload here, so the site runs on), a pipe whose reader ended (EPIPE) — failed the next log
 * line's write with an 'error' nobody listened for: an uncaught exception that ended the site on
 * the spot, without its stop (the control socket and sync lock left, the last events uncommitted).
 */
function keepRunningWithoutStderr(stderr: NodeJS.WritableStream): void {
  if (quietStreams.has(stderr)) return;
  quietStreams.add(stderr);
  stderr.on('error', lostConsole);
}

/**
 * The start-up lines of a process started without SITE_LAUNCH's settings (`missing`, as
 * missingLaunchSettings names them; none: no lines): what that costs, as measured (docs/operations.md,
 * "Memory settings"), and the command that starts this same process with them — the environment
 * variables before `node`, the node flags after it, the rest as this one was started. Saying only
 * "started without --max-semi-space-size=8 MALLOC_ARENA_MAX=2" left a newcomer to work out where
 * each goes.
 */
export function memoryLines(missing: readonly string[], cmd: { execArgv: readonly string[]; script: string | undefined; args: readonly string[]; cwd: string }, platform: NodeJS.Platform = process.platform): string[] {
  if (missing.length === 0) return [];
  const env = missing.filter((m) => !m.startsWith('-'));
  const flags = missing.filter((m) => m.startsWith('-'));
  // The script as typed from here when it lies below the working directory (`node dist/site/tilstand.mjs`).
  const rel = cmd.script === undefined ? 'dist/site/tilstand.mjs' : relative(cmd.cwd, cmd.script);
  const script = cmd.script !== undefined && (rel === '' || rel.startsWith('..') || isAbsolute(rel)) ? cmd.script : rel;
  const command = [...env, 'node', ...cmd.execArgv, ...flags, script, ...cmd.args].map((w) => shellWord(w, platform)).join(' ');
  return [
    `  memory:  started without ${missing.join(' ')}: a higher peak RSS (measured on a 1 M-row site: 278 MB with neither, 231 MB with both; docs/operations.md, "Memory settings")`,
    `           start it with them (as \`npm start\` does): ${command}`,
  ];
}

/** The demo's modules in words for the start banner: the yard system writes a table of the site's own. */
function demoModulesText(modules: readonly string[]): string {
  const named = modules.map((m) => (m === 'yard' ? "yard (its dock doors fill yard_doors, a table of the site's own)" : m));
  return named.length === 0 ? 'none yet (see logs/site.log)' : named.join(', ');
}
