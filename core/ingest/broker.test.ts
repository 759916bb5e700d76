import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BrokerConfigError, EmbeddedBroker, filterWithin, type CredentialStore, type EmbeddedBrokerOptions, type Principal } from './broker.ts';
import { Journal, journalSink } from './journal.ts';

const SITE = 's1';
const USERS: Record<string, { password: string; principal: Principal }> = {
  inventory: { password: 'inv-pw', principal: { name: 'inventory', kind: 'module', module: 'inventory' } },
  operations: { password: 'ops-pw', principal: { name: 'operations', kind: 'module', module: 'operations' } },
  tilstand: { password: 'til-pw', principal: { name: 'tilstand', kind: 'tilstand' } },
};
const credentials: CredentialStore = {
  async verify(username, password) {
    const u = USERS[username];
    return u && u.password === password ? u.principal : null;
  },
};

let dir: string;
let journal: Journal;
const brokers: EmbeddedBroker[] = [];
const clients: MqttClient[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-broker-'));
  journal = Journal.open(dir);
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.endAsync(true).catch(() => undefined);
  for (const b of brokers.splice(0)) await b.close();
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

async function startBroker(extra: Partial<EmbeddedBrokerOptions> = {}): Promise<EmbeddedBroker> {
  const sink = journalSink(journal);
  const b = new EmbeddedBroker({ site: SITE, credentials, onEvent: (t, p) => sink(t, p), port: 0, ...extra });
  brokers.push(b);
  await b.listen();
  return b;
}

function client(port: number, user: string | undefined, extra: IClientOptions = {}): MqttClient {
  const u = user ? USERS[user] : undefined;
  const c = connect({
    host: '127.0.0.1',
    port,
    protocolVersion: 4,
    reconnectPeriod: 0,
    connectTimeout: 5000,
    ...(user ? { username: user, password: u?.password ?? 'wrong' } : {}),
    ...extra,
  });
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
const closed = (c: MqttClient) => new Promise<void>((resolve) => c.once('close', () => resolve()));

describe('EmbeddedBroker durable PUBACK', () => {
  it('sends PUBACK only after the journal row is committed (checked from a second connection)', async () => {
    const b = await startBroker();
    const pub = client(b.port, 'inventory');
    await connected(pub);
    const reader = new Database(join(dir, 'journal.db'), { readonly: true });
    // one row per group commit: the payload sits inside the group's framed events blob
    const has = reader.prepare('SELECT count(*) AS n FROM journal_groups WHERE instr(events, ?) > 0').pluck();
    const N = 500;
    const missing: number[] = [];
    await Promise.all(
      Array.from(
        { length: N },
        (_, i) =>
          new Promise<void>((resolve, reject) => {
            const payload = Buffer.from(`{"seq":${i}}`);
            pub.publish(`tilstand/${SITE}/events/inventory/stock`, payload, { qos: 1 }, (err) => {
              if (err) return reject(err);
              if (Number(has.get(payload)) !== 1) missing.push(i); // PUBACK handler: the row must exist
              resolve();
            });
          }),
      ),
    );
    reader.close();
    expect(missing).toEqual([]);
    expect(b.metrics().eventsAcked).toBe(N);
    const st = journal.stats();
    expect(st.events).toBe(N);
    expect(st.commits).toBeLessThan(N); // group commit across one client's read chunks
    const seqs = [...journal.readAfter(0n)].map((e) => JSON.parse(e.payload.toString()).seq as number);
    expect(seqs).toEqual(Array.from({ length: N }, (_, i) => i)); // arrival order kept
  });

  it('routes events to the tilstand principal and commands to the module', async () => {
    const b = await startBroker();
    const til = client(b.port, 'tilstand');
    const inv = client(b.port, 'inventory');
    await Promise.all([connected(til), connected(inv)]);
    await til.subscribeAsync(`tilstand/${SITE}/events/#`, { qos: 1 });
    await inv.subscribeAsync(`tilstand/${SITE}/commands/inventory`, { qos: 1 });
    const gotEvent = new Promise<string>((r) => til.once('message', (t) => r(t)));
    const gotCommand = new Promise<string>((r) => inv.once('message', (_t, p) => r(p.toString())));
    await inv.publishAsync(`tilstand/${SITE}/events/inventory/stock`, 'e', { qos: 1 });
    await til.publishAsync(`tilstand/${SITE}/commands/inventory`, 'c', { qos: 1 });
    expect(await gotEvent).toBe(`tilstand/${SITE}/events/inventory/stock`);
    expect(await gotCommand).toBe('c');
  });
});

describe('EmbeddedBroker retained publishes', () => {
  it('keeps nothing a client publishes as retained (one per stream name would hold memory for good and come again to every subscriber)', async () => {
    const b = await startBroker();
    const inv = client(b.port, 'inventory');
    await connected(inv);
    await inv.publishAsync(`tilstand/${SITE}/events/inventory/stock`, 'retained event', { qos: 1, retain: true });
    await inv.publishAsync(`tilstand/${SITE}/acks/inventory`, 'retained ack', { qos: 1, retain: true });
    // A subscriber that comes later gets a retained message first, before anything published after
    // it subscribed: the first message it sees tells whether one was kept.
    const til = client(b.port, 'tilstand');
    await connected(til);
    const first = new Promise<string>((r) => til.once('message', (_t, p) => r(p.toString())));
    await til.subscribeAsync([`tilstand/${SITE}/events/#`, `tilstand/${SITE}/acks/#`], { qos: 1 });
    await inv.publishAsync(`tilstand/${SITE}/events/inventory/stock`, 'after', { qos: 1 });
    expect(await first).toBe('after');
    expect(journal.stats().events).toBe(2); // the retained event itself was journaled as any other
  });
});

describe('EmbeddedBroker authentication and ACL', () => {
  it('refuses unauthenticated clients and bad passwords', async () => {
    const b = await startBroker();
    const anon = client(b.port, undefined);
    await expect(connected(anon)).rejects.toThrow(/Not authorized|Bad username/i);
    const bad = client(b.port, 'nobody');
    await expect(connected(bad)).rejects.toThrow(/Bad username|Not authorized/i);
    expect(b.metrics().authFailures).toBe(2);
    expect(b.metrics().connectionsAccepted).toBe(0);
  });

  it("refuses a module's publish to another module's events or to commands, and counts it", async () => {
    const b = await startBroker();
    for (const topic of [`tilstand/${SITE}/events/operations/work`, `tilstand/${SITE}/commands/inventory`, `tilstand/other/events/inventory/x`]) {
      const inv = client(b.port, 'inventory');
      await connected(inv);
      const gone = closed(inv);
      inv.publish(topic, 'x', { qos: 1 });
      await gone; // MQTT 3.1.1: no negative PUBACK, the broker closes the connection
    }
    expect(b.metrics().publishRefused).toBe(3);
    expect(journal.stats().events).toBe(0);
  });

  it('records who was refused and why, and reports the first refusal of each and then one per period', async () => {
    const reports: Array<{ kind: string; who: string; what: string; count: number; since: number }> = [];
    const b = await startBroker({ onRefused: (r, since) => reports.push({ kind: r.kind, who: r.who, what: r.what, count: r.count, since }), refusalReportMs: 60_000 });
    const topic = `tilstand/other-site/events/inventory/stock`;
    for (let i = 0; i < 3; i++) {
      const inv = client(b.port, 'inventory');
      await connected(inv);
      const gone = closed(inv);
      inv.publish(i === 2 ? `${topic}-2` : topic, 'x', { qos: 1 });
      await gone;
    }
    for (let i = 0; i < 2; i++) await expect(connected(client(b.port, 'nobody'))).rejects.toThrow(/Bad username/i);
    const list = b.refusals();
    // The latest refused first; the topic is the latest one.
    expect(list.map(({ kind, who, what, count }) => ({ kind, who, what, count }))).toEqual([
      { kind: 'connect', who: 'nobody', what: 'bad username or password', count: 2 },
      { kind: 'publish', who: 'inventory', what: `${topic}-2`, count: 3 },
    ]);
    expect(list[1]!.firstMs).toBeLessThanOrEqual(list[1]!.lastMs);
    // A topic is the client's text: a line break in it cannot start a line of the site's log.
    const sneaky = client(b.port, 'inventory');
    await connected(sneaky);
    const gone = closed(sneaky);
    sneaky.publish('tilstand/s1/events/operations/x\n2026-12-03T00:00:00Z site stopped', 'x', { qos: 1 });
    await gone;
    expect(b.refusals()[0]!.what).toBe('tilstand/s1/events/operations/x\\u000a2026-12-03T00:00:00Z site stopped');
    // One report each: the first refusal; the rest fall within the report period.
    expect(reports).toEqual([
      { kind: 'publish', who: 'inventory', what: topic, count: 1, since: 1 },
      { kind: 'connect', who: 'nobody', what: 'bad username or password', count: 1, since: 1 },
    ]);
  });

  it('reports refusals again once the period has passed, with the count since the last report; keeps at most 64 names', async () => {
    const reports: Array<{ who: string; count: number; since: number }> = [];
    const b = await startBroker({ onRefused: (r, since) => reports.push({ who: r.who, count: r.count, since }), refusalReportMs: 0 });
    for (let i = 0; i < 2; i++) await expect(connected(client(b.port, 'nobody'))).rejects.toThrow(/Bad username/i);
    expect(reports).toEqual([
      { who: 'nobody', count: 1, since: 1 },
      { who: 'nobody', count: 2, since: 1 },
    ]);
    // Usernames come from the network: the record is bounded in names and in length.
    const long = 'x'.repeat(100);
    await expect(connected(client(b.port, undefined, { username: long, password: 'p' }))).rejects.toThrow(/Bad username/i);
    expect(b.refusals()[0]!.who).toBe(`${'x'.repeat(63)}…`);
    for (let i = 0; i < 70; i++) await expect(connected(client(b.port, undefined, { username: `u${i}`, password: 'p' }))).rejects.toThrow(/Bad username/i);
    const names = b.refusals().map((r) => r.who);
    expect(names).toHaveLength(64);
    expect(names[0]).toBe('u69');
    expect(names).not.toContain('nobody');
  });

  it("reports refusals once per period on a clock the PC's wall clock cannot step back", async () => {
    const reports: Array<{ who: string; count: number; since: number }> = [];
    const b = await startBroker({ onRefused: (r, since) => reports.push({ who: r.who, count: r.count, since }), refusalReportMs: 0 });
    try {
      await expect(connected(client(b.port, 'nobody'))).rejects.toThrow(/Bad username/i);
      // NTP sets back a clock that ran an hour ahead: the next refusal is a period later all the same.
      const realNow = Date.now.bind(Date);
      vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 3_600_000);
      await expect(connected(client(b.port, 'nobody'))).rejects.toThrow(/Bad username/i);
    } finally {
      vi.restoreAllMocks();
    }
    expect(reports).toEqual([
      { who: 'nobody', count: 1, since: 1 },
      { who: 'nobody', count: 2, since: 1 },
    ]);
  });

  it('refuses subscriptions outside the principal’s topics with SUBACK failure', async () => {
    const b = await startBroker();
    const inv = client(b.port, 'inventory');
    await connected(inv);
    for (const refused of [`tilstand/${SITE}/events/#`, `tilstand/${SITE}/commands/operations`, '#']) {
      // SUBACK carries failure 0x80 for the filter; the connection stays up
      await expect(inv.subscribeAsync(refused, { qos: 1 })).rejects.toThrow(/Subscribe error/);
    }
    const granted = await inv.subscribeAsync(`tilstand/${SITE}/commands/inventory`, { qos: 1 });
    expect(granted.map((g) => g.qos)).toEqual([1]);
    expect(b.metrics().subscribeRefused).toBe(3);
  });

  it("keeps a client id with its first principal: another module can take neither the session nor the commands queued in it", async () => {
    const b = await startBroker();
    const id = `module-${SITE}-operations`;
    const ops = client(b.port, 'operations', { clientId: id, clean: false });
    await connected(ops);
    await ops.subscribeAsync(`tilstand/${SITE}/commands/operations`, { qos: 1 });
    // While the owner is connected: refused (CONNACK 2), and the owner is not cut off.
    const thief = client(b.port, 'inventory', { clientId: id, clean: false });
    await expect(connected(thief)).rejects.toThrow(/Identifier rejected/i);
    expect(ops.connected).toBe(true);
    // While the owner is away: a command queued in its session waits for the owner alone.
    await ops.endAsync();
    const til = client(b.port, 'tilstand');
    await connected(til);
    await til.publishAsync(`tilstand/${SITE}/commands/operations`, 'assign J-1', { qos: 1 });
    const thief2 = client(b.port, 'inventory', { clientId: id, clean: false });
    await expect(connected(thief2)).rejects.toThrow(/Identifier rejected/i);
    const back = client(b.port, 'operations', { clientId: id, clean: false });
    const got = new Promise<string>((resolve) => back.on('message', (_t, m) => resolve(m.toString())));
    await connected(back);
    expect(await got).toBe('assign J-1');
    expect(b.metrics().authFailures).toBe(2);
  });

  it("keeps a session's client id with its principal when a flood of other ids passes the bound of remembered ids", async () => {
    const b = await startBroker();
    const id = `module-${SITE}-operations`;
    const ops = client(b.port, 'operations', { clientId: id, clean: false });
    await connected(ops);
    await ops.subscribeAsync(`tilstand/${SITE}/commands/operations`, { qos: 1 });
    await ops.endAsync();
    // Another module connects with 10 000 ids of its own (as remembered: each a connection of
    // 'inventory' that has ended), then one more, past the bound.
    const owners = (b as unknown as { idOwners: Map<string, string> }).idOwners;
    for (let i = 0; owners.size < 10_000; i++) owners.set(`inventory-${i}`, 'inventory');
    const filler = client(b.port, 'inventory', { clientId: 'inventory-last' });
    await connected(filler);
    const til = client(b.port, 'tilstand');
    await connected(til);
    await til.publishAsync(`tilstand/${SITE}/commands/operations`, 'assign J-2', { qos: 1 });
    // aedes still keeps the owner's session (its subscription and the queued command): the id was
    // forgotten with it, and the next module to use it got both and locked the owner out.
    const thief = client(b.port, 'inventory', { clientId: id, clean: false });
    const stolen: string[] = [];
    thief.on('message', (_t, m) => stolen.push(m.toString()));
    await expect(connected(thief)).rejects.toThrow(/Identifier rejected/i);
    const back = client(b.port, 'operations', { clientId: id, clean: false });
    const got = new Promise<string>((resolve) => back.on('message', (_t, m) => resolve(m.toString())));
    await connected(back);
    expect(await got).toBe('assign J-2');
    expect(stolen).toEqual([]);
  });

  it('filterWithin handles wildcards on both sides', () => {
    expect(filterWithin('tilstand/s1/events/+/+', 'tilstand/s1/events/#')).toBe(true);
    expect(filterWithin('tilstand/s1/events', 'tilstand/s1/events/#')).toBe(true);
    expect(filterWithin('tilstand/s1/#', 'tilstand/s1/events/#')).toBe(false);
    expect(filterWithin('tilstand/+/events/#', 'tilstand/s1/events/#')).toBe(false);
    expect(filterWithin('a/b', 'a/+')).toBe(true);
    expect(filterWithin('a/b/c', 'a/+')).toBe(false);
  });
});

describe('EmbeddedBroker disk budget', () => {
  it('holds PUBACK while the disk is full and releases it when room returns', async () => {
    let full = true;
    const b = await startBroker({ diskFull: () => full, diskFullPollMs: 10, diskFullHoldMaxMs: 10_000 });
    const pub = client(b.port, 'inventory');
    await connected(pub);
    let acked = false;
    const ack = pub.publishAsync(`tilstand/${SITE}/events/inventory/stock`, 'held', { qos: 1 }).then(() => {
      acked = true;
    });
    await new Promise((r) => setTimeout(r, 150));
    expect(acked).toBe(false);
    expect(journal.stats().events).toBe(0);
    expect(b.metrics().eventsHeldDiskFull).toBe(1);
    full = false;
    await ack;
    expect(journal.stats().events).toBe(1);
  });

  it('closes the client without ack when the disk stays full past diskFullHoldMaxMs', async () => {
    const b = await startBroker({ diskFull: () => true, diskFullPollMs: 10, diskFullHoldMaxMs: 100 });
    const pub = client(b.port, 'inventory');
    await connected(pub);
    const gone = closed(pub);
    pub.publish(`tilstand/${SITE}/events/inventory/stock`, 'x', { qos: 1 });
    await gone;
    expect(b.metrics().eventsRefusedDiskFull).toBe(1);
    expect(journal.stats().events).toBe(0);
  });

  it("holds a publish diskFullHoldMaxMs whatever the PC's wall clock does meanwhile (a step back of an hour)", async () => {
    // The wall clock steps back an hour once the publish is held (NTP correcting a clock that ran ahead).
    const realNow = Date.now.bind(Date);
    let calls = 0;
    const b = await startBroker({
      diskFull: () => {
        if (++calls === 2) vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 3_600_000);
        return true;
      },
      diskFullPollMs: 10,
      diskFullHoldMaxMs: 100,
    });
    try {
      const pub = client(b.port, 'inventory');
      await connected(pub);
      const gone = closed(pub).then(() => 'closed');
      pub.publish(`tilstand/${SITE}/events/inventory/stock`, 'x', { qos: 1 });
      // Bounded: measured on the wall clock, the hold lasted the step (an hour) and more.
      const outcome = await Promise.race([gone, new Promise((r) => setTimeout(() => r('still held after 5 s'), 5_000))]);
      expect(outcome).toBe('closed');
      expect(b.metrics().eventsRefusedDiskFull).toBe(1);
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe('EmbeddedBroker listener', () => {
  it('refuses a non-loopback address without TLS, naming the option', () => {
    const mk = (o: Partial<EmbeddedBrokerOptions>) =>
      new EmbeddedBroker({ site: SITE, credentials, onEvent: async () => undefined, host: '0.0.0.0', ...o });
    expect(() => mk({})).toThrow(BrokerConfigError);
    expect(() => mk({})).toThrow(/allowInsecureNonLoopback/);
    expect(() => mk({ allowInsecureNonLoopback: true })).not.toThrow();
  });

  it('serves MQTT over TLS with a self-signed certificate', async () => {
    const certPath = join(dir, 'cert.pem');
    const keyPath = join(dir, 'key.pem');
    if (!existsSync('/usr/bin/openssl')) throw new Error('openssl CLI missing: install openssl to run the TLS test');
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyPath, '-out', certPath, '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ], { stdio: 'ignore' });
    const b = await startBroker({ tls: { certPath, keyPath } });
    const c = client(b.port, 'inventory', { protocol: 'mqtts', ca: readFileSync(certPath), rejectUnauthorized: true });
    await connected(c);
    await c.publishAsync(`tilstand/${SITE}/events/inventory/stock`, 'tls', { qos: 1 });
    expect(journal.stats().events).toBe(1);
  });
});

describe('EmbeddedBroker throughput (measurement, bounded)', () => {
  it('reports msg/s with and without the journal', async () => {
    const payload = Buffer.alloc(200, 0x61);
    const run = async (withJournal: boolean, N = 10_000): Promise<number> => {
      const sink = journalSink(journal);
      const b = await startBroker({ onEvent: withJournal ? (t, p) => sink(t, p) : async () => undefined });
      const pub = client(b.port, 'inventory');
      await connected(pub);
      const t0 = performance.now();
      let acked = 0;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${acked}/${N} acked in 30 s`)), 30_000);
        for (let i = 0; i < N; i++) {
          pub.publish(`tilstand/${SITE}/events/inventory/stock`, payload, { qos: 1 }, (err) => {
            if (err) return reject(err);
            if (++acked === N) {
              clearTimeout(timer);
              resolve();
            }
          });
        }
      });
      return N / ((performance.now() - t0) / 1000);
    };
    await run(false); // warm-up: JIT and socket paths, not measured
    const without = await run(false);
    const before = journal.stats();
    const withJ = await run(true);
    const st = journal.stats();
    const perCommit = (st.events - before.events) / (st.commits - before.commits);
    console.log(
      `[broker throughput] 10000 QoS1 x 200 B, one publisher: no journal ${without.toFixed(0)} msg/s; ` +
        `journal before PUBACK ${withJ.toFixed(0)} msg/s (${(withJ / without).toFixed(2)}x), ${perCommit.toFixed(0)} events/commit`,
    );
    expect(st.events - before.events).toBe(10_000);
  });
});
