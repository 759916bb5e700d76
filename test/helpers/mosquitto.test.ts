import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'mqtt';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mosquittoUnavailable, startMosquitto } from './mosquitto.ts';

describe('mosquitto helper', () => {
  const savedCI = process.env.CI;
  afterEach(() => {
    if (savedCI === undefined) delete process.env.CI;
    else process.env.CI = savedCI;
    vi.restoreAllMocks();
  });

  it('skips loudly outside CI and fails under CI=true', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    delete process.env.CI;
    expect(mosquittoUnavailable('test reason')).toBeUndefined();
    expect(warn.mock.calls[0]![0]).toMatch(/mosquitto tests NOT RUN: test reason/);
    process.env.CI = 'true';
    expect(() => mosquittoUnavailable('test reason')).toThrow(/CI=true: failing instead of skipping/);
  });

  it('fails the start at once, naming the binary, when the mosquitto there cannot be run (not an unhandled error)', async () => {
    // Binaries that exist (so no skip) but that the kernel refuses: not executable (EACCES), and a
    // script whose interpreter is missing (ENOENT). No users: mosquitto_passwd is not run.
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-mosquitto-bad-'));
    try {
      const notExecutable = join(dir, 'not-executable');
      writeFileSync(notExecutable, '#!/bin/sh\n', { mode: 0o644 });
      const noInterpreter = join(dir, 'no-interpreter');
      writeFileSync(noInterpreter, `#!${join(dir, 'missing-sh')}\n`);
      chmodSync(noInterpreter, 0o755);
      for (const [bin, code] of [
        [notExecutable, 'EACCES'],
        [noInterpreter, 'ENOENT'],
      ] as const) {
        const t0 = Date.now();
        await expect(startMosquitto({ users: {}, site: 's1', bin, passwdBin: process.execPath, readyTimeoutMs: 20_000 })).rejects.toThrow(`could not start mosquitto at ${bin}: ${code}`);
        // Told at once: not after the ready timeout, and not tried again three times.
        expect(Date.now() - t0).toBeLessThan(5_000);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts mosquitto on a loopback port with password auth from the shipped config, and restarts it', async () => {
    const m = await startMosquitto({ users: { inventory: 'pw' }, site: 's1' });
    if (!m) return; // notice printed by the helper
    try {
      const good = connect(m.url, { username: 'inventory', password: 'pw', reconnectPeriod: 0 });
      await new Promise<void>((resolve, reject) => {
        good.once('connect', () => resolve());
        good.once('error', reject);
      });
      await good.endAsync();
      const anon = connect(m.url, { reconnectPeriod: 0 });
      await expect(
        new Promise<void>((resolve, reject) => {
          anon.once('connect', () => resolve());
          anon.once('error', reject);
        }),
      ).rejects.toThrow(/Not authorized|Bad username/i);
      await anon.endAsync(true);
      await m.restart();
    } finally {
      await m.stop();
    }
  });
});
