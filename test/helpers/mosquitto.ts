// Test helper: a real Debian mosquitto on two ephemeral loopback ports (the shipped modules'
// listener and Tilstand's own), configured from the shipped core/ingest/mosquitto/mosquitto.conf
// (the listeners' ports, paths and logging replaced for the temp dir) with
// a generated password file (mosquitto_passwd -b) and the shipped ACL template.
//
// When /usr/sbin/mosquitto is missing, `startMosquitto` prints a LOUD notice and returns
// undefined so the caller can skip — except under CI=true, where it throws: CI must not pass by
// skipping the external-broker tests. A binary that is there but cannot be run (not executable,
// its interpreter missing) fails `startMosquitto` at once with "could not start mosquitto at
// <path>: <code>" (child-failure.ts), not an unhandled 'error' event.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChildFailure, childFailure, type WatchedChild } from './child-failure.ts';

export const MOSQUITTO_BIN = '/usr/sbin/mosquitto';
export const MOSQUITTO_PASSWD_BIN = '/usr/bin/mosquitto_passwd';
const SHIPPED = resolve(dirname(fileURLToPath(import.meta.url)), '../../core/ingest/mosquitto');

export interface MosquittoOptions {
  /** username → password; written with mosquitto_passwd -b. */
  users: Record<string, string>;
  site: string;
  /** false: sessions and queues do not survive `restart()` (to test a lost session). Default true. */
  persistence?: boolean;
  /** Extra lines appended to the config; a shipped line setting the same option is dropped. */
  extraConfig?: string;
  readyTimeoutMs?: number;
  /** The binaries (default: Debian's paths). */
  bin?: string;
  passwdBin?: string;
}

export interface MosquittoHandle {
  /** The modules' listener (shipped `listener 1883`: client id = username). */
  port: number;
  url: string;
  /** Tilstand's own listener (shipped `listener 1884`): MqttSource and the write-back connect here. */
  sitePort: number;
  siteUrl: string;
  dir: string;
  /** Stops (SIGTERM, which saves persistence) and starts again on the same port and files. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** Log output so far (stderr), for failure messages. */
  log(): string;
}

/** Prints the loud notice (or throws under CI) and returns undefined. */
export function mosquittoUnavailable(why: string): undefined {
  const msg = `mosquitto tests NOT RUN: ${why}. Install Debian's mosquitto (apt-get install mosquitto) to run them.`;
  if (process.env.CI === 'true') throw new Error(`${msg} (CI=true: failing instead of skipping)`);
  const bar = '!'.repeat(msg.length + 8);
  console.warn(`\n${bar}\n!!! ${msg} !!!\n${bar}\n`);
  return undefined;
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const OVERRIDDEN = /^\s*(password_file|acl_file|persistence_location|persistence|log_dest|log_type|pid_file|user)\b/;

function config(opts: MosquittoOptions, dir: string, port: number, sitePort: number): string {
  const extraKeys = new Set((opts.extraConfig ?? '').split('\n').map((l) => l.trim().split(/\s+/)[0]).filter((k) => k && !k.startsWith('#')));
  // The shipped listeners keep their places (the options after each belong to it); only their
  // ports change.
  const shipped = readFileSync(join(SHIPPED, 'mosquitto.conf'), 'utf8')
    .split('\n')
    .filter((l) => !OVERRIDDEN.test(l) && !extraKeys.has(l.trim().split(/\s+/)[0]!))
    .map((l) => l.replace(/^listener 1883 127\.0\.0\.1$/, `listener ${port} 127.0.0.1`).replace(/^listener 1884 127\.0\.0\.1$/, `listener ${sitePort} 127.0.0.1`))
    .join('\n');
  if (!shipped.includes(`listener ${port} `) || !shipped.includes(`listener ${sitePort} `)) throw new Error('the shipped mosquitto.conf no longer has listeners 1883 and 1884 on 127.0.0.1');
  return [
    shipped,
    '# --- test overrides',
    `password_file ${join(dir, 'passwd')}`,
    `acl_file ${join(dir, 'acl')}`,
    `persistence ${opts.persistence === false ? 'false' : 'true'}`,
    `persistence_location ${dir}/`,
    'log_dest stderr',
    'log_type error',
    'log_type warning',
    // root would otherwise drop to the mosquitto user, who cannot read the 0700 temp dir
    ...(process.getuid?.() === 0 ? ['user root'] : []),
    opts.extraConfig ?? '',
    '',
  ].join('\n');
}

function waitReady(port: number, child: ChildProcess, watched: WatchedChild, timeoutMs: number, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise<void>((resolve, reject) => {
    const attempt = () => {
      // Before the exit code: a child that could not start has one too (-2 for ENOENT).
      const failed = watched.error();
      if (failed) return reject(failed);
      if (child.exitCode !== null) return reject(new Error(`mosquitto exited with ${child.exitCode}: ${log()}`));
      const s = createConnection({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve();
      });
      s.once('error', () => {
        s.destroy();
        if (Date.now() > deadline) return reject(new Error(`mosquitto not ready on ${port} after ${timeoutMs} ms: ${log()}`));
        setTimeout(attempt, 25);
      });
    };
    attempt();
  });
}

export async function startMosquitto(opts: MosquittoOptions): Promise<MosquittoHandle | undefined> {
  const bin = opts.bin ?? MOSQUITTO_BIN;
  const passwdBin = opts.passwdBin ?? MOSQUITTO_PASSWD_BIN;
  if (!existsSync(bin)) return mosquittoUnavailable(`${bin} is missing`);
  if (!existsSync(passwdBin)) return mosquittoUnavailable(`${passwdBin} is missing`);
  const dir = mkdtempSync(join(tmpdir(), 'tilstand-mosquitto-'));
  const passwd = join(dir, 'passwd');
  writeFileSync(passwd, '', { mode: 0o600 });
  for (const [user, pw] of Object.entries(opts.users)) {
    execFileSync(passwdBin, ['-b', passwd, user, pw], { stdio: 'ignore' });
  }
  const acl = readFileSync(join(SHIPPED, 'tilstand.acl.template'), 'utf8').replaceAll('@SITE@', opts.site);
  writeFileSync(join(dir, 'acl'), acl, { mode: 0o600 });

  let stderr = '';
  let child: ChildProcess | undefined;
  let port = 0;
  let sitePort = 0;
  const confPath = join(dir, 'mosquitto.conf');
  const launch = async () => {
    writeFileSync(confPath, config(opts, dir, port, sitePort));
    const c = spawn(bin, ['-c', confPath], { stdio: ['ignore', 'ignore', 'pipe'] });
    const watched = childFailure(c, `mosquitto at ${bin}`);
    c.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-20_000);
    });
    child = c;
    await waitReady(port, c, watched, opts.readyTimeoutMs ?? 5000, () => stderr);
    await waitReady(sitePort, c, watched, opts.readyTimeoutMs ?? 5000, () => stderr);
  };
  const stop = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  // The port is found free, then bound by mosquitto: another process may take it in between,
  // so a bounded number of attempts. A binary that could not be started is not tried again.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    sitePort = await freePort();
    if (sitePort === port) continue;
    try {
      await launch();
      break;
    } catch (err) {
      await stop();
      if (attempt >= 3 || (err instanceof ChildFailure && !err.started)) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }
  return {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    sitePort,
    siteUrl: `mqtt://127.0.0.1:${sitePort}`,
    dir,
    log: () => stderr,
    restart: async () => {
      await stop();
      await launch();
    },
    stop: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
