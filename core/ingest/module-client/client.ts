// ModuleClient: what a site module embeds to talk to Tilstand over MQTT.
//   publish   builds the envelope with the stream's next seq, stores it in the outbox (on disk)
//             first, publishes it QoS 1 on tilstand/<site>/events/<module>/<stream>, and marks it
//             acknowledged on PUBACK: the PUBACKs of one event-loop turn in one transaction (one
//             fsync), and each publish() resolves once its acknowledgement is on disk. Events not
//             acknowledged on disk before a restart are sent again on the next connect; Tilstand
//             drops the duplicates by seq.
//   resync    answers {stream, from} on tilstand/<site>/resync/<module> by republishing the
//             stream from `from` out of the outbox (as far as retention keeps it; the seqs read
//             first, each payload when its turn to go comes). What it cannot resend (an outbox
//             that holds none of the stream, pruned events) is a warning and an onResyncShortfall.
//   commands  onCommand(handler) subscribes to tilstand/<site>/commands/<module>; each command
//             {command_id, …} runs the handler once and its answer is published on
//             tilstand/<site>/acks/<module>; a redelivered command gets the stored answer again.
//   letters   subscribes to tilstand/<site>/letters/<module>, where Tilstand tells the module of
//             its own dead letters (an event it acknowledged and then refused: a contract
//             violation, no binding, …) once each is committed to the site's dead_letters table:
//             {kind: 'letter', stream, seq, reason, detail, path, letter, at}, at most 10 a second,
//             the rest told as {kind: 'summary', more, since, until, reasons, …}
//             (../letter-notices.ts). Each checked notice goes to onDeadLetter, or is a warning.
//
// Concurrency: one client per outbox file. Calls may interleave; commands run one at a time in
// arrival order. Invariants: an event is on disk before its first PUBLISH; a publish() promise
// resolves only after PUBACK and is rejected by close() otherwise (the event stays in the outbox);
// at most events_inflight_max events are in mqtt.js's hands at once, the rest wait on disk; a
// publish() that resolved has its acknowledgement on disk (a crash then cannot send it again),
// unless storing it failed, which onWarning says (flushAcks).

import mqtt, { type MqttClient } from 'mqtt';
import { eventTopic, joinPath, NAME_PATTERN, parseEnvelope, parseJsonSafely, type ContractRef, type Envelope, type Op, type RowImage } from '../envelope.ts';
import { checkLetterNotice, lettersTopic, type DeadLetterNotice } from '../letter-notices.ts';
import { Outbox, type OutboxEvent, type OutboxKey, type OutboxOptions } from './outbox.ts';

export interface ModuleClientOptions extends Partial<OutboxOptions> {
  readonly url: string;
  readonly username?: string;
  readonly password?: string;
  readonly site: string;
  readonly module: string;
  /** The outbox's better-sqlite3 file. */
  readonly outboxPath: string;
  /** MQTT client id; default `module-<site>-<module>` (stable, so the broker keeps the session; not `tilstand-…`, the prefix of Tilstand's own connections). */
  readonly clientId?: string;
  /** Largest event accepted, in bytes (match Tilstand's payload_bytes_max). */
  readonly payload_bytes_max?: number;
  /** Most events republished for one resync request. */
  readonly resync_events_max?: number;
  /**
   * Most events handed to mqtt.js at once (PUBLISHed or queued offline, not yet PUBACKed); the rest
   * wait in the outbox on disk. Below 65 535: mqtt.js numbers packets with 16-bit ids, and a
   * backlog beyond that (a broker down for hours) overwrote the oldest events in its memory store,
   * so they were never sent, while every event of the backlog was held in memory.
   */
  readonly events_inflight_max?: number;
  /** Largest command or resync request read, in bytes. */
  readonly request_bytes_max?: number;
  /** Wait before reconnecting, in ms. */
  readonly reconnect_period_ms?: number;
  readonly now_ms?: () => number;
  /** Problems that have no caller to return to (bad command payloads, resync beyond retention). */
  readonly onWarning?: (message: string) => void;
  /**
   * A resync request the outbox cannot answer in full (besides the warning): the site asked for
   * events this outbox does not hold, so Tilstand will skip them after its gap timeout unless the
   * module sends them some other way (a reinstalled module whose outbox started empty, a request
   * beyond retention).
   */
  readonly onResyncShortfall?: (shortfall: ResyncShortfall) => void;
  /**
   * Tilstand refused one of this module's events after acknowledging it (its PUBACK means only
   * "journaled"): the notice names the stream, seq, reason code, message and the letter's id on
   * the site (`tilstand deadletters list`). Summaries stand for the letters beyond Tilstand's
   * bound of notices a second. Without it each notice is a warning (onWarning).
   */
  readonly onDeadLetter?: (notice: DeadLetterNotice) => void;
}

/**
 * What a resync request asked for that the outbox could not resend. `reason`: `empty`, the outbox
 * holds no event of the stream (`oldest_kept` null); `pruned`, it holds the stream from
 * `oldest_kept` on only, and resent that part.
 */
export interface ResyncShortfall {
  readonly reason: 'empty' | 'pruned';
  readonly stream: string;
  /** The first seq the site asked for. */
  readonly from: number;
  /** The oldest seq of the stream the outbox still holds; null when it holds none. */
  readonly oldest_kept: number | null;
  /** The last seq this outbox took for the stream (0: none, as after a reinstall). */
  readonly last_seq: number;
  /** Events queued to be resent for the request. */
  readonly resent: number;
}

export interface Command {
  readonly command_id: string;
  readonly [field: string]: unknown;
}

/** What a handler returns (or throws, which becomes `{ok: false, error}`). */
export type CommandResult = { readonly ok: true; readonly result?: unknown } | { readonly ok: false; readonly error: string };
export type CommandHandler = (command: Command) => CommandResult | Promise<CommandResult> | void | Promise<void>;

export interface CommandAck {
  readonly command_id: string | null;
  readonly module: string;
  readonly ok: boolean;
  readonly result?: unknown;
  readonly error?: string;
  readonly ts_ms: number;
}

/** Commands kept in memory while no handler is set (Tilstand resends an unanswered one every minute). */
const COMMANDS_HELD_MAX = 1_000;
/** How long close() lets a running command finish on the open connection (its events' PUBACKs). */
const CLOSE_COMMAND_WAIT_MS = 5_000;

interface Waiter {
  resolve: () => void;
  reject: (e: Error) => void;
}

/** A PUBACKed event whose acknowledgement is not on disk yet, with the callers waiting for it. */
interface Acking {
  readonly key: string;
  readonly stream: string;
  readonly seq: number;
  readonly waiters: Waiter[];
}

/** The first NaN or ±Infinity in a row image (arrays and objects within it), with its path; undefined when none. */
function nonFiniteNumber(v: unknown, path: string): { path: string; value: number } | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : { path, value: v };
  if (v === null || typeof v !== 'object') return undefined;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const found = nonFiniteNumber(v[i], joinPath(path, i));
      if (found) return found;
    }
    return undefined;
  }
  for (const [k, x] of Object.entries(v)) {
    const found = nonFiniteNumber(x, joinPath(path, k));
    if (found) return found;
  }
  return undefined;
}

/** An outbox event's key in the client's queue, in-flight and acking sets: `stream\0seq`. */
const keyOf = (e: OutboxKey): string => `${e.stream}\u0000${e.seq}`;

export class ModuleClient {
  readonly site: string;
  readonly module: string;
  private readonly outbox: Outbox;
  private readonly mqtt: MqttClient;
  private readonly now: () => number;
  private readonly warn: (m: string) => void;
  private readonly limits: { payload_bytes_max: number; resync_events_max: number; request_bytes_max: number; events_inflight_max: number };
  /** parseEnvelope's limits for publish's check (the size is checked before it, against `limits`; parseEnvelope takes ≥ 64). */
  private readonly envelopeLimits: { payload_bytes_max: number };
  /** `stream\0seq` → callers waiting for that event's PUBACK; present while it is queued or in flight. */
  private readonly waiters = new Map<string, Waiter[]>();
  /** Events handed to mqtt.js (`stream\0seq`), at most `events_inflight_max`. */
  private readonly inflight = new Set<string>();
  /**
   * Events to hand to mqtt.js when the window has room, in order (keys only: payloads stay on
   * disk): `queue` from `queueHead` on, and their `stream\0seq` in `queued`. (An array with a head
   * index: taking the first of a Map that had many deleted made a 60 000-event backlog quadratic.)
   */
  private queue: OutboxKey[] = [];
  private queueHead = 0;
  private readonly queued = new Set<string>();
  /**
   * PUBACKed events to mark acknowledged together, at the end of this event-loop turn (`flushAcks`
   * on setImmediate: after the I/O callbacks of the turn, so every PUBACK one socket read brought),
   * and their `stream\0seq` in `ackingKeys` (not resent by a reconnect meanwhile). Their waiters
   * are resolved once the group is on disk.
   */
  private acking: Acking[] = [];
  private readonly ackingKeys = new Set<string>();
  private ackFlush: ReturnType<typeof setImmediate> | undefined;
  private readonly onResyncShortfall: ((s: ResyncShortfall) => void) | undefined;
  private readonly onDeadLetter: ((n: DeadLetterNotice) => void) | undefined;
  private handler: CommandHandler | undefined;
  /**
   * Commands that arrived before onCommand() set a handler (the broker delivers what it kept for
   * the session right after CONNACK), at most COMMANDS_HELD_MAX. Run once a handler is set; they
   * were run with none and their refusal ("this.handler is not a function") stored for good.
   */
  private heldCommands: Buffer[] = [];
  private commandChain: Promise<void> = Promise.resolve();
  /** close() began: no command is started any more. */
  private closing = false;
  /** close() ended the connection: nothing is sent or taken in any more. */
  private closed = false;
  private readonly topics: { commands: string; acks: string; resync: string; letters: string };
  private readonly firstConnect: Promise<void>;

  constructor(options: ModuleClientOptions) {
    for (const k of ['site', 'module'] as const) {
      if (!NAME_PATTERN.test(options[k] ?? '')) throw new RangeError(`${k}: expected a name matching ${NAME_PATTERN.source}, got ${JSON.stringify(options[k])}`);
    }
    this.site = options.site;
    this.module = options.module;
    this.now = options.now_ms ?? Date.now;
    this.warn = options.onWarning ?? ((m) => console.warn(`module-client ${options.module}: ${m}`));
    if (options.onResyncShortfall !== undefined && typeof options.onResyncShortfall !== 'function') {
      throw new TypeError(`onResyncShortfall: expected a function, got ${typeof options.onResyncShortfall}`);
    }
    this.onResyncShortfall = options.onResyncShortfall;
    if (options.onDeadLetter !== undefined && typeof options.onDeadLetter !== 'function') {
      throw new TypeError(`onDeadLetter: expected a function, got ${typeof options.onDeadLetter}`);
    }
    this.onDeadLetter = options.onDeadLetter;
    this.limits = {
      payload_bytes_max: options.payload_bytes_max ?? 256 * 1024,
      resync_events_max: options.resync_events_max ?? 10_000,
      request_bytes_max: options.request_bytes_max ?? 64 * 1024,
      events_inflight_max: options.events_inflight_max ?? 1_000,
    };
    for (const [k, v] of Object.entries(this.limits)) {
      if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${k}: expected an integer ≥ 1, got ${String(v)}`);
    }
    this.envelopeLimits = { payload_bytes_max: Math.max(64, this.limits.payload_bytes_max) };
    if (this.limits.events_inflight_max > 60_000) throw new RangeError(`events_inflight_max: expected an integer from 1 to 60000, got ${this.limits.events_inflight_max}`);
    const base = `tilstand/${this.site}`;
    this.topics = { commands: `${base}/commands/${this.module}`, acks: `${base}/acks/${this.module}`, resync: `${base}/resync/${this.module}`, letters: lettersTopic(this.site, this.module) };
    this.outbox = new Outbox(options.outboxPath, options);

    this.mqtt = mqtt.connect(options.url, {
      // Not `tilstand-…`: that prefix is Tilstand's own (its subscriber connections are `tilstand-<site>-<group>`);
      // two clients with one id on one broker take each other's session over and over.
      clientId: options.clientId ?? `module-${this.site}-${this.module}`,
      username: options.username,
      password: options.password,
      clean: false,
      reconnectPeriod: options.reconnect_period_ms ?? 1_000,
      connectTimeout: 10_000,
    });
    let connected!: () => void;
    this.firstConnect = new Promise((r) => (connected = r));
    this.mqtt.on('connect', () => {
      connected();
      this.onConnect();
    });
    this.mqtt.on('message', (topic, payload) => this.onMessage(topic, payload));
    this.mqtt.on('error', (e) => this.warn(`mqtt: ${e.message}`));
    // What an earlier run left unacknowledged goes first: queued now, before any publish of this
    // run, it leads mqtt.js's offline queue, which is sent before 'connect' is emitted. Sent only
    // from onConnect, it went out after an event published before the first CONNACK (per-stream
    // order broken on the wire: Tilstand held the new event behind the gap, or asked a resync).
    this.resendUnacked();
  }

  /** Resolves once the client has connected for the first time. */
  connected(): Promise<void> {
    return this.firstConnect;
  }

  /** The last seq taken for a stream (0 before the first event). */
  lastSeq(stream: string): number {
    return this.outbox.lastSeq(stream);
  }

  /**
   * Publishes one change event. The envelope is stored before it is sent; the promise resolves
   * with its seq on PUBACK. Throws at once for a malformed event or a full outbox.
   */
  publish(stream: string, op: Op, before: RowImage | null, after: RowImage | null, contract: ContractRef): Promise<{ seq: number }> {
    if (this.closed) return Promise.reject(new Error('module client is closed'));
    if (!NAME_PATTERN.test(stream)) return Promise.reject(new RangeError(`stream: expected a name matching ${NAME_PATTERN.source}, got ${JSON.stringify(stream)}`));
    const ts_ms = this.now();
    let event: OutboxEvent;
    try {
      event = this.outbox.append(stream, ts_ms, (seq) => {
        const envelope: Envelope = { op, before, after, source: { module: this.module, stream, seq }, ts_ms, contract: { name: contract.name, version: contract.version } };
        const payload = JSON.stringify(envelope);
        // JSON.stringify writes NaN and ±Infinity as null: a sensor's NaN reached the table as
        // null, which a partial-update table takes for "no change". (After the stringify, which
        // refuses a cycle.)
        const nonFinite = nonFiniteNumber(before, 'before') ?? nonFiniteNumber(after, 'after');
        if (nonFinite) throw new RangeError(`event refused before sending: ${nonFinite.path} is ${nonFinite.value}, a number JSON has no form for (a FLOAT or DOUBLE field takes the text "NaN", "Infinity" or "-Infinity")`);
        const bytes = Buffer.byteLength(payload);
        if (bytes > this.limits.payload_bytes_max) throw new RangeError(`event refused before sending: too_large: payload is ${bytes} bytes, more than payload_bytes_max ${this.limits.payload_bytes_max}`);
        // Assert before storing: what goes out is what Tilstand's parseEnvelope accepts (the same
        // function: the envelope's fields, nesting ≤ 512 levels, no forbidden key or lone
        // surrogate), refused with the reason its dead letter would have had.
        const checked = parseEnvelope(eventTopic(this.site, this.module, stream), Buffer.from(payload), this.envelopeLimits, { site: this.site });
        if (!checked.ok) throw new RangeError(`event refused before sending: ${checked.reason}: ${checked.detail}`);
        return payload;
      });
    } catch (e) {
      return Promise.reject(e as Error);
    }
    return this.send(event).then(() => ({ seq: event.seq }));
  }

  /** Sets the command handler and subscribes to this module's command topic. */
  onCommand(handler: CommandHandler): void {
    const first = this.handler === undefined;
    this.handler = handler;
    if (first) {
      for (const payload of this.heldCommands) this.queueCommand(payload);
      this.heldCommands = [];
    }
    if (first) this.mqtt.subscribe(this.topics.commands, { qos: 1 }, (e) => e && this.warn(`subscribe ${this.topics.commands}: ${e.message}`));
  }

  /**
   * Disconnects. Publishes still waiting for PUBACK are rejected; their events stay in the outbox.
   * A command handler that is running is waited for, so its answer is stored (a handler must not
   * await close() itself); commands queued behind it are not started.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    // A command being carried out finishes and its answer is stored before the outbox closes: a
    // command done but not on record ran a second time when Tilstand sent it again after the
    // restart. Those queued behind it are not started (onCommandMessage). It finishes while the
    // connection still brings the PUBACKs of the events it publishes: ended first, a command
    // waiting for one waited for good, and close() with it. Bounded (a broker that does not
    // answer): then its events' waits are ended below, and it ends with them.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.commandChain, new Promise<void>((r) => (timer = setTimeout(r, CLOSE_COMMAND_WAIT_MS)))]);
    clearTimeout(timer);
    this.closed = true;
    await this.mqtt.endAsync(true).catch(() => undefined);
    // PUBACKs already received: on disk, and their publish() resolved, before the outbox closes.
    if (this.ackFlush !== undefined) clearImmediate(this.ackFlush);
    this.flushAcks();
    const err = new Error('module client closed before PUBACK; the event stays in the outbox and is sent on the next start');
    for (const waiters of this.waiters.values()) for (const w of waiters) w.reject(err);
    this.waiters.clear();
    await this.commandChain;
    this.inflight.clear();
    this.queued.clear();
    this.queue = [];
    this.outbox.close();
  }

  // -------------------------------------------------------------------------------------------

  /**
   * Resolves on the event's PUBACK. The event is queued and handed to mqtt.js once fewer than
   * `events_inflight_max` are in flight; an event queued or in flight already is not sent twice.
   */
  private send(event: OutboxKey): Promise<void> {
    const key = keyOf(event);
    return new Promise<void>((resolve, reject) => {
      const waiting = this.waiters.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.waiters.set(key, [{ resolve, reject }]);
      if (this.inflight.has(key) || this.queued.has(key)) return;
      this.enqueue(key, event);
      this.pump();
    });
  }

  /** Queues every unacknowledged event that is neither queued nor in flight (no caller waits on it). */
  private resendUnacked(): void {
    for (const event of this.outbox.unackedKeys()) if (!this.ackingKeys.has(keyOf(event))) this.requeue(event);
    this.pump();
  }

  /** Queues `event` to be sent again, with no waiter, unless it is queued or in flight already. */
  private requeue(event: OutboxKey): void {
    const key = keyOf(event);
    if (!this.inflight.has(key) && !this.queued.has(key)) this.enqueue(key, event);
  }

  private enqueue(key: string, event: OutboxKey): void {
    this.queued.add(key);
    this.queue.push({ stream: event.stream, seq: event.seq });
  }

  /** Hands queued events to mqtt.js, oldest first, while the in-flight window has room. */
  private pump(): void {
    while (!this.closed && this.inflight.size < this.limits.events_inflight_max && this.queueHead < this.queue.length) {
      const event = this.queue[this.queueHead++]!;
      if (this.queueHead >= 1024 && this.queueHead * 2 >= this.queue.length) {
        this.queue = this.queue.slice(this.queueHead);
        this.queueHead = 0;
      }
      const key = keyOf(event);
      this.queued.delete(key);
      const payload = this.outbox.payload(event.stream, event.seq);
      if (payload === undefined) {
        // Pruned since it was queued (a resync of an old, acknowledged event): nothing to resend.
        for (const w of this.waiters.get(key) ?? []) w.resolve();
        this.waiters.delete(key);
        continue;
      }
      this.inflight.add(key);
      const topic = eventTopic(this.site, this.module, event.stream);
      this.mqtt.publish(topic, payload, { qos: 1 }, (err) => {
        if (this.closed) return; // close() settles the waiters
        const waiters = this.waiters.get(key) ?? [];
        this.waiters.delete(key);
        this.inflight.delete(key);
        if (err) {
          for (const w of waiters) w.reject(err);
        } else {
          this.acking.push({ key, stream: event.stream, seq: event.seq, waiters });
          this.ackingKeys.add(key);
          this.ackFlush ??= setImmediate(this.flushAcks);
        }
        this.pump();
      });
    }
  }

  /**
   * Marks the PUBACKed events acknowledged in one transaction, then resolves their publish()
   * calls: a resolved publish is never sent again after a crash, while a crash before the commit
   * only sends the group again (duplicates Tilstand drops by seq). A commit that fails (disk full)
   * still resolves them, since the broker has them: they stay unacknowledged on disk and go again
   * on the next connect or start; a rejection would invite the module to publish them anew, under
   * new seqs that Tilstand would not take for duplicates.
   */
  private readonly flushAcks = (): void => {
    this.ackFlush = undefined;
    const group = this.acking;
    if (group.length === 0) return;
    this.acking = [];
    try {
      this.outbox.markAckedMany(group, this.now());
    } catch (e) {
      const one = group.length === 1;
      this.warn(`the acknowledgement of ${group.length} event${one ? '' : 's'} could not be stored (${(e as Error).message}); ${one ? 'it is' : 'they are'} sent again on the next connect (Tilstand drops the duplicates)`);
    }
    for (const a of group) {
      this.ackingKeys.delete(a.key);
      for (const w of a.waiters) w.resolve();
    }
  };

  private onConnect(): void {
    this.mqtt.subscribe(this.topics.resync, { qos: 1 }, (e) => e && this.warn(`subscribe ${this.topics.resync}: ${e.message}`));
    // Refused by a site older than the letters topic: only the warning, the rest works as before.
    this.mqtt.subscribe(this.topics.letters, { qos: 1 }, (e) => e && this.warn(`subscribe ${this.topics.letters}: ${e.message} (this site does not tell modules of their dead letters)`));
    if (this.handler) this.mqtt.subscribe(this.topics.commands, { qos: 1 }, (e) => e && this.warn(`subscribe ${this.topics.commands}: ${e.message}`));
    // Events stored by an earlier run (or whose PUBLISH failed) and not in flight now.
    this.resendUnacked();
  }

  private onMessage(topic: string, payload: Buffer): void {
    if (this.closed) return;
    if (topic === this.topics.resync) this.onResync(payload);
    else if (topic === this.topics.letters) this.onLetter(payload);
    else if (topic === this.topics.commands) {
      if (this.handler) this.queueCommand(payload);
      else if (this.heldCommands.length < COMMANDS_HELD_MAX) this.heldCommands.push(payload);
      else this.warn(`command dropped: ${COMMANDS_HELD_MAX} commands wait for onCommand() already (Tilstand sends it again)`);
    }
  }

  private queueCommand(payload: Buffer): void {
    this.commandChain = this.commandChain.then(() => this.onCommandMessage(payload)).catch((e) => this.warn(`command: ${(e as Error).message}`));
  }

  private readRequest(payload: Buffer, what: string): Record<string, unknown> | undefined {
    if (payload.length > this.limits.request_bytes_max) {
      this.warn(`${what} of ${payload.length} bytes is above request_bytes_max ${this.limits.request_bytes_max}; ignored`);
      return undefined;
    }
    const parsed = parseJsonSafely(payload);
    if (!parsed.ok) {
      this.warn(`${what} refused: ${parsed.detail}`);
      return undefined;
    }
    const v = parsed.value;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      this.warn(`${what} refused: expected a JSON object`);
      return undefined;
    }
    return v as Record<string, unknown>;
  }

  private onResync(payload: Buffer): void {
    const req = this.readRequest(payload, 'resync request');
    if (!req) return;
    const { stream, from } = req;
    if (typeof stream !== 'string' || !NAME_PATTERN.test(stream) || typeof from !== 'number' || !Number.isSafeInteger(from) || from < 0) {
      this.warn(`resync request refused: expected {stream, from}, got ${JSON.stringify(req).slice(0, 200)}`);
      return;
    }
    // Seqs only: each payload is read from disk when the in-flight window takes the event (pump).
    const seqs = this.outbox.seqsFrom(stream, from, this.limits.resync_events_max);
    // Queued without a waiter: no one awaits a resend. A promise per event per request, kept until
    // its PUBACK, grew without bound while the broker was slow or away and the requests came again.
    for (const seq of seqs) this.requeue({ stream, seq });
    this.pump();
    const oldest = this.outbox.oldestKept(stream);
    const lastSeq = this.outbox.lastSeq(stream);
    if (oldest === undefined) {
      // Asked for the seq after the last taken here (a restored site asking whether there is
      // more; seqs start at 1): nothing is missing. Anything else was issued by an outbox this one
      // is not (the module was reinstalled, its file replaced) or deleted: the site waits in vain.
      if (Math.max(from, 1) === lastSeq + 1) return;
      this.warn(
        `resync of ${stream} from ${from}: the outbox holds no event of ${stream} (the last seq taken here is ${lastSeq}); nothing resent, ` +
          `and Tilstand will skip the seqs it waits for after its gap timeout`,
      );
      this.reportShortfall({ reason: 'empty', stream, from, oldest_kept: null, last_seq: lastSeq, resent: 0 });
    } else if (oldest > from) {
      this.warn(`resync of ${stream} from ${from}: the outbox keeps only ${oldest} and later; ${from}..${oldest - 1} cannot be resent`);
      this.reportShortfall({ reason: 'pruned', stream, from, oldest_kept: oldest, last_seq: lastSeq, resent: seqs.length });
    }
  }

  /** A dead letter notice: checked as a resync request is, then to onDeadLetter or a warning. */
  private onLetter(payload: Buffer): void {
    const req = this.readRequest(payload, 'dead letter notice');
    if (!req) return;
    const checked = checkLetterNotice(req, this.module);
    if (!checked.ok) {
      this.warn(`dead letter notice refused: ${checked.detail}, got ${JSON.stringify(req).slice(0, 200)}`);
      return;
    }
    const n = checked.notice;
    if (!this.onDeadLetter) {
      this.warn(
        n.kind === 'letter'
          ? `Tilstand refused an event of ${n.stream ?? '(no stream)'}${n.seq === null ? '' : ` seq ${n.seq}`}: ${n.reason}: ${n.detail} (dead letter ${n.letter}, received ${n.at})`
          : `Tilstand refused more events: ${n.detail}`,
      );
      return;
    }
    try {
      this.onDeadLetter(n);
    } catch (e) {
      this.warn(`onDeadLetter threw: ${(e as Error)?.message ?? String(e)}`);
    }
  }

  /** The module's onResyncShortfall; what it throws is a warning, not a failure of the client. */
  private reportShortfall(shortfall: ResyncShortfall): void {
    if (!this.onResyncShortfall) return;
    try {
      this.onResyncShortfall(shortfall);
    } catch (e) {
      this.warn(`onResyncShortfall threw: ${(e as Error)?.message ?? String(e)}`);
    }
  }

  private async onCommandMessage(payload: Buffer): Promise<void> {
    if (this.closing) return; // not started after close() began: Tilstand sends it again
    const req = this.readRequest(payload, 'command');
    const id = req && typeof req.command_id === 'string' && req.command_id.length > 0 && req.command_id.length <= 128 ? req.command_id : undefined;
    if (!req || id === undefined) {
      const cid = req && typeof req.command_id === 'string' ? req.command_id.slice(0, 128) : null;
      await this.publishAck({ command_id: cid, module: this.module, ok: false, error: 'malformed command: expected a JSON object with a command_id string', ts_ms: this.now() });
      return;
    }
    const stored = this.outbox.commandAck(id);
    if (stored !== undefined) {
      await this.publishRaw(stored);
      return;
    }
    let result: CommandResult;
    const expires = req.expires_at_ms;
    if (typeof expires === 'number' && Number.isFinite(expires) && this.now() > expires) {
      // Tilstand stopped waiting for this command at expires_at_ms and shows it as timed out; a
      // module back from a long absence must not carry out a decision the floor has moved on
      // from (nor one someone approved again meanwhile). Refused, and remembered as refused.
      result = { ok: false, error: `expired: not carried out, Tilstand stopped waiting at ${new Date(expires).toISOString()} (received ${new Date(this.now()).toISOString()})` };
    } else {
      try {
        const r = await this.handler!(req as Command);
        result = r ?? { ok: true };
      } catch (e) {
        result = { ok: false, error: (e as Error)?.message ?? String(e) };
      }
    }
    const ack: CommandAck = result.ok
      ? { command_id: id, module: this.module, ok: true, ...(result.result === undefined ? {} : { result: result.result }), ts_ms: this.now() }
      : { command_id: id, module: this.module, ok: false, error: result.error, ts_ms: this.now() };
    const text = JSON.stringify(ack);
    // Stored even when close() began meanwhile (it waits for this): the command was carried out.
    this.outbox.recordCommand(id, text, this.now());
    if (this.closing) return; // answered from the store when Tilstand sends it again
    await this.publishRaw(text);
  }

  private publishAck(ack: CommandAck): Promise<void> {
    return this.publishRaw(JSON.stringify(ack));
  }

  private publishRaw(text: string): Promise<void> {
    return new Promise((resolve) => {
      this.mqtt.publish(this.topics.acks, text, { qos: 1 }, (e) => {
        if (e && !this.closed) this.warn(`ack publish: ${e.message}`);
        resolve();
      });
    });
  }
}
