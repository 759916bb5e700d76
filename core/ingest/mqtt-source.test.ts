import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Backoff, MqttSource, type Timers } from './mqtt-source.ts';

// The mosquitto-backed tests of MqttSource are in test/ingest/mqtt-source.mosquitto.test.ts
// (core/ may not import test/helpers).

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f().catch(() => undefined);
});

async function until(what: string, cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('reconnect backoff', () => {
  it('grows exponentially to the cap, with jitter drawn from the injected random', () => {
    const exact = new Backoff({ initialDelayMs: 100, maxDelayMs: 1000, multiplier: 2, jitterRatio: 0.5 }, () => 0);
    expect(Array.from({ length: 6 }, () => exact.next())).toEqual([100, 200, 400, 800, 1000, 1000]);
    exact.reset();
    expect(exact.next()).toBe(100);
    const jittered = new Backoff({ initialDelayMs: 100, maxDelayMs: 1000, multiplier: 2, jitterRatio: 0.5 }, () => 1);
    expect(Array.from({ length: 5 }, () => jittered.next())).toEqual([50, 100, 200, 400, 500]);
    expect(() => new Backoff({ multiplier: 0.5 })).toThrow(/multiplier: expected >= 1, got 0.5/);
  });

  it('schedules reconnects with that sequence while the broker is unreachable (injected timers)', async () => {
    // a port with nothing listening: bind, read the port, close
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as AddressInfo).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const requested: number[] = [];
    const timers: Timers = {
      setTimeout: (f, ms) => {
        requested.push(ms);
        return setTimeout(f, 1); // run at once: the test checks the requested delays, not the wait
      },
      clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
    };
    const s = new MqttSource({
      url: `mqtt://127.0.0.1:${port}`,
      clientId: 'til-backoff',
      groups: [{ name: 'inventory', topics: ['tilstand/s1/events/inventory/#'] }],
      sink: async () => undefined,
      backoff: { initialDelayMs: 100, maxDelayMs: 1000, multiplier: 2, jitterRatio: 0.5 },
      random: () => 0.5,
      timers,
    });
    cleanups.push(() => s.stop());
    s.start();
    await until('6 reconnects scheduled', () => requested.length >= 6, 10_000);
    await s.stop();
    expect(requested.slice(0, 6)).toEqual([75, 150, 300, 600, 750, 750]);
    expect(s.stats()[0]!.connects).toBe(0);
  });
});
