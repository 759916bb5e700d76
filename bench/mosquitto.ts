// The benchmark's mosquitto: Debian's binary, found on PATH, else /usr/sbin/mosquitto (the bench
// must report "not installed" where the tests' helper would throw under CI=true), started by the
// tests' helper (test/helpers/mosquitto.ts: 127.0.0.1 and two free ports, the shipped configuration
// with the listeners' ports, paths and logging replaced, passwords and the shipped ACL template), with
// connection messages off.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { startMosquitto } from '../test/helpers/mosquitto.ts';

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
  /** The modules' listener (the publishers connect here). */
  port: number;
  url: string;
  /** Tilstand's own listener (MqttSource connects here). */
  siteUrl: string;
  bin: string;
  version: string;
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

/** Starts mosquitto with `users` (username → password) for `site`; throws when it cannot. */
export async function startBenchMosquitto(found: { bin: string; passwd: string }, users: Record<string, string>, site: string): Promise<BenchMosquitto> {
  // `mosquitto -h` prints "mosquitto version x.y.z" (and exits non-zero).
  const h = spawnSync(found.bin, ['-h'], { encoding: 'utf8' });
  const version = /version\s+(\S+)/.exec(`${h.stdout ?? ''}${h.stderr ?? ''}`)?.[1] ?? 'unknown';
  const m = await startMosquitto({ users, site, bin: found.bin, passwdBin: found.passwd, extraConfig: 'connection_messages false' });
  if (!m) throw new Error(`mosquitto could not be started from ${found.bin}`);
  return { port: m.port, url: m.url, siteUrl: m.siteUrl, bin: found.bin, version, log: m.log, stop: m.stop };
}
