// `tilstand start` as a child process, given a SIGHUP (systemd's ExecReload, `kill -HUP`) before
// its code has loaded: from the bundle the first ~0.2 s, under tsx seconds. Nobody listened yet,
// and Node's default for SIGHUP ended the process (a `systemctl reload` just after a start or a
// restart killed the site). bin/tilstand.mjs holds one until the command's own handler is there
// and hands it over: the start says so and reloads config.json once the site runs.
//
// The moment is made, not waited for: a module loader hook (registered with --import, before
// bin/tilstand.mjs runs) holds the import of core/site/cli/main.ts until the test has sent the
// signal, and says that it holds by a file. Every wait is bounded.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { initDataDir } from '../init.ts';

const BIN = resolve(import.meta.dirname, '../../../bin/tilstand.mjs');

/** Resolves the hook's import of main.ts only once `go` exists (at most 20 s), after writing `holding`. */
const HOOKS = `import { existsSync, writeFileSync } from 'node:fs';
const dir = new URL('.', import.meta.url).pathname;
export async function resolve(specifier, context, next) {
  if (specifier.endsWith('/cli/main.ts')) {
    writeFileSync(dir + 'holding', '');
    const end = Date.now() + 20_000;
    while (!existsSync(dir + 'go') && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  }
  return next(specifier, context);
}
`;
const PRELOAD = `import { register } from 'node:module';
register(new URL('./hooks.mjs', import.meta.url));
`;

let dir: string | undefined;
let child: ReturnType<typeof spawn> | undefined;
afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null && child.pid) child.kill('SIGKILL');
  child = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Waits (every 50 ms, at most `ms`) until `done()` or the child has exited. */
async function until(done: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end && !done() && child!.exitCode === null && child!.signalCode === null) await new Promise((r) => setTimeout(r, 50));
}

it.skipIf(process.platform === 'win32')('a SIGHUP before the command has loaded is held, and the site reloads config.json once it runs', async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-early-hup-'));
  const data = join(dir, 'data');
  await initDataDir({ data, site: 'hup', scrypt: { N: 1024, r: 8, p: 1 } });
  writeFileSync(join(dir, 'hooks.mjs'), HOOKS);
  writeFileSync(join(dir, 'preload.mjs'), PRELOAD);
  child = spawn(process.execPath, ['--import', join(dir, 'preload.mjs'), BIN, 'start', '--headless', '--no-agent-timer', '--data', data, '--mqtt-port', '0', '--http-port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<string>((r) => child!.once('exit', (code, sig) => r(sig ?? String(code))));

  await until(() => existsSync(join(dir!, 'holding')), 30_000);
  expect(existsSync(join(dir, 'holding')), `stderr:\n${err}`).toBe(true);
  child.kill('SIGHUP');
  writeFileSync(join(dir, 'go'), '');

  await until(() => out.includes('stop with Ctrl-C'), 40_000);
  expect(child.signalCode, `stderr:\n${err}`).toBeNull(); // was: SIGHUP
  expect(out, `stderr:\n${err}`).toContain('stop with Ctrl-C');
  expect(err).toContain('tilstand: SIGHUP while the site starts: config.json is read again once it runs');
  const log = () => readFileSync(join(data, 'logs', 'site.log'), 'utf8');
  await until(() => log().includes('config reloaded'), 10_000);
  expect(log()).toContain('config reloaded');

  child.kill('SIGTERM');
  const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('timeout'), 20_000))]);
  expect(code, `stdout:\n${out}\nstderr:\n${err}`).toBe('0');
}, 90_000);

it.skipIf(process.platform === 'win32')('another command keeps the default: a SIGHUP before it has loaded ends it (a closed terminal)', async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-early-hup-'));
  writeFileSync(join(dir, 'hooks.mjs'), HOOKS);
  writeFileSync(join(dir, 'preload.mjs'), PRELOAD);
  child = spawn(process.execPath, ['--import', join(dir, 'preload.mjs'), BIN, 'status', '--data', join(dir, 'none')], { stdio: 'ignore', env: { ...process.env, NODE_OPTIONS: '' } });
  const exited = new Promise<string>((r) => child!.once('exit', (code, sig) => r(sig ?? String(code))));
  await until(() => existsSync(join(dir!, 'holding')), 30_000);
  expect(existsSync(join(dir, 'holding'))).toBe(true);
  child.kill('SIGHUP');
  writeFileSync(join(dir, 'go'), '');
  expect(await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('timeout'), 20_000))])).toBe('SIGHUP');
}, 60_000);
