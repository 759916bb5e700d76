// ModuleClient against a real embedded aedes broker on 127.0.0.1 (port 0).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Aedes } from 'aedes';
import Database from 'better-sqlite3';
import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseEnvelope, type Envelope } from '../envelope.ts';
import { ModuleClient, type ModuleClientOptions, type ResyncShortfall } from './client.ts';
import { Outbox } from './outbox.ts';

interface Broker {
  url: string;
  aedes: Aedes;
  subscribed(topic: string): Promise<void>;
  close(): Promise<void>;
}

async function startBroker(listenPort = 0): Promise<Broker> {
  const aedes = await Aedes.createBroker();
  const server = net.createServer(aedes.handle);
  await new Promise<void>((r) => server.listen(listenPort, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const seen = new Set<string>();
  const waiting = new Map<string, (() => void)[]>();
  aedes.on('subscribe', (subs) => {
    for (const s of subs) {
      seen.add(s.topic);
      for (const w of waiting.get(s.topic) ?? []) w();
      waiting.delete(s.topic);
    }
  });
  return {
    url: `mqtt://127.0.0.1:${port}`,
    aedes,
    subscribed: (topic) => (seen.has(topic) ? Promise.resolve() : new Promise((r) => waiting.set(topic, [...(waiting.get(topic) ?? []), r]))),
    close: async () => {
      await new Promise<void>((r) => aedes.close(() => r()));
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Polls until `pred` holds; fails after `timeout_ms` (bounded). */
async function waitFor(pred: () => boolean, what: string, timeout_ms = 5_000): Promise<void> {
  const until = Date.now() + timeout_ms;
  while (!pred()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The URL of a loopback port nothing listens on (bound, read, closed): a broker that is down. */
async function unreachableUrl(): Promise<string> {
  const dead = net.createServer();
  await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
  const url = `mqtt://127.0.0.1:${(dead.address() as AddressInfo).port}`;
  await new Promise<void>((r) => dead.close(() => r()));
  return url;
}

/**
 * The transactions committed to a SQLite file's write-ahead log since it was last reset: its
 * frames that carry a commit (a nonzero database size) and the log's current salts.
 */
function walCommits(dbPath: string): number {
  let wal: Buffer;
  try {
    wal = readFileSync(`${dbPath}-wal`);
  } catch {
    return 0;
  }
  if (wal.length < 32) return 0;
  const pageSize = wal.readUInt32BE(8);
  const [salt1, salt2] = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
  let commits = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salt1 || wal.readUInt32BE(at + 12) !== salt2) break; // a frame of an earlier round
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
  }
  return commits;
}

/** The client's outbox database, with automatic checkpoints off (they reset the log walCommits reads). */
function noCheckpoints(c: ModuleClient): void {
  (c as unknown as { outbox: { db: Database.Database } }).outbox.db.pragma('wal_autocheckpoint = 0');
}

let broker: Broker;
let dir: string;
let observer: MqttClient;
let received: { topic: string; text: string }[];
const clients: ModuleClient[] = [];
const warnings: string[] = [];

beforeEach(async () => {
  broker = await startBroker();
  dir = mkdtempSync(join(tmpdir(), 'tilstand-module-client-'));
  received = [];
  warnings.length = 0;
  observer = await mqtt.connectAsync(broker.url, { clientId: 'observer', clean: true });
  await observer.subscribeAsync('tilstand/s1/#', { qos: 1 });
  observer.on('message', (topic, payload) => received.push({ topic, text: payload.toString('utf8') }));
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await observer.endAsync(true);
  await broker.close();
  rmSync(dir, { recursive: true, force: true });
});

const open = (extra: Partial<ModuleClientOptions> = {}): ModuleClient => {
  const c = new ModuleClient({
    url: broker.url,
    username: 'inventory',
    password: 'secret',
    site: 's1',
    module: 'inventory',
    outboxPath: join(dir, 'outbox.db'),
    reconnect_period_ms: 100,
    onWarning: (m) => warnings.push(m),
    ...extra,
  });
  clients.push(c);
  return c;
};

const CONTRACT = { name: 'inventory.stock', version: 1 };
const row = (qty: number) => ({ item: 'A-1', location: 'L1', qty });
const events = (stream = 'stock'): Envelope[] =>
  received
    .filter((m) => m.topic === `tilstand/s1/events/inventory/${stream}`)
    .map((m) => {
      const r = parseEnvelope(m.topic, Buffer.from(m.text), { payload_bytes_max: 65536 }, { site: 's1' });
      if (!r.ok) throw new Error(`the client sent an envelope Tilstand refuses: ${r.detail}`);
      return r.envelope;
    });

describe('ModuleClient', () => {
  it('publishes envelopes with per-stream seqs; a restarted client continues the sequence', async () => {
    const c1 = open();
    await c1.connected();
    expect(await c1.publish('stock', 'c', null, row(1), CONTRACT)).toEqual({ seq: 1 });
    expect(await c1.publish('stock', 'u', row(1), row(2), CONTRACT)).toEqual({ seq: 2 });
    expect(await c1.publish('moves', 'c', null, row(9), CONTRACT)).toEqual({ seq: 1 });
    await waitFor(() => events().length === 2 && events('moves').length === 1, 'three events');
    const [e1, e2] = events();
    expect(e1).toMatchObject({ op: 'c', before: null, after: row(1), source: { module: 'inventory', stream: 'stock', seq: 1 }, contract: CONTRACT });
    expect(e2).toMatchObject({ op: 'u', before: row(1), after: row(2), source: { seq: 2 } });
    await c1.close();
    clients.length = 0;

    const c2 = open();
    await c2.connected();
    expect(c2.lastSeq('stock')).toBe(2);
    expect(await c2.publish('stock', 'd', row(2), null, CONTRACT)).toEqual({ seq: 3 });
    await waitFor(() => events().length === 3, 'the third stock event');
    expect(events().map((e) => e.source.seq)).toEqual([1, 2, 3]);
    await c2.close();
    clients.length = 0;
    const ob = new Outbox(join(dir, 'outbox.db'));
    expect(ob.unacked()).toEqual([]); // every event was acknowledged on PUBACK
    ob.close();
  });

  it('refuses a malformed event before storing it (the seq is not consumed)', async () => {
    const c = open();
    await expect(c.publish('stock', 'c', row(1), row(1), CONTRACT)).rejects.toThrow(/op 'c' must have before = null/);
    await expect(c.publish('bad/stream', 'c', null, row(1), CONTRACT)).rejects.toThrow(/stream: expected a name/);
    await expect(c.publish('stock', 'c', null, { blob: 'x'.repeat(300_000) }, CONTRACT)).rejects.toThrow(/more than payload_bytes_max/);
    expect(c.lastSeq('stock')).toBe(0);
  });

  it('refuses a number JSON has no form for (NaN, Infinity) instead of sending it as null, which a partial-update table reads as no change', async () => {
    const c = open();
    for (const bad of [NaN, Infinity, -Infinity]) {
      await expect(c.publish('stock', 'c', null, { ...row(1), qty: bad }, CONTRACT)).rejects.toThrow(`event refused before sending: after.qty is ${bad}, a number JSON has no form for`);
    }
    await expect(c.publish('stock', 'u', { ...row(1), attrs: [1, NaN] }, row(1), CONTRACT)).rejects.toThrow(/event refused before sending: before\.attrs\[1\] is NaN/);
    expect(c.lastSeq('stock')).toBe(0);
  });

  it('keeps events in the outbox while the broker is unreachable and sends them on the next start', async () => {
    const deadUrl = await unreachableUrl();

    const offline = open({ url: deadUrl });
    const pending = offline.publish('stock', 'c', null, row(5), CONTRACT);
    const outcome = pending.then(
      () => 'acked',
      (e: Error) => e.message,
    );
    await new Promise((r) => setTimeout(r, 150));
    await offline.close();
    clients.length = 0;
    expect(await outcome).toMatch(/closed before PUBACK; the event stays in the outbox/);

    const online = open();
    await online.connected();
    await waitFor(() => events().length === 1, 'the stored event');
    expect(events()[0]).toMatchObject({ after: row(5), source: { seq: 1 } });
    expect(await online.publish('stock', 'u', row(5), row(6), CONTRACT)).toEqual({ seq: 2 });
  });

  it("sends the previous run's unacknowledged events before an event published before the first CONNACK", async () => {
    const deadUrl = await unreachableUrl();
    const offline = open({ url: deadUrl });
    for (let q = 1; q <= 3; q++) offline.publish('stock', 'u', row(q - 1), row(q), CONTRACT).catch(() => undefined);
    await offline.close();
    clients.length = 0;

    // The next run publishes at once after its start, before it has connected.
    const online = open();
    expect(await online.publish('stock', 'u', row(3), row(4), CONTRACT)).toEqual({ seq: 4 });
    await waitFor(() => events().length === 4, 'the four events');
    expect(events().map((e) => e.source.seq)).toEqual([1, 2, 3, 4]); // was [4, 1, 2, 3]
  });

  it('sends a backlog beyond 65 535 events (mqtt.js packet ids) once the broker is back: none lost, none held in memory', async () => {
    // 65 600 appends and PUBACKs with synchronous=FULL: on tmpfs where there is one, or it takes minutes.
    const shm = existsSync('/dev/shm') ? mkdtempSync(join('/dev/shm', 'tilstand-module-client-')) : dir;
    const deadUrl = await unreachableUrl();
    let late: Broker | undefined;
    try {
      const c = open({ url: deadUrl, outboxPath: join(shm, 'outbox.db'), events_inflight_max: 500 });
      const N = 65_600;
      let acked = 0;
      for (let q = 1; q <= N; q++) c.publish('stock', 'u', row(q - 1), row(q), CONTRACT).then(() => acked++, () => undefined);
      // While the broker is away, mqtt.js holds no more than the window.
      expect(Object.keys((c as unknown as { mqtt: { outgoing: object } }).mqtt.outgoing).length).toBeLessThanOrEqual(500);
      late = await startBroker(Number(new URL(deadUrl).port));
      const seen = new Set<number>();
      late.aedes.on('publish', (packet, client) => {
        if (client && packet.topic === 'tilstand/s1/events/inventory/stock') seen.add((JSON.parse(packet.payload.toString()) as Envelope).source.seq);
      });
      // Bounded: until every publish settled, or nothing moved for 5 s, or 100 s.
      const until = Date.now() + 100_000;
      let last = -1;
      let lastMoved = Date.now();
      while (acked < N && Date.now() < until && Date.now() - lastMoved < 5_000) {
        if (acked !== last) [last, lastMoved] = [acked, Date.now()];
        await new Promise((r) => setTimeout(r, 50));
      }
      const missing = [];
      for (let q = 1; q <= N && missing.length < 10; q++) if (!seen.has(q)) missing.push(q);
      expect(missing).toEqual([]);
      expect(acked).toBe(N);
    } finally {
      for (const c of clients.splice(0)) await c.close();
      await late?.close();
      if (shm !== dir) rmSync(shm, { recursive: true, force: true });
    }
  }, 120_000);

  it('answers a resync request by republishing the stream from its outbox', async () => {
    const c = open();
    await c.connected();
    await broker.subscribed('tilstand/s1/resync/inventory');
    for (let q = 1; q <= 4; q++) await c.publish('stock', 'u', row(q - 1), row(q), CONTRACT);
    await waitFor(() => events().length === 4, 'four events');
    received.length = 0;
    await observer.publishAsync('tilstand/s1/resync/inventory', JSON.stringify({ stream: 'stock', from: 2 }), { qos: 1 });
    await waitFor(() => events().length === 3, 'the resent events');
    expect(events().map((e) => [e.source.seq, e.after?.qty])).toEqual([
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
    await observer.publishAsync('tilstand/s1/resync/inventory', '{"stream":"stock","from":-1}', { qos: 1 });
    await observer.publishAsync('tilstand/s1/resync/inventory', '{"__proto__":{"x":1},"stream":"stock","from":1}', { qos: 1 });
    await waitFor(() => warnings.length >= 2, 'two warnings');
    expect(warnings.join('\n')).toMatch(/resync request refused: expected \{stream, from\}/);
    expect(warnings.join('\n')).toMatch(/resync request refused: forbidden key '__proto__'/);
    expect(events().length).toBe(3);
  });

  it('says so when a resync reaches beyond what the outbox keeps', async () => {
    const shortfalls: ResyncShortfall[] = [];
    const c = open({ events_acked_kept_max: 2, onResyncShortfall: (s) => shortfalls.push(s) });
    await c.connected();
    await broker.subscribed('tilstand/s1/resync/inventory');
    for (let q = 1; q <= 5; q++) await c.publish('stock', 'u', row(q - 1), row(q), CONTRACT);
    await waitFor(() => events().length === 5, 'five events');
    received.length = 0;
    await observer.publishAsync('tilstand/s1/resync/inventory', JSON.stringify({ stream: 'stock', from: 1 }), { qos: 1 });
    await waitFor(() => events().length === 2, 'the kept events');
    expect(events().map((e) => e.source.seq)).toEqual([4, 5]);
    expect(warnings.some((w) => /keeps only 4 and later; 1\.\.3 cannot be resent/.test(w))).toBe(true);
    expect(shortfalls).toEqual([{ reason: 'pruned', stream: 'stock', from: 1, oldest_kept: 4, last_seq: 5, resent: 2 }]);
  });

  it('says so, to the module\'s code and in the log, when a resync asks for a stream its outbox holds nothing of (a reinstalled module)', async () => {
    const shortfalls: ResyncShortfall[] = [];
    const c = open({ onResyncShortfall: (s) => shortfalls.push(s) });
    await c.connected();
    await broker.subscribed('tilstand/s1/resync/inventory');
    const ask = (v: unknown) => observer.publishAsync('tilstand/s1/resync/inventory', JSON.stringify(v), { qos: 1 });
    // Nothing was taken here and the site asks from 1: nothing is missing, nothing to say.
    await ask({ stream: 'moves', from: 1 });
    // The site lost seqs 41… of a stream this (reinstalled) module's outbox has never held: was silence.
    await ask({ stream: 'stock', from: 41 });
    await waitFor(() => shortfalls.length >= 1, 'the shortfall');
    expect(shortfalls).toEqual([{ reason: 'empty', stream: 'stock', from: 41, oldest_kept: null, last_seq: 0, resent: 0 }]);
    expect(warnings.filter((w) => w.startsWith('resync'))).toEqual([
      'resync of stock from 41: the outbox holds no event of stock (the last seq taken here is 0); nothing resent, and Tilstand will skip the seqs it waits for after its gap timeout',
    ]);
    // The same for a stream whose last event is on record: the seq after it is no shortfall.
    expect(await c.publish('moves', 'c', null, row(1), CONTRACT)).toEqual({ seq: 1 });
    await ask({ stream: 'moves', from: 2 });
    await ask({ stream: 'stock', from: 2 });
    await waitFor(() => shortfalls.length >= 2, 'the second shortfall');
    expect(shortfalls.map((x) => `${x.reason} ${x.stream} ${x.from}`)).toEqual(['empty stock 41', 'empty stock 2']);
    expect(warnings.filter((w) => w.startsWith('resync'))).toHaveLength(2);
    // Said at once when the client is made, not at the first shortfall.
    expect(() => open({ outboxPath: join(dir, 'other.db'), onResyncShortfall: 'log' as never })).toThrow(/onResyncShortfall: expected a function, got string/);
  });

  it('answers a resync from the seqs alone: no payload is loaded until its event goes out', async () => {
    const c = open({ events_inflight_max: 2 });
    await c.connected();
    await broker.subscribed('tilstand/s1/resync/inventory');
    for (let q = 1; q <= 6; q++) await c.publish('stock', 'u', row(q - 1), row(q), CONTRACT);
    await waitFor(() => events().length === 6, 'six events');
    received.length = 0;
    const from = vi.spyOn(Outbox.prototype, 'from');
    const payload = vi.spyOn(Outbox.prototype, 'payload');
    try {
      await observer.publishAsync('tilstand/s1/resync/inventory', JSON.stringify({ stream: 'stock', from: 2 }), { qos: 1 });
      await waitFor(() => events().length === 5, 'the resent events');
      expect(events().map((e) => e.source.seq)).toEqual([2, 3, 4, 5, 6]);
      expect(from).not.toHaveBeenCalled(); // read 10 000 payloads to take their keys
      expect(payload).toHaveBeenCalledTimes(5); // each once, as it went out
    } finally {
      from.mockRestore();
      payload.mockRestore();
    }
  });

  it('commits the PUBACKs of one event-loop turn in one transaction, and resolves a publish only once its acknowledgement is committed', async () => {
    const c = open();
    await c.connected();
    noCheckpoints(c);
    const path = join(dir, 'outbox.db');
    // PUBACKs held, to be let go all in one turn.
    const mq = (c as unknown as { mqtt: MqttClient }).mqtt;
    const real = mq.publish.bind(mq);
    const held: (() => void)[] = [];
    mq.publish = ((topic: string, payload: string, opts: object, cb: (e?: Error) => void) =>
      real(topic, payload, opts as never, (e?: Error) => held.push(() => cb(e)))) as never;
    const N = 50;
    const reader = new Database(path, { readonly: true });
    const ackedOnDisk = (seq: number) => reader.prepare('SELECT acked_ms FROM events WHERE stream = ? AND seq = ?').get('stock', seq) as { acked_ms: number | null };
    const committedAtResolve: boolean[] = [];
    const start = walCommits(path);
    const all = Array.from({ length: N }, () =>
      c.publish('stock', 'u', row(0), row(1), CONTRACT).then(({ seq }) => committedAtResolve.push(ackedOnDisk(seq).acked_ms !== null)),
    );
    expect(walCommits(path) - start).toBe(N); // one per append: the count is the log's own
    await waitFor(() => held.length === N, 'every PUBACK');
    const beforeAcks = walCommits(path);
    for (const release of held.splice(0)) release(); // N PUBACKs in one turn
    expect(committedAtResolve).toEqual([]); // nothing resolved before the commit
    await Promise.all(all);
    reader.close();
    expect(walCommits(path) - beforeAcks).toBe(1); // was N: one fsynced transaction per PUBACK
    expect(committedAtResolve).toEqual(Array(N).fill(true));
  });

  it('resolves a delivered event whose acknowledgement could not be stored, says so, and sends it again on the next start', async () => {
    const c = open();
    await c.connected();
    const fail = vi.spyOn(Outbox.prototype, 'markAckedMany').mockImplementationOnce(() => {
      throw new Error('database or disk is full');
    });
    try {
      expect(await c.publish('stock', 'c', null, row(1), CONTRACT)).toEqual({ seq: 1 }); // the broker has it: not a failure to publish anew
    } finally {
      fail.mockRestore();
    }
    expect(warnings).toEqual(['the acknowledgement of 1 event could not be stored (database or disk is full); it is sent again on the next connect (Tilstand drops the duplicates)']);
    await c.close();
    clients.length = 0;
    received.length = 0;
    const again = open();
    await again.connected();
    // At least once: mqtt.js may hand an event queued before the first CONNACK over twice (its
    // offline queue and its session store); Tilstand drops the second by seq.
    await waitFor(() => events().length >= 1, 'the event sent again');
    expect(new Set(events().map((e) => e.source.seq))).toEqual(new Set([1]));
  });

  it('against the broker, commits far fewer transactions than PUBACKs', async () => {
    const c = open();
    await c.connected();
    noCheckpoints(c);
    const path = join(dir, 'outbox.db');
    const N = 500;
    const before = walCommits(path);
    await Promise.all(Array.from({ length: N }, (_, q) => c.publish('stock', 'u', row(q), row(q + 1), CONTRACT)));
    const ackCommits = walCommits(path) - before - N;
    console.log(`module-client: ${N} PUBACKs committed in ${ackCommits} transactions`);
    expect(ackCommits).toBeGreaterThanOrEqual(1);
    expect(ackCommits).toBeLessThan(N / 2); // was N
  });

  it('loses no acknowledgement it promised when the process is killed among a stream of PUBACKs', async () => {
    // A module in a child process publishes, records each seq whose publish() resolved, and is
    // killed (SIGKILL: nothing flushed, nothing closed) after the 300th. It records them with
    // writeSync into a file, each in the kernel before the next line runs: lines written to its
    // stdout were lost at the kill (a child's stdout is a socketpair; each small write takes about
    // 770 bytes of its 208 KiB send buffer, so with the parent busy under load about 278 lines got
    // through and the rest died in the child's write queue, "278 < 300", a flake, not a lost ack).
    const outboxPath = join(dir, 'crash.db');
    const promisedPath = join(dir, 'promised.txt');
    const script = `
      import { openSync, writeSync } from 'node:fs';
      import { ModuleClient } from ${JSON.stringify(new URL('./client.ts', import.meta.url).pathname)};
      const promised = openSync(${JSON.stringify(promisedPath)}, 'w');
      const c = new ModuleClient({ url: ${JSON.stringify(broker.url)}, site: 's1', module: 'crashing', outboxPath: ${JSON.stringify(outboxPath)}, onWarning: () => {} });
      await c.connected();
      let resolved = 0;
      for (let q = 1; q <= 2000; q++) {
        c.publish('stock', 'c', null, { item: 'A-' + q, location: 'L1', qty: q }, { name: 'inventory.stock', version: 1 }).then(({ seq }) => {
          writeSync(promised, seq + '\\n');
          if (++resolved === 300) process.kill(process.pid, 'SIGKILL');
        });
      }
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'inherit'] });
    const signal = await new Promise<NodeJS.Signals | null>((r) => child.on('close', (_code, sig) => r(sig)));
    expect(signal).toBe('SIGKILL');
    const promised = readFileSync(promisedPath, 'utf8').split('\n').filter(Boolean).map(Number);
    expect(promised.length).toBeGreaterThanOrEqual(300);
    const db = new Database(outboxPath, { readonly: true });
    const acked = new Set((db.prepare("SELECT seq FROM events WHERE stream = 'stock' AND acked_ms IS NOT NULL").pluck().all() as number[]));
    db.close();
    expect(promised.filter((seq) => !acked.has(seq))).toEqual([]);
  }, 60_000);

  it('holds a command the broker delivers before onCommand is called, and runs it once a handler is set', async () => {
    const c1 = open();
    await c1.connected();
    c1.onCommand(() => ({ ok: true }));
    await broker.subscribed('tilstand/s1/commands/inventory');
    await c1.close();
    clients.length = 0;
    // While the module is away Tilstand sends a command; the broker keeps it in the module's session
    // and delivers it as soon as the module is back, before the module has set its handler.
    await observer.publishAsync('tilstand/s1/commands/inventory', JSON.stringify({ command_id: 'cmd-early', action: 'release', job_id: 'J1' }), { qos: 1 });
    const acks = () => received.filter((m) => m.topic === 'tilstand/s1/acks/inventory').map((m) => JSON.parse(m.text));
    const c2 = open();
    await c2.connected();
    await new Promise((r) => setTimeout(r, 300));
    const seen: unknown[] = [];
    c2.onCommand((cmd) => {
      seen.push(cmd.command_id);
      return { ok: true, result: { released: cmd.job_id } };
    });
    await waitFor(() => acks().length >= 1, 'the ack');
    expect(acks()[0]).toMatchObject({ command_id: 'cmd-early', ok: true, result: { released: 'J1' } }); // was ok: false, "this.handler is not a function", stored for good
    expect(seen).toEqual(['cmd-early']);
  });

  it('runs each command once, acks it, and answers a redelivered command with the stored ack', async () => {
    const c = open();
    await c.connected();
    const seen: unknown[] = [];
    c.onCommand(async (cmd) => {
      seen.push(cmd);
      if (cmd.action === 'explode') throw new Error('no such job');
      return { ok: true, result: { released: cmd.job_id } };
    });
    await broker.subscribed('tilstand/s1/commands/inventory');
    const acks = () => received.filter((m) => m.topic === 'tilstand/s1/acks/inventory').map((m) => JSON.parse(m.text));
    const send = (v: unknown) => observer.publishAsync('tilstand/s1/commands/inventory', typeof v === 'string' ? v : JSON.stringify(v), { qos: 1 });

    await send({ command_id: 'cmd-1', action: 'release', job_id: 'J7' });
    await waitFor(() => acks().length === 1, 'the first ack');
    expect(acks()[0]).toMatchObject({ command_id: 'cmd-1', module: 'inventory', ok: true, result: { released: 'J7' } });

    await send({ command_id: 'cmd-1', action: 'release', job_id: 'J7' });
    await waitFor(() => acks().length === 2, 'the repeated ack');
    expect(acks()[1]).toEqual(acks()[0]);
    expect(seen).toHaveLength(1);

    await send({ command_id: 'cmd-2', action: 'explode' });
    await send('not json');
    await waitFor(() => acks().length === 4, 'two more acks');
    expect(acks()[2]).toMatchObject({ command_id: 'cmd-2', ok: false, error: 'no such job' });
    expect(acks()[3]).toMatchObject({ command_id: null, ok: false, error: /malformed command/ });

    // A command that arrives after Tilstand stopped waiting for it (the module was away) is
    // refused without running, and a redelivered copy gets the same refusal.
    const past = Date.now() - 60_000;
    await send({ command_id: 'cmd-3', action: 'release', job_id: 'J8', expires_at_ms: past });
    await waitFor(() => acks().length === 5, 'the refusal');
    expect(acks()[4]).toMatchObject({ command_id: 'cmd-3', ok: false, error: expect.stringMatching(new RegExp(`^expired: not carried out, Tilstand stopped waiting at ${new Date(past).toISOString()}`)) });
    await send({ command_id: 'cmd-3', action: 'release', job_id: 'J8' });
    await waitFor(() => acks().length === 6, 'the repeated refusal');
    expect(acks()[5]).toEqual(acks()[4]);
    // Before its expiry it runs as any other.
    await send({ command_id: 'cmd-4', action: 'release', job_id: 'J9', expires_at_ms: Date.now() + 60_000 });
    await waitFor(() => acks().length === 7, 'the ack');
    expect(acks()[6]).toMatchObject({ command_id: 'cmd-4', ok: true, result: { released: 'J9' } });
    expect(seen).toHaveLength(3);
  });
});
