// A refusal carries why as a value (BrokerRefusal.reason), to its record and its report: the site
// advised "check the username and password" for every refused CONNECT, a client id another
// module holds (CONNACK 2) included.
import { connect as netConnect } from 'node:net';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import mqttPacket from 'mqtt-packet';
import { afterEach, expect, it } from 'vitest';
import { EmbeddedBroker, type BrokerRefusal, type CredentialStore, type Principal } from './broker.ts';

const USERS: Record<string, { password: string; principal: Principal }> = {
  inventory: { password: 'inv-pw', principal: { name: 'inventory', kind: 'module', module: 'inventory' } },
  operations: { password: 'ops-pw', principal: { name: 'operations', kind: 'module', module: 'operations' } },
};
const credentials: CredentialStore = {
  async verify(username, password) {
    const u = USERS[username];
    return u && u.password === password ? u.principal : null;
  },
};
const brokers: EmbeddedBroker[] = [];
const clients: MqttClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.endAsync(true).catch(() => undefined);
  for (const b of brokers.splice(0)) await b.close();
});

function client(port: number, user: string, password: string, extra: IClientOptions = {}): MqttClient {
  const c = connect({ host: '127.0.0.1', port, protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 5000, username: user, password, ...extra });
  c.on('error', () => undefined);
  clients.push(c);
  return c;
}
const connected = (c: MqttClient) =>
  new Promise<void>((resolve, reject) => {
    c.once('connect', () => resolve());
    c.once('error', reject);
    c.once('close', () => reject(new Error('closed before connect')));
  });

it('records and reports the reason of each refusal: client id, credentials, topic', async () => {
  const reports: BrokerRefusal[] = [];
  const b = new EmbeddedBroker({ site: 's1', credentials, onEvent: async () => undefined, port: 0, onRefused: (r) => reports.push(r) });
  brokers.push(b);
  const port = await b.listen();
  const ops = client(port, 'operations', 'ops-pw', { clientId: 'one-id' });
  await connected(ops);
  await expect(connected(client(port, 'inventory', 'inv-pw', { clientId: 'one-id' }))).rejects.toThrow(/Identifier rejected/i);
  await expect(connected(client(port, 'operations', 'wrong', { clientId: 'other-id' }))).rejects.toThrow(/Bad username/i);
  const inv = client(port, 'inventory', 'inv-pw', { clientId: 'inv-id' });
  await connected(inv);
  const gone = new Promise<void>((resolve) => inv.once('close', () => resolve()));
  inv.publish('tilstand/s1/events/operations/jobs', '{}', { qos: 1 });
  await gone;

  const got = b.refusals().map(({ kind, who, what, reason }) => ({ kind, who, what, reason }));
  expect(got).toEqual([
    { kind: 'publish', who: 'inventory', what: 'tilstand/s1/events/operations/jobs', reason: 'topic' },
    { kind: 'connect', who: 'operations', what: 'bad username or password', reason: 'credentials' },
    { kind: 'connect', who: 'inventory', what: 'client id "one-id" is taken by "operations"', reason: 'client_id' },
  ]);
  expect(reports.map((r) => r.reason)).toEqual(['client_id', 'credentials', 'topic']);
});

it('records the size refusals by their reason: a packet over packetBytesMax, bytes over preAuthBytesMax before the sign-in', async () => {
  const b = new EmbeddedBroker({ site: 's1', credentials, onEvent: async () => undefined, port: 0, packetBytesMax: 10_000, preAuthBytesMax: 4096 });
  brokers.push(b);
  const port = await b.listen();
  // A module signed in sends the head of a 20 kB publish: refused by what it declares.
  const mod = netConnect(port, '127.0.0.1');
  mod.on('error', () => undefined);
  await new Promise<void>((r) => mod.once('connect', () => r()));
  const connack = new Promise<void>((r) => mod.once('data', () => r()));
  mod.write(mqttPacket.generate({ cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean: true, clientId: 'inv-id', keepalive: 60, username: 'inventory', password: Buffer.from('inv-pw') } as mqttPacket.IConnectPacket));
  await connack;
  const modGone = new Promise<void>((r) => mod.once('close', () => r()));
  const big = mqttPacket.generate({ cmd: 'publish', topic: 'tilstand/s1/events/inventory/stock', payload: Buffer.alloc(20_000, 0x62), qos: 1, messageId: 1, dup: false, retain: false } as mqttPacket.IPublishPacket);
  mod.write(big.subarray(0, 200));
  await Promise.race([modGone, new Promise((r) => setTimeout(r, 3000))]);
  mod.destroy();
  // A CONNECT that declares 200,000,000 bytes (varint 0x80 0x84 0xaf 0x5f): refused by what it declares.
  const sock = netConnect(port, '127.0.0.1');
  sock.on('error', () => undefined);
  await new Promise<void>((r) => sock.once('connect', () => r()));
  const shut = new Promise<void>((r) => sock.once('close', () => r()));
  sock.write(Buffer.from([0x10, 0x80, 0x84, 0xaf, 0x5f, 0x41]));
  await Promise.race([shut, new Promise((r) => setTimeout(r, 3000))]);
  sock.destroy();
  expect(b.refusals().map(({ kind, reason }) => ({ kind, reason }))).toEqual([
    { kind: 'connect', reason: 'pre_auth_bytes' },
    { kind: 'publish', reason: 'packet_bytes' },
  ]);
});
