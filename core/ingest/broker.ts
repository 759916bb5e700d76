// The embedded MQTT broker (aedes 1.2, MQTT 3.1/3.1.1) whose PUBACK means "the event is on disk".
//
// Durable PUBACK: for QoS >= 1 on an event topic, aedes calls `authorizePublish` and writes PUBACK
// only when its callback runs (lib/handlers/publish.js: authorizePublish → PUBACK → route). We call
// the `onEvent` sink (which journals with a group commit) and hold the callback until the sink's
// promise resolved. aedes dispatches every PUBLISH of one socket read concurrently and reads the
// next chunk only when all of them finished, so one read chunk shares one group commit, and a held
// callback is also TCP backpressure for that connection.
//
// Concurrency contract: single-threaded. Per client, callbacks are released strictly in arrival
// order (a FIFO of pending releases), so PUBACKs stay in order as MQTT requires, even when sinks
// resolve out of order.
//
// Invariants:
//   - no PUBACK/PUBREC for an event topic before `onEvent` resolved for that packet;
//   - a refused publish (ACL, sink failure, disk full past the hold limit) closes the client
//     connection without an ack (MQTT 3.1.1 has no negative PUBACK; [MQTT-3.3.5-2]);
//   - unauthenticated clients never reach CONNACK 0;
//   - a client id stays with the principal that first connected with it (CONNACK 2, identifier
//     rejected, for any other), so no module can take over another's session and its commands.
import { Aedes, type AedesOptions, type Client, type PublishPacket, type Subscription } from 'aedes';
import { readFileSync } from 'node:fs';
import { isIP, createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';

/** Client ids whose owner the broker remembers (see EmbeddedBroker.idOwners). */
const CLIENT_IDS_MAX = 10_000;
/** Refusal records kept (EmbeddedBroker.refusals); past it the one refused longest ago goes. */
const REFUSALS_MAX = 64;
/** Default `preAuthBytesMax`: a CONNECT is a few hundred bytes; this leaves room for a pipelined publish or two. */
const PRE_AUTH_BYTES_MAX = 1024 * 1024;
/** Default `packetBytesMax`: far above any event the envelope accepts (payload_bytes_max, 256 KiB). */
const PACKET_BYTES_MAX = 16 * 1024 * 1024;

/** The part of aedes' client (lib/client.js) the size guard reads: its mqtt-packet parser. */
interface GuardedClient {
  connected?: boolean;
  _parser: { parse(buf: Buffer): number; packet: { length: number }; _list: { length: number } };
}

/**
 * Refusals of one kind for one name, counted since the broker started. A module refused here
 * reconnects and resends for ever (its client's backoff), and none of those events arrive: the
 * site raises an alarm and logs it (docs/operations.md, "A module is refused").
 */
export interface BrokerRefusal {
  /** 'connect': a CONNECT refused (credentials, client id); 'publish': a PUBLISH the ACL refused. */
  kind: 'connect' | 'publish';
  /** The principal's name; for a refused CONNECT, the username it gave (at most 64 characters). */
  who: string;
  /** The latest refusal's reason (connect) or topic (publish; control characters as \uXXXX), at most 200 characters. */
  what: string;
  /**
   * Why, as a value (the latest refusal's), so a reader advises the right fix: a client id
   * another principal holds (CONNACK 2) was told to check the password.
   */
  reason: BrokerRefusalReason;
  count: number;
  firstMs: number;
  /** From `refusals()`: measured on the monotonic clock, as the wall clock reads now (now − it is how long ago). */
  lastMs: number;
}

/**
 * `credentials`: none, or a wrong username or password (CONNACK 4); `client_id`: the client id is
 * another principal's (CONNACK 2); `credential_store`: the store failed (CONNACK 3);
 * `pre_auth_bytes`: more bytes before the CONNECT was answered than `preAuthBytesMax` (`who` is
 * the address); `topic`: a PUBLISH the ACL refused; `packet_bytes`: a packet over `packetBytesMax`.
 */
export type BrokerRefusalReason = 'credentials' | 'client_id' | 'credential_store' | 'pre_auth_bytes' | 'topic' | 'packet_bytes';

export interface Principal {
  name: string;
  kind: 'module' | 'tilstand' | 'admin';
  /** For kind 'module': the module whose topics it owns. */
  module?: string;
}

export interface CredentialStore {
  verify(username: string, password: string): Promise<Principal | null>;
}

export type EventSink = (topic: string, payload: Buffer, principal: Principal) => Promise<unknown>;

export interface EmbeddedBrokerOptions {
  site: string;
  credentials: CredentialStore;
  onEvent: EventSink;
  /** Listen address; loopback unless TLS or allowInsecureNonLoopback. Default 127.0.0.1. */
  host?: string;
  /** 0 = ephemeral (read `port` after `listen`). Default 1883. */
  port?: number;
  tls?: { certPath: string; keyPath: string };
  /** Accept plaintext on a non-loopback address (a site LAN you trust). Default false. */
  allowInsecureNonLoopback?: boolean;
  /** When true, no new event is journaled or acknowledged. Typically `DiskBudget.full`. */
  diskFull?: () => boolean;
  /** Hold a publish this long while the disk is full, then close the client without ack. */
  diskFullHoldMaxMs?: number;
  /** How often held publishes re-check `diskFull`. */
  diskFullPollMs?: number;
  /**
   * Told of refusals: at the first of a (kind, name), then at most once per `refusalReportMs`
   * while they go on, with how many there were since the last report.
   */
  onRefused?: (r: BrokerRefusal, sinceLastReport: number) => void;
  /** Default 10 minutes. */
  refusalReportMs?: number;
  /**
   * Bytes a connection may send before it is authenticated, counting what a packet it began
   * declares it will still send. aedes buffers a packet whole before parsing it, up to MQTT's
   * 256 MB, so without this anyone who can reach the port holds that much of the site's memory per
   * connection without a password. Past it the connection is closed. Default 1 MiB.
   */
  preAuthBytesMax?: number;
  /**
   * Largest packet an authenticated client may send (its declared remaining length); past it the
   * connection is closed unacknowledged and the refusal is noted. Default 16 MiB.
   */
  packetBytesMax?: number;
  /** Passed to aedes (e.g. drainTimeout, heartbeatInterval). */
  aedes?: Pick<AedesOptions, 'drainTimeout' | 'heartbeatInterval' | 'connectTimeout' | 'concurrency' | 'keepaliveLimit'>;
}

export interface BrokerMetrics {
  connectionsAccepted: number;
  authFailures: number;
  publishRefused: number;
  subscribeRefused: number;
  eventsAcked: number;
  eventsHeldDiskFull: number;
  eventsRefusedDiskFull: number;
  sinkFailures: number;
  /** Publishes whose ack is currently held (journal or disk wait). */
  heldNow: number;
}

export class BrokerConfigError extends Error {
  readonly option: string;
  constructor(option: string, message: string) {
    super(message);
    this.name = 'BrokerConfigError';
    this.option = option;
  }
}

const NAME = /^[A-Za-z0-9_-]+$/;

/** True for addresses that cannot be reached from another machine. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** Does every topic matched by `filter` also match `allowed`? (MQTT wildcards on both sides.) */
export function filterWithin(filter: string, allowed: string): boolean {
  const f = filter.split('/');
  const a = allowed.split('/');
  for (let i = 0; i < a.length; i++) {
    if (a[i] === '#') return true; // '#' also matches the parent level
    if (i >= f.length) return false;
    if (f[i] === '#') return false;
    if (a[i] === '+') continue;
    if (f[i] !== a[i]) return false; // a '+' in the filter is wider than a literal
  }
  return f.length === a.length;
}

export interface TopicAcl {
  canPublish(p: Principal, topic: string): boolean;
  canSubscribe(p: Principal, filter: string): boolean;
}

/** The topic rules of DESIGN.md for one site. */
export function siteAcl(site: string): TopicAcl {
  if (!NAME.test(site)) throw new BrokerConfigError('site', `site: expected [A-Za-z0-9_-]+, got ${JSON.stringify(site)}`);
  const root = `tilstand/${site}`;
  const moduleOf = (p: Principal) => (p.kind === 'module' && p.module && NAME.test(p.module) ? p.module : undefined);
  return {
    canPublish(p, topic) {
      if (topic.startsWith('$')) return false;
      const l = topic.split('/');
      if (l[0] !== 'tilstand' || l[1] !== site) return false;
      if (p.kind === 'module') {
        const m = moduleOf(p);
        if (!m) return false;
        if (l[2] === 'events') return l.length >= 5 && l[3] === m && l.slice(4).every((x) => x.length > 0);
        return l[2] === 'acks' && l.length === 4 && l[3] === m;
      }
      if (p.kind === 'tilstand') {
        // letters: a module's own dead letters, told to it (letter-notices.ts).
        return (l[2] === 'commands' || l[2] === 'resync' || l[2] === 'letters') && l.length === 4 && NAME.test(l[3] ?? '');
      }
      return false; // admin publishes nothing
    },
    canSubscribe(p, filter) {
      if (p.kind === 'module') {
        const m = moduleOf(p);
        // Exactly its own topics, no wildcard: another module's dead letters name its streams and data.
        return !!m && (filter === `${root}/commands/${m}` || filter === `${root}/resync/${m}` || filter === `${root}/letters/${m}`);
      }
      if (p.kind === 'tilstand') {
        return filterWithin(filter, `${root}/events/#`) || filterWithin(filter, `${root}/acks/#`);
      }
      return filterWithin(filter, '$SYS/#'); // admin: broker health only
    },
  };
}

interface Release {
  done: boolean;
  err: Error | null;
  cb: (error?: Error | null) => void;
}

export class EmbeddedBroker {
  private readonly o: EmbeddedBrokerOptions;
  private readonly acl: TopicAcl;
  private readonly host: string;
  private readonly aedes: Aedes;
  private readonly server: Server;
  private readonly principals = new WeakMap<Client, Principal>();
  /**
   * The principal each client id has connected as since the broker started. aedes hands a client
   * id's session (its subscriptions, and the QoS 1 commands queued in it) to whoever connects with
   * that id next and drops the connection holding it; bound to its first principal, an id cannot
   * be taken by another module to read its commands or cut it off. The sessions live in aedes'
   * memory, so this lives exactly as long; it holds one entry per id of a clean session seen
   * (CLIENT_IDS_MAX; the others are in keptSessionOwners).
   */
  private readonly idOwners = new Map<string, string>();
  /**
   * Owners of the ids whose latest connection asked for a kept session (clean = false), apart from
   * `idOwners` and never forgotten: aedes keeps such a session (its subscriptions, the QoS 1
   * messages queued for it) in memory for good, so this holds one entry per session aedes holds.
   * Forgotten at the bound, the next module to connect with the id got the session, the owner's
   * commands with it, and the owner was refused its own id from then on.
   */
  private readonly keptSessionOwners = new Map<string, string>();
  /** By `${kind}|${who}`, in order of their latest refusal (the first key was refused longest ago). */
  private readonly refused = new Map<string, BrokerRefusal & { lastElapsedMs: number; reportedElapsedMs: number; unreported: number }>();
  private readonly fifo = new WeakMap<Client, Release[]>();
  private readonly admitChain = new WeakMap<Client, Promise<void>>();
  private readonly sockets = new Set<Socket>();
  private readonly diskWaiters = new Set<() => void>();
  private diskTimer: NodeJS.Timeout | undefined;
  private boundPort = 0;
  private m: BrokerMetrics = {
    connectionsAccepted: 0,
    authFailures: 0,
    publishRefused: 0,
    subscribeRefused: 0,
    eventsAcked: 0,
    eventsHeldDiskFull: 0,
    eventsRefusedDiskFull: 0,
    sinkFailures: 0,
    heldNow: 0,
  };

  constructor(options: EmbeddedBrokerOptions) {
    this.o = options;
    this.host = options.host ?? '127.0.0.1';
    this.acl = siteAcl(options.site);
    if (!isLoopback(this.host) && !options.tls && options.allowInsecureNonLoopback !== true) {
      throw new BrokerConfigError(
        'allowInsecureNonLoopback',
        `EmbeddedBroker: host ${this.host} is not loopback, so the listener needs TLS: set tls: { certPath, keyPath }, ` +
          `or set allowInsecureNonLoopback: true to accept plaintext MQTT from the network`,
      );
    }
    // refusalReportMs too: NaN never reported a refusal again after the first (no module_refused alarm).
    for (const k of ['diskFullHoldMaxMs', 'diskFullPollMs', 'port', 'preAuthBytesMax', 'packetBytesMax', 'refusalReportMs'] as const) {
      const v = options[k];
      if (v !== undefined && (!Number.isInteger(v) || v < 0)) {
        throw new BrokerConfigError(k, `EmbeddedBroker ${k}: expected a non-negative integer, got ${v}`);
      }
    }
    this.aedes = new Aedes({
      ...options.aedes,
      authenticate: (client, username, password, done) => this.authenticate(client, username, password, done),
      authorizePublish: (client, packet, cb) => this.authorizePublish(client, packet, cb),
      authorizeSubscribe: (client, sub, cb) => this.authorizeSubscribe(client, sub, cb),
    });
    const onConnection = (socket: Socket) => {
      socket.setNoDelay(true);
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    };
    if (options.tls) {
      const tlsServer = createTlsServer(
        { cert: readFileSync(options.tls.certPath), key: readFileSync(options.tls.keyPath) },
        (s) => this.guardSize(this.aedes.handle(s), s),
      );
      tlsServer.on('connection', onConnection);
      this.server = tlsServer;
    } else {
      this.server = createNetServer((s) => {
        onConnection(s);
        this.guardSize(this.aedes.handle(s), s);
      });
    }
  }

  /** Starts aedes and the listener; resolves with the bound port. */
  async listen(): Promise<number> {
    await this.aedes.listen();
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.o.port ?? 1883, this.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.boundPort = (this.server.address() as AddressInfo).port;
    return this.boundPort;
  }

  get port(): number {
    return this.boundPort;
  }

  metrics(): BrokerMetrics {
    return { ...this.m };
  }

  /**
   * Who was refused and how often (at most REFUSALS_MAX names), the latest refused first. `lastMs`
   * is measured on the monotonic clock and given as the wall clock reads now (as the ingestor's
   * streamActivity does): now − it is how long ago, so a step of the wall clock back kept the
   * site's module_refused alarm up for the length of the step, and one forward dropped it.
   */
  refusals(): BrokerRefusal[] {
    const toWall = Date.now() - performance.now();
    return [...this.refused.values()]
      .reverse()
      .map(({ kind, who, what, reason, count, firstMs, lastElapsedMs }) => ({ kind, who, what, reason, count, firstMs, lastMs: Math.round(lastElapsedMs + toWall) }));
  }

  private noteRefusal(kind: BrokerRefusal['kind'], who: string, what: string, reason: BrokerRefusalReason): void {
    const now = Date.now();
    const elapsed = performance.now();
    const name = who.length > 64 ? `${who.slice(0, 63)}…` : who;
    const key = `${kind}|${name}`;
    let r = this.refused.get(key);
    if (r) this.refused.delete(key); // re-inserted below: the map stays in order of lastMs
    else {
      if (this.refused.size >= REFUSALS_MAX) this.refused.delete(this.refused.keys().next().value!);
      r = { kind, who: name, what: '', reason, count: 0, firstMs: now, lastMs: now, lastElapsedMs: elapsed, reportedElapsedMs: -Infinity, unreported: 0 };
    }
    // A topic comes from the client: control characters are escaped, so a log line stays one line.
    const shown = what.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    r.what = shown.length > 200 ? `${shown.slice(0, 199)}…` : shown;
    r.reason = reason;
    r.count++;
    r.unreported++;
    r.lastMs = now;
    r.lastElapsedMs = elapsed;
    this.refused.set(key, r);
    // The report period is a duration, on the monotonic clock (firstMs and lastMs are shown, on the
    // wall clock): a wall clock set back an hour reported no refusal of that name for the hour.
    if (this.o.onRefused && elapsed - r.reportedElapsedMs >= (this.o.refusalReportMs ?? 600_000)) {
      const since = r.unreported;
      r.reportedElapsedMs = elapsed;
      r.unreported = 0;
      try {
        this.o.onRefused({ kind, who: r.who, what: r.what, reason, count: r.count, firstMs: r.firstMs, lastMs: r.lastMs }, since);
      } catch {
        // a failing observer must not change what the broker answers
      }
    }
  }

  /** Stops listening, disconnects every client, and drops held publishes unacknowledged. */
  async close(): Promise<void> {
    if (this.diskTimer) clearInterval(this.diskTimer);
    for (const w of this.diskWaiters) w();
    this.diskWaiters.clear();
    const serverClosed = new Promise<void>((r) => this.server.close(() => r()));
    await new Promise<void>((r) => this.aedes.close(() => r()));
    for (const s of this.sockets) s.destroy();
    await serverClosed;
  }

  /**
   * Bounds what aedes' parser of one connection buffers: `preAuthBytesMax` in all until the client
   * is authenticated, then `packetBytesMax` per packet. aedes hands each socket read to
   * `client._parser.parse`; the check wraps that call (once per read, not per packet). A packet
   * over the bound is refused by its declared length, before its bytes arrive.
   */
  private guardSize(client: Client, socket: Socket): void {
    const c = client as unknown as GuardedClient;
    const parser = c._parser;
    const parse = parser.parse.bind(parser);
    const preAuthMax = this.o.preAuthBytesMax ?? PRE_AUTH_BYTES_MAX;
    const packetMax = this.o.packetBytesMax ?? PACKET_BYTES_MAX;
    let received = 0;
    const refuse = (kind: BrokerRefusal['kind'], who: string, why: string): number => {
      this.noteRefusal(kind, who, why, kind === 'publish' ? 'packet_bytes' : 'pre_auth_bytes');
      socket.destroy();
      return 0;
    };
    parser.parse = (buf: Buffer): number => {
      if (c.connected === true) {
        const left = parse(buf);
        const declared = parser.packet.length;
        if (declared > packetMax) {
          const p = this.principals.get(client);
          return refuse('publish', p?.name ?? '(unknown)', `a packet of ${declared} bytes, more than packetBytesMax ${packetMax}`);
        }
        return left;
      }
      received += buf.length;
      if (received > preAuthMax) return refuse('connect', socket.remoteAddress ?? '(unknown address)', `more than preAuthBytesMax ${preAuthMax} bytes before authentication`);
      const left = parse(buf);
      // What the packet being read still owes, on top of what has come: refused before it arrives.
      const declared = parser.packet.length;
      if (declared > 0 && received - parser._list.length + declared > preAuthMax) {
        return refuse('connect', socket.remoteAddress ?? '(unknown address)', `a packet of ${declared} bytes before authentication, more than preAuthBytesMax ${preAuthMax}`);
      }
      return left;
    };
  }

  private authenticate(
    client: Client,
    username: string | undefined,
    password: Buffer | undefined,
    done: (error: (Error & { returnCode: number }) | null, success: boolean | null) => void,
  ): void {
    const refuse = (code: 2 | 3 | 4, why: string) => {
      this.m.authFailures++;
      this.noteRefusal('connect', username ?? '(no username)', why, code === 2 ? 'client_id' : code === 3 ? 'credential_store' : 'credentials');
      done(Object.assign(new Error(why), { returnCode: code }), false);
    };
    if (username === undefined || password === undefined) return refuse(4, 'credentials required');
    this.o.credentials.verify(username, password.toString('utf8')).then(
      (p) => {
        if (!p) return refuse(4, 'bad username or password');
        const owner = this.keptSessionOwners.get(client.id) ?? this.idOwners.get(client.id);
        if (owner !== undefined && owner !== p.name) return refuse(2, `client id ${JSON.stringify(client.id)} is taken by ${JSON.stringify(owner)}`);
        if (!client.clean) {
          this.idOwners.delete(client.id);
          this.keptSessionOwners.set(client.id, p.name);
        } else {
          // A clean start ends the session aedes kept: the id may be forgotten at the bound again.
          this.keptSessionOwners.delete(client.id);
          if (!this.idOwners.has(client.id)) this.bindClientId(client.id, p.name);
        }
        this.principals.set(client, p);
        this.m.connectionsAccepted++;
        done(null, true);
      },
      () => refuse(3, 'credential store unavailable'),
    );
  }

  private bindClientId(id: string, name: string): void {
    if (this.idOwners.size >= CLIENT_IDS_MAX) {
      // Forget the oldest ids not connected now (a module that restarts with a random id leaves one
      // behind each time); a connected id keeps its owner (one with a kept session is not in this
      // map: keptSessionOwners). (aedes' typings omit its `clients` map.)
      const connected = (this.aedes as unknown as { clients: Record<string, unknown> }).clients;
      for (const old of this.idOwners.keys()) {
        if (this.idOwners.size < CLIENT_IDS_MAX * 0.9) break;
        if (!connected[old]) this.idOwners.delete(old);
      }
    }
    this.idOwners.set(id, name);
  }

  private authorizeSubscribe(client: Client, sub: Subscription, cb: (e: Error | null, s?: Subscription | null) => void): void {
    const p = this.principals.get(client);
    if (p && this.acl.canSubscribe(p, sub.topic)) return cb(null, sub);
    this.m.subscribeRefused++;
    cb(null, null); // SUBACK with failure 0x80 for this filter; the connection stays
  }

  private authorizePublish(client: Client | null, packet: PublishPacket, cb: (error?: Error | null) => void): void {
    const p = client ? this.principals.get(client) : undefined;
    if (!client || !p || !this.acl.canPublish(p, packet.topic)) {
      this.m.publishRefused++;
      this.noteRefusal('publish', p?.name ?? '(unauthenticated client)', packet.topic, 'topic');
      return cb(new Error(`publish to ${packet.topic} not allowed for ${p?.name ?? 'unauthenticated client'}`));
    }
    // Nothing is kept as retained: events are journaled, and aedes would keep one retained message
    // per topic in memory for good (a module may name any stream) and send it again to every
    // subscriber that connects (an ack, to the write-back at each reconnect).
    packet.retain = false;
    if (packet.topic.split('/')[2] !== 'events') {
      // Not journaled, but a QoS ≥ 1 publish still waits behind the client's held events: PUBACKs
      // leave in arrival order (MQTT-4.6.0-2), which a release at once broke.
      const queue = this.fifo.get(client);
      if (packet.qos === 0 || queue === undefined || queue.length === 0) return cb(null);
      queue.push({ done: true, err: null, cb });
      this.m.heldNow++;
      return;
    }
    if (packet.qos === 0) {
      // Fire and forget: journal it anyway, but there is no ack to hold.
      if (!this.diskIsFull()) this.sink(packet, p).catch(() => undefined);
      return cb(null);
    }
    const queue = this.fifo.get(client) ?? [];
    this.fifo.set(client, queue);
    const entry: Release = { done: false, err: null, cb };
    queue.push(entry);
    this.m.heldNow++;
    // Admission is chained per client so a publish never overtakes one held for disk space:
    // the journal sees a client's events in arrival order.
    // Once one is refused (held past diskFullHoldMaxMs: the client is disconnected), the rest of
    // its chain is refused at once: each waited a whole hold of its own before, one after
    // another, held in memory long after the connection was gone, and was journaled (never
    // acknowledged) if room came meanwhile.
    const admitted = (this.admitChain.get(client) ?? Promise.resolve()).then(
      () => this.admit(),
      (e: unknown) => Promise.reject(e),
    );
    this.admitChain.set(client, admitted);
    admitted
      .then(() => this.sink(packet, p))
      .then(
        () => {
          this.m.eventsAcked++;
        },
        (err: Error) => {
          entry.err = err;
        },
      )
      .finally(() => {
        entry.done = true;
        while (queue.length > 0 && queue[0]!.done) {
          const e = queue.shift()!;
          this.m.heldNow--;
          e.cb(e.err);
        }
      });
  }

  private async sink(packet: PublishPacket, p: Principal): Promise<void> {
    const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
    try {
      await this.o.onEvent(packet.topic, payload, p);
    } catch (err) {
      this.m.sinkFailures++;
      throw err;
    }
  }

  private diskIsFull(): boolean {
    return this.o.diskFull?.() === true;
  }

  /** Resolves when the disk has room; rejects after diskFullHoldMaxMs (the client is then closed). */
  private admit(): Promise<void> {
    if (!this.diskIsFull()) return Promise.resolve();
    this.m.eventsHeldDiskFull++;
    const holdMaxMs = this.o.diskFullHoldMaxMs ?? 30_000;
    // A duration, on the monotonic clock: on the wall clock a step back (NTP correcting a clock
    // that ran ahead) held the publish and its connection for the length of the step, and a step
    // forward refused every held publish at once.
    const started = performance.now();
    return new Promise<void>((resolve, reject) => {
      const check = () => {
        if (this.aedes.closed) {
          this.diskWaiters.delete(check);
          return reject(new Error('broker closed'));
        }
        if (!this.diskIsFull()) {
          this.diskWaiters.delete(check);
          return resolve();
        }
        if (performance.now() - started >= holdMaxMs) {
          this.diskWaiters.delete(check);
          this.m.eventsRefusedDiskFull++;
          return reject(new Error(`disk full: event not acknowledged after ${holdMaxMs} ms`));
        }
      };
      this.diskWaiters.add(check);
      if (!this.diskTimer) {
        this.diskTimer = setInterval(() => {
          for (const w of [...this.diskWaiters]) w();
          if (this.diskWaiters.size === 0 && this.diskTimer) {
            clearInterval(this.diskTimer);
            this.diskTimer = undefined;
          }
        }, this.o.diskFullPollMs ?? 100);
      }
    });
  }
}
