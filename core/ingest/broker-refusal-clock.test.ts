// How long ago a module was refused is measured on the monotonic clock: `refusals()` gives the
// latest refusal's time as the wall clock reads now, so a step of the PC's clock neither keeps the
// site's module_refused alarm up for the length of a step back nor drops it at a step forward.
import { connect, type MqttClient } from 'mqtt';
import { afterEach, expect, it, vi } from 'vitest';
import { EmbeddedBroker, type CredentialStore } from './broker.ts';

const credentials: CredentialStore = { verify: async () => null };
const brokers: EmbeddedBroker[] = [];
const clients: MqttClient[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of clients.splice(0)) await c.endAsync(true).catch(() => undefined);
  for (const b of brokers.splice(0)) await b.close();
});

it('dates the latest refusal as the wall clock reads now, after the clock steps back or forward', async () => {
  const b = new EmbeddedBroker({ site: 's1', credentials, onEvent: async () => undefined, port: 0 });
  brokers.push(b);
  const port = await b.listen();
  const c = connect({ host: '127.0.0.1', port, protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 5000, username: 'inventory', password: 'wrong' });
  c.on('error', () => undefined);
  clients.push(c);
  await new Promise<void>((resolve) => c.once('close', () => resolve()));
  const [refused] = b.refusals();
  const before = Date.now();
  expect(refused).toMatchObject({ kind: 'connect', who: 'inventory', count: 1 });
  expect(before - refused!.lastMs).toBeGreaterThanOrEqual(0);

  const HOUR = 3_600_000;
  for (const step of [-HOUR, HOUR]) {
    vi.spyOn(Date, 'now').mockReturnValue(before + step);
    const lastMs = b.refusals()[0]!.lastMs;
    // The refusal happened moments ago whatever the wall clock now says.
    expect(before + step - lastMs, `step ${step} ms`).toBeGreaterThanOrEqual(0);
    expect(before + step - lastMs, `step ${step} ms`).toBeLessThan(60_000);
    vi.restoreAllMocks();
  }
});
