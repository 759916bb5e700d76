// The benchmark's mosquitto: Debian's binary (found on PATH, else /usr/sbin/mosquitto) on
// 127.0.0.1 and a free port, with a temporary copy of the shipped configuration
// (core/ingest/mosquitto/mosquitto.conf: queues, persistence, autosave) in which only the
// listener, the file paths and logging are replaced — the same overrides as test/helpers/mosquitto.ts
// (that helper takes a fixed path and throws under CI=true when the binary is missing, where the
// benchmark must report "not installed" instead). Passwords with mosquitto_passwd, ACL from the
// shipped template. Stopped with SIGTERM (SIGKILL after 5 s) and its directory removed.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SHIPPED = resolve(dirname(fileURLToPath(import.meta.url)), '../core/ingest/mosquitto');

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `name` on PATH, else in the Debian locations; undefined when absent. */
export function findBinary(name: string, fallbacks: string[]): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  return fallbacks.find(executable);
}

export interface BenchMosquitto {
  port: number;
  url: string;
  bin: string;
  version: string;
  /** The configuration as written (for the results' notes). */
  config: string;
  log(): string;
  stop(): Promise<void>;
}

export type MosquittoLookup = { ok: true; bin: string; passwd: string } | { ok: false; why: string };

/**
 * mosquitto on PATH, else /usr/sbin/mosquitto. `TILSTAND_BENCH_MOSQUITTO` overrides: a path to the
 * binary, or `none` to run as if it were not installed (to check the "not installed" row).
 */
export function lookupMosquitto(env: NodeJS.ProcessEnv = process.env): MosquittoLookup {
  const forced = env.TILSTAND_BENCH_MOSQUITTO;
  const bin = forced === 'none' ? undefined : forced ? (executable(forced) ? forced : undefined) : findBinary('mosquitto', ['/usr/sbin/mosquitto']);
  if (!bin) return { ok: false, why: `mosquitto not installed (${forced ? `TILSTAND_BENCH_MOSQUITTO=${forced}` : 'looked on PATH and at /usr/sbin/mosquitto'})` };
  const passwd = findBinary('mosquitto_passwd', ['/usr/bin/mosquitto_passwd', join(dirname(bin), 'mosquitto_passwd')]);
  if (!passwd) return { ok: false, why: `mosquitto_passwd not installed (mosquitto is at ${bin})` };
  return { ok: true, bin, passwd };
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const OVERRIDDEN = /^\s*(listener|password_file|acl_file|persistence_location|persistence|log_dest|log_type|pid_file|user|connection_messages)\b/;

function waitReady(port: number, child: ChildProcess, timeoutMs: number, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise<void>((res, rej) => {
    const attempt = () => {
      if (child.exitCode !== null) return rej(new Error(`mosquitto exited with ${child.exitCode}: ${log()}`));
      const s = createConnection({ host: '127.0.0.1', port }, () => {
        s.destroy();
        res();
      });
      s.once('error', () => {
        s.destroy();
        if (Date.now() > deadline) return rej(new Error(`mosquitto not ready on ${port} after ${timeoutMs} ms: ${log()}`));
        setTimeout(attempt, 20);
      });
    };
    attempt();
  });
}

/** Starts mosquitto with `users` (username → password) for `site`; throws when it cannot. */
export async function startBenchMosquitto(found: { bin: string; passwd: string }, users: Record<string, string>, site: string): Promise<BenchMosquitto> {
  const dir = mkdtempSync(join(tmpdir(), 'tilstand-bench-mosquitto-'));
  const passwdFile = join(dir, 'passwd');
  writeFileSync(passwdFile, '', { mode: 0o600 });
  for (const [u, pw] of Object.entries(users)) execFileSync(found.passwd, ['-b', passwdFile, u, pw], { stdio: 'ignore' });
  writeFileSync(join(dir, 'acl'), readFileSync(join(SHIPPED, 'tilstand.acl.template'), 'utf8').replaceAll('@SITE@', site), { mode: 0o600 });
  // `mosquitto -h` prints "mosquitto version x.y.z" (and exits non-zero).
  const h = spawnSync(found.bin, ['-h'], { encoding: 'utf8' });
  const version = /version\s+(\S+)/.exec(`${h.stdout ?? ''}${h.stderr ?? ''}`)?.[1] ?? 'unknown';
  const shipped = readFileSync(join(SHIPPED, 'mosquitto.conf'), 'utf8')
    .split('\n')
    .filter((l) => !OVERRIDDEN.test(l))
    .join('\n');
  let stderr = '';
  let child: ChildProcess | undefined;
  let port = 0;
  let config = '';
  const stopChild = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGTERM');
    const t = setTimeout(() => c.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  };
  // A free port can be taken between finding and binding it: a few attempts.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    config = [
      shipped,
      '# --- benchmark overrides (loopback only)',
      `listener ${port} 127.0.0.1`,
      `password_file ${passwdFile}`,
      `acl_file ${join(dir, 'acl')}`,
      'persistence true',
      `persistence_location ${dir}/`,
      'log_dest stderr',
      'log_type error',
      'log_type warning',
      'connection_messages false',
      ...(process.getuid?.() === 0 ? ['user root'] : []),
      '',
    ].join('\n');
    const confPath = join(dir, 'mosquitto.conf');
    writeFileSync(confPath, config);
    const c = spawn(found.bin, ['-c', confPath], { stdio: ['ignore', 'ignore', 'pipe'] });
    c.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
    child = c;
    try {
      await waitReady(port, c, 5000, () => stderr);
      break;
    } catch (e) {
      await stopChild();
      if (attempt >= 3) {
        rmSync(dir, { recursive: true, force: true });
        throw e;
      }
    }
  }
  return {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    bin: found.bin,
    version,
    config,
    log: () => stderr,
    stop: async () => {
      await stopChild();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
