// ModuleClient on a broker that is down: what a flood of resync requests holds in memory, and a
// command running while the client closes. Requests are fed as mqtt.js delivers them ('message').
import { mkdtempSync, rmSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModuleClient } from './client.ts';
import { Outbox } from './outbox.ts';

async function unreachableUrl(): Promise<string> {
  const dead = net.createServer();
  await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
  const url = `mqtt://127.0.0.1:${(dead.address() as AddressInfo).port}`;
  await new Promise<void>((r) => dead.close(() => r()));
  return url;
}

interface Inside {
  mqtt: { emit(event: 'message', topic: string, payload: Buffer): void };
  waiters: Map<string, unknown[]>;
  queue: unknown[];
  queueHead: number;
}

let dir: string;
let client: ModuleClient | undefined;
const warnings: string[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-module-client-close-'));
  warnings.length = 0;
});

afterEach(async () => {
  await client?.close();
  client = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const CONTRACT = { name: 'inventory.stock', version: 1 };
const row = (qty: number) => ({ item: 'A-1', location: 'L1', qty });

async function open(): Promise<ModuleClient> {
  client = new ModuleClient({
    url: await unreachableUrl(),
    site: 's1',
    module: 'inventory',
    outboxPath: join(dir, 'outbox.db'),
    reconnect_period_ms: 60_000,
    events_inflight_max: 5,
    onWarning: (m) => warnings.push(m),
  });
  return client;
}

describe('ModuleClient while the broker is away', () => {
  it('holds no more per event for a flood of resync requests than for one', async () => {
    const c = await open();
    const inside = c as unknown as Inside;
    for (let q = 1; q <= 100; q++) c.publish('stock', 'u', row(q - 1), row(q), CONTRACT).catch(() => undefined);
    const held = () => [...inside.waiters.values()].reduce((n, w) => n + w.length, 0);
    expect(held()).toBe(100); // one per publish() caller
    // Tilstand asks again at each gap timeout, and the broker delivers what queued in the session
    // at once on reconnect: 500 requests for the same 100 events.
    const ask = Buffer.from(JSON.stringify({ stream: 'stock', from: 1 }));
    for (let i = 0; i < 500; i++) inside.mqtt.emit('message', 'tilstand/s1/resync/inventory', ask);
    expect(held()).toBe(100); // was 50 100: a waiter per event per request, kept until its PUBACK
    expect(inside.queue.length - inside.queueHead).toBeLessThanOrEqual(100);
  });

  it('stores the answer of a command that finishes while the client closes, and runs no queued one after', async () => {
    const c = await open();
    const inside = c as unknown as Inside;
    const runs: string[] = [];
    let finish!: () => void;
    const gate = new Promise<void>((r) => (finish = r));
    c.onCommand(async (cmd) => {
      runs.push(cmd.command_id);
      await gate;
      return { ok: true, result: { released: cmd.command_id } };
    });
    const send = (id: string) => inside.mqtt.emit('message', 'tilstand/s1/commands/inventory', Buffer.from(JSON.stringify({ command_id: id })));
    send('cmd-1');
    send('cmd-2');
    for (let i = 0; i < 50 && runs.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(runs).toEqual(['cmd-1']);
    // The module shuts down (SIGTERM) while cmd-1 is being carried out; it completes meanwhile.
    const closing = c.close();
    finish();
    await closing;
    client = undefined;
    // cmd-1 was carried out: its answer is on disk, so Tilstand's resend after the restart gets it
    // instead of a second run. cmd-2 was never started and is not started after close.
    const outbox = new Outbox(join(dir, 'outbox.db'));
    try {
      expect(outbox.commandAck('cmd-1')).toBeDefined();
      expect(outbox.commandAck('cmd-2')).toBeUndefined();
    } finally {
      outbox.close();
    }
    expect(runs).toEqual(['cmd-1']);
  });
});

describe('ModuleClient closing while a command publishes', () => {
  it('closes while a running command waits for the PUBACK of an event it publishes, and the event stays in the outbox', async () => {
    // The close ended the connection first and then waited for the command, which waited for a
    // PUBACK the ended connection never brought: close() never returned (the full loop's afterEach
    // timed out under load, when the write-back's resend made the command run during the close).
    const c = await open();
    const inside = c as unknown as Inside;
    let published: Promise<unknown> | undefined;
    c.onCommand(async () => {
      published = c.publish('stock', 'u', row(0), row(1), CONTRACT);
      await published;
      return { ok: true };
    });
    inside.mqtt.emit('message', 'tilstand/s1/commands/inventory', Buffer.from(JSON.stringify({ command_id: 'cmd-1' })));
    for (let i = 0; i < 50 && published === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    expect(published).toBeDefined();
    published!.catch(() => undefined);
    const outcome = await Promise.race([c.close().then(() => 'closed'), new Promise((r) => setTimeout(() => r('still closing after 15 s'), 15_000))]);
    client = undefined;
    expect(outcome).toBe('closed');
    await expect(published).rejects.toThrow(/closed before PUBACK/);
    const outbox = new Outbox(join(dir, 'outbox.db'));
    try {
      expect(outbox.unackedKeys()).toHaveLength(1);
    } finally {
      outbox.close();
    }
  }, 30_000);
});
