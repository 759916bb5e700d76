// Ingest from an EXTERNAL broker (the site's mosquitto) through mqtt.js 5 subscriber connections.
//
// PUBACK after the sink: mqtt.js calls `handleMessage(packet, cb)` for every inbound PUBLISH and
// writes the PUBACK only when `cb` ran (lib/handlers/publish.js). We call `cb` after the sink's
// promise (the journal's group commit) resolved. If the sink fails we do NOT call `cb`: we destroy
// the connection the message came on instead (not a later one mqtt.js reconnected meanwhile), so
// no PUBACK leaves, and the broker redelivers the message (DUP) when the session resumes.
//
// One packet at a time: mqtt.js handles the next inbound packet of a connection only after the
// previous `handleMessage` callback ran, so one connection can contribute only one event to a group
// commit. Hence N connections over disjoint topic sets (`groups`, e.g. one per module; per-stream
// order is kept because a stream belongs to one group), whose sink waits share one group commit.
// A PINGRESP too waits behind an event the sink holds, so each event received reschedules
// mqtt.js's keepalive (`handleMessage`): a hold may last 1.5 keepalives from its event.
//
// Sessions: fixed client id per group (`<clientId>-<group>`), clean start false, MQTT 5
// sessionExpiryInterval, so the broker queues events while we are away. On CONNACK we subscribe
// when the session is not present (or on the first connection of this process, which also
// applies topic changes from config). mqtt.js's own reconnect (a fixed period) is disabled; we
// reconnect with exponential backoff and jitter (`Backoff`).
//
// Concurrency contract: single-threaded; `start`/`stop` are not reentrant.
import { readFileSync } from 'node:fs';
import { connect, type IClientOptions, type IConnackPacket, type MqttClient } from 'mqtt';

export interface BackoffOptions {
  /** Delay before the first reconnect attempt. */
  initialDelayMs: number;
  /** Ceiling of the exponential delay. */
  maxDelayMs: number;
  /** Growth per failed attempt (>= 1). */
  multiplier: number;
  /** 0 = no jitter; r = delay drawn uniformly from [d·(1−r), d]. Spreads a site's reconnect storm. */
  jitterRatio: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialDelayMs: 250, maxDelayMs: 30_000, multiplier: 2, jitterRatio: 0.5 };

/** Exponential backoff with jitter; `random` is injected by tests. */
export class Backoff {
  private readonly o: BackoffOptions;
  private attempt = 0;
  constructor(options: Partial<BackoffOptions> = {}, private readonly random: () => number = Math.random) {
    this.o = { ...DEFAULT_BACKOFF, ...options };
    const { initialDelayMs, maxDelayMs, multiplier, jitterRatio } = this.o;
    if (!(initialDelayMs > 0)) throw new RangeError(`Backoff initialDelayMs: expected > 0, got ${initialDelayMs}`);
    if (!(maxDelayMs >= initialDelayMs)) throw new RangeError(`Backoff maxDelayMs: expected >= initialDelayMs, got ${maxDelayMs}`);
    if (!(multiplier >= 1)) throw new RangeError(`Backoff multiplier: expected >= 1, got ${multiplier}`);
    if (!(jitterRatio >= 0 && jitterRatio <= 1)) throw new RangeError(`Backoff jitterRatio: expected 0..1, got ${jitterRatio}`);
  }

  /** The delay before the next attempt; each call counts one failed attempt. */
  next(): number {
    const base = Math.min(this.o.maxDelayMs, this.o.initialDelayMs * this.o.multiplier ** this.attempt);
    this.attempt++;
    return Math.round(base * (1 - this.o.jitterRatio * this.random()));
  }

  reset(): void {
    this.attempt = 0;
  }

  get maxDelayMs(): number {
    return this.o.maxDelayMs;
  }
}

export interface SubscriberGroup {
  /** Part of the client id: keep it stable, the broker's session is keyed by it. */
  name: string;
  /** Topic filters, disjoint from every other group's. */
  topics: string[];
}

export interface Timers {
  setTimeout(f: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface MqttSourceOptions {
  /** mqtt://host:port or mqtts://host:port */
  url: string;
  /** Fixed client id prefix; the connection of group g uses `${clientId}-${g.name}`. */
  clientId: string;
  groups: SubscriberGroup[];
  /** Journals one event; its promise resolving means the event is on disk. */
  sink: (topic: string, payload: Buffer) => Promise<unknown>;
  username?: string;
  password?: string;
  tls?: { caPath?: string; certPath?: string; keyPath?: string; rejectUnauthorized?: boolean };
  /** How long the broker keeps our session (and queues events) while we are disconnected. */
  sessionExpiryIntervalS?: number;
  keepaliveS?: number;
  connectTimeoutMs?: number;
  backoff?: Partial<BackoffOptions>;
  random?: () => number;
  timers?: Timers;
}

export interface GroupStats {
  name: string;
  clientId: string;
  connected: boolean;
  connects: number;
  /** CONNACKs with sessionPresent = false after the first connection: the broker lost our session. */
  sessionsLost: number;
  subscribes: number;
  messages: number;
  sinkFailures: number;
  /** Delays of the reconnects scheduled so far (the last 32). */
  reconnectDelaysMs: number[];
  lastError: string | undefined;
}

const NAME = /^[A-Za-z0-9_-]+$/;

class GroupConnection {
  readonly stats: GroupStats;
  private client: MqttClient | undefined;
  private readonly backoff: Backoff;
  private timer: unknown;
  /** When the current connection got its CONNACK (performance.now()); undefined: not connected. */
  private connectedAtMs: number | undefined;
  private stopping = false;
  private subscribedOnce = false;

  constructor(
    private readonly group: SubscriberGroup,
    private readonly o: MqttSourceOptions,
    private readonly clientOptions: IClientOptions,
    private readonly timers: Timers,
  ) {
    this.backoff = new Backoff(o.backoff, o.random);
    this.stats = {
      name: group.name,
      clientId: clientOptions.clientId!,
      connected: false,
      connects: 0,
      sessionsLost: 0,
      subscribes: 0,
      messages: 0,
      sinkFailures: 0,
      reconnectDelaysMs: [],
      lastError: undefined,
    };
  }

  start(): void {
    const c = connect(this.o.url, this.clientOptions);
    this.client = c;
    // When this connection last sent a packet (performance.now()), for the keepalive below.
    let sentAtMs = performance.now();
    c.on('packetsend', () => (sentAtMs = performance.now()));
    c.handleMessage = (packet, done) => {
      // A PUBLISH from the broker shows it alive, as an ack of its own publishes does for mqtt.js;
      // mqtt.js reschedules its keepalive only on those and on a PINGRESP. Without this, a PINGREQ
      // sent while the sink held an event had its PINGRESP wait behind that event (one inbound
      // packet at a time), and a hold over half a keepalive (15 s of 30; a site holds up to 30 s
      // for disk room) dropped the connection with "Keepalive timeout". Now a hold has 1.5
      // keepalives from its event. The rescheduled PINGREQ goes a keepalive after the event, and
      // the broker closes a client silent for 1.5: after a quiet quarter keepalive a PINGREQ goes
      // now. A dead link is still found: nothing arrives, and the keepalive runs out as before.
      if (c.keepalive > 0 && performance.now() - sentAtMs > c.keepalive * 250) c.sendPing();
      c.reschedulePing(true);
      const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
      // The connection the event came on: mqtt.js replaces `c.stream` when it reconnects, and a
      // sink that answers after that must not act on the connection that replaced its own.
      const stream = c.stream;
      this.o.sink(packet.topic, payload).then(
        () => {
          this.stats.messages++;
          this.backoff.reset(); // the connection works: the next loss reconnects at once again
          // Its connection is gone: no PUBACK. mqtt.js would send it on the current connection (or
          // queue it for the next), where the broker resends this event under the same packet id
          // and may give the id to another event once acknowledged — a second PUBACK of that id
          // (the resent copy's) would then acknowledge an event not yet on disk. The resent copy
          // is journaled again and dropped as a duplicate by its seq.
          if (stream !== c.stream || stream.destroyed) return;
          done(); // now mqtt.js sends the PUBACK
        },
        (err: unknown) => {
          // No PUBACK: drop the connection (if it is not gone already); the broker redelivers
          // when the session resumes.
          this.stats.sinkFailures++;
          this.stats.lastError = `sink: ${err instanceof Error ? err.message : String(err)}`;
          stream.destroy();
        },
      );
    };
    c.on('connect', (connack: IConnackPacket) => this.onConnack(connack));
    c.on('close', () => this.onClose());
    c.on('error', (err) => {
      this.stats.lastError = err.message;
    });
  }

  private onConnack(connack: IConnackPacket): void {
    const c = this.client!;
    this.stats.connected = true;
    this.stats.connects++;
    // The backoff is not reset by a CONNACK alone: a sink that keeps failing (the journal's disk
    // full, an I/O error) or a subscription refused drops each connection right after it, and a
    // reset here made that a reconnect every 125–250 ms for good. It resets on an event acked,
    // or when a connection that lasted a whole maximum delay ends (a quiet site's dropped link).
    this.connectedAtMs = performance.now();
    if (!connack.sessionPresent && this.subscribedOnce) this.stats.sessionsLost++;
    if (connack.sessionPresent && this.subscribedOnce) return; // the broker kept our subscriptions
    c.subscribe(this.group.topics, { qos: 1 }, (err, granted) => {
      const refused = (granted ?? []).filter((g) => g.qos >= 0x80).map((g) => g.topic);
      if (err || refused.length > 0) {
        this.stats.lastError = `subscribe refused: ${err?.message ?? refused.join(', ')}`;
        c.stream?.destroy(); // retry with backoff; the ACL may be fixed meanwhile
        return;
      }
      this.stats.subscribes++;
      this.subscribedOnce = true;
    });
  }

  private onClose(): void {
    this.stats.connected = false;
    if (this.connectedAtMs !== undefined && performance.now() - this.connectedAtMs >= this.backoff.maxDelayMs) this.backoff.reset();
    this.connectedAtMs = undefined;
    if (this.stopping || this.timer !== undefined) return;
    const delay = this.backoff.next();
    this.stats.reconnectDelaysMs.push(delay);
    if (this.stats.reconnectDelaysMs.length > 32) this.stats.reconnectDelaysMs.shift();
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      if (!this.stopping) this.client?.reconnect();
    }, delay);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    // A graceful DISCONNECT keeps the session (sessionExpiryInterval); unacked events are redelivered.
    await this.client?.endAsync(!this.stats.connected);
  }
}

export class MqttSource {
  private readonly conns: GroupConnection[];

  constructor(options: MqttSourceOptions) {
    if (!NAME.test(options.clientId)) throw new RangeError(`MqttSource clientId: expected [A-Za-z0-9_-]+, got ${options.clientId}`);
    if (options.groups.length === 0) throw new RangeError('MqttSource groups: expected at least one group, got none');
    const names = new Set<string>();
    for (const g of options.groups) {
      if (!NAME.test(g.name) || names.has(g.name)) throw new RangeError(`MqttSource group name: expected unique [A-Za-z0-9_-]+, got ${g.name}`);
      if (g.topics.length === 0) throw new RangeError(`MqttSource group ${g.name}: expected topics, got none`);
      names.add(g.name);
    }
    const expiry = options.sessionExpiryIntervalS ?? 7 * 24 * 3600;
    if (!Number.isInteger(expiry) || expiry <= 0 || expiry > 0xfffffffe) {
      throw new RangeError(`MqttSource sessionExpiryIntervalS: expected 1..4294967294, got ${expiry}`);
    }
    const tls = options.tls;
    const timers: Timers = options.timers ?? { setTimeout: (f, ms) => setTimeout(f, ms), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) };
    this.conns = options.groups.map((g) => {
      const co: IClientOptions = {
        clientId: `${options.clientId}-${g.name}`,
        clean: false,
        protocolVersion: 5,
        properties: { sessionExpiryInterval: expiry },
        reconnectPeriod: 0, // our own backoff in GroupConnection.onClose
        resubscribe: false, // our own, on sessionPresent = false
        keepalive: options.keepaliveS ?? 30,
        connectTimeout: options.connectTimeoutMs ?? 10_000,
        ...(options.username !== undefined ? { username: options.username } : {}),
        ...(options.password !== undefined ? { password: options.password } : {}),
        ...(tls?.caPath ? { ca: readFileSync(tls.caPath) } : {}),
        ...(tls?.certPath ? { cert: readFileSync(tls.certPath) } : {}),
        ...(tls?.keyPath ? { key: readFileSync(tls.keyPath) } : {}),
        ...(tls ? { rejectUnauthorized: tls.rejectUnauthorized ?? true } : {}),
      };
      return new GroupConnection(g, options, co, timers);
    });
  }

  /** Opens every group's connection; they connect (and reconnect) in the background. */
  start(): void {
    for (const c of this.conns) c.start();
  }

  stats(): GroupStats[] {
    return this.conns.map((c) => ({ ...c.stats, reconnectDelaysMs: [...c.stats.reconnectDelaysMs] }));
  }

  async stop(): Promise<void> {
    await Promise.all(this.conns.map((c) => c.stop()));
  }
}
