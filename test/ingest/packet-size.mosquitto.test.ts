// The shipped mosquitto config bounds a packet at 16 MiB (`max_packet_size`), as the embedded
// broker's packetBytesMax does: an event above the envelope's 256 KiB still arrives (and becomes a
// dead letter), a packet declaring more than 16 MiB is refused with its connection instead of
// being buffered. core/ingest/TRANSPORT.md, "Security of the embedded broker".
import { connect as netConnect, type Socket } from 'node:net';
import { connect } from 'mqtt';
import { describe, expect, it } from 'vitest';
import { startMosquitto } from '../helpers/mosquitto.ts';

function closedWithin(sock: Socket, ms: number): Promise<boolean> {
  return new Promise((r) => {
    const timer = setTimeout(() => r(false), ms);
    sock.once('close', () => (clearTimeout(timer), r(true)));
  });
}

describe('mosquitto: packet size', () => {
  it('takes a 2 MiB event and refuses a CONNECT that declares 20 MiB', async () => {
    const m = await startMosquitto({ users: { inventory: 'pw-inventory' }, site: 's1' });
    if (!m) return; // notice printed by the helper (an error under CI=true)
    try {
      const c = connect(m.url, { username: 'inventory', password: 'pw-inventory', clientId: 'inventory', protocolVersion: 5, reconnectPeriod: 0 });
      await new Promise<void>((r, j) => (c.once('connect', () => r()), c.once('error', j)));
      await c.publishAsync('tilstand/s1/events/inventory/stock', Buffer.alloc(2 * 1024 * 1024, 0x61), { qos: 1 }); // PUBACK: taken
      await c.endAsync();

      const sock = netConnect(m.port, '127.0.0.1');
      sock.on('error', () => undefined);
      await new Promise<void>((r) => sock.once('connect', () => r()));
      // CONNECT, remaining length 20 MiB (varint 0x80 0x80 0x80 0x0a), then 64 KiB of it.
      sock.write(Buffer.concat([Buffer.from([0x10, 0x80, 0x80, 0x80, 0x0a]), Buffer.alloc(64 * 1024, 0x41)]));
      expect(await closedWithin(sock, 3000)).toBe(true);
    } finally {
      await m.stop();
    }
  });
});
