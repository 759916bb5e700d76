// The site's bundles as `npm start` and `npm run electron` run them: built by
// scripts/build-site.mjs into dist/, run with plain node. `help` is the developer entry's
// (bin/tilstand.mjs, through tsx); a headless demo start serves the built UI and the API on
// loopback, runs the rule of its own a new demo directory gets, and stops cleanly on SIGINT; the
// Electron main process (with a stand-in `electron`) starts the site, opens the window with the
// preload and renderer found beside the sources, and quits after stopping the site on SIGINT.

import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { buildBundles } from './build-site.mjs';
import { SITE_LAUNCH } from '../core/site/v8-flags.ts';
import { initDataDir } from '../core/site/init.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'tilstand.mjs');
const SITE_BUNDLE = join(ROOT, 'dist', 'site', 'tilstand.mjs');
/** The bundle's code, which the launcher SITE_BUNDLE imports (scripts/build-site.mjs `launch`). */
const SITE_CODE = join(ROOT, 'dist', 'site', 'site.mjs');
const ELECTRON_BUNDLE = join(ROOT, 'dist', 'electron', 'main.mjs');
const RENDERER_INDEX = join(ROOT, 'dist', 'renderer', 'index.html');
const run = promisify(execFile);

let dir: string | undefined;
let child: ReturnType<typeof spawn> | undefined;
afterEach(() => {
  if (child?.pid && child.spawnargs[0] === '/bin/sh') {
    try {
      process.kill(-child.pid, 'SIGKILL'); // the whole group: the shell and anything it left
    } catch {
      // already gone
    }
  }
  if (child && child.exitCode === null && child.pid) child.kill('SIGKILL');
  child = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

beforeAll(async () => {
  expect(await buildBundles(['site', 'electron'])).toEqual([SITE_BUNDLE, ELECTRON_BUNDLE]);
});

/**
 * A started site's output, once it printed its UI's address (or exited, or 40 s passed): `out()`
 * and `err()` read what it wrote so far; `exited` resolves with its exit code.
 */
async function untilUi(c: ChildProcess): Promise<{ out: () => string; err: () => string; exited: Promise<number | null> }> {
  let out = '';
  let err = '';
  c.stdout!.on('data', (d) => (out += d));
  c.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((r) => c.once('exit', (code) => r(code)));
  const end = Date.now() + 40_000;
  while (!/ui:\s+http:\/\/127\.0\.0\.1:\d+\//.test(out) && c.exitCode === null && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
  return { out: () => out, err: () => err, exited };
}

const post = (base: string, method: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}/api/${method}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1', ...headers }, body: JSON.stringify(body) });

describe('the site bundle (dist/site/tilstand.mjs)', () => {
  it('prints the same usage as bin/tilstand.mjs', async () => {
    const [bundled, dev] = await Promise.all([run(process.execPath, [SITE_BUNDLE, 'help']), run(process.execPath, [BIN, 'help'])]);
    expect(bundled.stdout).toContain('usage: tilstand <command>');
    expect(bundled.stdout).toBe(dev.stdout);
    expect(bundled.stderr).toBe('');
  });

  it('loads nothing through tsx, and the bundles take electron and the packages from node_modules at run time', () => {
    for (const file of [SITE_CODE, ELECTRON_BUNDLE]) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(/from "tsx|import\("tsx/);
      expect(text, file).toMatch(/^import Database from "better-sqlite3";$/m);
      // The renderer directory and createRequire resolve from the sources' own places.
      expect(text, file).toContain('new URL("../../core/site/site.ts", import.meta.url)');
    }
    const electron = readFileSync(ELECTRON_BUNDLE, 'utf8');
    expect(electron).toContain('import("electron")');
    expect(electron).toContain('new URL("../../electron/main-process.ts", import.meta.url)');
  });

  it('is launched by dist/site/tilstand.mjs, which holds an early SIGHUP before the bundle (site.mjs) and its packages load', () => {
    const launcher = readFileSync(SITE_BUNDLE, 'utf8').split('\n').filter((l) => /^(import|await import)\b/.test(l));
    expect(launcher).toEqual(['import "./sighup-hold.mjs";', 'await import("./site.mjs");']);
    // The bundle imports it by the same path: one module, run once.
    expect(readFileSync(SITE_CODE, 'utf8')).toMatch(/^import "\.\/sighup-hold\.mjs";$/m);
    expect(readFileSync(join(ROOT, 'dist', 'site', 'sighup-hold.mjs'), 'utf8')).toBe(readFileSync(join(ROOT, 'bin', 'sighup-hold.mjs'), 'utf8'));
  });

  it.skipIf(process.platform === 'win32')('a SIGHUP while the bundle loads is held, and the started site reloads config.json once it runs', async () => {
    // The moment is made, not waited for: a loader hook (--import, before the launcher runs)
    // holds the launcher's import of site.mjs until the signal is sent, and says so by a file.
    dir = mkdtempSync(join(tmpdir(), 'tilstand-bundle-hup-'));
    const data = join(dir, 'data');
    await initDataDir({ data, site: 'hup', scrypt: { N: 1024, r: 8, p: 1 } });
    writeFileSync(
      join(dir, 'hooks.mjs'),
      `import { existsSync, writeFileSync } from 'node:fs';
const dir = new URL('.', import.meta.url).pathname;
export async function resolve(specifier, context, next) {
  if (specifier === './site.mjs') {
    writeFileSync(dir + 'holding', '');
    const end = Date.now() + 20_000;
    while (!existsSync(dir + 'go') && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  }
  return next(specifier, context);
}
`,
    );
    writeFileSync(join(dir, 'preload.mjs'), `import { register } from 'node:module';\nregister(new URL('./hooks.mjs', import.meta.url));\n`);
    child = spawn(process.execPath, ['--import', join(dir, 'preload.mjs'), SITE_BUNDLE, 'start', '--headless', '--no-agent-timer', '--data', data, '--mqtt-port', '0', '--http-port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const held = join(dir, 'holding');
    for (const end = Date.now() + 30_000; !existsSync(held) && child.exitCode === null && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(held)).toBe(true);
    child.kill('SIGHUP');
    writeFileSync(join(dir, 'go'), '');
    const { out, err, exited } = await untilUi(child);
    expect(child.signalCode, `stderr:\n${err()}`).toBeNull(); // was: SIGHUP
    expect(out(), `stderr:\n${err()}`).toMatch(/ui:\s+http:\/\/127\.0\.0\.1:\d+\//);
    expect(err()).toContain('tilstand: SIGHUP while the site starts: config.json is read again once it runs');
    const log = () => readFileSync(join(data, 'logs', 'site.log'), 'utf8');
    for (const end = Date.now() + 10_000; !log().includes('config reloaded') && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
    expect(log()).toContain('config reloaded');
    child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('timeout'), 20_000))]);
    expect(code, `stdout:\n${out()}\nstderr:\n${err()}`).toBe(0);
  }, 90_000);

  it('starts a headless demo site that serves the UI and /api on loopback, runs the rule <data>/rules/door-down.mts, and stops cleanly on SIGINT', async () => {
    expect(existsSync(RENDERER_INDEX), 'the renderer is built first (vite build, as npm start and npm test do)').toBe(true);
    dir = mkdtempSync(join(tmpdir(), 'tilstand-bundle-'));
    const data = join(dir, 'data');
    // Launched as `npm start -- <args>` runs it: package.json's start script through `sh -c`, the
    // arguments appended, and a signal sent to the process npm started (npm forwards SIGINT and
    // SIGTERM to it). Its own process group, so that a node left behind by the shell dies with it.
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
    child = spawn('/bin/sh', ['-c', `${pkg.scripts.start} "$@"`, 'sh', '--demo', '--headless', '--data', data, '--mqtt-port', '0', '--http-port', '0', '--no-agent-timer'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const { out, err, exited } = await untilUi(child);
    const base = /ui:\s+(http:\/\/127\.0\.0\.1:\d+)\//.exec(out())?.[1];
    expect(base, `stdout:\n${out()}\nstderr:\n${err()}`).toBeDefined();
    expect(out()).not.toContain('memory:  started without');

    // The UI: dist/renderer, found from core/site/site.ts's place as under tsx.
    const index = await fetch(`${base}/`);
    expect(index.status).toBe(200);
    const html = await index.text();
    expect(html).toBe(readFileSync(RENDERER_INDEX, 'utf8'));
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${base}/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain('javascript');

    // The API: the demo admin signs in, then a session call answers.
    const signIn = await post(base!, 'signIn', { user: 'demo', secret: '1234' });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const me = (await (await post(base!, 'me', {}, { Cookie: cookie })).json()) as { ok: boolean; value: { name: string } };
    expect(me.ok).toBe(true);
    expect(me.value.name).toBe('demo');
    const status = await post(base!, 'status', {}, { Cookie: cookie });
    expect(status.status).toBe(200);
    // The new demo directory's rule of its own (core/site/init.ts): the example, copied beside the
    // bundle by the build, written to <data>/rules/ and loaded from there by the bundle (tsx's
    // tsImport; its type-only import, a path the data directory does not have, dropped).
    const example = readFileSync(join(ROOT, 'docs', 'examples', 'rules', 'door-down.mts'), 'utf8');
    expect(readFileSync(join(ROOT, 'dist', 'site', 'examples', 'rules', 'door-down.mts'), 'utf8')).toBe(example);
    expect(readFileSync(join(data, 'rules', 'door-down.mts'), 'utf8')).toBe(example);
    const rules = ((await status.json()) as { value: { agentRules: { id: string; file?: { path: string } }[] } }).value.agentRules;
    expect(rules.filter((r) => r.file !== undefined)).toEqual([{ id: 'door-down', version: '3', file: { path: 'rules/door-down.mts', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) } }]);
    expect(await (await fetch(`${base}/metrics`)).text()).toContain('tilstand_ingest_table_age_ms');

    child.kill('SIGINT');
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('timeout'), 20_000))]);
    expect(code, `stdout:\n${out()}\nstderr:\n${err()}`).toBe(0);
    expect(out()).toContain('received SIGINT');
    expect(out()).toContain('stopped cleanly');
  });
});

describe('the site bundle in a tree without docs/ (as the packaged app holds it)', () => {
  it("gives a new demo directory its rule from the copy beside the bundle, and runs it from <data>/rules/", async () => {
    // Only the bundle (with what the build copied beside it), package.json and the packages: no
    // docs/, no core/ sources.
    dir = mkdtempSync(join(tmpdir(), 'tilstand-bundle-tree-'));
    const tree = join(dir, 'tree');
    mkdirSync(join(tree, 'dist'), { recursive: true });
    cpSync(join(ROOT, 'dist', 'site'), join(tree, 'dist', 'site'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(tree, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'), 'dir');
    const bundle = join(tree, 'dist', 'site', 'tilstand.mjs');
    const data = join(dir, 'data');
    child = spawn(process.execPath, [bundle, 'start', '--demo', '--headless', '--data', data, '--mqtt-port', '0', '--http-port', '0', '--no-agent-timer', '--demo-step-ms', '600000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const { out, err, exited } = await untilUi(child);
    expect(out(), `stdout:\n${out()}\nstderr:\n${err()}`).toMatch(/ui:\s+http:\/\/127\.0\.0\.1:\d+\//);
    expect(readFileSync(join(data, 'rules', 'door-down.mts'), 'utf8')).toBe(readFileSync(join(ROOT, 'docs', 'examples', 'rules', 'door-down.mts'), 'utf8'));
    const status = await run(process.execPath, [bundle, 'status', '--data', data]);
    const lines = status.stdout.split('\n');
    // The running agent's line (started without its timer), then its rules'.
    expect(lines.filter((l) => /^agent: /.test(l))).toEqual([
      'agent: does not run on its own (started with --no-agent-timer): only when asked (tilstand agent run)',
      expect.stringMatching(/^agent: \d+ rules, 1 from rule files of this site's own \(config agent\.ruleFiles\)$/),
    ]);
    expect(lines.filter((l) => l.startsWith('  rule '))).toEqual([expect.stringMatching(/^ {2}rule door-down@3 from rules\/door-down\.mts \(sha256 [0-9a-f]{12}…\)$/)]);

    child.kill('SIGINT');
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('timeout'), 20_000))]);
    expect(code, `stdout:\n${out()}\nstderr:\n${err()}`).toBe(0);
  });
});

/**
 * A stand-in for the `electron` package (not installed here): records the window, serves the
 * window's first load through the registered app:// handler, calls the IPC API once, and exits
 * when the app quits; reads `--js-flags=` from the command line as Electron does, records a
 * relaunch (its arguments and the environment the relaunched process would inherit) and exits on
 * `app.exit`. Printed as `@@STUB <json>` lines.
 */
const ELECTRON_STUB = `
import { existsSync } from 'node:fs';
const say = (o) => process.stdout.write('@@STUB ' + JSON.stringify(o) + '\\n');
let scheme;
const ipc = new Map();
const menus = [];
const contents = () => ({ id: 1, send() {}, on() {}, setWindowOpenHandler() {}, isDestroyed: () => false });
export default {
  app: {
    commandLine: { getSwitchValue: (n) => (process.argv.find((a) => a.startsWith('--' + n + '=')) ?? '').slice(n.length + 3) },
    relaunch(o) { say({ relaunch: o.args, env: { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? null, TILSTAND_RELAUNCHED: process.env.TILSTAND_RELAUNCHED ?? null } }); },
    exit(code) { say({ exit: code }); process.exit(code); },
    requestSingleInstanceLock: () => true,
    on() {},
    whenReady: () => Promise.resolve(),
    quit() { say({ quit: true }); setImmediate(() => process.exit(0)); },
  },
  BrowserWindow: class {
    webContents = contents();
    constructor(o) { this.preload = o.webPreferences.preload; }
    async loadURL(url) {
      const r = await scheme(new Request(url));
      const [channel, handle] = [...ipc][0];
      const frame = { sender: { id: 7 }, senderFrame: { url } };
      const signIn = await handle(frame, 'signIn', { user: 'demo', secret: '1234' });
      say({ preload: this.preload, preloadExists: existsSync(this.preload), status: r.status, html: await r.text(), channel, signIn, menus });
    }
    on() {}
    isMinimized() { return false; }
    restore() {}
    focus() {}
  },
  Menu: { setApplicationMenu: (m) => void menus.push(m) },
  ipcMain: { handle: (ch, fn) => void ipc.set(ch, fn) },
  protocol: { registerSchemesAsPrivileged() {}, handle: (_s, fn) => void (scheme = fn) },
  session: { defaultSession: { webRequest: { onHeadersReceived() {} }, setPermissionRequestHandler() {}, setPermissionCheckHandler() {}, on() {} } },
};
`;

describe('the Electron bundle (dist/electron/main.mjs)', () => {
  it('relaunches itself once with the site\'s launch settings, then runs the main process: the site, the window with electron/preload.cjs and dist/renderer, the IPC API; SIGINT stops the site and quits', async () => {
    expect(existsSync(RENDERER_INDEX), 'the renderer is built first').toBe(true);
    dir = mkdtempSync(join(tmpdir(), 'tilstand-electron-bundle-'));
    writeFileSync(join(dir, 'electron-stub.mjs'), ELECTRON_STUB);
    const stubUrl = pathToFileURL(join(dir, 'electron-stub.mjs')).href;
    writeFileSync(join(dir, 'hooks.mjs'), `export async function resolve(s, c, next) { return s === 'electron' ? { url: ${JSON.stringify(stubUrl)}, shortCircuit: true } : next(s, c); }`);
    writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});`);
    const data = join(dir, 'data');
    const register = ['--import', pathToFileURL(join(dir, 'register.mjs')).href];
    const plainEnv = { ...process.env };
    for (const k of [...Object.keys(SITE_LAUNCH.env), 'TILSTAND_RELAUNCHED']) delete plainEnv[k];
    // Started as a user would start it, without the launch settings: it relaunches, and no more.
    const first = spawnSync(process.execPath, [...register, ELECTRON_BUNDLE, '--demo', '--data', data, '--mqtt-port', '0'], { encoding: 'utf8', env: plainEnv, timeout: 40_000 });
    const firstStub = first.stdout.split('\n').filter((l) => l.startsWith('@@STUB ')).map((l) => JSON.parse(l.slice(7)) as { relaunch?: string[]; env?: Record<string, string> });
    expect(first.status, `stdout:\n${first.stdout}\nstderr:\n${first.stderr}`).toBe(0);
    expect(firstStub).toEqual([
      { relaunch: [ELECTRON_BUNDLE, '--demo', '--data', data, '--mqtt-port', '0', `--js-flags=${SITE_LAUNCH.nodeFlags.join(' ')}`], env: { ...SITE_LAUNCH.env, TILSTAND_RELAUNCHED: '1' } },
      { exit: 0 },
    ]);
    expect(existsSync(data), 'the first process opened no data directory').toBe(false);
    // The relaunched process, with the arguments and environment Electron would give it.
    child = spawn(process.execPath, [...register, ...firstStub[0]!.relaunch!], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...plainEnv, ...firstStub[0]!.env } });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    const stub = () => out.split('\n').filter((l) => l.startsWith('@@STUB ')).map((l) => JSON.parse(l.slice(7)) as Record<string, unknown>);
    const end = Date.now() + 40_000;
    while (stub().length === 0 && child.exitCode === null && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
    const win = stub()[0];
    expect(win, `stdout:\n${out}\nstderr:\n${err}`).toBeDefined();
    expect(win!.preload).toBe(join(ROOT, 'electron', 'preload.cjs'));
    expect(win!.preloadExists).toBe(true);
    expect(win!.status).toBe(200);
    expect(win!.html).toBe(readFileSync(RENDERER_INDEX, 'utf8'));
    expect(win!.channel).toBe('tilstand:call');
    expect(win!.signIn).toEqual({ ok: true, value: { name: 'demo', roles: ['admin'] } });
    // No application menu (electron/shell.ts): the real main path hands Menu through to the shell.
    expect(win!.menus).toEqual([null]);
    expect(err).not.toContain('memory:');

    child.kill('SIGINT');
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('timeout'), 20_000))]);
    expect(code, `stdout:\n${out}\nstderr:\n${err}`).toBe(0);
    expect(stub().at(-1)).toEqual({ quit: true });
  });
});
