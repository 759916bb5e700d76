// A module-like MQTT publisher for the reliability suites: QoS 1 publishes in order per module, a
// bounded window of publishes in flight, and a record of which events got their PUBACK (the only
// thing a module may rely on: a PUBACK means "in the site's journal").
//
// `Publisher.send(id, topic, payload)` resolves true on PUBACK and false when the connection went
// away first (the event then counts as not acknowledged and is sent again later, as a module's
// outbox would). mqtt.js keeps unacknowledged QoS 1 packets in its outgoing store and resends them
// after a reconnect when `reconnect` is on (broker restarts); with it off (kill -9 of the site, a
// new port after the restart) the caller makes a new Publisher.

import mqtt, { type MqttClient } from 'mqtt';

export interface PublisherOptions {
  url: string;
  username: string;
  password: string;
  clientId: string;
  /** Reconnect (and resend unacked packets) after the connection drops. Default false. */
  reconnect?: boolean;
  connectTimeoutMs?: number;
}

export class Publisher {
  readonly client: MqttClient;
  private closed = false;
  private dropped = false;
  private readonly waiters = new Set<() => void>();
  connectionsLost = 0;
  lastError: string | undefined;

  private constructor(client: MqttClient) {
    this.client = client;
    client.on('error', () => undefined);
    client.on('close', () => {
      this.connectionsLost++;
      this.dropped = true;
      if (!client.options.reconnectPeriod) for (const w of [...this.waiters]) w();
    });
    client.on('connect', () => (this.dropped = false));
  }

  static async connect(o: PublisherOptions): Promise<Publisher> {
    const client = mqtt.connect(o.url, {
      username: o.username,
      password: o.password,
      clientId: o.clientId,
      clean: !o.reconnect,
      reconnectPeriod: o.reconnect ? 100 : 0,
      connectTimeout: o.connectTimeoutMs ?? 10_000,
      keepalive: 30,
      resubscribe: false,
    });
    const p = new Publisher(client);
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`connect ${o.username} to ${o.url}: timeout`)), o.connectTimeoutMs ?? 10_000);
      client.once('connect', () => (clearTimeout(t), resolve()));
      client.once('close', () => {
        if (!o.reconnect) {
          clearTimeout(t);
          reject(new Error(`connect ${o.username} to ${o.url}: closed`));
        }
      });
    });
    return p;
  }

  get connected(): boolean {
    return this.client.connected && !this.dropped;
  }

  /** true on PUBACK; false if the connection closed first (and reconnect is off) or on timeout. */
  send(topic: string, payload: string | Buffer, timeoutMs = 60_000): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      let settled = false;
      const done = (ok: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.waiters.delete(onDrop);
        resolve(ok);
      };
      const onDrop = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(onDrop);
      this.client.publish(topic, payload, { qos: 1 }, (err) => {
        if (err) this.lastError = err.message;
        done(!err);
      });
    });
  }

  /** Ends the connection without waiting (in-flight publishes count as not acknowledged). */
  async close(force = true): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const w of [...this.waiters]) w();
    await new Promise<void>((r) => this.client.end(force, {}, () => r()));
  }
}
