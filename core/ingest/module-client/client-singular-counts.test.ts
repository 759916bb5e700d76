// The module client's warning when a group of PUBACKs could not be marked in its outbox says one
// event in the singular ("the acknowledgement of 1 event …; it is sent again"), two in the plural.
// Against a real embedded aedes broker on 127.0.0.1 (port 0); the outbox's commit made to fail.
import net, { type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Aedes } from 'aedes';
import type { MqttClient } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ModuleClient } from './client.ts';
import { Outbox } from './outbox.ts';

let aedes: Aedes;
let server: net.Server;
let url: string;
let dir: string;
const clients: ModuleClient[] = [];

beforeEach(async () => {
  aedes = await Aedes.createBroker();
  server = net.createServer(aedes.handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'tilstand-module-client-singular-'));
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await new Promise<void>((r) => aedes.close(() => r()));
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const CONTRACT = { name: 'inventory.stock', version: 1 };
const row = (qty: number) => ({ item: 'A-1', location: 'L1', qty });

/** The warnings of a client whose `n` PUBACKs arrive in one turn while the outbox cannot store them. */
async function warningsFor(n: number): Promise<string[]> {
  const warnings: string[] = [];
  const c = new ModuleClient({ url, username: 'inventory', password: 'secret', site: 's1', module: 'inventory', outboxPath: join(dir, `outbox-${n}.db`), reconnect_period_ms: 100, onWarning: (m) => warnings.push(m) });
  clients.push(c);
  await c.connected();
  // The PUBACKs held, then let go in one turn: one group of `n` for one commit.
  const mq = (c as unknown as { mqtt: MqttClient }).mqtt;
  const real = mq.publish.bind(mq);
  const held: (() => void)[] = [];
  mq.publish = ((topic: string, payload: string, opts: object, cb: (e?: Error) => void) => real(topic, payload, opts as never, (e?: Error) => held.push(() => cb(e)))) as never;
  const fail = vi.spyOn(Outbox.prototype, 'markAckedMany').mockImplementationOnce(() => {
    throw new Error('database or disk is full');
  });
  try {
    const all = Array.from({ length: n }, (_, q) => c.publish('stock', 'u', row(q), row(q + 1), CONTRACT));
    for (let k = 0; k < 500 && held.length < n; k++) await new Promise((r) => setTimeout(r, 10));
    expect(held).toHaveLength(n);
    for (const release of held.splice(0)) release();
    await Promise.all(all);
    expect(fail).toHaveBeenCalledTimes(1);
  } finally {
    fail.mockRestore();
  }
  return warnings;
}

describe('ModuleClient: an acknowledgement it could not store', () => {
  it('says "1 event … it is sent again" and "2 events … they are sent again"', async () => {
    expect(await warningsFor(1)).toEqual(['the acknowledgement of 1 event could not be stored (database or disk is full); it is sent again on the next connect (Tilstand drops the duplicates)']);
    expect(await warningsFor(2)).toEqual(['the acknowledgement of 2 events could not be stored (database or disk is full); they are sent again on the next connect (Tilstand drops the duplicates)']);
  });
});
