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

/** Resolves with how long the socket stayed open, or with -1 if it was still open after `ms`. */
const closedWithin = (sock: Socket, ms: number): Promise<number> => {
  const t0 = Date.now();
  return new Promise((r) => {
    const timer = setTimeout(() => r(-1), ms);
    sock.once('close', () => (clearTimeout(timer), r(Date.now() - t0)));
  });
};

it('closes a connection whose first packet declares more than preAuthBytesMax, before its bytes arrive and without a password', async () => {
  broker = new EmbeddedBroker({ site: 's1', credentials, onEvent: journalSink(journal), port: 0 });
  const port = await broker.listen();
  const sock = netConnect(port, '127.0.0.1');
  sock.on('error', () => undefined);
  await new Promise<void>((r) => sock.once('connect', () => r()));
  // CONNECT whose remaining length says 200,000,000 bytes (varint 0x80 0x84 0xaf 0x5f), then 64 KiB of them:
  // aedes would buffer all of it, waiting for the rest, until its connect timeout (30 s).
  sock.write(Buffer.concat([Buffer.from([0x10, 0x80, 0x84, 0xaf, 0x5f]), Buffer.alloc(64 * 1024, 0x41)]));
  expect(await closedWithin(sock, 2000)).toBeGreaterThanOrEqual(0); // was -1: still open, still buffering
  expect(broker.refusals()).toEqual([expect.objectContaining({ kind: 'connect', who: '127.0.0.1', what: expect.stringMatching(/a packet of 200000000 bytes before authentication, more than preAuthBytesMax 1048576/) })]);
});

it('closes a connection that sends more than preAuthBytesMax while its password is being checked', async () => {
  // A credential store that takes 500 ms (a slow hash): aedes queues what comes meanwhile.
  const slow: CredentialStore = { verify: (u, p) => new Promise((r) => setTimeout(() => r(credentials.verify(u, p)), 500)) };
  broker = new EmbeddedBroker({ site: 's1', credentials: slow, onEvent: journalSink(journal), port: 0, preAuthBytesMax: 4096 });
  const port = await broker.listen();
  const sock = netConnect(port, '127.0.0.1');
  sock.on('error', () => undefined);
  await new Promise<void>((r) => sock.once('connect', () => r()));
  sock.write(mqttPacket.generate({ cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean: true, clientId: 'inv', keepalive: 60, username: 'inventory', password: Buffer.from('inv-pw') } as mqttPacket.IConnectPacket));
  // Ten publishes of 1,000 bytes each, every one under the bound, before any CONNACK.
  for (let i = 0; i < 10; i++) sock.write(publish('tilstand/s1/events/inventory/stock', i + 1, 'd'.repeat(1000)));
  expect(await closedWithin(sock, 400)).toBeGreaterThanOrEqual(0); // was -1: queued, then connected and acknowledged
  expect(broker.refusals()[0]).toMatchObject({ kind: 'connect', what: 'more than preAuthBytesMax 4096 bytes before authentication' });
  await new Promise((r) => setTimeout(r, 300)); // past the slow check: nothing was journaled
  expect([...journal.readAfter(0n)]).toEqual([]);
});

it('refuses a packet over packetBytesMax from an authenticated module with its connection, and acknowledges one under it', async () => {
  broker = new EmbeddedBroker({ site: 's1', credentials, onEvent: journalSink(journal), port: 0, packetBytesMax: 10_000 });
  const port = await broker.listen();
  const ok = await rawClient(port, 'inv');
  ok.sock.write(publish('tilstand/s1/events/inventory/stock', 1, 'a'.repeat(5_000)));
  const until = Date.now() + 3000;
  while (ok.packets.length < 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  expect(ok.packets.map((p) => p.cmd)).toEqual(['puback']);
  // Only the header and the first bytes of a 20 kB publish: refused by what it declares.
  ok.sock.write(publish('tilstand/s1/events/inventory/stock', 2, 'b'.repeat(20_000)).subarray(0, 200));
  expect(await closedWithin(ok.sock, 2000)).toBeGreaterThanOrEqual(0);
  expect(broker.refusals()).toEqual([expect.objectContaining({ kind: 'publish', who: 'inventory', what: expect.stringMatching(/more than packetBytesMax 10000/) })]);
  expect([...journal.readAfter(0n)].map((e) => e.payload.length)).toEqual([5_000]);
});

it('acknowledges an event above the envelope limit under the default packetBytesMax (it becomes a dead letter, not a lost connection)', async () => {
  broker = new EmbeddedBroker({ site: 's1', credentials, onEvent: journalSink(journal), port: 0 });
  const { sock, packets } = await rawClient(await broker.listen(), 'inv');
  sock.write(publish('tilstand/s1/events/inventory/stock', 1, 'c'.repeat(2 * 1024 * 1024)));
  const until = Date.now() + 5000;
  while (packets.length < 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  sock.destroy();
  expect(packets.map((p) => p.cmd)).toEqual(['puback']);
});

it('refuses preAuthBytesMax, packetBytesMax and refusalReportMs that are not non-negative integers, naming the option', () => {
  expect(() => new EmbeddedBroker({ site: 's1', credentials, onEvent: journalSink(journal), port: 0, packetBytesMax: 1.5 })).toThrow(/packetBytesMax: expected a non-negative integer, got 1.5/);
  expect(() => new EmbeddedBroker({ site: 's1', credentials, onEvent: journalSink(journal), port: 0, preAuthBytesMax: -1 })).toThrow(/preAuthBytesMax: expected a non-negative integer, got -1/);
  expect(() => new EmbeddedBroker({ site: 's1', credentials, onEvent: journalSink(journal), port: 0, refusalReportMs: NaN })).toThrow(/refusalReportMs: expected a non-negative integer, got NaN/);
});
