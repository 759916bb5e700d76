import { createServer, type AddressInfo, type Socket } from 'node:net';
import mqttPacket from 'mqtt-packet';
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

/** A connection to the hand-written broker below: what the client sent, and whether it closed. */
interface ServerConnection {
  sock: Socket;
  packets: mqttPacket.Packet[];
  /** When each of `packets` arrived (performance.now()). */
  times: number[];
  closed: boolean;
}

/**
 * A minimal MQTT 5 broker on 127.0.0.1 (aedes speaks 3.1.1 only): CONNACK with the session
 * present from the second connection on, SUBACK granting QoS 1; the test writes PUBLISHes itself.
 */
async function handBroker(): Promise<{ url: string; conns: ServerConnection[]; close: () => Promise<void> }> {
  const conns: ServerConnection[] = [];
  const server = createServer((sock) => {
    const conn: ServerConnection = { sock, packets: [], times: [], closed: false };
    conns.push(conn);
    const parser = mqttPacket.parser({ protocolVersion: 5 });
    parser.on('packet', (p) => {
      conn.packets.push(p);
      conn.times.push(performance.now());
      if (p.cmd === 'connect') sock.write(mqttPacket.generate({ cmd: 'connack', sessionPresent: conns.length > 1, reasonCode: 0 } as mqttPacket.IConnackPacket, { protocolVersion: 5 }));
      if (p.cmd === 'subscribe') sock.write(mqttPacket.generate({ cmd: 'suback', messageId: p.messageId, granted: p.subscriptions.map(() => 1) } as mqttPacket.ISubackPacket, { protocolVersion: 5 }));
      if (p.cmd === 'pingreq') sock.write(mqttPacket.generate({ cmd: 'pingresp' }, { protocolVersion: 5 }));
    });
    sock.on('data', (d) => parser.parse(d));
    sock.on('error', () => undefined);
    sock.on('close', () => (conn.closed = true));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    conns,
    close: async () => {
      for (const c of conns) c.sock.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const publishPacket = (messageId: number, payload: string) =>
  mqttPacket.generate({ cmd: 'publish', topic: 'tilstand/s1/events/inventory/stock', payload: Buffer.from(payload), qos: 1, messageId, dup: false, retain: false } as mqttPacket.IPublishPacket, { protocolVersion: 5 });

describe('a sink that answers after its connection was replaced', () => {
  it("a stale sink's failure drops only its own connection, not the one that replaced it", async () => {
    const broker = await handBroker();
    cleanups.push(() => broker.close());
    const waiting: { payload: string; reject: (e: Error) => void; resolve: () => void }[] = [];
    const s = new MqttSource({
      url: broker.url,
      clientId: 'til-stale',
      groups: [{ name: 'inventory', topics: ['tilstand/s1/events/inventory/#'] }],
      sink: (_topic, payload) => new Promise((resolve, reject) => waiting.push({ payload: payload.toString(), resolve: () => resolve(undefined), reject })),
      backoff: { initialDelayMs: 1, maxDelayMs: 1, multiplier: 1, jitterRatio: 0 },
    });
    cleanups.push(() => s.stop());
    s.start();
    await until('the first connection subscribed', () => s.stats()[0]!.subscribes === 1);
    broker.conns[0]!.sock.write(publishPacket(1, 'first'));
    await until('the first event at the sink', () => waiting.length === 1);
    // The link drops while the journal still works on the event; the source connects again.
    broker.conns[0]!.sock.destroy();
    await until('the second connection', () => s.stats()[0]!.connects === 2 && s.stats()[0]!.connected);
    // Now the first connection's sink fails (the journal's disk was full, say).
    waiting[0]!.reject(new Error('disk full'));
    await new Promise((r) => setImmediate(r));
    // The second connection goes on: its event is journaled and acknowledged on it.
    broker.conns[1]!.sock.write(publishPacket(2, 'second'));
    await until('the second event at the sink, or the second connection gone', () => waiting.length === 2 || broker.conns[1]!.closed);
    waiting[1]?.resolve();
    await until('the PUBACK of the second event, or the second connection gone', () => broker.conns[1]!.packets.some((p) => p.cmd === 'puback') || broker.conns[1]!.closed);
    expect(broker.conns[1]!.closed).toBe(false);
    expect(broker.conns[1]!.packets.filter((p) => p.cmd === 'puback').map((p) => (p as mqttPacket.IPubackPacket).messageId)).toEqual([2]);
    expect(broker.conns).toHaveLength(2);
    expect(s.stats()[0]).toMatchObject({ connects: 2, connected: true, sinkFailures: 1, messages: 1 });
  });

  it("a stale sink's success sends no PUBACK on the connection that replaced its own", async () => {
    // The broker resends the event on the new connection (same packet id) and may give that id
    // to another event once it is acknowledged: a PUBACK from the old connection's sink, sent on
    // the new one, could acknowledge an event not yet on disk.
    const broker = await handBroker();
    cleanups.push(() => broker.close());
    const waiting: { resolve: () => void }[] = [];
    const s = new MqttSource({
      url: broker.url,
      clientId: 'til-stale-ok',
      groups: [{ name: 'inventory', topics: ['tilstand/s1/events/inventory/#'] }],
      sink: () => new Promise((resolve) => waiting.push({ resolve: () => resolve(undefined) })),
      backoff: { initialDelayMs: 1, maxDelayMs: 1, multiplier: 1, jitterRatio: 0 },
    });
    cleanups.push(() => s.stop());
    s.start();
    await until('the first connection subscribed', () => s.stats()[0]!.subscribes === 1);
    broker.conns[0]!.sock.write(publishPacket(1, 'first'));
    await until('the first event at the sink', () => waiting.length === 1);
    broker.conns[0]!.sock.destroy();
    await until('the second connection', () => s.stats()[0]!.connects === 2 && s.stats()[0]!.connected);
    waiting[0]!.resolve();
    await new Promise((r) => setImmediate(r));
    broker.conns[1]!.sock.write(publishPacket(2, 'second'));
    await until('the second event at the sink', () => waiting.length === 2);
    waiting[1]!.resolve();
    await until('a PUBACK of the second event', () => broker.conns[1]!.packets.some((p) => p.cmd === 'puback' && p.messageId === 2));
    expect(broker.conns[1]!.packets.filter((p) => p.cmd === 'puback').map((p) => (p as mqttPacket.IPubackPacket).messageId)).toEqual([2]);
    expect(s.stats()[0]).toMatchObject({ connects: 2, messages: 2 });
  });
});

describe('keepalive while the sink holds an event', () => {
  it('a hold of most of 1.5 keepalives from the event does not trip the keepalive (PINGRESP waits behind the held event)', async () => {
    // mqtt.js handles one inbound packet at a time and reschedules its keepalive only on an ack of
    // its own publishes or a PINGRESP, never on a PUBLISH it receives: with the PINGREQ out while
    // the sink held an event, the PINGRESP waited behind that event, and a hold over half a
    // keepalive (15 s of the default 30, where a site holds up to 30 s for disk room) dropped the
    // connection with "Keepalive timeout". A received PUBLISH now counts as the broker's sign of
    // life: the hold has 1.5 keepalives from the event. Keepalive 2 s here: the event comes 1.2 s
    // after the SUBACK (the last reschedule) and is held 2.4 s, past the old timeout at 3 s.
    const KEEPALIVE_S = 2;
    const broker = await handBroker();
    cleanups.push(() => broker.close());
    let release: (() => void) | undefined;
    const s = new MqttSource({
      url: broker.url,
      clientId: 'til-keepalive',
      groups: [{ name: 'inventory', topics: ['tilstand/s1/events/inventory/#'] }],
      sink: () => new Promise((resolve) => (release = () => resolve(undefined))),
      keepaliveS: KEEPALIVE_S,
      backoff: { initialDelayMs: 1, maxDelayMs: 1, multiplier: 1, jitterRatio: 0 },
    });
    cleanups.push(() => s.stop());
    s.start();
    await until('subscribed', () => s.stats()[0]!.subscribes === 1);
    await new Promise((r) => setTimeout(r, 0.6 * KEEPALIVE_S * 1000));
    broker.conns[0]!.sock.write(publishPacket(1, 'held'));
    await until('the event at the sink', () => release !== undefined);
    await new Promise((r) => setTimeout(r, 1.2 * KEEPALIVE_S * 1000));
    release!();
    await until('the PUBACK, or the connection gone', () => broker.conns[0]!.packets.some((p) => p.cmd === 'puback') || broker.conns[0]!.closed);
    expect(s.stats()[0]!.lastError).toBeUndefined();
    expect(broker.conns[0]!.closed).toBe(false);
    expect(broker.conns[0]!.packets.filter((p) => p.cmd === 'puback').map((p) => (p as mqttPacket.IPubackPacket).messageId)).toEqual([1]);
    // The broker hears from the source at least every 1.5 keepalives (it closes a silent client
    // then): the rescheduled PINGREQ comes a keepalive after the event, so after a quiet spell the
    // event's arrival sends one at once.
    const { times } = broker.conns[0]!;
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(Math.max(...gaps)).toBeLessThan(1.5 * KEEPALIVE_S * 1000);
    expect(broker.conns[0]!.packets.some((p) => p.cmd === 'pingreq')).toBe(true);
    expect(s.stats()[0]).toMatchObject({ connects: 1, messages: 1 });
  });
});
