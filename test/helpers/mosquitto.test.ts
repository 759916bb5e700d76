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
