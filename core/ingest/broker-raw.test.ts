// The embedded broker as a raw MQTT client sees it (packets written by hand, several in one TCP
// write = one read chunk at the broker): PUBACKs in arrival order, and a chunk refused for disk
// space dropped with its connection.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqttPacket from 'mqtt-packet';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { EmbeddedBroker, type CredentialStore } from './broker.ts';
import { Journal, journalSink } from './journal.ts';

const credentials: CredentialStore = {
  async verify(u, p) {
    return u === 'inventory' && p === 'inv-pw' ? { name: 'inventory', kind: 'module', module: 'inventory' } : null;
  },
};
let dir: string;
let journal: Journal;
let broker: EmbeddedBroker | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-broker-raw-'));
  journal = Journal.open(dir);
});
afterEach(async () => {
  await broker?.close();
  broker = undefined;
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

const publish = (topic: string, messageId: number, payload = '{}') =>
  mqttPacket.generate({ cmd: 'publish', topic, payload: Buffer.from(payload), qos: 1, messageId, dup: false, retain: false } as mqttPacket.IPublishPacket);

/** A connected raw client (MQTT 3.1.1) as the module `inventory`; `packets` gets what the broker sends. */
async function rawClient(port: number, clientId: string): Promise<{ sock: Socket; packets: mqttPacket.Packet[] }> {
  const sock = netConnect(port, '127.0.0.1');
  sock.on('error', () => undefined);
  await new Promise<void>((r) => sock.once('connect', () => r()));
  const parser = mqttPacket.parser({ protocolVersion: 4 });
  const packets: mqttPacket.Packet[] = [];
  let connack!: () => void;
  const gotConnack = new Promise<void>((r) => (connack = r));
  parser.on('packet', (p) => {
    if (p.cmd === 'connack') connack();
    else packets.push(p);
  });
  sock.on('data', (d) => parser.parse(d));
  sock.write(mqttPacket.generate({ cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean: true, clientId, keepalive: 60, username: 'inventory', password: Buffer.from('inv-pw') } as mqttPacket.IConnectPacket));
  await gotConnack;
  return { sock, packets };
}

it('sends PUBACKs in the order the PUBLISHes arrived, a non-event topic after a held event too', async () => {
  const sink = journalSink(journal);
  // A group commit that takes 100 ms.
  broker = new EmbeddedBroker({ site: 's1', credentials, onEvent: async (t, p) => (await new Promise((r) => setTimeout(r, 100)), sink(t, p)), port: 0 });
  const { sock, packets } = await rawClient(await broker.listen(), 'inv');
  sock.write(Buffer.concat([publish('tilstand/s1/events/inventory/stock', 1), publish('tilstand/s1/acks/inventory', 2)]));
  const until = Date.now() + 3000;
  while (packets.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  sock.destroy();
  expect(packets.map((p) => (p.cmd === 'puback' ? p.messageId : p.cmd))).toEqual([1, 2]); // was [2, 1]
});

it('drops the rest of a chunk refused for disk space with its connection, not after a hold each', async () => {
  let full = true;
  const sink = journalSink(journal);
  broker = new EmbeddedBroker({ site: 's1', credentials, onEvent: (t, p) => sink(t, p), port: 0, diskFull: () => full, diskFullPollMs: 10, diskFullHoldMaxMs: 150 });
  const { sock } = await rawClient(await broker.listen(), 'inv');
  sock.write(Buffer.concat(Array.from({ length: 10 }, (_, i) => publish('tilstand/s1/events/inventory/stock', i + 1, `a-${i}`))));
  await new Promise<void>((r) => sock.once('close', () => r())); // refused after ~150 ms: no PUBACK, disconnected
  await new Promise((r) => setTimeout(r, 300)); // two more holds after the connection is gone
  const m = broker.metrics();
  // Room again: none of the dead connection's events is journaled (none was acknowledged).
  full = false;
  await new Promise((r) => setTimeout(r, 300));
  expect(m.heldNow).toBe(0); // was 7: each waited a hold of its own, one after another
  expect([...journal.readAfter(0n)].map((e) => e.payload.toString())).toEqual([]);
});
